"""The linear relaxation of the layers after the last attention layer (netproof.verifier.models
relax): its bound over every completion holds each word's value on every committed model it
covers (enumeration), mutants of its rules are caught by that comparison with a word whose own
rigorous enclosure lies outside the mutant's bound, it tightens the committed FIRST model's bound
enough to settle subtrees, and branch and bound with it gives plain enumeration's verdicts."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

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
from netproof.symbolic.ir import Classifier, Softmax
from netproof.symbolic.torch_import import import_model
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model, compile_enclosure
from netproof.verifier.models import relax as relax_module
from netproof.verifier.models.bnb import check_model_bnb
from netproof.verifier.models.wordset import WordSetBound

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

COVERED = {
    "first": (FIRST, 5),
    "parity": (PARITY, 5),
    "dyck12": (DYCK(1, 2), 6),
    "dyck22": (DYCK(2, 2), 3),
    "first_focused": (FIRST, 5),
}
"""The committed transformers whose tail the relaxation covers, their language and the length to
which the relaxed bound is compared with enumeration (every prefix of every word)."""


def _outside(name: str) -> list[tuple[tuple[str, ...], tuple[str, ...], float, float]]:
    """Every (prefix, word, relaxed low, relaxed high) where the word's rigorous per-word
    enclosure lies wholly outside the relaxed bound over the prefix's completions."""
    lang, n = COVERED[name]
    return _outside_of(import_model(FIXTURES / f"{name}.pt"), lang.alphabet, n)


def _outside_of(
    net: Any, al: tuple[str, ...], n: int
) -> list[tuple[tuple[str, ...], tuple[str, ...], float, float]]:
    enc = compile_enclosure(net)
    ws = WordSetBound(enc, al)
    assert ws.use_relaxation(True)
    ws.lazy = False  # the relaxation on every set, not only where the intervals leave 0 open
    words = list(itertools.product(range(len(al)), repeat=n))
    pre = [enc.token_index[t] for t in net.embedding.prefix]  # type: ignore[union-attr]
    tokens = torch.tensor([[*pre, *(enc.token_index[al[a]] for a in w)] for w in words])
    y = enc.logits(tokens, tokens.shape[1])
    values = list(zip((y.m - y.r).tolist(), (y.m + y.r).tolist(), strict=True))
    out = []
    for m in range(n + 1):
        prefixes = sorted({w[:m] for w in words})
        ws.bound(prefixes, n)
        assert ws.relaxed is not None
        low, high = ws.relaxed
        at = {p: (float(low[i]), float(high[i])) for i, p in enumerate(prefixes)}
        for w, (vlo, vhi) in zip(words, values, strict=True):
            lo, hi = at[w[:m]]
            if vhi < lo or vlo > hi:
                out.append((tuple(al[a] for a in w[:m]), tuple(al[a] for a in w), lo, hi))
    return out


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(nm, marks=pytest.mark.slow) if nm.startswith("dyck") else nm
        for nm in sorted(COVERED)
    ],
)
def test_the_relaxed_bound_over_every_completion_holds_each_word_s_value_on_every_covered_model(
    name: str,
) -> None:
    assert _outside(name) == []


def test_a_tail_with_a_gelu_is_not_relaxed_and_says_why() -> None:
    net = import_model(FIXTURES / "parity_gelu.pt")
    tail = relax_module.TailRelaxation(compile_enclosure(net))  # type: ignore[arg-type]
    assert not tail.supported and "gelu" in tail.why
    ws = WordSetBound(compile_enclosure(net), PARITY.alphabet)
    assert not ws.use_relaxation(True)


def _mutants() -> dict[str, Callable[[pytest.MonkeyPatch], None]]:
    T = relax_module.TailRelaxation

    def chord_offset_dropped(mp: pytest.MonkeyPatch) -> None:
        orig = relax_module._back_relu
        mp.setattr(
            relax_module,
            "_back_relu",
            lambda g, lo, hi: (orig(g, lo, hi)[0], torch.zeros(g.shape[:-1], dtype=g.dtype)),
        )

    def bias_dropped(mp: pytest.MonkeyPatch) -> None:
        orig = relax_module._back_affine

        def f(lin: Any, g: Any, xmax: Any) -> Any:
            gp, u = orig(lin, g, xmax)
            return gp, u - g @ lin.bm

        mp.setattr(relax_module, "_back_affine", f)

    def residual_forgotten(mp: pytest.MonkeyPatch) -> None:
        orig = T._back_steps_block
        mp.setattr(
            T, "_back_steps_block", lambda s, i, st, gs, res, g: orig(s, i, st, gs, False, g)
        )

    def sigma_low_doubled(mp: pytest.MonkeyPatch) -> None:
        orig = T._sigma

        def f(self: Any, i: int, eps: float) -> Any:
            lo, hi = orig(self, i, eps)
            return 2 * lo, hi

        mp.setattr(T, "_sigma", f)

    def sigma_high_halved(mp: pytest.MonkeyPatch) -> None:
        orig = T._sigma

        def f(self: Any, i: int, eps: float) -> Any:
            lo, hi = orig(self, i, eps)
            return lo, torch.maximum(lo, hi / 2)

        mp.setattr(T, "_sigma", f)

    def one_symbol_s_values(mp: pytest.MonkeyPatch) -> None:
        orig = T._heads

        def f(self: Any, g: Any) -> Any:
            kept = self.kept
            self.kept = [(h, e, vs[:1], vis) for h, e, vs, vis in kept]
            try:
                return orig(self, g)
            finally:
                self.kept = kept

        mp.setattr(T, "_heads", f)

    def result_a_ten_millionth_too_tight(mp: pytest.MonkeyPatch) -> None:
        orig = T.bound

        def f(self: Any, *a: Any) -> Any:
            lo, hi = orig(self, *a)
            return lo + 1e-7, hi - 1e-7

        mp.setattr(T, "bound", f)

    return {
        f.__name__: f
        for f in (
            chord_offset_dropped,
            bias_dropped,
            residual_forgotten,
            sigma_low_doubled,
            sigma_high_halved,
            one_symbol_s_values,
            result_a_ten_millionth_too_tight,
        )
    }


