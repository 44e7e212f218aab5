"""The canonical printed form and the fingerprint (sha256 of that form)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from fractions import Fraction

import pytest

from netproof.constructions.chiang2022 import (
    first_transformer,
    parity_transformer,
    rumelhart_parity,
)
from netproof.symbolic import (
    RELU,
    AttentionLayer,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Softmax,
    Sublayer,
    affine,
    classifier,
    constant,
    ffn,
    fingerprint,
    layernorm,
    pretty,
    token_embedding,
)


def tiny(
    *,
    value_weight: int = 3,
    tie: str = "leftmost",
    mask: str = "causal",
    eps: int | str = 0,
    residual: bool = True,
    position: int = -1,
    normalizer: Hardmax | Softmax | None = None,
    scale: Scale | None = None,
) -> Network:
    """A two-sublayer network touching most printed fields; keyword arguments vary one field."""
    head = Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"x": 1}}),
        value=affine({"y": {"x": value_weight}}),
        normalizer=normalizer if normalizer is not None else Hardmax(tie=tie),  # type: ignore[arg-type]
        mask=mask,  # type: ignore[arg-type]
        scale=scale if scale is not None else Scale(),
    )
    return Network(
        name="tiny",
        dims=("x", "y"),
        embedding=token_embedding(
            ("a", "b"),
            {"a": {"x": 1}, "b": {"x": "-1/2"}, "CLS": {}},
            positional={"y": ("i/n", 2)},
            prefix=("CLS",),
        ),
        layers=(
            Sublayer(block=AttentionLayer(name="look", heads=(head,))),
            Sublayer(
                block=ffn(
                    "gate",
                    affine({"u": {"x": 1, "y": -1}}, bias={"u": "1/3"}),
                    RELU,
                    affine({"x": {"u": 2}}),
                ),
                residual=residual,
                post_ln=layernorm(eps),
            ),
        ),
        readout=classifier("x", position=position),
        params=(("k", "2"),),
        reference="Nobody 2000, §1",
    )


GOLDEN_TINY = """\
network tiny
  reference: Nobody 2000, §1
  params: k=2
  dims: x y
  input tokens CLS · w  alphabet=a b  index_base=0
    embed a: x=1
    embed b: x=-1/2
    embed CLS: 0
    pos y := 2*i/n
  attention look (residual, post_ln=none)
    head h: scoring=dot scale=1 normalizer=hardmax(tie=leftmost) mask=causal empty=zero
      q.q := 1
      k.q := 1*x
      v.y := 3*x
  ffn gate (residual, post_ln=layernorm(eps=0, over=all))
    [0] u := 1*x + -1*y + 1/3
    [1] relu
    [2] x := 2*u
  readout classifier at position -1: accept iff logit > 0
    logit := 1*x
