"""Star-freeness decided on the syntactic monoid: the classical examples on both sides, each
non-star-free witness checked on the automaton and on the language itself, a property test on
random small DFAs against a brute force that enumerates words (not the monoid's search), and
the size guard."""

from __future__ import annotations

import itertools
import random

import pytest

from netproof.verifier.claims import Automaton
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.claims.monoid import (
    MonoidTooLarge,
    NotStarFree,
    StarFreeness,
    star_freeness,
)
from netproof.verifier.claims.regular import minimal_automaton, regex_automaton

DYCK1_DEPTH2 = r"(\((\(\))*\))*"


def _decide(pattern: str, alphabet: str) -> StarFreeness:
    return star_freeness(regex_automaton(pattern, tuple(alphabet)), tuple(alphabet))


def _act(dfa: Automaton, word: tuple[int, ...]) -> tuple[int, ...]:
    """The transformation of the states a word induces (plain iteration over its symbols)."""
    out = []
    for q in range(dfa.states):
        for a in word:
            q = dfa.delta[q][a]
        out.append(q)
    return tuple(out)


def _check_witness(dfa: Automaton, alphabet: tuple[str, ...], r: StarFreeness) -> None:
    """u^n and u^(n+1) act differently on the DFA for n = 1..20, the powers repeat on the minimal
    DFA as the result says, and x·u^index·y, x·u^(index+1)·y are on different sides of the
    language."""
    assert r.witness is not None and r.period is not None and r.index is not None
    assert r.context is not None and r.suffix is not None
    u = tuple(alphabet.index(s) for s in r.witness)
    for n in range(1, 21):
        assert _act(dfa, u * n) != _act(dfa, u * (n + 1)), n
    small = minimal_automaton(dfa)
    assert _act(small, u * r.index) == _act(small, u * (r.index + r.period))
    assert all(
        _act(small, u * r.index) != _act(small, u * (r.index + p)) for p in range(1, r.period)
    )
    if r.index > 1:
        assert _act(small, u * (r.index - 1)) != _act(small, u * (r.index - 1 + r.period))
    x = tuple(alphabet.index(s) for s in r.context)
    y = tuple(alphabet.index(s) for s in r.suffix)
    first = dfa.accepts(x + u * r.index + y)
    assert first == r.accepts_index
    assert dfa.accepts(x + u * (r.index + 1) + y) != first


@pytest.mark.parametrize(
    ("pattern", "alphabet", "states"),
    [
        ("(ab)*", "ab", 3),
        ("a*b*", "ab", 3),
        ("[ab]*(c[ac]*)?", "abc", 3),  # no b after the first c
        (DYCK1_DEPTH2, "()", 4),
        ("[ab]*ab[ab]*", "ab", 3),
        ("", "ab", 2),
    ],
)
def test_star_free_languages_have_an_aperiodic_syntactic_monoid(
    pattern: str, alphabet: str, states: int
) -> None:
    r = _decide(pattern, alphabet)
    assert r.star_free and r.witness is None and r.period is None
    assert r.states == states and r.aperiodicity_index is not None
    assert "star-free" in r.explain() and "Schützenberger" in r.explain()


@pytest.mark.parametrize(
    ("pattern", "alphabet", "witness", "period"),
    [
        ("(aa)*", "a", "a", 2),
        ("(aaa)*", "a", "a", 3),
        ("([ab][ab])*", "ab", "a", 2),  # even length
        ("(b*ab*ab*ab*)*", "ab", "a", 3),  # the number of a's is 0 mod 3
        ("a(aa)*b*", "ab", "a", 2),
    ],
)
def test_a_language_that_is_not_star_free_is_refused_with_a_shortest_witness(
    pattern: str, alphabet: str, witness: str, period: int
) -> None:
    sigma = tuple(alphabet)
    dfa = regex_automaton(pattern, sigma)
    r = star_freeness(dfa, sigma)
    assert not r.star_free
    assert r.witness == tuple(witness) and r.period == period
    _check_witness(dfa, sigma, r)
    text = r.explain()
    assert f"u = '{witness}'" in text and f"period {period}" in text
    assert "Yang, Chiang & Angluin 2024" in text and "McNaughton" in text


