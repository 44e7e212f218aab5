"""Batched rigorous enclosures of a softmax network's logit: float64 midpoint–radius arithmetic
(torch tensors), every radius an upper bound on the distance to the exact real value.

A value is a pair (m, r) of float64 tensors with |exact − m| ≤ r. Every operation computes its
midpoint in float64 (round to nearest, any summation order: BLAS matrix products included) and
bounds the rounding error with the standard a-priori bound: a sum of k terms is within
γ_k·Σ|terms| of its float (γ_k = k·u/(1 − k·u), u = 2⁻⁵³, Higham, *Accuracy and Stability of
Numerical Algorithms*, §3.1), and an elementary operation (+, −, ×, /, √) within u·|result|.
Radii are computed in float64 too and then multiplied by (1 + 4(k+4)u) and increased by a tiny
absolute term (underflow), so that they are upper bounds. Weights are the network's Fractions:
a weight a float holds exactly has radius 0, any other gets |q − float(q)|.

The one assumption beyond IEEE 754: ``exp``, ``expm1``, ``log``, ``erf`` and ``tanh`` of the math
library are within :data:`LIBM_REL` = 2⁻⁴⁰ relative of the true value (glibc and Sleef document
errors under 4 ulp = 2⁻⁵⁰; the margin is a thousand times theirs). √ is correctly rounded by IEEE
754. (The slow interval interpreter trusts no library erf: :func:`netproof.symbolic.interval.erf_point`.)

Covered: :class:`~netproof.symbolic.ir.TokenEmbedding` with any positional features; attention
layers of softmax heads with ``dot`` scoring, masks ``none``, ``causal`` or ``anticausal``, no
relative terms, with or without an output map; FFNs of affine, ReLU, GELU and layer-norm steps;
residual flags and post-residual layer norms; a :class:`~netproof.symbolic.ir.Classifier`; and
single-layer RNN recognizers (:class:`RNNEnclosure`: Elman with tanh or ReLU, and LSTM). Anything
else raises :class:`EnclosureError` naming the block (the slow interval interpreter,
:mod:`netproof.symbolic.interval`, covers every block).

May import the IR, the positional features and torch (inside functions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic.errors import MissingExtraError, SymbolicError
from netproof.symbolic.ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    LayerNorm,
    Network,
    Softmax,
    TokenEmbedding,
)
from netproof.symbolic.positional import feature
from netproof.symbolic.rnn_recognizers import ElmanRecognizer, LSTMRecognizer, RNNRecognizerIR

__all__ = [
    "GELU_LIPSCHITZ",
    "LIBM_REL",
    "Enclosure",
    "EnclosureError",
    "RNNEnclosure",
    "compile_enclosure",
]

U = 2.0**-53
LIBM_REL = 2.0**-40
TINY = 2.0**-1000  # absolute slack per operation: covers underflow (each at most 2^-1074 per term)
GELU_LIPSCHITZ = 1.129
"""An upper bound of |GELU′(x)| = |Φ(x) + x·φ(x)| (its maximum is 1.128904…, at x = √2)."""
_INV_SQRT2 = 0.7071067811865476  # fl(1/√2), within u relative


class EnclosureError(SymbolicError, ValueError):
    """A network has a block the batched enclosure does not cover (the message names it)."""


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "checking a model needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def require_torch() -> Any:
    """torch, or a :class:`MissingExtraError` naming the extra to install."""
    return _torch()


def grow(r: Any, k: int) -> Any:
    """``r`` (a float sum of k nonnegative terms) raised in place to an upper bound of its exact
    value (the a-priori growth every operation here applies)."""
    return _grow(r, k)


def _grow(r: Any, k: int) -> Any:
    """``r`` (a float sum of k nonnegative terms, a fresh tensor: it is updated in place) raised
    to an upper bound of its exact value."""
    return r.mul_(1.0 + 4.0 * (k + 4) * U).add_(TINY * (k + 1))


def _gamma(k: int) -> float:
    return k * U / (1.0 - k * U) * (1.0 + 4.0 * U)


def _const(q: Fraction) -> tuple[float, float]:
    """A Fraction as (m, r): its nearest float and an upper bound of the distance."""
    m = float(q)
    diff = abs(q - Fraction(m))
    return m, (0.0 if diff == 0 else math.nextafter(float(diff), math.inf))


@dataclass(slots=True)
class MR:
    """A tensor of intervals as midpoints and radii."""

    m: Any
    r: Any
    _abs: Any = None

    @property
    def am(self) -> Any:
        """|m|, computed once."""
        if self._abs is None:
            self._abs = self.m.abs()
        return self._abs


@dataclass(slots=True)
class _Linear:
    """An Affine compiled to dense matrices over (input names) → (output names)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    wm: Any  # [in, out]
    c12: Any  # [in + in, out]: (|W| + W_r) over (W_r + γ|W|), rounded up; multiplies [x_r, |x_m|]
    bm: Any
    br: Any  # b_r + γ|b|
    k: int
    part: Any = None
    """Where some inputs are never read or some outputs never written (a compiled tracr
    program's maps are mostly zero): (rows read, columns written, wm, c12, bm, br restricted
    to them); an output never written is exactly 0 (radius 0), an input never read adds exactly 0."""


