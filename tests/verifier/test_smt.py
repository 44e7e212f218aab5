"""The SMT encoder: faithful to the exact interpreter on every block kind, proofs per length,
counterexamples replayed exactly and shrunk, honest Unknowns, SMT-LIB2 that cvc5 reads."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructions import REGISTRY
from constructions.chiang2022 import first_transformer, parity_transformer
from constructions.dyck import DYCK
from constructions.languages import FIRST, PARITY
from symbolic import (
    AttentionLayer,
    Hardmax,
    Network,
    Sublayer,
    classifier,
    layernorm,
    token_embedding,
)
from symbolic.exact import run as run_exact
from verifier.checker import Job, check
from verifier.claims import (
    Automaton,
    Construction,
    Language,
    Proved,
    Recognizes,
    Refuted,
    Unknown,
)
from verifier.smt import (
    EncoderBugError,
    LemmaNode,
    SmtQuery,
    logit_on,
    prove_smt,
    recognizes_smt,
    smt2_portable,
)
from verifier.strategies import networks

pytestmark = pytest.mark.z3


def dyck_net(k: int, depth: int, **given: str) -> Network:
    c = REGISTRY["dyck"]
    return c.network(c.parse_params({"k": str(k), "depth": str(depth), **given}))


def with_ties(net: Network, tie: str) -> Network:
    """``net`` with every hardmax head's tie rule replaced."""
    layers = []
    for sub in net.layers:
        block = sub.block
        if hasattr(block, "heads"):
            heads = tuple(
                dataclasses.replace(h, normalizer=Hardmax(tie=tie)) if isinstance(h.normalizer, Hardmax) else h  # type: ignore[arg-type]
                for h in block.heads
            )
            block = dataclasses.replace(block, heads=heads)
        layers.append(dataclasses.replace(sub, block=block))
    return dataclasses.replace(net, layers=tuple(layers))


def cvc5_answer(text: str) -> str:
    from verifier.recheck import solve_smt2

    return solve_smt2(text, "cvc5", 60.0)[0]


# --------------------------------------------------------------------------- SMT-LIB2 text


def test_the_smt2_text_starts_with_set_logic_and_has_no_one_argument_sum() -> None:
    text = smt2_portable("(set-info :status unknown)\n(declare-fun x () Real)\n(assert (> (+ x) (* 2.0)))\n(check-sat)\n")
    assert text.splitlines() == ["(set-logic QF_LRA)", "(declare-fun x () Real)", "(assert (> x 2.0))", "(check-sat)"]


@pytest.mark.parametrize(
    ("script", "logic"),
    [
        ("(declare-fun b () Bool)(assert b)(check-sat)", "QF_UF"),
        ("(declare-fun x () Int)(assert (> (* 3 x) 1))(check-sat)", "QF_LIA"),
        ("(declare-fun x () Int)(assert (> (to_real x) 0.5))(check-sat)", "QF_LIRA"),
        ("(declare-fun x () Real)(declare-fun y () Real)(assert (> (* x y) (/ 1.0 3.0)))(check-sat)", "QF_NRA"),
        ("(declare-fun x () Real)(assert (> (/ 1.0 x) 2.0))(check-sat)", "QF_NRA"),
    ],
)
def test_the_logic_line_is_the_smallest_standard_logic_that_fits(script: str, logic: str) -> None:
    assert smt2_portable(script).splitlines()[0] == f"(set-logic {logic})"


def test_smt2_text_without_check_sat_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no \(check-sat\)"):
        smt2_portable("(declare-fun x () Real)")


def test_cvc5_reads_every_query_of_a_dyck_proof_and_gives_z3s_answer() -> None:
    outcome = recognizes_smt(lambda m: dyck_net(2, 2), DYCK(2, 2), 0, 4)
    assert isinstance(outcome.verdict, Proved)
    assert [q.name for q in outcome.queries] == ["n=0", "n=1", "n=2", "n=3", "n=4"]
    assert [cvc5_answer(q.smt2) for q in outcome.queries] == ["unsat"] * 5


def test_queries_and_lemma_nodes_are_frozen_records_with_a_content_hash() -> None:
    q = SmtQuery(name="n=3", smt2="(set-logic ALL)\n(check-sat)\n", result="unsat")
    node = LemmaNode(name="theorem", statement="s", verdict="proved", queries=(q,),
                     children=(LemmaNode(name="lemma", statement="t", verdict="proved"),))
    assert q.sha256 == hashlib.sha256(b"(set-logic ALL)\n(check-sat)\n").hexdigest()
    assert [n.name for n in node.walk()] == ["theorem", "lemma"]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        q.result = "sat"  # type: ignore[misc]


