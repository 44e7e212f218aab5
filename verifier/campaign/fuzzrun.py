"""Fuzz runs: search every claim of a set of constructions for a counterexample with hypothesis
(evidence, never proof), and keep one log per claim. ``netproof fuzz`` is a thin caller of
:func:`fuzz_claims`.

Each claim gets :func:`netproof.verifier.fuzzing.fuzz.fuzz`'s verdict: refuted (a shrunk word,
replayed with the exact checker), "no counterexample found", or "not fuzzable" (a claim that is
not checked word by word). With ``backend="torch"`` a recognizer's long words run in floats and
every doubtful word is re-checked exactly; a construction the torch backend does not compile is
fuzzed exactly, and its log says so. The logs are proof records (:mod:`.store`) with
``"kind": "fuzz"``, the verdict text and the search budget.

With ``jobs`` above 1 each fuzzable claim's examples are spread over that many forked worker
processes (:mod:`netproof.verifier.fuzzing.shards`: shard 0 searches as a one-process run would,
the others with seeds derived from the run's); the verdicts are merged into one, the shortest
counterexample of any shard winning, so a seeded run reports the same word however the shards
are scheduled. ``trying`` hears each claim's examples tried of its total as the search goes
(also from the workers, through a queue); ``progress`` hears each finished claim.

May import the vocabulary, the engines (the exhaustive checker's ``Job``, the fuzzer, the torch
backend; lazily) and the campaign's lower modules.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netproof.symbolic import Network, SymbolicError, render
from netproof.verifier.claims import Claim, Construction, Refuted, Unknown, Verdict

from .errors import EXIT_OK, EXIT_REFUTED, CampaignError
from .proving import alphabet_of
from .sources import parameter_values
from .store import dumps, record, record_path, write_atomic

__all__ = ["FuzzResult", "FuzzRun", "Trying", "fuzz_claims", "fuzz_verdict_name"]


@dataclass(frozen=True)
class FuzzResult:
    """One claim's fuzz verdict, the seconds it took, the float issues a torch run met (words
    where only the float run failed: not counterexamples) and its log."""

    construction: Construction
    values: Mapping[str, Any]
    claim: Claim
    verdict: Verdict
    seconds: float
    float_issues: tuple[Any, ...]
    record: dict[str, Any] = field(repr=False)

    def _repr_html_(self) -> str:
        from .report import results_html

        return results_html((self,))


@dataclass(frozen=True)
class FuzzRun:
    """What :func:`fuzz_claims` returns: one :class:`FuzzResult` per claim, in order, and the exit
    status (1 if a claim is refuted, else 0)."""

    results: tuple[FuzzResult, ...]
    exit_code: int

    def _repr_html_(self) -> str:
        from .report import results_html

        return results_html(self.results)

    @property
    def records(self) -> list[dict[str, Any]]:
        """The logs, as ``netproof fuzz --json`` prints them under ``"results"``."""
        return [r.record for r in self.results]


@dataclass(frozen=True, slots=True)
class Trying:
    """A claim being fuzzed: ``done`` examples tried of its ``total`` (the budget; a search that
    finds a failing word stops early, one whose strategy runs out of words may too)."""

    construction: str
    claim: str
    done: int
    total: int


TICK_SECONDS = 0.25
"""At most one :class:`Trying` per claim (per worker) in this many seconds, besides the first."""


def fuzz_verdict_name(v: Verdict) -> str:
    """``refuted``, ``not fuzzable``, ``no counterexample found`` or ``unknown``."""
    if isinstance(v, Refuted):
        return "refuted"
    if isinstance(v, Unknown) and v.reason.startswith("not fuzzable"):
        return "not fuzzable"
    if isinstance(v, Unknown) and v.reason.startswith("no counterexample found"):
        return "no counterexample found"
    return "unknown"


def _torch_unsupported(
    selected: Sequence[Construction],
    given: Mapping[str, str],
    on_unsupported: Callable[[Construction, str], None] | None,
) -> dict[str, str]:
    """The constructions whose network the torch backend does not compile (a recurrent network,
    an encoder–decoder), with the reason; torch itself, the device and the dtype fail here, on
    the first network it compiles, before any search."""
    from netproof.symbolic import torch_backend

    unsupported: dict[str, str] = {}
    compiled_one = False
    for c in selected:
        values = parameter_values(c, given)
        net = c.network(values, 1) if c.per_length else c.network(values)
        reason = torch_backend.unsupported(net)
        if reason is not None:
            unsupported[c.name] = reason
            if on_unsupported is not None:
                on_unsupported(c, reason)
        elif not compiled_one and isinstance(net, Network):  # unsupported() refused the others
            try:
                torch_backend.compile(net)
            except SymbolicError as exc:
                raise CampaignError(f"{type(exc).__name__}: {exc}") from None
            compiled_one = True
    return unsupported


def fuzz_claims(
    selected: Sequence[Construction],
    given: Mapping[str, str],
    *,
    examples: int,
    max_len: int,
    seed: int | None = None,
    derandomize: bool = False,
    database: str = "",
    use_database: bool = True,
    backend: str = "exact",
    out: str | None = None,
    on_unsupported: Callable[[Construction, str], None] | None = None,
    progress: Callable[[FuzzResult], None] | None = None,
    jobs: int = 1,
    trying: Callable[[Trying], None] | None = None,
) -> FuzzRun:
    """Fuzz every claim of ``selected`` (parameters ``given`` as text) and write one log per claim
    under ``out`` (None or ``""``: no files).

    ``examples`` words per claim, up to ``max_len`` symbols (at least the claim's minimum);
    ``seed`` reproduces a run and ``derandomize`` draws the same examples every time; failing
    examples are kept in ``database`` (``""``: hypothesis's default directory) unless
    ``use_database`` is false. ``backend`` is ``"exact"`` or ``"torch"``; ``on_unsupported`` hears
    of each construction torch cannot compile, ``progress`` of each finished claim, ``trying`` of
    the examples tried. ``jobs`` worker processes share each claim's examples (1: this process).
    """
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.fuzzing.fuzz import fuzzable

    if examples < 1:
        raise CampaignError(f"examples={examples} must be >= 1")
    if max_len < 0:
        raise CampaignError(f"max_len={max_len} must be >= 0")
    if backend not in ("exact", "torch"):
        raise CampaignError(f"backend={backend!r}: fuzz with 'exact' or 'torch'")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise CampaignError(f"jobs={jobs!r} must be an int >= 1 (worker processes)")
    torch_unsupported = (
        _torch_unsupported(selected, given, on_unsupported) if backend == "torch" else {}
    )
    claims: list[_Claim] = []
    for c in selected:
        values = parameter_values(c, given)
        job = Job(c, values)
        kwargs: dict[str, Any] = {
            "max_len": max_len,
            "backend": "exact" if c.name in torch_unsupported else backend,
        }
        if use_database and database:
            kwargs["database"] = database
        elif not use_database:
            kwargs["database"] = None
        for claim in c.claims(values):
            claims.append(_Claim(c, values, job, claim, fuzzable(claim) is None, kwargs))
    settings = (examples, seed, derandomize)
    results: list[FuzzResult | None] = [None] * len(claims)

    def finish(i: int, verdict: Verdict, issues: Sequence[Any], seconds: float) -> None:
        result = _result(claims[i], verdict, issues, seconds, backend, torch_unsupported, settings)
        results[i] = result
        if progress is not None:
            progress(result)

    if jobs == 1:
        for i, cl in enumerate(claims):
            started = time.perf_counter()
            send = None if trying is None or not cl.fuzzable else _throttled(trying, cl, examples)
            verdict, issues = _search(cl, examples, seed, derandomize, send)
            finish(i, verdict, issues, time.perf_counter() - started)
    else:
        _fuzz_pool(claims, settings, jobs, finish, trying)
    done = tuple(r for r in results if r is not None)
    if out:  # the logs are written once every claim is done
        for r in done:
            write_atomic(
                record_path(out, r.construction, r.values, r.claim, None, kind="fuzz"),
                dumps(r.record),
            )
    code = EXIT_REFUTED if any(isinstance(r.verdict, Refuted) for r in done) else EXIT_OK
    return FuzzRun(done, code)


@dataclass(frozen=True)
class _Claim:
    """A claim to fuzz: its construction, parameters, job, whether it is searched word by word,
    and the arguments of :func:`~netproof.verifier.fuzzing.fuzz.fuzz` besides budget and seed."""

    construction: Construction
    values: Mapping[str, Any]
    job: Any
    claim: Claim
    fuzzable: bool
    kwargs: Mapping[str, Any]


def _throttled(trying: Callable[[Trying], None], cl: _Claim, total: int) -> Callable[[int], None]:
    """``tried(k)`` for the fuzzer, sending a :class:`Trying` at 0 (at once) and then at most
    every :data:`TICK_SECONDS`."""
    last = [time.monotonic()]
    trying(Trying(cl.construction.name, cl.claim.id, 0, total))

    def tried(k: int) -> None:
        now = time.monotonic()
        if k >= total or now - last[0] >= TICK_SECONDS:
            last[0] = now
            trying(Trying(cl.construction.name, cl.claim.id, k, total))

    return tried


def _search(
    cl: _Claim,
    examples: int,
    seed: int | None,
    derandomize: bool,
    tried: Callable[[int], None] | None,
) -> tuple[Verdict, list[Any]]:
    """One search of a claim (or of one shard of it): the verdict and the float issues met."""
    from netproof.verifier.fuzzing.fuzz import FuzzError, fuzz

    if not cl.fuzzable:
        return fuzz(cl.job, cl.claim), []
    issues: list[Any] = []
    kwargs = dict(cl.kwargs)
    kwargs["max_len"] = max(kwargs["max_len"], cl.claim.min_len)
    try:
        verdict = fuzz(
            cl.job,
            cl.claim,
            examples=examples,
            seed=seed,
            derandomize=derandomize,
            on_float_issue=issues.append,
            tried=tried,
            **kwargs,
        )
    except FuzzError as exc:
        raise CampaignError(str(exc)) from None
    return verdict, issues


def _result(
    cl: _Claim,
    verdict: Verdict,
    issues: Sequence[Any],
    seconds: float,
    backend: str,
    torch_unsupported: Mapping[str, str],
    settings: tuple[int, int | None, bool],
) -> FuzzResult:
    """A claim's :class:`FuzzResult` and its log."""
    c, values, claim = cl.construction, cl.values, cl.claim
    examples, seed, derandomize = settings
    rec = record(c, values, claim, None, verdict)
    rec["verdict"] = fuzz_verdict_name(verdict)
    rec["kind"] = "fuzz"
    rec["budget"] = {
        "examples": examples,
        "max_len": cl.kwargs["max_len"],
        "seed": seed,
        "derandomized": derandomize,
    }
    if backend == "torch" and c.name in torch_unsupported:
        rec["backend"] = "exact"
        rec["torch_unsupported"] = torch_unsupported[c.name]
    elif backend == "torch":
        rec["backend"] = "torch"
        rec["float_issues"] = [
            {"word": render(alphabet_of(c, values), i.word), "detail": i.detail} for i in issues
        ]
    return FuzzResult(c, values, claim, verdict, seconds, tuple(issues), rec)


# --------------------------------------------------------------------------- worker processes

_shards: Sequence[tuple[_Claim, int, int | None, bool]] = ()
"""This worker's view of the run: per shard, its claim, budget, seed and derandomize flag (set
by the pool's initializer; forked, so nothing is pickled)."""
_ticks: Any = None
"""The queue this worker reports examples tried to, as ``(shard index, count)``."""


def _inherit(shards: Sequence[tuple[_Claim, int, int | None, bool]], ticks: Any) -> None:
    global _shards, _ticks
    _shards, _ticks = shards, ticks
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _run_shard(index: int) -> tuple[Verdict, list[Any], float, float]:
    """Search shard ``index`` in this worker: its verdict, float issues, start and end times."""
    cl, budget, seed, derandomize = _shards[index]
    started = time.time()
    tried = None
    if _ticks is not None:
        last = [0.0]

        def tried(k: int) -> None:
            now = time.monotonic()
            if k >= budget or now - last[0] >= TICK_SECONDS:
                last[0] = now
                _ticks.put((index, k))

    verdict, issues = _search(cl, budget, seed, derandomize, tried)
    return verdict, issues, started, time.time()


def _fuzz_pool(
    claims: Sequence[_Claim],
    settings: tuple[int, int | None, bool],
    jobs: int,
    finish: Callable[[int, Verdict, Sequence[Any], float], None],
    trying: Callable[[Trying], None] | None,
) -> None:
    """Fuzz ``claims`` with each fuzzable one's examples spread over ``jobs`` forked workers
    (:mod:`netproof.verifier.fuzzing.shards`), calling ``finish`` as each claim's last shard is
    done; the others are answered here at once. On Ctrl-C (or an error a shard raised) the
    shards not started are cancelled and the workers stopped before it goes on up."""
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    from netproof.verifier.fuzzing.shards import budgets, merge, shard_settings

    examples, seed, derandomize = settings
    shards: list[tuple[_Claim, int, int | None, bool]] = []
    owner: list[int] = []
    for i, cl in enumerate(claims):
        if not cl.fuzzable:
            started = time.perf_counter()
            verdict, issues = _search(cl, examples, seed, derandomize, None)
            finish(i, verdict, issues, time.perf_counter() - started)
            continue
        for k, budget in enumerate(budgets(examples, jobs)):
            shards.append((cl, budget, *shard_settings(seed, derandomize, k)))
            owner.append(i)
    if not shards:
        return
    left = {i: owner.count(i) for i in set(owner)}
    got: dict[int, tuple[Verdict, list[Any], float, float]] = {}
    tried = [0] * len(shards)
    ctx = multiprocessing.get_context("fork")
    ticks = ctx.SimpleQueue() if trying is not None else None
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=_inherit, initargs=(shards, ticks)
    )
    futures: dict[Future[tuple[Verdict, list[Any], float, float]], int] = {}

    def tell(i: int) -> None:
        if trying is not None:
            cl = claims[i]
            trying(
                Trying(
                    cl.construction.name,
                    cl.claim.id,
                    sum(t for t, o in zip(tried, owner, strict=True) if o == i),
                    examples,
                )
            )

    def drain() -> None:
        heard: set[int] = set()
        while ticks is not None and not ticks.empty():
            index, k = ticks.get()
            tried[index] = k
            if left[owner[index]] > 0:  # a late tick of a claim already finished is dropped
                heard.add(owner[index])
        for i in sorted(heard):
            tell(i)

    try:
        for i in sorted(set(owner)):
            tell(i)
        futures.update({pool.submit(_run_shard, k): k for k in range(len(shards))})
        pending = set(futures)
        while pending:
            finished, pending = wait(
                pending, timeout=0.1 if ticks is not None else None, return_when=FIRST_COMPLETED
            )
            drain()
            for f in sorted(finished, key=futures.__getitem__):
                k = futures[f]
                got[k] = f.result()
                i = owner[k]
                left[i] -= 1
                if left[i] == 0:
                    mine = [k2 for k2, o in enumerate(owner) if o == i]
                    cl = claims[i]
                    verdict = merge([got[k2][0] for k2 in mine], cl.job.alphabet)
                    met: list[Any] = []
                    for k2 in mine:
                        met += [x for x in got[k2][1] if all(x.word != y.word for y in met)]
                    seconds = max(got[k2][3] for k2 in mine) - min(got[k2][2] for k2 in mine)
                    finish(i, verdict, met, seconds)
    except BaseException:  # Ctrl-C, or an error from a shard: stop the others too
        for f in futures:
            f.cancel()
        for proc in set(multiprocessing.active_children()) - before:
            proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