class Enclosure:
    """The compiled network: :meth:`logits` encloses the logit of a batch of words of one length."""

    def __init__(self, net: Network) -> None:
        torch = _torch()
        self.torch = torch
        self.net = net
        emb = net.embedding
        if not isinstance(emb, TokenEmbedding):
            raise EnclosureError(
                f"network {net.name!r}: the batched enclosure needs a TokenEmbedding, not {type(emb).__name__}"
            )
        if not isinstance(net.readout, Classifier):
            raise EnclosureError(
                f"network {net.name!r}: the batched enclosure needs a Classifier readout, not {type(net.readout).__name__}"
            )
        self.dims = net.dims
        self.index = {d: i for i, d in enumerate(net.dims)}
        tokens = [t for t, _ in emb.table]
        self.token_index = {t: i for i, t in enumerate(tokens)}
        tm = torch.zeros(len(tokens), len(self.dims), dtype=torch.float64)
        tr = torch.zeros_like(tm)
        for t, row in emb.table:
            for d, v in row:
                m, r = _const(v)
                tm[self.token_index[t], self.index[d]] += m
                tr[self.token_index[t], self.index[d]] += r
        self.table = MR(tm, _grow(tr, 2))
        for sub in net.layers:
            self._check(sub.block)
        self._linears: dict[tuple[int, tuple[str, ...]], _Linear] = {}
        self._positions: dict[int, MR] = {}
        self._embedded: dict[int, tuple[MR, MR]] = {}
        self._kappas: dict[tuple[int, int], tuple[Any, float, float]] = {}
        self._heads: dict[tuple[str, int], tuple[Any, tuple[list[int], int, _Linear] | None]] = {}
        self.keep: list[Any] | None = None
        """Where a list: :meth:`attention` appends (head, softmax weights, value alternatives,
        visible) per head (a linear relaxation after the layer reads them, :mod:`.relax`)."""
        self.word_sets = False
        """Inputs are sets of words (wide intervals): each head's output is intersected with the
        hull of its values and layer norms take :meth:`_layernorm_sets`."""

    # ------------------------------------------------------------------ compile

    def _check(self, block: object) -> None:
        if isinstance(block, AttentionLayer):
            for h in block.heads:
                where = f"attention {block.name!r} head {h.name!r}"
                if not isinstance(h.normalizer, Softmax):
                    raise EnclosureError(
                        f"{where}: the batched enclosure covers softmax heads, not {type(h.normalizer).__name__}"
                    )
                if (
                    h.scoring != "dot"
                    or h.relative
                    or h.mask not in ("none", "causal", "anticausal")
                ):
                    raise EnclosureError(
                        f"{where}: the batched enclosure covers dot scoring without relative terms and masks none, "
                        f"causal or anticausal (got scoring={h.scoring!r}, mask={h.mask!r})"
                    )
        elif isinstance(block, FFN):
            for step in block.steps:
                if isinstance(step, Activation) and step.kind not in ("relu", "gelu"):
                    raise EnclosureError(
                        f"ffn {block.name!r}: the batched enclosure covers relu and gelu, not {step.kind!r}"
                    )
        else:
            raise EnclosureError(
                f"block {getattr(block, 'name', '?')!r} ({type(block).__name__}) is not covered by the batched enclosure"
            )

    def _linear(self, a: Affine, names: dict[str, int], narrowed: bool = False) -> _Linear:
        """``a`` as dense matrices over the whole vector ``names`` (zero rows for unread names),
        so that a product needs no gather. ``narrowed``: an input not in ``names`` is exactly 0
        (an output the previous map never writes), its weights are dropped."""
        key = (id(a), tuple(names))
        hit = self._linears.get(key)
        if hit is not None and hit.inputs == a.inputs:
            return hit
        lin = self._linears[key] = _compile_linear(self.torch, a, names, narrowed)
        return lin

    # ------------------------------------------------------------------ operations

    def affine(self, a: Affine, x: MR, names: dict[str, int], narrowed: bool = False) -> MR:
        """``a`` applied to ``x`` (over ``names``; ``narrowed``: an input not in ``names`` is
        exactly 0, as an output of :meth:`attention` or :meth:`ffn` that is never written)."""
        return _apply_linear(self._linear(a, names, narrowed), x)

    @staticmethod
    def add(a: MR, b: MR) -> MR:
        m = a.m + b.m
        return MR(m, _grow(a.r + b.r + U * m.abs(), 2))

    @staticmethod
    def mul(a: MR, b: MR) -> MR:
        m = a.m * b.m
        return MR(m, _grow(a.am * b.r + a.r * b.am + a.r * b.r + U * m.abs(), 4))

    def div(self, a: MR, b: MR, where: str) -> MR:
        low = (b.m - b.r) * (1 - 4 * U)
        m = a.m / b.m
        r = _grow((a.r + m.abs() * b.r) / low * (1 + 4 * U) + U * m.abs(), 4)
        # a denominator whose enclosure reaches 0 leaves the quotient unbounded (that word is undecided)
        return MR(m.nan_to_num(0.0), self.torch.where(low > 0, r, math.inf))

    def total(self, a: MR, dim: int) -> MR:
        k = a.m.shape[dim]
        m = a.m.sum(dim, keepdim=True)
        return MR(
            m, _grow(a.r.sum(dim, keepdim=True) + _gamma(k) * a.m.abs().sum(dim, keepdim=True), k)
        )

    def sqrt(self, a: MR, where: str) -> MR:
        low = (a.m - a.r) * (1 - 4 * U)
        m = a.m.clamp_min(0.0).sqrt()
        r = _grow(a.r / (low.clamp_min(0.0).sqrt() * (1 - 4 * U)) + U * m, 4)
        # a variance whose enclosure reaches 0 gives an unbounded root (the word is undecided)
        return MR(m, self.torch.where(low > 0, r, math.inf))

    def exp(self, a: MR) -> MR:
        torch = self.torch
        m = torch.exp(a.m)
        bound = torch.expm1(a.r) * (1 + LIBM_REL) + LIBM_REL
        return MR(m, _grow(m * (1 + LIBM_REL) * bound, 4))

    def gelu(self, a: MR) -> MR:
        """GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2)), evaluated as ``g = (½m)·(1 + erf(m·c))`` with
        c = fl(1/√2).

        Midpoint error, with t = m/√2 and s = fl(m·c): |s − t| ≤ 2.0001u|t|; the library erf is
        within LIBM_REL relative and erf is (2/√π)-Lipschitz, so fl(1 + erf(s)) is within
        LIBM_REL + 1.6u|m| + 2.01u of 1 + erf(t); ½m is exact (up to underflow, TINY), the last
        product adds u|g|/(1 − u). So |g − GELU(m)| ≤ ½|m|(LIBM_REL + 1.6u|m| + 2.01u) + 1.01u|g|.
        Radius: |GELU′| ≤ :data:`GELU_LIPSCHITZ` (its maximum, at x = √2, is 1.12890…), so the
        radius r becomes GELU_LIPSCHITZ·r plus that midpoint error."""
        torch = self.torch
        m = a.m
        g = (0.5 * m) * (1.0 + torch.erf(m * _INV_SQRT2))
        am = a.am
        err = 0.5 * am * (LIBM_REL + 1.6 * U * am + 2.01 * U) + 1.01 * U * g.abs()
        return MR(g, _grow(GELU_LIPSCHITZ * a.r + err, 6))

    def matmul(self, a: MR, b: MR) -> MR:
        """``a @ b`` for interval matrices (the inner dimension k)."""
        torch = self.torch
        k = a.m.shape[-1]
        g = _gamma(k)
        m = _bmm(torch, a.m, b.m)
        # Σ_j |a_j|(b_rj + γ|b_j|) + a_rj(|b_j| + b_rj): one product over the 2k terms [|a|, a_r]
        lhs = torch.cat((a.am, a.r), -1)
        rhs = torch.cat((b.r + g * b.am, b.am + b.r), -2).mul_(1 + 4 * U)
        return MR(m, _grow(_bmm(torch, lhs, rhs), 2 * k))

    def layernorm(self, ln: LayerNorm, x: MR, names: dict[str, int], where: str) -> MR:
        if self.word_sets:
            return self._layernorm_sets(ln, x, names, where)
        over = list(names) if ln.over is None else list(ln.over)
        idx = [names[o] for o in over]
        whole = idx == list(range(x.m.shape[-1]))
        sub = x if whole else MR(x.m[..., idx], x.r[..., idx])
        d = float(len(idx))
        s = self.total(sub, -1)
        mean = MR(s.m / d, _grow(s.r / d + U * (s.m / d).abs(), 2))
        c = self.add(sub, MR(-mean.m, mean.r))
        sq = self.total(self.mul(c, c), -1)
        em, er = _const(ln.eps)
        var = MR(
            sq.m / d + em,
            _grow(sq.r / d + U * (sq.m / d).abs() + er + 2 * U * (sq.m / d + em).abs(), 3),
        )
        z = self.div(c, self.sqrt(var, where), where)
        if whole:
            return z
        out_m, out_r = x.m.clone(), x.r.clone()
        out_m[..., idx], out_r[..., idx] = z.m, z.r
        return MR(out_m, out_r)

    def _layernorm_sets(self, ln: LayerNorm, x: MR, names: dict[str, int], where: str) -> MR:
        """Layer norm over wide intervals. z_i = c_i / √(c_i²/d + R_i/d + ε) with c = x − mean(x)
        and R_i = Σ_{j≠i} c_j² is increasing in c_i, decreasing in R_i where c_i ≥ 0 and
        increasing where c_i < 0: each end of z_i's enclosure is that function at one corner of
        the box of (c_i, R_i), evaluated with point intervals (the centred vector and the sums of
        squares are enclosed with outward rounding). The quotient of the enclosed c and √var
        alone is unbounded as soon as var's enclosure reaches 0. Finally |z_i| ≤ √d (Σ z_j² =
        d·var/(var + ε) ≤ d)."""
        torch = self.torch
        over = list(names) if ln.over is None else list(ln.over)
        idx = [names[o] for o in over]
        whole = idx == list(range(x.m.shape[-1]))
        sub = x if whole else MR(x.m[..., idx], x.r[..., idx])
        d = len(idx)
        fd = float(d)
        s = self.total(sub, -1)
        mean = MR(s.m / fd, _grow(s.r / fd + U * (s.m / fd).abs(), 2))
        c = self.add(sub, MR(-mean.m, mean.r))
        inf = torch.tensor(math.inf, dtype=c.m.dtype)
        c_lo = torch.nextafter(c.m - c.r, -inf)
        c_hi = torch.nextafter(c.m + c.r, inf)
        near = torch.nextafter(c.am - c.r, -inf).clamp_min(0.0)  # min |c_i| over its interval
        far = torch.nextafter(c.am + c.r, inf)
        sq_lo = torch.nextafter(near * near, -inf)
        sq_hi = torch.nextafter(far * far, inf)
        shrink, grow = 1.0 - 2.0 * _gamma(d), 1.0 + 2.0 * _gamma(d)
        s_lo = torch.nextafter(sq_lo.sum(-1, keepdim=True) * shrink, -inf)  # sums of nonnegatives
        s_hi = _grow(sq_hi.sum(-1, keepdim=True) * grow, d)
        r_lo = torch.nextafter(s_lo - sq_lo, -inf).clamp_min(0.0)
        r_hi = torch.nextafter(s_hi - sq_hi, inf).nan_to_num(math.inf, math.inf, math.inf)
        em, er = _const(ln.eps)
        eps = MR(torch.tensor(em, dtype=c.m.dtype), torch.tensor(er, dtype=c.m.dtype))
        zero = torch.zeros_like(c.m)

        def g(cv: Any, rv: Any) -> MR:
            cp, rp = MR(cv, zero), MR(rv, zero)
            c2 = self.mul(cp, cp)
            den = self.add(
                self.add(
                    MR(c2.m / fd, _grow(c2.r / fd + U * (c2.m / fd).abs(), 2)),
                    MR(rp.m / fd, _grow(U * (rp.m / fd).abs(), 2)),
                ),
                eps,
            )
            return self.div(cp, self.sqrt(den, where), where)

        up = g(c_hi, torch.where(c_hi >= 0, r_lo, r_hi))
        down = g(c_lo, torch.where(c_lo >= 0, r_hi, r_lo))
        box = math.nextafter(math.sqrt(fd), math.inf) * (1 + 4 * U)
        z_hi = torch.nextafter(up.m + up.r, inf).nan_to_num(box, box, box).clamp_max(box)
        z_lo = torch.nextafter(down.m - down.r, -inf).nan_to_num(-box, -box, -box).clamp_min(-box)
        z_hi = torch.where(torch.isfinite(c_hi), z_hi, box)
        z_lo = torch.where(torch.isfinite(c_lo), z_lo, -box)
        z = from_bounds(torch, z_lo, z_hi)
        if whole:
            return z
        out_m, out_r = x.m.clone(), x.r.clone()
        out_m[..., idx], out_r[..., idx] = z.m, z.r
        return MR(out_m, out_r)

    # ------------------------------------------------------------------ blocks

    def _kappa(self, h: Any, n: int) -> tuple[float, float]:
        """The softmax exponent's factor κ (scale × ln r or c) as (m, r)."""
        hit = self._kappas.get((id(h), n))
        if hit is not None and hit[0] is h:
            return hit[1], hit[2]
        m, r = self._kappa_of(h, n)
        self._kappas[(id(h), n)] = (h, m, r)
        return m, r

    @staticmethod
    def _kappa_of(h: Any, n: int) -> tuple[float, float]:
        sc, nz = h.scale, h.normalizer
        m, rel = float(sc.coef), 0.0
        if Fraction(m) != sc.coef:
            rel += abs(float(sc.coef - Fraction(m))) / abs(m) + U
        if sc.sqrt_d is not None:
            m /= math.sqrt(sc.sqrt_d)
            rel += 3 * U
        if sc.times_n:
            m *= n
            rel += U
        if sc.log_n:
            m *= math.log(n)
            rel += LIBM_REL + U
        if nz.r is not None:
            m *= math.log(float(nz.r))
            rel += LIBM_REL + 2 * U + abs(float(nz.r - Fraction(float(nz.r)))) / float(nz.r)
        else:
            cm, cr = _const(nz.c)
            m *= cm
            rel += U + (cr / abs(cm) if cm else 0.0)
        return m, abs(m) * rel * (1 + 64 * U) + TINY

    def attention(
        self, block: AttentionLayer, x: MR, alternatives: list[MR] | None = None
    ) -> tuple[list[str], MR]:
        """The heads' outputs on ``x``. With ``alternatives`` (sets of words whose rows are
        still those of single symbols: the states of the words that put one symbol a on every
        free position, one per a) each score is enclosed over every pair of alternatives for
        its query and its key (exact per pair, a bilinear form of the two symbols) and each
        value over every alternative: the hull of the images, not the image of the hull."""
        torch = self.torch
        n = x.m.shape[-2]
        outs_m, outs_r, names = [], [], []
        # single words: a query or key coordinate its map never writes is exactly 0 (so is its
        # term of every score), a value coordinate never written is exactly 0 in the output,
        # and a head whose value map writes nothing outputs exactly 0: only the rest is computed
        narrow = alternatives is None and self.keep is None and not self.word_sets
        for h in block.heads:
            km, kr = self._kappa(h, n)
            kappa = MR(torch.tensor(km, dtype=torch.float64), torch.tensor(kr, dtype=torch.float64))
            vs: list[MR] = []
            written = list(h.value.outputs)
            if narrow:
                qkv = self._head_part(h)
                if qkv is None:  # the value map writes nothing: the head outputs exactly 0
                    continue
                vc, nq, y = qkv[0], qkv[1], _apply_part(qkv[2], x)[0]
                written = [h.value.outputs[c] for c in vc]
                q = MR(y.m[..., :nq], y.r[..., :nq])
                k = MR(y.m[..., nq : 2 * nq], y.r[..., nq : 2 * nq])
                v = MR(y.m[..., 2 * nq :], y.r[..., 2 * nq :])
                q = self.mul(q, kappa)  # κ·q
                logits = self.matmul(
                    q, MR(k.m.transpose(-1, -2), k.r.transpose(-1, -2))
                )  # [B, n, n]: ⟨κq_i, k_j⟩
            elif alternatives is None:
                q = self.affine(h.query, x, self.index)
                k = self.affine(h.key, x, self.index)
                v = self.affine(h.value, x, self.index)
                q = self.mul(q, kappa)  # κ·q
                logits = self.matmul(
                    q, MR(k.m.transpose(-1, -2), k.r.transpose(-1, -2))
                )  # [B, n, n]: ⟨κq_i, k_j⟩
            else:
                qs = [self.mul(self.affine(h.query, a, self.index), kappa) for a in alternatives]
                ks = [self.affine(h.key, a, self.index) for a in alternatives]
                vs = [self.affine(h.value, a, self.index) for a in alternatives]
                lo = hi = None
                for qa in qs:
                    for kb in ks:
                        s = self.matmul(qa, MR(kb.m.transpose(-1, -2), kb.r.transpose(-1, -2)))
                        slo, shi = add_down(torch, s.m, -s.r), add_up(torch, s.m, s.r)
                        lo = slo if lo is None else torch.minimum(lo, slo)
                        hi = shi if hi is None else torch.maximum(hi, shi)
                logits = from_bounds(torch, lo, hi)
                vlo = torch.stack([add_down(torch, va.m, -va.r) for va in vs]).amin(0)
                vhi = torch.stack([add_up(torch, va.m, va.r) for va in vs]).amax(0)
                v = from_bounds(torch, vlo, vhi)
            i = torch.arange(n).unsqueeze(1)
            j = torch.arange(n).unsqueeze(0)
            visible = {
                "none": torch.ones(n, n, dtype=torch.bool),
                "causal": j <= i,
                "anticausal": j >= i,
            }[h.mask]
            lm = logits.m.masked_fill(~visible, -math.inf)
            shift = lm.max(-1, keepdim=True).values
            shifted = MR(
                lm - shift, _grow(logits.r + U * (lm - shift).abs().nan_to_num(0.0, 0.0, 0.0), 2)
            )
            e = self.exp(shifted)
            e = MR(torch.where(visible, e.m, 0.0), torch.where(visible, e.r, 0.0))
            if self.keep is not None:
                self.keep.append((h, e, vs or [v], visible))
            # Σ_j (e_j / Σe) v_j = (Σ_j e_j v_j) / Σe in the reals: divide the n outputs, not the n² weights
            o = self.div(
                self.matmul(e, v), self.total(e, -1), f"attention {block.name!r} head {h.name!r}"
            )
            if self.word_sets:
                o = self._within_values(o, v, h.mask, e, visible)
            outs_m.append(o.m)
            outs_r.append(o.r)
            names += written
        if not outs_m:  # every head's value map writes nothing
            outs_m = outs_r = [x.m.new_zeros((*x.m.shape[:-1], 0))]
        cat = MR(torch.cat(outs_m, -1), torch.cat(outs_r, -1))
        if block.output is not None:
            got = {nm: p for p, nm in enumerate(names)}
            if narrow:  # the outputs the map writes only (the others are exactly 0)
                o, oc = _apply_part(self._linear(block.output, got, narrowed=True), cat)
                return [block.output.outputs[c] for c in oc], o
            return list(block.output.outputs), self.affine(block.output, cat, got, narrow)
        return names, cat

    def _head_part(self, h: Any) -> tuple[list[int], int, _Linear] | None:
        """A head's query, key and value maps as one map (cached): the query and key
        coordinates both maps write (any other term of a score is exactly 0), then the value
        coordinates written; its inputs the union of those the three read (an input a map never
        reads has weight 0 there, its product exactly 0), each column with its own map's
        rounding terms and the growth of the longest row (k the most inputs of the three).
        ``(value columns, query/key columns, map)``, or None where the value map writes nothing."""
        key = ("head", id(h))
        hit = self._heads.get(key)
        if hit is not None and hit[0] is h:
            return hit[1]
        torch = self.torch
        lq, lk, lv = (self._linear(a, self.index) for a in (h.query, h.key, h.value))

        def written(lin: _Linear) -> list[int]:
            if lin.part is not None and lin.part[1] is not None:
                return [int(c) for c in lin.part[1].tolist()]
            return list(range(lin.wm.shape[1]))

        vc = written(lv)
        out: tuple[list[int], int, _Linear] | None = None
        if vc:
            both = sorted(set(written(lq)) & set(written(lk)))
            parts = [(lq, both), (lk, both), (lv, vc)]
            wm = torch.cat([lin.wm[:, c] for lin, c in parts], 1)
            c12 = torch.cat([lin.c12[:, c] for lin, c in parts], 1)
            bm = torch.cat([lin.bm[c] for lin, c in parts])
            br = torch.cat([lin.br[c] for lin, c in parts])
            k = max(lin.k for lin, _ in parts)
            d = wm.shape[0]
            rows = ((wm != 0) | (c12[:d] != 0) | (c12[d:] != 0)).any(1).nonzero().flatten()
            lin = _Linear(h.query.inputs, (), wm, c12, bm, br, k)
            lin.part = (
                rows,
                None,
                wm.index_select(0, rows).contiguous(),
                c12.index_select(0, torch.cat((rows, rows + d))).contiguous(),
                bm,
                br,
            )
            out = (vc, len(both), lin)
        self._heads[key] = (h, out)
        return out

    def _within_values(self, o: MR, v: MR, mask: str, e: MR, visible: Any) -> MR:
        """``o`` intersected with the hull of the values each query sees (a softmax head's
        output is a convex combination of them: the weights are positive and sum to 1 in the
        reals) and with :meth:`_weighted_average`'s bounds. Used for inputs that are sets of
        words (wide intervals), where the quotient of the separately enclosed numerator and
        denominator is loose."""
        torch = self.torch
        up = self._weighted_average(e, v.m + v.r, visible)
        down = -self._weighted_average(e, -(v.m - v.r), visible)
        lo = add_down(torch, v.m, -v.r)  # [B, n, dv]
        hi = add_up(torch, v.m, v.r)
        if mask == "none":
            lo = lo.amin(-2, keepdim=True).expand_as(lo)
            hi = hi.amax(-2, keepdim=True).expand_as(hi)
        elif mask == "causal":  # query i sees j <= i
            lo, hi = lo.cummin(-2).values, hi.cummax(-2).values
        else:  # anticausal: query i sees j >= i
            lo = lo.flip(-2).cummin(-2).values.flip(-2)
            hi = hi.flip(-2).cummax(-2).values.flip(-2)
        olo = torch.maximum(torch.maximum(add_down(torch, o.m, -o.r), lo), down)
        ohi = torch.minimum(torch.minimum(add_up(torch, o.m, o.r), hi), up)
        return from_bounds(torch, olo, ohi)

    def _weighted_average(self, e: MR, vu: Any, visible: Any) -> Any:
        """An upper bound of Σ_j e_j v_j / Σ_j e_j over every e_j in e's intervals and v_j ≤ vu_j
        (``e``: [B, n, n] weights of query i on key j; ``vu``: [B, n, dv] upper ends of the
        values, before rounding: the bound holds for vu_j + |vu_j|·u): [B, n, dv].

        The maximum U* over the box is where F(U) = Σ_j max_e e_j (vu_j − U) is 0; it is the
        largest of the ratios that put the upper end of e on the t largest values and the lower
        end on the rest (Σ b·v + Σ a·v)/(Σ b + Σ a). A candidate U is computed so in float and
        then proved: F(U) ≤ 0 with every term rounded upward and the sum's error bound added
        makes U an upper bound (Σ e_j (v_j − U) ≤ 0 for every e, v in the box, Σ e_j > 0).
        Where the proof fails (a non-finite end, a candidate off by rounding) the bound is +∞."""
        torch = self.torch
        inf = torch.tensor(math.inf, dtype=vu.dtype)
        vu = torch.nextafter(vu, inf)
        a = torch.nextafter(e.m - e.r, -inf).clamp_min(0.0)
        b = torch.nextafter(e.m + e.r, inf)
        a = torch.where(visible, a, 0.0).unsqueeze(-1)  # [B, n, n, 1]
        b = torch.where(visible, b, 0.0).unsqueeze(-1)
        n, dv = vu.shape[-2], vu.shape[-1]
        vals = vu.unsqueeze(1).expand(-1, n, -1, -1)  # [B, n(query), n(key), dv]
        vals = torch.where(visible.unsqueeze(-1), vals, 0.0)
        order = vals.argsort(dim=2, descending=True)
        vs = vals.gather(2, order)
        as_ = a.expand(-1, -1, -1, dv).gather(2, order)
        bs = b.expand(-1, -1, -1, dv).gather(2, order)
        zero = torch.zeros_like(vs[:, :, :1])
        cb = torch.cat([zero, (bs * vs).cumsum(2)], 2)
        cbd = torch.cat([zero, bs.cumsum(2)], 2)
        ca = torch.cat([zero, (as_ * vs).cumsum(2)], 2)
        cad = torch.cat([zero, as_.cumsum(2)], 2)
        num = cb + (ca[:, :, -1:] - ca)
        den = cbd + (cad[:, :, -1:] - cad)
        ratio = torch.where(den > 0, num / den, -inf).nan_to_num(math.inf, math.inf, -math.inf)
        cand = ratio.amax(2)  # [B, n, dv]
        cand = cand + cand.abs() * 2.0**-40 + 2.0**-1000
        # the proof: F(cand) <= 0, each term e_j·(v_j − U) bounded above
        d = torch.nextafter(vals - cand.unsqueeze(2), inf)
        terms = torch.nextafter(torch.where(d > 0, b * d, a * d), inf)
        terms = torch.where(visible.unsqueeze(-1), terms, 0.0)
        total = terms.sum(2) + 2.0 * _gamma(n) * terms.abs().sum(2) * (1 + 8 * U)
        ok = (total <= 0) & torch.isfinite(total) & torch.isfinite(cand)
        return torch.where(ok, cand, inf)

    def ffn(self, block: FFN, x: MR) -> tuple[list[str], MR]:
        names = {d: i for i, d in enumerate(self.dims)}
        # without a layer norm, an output a map never writes is exactly 0 through the activations
        # and adds exactly 0 to the next map: only the written ones are carried (names narrowed)
        narrow = not self.word_sets and not any(isinstance(s, LayerNorm) for s in block.steps)
        for idx, step in enumerate(block.steps):
            if isinstance(step, Affine) and narrow:
                lin = self._linear(step, names, narrowed=idx > 0)
                x, cols = _apply_part(lin, x)
                names = {step.outputs[c]: i for i, c in enumerate(cols)}
            elif isinstance(step, Affine):
                x = self.affine(step, x, names)
                names = {o: i for i, o in enumerate(step.outputs)}
            elif isinstance(step, Activation):
                if step.kind != "relu":
                    x = self.gelu(x)
                elif self.word_sets:  # [max(lo, 0), max(hi, 0)]: 0 where the interval is <= 0
                    torch = self.torch
                    lo = add_down(torch, x.m, -x.r).clamp_min(0.0)
                    x = from_bounds(torch, lo, add_up(torch, x.m, x.r).clamp_min(0.0))
                else:
                    x = MR(x.m.clamp_min(0.0), x.r)
            else:
                x = self.layernorm(step, x, names, f"ffn {block.name!r} step [{idx}]")
        return list(names), x

    # ------------------------------------------------------------------ whole network

    def combine(self, sub: Any, x: MR, names: list[str], o: MR | None) -> MR:
        """The sublayer ``sub``'s residual and layer norm: ``x`` updated by the block's output
        ``o`` on the dims ``names``."""
        torch = self.torch
        cols = [self.index[nm] for nm in names]
        if o is not None and cols == list(
            range(len(self.dims))
        ):  # the block writes every dim, in order
            x = self.add(x, o) if sub.residual else o
        elif sub.residual:
            if o is not None:
                at = torch.tensor(cols, dtype=torch.long)
                upd = self.add(MR(x.m.index_select(-1, at), x.r.index_select(-1, at)), o)
                x = MR(x.m.index_copy(-1, at, upd.m), x.r.index_copy(-1, at, upd.r))
        else:
            m, r = torch.zeros_like(x.m), torch.zeros_like(x.r)
            if o is not None:
                m[..., cols], r[..., cols] = o.m, o.r
            x = MR(m, r)
        if sub.post_ln is not None:
            x = self.layernorm(sub.post_ln, x, self.index, f"layer norm after {sub.name!r}")
        return x

    def logits(self, tokens: Any, n_tokens: int) -> MR:
        """The logit enclosure of every row of ``tokens`` (``[B, n]`` indices into the table,
        specials included; ``n_tokens`` = n)."""
        x = self.residual(tokens, n_tokens)
        ro = self.net.readout
        assert isinstance(ro, Classifier)  # checked in __init__
        at = ro.position if ro.position >= 0 else n_tokens + ro.position
        y = self.affine(ro.logit, MR(x.m[:, at, :], x.r[:, at, :]), self.index)
        return MR(y.m[:, 0], y.r[:, 0])

    def residual(self, tokens: Any, n_tokens: int) -> MR:
        """The enclosure of the last residual stream ``[B, n, dims]`` at every position (what
        the readout reads; a per-position output reads it too)."""
        x = self.embedded(tokens, n_tokens)
        for sub in self.net.layers:
            block = sub.block
            o: MR | None
            if isinstance(block, AttentionLayer):
                names, o = self.attention(block, x)
            else:
                assert isinstance(block, FFN)  # checked in __init__
                names, o = self.ffn(block, x) if block.steps else ([], None)
            x = self.combine(sub, x, names, o)
        return x

    def embedded(self, tokens: Any, n_tokens: int) -> MR:
        """The first residual stream of ``tokens`` ([B, n] indices into the table): each token's
        row plus its position's, the sum enclosed once per (token, position) and looked up."""
        torch = self.torch
        hit = self._embedded.get(n_tokens)
        if hit is None or hit[0] is not self.table:  # a copy with another table computes its own
            t = self.table
            pos = self.positions(n_tokens)
            both = self.add(MR(t.m.unsqueeze(1), t.r.unsqueeze(1)), pos)  # [tokens, n, dims]
            flat = MR(both.m.flatten(0, 1), both.r.flatten(0, 1))
            hit = self._embedded[n_tokens] = (t, flat)
        at = (tokens * n_tokens + torch.arange(n_tokens)).flatten()
        shape = (*tokens.shape, len(self.dims))
        return MR(
            hit[1].m.index_select(0, at).view(shape), hit[1].r.index_select(0, at).view(shape)
        )

    def positions(self, n_tokens: int) -> MR:
        """The positional rows of a sequence of ``n_tokens`` tokens, ``[n, dims]`` (cached)."""
        torch = self.torch
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)  # checked in __init__
        pos = self._positions.get(n_tokens)
        if pos is None:
            pm = torch.zeros(n_tokens, len(self.dims), dtype=torch.float64)
            pr = torch.zeros_like(pm)
            exact: dict[tuple[int, int], Fraction] = {}
            for t in range(n_tokens):
                for d, feat, coef in emb.positional:
                    value = feature(feat)(emb.index_base + t, n_tokens)
                    if value:
                        key = (t, self.index[d])
                        exact[key] = exact.get(key, Fraction(0)) + coef * value
            for (t, col), q in exact.items():
                pm[t, col], pr[t, col] = _const(q)
            pos = self._positions[n_tokens] = MR(pm, pr)
        return pos


