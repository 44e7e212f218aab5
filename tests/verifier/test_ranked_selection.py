"""RankedSelection (a hardmax head selects the first or the last position of highest rank, on
any mask): the lemma proved for every n, its scans in the abstraction and in the transition
system over positions, checked against the exact interpreter on every short word, and the
compiled B-RASP programs with masks other than "past" (``leftmost`` heads, ``future`` and
``all`` masks) proved equal to their networks for every length.

The mutation test over every single-weight mutant of the compiled ``ab_star`` and
``first_eq_last`` is ``-m slow`` (several minutes for each program); the default run takes a
spread of them, those of the ranked heads' weights first."""

from __future__ import annotations

import dataclasses
import itertools
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from weight_mutants import get_at, weight_sites, with_weight

from netproof.constructions.rasp import BRASP_PROGRAMS, REFERENCE_LANGUAGES, program_construction
from netproof.constructions.rasp.brasp_lemmas import brasp_lemmas, program_automaton
from netproof.constructions.rasp.compile_brasp import compile_brasp
from netproof.symbolic import AttentionLayer, Hardmax, Network, Scale
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run
from netproof.verifier.claims import (
    Automaton,
    Language,
    Proved,
    RankedSelection,
    Recognizes,
    Refuted,
    Unknown,
)
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.fuzzing.rasp_strategies import brasp_programs
from netproof.verifier.smt.compositional import prove_lemma, prove_recognizes
from netproof.verifier.smt.compositional.abstraction import Abstraction
from netproof.verifier.smt.compositional.arithmetic import consts
from netproof.verifier.smt.compositional.lemmas import LemmaResult
from netproof.verifier.smt.compositional.system import every_length_system
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

_a, _b = B.token("a"), B.token("b")
_first_before = B.leftmost("past", score=B.TRUE, value=_a.at_j, default=_a).named("first_a_before")
_next_b = B.leftmost("future", score=B.TRUE, value=_b.at_j, default=B.FALSE).named("next_b")
_ab_before = B.rightmost("past", score=(_a & _next_b).at_j, value=B.TRUE).named("ab_before")
_last_a = B.rightmost("all", score=B.TRUE, value=_a.at_j).named("last_a")
_has_b = B.leftmost("all", score=_b.at_j, value=B.TRUE).named("has_b")
_last_b_after = B.rightmost("future", score=B.TRUE, value=_b.at_j, default=_b).named("last_b_after")
_prev_last_b = B.rightmost("past", score=B.TRUE, value=_last_b_after.at_j, default=_b).named(
    "prev_last_b"
)

PROGRAMS: dict[str, B.Program] = {
    # leftmost over j < i: the first symbol (BOS ranked last)
    "first_a_ends_b": B.Program("first_a_ends_b", ("a", "b"), output=_first_before & _b),
    # leftmost over j > i: the next symbol, read by a later past head
    "contains_ab_future": B.Program("contains_ab_future", ("a", "b"), output=_ab_before),
    # rightmost and leftmost over every position
    "ends_a_has_b": B.Program("ends_a_has_b", ("a", "b"), output=_last_a & _has_b, empty=True),
    # rightmost over j > i, read by a later past head
    "ends_b_twice": B.Program(
        "ends_b_twice", ("a", "b"), output=(_prev_last_b & _last_b_after) | ~_a
    ),
    "ab_star": BRASP_PROGRAMS["ab_star"],
    "first_eq_last": BRASP_PROGRAMS["first_eq_last"],
}
SHORT = 4  # every word up to this length, for the faithfulness checks


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> list[tuple[str, ...]]:
    return [w for n in range(lo, hi + 1) for w in itertools.product(alphabet, repeat=n)]


def _language(program: B.Program) -> Language:
    return dataclasses.replace(B.language(program), automaton=program_automaton(program))


def _proved(net: Network, program: B.Program) -> list[LemmaResult]:
    out = []
    for lemma in brasp_lemmas(program):
        node, ok = prove_lemma(net, lemma)
        out.append(LemmaResult(lemma, node, ok))
    return out


