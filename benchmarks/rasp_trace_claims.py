"""Exhaustive ``operations`` and ``no-ties`` of a compiled B-RASP program: word by word (the
exact interpreter per word, the claim's ``holds``) against the batched evaluator (one exact
integer trace per chunk of words of one length, the claim's ``holds_batch``).

    python benchmarks/rasp_trace_claims.py [--max-n 7] [--repeat 1] [--crasp]

The program is "no b after the first c" over {a, b, c} (two attention operations, past masks):
the case a newcomer met, a 3-letter alphabet where the per-word path takes minutes at length 8.
Each row is one claim, each path with a job of its own (no trace cached from another row): the seconds of each path (the best of ``--repeat``), their ratio, and the
verdict of each (they must agree: the same verdict, counterexample and message). All figures
come from one run in one process.

``--crasp``: the C-RASP program of Shuffle-Dyck-2 over ``( ) [ ]`` instead (five counts, their
comparisons as layer norms over two dims, which the batched integers run exactly), with its
``network=program`` (the accept bits) and ``operations`` claims.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions.rasp.modules import program_constructions
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.exhaustive import wordwise
from netproof.verifier.exhaustive.checker import Job, check, count_words


def program() -> B.Program:
    b, c = B.token("b"), B.token("c")
    seen_c = B.rightmost("past", score=c.at_j, value=B.TRUE).named("seen_c")
    bad = b & seen_c
    seen_bad = B.rightmost("past", score=bad.at_j, value=B.TRUE).named("seen_bad")
    return B.Program("no_b_after_c", ("a", "b", "c"), output=~(seen_bad | bad), empty=True)


def shuffle_dyck2() -> C.Program:
    """Shuffle-Dyck-2 in C-RASP (as examples/shuffle_dyck.py writes it for k = 2)."""
    o1, c1, o2, c2 = (C.token(s) for s in "()[]")
    flag = (C.count(c1) > C.count(o1)) | (C.count(c2) > C.count(o2))
    balanced = C.count(o1).eq(C.count(c1)) & C.count(o2).eq(C.count(c2))
    return C.Program(
        "shuffle_dyck2", tuple("()[]"), output=C.count(flag).eq(0) & balanced, empty=True
    )


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
    parser.add_argument("--crasp", action="store_true", help="Shuffle-Dyck-2 in C-RASP instead")
    args = parser.parse_args()
    if args.crasp:
        (c,) = program_constructions({"shuffle-dyck2": shuffle_dyck2()})
        ids, name = ("network=program", "operations"), "shuffle-dyck2 (C-RASP)"
    else:
        (c,) = program_constructions({"no-b-after-c": (program(), r"[ab]*(c[ac]*)?")})
        ids, name = ("operations", "no-ties"), "no-b-after-c"
    job = Job(c, {})
    words = count_words(job.alphabet, 1, args.max_n)
    print(f"{name}, words 1..{args.max_n} over {set(job.alphabet)}: {words:,} words")
    print(f"{'claim':16} {'per word s':>11} {'batched s':>10} {'ratio':>7}  verdicts")
    batchable = wordwise._batchable

    def per_word(cl: object) -> object:
        wordwise._batchable = lambda *_a: None  # type: ignore[assignment]
        try:
            return check(Job(c, {}), cl, max_len=args.max_n)  # type: ignore[arg-type]
        finally:
            wordwise._batchable = batchable

    for claim in c.claims({}):
        if claim.id not in ids:
            continue
        slow, v1 = best_of(args.repeat, lambda cl=claim: per_word(cl))
        fast, v2 = best_of(args.repeat, lambda cl=claim: check(Job(c, {}), cl, max_len=args.max_n))
        same = type(v1).__name__ == type(v2).__name__ and getattr(v1, "word", None) == getattr(
            v2, "word", None
        )
        print(
            f"{claim.id:16} {slow:11.2f} {fast:10.2f} {slow / fast:7.1f}  "
            f"{type(v1).__name__} / {type(v2).__name__}{'' if same else '  DISAGREE'}"
        )


if __name__ == "__main__":
    main()
