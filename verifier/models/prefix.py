"""Prefix sharing for causal models: every word up to a length evaluated along the word trie, each
prefix's states computed once for all its completions (:class:`CausalPrefixEnclosure`).

In a network whose heads all have the causal mask (j ≤ i), whose readout reads the last token,
with no suffix tokens, no score scale that grows with n and positional rows that do not depend on
n (a learned or sinusoidal table), the states of positions 0..i depend on tokens 0..i only. So the
words of every length to ``max_n`` are the nodes of one trie: a node's row is computed from its
token, its position and, at each attention layer, the keys and values of its ancestors (a
key/value cache along the trie, stored per depth and gathered by shortlex index), and its
logit is the logit of the word it spells. The arithmetic is :class:`.enclosure.Enclosure`'s
(midpoint–radius, outward rounding), one query row at a time: each value is enclosed as
rigorously as by the per-word batches (the float midpoints may differ in the last bits, since
sums are taken over other shapes).

Per word of length m, the per-word batches compute m + 1 rows and (m + 1)² attention scores
per head; the trie computes one row and m + 1 scores per node, and the nodes of length m are the
prefixes of all longer words. :meth:`CausalPrefixEnclosure.logits` answers
:func:`.check.check_model`'s batches from the stored logits, so the check, its fallbacks and its
report are unchanged.

May import :mod:`.enclosure` (torch inside functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from netproof.symbolic.ir import FFN, AttentionLayer, Classifier, TokenEmbedding

from .enclosure import MR, Enclosure, EnclosureError

__all__ = ["CausalPrefixEnclosure", "prefix_sharing_refusal"]


def prefix_sharing_refusal(enc: Enclosure, max_n: int) -> str | None:
    """Why ``enc``'s network cannot share prefixes up to ``max_n`` symbols (None: it can)."""
    net = enc.net
    emb = net.embedding
    if not isinstance(emb, TokenEmbedding) or emb.suffix:
        return f"network {net.name!r} has suffix tokens; prefix sharing needs the word last"
    for sub in net.layers:
        if isinstance(sub.block, AttentionLayer):
            for h in sub.block.heads:
                if h.mask != "causal":
                    return (
                        f"attention {sub.block.name!r} head {h.name!r} has mask {h.mask!r}; "
                        "prefix sharing needs every head causal (j <= i)"
                    )
                if h.scale.times_n or h.scale.log_n:
                    return (
                        f"attention {sub.block.name!r} head {h.name!r} scales its scores with n; "
                        "a prefix's states would depend on the word's length"
                    )
    ro = net.readout
    if not isinstance(ro, Classifier) or ro.position != -1:
        return f"network {net.name!r} does not read the last token; prefix sharing needs readout 'last'"
    n = len(emb.prefix) + max_n
    full = enc.positions(n)
    for t in range(1, n):
        part = enc.positions(t)
        if not (bool((part.m == full.m[:t]).all()) and bool((part.r == full.r[:t]).all())):
            return (
                f"network {net.name!r} has positional rows that depend on the length "
                f"(the rows of {t} tokens differ from the first {t} of {n})"
            )
    return None