def test_parity_is_not_star_free_and_its_witness_is_the_symbol_1() -> None:
    assert PARITY.automaton is not None
    r = star_freeness(PARITY.automaton, PARITY.alphabet)
    assert (r.star_free, r.witness, r.period, r.index) == (False, ("1",), 2, 1)
    _check_witness(PARITY.automaton, PARITY.alphabet, r)


def test_not_star_free_carries_the_decision_and_says_why() -> None:
    r = _decide("(aa)*", "a")
    with pytest.raises(NotStarFree, match=r"the spec is not star-free: .* u = 'a'") as err:
        raise NotStarFree(r, "the spec")
    assert err.value.result is r


def test_a_monoid_past_the_limit_is_refused_naming_its_size_and_the_limit() -> None:
    # a* over one symbol mod 7 has 7 elements; a limit of 5 stops the search
    with pytest.raises(MonoidTooLarge, match=r"more than limit=5 elements; raise limit="):
        star_freeness(regex_automaton("(a{7})*", ("a",)), ("a",), limit=5)


def test_an_alphabet_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match=r"reads 2 symbols but alphabet=\('a',\)"):
        star_freeness(regex_automaton("a*", ("a", "b")), ("a",))


def _brute_monoid(dfa: Automaton, symbols: int) -> dict[tuple[int, ...], tuple[int, ...]]:
    """Every transformation some word induces, with a word for it: words enumerated by length
    until a whole length adds no new transformation (then no longer word can: a word of length
    k+1 acts as a word of length k followed by a symbol)."""
    found: dict[tuple[int, ...], tuple[int, ...]] = {}
    for k in itertools.count():
        new = False
        for w in itertools.product(range(symbols), repeat=k):
            act = _act(dfa, w)
            if act not in found:
                found[act] = w
                new = True
        if not new:
            return found
    raise AssertionError  # pragma: no cover


def _cycles(dfa: Automaton, u: tuple[int, ...], bound: int) -> bool:
    """Whether some state p has p·u^n eventually cycling with period > 1 (iterated ``bound`` times)."""
    for p in range(dfa.states):
        orbit = [p]
        for _ in range(bound):
            orbit.append(_act(dfa, u)[orbit[-1]])
        tail = orbit[dfa.states :]  # past the pre-period (at most |Q| steps)
        if any(tail[k] != tail[k + 1] for k in range(len(tail) - 1)):
            return True
    return False


def _random_dfa(rng: random.Random) -> Automaton:
    n, s = rng.randint(1, 4), rng.randint(1, 2)
    return Automaton(
        states=n,
        start=0,
        accepting=frozenset(q for q in range(n) if rng.random() < 0.5),
        delta=tuple(tuple(rng.randrange(n) for _ in range(s)) for _ in range(n)),
    )


def test_on_random_small_dfas_aperiodic_means_no_word_makes_a_state_cycle() -> None:
    rng = random.Random(37)
    kinds = {True: 0, False: 0}
    for _ in range(150):
        dfa = _random_dfa(rng)
        sigma = tuple("ab"[: len(dfa.delta[0])])
        r = star_freeness(dfa, sigma)
        kinds[r.star_free] += 1
        # the minimal DFA's monoid is the syntactic one; cycling is checked on the minimal DFA's
        # own states, reached from the original by the brute force on its reachable part
        small = minimal_automaton(dfa)
        monoid = _brute_monoid(small, len(sigma))
        assert r.monoid_size == len(monoid)
        bound = small.states * len(monoid) + small.states
        assert r.star_free == (not any(_cycles(small, u, bound) for u in monoid.values()))
        if not r.star_free:
            _check_witness(dfa, sigma, r)
            assert r.witness is not None
            shortest = min(
                (len(u) for u in monoid.values() if _cycles(small, u, bound)), default=None
            )
            assert len(r.witness) == shortest
    assert kinds[True] > 10 and kinds[False] > 10, kinds
