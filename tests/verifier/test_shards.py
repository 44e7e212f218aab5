"""A claim's bound in shards (verifier/exhaustive/shards.py): the shards cover every word once,
and the verdict merged from the shards' parts is the verdict of the bound checked whole (the
same count, the same shortest shortlex-first counterexample, the same message), for every
evaluation path a word-by-word claim can take, proved and refuted."""

from __future__ import annotations

import dataclasses
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.claims import Claim, Language, Point, Proved, Refuted, Unknown
from netproof.verifier.claims.dyck import is_dyck
from netproof.verifier.exhaustive import (
    Job,
    Shard,
    check,
    check_part,
    merge,
    prefix_length,
    shardable,
    split,
    words,
)


def claim_of(job: Job, claim_id: str) -> Claim:
    return next(c for c in job.construction.claims(job.values) if c.id == claim_id)


def job_of(name: str, **params: str) -> Job:
    c = REGISTRY[name]
    return Job(c, c.parse_params(params))


def merged(job: Job, claim: Claim, bound: int, k: int) -> Any:
    shards = split(job.alphabet, claim.min_len, bound, k)
    return merge(claim, job.alphabet, bound, [check_part(job, claim, bound, s) for s in shards])


@pytest.mark.parametrize(
    ("alphabet", "min_len", "max_len", "k"),
    [
        (("a", "b"), 0, 4, 1),
        (("a", "b"), 0, 4, 2),
        (("a", "b", "c"), 2, 4, 3),
        (("a", "b"), 3, 5, 2),
        (("x", "y"), 1, 3, 9),
    ],
)
def test_the_shards_cover_every_word_of_the_bound_exactly_once(
    alphabet: tuple[str, ...], min_len: int, max_len: int, k: int
) -> None:
    shards = split(alphabet, min_len, max_len, k)
    got = Counter(w for s in shards for w in s.words(alphabet))
    assert got == Counter(words(alphabet, min_len, max_len))
    assert sum(s.count(alphabet) for s in shards) == sum(got.values())
    for s in shards:  # each shard in shortlex order, and its ranks per length are its words
        ws = list(s.words(alphabet))
        assert ws == sorted(ws, key=lambda w: (len(w), [alphabet.index(x) for x in w]))
        for m in s.lengths():
            start, stop = s.block(alphabet, m)
            every = list(words(alphabet, m, m))
            assert every[start:stop] == list(s.words_of_length(alphabet, m))


def test_the_prefix_length_gives_at_least_the_pieces_asked_for_and_never_splits_one_symbol() -> (
    None
):
    assert prefix_length(("a", "b"), 0, 12, 8) == 3
    assert prefix_length(("(", ")", "[", "]"), 0, 7, 8) == 2
    assert prefix_length(("a",), 0, 12, 8) == 0
    assert prefix_length(("a", "b"), 0, 2, 1000) == 2  # no longer than the bound
    assert split(("a", "b"), 0, 3, 0) == (Shard((), 0, 3),)


def wrong_dyck(w: tuple[str, ...]) -> bool:
    """Dyck(2, 2), but wrong on the words of length 6 whose third symbol is ']' (several shards
    hold such words)."""
    return is_dyck(w, 2, 2) != (len(w) == 6 and w[2] == "]")


