"""Relative-position heads (Chang et al. 2021) and the convolution block, by hand, through every
interpreter (``run_all``: exact, then sympy equal and intervals enclosing), plus the consumers
that refuse them (batched evaluator, torch state_dict export) and the prefix evaluation."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
import sympy

from netproof.symbolic import (
    AttentionLayer,
    Convolution,
    Hardmax,
    Head,
    Network,
    NetworkValidationError,
    NotRationalError,
    RelativeBias,
    RelativeKernel,
    Scale,
    Softmax,
    Sublayer,
    WordError,
    affine,
    classifier,
    constant,
    exact,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.batched import NotBatchableError, supports
from netproof.symbolic.evaluation import Trace
from netproof.symbolic.torch_export import StateDictError, layout

F = Fraction


def fr(*xs: int | str) -> tuple[Fraction, ...]:
    return tuple(F(x) for x in xs)


def position_network(*blocks: Any, readout_dim: str = "y") -> Network:
    """Tokens a (x = 1) and b (x = 2); dims x, y, z, u; every head reads x."""
    return Network(
        name="t",
        dims=("x", "y", "z", "u"),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": 2}}),
        layers=tuple(Sublayer(block=b) for b in blocks),
        readout=classifier(readout_dim),
    )


def head(**fields: Any) -> Head:
    """q = 1 (one q/k name), k = 0: every content score is 0, so the weights come from the
    relative terms alone; v = x."""
    base: dict[str, Any] = {
        "name": "h",
        "query": constant({"q": 1}),
        "key": affine({"q": {"x": 0}}),
        "value": affine({"y": {"x": 1}}),
        "normalizer": Softmax(r=F(2)),
    }
    base.update(fields)
    return Head(**base)


def attention(*heads: Head) -> AttentionLayer:
    return AttentionLayer(name="att", heads=heads)


def column(trace: Trace[Fraction], label: str, dim: str) -> list[Fraction]:
    return [trace.value(label, t, dim) for t in range(len(trace.tokens))]


def weights_at(trace: Trace[Fraction], i: int) -> tuple[Fraction, ...]:
    return next(s.weights for s in trace.selections if s.position == i)


# --------------------------------------------------------------------------- relative bias


def test_a_relative_bias_weighs_key_j_by_base_to_the_bias_of_j_minus_i(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    # β_{−1}, β_0, β_1 = 1, 0, 2 and zero beyond ±1; base 2. At i = 0 the offsets are 0, 1, 2.
    net = position_network(attention(head(relative_bias=RelativeBias(beta=fr(1, 0, 2)))))
    trace = run_all(net, "aba")
    assert weights_at(trace, 0) == (F(1, 6), F(4, 6), F(1, 6))  # 2^0, 2^2, 2^0 (offset 2: zero)
    assert weights_at(trace, 1) == (F(2, 7), F(1, 7), F(4, 7))
    assert column(trace, "att", "y")[0] == F(1, 6) + F(8, 6) + F(1, 6)


def test_a_clipped_relative_bias_gives_far_offsets_the_bias_at_plus_or_minus_k(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = position_network(
        attention(head(relative_bias=RelativeBias(beta=fr(1, 0, 2), outside="clip")))
    )
    trace = run_all(net, "aba")
    assert weights_at(trace, 0) == (F(1, 9), F(4, 9), F(4, 9))  # offset 2 clips to +1
    assert weights_at(trace, 2) == (F(2, 5), F(2, 5), F(1, 5))  # offset −2 clips to −1


def test_the_bias_is_added_after_the_scale(run_all: Callable[..., Trace[Fraction]]) -> None:
    # Content score q·k = x_j (k = x), scale 2: logits 2·x_j + β_{j−i}. At i = 0 on "ab":
    # j = 0: 2·1 + 0 = 2; j = 1: 2·2 + 1 = 5.
    h = head(
        key=affine({"q": {"x": 1}}),
        scale=Scale(coef=F(2)),
        relative_bias=RelativeBias(beta=fr(0, 0, 1)),
    )
    trace = run_all(position_network(attention(h)), "ab")
    assert weights_at(trace, 0) == (F(4, 36), F(32, 36))


def test_a_hardmax_head_with_a_relative_bias_selects_the_largest_scaled_score_plus_bias(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    # Logits at i = 1 on "bab": j = 0: 2·2 + 0 = 4 (β_{−1} = 0); j = 1: 2·1 + 3 = 5; j = 2: 2·2 + 0 = 4.
    h = head(
        key=affine({"q": {"x": 1}}),
        normalizer=Hardmax(),
        scale=Scale(coef=F(2)),
        relative_bias=RelativeBias(beta=fr(0, 3, 0)),
    )
    trace = run_all(position_network(attention(h)), "bab")
    assert next(s.selected for s in trace.selections if s.position == 1) == (1,)
    assert column(trace, "att", "y") == [F(2), F(1), F(2)]


def test_hardmax_with_a_relative_bias_and_an_irrational_scale_is_refused() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"hardmax with a relative bias compares scale·score \+ β"
    ):
        head(normalizer=Hardmax(), scale=Scale(sqrt_d=2), relative_bias=RelativeBias(beta=fr(0)))


def test_a_relative_bias_with_ln_n_scaling_is_refused_by_exact_and_computed_by_sympy() -> None:
    h = head(
        normalizer=Softmax(c=F(1)),
        scale=Scale(log_n=True),
        relative_bias=RelativeBias(beta=fr(0, 0, 1)),
    )
    net = position_network(attention(h))
    with pytest.raises(NotRationalError, match=r"ln n scaling and a relative bias .* not rational"):
        exact.run(net, "ab")
    trace = sympy_interp.run(net, "ab")
    # scores are 0: weights ∝ e^{β}: at i = 0, (1, e)/(1 + e)
    assert sympy.simplify(trace.selections[0].weights[1] - sympy.E / (1 + sympy.E)) == 0


# --------------------------------------------------------------------------- dynamic kernels


def test_a_query_kernel_adds_the_query_times_the_kernel_column_of_j_minus_i(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    # q = 1, W^C = (w_{−1}, w_0, w_1) = (−1, 0, 2): at i = 1 on "aba" the logits are −1, 0, 2.
    h = head(query_conv=RelativeKernel(columns=((F(-1),), (F(0),), (F(2),))))
    trace = run_all(position_network(attention(h)), "aba")
    assert weights_at(trace, 1) == (F(1, 2) / F(11, 2), F(1) / F(11, 2), F(4) / F(11, 2))


def test_a_query_kernel_is_zero_beyond_k_unless_it_clips_as_shaw_does(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    zero = head(query_conv=RelativeKernel(columns=((F(-1),), (F(0),), (F(2),))))
    clip = head(query_conv=RelativeKernel(columns=((F(-1),), (F(0),), (F(2),)), outside="clip"))
    w_zero = weights_at(run_all(position_network(attention(zero)), "aba"), 0)  # logits 0, 2, 0
    w_clip = weights_at(run_all(position_network(attention(clip)), "aba"), 0)  # logits 0, 2, 2
    assert w_zero == (F(1, 6), F(4, 6), F(1, 6))
    assert w_clip == (F(1, 9), F(4, 9), F(4, 9))


def test_a_key_kernel_multiplies_the_kernel_column_by_the_key_of_j(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    # k_j = x_j, q = 0 (no content score): logits ⟨k_j, W_{j−i}⟩ = x_j·w_{j−i}, w = (1, 0, 1).
    h = head(
        query=constant({"q": 0}),
        key=affine({"q": {"x": 1}}),
        key_conv=RelativeKernel(columns=((F(1),), (F(0),), (F(1),))),
    )
    trace = run_all(position_network(attention(h)), "ab")
    assert weights_at(trace, 0) == (F(1, 5), F(4, 5))  # logits 0, 2·1
    assert weights_at(trace, 1) == (F(2, 3), F(1, 3))  # logits 1·1, 0


def test_composite_attention_is_the_query_kernel_plus_the_bias(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    kernel = RelativeKernel(columns=((F(-1),), (F(0),), (F(2),)))
    bias = RelativeBias(beta=fr(1, 0, -1))
    trace = run_all(position_network(attention(head(query_conv=kernel, relative_bias=bias))), "aba")
    assert weights_at(trace, 1) == (F(1, 4), F(1, 4), F(2, 4))  # logits −1+1, 0, 2−1


def test_relative_terms_need_the_dot_scoring_and_kernel_columns_of_the_q_k_width() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"relative-position terms add to the dot-product score"
    ):
        head(scoring="neg_abs_dot", relative_bias=RelativeBias(beta=fr(0)))
    with pytest.raises(
        NetworkValidationError, match=r"column for offset -1 has 2 entries but the q/k space has 1"
    ):
        head(query_conv=RelativeKernel(columns=(fr(1, 1), fr(0, 0), fr(1, 1))))
    with pytest.raises(NetworkValidationError, match=r"2k\+1 \(an odd number\) entries"):
        RelativeBias(beta=fr(1, 2))


def test_a_head_without_relative_fields_prints_as_before_and_keeps_its_fingerprint() -> None:
    from netproof.constructions.chiang2022 import parity_transformer
    from netproof.symbolic import fingerprint, pretty

    text = pretty(parity_transformer())
    assert "bias β" not in text and "query_conv" not in text and "convolution" not in text
    # The fingerprint of the PARITY transformer at c = ln 2, recorded before relative fields existed
    # (proofs/parity/*.json of the committed records).
    assert fingerprint(parity_transformer()) == PARITY_FINGERPRINT


PARITY_FINGERPRINT = "fc829c0a450b6cb6ce963d487543a168cf3829682e07b1b3febd56480da121f0"


def test_relative_fields_print_their_window_and_rule() -> None:
    from netproof.symbolic import pretty

    h = head(
        relative_bias=RelativeBias(beta=fr(1, 0, "-1/2"), outside="clip"),
        query_conv=RelativeKernel(columns=((F(1),), (F(0),), (F(2),))),
    )
    text = pretty(position_network(attention(h)))
    assert "      bias β[j−i]: -1:1 0:0 1:-1/2 (outside ±1: clip)\n" in text
    assert "      query_conv W[j−i]: -1:[q=1] 0:[0] 1:[q=2] (outside ±1: zero)\n" in text


# --------------------------------------------------------------------------- convolution block


def test_a_lightweight_convolution_sums_the_kernel_over_the_window_with_zero_padding(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    conv = Convolution(name="conv", inputs=("x",), outputs=("z",), kernels=(fr(1, 10, 100),))
    trace = run_all(position_network(conv, readout_dim="z"), "aba")  # x = 1, 2, 1
    assert column(trace, "conv", "z") == [F(10 + 200), F(1 + 20 + 100), F(2 + 10)]


def test_a_softmax_normalized_kernel_is_wu_et_al_lightweight_convolution(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    conv = Convolution(
        name="conv",
        inputs=("x",),
        outputs=("z",),
        kernels=(fr(0, 1, 2),),
        normalizer=Softmax(r=F(2)),
    )
    trace = run_all(position_network(conv, readout_dim="z"), "ab")  # weights 1/7, 2/7, 4/7
    assert column(trace, "conv", "z") == [F(2, 7) * 1 + F(4, 7) * 2, F(1, 7) * 1 + F(2, 7) * 2]


def test_a_depthwise_convolution_has_one_kernel_per_channel(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    conv = Convolution(
        name="conv", inputs=("x", "x2"), outputs=("z", "u"), kernels=(fr(1, 0, 0), fr(0, 0, 1))
    )
    net = Network(
        name="t",
        dims=("x", "x2", "z", "u"),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1, "x2": 3}, "b": {"x": 2, "x2": 5}}),
        layers=(Sublayer(block=conv),),
        readout=classifier("z"),
    )
    trace = run_all(net, "ab")
    assert column(trace, "conv", "z") == [F(0), F(1)]  # x_{i−1}
    assert column(trace, "conv", "u") == [F(5), F(0)]  # x2_{i+1}


def test_a_convolution_refuses_mismatched_channels_and_kernels() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"has 2 kernel rows; give 1 \(shared: lightweight\) or 3"
    ):
        Convolution(
            name="c", inputs=("a", "b", "d"), outputs=("e", "f", "g"), kernels=(fr(1), fr(1))
        )
    with pytest.raises(
        NetworkValidationError, match=r"maps each input channel to one output channel"
    ):
        Convolution(name="c", inputs=("a",), outputs=("e", "f"), kernels=(fr(1),))


def test_a_convolution_cannot_run_on_a_prefix_of_a_declared_length() -> None:
    conv = Convolution(name="conv", inputs=("x",), outputs=("z",), kernels=(fr(1, 1, 1),))
    with pytest.raises(WordError, match=r"convolution 'conv' reads positions up to i \+ k"):
        exact.run(position_network(conv, readout_dim="z"), "ab", length=4)


def test_a_convolution_after_the_last_attention_keeps_every_position_live() -> None:
    # The readout reads position 0, whose z mixes position 1: it must be computed from real values.
    conv = Convolution(name="conv", inputs=("x",), outputs=("z",), kernels=(fr(0, 0, 1),))
    trace = exact.run(position_network(attention(head()), conv, readout_dim="z"), "ab")
    assert trace.output == F(2)


# --------------------------------------------------------------------------- consumers that refuse


def test_the_batched_evaluator_and_the_torch_layout_refuse_relative_fields_by_name() -> None:
    net = position_network(
        attention(head(normalizer=Hardmax(), relative_bias=RelativeBias(beta=fr(0, 1, 0))))
    )
    assert (
        supports(net)
        == "attention 'att' head 'h' has relative-position terms (Chang et al.); they are not batched"
    )
    with pytest.raises(
        StateDictError, match=r"head 'h'\) has relative_bias; the state_dict layout has no"
    ):
        layout(net)
    conv = Convolution(name="conv", inputs=("x",), outputs=("z",), kernels=(fr(1),))
    net2 = position_network(conv, readout_dim="z")
    assert supports(net2) == "convolution 'conv'; convolution blocks are not batched"
    with pytest.raises(
        StateDictError, match=r"is convolution 'conv'; the state_dict layout has no convolution"
    ):
        layout(net2)
    from netproof.symbolic.batched import Evaluator

    with pytest.raises(NotBatchableError, match=r"convolution blocks are not batched"):
        Evaluator(net2)


# --------------------------------------------------------------------------- random heads against a reference


@pytest.mark.parametrize("seed", range(12))
def test_random_relative_heads_agree_with_the_written_out_formula_in_every_interpreter(
    run_all: Callable[..., Trace[Fraction]], random_relative_head: Callable[..., Any], seed: int
) -> None:
    case = random_relative_head(seed)
    for word in case.words:
        te = run_all(case.network, word)
        assert column(te, "att", "y") == case.reference(word), (seed, word)


@pytest.mark.parametrize("seed", range(12))
def test_random_relative_hardmax_heads_average_the_maximal_scaled_score_plus_bias_in_every_interpreter(
    run_all: Callable[..., Trace[Fraction]], random_relative_head: Callable[..., Any], seed: int
) -> None:
    case = random_relative_head(seed, hardmax=True)
    for word in case.words:
        te = run_all(case.network, word)
        assert column(te, "att", "y") == case.reference(word), (seed, word)
