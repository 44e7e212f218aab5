"""Exact values a person can read: an irrational value as a certified decimal with its error bound.

:func:`certified_decimal` turns the enclosure the interval interpreter computed
(:mod:`netproof.symbolic.interval`, outward rounding) into ``d ± e``: a decimal ``d`` with
``digits`` significant digits and a bound ``e`` (one digit, rounded up) such that the exact value
lies in ``[d − e, d + e]``. ``netproof run`` prints it in place of a sympy expression that can run
to thousands of characters (the exact form stays behind ``--exact-form`` and in the JSON).

:func:`certified_text` is the short form for traces (``run --trace`` passes it to
:func:`netproof.symbolic.display.format_trace`): a rational as ``p/q``, an irrational sympy value
or an interval as ``≈d`` where ``d`` is the exact value correctly rounded to the digits printed,
every one of them certified by a rigorous enclosure (:func:`certified_rounding`); a value whose
enclosure holds 0 prints as ``0 ± e``.

>>> from fractions import Fraction
>>> import sympy
>>> certified_text(Fraction(3, 8)), certified_text(sympy.sqrt(2)), certified_text(-sympy.exp(1) / 1000)
('3/8', '≈1.41421', '≈-0.00271828')

May import the exhaustive checker's enclosures (:func:`netproof.verifier.exhaustive.job.enclose`)
and mpmath (a dependency of sympy) inside functions.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

__all__ = ["certified_decimal", "certified_rounding", "certified_text"]


def certified_decimal(enclosure: Any, digits: int = 15) -> str:
    """``enclosure`` (an ``mpmath.iv.mpf`` holding the exact value) as ``"d ± e"``: every number
    in the enclosure, the exact value with it, lies within ``e`` of ``d``."""
    import mpmath

    with mpmath.workprec(max(mpmath.mp.prec, 4 * digits + 64)):
        lo, hi = mpmath.mpf(enclosure.a.a), mpmath.mpf(enclosure.b.b)
        text = mpmath.nstr(
            (lo + hi) / 2, digits, strip_zeros=False, min_fixed=-mpmath.inf, max_fixed=mpmath.inf
        )
        d = mpmath.iv.mpf(text)  # encloses the decimal d exactly as printed
        # the distance from d to the farther end of the enclosure, bounded above (outward rounding)
        e = max(mpmath.mpf((d - mpmath.iv.mpf(lo)).b), mpmath.mpf((mpmath.iv.mpf(hi) - d).b))
        if e == 0:
            return f"{text} ± 0"
        exp = int(mpmath.floor(mpmath.log10(e)))
        lead = int(mpmath.ceil(e / mpmath.mpf(10) ** exp))
        if lead == 10:
            lead, exp = 1, exp + 1
        return f"{text} ± {lead}e{exp}"


def _fraction(x: Any) -> Fraction:
    """An mpmath ``mpf`` as the exact Fraction it holds."""
    import mpmath

    y = mpmath.mpf(x)
    man, exp = y.man_exp  # |y| = man·2^exp
    q = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -q if y < 0 else q


def _round(x: Fraction, digits: int) -> Decimal:
    """``x`` (not 0) rounded to ``digits`` significant decimal digits (half to even), as a Decimal
    that keeps its trailing zeros (``1.00000``)."""
    e = len(str(abs(x.numerator))) - len(str(x.denominator))  # 10^(e-1) <= |x| < 10^(e+1)
    if abs(x) < Fraction(10) ** e:
        e -= 1
    q = round(x / Fraction(10) ** (e - digits + 1))
    if len(str(abs(q))) > digits:  # rounded up to the next power of 10
        q, e = q // 10, e + 1
    return Decimal(q).scaleb(e - digits + 1)


def certified_rounding(enclosure: Any, digits: int = 6) -> str:
    """The value inside ``enclosure`` (an ``mpmath.iv.mpf``) as a decimal of at most ``digits``
    significant digits, each one certified: both ends of the enclosure round to it, so the exact
    value (between them; rounding is monotone) rounds to it too. Fewer digits where the enclosure
    is wide; ``0 ± e`` where it holds 0 (e bounds |value|, one digit rounded up); a point
    enclosure with a short exact form (``1``, ``3/8``) as that form."""
    lo, hi = _fraction(enclosure.a.a), _fraction(enclosure.b.b)
    if lo == hi and lo.denominator <= 1024:  # a point with a short exact form: the value itself
        return str(lo)
    if lo <= 0 <= hi:
        if lo == hi == 0:
            return "0"
        bound = max(-lo, hi)
        e = len(str(bound.numerator)) - len(str(bound.denominator)) - 1
        while Fraction(10) ** (e + 1) < bound:
            e += 1
        while Fraction(10) ** e >= bound:
            e -= 1
        lead = -(-bound // Fraction(10) ** e)  # ceil: 1..10
        return f"0 ± {lead}e{e}" if lead < 10 else f"0 ± 1e{e + 1}"
    for k in range(digits, 0, -1):
        d = _round(lo, k)
        if d == _round(hi, k):
            exponent = d.as_tuple().exponent  # an int: d is finite
            fixed = isinstance(exponent, int) and exponent <= 0 and d.adjusted() >= -5
            # (no zeros that are not digits)
            text = format(d, "f") if fixed else format(d, f".{k - 1}e")
            return f"≈{text}"
    return certified_decimal(enclosure, 2)


def certified_text(value: Any, digits: int = 6) -> str:
    """A trace value for a person: ``·`` for an undefined entry, ``p/q`` for a rational, and for
    an irrational sympy value or an interval :func:`certified_rounding` of its rigorous enclosure."""
    if value is None:
        return "·"
    if isinstance(value, (Fraction, int)):
        return str(value)
    if getattr(value, "is_Rational", False):
        return str(value)
    from netproof.symbolic import SymbolicError
    from netproof.symbolic.display import value_text
    from netproof.verifier.exhaustive.job import enclose

    try:
        enclosure = enclose(value)
    except (
        SymbolicError,
        TypeError,
    ):  # no interval rule (π, ...): the interpreters never make such a value
        return value_text(value, digits)
    return certified_rounding(enclosure, digits)
