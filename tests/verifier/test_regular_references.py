"""References become automata: a regular expression (or a DFA) given as a program's reference is
compiled to a minimal DFA (and, for the counter proofs, a counter automaton with no counters),
checked against Python's ``re`` on every short word; ``CounterAutomaton``'s named constructor;
a program module's regex reference then gets proofs for every length."""

from __future__ import annotations

import itertools
import re

import pytest

from netproof.constructions.rasp.modules import ProgramModuleError, program_constructions
from netproof.verifier.campaign import prove
from netproof.verifier.claims import Automaton
from netproof.verifier.claims.counting import CounterAutomaton, parse_guard
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.claims.regular import RegexError, minimal_automaton, regex_automaton

ALPHABET = ("a", "b", "c")
PATTERNS = (
    "",
    "a",
    "(ab)*",
    "[ab]*a[ab]*",
    "a*b*c*",
    "(a|b)*abb",
    "a{2,3}b?",
    "a{2,}c",
    "(?:a|ba)+c?",
    "[^c]*(c[^b]*)?",
    ".*b.",
    "a|",
    "(a(a(ab)*b)*b)*",
    "((ab)*c)*",
    "^a+$",
    "[a-b]{0,2}c",
    "ab*?a",
    "(a|b|c)*c(a|b|c){2}",
)


def _words(n: int) -> list[tuple[int, ...]]:
    return [w for m in range(n + 1) for w in itertools.product(range(len(ALPHABET)), repeat=m)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_regex_automaton_agrees_with_python_re_on_every_short_word(pattern: str) -> None:
    dfa = regex_automaton(pattern, ALPHABET)
    compiled = re.compile(pattern)
    for w in _words(7):
        text = "".join(ALPHABET[i] for i in w)
        assert dfa.accepts(w) == (compiled.fullmatch(text) is not None), (pattern, text)


def test_equal_languages_give_the_same_minimal_automaton() -> None:
    star = regex_automaton("[ab]*", ("a", "b"))
    assert regex_automaton("(a|b)*", ("a", "b")) == star
    assert regex_automaton("(a*b*)*", ("a", "b")) == star
    assert star.states == 1
    assert regex_automaton("(ab)*", ("a", "b")).states == 3  # start/accept, after a, dead


def test_a_dfa_reference_is_minimized() -> None:
    # four states, two of them copies of the others: even/odd number of a's
    redundant = Automaton(
        states=4,
        start=0,
        accepting=frozenset({0, 2}),
        delta=((1, 2), (2, 1), (3, 0), (0, 3)),
    )
    small = minimal_automaton(redundant)
    assert small.states == 2
    for w in _words(6):
        if all(s < 2 for s in w):
            assert small.accepts(w) == redundant.accepts(w)


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("a(?=b)", "'(?=' at offset 1"),
        ("(a)\\1", "'\\\\1' at offset 3"),
        ("\\d", "'\\\\d' at offset 0"),
        ("(a", "an unclosed '('"),
        ("a)", "an unmatched ')'"),
        ("*a", "'*' with nothing to repeat"),
        ("a{3,1}", "the count {3,1}"),
    ],
)
def test_what_is_not_a_regular_operator_is_refused_naming_it(pattern: str, named: str) -> None:
    with pytest.raises(RegexError, match=re.escape(named)):
        regex_automaton(pattern, ("a", "b"))


def test_a_symbol_outside_the_alphabet_is_refused_naming_the_alphabet() -> None:
    with pytest.raises(RegexError, match=r"'x' at offset 1, which is not a symbol of the alphabet"):
        regex_automaton("ax", ("a", "b"))


def test_a_dfa_as_a_counter_automaton_without_counters_accepts_the_same_words() -> None:
    dfa = regex_automaton("(a(a(ab)*b)*b)*", ("a", "b"))
    ca = CounterAutomaton.from_automaton(dfa)
    assert ca.counters == () and ca.states == dfa.states - 1  # the dead state is left out
    for m in range(9):
        for w in itertools.product(range(2), repeat=m):
            assert ca.accepts(w) == dfa.accepts(w)


