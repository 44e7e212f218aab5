"""Counting proofs for every length (verifier/smt/compositional/counters.py): counter automata,
the UniformCount and CountComparison lemmas, and network = program / network = language for
the compiled C-RASP programs; program = language for every length by the two counter automata
side by side (verifier/smt/compositional/same_language.py); faithfulness against exhaustive
checks and mutation tests."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from weight_mutants import affine_site_path, affine_sites, with_weight

from netproof.constructions.rasp.claims import program_construction
from netproof.constructions.rasp.compile_crasp import INV_I, compile_crasp
from netproof.constructions.rasp.crasp_lemmas import crasp_lemmas, program_counters
from netproof.constructions.rasp.library import (
    COUNTER_AUTOMATA,
    CRASP_PROGRAMS,
    REFERENCE_LANGUAGES,
)
from netproof.symbolic import FFN, Affine, AttentionLayer, Network
from netproof.symbolic.exact import run
from netproof.verifier.claims import ExactFact, Proved, Recognizes, Refuted, Unknown
from netproof.verifier.claims.counting import (
    CountComparison,
    CounterAutomaton,
    CounterRule,
    UniformCount,
    linear,
)
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.fuzzing.rasp_strategies import crasp_programs
from netproof.verifier.smt.compositional.counters import prove_counting, prove_counting_lemma
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3


def _words(alphabet: tuple[str, ...], n: int) -> list[tuple[str, ...]]:
    return [w for m in range(n + 1) for w in product(alphabet, repeat=m)]


def _accepts(net: Network, w: tuple[str, ...]) -> bool | None:
    """The network's verdict, None where the exact interpreter has no value (a layer norm of 0)."""
    try:
        return run(net, w).accepted
    except Exception:
        return None


def _claim(program: C.Program, reference: object = None, max_len: int = 6) -> Recognizes:
    if reference is None:
        language = dataclasses.replace(C.language(program), counters=program_counters(program))
        return Recognizes(
            id="network=program",
            statement="the network is the program",
            reference="test",
            language=language,
            max_len=max_len,
        )
    return Recognizes(
        id="network=language",
        statement="the network is the language",
        reference="test",
        language=reference,
        max_len=max_len,
    )  # type: ignore[arg-type]


# --------------------------------------------------------------------------- counter automata


def test_a_counter_automaton_takes_the_first_rule_that_applies_and_rejects_where_none_does() -> (
    None
):
    x = ("x",)
    ca = CounterAutomaton(
        states=1,
        counters=x,
        symbols=2,
        start=0,
        rules=(
            CounterRule(state=0, symbol=0, guard=linear(x, {"x": 1}, "<", 2), target=0, add=(1,)),
            CounterRule(state=0, symbol=0, guard=(), target=0, add=(5,)),
        ),
        accepting=((0, linear(x, {"x": 1}, ">=", 1)),),
    )
    assert ca.run((0, 0, 0)) == (0, (7,))
    assert ca.run((1,)) is None
    assert (ca.accepts(()), ca.accepts((0,)), ca.accepts((0, 1))) == (False, True, False)


def test_a_counter_automaton_with_an_atom_of_the_wrong_width_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="one per counter"):
        CounterAutomaton(
            states=1,
            counters=("x",),
            symbols=1,
            start=0,
            rules=(),
            accepting=((0, (((1, 1), 0),)),),
        )
    with pytest.raises(ValueError, match="not among"):
        linear(("x",), {"y": 1}, ">=", 0)


@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_the_program_counter_automaton_and_the_reference_counter_automaton_are_the_languages_on_short_words(
    name: str,
) -> None:
    program, language = CRASP_PROGRAMS[name], REFERENCE_LANGUAGES[name]
    own = program_counters(program)
    assert own is not None and language.counters is COUNTER_AUTOMATA[name]
    for w in _words(program.alphabet, 9):
        idx = [program.alphabet.index(s) for s in w]
        assert own.accepts(idx) == C.accepts(program, w), w
        assert language.counters.accepts(idx) == language.contains(w), w


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crasp_programs(max_ops=6))
def test_the_counter_automaton_of_a_random_program_accepts_exactly_what_the_interpreter_accepts(
    program: C.Program,
) -> None:
    own = program_counters(program)
    assert own is not None
    for w in _words(program.alphabet, 6):
        assert own.accepts([program.alphabet.index(s) for s in w]) == C.accepts(program, w), w


