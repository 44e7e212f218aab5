"""Yao et al. 2021, Theorem 4.1: the batched versions of the recognizer's trace claims (Y3 no
ties / nearest unmatched neighbour, Y4 per-layer invariant, Y5 tie-rule independent accept bit)
give the per-word verdicts word for word: the same ``checked`` count and detail where they hold,
the same first counterexample and failure text where a mutated network breaks them. The batched
trace they read is checked against :func:`netproof.symbolic.exact.run`'s states and selections."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic import Hardmax, Network, Softmax, affine, batched
from netproof.symbolic.exact import run
from netproof.verifier.claims import Proved, Refuted, TraceProperty, Verdict
from netproof.verifier.exhaustive.checker import Job, check

BATCHED = "exhaustive (exact, batched integers)"
PER_WORD = "exhaustive (exact)"


def _dyck(k: int, depth: int, variant: str) -> tuple[Job, dict[str, TraceProperty]]:
    c = REGISTRY["dyck"]
    values = c.parse_params({"k": str(k), "depth": str(depth), "variant": variant})
    claims = {cl.id: cl for cl in c.claims(values) if isinstance(cl, TraceProperty)}
    return Job(c, values), claims


def _with_network(job: Job, net: Network) -> Job:
    """The same construction and parameters, built as ``net`` (a mutant)."""
    return Job(dataclasses.replace(job.construction, build=lambda values: net), job.values)


def _per_word(claim: TraceProperty) -> TraceProperty:
    return dataclasses.replace(claim, holds_batch=None)


def _same_verdict(batched_verdict: Verdict, per_word_verdict: Verdict) -> None:
    """The two paths agree on everything but the method."""
    assert batched_verdict.method == BATCHED
    assert per_word_verdict.method == PER_WORD
    assert dataclasses.replace(batched_verdict, method=PER_WORD) == per_word_verdict


def _replace_head(net: Network, layer: str, head: str, **changes: Any) -> Network:
    layers = list(net.layers)
    for idx, sub in enumerate(layers):
        if sub.name == layer:
            block = sub.block
            heads = tuple(
                dataclasses.replace(h, **changes) if h.name == head else h for h in block.heads
            )  # type: ignore[union-attr]
            layers[idx] = dataclasses.replace(sub, block=dataclasses.replace(block, heads=heads))
    return dataclasses.replace(net, layers=tuple(layers))


# --------------------------------------------------------------------------- the batched trace


@pytest.mark.parametrize(
    ("k", "depth", "variant", "max_len"),
    [(1, 1, "fixed", 4), (2, 2, "fixed", 3), (2, 2, "paper", 3)],
)
def test_the_batched_trace_holds_the_exact_states_and_selections_of_every_word(
    k: int, depth: int, variant: str, max_len: int
) -> None:
    net = dyck_recognizer(k=k, depth=depth, variant=variant)
    for m in range(max_len + 1):
        ws = list(itertools.product(net.alphabet, repeat=m))
        bt = batched.trace(net, ws)
        assert len(bt) == len(ws) and bt.n == m + 2
        for w, word in enumerate(ws):
            exact = run(net, word)
            assert bool(bt.accepted[w]) == exact.accepted
            assert [s.label for s in bt.states] == [s.label for s in exact.states]
            for state in exact.states:
                got = bt.state(state.label)
                assert [[got.value(w, t, d) for d in net.dims] for t in range(exact.n)] == [
                    list(r) for r in state.rows
                ]
            for sel in exact.selections:
                assert bt.selected(sel.layer, sel.head, w, sel.position) == sel.selected, (
                    word,
                    sel,
                )


def test_a_tied_head_reports_its_first_last_and_count_of_maximizers_and_the_selection_follows_the_tie_rule() -> (
    None
):
    # The left head scoring −m only: at token 3 of γ()ω after no matching, γ is matched (−1)
    # and the two brackets tie at 0.
    tied = _replace_head(
        dyck_recognizer(k=1, depth=1), "match1", "left", key=affine({"q": {"m": -1}})
    )
    sel = batched.trace(tied, ["()"]).selection("match1", "left")
    assert (sel.first[0].tolist(), sel.last[0].tolist(), sel.count[0].tolist()) == (
        [-1, 0, 1, 1],
        [-1, 0, 1, 2],
        [0, 1, 1, 2],
    )
    for tie, selected in (("average", (1, 2)), ("leftmost", (1,)), ("rightmost", (2,))):
        net = _replace_head(tied, "match1", "left", normalizer=Hardmax(tie=tie))  # type: ignore[arg-type]
        bt = batched.trace(net, ["()"])
        assert (
            bt.selected("match1", "left", 0, 3) == selected == run(net, "()").selections[3].selected
        )
        assert bt.maximizers("match1", "left", 0, 3) == (1, 2)


def test_exact_comparisons_of_a_state_against_rationals_see_every_sign() -> None:
    state = batched.trace(dyck_recognizer(k=1, depth=1), ["()"]).state("input")
    assert state.compare("p", Fraction(1, 2)).tolist() == [[-1, 0, 1, 1]]  # p = i/4 for i = 1..4
    assert state.equals("p", 1).tolist() == [[False, False, False, True]]
    with pytest.raises(KeyError, match="no dim 'q' in state 'input'"):
        state.numerators("q")


def test_a_batched_trace_refuses_words_of_different_lengths() -> None:
    with pytest.raises(batched.WordError, match="words of one length; got lengths \\[0, 2\\]"):
        batched.trace(dyck_recognizer(k=1, depth=1), ["", "()"])


def test_asking_for_a_head_the_network_does_not_have_lists_the_heads() -> None:
    bt = batched.trace(dyck_recognizer(k=1, depth=1), ["()"])
    with pytest.raises(
        KeyError, match="no head 'middle' in attention layer 'match1'; heads: match1/left"
    ):
        bt.maximizers("match1", "middle", 0, 1)


# --------------------------------------------------------------------------- same verdicts


@pytest.mark.parametrize("variant", ["fixed", "paper"])
@pytest.mark.parametrize(("k", "depth", "max_len"), [(1, 1, 6), (2, 2, 3), (3, 1, 3)])
def test_the_batched_y3_y4_y5_verdicts_equal_the_per_word_ones(
    k: int, depth: int, variant: str, max_len: int
) -> None:
    job, claims = _dyck(k, depth, variant)
    assert set(claims) == ({"Y3", "Y5"} if variant == "paper" else {"Y3", "Y4", "Y5"})
    for claim in claims.values():
        assert claim.holds_batch is not None
        got = check(job, claim, max_len=max_len)
        assert isinstance(got, Proved), (claim.id, got)
        _same_verdict(got, check(job, _per_word(claim), max_len=max_len))


def test_the_invariant_is_checked_on_the_valid_words_only_and_says_how_many() -> None:
    job, claims = _dyck(2, 2, "fixed")
    got = check(job, claims["Y4"], max_len=4)
    assert got == Proved(
        BATCHED, 11, "every word with 0 <= |w| <= 4 that the claim is about (11 words)"
    )


def test_only_filters_the_words_before_the_batched_evaluation() -> None:
    job, claims = _dyck(1, 1, "fixed")
    seen: list[tuple[str, ...]] = []
    inner = claims["Y4"].holds_batch
    assert inner is not None

    def spy(words: Sequence[tuple[str, ...]], trace: Any) -> Sequence[str | None]:
        seen.extend(words)
        assert len(trace) == len(words)
        return inner(words, trace)

    verdict = check(job, dataclasses.replace(claims["Y4"], holds_batch=spy), max_len=6)
    assert isinstance(verdict, Proved) and verdict.checked == 4
    assert seen == [(), ("(", ")"), ("(", ")", "(", ")"), ("(", ")", "(", ")", "(", ")")]


# --------------------------------------------------------------------------- mutants


def _mutant_verdicts(job: Job, claim: TraceProperty, net: Network, max_len: int) -> Refuted:
    mutant = _with_network(job, net)
    got = check(mutant, claim, max_len=max_len)
    assert isinstance(got, Refuted), got
    _same_verdict(got, check(mutant, _per_word(claim), max_len=max_len))
    return got


def test_a_left_head_without_the_position_term_is_refuted_by_a_tie_on_the_same_word() -> None:
    job, claims = _dyck(1, 1, "fixed")
    tied = _replace_head(job.network(), "match1", "left", key=affine({"q": {"m": -1}}))
    got = _mutant_verdicts(job, claims["Y3"], tied, 4)
    assert got.word == ("(", "(")
    assert got.detail == "on '((': match1 left head at token 3: a tie between tokens (1, 2)"


def test_a_left_head_that_prefers_the_farthest_token_is_refuted_with_the_nearest_one() -> None:
    job, claims = _dyck(1, 1, "fixed")
    far = _replace_head(job.network(), "match1", "left", key=affine({"q": {"p": -1, "m": -1}}))
    got = _mutant_verdicts(job, claims["Y3"], far, 4)
    assert (
        got.detail
        == "on '((': match1 left head at token 3 selects token 1, but the nearest unmatched one is 2"
    )


def test_a_left_head_that_sees_its_own_token_is_refuted_for_selecting_from_an_empty_side() -> None:
    job, claims = _dyck(2, 2, "fixed")
    causal = _replace_head(job.network(), "match1", "left", mask="causal")
    got = _mutant_verdicts(job, claims["Y3"], causal, 3)
    assert got.word == ()
    assert (
        got.detail
        == "on ε (the empty word): match1 left head at token 0: selects (0,) from an empty set"
    )


def test_the_printed_network_breaks_the_layer_invariant_on_the_same_first_valid_word() -> None:
    job, claims = _dyck(2, 2, "fixed")
    got = _mutant_verdicts(job, claims["Y4"], dyck_recognizer(k=2, depth=2, variant="paper"), 4)
    assert got.word == ("(", ")")
    assert got.detail == "on '()': after layer 1, token 0 has m = 0, expected 1 (pair height None)"


def test_a_wrong_holds_batch_is_refuted_on_the_first_word_it_flags() -> None:
    job, claims = _dyck(1, 1, "fixed")

    def flags_close_then_open(words: Sequence[tuple[str, ...]], trace: Any) -> list[str | None]:
        return ["flagged" if w in {(")", "("), (")", "(", ")", "(")} else None for w in words]

    got = check(
        job, dataclasses.replace(claims["Y3"], holds_batch=flags_close_then_open), max_len=4
    )
    assert got == Refuted(BATCHED, "on ')(': flagged", (")", "("))


def test_a_holds_batch_that_returns_too_few_results_is_an_error_that_says_so() -> None:
    job, claims = _dyck(1, 1, "fixed")

    def short(words: Sequence[tuple[str, ...]], trace: Any) -> list[str | None]:
        return [None]

    with pytest.raises(ValueError, match="holds_batch returned 1 results for 2 words"):
        check(job, dataclasses.replace(claims["Y3"], holds_batch=short), max_len=2)


def test_a_claim_for_another_backend_or_network_keeps_the_per_word_path() -> None:
    job, claims = _dyck(1, 1, "fixed")
    got = check(job, dataclasses.replace(claims["Y5"], backend="sympy"), max_len=2)
    assert isinstance(got, Proved) and got.method == "exhaustive (sympy)"
    # A softmax head is outside the batched fragment.
    soft = _replace_head(
        job.network(), "final", "any_open_or_error", normalizer=Softmax(r=Fraction(2))
    )
    got = check(_with_network(job, soft), claims["Y3"], max_len=2)
    assert isinstance(got, Proved) and got.method == PER_WORD


# --------------------------------------------------------------------------- Y5's three runs


class _Run:
    def __init__(self, accepted: Any) -> None:
        self.accepted = accepted


class _Runs:
    """The part of a trace Y5 reads: the accept bit (or bits) of each tie rule's run."""

    def __init__(self, average: Any, leftmost: Any, rightmost: Any) -> None:
        self.variants = {
            "average": _Run(average),
            "leftmost": _Run(leftmost),
            "rightmost": _Run(rightmost),
        }


