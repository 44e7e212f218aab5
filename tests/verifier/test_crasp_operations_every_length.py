"""``operations`` of a compiled C-RASP program for every length, by its :class:`FollowsCounts`
form (:func:`netproof.constructions.rasp.crasp_lemmas.operations_form`): the counting lemmas
proved, the network with them in place read as a counter system over positions in product with
the program's counter automaton, every count and comparison dim watched after the last sublayer
at every word position; an inductive invariant and its three certificate queries.

- the form says what the exhaustive check says: its counter automaton, run on every word up to
  length 6, gives every count and every comparison the program's own interpreter gives, for
  every library program and the newcomer's "Dyck-1 of depth <= 3" (and up to length 5 for
  random programs without conditionals); on random programs (``-m slow``), the route's verdict
  agrees with the exhaustive check of the bound (proved only where it holds; never a violation
  on a compiled program, which is right);
- a proof for every length passes the strict reader (the certificate rebuilt around the recorded
  invariant) and the exhaustive check agrees on every word of the bound (every library program
  with ``-m slow``);
- a program with a conditional has no form, and ``--method best`` says why;
- a single-weight mutant of crasp-majority whose operation dims differ from the program's on a
  word of the bound (or are undefined there) is never proved, and ``--method best`` refutes it
  with the shortlex-first such word, which the exact interpreter reproduces; a mutant proved for
  every length meets the claim on random longer words. The default run moves the first symbol's
  row of the embedding and the counting heads' value weights by -1 (what the counter system itself must catch:
  integer counts that differ); ``-m slow`` every weight by ±1/2 and ±1.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.constructions.rasp.claims import crasp_claims
from netproof.constructions.rasp.compile_crasp import compile_crasp, operation_dims
from netproof.constructions.rasp.crasp_lemmas import crasp_lemmas, operations_form
from netproof.constructions.rasp.library import CRASP_PROGRAMS
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.evaluation import UndefinedValueError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.campaign import prove
from netproof.verifier.campaign.routes import every_length_route
from netproof.verifier.campaign.sources import builtin_registry
from netproof.verifier.claims import (
    Construction,
    FollowsCounts,
    Proved,
    Refuted,
    TraceProperty,
)
from netproof.verifier.claims.counting import holds as guard_holds
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.fuzzing.rasp_strategies import crasp_programs
from netproof.verifier.smt.compositional.traces import prove_trace
from netproof.verifier.smt.prooflog import verify_record
from netproof.verifier.smt.prove import prove_claim_smt

pytestmark = pytest.mark.z3

BOUND = 5
LONGER = 8

_o, _c = C.token("a"), C.token("b")
NEWCOMER = C.Program(
    "dyck1_depth3",
    ("a", "b"),
    output=C.count(C.count(_c) > C.count(_o)).eq(0)
    & C.count(C.count(_o) > C.count(_c) + 3).eq(0)
    & C.count(_o).eq(C.count(_c)),
    empty=True,
)
PROGRAMS = {**CRASP_PROGRAMS, "newcomer": NEWCOMER}


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(lo, hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _follow(form: FollowsCounts, word: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The counters of ``form``'s automaton after each prefix of ``word`` (plain Python: the
    first rule whose state, symbol and guard fit; a missing rule fails the test)."""
    a = form.automaton
    q, c = a.start, (0,) * len(a.counters)
    out = []
    for s in word:
        rule = next(
            (r for r in a.rules if r.state == q and r.symbol == s and guard_holds(r.guard, c)),
            None,
        )
        assert rule is not None, f"no rule after {word} in state {q} with counters {c}"
        q, c = rule.target, tuple(x + d for x, d in zip(c, rule.add, strict=True))
        out.append(c)
    return out


def _same_as_interpreter(program: C.Program, form: FollowsCounts, hi: int, key: str) -> None:
    by_dim = {d: op for op, d in operation_dims(program).items()}
    assert sorted(form.counts) + sorted(d for d, _g in form.comparisons) == sorted(
        d for d, op in by_dim.items() if isinstance(op, C.Count)
    ) + sorted(d for d, op in by_dim.items() if isinstance(op, C.Less))
    counters = form.automaton.counters
    for w in _words(program.alphabet, 1, hi):
        after = _follow(form, tuple(program.alphabet.index(s) for s in w))
        for d in form.counts:
            want = C.evaluate(by_dim[d], w)
            assert [c[counters.index(d)] for c in after] == list(want), (key, w, d)
        for d, guard in form.comparisons:
            want = C.evaluate(by_dim[d], w)
            assert [guard_holds(guard, c) for c in after] == list(want), (key, w, d)


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_the_form_gives_every_count_and_comparison_the_interpreter_gives(key: str) -> None:
    program = PROGRAMS[key]
    form = operations_form(program)
    assert form is not None
    _same_as_interpreter(program, form, 6, key)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(crasp_programs(max_ops=7))
