"""The evaluation loop shared by the exact and the sympy interpreters, and the :class:`Trace`.

The interpreters differ only in their number system (:class:`Arithmetic`): Fractions for
:mod:`netproof.symbolic.exact`, sympy expressions for :mod:`netproof.symbolic.sympy_interp`. Every decision the
network makes (a ReLU phase, a hardmax argmax, the accept bit) goes through
:meth:`Arithmetic.sign`, which each number system decides exactly.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Generic, Protocol, TypeVar, assert_never

from .display import attention_matrix, trace_html, trace_repr, trace_text
from .errors import NetworkValidationError, NotRationalError, SymbolicError, WordError
from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
    relative_index,
)
from .positional import feature
from .words import tokenize

V = TypeVar("V")


class UndefinedValueError(SymbolicError, ArithmeticError):
    """The network's output is undefined on this word (layer norm of a constant vector with
    eps = 0, an attention head over an empty set with ``empty="error"``)."""


class UndecidedSignError(SymbolicError, ArithmeticError):
    """A number system could not decide a sign (e.g. it depends on a symbolic base). Raised
    inside the network it stops the evaluation; at the readout it leaves ``accepted = None``."""


class Arithmetic(Protocol[V]):
    """The number system an interpreter evaluates in."""

    name: str

    def const(self, q: Fraction) -> V: ...
    def add(self, a: V, b: V) -> V: ...
    def sub(self, a: V, b: V) -> V: ...
    def mul(self, a: V, b: V) -> V: ...
    def div(self, a: V, b: V) -> V: ...
    def sign(self, a: V) -> int: ...
    def sqrt(self, a: V, where: str) -> V: ...
    def relu(self, a: V) -> V: ...
    def step(self, a: V) -> V: ...
    def clip01(self, a: V) -> V: ...
    def is_zero(self, a: V) -> bool: ...
    def key(self, a: V) -> Hashable: ...
    def softmax(
        self,
        nz: Softmax,
        scale: Scale,
        scores: Sequence[V],
        n: int,
        where: str,
        counts: Sequence[int] | None = None,
        bias: Sequence[Fraction] | None = None,
    ) -> list[V]:
        """Weights ∝ base^(scale·score + bias) (bias: one Fraction per score, added after the
        scale; a relative-position bias β_{j−i})."""
        ...


@dataclass(frozen=True, slots=True)
class State(Generic[V]):
    """The residual stream after one step: ``rows[t][d]`` is token ``t``'s value of dim ``d``."""

    label: str
    rows: tuple[tuple[V, ...], ...]


@dataclass(frozen=True, slots=True)
class Selection(Generic[V]):
    """Where one head at one query position put its attention. ``weights`` has one entry per
    token (0 where masked); ``selected`` lists the tokens with nonzero weight for hardmax heads."""

    layer: str
    head: str
    position: int
    weights: tuple[V, ...]
    selected: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class Trace(Generic[V]):
    """Everything an evaluation computed: every residual state and every attention selection.

    An entry is ``None`` where a position that the readout never reads has no defined value
    (e.g. a layer norm of a constant vector after the last attention layer). Token indices
    ``t`` run from 0; ``positions[t]`` is the paper's position index ``i``. A flat
    network (:class:`FlatEmbedding`) has a single position holding the whole word, so ``tokens``
    is the word and ``positions == (0,)``.
    """

    backend: str
    network: Network
    word: tuple[str, ...]
    tokens: tuple[str, ...]
    positions: tuple[int, ...]
    states: tuple[State[V], ...]
    selections: tuple[Selection[V], ...]
    output: V | None
    accepted: bool | None
    next_symbols: tuple[tuple[str, ...], ...] | None

    @property
    def n(self) -> int:
        """The number of positions (for a flat network: 1, holding the whole word)."""
        return len(self.positions)

    def state(self, label: str) -> State[V]:
        for s in self.states:
            if s.label == label:
                return s
        labels = ", ".join(s.label for s in self.states)
        raise KeyError(f"no state {label!r}; states: {labels}")

    def value(self, label: str, t: int, dim: str) -> V:
        """The value of ``dim`` at token ``t`` after the step named ``label``."""
        try:
            d = self.network.dims.index(dim)
        except ValueError:
            raise KeyError(f"no dim {dim!r}; dims: {' '.join(self.network.dims)}") from None
        return self.state(label).rows[t][d]

    @property
    def final(self) -> State[V]:
        return self.states[-1]

    def attention(self, layer: str, head: str) -> tuple[tuple[V, ...], ...]:
        """Head ``head`` of attention layer ``layer`` as an n × n matrix: row ``t`` holds query
        token ``t``'s weights over the key tokens (0 where masked; hardmax: 1 on the selected
        key, 1/k on each of k tied keys under ``average``). The values are the interpreter's
        own (Fractions for the exact one), so ``numpy.array(trace.attention(l, h), dtype=float)``
        gives floats for a plot and ``dtype=object`` keeps them exact."""
        return attention_matrix(self, layer, head)

    def states_array(self) -> tuple[tuple[tuple[V | None, ...], ...], ...]:
        """Every residual state as nested tuples indexed ``[state][token][dim]``: states in the
        order of :attr:`states` (``input`` first), dims in the order of ``network.dims``; ``None``
        where a value is never read (see the class docstring). The values are the interpreter's
        own: ``numpy.array(trace.states_array(), dtype=object)`` keeps Fractions exact,
        ``dtype=float`` gives floats (NaN for ``None``) for a plot."""
        return tuple(s.rows for s in self.states)

    def __repr__(self) -> str:
        return trace_repr(self)

    def __str__(self) -> str:
        return trace_text(self)

    def _repr_html_(self) -> str:
        return trace_html(self)


