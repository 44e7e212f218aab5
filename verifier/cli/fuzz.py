"""``netproof fuzz``: search every claim for a counterexample with hypothesis (evidence, never
proof) and print one line per claim, the refutations and the float issues
(:func:`netproof.verifier.campaign.fuzzrun.fuzz_claims` does the work). ``--jobs N`` spreads each
claim's examples over N worker processes. Progress goes to stderr
(:func:`~netproof.verifier.cli.live.events`): on a terminal a live line per claim with its
examples tried of the total; elsewhere a line per claim as it finishes; nothing with ``--quiet``
or ``--json``.

May import the campaign (constructions, parameters, fuzz runs) and the IR's printing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from netproof.symbolic import render
from netproof.verifier.campaign.fuzzrun import FuzzResult, Trying, fuzz_claims, fuzz_verdict_name
from netproof.verifier.campaign.proving import alphabet_of
from netproof.verifier.campaign.sources import Session, parse_assignments
from netproof.verifier.claims import Construction, Refuted, Unknown

from .checks import fuzz_length, output_dir
from .live import events
from .usage import UsageError

__all__ = ["add_parser", "cmd_fuzz"]


def add_parser(sub: Any) -> None:
    """Register ``netproof fuzz`` on the CLI's subparsers."""
    p_fuzz = sub.add_parser(
        "fuzz", help="search for counterexamples with hypothesis (evidence, never proof)"
    )
    p_fuzz.add_argument(
        "names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)"
    )
    p_fuzz.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_fuzz.add_argument("--examples", type=int, default=500, help="words per claim (default 500)")
    p_fuzz.add_argument(
        "--max-len", type=fuzz_length, default=40, help="the longest word drawn (default 40)"
    )
    p_fuzz.add_argument(
        "--seed", type=int, default=None, help="reproduce a run (default: a fresh seed, reported)"
    )
    p_fuzz.add_argument(
        "--ci",
        action="store_true",
        help="derandomized, no example database (the netproof-ci profile)",
    )
    p_fuzz.add_argument(
        "--database",
        type=output_dir,
        default="",
        help="example database directory (default .netproof/fuzz-db)",
    )
    p_fuzz.add_argument(
        "--no-database", action="store_true", help="do not read or save failing examples"
    )
    p_fuzz.add_argument("--json", action="store_true", help="print all logs as JSON")
    p_fuzz.add_argument(
        "--out",
        type=output_dir,
        default="fuzz-logs",
        help="directory for the fuzz logs ('' for none)",
    )
    p_fuzz.add_argument("--quiet", action="store_true", help="no progress lines")
    p_fuzz.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes sharing each claim's examples (default 1; a seeded run reports the same verdicts)",
    )
    p_fuzz.add_argument(
        "--backend",
        choices=("exact", "torch"),
        default="exact",
        help="torch: recognizers' words run in torch float64 (for long words, --max-len 2000), every failing or "
        "doubtful word is re-checked exactly; only exact-confirmed failures are counterexamples",
    )
    p_fuzz.set_defaults(func=cmd_fuzz)


def cmd_fuzz(args: argparse.Namespace, session: Session) -> int:
    given = parse_assignments(args.param)
    selected = session.select(args.names, given)
    if args.examples < 1:
        raise UsageError(f"--examples {args.examples} must be >= 1")
    if args.max_len < 0:
        raise UsageError(f"--max-len {args.max_len} must be >= 0")
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} must be >= 1 (worker processes)")
    live = events(quiet=args.quiet or args.json)

    def unsupported(c: Construction, reason: str) -> None:
        live.note(f"{c.name}: not supported by --backend torch ({reason}); its claims run exactly")

    def progress(r: FuzzResult) -> None:
        key = f"{r.construction.name} {r.claim.id}"
        live.finish(key, f"{key}: {fuzz_verdict_name(r.verdict)} ({r.seconds:.1f}s)")

    def trying(t: Trying) -> None:
        live.advance(f"{t.construction} {t.claim}", t.done, t.total)

    try:
        run = fuzz_claims(
            selected,
            given,
            examples=args.examples,
            max_len=args.max_len,
            seed=args.seed,
            derandomize=args.ci,
            database=args.database,
            use_database=not (args.no_database or args.ci),
            backend=args.backend,
            out=args.out or None,
            on_unsupported=unsupported,
            progress=progress,
            jobs=args.jobs,
            trying=trying,
        )
    finally:
        live.close()
    code = run.exit_code
    if args.json:
        print(json.dumps({"results": run.records, "exit_code": code}, indent=2, ensure_ascii=False))
        return code
    print_table(run.results)
    refuted = [r for r in run.results if isinstance(r.verdict, Refuted)]
    for r in refuted:
        assert isinstance(r.verdict, Refuted)
        alphabet = alphabet_of(r.construction, r.values)
        shown = "ε (empty word)" if not r.verdict.word else render(alphabet, r.verdict.word)
        print(
            f"\n  REFUTED {r.construction.name} {r.claim.id}: {r.claim.statement}\n      {r.verdict.detail}\n"
            f"      shrunk counterexample: {shown} (replayed with the exact checker)"
        )
    for r in run.results:
        for issue in r.float_issues[:3]:
            shown = render(alphabet_of(r.construction, r.values), issue.word) or "ε"
            if len(shown) > 60:
                shown = f"{shown[:40]}... ({len(issue.word)} symbols)"
            print(
                f"\n  float issue {r.construction.name} {r.claim.id} (not a counterexample: the exact re-check holds): "
                f"{shown}\n      {issue.detail}"
            )
    searched = [
        r
        for r in run.results
        if isinstance(r.verdict, Unknown) and not r.verdict.reason.startswith("not fuzzable")
    ]
    print(
        f"\n{len(refuted)} refuted, {len(searched)} with no counterexample found (not a proof), "
        f"{len(run.results) - len(refuted) - len(searched)} not fuzzable"
        + (f"; logs in {args.out}/" if args.out else "")
    )
    return code


def print_table(results: Sequence[FuzzResult]) -> None:
    """One line per claim: construction, claim, verdict and seconds, in columns as wide as their
    longest entry (at least 14, 16 and 26 characters)."""
    names = [r.construction.name for r in results]
    ids = [r.claim.id for r in results]
    verdicts = [fuzz_verdict_name(r.verdict) for r in results]
    w_name, w_id, w_verdict = (
        max([floor, *map(len, col)]) for floor, col in ((14, names), (16, ids), (26, verdicts))
    )
    for name, cid, verdict, r in zip(names, ids, verdicts, results, strict=True):
        print(f"{name:<{w_name}} {cid:<{w_id}} {verdict:<{w_verdict}} {r.seconds:6.1f}s")
