"""Fuzz runs: search every claim of a set of constructions for a counterexample with hypothesis
(evidence, never proof), and keep one log per claim. ``netproof fuzz`` is a thin caller of
:func:`fuzz_claims`.

Each claim gets :func:`netproof.verifier.fuzzing.fuzz.fuzz`'s verdict: refuted (a shrunk word,
replayed with the exact checker), "no counterexample found", or "not fuzzable" (a claim that is
not checked word by word). With ``backend="torch"`` a recognizer's long words run in floats and
every doubtful word is re-checked exactly; a construction the torch backend does not compile is
fuzzed exactly, and its log says so. The logs are proof records (:mod:`.store`) with
``"kind": "fuzz"``, the verdict text and the search budget.

May import the vocabulary, the engines (the exhaustive checker's ``Job``, the fuzzer, the torch
backend; lazily) and the campaign's lower modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netproof.symbolic import SymbolicError, render

from netproof.verifier.claims import Claim, Construction, Refuted, Unknown, Verdict

from .errors import EXIT_OK, EXIT_REFUTED, CampaignError
from .proving import alphabet_of
from .sources import parameter_values
from .store import dumps, record, record_path, write_atomic

__all__ = ["FuzzResult", "FuzzRun", "fuzz_claims", "fuzz_verdict_name"]


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


@dataclass(frozen=True)
class FuzzRun:
    """What :func:`fuzz_claims` returns: one :class:`FuzzResult` per claim, in order, and the exit
    status (1 if a claim is refuted, else 0)."""

    results: tuple[FuzzResult, ...]
    exit_code: int

    @property
    def records(self) -> list[dict[str, Any]]:
        """The logs, as ``netproof fuzz --json`` prints them under ``"results"``."""
        return [r.record for r in self.results]


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
    selected: Sequence[Construction], given: Mapping[str, str], on_unsupported: Callable[[Construction, str], None] | None
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
        elif not compiled_one:
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
) -> FuzzRun:
    """Fuzz every claim of ``selected`` (parameters ``given`` as text) and write one log per claim
    under ``out`` (None or ``""``: no files).

    ``examples`` words per claim, up to ``max_len`` symbols (at least the claim's minimum);
    ``seed`` reproduces a run and ``derandomize`` draws the same examples every time; failing
    examples are kept in ``database`` (``""``: hypothesis's default directory) unless
    ``use_database`` is false. ``backend`` is ``"exact"`` or ``"torch"``; ``on_unsupported`` hears
    of each construction torch cannot compile, ``progress`` of each finished claim.
    """
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.fuzzing.fuzz import FuzzError, fuzz, fuzzable

    if examples < 1:
        raise CampaignError(f"examples={examples} must be >= 1")
    if max_len < 0:
        raise CampaignError(f"max_len={max_len} must be >= 0")
    if backend not in ("exact", "torch"):
        raise CampaignError(f"backend={backend!r}: fuzz with 'exact' or 'torch'")
    torch_unsupported = _torch_unsupported(selected, given, on_unsupported) if backend == "torch" else {}
    results: list[FuzzResult] = []
    for c in selected:
        values = parameter_values(c, given)
        job = Job(c, values)
        claim_backend = "exact" if c.name in torch_unsupported else backend
        for claim in c.claims(values):
            started = time.perf_counter()
            issues: list[Any] = []
            if fuzzable(claim) is None:
                kwargs: dict[str, Any] = {"examples": examples, "max_len": max(max_len, claim.min_len),
                                          "seed": seed, "derandomize": derandomize}
                if use_database and database:
                    kwargs["database"] = database
                elif not use_database:
                    kwargs["database"] = None
                kwargs["backend"] = claim_backend
                kwargs["on_float_issue"] = issues.append
                try:
                    verdict = fuzz(job, claim, **kwargs)
                except FuzzError as exc:
                    raise CampaignError(str(exc)) from None
            else:
                verdict = fuzz(job, claim)
            seconds = time.perf_counter() - started
            rec = record(c, values, claim, None, verdict)
            rec["verdict"] = fuzz_verdict_name(verdict)
            rec["kind"] = "fuzz"
            rec["budget"] = {"examples": examples, "max_len": max_len, "seed": seed, "derandomized": derandomize}
            if backend == "torch" and c.name in torch_unsupported:
                rec["backend"] = "exact"
                rec["torch_unsupported"] = torch_unsupported[c.name]
            elif backend == "torch":
                rec["backend"] = "torch"
                rec["float_issues"] = [
                    {"word": render(alphabet_of(c, values), i.word), "detail": i.detail} for i in issues
                ]
            result = FuzzResult(c, values, claim, verdict, seconds, tuple(issues), rec)
            results.append(result)
            if progress is not None:
                progress(result)
    if out:  # the logs are written once every claim is done
        for r in results:
            write_atomic(record_path(out, r.construction, r.values, r.claim, None, kind="fuzz"), dumps(r.record))
    code = EXIT_REFUTED if any(isinstance(r.verdict, Refuted) for r in results) else EXIT_OK
    return FuzzRun(tuple(results), code)
