"""Every length at once by position classes (netproof.verifier.smt.compositional.classes): softmax sums over a word of
symbolic length as counts per (class, symbol), selections I[i = T] as the value at T, the
automaton on the counts; proofs, counterexample words replayed exactly, and what is refused."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.symbolic import (
    Activation,
    Affine,
    AttentionLayer,
    Head,
    Network,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from netproof.symbolic.builders import affine, classifier, ffn, token_embedding
from netproof.symbolic.exact import run
from netproof.verifier.claims import Automaton, Language, Proved, Recognizes, StateValue, ValueIs
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.closed_forms import replay_value
from netproof.verifier.smt.compositional import LemmaResult as _LemmaResult
from netproof.verifier.smt.compositional import prove_lemma, prove_recognizes, prove_value
from netproof.verifier.smt.compositional.classes import _Classes, _root, class_query, value_query
from netproof.verifier.smt.compositional.search import _prove_by_classes
from netproof.verifier.smt.errors import EncoderBugError, Unsupported

pytestmark = pytest.mark.z3


def _parity(c: str = "ln(2)") -> tuple[Network, Recognizes, list[_LemmaResult]]:
    construction = REGISTRY["parity"]
    values = construction.parse_params({"c": c})
    net = construction.network(values)
    claim = next(x for x in construction.claims(values) if x.id == "C4")
    assert isinstance(claim, Recognizes) and construction.lemmas is not None
    return (
        net,
        claim,
        [_LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in construction.lemmas(values)],
    )


def _with_head(net: Network, layer: str, head: str, **changes: object) -> Network:
    def swap(sub: Sublayer) -> Sublayer:
        block = sub.block
        if not isinstance(block, AttentionLayer) or block.name != layer:
            return sub
        heads = tuple(
            dataclasses.replace(h, **changes) if h.name == head else h for h in block.heads
        )  # type: ignore[arg-type]
        return dataclasses.replace(sub, block=dataclasses.replace(block, heads=heads))

    return dataclasses.replace(net, layers=tuple(swap(s) for s in net.layers))


def _answer(
    net: Network, claim: Recognizes, results: list[_LemmaResult]
) -> tuple[str, _Classes, object]:
    _ctx, solver, enc = class_query(net, claim, results)
    answer = str(solver.check())
    return answer, enc, solver.model() if answer == "sat" else None


@pytest.mark.parametrize("c", ["ln(2)", "ln(4)", "ln(3/2)"])
def test_the_parity_transformer_is_proved_for_every_length_in_one_query(c: str) -> None:
    net, claim, results = _parity(c)
    answer, enc, _model = _answer(net, claim, results)
    assert answer == "unsat"
    assert enc.P == 2  # cos(iπ) repeats with period 2: two classes of word positions
    assert (
        results[0].uses == 2 and results[0].fallbacks == []
    )  # fig1's lemma at CLS and at the word position


def test_the_proof_for_every_length_is_the_verdict_of_prove_recognizes_and_its_query_is_named_for_the_log() -> (
    None
):
    net, claim, _results = _parity()
    construction = REGISTRY["parity"]
    values = construction.parse_params({})
    assert construction.lemmas is not None
    progress = prove_recognizes(net, claim, construction.lemmas(values), 512, timeout=60)
    assert (
        isinstance(progress.verdict, Proved)
        and progress.every_length
        and progress.proved_up_to == 512
    )
    assert [q.name for q in progress.tree.queries] == ["C4 every n: position classes"]
    text = progress.tree.queries[0].smt2
    assert (
        text.startswith("(set-logic QF_NIRA)")
        and "(declare-fun L () Int)" in text
        and "|k[1,1]|" in text
    )


def test_an_even_head_that_looks_at_the_wrong_class_gives_a_word_the_exact_interpreter_misclassifies() -> (
    None
):
    net, claim, results = _parity()
    broken = _with_head(
        net,
        "parity",
        "even",
        key=dataclasses.replace(net.layers[2].block.heads[1].key, weights=((Fraction(-1),),)),
    )  # type: ignore[union-attr]
    answer, enc, model = _answer(broken, claim, results)
    assert answer == "sat"
    word = enc.word_of(model)
    assert run(broken, word).accepted != PARITY.contains(word)
    # The word has the model's length and its counts per (class, symbol).
    length = model.eval(enc.L).as_long()
    assert len(word) == length
    for (c, a), k in enc.k.items():
        held = sum(
            1 for t, s in enumerate(word) if (t + enc.first) % enc.P == c and s == enc.alphabet[a]
        )
        assert held == model.eval(k).as_long()


def test_a_word_the_network_classifies_right_is_an_encoder_bug_not_a_counterexample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net, claim, results = _parity()
    broken = _with_head(
        net,
        "parity",
        "even",
        key=dataclasses.replace(net.layers[2].block.heads[1].key, weights=((Fraction(-1),),)),
    )  # type: ignore[union-attr]
    right = next(
        w
        for m in range(6)
        for w in itertools.product("01", repeat=m)
        if run(broken, w).accepted == PARITY.contains(w)
    )
    monkeypatch.setattr(_Classes, "word_of", lambda self, model: right)
    with pytest.raises(
        EncoderBugError, match=r"but the exact interpreter (accepts|rejects) it, as it should"
    ):
        _prove_by_classes(broken, claim, results, 60, None, "not a transition system")


def test_a_refuted_query_leaves_the_shortest_counterexample_to_the_range_queries() -> None:
    net, claim, results = _parity()
    broken = _with_head(
        net,
        "parity",
        "even",
        key=dataclasses.replace(net.layers[2].block.heads[1].key, weights=((Fraction(-1),),)),
    )  # type: ignore[union-attr]
    queries, because, how = _prove_by_classes(
        broken, claim, results, 60, None, "not a transition system"
    )
    assert queries is None and how == "position classes"
    assert because.startswith("a misclassified word of length ") and because.endswith(
        "so the ranges look for the shortest"
    )


def test_a_selected_position_holds_a_symbol_of_its_own_that_the_counts_hold() -> None:
    """FIRST's key I[i = 1] selects word position 1, whose symbol decides the output: against a
    commutative language (every word) the query must give a word whose first symbol the network
    reads as the model says, and which it misclassifies."""
    net = first_transformer("ln(4)")
    every = Language(
        "Σ*",
        ("0", "1"),
        lambda w: True,
        "every word",
        Automaton(states=1, start=0, accepting=frozenset({0}), delta=((0, 0),)),
    )
    claim = Recognizes(
        id="all",
        statement="accepts every word",
        reference="test",
        language=every,
        backend="exact",
        max_len=4,
        min_len=0,
    )
    answer, enc, model = _answer(net, claim, [])
    assert answer == "sat" and enc.targets  # the selected position has a symbol variable
    word = enc.word_of(model)
    assert not run(net, word).accepted  # FIRST rejects it, and every word is in Σ*
    # With the empty word excluded and only words starting with 1 in the language, there is
    # still a counterexample (FIRST is not commutative), and it is replayed the same way.
    ones = Language(
        "1Σ*∪…",
        ("0", "1"),
        lambda w: "1" in w,
        "a 1 somewhere",
        Automaton(states=2, start=0, accepting=frozenset({1}), delta=((0, 1), (1, 1))),
    )
    answer, enc, model = _answer(net, dataclasses.replace(claim, language=ones, min_len=1), [])
    assert answer == "sat"
    word = enc.word_of(model)
    assert run(net, word).accepted != ones.contains(word)


@pytest.mark.parametrize(
    "dfa",
    [
        PARITY.automaton,
        Automaton(
            states=3, start=0, accepting=frozenset({2}), delta=((0, 1), (1, 2), (2, 2))
        ),  # at least two 1s (a tail before the period)
        Automaton(
            states=3, start=0, accepting=frozenset({0}), delta=((1, 2), (2, 0), (0, 1))
        ),  # #0 ≡ #1 (mod 3)
    ],
)
def test_the_automaton_run_on_the_counts_agrees_with_the_automaton_on_every_word_up_to_7(
    dfa: Automaton | None,
) -> None:
    import z3

    assert dfa is not None
    net, _claim, results = _parity()
    ctx = z3.Context()
    enc = _Classes(z3, ctx, net, results, 0)
    member = enc.member(dfa, "test")
    for m in range(8):
        for w in itertools.product((0, 1), repeat=m):
            solver = z3.Solver(ctx=ctx)
            solver.add(*enc.assertions, enc.L == m)
            for (c, a), k in enc.k.items():
                solver.add(
                    k == sum(1 for t, s in enumerate(w) if (t + enc.first) % enc.P == c and s == a)
                )
            assert solver.check() == z3.sat
            assert z3.is_true(solver.model().eval(member)) == dfa.accepts(w), w


def test_what_the_encoding_does_not_cover_is_unsupported_with_the_reason() -> None:
    net, claim, results = _parity()
    # A feature that neither repeats nor is linear in (i, n).
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    odd = dataclasses.replace(
        net, embedding=dataclasses.replace(emb, positional=(("cos(iπ)", "1/2^i", Fraction(1)),))
    )
    with pytest.raises(Unsupported, match=r"'1/2\^i' neither repeats nor is linear"):
        class_query(odd, claim, results)
    # A transcendental base.
    with pytest.raises(Unsupported, match="transcendental base"):
        class_query(parity_transformer("1"), claim, results)
    # A base whose power at a half-integer score is irrational (2^{1/2}).
    half = _with_head(
        net,
        "parity",
        "odd",
        key=dataclasses.replace(net.layers[2].block.heads[0].key, weights=((Fraction(1, 2),),)),
    )  # type: ignore[union-attr]
    with pytest.raises(
        Unsupported, match="the score 1/2 and the base 2, whose power is irrational"
    ):
        class_query(half, claim, results)
    # Without the fig1 lemma the value relu(k − i − 1) − … depends on the index beyond its class.
    with pytest.raises(
        Unsupported,
        match=r"depends on its index beyond its class \(a lemma that turns it into a selection",
    ):
        class_query(net, claim, [])
    # A language that is not commutative.
    first = REGISTRY["first"]
    values = first.parse_params({})
    first_claim = next(x for x in first.claims(values) if isinstance(x, Recognizes))
    assert first_claim.language is FIRST
    last = Language(
        "LAST",
        ("0", "1"),
        lambda w: w[-1:] == ("1",),
        "last symbol 1",
        Automaton(states=2, start=0, accepting=frozenset({1}), delta=((0, 1), (0, 1))),
    )
    with pytest.raises(
        Unsupported,
        match="LAST is not given as an automaton that is commutative after its first 3 symbols or fewer",
    ):
        class_query(first.network(values), dataclasses.replace(first_claim, language=last), [])
    # Hard attention (the Dyck recognizer).
    dyck = REGISTRY["dyck"]
    dvalues = dyck.parse_params({"k": "1", "depth": "1"})
    dclaim = next(x for x in dyck.claims(dvalues) if isinstance(x, Recognizes))
    with pytest.raises(Unsupported, match="hard attention in head"):
        class_query(dyck.network(dvalues), dclaim, [])


def test_an_unsupported_network_keeps_both_reasons_in_the_verdict_detail() -> None:
    net, claim, _results = _parity()
    queries, because, _how = _prove_by_classes(
        net, claim, [], 60, None, "not a transition system (why)"
    )
    assert queries is None
    assert because.startswith(
        "unsupported: not a transition system (why); position classes: the value "
    )


def test_a_head_with_no_position_to_attend_to_outputs_zero_or_is_refused_by_its_empty_rule() -> (
    None
):
    net, claim, results = _parity()
    # Query at CLS (position 0), strictly earlier keys only: none.
    masked = _with_head(net, "parity", "odd", mask="strict_causal")
    answer, _enc, _model = _answer(masked, claim, results)
    assert answer == "sat"  # s is the even head's share alone, so the sign is wrong for some word
    with pytest.raises(
        Unsupported, match="attends to no position at CLS@0 and its empty rule is an error"
    ):
        class_query(
            _with_head(net, "parity", "odd", mask="strict_causal", empty="error"), claim, results
        )


def test_rational_roots_of_the_base_are_exact_and_irrational_ones_are_none() -> None:
    assert _root(Fraction(4), 2) == 2
    assert _root(Fraction(9, 4), 2) == Fraction(3, 2)
    assert _root(Fraction(8), 3) == 2
    assert _root(Fraction(10**40), 4) == 10**10
    assert _root(Fraction(2), 2) is None
    assert _root(Fraction(4, 3), 2) is None


# --------------------------------------------------------------------------- value claims


def _value_claims(c: str = "ln(4)") -> tuple[object, list[ValueIs], list[_LemmaResult]]:
    construction = REGISTRY["parity"]
    values = construction.parse_params({"c": c})
    job = Job(construction, values)
    assert construction.lemmas is not None
    claims = [
        x
        for x in construction.claims(values)
        if isinstance(x, ValueIs) and x.closed_form is not None
    ]
    assert [x.id for x in claims] == ["C3-count", "C3-1/n", "C3-fig1"]
    return job, claims, construction.lemmas(values)


def test_the_parity_layer_values_are_proved_for_every_length_in_one_query_each() -> None:
    job, claims, lemmas = _value_claims()
    for claim in claims:
        outcome = prove_value(job, claim, lemmas, 512, timeout=60)
        assert isinstance(outcome.verdict, Proved), (claim.id, outcome.verdict)
        assert outcome.verdict.detail.startswith(
            "every word with 0 <= |w| <= 512, and every longer one: one query over a word of symbolic length"
        )
        assert outcome.lemmas is not None
        assert [q.name for q in outcome.lemmas.queries] == [f"{claim.id} every n: position classes"]


def _count_head_reads(net: Network, weight: Fraction) -> Network:
    """The count head's value k/n reads I[w=1] with ``weight`` instead of 1."""
    head = net.layers[0].block.heads[0]  # type: ignore[union-attr]
    value = dataclasses.replace(
        head.value,
        weights=tuple(
            tuple(weight if w == 1 and row_i == 0 else w for w in row)
            for row_i, row in enumerate(head.value.weights)
        ),
    )
    return _with_head(net, "count", "count", value=value)


