"""Checkers: turn a claim about a construction into a verdict.

``exhaustive`` claims evaluate every word of Σ^{min..max} in shortlex order (so the first
counterexample found is a shortest one) with the backend the claim names:

- ``exact``: Fractions; equality and signs are exact.
- ``symbolic``: sympy with the softmax base kept as the symbol E; values are rational functions
  of E and identities are decided by ``cancel`` (a canonical form).
- ``sympy``: exact algebraic/transcendental expressions; signs from rigorous enclosures, zero by
  simplification.
- ``interval``: rigorous interval enclosures (mpmath ``iv``, 60 digits). They prove signs and
  strict inequalities and refute equalities; an equality they cannot refute is ``Unknown``.

:class:`SignForAllBases` and :class:`BlockIdentity` use z3 with an explicit context and
numerals built from Fractions; :class:`Identity` uses sympy; :class:`MirrorInvariant` is checked
on the IR (a proof for every word) and refuted by evaluation.

This module is the dispatcher: :func:`check` (a claim over its bound) and :func:`check_word` (a
claim on one word); the checks themselves live by concern in
:mod:`~netproof.verifier.exhaustive.job` (words, :class:`Job`, shared helpers),
:mod:`~netproof.verifier.exhaustive.wordwise` (claims checked word by word),
:mod:`~netproof.verifier.exhaustive.solver_claims` (claims decided by z3 or sympy),
:mod:`~netproof.verifier.exhaustive.recurrent`, :mod:`~netproof.verifier.exhaustive.simulation`
and :mod:`~netproof.verifier.exhaustive.mirror`. The names other packages use are re-exported
here (``from netproof.verifier.exhaustive.checker import Job, check, words, ...``).

May import: the claims vocabulary, :mod:`netproof.symbolic`, and the modules of this package.
"""

from __future__ import annotations

from typing import Any, assert_never

from netproof.verifier.claims import (
    BlockIdentity,
    Bound,
    Claim,
    ExactFact,
    ForAll,
    Identity,
    MirrorInvariant,
    PredictsNext,
    Proved,
    Recognizes,
    Refuted,
    SignForAllBases,
    Simulates,
    SoftAgrees,
    TraceProperty,
    Unknown,
    ValueIs,
    Verdict,
    Word,
    fact_at,
)

from .job import TRACE_CACHE, TRACES, Job, Progress, count_words, format_value, words
from .mirror import check_mirror
from .recurrent import check_predicts_next, check_soft_agrees
from .simulation import check_simulates, simulates_word
from .solver_claims import (
    block_identity_query,
    check_block_identity,
    check_for_all,
    check_identity,
    check_sign_for_all_bases,
)
from .wordwise import (
    Body,
    bound_body,
    check_bound,
    check_recognizes,
    check_trace_property,
    check_value_is,
    recognizes_body,
    trace_body,
    traced,
    value_is_body,
)

__all__ = [
    "TRACE_CACHE",
    "Body",
    "Job",
    "Progress",
    "block_identity_query",
    "check",
    "check_word",
    "count_words",
    "format_value",
    "value_is_body",
    "words",
]


def check(
    job: Job,
    claim: Claim,
    *,
    max_len: int | None = None,
    progress: Progress | None = None,
    queries: list[Any] | None = None,
) -> Verdict:
    """The verdict of ``claim`` for ``job`` up to ``max_len`` (default: the claim's own bound).

    ``queries``: a list that receives the :class:`netproof.verifier.smtlib.queries.SmtQuery` of every
    solver query a single-query claim (:class:`BlockIdentity`) makes, for its proof log."""
    bound = claim.max_len if max_len is None else max_len
    match claim:
        case Recognizes():
            return check_recognizes(job, claim, bound, progress)
        case ValueIs():
            return check_value_is(job, claim, bound, progress)
        case Bound():
            return check_bound(job, claim, bound, progress)
        case SignForAllBases():
            return check_sign_for_all_bases(job, claim, bound, progress)
        case MirrorInvariant():
            return check_mirror(job, claim, bound, progress)
        case BlockIdentity():
            return check_block_identity(job, claim, queries)
        case Identity():
            return check_identity(claim)
        case TraceProperty():
            return check_trace_property(job, claim, bound, progress)
        case ExactFact():
            return check_exact_fact(fact_at(claim, max_len))
        case PredictsNext():
            return check_predicts_next(job, claim, bound, progress)
        case SoftAgrees():
            return check_soft_agrees(job, claim, bound, progress)
        case ForAll():
            return check_for_all(claim)
        case Simulates():
            return check_simulates(job, claim, bound, progress)
        case _:
            assert_never(claim)


