"""Next-symbol sets for every length from the positions' stack depths
(:mod:`netproof.verifier.smt.compositional.depth_features`, the ``AllowedNext`` form of a trace
property): against the exhaustive checks on short prefixes (faithfulness) and against
single-weight mutants of the small generators (soundness: a mutant that changes a next-symbol
set within the bound is refuted, never proved, with the shortlex-first prefix the exhaustive
check finds; a mutant proved for every length is right on longer prefixes too).
"""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from typing import Any

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.symbolic import Network, interval, sympy_interp
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.evaluation import UndecidedSignError
from netproof.verifier.claims import (
    AllowedNext,
    Construction,
    Proved,
    Refuted,
    TraceProperty,
    Unknown,
    Verdict,
)
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.compositional.depth_features import prove_allowed_next
from netproof.verifier.smt.prove import prove_claim

Path = tuple[str | int, ...]
PAIRS = [("(", ")"), ("[", "]")]  # the generator's brackets for k <= 2
DELTAS = (Fraction(1, 2), Fraction(-1, 2))


def _setup(**params: str) -> tuple[Job, TraceProperty, Network]:
    c = REGISTRY["dyck-gen"]
    values = c.parse_params(params)
    claim = next(
        x for x in c.claims(values) if x.id.startswith("Y10") and not x.id.startswith("Y10-def")
    )
    assert isinstance(claim, TraceProperty)
    return Job(c, values), claim, c.network(values)


def _exact_run(net: Network, word: tuple[str, ...]) -> Any:
    """The interval trace, or the sympy one where an interval holds 0 (as the exhaustive check does)."""
    try:
        return interval.run(net, word)
    except UndecidedSignError:
        return sympy_interp.run(net, word)


def _holds_on(net: Network, claim: TraceProperty, words: list[tuple[str, ...]]) -> str | None:
    for w in words:
        failure = claim.holds(w, _exact_run(net, w))
        if failure is not None:
            return f"{''.join(w) or 'ε'}: {failure}"
    return None


def _long_prefixes(k: int, depth: int, count: int, length: int, seed: str) -> list[tuple[str, ...]]:
    """Random prefixes of Dyck(k, depth) words, ``length`` brackets each."""
    rng = random.Random(seed)
    pairs = PAIRS[:k]
    out = []
    for _ in range(count):
        word: list[str] = []
        stack: list[int] = []
        for _ in range(length):
            if stack and (len(stack) == depth or rng.random() < 0.5):
                word.append(pairs[stack.pop()][1])
            else:
                t = rng.randrange(k)
                stack.append(t)
                word.append(pairs[t][0])
        out.append(tuple(word))
    return out


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (1, 3), (2, 2), (2, 3)])
def test_the_generator_is_proved_for_every_length_where_the_exhaustive_check_agrees(
    k: int, depth: int
) -> None:
    job, claim, net = _setup(k=str(k), depth=str(depth))
    smt = prove_claim(job, claim, method="smt", max_len=6).verdict
    assert isinstance(smt, Proved), smt
    assert "every longer one" in smt.detail
    exhaustive = prove_claim(job, claim, method="exhaustive", max_len=6).verdict
    assert isinstance(exhaustive, Proved), exhaustive
    # and on prefixes far beyond the bound
    assert _holds_on(net, claim, _long_prefixes(k, depth, 3, 40, f"{k}{depth}")) is None


def test_the_papers_printed_tests_are_refuted_with_the_empty_prefix() -> None:
    job, claim, _net = _setup(k="2", depth="3", variant="paper")
    v = prove_claim(job, claim, method="smt", max_len=6).verdict
    assert isinstance(v, Refuted), v
    assert v.word == ()


