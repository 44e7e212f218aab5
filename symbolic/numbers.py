"""Exact numbers for the IR: everything becomes a :class:`fractions.Fraction`.

>>> as_fraction(3)
Fraction(3, 1)
>>> as_fraction("-1/2")
Fraction(-1, 2)
>>> as_fraction(0.5)
Traceback (most recent call last):
  ...
netproof.symbolic.errors.InexactNumberError: weight=0.5 is a float; the IR is exact. Write Fraction(1, 2) or the string '1/2' instead.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Rational

from .errors import InexactNumberError

Number = int | Fraction | str


def as_fraction(value: object, what: str = "weight") -> Fraction:
    """Convert an int, a Fraction or a ``"p/q"`` string to a Fraction; refuse floats and the rest."""
    if isinstance(value, bool):
        raise InexactNumberError(
            f"{what}={value!r} is a bool; write the number 0 or 1 (as int or Fraction) instead."
        )
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        hint = Fraction(value).limit_denominator(10**6)
        raise InexactNumberError(
            f"{what}={value!r} is a float; the IR is exact. "
            f"Write Fraction({hint.numerator}, {hint.denominator}) or the string '{hint}' instead."
        )
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, str):
        text = value.strip()
        if "." in text or "e" in text.lower():
            raise InexactNumberError(
                f"{what}={value!r} is a decimal string; the IR takes exact rationals like '1/10'."
            )
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError) as exc:
            raise InexactNumberError(
                f"{what}={value!r} is not a rational number; write an int or 'p/q'."
            ) from exc
    raise InexactNumberError(
        f"{what}={value!r} has type {type(value).__name__}; the IR takes int, Fraction or 'p/q'."
    )