class RNNEnclosure:
    """The batched enclosure of an RNN recognizer (:mod:`netproof.symbolic.rnn_recognizers`): the
    same midpoint–radius arithmetic, one step per symbol.

    Each symbol's drive u_a = W_ih x_a + b_ih + b_hh is computed exactly (Fractions) and then
    rounded (radius: the distance); a step computes z = W_hh h + u_{w_t} as in
    :meth:`Enclosure.affine`. Elman: h ← ReLU(z) (1-Lipschitz, exact on the midpoint) or tanh(z).
    LSTM: c ← σ(z_f)·c + σ(z_i)·tanh(z_g), h ← σ(z_o)·tanh(c), products as in :meth:`Enclosure.mul`.

    The library tanh is within LIBM_REL relative, so the midpoint's error is at most
    LIBM_REL·(1 + 2⁻³⁹)·|fl tanh(m)|. The logistic σ(m) is computed as fl(1/fl(1 + fl exp(−m))):
    exp within LIBM_REL relative makes 1 + exp(−m) within LIBM_REL relative, the two roundings
    add 2u, so the error is at most (LIBM_REL + 3u)·|s| (plus TINY where exp(−m) overflows and
    σ(m) < 2⁻¹⁰²²). The radius is scaled by the largest slope over the interval (mean value
    theorem): tanh′ and σ′ are even and decrease in |x|, so it is their value at the point of
    [m − r, m + r] nearest 0 (at most 1 and ¼). A global Lipschitz constant instead would let
    radii grow geometrically along the word where the gates saturate (measured on a trained
    PARITY LSTM: radius 27 at length 14, against 10⁻¹² with the local slope)."""

    def __init__(self, net: RNNRecognizerIR) -> None:
        torch = _torch()
        self.torch = torch
        self.net = net
        self.lstm = isinstance(net, LSTMRecognizer)
        self.token_index = {a: k for k, a in enumerate(net.alphabet)}
        hidden = {u: k for k, u in enumerate(net.hidden)}
        rows = {s: dict(r) for s, r in net.embedding}
        outputs = {o: k for k, o in enumerate(net.W_hh.outputs)}
        um = torch.zeros(len(net.alphabet), len(outputs), dtype=torch.float64)
        ur = torch.zeros_like(um)
        b_hh = dict(zip(net.W_hh.outputs, net.W_hh.bias, strict=True))
        exact: dict[str, list[Fraction]] = {a: [Fraction(0)] * len(outputs) for a in net.alphabet}
        for a, k in self.token_index.items():
            x = rows[a]
            for o, row, b in zip(net.W_ih.outputs, net.W_ih.weights, net.W_ih.bias, strict=True):
                q = (
                    b
                    + b_hh[o]
                    + sum(
                        (
                            w * x.get(i, Fraction(0))
                            for i, w in zip(net.W_ih.inputs, row, strict=True)
                        ),
                        Fraction(0),
                    )
                )
                um[k, outputs[o]], ur[k, outputs[o]] = _const(q)
                exact[a][outputs[o]] = q
        self.drive = MR(um, ur)
        self.drive_exact = exact
        """Each symbol's drive u_a as Fractions (by output index)."""
        no_bias = Affine(
            inputs=net.W_hh.inputs,
            outputs=net.W_hh.outputs,
            weights=net.W_hh.weights,
            bias=(Fraction(0),) * len(net.W_hh.outputs),
        )
        self.recurrent = _compile_linear(torch, no_bias, hidden)
        self.readout = _compile_linear(torch, net.W_y, hidden)

    def _nearest(self, a: MR) -> Any:
        """A lower bound of min |x| over each interval [m − r, m + r] (0 where it holds 0)."""
        return ((a.am - a.r) * (1 - 4 * U)).clamp_min(0.0)

    def tanh(self, a: MR) -> MR:
        torch = self.torch
        m = torch.tanh(a.m)
        # the largest slope over the interval: tanh′(x) = sech²(x) = 4e/(1 + e)² (e = exp(−2|x|)) is
        # largest where |x| is smallest; a few ulps of that formula's error are covered 2^20 times over
        e = torch.exp(-2.0 * self._nearest(a))
        slope = (4.0 * e / (1.0 + e) ** 2 * (1 + 2.0**-30)).clamp_max(1.0) + 2.0**-1000
        return MR(m, _grow(slope * a.r + LIBM_REL * (1 + 2.0**-39) * m.abs(), 3))

    def logistic(self, a: MR) -> MR:
        torch = self.torch
        m = 1.0 / (1.0 + torch.exp(-a.m))
        e = torch.exp(
            -self._nearest(a)
        )  # σ′(x) = e/(1 + e)² with e = exp(−|x|), largest where |x| is smallest
        slope = (e / (1.0 + e) ** 2 * (1 + 2.0**-30)).clamp_max(0.25) + 2.0**-1000
        return MR(m, _grow(slope * a.r + (LIBM_REL + 3 * U) * (1 + 2.0**-39) * m, 4))

    def logits(self, tokens: Any, n_tokens: int) -> MR:
        """The logit enclosure of every row of ``tokens`` (``[B, m]`` symbol indices, m = ``n_tokens``)."""
        torch = self.torch
        B, H = tokens.shape[0], len(self.net.hidden)
        h = MR(torch.zeros(B, H, dtype=torch.float64), torch.zeros(B, H, dtype=torch.float64))
        c = MR(torch.zeros(B, H, dtype=torch.float64), torch.zeros(B, H, dtype=torch.float64))
        for t in range(n_tokens):
            u = tokens[:, t]
            z = Enclosure.add(
                _apply_linear(self.recurrent, h), MR(self.drive.m[u], self.drive.r[u])
            )
            if self.lstm:
                i, f, g, o = (
                    MR(z.m[:, k * H : (k + 1) * H], z.r[:, k * H : (k + 1) * H]) for k in range(4)
                )
                c = Enclosure.add(
                    Enclosure.mul(self.logistic(f), c),
                    Enclosure.mul(self.logistic(i), self.tanh(g)),
                )
                h = Enclosure.mul(self.logistic(o), self.tanh(c))
            elif self.net.activation == "relu":  # type: ignore[union-attr]
                h = MR(z.m.clamp_min(0.0), z.r)
            else:
                h = self.tanh(z)
        y = _apply_linear(self.readout, h)
        return MR(y.m[:, 0], y.r[:, 0])


