"""Hardmax networks in the batched engine: every logit computed exactly, handed on as a float
with the radius of its one rounding: :class:`ExactLogits`.

The float enclosure (:mod:`.enclosure`) covers softmax heads; a hardmax head's selection turns
on exact ties (B-RASP's leftmost/rightmost rules, C-RASP's averages over equal scores) that an
interval cannot decide. For a network whose heads are hardmax (a compiled B-RASP/C-RASP program,
or any construction, e.g. read back from ``netproof export --format torch``) each word's logit is
computed exactly instead: by the batched exact evaluator (:mod:`netproof.symbolic.batched`)
where it covers the network, else by the exact interpreter (:mod:`netproof.symbolic.exact`, one
word at a time: layer norms whose variance is a rational square, as in C-RASP's sign trick). The
logit q becomes ``m = float(q)`` (correctly rounded) with radius 0 when ``m == q``, else
``|m|·2⁻⁵² + 2⁻¹⁰⁷⁴`` (at least the rounding error): the check decides its sign exactly as the
exact interpreter does. An exact logit of 0 (reject) is an enclosure [0, 0] that the check hands
to its slow path. :func:`exact_refusal` says why a network is not covered (a softmax head, GELU,
a layer norm whose variance is not a rational square shows up only per word, as an error naming
it).

:func:`batched_logits` is what the checks call: :class:`ExactLogits` for a hardmax network it
covers, else the float enclosure (:func:`~.enclosure.compile_enclosure`).

May import the IR, the exact interpreters and :mod:`.enclosure`; torch inside functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import batched, exact
from netproof.symbolic.errors import SymbolicError
from netproof.symbolic.ir import (
    FFN,
    Activation,
    AttentionLayer,
    Classifier,
    Hardmax,
    Network,
    Softmax,
    TokenEmbedding,
)
from netproof.symbolic.rnn_recognizers import RNNRecognizerIR

from .enclosure import Enclosure, RNNEnclosure, compile_enclosure

__all__ = ["ExactLogits", "batched_logits", "exact_refusal", "has_hardmax"]


class ExactLogitError(SymbolicError, ValueError):
    """A word's logit has no exact value here (an irrational layer norm, an undefined value)."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """Midpoints and radii, as :class:`~netproof.verifier.models.enclosure.MR` holds them."""

    m: Any
    r: Any


def has_hardmax(net: object) -> bool:
    """Whether ``net`` is a Network with at least one hardmax head."""
    return isinstance(net, Network) and any(
        isinstance(h.normalizer, Hardmax)
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
    )


def exact_refusal(net: Network) -> str | None:
    """Why :class:`ExactLogits` does not cover ``net`` (None: it does)."""
    if not isinstance(net.embedding, TokenEmbedding):
        return f"a {type(net.embedding).__name__}"
    if not isinstance(net.readout, Classifier):
        return f"a {type(net.readout).__name__} readout"
    for sub in net.layers:
        block = sub.block
        if isinstance(block, AttentionLayer):
            for h in block.heads:
                if isinstance(h.normalizer, Softmax):
                    return f"softmax head {h.name!r}"
        elif isinstance(block, FFN):
            for step in block.steps:
                if isinstance(step, Activation) and step.kind == "gelu":
                    return f"the GELU of ffn {block.name!r}"
        else:
            return f"block {block.name!r} ({type(block).__name__})"
    return None


def _radius(q: Fraction, m: float) -> float:
    return 0.0 if Fraction(m) == q else abs(m) * 2.0**-52 + 2.0**-1074


class ExactLogits:
    """The logit of every word of a batch, exactly (see the module docstring); the interface of
    :meth:`~netproof.verifier.models.enclosure.Enclosure.logits` (``token_index`` and
    ``logits(tokens, n_tokens)``)."""

    def __init__(self, net: Network) -> None:
        why = exact_refusal(net)
        if why is not None:
            raise ExactLogitError(f"network {net.name!r} has {why}: its logits are not exact")
        emb = net.embedding
        assert isinstance(emb, TokenEmbedding)  # exact_refusal
        self.net = net
        self.token_index = {t: i for i, (t, _) in enumerate(emb.table)}
        self._tokens = [t for t, _ in emb.table]
        self._pre, self._suf = len(emb.prefix), len(emb.suffix)
        self._batched = batched.supports(net) is None

    def _exact(self, words: list[tuple[str, ...]]) -> list[Fraction]:
        if self._batched:
            return batched.evaluate(self.net, words).logits()
        out = []
        for w in words:
            try:
                value = exact.run(self.net, w).output
            except SymbolicError as exc:
                raise ExactLogitError(f"on the word {' '.join(w)!r}: {exc}") from None
            assert isinstance(value, Fraction)  # a Classifier's output
            out.append(value)
        return out

    def logits(self, tokens: Any, n_tokens: int) -> Bounds:
        """The exact logit of each row of ``tokens`` (``[B, n]`` indices into the table,
        specials included), as a float with the radius of its rounding."""
        import torch

        stop = n_tokens - self._suf
        words = [tuple(self._tokens[t] for t in row[self._pre : stop]) for row in tokens.tolist()]
        qs = self._exact(words)
        ms = [float(q) for q in qs]
        rs = [_radius(q, m) for q, m in zip(qs, ms, strict=True)]
        return Bounds(torch.tensor(ms, dtype=torch.float64), torch.tensor(rs, dtype=torch.float64))


def batched_logits(net: Network | RNNRecognizerIR) -> Enclosure | RNNEnclosure | ExactLogits:
    """The batched logits of ``net``: exact for a network with hardmax heads that
    :class:`ExactLogits` covers, else the float enclosure (an
    :class:`~.enclosure.EnclosureError` names a block it does not cover)."""
    if isinstance(net, Network) and has_hardmax(net) and exact_refusal(net) is None:
        return ExactLogits(net)
    return compile_enclosure(net)
