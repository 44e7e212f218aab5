"""The torch backend's compiler: a :class:`~netproof.symbolic.ir.Network` as batched tensor code.

Owns :class:`CompiledNetwork` (each block of the IR compiled once to tensors for one dtype and
device; :meth:`~CompiledNetwork.encode` pads a batch of words, :meth:`~CompiledNetwork.forward`
evaluates it and reports every hardmax decision), its compiled pieces
(:class:`CompiledLayer`, :class:`CompiledHead`) and :func:`unsupported`, the reason a network is
not compiled. The semantics, the tie tolerance and the reports are described in
:mod:`netproof.symbolic.torch_backend`, the backend's public face. It imports the IR, the
evaluation loop's errors and length check (so that both refuse the same requests), the positional
features and :mod:`netproof.symbolic.torch_common`; torch comes from
:func:`~netproof.symbolic.torch_common.load_torch` when a network is compiled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, assert_never

from .errors import WordError
from .evaluation import UndefinedValueError, declared_length
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
    RelativeBias,
    RelativeKernel,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .positional import feature
from .recurrent_ir import RecurrentNetwork
from .torch_common import (
    MAX_TIE_LOCATIONS,
    TIE_EPS_FACTOR,
    Encoded,
    FloatBatch,
    TieLocation,
    Ties,
    TorchBackendError,
    check_dtype,
    load_torch,
    torch_device,
)
from .torch_grouped import KeyGroups, group_ids, grouped_head, key_groups, key_sources
from .torch_running import running_head, running_heads
from .words import tokenize

__all__ = [
    "ROW_ENTRIES",
    "SCORE_ENTRIES",
    "CompiledHead",
    "CompiledLayer",
    "CompiledNetwork",
    "refuse_kind",
    "unsupported",
]

SCORE_ENTRIES = 1 << 20
"""A chunk of words keeps a head's n × n score matrix (words × positions²) under this many entries:
8 MiB in float64, so that a head's scores, mask and selection stay in the CPU's caches. Measured
(benchmarks/torch_throughput.py, one thread): at n = 1000 a chunk of one word ran the 21 hardmax
heads of Dyck(8, 10) by their score matrices in half the time of a chunk of 16."""

ROW_ENTRIES = 1 << 18
"""A chunk of words keeps every other tensor (words × positions × width: the residual stream, an
FFN step, a head computed by key groups or running maxima) under this many entries: 2 MiB in
float64. Measured (one thread, n = 1000, the best of 3, on a loaded machine): Dyck(8, 10) with every
head by running maxima took 0.73–0.76 s for 16 words in chunks of 4 or 8 words, 0.86–0.88 s in chunks
of 2, 16 or 64, 1.10 s one word at a time; PARITY 0.15–0.17 s for 64 words in chunks of 8 to 64,
0.32 s one word at a time."""


# --------------------------------------------------------------------------- positional features


def _vector_features(torch: Any) -> dict[str, Callable[[Any, Any], Any]]:
    """The registered features as float64 tensor functions of i and n (tensors, broadcast)."""
    return {
        "1": lambda i, n: torch.ones_like(i * n),
        "i": lambda i, n: i + 0 * n,
        "n": lambda i, n: n + 0 * i,
        "i/n": lambda i, n: i / n,
        "1-i/n": lambda i, n: 1 - i / n,
        "1/n": lambda i, n: 1 / n + 0 * i,
        "1/i": lambda i, n: 1 / i + 0 * n,
        "1/i^2": lambda i, n: 1 / (i * i) + 0 * n,
        "cos(iπ)": lambda i, n: (1 - 2 * torch.remainder(i, 2)) + 0 * n,
        "I[i=0]": lambda i, n: (i == 0).to(i.dtype) + 0 * n,
        "I[i=1]": lambda i, n: (i == 1).to(i.dtype) + 0 * n,
        "I[i=n-1]": lambda i, n: (i == n - 1).to(i.dtype),
        "1/2^i": lambda i, n: torch.exp2(-i) + 0 * n,
    }


# --------------------------------------------------------------------------- compiled pieces


@dataclass(frozen=True)
class _Lin:
    """``y = x @ W.T + b`` over the current vector's columns (W zero where not read)."""

    W: Any
    b: Any

    def __call__(self, x: Any) -> Any:
        # one fused addmm (the bias added inside the product's pass, no second pass over y)
        return load_torch().nn.functional.linear(x, self.W, self.b)


@dataclass(frozen=True)
class _Step:
    kind: str  # "affine" | "relu" | "sigma" | "step" | "gelu" | "layernorm"
    lin: _Lin | None = None
    idx: Any = None  # layernorm: column indices (None: all)
    eps: float = 0.0
    where: str = ""


@dataclass(frozen=True)
class _Window:
    """A relative-position window over offsets −k..k (a kernel's columns or a bias's β) and its
    ``outside`` rule: ``zero`` (no term beyond ±k) or ``clip`` (the term at ±k)."""

    k: int
    clip: bool
    W: Any  # (2k+1) × q/k width for a kernel, (2k+1,) float64 for a bias
    largest: float  # max |entry|: the rounding tolerance of hardmax scores

    def index(self, torch: Any, L: int, device: Any) -> tuple[Any, Any]:
        """``idx[i, j]``, the window index of offset j − i (clamped), and ``inside[i, j]``,
        whether that offset gets a term at all (L × L)."""
        r = torch.arange(L, device=device)
        off = r[None, :] - r[:, None]
        idx = off.clamp(-self.k, self.k) + self.k
        inside = torch.ones_like(off, dtype=torch.bool) if self.clip else off.abs() <= self.k
        return idx, inside


@dataclass(frozen=True)
class _Relative:
    """A head's relative-position terms (Chang et al. 2021): ⟨q_i, W^C_{j−i}⟩, ⟨k_j, W^{C'}_{j−i}⟩
    and the bias β_{j−i}."""

    query_conv: _Window | None
    key_conv: _Window | None
    bias: _Window | None


