"""The encoder–decoder interpreter: causal self-attention that sees itself, masked
cross-attention, the recurrence with positional features, halting and the step budget."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest
import sympy

from netproof.symbolic import (
    NetworkValidationError,
    Seq2Seq,
    WordError,
    pretty,
)
from netproof.symbolic.seq2seq import run


def test_the_decoder_self_attention_averages_the_steps_up_to_and_including_itself(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    trace = run(seq2seq_probe(), ("a", "b"))
    # y_t's c is t (the FFN adds 1, F keeps c), and at step t the head averages c over the
    # steps 0..t, itself included: t/2.
    assert [trace.value(t, "c") for t in range(5)] == [0, 1, 2, 3, 4]
    assert [trace.value(t, "mean", "dec_self") for t in range(4)] == [
        0,
        Fraction(1, 2),
        1,
        Fraction(3, 2),
    ]


def test_the_cross_attention_sees_every_encoder_position_or_only_those_up_to_the_step(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    everything = run(seq2seq_probe(), ("b", "a", "a"))
    assert [everything.value(t, "seen", "dec_enc") for t in range(3)] == [Fraction(5, 3)] * 3
    causal = run(seq2seq_probe(cross_mask="causal"), ("b", "a", "a"))
    assert [causal.value(t, "seen", "dec_enc") for t in range(4)] == [
        3,
        2,
        Fraction(5, 3),
        Fraction(5, 3),
    ]


def test_the_positional_feature_is_added_to_every_output_and_halting_stops_the_run(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    trace = run(seq2seq_probe(halt_at=2), ("a",))
    assert [trace.value(t, "p") for t in range(3)] == [1, 2, 3]
    assert trace.halted_at == 2
    assert len(trace.steps) == 3
    assert trace.steps[-1].halts and trace.steps[-1].selections == ()


def test_a_run_that_does_not_halt_within_the_budget_has_no_halting_step(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    trace = run(seq2seq_probe(halt_at=-1), ("a",), max_steps=5)
    assert (trace.halted_at, len(trace.steps)) == (None, 6)
    with pytest.raises(WordError, match=r"max_steps=-1 must be an int >= 0"):
        run(seq2seq_probe(), ("a",), max_steps=-1)


def test_exact_and_sympy_agree_on_every_decoder_state(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    net = seq2seq_probe(cross_mask="causal")
    ex, sy = run(net, ("b", "a")), run(net, ("b", "a"), backend="sympy")
    assert len(ex.steps) == len(sy.steps)
    for t in range(len(ex.steps)):
        assert {d: sympy.Rational(v.numerator, v.denominator) for d, v in ex.y(t).items()} == sy.y(
            t
        )


def test_the_printed_form_shows_the_masks_and_the_decoder_positions(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    text = pretty(seq2seq_probe(cross_mask="causal"))
    assert "  decoder pos p += i+1(t)\n" in text
    assert (
        "    cross   head read: scoring=dot scale=1 normalizer=hardmax(tie=average) mask=causal empty=zero\n"
        in text
    )


def test_a_cross_attention_mask_other_than_none_or_causal_is_refused(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    with pytest.raises(
        NetworkValidationError,
        match=r"cross_attention head 'read' has mask 'anticausal'; it must be one of none, causal",
    ):
        seq2seq_probe(cross_mask="anticausal")


def test_a_seed_on_an_unknown_dim_is_refused_with_the_ir_around_it(
    seq2seq_probe: Callable[..., Seq2Seq],
) -> None:
    net = seq2seq_probe()
    with pytest.raises(NetworkValidationError, match=r"the seed ỹ_0 sets unknown dim 'zz'"):
        Seq2Seq(
            name=net.name,
            dims=net.dims,
            embedding=net.embedding,
            encoder=(),
            decoder=net.decoder,
            output=net.output,
            seed=(("zz", Fraction(1)),),
            halting=net.halting,
        )