"""


def test_the_printed_form_of_a_tiny_network_is_the_golden_text() -> None:
    assert pretty(tiny()) == GOLDEN_TINY


def test_the_printed_form_of_a_flat_network_with_next_symbols_is_the_golden_text() -> None:
    net = Network(
        name="flat",
        dims=("x1", "x2", "ok"),
        embedding=FlatEmbedding(
            alphabet=("0", "1"), length=2, values=(("0", Fraction(0)), ("1", Fraction(1)))
        ),
        layers=(
            Sublayer(
                block=ffn("empty"), residual=False, post_ln=layernorm("1/4", over=("x1", "x2"))
            ),
            Sublayer(block=AttentionLayer(name="none", heads=())),
        ),
        readout=NextSymbols(scores=(("0", "x1"), ("1", "ok")), threshold=Fraction(1, 2)),
    )
    assert pretty(net) == (
        "network flat\n"
        "  dims: x1 x2 ok\n"
        "  input flat length=2 dims=x1..x2 alphabet=0 1 values: 0->0 1->1\n"
        "  ffn empty (no residual, post_ln=layernorm(eps=1/4, over=[x1, x2]))\n"
        "    (no steps: does nothing)\n"
        "  attention none (residual, post_ln=none)\n"
        "    (no heads: does nothing)\n"
        "  readout next-symbols: allowed iff score >= 1/2: 0<-x1 1<-ok\n"
    )


@pytest.mark.parametrize(
    ("scale", "normalizer", "text"),
    [
        (Scale(), Softmax(r=Fraction(2)), "scale=1 normalizer=softmax(base=E=2, i.e. c=ln 2)"),
        (
            Scale(coef=Fraction(3, 2), sqrt_d=4),
            Softmax(c=Fraction(1), symbol="B"),
            "scale=3/2·1/√4 normalizer=softmax(base=B=e^1)",
        ),
        (Scale(log_n=True), Softmax(c=Fraction(1)), "scale=ln n normalizer=softmax(base=E=e^1)"),
        (
            Scale(coef=Fraction(2), sqrt_d=3, log_n=True),
            Hardmax(),
            "scale=2·1/√3·ln n normalizer=hardmax(tie=average)",
        ),
    ],
)
def test_scales_and_normalizers_print_every_field(
    scale: Scale, normalizer: Hardmax | Softmax, text: str
) -> None:
    assert f"    head h: scoring=dot {text} mask=causal empty=zero\n" in pretty(
        tiny(scale=scale, normalizer=normalizer)
    )


@pytest.mark.parametrize(
    "build",
    [tiny, parity_transformer, first_transformer, lambda: rumelhart_parity(3)],
    ids=["tiny", "parity", "first", "rumelhart"],
)
def test_pretty_is_deterministic_across_separately_built_equal_networks(
    build: Callable[[], Network],
) -> None:
    a, b = build(), build()
    assert a is not b
    assert pretty(a) == pretty(b)
    assert fingerprint(a) == fingerprint(b)


def test_the_fingerprint_is_the_sha256_hex_digest_of_the_printed_form() -> None:
    net = tiny()
    digest = fingerprint(net)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert digest == hashlib.sha256(GOLDEN_TINY.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    "variant",
    [
        {"value_weight": 4},
        {"tie": "rightmost"},
        {"mask": "strict_causal"},
        {"eps": "1/100"},
        {"residual": False},
        {"position": 0},
        {"normalizer": Softmax(r=Fraction(2))},
        {"scale": Scale(coef=Fraction(2))},
    ],
    ids=lambda v: next(iter(v)),
)
def test_changing_one_field_changes_the_fingerprint(variant: dict[str, object]) -> None:
    assert fingerprint(tiny(**variant)) != fingerprint(tiny())  # type: ignore[arg-type]


def test_changing_one_weight_of_a_paper_network_changes_the_fingerprint() -> None:
    net = parity_transformer()
    fig1 = net.layers[1].block
    last = fig1.steps[-1]
    bumped_row = (last.weights[0][0] + 1, *last.weights[0][1:])
    bumped = type(last)(
        inputs=last.inputs, outputs=last.outputs, weights=(bumped_row,), bias=last.bias
    )
    changed = Network(
        name=net.name,
        dims=net.dims,
        embedding=net.embedding,
        layers=(
            net.layers[0],
            Sublayer(block=type(fig1)(name=fig1.name, steps=(*fig1.steps[:-1], bumped))),
            *net.layers[2:],
        ),
        readout=net.readout,
        params=net.params,
        reference=net.reference,
    )
    assert pretty(changed) != pretty(net)
    assert fingerprint(changed) != fingerprint(net)


def test_changing_the_softmax_base_parameter_changes_the_fingerprint() -> None:
    assert fingerprint(parity_transformer("ln(2)")) != fingerprint(parity_transformer("ln(3)"))


def test_a_layer_norm_over_a_dim_named_all_prints_differently_from_one_over_every_dim() -> None:
    def net(ln: LayerNorm) -> Network:
        return Network(
            name="ln",
            dims=("all", "x"),
            embedding=token_embedding(("a",), {"a": {"all": 1, "x": -1}}),
            layers=(Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=ln),),
            readout=classifier("x"),
        )

    whole, one_dim = net(layernorm(0)), net(layernorm(0, over=("all",)))
    assert fingerprint(whole) != fingerprint(one_dim)
