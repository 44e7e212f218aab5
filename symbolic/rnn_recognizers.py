"""Trained single-layer RNN recognizers in the IR: an ``nn.RNN`` (tanh or ReLU,
:class:`ElmanRecognizer`) or an ``nn.LSTM`` (:class:`LSTMRecognizer`), read by a linear classifier
on the last hidden state.

Like :mod:`netproof.symbolic.ir`, frozen dataclasses holding data only, evaluated by the interval
interpreter (:func:`netproof.symbolic.interval.run_rnn`) and the batched enclosure of
:mod:`netproof.verifier.models.enclosure`, never by methods of their own. The semantics are
exactly those of ``torch.nn.RNN`` / ``torch.nn.LSTM`` with a ``torch.nn.Linear(hidden, 1)`` on the
last state, from h_0 = 0 (and c_0 = 0)::

    Elman:  h_t = act(W_ih x_t + b_ih + W_hh h_{t−1} + b_hh)          (act: tanh or relu)
    LSTM:   z_t = W_ih x_t + b_ih + W_hh h_{t−1} + b_hh                  (4 gate rows per unit)
            i, f, o = σ(z_t[i:u]), σ(z_t[f:u]), σ(z_t[o:u]),  g = tanh(z_t[g:u])
            c_t = f·c_{t−1} + i·g,   h_t = o·tanh(c_t)                   (σ the logistic function)
    logit = W_y h_m + b_y       (m = |w|; the empty word reads h_0 = 0)

and the word is accepted iff the logit is > 0 (x_t: the embedding row of w_t). The maps are
:class:`~netproof.symbolic.ir.Affine` maps between named dims: the embedding's dims ``inputs``,
the hidden units ``hidden``, the LSTM's gate rows ``i:u``, ``f:u``, ``g:u``, ``o:u`` for each unit
u (torch's row order i, f, g, o), the logit ``logit``.

The recurrent IR of :mod:`netproof.symbolic.recurrent_ir` holds memory-augmented cells with
per-step next-symbol readouts; these recognizers (no memory, one logit at the last step) are the
shape trained RNN recognizers have. This module imports the blocks and the field checks only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias, get_args

from .block_printing import affine_lines, rational_text
from .blocks import Affine
from .checks import check_choice, check_fraction, check_names
from .errors import NetworkValidationError

__all__ = [
    "ELMAN_ACTIVATIONS",
    "LSTM_GATES",
    "ElmanActivation",
    "ElmanRecognizer",
    "LSTMRecognizer",
    "RNNRecognizerIR",
    "gate_names",
    "rnn_fingerprint",
    "rnn_lines",
]

ElmanActivation: TypeAlias = Literal["tanh", "relu"]
ELMAN_ACTIVATIONS: tuple[str, ...] = get_args(ElmanActivation)
LSTM_GATES: tuple[str, ...] = ("i", "f", "g", "o")
"""The LSTM's gate rows in torch's order: input, forget, cell candidate, output."""


def gate_names(hidden: tuple[str, ...]) -> tuple[str, ...]:
    """The LSTM's 4·H gate rows ``i:u … f:u … g:u … o:u`` in torch's order."""
    return tuple(f"{gate}:{u}" for gate in LSTM_GATES for u in hidden)


def _check_common(
    net: ElmanRecognizer | LSTMRecognizer,
    kind: str,
    maps: tuple[tuple[str, Affine, tuple[str, ...], tuple[str, ...]], ...],
) -> None:
    if not net.name:
        raise NetworkValidationError(f"{kind}.name must be non-empty")
    if not net.alphabet or len(set(net.alphabet)) != len(net.alphabet):
        raise NetworkValidationError(
            f"{kind} {net.name!r}: alphabet {net.alphabet} is empty or repeats"
        )
    check_names(net.inputs, f"{kind}.inputs")
    check_names(net.hidden, f"{kind}.hidden")
    shared = set(net.inputs) & set(net.hidden)
    if shared:
        raise NetworkValidationError(
            f"{kind} {net.name!r}: names {sorted(shared)} are both inputs and hidden units"
        )
    if sorted(s for s, _ in net.embedding) != sorted(net.alphabet):
        raise NetworkValidationError(
            f"{kind} {net.name!r}: the embedding has rows for {[s for s, _ in net.embedding]}; "
            f"it needs one per alphabet symbol {net.alphabet}"
        )
    for symbol, row in net.embedding:
        for dim, value in row:
            if dim not in net.inputs:
                raise NetworkValidationError(
                    f"{kind} {net.name!r}: embedding of {symbol!r} writes {dim!r}, not an input"
                )
            check_fraction(value, f"embedding[{symbol!r}, {dim!r}]")
    for field, a, reads, writes in maps:
        if not isinstance(a, Affine):
            raise NetworkValidationError(
                f"{kind}.{field} must be an Affine, got {type(a).__name__}"
            )
        unknown = [d for d in a.inputs if d not in reads]
        if unknown:
            raise NetworkValidationError(
                f"{kind} {net.name!r}: {field} reads {unknown}, which are not among {reads}"
            )
        if tuple(a.outputs) != tuple(writes):
            raise NetworkValidationError(
                f"{kind} {net.name!r}: {field} must write {writes} in that order, writes {a.outputs}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ElmanRecognizer:
    """A single-layer Elman recognizer (see the module docstring for its equations)."""

    name: str
    alphabet: tuple[str, ...]
    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    embedding: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]
    """One row per symbol: its nonzero entries over ``inputs``."""
    W_ih: Affine
    W_hh: Affine
    W_y: Affine
    activation: ElmanActivation
    params: tuple[tuple[str, str], ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        check_choice(self.activation, ELMAN_ACTIVATIONS, "ElmanRecognizer.activation")
        _check_common(
            self,
            "ElmanRecognizer",
            (
                ("W_ih", self.W_ih, self.inputs, self.hidden),
                ("W_hh", self.W_hh, self.hidden, self.hidden),
                ("W_y", self.W_y, self.hidden, ("logit",)),
            ),
        )

    def __repr__(self) -> str:
        return f"<ElmanRecognizer {self.name}: {self.activation}, {len(self.hidden)} hidden units, {len(self.inputs)} inputs>"


@dataclass(frozen=True, slots=True, kw_only=True)
class LSTMRecognizer:
    """A single-layer LSTM recognizer (see the module docstring for its equations): ``W_ih``
    and ``W_hh`` write the 4·H gate rows :func:`gate_names` (with torch's biases b_ih, b_hh)."""

    name: str
    alphabet: tuple[str, ...]
    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    embedding: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]
    W_ih: Affine
    W_hh: Affine
    W_y: Affine
    params: tuple[tuple[str, str], ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        gates = gate_names(self.hidden)
        _check_common(
            self,
            "LSTMRecognizer",
            (
                ("W_ih", self.W_ih, self.inputs, gates),
                ("W_hh", self.W_hh, self.hidden, gates),
                ("W_y", self.W_y, self.hidden, ("logit",)),
            ),
        )

    def __repr__(self) -> str:
        return f"<LSTMRecognizer {self.name}: {len(self.hidden)} hidden units, {len(self.inputs)} inputs>"


RNNRecognizerIR: TypeAlias = ElmanRecognizer | LSTMRecognizer


def rnn_lines(net: RNNRecognizerIR) -> list[str]:
    """The canonical printed form of ``net`` (an Elman or LSTM recognizer), one item per line."""
    kind = "elman" if isinstance(net, ElmanRecognizer) else "lstm"
    lines = [f"{kind} recognizer {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append(f"  alphabet: {' '.join(net.alphabet)}")
    lines.append(f"  inputs: {' '.join(net.inputs)}")
    if isinstance(net, ElmanRecognizer):
        lines.append(f"  hidden: {' '.join(net.hidden)} (h_0 = 0, activation {net.activation})")
    else:
        lines.append(
            f"  hidden: {' '.join(net.hidden)} (h_0 = c_0 = 0; gates i f o logistic, g tanh)"
        )
    for symbol, row in net.embedding:
        lines.append(
            f"  embed {symbol}: "
            + (" ".join(f"{d}={rational_text(v)}" for d, v in row if v != 0) or "0")
        )
    for field, a in (("W_ih", net.W_ih), ("W_hh", net.W_hh), ("W_y", net.W_y)):
        lines += [f"  {field}: {x}" for x in affine_lines(a)]
    lines.append("  accept iff logit(h_m) > 0")
    return lines


def rnn_fingerprint(net: RNNRecognizerIR) -> str:
    """sha256 of the canonical printed form."""
    return hashlib.sha256(("\n".join(rnn_lines(net)) + "\n").encode("utf-8")).hexdigest()
