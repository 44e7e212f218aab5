"""A solver call is a verdict only when the solver really answered (issue 25).

- A check that raises, or that comes back ``unknown`` because its context was interrupted or
  cancelled while no budget ran out and nobody asked it to stop, is retried once; a second
  such failure is :class:`~netproof.verifier.smtlib.SolverCrashed` (an internal error, never
  recorded). A genuine timeout stays ``unknown`` with the reason ``timeout``.
- A Ctrl-C that reaches z3 during a check (z3 takes SIGINT while it solves) is a
  :class:`KeyboardInterrupt`, never ``unknown``: ``netproof prove`` stops with exit 130 and
  keeps the records it had (the last test sends a real SIGINT to a real run).
- The compositional encoder never compares z3 terms with Python operators: a positional dim
  made word-dependent by a mutated weight gets a verdict, not a crash.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.symbolic import Network, TokenEmbedding
from netproof.symbolic.exact import run as run_exact
from netproof.verifier import smtlib
from netproof.verifier.claims import Construction, Proved, Recognizes, Refuted, Unknown, Verdict
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.compositional import prove_recognizes
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3


def _pigeons(ctx: Any, holes: int = 12) -> Any:
    """holes + 1 pigeons in ``holes`` holes: unsat, and far too hard for any test to wait for."""
    import z3

    solver = z3.Solver(ctx=ctx)
    p = [[z3.Bool(f"p{i}_{j}", ctx) for j in range(holes)] for i in range(holes + 1)]
    solver.add([z3.Or(row) for row in p])
    solver.add(
        [
            z3.Or(z3.Not(p[i][j]), z3.Not(p[k][j]))
            for j in range(holes)
            for i in range(holes + 1)
            for k in range(i + 1, holes + 1)
        ]
    )
    return solver


class _Flaky:
    """A real z3 solver whose first ``failures`` checks fail the way a thread race makes them
    fail: ``raise`` (a ``Z3Exception(b'canceled')``) or ``cancel`` (``unknown`` with the
    reason ``canceled``, at once, no budget spent)."""

    def __init__(self, solver: Any, failures: int, how: str) -> None:
        self.solver, self.failures, self.how, self.checks = solver, failures, how, 0
        self.ctx = solver.ctx
        self._cancelled = False

    def set(self, *args: Any) -> None:
        self.solver.set(*args)

    def check(self) -> Any:
        import z3

        self.checks += 1
        if self.failures > 0:
            self.failures -= 1
            if self.how == "raise":
                raise z3.Z3Exception(b"canceled")
            self._cancelled = True
            return z3.unknown
        self._cancelled = False
        return self.solver.check()

    def reason_unknown(self) -> str:
        return "canceled" if self._cancelled else str(self.solver.reason_unknown())

    def model(self) -> Any:
        return self.solver.model()

    def to_smt2(self) -> str:
        return str(self.solver.to_smt2())


def _small_sat(ctx: Any) -> Any:
    import z3

    x = z3.Int("x", ctx)
    solver = z3.Solver(ctx=ctx)
    solver.add(x > 3, x < 5)
    return solver, x


@pytest.mark.parametrize("how", ["raise", "cancel"])
def test_a_solver_call_that_crashes_once_is_retried_and_gives_the_solvers_real_answer(
    how: str,
) -> None:
    import z3

    ctx = z3.Context()
    solver, x = _small_sat(ctx)
    flaky = _Flaky(solver, failures=1, how=how)
    answer, reason, model = smtlib.check(flaky, timeout=30.0, want_model=True)
    assert (answer, reason, flaky.checks) == ("sat", "", 2)
    assert model.eval(x).as_long() == 4


@pytest.mark.parametrize("how", ["raise", "cancel"])
def test_a_solver_call_that_crashes_twice_is_an_internal_error_never_a_verdict(how: str) -> None:
    import z3

    ctx = z3.Context()
    solver, _x = _small_sat(ctx)
    flaky = _Flaky(solver, failures=2, how=how)
    with pytest.raises(smtlib.SolverCrashed, match=r"failed twice .*canceled.*not a verdict"):
        smtlib.check(flaky, timeout=30.0)
    assert flaky.checks == 2


def test_solve_retries_a_crashed_query_and_records_what_the_solver_really_said() -> None:
    import z3

    ctx = z3.Context()
    solver, _x = _small_sat(ctx)
    solver.add(z3.Int("x", ctx) > 4)  # now unsat
    query, model = smtlib.solve(
        _Flaky(solver, failures=1, how="raise"),
        name="q",
        logic="QF_LIA",
        timeout=30.0,
        reason_unsat="none",
    )
    assert (query.result, query.reason, model) == ("unsat", "none", None)
    assert query.smt2.startswith("(set-logic QF_LIA)")


def test_a_genuine_timeout_stays_unknown_with_the_reason_timeout_and_is_not_retried() -> None:
    import z3

    started = time.perf_counter()
    answer, reason, model = smtlib.check(_pigeons(z3.Context()), timeout=0.3)
    assert (answer, reason, model) == ("unknown", "timeout", None)
    assert time.perf_counter() - started < 5  # not retried with a fresh budget


def test_a_check_stopped_on_purpose_from_another_thread_says_so_and_is_not_retried() -> None:
    import z3

    stop = smtlib.Stop()
    threading.Timer(0.3, stop.request).start()
    started = time.perf_counter()
    answer, reason, _model = smtlib.check(_pigeons(z3.Context()), timeout=120.0, stop=stop)
    assert (answer, reason) == ("unknown", smtlib.STOPPED)
    assert time.perf_counter() - started < 30


def test_an_interrupt_from_another_thread_that_nobody_asked_for_is_a_crash_not_an_unknown() -> None:
    import z3

    ctx = z3.Context()
    interrupts = threading.Event()

    def interrupt_again_and_again() -> None:  # a stray interrupt, as the old thread race sent
        while not interrupts.wait(0.05):
            ctx.interrupt()

    threading.Thread(target=interrupt_again_and_again, daemon=True).start()
    try:
        with pytest.raises(
            smtlib.SolverCrashed, match=r"unknown \(interrupted\).*no budget ran out"
        ):
            smtlib.check(_pigeons(ctx), timeout=120.0)
    finally:
        interrupts.set()


def test_a_check_that_answers_as_the_other_side_asks_it_to_stop_gives_no_answer_to_use() -> None:
    import z3

    ctx = z3.Context()
    solver, _x = _small_sat(ctx)
    stop = smtlib.Stop()

    class AnswersAsStopped:  # the stop request comes while the check ends: its model may be cancelled
        def __init__(self) -> None:
            self.ctx = ctx

        def set(self, *args: Any) -> None:
            solver.set(*args)

        def check(self) -> Any:
            answer = solver.check()
            stop.request()
            return answer

        def model(self) -> Any:
            raise AssertionError("the model of a stopped check must not be used")

    assert smtlib.check(AnswersAsStopped(), timeout=30.0, stop=stop, want_model=True) == (
        "unknown",
        smtlib.STOPPED,
        None,
    )


def test_a_stop_request_never_lands_between_checks_so_the_context_stays_usable() -> None:
    import z3

    ctx = z3.Context()
    solver, x = _small_sat(ctx)
    stop = smtlib.Stop()
    assert not stop.busy
    stop.poke()  # nothing requested, nothing under way: a no-op
    answer, _reason, model = smtlib.check(solver, stop=stop, want_model=True)
    assert answer == "sat" and model.eval(x + 1).as_long() == 5
    stop.request()
    assert smtlib.check(solver, stop=stop) == ("unknown", smtlib.STOPPED, None)
    assert z3.simplify(x + 1 - 1).eq(x)  # the context takes further calls


# --------------------------------------------------------------------------- symbolic positional dims


def _dyck11() -> tuple[Construction, dict[str, Any], Network, Recognizes, tuple[Any, ...]]:
    construction = REGISTRY["dyck"]
    values = construction.parse_params({"k": "1", "depth": "1"})
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    assert construction.lemmas is not None
    return construction, values, construction.network(values), claim, construction.lemmas(values)


def _symbol_in_positional_dim(net: Network, symbol: str, weight: Fraction) -> Network:
    """``net`` whose embedding also writes ``weight`` into the positional dim ``p`` (i/n) at
    ``symbol``: the dim then depends on the word, a z3 term in the encoder."""
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    table = tuple((s, (*row, ("p", weight))) if s == symbol else (s, row) for s, row in emb.table)
    return dataclasses.replace(net, embedding=dataclasses.replace(emb, table=table))


def _wrong_words(net: Network, claim: Recognizes, n: int) -> list[tuple[str, ...]]:
    import itertools

    alphabet = net.alphabet
    return [
        w
        for m in range(claim.min_len, n + 1)
        for w in itertools.product(alphabet, repeat=m)
        if run_exact(net, w).accepted != claim.language.contains(w)
    ]


@pytest.mark.parametrize("symbol", ["(", ")"])
@pytest.mark.parametrize("lengths", ["all", "ranges", "each"])
def test_a_word_dependent_positional_dim_gets_a_verdict_from_the_compositional_prover_not_a_crash(
    symbol: str, lengths: str
) -> None:
    _c, _v, net, claim, lemmas = _dyck11()
    mutant = _symbol_in_positional_dim(net, symbol, Fraction(1, 2))
    progress = prove_recognizes(mutant, claim, lemmas, 6, timeout=60, lengths=lengths)
    verdict: Verdict = progress.verdict
    assert isinstance(verdict, Proved | Refuted | Unknown)
    if isinstance(
        verdict, Unknown
    ):  # the lemma's side condition (p holds i/n) fails: said, not crashed
        assert "Symbolic expressions" not in verdict.reason
    wrong = _wrong_words(mutant, claim, 6)
    if isinstance(verdict, Refuted):
        assert verdict.word == wrong[0]
    if isinstance(verdict, Proved):
        assert wrong == []


@pytest.mark.parametrize("symbol", ["(", ")"])
def test_the_smt_method_on_a_word_dependent_positional_dim_refutes_with_the_first_wrong_word_or_proves_it_right(
    symbol: str,
) -> None:
    _construction, _values, net, claim, lemmas = _dyck11()
    mutant = _symbol_in_positional_dim(net, symbol, Fraction(1, 2))
    c = Construction(
        name="dyck-mutant",
        paper_id="test",
        title="mutant",
        reference="test",
        params=(),
        build=lambda values: mutant,
        claims=lambda values: (claim,),
        lemmas=lambda values: lemmas,
    )
    outcome = prove_claim(Job(c, {}), claim, method="smt", max_len=6, timeout=60)
    wrong = _wrong_words(mutant, claim, 6)
    if wrong:
        assert isinstance(outcome.verdict, Refuted) and outcome.verdict.word == wrong[0]
        assert run_exact(mutant, wrong[0]).accepted != claim.language.contains(wrong[0])
    else:
        assert isinstance(outcome.verdict, Proved)


# --------------------------------------------------------------------------- Ctrl-C during a proof


def _netproof(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "netproof", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


# A proof that keeps z3 busy for far more than the seconds the test waits: Dyck(3,4)'s
# recognizer, every claim by the smt method, up to length 60, with a long budget.
_LONG = (
    "prove",
    "dyck",
    "-p",
    "k=3",
    "-p",
    "depth=4",
    "--method",
    "smt",
    "--max-n",
    "60",
    "--timeout",
    "600",
    "--quiet",
)


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_an_smt_proof_stops_the_run_with_exit_130_and_records_nothing_new(
    tmp_path: Path, jobs: str
) -> None:
    out = tmp_path / "records"
    # An existing record of the claim first (the same bound and method; a one-second budget).
    first = _netproof(*_LONG[:-3], "--timeout", "1", "--quiet", "--out", str(out), cwd=tmp_path)
    first.communicate(timeout=300)
    existing = {p: p.read_bytes() for p in out.rglob("Y2*.json")}
    assert len(existing) == 1, sorted(map(str, existing))
    proc = _netproof(*_LONG, "--force", "--out", str(out), "--jobs", jobs, cwd=tmp_path)
    time.sleep(8)
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert {
        p: p.read_bytes() for p in out.rglob("Y2*.json")
    } == existing  # no record of the interrupted claim, the old one kept
    assert "budget ran out" not in stderr


def test_a_genuine_timeout_of_the_smt_method_names_the_budget_the_user_gave() -> None:
    from netproof.verifier.smt.monolithic import recognizes_smt

    construction = REGISTRY["dyck"]
    values = construction.parse_params({"k": "1", "depth": "2"})
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    net = construction.network(values)
    outcome = recognizes_smt(lambda m: net, claim.language, 6, 6, timeout=0.001)
    assert (
        isinstance(outcome.verdict, Unknown)
        and "timeout: the 0.001 s budget ran out" in outcome.verdict.reason
    )
    named = recognizes_smt(
        lambda m: net,
        claim.language,
        6,
        6,
        timeout=0.001,
        budget="the 60 s budget (59.9 s of it spent elsewhere)",
    )
    assert (
        isinstance(named.verdict, Unknown)
        and "timeout: the 60 s budget (59.9 s of it spent elsewhere) ran out"
        in named.verdict.reason
    )
