"""The search for a proof for every length, beside the range queries: the reachable states of
the transition system by binary decision diagrams (:mod:`.diagrams`, in a process of its own),
else Spacer's invariant, each made a proof by its three certificate queries
(:mod:`.invariants`); where the network is no transition system, one query over position
classes (:mod:`.classes`). :class:`EveryLengthSearch` runs the search in a thread of its own,
and either side interrupts the other when it wins.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic`, :mod:`.lemmas`, :mod:`.system`,
:mod:`.invariants`, :mod:`.classes`, :mod:`.diagrams` and :mod:`.symmetry`; z3 handed in with
the system.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from netproof.symbolic import Network
from netproof.verifier import smtlib
from netproof.verifier.claims import Recognizes, TieRuleFree
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .arithmetic import consts
from .classes import LOGIC, QUERY, class_query
from .diagrams import reachable
from .invariants import (
    Diagram,
    Invariant,
    certificate_queries,
    clauses_of,
    sat_solver,
    spacer_invariant,
)
from .layers import REASONS, check_base, induction_certificates, induction_system, step_names
from .lemmas import LemmaResult, replay
from .symmetry import TypeSymmetry, type_symmetry
from .system import TransitionSystem, every_length_system


def reachable_states(
    system: TransitionSystem, deadline: float, stop: Callable[[], bool]
) -> tuple[str, Any]:
    """The reachable states of the system, by binary decision diagrams in a process of their own
    (:func:`.diagrams.reachable`: killed at the deadline or when ``stop()`` says so), from the
    initial states one step at a time until no new state comes: ("safe", the reachable
    states as a :class:`Diagram`: the strongest inductive invariant), ("unsafe", None) where a
    bad state is reachable, ("unknown", why), ("unsupported", why) without dd. The variables
    keep one order, the inputs first and each state variable beside its next copy."""
    z3 = system.z3
    names = [str(v) for v in system.state]
    primed = [str(v) for v in system.primed]
    inputs = sorted(
        {str(v) for f in (system.init, system.trans, system.bad) for v in consts(z3, f).values()}
        - set(names)
        - set(primed)
    )
    order = [*inputs, *(v for pair in zip(names, primed, strict=True) for v in pair)]
    try:
        init, trans, bad = (_plain(z3, f) for f in (system.init, system.trans, system.bad))
    except Unsupported as exc:
        return "unsupported", str(exc)
    status, got = reachable(order, names, primed, init, trans, bad, deadline, stop)
    if status == "safe":
        nodes, root = got
        return "safe", Diagram(nodes, root)
    return status, (None if status == "unsafe" else got)


_PLAIN_OPS = {
    "Z3_OP_NOT": "not",
    "Z3_OP_AND": "and",
    "Z3_OP_OR": "or",
    "Z3_OP_IFF": "iff",
    "Z3_OP_XOR": "xor",
    "Z3_OP_IMPLIES": "implies",
    "Z3_OP_ITE": "ite",
}


def _plain(z3: Any, formula: Any) -> tuple[tuple[Any, ...], ...]:
    """A Boolean z3 formula (and, or, not, =, distinct, xor, =>, ite over Bool constants) as a
    :data:`.diagrams.Formula`: plain data, children before parents."""
    ops = {getattr(z3, k): v for k, v in _PLAIN_OPS.items()}
    index: dict[int, int] = {}
    nodes: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, bool]] = [(formula, False)]
    while stack:
        e, expanded = stack.pop()
        if e.get_id() in index:
            continue
        if z3.is_true(e) or z3.is_false(e):
            node: tuple[Any, ...] = ("const", z3.is_true(e))
        elif not z3.is_bool(e):
            raise Unsupported(
                f"the transition system has a term {str(e)[:60]!r} that is not Boolean"
            )
        elif z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            node = ("var", e.decl().name())
        elif not expanded:
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(e.children()))
            continue
        else:
            kind = e.decl().kind()
            args = [index[c.get_id()] for c in e.children()]
            if kind in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(args) == 2 and z3.is_bool(e.arg(0)):
                node = ("iff" if kind == z3.Z3_OP_EQ else "xor", *args)
            elif kind in ops:
                node = (ops[kind], *args)
            else:
                raise Unsupported(
                    f"the transition system has a term {e.decl().name()!r} that is not Boolean logic"
                )
        nodes.append(node)
        index[e.get_id()] = len(nodes) - 1
    return tuple(nodes)


def _prove_every_length(
    net: Network,
    claim: Recognizes,
    results: Sequence[LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
    timeout: float,
    halt: smtlib.Stop | None = None,
) -> tuple[list[SmtQuery] | None, str, str]:
    """The theorem for every length (see :func:`.ranges.prove_recognizes`): its three certificate
    queries, each unsat, or None and why not, and how the invariant was found. The reachable
    states (:func:`reachable_states`, binary decision diagrams) come first, within half of
    ``timeout``; Spacer (z3's IC3/PDR) gets the rest where they give no answer (dd missing, or a
    diagram too big for the time). ``halt`` stops it from another thread: it is asked between
    steps, and interrupts Spacer's query or the position-classes query while one runs."""
    started = time.perf_counter()
    halt = smtlib.Stop() if halt is None else halt
    if claim.induction is not None:
        return prove_by_layers(
            net, claim, results, readout_lemmas, readout_nodes, timeout, halt, reduce_types=True
        )

    def stop() -> bool:
        return halt.requested

    try:
        system = every_length_system(
            net, claim.language, results, readout_lemmas, readout_nodes, claim.min_len
        )
    except Unsupported as exc:
        return _prove_by_classes(
            net, claim, results, timeout, halt, f"not a transition system ({exc})"
        )
    phase("every length: the reachable states (decision diagrams)")
    status, found = reachable_states(system, started + timeout / 2, stop)
    how = "the reachable states, by binary decision diagrams"
    if status == "unsafe":
        return (
            None,
            "a misclassified word (of some length) is reachable, so the ranges look for the shortest",
            how,
        )
    invariant: Invariant | None = found if status == "safe" else None
    if invariant is None:
        if stop():
            return (
                None,
                f"stopped after {time.perf_counter() - started:.1f} s, before an invariant was found",
                how,
            )
        how = "Spacer"
        phase("every length: an invariant by Spacer")
        status, inv = spacer_invariant(
            system, max(0.001, timeout - (time.perf_counter() - started)), halt
        )
        if status == "unsafe":
            return (
                None,
                "Spacer found a misclassified word (of some length), so the ranges look for the shortest",
                how,
            )
        if status != "safe":
            if stop():
                return (
                    None,
                    f"stopped after {time.perf_counter() - started:.1f} s, before an invariant was found (the reachable states: {found}; Spacer: {inv})",
                    how,
                )
            return (
                None,
                f"the reachable states: {found}; Spacer: {inv} after {time.perf_counter() - started:.1f} s",
                how,
            )
        invariant = clauses_of(system.z3, inv)
        if invariant is None:
            return None, "Spacer's invariant is not in conjunctive normal form over the state", how
    # The certificate in a fresh system, from the canonical invariant: the proof log's rebuild
    # (certificate_queries) makes the same terms in the same order, hence the same text.
    queries = []
    for name, text, solver in certificate_queries(net, claim, results, invariant, readout_lemmas):
        phase(f"every length: certificate query {name!r}")
        began = time.perf_counter()
        # the budget left, at least a minute: the invariant is found, and only its check is left
        left = max(60.0, timeout - (began - started))
        answer, reason, _model = smtlib.check(sat_solver(solver), timeout=left, stop=halt)
        if answer == "unknown":  # out of time, or stopped: no proof, and no sign of a bug
            why = (
                "stopped"
                if reason == smtlib.STOPPED
                else f"not answered within {left:.0f} s ({reason})"
            )
            return None, f"the invariant was found ({how}), but its query {name!r} was {why}", how
        if answer != "unsat":
            raise EncoderBugError(
                f"the invariant ({how}) for {claim.id} fails its query {name!r} ({answer}{': ' + reason if reason else ''}): "
                "a bug in the transition system or its reading"
            )
        queries.append(
            SmtQuery(
                name=name,
                smt2=text,
                result="unsat",
                reason=CERTIFICATE_REASONS[name.rsplit(" ", 1)[-1]],
                seconds=time.perf_counter() - began,
            )
        )
    return queries, "", how


