"""The kernel's fast exhaustive path against its plain interpreter, in one run of this script.

    python benchmarks/kernel_exhaustive.py            # Dyck(2, 2), words of length 8
    python benchmarks/kernel_exhaustive.py --length 10 --plain 100 --fast 20000

Both interpreters are the kernel's own (:mod:`netproof.kernel.interpret`): :func:`run` (rationals,
one word at a time) and :class:`Exhaustive` (integers over one denominator per point of the
network, one length at a time). Each runs on the first words of the length in shortlex order
(``--plain`` and ``--fast`` of them); the script prints both rates, their ratio, and checks that
the two logits are equal (``==``) on every word both ran.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from netproof.constructions import REGISTRY
from netproof.kernel.interpret import Exhaustive, run
from netproof.kernel.netfile import loads
from netproof.symbolic.netfile import dumps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=8)
    ap.add_argument("--plain", type=int, default=200, help="words for the plain interpreter")
    ap.add_argument("--fast", type=int, default=20_000, help="words for the fast path")
    args = ap.parse_args()
    c = REGISTRY["dyck"]
    text = dumps(c.network(c.parse_params({"k": "2", "depth": "2"})))
    with tempfile.TemporaryDirectory() as tmp:  # the kernel reads files: one round trip
        path = Path(tmp) / "dyck.json"
        path.write_text(text, encoding="utf-8")
        net = loads(path.read_text(encoding="utf-8"))
    words = list(itertools.islice(itertools.product(net.alphabet, repeat=args.length), args.fast))
    start = time.perf_counter()
    plain = [run(net, w) for w in words[: args.plain]]
    t_plain = time.perf_counter() - start
    start = time.perf_counter()
    ev = Exhaustive(net, args.length)
    fast = [ev.logit(w) for w in words]
    t_fast = time.perf_counter() - start
    assert fast[: len(plain)] == plain, "the fast path differs from the plain interpreter"
    r_plain, r_fast = len(plain) / t_plain, len(fast) / t_fast
    print(f"Dyck(2, 2), words of length {args.length}")
    print(f"  plain interpreter: {len(plain):7} words in {t_plain:6.2f} s = {r_plain:9.1f} words/s")
    print(f"  fast path:         {len(fast):7} words in {t_fast:6.2f} s = {r_fast:9.1f} words/s")
    print(f"  ratio: {r_fast / r_plain:.1f}x (logits equal on the {len(plain)} words both ran)")


if __name__ == "__main__":
    main()