def test_a_wrong_layer_value_gives_a_word_on_which_the_exact_interpreter_differs_from_the_closed_form() -> (
    None
):
    job, claims, lemmas = _value_claims()
    net = job.network(0)  # type: ignore[attr-defined]
    broken = _count_head_reads(net, Fraction(3, 2))
    results = [_LemmaResult(lemma, *prove_lemma(broken, lemma)) for lemma in lemmas]
    _ctx, solver, enc = value_query(broken, claims[0], results)
    assert str(solver.check()) == "sat"
    word = enc.word_of(solver.model())
    refuted = replay_value(broken, claims[0], ("0", "1"), word, "test")
    assert "1" in word and refuted.word == word


def test_a_value_the_network_computes_right_on_the_model_word_is_an_encoder_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job, claims, lemmas = _value_claims()
    broken = _count_head_reads(job.network(0), Fraction(3, 2))  # type: ignore[attr-defined]
    results = [_LemmaResult(lemma, *prove_lemma(broken, lemma)) for lemma in lemmas]
    _ctx, solver, _enc = value_query(broken, claims[0], results)
    assert str(solver.check()) == "sat"
    with pytest.raises(EncoderBugError, match="but the exact interpreter agrees with it"):
        replay_value(
            broken, claims[0], ("0", "1"), ("0", "0"), "test"
        )  # no 1: k/n is 0 whatever the weight


