"""The torch run of encoder–decoder networks (symbolic.torch_backend.run_seq2seq).

- float64 agrees with the exact interpreter (symbolic.seq2seq.run) on every decoder state
  y_t and on the halting step, for tm-sim with both transformers on a few short words, and on
  the counter and the masked-cross-attention probe of tests/backends/test_seq2seq.py.
- The directional transformer's coordinate x = 2^{−t} cannot go below float32's smallest
  subnormal 2^{−149} (Bhattamishra et al. 2020, spec §2.4 item 7, claim B18): from t = 150 on it
  is wrong; with a stateless σ-RNN on a word of n = 150 tokens (# w $) the decoder's attention
  then averages every position and the simulated state h is wrong from t = n on (the spec's
  "t = n + 1" counts n without the $), while float64 still matches the exact run there. (tm-sim
  itself breaks in float32 earlier, on its stack encoding: tests/verifier/test_precision.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest

from netproof.constructions.bhattamishra2020 import directional_transformer, tm_network
from netproof.symbolic import (
    Seq2Seq,
    WordError,
)
from netproof.symbolic.seq2seq import run
from netproof.verifier.claims.machines import SigmaRNN

torch = pytest.importorskip("torch")
from netproof.symbolic.torch_backend import TorchBackendError, run_seq2seq

pytestmark = pytest.mark.torch


def tm(transformer: str) -> Seq2Seq:
    return tm_network(
        {"machine": "balanced-parens", "transformer": transformer, "variant": "fixed"}
    )


def mismatches(
    net: Seq2Seq, word: str | tuple[str, ...], dtype: str, max_steps: int
) -> list[tuple[int, str]]:
    """(t, dim) of every y_t coordinate where the float run differs from the exact one."""
    exact = run(net, word, max_steps=max_steps)
    floats = run_seq2seq(net, word, dtype=dtype, max_steps=max_steps)
    assert floats.steps == len(exact.steps)
    assert floats.halted_at == exact.halted_at
    return [
        (t, d)
        for t in range(floats.steps)
        for d in net.dims
        if floats.value(t, d) != float(exact.value(t, d))
    ]


@pytest.mark.parametrize("transformer", ["vanilla", "directional"])
@pytest.mark.parametrize("word", ["", "()", "(()", "())("])
def test_float64_matches_the_exact_decoder_state_at_every_step_of_tm_sim(
    transformer: str, word: str
) -> None:
    assert mismatches(tm(transformer), word, "float64", 10_000) == []


@pytest.mark.parametrize("transformer", ["vanilla", "directional"])
def test_tm_sim_halts_at_the_exact_step_in_float64(transformer: str) -> None:
    net = tm(transformer)
    out = run_seq2seq(net, "(())")
    assert out.halted_at == run(net, "(())").halted_at
    assert out.halted_at is not None and out.steps == out.halted_at + 1
    assert out.unresolved_ties == 0


@pytest.mark.parametrize("cross_mask", ["none", "causal"])
def test_float64_matches_the_exact_probe_with_causal_self_attention_and_masked_cross_attention(
    cross_mask: str, seq2seq_probe: Callable[..., Seq2Seq]
) -> None:
    net = seq2seq_probe(cross_mask=cross_mask, halt_at=6, keep=("c", "mean", "seen"))
    assert mismatches(net, ("b", "a", "a"), "float64", 20) == []
    out = run_seq2seq(net, ("b", "a", "a"))
    assert out.halted_at == 6
    # step 0 reads every encoder token (none: (3+1+1)/3) or only token 0 (causal: 3)
    assert out.value(1, "seen") == {"none": 5 / 3, "causal": 3.0}[cross_mask]
    # F keeps mean, the residual adds each step's average of c over steps 0..t: 0, 1/2, 1
    assert [out.value(t, "mean") for t in range(1, 4)] == [0.0, 0.5, 1.5]


def test_a_run_that_does_not_halt_stops_after_max_steps() -> None:
    out = run_seq2seq(tm("vanilla"), "(())", max_steps=3)
    assert out.halted_at is None
    assert out.steps == 4


def test_the_directional_coordinate_2_to_the_minus_t_sticks_at_float32s_smallest_subnormal() -> (
    None
):
    net = tm("directional")
    word = "(" * 148  # n = 150 tokens with # and $: the machine is still reading at t = 152
    f32 = run_seq2seq(net, word, dtype="float32", max_steps=152)
    f64 = run_seq2seq(net, word, dtype="float64", max_steps=152)
    assert [f32.value(t, "x") for t in (148, 149)] == [2.0**-148, 2.0**-149]
    # x ← x − 2σ(x/2) + σ(x/2): x/2 = 2^{−150} rounds to 0, so x stays 2^{−149}
    assert [f32.value(t, "x") for t in (150, 151, 152)] == [2.0**-149] * 3
    assert [f64.value(t, "x") for t in (150, 151, 152)] == [2.0**-150, 2.0**-151, 2.0**-152]
    assert float(run(net, word, max_steps=152).value(150, "x")) == 2.0**-150


def test_in_float32_the_underflow_makes_the_directional_decoder_average_every_position_from_t_equal_n() -> (
    None
):
    # A stateless σ-RNN (h = σ(x), no stack encoding that float32 could lose first): exactly,
    # from t = n on the decoder reads $ (f_b($) = 0) and h = 0; in float32 2^{-(t+1)} no longer
    # separates the scores, the attention averages all n positions, and h gets 74/150 of an a.
    rnn = SigmaRNN(
        alphabet=("a", "b"),
        W_h=((Fraction(0), Fraction(0)), (Fraction(0), Fraction(0))),
        W_x=((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))),
        b=(Fraction(0), Fraction(0)),
        h0=(Fraction(0), Fraction(0)),
        readout=(Fraction(1), Fraction(0)),
    )
    net = directional_transformer(rnn, halt={"h1": Fraction(0), "h2": Fraction(0)})  # never halts
    word = "ab" * 74
    exact = run(net, word, max_steps=152)
    assert exact.n == 150
    h = ("h1:h1", "h1:h2")

    def wrong(dtype: str) -> list[tuple[int, str, float]]:
        out = run_seq2seq(net, word, dtype=dtype, max_steps=152)
        return [
            (t, d, out.value(t, d))
            for t in range(out.steps)
            for d in h
            if abs(out.value(t, d) - float(exact.value(t, d))) > 1e-3
        ]

    assert wrong("float64") == []
    first = wrong("float32")[:2]
    assert [(t, d) for t, d, _v in first] == [(150, "h1:h1"), (150, "h1:h2")]
    assert [v for _t, _d, v in first] == [torch.tensor(74 / 150, dtype=torch.float32).item()] * 2
    assert [exact.value(150, d) for d in h] == [0, 0]


def test_run_seq2seq_refuses_a_network_that_is_not_an_encoder_decoder() -> None:
    from netproof.constructions.chiang2022 import parity_transformer

    with pytest.raises(
        TorchBackendError,
        match=r"run_seq2seq runs an encoder–decoder \(Seq2Seq\), got Network 'parity.*run_batch",
    ):
        run_seq2seq(parity_transformer(), "01")  # type: ignore[arg-type]


def test_run_seq2seq_refuses_a_negative_step_budget() -> None:
    with pytest.raises(WordError, match=r"max_steps=-1 must be an int >= 0"):
        run_seq2seq(tm("vanilla"), "()", max_steps=-1)
