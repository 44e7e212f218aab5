"""The smt method and the ``prove --method`` dispatcher: which engine proves a claim.

:func:`prove_claim` runs one claim with ``exhaustive`` (every word of the bound), ``smt``
(:func:`prove_claim_smt`: the compositional proof first where the construction declares lemmas,
then the monolithic encoding, one query per length) or ``all`` (both where they apply, a
refutation from either winning). :func:`prove_smt` is the monolithic proof of one claim of a
construction, for benchmarks and scripts.

May import: the claims vocabulary, the solver interface, exhaustive checking, and the engines of
:mod:`netproof.verifier.smt` below it (:mod:`~netproof.verifier.smt.monolithic`,
:mod:`~netproof.verifier.smt.compositional`); nothing imports it but campaigns and the CLI.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from netproof.verifier.claims import (
    AllowedNext,
    BlockIdentity,
    Claim,
    Construction,
    ExactFact,
    Proved,
    Recognizes,
    Refuted,
    TraceProperty,
    Unknown,
    ValueIs,
    Verdict,
    fact_at,
    stated,
)
from netproof.verifier.exhaustive.checker import Job, check, count_words
from netproof.verifier.smt.compositional import prove_recognizes, prove_trace, prove_value
from netproof.verifier.smt.compositional.correspondence import prove_correspondence
from netproof.verifier.smt.compositional.counters import prove_counting
from netproof.verifier.smt.compositional.depth_features import DepthOutcome, prove_allowed_next
from netproof.verifier.smt.compositional.same_language import prove_same_language
from netproof.verifier.smt.compositional.traces import TraceOutcome
from netproof.verifier.smt.monolithic import recognizes_smt, value_is_smt
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import Outcome, SmtQuery

SMT_KINDS = (
    "Recognizes",
    "BlockIdentity",
    "ValueIs with a closed form",
    "TraceProperty with a statable form",
    "ExactFact with a statable form",
)


def smt_applicable(claim: Claim) -> bool:
    """Whether the smt method covers this claim kind (recognition against a language with an
    automaton, FFN block lemmas, exact values with a closed form)."""
    if isinstance(claim, Recognizes):
        return any(
            getattr(claim.language, f, None) is not None for f in ("automaton", "stack", "counters")
        )
    if isinstance(claim, TraceProperty):
        return (
            claim.statable is not None
            or claim.statable_later is not None
            or claim.compiled is not None
        )
    if isinstance(claim, ValueIs):
        return claim.closed_form is not None and claim.backend == "exact"
    if isinstance(claim, ExactFact):
        return claim.statable is not None
    return isinstance(claim, BlockIdentity)


def prove_claim_smt(
    job: Job,
    claim: Claim,
    max_len: int | None = None,
    *,
    timeout: float = 60.0,
    compositional: bool = True,
) -> Outcome:
    """The smt method on one claim of a job; ``compositional=False`` skips the compositional
    proof and encodes the whole network (the monolithic encoding)."""
    bound = claim.max_len if max_len is None else max_len
    matched: Verdict | None = None  # the correspondence's verdict, where it was tried
    if (
        compositional
        and isinstance(claim, Recognizes | TraceProperty)
        and claim.compiled is not None
        and job.construction.lemmas is not None
    ):
        # A compiled B-RASP program: the operation-wise correspondence first (no automaton, no
        # search); where any premise fails, the other routes below decide.
        lemmas = job.construction.lemmas(job.values)
        started = time.perf_counter()
        tried = prove_correspondence(job.network(bound), claim, lemmas, bound, timeout=timeout)
        if isinstance(tried.verdict, Proved):
            return Outcome(tried.verdict, (), tried.tree)
        matched = tried.verdict
        spent = time.perf_counter() - started
        if spent >= timeout:  # the budget bounds the whole method: the other routes get none
            return Outcome(matched)
        timeout -= spent
    if isinstance(claim, TraceProperty) and claim.statable_later is not None:
        # The form the other routes state, built only now that one needs it (an automaton of
        # the program's operations, which the correspondence does not read), within the budget.
        started = time.perf_counter()
        claim = stated(claim)
        spent = time.perf_counter() - started
        if spent >= timeout:
            said = f"ran out of the {timeout:g} s budget while building the claim's form"
            if isinstance(matched, Unknown):
                said = f"{matched.reason}; {said}"
            return Outcome(Unknown("smt (z3)", said))
        timeout -= spent
    if matched is not None and isinstance(claim, TraceProperty) and claim.statable is None:
        return Outcome(matched)
    if isinstance(claim, Recognizes):
        started = time.perf_counter()
        lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
        if (
            compositional
            and lemmas
            and claim.min_len == 0
            and getattr(claim.language, "counters", None) is not None
        ):
            # A language of counts: the network read as a counter system (uniform heads as running
            # sums, comparisons over integers), every length at once (compositional.counters).
            counted = prove_counting(job.network(bound), claim, lemmas, bound, timeout=timeout)
            if isinstance(counted.verdict, Proved):
                return counted
            if count_words(job.alphabet, claim.min_len, bound) > EXHAUSTIVE_WORDS:
                if isinstance(counted.verdict, Refuted):
                    return counted
            else:
                # No proof for every length: the shortlex-first misclassified word of the bound,
                # exactly, if any, within what is left of the budget.
                found = _check_until(job, claim, bound, started + timeout)
                if isinstance(found, Refuted):
                    return Outcome(found)
                if isinstance(found, _OutOfTime):
                    if isinstance(counted.verdict, Refuted):
                        return counted  # replayed exactly, if not the shortlex-first
                    return Outcome(
                        Unknown(counted.verdict.method, f"{counted.verdict.reason}; {found}"),
                        (),
                        counted.lemmas,
                    )
                if (
                    claim.language.automaton is None
                    and claim.language.stack is None
                    and isinstance(counted.verdict, Unknown)
                ):
                    return Outcome(
                        Unknown(
                            counted.verdict.method,
                            f"{counted.verdict.reason} (no word of length <= {bound} is misclassified: every one checked exactly)",
                        ),
                        (),
                        counted.lemmas,
                    )
        if (
            compositional
            and lemmas
            and claim.min_len == 0
            and (claim.language.automaton is not None or claim.language.stack is not None)
        ):
            # The paper's proof first: block lemmas, then the claim over their specifications
            # (netproof.verifier.smt.compositional); the monolithic encoding when that decides nothing.
            progress = prove_recognizes(job.network(bound), claim, lemmas, bound, timeout=timeout)
            if not isinstance(progress.verdict, Unknown):
                return Outcome(progress.verdict, (), progress.tree)
        spent = time.perf_counter() - started
        left = max(1.0, timeout - spent)
        return recognizes_smt(
            job.network,
            claim.language,
            claim.min_len,
            bound,
            timeout=left,
            budget=f"the {timeout:g} s budget" if left >= timeout else _rest(timeout, spent, left),
        )
    if isinstance(claim, ExactFact) and claim.statable is not None:
        # Two languages of counts: their counter automata side by side, for every length
        # (compositional.same_language); the words of --max-n searched first for a difference.
        return prove_same_language(fact_at(claim, max_len), timeout=timeout)
    if isinstance(claim, BlockIdentity):
        log: list[SmtQuery] = []
        verdict = check(job, claim, queries=log)
        return Outcome(verdict, tuple(log))
    if isinstance(claim, ValueIs) and claim.closed_form is not None:
        started = time.perf_counter()
        lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
        if compositional and lemmas and claim.backend == "exact":
            # The network with its proved block lemmas in place (PARITY's uniform head becomes
            # an Int count); the monolithic encoding when that decides nothing.
            outcome = prove_value(job, claim, lemmas, bound, timeout=timeout)
            if not isinstance(outcome.verdict, Unknown):
                return outcome
        spent = time.perf_counter() - started
        left = max(1.0, timeout - spent)
        return value_is_smt(
            job,
            claim,
            claim.min_len,
            bound,
            timeout=left,
            budget=f"the {timeout:g} s budget" if left >= timeout else _rest(timeout, spent, left),
        )
    if isinstance(claim, TraceProperty) and claim.statable is not None:
        lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
        depth_features = isinstance(claim.statable, AllowedNext)  # its lemmas come from the network
        if not lemmas and not depth_features:
            return Outcome(
                Unknown(
                    "smt (z3)",
                    f"unsupported: {job.construction.name} declares no lemmas, and a trace property is proved for every length from them",
                )
            )
        started = time.perf_counter()
        traced: DepthOutcome | TraceOutcome
        if depth_features:
            traced = prove_allowed_next(job.network(bound), claim, bound, timeout=timeout)
        else:
            traced = prove_trace(job.network(bound), claim, lemmas, bound, timeout=timeout)
        if isinstance(traced.verdict, Unknown) and (
            (depth_features and claim.domain is not None)
            or count_words(job.alphabet, claim.min_len, bound) <= EXHAUSTIVE_WORDS
        ):
            # No proof for every length: a word of the bound that breaks the claim, if there is
            # one, the shortlex-first, exactly (a violation may be known to exist, or not).
            found = _check_until(job, claim, bound, started + timeout)
            if isinstance(found, Refuted):
                return Outcome(found)
            if isinstance(found, _OutOfTime):
                return Outcome(
                    Unknown(traced.verdict.method, f"{traced.verdict.reason}; {found}"),
                    (),
                    traced.tree,
                )
            if traced.violated:
                spent = time.perf_counter() - started
                return Outcome(
                    Unknown(
                        traced.verdict.method,
                        f"a word that breaks {claim.id} exists, but none of length <= {bound} "
                        f"(every such word checked exactly, {spent:.1f} s in all); raise --max-n to find it",
                    ),
                    (),
                    traced.tree,
                )
        return Outcome(traced.verdict, (), traced.tree)
    kind = type(claim).__name__
    if isinstance(claim, ValueIs):
        kind = (
            "ValueIs claims without a closed form (ValueIs.closed_form)"
            if claim.closed_form is None
            else f"ValueIs claims checked with the {claim.backend} backend"
        )
    else:
        kind += " claims"
    return Outcome(
        Unknown(
            "smt (z3)",
            f"unsupported: the smt method does not cover {kind}; use --method exhaustive or --method all",
        )
    )


class _OutOfTime(Exception):
    """The search of a bound's words for a counterexample ran out of the claim's budget."""


def _check_until(job: Job, claim: Claim, bound: int, deadline: float) -> Verdict | _OutOfTime:
    """:func:`check` of ``claim`` up to ``bound``, the search for the shortlex-first
    counterexample that follows a proof attempt for every length, stopped at ``deadline``
    (``time.perf_counter()``): an :class:`_OutOfTime` that says how far it got, never a verdict
    about the words it did not reach. Its progress goes to the phase display."""
    begun = time.perf_counter()
    reached = [0, 0]

    def progress(done: int, total: int) -> None:
        reached[:] = [done, total]
        phase(f"a counterexample up to length {bound}: words {done}/{total}")
        if done < total and time.perf_counter() > deadline:
            raise _OutOfTime

    try:
        return check(job, claim, max_len=bound, progress=progress)
    except _OutOfTime:
        done, total = reached
        return _OutOfTime(
            f"the search for a counterexample of length <= {bound} ran out of the budget after "
            f"{done:,} of {total:,} words ({time.perf_counter() - begun:.1f} s): no verdict on "
            "the rest; raise --timeout to finish it"
        )


def _rest(timeout: float, spent: float, left: float) -> str:
    """A timeout's budget, named as the user gave it, where the monolithic encoding had what the compositional proof left."""
    return f"the {timeout:g} s budget ({spent:.1f} s of it spent on the compositional proof, {left:.1f} s left for this one)"


