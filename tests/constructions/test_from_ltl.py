"""LTL formulas compiled to B-RASP (Yang, Chiang & Angluin 2024's translation): the program
accepts exactly the words whose last position satisfies the formula (the B-RASP interpreter
against the LTL evaluator on every word up to length 7), one vector per distinct temporal
subformula, and the claims of the compiled program proved for every length — program =
language on automata (the program's own against the formula's, built without B-RASP) for every
formula; network = program and no-ties by the compositional smt method (two formulas in the
default run, all of them with ``-m slow``); operations for every length exactly for the
past-only formulas. A program whose since is built wrong is refuted with a word."""

from __future__ import annotations

import dataclasses
import itertools
import random
import re

import pytest
from weight_mutants import get_at, weight_sites, with_weight

from netproof.constructions.rasp import program_construction
from netproof.constructions.rasp.brasp_lemmas import automata_agree, program_automaton
from netproof.constructions.rasp.from_ltl import ltl_program
from netproof.symbolic import Network
from netproof.symbolic.exact import run
from netproof.verifier.campaign import prove
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.claims import ltl as L
from netproof.verifier.claims.monoid import star_freeness
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim

ABC = ("a", "b", "c")

PAST_ONLY = (
    "a S b",
    "Y a",
    "(a | b) S c",
    "H(b -> !O c)",
    "O(a S b) & !Y c",
    "H(b -> Y(a S c))",
)
WITH_FUTURE = (
    "X a",
    "a U b",
    "H(a -> F b)",
    "H(a -> X b)",
    "H(F c)",
    "F(a & Y b)",
    "O(a & X(b U c))",
    "H(a -> (b U c))",
    "H(Y a -> X b)",
    "O(c & X G a)",
    "H(a -> F(b & F c))",
    "!(a S (b & X c))",
    "H((a -> Y b) & (b -> X c))",
    "Y Y a -> O(c U (a & !X a))",
    "H(G a | F b)",
    "O(a & !(true U b))",
)
FORMULAS = PAST_ONLY + WITH_FUTURE


def _words(max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(ABC, repeat=n)]


WORDS7 = _words(7)


def _program(text: str, *, empty: bool = False) -> tuple[L.Formula, B.Program]:
    f = L.parse_ltl(text, ABC)
    return f, ltl_program(f, ABC, "spec", empty=empty)


@pytest.mark.parametrize("text", FORMULAS)
def test_the_program_accepts_exactly_the_words_whose_last_position_satisfies_the_formula(
    text: str,
) -> None:
    f, program = _program(text)
    wrong = [w for w in WORDS7 if B.accepts(program, w) != L.holds(f, w)]
    assert wrong == [], wrong[:3]


def test_the_empty_word_is_the_declared_one() -> None:
    f, program = _program("H(a -> F b)", empty=True)
    assert B.accepts(program, ()) and L.holds(f, (), empty=True)
    assert not B.accepts(ltl_program(f, ABC, "spec"), ())


def test_each_distinct_temporal_subformula_is_one_attention_operation() -> None:
    # O c appears three times, a S b twice: four distinct temporal subformulas
    _, program = _program("(O c & (a S b)) | (H(b -> O c) & !O c & Y(a S b))")
    attends = [op for op in B.operations(program.output) if isinstance(op, B.Attend)]
    assert sorted(B.names(program)[op] for op in attends) == [
        "hist3",
        "once1",
        "since2",
        "yesterday4",
    ]


def test_a_symbol_outside_the_alphabet_is_refused() -> None:
    with pytest.raises(ValueError, match=r"reads 'c', not a symbol of the alphabet \('a', 'b'\)"):
        ltl_program(L.parse_ltl("a S c", ABC), ("a", "b"), "spec")


@pytest.mark.parametrize("text", FORMULAS)
def test_program_equals_language_is_decided_on_automata_for_every_formula(text: str) -> None:
    f, program = _program(text)
    own = program_automaton(program)
    assert own is not None
    pairs, word = automata_agree(own, L.ltl_automaton(f, ABC))
    assert word is None and pairs >= 1


def _proofs(text: str, claims: list[str], tmp: str) -> dict[str, tuple[object, bool]]:
    f, program = _program(text)
    c = program_construction(
        "ltl-spec", program, L.ltl_language(f, ABC), max_len=3, title=f"LTL {text}"
    )
    run = prove(c, claims=claims, method="best", out=tmp, timeout=60)
    return {r.claim.id: (r.verdict, r.every_length) for r in run.results}


def _check_every_length(text: str, tmp: str) -> None:
    got = _proofs(text, ["program=language", "network=program", "no-ties", "operations"], tmp)
    for cid in ("program=language", "network=program", "no-ties"):
        verdict, every = got[cid]
        assert isinstance(verdict, Proved) and every, (text, cid, verdict)
    verdict, every = got["operations"]
    # operations for every length: by the operation-wise correspondence, past and future masks
    # alike (the product of automata covers past masks only)
    assert isinstance(verdict, Proved) and every, (text, verdict)


@pytest.mark.z3
@pytest.mark.parametrize("text", ["H(b -> !O c)", "H(a -> F b)"])
def test_network_equals_program_equals_language_is_proved_for_every_length(
    text: str, tmp_path: object
) -> None:
    _check_every_length(text, str(tmp_path))