BY_LAYERS = "induction over layers, each step's reachable states by binary decision diagrams"
"""How a proof by :class:`~netproof.verifier.claims.LayerInduction` finds its invariants."""


def prove_by_layers(
    net: Network,
    claim: Recognizes,
    results: Sequence[LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
    timeout: float,
    halt: smtlib.Stop,
    steps: Sequence[str] | None = None,
    watch: TieRuleFree | None = None,
    reduce_types: bool = False,
) -> tuple[list[SmtQuery] | None, str, str]:
    """The theorem for every length by the claim's induction over layers
    (:mod:`.layers`): every step's three certificate queries, each unsat, or None and why not
    (``watch``: the tie rules the step :data:`.layers.TIES` watches).
    A step whose system is the one of an earlier step (identical segments) reuses its invariant
    and answers: the queries are the same text. ``reduce_types``: where the type symmetry's
    premise holds (:mod:`.symmetry`, its invariance queries solved first and recorded), the
    steps read the words of :data:`.symmetry.KEPT` types only; where it fails, every type."""
    assert claim.induction is not None
    started = time.perf_counter()
    how = BY_LAYERS
    try:
        check_base(net, claim.induction)
    except Unsupported as exc:
        return None, f"the induction over layers has no base case: {exc}", how
    solved: dict[str, Any] = {}  # the system's text -> its invariant
    answered: set[str] = set()  # certificate texts answered unsat
    queries: list[SmtQuery] = []
    types: int | None = None
    if reduce_types and steps is None and watch is None:
        sym, why = _symmetry(claim, net, results, halt, answered, queries)
        if sym is not None:
            types = sym.kept
            how = f"{BY_LAYERS}; {sym.detail}"
        elif why:
            phase(f"every length: the induction over every type ({why})")
    names = step_names(len(claim.induction.after)) if steps is None else steps
    for k, name in enumerate(names, 1):
        phase(f"every length: induction step {k}/{len(names)} ({name})")
        if halt.requested:
            return (
                None,
                f"stopped after {time.perf_counter() - started:.1f} s, at step {name!r} of the induction",
                how,
            )
        try:
            system = induction_system(
                net, claim, results, name, readout_lemmas, readout_nodes, watch=watch, types=types
            )
        except Unsupported as exc:
            return None, f"the induction's step {name!r} is no transition system ({exc})", how
        shape = "\n".join(
            str(f.sexpr()) for f in (system.init, system.trans, system.bad)
        ) + " ".join(map(str, system.state))
        invariant = solved.get(shape)
        if invariant is None:
            status, found = reachable_states(system, started + timeout, lambda: halt.requested)
            if status == "unsafe":
                return (
                    None,
                    f"the induction's step {name!r} fails on some word (of some length), so the ranges look for the shortest misclassified one",
                    how,
                )
            if status != "safe":
                return (
                    None,
                    f"the induction's step {name!r}: the reachable states: {found} (after {time.perf_counter() - started:.1f} s)",
                    how,
                )
            invariant = solved[shape] = found
        kind = "output" if name == "output" else name.rsplit(" ", 1)[-1]
        for qname, text, solver in induction_certificates(
            net, claim, results, name, invariant, readout_lemmas, readout_nodes, watch, types
        ):
            began = time.perf_counter()
            if text not in answered:
                left = max(60.0, timeout - (began - started))
                answer, reason, _model = smtlib.check(sat_solver(solver), timeout=left, stop=halt)
                if answer == "unknown":
                    why = (
                        "stopped"
                        if reason == smtlib.STOPPED
                        else f"not answered within {left:.0f} s ({reason})"
                    )
                    return (
                        None,
                        f"the invariant of the induction's step {name!r} was found, but its query {qname!r} was {why}",
                        how,
                    )
                if answer != "unsat":
                    raise EncoderBugError(
                        f"the reachable states of step {name!r} of {claim.id}'s induction fail their query {qname!r} ({answer}"
                        f"{': ' + reason if reason else ''}): a bug in the transition system or its reading"
                    )
                answered.add(text)
            queries.append(
                SmtQuery(
                    name=qname,
                    smt2=text,
                    result="unsat",
                    reason=f"{name}: {REASONS[kind][qname.rsplit(' ', 1)[-1]]}",
                    seconds=time.perf_counter() - began,
                )
            )
    return queries, "", how


def _symmetry(
    claim: Recognizes,
    net: Network,
    results: Sequence[LemmaResult],
    halt: smtlib.Stop,
    answered: set[str],
    queries: list[SmtQuery],
) -> tuple[TypeSymmetry | None, str]:
    """The type symmetry's premise (:func:`.symmetry.type_symmetry`) with its invariance queries
    solved (each unsat, appended to ``queries``): the symmetry, or None and why not ("" where
    the language has too few types to reduce)."""
    try:
        sym = type_symmetry(net, claim, results)
    except Unsupported as exc:
        return None, f"no type symmetry: {exc}"
    if sym is None:
        return None, ""
    phase(f"every length: the type symmetry ({len(sym.queries)} invariance queries)")
    got: list[SmtQuery] = []
    for qname, text, reason, solver in sym.queries:
        began = time.perf_counter()
        if text not in answered:
            answer, why, _model = smtlib.check(solver, timeout=60.0, stop=halt)
            if answer != "unsat":
                return None, f"no type symmetry: query {qname!r} answered {answer} {why}".rstrip()
            answered.add(text)
        got.append(
            SmtQuery(
                name=qname,
                smt2=text,
                result="unsat",
                reason=reason,
                seconds=time.perf_counter() - began,
            )
        )
    queries.extend(got)
    return sym, ""


def _prove_by_classes(
    net: Network,
    claim: Recognizes,
    results: Sequence[LemmaResult],
    timeout: float,
    halt: smtlib.Stop,
    why_not_system: str,
) -> tuple[list[SmtQuery] | None, str, str]:
    """The theorem for every length as one query over position classes (:mod:`netproof.verifier.smt.compositional.classes`),
    for a network that is no transition system (soft attention over every position): its query,
    unsat, or None and why not. A model is a word; one the exact interpreter does not
    misclassify is an encoder bug."""
    how = "position classes"
    phase("every length: the position-classes query")
    try:
        _ctx, solver, enc = class_query(net, claim, results)
    except Unsupported as exc:
        return None, f"unsupported: {why_not_system}; position classes: {exc}", ""
    query, model = smtlib.solve(
        solver,
        name=f"{claim.id} every n: {QUERY}",
        logic=LOGIC,
        timeout=timeout,
        stop=halt,
        reason_unsat=f"no word of any length >= {claim.min_len} is misclassified (its positions grouped by class and symbol)",
    )
    if query.result == "unsat":
        return [query], "", how
    if query.result == "sat":
        word = enc.word_of(model)
        replay(
            net, claim.language, word
        )  # raises EncoderBugError where the word is classified right
        return (
            None,
            f"a misclassified word of length {len(word)} exists (position classes), so the ranges look for the shortest",
            how,
        )
    if query.reason == smtlib.STOPPED and halt.requested:
        return None, "position classes: stopped before z3 answered", how
    return None, f"position classes: z3 {query.reason or 'unknown'}", how


CERTIFICATE_REASONS = {
    "initiation": "the invariant holds before the first token",
    "consecution": "reading one more token (a prefix, word or suffix token) keeps the invariant",
    "safety": "no state of the invariant, with every token read, has an accept bit other than membership",
}


class EveryLengthSearch:
    """The proof for every length (:func:`_prove_every_length`) in a thread of its own, beside
    the range queries of the main thread: z3 and CUDD let go of Python's lock while they work, so
    on two cores the ranges keep the whole budget where the invariant takes long or is not found
    (Spacer finds none for the Dyck(2,3) recognizer in 11 minutes; the ranges used to wait for it).

    The thread works on copies of the lemma results and its own readout lemmas, so the counts of
    lemma applications in a verdict's detail are those of the proof it reports. Either side
    stops the other's z3 checks when it wins, through a :class:`~netproof.verifier.smtlib.Stop`
    (which interrupts a context only while a check runs on it, so that no interrupt lands on
    another API call): a proof for every length stops the range query under way
    (:attr:`ranges`, given to the main thread's ``solve``), a counterexample or the end of the
    budget stops the search (:meth:`cancel`: the BDD steps ask between steps, Spacer and the
    position-classes query are interrupted). z3 loses an interrupt that comes before its check
    starts, so an interrupt is repeated until the other side answers."""

    _POLL = 0.05  # seconds between repeated interrupts

    def __init__(
        self, net: Network, claim: Recognizes, results: Sequence[LemmaResult], timeout: float
    ) -> None:
        import threading

        self.results = [LemmaResult(r.lemma, r.node, r.proved) for r in results]
        self.readout_lemmas: dict[Any, Any] = {}
        self.readout_nodes: list[LemmaNode] = []
        self.queries: list[SmtQuery] | None = None
        self.because = ""
        self.how = ""  # how the invariant was found
        self._error: BaseException | None = None
        self.halt = smtlib.Stop()  # stops this thread's checks (cancel)
        self.ranges = (
            smtlib.Stop()
        )  # stops the main thread's range query, once every length is proved
        self._answered = threading.Event()  # the main thread has seen the proof (or gave up)
        self.done = threading.Event()
        self._thread = threading.Thread(
            target=self._run,
            args=(net, claim, timeout),
            name=f"every-length {claim.id}",
            daemon=True,
        )
        self._thread.start()

    def _run(self, net: Network, claim: Recognizes, timeout: float) -> None:
        try:
            self.queries, self.because, self.how = _prove_every_length(
                net,
                claim,
                self.results,
                self.readout_lemmas,
                self.readout_nodes,
                timeout,
                self.halt,
            )
        except BaseException as exc:
            self._error = exc
        finally:
            self.done.set()
        if self.queries is not None:
            # Stop the range query under way: repeat until the main thread has seen the proof.
            self.ranges.request()
            while not self._answered.wait(self._POLL):
                self.ranges.poke()

    @property
    def proved(self) -> bool:
        """Whether the proof for every length is done (its queries checked)."""
        self._raise()
        return self.done.is_set() and self.queries is not None

    def claim_ranges(self) -> bool:
        """False where the proof for every length is already done, and no range query should
        start (or the one just answered should be dropped)."""
        if self.proved:
            self._answered.set()
            return False
        return True

    def wait(self, until: float) -> None:
        """Wait for the thread until the time ``until`` (of ``time.perf_counter``), then stop it."""
        self.done.wait(max(0.0, until - time.perf_counter()))
        self.cancel()

    def cancel(self) -> None:
        """Stop the search (repeating the interrupt until the thread ends) and release the thread."""
        self._answered.set()
        self.halt.request()
        while not self.done.wait(self._POLL):
            self.halt.poke()
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error
