"""``--timeout`` bounds the whole smt method: where a counting proof for every length finds
nothing, the search of the bound's words for the shortlex-first counterexample that follows it
stops at the budget and says how far it got (Unknown, never a verdict on words it did not
reach); with time left it finishes as before."""

from __future__ import annotations

import time
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.claims import Recognizes, TraceProperty, Unknown
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.compositional import counters
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

NAME = "crasp-majority"


def _claim(kind: type, claim_id: str | None = None) -> tuple[Job, Any]:
    c = REGISTRY[NAME]
    claim = next(
        cl
        for cl in c.claims({})
        if isinstance(cl, kind)
        and (claim_id is None or cl.id == claim_id)
        and (kind is not Recognizes or getattr(cl.language, "counters", None) is not None)
    )
    return Job(c, {}), claim  # type: ignore[arg-type]


def _slow_unknown(seconds: float) -> Any:
    def spacer(*_a: object, **_k: object) -> tuple[str, Any]:
        time.sleep(seconds)
        return "unsafe", None

    return spacer


def _no_invariant(monkeypatch: pytest.MonkeyPatch, unroll: str, spacer_seconds: float) -> None:
    """Houdini finds no invariant, the unrolling gets no answer, and Spacer (after
    ``spacer_seconds``) says a bad state is reachable."""
    monkeypatch.setattr(counters, "houdini", lambda *a, **k: ("unknown", "no facts"))
    monkeypatch.setattr(counters, unroll, lambda *a, **k: (None, False))
    monkeypatch.setattr(counters, "spacer", _slow_unknown(spacer_seconds))


def test_the_search_after_a_failed_operations_proof_stops_at_the_budget_and_says_how_far_it_got(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job, claim = _claim(TraceProperty, "operations")
    _no_invariant(monkeypatch, "unroll_search", 0.6)
    started = time.perf_counter()
    # The lemmas take their own minimum second each; the spacer stub then waits the budget out.
    out = prove_claim(job, claim, method="smt", max_len=10, timeout=0.5).verdict
    assert isinstance(out, Unknown), out
    assert "ran out of the budget after" in out.reason and "of 2,046 words" in out.reason, out
    assert "neither found nor excluded" in out.reason, out
    assert time.perf_counter() - started < 60


def test_with_time_left_the_same_search_finishes_and_says_every_word_of_the_bound_was_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job, claim = _claim(TraceProperty, "operations")
    _no_invariant(monkeypatch, "unroll_search", 0.0)
    out = prove_claim(job, claim, method="smt", max_len=6, timeout=120).verdict
    assert isinstance(out, Unknown), out
    assert "none of length <= 6 (every such word checked exactly" in out.reason, out


def test_a_recognition_claim_whose_counting_proof_finds_nothing_is_bounded_by_the_budget_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job, claim = _claim(Recognizes)
    _no_invariant(monkeypatch, "_unroll", 1.0)
    out = prove_claim(job, claim, method="smt", max_len=12, timeout=0.5).verdict
    assert isinstance(out, Unknown), out
    assert "neither found nor excluded" in out.reason, out
    assert "ran out of the budget after" in out.reason and "of 8,191 words" in out.reason, out
