"""Counting formulas (K_t[#]) to C-RASP: the parser's errors, the evaluator, the formula's
counter automaton and the synthesized program against independent predicates, and the network
against the program."""

from __future__ import annotations

import itertools
import json

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


# --------------------------------------------------------------------------- netproof synth --counting


def _load_module(path) -> dict:
    import importlib.util

    spec = importlib.util.spec_from_file_location("counting_synth_written", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS


def test_synth_counting_writes_the_program_its_module_and_the_network_and_prints_the_sizes(
    tmp_path, capsys
) -> None:
    from cli_runs import netproof

    from netproof.symbolic import fingerprint
    from netproof.symbolic.netfile_reader import load_file

    out = tmp_path / "out"
    argv = ["synth", "--counting", "#(a) > #(b)", "--alphabet", "a,b", "--name", "maj"]
    done = netproof(capsys, *argv, "--out", str(out))
    assert done.code == 0, done.err
    assert "maj: --counting '#(a) > #(b)' over a,b, route counting (C-RASP)" in done.out
    assert "program 3 operations (2 counts, 1 comparison)" in done.out
    assert sorted(p.name for p in out.iterdir()) == ["maj.net.json", "maj.py", "maj.rasp"]
    syn = synthesize_counting("#(a) > #(b)", ("a", "b"), "maj")
    assert (out / "maj.rasp").read_text(encoding="utf-8") == C.show(syn.program) + "\n"
    program, reference = _load_module(out / "maj.py")["maj"]
    assert program == syn.program
    assert reference.counters == syn.reference.counters
    net, _meta = load_file(out / "maj.net.json")
    assert fingerprint(net) == fingerprint(compile_crasp(syn.program))

    done = netproof(capsys, *argv, "--json")
    data = json.loads(done.out)
    assert data["spec"] == {"kind": "counting", "text": "#(a) > #(b)", "alphabet": ["a", "b"]}
    assert data["route"] == "counting" and data["empty"] is False and data["written"] == []
    assert data["sizes"] == syn.sizes and data["claims"] == []


def test_synth_counting_prove_shows_network_program_and_language_equal_for_every_length(
    tmp_path, capsys
) -> None:
    from cli_runs import netproof

    out = tmp_path / "out"
    done = netproof(
        capsys,
        *("synth", "--counting", "#(a) > #(b)", "--alphabet", "a,b", "--name", "maj"),
        *("--out", str(out), "--prove", "--json"),
    )
    assert done.code == 0, done.err
    rows = {r["claim"]: r for r in json.loads(done.out)["claims"]}
    for claim in ("network=program", "program=language", "network=language"):
        assert rows[claim]["verdict"] == "proved" and rows[claim]["every_length"], rows[claim]
    # the written module is what `netproof prove` reads
    done = netproof(
        capsys, "prove", f"{out / 'maj.py'}:maj", "--max-n", "4", "--out", str(tmp_path / "rec")
    )
    assert done.code == 0, done.out + done.err
    assert "4 proved, 0 refuted, 0 unknown" in done.out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--counting", "#(a) >", "--alphabet", "a,b"], "ends at offset 6 where a term is"),
        (["--counting", "#(c) > 0", "--alphabet", "a,b"], "'c' at offset 2, which is not a symbol"),
        (["--counting", "#(a) > 0"], "give the symbols: --alphabet a,b,c"),
        (["--counting", "#(a) > 0", "--alphabet", "a,,b"], "must be distinct, non-empty"),
        (["--counting", "#(a) > 0", "--alphabet", "a,b", "--minimize"], "drop --minimize"),
        (["--counting", "#(a) > 0", "--alphabet", "a,b", "--via", "dfa"], "drop --via"),
        (["--counting", "#(a) > 0", "--alphabet", "a,b", "--name", "2x"], "name '2x' must be"),
    ],
)
def test_synth_counting_refuses_bad_input_with_one_line_exit_2_and_nothing_written(
    argv: list[str], match: str, tmp_path, capsys
) -> None:
    from cli_runs import netproof

    out = tmp_path / "out"
    done = netproof(capsys, "synth", *argv, "--out", str(out))
    assert done.code == 2
    assert match in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert not out.exists()


# --------------------------------------------------------------------------- invariants


@pytest.mark.z3
@pytest.mark.parametrize(
    ("formula", "proved"),
    [
        ("#(#(a) > #(b)) > #(#(b) > #(a))", True),
        pytest.param("#(#(a) > #(b)) >= #(#(b) > #(a))", False, marks=pytest.mark.slow),
    ],
)
def test_leads_more_often_s_product_gets_an_invariant_its_three_queries_certify_and_a_variant_none(
    formula: str, proved: bool
) -> None:
    """The program of "more prefixes where a leads than where b leads" read side by side with the
    formula's counter automaton (control states: the output bit and the last symbol): Houdini's
    facts per control value (the output bit tied to a comparison of the nested counts) give an
    invariant, and its initiation, consecution and safety queries are unsat; against the
    automaton of a slightly different formula (>=, another language) no invariant is claimed."""
    import z3

    from netproof.constructions.rasp.crasp_lemmas import program_counters
    from netproof.verifier.smt.compositional import counters
    from netproof.verifier.smt.compositional.same_language import product_system

    spec = next(s for s in SPECS if s.name == "leads-more-often")
    syn = synthesize_counting(spec.formula, spec.alphabet, "x")
    other = synthesize_counting(formula, spec.alphabet, "y")
    assert other.reference.counters is not None
    system = product_system(program_counters(syn.program), other.reference.counters)
    status, inv = counters.houdini(system, 0, 60.0 if proved else 5.0, len(spec.alphabet))
    assert (status == "safe") == proved, inv
    if proved:
        for name, solver in counters.certificate(system, inv):
            assert solver.check() == z3.unsat, name
