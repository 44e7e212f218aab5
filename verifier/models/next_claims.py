"""A construction's next-symbol claim checked by the per-position engine
(:func:`~netproof.verifier.models.sequence.check_sequence`): :func:`check_next_sets`.

A generator (a network with a :class:`~netproof.symbolic.NextSymbols` readout, e.g. Yao et
al.'s Dyck generator) predicts at every position the set of symbols that may come next. Its
claims are checked by the exhaustive checker along the prefixes of the language; here the same
question goes through the engine of ``check-model --output next-set``: every word up to a
length, every word position, rigorously. Two things the engine's float enclosure lacks are
added in :class:`NextSetEnclosure`, a subclass of
:class:`~netproof.verifier.models.enclosure.Enclosure`:

- **Hardmax heads** (any tie rule, dot scoring, the five masks, ``empty="zero"``): the keys
  whose score's upper bound reaches the largest lower bound are the candidates, a superset of
  the true maximizers; the head's output is enclosed by the hull of the candidates' values
  (exact when one candidate is left; an average over, or the leftmost/rightmost of, any
  nonempty subset of them lies in that hull). A near-tie that the enclosure cannot separate
  widens the output, and a position it makes undecided is listed, never decided.
- **A softmax readout** (probabilities ∝ exp(κ·score), κ = ln r or c): each symbol's
  probability p_s = 1/Σ_j exp(κ(x_j − x_s)) is enclosed (the enclosure's exp and division)
  and written into a dim ``prob:SYMBOL`` of a view of the network; the symbol may come next
  where p_s > the readout's threshold. (The slow rigorous interpreter runs the view's layers,
  not this step, so a position left open stays undecided there.)

The view (:func:`next_set_view`) is the network with those dims and a
:class:`~netproof.symbolic.Classifier` readout over the symbols' values, as the engine reads a
next-set output. The IR allows a symbol whose value is >= the threshold; the engine decides
> the threshold where the enclosure is strictly on one side, so a value exactly at the
threshold is undecided there, never decided otherwise. The engine checks the word positions
(after the prefix tokens): position p of word w predicts after w[:p+1]; the prediction after
the empty prefix (at the prefix token) is not one of them.

May import the IR, the claims vocabulary and the engine (:mod:`.sequence`, :mod:`.enclosure`);
torch inside functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic.ir import (
    Affine,
    AttentionLayer,
    Classifier,
    Hardmax,
    Network,
    NextSymbols,
    Softmax,
)

from .enclosure import (
    LIBM_REL,
    MR,
    Enclosure,
    EnclosureError,
    add_down,
    add_up,
    from_bounds,
)
from .sequence import SequenceReport, check_sequence

__all__ = ["NextSetEnclosure", "check_next_sets", "next_set_view"]

MASKS = ("none", "causal", "strict_causal", "anticausal", "strict_anticausal")


def next_set_view(net: Network) -> tuple[Network, tuple[str, ...], tuple[str, ...], Fraction]:
    """The view of generator ``net`` that the engine reads: (the view, the symbols, the dims
    holding their values, the threshold). Without a softmax the values are the score dims;
    with one they are new dims ``prob:SYMBOL`` (filled by :class:`NextSetEnclosure`)."""
    ro = net.readout
    if not isinstance(ro, NextSymbols):
        raise EnclosureError(
            f"network {net.name!r} has a {type(ro).__name__} readout, not NextSymbols: check it "
            "with check_model (accept/reject) or check_sequence"
        )
    symbols = tuple(s for s, _ in ro.scores)
    values = (
        tuple(d for _, d in ro.scores)
        if ro.softmax is None
        else tuple(f"prob:{s}" for s in symbols)
    )
    extra = tuple(d for d in values if d not in net.dims)
    view = Network(
        name=net.name,
        dims=(*net.dims, *extra),
        embedding=net.embedding,
        layers=net.layers,
        readout=Classifier(
            logit=Affine(
                inputs=values,
                outputs=("logit",),
                weights=(tuple(Fraction(1) for _ in values),),
                bias=(Fraction(0),),
            ),
            position=-1,
        ),
        params=net.params,
        reference=net.reference,
    )
    return view, symbols, values, ro.threshold


class NextSetEnclosure(Enclosure):
    """The engine's enclosure with hardmax heads and a softmax readout's probabilities (see the
    module docstring). ``readout`` is the generator's own readout."""

    def __init__(self, view: Network, readout: NextSymbols) -> None:
        super().__init__(view)
        self.readout = readout

    def _check(self, block: object) -> None:
        if not isinstance(block, AttentionLayer):
            super()._check(block)
            return
        for h in block.heads:
            if isinstance(h.normalizer, Softmax):
                super()._check(AttentionLayer(name=block.name, heads=(h,)))
                continue
            if h.scoring != "dot" or h.relative or h.mask not in MASKS or h.empty != "zero":
                raise EnclosureError(
                    f"attention {block.name!r} head {h.name!r}: hardmax is enclosed for dot "
                    f"scoring without relative terms and empty='zero' (got scoring={h.scoring!r}, "
                    f"mask={h.mask!r}, empty={h.empty!r})"
                )

    def _hardmax(self, head: Any, x: MR) -> MR:
        torch = self.torch
        q = self.affine(head.query, x, self.index)
        k = self.affine(head.key, x, self.index)
        v = self.affine(head.value, x, self.index)
        s = self.matmul(q, MR(k.m.transpose(-1, -2), k.r.transpose(-1, -2)))  # [B, n, n]
        slo, shi = add_down(torch, s.m, -s.r), add_up(torch, s.m, s.r)
        n = x.m.shape[-2]
        i = torch.arange(n).unsqueeze(1)
        j = torch.arange(n).unsqueeze(0)
        visible = {
            "none": torch.ones(n, n, dtype=torch.bool),
            "causal": j <= i,
            "strict_causal": j < i,
            "anticausal": j >= i,
            "strict_anticausal": j > i,
        }[head.mask]
        best = slo.masked_fill(~visible, -math.inf).amax(-1, keepdim=True)
        candidates = (visible & (shi >= best)).unsqueeze(-1)  # [B, n, n, 1]
        vlo = add_down(torch, v.m, -v.r).unsqueeze(1)  # [B, 1, n, dv]
        vhi = add_up(torch, v.m, v.r).unsqueeze(1)
        lo = vlo.masked_fill(~candidates, math.inf).amin(2)
        hi = vhi.masked_fill(~candidates, -math.inf).amax(2)
        empty = ~candidates.any(2)  # no visible key: the zero vector
        lo = torch.where(empty, torch.zeros_like(lo), lo)
        hi = torch.where(empty, torch.zeros_like(hi), hi)
        return from_bounds(torch, lo, hi)

    def attention(
        self, block: AttentionLayer, x: MR, alternatives: list[MR] | None = None
    ) -> tuple[list[str], MR]:
        if not any(isinstance(h.normalizer, Hardmax) for h in block.heads):
            return super().attention(block, x, alternatives)
        if alternatives is not None:
            raise EnclosureError(
                f"attention {block.name!r}: hardmax heads are not enclosed over sets of words"
            )
        torch = self.torch
        ms, rs, names = [], [], []
        for h in block.heads:
            if isinstance(h.normalizer, Hardmax):
                o = self._hardmax(h, x)
                names += list(h.value.outputs)
            else:
                got, o = super().attention(AttentionLayer(name=block.name, heads=(h,)), x)
                names += got
            ms.append(o.m)
            rs.append(o.r)
        cat = MR(torch.cat(ms, -1), torch.cat(rs, -1))
        if block.output is not None:
            # a softmax head's value dims never written are exactly 0 and left out of names
            return list(block.output.outputs), self.affine(
                block.output, cat, {nm: p for p, nm in enumerate(names)}, narrowed=True
            )
        return names, cat

    def residual(self, tokens: Any, n_tokens: int) -> MR:
        x = super().residual(tokens, n_tokens)
        nz = self.readout.softmax
        if nz is None:
            return x
        torch = self.torch
        if nz.r is not None:  # κ = ln r: libm's error, and ln's change from r to its float
            fr = float(nz.r)
            km = math.log(fr)
            shift = abs(nz.r - Fraction(fr)) / min(nz.r, Fraction(fr))
            kr = (abs(km) * (LIBM_REL + 2.0**-52) + float(shift)) * (1 + 2.0**-50)
        else:
            assert nz.c is not None  # a Softmax has r or c
            km = float(nz.c)
            kr = float(abs(nz.c - Fraction(km))) * (1 + 2.0**-50) + 2.0**-1074
        kappa = MR(torch.tensor(km, dtype=torch.float64), torch.tensor(kr, dtype=torch.float64))
        cols = [self.index[d] for _, d in self.readout.scores]
        sm, sr = x.m[..., cols], x.r[..., cols]  # [B, n, K]
        m, r = x.m.clone(), x.r.clone()
        for c, (symbol, _) in enumerate(self.readout.scores):
            diff = self.add(MR(sm, sr), MR(-sm[..., c : c + 1], sr[..., c : c + 1]))
            e = self.exp(self.mul(diff, kappa))  # exp(κ(x_j − x_s)), [B, n, K]
            p = self.div(
                MR(torch.ones_like(e.m[..., :1]), torch.zeros_like(e.m[..., :1])),
                self.total(e, -1),
                f"the probability of {symbol!r}",
            )
            at = self.index[f"prob:{symbol}"]
            m[..., at], r[..., at] = p.m[..., 0], p.r[..., 0]
        return MR(m, r)


def check_next_sets(
    net: Network,
    reference: Callable[[tuple[str, ...]], Sequence[Any]],
    *,
    max_n: int,
    min_n: int = 1,
    reference_name: str = "reference",
    batch: int = 1024,
) -> SequenceReport:
    """Check generator ``net``'s next-symbol sets against ``reference`` (a word to the set of
    allowed next symbols after each of its prefixes w[:p+1], ``None``: not checked) on every
    word of length ``min_n..max_n``, with the per-position engine (see the module docstring)."""
    view, symbols, values, threshold = next_set_view(net)
    readout = net.readout
    assert isinstance(readout, NextSymbols)  # next_set_view
    unembed = [tuple(Fraction(int(d == e)) for d in values) for e in values]
    return check_sequence(
        view,
        reference,
        unembed=unembed,
        values=list(symbols),
        max_n=max_n,
        min_n=min_n,
        reference_name=reference_name,
        batch=batch,
        threshold=threshold,
        enclosure=NextSetEnclosure(view, readout),
        # the slow interpreter would read the view's prob dims as 0: none for a softmax readout
        slow=readout.softmax is None,
    )
