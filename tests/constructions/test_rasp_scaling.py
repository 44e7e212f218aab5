"""Long programs: the compilers grow linearly with a chain of operations (an attention splits
over its own i-reads only; a C-RASP Boolean operation or sum read by a later block is written
once, into a dim of its own; nested C-RASP ∧, ∨ and ¬ flatten into one ReLU per alternation),
and a program's vectors hash in constant time (no recursion through a chain)."""

from __future__ import annotations

from itertools import product

import pytest

from netproof.constructions.rasp import compile_brasp, compile_crasp
from netproof.symbolic import FFN, Activation, Affine
from netproof.symbolic.exact import run
from netproof.symbolic.size import network_size
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C


def words(alphabet: str, max_len: int) -> list[str]:
    return ["".join(w) for n in range(max_len + 1) for w in product(alphabet, repeat=n)]


def brasp_chain(k: int) -> B.Program:
    """k attention operations, each reading the one before at j and a token at i."""
    a, b = B.token("a"), B.token("b")
    prev: B.BVec = a
    for t in range(k):
        side = B.leftmost if t % 2 else B.rightmost
        mask = ("past", "future", "all")[t % 3]
        prev = side(
            mask,
            score=prev.at_j & (a if t % 2 else b).at_i,
            value=prev.at_j | b.at_j,
            default=~prev,
        ).named(f"op{t}")
    return B.Program(f"chain{k}", ("a", "b"), output=prev)


def test_an_attention_reading_another_at_j_splits_over_its_own_i_reads_only() -> None:
    a, b = B.token("a"), B.token("b")
    inner = B.rightmost("past", score=a.at_i & b.at_j, value=B.TRUE).named("inner")  # reads a at i
    outer = B.leftmost("all", score=inner.at_j, value=B.TRUE).named("outer")  # reads nothing at i
    net = compile_brasp(B.Program("nested", ("a", "b"), output=outer))
    assert [d for d in net.dims if d.startswith("inner.q")] == ["inner.q0", "inner.q1"]
    assert [d for d in net.dims if d.startswith("outer.q")] == []  # a constant query, no dim
    program = B.Program("nested", ("a", "b"), output=outer)
    assert all(run(net, w).accepted == B.accepts(program, w) for w in words("ab", 6))


def test_a_brasp_chain_twice_as_long_compiles_to_a_network_twice_as_big() -> None:
    small, large = (
        network_size(compile_brasp(brasp_chain(20))),
        network_size(compile_brasp(brasp_chain(40))),
    )
    fixed = network_size(compile_brasp(brasp_chain(0)))  # the readout's two heads (last, verdict)
    assert (fixed.layers, fixed.heads) == (2, 2)
    assert (large.layers - fixed.layers, large.heads - fixed.heads) == (
        2 * (small.layers - fixed.layers),
        2 * (small.heads - fixed.heads),
    )
    assert large.dims - small.dims == small.dims - fixed.dims


def test_a_compiled_chain_computes_its_program() -> None:
    program = brasp_chain(7)
    net = compile_brasp(program)
    assert all(run(net, w).accepted == B.accepts(program, w) for w in words("ab", 5))


def test_a_program_of_three_hundred_operations_hashes_without_recursion_and_equal_programs_are_equal() -> (
    None
):
    first, again = brasp_chain(300), brasp_chain(300)
    assert first is not again and hash(first.output) == hash(again.output)
    assert (
        first.output == first.output and first.output != brasp_chain(299).output
    )  # a kept hash differs
    small = brasp_chain(30)
    assert (
        small == brasp_chain(30) and small.output == brasp_chain(30).output
    )  # structural equality
    assert (
        len(compile_brasp(brasp_chain(60)).layers) == 3 * 60 + 4
    )  # + output, last, verdict.pre, verdict


def crasp_with_shared_boolean() -> tuple[C.Program, C.BVec]:
    """A Boolean operation (``shared``) computed early and read again two stages later."""
    x, y = C.token("a"), C.token("b")
    shared = (C.count(x) > C.count(y)) & ~x
    later = C.count(shared) > 1  # one stage on
    return C.Program("shared", ("a", "b"), output=later & shared, empty=False), shared


def test_a_crasp_boolean_read_by_a_later_ffn_is_written_once_into_its_own_dim() -> None:
    program, _shared = crasp_with_shared_boolean()
    net = compile_crasp(program)
    assert "bool1" in net.dims
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 7))


def test_a_named_crasp_boolean_keeps_its_name_and_a_clash_is_refused() -> None:
    x, y = C.token("a"), C.token("b")
    shared = ((C.count(x) > C.count(y)) & ~x).named("ahead_not_a")
    program = C.Program("named", ("a", "b"), output=(C.count(shared) > 1) & shared)
    net = compile_crasp(program)
    assert "ahead_not_a" in net.dims  # bool1 is ~Q_a, computed in the first gate FFN
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 6))
    clash = ((C.count(x) > C.count(y)) & ~x).named("count1")
    with pytest.raises(
        ValueError,
        match=r"operation name 'count1' is used twice or clashes with the compiler's dims",
    ):
        compile_crasp(C.Program("clash", ("a", "b"), output=(C.count(clash) > 1) & clash))


def ffn_weights(net) -> int:  # type: ignore[no-untyped-def]
    """The entries of every FFN's affine maps (outputs × inputs)."""
    return sum(
        len(step.outputs) * len(step.inputs)
        for layer in net.layers
        if isinstance(layer.block, FFN)
        for step in layer.block.steps
        if isinstance(step, Affine)
    )


