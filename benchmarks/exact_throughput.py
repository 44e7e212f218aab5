"""Exact evaluation throughput: tokens per second of the exact (Fraction) interpreter on the
PARITY and FIRST transformers (Chiang & Cholak 2022) at n = 100 and n = 1000.

    python benchmarks/exact_throughput.py [--repeat R] [--lengths 100 1000]

Each figure is the best of R runs on one random word (seeded) of n − 1 symbols (n counts CLS),
measured in this process; the table also prints the ratio to the PARITY figure at the same n,
so the numbers compare within one run on one machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.symbolic.exact import run


def measure(net, word: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run(net, word)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lengths", type=int, nargs="+", default=[100, 1000])
    args = ap.parse_args()
    rng = random.Random(2022)
    nets = {"PARITY": parity_transformer(), "FIRST": first_transformer()}
    print(f"{'network':8} {'n':>6} {'seconds':>10} {'tokens/s':>10} {'vs PARITY':>10}")
    for n in args.lengths:
        word = "".join(rng.choice("01") for _ in range(n - 1))
        base = None
        for name, net in nets.items():
            seconds = measure(net, word, args.repeat if n <= 200 else 1)
            rate = n / seconds
            base = base or rate
            print(
                f"{name:8} {n:>6} {seconds:>10.3f} {rate:>10.1f} {rate / base:>9.2f}x", flush=True
            )


if __name__ == "__main__":
    main()
