"""Lemma A.1's gates (Yao et al. 2021): compiled ReLU FFNs, their claims, and that the checker
refutes a wrong statement about them."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import pytest
import sympy

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import gate_network
from netproof.symbolic.exact import run
from netproof.verifier.claims import BlockIdentity, Proved, Refuted
from netproof.verifier.exhaustive.checker import Job, check

pytestmark = pytest.mark.z3


def _job(**given: str) -> tuple[Job, dict[str, object]]:
    c = REGISTRY["gates"]
    values = c.parse_params(given)
    return Job(c, values), {cl.id: cl for cl in c.claims(values)}


def test_every_gate_claim_is_proved_for_the_fixed_gates() -> None:
    job, claims = _job()
    verdicts = {cid: check(job, cl) for cid, cl in claims.items()}  # type: ignore[arg-type]
    assert all(isinstance(v, Proved) for v in verdicts.values()), verdicts


def test_the_extracted_same_gate_with_or_between_bits_is_refuted_with_an_assignment() -> None:
    job, claims = _job(variant="paper")
    verdict = check(job, claims["Y1-SAME-paper"])  # type: ignore[arg-type]
    assert isinstance(verdict, Refuted)
    bits = "".join(verdict.values[f"a{i}"] for i in range(1, 5))
    t = run(gate_network(variant="paper"), bits)
    same = t.value("same", 0, "SAME(a1a2,a3a4)")
    assert same != int(bits[:2] == bits[2:])


def test_a_greater_than_claim_with_half_the_margin_is_refuted() -> None:
    job, claims = _job()
    gt = claims["Y1-GT"]
    assert isinstance(gt, BlockIdentity)
    X, Y, out = sympy.Symbol("x", real=True), sympy.Symbol("y", real=True), sympy.Symbol("GT(x,y)")
    wrong = dataclasses.replace(
        gt, conditions=(sympy.Implies(X >= Y + sympy.Rational(1, 20), sympy.Eq(out, 1)),)
    )
    assert isinstance(check(job, wrong), Refuted)


def test_the_compiled_gates_compute_their_truth_tables_exactly() -> None:
    net = gate_network()
    for bits in itertools.product("01", repeat=4):
        a = [int(b) for b in bits]
        t = run(net, "".join(bits))
        final = t.states[-1].label
        assert t.value(final, 0, "AND(a1,a2,a3)") == Fraction(a[0] & a[1] & a[2])
        assert t.value(final, 0, "OR(a1,a2,a3)") == Fraction(a[0] | a[1] | a[2])
        assert t.value(final, 0, "NOT(a1)") == Fraction(1 - a[0])
        assert t.value(final, 0, "XNOR(a1,a2)") == Fraction(int(a[0] == a[1]))
        assert t.value(final, 0, "SAME(a1a2,a3a4)") == Fraction(int(a[:2] == a[2:]))
        assert t.value(final, 0, "EQ(x,y)") == 1  # x = y = 0 on every word