def _ranked(results: list[LemmaResult]) -> list[LemmaResult]:
    return [r for r in results if isinstance(r.lemma, RankedSelection)]


def _replace_head(net: Network, layer: str, head: str, **parts: Any) -> Network:
    layers = []
    for sub in net.layers:
        block = sub.block
        if isinstance(block, AttentionLayer) and block.name == layer:
            block = dataclasses.replace(
                block,
                heads=tuple(
                    dataclasses.replace(h, **parts) if h.name == head else h for h in block.heads
                ),
            )
        layers.append(dataclasses.replace(sub, block=block))
    return dataclasses.replace(net, layers=tuple(layers))


def _head(net: Network, layer: str, head: str) -> Any:
    return next(
        h
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer) and sub.block.name == layer
        for h in sub.block.heads
        if h.name == head
    )


# --------------------------------------------------------------------------- the lemma


def test_a_ranked_selection_names_its_end_and_at_least_one_rank() -> None:
    common: dict[str, Any] = {
        "id": "x",
        "statement": "x",
        "reference": "x",
        "layer": "L1",
        "head": "h",
        "boolean": (),
        "positional": {},
    }
    with pytest.raises(ValueError, match="end='middle': use 'first' or 'last'"):
        RankedSelection(ranks=(sympy.true,), end="middle", **common)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ranks=\(\): give a non-empty tuple"):
        RankedSelection(ranks=(), end="first", **common)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_every_head_of_a_compiled_program_whose_score_reads_nothing_at_i_has_a_lemma_proved_for_every_n(
    name: str,
) -> None:
    program = PROGRAMS[name]
    net = compile_brasp(program)
    results = _proved(net, program)
    assert _ranked(results), f"{name}: no RankedSelection declared"
    assert [(r.lemma.id, r.node.verdict) for r in results if not r.proved] == []
    heads = {
        h.name
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
    } - {"verdict"}
    assert {
        r.lemma.head for r in results if not hasattr(r.lemma, "block")
    } == heads  # every selecting head has its lemma


def test_a_leftmost_head_over_every_position_that_does_not_score_bos_below_the_word_is_refuted() -> (
    None
):
    program = BRASP_PROGRAMS["ab_star"]
    net = compile_brasp(program)
    (lemma,) = [x for x in brasp_lemmas(program) if isinstance(x, RankedSelection)]
    key = _head(net, lemma.layer, lemma.head).key
    pos = key.outputs.index("pos")
    weights = tuple(
        tuple(
            Fraction(0) if (r, d) == (pos, "BOS") else w
            for d, w in zip(key.inputs, row, strict=True)
        )
        for r, row in enumerate(key.weights)
    )
    mutant = _replace_head(
        net, lemma.layer, lemma.head, key=dataclasses.replace(key, weights=weights)
    )
    node, ok = prove_lemma(mutant, lemma)
    assert not ok and node.verdict == "refuted"
    assert "the score order breaks the ranking at" in node.queries[0].reason


@pytest.mark.parametrize(
    "change",
    [
        {"end": "last"},
        {"ranks": (sympy.Symbol("first_a.k0"),)},
        {"ranks": (sympy.Symbol("first_a.k0"), sympy.Not(sympy.Symbol("BOS")))},
    ],
    ids=["other-end", "bos-not-ranked", "ranks-swapped"],
)
def test_a_ranking_the_head_does_not_implement_is_refuted(change: dict[str, Any]) -> None:
    program = BRASP_PROGRAMS["ab_star"]
    net = compile_brasp(program)
    (lemma,) = [x for x in brasp_lemmas(program) if isinstance(x, RankedSelection)]
    node, ok = prove_lemma(net, dataclasses.replace(lemma, **change))
    assert not ok and node.verdict == "refuted"


# --------------------------------------------------------------------------- faithfulness


def _symbol_bits(ab: Any, t: int, symbol: str) -> Any:
    return ab.is_symbol(t, ab.alphabet.index(symbol))


