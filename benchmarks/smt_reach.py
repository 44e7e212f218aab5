"""How far each proof method reaches within a time budget: per claim, the largest n such that
every word of length <= n was proved, by exhaustive enumeration, by the monolithic SMT encoding
(:mod:`netproof.verifier.smt.monolithic`) and by the compositional SMT proof (:mod:`netproof.verifier.smt.compositional`: every length at once by an
inductive invariant or one query over position classes where the network allows, else one query per range of lengths;
``compositional-ranges``: ranges only, the ranges doubling; ``compositional-each``: one query per
length), and the ratios of the compositional reach to the others. A proof for every length
prints ``every n`` (it covers any bound; the benchmark asks for 2x the target).

    python benchmarks/smt_reach.py [--budget 60] [--claim dyck22] [--methods exhaustive,smt,compositional]

Each method proves lengths 0, 1, 2, ... in increasing order, each length exactly once (all words
of that length; the compositional proof a range of lengths per query), until the budget (seconds
of this process, per method and claim) runs out; the figure is the last length completed, so a
proof of "every word of length <= n" took at most the budget. Exhaustive checks use the checker (batched exact integer evaluation where it applies);
it cannot be interrupted inside a length, so it stops before a length whose predicted time
(the previous length's time times the alphabet size) would pass the budget. Figures depend on
the machine and its load: run one claim at a time on a quiet machine for the report.

Claims (targets from issue 4, 60 s on a 2-core machine): ``dyck22`` Dyck(2,2) recognizer (256),
``dyck23`` Dyck(2,3) (64), ``dyck11`` Dyck(1,1) (8192), ``parity`` PARITY (512).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions import REGISTRY
from netproof.verifier.claims import Proved, Recognizes
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.smt.compositional import prove_recognizes

CLAIMS: dict[str, tuple[str, dict[str, str], str, int]] = {
    "dyck22": ("dyck", {"k": "2", "depth": "2"}, "Y2", 256),
    "dyck23": ("dyck", {"k": "2", "depth": "3"}, "Y2", 64),
    "dyck11": ("dyck", {"k": "1", "depth": "1"}, "Y2", 8192),
    "parity": ("parity", {}, "C4", 512),
}
METHODS = ("exhaustive", "smt", "compositional", "compositional-ranges", "compositional-each")


def _setup(key: str) -> tuple[Job, Recognizes]:
    name, params, claim_id, _target = CLAIMS[key]
    construction = REGISTRY[name]
    values = construction.parse_params(params)
    claims = {c.id: c for c in construction.claims(values)}
    claim = claims[claim_id]
    if not isinstance(claim, Recognizes):
        raise SystemExit(
            f"{key}: claim {claim_id} is a {type(claim).__name__}, not a recognition claim"
        )
    return Job(construction, values), claim


def reach_exhaustive(job: Job, claim: Recognizes, budget: float) -> tuple[int, str]:
    started = time.perf_counter()
    last = 0.0
    reached = claim.min_len - 1
    size = len(claim.language.alphabet)
    for m in range(claim.min_len, 1 << 20):
        spent = time.perf_counter() - started
        if spent + last * size > budget:
            return reached, f"next length {m} predicted to pass the budget"
        t0 = time.perf_counter()
        verdict = check(job, replace(claim, min_len=m, max_len=m))
        last = time.perf_counter() - t0
        if time.perf_counter() - started > budget:
            return reached, f"length {m} finished after the budget"
        if not isinstance(verdict, Proved):
            return reached, f"length {m}: {verdict}"
        reached = m
    return reached, ""


def reach_smt(job: Job, claim: Recognizes, budget: float) -> tuple[int, str]:
    from netproof.verifier.smt.errors import Unsupported
    from netproof.verifier.smt.monolithic import recognition_query
    from netproof.verifier.smtlib import solve

    started = time.perf_counter()
    reached = claim.min_len - 1
    for m in range(claim.min_len, 1 << 20):
        left = budget - (time.perf_counter() - started)
        if left <= 0:
            return reached, "budget spent"
        try:
            q = recognition_query(job.network(m), claim.language, m)
        except Unsupported as exc:
            return reached, f"unsupported: {exc}"
        left = budget - (time.perf_counter() - started)
        if left <= 0:
            return reached, "budget spent while encoding"
        query, _model = solve(q.solver, name=q.name, logic=q.logic, timeout=left)
        if query.result != "unsat":
            return reached, f"length {m}: {query.result} {query.reason}"
        reached = m
    return reached, ""


def reach_compositional(
    job: Job, claim: Recognizes, budget: float, limit: int, lengths: str = "all"
) -> tuple[int, str, bool]:
    """The compositional reach, its detail, and whether every length was proved (an invariant)."""
    lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
    progress = prove_recognizes(
        job.network(), claim, lemmas, limit, timeout=budget, lengths=lengths
    )
    detail = (
        str(getattr(progress.verdict, "reason", ""))
        if not isinstance(progress.verdict, Proved)
        else ""
    )
    if (
        isinstance(progress.verdict, Proved)
        and "not every length at once: " in progress.verdict.detail
    ):
        detail = progress.verdict.detail.split("not every length at once: ", 1)[1].rstrip(")")
    return progress.proved_up_to, detail, progress.every_length


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--budget", type=float, default=60.0, help="seconds per method and claim (default 60)"
    )
    parser.add_argument(
        "--claim", action="append", choices=sorted(CLAIMS), help="claims to run (default: all)"
    )
    parser.add_argument(
        "--methods",
        default=",".join(METHODS),
        help=f"comma-separated subset of {','.join(METHODS)}",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=0,
        help="stop the compositional proof at this length (default: 2x the target)",
    )
    parser.add_argument(
        "--single",
        default="",
        help="comma-separated lengths: also time the compositional proof of the words of exactly each length "
        "(lemmas plus one query, within the budget), for comparison with per-length figures",
    )
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            parser.error(f"--methods: {m!r} is not one of {', '.join(METHODS)}")
    print(
        f"budget {args.budget:g} s per method and claim; figure = largest n with every word of length <= n proved"
    )
    print(f"{'claim':8} {'target':>6} " + " ".join(f"{m:>14}" for m in methods) + "  ratios")
    for key in args.claim or sorted(CLAIMS):
        job, claim = _setup(key)
        target = CLAIMS[key][3]
        reach: dict[str, int] = {}
        every: set[str] = set()  # methods that proved every length
        notes: list[str] = []
        for method in methods:
            t0 = time.perf_counter()
            if method == "exhaustive":
                n, why = reach_exhaustive(job, claim, args.budget)
            elif method == "smt":
                n, why = reach_smt(job, claim, args.budget)
            else:
                lengths = {
                    "compositional": "all",
                    "compositional-ranges": "ranges",
                    "compositional-each": "each",
                }[method]
                n, why, all_n = reach_compositional(
                    job, claim, args.budget, args.limit or 2 * target, lengths=lengths
                )
                if all_n:
                    every.add(method)
            reach[method] = n
            shown = "every n" if method in every else f"n = {n}"
            notes.append(
                f"  {method}: {shown} in {time.perf_counter() - t0:.1f} s"
                + (f" ({why})" if why else "")
            )
        ratios = []
        if "compositional" in reach:
            for other in ("exhaustive", "smt", "compositional-ranges", "compositional-each"):
                if other in reach and reach[other] > 0:
                    ratio = (
                        "unbounded"
                        if "compositional" in every
                        else f"{reach['compositional'] / reach[other]:.1f}x"
                    )
                    ratios.append(f"compositional/{other} = {ratio}")
        cells = " ".join(f"{'every n' if m in every else reach[m]:>14}" for m in methods)
        print(f"{key:8} {target:>6} {cells}  " + ", ".join(ratios))
        for line in notes:
            print(line)
        for m in (int(x) for x in args.single.split(",") if x):
            t0 = time.perf_counter()
            lemmas = (
                job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
            )
            one = prove_recognizes(
                job.network(), replace(claim, min_len=m, max_len=m), lemmas, m, timeout=args.budget
            )
            print(
                f"  compositional, words of length exactly {m}: {type(one.verdict).__name__} in {time.perf_counter() - t0:.1f} s"
            )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
