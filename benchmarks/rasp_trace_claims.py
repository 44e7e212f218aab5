"""Exhaustive ``operations`` and ``no-ties`` of a compiled B-RASP program: word by word (the
exact interpreter per word, the claim's ``holds``) against the batched evaluator (one exact
integer trace per chunk of words of one length, the claim's ``holds_batch``).

    python benchmarks/rasp_trace_claims.py [--max-n 7] [--repeat 1]

The program is "no b after the first c" over {a, b, c} (two attention operations, past masks):
the case a newcomer met, a 3-letter alphabet where the per-word path takes minutes at length 8.
Each row is one claim: the seconds of each path (the best of ``--repeat``), their ratio, and the
verdict of each (they must agree: the same verdict, counterexample and message). All figures
come from one run in one process.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions.rasp.modules import program_constructions
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job, check, count_words


def program() -> B.Program:
    b, c = B.token("b"), B.token("c")
    seen_c = B.rightmost("past", score=c.at_j, value=B.TRUE).named("seen_c")
    bad = b & seen_c
    seen_bad = B.rightmost("past", score=bad.at_j, value=B.TRUE).named("seen_bad")
    return B.Program("no_b_after_c", ("a", "b", "c"), output=~(seen_bad | bad), empty=True)


def best_of(repeat: int, run: object) -> tuple[float, object]:
    best, verdict = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        verdict = run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-n", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    (c,) = program_constructions({"no-b-after-c": (program(), r"[ab]*(c[ac]*)?")})
    job = Job(c, {})
    words = count_words(job.alphabet, 1, args.max_n)
    print(f"no-b-after-c, words 1..{args.max_n} over {{a, b, c}}: {words:,} words")
    print(f"{'claim':12} {'per word s':>11} {'batched s':>10} {'ratio':>7}  verdicts")
    for claim in c.claims({}):
        if claim.id not in ("operations", "no-ties"):
            continue
        plain = dataclasses.replace(claim, holds_batch=None)
        slow, v1 = best_of(args.repeat, lambda cl=plain: check(job, cl, max_len=args.max_n))
        fast, v2 = best_of(args.repeat, lambda cl=claim: check(job, cl, max_len=args.max_n))
        same = type(v1).__name__ == type(v2).__name__
        print(
            f"{claim.id:12} {slow:11.2f} {fast:10.2f} {slow / fast:7.1f}  "
            f"{type(v1).__name__} / {type(v2).__name__}{'' if same else '  DISAGREE'}"
        )


if __name__ == "__main__":
    main()