def _compile_linear(
    torch: Any, a: Affine, names: dict[str, int], narrowed: bool = False
) -> _Linear:
    """``a`` as dense matrices over the whole vector ``names`` (zero rows for unread names;
    ``narrowed``: an input not in ``names`` is exactly 0 and its weights are dropped)."""
    k = len(a.inputs)
    wm = torch.zeros(len(names), len(a.outputs), dtype=torch.float64)
    wr = torch.zeros_like(wm)
    seen: dict[Fraction, tuple[float, float]] = {}  # compiled (tracr) weights repeat a few values
    for o, row in enumerate(a.weights):
        for i, w in zip(a.inputs, row, strict=True):
            if w and (not narrowed or i in names):  # a zero weight is (0, 0), as already there
                c = seen.get(w)
                if c is None:
                    c = seen[w] = _const(w)
                wm[names[i], o], wr[names[i], o] = c
    bm = torch.tensor([_const(b)[0] for b in a.bias], dtype=torch.float64)
    br = torch.tensor([_const(b)[1] for b in a.bias], dtype=torch.float64)
    g = _gamma(k + 1)
    lin = _Linear(
        a.inputs,
        a.outputs,
        wm,
        torch.cat(((wm.abs() + wr) * (1 + 4 * U), (wr + g * wm.abs()) * (1 + 4 * U)), 0),
        bm,
        (br + g * bm.abs()) * (1 + 4 * U),
        k,
    )
    nonzero = (wm != 0) | (wr != 0)
    rows = nonzero.any(1).nonzero().flatten()
    cols = (nonzero.any(0) | (bm != 0) | (br != 0)).nonzero().flatten()
    if 2 * len(rows) <= wm.shape[0] or 2 * len(cols) <= wm.shape[1]:  # worth a gather
        some = None if len(cols) == wm.shape[1] else cols  # None: every output written

        def pick(t: Any, idx: Any, dim: int) -> Any:
            return t if idx is None else t.index_select(dim, idx).contiguous()

        n_in = wm.shape[0]
        lin.part = (
            rows,
            some,
            pick(pick(lin.wm, rows, 0), some, 1),
            pick(pick(lin.c12, torch.cat((rows, rows + n_in)), 0), some, 1),
            pick(lin.bm, some, 0),
            pick(lin.br, some, 0),
        )
    return lin


