"""A linear relaxation (CROWN-style back-substitution) of a transformer's layers after its last
attention layer, at the readout row, over sets of words (:class:`TailRelaxation`).

Interval bound propagation (:mod:`.wordset`) bounds every coordinate of a vector on its own: a
softmax head's output gets, per coordinate, the extreme weighted average of its values, each
with its own weights, and a layer norm over that box is the whole layer-norm box. Here a bound on
the logit is a bound on one linear functional at a time, carried back through the layers:

* an affine step x ↦ xW + b turns a functional g on its output into gWᵀ on its input (plus g·b);
* a ReLU with pre-activation h ∈ [l, u] is relaxed as in CROWN (Zhang et al. 2018): an upper
  bound of g_j·relu(h_j) is g_j·s·h_j + g_j·t (the chord s = u/(u − l), t its offset) where
  g_j ≥ 0, and g_j·α·h_j (α ∈ {0, 1}) where g_j < 0;
* a residual adds the functional on the block's input to the one the block's steps give;
* a layer norm u = Pz/σ(z) (P centres, σ = √(|Pz|²/d + ε)) keeps nothing linear: a·u =
  (Pa)·z / σ(z), so the functional (Pa) is bounded on z (recursively) and divided by σ's
  interval; σ's upper end comes from the bounds of the centred coordinates (functionals too),
  its lower end from one functional e·Pz ≤ |Pz| (e the unit direction of the centred midpoint);
  and |a·u| ≤ |Pa|·√d;
* at the last attention layer (the base) a functional g on its output row z = x + Σ_h o_h W_o
  is bounded by one weighted average per head: g_h·o_h = Σ_j α_j (g_h·v_j) with the weights α
  a softmax of the head's enclosed scores, the scalars g_h·v_j enclosed per key j (over every
  symbol a free position can hold: the alternatives of the first layer, or the interval rows of
  a later one), and the extreme weighted average over that box
  (:func:`_weighted_average_up`): the weights are the same for every
  coordinate, which interval propagation cannot say.

The relu pre-activations and the centred coordinates before each layer norm are bounded by the
same back-substitution (one functional per unit), intersected with the interval bounds.

Rigour: functionals are float64 vectors used as they are (exact reals); what rounding changes is
bounded and added to the offsets: a product gWᵀ computed in float differs from the exact one by
at most |g|·(W_r + 2⁻⁴⁰|W|) per coordinate (W_r the weights' rounding, 2⁻⁴⁰ ≥ γ_k for k ≤ 8000
terms), times the largest |x| of the step's input box; every offset and every concretized end
is padded by 2⁻⁴⁰ of the magnitudes summed (:func:`_pad`) and a tiny absolute term. The tail
must be post-residual layer norms over the whole stream, FFNs of affine and ReLU steps and a
:class:`~netproof.symbolic.ir.Classifier`; anything else (GELU, a layer norm inside an FFN, a
sub-vector layer norm) makes :attr:`TailRelaxation.supported` false and the caller keeps
interval bounds alone.

May import :mod:`.enclosure`, the IR and torch (inside functions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic.ir import FFN, Activation, Affine, AttentionLayer, Classifier, LayerNorm

from .enclosure import MR, Enclosure, add_down, add_up

__all__ = ["TailRelaxation"]

REL = 2.0**-40
TINY = 2.0**-900
TANGENTS: Any = None
"""The tangent rule's λ, as fractions of the Cauchy–Schwarz cap (a float64 tensor, set on
first use)."""


def _pad(x: Any, mag: Any) -> Any:
    """An upper bound of a float result ``x`` whose exact value is within 2⁻⁵⁰·``mag`` of it."""
    return x + (mag * REL + TINY)


@dataclass(slots=True)
class _Lin:
    """An affine map x ↦ xW + b as float matrices: wm [in, out] the nearest floats, wr their
    distance to the exact weights (rounded up); bm, br the bias."""

    wm: Any
    wr: Any
    bm: Any
    br: Any


def _compile(torch: Any, a: Affine, names: dict[str, int]) -> _Lin:
    wm = torch.zeros(len(names), len(a.outputs), dtype=torch.float64)
    wr = torch.zeros_like(wm)

    def near(q: Fraction) -> tuple[float, float]:
        f = float(q)
        d = abs(q - Fraction(f))
        return f, (0.0 if d == 0 else math.nextafter(float(d), math.inf))

    for o, row in enumerate(a.weights):
        for i, w in zip(a.inputs, row, strict=True):
            if w:
                wm[names[i], o], wr[names[i], o] = near(w)
    bias = [near(b) for b in a.bias]
    bm = torch.tensor([b[0] for b in bias], dtype=torch.float64)
    br = torch.tensor([b[1] for b in bias], dtype=torch.float64)
    return _Lin(wm, wr, bm, br)


def _back_affine(lin: _Lin, g: Any, xmax: Any) -> tuple[Any, Any]:
    """For g·(xW + b) with x's coordinates |x_i| ≤ ``xmax`` [B, 1, in]: (g', U) with
    g·(xW + b) ≤ g'·x + U (g [B, K, out]; g' [B, K, in]; U [B, K])."""
    ga = g.abs()
    gp = g @ lin.wm.T
    rho = _pad(ga @ lin.wr.T, ga @ lin.wm.abs().T)  # |g W_exactᵀ − g'| per input coordinate
    disc = rho * xmax
    b = g @ lin.bm
    u = b + (ga @ lin.br) + disc.sum(-1)
    return gp, _pad(u, (ga @ lin.bm.abs()) + (ga @ lin.br) + disc.sum(-1))


def _back_relu(g: Any, lo: Any, hi: Any) -> tuple[Any, Any]:
    """For g·relu(h) with h ∈ [lo, hi] ([B, 1, H]): (g', U) with g·relu(h) ≤ g'·h + U."""
    import torch

    lo, hi = lo.expand_as(g), hi.expand_as(g)
    active, dead = lo >= 0, hi <= 0
    cross = ~(active | dead)
    width = torch.where(cross, hi - lo, 1.0)
    s = torch.where(cross, hi / width, 0.0)  # any s is sound: t below is its offset
    t = torch.maximum(-s * lo, hi - s * hi)
    t = _pad(t, s.abs() * (lo.abs() + hi.abs()) + hi.abs()).clamp_min(0.0)
    alpha = torch.where(cross, (hi > -lo).to(g.dtype), 0.0)
    up = torch.where(active, 1.0, torch.where(dead, 0.0, s))
    low = torch.where(active, 1.0, torch.where(dead, 0.0, alpha))
    slope = torch.where(g >= 0, up, low)
    gp = g * slope
    off = torch.where((g >= 0) & cross, g * t, 0.0)
    big = torch.maximum(lo.abs(), hi.abs())
    # g·slope rounded: within 2^-53 |g'|, times |h|
    mag = off.abs() + gp.abs() * big
    return gp, _pad(off.sum(-1), mag.sum(-1))


def _dot(g: Any, x: MR) -> tuple[Any, Any]:
    """(lo, hi) of g·x over the intervals x ([B, d] rows; g [B, K, d])."""
    xm, xr = x.m.unsqueeze(1), x.r.unsqueeze(1)
    ga = g.abs()
    mid = (g * xm).sum(-1)
    rad = _pad((ga * xr).sum(-1), (ga * xm.abs()).sum(-1) + (ga * xr).sum(-1) + mid.abs())
    return mid - rad - mid.abs() * REL, mid + rad + mid.abs() * REL


class TailRelaxation:
    """The relaxation of ``enc``'s layers after its last attention layer (module docstring).

    :meth:`bound` takes what the interval forward pass computed at that layer (its input rows,
    each head's enclosed softmax weights and values, and its output) and returns (low, high)
    float64 tensors [B] enclosing the logit of every word of the set."""

    def __init__(self, enc: Enclosure) -> None:
        import torch

        self.torch = torch
        self.enc = enc
        global TANGENTS
        if TANGENTS is None:
            TANGENTS = torch.tensor([0.7**j for j in range(1, 11)], dtype=torch.float64)
        net = enc.net
        names = enc.index
        layers = list(net.layers)
        last = max(
            (i for i, s in enumerate(layers) if isinstance(s.block, AttentionLayer)), default=-1
        )
        self.last = last
        self.supported = last >= 0 and isinstance(net.readout, Classifier)
        self.why = "" if self.supported else "no attention layer"
        d = len(enc.dims)
        self.nodes: list[tuple[str, Any]] = []
        if not self.supported:
            return
        att = layers[last]
        block = att.block
        assert isinstance(block, AttentionLayer)
        heads_out = [o for h in block.heads for o in h.value.outputs]
        self.head_slices: list[slice] = []
        k = 0
        for h in block.heads:
            self.head_slices.append(slice(k, k + len(h.value.outputs)))
            k += len(h.value.outputs)
        if block.output is not None:
            self.w_o: _Lin | None = _compile(
                torch, block.output, {n: i for i, n in enumerate(heads_out)}
            )
            out_names = list(block.output.outputs)
        else:
            self.w_o = None
            out_names = heads_out
        self.cols = [names[o] for o in out_names]
        self.residual = att.residual
        if att.post_ln is not None:
            self._ln(att.post_ln)
        for sub in layers[last + 1 :]:
            blk = sub.block
            if not isinstance(blk, FFN):
                self._refuse(f"block {blk.name!r} after the last attention layer")
                return
            steps: list[tuple[str, Any]] = []
            width = names
            for st in blk.steps:
                if isinstance(st, Affine):
                    steps.append(("affine", _compile(torch, st, width)))
                    width = {o: i for i, o in enumerate(st.outputs)}
                elif isinstance(st, Activation) and st.kind == "relu":
                    steps.append(("relu", None))
                else:
                    self._refuse(
                        f"ffn {blk.name!r}: step {getattr(st, 'kind', type(st).__name__)!r}"
                    )
                    return
            if steps:
                cols = [names[o] for o in width]
            elif sub.residual:
                cols = []
            else:
                self._refuse(f"ffn {blk.name!r}: empty and not residual")
                return
            self.nodes.append(("block", (steps, cols, sub.residual)))
            if sub.post_ln is not None:
                self._ln(sub.post_ln)
        if not self.supported:
            return
        ro = net.readout
        assert isinstance(ro, Classifier)
        self.readout = _compile(torch, ro.logit, names)
        self.position = ro.position
        self.d = d

    def _refuse(self, why: str) -> None:
        self.supported = False
        self.why = why

    def _ln(self, ln: LayerNorm) -> None:
        if ln.over is not None and list(ln.over) != list(self.enc.dims):
            self._refuse("a layer norm over part of the stream")
            return
        eps = ln.eps
        lo = float(eps)
        if Fraction(lo) > eps:
            lo = math.nextafter(lo, -math.inf)
        self.nodes.append(("ln", max(lo, 0.0)))

    # ------------------------------------------------------------------ the bound

    def bound(
        self,
        x: MR,
        kept: list[tuple[Any, MR, list[MR], Any]],
        out: MR,
        names: list[str],
    ) -> tuple[Any, Any]:
        """(low, high) of the logit: ``x`` [B, n, d] the rows entering the last attention
        layer, ``kept`` per head (head, softmax weights e [B, n, n], value alternatives
        [B, n, dv], visible [n, n]), ``out`` [B, n, len(names)] its interval output."""
        torch = self.torch
        n = x.m.shape[1]
        at = self.position if self.position >= 0 else n + self.position
        self.at = at
        self.x_at = MR(x.m[:, at, :], x.r[:, at, :])
        self.kept = kept
        # the largest |head output|: the hull of the values it sees
        vmax = []
        for _, _, vs, _ in kept:
            v = torch.stack([(a.m.abs() + a.r) for a in vs]).amax(0).amax(1)  # [B, dv]
            vmax.append(v)
        self.omax = (torch.cat(vmax, -1) * (1 + REL)).unsqueeze(1)
        # forward interval boxes of the tail at row `at`
        col = self.cols
        z_m, z_r = (
            (self.x_at.m.clone(), self.x_at.r.clone())
            if self.residual
            else (torch.zeros_like(self.x_at.m), torch.zeros_like(self.x_at.r))
        )
        idx = [self.enc.index[nm] for nm in names]
        if idx != col:
            return self._open(x.m.shape[0])
        om, orr = out.m[:, at, :], out.r[:, at, :]
        if self.residual:
            s = Enclosure.add(MR(z_m[:, col], z_r[:, col]), MR(om, orr))
            z_m[:, col], z_r[:, col] = s.m, s.r
        else:
            z_m[:, col], z_r[:, col] = om, orr
        self.boxes: list[tuple[Any, Any]] = [self._ends(MR(z_m, z_r))]
        self.relu_boxes: dict[tuple[int, int], tuple[Any, Any]] = {}
        self.sigma: dict[int, tuple[Any, Any]] = {}
        self.direction: dict[int, Any] = {}
        for i, (kind, data) in enumerate(self.nodes, start=1):
            lo, hi = self.boxes[-1]
            if kind == "ln":
                self.boxes.append(self._ln_box(i, data))
            else:
                self.boxes.append(self._block_box(i, data, lo, hi))
        last = len(self.nodes)
        g = torch.ones(x.m.shape[0], 1, 1, dtype=torch.float64)
        xmax = self._xmax(last)
        gp, up = _back_affine(self.readout, g, xmax)
        gn, un = _back_affine(self.readout, -g, xmax)
        lo_t, hi_t = self._back(last, torch.cat([gp, gn], 1))
        hi = _pad(hi_t[:, 0] + up[:, 0], hi_t[:, 0].abs() + up[:, 0].abs())
        lo = -_pad(hi_t[:, 1] + un[:, 0], hi_t[:, 1].abs() + un[:, 0].abs())
        del lo_t
        bad = ~(torch.isfinite(lo) & torch.isfinite(hi))
        return lo.masked_fill(bad, -math.inf), hi.masked_fill(bad, math.inf)

    def _open(self, b: int) -> tuple[Any, Any]:
        t = self.torch
        return t.full((b,), -math.inf, dtype=t.float64), t.full((b,), math.inf, dtype=t.float64)

    def _ends(self, v: MR) -> tuple[Any, Any]:
        return add_down(self.torch, v.m, -v.r), add_up(self.torch, v.m, v.r)

    def _xmax(self, i: int) -> Any:
        lo, hi = self.boxes[i]
        return self.torch.maximum(lo.abs(), hi.abs()).unsqueeze(1)

    def _units(self, b: int, d: int) -> Any:
        return self.torch.eye(d, dtype=self.torch.float64).unsqueeze(0).expand(b, d, d)

    def _ln_box(self, i: int, eps: float) -> tuple[Any, Any]:
        """The box of node i's output (a layer norm): each coordinate a·u with a a unit vector."""
        b, d = self.boxes[i - 1][0].shape
        lo, hi = self._back(i, self._units(b, d))
        box = math.nextafter(math.sqrt(d), math.inf)
        return lo.clamp(-box, box), hi.clamp(-box, box)

    def _block_box(self, i: int, data: Any, lo: Any, hi: Any) -> tuple[Any, Any]:
        """The box of node i's output (an FFN block, residual or not), by intervals, with each
        relu's pre-activation tightened by back-substitution first."""
        enc = self.enc
        steps, cols, residual = data
        v = _mr(self.torch, lo, hi)
        y = v
        for s, (kind, lin) in enumerate(steps):
            if kind == "affine":
                y = _apply(lin, y)
            else:
                b, hdim = y.m.shape
                units = self._units(b, hdim)
                plo, phi = self._back_steps(i, steps[:s], units, lo, hi)
                ylo, yhi = self._ends(y)
                ylo, yhi = self.torch.maximum(ylo, plo), self.torch.minimum(yhi, phi)
                self.relu_boxes[(i, s)] = (ylo, yhi)
                y = _mr(self.torch, ylo.clamp_min(0.0), yhi.clamp_min(0.0))
        if residual:
            if steps:
                mm, rr = v.m.clone(), v.r.clone()
                ss = Enclosure.add(MR(v.m[:, cols], v.r[:, cols]), y)
                mm[:, cols], rr[:, cols] = ss.m, ss.r
                out = MR(mm, rr)
            else:
                out = v
        else:
            mm, rr = self.torch.zeros_like(v.m), self.torch.zeros_like(v.r)
            mm[:, cols], rr[:, cols] = y.m, y.r
            out = MR(mm, rr)
        del enc
        return self._ends(out)

    def _back_steps(
        self, i: int, steps: list[tuple[str, Any]], g: Any, lo: Any, hi: Any
    ) -> tuple[Any, Any]:
        """(lo, hi) of g·(the output of ``steps`` run on node i − 1's output)."""
        if not steps:
            return self._back(i - 1, g)
        up_g, up_u = self._chain(i, steps, g)
        dn_g, dn_u = self._chain(i, steps, -g)
        if not any(kind == "relu" for kind, _ in steps):  # dn_g = −up_g: one call
            lo_y, hi_y = self._back(i - 1, up_g)
            return lo_y - dn_u - REL * lo_y.abs() - TINY, _pad(hi_y + up_u, hi_y.abs() + up_u.abs())
        _, hi_u = self._back(i - 1, up_g)
        _, hi_d = self._back(i - 1, dn_g)
        return (
            -_pad(hi_d + dn_u, hi_d.abs() + dn_u.abs()),
            _pad(hi_u + up_u, hi_u.abs() + up_u.abs()),
        )

    def _chain(self, i: int, steps: list[tuple[str, Any]], g: Any) -> tuple[Any, Any]:
        """(g', U): g·(steps(y)) ≤ g'·y + U for every y in node i − 1's attainable set."""
        torch = self.torch
        total = torch.zeros(g.shape[:-1], dtype=torch.float64)
        mag = torch.zeros_like(total)
        # the boxes of each step's input, forward (intervals, relus tightened)
        lo, hi = self.boxes[i - 1]
        y = _mr(torch, lo, hi)
        ins: list[Any] = []
        for s, (kind, lin) in enumerate(steps):
            ylo, yhi = self._ends(y)
            ins.append(torch.maximum(ylo.abs(), yhi.abs()).unsqueeze(1))
            if kind == "affine":
                y = _apply(lin, y)
            else:
                plo, phi = self.relu_boxes[(i, s)]
                y = _mr(torch, plo.clamp_min(0.0), phi.clamp_min(0.0))
        for s in range(len(steps) - 1, -1, -1):
            kind, lin = steps[s]
            if kind == "affine":
                g, u = _back_affine(lin, g, ins[s])
            else:
                plo, phi = self.relu_boxes[(i, s)]
                g, u = _back_relu(g, plo.unsqueeze(1), phi.unsqueeze(1))
            total = total + u
            mag = mag + u.abs()
        return g, _pad(total, mag)

    def _back(self, i: int, g: Any) -> tuple[Any, Any]:
        """(lo, hi) of g·x_i over the attainable set (g [B, K, d]; node 0 is the attention
        layer's output row, before its layer norm)."""
        if i == 0:
            return self._base(g)
        kind, data = self.nodes[i - 1]
        if kind == "ln":
            return self._back_ln(i, g, data)
        steps, cols, residual = data
        lo, hi = self.boxes[i - 1]
        b, k, d = g.shape
        gs = g[..., cols]
        if steps:
            slo, shi = self._back_steps_block(i, steps, gs, residual, g)
        else:
            slo, shi = self._back(i - 1, g)
        del lo, hi, b, k, d
        return slo, shi

    def _back_steps_block(
        self, i: int, steps: list[tuple[str, Any]], gs: Any, residual: bool, g: Any
    ) -> tuple[Any, Any]:
        torch = self.torch
        up_g, up_u = self._chain(i, steps, gs)
        dn_g, dn_u = self._chain(i, steps, -gs)
        if residual:  # g·(y + f(y)) on the written columns: the functional on y adds g
            xmax = self._xmax(i - 1)
            up_g, dn_g = up_g + g, dn_g - g
            # the sums rounded: 2^-53 |sum| per coordinate, times |y|
            up_u = _pad(up_u, (up_g.abs() * xmax).sum(-1))
            dn_u = _pad(dn_u, (dn_g.abs() * xmax).sum(-1))
        if not any(kind == "relu" for kind, _ in steps):
            lo_y, hi_y = self._back(i - 1, up_g)
            return (
                lo_y - dn_u - REL * lo_y.abs() - TINY,
                _pad(hi_y + up_u, hi_y.abs() + up_u.abs()),
            )
        both = torch.cat([up_g, dn_g], 1)
        _, hi_b = self._back(i - 1, both)
        k = up_g.shape[1]
        hi_u, hi_d = hi_b[:, :k], hi_b[:, k:]
        return (
            -_pad(hi_d + dn_u, hi_d.abs() + dn_u.abs()),
            _pad(hi_u + up_u, hi_u.abs() + up_u.abs()),
        )

    def _back_ln(self, i: int, g: Any, eps: float) -> tuple[Any, Any]:
        """(lo, hi) of g·LN(z), z node i − 1's output: (Pg)·z / σ(z).

        First the quotient of N = (Pg)·z's interval by σ's; then, where an end is on the far
        side of 0 (lo < 0 or hi > 0), the tangent rule: σ(z) ≥ |Pz|/√d ≥ v·Pz/√d for a unit
        v (Cauchy–Schwarz), so g·u ≥ −λ wherever (Pg + λv/√d)·z ≥ 0 on the whole set (and
        g·u ≤ λ wherever (λv/√d − Pg)·z ≥ 0), tried for a few λ at once."""
        torch = self.torch
        b, k, d = g.shape
        sqd = math.sqrt(d) * (1 + REL)
        gc = g - g.mean(-1, keepdim=True)  # g·u = gc·u + δ·u, |δ_i| <= 2^-52 |gc_i|, |u_i| <= √d
        err = (gc.abs().sum(-1) * sqd) * 2.0**-51 + TINY
        zmax = self._xmax(i - 1).amax(-1)  # [B, 1]
        slo, shi = self._sigma(i, eps)
        v = self.direction[i]  # [B, 1, d], centred, |v| <= 1
        cap = _pad(gc.norm(dim=-1) * sqd, gc.abs().sum(-1) * sqd) + err
        # the tangent rule multiplies the functionals by 1 + 2T: at the layer norm next to the
        # attention layer (nothing below it to multiply) and for the logit's own two
        tangents = TANGENTS if i == 1 else TANGENTS[:0]
        lam = cap.unsqueeze(-1) * tangents  # [B, K, T]
        vs = (v / sqd).unsqueeze(2)  # [B, 1, 1, d]
        low_f = gc.unsqueeze(2) + lam.unsqueeze(-1) * vs  # [B, K, T, d]
        high_f = lam.unsqueeze(-1) * vs - gc.unsqueeze(2)
        t = tangents.shape[0]
        funcs = torch.cat([gc, low_f.reshape(b, k * t, d), high_f.reshape(b, k * t, d)], 1)
        # f·Pz = f·z − μ·Σf: μ within the box's largest |z|; the products λ·v rounded
        fsum = funcs.sum(-1)
        fabs = funcs.abs().sum(-1)
        mu_err = _pad((fsum.abs() + fabs * REL) * zmax, zmax * fabs)
        flo, fhi = self._back(i - 1, funcs)
        flo = flo - mu_err - REL * flo.abs() - TINY
        fhi = _pad(fhi + mu_err, fhi.abs())
        nlo, nhi = flo[:, :k], fhi[:, :k]
        inf = torch.tensor(math.inf, dtype=torch.float64)
        cands = torch.stack([nlo / slo, nlo / shi, nhi / slo, nhi / shi])
        qlo = cands.amin(0)
        qhi = cands.amax(0)
        qlo = torch.nextafter(qlo - qlo.abs() * REL - err, -inf)
        qhi = torch.nextafter(qhi + qhi.abs() * REL + err, inf)
        qlo = torch.maximum(qlo.nan_to_num(-math.inf, -math.inf, -math.inf), -cap)
        qhi = torch.minimum(qhi.nan_to_num(math.inf, math.inf, math.inf), cap)
        if t == 0:
            return qlo, qhi
        # the tangent rule: the smallest λ whose functional is >= 0 on the set
        ok_lo = flo[:, k : k + k * t].reshape(b, k, t) >= 0
        ok_hi = flo[:, k + k * t :].reshape(b, k, t) >= 0
        big = torch.full_like(lam, math.inf)
        lam_up = torch.nextafter(lam * (1 + REL) + TINY, inf)
        tl = torch.where(ok_lo, lam_up, big).amin(-1) + err
        th = torch.where(ok_hi, lam_up, big).amin(-1) + err
        return torch.maximum(qlo, -tl), torch.minimum(qhi, th)

    def _sigma(self, i: int, eps: float) -> tuple[Any, Any]:
        """(lo, hi) [B, 1] of σ(z) = √(|Pz|²/d + ε) over node i − 1's attainable set (and the
        unit direction of the centred midpoint, kept for the tangent rule)."""
        hit = self.sigma.get(i)
        if hit is not None:
            return hit
        torch = self.torch
        lo, hi = self.boxes[i - 1]
        b, d = lo.shape
        units = self._units(b, d)
        centred = units - 1.0 / d  # P e_i (each entry within 2^-53 of the exact one)
        clo, chi = self._back(i - 1, centred)
        zmax = self._xmax(i - 1).amax(-1)
        slack = zmax * d * 2.0**-50 + TINY  # the centring's rounding, times Σ|z_j|
        clo, chi = clo - slack, chi + slack
        far = torch.maximum(clo.abs(), chi.abs())
        near = torch.where((clo > 0) | (chi < 0), torch.minimum(clo.abs(), chi.abs()), 0.0)
        var_hi = _pad((far * far).sum(-1, keepdim=True) / d, (far * far).sum(-1, keepdim=True))
        s_hi = _pad(torch.sqrt(var_hi + eps * (1 + REL) + TINY), var_hi.sqrt() + 1.0)
        # |Pz| >= e·Pz for |e| <= 1: e the centred midpoint's direction
        mid = (lo + hi) / 2
        pm = mid - mid.mean(-1, keepdim=True)
        norm = pm.norm(dim=-1, keepdim=True)
        e = torch.where(norm > 0, pm / (norm * (1 + 2 * REL)), 0.0)
        e = e - e.mean(-1, keepdim=True)  # e·z of a centred e is e·Pz up to μ·Σe
        e = e / (1 + 2 * REL)
        self.direction[i] = e.unsqueeze(1)
        elo, _ = self._back(i - 1, e.unsqueeze(1))
        esum = (e.sum(-1, keepdim=True).abs() + e.abs().sum(-1, keepdim=True) * REL) * zmax
        p_lo = (elo - esum - elo.abs() * REL - TINY).clamp_min(0.0)
        # or |Pz|² >= Σ (the distance of 0 to each centred coordinate's interval)²
        n2 = ((near * near).sum(-1, keepdim=True) * (1 - REL)).sqrt() * (1 - REL)
        p_lo = torch.maximum(p_lo, n2)
        var_lo = (p_lo * p_lo / d) * (1 - REL)
        s_lo = torch.sqrt(var_lo + eps) * (1 - REL)
        hit = self.sigma[i] = (s_lo, s_hi)
        return hit

    def _base(self, g: Any) -> tuple[Any, Any]:
        """(lo, hi) of g·z, z = x + the heads' output at the readout row (node 0)."""
        torch = self.torch
        lo = torch.zeros(g.shape[:-1], dtype=torch.float64)
        hi = torch.zeros_like(lo)
        if self.residual:
            lo, hi = _dot(g, self.x_at)
        gs = g[..., self.cols]
        if self.w_o is not None:
            up_g, up_u = _back_affine(self.w_o, gs, self.omax)
            dn_g, dn_u = _back_affine(self.w_o, -gs, self.omax)
        else:
            up_g, dn_g = gs, -gs
            up_u = dn_u = torch.zeros_like(lo)
        k = g.shape[1]
        both = self._heads(torch.cat([up_g, dn_g], 1))
        h_up, h_dn = both[:, :k], both[:, k:]
        top = _pad(hi + h_up + up_u, hi.abs() + h_up.abs() + up_u.abs())
        bottom = -_pad(-lo + h_dn + dn_u, lo.abs() + h_dn.abs() + dn_u.abs())
        return bottom, top

    def _heads(self, g: Any) -> Any:
        """An upper bound of g·(the heads' concatenated outputs) at the readout row: per head
        the extreme weighted average of the scalars g_h·v_j."""
        torch = self.torch
        total = torch.zeros(g.shape[:-1], dtype=torch.float64)
        mag = torch.zeros_like(total)
        at = self.at
        for (_, e, vs, visible), sl in zip(self.kept, self.head_slices, strict=True):
            gh = g[..., sl]  # [B, K, dv]
            ga = gh.abs()
            top = None
            for v in vs:
                p = torch.einsum("bnd,bkd->bnk", v.m, gh)
                r = torch.einsum("bnd,bkd->bnk", v.r, ga)
                m = torch.einsum("bnd,bkd->bnk", v.m.abs(), ga)
                t = _pad(p + r, m + r + p.abs())
                top = t if top is None else torch.maximum(top, t)
            assert top is not None
            w = _weighted_average_up(e.m[:, at, :], e.r[:, at, :], top, visible[at])  # [B, K]
            total = total + w
            mag = mag + w.abs()
        return _pad(total, mag)


def _weighted_average_up(em: Any, er: Any, vu: Any, visible: Any) -> Any:
    """An upper bound [B, K] of Σ_j e_j v_j / Σ_j e_j over every weight e_j in [em − er,
    em + er] ([B, n]) and every v_j <= vu_j ([B, n, K]: K functionals' values at once), for one
    query whose visible keys are ``visible`` [n].

    The rule of :meth:`.enclosure.Enclosure._weighted_average`, for one query row: the maximum
    over the box is the largest of the ratios that put the upper ends of the weights on the t
    largest values and the lower ends on the rest; that candidate is computed in float and then
    proved (Σ_j e_j (v_j − U) <= 0 for every e, v in the box, each term rounded upward and the
    sum's error bound added); where the proof fails the bound is +∞."""
    import torch

    inf = torch.tensor(math.inf, dtype=vu.dtype)
    vu = torch.nextafter(vu, inf)
    a = torch.where(visible, torch.nextafter(em - er, -inf).clamp_min(0.0), 0.0).unsqueeze(-1)
    b = torch.where(visible, torch.nextafter(em + er, inf), 0.0).unsqueeze(-1)
    n = vu.shape[1]
    vals = torch.where(visible.unsqueeze(-1), vu, 0.0)  # [B, n, K]
    order = vals.argsort(dim=1, descending=True)
    vs = vals.gather(1, order)
    as_ = a.expand_as(vals).gather(1, order)
    bs = b.expand_as(vals).gather(1, order)
    zero = torch.zeros_like(vs[:, :1])
    cb = torch.cat([zero, (bs * vs).cumsum(1)], 1)
    cbd = torch.cat([zero, bs.cumsum(1)], 1)
    ca = torch.cat([zero, (as_ * vs).cumsum(1)], 1)
    cad = torch.cat([zero, as_.cumsum(1)], 1)
    num = cb + (ca[:, -1:] - ca)
    den = cbd + (cad[:, -1:] - cad)
    ratio = torch.where(den > 0, num / den, -inf).nan_to_num(math.inf, math.inf, -math.inf)
    cand = ratio.amax(1)  # [B, K]
    cand = cand + cand.abs() * REL + TINY
    d = torch.nextafter(vals - cand.unsqueeze(1), inf)
    terms = torch.nextafter(torch.where(d > 0, b * d, a * d), inf)
    terms = torch.where(visible.unsqueeze(-1), terms, 0.0)
    u = 2.0**-53
    gamma = (n * u / (1 - n * u)) * (1 + 4 * u)
    total = terms.sum(1) + 2.0 * gamma * terms.abs().sum(1) * (1 + 8 * u)
    ok = (total <= 0) & torch.isfinite(total) & torch.isfinite(cand)
    return torch.where(ok, cand, inf)


def _mr(torch: Any, lo: Any, hi: Any) -> MR:
    from .enclosure import from_bounds

    return from_bounds(torch, lo, hi)


def _apply(lin: _Lin, y: MR) -> MR:
    """The interval image of y under the compiled affine map (rounded outward)."""
    m = y.m @ lin.wm + lin.bm
    r = y.r @ (lin.wm.abs() + lin.wr) + y.m.abs() @ lin.wr + lin.br
    r = _pad(r, y.m.abs() @ lin.wm.abs() + lin.bm.abs() + r + m.abs())
    return MR(m, r)
