"""The canonical layout every importer maps its source onto: a small graph of position-wise maps
and attention over *named values*, with exact weights.

An importer (one module per source: a traced ``nn.Module``, TransformerLens, a tracr dump, ONNX)
fills a :class:`Graph`; :func:`netproof.symbolic.importers.lower.lower` is the one shared path from
a graph into the IR. Nothing here knows a model family.

- The input is the token ids of ``prefix + word + suffix`` (``vocab[t]`` is the token of id t).
  Values that depend on the token and the position only (embedding lookups, positional tables,
  an embedding scale, sums of those) are *embedding rows* (:class:`EmbRow`): they become the IR's
  :class:`~netproof.symbolic.ir.TokenEmbedding` (a position table as the features ``I[i=k]``).
- Every other value is a tuple of names produced by one op: :class:`Lin` (an affine map),
  :class:`Add` (a sum of two values), :class:`Act` (``relu`` or ``gelu``), :class:`Norm` (layer norm
  with its γ, β), :class:`Attend` (softmax heads: query, key and value names, the score scale, the
  mask) and :class:`MeanPool` (the mean over every position).
- The readout is one logit: an affine map of named values at one position (0 = the first token,
  −1 = the last).

Weights are :class:`~fractions.Fraction` (a float's exact value: ``Fraction(float)`` is exact).
Only the standard library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias

__all__ = [
    "Act",
    "Add",
    "Attend",
    "EmbRow",
    "Graph",
    "HeadSpec",
    "ImporterError",
    "Lin",
    "MeanPool",
    "Norm",
    "Op",
    "Readout",
]

from netproof.symbolic.errors import SymbolicError


class ImporterError(SymbolicError, ValueError):
    """A model (or a part of it) outside what the importers map: the message names the node or
    module, its op and what is supported."""


@dataclass(frozen=True, slots=True)
class Lin:
    """``outputs[o] = Σ_i weights[o][i]·inputs[i] + bias[o]``."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    weights: tuple[tuple[Fraction, ...], ...]
    bias: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class Add:
    """``outputs[k] = a[k] + b[k]``."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Act:
    kind: str  # relu | gelu
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Norm:
    """Layer norm over ``inputs`` (population variance, ``eps`` inside the root), then γ ⊙ z + β."""

    eps: Fraction
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    gamma: tuple[Fraction, ...]
    beta: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class HeadSpec:
    """One softmax head: scores ``coef·⟨q_i, k_j⟩`` (divided by √``sqrt_d`` when given), the
    ``mask`` (``none``, ``causal`` j ≤ i, ``anticausal`` j ≥ i), weights softmax over the visible
    j, output Σ_j weight·v_j into ``outputs``."""

    query: tuple[str, ...]
    key: tuple[str, ...]
    value: tuple[str, ...]
    outputs: tuple[str, ...]
    coef: Fraction = Fraction(1)
    sqrt_d: int | None = None
    mask: str = "none"


@dataclass(frozen=True, slots=True)
class Attend:
    heads: tuple[HeadSpec, ...]

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(o for h in self.heads for o in h.outputs)


@dataclass(frozen=True, slots=True)
class MeanPool:
    """``outputs`` at every position = the mean of ``inputs`` over all positions."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


Op: TypeAlias = Lin | Add | Act | Norm | Attend | MeanPool


def reads(op: Op) -> tuple[str, ...]:
    """The names an op reads."""
    match op:
        case Add():
            return op.a + op.b
        case Attend():
            return tuple(n for h in op.heads for n in (*h.query, *h.key, *h.value))
        case _:
            return op.inputs


@dataclass(slots=True)
class EmbRow:
    """A value fixed by the token and the position: ``tokens[t]`` (token id t) + ``positions[p]``
    (position p, from 0) + ``const``."""

    tokens: dict[int, Fraction] = field(default_factory=dict)
    positions: dict[int, Fraction] = field(default_factory=dict)
    const: Fraction = Fraction(0)

    def scaled(self, c: Fraction) -> EmbRow:
        return EmbRow(
            {t: c * v for t, v in self.tokens.items()},
            {p: c * v for p, v in self.positions.items()},
            c * self.const,
        )

    def plus(self, other: EmbRow) -> EmbRow:
        tokens = dict(self.tokens)
        for t, v in other.tokens.items():
            tokens[t] = tokens.get(t, Fraction(0)) + v
        positions = dict(self.positions)
        for p, v in other.positions.items():
            positions[p] = positions.get(p, Fraction(0)) + v
        return EmbRow(tokens, positions, self.const + other.const)


@dataclass(frozen=True, slots=True)
class Readout:
    """``logit = Σ weights[i]·inputs[i] + bias`` at ``position`` (0 = first token, −1 = last)."""

    inputs: tuple[str, ...]
    weights: tuple[Fraction, ...]
    bias: Fraction
    position: int


@dataclass(slots=True)
class Graph:
    """The canonical layout (see the module docstring). ``positions``: how many token positions
    the positional rows cover (the longest input the network is built for)."""

    vocab: tuple[str, ...]
    alphabet: tuple[str, ...]
    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    positions: int = 0
    emb: dict[str, EmbRow] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    readout: Readout | None = None
    source: str = ""
    _count: dict[str, int] = field(default_factory=dict)

    def fresh(self, stem: str, k: int) -> tuple[str, ...]:
        """``k`` new names ``stem.0 …`` (a number is appended to the stem when it was used)."""
        stem = "".join(c if c.isalnum() or c in "._:-<>" else "_" for c in stem) or "v"
        n = self._count.get(stem, 0)
        self._count[stem] = n + 1
        base = stem if n == 0 else f"{stem}~{n}"
        return tuple(f"{base}.{j}" for j in range(k))

    def add(self, op: Op) -> tuple[str, ...]:
        self.ops.append(op)
        return op.outputs

    def emb_value(self, stem: str, rows: Sequence[EmbRow]) -> tuple[str, ...]:
        names = self.fresh(stem, len(rows))
        for n, r in zip(names, rows, strict=True):
            self.emb[n] = r
        return names
