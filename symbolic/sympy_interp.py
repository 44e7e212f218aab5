"""The sympy interpreter: exact algebraic and transcendental values (√ in layer norm, e^c in
softmax), optionally with the softmax bases kept as symbols for closed-form identities.

Decisions (ReLU phases, argmax, accept) need the sign of an exact expression. A rational is
compared directly. Otherwise the sign comes from a rigorous interval enclosure of the expression
(mpmath ``iv``, outward rounding, evaluated once per node of the expression DAG); an enclosure
that straddles 0 is simplified and must be exactly 0, or the evaluation stops with an error. With
symbolic bases, a decision that depends on the symbol raises :class:`UndecidableSignError`
(the readout's accept bit is then ``None``).

>>> import sympy
>>> from netproof.constructions.chiang2022 import parity_transformer
>>> t = run(parity_transformer(), "1", symbolic=True)   # n = 2: s = (2/n²)·tanh c
>>> sympy.factor(t.output), t.accepted
((E - 1)*(E + 1)/(2*(E**2 + 1)), None)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import sympy
from mpmath import iv

from .evaluation import Trace, UndecidedSignError, evaluate
from .ir import Network, Scale, Softmax

__all__ = ["SympyArithmetic", "UndecidableSignError", "run", "to_sympy"]

_DIGITS = 40
_SIMPLIFY_OPS = 400


class UndecidableSignError(UndecidedSignError):
    """The sign of a value could not be decided exactly (it depends on a symbol, or it does not
    separate from 0 at the working precision and does not simplify to 0)."""


def _rational_sign(a: sympy.Rational) -> int:
    return 1 if a.p > 0 else (-1 if a.p < 0 else 0)


def to_sympy(q: Fraction) -> sympy.Rational:
    return sympy.Rational(q.numerator, q.denominator)


class SympyArithmetic:
    """sympy expressions. ``symbolic=True`` keeps every softmax base as a positive symbol."""

    name = "sympy"

    def __init__(self, *, symbolic: bool = False) -> None:
        self.symbolic = symbolic
        self._memo: dict[sympy.Expr, object] = {}
        iv.dps = _DIGITS

    def const(self, q: Fraction) -> sympy.Expr:
        return to_sympy(q)

    def add(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a + b

    def sub(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a - b

    def mul(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a * b

    def div(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a / b

    def sign(self, a: sympy.Expr) -> int:
        if a.is_Rational:
            return _rational_sign(a)
        if a.free_symbols:
            simple = sympy.cancel(sympy.together(a))
            if simple.is_Rational:
                return _rational_sign(simple)
            if simple.is_positive:
                return 1
            if simple.is_negative:
                return -1
            raise UndecidableSignError(
                f"the sign of {simple} depends on {', '.join(sorted(map(str, a.free_symbols)))}; "
                "give the base a value (run without symbolic bases)"
            )
        enclosure = self._enclose(a)
        if enclosure.a > 0:
            return 1
        if enclosure.b < 0:
            return -1
        # The enclosure straddles 0: the value may be exactly 0. Decide it algebraically, but
        # only where simplification is affordable: a large expression that is not structurally
        # 0 stops the evaluation with a clear error instead of hanging in simplify().
        if sympy.count_ops(a) <= _SIMPLIFY_OPS and sympy.simplify(a) == 0:
            return 0
        raise UndecidableSignError(
            f"cannot decide the sign of a value enclosed in {enclosure} at {_DIGITS} digits: "
            f"it is not structurally 0 and {'does not simplify to 0' if sympy.count_ops(a) <= _SIMPLIFY_OPS else 'is too large to simplify'}; "
            "the interval backend (--backend interval) decides every sign it can prove"
        )

    def _enclose(self, a: sympy.Expr) -> Any:  # an mpmath interval (mpmath has no types)
        """A rigorous interval around ``a``, evaluated over the expression DAG with a memo."""
        hit = self._memo.get(a)
        if hit is not None:
            return hit
        if a.is_Rational:
            value = iv.mpf(a.p) / iv.mpf(a.q)
        elif a is sympy.E:
            value = iv.e
        elif isinstance(a, sympy.Add):
            value = iv.mpf(0)
            for arg in a.args:
                value = value + self._enclose(arg)
        elif isinstance(a, sympy.Mul):
            value = iv.mpf(1)
            for arg in a.args:
                value = value * self._enclose(arg)
        elif isinstance(a, sympy.Pow):
            base, expo = self._enclose(a.base), a.exp
            if expo.is_Integer:
                value = base ** int(expo)
            elif expo == sympy.Rational(1, 2):
                value = iv.sqrt(base)
            elif expo == sympy.Rational(-1, 2):
                value = 1 / iv.sqrt(base)
            else:
                value = iv.exp(self._enclose(expo) * iv.log(base))
        elif isinstance(a, sympy.exp):
            value = iv.exp(self._enclose(a.args[0]))
        elif isinstance(a, sympy.log):
            value = iv.log(self._enclose(a.args[0]))
        else:
            raise UndecidableSignError(f"no interval rule for {type(a).__name__} in {a}")
        self._memo[a] = value
        return value

    def relu(self, a: sympy.Expr) -> sympy.Expr:
        return a if self.sign(a) > 0 else sympy.Integer(0)

    def step(self, a: sympy.Expr) -> sympy.Expr:
        return sympy.Integer(1) if self.sign(a) > 0 else sympy.Integer(0)

    def clip01(self, a: sympy.Expr) -> sympy.Expr:
        if self.sign(a) <= 0:
            return sympy.Integer(0)
        if self.sign(a - 1) >= 0:
            return sympy.Integer(1)
        return a

    def is_zero(self, a: sympy.Expr) -> bool:
        return bool(a == 0)

    def key(self, a: sympy.Expr) -> sympy.Expr:
        return a

    def sqrt(self, a: sympy.Expr, where: str) -> sympy.Expr:
        return sympy.sqrt(a)

    def softmax(
        self,
        nz: Softmax,
        scale: Scale,
        scores: Sequence[sympy.Expr],
        n: int,
        where: str,
        counts: Sequence[int] | None = None,
        bias: Sequence[Fraction] | None = None,
    ) -> list[sympy.Expr]:
        factor: sympy.Expr = to_sympy(scale.coef)
        if scale.sqrt_d is not None:
            factor = factor / sympy.sqrt(scale.sqrt_d)
        if scale.times_n:
            factor = factor * n
        if scale.log_n:
            factor = factor * sympy.log(n)
        betas = (
            [to_sympy(b) for b in bias] if bias is not None else [sympy.Integer(0)] * len(scores)
        )
        if nz.r is not None:
            base: sympy.Expr = (
                sympy.Symbol(nz.symbol, positive=True) if self.symbolic else to_sympy(nz.r)
            )
            raw = [base ** (factor * s + b) for s, b in zip(scores, betas, strict=True)]
        else:
            assert nz.c is not None  # Softmax validates: exactly one of r, c
            if self.symbolic:
                base = sympy.Symbol(nz.symbol, positive=True)
                raw = [base ** (factor * s + b) for s, b in zip(scores, betas, strict=True)]
            else:
                raw = [
                    sympy.exp(to_sympy(nz.c) * (factor * s + b))
                    for s, b in zip(scores, betas, strict=True)
                ]
        mult = counts if counts is not None else [1] * len(raw)
        total = sympy.Add(*(c * w for c, w in zip(mult, raw, strict=True)))
        return [w / total for w in raw]


def run(
    net: Network, word: str | Sequence[str], *, length: int | None = None, symbolic: bool = False
) -> Trace[sympy.Expr]:
    """Evaluate ``net`` on ``word`` with sympy. ``symbolic=True`` keeps softmax bases symbolic
    (the accept bit is then ``None`` when it depends on the symbols)."""
    return evaluate(net, word, SympyArithmetic(symbolic=symbolic), length=length)
