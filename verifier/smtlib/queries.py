"""Solver queries as they go into proof logs: :class:`SmtQuery` (an SMT-LIB2 script and what the
solver said), :class:`LemmaNode` (a lemma tree), :class:`Outcome` (a verdict with the queries
behind it), and :func:`solve`, which checks a z3 solver within a timeout and keeps its text.

z3 is imported inside functions only.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from netproof.verifier.claims import Verdict

from .printer import to_smt2

SmtResult: TypeAlias = Literal["unsat", "sat", "unknown"]
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
    verdict: Literal["proved", "refuted", "unknown"]
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



def solver_version() -> str:
    import z3

    return str(z3.get_version_string())


def solve(solver: Any, *, name: str, logic: str | None, timeout: float, reason_unsat: str = "") -> tuple[SmtQuery, Any]:
    """Check ``solver`` within ``timeout`` seconds, printing its SMT-LIB2 text included; the
    query (with that text) and the model (None unless ``sat``). A timeout or ``unknown`` keeps
    z3's ``reason_unknown``."""
    import z3

    deadline = time.perf_counter() + timeout
    text = to_smt2(solver, logic=logic)
    solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
    started = time.perf_counter()
    answer = solver.check()
    seconds = time.perf_counter() - started
    if answer == z3.unsat:
        return SmtQuery(name=name, smt2=text, result="unsat", reason=reason_unsat, seconds=seconds), None
    if answer == z3.sat:
        return SmtQuery(name=name, smt2=text, result="sat", reason="", seconds=seconds), solver.model()
    return SmtQuery(name=name, smt2=text, result="unknown", reason=str(solver.reason_unknown()), seconds=seconds), None
