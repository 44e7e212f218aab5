"""Suzgun et al.'s tasks (constructions.marnn_tasks): the oracles against brute-force
definitions, and the samplers' summary statistics against the spec (§3.2) and the PCFG's exact
distributions.

Statistical comparisons use a tolerance of 5 standard errors of the sample mean (a false alarm
about once in 3.5 million runs), with fixed seeds, so they are deterministic."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from netproof.constructions.marnn_tasks import (
    EOS,
    LETTERS,
    dyck_task,
    max_depth,
    palindrome_task,
    pcfg_depth_distribution,
    pcfg_length_distribution,
    reversal_task,
    sample_palindrome,
    sample_pcfg_dyck,
    sample_set,
)
from netproof.verifier.claims.dyck import allowed_next

# --------------------------------------------------------------------------- oracles


def brute_next_table(
    members: set[tuple[str, ...]], end: str
) -> dict[tuple[str, ...], frozenset[str]]:
    """For every prefix of a member: the symbols s such that prefix + s is a prefix of a member,
    and ``end`` if the prefix is a member. A word missing from the table prefixes no member."""
    table: dict[tuple[str, ...], set[str]] = {}
    for w in members:
        for t in range(len(w)):
            table.setdefault(w[:t], set()).add(w[t])
        table.setdefault(w, set()).add(end)
    return {p: frozenset(s) for p, s in table.items()}


@pytest.mark.parametrize("k", [2, 3])
def test_the_dyck_targets_are_the_allowed_brackets_of_the_dyck_ground_truth(k: int) -> None:
    # verifier.claims.dyck.allowed_next (Yao et al.'s ground truth) with a depth bound never reached
    task = dyck_task(k)
    n = 6 if k == 2 else 4
    for m in range(1, n + 1):
        for w in itertools.product(task.inputs, repeat=m):
            want = tuple(frozenset(allowed_next(w[:t], k, n + 1)[0]) for t in range(1, m + 1))
            assert task.next_sets(w) == want, w


@pytest.mark.parametrize("hom", [False, True])
def test_the_palindrome_targets_are_the_symbols_that_keep_a_prefix_of_some_member_then_eos(
    hom: bool,
) -> None:
    task = palindrome_task(hom=hom)
    n = 5
    members = set()
    for m in range(n + 2):  # a prefix of n letters is continued by members with |w| = n + 1
        for w in itertools.product(LETTERS, repeat=m):
            image = {"a": "x", "b": "y", "c": "z"} if hom else {a: a for a in LETTERS}
            members.add((*w, "#", *(image[a] for a in reversed(w))))
    table = brute_next_table(members, EOS)
    for m in range(1, n + 1):
        for w in itertools.product(task.inputs, repeat=m):
            want = tuple(table.get(w[:t], frozenset()) for t in range(1, m + 1))
            assert task.next_sets(w) == want, w
            assert task.contains(w) == (w in members)


def test_the_reversal_transduction_outputs_hashes_then_the_reversed_word() -> None:
    task = reversal_task()
    w = tuple("abc###")
    assert task.next_sets(w) == tuple(frozenset(s) for s in "###cba")
    assert task.contains(w) and not task.contains(tuple("ab###"))
    assert task.next_sets(tuple("a#a")) == (frozenset("#"), frozenset("a"), frozenset())
    assert task.accepts(w, task.next_sets(w)) and not task.accepts(
        w, task.next_sets(tuple("abb###"))
    )


def test_acceptance_read_off_the_target_sets_is_membership() -> None:
    for task in (dyck_task(2), palindrome_task(hom=False), palindrome_task(hom=True)):
        for m in range(1, 6):
            for w in itertools.product(task.inputs, repeat=m):
                assert task.accepts(w, task.next_sets(w)) == task.contains(w), (task.name, w)


# --------------------------------------------------------------------------- PCFG (spec §3.2)


def test_the_pcfg_is_critical_and_its_length_distribution_sums_to_one_over_all_lengths() -> None:
    p, q = 0.5, 0.25
    assert p + 2 * q == 1  # spec §5 S9: a critical branching process
    f = pcfg_length_distribution(2, 400)
    assert f[0] == pytest.approx(2 - math.sqrt(3), abs=1e-15)  # f = 1/4 + f²/4
    # heavy tail (P(> m pairs) ~ 1/√m): 4% of the mass lies beyond 400 pairs, 8% beyond 100
    assert 0.95 < sum(f) < 1 and 0.9 < sum(f[:101]) < 0.93


def test_the_samplers_draw_counts_match_the_specs_for_5000_distinct_d2_training_words() -> None:
    # spec §3.2: 26 406 draws for 5000 distinct words with lengths in [2, 50]
    words, draws = sample_set(
        random.Random(0),
        lambda r: sample_pcfg_dyck(r, 2, max_len=50),
        count=5000,
        min_len=2,
        max_len=50,
    )
    assert len(set(words)) == 5000 and all(
        2 <= len(w) <= 50 and dyck_task(2).contains(w) for w in words
    )
    assert abs(draws - 26_406) < 0.1 * 26_406


@pytest.mark.slow
def test_the_samplers_draw_counts_match_the_specs_for_5000_distinct_d2_test_words() -> None:
    # spec §3.2: 109 976 draws for 5000 distinct words with lengths in [52, 100]
    words, draws = sample_set(
        random.Random(0),
        lambda r: sample_pcfg_dyck(r, 2, max_len=100),
        count=5000,
        min_len=52,
        max_len=100,
    )
    assert all(52 <= len(w) <= 100 for w in words)
    assert abs(draws - 109_976) < 0.1 * 109_976


def _conditional(dist: list[float], lo: int, hi: int) -> list[tuple[int, float]]:
    """(pairs m, P(m | lo <= 2m <= hi))."""
    rows = [(m, dist[m]) for m in range(len(dist)) if lo <= 2 * m <= hi]
    total = sum(p for _m, p in rows)
    return [(m, p / total) for m, p in rows]


def _draws_in_range(n: int, lo: int, hi: int, seed: int) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    out: list[tuple[str, ...]] = []
    while len(out) < n:
        w = sample_pcfg_dyck(rng, 2, max_len=hi)
        if w is not None and lo <= len(w) <= hi:
            out.append(w)
    return out


def test_the_sampled_length_distribution_of_d2_words_in_2_to_50_is_the_pcfgs() -> None:
    cond = _conditional(pcfg_length_distribution(2, 25), 2, 50)
    mean = sum(2 * m * p for m, p in cond)
    sd = math.sqrt(sum((2 * m - mean) ** 2 * p for m, p in cond))
    sample = [len(w) for w in _draws_in_range(4000, 2, 50, seed=1)]
    assert abs(statistics.mean(sample) - mean) < 5 * sd / math.sqrt(len(sample))
    short = sum(p for m, p in cond if m == 1)  # P(|w| = 2 | range): the most likely length
    assert abs(sample.count(2) / len(sample) - short) < 5 * math.sqrt(
        short * (1 - short) / len(sample)
    )


def test_the_sampled_depth_distribution_of_d2_words_in_2_to_50_is_the_pcfgs() -> None:
    depths = range(1, 26)
    cdf = {d: pcfg_depth_distribution(2, 25, d) for d in depths}  # P(m pairs, depth <= d)
    rows = list(range(1, 26))
    total = sum(cdf[25][m] for m in rows)
    p_depth = {
        d: (sum(cdf[d][m] for m in rows) - (sum(cdf[d - 1][m] for m in rows) if d > 1 else 0))
        / total
        for d in depths
    }
    mean = sum(d * p for d, p in p_depth.items())
    sd = math.sqrt(sum((d - mean) ** 2 * p for d, p in p_depth.items()))
    sample = [max_depth(w) for w in _draws_in_range(4000, 2, 50, seed=2)]
    assert abs(statistics.mean(sample) - mean) < 5 * sd / math.sqrt(len(sample))
    assert abs(sample.count(1) / len(sample) - p_depth[1]) < 5 * math.sqrt(
        p_depth[1] * (1 - p_depth[1]) / len(sample)
    )


def test_d6_samples_give_each_of_the_six_bracket_types_its_share_p_over_6() -> None:
    # D6 (15 000 training words in the paper): each pair gets p/6 of the PCFG's mass
    words, _draws = sample_set(
        random.Random(4),
        lambda r: sample_pcfg_dyck(r, 6, max_len=50),
        count=3000,
        min_len=2,
        max_len=50,
    )
    task = dyck_task(6)
    assert all(task.contains(w) for w in words)
    opens = [s for w in words for s in w if s.startswith("(")]
    share = 1 / 6
    for t in range(1, 7):
        freq = opens.count(f"({t}") / len(opens)
        assert abs(freq - share) < 5 * math.sqrt(share * (1 - share) / len(opens)), t
    assert max(max_depth(w) for w in words) >= 5


def test_palindrome_samples_are_members_with_odd_lengths_in_range() -> None:
    rng = random.Random(3)
    for hom in (False, True):
        task = palindrome_task(hom=hom)
        for _ in range(200):
            w = sample_palindrome(rng, hom=hom, min_len=2, max_len=50)
            assert task.contains(w) and len(w) % 2 == 1 and 3 <= len(w) <= 49
    with pytest.raises(ValueError, match=r"no w#w\^R word has its length"):
        sample_palindrome(rng, hom=False, min_len=4, max_len=4)
