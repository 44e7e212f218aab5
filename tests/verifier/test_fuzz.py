"""The fuzzing engine (:mod:`netproof.verifier.fuzzing.fuzz`) and the per-word replay (:func:`check_word`).

Quality first (STYLE.md §8): fuzzing the papers' literal versions finds their counterexamples
within the default budget and shrinks them to the very word the exhaustive checker reports
first; so does fuzzing a recognizer against a language one level shallower, whose shortest
counterexample is long. The fixed versions give "no counterexample found", never "proved".
Then reproducibility (seeds, derandomized runs, the example database), the choice of strategy
per claim, the fast path against the replay, and the errors.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jobs import job_for

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.verifier.claims import (
    Claim,
    Proved,
    Recognizes,
    Refuted,
    TraceProperty,
    Unknown,
)
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.exhaustive.checker import Job, check, check_word
from netproof.verifier.fuzzing.fuzz import FuzzError, _Probe, fuzz, fuzzable, plan
from netproof.verifier.fuzzing.strategies import language_words


def registry_job(name: str, **given_params: str) -> tuple[Job, dict[str, Claim]]:
    c = REGISTRY[name]
    values = c.parse_params(given_params)
    return Job(c, values), {cl.id: cl for cl in c.claims(values)}


def exhaustive_word(job: Job, claim: Claim, max_len: int) -> tuple[str, ...]:
    verdict = check(job, claim, max_len=max_len)
    assert isinstance(verdict, Refuted) and verdict.word is not None, verdict
    return verdict.word


# --------------------------------------------------------------------------- quality


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (2, 2)])
def test_fuzzing_the_paper_dyck_recognizer_finds_the_exhaustive_checkers_shortest_counterexample(
    k: int, depth: int
) -> None:
    job, claims = registry_job("dyck", k=str(k), depth=str(depth), variant="paper")
    claim = claims["Y2-paper"]
    verdict = fuzz(job, claim, seed=0, database=None)  # the default budget and max length
    assert isinstance(verdict, Refuted)
    assert verdict.word == exhaustive_word(job, claim, 6) == ("(", ")")
    assert verdict.method == "fuzz (hypothesis, exact)"
    assert (
        verdict.detail.startswith("'()' is in Dyck(")
        and "rejects it (logit -1/2)" in verdict.detail
    )
    assert verdict.values == {"logit": "-1/2", "accepted": "False", "member": "True"}


@pytest.mark.parametrize(("k", "depth"), [(1, 3), (2, 3), (3, 2), (1, 4)])
def test_fuzzing_a_recognizer_against_a_shallower_language_shrinks_to_the_long_shortest_counterexample(
    k: int, depth: int
) -> None:
    # Dyck(k, D) \\ Dyck(k, D − 1) starts at the 2D-symbol word (^D )^D: hypothesis must shrink to it.
    job = job_for(dyck_recognizer(k=k, depth=depth))
    claim = Recognizes(
        id="shallower", statement="", reference="", language=DYCK(k, depth - 1), max_len=2 * depth
    )
    verdict = fuzz(job, claim, seed=1, database=None)
    assert isinstance(verdict, Refuted)
    assert verdict.word == exhaustive_word(job, claim, 2 * depth) == ("(",) * depth + (")",) * depth


@pytest.mark.parametrize(
    ("name", "params", "claim_id", "bound"),
    [
        ("parity", {"variant": "paper"}, "C5-paper", 8),
        ("first-ln-logn", {"variant": "paper"}, "C12-paper", 4),
        ("dyck-gen", {"variant": "paper"}, "Y10-paper", 6),
        ("dyck-gen", {"variant": "paper"}, "Y10-def-paper", 4),
        ("dyck-gen", {"variant": "paper", "reading": "G2"}, "Y10-paper", 6),
        ("dyck-gen", {"variant": "paper", "reading": "G2"}, "Y10-def-paper", 3),
    ],
)
def test_fuzzing_the_papers_other_refuted_statements_finds_the_exhaustive_counterexample(
    name: str, params: dict[str, str], claim_id: str, bound: int
) -> None:
    job, claims = registry_job(name, **params)
    claim = claims[claim_id]
    verdict = fuzz(job, claim, seed=2, database=None, examples=100)
    assert isinstance(verdict, Refuted), verdict
    assert verdict.word == exhaustive_word(job, claim, bound)


@pytest.mark.parametrize(
    ("name", "claim_id"),
    [("dyck", "Y2"), ("dyck", "Y4"), ("first", "recognizes"), ("first-logn", "C11-bound")],
)
def test_fuzzing_a_correct_claim_finds_no_counterexample_and_never_says_proved(
    name: str, claim_id: str
) -> None:
    job, claims = registry_job(name)
    verdict = fuzz(job, claims[claim_id], seed=3, database=None, examples=60)
    assert isinstance(verdict, Unknown) and not isinstance(verdict, Proved)
    assert verdict.reason.startswith(
        "no counterexample found in 60 examples (seed 3, max length 40;"
    )
    assert verdict.reason.endswith("this is not a proof")


def test_fuzzing_long_words_through_the_batched_dyck_recognizer_finds_no_counterexample() -> None:
    job, claims = registry_job("dyck", k="2", depth="3")
    verdict = fuzz(job, claims["Y2"], seed=4, database=None, examples=40, max_len=300)
    assert isinstance(verdict, Unknown) and "max length 300" in verdict.reason


# --------------------------------------------------------------------------- reproducibility


def test_a_seeded_run_finds_the_same_counterexample_twice() -> None:
    job, claims = registry_job("dyck", k="2", depth="2", variant="paper")
    first = fuzz(job, claims["Y2-paper"], seed=11, database=None)
    again = fuzz(job, claims["Y2-paper"], seed=11, database=None)
    assert first == again and isinstance(first, Refuted) and "seed 11" in first.detail


def test_the_seed_an_unseeded_run_reports_replays_that_run() -> None:
    job, claims = registry_job("first")
    first = fuzz(job, claims["recognizes"], database=None, examples=30)
    assert isinstance(first, Unknown)
    match = re.search(r"\(seed (\d+), max length 40;", first.reason)
    assert match is not None, first.reason
    assert fuzz(job, claims["recognizes"], seed=int(match.group(1)), examples=30) == first


def test_a_derandomized_run_draws_the_same_examples_every_time() -> None:
    job, claims = registry_job("first")
    one = fuzz(job, claims["recognizes"], derandomize=True, examples=30)
    two = fuzz(job, claims["recognizes"], derandomize=True, examples=30)
    assert one == two and isinstance(one, Unknown) and "(derandomized, max length 40;" in one.reason


def test_failures_are_kept_in_the_database_and_replayed_first(tmp_path: Path) -> None:
    job, claims = registry_job("dyck", k="1", depth="3", variant="paper")
    db = tmp_path / "fuzz-db"
    first = fuzz(job, claims["Y2-paper"], database=db)
    assert isinstance(first, Refuted) and any(db.iterdir())
    again = fuzz(job, claims["Y2-paper"], database=db)
    assert isinstance(again, Refuted) and again.word == first.word
    assert "found by hypothesis after 1 examples" in again.detail


def test_the_database_keeps_the_failures_of_different_claims_apart(tmp_path: Path) -> None:
    job, claims = registry_job("dyck", k="1", depth="3", variant="paper")
    fuzz(job, claims["Y2-paper"], database=tmp_path)
    verdict = fuzz(job, claims["Y3"], database=tmp_path, examples=20)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("no counterexample found")


# --------------------------------------------------------------------------- strategies per claim


@pytest.mark.parametrize(
    ("name", "params", "claim_id", "description"),
    [
        ("dyck", {}, "Y2", "uniform words, members and near-misses of Dyck(2,2)"),
        ("dyck", {}, "Y4", "members of Dyck(2,2)"),
        ("first", {}, "recognizes", "uniform words, members and near-misses of FIRST"),
        ("dyck-gen", {}, "Y10", "prefixes of Dyck(2,2) words"),
        ("dyck-gen", {}, "Y10-def", "bracket words followed by ω"),
        ("dyck-gen", {"reading": "G2"}, "Y10", "Dyck(2,2) words followed by ω"),
        ("dyck-gen", {"reading": "G2"}, "Y10-def", "words followed by ω"),
    ],
)
def test_each_claim_gets_the_words_it_is_about(
    name: str, params: dict[str, str], claim_id: str, description: str
) -> None:
    job, claims = registry_job(name, **params)
    assert plan(job, claims[claim_id]).description == description


def test_a_domain_no_strategy_matches_is_drawn_from_the_claims_own_list() -> None:
    job, _ = registry_job("dyck")
    odd = TraceProperty(
        id="odd",
        statement="",
        reference="",
        holds=lambda w, t: None,
        domain=lambda b: [("(",), (")", ")", "[")],
        max_len=3,
    )
    p = plan(job, odd)
    assert p.description == "the claim's own domain up to length 3 (2 words)"
    assert p.admissible((")", ")", "[")) and not p.admissible(("(", ")"))


@pytest.mark.parametrize(
    ("name", "claim_id"),
    [("parity", "C4-all-c"), ("parity", "C2"), ("parity-ln", "C7-mirror"), ("dyck-gen", "Y8")],
)
def test_claims_not_checked_word_by_word_are_not_fuzzable(name: str, claim_id: str) -> None:
    job, claims = registry_job(name)
    verdict = fuzz(job, claims[claim_id], seed=0, database=None)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith(
        f"not fuzzable: {claim_id} is a "
    )
    assert fuzzable(claims[claim_id]) == verdict.reason


def test_a_given_strategy_replaces_the_automatic_one() -> None:
    job, claims = registry_job("dyck", k="1", depth="1", variant="paper")
    verdict = fuzz(job, claims["Y2-paper"], seed=0, database=None, strategy=st.just((")", "(")))
    assert (
        isinstance(verdict, Refuted)
        and verdict.word == (")", "(")
        and "the given strategy" in verdict.detail
    )
    assert "is not in Dyck(1,1) but the network accepts it" in verdict.detail


# --------------------------------------------------------------------------- fast path and replay


@pytest.mark.parametrize(
    ("variant", "claim_id"),
    [("paper", "Y2-paper"), ("paper", "Y3"), ("fixed", "Y4"), ("fixed", "Y5")],
)
@settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_the_batched_search_and_the_per_word_replay_agree_on_every_word(
    variant: str, claim_id: str, data: st.DataObject
) -> None:
    job, claims = registry_job("dyck", k="2", depth="2", variant=variant)
    claim = claims[claim_id]
    w = data.draw(language_words(DYCK(2, 2), max_len=14))
    assert _Probe(job, claim)(w) is isinstance(check_word(job, claim, w), Refuted)


def test_check_word_gives_the_exhaustive_checkers_verdict_for_its_counterexample() -> None:
    job, claims = registry_job("parity", variant="paper")
    exhaustive = check(job, claims["C5-paper"])
    single = check_word(job, claims["C5-paper"], ("0",))
    assert isinstance(exhaustive, Refuted) and isinstance(single, Refuted)
    assert (single.detail, single.word, single.values) == (
        exhaustive.detail,
        exhaustive.word,
        exhaustive.values,
    )
    assert single.method == "single word (symbolic)"
    assert check_word(job, claims["C4"], ("1", "0", "1", "1")) is None


def test_check_word_skips_words_a_trace_property_is_not_about_and_refuses_other_claims() -> None:
    job, claims = registry_job("dyck")
    assert check_word(job, claims["Y4"], (")", "(")) is None  # Y4 is about members only
    parity, parity_claims = registry_job("parity")
    verdict = check_word(parity, parity_claims["C2"], ("0",))
    assert (
        isinstance(verdict, Unknown)
        and "BlockIdentity claim is not checked word by word; use check()" in verdict.reason
    )
    with pytest.raises(ValueError, match=r"symbols \['x'\] outside the alphabet"):
        check_word(job, claims["Y2"], ("(", "x"))


# --------------------------------------------------------------------------- errors


def test_fuzz_refuses_bad_budgets_lengths_databases_and_strategies_with_the_fix() -> None:
    job, claims = registry_job("first-logn")
    claim = claims["C11"]  # min_len = 1
    with pytest.raises(FuzzError, match=r"examples=0 must be an int >= 1"):
        fuzz(job, claim, examples=0)
    with pytest.raises(FuzzError, match=r"max_len=0 is below the claim's min_len=1; raise max_len"):
        fuzz(job, claim, max_len=0)
    with pytest.raises(
        FuzzError,
        match=r"database=42 must be None, a directory path or a hypothesis ExampleDatabase",
    ):
        fuzz(job, claim, database=42)  # type: ignore[arg-type]
    bad: Any = [("0",)]
    with pytest.raises(FuzzError, match=r"must be a hypothesis SearchStrategy"):
        fuzz(job, claim, strategy=bad)


# --------------------------------------------------------------------------- shards (fuzz --jobs)


def test_a_budget_is_spread_over_the_shards_without_an_empty_one() -> None:
    from netproof.verifier.fuzzing.shards import budgets

    assert budgets(10, 3) == [4, 3, 3] and budgets(2, 5) == [1, 1] and budgets(7, 1) == [7]
    with pytest.raises(ValueError, match=r"examples=0 and shards=2 must both be >= 1"):
        budgets(0, 2)


def test_shard_0_searches_as_one_process_would_and_the_others_get_seeds_derived_from_the_runs() -> (
    None
):
    from netproof.verifier.fuzzing.shards import shard_settings

    assert shard_settings(5, False, 0) == (5, False) and shard_settings(None, True, 0) == (
        None,
        True,
    )
    assert shard_settings(None, False, 3) == (None, False)  # unseeded: fresh seeds everywhere
    seeded = [shard_settings(5, False, i) for i in range(1, 4)]
    assert len({s for s, _d in seeded}) == 3 and all(
        d is False and isinstance(s, int) for s, d in seeded
    )
    assert seeded == [shard_settings(5, False, i) for i in range(1, 4)]
    assert shard_settings(None, True, 1) != shard_settings(6, False, 1)


def test_the_merged_verdict_is_the_shortest_counterexample_of_any_shard_whatever_their_order() -> (
    None
):
    from netproof.verifier.fuzzing.shards import merge

    alphabet = ("(", ")")
    none = Unknown(
        "fuzz (hypothesis, exact)",
        "no counterexample found in 5 examples (seed 1, max length 8; uniform words); this is not a proof",
    )
    long = Refuted("fuzz (hypothesis, exact)", "long", ("(", ")", "(", ")"), {})
    late = Refuted("fuzz (hypothesis, exact)", "second", (")", "("), {})
    early = Refuted("fuzz (hypothesis, exact)", "first", ("(", ")"), {})
    tie = Refuted("fuzz (hypothesis, exact)", "tie", ("(", ")"), {})
    assert merge([long, none, late, early], alphabet) is early  # shortlex: "()" before ")("
    assert merge([none, late, long, early, tie], alphabet) is early
    assert merge([tie, early], alphabet) is tie  # the lower shard on a tie
    odd = Unknown("fuzz (hypothesis, exact)", "the strategy (x) gave no usable word of length <= 3")
    assert merge([none, odd], alphabet) is odd


def test_shards_that_find_nothing_merge_into_one_no_counterexample_over_all_their_examples() -> (
    None
):
    from netproof.verifier.fuzzing.shards import merge

    c = REGISTRY["dyck"]
    values = c.parse_params({"k": "1", "depth": "1"})
    claim = c.claims(values)[0]
    job = Job(c, values)
    shards = [fuzz(job, claim, examples=6, max_len=8, seed=s, database=None) for s in (11, 12)]
    merged = merge(shards, job.alphabet)
    assert isinstance(merged, Unknown) and merged.method == shards[0].method
    assert merged.reason.startswith(
        "no counterexample found in 12 examples in 2 shards (seed 11, seed 12, max length 8; "
    )
    assert merged.reason.endswith("); this is not a proof")
