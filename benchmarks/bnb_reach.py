"""Reach of branch and bound over the word trie within a time budget, against plain enumeration
in the same budget, in one run of this script.

    python benchmarks/bnb_reach.py --model tests/fixtures/models/dyck22.pt --language dyck -k 2 --budget 150
    python benchmarks/bnb_reach.py --network first-softmax --language first --budget 150 --max-n 128

Lengths are decided one after another (every word of each length) by
:func:`~netproof.verifier.models.bnb.check_model_bnb`, until the next length would end past the
budget (its time estimated as k times the longer of the last two) or ``--max-n``; then plain enumeration
(:func:`~netproof.verifier.models.check.check_model`) gets the same budget. Prints, per length,
the words settled by bounds, enumerated and the bounds evaluated, and both reaches; ``--plot``
draws the search (:func:`~netproof.verifier.models.plot.plot_search`).

``--network first-softmax`` is a hand-made softmax network for FIRST (no trained weights): one
head reads position 1 with scale 40, a uniform head measures the share of 1s (which a ReLU unit
above 101/100 would turn into a wrong answer, and never does): bounds settle it. A trained model
is read with ``--model`` (its position table caps the length).
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction
from pathlib import Path

import torch

from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Head,
    Network,
    Sublayer,
    affine,
    constant,
    ffn,
    token_embedding,
)
from netproof.symbolic.ir import Classifier, Scale, Softmax
from netproof.symbolic.torch_import import import_model
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.models import check_model, compile_enclosure
from netproof.verifier.models.bnb import check_model_bnb, merge_bnb

ROOT = Path(__file__).resolve().parents[1]


def first_softmax() -> Network:
    """FIRST by softmax attention with a counting head and a ReLU trap no word reaches."""
    first = Head(
        name="first",
        query=constant({"q": 1}),
        key=affine({"q": {"p1": 1}}),
        value=affine({"f": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
        scale=Scale(coef=Fraction(40)),
    )
    mean = Head(
        name="mean",
        query=constant({"z": 0}),
        key=constant({"z": 0}),
        value=affine({"share": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
    )
    return Network(
        name="first_softmax",
        dims=("one", "p1", "f", "share", "trap"),
        embedding=token_embedding(
            ("0", "1"),
            {"0": {}, "1": {"one": 1}, "<cls>": {}},
            prefix=("<cls>",),
            positional={"p1": "I[i=1]"},
        ),
        layers=(
            Sublayer(block=AttentionLayer(name="read", heads=(first, mean))),
            Sublayer(
                block=ffn(
                    "trap",
                    affine({"u": {"share": 1}}, bias={"u": "-101/100"}),
                    RELU,
                    affine({"trap": {"u": 1000}}),
                )
            ),
        ),
        readout=Classifier(logit=affine({"logit": {"f": 1, "trap": -1}}, bias={"logit": "-1/2"})),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="", help="a model file (a trained recognizer)")
    ap.add_argument("--network", choices=("first-softmax",), default=None)
    ap.add_argument("--language", default="first", help="parity, first or dyck")
    ap.add_argument("-k", type=int, default=1, help="bracket types of dyck")
    ap.add_argument("--depth", type=int, default=2, help="depth bound of dyck")
    ap.add_argument("--budget", type=float, default=150.0, help="seconds (wall-clock) per method")
    ap.add_argument("--max-n", type=int, default=0, help="default: the model's table, or 64")
    ap.add_argument("--leaf", type=int, default=1024)
    ap.add_argument(
        "--relax", action="store_true", help="bounds intersected with the linear relaxation"
    )
    ap.add_argument("--no-enumeration", action="store_true", help="skip plain enumeration")
    ap.add_argument("--plot", default="", metavar="FILE.png")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.network:
        net = first_softmax()
        max_n = args.max_n or 64
    else:
        net = import_model(args.model)
        cap = int(dict(net.params).get("max_len", 10**6)) - 1
        max_n = min(args.max_n or cap, cap)
    lang = {"first": FIRST, "parity": PARITY}.get(args.language) or DYCK(args.k, args.depth)
    enc = compile_enclosure(net)
    k = len(lang.alphabet)
    print(
        f"{net.name} against {lang.name}, budget {args.budget:.0f} s per method, "
        f"{'relaxation on, ' if args.relax else ''}"
        f"load {os.getloadavg()[0]:.1f}"
    )

    def reach(run):  # type: ignore[no-untyped-def]
        parts, times, start = [], [], time.perf_counter()
        n = 0
        while n <= max_n:
            if times:  # the next length: at most k times the longer of the last two
                estimate = max(times[-2:]) * k
                if time.perf_counter() - start + estimate > args.budget:
                    break
            t = time.perf_counter()
            parts.append(run(n))
            times.append(time.perf_counter() - t)
            if time.perf_counter() - start > args.budget:
                break
            n += 1
        return parts, times, time.perf_counter() - start

    parts, times, spent = reach(
        lambda n: check_model_bnb(
            net, lang, min_n=n, max_n=n, enclosure=enc, leaf=args.leaf, relax=args.relax
        )
    )
    print(f"{'n':>4} {'words':>22} {'settled':>22} {'enumerated':>10} {'bounds':>7} {'s':>7}")
    for part, t in zip(parts, times, strict=True):
        row = part.search["rows"][0]  # type: ignore[index]
        print(
            f"{row['length']:>4} {k ** row['length']:>22,} {row['settled']:>22,} "
            f"{row['enumerated']:>10,} {row['bounds']:>7,} {t:>7.2f}"
        )
    report = merge_bnb(parts, max_n=len(parts) - 1)
    s = report.search
    assert s is not None
    t = report.totals
    print(
        f"branch and bound: every word of length <= {len(parts) - 1} ({t.words:,} words) in "
        f"{spent:.1f} s: {s['settled']:,} settled by bounds, {s['enumerated']:,} enumerated, "
        f"{s['bounds']:,} bounds; {t.correct:,} correct, {t.wrong:,} wrong, {t.undecided} undecided; "
        f"status {report.status}"
        + (
            f", shortest wrong word {' '.join(report.shortest_wrong.word) or 'ε'}"
            if report.shortest_wrong
            else ""
        )
    )
    if args.plot:
        from netproof.verifier.models.plot import plot_search

        plot_search(report, args.plot)
        print(f"wrote {args.plot}")
    if not args.no_enumeration:
        plain, ptimes, pspent = reach(
            lambda n: check_model(net, lang, min_n=n, max_n=n, enclosure=enc)
        )
        words = sum(p.totals.words for p in plain)
        print(
            f"plain enumeration: every word of length <= {len(plain) - 1} ({words:,} words) in "
            f"{pspent:.1f} s (the last length {ptimes[-1]:.1f} s)"
        )


if __name__ == "__main__":
    main()
