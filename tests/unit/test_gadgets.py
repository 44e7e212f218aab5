"""The gadget library computes what its docstrings say, exactly, on every word up to a length,
and refuses bad arguments with a message that names the fix."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction

import pytest

from netproof.symbolic import (
    InexactNumberError,
    Network,
    NetworkValidationError,
    Sublayer,
    batched,
    classifier,
    token_embedding,
)
from netproof.symbolic.exact import run
from netproof.symbolic.gadgets import (
    AND,
    EQ,
    GT,
    NOT,
    OR,
    XNOR,
    attention,
    boolean_ffn,
    nearest,
    select_position,
    sublayers,
    threshold,
    uniform_average,
    var,
)
from netproof.symbolic.ir import FFN, MASKS, Head

AB = ("a", "b")


def words(alphabet: Sequence[str], max_len: int, min_len: int = 0) -> Iterator[tuple[str, ...]]:
    for m in range(min_len, max_len + 1):
        yield from itertools.product(alphabet, repeat=m)


def allowed(mask: str, i: int, n: int) -> list[int]:
    return {
        "none": list(range(n)),
        "causal": list(range(i + 1)),
        "strict_causal": list(range(i)),
        "anticausal": list(range(i, n)),
        "strict_anticausal": list(range(i + 1, n)),
    }[mask]


def ab_net(
    *layers: Sublayer, out: Sequence[str], index_base: int = 1, readout: str | None = None
) -> Network:
    """Alphabet {a, b}: dims isb = I[w_i = b], v = 3·isb − 1 (a: −1, b: 2), p = i/n, i = i."""
    return Network(
        name="gadget",
        dims=("isb", "v", "p", "i", *out),
        embedding=token_embedding(
            AB,
            {"a": {"v": -1}, "b": {"isb": 1, "v": 2}},
            positional={"p": "i/n", "i": "i"},
            index_base=index_base,
        ),
        layers=layers,
        readout=classifier(readout or out[0], position=-1),
    )


def agrees_with_batched(net: Network, label: str, dims: Sequence[str], max_len: int) -> None:
    """The batched integer evaluator gives the same values as the Fraction interpreter."""
    for m in range(1, max_len + 1):
        ws = list(itertools.product(net.alphabet, repeat=m))
        bt = batched.trace(net, ws)
        for w, word in enumerate(ws):
            trace = run(net, word)
            for t in range(m):
                for d in dims:
                    assert bt.value(label, w, t, d) == trace.value(label, t, d), (word, t, d)


# --------------------------------------------------------------------------- uniform_average


@pytest.mark.parametrize("mask", MASKS)
def test_uniform_average_is_the_exact_mean_of_the_values_over_the_masked_positions(
    mask: str,
) -> None:
    head = uniform_average(
        "avg", {"mean_v": {"v": 1}, "mean_2b_minus_p": {"isb": 2, "p": -1}}, mask=mask
    )  # type: ignore[arg-type]
    net = ab_net(*sublayers(attention("avg", head)), out=("mean_v", "mean_2b_minus_p"))
    for word in words(AB, 6, min_len=1):
        trace = run(net, word)
        n = len(word)
        for t in range(n):
            js = allowed(mask, t, n)
            v = [Fraction(2) if word[j] == "b" else Fraction(-1) for j in js]
            u = [2 * int(word[j] == "b") - Fraction(j + 1, n) for j in js]
            assert trace.value("avg", t, "mean_v") == (sum(v) / len(js) if js else 0)
            assert trace.value("avg", t, "mean_2b_minus_p") == (sum(u) / len(js) if js else 0)
    agrees_with_batched(net, "avg", ("mean_v", "mean_2b_minus_p"), 5)


def test_uniform_average_defaults_to_the_causal_prefix_mean() -> None:
    net = ab_net(
        *sublayers(attention("avg", uniform_average("avg", {"frac_b": {"isb": 1}}))),
        out=("frac_b",),
    )
    trace = run(net, "abba")
    assert [trace.value("avg", t, "frac_b") for t in range(4)] == [
        0,
        Fraction(1, 2),
        Fraction(2, 3),
        Fraction(1, 2),
    ]


# --------------------------------------------------------------------------- nearest


def nearest_reference(
    word: Sequence[str], i: int, side: str, strict: bool, has: Sequence[bool]
) -> int | None:
    """The position nearest to i on ``side`` with the property, else the nearest one, else None."""
    n = len(word)
    if side == "left":
        candidates = list(range(i - 1 if strict else i, -1, -1))
    else:
        candidates = list(range(i + 1 if strict else i, n))
    for j in candidates:
        if has[j]:
            return j
    return candidates[0] if candidates else None


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("index_base", [0, 1])
@pytest.mark.parametrize("prop", ["is b", "is a"])
def test_nearest_selects_exactly_the_nearest_position_with_the_property(
    side: str, strict: bool, index_base: int, prop: str
) -> None:
    where, bias = ({"isb": 1}, 0) if prop == "is b" else ({"isb": -1}, 1)
    head = nearest(
        "near",
        side=side,
        where=where,
        where_bias=bias,
        strict=strict,
        values={"got_v": {"v": 1}, "got_p": {"p": 1}},
    )
    net = ab_net(*sublayers(attention("look", head)), out=("got_v", "got_p"), index_base=index_base)
    for word in words(AB, 7, min_len=1):
        trace = run(net, word)
        n = len(word)
        has = [(s == "b") == (prop == "is b") for s in word]
        for t in range(n):
            j = nearest_reference(word, t, side, strict, has)
            sel = next(s for s in trace.selections if s.head == "near" and s.position == t)
            if j is None:
                assert sel.selected == () and trace.value("look", t, "got_v") == 0
                continue
            assert sel.selected == (j,), (word, t)  # one position: never a tie
            assert trace.value("look", t, "got_v") == (2 if word[j] == "b" else -1)
            assert trace.value("look", t, "got_p") == Fraction(j + index_base, n)
    agrees_with_batched(net, "look", ("got_v", "got_p"), 5)


def test_nearest_builds_yao_s_matching_score_with_the_property_doubled() -> None:
    head = nearest("left", side="left", where={"m": -1}, where_bias=1, values={"l:m": {"m": 1}})
    assert head.mask == "strict_causal" and head.normalizer.tie == "average"  # type: ignore[union-attr]
    assert dict(zip(head.key.inputs, head.key.weights[0], strict=True)) == {"m": -2, "p": 1}
    assert head.key.bias == (2,)
    right = nearest(
        "right", side="right", where={"m": -1}, where_bias=1, values={"r:m": {"m": 1}}, strict=False
    )
    assert right.mask == "anticausal"
    assert dict(zip(right.key.inputs, right.key.weights[0], strict=True)) == {"m": -2, "p": -1}


# --------------------------------------------------------------------------- select_position


def select_reference(
    keys: Sequence[Fraction], q: Fraction, js: Sequence[int], tie: str
) -> list[int]:
    if not js:
        return []
    best = min(abs(keys[j] - q) for j in js)
    hits = [j for j in js if abs(keys[j] - q) == best]
    return {"average": hits, "leftmost": hits[:1], "rightmost": hits[-1:]}[tie]


@pytest.mark.parametrize("tie", ["average", "leftmost", "rightmost"])
@pytest.mark.parametrize("mask", ["none", "causal", "strict_anticausal"])
def test_select_position_attends_to_the_keys_nearest_the_query_split_by_the_tie_rule(
    tie: str, mask: str
) -> None:
    # key v (a: −1, b: 2) against the query position's own i: exact hits, repeats, near misses.
    head = select_position(
        "sel", key_dim="v", query_dim="i", values={"got_p": {"p": 1}}, mask=mask, tie=tie
    )  # type: ignore[arg-type]
    net = ab_net(*sublayers(attention("look", head)), out=("got_p",), index_base=0)
    for word in words(AB, 6, min_len=1):
        trace = run(net, word)
        n = len(word)
        keys = [Fraction(2) if s == "b" else Fraction(-1) for s in word]
        for t in range(n):
            hits = select_reference(keys, Fraction(t), allowed(mask, t, n), tie)
            sel = next(s for s in trace.selections if s.head == "sel" and s.position == t)
            assert list(sel.selected or ()) == hits, (word, t)
            expected = sum((Fraction(j, n) for j in hits), Fraction(0)) / len(hits) if hits else 0
            assert trace.value("look", t, "got_p") == expected
    agrees_with_batched(net, "look", ("got_p",), 5)


@pytest.mark.parametrize("query", [0, 1, 3, 9])
def test_select_position_with_a_constant_query_reads_that_position_or_the_nearest_one(
    query: int,
) -> None:
    head = select_position("sel", key_dim="i", query=query, values={"got_v": {"v": 1}})
    net = ab_net(*sublayers(attention("look", head)), out=("got_v",), index_base=0)
    for word in words(AB, 6, min_len=1):
        j = min(query, len(word) - 1)  # position `query`, or the last one when the word is shorter
        trace = run(net, word)
        assert all(
            trace.value("look", t, "got_v") == (2 if word[j] == "b" else -1)
            for t in range(len(word))
        )


# --------------------------------------------------------------------------- FFN gadgets


def bits_net(ffn: FFN, out: Sequence[str]) -> Network:
    table: dict[str, Mapping[str, int]] = {
        f"{a}{b}": {"a": a, "b": b} for a in (0, 1) for b in (0, 1)
    }
    return Network(
        name="bits",
        dims=("a", "b", *out),
        embedding=token_embedding(tuple(table), table),
        layers=sublayers(ffn),
        readout=classifier(out[0]),
    )


def test_boolean_ffn_computes_the_truth_table_of_every_output() -> None:
    f = boolean_ffn(
        "logic",
        {
            "and": AND(var("a"), var("b")),
            "or": OR(var("a"), var("b")),
            "xor": NOT(XNOR(var("a"), var("b"))),
            "copy_a": "a",
        },
    )
    net = bits_net(f, ("and", "or", "xor", "copy_a"))
    for a, b in itertools.product((0, 1), repeat=2):
        trace = run(net, [f"{a}{b}"])
        got = {d: trace.value("logic", 0, d) for d in ("and", "or", "xor", "copy_a")}
        assert got == {"and": a & b, "or": a | b, "xor": a ^ b, "copy_a": a}


def test_boolean_ffn_compares_with_gt_and_eq_at_their_margin() -> None:
    f = boolean_ffn("cmp", {"gt": GT(var("a"), var("b"), 1), "eq": EQ(var("a"), var("b"), 1)})
    net = bits_net(f, ("gt", "eq"))
    for a, b in itertools.product((0, 1), repeat=2):
        trace = run(net, [f"{a}{b}"])
        assert (trace.value("cmp", 0, "gt"), trace.value("cmp", 0, "eq")) == (
            int(a > b),
            int(a == b),
        )


XS = (
    Fraction(-3),
    Fraction(0),
    Fraction(1, 2),
    Fraction(2, 3),
    Fraction(1),
    Fraction(1000001, 1000000),
    Fraction(7, 5),
    Fraction(5),
)


def x_net(ffn: FFN) -> Network:
    table = {f"x{k}": {"x": x} for k, x in enumerate(XS)}
    return Network(
        name="x",
        dims=("x", "y"),
        embedding=token_embedding(tuple(table), table),
        layers=sublayers(ffn),
        readout=classifier("y"),
    )


def test_threshold_without_a_margin_is_the_exact_step_at_c() -> None:
    net = x_net(threshold("t", "x", 1, "y"))
    for k, x in enumerate(XS):
        assert run(net, [f"x{k}"]).value("t", 0, "y") == int(x > 1), x


def test_threshold_with_a_margin_is_exact_outside_the_margin_and_between_0_and_1_inside() -> None:
    net = x_net(threshold("t", "x", "1/2", "y", margin="1/2"))
    for k, x in enumerate(XS):
        y = run(net, [f"x{k}"]).value("t", 0, "y")
        if x <= Fraction(1, 2) or x >= 1:
            assert y == int(x > Fraction(1, 2)), x
        else:
            assert 0 < y < 1 and y == (x - Fraction(1, 2)) / Fraction(1, 2)


# --------------------------------------------------------------------------- errors


def test_bad_arguments_are_refused_with_the_fix() -> None:
    with pytest.raises(NetworkValidationError, match=r"mask='sideways' is not one of none, causal"):
        uniform_average("u", {"o": {"x": 1}}, mask="sideways")  # type: ignore[arg-type]
    with pytest.raises(NetworkValidationError, match=r"values=\{\} must be a non-empty mapping"):
        uniform_average("u", {})
    with pytest.raises(
        NetworkValidationError, match=r"values\['o'\]='x' must be a mapping \{in_dim: weight\}"
    ):
        uniform_average("u", {"o": "x"})  # type: ignore[dict-item]
    with pytest.raises(NetworkValidationError, match=r"side='up' must be 'left' or 'right'"):
        nearest("n", side="up", where={"b": 1}, values={"o": {"x": 1}})
    with pytest.raises(NetworkValidationError, match=r"where=\{\} must be a non-empty mapping"):
        nearest("n", side="left", where={}, values={"o": {"x": 1}})
    with pytest.raises(NetworkValidationError, match=r"position feature 'p' appears in where"):
        nearest("n", side="left", where={"p": 1}, values={"o": {"x": 1}})
    with pytest.raises(NetworkValidationError, match=r"give exactly one of query_dim .* and query"):
        select_position("s", key_dim="i", values={"o": {"x": 1}})
    with pytest.raises(NetworkValidationError, match=r"give exactly one of query_dim"):
        select_position("s", key_dim="i", query_dim="k", query=0, values={"o": {"x": 1}})
    with pytest.raises(
        NetworkValidationError, match=r"tie='middle' is not one of average, leftmost, rightmost"
    ):
        select_position("s", key_dim="i", query=0, values={"o": {"x": 1}}, tie="middle")  # type: ignore[arg-type]
    with pytest.raises(NetworkValidationError, match=r"attention layer 'l' has no heads"):
        attention("l")
    with pytest.raises(NetworkValidationError, match=r"has type str, not Head"):
        attention("l", "head")  # type: ignore[arg-type]
    with pytest.raises(
        NetworkValidationError, match=r"sublayers: .* has type Head; give AttentionLayers"
    ):
        sublayers(uniform_average("u", {"o": {"x": 1}}))  # type: ignore[arg-type]
    with pytest.raises(NetworkValidationError, match=r"outputs=\{\} must be a non-empty mapping"):
        boolean_ffn("f", {})
    with pytest.raises(
        NetworkValidationError,
        match=r"outputs\['y'\] contains 1, which has type int, not a gate circuit",
    ):
        boolean_ffn("f", {"y": 1})  # type: ignore[dict-item]
    with pytest.raises(
        NetworkValidationError,
        match=r"contains 'b', which has type str, not a gate circuit \(write var\('b'\)\)",
    ):
        boolean_ffn("f", {"y": AND(var("a"), "b")})  # type: ignore[arg-type]
    with pytest.raises(NetworkValidationError, match=r"margin=0 must be > 0"):
        threshold("t", "x", 1, "y", margin=0)
    with pytest.raises(
        InexactNumberError, match=r"is a float; the IR is exact. Write Fraction\(1, 2\)"
    ):
        threshold("t", "x", 0.5, "y")  # type: ignore[arg-type]
    with pytest.raises(InexactNumberError, match=r"is a float"):
        nearest("n", side="left", where={"b": 0.5}, values={"o": {"x": 1}})  # type: ignore[dict-item]


def test_a_gadget_that_writes_a_dim_the_network_lacks_is_refused_by_validation_naming_the_head() -> (
    None
):
    head: Head = uniform_average("ones", {"frac": {"isb": 1}})
    with pytest.raises(
        NetworkValidationError,
        match=r"head 'ones': value writes 'frac', which is not a residual dim",
    ):
        ab_net(*sublayers(attention("count", head)), out=(), readout="isb")