class CausalPrefixEnclosure:
    """The logit enclosures of every word of length ``0..max_n`` over ``alphabet``, computed
    along the trie (see the module docstring); ``logits(tokens, n_tokens)`` looks them up, so
    that it stands in for :meth:`.enclosure.Enclosure.logits` in :func:`.check.check_model`."""

    def __init__(
        self, enc: Enclosure, alphabet: Sequence[str], max_n: int, *, chunk: int = 4096
    ) -> None:
        why = prefix_sharing_refusal(enc, max_n)
        if why is not None:
            raise EnclosureError(why)
        torch = enc.torch
        self.torch = torch
        self.enc = enc
        self.token_index = enc.token_index
        self.alphabet = tuple(alphabet)
        self.k = len(self.alphabet)
        emb = enc.net.embedding
        assert isinstance(emb, TokenEmbedding)
        self.pre = [enc.token_index[t] for t in emb.prefix]
        self.P = len(self.pre)
        ids = torch.tensor([enc.token_index[a] for a in self.alphabet], dtype=torch.long)
        digit = torch.full((len(enc.token_index),), -1, dtype=torch.long)
        digit[ids] = torch.arange(self.k)
        self.digit = digit
        n = self.P + max_n
        pos = enc.positions(n)
        # cache[level][(layer, head)] = (keys, values) of every node of that level (its last token)
        self.cache: dict[int, dict[tuple[int, int], tuple[MR, MR]]] = {}
        self.out: dict[int, MR] = {}
        with torch.no_grad():
            for level in range(1, n + 1):
                count = self.k ** max(0, level - self.P)
                store: dict[tuple[int, int], tuple[MR, MR]] = {}
                outs_m, outs_r = [], []
                for start in range(0, count, chunk):
                    idx = torch.arange(start, min(count, start + chunk), dtype=torch.long)
                    tok = (
                        ids[idx % self.k]
                        if level > self.P
                        else torch.full_like(idx, self.pre[level - 1])
                    )
                    x = enc.add(
                        MR(enc.table.m[tok].unsqueeze(1), enc.table.r[tok].unsqueeze(1)),
                        MR(pos.m[level - 1 : level], pos.r[level - 1 : level]),
                    )
                    for li, sub in enumerate(enc.net.layers):
                        block = sub.block
                        o: MR | None
                        if isinstance(block, AttentionLayer):
                            names, o = self._attend(li, block, x, level, idx, count, store)
                        else:
                            assert isinstance(block, FFN)
                            names, o = enc.ffn(block, x) if block.steps else ([], None)
                        x = enc.combine(sub, x, names, o)
                    if level >= self.P:
                        ro = enc.net.readout
                        assert isinstance(ro, Classifier)
                        y = enc.affine(ro.logit, MR(x.m[:, 0, :], x.r[:, 0, :]), enc.index)
                        outs_m.append(y.m[:, 0])
                        outs_r.append(y.r[:, 0])
                self.cache[level] = store
                if outs_m:
                    self.out[level - self.P] = MR(torch.cat(outs_m), torch.cat(outs_r))

    def _ancestors(self, level: int, idx: Any) -> list[tuple[int, Any]]:
        """(level, index) of the nodes on the path to each node ``idx`` of ``level``, from the
        first token on (the node itself excluded)."""
        depth = max(0, level - self.P)
        return [
            (a, idx // self.k ** (depth - max(0, a - self.P))) if a > self.P else (a, idx * 0)
            for a in range(1, level)
        ]

    def _attend(
        self,
        li: int,
        block: AttentionLayer,
        x: MR,
        level: int,
        idx: Any,
        count: int,
        store: dict[tuple[int, int], tuple[MR, MR]],
    ) -> tuple[list[str], MR]:
        """One query row per node (``x``: [B, 1, d]) against the cached keys and values of its
        ancestors and its own: :meth:`.enclosure.Enclosure.attention` for the last row."""
        enc, torch = self.enc, self.torch
        path = self._ancestors(level, idx)
        outs_m, outs_r, names = [], [], []
        for hi, h in enumerate(block.heads):
            q = enc.affine(h.query, x, enc.index)
            k_new = enc.affine(h.key, x, enc.index)
            v_new = enc.affine(h.value, x, enc.index)
            key = (li, hi)
            if key not in store:
                dk, dv = k_new.m.shape[-1], v_new.m.shape[-1]
                zk = torch.zeros(count, dk, dtype=torch.float64)
                zv = torch.zeros(count, dv, dtype=torch.float64)
                store[key] = (MR(zk, zk.clone()), MR(zv, zv.clone()))
            ks, vs = store[key]
            ks.m[idx], ks.r[idx] = k_new.m[:, 0], k_new.r[:, 0]
            vs.m[idx], vs.r[idx] = v_new.m[:, 0], v_new.r[:, 0]
            kk = [(self.cache[a][key][0], j) for a, j in path]
            vv = [(self.cache[a][key][1], j) for a, j in path]
            K = MR(
                torch.stack([c.m[j] for c, j in kk] + [k_new.m[:, 0]], 1),
                torch.stack([c.r[j] for c, j in kk] + [k_new.r[:, 0]], 1),
            )
            V = MR(
                torch.stack([c.m[j] for c, j in vv] + [v_new.m[:, 0]], 1),
                torch.stack([c.r[j] for c, j in vv] + [v_new.r[:, 0]], 1),
            )
            km, kr = enc._kappa(h, level)
            q = enc.mul(
                q, MR(torch.tensor(km, dtype=torch.float64), torch.tensor(kr, dtype=torch.float64))
            )
            logits = enc.matmul(q, MR(K.m.transpose(-1, -2), K.r.transpose(-1, -2)))  # [B, 1, t]
            lm = logits.m
            shift = lm.max(-1, keepdim=True).values
            shifted = MR(lm - shift, _grow(enc, logits.r, lm - shift))
            e = enc.exp(shifted)
            o = enc.div(
                enc.matmul(e, V), enc.total(e, -1), f"attention {block.name!r} head {h.name!r}"
            )
            outs_m.append(o.m)
            outs_r.append(o.r)
            names += list(h.value.outputs)
        cat = MR(torch.cat(outs_m, -1), torch.cat(outs_r, -1))
        if block.output is not None:
            return list(block.output.outputs), enc.affine(
                block.output, cat, {nm: p for p, nm in enumerate(names)}
            )
        return names, cat

    def logits(self, tokens: Any, n_tokens: int) -> MR:
        """The stored enclosures of the words in ``tokens`` (rows of token indices, the prefix
        tokens first, as :meth:`.enclosure.Enclosure.logits` takes them)."""
        m = n_tokens - self.P
        if m not in self.out:
            return self.enc.logits(tokens, n_tokens)
        digits = self.digit[tokens[:, self.P :]]
        idx = digits.new_zeros(digits.shape[0])
        for p in range(m):
            idx = idx * self.k + digits[:, p]
        got = self.out[m]
        return MR(got.m[idx], got.r[idx])


def _grow(enc: Enclosure, r: Any, shifted: Any) -> Any:
    """The radius of the shifted scores, as :meth:`.enclosure.Enclosure.attention` bounds it."""
    from .enclosure import U, grow

    return grow(r + U * shifted.abs().nan_to_num(0.0, 0.0, 0.0), 2)
