"""The cascade route to a past-only B-RASP program's automaton (``cascade_automaton``,
``operations_automaton``): the operations added one at a time, memories merged after each
attention operation. Checked against the plain memories automaton and the interpreter
(faithfulness), on single-operation mutants of a synthesized program (every mutant's automaton
is its interpreter's language; every mutant that changes the language is refuted with a word the
interpreter reproduces), and as the automaton behind network = program for every length (a
network's function-changing weight mutants never proved)."""

from __future__ import annotations

import dataclasses
import functools
import random
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import HealthCheck, assume, given, settings
from weight_mutants import affine_site_path, affine_sites, with_weight

import netproof.constructions.rasp.claims as rasp_claims
from netproof.constructions.rasp import program_construction
from netproof.constructions.rasp.brasp_lemmas import (
    automata_agree,
    cascade_automaton,
    operations_automaton,
    program_automaton,
)
from netproof.constructions.rasp.from_dfa import dfa_program
from netproof.symbolic import Network
from netproof.symbolic.exact import run
from netproof.verifier.claims import Automaton, FollowsAutomaton, Proved, Refuted
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.regular import regex_automaton
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.fuzzing.rasp_strategies import brasp_programs
from netproof.verifier.smt.prove import prove_claim

BR = ("(", ")")
DYCK2 = r"(\((\(\))*\))*"


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in product(alphabet, repeat=n)]


def _accepts(dfa: Automaton, alphabet: tuple[str, ...], word: tuple[str, ...]) -> bool:
    return dfa.accepts([alphabet.index(s) for s in word])


@functools.cache
def _dyck2() -> tuple[B.Program, Automaton]:
    reference = regex_automaton(DYCK2, BR)
    return dfa_program(reference, BR, "dyck2"), reference


def _past_only(program: B.Program) -> bool:
    return all(op.mask == "past" for op in B.operations(program.output) if isinstance(op, B.Attend))


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(brasp_programs(max_ops=7))
def test_the_cascade_gives_the_minimal_automaton_of_the_memories_on_random_past_only_programs(
    program: B.Program,
) -> None:
    assume(_past_only(program))
    plain = program_automaton(program, cascade=False)
    cascade = cascade_automaton(program)
    assert plain is not None and cascade is not None
    assert automata_agree(plain, cascade)[1] is None
    # minimal: no two of its states accept the same words
    assert cascade.states == program_automaton(program, max_states=1).states  # type: ignore[union-attr]
    assert cascade.states <= plain.states


def test_dyck_depth_2s_program_gets_its_four_state_language_past_the_memory_bound() -> None:
    program, reference = _dyck2()
    assert program_automaton(program, max_states=16, cascade=False) is None
    dfa = program_automaton(program, max_states=16)
    assert dfa is not None and dfa.states == 4 == reference.states
    assert automata_agree(dfa, reference)[1] is None
    plain = program_automaton(program, cascade=False)  # 268 memories
    assert plain is not None and automata_agree(dfa, plain)[1] is None
    assert [w for w in _words(BR, 6) if _accepts(dfa, BR, w) != B.accepts(program, w)] == []


def test_a_program_that_looks_at_the_future_has_no_cascade() -> None:
    a = B.token("a")
    ahead = B.Program("next_a", ("a", "b"), output=B.leftmost("future", score=B.TRUE, value=a.at_j))
    assert cascade_automaton(ahead) is None
    assert operations_automaton(ahead, (ahead.output,)) is None


def test_the_operations_machine_tells_every_attention_operation_at_every_prefix_to_length_6() -> (
    None
):
    program, _ = _dyck2()
    attends = tuple(op for op in B.operations(program.output) if isinstance(op, B.Attend))
    got = operations_automaton(program, attends)
    assert got is not None
    machine, ones = got
    for w in _words(BR, 6):
        q = machine.start
        values = [B.evaluate(op, w) for op in attends]
        for t, s in enumerate(w):
            q = machine.delta[q][BR.index(s)]
            assert [q in one for one in ones] == [v[t] for v in values], (w, t)


def test_operations_falls_back_to_the_cascade_past_the_product_bound_with_the_same_meaning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program, _ = _dyck2()
    plain = rasp_claims._operations_form(program)
    assert plain is not None
    # as where some operation's memories pass the bound (Dyck-1 of depth 3)
    monkeypatch.setattr(rasp_claims, "_memories", lambda _program: None)
    small = rasp_claims._operations_form(program)
    assert small is not None and small.automaton.states <= plain.automaton.states
    monkeypatch.setattr(rasp_claims, "MAX_OPERATION_STATES", small.automaton.states - 1)
    assert rasp_claims._operations_form(program) is None
    assert [name for name, _ in small.ones] == [name for name, _ in plain.ones]

    def dims(form: FollowsAutomaton, w: tuple[str, ...]) -> list[tuple[bool, ...]]:
        q, out = form.automaton.start, []
        for s in w:
            q = form.automaton.delta[q][BR.index(s)]
            out.append(tuple(q in one for _, one in form.ones))
        return out

    assert [w for w in _words(BR, 7) if dims(small, w) != dims(plain, w)] == []


# --------------------------------------------------------------------------- mutants