# --------------------------------------------------------------------------- the lemmas


def _ffn_value(block: FFN, x: dict[str, Fraction]) -> dict[str, Fraction] | None:
    """The FFN on one input, exactly (None for a layer norm of a zero vector)."""
    cur = dict(x)
    for step in block.steps:
        if isinstance(step, Affine):
            cur = {
                o: sum(
                    (w * cur.get(i, Fraction(0)) for w, i in zip(row, step.inputs, strict=True)), b
                )
                for o, row, b in zip(step.outputs, step.weights, step.bias, strict=True)
            }
        elif getattr(step, "kind", None) == "relu":
            cur = {k: max(v, Fraction(0)) for k, v in cur.items()}
        else:  # LayerNorm
            names = list(step.over)  # type: ignore[union-attr]
            mean = sum(cur[k] for k in names) / len(names)
            var = sum((cur[k] - mean) ** 2 for k in names) / len(names) + step.eps  # type: ignore[union-attr]
            if var == 0:
                return None
            root = Fraction(int(var.numerator**0.5), int(var.denominator**0.5))
            if root * root != var:
                return None
            cur = {**cur, **{k: (cur[k] - mean) / root for k in names}}
    return cur


def _comparison_holds_on_grid(block: FFN, lemma: CountComparison) -> bool:
    for u in (1, 2, 3):
        for values in product(range(-3, 4), repeat=len(lemma.counts)):
            v = dict(zip(lemma.counts, values, strict=True))
            got = _ffn_value(
                block, {lemma.unit: Fraction(1, u), **{d: Fraction(x, u) for d, x in v.items()}}
            )
            if got is None:
                return False
            for d, (coefs, const) in lemma.outputs.items():
                if got[d] != int(sum(c * v[k] for k, c in coefs.items()) + const > 0):
                    return False
    return True


def _ffn_mutants(block: FFN, rng: random.Random, count: int) -> list[FFN]:
    sites = [
        (s, r, c)
        for s, step in enumerate(block.steps)
        if isinstance(step, Affine)
        for r in range(len(step.outputs))
        for c in range(len(step.inputs))
    ]
    out = []
    for s, r, c in rng.sample(sites, min(count, len(sites))):
        step = block.steps[s]
        assert isinstance(step, Affine)
        weights = [list(row) for row in step.weights]
        weights[r][c] += Fraction(rng.choice((-1, 1, 2)), 2)
        new = dataclasses.replace(step, weights=tuple(tuple(row) for row in weights))
        out.append(
            dataclasses.replace(
                block, steps=tuple(new if i == s else x for i, x in enumerate(block.steps))
            )
        )
    return out


def _with_block(net: Network, block: object) -> Network:
    name = block.name  # type: ignore[attr-defined]
    return dataclasses.replace(
        net,
        layers=tuple(
            dataclasses.replace(x, block=block) if x.block.name == name else x for x in net.layers
        ),
    )  # type: ignore[arg-type]


def test_a_comparison_lemma_is_proved_exactly_where_it_holds_on_a_grid_of_counts_and_units_and_mutants_are_refuted() -> (
    None
):
    program = CRASP_PROGRAMS["a_minus_2b"]
    net = compile_crasp(program)
    (lemma,) = [x for x in crasp_lemmas(program, net) if isinstance(x, CountComparison)]
    block = next(s.block for s in net.layers if s.block.name == lemma.block)
    assert isinstance(block, FFN)
    node, proved = prove_counting_lemma(net, lemma)
    assert proved and node.verdict == "proved" and _comparison_holds_on_grid(block, lemma)
    verdicts = []
    for mutant in _ffn_mutants(block, random.Random(1), 12):
        node, proved = prove_counting_lemma(_with_block(net, mutant), lemma)
        holds = _comparison_holds_on_grid(mutant, lemma)
        assert not (proved and not holds), node.statement
        if not holds:
            verdicts.append(node.verdict)
    assert verdicts and all(v in ("refuted", "unknown") for v in verdicts)
    assert "refuted" in verdicts


