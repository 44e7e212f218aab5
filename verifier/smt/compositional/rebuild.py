"""A compositional proof's queries rebuilt without solving them, for the freshness check of its
proof log (:func:`rebuild_queries`): the block lemmas proved again (small queries; which of them
hold shapes the theorem's encoding), the theorem's range and position-class queries built and
printed, and the certificate of a proof for every length rebuilt around the invariant read back
from its recorded initiation query.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface and the other
modules of :mod:`netproof.verifier.smt.compositional` (it is the top of the package).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from netproof.symbolic import Network
from netproof.verifier.claims import (
    CountComparison,
    FollowsCounts,
    Lemma,
    PairHeights,
    Recognizes,
    SelectsNearest,
    TieRuleFree,
    TraceProperty,
    UniformCount,
    UniqueSelections,
    ValueIs,
)
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode, to_smt2

from . import counters
from .classes import LOGIC, QUERY, class_query, value_query
from .invariants import CERTIFICATE, certificate_queries, recorded_invariant
from .layers import (
    TIES,
    check_base,
    induction_certificates,
    keeps_form,
    marks_claim,
    step_names,
    ties_claim,
)
from .lemmas import LemmaResult, prove_lemma
from .ranges import theorem_query
from .symmetry import QUERY as SYMMETRY
from .symmetry import type_symmetry
from .system import every_length_system
from .value_claims import value_builder


def rebuild_queries(
    net: Network,
    claim: Recognizes | ValueIs,
    lemmas: Sequence[Lemma],
    names: Sequence[str],
    recorded: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], str]:
    """The texts of :func:`rebuild_tree`, by (lemma tree node, query name)."""
    return rebuild_tree(net, claim, lemmas, names, recorded)[0]


def rebuild_tree(
    net: Network,
    claim: Recognizes | ValueIs | TraceProperty,
    lemmas: Sequence[Lemma],
    names: Sequence[str],
    recorded: Mapping[str, str] | None = None,
) -> tuple[dict[tuple[str, str], str], tuple[LemmaNode, ...]]:
    """The SMT-LIB2 text of a compositional proof's queries, by (lemma tree node, query name),
    and the lemma tree's nodes below the theorem as the proof makes them (the block lemmas proved
    again, then the readout lemmas the theorem's queries proved; the side conditions not included),
    for the freshness check of its proof log: the block lemmas are proved again (small queries,
    and the theorem's encoding depends on which of them hold), the theorem's queries named
    ``names`` (``"Y2 n=0..16"``, ``"C4 n=22"``, ``"C3-count n=5"``, ``"Y2 every n: safety"``)
    are built and printed, not solved. The certificate of a proof for every length is rebuilt
    around the invariant read from its recorded initiation query (``recorded``: query name ->
    recorded text); the rebuilt initiation query must then be that text again."""
    if isinstance(claim, TraceProperty) and isinstance(claim.statable, FollowsCounts):
        return _rebuild_follows_counts(net, claim, claim.statable, lemmas, names, recorded)
    results: list[LemmaResult] = []
    for lemma in lemmas:
        node, ok = prove_lemma(net, lemma)
        results.append(LemmaResult(lemma, node, ok))
    readout_lemmas: dict[Any, Any] = {}
    readout_nodes: list[LemmaNode] = []
    theorem: dict[tuple[str, str], str] = {}
    prefix = f"{claim.id} n="
    every = f"{claim.id} every n: {CERTIFICATE[0]}"
    if isinstance(claim, TraceProperty):
        if (
            isinstance(claim.statable, PairHeights)
            and claim.statable.induction is not None
            and recorded is not None
            and any(": layer " in n for n in names)
        ):
            rec, steps = marks_claim(claim, claim.statable)
            check_base(net, claim.statable.induction)
            theorem.update(_layer_steps(net, claim.id, rec, steps, results, names, recorded))
        elif (
            isinstance(claim.statable, TieRuleFree)
            and claim.statable.induction is not None
            and recorded is not None
            and any(f": {TIES}: " in n for n in names)
        ):
            rec, _steps = ties_claim(claim, claim.statable)
            check_base(net, claim.statable.induction)
            keeps_form(net, rec, results)
            theorem.update(
                _layer_steps(
                    net,
                    claim.id,
                    rec,
                    [TIES],
                    results,
                    names,
                    recorded,
                    readout_lemmas=readout_lemmas,
                    readout_nodes=readout_nodes,
                    watch=claim.statable,
                )
            )
        elif isinstance(claim.statable, (SelectsNearest, UniqueSelections)):
            # no theorem queries: the lemmas, and the system built (every position meets their side conditions)
            every_length_system(net, None, results, {}, [], claim.min_len, claim.statable)
        elif every in names and recorded is not None and every in recorded:
            for name, text, _solver in certificate_queries(
                net,
                claim,
                results,
                recorded_invariant(recorded[every]),
                readout_lemmas,
                readout_nodes,
            ):
                theorem[(claim.id, name)] = text
        out = {
            (node.name, q.name): q.smt2
            for r in results
            for node in r.node.walk()
            for q in node.queries
        }
        out.update({(node.name, q.name): q.smt2 for node in readout_nodes for q in node.queries})
        out.update(theorem)
        return out, (*(r.node for r in results), *readout_nodes)
    if isinstance(claim, Recognizes) and claim.induction is not None and recorded is not None:
        # an induction over layers: each step's certificate around its recorded invariant
        check_base(net, claim.induction)
        types = None  # the reduction by the type symmetry, where the record used it
        if any(n.startswith(f"{claim.id} every n: {SYMMETRY}: ") for n in names):
            try:
                sym = type_symmetry(net, claim, results)
            except Unsupported:
                sym = None  # the premise fails now: the recorded queries are not rebuilt
            if sym is not None:
                types = sym.kept
                for name, text, _reason, _solver in sym.queries:
                    theorem[(claim.id, name)] = text
        for step in step_names(len(claim.induction.after)):
            first = f"{claim.id} every n: {step}: {CERTIFICATE[0]}"
            if first in names and first in recorded:
                for name, text, _solver in induction_certificates(
                    net,
                    claim,
                    results,
                    step,
                    recorded_invariant(recorded[first]),
                    readout_lemmas,
                    readout_nodes,
                    types=types,
                ):
                    theorem[(claim.id, name)] = text
    if (
        isinstance(claim, Recognizes)
        and every in names
        and recorded is not None
        and every in recorded
    ):
        for name, text, _solver in certificate_queries(
            net, claim, results, recorded_invariant(recorded[every]), readout_lemmas, readout_nodes
        ):
            theorem[(claim.id, name)] = text
    if f"{claim.id} every n: {QUERY}" in names:
        _ctx, solver, _enc = (
            class_query(net, claim, results)
            if isinstance(claim, Recognizes)
            else value_query(net, claim, results)
        )
        theorem[(claim.id, f"{claim.id} every n: {QUERY}")] = to_smt2(solver, logic=LOGIC)
    for name in names:
        if not name.startswith(prefix):
            continue
        lo, _, hi = name[len(prefix) :].partition("..")
        if not lo.isdigit() or not (hi or lo).isdigit():
            continue
        if isinstance(claim, ValueIs):
            if hi:
                continue
            solver, _word_of, logic = value_builder(claim, results, readout_lemmas, readout_nodes)(
                net, int(lo)
            )
        else:
            _ab, solver, logic = theorem_query(
                net, claim.language, results, readout_lemmas, readout_nodes, int(lo), int(hi or lo)
            )
        theorem[(claim.id, name)] = to_smt2(solver, logic=logic)
    out = {
        (node.name, q.name): q.smt2 for r in results for node in r.node.walk() for q in node.queries
    }
    out.update({(node.name, q.name): q.smt2 for node in readout_nodes for q in node.queries})
    out.update(theorem)
    return out, (*(r.node for r in results), *readout_nodes)


def _layer_steps(
    net: Network,
    claim_id: str,
    rec: Any,
    steps: Sequence[str],
    results: Sequence[LemmaResult],
    names: Sequence[str],
    recorded: Mapping[str, str],
    **extra: Any,
) -> dict[tuple[str, str], str]:
    """The certificate queries of each step of a layer induction that the record made, around
    the invariant read back from the step's recorded initiation query."""
    theorem: dict[tuple[str, str], str] = {}
    for step in steps:
        first = f"{claim_id} every n: {step}: {CERTIFICATE[0]}"
        if first in names and first in recorded:
            invariant = recorded_invariant(recorded[first])
            for name, text, _solver in induction_certificates(
                net, rec, results, step, invariant, **extra
            ):
                theorem[(claim_id, name)] = text
    return theorem


def _rebuild_follows_counts(
    net: Network,
    claim: TraceProperty,
    watch: FollowsCounts,
    lemmas: Sequence[object],
    names: Sequence[str],
    recorded: Mapping[str, str] | None,
) -> tuple[dict[tuple[str, str], str], tuple[LemmaNode, ...]]:
    """:func:`rebuild_tree` for a :class:`FollowsCounts` property
    (:func:`.traces.prove_follows_counts`): the counting lemmas proved again, and the
    certificate of the counter system that watches the dims rebuilt around the recorded
    invariant."""
    nodes: list[LemmaNode] = []
    results: list[tuple[UniformCount | CountComparison, bool]] = []
    for lemma in lemmas:
        if isinstance(lemma, (UniformCount, CountComparison)):
            node, ok = counters.prove_counting_lemma(net, lemma)
            nodes.append(node)
            results.append((lemma, ok))
    out = {(node.name, q.name): q.smt2 for node in nodes for q in node.queries}
    first = f"{claim.id} every n: {CERTIFICATE[0]}"
    if first in names and recorded is not None and first in recorded:
        system = counters.counter_system(net, watch.automaton, results, watch)
        invariant = counters.read_invariant(system, recorded[first])
        for name, solver in counters.certificate(system, invariant):
            out[(claim.id, f"{claim.id} every n: {name}")] = to_smt2(solver, logic=counters.LOGIC)
    return out, tuple(nodes)
