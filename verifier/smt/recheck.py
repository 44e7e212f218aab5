"""``netproof recheck``: a proof log checked again by a second solver, independently of z3.

For each log the strict reader accepts (:func:`netproof.verifier.smt.prooflog.verify_record`: what
must be shown derived from the construction, the claim, the bound and the method family; every
query rebuilt; nothing in the record trusted but the evidence), every ``.smt2`` query is solved
again from its file, by cvc5 (default) or z3, and the answer compared with the recorded one; a
verdict no query establishes (an exhaustive proof) has its check run again at the record's own
bound, its size announced first and stopped when ``timeout`` runs out; a record whose verdict is
``unknown`` has nothing to re-check (undecided at once). Per log the outcome is:

- ``agree``: every query gets the recorded answer (and an exhaustive check the recorded verdict);
- ``disagree``: some answer differs (exit status 1: one of the two solvers, or the checker, is
  wrong, and the proof is not trusted);
- ``undecided``: the second solver said ``unknown`` or ran out of time on some query, the
  exhaustive re-run ran out of time, or the verdict is ``unknown`` (exit 3);
- ``rejected``: the strict reader refused the log (exit 2).

The caller passes the registry of constructions the logs are looked up in.

May import: the claims vocabulary, exhaustive checking, :mod:`netproof.verifier.smt.prooflog`
and :mod:`netproof.symbolic`; cvc5 and z3 inside functions. Never the registry of constructions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from netproof.symbolic import render, tokenize
from netproof.verifier import smtlib
from netproof.verifier.claims import Construction, Refuted, Verdict
from netproof.verifier.exhaustive.checker import Job, check, check_word, count_words
from netproof.verifier.smt.prooflog import (
    ProofLog,
    ProofLogError,
    claim_of,
    construction_of,
    find_logs,
    verdict_name,
    verify_record,
)
from netproof.verifier.smtlib import solver_version

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
        raise ImportError(
            "recheck with cvc5 needs the smt extra: pip install -e '.[smt]' (PyPI cvc5)"
        ) from None
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
    s.from_string(text)
    answer, reason, _model = smtlib.check(s, timeout=timeout)
    return answer, reason


Announce = Callable[[str], None]
"""``announce(line)``: told what a recheck is about to do, before it does it (a long exhaustive
re-run says how many words it goes through)."""

RecheckProgress = Callable[[int, int, "QueryCheck | None"], None]
"""``progress(done, total, query)``: the queries solved of the log's total, ``(0, total, None)``
before the first and ``query`` the one just solved after each; or, during an exhaustive re-run,
the words checked of the total (``query`` None)."""


class _OutOfTime(Exception):
    """Raised from the exhaustive check's progress hook when ``--timeout`` has run out."""


def recheck_log(
    path: str,
    *,
    registry: Mapping[str, Construction],
    solver: str = "cvc5",
    timeout: float = 120.0,
    announce: Announce | None = None,
    progress: RecheckProgress | None = None,
) -> LogCheck:
    """Recheck one log (see the module docstring), its construction looked up in ``registry``:
    ``timeout`` seconds per query, or for the whole exhaustive re-run; ``progress`` hears of each
    query solved (or of the words the re-run checks)."""
    try:
        log = verify_record(path, registry)
    except ProofLogError as exc:
        return LogCheck(path, "rejected", solver, detail=str(exc))
    rec = log.record
    if rec["verdict"] == "unknown":
        return LogCheck(
            path,
            "undecided",
            solver,
            detail=f"the verdict is unknown ({rec['reason']}): there is nothing to re-check",
        )
    if log.rerun:
        return rerun_check(log, registry, timeout, announce, progress)
    entries = log.queries
    checks: list[QueryCheck] = []
    if progress is not None:
        progress(0, len(entries), None)
    for entry in entries:
        started = time.perf_counter()
        answer, reason = solve_smt2(log.smt2[entry["sha256"]], solver, timeout)
        checks.append(
            QueryCheck(
                entry["name"], entry["result"], answer, reason, time.perf_counter() - started
            )
        )
        if progress is not None:
            progress(len(checks), len(entries), checks[-1])
    # A recorded "unknown" is a lemma that was not proved (its block then encoded faithfully):
    # any answer is consistent with it. verify_record made sure the verdict needs no such answer.
    if any(
        c.answer != "unknown" and c.recorded != "unknown" and c.answer != c.recorded for c in checks
    ):
        bad = next(
            c
            for c in checks
            if c.answer != "unknown" and c.recorded != "unknown" and c.answer != c.recorded
        )
        return LogCheck(
            path,
            "disagree",
            solver,
            tuple(checks),
            f"query {bad.name!r}: the log says {bad.recorded}, {solver} says {bad.answer}",
        )
    if any(c.answer == "unknown" and c.recorded != "unknown" for c in checks):
        bad = next(c for c in checks if c.answer == "unknown" and c.recorded != "unknown")
        return LogCheck(
            path,
            "undecided",
            solver,
            tuple(checks),
            f"query {bad.name!r}: {solver} says unknown ({bad.reason})",
        )
    if rec["verdict"] == "refuted" and isinstance(rec.get("counterexample"), str):
        replayed = replay_counterexample(log, registry)
        if replayed:
            return LogCheck(path, "disagree", solver, tuple(checks), replayed)
    note = ""
    recorded = (rec.get("solver") or {}).get("version")
    if recorded is not None and recorded != solver_version():
        note = f" (recorded with z3 {recorded}, this z3 is {solver_version()})"
    return LogCheck(path, "agree", solver, tuple(checks), "every answer as recorded" + note)


