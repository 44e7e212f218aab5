"""Inductive invariants of the transition system (:mod:`.system`) and the certificate that makes
one a proof for every length: Spacer's invariant (z3's IC3/PDR, :func:`spacer_invariant`) as
clauses (:data:`Clauses`), the reachable states as a decision diagram (:class:`Diagram`), either
read back from a recorded initiation query (:func:`recorded_invariant`), and the three
certificate queries, initiation, consecution and safety (:func:`certificate_queries`), whose
text is the same wherever they are built (in the proof and in the proof log's rebuild).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`.arithmetic`, :mod:`.lemmas` and :mod:`.system`; z3 inside functions.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from netproof.symbolic import Network
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    FollowsAutomaton,
    PairHeights,
    Recognizes,
    TieRuleFree,
    TraceProperty,
)
from netproof.verifier.smtlib import LemmaNode, to_smt2

from .arithmetic import consts
from .lemmas import LemmaResult
from .system import TransitionSystem, every_length_system


def spacer_invariant(
    system: TransitionSystem, timeout: float, halt: smtlib.Stop | None = None
) -> tuple[str, Any]:
    """Spacer (z3's Horn solver, IC3/PDR) on the system: ("safe", an inductive invariant as a
    formula over the state), ("unsafe", None) or ("unknown", the reason). ``halt`` interrupts
    it from another thread; a Ctrl-C that reached z3 raises :class:`KeyboardInterrupt` (as in
    :func:`netproof.verifier.smtlib.check`)."""
    z3, ctx = system.z3, system.ctx
    inv = z3.Function("Inv", *([z3.BoolSort(ctx)] * len(system.state)), z3.BoolSort(ctx))
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("timeout", max(1, int(timeout * 1000)))
    fp.register_relation(inv)
    free: dict[int, Any] = {}
    for f in (system.init, system.trans, system.bad):
        free.update(consts(z3, f))
    fp.declare_var(*sorted(free.values(), key=str))
    fp.rule(inv(*system.state), system.init)
    fp.rule(inv(*system.primed), [inv(*system.state), system.trans])
    goal = z3.And(inv(*system.state), system.bad)
    halt = smtlib.Stop() if halt is None else halt
    if halt.requested:
        return "unknown", smtlib.STOPPED
    try:
        with halt.checking(ctx):
            answer = fp.query(goal)
    except z3.Z3Exception as exc:  # a timeout or an interrupt cancels the query
        reason = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
        if reason.strip() == smtlib.KEYBOARD:
            raise KeyboardInterrupt from None
        return "unknown", reason
    if halt.requested:  # asked to stop as it answered: the context may be cancelled (smtlib.check)
        return "unknown", smtlib.STOPPED
    if answer == z3.unsat:
        return "safe", z3.substitute_vars(fp.get_cover_delta(-1, inv), *system.state)
    if answer == z3.sat:
        return "unsafe", None
    reason = str(fp.reason_unknown())
    if reason.strip() == smtlib.KEYBOARD:
        raise KeyboardInterrupt
    return "unknown", reason


CERTIFICATE = ("initiation", "consecution", "safety")
"""The names of the three certificate queries, in order (after ``"<claim> every n: "``)."""


def certificate(system: TransitionSystem, inv: Any) -> list[tuple[str, Any]]:
    """The three queries that make ``inv`` a proof for every length, each to be unsat: the
    initial states satisfy it (initiation), a step keeps it (consecution), and no state in it is
    bad (safety). Plain Boolean queries any SMT solver re-checks (:func:`sat_solver` answers
    them faster in z3)."""
    z3, ctx = system.z3, system.ctx
    primed = z3.substitute(inv, *zip(system.state, system.primed, strict=True))
    out = []
    for name, parts in zip(
        CERTIFICATE,
        ((system.init, z3.Not(inv)), (inv, system.trans, z3.Not(primed)), (inv, system.bad)),
        strict=True,
    ):
        solver = z3.Solver(ctx=ctx)
        solver.add(*parts)
        out.append((name, solver))
    return out


def sat_solver(solver: Any) -> Any:
    """A solver with ``solver``'s assertions (a certificate query: Booleans only) that z3 answers
    with its SAT solver after a Tseitin encoding: a diagram's nested ``ite`` makes z3's SMT core
    slow (Dyck(2, 5)'s consecution: 22 s this way, 69 s by default, on a loaded machine). The
    recorded text is ``solver``'s."""
    import z3

    fast = z3.Then("simplify", "tseitin-cnf", "sat", ctx=solver.ctx).solver()
    fast.add(*solver.assertions())
    return fast


Clauses = tuple[tuple[tuple[str, bool], ...], ...]


def clauses_of(z3: Any, inv: Any) -> Clauses | None:
    """An invariant in conjunctive normal form over state variables, canonically ordered
    (each clause a sorted tuple of (variable name, polarity)), or None where it is not one."""

    def literal(e: Any) -> tuple[str, bool] | None:
        pos = not z3.is_not(e)
        atom = e if pos else e.arg(0)
        if z3.is_const(atom) and atom.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            return atom.decl().name(), pos
        return None

    out = []
    for clause in inv.children() if z3.is_and(inv) else [inv]:
        atoms = clause.children() if z3.is_or(clause) else [clause]
        lits = [lit for e in atoms if (lit := literal(e)) is not None]
        if len(lits) < len(atoms):
            return None
        out.append(tuple(sorted(set(lits))))
    return tuple(sorted(set(out)))


def from_clauses(system: TransitionSystem, clauses: Clauses) -> Any:
    """The invariant ``clauses`` over ``system``'s state variables (an unknown name: ValueError)."""
    z3 = system.z3
    by_name = {str(v): v for v in system.state}
    missing = sorted({name for clause in clauses for name, _pos in clause} - set(by_name))
    if missing:
        raise ValueError(
            f"the invariant names {', '.join(missing[:3])}, which are not state variables of the system"
        )
    return z3.And(
        [
            z3.Or([by_name[name] if pos else z3.Not(by_name[name]) for name, pos in clause])
            for clause in clauses
        ]
    )


@dataclass(frozen=True, slots=True)
class Diagram:
    """An invariant as a reduced ordered binary decision diagram over the state variables:
    ``nodes[i]`` is node ``i + 2``, a (variable, node if it is false, node if it is true); 0 and
    1 are the constants false and true; ``root`` is the invariant. The nodes come in one order
    (children before parents, the false child's nodes first), so a diagram read back from a
    recorded query is the diagram that was written."""

    nodes: tuple[tuple[str, int, int], ...]
    root: int


Invariant = Clauses | Diagram


def from_diagram(system: TransitionSystem, diagram: Diagram) -> Any:
    """The invariant ``diagram`` over ``system``'s state variables: ``(ite v hi lo)`` per node."""
    z3 = system.z3
    by_name = {str(v): v for v in system.state}
    missing = sorted({name for name, _lo, _hi in diagram.nodes} - set(by_name))
    if missing:
        raise ValueError(
            f"the invariant names {', '.join(missing[:3])}, which are not state variables of the system"
        )
    terms = [z3.BoolVal(False, system.ctx), z3.BoolVal(True, system.ctx)]
    for name, lo, hi in diagram.nodes:
        terms.append(z3.If(by_name[name], terms[hi], terms[lo]))
    return terms[diagram.root]


def _diagram_of_formula(z3: Any, inv: Any) -> Diagram | None:
    """The diagram a formula of nested ``ite`` over state variables writes (as
    :func:`from_diagram` prints it), or None where it is not one.

    Walked through z3's C API on the formula's own nodes (each kept alive by ``inv``): a recorded
    diagram has tens of thousands of nodes, and wrapping each in a Python expression object took
    most of a proof log's freshness check."""
    ctx = inv.ctx_ref()
    ast_id, ast_kind, app_decl, decl_kind = (
        z3.Z3_get_ast_id,
        z3.Z3_get_ast_kind,
        z3.Z3_get_app_decl,
        z3.Z3_get_decl_kind,
    )
    app, ite, true, false = z3.Z3_APP_AST, z3.Z3_OP_ITE, z3.Z3_OP_TRUE, z3.Z3_OP_FALSE
    uninterpreted, arg = z3.Z3_OP_UNINTERPRETED, z3.Z3_get_app_arg
    index: dict[int, int] = {}
    nodes: list[tuple[str, int, int]] = []
    names: dict[int, str] = {}  # a state variable's name, by its node's id
    stack: list[tuple[Any, bool]] = [(inv.as_ast(), False)]
    while stack:
        e, expanded = stack.pop()
        eid = ast_id(ctx, e)
        if eid in index:
            continue
        if ast_kind(ctx, e) != app:
            return None
        kind = decl_kind(ctx, app_decl(ctx, e))
        if kind in (true, false):
            index[eid] = int(kind == true)
            continue
        if kind != ite:
            return None
        var, hi, lo = arg(ctx, e, 0), arg(ctx, e, 1), arg(ctx, e, 2)
        if not expanded:
            vid = ast_id(ctx, var)
            if vid not in names:
                if not (
                    ast_kind(ctx, var) == app
                    and z3.Z3_get_app_num_args(ctx, var) == 0
                    and decl_kind(ctx, app_decl(ctx, var)) == uninterpreted
                ):
                    return None
                symbol = z3.Z3_get_decl_name(ctx, app_decl(ctx, var))
                names[vid] = (
                    f"k!{z3.Z3_get_symbol_int(ctx, symbol)}"
                    if z3.Z3_get_symbol_kind(ctx, symbol) == z3.Z3_INT_SYMBOL
                    else z3.Z3_get_symbol_string(ctx, symbol)
                )
            stack.extend(((e, True), (hi, False), (lo, False)))  # the false child first
            continue
        nodes.append((names[ast_id(ctx, var)], index[ast_id(ctx, lo)], index[ast_id(ctx, hi)]))
        index[eid] = len(nodes) + 1
    return Diagram(tuple(nodes), index[ast_id(ctx, inv.as_ast())])


@functools.lru_cache(maxsize=16)
def recorded_invariant(text: str) -> Invariant:
    """The invariant of a recorded initiation query (its last assertion is ``not Inv``), parsed
    in a context of its own: clauses (Spacer's) or a decision diagram (the reachable states).
    Kept per text (the value is immutable): an induction over layers records the same invariant
    for every layer, and a diagram's query runs to 100 kB."""
    import z3

    ctx = z3.Context()
    try:
        assertions = z3.parse_smt2_string(text, ctx=ctx)
    except z3.Z3Exception as exc:
        reason = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
        raise ValueError(
            f"the recorded initiation query is not SMT-LIB2 that z3 reads ({reason.strip()})"
        ) from None
    last = assertions[len(assertions) - 1] if len(assertions) else None
    inv: Invariant | None = None
    if last is not None and z3.is_not(last):
        inv = (
            _diagram_of_formula(z3, last.arg(0))
            if z3.is_app_of(last.arg(0), z3.Z3_OP_ITE)
            else clauses_of(z3, last.arg(0))
        )
    if inv is None:
        raise ValueError(
            "the recorded initiation query does not end with a negated invariant in conjunctive normal form or as a decision diagram"
        )
    return inv


def certificate_queries(
    net: Network,
    claim: Recognizes | TraceProperty,
    results: Sequence[LemmaResult],
    invariant: Invariant,
    readout_lemmas: dict[Any, Any] | None = None,
    readout_nodes: list[LemmaNode] | None = None,
) -> list[tuple[str, str, Any]]:
    """The certificate of the theorem for every length with the invariant ``clauses``: (query
    name, SMT-LIB2 text, solver) for initiation, consecution and safety, over a system built
    afresh (the same text wherever it is built: in the proof and in the proof log's rebuild). A
    trace property's system watches its :attr:`~TraceProperty.statable` form."""
    uses = [r.uses for r in results]
    if isinstance(claim, TraceProperty):
        watch = claim.statable
        assert isinstance(watch, (PairHeights, TieRuleFree, FollowsAutomaton)), watch
        system = every_length_system(
            net,
            None,
            results,
            {} if readout_lemmas is None else readout_lemmas,
            [] if readout_nodes is None else readout_nodes,
            claim.min_len,
            watch,
        )
    else:
        system = every_length_system(
            net,
            claim.language,
            results,
            {} if readout_lemmas is None else readout_lemmas,
            [] if readout_nodes is None else readout_nodes,
            claim.min_len,
        )
    for r, u in zip(results, uses, strict=True):
        r.uses = u  # the lemmas' applications were counted when the invariant was found
    inv = (
        from_diagram(system, invariant)
        if isinstance(invariant, Diagram)
        else from_clauses(system, invariant)
    )
    return [
        (f"{claim.id} every n: {name}", to_smt2(solver, logic="QF_UF"), solver)
        for name, solver in certificate(system, inv)
    ]
