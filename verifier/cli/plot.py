"""``netproof plot``: a paper's float experiment (a figure declared with
:class:`~netproof.verifier.claims.Experiment`, e.g. Chiang & Cholak's Figures 2 and 3) as a PNG
plot with its numbers in a CSV (:mod:`netproof.verifier.floats.plots` computes the points; this
module parses and prints).

May import the campaign (the experiments by name) and the float experiments (torch and
matplotlib load when it runs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from netproof.symbolic.errors import MissingExtraError

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_USAGE
from netproof.verifier.campaign.sources import Session, builtin_experiments
from netproof.verifier.floats.plots import PlotError, experiment_rows, plot_rows, torch_runner, write_csv

__all__ = ["add_parser", "cmd_plot"]


def add_parser(sub: Any) -> None:
    """Register ``netproof plot`` on the CLI's subparsers: one figure name per declared experiment."""
    experiments = builtin_experiments()
    p = sub.add_parser("plot", help="Chiang & Cholak's Figures 2 and 3 as PNG plots with their numbers in a CSV")
    p.add_argument("figure", choices=tuple(experiments),
                   help="; ".join(f"{e.name}: {e.help}" for e in experiments.values()))
    p.add_argument("languages", nargs="*", help="for cross-entropy: parity, first or both (default both)")
    p.add_argument("--out", required=True, help="the PNG to write; the CSV goes next to it (same name, .csv)")
    p.add_argument("--csv", default="", help="write the CSV here instead")
    p.add_argument("--strings", type=int, default=1000, help="random words per point (default 1000, as the spec)")
    p.add_argument("--lengths", type=int, nargs="+", default=None, metavar="N", help="the |w| to plot")
    p.add_argument("--deltas", nargs="+", default=None, metavar="Q", help="for sensitivity: the δ (rationals)")
    p.add_argument("--seed", type=int, default=2022)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace, session: Session) -> int:
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    experiment = builtin_experiments()[args.figure]
    try:
        runner = torch_runner(dtype=args.dtype, device=args.device)
        rows = experiment_rows(experiment, args.languages, args.deltas, lengths=args.lengths, strings=args.strings,
                               seed=args.seed, runner=runner, progress=progress)
        out = Path(args.out)
        csv_path = Path(args.csv) if args.csv else out.with_suffix(".csv")
        write_csv(rows, csv_path)
        plot_rows(rows, out, title=experiment.title, accuracy=experiment.accuracy_panel)
    except (PlotError, MissingExtraError) as exc:
        print(f"netproof: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {out} and {csv_path} ({len(rows)} points)")
    return EXIT_OK