EXHAUSTIVE_WORDS = 1 << 17
"""``--method all`` enumerates a bound exhaustively when it holds at most this many words."""


def prove_claim(
    job: Job, claim: Claim, *, method: str, max_len: int | None = None, timeout: float = 60.0
) -> Outcome:
    """One claim with one of the ``prove --method`` methods.

    - ``exhaustive``: :func:`netproof.verifier.exhaustive.checker.check` (lemma claims keep their z3 query);
    - ``smt``: :func:`prove_claim_smt` (Unknown for claim kinds it does not cover);
    - ``all``: exhaustive where the bound holds at most :data:`EXHAUSTIVE_WORDS` words (or the
      smt method does not apply), smt where it applies; with both, a refutation from either wins
      (each is replayed exactly), else a proof from either, and the log keeps the queries.
    """
    if method == "exhaustive":
        log: list[SmtQuery] = []
        return Outcome(check(job, claim, max_len=max_len, queries=log), tuple(log))
    if method == "smt":
        return prove_claim_smt(job, claim, max_len, timeout=timeout)
    if method != "all":
        raise ValueError(f"method={method!r} is not one of exhaustive, smt, all")
    if isinstance(claim, BlockIdentity) or not smt_applicable(claim):
        return prove_claim(job, claim, method="exhaustive", max_len=max_len)
    bound = claim.max_len if max_len is None else max_len
    smt = prove_claim_smt(job, claim, max_len, timeout=timeout)
    if isinstance(claim, ExactFact) and isinstance(smt.verdict, Proved):
        return smt  # every length, the words of its own check included
    if count_words(job.alphabet, claim.min_len, bound) > EXHAUSTIVE_WORDS:
        return smt
    exhaustive = check(job, claim, max_len=max_len)
    return Outcome(_combine(exhaustive, smt.verdict), smt.queries, smt.lemmas)