def replayed_verdict(log: ProofLog, registry: Mapping[str, Construction]) -> Verdict | None:
    """The claim's verdict on the recorded counterexample, replayed through the exact interpreter
    (``None``: the claim holds on it; :class:`Unknown`: the exact interpreter cannot decide it,
    e.g. a network with √ whose check needs intervals)."""
    rec = log.record
    c = construction_of(rec["construction"], registry)
    values = c.parse_params(rec["params"])
    job = Job(c, values)
    word = tokenize(job.alphabet, rec["counterexample"])
    return check_word(job, claim_of(log, c, values), word)


def replay_counterexample(log: ProofLog, registry: Mapping[str, Construction]) -> str:
    """Why the recorded counterexample is none (replayed through the exact interpreter), or ``""``
    (it is one: the claim fails on it, whatever else the record says)."""
    rec = log.record
    verdict = replayed_verdict(log, registry)
    if isinstance(verdict, Refuted):
        return ""
    return f"the counterexample {rec['counterexample']!r} replayed exactly is {'no counterexample' if verdict is None else verdict_name(verdict)}"


def rerun_check(
    log: ProofLog,
    registry: Mapping[str, Construction],
    timeout: float,
    announce: Announce | None,
    told: RecheckProgress | None = None,
) -> LogCheck:
    """A verdict no query establishes: its check run again (exhaustive, exact) at the record's
    own bound, its size announced first, stopped (undecided) when ``timeout`` seconds are spent."""
    rec = log.record
    c = construction_of(rec["construction"], registry)
    values = c.parse_params(rec["params"])
    claim = claim_of(log, c, values)
    job = Job(c, values)
    bound = rec["bound"]["max_len"] if rec["bound"] is not None else None
    if bound is not None and announce is not None:
        lo = rec["bound"]["min_len"]
        announce(
            f"{log.path}: re-running the exhaustive check over {count_words(job.alphabet, lo, bound):,} words "
            f"({lo} <= |w| <= {bound}), at most {timeout:g} s"
        )
    started = time.perf_counter()
    deadline = started + timeout

    def progress(done: int, total: int) -> None:
        if time.perf_counter() > deadline:
            raise _OutOfTime(
                f"{done:,} of {total:,} words checked when the {timeout:g} s of --timeout ran out"
            )
        if told is not None:
            told(done, total, None)

    try:
        verdict = check(job, claim, max_len=bound, progress=progress)
    except _OutOfTime as exc:
        run = QueryCheck(
            "checker", rec["verdict"], "unknown", str(exc), time.perf_counter() - started
        )
        return LogCheck(
            log.path, "undecided", "checker", (run,), f"the exhaustive re-run did not finish: {exc}"
        )
    seconds = time.perf_counter() - started
    again = verdict_name(verdict)
    run = QueryCheck("checker", rec["verdict"], again, verdict.method, seconds)
    if again != rec["verdict"]:
        return LogCheck(
            log.path,
            "disagree",
            "checker",
            (run,),
            f"the log says {rec['verdict']}, the check run again says {again}",
        )
    for key in ("method", "checked", "detail"):
        recorded, now = rec.get(key), getattr(verdict, key, None)
        if recorded != now:
            return LogCheck(
                log.path,
                "disagree",
                "checker",
                (run,),
                f"{key}: the log says {recorded!r}, the check run again says {now!r}",
            )
    cx = getattr(verdict, "word", None)
    if isinstance(verdict, Refuted):
        shown = None if cx is None else render(c.network(values, len(cx)).alphabet, cx)
        if shown != rec.get("counterexample"):
            return LogCheck(
                log.path,
                "disagree",
                "checker",
                (run,),
                f"counterexample {rec.get('counterexample')!r} in the log, {shown!r} again",
            )
        if dict(verdict.values) != rec.get("values"):
            return LogCheck(
                log.path,
                "disagree",
                "checker",
                (run,),
                f"values {rec.get('values')!r} in the log, {dict(verdict.values)!r} again",
            )
    return LogCheck(log.path, "agree", "checker", (run,), f"{again} again by {verdict.method}")


def recheck(
    paths: Sequence[str],
    *,
    registry: Mapping[str, Construction],
    solver: str = "cvc5",
    timeout: float = 120.0,
    announce: Announce | None = None,
    progress: RecheckProgress | None = None,
) -> list[LogCheck]:
    """Recheck every log named by ``paths`` (files, or directories searched recursively)."""
    return [
        recheck_log(
            p,
            registry=registry,
            solver=solver,
            timeout=timeout,
            announce=announce,
            progress=progress,
        )
        for p in find_logs(paths)
    ]


def as_json(check: LogCheck) -> dict[str, Any]:
    return {
        "log": check.path,
        "outcome": check.outcome,
        "solver": check.solver,
        "detail": check.detail,
        "queries": [
            {
                "name": q.name,
                "recorded": q.recorded,
                "answer": q.answer,
                "reason": q.reason,
                "seconds": round(q.seconds, 3),
            }
            for q in check.queries
        ],
    }
