"""B-RASP and C-RASP as plain data: the interpreters on hand-checked words, the printers, and
the errors bad programs get."""

from __future__ import annotations

import pytest

from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C

a, b = B.token("a"), B.token("b")


def test_leftmost_and_rightmost_pick_the_extreme_position_that_passes_the_score() -> None:
    # value: the position's own symbol is a; score: the key is b (for leftmost/rightmost over all j).
    first_b_next = B.leftmost("all", score=b.at_j, value=B.TRUE, default=B.FALSE)
    assert B.evaluate(first_b_next, "aab") == (True, True, True)
    prev_is_a = B.rightmost("past", score=B.TRUE, value=a.at_j, default=B.FALSE)
    # positions 1..4 of "abba": nothing before 1 (default 0), then a, b, b
    assert B.evaluate(prev_is_a, "abba") == (False, True, False, False)
    next_is_a = B.leftmost("future", score=B.TRUE, value=a.at_j, default=B.TRUE)
    assert B.evaluate(next_is_a, "abba") == (False, False, True, True)


def test_an_empty_score_set_gives_the_default_read_at_the_query_position() -> None:
    op = B.rightmost("past", score=B.FALSE, value=B.TRUE, default=b)
    assert B.evaluate(op, "abab") == (False, True, False, True)


def test_a_score_that_reads_the_query_position_compares_the_two_positions() -> None:
    same_as_first = B.leftmost("all", score=B.TRUE, value=(a.at_i & a.at_j) | (b.at_i & b.at_j))
    assert B.evaluate(same_as_first, "abaa") == (True, False, True, True)


def test_brasp_acceptance_reads_the_last_position_and_the_declared_empty_word() -> None:
    prog = B.Program("ends_a", ("a", "b"), output=a, empty=True)
    assert [B.accepts(prog, w) for w in ("", "a", "ab", "ba")] == [True, True, False, True]


def test_brasp_printer_uses_the_papers_notation() -> None:
    op = B.leftmost("future", score=~b.at_j, value=a.at_i & b.at_j, default=B.TRUE).named("look")
    text = B.show(B.Program("p", ("a", "b"), output=op))
    assert "look(i) = ◁_j [j > i, ¬Q_b(j)] Q_a(i) ∧ Q_b(j) : 1" in text
    assert text.splitlines()[-1] == "output(i) = look(i)"


def test_brasp_programs_are_frozen_data_that_compare_by_structure() -> None:
    assert (a & b) == (a & b)
    with pytest.raises(AttributeError, match=r"cannot assign|frozen"):
        (a & b).left = b  # type: ignore[misc]


def test_bad_brasp_programs_get_errors_that_name_the_value_and_the_fix() -> None:
    with pytest.raises(ValueError, match=r"mask='before' is not a B-RASP mask; use 'past'"):
        B.leftmost("before", score=B.TRUE, value=B.TRUE)
    with pytest.raises(TypeError, match=r"Q_a\(i\) is not read at a position; write Q_a\(i\).at_i"):
        B.leftmost("past", score=a, value=B.TRUE)
    with pytest.raises(TypeError, match=r"default: Q_a\(j\) reads a position"):
        B.leftmost("past", score=B.TRUE, value=B.TRUE, default=a.at_j)
    with pytest.raises(ValueError, match=r"reads token\('c'\), which is not in its alphabet"):
        B.Program("p", ("a", "b"), output=B.token("c"))
    with pytest.raises(TypeError, match=r"not a Python bool; combine vectors with ~, & and \|"):
        bool(a and b)
    with pytest.raises(ValueError, match=r"symbol 'c' of \('a', 'c'\) is not in program"):
        B.accepts(B.Program("p", ("a", "b"), output=a), "ac")


def test_crasp_counts_arithmetic_and_conditionals_on_hand_checked_words() -> None:
    x, y = C.token("a"), C.token("b")
    assert C.evaluate(C.count(x), "abaa") == (1, 1, 2, 3)
    assert C.evaluate(C.count(x) - 2 * C.count(y) + 1, "abaa") == (2, 0, 1, 2)
    assert C.evaluate(C.where(x, C.count(x), -C.count(y)), "abab") == (1, -1, 2, -2)
    assert C.evaluate(C.count(x) >= C.count(y), "bbaa") == (False, False, False, True)
    assert C.evaluate(C.count(x).eq(1), "aab") == (True, False, False)
    assert C.evaluate(C.count(x).ne(C.count(y)), "ab") == (True, False)
    assert C.evaluate(2 > C.count(y), "bbb") == (True, False, False)


def test_crasp_dyck1_program_accepts_exactly_the_balanced_words_checked_by_hand() -> None:
    o, c = C.token("("), C.token(")")
    dyck = C.Program(
        "dyck1",
        ("(", ")"),
        output=C.count(C.count(c) > C.count(o)).eq(0) & C.count(o).eq(C.count(c)),
        empty=True,
    )
    assert [C.accepts(dyck, w) for w in ("", "()", "(())()", ")(", "(()", "())(")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_crasp_printer_uses_the_papers_notation() -> None:
    x = C.token("a")
    bal = (C.count(x) - 2 * C.count(C.token("b"))).named("bal")
    text = C.show(C.Program("p", ("a", "b"), output=(bal < 0).named("neg")))
    assert "bal(i) = #_{j≤i} Q_a(j) − 2·(#_{j≤i} Q_b(j))" in text
    assert "neg(i) = bal(i) < 0" in text


def test_equality_of_a_count_with_a_number_is_refused_naming_eq() -> None:
    x = C.token("a")
    with pytest.raises(TypeError, match=r"use \.eq\(\.\.\.\).*count\(token\('a'\)\)\.eq\(0\)"):
        C.count(x) == 0  # noqa: B015
    with pytest.raises(TypeError, match=r"== on a C-RASP count is not a comparison"):
        C.count(x) != 0  # noqa: B015
    assert C.count(x) == C.count(x) and C.count(x) != C.count(C.token("b"))  # structural


def test_a_count_modulo_a_number_is_refused_saying_parity_is_not_expressible_in_crasp() -> None:
    with pytest.raises(
        TypeError, match=r"#_\{j≤i\} Q_a\(j\) % 2: C-RASP has no modular counting.*PARITY"
    ):
        C.count(C.token("a")) % 2


def test_a_message_about_a_wrong_operand_shows_the_vector_in_the_papers_notation() -> None:
    with pytest.raises(TypeError, match=r"C-RASP count got #_\{j≤i\} Q_a\(j\) \(Count\)"):
        C.count(C.count(C.token("a")))


def test_bad_crasp_programs_get_errors_that_name_the_value_and_the_fix() -> None:
    x = C.token("a")
    with pytest.raises(TypeError, match=r"multiplies a count by an int constant only, got 0.5"):
        C.count(x) * 0.5
    with pytest.raises(TypeError, match=r"C-RASP \+ got 'b' \(str\); give a count vector"):
        C.count(x) + "b"  # type: ignore[operator]
    with pytest.raises(
        TypeError,
        match=r"output=#_\{j≤i\} Q_a\(j\) is a count; the output must be a Boolean vector: "
        r"compare it",
    ):
        C.Program("p", ("a",), output=C.count(x))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not a Python bool"):
        bool(C.count(x) < C.count(x))
    with pytest.raises(
        ValueError, match=r"name 'my name' must be a non-empty string without spaces"
    ):
        C.count(x).named("my name")
