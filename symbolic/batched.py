"""Batched exact evaluation of hardmax networks: many words of one length at once, in integers.

A state is an integer array ``num`` of shape (words, positions, dims) over one positive Python
int ``den`` (the value of a coordinate is ``num/den``, exactly). Every step first bounds the
magnitude of what it will compute (``max|x|`` times the largest row sum of ``|W|``, and so on);
it runs in numpy ``int64`` when the bound is at most 2^62 and in numpy object arrays of Python
ints otherwise, so nothing ever wraps. Denominators are reduced by the gcd of the whole tensor
after each sublayer.

The semantics are :mod:`symbolic.evaluation`'s, restricted to what is exact in integers and
cheap to batch: token embeddings with positional features, residual sublayers without layer
norm, FFNs of ``relu`` / ``sigma`` / ``step``, hardmax attention (any tie rule, ``dot`` or
``neg_abs_dot`` scoring, any mask, either empty rule, optional W^O) and a :class:`Classifier`.
A hardmax head ignores its (positive) :class:`Scale`, as the exact interpreter does: a positive
factor does not move the argmax. :func:`supports` says why a network is refused (softmax, layer
norm, a flat embedding, a next-symbol readout).

>>> from constructions.yao2021 import dyck_recognizer
>>> net = dyck_recognizer(k=1, depth=1)
>>> supports(net) is None
True
>>> accepts(net, ["()", ")(", "(())", ""])
[True, False, False, True]
>>> evaluate(net, [")("]).logit(0)
Fraction(-1, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, assert_never

import numpy as np

from .errors import SymbolicError, WordError
from .evaluation import UndefinedValueError
from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .positional import feature
from .words import tokenize

__all__ = ["CHUNK", "LIMIT", "Batch", "Evaluator", "NotBatchableError", "accepts", "evaluate", "shortlex_block", "supports"]

LIMIT = 1 << 62
"""The largest magnitude an ``int64`` computation may reach; above it the step runs in Python ints."""

CHUNK = 1 << 14
"""Words evaluated together (memory: about CHUNK · positions · dims · 8 bytes per state)."""

Array = np.ndarray[Any, Any]


class NotBatchableError(SymbolicError, ValueError):
    """The network uses a block the batched evaluator does not support (see :func:`supports`)."""


# --------------------------------------------------------------------------- support


def supports(net: Network) -> str | None:
    """None if :class:`Evaluator` can run ``net``, else a one-line reason.

    >>> from constructions.chiang2022 import parity_transformer
    >>> supports(parity_transformer())
    "attention 'count' head 'count' uses softmax; only hardmax heads are batched"
    """
    match net.embedding:
        case TokenEmbedding():
            pass
        case FlatEmbedding():
            return "FlatEmbedding (a whole word as one vector); only token embeddings are batched"
        case _:
            assert_never(net.embedding)
    match net.readout:
        case Classifier():
            pass
        case NextSymbols():
            return "the NextSymbols readout; only Classifier accept bits are batched"
        case _:
            assert_never(net.readout)
    for sub in net.layers:
        if sub.post_ln is not None:
            return f"sublayer {sub.name!r} has a post-residual layer norm (√ is not batched)"
        block = sub.block
        match block:
            case FFN():
                for idx, step in enumerate(block.steps):
                    if isinstance(step, LayerNorm):
                        return f"ffn {block.name!r} step [{idx}] is a layer norm (√ is not batched)"
            case AttentionLayer():
                for h in block.heads:
                    where = f"attention {block.name!r} head {h.name!r}"
                    match h.normalizer:
                        case Softmax():
                            return f"{where} uses softmax; only hardmax heads are batched"
                        case Hardmax():
                            if h.scale.coef <= 0:
                                return f"{where} has scale coef={h.scale.coef}; hardmax needs a positive scale"
                        case _:
                            assert_never(h.normalizer)
            case _:
                assert_never(block)
    return None


# --------------------------------------------------------------------------- integer helpers


def _lcm_den(values: Sequence[Fraction]) -> int:
    return math.lcm(1, *(q.denominator for q in values))


def _maxabs(x: Array) -> int:
    if x.size == 0:
        return 0
    return max(int(x.max()), -int(x.min()))


def _fit(x: Array, obj: bool) -> Array:
    """``x`` as object (Python ints) if ``obj``, else as int64 (the caller checked the bound)."""
    if obj:
        return x if x.dtype == object else x.astype(object)
    return x if x.dtype == np.int64 else x.astype(np.int64)


def _ints(values: Sequence[int], shape: tuple[int, ...]) -> tuple[Array, Array | None]:
    """An object array of Python ints and, when every entry fits, its int64 copy."""
    obj = np.empty(len(values), dtype=object)
    obj[:] = list(values)
    obj = obj.reshape(shape)
    fits = all(abs(v) <= LIMIT for v in values)
    return obj, (obj.astype(np.int64) if fits else None)


def _reduce(num: Array, den: int) -> tuple[Array, int]:
    """Divide ``num`` and ``den`` by their gcd (cheaply: the gcd of ``num mod g``, small numbers),
    and come back to int64 when an object array fits again."""
    if den != 1 and num.size:
        flat = num.reshape(-1)
        g = math.gcd(den, *(int(v) for v in flat[:16]))
        if g > 1:
            if g > LIMIT and num.dtype != object:
                num, flat = num.astype(object), flat.astype(object)
            g = math.gcd(g, int(np.gcd.reduce(flat % g)))
            if g > 1:
                num = num // g
                den //= g
    if num.dtype == object and _maxabs(num) <= LIMIT:
        num = num.astype(np.int64)
    return num, den


def _require_names(names: Sequence[str], index: dict[str, int], where: str) -> None:
    """Every name in ``names`` is a column of ``index`` (network validation guarantees it)."""
    missing = [n for n in names if n not in index]
    if missing:
        raise NotBatchableError(
            f"{where}: {', '.join(map(repr, missing))} {'is' if len(missing) == 1 else 'are'} not among "
            f"the available names ({', '.join(index) or 'none'}); build the network through "
            "symbolic.ir.Network, which validates it, or fix the name"
        )


def _matmul(x: Array, w: Array, obj: bool) -> Array:
    """``x @ wᵀ`` over the last axis in int64 (the caller bounded every partial sum by 2^62) or,
    with ``obj``, in Python ints. (Integer matmul does not go through BLAS: no float rounding.)"""
    lead = x.shape[:-1]
    if x.shape[-1] == 0 or w.shape[0] == 0:
        return np.zeros((*lead, w.shape[0]), dtype=object if obj else np.int64)
    y = _fit(x.reshape(-1, x.shape[-1]), obj) @ w.T
    return y.reshape(*lead, w.shape[0])


class _Linear:
    """An :class:`Affine` over a fixed list of input names, as integers: ``y = x·Wᵀ/w_den + b/b_den``.

    Only the input columns with a nonzero weight are read.
    """

    def __init__(self, a: Affine, names_in: Sequence[str], where: str) -> None:
        index = {d: i for i, d in enumerate(names_in)}
        _require_names(a.inputs, index, where)
        used = sorted({index[name] for row in a.weights for name, w in zip(a.inputs, row, strict=True) if w != 0})
        pos = {c: k for k, c in enumerate(used)}
        self.outputs = a.outputs
        self.cols: Array | None = None if used == list(range(len(names_in))) else np.array(used, dtype=np.intp)
        self.w_den = _lcm_den([w for row in a.weights for w in row])
        rows = [[0] * len(used) for _ in a.outputs]
        for r, row in zip(rows, a.weights, strict=True):
            for name, w in zip(a.inputs, row, strict=True):
                if w != 0:
                    r[pos[index[name]]] += int(w * self.w_den)
        self.row_sum = max((sum(abs(v) for v in r) for r in rows), default=0)
        self.w_obj, self.w64 = _ints([v for r in rows for v in r], (len(rows), len(used)))
        self.b_den = _lcm_den(a.bias)
        bias = [int(b * self.b_den) for b in a.bias]
        self.has_bias = any(bias)
        self.b_max = max((abs(b) for b in bias), default=0)
        self.bias = bias

    def apply(self, x: Array, den: int) -> tuple[Array, int]:
        return self.apply_read(x if self.cols is None else x[..., self.cols], den)

    def read(self, x: Array) -> Array:
        """The input columns this map reads (those with a nonzero weight)."""
        return x if self.cols is None else x[..., self.cols]

    def apply_read(self, xc: Array, den: int) -> tuple[Array, int]:
        """:meth:`apply` on inputs already restricted by :meth:`read`."""
        in_den = den * self.w_den
        out_den = math.lcm(in_den, self.b_den) if self.has_bias else in_den
        f, g = out_den // in_den, out_den // self.b_den
        bound = _maxabs(xc) * self.row_sum * f + self.b_max * g
        obj = bound > LIMIT or self.w64 is None or f > LIMIT
        y = _matmul(xc, self.w_obj if obj else self.w64, obj)  # type: ignore[arg-type]
        if f != 1:
            y = y * f
        if self.has_bias:
            b, _ = _ints([v * g for v in self.bias], (len(self.bias),))
            y = y + (b if obj else b.astype(np.int64))
        return y, out_den


def _distinct_rows(rows: Array) -> tuple[Array, Array] | None:
    """``(distinct rows, inverse)`` with ``rows == distinct[inverse]``, or None for object arrays.

    Each row gets an exact mixed-radix code (column minus its minimum, times the product of the
    earlier columns' ranges) when the product of the ranges fits int64; otherwise the rows are
    compared whole.
    """
    if rows.dtype == object or rows.shape[0] == 0:
        return None
    lo, hi = rows.min(axis=0), rows.max(axis=0)
    radix, total = [], 1
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        radix.append(total)
        total *= b - a + 1
    if total > LIMIT:
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        return distinct, inverse.reshape(-1)
    code = (rows - lo) @ np.array(radix, dtype=np.int64) if rows.shape[1] else np.zeros(rows.shape[0], dtype=np.int64)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1)


# --------------------------------------------------------------------------- compiled blocks


@dataclass(frozen=True, slots=True)
class _Head:
    head: Head
    layer: str
    query: _Linear
    key: _Linear
    value: _Linear


def _allowed(mask: str, n: int) -> Array:
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    if mask == "none":
        return np.ones((n, n), dtype=bool)
    if mask == "causal":
        return j <= i
    if mask == "strict_causal":
        return j < i
    if mask == "anticausal":
        return j >= i
    if mask == "strict_anticausal":
        return j > i
    raise SymbolicError(f"unknown mask {mask!r}")  # pragma: no cover - Head validates mask


def _run_head(ch: _Head, x: Array, den: int, rows: slice) -> tuple[Array, int]:
    """One hardmax head for the query positions ``rows`` of every word: ``(out numerators, den)``.

    Keys and values come from every position; queries only from ``rows`` (the positions read
    later). The empty-set check covers every position, as the per-word interpreter's does.
    """
    h = ch.head
    n = x.shape[1]
    allowed_all = _allowed(h.mask, n)
    empty_all = ~allowed_all.any(axis=1)
    if h.empty == "error" and empty_all.any():
        i = int(np.flatnonzero(empty_all)[0])
        raise UndefinedValueError(
            f"attention {ch.layer!r} head {h.name!r}: position {i} attends to an empty set under mask "
            f"{h.mask!r} and the head's empty rule is 'error'"
        )
    allowed, empty = allowed_all[rows], empty_all[rows]
    k, _ = ch.key.apply(x, den)
    v, v_den = ch.value.apply(x, den)
    q, _ = ch.query.apply(x[:, rows], den)
    if n == 0 or q.shape[1] == 0:
        return np.zeros((x.shape[0], q.shape[1], v.shape[-1]), dtype=np.int64), 1
    # The (positive) denominators of q and k and the positive scale leave the argmax unchanged.
    s_bound = _maxabs(q) * _maxabs(k) * q.shape[-1]
    obj = s_bound > LIMIT
    qf, kf = _fit(q, obj), _fit(k, obj)
    scores = np.zeros((x.shape[0], q.shape[1], n), dtype=object if obj else np.int64)
    for d in range(q.shape[-1]):
        scores += qf[:, :, None, d] * kf[:, None, :, d]
    if h.scoring == "neg_abs_dot":
        scores = -abs(scores)
    masked = np.where(allowed, scores, -(s_bound + 1))
    best = (masked == masked.max(axis=2, keepdims=True)) & allowed
    assert isinstance(h.normalizer, Hardmax)  # supports() refused the rest
    tie = h.normalizer.tie
    count = best.sum(axis=2)
    if tie == "average" and int(count.max()) > 1:
        sums_bound = _maxabs(v) * n
        obj = sums_bound > LIMIT
        out = best.astype(object if obj else np.int64) @ _fit(v, obj)
        counts = np.flatnonzero(np.bincount(count.reshape(-1)))
        share = math.lcm(1, *(int(c) for c in counts if c > 0))
        obj = obj or sums_bound * share > LIMIT or share > LIMIT
        mult = share // _fit(np.maximum(count, 1), obj)
        return _reduce(_fit(out, obj) * mult[..., None], v_den * share)
    # One selected position per query (leftmost, rightmost, or an average without ties).
    if tie == "rightmost":
        idx = n - 1 - best[:, :, ::-1].argmax(axis=2)
    else:
        idx = best.argmax(axis=2)
    out = np.take_along_axis(v, idx[..., None], axis=1)
    if empty.any():
        out[:, empty, :] = 0
    return out, v_den


class _Layer:
    """A sublayer: the block's writes as (numerators, den, residual indices) pieces, then the
    residual connection."""

    def __init__(self, sub: Sublayer, dims: tuple[str, ...]) -> None:
        self.sub = sub
        self.index = {d: i for i, d in enumerate(dims)}
        block = sub.block
        match block:
            case AttentionLayer():
                self.heads = [
                    _Head(
                        h,
                        block.name,
                        _Linear(h.query, dims, f"head {h.name!r} query"),
                        _Linear(h.key, dims, f"head {h.name!r} key"),
                        _Linear(h.value, dims, f"head {h.name!r} value"),
                    )
                    for h in block.heads
                ]
                self.head_names = tuple(o for h in block.heads for o in h.value.outputs)
                self.output = (
                    None if block.output is None else _Linear(block.output, self.head_names, f"attention {block.name!r} W^O")
                )
                writes = block.output.outputs if block.output is not None else self.head_names
            case FFN():
                self.steps: list[_Linear | str] = []
                names: tuple[str, ...] = dims
                for idx, step in enumerate(block.steps):
                    match step:
                        case Affine():
                            self.steps.append(_Linear(step, names, f"ffn {block.name!r} step [{idx}]"))
                            names = step.outputs
                        case Activation(kind=kind):
                            self.steps.append(kind)
                        case LayerNorm():
                            raise NotBatchableError(f"ffn {block.name!r} step [{idx}] is a layer norm (√ is not batched)")
                        case _:
                            assert_never(step)
                writes = names if block.steps else ()
            case _:
                assert_never(block)
        _require_names(writes, self.index, f"the residual dims sublayer {sub.name!r} writes")

    def _pieces(self, x: Array, den: int, rows: slice) -> list[tuple[Array, int, tuple[str, ...]]]:
        block = self.sub.block
        match block:
            case AttentionLayer():
                outs = [(*_run_head(ch, x, den, rows), ch.head.value.outputs) for ch in self.heads]
                if self.output is None:
                    return outs
                common = math.lcm(1, *(d for _, d, _ in outs))
                bound = max((_maxabs(o) * (common // d) for o, d, _ in outs), default=0)
                obj = bound > LIMIT or common > LIMIT
                cat = (
                    np.concatenate([_fit(o, obj) * (common // d) for o, d, _ in outs], axis=-1)
                    if outs
                    else np.zeros((x.shape[0], len(range(*rows.indices(x.shape[1]))), 0), dtype=np.int64)
                )
                y, y_den = self.output.apply(cat, common)
                return [(y, y_den, self.output.outputs)]
            case FFN():
                if not block.steps:
                    return []
                # Position-wise: evaluate once per distinct input row (few: features are bits and
                # positions), then spread the results back.
                first = self.steps[0]
                assert isinstance(first, _Linear)  # FFN validates: the first step is an Affine
                read = first.read(x)
                flat = read.reshape(-1, read.shape[-1])
                found = _distinct_rows(flat)
                y, y_den = first.apply_read(flat if found is None else found[0], den)
                for step in self.steps[1:]:
                    if isinstance(step, _Linear):
                        y, y_den = step.apply(y, y_den)
                    elif step == "relu":
                        y = np.maximum(y, 0)
                    elif step == "step":
                        y, y_den = (y > 0).astype(np.int64), 1
                    elif step == "sigma":
                        y = np.maximum(y, 0)
                        if y.dtype == object or y_den <= LIMIT:
                            y = np.minimum(y, y_den)
                    else:  # pragma: no cover - Activation validates kind
                        raise SymbolicError(f"unknown activation {step!r}")
                if found is not None:
                    y = y[found[1]]
                return [(y.reshape(*x.shape[:-1], y.shape[-1]), y_den, block.steps[-1].outputs)]  # type: ignore[union-attr]
            case _:
                assert_never(block)

    def apply(self, x: Array, den: int, rows: slice) -> tuple[Array, int]:
        """The sublayer's new state at positions ``rows`` (attention reads every position)."""
        pieces = self._pieces(x, den, rows)
        x = x[:, rows]
        residual = self.sub.residual
        common = math.lcm(den if residual else 1, *(d for _, d, _ in pieces))
        parts = [_maxabs(p) * (common // d) for p, d, _ in pieces]
        bound = (_maxabs(x) * (common // den) if residual else 0) + sum(parts)
        obj = bound > LIMIT or common > LIMIT
        if residual:
            new = _fit(x, obj) * (common // den) if common != den else _fit(x, obj).copy()
        else:
            new = np.zeros(x.shape, dtype=object if obj else np.int64)
        for p, d, names in pieces:
            cols = np.array([self.index[o] for o in names], dtype=np.intp)
            new[..., cols] += _fit(p, obj) * (common // d) if common != d else _fit(p, obj)
        return _reduce(new, common)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Batch:
    """The classifier's exact logits ``numerators[w] / denominators[w]`` and accept bits
    (logit > 0), one entry per word, in the order the words were given."""

    accepted: Array
    numerators: Array
    denominators: Array

    def __len__(self) -> int:
        return len(self.accepted)

    def logit(self, w: int) -> Fraction:
        """The exact logit of word ``w`` (what ``symbolic.exact.run(...).output`` returns)."""
        return Fraction(int(self.numerators[w]), int(self.denominators[w]))

    def logits(self) -> list[Fraction]:
        return [self.logit(w) for w in range(len(self))]


def _concat(batches: Sequence[Batch]) -> Batch:
    if not batches:
        empty = np.zeros(0, dtype=np.int64)
        return Batch(np.zeros(0, dtype=bool), empty, empty)
    if len(batches) == 1:
        return batches[0]
    return Batch(
        np.concatenate([b.accepted for b in batches]),
        np.concatenate([b.numerators for b in batches]),
        np.concatenate([b.denominators for b in batches]),
    )


# --------------------------------------------------------------------------- the evaluator


class Evaluator:
    """A network compiled for batched exact evaluation.

    ``Evaluator(net).run(indices)`` evaluates the words given as an int array of shape
    (words, length) of indices into ``net.alphabet``; :func:`evaluate` takes words as symbols.
    """

    def __init__(self, net: Network) -> None:
        reason = supports(net)
        if reason is not None:
            raise NotBatchableError(f"network {net.name!r}: {reason}; evaluate it per word with symbolic.exact.run")
        emb = net.embedding
        readout = net.readout
        assert isinstance(emb, TokenEmbedding) and isinstance(readout, Classifier)  # supports() checked
        self.net = net
        self.emb = emb
        self.readout = readout
        self.dims = net.dims
        index = {d: i for i, d in enumerate(net.dims)}
        self.vocab = (*emb.alphabet, *emb.prefix, *emb.suffix)
        table = dict(emb.table)
        rows: list[list[Fraction]] = []
        for token in self.vocab:
            row = [Fraction(0)] * len(net.dims)
            _require_names([d for d, _ in table[token]], index, f"embedding of {token!r}")
            for d, v in table[token]:
                row[index[d]] += v
            rows.append(row)
        self.table = rows
        _require_names([d for d, _, _ in emb.positional], index, "positional features")
        self.layers = [_Layer(sub, net.dims) for sub in net.layers]
        self.logit = _Linear(readout.logit, net.dims, "classifier logit")
        attention = [i for i, sub in enumerate(net.layers) if isinstance(sub.block, AttentionLayer)]
        self.position_wise_from = (attention[-1] + 1) if attention else 0
        self._embeddings: dict[int, tuple[Array, Array, int]] = {}

    def _embedding(self, n: int) -> tuple[Array, Array, int]:
        """(token table, positional rows, den) for ``n`` tokens: integer arrays over one den."""
        hit = self._embeddings.get(n)
        if hit is not None:
            return hit
        emb = self.emb
        index = {d: i for i, d in enumerate(self.dims)}
        pos = [[Fraction(0)] * len(self.dims) for _ in range(n)]
        for t in range(n):
            i = emb.index_base + t
            for d, feat, coef in emb.positional:
                pos[t][index[d]] += coef * feature(feat)(i, n)
        den = math.lcm(_lcm_den([v for r in self.table for v in r]), _lcm_den([v for r in pos for v in r]))
        tab = [int(v * den) for r in self.table for v in r]
        pp = [int(v * den) for r in pos for v in r]
        obj = max(map(abs, tab), default=0) + max(map(abs, pp), default=0) > LIMIT
        t_obj, t64 = _ints(tab, (len(self.table), len(self.dims)))
        p_obj, p64 = _ints(pp, (n, len(self.dims)))
        hit = (t_obj, p_obj, den) if obj else (t64, p64, den)  # type: ignore[assignment]
        self._embeddings[n] = hit  # type: ignore[assignment]
        return hit  # type: ignore[return-value]

    def run(self, indices: Array, *, chunk: int = CHUNK) -> Batch:
        """Evaluate every row of ``indices`` (shape (words, length), indices into the alphabet)."""
        indices = np.asarray(indices)
        if indices.ndim != 2:
            raise WordError(f"indices must have shape (words, length), got shape {indices.shape}")
        if indices.size and (indices.min() < 0 or indices.max() >= len(self.emb.alphabet)):
            raise WordError(
                f"indices must lie in 0..{len(self.emb.alphabet) - 1} (the alphabet {self.emb.alphabet}); "
                f"got values from {indices.min()} to {indices.max()}"
            )
        parts = [self._chunk(indices[s : s + chunk]) for s in range(0, len(indices), max(1, chunk))]
        return _concat(parts)

    def _chunk(self, indices: Array) -> Batch:
        emb = self.emb
        words, m = indices.shape
        n = len(emb.prefix) + m + len(emb.suffix)
        table, pos, den = self._embedding(n)
        a = len(emb.alphabet)
        prefix = np.arange(a, a + len(emb.prefix))
        suffix = np.arange(a + len(emb.prefix), a + len(emb.prefix) + len(emb.suffix))
        tokens = np.concatenate(
            [np.broadcast_to(prefix, (words, len(prefix))), indices, np.broadcast_to(suffix, (words, len(suffix)))],
            axis=1,
        )
        x = table[tokens] + pos[None, :, :]
        t = self.readout.position if self.readout.position >= 0 else n + self.readout.position
        inside = 0 <= t < n
        sliced = False
        for li, layer in enumerate(self.layers):
            # After the last attention layer every block is position-wise: only the readout's
            # token matters, so the last attention layer computes its query there only.
            rows = slice(None)
            if inside and not sliced and li + 1 >= self.position_wise_from:
                if li + 1 == self.position_wise_from:
                    rows = slice(t, t + 1)
                else:
                    x = x[:, t : t + 1]
                sliced = True
            x, den = layer.apply(x, den, rows)
        if not inside:
            raise WordError(f"readout position {self.readout.position} is outside the {n} tokens")
        row = x[:, 0, :] if sliced else x[:, t, :]
        y, y_den = self.logit.apply(row, den)
        y = y[:, 0]
        dens = np.full(words, y_den, dtype=np.int64 if y_den <= LIMIT else object)
        return Batch(np.asarray(y > 0, dtype=bool), y, dens)


# --------------------------------------------------------------------------- words


def shortlex_block(size: int, length: int, start: int, stop: int) -> Array:
    """The words of ``length`` over an alphabet of ``size`` symbols with shortlex ranks
    ``start .. stop − 1`` (the order of ``itertools.product``), as an int array of indices.

    >>> shortlex_block(2, 3, 5, 8).tolist()
    [[1, 0, 1], [1, 1, 0], [1, 1, 1]]
    """
    if size**length > LIMIT:
        raise ValueError(f"{size}^{length} words do not fit int64 ranks; enumerate fewer words")
    ranks = np.arange(start, stop, dtype=np.int64)
    powers = size ** np.arange(length - 1, -1, -1, dtype=np.int64)
    return (ranks[:, None] // powers[None, :]) % size


def evaluate(net: Network, words: Sequence[str | Sequence[str]], *, chunk: int = CHUNK) -> Batch:
    """Evaluate ``net`` on every word (any lengths; grouped by length inside), exactly.

    Raises what :func:`symbolic.exact.run` raises (``UndefinedValueError`` for an empty masked
    set under ``empty="error"``, ``WordError`` for a symbol outside the alphabet) and
    :class:`NotBatchableError` for a network :func:`supports` refuses.
    """
    ev = Evaluator(net)
    code = {s: i for i, s in enumerate(net.alphabet)}
    by_length: dict[int, list[int]] = {}
    rows: list[list[int]] = []
    for w, word in enumerate(words):
        symbols = tokenize(net.alphabet, word)
        rows.append([code[s] for s in symbols])
        by_length.setdefault(len(symbols), []).append(w)
    count = len(rows)
    accepted = np.zeros(count, dtype=bool)
    nums = np.zeros(count, dtype=object)
    dens = np.ones(count, dtype=object)
    for m, members in sorted(by_length.items()):
        idx = np.array([rows[w] for w in members], dtype=np.int64).reshape(len(members), m)
        got = ev.run(idx, chunk=chunk)
        sel = np.array(members, dtype=np.intp)
        accepted[sel] = got.accepted
        nums[sel] = got.numerators
        dens[sel] = got.denominators
    return Batch(accepted, nums, dens)


def accepts(net: Network, words: Sequence[str | Sequence[str]]) -> list[bool]:
    """The accept bit of every word, exactly as ``symbolic.exact.run(net, w).accepted``."""
    return [bool(b) for b in evaluate(net, words).accepted]
