"""``netproof prove``: check the claims of constructions and print a table, the refutations with
their counterexamples and a summary, or with ``--json`` the records and the summary
(:func:`netproof.verifier.campaign.prove` does the work; this module parses and prints; the
live progress on stderr is :mod:`.live`'s).

May import the campaign and the IR's printing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any


from netproof.verifier.campaign.errors import EXIT_INTERRUPTED, Interrupted
from netproof.verifier.campaign.proving import ClaimResult, prove, verdict_name
from netproof.verifier.campaign.sources import Session, parse_assignments
from netproof.verifier.claims import Refuted, Unknown

from .live import reporter
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
    p_prove.add_argument(
        "--force", action="store_true",
        help="prove every claim again, even where --out holds its record for the same network, claim, bound and method",
    )
    p_prove.set_defaults(func=cmd_prove)


def cmd_prove(args: argparse.Namespace, session: Session) -> int:
    given = parse_assignments(args.param)
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g} must be > 0 (seconds of solver time per claim)")
    if args.max_n is not None and args.max_n < 0:
        raise UsageError(f"--max-n {args.max_n} must be >= 0")
    display = reporter(quiet=args.quiet, json_out=args.json)
    try:
        result = prove(
            args.names, params=given, method=args.method, max_n=args.max_n, timeout=args.timeout,
            jobs=None if args.jobs == 0 else max(1, args.jobs), out=args.out or None, progress=display.finished,
            session=session, force=args.force, running=display.running,
        )
    except Interrupted as stop:
        display.close()
        kept = f"; their records are in {args.out}/, run the same command again to finish the rest" if args.out else ""
        sys.stderr.write(f"netproof: interrupted: {stop.done} of {stop.total} claims done{kept}\n")
        return EXIT_INTERRUPTED
    finally:
        display.close()
    if args.json:
        results = [
            {**r.record, "every_length": r.every_length, "cached": r.cached, "record_path": r.path} for r in result.results
        ]
        print(json.dumps({"results": results, "summary": result.summary}, indent=2, ensure_ascii=False))
        return result.exit_code
    print_table(result.results)
    summary = result.summary
    cached = f" ({summary['cached']} cached)" if summary["cached"] else ""
    print(
        f"\n{summary['proved']} proved, {summary['refuted']} refuted, {summary['unknown']} unknown{cached} "
        f"in {result.seconds:.1f}s" + (f"; records in {args.out}/" if args.out else "")
    )
    return result.exit_code


def bound_text(r: ClaimResult) -> str:
    """The bound column: ``every length`` for a proof of every length, ``all`` for a claim
    without words proved for every input, ``no words`` for a fact, else ``min≤|w|≤max``."""
    if type(r.claim).__name__ == "ExactFact":
        return "no words"
    if r.every_length:
        return "every length"
    text = "all" if r.bound is None else f"{r.claim.min_len}≤|w|≤{r.bound}"
    return f"{text} (a lemma refuted)" if refuted_lemmas(r.record) else text


def refuted_lemmas(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The refuted lemmas of a compositional proof's lemma tree (below its root), in order."""
    found: list[Mapping[str, Any]] = []
    stack = list(reversed((rec.get("lemmas") or {}).get("children") or []))
    while stack:
        node = stack.pop()
        if node.get("verdict") == "refuted":
            found.append(node)
        stack.extend(reversed(node.get("children") or []))
    return found


def print_table(results: Sequence[ClaimResult]) -> None:
    """One row per claim (construction, claim, verdict, bound, method, time or ``cached``),
    then every refutation with its counterexample, every unknown with its reason, every refuted
    lemma of a compositional proof (its row's bound says it fell back) and every stronger record
    that was kept over this run's weaker verdict."""
    headers = ("construction", "claim", "verdict", "bound", "method", "time")
    rows = []
    for r in results:
        rows.append((r.construction.name, r.claim.id, verdict_name(r.verdict).upper(), bound_text(r), r.verdict.method,
                     "cached" if r.cached else f"{r.seconds:.1f}s"))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)))
    for r in results:
        v = r.verdict
        c, claim = r.construction, r.claim
        if isinstance(v, Refuted):
            text = r.record.get("counterexample")
            cx = "" if text is None else f"\n      counterexample: {text or 'ε (empty word)'}"
            print(f"\n  REFUTED {c.name} {claim.id}: {claim.statement}\n      {v.detail}{cx}")
        elif isinstance(v, Unknown):
            print(f"\n  UNKNOWN {c.name} {claim.id}: {claim.statement}\n      {v.reason}")
        for lemma in refuted_lemmas(r.record):
            print(f"\n  LEMMA REFUTED {c.name} {claim.id} / {lemma['name']}: {lemma['statement']}\n      "
                  f"{claim.id} was proved without it, for {bound_text(r).removesuffix(' (a lemma refuted)')} only")
        if r.kept is not None:
            print(f"\n  KEPT {r.path}: its {r.kept['verdict']} ({r.kept['method']}) is stronger than this run's "
                  f"{verdict_name(v)}, so it stays")
