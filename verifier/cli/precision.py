"""``netproof precision``: the longest words on which a float run still agrees with the exact
network (:mod:`netproof.verifier.floats.precision` does the work; this module parses and prints).
Progress goes to stderr (:func:`~netproof.verifier.cli.live.events`): a line as each length starts
(its number of words) and one as it is done, a live line on a terminal; nothing with ``--quiet``
or ``--json``.

May import the campaign (constructions, parameters, atomic writes) and the float checks
(torch loads when it runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from netproof.symbolic.errors import MissingExtraError
from netproof.verifier.campaign.errors import CampaignError
from netproof.verifier.campaign.sources import (
    Session,
    builtin_registry,
    parameter_values,
    parse_assignments,
)
from netproof.verifier.campaign.store import write_atomic
from netproof.verifier.cli.checks import output_file, precision_n
from netproof.verifier.cli.live import EventLines, events
from netproof.verifier.cli.messages import user_message
from netproof.verifier.floats.precision import (
    DTYPES,
    Analysis,
    PrecisionError,
    all_runs,
    analyse,
    markdown_report,
)

__all__ = ["add_parser", "cmd_precision"]


def add_parser(sub: Any) -> None:
    """Register ``netproof precision`` on the CLI's subparsers."""
    p = sub.add_parser(
        "precision",
        help="the longest words on which a float run still agrees with the exact network",
    )
    p.add_argument(
        "names", nargs="*", help="constructions (default with --all: the documented runs)"
    )
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument(
        "--dtype",
        nargs="+",
        default=None,
        choices=(*DTYPES, "bfloat16"),
        help="float dtypes (default float32; with --all: float64 float32 float16)",
    )
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument(
        "--max-n",
        type=precision_n,
        default=1024,
        help="the longest words tested (default 1024, at most 4096)",
    )
    p.add_argument(
        "--words",
        type=int,
        default=16,
        help="sampled words per length (default 16), plus the worst cases",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--backend-ties",
        action="store_true",
        help="use the torch backend's conservative hardmax tie tolerance (default: plain float argmax)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every construction with its defaults plus the §3.6 experiments",
    )
    p.add_argument(
        "--markdown",
        type=output_file,
        default="",
        help="write the report page (docs/precision.md) here",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_precision)


def cmd_precision(args: argparse.Namespace, session: Session) -> int:
    live = events(quiet=args.quiet or args.json)
    try:
        return _precision(args, session, live)
    finally:
        live.close()


def _steps(
    live: EventLines, name: str, dtype: str
) -> tuple[Callable[[int, int], None], Callable[[str], None]]:
    """``started(n, words)`` and ``progress(line)`` for one analysis, shown as a step per length."""
    current = [f"{name} {dtype}"]

    def started(n: int, words: int) -> None:
        current[0] = f"{name} {dtype} n={n}"
        live.start(current[0], None, f"{current[0]}: evaluating {words} words")

    def progress(line: str) -> None:
        live.finish(current[0], line)

    return started, progress


def _precision(args: argparse.Namespace, session: Session, live: EventLines) -> int:
    try:
        if args.all and (args.names or args.param):
            raise PrecisionError(
                "--all runs the documented set; give either --all or names with -p, not both"
            )
        if not args.all and not args.names:
            raise PrecisionError("name a construction (see `netproof list`) or use --all")
        dtypes = args.dtype or (list(DTYPES) if args.all else ["float32"])
        runs = (
            all_runs(builtin_registry())
            if args.all
            else [(n, parse_assignments(args.param)) for n in args.names]
        )
        analyses = []
        for name, given in runs:
            c = session.one(name, "precision")
            values = parameter_values(c, given)
            for dtype in dtypes:
                started, progress = _steps(live, c.name, dtype)
                try:
                    analyses.append(
                        analyse(
                            c,
                            values,
                            dtype=dtype,
                            device=args.device,
                            max_n=args.max_n,
                            words=args.words,
                            seed=args.seed,
                            progress=progress,
                            started=started,
                            tie_rtol=None if args.backend_ties else 0.0,
                        )
                    )
                except PrecisionError as exc:
                    if not args.all:
                        raise
                    # --all reports a line for every construction, also one it cannot analyse
                    analyses.append(
                        Analysis(
                            construction=c.name,
                            params={k: str(v) for k, v in values.items()},
                            dtype=dtype,
                            device=args.device,
                            reference="—",
                            max_n=args.max_n,
                            unsupported=str(exc),
                        )
                    )
    except (PrecisionError, MissingExtraError, CampaignError) as exc:
        live.close()
        print(f"netproof: error: {user_message(str(exc))}", file=sys.stderr)
        return 2
    live.close()  # the live lines are gone before the report is printed
    if args.markdown:
        options = [f"--max-n {args.max_n}"] * (args.max_n != 1024) + [f"--words {args.words}"] * (
            args.words != 16
        )
        options += [f"--seed {args.seed}"] * (args.seed != 0) + [
            "--backend-ties"
        ] * args.backend_ties
        options += [f"--dtype {' '.join(args.dtype)}"] if args.dtype else []
        what = ["--all"] if args.all else [*args.names, *(f"-p {a}" for a in args.param)]
        command = " ".join(["netproof precision", *what, *options, f"--markdown {args.markdown}"])
        write_atomic(args.markdown, markdown_report(analyses, command=command) + "\n")
    if args.json:
        print(json.dumps([a.to_json() for a in analyses], indent=2, sort_keys=True))
    else:
        for a in analyses:
            shown = " ".join(f"{k}={v}" for k, v in a.params.items())
            print(f"{a.construction} ({shown}) {a.dtype}, reference {a.reference}: {a.summary()}")
    return 0
