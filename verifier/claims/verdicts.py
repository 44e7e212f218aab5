"""Verdicts: the sum type a checker returns, ``Verdict = Proved | Refuted | Unknown``.

Nothing returns a bool: :class:`Proved` records the method (its strength) and how many cases it
covered, :class:`Refuted` carries the counterexample word and what was expected and computed,
:class:`Unknown` the reason (unsupported, undecided, timeout); a timeout is never a pass.

Each prints as one short line (``repr``: the kind, the method and the counterexample, the detail
cut to :data:`SHORT` characters) and shows its whole detail and counterexample as a table in a
notebook (``_repr_html_``).

May import: the standard library, the languages' :data:`~netproof.verifier.claims.languages.Word`
and the display's HTML helpers (:mod:`netproof.symbolic.display`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from netproof.symbolic.display import rows_table

from .languages import Word

SHORT = 80
"""The most characters of a verdict's detail or reason its ``repr`` shows."""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def _word_text(word: Word | None) -> str:
    if word is None:
        return "(none)"
    return repr("".join(word) if all(len(s) == 1 for s in word) else " ".join(word))


__all__ = ["Proved", "Refuted", "Unknown", "Verdict"]


@dataclass(frozen=True, slots=True)
class Proved:
    """The claim holds for every case in the bound. ``method`` says how (its strength)."""

    method: str
    checked: int
    detail: str = ""

    def __repr__(self) -> str:
        detail = f": {_short(self.detail)}" if self.detail else ""
        return f"<Proved by {self.method}, {self.checked:,} cases{detail}>"

    def _repr_html_(self) -> str:
        rows = [
            ("verdict", "Proved"),
            ("method", self.method),
            ("cases checked", f"{self.checked:,}"),
        ]
        return rows_table(rows + ([("detail", self.detail)] if self.detail else []))


@dataclass(frozen=True, slots=True)
class Refuted:
    """The claim fails. ``word`` is the counterexample (shortest first in shortlex order) when
    there is one; ``detail`` says what was expected and what the network computed."""

    method: str
    detail: str
    word: Word | None = None
    values: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<Refuted by {self.method} on {_word_text(self.word)}: {_short(self.detail)}>"

    def _repr_html_(self) -> str:
        rows = [
            ("verdict", "Refuted"),
            ("method", self.method),
            ("counterexample", _word_text(self.word)),
            ("detail", self.detail),
        ]
        return rows_table(rows + [(f"value {k}", v) for k, v in self.values.items()])


@dataclass(frozen=True, slots=True)
class Unknown:
    """Neither proved nor refuted: ``reason`` says why (unsupported, undecided, timeout)."""

    method: str
    reason: str

    def __repr__(self) -> str:
        return f"<Unknown ({self.method}): {_short(self.reason)}>"

    def _repr_html_(self) -> str:
        return rows_table(
            [("verdict", "Unknown"), ("method", self.method), ("reason", self.reason)]
        )


Verdict: TypeAlias = Proved | Refuted | Unknown
