"""The grouped attention path (one score per group of equal keys, running sums per group) must
compute exactly what the direct per-position path computes: every state, every selection."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

import netproof.symbolic.evaluation as evaluation
from netproof.constructions.chiang2022 import first_flawed, first_transformer, parity_transformer
from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Softmax,
    Sublayer,
    affine,
    classifier,
    ffn,
    token_embedding,
)
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.ir import MASKS, SCORINGS, TIE_RULES
from netproof.symbolic.sympy_interp import run as run_sympy

ALPHABET = ("a", "b", "c")


def _small(rng: random.Random) -> int:
    return rng.randint(-2, 2)


def _token_only_network(seed: int) -> Network:
    """Keys depend on the token only (no positional feature), so long words have few groups."""
    rng = random.Random(seed)
    dims = ("d0", "d1", "d2")
    table = {s: {d: _small(rng) for d in dims} for s in (*ALPHABET, "CLS")}
    emb = token_embedding(ALPHABET, table, prefix=("CLS",))
    layers = []
    for idx in range(rng.randint(1, 3)):
        if rng.random() < 0.3:
            layers.append(
                Sublayer(
                    block=ffn(
                        f"f{idx}",
                        affine({"h": {"d1": _small(rng)}}, bias={"h": 1}),
                        RELU,
                        affine({"d2": {"h": 1}}),
                    )
                )
            )
            continue
        normalizer: Any = (
            Softmax(r=Fraction(2)) if rng.random() < 0.5 else Hardmax(tie=rng.choice(TIE_RULES))
        )
        reads = ("d0",)
        head = Head(
            name="h",
            query=affine({"q": {d: _small(rng) for d in reads}}, bias={"q": _small(rng)}),
            key=affine({"q": {d: _small(rng) for d in reads}}),
            value=affine({"d1": {"d0": _small(rng), "d2": _small(rng)}, "d2": {"d1": _small(rng)}}),
            normalizer=normalizer,
            scoring=rng.choice(SCORINGS),
            mask=rng.choice(MASKS),
        )
        layers.append(Sublayer(block=AttentionLayer(name=f"a{idx}", heads=(head,))))
    return Network(
        name=f"tokens-{seed}",
        dims=dims,
        embedding=emb,
        layers=tuple(layers),
        readout=classifier({"d1": 1, "d2": 1}, position=rng.choice((0, -1))),
    )


def _both(monkeypatch: pytest.MonkeyPatch, runner: Any, net: Network, word: str) -> tuple[Any, Any]:
    grouped = runner(net, word)
    with monkeypatch.context() as m:
        m.setattr(evaluation, "GROUPED_MAX", -1)
        direct = runner(net, word)
    return grouped, direct


def _same(a: Any, b: Any) -> None:
    assert [s.rows for s in a.states] == [s.rows for s in b.states]
    assert [(s.layer, s.head, s.position, s.weights, s.selected) for s in a.selections] == [
        (s.layer, s.head, s.position, s.weights, s.selected) for s in b.selections
    ]
    assert a.output == b.output
    assert a.accepted == b.accepted


@pytest.mark.parametrize("seed", range(40))
def test_grouped_and_direct_attention_give_identical_exact_traces_on_random_token_networks(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = _token_only_network(seed)
    rng = random.Random(1000 + seed)
    for length in (0, 1, 7, 19):
        word = "".join(rng.choice(ALPHABET) for _ in range(length))
        _same(*_both(monkeypatch, run_exact, net, word))


@pytest.mark.parametrize(
    "net",
    [parity_transformer(), first_transformer(), first_flawed(), first_transformer("1", log_n=True)],
    ids=["parity", "first", "first-flawed", "first-logn"],
)
def test_grouped_and_direct_attention_agree_on_the_chiang_networks(
    net: Network, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    for length in (3, 12, 40):
        word = "".join(rng.choice("01") for _ in range(length))
        _same(*_both(monkeypatch, run_exact, net, word))


def test_the_grouped_path_is_taken_on_a_long_word_of_the_parity_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    original = evaluation.Evaluator._head_grouped

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(evaluation.Evaluator, "_head_grouped", spy)
    run_exact(parity_transformer(), "0110" * 5)
    assert len(calls) == 3  # the counting head and both parity heads


def test_grouped_and_direct_attention_agree_under_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    grouped, direct = _both(monkeypatch, run_sympy, parity_transformer(), "0110100")
    assert [s.rows for s in grouped.states] == [s.rows for s in direct.states]
    assert grouped.output == direct.output
