"""Proof runs: check the claims of a set of constructions, in worker processes, and collect their
verdicts, records, summary and exit status. :func:`prove` is the library API (``netproof prove``
is a thin caller of it); a notebook or a test proves in three lines:

    from netproof.verifier.campaign import prove
    result = prove(["parity"], claims=["C4"], max_n=6)
    assert result.exit_code == 0, result.summary

How a run is cut into work: a :class:`Task` is a construction (by name, with the raw parameters
and, for a user module or network file, the file it came from) and the indices of some of its
claims. Claims of one construction that evaluate words one by one with the same backend go in
one task, so that they share their traces (:func:`share_key`); the others get a task each, so
that ``jobs`` processes run them side by side, the costliest first (:func:`cost`). A worker runs
:func:`run_task`. Tasks are plain picklable data and :func:`run_task` a module-level function,
so that another executor can run them.

The records are the ones :mod:`netproof.verifier.smt.prooflog` defines (deterministic JSON, no
times), the same the command line prints under ``--json``'s ``"results"``; they are written when
every claim is done.

May import the vocabulary, the engines (the exhaustive checker, the SMT dispatcher; lazily, so
that importing the campaign loads no solver) and the campaign's lower modules.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, assert_never

from netproof.verifier.claims import Claim, Construction, Proved, Refuted, Unknown, Verdict

from .errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, CampaignError
from .sources import Session, parameter_values
from .store import record, write_record

if TYPE_CHECKING:
    from netproof.verifier.smtlib import Outcome

__all__ = [
    "METHODS",
    "ClaimResult",
    "Progress",
    "ProofRun",
    "Task",
    "alphabet_of",
    "claim_bound",
    "cost",
    "exit_code",
    "prove",
    "run_task",
    "share_key",
    "verdict_name",
]

METHODS = ("exhaustive", "smt", "all")
"""How claims may be checked: every word of the bound exactly, solver queries over a symbolic
word, or both (see ``netproof prove --help``)."""


@dataclass(frozen=True)
class Task:
    """Some claims of one construction, for one worker: only names and the raw parameters (the
    worker rebuilds the rest)."""

    construction: str
    given: tuple[tuple[str, str], ...]
    claim_indices: tuple[int, ...]
    max_n: int | None
    module: str | None = None  # the user module or network file the construction comes from, if any
    method: str = "exhaustive"
    timeout: float = 60.0


@dataclass(frozen=True)
class Progress:
    """One finished claim, as :func:`prove` reports it to its ``progress`` callback."""

    construction: str
    claim: str
    verdict: Verdict
    seconds: float
    done: int
    total: int


@dataclass(frozen=True)
class ClaimResult:
    """One claim's verdict with everything needed to show it: the construction, its parsed
    parameters, the claim, the time it took, the bound its verdict covers (None: every length,
    or no words) and its record."""

    construction: Construction
    values: Mapping[str, Any]
    claim: Claim
    verdict: Verdict
    seconds: float
    bound: int | None
    record: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ProofRun:
    """What :func:`prove` returns.

    ``verdicts`` maps (construction name, claim id) to the verdict; ``records`` are the claims'
    records in order (as ``netproof prove --json`` prints them under ``"results"``); ``summary``
    is ``--json``'s ``"summary"`` (``proved``, ``refuted``, ``unknown``, ``seconds``,
    ``exit_code``); ``exit_code`` is 0 (every claim proved), 1 (some claim refuted) or 3 (some
    unknown, none refuted); ``results`` has one :class:`ClaimResult` per claim, in order."""

    verdicts: Mapping[tuple[str, str], Verdict]
    records: tuple[dict[str, Any], ...] = field(repr=False)
    summary: Mapping[str, Any]
    exit_code: int
    results: tuple[ClaimResult, ...] = field(repr=False)
    seconds: float = field(repr=False)


def verdict_name(v: Verdict) -> str:
    """``proved``, ``refuted`` or ``unknown``."""
    match v:
        case Proved():
            return "proved"
        case Refuted():
            return "refuted"
        case Unknown():
            return "unknown"
        case _:
            assert_never(v)


def exit_code(verdicts: Collection[Verdict]) -> int:
    """1 if a verdict is refuted, else 3 if one is unknown, else 0."""
    if any(isinstance(v, Refuted) for v in verdicts):
        return EXIT_REFUTED
    if any(isinstance(v, Unknown) for v in verdicts):
        return EXIT_UNKNOWN
    return EXIT_OK


def claim_bound(claim: Claim, max_n: int | None, verdict: Verdict | None = None) -> int | None:
    """The word-length bound a verdict covers; None for statements without one (lemmas over all
    integers or reals, identities, structural proofs that hold for every length)."""
    from netproof.verifier.claims import BlockIdentity, ExactFact, ForAll, Identity

    if isinstance(claim, (BlockIdentity, Identity, ExactFact, ForAll)):
        return None
    if isinstance(verdict, Proved) and verdict.method.startswith("structural"):
        return None
    return claim.max_len if max_n is None else max_n


def share_key(claim: Claim, idx: int) -> object:
    """Claims of one construction with equal keys run in one task (and share traces)."""
    from netproof.verifier.claims import (
        BlockIdentity,
        ExactFact,
        ForAll,
        Identity,
        PredictsNext,
        Recognizes,
        Simulates,
        SoftAgrees,
        TraceProperty,
    )

    if isinstance(claim, (BlockIdentity, ExactFact, Identity, PredictsNext, SoftAgrees, ForAll, Simulates)):
        return ("alone", idx)  # PredictsNext, SoftAgrees: each walks its own trie of prefixes
    backend = getattr(claim, "backend", "exact")
    if backend == "exact" and isinstance(claim, (Recognizes, TraceProperty)) and getattr(claim, "domain", None) is None:
        return ("alone", idx)  # batched where the network allows it: nothing to share
    return ("backend", backend)


def cost(claim: Claim, max_n: int | None) -> int:
    """A rough cost: words in the bound, times 20 for the backends that leave the rationals."""
    bound = claim_bound(claim, max_n)
    if bound is None:
        return 1
    slow = getattr(claim, "backend", "exact") in ("interval", "sympy")
    return 2 ** min(bound, 30) * (20 if slow else 1)


def alphabet_of(c: Construction, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The symbols a construction's words are written in, for these parameters."""
    net = c.network(values, 0) if c.per_length else c.network(values)
    return net.alphabet


