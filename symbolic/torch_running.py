"""Running-maximum attention for the torch backend: hardmax heads whose query is the same at every
position, computed in O(n log n) per word instead of O(n²).

**Detection (exact, static).** A hardmax head without relative-position terms whose query reads
only word constants (:func:`~netproof.symbolic.torch_grouped.query_sources` is empty: Dyck's
matching heads and its final head, ``q = 1``) has the score s_ij = ⟨q, k_j⟩ of key j whatever the
query i. Under a causal mask the maximal score a query sees is then a running maximum over the
positions (a suffix maximum under an anticausal mask, one maximum per word under ``none``), and
nothing needs the n × n matrix. :func:`running_heads` lists the heads of a network that qualify.
The float run keeps this path only where the floats keep the structure the IR guarantees: the
query rows of a word's real positions bitwise equal and every score and value finite (a NaN or an
overflow upstream sends the head to the n × n path; :func:`running_head` returns None), in float64
or float32.

**Computation.** With S_j the key scores (−∞ at padding), in the frame where the mask is causal
(positions flipped for an anticausal mask): the best score of query i is ``M_i = cummax(S)_i``
(moved by one for a strict mask), its threshold ``θ_i = M_i − tol`` (the tolerance of the n × n
path, the same for every query of a word since the query is), which never decreases with i. So key
j is selected by the queries i from its first allowed one up to (not including) the first with
θ_i > S_j, found by ``searchsorted``: the number of selected keys per query comes from a
difference array in integers (exact). A query with one selected key (the usual case: distinct
scores) takes that key's value row, the running maximum's own index; a query with several
(average of near ties, or the first / last of them) is computed as one row of the n × n path,
in blocks of rows that keep ``rows × n`` under 2²⁰ entries. The statistics: the best score
strictly below ``M_i`` is ``cummax(max(T, R))_i`` with ``T_j = S_j`` where ``S_j < M_j`` and
``R_j = M_{j−1}`` where the running maximum rises at j (the record it beats), −∞ elsewhere.

**Agreement with the n × n path.** Maxima, comparisons and the thresholds are the same float
operations on the same scores, so the selections, gaps and near ties are identical, and a query
with one selected key gets the same value row. The scores are ⟨q, k_j⟩ by one matrix–vector
product instead of the rows of a matrix product: equal for a one-dimensional query (Dyck's, the
tests' drawn heads), otherwise within the rounding of a dq-term dot product, dq · eps · Σ_c |q_c k_{jc}|.
A query with several selected keys sums their value rows as the n × n path does, in a product
of another shape, within ``n · eps · Σ_j |v_j|`` of it. torch comes from the compiler (it is passed
in); this module imports the IR and :mod:`netproof.symbolic.torch_grouped` (the sources of the
queries and the result type).
"""

from __future__ import annotations

from typing import Any

from .ir import AttentionLayer, Hardmax, Head, Network
from .torch_grouped import GroupedResult, query_sources

__all__ = ["ROW_BLOCK", "running_head", "running_heads"]

ROW_BLOCK = 1 << 20
"""Queries with several selected keys are computed as rows of the n × n path, this many entries
(rows × keys × value dims) at a time."""


def running_heads(net: Network) -> frozenset[tuple[str, str]]:
    """The heads (sublayer name, head name) computed by running maxima: hardmax, no
    relative-position terms, a query that reads only word constants."""
    queries = query_sources(net)
    return frozenset(
        (sub.name, h.name)
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
        if isinstance(h.normalizer, Hardmax)
        and not h.relative
        and not queries.get((sub.name, h.name), {"pos"})
    )


def _shift(torch: Any, t: Any, fill: float) -> Any:
    """``t`` (words × positions) moved one position toward the end, ``fill`` at position 0."""
    return torch.cat([t.new_full(t[:, :1].shape, fill), t[:, :-1]], dim=1)


