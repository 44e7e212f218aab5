"""Exact numbers (:func:`netproof.symbolic.as_fraction`) and the IR dataclasses' own checks."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from netproof.symbolic import (
    FFN,
    RELU,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    DecoderLayer,
    FlatEmbedding,
    Halting,
    Hardmax,
    Head,
    InexactNumberError,
    LayerNorm,
    Network,
    NetworkValidationError,
    NextSymbols,
    RelativeBias,
    RelativeKernel,
    Scale,
    Seq2Seq,
    Softmax,
    Sublayer,
    SymbolicError,
    TokenEmbedding,
    affine,
    as_fraction,
    classifier,
    constant,
    ffn,
    layernorm,
    token_embedding,
)

# --------------------------------------------------------------------------- as_fraction


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, Fraction(3)),
        (-7, Fraction(-7)),
        (0, Fraction(0)),
        (Fraction(2, 6), Fraction(1, 3)),
        ("-1/2", Fraction(-1, 2)),
        ("4/6", Fraction(2, 3)),
        (" 5 ", Fraction(5)),
        ("0", Fraction(0)),
    ],
)
def test_ints_fractions_and_p_over_q_strings_become_the_equal_fraction(
    value: object, expected: Fraction
) -> None:
    result = as_fraction(value)
    assert result == expected
    assert type(result) is Fraction


def test_a_fraction_is_returned_as_the_same_object() -> None:
    q = Fraction(3, 7)
    assert as_fraction(q) is q


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        (0.5, r"Write Fraction\(1, 2\) or the string '1/2' instead"),
        (0.1, r"Write Fraction\(1, 10\) or the string '1/10' instead"),
        (-2.0, r"Write Fraction\(-2, 1\) or the string '-2' instead"),
    ],
)
def test_a_float_is_refused_with_the_fix_in_the_message(value: float, fix: str) -> None:
    with pytest.raises(
        InexactNumberError, match=rf"bias={value!r} is a float; the IR is exact\. {fix}"
    ):
        as_fraction(value, "bias")


def test_a_refused_float_is_both_a_type_error_and_a_symbolic_error() -> None:
    with pytest.raises(TypeError, match="is a float") as info:
        as_fraction(1.5)
    assert isinstance(info.value, SymbolicError)


@pytest.mark.parametrize("value", [True, False])
def test_a_bool_is_refused_although_python_treats_it_as_an_int(value: bool) -> None:
    with pytest.raises(
        InexactNumberError, match=rf"eps={value!r} is a bool; write the number 0 or 1"
    ):
        as_fraction(value, "eps")


@pytest.mark.parametrize("text", ["0.5", "1e3", "-2.", "3E-2"])
def test_a_decimal_string_is_refused_and_pointed_to_p_over_q(text: str) -> None:
    with pytest.raises(
        InexactNumberError, match=r"is a decimal string; the IR takes exact rationals like '1/10'"
    ):
        as_fraction(text)


@pytest.mark.parametrize("text", ["abc", "1/0", "", "1/2/3"])
def test_a_string_that_is_not_a_rational_is_refused(text: str) -> None:
    with pytest.raises(
        InexactNumberError, match=r"is not a rational number; write an int or 'p/q'"
    ):
        as_fraction(text)


@pytest.mark.parametrize(
    ("value", "type_name"), [(None, "NoneType"), ([1], "list"), (1j, "complex")]
)
def test_a_value_of_another_type_is_refused_naming_the_type(value: object, type_name: str) -> None:
    with pytest.raises(
        InexactNumberError, match=rf"has type {type_name}; the IR takes int, Fraction or 'p/q'"
    ):
        as_fraction(value)


# --------------------------------------------------------------------------- frozen IR


def _tiny_head() -> Head:
    return Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"x": 1}}),
        value=affine({"y": {"x": 1}}),
        normalizer=Hardmax(),
    )


def _tiny_network() -> Network:
    return Network(
        name="tiny",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(_tiny_head(),))),),
        readout=classifier("y"),
    )


def _tiny_decoder_layer() -> DecoderLayer:
    return DecoderLayer(
        name="dec",
        self_attention=Sublayer(block=AttentionLayer(name="dec_self", heads=())),
        cross_attention=Sublayer(block=AttentionLayer(name="dec_enc", heads=())),
        ffn=Sublayer(block=ffn("dec_ffn", affine({"c": {}}, inputs=("x",), bias={"c": 1}))),
    )


def _tiny_seq2seq() -> Seq2Seq:
    return Seq2Seq(
        name="tiny-s2s",
        dims=("x", "c"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        encoder=(),
        decoder=(_tiny_decoder_layer(),),
        output=affine({"x": {"x": 1}, "c": {"c": 1}}),
        seed=(),
        halting=Halting(unit=affine({"halt": {"c": 1}}), value=Fraction(2)),
    )


FROZEN_CASES: list[tuple[str, object, str, object]] = [
    ("Affine", affine({"y": {"x": 1}}), "bias", (Fraction(1),)),
    ("Activation", Activation(kind="relu"), "kind", "step"),
    ("LayerNorm", layernorm(0), "eps", Fraction(1)),
    ("FFN", ffn("f", affine({"y": {"x": 1}})), "name", "g"),
    ("Scale", Scale(), "coef", Fraction(2)),
    ("Hardmax", Hardmax(), "tie", "leftmost"),
    ("Softmax", Softmax(r=Fraction(2)), "r", Fraction(3)),
    ("Head", _tiny_head(), "mask", "causal"),
    ("AttentionLayer", AttentionLayer(name="att", heads=()), "heads", ()),
    ("Sublayer", Sublayer(block=AttentionLayer(name="att", heads=())), "residual", False),
    ("TokenEmbedding", token_embedding(("a",), {"a": {"x": 1}}), "index_base", 1),
    (
        "FlatEmbedding",
        FlatEmbedding(alphabet=("0",), length=1, values=(("0", Fraction(0)),)),
        "length",
        2,
    ),
    ("Classifier", classifier("x"), "position", -1),
    (
        "NextSymbols",
        NextSymbols(scores=(("a", "x"),), threshold=Fraction(0)),
        "threshold",
        Fraction(1),
    ),
    ("Network", _tiny_network(), "dims", ("x",)),
    (
        "RelativeBias",
        RelativeBias(beta=(Fraction(1), Fraction(0), Fraction(-1))),
        "outside",
        "clip",
    ),
    ("RelativeKernel", RelativeKernel(columns=((Fraction(1),),)), "outside", "clip"),
    (
        "Convolution",
        Convolution(name="conv", inputs=("x",), outputs=("y",), kernels=((Fraction(1),),)),
        "kernels",
        ((Fraction(2),),),
    ),
    ("DecoderLayer", _tiny_decoder_layer(), "name", "other"),
    ("Halting", Halting(unit=affine({"halt": {"c": 1}})), "value", Fraction(2)),
    ("Seq2Seq", _tiny_seq2seq(), "dims", ("x",)),
]


@pytest.mark.parametrize(
    ("kind", "node", "field", "new"), FROZEN_CASES, ids=[c[0] for c in FROZEN_CASES]
)
def test_every_ir_node_is_frozen(kind: str, node: object, field: str, new: object) -> None:
    before = getattr(node, field)
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{field}'"):
        setattr(node, field, new)
    assert getattr(node, field) == before


def test_the_frozen_cases_cover_every_ir_class() -> None:
    import netproof.symbolic.blocks as blocks
    import netproof.symbolic.ir as ir

    ir_classes = {
        name
        for name, obj in vars(ir).items()
        if isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ in (ir.__name__, blocks.__name__)
    }
    assert {c[0] for c in FROZEN_CASES} == ir_classes


# --------------------------------------------------------------------------- Affine shapes


def test_an_affine_with_fewer_weight_rows_than_outputs_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"Affine has 2 outputs but 1 weight rows"):
        Affine(
            inputs=("x",),
            outputs=("y", "z"),
            weights=((Fraction(1),),),
            bias=(Fraction(0), Fraction(0)),
        )


def test_an_affine_with_a_bias_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"Affine has 1 outputs but 2 bias entries"):
        Affine(
            inputs=("x",),
            outputs=("y",),
            weights=((Fraction(1),),),
            bias=(Fraction(0), Fraction(0)),
        )


def test_an_affine_row_of_the_wrong_length_is_refused_naming_the_output() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"Affine row for output 'y' has 1 entries, expected 2"
    ):
        Affine(inputs=("x", "z"), outputs=("y",), weights=((Fraction(1),),), bias=(Fraction(0),))


def test_affine_names_must_be_a_tuple() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"Affine.inputs must be a tuple of names, got list"
    ):
        Affine(inputs=["x"], outputs=("y",), weights=((Fraction(1),),), bias=(Fraction(0),))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "a b", "tab\there"])
def test_a_dim_name_that_is_empty_or_has_spaces_is_refused(name: str) -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"Affine.outputs: dim name .* must be a non-empty string without spaces",
    ):
        Affine(inputs=(), outputs=(name,), weights=((),), bias=(Fraction(0),))


def test_a_repeated_dim_name_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"Affine.inputs: dim name 'x' appears twice"):
        Affine(
            inputs=("x", "x"),
            outputs=("y",),
            weights=((Fraction(1), Fraction(1)),),
            bias=(Fraction(0),),
        )


def test_ints_passed_directly_to_affine_are_refused_with_a_message_naming_the_builders() -> None:
    with pytest.raises(
        InexactNumberError, match=r"weight\['y', 'x'\]=2 is an int; .*symbolic\.builders"
    ):
        Affine(inputs=("x",), outputs=("y",), weights=((2,),), bias=(Fraction(0),))  # type: ignore[arg-type]


def test_an_int_bias_passed_directly_to_affine_is_refused_naming_the_output() -> None:
    with pytest.raises(
        InexactNumberError,
        match=r"bias\['y'\]=0 is an int; IR fields hold Fractions\. Write Fraction\(0\)",
    ):
        Affine(inputs=("x",), outputs=("y",), weights=((Fraction(1),),), bias=(0,))  # type: ignore[arg-type]


def test_a_p_over_q_string_passed_directly_to_affine_is_refused() -> None:
    with pytest.raises(InexactNumberError, match=r"weight\['y', 'x'\]='1/2' must be a Fraction"):
        Affine(inputs=("x",), outputs=("y",), weights=(("1/2",),), bias=(Fraction(0),))  # type: ignore[arg-type]


def test_the_affine_builder_fills_missing_weights_with_zero_in_first_appearance_order() -> None:
    a = affine({"u": {"y": 2}, "v": {"x": "1/3"}}, bias={"w": -1})
    assert a.inputs == ("y", "x")
    assert a.outputs == ("u", "v", "w")
    assert a.weights == (
        (Fraction(2), Fraction(0)),
        (Fraction(0), Fraction(1, 3)),
        (Fraction(0), Fraction(0)),
    )
    assert a.bias == (Fraction(0), Fraction(0), Fraction(-1))


def test_the_affine_builder_refuses_a_row_reading_an_undeclared_input() -> None:
    with pytest.raises(ValueError, match=r"row 'y' reads 'z', which is not among inputs \['x'\]"):
        affine({"y": {"z": 1}}, inputs=("x",))


# --------------------------------------------------------------------------- closed choices


def test_an_unknown_activation_kind_is_refused_naming_the_value() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"Activation.kind='tanh' is not one of relu, sigma, step"
    ):
        Activation(kind="tanh")  # type: ignore[arg-type]


def test_an_unknown_tie_rule_is_refused_naming_the_value() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"Hardmax.tie='random' is not one of average, leftmost, rightmost",
    ):
        Hardmax(tie="random")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("mask", "bidirectional", "none, causal, strict_causal, anticausal, strict_anticausal"),
        ("scoring", "cosine", "dot, neg_abs_dot"),
        ("empty", "nan", "zero, error"),
    ],
)
def test_an_unknown_head_choice_is_refused_naming_the_head_and_the_value(
    field: str, value: str, allowed: str
) -> None:
    with pytest.raises(
        NetworkValidationError, match=rf"head 'h' {field}='{value}' is not one of {allowed}"
    ):
        Head(
            name="h",
            query=constant({"q": 1}),
            key=constant({"q": 1}),
            value=constant({"y": 1}),
            normalizer=Hardmax(),
            **{field: value},  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    "kwargs", [{}, {"r": Fraction(2), "c": Fraction(1)}], ids=["neither", "both"]
)
def test_softmax_needs_exactly_one_of_r_and_c(kwargs: dict[str, Fraction]) -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"Softmax needs exactly one of r \(base r = e\^\{ln r\}\) and c",
    ):
        Softmax(**kwargs)


@pytest.mark.parametrize("r", [Fraction(0), Fraction(-1, 2)])
def test_a_softmax_base_that_is_not_positive_is_refused(r: Fraction) -> None:
    with pytest.raises(NetworkValidationError, match=rf"Softmax.r={r} must be > 0"):
        Softmax(r=r)


def test_a_zero_attention_scale_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"Scale.coef=0 makes every score 0"):
        Scale(coef=Fraction(0))


@pytest.mark.parametrize("sqrt_d", [0, -4])
def test_a_square_root_scale_needs_a_positive_int(sqrt_d: int) -> None:
    with pytest.raises(
        NetworkValidationError, match=rf"Scale.sqrt_d={sqrt_d} must be a positive int"
    ):
        Scale(sqrt_d=sqrt_d)


def test_hardmax_with_a_negative_scale_is_refused_with_the_fix() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"head 'h': hardmax with a negative scale .*negate the query instead",
    ):
        Head(
            name="h",
            query=constant({"q": 1}),
            key=constant({"q": 1}),
            value=constant({"y": 1}),
            normalizer=Hardmax(),
            scale=Scale(coef=Fraction(-1)),
        )


def test_query_and_key_must_share_their_output_names_in_order() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"head 'h': query outputs \('a', 'b'\) and key outputs \('b', 'a'\)",
    ):
        Head(
            name="h",
            query=constant({"a": 1, "b": 1}),
            key=constant({"b": 1, "a": 1}),
            value=constant({"y": 1}),
            normalizer=Hardmax(),
        )


def test_a_layer_norm_with_negative_eps_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"LayerNorm.eps=-1/2 must be >= 0"):
        LayerNorm(eps=Fraction(-1, 2))


def test_a_layer_norm_over_no_dims_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"LayerNorm.over must name at least one dim"):
        LayerNorm(eps=Fraction(0), over=())


def test_an_ffn_must_start_and_end_with_an_affine_map() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"FFN 'f': the first and last steps must be Affine maps"
    ):
        FFN(name="f", steps=(affine({"y": {"x": 1}}), RELU))


def test_parallel_heads_need_distinct_names() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"attention layer 'att': head names repeat: \['h', 'h'\]"
    ):
        AttentionLayer(name="att", heads=(_tiny_head(), _tiny_head()))


def test_a_classifier_logit_has_exactly_one_output() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"Classifier.logit must have exactly one output"
    ):
        Classifier(logit=constant({"a": 1, "b": 1}))


def test_a_special_token_may_not_be_typed_by_the_user() -> None:
    with pytest.raises(NetworkValidationError, match=r"special token 'a' is also in the alphabet"):
        token_embedding(("a", "b"), {"a": {}, "b": {}}, prefix=("a",))


def test_every_token_needs_an_embedding_row() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"token 'CLS' has no row in the embedding table"
    ):
        token_embedding(("a",), {"a": {}}, prefix=("CLS",))


def test_an_index_base_other_than_zero_or_one_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"index_base=2 must be 0 or 1"):
        TokenEmbedding(alphabet=("a",), table=(("a", ()),), index_base=2)


def test_a_flat_embedding_needs_one_value_per_symbol() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"FlatEmbedding.values needs one value per alphabet symbol"
    ):
        FlatEmbedding(alphabet=("0", "1"), length=2, values=(("0", Fraction(0)),))
