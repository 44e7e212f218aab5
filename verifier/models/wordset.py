"""Bounds over sets of words: a rigorous enclosure of a recognizer's logit over **every**
completion of a prefix to a length, in one evaluation (:class:`WordSetBound`).

Each free position's input is any of the alphabet's embeddings: the enclosure gets one more
table row, the interval hull of the alphabet's rows (for a transformer its token embeddings, for
an RNN recognizer its input drives W_ih x_a + b), and the batched midpoint–radius arithmetic of
:mod:`.enclosure` carries it through attention, softmax, layer norm, FFNs and the readout (every
operation there is an interval operation with outward rounding, sound for wide intervals as for
the rounding radii of one word). A softmax head's output is a convex combination of the values
it sees, so for sets of words each head's output is intersected with the hull of those values
(:meth:`.enclosure.Enclosure._within_values`); the quotient of separately enclosed sums alone is
loose (or unbounded) once scores are wide.

Interval bound propagation only: the bound treats the free positions as independent boxes (two
positions, or a position's query and its value, that are the same symbol in every word are not
tied), so it is loose where the model's logit depends on the free positions; it is meant for
the subtrees of the word trie whose completions the model (nearly) ignores, as branch and bound
(:mod:`.bnb`) uses it.

May import :mod:`.enclosure` (torch inside functions).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic.ir import TokenEmbedding

from .enclosure import MR, Enclosure, RNNEnclosure, add_down, add_up, from_bounds, require_torch
from .relax import TailRelaxation

__all__ = ["WordSetBound"]


def _down(q: Fraction) -> float:
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


def _up(q: Fraction) -> float:
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _hull(torch: Any, rows: Sequence[Sequence[Fraction]]) -> MR:
    """The interval hull of exact rows (one per symbol, the same length) as one row ``[1, d]``:
    the exact minimum and maximum of each column rounded outward (exact where a float holds
    them), then as midpoint and radius (:func:`.enclosure.from_bounds`)."""
    lo = torch.tensor([[_down(min(col)) for col in zip(*rows, strict=True)]], dtype=torch.float64)
    hi = torch.tensor([[_up(max(col)) for col in zip(*rows, strict=True)]], dtype=torch.float64)
    return from_bounds(torch, lo, hi)


class WordSetBound:
    """The logit's enclosure over every completion of prefixes (see the module docstring).

    ``bound(prefixes, length)`` takes prefixes of one length m (tuples of symbol indices into
    ``alphabet``) and the words' length n >= m and returns (low, high) float64 tensors: for each
    prefix p, every word p·s with |s| = n − m has a logit in [low, high]."""

    def __init__(self, enclosure: Enclosure | RNNEnclosure, alphabet: Sequence[str]) -> None:
        torch = require_torch()
        self.torch = torch
        self.alphabet = tuple(alphabet)
        self.ids = [enclosure.token_index[a] for a in self.alphabet]
        enc: Enclosure | RNNEnclosure
        if isinstance(enclosure, RNNEnclosure):
            rnn = copy.copy(enclosure)  # the per-word enclosure is left as it is
            dr = enclosure.drive
            row = _hull(torch, [enclosure.drive_exact[a] for a in self.alphabet])
            rnn.drive = MR(torch.cat([dr.m, row.m]), torch.cat([dr.r, row.r]))
            self.free = dr.m.shape[0]
            self.pre: list[int] = []
            self.suf: list[int] = []
            enc = rnn
        else:
            tf = copy.copy(enclosure)
            t = enclosure.table
            emb = enclosure.net.embedding
            assert isinstance(emb, TokenEmbedding)  # Enclosure checks it
            table: dict[str, dict[str, Fraction]] = {}
            for tok, entries in emb.table:
                into = table.setdefault(tok, {})
                for dim, v in entries:
                    into[dim] = into.get(dim, Fraction(0)) + v
            row = _hull(
                torch,
                [[table[a].get(dim, Fraction(0)) for dim in enclosure.dims] for a in self.alphabet],
            )
            tf.table = MR(torch.cat([t.m, row.m]), torch.cat([t.r, row.r]))
            tf._positions = {}
            tf.word_sets = True
            self.free = t.m.shape[0]
            self.pre = [enclosure.token_index[s] for s in emb.prefix]
            self.suf = [enclosure.token_index[s] for s in emb.suffix]
            enc = tf
        self.enclosure = enc
        self.symbolic = True
        """Keep free positions as alternatives up to the first attention layer (else: boxes)."""
        self.relax: TailRelaxation | None = None
        """Where set: the logit's bound is also taken by the linear relaxation of the layers
        after the last attention layer (:mod:`.relax`), and the two enclosures intersected."""
        self.relaxed: tuple[Any, Any] | None = None
        """The last :meth:`bound`'s relaxed enclosure (low, high), where it was computed (with
        ``lazy``: (−∞, ∞) on the sets it was not computed for)."""
        self.lazy = True
        """Compute the relaxation only for the sets whose interval bound contains 0 (the sign
        of the others is known already: that is all branch and bound asks of a bound)."""

    def use_relaxation(self, on: bool = True) -> bool:
        """Turn the linear relaxation on (where the network's tail is covered, see
        :class:`.relax.TailRelaxation`); returns whether it is on."""
        self.relax = None
        if on and isinstance(self.enclosure, Enclosure):
            tail = TailRelaxation(self.enclosure)
            self.relax = tail if tail.supported else None
        return self.relax is not None

    def tokens(self, prefixes: Sequence[Sequence[int]], length: int) -> Any:
        """The token rows of ``prefixes`` completed by free positions to ``length`` symbols."""
        torch = self.torch
        m = len(prefixes[0]) if prefixes else 0
        rows = [
            [*self.pre, *(self.ids[a] for a in p), *([self.free] * (length - m)), *self.suf]
            for p in prefixes
        ]
        return torch.tensor(rows, dtype=torch.long).reshape(len(rows), -1)

    def bound(self, prefixes: Sequence[Sequence[int]], length: int) -> tuple[Any, Any]:
        if any(len(p) > length for p in prefixes) or len({len(p) for p in prefixes}) > 1:
            raise ValueError(f"prefixes must have one length <= {length}")
        tokens = self.tokens(prefixes, length)
        self.relaxed = None
        torch = self.torch
        with torch.no_grad():
            if isinstance(self.enclosure, Enclosure) and self.symbolic:
                y = self._transformer(tokens, relax=not self.lazy)
            else:
                y = self.enclosure.logits(tokens, tokens.shape[1])
        low = add_down(torch, y.m, -y.r).nan_to_num(-math.inf)
        high = add_up(torch, y.m, y.r).nan_to_num(math.inf)
        if self.relax is not None and self.lazy and self.symbolic:
            # the relaxation only where the interval bound leaves the sign open
            rows = ((low <= 0) & (high >= 0)).nonzero().flatten()
            if len(rows):
                with torch.no_grad():
                    self._transformer(tokens[rows], relax=True)
                assert self.relaxed is not None
                lo_all = torch.full_like(low, -math.inf)
                hi_all = torch.full_like(high, math.inf)
                lo_all[rows], hi_all[rows] = self.relaxed
                self.relaxed = (lo_all, hi_all)
        if self.relaxed is not None:  # both enclosures hold: their intersection does
            low = torch.maximum(low, self.relaxed[0])
            high = torch.minimum(high, self.relaxed[1])
        bad = ~(self.torch.isfinite(low) & self.torch.isfinite(high))
        return low.masked_fill(bad, -math.inf), high.masked_fill(bad, math.inf)

    def _transformer(self, tokens: Any, relax: bool = False) -> MR:
        """The logit's enclosure with the free positions kept as alternatives up to the first
        attention layer: every per-row block before it runs on the k words that put one symbol
        on every free position (a row of a free position there is exactly some symbol's row),
        the first attention layer bounds its scores and values over the alternatives
        (:meth:`.enclosure.Enclosure.attention`), and from then on rows are intervals (the hull
        of the alternatives' rows first)."""
        from netproof.symbolic.ir import FFN, AttentionLayer, Classifier

        torch = self.torch
        enc = self.enclosure
        assert isinstance(enc, Enclosure)
        n = tokens.shape[1]
        pos = enc.positions(n)
        free = tokens == self.free
        alts = []
        for a in self.ids:
            t = torch.where(free, a, tokens)
            alts.append(enc.add(MR(enc.table.m[t], enc.table.r[t]), pos))
        layers = list(enc.net.layers)
        i = 0
        while i < len(layers) and not isinstance(layers[i].block, AttentionLayer):
            sub = layers[i]
            assert isinstance(sub.block, FFN)
            for j, x in enumerate(alts):
                o: MR | None
                names, o = enc.ffn(sub.block, x) if sub.block.steps else ([], None)
                alts[j] = enc.combine(sub, x, names, o)
            i += 1
        lo = torch.stack([add_down(torch, x.m, -x.r) for x in alts]).amin(0)
        hi = torch.stack([add_up(torch, x.m, x.r) for x in alts]).amax(0)
        x = from_bounds(torch, lo, hi)
        tail = self.relax if relax else None
        for k, sub in enumerate(layers[i:]):
            block = sub.block
            if isinstance(block, AttentionLayer):
                last = tail is not None and i + k == tail.last
                enc.keep = [] if last else None
                try:
                    names, o = enc.attention(block, x, alts if k == 0 else None)
                    kept = enc.keep
                finally:
                    enc.keep = None
                if tail is not None and kept is not None:
                    self.relaxed = tail.bound(x, kept, o, names)
            else:
                assert isinstance(block, FFN)
                names, o = enc.ffn(block, x) if block.steps else ([], None)
            x = enc.combine(sub, x, names, o)
        ro = enc.net.readout
        assert isinstance(ro, Classifier)
        at = ro.position if ro.position >= 0 else n + ro.position
        y = enc.affine(ro.logit, MR(x.m[:, at, :], x.r[:, at, :]), enc.index)
        return MR(y.m[:, 0], y.r[:, 0])