def running_head(
    torch: Any, h: Head, Q: Any, K: Any, V: Any, valid: Any, nonempty: Any, tol: Any, stats: bool
) -> GroupedResult | None:
    """Head ``h`` (hardmax, its query the same at every position) by running maxima; ``tol``
    (words × queries × 1) is the n × n path's tie tolerance. None where the floats do not keep
    the structure (the query row of a real position differs from the first, or a score or value is
    not finite) or the dtype is not float64 / float32: the caller then takes the n × n path."""
    assert isinstance(h.normalizer, Hardmax)
    B, L = valid.shape
    if (
        L == 0
        or V.dtype not in (torch.float64, torch.float32)
        or not bool(((Q[:, :1] == Q) | ~valid[..., None]).all())
    ):
        return None
    S = (Q[:, :1] @ K.transpose(1, 2))[:, 0]  # words × keys: the score of key j for every query
    if h.scoring == "neg_abs_dot":
        S = S.abs_().neg_()
    if not bool(torch.isfinite(torch.where(valid, S, 0.0)).all()) or not bool(
        torch.isfinite(V).all()
    ):
        return None
    Sm = torch.where(valid, S, float("-inf"))
    tol1 = tol[:, :1, 0].expand(
        B, L
    )  # the first position's (a padded query's tolerance may differ: its row is zeroed)
    if h.mask == "none":
        return _unmasked(torch, h, Sm, V, tol1, nonempty, stats)
    suffix = h.mask in ("anticausal", "strict_anticausal")
    strict = h.mask.startswith("strict")
    F = Sm.flip(1) if suffix else Sm  # the causal frame
    Mx, Mi = torch.cummax(F, dim=1)
    best = _shift(torch, Mx, float("-inf")) if strict else Mx
    at = _shift(torch, Mi, 0) if strict else Mi  # the position of the maximum (in the frame)
    thr = best - (
        tol1.flip(1) if suffix else tol1
    )  # nondecreasing: tol is the same for every query of a word
    ar = torch.arange(L, device=Sm.device)
    start = (ar + int(strict)).expand(B, L)
    end = torch.searchsorted(thr.contiguous(), F.contiguous(), right=True)
    end = torch.where(torch.isfinite(F), torch.maximum(end, start), start)
    diff = torch.zeros(B, L + 1, dtype=torch.long, device=Sm.device)
    diff.scatter_add_(1, start, torch.ones_like(start))
    diff.scatter_add_(1, end, -torch.ones_like(start))
    count = diff.cumsum(dim=1)[:, :L]
    if suffix:
        best, thr, count = best.flip(1), thr.flip(1), count.flip(1)
        at = (L - 1 - at).flip(1)
    out = torch.gather(V, 1, at.clamp(0, L - 1)[..., None].expand(-1, -1, V.shape[-1]))
    several = (count > 1) & nonempty
    if bool(several.any()):
        _rows(torch, h, Sm, V, thr, several, out)
    gap = near = None
    if stats:
        T = torch.where(Mx > F, F, float("-inf"))
        prev = _shift(torch, Mx, float("-inf"))
        R = torch.where(prev < F, prev, float("-inf"))
        second = torch.cummax(torch.maximum(T, R), dim=1).values
        if strict:
            second = _shift(torch, second, float("-inf"))
        if suffix:
            second = second.flip(1)
        inf = torch.tensor(float("inf"), dtype=torch.float64, device=Sm.device)
        gap = torch.where(nonempty, (best - second).to(torch.float64), inf)
        near = (second >= best - tol1) & nonempty
    return GroupedResult(out, gap, near)


def _rows(torch: Any, h: Head, Sm: Any, V: Any, thr: Any, rows: Any, out: Any) -> None:
    """The queries marked in ``rows`` (words × queries) as rows of the n × n path, written into
    ``out``: the keys their mask allows with a score at least their threshold, averaged (sum,
    then divide) or the first / last of them."""
    assert isinstance(h.normalizer, Hardmax)
    L = Sm.shape[1]
    w_all, i_all = torch.nonzero(rows, as_tuple=True)
    ar = torch.arange(L, device=Sm.device)[None, :]
    dv = V.shape[-1]
    size = max(1, ROW_BLOCK // (L * (dv + 1)))
    tie = h.normalizer.tie
    ones = torch.ones(*V.shape[:-1], 1, dtype=V.dtype, device=V.device)
    Vc = torch.cat([V, ones], dim=-1)
    for s in range(0, len(w_all), size):
        w, i = w_all[s : s + size], i_all[s : s + size]
        i_col = i[:, None]
        allowed = {
            "causal": ar <= i_col,
            "strict_causal": ar < i_col,
            "anticausal": ar >= i_col,
            "strict_anticausal": ar > i_col,
        }[h.mask]
        sel = allowed & (Sm[w] >= thr[w, i][:, None])
        if tie == "average":
            summed = (sel.to(V.dtype)[:, None, :] @ Vc[w])[:, 0]
            out[w, i] = summed[:, :-1] / summed[:, -1:].clamp(min=1)
        else:
            pick = (
                torch.where(sel, ar, L).amin(dim=-1)
                if tie == "leftmost"
                else torch.where(sel, ar, -1).amax(dim=-1)
            )
            out[w, i] = V[w, pick.clamp(0, L - 1)]


def _unmasked(
    torch: Any, h: Head, Sm: Any, V: Any, tol1: Any, nonempty: Any, stats: bool
) -> GroupedResult:
    """Mask ``none``: every query of a word sees every key, so one row per word, broadcast."""
    assert isinstance(h.normalizer, Hardmax)
    B, L = Sm.shape
    best = Sm.amax(dim=1, keepdim=True)  # words × 1
    thr = best - tol1[:, :1]
    sel = Sm >= thr
    tie = h.normalizer.tie
    if tie == "average":
        ones = torch.ones(*V.shape[:-1], 1, dtype=V.dtype, device=V.device)
        summed = sel.to(V.dtype)[:, None, :] @ torch.cat([V, ones], dim=-1)  # words × 1 × (dv + 1)
        row = summed[..., :-1] / summed[..., -1:].clamp(min=1)
    else:
        ar = torch.arange(L, device=Sm.device)
        pick = (
            torch.where(sel, ar, L).amin(dim=-1)
            if tie == "leftmost"
            else torch.where(sel, ar, -1).amax(dim=-1)
        )
        row = torch.gather(V, 1, pick.clamp(0, L - 1)[:, None, None].expand(-1, -1, V.shape[-1]))
    out = row.expand(B, L, V.shape[-1])
    gap = near = None
    if stats:
        second = torch.where(Sm < best, Sm, float("-inf")).amax(dim=1, keepdim=True).expand(B, L)
        best_q = best.expand(B, L)
        inf = torch.tensor(float("inf"), dtype=torch.float64, device=Sm.device)
        gap = torch.where(nonempty, (best_q - second).to(torch.float64), inf)
        near = (second >= best_q - tol1) & nonempty
    return GroupedResult(out, gap, near)
