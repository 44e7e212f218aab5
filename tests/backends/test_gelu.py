"""GELU FFNs (x·Φ(x), Φ through erf): the interval interpreter encloses them rigorously, the torch
backend runs them, and every engine that cannot evaluate them says so instead of falling through
to another activation."""

from __future__ import annotations

import types
from fractions import Fraction

import mpmath
import pytest

from netproof.symbolic import (
    Activation,
    NotRationalError,
    Sublayer,
    affine,
    classifier,
    exact,
    ffn,
    interval,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.interval import IntervalArithmetic, erf_interval, erf_point
from netproof.symbolic.ir import Network
from netproof.symbolic.netfile import dumps, loads
from netproof.symbolic.printing import fingerprint

F = Fraction

# one-symbol words whose token sets x to -3, -1/2, 0, 1/3, 2, 7
VALUES = {"a": F(-3), "b": F(-1, 2), "c": F(0), "d": F(1, 3), "e": F(2), "f": F(7)}


def gelu_network() -> Network:
    """y = GELU(x) − 1/10 at every position, read as the logit at the last one."""
    return Network(
        name="gelu_unit",
        dims=("x", "y"),
        embedding=token_embedding(tuple(VALUES), {s: {"x": v} for s, v in VALUES.items()}),
        layers=(
            Sublayer(
                block=ffn(
                    "act", affine({"u": {"x": 1}}), Activation(kind="gelu"), affine({"y": {"u": 1}})
                )
            ),
        ),
        readout=classifier({"y": 1}, bias="-1/10", position=-1),
    )


def true_gelu(x: Fraction) -> mpmath.mpf:
    with mpmath.workdps(80):
        v = mpmath.mpf(x.numerator) / x.denominator
        return v * mpmath.ncdf(v)


@pytest.mark.parametrize(
    "x", ["0", "1e-40", "0.3", "-1", "2.5", "-6", "9.75", "11.3", "12", "-30", "400"]
)
def test_the_erf_enclosure_holds_erf_and_is_tight_at_every_magnitude(x: str) -> None:
    ar = IntervalArithmetic(50)
    with mpmath.workdps(90):
        want = mpmath.erf(mpmath.mpf(x))
    got = erf_point(ar.ctx, ar.ctx.mpf(x).a)
    assert got.a <= want <= got.b
    assert got.b - got.a < mpmath.mpf("1e-48")


def test_the_erf_enclosure_of_an_interval_spans_erf_at_both_ends() -> None:
    ar = IntervalArithmetic(50)
    got = erf_interval(ar.ctx, ar.ctx.mpf(["-0.5", "1.5"]))
    with mpmath.workdps(90):
        lo, hi = mpmath.erf(mpmath.mpf("-0.5")), mpmath.erf(mpmath.mpf("1.5"))
    assert got.a <= lo and hi <= got.b and got.b - got.a - (hi - lo) < mpmath.mpf("1e-45")


def test_the_interval_interpreter_encloses_gelu_on_every_value() -> None:
    net = gelu_network()
    for symbol, x in VALUES.items():
        y = interval.run(net, symbol, digits=50).value("act", 0, "y")
        want = true_gelu(x)
        assert y.a <= want <= y.b and y.b - y.a < mpmath.mpf("1e-45"), symbol
    # GELU(x) > 1/10 only at x = 1/3, 2, 7 (GELU(1/3) = 0.2087…)
    assert [interval.run(net, s).accepted for s in VALUES] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]


def test_a_gelu_over_a_wide_interval_holds_every_value_in_it() -> None:
    ar = IntervalArithmetic(30)
    box = ar.ctx.mpf(["-2", "1"])
    out = ar.gelu(box)
    with mpmath.workdps(40):
        samples = [x * mpmath.ncdf(x) for x in mpmath.linspace(-2, 1, 61)]
    assert all(out.a <= s <= out.b for s in samples)


def test_the_exact_and_sympy_interpreters_refuse_gelu_naming_it_and_the_interval_interpreter() -> (
    None
):
    net = gelu_network()
    with pytest.raises(
        NotRationalError, match=r"activation 'gelu' .* has no exact value; .*interval interpreter"
    ):
        exact.run(net, "d")
    with pytest.raises(
        NotRationalError, match=r"activation 'gelu' .* has no sympy value; .*interval interpreter"
    ):
        sympy_interp.run(net, "d")


