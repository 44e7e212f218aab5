"""netproof synth: specs → B-RASP programs → networks (constructions/rasp/synth.py), the twenty
specs' predicates against their automata, the CLI's exit codes, --json and --out round trip,
spec pairs that never share a network, and single-weight mutants of synthesized networks."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import random

import pytest
from weight_mutants import get_at, weight_sites, with_weight

from netproof.constructions.rasp.claims import program_construction
from netproof.constructions.rasp.compile_brasp import compile_brasp
from netproof.constructions.rasp.modules import as_language
from netproof.constructions.rasp.synth import SpecError, ltl_spec, regex_spec, synthesize
from netproof.constructions.rasp.synth_specs import SPECS
from netproof.symbolic import Network
from netproof.symbolic.exact import run
from netproof.symbolic.netfile_writer import dumps
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.claims.monoid import NotStarFree
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.cli.app import main
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim

HAVE_DFA_ROUTE = importlib.util.find_spec("netproof.constructions.rasp.from_dfa") is not None


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def _routable(s: object) -> bool:
    return s.spec.kind == "ltl" or HAVE_DFA_ROUTE  # type: ignore[attr-defined]


@pytest.mark.parametrize("s", SPECS, ids=[s.name for s in SPECS])
def test_each_spec_s_predicate_agrees_with_its_reference_automaton_up_to_length_7(s) -> None:
    from netproof.constructions.rasp.synth import _reference

    dfa, _formula, _size = _reference(s.spec)
    al = s.spec.alphabet
    for w in _words(al, 7):
        assert dfa.accepts([al.index(x) for x in w]) == s.predicate(w), (s.name, w)


HEAVY = {"dyck1-depth3", "dyck1-depth4", "subword-abc"}
"""Specs whose DFA route builds programs of thousands of operations (minutes to synthesize and
compile): in the slow run only."""


def _heavy_marked(s: object) -> object:
    return pytest.param(s, marks=pytest.mark.slow, id=s.name) if s.name in HEAVY else s  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "s", [_heavy_marked(s) for s in SPECS if _routable(s)], ids=lambda s: s.name
)
def test_each_synthesized_program_accepts_exactly_its_predicate_s_words_up_to_length_6(s) -> None:
    syn = synthesize(s.spec, f"synth-{s.name}")
    assert syn.verdict.star_free
    for w in _words(s.spec.alphabet, 6):
        assert B.accepts(syn.program, w) == s.predicate(w), (s.name, w)


def test_a_spec_that_is_not_star_free_is_refused_with_its_witness() -> None:
    with pytest.raises(NotStarFree, match=r"not star-free.*u = 'aa'|not star-free.*u = 'a'"):
        synthesize(regex_spec("(aa)*", ("a",)), "even")
    with pytest.raises(NotStarFree, match="no masked hard-attention transformer"):
        synthesize(regex_spec("(b*ab*a)*b*", ("a", "b")), "even-as")


def test_a_bad_formula_or_pattern_is_one_line_naming_the_fix() -> None:
    with pytest.raises(SpecError, match="write a formula after 'S'"):
        synthesize(ltl_spec("a S", ("a", "b")), "x")
    with pytest.raises(SpecError, match="unclosed"):
        synthesize(regex_spec("(ab", ("a", "b")), "x")


def test_minimize_keeps_the_language_and_never_grows_the_program() -> None:
    for s in SPECS[:6]:
        plain = synthesize(s.spec, "p")
        small = synthesize(s.spec, "p", minimize=True)
        assert small.sizes["program_ops"] <= plain.sizes["program_ops"]
        assert small.sizes["saved_ops"] == plain.sizes["program_ops"] - small.sizes["program_ops"]
        for w in _words(s.spec.alphabet, 6):
            assert B.accepts(small.program, w) == B.accepts(plain.program, w)


PAIRS = [
    (
        ltl_spec("H(a -> F b)", ("a", "b"), empty=True),
        ltl_spec("H(a -> O b)", ("a", "b"), empty=True),
    ),
    (ltl_spec("a S b", ("a", "b", "c")), ltl_spec("a S c", ("a", "b", "c"))),
    (
        ltl_spec("H(b -> !O c)", ("a", "b", "c"), empty=True),
        ltl_spec("H(b -> !Y c)", ("a", "b", "c"), empty=True),
    ),
]
if HAVE_DFA_ROUTE:
    PAIRS += [
        (regex_spec("a*b*", ("a", "b")), regex_spec("a*b+", ("a", "b"))),
        (
            regex_spec("(a|b)*|(a|b)*c(a|c)*", ("a", "b", "c")),
            regex_spec("(a|b)*|(a|b|c)*c(a|c)*", ("a", "b", "c")),
        ),
    ]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0].text} vs {p[1].text}")
def test_two_slightly_different_specs_never_yield_the_same_network(pair) -> None:
    one, two = (synthesize(s, "spec") for s in pair)
    nets = [compile_brasp(y.program) for y in (one, two)]
    assert B.show(one.program) != B.show(two.program)
    assert dumps(nets[0]) != dumps(nets[1])
    al = pair[0].alphabet
    word = next(w for w in _words(al, 6) if B.accepts(one.program, w) != B.accepts(two.program, w))
    assert run(nets[0], word).accepted != run(nets[1], word).accepted


@pytest.mark.slow
@pytest.mark.z3
@pytest.mark.parametrize("name", ["no-b-after-first-c", "nested-since"])
def test_single_weight_mutants_that_change_the_language_are_refuted_with_a_word_the_interpreter_confirms(
    name: str,
) -> None:
    s = next(x for x in SPECS if x.name == name)
    syn = synthesize(s.spec, name)
    c = program_construction(name, syn.program, as_language(syn.program, syn.reference), max_len=4)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    net = c.network({})
    assert isinstance(net, Network)

    def verdict(candidate: Network) -> object:
        job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
        return prove_claim(job, claim, method="exhaustive", max_len=4, timeout=60).verdict

    assert isinstance(verdict(net), Proved)
    words = _words(s.spec.alphabet, 4)
    rng = random.Random(37)
    sites = list(weight_sites(net))
    changed = 0
    for path in rng.sample(sites, len(sites)):
        mutant = with_weight(net, path, get_at(net, path) + rng.choice((-1, 1)))
        if all(run(mutant, w).accepted == B.accepts(syn.program, w) for w in words):
            continue
        changed += 1
        v = verdict(mutant)
        assert isinstance(v, Refuted), path
        assert v.word is not None
        assert run(mutant, v.word).accepted != B.accepts(syn.program, v.word)
        if changed == 4:
            break
    assert changed == 4


def test_the_cli_synthesizes_writes_a_module_that_prove_loads_and_reports_json(
    tmp_path, capsys
) -> None:
    out = tmp_path / "out"
    argv = ["synth", "--ltl", "H(b -> !O c)", "--alphabet", "a,b,c", "--empty"]
    assert main([*argv, "--name", "nbc", "--out", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["star_free"] is True and data["route"] == "ltl"
    assert {
        "spec_size",
        "dfa_states",
        "monoid_size",
        "program_ops",
        "layers",
        "heads",
        "dims",
    } <= set(data["sizes"])
    assert sorted(p.name for p in out.iterdir()) == ["nbc.net.json", "nbc.py", "nbc.rasp"]
    assert (
        main(
            [
                "prove",
                f"{out / 'nbc.py'}:nbc",
                "--max-n",
                "3",
                "--out",
                str(tmp_path / "rec"),
                "--quiet",
            ]
        )
        == 0
    )


def test_the_cli_refuses_a_language_that_is_not_star_free_with_exit_2_naming_the_witness(
    capsys,
) -> None:
    assert main(["synth", "--regex", "(aa)*", "--alphabet", "a"]) == 2
    err = capsys.readouterr().err
    assert (
        "not star-free" in err and "witness u = 'a'" in err and len(err.strip().splitlines()) == 1
    )


def test_the_cli_refuses_a_bad_formula_and_a_missing_alphabet_with_exit_2(capsys) -> None:
    assert main(["synth", "--ltl", "a S", "--alphabet", "a,b"]) == 2
    assert "write a formula after 'S'" in capsys.readouterr().err
    assert main(["synth", "--ltl", "a"]) == 2
    assert "--alphabet a,b,c" in capsys.readouterr().err


def test_a_dfa_file_is_read_and_a_parity_dfa_is_refused_with_exit_2(tmp_path, capsys) -> None:
    parity = {
        "alphabet": ["0", "1"],
        "states": 2,
        "start": 0,
        "accepting": [1],
        "delta": [[0, 1], [1, 0]],
    }
    path = tmp_path / "parity.json"
    path.write_text(json.dumps(parity), encoding="utf-8")
    assert main(["synth", "--dfa", str(path)]) == 2
    assert "not star-free (witness u = '1'" in capsys.readouterr().err
    path.write_text(json.dumps({**parity, "delta": [[0], [1, 0]]}), encoding="utf-8")
    assert main(["synth", "--dfa", str(path)]) == 2
    assert "delta must be a list of rows of 2 states" in capsys.readouterr().err