@dataclass(frozen=True)
class CompiledHead:
    """One attention head compiled: its q, k, v maps as dense tensors, the softmax exponent's
    factors, the residual columns it writes and its relative-position terms."""

    head: Head
    q: _Lin
    k: _Lin
    v: _Lin
    kappa: tuple[float, bool, bool]  # softmax: coef·(1/√d)·(ln r or c), then times n?, times ln n?
    write: Any  # residual column indices of the value outputs (no W^O), else None
    unit: float = (
        1.0  # softmax: ln r or c, the factor of the bias β in the exponent (base^β = e^(unit·β))
    )
    relative: _Relative | None = None
    groups: KeyGroups | None = (
        None  # few distinct keys per word: computed by groups (torch_grouped)
    )
    running: bool = (
        False  # hardmax, the same query at every position: running maxima (torch_running)
    )


@dataclass(frozen=True)
class CompiledLayer:
    """One sublayer compiled: an attention layer's heads and W^O, an FFN's steps, or a
    convolution's columns and kernels, with the post layer norm's columns and eps."""

    sub: Sublayer
    kind: str  # "attention" | "ffn" | "convolution"
    heads: tuple[CompiledHead, ...] = ()
    conv: tuple[Any, Any, Any, int] | None = (
        None  # input columns, output columns, C × (2k+1) weights, k
    )
    out: _Lin | None = None  # W^O, mapping concat(head values) to the full residual vector
    steps: tuple[_Step, ...] = ()
    write: Any = None  # ffn: the residual columns its last affine writes
    ln_idx: Any = None
    ln_eps: float | None = None


def unsupported(net: object) -> str | None:
    """Why :func:`~netproof.symbolic.torch_backend.compile` refuses ``net``, or None when it
    compiles it: the torch backend runs transformer-style :class:`~netproof.symbolic.ir.Network` s;
    a recurrent network and an encoder–decoder run in their own interpreters (the message names
    it; an encoder–decoder also runs in floats, one word at a time, with
    :func:`~netproof.symbolic.torch_seq2seq.run_seq2seq`). Callers that iterate constructions report
    this reason instead of compiling."""
    name = getattr(net, "name", "?")
    if isinstance(net, RecurrentNetwork):
        return (
            f"network {name!r} is a RecurrentNetwork ({type(net.cell).__name__}), which the torch backend does not "
            "compile (it runs transformer-style Networks); run it exactly with symbolic.recurrent.run(net, word) "
            "(netproof run NAME WORD --backend exact or interval)"
        )
    if isinstance(net, Seq2Seq):
        return (
            f"network {name!r} is an encoder–decoder (Seq2Seq), which the torch backend does not compile (it runs "
            "transformer-style Networks); run it exactly with symbolic.seq2seq.run(net, word) "
            "(netproof run NAME WORD --backend exact or sympy)"
        )
    if not isinstance(net, Network):
        return f"{type(net).__name__} {name!r} is not a Network; the torch backend compiles symbolic.ir.Network only"
    return None


def refuse_kind(net: object) -> None:
    """Raise :class:`TorchBackendError` with :func:`unsupported`'s reason, if there is one."""
    reason = unsupported(net)
    if reason is not None:
        raise TorchBackendError(reason)


