"""Key-grouped attention in the torch backend (symbolic/torch_grouped.py).

- The static detection: which heads of PARITY, FIRST and Dyck(8, 10) have few distinct keys, and
  what stops a head from being grouped (a key reading i/n, an attention output, a layer norm).
- Hypothesis-drawn networks (token and two-valued positional dims, word constants, i/n; every
  mask, hardmax with every tie rule and softmax; several layers) on drawn words: grouped and
  full (n × n) attention give the same float64 states, the same hardmax decisions, gaps and ties;
  the leftmost / rightmost outputs are the same value rows (equal), sums taken in another order
  are within the documented bound (n + groups) · eps · Σ|terms|; and both agree with the exact
  interpreter within 1e-9.
- PARITY and FIRST through ``run_batch`` at a length where every one of their heads is grouped
  agree with the exact interpreter (the registry-wide agreement is tests/backends/test_torch_backend.py).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Softmax,
    Sublayer,
    affine,
    classifier,
    ffn,
    token_embedding,
)
from netproof.symbolic.torch_grouped import KeyGroups, key_groups, key_sources

torch = pytest.importorskip("torch")
from netproof.symbolic import exact, torch_backend

pytestmark = pytest.mark.torch

F = Fraction
EPS = 2.0**-52
DIMS = ("t0", "t1", "f", "c", "x", "y0", "y1", "z")
# what a key may read: token dims, a two-valued feature, a word constant (grouped) or i/n (not)
GROUPED_READS = ("t0", "t1", "f", "c")
MASKS = ("none", "causal", "strict_causal", "anticausal", "strict_anticausal")


@st.composite
def networks(draw: Any, integral: bool = False) -> Network:
    """A token network over {a, b, c} with two to four sublayers; the keys of some heads read
    only grouped dims (and of some, once an attention output exists, ``y0`` or ``x``). With
    ``integral``, softmax scores are integers (queries and keys read t0, t1, f only), so that the
    exact interpreter's weights stay rational."""
    small = st.integers(-2, 2)
    feature = draw(st.sampled_from(("cos(iπ)", "I[i=0]", "I[i=1]", "I[i=n-1]")))
    prefix = draw(st.sampled_from(((), ("CLS",))))
    table = {s: {"t0": draw(small), "t1": draw(small)} for s in ("a", "b", "c", *prefix)}
    emb = token_embedding(
        ("a", "b", "c"), table, positional={"f": feature, "c": "1/n", "x": "i/n"}, prefix=prefix
    )
    layers = []
    for k in range(draw(st.integers(1, 3))):
        heads = []
        for h in range(draw(st.integers(1, 2))):
            norm = draw(
                st.sampled_from(
                    (
                        Hardmax(tie="average"),
                        Hardmax(tie="leftmost"),
                        Hardmax(tie="rightmost"),
                        Softmax(r=F(2)),
                    )
                )
            )
            whole = integral and isinstance(norm, Softmax)
            reads = draw(
                st.lists(
                    st.sampled_from((*GROUPED_READS, "x", "y0")),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
            if k == 0 or draw(st.booleans()):
                reads = [r for r in reads if r in GROUPED_READS] or ["t0"]
            if whole:
                reads = [r for r in reads if r in ("t0", "t1", "f")] or ["t0"]
            key = affine({"q": {r: draw(st.integers(-2, 2).filter(bool)) for r in reads}})
            qreads = draw(
                st.lists(
                    st.sampled_from(("t0", "t1", "f") if whole else DIMS), max_size=2, unique=True
                )
            )
            query = affine(
                {"q": {r: draw(small) for r in qreads}},
                bias={"q": draw(st.integers(1, 3))},
                inputs=qreads,
            )
            value = affine({f"y{h}": {r: draw(small) for r in ("t0", "x", "f")}})
            heads.append(
                Head(
                    name=f"h{h}",
                    query=query,
                    key=key,
                    value=value,
                    normalizer=norm,
                    mask=draw(st.sampled_from(MASKS)),
                    scoring=draw(st.sampled_from(("dot", "dot", "neg_abs_dot"))),
                )
            )
        layers.append(Sublayer(block=AttentionLayer(name=f"att{k}", heads=tuple(heads))))
        if draw(st.booleans()):
            layers.append(
                Sublayer(block=ffn(f"ffn{k}", affine({"z": {"y0": 1, "t1": draw(small)}})))
            )
    return Network(
        name="drawn",
        dims=DIMS,
        embedding=emb,
        layers=tuple(layers),
        readout=classifier({"y0": 1, "z": 1}),
    )


words_st = st.lists(
    st.lists(st.sampled_from("abc"), min_size=1, max_size=24).map(tuple), min_size=1, max_size=6
)
DRAWN = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _terms_bound(states: Any, n: int) -> float:
    """The documented bound for a reordered sum: (n + groups) · eps · Σ|terms|, with the states'
    largest entry times n for Σ|terms| and 64 for the groups."""
    largest = max((float(t.abs().max()) for _label, t in states if t.numel()), default=0.0)
    return (n + 64) * EPS * max(1.0, largest) * n


@DRAWN
@given(networks(), words_st)
def test_grouped_and_full_attention_give_the_same_float64_run_on_drawn_networks_and_words(
    net: Network, words: list[tuple[str, ...]]
) -> None:
    grouped = torch_backend.compile(net)
    full = torch_backend.compile(net, grouped=False, running=False)
    a = torch_backend.run_batch(grouped, words, keep_states=True)
    b = torch_backend.run_batch(full, words, keep_states=True)
    assert a.states is not None and b.states is not None
    n = max(a.tokens)
    bound = _terms_bound(b.states, n)
    only_single = all(
        isinstance(ch.head.normalizer, Hardmax) and ch.head.normalizer.tie != "average"
        for cl in grouped.layers
        for ch in cl.heads
    )
    for (la, ta), (lb, tb) in zip(a.states, b.states, strict=True):
        assert la == lb
        if only_single:  # selections of value rows: no sum is reordered, the runs are equal
            assert torch.equal(ta, tb), la
        else:
            assert float((ta - tb).abs().max()) <= bound, la
    # A float sign within the rounding of its own sum is no evidence (accepted None): a logit
    # that cancels to exactly 0 in one summation order may be 1e-17 in the other. So a decided
    # verdict never meets the opposite one, and where one run is undecided the two logits differ
    # by no more than the states' bound carried through the readout.
    weight = (
        float(grouped.logit.W.abs().sum() + grouped.logit.b.abs().sum())
        if a.logits is not None
        else 0.0
    )
    for w, (x, y) in enumerate(zip(a.accepted, b.accepted, strict=True)):
        if x != y:
            assert None in (x, y), (w, x, y)
            assert abs(float(a.logits[w]) - float(b.logits[w])) <= bound * max(1.0, weight), w
    assert a.unresolved_ties == b.unresolved_ties
    assert (a.gaps is None) == (b.gaps is None)
    for (_l, _h, ga), (_l2, _h2, gb) in zip(a.gaps or (), b.gaps or (), strict=True):
        finite = torch.isfinite(gb)
        assert torch.equal(torch.isfinite(ga), finite)
        assert max((ga[finite] - gb[finite]).abs().tolist(), default=0.0) <= bound


@DRAWN
@given(
    networks(integral=True), st.lists(st.sampled_from("abc"), min_size=1, max_size=16).map(tuple)
)
def test_grouped_attention_agrees_with_the_exact_interpreter_on_drawn_networks(
    net: Network, word: tuple[str, ...]
) -> None:
    fb = torch_backend.run(net, word)
    te = exact.run(net, word)
    assert fb.states is not None
    for (label, tensor), se in zip(fb.states, te.states, strict=True):
        got = tensor[0].tolist()
        for t, row in enumerate(se.rows):
            for d, want in enumerate(row):
                assert abs(got[t][d] - float(want)) <= 1e-9 * max(1.0, abs(float(want))), (
                    label,
                    t,
                    net.dims[d],
                )


def test_the_heads_of_parity_and_first_are_grouped_by_their_positional_feature_and_dycks_are_not() -> (
    None
):
    from netproof.constructions.chiang2022 import first_transformer, parity_transformer
    from netproof.constructions.yao2021 import dyck_recognizer

    def groups(net: Network) -> list[KeyGroups | None]:
        src = key_sources(net)
        return [
            key_groups(net, h, sub.name, src)
            for sub in net.layers
            if isinstance(sub.block, AttentionLayer)
            for h in sub.block.heads
        ]

    parity = KeyGroups(token=False, features=("cos(iπ)",), count=2)
    assert groups(parity_transformer()) == [
        KeyGroups(token=False, features=(), count=1),
        parity,
        parity,
    ]
    assert groups(first_transformer()) == [KeyGroups(token=False, features=("I[i=1]",), count=2)]
    # Dyck's matching heads read p = i/n and the matched bit m, an attention output
    assert set(groups(dyck_recognizer(k=2, depth=2))) == {None}


def test_a_key_reading_an_attention_output_or_a_layer_normed_position_is_not_grouped() -> None:
    from netproof.symbolic import LayerNorm

    emb = token_embedding(
        ("a", "b"), {"a": {"t0": 1}, "b": {"t1": 1}}, positional={"x": "i/n", "f": "cos(iπ)"}
    )

    def head(name: str, reads: str, writes: str = "y0") -> Head:
        return Head(
            name=name,
            query=affine({"q": {"t0": 1}}),
            key=affine({"q": {reads: 1}}),
            value=affine({writes: {"t0": 1}}),
            normalizer=Hardmax(),
            mask="causal",
        )

    net = Network(
        name="t",
        dims=("t0", "t1", "x", "f", "y0", "y1"),
        embedding=emb,
        layers=(
            Sublayer(block=AttentionLayer(name="one", heads=(head("h", "f"),))),
            Sublayer(
                block=AttentionLayer(name="two", heads=(head("h", "y0"), head("g", "t1", "y1")))
            ),
            Sublayer(
                block=AttentionLayer(name="three", heads=(head("h", "t1"),)),
                post_ln=LayerNorm(eps=F(1)),
            ),
            Sublayer(block=AttentionLayer(name="four", heads=(head("h", "t1"),))),
        ),
        readout=classifier("y0"),
    )
    src = key_sources(net)
    assert key_groups(net, net.layers[0].block.heads[0], "one", src) == KeyGroups(
        False, ("cos(iπ)",), 2
    )  # type: ignore[union-attr]
    assert key_groups(net, net.layers[1].block.heads[0], "two", src) is None  # type: ignore[union-attr]
    assert key_groups(net, net.layers[1].block.heads[1], "two", src) == KeyGroups(True, (), 2)  # type: ignore[union-attr]
    # the layer norm after "three" mixes t1 with x = i/n and with the causal heads' outputs
    assert key_groups(net, net.layers[3].block.heads[0], "four", src) is None  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["parity", "first"])
def test_parity_and_first_by_groups_agree_with_exact_on_words_of_length_two_hundred(
    name: str,
) -> None:
    import random

    from netproof.constructions.chiang2022 import first_transformer, parity_transformer

    net = parity_transformer() if name == "parity" else first_transformer()
    rng = random.Random(7)
    words = [tuple(rng.choice("01") for _ in range(m)) for m in (199, 200, 57, 1, 0)]
    fb = torch_backend.run_batch(net, words)
    for w, word in enumerate(words):
        te = exact.run(net, word)
        assert fb.accepted[w] == te.accepted
        assert abs(float(fb.logits[w]) - float(te.output)) <= 1e-12