def test_a_uniform_count_lemma_is_refused_for_a_head_whose_score_reads_the_key_or_whose_mask_is_strict() -> (
    None
):
    program = CRASP_PROGRAMS["majority"]
    net = compile_crasp(program)
    lemma = next(
        x for x in crasp_lemmas(program, net) if isinstance(x, UniformCount) and x.head != INV_I
    )
    assert prove_counting_lemma(net, lemma)[1]
    layer = next(s.block for s in net.layers if s.block.name == lemma.layer)
    assert isinstance(layer, AttentionLayer)
    h = next(h for h in layer.heads if h.name == lemma.head)
    strict = dataclasses.replace(
        layer,
        heads=tuple(
            dataclasses.replace(x, mask="strict_causal") if x is h else x for x in layer.heads
        ),
    )
    key = Affine(
        inputs=("Q_a",),
        outputs=h.key.outputs,
        weights=((Fraction(1),),) * len(h.key.outputs),
        bias=(Fraction(0),) * len(h.key.outputs),
    )
    query = dataclasses.replace(h.query, bias=(Fraction(1),) * len(h.query.outputs))
    scored = dataclasses.replace(
        layer,
        heads=tuple(
            dataclasses.replace(x, key=key, query=query) if x is h else x for x in layer.heads
        ),
    )
    for bad, why in ((strict, "not 'causal'"), (scored, "key reads dims")):
        node, proved = prove_counting_lemma(_with_block(net, bad), lemma)
        assert not proved and node.verdict == "refuted" and why in node.statement


# --------------------------------------------------------------------------- the theorems


def test_network_equals_program_and_network_equals_majority_are_proved_for_every_length() -> None:
    program = CRASP_PROGRAMS["majority"]
    net = compile_crasp(program)
    for claim in (_claim(program), _claim(program, REFERENCE_LANGUAGES["majority"])):
        out = prove_counting(net, claim, crasp_lemmas(program, net), 6, timeout=60)
        assert isinstance(out.verdict, Proved) and "and every longer one" in out.verdict.detail
        assert out.lemmas is not None and [
            q.name.rsplit(": ", 1)[-1] for q in out.lemmas.queries
        ] == ["initiation", "consecution", "safety"]
        assert all(q.result == "unsat" and "(check-sat)" in q.smt2 for q in out.lemmas.queries)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_every_library_program_is_proved_equal_to_its_network_and_to_its_reference_for_every_length(
    name: str,
) -> None:
    program = CRASP_PROGRAMS[name]
    net = compile_crasp(program)
    for claim in (_claim(program), _claim(program, REFERENCE_LANGUAGES[name])):
        out = prove_counting(net, claim, crasp_lemmas(program, net), 8, timeout=120)
        assert isinstance(out.verdict, Proved) and "and every longer one" in out.verdict.detail, (
            out.verdict
        )


