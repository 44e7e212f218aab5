"""Counting networks for every length: uniform causal heads read as integer counts, the network
read as a counter system over positions, and an inductive invariant over the integers.

A head that scores every position alike over the causal prefix writes, at position i, the
average of its value over positions 0..i: S(i)/(i+1) with S(i) = S(i−1) + v_i, an integer
where the value is an integer (:class:`~netproof.verifier.claims.counting.UniformCount`). An
FFN that compares such counts through a layer norm of [x; −x] is scale-free: its output on
v/u is its output on v, so it is proved once over the integers
(:class:`~netproof.verifier.claims.counting.CountComparison`). With both in place, the network at
one position is a function of the running sums S (integers), the symbol and nothing else: a
transition system over positions with integer state, whose runs are the words of every length.
Its product with the language's :class:`~netproof.verifier.claims.counting.CounterAutomaton`
has no reachable bad state (the accept bit differs from membership, or a lemma's assumption
fails) iff the network recognizes the language at every length. The inductive invariant comes
from candidate facts read off the states reached on short words (per mode of the Booleans, the
control state and the comparisons the system reads: the affine hull of the integers and their
bounds), kept by Houdini while inductive; else Spacer (z3's IC3/PDR over linear integer
arithmetic) gets the time left. Three certificate queries (initiation, consecution, safety, in
QF_LIA: any SMT solver re-checks them) make the invariant a proof.

- :func:`prove_counting_lemma`: one lemma over its whole domain (:class:`UniformCount`: the
  head's structure, no query; :class:`CountComparison`: one query over the integers, its layer
  norms of [x; −x] as signs with x ≠ 0 a proof obligation);
- :func:`counter_system`: the product system (:class:`CounterSystem`);
- :func:`prove_counting`: the recognition theorem for every length; where no invariant of the
  candidate facts is found, a misclassified word is looked for by unrolling up to the bound, and
  the word found is replayed exactly;
- :func:`rebuild_counting`: the queries rebuilt for a proof log's freshness check;
- for any :class:`CounterSystem` (:mod:`.same_language` builds one of two counter automata):
  :func:`houdini`, :func:`spacer`, :func:`certificate`, :func:`read_invariant`, :func:`unroll_word`.

A value of the step encoding is a Fraction (the same at every position), a Bool term (0/1), a
Real term, or a :class:`Scaled` Int term k (the value k/(i+1)); a block that mixes them in a way
no lemma covers is :class:`~netproof.verifier.smt.errors.Unsupported` (the claim is then unknown).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic` and :mod:`.lemmas`; z3 inside functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import (
    FFN,
    Affine,
    AttentionLayer,
    Classifier,
    Hardmax,
    LayerNorm,
    Network,
    Softmax,
    TokenEmbedding,
)
from netproof.verifier import smtlib
from netproof.verifier.claims import FollowsCounts, Language, Proved, Recognizes, Refuted, Unknown
from netproof.verifier.claims.counting import CountComparison, CounterAutomaton, UniformCount
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.phases import phase
from netproof.verifier.smtlib import VERDICT_OF, LemmaNode, Outcome, SmtQuery, to_smt2

from .arithmetic import Values, affine_map, consts, ffn_faithful
from .lemmas import METHOD, replay

__all__ = [
    "CERTIFICATE",
    "HOWS",
    "LOGIC",
    "CounterSystem",
    "Scaled",
    "certificate",
    "counter_system",
    "every_length_detail",
    "guard_term",
    "houdini",
    "is_counting",
    "prove_counting",
    "prove_counting_lemma",
    "read_invariant",
    "rebuild_counting",
    "spacer",
    "unroll_search",
    "unroll_word",
]

CountingLemma = UniformCount | CountComparison

CERTIFICATE = ("initiation", "consecution", "safety")
"""The names of the three certificate queries, in order (after ``"<claim> every n: "``)."""

TABLE_INPUTS = 10
"""An FFN that reads at most this many 0/1 dims (and no count) is encoded as its truth table,
each row computed exactly: its 0/1 outputs stay Booleans (a head may count them)."""

LOGIC = "QF_LIA"
"""The logic of the certificate queries (the state is integers and Booleans)."""


@dataclass(frozen=True, slots=True)
class Scaled:
    """The value k/(i+1) at position i, for the Int term k."""

    k: Any


# --------------------------------------------------------------------------- the lemmas


def _head(net: Network, layer: str, head: str) -> Any:
    for sub in net.layers:
        if isinstance(sub.block, AttentionLayer) and sub.block.name == layer:
            for h in sub.block.heads:
                if h.name == head:
                    return h
    raise ValueError(f"layer={layer!r}, head={head!r} is not a head of network {net.name!r}")


def _ffn(net: Network, name: str) -> FFN:
    for sub in net.layers:
        if isinstance(sub.block, FFN) and sub.block.name == name:
            return sub.block
    raise ValueError(f"block={name!r} is not an FFN of network {net.name!r}")


def _uniform(net: Network, lemma: UniformCount) -> LemmaNode:
    """Every key position of the causal mask scores alike: the query or the key map reads no
    dim (the score is a constant), and the head is not relative; the value has no bias."""
    h = _head(net, lemma.layer, lemma.head)
    why = []
    if h.mask != "causal":
        why.append(f"its mask is {h.mask!r}, not 'causal' (j <= i)")
    if not isinstance(h.normalizer, (Hardmax, Softmax)) or (
        isinstance(h.normalizer, Hardmax) and h.normalizer.tie != "average"
    ):
        why.append(f"its normalizer {h.normalizer} does not average equal scores")
    if h.relative_bias is not None or h.query_conv is not None or h.key_conv is not None:
        why.append("it has a relative bias or a convolution (scores then depend on the distance)")
    reads_query = any(w != 0 for row in h.query.weights for w in row)
    reads_key = any(w != 0 for row in h.key.weights for w in row)
    if reads_query and reads_key:
        why.append("its query and its key both read dims (the score may differ from key to key)")
    elif reads_key and any(b != 0 for b in h.query.bias):
        why.append(
            "its key reads dims and its query is not zero (the score may differ from key to key)"
        )
    if any(b != 0 for b in h.value.bias):
        why.append("its value map has a bias (the average is then no count over 1/(i+1))")
    if why:
        return LemmaNode(
            name=lemma.id,
            statement=f"{lemma.statement} [refuted: head {lemma.layer}.{lemma.head}: {'; '.join(why)}]",
            verdict="refuted",
        )
    return LemmaNode(
        name=lemma.id,
        statement=f"{lemma.statement} (by its structure: causal mask, one score for every key, an averaging normalizer, no value bias)",
        verdict="proved",
    )


def _comparison_steps(
    block: FFN, lemma: CountComparison
) -> tuple[Affine, list[tuple[str, str]], tuple[Any, ...]]:
    """The block's first map (bias-free: A(v/u) = A(v)/u), the pairs (x, −x) its layer norms
    (eps = 0) normalize, covering every output of that map (LN(y/u) = LN(y): the rest never sees
    u), and the steps after them; Unsupported where the block is not of this scale-free form."""
    steps = block.steps
    if not steps or not isinstance(steps[0], Affine):
        raise Unsupported(f"FFN {block.name!r} does not start with an affine map")
    first = steps[0]
    if any(b != 0 for b in first.bias):
        raise Unsupported(
            f"FFN {block.name!r}'s first map has a bias, so the block is not scale-free"
        )
    extra = sorted(set(first.inputs) - set(lemma.counts) - {lemma.unit})
    if extra:
        raise Unsupported(
            f"FFN {block.name!r} reads dims {extra} that lemma {lemma.id!r} declares neither counts nor its unit"
        )
    rows = {
        o: dict(zip(first.inputs, row, strict=True))
        for o, row in zip(first.outputs, first.weights, strict=True)
    }
    pairs: list[tuple[str, str]] = []
    k = 1
    while k < len(steps) and isinstance(steps[k], LayerNorm):
        ln = steps[k]
        assert isinstance(ln, LayerNorm)
        over = ln.over
        if ln.eps != 0 or over is None or len(over) != 2 or any(d not in rows for d in over):
            raise Unsupported(
                f"FFN {block.name!r}: a layer norm that is not over two outputs of its first map with eps = 0"
            )
        p, m = over
        if any(rows[p][d] != -rows[m][d] for d in first.inputs):
            raise Unsupported(
                f"FFN {block.name!r}: the layer norm over {p}, {m} is not over a pair (x, −x)"
            )
        pairs.append((p, m))
        k += 1
    covered = [d for pair in pairs for d in pair]
    if sorted(covered) != sorted(first.outputs) or len(set(covered)) != len(covered):
        raise Unsupported(
            f"FFN {block.name!r}: its layer norms do not normalize every output of its first map exactly once"
        )
    return first, pairs, steps[k:]


def _comparison(net: Network, lemma: CountComparison, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    block = _ffn(net, lemma.block)
    first, pairs, rest = _comparison_steps(block, lemma)
    written = rest[-1].outputs if rest and isinstance(rest[-1], Affine) else ()
    if sorted(written) != sorted(lemma.outputs):
        raise Unsupported(
            f"FFN {lemma.block!r} writes {sorted(written)}, lemma {lemma.id!r} states {sorted(lemma.outputs)}"
        )
    ctx = z3.Context()
    vals = Values(z3, ctx)
    v = {d: z3.Int(d, ctx) for d in lemma.counts}
    # u = 1: the unit dim holds 1, every count dim its integer (the block is scale-free)
    env: dict[str, Any] = {d: z3.ToReal(x) for d, x in v.items()}
    env[lemma.unit] = Fraction(1)
    y = affine_map(vals, first, env)
    undefined = []
    signs: dict[str, Any] = {}
    for p, m in pairs:
        yp = vals.arith(y[p])
        undefined.append(yp == 0)  # layer norm of a zero vector: 0/0
        signs[p] = z3.If(yp > 0, vals.num(Fraction(1)), vals.num(Fraction(-1)))
        signs[m] = z3.If(yp > 0, vals.num(Fraction(-1)), vals.num(Fraction(1)))
    got = ffn_faithful(vals, FFN(name=block.name, steps=rest), signs) if rest else {}
    wrong = []
    for d, (coefs, const) in lemma.outputs.items():
        unknown = sorted(set(coefs) - set(lemma.counts))
        if unknown:
            raise ValueError(
                f"lemma {lemma.id!r}: output {d!r} reads {unknown}, which are not among its counts {lemma.counts}"
            )
        form = z3.Sum(
            [z3.IntVal(0, ctx), *(z3.IntVal(int(w), ctx) * v[c] for c, w in coefs.items())]
        ) + int(const)
        spec = z3.If(form > 0, vals.num(Fraction(1)), vals.num(Fraction(0)))
        wrong.append(vals.arith(got[d]) != spec)
    solver = z3.Solver(ctx=ctx)
    solver.add(*vals.assertions)
    solver.add(z3.Or(*undefined, *wrong))
    query, model = smtlib.solve(
        solver,
        name=lemma.id,
        logic="QF_LIRA",
        timeout=timeout,
        reason_unsat=f"FFN {lemma.block} is scale-free and, on every integer count, never normalizes a zero vector and writes each comparison",
    )
    if query.result == "sat":
        shown = ", ".join(f"{d}={model.eval(x, model_completion=True)}" for d, x in v.items())
        query = SmtQuery(
            name=query.name,
            smt2=query.smt2,
            result="sat",
            reason=f"FFN {lemma.block} breaks the lemma at {shown}",
            seconds=query.seconds,
        )
    verdict = VERDICT_OF[query.result]
    return LemmaNode(
        name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)
    ), query.result == "unsat"


def prove_counting_lemma(
    net: Network, lemma: CountingLemma, *, timeout: float = 60.0
) -> tuple[LemmaNode, bool]:
    """Prove one counting lemma over its whole domain: its node, and whether it is proved. An
    unsupported block is ``unknown``."""
    try:
        if isinstance(lemma, UniformCount):
            node = _uniform(net, lemma)
            return node, node.verdict == "proved"
        return _comparison(net, lemma, timeout)
    except Unsupported as exc:
        return LemmaNode(
            name=lemma.id, statement=f"{lemma.statement} [unsupported: {exc}]", verdict="unknown"
        ), False


# --------------------------------------------------------------------------- the system


@dataclass
class CounterSystem:
    """The product of the network read over positions and the counter automaton: Int and Bool
    state variables (``state``, and ``primed`` after one token), the symbol ``sym`` of a step,
    ``init``, ``trans`` and ``bad``; ``ok`` (a lemma's assumptions held at this step) and
    ``mismatch`` (the accept bits differ, over the state) for unrolling."""

    z3: Any
    ctx: Any
    state: list[Any]
    primed: list[Any]
    init: Any
    trans: Any
    bad: Any
    step_ok: Any
    mismatch: Any
    sym: Any
    atoms: list[
        Any
    ]  # the linear comparisons the system reads, over the state (the modes of :func:`_sampled`)
    control: tuple[str, ...] = (
        "pos",
        "q",
    )  # the Int state variables that are control (a mode each value), not counts


class _Step:
    """One token of the network as constraints between the running sums before and after it."""

    def __init__(
        self,
        z3: Any,
        ctx: Any,
        net: Network,
        lemmas: Mapping[Any, CountingLemma],
        sums: dict[str, tuple[Any, Any]],
    ) -> None:
        self.z3, self.ctx, self.net, self.lemmas, self.sums = z3, ctx, net, lemmas, sums
        self.vals = Values(z3, ctx)
        self.side: list[Any] = []  # assumptions of the lemmas at this step
        self.updates: list[Any] = []  # the running sums after the step
        self.atoms: list[Any] = []  # the comparisons made, over the sums after the step
        self.final: dict[str, Any] = {}  # the residual values after the last sublayer

    def int_value(self, v: Any, where: str) -> Any:
        """An integer-valued value (0/1 Bool, an integer Fraction) as an Int term."""
        z3, ctx = self.z3, self.ctx
        if isinstance(v, Fraction):
            if v.denominator != 1:
                raise Unsupported(
                    f"{where} is {v}, not an integer (a running sum of it is no count)"
                )
            return z3.IntVal(int(v), ctx)
        if isinstance(v, Scaled) or not z3.is_bool(v):
            raise Unsupported(
                f"{where} is not 0/1 or an integer at every position (a running sum of it is no count)"
            )
        return z3.If(v, z3.IntVal(1, ctx), z3.IntVal(0, ctx))

    def run(self, token: str | None, sym: Any, *, readout: bool = True) -> Any:
        """The accept bit after this token (the token ``token``, or the word symbol ``sym``);
        the residual values after the last sublayer are kept in ``final`` (with ``readout``
        False, they are all: the accept bit is not encoded, and None is returned)."""
        z3, ctx, net = self.z3, self.ctx, self.net
        emb = net.embedding
        assert isinstance(emb, TokenEmbedding)
        if emb.positional:
            raise Unsupported(
                "the embedding has positional features; a counting network reads positions only through its uniform heads"
            )
        x: dict[str, Any] = {d: Fraction(0) for d in net.dims}
        table = {t: dict(row) for t, row in emb.table}
        if token is not None:
            for d, w in table[token].items():
                x[d] = Fraction(w)
        else:
            for d in net.dims:
                column = [Fraction(table[s].get(d, 0)) for s in emb.alphabet]
                if any(c not in (0, 1) for c in column):
                    raise Unsupported(f"the embedding writes {d!r} values other than 0 and 1")
                ones = [sym == a for a, c in enumerate(column) if c == 1]
                x[d] = (
                    Fraction(len(ones) == len(column))
                    if len(ones) in (0, len(column))
                    else self.vals.or_(ones)
                )
        for sub in net.layers:
            if sub.post_ln is not None:
                raise Unsupported(
                    f"sublayer {sub.block.name!r} has a layer norm after its residual"
                )
            out = self.block(sub.block, x)
            x = (
                {d: self.add(x[d], out.get(d, Fraction(0)), d) for d in net.dims}
                if sub.residual
                else {d: out.get(d, Fraction(0)) for d in net.dims}
            )
        if not readout:
            # kept only here: a term kept alive changes the ids later terms get, so the printed
            # form of a recognition proof's queries (the records rebuild them to the byte)
            self.final = x
            return None
        r = net.readout
        if not isinstance(r, Classifier) or r.position != -1:
            raise Unsupported("the readout is not a classifier at the last token")
        if any(
            isinstance(x.get(d), Scaled)
            for row in r.logit.weights
            for d, w in zip(r.logit.inputs, row, strict=True)
            if w != 0
        ):
            raise Unsupported("the readout reads a count over 1/(i+1)")
        read = [
            d for row in r.logit.weights for d, w in zip(r.logit.inputs, row, strict=True) if w != 0
        ]
        bools = sorted({d for d in read if not isinstance(x.get(d, Fraction(0)), Fraction)})
        if len(bools) <= TABLE_INPUTS and all(z3.is_bool(x[d]) for d in bools):
            # 0/1 inputs only: the accept bit as a Boolean (no real arithmetic in the system)
            rows = []
            for bits in range(1 << len(bools)):
                env = {d: x.get(d, Fraction(0)) for d in r.logit.inputs} | {
                    d: Fraction((bits >> k) & 1) for k, d in enumerate(bools)
                }
                logit = affine_map(Values(z3, ctx), r.logit, env)[r.logit.outputs[0]]
                assert isinstance(logit, Fraction), logit
                if logit > 0:
                    rows.append(
                        self.vals.and_(
                            [
                                x[d] if (bits >> k) & 1 else self.vals.not_(x[d])
                                for k, d in enumerate(bools)
                            ]
                        )
                    )
            return self.vals.or_(rows)
        logit = affine_map(self.vals, r.logit, x)[r.logit.outputs[0]]
        if isinstance(logit, Fraction):
            return z3.BoolVal(logit > 0, ctx)
        return self.vals.arith(logit) > 0

    def add(self, a: Any, b: Any, d: str) -> Any:
        if isinstance(b, Fraction) and b == 0:
            return a
        if isinstance(a, Fraction) and a == 0:
            return b
        if isinstance(a, Scaled) and isinstance(b, Scaled):
            return Scaled(a.k + b.k)
        if isinstance(a, Scaled) or isinstance(b, Scaled):
            raise Unsupported(f"dim {d!r} adds a count over 1/(i+1) to a value that is not one")
        return self.vals.lin([(Fraction(1), a), (Fraction(1), b)], Fraction(0))

    def block(self, block: Any, x: dict[str, Any]) -> dict[str, Any]:
        z3 = self.z3
        if isinstance(block, AttentionLayer):
            out: dict[str, Any] = {}
            for h in block.heads:
                lemma = self.lemmas.get(("head", block.name, h.name))
                if lemma is None:
                    raise Unsupported(
                        f"head {block.name}.{h.name} has no proved UniformCount lemma"
                    )
                if any(
                    isinstance(x.get(d), Scaled)
                    for row in h.value.weights
                    for d, w in zip(h.value.inputs, row, strict=True)
                    if w != 0
                ):
                    raise Unsupported(f"head {block.name}.{h.name} averages a count over 1/(i+1)")
                for o, v in affine_map(self.vals, h.value, x).items():
                    before, after = self.sums[f"{block.name}.{h.name}.{o}"]
                    self.updates.append(
                        after
                        == before
                        + self.int_value(v, f"the value {o!r} of head {block.name}.{h.name}")
                    )
                    out[o] = Scaled(after)
            return out
        assert isinstance(block, FFN)
        lemma = self.lemmas.get(("ffn", block.name))
        if isinstance(lemma, CountComparison):
            ints: dict[str, Any] = {}
            for d in (*lemma.counts, lemma.unit):
                v = x.get(d, Fraction(0))
                if isinstance(v, Fraction) and v == 0:
                    ints[d] = z3.IntVal(0, self.ctx)
                elif isinstance(v, Scaled):
                    ints[d] = v.k
                else:
                    raise Unsupported(
                        f"FFN {block.name}: dim {d!r} does not hold a count over 1/(i+1)"
                    )
            self.side.append(ints[lemma.unit] == 1)  # the unit dim holds 1/(i+1)
            got = {}
            for d, (coefs, const) in lemma.outputs.items():
                form = z3.Sum(
                    [
                        z3.IntVal(0, self.ctx),
                        *(z3.IntVal(int(w), self.ctx) * ints[c] for c, w in coefs.items()),
                    ]
                ) + int(const)
                got[d] = form > 0
                self.atoms.append(got[d])
            return got
        read = block.steps[0].inputs if block.steps and isinstance(block.steps[0], Affine) else ()
        if any(isinstance(x.get(d), Scaled) for d in read):
            raise Unsupported(
                f"FFN {block.name} reads a count over 1/(i+1) and has no proved CountComparison lemma"
            )
        bools = sorted({d for d in read if not isinstance(x.get(d, Fraction(0)), Fraction)})
        if len(bools) > TABLE_INPUTS or any(not z3.is_bool(x[d]) for d in bools):
            return ffn_faithful(self.vals, block, x)
        # 0/1 inputs only: the block is its truth table, each row computed exactly
        rows: dict[str, list[tuple[Any, Fraction]]] = {}
        for bits in range(1 << len(bools)):
            env = {d: x.get(d, Fraction(0)) for d in read} | {
                d: Fraction((bits >> k) & 1) for k, d in enumerate(bools)
            }
            here = self.vals.and_(
                [x[d] if (bits >> k) & 1 else self.vals.not_(x[d]) for k, d in enumerate(bools)]
            )
            for o, v in ffn_faithful(Values(z3, self.ctx), block, env).items():
                assert isinstance(v, Fraction), v
                rows.setdefault(o, []).append((here, v))
        out = {}
        for o, table in rows.items():
            if all(v in (0, 1) for _h, v in table):
                out[o] = (
                    self.vals.or_([h for h, v in table if v == 1])
                    if any(v == 1 for _h, v in table)
                    else Fraction(0)
                )
            else:
                term = self.vals.num(table[-1][1])
                for h, v in reversed(table[:-1]):
                    term = z3.If(h, self.vals.num(v), term)
                out[o] = term
        return out


def guard_term(
    z3: Any, ctx: Any, guard: Sequence[tuple[tuple[int, ...], int]], c: Sequence[Any]
) -> Any:
    return z3.And(
        [
            z3.BoolVal(True, ctx),
            *(
                z3.Sum(
                    [
                        z3.IntVal(0, ctx),
                        *(z3.IntVal(a, ctx) * x for a, x in zip(row, c, strict=True) if a),
                    ]
                )
                >= bound
                for row, bound in guard
            ),
        ]
    )


def _watched_wrong(step: _Step, watch: FollowsCounts, c1: Sequence[Any]) -> Any:
    """Whether some dim ``watch`` names holds, after the step's last sublayer, another value
    than ``watch`` says, given the counters ``c1`` of its automaton after the step (a Bool
    term); Unsupported where a dim's value is not of a form compared over the integers (a
    count dim that is no count over 1/(i+1), a comparison dim that is one)."""
    z3, ctx = step.z3, step.ctx
    counters = watch.automaton.counters
    wrong: list[Any] = []
    for d in watch.counts:
        if d not in step.final or d not in counters:
            raise Unsupported(f"dim {d!r} is not both a dim of the network and a counter")
        v, want = step.final[d], c1[counters.index(d)]
        if isinstance(v, Scaled):
            wrong.append(v.k != want)
        elif isinstance(v, Fraction) and v == 0:
            wrong.append(want != 0)
        else:
            raise Unsupported(
                f"dim {d!r} does not hold a count over 1/(i+1) after the last sublayer"
            )
    for d, guard in watch.comparisons:
        if d not in step.final:
            raise Unsupported(f"dim {d!r} is not a dim of the network")
        v, want = step.final[d], guard_term(z3, ctx, guard, c1)
        if isinstance(v, Scaled):
            raise Unsupported(f"dim {d!r}, a comparison, holds a count over 1/(i+1)")
        if isinstance(v, Fraction):
            wrong.append(z3.Not(want) if v == 1 else want if v == 0 else z3.BoolVal(True, ctx))
        elif z3.is_bool(v):
            wrong.append(v != want)
        else:
            one, zero = step.vals.num(Fraction(1)), step.vals.num(Fraction(0))
            wrong.append(step.vals.arith(v) != z3.If(want, one, zero))
    return z3.Or([z3.BoolVal(False, ctx), *wrong])


def counter_system(
    net: Network,
    automaton: CounterAutomaton,
    results: Sequence[tuple[CountingLemma, bool]],
    watch: FollowsCounts | None = None,
) -> CounterSystem:
    """The network with its proved counting lemmas in place, one token per step (the prefix
    tokens, then word symbols), in product with ``automaton`` (see the module docstring).

    With ``watch`` (whose automaton is ``automaton``), the system watches the dims it names
    instead of the accept bit: a Bool ``wrong`` is set after a word symbol where some watched
    dim differs from what ``watch`` says (``mismatch``), and a bad state is one after a word
    symbol with ``wrong``, a failed lemma assumption, or the automaton without a rule (dead);
    the readout is not encoded."""
    import z3

    emb = net.embedding
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported("counting proofs need a token embedding")
    if emb.suffix:
        raise Unsupported(
            "the network appends suffix tokens; a counting proof reads the accept bit at the last word symbol"
        )
    if automaton.symbols != len(emb.alphabet):
        raise Unsupported(
            f"the counter automaton reads {automaton.symbols} symbols, the network's alphabet has {len(emb.alphabet)}"
        )
    ctx = z3.Context()
    lemmas: dict[Any, CountingLemma] = {}
    for lemma, proved in results:
        if proved:
            lemmas[
                ("head", lemma.layer, lemma.head)
                if isinstance(lemma, UniformCount)
                else ("ffn", lemma.block)
            ] = lemma
    sums: dict[str, tuple[Any, Any]] = {}
    for sub in net.layers:
        if isinstance(sub.block, AttentionLayer):
            for h in sub.block.heads:
                for o in h.value.outputs:
                    name = f"S.{sub.block.name}.{h.name}.{o}"
                    sums[name[2:]] = (z3.Int(name, ctx), z3.Int(name + ".next", ctx))
    sym = z3.Int("sym", ctx)
    phase = len(emb.prefix)  # tokens read, up to the prefix's length
    P, P1 = z3.Int("pos", ctx), z3.Int("pos.next", ctx)
    acc, acc1 = z3.Bool("acc", ctx), z3.Bool("acc.next", ctx)
    viol, viol1 = z3.Bool("viol", ctx), z3.Bool("viol.next", ctx)
    q, q1 = z3.Int("q", ctx), z3.Int("q.next", ctx)
    wrong: Any = None
    wrong1: Any = None
    if watch is not None:  # made only here: a context's terms print in the order they were made
        wrong, wrong1 = z3.Bool("wrong", ctx), z3.Bool("wrong.next", ctx)
    c = [z3.Int(f"c.{n}", ctx) for n in automaton.counters]
    c1 = [z3.Int(f"c.{n}.next", ctx) for n in automaton.counters]
    alts = []
    step_ok = []
    atoms: list[Any] = [
        guard_term(z3, ctx, (atom,), c) for r in automaton.rules for atom in r.guard
    ]
    atoms += [guard_term(z3, ctx, (atom,), c) for _s, g in automaton.accepting for atom in g]
    if watch is not None:
        atoms += [guard_term(z3, ctx, (atom,), c) for _d, g in watch.comparisons for atom in g]
    for k in range(phase + 1):
        token = emb.prefix[k] if k < phase else None
        step = _Step(z3, ctx, net, lemmas, sums)
        accept = step.run(token, sym, readout=watch is None)
        watched: list[Any] = []
        ok = z3.And([z3.BoolVal(True, ctx), *step.side])
        if token is None:
            # the automaton reads the symbol: the first rule that applies, else dead (q = -1)
            nq, nc = z3.IntVal(-1, ctx), list(c)
            for r in reversed(automaton.rules):
                fire = z3.And(q == r.state, sym == r.symbol, guard_term(z3, ctx, r.guard, c))
                nq = z3.If(fire, z3.IntVal(r.target, ctx), nq)
                nc = [
                    z3.If(fire, x + r.add[i], y) for i, (x, y) in enumerate(zip(c, nc, strict=True))
                ]
            aut = [
                q1 == nq,
                *(x1 == x for x1, x in zip(c1, nc, strict=True)),
                sym >= 0,
                sym < len(emb.alphabet),
            ]
            where = [phase == P, phase == P1]
            if watch is not None:  # a dead automaton is bad, never a mismatch
                watched = [wrong1 == z3.And(q1 >= 0, _watched_wrong(step, watch, c1))]
        else:
            aut = [q1 == q, *(x1 == x for x1, x in zip(c1, c, strict=True))]
            where = [k == P, k + 1 == P1]
            if watch is not None:
                watched = [z3.Not(wrong1)]
        atoms += step.atoms
        alts.append(
            z3.And(
                *where,
                *step.vals.assertions,
                *step.updates,
                *aut,
                acc1 == (z3.BoolVal(False, ctx) if accept is None else accept),
                viol1 == z3.Or(viol, z3.Not(ok)),
                *watched,
            )
        )
        step_ok.append(z3.Implies(z3.And(*where), ok))
    before = [b for b, _a in sums.values()]
    after = [a for _b, a in sums.values()]
    state = [P, acc, viol, *([wrong] if watch else []), q, *c, *before]
    primed = [P1, acc1, viol1, *([wrong1] if watch else []), q1, *c1, *after]
    init = z3.And(
        P == 0,
        z3.Not(acc),
        z3.Not(viol),
        *([z3.Not(wrong)] if watch else []),
        q == automaton.start,
        *(x == 0 for x in c),
        *(b == 0 for b in before),
    )
    member = z3.And(
        q >= 0,
        z3.Or(
            [
                z3.BoolVal(False, ctx),
                *(z3.And(q == s, guard_term(z3, ctx, g, c)) for s, g in automaton.accepting),
            ]
        ),
    )
    mismatch = z3.And(phase == P, acc != member)
    bad = z3.And(phase == P, z3.Or(viol, acc != member))
    if watch is not None:
        mismatch = z3.And(phase == P, wrong)
        bad = z3.And(phase == P, z3.Or(viol, wrong, q < 0))
    unprime = list(zip(primed, state, strict=True))
    seen: dict[int, Any] = {}
    for a in atoms:
        a = z3.simplify(z3.substitute(a, *unprime))
        if not (z3.is_true(a) or z3.is_false(a)):
            seen.setdefault(a.get_id(), a)
    return CounterSystem(
        z3,
        ctx,
        state,
        primed,
        init,
        z3.Or(alts),
        bad,
        z3.And(step_ok),
        mismatch,
        sym,
        list(seen.values()),
    )


# --------------------------------------------------------------------------- the proof


def spacer(system: CounterSystem, timeout: float) -> tuple[str, Any]:
    """("safe", an inductive invariant over the state), ("unsafe", None) or ("unknown", why)."""
    z3, ctx = system.z3, system.ctx
    inv = z3.Function("Inv", *(v.sort() for v in system.state), z3.BoolSort(ctx))
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("timeout", max(1, int(timeout * 1000)))
    fp.register_relation(inv)
    free: dict[int, Any] = {}
    for f in (system.init, system.trans, system.bad):
        free.update(consts(z3, f))  # every variable of a rule, the step's auxiliary ones included
    fp.declare_var(*sorted(free.values(), key=str))
    fp.rule(inv(*system.state), system.init)
    fp.rule(inv(*system.primed), [inv(*system.state), system.trans])
    try:
        answer = fp.query(z3.And(inv(*system.state), system.bad))
    except z3.Z3Exception as exc:
        return "unknown", exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
    if answer == z3.unsat:
        return "safe", z3.substitute_vars(fp.get_cover_delta(-1, inv), *system.state)
    if answer == z3.sat:
        return "unsafe", None
    return "unknown", str(fp.reason_unknown())


def _reachable_sample(
    system: CounterSystem, symbols: int, depth: int, cap: int, deadline: float = math.inf
) -> list[tuple[Any, ...]]:
    """The states the system reaches on every word of up to ``depth`` tokens (at most ``cap``
    states), computed one step at a time from the transition relation (a step is a function of
    the state and the symbol); those found by ``deadline`` (``time.perf_counter()``) where it
    passes first (a sample only proposes candidate facts: fewer states propose more of them)."""
    z3 = system.z3
    solver = z3.Solver(ctx=system.ctx)
    solver.add(system.trans)

    def value(v: Any, m: Any) -> Any:
        x = m.eval(v, model_completion=True)
        return z3.is_true(x) if z3.is_bool(x) else x.as_long()

    first = z3.Solver(ctx=system.ctx)
    first.add(system.init)
    assert first.check() == z3.sat
    start = tuple(value(v, first.model()) for v in system.state)
    seen = {start}
    frontier = [start]
    for _ in range(depth):
        nxt = []
        for st in frontier:
            if time.perf_counter() > deadline:
                return sorted(seen, key=str)
            for a in range(symbols):
                solver.push()
                solver.add(
                    *(
                        v == (z3.BoolVal(x, system.ctx) if isinstance(x, bool) else x)
                        for v, x in zip(system.state, st, strict=True)
                    ),
                    system.sym == a,
                )
                if solver.check() == z3.sat:
                    m = solver.model()
                    new = tuple(value(v, m) for v in system.primed)
                    if new not in seen and len(seen) < cap:
                        seen.add(new)
                        nxt.append(new)
                solver.pop()
        frontier = nxt
    return sorted(seen, key=str)


def _affine_hull(points: Sequence[Sequence[int]]) -> list[tuple[tuple[int, ...], int]]:
    """Integer equalities a·p = b that every point satisfies, spanning all such equalities (the
    null space of the rows (p, −1), by exact elimination)."""
    if not points:
        return []
    k = len(points[0])
    rows = [[Fraction(x) for x in p] + [Fraction(-1)] for p in points]
    pivots: list[int] = []
    r = 0
    for col in range(k + 1):
        pick = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if pick is None:
            continue
        rows[r], rows[pick] = rows[pick], rows[r]
        lead = rows[r][col]
        rows[r] = [x / lead for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                f = rows[i][col]
                rows[i] = [x - f * y for x, y in zip(rows[i], rows[r], strict=True)]
        pivots.append(col)
        r += 1
        if r == len(rows):
            break
    out = []
    for free in (c for c in range(k + 1) if c not in pivots):
        vec = [Fraction(0)] * (k + 1)
        vec[free] = Fraction(1)
        for i, col in enumerate(pivots):
            vec[col] = -rows[i][free]
        scale = 1
        for x in vec:
            scale = scale * x.denominator // __import__("math").gcd(scale, x.denominator)
        ints = [int(x * scale) for x in vec]
        out.append((tuple(ints[:k]), ints[k]))
    return out


def _sampled(
    system: CounterSystem,
    symbols: int,
    depth: int = 8,
    cap: int = 3000,
    deadline: float = math.inf,
) -> tuple[list[Any], list[Any]]:
    """Candidate facts read off the states reached on short words, in two sets (coarse, fine).

    Fine: the states split into modes (the value of each Bool and of the control state ``q``
    and the token count ``pos``, and the truth of each comparison the system reads); per mode,
    the affine hull of its integer variables (equalities) and each variable's least and largest
    value seen; "the state is in one of the modes seen"; and, over every state seen at once, the
    Booleans that never change, the affine hull of every Int variable (the control ones
    included) and the control ones' ranges (facts that still speak of the modes short words
    never reach).

    Coarse: those facts over every state seen at once, and per value of **one** discrete
    variable (a Bool, a control state; per token count ``pos`` too, where the system has one):
    each other discrete variable and each comparison the system reads that has one value on
    every state seen with it, the affine hull of the integers and their least values.
    A mode fixes every discrete variable and comparison together: where "one of the modes
    seen" is not inductive (a combination only longer words reach), Houdini drops it, and with
    it the only fact that tied a control value to one comparison; the coarse facts state those
    ties one at a time (measured: with the fine facts alone Houdini found no invariant for the
    product of a C-RASP program whose control state is its output bit with a counting formula's
    automaton, "#(#(a) > #(b)) > #(#(b) > #(a))", in 266 s; with the coarse ones, 106 facts, all
    inductive, in 0.5 s after 6 s of sampling, load about 12). Houdini keeps those that are
    inductive."""
    z3, ctx = system.z3, system.ctx
    sample = _reachable_sample(system, symbols, depth, cap, deadline)
    discrete = [
        i
        for i, v in enumerate(system.state)
        if v.sort() == z3.BoolSort(ctx) or str(v) in system.control
    ]
    ints = [i for i, v in enumerate(system.state) if i not in discrete]
    modes: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    truths: dict[tuple[Any, ...], tuple[bool, ...]] = {}
    for st in sample:
        env = [
            (v, z3.BoolVal(x, ctx) if isinstance(x, bool) else z3.IntVal(x, ctx))
            for v, x in zip(system.state, st, strict=True)
        ]
        truth = tuple(z3.is_true(z3.simplify(z3.substitute(a, *env))) for a in system.atoms)
        truths[st] = truth
        modes.setdefault((*(st[i] for i in discrete), *truth), []).append(st)

    def hull_sum(coefs: Sequence[int], at: Sequence[int]) -> Any:
        return z3.Sum(
            [
                z3.IntVal(0, ctx),
                *(c * system.state[i] for c, i in zip(coefs, at, strict=True) if c),
            ]
        )

    def literal(i: int, x: Any) -> Any:
        v = system.state[i]
        return v if x is True else z3.Not(v) if x is False else v == x

    coarse: list[Any] = []
    # per token count (a prefix's positions differ from the word's), else over every state
    at_pos = 0 if str(system.state[0]) == "pos" and 0 in discrete else None
    groups = (
        [
            (literal(0, p), [st for st in sample if st[0] == p])
            for p in sorted({st[0] for st in sample})
        ]
        if at_pos is not None
        else [(z3.BoolVal(True, ctx), list(sample))]
    )
    for where, group in groups:
        for i in (d for d in discrete if d != at_pos):
            for x in sorted({st[i] for st in group}, key=str):
                lit = z3.And(where, literal(i, x))
                members = [st for st in group if st[i] == x]
                for j in discrete:
                    values = {st[j] for st in members}
                    if j not in (i, at_pos) and len(values) == 1:
                        coarse.append(z3.Implies(lit, literal(j, values.pop())))
                for k, a in enumerate(system.atoms):
                    seen = {truths[st][k] for st in members}
                    if len(seen) == 1:
                        coarse.append(z3.Implies(lit, a if seen.pop() else z3.Not(a)))
                pts = [[st[j] for j in ints] for st in members]
                for coefs, b in _affine_hull(pts):
                    coarse.append(z3.Implies(lit, hull_sum(coefs, ints) == b))
                for j, k in enumerate(ints):
                    coarse.append(z3.Implies(lit, system.state[k] >= min(p[j] for p in pts)))
    facts: list[Any] = []
    shapes = []
    for key, members in modes.items():
        parts = []
        for i, x in zip(discrete, key[: len(discrete)], strict=True):
            v = system.state[i]
            parts.append(v if x is True else z3.Not(v) if x is False else v == x)
        parts += [
            a if t else z3.Not(a) for a, t in zip(system.atoms, key[len(discrete) :], strict=True)
        ]
        mode = z3.And(parts)
        shapes.append(mode)
        pts = [[st[i] for i in ints] for st in members]
        for coefs, b in _affine_hull(pts):
            facts.append(
                z3.Implies(
                    mode,
                    z3.Sum(
                        [
                            z3.IntVal(0, ctx),
                            *(c * system.state[i] for c, i in zip(coefs, ints, strict=True) if c),
                        ]
                    )
                    == b,
                )
            )
        for j, i in enumerate(ints):
            lo, hi = min(p[j] for p in pts), max(p[j] for p in pts)
            facts += [
                z3.Implies(mode, system.state[i] >= lo),
                z3.Implies(mode, system.state[i] <= hi),
            ]
    facts.append(z3.Or(shapes))
    # the same facts over every sampled state at once (no mode): they still hold in the modes
    # short words never reach, where the facts of one mode say nothing
    everything: list[Any] = []
    for i, v in enumerate(system.state):
        if i in discrete and v.sort() == z3.BoolSort(ctx):
            seen = {st[i] for st in sample}
            if len(seen) == 1:
                everything.append(v if seen.pop() else z3.Not(v))
    numbers = [i for i, v in enumerate(system.state) if v.sort() != z3.BoolSort(ctx)]
    everywhere = [[st[i] for i in numbers] for st in sample]
    for coefs, b in _affine_hull(everywhere):
        everything.append(hull_sum(coefs, numbers) == b)
    for i in numbers:
        if i in discrete:  # the control state and the token count: their range
            lo, hi = min(st[i] for st in sample), max(st[i] for st in sample)
            everything += [system.state[i] >= lo, system.state[i] <= hi]
    return [*everything, *coarse], [*facts, *everything]


def houdini(system: CounterSystem, phases: int, timeout: float, symbols: int) -> tuple[str, Any]:
    """The strongest conjunction of candidate facts that is inductive (Houdini): the facts of
    :func:`_sampled` (read off the states reached on words of up to 8 symbols) and
    0 <= pos <= ``phases``; a candidate false in some initial state or after some step from the
    conjunction is dropped, many at once from each model, until the conjunction is inductive.
    ("safe", it) where it excludes every bad state, else ("unknown", why). The coarse facts
    first (a third of the time left after sampling at most: a few dozen facts, quick), then,
    where they do not exclude every bad state, the fine ones as alone before (an invariant of
    the fine set is still found wherever it was)."""
    z3 = system.z3
    deadline = time.perf_counter() + timeout
    bounds = (
        [z3.And(system.state[0] >= 0, system.state[0] <= phases)]
        if str(system.state[0]) == "pos"
        else []
    )
    coarse, fine = _sampled(system, symbols, deadline=deadline)
    now = time.perf_counter()
    if now > deadline:
        # the passes below would stop at once: say where the time went
        return "unknown", "sampling the reachable states for candidate facts took the whole budget"
    status, inv = _houdini_pass(system, [*bounds, *coarse], now + (deadline - now) / 3)
    if status == "safe":
        return status, inv
    return _houdini_pass(system, [*bounds, *fine], deadline)


def _houdini_pass(system: CounterSystem, candidates: list[Any], deadline: float) -> tuple[str, Any]:
    """One Houdini run over ``candidates`` until ``deadline`` (see :func:`houdini`)."""
    z3, ctx = system.z3, system.ctx
    primed = dict(zip(map(str, system.state), system.primed, strict=True))

    def prime(f: Any) -> Any:
        return z3.substitute(f, *((v, primed[str(v)]) for v in system.state))

    def falsified(assume: list[Any], cands: list[Any], use_primed: bool) -> list[Any] | None:
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
        solver.add(*assume)
        targets = [prime(c) if use_primed else c for c in cands]
        solver.add(z3.Or([z3.BoolVal(False, ctx), *(z3.Not(t) for t in targets)]))
        answer = solver.check()
        if answer == z3.unsat:
            return []
        if answer != z3.sat:
            return None
        m = solver.model()
        return [
            c
            for c, t in zip(cands, targets, strict=True)
            if not z3.is_true(m.eval(t, model_completion=True))
        ]

    for assume, use_primed in (([system.init], False), (None, True)):
        while True:
            if time.perf_counter() > deadline:
                return "unknown", "the candidate facts were not reduced to an inductive set in time"
            drop = falsified(
                assume if assume is not None else [*candidates, system.trans],
                candidates,
                use_primed,
            )
            if drop is None:
                return "unknown", "z3 gave no answer on a candidate fact"
            if not drop:
                break
            candidates = [c for c in candidates if not any(c.eq(d) for d in drop)]
    inv = z3.And(candidates)
    solver = z3.Solver(ctx=ctx)
    solver.add(inv, system.bad)
    if solver.check() == z3.unsat:
        return "safe", inv
    return "unknown", "the inductive candidate facts do not exclude every bad state"


def certificate(system: CounterSystem, invariant: Any) -> list[tuple[str, Any]]:
    """The three queries that make ``invariant`` (a formula over the state) a proof for every
    length, each to be unsat: initiation, consecution, safety."""
    z3, ctx = system.z3, system.ctx
    primed = z3.substitute(invariant, *zip(system.state, system.primed, strict=True))
    out = []
    for name, parts in zip(
        CERTIFICATE,
        (
            (system.init, z3.Not(invariant)),
            (invariant, system.trans, z3.Not(primed)),
            (invariant, system.bad),
        ),
        strict=True,
    ):
        solver = z3.Solver(ctx=ctx)
        solver.add(*parts)
        out.append((name, solver))
    return out


def unroll_word(
    system: CounterSystem, steps: int, max_len: int, timeout: float
) -> tuple[int, ...] | None:
    """The symbols (indices) of the shortest word up to ``max_len``, read after ``steps``
    prefix tokens, on which the system reaches a ``mismatch`` with every step's ``step_ok``
    holding (None if there is none, or z3 gave no answer in time: :func:`unroll_search` tells
    the two apart)."""
    return unroll_search(system, steps, max_len, timeout)[0]


def unroll_search(
    system: CounterSystem, steps: int, max_len: int, timeout: float
) -> tuple[tuple[int, ...] | None, bool]:
    """:func:`unroll_word`'s word, and whether the search was complete: True where it found
    the word or z3 answered unsat for every length up to ``max_len``, False where it stopped
    without an answer (so a None word then says nothing about the lengths it did not settle)."""
    z3, ctx = system.z3, system.ctx
    deadline = time.perf_counter() + timeout
    for n in range(max_len + 1):
        if time.perf_counter() >= deadline:
            return None, False
        frames = [
            [z3.Const(f"{v}@{t}", v.sort()) for v in system.state] for t in range(steps + n + 1)
        ]
        syms = [z3.Int(f"sym@{t}", ctx) for t in range(steps + n)]
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
        solver.add(z3.substitute(system.init, *zip(system.state, frames[0], strict=True)))
        for t in range(steps + n):
            pairs = [
                *zip(system.state, frames[t], strict=True),
                *zip(system.primed, frames[t + 1], strict=True),
                (system.sym, syms[t]),
            ]
            solver.add(z3.substitute(system.trans, *pairs), z3.substitute(system.step_ok, *pairs))
        solver.add(z3.substitute(system.mismatch, *zip(system.state, frames[-1], strict=True)))
        answer = solver.check()
        if answer == z3.sat:
            model = solver.model()
            word = tuple(model.eval(s, model_completion=True).as_long() for s in syms[steps:])
            return word, True
        if answer != z3.unsat:
            return None, False
    return None, True


def _unroll(
    system: CounterSystem, net: Network, language: Language, max_len: int, timeout: float
) -> tuple[Refuted | None, bool]:
    """The shortest word up to ``max_len`` that the system misclassifies with every lemma's
    assumption holding on the way, replayed exactly (None if there is none), and whether the
    search was complete (:func:`unroll_search`)."""
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    found, complete = unroll_search(system, len(emb.prefix), max_len, timeout)
    if found is None:
        return None, complete
    return replay(net, language, tuple(emb.alphabet[a] for a in found)), True


def prove_counting(
    net: Network, claim: Recognizes, lemmas: Sequence[Any], max_len: int, *, timeout: float = 60.0
) -> Outcome:
    """The recognition theorem for every length by counting (see the module docstring); the
    lemma tree's root is the claim. Unknown where a lemma is unproved, the network is no
    counter system, or no invariant is found; refuted by a word up to ``max_len`` replayed
    exactly where the system reaches a bad state."""
    started = time.perf_counter()
    automaton = claim.language.counters
    root_statement = f"{claim.statement} (every word with {claim.min_len} <= |w| <= {max_len})"
    counting = [x for x in lemmas if isinstance(x, (UniformCount, CountComparison))]
    nodes: list[LemmaNode] = []
    results: list[tuple[CountingLemma, bool]] = []
    for k, lemma in enumerate(counting, 1):
        phase(f"counting lemmas {k}/{len(counting)}: {lemma.id}")
        node, proved = prove_counting_lemma(net, lemma, timeout=timeout)
        nodes.append(node)
        results.append((lemma, proved))

    side = LemmaNode(name="side conditions", statement=SIDE_CONDITIONS, verdict="proved")

    def unknown(why: str, queries: Sequence[SmtQuery] = ()) -> Outcome:
        tree = LemmaNode(
            name=claim.id,
            statement=root_statement,
            verdict="unknown",
            queries=tuple(queries),
            children=(*nodes, side),
        )
        return Outcome(Unknown(METHOD, why), (), tree)

    if automaton is None:
        return unknown(f"unsupported: the language {claim.language.name} has no CounterAutomaton")
    if claim.min_len != 0:
        return unknown(
            "unsupported: a counting proof covers every word from the empty one (min_len = 0)"
        )
    try:
        system = counter_system(net, automaton, results)
    except Unsupported as exc:
        return unknown(f"unsupported: {exc}")
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    how = "candidate facts, Houdini"
    unrolled = True
    status, inv = houdini(
        system,
        len(emb.prefix),
        max(1.0, (timeout - (time.perf_counter() - started)) / 2),
        len(emb.alphabet),
    )
    if status != "safe":
        # no invariant of the candidate facts: a misclassified word up to the bound, if any, else Spacer
        found, unrolled = _unroll(
            system,
            net,
            claim.language,
            max_len,
            max(1.0, timeout - (time.perf_counter() - started)),
        )
        if found is not None:
            tree = LemmaNode(
                name=claim.id, statement=root_statement, verdict="refuted", children=(*nodes, side)
            )
            return Outcome(found, (), tree)
        how = "Spacer"
        status, inv = spacer(system, max(1.0, timeout - (time.perf_counter() - started)))
    if status == "unsafe":
        if not unrolled:
            return unknown(
                f"a bad state is reachable (Spacer); the unrolling up to length {max_len} got no answer in time, "
                "so a misclassified word of the bound is neither found nor excluded"
            )
        return unknown(
            f"a bad state is reachable, but no word of length <= {max_len} is misclassified (a longer one is, or a lemma's assumption fails); raise --max-n to look further"
        )
    if status != "safe":
        return unknown(f"Spacer: {inv} after {time.perf_counter() - started:.1f} s")
    # The certificate in a fresh system, around the invariant read back from its printed initiation
    # query: the proof log's rebuild (rebuild_counting) does the same, so its text is the same
    # (twice: a term's printed form depends on the order its context made terms in).
    for _ in range(2):
        text = to_smt2(certificate(system, inv)[0][1], logic=LOGIC)
        system = counter_system(net, automaton, results)
        inv = read_invariant(system, text)
    queries: list[SmtQuery] = []
    for name, solver in certificate(system, inv):
        text = to_smt2(solver, logic=LOGIC)
        began = time.perf_counter()
        answer, reason, _model = smtlib.check(
            solver, timeout=max(60.0, timeout - (began - started))
        )
        if answer == "unknown":
            return unknown(
                f"the invariant was found ({how}), but its query {name!r} was not answered ({reason})"
            )
        if answer != "unsat":
            raise EncoderBugError(
                f"the invariant ({how}) for {claim.id} fails its query {name!r} ({answer}): a bug in the counter system"
            )
        queries.append(
            SmtQuery(
                name=f"{claim.id} every n: {name}",
                smt2=text,
                result="unsat",
                reason=_REASONS[name],
                seconds=time.perf_counter() - began,
            )
        )
    unproved = [x.id for x, ok in results if not ok]
    if unproved:  # a lemma of a block the system never reads: no proof rests on it, but the detail counts lemmas proved
        return unknown(f"lemmas {', '.join(unproved)} are not proved")
    words = sum(len(claim.language.alphabet) ** m for m in range(max_len + 1))
    detail = every_length_detail(
        f"every word with 0 <= |w| <= {max_len}", len(results), claim.language.name, how
    )
    tree = LemmaNode(
        name=claim.id,
        statement=root_statement,
        verdict="proved",
        queries=tuple(queries),
        children=(*nodes, side),
    )
    return Outcome(Proved(METHOD, words, detail), (), tree)


SIDE_CONDITIONS = (
    "every lemma was applied only where its assumptions hold: the counts a head sums are integers at every position, "
    "and the unit a comparison reads holds 1/(i+1) (a failed assumption is a bad state of the counter system)"
)
"""The statement of the lemma tree's side-conditions node (the system checks them: ``viol``)."""

