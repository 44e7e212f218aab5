"""LTL with past and future operators: the text syntax (unicode and ASCII, printed forms read
back, one-line errors), the semantics on hand-checked words (strict since and until, reflexive
once/historically/eventually/globally, evaluation at the last position, the empty word), and
the automaton built without B-RASP against the direct evaluator on every word up to length 7."""

from __future__ import annotations

import itertools
import re

import pytest

from netproof.verifier.claims.ltl import (
    FALSE,
    TRUE,
    And,
    Atom,
    Implies,
    LtlError,
    Not,
    Since,
    Until,
    holds,
    holds_at,
    ltl_automaton,
    ltl_language,
    parse_ltl,
    show,
    size,
)

ABC = ("a", "b", "c")

# past, future and mixed, of growing size
FORMULAS = (
    "a S b",
    "Y a",
    "X a",
    "a U b",
    "(a | b) S c",
    "H(b -> !O c)",
    "H(a -> F b)",
    "H(a -> X b)",
    "H(F c)",
    "F(a & Y b)",
    "O(a & X(b U c))",
    "H(a -> (b U c))",
    "H(Y a -> X b)",
    "O(a S b) & !Y c",
    "H(b -> Y(a S c))",
    "O(c & X G a)",
    "H(a -> F(b & F c))",
    "!(a S (b & X c))",
    "H((a -> Y b) & (b -> X c))",
    "Y Y a -> O(c U (a & !X a))",
    "H(G a | F b)",
    "O(a & !(true U b))",
)


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def test_the_operators_parse_to_their_trees_with_the_documented_precedence() -> None:
    a, b, c = Atom("a"), Atom("b"), Atom("c")
    assert parse_ltl("a S b", ABC) == Since(a, b)
    assert parse_ltl("a & b S c", ABC) == And(a, Since(b, c))  # S binds tighter than &
    assert parse_ltl("a -> b -> c", ABC) == Implies(a, Implies(b, c))
    assert parse_ltl("a U b U c", ABC) == Until(a, Until(b, c))
    assert parse_ltl("!a S b", ABC) == Since(Not(a), b)
    assert parse_ltl("true & false", ABC) == And(TRUE, FALSE)


def test_unicode_and_ascii_spellings_are_the_same_formula() -> None:
    assert parse_ltl("¬a ∧ b ∨ c → ⊤", ABC) == parse_ltl("!a & b | c -> true", ABC)
    assert parse_ltl("~a", ABC) == parse_ltl("!a", ABC)
    assert parse_ltl("GFa", ABC) == parse_ltl("G F a", ABC)


@pytest.mark.parametrize("text", FORMULAS)
def test_the_printed_form_reads_back_to_the_same_formula(text: str) -> None:
    f = parse_ltl(text, ABC)
    assert parse_ltl(show(f), ABC) == f


def test_symbols_that_are_operator_letters_or_punctuation_are_quoted() -> None:
    f = parse_ltl("'(' S 'F'", ("(", ")", "F"))
    assert f == Since(Atom("("), Atom("F"))
    assert show(f) == "'(' S 'F'"
    assert parse_ltl(show(f), ("(", ")", "F")) == f
    assert size(parse_ltl("H(b -> !O c)", ABC)) == 6


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a S", "ends at offset 3 where a formula is expected; write a formula after 'S'"),
        ("(a", "ends at offset 2 where ')' is expected"),
        ("a b", "has 'b' at offset 2 where an operator is expected; join two formulas"),
        ("a # b", "has '#' at offset 2, which is not part of LTL syntax"),
        ("d", "has 'd' at offset 0, which is neither a symbol of the alphabet {a, b, c}"),
        ("'d'", "quotes 'd' at offset 0, which is not a symbol of the alphabet"),
        ("'a", "has an unclosed quote ' at offset 0"),
        (
            "",
            "ends at offset 0 where a formula is expected; write a formula (the formula is empty)",
        ),
        (")", "has ')' at offset 0 where a formula is expected"),
    ],
)
def test_a_bad_formula_is_refused_in_one_line_naming_the_offset_and_the_fix(
    text: str, message: str
) -> None:
    with pytest.raises(LtlError, match=r"^LTL formula .*" + re.escape(message)) as err:
        parse_ltl(text, ABC)
    assert "\n" not in str(err.value)


