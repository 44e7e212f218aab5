"""Value claims with a closed form, proved compositionally (:func:`prove_value`): the block
lemmas first, then one query for every length over position classes where the network allows it
(:mod:`.classes`), else one query per length over the abstracted network (:func:`value_builder`,
in the per-length loop of :func:`netproof.verifier.smt.monolithic.value_is_smt`).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`netproof.verifier.smt.closed_forms`,
:mod:`netproof.verifier.smt.monolithic`, :mod:`.arithmetic`, :mod:`.lemmas`,
:mod:`.abstraction` and :mod:`.classes`; z3 inside functions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from netproof.symbolic import Classifier, Network, TokenEmbedding, render
from netproof.verifier import smtlib
from netproof.verifier.claims import Lemma, Output, Proved, Refuted, Unknown, ValueIs, Word
from netproof.verifier.smt.closed_forms import closed_form_term, replay_value
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.monolithic import value_is_smt
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import LemmaNode, Outcome

from . import classes
from .abstraction import Abstraction
from .arithmetic import affine_map
from .lemmas import METHOD, LemmaResult, prove_lemma


def value_builder(
    claim: ValueIs,
    results: Sequence[LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
) -> Callable[[Network, int], tuple[Any, Callable[[Any], Word], str | None]]:
    """The query "some word of length m has a value other than the closed form" over the
    network with the proved lemmas in place (:data:`netproof.verifier.smt.monolithic.ValueBuilder`): the value of
    the claim's dim after its step at every token (or the logit), against the closed form, whose
    counts are the same Int variables the network's uniform heads sum into."""

    def build(net: Network, m: int) -> tuple[Any, Callable[[Any], Word], str | None]:
        import z3

        if claim.closed_form is None:
            raise Unsupported(f"claim {claim.id} has no closed form")
        ctx = z3.Context()
        ab = Abstraction(z3, ctx, net, m, results, readout_lemmas, readout_nodes)
        emb = net.embedding
        assert isinstance(emb, TokenEmbedding)
        alphabet = list(ab.alphabet)

        def count(a: str) -> Any:
            bools = [ab.is_symbol(j, alphabet.index(a)) for j in range(m)]
            return z3.ToReal(ab.vals.count(bools)) if bools else ab.vals.num(Fraction(0))

        def indicator(j: int, a: str) -> Any:
            if j > m:
                return ab.vals.num(Fraction(0))
            return ab.vals.arith(ab.is_symbol(j - 1, alphabet.index(a)))

        points: list[tuple[int, Any]] = []
        if isinstance(claim.quantity, Output):
            r = net.readout
            if not isinstance(r, Classifier):
                raise Unsupported("the logit of a network without a classifier readout")
            t = r.position if r.position >= 0 else ab.N + r.position
            x, scale = ab.state(len(net.layers), t)
            if scale is not None:
                raise Unsupported("the logit at a scaled position (an averaging head before it)")
            points.append((0, affine_map(ab.vals, r.logit, x)[r.logit.outputs[0]]))
        else:
            names = ["input", *(sub.name for sub in net.layers)]
            if claim.quantity.after not in names:
                raise Unsupported(
                    f"claim {claim.id}: the network has no step named {claim.quantity.after!r}"
                )
            layer = names.index(claim.quantity.after)
            for t in range(ab.N):
                x, scale = ab.state(layer, t)
                if scale is not None:
                    raise Unsupported(
                        f"dim {claim.quantity.dim!r} at token {t} is scaled (an averaging head before it)"
                    )
                points.append((t, x.get(claim.quantity.dim, Fraction(0))))
        differs = []
        for t, value in points:
            expected = closed_form_term(
                z3,
                ctx,
                claim.closed_form,
                alphabet,
                (t, emb.index_base + t, ab.N),
                count,
                indicator,
            )
            differs.append(ab.vals.arith(value) != expected)
        solver = z3.Solver(ctx=ctx)
        solver.add(*ab.vals.assertions)
        solver.add(z3.Or(differs) if differs else z3.BoolVal(False, ctx))
        return solver, ab.word_of, None

    return build


