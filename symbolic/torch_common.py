"""What every part of the torch backend shares: loading torch, dtypes and devices, the backend's
error, and the values a float run returns.

Owns :func:`load_torch` (the one place torch is imported, inside the function),
:data:`DTYPES`, :func:`check_dtype`, :func:`torch_device`, :class:`TorchBackendError`, the
hardmax tie tolerance (:data:`TIE_EPS_FACTOR`), the names of the ways a head is computed
(:data:`PATHS`), and the results: :class:`FloatBatch` with its
tie report (:class:`Ties`, :class:`TieLocation`) and the padded batch :class:`Encoded`. The
backend's semantics are described in :mod:`netproof.symbolic.torch_backend`, which re-exports the
public names. This module imports the IR and the errors only; the compiler
(:mod:`netproof.symbolic.torch_compiler`), the encoder–decoder run
(:mod:`netproof.symbolic.torch_seq2seq`) and the batch runner (:mod:`netproof.symbolic.torch_backend`)
are above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .errors import MissingExtraError, SymbolicError
from .ir import Network, NextSymbols

DTYPES: tuple[str, ...] = ("float64", "float32", "float16", "bfloat16")
"""The float formats the backend computes in (``float64`` by default)."""

TIE_EPS_FACTOR = 32
"""The default ``tie_rtol`` is this many machine epsilons of the dtype."""

MAX_TIE_LOCATIONS = 5
"""How many unresolved ties :class:`FloatBatch` lists (all of them are counted)."""

PATHS: tuple[str, ...] = ("groups", "running", "scores")
"""How a head is computed (:attr:`FloatBatch.paths`): by key groups
(:mod:`netproof.symbolic.torch_grouped`), by running maxima (:mod:`netproof.symbolic.torch_running`),
or by its n × n score matrix."""


class TorchBackendError(SymbolicError, ValueError):
    """The torch backend cannot run this request: an unknown dtype, an unavailable device, a
    weight the dtype cannot hold, or a network it cannot compile (the message names the block)."""


def load_torch() -> Any:
    """The torch module, imported now; without torch, a
    :class:`~netproof.symbolic.errors.MissingExtraError` naming the ``torch`` extra. Every part of
    the backend gets torch here, so importing any of them leaves torch unloaded."""
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "the torch backend needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def check_dtype(dtype: str) -> None:
    """Raise :class:`TorchBackendError` unless ``dtype`` is one of :data:`DTYPES`."""
    if dtype not in DTYPES:
        raise TorchBackendError(
            f"dtype={dtype!r} is not one of {', '.join(DTYPES)}; float64 is the default"
        )


def torch_device(torch: Any, device: str) -> Any:
    """``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``...) as a torch device, or a
    :class:`TorchBackendError` that says why it cannot be used here."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise TorchBackendError(
            f"device={device!r} is not a torch device ({exc}); use 'cpu' or 'cuda'"
        ) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TorchBackendError(
            f"device={device!r}: CUDA is not available here (torch {torch.__version__}, CUDA build "
            f"{torch.version.cuda or 'none'}); use device='cpu', or run on a machine with a CUDA GPU and a CUDA build of torch"
        )
    if dev.type not in ("cpu", "cuda"):
        raise TorchBackendError(f"device={device!r}: only 'cpu' and 'cuda' devices are supported")
    return dev


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class TieLocation:
    """Where a float hardmax met scores it could not tell equal or different: word ``word`` of the
    batch (its index), head ``head`` of layer ``layer``, query at position ``position`` (the
    paper's index, ``index_base`` included)."""

    word: int
    layer: str
    head: str
    position: int

    def __str__(self) -> str:
        return f"word {self.word}, {self.layer!r} head {self.head!r} at i={self.position}"


@dataclass(frozen=True, slots=True)
class Ties:
    """Unresolved ties: how many (word, head, query) rows had one, and the first few."""

    count: int
    first: tuple[TieLocation, ...]


