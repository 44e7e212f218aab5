"""The strongest verdict of a claim: ``prove --method best`` (:func:`prove_best`: a proof for
every length where one can be had, else the exhaustive bound, each attempt's outcome kept), why a
claim has no proof for every length (:func:`every_length_route`, :func:`every_length_gap`, for
``--require every-length``), and the strongest record of a claim under ``--out`` that a run's
table shows (:func:`with_strongest`, the one the ledger and the report show).

May import the vocabulary, the engines (lazily), :mod:`.limits`, :mod:`.routes`, :mod:`.store` and
:mod:`.ledger`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from netproof.verifier.claims import Claim, Construction, ExactFact, Proved, Refuted, Unknown

from .routes import every_length_route
from .store import claim_has_words, every_length, rank, record

if TYPE_CHECKING:
    from netproof.verifier.smtlib import Outcome

__all__ = [
    "best_methods",
    "every_length_gap",
    "every_length_route",
    "prove_best",
    "with_strongest",
]


def prove_best(
    job: Any,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    *,
    max_n: int | None,
    timeout: float,
    progress: Callable[[int, int], None] | None = None,
    bound_of: Callable[..., int | None],
) -> Outcome:
    """``--method best`` on one claim: the strongest method that applies, in order: a proof for
    every length (the smt method where it covers the claim, or the claim's own check where that
    decides every length), else the exhaustive check of the bound (where it holds at most
    :data:`~.limits.MAX_EXHAUSTIVE_WORDS` words). A refutation from either is the verdict (each
    is replayed exactly). The outcome's ``attempts`` say what each step gave, so a claim
    proved within its bound says why it has no proof for every length."""
    from netproof.verifier.exhaustive.checker import check, count_words
    from netproof.verifier.smt.prove import prove_claim_smt
    from netproof.verifier.smtlib import Outcome

    from .limits import MAX_EXHAUSTIVE_WORDS

    bound = bound_of(claim, max_n)
    attempts: list[str] = []
    why = every_length_route(claim, c, values)
    if why is None and not (isinstance(claim, ExactFact) and claim.every_length):
        from netproof.verifier.smt.prove import smt_applicable

        if smt_applicable(claim):
            started = time.perf_counter()
            smt = prove_claim_smt(job, claim, max_n, timeout=timeout)
            took = time.perf_counter() - started
            if isinstance(smt.verdict, Refuted):
                return Outcome(
                    smt.verdict, smt.queries, smt.lemmas, (f"smt: refuted ({took:.1f}s)",)
                )
            rec = record(c, values, claim, bound_of(claim, max_n, smt.verdict), smt)
            unbounded = (
                isinstance(smt.verdict, Proved)
                and rec.get("bound") is None
                and not getattr(claim, "words", False)
            )
            if every_length(rec) or unbounded:
                return Outcome(
                    smt.verdict, smt.queries, smt.lemmas, (f"smt: proved ({took:.1f}s)",)
                )
            v = smt.verdict
            said = (
                f"unknown: {v.reason}"
                if isinstance(v, Unknown)
                else f"proved up to length {bound} only ({v.detail}); no proof for every length found "
                f"within the {timeout:g} s of --timeout"
            )
            attempts.append(f"smt ({took:.1f}s): {said}")
    elif why is not None:
        attempts.append(why)
    if (
        bound is not None
        and claim_has_words(claim)
        and count_words(job.alphabet, claim.min_len, bound) > MAX_EXHAUSTIVE_WORDS
    ):
        attempts.append(
            f"exhaustive: the bound {bound} holds more than {MAX_EXHAUSTIVE_WORDS:,} words; not run"
        )
        return Outcome(Unknown("best", "; ".join(attempts)), (), None, tuple(attempts))
    log: list[Any] = []
    found = check(job, claim, max_len=max_n, queries=log, progress=progress)
    return Outcome(found, tuple(log), None, tuple(attempts))


def every_length_gap(r: Any) -> str | None:
    """None where ``r``'s claim is proved for every length (by this run or a record under
    ``--out``), or is proved and has no words (a lemma over numbers, a fact); else why not, for
    ``--require every-length``: refuted, unknown (with the reason), or proved within its bound
    only (what the attempts for every length gave, or what the claim lacks for one)."""
    if r.every_length_shown:
        return None
    v = r.verdict
    if isinstance(v, Refuted):
        return f"refuted ({v.detail})"
    if isinstance(v, Unknown):
        return f"unknown: {v.reason}"
    if r.bound is None and not getattr(r.claim, "words", False):
        return None  # proved for all inputs: no words, no lengths
    if r.attempts:
        return "; ".join(r.attempts)
    why = every_length_route(r.claim, r.construction, r.values)
    return (
        why
        or "proved within its bound only (run it with --method best for a proof of every length)"
    )


def with_strongest(out: str, r: Any) -> Any:
    """``r`` with the strongest record of its claim under ``out`` (the one the ledger and the
    report show: :func:`.ledger.find_record`) where that is stronger than ``r``'s own, of the same
    network and claim statement (a record of another network or statement is stale, not
    stronger)."""
    from .ledger import find_record

    found = find_record(out, r.construction, r.values, r.claim)
    if found is None or rank(found) <= rank(r.record) or isinstance(r.verdict, Refuted):
        return r
    same = (found.get("network") or {}).get("fingerprint") == (r.record.get("network") or {}).get(
        "fingerprint"
    ) and (found.get("claim") or {}).get("statement") == r.claim.statement
    if not same:
        return r
    from .ledger import PATH_KEY

    path = found.pop(PATH_KEY, None)
    return dataclasses.replace(r, strongest=found, strongest_path=path)


def best_methods(
    claim: Claim, c: Construction | None = None, values: Mapping[str, Any] | None = None
) -> frozenset[str]:
    """The methods whose record ``--method best`` reuses for ``claim`` (as
    :func:`~.store.recorded_method` reads them off a record): a proof for every length whatever
    wrote it (:func:`~.store.find_cached` takes those anyway), and a bounded record only where no
    method gives more (no route for every length, a fact about numbers, a structural check)."""
    from netproof.verifier.claims import ForAll, Identity
    from netproof.verifier.smt.prove import smt_applicable

    if every_length_route(claim, c, values) is not None or isinstance(claim, (ForAll, Identity)):
        return frozenset({"exhaustive"})
    if not smt_applicable(claim) and not getattr(claim, "every_length", False):
        return frozenset({"exhaustive"})  # a fact about numbers, a structural check: one way
    return frozenset()
