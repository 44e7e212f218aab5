"""The compositional proof of a recognition claim (:func:`prove_recognizes`): the block lemmas
first, then one query per range of word lengths over the abstracted network (the ranges
doubling: ``min_len..16``, ``17..32``, ...; one query per length where the network computes
with a length-dependent value), beside the search for a proof for every length
(:mod:`.search`), whose proof, where it comes, is the verdict. A counterexample is brought to
the shortest length its range allows and shrunk to the shortlex-first one of that length.
:func:`prove_compositional` does it for one claim of a construction.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.lemmas`, :mod:`.abstraction`, :mod:`.invariants`
and :mod:`.search`; z3 inside functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netproof.symbolic import Network, render
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    Construction,
    Language,
    Lemma,
    Proved,
    Recognizes,
    Refuted,
    Unknown,
    Verdict,
    Word,
)
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .abstraction import Abstraction
from .invariants import CERTIFICATE
from .layers import induction_detail
from .lemmas import METHOD, LemmaResult, prove_lemma, replay
from .search import BY_LAYERS, EveryLengthSearch

_FIRST_RANGE = 16  # the first query over a range of lengths covers min_len..16


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a compositional proof got: the verdict, the lemma tree, and the largest length
    every shorter length of which was proved (−1: none)."""

    verdict: Verdict
    tree: LemmaNode
    proved_up_to: int
    every_length: bool = False  # proved for every length (an inductive invariant, or position classes), not only up to the bound


def _next_range(a: int, n: int, done: Sequence[tuple[int, int, float]], left: float) -> int:
    """The last length of the range that starts at ``a``: twice the last one (``min_len..16``,
    ``17..32``, ...), unless the ranges proved so far (``(first, last, seconds)`` each) predict
    that it would not fit in half the budget left; then the longest range predicted to fit (at
    least length ``a`` alone). The prediction: a full range's time (one that doubled the
    lengths) grows as (last length)^p, p fitted to the last two full ranges (clamped to 1..4;
    3 with fewer than two), from the last full range."""
    b = min(n, max(_FIRST_RANGE, 2 * (a - 1)))
    full = [(hi, t) for i, (lo, hi, t) in enumerate(done) if i == 0 or hi >= 2 * (lo - 1)]
    if not full:
        return b
    hi, t = full[-1]
    p = 3.0
    if len(full) >= 2:
        hi0, t0 = full[-2]
        if hi > hi0 > 0 and t > 0.05 and t0 > 0.05:
            p = min(4.0, max(1.0, math.log(t / t0) / math.log(hi / hi0)))
    if t <= 0 or t * (b / hi) ** p <= left / 2:
        return b
    fits = int(hi * ((left / 2) / t) ** (1 / p))
    return max(a, min(b, fits))