# --------------------------------------------------------------------------- faithful encoding


@pytest.mark.parametrize(
    ("name", "net", "alphabet", "max_len"),
    [
        ("parity", parity_transformer(), ("0", "1"), 3),
        ("first", first_transformer(), ("0", "1"), 3),
        ("dyck(2,2)", dyck_net(2, 2), DYCK(2, 2).alphabet, 2),
        ("dyck(2,2) leftmost", with_ties(dyck_net(2, 2), "leftmost"), DYCK(2, 2).alphabet, 1),
        ("dyck(2,2) rightmost", with_ties(dyck_net(2, 2), "rightmost"), DYCK(2, 2).alphabet, 1),
        ("dyck(1,2) paper", dyck_net(1, 2, variant="paper"), DYCK(1, 2).alphabet, 3),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_the_encoded_logit_is_the_exact_logit_on_every_short_word(
    name: str, net: Network, alphabet: tuple[str, ...], max_len: int
) -> None:
    for m in range(max_len + 1):
        for w in itertools.product(alphabet, repeat=m):
            assert logit_on(net, w) == ("sat", "unsat"), (name, w)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=networks(softmax=False), word=st.lists(st.sampled_from(("a", "b", "c")), max_size=4).map(tuple))
def test_the_encoded_logit_is_the_exact_logit_on_random_hardmax_networks(net: Network, word: tuple[str, ...]) -> None:
    """Every mask, scoring, tie rule, activation, W^O and residual kind the strategy draws."""
    assert logit_on(net, word) == ("sat", "unsat")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=networks(softmax=True), word=st.lists(st.sampled_from(("a", "b", "c")), max_size=3).map(tuple))
def test_the_encoded_logit_is_the_exact_logit_on_random_networks_with_softmax_heads(net: Network, word: tuple[str, ...]) -> None:
    """Softmax heads of base 2, 3 or 1/2 with integer scores, word-dependent ones included (the
    output times the normalizer is the weighted sum, one case per value of the normalizer)."""
    from symbolic import NotRationalError
    from verifier.smt import Unsupported

    try:
        run_exact(net, word)
    except NotRationalError:
        return  # the exact interpreter has no rational value to compare with
    try:
        answers = logit_on(net, word)
    except Unsupported as exc:
        assert str(exc), "an unsupported network says why"
        return
    assert answers == ("sat", "unsat")


# --------------------------------------------------------------------------- proofs


@pytest.mark.parametrize(
    ("net", "language", "n"),
    [
        (parity_transformer(), PARITY, 12),
        (first_transformer(), FIRST, 12),
        (dyck_net(1, 1), DYCK(1, 1), 10),
        (dyck_net(2, 2), DYCK(2, 2), 4),
    ],
    ids=["parity", "first", "dyck(1,1)", "dyck(2,2)"],
)
def test_the_recognizers_are_proved_for_every_length_with_one_unsat_query_per_length(
    net: Network, language: Language, n: int
) -> None:
    outcome = recognizes_smt(lambda m: net, language, 0, n)
    assert isinstance(outcome.verdict, Proved)
    assert outcome.verdict.checked == sum(len(language.alphabet) ** m for m in range(n + 1))
    assert [q.result for q in outcome.queries] == ["unsat"] * (n + 1)
    assert all(q.smt2.startswith("(set-logic QF_LIRA)\n") and q.smt2.endswith("(check-sat)\n") for q in outcome.queries[1:])


def test_the_paper_dyck_recognizer_is_refuted_with_the_exhaustive_checkers_counterexample() -> None:
    net = dyck_net(1, 1, variant="paper")
    claim = Recognizes(id="rec", statement="s", reference="r", language=DYCK(1, 1), max_len=6)
    job = Job(Construction(name="m", paper_id="m", title="m", reference="m", params=(),
                           build=lambda v: net, claims=lambda v: ()), {})
    exhaustive = check(job, claim)
    outcome = recognizes_smt(lambda m: net, DYCK(1, 1), 0, 6)
    assert isinstance(exhaustive, Refuted) and isinstance(outcome.verdict, Refuted)
    assert outcome.verdict.word == exhaustive.word  # shortest length, then shortlex-first
    trace = run_exact(net, outcome.verdict.word)
    assert trace.accepted != DYCK(1, 1).contains(outcome.verdict.word)
    assert outcome.queries[-1].result == "sat"
    assert [q.result for q in outcome.queries[:-1]] == ["unsat"] * (len(outcome.queries) - 1)


