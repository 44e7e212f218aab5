"""Exact values a person can read: an irrational value as a certified decimal with its error bound.

:func:`certified_decimal` turns the enclosure the interval interpreter computed
(:mod:`netproof.symbolic.interval`, outward rounding) into ``d ± e``: a decimal ``d`` with
``digits`` significant digits and a bound ``e`` (one digit, rounded up) such that the exact value
lies in ``[d − e, d + e]``. ``netproof run`` prints it in place of a sympy expression that can run
to thousands of characters (the exact form stays behind ``--exact-form`` and in the JSON).

May import mpmath (a dependency of sympy) inside functions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["certified_decimal"]


def certified_decimal(enclosure: Any, digits: int = 15) -> str:
    """``enclosure`` (an ``mpmath.iv.mpf`` holding the exact value) as ``"d ± e"``: every number
    in the enclosure, the exact value with it, lies within ``e`` of ``d``."""
    import mpmath

    with mpmath.workprec(max(mpmath.mp.prec, 4 * digits + 64)):
        lo, hi = mpmath.mpf(enclosure.a.a), mpmath.mpf(enclosure.b.b)
        text = mpmath.nstr((lo + hi) / 2, digits, strip_zeros=False, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)
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