def test_a_counter_automaton_written_with_names_is_the_one_written_with_indices() -> None:
    ambm = CounterAutomaton.from_steps(
        alphabet=("a", "b"),
        counters=("n",),
        steps=[
            ("as", "a", "", "as", {"n": 1}),
            ("as", "b", "n >= 1", "bs", {"n": -1}),
            ("bs", "b", "n >= 1", "bs", {"n": -1}),
        ],
        accept=[("as", "n == 0"), ("bs", "n == 0")],
    )
    for m in range(9):
        for w in itertools.product(range(2), repeat=m):
            k = len(w) // 2
            assert ambm.accepts(w) == (len(w) % 2 == 0 and w == (0,) * k + (1,) * k)
    assert parse_guard(("x", "y"), "x - 2*y >= -1 and y < 3") == (((1, -2), -1), ((0, -1), -2))
    with pytest.raises(ValueError, match="'x = 1' is not a comparison"):
        parse_guard(("x",), "x = 1")
    with pytest.raises(ValueError, match=r"adds to \['z'\], not among the counters"):
        CounterAutomaton.from_steps(("a",), ("x",), [("q", "a", "", "q", {"z": 1})], [])


_a, _b, _c = B.token("a"), B.token("b"), B.token("c")
_seen_c = B.rightmost("past", score=_c.at_j, value=B.TRUE).named("seen_c")
_bad = _b & _seen_c
_seen_bad = B.rightmost("past", score=_bad.at_j, value=B.TRUE).named("seen_bad")
NO_B_AFTER_C = B.Program("no_b_after_c", ("a", "b", "c"), output=~(_seen_bad | _bad), empty=True)


def test_a_regex_reference_of_a_brasp_program_is_compared_for_every_length() -> None:
    (c,) = program_constructions({"no-b-after-c": (NO_B_AFTER_C, r"[ab]*(c[ac]*)?")}, max_len=4)
    assert "a minimal DFA of 3 states" in c.language.description
    run = prove(c, claims=["program=language"])
    (r,) = run.results
    assert r.every_length, r.verdict
    assert "3 states" in r.verdict.detail


def test_a_wrong_regex_reference_is_refuted_with_a_word() -> None:
    (c,) = program_constructions({"no-b-after-c": (NO_B_AFTER_C, r"[ab]*(c[abc]*)?")}, max_len=4)
    (r,) = prove(c, claims=["program=language"]).results
    assert r.verdict.__class__.__name__ == "Refuted"
    assert "'cb'" in r.verdict.detail


def test_a_regex_reference_of_a_crasp_program_gets_a_counter_automaton() -> None:
    o, cl = C.token("a"), C.token("b")
    depth1 = (
        C.count(C.count(cl) > C.count(o)).eq(0)
        & C.count(C.count(o) > C.count(cl) + 1).eq(0)
        & C.count(o).eq(C.count(cl))
    )
    program = C.Program("dyck1_depth1", ("a", "b"), output=depth1, empty=True)
    (c,) = program_constructions({"dyck1-depth1": (program, "(ab)*")}, max_len=4)
    assert c.language.counters is not None and c.language.counters.counters == ()
    ids = [claim.id for claim in c.claims({})]
    assert "network=language" in ids  # proved for every length from the counting lemmas


def test_a_regex_outside_the_regular_subset_falls_back_to_the_bound_and_says_why() -> None:
    (c,) = program_constructions({"no-b-after-c": (NO_B_AFTER_C, r"(?![abc]*cb)[abc]*")})
    assert c.language.automaton is None
    assert "no automaton: " in c.language.description
    assert "checked up to the bound only" in c.language.description


def test_a_regex_naming_a_symbol_outside_the_alphabet_is_a_module_error() -> None:
    with pytest.raises(ProgramModuleError, match=r"'d' at offset 0, which is not a symbol"):
        program_constructions({"no-b-after-c": (NO_B_AFTER_C, r"d*")})
