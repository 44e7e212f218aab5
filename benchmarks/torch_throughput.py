"""Torch throughput: tokens per second of the PARITY and FIRST transformers (Chiang & Cholak
2022, c = ln 2) and the Dyck(8, 10) recognizer (Yao et al. 2021, Theorem 4.1) at n = 10^3 and
10^4 (and 10^5 for PARITY), batch 64, one CPU thread by default, for

- ``netproof run_batch``: :func:`netproof.symbolic.torch_backend.run_batch`, float64, with its
  hardmax statistics, as the CLI's ``run --backend torch`` and ``fuzz --backend torch`` run it
  (heads with few distinct keys computed by key groups, :mod:`netproof.symbolic.torch_grouped`;
  hardmax heads with one query per word by running maxima, :mod:`netproof.symbolic.torch_running`);
- ``run_batch, no stats``: the same, ``run_batch(..., stats=False)`` (what the statistics cost);
- ``direct (batched)``: the network written directly with plain ``torch.nn.functional`` calls on
  a padded batch (:class:`Direct`), reading the weights from
  :func:`netproof.symbolic.torch_export.state_dict` and nothing else;
- ``plain loop``: the baseline: one word at a time through standard PyTorch modules
  (:class:`PlainLoop`: ``F.multi_head_attention_forward`` for every softmax head, a masked ``amax``
  for hardmax heads, ``F.linear``, ``F.layer_norm``), the same weights;
- ``exact``: the exact interpreters (``symbolic.batched`` integers for the hardmax Dyck
  recognizer, ``symbolic.exact`` Fractions word by word for the softmax nets; ``--no-exact`` skips);
- the exhaustive rows (:func:`exhaustive`, ``--no-exhaustive`` skips): every word of Dyck(2, 2)
  with 10 symbols and of PARITY with 20, in shortlex order, words/s of the exact path the
  exhaustive checker takes (``symbolic.batched`` where it runs the network) next to ``run_batch``
  on the same words; ``ratio`` there is the time per word over the exact path's.

    python benchmarks/torch_throughput.py [--lengths 1000 10000] [--parity-lengths 100000]
        [--batch 64] [--max-seconds 60] [--threads 1] [--no-exact]

The ``ratio`` column is each row's time per token over the plain loop's, from the same run on
the same words (below 1: faster than the plain loop). Tokens count every position the network
sees (CLS, γ and ω included), ``batch · n`` per batch. The sides run in turn on groups of words
(:func:`chunk_for` words, one group after the other), so that the load of a shared machine falls on
all of them alike, until the batch is done or their total time passes ``--max-seconds`` times the
number of sides; every row times the same words (the ``words`` column). ``max|Δlogit|`` is the
largest difference from the plain loop's logits. Where one n × n score matrix would exceed ``PLAIN_MAX_SCORES`` entries (PARITY at n = 10^5),
the plain and direct rows are not run; the first word's netproof logit is compared with the exact
interpreter's instead. Without CUDA the GPU rows print "no GPU".
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import torch.nn.functional as F

from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.constructions.yao2021 import dyck_recognizer, symbols
from netproof.symbolic import Network
from netproof.symbolic.positional import feature
from netproof.symbolic.torch_export import layout, state_dict

Tensor = torch.Tensor
QUERY_BLOCK = 2048  # queries per attention block: bounds memory at batch · 2048 · n scores


# --------------------------------------------------------------------------- the direct network


class Direct:
    """A classifier network as plain tensors and ``nn.functional`` calls (float, batched).

    Built from the exported state dict and its layout only; every map that writes residual dims
    is widened once to d_model columns/rows here, so the forward pass is matmuls.
    """

    def __init__(self, net: Network, *, dtype: torch.dtype, device: str) -> None:
        lay = layout(net)
        sd = {k: v.to(device=device, dtype=dtype) for k, v in state_dict(net).items()}
        self.lay, self.sd, self.dtype, self.device = lay, sd, dtype, device
        dims = lay["dims"]
        self.at = {d: i for i, d in enumerate(dims)}
        self.d = len(dims)
        emb = lay["embedding"]
        assert emb["type"] == "TokenEmbedding", "the benchmark networks have token embeddings"
        self.tokens = emb["tokens"]
        self.prefix, self.suffix = emb["prefix"], emb["suffix"]
        self.layers: list[tuple[str, Any]] = []
        for i, layer in enumerate(lay["layers"]):
            post = sd.get(f"layers.{i}.post_ln.eps") if layer["post_ln"] is not None else None
            post_over = (
                None if layer["post_ln"] is None else self._over(layer["post_ln"]["over"], dims)
            )
            if layer["kind"] == "attention":
                heads = []
                for h, head in enumerate(layer["heads"]):
                    p = f"layers.{i}.attention.heads.{h}"
                    wq = torch.cat([sd[f"{p}.W_Q"], sd[f"{p}.W_K"], sd[f"{p}.W_V"]])
                    bq = torch.cat([sd[f"{p}.b_Q"], sd[f"{p}.b_K"], sd[f"{p}.b_V"]])
                    dq, dv = sd[f"{p}.W_Q"].shape[0], sd[f"{p}.W_V"].shape[0]
                    if layer["output"]:
                        write = None
                    else:
                        write = self._placer(lay["tensors"][f"{p}.W_V"]["rows"])
                    heads.append((head, wq, bq, dq, dv, write))
                out = None
                if layer["output"]:
                    p = f"layers.{i}.attention"
                    place = self._placer(lay["tensors"][f"{p}.W_O"]["rows"])
                    out = (place @ sd[f"{p}.W_O"], place @ sd[f"{p}.b_O"])
                self.layers.append(("attention", (heads, out, layer["residual"], post, post_over)))
            else:
                steps: list[tuple[str, Any]] = []
                names = list(dims)
                for j, step in enumerate(layer["steps"]):
                    p = f"layers.{i}.ffn.steps.{j}"
                    if step["kind"] == "affine":
                        info = lay["tensors"][f"{p}.weight"]
                        cols = torch.tensor([names.index(c) for c in info["cols"]], device=device)
                        w = torch.zeros(
                            sd[f"{p}.weight"].shape[0], len(names), dtype=dtype, device=device
                        )
                        w[:, cols] = sd[f"{p}.weight"]
                        steps.append(("linear", (w, sd[f"{p}.bias"])))
                        names = info["rows"]
                    elif step["kind"] == "activation":
                        steps.append(("act", step["activation"]))
                    else:
                        steps.append(("ln", (self._over(step["over"], names), sd[f"{p}.eps"])))
                place = self._placer(names) if layer["steps"] else None
                self.layers.append(("ffn", (steps, place, layer["residual"], post, post_over)))
        r = lay["readout"]
        assert r["type"] == "Classifier", "the benchmark networks are classifiers"
        self.position = r["position"]
        self.logit_w, self.logit_b = sd["readout.logit.weight"][0], sd["readout.logit.bias"][0]
        self.features = [feature(f["name"]) for f in emb["positional_features"]]
        self.positional = sd.get("embedding.positional")
        self.index_base = emb["index_base"]

    def _over(self, over: list[str] | None, names: Sequence[str]) -> Tensor | None:
        return (
            None
            if over is None
            else torch.tensor([list(names).index(o) for o in over], device=self.device)
        )

    def _placer(self, rows: Sequence[str]) -> Tensor:
        """The d_model × len(rows) matrix that puts a vector over ``rows`` into the residual dims."""
        m = torch.zeros(self.d, len(rows), dtype=self.dtype, device=self.device)
        for j, r in enumerate(rows):
            m[self.at[r], j] = 1
        return m

    def encode(self, words: Sequence[Sequence[str]]) -> Tensor:
        index = {t: i for i, t in enumerate(self.tokens)}
        rows = [[index[t] for t in (*self.prefix, *w, *self.suffix)] for w in words]
        return torch.tensor(rows, device=self.device)

    def forward(self, ids: Tensor) -> Tensor:
        n = ids.shape[1]
        x = F.embedding(ids, self.sd["embedding.table"])
        if self.features:
            pos = torch.tensor(
                [
                    [float(f(i, n)) for f in self.features]
                    for i in range(self.index_base, self.index_base + n)
                ],
                dtype=self.dtype,
                device=self.device,
            )
            x = x + pos @ self.positional
        qi = torch.arange(n, device=self.device)[:, None]
        kj = torch.arange(n, device=self.device)[None, :]
        for kind, spec in self.layers:
            if kind == "attention":
                heads, out, residual, post, post_over = spec
                outs = []
                delta = torch.zeros_like(x)
                for head, w, b, dq, _dv, write in heads:
                    qkv = F.linear(x, w, b)
                    q, k, v = qkv[..., :dq], qkv[..., dq : 2 * dq], qkv[..., 2 * dq :]
                    z = torch.cat(
                        [
                            self._attend(
                                head,
                                q[:, s : s + QUERY_BLOCK],
                                k,
                                v,
                                qi[s : s + QUERY_BLOCK],
                                kj,
                                n,
                            )
                            for s in range(0, n, QUERY_BLOCK)
                        ],
                        dim=1,
                    )
                    if write is not None:
                        delta = delta + z @ write.T
                    outs.append(z)
                if out is not None:
                    delta = F.linear(torch.cat(outs, dim=-1), out[0], out[1])
                x = x + delta if residual else delta
            else:
                steps, place, residual, post, post_over = spec
                h = x
                for skind, s in steps:
                    if skind == "linear":
                        h = F.linear(h, s[0], s[1])
                    elif skind == "act":
                        h = (
                            F.relu(h)
                            if s == "relu"
                            else h.clamp(0, 1)
                            if s == "sigma"
                            else (h > 0).to(h.dtype)
                        )
                    else:
                        h = _layer_norm(h, *s)
                delta = h @ place.T if place is not None else torch.zeros_like(x)
                x = x + delta if residual else delta
            if post is not None:
                x = _layer_norm(x, post_over, post)
        return x[:, self.position] @ self.logit_w + self.logit_b

    def _attend(
        self, head: dict[str, Any], q: Tensor, k: Tensor, v: Tensor, qi: Tensor, kj: Tensor, n: int
    ) -> Tensor:
        s = q @ k.transpose(1, 2)
        if head["scoring"] == "neg_abs_dot":
            s = s.abs_().neg_()
        mask = {
            "none": None,
            "causal": kj <= qi,
            "strict_causal": kj < qi,
            "anticausal": kj >= qi,
            "strict_anticausal": kj > qi,
        }[head["mask"]]
        nz = head["normalizer"]
        if nz["type"] == "hardmax":
            if mask is not None:
                s.masked_fill_(~mask, -math.inf)
            top = s.amax(dim=-1, keepdim=True)
            chosen = s == top
            if mask is not None:
                chosen = chosen & mask
            if nz["tie"] != "average":
                rank = chosen.cumsum(dim=-1)
                chosen = chosen & (rank == (1 if nz["tie"] == "leftmost" else rank[..., -1:]))
            weights = chosen.to(v.dtype)
            return (weights @ v) / weights.sum(dim=-1, keepdim=True).clamp(
                min=1
            )  # (mask @ V) / count
        sc = head["scale"]
        kappa = float(Fraction(sc["coef"]))
        kappa /= math.sqrt(sc["sqrt_d"]) if sc["sqrt_d"] is not None else 1
        kappa *= n if sc["times_n"] else 1
        kappa *= math.log(n) if sc["log_n"] else 1
        kappa *= math.log(Fraction(nz["r"])) if nz["r"] is not None else float(Fraction(nz["c"]))
        s.mul_(kappa)
        if mask is not None:
            s.masked_fill_(~mask, -math.inf)
        weights = F.softmax(s, dim=-1)
        if head["mask"] in ("strict_causal", "strict_anticausal"):
            weights.nan_to_num_(
                0.0
            )  # a query with nothing unmasked: 0 (only strict masks have one)
        return weights @ v


class PlainLoop(Direct):
    """The baseline a paper's authors write in ten minutes: one word at a time (no batch, no
    padding), every softmax head through the standard ``F.multi_head_attention_forward`` (one head,
    its q/k/v zero-padded to d_model, the exponent's factor folded into W^Q), hardmax heads as a
    masked ``amax`` over the word's score matrix, FFNs by ``F.linear``, layer norms by
    ``F.layer_norm`` where they span the whole vector. Same weights as :class:`Direct`."""

    def __init__(self, net: Network, *, dtype: torch.dtype, device: str) -> None:
        super().__init__(net, dtype=dtype, device=device)
        E = self.d
        self.mha: list[Any] = []
        for kind, spec in self.layers:
            if kind != "attention":
                self.mha.append(None)
                continue
            heads, out, *_ = spec
            per_head = []
            col = 0
            for head, w, b, dq, dv, write in heads:
                if max(dq, dv) > E:
                    raise ValueError(
                        f"head {head['name']!r}: q/v width {max(dq, dv)} exceeds d_model {E}"
                    )
                wq, wk, wv = w[:dq], w[dq : 2 * dq], w[2 * dq :]
                bq, bk, bv = b[:dq], b[dq : 2 * dq], b[2 * dq :]
                W = torch.zeros(3 * E, E, dtype=dtype, device=device)
                B = torch.zeros(3 * E, dtype=dtype, device=device)
                W[:dq], W[E : E + dq], W[2 * E : 2 * E + dv] = wq, wk, wv
                B[:dq], B[E : E + dq], B[2 * E : 2 * E + dv] = bq, bk, bv
                Wo = torch.zeros(E, E, dtype=dtype, device=device)
                Wo[:, :dv] = write if write is not None else out[0][:, col : col + dv]
                col += dv
                per_head.append((W, B, Wo, dq))
            self.mha.append(per_head)

    def _kappa(self, head: dict[str, Any], n: int) -> float:
        sc, nz = head["scale"], head["normalizer"]
        kappa = float(Fraction(sc["coef"]))
        kappa /= math.sqrt(sc["sqrt_d"]) if sc["sqrt_d"] is not None else 1
        kappa *= n if sc["times_n"] else 1
        kappa *= math.log(n) if sc["log_n"] else 1
        return kappa * (
            math.log(Fraction(nz["r"])) if nz["r"] is not None else float(Fraction(nz["c"]))
        )

    def word(self, w: Sequence[str]) -> Tensor:
        """The logit of one word."""
        index = {t: i for i, t in enumerate(self.tokens)}
        ids = torch.tensor([index[t] for t in (*self.prefix, *w, *self.suffix)], device=self.device)
        n = ids.shape[0]
        x = F.embedding(ids, self.sd["embedding.table"])
        if self.features:
            pos = torch.tensor(
                [
                    [float(f(i, n)) for f in self.features]
                    for i in range(self.index_base, self.index_base + n)
                ],
                dtype=self.dtype,
                device=self.device,
            )
            x = x + pos @ self.positional
        r = torch.arange(n, device=self.device)
        allow = {
            "none": None,
            "causal": r[None, :] <= r[:, None],
            "strict_causal": r[None, :] < r[:, None],
            "anticausal": r[None, :] >= r[:, None],
            "strict_anticausal": r[None, :] > r[:, None],
        }
        E = self.d
        for (kind, spec), mha in zip(self.layers, self.mha, strict=True):
            if kind == "attention":
                heads, out, residual, post, post_over = spec
                delta = torch.zeros_like(x) if out is None else out[1].expand_as(x)
                for (head, wqkv, bqkv, dq, dv, _write), (W, B, Wo, _dq) in zip(
                    heads, mha, strict=True
                ):
                    ok = allow[head["mask"]]
                    if head["normalizer"]["type"] == "softmax" and head["scoring"] == "dot":
                        W = W.clone()
                        W[:dq] *= self._kappa(head, n) * math.sqrt(E)  # mha divides q by √head_dim
                        Bq = B.clone()
                        Bq[:dq] *= self._kappa(head, n) * math.sqrt(E)
                        z, _ = F.multi_head_attention_forward(
                            x[:, None],
                            x[:, None],
                            x[:, None],
                            E,
                            1,
                            W,
                            Bq,
                            None,
                            None,
                            False,
                            0.0,
                            Wo,
                            torch.zeros(E, dtype=self.dtype, device=self.device),
                            need_weights=False,
                            attn_mask=None if ok is None else ~ok,
                        )
                        z = z[:, 0]
                        if head["mask"] in ("strict_causal", "strict_anticausal"):
                            z = z.nan_to_num(0.0)
                    else:
                        qkv = F.linear(x, wqkv, bqkv)
                        q, k, v = qkv[:, :dq], qkv[:, dq : 2 * dq], qkv[:, 2 * dq :]
                        s = q @ k.T
                        if head["scoring"] == "neg_abs_dot":
                            s = -s.abs()
                        if head["normalizer"]["type"] == "softmax":
                            s = s * self._kappa(head, n)
                            if ok is not None:
                                s = s.masked_fill(~ok, -math.inf)
                            wts = F.softmax(s, dim=-1).nan_to_num(0.0)
                        else:
                            if ok is not None:
                                s = s.masked_fill(~ok, -math.inf)
                            chosen = s == s.amax(dim=-1, keepdim=True)
                            if ok is not None:
                                chosen = chosen & ok
                            tie = head["normalizer"]["tie"]
                            if tie != "average":
                                rank = chosen.cumsum(dim=-1)
                                chosen = chosen & (
                                    rank == (1 if tie == "leftmost" else rank[:, -1:])
                                )
                            wts = chosen.to(v.dtype)
                            wts = wts / wts.sum(dim=-1, keepdim=True).clamp(min=1)
                        z = (wts @ v) @ Wo[:, :dv].T
                    delta = delta + z
                x = x + delta if residual else delta
            else:
                steps, place, residual, post, post_over = spec
                h = x
                for skind, s in steps:
                    if skind == "linear":
                        h = F.linear(h, s[0], s[1])
                    elif skind == "act":
                        h = (
                            F.relu(h)
                            if s == "relu"
                            else h.clamp(0, 1)
                            if s == "sigma"
                            else (h > 0).to(h.dtype)
                        )
                    elif s[0] is None:
                        h = F.layer_norm(h, h.shape[-1:], eps=float(s[1]))
                    else:
                        h = _layer_norm(h, *s)
                delta = h @ place.T if place is not None else torch.zeros_like(x)
                x = x + delta if residual else delta
            if post is not None:
                x = (
                    F.layer_norm(x, x.shape[-1:], eps=float(post))
                    if post_over is None
                    else _layer_norm(x, post_over, post)
                )
        return x[self.position] @ self.logit_w + self.logit_b

    def forward(self, ids_or_words: Any) -> Tensor:  # type: ignore[override]
        return torch.stack([self.word(w) for w in ids_or_words])


def _layer_norm(h: Tensor, over: Tensor | None, eps: Tensor) -> Tensor:
    if over is None:
        c = h - h.mean(dim=-1, keepdim=True)
        return c / torch.sqrt((c * c).mean(dim=-1, keepdim=True) + eps)
    part = h[..., over]
    c = part - part.mean(dim=-1, keepdim=True)
    h = h.clone()
    h[..., over] = c / torch.sqrt((c * c).mean(dim=-1, keepdim=True) + eps)
    return h


def direct_logits(
    net: Network,
    words: Sequence[Sequence[str]],
    *,
    dtype: torch.dtype = torch.float64,
    device: str = "cpu",
) -> Tensor:
    """The logits of ``net`` on ``words`` (all of one length) by :class:`Direct`."""
    d = Direct(net, dtype=dtype, device=device)
    return d.forward(d.encode(words))


# --------------------------------------------------------------------------- words and timing


def binary_words(n: int, batch: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Words of n − 1 symbols (CLS makes n positions)."""
    return [tuple(rng.choice("01") for _ in range(n - 1)) for _ in range(batch)]


def dyck_words(
    n: int, batch: int, rng: random.Random, *, k: int = 8, depth: int = 10
) -> list[tuple[str, ...]]:
    """Members of Dyck(k, D) with n − 2 symbols (γ and ω make n positions): a random walk that
    opens with probability ½ below depth D and closes the stack at the end."""
    pairs = symbols(k)
    inner = n - 2
    if inner % 2:
        raise ValueError(f"n={n} gives an odd inner length {inner}; Dyck words have even length")
    out = []
    for _ in range(batch):
        stack: list[int] = []
        w: list[str] = []
        while len(w) < inner:
            left = inner - len(w)
            if stack and (len(stack) >= depth or len(stack) >= left or rng.random() < 0.5):
                w.append(pairs[stack.pop()][1])
            else:
                t = rng.randrange(k)
                stack.append(t)
                w.append(pairs[t][0])
        out.append(tuple(w))
    return out


def timed(
    fn: Callable[[list[tuple[str, ...]]], Any],
    words: list[tuple[str, ...]],
    max_seconds: float,
    chunk: int,
) -> tuple[float, int, list[Any]]:
    """Run ``fn`` over the words in chunks until all are done or ``max_seconds`` have passed
    (at least one chunk); returns (seconds, words done, outputs)."""
    done, outs, seconds = 0, [], 0.0
    while done < len(words):
        part = words[done : done + chunk]
        started = time.perf_counter()
        outs.append(fn(part))
        seconds += time.perf_counter() - started
        done += len(part)
        if seconds > max_seconds:
            break
    return seconds, done, outs


def chunk_for(n: int, batch: int) -> int:
    """Words per call: at most ~2·10^7 attention scores (words · n · QUERY_BLOCK) at a time."""
    return max(1, min(batch, 20_000_000 // (n * min(n, QUERY_BLOCK))))


def exact_logits(net: Network, words: list[tuple[str, ...]]) -> list[float]:
    from netproof.symbolic import batched
    from netproof.symbolic.exact import run

    if batched.supports(net) is None:
        b = batched.evaluate(
            net, ["".join(w) if all(len(s) == 1 for s in w) else list(w) for w in words]
        )
        return [float(b.logit(i)) for i in range(len(words))]
    return [float(run(net, w).output) for w in words]


def parity_exact(words: Sequence[Sequence[str]]) -> list[float]:
    """PARITY's exact logit by its closed form (spec §2.2, E = e^c = 2), which the registry's
    claims check against the exact interpreter (``constructions.chiang2022.claims.parity_closed_form``)."""
    from types import SimpleNamespace

    import sympy

    from netproof.constructions.chiang2022.claims import parity_closed_form

    return [
        float(
            parity_closed_form(SimpleNamespace(E=sympy.Integer(2), n=len(w) + 1, word="".join(w)))
        )  # type: ignore[arg-type]
        for w in words
    ]


# --------------------------------------------------------------------------- main


NETWORKS: dict[
    str, tuple[Callable[[], Network], Callable[[int, int, random.Random], list[tuple[str, ...]]]]
] = {
    "PARITY": (lambda: parity_transformer("ln(2)"), binary_words),
    "FIRST": (lambda: first_transformer("ln(2)"), binary_words),
    "Dyck(8,10)": (lambda: dyck_recognizer(k=8, depth=10), dyck_words),
}


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


PLAIN_MAX_SCORES = 4 * 10**8
"""The plain loop holds one n × n score matrix per head: above this many entries it is not run."""


def measure(
    name: str, net: Network, n: int, device: str, words: list[tuple[str, ...]], max_seconds: float
) -> None:
    """Time netproof's ``run_batch`` (with its hardmax statistics, as the CLI runs it), the compiled
    forward without statistics, the batched ``direct`` network and the plain per-word loop on the
    same words; print one row each with its time over the plain loop's time per token."""
    from netproof.symbolic.torch_backend import compile as compile_net
    from netproof.symbolic.torch_backend import run_batch, unsupported

    reason = unsupported(net)
    if reason is not None:  # a recurrent network or an encoder–decoder: no torch row
        print(f"{name:11} {n:>7} {'torch ' + device:22} not supported: {reason}", flush=True)
        return
    chunk = chunk_for(n, len(words))
    compiled = compile_net(net, dtype="float64", device=device)
    direct = Direct(net, dtype=torch.float64, device=device)
    plain = PlainLoop(net, dtype=torch.float64, device=device)

    def run_netproof(ws: list[tuple[str, ...]]) -> Tensor:
        out = run_batch(compiled, ws).logits
        _sync(device)
        return out

    def run_bare(ws: list[tuple[str, ...]]) -> Tensor:
        out = run_batch(compiled, ws, stats=False).logits
        _sync(device)
        return out

    def run_direct(ws: list[tuple[str, ...]]) -> Tensor:
        out = direct.forward(direct.encode(ws))
        _sync(device)
        return out

    def run_plain(ws: list[tuple[str, ...]]) -> Tensor:
        out = plain.forward(ws)
        _sync(device)
        return out

    big = n * n > PLAIN_MAX_SCORES
    sides: list[tuple[str, Callable[[list[tuple[str, ...]]], Tensor]]] = [
        ("netproof run_batch", run_netproof),
        ("run_batch, no stats", run_bare),
    ]
    if not big:
        sides += [("direct (batched)", run_direct), ("plain loop", run_plain)]
    secs = [0.0] * len(sides)
    outs: list[list[Any]] = [[] for _ in sides]
    done = 0
    try:
        for _label, fn in sides:  # warm-up (and CUDA initialization), not timed
            fn(words[:1])
        # Interleaved: every side runs each group of words in turn, so that the load of a shared
        # machine falls on all of them alike; stop after the group that passes the time budget.
        while done < len(words) and sum(secs) <= max_seconds * len(sides):
            part = words[done : done + chunk]
            for k, (_label, fn) in enumerate(sides):
                started = time.perf_counter()
                outs[k].append(fn(part))
                secs[k] += time.perf_counter() - started
            done += len(part)
    except torch.cuda.OutOfMemoryError as exc:
        print(f"{name:11} {n:>7} {'torch ' + device:22} out of memory: {str(exc).splitlines()[0]}")
        return
    rows = [(label, secs[k], done, outs[k]) for k, (label, _fn) in enumerate(sides)]
    ref = rows[-1]
    ref_logits = torch.cat([o.reshape(-1).cpu() for o in ref[3]])
    ref_rate = ref[2] * n / ref[1]
    for label, secs, done, outs in rows:
        rate = done * n / secs
        logits = torch.cat([o.reshape(-1).cpu() for o in outs])
        m = min(len(logits), len(ref_logits))
        diff = (logits[:m] - ref_logits[:m]).abs().max().item()
        ratio = f"{ref_rate / rate:>6.3g}x" if not big else "      -"
        shown = f"{diff:>12.3g}" if not big else f"{'-':>12}"
        print(
            f"{name:11} {n:>7} {label + ' ' + device:26} {done:>6} {secs:>9.3f} {rate:>12.1f} {ratio} {shown}",
            flush=True,
        )
    if big:
        print(
            f"{name:11} {n:>7} {'plain loop ' + device:26} not run: one n × n score matrix is {n * n * 8 / 2**30:.0f} GiB"
        )
        got = torch.cat([o.reshape(-1).cpu() for o in rows[0][3]]).tolist()
        done = rows[0][2]
        started = time.perf_counter()
        if (
            name == "PARITY"
        ):  # the exact interpreter's Fractions take hours here: the exact closed form
            label, exact = "exact closed form", parity_exact(words[:done])
        else:
            label, exact = "exact", exact_logits(net, words[:1])
        secs = time.perf_counter() - started
        worst = max(abs(e - g) / abs(e) for e, g in zip(exact, got, strict=False))
        signs = all((e > 0) == (g > 0) for e, g in zip(exact, got, strict=False))
        print(
            f"{name:11} {n:>7} {label + ' ' + device:26} {len(exact):>6} {secs:>9.3f} {len(exact) * n / secs:>12.1f} "
            f"{'':>7} {'-':>12}  netproof vs exact: largest relative |Δ| {worst:.3g}, every sign equal: {signs}",
            flush=True,
        )


EXHAUSTIVE: dict[str, tuple[Callable[[], Network], int]] = {
    "Dyck(2,2)": (lambda: dyck_recognizer(k=2, depth=2), 10),
    "PARITY": (lambda: parity_transformer("ln(2)"), 20),
}
"""The exhaustive rows: every word of this many symbols."""


def exhaustive(name: str, net: Network, m: int, max_seconds: float) -> None:
    """Every word of ``m`` symbols in shortlex order (the exhaustive checker's order), in blocks,
    through the exact path the exhaustive checker takes (``symbolic.batched``: exact integers on the
    int arrays the checker hands it; where it refuses the network, the exact interpreter word by
    word, as the checker then runs it) and through ``run_batch`` (with and without statistics) on
    the same words, interleaved block by block; words/s, the time per word over the exact path's,
    and how many accept bits agree with exact (an undecided float verdict counts as not agreeing)."""
    import numpy as np

    from netproof.symbolic import batched
    from netproof.symbolic.exact import run as exact_run
    from netproof.symbolic.torch_backend import compile as compile_net
    from netproof.symbolic.torch_backend import run_batch

    size = len(net.alphabet)
    total = size**m
    reason = batched.supports(net)
    if reason is None:
        ev = batched.Evaluator(net)
        label, block = "exact: symbolic.batched", batched.CHUNK
    else:
        label, block = "exact: per word", 256
        print(f"{name:11} {m:>7} {'symbolic.batched':26} not supported: {reason}")
    compiled = compile_net(net, dtype="float64", device="cpu")

    def run_exact(idx: Any, words: list[tuple[str, ...]]) -> list[bool | None]:
        if reason is None:
            return [bool(a) for a in ev.run(idx).accepted]
        return [exact_run(net, w).accepted for w in words]

    def run_float(idx: Any, words: list[tuple[str, ...]]) -> list[bool | None]:
        return list(run_batch(compiled, words).accepted)

    def run_bare(idx: Any, words: list[tuple[str, ...]]) -> list[bool | None]:
        return list(run_batch(compiled, words, stats=False).accepted)

    sides = [
        (label, run_exact),
        ("netproof run_batch", run_float),
        ("run_batch, no stats", run_bare),
    ]
    secs = [0.0] * len(sides)
    outs: list[list[bool | None]] = [[] for _ in sides]
    done = 0
    start_idx = batched.shortlex_block(size, m, 0, 1)
    first = [tuple(net.alphabet[i] for i in row) for row in start_idx.tolist()]
    for _label, fn in sides:  # warm-up, not timed
        fn(start_idx, first)
    while done < total and sum(secs) <= max_seconds * len(sides):
        stop = min(total, done + block)
        idx = batched.shortlex_block(size, m, done, stop)
        words = [tuple(net.alphabet[i] for i in row) for row in np.asarray(idx).tolist()]
        for k, (_label, fn) in enumerate(sides):
            started = time.perf_counter()
            outs[k].extend(fn(idx, words))
            secs[k] += time.perf_counter() - started
        done = stop
    ref = secs[0] / done
    for k, (side, _fn) in enumerate(sides):
        agree = sum(a == b for a, b in zip(outs[k], outs[0], strict=True))
        print(
            f"{name:11} {m:>7} {side + ' cpu':26} {done:>6} {secs[k]:>9.3f} {done / secs[k]:>12.1f} "
            f"{secs[k] / done / ref:>6.3g}x   accept bits equal to exact: {agree}/{done} (of {total} words)",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument(
        "--gpu-lengths",
        type=int,
        nargs="*",
        default=[1000, 10000, 100000],
        help="n for the CUDA rows (10^5 for PARITY only)",
    )
    ap.add_argument(
        "--parity-lengths",
        type=int,
        nargs="*",
        default=[100000],
        help="more n for PARITY on the CPU (beyond the plain loop's memory: netproof and exact only)",
    )
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument(
        "--max-seconds", type=float, default=60.0, help="time budget per row (see the docstring)"
    )
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--networks", nargs="+", default=list(NETWORKS), choices=list(NETWORKS))
    ap.add_argument("--no-exact", action="store_true", help="skip the exact rows")
    ap.add_argument(
        "--no-exhaustive",
        action="store_true",
        help="skip the exhaustive rows (every word of Dyck(2,2) at 10 symbols, PARITY at 20: exact vs run_batch)",
    )
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cuda = torch.cuda.is_available()
    print(
        f"torch {torch.__version__}, CPU threads {torch.get_num_threads()}, "
        f"GPU: {torch.cuda.get_device_name(0) if cuda else 'no GPU'}"
    )
    print(
        f"{'network':11} {'n':>7} {'backend':26} {'words':>6} {'seconds':>9} {'tokens/s':>12} "
        f"{'ratio':>7} {'max|Δlogit|':>12}"
    )
    for name in args.networks:
        build, make_words = NETWORKS[name]
        net = build()
        if not args.no_exact:
            for n in args.lengths:
                words = make_words(n, args.batch, random.Random(n))
                secs, done, _ = timed(partial(exact_logits, net), words, args.max_seconds, 1)
                print(
                    f"{name:11} {n:>7} {'exact':22} {done:>6} {secs:>9.3f} {done * n / secs:>12.1f}",
                    flush=True,
                )
        for n in args.lengths + (args.parity_lengths if name == "PARITY" else []):
            measure(
                name, net, n, "cpu", make_words(n, args.batch, random.Random(n)), args.max_seconds
            )
        for n in args.gpu_lengths:
            if n > max(args.lengths) and name != "PARITY":
                continue
            if not cuda:
                print(f"{name:11} {n:>7} {'torch cuda':22} no GPU")
                continue
            measure(
                name, net, n, "cuda", make_words(n, args.batch, random.Random(n)), args.max_seconds
            )
    if not args.no_exhaustive:
        print(
            f"{'network':11} {'symbols':>7} {'backend':26} {'words':>6} {'seconds':>9} {'words/s':>12} {'ratio':>7}"
        )
        for name, (build, m) in EXHAUSTIVE.items():
            exhaustive(name, build(), m, args.max_seconds)


if __name__ == "__main__":
    main()