def test_a_value_claim_without_a_closed_form_or_of_a_missing_step_is_unsupported() -> None:
    job, claims, _lemmas = _value_claims()
    net = job.network(0)  # type: ignore[attr-defined]
    with pytest.raises(Unsupported, match="has no closed form"):
        value_query(net, dataclasses.replace(claims[0], closed_form=None), [])
    with pytest.raises(Unsupported, match="the network has no step named 'nowhere'"):
        value_query(
            net, dataclasses.replace(claims[0], quantity=StateValue(after="nowhere", dim="k/n")), []
        )


# --------------------------------------------------------------------------- faithfulness on random networks


W = st.integers(min_value=-2, max_value=2)


@st.composite
def _random_networks(draw: st.DrawFn) -> Network:
    """Two softmax layers and a ReLU FFN in the fragment position classes cover: scores from
    the special-token marker, the symbol, cos(iπ) and I[i=1] (a selection in the score), values
    from symbols, features and the layer below; prefix CLS, optionally a suffix END, index base 0
    or 1, the readout at CLS or END."""
    suffix = draw(st.booleans())
    dims = ("I0", "I1", "S", "cos", "1/n", "ind1", "h1", "f1", "out")
    table = {
        "0": {"I0": 1},
        "1": {"I1": 1},
        "CLS": {"S": 1},
        **({"END": {"S": 1}} if suffix else {}),
    }
    emb = token_embedding(
        ("0", "1"),
        table,
        positional={"cos": "cos(iπ)", "1/n": "1/n", "ind1": "I[i=1]"},
        prefix=("CLS",),
        suffix=("END",) if suffix else (),
        index_base=draw(st.integers(0, 1)),
    )
    base = Softmax(r=Fraction(draw(st.sampled_from([2, 3, 4]))))

    def key() -> Affine:
        return affine(
            {"q": {"cos": draw(W), "I1": draw(W), "ind1": draw(W)}}, inputs=("cos", "I1", "ind1")
        )

    h1 = Head(
        name="h1",
        query=affine({"q": {"S": draw(W), "I1": draw(W)}}, inputs=("S", "I1"), bias={"q": draw(W)}),
        key=key(),
        value=affine({"h1": {"I1": draw(W), "I0": draw(W), "1/n": draw(W), "cos": draw(W)}}),
        normalizer=base,
    )
    f = ffn(
        "f",
        affine(
            {"g": {"h1": draw(W), "I1": draw(W), "cos": draw(W), "1/n": draw(W)}},
            bias={"g": Fraction(draw(W), 2)},
        ),
        Activation(kind=draw(st.sampled_from(["relu", "sigma", "step"]))),
        affine({"f1": {"g": 1}}),
    )
    h2 = Head(
        name="h2",
        query=affine({"q": {"S": 1}}),
        key=key(),
        value=affine({"out": {"f1": draw(W), "h1": draw(W), "I1": draw(W), "ind1": draw(W)}}),
        normalizer=base,
    )
    return Network(
        name="random",
        dims=dims,
        embedding=emb,
        layers=(
            Sublayer(block=AttentionLayer(name="a1", heads=(h1,))),
            Sublayer(block=f),
            Sublayer(block=AttentionLayer(name="a2", heads=(h2,))),
        ),
        readout=classifier(
            {"out": 1},
            position=-1 if suffix and draw(st.booleans()) else 0,
            bias=Fraction(draw(W), 3),
        ),
    )


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(net=_random_networks(), word=st.lists(st.sampled_from(["0", "1"]), max_size=6).map(tuple))
def test_on_a_word_with_the_counts_of_the_encoding_the_logit_is_the_exact_interpreters(
    net: Network, word: tuple[str, ...]
) -> None:
    """The encoding's logit, at the length, the counts per (class, symbol) and the symbols at the
    selected positions of one word, evaluates to the exact interpreter's logit on that word, and
    every constraint of the encoding holds there (the word is one of the words the query
    covers)."""
    import z3

    exact = run(net, word).output
    ctx = z3.Context()
    enc = _Classes(z3, ctx, net, [], 0)
    try:
        logit = enc.logit()
    except (
        Unsupported
    ) as exc:  # e.g. END's I[i=1] is 1 for the empty word only: a score that depends on the length
        event(f"unsupported: {str(exc)[:40]}")
        reject()
    event("supported")
    at = [(enc.L, z3.IntVal(len(word), ctx))]
    for (c, a), k in enc.k.items():
        at.append(
            (
                k,
                z3.IntVal(
                    sum(
                        1
                        for t, s in enumerate(word)
                        if (t + enc.first) % enc.P == c and s == enc.alphabet[a]
                    ),
                    ctx,
                ),
            )
        )
    for T, tok in enc.targets:
        index = z3.simplify(z3.substitute(T, *at))
        assert z3.is_int_value(index)
        t = index.as_long() - enc.first
        at.append((tok, z3.IntVal(enc.alphabet.index(word[t]) if 0 <= t < len(word) else 0, ctx)))
    value = z3.simplify(z3.substitute(logit.num / logit.den, *at))
    assert z3.is_rational_value(value), value
    assert Fraction(value.numerator_as_long(), value.denominator_as_long()) == exact
    for constraint in (*enc.assertions, *enc.vals.assertions, *enc._target_constraints()):
        assert z3.is_true(z3.simplify(z3.substitute(constraint, *at))), constraint
