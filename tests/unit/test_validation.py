"""Whole-network validation: names read exist, heads write disjoint dims, errors show the IR."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    NetworkValidationError,
    NextSymbols,
    Sublayer,
    affine,
    classifier,
    constant,
    ffn,
    layernorm,
    token_embedding,
)
from netproof.symbolic.exact import run
from netproof.symbolic.positional import known_features

DIMS = ("x", "y")


def _embedding() -> object:
    return token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"y": 1}})


def _net(
    *layers: Sublayer, embedding: object | None = None, readout: object | None = None
) -> Network:
    return Network(
        name="n",
        dims=DIMS,
        embedding=embedding if embedding is not None else _embedding(),  # type: ignore[arg-type]
        layers=layers,
        readout=readout if readout is not None else classifier("y"),  # type: ignore[arg-type]
    )


def _head(name: str, *, key_reads: str = "x", writes: str = "y") -> Head:
    return Head(
        name=name,
        query=constant({"q": 1}),
        key=affine({"q": {key_reads: 1}}),
        value=affine({writes: {"x": 1}}),
        normalizer=Hardmax(),
    )


def test_a_well_formed_network_is_accepted_and_runs() -> None:
    net = _net(
        Sublayer(block=AttentionLayer(name="att", heads=(_head("h"),))),
        Sublayer(block=ffn("f", affine({"u": {"x": 1}}), RELU, affine({"y": {"u": 1}}))),
    )
    # attention copies x at the argmax of x (token 0) into y; the FFN adds relu(x) to y
    assert run(net, "ab").final.rows == ((Fraction(1), Fraction(2)), (Fraction(0), Fraction(2)))


def test_a_head_reading_an_unknown_dim_names_block_head_and_dim_and_shows_the_block() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"attention 'att' head 'h1': key reads 'ghost'"
    ) as info:
        _net(Sublayer(block=AttentionLayer(name="att", heads=(_head("h1", key_reads="ghost"),))))
    assert str(info.value) == (
        "attention 'att' head 'h1': key reads 'ghost', which is not available there (available: x, y)\n"
        "  in:\n"
        "    | attention att (residual, post_ln=none)\n"
        "    |   head h1: scoring=dot scale=1 normalizer=hardmax(tie=average) mask=none empty=zero\n"
        "    |     q.q := 1\n"
        "    |     k.q := 1*ghost\n"
        "    |     v.y := 1*x"
    )


def test_two_heads_writing_the_same_residual_dim_fail_asking_for_disjoint_dims() -> None:
    heads = (_head("left"), _head("right"))
    with pytest.raises(
        NetworkValidationError,
        match=r"attention 'att' head 'right': writes 'y', which head 'left' writes too; parallel heads write disjoint dims",
    ) as info:
        _net(Sublayer(block=AttentionLayer(name="att", heads=heads)))
    assert "\n  in:\n    | attention att (residual, post_ln=none)\n" in str(info.value)


def test_two_heads_may_write_the_same_dim_through_no_output_map_but_not_the_same_local_name() -> (
    None
):
    heads = (_head("left", writes="s"), _head("right", writes="s"))
    with pytest.raises(
        NetworkValidationError, match=r"head 'right': writes 's', which head 'left' writes too"
    ):
        _net(
            Sublayer(block=AttentionLayer(name="att", heads=heads, output=affine({"y": {"s": 1}})))
        )


def test_a_head_without_an_output_map_writing_an_unknown_dim_fails() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"head 'h': value writes 'ghost', which is not a residual dim; add them",
    ):
        _net(Sublayer(block=AttentionLayer(name="att", heads=(_head("h", writes="ghost"),))))


def test_an_output_map_reading_a_name_no_head_writes_fails() -> None:
    layer = AttentionLayer(
        name="att", heads=(_head("h", writes="s"),), output=affine({"y": {"t": 1}})
    )
    with pytest.raises(
        NetworkValidationError,
        match=r"attention 'att': output map reads 't', which is not available there \(available: s\)",
    ):
        _net(Sublayer(block=layer))


def test_an_ffn_writing_an_unknown_dim_fails_naming_the_step_and_showing_the_block() -> None:
    block = ffn("gate", affine({"u": {"x": 1}}), RELU, affine({"ghost": {"u": 1}}))
    with pytest.raises(
        NetworkValidationError,
        match=r"ffn 'gate': step \[2\] \(output\) writes 'ghost', which is not a residual dim",
    ) as info:
        _net(Sublayer(block=block))
    message = str(info.value)
    assert "\n    | ffn gate (residual, post_ln=none)\n" in message
    assert message.endswith("    |   [2] ghost := 1*u")


def test_an_ffn_step_reading_a_name_the_previous_step_does_not_produce_fails() -> None:
    block = ffn("gate", affine({"u": {"x": 1}}), RELU, affine({"y": {"x": 1}}))
    with pytest.raises(
        NetworkValidationError,
        match=r"ffn 'gate': step \[2\] reads 'x', which is not available there \(available: u\)",
    ):
        _net(Sublayer(block=block))


def test_a_layer_norm_inside_an_ffn_over_names_the_previous_step_lacks_fails() -> None:
    block = ffn("gate", affine({"u": {"x": 1}}), layernorm(0, over=("x",)), affine({"y": {"u": 1}}))
    with pytest.raises(
        NetworkValidationError,
        match=r"ffn 'gate': step \[1\] layer norm over \['x'\], which the previous step does not produce",
    ):
        _net(Sublayer(block=block))


def test_a_post_residual_layer_norm_over_unknown_dims_fails() -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"'att': post-residual layer norm over unknown dims \['ghost'\]",
    ):
        _net(
            Sublayer(
                block=AttentionLayer(name="att", heads=()), post_ln=layernorm(0, over=("ghost",))
            )
        )


def test_an_embedding_writing_an_unknown_dim_fails_naming_the_token_and_the_dim() -> None:
    emb = token_embedding(("a",), {"a": {"ghost": 1}})
    with pytest.raises(
        NetworkValidationError, match=r"embedding of token 'a' writes unknown dim 'ghost'"
    ) as info:
        _net(embedding=emb)
    assert "\n    | input tokens w  alphabet=a  index_base=0\n    |   embed a: ghost=1" in str(
        info.value
    )


def test_a_positional_feature_writing_an_unknown_dim_fails() -> None:
    emb = token_embedding(("a",), {"a": {"x": 1}}, positional={"ghost": "i/n"})
    with pytest.raises(
        NetworkValidationError, match=r"positional feature 'i/n' writes unknown dim 'ghost'"
    ):
        _net(embedding=emb)


def test_an_unknown_positional_feature_name_lists_the_known_ones() -> None:
    emb = token_embedding(("a",), {"a": {"x": 1}}, positional={"x": "i^2"})
    known = ", ".join(known_features())
    with pytest.raises(
        NetworkValidationError,
        match=re.escape(f"unknown positional feature 'i^2'; known features: {known}"),
    ):
        _net(embedding=emb)


def test_a_classifier_reading_an_unknown_dim_fails() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"readout: logit reads 'ghost', which is not available there"
    ):
        _net(readout=classifier("ghost"))


def test_a_next_symbols_readout_reading_an_unknown_dim_fails() -> None:
    readout = NextSymbols(scores=(("a", "x"), ("b", "ghost")), threshold=Fraction(0))
    with pytest.raises(
        NetworkValidationError, match=r"readout: symbol 'b' reads unknown dim 'ghost'"
    ):
        _net(readout=readout)


def test_network_dims_must_be_distinct() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"network 'n' dims: dim name 'x' appears twice"
    ):
        Network(
            name="n", dims=("x", "x"), embedding=_embedding(), layers=(), readout=classifier("x")
        )  # type: ignore[arg-type]


def test_a_long_block_is_shown_up_to_forty_lines_with_a_count_of_the_rest() -> None:
    wide = affine({f"u{k}": {"x": 1} for k in range(45)})
    block = ffn("wide", wide, RELU, affine({"ghost": {"u0": 1}}))
    with pytest.raises(NetworkValidationError, match=r"writes 'ghost'") as info:
        _net(Sublayer(block=block))
    message = str(info.value)
    assert message.count("\n    | ") == 41
    assert message.endswith("    | ... (8 more lines)")


def test_two_sublayers_with_the_same_name_are_refused() -> None:
    same = ffn("f", affine({"y": {"x": 1}}))
    with pytest.raises(NetworkValidationError, match=r"'f'"):
        _net(Sublayer(block=same), Sublayer(block=same))


def test_a_sublayer_named_input_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"'input'"):
        _net(Sublayer(block=ffn("input", affine({"y": {"x": 1}}))))