def _bmm(torch: Any, a: Any, b: Any) -> Any:
    """``a @ b`` (``[..., n, k] @ [..., k, p]``). An inner dimension under 8 is padded with
    zeros in both factors (each added product is exactly 0, so the float sum and its a-priori
    bound over the k real terms are unchanged), an output dimension under 8 with zero columns
    of ``b`` that are dropped: the library's batched product over dimensions under 8 takes a
    path several times slower than over 8 (a compiled program's heads read a few coordinates)."""
    k, p = a.shape[-1], b.shape[-1]
    if k == 0 or (k >= 8 and p >= 8):
        return a @ b
    if k < 8:
        a = torch.cat((a, a.new_zeros((*a.shape[:-1], 8 - k))), -1)
        b = torch.cat((b, b.new_zeros((*b.shape[:-2], 8 - k, p))), -2)
    if p < 8:
        b = torch.cat((b, b.new_zeros((*b.shape[:-1], 8 - p))), -1)
        return (a @ b)[..., :p]
    return a @ b


def add_up(torch: Any, a: Any, b: Any) -> Any:
    """An upper bound of a + b (float tensors): the rounded sum, one ulp up where Knuth's TwoSum
    shows that rounding went down (so that an exact sum stays exact)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    up = torch.where(err > 0, torch.nextafter(s, torch.full_like(s, math.inf)), s)
    big = torch.finfo(s.dtype).max
    return torch.where(torch.isneginf(up) & torch.isfinite(a) & torch.isfinite(b), -big, up)


def add_down(torch: Any, a: Any, b: Any) -> Any:
    """A lower bound of a + b (see :func:`add_up`)."""
    return -add_up(torch, -a, -b)


def from_bounds(torch: Any, lo: Any, hi: Any) -> MR:
    """The intervals [lo, hi] (float tensors, lo <= hi) as midpoints and radii that enclose them:
    the midpoint rounded to nearest, the radius the half-width rounded up (exact where it is)."""
    m = lo + (hi - lo) / 2
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    r = torch.maximum(add_up(torch, hi, -m), add_up(torch, m, -lo))
    return MR(m, r.nan_to_num(math.inf, math.inf, math.inf))


def _apply_linear(lin: _Linear, x: MR) -> MR:
    """The enclosure of ``lin`` applied to ``x`` (see :meth:`Enclosure.affine`)."""
    if lin.part is None:
        m = x.m @ lin.wm + lin.bm
        r = _grow(_torch().cat((x.r, x.am), -1) @ lin.c12 + lin.br, 2 * lin.k + 1)
        return MR(m, r)
    y, cols = _apply_part(lin, x)
    if lin.part[1] is None:
        return y
    shape = (*x.m.shape[:-1], lin.wm.shape[1])
    m, r = x.m.new_zeros(shape), x.m.new_zeros(shape)  # outputs never written: exactly 0
    m[..., cols], r[..., cols] = y.m, y.r
    return MR(m, r)


def _apply_part(lin: _Linear, x: MR) -> tuple[MR, Any]:
    """``lin`` applied to ``x`` on the outputs it writes only: their enclosure and their
    indices. The others are exactly 0."""
    if lin.part is None:
        return _apply_linear(lin, x), range(lin.wm.shape[1])
    rows, cols, wm, c12, bm, br = lin.part
    xm, xr = x.m.index_select(-1, rows), x.r.index_select(-1, rows)
    pm = xm @ wm + bm
    # x_r·c1 + |x_m|·c2 + b_r as one sum of 2k + 1 nonnegative terms (at most: a part reads at
    # most the row's k inputs, an input never read adds exactly 0)
    pr = _grow(_torch().cat((xr, xm.abs()), -1) @ c12 + br, 2 * lin.k + 1)
    return MR(pm, pr), (range(lin.wm.shape[1]) if cols is None else cols.tolist())


def compile_enclosure(net: Network | RNNRecognizerIR) -> Enclosure | RNNEnclosure:
    """The batched enclosure of ``net`` (an :class:`EnclosureError` names a block it does not cover)."""
    if isinstance(net, (ElmanRecognizer, LSTMRecognizer)):
        return RNNEnclosure(net)
    return Enclosure(net)