def _combine(exhaustive: Verdict, smt: Verdict) -> Verdict:
    both = f"{exhaustive.method} + {smt.method}"
    for v in (exhaustive, smt):
        if isinstance(v, Refuted):
            return Refuted(both, v.detail, v.word, v.values)
    if isinstance(exhaustive, Proved) and isinstance(smt, Proved):
        return Proved(
            both, exhaustive.checked, f"{exhaustive.detail}; each length also unsat in z3"
        )
    for v in (exhaustive, smt):
        if isinstance(v, Proved):
            other = smt if v is exhaustive else exhaustive
            assert isinstance(other, Unknown)
            return Proved(v.method, v.checked, f"{v.detail} ({other.method}: {other.reason})")
    assert isinstance(exhaustive, Unknown) and isinstance(smt, Unknown)
    return Unknown(both, f"{exhaustive.reason}; {smt.reason}")


def prove_smt(
    construction: Construction,
    params: Mapping[str, str],
    claim_id: str,
    n: int,
    timeout: float = 60.0,
) -> Outcome:
    """The monolithic SMT proof of one claim of a construction up to length ``n`` (the whole
    network encoded, never the compositional proof), for the benchmark and scripts: ``params``
    as typed on the command line (``{"k": "2"}``), ``timeout`` seconds for all lengths."""
    values = construction.parse_params(dict(params))
    claims = {c.id: c for c in construction.claims(values)}
    if claim_id not in claims:
        raise KeyError(
            f"claim_id={claim_id!r} is not a claim of {construction.name}; its claims: {', '.join(claims)}"
        )
    return prove_claim_smt(
        Job(construction, values), claims[claim_id], n, timeout=timeout, compositional=False
    )


__all__ = [
    "EXHAUSTIVE_WORDS",
    "SMT_KINDS",
    "prove_claim",
    "prove_claim_smt",
    "prove_smt",
    "smt_applicable",
]