# --------------------------------------------------------------------------- workers

_inherited: Session | None = None
"""The session of the run that forked this worker process (set by the pool's initializer)."""


def _inherit(session: Session) -> None:
    global _inherited
    _inherited = session


def run_task(task: Task, session: Session | None = None) -> list[tuple[Outcome, float]]:
    """Check the claims of one task in this process (claims evaluated with the same backend
    share their traces): each claim's outcome and seconds. The construction comes from
    ``session``, else from the session this worker was forked from, else it is loaded from the
    module or network file the task names. A crash in a checker is reported as unknown, never
    as a pass."""
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.smt.prove import prove_claim
    from netproof.verifier.smtlib import Outcome

    where = session or _inherited or Session()
    c = where.for_task(task.construction, task.module)
    values = c.parse_params(dict(task.given))
    claims = c.claims(values)
    job = Job(c, values)
    out: list[tuple[Outcome, float]] = []
    for idx in task.claim_indices:
        started = time.perf_counter()
        try:
            outcome = prove_claim(job, claims[idx], method=task.method, max_len=task.max_n, timeout=task.timeout)
        except Exception as exc:  # a crash in a checker is reported as Unknown, never as a pass
            outcome = Outcome(Unknown(task.method, f"checker error: {type(exc).__name__}: {exc}"))
        out.append((outcome, time.perf_counter() - started))
    return out


# --------------------------------------------------------------------------- the API