EVERY_LENGTH_FACT = "structural (exact, every length)"
"""The method of an :class:`ExactFact` whose check decides every length (``every_length``)."""


def check_exact_fact(claim: ExactFact) -> Verdict:
    """An :class:`ExactFact`: its own exact check, no words; one that decides every length
    (``every_length``) is recorded as a structural proof, for every length."""
    method = EVERY_LENGTH_FACT if claim.every_length else "exact rational arithmetic"
    checked, failure = claim.check()
    if failure is not None:
        return Refuted(method, failure, None)
    return Proved(method, checked, claim.cases)


def check_word(job: Job, claim: Claim, word: Word) -> Verdict | None:
    """The verdict of ``claim`` on the one word ``word``: a :class:`Refuted` (with the same
    message the exhaustive check gives for that word), an :class:`Unknown` when the claim's
    backend cannot decide it, or None when the claim holds on it. For replaying a counterexample
    found elsewhere (``netproof fuzz``, a user's word).

    Only claims checked word by word have a per-word verdict (:class:`Recognizes`,
    :class:`ValueIs`, :class:`Bound`, :class:`TraceProperty`, an :class:`ExactFact` with a
    :class:`~netproof.verifier.claims.SameLanguage` form); the others give an
    :class:`Unknown` that says to use :func:`check`. A :class:`TraceProperty` word that its
    ``only`` leaves out gives None; a ``domain`` is not checked (the caller draws from it).
    A word outside the alphabet is a ``ValueError``.
    """
    alphabet = job.alphabet
    w = tuple(word)
    bad = [s for s in w if s not in alphabet]
    if bad:
        raise ValueError(
            f"word {w!r} has symbols {bad} outside the alphabet {alphabet} of {job.construction.name}"
        )
    if isinstance(claim, Simulates):
        verdict = simulates_word(job, claim, w, "single word (exact), step by step")
        return None if isinstance(verdict, tuple) else verdict
    if (
        isinstance(claim, ExactFact) and claim.statable is not None
    ):  # two languages: the same answer on w
        left, right = claim.statable.left, claim.statable.right
        if left.contains(w) == right.contains(w):
            return None
        shown = "".join(w) or "the empty word"
        return Refuted(
            "single word (exact)",
            f"on {shown!r} {left.name} says {left.contains(w)} and {right.name} says {right.contains(w)}",
            w,
            {},
        )
    if not isinstance(claim, (Recognizes, ValueIs, Bound, TraceProperty)):
        return Unknown(
            "single word",
            f"a {type(claim).__name__} claim is not checked word by word; use check()",
        )
    backend = claim.backend
    method = f"single word ({backend})"
    if isinstance(claim, TraceProperty) and claim.only is not None and not claim.only(w):
        return None
    trace = traced(job, w, backend, method)
    if not isinstance(trace, TRACES):
        return trace
    match claim:
        case Recognizes():
            body = recognizes_body(claim, method)
        case ValueIs():
            body = value_is_body(claim, alphabet, method, None)
        case Bound():
            body = bound_body(claim, alphabet, method)
        case TraceProperty():
            body = trace_body(claim, alphabet, method)
        case _:
            assert_never(claim)
    return body(w, trace)