@pytest.mark.parametrize(("name", "seed"), [("majority", 0), ("dyck1", 1)])
def test_single_weight_mutants_that_change_the_function_are_never_proved_and_refutations_replay_exactly(
    name: str, seed: int
) -> None:
    program = CRASP_PROGRAMS[name]
    c = program_construction(name, program, REFERENCE_LANGUAGES[name], max_len=5)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    net = c.network({})
    assert isinstance(net, Network)
    lemmas = crasp_lemmas(program, net)
    words = _words(program.alphabet, 5)
    rng = random.Random(seed)
    changed = refuted = 0
    sites = affine_sites(net, parts=("value",))  # a counting head's value map
    for site in rng.sample(sites, min(30, len(sites))):
        mutant = with_weight(net, affine_site_path(net, site), Fraction(rng.choice((-1, 1)), 2))
        wrong = [w for w in words if _accepts(mutant, w) != C.accepts(program, w)]
        if not wrong:
            continue
        changed += 1
        v = prove_counting(mutant, claim, lemmas, 5, timeout=10).verdict
        assert not isinstance(v, Proved), site
        if isinstance(v, Refuted):
            refuted += 1
            assert v.word in wrong and _accepts(mutant, v.word) == (not C.accepts(program, v.word))
        # the smt method as a whole: no proof, and the shortlex-first wrong word where the counting proof has none
        job = Job(dataclasses.replace(c, build=lambda _v, m=mutant: m), {})
        whole = prove_claim(job, claim, method="smt", max_len=5, timeout=10).verdict
        assert isinstance(whole, Refuted) and whole.word in wrong, (site, whole)
        if changed == 4:
            break
    assert changed == 4


def test_mutated_programs_are_refuted_against_the_reference_with_a_word_the_interpreter_reproduces() -> (
    None
):
    a, b = C.token("a"), C.token("b")
    language = REFERENCE_LANGUAGES["majority"]
    mutants = [
        C.Program("geq", ("a", "b"), output=C.count(a) >= C.count(b)),
        C.Program("plus1", ("a", "b"), output=C.count(a) + 1 > C.count(b)),
        C.Program("swapped", ("a", "b"), output=C.count(b) > C.count(a)),
        C.Program("empty", ("a", "b"), output=C.count(a) > C.count(b), empty=True),
    ]
    for program in mutants:
        net = compile_crasp(program)
        v = prove_counting(
            net, _claim(program, language), crasp_lemmas(program, net), 6, timeout=20
        ).verdict
        assert isinstance(v, Refuted), (program.name, v)
        assert v.word is not None and run(net, v.word).accepted == C.accepts(
            program, v.word
        ) != language.contains(v.word)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crasp_programs(max_ops=5))
def test_a_random_program_is_proved_equal_to_its_network_or_left_unknown_never_refuted(
    program: C.Program,
) -> None:
    net = compile_crasp(program)
    out = prove_counting(net, _claim(program), crasp_lemmas(program, net), 5, timeout=20)
    assert not isinstance(out.verdict, Refuted), out.verdict
    if isinstance(out.verdict, Unknown):
        return
    for w in _words(program.alphabet, 6):
        assert run(net, w).accepted == C.accepts(program, w)


def test_a_counting_proof_log_is_read_strictly_and_cvc5_agrees_with_every_query_and_a_changed_invariant_is_rejected(
    tmp_path: object,
) -> None:
    import json
    from pathlib import Path

    from netproof.verifier.smt.prooflog import write_log
    from netproof.verifier.smt.recheck import recheck_log

    program = CRASP_PROGRAMS["majority"]
    c = program_construction("crasp-majority", program, REFERENCE_LANGUAGES["majority"], max_len=4)
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    outcome = prove_claim(Job(c, {}), claim, method="smt", max_len=4, timeout=60)
    assert isinstance(outcome.verdict, Proved) and "and every longer one" in outcome.verdict.detail
    path = write_log(str(tmp_path), c, {}, claim, 4, outcome)
    checked = recheck_log(path, registry={c.name: c}, solver="cvc5", timeout=60)
    assert checked.outcome == "agree", checked.detail
    assert sorted(q.name.rsplit(": ", 1)[-1] for q in checked.queries) == [
        "S3.cmp",
        "consecution",
        "initiation",
        "safety",
    ]
    assert all(q.answer == "unsat" for q in checked.queries)
    # an invariant weakened in the recorded initiation query no longer rebuilds: rejected
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    first = next(q for q in rec["lemmas"]["queries"] if q["name"].endswith("initiation"))
    smt2 = Path(path).parent / first["file"]
    text = smt2.read_text(encoding="utf-8")
    smt2.write_text(text.replace("(>= pos 0)", "(>= pos (- 1))", 1), encoding="utf-8")
    assert "(>= pos 0)" in text
    assert recheck_log(path, registry={c.name: c}, solver="cvc5", timeout=60).outcome == "rejected"


