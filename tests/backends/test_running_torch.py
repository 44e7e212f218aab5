"""Running-maximum attention in the torch backend (symbolic/torch_running.py).

- The static detection: every head of Dyck(k, D) has a query that is the same at every position
  (``q = 1``); a query reading i/n or a token, a softmax head, a relative head are not taken.
- Hypothesis-drawn networks (hardmax heads with word-constant queries and keys reading tokens,
  i/n, word constants or attention outputs, so that scores are often tied; every mask and tie
  rule; several layers) on drawn words: running maxima and the n × n path give the same float64
  states (equal when no head averages; otherwise within the documented bound n · eps · Σ|v|), the
  same hardmax gaps and near ties; and the running path agrees with the exact interpreter.
- Dyck(8, 10) on members and non-members of length 200: every head is computed by running maxima
  and the states, gaps and ties equal the n × n path's bit for bit.
- A NaN upstream (a layer norm of a constant vector with eps = 0) sends the head to the n × n path.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    Softmax,
    Sublayer,
    affine,
    classifier,
    constant,
    ffn,
    token_embedding,
)

torch = pytest.importorskip("torch")
from netproof.symbolic import exact, torch_backend
from netproof.symbolic.torch_running import running_heads

pytestmark = pytest.mark.torch

F = Fraction
EPS = 2.0**-52
DIMS = ("t0", "t1", "c", "x", "y0", "y1", "z")
MASKS = ("none", "causal", "strict_causal", "anticausal", "strict_anticausal")
TIES = (Hardmax(tie="average"), Hardmax(tie="leftmost"), Hardmax(tie="rightmost"))


@st.composite
def networks(draw: Any) -> Network:
    """A token network over {a, b, c} with one to three attention layers of hardmax heads whose
    queries read nothing or the word constant c = 1/n; keys read tokens (t0, t1: many ties), i/n,
    c, and once an attention output exists y0 or z."""
    small = st.integers(-2, 2)
    prefix = draw(st.sampled_from(((), ("CLS",))))
    table = {s: {"t0": draw(small), "t1": draw(small)} for s in ("a", "b", "c", *prefix)}
    emb = token_embedding(
        ("a", "b", "c"), table, positional={"c": "1/n", "x": "i/n"}, prefix=prefix
    )
    layers = []
    for k in range(draw(st.integers(1, 3))):
        heads = []
        for h in range(draw(st.integers(1, 2))):
            reads = draw(
                st.lists(
                    st.sampled_from(("t0", "t1", "x", "c") + (("y0", "z") if k else ())),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
            key = affine({"q": {r: draw(st.integers(-2, 2).filter(bool)) for r in reads}})
            if draw(st.booleans()):
                query = constant({"q": draw(st.integers(-3, 3).filter(bool))})
            else:
                query = affine({"q": {"c": draw(st.integers(1, 3))}}, bias={"q": draw(small)})
            value = affine({f"y{h}": {r: draw(small) for r in ("t0", "x", "t1")}})
            heads.append(
                Head(
                    name=f"h{h}",
                    query=query,
                    key=key,
                    value=value,
                    normalizer=draw(st.sampled_from(TIES)),
                    mask=draw(st.sampled_from(MASKS)),
                    scoring=draw(st.sampled_from(("dot", "dot", "neg_abs_dot"))),
                )
            )
        layers.append(Sublayer(block=AttentionLayer(name=f"att{k}", heads=tuple(heads))))
        if draw(st.booleans()):
            layers.append(
                Sublayer(
                    block=ffn(
                        f"ffn{k}", affine({"z": {"y0": 1, "y1": draw(small), "t1": draw(small)}})
                    )
                )
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
    max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _bound(states: Any, n: int) -> float:
    """The documented bound for a reordered sum, n · eps · Σ|v|, with the states' largest entry
    times n for Σ|v| (and 4 · n² · eps more for the sums carried through later layers)."""
    largest = max((float(t.abs().max()) for _label, t in states if t.numel()), default=0.0)
    return 4 * (n + 1) * EPS * max(1.0, largest) * (n + 1)


@DRAWN
@given(networks(), words_st, st.sampled_from((None, 0.0)))
def test_running_maxima_and_the_score_matrix_give_the_same_float64_run_on_drawn_networks_and_words(
    net: Network, words: list[tuple[str, ...]], tie_rtol: float | None
) -> None:
    # no key groups on either side: heads whose keys read only tokens (ties everywhere) run here
    # too; with tie_rtol = 0 a tied key's score equals its query's threshold exactly
    running = torch_backend.compile(net, grouped=False, tie_rtol=tie_rtol)
    full = torch_backend.compile(net, grouped=False, running=False, tie_rtol=tie_rtol)
    a = torch_backend.run_batch(running, words, keep_states=True)
    b = torch_backend.run_batch(full, words, keep_states=True)
    assert a.states is not None and b.states is not None
    heads = {
        (sub.name, h.name)
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
    }
    if max(a.tokens):  # no head runs on a batch of empty words
        assert {(layer, head) for layer, head, path in a.paths if path == "running"} == heads
        assert {p for *_lh, p in b.paths} == {"scores"}
    only_single = all(
        ch.head.normalizer.tie != "average" for cl in running.layers for ch in cl.heads
    )  # type: ignore[union-attr]
    n = max(a.tokens)
    bound = _bound(b.states, n)
    for (la, ta), (lb, tb) in zip(a.states, b.states, strict=True):
        assert la == lb
        if only_single:  # selections of value rows: the same rows, the runs are equal
            assert torch.equal(ta, tb), la
        else:
            assert max((ta - tb).abs().flatten().tolist(), default=0.0) <= bound, la
    if only_single:
        assert a.unresolved_ties == b.unresolved_ties
        assert a.min_gap == b.min_gap
        assert a.accepted == b.accepted
    for (la, ha, ga), (lb, hb, gb) in zip(a.gaps or (), b.gaps or (), strict=True):
        assert (la, ha) == (lb, hb)
        if only_single:
            assert torch.equal(ga, gb), (la, ha)
        else:
            finite = torch.isfinite(gb)
            assert torch.equal(torch.isfinite(ga), finite)
            assert max((ga[finite] - gb[finite]).abs().tolist(), default=0.0) <= bound


@DRAWN
@given(networks(), st.lists(st.sampled_from("abc"), min_size=1, max_size=16).map(tuple))
def test_running_maxima_agree_with_the_exact_interpreter_on_drawn_networks(
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


def test_every_head_of_dyck_has_one_query_per_word_and_a_query_reading_a_position_or_a_softmax_head_does_not() -> (
    None
):
    from netproof.constructions.yao2021 import dyck_recognizer

    net = dyck_recognizer(k=8, depth=10)
    every = {
        (sub.name, h.name)
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
    }
    assert len(every) == 21 and running_heads(net) == frozenset(every)

    emb = token_embedding(
        ("a", "b"), {"a": {"t0": 1}, "b": {"t1": 1}}, positional={"x": "i/n", "c": "1/n"}
    )

    def head(name: str, query: Any, norm: Any = None, writes: str = "y0") -> Head:
        return Head(
            name=name,
            query=query,
            key=affine({"q": {"x": 1}}),
            value=affine({writes: {"t0": 1}}),
            normalizer=norm or Hardmax(),
            mask="causal",
        )

    net2 = Network(
        name="t",
        dims=("t0", "t1", "x", "c", "y0", "y1"),
        embedding=emb,
        layers=(
            Sublayer(
                block=AttentionLayer(
                    name="one",
                    heads=(
                        head("const", constant({"q": 1})),
                        head("word", affine({"q": {"c": 2}}), writes="y1"),
                    ),
                )
            ),
            Sublayer(
                block=AttentionLayer(
                    name="two",
                    heads=(
                        head("position", affine({"q": {"x": 1}})),
                        head("token", affine({"q": {"t0": 1}}), writes="y1"),
                    ),
                )
            ),
            Sublayer(
                block=AttentionLayer(
                    name="three", heads=(head("soft", constant({"q": 1}), Softmax(r=F(2))),)
                )
            ),
            # an earlier causal head's output differs from query to query
            Sublayer(
                block=AttentionLayer(name="four", heads=(head("after", affine({"q": {"y0": 1}})),))
            ),
        ),
        readout=classifier("y0"),
    )
    assert running_heads(net2) == frozenset({("one", "const"), ("one", "word")})


def _dyck_words(rng: random.Random, n: int, count: int) -> list[tuple[str, ...]]:
    from netproof.constructions.yao2021 import symbols

    pairs = symbols(8)
    out = []
    for _ in range(count):
        stack: list[int] = []
        w: list[str] = []
        while len(w) < n:
            if stack and (len(stack) >= 10 or len(stack) >= n - len(w) or rng.random() < 0.5):
                w.append(pairs[stack.pop()][1])
            else:
                stack.append(rng.randrange(8))
                w.append(pairs[stack[-1]][0])
        out.append(tuple(w))
    return out


def test_dyck_by_running_maxima_equals_the_score_matrix_bit_for_bit_on_members_and_non_members(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from netproof.constructions.yao2021 import dyck_recognizer
    from netproof.symbolic import torch_running

    def several(*_args: Any) -> None:
        raise AssertionError("a query of a matching head selected several keys")

    # Dyck's matching scores p_j − m_j are distinct, so every query selects one key (its value row
    # by the running maximum's index) and no row of the n × n path is built; the final head
    # (mask none) takes one row per word
    monkeypatch.setattr(torch_running, "_rows", several)

    net = dyck_recognizer(k=8, depth=10)
    rng = random.Random(11)
    members = _dyck_words(rng, 200, 3)
    others = [tuple(rng.sample(w, len(w))) for w in members] + [
        members[0][:-1],
        (")1", *members[1][1:]),
    ]
    words = members + others
    a = torch_backend.run_batch(torch_backend.compile(net), words, keep_states=True)
    b = torch_backend.run_batch(
        torch_backend.compile(net, grouped=False, running=False), words, keep_states=True
    )
    assert {p for *_lh, p in a.paths} == {"running"}
    assert a.states is not None and b.states is not None
    for (la, ta), (_lb, tb) in zip(a.states, b.states, strict=True):
        assert torch.equal(ta, tb), la
    for (la, ha, ga), (_l, _h, gb) in zip(a.gaps or (), b.gaps or (), strict=True):
        assert torch.equal(ga, gb), (la, ha)
    assert (a.min_gap, a.unresolved_ties, a.accepted) == (b.min_gap, b.unresolved_ties, b.accepted)
    assert a.accepted[:3] == (True, True, True)
    from netproof.symbolic import batched  # the exact interpreter's values, as integers

    assert a.accepted[3:] == tuple(bool(v) for v in batched.evaluate(net, others).accepted)


def test_a_nan_upstream_sends_a_running_head_to_the_score_matrix() -> None:
    emb = token_embedding(("a", "b"), {"a": {"t0": 1}, "b": {"t0": 1}}, positional={"x": "i/n"})
    head = Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"x": 1}}),
        value=affine({"y0": {"t0": 1}}),
        normalizer=Hardmax(),
        mask="causal",
    )
    net = Network(
        name="t",
        dims=("t0", "x", "y0"),
        embedding=emb,
        layers=(
            # t0 is 1 at every position: its layer norm over t0 alone, eps = 0, is 0/0
            Sublayer(
                block=ffn("id", affine({"y0": {"t0": 0}})),
                post_ln=LayerNorm(eps=F(0), over=("t0",)),
            ),
            Sublayer(block=AttentionLayer(name="att", heads=(head,))),
        ),
        readout=classifier("y0"),
    )
    fb = torch_backend.run_batch(net, ["abab"])
    assert fb.paths == (("att", "h", "scores"),)
    clean = Network(
        name="t", dims=net.dims, embedding=emb, layers=net.layers[1:], readout=net.readout
    )
    assert torch_backend.run_batch(clean, ["abab"]).paths == (("att", "h", "running"),)