# --------------------------------------------------------------------------- helpers


class Evaluator(Generic[V]):
    """The network's forward pass over any :class:`Arithmetic` (the interpreters' shared core:
    exact, sympy and interval runs, and the SMT encoder's fixed positions, use it)."""

    def __init__(self, net: Network, arith: Arithmetic[V]) -> None:
        self.net = net
        self.ar = arith
        self.zero = arith.const(Fraction(0))
        self.one = arith.const(Fraction(1))
        self.length_n: int | None = None  # the n of the scale ln n and of positional features
        self._const_cache: dict[Fraction, V] = {}
        self._sparse: dict[
            int, tuple[Affine, list[tuple[str, Fraction, list[tuple[str, Fraction]]]]]
        ] = {}

    def c(self, q: Fraction) -> V:
        v = self._const_cache.get(q)
        if v is None:
            v = self.ar.const(q)
            self._const_cache[q] = v
        return v

    def _rows(self, a: Affine) -> list[tuple[str, Fraction, list[tuple[str, Fraction]]]]:
        """The nonzero terms of each output of ``a``, computed once per map (wide, sparse maps
        such as a simulated RNN's are evaluated many times)."""
        hit = self._sparse.get(id(a))
        if hit is None or hit[0] is not a:
            rows = [
                (o, b, [(name, w) for name, w in zip(a.inputs, row, strict=True) if w != 0])
                for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True)
            ]
            hit = (a, rows)
            self._sparse[id(a)] = hit
        return hit[1]

    def affine(self, a: Affine, x: dict[str, V]) -> dict[str, V]:
        ar = self.ar
        out: dict[str, V] = {}
        for o, b, terms in self._rows(a):
            acc: V | None = None if b == 0 else self.c(b)
            for name, w in terms:
                xv = x[name]
                term = xv if w == 1 else ar.mul(self.c(w), xv)
                acc = term if acc is None else ar.add(acc, term)
            out[o] = self.zero if acc is None else acc
        return out

    def activation(self, kind: str, x: dict[str, V]) -> dict[str, V]:
        ar = self.ar
        if kind == "relu":
            return {k: ar.relu(v) for k, v in x.items()}
        if kind == "step":
            return {k: ar.step(v) for k, v in x.items()}
        if kind == "sigma":
            return {k: ar.clip01(v) for k, v in x.items()}
        if (
            kind == "gelu"
        ):  # x·Φ(x) is irrational: only number systems with a `gelu` enclosure evaluate it
            gelu = getattr(ar, "gelu", None)
            if gelu is None:
                raise NotRationalError(
                    f"activation 'gelu' (x·Φ(x), Φ through erf) has no {ar.name} value; evaluate this network "
                    "with the interval interpreter (netproof.symbolic.interval) or check it with netproof check-model"
                )
            return {k: gelu(v) for k, v in x.items()}
        raise SymbolicError(f"unknown activation {kind!r}")  # pragma: no cover - validated

    def layernorm(self, ln: LayerNorm, x: dict[str, V], where: str) -> dict[str, V]:
        ar = self.ar
        names = list(x) if ln.over is None else list(ln.over)
        d = self.c(Fraction(len(names)))
        total = self.zero
        for k in names:
            total = ar.add(total, x[k])
        mean = ar.div(total, d)
        centered = {k: ar.sub(x[k], mean) for k in names}
        sq = self.zero
        for v in centered.values():
            sq = ar.add(sq, ar.mul(v, v))
        var = ar.add(ar.div(sq, d), self.c(ln.eps))
        if ar.sign(var) == 0:
            raise UndefinedValueError(
                f"{where}: layer norm of a constant vector with eps=0 is 0/0 "
                f"(dims {', '.join(names)}); the output is undefined on this word"
            )
        root = ar.sqrt(var, where)
        out = dict(x)
        for k in names:
            out[k] = ar.div(centered[k], root)
        return out

    # ------------------------------------------------------------------ attention

    def head(
        self,
        layer: str,
        h: Head,
        rows: list[dict[str, V]],
        n: int,
        selections: list[Selection[V]],
    ) -> list[dict[str, V]]:
        ar = self.ar
        where = f"attention {layer!r} head {h.name!r}"
        qs = [self.affine(h.query, r) for r in rows]
        ks = [self.affine(h.key, r) for r in rows]
        vs = [self.affine(h.value, r) for r in rows]
        qk_names = h.query.outputs
        out_names = h.value.outputs
        groups: dict[tuple[Hashable, ...], list[int]] = {}
        for j in range(n):
            groups.setdefault(tuple(ar.key(ks[j][name]) for name in qk_names), []).append(j)
        if not h.relative and 2 * len(groups) <= n and len(groups) <= GROUPED_MAX:
            return self._head_grouped(layer, h, qs, ks, vs, list(groups.values()), n, selections)
        result: list[dict[str, V]] = []
        for i in range(n):
            allowed = visible_positions(h.mask, i, n)
            if not allowed:
                if h.empty == "error":
                    raise UndefinedValueError(
                        f"{where}: position {i} attends to an empty set under mask {h.mask!r} "
                        "and the head's empty rule is 'error'"
                    )
                selections.append(Selection(layer, h.name, i, (self.zero,) * n, ()))
                result.append(dict.fromkeys(out_names, self.zero))
                continue
            scores = [self._score(h, qs[i], ks[j]) for j in allowed]
            bias: list[Fraction] | None = None
            if h.relative:
                scores = [
                    self._relative(h, s, qs[i], ks[j], j - i)
                    for s, j in zip(scores, allowed, strict=True)
                ]
                if h.relative_bias is not None:
                    bias = [_relative_beta(h, j - i) for j in allowed]
            selected: tuple[int, ...] | None
            match h.normalizer:
                case Hardmax(tie=tie):
                    best = self._argmax(
                        scores if bias is None else self._hard_logits(h, scores, bias, n)
                    )
                    if tie == "leftmost":
                        best = [best[0]]
                    elif tie == "rightmost":
                        best = [best[-1]]
                    share = self.c(Fraction(1, len(best)))
                    weights_allowed = [self.zero] * len(allowed)
                    for idx in best:
                        weights_allowed[idx] = share
                    selected = tuple(allowed[idx] for idx in best)
                case Softmax():
                    weights_allowed = self.ar.softmax(
                        h.normalizer, h.scale, scores, self.length_n or n, where, None, bias
                    )
                    selected = None
                case _:
                    assert_never(h.normalizer)
            full = [self.zero] * n
            for j, w in zip(allowed, weights_allowed, strict=True):
                full[j] = w
            selections.append(Selection(layer, h.name, i, tuple(full), selected))
            acc: dict[str, V] = {}
            for o in out_names:
                total: V | None = None
                for j, w in zip(allowed, weights_allowed, strict=True):
                    vj = vs[j][o]
                    if ar.is_zero(w) or ar.is_zero(vj):
                        continue
                    term = ar.mul(w, vj)
                    total = term if total is None else ar.add(total, term)
                acc[o] = self.zero if total is None else total
            result.append(acc)
        return result

    def attend(
        self,
        block: AttentionLayer,
        query_row: dict[str, V],
        i: int,
        kv_rows: Sequence[dict[str, V]],
        selections: list[Selection[V]],
    ) -> dict[str, V]:
        """The output of ``block`` for one query row at index ``i`` against ``kv_rows`` (the
        same head semantics as :meth:`head`: scoring, scale, normalizer, mask over the key
        indices, empty rule), with the layer's output map. Decoder attention computes one new
        position per step with this: self-attention over the steps so far, cross-attention over
        the encoder's rows."""
        ar = self.ar
        n = len(kv_rows)
        out: dict[str, V] = {}
        for h in block.heads:
            where = f"attention {block.name!r} head {h.name!r}"
            allowed = [j for j in visible_positions(h.mask, i, max(n, i + 1)) if j < n]
            if not allowed:
                if h.empty == "error":
                    raise UndefinedValueError(
                        f"{where}: query {i} attends to an empty set under mask {h.mask!r} "
                        "and the head's empty rule is 'error'"
                    )
                selections.append(Selection(block.name, h.name, i, (self.zero,) * n, ()))
                out.update(dict.fromkeys(h.value.outputs, self.zero))
                continue
            q = self.affine(h.query, query_row)
            ks = [self.affine(h.key, kv_rows[j]) for j in allowed]
            scores = [self._score(h, q, k) for k in ks]
            selected: tuple[int, ...] | None
            match h.normalizer:
                case Hardmax(tie=tie):
                    best = self._argmax(scores)
                    if tie == "leftmost":
                        best = [best[0]]
                    elif tie == "rightmost":
                        best = [best[-1]]
                    share = self.c(Fraction(1, len(best)))
                    weights = [self.zero] * len(allowed)
                    for idx in best:
                        weights[idx] = share
                    selected = tuple(allowed[idx] for idx in best)
                case Softmax():
                    weights = self.ar.softmax(
                        h.normalizer, h.scale, scores, self.length_n or n, where
                    )
                    selected = None
                case _:
                    assert_never(h.normalizer)
            full = [self.zero] * n
            for j, w in zip(allowed, weights, strict=True):
                full[j] = w
            selections.append(Selection(block.name, h.name, i, tuple(full), selected))
            live = [
                (w, self.affine(h.value, kv_rows[j]))
                for j, w in zip(allowed, weights, strict=True)
                if not ar.is_zero(w)
            ]
            for o in h.value.outputs:
                total: V | None = None
                for w, vj in live:
                    if ar.is_zero(vj[o]):
                        continue
                    term = vj[o] if w == self.one else ar.mul(w, vj[o])
                    total = term if total is None else ar.add(total, term)
                out[o] = self.zero if total is None else total
        if block.output is not None:
            full_out = {o: self.zero for h in block.heads for o in h.value.outputs}
            out = self.affine(block.output, {**full_out, **out})
        return out

    def _argmax(self, scores: Sequence[V]) -> list[int]:
        """Indices of the maximal scores, in increasing order (exact comparisons)."""
        best = [0]
        for idx in range(1, len(scores)):
            cmp = self.ar.sign(self.ar.sub(scores[idx], scores[best[0]]))
            if cmp > 0:
                best = [idx]
            elif cmp == 0:
                best.append(idx)
        return best

    def _relative(self, h: Head, s: V, q: dict[str, V], k: dict[str, V], offset: int) -> V:
        """The score plus the dynamic relative terms ⟨q_i, W^C_{j−i}⟩ and ⟨k_j, W^{C'}_{j−i}⟩."""
        ar = self.ar
        for kernel, vec in ((h.query_conv, q), (h.key_conv, k)):
            if kernel is None:
                continue
            idx = relative_index(offset, kernel.k, kernel.outside)
            if idx is None:
                continue
            for name, w in zip(h.query.outputs, kernel.columns[idx], strict=True):
                if w == 0 or ar.is_zero(vec[name]):
                    continue
                s = ar.add(s, ar.mul(self.c(w), vec[name]))
        return s

    def _hard_logits(
        self, h: Head, scores: Sequence[V], bias: Sequence[Fraction], n: int
    ) -> list[V]:
        """scale·score + β for a hardmax head with a relative bias (Head validates that the scale
        is rational there: coef, times n)."""
        factor = h.scale.coef * ((self.length_n or n) if h.scale.times_n else 1)
        return [
            self.ar.add(self.ar.mul(self.c(factor), s), self.c(b))
            for s, b in zip(scores, bias, strict=True)
        ]

    def convolution(
        self, block: Convolution, rows: list[dict[str, V]], n: int
    ) -> list[dict[str, V]]:
        """Each output channel at i: Σ_{|j−i| ≤ k} w_{j−i}·x_j over the positions that exist."""
        ar = self.ar
        k = block.k
        kernels: list[list[V]] = []
        for c, row in enumerate(block.kernels):
            if block.normalizer is None:
                kernels.append([self.c(w) for w in row])
            else:
                where = f"convolution {block.name!r} kernel row {c}"
                kernels.append(
                    ar.softmax(block.normalizer, Scale(), [self.c(w) for w in row], n, where)
                )
        outs: list[dict[str, V]] = []
        for i in range(n):
            out: dict[str, V] = {}
            for c, (x, y) in enumerate(zip(block.inputs, block.outputs, strict=True)):
                kernel = kernels[0] if len(kernels) == 1 else kernels[c]
                total = self.zero
                for j in range(max(0, i - k), min(n, i + k + 1)):
                    w, v = kernel[j - i + k], rows[j][x]
                    if ar.is_zero(w) or ar.is_zero(v):
                        continue
                    total = ar.add(total, ar.mul(w, v))
                out[y] = total
            outs.append(out)
        return outs

    def _score(self, h: Head, q: dict[str, V], k: dict[str, V]) -> V:
        """The (unscaled) score of one key for one query: ⟨q, k⟩ or −|⟨q, k⟩|."""
        ar = self.ar
        s = self.zero
        for name in h.query.outputs:
            qv, kv = q[name], k[name]
            if ar.is_zero(qv) or ar.is_zero(kv):
                continue
            s = ar.add(s, ar.mul(qv, kv))
        if h.scoring == "neg_abs_dot":
            s = ar.sub(self.zero, s) if ar.sign(s) > 0 else s
        return s

    def _head_grouped(
        self,
        layer: str,
        h: Head,
        qs: list[dict[str, V]],
        ks: list[dict[str, V]],
        vs: list[dict[str, V]],
        groups: list[list[int]],
        n: int,
        selections: list[Selection[V]],
    ) -> list[dict[str, V]]:
        """The same head, computed once per group of positions with identical keys.

        Positions with equal keys get equal scores and equal weights, so a query needs one score
        per group and, per group, the number of unmasked members and the sum of their values.
        Masks are ranges (a prefix or a suffix of the positions), so those come from running sums
        per group, with no subtraction. O(n·groups) instead of O(n²).
        """
        ar = self.ar
        where = f"attention {layer!r} head {h.name!r}"
        out_names = h.value.outputs
        member = [0] * n
        for g, js in enumerate(groups):
            for j in js:
                member[j] = g
        # Running (count, value sums) per group over a prefix [0, hi) or a suffix [lo, n).
        suffix = h.mask in ("anticausal", "strict_anticausal")
        order = range(n - 1, -1, -1) if suffix else range(n)
        counts = [0] * len(groups)
        sums: list[dict[str, V]] = [dict.fromkeys(out_names, self.zero) for _ in groups]
        nonempty: set[int] = set()

        def absorb(j: int) -> None:
            g = member[j]
            counts[g] += 1
            nonempty.add(g)
            for o in out_names:
                v = vs[j][o]
                if not ar.is_zero(v):
                    sums[g][o] = ar.add(sums[g][o], v)

        if h.mask == "none":
            for j in range(n):
                absorb(j)
        result: list[dict[str, V] | None] = [None] * n
        sel: list[Selection[V] | None] = [None] * n
        for i in order:
            if h.mask in ("causal", "anticausal"):
                absorb(i)
            allowed_lo, allowed_hi = _mask_range(h.mask, i, n)
            if allowed_hi <= allowed_lo:
                if h.empty == "error":
                    raise UndefinedValueError(
                        f"{where}: position {i} attends to an empty set under mask {h.mask!r} "
                        "and the head's empty rule is 'error'"
                    )
                sel[i] = Selection(layer, h.name, i, (self.zero,) * n, ())
                result[i] = dict.fromkeys(out_names, self.zero)
            else:
                live = sorted(nonempty)
                scores = [self._score(h, qs[i], ks[groups[g][0]]) for g in live]
                weights = [self.zero] * len(groups)
                selected: tuple[int, ...] | None = None
                acc: dict[str, V] = {}
                match h.normalizer:
                    case Hardmax(tie=tie):
                        best = self._argmax(scores)
                        chosen = [live[b] for b in best]
                        inside = [
                            j for g in chosen for j in _in_range(groups[g], allowed_lo, allowed_hi)
                        ]
                        if tie == "average":
                            share = self.c(Fraction(1, len(inside)))
                            for g in chosen:
                                weights[g] = share
                            selected = tuple(sorted(inside))
                            for o in out_names:
                                total = self.zero
                                for g in chosen:
                                    total = ar.add(total, sums[g][o])
                                acc[o] = ar.mul(share, total) if len(inside) > 1 else total
                        else:
                            j = min(inside) if tie == "leftmost" else max(inside)
                            selected = (j,)
                            acc = dict(vs[j])
                    case Softmax():
                        ws = ar.softmax(
                            h.normalizer,
                            h.scale,
                            scores,
                            self.length_n or n,
                            where,
                            [counts[g] for g in live],
                        )
                        for g, w in zip(live, ws, strict=True):
                            weights[g] = w
                        for o in out_names:
                            total = self.zero
                            for g, w in zip(live, ws, strict=True):
                                if not ar.is_zero(sums[g][o]) and not ar.is_zero(w):
                                    total = ar.add(total, ar.mul(w, sums[g][o]))
                            acc[o] = total
                    case _:
                        assert_never(h.normalizer)
                full = [self.zero] * n
                single = isinstance(h.normalizer, Hardmax) and h.normalizer.tie != "average"
                if single and selected is not None:
                    full[selected[0]] = self.one
                else:
                    for j in range(allowed_lo, allowed_hi):
                        full[j] = weights[member[j]]
                sel[i] = Selection(layer, h.name, i, tuple(full), selected)
                result[i] = acc
            if h.mask in ("strict_causal", "strict_anticausal"):
                absorb(i)
        selections.extend(s for s in sel if s is not None)
        return [r if r is not None else {} for r in result]

    def attention(
        self,
        block: AttentionLayer,
        rows: list[dict[str, V]],
        n: int,
        selections: list[Selection[V]],
    ) -> list[dict[str, V]]:
        outs: list[dict[str, V]] = [{} for _ in range(n)]
        for h in block.heads:
            for t, part in enumerate(self.head(block.name, h, rows, n, selections)):
                outs[t].update(part)
        if block.output is not None:
            full = {o: self.zero for h in block.heads for o in h.value.outputs}
            outs = [self.affine(block.output, {**full, **o}) for o in outs]
        return outs

    def ffn(
        self, block: FFN, rows: list[dict[str, V]], positions: Sequence[int]
    ) -> list[dict[str, V]]:
        outs = []
        for t, r in enumerate(rows):
            x: dict[str, V] = r
            for idx, step in enumerate(block.steps):
                match step:
                    case Affine():
                        x = self.affine(step, x)
                    case Activation(kind=kind):
                        x = self.activation(kind, x)
                    case LayerNorm():
                        x = self.layernorm(
                            step, x, f"ffn {block.name!r} step [{idx}] at position {positions[t]}"
                        )
                    case _:
                        assert_never(step)
            outs.append(x if block.steps else {})
        return outs

    # ------------------------------------------------------------------ whole network

    def run(self, word: str | Sequence[str], length: int | None = None) -> Trace[V]:
        net = self.net
        symbols = tokenize(net.alphabet, word)
        emb = net.embedding
        dims = net.dims
        match emb:
            case TokenEmbedding():
                tokens = (*emb.prefix, *symbols, *emb.suffix)
                n = len(tokens)
                if length is not None:
                    n = declared_length(net, length, n)
                self.length_n = n
                positions = tuple(range(emb.index_base, emb.index_base + len(tokens)))
                table = dict(emb.table)
                rows: list[dict[str, V]] = []
                for t, token in enumerate(tokens):
                    row = dict.fromkeys(dims, self.zero)
                    for d, v in table[token]:
                        row[d] = self.ar.add(row[d], self.c(v))
                    for d, feat, coef in emb.positional:
                        value = coef * feature(feat)(positions[t], n)
                        row[d] = self.ar.add(row[d], self.c(value))
                    rows.append(row)
            case FlatEmbedding():
                if length is not None:
                    raise WordError(
                        f"length={length} applies to token networks; {net.name!r} reads a fixed-length word"
                    )
                if len(symbols) != emb.length:
                    raise WordError(
                        f"this network reads words of length exactly {emb.length}, got "
                        f"{len(symbols)} symbols; build it with n={len(symbols)}"
                    )
                tokens = symbols
                n = 1
                positions = (0,)
                values = dict(emb.values)
                row = dict.fromkeys(dims, self.zero)
                for d, s in zip(emb.dims, symbols, strict=True):
                    row[d] = self.c(values[s])
                rows = [row]
            case _:
                assert_never(emb)
        states: list[State[V]] = [State("input", frozen_rows(rows, dims))]
        selections: list[Selection[V]] = []
        live_after = _live_positions(net, len(rows))
        for idx, sub in enumerate(net.layers):
            rows = self.sublayer(sub, rows, n, positions, selections, live_after[idx])
            states.append(State(sub.name, frozen_rows(rows, dims)))
        output: V | None = None
        accepted: bool | None = None
        nexts: tuple[tuple[str, ...], ...] | None = None
        r = net.readout
        match r:
            case Classifier():
                t = r.position if r.position >= 0 else len(rows) + r.position
                if not 0 <= t < len(rows):
                    raise WordError(
                        f"readout position {r.position} is outside the {len(rows)} tokens"
                    )
                output = self.affine(r.logit, rows[t])[r.logit.outputs[0]]
                try:
                    accepted = self.ar.sign(output) > 0
                except UndecidedSignError:
                    accepted = None
            case NextSymbols():
                thr = self.c(r.threshold)
                allowed: list[tuple[str, ...]] = []
                for t, row in enumerate(rows):
                    scored = [row[d] for _s, d in r.scores]
                    if r.softmax is not None:
                        scored = self.ar.softmax(
                            r.softmax,
                            Scale(),
                            scored,
                            n,
                            f"readout softmax at position {positions[t]}",
                        )
                    allowed.append(
                        tuple(
                            s
                            for (s, _d), v in zip(r.scores, scored, strict=True)
                            if self.ar.sign(self.ar.sub(v, thr)) >= 0
                        )
                    )
                nexts = tuple(allowed)
            case _:
                assert_never(r)
        return Trace(
            backend=self.ar.name,
            network=net,
            word=symbols,
            tokens=tuple(tokens),
            positions=positions,
            states=tuple(states),
            selections=tuple(selections),
            output=output,
            accepted=accepted,
            next_symbols=nexts,
        )

    def sublayer(
        self,
        sub: Sublayer,
        rows: list[dict[str, V]],
        n: int,
        positions: Sequence[int],
        selections: list[Selection[V]],
        live: frozenset[int] | None = None,
    ) -> list[dict[str, V]]:
        block = sub.block
        match block:
            case AttentionLayer():
                outs = self.attention(block, rows, len(rows), selections)
            case Convolution():
                outs = self.convolution(block, rows, len(rows))
            case FFN():
                if live is None:
                    outs = self.ffn(block, rows, positions)
                else:
                    outs = []
                    for t, r in enumerate(rows):
                        if t in live:
                            outs.append(self.ffn(block, [r], [positions[t]])[0])
                        else:
                            outs.append(
                                self._unread(
                                    lambda r=r, t=t: self.ffn(block, [r], [positions[t]])[0], r, r
                                )
                            )
            case _:
                assert_never(block)
        new_rows: list[dict[str, V]] = []
        for t, (r, o) in enumerate(zip(rows, outs, strict=True)):
            if live is not None and t not in live:
                new_rows.append(
                    self._unread(
                        lambda r=r, o=o, t=t: self._combine(sub, r, o, positions[t]), r, r, o
                    )
                )
                continue
            new_rows.append(self._combine(sub, r, o, positions[t]))
        return new_rows

    def _unread(self, compute: Any, like: dict[str, V], *inputs: dict[str, V]) -> dict[str, V]:
        """Evaluate a position the readout never reads; if its value is undefined or undecided
        there (or an input already is), record None instead of failing the whole evaluation."""
        # the rows are typed dict[str, V]; a None here is read by no one (the readout skips it)
        if any(v is None for row in inputs for v in row.values()):
            return dict.fromkeys(like)  # type: ignore[return-value]
        try:
            return compute()  # type: ignore[no-any-return]
        except (UndefinedValueError, UndecidedSignError):
            return dict.fromkeys(like)  # type: ignore[return-value]

    def _combine(
        self, sub: Sublayer, r: dict[str, V], o: dict[str, V], position: int
    ) -> dict[str, V]:
        """The residual connection and the post-residual layer norm at one position."""
        if sub.residual:
            x = dict(r)
            for d, v in o.items():
                x[d] = self.ar.add(x[d], v)
        else:
            x = {d: o.get(d, self.zero) for d in r}
        if sub.post_ln is not None:
            x = self.layernorm(
                sub.post_ln, x, f"layer norm after {sub.name!r} at position {position}"
            )
        return x


