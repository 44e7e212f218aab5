"""``operations`` and ``no-ties`` of compiled programs checked through the batched evaluator
(their ``holds_batch``): the same text as ``holds`` on every word, of the library's programs and
of single-weight mutants that break the claims, so the exhaustive check gives the same verdict,
counterexample and message either way (``benchmarks/rasp_trace_claims.py`` measures the
speed)."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import pytest

from netproof.constructions import REGISTRY
from netproof.symbolic import batched
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import TraceProperty
from netproof.verifier.exhaustive.checker import Job, check

LENGTHS = range(1, 4)


def _claim(c: object, cid: str) -> TraceProperty:
    claim = next(cl for cl in c.claims({}) if cl.id == cid)  # type: ignore[attr-defined]
    assert isinstance(claim, TraceProperty) and claim.holds_batch is not None
    return claim


def _agree(net: object, claim: TraceProperty) -> int:
    """Compare holds and holds_batch on every word of LENGTHS; the number of failing words."""
    failing = 0
    for m in LENGTHS:
        words = list(itertools.product(net.alphabet, repeat=m))  # type: ignore[attr-defined]
        assert claim.holds_batch is not None
        got = claim.holds_batch(words, batched.trace(net, words))  # type: ignore[arg-type]
        want = [claim.holds(w, run_exact(net, w)) for w in words]  # type: ignore[arg-type]
        assert got == want
        failing += sum(x is not None for x in want)
    return failing


@pytest.mark.parametrize(
    ("name", "cid"),
    [
        ("brasp-no-aa", "operations"),
        ("brasp-no-aa", "no-ties"),
        ("brasp-first-eq-last", "operations"),
        ("brasp-ab-star", "no-ties"),
    ],
)
def test_the_batched_check_says_what_the_per_word_check_says(name: str, cid: str) -> None:
    c = REGISTRY[name]
    assert _agree(c.network({}), _claim(c, cid)) == 0


@pytest.mark.parametrize("cid", ["operations", "no-ties"])
def test_on_mutants_that_break_the_claim_both_give_the_same_failures(cid: str) -> None:
    c = REGISTRY["brasp-a-then-b"]
    net = c.network({})
    claim = _claim(c, cid)
    broken = 0
    layer = next(i for i, x in enumerate(net.layers) if x.name == "L1")
    head = net.layers[layer].block.heads[0]
    sites = [
        (field, k, delta)
        for field, delta in (("query", Fraction(-1)), ("value", Fraction(1)))
        for k in range(len(getattr(head, field).bias))
    ]
    for field, k, delta in sites:
        affine = getattr(head, field)
        bias = list(affine.bias)
        bias[k] += delta
        moved = dataclasses.replace(affine, bias=tuple(bias))
        block = dataclasses.replace(
            net.layers[layer].block, heads=(dataclasses.replace(head, **{field: moved}),)
        )
        mutant = dataclasses.replace(
            net,
            layers=tuple(
                dataclasses.replace(x, block=block) if i == layer else x
                for i, x in enumerate(net.layers)
            ),
        )
        broken += _agree(mutant, claim) > 0
    assert broken >= 1


def test_the_exhaustive_check_goes_through_the_batched_evaluator() -> None:
    c = REGISTRY["brasp-no-aa"]
    for cid in ("operations", "no-ties"):
        verdict = check(Job(c, {}), _claim(c, cid), max_len=6)
        assert verdict.method == "exhaustive (exact, batched integers)"
