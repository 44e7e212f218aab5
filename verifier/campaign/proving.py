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
times), the same the command line prints under ``--json``'s ``"results"``. With ``out``, each is
written through the results store (:func:`.store.store`) as soon as its claim is done, so that
an interrupted run keeps every finished claim; a claim whose record under ``out`` already holds
the same network fingerprint, parameters, claim, bound and method is not run again (it comes
back ``cached``) unless ``force``. Tasks start cheapest first, interleaved with the costliest,
so that something finishes early and the long ones do not start last. Ctrl-C (KeyboardInterrupt)
stops the workers (they ignore SIGINT themselves), cancels the tasks not started and raises
:class:`~.errors.Interrupted` with the count of claims done.

Where the work runs is the ``executor`` (:mod:`.executors`): ``local`` (this process, or
``jobs`` forked workers) or ``ray`` (a Ray cluster). On Ray, a large exhaustive claim checked
word by word (at least :data:`SHARD_WORDS` words) is also split into shards by word prefix
(:class:`ShardTask`, :func:`run_shard`; :mod:`netproof.verifier.exhaustive.shards`), about
:data:`SHARDS_PER_CPU` per CPU of the cluster, and its verdict merged from the shards' parts:
the same verdict, count and shortest shortlex-first counterexample as the claim checked whole,
so the records are byte for byte those of a local run.

A claim's check never ends in a verdict by crashing: an exception raised by netproof itself (a
bug: not a usage error, not the user's own claim code) is an :class:`~.errors.InternalError`;
no record is written for that claim and the run stops.

May import the vocabulary, the engines (the exhaustive checker, the SMT dispatcher; lazily, so
that importing the campaign loads no solver) and the campaign's lower modules.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from types import FrameType
from typing import TYPE_CHECKING, Any, assert_never

from netproof.verifier.claims import (
    Claim,
    Construction,
    ExactFact,
    Proved,
    Refuted,
    Unknown,
    Verdict,
    fact_at,
)

from .errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, CampaignError, InternalError, Interrupted
from .executors import EXECUTORS, Work, ray_cluster, require_ray, run_pool, run_ray, run_serial
from .limits import check_bounds
from .selection import select_ids, select_keyword
from .sources import Session, builtin_registry, parameter_values
from .store import claim_has_words, every_length, find_cached, record, store, verdict_of
from .strongest import (
    best_methods,
    every_length_gap,
    every_length_route,
    prove_best,
    with_strongest,
)
from .usermod import claim_code_error

if TYPE_CHECKING:
    from netproof.verifier.exhaustive import Part, Shard
    from netproof.verifier.smtlib import Outcome

__all__ = [
    "EXECUTORS",
    "METHODS",
    "REQUIREMENTS",
    "SHARDS_PER_CPU",
    "SHARD_WORDS",
    "ClaimResult",
    "Progress",
    "ProofRun",
    "Running",
    "ShardTask",
    "Task",
    "alphabet_of",
    "claim_bound",
    "cost",
    "every_length_gap",
    "every_length_route",
    "exit_code",
    "order",
    "prove",
    "prove_best",
    "run_shard",
    "run_task",
    "share_key",
    "verdict_name",
]

METHODS = ("exhaustive", "smt", "all", "best")
"""How claims may be checked: every word of the bound exactly, solver queries over a symbolic
word, both, or per claim the strongest that applies (a proof for every length, else the
exhaustive bound: :func:`prove_best`; see ``netproof prove --help``)."""

REQUIREMENTS = ("every-length",)
"""What ``prove(require=...)`` may ask of every claim besides its verdict."""

SHARD_WORDS = 1 << 12
"""On Ray, an exhaustive claim checked word by word is split into shards when its bound holds
at least this many words (smaller ones run whole, as one task)."""

