"""Train a tiny RNN recognizer (netproof's RNNRecognizer: an nn.RNN or nn.LSTM read on its last
hidden state) on PARITY, FIRST or Dyck(k, D), with a fixed seed, on CPU, and save it for
``netproof check-model``.

    python examples/train_rnn_recognizer.py parity tests/fixtures/models/parity_lstm.pt --cell lstm
    python examples/train_rnn_recognizer.py dyck dyck_rnn.pt -p k=1 -p depth=2 --cell rnn

The words are sampled as in ``examples/train_recognizer.py`` (a third members, a third near
misses, a third random words, one length per batch); Adam with a one-cycle learning rate.
"""

from __future__ import annotations

import argparse
import random
import sys

import torch
from train_recognizer import language, members_by_length, sample_word

from netproof.symbolic.torch_recognizer import RNNRecognizer, save_recognizer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("language", help="parity, first or dyck")
    ap.add_argument("out", help="the model file to write")
    ap.add_argument("-p", "--param", action="append", default=[], help="k=1, depth=2 for dyck")
    ap.add_argument("--cell", default="lstm", help="rnn (nn.RNN) or lstm (nn.LSTM)")
    ap.add_argument("--nonlinearity", default="tanh", help="tanh or relu (nn.RNN only)")
    ap.add_argument("--train-n", type=int, default=12, help="longest training word (default 12)")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedding", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-2)
    args = ap.parse_args(argv)
    params = {k: int(v) for k, v in (p.split("=", 1) for p in args.param)}
    lang = language(args.language, params)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(1)
    model = RNNRecognizer(
        alphabet=list(lang.alphabet),
        embedding_dim=args.embedding,
        hidden_size=args.hidden,
        cell=args.cell,
        nonlinearity=args.nonlinearity,
    )
    dyck = (params.get("k", 1), params.get("depth", 2)) if args.language == "dyck" else None
    by_length = members_by_length(lang, args.train_n, dyck)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for step in range(args.steps):
        m = rng.randint(0, args.train_n)
        words = [sample_word(lang, by_length, m, rng) for _ in range(args.batch)]
        target = torch.tensor([float(lang.contains(w)) for w in words])
        loss = loss_fn(model(model.encode(words)), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 250 == 0 or step == args.steps - 1:
            print(f"step {step}: loss {loss.item():.4f}", file=sys.stderr)
    model.eval()
    save_recognizer(model, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