@pytest.mark.z3
@pytest.mark.slow
@pytest.mark.parametrize("text", FORMULAS)
def test_every_formula_s_network_program_and_language_agree_for_every_length(
    text: str, tmp_path: object
) -> None:
    _check_every_length(text, str(tmp_path))


def test_a_since_built_without_the_negation_is_refuted_against_the_formula_with_a_word(
    tmp_path: object,
) -> None:
    f = L.parse_ltl("a S b", ABC)
    a, b = B.token("a"), B.token("b")
    wrong = B.rightmost("past", score=(a | b).at_j, value=b.at_j).named("since1")  # not ¬a ∨ b
    program = B.Program("spec", ABC, output=wrong)
    c = program_construction("ltl-wrong", program, L.ltl_language(f, ABC), max_len=3)
    (r,) = prove(c, claims=["program=language"], method="best", out=str(tmp_path)).results
    assert isinstance(r.verdict, Refuted)
    # the automata comparison names the shortest word on which the two differ
    found = re.search(r"on '(\w*)' the program says", r.verdict.detail)
    assert found is not None, r.verdict.detail
    w = tuple(found.group(1))
    assert w == ("b", "a", "a") and B.accepts(program, w) != L.holds(f, w)


@pytest.mark.z3
def test_network_equals_program_for_a_future_formula_is_never_proved_for_a_mutant_that_changes_it() -> (
    None
):
    """The compositional proof over a program with future masks is not vacuous: single-weight
    mutants of the compiled network of H(a -> F b) that change its function on a word of the
    bound are never proved, and a refutation's word is one the exact interpreter gets wrong."""
    ab = ("a", "b")
    f = L.parse_ltl("H(a -> F b)", ab)
    program = ltl_program(f, ab, "spec")
    c = program_construction("ltl-future", program, L.ltl_language(f, ab), max_len=4)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    net = c.network({})
    assert isinstance(net, Network)

    def verdict(candidate: Network) -> object:
        job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
        return prove_claim(job, claim, method="smt", max_len=4, timeout=60).verdict

    proved = verdict(net)
    assert isinstance(proved, Proved) and "every longer one" in proved.detail
    words = [w for n in range(5) for w in itertools.product(ab, repeat=n)]
    rng = random.Random(37)
    sites = list(weight_sites(net))
    changed = 0
    for path in rng.sample(sites, len(sites)):
        mutant = with_weight(net, path, get_at(net, path) + rng.choice((-1, 1)))
        wrong = [w for w in words if run(mutant, w).accepted != B.accepts(program, w)]
        if not wrong:
            continue
        changed += 1
        v = verdict(mutant)
        assert not isinstance(v, Proved), path
        if isinstance(v, Refuted):
            assert v.word is not None
            assert run(mutant, v.word).accepted != B.accepts(program, v.word)
        if changed == 3:
            break
    assert changed == 3


def _random_formula(rng: random.Random, depth: int) -> L.Formula:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([L.Atom("a"), L.Atom("b"), L.TRUE, L.FALSE])
    kind = rng.choice(
        [L.Not, L.Yesterday, L.Once, L.Historically, L.Next, L.Eventually, L.Always]
        + [L.And, L.Or, L.Implies, L.Since, L.Until] * 2
    )
    if kind in (L.And, L.Or, L.Implies, L.Since, L.Until):
        return kind(_random_formula(rng, depth - 1), _random_formula(rng, depth - 1))  # type: ignore[call-arg]
    return kind(_random_formula(rng, depth - 1))  # type: ignore[call-arg]


def test_on_random_formulas_the_program_the_automaton_and_the_evaluator_agree_and_are_star_free() -> (
    None
):
    """Three independent readings of a formula (the evaluator, the automaton built without
    B-RASP, the compiled B-RASP program's interpreter) agree on every word up to length 5, the
    program's own automaton equals the formula's (where at most two heads look at the future:
    the guessing automaton grows with every guess of every such head), and the language is
    star-free (Kamp: LTL
    defines only star-free languages), decided on the syntactic monoid."""
    ab = ("a", "b")
    words = [w for n in range(6) for w in itertools.product(ab, repeat=n)]
    rng = random.Random(2024)
    compared = 0
    for _ in range(60):
        f = _random_formula(rng, 4)
        empty = rng.random() < 0.5
        dfa = L.ltl_automaton(f, ab, empty=empty)
        program = ltl_program(f, ab, "spec", empty=empty)
        for w in words:
            want = L.holds(f, w, empty=empty)
            assert dfa.accepts([ab.index(s) for s in w]) == want, (L.show(f), w)
            assert B.accepts(program, w) == want, (L.show(f), w)
        future = [
            op
            for op in B.operations(program.output)
            if isinstance(op, B.Attend) and op.mask != "past"
        ]
        if len(future) <= 2:  # the guessing automaton enumerates every guess of every head
            own = program_automaton(program)
            assert own is not None and automata_agree(own, dfa)[1] is None, L.show(f)
            compared += 1
        assert star_freeness(dfa, ab).star_free, L.show(f)
    assert compared >= 30, compared
