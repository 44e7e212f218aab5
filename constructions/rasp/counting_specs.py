"""Counting formulas (K_t[#]) for :mod:`.from_counting`: the counting side of ``netproof synth``,
each with a Python predicate written independently of the formula (the tests check predicate =
the formula's evaluator = its counter automaton = the synthesized program on every word up to
length 7).

:data:`SPECS` lists them; reading this module's ``PROGRAMS`` (computed on first access)
synthesizes every one, each with its reference (the formula's language: its evaluator and its
counter automaton), so the file is a user program module:
``netproof prove constructions/rasp/counting_specs.py:counting-majority --method best``.

May import: its own package's modules and the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from netproof.verifier.claims import Word

__all__ = ["SPECS", "CountingSpec", "spec_named"]

AB = ("a", "b")
ABC = ("a", "b", "c")
BR = ("(", ")")


@dataclass(frozen=True)
class CountingSpec:
    name: str
    description: str
    formula: str
    alphabet: tuple[str, ...]
    empty: bool
    predicate: Callable[[Word], bool]


def _majority(w: Word) -> bool:
    return w.count("a") > w.count("b")


def _a_leads_every_prefix(w: Word) -> bool:
    return len(w) > 0 and all(w[:i].count("a") > w[:i].count("b") for i in range(1, len(w) + 1))


def _dyck1(w: Word) -> bool:
    depth = 0
    for s in w:
        depth += 1 if s == "(" else -1
        if depth < 0:
            return False
    return depth == 0


def _within_two_every_prefix(w: Word) -> bool:
    return all(abs(w[:i].count("a") - w[:i].count("b")) <= 2 for i in range(len(w) + 1))


def _ambm(w: Word) -> bool:
    m = len(w) // 2
    return len(w) % 2 == 0 and w == ("a",) * m + ("b",) * m


def _a_twice_b(w: Word) -> bool:
    return len(w) > 0 and w.count("a") == 2 * w.count("b")


def _leads_more_often(w: Word) -> bool:
    prefixes = [w[:i] for i in range(1, len(w) + 1)]
    a_leads = sum(p.count("a") > p.count("b") for p in prefixes)
    b_leads = sum(p.count("b") > p.count("a") for p in prefixes)
    return a_leads > b_leads


def _ends_a_lead_two(w: Word) -> bool:
    return len(w) > 0 and w[-1] == "a" and w.count("a") >= w.count("b") + 2


def _c_only_when_even(w: Word) -> bool:
    return all(w[: i + 1].count("a") == w[: i + 1].count("b") for i, s in enumerate(w) if s == "c")


SPECS: tuple[CountingSpec, ...] = (
    CountingSpec("majority", "more a's than b's", "#(a) > #(b)", AB, False, _majority),
    CountingSpec(
        "a-leads-every-prefix",
        "more a's than b's in every non-empty prefix",
        "#(#(a) <= #(b)) == 0",
        AB,
        False,
        _a_leads_every_prefix,
    ),
    CountingSpec(
        "dyck1",
        "Dyck-1: balanced, and no prefix has more ) than (",
        "#('(') == #(')') & #(#(')') > #('(')) == 0",
        BR,
        True,
        _dyck1,
    ),
    CountingSpec(
        "within-two",
        "every prefix has |#a − #b| ≤ 2 (bounded difference)",
        "#(#(a) - #(b) > 2 | #(b) - #(a) > 2) == 0",
        AB,
        True,
        _within_two_every_prefix,
    ),
    CountingSpec(
        "ambm",
        "a^m b^m: no a after a b, equal counts",
        "#(a & #(b) > 0) == 0 & #(a) == #(b)",
        AB,
        True,
        _ambm,
    ),
    CountingSpec(
        "a-twice-b", "#a = 2·#b, over {a, b, c}", "#(a) - 2*#(b) == 0", ABC, False, _a_twice_b
    ),
    CountingSpec(
        "leads-more-often",
        "more prefixes where a leads than where b leads (nested counts)",
        "#(#(a) > #(b)) > #(#(b) > #(a))",
        AB,
        False,
        _leads_more_often,
    ),
    CountingSpec(
        "ends-a-lead-two",
        "ends with a, and at least two more a's than b's",
        "a & #(a) >= #(b) + 2",
        AB,
        False,
        _ends_a_lead_two,
    ),
    CountingSpec(
        "c-when-even",
        "every c comes where the a's and b's so far are equal",
        "#(c & #(a) != #(b)) == 0",
        ABC,
        True,
        _c_only_when_even,
    ),
)
"""The counting specs, smallest first."""


def spec_named(name: str) -> CountingSpec:
    for s in SPECS:
        if s.name == name:
            return s
    raise KeyError(f"no counting spec {name!r}; the specs: {', '.join(s.name for s in SPECS)}")


def __getattr__(attr: str) -> Any:  # PROGRAMS, synthesized on first access
    if attr == "PROGRAMS":
        from netproof.constructions.rasp.from_counting import synthesize_counting

        programs = {}
        for s in SPECS:
            syn = synthesize_counting(s.formula, s.alphabet, f"counting-{s.name}", empty=s.empty)
            programs[f"counting-{s.name}"] = (syn.program, syn.reference)
        globals()["PROGRAMS"] = programs
        return programs
    raise AttributeError(attr)
