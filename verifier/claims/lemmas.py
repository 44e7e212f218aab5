"""Block lemmas: the steps of a paper's proof, declared per construction as frozen data.

A construction's ``lemmas(params)`` lists them; :mod:`netproof.verifier.smt` proves them block by
block, for every length at once (compositional proofs). :class:`BooleanBlock` (an FFN computes
Boolean functions of Boolean dims), :class:`ScaledBlock` (an FFN computes an integer function of
integers over a common unit, such as I[i = k]/n), :class:`NearestSelection` (a hardmax head
selects the nearest position where a Boolean condition holds) and :class:`RankedSelection` (a
hardmax head selects the first or the last position of highest rank, on any mask). Formulas are
sympy expressions over symbols named like the dims they stand for.

May import: the standard library only (sympy objects are held, never built here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["BooleanBlock", "Lemma", "NearestSelection", "RankedSelection", "ScaledBlock"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BooleanBlock:
    """Lemma: the FFN named ``block``, on every input whose dims ``boolean`` are in {0, 1} (and
    whose other read dims are any reals), writes ``outputs[d]`` into dim ``d``: a sympy Boolean
    formula over the Boolean dims (the output is exactly 1 when it is true and 0 when false) or
    a sympy linear expression over the real dims (e.g. a position passed through). Sympy
    symbols are named like the dims they stand for."""

    id: str
    statement: str
    reference: str
    block: str
    boolean: tuple[str, ...]
    outputs: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class NearestSelection:
    """Lemma: head ``head`` of attention layer ``layer`` (hardmax, masked to one side of the
    query) selects exactly one position: the nearest one where the sympy Boolean formula
    ``prefer`` over the key position's dims holds, or the nearest one if there is none. Stated
    as pairwise score comparisons with a strict margin, for every length n at once, when the
    dims ``boolean`` are in {0, 1} and each dim of ``positional`` holds its named feature."""

    id: str
    statement: str
    reference: str
    layer: str
    head: str
    prefer: Any
    boolean: tuple[str, ...]
    positional: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedSelection:
    """Lemma: head ``head`` of attention layer ``layer`` (hardmax, any mask, a query that does
    not depend on the position) selects exactly one position of its masked set: among those of
    highest rank, the first (``end="first"``) or the last (``end="last"``). A position's rank is
    the tuple of the sympy Boolean formulas ``ranks`` over its dims, compared lexicographically
    (true above false). Stated as pairwise score comparisons with a strict margin, for every
    length n at once, when the dims ``boolean`` are in {0, 1} and each dim of ``positional``
    holds its named feature.

    It covers what :class:`NearestSelection` does not: the farthest position of a one-sided
    mask (``end="first"`` on a causal mask: the first preferred position so far) and a head
    over every position (mask ``none``: the first or last preferred position of the whole
    word). E.g. B-RASP's leftmost attention compiled with a start token scored below every
    word position: ``ranks=(~BOS, k)``, ``end="first"``."""

    id: str
    statement: str
    reference: str
    layer: str
    head: str
    ranks: tuple[Any, ...]
    end: Literal["first", "last"]
    boolean: tuple[str, ...]
    positional: Mapping[str, str]

    def __post_init__(self) -> None:
        if self.end not in ("first", "last"):
            raise ValueError(
                f"end={self.end!r}: use 'first' or 'last' (which of the positions of highest rank the head selects)"
            )
        if not isinstance(self.ranks, tuple) or not self.ranks:
            raise ValueError(
                f"ranks={self.ranks!r}: give a non-empty tuple of Boolean formulas, the most significant first"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaledBlock:
    """Lemma: the FFN named ``block``, positively homogeneous (ReLU, no biases), fed dims that
    hold integers over a common unit (dim ``unit`` holds 1/u; dim d of ``inputs`` holds v/u for
    the integer variable v, a sympy symbol), writes ``outputs[d]`` = f/u into dim d, f a sympy
    expression of the integer variables (``Piecewise``/``Eq`` allowed), for every integer value
    of the variables and every u >= 1 (e.g. Chiang & Cholak's FFN 1: I[i = k]/n from i/n, k/n
    and 1/n)."""

    id: str
    statement: str
    reference: str
    block: str
    unit: str
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]


Lemma: TypeAlias = BooleanBlock | NearestSelection | RankedSelection | ScaledBlock