class CompiledNetwork:
    """A network compiled for one dtype and device: :meth:`encode` words, then :meth:`forward`."""

    net: Network
    _sources: dict[tuple[str, str], frozenset[str]]
    _running: frozenset[tuple[str, str]]

    def __init__(
        self,
        net: Network,
        *,
        dtype: str = "float64",
        device: str = "cpu",
        tie_rtol: float | None = None,
        grouped: bool = True,
        running: bool = True,
    ) -> None:
        refuse_kind(net)
        self._prepare(net, dtype, device, tie_rtol)
        if grouped:
            self._sources = key_sources(net)
        if running:
            self._running = running_heads(net)
        self._compile_embedding()
        self.layers = tuple(self._compile_layer(sub) for sub in net.layers)
        self._compile_readout()

    def entries_per_word(self, L: int) -> tuple[int, int]:
        """The largest tensors built per word of ``L`` positions, in entries: ``(scores, rows)``,
        the n × n score matrix of a head computed by it (L², or 0 where no head is), and the largest
        tensor over the positions otherwise: L · groups · (value dims + 1) for a head computed by
        key groups, L · (value dims + 8) for one computed by running maxima, L · width for the
        residual stream and every FFN step. :meth:`chunk_words` sizes chunks with them."""
        scores = 0
        rows = L * len(self.dims)
        for cl in self.layers:
            for ch in cl.heads:
                if ch.groups is not None and 2 * ch.groups.count <= L:
                    rows = max(rows, L * ch.groups.count * (ch.v.W.shape[0] + 1))
                elif ch.running:
                    rows = max(rows, L * (ch.v.W.shape[0] + 8))
                else:
                    scores = L * L
            for st in cl.steps:
                if st.lin is not None:
                    rows = max(rows, L * st.lin.W.shape[0])
        return scores, rows

    def chunk_words(self, L: int) -> int:
        """How many words of ``L`` positions to evaluate together: as many as keep a score matrix
        under :data:`SCORE_ENTRIES` entries and the other tensors under :data:`ROW_ENTRIES`
        (:meth:`entries_per_word`), at least one."""
        scores, rows = self.entries_per_word(L)
        size = ROW_ENTRIES // max(1, rows)
        if scores:
            size = min(size, SCORE_ENTRIES // scores)
        return max(1, size)

    def _prepare(
        self, net: Network | Seq2Seq, dtype: str, device: str, tie_rtol: float | None
    ) -> None:
        """Load torch, check the dtype and device, and set what every compiled block uses (the
        tie tolerance, the residual columns, the tensor rules of the positional features)."""
        torch = load_torch()
        check_dtype(dtype)
        self.torch = torch
        self.net = net  # type: ignore[assignment]
        self.dtype = dtype
        self.tdtype = getattr(torch, dtype)
        self.device = torch_device(torch, device)
        eps = torch.finfo(self.tdtype).eps
        self.tie_rtol = float(TIE_EPS_FACTOR * eps if tie_rtol is None else tie_rtol)
        self.dims = net.dims
        self.col = {d: c for c, d in enumerate(net.dims)}
        self._vec = _vector_features(torch)
        self._sources = {}  # key_sources: heads computed by key groups
        self._running = frozenset()  # running_heads: heads computed by running maxima

    # ------------------------------------------------------------------ tensors from rationals

    def _tensor(self, values: Any, where: str) -> Any:
        torch = self.torch
        try:
            t64 = torch.tensor(values, dtype=torch.float64, device=self.device)
        except OverflowError:
            raise TorchBackendError(
                f"{where}: a value is too large for a float; this network needs exact arithmetic (--backend exact)"
            ) from None
        t = t64.to(self.tdtype)
        if not bool(torch.isfinite(t).all()):
            worst = float(t64.abs().max())
            raise TorchBackendError(
                f"{where}: a value ({worst:.6g}) overflows {self.dtype} (largest {torch.finfo(self.tdtype).max:.6g}); use dtype='float64'"
            )
        return t

    def _lin(
        self, a: Affine, names: Sequence[str], where: str, rows: Sequence[str] | None = None
    ) -> _Lin:
        """``a`` as a dense map from the vector named ``names`` to ``rows`` (default: a's outputs;
        outputs not in ``rows`` are an error, rows that ``a`` does not write stay 0)."""
        index = {nm: c for c, nm in enumerate(names)}
        missing = [i for i in a.inputs if i not in index]
        if missing:
            raise TorchBackendError(
                f"{where} reads {', '.join(missing)}, which the vector it is applied to does not have "
                f"({' '.join(names)}); the network is malformed for the torch backend"
            )
        out_names = list(a.outputs) if rows is None else list(rows)
        out_index = {nm: r for r, nm in enumerate(out_names)}
        W = [[0.0] * len(names) for _ in out_names]
        b = [0.0] * len(out_names)
        for o, row, bias in zip(a.outputs, a.weights, a.bias, strict=True):
            if o not in out_index:
                raise TorchBackendError(
                    f"{where} writes {o!r}, which is not a residual dim; the torch backend cannot place it"
                )
            r = out_index[o]
            b[r] = float(bias)
            for i, w in zip(a.inputs, row, strict=True):
                W[r][index[i]] += float(w)
        return _Lin(
            self._tensor(W, where).reshape(len(out_names), len(names)), self._tensor(b, where)
        )

    def _cols(self, names: Sequence[str], where: str) -> Any:
        missing = [d for d in names if d not in self.col]
        if missing:
            raise TorchBackendError(
                f"{where} names {', '.join(missing)}, which are not residual dims"
            )
        return self.torch.tensor(
            [self.col[d] for d in names], dtype=self.torch.long, device=self.device
        )

    # ------------------------------------------------------------------ compile

    def _compile_embedding(self) -> None:
        torch = self.torch
        emb = self.net.embedding
        D = len(self.dims)
        match emb:
            case TokenEmbedding():
                tokens = [t for t, _ in emb.table]
                self.token_id = {t: k for k, t in enumerate(tokens)}
                table = [[Fraction(0)] * D for _ in tokens]
                for k, (_t, row) in enumerate(emb.table):
                    for d, v in row:
                        if d not in self.col:
                            raise TorchBackendError(
                                f"embedding row {_t!r} writes {d!r}, which is not a residual dim"
                            )
                        table[k][self.col[d]] += v
                self.table64 = torch.tensor(
                    [[float(v) for v in r] for r in table], dtype=torch.float64, device=self.device
                ).reshape(len(tokens), D)
                feats = sorted({f for _d, f, _c in emb.positional})
                for f in feats:
                    feature(f)  # an unknown name raises the registry's error
                self.features = tuple(feats)
                coef = [[0.0] * D for _ in feats]
                for d, f, c in emb.positional:
                    coef[feats.index(f)][self.col[d]] += float(c)
                self.feat_coef64 = torch.tensor(
                    coef, dtype=torch.float64, device=self.device
                ).reshape(len(feats), D)
            case FlatEmbedding():
                self.token_id = {s: k for k, s in enumerate(emb.alphabet)}
                values = dict(emb.values)
                self.flat_values64 = torch.tensor(
                    [float(values[s]) for s in emb.alphabet],
                    dtype=torch.float64,
                    device=self.device,
                )
                self.flat_cols = self._cols(emb.dims, "FlatEmbedding")
            case _:
                assert_never(emb)

    def _compile_layer(self, sub: Sublayer) -> CompiledLayer:
        block = sub.block
        ln_idx = None
        ln_eps = None
        if sub.post_ln is not None:
            ln_eps = float(sub.post_ln.eps)
            if sub.post_ln.over is not None:
                ln_idx = self._cols(sub.post_ln.over, f"layer norm after {sub.name!r}")
        match block:
            case AttentionLayer():
                heads = []
                for h in block.heads:
                    where = f"attention {block.name!r} head {h.name!r}"
                    q = self._lin(h.query, self.dims, f"{where} query")
                    k = self._lin(h.key, self.dims, f"{where} key")
                    v = self._lin(h.value, self.dims, f"{where} value")
                    s = h.scale
                    coef = float(s.coef) / (math.sqrt(s.sqrt_d) if s.sqrt_d is not None else 1.0)
                    unit = 1.0
                    if isinstance(h.normalizer, Softmax):
                        nz = h.normalizer
                        unit = math.log(nz.r) if nz.r is not None else float(nz.c)  # type: ignore[arg-type]
                        coef *= unit
                    write = (
                        None
                        if block.output is not None
                        else self._cols(h.value.outputs, f"{where} value")
                    )
                    relative = None
                    if h.relative:
                        relative = _Relative(
                            self._window(h.query_conv, f"{where} query_conv"),
                            self._window(h.key_conv, f"{where} key_conv"),
                            self._window(h.relative_bias, f"{where} relative_bias"),
                        )
                    groups = (
                        key_groups(self.net, h, sub.name, self._sources) if self._sources else None
                    )
                    running = (sub.name, h.name) in self._running
                    heads.append(
                        CompiledHead(
                            h,
                            q,
                            k,
                            v,
                            (coef, s.times_n, s.log_n),
                            write,
                            unit,
                            relative,
                            groups,
                            running,
                        )
                    )
                out = None
                if block.output is not None:
                    concat = [o for h in block.heads for o in h.value.outputs]
                    out = self._lin(
                        block.output, concat, f"attention {block.name!r} output W^O", rows=self.dims
                    )
                return CompiledLayer(
                    sub, "attention", heads=tuple(heads), out=out, ln_idx=ln_idx, ln_eps=ln_eps
                )
            case FFN():
                names: Sequence[str] = self.dims
                steps: list[_Step] = []
                last_affine = max(
                    (i for i, st in enumerate(block.steps) if isinstance(st, Affine)), default=-1
                )
                write = None
                for idx, step in enumerate(block.steps):
                    where = f"ffn {block.name!r} step [{idx}]"
                    match step:
                        case Affine():
                            if idx == last_affine:
                                lin = self._lin(step, names, where, rows=self.dims)
                                write = self._cols(step.outputs, where)
                            else:
                                lin = self._lin(step, names, where)
                            steps.append(_Step("affine", lin=lin, where=where))
                            names = step.outputs
                        case Activation(kind=kind):
                            steps.append(_Step(kind, where=where))
                        case LayerNorm():
                            idxs = None
                            if step.over is not None:
                                index = {nm: c for c, nm in enumerate(names)}
                                missing = [o for o in step.over if o not in index]
                                if missing:
                                    raise TorchBackendError(
                                        f"{where} normalizes {', '.join(missing)}, which the previous step does not write"
                                    )
                                idxs = self.torch.tensor(
                                    [index[o] for o in step.over],
                                    dtype=self.torch.long,
                                    device=self.device,
                                )
                            steps.append(
                                _Step("layernorm", idx=idxs, eps=float(step.eps), where=where)
                            )
                        case _:
                            assert_never(step)
                return CompiledLayer(
                    sub, "ffn", steps=tuple(steps), write=write, ln_idx=ln_idx, ln_eps=ln_eps
                )
            case Convolution():
                where = f"convolution {block.name!r}"
                cols_in = self._cols(block.inputs, f"{where} inputs")
                cols_out = self._cols(block.outputs, f"{where} outputs")
                rows = [[float(w) for w in row] for row in block.kernels]
                if (
                    block.normalizer is not None
                ):  # Wu et al.: each row softmax-normalized over its offsets
                    nz = block.normalizer
                    unit = math.log(nz.r) if nz.r is not None else float(nz.c)  # type: ignore[arg-type]
                    t64 = self.torch.tensor(rows, dtype=self.torch.float64, device=self.device)
                    rows = self.torch.softmax(t64 * unit, dim=-1).tolist()
                if len(rows) == 1:  # lightweight: one row shared by every channel
                    rows = rows * len(block.inputs)
                W = self._tensor(rows, f"{where} kernels").reshape(
                    len(block.inputs), 2 * block.k + 1
                )
                return CompiledLayer(
                    sub,
                    "convolution",
                    conv=(cols_in, cols_out, W, block.k),
                    ln_idx=ln_idx,
                    ln_eps=ln_eps,
                )
            case _:
                assert_never(block)

    def _window(self, w: RelativeKernel | RelativeBias | None, where: str) -> _Window | None:
        """A relative kernel (W^C: (2k+1) × q/k width, in the dtype) or bias (β: 2k+1, float64)."""
        match w:
            case None:
                return None
            case RelativeKernel():
                values = [[float(x) for x in col] for col in w.columns]
                width = len(w.columns[0])
                W = self._tensor(values, where).reshape(len(w.columns), width)
                largest = max((abs(x) for col in values for x in col), default=0.0)
                return _Window(w.k, w.outside == "clip", W, largest)
            case RelativeBias():
                beta = [float(b) for b in w.beta]
                self._tensor(beta, where)  # a β the dtype cannot hold is refused here
                B = self.torch.tensor(beta, dtype=self.torch.float64, device=self.device)
                return _Window(w.k, w.outside == "clip", B, max(abs(b) for b in beta))
            case _:
                assert_never(w)

    def _compile_readout(self) -> None:
        r = self.net.readout
        match r:
            case Classifier():
                self.logit = self._lin(r.logit, self.dims, "classifier logit")
            case NextSymbols():
                self.score_cols = self._cols([d for _s, d in r.scores], "next-symbol readout")
                self.readout_kappa = None
                if r.softmax is not None:
                    nz = r.softmax
                    self.readout_kappa = math.log(nz.r) if nz.r is not None else float(nz.c)  # type: ignore[arg-type]
                self.threshold = float(r.threshold)
            case _:
                assert_never(r)

    # ------------------------------------------------------------------ encode

    def encode(self, words: Sequence[str | Sequence[str]], *, length: int | None = None) -> Encoded:
        """Token ids of every word (special tokens added), padded to the longest, with each word's n."""
        torch = self.torch
        net = self.net
        emb = net.embedding
        symbols = tuple(tokenize(net.alphabet, w) for w in words)
        match emb:
            case TokenEmbedding():
                seqs = [(*emb.prefix, *s, *emb.suffix) for s in symbols]
                counts = tuple(len(s) for s in seqs)
                ns = (
                    tuple(counts)
                    if length is None
                    else tuple(declared_length(net, length, c) for c in counts)
                )
                for f in self.features:  # features undefined at some position raise the exact error
                    if f not in self._vec or f in ("1/i", "1/i^2"):
                        for c, n in zip(counts, ns, strict=True):
                            if c:
                                feature(f)(emb.index_base, n)
                L = max(counts, default=0)
                ids = [[self.token_id[t] for t in s] + [0] * (L - len(s)) for s in seqs]
            case FlatEmbedding():
                if length is not None:
                    raise WordError(
                        f"length={length} applies to token networks; {net.name!r} reads a fixed-length word"
                    )
                for s in symbols:
                    if len(s) != emb.length:
                        raise WordError(
                            f"this network reads words of length exactly {emb.length}, got "
                            f"{len(s)} symbols; build it with n={len(s)}"
                        )
                counts = tuple(1 for _ in symbols)
                ns = counts
                L = emb.length
                ids = [[self.token_id[x] for x in s] for s in symbols]
            case _:
                assert_never(emb)
        B = len(symbols)
        id_t = torch.tensor(ids, dtype=torch.long, device=self.device).reshape(B, L)
        Lv = L if isinstance(emb, TokenEmbedding) else 1
        count_t = torch.tensor(counts, dtype=torch.long, device=self.device)
        valid = torch.arange(Lv, device=self.device)[None, :] < count_t[:, None]
        n_t = torch.tensor(ns, dtype=torch.float64, device=self.device)
        extra = None
        if isinstance(emb, TokenEmbedding):
            slow = [f for f in self.features if f not in self._vec]
            if slow:
                vals = [
                    [
                        [float(feature(f)(emb.index_base + t, n)) if t < c else 0.0 for f in slow]
                        for t in range(L)
                    ]
                    for c, n in zip(counts, ns, strict=True)
                ]
                extra = torch.tensor(vals, dtype=torch.float64, device=self.device).reshape(
                    B, L, len(slow)
                )
        return Encoded(symbols, id_t, valid, counts, ns, n_t, extra)

    # ------------------------------------------------------------------ forward

    def _embed(self, enc: Encoded) -> Any:
        torch = self.torch
        emb = self.net.embedding
        B = len(enc)
        match emb:
            case TokenEmbedding():
                x = self.table64[enc.ids]  # B, L, D
                if self.features:
                    L = enc.ids.shape[1]
                    i = (torch.arange(L, device=self.device, dtype=torch.float64) + emb.index_base)[
                        None, :
                    ]
                    n = enc.n_tensor[:, None]
                    cols = []
                    slow = 0
                    for f in self.features:
                        if f in self._vec:
                            cols.append(self._vec[f](i, n).expand(B, L))
                        else:
                            cols.append(enc.extra[:, :, slow])
                            slow += 1
                    x = x + torch.stack(cols, dim=-1) @ self.feat_coef64
                x = x.to(self.tdtype)
            case FlatEmbedding():
                x = torch.zeros(B, 1, len(self.dims), dtype=self.tdtype, device=self.device)
                x[:, 0, self.flat_cols] = self.flat_values64[enc.ids].to(self.tdtype)
            case _:
                assert_never(emb)
        return torch.where(
            enc.valid[..., None], x, torch.zeros((), dtype=self.tdtype, device=self.device)
        )

    def _layernorm(self, x: Any, idx: Any, eps: float) -> Any:
        sub = x if idx is None else x[..., idx]
        mean = sub.mean(dim=-1, keepdim=True)
        centered = sub - mean
        var = (centered * centered).mean(dim=-1, keepdim=True)
        normed = centered / self.torch.sqrt(var + eps)
        if idx is None:
            return normed
        out = x.clone()
        out[..., idx] = normed
        return out

    def _forbidden(self, mask: str, enc: Encoded, cache: dict[str, Any]) -> Any:
        """Where the mask or the padding forbids key j for query i (boolean, words × queries ×
        keys, or words × 1 × keys for ``none``): the scores there are set to −inf. Built once per
        forward and mask; a boolean mask is an eighth of the memory traffic of an additive float64
        one."""
        key = f"forbidden {mask}"
        hit = cache.get(key)
        if hit is not None:
            return hit
        torch = self.torch
        L = enc.ids.shape[1] if isinstance(self.net.embedding, TokenEmbedding) else 1
        keys = ~enc.valid[:, None, :]
        if mask == "none":
            out = keys
        else:
            r = torch.arange(L, device=self.device)
            i, j = r[:, None], r[None, :]
            if mask == "causal":
                bad = j > i
            elif mask == "strict_causal":
                bad = j >= i
            elif mask == "anticausal":
                bad = j < i
            elif mask == "strict_anticausal":
                bad = j <= i
            else:  # pragma: no cover - Head validates mask
                raise TorchBackendError(f"unknown mask {mask!r}")
            out = bad[None, :, :] | keys
        cache[key] = out
        return out

    def _nonempty(self, mask: str, enc: Encoded) -> Any:
        """Queries (words × positions) whose masked set of keys is not empty."""
        torch = self.torch
        if mask in ("none", "causal", "anticausal"):
            return enc.valid
        t = torch.arange(enc.valid.shape[1], device=self.device)[None, :]
        if mask == "strict_causal":
            return enc.valid & (t >= 1)
        count = torch.tensor(enc.tokens, dtype=torch.long, device=self.device)[:, None]
        return enc.valid & (t < count - 1)

    def _window_index(self, win: _Window, L: int, cache: dict[str, Any]) -> tuple[Any, Any]:
        key = f"window {win.k} {'clip' if win.clip else 'zero'}"
        hit = cache.get(key)
        if hit is None:
            hit = win.index(self.torch, L, self.device)
            cache[key] = hit
        return hit

    def _relative_scores(self, rel: _Relative, Q: Any, K: Any, cache: dict[str, Any]) -> Any:
        """⟨q_i, W^C_{j−i}⟩ + ⟨k_j, W^{C'}_{j−i}⟩ (words × queries × keys), 0 beyond ±k under
        ``outside="zero"``, the term at ±k under ``clip``."""
        torch = self.torch
        B, L = Q.shape[0], Q.shape[1]
        total = torch.zeros(B, L, L, dtype=Q.dtype, device=self.device)
        zero = torch.zeros((), dtype=Q.dtype, device=self.device)
        for win, vec, by_key in ((rel.query_conv, Q, False), (rel.key_conv, K, True)):
            if win is None:
                continue
            idx, inside = self._window_index(win, L, cache)
            P = vec @ win.W.T  # words × positions × offsets: ⟨v_t, W_r⟩ for every offset r
            if by_key:  # [b, i, j] = P[b, j, idx[i, j]]
                T = torch.gather(P.transpose(1, 2), 1, idx.expand(B, L, L))
            else:  # [b, i, j] = P[b, i, idx[i, j]]
                T = torch.gather(P, 2, idx.expand(B, L, L))
            total = total + torch.where(inside, T, zero)
        return total

    def _relative_bias(self, win: _Window, L: int, cache: dict[str, Any]) -> Any:
        """β_{j−i} as a queries × keys float64 matrix (0 beyond ±k under ``outside="zero"``)."""
        idx, inside = self._window_index(win, L, cache)
        return self.torch.where(
            inside, win.W[idx], self.torch.zeros((), dtype=win.W.dtype, device=self.device)
        )

    def _relative_magnitude(
        self, rel: _Relative, Q: Any, K: Any, enc: Encoded, magnitude: Any
    ) -> Any:
        """A bound on the terms of a relative head's unscaled score (words × queries × 1): the dot
        product's, plus ‖q_i‖₁·max|W^C| and max_j ‖k_j‖₁·max|W^{C'}|."""
        torch = self.torch
        zero = torch.zeros((), dtype=K.dtype, device=self.device)
        if rel.query_conv is not None:
            magnitude = magnitude + Q.abs().sum(dim=-1, keepdim=True) * rel.query_conv.largest
        if rel.key_conv is not None:
            k1 = torch.where(enc.valid, K.abs().sum(dim=-1), zero).amax(dim=-1)
            magnitude = magnitude + k1[:, None, None] * rel.key_conv.largest
        return magnitude

    def _convolution(self, cl: CompiledLayer, x: Any) -> Any:
        """y[outputs[c]]_i = Σ_{|j−i| ≤ k} w_{j−i, c}·x[inputs[c]]_j, zero padding (padded
        positions of the batch hold 0, so a shorter word is zero-padded too)."""
        torch = self.torch
        assert cl.conv is not None
        cin, cout, W, k = cl.conv
        X = torch.nn.functional.pad(
            x[..., cin], (0, 0, k, k)
        )  # words × (positions + 2k) × channels
        windows = X.unfold(1, 2 * k + 1, 1)  # words × positions × channels × offsets −k..k
        o = torch.zeros_like(x)
        o[..., cout] = (windows * W).sum(dim=-1)
        return o

    def _tolerance(self, Q: Any, K: Any, enc: Encoded) -> Any:
        """``‖q_i‖₁ · max_j ‖k_j‖_∞`` (words × queries × 1): the magnitude of a hardmax head's score terms."""
        torch = self.torch
        krow = (
            K.abs().amax(dim=-1) if K.shape[-1] else K.new_zeros(K.shape[:-1])
        )  # a head with no q/k dims
        kmax = torch.where(
            enc.valid, krow, torch.zeros((), dtype=K.dtype, device=self.device)
        ).amax(dim=-1)
        return Q.abs().sum(dim=-1, keepdim=True) * kmax[:, None, None]

    def _head(
        self,
        layer: str,
        ch: CompiledHead,
        x: Any,
        enc: Encoded,
        stats: list[Any] | None,
        cache: dict[str, Any],
        paths: set[tuple[str, str, str]] | None = None,
    ) -> Any:
        torch = self.torch
        paths = (
            set() if paths is None else paths
        )  # (layer, head, path) of every head run: FloatBatch.paths
        h = ch.head
        Q, K, V = ch.q(x), ch.k(x), ch.v(x)
        if h.empty == "error" and h.mask in ("strict_causal", "strict_anticausal"):
            for w, c in enumerate(enc.tokens):
                if c:
                    t = 0 if h.mask == "strict_causal" else c - 1
                    i = t + (
                        self.net.embedding.index_base
                        if isinstance(self.net.embedding, TokenEmbedding)
                        else 0
                    )
                    raise UndefinedValueError(
                        f"attention {layer!r} head {h.name!r}: position {i} attends to an empty set under mask "
                        f"{h.mask!r} and the head's empty rule is 'error' (word {w} of the batch)"
                    )
        if ch.groups is not None and Q.shape[1] >= 2 * ch.groups.count:
            paths.add((layer, h.name, "groups"))
            return self._grouped(layer, ch, Q, K, V, enc, stats, cache)
        if ch.running and V.dtype in (torch.float64, torch.float32):
            nonempty = self._nonempty(h.mask, enc)
            tol = self.tie_rtol * self._tolerance(Q, K, enc)
            res = running_head(torch, h, Q, K, V, enc.valid, nonempty, tol, stats is not None)
            if res is not None:
                paths.add((layer, h.name, "running"))
                if stats is not None and res.gap is not None:
                    stats.append((layer, h.name, res.gap, res.near))
                return torch.where(
                    nonempty[..., None], res.out, torch.zeros((), dtype=V.dtype, device=self.device)
                )
        paths.add((layer, h.name, "scores"))
        S = Q @ K.transpose(1, 2)  # words × queries × keys
        if h.scoring == "neg_abs_dot":
            S = S.abs_().neg_()
        nonempty = self._nonempty(h.mask, enc)
        zero = torch.zeros((), dtype=V.dtype, device=self.device)
        rel = ch.relative
        beta = None
        if rel is not None:
            S = S + self._relative_scores(rel, Q, K, cache)
            if rel.bias is not None:
                beta = self._relative_bias(rel.bias, S.shape[-1], cache).to(S.dtype)
        match h.normalizer:
            case Hardmax(tie=tie):
                magnitude = self._tolerance(Q, K, enc)
                if rel is not None:
                    magnitude = self._relative_magnitude(rel, Q, K, enc, magnitude)
                if beta is not None:
                    assert rel is not None and rel.bias is not None
                    # scale·score + β (Head allows only a rational scale here: coef, times n)
                    factor = torch.full(
                        (len(enc),), float(h.scale.coef), dtype=torch.float64, device=self.device
                    )
                    if h.scale.times_n:
                        factor = factor * enc.n_tensor
                    factor = factor.to(S.dtype)[:, None, None]
                    S = S * factor + beta
                    magnitude = magnitude * factor.abs() + rel.bias.largest
                tol = self.tie_rtol * magnitude
                S.masked_fill_(self._forbidden(h.mask, enc, cache), float("-inf"))
                best = S.amax(dim=-1, keepdim=True)
                sel = best - tol <= S  # rows with no allowed key select garbage: zeroed below
                L = S.shape[-1]
                if tie == "average":
                    ones = torch.ones(*V.shape[:-1], 1, dtype=V.dtype, device=self.device)
                    summed = sel.to(V.dtype) @ torch.cat([V, ones], dim=-1)
                    cnt = summed[..., -1:]
                    out = summed[..., :-1] / cnt.clamp(min=1)
                else:
                    ar = torch.arange(L, device=self.device)
                    if tie == "leftmost":
                        pick = torch.where(sel, ar, L).amin(dim=-1)
                    else:
                        pick = torch.where(sel, ar, -1).amax(dim=-1)
                    pick = pick.clamp(0, max(L - 1, 0))
                    out = torch.gather(V, 1, pick[..., None].expand(-1, -1, V.shape[-1]))
                if stats is not None:
                    # One pass: the best score strictly below the maximum. Above best − tol it is
                    # a near tie (selected, not equal); otherwise it is the best unselected score.
                    inf = torch.tensor(float("inf"), dtype=torch.float64, device=self.device)
                    second = torch.where(best > S, S, float("-inf")).amax(dim=-1)
                    best_q = best.squeeze(-1)
                    gap = torch.where(nonempty, (best_q - second).to(torch.float64), inf)
                    near = (second >= best_q - tol.squeeze(-1)) & nonempty
                    stats.append((layer, h.name, gap, near))
            case Softmax():
                coef, times_n, log_n = ch.kappa
                kappa = torch.full((len(enc),), coef, dtype=torch.float64, device=self.device)
                if times_n:
                    kappa = kappa * enc.n_tensor
                if log_n:
                    kappa = kappa * torch.log(enc.n_tensor)
                S.mul_(kappa.to(S.dtype)[:, None, None])
                if beta is not None:  # base^(scale·score + β) = e^(κ·score + (ln r or c)·β)
                    S.add_(beta * ch.unit)
                S.masked_fill_(self._forbidden(h.mask, enc, cache), float("-inf"))
                out = torch.softmax(S, dim=-1) @ V  # rows with no allowed key are NaN: zeroed below
            case _:
                assert_never(h.normalizer)
        return torch.where(nonempty[..., None], out, zero)

    def _grouped(
        self,
        layer: str,
        ch: CompiledHead,
        Q: Any,
        K: Any,
        V: Any,
        enc: Encoded,
        stats: list[Any] | None,
        cache: dict[str, Any],
    ) -> Any:
        """Head ``ch`` by key groups (:func:`~netproof.symbolic.torch_grouped.grouped_head`), with the
        tolerance, exponent and statistics of the n × n path."""
        torch = self.torch
        h = ch.head
        kg = ch.groups
        assert kg is not None
        key = f"groups {kg}"
        gid = cache.get(key)
        if gid is None:
            base = (
                self.net.embedding.index_base
                if isinstance(self.net.embedding, TokenEmbedding)
                else 0
            )
            gid = group_ids(torch, kg, enc.ids, enc.n_tensor, base)
            cache[key] = gid
        nonempty = self._nonempty(h.mask, enc)
        kappa = tol = None
        if isinstance(h.normalizer, Hardmax):
            tol = self.tie_rtol * self._tolerance(Q, K, enc)
        else:
            coef, times_n, log_n = ch.kappa
            kappa = torch.full((len(enc),), coef, dtype=torch.float64, device=self.device)
            if times_n:
                kappa = kappa * enc.n_tensor
            if log_n:
                kappa = kappa * torch.log(enc.n_tensor)
        res = grouped_head(
            torch, h, Q, K, V, gid, kg.count, enc.valid, nonempty, kappa, tol, stats is not None
        )
        if stats is not None and res.gap is not None:
            stats.append((layer, h.name, res.gap, res.near))
        return torch.where(
            nonempty[..., None], res.out, torch.zeros((), dtype=V.dtype, device=self.device)
        )

    def _apply(
        self,
        cl: CompiledLayer,
        x: Any,
        enc: Encoded,
        stats: list[Any] | None,
        cache: dict[str, Any],
        paths: set[tuple[str, str, str]] | None = None,
    ) -> Any:
        torch = self.torch
        sub = cl.sub
        zero = torch.zeros((), dtype=self.tdtype, device=self.device)
        if cl.kind == "attention":
            parts = [self._head(sub.name, ch, x, enc, stats, cache, paths) for ch in cl.heads]
            if cl.out is not None:
                cat = torch.cat(parts, dim=-1) if parts else x.new_zeros(x.shape[0], x.shape[1], 0)
                o = cl.out(cat)
            else:  # each head adds into the columns it writes (parallel heads write disjoint ones)
                o = x.clone() if sub.residual else torch.zeros_like(x)
                for ch, p in zip(cl.heads, parts, strict=True):
                    if sub.residual:
                        o[..., ch.write] += p
                    else:
                        o[..., ch.write] = p
                x = o if sub.residual else x
        elif cl.kind == "convolution":
            o = self._convolution(cl, x)
        else:
            if not cl.steps:
                o = torch.zeros_like(x)
            else:
                y = x
                for st in (
                    cl.steps
                ):  # y is a tensor of this FFN's own after its first step: activations act in place
                    if st.kind == "affine":
                        assert st.lin is not None
                        y = st.lin(y)
                    elif st.kind == "relu":
                        y = torch.relu(y) if y is x else y.relu_()
                    elif st.kind == "sigma":
                        y = torch.clamp(y, 0, 1) if y is x else y.clamp_(0, 1)
                    elif st.kind == "step":
                        y = (y > 0).to(y.dtype)
                    elif st.kind == "gelu":
                        y = torch.nn.functional.gelu(y)
                    elif st.kind == "layernorm":
                        y = self._layernorm(y, st.idx, st.eps)
                    else:  # pragma: no cover - Activation validates kind; a new kind must be added here
                        raise TorchBackendError(
                            f"{st.where}: the torch backend does not evaluate the FFN step {st.kind!r}"
                        )
                o = y
        if o is not x:
            x = x + o if sub.residual else o
        if cl.ln_eps is not None:
            x = self._layernorm(x, cl.ln_idx, cl.ln_eps)
        return (
            x if cache.get("every position valid") else torch.where(enc.valid[..., None], x, zero)
        )

    def forward(self, enc: Encoded, *, keep_states: bool = False, stats: bool = True) -> FloatBatch:
        """Evaluate an encoded batch: pure tensor work (loops over layers and heads only).

        ``stats=False`` skips the hardmax gap and tie bookkeeping (for timing the bare network)."""
        torch = self.torch
        x = self._embed(enc)
        kept = [("input", x)] if keep_states else None
        collected: list[Any] | None = [] if (stats or keep_states) else None
        cache: dict[str, Any] = {
            "every position valid": bool(enc.valid.all())
        }  # no padding to zero
        paths: set[tuple[str, str, str]] = set()
        for cl in self.layers:
            x = self._apply(cl, x, enc, collected, cache, paths)
            if kept is not None:
                kept.append((cl.sub.name, x))
        r = self.net.readout
        B = len(enc)
        logits = None
        allowed = None
        accepted: tuple[bool | None, ...]
        match r:
            case Classifier():
                pos = []
                for c in enc.tokens:
                    t = r.position if r.position >= 0 else c + r.position
                    if not 0 <= t < c:
                        raise WordError(f"readout position {r.position} is outside the {c} tokens")
                    pos.append(t)
                idx = torch.tensor(pos, dtype=torch.long, device=self.device)
                rows = x[torch.arange(B, device=self.device), idx] if B else x[:, 0]
                logits = (
                    self.logit(rows)[:, 0]
                    if B
                    else torch.zeros(0, dtype=self.tdtype, device=self.device)
                )
                margin_t = logits.abs().to(torch.float64)
                # |logit| within the rounding bound of its own sum: the float sign is no evidence
                # (the residual row's largest entry stands for the cancellations upstream)
                scale = rows.abs().amax(dim=-1) if rows.shape[-1] else rows.new_zeros(B)
                tol = self.tie_rtol * (scale * self.logit.W.abs().sum() + self.logit.b.abs()[0])
                ok = (logits > 0).tolist()
                tol64 = tol.to(torch.float64)
                bad = (torch.isnan(logits) | ((margin_t <= tol64) & (margin_t > 0))).tolist()
                undecided = sum(bad)
                accepted = tuple(None if b else bool(a) for a, b in zip(ok, bad, strict=True))
            case NextSymbols():
                values = x[..., self.score_cols]
                if self.readout_kappa is not None:
                    values = torch.softmax(values * self.readout_kappa, dim=-1)
                allowed = values >= self.threshold
                near = (values - self.threshold).abs() <= self.tie_rtol * max(
                    1.0, abs(self.threshold)
                )
                undecided = int((near & enc.valid[..., None]).sum())
                margin_t = torch.where(
                    enc.valid[..., None],
                    (values - self.threshold).abs().to(torch.float64),
                    torch.tensor(float("inf"), dtype=torch.float64, device=self.device),
                )
                accepted = tuple(None for _ in range(B))
            case _:
                assert_never(r)
        margin = float(margin_t.min()) if margin_t.numel() else math.inf
        min_gap = math.inf
        ties = Ties(0, ())
        gaps = None
        if collected:
            min_gap = float(
                torch.stack(
                    [
                        g.min() if g.numel() else g.new_tensor(math.inf)
                        for _l, _h, g, _n in collected
                    ]
                ).min()
            )
            counts = [int(nr.sum()) for _l, _h, _g, nr in collected]
            first: list[TieLocation] = []
            base = (
                self.net.embedding.index_base
                if isinstance(self.net.embedding, TokenEmbedding)
                else 0
            )
            for (layer, head, _g, nr), c in zip(collected, counts, strict=True):
                if c and len(first) < MAX_TIE_LOCATIONS:
                    for w, t in torch.nonzero(nr)[: MAX_TIE_LOCATIONS - len(first)].tolist():
                        first.append(TieLocation(w, layer, head, t + base))
            ties = Ties(sum(counts), tuple(first))
            if keep_states:
                gaps = tuple((layer, head, g) for layer, head, g, _n in collected)
        return FloatBatch(
            network=self.net,
            words=enc.words,
            tokens=enc.tokens,
            n=enc.n,
            logits=logits,
            accepted=accepted,
            allowed=allowed,
            min_gap=min_gap,
            unresolved_ties=ties,
            readout_margin=margin,
            readout_undecided=undecided,
            dtype=self.dtype,
            device=str(self.device),
            states=tuple(kept) if kept is not None else None,
            gaps=gaps,
            index_base=self.net.embedding.index_base
            if isinstance(self.net.embedding, TokenEmbedding)
            else 0,
            paths=tuple(sorted(paths)),
        )

    def __call__(
        self,
        words: Sequence[str | Sequence[str]],
        *,
        length: int | None = None,
        keep_states: bool = False,
    ) -> FloatBatch:
        return self.forward(self.encode(words, length=length), keep_states=keep_states)
