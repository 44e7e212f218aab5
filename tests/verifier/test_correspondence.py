"""The operation-wise correspondence (``verifier/smt/compositional/correspondence.py``): a network
compiled from a B-RASP program proved equal to the program for every length, operation by
operation, against the exhaustive check and against mutants.

- the future-operator specs (whose ``operations`` has no automaton form) get ``network=program``
  and ``operations`` for every length from the route, their records pass the strict reader, and a
  record whose query is tampered with is rejected;
- faithfulness: on random B-RASP programs (every mask and side, values reading at i), the route
  proves what the exhaustive check proves on every word up to length 5 (and says why where it
  does not apply: a score that reads the query position);
- mutants of the correspondence: a program whose one attention operation differs from its
  compiled block (side, default or score changed), against the original network, is never proved
  where it differs on a word of the bound, and the fallback refutes it with a word on which the
  exact interpreter disagrees with the mutant program;
- single-weight mutants of a synthesized network that change its function (the accept bit or an
  operation's dim) within the bound are never proved by the route, and ``--method best``
  refutes them with a word the exact interpreter reproduces (a sample by default, every weight
  of two specs with ``-m slow``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from weight_mutants import weight_sites, with_weight

from netproof.constructions.rasp.claims import program_construction
from netproof.constructions.rasp.compile_brasp import compile_brasp, i_reads
from netproof.constructions.rasp.modules import as_language
from netproof.constructions.rasp.synth import synthesize
from netproof.constructions.rasp.synth_specs import spec_named
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.campaign import prove
from netproof.verifier.claims import (
    Construction,
    Proved,
    Recognizes,
    Refuted,
    TraceProperty,
    stated,
)
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.fuzzing.rasp_strategies import brasp_programs
from netproof.verifier.smt.compositional import prove_lemma
from netproof.verifier.smt.compositional.correspondence import prove_correspondence
from netproof.verifier.smt.compositional.lemmas import LemmaResult
from netproof.verifier.smt.prooflog import ProofLogError, verify_record
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

BOUND = 4


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(lo, hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _spec_construction(name: str) -> Construction:
    syn = synthesize(spec_named(name).spec, f"synth-{name}")
    return program_construction(
        f"synth-{name}", syn.program, as_language(syn.program, syn.reference), max_len=BOUND
    )


def _claims(c: Construction) -> tuple[Recognizes, TraceProperty]:
    claims = {x.id: x for x in c.claims({})}
    rec, ops = claims["network=program"], claims["operations"]
    assert isinstance(rec, Recognizes) and isinstance(ops, TraceProperty)
    return rec, ops


@pytest.mark.parametrize("name", ["a-then-b", "a-until-b-no-c"])
def test_future_operator_specs_are_proved_for_every_length_and_their_records_pass_the_strict_reader(
    name: str, tmp_path: Path
) -> None:
    c = _spec_construction(name)
    _rec, ops = _claims(c)
    assert (
        stated(ops).statable is None
    )  # no automaton form: the correspondence is its only every-length route
    run = prove(c, claims=["network=program", "operations"], method="smt", out=tmp_path)
    for r in run.results:
        assert isinstance(r.verdict, Proved) and r.every_length, r.verdict
        assert "operation-wise correspondence" in r.verdict.detail
        assert r.path is not None
        assert not verify_record(r.path, {c.name: c}).rerun


def test_the_route_stays_within_its_budget_saying_where_it_ran_out_never_proving_past_it() -> None:
    """``--timeout`` bounds the whole smt method: out of time before the lemmas, or with the
    lemmas proved and no time left for the queries, the route is Unknown and names the budget."""
    c = _spec_construction("a-then-b")
    _rec, ops = _claims(c)
    net = c.network({})
    lemmas = c.lemmas({}) if c.lemmas is not None else ()
    got = prove_correspondence(net, ops, lemmas, 5, timeout=1e-9).verdict
    assert not isinstance(got, Proved) and "ran out of the 1e-09 s budget" in got.reason, got
    assert "while proving the block lemmas" in got.reason
    proved = [LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in lemmas]
    got = prove_correspondence(net, ops, lemmas, 5, timeout=1e-9, results=proved).verdict
    assert not isinstance(got, Proved) and "after 0 of the correspondence's" in got.reason, got
    assert isinstance(prove_correspondence(net, ops, lemmas, 5, results=proved).verdict, Proved)


def test_a_record_whose_correspondence_query_was_edited_is_rejected(tmp_path: Path) -> None:
    c = _spec_construction("a-then-b")
    (r,) = prove(c, claims=["network=program"], method="smt", out=tmp_path).results
    assert r.path is not None
    rec = json.loads(Path(r.path).read_text())
    query = rec["lemmas"]["queries"][0]
    smt2 = Path(r.path).parent / query["file"]
    smt2.write_text(smt2.read_text().replace("(check-sat)", "(assert true)\n(check-sat)"))
    with pytest.raises(ProofLogError, match="sha256"):
        verify_record(r.path, {c.name: c})


def _faithful(program: B.Program) -> None:
    """Where the route proves, so does the exhaustive check; where it declines, it names a
    premise that does fail (a lemma not proved, a score read at the query position)."""
    c = program_construction("random", program, max_len=5)
    rec, ops = _claims(c)
    net = c.network({})
    lemmas = c.lemmas({}) if c.lemmas is not None else ()
    unproved = [lemma.id for lemma in lemmas if not prove_lemma(net, lemma)[1]]
    scored_at_i = any(
        i_reads(op.score) for op in B.operations(program.output) if isinstance(op, B.Attend)
    )
    for claim in (rec, ops):
        got = prove_correspondence(net, claim, lemmas, 5).verdict
        if isinstance(got, Proved):
            assert isinstance(check(Job(c, {}), claim, max_len=5), Proved)
            continue
        assert scored_at_i or unproved, got
        assert any(x in got.reason for x in ("query position", "selection lemma", *unproved)), got


_QUICK = settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@_QUICK
@given(brasp_programs(max_ops=4))
def test_the_route_proves_what_the_exhaustive_check_proves_on_random_programs(
    program: B.Program,
) -> None:
    _faithful(program)


@pytest.mark.slow
@settings(_QUICK, max_examples=40)
@given(brasp_programs(max_ops=6))
def test_the_route_proves_what_the_exhaustive_check_proves_on_many_random_programs(
    program: B.Program,
) -> None:
    _faithful(program)


# --------------------------------------------------------------------------- program mutants


def _rebuild(
    program: B.Program,
    named: dict[B.BVec, str],
    op: B.BVec | None = None,
    change: Callable[[B.Attend], B.Attend] | None = None,
) -> B.Program:
    """The program with every attention operation named as the compiler names it (so it keeps
    its dim) and ``op`` changed by ``change``, rebuilt operands first."""
    memo: dict[B.BVec, B.BVec] = {}
    for e in B.operations(program.output):
        new: B.BVec = e
        if isinstance(e, B.Not):
            new = dataclasses.replace(e, arg=memo[e.arg])
        elif isinstance(e, (B.AtI, B.AtJ)):
            new = dataclasses.replace(e, vec=memo[e.vec])
        elif isinstance(e, (B.And, B.Or)):
            new = dataclasses.replace(e, left=memo[e.left], right=memo[e.right])
        elif isinstance(e, B.Attend):
            new = dataclasses.replace(
                e,
                score=memo[e.score],
                value=memo[e.value],
                default=memo[e.default],
                name=named[e],
            )
            if e == op and change is not None:
                new = change(new)
        memo[e] = new
    return B.Program(program.name, program.alphabet, memo[program.output], program.empty)


def _changes() -> Iterator[tuple[str, Callable[[B.Attend], B.Attend]]]:
    def side(op: B.Attend) -> B.Attend:
        return dataclasses.replace(op, side="leftmost" if op.side == "rightmost" else "rightmost")

    yield "side", side
    yield "default", lambda op: dataclasses.replace(op, default=~op.default)
    yield "score", lambda op: dataclasses.replace(op, score=~op.score)
    yield "value", lambda op: dataclasses.replace(op, value=~op.value)


@pytest.mark.parametrize(
    ("name", "limit"),
    [
        ("a-then-b", 1),
        pytest.param("a-then-b-then-c", None, marks=pytest.mark.slow),
        pytest.param("no-b-after-first-c", None, marks=pytest.mark.slow),
        pytest.param("dyck1-depth1", None, marks=pytest.mark.slow),
    ],
)
def test_a_program_whose_operation_differs_from_its_block_is_never_proved_and_the_fallback_refutes_it(
    name: str, limit: int | None
) -> None:
    """The default run changes the side and default of the first operation; ``-m slow`` every
    operation's side, default, score and value."""
    syn = synthesize(spec_named(name).spec, f"synth-{name}")
    net = compile_brasp(syn.program)
    named = B.names(syn.program)
    tally = {"refuted": 0, "same": 0}
    attends = [o for o in B.operations(syn.program.output) if isinstance(o, B.Attend)]
    for op in attends[:limit]:
        for what, change in itertools.islice(_changes(), 4 if limit is None else 2):
            mutant = _rebuild(syn.program, named, op, change)
            c = dataclasses.replace(
                program_construction("mutant", mutant, max_len=BOUND), build=lambda _v: net
            )
            rec, _ops = _claims(c)
            lemmas = c.lemmas({}) if c.lemmas is not None else ()
            got = prove_correspondence(net, rec, lemmas, BOUND).verdict
            differs = [
                w
                for w in _words(mutant.alphabet, 0, BOUND)
                if run_exact(net, w).accepted != B.accepts(mutant, w)
            ]
            if not differs:
                tally["same"] += 1
                continue
            assert not isinstance(got, Proved), (
                f"{named[op]} {what}: proved, but {differs[0]} differs"
            )
            fallback = prove_claim(Job(c, {}), rec, method="smt", max_len=BOUND, timeout=60).verdict
            assert isinstance(fallback, Refuted) and fallback.word is not None, (named[op], what)
            assert run_exact(net, fallback.word).accepted != B.accepts(mutant, fallback.word)
            tally["refuted"] += 1
    print(f"{name}: program mutants {tally}")
    assert tally["refuted"] >= 1