def test_a_mutated_weight_is_refuted_with_a_word_the_exact_interpreter_gets_wrong() -> None:
    net = parity_transformer()
    emb = net.embedding
    table = tuple((tok, tuple((d, v + Fraction(1, 2)) if (tok, d) == ("1", "I[w=1]") else (d, v) for d, v in row))
                  for tok, row in emb.table)
    mutant = dataclasses.replace(net, embedding=dataclasses.replace(emb, table=table))
    outcome = recognizes_smt(lambda m: mutant, PARITY, 0, 8)
    assert isinstance(outcome.verdict, Refuted)
    word = outcome.verdict.word
    assert word is not None and run_exact(mutant, word).accepted != PARITY.contains(word)
    shorter = [w for m in range(len(word)) for w in itertools.product("01", repeat=m)]
    assert all(run_exact(mutant, w).accepted == PARITY.contains(w) for w in shorter)


def test_a_model_the_exact_interpreter_does_not_reproduce_raises_an_encoder_bug() -> None:
    wrong = Language(name="PARITY with FIRST's automaton", alphabet=("0", "1"), contains=PARITY.contains,
                     automaton=FIRST.automaton)
    with pytest.raises(EncoderBugError, match="the SMT encoding is wrong"):
        recognizes_smt(lambda m: parity_transformer(), wrong, 0, 3)


def test_a_timeout_is_unknown_with_the_solvers_reason_never_a_proof() -> None:
    outcome = recognizes_smt(lambda m: dyck_net(2, 2), DYCK(2, 2), 0, 12, timeout=0.05)
    assert isinstance(outcome.verdict, Unknown)
    assert "timeout" in outcome.verdict.reason or "canceled" in outcome.verdict.reason


@pytest.mark.parametrize(
    ("name", "claim_id", "reason"),
    [
        ("parity-ln", "C7", r"unsupported: layer norm after 'count' at token 0: layer norm needs √\(1/3\), which is not rational"),
        ("parity-ln", "C7-mirror", "unsupported: the smt method does not cover MirrorInvariant claims"),
        ("first-ln-logn", "recognizes", r"unsupported: layer norm after 'att1' at token 0: layer norm needs √\(1/6\)"),
    ],
)
def test_what_the_encoder_cannot_encode_is_unknown_unsupported(name: str, claim_id: str, reason: str) -> None:
    outcome = prove_smt(REGISTRY[name], {}, claim_id, 3, timeout=30)
    assert isinstance(outcome.verdict, Unknown)
    assert re.search(reason, outcome.verdict.reason), outcome.verdict.reason


def test_a_layer_norm_over_word_dependent_values_is_unknown_unsupported() -> None:
    net = Network(
        name="ln",
        dims=("u", "v"),
        embedding=token_embedding(("a", "b"), {"a": {"u": 1, "v": -1}, "b": {"u": 3, "v": 1}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm(0)),),
        readout=classifier("u"),
    )
    lang = Language(name="all", alphabet=("a", "b"), contains=lambda w: True, automaton=Automaton(
        states=1, start=0, accepting=frozenset({0}), delta=((0, 0),)))
    outcome = recognizes_smt(lambda m: net, lang, 1, 2)
    assert isinstance(outcome.verdict, Unknown)
    assert outcome.verdict.reason == (
        "unsupported: layer norm after 'att' at token 0: layer norm over word-dependent values (√ of a "
        "symbolic variance) is not encoded; check this claim with --method exhaustive"
    )


def test_prove_smt_names_the_claims_when_the_id_is_wrong() -> None:
    with pytest.raises(KeyError, match="its claims: C4"):
        prove_smt(REGISTRY["parity"], {}, "C99", 4)


@pytest.mark.parametrize("claim_id", ["Y1-AND", "Y1-SAME", "Y1-GT"])
def test_prove_smt_routes_block_lemmas_through_one_logged_query_that_cvc5_also_proves(claim_id: str) -> None:
    outcome = prove_smt(REGISTRY["gates"], {}, claim_id, 0)
    assert isinstance(outcome.verdict, Proved)
    assert [(q.name, q.result) for q in outcome.queries] == [(claim_id, "unsat")]
    assert cvc5_answer(outcome.queries[0].smt2) == "unsat"