def _function_changing_mutants(program: B.Program, k: int) -> list[Network]:
    """Up to ``k`` mutants, each one weight of a head's value map set to 0 (the value stays
    0/1, so the scans still apply), that change the network's verdict on some word up to
    SHORT: the checks below then compare verdicts that differ from the program's."""
    net = compile_brasp(program)
    words = _words(program.alphabet, 0, SHORT)
    found = []
    for sub in net.layers:
        if not isinstance(sub.block, AttentionLayer):
            continue
        for h in sub.block.heads:
            a = h.value
            for r, c in itertools.product(range(len(a.weights)), range(len(a.inputs))):
                if a.weights[r][c] == 0:
                    continue
                rows = [list(row) for row in a.weights]
                rows[r][c] = Fraction(0)
                m = _replace_head(
                    net,
                    sub.block.name,
                    h.name,
                    value=dataclasses.replace(a, weights=tuple(map(tuple, rows))),
                )
                if any(run(m, w).accepted != B.accepts(program, w) for w in words):
                    found.append(m)
                if len(found) == k:
                    return found
    return found


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_abstraction_with_ranked_scans_gives_every_short_word_the_exact_interpreters_verdict(
    name: str,
) -> None:
    import z3

    program = PROGRAMS[name]
    for net in [compile_brasp(program), *_function_changing_mutants(program, 1)]:
        results = _proved(net, program)
        for lo, hi in [*((m, m) for m in range(SHORT + 1)), (0, SHORT)]:
            ctx = z3.Context()
            ab = Abstraction(z3, ctx, net, hi, results, lo=lo)
            try:
                accept = ab.accept()
            except Unsupported:
                assert (
                    lo < hi
                )  # a range query needs the presence readout; each length has its own query
                continue
            solver = z3.Solver(ctx=ctx)
            solver.add(*ab.vals.assertions)
            for w in _words(program.alphabet, lo, hi):
                fixed = [_symbol_bits(ab, t, s) for t, s in enumerate(w)] + [
                    z3.Not(p) for p in ab.present[len(w) :] if p is not True
                ]
                fixed += [p for p in ab.present[: len(w)] if p is not True]
                exact = z3.BoolVal(run(net, w).accepted, ctx)
                assert solver.check(*fixed, accept == exact) == z3.sat, (name, w)
                assert solver.check(*fixed, accept != exact) == z3.unsat, (name, w)
        assert all(r.uses > 0 and not r.fallbacks for r in _ranked(results)), [
            (r.lemma.id, r.uses, r.fallbacks) for r in _ranked(results)
        ]


def _complement(language: Language) -> Language:
    dfa = language.automaton
    assert dfa is not None
    flipped = Automaton(
        states=dfa.states,
        start=dfa.start,
        accepting=frozenset(range(dfa.states)) - dfa.accepting,
        delta=dfa.delta,
    )
    return dataclasses.replace(
        language, automaton=flipped, contains=lambda w: not language.contains(w)
    )


