"""Differential test: exact ≡ sympy, and interval ⊇ exact, on random small networks.

The generator is seeded (``random.Random(seed)``), so every case is reproducible by its seed. Dim
``d0`` is written only by the embedding (an integer: a token value plus ±i), and softmax heads
read only ``d0`` with integer weights, so every softmax exponent is an integer and the exact
interpreter can run every generated network.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from mpmath import iv

from netproof.symbolic import (
    RELU,
    Affine,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Softmax,
    Sublayer,
    affine,
    classifier,
    exact,
    ffn,
    interval,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.evaluation import Trace, UndecidedSignError
from netproof.symbolic.ir import MASKS, SCORINGS, TIE_RULES

ALPHABET = ("a", "b", "c")
CLS = "CLS"
SEEDS = range(30)


def _small(rng: random.Random) -> int:
    return rng.randint(-2, 2)


def _affine(rng: random.Random, inputs: tuple[str, ...], outputs: tuple[str, ...]) -> Affine:
    return affine(
        {o: {i: _small(rng) for i in inputs} for o in outputs},
        inputs=inputs,
        bias={o: _small(rng) for o in outputs},
        outputs=outputs,
    )


def _head(rng: random.Random, name: str, dims: tuple[str, ...], outputs: tuple[str, ...]) -> Head:
    if rng.random() < 0.5:
        normalizer: Hardmax | Softmax = Softmax(r=Fraction(2))
        reads = ("d0",)  # integer scores, so 2^score is rational
    else:
        normalizer = Hardmax(tie=rng.choice(TIE_RULES))
        reads = dims
    return Head(
        name=name,
        query=_affine(rng, reads, ("q",)),
        key=_affine(rng, reads, ("q",)),
        value=_affine(rng, dims, outputs),
        normalizer=normalizer,
        scoring=rng.choice(SCORINGS),
        mask=rng.choice(MASKS),
    )


def random_network(seed: int) -> tuple[Network, list[str]]:
    """A valid network of 2-4 dims and 1-3 sublayers, and three words of length 0-4."""
    rng = random.Random(seed)
    dims = tuple(f"d{k}" for k in range(rng.randint(2, 4)))
    writable = dims[1:]
    table = {s: {d: _small(rng) for d in dims} for s in (*ALPHABET, CLS)}
    emb = token_embedding(
        ALPHABET, table, positional={"d0": ("i", rng.choice((-1, 1)))}, prefix=(CLS,)
    )
    layers = []
    for idx in range(rng.randint(1, 3)):
        outs = tuple(rng.sample(writable, rng.randint(1, len(writable))))
        kind = rng.choice(("ffn", "attention", "multi-head"))
        block: Any
        if kind == "ffn":
            hidden = tuple(f"h{k}" for k in range(rng.randint(1, 3)))
            block = ffn(f"ffn{idx}", _affine(rng, dims, hidden), RELU, _affine(rng, hidden, outs))
        elif kind == "attention":
            block = AttentionLayer(name=f"att{idx}", heads=(_head(rng, "h", dims, outs),))
        else:
            heads = (_head(rng, "h1", dims, ("s1",)), _head(rng, "h2", dims, ("s2",)))
            block = AttentionLayer(
                name=f"att{idx}", heads=heads, output=_affine(rng, ("s1", "s2"), outs)
            )
        layers.append(Sublayer(block=block, residual=rng.random() < 0.8))
    readout = classifier(
        {d: _small(rng) for d in dims}, position=rng.choice((0, -1)), bias=_small(rng)
    )
    net = Network(
        name=f"random-{seed}", dims=dims, embedding=emb, layers=tuple(layers), readout=readout
    )
    words = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 4))) for _ in range(3)]
    return net, words


def _interval_or_none(net: Network, word: str) -> Trace[Any] | None:
    """The interval trace, or None where it honestly reports a sign it cannot decide (an exact tie
    between values that are not binary fractions, e.g. two hardmax scores of 1/3)."""
    try:
        return interval.run(net, word)
    except UndecidedSignError:
        return None


@pytest.mark.parametrize("seed", SEEDS)
def test_exact_and_sympy_agree_and_the_interval_encloses_exact_on_a_random_network(
    seed: int,
    sympy_agrees: Callable[[Trace[Fraction], Trace[Any]], None],
    interval_encloses: Callable[[Trace[Fraction], Trace[Any]], None],
) -> None:
    net, words = random_network(seed)
    for word in words:
        te = exact.run(net, word)
        sympy_agrees(te, sympy_interp.run(net, word))
        ti = _interval_or_none(net, word)
        if ti is not None:
            interval_encloses(te, ti)


def test_the_interval_interpreter_decides_nearly_every_random_case() -> None:
    cases = [
        (net, word) for seed in SEEDS for net, words in [random_network(seed)] for word in words
    ]
    undecided = sum(_interval_or_none(net, word) is None for net, word in cases)
    assert undecided <= len(cases) // 10


def test_the_random_networks_exercise_every_block_kind_and_field_value() -> None:
    seen: Counter[str] = Counter()
    accepted: set[bool | None] = set()
    for seed in SEEDS:
        net, words = random_network(seed)
        for sub in net.layers:
            block = sub.block
            seen["residual" if sub.residual else "no residual"] += 1
            if isinstance(block, AttentionLayer):
                seen["output map" if block.output is not None else "single head"] += 1
                for h in block.heads:
                    seen[type(h.normalizer).__name__] += 1
                    seen[h.mask] += 1
                    seen[h.scoring] += 1
                    if isinstance(h.normalizer, Hardmax):
                        seen[h.normalizer.tie] += 1
            else:
                seen["ffn"] += 1
        accepted |= {exact.run(net, word).accepted for word in words}
    expected = {"residual", "no residual", "output map", "single head", "Softmax", "Hardmax", "ffn"}
    assert expected | set(MASKS) | set(SCORINGS) | set(TIE_RULES) <= set(seen)
    assert accepted == {True, False}


def test_the_random_networks_are_reproducible_from_their_seed() -> None:
    from netproof.symbolic import pretty

    first, words = random_network(7)
    again, words_again = random_network(7)
    assert pretty(first) == pretty(again) and words == words_again
    assert pretty(random_network(8)[0]) != pretty(first)


@pytest.mark.parametrize("value", [Fraction(1, 3), Fraction(-2), Fraction(-7, 10)])
def test_the_enclosure_check_reads_interval_endpoints_exactly(
    interval_endpoints: Callable[[Any], tuple[Fraction, Fraction]], value: Fraction
) -> None:
    old = iv.dps
    try:
        iv.dps = 60
        x = iv.mpf(value.numerator) / iv.mpf(value.denominator)
    finally:
        iv.dps = old
    lo, hi = interval_endpoints(x)
    assert lo <= value <= hi
    assert hi - lo < Fraction(1, 10**50)
    assert not lo <= value + Fraction(1, 10**40) <= hi