# --------------------------------------------------------------------------- weight mutants


def _weight_mutants(net: Network, every: int, seed: int) -> Iterator[tuple[str, Network]]:
    rng = random.Random(seed)
    for path in list(weight_sites(net))[::every]:
        delta = Fraction(rng.choice((1, -1, Fraction(1, 2), Fraction(-1, 2))))
        try:
            yield f"{'.'.join(map(str, path))} {delta}", with_weight(net, path, delta)
        except (NetworkValidationError, ValueError):
            continue


def _check_weight_mutant(c: Construction, label: str, mutant: Network) -> str:
    rec, ops = _claims(c)
    program = rec.language
    lemmas = c.lemmas({}) if c.lemmas is not None else ()
    wrapped = dataclasses.replace(c, name=f"{c.name}-mutant", build=lambda _v: mutant)
    accept_wrong = [
        w
        for w in _words(mutant.alphabet, 0, BOUND)
        if run_exact(mutant, w).accepted != program.contains(w)
    ]
    ops_wrong = [w for w in _words(mutant.alphabet, 1, BOUND) if ops.holds(w, run_exact(mutant, w))]
    outcome = "unchanged"
    for claim, wrong in ((rec, accept_wrong), (ops, ops_wrong)):
        got = prove_correspondence(mutant, claim, lemmas, BOUND).verdict
        if not wrong:
            continue
        outcome = "refuted"
        assert not isinstance(got, Proved), f"{label}: {claim.id} proved, but {wrong[0]} breaks it"
        best = prove(wrapped, claims=[claim.id], method="best", max_n=BOUND).results[0].verdict
        assert isinstance(best, Refuted) and best.word is not None, (label, claim.id, best)
        trace = run_exact(mutant, best.word)
        if claim is rec:
            assert trace.accepted != program.contains(best.word), label
        else:
            assert ops.holds(best.word, trace) is not None, label
    return outcome