def _bad_reachable(
    net: Network, language: Language, results: list[LemmaResult], words: list[tuple[str, ...]]
) -> dict[tuple[str, ...], bool]:
    """For each word, whether the transition system, unrolled on it (every token read), reaches
    a bad state: its accept bit differs from ``language`` on the one run whose guesses are
    right."""
    import z3

    system = every_length_system(net, language, results, {}, [], 0)
    emb = net.embedding
    names = [str(v) for v in system.state]
    primed = [str(v) for v in system.primed]
    inputs = sorted(
        {str(v) for f in (system.init, system.trans, system.bad) for v in consts(z3, f).values()}
        - set(names)
        - set(primed)
    )
    ctx = system.ctx
    bits = max(1, (len(net.alphabet) - 1).bit_length())
    out = {}
    for length in sorted({len(w) for w in words}):
        steps = len(emb.prefix) + length + len(emb.suffix)  # type: ignore[union-attr]
        at = [[z3.Bool(f"{v}@{k}", ctx) for v in names] for k in range(steps + 1)]

        def moved(f: Any, k: int, pairs: list[tuple[Any, Any]]) -> Any:
            return z3.substitute(
                f, *pairs, *((z3.Bool(i, ctx), z3.Bool(f"{i}@{k}", ctx)) for i in inputs)
            )

        solver = z3.Solver(ctx=ctx)
        solver.add(moved(system.init, 0, list(zip(system.state, at[0], strict=True))))
        for k in range(steps):
            solver.add(
                moved(
                    system.trans,
                    k,
                    list(zip(system.state, at[k], strict=True))
                    + list(zip(system.primed, at[k + 1], strict=True)),
                )
            )
        solver.add(moved(system.bad, steps, list(zip(system.state, at[steps], strict=True))))
        for w in (w for w in words if len(w) == length):
            fixed = []
            for i, s in enumerate(w):
                k, code = len(emb.prefix) + i, net.alphabet.index(s)  # type: ignore[union-attr]
                fixed += [
                    z3.Bool(f"w0.{b}@{k}", ctx)
                    if (code >> b) & 1
                    else z3.Not(z3.Bool(f"w0.{b}@{k}", ctx))
                    for b in range(bits)
                ]
            answer = solver.check(*fixed)
            assert answer in (z3.sat, z3.unsat)
            out[w] = answer == z3.sat
    return out


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_transition_system_with_ranked_scans_gives_every_short_word_the_exact_interpreters_verdict(
    name: str,
) -> None:
    program = PROGRAMS[name]
    language = _language(program)
    words = _words(program.alphabet, 0, SHORT)
    checked = 0
    for net in [compile_brasp(program), *_function_changing_mutants(program, 2)]:
        results = _proved(net, program)
        try:
            # bad: accept != membership; against the complement, bad: accept == membership
            differs = _bad_reachable(net, language, results, words)
            agrees = _bad_reachable(net, _complement(language), results, words)
        except Unsupported:
            assert checked, f"{name}: the compiled network is no transition system"
            continue  # a mutant whose other lemmas fail: no transition system to check
        checked += 1
        for w in words:
            exact = run(net, w).accepted
            assert (differs[w], agrees[w]) == (
                exact != language.contains(w),
                exact == language.contains(w),
            ), (name, w)
    assert checked >= 2, f"{name}: no mutant of the ones picked is a transition system"


# --------------------------------------------------------------------------- every length


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_network_equals_program_is_proved_for_every_length_with_the_ranked_scans_in_place(
    name: str,
) -> None:
    program = PROGRAMS[name]
    net = compile_brasp(program)
    claim = Recognizes(
        id="network=program",
        statement="network = program",
        reference="test",
        language=_language(program),
        min_len=0,
        max_len=6,
    )
    progress = prove_recognizes(net, claim, brasp_lemmas(program), 6, timeout=60)
    assert isinstance(progress.verdict, Proved) and "every longer one" in progress.verdict.detail, (
        progress.verdict
    )


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(brasp_programs())
def test_the_automaton_of_a_random_program_with_any_masks_accepts_exactly_its_words_to_length_6(
    program: B.Program,
) -> None:
    dfa = program_automaton(program)
    assert dfa is not None
    words = _words(program.alphabet, 0, 6)
    assert [
        w
        for w in words
        if dfa.accepts([program.alphabet.index(s) for s in w]) != B.accepts(program, w)
    ] == []


@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(brasp_programs(max_ops=4))
def test_a_random_compiled_program_with_a_ranked_head_is_never_refuted_against_itself(
    program: B.Program,
) -> None:
    """A scan weaker than the head would let z3 find a word the network classifies right: the
    replay would raise an EncoderBugError. (A scan stronger than the head is what the mutants
    below would catch.)"""
    assume(any(isinstance(x, RankedSelection) for x in brasp_lemmas(program)))
    claim = Recognizes(
        id="network=program",
        statement="network = program",
        reference="test",
        language=_language(program),
        min_len=0,
        max_len=4,
    )
    verdict = prove_recognizes(
        compile_brasp(program), claim, brasp_lemmas(program), 4, timeout=60
    ).verdict
    assert isinstance(verdict, Proved), verdict


