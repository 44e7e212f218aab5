"""compile_ffn's ``lower`` bounds: a residual dim known to hold x ≥ b is carried through the ReLU
steps as the one unit relu(x − b) instead of relu(x) and relu(−x); without bounds the FFN is the
same as before, and with them it computes the same values wherever the bounds hold."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from netproof.symbolic import Activation, Affine
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.gates import AND, NOT, OR, compile_ffn, lin, relu, var


def evaluate(ffn, values: dict[str, Fraction]) -> dict[str, Fraction]:  # type: ignore[no-untyped-def]
    """The FFN's outputs on one residual row (a plain evaluator: Affine and ReLU steps)."""
    state = dict(values)
    for step in ffn.steps:
        if isinstance(step, Affine):
            state = {
                o: sum((w * state[i] for i, w in zip(step.inputs, row, strict=True)), Fraction(0))
                + b
                for o, row, b in zip(step.outputs, step.weights, step.bias, strict=True)
            }
        else:
            assert isinstance(step, Activation) and step.kind == "relu"
            state = {k: max(v, Fraction(0)) for k, v in state.items()}
    return state


def deep_outputs() -> dict[str, object]:
    """Three ReLU steps; ``c`` (a count-like value, may be negative below its bound) and ``p``
    (0/1) are read by the last map only, so they are carried through every step."""
    gate = AND(OR(var("p"), NOT(var("q"))), NOT(AND(var("p"), var("q"))))
    return {
        "y": lin((var("c"), 1), (gate, 2)),
        "z": lin((var("p"), 3), (relu(lin((gate, 1), (var("q"), 1))), 1)),
    }


def units(ffn) -> list[int]:  # type: ignore[no-untyped-def]
    return [len(step.outputs) for step in ffn.steps if isinstance(step, Affine)]


def test_a_bounded_dim_is_carried_as_one_unit_and_the_values_are_unchanged_where_the_bounds_hold() -> (
    None
):
    plain = compile_ffn("f", deep_outputs())
    bounded = compile_ffn("f", deep_outputs(), lower={"c": Fraction(-3), "p": 0, "q": 0})
    assert sum(units(bounded)) < sum(units(plain))
    for p, q, c in product(
        (0, 1), (0, 1), (Fraction(-3), Fraction(-1, 2), Fraction(0), Fraction(7, 3))
    ):
        row = {"p": Fraction(p), "q": Fraction(q), "c": c}
        assert evaluate(bounded, row) == evaluate(plain, row)


def test_a_value_below_its_declared_bound_is_clipped_so_the_bound_is_a_real_precondition() -> None:
    bounded = compile_ffn("f", deep_outputs(), lower={"c": Fraction(-3)})
    plain = compile_ffn("f", deep_outputs())
    row = {"p": Fraction(1), "q": Fraction(0), "c": Fraction(-5)}
    assert evaluate(bounded, row)["y"] != evaluate(plain, row)["y"]


def test_without_bounds_the_ffn_is_the_one_compile_ffn_always_built() -> None:
    assert compile_ffn("f", deep_outputs()) == compile_ffn("f", deep_outputs(), lower={})
    ffn = compile_ffn("f", deep_outputs())
    assert any(o.startswith("L1:−") for o in ffn.steps[0].outputs)  # relu(−x) halves of the carries


def test_a_bound_that_is_not_a_number_is_refused_with_its_name() -> None:
    with pytest.raises((TypeError, NetworkValidationError), match=r"lower\['c'\]"):
        compile_ffn("f", deep_outputs(), lower={"c": 0.5})  # type: ignore[dict-item]