MUTANTS = _mutants()


def _mean_relu() -> Network:
    """logit = relu(o − 1/2) − 1/10 at `<cls>`, o the uniform average of x over every token
    (x = 0 on `a` and `<cls>`, 1 on `b`): the relaxation's upper bound is attained (the relu's
    chord touches it at the interval's end, the weights are equal), so a rule made unsound shows
    on some word."""
    mean = Head(
        name="mean",
        query=constant({"z": 0}),
        key=constant({"z": 0}),
        value=affine({"o": {"x": 1}}),
        normalizer=Softmax(c=Fraction(1)),
    )
    return Network(
        name="mean_relu",
        dims=("x", "o", "y"),
        embedding=token_embedding(
            ("a", "b"), {"a": {}, "b": {"x": 1}, "<cls>": {}}, prefix=("<cls>",)
        ),
        layers=(
            Sublayer(block=AttentionLayer(name="read", heads=(mean,))),
            Sublayer(
                block=ffn(
                    "act",
                    affine({"u": {"o": 1}}, bias={"u": "-1/2"}),
                    RELU,
                    affine({"y": {"u": 1}}),
                )
            ),
        ),
        readout=Classifier(logit=affine({"logit": {"y": 1}}, bias={"logit": "-1/10"})),
    )


def test_the_relaxation_of_the_mean_network_holds_and_is_attained() -> None:
    net = _mean_relu()
    assert _outside_of(net, ("a", "b"), 4) == []
    ws = WordSetBound(compile_enclosure(net), ("a", "b"))
    assert ws.use_relaxation(True)
    ws.lazy = False
    ws.bound([(1,)], 2)  # b·s: o in [1/3, 2/3], the largest logit relu(1/6) − 1/10 = 1/15 on b b
    assert ws.relaxed is not None
    assert abs(float(ws.relaxed[1][0]) - 1 / 15) < 1e-9


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_mutant_of_the_relaxation_is_caught_by_enumeration(
    mutant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each mutant, on the mean network or the committed FIRST model (whichever attains the
    rule it breaks), leaves some word's rigorous enclosure wholly outside its bound."""
    MUTANTS[mutant](monkeypatch)
    outside = _outside_of(_mean_relu(), ("a", "b"), 4) or _outside("first")
    assert outside, f"mutant {mutant} not caught"


def test_the_relaxation_settles_a_subtree_of_the_committed_first_model_that_intervals_do_not() -> (
    None
):
    net = import_model(FIXTURES / "first.pt")
    ws = WordSetBound(compile_enclosure(net), FIRST.alphabet)
    low, _ = ws.bound([(1,)], 12)
    assert float(low[0]) < 0  # intervals: the whole layer-norm box
    assert ws.use_relaxation(True)
    low, _ = ws.bound([(1,)], 12)
    assert float(low[0]) > 1  # every word of length 12 starting with 1 is accepted
    ws.bound(list(itertools.product(range(2), repeat=5)), 5)  # single words: intervals decide
    assert ws.relaxed is None  # lazy: no relaxation where the sign is known


def test_branch_and_bound_with_the_relaxation_gives_plain_enumeration_s_verdicts() -> None:
    net = import_model(FIXTURES / "first.pt")
    enc = compile_enclosure(net)
    plain = check_model(net, FIRST, max_n=9, enclosure=enc)
    bnb = check_model_bnb(net, FIRST, max_n=9, enclosure=enc, leaf=16, relax=True)
    assert bnb.search is not None and bnb.search["relax"] is True
    assert bnb.search["settled"] > 0
    assert [(r.length, r.words, r.correct, r.wrong, r.undecided) for r in bnb.rows] == [
        (r.length, r.words, r.correct, r.wrong, r.undecided) for r in plain.rows
    ]
    assert bnb.status == plain.status


def test_check_model_cli_relaxes_branch_and_bound_and_refuses_relax_without_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = str(FIXTURES / "first.pt")
    args = ["check-model", first, "--language", "first", "--max-n", "8", "--json"]
    code = main(args)
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--search", "bnb", "--leaf", "8", "--relax"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["search"]["relax"] is True and doc["search"]["settled"] > 0
    assert doc["rows"] == plain["rows"] and doc["shortest_wrong"] == plain["shortest_wrong"]
    assert main([*args, "--relax"]) == 2
    assert "add --search bnb" in capsys.readouterr().err