def theorem_query(
    net: Network,
    language: Language,
    results: Sequence[LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
    lo: int,
    hi: int,
) -> tuple[Abstraction, Any, str | None]:
    """The theorem's query over the words of length ``lo..hi`` (the network with the proved
    lemmas in place, accept != membership), its solver and its SMT-LIB2 logic."""
    import z3

    ctx = z3.Context()
    ab = Abstraction(z3, ctx, net, hi, results, readout_lemmas, readout_nodes, lo=lo)
    goal = ab.accept() != ab.member(language)  # first: both add definitions to the assertions
    # The smallest standard logic (cvc5 re-checks C4 at n = 22 in 0.01 s as QF_LIRA and not in 30 s as ALL).
    logic = None if ab.vals.arithmetic else "QF_UF"
    solver = z3.Solver(ctx=ctx) if ab.vals.arithmetic else _boolean_solver(z3, ctx)
    solver.add(*ab.vals.assertions)
    solver.add(goal)
    return ab, solver, logic


def _boolean_solver(z3: Any, ctx: Any) -> Any:
    """The solver for a query with Booleans only (every block a Boolean lemma or a scan, the
    automaton): z3's simplifier and equation solver first (they remove the named definitions),
    then its SMT core. Measured on the range queries (2-core machine, one run each): Dyck(1,1)
    lengths 1025..2048 2.2 s (plain ``Solver()`` 8.7 s, ``SolverFor("QF_UF")`` 8.7 s); Dyck(2,2)
    lengths 65..128 14 s (``Solver()`` 24 s, ``SolverFor("QF_UF")`` 7 s)."""
    return z3.Then(
        z3.Tactic("simplify", ctx=ctx),
        z3.Tactic("solve-eqs", ctx=ctx),
        z3.Tactic("smt", ctx=ctx),
        ctx=ctx,
    ).solver()


def _shortest(ab: Abstraction, solver: Any, model: Any, deadline: float) -> Word:
    """A counterexample of the shortest length the range query allows (binary search on the
    symbolic length; the model's word where time runs out)."""
    import z3

    word = ab.word_of(model)
    low, high = ab.lo, len(word)
    while low < high and time.perf_counter() < deadline:
        mid = (low + high) // 2
        solver.push()
        solver.add(z3.Not(ab.present[mid]))  # length <= mid
        answer, _reason, found = smtlib.check(
            solver, timeout=max(0.001, deadline - time.perf_counter()), want_model=True
        )
        if answer == "sat":
            word = ab.word_of(found)
            high = len(word)
        elif answer == "unsat":
            low = mid + 1
        solver.pop()
        if answer not in ("sat", "unsat"):
            break
    return word


def _shrink(ab: Abstraction, solver: Any, word: Word, deadline: float) -> Word:
    """The shortlex-first counterexample of this length: fix the symbols left to right, each to
    the smallest one that still leaves a counterexample (one solver call per position and
    candidate, within the deadline; the word found so far if time runs out)."""
    fixed: list[Any] = []
    out = list(word)
    for t in range(ab.m):
        for a in range(len(ab.alphabet)):
            if ab.alphabet[a] == out[t] or time.perf_counter() >= deadline:
                fixed.append(ab.is_symbol(t, ab.alphabet.index(out[t])))
                break
            solver.push()
            solver.add(*fixed, ab.is_symbol(t, a))
            _answer, _reason, model = smtlib.check(
                solver, timeout=max(0.001, deadline - time.perf_counter()), want_model=True
            )
            solver.pop()
            if model is not None:
                out = list(ab.word_of(model))
                fixed.append(ab.is_symbol(t, a))
                break
    return tuple(out)


def prove_recognizes(
    net: Network,
    claim: Recognizes,
    lemmas: Sequence[Lemma],
    n: int,
    *,
    timeout: float = 60.0,
    on_length: Callable[[int, float], None] | None = None,
    lengths: str = "all",
) -> Progress:
    """Prove ``claim`` (accept ⇔ membership) for every word with ``claim.min_len <= |w| <= n``
    from ``lemmas``: each lemma once, then queries over the abstracted network.

    ``lengths="all"`` (the default) tries every length at once, in a thread beside the range
    queries (:class:`EveryLengthSearch`): the network with the lemmas in place as a transition
    system over positions (:func:`.system.every_length_system`), an inductive invariant (its reachable
    states by binary decision diagrams, else Spacer, z3's IC3/PDR), and three unsat queries that
    make it a proof (initiation, consecution, safety: the theorem's queries in the log). Where it
    succeeds, that proof is the verdict, and the range queries are dropped. Where the network is
    not such a system (a head without a NearestSelection lemma, a readout that is not a presence
    readout), the search asks one query over position classes instead (:mod:`netproof.verifier.smt.compositional.classes`:
    soft attention whose scores repeat with the position, as in PARITY). Where neither applies,
    or no invariant is found in time, or a word that breaks the claim (of any length) exists, the
    verdict is that of ``lengths="ranges"``, which find the shortest counterexample. Once the
    ranges reach ``n``, the search gets the rest of the budget.

    ``lengths="ranges"`` asks one query per range of lengths, the ranges doubling
    (``min_len..16``, ``17..32``, ``33..64``, ...): the word has ``hi`` slots and a symbolic
    length, so a query costs about what one length ``hi`` costs and the whole proof about twice
    the last range, instead of the sum over every length. Where the network cannot be encoded
    over a symbolic length (a positional value it computes with, an averaging or softmax head
    without a lemma over the slots), it falls back to ``lengths="each"``: one query per length.
    ``timeout`` is the budget in seconds for everything; ``on_length(m, seconds)`` is called
    after each proved range or length, with its last length (for benchmarks)."""
    if lengths not in ("all", "ranges", "each"):
        raise ValueError(
            f"lengths={lengths!r}: use 'all' (every length at once where the network allows, else ranges), "
            "'ranges' (one query per range of lengths) or 'each' (one query per length)"
        )

    started = time.perf_counter()
    deadline = started + timeout
    results: list[LemmaResult] = []
    for k, lemma in enumerate(lemmas, 1):
        phase(f"lemmas {k}/{len(lemmas)}: {lemma.id}")
        node, ok = prove_lemma(net, lemma, timeout=max(0.001, deadline - time.perf_counter()))
        results.append(LemmaResult(lemma, node, ok))
    language = claim.language
    readout_lemmas: dict[Any, Any] = {}
    readout_nodes: list[LemmaNode] = []
    queries: list[SmtQuery] = []
    verdict: Verdict | None = None
    proved_up_to = claim.min_len - 1
    per_length_because = ""
    last_build = 0.0  # seconds the last range's query took to build (and print, below)
    done: list[
        tuple[int, int, float]
    ] = []  # (first length, last length, seconds) of each range proved
    every_because = ""
    every_done = False
    search: EveryLengthSearch | None = None
    if lengths == "all":
        lengths = "ranges"
        search = EveryLengthSearch(net, claim, results, deadline - time.perf_counter())
    try:
        a = claim.min_len
        while a <= n:
            if search is not None and search.proved:
                break
            b = a if lengths == "each" else _next_range(a, n, done, deadline - time.perf_counter())
            shown = f"{a}" if a == b else f"{a}..{b}"
            left = deadline - time.perf_counter()
            if left <= 0:
                verdict = Unknown(
                    METHOD,
                    f"timeout: the {timeout:g} s budget ran out before length {a} (lengths {claim.min_len}..{a - 1} proved)",
                )
                break
            if a < b and 2 * last_build > left:
                # Building a query cannot be interrupted, and a range twice as long takes about twice as long to build.
                verdict = Unknown(
                    METHOD,
                    f"timeout: {left:.1f} s of the {timeout:g} s budget left, less than building lengths {shown} "
                    f"would take (twice the {last_build:.1f} s of the last range); lengths {claim.min_len}..{a - 1} proved",
                )
                break
            range_started = time.perf_counter()
            phase(f"length {shown} of {claim.min_len}..{n}")
            before = [(r.uses, len(r.fallbacks)) for r in results]
            try:
                ab, solver, logic = theorem_query(
                    net, language, results, readout_lemmas, readout_nodes, a, b
                )
            except Unsupported as exc:
                if a < b:
                    # Not encodable over a symbolic length: one query per length from here on.
                    lengths, per_length_because = "each", str(exc)
                    for r, (uses, fallbacks) in zip(results, before, strict=True):
                        r.uses, r.fallbacks = uses, r.fallbacks[:fallbacks]
                    continue
                verdict = Unknown(METHOD, f"unsupported: {exc}")
                break
            built = time.perf_counter() - range_started
            words = f"length {a}" if a == b else f"length {a} to {b}"
            if search is not None and not search.claim_ranges():
                break
            query, model = smtlib.solve(
                solver,
                name=f"{claim.id} n={shown}",
                logic=logic,
                timeout=max(0.001, deadline - time.perf_counter()),
                reason_unsat=f"no word of {words} is misclassified (lemmas in place of their blocks)",
                stop=None if search is None else search.ranges,
            )
            if search is not None and not search.claim_ranges():
                break  # the proof for every length came first (and may have stopped this query)
            queries.append(query)
            if query.result == "unsat":
                proved_up_to = b
                last_build = built
                done.append((a, b, time.perf_counter() - range_started))
                if on_length is not None:
                    on_length(b, time.perf_counter() - started)
                a = b + 1
                continue
            if query.result == "sat":
                word = _shortest(ab, solver, model, deadline)
                if len(word) != b or a != b:
                    # Shrink among the words of that one length, in a query of its own.
                    ab1, solver1, _logic = theorem_query(
                        net, language, results, readout_lemmas, readout_nodes, len(word), len(word)
                    )
                    word = _shrink(ab1, solver1, word, deadline)
                else:
                    word = _shrink(ab, solver, word, deadline)
                verdict = replay(net, language, word)
                queries[-1] = SmtQuery(
                    name=query.name,
                    smt2=query.smt2,
                    result="sat",
                    reason=f"counterexample {render(language.alphabet, word) or 'ε'!r}",
                    seconds=query.seconds,
                )
                proved_up_to = len(word) - 1
                break
            reason = query.reason or "unknown"
            if reason == "timeout":
                reason = f"timeout after {timeout:g} s at length {shown}"
            verdict = Unknown(METHOD, f"z3: {reason} (lengths {claim.min_len}..{a - 1} proved)")
            break
        if search is not None:
            # The search may still prove every length, until the budget's end: a proof for every
            # length is worth the time the ranges left (Dyck(2, 10)'s reachable states took 4
            # minutes, and their certificate more than one).
            if isinstance(verdict, Refuted):
                search.cancel()
                if search.proved:
                    raise EncoderBugError(
                        f"Spacer's invariant proves {claim.id} for every length, but the range queries found the counterexample "
                        f"{verdict.detail}: a bug in the transition system or the range encoding"
                    )
            else:
                search.wait(deadline)
            if search.proved:
                assert search.queries is not None
                queries[:] = search.queries
                results, readout_nodes = search.results, search.readout_nodes
                lengths, per_length_because = "ranges", ""
                detail = (
                    f"every word with {claim.min_len} <= |w| <= {n}, and every longer one: {len(results)} lemmas proved for every input, then, "
                    + (
                        "over the network with the lemmas in place on a word of symbolic length, its positions grouped by the "
                        "values of their positional features and by symbol, one query, unsat"
                        if search.how == "position classes"
                        else induction_detail(claim, search.how[len(BY_LAYERS) + 2 :])
                        if search.how.startswith(BY_LAYERS)
                        else "over the network with the lemmas in place read as a transition system over positions, an inductive "
                        f"invariant ({search.how}) and its three queries ({', '.join(CERTIFICATE)}), each unsat"
                    )
                )
                verdict = Proved(
                    METHOD,
                    sum(len(language.alphabet) ** m for m in range(claim.min_len, n + 1)),
                    detail,
                )
                proved_up_to = n
                every_done = True
                if on_length is not None:
                    on_length(n, time.perf_counter() - started)
            else:
                every_because = search.because
                if verdict is None and every_because.startswith("stopped after "):
                    every_because += ": the ranges had reached the bound, and the budget was spent"
    finally:
        if search is not None:
            search.cancel()  # an exception or Ctrl-C leaves no thread running
    unproved = [r for r in results if not r.proved]
    if verdict is None:
        detail = (
            f"every word with {claim.min_len} <= |w| <= {n}: {len(results) - len(unproved)} lemmas proved for every "
            + (
                "input, then one query per length over the network with the lemmas in place, each unsat"
                if lengths == "each"
                else f"input, then {len(queries)} {'query' if len(queries) == 1 else 'queries'} over ranges of lengths "
                f"({', '.join(q.name.split('n=', 1)[-1] for q in queries)}) over the network with the lemmas in place, each unsat"
            )
            + (f" (not over ranges of lengths: {per_length_because})" if per_length_because else "")
            + (f" (not every length at once: {every_because})" if every_because else "")
        )
        verdict = Proved(
            METHOD, sum(len(language.alphabet) ** m for m in range(claim.min_len, n + 1)), detail
        )
    side = LemmaNode(
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
    status = {Proved: "proved", Refuted: "refuted", Unknown: "unknown"}[type(verdict)]
    tree = LemmaNode(
        name=claim.id,
        statement=claim.statement + f" (every word with {claim.min_len} <= |w| <= {n})",
        verdict=status,  # type: ignore[arg-type]
        queries=tuple(queries),
        children=(*(r.node for r in results), *readout_nodes, side),
    )
    return Progress(verdict, tree, proved_up_to, every_length=every_done)


def prove_compositional(
    construction: Construction,
    params: Mapping[str, str],
    claim_id: str,
    n: int,
    *,
    timeout: float = 60.0,
    lengths: str = "all",
) -> tuple[Verdict, LemmaNode]:
    """The compositional proof of claim ``claim_id`` of ``construction`` (the caller looks a name
    up in its registry) for every word length up to ``n``, within ``timeout`` seconds in all: its
    verdict and its lemma tree (the theorem at the root, each lemma a child with its own verdict
    and query). ``params`` as typed on the command line (``{"k": "2", "depth": "2"}``);
    ``lengths`` as in :func:`prove_recognizes`.

    A claim that is not a recognition claim with an automaton, or a construction that declares
    no lemmas, is ``Unknown("unsupported: ...")``.
    """
    values = construction.parse_params(dict(params))
    claims = {c.id: c for c in construction.claims(values)}
    if claim_id not in claims:
        raise KeyError(
            f"claim_id={claim_id!r} is not a claim of {construction.name}; its claims: {', '.join(claims)}"
        )
    claim = claims[claim_id]
    lemmas = construction.lemmas(values) if construction.lemmas is not None else ()
    if not isinstance(claim, Recognizes) or (
        claim.language.automaton is None and claim.language.stack is None
    ):
        reason = f"unsupported: compositional proofs cover recognition claims against a language with an automaton, not {type(claim).__name__} {claim_id}"
        return Unknown(METHOD, reason), LemmaNode(
            name=claim_id, statement=claim.statement, verdict="unknown"
        )
    net = (
        construction.network(values, n) if construction.per_length else construction.network(values)
    )
    if not isinstance(net, Network):
        reason = f"unsupported: compositional proofs cover transformer-style networks, not a {type(net).__name__}"
        return Unknown(METHOD, reason), LemmaNode(
            name=claim_id, statement=claim.statement, verdict="unknown"
        )
    progress = prove_recognizes(net, claim, lemmas, n, timeout=timeout, lengths=lengths)
    return progress.verdict, progress.tree