HOWS = ("candidate facts, Houdini", "Spacer")
"""How an invariant is found: the candidate facts (:func:`houdini`), else Spacer."""


def every_length_detail(head: str, lemmas: int, language: str, how: str) -> str:
    """The detail of a proof for every length (``head``: "every word with 0 <= |w| <= n")."""
    return (
        f"{head}, and every longer one: {lemmas} lemmas proved for every input, then, over the network with the lemmas in "
        f"place read as a counter system over positions (integer running sums), in product with {language}'s counter "
        f"automaton, an inductive invariant ({how}) and its three queries ({', '.join(CERTIFICATE)}), each unsat"
    )


def read_invariant(system: CounterSystem, text: str) -> Any:
    """The invariant of an initiation query's text (its last assertion is ``not Inv``), parsed
    in the system's context; ValueError where it is not one."""
    import z3

    try:
        assertions = z3.parse_smt2_string(text, ctx=system.ctx)
    except z3.Z3Exception as exc:
        raise ValueError(
            f"the recorded initiation query is not SMT-LIB2 that z3 reads ({exc})"
        ) from None
    last = assertions[len(assertions) - 1] if len(assertions) else None
    if last is None or not z3.is_not(last):
        raise ValueError("the recorded initiation query does not end with a negated invariant")
    return last.arg(0)


