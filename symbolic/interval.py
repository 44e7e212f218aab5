"""Rigorous interval evaluation (mpmath's ``iv`` context, outward rounding).

Used where values are irrational (layer norm with √, softmax with irrational exponents) and a
decision is all that is needed: every value is an interval that is *guaranteed* to contain the
exact value, so a decision taken from an interval that excludes 0 is a proof. ReLU and σ need no
decision (they are applied to the interval); hardmax and the accept bit do, and an interval that
straddles 0 raises :class:`~netproof.symbolic.evaluation.UndecidedSignError` (a verifier reports Unknown,
never a guess).

>>> from netproof.constructions.chiang2022 import doubled, parity_transformer
>>> run(doubled(parity_transformer()), "011").accepted
False
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from mpmath import iv, mpf
from mpmath.libmp import fone, fzero, mpf_lt, mpf_sign

from .evaluation import Trace, UndecidedSignError, evaluate
from .ir import Network, Scale, Softmax

__all__ = ["IntervalArithmetic", "run", "DEFAULT_DIGITS"]

DEFAULT_DIGITS = 60

Interval = Any  # mpmath.iv.mpf


class IntervalArithmetic:
    """mpmath intervals at ``digits`` decimal digits."""

    name = "interval"

    def __init__(self, digits: int = DEFAULT_DIGITS) -> None:
        self.digits = digits
        self.ctx = iv
        self.ctx.dps = digits
        self._zero = self.ctx.mpf(0)
        self._one = self.ctx.mpf(1)

    def const(self, q: Fraction) -> Interval:
        if q.denominator == 1:
            return self.ctx.mpf(q.numerator)
        return self.ctx.mpf(q.numerator) / self.ctx.mpf(q.denominator)

    def add(self, a: Interval, b: Interval) -> Interval:
        return a + b

    def sub(self, a: Interval, b: Interval) -> Interval:
        return a - b

    def mul(self, a: Interval, b: Interval) -> Interval:
        return a * b

    def div(self, a: Interval, b: Interval) -> Interval:
        if b.a <= 0 <= b.b:
            raise UndecidedSignError(f"division by an interval {b} that contains 0")
        return a / b

    def sign(self, a: Interval) -> int:
        lo, hi = a._mpi_
        if mpf_sign(lo) > 0:
            return 1
        if mpf_sign(hi) < 0:
            return -1
        if lo == fzero and hi == fzero:
            return 0
        raise UndecidedSignError(
            f"the interval {a} contains 0 at {self.digits} digits, so its sign is not decided"
        )

    def relu(self, a: Interval) -> Interval:
        lo, hi = a._mpi_
        if mpf_sign(lo) >= 0:
            return a
        return self.ctx.make_mpf((fzero, hi if mpf_sign(hi) > 0 else fzero))

    def step(self, a: Interval) -> Interval:
        return self._one if self.sign(a) > 0 else self._zero

    def clip01(self, a: Interval) -> Interval:
        lo, hi = a._mpi_
        return self.ctx.make_mpf((_clip(lo), _clip(hi)))

    def is_zero(self, a: Interval) -> bool:
        lo, hi = a._mpi_
        return bool(lo == fzero and hi == fzero)

    def key(self, a: Interval) -> object:
        # Attention groups keys that are equal as numbers. Two intervals with the same ends can
        # enclose different reals, so only a point interval is a key that can be shared; any
        # other gets a key of its own (and is compared score by score, by proved signs).
        lo, hi = a._mpi_
        return a._mpi_ if lo == hi else object()

    def sqrt(self, a: Interval, where: str) -> Interval:
        if a.b < 0:
            raise UndecidedSignError(f"{where}: √ of a negative interval {a}")
        if a.a < 0:
            a = self.ctx.mpf([mpf(0), a.b])
        return self.ctx.sqrt(a)

    def softmax(
        self,
        nz: Softmax,
        scale: Scale,
        scores: Sequence[Interval],
        n: int,
        where: str,
        counts: Sequence[int] | None = None,
        bias: Sequence[Fraction] | None = None,
    ) -> list[Interval]:
        kappa = self.const(scale.coef)
        if scale.sqrt_d is not None:
            kappa = kappa / self.ctx.sqrt(self.ctx.mpf(scale.sqrt_d))
        if scale.times_n:
            kappa = kappa * n
        if scale.log_n:
            kappa = kappa * self.ctx.log(self.ctx.mpf(n))
        if nz.r is not None:
            unit = self.ctx.log(self.const(nz.r))
        else:
            assert nz.c is not None  # Softmax validates: exactly one of r, c
            unit = self.const(nz.c)
        kappa = kappa * unit
        # Shift by the largest lower end to keep the exponentials in range (exact in ℝ).
        exps = [kappa * s for s in scores]
        if bias is not None:  # base^(scale·s + β) = e^(unit·(scale·s + β))
            exps = [e + unit * self.const(b) for e, b in zip(exps, bias, strict=True)]
        shift = max(e.a for e in exps)
        raw = [self.ctx.exp(e - shift) for e in exps]
        mult = counts if counts is not None else [1] * len(raw)
        total = raw[0] * mult[0]
        for c, w in zip(mult[1:], raw[1:], strict=True):
            total = total + w * c
        return [w / total for w in raw]


def _clip(x: Any) -> Any:
    if mpf_sign(x) <= 0:
        return fzero
    if mpf_lt(fone, x):
        return fone
    return x


def run(net: Network, word: str | Sequence[str], *, length: int | None = None, digits: int = DEFAULT_DIGITS) -> Trace[Interval]:
    """Evaluate ``net`` on ``word`` with rigorous intervals at ``digits`` digits."""
    return evaluate(net, word, IntervalArithmetic(digits), length=length)
