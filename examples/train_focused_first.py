"""Train a FIRST recognizer whose decision bounds can settle: one layer, one head, read at
``<cls>``, trained on every length 1..``--train-n`` with a term that rewards the ``<cls>`` head for
attending to position 1 (the only symbol FIRST depends on). Fixed seed, CPU, about a minute.

    python examples/train_focused_first.py tests/fixtures/models/first_focused.pt

Why: ``check-model --search bnb`` settles a subtree of the word trie when the enclosure of the
logit over every completion of a prefix excludes 0. For the committed ``first.pt`` it does not:
its ``<cls>`` head spreads its attention over later symbols (on ``0 0 0 1`` one head puts 0.97
on the last one) and the model's logit stays put only through the layer norms and the FFN, which
interval bounds over independent positions cannot see. A model that attends to position 1 by a
wide margin keeps the ``<cls>`` row nearly constant on every completion, so the bound is tight.

Loss: the binary cross-entropy of the logit plus ``--focus`` times the mean of −log α, α the
``<cls>`` query's attention weight on position 1 (the head's own softmax, recomputed from the
layer's weights). The saved file is ``{"format": "netproof-recognizer", "config",
"state_dict"}`` (float32 weights), read by ``netproof check-model``.
"""

from __future__ import annotations

import argparse

import torch

from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--train-n", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=72)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=8)
    ap.add_argument("--focus", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    model = Recognizer(
        alphabet=["0", "1"],
        d_model=args.d_model,
        nhead=1,
        num_layers=1,
        dim_feedforward=2 * args.d_model,
        max_len=args.max_len,
    )
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps)
    bce = torch.nn.BCEWithLogitsLoss()
    layer = model.encoder.layers[0]
    for step in range(args.steps):
        n = 1 + step % args.train_n
        words = torch.randint(0, 2, (args.batch, n))
        cls = torch.full((args.batch, 1), 2)
        tokens = torch.cat([cls, words], 1)
        y = (words[:, 0] == 1).float()
        logit = model(tokens)
        x = model.token(tokens) + model.position.weight[: n + 1].unsqueeze(0)
        _, att = layer.self_attn(x, x, x, need_weights=True, average_attn_weights=False)
        alpha = att[:, :, 0, 1].clamp_min(1e-30)
        loss = bce(logit, y) + args.focus * (-alpha.log()).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 250 == 0 or step == args.steps - 1:
            acc = ((logit > 0).float() == y).float().mean().item()
            print(
                f"step {step:5d} n={n:3d} loss {loss.item():.4f} acc {acc:.3f} "
                f"min alpha {alpha.min().item():.6f}"
            )
    save_recognizer(model, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
