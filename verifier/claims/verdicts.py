"""Verdicts: the sum type a checker returns, ``Verdict = Proved | Refuted | Unknown``.

Nothing returns a bool: :class:`Proved` records the method (its strength) and how many cases it
covered, :class:`Refuted` carries the counterexample word and what was expected and computed,
:class:`Unknown` the reason (unsupported, undecided, timeout); a timeout is never a pass.

May import: the standard library and the languages' :data:`~netproof.verifier.claims.languages.Word`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from .languages import Word

__all__ = ["Proved", "Refuted", "Unknown", "Verdict"]


@dataclass(frozen=True, slots=True)
class Proved:
    """The claim holds for every case in the bound. ``method`` says how (its strength)."""

    method: str
    checked: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Refuted:
    """The claim fails. ``word`` is the counterexample (shortest first in shortlex order) when
    there is one; ``detail`` says what was expected and what the network computed."""

    method: str
    detail: str
    word: Word | None = None
    values: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Unknown:
    """Neither proved nor refuted: ``reason`` says why (unsupported, undecided, timeout)."""

    method: str
    reason: str


Verdict: TypeAlias = Proved | Refuted | Unknown
