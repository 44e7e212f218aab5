"""Chang et al. 2021 (``relpos``): the three printed equivalences refuted with their
counterexamples, the corrected statements proved, the heads checked against the paper's
equations, and mutations of the network or of an identity caught. Every registered claim is
also checked at a small bound in test_registry.py."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from typing import Any

import pytest
import sympy

from netproof.constructions import REGISTRY
from netproof.constructions.chang2021 import (
    HEAD_FORMS,
    Symbols,
    T,
    conv_reference,
    head_reference,
    lightweight_conv,
    relpos_network,
    row_softmax,
)
from netproof.symbolic import (
    AttentionLayer,
    Network,
    RelativeKernel,
    Sublayer,
    fingerprint,
    netfile,
    pretty,
)
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.sympy_interp import run as run_sympy
from netproof.verifier.claims import Claim, ExactFact, Identity, Proved, Refuted
from netproof.verifier.exhaustive.checker import Job, check

C = REGISTRY["relpos"]


def claims(**params: str) -> dict[str, Claim]:
    return {cl.id: cl for cl in C.claims(C.parse_params(params))}


def verdict(claim_id: str, **params: str) -> Any:
    values = C.parse_params(params)
    claim = next(cl for cl in C.claims(values) if cl.id == claim_id)
    return check(Job(C, values), claim)


# --------------------------------------------------------------------------- the three false statements


@pytest.mark.parametrize(
    ("claim_id", "entry"),
    [("I4c-paper", "entry [0, 0]"), ("I6b-paper", "entry [0, 2]"), ("I11-paper", "entry [0, 0]")],
)
def test_each_printed_equivalence_is_refuted_with_a_numeric_counterexample(
    claim_id: str, entry: str
) -> None:
    v = verdict(claim_id, variant="paper")
    assert isinstance(v, Refuted), v
    assert v.detail.startswith(f"{entry} at ")
    lhs, rhs = sympy.Float(v.values["lhs"]), sympy.Float(v.values["rhs"])
    assert abs(lhs - rhs) > 1, (lhs, rhs)  # far apart, not a rounding artefact
    assert v.values["entry"] == entry


def test_shaws_clipping_is_refuted_at_distance_two_with_only_the_symbols_that_entry_uses() -> None:
    v = verdict("I6b-paper", variant="paper")
    assert isinstance(v, Refuted)
    # (i, j) = (0, 2): |j − i| = 2 > k = 1, so only Shaw's clipped W^C_{+1} enters.
    assert "WC[0,1]=1" in v.detail and "WC[1,1]=3/2" in v.detail
    assert "WC[0,-1]" not in v.detail and "b[" not in v.detail


def test_shaws_clipping_holds_when_no_offset_leaves_the_window() -> None:
    # n = 2, k = 1: every |j − i| <= 1, so zero padding and clipping agree.
    assert isinstance(verdict("I6b-paper", variant="paper", n_sym="2"), Proved)


def test_the_paper_variant_replaces_exactly_the_three_statements() -> None:
    fixed, paper = set(claims()), set(claims(variant="paper"))
    assert fixed - paper == {"I4c", "I6b", "I11"}
    assert paper - fixed == {"I4c-paper", "I6b-paper", "I11-paper"}


# --------------------------------------------------------------------------- the corrected statements


@pytest.mark.parametrize("claim_id", ["I4c", "I6b", "I9b"])
def test_each_difference_is_proved_by_an_exact_witness(claim_id: str) -> None:
    claim = claims()[claim_id]
    assert isinstance(claim, ExactFact)
    v = check(Job(C, C.parse_params({})), claim)
    assert v == Proved("exact rational arithmetic", 1, claim.cases)


@pytest.mark.parametrize(
    "claim_id",
    ["I1", "I2", "I3", "I4a", "I4b", "I5", "I6a", "I6c", "I7", "I8", "I9", "I10", "I11", "I12"],
)
def test_each_identity_is_proved_symbolically_entry_by_entry(claim_id: str) -> None:
    claim = claims()[claim_id]
    assert isinstance(claim, Identity) and isinstance(claim.lhs, sympy.MatrixBase)
    v = verdict(claim_id)
    assert isinstance(v, Proved) and v.checked == claim.lhs.rows * claim.lhs.cols
    assert v.detail == f"identity holds symbolically ({v.checked} entries)"


def test_the_identities_hold_for_another_size_and_window() -> None:
    for claim_id in ("I1", "I3", "I6a", "I6c", "I7", "I8", "I10", "I11"):
        assert isinstance(verdict(claim_id, n_sym="5", d_sym="1", k="2"), Proved), claim_id


# --------------------------------------------------------------------------- identities that must fail


def test_a_wrong_offset_sign_for_the_key_based_form_is_refuted() -> None:
    # I8 with the kernel *not* reversed: the key-based form is not the plain transpose.
    s = Symbols(4, 2, 1)
    k = s.X * s.WK
    key_based = sympy.Matrix(
        4, 4, lambda i, j: (k[j, :] * s.WC2[:, j - i + 1])[0, 0] if abs(j - i) <= 1 else 0
    )
    plain = sympy.Matrix(
        4, 4, lambda i, j: (k[i, :] * s.WC2[:, j - i + 1])[0, 0] if abs(j - i) <= 1 else 0
    )
    wrong = Identity(
        id="x", statement="x", reference="x", lhs=key_based, rhs=plain.T, sample=s.sample()
    )
    assert isinstance(check(Job(C, C.parse_params({})), wrong), Refuted)


def test_the_toeplitz_map_with_a_shifted_offset_is_refuted_as_the_lightweight_convolution() -> None:
    s = Symbols(4, 2, 1)
    shifted = [s.beta[2], s.beta[1], s.beta[0]]  # β_{i−j} instead of β_{j−i}
    wrong = Identity(
        id="x",
        statement="x",
        reference="x",
        lhs=lightweight_conv(s.X, s.beta, 1),
        rhs=T(shifted, 4, 1) * s.X,
        sample=s.sample(),
    )
    v = check(Job(C, C.parse_params({})), wrong)
    assert isinstance(v, Refuted) and v.detail.startswith("entry [0, 0] at ")


def test_a_matrix_identity_with_sides_of_different_shapes_is_refuted() -> None:
    wrong = Identity(id="x", statement="x", reference="x", lhs=sympy.eye(2), rhs=sympy.eye(3))
    v = check(Job(C, C.parse_params({})), wrong)
    assert v == Refuted(
        "sympy (simplify)", "the sides have different shapes: (2, 2) and (3, 3)", None
    )


def test_softmax_rows_sum_to_one() -> None:
    s = Symbols(3, 1, 1)
    m = row_softmax(s.X * s.X.T)
    assert all(sympy.simplify(sum(m[i, j] for j in range(3)) - 1) == 0 for i in range(3))


# --------------------------------------------------------------------------- the network


def all_words(max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product("abc", repeat=n)]


def test_every_head_equals_its_equation_on_every_word_up_to_length_three() -> None:
    net = relpos_network()
    for w in all_words(3):
        trace = run_exact(net, w)
        for form in HEAD_FORMS:
            got = [trace.value("relpos", t, f"y:{form}") for t in range(trace.n)]
            assert got == head_reference(form, w, 1), (form, w)
        for c, (z, u) in enumerate((("z1", "u1"), ("z2", "u2"))):
            assert [trace.value("lightweight", t, z) for t in range(trace.n)] == conv_reference(
                "lightweight", w, 1, c
            )
            assert [trace.value("depthwise", t, u) for t in range(trace.n)] == conv_reference(
                "depthwise", w, 1, c
            )


def test_the_dynamic_and_shaw_heads_agree_until_a_word_has_an_offset_beyond_k() -> None:
    net = relpos_network()
    differs = []
    for w in all_words(3):
        trace = run_exact(net, w)
        if any(
            trace.value("relpos", t, "y:dynamic") != trace.value("relpos", t, "y:shaw")
            for t in range(trace.n)
        ):
            differs.append(w)
    # CLS · w has n = |w| + 1 tokens; offsets reach 2 > k = 1 from |w| = 2 on.
    assert differs and min(len(w) for w in differs) == 2


def test_the_sympy_interpreter_gives_the_same_head_values_as_the_exact_one() -> None:
    net = relpos_network()
    for w in (("a", "b", "c"), ("c", "c")):
        te, ts = run_exact(net, w), run_sympy(net, w)
        for state_e, state_s in zip(te.states, ts.states, strict=True):
            for row_e, row_s in zip(state_e.rows, state_s.rows, strict=True):
                assert [sympy.Rational(x.numerator, x.denominator) for x in row_e] == list(row_s)


def _with_head(net: Network, form: str, **changes: Any) -> Network:
    layer = net.layers[0].block
    assert isinstance(layer, AttentionLayer)
    heads = tuple(dataclasses.replace(h, **changes) if h.name == form else h for h in layer.heads)
    return dataclasses.replace(
        net, layers=(Sublayer(block=AttentionLayer(name="relpos", heads=heads)), *net.layers[1:])
    )


@pytest.mark.parametrize(
    ("claim_id", "form", "changes"),
    [
        ("N5-shaw", "shaw", {"query_conv": None}),
        (
            "N5",
            "dynamic",
            {
                "query_conv": RelativeKernel(
                    columns=relpos_network().layers[0].block.heads[1].query_conv.columns,  # type: ignore[union-attr]
                    outside="clip",
                )
            },
        ),
        ("N6", "composite", {"relative_bias": None}),
        ("N4", "fixed", {"relative_bias": None}),
    ],
)
def test_dropping_or_changing_one_relative_field_refutes_that_heads_claim(
    claim_id: str, form: str, changes: dict[str, Any]
) -> None:
    mutated = _with_head(relpos_network(), form, **changes)
    construction = dataclasses.replace(C, build=lambda values: mutated)
    values = construction.parse_params({})
    claim = next(cl for cl in construction.claims(values) if cl.id == claim_id)
    v = check(Job(construction, values), claim)
    assert isinstance(v, Refuted) and v.word is not None, v


# --------------------------------------------------------------------------- printing and files


def test_the_network_prints_every_relative_field_and_round_trips_through_a_network_file() -> None:
    net = relpos_network(k=2)
    text = pretty(net)
    assert (
        "    head shaw: scoring=dot scale=1/√4 normalizer=softmax(base=E=4, i.e. c=ln 4) mask=none empty=zero\n"
        in text
    )
    assert "      bias β[j−i]: -2:0 -1:1 0:-1 1:0 2:1 (outside ±2: zero)\n" in text
    assert "(outside ±2: clip)" in text and "key_conv W[j−i]:" in text
    assert (
        "  convolution lightweight (residual, post_ln=none) lightweight k=2 normalizer=softmax(base=E=2, i.e. c=ln 2)\n"
        in text
    )
    assert (
        "  convolution depthwise (residual, post_ln=none) depthwise k=2 normalizer=none\n" in text
    )
    again = netfile.loads(netfile.dumps(net))
    assert again == net and fingerprint(again) == fingerprint(net)


def test_the_parameters_are_checked_with_a_message_that_names_the_fix() -> None:
    with pytest.raises(
        ValueError, match=r"n_sym=7: the symbolic identities grow fast with n; use n_sym <= 6"
    ):
        C.parse_params({"n_sym": "7"})
    with pytest.raises(ValueError, match=r"k=-1 must be >= 0"):
        C.parse_params({"k": "-1"})
    with pytest.raises(ValueError, match=r"k=True must be an integer >= 0"):
        relpos_network(True)  # type: ignore[arg-type]


def test_the_exact_reference_weights_are_powers_of_two() -> None:
    # d_h = 4 and base 4: 4^{logit} with logit ∈ ½ℤ is 2^{2·logit}, so every value is rational.
    values = head_reference("composite", ("a", "c"), 1)
    assert all(isinstance(v, Fraction) for v in values)
    assert values == [
        run_exact(relpos_network(), "ac").value("relpos", t, "y:composite") for t in range(3)
    ]
