"""Batched exact evaluation of hardmax networks: many words of one length at once, in integers.

A state is an integer array ``num`` of shape (words, positions, dims) over one positive Python
int ``den`` (the value of a coordinate is ``num/den``, exactly). Every step first bounds the
magnitude of what it will compute (``max|x|`` times the largest row sum of ``|W|``, and so on);
it runs in numpy ``int64`` when the bound is at most 2^62 and in numpy object arrays of Python
ints otherwise, so nothing ever wraps. Denominators are reduced by the gcd of the whole tensor
after each sublayer.

The semantics are :mod:`netproof.symbolic.evaluation`'s, restricted to what is exact in integers and
cheap to batch: token embeddings with positional features, residual sublayers without layer
norm, FFNs of ``relu`` / ``sigma`` / ``step``, hardmax attention (any tie rule, ``dot`` or
``neg_abs_dot`` scoring, any mask, either empty rule, optional W^O) and a :class:`Classifier`.
A hardmax head ignores its (positive) :class:`Scale`, as the exact interpreter does: a positive
factor does not move the argmax. :func:`supports` says why a network is refused (softmax, layer
norm, a flat embedding, a next-symbol readout).

:func:`trace` (``Evaluator.trace``) keeps what claims about traces read, still exactly: every
residual state at every position (:class:`ExactState`: numerators over one denominator, with
exact comparisons to rationals) and, for every hardmax head, the first and last maximizing key
and the number of maximizers per (word, query) (:class:`Selections`). The accept-only path
(``run``) keeps nothing and still evaluates only the readout's position after the last
attention layer.

>>> from netproof.constructions.yao2021 import dyck_recognizer
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
    Convolution,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .positional import feature
from .words import tokenize

__all__ = [
    "CHUNK",
    "LIMIT",
    "Batch",
    "BatchedTrace",
    "Evaluator",
    "ExactState",
    "NotBatchableError",
    "PairNormUndefined",
    "Selections",
    "accepts",
    "evaluate",
    "shortlex_block",
    "supports",
    "trace",
]

LIMIT = 1 << 62
"""The largest magnitude an ``int64`` computation may reach; above it the step runs in Python ints."""

CHUNK = 1 << 14
"""Words evaluated together (memory: about CHUNK · positions · dims · 8 bytes per state)."""

Array = np.ndarray[Any, Any]


class NotBatchableError(SymbolicError, ValueError):
    """The network uses a block the batched evaluator does not support (see :func:`supports`)."""


# --------------------------------------------------------------------------- support


def supports(net: Network | Seq2Seq, *, pair_norms: bool = False) -> str | None:
    """None if :class:`Evaluator` can run ``net``, else a one-line reason. With ``pair_norms``,
    an FFN's layer norm over two dims with eps = 0 is run too (see :class:`PairNormUndefined`).

    >>> from netproof.constructions.chiang2022 import parity_transformer
    >>> supports(parity_transformer())
    "attention 'count' head 'count' uses softmax; only hardmax heads are batched"
    """
    from .recurrent_ir import RecurrentNetwork

    if isinstance(net, RecurrentNetwork):
        return f"a RecurrentNetwork ({type(net.cell).__name__}); only transformer-style Networks are batched (use symbolic.recurrent.run)"
    if isinstance(net, Seq2Seq):
        return (
            f"{net.name!r} is an encoder–decoder (Seq2Seq) whose decoder feeds its output back; the "
            "batched evaluator runs encoder-style Networks only: use symbolic.seq2seq.run"
        )
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
                    if isinstance(step, LayerNorm) and not (pair_norms and _pair_norm(step)):
                        return f"ffn {block.name!r} step [{idx}] is a layer norm (√ is not batched)"
                    if isinstance(step, Activation) and step.kind == "gelu":
                        return f"ffn {block.name!r} step [{idx}] is a GELU (x·Φ(x) is not rational)"
            case Convolution():
                return f"convolution {block.name!r}; convolution blocks are not batched"
            case AttentionLayer():
                for h in block.heads:
                    where = f"attention {block.name!r} head {h.name!r}"
                    if h.relative:
                        return f"{where} has relative-position terms (Chang et al.); they are not batched"
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


class PairNormUndefined(UndefinedValueError):
    """A layer norm over two dims with eps = 0 met two equal values (0/0) in some word of a
    batch: that word's output is undefined, and which word it is, and what the words before it
    give, the batch does not say. Only an :class:`Evaluator` made with ``pair_norms=True``
    raises it; its caller evaluates the batch's words one at a time instead."""