# --------------------------------------------------------------------------- mutants

BOUND = 5
MUTATED = ("ab_star", "first_eq_last")


WeightPath = tuple[str | int, ...]


def _mutants(name: str) -> tuple[Any, Recognizes, list[tuple[str, bool, Network]]]:
    """The construction of library program ``name``, its network=program claim, and each
    single-weight mutant (±1/2): its label, whether the weight is a RankedSelection head's, and
    the mutant."""
    program = BRASP_PROGRAMS[name]
    c = program_construction(name, program, REFERENCE_LANGUAGES[name], max_len=BOUND)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    net = c.network({})
    ranked = {x.head for x in brasp_lemmas(program) if isinstance(x, RankedSelection)}
    out = []
    for path in weight_sites(net, skip=(Scale, Hardmax)):
        in_ranked = (
            path[:4] == ("layers", path[1], "block", "heads")
            and get_at(net, path[:5]).name in ranked
        )
        for delta in (Fraction(1, 2), Fraction(-1, 2)):
            try:
                m = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            out.append(
                (f"{'.'.join(map(str, path))} {'+' if delta > 0 else ''}{delta}", in_ranked, m)
            )
    return c, claim, out


def _first_wrong(mutant: Network, claim: Recognizes) -> tuple[str, ...] | None:
    """The shortlex-first word up to BOUND the mutant gets wrong (exact interpreter), or None."""
    return next(
        (
            w
            for w in _words(mutant.alphabet, 0, BOUND)
            if run(mutant, w).accepted != claim.language.contains(w)
        ),
        None,
    )


def _check(c: Any, claim: Recognizes, label: str, mutant: Network) -> str:
    """The smt verdict on the mutant, checked against a plain enumeration (see the module docstring)."""
    wrong = _first_wrong(mutant, claim)
    v = prove_claim(
        Job(dataclasses.replace(c, build=lambda _v, m=mutant: m), {}),
        claim,
        method="smt",
        max_len=BOUND,
        timeout=60,
    ).verdict
    if wrong is not None:
        assert not isinstance(v, Proved), f"{label}: proved, but it gets {wrong} wrong"
    if isinstance(v, Refuted):
        assert v.word is not None and wrong is not None, label
        assert run(mutant, v.word).accepted != claim.language.contains(v.word), label
        assert v.word == wrong, f"{label}: {v.word} is not the shortlex-first wrong word {wrong}"
    elif isinstance(v, Proved) and "every longer one" in v.detail:
        rng = random.Random(label)
        for _ in range(20):
            w = tuple(
                rng.choice(mutant.alphabet) for _ in range(rng.randint(BOUND + 1, BOUND + 10))
            )
            assert run(mutant, w).accepted == claim.language.contains(w), (
                f"{label}: proved for every length, but wrong on {w}"
            )
    else:
        assert isinstance(v, Unknown | Proved), label
    return f"{type(v).__name__}{'' if wrong is None else ' (changes the function)'}"


