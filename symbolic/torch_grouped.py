"""Key-grouped attention for the torch backend: heads whose keys take few distinct values per word,
found from the IR before running and computed in O(n · groups) instead of O(n²).

**Detection (exact, static).** :func:`key_sources` follows every residual dim through the
network and records what its value at a position can depend on: the position's token
(``"token"``), a positional feature with two values (``cos(iπ)``, ``I[i=0]``, ``I[i=1]``,
``I[i=n-1]``), or anything else about the position (``"pos"``: ``i``, ``i/n``, an attention output
that differs from query to query, a convolution). Word constants (``1``, ``n``, ``1/n``, the output
of an unmasked head whose query is itself a word constant) depend on nothing. An FFN's outputs
depend on what its first affine map reads, a layer norm mixes the dims it spans, a residual adds
the sublayer's sources to the old ones. A head whose key map reads only dims free of ``"pos"``
(and that has no relative-position terms) has at most ``groups`` distinct key vectors per word —
the token count times 2 per feature — and positions of one group have *exactly* equal keys (in
exact arithmetic, which is the semantics the float run approximates): :class:`KeyGroups` says how
to compute each position's group from its token id and index.

**Computation.** :func:`grouped_head` takes one representative key per group (its first position in
the word), the scores of every query against the groups (words × queries × groups), and from
running sums over the mask (prefix sums for causal masks, suffix sums for anticausal ones, shifted
by one position for strict masks, totals for ``none``) the number of allowed keys and the sum of
their values per group. Hardmax: the maximizing groups within the tolerance; ``average`` divides
the selected groups' value sums by their counts, ``leftmost`` / ``rightmost`` take the first / last
allowed position of the selected groups (the same value row as the n × n path). Softmax: weights
``count_g · e^{κ s_g − m}`` per group. The statistics (smallest gap, near ties) are computed over the
groups' scores: equal keys give equal scores, so they are the same as over every key.

**Agreement with the n × n path.** Scores and hardmax decisions (selections, gaps, ties, and the
``leftmost`` / ``rightmost`` outputs) are the same dot products of the same vectors. Sums are taken
in another order (a running sum per group, then a sum over the groups, instead of one dot product
over the keys), so ``average`` and softmax outputs may differ in the last bits: by at most
``(n + groups) · eps · Σ_j |w_j v_j|`` per entry (the usual bound of a reordered floating-point
sum; ``tests/backends/test_grouped_torch.py`` checks this bound). torch comes from the compiler
(it is passed in); this module imports the IR and, from the exact interpreter
(:mod:`netproof.symbolic.evaluation`, which groups equal keys per word at run time), its limit
:data:`~netproof.symbolic.evaluation.GROUPED_MAX` on the number of groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .evaluation import GROUPED_MAX
from .ir import (
    FFN,
    Affine,
    AttentionLayer,
    Convolution,
    Hardmax,
    Head,
    Network,
    TokenEmbedding,
)

__all__ = [
    "TWO_VALUED",
    "WORD_CONSTANT",
    "GroupedResult",
    "KeyGroups",
    "group_ids",
    "grouped_head",
    "key_groups",
    "key_sources",
    "query_sources",
]


WORD_CONSTANT = frozenset({"1", "n", "1/n"})
"""Positional features with one value per word."""

TWO_VALUED = ("cos(iπ)", "I[i=0]", "I[i=1]", "I[i=n-1]")
"""Positional features with two values per word (an indicator of the position)."""

POS = "pos"
TOKEN = "token"


@dataclass(frozen=True)
class KeyGroups:
    """How a head's key groups are found: by the token id (``token``) and by the indicators of
    ``features`` (of :data:`TWO_VALUED`); ``count`` groups at most."""

    token: bool
    features: tuple[str, ...]
    count: int


def _reads(a: Affine) -> set[str]:
    """The inputs of ``a`` with a nonzero weight."""
    return {i for c, i in enumerate(a.inputs) if any(row[c] != 0 for row in a.weights)}


def _writes(a: Affine) -> set[str]:
    """The outputs of ``a`` with a nonzero weight or bias."""
    return {
        o
        for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True)
        if b != 0 or any(w != 0 for w in row)
    }


def _union(state: Mapping[str, frozenset[str]], dims: Sequence[str] | set[str]) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for d in dims:
        out |= state.get(d, frozenset())
    return out


def key_sources(net: Network) -> dict[tuple[str, str], frozenset[str]]:
    """For every head (sublayer name, head name): what its key vector at a position depends on
    (``"token"``, names of :data:`TWO_VALUED` features, ``"pos"`` for anything else about the
    position; an empty set: a word constant). A relative head counts as ``"pos"``."""
    return _walk(net)[0]


def query_sources(net: Network) -> dict[tuple[str, str], frozenset[str]]:
    """For every head (sublayer name, head name): what its query vector at a position depends on,
    in the terms of :func:`key_sources`; an empty set: the query is the same at every position of
    a word (Dyck's ``q = 1``), which :mod:`netproof.symbolic.torch_running` uses."""
    return _walk(net)[1]


def _walk(
    net: Network,
) -> tuple[dict[tuple[str, str], frozenset[str]], dict[tuple[str, str], frozenset[str]]]:
    """The sources of every head's keys and queries (:func:`key_sources`, :func:`query_sources`)."""
    emb = net.embedding
    state: dict[str, frozenset[str]] = {d: frozenset() for d in net.dims}
    if not isinstance(emb, TokenEmbedding):
        unknown = {
            (sub.name, h.name): frozenset({POS})
            for sub in net.layers
            if isinstance(sub.block, AttentionLayer)
            for h in sub.block.heads
        }
        return unknown, dict(unknown)
    for tok, row in emb.table:
        del tok
        for d, v in row:
            if v != 0 and d in state:
                state[d] = state[d] | {TOKEN}
    for d, f, c in emb.positional:
        if c == 0 or d not in state or f in WORD_CONSTANT:
            continue
        state[d] = state[d] | {f if f in TWO_VALUED else POS}
    result: dict[tuple[str, str], frozenset[str]] = {}
    queries: dict[tuple[str, str], frozenset[str]] = {}
    for sub in net.layers:
        block = sub.block
        out: dict[str, frozenset[str]] = {}
        match block:
            case AttentionLayer():
                classes = []
                for h in block.heads:
                    key = _union(state, _reads(h.key))
                    if h.relative:
                        key = key | {POS}
                    result[(sub.name, h.name)] = key
                    query = _union(state, _reads(h.query))
                    queries[(sub.name, h.name)] = query | {POS} if h.relative else query
                    constant = h.mask == "none" and not h.relative and not query
                    # an unmasked head with a word-constant query gives every position the same output
                    cls: frozenset[str] = frozenset() if constant else frozenset({POS})
                    classes.append(cls)
                    if block.output is None:
                        for d in _writes(h.value):
                            out[d] = out.get(d, frozenset()) | cls
                if block.output is not None:
                    every = frozenset().union(*classes) if classes else frozenset()
                    for d in _writes(block.output):
                        out[d] = every
            case FFN():
                affines = [st for st in block.steps if isinstance(st, Affine)]
                if affines:
                    src = _union(state, _reads(affines[0]))
                    for d in _writes(affines[-1]):
                        out[d] = src
                elif block.steps:
                    every = _union(state, list(net.dims))
                    out = dict.fromkeys(net.dims, every)
            case Convolution():
                for d in block.outputs:
                    out[d] = frozenset({POS})
            case _:  # pragma: no cover - the IR has three blocks
                raise TypeError(f"unknown block {type(block).__name__}")
        if sub.residual:
            for d, cls in out.items():
                state[d] = state.get(d, frozenset()) | cls
        else:
            state = {d: out.get(d, frozenset()) for d in net.dims}
        if sub.post_ln is not None:
            over = list(sub.post_ln.over) if sub.post_ln.over is not None else list(net.dims)
            mixed = _union(state, over)
            for d in over:
                state[d] = mixed
    return result, queries


def key_groups(
    net: Network, h: Head, layer: str, sources: Mapping[tuple[str, str], frozenset[str]]
) -> KeyGroups | None:
    """The :class:`KeyGroups` of head ``h`` of sublayer ``layer``, or None when its keys may take a
    different value at every position."""
    src = sources.get((layer, h.name))
    if src is None or POS in src or h.relative or not isinstance(net.embedding, TokenEmbedding):
        return None
    features = tuple(f for f in TWO_VALUED if f in src)
    token = TOKEN in src
    count = (len(net.embedding.table) if token else 1) * 2 ** len(features)
    if count > GROUPED_MAX:  # the exact interpreter's limit; the compiler also wants 2 · count <= n
        return None
    return KeyGroups(token, features, count)


def group_ids(torch: Any, kg: KeyGroups, ids: Any, n_tensor: Any, index_base: int) -> Any:
    """Each position's group (words × positions, int64): token id, then one bit per feature."""
    B, L = ids.shape
    gid = ids.clone() if kg.token else torch.zeros(B, L, dtype=torch.long, device=ids.device)
    i = torch.arange(L, device=ids.device)[None, :] + index_base
    n = n_tensor.to(torch.long)[:, None]
    for f in kg.features:
        if f == "cos(iπ)":
            bit = torch.remainder(i, 2).expand(B, L)
        elif f == "I[i=0]":
            bit = (i == 0).expand(B, L)
        elif f == "I[i=1]":
            bit = (i == 1).expand(B, L)
        else:  # I[i=n-1]
            bit = i == n - 1
        gid = gid * 2 + bit.to(torch.long)
    return gid


def _strict(torch: Any, t: Any, suffix: bool) -> Any:
    """Inclusive running sums along dim 1 made strict: moved one position (toward the start for a
    suffix sum, toward the end for a prefix sum), the vacated position zero. No subtraction."""
    z = t.new_zeros(t[:, :1].shape)
    return torch.cat([t[:, 1:], z], dim=1) if suffix else torch.cat([z, t[:, :-1]], dim=1)


def _running(torch: Any, t: Any, mask: str) -> Any:
    """Sums of ``t`` (words × positions × ...) over the keys each query may see under ``mask``
    (``none``: the total, broadcast over the queries)."""
    if mask == "none":
        return t.sum(dim=1, keepdim=True)
    suffix = mask in ("anticausal", "strict_anticausal")
    run = t.flip(1).cumsum(dim=1).flip(1) if suffix else t.cumsum(dim=1)
    return _strict(torch, run, suffix) if mask.startswith("strict") else run


def _extreme(torch: Any, member: Any, mask: str, rightmost: bool) -> Any:
    """Per query and group (words × queries × groups): the first (or, with ``rightmost``, the last)
    position of the group among the keys the query may see; L (or −1) where there is none."""
    L = member.shape[1]
    ar = torch.arange(L, device=member.device)[None, :, None]
    pos = torch.where(member, ar, -1 if rightmost else L)
    if mask == "none":
        return pos.amax(dim=1, keepdim=True) if rightmost else pos.amin(dim=1, keepdim=True)
    suffix = mask in ("anticausal", "strict_anticausal")
    if rightmost:  # the largest allowed position: a running max from the range's far end
        run = pos.flip(1).cummax(dim=1).values.flip(1) if suffix else pos.cummax(dim=1).values
    else:
        run = pos.flip(1).cummin(dim=1).values.flip(1) if suffix else pos.cummin(dim=1).values
    if mask.startswith("strict"):
        fill = run.new_full(run[:, :1].shape, -1 if rightmost else L)
        run = (
            torch.cat([run[:, 1:], fill], dim=1)
            if suffix
            else torch.cat([fill, run[:, :-1]], dim=1)
        )
    return run


@dataclass(frozen=True)
class GroupedResult:
    """A grouped head's output (words × queries × value dims) and, for a hardmax head with
    statistics, the per-query gap (float64) and near-tie flags, as the n × n path reports them."""

    out: Any
    gap: Any = None
    near: Any = None


def grouped_head(
    torch: Any,
    h: Head,
    Q: Any,
    K: Any,
    V: Any,
    gid: Any,
    count: int,
    valid: Any,
    nonempty: Any,
    kappa: Any,
    tol: Any,
    stats: bool,
) -> GroupedResult:
    """Head ``h`` by key groups: ``gid`` (words × positions) holds each position's group (< count),
    ``valid`` the real positions; ``kappa`` (words,) is a softmax head's exponent factor, ``tol``
    (words × queries × 1) a hardmax head's tie tolerance."""
    B, L = gid.shape
    G = count
    member = (gid[..., None] == torch.arange(G, device=gid.device)) & valid[..., None]  # B × L × G
    ar = torch.arange(L, device=gid.device)[None, :, None]
    first = torch.where(member, ar, L).amin(dim=1)  # B × G
    rep = torch.gather(K, 1, first.clamp(max=max(L - 1, 0))[..., None].expand(-1, -1, K.shape[-1]))
    S = Q @ rep.transpose(1, 2)  # words × queries × groups
    if h.scoring == "neg_abs_dot":
        S = S.abs_().neg_()
    # running sums in float32 at least (a float16 running count is inexact beyond 2048), the result in V's dtype
    acc = V.dtype if V.dtype in (torch.float64, torch.float32) else torch.float32
    cnt = _running(torch, member.to(acc), h.mask)  # B × (L or 1) × G
    sums = _running(
        torch, member.to(acc)[..., None] * V.to(acc)[:, :, None, :], h.mask
    )  # B × (L or 1) × G × dv
    allowed = cnt > 0
    neg_inf = torch.tensor(float("-inf"), dtype=S.dtype, device=S.device)
    gap = near = None
    if isinstance(h.normalizer, Hardmax):
        tie = h.normalizer.tie
        Sm = torch.where(allowed, S, neg_inf)
        best = Sm.amax(dim=-1, keepdim=True)
        sel = (Sm >= best - tol) & allowed
        if tie == "average":
            w = sel.to(acc)
            summed = (w[..., None] * sums).sum(dim=2)
            total = (w * cnt).sum(dim=-1, keepdim=True)
            out = (summed / total.clamp(min=1)).to(V.dtype)
        else:
            rightmost = tie == "rightmost"
            ext = _extreme(torch, member, h.mask, rightmost).expand(B, L, G)
            if rightmost:
                pick = torch.where(sel, ext, -1).amax(dim=-1)
            else:
                pick = torch.where(sel, ext, L).amin(dim=-1)
            pick = pick.clamp(0, max(L - 1, 0))
            out = torch.gather(V, 1, pick[..., None].expand(-1, -1, V.shape[-1]))
        if stats:
            inf = torch.tensor(float("inf"), dtype=torch.float64, device=S.device)
            second = torch.where(Sm < best, Sm, float("-inf")).amax(dim=-1)
            best_q = best.squeeze(-1)
            gap = torch.where(nonempty, (best_q - second).to(torch.float64), inf)
            near = (second >= best_q - tol.squeeze(-1)) & nonempty
    else:
        E = S * kappa.to(S.dtype)[:, None, None]
        E = torch.where(allowed, E, neg_inf)
        m = E.amax(dim=-1, keepdim=True)
        e = torch.exp(E - m).to(acc)  # rows with no allowed key are NaN: zeroed by the caller
        weights = e * cnt
        out = ((e[..., None] * sums).sum(dim=2) / weights.sum(dim=-1, keepdim=True)).to(V.dtype)
    return GroupedResult(out, gap, near)