def test_the_tie_rule_check_compares_the_accept_bits_of_the_three_runs_word_by_word() -> None:
    c = REGISTRY["dyck"]
    values = c.parse_params({"k": "1", "depth": "1"})
    y5 = next(cl for cl in c.claims(values) if cl.id == "Y5")
    assert isinstance(y5, TraceProperty) and y5.holds_batch is not None
    assert y5.variants is not None
    rows = [(True, True, True), (False, False, False), (False, True, False), (True, True, False)]
    got = y5.holds_batch(
        [()] * len(rows), _Runs(*(np.array([r[i] for r in rows]) for i in range(3)))
    )
    assert list(got) == [y5.holds((), _Runs(*row)) for row in rows]
    assert got[:2] == [None, None]
    assert (
        got[2]
        == "the accept bit depends on the tie rule: {'average': False, 'leftmost': True, 'rightmost': False}"
    )
    assert set(y5.variants(c.build(values))) == {"average", "leftmost", "rightmost"}


def test_the_tie_rule_check_refuses_a_trace_without_its_variants_runs_naming_the_fix() -> None:
    c = REGISTRY["dyck"]
    values = c.parse_params({"k": "1", "depth": "1"})
    y5 = next(cl for cl in c.claims(values) if cl.id == "Y5")
    with pytest.raises(
        TypeError, match=r"pass the trace with its variants' traces .*with_variants"
    ):
        y5.holds(("(", ")"), _Run(True))
