"""Positional features: named exact functions of the position i and the length n."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from netproof.symbolic import NetworkValidationError, SymbolicError
from netproof.symbolic.positional import feature, known_features, register

F = Fraction

# (name, i, n, value) — hand-computed, a few points per feature.
CASES: list[tuple[str, int, int, Fraction]] = [
    ("1", 0, 1, F(1)),
    ("1", 5, 9, F(1)),
    ("i", 0, 4, F(0)),
    ("i", 3, 4, F(3)),
    ("i+1", 0, 4, F(1)),
    ("i+1", 6, 2, F(7)),
    ("n", 0, 4, F(4)),
    ("n", 2, 7, F(7)),
    ("i/n", 0, 4, F(0)),
    ("i/n", 2, 4, F(1, 2)),
    ("i/n", 3, 7, F(3, 7)),
    ("1-i/n", 0, 4, F(1)),
    ("1-i/n", 3, 4, F(1, 4)),
    ("1-i/n", 2, 6, F(2, 3)),
    ("1/n", 0, 1, F(1)),
    ("1/n", 4, 6, F(1, 6)),
    ("1/i", 1, 5, F(1)),
    ("1/i", 4, 5, F(1, 4)),
    ("1/i^2", 1, 5, F(1)),
    ("1/i^2", 3, 5, F(1, 9)),
    ("cos(iπ)", 0, 3, F(1)),
    ("cos(iπ)", 1, 3, F(-1)),
    ("cos(iπ)", 6, 10, F(1)),
    ("cos(iπ)", 7, 10, F(-1)),
    ("I[i=0]", 0, 3, F(1)),
    ("I[i=0]", 1, 3, F(0)),
    ("I[i=1]", 0, 3, F(0)),
    ("I[i=1]", 1, 3, F(1)),
    ("I[i=1]", 2, 3, F(0)),
    ("I[i=n-1]", 2, 3, F(1)),
    ("I[i=n-1]", 1, 3, F(0)),
    ("I[i=n-1]", 0, 1, F(1)),
    ("1/2^i", 0, 4, F(1)),
    ("1/2^i", 1, 4, F(1, 2)),
    ("1/2^i", 5, 8, F(1, 32)),
]


@pytest.mark.parametrize(
    ("name", "i", "n", "value"), CASES, ids=[f"{c[0]}@i={c[1]},n={c[2]}" for c in CASES]
)
def test_every_registered_feature_has_its_exact_value(
    name: str, i: int, n: int, value: Fraction
) -> None:
    result = feature(name)(i, n)
    assert result == value
    assert type(result) is Fraction


def test_the_value_table_covers_every_registered_feature() -> None:
    assert {c[0] for c in CASES} == set(known_features())


def test_known_features_are_sorted_and_each_has_a_meaning() -> None:
    names = known_features()
    assert list(names) == sorted(names)
    assert all(feature(name).meaning and feature(name).name == name for name in names)


@pytest.mark.parametrize("name", ["1/i", "1/i^2"])
def test_one_over_i_at_position_zero_raises_and_suggests_index_base_one(name: str) -> None:
    message = f"positional feature '{name}' is undefined at i=0; use it only with index_base=1"
    with pytest.raises(SymbolicError, match=re.escape(message)):
        feature(name)(0, 3)


def test_an_unknown_feature_lists_the_known_ones() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"unknown positional feature 'sin\(i\)'; known features: 1, 1-i/n, ",
    ):
        feature("sin(i)")


def test_registering_a_name_twice_is_refused_and_keeps_the_first_meaning() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"positional feature 'i/n' is already registered"
    ):
        register("i/n", lambda i, n: Fraction(0), "an impostor")
    assert feature("i/n")(1, 2) == Fraction(1, 2)
