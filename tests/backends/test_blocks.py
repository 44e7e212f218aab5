"""One tiny instance of every block kind and field value, run through every interpreter.

Each test asserts the exact (Fraction) value by hand; the ``run_all`` fixture (conftest.py) also
checks that sympy gives the same rational and that the interval result encloses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest
import sympy

from netproof.symbolic import (
    Activation,
    AttentionLayer,
    FlatEmbedding,
    Hardmax,
    Head,
    Network,
    NextSymbols,
    NotRationalError,
    Scale,
    Softmax,
    Sublayer,
    SymbolicError,
    WordError,
    affine,
    classifier,
    constant,
    exact,
    ffn,
    interval,
    layernorm,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.evaluation import Trace, UndefinedValueError
from netproof.symbolic.ir import ACTIVATIONS, MASKS, SCORINGS, TIE_RULES

F = Fraction
RUNNERS: list[Callable[..., Trace[Any]]] = [exact.run, sympy_interp.run, interval.run]
RUNNER_IDS = ["exact", "sympy", "interval"]

# Five one-symbol "words" whose token sets x to -1, 0, 1/2, 1, 2.
VALUES = {"m": F(-1), "z": F(0), "h": F(1, 2), "o": F(1), "t": F(2)}
VALUE_WORD = "mzhot"


def network(
    *layers: Sublayer,
    dims: Sequence[str],
    table: Mapping[str, Mapping[str, int | str | Fraction]],
    readout: Any = None,
    positional: Mapping[str, Any] | None = None,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    index_base: int = 0,
) -> Network:
    alphabet = tuple(s for s in table if s not in (*prefix, *suffix))
    return Network(
        name="t",
        dims=tuple(dims),
        embedding=token_embedding(
            alphabet,
            table,
            positional=positional,
            prefix=prefix,
            suffix=suffix,
            index_base=index_base,
        ),
        layers=layers,
        readout=readout if readout is not None else classifier(dims[-1]),
    )


def column(trace: Trace[Fraction], label: str, dim: str) -> list[Fraction]:
    return [trace.value(label, t, dim) for t in range(len(trace.tokens))]


def single_head(head: Head, **kwargs: Any) -> Sublayer:
    return Sublayer(block=AttentionLayer(name="att", heads=(head,)), **kwargs)


def copy_head(
    *,
    key: Any,
    value: Any,
    normalizer: Hardmax | Softmax | None = None,
    query: Any = None,
    name: str = "h",
    **kwargs: Any,
) -> Head:
    return Head(
        name=name,
        query=query if query is not None else constant({"q": 1}),
        key=key,
        value=value,
        normalizer=normalizer if normalizer is not None else Hardmax(),
        **kwargs,
    )


# --------------------------------------------------------------------------- embeddings


def test_an_embedding_adds_the_token_row_and_the_positional_features(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        dims=("e", "p", "y"),
        table={"a": {"e": 1}, "BOS": {"e": 5, "p": 1}, "EOS": {"e": -5}},
        positional={"p": ("1/i", 3), "y": "I[i=1]"},
        prefix=("BOS",),
        suffix=("EOS",),
        index_base=1,
    )
    trace = run_all(net, "aa")
    assert trace.tokens == ("BOS", "a", "a", "EOS")
    assert trace.positions == (1, 2, 3, 4)
    assert trace.word == ("a", "a")
    assert trace.n == 4
    assert trace.state("input").rows == (
        (F(5), F(1) + F(3), F(1)),
        (F(1), F(3, 2), F(0)),
        (F(1), F(1), F(0)),
        (F(-5), F(3, 4), F(0)),
    )


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
def test_one_over_i_at_position_zero_stops_every_interpreter(
    run: Callable[..., Trace[Any]],
) -> None:
    net = network(dims=("p", "y"), table={"a": {}}, positional={"p": "1/i"})
    with pytest.raises(SymbolicError, match=r"positional feature '1/i' is undefined at i=0"):
        run(net, "a")


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
def test_a_symbol_outside_the_alphabet_stops_every_interpreter(
    run: Callable[..., Trace[Any]],
) -> None:
    net = network(dims=("x", "y"), table={"a": {"x": 1}})
    with pytest.raises(WordError, match=r"symbol 'b' at position 2 is not in the alphabet \{a\}"):
        run(net, "ab")


def flat_network() -> Network:
    return Network(
        name="flat",
        dims=("x1", "x2", "y"),
        embedding=FlatEmbedding(alphabet=("0", "1"), length=2, values=(("0", F(0)), ("1", F(1)))),
        layers=(Sublayer(block=ffn("diff", affine({"y": {"x1": 1, "x2": -1}}))),),
        readout=classifier("y"),
    )


@pytest.mark.parametrize(
    ("word", "row", "accepted"),
    [("10", (1, 0, 1), True), ("01", (0, 1, -1), False), ("11", (1, 1, 0), False)],
)
def test_a_flat_embedding_puts_the_whole_word_in_one_vector(
    run_all: Callable[..., Trace[Fraction]], word: str, row: tuple[int, ...], accepted: bool
) -> None:
    trace = run_all(flat_network(), word)
    assert trace.positions == (0,)
    assert trace.final.rows == (tuple(F(v) for v in row),)
    assert trace.output == F(row[2])
    assert trace.accepted is accepted


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
def test_a_flat_embedding_refuses_a_word_of_the_wrong_length(
    run: Callable[..., Trace[Any]],
) -> None:
    with pytest.raises(
        WordError,
        match=r"this network reads words of length exactly 2, got 3 symbols; build it with n=3",
    ):
        run(flat_network(), "101")


# --------------------------------------------------------------------------- FFN steps


def test_an_affine_step_computes_the_weighted_sum_plus_bias(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=ffn("lin", affine({"y": {"x": 2, "p": -3}}, bias={"y": "1/2"}))),
        dims=("x", "p", "y"),
        table={"h": {"x": "1/2"}, "o": {"x": 1}},
        positional={"p": "i"},
    )
    trace = run_all(net, "ho")
    # y = 2x − 3p + 1/2 at (x, p) = (1/2, 0) and (1, 1)
    assert column(trace, "lin", "y") == [F(3, 2), F(-1, 2)]
    assert column(trace, "lin", "x") == [F(1, 2), F(1)]


ACTIVATION_VALUES = {
    # at x = -1, 0, 1/2, 1, 2
    "relu": [F(0), F(0), F(1, 2), F(1), F(2)],
    "sigma": [F(0), F(0), F(1, 2), F(1), F(1)],
    "step": [F(0), F(0), F(1), F(1), F(1)],
}


def test_the_activation_cases_cover_every_activation_kind() -> None:
    assert set(ACTIVATION_VALUES) | {"gelu"} == set(
        ACTIVATIONS
    )  # gelu is irrational: tests/backends/test_gelu.py


@pytest.mark.parametrize("kind", sorted(ACTIVATION_VALUES))
def test_each_activation_has_its_exact_value_at_minus_one_zero_half_one_and_two(
    run_all: Callable[..., Trace[Fraction]],
    interval_endpoints: Callable[[Any], tuple[Fraction, Fraction]],
    kind: str,
) -> None:
    net = network(
        Sublayer(
            block=ffn(
                "act", affine({"u": {"x": 1}}), Activation(kind=kind), affine({"y": {"u": 1}})
            )
        ),  # type: ignore[arg-type]
        dims=("x", "y"),
        table={s: {"x": v} for s, v in VALUES.items()},
    )
    trace = run_all(net, VALUE_WORD)
    assert column(trace, "act", "y") == ACTIVATION_VALUES[kind]
    # the inputs are binary fractions, so the interval interpreter is exact too: point intervals
    interval_trace = interval.run(net, VALUE_WORD)
    points = [
        interval_endpoints(interval_trace.value("act", t, "y")) for t in range(len(VALUE_WORD))
    ]
    assert points == [(v, v) for v in ACTIVATION_VALUES[kind]]


def test_an_empty_ffn_does_nothing(run_all: Callable[..., Trace[Fraction]]) -> None:
    net = network(Sublayer(block=ffn("nothing")), dims=("x", "y"), table={"a": {"x": 3, "y": -1}})
    trace = run_all(net, "aa")
    assert (
        trace.state("nothing").rows == trace.state("input").rows == ((F(3), F(-1)), (F(3), F(-1)))
    )


# --------------------------------------------------------------------------- layer norm


def test_a_post_residual_layer_norm_with_eps_zero_normalizes_exactly(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm(0)),
        dims=("u", "v"),
        table={"a": {"u": 1, "v": -1}, "b": {"u": 3, "v": -1}},
    )
    trace = run_all(net, "ab")
    # [1, -1] has mean 0 and variance 1; [3, -1] has mean 1 and variance 4: both become [1, -1]
    assert trace.state("att").rows == ((F(1), F(-1)), (F(1), F(-1)))


def test_a_layer_norm_with_positive_eps_is_exact_when_the_root_is_rational(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm("9/16")),
        dims=("u", "v"),
        table={"a": {"u": 1, "v": -1}},
    )
    # (x − 0)/√(1 + 9/16) = x/(5/4)
    assert run_all(net, "a").state("att").rows == ((F(4, 5), F(-4, 5)),)


def test_a_post_residual_layer_norm_over_a_sub_vector_leaves_the_other_dims_alone(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm(0, over=("u", "v"))),
        dims=("u", "v", "w"),
        table={"a": {"u": 5, "v": 1, "w": 7}},
    )
    assert run_all(net, "a").state("att").rows == ((F(1), F(-1), F(7)),)


def norm_ffn_network() -> Network:
    block = ffn(
        "norm",
        affine({"h1": {"x": 1}, "h2": {"x": -1}, "h3": {}}, inputs=("x",), bias={"h3": 7}),
        layernorm(0, over=("h1", "h2")),
        affine({"y": {"h1": 1}, "z": {"h3": 1}}),
    )
    return network(
        Sublayer(block=block), dims=("x", "y", "z"), table={s: {"x": v} for s, v in VALUES.items()}
    )


def test_a_layer_norm_inside_an_ffn_normalizes_only_its_sub_vector(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    trace = run_all(norm_ffn_network(), "tm")
    # [x, −x] normalizes to [sign x, −sign x]; h3 = 7 passes through
    assert column(trace, "norm", "y") == [F(1), F(-1)]
    assert column(trace, "norm", "z") == [F(7), F(7)]


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
def test_a_layer_norm_of_a_constant_vector_with_eps_zero_is_undefined(
    run: Callable[..., Trace[Any]],
) -> None:
    with pytest.raises(
        UndefinedValueError,
        match=r"ffn 'norm' step \[1\] at position 0: layer norm of a constant vector with eps=0 is 0/0 \(dims h1, h2\)",
    ):
        run(norm_ffn_network(), "z")


def test_an_irrational_layer_norm_is_refused_by_exact_and_computed_by_sympy_and_interval(
    interval_endpoints: Callable[[Any], tuple[Fraction, Fraction]],
) -> None:
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm(1)),
        dims=("u", "v"),
        table={"a": {"u": 1, "v": -1}},
    )
    with pytest.raises(
        NotRationalError,
        match=r"layer norm needs √\(2\), which is not rational; use the sympy interpreter",
    ):
        exact.run(net, "a")
    assert sympy_interp.run(net, "a").value("att", 0, "u") == 1 / sympy.sqrt(2)
    lo, hi = interval_endpoints(interval.run(net, "a").value("att", 0, "u"))
    assert lo > 0 and lo * lo <= F(1, 2) <= hi * hi  # lo ≤ 1/√2 ≤ hi


# --------------------------------------------------------------------------- hardmax attention


TIE_CASES = {
    # rule: (value read, selected tokens, weights)
    "average": (F(1), (0, 2), (F(1, 2), F(0), F(1, 2))),
    "leftmost": (F(0), (0,), (F(1), F(0), F(0))),
    "rightmost": (F(2), (2,), (F(0), F(0), F(1))),
}


def test_the_tie_cases_cover_every_tie_rule() -> None:
    assert set(TIE_CASES) == set(TIE_RULES)


@pytest.mark.parametrize("tie", sorted(TIE_CASES))
def test_hardmax_splits_a_tie_by_its_rule(
    run_all: Callable[..., Trace[Fraction]], tie: str
) -> None:
    head = copy_head(
        key=affine({"q": {"k": 1}}), value=affine({"y": {"p": 1}}), normalizer=Hardmax(tie=tie)
    )  # type: ignore[arg-type]
    net = network(
        single_head(head),
        dims=("k", "p", "y"),
        table={"a": {"k": 1}, "b": {"k": 0}},
        positional={"p": "i"},
    )
    trace = run_all(net, "aba")  # scores 1, 0, 1: tokens 0 and 2 tie
    value, selected, weights = TIE_CASES[tie]
    assert column(trace, "att", "y") == [value] * 3
    assert [(s.layer, s.head, s.position) for s in trace.selections] == [
        ("att", "h", i) for i in range(3)
    ]
    assert all(s.selected == selected and s.weights == weights for s in trace.selections)


MASK_CASES = {
    # mask: (allowed tokens at query 0..3 of a 4-token word, mean position read at each query)
    "none": ([(0, 1, 2, 3)] * 4, [F(3, 2)] * 4),
    "causal": ([(0,), (0, 1), (0, 1, 2), (0, 1, 2, 3)], [F(0), F(1, 2), F(1), F(3, 2)]),
    "strict_causal": ([(), (0,), (0, 1), (0, 1, 2)], [F(0), F(0), F(1, 2), F(1)]),
    "anticausal": ([(0, 1, 2, 3), (1, 2, 3), (2, 3), (3,)], [F(3, 2), F(2), F(5, 2), F(3)]),
    "strict_anticausal": ([(1, 2, 3), (2, 3), (3,), ()], [F(2), F(5, 2), F(3), F(0)]),
}


def test_the_mask_cases_cover_every_mask() -> None:
    assert set(MASK_CASES) == set(MASKS)


def mask_network(mask: str, empty: str = "zero") -> Network:
    # every score is 0, so hardmax averages the position i over exactly the allowed tokens
    head = copy_head(key=constant({"q": 0}), value=affine({"y": {"p": 1}}), mask=mask, empty=empty)
    return network(single_head(head), dims=("p", "y"), table={"a": {}}, positional={"p": "i"})


@pytest.mark.parametrize("mask", sorted(MASK_CASES))
def test_each_mask_allows_exactly_its_tokens_and_an_empty_set_gives_zero(
    run_all: Callable[..., Trace[Fraction]], mask: str
) -> None:
    trace = run_all(mask_network(mask), "aaaa")
    allowed, means = MASK_CASES[mask]
    assert [s.selected for s in trace.selections] == allowed
    for s, ok in zip(trace.selections, allowed, strict=True):
        assert s.weights == tuple(F(1, len(ok)) if t in ok else F(0) for t in range(4))
    assert column(trace, "att", "y") == means


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
@pytest.mark.parametrize(("mask", "position"), [("strict_causal", 0), ("strict_anticausal", 3)])
def test_an_empty_masked_set_is_an_error_when_the_head_says_so(
    run: Callable[..., Trace[Any]], mask: str, position: int
) -> None:
    with pytest.raises(
        UndefinedValueError,
        match=rf"attention 'att' head 'h': position {position} attends to an empty set under mask '{mask}' "
        r"and the head's empty rule is 'error'",
    ):
        run(mask_network(mask, empty="error"), "aaaa")


def test_masks_that_never_empty_run_under_the_error_rule(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    trace = run_all(mask_network("causal", empty="error"), "aaaa")
    assert column(trace, "att", "y") == MASK_CASES["causal"][1]


SCORING_CASES = {
    # keys -2, 1, 3, -1 against query 1: dot picks 3; −|dot| = -2, -1, -3, -1 ties tokens 1 and 3
    "dot": ((2,), F(3)),
    "neg_abs_dot": ((1, 3), F(0)),
}


def test_the_scoring_cases_cover_every_scoring() -> None:
    assert set(SCORING_CASES) == set(SCORINGS)


@pytest.mark.parametrize("scoring", sorted(SCORING_CASES))
def test_each_scoring_picks_its_argmax(
    run_all: Callable[..., Trace[Fraction]], scoring: str
) -> None:
    head = copy_head(key=affine({"q": {"k": 1}}), value=affine({"y": {"k": 1}}), scoring=scoring)
    net = network(
        single_head(head),
        dims=("k", "y"),
        table={"a": {"k": -2}, "b": {"k": 1}, "c": {"k": 3}, "d": {"k": -1}},
    )
    trace = run_all(net, "abcd")
    selected, value = SCORING_CASES[scoring]
    assert all(s.selected == selected for s in trace.selections)
    assert column(trace, "att", "y") == [value] * 4


# --------------------------------------------------------------------------- softmax attention


SOFTMAX_TABLE = {"a": {"k": 0}, "b": {"k": 1}, "c": {"k": 3}}


def softmax_network(
    normalizer: Softmax, scale: Scale | None = None, table: Mapping[str, Any] = SOFTMAX_TABLE
) -> Network:
    head = copy_head(
        key=affine({"q": {"k": 1}}),
        value=affine({"y": {"p": 1}}),
        normalizer=normalizer,
        scale=scale or Scale(),
    )
    return network(single_head(head), dims=("k", "p", "y"), table=table, positional={"p": "i"})


@pytest.mark.parametrize(
    ("normalizer", "scale", "weights"),
    [
        # scores 0, 1, 3: weights r^(coef·s) / Σ
        (Softmax(r=F(2)), Scale(), (F(1, 11), F(2, 11), F(8, 11))),
        (Softmax(r=F(2)), Scale(coef=F(2)), (F(1, 69), F(4, 69), F(64, 69))),
        (Softmax(r=F(2)), Scale(coef=F(-1)), (F(8, 13), F(4, 13), F(1, 13))),
        (Softmax(r=F(1, 2)), Scale(), (F(8, 13), F(4, 13), F(1, 13))),
        (Softmax(r=F(3, 2)), Scale(), (F(8, 47), F(12, 47), F(27, 47))),
    ],
    ids=["r=2", "r=2,coef=2", "r=2,coef=-1", "r=1/2", "r=3/2"],
)
def test_softmax_with_a_rational_base_and_integer_scores_has_exact_weights(
    run_all: Callable[..., Trace[Fraction]],
    normalizer: Softmax,
    scale: Scale,
    weights: tuple[Fraction, ...],
) -> None:
    trace = run_all(softmax_network(normalizer, scale), "abc")
    assert all(s.weights == weights and s.selected is None for s in trace.selections)
    assert column(trace, "att", "y") == [weights[1] + 2 * weights[2]] * 3


def test_softmax_with_ln_n_scaling_and_c_one_has_weights_n_to_the_score(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    trace = run_all(
        softmax_network(Softmax(c=F(1)), Scale(log_n=True)), "aab"
    )  # n = 3, scores 0, 0, 1
    assert all(s.weights == (F(1, 5), F(1, 5), F(3, 5)) for s in trace.selections)
    assert column(trace, "att", "y") == [F(7, 5)] * 3


def _e_bounds() -> tuple[Fraction, Fraction]:
    """Rational bounds on e from its series: Σ_{k≤80} 1/k! < e < that + 2/81! (far tighter than 60 digits)."""
    total, term = F(0), F(1)
    for k in range(81):
        total += term
        term /= k + 1
    return total, total + 2 * term


@pytest.mark.parametrize("c", [1, 2])
def test_softmax_with_base_e_to_the_c_is_refused_by_exact_and_exact_in_sympy(
    interval_endpoints: Callable[[Any], tuple[Fraction, Fraction]], c: int
) -> None:
    net = softmax_network(Softmax(c=F(c)), table={"a": {"k": 0}, "b": {"k": 1}})
    with pytest.raises(
        NotRationalError, match=rf"softmax base e\^{c} is transcendental; .*sympy interpreter"
    ):
        exact.run(net, "ab")
    base = sympy.exp(c)  # scores 0 and 1: weights 1/(1 + e^c) and e^c/(1 + e^c)
    symbolic_trace = sympy_interp.run(net, "ab")
    assert all(s.weights == (1 / (1 + base), base / (1 + base)) for s in symbolic_trace.selections)
    assert symbolic_trace.value("att", 0, "y") == base / (1 + base)
    # B/(1+B) increases with B = e^c, so bounds on e bound the weight; the interval must contain it
    e_lo, e_hi = _e_bounds()
    b_lo, b_hi = e_lo**c, e_hi**c
    for s in interval.run(net, "ab").selections:
        lo, hi = interval_endpoints(s.weights[1])
        assert lo <= b_lo / (1 + b_lo) and b_hi / (1 + b_hi) <= hi


def test_softmax_with_a_rational_base_and_ln_n_scaling_is_refused_by_exact() -> None:
    with pytest.raises(
        NotRationalError,
        match=r"softmax base 2 with ln n scaling gives 2\^\(ln n·s\), which is not rational",
    ):
        exact.run(softmax_network(Softmax(r=F(2)), Scale(log_n=True)), "ab")


def test_a_softmax_weight_that_is_irrational_is_refused_by_exact() -> None:
    with pytest.raises(NotRationalError, match=r"softmax weight 2\^\(-1/2\) is not rational"):
        exact.run(softmax_network(Softmax(r=F(2)), Scale(coef=F(1, 2))), "ab")


SQRT_D_TABLE = {"a": {"k": 0}, "b": {"k": 2}, "c": {"k": 4}}


def test_softmax_with_a_square_root_scale_is_computed_by_sympy_and_interval(
    interval_endpoints: Callable[[Any], tuple[Fraction, Fraction]],
) -> None:
    # scores 0, 2, 4 scaled by 1/√4 = 1/2: weights 2^0, 2^1, 2^2 over 7
    net = softmax_network(Softmax(r=F(2)), Scale(sqrt_d=4), table=SQRT_D_TABLE)
    symbolic_trace = sympy_interp.run(net, "abc")
    weights = (sympy.Rational(1, 7), sympy.Rational(2, 7), sympy.Rational(4, 7))
    assert all(s.weights == weights for s in symbolic_trace.selections)
    assert symbolic_trace.value("att", 0, "y") == sympy.Rational(10, 7)
    lo, hi = interval_endpoints(interval.run(net, "abc").value("att", 0, "y"))
    assert lo <= F(10, 7) <= hi


def test_the_exact_interpreter_accepts_a_square_root_scale_that_is_rational() -> None:
    trace = exact.run(softmax_network(Softmax(r=F(2)), Scale(sqrt_d=4), table=SQRT_D_TABLE), "abc")
    assert all(s.weights == (F(1, 7), F(2, 7), F(4, 7)) for s in trace.selections)


# --------------------------------------------------------------------------- layers of heads


def test_parallel_heads_write_their_own_dims(run_all: Callable[..., Trace[Fraction]]) -> None:
    big = copy_head(name="big", key=affine({"q": {"k": 1}}), value=affine({"y": {"p": 1}}))
    small = copy_head(name="small", key=affine({"q": {"k": -1}}), value=affine({"z": {"p": 1}}))
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=(big, small))),
        dims=("k", "p", "y", "z"),
        table={"a": {"k": 1}, "b": {"k": 0}},
        positional={"p": "i"},
    )
    trace = run_all(net, "ba")  # k = 0, 1: "big" picks token 1, "small" picks token 0
    assert column(trace, "att", "y") == [F(1), F(1)]
    assert column(trace, "att", "z") == [F(0), F(0)]
    assert [(s.head, s.position, s.selected) for s in trace.selections] == [
        ("big", 0, (1,)),
        ("big", 1, (1,)),
        ("small", 0, (0,)),
        ("small", 1, (0,)),
    ]


def test_a_multi_head_layer_sums_head_outputs_through_its_output_map(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    big = copy_head(
        name="big", key=affine({"q": {"k": 1}}), value=affine({"s1": {"p": 1}}, bias={"s1": 1})
    )
    small = copy_head(
        name="small", key=affine({"q": {"k": -1}}), value=affine({"s2": {"p": 1}}, bias={"s2": 1})
    )
    layer = AttentionLayer(
        name="att", heads=(big, small), output=affine({"y": {"s1": 1, "s2": -2}}, bias={"y": 1})
    )
    net = network(
        Sublayer(block=layer),
        dims=("k", "p", "y"),
        table={"a": {"k": 1}, "b": {"k": 0}},
        positional={"p": "i"},
    )
    trace = run_all(net, "ab")
    # s1 = p + 1 at token 0 (k = 1) = 1; s2 = p + 1 at token 1 = 2; y = 1 − 4 + 1
    assert column(trace, "att", "y") == [F(-2), F(-2)]
    assert column(trace, "att", "k") == [F(1), F(0)]


def test_an_attention_layer_without_heads_does_nothing(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=AttentionLayer(name="att", heads=())),
        dims=("x", "y"),
        table={"a": {"x": 2, "y": 3}},
    )
    trace = run_all(net, "a")
    assert trace.state("att").rows == trace.state("input").rows == ((F(2), F(3)),)
    assert trace.selections == ()


# --------------------------------------------------------------------------- residual


def test_without_the_residual_connection_the_dims_a_block_does_not_write_become_zero(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=ffn("f", affine({"y": {"x": 1}}, bias={"y": 1})), residual=False),
        Sublayer(
            block=AttentionLayer(
                name="att",
                heads=(copy_head(key=constant({"q": 0}), value=affine({"x": {"y": 1}})),),
            ),
            residual=False,
        ),
        dims=("x", "p", "y"),
        table={"a": {"x": 2, "y": 5}, "b": {"x": 4, "y": 5}},
        positional={"p": "i"},
    )
    trace = run_all(net, "ab")
    assert trace.state("f").rows == ((F(0), F(0), F(3)), (F(0), F(0), F(5)))
    assert trace.state("att").rows == ((F(4), F(0), F(0)), (F(4), F(0), F(0)))


def test_with_the_residual_connection_a_block_adds_to_the_stream(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        Sublayer(block=ffn("f", affine({"y": {"x": 1}}, bias={"y": 1}))),
        dims=("x", "y"),
        table={"a": {"x": 2, "y": 5}},
    )
    assert run_all(net, "a").state("f").rows == ((F(2), F(8)),)


# --------------------------------------------------------------------------- readouts


@pytest.mark.parametrize(
    ("position", "word", "output", "accepted"),
    [
        (0, "ab", F(1), True),
        (-1, "ab", F(-1, 2), False),
        (0, "ba", F(-1, 2), False),
        (-1, "ba", F(1), True),
        (0, "c", F(0), False),
    ],
)
def test_a_classifier_reads_its_position_and_accepts_iff_the_logit_is_positive(
    run_all: Callable[..., Trace[Fraction]],
    position: int,
    word: str,
    output: Fraction,
    accepted: bool,
) -> None:
    net = network(
        dims=("x",),
        table={"a": {"x": 1}, "b": {"x": "-1/2"}, "c": {}},
        readout=classifier({"x": 1}, position=position),
    )
    trace = run_all(net, word)
    assert trace.output == output
    assert trace.accepted is accepted
    assert trace.next_symbols is None


@pytest.mark.parametrize("run", RUNNERS, ids=RUNNER_IDS)
def test_a_classifier_position_outside_the_tokens_is_a_word_error(
    run: Callable[..., Trace[Any]],
) -> None:
    net = network(dims=("x",), table={"a": {"x": 1}})
    with pytest.raises(WordError, match=r"readout position 0 is outside the 0 tokens"):
        run(net, "")


def test_next_symbols_allows_a_symbol_iff_its_score_reaches_the_threshold(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    net = network(
        dims=("x", "y"),
        table={"a": {"x": 1}, "b": {"x": "1/2", "y": "1/4"}, "c": {"x": 1, "y": 1}, "d": {}},
        readout=NextSymbols(scores=(("a", "x"), ("b", "y")), threshold=F(1, 2)),
    )
    trace = run_all(net, "abcd")
    assert trace.next_symbols == (("a",), ("a",), ("a", "b"), ())
    assert trace.output is None and trace.accepted is None


# --------------------------------------------------------------------------- the trace


def trace_network() -> Network:
    head = copy_head(key=affine({"q": {"k": 1}}), value=affine({"y": {"k": 1}}), mask="causal")
    return network(
        single_head(head),
        Sublayer(block=ffn("ffn", affine({"y": {"y": 2}}))),
        dims=("k", "y"),
        table={"a": {"k": 1}, "b": {"k": 3}},
    )


def test_a_trace_keeps_the_input_and_every_sublayer_state_by_name(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    trace = run_all(trace_network(), "ba")
    assert trace.backend == "exact"
    assert [s.label for s in trace.states] == ["input", "att", "ffn"]
    assert trace.final is trace.states[-1]
    # causal max of k: 3 at both tokens; then the FFN adds 2y
    assert trace.value("input", 1, "k") == F(1)
    assert trace.value("att", 0, "y") == F(3)
    assert trace.value("att", 1, "y") == F(3)
    assert trace.value("ffn", 1, "y") == F(9)
    assert trace.state("ffn").rows == ((F(3), F(9)), (F(1), F(9)))


def test_a_trace_keeps_every_selection_with_layer_head_position_weights_and_selected(
    run_all: Callable[..., Trace[Fraction]],
) -> None:
    trace = run_all(trace_network(), "ba")
    assert [(s.layer, s.head, s.position, s.weights, s.selected) for s in trace.selections] == [
        ("att", "h", 0, (F(1), F(0)), (0,)),
        ("att", "h", 1, (F(1), F(0)), (0,)),
    ]


def test_a_trace_lookup_of_an_unknown_state_or_dim_lists_the_known_ones() -> None:
    trace = exact.run(trace_network(), "ab")
    with pytest.raises(KeyError, match=r"no state 'nope'; states: input, att, ffn"):
        trace.state("nope")
    with pytest.raises(KeyError, match=r"no dim 'nope'; dims: k y"):
        trace.value("att", 0, "nope")


def test_every_interpreter_labels_its_trace_with_its_backend() -> None:
    net = trace_network()
    assert [run(net, "a").backend for run in RUNNERS] == ["exact", "sympy", "interval"]
