"""Compositional SMT proofs (netproof.verifier.smt.compositional): lemmas proved over their whole input
domain, the theorem proved over the network with the lemmas in place, counterexamples replayed
exactly, and mutants caught (a verifier that never finds a bug is worthless)."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import pytest

from netproof.constructions import REGISTRY
from netproof.symbolic import FFN, Affine, AttentionLayer, Network, Sublayer
from netproof.symbolic.exact import run
from netproof.verifier import smtlib
from netproof.verifier.claims import Automaton, Language, Proved, Recognizes, Refuted, Unknown
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.smt.compositional import (
    Diagram,
    prove_compositional,
    prove_lemma,
    prove_recognizes,
    rebuild_queries,
)
from netproof.verifier.smt.compositional.arithmetic import commutative as _commutative
from netproof.verifier.smt.compositional.invariants import certificate
from netproof.verifier.smt.compositional.invariants import recorded_invariant as _recorded_invariant
from netproof.verifier.smt.compositional.lemmas import LemmaResult as _LemmaResult
from netproof.verifier.smt.compositional.lemmas import replay as _replay
from netproof.verifier.smt.compositional.ranges import _next_range
from netproof.verifier.smt.compositional.search import EveryLengthSearch as _EveryLengthSearch
from netproof.verifier.smt.compositional.search import _prove_every_length
from netproof.verifier.smt.compositional.system import every_length_system as _every_length_system
from netproof.verifier.smt.errors import EncoderBugError
from netproof.verifier.smtlib import LemmaNode

pytestmark = pytest.mark.z3


def _dyck(k: int, depth: int, variant: str = "fixed") -> tuple[Network, Recognizes, tuple]:
    construction = REGISTRY["dyck"]
    values = construction.parse_params({"k": str(k), "depth": str(depth), "variant": variant})
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    assert construction.lemmas is not None
    # the whole network as one transition system: the proof by layers is tests/verifier/test_layer_induction.py's
    return (
        construction.network(values),
        dataclasses.replace(claim, induction=None),
        construction.lemmas(values),
    )


def _replace_block(net: Network, name: str, block: FFN | AttentionLayer) -> Network:
    layers = tuple(
        Sublayer(block=block, residual=s.residual, post_ln=s.post_ln) if s.name == name else s
        for s in net.layers
    )
    return dataclasses.replace(net, layers=layers)


def _nudge(a: Affine, output: str, input_: str, delta: Fraction) -> Affine:
    o, i = a.outputs.index(output), a.inputs.index(input_)
    rows = tuple(
        tuple(w + delta if (r, c) == (o, i) else w for c, w in enumerate(row))
        for r, row in enumerate(a.weights)
    )
    return dataclasses.replace(a, weights=rows)


def _verdicts(tree: LemmaNode) -> dict[str, str]:
    return {node.name: node.verdict for node in tree.walk()}


# --------------------------------------------------------------------------- automata


@pytest.mark.parametrize(
    ("language", "max_len"),
    [(DYCK(1, 1), 8), (DYCK(2, 2), 6), (DYCK(2, 3), 6), (DYCK(3, 2), 4), (PARITY, 8), (FIRST, 8)],
    ids=lambda x: getattr(x, "name", str(x)),
)
def test_every_language_automaton_agrees_with_its_membership_test_on_short_words(language, max_len):
    automaton = language.automaton
    assert automaton is not None
    for m in range(max_len + 1):
        for word in itertools.product(range(len(language.alphabet)), repeat=m):
            symbols = tuple(language.alphabet[a] for a in word)
            assert automaton.accepts(word) == language.contains(symbols), symbols


def test_an_automaton_with_a_transition_outside_its_states_is_refused():
    with pytest.raises(ValueError, match=r"delta\[0\] goes to state 5"):
        Automaton(states=2, start=0, accepting=frozenset({1}), delta=((0, 5), (1, 0)))


def test_parity_is_commutative_and_dyck_and_first_are_not():
    assert _commutative(PARITY.automaton)
    assert not _commutative(FIRST.automaton)
    assert not _commutative(DYCK(1, 1).automaton)


# --------------------------------------------------------------------------- lemmas


def test_every_block_lemma_of_the_dyck_recognizer_is_proved_over_its_whole_domain():
    net, _claim, lemmas = _dyck(2, 2)
    for lemma in lemmas:
        node, proved = prove_lemma(net, lemma)
        assert proved, (lemma.id, node.queries[0].reason)
        assert node.verdict == "proved"
        assert node.queries[0].result == "unsat"
        assert node.queries[0].smt2.startswith("(set-logic ")


def test_a_changed_gate_weight_refutes_the_boolean_lemma_of_its_ffn_with_an_input():
    net, _claim, lemmas = _dyck(2, 2)
    logic1 = next(s.block for s in net.layers if s.name == "logic1")
    assert isinstance(logic1, FFN)
    last = logic1.steps[-1]
    assert isinstance(last, Affine)
    mutant = _replace_block(
        net,
        "logic1",
        dataclasses.replace(
            logic1, steps=(*logic1.steps[:-1], _nudge(last, "m", last.inputs[0], Fraction(1, 2)))
        ),
    )
    lemma = next(item for item in lemmas if item.id == "logic1")
    node, proved = prove_lemma(mutant, lemma)
    assert not proved
    assert node.verdict == "refuted"
    assert "differs from the lemma on dims ['m']" in node.queries[0].reason


def test_a_head_whose_key_prefers_matched_tokens_refutes_its_nearest_selection_lemma():
    net, _claim, lemmas = _dyck(1, 1)
    layer = next(s.block for s in net.layers if s.name == "match1")
    assert isinstance(layer, AttentionLayer)
    left = layer.heads[0]
    flipped = dataclasses.replace(left, key=_nudge(left.key, "q", "m", Fraction(2)))  # score p + m
    mutant = _replace_block(
        net, "match1", dataclasses.replace(layer, heads=(flipped, *layer.heads[1:]))
    )
    lemma = next(item for item in lemmas if item.id == "match1.left")
    node, proved = prove_lemma(mutant, lemma)
    assert not proved
    assert node.verdict == "refuted"
    assert "the score order breaks the ranking" in node.queries[0].reason


# --------------------------------------------------------------------------- theorems


def test_the_dyck_recognizer_is_proved_from_its_lemmas_for_every_word_up_to_length_40_in_three_range_queries():
    verdict, tree = prove_compositional(
        REGISTRY["dyck"], {"k": "2", "depth": "2"}, "Y2", 40, timeout=120, lengths="ranges"
    )
    assert isinstance(verdict, Proved)
    assert verdict.checked == sum(4**m for m in range(41))
    verdicts = _verdicts(tree)
    assert verdicts["Y2"] == "proved"
    assert {name: v for name, v in verdicts.items() if name != "Y2"} == {
        "match1.left": "proved",
        "match1.right": "proved",
        "logic1": "proved",
        "match2.left": "proved",
        "match2.right": "proved",
        "logic2": "proved",
        "readout.any_open_or_error": "proved",
        "side conditions": "proved",
    }
    assert [q.name for q in tree.queries] == ["Y2 n=0..16", "Y2 n=17..32", "Y2 n=33..40"]
    assert all(q.result == "unsat" for q in tree.queries)
    assert all(q.smt2.startswith("(set-logic QF_UF)") for q in tree.queries)  # Booleans only
    side = next(node for node in tree.walk() if node.name == "side conditions")
    assert "encoded faithfully" not in side.statement


def test_the_printed_dyck_recognizer_is_refuted_with_a_shortest_word_the_exact_interpreter_gets_wrong():
    verdict, tree = prove_compositional(
        REGISTRY["dyck"], {"k": "1", "depth": "1", "variant": "paper"}, "Y2-paper", 6, timeout=120
    )
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("(", ")")  # shortlex-first at the shortest length (erratum 3)
    assert run(
        REGISTRY["dyck"].network({"k": 1, "depth": 1, "variant": "paper"}), verdict.word
    ).accepted != DYCK(1, 1).contains(verdict.word)
    assert tree.verdict == "refuted"
    assert tree.queries[-1].result == "sat"


def test_a_readout_bias_that_accepts_everything_is_refuted_with_a_replayed_word():
    net, claim, lemmas = _dyck(1, 1)
    readout = dataclasses.replace(
        net.readout, logit=dataclasses.replace(net.readout.logit, bias=(Fraction(1, 2),))
    )
    mutant = dataclasses.replace(net, readout=readout)
    progress = prove_recognizes(mutant, claim, lemmas, 4, timeout=60)
    assert isinstance(progress.verdict, Refuted)
    word = progress.verdict.word
    assert word is not None and run(mutant, word).accepted and not DYCK(1, 1).contains(word)
    assert progress.proved_up_to == len(word) - 1


def _logic1_mutant(net: Network, input_: str, delta: Fraction) -> Network:
    logic1 = next(s.block for s in net.layers if s.name == "logic1")
    assert isinstance(logic1, FFN)
    last = logic1.steps[-1]
    assert isinstance(last, Affine)
    return _replace_block(
        net,
        "logic1",
        dataclasses.replace(logic1, steps=(*logic1.steps[:-1], _nudge(last, "m", input_, delta))),
    )


def test_a_broken_gate_lemma_is_refuted_and_the_faithful_encoding_finds_the_word_the_mutant_gets_wrong():
    net, claim, lemmas = _dyck(1, 1)
    mutant = _logic1_mutant(net, "L6:+o", Fraction(-1, 2))
    progress = prove_recognizes(mutant, claim, lemmas, 4, timeout=60)
    assert _verdicts(progress.tree)["logic1"] == "refuted"
    assert isinstance(progress.verdict, Refuted)
    assert progress.verdict.word == ()  # the empty word: the shortest one the mutant rejects
    assert run(mutant, ()).accepted is False and DYCK(1, 1).contains(())


def test_a_broken_gate_lemma_that_changes_no_word_up_to_the_bound_leaves_the_theorem_proved_without_it():
    net, claim, lemmas = _dyck(1, 1)
    mutant = _logic1_mutant(net, "L6:+t0", Fraction(1, 2))
    progress = prove_recognizes(mutant, claim, lemmas, 4, timeout=60)
    assert _verdicts(progress.tree)["logic1"] == "refuted"
    assert isinstance(progress.verdict, Proved)
    assert all(
        run(mutant, w).accepted == DYCK(1, 1).contains(w)
        for m in range(5)
        for w in itertools.product("()", repeat=m)
    )


def test_one_query_per_length_proves_the_same_dyck_recognizer_as_the_range_queries():
    net, claim, lemmas = _dyck(2, 2)
    progress = prove_recognizes(net, claim, lemmas, 6, timeout=60, lengths="each")
    assert isinstance(progress.verdict, Proved)
    assert [q.name for q in progress.tree.queries] == [f"Y2 n={m}" for m in range(7)]


def test_the_ranges_double_while_the_budget_allows_and_shrink_to_what_is_predicted_to_fit():
    assert _next_range(0, 1000, [], 60.0) == 16
    assert _next_range(17, 1000, [(0, 16, 0.5)], 60.0) == 32
    assert _next_range(65, 100, [(17, 32, 0.5), (33, 64, 2.0)], 60.0) == 100  # the bound caps it
    # 64 took 4 s, 32 took 0.5 s: time grows as length^3, so 128 would take 32 s > 40 s / 2
    assert _next_range(65, 1000, [(17, 32, 0.5), (33, 64, 4.0)], 40.0) == int(
        64 * (20 / 4.0) ** (1 / 3)
    )
    # a short range after it (65..100) does not count as a full one: the prediction still comes from 33..64
    assert _next_range(101, 1000, [(17, 32, 0.5), (33, 64, 4.0), (65, 100, 1.0)], 40.0) == int(
        64 * (20 / 4.0) ** (1 / 3)
    )
    assert _next_range(101, 1000, [(17, 32, 0.5), (33, 64, 4.0), (65, 100, 1.0)], 400.0) == 200
    # nothing longer is predicted to fit: the one length a
    assert _next_range(65, 1000, [(17, 32, 0.5), (33, 64, 4.0)], 1.0) == 65


def test_an_unknown_lengths_mode_is_refused_with_the_modes_there_are():
    net, claim, lemmas = _dyck(1, 1)
    with pytest.raises(ValueError, match="lengths='every': use 'all'"):
        prove_recognizes(net, claim, lemmas, 4, lengths="every")


def test_a_counterexample_inside_a_range_query_is_shrunk_to_the_shortest_length_and_the_shortlex_first_word():
    # Readout bias +1/2 instead of -1/2: every word is accepted, so the first wrong word is the
    # shortlex-first non-member, "(" at length 1, found inside the one query over lengths 0..12.
    net, claim, lemmas = _dyck(1, 1)
    readout = dataclasses.replace(
        net.readout, logit=dataclasses.replace(net.readout.logit, bias=(Fraction(1, 2),))
    )
    mutant = dataclasses.replace(net, readout=readout)
    progress = prove_recognizes(mutant, claim, lemmas, 12, timeout=60)
    assert isinstance(progress.verdict, Refuted)
    assert progress.verdict.word == ("(",)
    assert [q.name for q in progress.tree.queries] == ["Y2 n=0..12"]
    assert progress.tree.queries[0].result == "sat"
    assert progress.proved_up_to == 0


@pytest.mark.parametrize("lengths", ["ranges", "all"])
def test_range_and_every_length_proofs_agree_with_one_query_per_length_on_mutants_of_the_gate_weights(
    lengths,
):
    net, claim, lemmas = _dyck(1, 1)
    found = []
    for input_ in ("L6:+o", "L6:+t0"):
        for delta in (Fraction(1, 2), Fraction(-1, 2), Fraction(2), Fraction(-2)):
            mutant = _logic1_mutant(net, input_, delta)
            ranged = prove_recognizes(mutant, claim, lemmas, 8, timeout=60, lengths=lengths)
            each = prove_recognizes(mutant, claim, lemmas, 8, timeout=60, lengths="each")
            assert type(ranged.verdict) is type(each.verdict)
            assert ranged.proved_up_to == each.proved_up_to
            if isinstance(each.verdict, Refuted):
                assert ranged.verdict.word == each.verdict.word  # type: ignore[union-attr]
                found.append(each.verdict.word)
    assert found, "no mutant went wrong: the comparison shows nothing"


# --------------------------------------------------------------------------- every length


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (2, 2)])
def test_the_dyck_recognizer_is_proved_for_every_length_by_an_inductive_invariant_and_three_unsat_queries(
    k, depth
):
    net, claim, lemmas = _dyck(k, depth)
    progress = prove_recognizes(net, claim, lemmas, 10, timeout=120)
    assert isinstance(progress.verdict, Proved)
    assert progress.every_length and progress.proved_up_to == 10
    assert "and every longer one" in progress.verdict.detail
    assert [q.name for q in progress.tree.queries] == [
        "Y2 every n: initiation",
        "Y2 every n: consecution",
        "Y2 every n: safety",
    ]
    assert all(
        q.result == "unsat" and q.smt2.startswith("(set-logic QF_UF)")
        for q in progress.tree.queries
    )
    # The log's rebuild reads the invariant back from the initiation query and gives the same three texts.
    recorded = {q.name: q.smt2 for q in progress.tree.queries}
    rebuilt = rebuild_queries(net, claim, lemmas, list(recorded), recorded)
    assert {name: rebuilt[(claim.id, name)] for name in recorded} == recorded


def _system(k: int, depth: int):
    net, claim, lemmas = _dyck(k, depth)
    results = []
    for lemma in lemmas:
        node, ok = prove_lemma(net, lemma)
        results.append(_LemmaResult(lemma, node, ok))
    return _every_length_system(net, claim.language, results, {}, [], claim.min_len)


def test_a_certificate_whose_invariant_is_too_weak_or_too_strong_has_a_sat_query():
    import z3

    system = _system(1, 1)
    answers = {}
    for label, inv in (
        ("true", z3.BoolVal(True, system.ctx)),
        ("false", z3.BoolVal(False, system.ctx)),
    ):
        answers[label] = [str(solver.check()) for _name, solver in certificate(system, inv)]
    assert answers == {"true": ["unsat", "unsat", "sat"], "false": ["sat", "unsat", "unsat"]}


def test_a_recorded_initiation_query_without_an_invariant_in_cnf_or_as_a_diagram_is_refused():
    with pytest.raises(
        ValueError,
        match="does not end with a negated invariant in conjunctive normal form or as a decision diagram",
    ):
        _recorded_invariant(
            "(declare-fun a () Bool)\n(declare-fun b () Bool)\n(assert (not (= a (and a b))))\n(check-sat)\n"
        )
    for diagram in (
        "(ite a (and a b) false)",  # a child that is no node
        "(ite (and a b) true false)",  # a test that is no state variable
        "(ite (p 1) true false)",  # an application, not a variable
    ):
        with pytest.raises(
            ValueError,
            match="does not end with a negated invariant in conjunctive normal form or as a decision diagram",
        ):
            _recorded_invariant(
                "(declare-fun a () Bool)\n(declare-fun b () Bool)\n(declare-fun p (Int) Bool)\n"
                f"(assert (not {diagram}))\n(check-sat)\n"
            )


def test_a_recorded_decision_diagram_reads_back_as_the_diagram_that_was_written():
    text = "(declare-fun a () Bool)\n(declare-fun b () Bool)\n(assert (not (ite a (ite b true false) (ite b false true))))\n(check-sat)\n"
    assert _recorded_invariant(text) == Diagram(
        nodes=(("b", 1, 0), ("b", 0, 1), ("a", 2, 3)), root=4
    )
    shared = "(declare-fun a () Bool)\n(declare-fun b () Bool)\n(assert (not (let ((x (ite b true false))) (ite a x (ite b x false)))))\n(check-sat)\n"
    assert _recorded_invariant(shared) == Diagram(  # a node below two parents is read once
        nodes=(("b", 0, 1), ("b", 0, 2), ("a", 3, 2)), root=4
    )


def _dyck11_but_not_length(m: int) -> Language:
    """Dyck(1,1) without its words of length m: the recognizer is right below m, wrong at m."""
    base = DYCK(1, 1)
    dfa = base.automaton
    assert dfa is not None
    cap = m + 1  # lengths above m share one counter state
    states = [(q, c) for q in range(dfa.states) for c in range(cap + 1)]
    index = {s: i for i, s in enumerate(states)}
    delta = tuple(
        tuple(index[(dfa.delta[q][a], min(c + 1, cap))] for a in range(len(base.alphabet)))
        for q, c in states
    )
    accepting = frozenset(index[(q, c)] for q, c in states if q in dfa.accepting and c != m)
    return Language(
        name=f"Dyck(1,1) without length {m}",
        alphabet=base.alphabet,
        contains=lambda w: base.contains(w) and len(w) != m,
        automaton=Automaton(
            states=len(states), start=index[(dfa.start, 0)], accepting=accepting, delta=delta
        ),
    )


def test_a_claim_false_only_on_longer_words_is_proved_up_to_the_bound_once_spacer_finds_it_false_and_refuted_above():
    net, claim, lemmas = _dyck(1, 1)
    claim = dataclasses.replace(claim, language=_dyck11_but_not_length(6), induction=None)
    below = prove_recognizes(net, claim, lemmas, 5, timeout=60)
    assert isinstance(below.verdict, Proved) and not below.every_length
    assert (
        "not every length at once: a misclassified word (of some length) is reachable"
        in below.verdict.detail
    )
    assert [q.name for q in below.tree.queries] == ["Y2 n=0..5"]
    above = prove_recognizes(net, claim, lemmas, 8, timeout=60)
    assert isinstance(above.verdict, Refuted)
    assert above.verdict.word == ("(", ")", "(", ")", "(", ")")
    assert above.proved_up_to == 5


def test_parity_is_no_transition_system_so_it_is_proved_for_every_length_over_position_classes():
    verdict, tree = prove_compositional(REGISTRY["parity"], {}, "C4", 4, timeout=60)
    assert isinstance(verdict, Proved)
    assert verdict.detail.startswith("every word with 0 <= |w| <= 4, and every longer one: ")
    assert (
        "its positions grouped by the values of their positional features and by symbol, one query, unsat"
        in verdict.detail
    )
    assert [(q.name, q.result) for q in tree.queries] == [("C4 every n: position classes", "unsat")]


def test_a_network_whose_heads_average_over_every_slot_falls_back_to_one_query_per_length():
    verdict, tree = prove_compositional(
        REGISTRY["parity"], {}, "C4", 6, timeout=60, lengths="ranges"
    )
    assert isinstance(verdict, Proved)
    assert [q.name for q in tree.queries] == [f"C4 n={m}" for m in range(7)]
    assert (
        "(not over ranges of lengths: head 'count' without a lemma attends over slots that may be absent"
        in verdict.detail
    )


def test_parity_is_proved_with_the_fig1_lemma_in_place_of_its_ffn():
    verdict, tree = prove_compositional(REGISTRY["parity"], {}, "C4", 16, timeout=120)
    assert isinstance(verdict, Proved)
    assert _verdicts(tree)["fig1"] == "proved"
    side = next(node for node in tree.walk() if node.name == "side conditions")
    assert "fig1: applied" in side.statement and "fig1: applied 0 times" not in side.statement


def test_a_word_the_network_gets_right_is_an_encoder_bug_not_a_counterexample():
    net, claim, _lemmas = _dyck(1, 1)
    with pytest.raises(EncoderBugError, match="the exact interpreter accepts it, as it should"):
        _replay(net, claim.language, ("(", ")"))


def test_a_claim_that_is_not_a_recognition_claim_is_unknown_with_the_reason():
    verdict, tree = prove_compositional(
        REGISTRY["dyck"], {"k": "1", "depth": "1"}, "Y3", 4, timeout=10
    )
    assert isinstance(verdict, Unknown)
    assert verdict.reason.startswith("unsupported: compositional proofs cover recognition claims")
    assert tree.verdict == "unknown"


def test_an_unknown_claim_id_names_the_claims_there_are():
    with pytest.raises(KeyError, match="its claims: Y2"):
        prove_compositional(REGISTRY["dyck"], {"k": "1", "depth": "1"}, "Y9", 4)


def test_cvc5_gives_every_query_of_a_compositional_proof_the_answer_z3_gave():
    pytest.importorskip("cvc5")
    from netproof.verifier.smt.recheck import solve_smt2

    for construction, params, claim_id, n in (
        ("dyck", {"k": "2", "depth": "2"}, "Y2", 4),
        ("parity", {}, "C4", 6),
    ):
        _verdict, tree = prove_compositional(
            REGISTRY[construction], params, claim_id, n, timeout=60
        )
        answers = [
            (q.name, q.result, solve_smt2(q.smt2, "cvc5", 30)[0])
            for node in tree.walk()
            for q in node.queries
        ]
        assert answers and all(
            z3_answer == cvc5_answer for _name, z3_answer, cvc5_answer in answers
        ), answers


def _hard_query(ctx):
    """Thirteen pigeons in twelve holes: z3 needs far longer than any test waits."""
    import z3

    solver = z3.Solver(ctx=ctx)
    holes = 12
    p = [[z3.Bool(f"p{i}_{j}", ctx) for j in range(holes)] for i in range(holes + 1)]
    solver.add([z3.Or(row) for row in p])
    solver.add(
        [
            z3.Or(z3.Not(p[i][j]), z3.Not(p[k][j]))
            for j in range(holes)
            for i in range(holes + 1)
            for k in range(i + 1, holes + 1)
        ]
    )
    solver.set("timeout", 300_000)
    return solver


def _lemma_results(net, lemmas):
    return [_LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in lemmas]


def test_a_proof_for_every_length_that_comes_first_interrupts_the_range_query_under_way():
    import z3

    net, claim, lemmas = _dyck(1, 1)
    search = _EveryLengthSearch(net, claim, _lemma_results(net, lemmas), 120)
    ctx = z3.Context()
    solver = _hard_query(ctx)
    if search.claim_ranges():  # Spacer is still at work (it needs about half a second)
        answer, reason, _model = smtlib.check(solver, stop=search.ranges)
        assert (answer, reason) == ("unknown", smtlib.STOPPED)
    assert search.proved
    assert not search.claim_ranges()  # and no further range query starts
    search.cancel()
    assert [q.name for q in search.queries] == [
        "Y2 every n: initiation",
        "Y2 every n: consecution",
        "Y2 every n: safety",
    ]


def _without_bdds(monkeypatch):
    import netproof.verifier.smt.compositional.search as compositional

    monkeypatch.setattr(
        compositional,
        "reachable_states",
        lambda system, deadline, stop: ("unsupported", "dd is not installed (test)"),
    )


def test_a_search_for_spacers_invariant_is_interrupted_when_the_ranges_are_done_and_says_so(
    monkeypatch,
):
    _without_bdds(monkeypatch)
    net, claim, lemmas = _dyck(2, 3)  # Spacer finds no invariant for Dyck(2,3) in minutes
    search = _EveryLengthSearch(net, claim, _lemma_results(net, lemmas), 600)
    while not search.halt.busy and not search.done.is_set():  # until Spacer is at work
        search.done.wait(0.01)
    search.cancel()
    assert not search.proved and search.done.is_set()
    assert search.because.startswith("stopped after ")
    assert (
        "before an invariant was found (the reachable states: dd is not installed (test); Spacer: canceled)"
        in search.because
    )


def test_the_reachable_states_asked_to_stop_give_no_invariant_and_say_so():
    net, claim, lemmas = _dyck(2, 2)
    halt = smtlib.Stop()
    halt.request()
    queries, because, how = _prove_every_length(
        net, claim, _lemma_results(net, lemmas), {}, [], 60, halt
    )
    assert queries is None
    assert because.startswith("stopped after ") and because.endswith(
        " s, before an invariant was found"
    )
    assert how == "the reachable states, by binary decision diagrams"


def test_without_the_bdd_package_spacer_proves_every_length_and_the_log_records_its_clauses(
    monkeypatch,
):
    _without_bdds(monkeypatch)
    net, claim, lemmas = _dyck(1, 1)
    progress = prove_recognizes(net, claim, lemmas, 10, timeout=120)
    assert isinstance(progress.verdict, Proved) and progress.every_length
    assert "an inductive invariant (Spacer)" in progress.verdict.detail
    recorded = {q.name: q.smt2 for q in progress.tree.queries}
    assert isinstance(_recorded_invariant(recorded["Y2 every n: initiation"]), tuple)  # clauses
    rebuilt = rebuild_queries(net, claim, lemmas, list(recorded), recorded)
    assert {name: rebuilt[(claim.id, name)] for name in recorded} == recorded


def test_the_dyck_2_3_recognizer_is_proved_for_every_length_from_its_reachable_states():
    net, claim, lemmas = _dyck(2, 3)
    progress = prove_recognizes(net, claim, lemmas, 64, timeout=120)
    assert isinstance(progress.verdict, Proved) and progress.every_length
    assert (
        "an inductive invariant (the reachable states, by binary decision diagrams)"
        in progress.verdict.detail
    )
    recorded = {q.name: q.smt2 for q in progress.tree.queries}
    assert isinstance(_recorded_invariant(recorded["Y2 every n: initiation"]), Diagram)


def test_the_lemma_applications_counted_in_a_proof_for_every_length_are_those_of_its_own_system():
    net, claim, lemmas = _dyck(1, 1)
    progress = prove_recognizes(net, claim, lemmas, 40, timeout=120)
    assert progress.every_length
    side = next(c for c in progress.tree.children if c.name == "side conditions")
    ranged = prove_recognizes(net, claim, lemmas, 40, timeout=120, lengths="ranges")
    side_ranged = next(c for c in ranged.tree.children if c.name == "side conditions")
    # The system applies each lemma once per kind of token (start, word symbol, end), the ranges once per slot.
    assert side.statement.endswith("logic1: applied 3 times")
    assert not side_ranged.statement.endswith("logic1: applied 3 times")
    assert len(progress.tree.children) == len(
        ranged.tree.children
    )  # one readout lemma node, not one per side


def test_cudd_and_the_pure_python_bdds_of_dd_give_the_same_invariant(monkeypatch):
    import sys

    pytest.importorskip("dd.cudd")
    import dd
    import z3

    from netproof.verifier.smt.compositional.arithmetic import consts as _consts
    from netproof.verifier.smt.compositional.diagrams import _compute
    from netproof.verifier.smt.compositional.search import _plain

    net, claim, lemmas = _dyck(2, 2)
    system = _every_length_system(
        net, claim.language, _lemma_results(net, lemmas), {}, [], claim.min_len
    )
    names, primed = [str(v) for v in system.state], [str(v) for v in system.primed]
    inputs = sorted({str(v) for v in _consts(z3, system.trans).values()} - set(names) - set(primed))
    args = (
        [*inputs, *(v for pair in zip(names, primed, strict=True) for v in pair)],
        names,
        primed,
        *(_plain(z3, f) for f in (system.init, system.trans, system.bad)),
    )
    with_cudd = _compute(*args)  # what the child process runs
    monkeypatch.delattr(dd, "cudd")
    monkeypatch.setitem(sys.modules, "dd.cudd", None)  # as where the wheel has no CUDD
    without = _compute(*args)
    assert with_cudd[0] == without[0] == "safe"
    assert with_cudd[1] == without[1]  # the same diagram, hence the same proof log


def _counter(width: int):
    """A binary counter from 0: its all-ones state is 2^width - 1 steps away."""
    bits = [f"b{i}" for i in range(width)]
    nxt = [f"{b}.next" for b in bits]

    def formula(build):
        nodes: list[tuple] = []

        def add(*node):
            nodes.append(node)
            return len(nodes) - 1

        build(add)
        return tuple(nodes)

    def trans(add):
        carry = add("const", True)
        parts = []
        for b, n in zip(bits, nxt, strict=True):
            vb, vn = add("var", b), add("var", n)
            parts.append(add("iff", vn, add("xor", vb, carry)))
            carry = add("and", vb, carry)
        add("and", *parts)

    init = formula(lambda add: add("and", *(add("not", add("var", b)) for b in bits)))
    bad = formula(lambda add: add("and", *(add("var", b) for b in bits)))
    return (
        [v for pair in zip(bits, nxt, strict=True) for v in pair],
        bits,
        nxt,
        init,
        formula(trans),
        bad,
    )


def test_the_reachable_states_are_computed_in_a_process_that_is_killed_when_asked_to_stop():
    import time

    from netproof.verifier.smt.compositional.diagrams import reachable

    order, bits, nxt, init, trans, bad = _counter(40)  # 2^40 steps: only the stop ends the child
    asked = time.perf_counter() + 0.5
    status, why = reachable(
        order,
        bits,
        nxt,
        init,
        trans,
        bad,
        time.perf_counter() + 600,
        lambda: time.perf_counter() > asked,
    )
    assert status == "unknown" and why.startswith("stopped after ")
    status, why = reachable(
        order, bits, nxt, init, trans, bad, time.perf_counter() + 0.5, lambda: False
    )
    assert status == "unknown" and why.startswith("time ran out after ")


def test_a_bad_state_a_few_steps_away_is_found_reachable():
    import time

    from netproof.verifier.smt.compositional.diagrams import reachable

    order, bits, nxt, init, trans, bad = _counter(3)
    assert reachable(
        order, bits, nxt, init, trans, bad, time.perf_counter() + 60, lambda: False
    ) == ("unsafe", 7)


def test_a_transition_system_with_a_term_that_is_not_boolean_gets_no_diagram_and_says_why():
    import time

    import z3

    from netproof.verifier.smt.compositional.search import reachable_states
    from netproof.verifier.smt.compositional.system import TransitionSystem as _System

    ctx = z3.Context()
    x, nx = z3.Bool("x", ctx), z3.Bool("x.next", ctx)
    i = z3.Int("i", ctx)
    system = _System(z3, ctx, [x], [nx], z3.Not(x), nx == (i > 0), x)
    status, why = reachable_states(system, time.perf_counter() + 60, lambda: False)
    assert status == "unsupported" and why.endswith("that is not Boolean")
