"""Exhaustive-check throughput on Suzgun et al.'s hand-set recurrent networks: every string up
to length n evaluated word by word with ``symbolic.recurrent.run`` against the prefix-trie walk
of the PredictsNext checker (each prefix evaluated once, one step from its parent's state).

    python benchmarks/recurrent_exhaustive.py [--n 6] [--task d2] [--arch stack-rnn]

Also times the interval backend on the soft network (scale K = 6) per step. Checks, outside the
timings: both exact paths give the same predicted sets (the trie walk through the checker's
verdict, which must be Proved).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions import REGISTRY
from netproof.symbolic.recurrent import run
from netproof.verifier.claims import PredictsNext, Proved
from netproof.verifier.exhaustive.checker import Job, check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6)
    parser.add_argument("--task", default="d2")
    parser.add_argument(
        "--arch", default="stack-rnn", choices=("stack-rnn", "baby-ntm", "stack-lstm")
    )
    args = parser.parse_args()

    c = REGISTRY[args.arch]
    values = c.parse_params({"task": args.task})
    net = c.network(values)
    claim = next(cl for cl in c.claims(values) if isinstance(cl, PredictsNext))
    words = [w for m in range(1, args.n + 1) for w in itertools.product(net.alphabet, repeat=m)]

    started = time.perf_counter()
    for w in words:
        got = run(net, w).predictions
        assert got == claim.task.next_sets(w), w
    per_word = time.perf_counter() - started

    started = time.perf_counter()
    verdict = check(Job(c, values), claim, max_len=args.n)
    trie = time.perf_counter() - started
    assert isinstance(verdict, Proved) and verdict.checked == len(words), verdict

    soft = REGISTRY[args.arch].claims(values)
    soft_net = next((cl.soft for cl in soft if type(cl).__name__ == "SoftAgrees"), None)
    print(f"{args.arch} task={args.task}: {len(words)} strings with 1 <= |w| <= {args.n}")
    print(
        f"  per word (run, exact):      {per_word:8.2f}s  {len(words) / per_word:10.0f} strings/s"
    )
    print(
        f"  prefix trie (checker):      {trie:8.2f}s  {len(words) / trie:10.0f} strings/s  ({per_word / trie:.1f}x)"
    )
    if soft_net is not None:
        sample = [w for w in words if len(w) == min(args.n, 4)][:50]
        started = time.perf_counter()
        steps = sum(len(run(soft_net, w, "interval").steps) for w in sample)
        ivl = time.perf_counter() - started
        print(
            f"  soft network, interval:     {ivl / steps * 1000:8.2f} ms per step ({steps} steps)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