def test_a_user_program_with_a_counter_automaton_reference_gets_network_equals_language_proved_for_every_length() -> (
    None
):
    from netproof.constructions.rasp.modules import ProgramModuleError, program_constructions

    program = C.Program(
        "majority", ("a", "b"), output=C.count(C.token("a")) > C.count(C.token("b"))
    )
    (c,) = program_constructions(
        {"my-majority": (program, COUNTER_AUTOMATA["majority"])}, max_len=4
    )
    claims = {x.id: x for x in c.claims({})}
    assert list(claims) == ["network=program", "program=language", "network=language", "operations"]
    claim = claims["network=language"]
    assert isinstance(claim, Recognizes)
    v = prove_claim(Job(c, {}), claim, method="smt", max_len=4, timeout=60).verdict
    assert isinstance(v, Proved) and "and every longer one" in v.detail
    with pytest.raises(ProgramModuleError, match="reads 1 symbols, the alphabet"):
        program_constructions(
            {"m": (program, dataclasses.replace(COUNTER_AUTOMATA["majority"], symbols=1, rules=()))}
        )


@pytest.mark.parametrize("name", ["dyck1", "ambm"])
def test_every_proved_uniform_count_head_writes_its_running_sum_over_i_plus_1_on_every_short_word(
    name: str,
) -> None:
    program = CRASP_PROGRAMS[name]
    net = compile_crasp(program)
    heads = [
        x
        for x in crasp_lemmas(program, net)
        if isinstance(x, UniformCount) and prove_counting_lemma(net, x)[1]
    ]
    assert len(heads) == sum(
        len(s.block.heads) for s in net.layers if isinstance(s.block, AttentionLayer)
    )
    index = {s.block.name: k for k, s in enumerate(net.layers)}
    for w in _words(program.alphabet, 5):
        states = run(net, w).states
        for lemma in heads:
            k = index[lemma.layer]
            layer = net.layers[k].block
            assert isinstance(layer, AttentionLayer)
            h = next(x for x in layer.heads if x.name == lemma.head)
            before = [dict(zip(net.dims, r, strict=True)) for r in states[k].rows]
            after = [dict(zip(net.dims, r, strict=True)) for r in states[k + 1].rows]
            for o, row in zip(h.value.outputs, h.value.weights, strict=True):
                total = Fraction(0)
                for i, x in enumerate(before):
                    total += sum(
                        (c * x[d] for c, d in zip(row, h.value.inputs, strict=True)), Fraction(0)
                    )
                    assert total.denominator == 1 and after[i][o] - x[o] == total / (i + 1), (
                        w,
                        lemma.id,
                        i,
                    )


def _rebuilt(e: object, memo: dict[object, object]) -> object:
    """``e`` with every operation in ``memo`` replaced by its value there (shared operations
    rebuilt once)."""
    if e not in memo:
        fields = {
            f.name: _rebuilt(getattr(e, f.name), memo)
            for f in dataclasses.fields(e)  # type: ignore[arg-type]
            if isinstance(getattr(e, f.name), (C.BVec, C.CVec))
        }
        memo[e] = dataclasses.replace(e, **fields) if fields else e  # type: ignore[type-var]
    return memo[e]


def _program_mutants(program: C.Program) -> list[C.Program]:
    """One-site mutants of a program: a token read as the other symbol, a comparison's operands
    swapped, a constant moved by 1, a negation dropped."""
    other = {program.alphabet[0]: program.alphabet[1], program.alphabet[1]: program.alphabet[0]}
    ops = C.operations(program.output)
    out = []
    for site in ops:
        if isinstance(site, C.Token):
            new: object = C.Token(other[site.symbol])
        elif isinstance(site, C.Less):
            new = dataclasses.replace(site, left=site.right, right=site.left)
        elif isinstance(site, C.Number):
            new = C.Number(site.value + 1)
        elif isinstance(site, C.Not):
            new = site.arg
        else:
            continue
        out.append(
            C.Program(
                f"{program.name}_m{len(out)}",
                program.alphabet,
                output=_rebuilt(program.output, {site: new}),
                empty=program.empty,
            )
        )  # type: ignore[arg-type]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dyck1", "ambm"])