def test_the_batched_exact_evaluator_refuses_gelu() -> None:
    from netproof.symbolic import batched

    assert (
        batched.supports(gelu_network()) == "ffn 'act' step [1] is a GELU (x·Φ(x) is not rational)"
    )
    with pytest.raises(batched.NotBatchableError, match=r"ffn 'act' step \[1\] is a GELU"):
        batched.evaluate(gelu_network(), ["d"])


def test_a_gelu_network_survives_its_network_file_unchanged() -> None:
    net = gelu_network()
    again = loads(dumps(net))
    assert fingerprint(again) == fingerprint(net)
    assert "gelu" in dumps(net)


@pytest.mark.torch
def test_the_torch_backend_runs_gelu_as_torch_does_and_within_1e_12_of_the_rigorous_value() -> None:
    pytest.importorskip("torch")
    from netproof.symbolic import torch_backend

    net = gelu_network()
    out = torch_backend.run_batch(net, list(VALUES))
    for b, (symbol, x) in enumerate(VALUES.items()):
        assert abs(float(out.logits[b]) - float(true_gelu(x) - mpmath.mpf("0.1"))) < 1e-12, symbol


@pytest.mark.z3
def test_the_smt_encoder_refuses_gelu_instead_of_encoding_another_activation() -> None:
    pytest.importorskip("z3")
    from netproof.verifier.claims.languages import Automaton, Language
    from netproof.verifier.smt.errors import Unsupported
    from netproof.verifier.smt.monolithic import recognition_query

    net = gelu_network()
    every = Language(
        name="all",
        alphabet=net.alphabet,
        contains=lambda w: True,
        description="every word",
        automaton=Automaton(
            states=1, start=0, accepting=frozenset({0}), delta=((0,) * len(net.alphabet),)
        ),
    )
    with pytest.raises(
        Unsupported,
        match=r"activation 'gelu' is not encoded \(the SMT encoder covers relu, step and sigma\)",
    ):
        recognition_query(net, every, 1)


@pytest.mark.z3
def test_a_block_identity_over_a_gelu_block_is_unknown_never_proved_with_another_activation() -> (
    None
):
    pytest.importorskip("z3")
    import sympy

    from netproof.verifier.claims import BlockIdentity, Unknown
    from netproof.verifier.exhaustive.solver_claims import block_identity_query

    x = sympy.Symbol("x")
    # were GELU read as σ (the old fall-through), y = clip(x, 0, 1) would make this claim provable
    claim = BlockIdentity(
        id="G1",
        statement="y = min(1, max(0, x))",
        reference="test",
        block="act",
        inputs={"x": x},
        outputs={"y": sympy.Min(1, sympy.Max(0, x))},
        variables=("x",),
        domain="reals",
    )
    got = block_identity_query(types.SimpleNamespace(network=lambda n: gelu_network()), claim)  # type: ignore[arg-type]
    assert isinstance(got, Unknown)
    assert (
        got.reason
        == "unsupported: activation 'gelu' in the block (z3 encodes relu, step and sigma)"
    )


@pytest.mark.z3
def test_the_compositional_prover_reports_a_gelu_block_unknown_and_unsupported() -> None:
    pytest.importorskip("z3")
    from netproof.verifier.claims import Recognizes, Unknown
    from netproof.verifier.claims.languages import Automaton, Language
    from netproof.verifier.smt.compositional import prove_recognizes

    net = gelu_network()
    every = Language(
        name="all",
        alphabet=net.alphabet,
        contains=lambda w: True,
        description="every word",
        automaton=Automaton(
            states=1, start=0, accepting=frozenset({0}), delta=((0,) * len(net.alphabet),)
        ),
    )
    claim = Recognizes(
        id="R",
        statement="accepts every word",
        reference="test",
        language=every,
        backend="interval",
        min_len=1,
        max_len=2,
    )
    verdict = prove_recognizes(net, claim, [], 2).verdict
    assert (
        isinstance(verdict, Unknown)
        and verdict.reason == "unsupported: activation 'gelu' in FFN 'act'"
    )
