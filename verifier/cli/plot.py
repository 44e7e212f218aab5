"""``netproof plot``: a paper's float experiment (a figure declared with
:class:`~netproof.verifier.claims.Experiment`, e.g. Chiang & Cholak's Figures 2 and 3) as a PNG
plot with its numbers in a CSV (:mod:`netproof.verifier.floats.plots` computes the points; this
module parses and prints). Progress goes to stderr (:func:`~netproof.verifier.cli.live.events`):
a line as each point starts (its number of words) and one as it is done, a live line on a
terminal; nothing with ``--quiet``.

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
from netproof.verifier.cli.checks import output_file, plot_length, plot_size, plot_strings
from netproof.verifier.cli.live import events
from netproof.verifier.cli.messages import user_message
from netproof.verifier.floats.plots import (
    PlotError,
    experiment_rows,
    plot_rows,
    torch_runner,
    write_csv,
)

__all__ = ["add_parser", "cmd_plot"]


def add_parser(sub: Any) -> None:
    """Register ``netproof plot`` on the CLI's subparsers: one figure name per declared experiment."""
    experiments = builtin_experiments()
    p = sub.add_parser(
        "plot", help="Chiang & Cholak's Figures 2 and 3 as PNG plots with their numbers in a CSV"
    )
    p.add_argument(
        "figure",
        choices=tuple(experiments),
        help="; ".join(f"{e.name}: {e.help}" for e in experiments.values()),
    )
    p.add_argument(
        "languages", nargs="*", help="for cross-entropy: parity, first or both (default both)"
    )
    p.add_argument(
        "--out",
        type=output_file,
        required=True,
        help="the PNG to write; the CSV goes next to it (same name, .csv)",
    )
    p.add_argument("--csv", type=output_file, default="", help="write the CSV here instead")
    p.add_argument(
        "--strings",
        type=plot_strings,
        default=1000,
        help="random words per point (default 1000, as the spec)",
    )
    p.add_argument(
        "--lengths", type=plot_length, nargs="+", default=None, metavar="N", help="the |w| to plot"
    )
    p.add_argument(
        "--deltas", nargs="+", default=None, metavar="Q", help="for sensitivity: the δ (rationals)"
    )
    p.add_argument("--seed", type=int, default=2022)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace, session: Session) -> int:
    experiment = builtin_experiments()[args.figure]
    plot_size(args.lengths or experiment.lengths, args.strings)
    shown = events(quiet=args.quiet)
    current = [""]

    def started(point: str, words: int) -> None:
        current[0] = point
        shown.start(point, None, f"{point}: {words} words")

    def progress(line: str) -> None:
        shown.finish(current[0], line)

    try:
        runner = torch_runner(dtype=args.dtype, device=args.device)
        rows = experiment_rows(
            experiment,
            args.languages,
            args.deltas,
            lengths=args.lengths,
            strings=args.strings,
            seed=args.seed,
            runner=runner,
            progress=progress,
            started=started,
        )
        out = Path(args.out)
        csv_path = Path(args.csv) if args.csv else out.with_suffix(".csv")
        write_csv(rows, csv_path)
        plot_rows(rows, out, title=experiment.title, accuracy=experiment.accuracy_panel)
    except (PlotError, MissingExtraError) as exc:
        shown.close()
        print(f"netproof: error: {user_message(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        shown.close()
    print(f"wrote {out} and {csv_path} ({len(rows)} points)")
    return EXIT_OK
