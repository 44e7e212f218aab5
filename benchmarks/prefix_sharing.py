"""Prefix sharing for causal models against today's per-word batches: every word of length
0..max-n of a causal transformer read at the last token, rigorously enclosed both ways and
checked, timed in one run of this script.

    python benchmarks/prefix_sharing.py [--max-n 16] [--d-model 16] [--layers 2] [--heads 2]

The model is a seeded, untrained causal :class:`~netproof.symbolic.torch_recognizer.Recognizer`
(speed does not depend on training). Timed, as wall-clock and the process's CPU seconds:

- per-word: ``check_model`` with the batched enclosure (every word's m + 1 rows);
- prefix: building :class:`~netproof.verifier.models.prefix.CausalPrefixEnclosure` (the trie)
  and ``check_model`` answered from it.

Prints both, their ratio (the issue's target: at least 5x), and whether the verdicts agree.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from netproof.symbolic.torch_import import to_network
from netproof.symbolic.torch_recognizer import Recognizer
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.models import check_model, compile_enclosure
from netproof.verifier.models.prefix import CausalPrefixEnclosure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-n", type=int, default=16)
    ap.add_argument("--d-model", type=int, default=16)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Recognizer(
        alphabet=["0", "1"],
        d_model=args.d_model,
        nhead=args.heads,
        num_layers=args.layers,
        dim_feedforward=2 * args.d_model,
        max_len=args.max_n + 1,
        causal=True,
        readout="last",
    )
    net = to_network(model.config, model.state_dict())
    words = 2 ** (args.max_n + 1) - 1
    print(
        f"causal model d_model={args.d_model} layers={args.layers} heads={args.heads}, "
        f"every binary word of length <= {args.max_n} ({words:,} words), load {os.getloadavg()[0]:.1f}"
    )

    def timed(f):  # type: ignore[no-untyped-def]
        w, c = time.perf_counter(), time.process_time()
        out = f()
        return out, time.perf_counter() - w, time.process_time() - c

    plain, pw, pc = timed(lambda: check_model(net, PARITY, max_n=args.max_n))
    enc = compile_enclosure(net)
    shared, sw, sc = timed(
        lambda: check_model(
            net,
            PARITY,
            max_n=args.max_n,
            enclosure=CausalPrefixEnclosure(enc, ("0", "1"), args.max_n),  # type: ignore[arg-type]
        )
    )
    same = [(r.correct, r.wrong, r.undecided) for r in plain.rows] == [
        (r.correct, r.wrong, r.undecided) for r in shared.rows
    ]
    print(f"per-word batches: {pw:8.2f} s wall {pc:8.2f} s CPU")
    print(f"prefix sharing:   {sw:8.2f} s wall {sc:8.2f} s CPU")
    print(f"speed-up: {pw / sw:.2f}x wall, {pc / sc:.2f}x CPU; same verdicts: {same}")


if __name__ == "__main__":
    main()
