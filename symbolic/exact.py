"""The exact interpreter: every value is a :class:`fractions.Fraction`.

It refuses networks whose values leave ℚ (a layer norm whose variance is not a rational square,
a softmax whose weights are not rational powers) with a message pointing to the sympy interpreter.

>>> from netproof.constructions.chiang2022 import parity_transformer
>>> trace = run(parity_transformer(), "0110")
>>> trace.accepted, trace.output
(False, Fraction(-3, 77))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .errors import NotRationalError
from .evaluation import Trace, evaluate
from .ir import Network, Scale, Softmax

__all__ = ["FractionArithmetic", "run"]

_ZERO = Fraction(0)
_ONE = Fraction(1)


def _iroot(n: int, k: int) -> int | None:
    """The exact k-th root of a non-negative int, or None."""
    if n < 2:
        return n
    lo, hi = 1, 1 << (n.bit_length() // k + 1)
    while lo <= hi:
        mid = (lo + hi) // 2
        p = mid**k
        if p == n:
            return mid
        if p < n:
            lo = mid + 1
        else:
            hi = mid - 1
    return None


def _rational_power(base: Fraction, e: Fraction) -> Fraction | None:
    """base^e for base > 0 when it is rational (base's numerator and denominator are perfect
    q-th powers, e = p/q in lowest terms), else None."""
    p, q = e.numerator, e.denominator
    if q == 1:
        return base**p
    num, den = _iroot(base.numerator, q), _iroot(base.denominator, q)
    if num is None or den is None:
        return None
    return Fraction(num, den) ** p


def _exact_sqrt(q: Fraction) -> Fraction | None:
    return None if q < 0 else _rational_power(q, Fraction(1, 2))


class FractionArithmetic:
    """Python rationals. Decisions are exact comparisons with 0."""

    name = "exact"

    def const(self, q: Fraction) -> Fraction:
        return q

    def add(self, a: Fraction, b: Fraction) -> Fraction:
        return a + b

    def sub(self, a: Fraction, b: Fraction) -> Fraction:
        return a - b

    def mul(self, a: Fraction, b: Fraction) -> Fraction:
        return a * b

    def div(self, a: Fraction, b: Fraction) -> Fraction:
        return a / b

    def sign(self, a: Fraction) -> int:
        return (a > 0) - (a < 0)

    def relu(self, a: Fraction) -> Fraction:
        return a if a > 0 else _ZERO

    def step(self, a: Fraction) -> Fraction:
        return _ONE if a > 0 else _ZERO

    def clip01(self, a: Fraction) -> Fraction:
        return _ZERO if a <= 0 else (_ONE if a >= 1 else a)

    def is_zero(self, a: Fraction) -> bool:
        return a == 0

    def key(self, a: Fraction) -> Fraction:
        return a

    def sqrt(self, a: Fraction, where: str) -> Fraction:
        root = _exact_sqrt(a)
        if root is None:
            raise NotRationalError(
                f"{where}: layer norm needs √({a}), which is not rational; "
                "use the sympy interpreter (--backend sympy) for this network"
            )
        return root

    def softmax(
        self,
        nz: Softmax,
        scale: Scale,
        scores: Sequence[Fraction],
        n: int,
        where: str,
        counts: Sequence[int] | None = None,
        bias: Sequence[Fraction] | None = None,
    ) -> list[Fraction]:
        # weights ∝ exp(κ·s) with κ = coef·(1/√d)·(ln n)·(ln r or c). They are computed exactly
        # when that is b^(a·s) with b rational and every b^(a·(s_j − s_max)) rational.
        coef = scale.coef
        if scale.sqrt_d is not None:
            root = _exact_sqrt(Fraction(scale.sqrt_d))
            if root is None:
                raise NotRationalError(
                    f"{where}: softmax with scale 1/√{scale.sqrt_d} is not rational; fold the √d "
                    "into the base or use the sympy interpreter (--backend sympy)"
                )
            coef = coef / root
        if scale.times_n:
            coef = coef * n
        if nz.r is not None and not scale.log_n:
            base = nz.r
        elif nz.c is not None and scale.log_n:
            base, coef = Fraction(n), nz.c * coef
        elif nz.r is not None:
            raise NotRationalError(
                f"{where}: softmax base {nz.r} with ln n scaling gives {nz.r}^(ln n·s), which is "
                "not rational; use base e^c (Softmax(c=...)) or the sympy interpreter"
            )
        else:
            raise NotRationalError(
                f"{where}: softmax base e^{nz.c} is transcendental; use Softmax(r=...) "
                "(c = ln r) or the sympy interpreter (--backend sympy)"
            )
        if bias is not None and any(b != 0 for b in bias) and scale.log_n:
            raise NotRationalError(
                f"{where}: softmax with ln n scaling and a relative bias gives n^(c·s)·e^(c·β), which is "
                "not rational; use the sympy interpreter (--backend sympy)"
            )
        exps = [coef * s for s in scores]
        if bias is not None:
            exps = [e + b for e, b in zip(exps, bias, strict=True)]
        top = max(exps)
        weights: list[Fraction] = []
        for e in exps:
            diff = e - top
            w = _rational_power(base, diff)
            if w is None:
                raise NotRationalError(
                    f"{where}: softmax weight {base}^({diff}) is not rational; "
                    "use the sympy interpreter (--backend sympy)"
                )
            weights.append(w)
        mult = counts if counts is not None else [1] * len(weights)
        total = sum((c * w for c, w in zip(mult, weights, strict=True)), Fraction(0))
        return [w / total for w in weights]


def run(net: Network, word: str | Sequence[str], *, length: int | None = None) -> Trace[Fraction]:
    """Evaluate ``net`` on ``word`` with exact rationals."""
    return evaluate(net, word, FractionArithmetic(), length=length)