def test_the_form_of_a_random_program_gives_what_the_interpreter_gives(
    program: C.Program,
) -> None:
    form = operations_form(program)
    has_where = any(isinstance(op, C.Where) for op in operation_dims(program))
    assert (form is None) == has_where, C.show(program)
    if form is not None:
        _same_as_interpreter(program, form, 5, C.show(program))


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(crasp_programs(max_ops=6))
def test_the_route_agrees_with_the_exhaustive_check_on_random_programs(
    program: C.Program,
) -> None:
    claim = next(cl for cl in crasp_claims(program, max_len=4) if cl.id == "operations")
    assert isinstance(claim, TraceProperty)
    net = compile_crasp(program)
    wrong = [w for w in _words(program.alphabet, 1, 4) if _breaks(claim, net, w)]
    out = prove_trace(net, claim, crasp_lemmas(program, net), 4, timeout=30)
    assert not wrong, (C.show(program), wrong[0])  # the compiler is right
    assert not out.violated, (C.show(program), out.verdict)
    if claim.statable is None:
        assert not isinstance(out.verdict, Proved)


def test_a_program_with_a_conditional_has_no_form_and_best_says_why() -> None:
    x, y = C.token("a"), C.token("b")
    program = C.Program("cond", ("a", "b"), output=C.where(x, C.count(x), C.count(y)) > C.count(y))
    assert operations_form(program) is None
    claim = next(cl for cl in crasp_claims(program) if cl.id == "operations")
    assert isinstance(claim, TraceProperty) and claim.statable is None
    assert "no encoder" in (every_length_route(claim) or "")


def _operations_claim(name: str) -> tuple[Construction, TraceProperty]:
    c = REGISTRY[name]
    claim = next(cl for cl in c.claims({}) if cl.id == "operations")
    assert isinstance(claim, TraceProperty)
    return c, claim


@pytest.mark.parametrize(
    "name",
    [
        "crasp-majority",
        *(
            pytest.param(f"crasp-{k.replace('_', '-')}", marks=pytest.mark.slow)
            for k in sorted(CRASP_PROGRAMS)
            if k != "majority"
        ),
    ],
)
def test_operations_are_proved_for_every_length_and_the_record_passes_the_strict_reader(
    name: str, tmp_path: Path
) -> None:
    c, claim = _operations_claim(name)
    assert isinstance(claim.statable, FollowsCounts)
    run = prove(name, claims=["operations"], method="smt", out=tmp_path, max_n=BOUND)
    (r,) = run.results
    assert isinstance(r.verdict, Proved) and r.every_length, r.verdict
    assert r.path is not None
    assert not verify_record(r.path, builtin_registry()).rerun
    assert isinstance(check(Job(c, {}), claim, max_len=BOUND), Proved)


def _breaks(claim: TraceProperty, net: Network, w: tuple[str, ...]) -> str | None:
    try:
        return claim.holds(w, run_exact(net, w))
    except UndefinedValueError as exc:
        return str(exc)


def _check_mutant(label: str, mutant: Network) -> str:
    c, claim = _operations_claim("crasp-majority")
    wrapped = dataclasses.replace(c, name="majority-mutant", build=lambda _v: mutant)
    wrong = [w for w in _words(mutant.alphabet, 1, BOUND) if _breaks(claim, mutant, w)]
    smt = prove_claim_smt(Job(wrapped, {}), claim, BOUND, timeout=60).verdict
    if wrong:
        assert not isinstance(smt, Proved), f"{label}: proved, but {wrong[0]} breaks it"
        best = prove(wrapped, claims=["operations"], method="best", max_n=BOUND).results[0].verdict
        assert isinstance(best, Refuted) and best.word is not None, label
        assert _breaks(claim, mutant, best.word) is not None, label
        assert best.word == wrong[0], f"{label}: {best.word} is not the shortlex-first {wrong[0]}"
        return "refuted"
    if isinstance(smt, Proved):
        rng = random.Random(label)
        for _ in range(LONGER):
            w = tuple(rng.choice(mutant.alphabet) for _ in range(rng.randint(BOUND + 1, 12)))
            assert _breaks(claim, mutant, w) is None, f"{label}: proved, but {w} breaks it"
        return "proved"
    return "unknown"


def _mutants(deltas: tuple[Fraction, ...], only_counts: bool) -> Iterator[tuple[str, Network]]:
    """Single-weight mutants of crasp-majority: with ``only_counts``, of the first symbol's row
    of the embedding and of the value weight of each head that counts a symbol; else of every
    weight."""
    net = REGISTRY["crasp-majority"].network({})
    for path in weight_sites(net, zeros=True):
        if only_counts and not (
            (path[0] == "embedding" and path[2] == 0)
            or (path[:2] == ("layers", 1) and "value" in path and "weights" in path)
        ):
            continue
        for delta in deltas:
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            yield f"{'.'.join(map(str, path))} {delta}", mutant


@pytest.mark.parametrize(
    ("deltas", "only_counts"),
    [
        pytest.param((Fraction(-1),), True, id="counts -1"),
        pytest.param(
            (Fraction(1, 2), Fraction(-1, 2), Fraction(1), Fraction(-1)),
            False,
            id="all",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_single_weight_mutants_that_break_operations_within_the_bound_are_never_proved(
    deltas: tuple[Fraction, ...], only_counts: bool
) -> None:
    tally: dict[str, int] = {}
    for label, mutant in _mutants(deltas, only_counts):
        got = _check_mutant(label, mutant)
        tally[got] = tally.get(got, 0) + 1
    print(f"operations mutants of crasp-majority ({deltas}): {tally}")
    assert tally.get("refuted", 0) >= 2  # the sample does contain mutants that break it
    if not only_counts:
        assert tally.get("proved", 0) >= 1  # and some that keep it, proved for every length
