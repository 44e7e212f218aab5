"""Every construction in the registry, whatever its paper: its default claims are proved at a
small bound, and its ``paper`` variant (where there is one) has a claim that is refuted."""

from __future__ import annotations

import re
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.claims import BlockIdentity, Proved, Recognizes, Refuted, SignForAllBases
from netproof.verifier.exhaustive.checker import Job, check

SMALL = 3
PAPER_BOUND = 4


def _marks(claim: Any) -> list[pytest.MarkDecorator]:
    return [pytest.mark.z3] if isinstance(claim, (SignForAllBases, BlockIdentity)) else []


DEFAULT_CLAIMS = [
    pytest.param(name, claim.id, id=f"{name}:{claim.id}", marks=_marks(claim))
    for name, c in REGISTRY.items()
    for claim in c.claims(c.parse_params({}))
]
WITH_VARIANT = [name for name, c in REGISTRY.items() if any(p.name == "variant" for p in c.params)]


def test_every_construction_has_a_command_line_name_a_paper_id_and_at_least_one_claim() -> None:
    assert REGISTRY, "the registry is empty"
    for name, c in REGISTRY.items():
        assert name == c.name
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", name), name
        assert re.fullmatch(r"[a-z0-9]+\.[a-z0-9_]+", c.paper_id), c.paper_id
        claims = c.claims(c.parse_params({}))
        assert claims, name
        ids = [cl.id for cl in claims]
        assert len(set(ids)) == len(ids), f"{name}: claim ids repeat: {ids}"
    paper_ids = [c.paper_id for c in REGISTRY.values()]
    assert len(set(paper_ids)) == len(paper_ids)


@pytest.mark.parametrize(("name", "claim_id"), DEFAULT_CLAIMS)
def test_every_claim_of_the_default_variant_is_proved_at_a_small_bound(
    name: str, claim_id: str
) -> None:
    c = REGISTRY[name]
    values = c.parse_params({})
    claim = next(cl for cl in c.claims(values) if cl.id == claim_id)
    verdict = check(Job(c, values), claim, max_len=min(SMALL, claim.max_len))
    assert isinstance(verdict, Proved), verdict


@pytest.mark.z3
@pytest.mark.parametrize("name", WITH_VARIANT)
def test_the_paper_variant_has_at_least_one_refuted_claim(name: str) -> None:
    c = REGISTRY[name]
    values = c.parse_params({"variant": "paper"})
    job = Job(c, values)
    verdicts = {
        cl.id: check(job, cl, max_len=min(PAPER_BOUND, cl.max_len)) for cl in c.claims(values)
    }
    refuted = {cid: v for cid, v in verdicts.items() if isinstance(v, Refuted)}
    assert refuted, (
        f"{name}: the paper variant has no refuted claim up to {PAPER_BOUND}: {verdicts}"
    )
    # A refuted recognition claim names a word that the network really gets wrong.
    for claim in c.claims(values):
        verdict = refuted.get(claim.id)
        if isinstance(claim, Recognizes) and verdict is not None and verdict.word is not None:
            trace = job.trace(verdict.word, claim.backend)
            assert trace.accepted != claim.language.contains(verdict.word)