def _as_list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, Construction)):
        return [value]
    try:
        return list(value)
    except TypeError:
        raise CampaignError(
            f"{what}={value!r}: give one name or a list of names (e.g. {what}=['parity', 'first'])"
        ) from None


def _text_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    """Parameter values as the constructions parse them: text (ints and Fractions are written
    as text; a float is refused, since the weights must be exact)."""
    out: dict[str, str] = {}
    for key, value in dict(params or {}).items():
        if isinstance(value, str):
            out[str(key)] = value
        elif isinstance(value, (int, Fraction)) and not isinstance(value, bool):
            out[str(key)] = str(value)
        else:
            raise CampaignError(
                f"params[{key!r}]={value!r}: give parameter values as text, exactly as `-p {key}=...` takes them "
                f"(e.g. '1/10' or 'ln(2)'); a {type(value).__name__} is not accepted"
            )
    return out


def _check_options(method: str, max_n: int | None, timeout: float, jobs: int | None) -> None:
    if method not in METHODS:
        raise CampaignError(f"method={method!r} is not a method; choose one of {', '.join(METHODS)}")
    if isinstance(max_n, bool) or not (max_n is None or isinstance(max_n, int)) or (max_n is not None and max_n < 0):
        raise CampaignError(f"max_n={max_n!r} must be an integer >= 0, or None for each claim's own bound")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise CampaignError(f"timeout={timeout!r} must be > 0 (seconds of solver time per claim)")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise CampaignError(f"jobs={jobs!r} must be an integer >= 1, or None for every core")


def _select_claims(plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]], wanted: list[str]) -> None:
    """Keep only the claims whose id is in ``wanted`` (in place); an id no construction has is
    refused, naming the ids there are."""
    known = list(dict.fromkeys(claim.id for _c, _v, claims in plans for _i, claim in claims))
    for cid in wanted:
        if not isinstance(cid, str) or cid not in known:
            names = ", ".join(dict.fromkeys(c.name for c, _v, _cl in plans))
            raise CampaignError(
                f"claims: {cid!r} is not a claim of {names}; its claims: {', '.join(known)} (see `netproof list`)"
            )
    for _c, _v, claims in plans:
        claims[:] = [(i, claim) for i, claim in claims if claim.id in wanted]


def prove(
    constructions: str | Construction | Sequence[str | Construction] | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    claims: str | Collection[str] | None = None,
    method: str = "exhaustive",
    max_n: int | None = None,
    timeout: float = 60.0,
    jobs: int | None = 1,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[Progress], None] | None = None,
    session: Session | None = None,
) -> ProofRun:
    """Check the claims of ``constructions`` and return their verdicts and records.

    - ``constructions``: built-in names (``"parity"``), user modules (``"mine.py"``,
      ``"mine.py:NAME"``), network files (``"net.json"``) or ``Construction`` objects, one or a
      list; None (or empty): every built-in construction that has all the ``params``.
    - ``params``: parameter values as text (``{"k": "2", "c": "ln(2)"}``), for every
      construction; ints and Fractions are accepted, floats refused.
    - ``claims``: the claim ids to check (None: every claim).
    - ``method``: ``"exhaustive"``, ``"smt"`` or ``"all"``; ``max_n``: every claim's
      word-length bound (None: each claim's own); ``timeout``: solver seconds per claim.
    - ``jobs``: worker processes (None: every core); ``out``: the records' directory (None: no
      files); ``progress``: called with a :class:`Progress` once per finished claim.
    - ``session``: the registry to resolve names in (a fresh one by default).

    Bad input raises :class:`~netproof.verifier.campaign.errors.CampaignError` before anything
    runs. A claim that cannot be decided is an unknown verdict, never an exception.
    """
    _check_options(method, max_n, timeout, jobs)
    given = _text_params(params)
    session = session if session is not None else Session()
    selected = session.select(_as_list(constructions, "constructions"), given)
    plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]] = []
    for c in selected:
        values = parameter_values(c, given)
        plans.append((c, values, list(enumerate(c.claims(values)))))
    if claims is not None:
        _select_claims(plans, _as_list(claims, "claims"))
    return _run(plans, given, session, method=method, max_n=max_n, timeout=timeout, jobs=jobs,
                out=None if out is None else os.fspath(out), progress=progress)


