"""The recurrent and encoder–decoder constructions' per-position claims through the per-position
engine (:mod:`netproof.verifier.models.exact_claims`): Suzgun et al.'s MARNN next-symbol sets
(claim S1/S4, :class:`PredictsNext`) and Bhattamishra et al.'s Turing-machine simulator (claim
B6/B8, :class:`Simulates`) agree with the claims' own checkers on the committed constructions:
the same verdict, and where refuted the same first wrong word at the same position (a wrong
target, a planted wrong weight, Figure 2's ablations, the paper's literal construction)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from netproof.constructions import REGISTRY
from netproof.symbolic import RecurrentNetwork
from netproof.symbolic.recurrent import run
from netproof.verifier.claims import PredictsNext, Proved, Refuted, Simulates
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.exhaustive.job import decoder_budget
from netproof.verifier.models.exact_claims import check_predicts_next, check_simulates
from netproof.verifier.models.sequence import SequenceReport, exact_judge

pytestmark = pytest.mark.torch

BOUND = 4


def _next_claims(name: str, params: dict[str, str]) -> tuple[Job, list[PredictsNext]]:
    c = REGISTRY[name]
    values = c.parse_params(params)
    claims = [cl for cl in c.claims(values) if isinstance(cl, PredictsNext)]
    return Job(c, values), [dataclasses.replace(cl, max_len=BOUND) for cl in claims]


def _agree(verdict: object, report: SequenceReport) -> None:
    """The engine's report says what the claim's own checker says."""
    if isinstance(verdict, Proved):
        assert report.status == "correct" and report.totals.undecided == 0
        return
    assert isinstance(verdict, Refuted), verdict
    sw = report.shortest_wrong
    assert report.status == "wrong" and sw is not None
    assert sw.word == verdict.word
    if "t" in verdict.values:  # the step (or prediction) the checker names
        t = int(verdict.values["t"])
        assert sw.position == (t - 1 if report.output == "next-set" else t)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("stack-rnn", {"task": "d2"}),
        ("stack-lstm", {"task": "palindrome"}),
        ("baby-ntm", {"task": "palindrome", "variant": "paper"}),
    ],
)
def test_the_marnn_claims_agree_with_their_own_checker_word_and_position(
    name: str, params: dict[str, str]
) -> None:
    job, claims = _next_claims(name, params)
    net = job.network(0)
    assert isinstance(net, RecurrentNetwork)
    for claim in claims:
        report = check_predicts_next(net, claim)
        assert report.output == "next-set"
        a = len(net.alphabet)
        assert report.totals.words == sum(a**m for m in range(1, BOUND + 1))
        _agree(check(job, claim), report)
        if claim.id == "S4-paper-no-eos":  # the paper's literal target: EOS is predicted
            assert report.shortest_wrong is not None
            assert report.shortest_wrong.word == ("#",) and report.shortest_wrong.got == ("EOS",)


def test_a_planted_wrong_weight_is_found_by_both_at_the_same_word_and_position() -> None:
    job, (claim,) = _next_claims("stack-rnn", {"task": "d2"})
    net = job.network(0)
    assert isinstance(net, RecurrentNetwork)
    W_y = net.readout.W_y  # y:] reads in_o:[ with weight 1; planted: 0
    row, col = W_y.outputs.index("y:]"), W_y.inputs.index("in_o:[")
    assert W_y.weights[row][col] == 1
    weights = tuple(
        tuple(Fraction(0) if (i, j) == (row, col) else w for j, w in enumerate(r))
        for i, r in enumerate(W_y.weights)
    )
    wrong = dataclasses.replace(
        net, readout=dataclasses.replace(net.readout, W_y=dataclasses.replace(W_y, weights=weights))
    )
    report = check_predicts_next(wrong, claim)
    mutant = dataclasses.replace(job.construction, build=lambda _values: wrong)
    verdict = check(Job(mutant, job.values), claim)
    assert isinstance(verdict, Refuted)
    _agree(verdict, report)
    assert report.shortest_wrong is not None
    assert report.shortest_wrong.word == ("[",) and report.shortest_wrong.expected == (
        "(",
        "[",
        "]",
    )
    # every listed position is one where a plain exact run disagrees with the task, and back
    task = claim.task
    plain = {
        (w, p)
        for w in (v.word for v in report.listed)
        for p, got in enumerate(run(wrong, w).predictions)
        if got != task.next_sets(w)[p]
    }
    assert {(v.word, v.position) for v in report.listed} == plain
    assert all(v.got is not None for v in report.listed)
    rows = [json.loads(json.dumps(v.to_dict())) for v in report.listed]
    assert rows[0]["input"] == "[" and rows[0]["got"] == ["(", "["]


TM = REGISTRY["tm-sim"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"transformer": "directional"},
        {"ablation": "dec-enc-residual"},
        {"ablation": "enc-ffn-sigma"},
        {"variant": "paper"},
    ],
    ids=["vanilla", "directional", "no-dec-enc-residual", "enc-ffn-sigma", "paper"],
)
def test_the_turing_machine_simulator_agrees_with_its_own_checker_word_and_step(
    params: dict[str, str],
) -> None:
    values = TM.parse_params(params)
    job = Job(TM, values)
    claim = next(cl for cl in TM.claims(values) if isinstance(cl, Simulates))
    report = check_simulates(
        job.network, claim, alphabet=job.alphabet, budget=lambda w: decoder_budget(job, w), max_n=2
    )
    assert report.output == "value"
    assert report.totals.words == 7  # ε, 2 words of length 1, 4 of length 2
    verdict = check(job, claim, max_len=2)
    _agree(verdict, report)
    if params == {"ablation": "dec-enc-residual"}:  # Figure 2: fails on ε at step 2
        assert report.shortest_wrong is not None
        assert report.shortest_wrong.word == () and report.shortest_wrong.position == 2


def test_a_tie_or_a_score_at_the_threshold_is_undecided_never_decided() -> None:
    half = Fraction(1, 2)
    tie: tuple[Any, float] = exact_judge((Fraction(1), Fraction(1)), "a", ("a", "b"), None, None)
    assert tie == (None, 0.0)
    assert exact_judge((half, Fraction(1)), ("b",), ("a", "b"), half, None) == (None, 0.0)
    got, margin = exact_judge((Fraction(1, 3), Fraction(1)), ("b",), ("a", "b"), half, None)
    assert got == ("b",) and 0 < margin <= 1 / 6
    got, margin = exact_judge(Fraction(1, 10**20), 0, (0,), None, 0.0)
    assert got == pytest.approx(1e-20) and got != 0 and margin > 0
