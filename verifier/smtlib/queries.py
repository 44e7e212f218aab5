"""Solver queries as they go into proof logs: :class:`SmtQuery` (an SMT-LIB2 script and what the
solver said), :class:`LemmaNode` (a lemma tree), :class:`Outcome` (a verdict with the queries
behind it), :func:`check`, which checks a z3 solver and tells a genuine ``unknown`` from a
crash or a Ctrl-C, and :func:`solve`, which checks within a timeout and keeps the query's text.

z3 is imported inside functions only.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from netproof.verifier.claims import Verdict

from .printer import to_smt2

SmtResult: TypeAlias = Literal["unsat", "sat", "unknown"]
LemmaVerdict: TypeAlias = Literal["proved", "refuted", "unknown"]
VERDICT_OF: dict[SmtResult, LemmaVerdict] = {
    "unsat": "proved",
    "sat": "refuted",
    "unknown": "unknown",
}
"""A lemma's verdict from the result of its one query (the query asks for a counterexample)."""
SOLVER = "z3"


# --------------------------------------------------------------------------- queries and lemmas


@dataclass(frozen=True, slots=True, kw_only=True)
class SmtQuery:
    """One solver query as it goes into a proof log.

    ``smt2`` is the complete SMT-LIB2 script (``set-logic`` first, ``check-sat`` last) that cvc5
    and z3 both read; ``result`` is what the solver said; ``reason`` says why (for ``unknown``:
    the solver's ``reason_unknown``; for ``sat``: the counterexample; for ``unsat``: what the
    query proves); ``seconds`` the solving time (not part of a log's deterministic content).
    """

    name: str
    smt2: str
    result: SmtResult
    reason: str = ""
    seconds: float = 0.0

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.smt2.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class LemmaNode:
    """A node of a lemma tree: a theorem (the root) proved from lemmas (the children).

    ``verdict`` is ``"proved"``, ``"refuted"`` or ``"unknown"``; ``queries`` are the solver
    queries that establish this node given its children.
    """

    name: str
    statement: str
    verdict: LemmaVerdict
    queries: tuple[SmtQuery, ...] = ()
    children: tuple[LemmaNode, ...] = ()

    def walk(self) -> Iterator[LemmaNode]:
        """This node and every node below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True, slots=True)
class Outcome:
    """A verdict with the solver queries behind it (empty for exhaustive checks) and, for a
    compositional proof, its lemma tree."""

    verdict: Verdict
    queries: tuple[SmtQuery, ...] = ()
    lemmas: LemmaNode | None = None
    attempts: tuple[str, ...] = ()
    """What was tried before this verdict and what it gave, one line each (``--method best``:
    why a claim proved within its bound has no proof for every length); not part of the record."""


def solver_version() -> str:
    import z3

    return str(z3.get_version_string())


# --------------------------------------------------------------------------- checking, robustly

KEYBOARD = "interrupted from keyboard"
"""z3's ``reason_unknown`` when a SIGINT reached it during a check (z3 takes SIGINT while it
solves, so Python never sees it): :func:`check` raises :class:`KeyboardInterrupt` instead."""

STOPPED = "canceled"
"""The reason :func:`check` gives where the check was stopped on purpose (:meth:`Stop.request`)."""

_CANCELLED = ("interrupted", "canceled", "cancelled")


class SolverCrashed(RuntimeError):
    """A solver call that raised, or that was cancelled though nothing asked it to stop and no
    budget ran out, twice in a row (once, then once more on a retry). Never a verdict: an
    internal error, and nothing is recorded for its claim (campaigns map it to their internal
    error, exit status 70)."""


class Stop:
    """A request, from another thread, to stop the z3 checks of one search.

    :meth:`request` interrupts the context of the check under way, if any, and every later
    :func:`check` given this object returns at once with :data:`STOPPED`. The interrupt is sent
    under a lock, and only while a check runs (:meth:`checking`), so that it never lands on an
    API call between checks (which would fail with ``canceled``); z3 loses an interrupt that
    comes before its check really starts, so an impatient side calls :meth:`poke` until the
    other answers. A check that ends after the request returns :data:`STOPPED` whatever it
    answered: an interrupt that lands as a check ends leaves its context cancelled, and the
    next call on it (a model's evaluation) would fail with ``canceled``."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._ctx: Any = None
        self.requested = False

    def request(self) -> None:
        """Stop the check under way and every later one."""
        with self._lock:
            self.requested = True
            if self._ctx is not None:
                self._ctx.interrupt()

    def poke(self) -> None:
        """Interrupt the check under way again, where a stop was requested."""
        with self._lock:
            if self.requested and self._ctx is not None:
                self._ctx.interrupt()

    @property
    def busy(self) -> bool:
        """Whether a check is under way (inside :meth:`checking`)."""
        with self._lock:
            return self._ctx is not None

    @contextmanager
    def checking(self, ctx: Any) -> Iterator[None]:
        """The window in which ``ctx`` may be interrupted: one check."""
        with self._lock:
            self._ctx = ctx
        try:
            yield
        finally:
            with self._lock:
                self._ctx = None


def check(
    solver: Any, *, timeout: float | None = None, stop: Stop | None = None, want_model: bool = False
) -> tuple[str, str, Any]:
    """Check a z3 solver and say what it answered: ("sat" | "unsat" | "unknown", the reason for unknown, the model where
    ``want_model`` and sat).

    A genuine ``unknown`` (a timeout, an incomplete theory) is returned as z3 gave it. A
    Ctrl-C that reached z3 (:data:`KEYBOARD`) raises :class:`KeyboardInterrupt`. A check
    stopped on purpose (``stop.requested``) returns :data:`STOPPED`. Anything else that ends a
    check early (a ``Z3Exception``, or an ``unknown`` because the context was interrupted or
    cancelled while no budget ran out and nobody asked it to stop) is a crash, never a
    verdict: the check is retried once, and a second crash raises :class:`SolverCrashed`.
    ``timeout`` is in seconds (the solver's own ``timeout`` parameter is set to what is left of
    it on the retry)."""
    import z3

    deadline = None if timeout is None else time.perf_counter() + timeout
    failure = ""
    for _attempt in (1, 2):
        if stop is not None and stop.requested:
            return "unknown", STOPPED, None
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return "unknown", "timeout", None
            solver.set("timeout", max(1, int(left * 1000)))
        began = time.perf_counter()
        try:
            if stop is None:
                answer = solver.check()
            else:
                with stop.checking(solver.ctx):
                    answer = solver.check()
                if stop.requested:
                    # Interrupted or not, the other side asked first: drop the answer (an
                    # interrupt that came as the check ended leaves the context cancelled,
                    # and its model's evaluation would fail with "canceled").
                    return "unknown", STOPPED, None
            if answer == z3.unsat:
                return "unsat", "", None
            if answer == z3.sat:
                return "sat", "", (solver.model() if want_model else None)
            reason = str(solver.reason_unknown())
        except z3.Z3Exception as exc:
            if stop is not None and stop.requested:
                return "unknown", STOPPED, None
            value = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
            if value.strip() == KEYBOARD:
                raise KeyboardInterrupt from None
            failure = f"z3 raised Z3Exception({value!r})"
            continue
        if reason == KEYBOARD:
            raise KeyboardInterrupt
        if stop is not None and stop.requested:
            return "unknown", STOPPED, None
        if reason.strip().lower() in _CANCELLED:
            if deadline is not None and time.perf_counter() >= deadline - 0.001:
                return "unknown", "timeout", None
            failure = f"z3 answered unknown ({reason}) after {time.perf_counter() - began:.1f} s, though no budget ran out and nothing asked it to stop"
            continue
        return "unknown", reason, None
    raise SolverCrashed(
        f"a solver call failed twice (the second time: {failure}); this is not a verdict"
    )


def solve(
    solver: Any,
    *,
    name: str,
    logic: str | None,
    timeout: float,
    reason_unsat: str = "",
    stop: Stop | None = None,
) -> tuple[SmtQuery, Any]:
    """Check ``solver`` within ``timeout`` seconds, printing its SMT-LIB2 text included; the
    query (with that text) and the model (None unless ``sat``). A timeout or ``unknown`` keeps
    z3's ``reason_unknown``; a check stopped through ``stop`` gives :data:`STOPPED`; a Ctrl-C
    raises :class:`KeyboardInterrupt` and a crashed solver :class:`SolverCrashed`
    (:func:`check`)."""
    deadline = time.perf_counter() + timeout
    text = to_smt2(solver, logic=logic)
    started = time.perf_counter()
    answer, reason, model = check(
        solver, timeout=max(0.001, deadline - time.perf_counter()), stop=stop, want_model=True
    )
    seconds = time.perf_counter() - started
    if answer == "unsat":
        return SmtQuery(
            name=name, smt2=text, result="unsat", reason=reason_unsat, seconds=seconds
        ), None
    if answer == "sat":
        return SmtQuery(name=name, smt2=text, result="sat", reason="", seconds=seconds), model
    return SmtQuery(name=name, smt2=text, result="unknown", reason=reason, seconds=seconds), None
