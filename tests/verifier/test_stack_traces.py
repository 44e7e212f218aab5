"""Stack automata and trace properties for every length (issue 20).

A language given as a :class:`StackAutomaton` (Dyck(k, D) where its DFA would be too large to
write out) is encoded as its stack in the one-length, range and every-length queries; trace
properties with a statable form (:class:`SelectsNearest`, :class:`PairHeights`,
:class:`TieRuleFree`) are proved for every length over the same transition system. Each is
checked against plain enumeration with the exact interpreter: faithfulness on the original
networks, and single-weight mutants (±1/2) of Dyck(1, 2) whose states change on short words:
a mutant that breaks a claim within the bound is refuted with the shortlex-first word that
breaks it (reproduced exactly), never proved; a proof for every length holds on longer words.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import (
    Claim,
    Construction,
    PairHeights,
    Proved,
    Recognizes,
    Refuted,
    StackAutomaton,
    TraceProperty,
    Unknown,
)
from netproof.verifier.claims.dyck import DYCK, dyck_automaton, dyck_stack, is_dyck
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.exhaustive.job import with_variants
from netproof.verifier.smt.compositional import prove_recognizes, prove_trace
from netproof.verifier.smt.monolithic import recognizes_smt
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

BOUND = 6


def _words(alphabet: tuple[str, ...], hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _stack_only(claim: Recognizes) -> Recognizes:
    """The claim over the same language given by its stack only (no DFA)."""
    return dataclasses.replace(claim, language=dataclasses.replace(claim.language, automaton=None))


def _dyck(
    k: int, depth: int, variant: str = "fixed"
) -> tuple[Construction, dict[str, Any], Network, dict[str, Claim]]:
    c = REGISTRY["dyck"]
    values = c.parse_params({"k": str(k), "depth": str(depth), "variant": variant})
    return c, values, c.network(values), {cl.id: cl for cl in c.claims(values)}


# --------------------------------------------------------------------------- the stack automaton


@pytest.mark.parametrize(("k", "depth"), [(1, 1), (1, 3), (2, 2), (3, 2)])
def test_the_stack_automaton_of_dyck_accepts_exactly_the_words_dyck_and_its_dfa_accept(
    k: int, depth: int
) -> None:
    lang = DYCK(k, depth)
    stack, dfa = dyck_stack(k, depth), dyck_automaton(k, depth)
    index = {a: i for i, a in enumerate(lang.alphabet)}
    for w in _words(lang.alphabet, 6 if k < 3 else 5):
        ids = [index[a] for a in w]
        assert stack.accepts(ids) == is_dyck(w, k, depth) == dfa.accepts(ids), w


def test_a_dyck_language_too_large_for_a_dfa_gives_its_stack_only() -> None:
    lang = DYCK(8, 10)
    assert lang.automaton is None and lang.stack == dyck_stack(8, 10)
    assert DYCK(2, 3).automaton is not None


def test_a_stack_automaton_refuses_a_symbol_that_neither_pushes_nor_pops() -> None:
    with pytest.raises(ValueError, match="symbol 1 must either push or pop"):
        StackAutomaton(depth=1, types=1, push=(0, None), pop=(None, None))


def test_the_one_length_query_over_a_stack_finds_the_same_counterexample_as_over_the_dfa() -> None:
    c, values, _net, claims = _dyck(1, 1, "paper")
    claim = claims["Y2-paper"]
    job = Job(c, values)
    with_dfa = recognizes_smt(job.network, claim.language, 0, 4, timeout=60).verdict
    with_stack = recognizes_smt(job.network, _stack_only(claim).language, 0, 4, timeout=60).verdict
    assert isinstance(with_dfa, Refuted) and isinstance(with_stack, Refuted)
    assert with_stack.word == with_dfa.word == ("(", ")")


def test_dyck_given_by_its_stack_is_proved_for_every_length_and_its_paper_variant_refuted_with_the_shortest_word() -> (
    None
):
    c, values, net, claims = _dyck(2, 2)
    progress = prove_recognizes(
        net, _stack_only(claims["Y2"]), c.lemmas(values), BOUND, timeout=120
    )
    assert isinstance(progress.verdict, Proved) and progress.every_length
    c, values, net, claims = _dyck(1, 2, "paper")
    progress = prove_recognizes(
        net, _stack_only(claims["Y2-paper"]), c.lemmas(values), BOUND, timeout=120
    )
    assert isinstance(progress.verdict, Refuted) and progress.verdict.word == ("(", ")")


# --------------------------------------------------------------------------- trace properties


def _trace_truth(net: Network, claim: TraceProperty, hi: int) -> tuple[str, ...] | None:
    """The shortlex-first word up to ``hi`` (among those ``claim.only`` admits) whose exact trace
    breaks the property, or None."""
    made: dict[int, Any] = {}  # Y5 compares the runs of its variant networks (tie rules)
    for w in _words(net.alphabet, hi):
        if claim.only is not None and not claim.only(w):
            continue
        if claim.holds(w, with_variants(claim, w, run_exact(net, w), made)) is not None:
            return w
    return None


def test_the_trace_properties_of_the_dyck_recognizer_are_proved_for_every_length_and_hold_on_every_short_word() -> (
    None
):
    c, values, net, claims = _dyck(2, 2)
    for cid in ("Y3", "Y4", "Y5"):
        claim = claims[cid]
        assert isinstance(claim, TraceProperty) and claim.statable is not None
        out = prove_trace(net, claim, c.lemmas(values), BOUND, timeout=120)
        assert isinstance(out.verdict, Proved) and "every longer one" in out.verdict.detail, (
            cid,
            out.verdict,
        )
        assert _trace_truth(net, claim, 3) is None


@pytest.mark.parametrize(
    "change",
    [
        {"after": (("logic1", 0), ("logic2", 2))},  # a threshold one too low
        {"after": (("logic1", 1), ("logic2", 1))},  # one too high for layer 2's pairs
        {"special": 0},  # γ and ω start matched
        {"zero": ("o",)},  # o is 1 at every open bracket
    ],
)
def test_a_pair_height_form_that_the_network_does_not_meet_is_never_proved(
    change: dict[str, Any],
) -> None:
    c, values, net, claims = _dyck(2, 2)
    y4 = claims["Y4"]
    assert isinstance(y4, TraceProperty) and isinstance(y4.statable, PairHeights)
    wrong = dataclasses.replace(y4, statable=dataclasses.replace(y4.statable, **change))
    out = prove_trace(net, wrong, c.lemmas(values), BOUND, timeout=120)
    assert isinstance(out.verdict, Unknown) and out.violated, out.verdict


def test_a_trace_property_without_a_statable_form_is_unknown_and_says_so() -> None:
    c, values, net, claims = _dyck(1, 1)
    plain = dataclasses.replace(claims["Y3"], statable=None)
    out = prove_trace(net, plain, c.lemmas(values), BOUND)
    assert isinstance(out.verdict, Unknown) and "TraceProperty.statable" in out.verdict.reason


# --------------------------------------------------------------------------- mutants


def _mutants(net: Network, every: int) -> Iterator[tuple[str, Network]]:
    """Single-weight mutants (±1/2 of every ``every``-th weight) whose states differ from the
    original's on some word of length <= 4."""
    shorts = list(_words(net.alphabet, 4))
    original = [run_exact(net, w).states for w in shorts]
    for path in list(weight_sites(net))[::every]:
        for delta in (Fraction(1, 2), Fraction(-1, 2)):
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            if [run_exact(mutant, w).states for w in shorts] != original:
                yield f"{'.'.join(map(str, path))} {'+' if delta > 0 else ''}{delta}", mutant