def declared_length(net: Network, length: int, tokens: int) -> int:
    """Check ``length`` (the total length n of a string the input is a prefix of) for ``net``.

    ``tokens`` is the number of tokens of the input, special tokens included. Returns ``length``;
    raises :class:`~netproof.symbolic.errors.WordError` when it is shorter than the input, or when
    a block would read past the prefix (a convolution, attention that is not causal). The
    interpreters that take a ``length`` (this loop and the torch backend) check it here, so they
    refuse the same requests with the same message.
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < tokens:
        raise WordError(
            f"length={length!r} must be an integer >= the {tokens} tokens of the input (special tokens "
            "included): it is the total length n of the string the input begins"
        )
    if length != tokens:
        for sub in net.layers:
            if isinstance(sub.block, Convolution):
                raise WordError(
                    f"length={length} evaluates a prefix, but convolution {sub.block.name!r} reads positions "
                    "up to i + k, which the rest of the string would fill: run the whole string instead"
                )
            if isinstance(sub.block, AttentionLayer):
                for h in sub.block.heads:
                    if h.mask not in ("causal", "strict_causal"):
                        raise WordError(
                            f"length={length} evaluates a prefix, which needs causal attention; head "
                            f"{h.name!r} of {sub.block.name!r} has mask {h.mask!r} and would read the rest "
                            "of the string: run the whole string instead"
                        )
    return length


def _live_positions(net: Network, n: int) -> list[frozenset[int] | None]:
    """For each sublayer, the positions whose value is read later (None: all of them).

    After the last attention layer (or convolution) every block is position-wise, so a classifier reads only its
    own position from there on. The other positions are not computed (their trace entries are
    ``None``): a value that is never read cannot make the output undefined. This matters for
    Chiang & Cholak's Proposition 2, whose last layer norm divides 0 by 0 at every position but
    the CLS one.
    """
    live: list[frozenset[int] | None] = [None] * len(net.layers)
    if not isinstance(net.readout, Classifier) or n == 0:
        return live
    t = net.readout.position if net.readout.position >= 0 else n + net.readout.position
    if not 0 <= t < n:
        return live
    last_attention = max(
        (
            i
            for i, sub in enumerate(net.layers)
            if isinstance(sub.block, (AttentionLayer, Convolution))
        ),
        default=-1,
    )
    for i in range(last_attention + 1, len(net.layers)):
        live[i] = frozenset({t})
    return live


GROUPED_MAX = 64


def _relative_beta(h: Head, offset: int) -> Fraction:
    """β_{j−i} of the head's relative bias (0 outside the window unless it clips)."""
    b = h.relative_bias
    assert b is not None  # called only for heads with a relative bias
    idx = relative_index(offset, b.k, b.outside)
    return Fraction(0) if idx is None else b.beta[idx]