def first_reads(net, block: str) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """The residual dims the FFN ``block`` reads."""
    (ffn,) = [layer.block for layer in net.layers if layer.block.name == block]
    return ffn.steps[0].inputs


def output_ffn(net) -> FFN:  # type: ignore[no-untyped-def]
    """The last sublayer: the gate FFN that writes ``output``."""
    block = net.layers[-1].block
    assert isinstance(block, FFN) and block.steps[-1].outputs == ("output",)
    return block


def crasp_sum_chain(k: int) -> C.Program:
    """k stages, each a running sum of counts (a sum of the previous sum and a new count),
    compared and chosen by a where: before sums had dims of their own, every block folded the
    whole running sum, k dims, into its map."""
    x, y = C.token("a"), C.token("b")
    total: C.CVec = C.count(x) + C.count(y)
    flag: C.BVec = C.count(x) > C.count(y)
    for _ in range(k):
        total = total + C.count(flag)
        flag = total > C.where(flag, total - 1, C.count(y) * 2)
    return C.Program(f"sums{k}", ("a", "b"), output=flag)


def test_a_crasp_sum_read_by_a_later_block_is_written_once_into_its_own_dim_and_read_by_name() -> (
    None
):
    x, y = C.token("a"), C.token("b")
    both = C.count(x) + C.count(y) + 1  # folded into the comparison right after the counts
    ahead = both > C.count(y) * 3
    program = C.Program("sums", ("a", "b"), output=(C.where(ahead, both, C.count(x)) > 2) & ahead)
    net = compile_crasp(program)
    assert "sum1" in net.dims
    gate = next(
        layer.block.name
        for layer in net.layers
        if layer.block.name.endswith(".gate") and "where1" in layer.block.steps[-1].outputs
    )
    assert "sum1" in first_reads(net, gate) and "count1" not in first_reads(net, gate)
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 7))
    named = C.Program(
        "named", ("a", "b"), output=(C.where(ahead, both.named("total"), C.count(x)) > 2) & ahead
    )
    assert "total" in compile_crasp(named).dims


def test_a_crasp_chain_of_sums_twice_as_long_has_about_twice_the_ffn_weights_and_dims() -> None:
    small, large = compile_crasp(crasp_sum_chain(20)), compile_crasp(crasp_sum_chain(40))
    assert ffn_weights(large) <= 2.2 * ffn_weights(small)
    assert len(large.dims) <= 2.2 * len(small.dims)
    program = crasp_sum_chain(3)
    net = compile_crasp(program)
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 6))


def test_nested_crasp_conjunctions_and_negations_flatten_into_one_relu_per_alternation() -> None:
    x, y = C.token("a"), C.token("b")
    ahead = C.count(x) > C.count(y)
    program = C.Program("flat", ("a", "b"), output=~(x | ~ahead) & ~(~(~y)) & ahead)
    net = compile_crasp(program)
    out = output_ffn(net)
    assert sum(isinstance(step, Activation) for step in out.steps) == 1  # AND(¬BOS, ¬a, ¬b, ahead)
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 6))
    either = C.Program("alternate", ("a", "b"), output=(x & ahead) | (y & ~ahead))
    net = compile_crasp(either)
    # AND of an OR of ANDs: three ReLU levels, one FFN of one ReLU step each (no value carried
    # through a step it is not read in), each ReLU a later level reads in a dim of its own
    levels = [layer.block for layer in net.layers[-3:]]
    assert [f.name.rsplit(".", 1)[1] for f in levels] == ["1", "2", "3"] and levels[-1].steps[
        -1
    ].outputs == ("output",)
    assert [sum(isinstance(step, Activation) for step in f.steps) for f in levels] == [1, 1, 1]
    assert [f.steps[-1].outputs for f in levels[:2]] == [
        (f"{levels[0].name[:-2]}.r1", f"{levels[0].name[:-2]}.r2"),
        (f"{levels[0].name[:-2]}.r3",),
    ]
    assert all(run(net, w).accepted == C.accepts(either, w) for w in words("ab", 6))


def test_a_crasp_sum_shared_sixty_times_compiles_without_unfolding_the_sharing() -> None:
    x, y = C.token("a"), C.token("b")
    doubled: C.CVec = C.count(x) - C.count(y)
    for _ in range(60):
        doubled = doubled + doubled  # a DAG of 61 nodes, a tree of 2^61
    program = C.Program(
        "doubling",
        ("a", "b"),
        output=(doubled > 0) & C.where(doubled > 0, doubled, C.count(y)).eq(0) | ~y,
    )
    net = compile_crasp(program)
    assert all(run(net, w).accepted == C.accepts(program, w) for w in words("ab", 5))


def test_every_crasp_gate_ffn_has_one_relu_step_and_sums_have_an_ffn_of_one_affine_map() -> None:
    # A deep gate FFN carried every value through each of its dense steps: weights grew
    # quadratically with a long stage. One FFN per ReLU level and a sum FFN of one map keep the
    # FFN weights per operation flat.
    net = compile_crasp(crasp_sum_chain(12))
    gates = [layer.block for layer in net.layers if ".gate" in layer.block.name]
    assert gates and all(sum(isinstance(step, Activation) for step in f.steps) == 1 for f in gates)
    sums = [layer.block for layer in net.layers if layer.block.name.endswith(".sum")]
    assert sums and all(len(f.steps) == 1 and isinstance(f.steps[0], Affine) for f in sums)
    small, large = compile_crasp(crasp_sum_chain(10)), compile_crasp(crasp_sum_chain(40))
    assert ffn_weights(large) <= 4 * ffn_weights(small)
