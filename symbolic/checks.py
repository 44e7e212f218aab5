"""The field checks every IR dataclass runs in ``__post_init__``: exact numbers, names, choices.

Owns :func:`check_fraction`, :func:`check_choice` and :func:`check_names`, shared by the blocks
(:mod:`netproof.symbolic.blocks`), the whole networks (:mod:`netproof.symbolic.ir`), the recurrent
networks (:mod:`netproof.symbolic.recurrent_ir`) and the validation of a network's parts
(:mod:`netproof.symbolic.validate`). It sits below all of them: it imports only
:mod:`netproof.symbolic.errors` and :mod:`netproof.symbolic.numbers`.

>>> from fractions import Fraction
>>> check_fraction(Fraction(1, 2), "bias['x']")
>>> check_fraction(0.5, "bias['x']")
Traceback (most recent call last):
  ...
netproof.symbolic.errors.InexactNumberError: bias['x']=0.5 is a float; the IR is exact. Write Fraction(1, 2) or the string '1/2' instead.
"""

from __future__ import annotations

from fractions import Fraction

from .errors import InexactNumberError, NetworkValidationError
from .numbers import as_fraction


def check_fraction(value: object, where: str) -> None:
    """Raise :class:`~netproof.symbolic.errors.InexactNumberError` unless ``value`` is a
    :class:`~fractions.Fraction`; the message names ``where`` and the fix (an int: wrap it, or build
    the block with :mod:`netproof.symbolic.builders`; a float or a string: the exact spelling)."""
    if isinstance(value, Fraction):
        return
    if isinstance(value, int) and not isinstance(value, bool):
        raise InexactNumberError(
            f"{where}={value!r} is an int; IR fields hold Fractions. Write Fraction({value}) "
            "or build the block with symbolic.builders (which converts ints and 'p/q' strings)."
        )
    as_fraction(value, where)  # raises a message with the fix (floats, strings, ...)
    raise InexactNumberError(f"{where}={value!r} must be a Fraction")


def check_choice(value: str, allowed: tuple[str, ...], where: str) -> None:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` unless ``value`` is one of
    ``allowed`` (a field whose values are a closed set of names: a mask, a tie rule, ...)."""
    if value not in allowed:
        raise NetworkValidationError(f"{where}={value!r} is not one of {', '.join(allowed)}")


def check_names(names: tuple[str, ...], where: str) -> None:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` unless ``names`` is a tuple
    of dim names: non-empty strings without whitespace, none repeated."""
    if not isinstance(names, tuple):
        raise NetworkValidationError(
            f"{where} must be a tuple of names, got {type(names).__name__}"
        )
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise NetworkValidationError(
                f"{where}: dim name {name!r} must be a non-empty string without spaces"
            )
        if name in seen:
            raise NetworkValidationError(f"{where}: dim name {name!r} appears twice")
        seen.add(name)
