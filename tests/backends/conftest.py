"""Fixtures shared by the backend tests: run a network through every interpreter and check that
sympy equals the exact (Fraction) result, that the interval result encloses it and (where torch
is installed) that the torch backend's float64 states, outputs and decisions match it."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest
import sympy
from mpmath.libmp import to_rational

from netproof.symbolic import (
    AttentionLayer,
    DecoderLayer,
    Halting,
    Hardmax,
    Head,
    Network,
    RelativeBias,
    RelativeKernel,
    Scale,
    Seq2Seq,
    Softmax,
    Sublayer,
    affine,
    classifier,
    constant,
    exact,
    ffn,
    interval,
    sympy_interp,
    token_embedding,
)
from netproof.symbolic.evaluation import Trace
from netproof.symbolic.ir import MASKS


def endpoints(iv: Any) -> tuple[Fraction, Fraction]:
    """The exact rational endpoints of an mpmath interval (its binary floats, read without rounding)."""
    lo, hi = iv._mpi_  # raw mpf tuples: converting through mpf() would round to the mp context
    return Fraction(*to_rational(lo)), Fraction(*to_rational(hi))


def encloses(iv: Any, value: Fraction) -> bool:
    lo, hi = endpoints(iv)
    return lo <= value <= hi


def as_sympy(q: Fraction) -> sympy.Rational:
    return sympy.Rational(q.numerator, q.denominator)


Check = Callable[..., Trace[Fraction]]


def check_sympy(te: Trace[Fraction], ts: Trace[Any]) -> None:
    """Assert that the sympy trace equals the exact one: every state value, selection and output."""
    assert [s.label for s in ts.states] == [s.label for s in te.states]
    assert (ts.tokens, ts.positions) == (te.tokens, te.positions)
    for se, ss in zip(te.states, ts.states, strict=True):
        for t, (re_, rs) in enumerate(zip(se.rows, ss.rows, strict=True)):
            for d, (e, s) in enumerate(zip(re_, rs, strict=True)):
                where = f"state {se.label!r} token {t} dim {te.network.dims[d]!r}"
                assert type(e) is Fraction, where
                assert s == as_sympy(e), f"{where}: sympy {s} != exact {e}"
    assert len(ts.selections) == len(te.selections)
    for xe, xs in zip(te.selections, ts.selections, strict=True):
        assert (xs.layer, xs.head, xs.position, xs.selected) == (
            xe.layer,
            xe.head,
            xe.position,
            xe.selected,
        )
        assert list(xs.weights) == [as_sympy(w) for w in xe.weights]
    assert (ts.output is None) == (te.output is None)
    if te.output is not None:
        assert ts.output == as_sympy(te.output)
    assert ts.accepted == te.accepted
    assert ts.next_symbols == te.next_symbols


def check_interval(te: Trace[Fraction], ti: Trace[Any]) -> None:
    """Assert that the interval trace encloses the exact one and takes the same decisions."""
    assert [s.label for s in ti.states] == [s.label for s in te.states]
    assert (ti.tokens, ti.positions) == (te.tokens, te.positions)
    for se, si in zip(te.states, ti.states, strict=True):
        for t, (re_, ri) in enumerate(zip(se.rows, si.rows, strict=True)):
            for d, (e, i) in enumerate(zip(re_, ri, strict=True)):
                where = f"state {se.label!r} token {t} dim {te.network.dims[d]!r}"
                assert encloses(i, e), f"{where}: {i} does not contain {e}"
    assert len(ti.selections) == len(te.selections)
    for xe, xi in zip(te.selections, ti.selections, strict=True):
        assert (xi.layer, xi.head, xi.position, xi.selected) == (
            xe.layer,
            xe.head,
            xe.position,
            xe.selected,
        )
        assert all(encloses(i, e) for i, e in zip(xi.weights, xe.weights, strict=True))
    assert (ti.output is None) == (te.output is None)
    if te.output is not None:
        assert encloses(ti.output, te.output)
    # The interval interpreter may leave the accept bit undecided, but only when 0 is in the enclosure.
    assert ti.accepted == te.accepted or (ti.accepted is None and encloses(ti.output, Fraction(0)))
    assert ti.next_symbols == te.next_symbols


def check_agreement(te: Trace[Fraction], ts: Trace[Any], ti: Trace[Any]) -> None:
    check_sympy(te, ts)
    check_interval(te, ti)


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def check_torch(te: Trace[Fraction], net: Network, word: str | Sequence[str]) -> None:
    """Assert that the torch backend (float64) matches the exact trace: every defined state value
    within 1e-12 relative, the logit likewise, the accept bit and the next-symbol sets equal."""
    from netproof.symbolic import torch_backend

    fb = torch_backend.run(net, word, keep_states=True)
    assert fb.states is not None
    assert [label for label, _ in fb.states] == [s.label for s in te.states]
    for (label, tensor), se in zip(fb.states, te.states, strict=True):
        got = tensor[0].tolist()
        for t, row in enumerate(se.rows):
            for d, exact_value in enumerate(row):
                if exact_value is None:  # a position the readout never reads
                    continue
                want = float(exact_value)
                where = f"torch state {label!r} token {t} dim {te.network.dims[d]!r}"
                assert abs(got[t][d] - want) <= 1e-12 * max(1.0, abs(want)), (
                    f"{where}: {got[t][d]} != {exact_value}"
                )
    assert fb.accepted[0] == te.accepted
    if te.output is not None:
        logit = fb.logit(0)
        assert logit is not None
        assert abs(logit - float(te.output)) <= 1e-12 * max(1.0, abs(float(te.output)))
    assert (fb.next_symbols[0] if fb.next_symbols is not None else None) == te.next_symbols


@pytest.fixture
def run_all() -> Check:
    """``run_all(net, word)``: run exact, sympy, interval and torch (where installed), check they
    agree, return the exact trace."""

    def run(net: Network, word: str | Sequence[str]) -> Trace[Fraction]:
        te = exact.run(net, word)
        check_agreement(te, sympy_interp.run(net, word), interval.run(net, word))
        if torch_available():
            check_torch(te, net, word)
        return te

    return run


@pytest.fixture
def sympy_agrees() -> Callable[[Trace[Fraction], Trace[Any]], None]:
    """``sympy_agrees(exact_trace, sympy_trace)`` asserts equality of every value and decision."""
    return check_sympy


@pytest.fixture
def interval_encloses() -> Callable[[Trace[Fraction], Trace[Any]], None]:
    """``interval_encloses(exact_trace, interval_trace)`` asserts enclosure and equal decisions."""
    return check_interval


@pytest.fixture
def interval_endpoints() -> Callable[[Any], tuple[Fraction, Fraction]]:
    return endpoints


# --------------------------------------------------------------------------- random relative-position heads


@dataclass(frozen=True)
class RelativeHeadCase:
    """One random relative-position head (layer ``att``, output dim ``y``), a few words, and the
    head written out as a formula: ``reference(word)`` is y at every position."""

    network: Network
    words: tuple[str, ...]
    reference: Callable[[str], list[Fraction]]


def _window_at(window: tuple[int, ...] | None, r: int, outside: str) -> int:
    if window is None:
        return 0
    k = len(window) // 2
    if abs(r) > k:
        if outside == "zero":
            return 0
        r = k if r > 0 else -k
    return window[r + k]


_ALLOWED: dict[str, Callable[[int, int], bool]] = {
    "none": lambda i, j: True,
    "causal": lambda i, j: j <= i,
    "strict_causal": lambda i, j: j < i,
    "anticausal": lambda i, j: j >= i,
    "strict_anticausal": lambda i, j: j > i,
}


def random_relative_head_case(seed: int, *, hardmax: bool = False) -> RelativeHeadCase:
    """A head over x (token a or b, random integers) with random q = wq·x, k = wk·x, scale coef,
    and, each with probability 0.7, a bias β, a query kernel W^C and a key kernel W^{C'} of a
    random k ≤ 2 (one ``outside`` rule for all), a random mask; softmax base 2, or hardmax
    (average). The reference: logit_ij = coef·(q_i k_j + q_i w_{j−i} + k_j w'_{j−i}) + β_{j−i};
    softmax weights 2^logit, hardmax an average over the maximal logits; y_i = Σ weight·x_j."""
    rng = random.Random(seed)
    xs = {"a": rng.randint(-2, 2), "b": rng.randint(-2, 2)}
    wq, wk, coef = rng.randint(-1, 1), rng.randint(-1, 1), rng.choice((1, 2))
    k = rng.randint(0, 2)

    def window() -> tuple[int, ...] | None:
        return tuple(rng.randint(-2, 2) for _ in range(2 * k + 1)) if rng.random() < 0.7 else None

    beta, qconv, kconv = window(), window(), window()
    outside, mask = rng.choice(("zero", "clip")), rng.choice(MASKS)

    def fr(ws: tuple[int, ...]) -> tuple[Fraction, ...]:
        return tuple(Fraction(w) for w in ws)

    h = Head(
        name="h",
        query=affine({"q": {"x": wq}}),
        key=affine({"q": {"x": wk}}),
        value=affine({"y": {"x": 1}}),
        normalizer=Hardmax() if hardmax else Softmax(r=Fraction(2)),
        scale=Scale(coef=Fraction(coef)),
        mask=mask,
        relative_bias=None if beta is None else RelativeBias(beta=fr(beta), outside=outside),
        query_conv=None
        if qconv is None
        else RelativeKernel(columns=tuple((Fraction(w),) for w in qconv), outside=outside),
        key_conv=None
        if kconv is None
        else RelativeKernel(columns=tuple((Fraction(w),) for w in kconv), outside=outside),
    )
    net = Network(
        name="t",
        dims=("x", "y"),
        embedding=token_embedding(("a", "b"), {"a": {"x": xs["a"]}, "b": {"x": xs["b"]}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(h,))),),
        readout=classifier("y"),
    )

    def reference(word: str) -> list[Fraction]:
        x = [xs[s] for s in word]
        out: list[Fraction] = []
        for i in range(len(x)):
            js = [j for j in range(len(x)) if _ALLOWED[mask](i, j)]
            if not js:
                out.append(Fraction(0))
                continue
            q = wq * x[i]
            logits = [
                coef
                * (
                    q * wk * x[j]
                    + q * _window_at(qconv, j - i, outside)
                    + wk * x[j] * _window_at(kconv, j - i, outside)
                )
                + _window_at(beta, j - i, outside)
                for j in js
            ]
            if hardmax:
                top = max(logits)
                weights = [Fraction(1) if lg == top else Fraction(0) for lg in logits]
            else:
                weights = [Fraction(2) ** lg for lg in logits]
            out.append(
                sum((w * x[j] for w, j in zip(weights, js, strict=True)), Fraction(0))
                / sum(weights, Fraction(0))
            )
        return out

    words = tuple("".join(rng.choice("ab") for _ in range(length)) for length in range(1, 6))
    return RelativeHeadCase(net, words, reference)


@pytest.fixture
def random_relative_head() -> Callable[..., RelativeHeadCase]:
    """``random_relative_head(seed, hardmax=False)``: a :class:`RelativeHeadCase`."""
    return random_relative_head_case


def seq2seq_probe_network(
    *, cross_mask: str = "none", halt_at: int = 4, keep: tuple[str, ...] = ("c",)
) -> Seq2Seq:
    """c counts the steps (FFN + 1); ``mean`` averages c over the decoder steps the self-attention
    sees; ``seen`` sums, over the encoder positions the cross-attention sees, 1/#seen·v_j with
    v_j = the token's weight; ``p`` is the decoder positional feature i+1 at each step; the
    output map F keeps the dims in ``keep``. Used by the exact and the torch encoder–decoder tests."""
    self_head = Head(
        name="mean",
        query=constant({"q": 1}),
        key=constant({"q": 1}),
        value=affine({"mean": {"c": 1}}),
        normalizer=Hardmax(),
        mask="causal",
    )
    cross_head = Head(
        name="read",
        query=constant({"q": 1}),
        key=constant({"q": 1}),
        value=affine({"seen": {"w": 1}}),
        normalizer=Hardmax(),
        mask=cross_mask,  # type: ignore[arg-type]
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
        output=affine(
            {d: {d: 1} for d in keep}, inputs=dims, outputs=dims
        ),  # F keeps the dims in keep
        seed=(),
        halting=Halting(unit=affine({"halt": {"c": 1}}), value=Fraction(halt_at)),
        decoder_positional=(("p", "i+1", Fraction(1)),),
    )


@pytest.fixture
def seq2seq_probe() -> Callable[..., Seq2Seq]:
    """The probe encoder–decoder builder (:func:`seq2seq_probe_network`)."""
    return seq2seq_probe_network