def _mask_range(mask: str, i: int, n: int) -> tuple[int, int]:
    """The unmasked positions for query ``i`` as a half-open range ``[lo, hi)``."""
    if mask == "none":
        return 0, n
    if mask == "causal":
        return 0, i + 1
    if mask == "strict_causal":
        return 0, i
    if mask == "anticausal":
        return i, n
    if mask == "strict_anticausal":
        return i + 1, n
    raise SymbolicError(f"unknown mask {mask!r}")  # pragma: no cover - Head validates mask


def _in_range(sorted_positions: list[int], lo: int, hi: int) -> list[int]:
    return sorted_positions[
        bisect.bisect_left(sorted_positions, lo) : bisect.bisect_left(sorted_positions, hi)
    ]


def visible_positions(mask: str, i: int, n: int) -> list[int]:
    """The positions j < n that a query at position i attends to under ``mask`` (the IR's mask
    names: none, causal, strict_causal, anticausal, strict_anticausal)."""
    if mask == "none":
        return list(range(n))
    if mask == "causal":
        return list(range(i + 1))
    if mask == "strict_causal":
        return list(range(i))
    if mask == "anticausal":
        return list(range(i, n))
    if mask == "strict_anticausal":
        return list(range(i + 1, n))
    raise SymbolicError(f"unknown mask {mask!r}")  # pragma: no cover - Head validates mask


def frozen_rows(rows: list[dict[str, V]], dims: tuple[str, ...]) -> tuple[tuple[V, ...], ...]:
    """The rows of a residual state (one ``{dim: value}`` per position) as tuples in the order of
    ``dims``: the form a :class:`State` keeps."""
    return tuple(tuple(r[d] for d in dims) for r in rows)


def evaluate(
    net: Network, word: str | Sequence[str], arith: Arithmetic[V], *, length: int | None = None
) -> Trace[V]:
    """Run ``net`` on ``word`` in the number system ``arith``.

    ``length``: evaluate the input as the first tokens of a string of total length n = ``length``
    (special tokens included), so that positional features such as i/n use that n. Only for
    networks whose attention is causal (the rest of the string could not change the outputs).
    """
    from .recurrent_ir import RecurrentNetwork

    if isinstance(net, RecurrentNetwork):
        raise NetworkValidationError(
            f"network {net.name!r} is a RecurrentNetwork ({type(net.cell).__name__}); this interpreter runs "
            "transformer-style Networks only: evaluate it with symbolic.recurrent.run(net, word)"
        )
    return Evaluator(net, arith).run(word, length)