def _run(
    plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]],
    given: Mapping[str, str],
    session: Session,
    *,
    method: str,
    max_n: int | None,
    timeout: float,
    jobs: int | None,
    out: str | None,
    progress: Callable[[Progress], None] | None,
) -> ProofRun:
    # Tasks carry only names, the user's raw parameters and the claims' indices among the
    # construction's claims (the worker rebuilds the rest).
    flat = [(c, values, claim) for c, values, claims in plans for _i, claim in claims]
    base = [0]
    for _c, _v, claims in plans:
        base.append(base[-1] + len(claims))
    tasks: list[tuple[list[Claim], Task, list[int]]] = []
    for p, (c, _values, claims) in enumerate(plans):
        groups: dict[object, list[int]] = {}
        for k, (idx, claim) in enumerate(claims):
            groups.setdefault(share_key(claim, idx), []).append(k)
        source = session.source(c.name)
        for members in groups.values():
            task = Task(c.name, tuple(sorted(given.items())), tuple(claims[k][0] for k in members), max_n,
                        None if source is None else os.path.abspath(source), method, timeout)
            tasks.append(([claims[k][1] for k in members], task, [base[p] + k for k in members]))
    done_verdicts: list[tuple[Verdict, float] | None] = [None] * len(flat)
    outcomes: list[Any] = [None] * len(flat)
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    started = time.perf_counter()

    def report(task_idx: int, done_here: list[tuple[Any, float]]) -> None:
        for flat_idx, (outcome, seconds) in zip(tasks[task_idx][2], done_here, strict=True):
            outcomes[flat_idx] = outcome
            done_verdicts[flat_idx] = (outcome.verdict, seconds)
            if progress is not None:
                c, _values, claim = flat[flat_idx]
                done = sum(r is not None for r in done_verdicts)
                progress(Progress(c.name, claim.id, outcome.verdict, seconds, done, len(flat)))

    if workers == 1 or len(tasks) <= 1:
        for idx, (_claims, task, _flat) in enumerate(tasks):
            report(idx, run_task(task, session))
    else:
        ctx = multiprocessing.get_context("fork")
        # forked workers inherit the session (its user modules and Construction objects)
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_inherit, initargs=(session,)) as pool:
            # Most expensive first, so the long constructions do not start last.
            order = sorted(range(len(tasks)), key=lambda i: -sum(cost(cl, max_n) for cl in tasks[i][0]))
            futures: dict[Future[list[tuple[Any, float]]], int] = {pool.submit(run_task, tasks[i][1]): i for i in order}
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    report(futures[f], f.result())
    elapsed = time.perf_counter() - started

    results: list[ClaimResult] = []
    for (c, values, claim), done_here, outcome in zip(flat, done_verdicts, outcomes, strict=True):
        assert done_here is not None  # every task reported every claim
        verdict, seconds = done_here
        bound = claim_bound(claim, max_n, verdict)
        rec = record(c, values, claim, bound, outcome)
        if out:
            write_record(out, c, values, claim, bound, outcome)
        results.append(ClaimResult(c, values, claim, verdict, seconds, bound, rec))
    verdicts = [r.verdict for r in results]
    code = exit_code(verdicts)
    summary = {
        "proved": sum(isinstance(v, Proved) for v in verdicts),
        "refuted": sum(isinstance(v, Refuted) for v in verdicts),
        "unknown": sum(isinstance(v, Unknown) for v in verdicts),
        "seconds": round(elapsed, 1),
        "exit_code": code,
    }
    return ProofRun(
        verdicts={(r.construction.name, r.claim.id): r.verdict for r in results},
        records=tuple(r.record for r in results),
        summary=summary,
        exit_code=code,
        results=tuple(results),
        seconds=elapsed,
    )