def _tally(name: str, every: int) -> dict[str, int]:
    c = _spec_construction(name)
    tally: dict[str, int] = {}
    for label, mutant in _weight_mutants(c.network({}), every, seed=37):
        got = _check_weight_mutant(c, label, mutant)
        tally[got] = tally.get(got, 0) + 1
    print(f"{name} single-weight mutants (every {every}th weight): {tally}")
    return tally


def test_a_sample_of_single_weight_mutants_that_change_the_function_is_never_proved() -> None:
    assert _tally("a-then-b", 40).get("refuted", 0) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["a-then-b", "dyck1-depth1"])
def test_every_single_weight_mutant_that_changes_the_function_is_never_proved(name: str) -> None:
    assert _tally(name, 1).get("refuted", 0) >= 1


def test_a_head_moved_before_the_ffn_that_writes_its_keys_is_not_proved() -> None:
    # the head then reads its key and value dims while they are 0, and the FFN writes them after:
    # what the walk would read back is not what the head read
    c = _spec_construction("a-then-b")
    rec, _ops = _claims(c)
    net = c.network({})
    layers = list(net.layers)
    pre = next(k for k, sub in enumerate(layers) if sub.block.name == "L1.pre")
    layers[pre], layers[pre + 1] = layers[pre + 1], layers[pre]
    swapped = dataclasses.replace(net, layers=tuple(layers))
    lemmas = c.lemmas({}) if c.lemmas is not None else ()
    got = prove_correspondence(swapped, rec, lemmas, BOUND).verdict
    assert not isinstance(got, Proved)
    assert "read as 0" in got.reason


