"""The spec's example programs in B-RASP and C-RASP, each with its reference language.

B-RASP (past and all masks): "contains ab", "no two adjacent a's", (ab)*, "first symbol = last
symbol", "every a is eventually followed by a b", Dyck-1 of depth at most 2. C-RASP: Dyck-1 over ( and ), MAJORITY,
a^m b^m, "#a − 2·#b = 0", Dyck-1 ∩ "ends with )". :data:`CONSTRUCTIONS` registers each
compiled program (``brasp-…``, ``crasp-…``) with its claims (:mod:`.claims`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netproof.verifier.claims import Automaton, Language, Word
from netproof.verifier.claims.counting import CounterAutomaton, CounterRule, linear
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C

from .claims import program_construction

__all__ = [
    "BRASP_PROGRAMS",
    "CONSTRUCTIONS",
    "COUNTER_AUTOMATA",
    "CRASP_PROGRAMS",
    "REFERENCE_LANGUAGES",
]

# --------------------------------------------------------------------------- B-RASP

_a, _b = B.token("a"), B.token("b")
_prev_a = B.rightmost("past", score=B.TRUE, value=_a.at_j).named("prev_a")
_same_prev = B.rightmost(
    "past", score=B.TRUE, value=(_a.at_i & _a.at_j) | (_b.at_i & _b.at_j)
).named("same_prev")
_first_a = B.leftmost("all", score=B.TRUE, value=_a.at_j).named("first_a")
_seen_a = B.rightmost("past", score=_a.at_j, value=B.TRUE).named("seen_a")
_ab_here = _b & _prev_a
_seen_ab = B.rightmost("past", score=_ab_here.at_j, value=B.TRUE).named("seen_ab")
_aa_here = _a & _prev_a
_seen_aa = B.rightmost("past", score=_aa_here.at_j, value=B.TRUE).named("seen_aa")
_seen_same = B.rightmost("past", score=_same_prev.at_j, value=B.TRUE).named("seen_same")
_first_eq = B.leftmost("all", score=B.TRUE, value=(_a.at_i & _a.at_j) | (_b.at_i & _b.at_j)).named(
    "first_is_mine"
)

# Dyck-1 of depth <= 2 over ( and ): in a valid prefix, a doubled pair "((" goes from depth 0 to
# 2 and "))" from 2 to 0, and the symbols alternate in between; so the word is valid iff it does
# not start with ")", no "((" follows a "((" and no "))" follows a "))" (or nothing), and it
# ends with ")" outside a "((" context.
_op, _cl = B.token("("), B.token(")")
_has_prev = B.rightmost("past", score=B.TRUE, value=B.TRUE).named("has_prev")
_prev_open = B.rightmost("past", score=B.TRUE, value=_op.at_j).named("prev_open")
_dbl_open = _op & _prev_open
_dbl_close = _cl & _has_prev & ~_prev_open
_in_open = B.rightmost("past", score=(_dbl_open | _dbl_close).at_j, value=_dbl_open.at_j).named(
    "in_open"
)
_bad = (_cl & ~_has_prev) | (_dbl_close & ~_in_open) | (_dbl_open & _in_open)
_seen_bad = B.rightmost("past", score=_bad.at_j, value=B.TRUE).named("seen_bad")

BRASP_PROGRAMS: dict[str, B.Program] = {
    "dyck1_depth2": B.Program(
        "dyck1_depth2",
        ("(", ")"),
        output=~(_seen_bad | _bad) & _cl & (_dbl_close | ~_in_open),
        empty=True,
    ),
    "contains_ab": B.Program("contains_ab", ("a", "b"), output=_seen_ab | _ab_here),
    "no_aa": B.Program("no_aa", ("a", "b"), output=~(_seen_aa | _aa_here), empty=True),
    "ab_star": B.Program(
        "ab_star", ("a", "b"), output=_first_a & _b & ~(_seen_same | _same_prev), empty=True
    ),
    "first_eq_last": B.Program("first_eq_last", ("a", "b"), output=_first_eq),
    "a_then_b": B.Program("a_then_b", ("a", "b"), output=_b | ~(_a | _seen_a), empty=True),
}

# --------------------------------------------------------------------------- C-RASP

_o, _c = C.token("("), C.token(")")
_x, _y = C.token("a"), C.token("b")
_dyck = C.count(C.count(_c) > C.count(_o)).eq(0) & C.count(_o).eq(C.count(_c))

CRASP_PROGRAMS: dict[str, C.Program] = {
    "dyck1": C.Program("dyck1", ("(", ")"), output=_dyck, empty=True),
    "majority": C.Program("majority", ("a", "b"), output=C.count(_x) > C.count(_y)),
    "ambm": C.Program(
        "ambm",
        ("a", "b"),
        output=C.count(_x & (C.count(_y) > 0)).eq(0) & C.count(_x).eq(C.count(_y)),
        empty=True,
    ),
    "a_minus_2b": C.Program(
        "a_minus_2b", ("a", "b"), output=(C.count(_x) - 2 * C.count(_y)).eq(0), empty=True
    ),
    "dyck1_ends_close": C.Program("dyck1_ends_close", ("(", ")"), output=_dyck & _c),
}

# --------------------------------------------------------------------------- reference languages


def _dyck1(w: Word) -> bool:
    depth = 0
    for s in w:
        depth += 1 if s == "(" else -1
        if depth < 0:
            return False
    return depth == 0


def _dyck1_depth2(w: Word) -> bool:
    depth = 0
    for s in w:
        depth += 1 if s == "(" else -1
        if not 0 <= depth <= 2:
            return False
    return depth == 0


def _ab_star(w: Word) -> bool:
    return len(w) % 2 == 0 and all(s == "ab"[k % 2] for k, s in enumerate(w))


def _ambm(w: Word) -> bool:
    m = len(w) // 2
    return len(w) % 2 == 0 and w == ("a",) * m + ("b",) * m


def _lang(
    name: str,
    alphabet: tuple[str, ...],
    contains: Callable[[Word], bool],
    description: str,
    dfa: Automaton | None = None,
    counters: CounterAutomaton | None = None,
) -> Language:
    return Language(
        name=name,
        alphabet=alphabet,
        contains=contains,
        description=description,
        automaton=dfa,
        counters=counters,
    )


def _counters(
    names: tuple[str, ...],
    states: int,
    rules: list[tuple[int, int, tuple[Any, ...], int, tuple[int, ...]]],
    accepting: list[tuple[int, tuple[Any, ...]]],
) -> CounterAutomaton:
    """A counter automaton with start state 0; a rule is (state, symbol, guard, target, increments)."""
    return CounterAutomaton(
        states=states,
        counters=names,
        symbols=2,
        start=0,
        rules=tuple(
            CounterRule(state=q, symbol=a, guard=g, target=t, add=add) for q, a, g, t, add in rules
        ),
        accepting=tuple(accepting),
    )


# The C-RASP references as counter automata (symbol 0 is ( or a, symbol 1 is ) or b): a depth d
# that ) may not take below 0, a difference #a − #b, or a phase (a's, then b's) with a depth.
_D = ("d",)
_OPEN = (0, 0, (), 0, (1,))
_CLOSE = (0, 1, linear(_D, {"d": 1}, ">=", 1), 0, (-1,))
_BALANCED = linear(_D, {"d": 1}, "==", 0)
COUNTER_AUTOMATA: dict[str, CounterAutomaton] = {
    "dyck1": _counters(_D, 1, [_OPEN, _CLOSE], [(0, _BALANCED)]),
    "majority": _counters(
        ("x",),
        1,
        [(0, 0, (), 0, (1,)), (0, 1, (), 0, (-1,))],
        [(0, linear(("x",), {"x": 1}, ">=", 1))],
    ),
    "ambm": _counters(
        _D,
        2,
        [
            _OPEN,
            (0, 1, linear(_D, {"d": 1}, ">=", 1), 1, (-1,)),
            (1, 1, linear(_D, {"d": 1}, ">=", 1), 1, (-1,)),
        ],
        [(0, _BALANCED), (1, _BALANCED)],
    ),
    "a_minus_2b": _counters(
        ("x",),
        1,
        [(0, 0, (), 0, (1,)), (0, 1, (), 0, (-2,))],
        [(0, linear(("x",), {"x": 1}, "==", 0))],
    ),
    "dyck1_ends_close": _counters(
        _D,
        2,
        [
            _OPEN,
            (1, 0, (), 0, (1,)),
            (*_CLOSE[:3], 1, (-1,)),
            (1, 1, linear(_D, {"d": 1}, ">=", 1), 1, (-1,)),
        ],
        [(1, _BALANCED)],
    ),
}
"""The C-RASP programs' reference languages as counter automata: ``network=language`` is then
proved for every length (see :func:`.claims.crasp_claims`)."""


def _dfa(accepting: set[int], *rows: tuple[int, int]) -> Automaton:
    """A DFA with start state 0; row q gives the states after the first and the second symbol."""
    return Automaton(states=len(rows), start=0, accepting=frozenset(accepting), delta=tuple(rows))


AB = ("a", "b")
REFERENCE_LANGUAGES: dict[str, Language] = {
    "contains_ab": _lang(
        "CONTAINS_AB",
        AB,
        lambda w: "ab" in "".join(w),
        "words containing ab",
        _dfa({2}, (1, 0), (1, 2), (2, 2)),
    ),
    "no_aa": _lang(
        "NO_AA",
        AB,
        lambda w: "aa" not in "".join(w),
        "words with no two adjacent a's",
        _dfa({0, 1}, (1, 0), (2, 0), (2, 2)),
    ),
    "ab_star": _lang("AB_STAR", AB, _ab_star, "(ab)*", _dfa({0}, (1, 2), (2, 0), (2, 2))),
    "first_eq_last": _lang(
        "FIRST_EQ_LAST",
        AB,
        lambda w: len(w) > 0 and w[0] == w[-1],
        "non-empty words whose first symbol is the last",
        _dfa({1, 3}, (1, 3), (1, 2), (1, 2), (4, 3), (4, 3)),
    ),
    "a_then_b": _lang(
        "A_THEN_B",
        AB,
        lambda w: all("b" in w[k + 1 :] for k, s in enumerate(w) if s == "a"),
        "every a is eventually followed by a b",
        _dfa({0}, (1, 0), (1, 0)),
    ),
    "dyck1_depth2": _lang(
        "DYCK1_DEPTH2",
        ("(", ")"),
        _dyck1_depth2,
        "balanced brackets of depth at most 2",
        _dfa({0}, (1, 3), (2, 0), (3, 1), (3, 3)),
    ),
    "dyck1": _lang(
        "DYCK1", ("(", ")"), _dyck1, "balanced brackets", counters=COUNTER_AUTOMATA["dyck1"]
    ),
    "majority": _lang(
        "MAJORITY",
        AB,
        lambda w: w.count("a") > w.count("b"),
        "more a's than b's",
        counters=COUNTER_AUTOMATA["majority"],
    ),
    "ambm": _lang("AMBM", AB, _ambm, "a^m b^m, m >= 0", counters=COUNTER_AUTOMATA["ambm"]),
    "a_minus_2b": _lang(
        "A_MINUS_2B",
        AB,
        lambda w: w.count("a") == 2 * w.count("b"),
        "#a = 2·#b",
        counters=COUNTER_AUTOMATA["a_minus_2b"],
    ),
    "dyck1_ends_close": _lang(
        "DYCK1_ENDS_CLOSE",
        ("(", ")"),
        lambda w: _dyck1(w) and len(w) > 0 and w[-1] == ")",
        "non-empty balanced brackets",
        counters=COUNTER_AUTOMATA["dyck1_ends_close"],
    ),
}

CONSTRUCTIONS = tuple(
    [
        program_construction(f"brasp-{k.replace('_', '-')}", p, REFERENCE_LANGUAGES[k], max_len=8)
        for k, p in BRASP_PROGRAMS.items()
    ]
    + [
        program_construction(f"crasp-{k.replace('_', '-')}", p, REFERENCE_LANGUAGES[k], max_len=8)
        for k, p in CRASP_PROGRAMS.items()
    ]
)
