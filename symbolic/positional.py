"""Positional features: named exact functions of the position ``i`` and the length ``n``.

A network stores only the *name* of a feature (so it prints, fingerprints and can be encoded in
z3); this registry gives each name its exact meaning. ``n`` is the number of positions the network
sees (special tokens included) and ``i`` runs over ``index_base .. index_base + n - 1``.

>>> feature("i/n")(2, 4)
Fraction(1, 2)
>>> feature("cos(iπ)")(3, 10)
Fraction(-1, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from .errors import NetworkValidationError, SymbolicError


def _inv(i: int, what: str) -> Fraction:
    if i == 0:
        raise SymbolicError(
            f"positional feature {what!r} is undefined at i=0; use it only with index_base=1 "
            "or pick a feature defined at position 0"
        )
    return Fraction(1, i)


@dataclass(frozen=True, slots=True)
class FeatureDef:
    """One registered feature: its canonical name, exact function and a one-line meaning."""

    name: str
    fn: Callable[[int, int], Fraction]
    meaning: str

    def __call__(self, i: int, n: int) -> Fraction:
        return self.fn(i, n)


_REGISTRY: dict[str, FeatureDef] = {}


def register(name: str, fn: Callable[[int, int], Fraction], meaning: str) -> None:
    """Add a feature to the registry (names are unique: a second registration is an error)."""
    if name in _REGISTRY:
        raise NetworkValidationError(f"positional feature {name!r} is already registered")
    _REGISTRY[name] = FeatureDef(name, fn, meaning)


def feature(name: str) -> FeatureDef:
    """Look a feature up by name, with the list of known names on failure."""
    try:
        return _REGISTRY[name]
    except KeyError:
        # the indicator I[i=k] of any position k (a learned positional table, one feature per row)
        if (
            name.startswith("I[i=")
            and name.endswith("]")
            and name[4:-1].isdigit()
            and str(int(name[4:-1])) == name[4:-1]
        ):
            k = int(name[4:-1])
            return FeatureDef(
                name, lambda i, n: Fraction(int(i == k)), f"indicator of position {k}"
            )
        known = ", ".join(sorted(_REGISTRY)) + ", I[i=k] for any position k"
        raise NetworkValidationError(
            f"unknown positional feature {name!r}; known features: {known}"
        ) from None


def known_features() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


register("1", lambda i, n: Fraction(1), "the constant 1")
register("i", lambda i, n: Fraction(i), "the position i")
register("n", lambda i, n: Fraction(n), "the length n")
register(
    "i/n", lambda i, n: Fraction(i, n), "position over length (Chiang & Cholak dim 4; Yao p_i)"
)
register("1-i/n", lambda i, n: 1 - Fraction(i, n), "one minus i/n")
register("1/n", lambda i, n: Fraction(1, n), "one over the length")
register("1/i", lambda i, n: _inv(i, "1/i"), "one over the position (i >= 1)")
register("1/i^2", lambda i, n: _inv(i, "1/i^2") ** 2, "one over the squared position (i >= 1)")
register("cos(iπ)", lambda i, n: Fraction((-1) ** i), "(-1)^i (Chiang & Cholak dim 5)")
register("I[i=0]", lambda i, n: Fraction(int(i == 0)), "indicator of position 0")
register("I[i=1]", lambda i, n: Fraction(int(i == 1)), "indicator of position 1")
register(
    "I[i=n-1]", lambda i, n: Fraction(int(i == n - 1)), "indicator of the last position (0-based)"
)
register("1/2^i", lambda i, n: Fraction(1, 2**i), "one over 2 to the i")
register(
    "i+1",
    lambda i, n: Fraction(i + 1),
    "the position plus one (Bhattamishra et al.'s decoder pos(t+1))",
)