def _counting_solves(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the solver queries made from now on (lemmas and the route's queries)."""
    from netproof.verifier import smtlib

    names: list[str] = []
    solve = smtlib.solve

    def counted(*args: object, **kwargs: object) -> object:
        names.append(str(kwargs.get("name")))
        return solve(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(smtlib, "solve", counted)
    return names


def test_a_lemma_is_proved_once_per_run_however_many_claims_the_route_proves_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = _spec_construction("no-aa")
    rec, ops = _claims(c)
    net = c.network({})
    lemmas = c.lemmas({}) if c.lemmas is not None else ()
    first = prove_correspondence(net, rec, lemmas, BOUND)
    names = _counting_solves(monkeypatch)
    second = prove_correspondence(net, ops, lemmas, BOUND)
    assert isinstance(first.verdict, Proved) and isinstance(second.verdict, Proved)
    assert first.tree is not None and second.tree is not None
    # the second claim asks the solver its own queries only: the lemmas' proofs are reused
    assert names == [q.name for q in second.tree.queries]
    assert second.tree.children[:-1] == first.tree.children[:-1]
    # by content: a network with one weight changed has its lemmas proved anew
    label, mutant = next(_weight_mutants(net, 1, seed=1))
    names.clear()
    prove_correspondence(mutant, ops, lemmas, BOUND)
    assert any(not n.startswith(f"{ops.id} every n") for n in names), label


def test_claims_the_route_proves_build_no_automaton_of_the_operations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from netproof.constructions.rasp import claims as rasp_claims

    built: list[str] = []
    form = rasp_claims._operations_form

    def counted(program: B.Program) -> object:
        built.append(program.name)
        return form(program)

    monkeypatch.setattr(rasp_claims, "_operations_form", counted)
    c = _spec_construction("no-aa")
    assert c.claims({}) is c.claims({})  # built once per construction, not once per task
    run = prove(c, claims=["network=program", "operations", "no-ties"], method="smt")
    for r in run.results:
        assert isinstance(r.verdict, Proved) and r.every_length, r.verdict
    assert built == []
    _rec, ops = _claims(c)
    assert stated(ops).statable is not None and stated(ops).statable is not None
    assert built == ["synth_no_aa"]  # built where a route asks for it, and once


def test_building_the_form_a_fallback_needs_stays_within_the_budget_and_is_never_a_proof() -> None:
    import time

    from netproof.verifier.claims import Unknown
    from netproof.verifier.smt.prove import prove_claim_smt

    c = _spec_construction("no-aa")
    _rec, ops = _claims(c)

    def slow_form() -> object:
        time.sleep(0.3)
        return stated(ops).statable

    slow = dataclasses.replace(ops, statable_later=slow_form)
    # no lemmas: the correspondence is not tried, the other routes need the form
    bare = dataclasses.replace(c, lemmas=None)
    got = prove_claim_smt(Job(bare, {}), slow, BOUND, timeout=0.1).verdict
    assert isinstance(got, Unknown), got
    assert "ran out of the 0.1 s budget while building the claim's form" in got.reason