def _check(
    label: str, mutant: Network, c: Construction, values: dict[str, Any], claim: Claim
) -> str:
    """The smt verdict on ``claim`` of ``mutant`` against enumeration up to BOUND; its kind."""
    lemmas = c.lemmas(values)
    wrapped = Construction(
        name="dyck-mutant",
        paper_id="mutant",
        title="mutant",
        reference="mutant",
        params=(),
        build=lambda _v: mutant,
        claims=lambda _v: (claim,),
        lemmas=lambda _v: lemmas,
    )
    v = prove_claim(Job(wrapped, {}), claim, method="smt", max_len=BOUND, timeout=120).verdict
    if isinstance(claim, Recognizes):
        first = next(
            (
                w
                for w in _words(mutant.alphabet, BOUND)
                if run_exact(mutant, w).accepted != claim.language.contains(w)
            ),
            None,
        )
    else:
        assert isinstance(claim, TraceProperty)
        first = _trace_truth(mutant, claim, BOUND)
    if first is not None:
        assert isinstance(v, Refuted), (
            f"{label} {claim.id}: breaks on {first}, but the verdict is {v}"
        )
        assert v.word == first, (
            f"{label} {claim.id}: refuted by {v.word}, not the shortlex-first word {first}"
        )
    if isinstance(v, Proved) and "every longer one" in v.detail:
        rng = random.Random(label)
        for _ in range(10):
            w = tuple(rng.choice(mutant.alphabet) for _ in range(rng.randint(BOUND + 1, BOUND + 8)))
            if isinstance(claim, Recognizes):
                assert run_exact(mutant, w).accepted == claim.language.contains(w), (
                    f"{label} {claim.id}: proved, wrong on {w}"
                )
            elif claim.only is None or claim.only(w):
                assert claim.holds(w, run_exact(mutant, w)) is None, (
                    f"{label} {claim.id}: proved, broken on {w}"
                )
    return type(v).__name__


def _mutation_run(every: int, limit: int | None) -> dict[str, dict[str, int]]:
    c, values, net, claims = _dyck(1, 2)
    chosen = [_stack_only(claims["Y2"]), claims["Y3"], claims["Y4"], claims["Y5"]]  # type: ignore[arg-type]
    counts: dict[str, dict[str, int]] = {
        cl.id: {"Proved": 0, "Refuted": 0, "Unknown": 0} for cl in chosen
    }
    for i, (label, mutant) in enumerate(_mutants(net, every)):
        if limit is not None and i >= limit:
            break
        for claim in chosen:
            counts[claim.id][_check(label, mutant, c, values, claim)] += 1
    return counts


def test_state_changing_mutants_of_dyck_1_2_are_refuted_with_their_first_word_or_proved_only_where_they_hold() -> (
    None
):
    counts = _mutation_run(every=37, limit=2)
    assert sum(counts["Y2"].values()) == 2
    assert sum(n["Refuted"] for n in counts.values()) > 0, counts


@pytest.mark.slow
def test_every_seventh_weight_of_dyck_1_2_mutated_is_refuted_or_proved_soundly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = _mutation_run(every=7, limit=None)
    with capsys.disabled():
        print(f"\nDyck(1,2) mutants, every 7th weight: {counts}")