def test_a_punctuation_symbol_written_bare_is_refused_with_the_quoted_form() -> None:
    with pytest.raises(
        LtlError, match=r"the symbols \( are also syntax: write them quoted, as '\('"
    ):
        parse_ltl("a S (", ("a", "("))  # '(' groups; the symbol needs quotes
    assert parse_ltl("a S #", ("a", "#")) == Since(Atom("a"), Atom("#"))  # not syntax: bare


def test_since_and_until_are_strict_and_once_is_reflexive() -> None:
    s = parse_ltl("a S b", ABC)
    assert [holds_at(s, "bab", i) for i in (1, 2, 3)] == [False, True, True]
    assert not holds_at(s, "b", 1)  # strict: no j < 1
    assert not holds_at(s, "bca", 3)  # c breaks the run of a's
    u = parse_ltl("a U b", ABC)
    assert [holds_at(u, "bab", i) for i in (1, 2, 3)] == [True, True, False]
    o = parse_ltl("O c", ABC)
    assert holds_at(o, "c", 1) and not holds_at(parse_ltl("true S c", ABC), "c", 1)
    y = parse_ltl("Y a", ABC)
    assert [holds_at(y, "aab", i) for i in (1, 2, 3)] == [False, True, True]
    assert not holds_at(parse_ltl("X a", ABC), "aa", 2)  # no next at the last position


def test_a_word_is_in_the_language_when_the_formula_holds_at_its_last_position() -> None:
    every_a_then_b = parse_ltl("H(a -> F b)", ABC)
    assert [holds(every_a_then_b, w) for w in ("acb", "aba", "cc", "b")] == [
        True,
        False,
        True,
        True,
    ]
    g = parse_ltl("G(a -> F b)", ABC)  # at the last position: just a -> b there
    assert holds(g, "ab") and holds(g, "aab") and not holds(g, "ba")
    assert holds(every_a_then_b, "") is False and holds(every_a_then_b, "", empty=True) is True
    with pytest.raises(ValueError, match=r"position i=4 is outside 1..3"):
        holds_at(every_a_then_b, "abc", 4)


@pytest.mark.parametrize("text", FORMULAS)
def test_the_automaton_accepts_exactly_the_words_whose_last_position_satisfies_the_formula(
    text: str,
) -> None:
    f = parse_ltl(text, ABC)
    for empty, max_len in ((False, 7), (True, 4)):
        dfa = ltl_automaton(f, ABC, empty=empty)
        wrong = [
            w
            for w in _words(ABC, max_len)
            if dfa.accepts([ABC.index(s) for s in w]) != holds(f, w, empty=empty)
        ]
        assert wrong == [], (text, empty, wrong[:3])


def test_the_automaton_is_minimal_and_equal_formulas_give_equal_automata() -> None:
    # H(b -> !O c) is "no b after the first c": start (ε rejected), before a c, after it, dead
    assert ltl_automaton(parse_ltl("H(b -> !O c)", ABC), ABC).states == 4
    assert ltl_automaton(parse_ltl("a S b", ABC), ABC) == ltl_automaton(
        parse_ltl("Y(b | (a & a S b))", ABC), ABC
    )
    assert ltl_automaton(parse_ltl("O a", ABC), ABC) == ltl_automaton(parse_ltl("!H !a", ABC), ABC)


def test_a_symbol_outside_the_alphabet_and_a_too_large_automaton_are_refused() -> None:
    with pytest.raises(LtlError, match=r"reads \['c'\], not symbols of the alphabet \('a', 'b'\)"):
        ltl_automaton(parse_ltl("a S c", ABC), ("a", "b"))
    with pytest.raises(LtlError, match=r"passes max_states=2 subsets; raise max_states="):
        ltl_automaton(parse_ltl("Y Y a", ABC), ABC, max_states=2)


def test_the_language_of_a_formula_carries_its_automaton_and_membership() -> None:
    lang = ltl_language(parse_ltl("H(a -> F b)", ABC), ABC, empty=True)
    assert lang.automaton is not None and lang.contains(()) and not lang.contains(("a",))
    assert "H (a → F b)" in lang.description
