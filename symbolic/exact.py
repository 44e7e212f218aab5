"""The exact interpreter: every value is a :class:`fractions.Fraction`.

It refuses networks whose values leave ℚ (a layer norm whose variance is not a rational square,
a softmax whose weights are not rational powers) with a message pointing to the sympy interpreter.

>>> from constructions.chiang2022 import parity_transformer
>>> trace = run(parity_transformer(), "0110")
>>> trace.accepted, trace.output
(False, Fraction(-3, 77))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from .errors import NotRationalError
from .evaluation import Trace, evaluate
from .ir import Network, Scale, Softmax

__all__ = ["FractionArithmetic", "run"]

_ZERO = Fraction(0)
_ONE = Fraction(1)


def _exact_sqrt(q: Fraction) -> Fraction | None:
    if q < 0:
        return None
    a, b = q.numerator, q.denominator
    ra, rb = math.isqrt(a), math.isqrt(b)
    if ra * ra == a and rb * rb == b:
        return Fraction(ra, rb)
    return None


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
    ) -> list[Fraction]:
        # weights ∝ exp(κ·s) with κ = coef·(1/√d)·(ln n)·(ln r or c); rational iff it is b^(a·s)
        # with b rational and every a·(s_j − s_max) an integer.
        coef = scale.coef
        if scale.sqrt_d is not None:
            root = _exact_sqrt(Fraction(scale.sqrt_d))
            if root is None:
                raise NotRationalError(
                    f"{where}: softmax with scale 1/√{scale.sqrt_d} is not rational; fold the √d "
                    "into the base or use the sympy interpreter (--backend sympy)"
                )
            coef = coef / root
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
        exps = [coef * s for s in scores]
        top = max(exps)
        weights: list[Fraction] = []
        for e in exps:
            diff = e - top
            if diff.denominator != 1:
                raise NotRationalError(
                    f"{where}: softmax exponent difference {diff} is not an integer, so "
                    f"{base}^({diff}) is not rational; use the sympy interpreter (--backend sympy)"
                )
            weights.append(base ** int(diff))
        mult = counts if counts is not None else [1] * len(weights)
        total = sum((c * w for c, w in zip(mult, weights, strict=True)), Fraction(0))
        return [w / total for w in weights]


def run(net: Network, word: str | Sequence[str]) -> Trace[Fraction]:
    """Evaluate ``net`` on ``word`` with exact rationals."""
    return evaluate(net, word, FractionArithmetic())
