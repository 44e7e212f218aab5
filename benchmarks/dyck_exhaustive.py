"""Exhaustive-check throughput on the Dyck(k, D) recognizer of Yao et al. 2021 (default k = 2,
D = 2): per-word exact evaluation (Fractions) against the batched integer evaluator.

    python benchmarks/dyck_exhaustive.py [--n 10] [--sample 2000] [--k 2] [--depth 2]

(a) ``symbolic.exact.run`` per word, timed on a seeded random sample of words of length n: the
per-word cost is what matters (all words would take hours this way), and words of the largest
length cost a little more than the average word of length <= n, so the ratio is slightly
generous to the batched side, by under 5% at n = 10. (b) ``symbolic.batched`` on ALL words of
length <= n (1,398,101 at n = 10 over 4 symbols), words generated as index arrays in shortlex
order. Tokens count the start and end tokens γ and ω that the network adds (n + 2 per word).
Both figures come from this process on this machine; the ratio is words/s of (b) over (a).

Checks, outside the timings: the batched accept bit equals ``DYCK(k, D).contains`` on every word
(a full exhaustive check), and the batched logits equal ``exact.run``'s on every sampled word.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic.batched import CHUNK, Evaluator, evaluate, shortlex_block
from netproof.symbolic.exact import run
from netproof.verifier.claims.dyck import DYCK


def per_word(net, sample: list[tuple[str, ...]]) -> tuple[float, list]:
    started = time.perf_counter()
    traces = [run(net, w) for w in sample]
    return time.perf_counter() - started, traces


def batched(net, n: int) -> tuple[float, dict[int, np.ndarray]]:
    """Seconds to evaluate every word of length 0..n, and the accept bits per length."""
    ev = Evaluator(net)
    size = len(net.alphabet)
    bits: dict[int, np.ndarray] = {}
    started = time.perf_counter()
    for m in range(n + 1):
        count = size**m
        parts = [
            ev.run(shortlex_block(size, m, s, min(count, s + CHUNK))).accepted
            for s in range(0, count, CHUNK)
        ]
        bits[m] = np.concatenate(parts)
    return time.perf_counter() - started, bits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="largest word length (default 10)")
    ap.add_argument(
        "--sample", type=int, default=2000, help="words of length n for the per-word timing"
    )
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--depth", type=int, default=2)
    args = ap.parse_args()
    net = dyck_recognizer(k=args.k, depth=args.depth)
    lang = DYCK(args.k, args.depth)
    alphabet = net.alphabet
    rng = random.Random(2021)
    sample = [tuple(rng.choice(alphabet) for _ in range(args.n)) for _ in range(args.sample)]
    total = sum(len(alphabet) ** m for m in range(args.n + 1))
    total_tokens = sum((m + 2) * len(alphabet) ** m for m in range(args.n + 1))
    print(
        f"Dyck({args.k}, {args.depth}) recognizer, {len(net.layers)} sublayers, {len(net.dims)} dims; n <= {args.n}"
    )

    seconds_a, traces = per_word(net, sample)
    rate_a = len(sample) / seconds_a
    tokens_a = len(sample) * (args.n + 2) / seconds_a
    print(
        f"(a) exact.run per word   {len(sample):>9} words of length {args.n:<3} {seconds_a:9.2f} s "
        f"{rate_a:12.1f} words/s {tokens_a:12.1f} tokens/s",
        flush=True,
    )

    seconds_b, bits = batched(net, args.n)
    rate_b = total / seconds_b
    tokens_b = total_tokens / seconds_b
    print(
        f"(b) batched integers     {total:>9} words of length <= {args.n:<3}{seconds_b:9.2f} s "
        f"{rate_b:12.1f} words/s {tokens_b:12.1f} tokens/s",
        flush=True,
    )
    print(f"ratio (b)/(a): {rate_b / rate_a:.0f}x words/s, {tokens_b / tokens_a:.0f}x tokens/s")

    started = time.perf_counter()
    wrong = 0
    for m in range(args.n + 1):
        member = np.fromiter(
            (lang.contains(w) for w in itertools.product(alphabet, repeat=m)),
            dtype=bool,
            count=len(alphabet) ** m,
        )
        wrong += int(np.count_nonzero(member != bits[m]))
    print(
        f"check: batched accept bits vs DYCK({args.k}, {args.depth}).contains on all {total} words: "
        f"{'all equal' if wrong == 0 else f'{wrong} DIFFER'} ({time.perf_counter() - started:.1f} s)"
    )
    got = evaluate(net, sample)
    differ = sum(
        got.logit(i) != t.output or bool(got.accepted[i]) != t.accepted
        for i, t in enumerate(traces)
    )
    print(
        f"check: batched logits vs exact.run on the {len(sample)} sampled words: "
        f"{'all equal' if differ == 0 else f'{differ} DIFFER'}"
    )
    if wrong or differ:
        sys.exit(1)


if __name__ == "__main__":
    main()