def mutants() -> list[tuple[str, Job, Claim, int]]:
    dyck = job_of("dyck")
    y2 = claim_of(dyck, "Y2")
    lang = y2.language  # type: ignore[attr-defined]
    wrong = Language(
        name="wrong Dyck",
        alphabet=lang.alphabet,
        contains=wrong_dyck,
        description="wrong on purpose",
    )
    parity = job_of("parity")
    count = claim_of(parity, "C3-count")
    expected = count.expected  # type: ignore[attr-defined]

    def off_on_long_words(p: Point) -> Any:
        right = expected(p)
        return right + Fraction(1, 7) if len(p.word) == 6 and p.word[1] == "1" else right

    y4 = claim_of(dyck, "Y4")
    first_ln = job_of("parity-ln")
    return [
        ("Recognizes, batched integers, refuted", dyck, dataclasses.replace(y2, language=wrong), 6),  # type: ignore[type-var]
        ("Recognizes, batched integers, proved", dyck, y2, 6),
        ("Recognizes, per word (interval), proved", first_ln, claim_of(first_ln, "C7"), 6),
        (
            "ValueIs, per word, refuted",
            parity,
            dataclasses.replace(count, expected=off_on_long_words),
            7,
        ),  # type: ignore[type-var]
        ("ValueIs, per word, proved", parity, count, 7),
        ("TraceProperty, batched with only", dyck, y4, 5),
        ("TraceProperty, per word with only", dyck, dataclasses.replace(y4, holds_batch=None), 4),  # type: ignore[type-var]
        ("TraceProperty, batched", dyck, claim_of(dyck, "Y3"), 5),
        (
            "Bound, per word (interval)",
            job_of("parity-ce"),
            claim_of(job_of("parity-ce"), "C9-bound"),
            5,
        ),
    ]


@pytest.mark.parametrize(
    ("what", "job", "claim", "bound"), mutants(), ids=[m[0] for m in mutants()]
)
def test_a_bound_checked_in_shards_gives_the_verdict_of_the_bound_checked_whole(
    what: str, job: Job, claim: Claim, bound: int
) -> None:
    assert shardable(claim)
    whole = check(job, claim, max_len=bound)
    assert isinstance(whole, Refuted) == ("refuted" in what), whole
    assert not isinstance(whole, Unknown), whole
    for k in (1, 2, 3):
        assert merged(job, claim, bound, k) == whole


def test_the_merged_counterexample_is_the_shortlex_first_although_later_shards_fail_too() -> None:
    dyck = job_of("dyck")
    y2 = claim_of(dyck, "Y2")
    lang = y2.language  # type: ignore[attr-defined]
    claim = dataclasses.replace(
        y2,
        language=Language(
            name="wrong Dyck",
            alphabet=lang.alphabet,
            contains=wrong_dyck,  # type: ignore[type-var]
            description="wrong on purpose",
        ),
    )
    shards = split(dyck.alphabet, claim.min_len, 6, 2)
    parts = [check_part(dyck, claim, 6, s) for s in shards]
    failing = [p.at for p in parts if p.stop is not None]
    assert len(failing) > 1  # several shards fail on their own
    verdict = merge(claim, dyck.alphabet, 6, parts)
    assert isinstance(verdict, Refuted)
    first = next(w for w in words(dyck.alphabet, 0, 6) if wrong_dyck(w) != is_dyck(w, 2, 2))
    assert verdict.word == first
    assert (
        merge(claim, dyck.alphabet, 6, list(reversed(parts))) == verdict
    )  # the order parts come back in does not matter


def test_a_proof_merged_from_shards_counts_every_word_once() -> None:
    parity = job_of("parity")
    claim = claim_of(parity, "C3-count")
    verdict = merged(parity, claim, 7, 2)
    assert verdict == Proved(
        "exhaustive (exact)", 2**8 - 1, "every word with 0 <= |w| <= 7"
    )  # 1 + 2 + ... + 2^7


def test_shards_found_by_different_evaluation_paths_are_refused() -> None:
    parity = job_of("parity")
    claim = claim_of(parity, "C3-count")
    a, b = (check_part(parity, claim, 3, s) for s in split(parity.alphabet, 1, 3, 1)[:2])
    with pytest.raises(ValueError, match="checked by different paths"):
        merge(claim, parity.alphabet, 3, [a, dataclasses.replace(b, method="exhaustive (sympy)")])


def test_a_claim_that_is_not_checked_word_by_word_has_no_shards() -> None:
    parity = job_of("parity")
    claim = claim_of(parity, "C2")  # a BlockIdentity: one solver query
    assert not shardable(claim)
    with pytest.raises(TypeError, match="has no shards"):
        check_part(parity, claim, 3, Shard((), 0, 3))
