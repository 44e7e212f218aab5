"""B-RASP and C-RASP programs compiled to exact networks: the library's programs and random
programs agree exactly with the interpreters, the weights are exact, the declared claims are
proved, and single-weight mutants are refuted whenever they change the function."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.constructions.rasp import (
    BRASP_PROGRAMS,
    CRASP_PROGRAMS,
    REFERENCE_LANGUAGES,
    brasp_claims,
    compile_brasp,
    compile_crasp,
    crasp_claims,
    program_construction,
    words_upto,
)
from netproof.symbolic import FFN, Affine, AttentionLayer, Network, SymbolicError
from netproof.symbolic.exact import run
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.exhaustive import Job, check
from netproof.verifier.fuzzing.rasp_strategies import (
    brasp_programs,
    crasp_programs,
    rasp_words,
)

FUZZ = settings(
    max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in product(alphabet, repeat=n)]


def _agrees(net: Network, accepts, program, words) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return [w for w in words if run(net, w).accepted != accepts(program, w)]


@pytest.mark.parametrize("name", sorted(BRASP_PROGRAMS))
def test_each_brasp_library_program_compiles_to_a_network_that_agrees_on_every_word_to_length_6(
    name: str,
) -> None:
    prog = BRASP_PROGRAMS[name]
    assert _agrees(compile_brasp(prog), B.accepts, prog, _words(prog.alphabet, 6)) == []


@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_each_crasp_library_program_compiles_to_a_network_that_agrees_on_every_word_to_length_6(
    name: str,
) -> None:
    prog = CRASP_PROGRAMS[name]
    assert _agrees(compile_crasp(prog), C.accepts, prog, _words(prog.alphabet, 6)) == []


def test_every_library_program_is_registered_with_its_claims_proved_to_length_5() -> None:
    names = [f"brasp-{k.replace('_', '-')}" for k in BRASP_PROGRAMS] + [
        f"crasp-{k.replace('_', '-')}" for k in CRASP_PROGRAMS
    ]
    for name in names:
        construction = REGISTRY[name]
        claims = construction.claims({})
        assert {c.id for c in claims} >= {"network=program", "program=language", "operations"}
        for claim in claims:
            verdict = check(Job(construction, {}), claim, max_len=5)
            assert isinstance(verdict, Proved), (name, claim.id, verdict)


def test_every_library_program_equals_its_reference_language_on_every_word_to_length_10() -> None:
    for programs, module in ((BRASP_PROGRAMS, B), (CRASP_PROGRAMS, C)):
        for name, prog in programs.items():
            lang = REFERENCE_LANGUAGES[name]
            wrong = [
                w
                for w in words_upto(prog.alphabet, 10)
                if module.accepts(prog, w) != lang.contains(w)
            ]
            assert wrong == [], (name, wrong[:3])


def _affines(net: Network) -> list[Affine]:
    out: list[Affine] = []
    for layer in net.layers:
        block = layer.block
        if isinstance(block, FFN):
            out += [s for s in block.steps if isinstance(s, Affine)]
        elif isinstance(block, AttentionLayer):
            out += [x for h in block.heads for x in (h.query, h.key, h.value)]
    return out


def test_compiled_weights_are_exact_fractions_and_dims_are_named_after_the_operations() -> None:
    bnet = compile_brasp(BRASP_PROGRAMS["contains_ab"])
    cnet = compile_crasp(CRASP_PROGRAMS["dyck1"])
    for net in (bnet, cnet):
        for a in _affines(net):
            assert all(type(x) is Fraction for row in a.weights for x in row)
            assert all(type(x) is Fraction for x in a.bias)
    assert {"prev_a", "seen_ab", "output"} <= set(bnet.dims)
    assert {"count1", "less1", "count2", "output"} <= set(cnet.dims)


def test_a_count_dim_holds_the_count_over_the_position_plus_one_and_a_comparison_dim_its_bit() -> (
    None
):
    prog = C.Program("p", ("a", "b"), output=(C.count(C.token("a")).named("na") > 1).named("many"))
    trace = run(compile_crasp(prog), "aba")
    assert [trace.value(trace.final.label, t, "na") for t in (1, 2, 3)] == [
        Fraction(1, 2),
        Fraction(1, 3),
        Fraction(2, 4),
    ]
    assert [trace.value(trace.final.label, t, "many") for t in (1, 2, 3)] == [0, 0, 1]


def test_compiler_errors_name_the_clashing_operation_and_the_fix() -> None:
    with pytest.raises(
        ValueError,
        match=r"operation name 'output' clashes with the compiler's dims .* rename it with .named",
    ):
        compile_brasp(
            B.Program(
                "p", ("a",), output=B.leftmost("all", score=B.TRUE, value=B.TRUE).named("output")
            )
        )
    twice = B.leftmost("all", score=B.TRUE, value=B.TRUE)
    with pytest.raises(ValueError, match=r"operation name 'x' is used twice"):
        compile_brasp(
            B.Program(
                "p",
                ("a",),
                output=twice.named("x") & B.rightmost("all", score=B.TRUE, value=B.TRUE).named("x"),
            )
        )
    with pytest.raises(ValueError, match=r"operation name 'n' is used twice"):
        x = C.token("a")
        compile_crasp(
            C.Program("p", ("a",), output=(C.count(x).named("n") > C.count(~x).named("n")))
        )
    with pytest.raises(TypeError, match=r"compile_brasp needs a brasp.Program, got Program"):
        compile_brasp(CRASP_PROGRAMS["majority"])  # type: ignore[arg-type]


@FUZZ
@given(brasp_programs(), st.lists(rasp_words(min_len=0, max_len=12), min_size=1, max_size=4))
def test_random_brasp_programs_compile_to_networks_that_agree_exactly_on_random_words(
    program, words
) -> None:  # type: ignore[no-untyped-def]
    net = compile_brasp(program)
    for w in words:
        assert run(net, w).accepted == B.accepts(program, w), (B.show(program), w)


@FUZZ
@given(crasp_programs(), st.lists(rasp_words(min_len=0, max_len=12), min_size=1, max_size=4))
def test_random_crasp_programs_compile_to_networks_that_agree_exactly_on_random_words(
    program, words
) -> None:  # type: ignore[no-untyped-def]
    net = compile_crasp(program)
    for w in words:
        assert run(net, w).accepted == C.accepts(program, w), (C.show(program), w)


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.one_of(brasp_programs(max_ops=8), crasp_programs(max_ops=8)),
    st.lists(rasp_words(max_len=30), min_size=1, max_size=3),
)
def test_random_programs_agree_with_their_networks_on_words_up_to_length_30(program, words) -> None:  # type: ignore[no-untyped-def]
    lang, compile_ = (B, compile_brasp) if isinstance(program, B.Program) else (C, compile_crasp)
    net = compile_(program)
    for w in words:
        assert run(net, w).accepted == lang.accepts(program, w), (lang.show(program), w)


def _mutant(net: Network, site: int, row: int, col: int, delta: Fraction) -> Network:
    """``net`` with one weight of its ``site``-th Affine (in :func:`_affines` order) moved by delta."""
    target = _affines(net)[site]
    weights = [list(r) for r in target.weights]
    weights[row][col] += delta
    new = dataclasses.replace(target, weights=tuple(tuple(r) for r in weights))

    def swap(a: Affine) -> Affine:
        return new if a is target else a

    layers = []
    for layer in net.layers:
        block = layer.block
        if isinstance(block, FFN):
            block = dataclasses.replace(
                block, steps=tuple(swap(s) if isinstance(s, Affine) else s for s in block.steps)
            )
        elif isinstance(block, AttentionLayer):
            heads = tuple(
                dataclasses.replace(h, query=swap(h.query), key=swap(h.key), value=swap(h.value))
                for h in block.heads
            )
            block = dataclasses.replace(block, heads=heads)
        layers.append(dataclasses.replace(layer, block=block))
    return dataclasses.replace(net, layers=tuple(layers))


@pytest.mark.parametrize(
    ("name", "lang"), [("contains_ab", "b"), ("ab_star", "b"), ("majority", "c"), ("ambm", "c")]
)
def test_single_weight_mutants_are_refuted_by_network_equals_program_exactly_when_they_change_the_function(
    name: str, lang: str
) -> None:
    module, compile_, declare = (
        (B, compile_brasp, brasp_claims) if lang == "b" else (C, compile_crasp, crasp_claims)
    )
    program = (BRASP_PROGRAMS if lang == "b" else CRASP_PROGRAMS)[name]
    net = compile_(program)
    bound = 5
    words = _words(program.alphabet, bound)
    rng = random.Random(name)
    affines = _affines(net)
    sites = [
        (s, r, c)
        for s, a in enumerate(affines)
        for r in range(len(a.weights))
        for c in range(len(a.weights[r]))
    ]
    refuted = 0
    for site, row, col in rng.sample(sites, min(16, len(sites))):
        mutant = _mutant(
            net, site, row, col, Fraction(rng.choice((-2, -1, 1, 3)), rng.choice((1, 2)))
        )
        claim = next(c for c in declare(program, None, max_len=bound) if c.id == "network=program")
        construction = dataclasses.replace(
            program_construction("mutant", program), build=lambda values, m=mutant: m
        )
        try:
            wrong = [w for w in words if run(mutant, w).accepted != module.accepts(program, w)]
        except (
            SymbolicError
        ):  # undefined (layer norm of 0) or irrational (a square root): wrong somewhere
            wrong = None
        verdict = check(Job(construction, {}), claim)
        if wrong == []:
            assert isinstance(verdict, Proved), (site, row, col, verdict)
        else:
            assert not isinstance(verdict, Proved), (site, row, col, verdict)
            if wrong is not None:
                refuted += 1
                assert isinstance(verdict, Refuted) and verdict.word in wrong
                # the counterexample replays: the exact interpreter disagrees with the mutant there
                assert run(mutant, verdict.word).accepted != module.accepts(program, verdict.word)
    assert refuted >= 1


def test_the_no_ties_claim_is_refuted_when_a_head_loses_its_position_tie_break() -> None:
    program = BRASP_PROGRAMS["contains_ab"]
    net = compile_brasp(program)
    head_keys = [k for k, a in enumerate(_affines(net)) if "pos" in a.outputs and "p" in a.inputs]
    site = head_keys[0]
    a = _affines(net)[site]
    row, col = a.outputs.index("pos"), a.inputs.index("p")
    mutant = _mutant(net, site, row, col, -a.weights[row][col])  # the position term becomes 0
    claim = next(c for c in brasp_claims(program, max_len=4) if c.id == "no-ties")
    construction = dataclasses.replace(
        program_construction("mutant", program), build=lambda values: mutant
    )
    verdict = check(Job(construction, {}), claim)
    assert isinstance(verdict, Refuted) and "keys tie for the top score" in verdict.detail


def test_a_program_wrong_on_the_empty_word_is_refuted_naming_it_as_epsilon_unquoted() -> None:
    from netproof.verifier.claims import Language

    opening, closing = C.token("("), C.token(")")
    program = C.Program(
        "dyck1-no-empty", ("(", ")"), output=C.count(opening).eq(C.count(closing)), empty=False
    )
    language = Language(
        name="EVEN", alphabet=("(", ")"), contains=lambda w: w.count("(") == w.count(")")
    )
    claim = next(
        c for c in crasp_claims(program, language, max_len=2) if c.id == "program=language"
    )
    verdict = check(Job(program_construction("no-empty", program), {}), claim)
    assert isinstance(verdict, Refuted)
    assert "on ε the program says False and EVEN says True" in verdict.detail
