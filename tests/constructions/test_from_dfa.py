"""Aperiodic DFAs compiled to past-only B-RASP programs (constructions/rasp/from_dfa.py), by
either route (the cut route for every DFA, the ordered route for a partially ordered one): the
program equals the DFA on every short word and, through its own automaton, on every word of
every length; non-star-free DFAs are refused with the monoid's witness; compiled networks are
proved equal to the program and to the language."""

from __future__ import annotations

import random
from itertools import product

import pytest

from netproof.constructions.rasp.brasp_lemmas import automata_agree, program_automaton
from netproof.constructions.rasp.from_dfa import dfa_program
from netproof.verifier.claims import Automaton
from netproof.verifier.claims.monoid import NotStarFree, star_freeness
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.regular import minimal_automaton, regex_automaton

STAR_FREE = [
    ("[ab]*(c[ac]*)?", "abc"),  # no b after the first c
    ("(ab)*", "ab"),
    ("a*b*", "ab"),
    ("[ab]*ab[ab]*", "ab"),  # contains ab
    ("a([ab]*a)?|b([ab]*b)?", "ab"),  # first = last
    ("(a(ab)*b)*", "ab"),  # Dyck-1 of depth <= 2 (a opens, b closes)
    ("[ab]*a[ab][ab]", "ab"),  # the third symbol from the end is a
    ("[ab]*c[ab]*", "abc"),  # exactly one c
    ("[ab]*", "ab"),  # every word
    ("a*b+", "ab"),
    ("(a|bc)*", "abc"),
    ("[bc]*a[ac]*", "abc"),  # one a, and no b after it
]


def _dfa(pattern: str, alphabet: str) -> Automaton:
    return minimal_automaton(regex_automaton(pattern, tuple(alphabet)))


def _agrees_up_to(program: B.Program, dfa: Automaton, alphabet: str, n: int) -> bool:
    return all(
        B.accepts(program, w) == dfa.accepts([alphabet.index(s) for s in w])
        for m in range(n + 1)
        for w in product(alphabet, repeat=m)
    )


def _routes(dfa: Automaton) -> list[str]:
    """The routes that apply: the cut route always, the ordered one for a partially ordered DFA
    (every cycle a self-loop)."""
    ordered = all(
        dfa.delta[q][a] == q or not _reaches(dfa, dfa.delta[q][a], q)
        for q in range(dfa.states)
        for a in range(len(dfa.delta[q]))
    )
    return ["cut", "ordered"] if ordered else ["cut"]


def _reaches(dfa: Automaton, p: int, q: int) -> bool:
    seen, todo = {p}, [p]
    while todo:
        r = todo.pop()
        for s in dfa.delta[r]:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return q in seen


@pytest.mark.parametrize(("pattern", "alphabet"), STAR_FREE)
def test_a_star_free_regex_becomes_a_past_only_program_with_its_language_for_every_length(
    pattern: str, alphabet: str
) -> None:
    dfa = _dfa(pattern, alphabet)
    for route in [None, *_routes(dfa)]:
        program = dfa_program(dfa, alphabet, "p", route)
        ops = B.operations(program.output)
        assert all(op.mask == "past" for op in ops if isinstance(op, B.Attend))
        assert _agrees_up_to(program, dfa, alphabet, 6)
        own = program_automaton(program)
        assert own is not None
        _pairs, word = automata_agree(own, dfa)
        assert word is None


def test_the_default_route_keeps_the_smaller_program_and_the_ordered_one_wins_on_a_chain() -> None:
    dfa = _dfa("[abc]*a[abc]*b[abc]*c[abc]*", "abc")  # a, b, c as a subword: a chain of 4 states
    assert _routes(dfa) == ["cut", "ordered"]
    sizes = {r: len(B.operations(dfa_program(dfa, "abc", "p", r).output)) for r in _routes(dfa)}
    assert sizes["ordered"] < sizes["cut"]
    assert len(B.operations(dfa_program(dfa, "abc", "p").output)) == sizes["ordered"]


def test_the_ordered_route_refuses_a_dfa_with_a_cycle_and_a_bad_route_is_named() -> None:
    dfa = _dfa("(ab)*", "ab")
    with pytest.raises(ValueError, match="route='ordered' needs a partially ordered DFA"):
        dfa_program(dfa, "ab", "p", "ordered")
    with pytest.raises(ValueError, match="route='fast': give 'ordered', 'cut' or None"):
        dfa_program(dfa, "ab", "p", "fast")


def _random_dfa(rng: random.Random, states: int, symbols: int) -> Automaton:
    delta = tuple(tuple(rng.randrange(states) for _ in range(symbols)) for _ in range(states))
    accepting = frozenset(q for q in range(states) if rng.random() < 0.5)
    return Automaton(states=states, start=0, accepting=accepting, delta=delta)


def test_random_aperiodic_dfas_compile_to_programs_with_their_languages_and_others_are_refused() -> (
    None
):
    rng = random.Random(37)
    aperiodic = periodic = 0
    while aperiodic < 30 or periodic < 10:
        dfa = _random_dfa(rng, rng.choice((2, 3, 4)), 2)
        if star_freeness(dfa, "ab").star_free:
            if aperiodic >= 30:
                continue
            aperiodic += 1
            for route in _routes(minimal_automaton(dfa)):
                program = dfa_program(dfa, "ab", "r", route)
                assert _agrees_up_to(program, dfa, "ab", 6)
                own = program_automaton(program)
                assert own is not None and automata_agree(own, dfa)[1] is None
        else:
            if periodic >= 10:
                continue
            periodic += 1
            with pytest.raises(NotStarFree, match="is not star-free"):
                dfa_program(dfa, "ab", "r")


@pytest.mark.parametrize(
    ("pattern", "witness"), [("(aa)*", "'a'"), ("(b*ab*a)*b*", "'a'"), ("(aaa)*", "'a'")]
)
def test_a_language_that_is_not_star_free_is_refused_naming_its_witness(
    pattern: str, witness: str
) -> None:
    with pytest.raises(NotStarFree, match=f"the word u = {witness} is not aperiodic"):
        dfa_program(_dfa(pattern, "ab"), "ab", "counting")


def test_compiled_programs_are_proved_network_equals_program_equals_language_to_a_bound() -> None:
    from netproof.constructions.rasp.claims import program_construction
    from netproof.constructions.rasp.modules import as_language
    from netproof.verifier.campaign import prove

    dfa = _dfa("[ab]*(c[ac]*)?", "abc")
    program = dfa_program(dfa, "abc", "no_b_after_c")
    c = program_construction("no-b-after-c", program, as_language(program, dfa), max_len=4)
    run = prove([c], method="exhaustive", max_n=4)
    assert run.exit_code == 0
    assert {r.claim.id: type(r.verdict).__name__ for r in run.results} == {
        "network=program": "Proved",
        "program=language": "Proved",
        "operations": "Proved",
        "no-ties": "Proved",
    }
