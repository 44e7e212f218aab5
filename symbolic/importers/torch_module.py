"""Any ``nn.Module`` made of standard parts, imported by its structure: the module is traced with
``torch.fx`` and each graph node is mapped onto the canonical layout (:mod:`.canonical`).

The input is a symbolic tensor of token ids (batch 2, ``positions`` tokens); every value the
graph computes from it is a *symbolic tensor*: for each entry, the name of the canonical value it
holds and the token position it belongs to. Shape operations (``view``, ``reshape``,
``transpose``, ``permute``, indexing, ``unsqueeze`` …) are applied to those names exactly as torch
applies them to numbers, so a hand-written head split is read from the code, not guessed. Values
that do not depend on the tokens (masks, ``torch.arange``, a sinusoidal table computed in
``forward``, shapes) are computed by torch itself. Names do not matter; structure does.

Mapped:

- token lookups (``nn.Embedding``, ``F.embedding``) and everything fixed by the token and the
  position: position tables (a lookup of ``arange``, a slice of a table, a table computed in
  ``forward``), an embedding scale (``· √d``), constant biases: the IR's token embedding;
- ``nn.Linear`` / ``F.linear``, ``nn.LayerNorm`` / ``F.layer_norm``, ReLU, the exact GELU, dropout
  (the identity in eval mode), residual sums, scalar scales;
- ``nn.TransformerEncoder`` / ``nn.TransformerEncoderLayer`` (pre- or post-norm, ReLU or GELU, a
  causal mask, a padding mask that the words never trigger), ``nn.MultiheadAttention``;
- hand-written attention: q/k/v maps, a head split by ``view``/``transpose``, ``q @ kᵀ`` scaled
  by a constant, a mask (``masked_fill`` with −∞ or an additive 0/−∞ mask, causal or anticausal),
  ``softmax`` over the keys, the weighted sum of values, the output map;
  ``F.scaled_dot_product_attention``;
- the readout: the entry at a fixed position (``x[:, 0]``, a ``<cls>`` token wherever it is,
  ``x[:, -1]``), the mean over positions; one logit (``[B]`` or ``[B, 1]``) or two classes
  (``[B, 2]``: accept iff class 1 > class 0).

Anything else is refused with one line naming the graph node, its op and the supported set.
torch is imported inside functions only (the ``torch`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .canonical import (
    Act,
    Add,
    Attend,
    EmbRow,
    Graph,
    HeadSpec,
    ImporterError,
    Lin,
    Norm,
)

__all__ = ["SUPPORTED", "Importer", "Scores", "Sym", "Tok", "torch_lib"]

SUPPORTED = (
    "supported: nn.Embedding/F.embedding, position tables, nn.Linear/F.linear, nn.LayerNorm/"
    "F.layer_norm, ReLU, exact GELU, dropout, residual +, scalar */÷, nn.TransformerEncoder(Layer), "
    "nn.MultiheadAttention, q@kᵀ/softmax/@v attention with a causal or no mask, "
    "F.scaled_dot_product_attention, view/reshape/transpose/permute/indexing, mean over positions"
)


def torch_lib() -> Any:
    from netproof.symbolic.errors import MissingExtraError

    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "importing a torch model needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def exact(t: Any) -> list[Fraction]:
    """The entries of a float tensor (flattened) as exact Fractions."""
    torch = torch_lib()
    flat = t.detach().to("cpu", torch.float64).reshape(-1)
    if not bool(torch.isfinite(flat).all()):
        raise ImporterError("a weight holds inf or nan; a model's weights must be finite")
    return [Fraction(v) for v in flat.tolist()]


def matrix(t: Any) -> tuple[tuple[Fraction, ...], ...]:
    rows, cols = t.shape
    flat = exact(t)
    return tuple(tuple(flat[r * cols : (r + 1) * cols]) for r in range(rows))


# --------------------------------------------------------------------------- symbolic values


@dataclass(slots=True)
class Sym:
    """A symbolic tensor: ``ids[idx]`` indexes the name of the value at that entry, ``pos[idx]``
    its token position (both int64 tensors of the tensor's shape)."""

    ids: Any
    pos: Any

    @property
    def shape(self) -> Any:
        return self.ids.shape


@dataclass(slots=True)
class Tok:
    """The input token ids (symbolic): ``pos`` holds each entry's position."""

    pos: Any

    @property
    def shape(self) -> Any:
        return self.pos.shape


@dataclass(slots=True)
class Scores:
    """Attention scores (``weights``: after the softmax): per leading index, the query and key
    groups and positions; ``visible`` the mask; the scale ``coef``/√``sqrt_d``."""

    lead: tuple[int, ...]
    groups: list[tuple[tuple[str, ...], tuple[str, ...], list[int], list[int]]]
    visible: Any
    coef: Fraction
    sqrt_d: int | None
    weights: bool = False


class Importer:
    """One import: the graph being filled and the name table of the symbolic tensors."""

    def __init__(self, g: Graph, dtype: Any) -> None:
        self.g = g
        self.dtype = dtype
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.where = ""
        self.stem = "v"
        self.positions = g.positions

    # ------------------------------------------------------------------ names

    def ids_of(self, names: Sequence[str]) -> list[int]:
        out = []
        for n in names:
            if n not in self.index:
                self.index[n] = len(self.names)
                self.names.append(n)
            out.append(self.index[n])
        return out

    def refuse(self, what: str) -> ImporterError:
        return ImporterError(f"{self.where}: {what}; {SUPPORTED}")

    def group(self, x: Sym) -> tuple[tuple[str, ...], Any]:
        """The names along the last axis (the same in every row) and each row's position."""
        d = x.shape[-1]
        rows = x.ids.reshape(-1, d)
        pos = x.pos.reshape(-1, d)
        if rows.shape[0] == 0 or not bool((rows == rows[:1]).all()):
            raise self.refuse("a position-wise map reads different values in different rows")
        if not bool((pos == pos[:, :1]).all()):
            raise self.refuse("a position-wise map reads entries of different positions")
        return tuple(self.names[i] for i in rows[0].tolist()), pos[:, 0]

    def with_names(self, x: Sym, names: Sequence[str]) -> Sym:
        torch = torch_lib()
        lead = x.shape[:-1]
        ids = torch.tensor(self.ids_of(names), dtype=torch.long)
        return Sym(
            ids.expand(*lead, len(names)).clone(),
            x.pos[..., :1].expand(*lead, len(names)).clone(),
        )

    def emb_only(self, names: Sequence[str]) -> bool:
        return all(n in self.g.emb for n in names)

    # ------------------------------------------------------------------ position-wise maps

    def linear(self, x: Sym, w: Any, b: Any | None, stem: str) -> Sym:
        names, _ = self.group(x)
        if w.dim() != 2 or w.shape[1] != len(names):
            raise self.refuse(f"a linear map of shape {tuple(w.shape)} reads {len(names)} values")
        out_n = w.shape[0]
        bias = tuple(exact(b)) if b is not None else (Fraction(0),) * out_n
        outs = self.g.fresh(stem, out_n)
        self.g.add(Lin(names, outs, matrix(w), bias))
        return self.with_names(x, outs)

    def act(self, x: Sym, kind: str, stem: str) -> Sym:
        return self.elementwise(x, stem, lambda ins, outs: Act(kind, ins, outs))

    def elementwise(self, x: Sym, stem: str, make: Callable[..., Any]) -> Sym:
        torch = torch_lib()
        uniq = sorted(set(x.ids.reshape(-1).tolist()))
        ins = tuple(self.names[i] for i in uniq)
        outs = self.g.fresh(stem, len(ins))
        self.g.add(make(ins, outs))
        table = torch.zeros(max(uniq) + 1, dtype=torch.long)
        table[torch.tensor(uniq)] = torch.tensor(self.ids_of(outs))
        return Sym(table[x.ids], x.pos.clone())

    def layer_norm(self, x: Sym, eps: float, w: Any | None, b: Any | None, stem: str) -> Sym:
        names, _ = self.group(x)
        d = len(names)
        gamma = tuple(exact(w)) if w is not None else (Fraction(1),) * d
        beta = tuple(exact(b)) if b is not None else (Fraction(0),) * d
        outs = self.g.fresh(stem, d)
        self.g.add(Norm(Fraction(eps), names, outs, gamma, beta))
        return self.with_names(x, outs)

    # ------------------------------------------------------------------ sums and scales

    def binary(self, op: str, a: Any, b: Any, stem: str) -> Any:
        torch = torch_lib()
        if isinstance(a, Scores) or isinstance(b, Scores):
            return self.scores_binary(op, a, b)
        if op in ("add", "sub") and isinstance(a, Sym) and isinstance(b, Sym):
            return self.sym_sum(a, b, -1 if op == "sub" else 1, stem)
        if op == "add" and not isinstance(a, Sym):
            a, b = b, a
        if op == "mul" and not isinstance(a, Sym):
            a, b = b, a
        if not isinstance(a, Sym) or isinstance(b, (Sym, Tok)):
            raise self.refuse(f"{op} of two token-dependent values (only + and − are linear)")
        if op == "rsub":
            c = torch.as_tensor(b, dtype=torch.float64)
            return self.affine_const(a, -1, c, stem)
        c = torch.as_tensor(b, dtype=torch.float64)
        if op == "add":
            return self.affine_const(a, 1, c, stem)
        if op == "sub":
            return self.affine_const(a, 1, -c, stem)
        if op == "mul":
            return self.scale(a, c, stem)
        if op == "div":
            if c.numel() != 1:
                raise self.refuse("division by a tensor")
            return self.scale(a, torch.tensor(1.0, dtype=torch.float64), stem, divisor=c)
        raise self.refuse(f"operation {op}")

    def sym_sum(self, a: Sym, b: Sym, sign: int, stem: str) -> Sym:
        torch = torch_lib()
        ai, bi = torch.broadcast_tensors(a.ids, b.ids)
        ap, bp = torch.broadcast_tensors(a.pos, b.pos)
        if not bool((ap == bp).all()):
            raise self.refuse("a sum of values at different positions")
        pairs = sorted(set(zip(ai.reshape(-1).tolist(), bi.reshape(-1).tolist(), strict=True)))
        A = tuple(self.names[p] for p, _ in pairs)
        B = tuple(self.names[q] for _, q in pairs)
        if self.emb_only(A + B):
            rows = [
                self.g.emb[x].plus(self.g.emb[y].scaled(Fraction(sign)))
                for x, y in zip(A, B, strict=True)
            ]
            outs = self.g.emb_value(stem, rows)
        elif sign == 1:
            outs = self.g.fresh(stem, len(pairs))
            self.g.add(Add(A, B, outs))
        else:
            ins = tuple(dict.fromkeys(A + B))
            at = {n: k for k, n in enumerate(ins)}
            w = [[Fraction(0)] * len(ins) for _ in pairs]
            for r, (x, y) in enumerate(zip(A, B, strict=True)):
                w[r][at[x]] += 1
                w[r][at[y]] -= 1
            outs = self.g.fresh(stem, len(pairs))
            self.g.add(Lin(ins, outs, tuple(tuple(r) for r in w), (Fraction(0),) * len(pairs)))
        key = {(p, q): k for k, (p, q) in enumerate(pairs)}
        out_ids = torch.tensor(self.ids_of(outs), dtype=torch.long)
        flat = [
            key[(p, q)]
            for p, q in zip(ai.reshape(-1).tolist(), bi.reshape(-1).tolist(), strict=True)
        ]
        return Sym(out_ids[torch.tensor(flat, dtype=torch.long)].reshape(ai.shape), ap.clone())

    def per_name(self, x: Sym, c: Any) -> tuple[list[str], dict[str, dict[int, Fraction]]]:
        """The constant ``c`` (broadcast to ``x``) for each name and position."""
        torch = torch_lib()
        ids, pos, cc = torch.broadcast_tensors(x.ids, x.pos, c)
        out: dict[str, dict[int, Fraction]] = {}
        for i, p, v in zip(
            ids.reshape(-1).tolist(), pos.reshape(-1).tolist(), cc.reshape(-1).tolist(), strict=True
        ):
            n = self.names[i]
            q = Fraction(v)
            seen = out.setdefault(n, {})
            if seen.get(p, q) != q:
                raise self.refuse(f"a constant that differs between batch rows for value {n}")
            seen[p] = q
        return list(out), out

    def affine_const(self, x: Sym, sign: int, c: Any, stem: str) -> Sym:
        """``sign·x + c``: a bias (the same at every position) or a position table."""
        names, vals = self.per_name(x, c)
        positional = any(len(set(v.values())) > 1 for v in vals.values())
        if self.emb_only(names):
            rows = []
            for n in names:
                r = self.g.emb[n].scaled(Fraction(sign))
                if positional:
                    r = r.plus(EmbRow(positions=dict(vals[n])))
                else:
                    r = r.plus(EmbRow(const=next(iter(vals[n].values()))))
                rows.append(r)
            outs = self.g.emb_value(stem, rows)
        elif positional:
            table = self.g.emb_value(
                f"{stem}.table", [EmbRow(positions=dict(vals[n])) for n in names]
            )
            if sign == 1:
                outs = self.g.fresh(stem, len(names))
                self.g.add(Add(tuple(names), table, outs))
            else:
                k = len(names)
                w = tuple(
                    tuple(
                        Fraction(sign if j == r else (1 if j == k + r else 0)) for j in range(2 * k)
                    )
                    for r in range(k)
                )
                outs = self.g.fresh(stem, k)
                self.g.add(Lin(tuple(names) + table, outs, w, (Fraction(0),) * k))
        else:
            k = len(names)
            w = tuple(tuple(Fraction(sign if j == r else 0) for j in range(k)) for r in range(k))
            bias = tuple(next(iter(vals[n].values())) for n in names)
            outs = self.g.fresh(stem, k)
            self.g.add(Lin(tuple(names), outs, w, bias))
        return self.rename(x, names, outs)

    def rename(self, x: Sym, names: Sequence[str], outs: Sequence[str]) -> Sym:
        torch = torch_lib()
        src = self.ids_of(names)
        table = torch.arange(len(self.names) + len(outs) + 1, dtype=torch.long)
        dst = self.ids_of(outs)
        table = torch.arange(len(self.names), dtype=torch.long)
        table[torch.tensor(src, dtype=torch.long)] = torch.tensor(dst, dtype=torch.long)
        return Sym(table[x.ids], x.pos.clone())

    def scale(self, x: Sym, c: Any, stem: str, divisor: Any = None) -> Sym:
        """``x · c`` (``c`` per feature or a scalar) or ``x / divisor`` (a scalar)."""
        torch = torch_lib()
        if divisor is not None:
            names, _ = self.per_name(x, torch.zeros(()))
            q = 1 / Fraction(float(divisor.reshape(-1)[0]))
            vals = dict.fromkeys(names, q)
        else:
            names, table = self.per_name(x, c)
            vals = {}
            for n in names:
                if len(set(table[n].values())) > 1:
                    raise self.refuse("a product with a position-dependent constant")
                vals[n] = next(iter(table[n].values()))
        if self.emb_only(names):
            outs = self.g.emb_value(stem, [self.g.emb[n].scaled(vals[n]) for n in names])
        else:
            k = len(names)
            w = tuple(
                tuple(vals[names[r]] if j == r else Fraction(0) for j in range(k)) for r in range(k)
            )
            outs = self.g.fresh(stem, k)
            self.g.add(Lin(tuple(names), outs, w, (Fraction(0),) * k))
        return self.rename(x, names, outs)

    # ------------------------------------------------------------------ embeddings

    def embed(self, tok: Tok, w: Any, stem: str, token_ids: Sequence[int]) -> Sym:
        torch = torch_lib()
        vocab_size, d = w.shape
        bad = [t for t in token_ids if t >= vocab_size]
        if bad:
            raise self.refuse(
                f"token id {bad[0]} is outside the embedding table of {vocab_size} rows "
                "(check the vocabulary order given)"
            )
        rows = [EmbRow() for _ in range(d)]
        for t in token_ids:
            vals = exact(w[t])
            for j in range(d):
                rows[j].tokens[t] = vals[j]
        outs = self.g.emb_value(stem, rows)
        ids = torch.tensor(self.ids_of(outs), dtype=torch.long)
        shape = tuple(tok.shape)
        return Sym(ids.expand(*shape, d).clone(), tok.pos.unsqueeze(-1).expand(*shape, d).clone())

    # ------------------------------------------------------------------ attention

    def matmul(self, a: Any, b: Any) -> Any:
        torch = torch_lib()
        if isinstance(a, Scores) and isinstance(b, Sym):
            return self.weighted_sum(a, b)
        if isinstance(a, Sym) and isinstance(b, Sym):
            return self.scores(a, b)
        if isinstance(a, Sym) and not isinstance(b, (Sym, Tok, Scores)):
            w = torch.as_tensor(b)
            if w.dim() == 2:
                return self.linear(a, w.transpose(0, 1), None, "matmul")
        raise self.refuse("a matrix product outside q @ kᵀ, weights @ v and x @ W")

    def scores(self, q: Sym, kt: Sym) -> Scores:
        if q.ids.dim() < 2 or kt.ids.dim() < 2 or q.shape[:-2] != kt.shape[:-2]:
            raise self.refuse("q @ kᵀ needs matching leading axes")
        lead = tuple(q.shape[:-2])
        qi, qp = q.ids.reshape(-1, *q.shape[-2:]), q.pos.reshape(-1, *q.shape[-2:])
        ki, kp = kt.ids.reshape(-1, *kt.shape[-2:]), kt.pos.reshape(-1, *kt.shape[-2:])
        groups = []
        for b in range(qi.shape[0]):
            gq, ppq = self.group(Sym(qi[b], qp[b]))
            gk, ppk = self.group(Sym(ki[b].transpose(0, 1), kp[b].transpose(0, 1)))
            if len(gq) != len(gk):
                raise self.refuse("q and k of different widths")
            groups.append((gq, gk, ppq.tolist(), ppk.tolist()))
        torch = torch_lib()
        visible = torch.ones(*lead, q.shape[-2], kt.shape[-1], dtype=torch.bool)
        return Scores(lead, groups, visible, Fraction(1), None)

    def scores_binary(self, op: str, a: Any, b: Any) -> Scores:
        torch = torch_lib()
        s, c = (a, b) if isinstance(a, Scores) else (b, a)
        if s.weights or isinstance(c, (Sym, Tok, Scores)):
            raise self.refuse(f"{op} on attention weights")
        t = torch.as_tensor(c, dtype=torch.float64)
        if op in ("mul", "div"):
            if t.numel() != 1 or (op == "div" and s is not a):
                raise self.refuse("attention scores scaled by a non-scalar")
            v = Fraction(float(t.reshape(-1)[0]))
            return Scores(
                s.lead, s.groups, s.visible, s.coef * (v if op == "mul" else 1 / v), s.sqrt_d
            )
        if op == "add":
            return self.mask_scores(s, t, additive=True)
        raise self.refuse(f"{op} on attention scores")

    def mask_scores(self, s: Scores, t: Any, additive: bool) -> Scores:
        """An additive mask (0 or −∞) or a boolean mask (True: hidden) applied to scores."""
        torch = torch_lib()
        t = torch.broadcast_to(t, s.visible.shape)
        if additive:
            if t.dtype == torch.bool:
                hidden = t  # F.sdpa style handled by the caller
            else:
                ok = (t == 0) | (t == -math.inf)
                if not bool(ok.all()):
                    raise self.refuse(
                        "an additive attention mask with values other than 0 and −∞ "
                        "(a relative bias or a finite −1e9 is not a mask)"
                    )
                hidden = t == -math.inf
        else:
            hidden = t.to(torch.bool)
        return Scores(s.lead, s.groups, s.visible & ~hidden, s.coef, s.sqrt_d, s.weights)

    def mask_kind(self, visible: Any, ip: list[int], jp: list[int]) -> str:
        """The mask of one head from its visibility pattern over query and key positions."""
        torch = torch_lib()
        i = torch.tensor(ip).unsqueeze(1)
        j = torch.tensor(jp).unsqueeze(0)
        for kind, pattern in (
            ("none", torch.ones_like(visible)),
            ("causal", j <= i),
            ("anticausal", j >= i),
        ):
            if bool((visible == pattern).all()):
                return kind
        raise self.refuse("an attention mask that is neither none, causal (j ≤ i) nor anticausal")

    def weighted_sum(self, s: Scores, v: Sym) -> Sym:
        torch = torch_lib()
        if not s.weights:
            raise self.refuse("scores @ v without a softmax over the keys")
        lead = tuple(v.shape[:-2])
        if lead != s.lead:
            raise self.refuse("weights @ v with different leading axes")
        vi, vp = v.ids.reshape(-1, *v.shape[-2:]), v.pos.reshape(-1, *v.shape[-2:])
        vis = s.visible.reshape(-1, *s.visible.shape[-2:])
        specs: dict[tuple[Any, ...], tuple[str, ...]] = {}
        out_ids, out_pos = [], []
        for b in range(vi.shape[0]):
            gq, gk, ip, jp = s.groups[b]
            gv, ppv = self.group(Sym(vi[b], vp[b]))
            if ppv.tolist() != jp:
                raise self.refuse("values at other positions than the keys")
            mask = self.mask_kind(vis[b], ip, jp)
            key = (gq, gk, gv, s.coef, s.sqrt_d, mask)
            if key not in specs:
                specs[key] = self.g.fresh("head", len(gv))
            outs = specs[key]
            ids = torch.tensor(self.ids_of(outs), dtype=torch.long)
            out_ids.append(ids.expand(len(ip), len(gv)))
            out_pos.append(torch.tensor(ip).unsqueeze(1).expand(len(ip), len(gv)))
        heads = tuple(
            HeadSpec(gq, gk, gv, outs, coef, sqrt_d, mask)
            for (gq, gk, gv, coef, sqrt_d, mask), outs in specs.items()
        )
        self.g.add(Attend(heads))
        shape = (*lead, len(s.groups[0][2]), v.shape[-1])
        return Sym(torch.stack(out_ids).reshape(shape), torch.stack(out_pos).reshape(shape))

    def sdpa(
        self, q: Sym, k: Sym, v: Sym, attn_mask: Any, is_causal: bool, scale: float | None
    ) -> Sym:
        torch = torch_lib()
        s = self.scores(q, Sym(k.ids.transpose(-2, -1), k.pos.transpose(-2, -1)))
        if scale is None:
            s = Scores(s.lead, s.groups, s.visible, Fraction(1), q.shape[-1])
        else:
            s = Scores(s.lead, s.groups, s.visible, Fraction(float(scale)), None)
        if attn_mask is not None:
            m = torch.as_tensor(attn_mask)
            if m.dtype == torch.bool:
                s = self.mask_scores(s, ~m, additive=False)
            else:
                s = self.mask_scores(s, m.to(torch.float64), additive=True)
        if is_causal:
            n, m_ = s.visible.shape[-2:]
            s.visible = s.visible & torch.ones(n, m_, dtype=torch.bool).tril()
        s.weights = True
        return self.weighted_sum(s, v)


# --------------------------------------------------------------------------- standard modules


def head_slices(d: int, h: int, k: int) -> list[int]:
    """The features of head ``k`` of ``h`` in a width-``d`` projection (torch's order: head k
    holds features k·d/h … (k+1)·d/h − 1)."""
    dh = d // h
    return list(range(k * dh, (k + 1) * dh))


def is_norm_first(layer: Any) -> bool:
    """Whether an ``nn.TransformerEncoderLayer`` normalizes before its sublayers."""
    return bool(layer.norm_first)


def mask_of(imp: Importer, mask: Any, n: int, is_causal: bool) -> str:
    """The mask kind of an ``attn_mask`` (None, a 0/−∞ float or a boolean [n, n] tensor, True:
    hidden) given to a standard attention module."""
    torch = torch_lib()
    if mask is None:
        return "causal" if is_causal else "none"
    if isinstance(mask, (Sym, Tok, Scores)):
        raise imp.refuse("a token-dependent attention mask")
    m = torch.as_tensor(mask)
    if m.dim() != 2 or tuple(m.shape) != (n, n):
        raise imp.refuse(f"an attention mask of shape {tuple(m.shape)} (expected [{n}, {n}])")
    hidden = m if m.dtype == torch.bool else (m == -math.inf)
    if m.dtype != torch.bool and not bool(((m == 0) | (m == -math.inf)).all()):
        raise imp.refuse("an additive attention mask with values other than 0 and −∞")
    p = list(range(n))
    return imp.mask_kind(~hidden, p, p)


def padding_ok(imp: Importer, kpm: Any) -> None:
    torch = torch_lib()
    if kpm is None:
        return
    if isinstance(kpm, (Sym, Tok, Scores)) or bool(torch.as_tensor(kpm).to(torch.bool).any()):
        raise imp.refuse(
            "a key padding mask that hides tokens of the words (the words have no padding)"
        )


def mha(imp: Importer, mod: Any, x: tuple[str, ...], mask: str, stem: str) -> tuple[str, ...]:
    """``nn.MultiheadAttention`` (self-attention, q = k = v input) on the values ``x``."""
    g = imp.g
    d, h = mod.embed_dim, mod.num_heads
    if not mod._qkv_same_embed_dim or mod.in_proj_weight is None:
        raise imp.refuse("nn.MultiheadAttention with different q/k/v widths")
    if mod.bias_k is not None or mod.add_zero_attn:
        raise imp.refuse("nn.MultiheadAttention with add_bias_kv or add_zero_attn")
    w = mod.in_proj_weight
    b = mod.in_proj_bias
    proj = []
    for k, part in enumerate("qkv"):
        bias = tuple(exact(b[k * d : (k + 1) * d])) if b is not None else (Fraction(0),) * d
        outs = g.fresh(f"{stem}.{part}", d)
        g.add(Lin(x, outs, matrix(w[k * d : (k + 1) * d]), bias))
        proj.append(outs)
    heads = []
    for k in range(h):
        sl = head_slices(d, h, k)
        heads.append(
            HeadSpec(
                tuple(proj[0][j] for j in sl),
                tuple(proj[1][j] for j in sl),
                tuple(proj[2][j] for j in sl),
                g.fresh(f"{stem}.h{k}", len(sl)),
                Fraction(1),
                d // h,
                mask,
            )
        )
    g.add(Attend(tuple(heads)))
    cat = tuple(o for hd in heads for o in hd.outputs)
    ob = mod.out_proj.bias
    outs = g.fresh(f"{stem}.out", d)
    g.add(
        Lin(
            cat,
            outs,
            matrix(mod.out_proj.weight),
            tuple(exact(ob)) if ob is not None else (Fraction(0),) * d,
        )
    )
    return outs


def activation_kind(imp: Importer, act: Any) -> str:
    torch = torch_lib()
    nn, F = torch.nn, torch.nn.functional
    if act is F.relu or isinstance(act, nn.ReLU) or act is torch.relu:
        return "relu"
    if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    raise imp.refuse(f"activation {act!r} (ReLU and the exact GELU only)")


def norm(imp: Importer, mod: Any, x: tuple[str, ...], stem: str) -> tuple[str, ...]:
    g = imp.g
    if len(mod.normalized_shape) != 1:
        raise imp.refuse("a LayerNorm over more than the last axis")
    d = len(x)
    gamma = tuple(exact(mod.weight)) if mod.weight is not None else (Fraction(1),) * d
    beta = tuple(exact(mod.bias)) if getattr(mod, "bias", None) is not None else (Fraction(0),) * d
    outs = g.fresh(stem, d)
    g.add(Norm(Fraction(mod.eps), x, outs, gamma, beta))
    return outs


def encoder_layer(
    imp: Importer, layer: Any, x: tuple[str, ...], mask: str, stem: str
) -> tuple[str, ...]:
    """``nn.TransformerEncoderLayer`` on the values ``x`` (dropout: the identity)."""
    g = imp.g
    kind = activation_kind(imp, layer.activation)

    def ff(y: tuple[str, ...]) -> tuple[str, ...]:
        l1, l2 = layer.linear1, layer.linear2
        h1 = g.fresh(f"{stem}.ff", l1.out_features)
        g.add(Lin(y, h1, matrix(l1.weight), tuple(exact(l1.bias))))
        a = g.fresh(f"{stem}.act", l1.out_features)
        g.add(Act(kind, h1, a))
        o = g.fresh(f"{stem}.ffout", l2.out_features)
        g.add(Lin(a, o, matrix(l2.weight), tuple(exact(l2.bias))))
        return o

    def add(a: tuple[str, ...], b: tuple[str, ...], name: str) -> tuple[str, ...]:
        outs = g.fresh(name, len(a))
        g.add(Add(a, b, outs))
        return outs

    if is_norm_first(layer):
        y = norm(imp, layer.norm1, x, f"{stem}.norm1")
        x = add(x, mha(imp, layer.self_attn, y, mask, f"{stem}.attn"), f"{stem}.res1")
        y = norm(imp, layer.norm2, x, f"{stem}.norm2")
        x = add(x, ff(y), f"{stem}.res2")
    else:
        x = add(x, mha(imp, layer.self_attn, x, mask, f"{stem}.attn"), f"{stem}.res1")
        x = norm(imp, layer.norm1, x, f"{stem}.norm1")
        x = add(x, ff(x), f"{stem}.res2")
        x = norm(imp, layer.norm2, x, f"{stem}.norm2")
    return x


def positions_axis(imp: Importer, x: Sym) -> int:
    """The axis of ``x`` along which the position varies."""
    for ax in range(x.ids.dim() - 1):
        if x.shape[ax] > 1 and not bool((x.pos.narrow(ax, 0, 1) == x.pos).all()):
            return ax
    raise imp.refuse("no position axis found")


def call_encoder(imp: Importer, mod: Any, x: Sym, args: Sequence[Any], kw: dict[str, Any]) -> Sym:
    torch = torch_lib()
    nn = torch.nn
    names, _ = imp.group(x)
    ax = positions_axis(imp, x)
    n = x.shape[ax]
    batch_first = ax == 1 if x.ids.dim() == 3 else True
    if (
        x.ids.dim() == 3
        and (mod.layers[0] if isinstance(mod, nn.TransformerEncoder) else mod).self_attn.batch_first
        != batch_first
    ):
        raise imp.refuse("the positions are on another axis than the module's batch_first says")
    mask = kw.get("mask", kw.get("src_mask", args[0] if args else None))
    kpm = kw.get("src_key_padding_mask", args[1] if len(args) > 1 else None)
    padding_ok(imp, kpm)
    kind = mask_of(imp, mask, n, bool(kw.get("is_causal") or False))
    stem = imp.stem
    if isinstance(mod, nn.TransformerEncoder):
        for k, layer in enumerate(mod.layers):
            names = encoder_layer(imp, layer, names, kind, f"{stem}.{k}")
        if mod.norm is not None:
            names = norm(imp, mod.norm, names, f"{stem}.norm")
    else:
        names = encoder_layer(imp, mod, names, kind, stem)
    return imp.with_names(x, names)


def call_mha(imp: Importer, mod: Any, args: Sequence[Any], kw: dict[str, Any]) -> Any:
    q, k, v = ([*list(args), kw.get("query"), kw.get("key"), kw.get("value")])[:3]
    if not (isinstance(q, Sym) and isinstance(k, Sym) and isinstance(v, Sym)):
        raise imp.refuse("nn.MultiheadAttention on constant inputs")
    if not (torch_equal(q.ids, k.ids) and torch_equal(q.ids, v.ids)):
        raise imp.refuse(
            "nn.MultiheadAttention with different query, key and value (cross-attention)"
        )
    names, _ = imp.group(q)
    ax = positions_axis(imp, q)
    if (ax == 1) != bool(mod.batch_first) and q.ids.dim() == 3:
        raise imp.refuse("the positions are on another axis than the module's batch_first says")
    padding_ok(imp, kw.get("key_padding_mask", args[3] if len(args) > 3 else None))
    mask = kw.get("attn_mask", args[5] if len(args) > 5 else None)
    kind = mask_of(imp, mask, q.shape[ax], bool(kw.get("is_causal") or False))
    out = mha(imp, mod, names, kind, imp.where)
    return (imp.with_names(q, out), None)


def torch_equal(a: Any, b: Any) -> bool:
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())
