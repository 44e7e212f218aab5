"""``netproof recheck``: a proof log checked again by a second solver, independently of z3.

For each log the strict reader accepts (:func:`netproof.verifier.smt.prooflog.check_fresh`: fingerprints and
query texts rebuilt, nothing solved), every ``.smt2`` query is solved again from its file, by
cvc5 (default) or z3, and the answer compared with the recorded one; a log without queries (an
exhaustive proof) has its exhaustive check run again. Per log the outcome is:

- ``agree``: every query gets the recorded answer (and an exhaustive check the recorded verdict);
- ``disagree``: some answer differs (exit status 1: one of the two solvers, or the checker, is
  wrong, and the proof is not trusted);
- ``undecided``: the second solver said ``unknown`` or ran out of time on some query (exit 3);
- ``rejected``: the strict reader refused the log (exit 2).

The caller passes the registry of constructions the logs are looked up in.

May import: the claims vocabulary, exhaustive checking, :mod:`netproof.verifier.smt.prooflog`
and :mod:`netproof.symbolic`; cvc5 and z3 inside functions. Never the registry of constructions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from netproof.symbolic import render
from netproof.verifier.claims import Construction
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.smt.prooflog import ProofLog, ProofLogError, check_fresh, claim_of, construction_of, find_logs, verdict_name

Agreement = Literal["agree", "disagree", "undecided", "rejected"]
SOLVERS = ("cvc5", "z3")


@dataclass(frozen=True, slots=True)
class QueryCheck:
    """One query solved again: what the log says, what the second solver says."""

    name: str
    recorded: str
    answer: str
    reason: str
    seconds: float


@dataclass(frozen=True, slots=True)
class LogCheck:
    """The recheck of one log."""

    path: str
    outcome: Agreement
    solver: str
    queries: tuple[QueryCheck, ...] = ()
    detail: str = ""


def solve_smt2(text: str, solver: str, timeout: float) -> tuple[str, str]:
    """(``sat``/``unsat``/``unknown``, reason) for an SMT-LIB2 script with one ``check-sat``."""
    if solver == "cvc5":
        return _cvc5(text, timeout)
    if solver == "z3":
        return _z3(text, timeout)
    raise ValueError(f"solver={solver!r} is not one of {', '.join(SOLVERS)}")


def _cvc5(text: str, timeout: float) -> tuple[str, str]:
    try:
        import cvc5
    except ImportError:
        raise ImportError("recheck with cvc5 needs the smt extra: pip install 'netproof[smt]' (PyPI cvc5)") from None
    tm = cvc5.TermManager()
    s = cvc5.Solver(tm)
    s.setOption("tlimit-per", str(max(1, int(timeout * 1000))))
    parser = cvc5.InputParser(s)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    sm = parser.getSymbolManager()
    answer = ""
    try:
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            out = cmd.invoke(s, sm).strip()
            if out:
                answer = out.splitlines()[-1]
    except RuntimeError as exc:
        return "unknown", f"cvc5 cannot read the query: {exc}"
    if answer in ("sat", "unsat"):
        return answer, ""
    reason = ""
    try:
        reason = str(s.getInfo("reason-unknown"))
    except RuntimeError:
        reason = answer or "no answer"
    return "unknown", reason


def _z3(text: str, timeout: float) -> tuple[str, str]:
    import z3

    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.set("timeout", max(1, int(timeout * 1000)))
    s.from_string(text)
    r = s.check()
    if r == z3.unsat:
        return "unsat", ""
    if r == z3.sat:
        return "sat", ""
    return "unknown", str(s.reason_unknown())


def recheck_log(path: str, *, registry: Mapping[str, Construction], solver: str = "cvc5", timeout: float = 120.0) -> LogCheck:
    """Recheck one log (see the module docstring), its construction looked up in ``registry``."""
    try:
        log = check_fresh(path, registry)
    except ProofLogError as exc:
        return LogCheck(path, "rejected", solver, detail=str(exc))
    entries = log.queries
    if not entries:
        return _recheck_exhaustive(log, solver, registry)
    checks: list[QueryCheck] = []
    for entry in entries:
        started = time.perf_counter()
        answer, reason = solve_smt2(log.smt2[entry["sha256"]], solver, timeout)
        checks.append(QueryCheck(entry["name"], entry["result"], answer, reason, time.perf_counter() - started))
    if any(c.answer != "unknown" and c.recorded != "unknown" and c.answer != c.recorded for c in checks):
        bad = next(c for c in checks if c.answer != "unknown" and c.recorded != "unknown" and c.answer != c.recorded)
        return LogCheck(path, "disagree", solver, tuple(checks),
                        f"query {bad.name!r}: the log says {bad.recorded}, {solver} says {bad.answer}")
    if any(c.answer == "unknown" and c.recorded != "unknown" for c in checks):
        bad = next(c for c in checks if c.answer == "unknown" and c.recorded != "unknown")
        return LogCheck(path, "undecided", solver, tuple(checks), f"query {bad.name!r}: {solver} says unknown ({bad.reason})")
    return LogCheck(path, "agree", solver, tuple(checks), "every answer as recorded")


def _recheck_exhaustive(log: ProofLog, solver: str, registry: Mapping[str, Construction]) -> LogCheck:
    """A log without queries: run its check again (exhaustive, exact) and compare verdicts."""
    rec = log.record
    c = construction_of(rec["construction"], registry)
    values = c.parse_params(rec["params"])
    claim = claim_of(log, c, values)
    bound = rec["bound"]["max_len"] if rec["bound"] is not None else None
    started = time.perf_counter()
    verdict = check(Job(c, values), claim, max_len=bound)
    seconds = time.perf_counter() - started
    again = verdict_name(verdict)
    run = QueryCheck("checker", rec["verdict"], again, verdict.method, seconds)
    if again != rec["verdict"]:
        return LogCheck(log.path, "disagree", "checker", (run,), f"the log says {rec['verdict']}, the check run again says {again}")
    cx = getattr(verdict, "word", None)
    if again == "refuted" and cx is not None:
        shown = render(c.network(values, len(cx)).alphabet, cx)
        if shown != rec.get("counterexample"):
            return LogCheck(log.path, "disagree", "checker", (run,),
                            f"counterexample {rec.get('counterexample')!r} in the log, {shown!r} again")
    return LogCheck(log.path, "agree", "checker", (run,), f"{again} again by {verdict.method}")


def recheck(paths: Sequence[str], *, registry: Mapping[str, Construction], solver: str = "cvc5", timeout: float = 120.0) -> list[LogCheck]:
    """Recheck every log named by ``paths`` (files, or directories searched recursively)."""
    return [recheck_log(p, registry=registry, solver=solver, timeout=timeout) for p in find_logs(paths)]


def as_json(check: LogCheck) -> dict[str, Any]:
    return {
        "log": check.path,
        "outcome": check.outcome,
        "solver": check.solver,
        "detail": check.detail,
        "queries": [
            {"name": q.name, "recorded": q.recorded, "answer": q.answer, "reason": q.reason, "seconds": round(q.seconds, 3)}
            for q in check.queries
        ],
    }
