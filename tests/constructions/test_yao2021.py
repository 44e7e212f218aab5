"""Yao et al. 2021, Theorem 4.1: the Dyck(k, D) hard-attention recognizer and its claims."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import dyck_recognizer, pair_heights
from netproof.symbolic import Head, Network, WordError, affine
from netproof.symbolic.exact import run
from netproof.verifier.claims import Proved, Refuted, TraceProperty
from netproof.verifier.claims.dyck import DYCK, is_dyck
from netproof.verifier.exhaustive.checker import Job, check


def _claims(**given: str) -> tuple[Job, dict[str, object]]:
    c = REGISTRY["dyck"]
    values = c.parse_params(given)
    return Job(c, values), {cl.id: cl for cl in c.claims(values)}


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (3, 1)])
def test_the_fixed_recognizer_agrees_with_the_reference_on_every_word_up_to_length_4(
    k: int, depth: int
) -> None:
    net = dyck_recognizer(k=k, depth=depth)
    for n in range(5):
        for w in itertools.product(net.alphabet, repeat=n):
            assert run(net, w).accepted == is_dyck(w, k, depth), w


def test_the_printed_recognizer_rejects_the_shortest_valid_word_and_accepts_close_open() -> None:
    net = dyck_recognizer(k=1, depth=1, variant="paper")
    assert run(net, "()").accepted is False
    assert run(net, ")(").accepted is True
    job, claims = _claims(k="1", depth="1", variant="paper")
    verdict = check(job, claims["Y2-paper"])  # type: ignore[arg-type]
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("(", ")")


def test_pair_heights_count_one_plus_the_highest_nested_pair() -> None:
    assert pair_heights(tuple("([])[]"), 2) == {1: 2, 4: 2, 2: 1, 3: 1, 5: 1, 6: 1}


def test_the_layer_invariant_fails_on_the_printed_network_for_some_valid_word() -> None:
    _job, claims = _claims(k="2", depth="2")
    invariant = claims["Y4"]
    assert isinstance(invariant, TraceProperty)
    paper = dyck_recognizer(k=2, depth=2, variant="paper")
    failures = [
        w
        for n in range(5)
        for w in itertools.product(paper.alphabet, repeat=n)
        if is_dyck(w, 2, 2) and invariant.holds(w, run(paper, w)) is not None
    ]
    assert failures


def _tied_left_head(net: Network) -> Network:
    """The left head scoring −m only: every matched (or every unmatched) token ties."""
    layers = list(net.layers)
    att = layers[0].block
    left = att.heads[0]  # type: ignore[union-attr]
    tied = dataclasses.replace(left, key=affine({"q": {"m": -1}}))
    assert isinstance(tied, Head)
    layers[0] = dataclasses.replace(
        layers[0], block=dataclasses.replace(att, heads=(tied, *att.heads[1:]))
    )  # type: ignore[union-attr]
    return dataclasses.replace(net, layers=tuple(layers))


def test_the_no_tie_claim_is_refuted_when_the_left_head_forgets_the_position_term() -> None:
    job, claims = _claims(k="1", depth="1")
    net = _tied_left_head(job.network())
    mutant_job = Job(dataclasses.replace(job.construction, build=lambda values: net), job.values)
    verdict = check(mutant_job, claims["Y3"], max_len=4)  # type: ignore[arg-type]
    assert isinstance(verdict, Refuted)
    assert "tie" in verdict.detail or "selects token" in verdict.detail


def test_every_claim_of_the_default_recognizer_is_proved_up_to_length_4() -> None:
    job, claims = _claims()
    for cid, claim in claims.items():
        assert isinstance(check(job, claim, max_len=4), Proved), cid  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "message"),
    [({"k": 0}, "k=0 must be an integer >= 1"), ({"depth": 0}, "depth=0 must be an integer >= 1")],
)
def test_bad_recognizer_parameters_are_refused_with_the_value(
    given: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        dyck_recognizer(**{"k": 2, "depth": 2, **given})


def test_a_bracket_of_a_type_above_k_is_refused_with_the_alphabet() -> None:
    with pytest.raises(WordError, match=r"symbol '\{' at position 2 is not in the alphabet"):
        run(dyck_recognizer(k=2, depth=2), "({})")


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_fixed_recognizer_agrees_with_the_reference_on_every_word_up_to_length_6_for_k_and_d_up_to_3(
    k: int, depth: int
) -> None:
    # Spec §3.3 reached |u| <= 6; the batched exact evaluator makes the full grid cheap
    # (k = 3: 55,987 words per depth). Its agreement with exact.run is tested in
    # tests/backends/test_batched.py.
    from netproof.symbolic.batched import accepts

    net = dyck_recognizer(k=k, depth=depth)
    lang = DYCK(k, depth)
    words = [w for n in range(7) for w in itertools.product(lang.alphabet, repeat=n)]
    bits = accepts(net, words)
    wrong = [w for w, bit in zip(words, bits, strict=True) if bit != lang.contains(w)]
    assert wrong == []
    assert sum(bits) == sum(lang.contains(w) for w in words) > 0