def _substitute(expr: B.BVec, old: B.BVec, new: B.BVec, memo: dict[B.BVec, B.BVec]) -> B.BVec:
    """``expr`` with every occurrence of ``old`` replaced by ``new``."""
    if expr == old:
        return new
    if expr in memo:
        return memo[expr]
    if isinstance(expr, B.Not):
        got: B.BVec = dataclasses.replace(expr, arg=_substitute(expr.arg, old, new, memo))
    elif isinstance(expr, (B.And, B.Or)):
        got = dataclasses.replace(
            expr,
            left=_substitute(expr.left, old, new, memo),
            right=_substitute(expr.right, old, new, memo),
        )
    elif isinstance(expr, (B.AtI, B.AtJ)):
        got = dataclasses.replace(expr, vec=_substitute(expr.vec, old, new, memo))
    elif isinstance(expr, B.Attend):
        got = dataclasses.replace(
            expr,
            score=_substitute(expr.score, old, new, memo),
            value=_substitute(expr.value, old, new, memo),
            default=_substitute(expr.default, old, new, memo),
        )
    else:
        got = expr
    memo[expr] = got
    return got


def _mutants(program: B.Program) -> list[tuple[str, B.Program]]:
    """Per attention operation: its side flipped, its default negated, its score and its
    value negated."""
    out = []
    attends = [op for op in B.operations(program.output) if isinstance(op, B.Attend)]
    for k, op in enumerate(attends):
        side = "leftmost" if op.side == "rightmost" else "rightmost"
        for what, new in (
            ("side", dataclasses.replace(op, side=side)),
            ("default", dataclasses.replace(op, default=B.Not(op.default))),
            ("score", dataclasses.replace(op, score=B.Not(op.score))),
            ("value", dataclasses.replace(op, value=B.Not(op.value))),
        ):
            output = _substitute(program.output, op, new, {})
            out.append((f"{k}.{what}", dataclasses.replace(program, output=output)))
    return out


def _sweep(step: int) -> tuple[int, int]:
    program, reference = _dyck2()
    refuted = equal = 0
    for name, mutant in _mutants(program)[::step]:
        dfa = program_automaton(mutant, max_states=16)  # the cascade, as for Dyck-1 of depth 3
        plain = program_automaton(mutant, cascade=False)  # the memories, all at once
        assert dfa is not None and plain is not None, name
        # faithful: the same language as the memories' automaton (every length), and as the
        # interpreter on short words
        assert automata_agree(dfa, plain)[1] is None, name
        assert [w for w in _words(BR, 4) if _accepts(dfa, BR, w) != B.accepts(mutant, w)] == []
        _, word = automata_agree(dfa, reference)
        _, differs = automata_agree(plain, reference)
        if word is None:
            assert differs is None, name  # never "the same language" for a mutant that differs
            equal += 1
        else:
            w = tuple(BR[a] for a in word)
            assert B.accepts(mutant, w) != _accepts(reference, BR, w), name
            assert differs is not None and len(w) == len(differs), name  # a shortest word
            refuted += 1
    return refuted, equal


def test_a_sample_of_single_operation_mutants_is_refuted_by_the_cascade_with_a_reproduced_word() -> (
    None
):
    refuted, _ = _sweep(12)
    assert refuted >= 3


@pytest.mark.slow
def test_every_single_operation_mutant_that_changes_the_language_is_refuted_by_the_cascade() -> (
    None
):
    refuted, equal = _sweep(1)
    assert refuted >= 20 and refuted + equal == len(_mutants(_dyck2()[0]))


# --------------------------------------------------------------------------- network = program


@pytest.mark.slow
@pytest.mark.z3
def test_network_equals_program_over_the_cascade_automaton_is_proved_and_function_changing_mutants_never_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program, reference = _dyck2()
    # the claims take the cascade's automaton, as Dyck-1 of depth 3's do past 4096 memories
    monkeypatch.setattr(
        rasp_claims, "program_automaton", functools.partial(program_automaton, max_states=16)
    )
    from netproof.verifier.claims import Language

    language = Language(
        name="dyck2",
        alphabet=BR,
        contains=lambda w: _accepts(reference, BR, w),
        automaton=reference,
    )
    c = program_construction("dyck2", program, language, max_len=5)
    # without its compiled program: the transition system over the cascade's automaton, not
    # the operation-wise correspondence (which needs no automaton)
    claim = dataclasses.replace(
        next(x for x in c.claims({}) if x.id == "network=program"), compiled=None
    )
    assert claim.language.automaton is not None and claim.language.automaton.states == 4
    net = c.network({})
    assert isinstance(net, Network)

    def verdict(candidate: Network) -> object:
        job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
        return prove_claim(job, claim, method="smt", max_len=5, timeout=120).verdict

    proved = verdict(net)
    assert isinstance(proved, Proved) and "every longer one" in proved.detail
    words = _words(BR, 5)
    rng = random.Random(0)
    changed = 0
    for site in rng.sample(affine_sites(net), 60):
        mutant = with_weight(net, affine_site_path(net, site), Fraction(rng.choice((-1, 1)), 2))
        wrong = [w for w in words if run(mutant, w).accepted != B.accepts(program, w)]
        if not wrong:
            continue
        changed += 1
        v = verdict(mutant)
        assert not isinstance(v, Proved), site
        if isinstance(v, Refuted):
            assert run(mutant, v.word).accepted != B.accepts(program, v.word)
        if changed == 3:
            break
    assert changed == 3
