"""Trace properties for every length (:func:`prove_trace`): a :class:`TraceProperty` whose
:attr:`~TraceProperty.statable` form the transition system over positions can state.

- :class:`SelectsNearest`: what each listed head's NearestSelection lemma says, once the lemma
  is proved and the network with its lemmas in place is the transition system over positions
  (every position of every word then meets the lemma's side conditions: the dims it assumes
  Boolean are 0/1, its positional dims hold their features). The proof is the lemmas' queries,
  each for every n; the theorem adds none.
- :class:`PairHeights` and :class:`TieRuleFree`: the system watches the property
  (:func:`.system.every_length_system` with ``watch``), and its reachable states, by binary
  decision diagrams, are the invariant of three certificate queries, as for recognition.

A reachable violation is no verdict here: the caller looks for the shortest violating word
among the words of the bound (exhaustively, with the exact interpreter), and says ``unknown``
where none is that short.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.lemmas`, :mod:`.system`, :mod:`.invariants` and
:mod:`.search`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from netproof.symbolic import Network
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    AllowedNext,
    Lemma,
    NearestSelection,
    PairHeights,
    Proved,
    RankedSelection,
    SelectsNearest,
    TraceProperty,
    UniqueSelections,
    Unknown,
    Verdict,
)
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .invariants import CERTIFICATE, certificate_queries, sat_solver
from .layers import marks_claim, marks_detail
from .lemmas import METHOD, LemmaResult, prove_lemma
from .search import CERTIFICATE_REASONS, prove_by_layers, reachable_states
from .system import every_length_system

__all__ = ["TraceOutcome", "prove_trace", "trace_detail"]


@dataclass(frozen=True, slots=True)
class TraceOutcome:
    """What :func:`prove_trace` found: ``verdict`` (Proved for every length, or Unknown), the
    lemma tree, and ``violated`` where a violating word of some length exists (the verdict is
    then Unknown and the caller looks for the shortest)."""

    verdict: Verdict
    tree: LemmaNode
    violated: bool = False


def trace_detail(claim: TraceProperty, lemmas: int, hi: int) -> str:
    """The detail of a proof of ``claim`` for every length (the proof log checks it)."""
    head = f"every word with {claim.min_len} <= |w| <= {hi}, and every longer one: {lemmas} lemmas proved for every input, then, "
    if isinstance(claim.statable, PairHeights) and claim.statable.induction is not None:
        try:
            return head + marks_detail(marks_claim(claim, claim.statable)[0])
        except Unsupported:
            pass  # not the induction's marks: the whole network's system
    if isinstance(claim.statable, UniqueSelections):
        heads = ", ".join(f"{layer}.{h}" for layer, h in claim.statable.heads)
        return head + (
            f"the network with the lemmas in place read as a transition system over positions, so every position of every word "
            f"meets the side conditions of the selection lemmas of {heads} (each applied at every position), whose strict "
            "score margins leave each head one maximizer"
        )
    if isinstance(claim.statable, SelectsNearest):
        heads = ", ".join(f"{layer}.{h}" for layer, h in claim.statable.heads)
        return head + (
            f"the network with the lemmas in place read as a transition system over positions, so every position of every word "
            f"meets the side conditions of the NearestSelection lemmas of {heads}, which state the property"
        )
    return head + (
        "over the network with the lemmas in place read as a transition system over positions that watches the property, an "
        f"inductive invariant (the reachable states, by binary decision diagrams) and its three queries ({', '.join(CERTIFICATE)}), each unsat"
    )


def _words(net: Network, lo: int, hi: int) -> int:
    k = len(net.alphabet)
    return sum(k**m for m in range(lo, hi + 1))


def _side(results: Sequence[LemmaResult]) -> LemmaNode:
    return LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where the dims it assumes Boolean are 0/1 terms and its positional "
        "dims hold their features, at every position of every length; "
        + "; ".join(
            f"{r.lemma.id}: applied {r.uses} times"
            + (f", encoded faithfully where {r.fallbacks[0]}" if r.fallbacks else "")
            for r in results
        ),
        verdict="proved",
    )


def prove_trace(
    net: Network, claim: TraceProperty, lemmas: Sequence[Lemma], hi: int, *, timeout: float = 60.0
) -> TraceOutcome:
    """``claim`` for every length (its bound ``claim.min_len..hi`` named in the tree), from the
    construction's ``lemmas``, within ``timeout`` seconds. Unknown where the property has no
    statable form, a lemma it needs is not proved, the network is no transition system, or no
    invariant is found in time."""
    started = time.perf_counter()
    watch = claim.statable
    statement = claim.statement + f" (every word with {claim.min_len} <= |w| <= {hi})"

    def unknown(
        reason: str, results: Sequence[LemmaResult] = (), violated: bool = False
    ) -> TraceOutcome:
        tree = LemmaNode(
            name=claim.id,
            statement=statement,
            verdict="unknown",
            children=tuple(r.node for r in results),
        )
        return TraceOutcome(Unknown(METHOD, reason), tree, violated)

    if watch is None:
        return unknown(
            "unsupported: the trace property has no form the smt method states (TraceProperty.statable)"
        )
    if isinstance(watch, AllowedNext):  # proved from depth features (prove_allowed_next)
        return unknown("unsupported: an AllowedNext property is proved from depth features")
    results: list[LemmaResult] = []
    for k, lemma in enumerate(lemmas, 1):
        phase(f"lemmas {k}/{len(lemmas)}: {lemma.id}")
        node, ok = prove_lemma(
            net, lemma, timeout=max(0.001, timeout - (time.perf_counter() - started))
        )
        results.append(LemmaResult(lemma, node, ok))
    if isinstance(watch, (SelectsNearest, UniqueSelections)):
        kinds = (
            (NearestSelection,)
            if isinstance(watch, SelectsNearest)
            else (NearestSelection, RankedSelection)
        )
        what = (
            "NearestSelection"
            if isinstance(watch, SelectsNearest)
            else "NearestSelection or RankedSelection"
        )
        have = {(r.lemma.layer, r.lemma.head): r for r in results if isinstance(r.lemma, kinds)}
        missing = [f"{layer}.{h}" for layer, h in watch.heads if (layer, h) not in have]
        if missing:
            return unknown(f"unsupported: no {what} lemma for {', '.join(missing)}", results)
        unproved = [f"{layer}.{h}" for layer, h in watch.heads if not have[(layer, h)].proved]
        if unproved:
            return unknown(f"the {what} lemma of {', '.join(unproved)} is not proved", results)
        try:
            every_length_system(net, None, results, {}, [], claim.min_len, watch)
        except Unsupported as exc:
            return unknown(f"unsupported: not a transition system over positions ({exc})", results)
        unused = [f"{layer}.{h}" for layer, h in watch.heads if have[(layer, h)].uses == 0]
        if unused:
            return unknown(
                f"unsupported: the lemma of {', '.join(unused)} was never applied", results
            )
        partial = [
            f"{layer}.{h} ({have[(layer, h)].fallbacks[0]})"
            for layer, h in watch.heads
            if isinstance(watch, UniqueSelections) and have[(layer, h)].fallbacks
        ]
        if partial:
            return unknown(
                f"unsupported: the lemma of {', '.join(partial)} is not applied at every position",
                results,
            )
        tree = LemmaNode(
            name=claim.id,
            statement=statement,
            verdict="proved",
            children=(*(r.node for r in results), _side(results)),
        )
        return TraceOutcome(
            Proved(METHOD, _words(net, claim.min_len, hi), trace_detail(claim, len(results), hi)),
            tree,
        )
    layered = None
    if isinstance(watch, PairHeights) and watch.induction is not None:
        try:
            layered = marks_claim(claim, watch)
        except Unsupported:
            layered = None  # another property than the induction's marks: the whole network's system watches it
    if layered is not None:
        rec, steps = layered
        queries, because, _how = prove_by_layers(
            net,
            rec,
            results,
            {},
            [],
            max(0.001, timeout - (time.perf_counter() - started)),
            smtlib.Stop(),
            steps,
        )
        if queries is None:
            return unknown(because, results)
        tree = LemmaNode(
            name=claim.id,
            statement=statement,
            verdict="proved",
            queries=tuple(queries),
            children=(*(r.node for r in results), _side(results)),
        )
        return TraceOutcome(
            Proved(METHOD, _words(net, claim.min_len, hi), trace_detail(claim, len(results), hi)),
            tree,
        )
    readout_lemmas: dict[object, object] = {}
    readout_nodes: list[LemmaNode] = []
    try:
        system = every_length_system(
            net, None, results, readout_lemmas, readout_nodes, claim.min_len, watch
        )
    except Unsupported as exc:
        return unknown(
            f"unsupported: not a transition system over positions that watches the property ({exc})",
            results,
        )
    halt = smtlib.Stop()
    status, found = reachable_states(system, started + timeout, lambda: halt.requested)
    if status == "unsafe":
        return unknown(
            "a word that breaks the property (of some length) is reachable", results, violated=True
        )
    if status != "safe":
        return unknown(
            f"{'timeout' if 'time ran out' in str(found) else 'unsupported'}: the reachable states: {found}",
            results,
        )
    queries = []
    fresh_readout: dict[object, object] = {}
    fresh_nodes: list[LemmaNode] = []
    for name, text, solver in certificate_queries(
        net, claim, results, found, fresh_readout, fresh_nodes
    ):
        began = time.perf_counter()
        left = max(60.0, timeout - (began - started))
        answer, reason, _model = smtlib.check(sat_solver(solver), timeout=left)
        if answer == "unknown":  # out of time: no proof, and no sign of a bug
            return unknown(
                f"timeout: the reachable states were found, but their query {name!r} was not answered within {left:.0f} s ({reason})",
                results,
            )
        if answer != "unsat":
            raise EncoderBugError(
                f"the reachable states for {claim.id} fail their query {name!r} ({answer}{': ' + reason if reason else ''}): "
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
    tree = LemmaNode(
        name=claim.id,
        statement=statement,
        verdict="proved",
        queries=tuple(queries),
        children=(*(r.node for r in results), *fresh_nodes, _side(results)),
    )
    return TraceOutcome(
        Proved(METHOD, _words(net, claim.min_len, hi), trace_detail(claim, len(results), hi)), tree
    )
