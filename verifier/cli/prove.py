"""``netproof prove``: check the claims of constructions and print a table, the refutations with
their counterexamples and a summary, or with ``--json`` the records and the summary
(:func:`netproof.verifier.campaign.prove` does the work; this module parses and prints,
including the per-claim progress lines on stderr).

May import the campaign and the IR's printing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from netproof.symbolic import render

from netproof.verifier.campaign.proving import ClaimResult, Progress, alphabet_of, prove, verdict_name
from netproof.verifier.campaign.sources import Session, parse_assignments
from netproof.verifier.claims import Proved, Refuted, Unknown

from .usage import UsageError

__all__ = ["add_parser", "cmd_prove"]


def add_parser(sub: Any) -> None:
    """Register ``netproof prove`` on the CLI's subparsers."""
    p_prove = sub.add_parser("prove", help="check the claims of constructions")
    p_prove.add_argument("names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)")
    p_prove.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_prove.add_argument("--max-n", type=int, default=None, help="override every claim's word-length bound")
    p_prove.add_argument(
        "--method",
        choices=("exhaustive", "smt", "all"),
        default="exhaustive",
        help="exhaustive: every word of the bound, exactly (default); smt: z3 queries over a symbolic word, one "
        "per length, logged as .smt2; all: exhaustive where the bound is small, smt where the claim allows, both logged",
    )
    p_prove.add_argument("--timeout", type=float, default=60.0, help="solver seconds per claim for smt (default 60)")
    p_prove.add_argument("--json", action="store_true", help="print all records and a summary as JSON")
    p_prove.add_argument("--out", default="proofs", help="directory for the JSON records ('' for none)")
    p_prove.add_argument("--jobs", type=int, default=0, help="worker processes (default: all cores)")
    p_prove.add_argument("--quiet", action="store_true", help="no per-claim progress lines")
    p_prove.set_defaults(func=cmd_prove)


def cmd_prove(args: argparse.Namespace, session: Session) -> int:
    given = parse_assignments(args.param)
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g} must be > 0 (seconds of solver time per claim)")
    if args.max_n is not None and args.max_n < 0:
        raise UsageError(f"--max-n {args.max_n} must be >= 0")
    interactive = sys.stderr.isatty() and not args.json

    def report(p: Progress) -> None:
        line = f"[{p.done}/{p.total}] {p.construction} {p.claim}: {verdict_name(p.verdict)} ({p.seconds:.1f}s)"
        if interactive:
            width = 30
            filled = width * p.done // p.total
            sys.stderr.write(f"\r\033[K{'#' * filled}{'.' * (width - filled)} {line}")
            sys.stderr.flush()
        elif not args.quiet:
            print(line, file=sys.stderr, flush=True)

    result = prove(
        args.names, params=given, method=args.method, max_n=args.max_n, timeout=args.timeout,
        jobs=None if args.jobs == 0 else max(1, args.jobs), out=args.out or None, progress=report, session=session,
    )
    if interactive:
        sys.stderr.write("\n")
    if args.json:
        print(json.dumps({"results": list(result.records), "summary": result.summary}, indent=2, ensure_ascii=False))
        return result.exit_code
    print_table(result.results)
    summary = result.summary
    print(
        f"\n{summary['proved']} proved, {summary['refuted']} refuted, {summary['unknown']} unknown "
        f"in {result.seconds:.1f}s" + (f"; records in {args.out}/" if args.out else "")
    )
    return result.exit_code


def print_table(results: Sequence[ClaimResult]) -> None:
    """One row per claim (construction, claim, verdict, bound, method, time), then every
    refutation with its counterexample and every unknown with its reason."""
    headers = ("construction", "claim", "verdict", "bound", "method", "time")
    rows = []
    for r in results:
        btxt = "all" if r.bound is None else f"{r.claim.min_len}≤|w|≤{r.bound}"
        if type(r.claim).__name__ == "ExactFact":
            btxt = "no words"
        rows.append((r.construction.name, r.claim.id, verdict_name(r.verdict).upper(), btxt, r.verdict.method,
                     f"{r.seconds:.1f}s"))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)))
    for r in results:
        v = r.verdict
        if isinstance(v, Proved):
            continue
        c, claim = r.construction, r.claim
        if isinstance(v, Refuted):
            cx = "" if v.word is None else f"\n      counterexample: {render(alphabet_of(c, r.values), v.word) or 'ε (empty word)'}"
            print(f"\n  REFUTED {c.name} {claim.id}: {claim.statement}\n      {v.detail}{cx}")
        elif isinstance(v, Unknown):
            print(f"\n  UNKNOWN {c.name} {claim.id}: {claim.statement}\n      {v.reason}")
