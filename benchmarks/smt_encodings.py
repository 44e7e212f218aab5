"""Which monolithic SMT encoding z3 solves fastest: the word as one integer per position or
one Bool per (position, symbol), and a hardmax selection through the maximum score or through
pairwise score comparisons. One recognition query ("some word of length n is misclassified")
per setting, on the Dyck(k, D) recognizer of Yao et al. 2021 (default k = 2, D = 2).

    python benchmarks/smt_encodings.py [--k 2] [--depth 2] [--n 6,8] [--timeout 120]

Every setting must answer unsat (the recognizer is correct); the table gives the encoding and
solving seconds. The defaults of ``netproof.verifier.smt.monolithic.recognition_query`` are the fastest measured
here (word ``int``, hardmax ``max``); on this 2-core machine under load, Dyck(2,2): n = 6,
17.0 s (max) vs 18.0 s (pairwise); n = 8, 44.8 s vs 91.6 s; and ``onehot`` words 1.5x to 2x
slower than ``int`` at n = 6 and 8. Run the settings one after the other in one process, as
here: absolute times vary with the machine's load, the ratios much less.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions import REGISTRY
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.smt.monolithic import recognition_query


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--n", default="6,8", help="comma-separated word lengths")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per query")
    args = parser.parse_args()
    c = REGISTRY["dyck"]
    net = c.network(c.parse_params({"k": str(args.k), "depth": str(args.depth)}))
    language = DYCK(args.k, args.depth)
    print(f"{'n':>3}  {'word':7} {'hardmax':9} {'encode s':>9} {'solve s':>9}  answer")
    for n in (int(x) for x in args.n.split(",")):
        for word in ("int", "onehot"):
            for hardmax in ("max", "pairwise"):
                started = time.perf_counter()
                q = recognition_query(net, language, n, word=word, hardmax=hardmax)
                built = time.perf_counter()
                q.solver.set("timeout", int(args.timeout * 1000))
                answer = q.solver.check()
                solved = time.perf_counter()
                print(
                    f"{n:>3}  {word:7} {hardmax:9} {built - started:9.2f} {solved - built:9.2f}  {answer}",
                    flush=True,
                )
                if str(answer) == "sat":
                    print(
                        "the recognizer is correct: a sat answer is an encoder bug", file=sys.stderr
                    )
                    return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