def _value_by_classes(
    job: Any, claim: ValueIs, results: Sequence[LemmaResult], n: int, timeout: float
) -> Outcome | str:
    """The value claim for every length as one query over position classes
    (:func:`.classes.value_query`): its outcome where z3 says unsat, else why not (a
    word of the model is replayed exactly first: one on which the network agrees with the claim
    is an encoder bug)."""
    if job.construction.per_length:
        return "the construction builds one network per length"
    net = job.network(n)
    try:
        _ctx, solver, enc = classes.value_query(net, claim, results)
    except Unsupported as exc:
        return f"unsupported by position classes: {exc}"
    query, model = smtlib.solve(
        solver,
        name=f"{claim.id} every n: {classes.QUERY}",
        logic=classes.LOGIC,
        timeout=timeout,
        reason_unsat=f"on no word of any length >= {claim.min_len} does the value differ from the closed form "
        "(its positions grouped by class and symbol)",
    )
    if query.result == "unsat":
        checked = sum(len(job.alphabet) ** m for m in range(claim.min_len, n + 1))
        return Outcome(
            Proved(
                METHOD,
                checked,
                f"every word with {claim.min_len} <= |w| <= {n}, and every longer one: one query over "
                "a word of symbolic length, its positions grouped by the values of their positional features and by symbol, unsat",
            ),
            (query,),
        )
    if query.result == "sat":
        word = enc.word_of(model)
        replay_value(net, claim, job.alphabet, word, METHOD)
        return f"position classes give the word {repr(render(job.alphabet, word)) if render(job.alphabet, word) else 'ε'}, so the lengths are tried one by one for the shortest"
    return f"position classes: z3 {query.reason or 'unknown'}"


def prove_value(
    job: Any, claim: ValueIs, lemmas: Sequence[Lemma], n: int, *, timeout: float = 60.0
) -> Outcome:
    """A :class:`ValueIs` with a closed form, proved compositionally: each lemma once, then one
    query for every length over position classes where the network allows it
    (:func:`_value_by_classes`), else one query per length over the network with the proved
    lemmas in place (:func:`netproof.verifier.smt.monolithic.value_is_smt` with :func:`value_builder`); the outcome
    carries the lemma tree (the claim at the root with its queries, the lemmas below)."""
    started = time.perf_counter()
    results: list[LemmaResult] = []
    for k, lemma in enumerate(lemmas, 1):
        phase(f"lemmas {k}/{len(lemmas)}: {lemma.id}")
        node, ok = prove_lemma(
            job.network(n), lemma, timeout=max(0.001, timeout - (time.perf_counter() - started))
        )
        results.append(LemmaResult(lemma, node, ok))
    readout_nodes: list[LemmaNode] = []
    every = _value_by_classes(job, claim, results, n, timeout / 2)
    if isinstance(every, Outcome):
        outcome = every
    else:
        outcome = value_is_smt(
            job,
            claim,
            claim.min_len,
            n,
            timeout=max(0.001, timeout - (time.perf_counter() - started)),
            build=value_builder(claim, results, {}, readout_nodes),
            method=METHOD,
            name=f"{claim.id} n={{m}}",
        )
        if isinstance(outcome.verdict, Proved):
            outcome = Outcome(
                replace(
                    outcome.verdict,
                    detail=f"{outcome.verdict.detail} (not every length at once: {every})",
                ),
                outcome.queries,
            )
    status = {Proved: "proved", Refuted: "refuted", Unknown: "unknown"}[type(outcome.verdict)]
    side = LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where its assumptions hold, at every position of every length; "
        + "; ".join(
            f"{r.lemma.id}: applied {r.uses} times"
            + (f", encoded faithfully where {r.fallbacks[0]}" if r.fallbacks else "")
            for r in results
        ),
        verdict="proved",
    )
    tree = LemmaNode(
        name=claim.id,
        statement=claim.statement + f" (every word with {claim.min_len} <= |w| <= {n})",
        verdict=status,  # type: ignore[arg-type]
        queries=outcome.queries,
        children=(*(r.node for r in results), *readout_nodes, side),
    )
    return Outcome(outcome.verdict, (), tree)
