"""Exact means exact: floats are refused everywhere, and the exact interpreter returns Fractions only."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
import sympy

from netproof.constructions.chiang2022 import (
    first_transformer,
    parity_transformer,
    rumelhart_parity,
)
from netproof.symbolic import (
    Affine,
    FlatEmbedding,
    InexactNumberError,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Softmax,
    TokenEmbedding,
    affine,
    classifier,
    constant,
    exact,
    layernorm,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.evaluation import Trace

FLOAT_PLACES: dict[str, Callable[[], object]] = {
    "affine weight": lambda: affine({"y": {"x": 0.5}}),
    "affine bias": lambda: affine({"y": {"x": 1}}, bias={"y": 0.25}),
    "constant": lambda: constant({"q": 1.0}),
    "classifier bias": lambda: classifier("x", bias=-0.5),
    "classifier weight": lambda: classifier({"x": 2.5}),
    "embedding value": lambda: token_embedding(("a",), {"a": {"x": 0.5}}),
    "positional coefficient": lambda: token_embedding(
        ("a",), {"a": {}}, positional={"x": ("i/n", 0.5)}
    ),
    "layer norm eps (builder)": lambda: layernorm(1e-5),
    "layer norm eps": lambda: LayerNorm(eps=1e-5),  # type: ignore[arg-type]
    "softmax r": lambda: Softmax(r=2.0),  # type: ignore[arg-type]
    "softmax c": lambda: Softmax(c=1.5),  # type: ignore[arg-type]
    "scale coef": lambda: Scale(coef=0.5),  # type: ignore[arg-type]
    "next-symbols threshold": lambda: NextSymbols(scores=(("a", "x"),), threshold=0.5),  # type: ignore[arg-type]
    "flat embedding value": lambda: FlatEmbedding(alphabet=("0",), length=1, values=(("0", 0.0),)),  # type: ignore[arg-type]
    "Affine weight": lambda: Affine(
        inputs=("x",), outputs=("y",), weights=((0.5,),), bias=(Fraction(0),)
    ),  # type: ignore[arg-type]
    "Affine bias": lambda: Affine(
        inputs=("x",), outputs=("y",), weights=((Fraction(1),),), bias=(0.5,)
    ),  # type: ignore[arg-type]
    "TokenEmbedding value": lambda: TokenEmbedding(alphabet=("a",), table=(("a", (("x", 0.5),)),)),  # type: ignore[arg-type]
    "TokenEmbedding positional": lambda: TokenEmbedding(
        alphabet=("a",),
        table=(("a", ()),),
        positional=(("x", "i", 0.5),),  # type: ignore[arg-type]
    ),
}


@pytest.mark.parametrize("build", FLOAT_PLACES.values(), ids=FLOAT_PLACES.keys())
def test_a_float_anywhere_in_the_ir_is_refused_with_the_fix(build: Callable[[], object]) -> None:
    with pytest.raises(
        InexactNumberError,
        match=r"is a float; the IR is exact\. Write Fraction\(-?\d+, \d+\) or the string",
    ):
        build()


def _values(trace: Trace[Any]) -> list[object]:
    """Every number a trace holds: residual values, attention weights, the output."""
    values: list[object] = [v for state in trace.states for row in state.rows for v in row]
    values += [w for s in trace.selections for w in s.weights]
    if trace.output is not None:
        values.append(trace.output)
    return values


WORDS = ["", "0", "1", "01", "11", "0110", "10101"]


@pytest.mark.parametrize("word", WORDS)
def test_the_exact_interpreter_returns_only_fractions_on_the_parity_network(word: str) -> None:
    trace = exact.run(parity_transformer(), word)
    values = _values(trace)
    assert len(values) > len(trace.states) * len(trace.network.dims)
    assert {type(v) for v in values} == {Fraction}


@pytest.mark.parametrize(
    "build",
    [
        lambda: first_transformer(),
        lambda: first_transformer("1", log_n=True),
        lambda: rumelhart_parity(4),
    ],
    ids=["first", "first-logn", "rumelhart"],
)
def test_the_exact_interpreter_returns_only_fractions_on_the_other_paper_networks(
    build: Callable[[], Network],
) -> None:
    net = build()
    word = "1011" if net.name == "rumelhart" else "101"
    assert {type(v) for v in _values(exact.run(net, word))} == {Fraction}


@pytest.mark.parametrize("word", WORDS)
def test_the_sympy_interpreter_returns_only_exact_rationals_on_the_parity_network(
    word: str,
) -> None:
    values = _values(sympy_interp.run(parity_transformer(), word))
    assert all(isinstance(v, sympy.Rational) for v in values)
    assert not any(isinstance(v, (float, sympy.Float)) for v in values)


def test_the_parity_network_counts_ones_exactly_at_every_position() -> None:
    # after the counting head every token holds k/n and 1/n (n = |w| + 1 with CLS)
    trace = exact.run(parity_transformer(), "0110")
    assert [trace.value("count", t, "k/n") for t in range(5)] == [Fraction(2, 5)] * 5
    assert [trace.value("count", t, "1/n") for t in range(5)] == [Fraction(1, 5)] * 5
