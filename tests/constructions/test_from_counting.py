"""Counting formulas (K_t[#]) to C-RASP: the parser's errors, the evaluator, the formula's
counter automaton and the synthesized program against independent predicates, and the network
against the program."""

from __future__ import annotations

import itertools

import pytest

from netproof.constructions.rasp.compile_crasp import compile_crasp
from netproof.constructions.rasp.counting_specs import SPECS
from netproof.constructions.rasp.from_counting import synthesize_counting
from netproof.constructions.rasp.synth import SpecError
from netproof.verifier.claims import counting_ltl as K
from netproof.verifier.claims.rasp import crasp as C


def _words(alphabet: tuple[str, ...], n: int):
    for k in range(n + 1):
        yield from itertools.product(alphabet, repeat=k)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("#(a) >", r"ends at offset 6 where a term is expected"),
        ("(#(a) - #(b)) > 0", r"parentheses group formulas, never terms"),
        ("0 < #(a) < 3", r"chains comparisons"),
        ("#(a) + 1", r"a comparison \(< <= > >= == !=\) is expected"),
        ("#(x) > 0", r"'x' at offset 2, which is not a symbol of the alphabet"),
        ("#(a) = #(b)", r"write == for equality"),
        ("", r"is empty"),
        ("a b", r"after a whole formula"),
    ],
)
def test_a_bad_formula_is_one_line_naming_the_fix(text: str, match: str) -> None:
    with pytest.raises(K.CountingError, match=match) as info:
        K.parse_counting(text, ("a", "b"))
    assert "\n" not in str(info.value)


def test_synthesis_turns_a_bad_formula_into_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"counting formula '#\(a\) >' ends at offset 6"):
        synthesize_counting("#(a) >", ("a", "b"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_predicate_evaluator_counter_automaton_and_program_agree_up_to_7(spec) -> None:
    syn = synthesize_counting(spec.formula, spec.alphabet, "x", empty=spec.empty)
    assert K.parse_counting(K.show(syn.formula), spec.alphabet) == syn.formula
    ca = syn.reference.counters
    assert ca is not None
    index = {s: k for k, s in enumerate(spec.alphabet)}
    for w in _words(spec.alphabet, 7):
        want = spec.predicate(w)
        assert K.holds(syn.formula, w, spec.empty) == want, w
        assert ca.accepts([index[s] for s in w]) == want, w
        assert C.accepts(syn.program, w) == want, w


@pytest.mark.parametrize("name", ["majority", "dyck1", "leads-more-often"])
def test_the_network_accepts_what_the_program_accepts_up_to_6(name: str) -> None:
    from netproof.symbolic.exact import run

    spec = next(s for s in SPECS if s.name == name)
    syn = synthesize_counting(spec.formula, spec.alphabet, "x", empty=spec.empty)
    net = compile_crasp(syn.program)
    for w in _words(spec.alphabet, 6):
        assert run(net, w).accepted == C.accepts(syn.program, w), w