def test_one_site_program_mutants_are_never_proved_equal_to_the_reference_when_they_differ_within_the_bound(
    name: str,
) -> None:
    language = REFERENCE_LANGUAGES[name]
    words = _words(language.alphabet, 6)
    differing = 0
    for program in _program_mutants(CRASP_PROGRAMS[name]):
        c = program_construction(program.name, program, language, max_len=6)
        claim = next(x for x in c.claims({}) if x.id == "network=language")
        wrong = [w for w in words if C.accepts(program, w) != language.contains(w)]
        v = prove_claim(Job(c, {}), claim, method="smt", max_len=6, timeout=20).verdict
        if wrong:
            differing += 1
            assert isinstance(v, Refuted) and v.word == wrong[0], (program.name, v)
        else:
            assert not isinstance(v, Refuted), (program.name, v)
    assert differing >= 3


# --------------------------------------------------------------------------- program = language, every length


def _program_language(
    program: C.Program, language: object, max_len: int = 6
) -> tuple[object, ExactFact]:
    c = program_construction(program.name, program, language, max_len=max_len)  # type: ignore[arg-type]
    claim = next(x for x in c.claims({}) if x.id == "program=language")
    assert isinstance(claim, ExactFact)
    return c, claim


def _differ(claim: ExactFact, max_len: int) -> list[tuple[str, ...]]:
    assert claim.statable is not None
    left, right = claim.statable.left, claim.statable.right
    return [w for w in _words(left.alphabet, max_len) if left.contains(w) != right.contains(w)]


def test_program_equals_language_of_a_c_rasp_program_states_both_checks_and_its_smt_form_compares_counter_automata() -> (
    None
):
    program = CRASP_PROGRAMS["dyck1"]
    _c, claim = _program_language(program, REFERENCE_LANGUAGES["dyck1"], max_len=8)
    assert claim.statement == (
        "program dyck1 accepts exactly the words of DYCK1 (balanced brackets): the program's interpreter on every word up to "
        "length 8 (exhaustive), and, of every length, the program's counter automaton (read off the program) against DYCK1's (smt)"
    )
    assert claim.statable is not None and claim.statable.right is REFERENCE_LANGUAGES["dyck1"]
    assert claim.statable.left.counters == program_counters(program)
    # no counter automaton for the reference: the bounded check alone, and a statement without "every length"
    plain = dataclasses.replace(REFERENCE_LANGUAGES["dyck1"], counters=None)
    _c, bounded = _program_language(program, plain)
    assert bounded.statable is None and "every length" not in bounded.statement


@pytest.mark.parametrize("name", ["majority", "dyck1"])
def test_program_equals_language_is_proved_for_every_length_by_three_qf_lia_queries_and_the_default_method_still_enumerates(
    name: str,
) -> None:
    c, claim = _program_language(CRASP_PROGRAMS[name], REFERENCE_LANGUAGES[name], max_len=6)
    job = Job(c, {})  # type: ignore[arg-type]
    out = prove_claim(job, claim, method="smt", timeout=60)
    assert isinstance(out.verdict, Proved) and out.verdict.method == "smt (z3)", out.verdict
    assert "and every longer one" in out.verdict.detail and out.verdict.checked == 2**7 - 1
    assert [q.name for q in out.queries] == [
        f"program=language every n: {x}" for x in ("initiation", "consecution", "safety")
    ]
    assert all(q.result == "unsat" and q.smt2.startswith("(set-logic QF_LIA)") for q in out.queries)
    exhaustive = prove_claim(job, claim, method="exhaustive").verdict
    assert (
        isinstance(exhaustive, Proved)
        and exhaustive.method == "exact rational arithmetic"
        and exhaustive.detail == claim.cases
    )
    both = prove_claim(job, claim, method="all", timeout=60).verdict
    assert isinstance(both, Proved) and "and every longer one" in both.detail


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_every_library_c_rasp_program_is_proved_equal_to_its_reference_language_for_every_length(
    name: str,
) -> None:
    c, claim = _program_language(CRASP_PROGRAMS[name], REFERENCE_LANGUAGES[name], max_len=8)
    v = prove_claim(Job(c, {}), claim, method="smt", timeout=120).verdict  # type: ignore[arg-type]
    assert isinstance(v, Proved) and "and every longer one" in v.detail, v


