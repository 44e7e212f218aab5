"""Train a tiny transformer recognizer (netproof's Recognizer family) on PARITY, FIRST or Dyck(k, D),
with a fixed seed, on CPU in a minute or two, and save it for ``netproof check-model``.

    python examples/train_recognizer.py first tests/fixtures/models/first.pt
    python examples/train_recognizer.py parity tests/fixtures/models/parity.pt
    python examples/train_recognizer.py dyck tests/fixtures/models/dyck12.pt -p k=1 -p depth=2
    python examples/train_recognizer.py dyck tests/fixtures/models/dyck22.pt -p k=2 -p depth=2 \
        --train-n 10 --steps 3000 --batch 128 --layers 2 --heads 4 --d-model 16 --lr 5e-3

Words up to ``--train-n`` symbols are sampled in batches of one length (so that no padding is
needed): a third members, a third near misses, a third random words (:func:`sample_word`;
members of Dyck(k, D) are rare, so they come from a walk over the bracket stack,
:func:`dyck_members`). The loss is the binary cross-entropy of the logit; Adam with a one-cycle
learning-rate schedule. The saved file is
``{"format": "netproof-recognizer", "config", "state_dict"}`` (float32 weights), read by
``netproof import`` and ``netproof check-model``. As the papers report, trained models generalize
imperfectly: ``netproof check-model`` finds the shortest word each one gets wrong.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys

import torch

from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer
from netproof.verifier.claims.dyck import DYCK, dyck_alphabet
from netproof.verifier.claims.languages import FIRST, PARITY, Language


def language(name: str, params: dict[str, int]) -> Language:
    if name == "parity":
        return PARITY
    if name == "first":
        return FIRST
    if name == "dyck":
        return DYCK(params.get("k", 1), params.get("depth", 2))
    raise SystemExit(f"unknown language {name!r}: parity, first or dyck")


def members_by_length(
    lang: Language, n: int, dyck: tuple[int, int] | None
) -> dict[int, list[tuple[str, ...]]]:
    """Every member of each length 0..n: by the stack walk for Dyck(k, D) (members are rare), by
    enumeration otherwise (only while there are at most 2^16 words of that length)."""
    if dyck is not None:
        return {m: dyck_members(*dyck, m) for m in range(n + 1)}
    return {
        m: [w for w in itertools.product(lang.alphabet, repeat=m) if lang.contains(w)]
        if len(lang.alphabet) ** m <= 1 << 16
        else []
        for m in range(n + 1)
    }


def dyck_members(k: int, depth: int, m: int) -> list[tuple[str, ...]]:
    """Every word of Dyck(k, depth) of length m, in shortlex order."""
    alphabet = dyck_alphabet(k)
    out: list[tuple[str, ...]] = []

    def walk(word: list[str], stack: list[int]) -> None:
        left = m - len(word)
        if left == 0:
            if not stack:
                out.append(tuple(word))
            return
        for t, a in enumerate(alphabet):
            typ, opening = t // 2, t % 2 == 0
            if opening and len(stack) < depth and len(stack) + 1 <= left - 1:
                walk([*word, a], [*stack, typ])
            elif not opening and stack and stack[-1] == typ and len(stack) - 1 <= left - 1:
                walk([*word, a], stack[:-1])

    walk([], [])
    return out


def sample_word(
    lang: Language, members: dict[int, list[tuple[str, ...]]], m: int, rng: random.Random
) -> tuple[str, ...]:
    """A word of length m: a member (a third of the time, when there are members of that length),
    a near miss (a member with one symbol replaced or two neighbours swapped, a third) or a
    uniformly random word (the rest). Near misses teach the boundary that random words rarely
    touch: most random Dyck words are far outside the language."""
    pool = members.get(m, [])
    u = rng.random()
    if pool and u < 1 / 3:
        return rng.choice(pool)
    if pool and m and u < 2 / 3:
        w = list(rng.choice(pool))
        i = rng.randrange(m)
        if m > 1 and rng.random() < 0.5:
            j = min(i + 1, m - 1) if i + 1 < m else i - 1
            w[i], w[j] = w[j], w[i]
        else:
            w[i] = rng.choice([a for a in lang.alphabet if a != w[i]])
        return tuple(w)
    return tuple(rng.choice(lang.alphabet) for _ in range(m))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("language", help="parity, first or dyck")
    ap.add_argument("out", help="the model file to write")
    ap.add_argument("-p", "--param", action="append", default=[], help="k=1, depth=2 for dyck")
    ap.add_argument("--train-n", type=int, default=8, help="longest training word (default 8)")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--d-model", type=int, default=8)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--norm-first", action="store_true")
    ap.add_argument("--readout", default="first", help="first (the <cls> token) or last")
    ap.add_argument("--ffn", type=int, default=0, help="FFN width (default 2·d_model)")
    ap.add_argument("--activation", default="relu", help="the FFN's activation: relu or gelu")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args(argv)
    params = {k: int(v) for k, v in (p.split("=", 1) for p in args.param)}
    lang = language(args.language, params)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(1)
    model = Recognizer(
        alphabet=list(lang.alphabet),
        d_model=args.d_model,
        nhead=args.heads,
        num_layers=args.layers,
        dim_feedforward=args.ffn or 2 * args.d_model,
        max_len=32,
        causal=args.causal,
        norm_first=args.norm_first,
        readout=args.readout,
        activation=args.activation,
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