def _full_words(k: int, depth: int, count: int, length: int, seed: str) -> list[tuple[str, ...]]:
    """Random inputs uω of the length-aware reading: u a word of Dyck(k, depth) with ``length``
    brackets (even), ω last."""
    close = dict(PAIRS[:k])
    out = []
    for w in _long_prefixes(k, depth, count, length // 2, seed):
        opened: list[str] = []
        for a in w:
            if a in close:
                opened.append(a)
            else:
                opened.pop()
        closes = [close[a] for a in reversed(opened)]
        pad = length - len(w) - len(closes)
        out.append((*w, *closes, *(("(", ")") * (pad // 2)), "ω"))
    return out


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (1, 3), (2, 2), (2, 3)])
def test_the_length_aware_reading_is_proved_for_every_length_where_the_exhaustive_check_agrees(
    k: int, depth: int
) -> None:
    job, claim, net = _setup(k=str(k), depth=str(depth), reading="G2")
    smt = prove_claim(job, claim, method="smt", max_len=6).verdict
    assert isinstance(smt, Proved), smt
    assert "every longer one" in smt.detail
    assert [n.name for n in prove_allowed_next(net, claim, 6).tree.children][:3] == [
        "uniform depth.count",
        "scale-free angle",
        "length features angle",
    ]
    exhaustive = prove_claim(job, claim, method="exhaustive", max_len=6).verdict
    assert isinstance(exhaustive, Proved), exhaustive
    assert _holds_on(net, claim, _full_words(k, depth, 3, 40, f"g2{k}{depth}")) is None


def test_the_length_aware_papers_printed_tests_are_refuted_with_gamma_omega() -> None:
    job, claim, _net = _setup(k="2", depth="3", reading="G2", variant="paper")
    v = prove_claim(job, claim, method="smt", max_len=6).verdict
    assert isinstance(v, Refuted), v
    assert v.word == ("ω",)


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"lambda2": "1"}, "soft or scaled with the length"),
        ({"pos_norm": "100"}, "positional feature"),
    ],
)
def test_networks_outside_the_lemmas_shapes_are_unsupported_never_proved(
    params: dict[str, str], reason: str
) -> None:
    _job, claim, net = _setup(k="1", depth="2", **params)
    out = prove_allowed_next(net, claim, 6)
    assert isinstance(out.verdict, Unknown)
    assert out.verdict.reason.startswith("unsupported") and reason in out.verdict.reason


def test_the_lemma_tree_names_each_lemma_and_the_selection_agrees_with_the_traces() -> None:
    job, claim, net = _setup(k="2", depth="3")
    out = prove_allowed_next(net, claim, 6)
    assert isinstance(out.verdict, Proved)
    assert [n.name for n in out.tree.children] == [
        "uniform depth.count",
        "scale-free angle",
        "same-depth top.match",
        "readout by depth features",
        "side conditions",
    ]
    # the lemma says: the latest push at the query's height (γ at height 0); Y9 checks the same exactly
    y9 = next(c for c in job.construction.claims(job.values) if c.id == "Y9")
    assert isinstance(prove_claim(job, y9, method="exhaustive", max_len=6).verdict, Proved)


def test_a_statable_form_over_a_language_without_a_stack_is_unsupported() -> None:
    _job, claim, net = _setup(k="1", depth="1")
    odd = dataclasses.replace(claim, statable=AllowedNext(language=PARITY))
    out = prove_allowed_next(net, odd, 6)
    assert isinstance(out.verdict, Unknown) and "StackAutomaton" in out.verdict.reason


# --------------------------------------------------------------------------- mutants


BOUND = 6