@pytest.mark.parametrize("name", MUTATED)
def test_a_spread_of_single_weight_mutants_is_refuted_with_the_first_wrong_word_whenever_it_changes_the_function(
    name: str,
) -> None:
    c, claim, mutants = _mutants(name)
    ranked = [x for x in mutants if x[1]]
    assert ranked, f"{name}: no weight of a RankedSelection head (the pick is broken)"
    verdicts = [
        _check(c, claim, label, m) for label, _r, m in ranked[:: max(1, len(ranked) // 2)][:2]
    ]
    # and the first two of a spread of the other weights' mutants that change the function on a short word
    short = _words(c.network({}).alphabet, 0, 2)
    others = [x for x in mutants if not x[1]][3::17]
    changing = [
        x for x in others if any(run(x[2], w).accepted != claim.language.contains(w) for w in short)
    ][:2]
    verdicts += [_check(c, claim, label, m) for label, _r, m in changing]
    assert "Refuted (changes the function)" in verdicts, verdicts


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTATED)
def test_every_single_weight_mutant_is_refuted_with_the_first_wrong_word_whenever_it_changes_the_function(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    c, claim, mutants = _mutants(name)
    counts: dict[str, int] = {}
    for label, _r, m in mutants:
        kind = _check(c, claim, label, m)
        counts[kind] = counts.get(kind, 0) + 1
    with capsys.disabled():
        print(
            f"\n{name}: {len(mutants)} single-weight mutants, verdicts to length {BOUND}: {counts}"
        )


# --------------------------------------------------------------------------- proof logs


@pytest.fixture(scope="module")
def ab_star_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``netproof prove brasp-ab-star --method smt`` written once for the module: the record of
    network=program, proved for every length."""
    from netproof.verifier import cli as np_cli

    out = tmp_path_factory.mktemp("proofs")
    code = np_cli.main(
        ["prove", "brasp-ab-star", "--method", "smt", "--out", str(out), "--jobs", "1", "--quiet"]
    )
    assert code == 3  # the TraceProperty and ExactFact claims are unknown to the smt method
    (path,) = sorted((out / "brasp-ab-star").glob("network_program.*.json"))
    return path


def test_a_proof_for_every_length_with_a_ranked_selection_is_logged_fresh_and_every_solver_agrees(
    ab_star_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.constructions import REGISTRY
    from netproof.verifier import cli as np_cli
    from netproof.verifier.smt.prooflog import check_fresh

    rec = check_fresh(str(ab_star_log), REGISTRY).record
    assert (rec["verdict"], rec["method"]) == ("proved", "smt (z3), compositional")
    assert "every longer one" in rec["detail"]
    (node,) = [ch for ch in rec["lemmas"]["children"] if ch["name"] == "L1.first_a"]
    assert node["verdict"] == "proved" and [q["result"] for q in node["queries"]] == ["unsat"]
    for solver in ("z3", "cvc5"):
        code = np_cli.main(["recheck", str(ab_star_log), "--solver", solver, "--quiet"])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "every answer as recorded" in out


def test_a_ranked_selection_query_changed_in_the_log_is_stale(
    ab_star_log: Path, tmp_path: Path
) -> None:
    import hashlib
    import json
    import shutil

    from netproof.constructions import REGISTRY
    from netproof.verifier.smt.prooflog import ProofLogError, check_fresh

    root = tmp_path / "proofs"
    shutil.copytree(ab_star_log.parent.parent, root)
    path = root / ab_star_log.parent.name / ab_star_log.name
    rec = json.loads(path.read_text(encoding="utf-8"))
    (node,) = [ch for ch in rec["lemmas"]["children"] if ch["name"] == "L1.first_a"]
    entry = node["queries"][0]
    query = (path.parent / entry["file"]).resolve()
    text = query.read_text(encoding="utf-8").replace("(check-sat)", "(assert true)\n(check-sat)")
    query.write_text(text, encoding="utf-8")
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            entry["sha256"], hashlib.sha256(text.encode()).hexdigest()
        ),
        encoding="utf-8",
    )
    with pytest.raises(ProofLogError, match=r"L1\.first_a.*rebuilds to sha256"):
        check_fresh(str(path), REGISTRY)


@pytest.mark.parametrize("name", ["ab_star", "first_eq_last"])
def test_the_reference_automaton_of_a_program_with_an_all_mask_accepts_exactly_its_language_to_length_10_and_equals_the_programs(
    name: str,
) -> None:
    language, program = REFERENCE_LANGUAGES[name], BRASP_PROGRAMS[name]
    dfa = language.automaton
    assert dfa is not None
    assert [
        w
        for w in _words(language.alphabet, 0, 10)
        if dfa.accepts([language.alphabet.index(s) for s in w]) != language.contains(w)
    ] == []
    (fact,) = [
        c
        for c in program_construction(name, program, language).claims({})
        if c.id == "program=language"
    ]
    assert fact.cases.startswith("every word of every length")
    assert fact.check()[1] is None