def _pair_norm(step: LayerNorm) -> bool:
    """A layer norm the batched integers run exactly: over two dims u, v with eps = 0, where
    the mean is (u + v)/2 and the root of the variance |u − v|/2, so the outputs are
    sign(u − v) and sign(v − u) (undefined where u = v)."""
    return step.eps == 0 and step.over is not None and len(step.over) == 2


def _pair_normed(y: Array, den: int, a: int, b: int, where: str) -> Array:
    """``y`` (numerators over ``den``, one row per input) with columns ``a`` and ``b`` replaced by
    their layer norm: ±1 as ``±den``, the sign of their difference (see :func:`_pair_norm`)."""
    diff = y[:, a] - y[:, b]
    if np.any(diff == 0):
        raise PairNormUndefined(
            f"{where}: layer norm of a constant vector with eps=0 is 0/0 on some word of the batch"
        )
    out = y.astype(object) if y.dtype != object and den > LIMIT else y.copy()
    sign = np.where(diff > 0, 1, -1).astype(out.dtype)
    out[:, a] = sign * den
    out[:, b] = -sign * den
    return out


def _require_names(names: Sequence[str], index: dict[str, int], where: str) -> None:
    """Every name in ``names`` is a column of ``index`` (network validation guarantees it)."""
    missing = [n for n in names if n not in index]
    if missing:
        raise NotBatchableError(
            f"{where}: {', '.join(map(repr, missing))} {'is' if len(missing) == 1 else 'are'} not among "
            f"the available names ({', '.join(index) or 'none'}); build the network through "
            "netproof.symbolic.ir.Network, which validates it, or fix the name"
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
        used = sorted(
            {
                index[name]
                for row in a.weights
                for name, w in zip(a.inputs, row, strict=True)
                if w != 0
            }
        )
        pos = {c: k for k, c in enumerate(used)}
        self.outputs = a.outputs
        self.cols: Array | None = (
            None if used == list(range(len(names_in))) else np.array(used, dtype=np.intp)
        )
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
    code = (
        (rows - lo) @ np.array(radix, dtype=np.int64)
        if rows.shape[1]
        else np.zeros(rows.shape[0], dtype=np.int64)
    )
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


def _maximizers(ch: _Head, x: Array, den: int, rows: slice, allowed: Array) -> Array:
    """``best[w, i, j]``: key ``j`` has the largest score among the keys ``allowed[i]`` of query
    ``rows[i]`` of word ``w`` (exact integer comparisons; False everywhere for an empty set)."""
    h = ch.head
    k, _ = ch.key.apply(x, den)
    q, _ = ch.query.apply(x[:, rows], den)
    n = x.shape[1]
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
    return (masked == masked.max(axis=2, keepdims=True)) & allowed  # type: ignore[no-any-return]


def _summary(best: Array, count: Array) -> tuple[Array, Array, Array]:
    """(first, last, count) of the maximizers per (word, query): −1 for an empty set."""
    n = best.shape[2]
    if n == 0:
        none = np.full(count.shape, -1, dtype=np.int64)
        return none, none.copy(), count.astype(np.int64)
    first = best.argmax(axis=2).astype(np.int64)
    last = (n - 1 - best[:, :, ::-1].argmax(axis=2)).astype(np.int64)
    empty = count == 0
    first[empty] = -1
    last[empty] = -1
    return first, last, count.astype(np.int64)


def _run_head(
    ch: _Head,
    x: Array,
    den: int,
    rows: slice,
    summary: list[tuple[Array, Array, Array]] | None = None,
) -> tuple[Array, int]:
    """One hardmax head for the query positions ``rows`` of every word: ``(out numerators, den)``.

    Keys and values come from every position; queries only from ``rows`` (the positions read
    later). The empty-set check covers every position, as the per-word interpreter's does.
    With ``summary``, the (first, last, count) of the maximizers of every query is appended to it.
    """
    h = ch.head
    n = x.shape[1]
    allowed_all = _allowed(h.mask, n)
    empty_all: Array = ~np.any(allowed_all, axis=1)
    if h.empty == "error" and empty_all.any():
        i = int(np.flatnonzero(empty_all)[0])
        raise UndefinedValueError(
            f"attention {ch.layer!r} head {h.name!r}: position {i} attends to an empty set under mask "
            f"{h.mask!r} and the head's empty rule is 'error'"
        )
    allowed, empty = allowed_all[rows], empty_all[rows]
    v, v_den = ch.value.apply(x, den)
    queries = len(range(*rows.indices(n)))
    if n == 0 or queries == 0:
        if summary is not None:
            summary.append(
                _summary(
                    np.zeros((x.shape[0], queries, n), dtype=bool),
                    np.zeros((x.shape[0], queries), dtype=np.int64),
                )
            )
        return np.zeros((x.shape[0], queries, v.shape[-1]), dtype=np.int64), 1
    best = _maximizers(ch, x, den, rows, allowed)
    assert isinstance(h.normalizer, Hardmax)  # supports() refused the rest
    tie = h.normalizer.tie
    count = best.sum(axis=2)
    if summary is not None:
        summary.append(_summary(best, count))
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
    idx = n - 1 - best[:, :, ::-1].argmax(axis=2) if tie == "rightmost" else best.argmax(axis=2)
    out = np.take_along_axis(v, idx[..., None], axis=1)
    if empty.any():
        out[:, empty, :] = 0
    return out, v_den


class _Layer:
    """A sublayer: the block's writes as (numerators, den, residual indices) pieces, then the
    residual connection."""

    def __init__(self, sub: Sublayer, dims: tuple[str, ...], pair_norms: bool = False) -> None:
        self.sub = sub
        self.index = {d: i for i, d in enumerate(dims)}
        self.heads: list[_Head] = []
        block = sub.block
        match block:
            case AttentionLayer():
                for h in block.heads:
                    if h.relative:
                        raise NotBatchableError(
                            f"attention {block.name!r} head {h.name!r} has relative-position terms "
                            "(Chang et al.); they are not batched: use the exact interpreter"
                        )
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
                    None
                    if block.output is None
                    else _Linear(block.output, self.head_names, f"attention {block.name!r} W^O")
                )
                writes = block.output.outputs if block.output is not None else self.head_names
            case FFN():
                self.steps: list[_Linear | str | tuple[int, int, str]] = []
                names: tuple[str, ...] = dims
                for idx, step in enumerate(block.steps):
                    match step:
                        case Affine():
                            self.steps.append(
                                _Linear(step, names, f"ffn {block.name!r} step [{idx}]")
                            )
                            names = step.outputs
                        case Activation(kind="gelu"):
                            raise NotBatchableError(
                                f"ffn {block.name!r} step [{idx}] is a GELU (x·Φ(x) is not rational)"
                            )
                        case Activation(kind=kind):
                            self.steps.append(kind)
                        case LayerNorm() if pair_norms and _pair_norm(step):
                            assert step.over is not None  # _pair_norm checked
                            u, v = step.over
                            where = f"ffn {block.name!r} step [{idx}] (a layer norm over {u}, {v})"
                            _require_names((u, v), {n: i for i, n in enumerate(names)}, where)
                            self.steps.append((names.index(u), names.index(v), where))
                        case LayerNorm():
                            raise NotBatchableError(
                                f"ffn {block.name!r} step [{idx}] is a layer norm (√ is not batched)"
                            )
                        case _:
                            assert_never(step)
                writes = names if block.steps else ()
            case Convolution():
                raise NotBatchableError(
                    f"convolution {block.name!r}; convolution blocks are not batched"
                )
            case _:
                assert_never(block)
        _require_names(writes, self.index, f"the residual dims sublayer {sub.name!r} writes")

    def _pieces(
        self, x: Array, den: int, rows: slice, summary: list[tuple[Array, Array, Array]] | None
    ) -> list[tuple[Array, int, tuple[str, ...]]]:
        block = self.sub.block
        match block:
            case AttentionLayer():
                outs = [
                    (*_run_head(ch, x, den, rows, summary), ch.head.value.outputs)
                    for ch in self.heads
                ]
                if self.output is None:
                    return outs
                common = math.lcm(1, *(d for _, d, _ in outs))
                bound = max((_maxabs(o) * (common // d) for o, d, _ in outs), default=0)
                obj = bound > LIMIT or common > LIMIT
                cat = (
                    np.concatenate([_fit(o, obj) * (common // d) for o, d, _ in outs], axis=-1)
                    if outs
                    else np.zeros(
                        (x.shape[0], len(range(*rows.indices(x.shape[1]))), 0), dtype=np.int64
                    )
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
                    elif isinstance(step, tuple):
                        y = _pair_normed(y, y_den, *step)
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
            case Convolution():  # pragma: no cover - _Layer refuses convolutions
                raise NotBatchableError(
                    f"convolution {block.name!r}; convolution blocks are not batched"
                )
            case _:
                assert_never(block)

    def apply(
        self,
        x: Array,
        den: int,
        rows: slice,
        summary: list[tuple[Array, Array, Array]] | None = None,
    ) -> tuple[Array, int]:
        """The sublayer's new state at positions ``rows`` (attention reads every position). With
        ``summary``, an attention layer appends each head's (first, last, count) of maximizers."""
        pieces = self._pieces(x, den, rows, summary)
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


@dataclass(frozen=True, slots=True)
class ExactState:
    """One residual state of every word of a batch (one length), exactly: dim ``d`` of token ``t``
    of word ``w`` is ``num[w, t, dims.index(d)] / den`` (``den`` a positive Python int; ``num``
    int64, or object of Python ints where a value passed 2^62). ``label`` is the step's name
    (``"input"`` for the embedding), as in :class:`netproof.symbolic.evaluation.State`.

    >>> from netproof.constructions.yao2021 import dyck_recognizer
    >>> st = trace(dyck_recognizer(k=1, depth=1), ["()", ")("]).state("logic1")
    >>> st.numerators("m").tolist(), st.den   # p = i/n shares the denominator n = 4
    ([[4, 4, 4, 4], [4, 0, 0, 4]], 4)
    >>> st.equals("m", 1).tolist()
    [[True, True, True, True], [True, False, False, True]]
    """

    label: str
    dims: tuple[str, ...]
    num: Array
    den: int

    def _column(self, dim: str) -> int:
        try:
            return self.dims.index(dim)
        except ValueError:
            raise KeyError(
                f"no dim {dim!r} in state {self.label!r}; dims: {' '.join(self.dims)}"
            ) from None

    def numerators(self, dim: str) -> Array:
        """The numerators of ``dim`` over :attr:`den`, shape (words, positions)."""
        return self.num[:, :, self._column(dim)]

    def value(self, w: int, t: int, dim: str) -> Fraction:
        """The exact value of ``dim`` at token ``t`` of word ``w``."""
        return Fraction(int(self.num[w, t, self._column(dim)]), self.den)

    def compare(self, dim: str, q: Fraction | int) -> Array:
        """sign(value − q) of ``dim`` at every (word, token) as an int64 array of −1/0/1, exactly:
        ``num/den`` against ``a/b`` is ``num·b`` against ``a·den`` (in Python ints past 2^62)."""
        q = Fraction(q)
        a, b = q.numerator, q.denominator
        x = self.numerators(dim)
        obj = _maxabs(x) * b > LIMIT or abs(a) * self.den > LIMIT
        lhs = _fit(x, obj) * b if b != 1 else _fit(x, obj)
        rhs = a * self.den
        return (lhs > rhs).astype(np.int64) - (lhs < rhs).astype(np.int64)

    def equals(self, dim: str, q: Fraction | int) -> Array:
        """``value == q`` of ``dim`` at every (word, token), exactly: a bool array."""
        return self.compare(dim, q) == 0  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Selections:
    """Where one hardmax head put its attention, for every (word, query position), summarized
    exactly: the maximizers of the score among the allowed keys are ``count`` tokens, from
    ``first`` to ``last`` (int64 arrays of shape (words, positions); ``count`` 0 and ``first`` =
    ``last`` = −1 for an empty masked set). The maximizers do not depend on the tie rule ``tie``;
    what the head *selects* does (all maximizers, the first or the last): see
    :meth:`BatchedTrace.selected`."""

    layer: str
    head: str
    tie: str
    first: Array
    last: Array
    count: Array


@dataclass(frozen=True, slots=True)
class BatchedTrace:
    """The exact trace of many words of one length: every residual state (:class:`ExactState`,
    ``states[0]`` the embedding, then one per sublayer, all positions) and every hardmax head's
    :class:`Selections`, in the order of :class:`netproof.symbolic.evaluation.Trace` (layer, then head),
    plus the accept bits. Word ``w`` is row ``w`` of ``indices`` (symbols as indices into
    ``network.alphabet``); ``n`` counts the positions, special tokens included. ``xp`` is the
    array namespace (numpy) for code that works on these arrays without importing it.
    """

    network: Network
    indices: Array
    n: int
    states: tuple[ExactState, ...]
    selections: tuple[Selections, ...]
    batch: Batch
    _evaluator: Evaluator

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    @property
    def xp(self) -> Any:
        return np

    @property
    def accepted(self) -> Array:
        return self.batch.accepted

    def state(self, label: str) -> ExactState:
        for s in self.states:
            if s.label == label:
                return s
        raise KeyError(f"no state {label!r}; states: {', '.join(s.label for s in self.states)}")

    def value(self, label: str, w: int, t: int, dim: str) -> Fraction:
        """The exact value of ``dim`` at token ``t`` of word ``w`` after the step ``label``."""
        return self.state(label).value(w, t, dim)

    def selection(self, layer: str, head: str) -> Selections:
        for s in self.selections:
            if s.layer == layer and s.head == head:
                return s
        shown = ", ".join(f"{s.layer}/{s.head}" for s in self.selections) or "none"
        raise KeyError(f"no head {head!r} in attention layer {layer!r}; heads: {shown}")

    def maximizers(self, layer: str, head: str, w: int, t: int) -> tuple[int, ...]:
        """Every token with the largest score for query ``t`` of word ``w`` (recomputed exactly
        from the state before the layer; () for an empty masked set)."""
        for li, sub in enumerate(self.network.layers):
            if sub.name == layer and isinstance(sub.block, AttentionLayer):
                for ch in self._evaluator.layers[li].heads:
                    if ch.head.name == head:
                        before = self.states[li]
                        allowed = _allowed(ch.head.mask, self.n)[t : t + 1]
                        best = _maximizers(
                            ch, before.num[w : w + 1], before.den, slice(t, t + 1), allowed
                        )
                        return tuple(int(j) for j in np.flatnonzero(best[0, 0]))
        self.selection(layer, head)  # raises with the heads there are
        raise AssertionError("unreachable")  # pragma: no cover

    def selected(self, layer: str, head: str, w: int, t: int) -> tuple[int, ...]:
        """The tokens the head gives weight to, as ``Selection.selected`` of
        :func:`netproof.symbolic.exact.run`: every maximizer under tie rule ``average``, the first or the
        last under ``leftmost`` / ``rightmost``, () for an empty set."""
        sel = self.selection(layer, head)
        if int(sel.count[w, t]) == 0:
            return ()
        if sel.tie == "leftmost":
            return (int(sel.first[w, t]),)
        if sel.tie == "rightmost":
            return (int(sel.last[w, t]),)
        if int(sel.count[w, t]) == 1:
            return (int(sel.first[w, t]),)
        return self.maximizers(layer, head, w, t)


# --------------------------------------------------------------------------- the evaluator


class Evaluator:
    """A network compiled for batched exact evaluation.

    ``Evaluator(net).run(indices)`` evaluates the words given as an int array of shape
    (words, length) of indices into ``net.alphabet``; :func:`evaluate` takes words as symbols.
    """

    def __init__(self, net: Network, *, pair_norms: bool = False) -> None:
        reason = supports(net, pair_norms=pair_norms)
        if reason is not None:
            raise NotBatchableError(
                f"network {net.name!r}: {reason}; evaluate it per word with symbolic.exact.run"
            )
        emb = net.embedding
        readout = net.readout
        assert isinstance(emb, TokenEmbedding) and isinstance(
            readout, Classifier
        )  # supports() checked
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
        self.layers = [_Layer(sub, net.dims, pair_norms) for sub in net.layers]
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
        den = math.lcm(
            _lcm_den([v for r in self.table for v in r]), _lcm_den([v for r in pos for v in r])
        )
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
        indices = self._check(indices)
        parts = [self._chunk(indices[s : s + chunk]) for s in range(0, len(indices), max(1, chunk))]
        return _concat(parts)

    def trace(self, indices: Array) -> BatchedTrace:
        """Evaluate every row of ``indices`` (one length) at once, keeping every state at every
        position and every hardmax head's selections (memory: about words · positions · dims · 8
        bytes per sublayer; the caller chunks)."""
        indices = self._check(indices)
        states: list[ExactState] = []
        selections: list[Selections] = []
        batch = self._chunk(indices, (states, selections))
        n = states[0].num.shape[1]
        return BatchedTrace(self.net, indices, n, tuple(states), tuple(selections), batch, self)

    def _check(self, indices: Array) -> Array:
        indices = np.asarray(indices)
        if indices.ndim != 2:
            raise WordError(f"indices must have shape (words, length), got shape {indices.shape}")
        if indices.size and (indices.min() < 0 or indices.max() >= len(self.emb.alphabet)):
            raise WordError(
                f"indices must lie in 0..{len(self.emb.alphabet) - 1} (the alphabet {self.emb.alphabet}); "
                f"got values from {indices.min()} to {indices.max()}"
            )
        return indices

    def _chunk(
        self, indices: Array, keep: tuple[list[ExactState], list[Selections]] | None = None
    ) -> Batch:
        emb = self.emb
        words, m = indices.shape
        n = len(emb.prefix) + m + len(emb.suffix)
        table, pos, den = self._embedding(n)
        a = len(emb.alphabet)
        prefix = np.arange(a, a + len(emb.prefix))
        suffix = np.arange(a + len(emb.prefix), a + len(emb.prefix) + len(emb.suffix))
        tokens = np.concatenate(
            [
                np.broadcast_to(prefix, (words, len(prefix))),
                indices,
                np.broadcast_to(suffix, (words, len(suffix))),
            ],
            axis=1,
        )
        x = table[tokens] + pos[None, :, :]
        t = self.readout.position if self.readout.position >= 0 else n + self.readout.position
        inside = 0 <= t < n
        sliced = False
        if keep is not None:
            keep[0].append(ExactState("input", self.dims, x, den))
        for li, layer in enumerate(self.layers):
            # After the last attention layer every block is position-wise: only the readout's
            # token matters, so the last attention layer computes its query there only (unless
            # the trace is kept: then every position).
            rows = slice(None)
            if keep is None and inside and not sliced and li + 1 >= self.position_wise_from:
                if li + 1 == self.position_wise_from:
                    rows = slice(t, t + 1)
                else:
                    x = x[:, t : t + 1]
                sliced = True
            if keep is None:
                x, den = layer.apply(x, den, rows)
                continue
            summary: list[tuple[Array, Array, Array]] = []
            x, den = layer.apply(x, den, rows, summary)
            keep[0].append(ExactState(layer.sub.name, self.dims, x, den))
            for ch, (first, last, count) in zip(layer.heads, summary, strict=True):
                assert isinstance(ch.head.normalizer, Hardmax)  # supports() refused the rest
                keep[1].append(
                    Selections(
                        layer.sub.name, ch.head.name, ch.head.normalizer.tie, first, last, count
                    )
                )
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

    Raises what :func:`netproof.symbolic.exact.run` raises (``UndefinedValueError`` for an empty masked
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


def trace(net: Network, words: Sequence[str | Sequence[str]]) -> BatchedTrace:
    """The :class:`BatchedTrace` of ``words`` (all of one length, given as symbols), at once.

    >>> from netproof.constructions.yao2021 import dyck_recognizer
    >>> t = trace(dyck_recognizer(k=1, depth=1), ["()", ")("])
    >>> t.n, t.accepted.tolist(), t.selected("match1", "left", 1, 2)
    (4, [True, False], (1,))
    """
    code = {s: i for i, s in enumerate(net.alphabet)}
    rows = [[code[s] for s in tokenize(net.alphabet, word)] for word in words]
    lengths = sorted({len(r) for r in rows})
    if len(lengths) > 1:
        raise WordError(
            f"a batched trace holds words of one length; got lengths {lengths}: trace each length on its own"
        )
    m = lengths[0] if lengths else 0
    return Evaluator(net).trace(np.array(rows, dtype=np.int64).reshape(len(rows), m))


def accepts(net: Network, words: Sequence[str | Sequence[str]]) -> list[bool]:
    """The accept bit of every word, exactly as ``symbolic.exact.run(net, w).accepted``."""
    return [bool(b) for b in evaluate(net, words).accepted]