@dataclass(frozen=True)
class FloatBatch:
    """The float evaluation of a batch of words (in the order given).

    ``logits[w]`` is the classifier's logit (a tensor, ``None`` for a next-symbol readout);
    ``accepted[w]`` is ``logit > 0``, or ``None`` where the float sign is no evidence: the logit
    is NaN (a value the exact interpreter calls undefined) or nonzero and within ``tie_rtol ·
    (Σ|w| · max|x| + |b|)`` of 0, x being the residual row it reads (e.g. an exact logit of 0
    computed as 1e-17 after a cancellation; a float logit of exactly 0 rejects, as an exact 0
    does);
    ``readout_undecided`` counts those words (for a next-symbol readout: the (position, symbol)
    values within ``tie_rtol · max(1, |threshold|)`` of the threshold, decided as ``>=``). ``allowed`` is the next-symbol readout's boolean tensor
    (words × positions × scored symbols), read through :attr:`next_symbols` and :attr:`ends`.
    ``min_gap`` and ``unresolved_ties`` report the hardmax decisions (:mod:`netproof.symbolic.torch_backend`);
    ``readout_margin`` is the smallest |logit| (or |value − threshold| of the next-symbol
    readout) over the batch: a verdict closer to its threshold than the float error is in doubt.
    With ``keep_states=True``, ``states`` holds ``(label, tensor words × positions × dims)``
    after the embedding and every sublayer, and ``gaps`` ``(layer, head, tensor words ×
    positions)`` the per-query gap of every hardmax head (``inf`` where every allowed key was
    selected; padded positions hold 0 and ``inf``). ``paths`` says how every head was computed,
    as ``(layer, head, path)`` sorted, :data:`PATHS` naming the path (a head computed two ways in
    two chunks of a batch is listed twice).
    """

    network: Network
    words: tuple[tuple[str, ...], ...]
    tokens: tuple[int, ...]
    n: tuple[int, ...]
    logits: Any
    accepted: tuple[bool | None, ...]
    allowed: Any
    min_gap: float
    unresolved_ties: Ties
    readout_margin: float
    readout_undecided: int
    dtype: str
    device: str
    states: tuple[tuple[str, Any], ...] | None = None
    gaps: tuple[tuple[str, str, Any], ...] | None = None
    index_base: int = field(default=0)
    paths: tuple[tuple[str, str, str], ...] = ()

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def next_symbols(self) -> tuple[tuple[tuple[str, ...], ...], ...] | None:
        """Per word, per token position, the symbols allowed next (as the exact Trace has them)."""
        r = self.network.readout
        if not isinstance(r, NextSymbols) or self.allowed is None:
            return None
        symbols = [s for s, _ in r.scores]
        table = self.allowed.cpu().tolist()
        return tuple(
            tuple(
                tuple(s for s, ok in zip(symbols, table[w][t], strict=True) if ok)
                for t in range(self.tokens[w])
            )
            for w in range(len(self.words))
        )

    @cached_property
    def ends(self) -> tuple[tuple[bool, ...], ...] | None:
        """Per word, per position: whether the string may end there (the readout's ``end``)."""
        r = self.network.readout
        nexts = self.next_symbols
        if nexts is None or not isinstance(r, NextSymbols) or r.end is None:
            return None
        return tuple(tuple(r.end in allowed for allowed in word) for word in nexts)

    def logit(self, w: int) -> float | None:
        """Word ``w``'s logit as a Python float (``None`` for a next-symbol readout)."""
        return None if self.logits is None else float(self.logits[w])


# --------------------------------------------------------------------------- encoded words


@dataclass(frozen=True)
class Encoded:
    """A padded batch of words: ``ids`` (words × positions, int64 token ids; for a flat network
    words × length symbol ids), ``valid`` (words × positions, False on padding), ``tokens`` (the
    number of tokens of each word, specials included), ``n`` (each word's n: its tokens, or the
    declared ``length``), ``n_tensor`` (the same as float64 on the device) and ``extra``: the
    values of positional features without a tensor rule, computed exactly and rounded
    (words × positions × features, or None)."""

    words: tuple[tuple[str, ...], ...]
    ids: Any
    valid: Any
    tokens: tuple[int, ...]
    n: tuple[int, ...]
    n_tensor: Any
    extra: Any = None

    def __len__(self) -> int:
        return len(self.words)
