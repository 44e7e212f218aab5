"""The solver interface below every engine: solver queries as proof logs keep them, checking a
z3 solver within a timeout, and SMT-LIB2 text that cvc5 and z3 both read.

May import: the claims vocabulary (a verdict is part of an outcome); z3 inside functions only.
Exhaustive checking uses it for the claims whose check is one z3 query; the SMT engine for all.
"""

from .printer import smt2_logic, smt2_portable, to_smt2
from .queries import (
    KEYBOARD,
    SOLVER,
    STOPPED,
    VERDICT_OF,
    LemmaNode,
    LemmaVerdict,
    Outcome,
    SmtQuery,
    SmtResult,
    SolverCrashed,
    Stop,
    check,
    solve,
    solver_version,
)

__all__ = [
    "KEYBOARD",
    "SOLVER",
    "STOPPED",
    "VERDICT_OF",
    "LemmaNode",
    "LemmaVerdict",
    "Outcome",
    "SmtQuery",
    "SmtResult",
    "SolverCrashed",
    "Stop",
    "check",
    "smt2_logic",
    "smt2_portable",
    "solve",
    "solver_version",
    "to_smt2",
]
