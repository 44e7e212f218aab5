"""The torch backend: any network of the IR compiled to batched float tensor code (evidence, not proof).

:func:`compile` turns a :class:`~netproof.symbolic.ir.Network` into a :class:`CompiledNetwork` whose
:meth:`~CompiledNetwork.forward` evaluates a whole batch of words at once: words of different
lengths are padded (padded keys are masked, every word keeps its own ``n``), float64 by default,
float32 / float16 / bfloat16 on request, on ``device="cpu"`` or ``"cuda"``. There is no code per
construction: every block of the IR has one tensor rule, and the semantics are those of
:mod:`netproof.symbolic.evaluation` (special tokens, ``index_base``, the positional features of
:mod:`netproof.symbolic.positional`, a prefix of a declared ``length``, empty masked sets, heads with and
without ``W^O``, sublayers without residual, layer norms with ``eps`` and ``over``, softmax with
base ``r`` or ``e^c``, ``dot`` / ``neg_abs_dot`` scoring, every :class:`~netproof.symbolic.ir.Scale`,
relative-position heads (the bias β_{j−i} added after the scale, the query and key kernels
W^C, W^{C'}, ``outside`` zero or clip, under hardmax and softmax), :class:`~netproof.symbolic.ir.Convolution`
blocks (lightweight or depthwise, zero padding at each word's own ends, softmax-normalized rows),
:class:`~netproof.symbolic.ir.Classifier` at position 0 or −1, the :class:`~netproof.symbolic.ir.NextSymbols`
readout with and without softmax, flat embeddings). An encoder–decoder
(:class:`~netproof.symbolic.ir.Seq2Seq`) is not compiled for batches: :func:`run_seq2seq` runs one word
with the compiled blocks, one decoder step at a time, with the semantics of
:func:`netproof.symbolic.seq2seq.run`.

**Hardmax in floats.** The exact interpreter compares scores exactly; here two scores are taken
as tied when they differ by at most ``tie_rtol · ‖q_i‖₁ · max_j ‖k_j‖_∞`` (a bound on the
magnitude of every term of the dot products, so the rounding error of the scores is a small
multiple of eps times it); ``tie_rtol`` defaults to ``32 · eps`` of the dtype. The maximizers
are every allowed key within that tolerance of the best score; ``average`` weights them as
``(mask @ V) / count`` (sum, then divide), ``leftmost`` / ``rightmost`` take the smallest /
largest of them. Every hardmax decision is reported: :attr:`FloatBatch.min_gap` is the smallest
gap met between the maximal score of a query and its closest allowed score strictly below it
(the best unselected score; or, at an unresolved tie, the near-tied score itself, so that a gap
at most the tolerance means the run met a tie it could not resolve), and
:attr:`FloatBatch.unresolved_ties` counts the (word, head, query) rows where a score was taken
as tied without being equal in floats (the float run cannot tell whether they are equal in
exact arithmetic). The statistics cost one more pass over the scores per hardmax head;
``forward(enc, stats=False)`` skips them. A hardmax head ignores its positive :class:`~netproof.symbolic.ir.Scale`, as the exact
interpreter does, except with a relative bias, where it compares scale·score + β. For a
relative head the magnitude in the tolerance also counts ‖q_i‖₁·max|W^C| and
max_j ‖k_j‖₁·max|W^{C'}| (times the scale, plus max|β|, with a bias).

**Few distinct keys, one query.** A head whose keys depend only on the token and on two-valued
positional features (PARITY's ``cos(iπ)``, FIRST's ``I[i=1]``: found from the IR before running,
see :mod:`netproof.symbolic.torch_grouped`) is computed per key group with running sums over its
mask, in O(n · groups) time and memory; a hardmax head whose query is the same at every position
(Dyck's ``q = 1``: also found from the IR, see :mod:`netproof.symbolic.torch_running`) by running
maxima of its key scores, in O(n log n); both with the same tolerance and statistics. The other
heads build their n × n score matrix. ``compile(net, grouped=False, running=False)`` computes every
head by its score matrix; :attr:`FloatBatch.paths` says how each head was computed.

**Undefined values.** Where the exact interpreter raises ``UndefinedValueError`` for a value the
readout reads (a layer norm of a constant vector with ``eps = 0``), the float run yields NaN and
the word's verdict is ``None``; an empty masked set under ``empty="error"`` raises the exact
interpreter's error. torch is imported when a function is called: importing this module does
not import it, and without torch the call raises :class:`~netproof.symbolic.errors.MissingExtraError`
naming the ``torch`` extra.

This module is the backend's public face and its batch runner: :func:`compile`, :func:`run_batch`
(words of similar lengths in chunks, the chunks' results merged back in the order given) and
:func:`run`. The compiler is :mod:`netproof.symbolic.torch_compiler`, the encoder–decoder run
:mod:`netproof.symbolic.torch_seq2seq`, and what they share (loading torch, dtypes and devices,
:class:`TorchBackendError`, :class:`FloatBatch` and the other results)
:mod:`netproof.symbolic.torch_common`; this module imports the three and re-exports their public
names.

>>> from netproof.constructions.chiang2022 import parity_transformer
>>> out = run_batch(parity_transformer(), ["0110", "1", "111"])
>>> out.accepted, out.dtype
((False, True, True), 'float64')
>>> round(float(out.logits[0]), 12) == round(-3 / 77, 12)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .ir import Network
from .torch_common import (
    DTYPES,
    MAX_TIE_LOCATIONS,
    PATHS,
    Encoded,
    FloatBatch,
    TieLocation,
    Ties,
    TorchBackendError,
    load_torch,
)
from .torch_compiler import CompiledNetwork, refuse_kind, unsupported
from .torch_seq2seq import Seq2SeqFloatRun, run_seq2seq
from .words import tokenize

__all__ = [
    "DTYPES",
    "PATHS",
    "CompiledNetwork",
    "Encoded",
    "FloatBatch",
    "Seq2SeqFloatRun",
    "TieLocation",
    "TorchBackendError",
    "compile",
    "refuse_kind",
    "run",
    "run_batch",
    "run_seq2seq",
    "unsupported",
]


def compile(
    net: Network,
    *,
    dtype: str = "float64",
    device: str = "cpu",
    tie_rtol: float | None = None,
    grouped: bool = True,
    running: bool = True,
) -> CompiledNetwork:
    """Compile ``net`` for ``dtype`` (one of :data:`DTYPES`) on ``device`` (``"cpu"``, ``"cuda"``,
    ``"cuda:1"``...). ``tie_rtol`` overrides the relative tie tolerance of hardmax heads;
    ``grouped=False`` computes no head by key groups (:mod:`netproof.symbolic.torch_grouped`),
    ``running=False`` none by running maxima (:mod:`netproof.symbolic.torch_running`): with both,
    every head builds its n × n score matrix."""
    return CompiledNetwork(
        net, dtype=dtype, device=device, tie_rtol=tie_rtol, grouped=grouped, running=running
    )


def _merge(
    net: Network, parts: Sequence[tuple[list[int], FloatBatch]], total: int, dtype: str, device: str
) -> FloatBatch:
    """Put chunk results back in the order the words were given."""
    if len(parts) == 1 and parts[0][0] == list(range(total)):
        return parts[0][1]
    torch = load_torch()
    order = [i for idx, _ in parts for i in idx]
    inverse = [0] * total
    for pos, i in enumerate(order):
        inverse[i] = pos

    def pick(seq: Callable[[FloatBatch], Sequence[Any]]) -> tuple[Any, ...]:
        flat = [v for _, fb in parts for v in seq(fb)]
        return tuple(flat[inverse[i]] for i in range(total))

    logits = None
    if parts and parts[0][1].logits is not None:
        cat = torch.cat([fb.logits for _, fb in parts])
        logits = cat[torch.tensor(inverse, dtype=torch.long, device=cat.device)]
    allowed = None
    if parts and parts[0][1].allowed is not None:
        L = max(fb.allowed.shape[1] for _, fb in parts)
        padded = [
            torch.nn.functional.pad(fb.allowed, (0, 0, 0, L - fb.allowed.shape[1]))
            for _, fb in parts
        ]
        cat = torch.cat(padded)
        allowed = cat[torch.tensor(inverse, dtype=torch.long, device=cat.device)]
    firsts: list[TieLocation] = []
    for idx, fb in parts:
        for loc in fb.unresolved_ties.first:
            firsts.append(TieLocation(idx[loc.word], loc.layer, loc.head, loc.position))
    firsts.sort(key=lambda t: t.word)
    return FloatBatch(
        network=net,
        words=pick(lambda fb: fb.words),
        tokens=pick(lambda fb: fb.tokens),
        n=pick(lambda fb: fb.n),
        logits=logits,
        accepted=pick(lambda fb: fb.accepted),
        allowed=allowed,
        min_gap=min((fb.min_gap for _, fb in parts), default=math.inf),
        unresolved_ties=Ties(
            sum(fb.unresolved_ties.count for _, fb in parts), tuple(firsts[:MAX_TIE_LOCATIONS])
        ),
        readout_margin=min((fb.readout_margin for _, fb in parts), default=math.inf),
        readout_undecided=sum(fb.readout_undecided for _, fb in parts),
        dtype=dtype,
        device=device,
        index_base=parts[0][1].index_base if parts else 0,
        paths=tuple(sorted({p for _, fb in parts for p in fb.paths})),
    )


def run_batch(
    net: Network | CompiledNetwork,
    words: Sequence[str | Sequence[str]],
    *,
    dtype: str = "float64",
    device: str = "cpu",
    length: int | None = None,
    chunk: int | None = None,
    keep_states: bool = False,
    stats: bool = True,
) -> FloatBatch:
    """Evaluate ``net`` on every word, in chunks of words of similar lengths (``chunk`` words at
    most; by default :meth:`CompiledNetwork.chunk_words`: as many as keep a head's score matrix
    under 2^20 entries and the other tensors under 2^18). With ``keep_states``
    everything runs as one chunk, so that the states share one padded shape. ``stats=False`` skips
    the hardmax gap and tie bookkeeping (:meth:`CompiledNetwork.forward`)."""
    compiled = net if isinstance(net, CompiledNetwork) else compile(net, dtype=dtype, device=device)
    symbols = [tokenize(compiled.net.alphabet, w) for w in words]
    if keep_states or not symbols:
        return compiled.forward(
            compiled.encode(symbols, length=length), keep_states=keep_states, stats=stats
        )
    order = sorted(range(len(symbols)), key=lambda i: len(symbols[i]))
    longest = len(symbols[order[-1]]) + 4  # special tokens, roughly
    size = chunk if chunk is not None else compiled.chunk_words(longest)
    if size < 1:
        raise TorchBackendError(f"chunk={chunk} must be >= 1 (words evaluated together)")
    if chunk is None:  # chunks of equal sizes: no small last chunk
        size = -(-len(order) // -(-len(order) // size))
    parts: list[tuple[list[int], FloatBatch]] = []
    for start in range(0, len(order), size):
        idx = order[start : start + size]
        parts.append(
            (
                idx,
                compiled.forward(
                    compiled.encode([symbols[i] for i in idx], length=length), stats=stats
                ),
            )
        )
    return _merge(compiled.net, parts, len(symbols), compiled.dtype, str(compiled.device))


def run(
    net: Network | CompiledNetwork,
    word: str | Sequence[str],
    *,
    dtype: str = "float64",
    device: str = "cpu",
    length: int | None = None,
    keep_states: bool = True,
) -> FloatBatch:
    """One word: a :class:`FloatBatch` of one, with its states kept (as a trace keeps them)."""
    compiled = net if isinstance(net, CompiledNetwork) else compile(net, dtype=dtype, device=device)
    return compiled.forward(compiled.encode([word], length=length), keep_states=keep_states)