def _majority_mutants() -> list[C.Program]:
    a, b = C.token("a"), C.token("b")
    return [
        *_program_mutants(CRASP_PROGRAMS["majority"]),
        C.Program("geq", ("a", "b"), output=C.count(a) >= C.count(b)),
        C.Program("plus1", ("a", "b"), output=C.count(a) + 1 > C.count(b)),
        C.Program("minus1", ("a", "b"), output=C.count(a) - 1 > C.count(b)),
        C.Program("swapped", ("a", "b"), output=C.count(b) > C.count(a)),
        C.Program("empty", ("a", "b"), output=C.count(a) > C.count(b), empty=True),
        C.Program("double", ("a", "b"), output=C.count(a) > 2 * C.count(b)),
    ]


def _assert_mutants(
    mutants: list[C.Program], language: object, max_len: int, timeout: float
) -> int:
    """Each mutant's program=language by the smt method: refuted by a word on which the
    interpreter and the reference differ where they differ within the bound, never proved then;
    never refuted where they agree. Returns how many differ."""
    differing = 0
    for program in mutants:
        c, claim = _program_language(program, language, max_len=max_len)
        wrong = _differ(claim, max_len)
        v = prove_claim(Job(c, {}), claim, method="smt", timeout=timeout).verdict  # type: ignore[arg-type]
        if wrong:
            differing += 1
            assert isinstance(v, Refuted), (program.name, v)
            assert v.word is not None and len(v.word) == len(wrong[0])
            assert C.accepts(program, v.word) != language.contains(v.word)  # type: ignore[attr-defined]
        else:
            assert not isinstance(v, Refuted), (program.name, v)
    return differing


def test_program_mutants_of_majority_are_refuted_against_the_reference_with_a_word_the_interpreter_reproduces() -> (
    None
):
    assert _assert_mutants(_majority_mutants(), REFERENCE_LANGUAGES["majority"], 6, 20) == 9


@pytest.mark.parametrize("name", ["dyck1", pytest.param("ambm", marks=pytest.mark.slow)])
def test_one_site_program_mutants_are_never_proved_equal_to_the_reference_language_when_they_differ_within_the_bound(
    name: str,
) -> None:
    assert (
        _assert_mutants(_program_mutants(CRASP_PROGRAMS[name]), REFERENCE_LANGUAGES[name], 6, 30)
        >= 8
    )


@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_the_smt_form_of_program_equals_language_says_what_the_bounded_check_says_on_short_words(
    name: str,
) -> None:
    programs = [CRASP_PROGRAMS[name], *_program_mutants(CRASP_PROGRAMS[name])]
    for program in programs:
        _c, claim = _program_language(program, REFERENCE_LANGUAGES[name], max_len=6)
        assert claim.statable is not None
        left = claim.statable.left
        assert left.counters is not None
        for w in _words(left.alphabet, 6):  # the program's counter automaton is its interpreter
            assert left.counters.accepts(tuple(left.alphabet.index(s) for s in w)) == left.contains(
                w
            ), (program.name, w)
        _cases, failure = claim.check()
        assert (failure is None) == (not _differ(claim, 6)), program.name


