"""What a compiled B-RASP program declares for proofs of every length: the automaton read off a
past-only program (checked against the interpreter), program = language decided on automata,
and one block lemma per compiled block (checked against the exact traces)."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from itertools import product

import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from weight_mutants import affine_site_path, affine_sites, with_weight

from netproof.constructions.rasp import (
    BRASP_PROGRAMS,
    REFERENCE_LANGUAGES,
    brasp_claims,
    compile_brasp,
    program_construction,
)
from netproof.constructions.rasp.brasp_lemmas import automata_agree, brasp_lemmas, program_automaton
from netproof.symbolic import FFN, Network
from netproof.symbolic.exact import run
from netproof.verifier.claims import Automaton, BooleanBlock, NearestSelection, Proved, Refuted
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.fuzzing.rasp_strategies import brasp_programs
from netproof.verifier.smt.prove import prove_claim

PAST_ONLY = ("contains_ab", "no_aa", "a_then_b", "dyck1_depth2")


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in product(alphabet, repeat=n)]


def _accepts(dfa: Automaton, program: B.Program, word: tuple[str, ...]) -> bool:
    return dfa.accepts([program.alphabet.index(s) for s in word])


@pytest.mark.parametrize("name", PAST_ONLY)
def test_the_automaton_of_a_past_only_library_program_accepts_exactly_its_words_to_length_8(
    name: str,
) -> None:
    program = BRASP_PROGRAMS[name]
    dfa = program_automaton(program)
    assert dfa is not None
    assert [
        w for w in _words(program.alphabet, 8) if _accepts(dfa, program, w) != B.accepts(program, w)
    ] == []


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(brasp_programs())
def test_the_automaton_of_a_random_past_only_program_accepts_exactly_its_words_to_length_6(
    program: B.Program,
) -> None:
    dfa = program_automaton(program)
    assume(dfa is not None)
    assert dfa is not None
    assert [
        w for w in _words(program.alphabet, 6) if _accepts(dfa, program, w) != B.accepts(program, w)
    ] == []


def test_a_program_that_looks_at_the_future_or_everywhere_gets_an_automaton_that_accepts_exactly_its_words_to_length_8() -> (
    None
):
    a = B.token("a")
    ahead = B.Program("next_a", ("a", "b"), output=B.leftmost("future", score=B.TRUE, value=a.at_j))
    for program in (
        BRASP_PROGRAMS["ab_star"],
        BRASP_PROGRAMS["first_eq_last"],
        ahead,
    ):  # masks "all", "future"
        dfa = program_automaton(program)
        assert dfa is not None
        assert [
            w
            for w in _words(program.alphabet, 8)
            if _accepts(dfa, program, w) != B.accepts(program, w)
        ] == []


def test_program_equals_language_is_decided_on_automata_and_a_wrong_reference_is_refuted_with_the_shortest_word() -> (
    None
):
    program, language = BRASP_PROGRAMS["contains_ab"], REFERENCE_LANGUAGES["contains_ab"]
    (fact,) = [c for c in brasp_claims(program, language) if c.id == "program=language"]
    assert fact.cases.startswith("every word of every length") and fact.check() == (5, None)
    contains_ba = Automaton(
        states=3, start=0, accepting=frozenset({2}), delta=((0, 1), (2, 1), (2, 2))
    )
    wrong = dataclasses.replace(language, automaton=contains_ba)
    (fact,) = [c for c in brasp_claims(program, wrong) if c.id == "program=language"]
    assert fact.check() == (
        5,
        "on 'ab' the program says True and CONTAINS_AB's automaton says False",
    )
    assert automata_agree(contains_ba, contains_ba) == (3, None)


def _truth(formula: object, row: dict[str, Fraction]) -> object:
    values = {s: row[str(s)] == 1 for s in sympy.sympify(formula).free_symbols}
    return sympy.sympify(formula).subs(values)


@pytest.mark.parametrize("name", PAST_ONLY)
def test_every_boolean_block_lemma_holds_on_the_exact_traces_to_length_5(name: str) -> None:
    program = BRASP_PROGRAMS[name]
    net = compile_brasp(program)
    lemmas = brasp_lemmas(program)
    blocks = [layer.block.name for layer in net.layers]
    assert {lemma.block for lemma in lemmas if isinstance(lemma, BooleanBlock)} == {
        layer.block.name for layer in net.layers if isinstance(layer.block, FFN)
    }
    for w in _words(program.alphabet, 5):
        trace = run(net, w)
        for lemma in (x for x in lemmas if isinstance(x, BooleanBlock)):
            k = blocks.index(lemma.block)
            for before, after in zip(trace.states[k].rows, trace.states[k + 1].rows, strict=True):
                row, out = (
                    dict(zip(net.dims, before, strict=True)),
                    dict(zip(net.dims, after, strict=True)),
                )
                for dim, formula in lemma.outputs.items():
                    assert (out[dim] == 1) == bool(_truth(formula, row)) and out[dim] in (0, 1), (
                        lemma.id,
                        w,
                        dim,
                    )


def test_a_rightmost_past_head_whose_score_reads_only_the_key_gets_a_nearest_selection_lemma() -> (
    None
):
    heads = [
        x for x in brasp_lemmas(BRASP_PROGRAMS["contains_ab"]) if isinstance(x, NearestSelection)
    ]
    assert [(h.layer, h.head, str(h.prefer)) for h in heads] == [
        ("L1", "prev_a", "prev_a.k0"),
        ("L2", "seen_ab", "seen_ab.k0"),
        ("last", "last", "True"),
    ]


def test_network_equals_program_is_proved_for_every_length_and_its_function_changing_mutants_never_are() -> (
    None
):
    program = BRASP_PROGRAMS["contains_ab"]
    c = program_construction("contains", program, REFERENCE_LANGUAGES["contains_ab"], max_len=5)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    net = c.network({})
    assert isinstance(net, Network)

    def verdict(candidate: Network) -> object:
        job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
        return prove_claim(job, claim, method="smt", max_len=5, timeout=60).verdict

    proved = verdict(net)
    assert isinstance(proved, Proved) and "every longer one" in proved.detail
    words = _words(program.alphabet, 5)
    rng = random.Random(0)
    changed = 0
    for site in rng.sample(affine_sites(net), 40):
        mutant = with_weight(net, affine_site_path(net, site), Fraction(rng.choice((-1, 1)), 2))
        wrong = [w for w in words if run(mutant, w).accepted != B.accepts(program, w)]
        if not wrong:
            continue
        changed += 1
        v = verdict(mutant)
        assert not isinstance(v, Proved), site
        if isinstance(v, Refuted):
            assert v.word == wrong[0] and run(mutant, v.word).accepted != B.accepts(program, v.word)
        if changed == 3:
            break
    assert changed == 3