def is_counting(claim: Any, lemmas: Sequence[Any]) -> bool:
    """Whether a recognition claim's compositional proof is this module's: its language has a
    counter automaton and its construction declares counting lemmas."""
    return getattr(getattr(claim, "language", None), "counters", None) is not None and any(
        isinstance(x, (UniformCount, CountComparison)) for x in lemmas
    )


def rebuild_counting(
    net: Network,
    claim: Recognizes,
    lemmas: Sequence[Any],
    names: Sequence[str],
    recorded: Mapping[str, str] | None = None,
) -> tuple[dict[tuple[str, str], str], tuple[LemmaNode, ...]]:
    """The queries of a counting proof rebuilt for its proof log's freshness check, by (lemma
    tree node, query name), and the lemma nodes (the side conditions not included): the lemmas
    proved again, and the certificate rebuilt around the invariant read back from the recorded
    initiation query (``recorded``: query name -> text)."""
    nodes: list[LemmaNode] = []
    results: list[tuple[CountingLemma, bool]] = []
    for lemma in (x for x in lemmas if isinstance(x, (UniformCount, CountComparison))):
        node, ok = prove_counting_lemma(net, lemma)
        nodes.append(node)
        results.append((lemma, ok))
    out = {(node.name, q.name): q.smt2 for node in nodes for q in node.queries}
    first = f"{claim.id} every n: {CERTIFICATE[0]}"
    automaton = claim.language.counters
    if automaton is not None and first in names and recorded is not None and first in recorded:
        system = counter_system(net, automaton, results)
        for name, solver in certificate(system, read_invariant(system, recorded[first])):
            out[(claim.id, f"{claim.id} every n: {name}")] = to_smt2(solver, logic=LOGIC)
    return out, tuple(nodes)


_REASONS = {
    "initiation": "the invariant holds before the first token",
    "consecution": "reading one more token keeps the invariant",
    "safety": "no state of the invariant, after the prefix, has an accept bit other than membership or a failed lemma assumption",
}