def _check_mutants(k: int, depth: int, every: int, reading: str = "G1") -> dict[str, int]:
    """Every ``every``-th weight of the generator of Dyck(k, depth) (``reading``) moved by
    ±1/2; fails on an unsound answer; returns the tally."""
    _job, claim, net = _setup(k=str(k), depth=str(depth), reading=reading)
    tally = {"mutants": 0, "changed": 0, "refuted": 0, "proved": 0, "unknown": 0}
    if reading == "G1":
        longer = [*_long_prefixes(k, depth, 3, 14, "mutants"), tuple("(" * depth + ")(" * 6)]
    else:
        longer = [
            *_full_words(k, depth, 3, 14, "mutants"),
            (*"(" * depth, *")" * depth, *"()" * 5, "ω"),
        ]
    for path in list(weight_sites(net))[::every]:
        for delta in DELTAS:
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            wrapped = Construction(
                name="dyck-gen-mutant",
                paper_id="mutant",
                title="mutant",
                reference="mutant",
                params=(),
                build=lambda _v, m=mutant: m,
                claims=lambda _v: (claim,),
            )
            mjob = Job(wrapped, {})
            truth: Verdict = prove_claim(mjob, claim, method="exhaustive", max_len=BOUND).verdict
            if isinstance(truth, Unknown):
                continue  # the exact check itself cannot decide this mutant
            tally["mutants"] += 1
            v = prove_claim(mjob, claim, method="smt", max_len=BOUND, timeout=60).verdict
            label = f"{'.'.join(map(str, path))} {'+' if delta > 0 else ''}{delta}"
            if isinstance(truth, Refuted):
                tally["changed"] += 1
                assert isinstance(v, Refuted), (
                    f"{label}: the mutant breaks Y10 on {truth.word}, but the smt method says {v}"
                )
                assert v.word == truth.word, (
                    f"{label}: {v.word} is not the shortlex-first {truth.word}"
                )
                assert claim.holds(v.word, _exact_run(mutant, v.word)) is not None
                tally["refuted"] += 1
            elif isinstance(v, Proved):
                tally["proved"] += 1
                if "every longer one" in v.detail:
                    assert _holds_on(mutant, claim, longer) is None, (
                        f"{label}: proved for every length, but wrong on a longer prefix"
                    )
            else:
                assert not isinstance(v, Refuted), (
                    f"{label}: refuted {v}, but every prefix up to {BOUND} is right"
                )
                tally["unknown"] += 1
    return tally


@pytest.mark.z3
@pytest.mark.parametrize("reading", ["G1", "G2"])
def test_single_weight_mutants_that_change_a_next_set_are_refuted_never_proved(
    reading: str,
) -> None:
    tally = _check_mutants(1, 2, every=7, reading=reading)
    assert tally["changed"] >= 3, tally
    assert tally["refuted"] == tally["changed"]


@pytest.mark.slow
@pytest.mark.z3
@pytest.mark.parametrize(
    ("k", "depth", "reading"), [(1, 2, "G1"), (2, 2, "G1"), (1, 2, "G2"), (2, 2, "G2")]
)
def test_every_single_weight_mutant_of_the_small_generators_is_answered_soundly(
    k: int, depth: int, reading: str
) -> None:
    tally = _check_mutants(k, depth, every=1, reading=reading)
    print(tally)
    assert tally["refuted"] == tally["changed"] >= 10


# --------------------------------------------------------------------------- proof logs


@pytest.mark.z3
def test_the_proof_log_is_rebuilt_by_its_freshness_check_and_a_changed_lemma_is_rejected(
    tmp_path: Any,
) -> None:
    import json

    from netproof.verifier.smt.prooflog import ProofLogError, check_fresh, write_atomic, write_log

    job, claim, _net = _setup(k="2", depth="3")
    outcome = prove_claim(job, claim, method="smt", max_len=6)
    assert isinstance(outcome.verdict, Proved)
    path = write_log(str(tmp_path), job.construction, job.values, claim, 6, outcome)
    log = check_fresh(path, REGISTRY)
    queries = [q["name"] for ch in log.record["lemmas"]["children"] for q in ch["queries"]]
    assert queries == ["same-depth top.match"]
    with open(path, encoding="utf-8") as fh:
        rec = json.load(fh)
    rec["lemmas"]["children"][2]["statement"] = rec["lemmas"]["children"][2]["statement"].replace(
        "decided exactly", "decided"
    )
    write_atomic(path, json.dumps(rec, sort_keys=True))
    with pytest.raises(ProofLogError, match=r"same-depth top\.match"):
        check_fresh(path, REGISTRY)
