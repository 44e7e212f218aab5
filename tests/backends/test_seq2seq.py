"""The encoder–decoder interpreter: causal self-attention that sees itself, masked
cross-attention, the recurrence with positional features, halting and the step budget."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from symbolic import (
    AttentionLayer,
    DecoderLayer,
    Halting,
    Hardmax,
    Head,
    NetworkValidationError,
    Seq2Seq,
    Sublayer,
    WordError,
    affine,
    constant,
    ffn,
    pretty,
    token_embedding,
)
from symbolic.seq2seq import run


def probe(*, cross_mask: str = "none", halt_at: int = 4) -> Seq2Seq:
    """c counts the steps (FFN + 1); ``mean`` averages c over the decoder steps the self-attention
    sees; ``seen`` sums, over the encoder positions the cross-attention sees, 1/#seen·v_j with
    v_j = the token's weight; ``p`` is the decoder positional feature i+1 at each step."""
    self_head = Head(
        name="mean", query=constant({"q": 1}), key=constant({"q": 1}),
        value=affine({"mean": {"c": 1}}), normalizer=Hardmax(), mask="causal",
    )
    cross_head = Head(
        name="read", query=constant({"q": 1}), key=constant({"q": 1}),
        value=affine({"seen": {"w": 1}}), normalizer=Hardmax(), mask=cross_mask,  # type: ignore[arg-type]
    )
    layer = DecoderLayer(
        name="dec",
        self_attention=Sublayer(block=AttentionLayer(name="dec_self", heads=(self_head,))),
        cross_attention=Sublayer(block=AttentionLayer(name="dec_enc", heads=(cross_head,))),
        ffn=Sublayer(block=ffn("count", affine({"c": {}}, inputs=("c",), bias={"c": 1}))),
    )
    dims = ("c", "mean", "seen", "w", "p")
    return Seq2Seq(
        name="probe",
        dims=dims,
        embedding=token_embedding(("a", "b"), {"a": {"w": 1}, "b": {"w": 3}}),
        encoder=(),
        decoder=(layer,),
        output=affine({"c": {"c": 1}}, inputs=dims, outputs=dims),  # F keeps c only
        seed=(),
        halting=Halting(unit=affine({"halt": {"c": 1}}), value=Fraction(halt_at)),
        decoder_positional=(("p", "i+1", Fraction(1)),),
    )


def test_the_decoder_self_attention_averages_the_steps_up_to_and_including_itself() -> None:
    trace = run(probe(), ("a", "b"))
    # y_t's c is t (the FFN adds 1, F keeps c), and at step t the head averages c over the
    # steps 0..t, itself included: t/2.
    assert [trace.value(t, "c") for t in range(5)] == [0, 1, 2, 3, 4]
    assert [trace.value(t, "mean", "dec_self") for t in range(4)] == [0, Fraction(1, 2), 1, Fraction(3, 2)]


def test_the_cross_attention_sees_every_encoder_position_or_only_those_up_to_the_step() -> None:
    everything = run(probe(), ("b", "a", "a"))
    assert [everything.value(t, "seen", "dec_enc") for t in range(3)] == [Fraction(5, 3)] * 3
    causal = run(probe(cross_mask="causal"), ("b", "a", "a"))
    assert [causal.value(t, "seen", "dec_enc") for t in range(4)] == [3, 2, Fraction(5, 3), Fraction(5, 3)]


def test_the_positional_feature_is_added_to_every_output_and_halting_stops_the_run() -> None:
    trace = run(probe(halt_at=2), ("a",))
    assert [trace.value(t, "p") for t in range(3)] == [1, 2, 3]
    assert trace.halted_at == 2
    assert len(trace.steps) == 3
    assert trace.steps[-1].halts and trace.steps[-1].selections == ()


def test_a_run_that_does_not_halt_within_the_budget_has_no_halting_step() -> None:
    trace = run(probe(halt_at=-1), ("a",), max_steps=5)
    assert (trace.halted_at, len(trace.steps)) == (None, 6)
    with pytest.raises(WordError, match=r"max_steps=-1 must be an int >= 0"):
        run(probe(), ("a",), max_steps=-1)


def test_exact_and_sympy_agree_on_every_decoder_state() -> None:
    net = probe(cross_mask="causal")
    ex, sy = run(net, ("b", "a")), run(net, ("b", "a"), backend="sympy")
    assert len(ex.steps) == len(sy.steps)
    for t in range(len(ex.steps)):
        assert {d: sympy.Rational(v.numerator, v.denominator) for d, v in ex.y(t).items()} == sy.y(t)


def test_the_printed_form_shows_the_masks_and_the_decoder_positions() -> None:
    text = pretty(probe(cross_mask="causal"))
    assert "  decoder pos p += i+1(t)\n" in text
    assert "    cross   head read: scoring=dot scale=1 normalizer=hardmax(tie=average) mask=causal empty=zero\n" in text


def test_a_cross_attention_mask_other_than_none_or_causal_is_refused() -> None:
    with pytest.raises(NetworkValidationError, match=r"cross_attention head 'read' has mask 'anticausal'; it must be one of none, causal"):
        probe(cross_mask="anticausal")


def test_a_seed_on_an_unknown_dim_is_refused_with_the_ir_around_it() -> None:
    net = probe()
    with pytest.raises(NetworkValidationError, match=r"the seed ỹ_0 sets unknown dim 'zz'"):
        Seq2Seq(
            name=net.name, dims=net.dims, embedding=net.embedding, encoder=(), decoder=net.decoder,
            output=net.output, seed=(("zz", Fraction(1)),), halting=net.halting,
        )
