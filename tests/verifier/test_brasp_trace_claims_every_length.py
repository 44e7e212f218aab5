"""``no-ties`` and ``operations`` of a compiled B-RASP program for every length, against the
exhaustive check and against single-weight mutants of a compiled network.

``no-ties`` by its :class:`UniqueSelections` form: each tie-ruled head's NearestSelection or
RankedSelection lemma, proved, applied at every position of the transition system over
positions. ``operations`` by its :class:`FollowsAutomaton` form: the transition system watches
each operation's dim against a Moore machine read off the program (the product of the
automata of the programs that output each operation), an inductive invariant and its three
certificate queries.

- every library B-RASP program's ``no-ties`` is proved for every length, its record passes the
  strict reader, and the exhaustive check agrees on every word of the bound;
- the form is declared only where every tie-ruled head has a selection lemma (else it would say
  less than the claim);
- a mutant that makes some head tie on a word of the bound is never proved by the smt method
  (a lemma's strict margin fails, or it is not applied everywhere), and ``--method best`` refutes
  it with a word on which the exact interpreter shows the tie; a mutant proved for every length
  has no tie on any word of the bound nor on random longer words.

``operations``: every past-only library program's is proved for every length and passes the
strict reader; a single-weight mutant whose operation dims differ from the program's on a word of
the bound is never proved, and ``--method best`` refutes it with the shortlex-first such word,
which the exact interpreter reproduces.

The no-ties mutants move one weight of a head's query or key map (what can make a head tie): of the
first attention layer by -1 in the default run, of every layer by -1, 1/2, -1/2 and 1 with
``-m slow``.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.constructions.rasp.claims import _no_ties, _no_ties_form, brasp_claims
from netproof.constructions.rasp.compile_brasp import compile_brasp
from netproof.constructions.rasp.library import BRASP_PROGRAMS
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.campaign import prove
from netproof.verifier.campaign.sources import builtin_registry
from netproof.verifier.claims import (
    Construction,
    FollowsAutomaton,
    Proved,
    Refuted,
    TraceProperty,
    UniqueSelections,
    stated,
)
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.smt.prooflog import verify_record
from netproof.verifier.smt.prove import prove_claim_smt

pytestmark = pytest.mark.z3

BOUND = 5
LONGER = 10


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(lo, hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _no_ties_claim(name: str) -> tuple[Construction, TraceProperty]:
    c = REGISTRY[name]
    claim = next(cl for cl in c.claims({}) if cl.id == "no-ties")
    assert isinstance(claim, TraceProperty)
    return c, claim


@pytest.mark.parametrize("name", ["brasp-no-aa", "brasp-ab-star"])
def test_no_ties_is_proved_for_every_length_and_its_record_passes_the_strict_reader(
    name: str, tmp_path: Path
) -> None:
    run = prove(name, claims=["no-ties"], method="smt", out=tmp_path)
    (r,) = run.results
    assert isinstance(r.verdict, Proved) and r.every_length, r.verdict
    assert r.path is not None
    assert not verify_record(r.path, builtin_registry()).rerun
    c, claim = _no_ties_claim(name)
    assert isinstance(check(Job(c, {}), claim, max_len=BOUND), Proved)


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(BRASP_PROGRAMS))
def test_every_library_programs_no_ties_is_proved_for_every_length(key: str) -> None:
    run = prove(f"brasp-{key.replace('_', '-')}", claims=["no-ties"], method="smt")
    assert run.results[0].every_length, run.results[0].verdict


def test_the_form_is_declared_only_where_every_tie_ruled_head_has_a_selection_lemma() -> None:
    program = BRASP_PROGRAMS["ab_star"]
    net = compile_brasp(program)
    form = _no_ties_form(program, net)
    assert isinstance(form, UniqueSelections)
    assert ("L1", "first_a") in form.heads and ("verdict", "verdict") not in form.heads
    # a network with tie-ruled heads the program's lemmas do not cover (another program's): no form
    other = compile_brasp(BRASP_PROGRAMS["a_then_b"])
    assert _no_ties_form(program, other) is None
    claims = {cl.id: cl for cl in brasp_claims(program, network=other)}
    assert claims["no-ties"].statable is None


def _mutants(deltas: tuple[Fraction, ...], layer: str | None) -> Iterator[tuple[str, Network]]:
    """Single-weight mutants of brasp-a-then-b's attention scores (a query or key weight or
    bias of a head, of the layer named ``layer`` or of every layer, moved by each of
    ``deltas``): the weights that can make a head tie."""
    net = REGISTRY["brasp-a-then-b"].network({})
    for path in weight_sites(net, zeros=True):
        if "query" not in path and "key" not in path:
            continue
        if layer is not None and net.layers[path[1]].name != layer:
            continue
        for delta in deltas:
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            yield f"{'.'.join(map(str, path))} {delta}", mutant


def _check_mutant(label: str, mutant: Network) -> str:
    c, claim = _no_ties_claim("brasp-a-then-b")
    wrapped = dataclasses.replace(c, name="a-then-b-mutant", build=lambda _v: mutant)
    ties = [w for w in _words(mutant.alphabet, 1, BOUND) if _no_ties(w, run_exact(mutant, w))]
    smt = prove_claim_smt(Job(wrapped, {}), claim, BOUND, timeout=60).verdict
    if ties:
        assert not isinstance(smt, Proved), f"{label}: proved, but {ties[0]} has a tie"
        best = prove(wrapped, claims=["no-ties"], method="best", max_n=BOUND).results[0].verdict
        assert isinstance(best, Refuted) and best.word is not None, label
        assert _no_ties(best.word, run_exact(mutant, best.word)) is not None, label
        assert best.word == ties[0], f"{label}: {best.word} is not the shortlex-first {ties[0]}"
        return "refuted"
    if isinstance(smt, Proved):
        rng = random.Random(label)
        for _ in range(LONGER):
            w = tuple(rng.choice(mutant.alphabet) for _ in range(rng.randint(BOUND + 1, 14)))
            assert _no_ties(w, run_exact(mutant, w)) is None, f"{label}: proved, but {w} ties"
        return "proved"
    return "unknown"


@pytest.mark.parametrize(
    ("deltas", "layer"),
    [
        pytest.param((Fraction(-1),), "L1", id="L1 -1"),
        pytest.param(
            (Fraction(-1), Fraction(1, 2), Fraction(-1, 2), Fraction(1)),
            None,
            id="all",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_single_weight_mutants_that_tie_within_the_bound_are_never_proved(
    deltas: tuple[Fraction, ...], layer: str | None
) -> None:
    tally: dict[str, int] = {}
    for label, mutant in _mutants(deltas, layer):
        got = _check_mutant(label, mutant)
        tally[got] = tally.get(got, 0) + 1
    print(f"no-ties mutants of brasp-a-then-b's scores ({deltas}): {tally}")
    if Fraction(-1) in deltas:
        assert tally.get("refuted", 0) >= 1  # the sample does contain mutants that tie


def _operations_claim(name: str) -> tuple[Construction, TraceProperty]:
    c = REGISTRY[name]
    claim = next(cl for cl in c.claims({}) if cl.id == "operations")
    assert isinstance(claim, TraceProperty)
    return c, claim


@pytest.mark.parametrize("name", ["brasp-a-then-b", "brasp-dyck1-depth2"])
def test_operations_are_proved_for_every_length_and_the_record_passes_the_strict_reader(
    name: str, tmp_path: Path
) -> None:
    c, claim = _operations_claim(name)
    assert claim.statable is None  # built only where a route needs it: the correspondence does not
    assert isinstance(stated(claim).statable, FollowsAutomaton)
    run = prove(name, claims=["operations"], method="smt", out=tmp_path)
    (r,) = run.results
    assert isinstance(r.verdict, Proved) and r.every_length, r.verdict
    assert r.path is not None
    assert not verify_record(r.path, builtin_registry()).rerun
    assert isinstance(check(Job(c, {}), claim, max_len=BOUND), Proved)


def test_a_program_that_looks_beyond_the_past_has_no_operations_form() -> None:
    # first_eq_last reads the first symbol with an "all" mask: position t's vector is not a
    # function of the first t symbols
    _c, claim = _operations_claim("brasp-first-eq-last")
    assert stated(claim).statable is None


def _check_operations_mutant(label: str, mutant: Network) -> str:
    c, claim = _operations_claim("brasp-a-then-b")
    wrapped = dataclasses.replace(c, name="a-then-b-mutant", build=lambda _v: mutant)
    wrong = [w for w in _words(mutant.alphabet, 1, BOUND) if claim.holds(w, run_exact(mutant, w))]
    smt = prove_claim_smt(Job(wrapped, {}), claim, BOUND, timeout=60).verdict
    if wrong:
        assert not isinstance(smt, Proved), f"{label}: proved, but {wrong[0]} breaks it"
        best = prove(wrapped, claims=["operations"], method="best", max_n=BOUND).results[0].verdict
        assert isinstance(best, Refuted) and best.word is not None, label
        assert claim.holds(best.word, run_exact(mutant, best.word)) is not None, label
        assert best.word == wrong[0], f"{label}: {best.word} is not the shortlex-first {wrong[0]}"
        return "refuted"
    if isinstance(smt, Proved):
        rng = random.Random(label)
        for _ in range(LONGER):
            w = tuple(rng.choice(mutant.alphabet) for _ in range(rng.randint(BOUND + 1, 14)))
            assert claim.holds(w, run_exact(mutant, w)) is None, (
                f"{label}: proved, but {w} breaks it"
            )
        return "proved"
    return "unknown"


def _operations_mutants(every: int) -> Iterator[tuple[str, Network, bool]]:
    """Single-weight mutants (every ``every``-th weight of brasp-a-then-b, moved by ±1/2), each
    with whether its operation dims differ from the program's on some word of the bound."""
    _c, claim = _operations_claim("brasp-a-then-b")
    net = REGISTRY["brasp-a-then-b"].network({})
    for path in list(weight_sites(net, zeros=True))[::every]:
        for delta in (Fraction(1, 2), Fraction(-1, 2)):
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            breaks = any(
                claim.holds(w, run_exact(mutant, w)) for w in _words(mutant.alphabet, 1, BOUND)
            )
            yield f"{'.'.join(map(str, path))} {delta}", mutant, breaks


@pytest.mark.parametrize(
    ("every", "each"),
    [pytest.param(15, 2, id="sample"), pytest.param(1, None, id="all", marks=pytest.mark.slow)],
)
def test_single_weight_mutants_that_break_operations_within_the_bound_are_never_proved(
    every: int, each: int | None
) -> None:
    """The default run checks the first ``each`` mutants (of every 15th weight) that break the
    claim within the bound and the first ``each`` that do not; ``-m slow`` every mutant."""
    tally: dict[str, int] = {}
    taken = {True: 0, False: 0}
    for label, mutant, breaks in _operations_mutants(every):
        if each is not None and min(taken.values()) >= each:
            break
        if each is not None and taken[breaks] >= each:
            continue
        taken[breaks] += 1
        got = _check_operations_mutant(label, mutant)
        tally[got] = tally.get(got, 0) + 1
    print(f"operations mutants of brasp-a-then-b (every {every}th weight): {tally}")
    assert tally.get("refuted", 0) >= 1  # the sample does contain mutants that break it
