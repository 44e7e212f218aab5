"""Rigorous interval evaluation (mpmath's ``iv`` context, outward rounding).

Used where values are irrational (layer norm with √, softmax with irrational exponents) and a
decision is all that is needed: every value is an interval that is *guaranteed* to contain the
exact value, so a decision taken from an interval that excludes 0 is a proof. ReLU, σ and GELU need no
decision (they are applied to the interval; GELU's erf through a series with an explicit
remainder, :func:`erf_point`); hardmax and the accept bit do, and an interval that
straddles 0 raises :class:`~netproof.symbolic.evaluation.UndecidedSignError` (a verifier reports Unknown,
never a guess).

:func:`run` evaluates a :class:`~netproof.symbolic.ir.Network`; :func:`run_rnn` an RNN recognizer
(:mod:`netproof.symbolic.rnn_recognizers`: tanh, ReLU, and the LSTM's logistic gates).

>>> from netproof.constructions.chiang2022 import doubled, parity_transformer
>>> run(doubled(parity_transformer()), "011").accepted
False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath import iv, mpf
from mpmath.libmp import fone, fzero, mpf_lt, mpf_sign

from .errors import WordError
from .evaluation import Trace, UndecidedSignError, evaluate
from .ir import Affine, Network, Scale, Softmax
from .rnn_recognizers import LSTMRecognizer, RNNRecognizerIR

__all__ = [
    "DEFAULT_DIGITS",
    "IntervalArithmetic",
    "RNNTrace",
    "erf_interval",
    "erf_point",
    "run",
    "run_rnn",
]

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

    def gelu(self, a: Interval) -> Interval:
        """GELU(x) = x·Φ(x), Φ(x) = (1 + erf(x/√2))/2: the interval product of ``a`` and the
        enclosure of Φ over ``a`` (:func:`erf_interval`), which holds GELU(x) for every x in ``a``."""
        ctx = self.ctx
        phi = (1 + erf_interval(ctx, a / ctx.sqrt(ctx.mpf(2)))) / 2
        return a * phi

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


def erf_point(ctx: Any, x: Any) -> Interval:
    """A rigorous enclosure of erf(x) for an exact number ``x`` (an mpf), in the interval context
    ``ctx`` at its precision p bits.

    For |x| with e^{−x²}/(|x|√π) ≤ 2^{−(p+10)}: erf(x) lies in [1 − e^{−x²}/(x√π), 1] for x > 0
    (erfc(x) < e^{−x²}/(x√π), Abramowitz & Stegun 7.1.13), mirrored for x < 0. Otherwise the series
    of positive terms (A&S 7.1.6)

        erf(x) = (2/√π)·e^{−x²}·Σ_{k≥0} t_k,   t_0 = x,   t_{k+1} = t_k·2x²/(2k+3)   (x > 0)

    summed in interval arithmetic until t_{K+1} ≤ 2^{−(p+10)}·Σ and the ratio 2x²/(2K+5) ≤ ½;
    from then on the terms shrink at least geometrically with ratio ½, so the remainder
    Σ_{k>K} t_k lies in [0, 2·t_{K+1}], which is added as an interval. Every step is an interval
    operation with outward rounding, so the result encloses erf(x); no library erf is trusted.
    """
    if x == 0:
        return ctx.mpf(0)
    if x < 0:
        return -erf_point(ctx, -x)
    X = ctx.mpf(x)
    prec = ctx.prec
    tiny = ctx.mpf(2) ** (-(prec + 10))
    x2 = X * X
    tail = ctx.exp(-x2) / (X * ctx.sqrt(ctx.pi))
    if tail.b <= tiny.a:
        return ctx.mpf([1 - tail.b, 1])
    two_x2 = 2 * x2
    t = X
    total = X
    k = 0
    while True:
        t = t * two_x2 / (2 * k + 3)  # t_{k+1}
        if t.b <= (tiny * total).a and two_x2.b <= (2 * k + 5) / 2:
            total = total + ctx.mpf([0, (2 * t).b])
            break
        total = total + t
        k += 1
    return 2 / ctx.sqrt(ctx.pi) * ctx.exp(-x2) * total


def erf_interval(ctx: Any, a: Interval) -> Interval:
    """A rigorous enclosure of erf over the interval ``a``: erf is increasing, so it is
    [lower end of erf(a.a), upper end of erf(a.b)] (:func:`erf_point` at each end)."""
    lo, hi = a._mpi_
    if lo == hi:
        return erf_point(ctx, a.a)
    return ctx.mpf([erf_point(ctx, a.a).a, erf_point(ctx, a.b).b])


def _clip(x: Any) -> Any:
    if mpf_sign(x) <= 0:
        return fzero
    if mpf_lt(fone, x):
        return fone
    return x


def run(
    net: Network,
    word: str | Sequence[str],
    *,
    length: int | None = None,
    digits: int = DEFAULT_DIGITS,
) -> Trace[Interval]:
    """Evaluate ``net`` on ``word`` with rigorous intervals at ``digits`` digits."""
    return evaluate(net, word, IntervalArithmetic(digits), length=length)


# --------------------------------------------------------------------------- RNN recognizers


@dataclass(frozen=True, slots=True)
class RNNTrace:
    """A rigorous run of an RNN recognizer (:mod:`netproof.symbolic.rnn_recognizers`):
    ``states[t]`` is h_t by hidden unit (``states[0]`` = h_0 = 0), ``cells[t]`` the LSTM's c_t
    (empty for an Elman recognizer), ``output`` the logit's interval, ``accepted`` None where that
    interval contains 0."""

    network: RNNRecognizerIR
    word: tuple[str, ...]
    states: tuple[dict[str, Interval], ...]
    cells: tuple[dict[str, Interval], ...]
    output: Interval
    accepted: bool | None


def run_rnn(
    net: RNNRecognizerIR, word: str | Sequence[str], *, digits: int = DEFAULT_DIGITS
) -> RNNTrace:
    """Evaluate the RNN recognizer ``net`` on ``word`` with rigorous intervals at ``digits``
    digits (the equations of :mod:`netproof.symbolic.rnn_recognizers`). tanh(z) is evaluated as
    1 − 2/(e^{2z} + 1) and the logistic σ(z) as 1/(1 + e^{−z}): z occurs once in each, so the
    interval is the range of the function over z's interval, outward rounded."""
    ar = IntervalArithmetic(digits)
    ctx = ar.ctx
    symbols = tuple(word)
    unknown = [s for s in symbols if s not in net.alphabet]
    if unknown:
        raise WordError(
            f"symbols {unknown} are not in the alphabet {list(net.alphabet)} of {net.name!r}"
        )
    rows = {s: dict(row) for s, row in net.embedding}
    zero = ctx.mpf(0)

    def affine(a: Affine, x: dict[str, Interval]) -> dict[str, Interval]:
        out = {}
        for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True):
            acc = ar.const(b)
            for name, w in zip(a.inputs, row, strict=True):
                if w != 0:
                    acc = acc + ar.const(w) * x[name]
            out[o] = acc
        return out

    def tanh(v: Interval) -> Interval:
        return 1 - 2 / (ctx.exp(2 * v) + 1)

    def logistic(v: Interval) -> Interval:
        return 1 / (1 + ctx.exp(-v))

    h = dict.fromkeys(net.hidden, zero)
    c = dict(h)
    states, cells = [h], [c] if isinstance(net, LSTMRecognizer) else []
    for s in symbols:
        x = {d: ar.const(rows[s].get(d, Fraction(0))) for d in net.inputs}
        drive = affine(net.W_ih, x)
        rec = affine(net.W_hh, h)
        z = {k: drive[k] + rec[k] for k in drive}
        if isinstance(net, LSTMRecognizer):
            c = {
                u: logistic(z[f"f:{u}"]) * c[u] + logistic(z[f"i:{u}"]) * tanh(z[f"g:{u}"])
                for u in net.hidden
            }
            h = {u: logistic(z[f"o:{u}"]) * tanh(c[u]) for u in net.hidden}
            cells.append(c)
        elif net.activation == "relu":
            h = {u: ar.relu(v) for u, v in z.items()}
        else:
            h = {u: tanh(v) for u, v in z.items()}
        states.append(h)
    out = affine(net.W_y, h)["logit"]
    try:
        accepted: bool | None = ar.sign(out) > 0
    except UndecidedSignError:
        accepted = None
    return RNNTrace(net, symbols, tuple(states), tuple(cells), out, accepted)
