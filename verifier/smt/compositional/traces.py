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
- :class:`FollowsCounts` (a compiled C-RASP program's ``operations``): its counting lemmas
  proved, the network with them in place read as a counter system over positions in product
  with the form's counter automaton, watching every named dim
  (:func:`.counters.counter_system` with ``watch``); an inductive invariant over the integers
  (candidate facts by Houdini, else Spacer) and its three certificate queries, as for a
  counting recognition proof (:func:`prove_follows_counts`).

A reachable violation is no verdict here: the caller looks for the shortest violating word
among the words of the bound (exhaustively, with the exact interpreter), and says ``unknown``
where none is that short.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.lemmas`, :mod:`.system`, :mod:`.invariants`,
:mod:`.search` and :mod:`.counters`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from netproof.symbolic import Network
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    AllowedNext,
    CountComparison,
    FollowsCounts,
    Lemma,
    NearestSelection,
    PairHeights,
    Proved,
    RankedSelection,
    SelectsNearest,
    TieRuleFree,
    TraceProperty,
    UniformCount,
    UniqueSelections,
    Unknown,
    Verdict,
)
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from . import counters
from .invariants import CERTIFICATE, certificate_queries, sat_solver
from .layers import keeps_form, marks_claim, marks_detail, ties_claim, ties_detail
from .lemmas import METHOD, LemmaResult, prove_lemma_once
from .search import CERTIFICATE_REASONS, prove_by_layers, reachable_states
from .system import every_length_system

__all__ = ["TraceOutcome", "prove_follows_counts", "prove_trace", "trace_detail"]


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
    if isinstance(claim.statable, TieRuleFree) and claim.statable.induction is not None:
        return head + ties_detail(ties_claim(claim, claim.statable)[0])
    if isinstance(claim.statable, UniqueSelections):
        heads = ", ".join(f"{layer}.{h}" for layer, h in claim.statable.heads)
        return head + (
            f"the network with the lemmas in place read as a transition system over positions, so every position of every word "
            f"meets the side conditions of the selection lemmas of {heads} (each applied at every position), whose strict "
            "score margins leave each head one maximizer"
        )
    if isinstance(claim.statable, FollowsCounts):
        watch = claim.statable
        return head + (
            f"the network with the lemmas in place read as a counter system over positions (integer running sums), in "
            f"product with the counter automaton of what each dim must hold ({len(watch.counts)} count dims, "
            f"{len(watch.comparisons)} comparison dims, each watched after the last sublayer at every word position), "
            f"an inductive invariant (candidate facts by Houdini, else Spacer) and its three queries "
            f"({', '.join(CERTIFICATE)}), each unsat"
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
    if isinstance(watch, FollowsCounts):  # counting lemmas, not block lemmas
        return prove_follows_counts(net, claim, lemmas, hi, timeout=timeout)
    results: list[LemmaResult] = []
    for k, lemma in enumerate(lemmas, 1):
        phase(f"lemmas {k}/{len(lemmas)}: {lemma.id}")
        node, ok = prove_lemma_once(
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
    ties = None
    if isinstance(watch, TieRuleFree) and watch.induction is not None:
        ties = watch
        layered = ties_claim(claim, watch)
        try:
            keeps_form(net, layered[0], results)
        except Unsupported as exc:
            return unknown(
                f"unsupported: the segments of the induction do not keep their form on every input ({exc})",
                results,
            )
    if layered is not None:
        rec, steps = layered
        layer_readout: list[LemmaNode] = []  # the tie step's readout lemma, proved on the way
        queries, because, _how = prove_by_layers(
            net,
            rec,
            results,
            {},
            layer_readout,
            max(0.001, timeout - (time.perf_counter() - started)),
            smtlib.Stop(),
            steps,
            ties,
        )
        if queries is None:
            return unknown(because, results)
        tree = LemmaNode(
            name=claim.id,
            statement=statement,
            verdict="proved",
            queries=tuple(queries),
            children=(*(r.node for r in results), *layer_readout, _side(results)),
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


def prove_follows_counts(
    net: Network, claim: TraceProperty, lemmas: Sequence[object], hi: int, *, timeout: float = 60.0
) -> TraceOutcome:
    """A :class:`FollowsCounts` property for every length (see the module docstring): the
    counting lemmas among ``lemmas`` proved, then the counter system that watches the dims, an
    inductive invariant and its three certificate queries. Unknown where a lemma is not proved,
    the network is no counter system that states the dims, or no invariant is found in time;
    ``violated`` where a word up to ``hi`` reaches a watched dim with another value (found by
    unrolling the system, and replayed with the exact interpreter and ``claim.holds``: the
    caller then finds the shortlex-first such word exhaustively)."""
    from netproof.symbolic.exact import run

    started = time.perf_counter()
    watch = claim.statable
    assert isinstance(watch, FollowsCounts)
    statement = claim.statement + f" (every word with {claim.min_len} <= |w| <= {hi})"
    counting = [x for x in lemmas if isinstance(x, (UniformCount, CountComparison))]
    nodes: list[LemmaNode] = []
    results: list[tuple[UniformCount | CountComparison, bool]] = []
    for k, lemma in enumerate(counting, 1):
        phase(f"counting lemmas {k}/{len(counting)}: {lemma.id}")
        node, ok = counters.prove_counting_lemma(
            net, lemma, timeout=max(1.0, timeout - (time.perf_counter() - started))
        )
        nodes.append(node)
        results.append((lemma, ok))
    side = LemmaNode(name="side conditions", statement=counters.SIDE_CONDITIONS, verdict="proved")

    def unknown(reason: str, violated: bool = False) -> TraceOutcome:
        tree = LemmaNode(
            name=claim.id, statement=statement, verdict="unknown", children=(*nodes, side)
        )
        return TraceOutcome(Unknown(METHOD, reason), tree, violated)

    if not counting:
        return unknown("unsupported: no counting lemmas (UniformCount, CountComparison) declared")
    unproved = [x.id for x, ok in results if not ok]
    if unproved:
        return unknown(f"the counting lemmas {', '.join(unproved)} are not proved")
    try:
        system = counters.counter_system(net, watch.automaton, results, watch)
    except Unsupported as exc:
        return unknown(f"unsupported: not a counter system that states the watched dims ({exc})")
    emb = net.embedding
    prefix = len(getattr(emb, "prefix", ()))
    symbols = len(net.alphabet)
    phase("counter system: candidate facts (Houdini)")
    how = "candidate facts, Houdini"
    unrolled = True
    status, inv = counters.houdini(
        system, prefix, max(1.0, (timeout - (time.perf_counter() - started)) / 2), symbols
    )
    if status != "safe":
        phase(f"counter system: a word up to length {hi} that breaks the property")
        found, unrolled = counters.unroll_search(
            system, prefix, hi, max(1.0, (timeout - (time.perf_counter() - started)) / 2)
        )
        if found is not None:
            word = tuple(net.alphabet[a] for a in found)
            if claim.holds(word, run(net, word)) is None:
                raise EncoderBugError(
                    f"the counter system of {claim.id} says a dim differs on {''.join(word)!r}, but the exact "
                    "interpreter's trace meets the claim: the system or the form's automaton is wrong; please "
                    "report this with the network file"
                )
            return unknown(
                f"a word of length {len(word)} breaks the property (found by the counter system, "
                "replayed exactly)",
                violated=True,
            )
        how = "Spacer"
        phase("counter system: Spacer")
        status, inv = counters.spacer(system, max(1.0, timeout - (time.perf_counter() - started)))
    if status == "unsafe" and not unrolled:
        return unknown(
            f"a bad state of the counter system is reachable (Spacer); the unrolling up to length {hi} got "
            "no answer in time, so a word of the bound that breaks the property is neither found nor excluded",
            violated=True,
        )
    if status == "unsafe":
        return unknown(
            f"a bad state of the counter system is reachable, but no word of length <= {hi} breaks the "
            "property (a longer one does, or a lemma's assumption fails, or the form's automaton has "
            "no rule for some step); raise --max-n to look further",
            violated=True,
        )
    if status != "safe":
        return unknown(f"Spacer: {inv} after {time.perf_counter() - started:.1f} s")
    # the certificate around the invariant read back from its printed initiation query, twice, as
    # the proof log's rebuild does (a term's printed form depends on the order terms were made)
    for _ in range(2):
        text = smtlib.to_smt2(counters.certificate(system, inv)[0][1], logic=counters.LOGIC)
        system = counters.counter_system(net, watch.automaton, results, watch)
        inv = counters.read_invariant(system, text)
    queries: list[SmtQuery] = []
    for name, solver in counters.certificate(system, inv):
        phase(f"certificate query {name}")
        text = smtlib.to_smt2(solver, logic=counters.LOGIC)
        began = time.perf_counter()
        answer, reason, _model = smtlib.check(
            solver, timeout=max(60.0, timeout - (began - started))
        )
        if answer == "unknown":
            return unknown(
                f"timeout: the invariant was found ({how}), but its query {name!r} was not answered ({reason})"
            )
        if answer != "unsat":
            raise EncoderBugError(
                f"the invariant ({how}) for {claim.id} fails its query {name!r} ({answer}): a bug in the counter system"
            )
        queries.append(
            SmtQuery(
                name=f"{claim.id} every n: {name}",
                smt2=text,
                result="unsat",
                reason=_FOLLOWS_REASONS[name],
                seconds=time.perf_counter() - began,
            )
        )
    tree = LemmaNode(
        name=claim.id,
        statement=statement,
        verdict="proved",
        queries=tuple(queries),
        children=(*nodes, side),
    )
    return TraceOutcome(
        Proved(METHOD, _words(net, claim.min_len, hi), trace_detail(claim, len(lemmas), hi)), tree
    )


_FOLLOWS_REASONS = {
    "initiation": "the invariant holds before the first token",
    "consecution": "reading one more token keeps the invariant",
    "safety": "no state of the invariant, after a word symbol, has a watched dim other than the form's value, a "
    "failed lemma assumption or the form's automaton without a rule",
}