def test_program_equals_language_is_unknown_never_proved_when_no_invariant_is_found_or_a_query_gets_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from netproof.verifier.smt.compositional import same_language

    c, claim = _program_language(
        CRASP_PROGRAMS["majority"], REFERENCE_LANGUAGES["majority"], max_len=4
    )
    job = Job(c, {})  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setattr(same_language, "houdini", lambda *a, **k: ("unknown", "timeout"))
        m.setattr(same_language, "spacer", lambda *a, **k: ("unknown", "timeout"))
        v = prove_claim(job, claim, method="smt", timeout=5).verdict
        assert isinstance(v, Unknown) and "no inductive invariant found (timeout)" in v.reason, v
    with monkeypatch.context() as m:
        m.setattr(same_language.smtlib, "check", lambda *a, **k: ("unknown", "timeout", None))
        v = prove_claim(job, claim, method="smt", timeout=5).verdict
        assert (
            isinstance(v, Unknown) and "its query 'initiation' was unknown (timeout)" in v.reason
        ), v
    other = dataclasses.replace(REFERENCE_LANGUAGES["dyck1"], counters=COUNTER_AUTOMATA["majority"])
    v = same_language.prove_same_language(
        dataclasses.replace(claim, statable=dataclasses.replace(claim.statable, right=other)),
        timeout=5,
    ).verdict
    assert isinstance(v, Unknown) and v.reason.startswith(
        "unsupported: majority is over ('a', 'b'), DYCK1 over ('(', ')')"
    ), v


def test_a_program_equals_language_proof_log_is_rebuilt_strictly_cvc5_agrees_and_a_refutation_replays(
    tmp_path: object,
) -> None:
    import hashlib
    import json
    from pathlib import Path

    from netproof.verifier.smt.prooflog import ProofLogError, verify_record, write_log
    from netproof.verifier.smt.recheck import recheck_log

    c, claim = _program_language(
        CRASP_PROGRAMS["majority"], REFERENCE_LANGUAGES["majority"], max_len=4
    )
    outcome = prove_claim(Job(c, {}), claim, method="smt", timeout=60)  # type: ignore[arg-type]
    assert isinstance(outcome.verdict, Proved)
    path = write_log(str(tmp_path), c, {}, claim, None, outcome)  # type: ignore[arg-type]
    checked = recheck_log(path, registry={c.name: c}, solver="cvc5", timeout=60)  # type: ignore[dict-item]
    assert checked.outcome == "agree", checked.detail
    assert [q.answer for q in checked.queries] == ["unsat", "unsat", "unsat"]
    # another invariant in the initiation query (its hash updated): the other two no longer rebuild
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    first = rec["queries"][0]
    smt2 = Path(path).parent / first["file"]
    text = smt2.read_text(encoding="utf-8")
    new = text.replace("(>= left.c.count1 0)", "(>= left.c.count1 (- 5))")
    assert new != text
    smt2.write_text(new, encoding="utf-8")
    first["sha256"] = hashlib.sha256(new.encode("utf-8")).hexdigest()
    Path(path).write_text(
        json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with pytest.raises(ProofLogError, match=r"rebuilds to sha256|not the claim"):
        verify_record(path, {c.name: c})  # type: ignore[dict-item]
    # a refutation (no queries): its word replays with both membership tests
    swapped = C.Program("swapped", ("a", "b"), output=C.count(C.token("b")) > C.count(C.token("a")))
    cm, mutant = _program_language(swapped, REFERENCE_LANGUAGES["majority"], max_len=4)
    refuted = prove_claim(Job(cm, {}), mutant, method="smt", timeout=30)  # type: ignore[arg-type]
    assert isinstance(refuted.verdict, Refuted) and refuted.verdict.word == ("a",)
    rpath = write_log(str(tmp_path), cm, {}, mutant, None, refuted)  # type: ignore[arg-type]
    assert recheck_log(rpath, registry={cm.name: cm}, solver="cvc5", timeout=60).outcome == "agree"  # type: ignore[dict-item]
    rrec = json.loads(Path(rpath).read_text(encoding="utf-8"))
    rrec["counterexample"] = "ab"  # both reject it: not a counterexample
    Path(rpath).write_text(json.dumps(rrec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with pytest.raises(ProofLogError, match="is not a word on which swapped and MAJORITY differ"):
        verify_record(rpath, {cm.name: cm})  # type: ignore[dict-item]