SHARDS_PER_CPU = 4
"""On Ray, a large claim is split into at least this many shards per CPU of the cluster (so
that workers that finish early take more)."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

STOP = threading.Event()
"""Set by a handler that stops the run (:func:`request_stop`; the command line's SIGTERM
handler): each claim's end and each progress report raise KeyboardInterrupt while it is set, in
case the handler's own interrupt landed where Python ignores exceptions (a finalizer run by the
garbage collector). Cleared as a run starts."""


def request_stop() -> None:
    """Ask the run in progress to stop at its next claim end or progress report."""
    STOP.set()


def _stop_if_asked() -> None:
    if STOP.is_set():
        raise KeyboardInterrupt


@contextmanager
def signals_held() -> Iterator[None]:
    """Within the block, Ctrl-C and SIGTERM wait: their handlers are swapped for one that notes
    the signal, and the noted signal is handed to the handler it would have reached as the block
    ends. So the block is done whole or not begun when the run stops. Signal handlers belong to
    the main thread: elsewhere the block runs unguarded (no signal interrupts it there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    held = [s for s, h in previous.items() if h is not None]  # None: installed outside Python
    for s in held:
        signal.signal(s, note)
    try:
        yield
    finally:
        for s in held:
            signal.signal(s, previous[s])
        for signum in noted[:1]:  # the first one decides, as it would have without the block
            handler = previous[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


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
class ShardTask:
    """One shard of one exhaustive claim, for one worker: the claim's task (its one claim
    index), the bound, and the words of it to check (:class:`~netproof.verifier.exhaustive.Shard`)."""

    task: Task
    bound: int
    shard: Shard


@dataclass(frozen=True)
class Progress:
    """One finished claim, as :func:`prove` reports it to its ``progress`` callback
    (``cached``: its record was reused, nothing ran)."""

    construction: str
    claim: str
    verdict: Verdict
    seconds: float
    done: int
    total: int
    cached: bool = False


@dataclass(frozen=True)
class Running:
    """A claim being checked, as :func:`prove` reports it to its ``running`` callback: ``done``
    of ``total`` words checked (``total`` 0 where the method does not go word by word: a solver
    query, a lemma); ``phase``: what an SMT proof is doing (:mod:`netproof.verifier.smt.phases`:
    ``lemmas 3/9: match1.left``, ``every length: certificate query 'consecution'``), else ""."""

    construction: str
    claim: str
    done: int
    total: int
    phase: str = ""


@dataclass(frozen=True)
class ClaimResult:
    """One claim's verdict with everything needed to show it: the construction, its parsed
    parameters, the claim, the time it took, the bound its verdict covers (None: every length,
    or no words) and its record; ``every_length``: the proof covers every length (see
    :func:`.store.every_length`); ``cached``: the record under ``out`` was reused, nothing ran;
    ``path``: where the record is (None without ``out``); ``kept``: the stronger record that
    was already there and stays (this run's verdict was weaker), else None."""

    construction: Construction
    values: Mapping[str, Any]
    claim: Claim
    verdict: Verdict
    seconds: float
    bound: int | None
    record: dict[str, Any] = field(repr=False)
    every_length: bool = False
    cached: bool = False
    path: str | None = None
    kept: dict[str, Any] | None = field(default=None, repr=False)
    strongest: dict[str, Any] | None = field(default=None, repr=False)
    """A record under ``out`` of the same claim, network and parameters that is stronger than
    this run's (a proof for every length beside this run's bounded one, as the ledger and the
    report show it), else None."""
    strongest_path: str | None = None
    attempts: tuple[str, ...] = ()
    """What ``--method best`` tried before this verdict, one line each (:func:`prove_best`)."""

    @property
    def shown(self) -> dict[str, Any]:
        """The record the tables show: :attr:`strongest` where there is one, else this run's."""
        return self.strongest if self.strongest is not None else self.record

    @property
    def every_length_shown(self) -> bool:
        """Whether the claim is proved for every length, by this run or a record under ``out``."""
        return self.every_length or (self.strongest is not None and every_length(self.strongest))

    def _repr_html_(self) -> str:
        from .report import results_html

        return results_html((self,))


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

    def _repr_html_(self) -> str:
        from .report import results_html

        return results_html(self.results, self.summary)


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


def at_bound(claim: Claim, max_n: int | None) -> Claim:
    """``claim`` as a run to ``max_n`` checks it: a fact about the words of a bound moved to that
    bound (its statement, check and cases with it: :func:`~netproof.verifier.claims.fact_at`);
    every other claim as it is (its bound is the run's, given apart)."""
    return fact_at(claim, max_n) if isinstance(claim, ExactFact) else claim


def claim_bound(claim: Claim, max_n: int | None, verdict: Verdict | None = None) -> int | None:
    """The word-length bound a verdict covers; None for statements without one (lemmas over all
    integers or reals, identities, structural proofs that hold for every length)."""
    from netproof.verifier.claims import BlockIdentity, ForAll, Identity

    if isinstance(claim, ExactFact) and claim.words and not claim.every_length:
        return fact_at(claim, max_n).max_len  # the words of its bound, --max-n's where it can
    if isinstance(claim, (BlockIdentity, Identity, ExactFact, ForAll)):
        return None
    if isinstance(verdict, Proved) and verdict.method.startswith("structural"):
        return None
    return claim.max_len if max_n is None else max_n


def share_key(claim: Claim, idx: int) -> object:
    """Claims of one construction with equal keys run in one task (and share traces)."""
    from netproof.verifier.claims import (
        BlockIdentity,
        ForAll,
        Identity,
        PredictsNext,
        Recognizes,
        Simulates,
        SoftAgrees,
        TraceProperty,
    )

    if isinstance(
        claim, (BlockIdentity, ExactFact, Identity, PredictsNext, SoftAgrees, ForAll, Simulates)
    ):
        return ("alone", idx)  # PredictsNext, SoftAgrees: each walks its own trie of prefixes
    backend = getattr(claim, "backend", "exact")
    if (
        backend == "exact"
        and isinstance(claim, (Recognizes, TraceProperty))
        and getattr(claim, "domain", None) is None
    ):
        return ("alone", idx)  # batched where the network allows it: nothing to share
    return ("backend", backend)


def cost(claim: Claim, max_n: int | None) -> int:
    """A rough cost: words in the bound, times 20 for the backends that leave the rationals."""
    bound = claim_bound(claim, max_n)
    if bound is None:
        return 1
    slow = getattr(claim, "backend", "exact") in ("interval", "sympy")
    words: int = 2 ** min(bound, 30)
    return words * (20 if slow else 1)


def alphabet_of(c: Construction, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The symbols a construction's words are written in, for these parameters."""
    net = c.network(values, 0) if c.per_length else c.network(values)
    return net.alphabet


# --------------------------------------------------------------------------- workers

_inherited: Session | None = None
"""The session of the run that forked this worker process (set by the pool's initializer)."""
_ticks: Any = None
"""The queue this worker reports its :class:`Running` ticks to (set by the pool's initializer)."""

TICK_SECONDS = 0.25
"""At most one :class:`Running` report per claim in this many seconds (besides the first and
the last)."""


def _inherit(session: Session, ticks: Any = None) -> None:
    global _inherited, _ticks
    _inherited = session
    _ticks = ticks
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(
        signal.SIGTERM, signal.SIG_DFL
    )  # the parent's SIGTERM handler is not the worker's: terminate() stops it


def _where(session: Session | None) -> Session:
    """The session a task runs in: the one given, else the one this worker was forked from,
    else a fresh one (a Ray worker: it loads user modules and network files by path for each
    task, since a worker outlives a run and a module may change between runs)."""
    if session is not None:
        return session
    return _inherited if _inherited is not None else Session()


def _failure(
    exc: Exception, c: Construction, claim: Claim, alphabet: Sequence[str], module: str | None
) -> Exception:
    """What an exception raised while checking ``claim`` becomes: the user's error naming their
    file, line and word (an exception in their own claim code), a usage error as it is, or an
    :class:`~.errors.InternalError` (a crash in netproof itself: never a verdict; among them a
    solver call that crashed twice, :class:`~netproof.verifier.smtlib.SolverCrashed`, and an
    encoding that disagrees with the exact interpreter, ``EncoderBugError``)."""
    from netproof.verifier.smt.errors import EncoderBugError
    from netproof.verifier.smtlib import SolverCrashed

    if isinstance(exc, (SolverCrashed, EncoderBugError)):
        return InternalError(
            f"{type(exc).__name__}: {exc} (while checking claim {claim.id!r} of {c.name})"
        )
    users = claim_code_error(exc, c.name, claim.id, tuple(alphabet), module)
    if users is not None:
        return users
    if isinstance(exc, CampaignError):
        return exc
    return InternalError(
        f"{type(exc).__name__}: {exc} (while checking claim {claim.id!r} of {c.name})"
    )


def _words_of(job: Any, claim: Claim, max_n: int | None) -> int:
    """The number of words an exhaustive check of ``claim`` goes through (0 where it has no
    words)."""
    from netproof.verifier.exhaustive.checker import count_words

    bound = claim_bound(claim, max_n)
    if bound is None or not claim_has_words(claim):
        return 0
    return count_words(job.alphabet, claim.min_len, bound)


def run_task(
    task: Task, session: Session | None = None, running: Callable[[Running], None] | None = None
) -> list[tuple[Outcome, float]]:
    """Check the claims of one task in this process (claims evaluated with the same backend
    share their traces): each claim's outcome and seconds. The construction comes from
    ``session``, else from the session this worker was forked from, else it is loaded from the
    module or network file the task names. A crash in a checker is an
    :class:`~.errors.InternalError`, never a verdict; an exception raised in the user's own code
    (an ``expected=`` function, a language's ``contains``) is a :class:`~.usermod.UserModuleError`
    naming their file, line and word (:func:`~.usermod.claim_code_error`); either way the run
    stops without a record of that claim.
    ``running`` (else the queue of the pool this worker belongs to, if any) hears a
    :class:`Running` as each claim starts and, for exhaustive checks, as its words go by (at
    most every :data:`TICK_SECONDS`)."""
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.smt.phases import listening

    c = _where(session).for_task(task.construction, task.module)
    values = c.parse_params(dict(task.given))
    claims = c.claims(values)
    job = Job(c, values)
    send = running if running is not None else (None if _ticks is None else _ticks.put)
    out: list[tuple[Outcome, float]] = []
    for idx in task.claim_indices:
        claim = claims[idx]
        started = time.perf_counter()
        tick = None if send is None else _throttled(send, c.name, claim.id)
        try:
            if tick is not None:
                tick(0, _words_of(job, claim, task.max_n) if task.method == "exhaustive" else 0)
            hear = nullcontext() if send is None else listening(_phases(send, c.name, claim.id))
            with hear:
                outcome = _run_claim(task, job, c, values, claim, tick)
        except Exception as exc:
            failure = _failure(exc, c, claim, job.alphabet, task.module)
            raise failure from (exc if isinstance(failure, InternalError) else None)
        out.append((outcome, time.perf_counter() - started))
    return out


def _run_claim(
    task: Task,
    job: Any,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    tick: Callable[[int, int], None] | None,
) -> Outcome:
    """One claim of :func:`run_task` by the task's method."""
    from netproof.verifier.exhaustive.checker import check
    from netproof.verifier.smt.prove import prove_claim
    from netproof.verifier.smtlib import Outcome

    if task.method == "best":
        outcome = prove_best(
            job,
            c,
            values,
            claim,
            max_n=task.max_n,
            timeout=task.timeout,
            progress=tick,
            bound_of=claim_bound,
        )
    elif task.method == "exhaustive" and tick is not None:
        log: list[Any] = []  # as prove_claim's exhaustive method, with the words' progress
        outcome = Outcome(
            check(job, claim, max_len=task.max_n, queries=log, progress=tick), tuple(log)
        )
    else:
        outcome = prove_claim(
            job, claim, method=task.method, max_len=task.max_n, timeout=task.timeout
        )
    return outcome


def _phases(
    send: Callable[[Running], None], construction: str, claim: str
) -> Callable[[str], None]:
    """A listener of :mod:`netproof.verifier.smt.phases` that sends a :class:`Running` with the
    phase: each new phase, except one that comes less than :data:`TICK_SECONDS` after the last
    one sent (dropped: a display shows a phase at most that often anyway)."""
    last_time, last_text = -TICK_SECONDS, ""

    def heard(text: str) -> None:
        nonlocal last_time, last_text
        now = time.monotonic()
        if text != last_text and now - last_time >= TICK_SECONDS:
            last_time, last_text = now, text
            send(Running(construction, claim, 0, 0, text))

    return heard


def run_shard(item: ShardTask, session: Session | None = None) -> tuple[Part, float]:
    """Check the one claim of ``item.task`` on the words of ``item.shard`` alone (for a worker
    that takes a shard of a large exhaustive claim): what it found there
    (:class:`~netproof.verifier.exhaustive.Part`) and the seconds it took. Errors as in
    :func:`run_task`."""
    from netproof.verifier.exhaustive import Job, check_part

    task = item.task
    c = _where(session).for_task(task.construction, task.module)
    values = c.parse_params(dict(task.given))
    claim = c.claims(values)[task.claim_indices[0]]
    job = Job(c, values)
    started = time.perf_counter()
    try:
        part = check_part(job, claim, item.bound, item.shard)
    except Exception as exc:
        failure = _failure(exc, c, claim, job.alphabet, task.module)
        raise failure from (exc if isinstance(failure, InternalError) else None)
    return part, time.perf_counter() - started


def _throttled(
    send: Callable[[Running], None], construction: str, claim: str
) -> Callable[[int, int], None]:
    """A checker's ``progress(done, total)`` that sends a :class:`Running` at the start, at the
    end, and at most every :data:`TICK_SECONDS` in between."""
    last = [-TICK_SECONDS]

    def tick(done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0 or done == total or now - last[0] >= TICK_SECONDS:
            last[0] = now
            send(Running(construction, claim, done, total))

    return tick


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


def _check_options(
    method: str,
    max_n: int | None,
    timeout: float,
    jobs: int | None,
    executor: str = "local",
    address: str | None = None,
) -> None:
    if method not in METHODS:
        raise CampaignError(
            f"method={method!r} is not a method; choose one of {', '.join(METHODS)}"
        )
    if (
        isinstance(max_n, bool)
        or not (max_n is None or isinstance(max_n, int))
        or (max_n is not None and max_n < 0)
    ):
        raise CampaignError(
            f"max_n={max_n!r} must be an integer >= 0, or None for each claim's own bound"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise CampaignError(f"timeout={timeout!r} must be > 0 (seconds of solver time per claim)")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise CampaignError(f"jobs={jobs!r} must be an integer >= 1, or None for every core")
    if executor not in EXECUTORS:
        raise CampaignError(
            f"executor={executor!r} is not an executor; choose one of {', '.join(EXECUTORS)}"
        )
    if address is not None and (
        executor != "ray" or not isinstance(address, str) or not address.strip()
    ):
        raise CampaignError(
            f"address={address!r} is a Ray cluster's address (e.g. '127.0.0.1:6379'); give it with executor='ray' only"
        )
    if executor == "ray":
        require_ray()


def prove(
    constructions: str | Construction | Sequence[str | Construction] | None = None,
    *,
    params: Mapping[str, Any] | None = None,
    claims: str | Collection[str] | None = None,
    keyword: str | None = None,
    method: str = "exhaustive",
    max_n: int | None = None,
    timeout: float = 60.0,
    jobs: int | None = 1,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[Progress], None] | None = None,
    session: Session | None = None,
    force: bool = False,
    running: Callable[[Running], None] | None = None,
    executor: str = "local",
    address: str | None = None,
    require: str | None = None,
) -> ProofRun:
    """Check the claims of ``constructions`` and return their verdicts and records.

    - ``constructions``: built-in names (``"parity"``), user modules (``"mine.py"``,
      ``"mine.py:NAME"``), network files (``"net.json"``) or ``Construction`` objects, one or a
      list; None (or empty): every built-in construction that has all the ``params``.
    - ``params``: parameter values as text (``{"k": "2", "c": "ln(2)"}``), for every
      construction; ints and Fractions are accepted, floats refused.
    - ``claims``: the claim ids to check (None: every claim); ``keyword``: a pytest-like
      ``-k`` expression over claim ids and construction names (:mod:`.selection`), e.g.
      ``"dyck and not Y5"``; a claim must pass both.
    - ``method``: ``"exhaustive"``, ``"smt"``, ``"all"`` or ``"best"`` (per claim, a proof for
      every length where one can be had, else the exhaustive bound: :func:`prove_best`);
      ``max_n``: every claim's word-length bound (None: each claim's own); ``timeout``: solver
      seconds per claim.
    - ``require``: ``"every-length"`` makes the exit code 3 (unknown) where every verdict is
      proved but some claim with words is proved within its bound only
      (:func:`every_length_gap` says why, per claim; ``summary["not_every_length"]`` counts them).
    - ``jobs``: worker processes (None: every core); ``out``: the records' directory (None: no
      files; each record is written as its claim is done); ``progress``: called with a
      :class:`Progress` once per finished claim.
    - ``session``: the registry to resolve names in (a fresh one by default).
    - ``running``: called with a :class:`Running` as each claim starts and, for exhaustive
      checks, as its words go by (a few times a second; also from worker processes).
    - ``force``: run every claim even where ``out`` holds its record for the same network,
      parameters, claim, bound and method (by default that record is reused: ``cached``).
    - ``executor``: ``"local"`` (this machine: ``jobs`` processes) or ``"ray"`` (a Ray cluster:
      every task a Ray task, large exhaustive claims split into shards by word prefix; ``jobs``
      is not used); ``address``: the Ray cluster's address (None: the cluster this process is
      connected to, else a Ray instance on this machine for the run). Ray is the extra
      ``netproof[ray]``. The records are the same, byte for byte, whichever executor ran them.

    Bad input raises :class:`~netproof.verifier.campaign.errors.CampaignError` before anything
    runs. A claim that cannot be decided is an unknown verdict, never an exception; a crash in
    netproof itself raises :class:`~netproof.verifier.campaign.errors.InternalError` (no
    record of that claim). Ctrl-C raises :class:`~netproof.verifier.campaign.errors.Interrupted`
    once the workers are stopped; the records of the claims done are kept.
    """
    _check_options(method, max_n, timeout, jobs, executor, address)
    if require is not None and require not in REQUIREMENTS:
        raise CampaignError(
            f"require={require!r} is not a requirement; choose one of {', '.join(REQUIREMENTS)} (or None)"
        )
    given = _text_params(params)
    session = session if session is not None else Session()
    selected = session.select(_as_list(constructions, "constructions"), given)
    plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]] = []
    for c in selected:
        values = parameter_values(c, given)
        plans.append(
            (c, values, [(i, at_bound(cl, max_n)) for i, cl in enumerate(c.claims(values))])
        )
    if claims is not None:
        select_ids(plans, _as_list(claims, "claims"))
    if keyword is not None:
        select_keyword(plans, keyword)
    check_bounds(plans, method=method, max_n=max_n)
    return _run(
        plans,
        given,
        session,
        method=method,
        max_n=max_n,
        timeout=timeout,
        jobs=jobs,
        out=None if out is None else os.fspath(out),
        progress=progress,
        force=bool(force),
        running=running,
        executor=executor,
        address=address,
        require=require,
    )


def order(costs: Sequence[int]) -> list[int]:
    """The order to start tasks of these costs in: the cheapest, the costliest, the next
    cheapest, the next costliest, ... (something finishes early, the long ones start early)."""
    by_cost = sorted(range(len(costs)), key=lambda i: (costs[i], i))
    out: list[int] = []
    lo, hi = 0, len(by_cost) - 1
    while lo <= hi:
        out.append(by_cost[lo])
        if hi != lo:
            out.append(by_cost[hi])
        lo, hi = lo + 1, hi - 1
    return out


def methods_writing(
    claim: Claim,
    method: str,
    alphabet: Sequence[str],
    bound: int | None,
    c: Construction | None = None,
    values: Mapping[str, Any] | None = None,
) -> frozenset[str]:
    """The methods (as :func:`~netproof.verifier.campaign.store.recorded_method` reads them off a
    record) whose record a run with ``--method method`` would write for ``claim`` at ``bound``, so
    a rerun reuses it: a lemma over the integers is one z3 query whatever the method; ``all``
    checks a claim the smt method does not cover exhaustively, and a bound of more than
    :data:`~netproof.verifier.smt.prove.EXHAUSTIVE_WORDS` words by smt alone."""
    from netproof.verifier.claims import BlockIdentity
    from netproof.verifier.exhaustive.checker import count_words
    from netproof.verifier.smt.prove import EXHAUSTIVE_WORDS, smt_applicable

    if isinstance(claim, BlockIdentity):
        return frozenset({"exhaustive"})
    if method == "best":
        return best_methods(claim, c, values)
    if method != "all":
        return frozenset({method})
    if not smt_applicable(claim):
        return frozenset({"exhaustive"})
    if (
        bound is not None
        and alphabet
        and count_words(alphabet, claim.min_len, bound) > EXHAUSTIVE_WORDS
    ):
        return frozenset({"smt"})
    return frozenset({"all"})


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
    force: bool = False,
    running: Callable[[Running], None] | None = None,
    executor: str = "local",
    address: str | None = None,
    require: str | None = None,
) -> ProofRun:
    # Tasks carry only names, the user's raw parameters and the claims' indices among the
    # construction's claims (the worker rebuilds the rest).
    flat = [(c, values, claim) for c, values, claims in plans for _i, claim in claims]
    base = [0]
    for _c, _v, claims in plans:
        base.append(base[-1] + len(claims))
    results: list[ClaimResult | None] = [None] * len(flat)
    total = len(flat)
    done_count = [0]

    def announce(flat_idx: int, *, counted: bool = False) -> None:
        if not counted:
            done_count[0] += 1
        r = results[flat_idx]
        assert r is not None
        if progress is not None:
            progress(
                Progress(
                    r.construction.name,
                    r.claim.id,
                    r.verdict,
                    r.seconds,
                    done_count[0],
                    total,
                    r.cached,
                )
            )

    STOP.clear()
    if running is not None:
        shown = running

        def running(r: Running) -> None:
            _stop_if_asked()
            shown(r)

    started = time.perf_counter()
    cached_here: list[int] = []
    if out and not force:
        for flat_idx, (c, values, claim) in enumerate(flat):
            bound = claim_bound(claim, max_n)
            hit = find_cached(
                out,
                c,
                values,
                claim,
                (bound, None) if claim_has_words(claim) and bound is not None else (bound,),
                methods_writing(
                    claim,
                    method,
                    alphabet_of(c, values) if method == "all" else (),
                    bound,
                    c,
                    values,
                ),
            )
            if hit is not None:
                path, rec = hit
                verdict = verdict_of(rec, alphabet_of(c, values))
                results[flat_idx] = ClaimResult(
                    c,
                    values,
                    claim,
                    verdict,
                    0.0,
                    claim_bound(claim, max_n, verdict),
                    rec,
                    every_length(rec),
                    True,
                    path,
                )
                cached_here.append(flat_idx)
    tasks: list[tuple[list[Claim], Task, list[int]]] = []
    for p, (c, _values, claims) in enumerate(plans):
        groups: dict[object, list[int]] = {}
        for k, (idx, claim) in enumerate(claims):
            if results[base[p] + k] is None:
                groups.setdefault(share_key(claim, idx), []).append(k)
        source = session.source(c.name)
        for members in groups.values():
            task = Task(
                c.name,
                tuple(sorted(given.items())),
                tuple(claims[k][0] for k in members),
                max_n,
                None if source is None else os.path.abspath(source),
                method,
                timeout,
            )
            tasks.append(([claims[k][1] for k in members], task, [base[p] + k for k in members]))
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    for flat_idx in cached_here:
        announce(flat_idx)

    def settle(flat_idx: int, outcome: Outcome, seconds: float) -> None:
        c, values, claim = flat[flat_idx]
        verdict = outcome.verdict
        bound = claim_bound(claim, max_n, verdict)
        rec = record(c, values, claim, bound, outcome)
        path, kept = None, None
        # The record made visible and the claim counted done are one step to an interrupt: a
        # Ctrl-C or SIGTERM arriving in between would report one claim fewer than the records
        # on disk.
        with signals_held():
            if out:
                stored = store(out, c, values, claim, bound, outcome)
                path, kept = stored.path, stored.kept
            made = ClaimResult(
                c, values, claim, verdict, seconds, bound, rec, every_length(rec), False, path, kept
            )
            results[flat_idx] = dataclasses.replace(made, attempts=outcome.attempts)
            done_count[0] += 1
        announce(flat_idx, counted=True)
        _stop_if_asked()

    def report(task_idx: int, done_here: list[tuple[Any, float]]) -> None:
        for flat_idx, (outcome, seconds) in zip(tasks[task_idx][2], done_here, strict=True):
            settle(flat_idx, outcome, seconds)

    try:
        if executor == "ray":
            with ray_cluster(address) as cpus:
                _run_ray(tasks, flat, session, max_n, cpus * SHARDS_PER_CPU, settle, running)
        else:
            schedule = order([sum(cost(cl, max_n) for cl in t[0]) for t in tasks])
            if workers == 1 or len(tasks) <= 1:
                run_serial([(run_task, (t[1], session, running)) for t in tasks], schedule, report)
            else:
                _run_pool(tasks, schedule, workers, session, report, running)
    except KeyboardInterrupt:
        raise Interrupted(done_count[0], total) from None
    elapsed = time.perf_counter() - started

    assert all(r is not None for r in results)  # every task reported every claim
    finished = [r for r in results if r is not None]
    if out:
        finished = [with_strongest(out, r) for r in finished]
    verdicts = [r.verdict for r in finished]
    code = exit_code(verdicts)
    short = [r for r in finished if isinstance(r.verdict, Proved) and every_length_gap(r)]
    if require == "every-length" and code == EXIT_OK and short:
        code = EXIT_UNKNOWN
    summary = {
        "proved": sum(isinstance(v, Proved) for v in verdicts),
        "refuted": sum(isinstance(v, Refuted) for v in verdicts),
        "unknown": sum(isinstance(v, Unknown) for v in verdicts),
        "seconds": round(elapsed, 1),
        "exit_code": code,
        "cached": sum(r.cached for r in finished),
    }
    if require is not None:
        summary["not_every_length"] = len(short)
    return ProofRun(
        verdicts={(r.construction.name, r.claim.id): r.verdict for r in finished},
        records=tuple(r.record for r in finished),
        summary=summary,
        exit_code=code,
        results=tuple(finished),
        seconds=elapsed,
    )


def _run_pool(
    tasks: Sequence[tuple[list[Claim], Task, list[int]]],
    schedule: Sequence[int],
    workers: int,
    session: Session,
    report: Callable[[int, list[tuple[Any, float]]], None],
    running: Callable[[Running], None] | None = None,
) -> None:
    """Run the tasks in forked worker processes (:func:`.executors.run_pool`; they inherit the
    session and ignore SIGINT), reporting each as it finishes (and the workers' :class:`Running`
    ticks, through a queue, to ``running``)."""
    ctx = multiprocessing.get_context("fork")
    ticks = ctx.SimpleQueue() if running is not None else None

    def drain() -> None:
        while ticks is not None and running is not None and not ticks.empty():
            running(ticks.get())

    work: list[Work] = [(run_task, (t[1],)) for t in tasks]
    run_pool(
        work,
        schedule,
        workers,
        report,
        initializer=_inherit,
        initargs=(session, ticks),
        poll=drain if ticks is not None else None,
    )


def _shipped(
    session: Session, tasks: Sequence[tuple[list[Claim], Task, list[int]]]
) -> Session | None:
    """What a Ray worker needs of this session: the ``Construction`` objects given directly
    (no file to load them from), in a session of their own; None when there are none (a worker
    makes its own session and loads user modules and network files by path)."""
    direct = [t.construction for _claims, t, _flat in tasks if t.module is None]
    objects = [session.construction(name) for name in dict.fromkeys(direct)]
    registry = builtin_registry()
    objects = [c for c in objects if registry.get(c.name) is not c]
    if not objects:
        return None
    shipped = Session()
    for c in objects:
        shipped.add(c)
    return shipped


def _run_ray(
    tasks: Sequence[tuple[list[Claim], Task, list[int]]],
    flat: Sequence[tuple[Construction, dict[str, Any], Claim]],
    session: Session,
    max_n: int | None,
    pieces: int,
    settle: Callable[[int, Outcome, float], None],
    running: Callable[[Running], None] | None,
) -> None:
    """Run the tasks as Ray tasks; an exhaustive claim checked word by word with at least
    :data:`SHARD_WORDS` words leaves its task and goes in about ``pieces`` shards
    (:func:`run_shard`), its verdict merged from their parts once all are back."""
    from netproof.verifier.exhaustive import merge, prefix_length, shardable, split
    from netproof.verifier.exhaustive.checker import count_words
    from netproof.verifier.smtlib import Outcome

    shipped = _shipped(session, tasks)
    work: list[Work] = []
    costs: list[int] = []
    whole: dict[int, list[int]] = {}  # work index -> the claims (flat indices) of a whole task
    sharded: dict[int, _Sharded] = {}  # work index -> the claim it is a shard of
    for claims, task, flat_idx in tasks:
        keep: list[int] = []
        for k, claim in enumerate(claims):
            c, values, _claim = flat[flat_idx[k]]
            bound = claim_bound(claim, max_n)
            alphabet = alphabet_of(c, values) if bound is not None and shardable(claim) else ()
            words = (
                count_words(alphabet, claim.min_len, bound) if alphabet and bound is not None else 0
            )
            if task.method != "exhaustive" or bound is None or words < SHARD_WORDS:
                keep.append(k)
                continue
            one = Task(
                task.construction,
                task.given,
                (task.claim_indices[k],),
                task.max_n,
                task.module,
                task.method,
                task.timeout,
            )
            shards = split(
                alphabet,
                claim.min_len,
                bound,
                prefix_length(alphabet, claim.min_len, bound, pieces),
            )
            state = _Sharded(flat_idx[k], bound, alphabet, len(shards), words)
            if running is not None:
                running(Running(c.name, claim.id, 0, words))  # announced as it goes out
            for shard in shards:
                sharded[len(work)] = state
                work.append((run_shard, (ShardTask(one, bound, shard), shipped)))
                costs.append(shard.count(alphabet))
        if keep:
            rest = Task(
                task.construction,
                task.given,
                tuple(task.claim_indices[k] for k in keep),
                task.max_n,
                task.module,
                task.method,
                task.timeout,
            )
            whole[len(work)] = [flat_idx[k] for k in keep]
            work.append((run_task, (rest, shipped)))
            costs.append(sum(cost(claims[k], max_n) for k in keep))

    def back(w_idx: int, result: Any) -> None:
        if w_idx in whole:
            for flat_i, (outcome, seconds) in zip(whole[w_idx], result, strict=True):
                settle(flat_i, outcome, seconds)
            return
        state = sharded[w_idx]
        part, took = result
        state.parts.append(part)
        state.seconds += took
        state.done += costs[w_idx]
        c, _values, claim = flat[state.flat]
        if running is not None:
            running(Running(c.name, claim.id, state.done, state.words))
        if len(state.parts) == state.count:
            settle(
                state.flat,
                Outcome(merge(claim, state.alphabet, state.bound, state.parts)),
                state.seconds,
            )

    run_ray(work, order(costs), back)


@dataclass
class _Sharded:
    """A claim checked in shards on Ray, while their parts come back."""

    flat: int
    bound: int
    alphabet: tuple[str, ...]
    count: int
    words: int
    parts: list[Part] = field(default_factory=list)
    seconds: float = 0.0
    done: int = 0
