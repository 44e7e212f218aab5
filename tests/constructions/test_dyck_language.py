"""Dyck(k, D) reference tools (verifier/claims/dyck.py): membership, stacks, the allowed-next
oracle (G1 and G2 of spec §3.1), the Appendix-D samplers and the close-bracket metric (§3.7).

The reference definitions here are written independently of the module: membership by deleting
matched pairs, and the Dyck words themselves by expanding the grammar S → ε | ⟨_τ S ⟩_τ S."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from fractions import Fraction
from functools import cache

import pytest

from netproof.verifier.claims.dyck import (
    DYCK,
    END,
    K_VALUES,
    TABLE1,
    CloseAccuracy,
    allowed_next,
    bracket,
    close_accuracy,
    close_symbol,
    depth_profile,
    dyck_alphabet,
    format_word,
    hewitt_dataset,
    hewitt_next_distribution,
    is_dyck,
    open_symbol,
    parse_word,
    sample_hewitt,
    sample_pcfg,
    stack_after,
)

PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
SMALL = [(k, D) for k in (1, 2) for D in (1, 2, 3)]


# --------------------------------------------------------------------------- independent references


def brute_is_dyck(word: tuple[str, ...], D: int) -> bool:
    """Delete every adjacent matched pair at once, round after round; a balanced word vanishes
    after exactly (its maximum depth) rounds."""
    rounds = 0
    while word:
        kept: list[str] = []
        i = 0
        while i < len(word):
            if i + 1 < len(word) and PAIRS.get(word[i]) == word[i + 1]:
                i += 2
            else:
                kept.append(word[i])
                i += 1
        if len(kept) == len(word):
            return False
        word = tuple(kept)
        rounds += 1
    return rounds <= D


@cache
def grammar_words(pairs: int, depth: int, k: int) -> frozenset[tuple[str, ...]]:
    """Every word of Dyck(k, depth) with exactly ``pairs`` pairs, from S → ε | ⟨_τ S ⟩_τ S."""
    if pairs == 0:
        return frozenset({()})
    if depth == 0:
        return frozenset()
    out: set[tuple[str, ...]] = set()
    for inner in range(pairs):
        for o, c in list(PAIRS.items())[:k]:
            for a in grammar_words(inner, depth - 1, k):
                for b in grammar_words(pairs - 1 - inner, depth, k):
                    out.add((o, *a, c, *b))
    return frozenset(out)


def prefixes(words: frozenset[tuple[str, ...]]) -> frozenset[tuple[str, ...]]:
    return frozenset(w[:i] for w in words for i in range(len(w) + 1))


def all_words(k: int, max_len: int) -> list[tuple[str, ...]]:
    alphabet = dyck_alphabet(k)
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def uniform_on_allowed(prefix: tuple[str, ...], k: int, D: int) -> dict[str, Fraction]:
    allowed, end_ok = allowed_next(prefix, k, D)
    symbols = [*allowed, *([END] if end_ok else [])]
    return {s: Fraction(1, len(symbols)) for s in symbols}


# --------------------------------------------------------------------------- alphabet


def test_the_alphabet_lists_open_then_close_for_each_type_in_order() -> None:
    assert dyck_alphabet(1) == ("(", ")")
    assert dyck_alphabet(4) == ("(", ")", "[", "]", "{", "}", "<", ">")
    assert dyck_alphabet(5) == ("(1", ")1", "(2", ")2", "(3", ")3", "(4", ")4", "(5", ")5")
    assert len(dyck_alphabet(128)) == 256


def test_bracket_reads_both_spellings_and_round_trips_with_open_and_close_symbol() -> None:
    for k in (1, 4, 5, 12):
        for t in range(1, k + 1):
            assert bracket(open_symbol(t, k)) == (True, t)
            assert bracket(close_symbol(t, k)) == (False, t)
    assert bracket("(") == bracket("(1") == (True, 1)
    assert bracket(">") == (False, 4)


@pytest.mark.parametrize("symbol", ["x", "", "(0", "(01", ")a", "((", "END"])
def test_bracket_rejects_a_non_bracket_naming_it(symbol: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"symbol={symbol!r} is not a bracket")):
        bracket(symbol)


def test_words_parse_and_format_per_k() -> None:
    assert parse_word("([])[]", 2) == ("(", "[", "]", ")", "[", "]")
    assert parse_word("(1 (6 )6 )1", 6) == ("(1", "(6", ")6", ")1")
    assert format_word(parse_word("(1 (6 )6 )1", 6), 6) == "(1 (6 )6 )1"
    assert format_word(("(", "]"), 2) == "(]"
    with pytest.raises(
        ValueError, match=r"symbol='\[' in text='\(\[' is not in the alphabet of k=1"
    ):
        parse_word("([", 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: dyck_alphabet(0), r"k=0 must be >= 1"),
        (lambda: is_dyck((), 0, 1), r"k=0 must be >= 1"),
        (lambda: is_dyck((), 2, 0), r"D=0 must be >= 1"),
        (lambda: is_dyck((), 2, -3), r"D=-3 must be >= 1"),
        (lambda: DYCK(0, 2), r"k=0 must be >= 1"),
        (lambda: allowed_next((), 1, 0), r"D=0 must be >= 1"),
        (lambda: open_symbol(3, 2), r"t=3 is not a bracket type of Dyck with k=2"),
        (lambda: close_symbol(0, 2), r"t=0 is not a bracket type of Dyck with k=2"),
        (lambda: allowed_next(("[",), 1, 2), r"symbol='\[' .* not in the alphabet of k=1"),
        (lambda: allowed_next(("(", ")"), 1, 2, n=3), r"n=3 leaves room for n − 2 = 1 brackets"),
        (lambda: hewitt_next_distribution((")",), 1, 2), r"prefix=\('\)',\) is not a prefix"),
    ],
)
def test_bad_parameters_raise_value_error_naming_the_value(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_a_non_integer_k_is_a_type_error_that_shows_the_fix() -> None:
    with pytest.raises(TypeError, match=r"k=2.0 must be an int >= 1, e.g. k=2"):
        dyck_alphabet(2.0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- membership and stacks


@pytest.mark.parametrize(
    ("text", "k", "D", "member"),
    [
        ("", 1, 1, True),
        ("([])[]", 2, 2, True),
        ("([])[]", 2, 1, False),
        (")(", 2, 2, False),
        ("([)]", 2, 2, False),
        ("((()))", 1, 2, False),
        ("((()))", 1, 3, True),
        ("(()", 1, 3, False),
        ("{<>}()", 4, 2, True),
    ],
)
def test_is_dyck_on_known_examples(text: str, k: int, D: int, member: bool) -> None:
    assert is_dyck(parse_word(text, k), k, D) is member


def test_is_dyck_rejects_symbols_outside_the_alphabet_of_k() -> None:
    assert not is_dyck(("[", "]"), 1, 2)
    assert not is_dyck(("(1", ")1"), 2, 2)  # the k > 4 spelling is not in the k = 2 alphabet
    assert is_dyck(("(1", "(5", ")5", ")1"), 5, 2)


@pytest.mark.parametrize(("k", "D"), SMALL)
def test_is_dyck_agrees_with_pair_deletion_on_every_word_up_to_length_8(k: int, D: int) -> None:
    disagreements = [w for w in all_words(k, 8) if is_dyck(w, k, D) != brute_is_dyck(w, D)]
    assert disagreements == []


@pytest.mark.parametrize(("k", "D"), SMALL)
def test_the_grammar_reference_generates_exactly_the_dyck_words_up_to_length_8(
    k: int, D: int
) -> None:
    members = {w for w in all_words(k, 8) if is_dyck(w, k, D)}
    assert members == set().union(*(grammar_words(m, D, k) for m in range(5)))


def test_depth_profile_and_stack_after_follow_the_scan() -> None:
    w = parse_word("([]){", 4)
    assert depth_profile(w) == [1, 2, 1, 0, 1]
    assert stack_after(w) == [3]
    assert stack_after(()) == []
    assert stack_after(parse_word("([", 2)) == [1, 2]
    assert stack_after(parse_word("(]", 2)) is None
    assert stack_after(parse_word("())", 1)) is None
    assert depth_profile(parse_word("())", 1)) == [1, 0, -1]
    assert stack_after(("(", ")1")) is None  # a close in the other spelling does not match


def test_the_language_is_named_cached_and_uses_is_dyck() -> None:
    L = DYCK(2, 2)
    assert L is DYCK(2, 2)
    assert L.name == "Dyck(2,2)"
    assert L.alphabet == ("(", ")", "[", "]")
    assert L.contains(parse_word("([])[]", 2))
    assert not L.contains(parse_word("([])[", 2))
    assert DYCK(2, 3) is not L


# --------------------------------------------------------------------------- allowed next (G1, G2)


@pytest.mark.parametrize(
    ("text", "k", "D", "allowed", "end"),
    [
        ("", 2, 2, ("(", "["), True),
        ("(", 2, 2, ("(", ")", "["), False),
        ("([", 2, 2, ("]",), False),
        ("([]", 2, 2, ("(", ")", "["), False),
        ("([])", 2, 2, ("(", "["), True),
        ("((", 1, 3, ("(", ")"), False),
        ("(((", 1, 3, (")",), False),
        ("(((", 1, 2, (), False),
        ("((()", 1, 2, (), False),  # a prefix deeper than D is invalid even after closing
        ("(]", 2, 2, (), False),
        (")", 2, 2, (), False),
    ],
)
def test_allowed_next_g1_on_hand_examples(
    text: str, k: int, D: int, allowed: tuple[str, ...], end: bool
) -> None:
    assert allowed_next(parse_word(text, k), k, D) == (allowed, end)


@pytest.mark.parametrize(("k", "D"), SMALL)
def test_g1_allows_exactly_the_symbols_that_keep_a_prefix_of_some_dyck_word(k: int, D: int) -> None:
    # prefix + symbol has length <= 8 and needs at most D more closes: words up to 6 pairs suffice
    valid = prefixes(frozenset().union(*(grammar_words(m, D, k) for m in range(7))))
    words = set().union(*(grammar_words(m, D, k) for m in range(5)))
    for u in all_words(k, 7):
        expected = tuple(s for s in dyck_alphabet(k) if (*u, s) in valid)
        assert allowed_next(u, k, D) == (expected, u in words), u


@pytest.mark.parametrize(("k", "D"), SMALL)
def test_g2_allows_exactly_the_symbols_that_complete_within_n_on_every_completable_prefix(
    k: int, D: int
) -> None:
    for n in range(2, 12):
        brackets = n - 2
        full = grammar_words(brackets // 2, D, k) if brackets % 2 == 0 else frozenset()
        valid = prefixes(full)
        for u in valid:
            expected = tuple(s for s in dyck_alphabet(k) if (*u, s) in valid)
            assert allowed_next(u, k, D, n=n) == (expected, u in full), (n, u)


@pytest.mark.parametrize(("k", "D"), SMALL)
def test_following_the_g2_sets_generates_exactly_the_dyck_words_of_length_n(k: int, D: int) -> None:
    for n in range(2, 13):
        generated: set[tuple[str, ...]] = set()
        frontier: list[tuple[str, ...]] = [()]
        while frontier:
            u = frontier.pop()
            allowed, end_ok = allowed_next(u, k, D, n=n)
            if end_ok:
                generated.add(u)
            frontier.extend((*u, s) for s in allowed)
        expected = grammar_words((n - 2) // 2, D, k) if n % 2 == 0 else frozenset()
        assert generated == expected, n


def test_g2_forbids_opens_that_cannot_close_in_time_and_the_end_before_the_last_slot() -> None:
    assert allowed_next((), 2, 3, n=4) == (("(", "["), False)
    assert allowed_next((), 2, 3, n=2) == ((), True)
    assert allowed_next(("(",), 2, 3, n=4) == ((")",), False)
    assert allowed_next(("(",), 2, 3, n=6) == (("(", ")", "["), False)
    assert allowed_next(("(", ")"), 2, 3, n=6) == (("(", "["), False)
    assert allowed_next(("(", ")"), 2, 3, n=4) == ((), True)


# --------------------------------------------------------------------------- Hewitt sampler


def test_table1_lists_the_appendix_d_lengths() -> None:
    assert K_VALUES == (2, 8, 32, 128)
    assert sorted(TABLE1) == [3, 5, 10, 15]
    for (lo, hi), (test_lo, test_hi) in TABLE1.values():
        assert (lo, test_lo, test_hi) == (1, hi + 1, 2 * hi)
    assert TABLE1[10] == ((1, 700), (701, 1400))


@pytest.mark.parametrize(
    ("k", "D", "min_len", "max_len"), [(1, 1, 0, 5), (2, 3, 1, 40), (8, 3, 85, 168), (5, 2, 6, 7)]
)
def test_the_hewitt_sampler_only_produces_dyck_words_whose_length_with_end_is_in_range(
    k: int, D: int, min_len: int, max_len: int
) -> None:
    rng = random.Random(7)
    lengths = set()
    for _ in range(200):
        w = sample_hewitt(rng, k, D, min_len=min_len, max_len=max_len)
        assert is_dyck(w, k, D)
        assert min_len <= len(w) + 1 <= max_len
        assert len(w) >= min_len  # an END before min_len brackets is redrawn
        lengths.add(len(w) + 1)
    assert len(lengths) > 1 or max_len - min_len <= 2


def test_the_hewitt_sampler_and_dataset_are_deterministic_for_a_seed() -> None:
    a = [sample_hewitt(random.Random(3), 2, 3, min_len=1, max_len=84) for _ in range(2)]
    assert a[0] == a[1]
    d1 = hewitt_dataset(11, 8, 3, min_len=1, max_len=84, token_budget=2_000)
    assert d1 == hewitt_dataset(11, 8, 3, min_len=1, max_len=84, token_budget=2_000)
    assert d1 != hewitt_dataset(12, 8, 3, min_len=1, max_len=84, token_budget=2_000)


def test_the_hewitt_dataset_fills_the_token_budget_counting_end() -> None:
    words = hewitt_dataset(1, 2, 5, min_len=1, max_len=180, token_budget=3_000)
    tokens = [len(w) + 1 for w in words]
    assert sum(tokens) >= 3_000 > sum(tokens[:-1])
    assert all(is_dyck(w, 2, 5) and 1 <= n <= 180 for w, n in zip(words, tokens, strict=True))


def test_the_hewitt_step_frequencies_match_the_pdfa() -> None:
    k, D = 2, 3
    rng = random.Random(2024)
    at_empty: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    at_full: Counter[str] = Counter()
    for _ in range(3_000):
        w = sample_hewitt(rng, k, D, min_len=0, max_len=10**6)
        for t, nxt in enumerate((*w, END)):
            depth = len(stack_after(w[:t]) or [])
            kind = (
                nxt
                if nxt == END
                else ("open" + str(bracket(nxt)[1]) if bracket(nxt)[0] else "close")
            )
            (at_empty if depth == 0 else at_full if depth == D else inside)[kind] += 1
    empty_total = sum(at_empty.values())
    assert empty_total > 5_000
    assert abs(at_empty[END] / empty_total - 1 / 2) < 0.03
    for t in (1, 2):
        assert abs(at_empty[f"open{t}"] / empty_total - 1 / (2 * k)) < 0.03
        assert abs(inside[f"open{t}"] / sum(inside.values()) - 1 / (2 * k)) < 0.03
    assert abs(inside["close"] / sum(inside.values()) - 1 / 2) < 0.03
    assert set(at_full) == {"close"}
    quarter, half = Fraction(1, 4), Fraction(1, 2)
    assert hewitt_next_distribution((), k, D) == {"(": quarter, "[": quarter, END: half}


@pytest.mark.parametrize(
    ("min_len", "max_len", "message"),
    [
        (5, 4, r"max_len=4 must be >= min_len=5"),
        (-1, 4, r"min_len=-1 must be >= 0"),
        (2, 2, r"no Dyck word fits min_len=2, max_len=2.*raise max_len to at least 3"),
        (3, 4, r"no Dyck word fits min_len=3, max_len=4.*at least 5"),
    ],
)
def test_the_hewitt_sampler_rejects_an_impossible_length_range(
    min_len: int, max_len: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sample_hewitt(random.Random(0), 2, 2, min_len=min_len, max_len=max_len)


def test_the_hewitt_dataset_rejects_a_bad_budget() -> None:
    with pytest.raises(ValueError, match=r"token_budget=0 must be >= 1"):
        hewitt_dataset(0, 2, 2, min_len=1, max_len=10, token_budget=0)


# --------------------------------------------------------------------------- PCFG sampler


@pytest.mark.parametrize(
    ("k", "D", "p_branch", "p_stop"), [(1, 1, 0.5, 0.5), (2, 3, 0.7, 0.3), (5, 2, 0.9, 0.2)]
)
def test_pcfg_words_are_dyck_words_of_bounded_depth_and_length(
    k: int, D: int, p_branch: float, p_stop: float
) -> None:
    rng = random.Random(5)
    words = [
        sample_pcfg(rng, k, D, p_branch=p_branch, p_stop=p_stop, max_len=40) for _ in range(300)
    ]
    assert all(is_dyck(w, k, D) and len(w) <= 40 for w in words)
    assert max(max(depth_profile(w), default=0) for w in words) == D
    assert {bracket(s)[1] for w in words for s in w} == set(range(1, k + 1))


def test_pcfg_is_deterministic_and_its_empty_word_has_probability_p_stop() -> None:
    def draw(seed: int) -> list[tuple[str, ...]]:
        return [sample_pcfg(random.Random(seed), 2, 2, max_len=20) for _ in range(3)]

    assert draw(1) == draw(1)
    rng = random.Random(9)
    empties = sum(sample_pcfg(rng, 2, 2, p_stop=0.25, max_len=10**6) == () for _ in range(4_000))
    assert abs(empties / 4_000 - 0.25) < 0.03


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_stop": 0.0}, r"p_stop=0.0 must lie in \(0, 1\]"),
        ({"p_stop": 1.5}, r"p_stop=1.5 must lie in \(0, 1\]"),
        ({"p_branch": -0.1}, r"p_branch=-0.1 must lie in \[0, 1\]"),
        ({"max_len": -1}, r"max_len=-1 must be an int >= 0"),
    ],
)
def test_pcfg_rejects_bad_probabilities_naming_them(kwargs: dict[str, float], message: str) -> None:
    args: dict[str, float] = {"max_len": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        sample_pcfg(random.Random(0), 2, 2, **args)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- close accuracy


def test_close_accuracy_counts_every_position_with_a_non_empty_stack_by_distance() -> None:
    words = [parse_word("([])", 2), parse_word("()[]", 2), ()]
    acc = close_accuracy(words, lambda u: uniform_on_allowed(u, 2, 2))
    assert acc == {
        "pooled": 1.0,
        "mean_over_distance": 1.0,
        "correct": 5,
        "counted": 5,
        "per_distance": {0: (4, 4), 2: (1, 1)},
    }


def test_close_accuracy_is_one_for_oracle_predictors_on_hewitt_data() -> None:
    k, D = 2, 3
    words = hewitt_dataset(4, k, D, min_len=1, max_len=84, token_budget=2_000)
    for predict in (
        lambda u: uniform_on_allowed(u, k, D),
        lambda u: hewitt_next_distribution(u, k, D),
    ):
        acc = close_accuracy(words, predict)
        assert acc["pooled"] == acc["mean_over_distance"] == 1.0
        assert acc["counted"] > 1_000


def test_close_accuracy_is_below_one_when_all_close_mass_goes_to_type_1() -> None:
    k, D = 2, 3
    words = hewitt_dataset(4, k, D, min_len=1, max_len=84, token_budget=2_000)
    acc = close_accuracy(words, lambda u: {")": 0.5, "(": 0.25, "[": 0.25})
    assert 0 < acc["pooled"] < 1
    assert acc["correct"] == sum(
        1 for w in words for t in range(1, len(w) + 1) if (stack_after(w[:t]) or [0])[-1] == 1
    )


def test_close_accuracy_uses_the_strict_point_eight_threshold_exactly() -> None:
    word = [parse_word("[", 2)]

    def at(p_top: Fraction) -> CloseAccuracy:
        return close_accuracy(word, lambda u: {"]": p_top, ")": 1 - p_top, END: Fraction(1, 3)})

    assert at(Fraction(4, 5))["correct"] == 0
    assert at(Fraction(4, 5) + Fraction(1, 10**9))["correct"] == 1
    assert close_accuracy(word, lambda u: {"[": 1})["correct"] == 0  # no close mass: incorrect


def test_close_accuracy_rejects_invalid_words_and_empty_input() -> None:
    with pytest.raises(ValueError, match=r"mismatched close '\)' at t=2"):
        close_accuracy([parse_word("[)", 2)], lambda u: {})
    with pytest.raises(ValueError, match=r"no position with a non-empty stack"):
        close_accuracy([()], lambda u: {})
