"""The torch backend's run of an encoder–decoder (:class:`~netproof.symbolic.ir.Seq2Seq`), one
word at a time (evidence, not proof).

Owns :func:`run_seq2seq` and its result :class:`Seq2SeqFloatRun`: the encoder is the compiled
sublayer code of :class:`~netproof.symbolic.torch_compiler.CompiledNetwork` (a batch of one word);
each decoder step computes one new row, with the semantics of :func:`netproof.symbolic.seq2seq.run`.
It imports the IR, the evaluation loop's errors, the positional features, the compiler and
:mod:`netproof.symbolic.torch_common`; :mod:`netproof.symbolic.torch_backend` re-exports it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, assert_never

from .errors import WordError
from .evaluation import UndefinedValueError
from .ir import Hardmax, Seq2Seq, Softmax
from .positional import feature
from .torch_common import Encoded, TorchBackendError
from .torch_compiler import CompiledLayer, CompiledNetwork

__all__ = ["Seq2SeqFloatRun", "run_seq2seq"]


@dataclass(frozen=True)
class Seq2SeqFloatRun:
    """A float run of an encoder–decoder (:func:`run_seq2seq`): ``ys`` holds y_0 .. y_T (steps ×
    dims, in the run's dtype, T the halting step or ``max_steps``), ``halted_at`` the first step
    whose halting unit is within the rounding tolerance of its value (None: no halt within
    ``max_steps``), ``min_gap`` the smallest hardmax score gap met (encoder and decoder) and
    ``unresolved_ties`` the (head, query) rows taken as tied without being equal in floats."""

    network: Seq2Seq
    word: tuple[str, ...]
    n: int
    ys: Any
    halted_at: int | None
    min_gap: float
    unresolved_ties: int
    dtype: str
    device: str

    @property
    def steps(self) -> int:
        """The number of decoder states computed (y_0 .. y_{steps−1})."""
        return int(self.ys.shape[0])

    def y(self, t: int) -> dict[str, float]:
        """y_t by dim name, as Python floats."""
        return dict(zip(self.network.dims, (float(v) for v in self.ys[t].tolist()), strict=True))

    def value(self, t: int, dim: str) -> float:
        """Dim ``dim`` of y_t."""
        try:
            d = self.network.dims.index(dim)
        except ValueError:
            raise KeyError(f"no dim {dim!r}; dims: {' '.join(self.network.dims)}") from None
        return float(self.ys[t, d])


class _CompiledSeq2Seq(CompiledNetwork):
    """An encoder–decoder compiled for one dtype and device. The encoder is the compiled
    sublayer code of :class:`CompiledNetwork` (a batch of one word); each decoder step computes
    one new row: self-attention over the layer's inputs of the steps so far, cross-attention over
    the encoder's final rows, both with the head semantics of :meth:`CompiledNetwork._head`
    (hardmax tolerance, average / leftmost / rightmost, softmax with its scale at the encoder's n)."""

    def __init__(
        self,
        net: Seq2Seq,
        *,
        dtype: str = "float64",
        device: str = "cpu",
        tie_rtol: float | None = None,
    ) -> None:
        self._prepare(net, dtype, device, tie_rtol)
        self._compile_embedding()
        self.layers = tuple(self._compile_layer(sub) for sub in net.encoder)
        for layer in net.decoder:
            for sub in (layer.self_attention, layer.cross_attention):
                for h in sub.block.heads:  # type: ignore[union-attr]
                    if h.relative:
                        raise TorchBackendError(
                            f"decoder layer {layer.name!r} head {h.name!r} has relative-position terms, which the torch "
                            "backend does not run in a decoder; run it exactly with symbolic.seq2seq.run(net, word)"
                        )
        self.decoder = tuple(
            (
                self._compile_layer(layer.self_attention),
                self._compile_layer(layer.cross_attention),
                self._compile_layer(layer.ffn),
            )
            for layer in net.decoder
        )
        self.output = self._lin(net.output, self.dims, "output F", rows=self.dims)
        self.halt = self._lin(net.halting.unit, self.dims, "halting unit")
        self.halt_value = float(net.halting.value)
        seed = [Fraction(0)] * len(self.dims)
        for d, v in net.seed:
            seed[self._cols([d], "seed")[0].item()] += v
        self.seed = seed

    def _decoder_positional(self, t: int, n: int) -> list[Fraction]:
        """ỹ_t's positional term Σ coef·feature(t, n), exactly (then rounded once)."""
        row = [Fraction(0)] * len(self.dims)
        for d, feat, coef in self.net.decoder_positional:  # type: ignore[attr-defined]
            row[self.col[d]] += coef * feature(feat)(t, n)
        return row

    def _attend(self, cl: CompiledLayer, x: Any, i: int, kv: Any, n: int, stats: list[Any]) -> Any:
        """One query row ``x`` (dims,) at index ``i`` against the rows ``kv`` (m × dims), then
        the residual and the post layer norm: :meth:`netproof.symbolic.evaluation.Evaluator.attend`."""
        torch = self.torch
        m = kv.shape[0]
        parts = []
        for ch in cl.heads:
            h = ch.head
            where = f"attention {cl.sub.block.name!r} head {h.name!r}"
            hi = m if h.mask == "none" else min(i + 1, m)  # the decoder allows none and causal only
            width = len(h.value.outputs)
            if hi == 0:
                if h.empty == "error":
                    raise UndefinedValueError(
                        f"{where}: query {i} attends to an empty set under mask {h.mask!r} and the head's empty rule is 'error'"
                    )
                parts.append(x.new_zeros(width))
                continue
            keys = kv[:hi]
            q = ch.q(x[None])  # 1 × q width
            K, V = ch.k(keys), ch.v(keys)
            S = (q @ K.T)[0]
            if h.scoring == "neg_abs_dot":
                S = -S.abs()
            match h.normalizer:
                case Hardmax(tie=tie):
                    tol = (
                        self.tie_rtol
                        * float(q.abs().sum())
                        * (float(K.abs().amax()) if K.numel() else 0.0)
                    )
                    best = S.max()
                    sel = best - tol <= S
                    if tie == "average":
                        w = sel.to(V.dtype)
                        out = (w @ V) / w.sum()
                    else:
                        idx = torch.nonzero(sel)[:, 0]
                        out = V[int(idx[0] if tie == "leftmost" else idx[-1])]
                    below = S[best > S]
                    if below.numel():
                        second = float(below.max())
                        stats.append((float(best) - second, second >= float(best) - tol))
                case Softmax():
                    coef, times_n, log_n = ch.kappa
                    kappa = coef * (n if times_n else 1) * (math.log(n) if log_n else 1.0)
                    out = torch.softmax(S * kappa, dim=-1) @ V
                case _:
                    assert_never(h.normalizer)
            parts.append(out)
        if cl.out is not None:
            o = cl.out(torch.cat(parts)[None] if parts else x.new_zeros(1, 0))[0]
        else:
            o = torch.zeros_like(x)
            for ch, p in zip(cl.heads, parts, strict=True):
                o[ch.write] = p
        y = x + o if cl.sub.residual else o
        if cl.ln_eps is not None:
            y = self._layernorm(y, cl.ln_idx, cl.ln_eps)
        return y

    def run(self, word: str | Sequence[str], max_steps: int) -> Seq2SeqFloatRun:
        torch = self.torch
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
            raise WordError(f"max_steps={max_steps!r} must be an int >= 0")
        enc = self.encode([word])
        n = enc.n[0]
        gaps: list[Any] = []
        x = self._embed(enc)
        cache: dict[str, Any] = {}
        for cl in self.layers:
            x = self._apply(cl, x, enc, gaps, cache)
        memory = x[0]
        min_gap = math.inf
        ties = 0
        for _layer, _head, g, near in gaps:
            if g.numel():
                min_gap = min(min_gap, float(g.min()))
            ties += int(near.sum())
        one = Encoded(
            enc.words,
            enc.ids[:, :1],
            torch.ones(1, 1, dtype=torch.bool, device=self.device),
            (1,),
            enc.n,
            enc.n_tensor,
        )
        stats: list[Any] = []
        y = self._tensor(
            [float(a + b) for a, b in zip(self.seed, self._decoder_positional(0, n), strict=True)],
            "y_0",
        )
        kv_rows: list[list[Any]] = [[] for _ in self.decoder]
        ys = []
        halted_at = None
        for t in range(max_steps + 1):
            ys.append(y)
            u = float(self.halt(y[None])[0, 0])
            if abs(u - self.halt_value) <= self.tie_rtol * max(1.0, abs(self.halt_value)):
                halted_at = t
                break
            if t == max_steps:
                break
            x = y
            for idx, (sa, ca, ff) in enumerate(self.decoder):
                kv_rows[idx].append(x)
                x = self._attend(sa, x, t, torch.stack(kv_rows[idx]), n, stats)
                x = self._attend(ca, x, t, memory, n, stats)
                x = self._apply(ff, x[None, None], one, None, cache)[0, 0]
            pos = self._decoder_positional(t + 1, n)
            y = self.output(x[None])[0]
            if any(pos):
                y = y + self._tensor(
                    [float(p) for p in pos], f"decoder positional term at step {t + 1}"
                )
        for gap, near in stats:
            min_gap = min(min_gap, gap)
            ties += int(near)
        return Seq2SeqFloatRun(
            network=self.net,  # type: ignore[arg-type]
            word=enc.words[0],
            n=n,
            ys=torch.stack(ys),
            halted_at=halted_at,
            min_gap=min_gap,
            unresolved_ties=ties,
            dtype=self.dtype,
            device=str(self.device),
        )


def run_seq2seq(
    net: Seq2Seq,
    word: str | Sequence[str],
    *,
    dtype: str = "float64",
    device: str = "cpu",
    max_steps: int = 10_000,
    tie_rtol: float | None = None,
) -> Seq2SeqFloatRun:
    """Run the encoder–decoder ``net`` on one word in floats, with the semantics of
    :func:`netproof.symbolic.seq2seq.run`: y_0 = seed + positional(0); y_{t+1} = F(z_t) + positional(t+1);
    stop at the first y_t whose halting unit equals the halting value (in floats: within
    ``tie_rtol``·max(1, |value|)) or after ``max_steps`` steps. Decoder positional features are
    computed exactly, then rounded to the dtype (so 2^{−t} is 0 in float32 from t = 150 on).

    >>> from netproof.constructions.bhattamishra2020 import tm_network
    >>> net = tm_network({"machine": "balanced-parens", "transformer": "vanilla", "variant": "fixed"})
    >>> out = run_seq2seq(net, "()")
    >>> out.halted_at is not None, out.dtype
    (True, 'float64')
    """
    if not isinstance(net, Seq2Seq):
        raise TorchBackendError(
            f"run_seq2seq runs an encoder–decoder (Seq2Seq), got {type(net).__name__} {getattr(net, 'name', '?')!r}; "
            "use torch_backend.run or run_batch for a Network"
        )
    return _CompiledSeq2Seq(net, dtype=dtype, device=device, tie_rtol=tie_rtol).run(word, max_steps)
