"""C-RASP compiled to a transformer with uniform causal attention and layer-norm signs, exactly.

The input is a start token ``BOS`` (position 0, dim ``BOS`` = 1) and the word (positions
1..n), so the empty word has a network too (its output at ``BOS`` is the declared membership of
the empty word). A first uniform causal head averages ``BOS``: the dim ``1/(i+1)``. A count
vector C is held as the fraction C(i)/(i+1): ``count(P)`` is a uniform head over j ≤ i (hardmax
over constant scores with ties averaged: exactly #_{j≤i} P(j)/(i+1), with P materialized as 0
at ``BOS``), the constant c is c·(1/(i+1)), and sums and integer multiples are linear maps folded
into the block that reads them. A comparison C1 < C2 holds iff C2 − C1 − 1/2 > 0 (integer
counts), i.e. iff x = (C2 − C1 − 1/2)/(i+1) > 0; an FFN writes [x; −x], a layer norm with eps = 0 turns it into
[sign x; −sign x] exactly (the variance is x², a perfect square; x ≠ 0 by the 1/2 shift: the
Chiang & Cholak trick), and (sign x + 1)/2 is the 0/1 result. Boolean operations are gate
circuits; P ? C1 : C2 is C2 + relu(C1 − C2 − M(1 − P)) − relu(C2 − C1 − M(1 − P)) with M a
static bound on |C1/i − C2/i|.

After the ``1/(i+1)`` head, blocks are placed greedily in a repeating cycle of sublayers (gate
FFN, attention, comparison FFN), each operation in the first sublayer of its kind after its operands; empty ones are left
out. Residual dims are named after the operations (their names, or ``count1``, ``less1``,
``where1``... in order of definition) plus ``output``, read at the last token with bias −1/2.

>>> from netproof.verifier.claims.rasp.crasp import Program, token, count
>>> net = compile_crasp(Program("majority", ("a", "b"), output=count(token("a")) > count(token("b"))))
>>> [layer.block.name for layer in net.layers]
['S0.attn', 'S2.attn', 'S3.cmp', 'S4.gate']
>>> from netproof.symbolic.exact import run
>>> [run(net, w).accepted for w in ("", "ab", "aba")]
[False, False, True]
"""

from __future__ import annotations

from fractions import Fraction

from netproof.symbolic import (
    FFN,
    AttentionLayer,
    Network,
    Sublayer,
    affine,
    classifier,
    layernorm,
    token_embedding,
)
from netproof.symbolic.gadgets import (
    AND,
    NOT,
    OR,
    Node,
    boolean_ffn,
    const,
    lin,
    relu,
    uniform_average,
    var,
)
from netproof.verifier.claims.rasp.crasp import (
    Add,
    And,
    Count,
    Less,
    Not,
    Number,
    Or,
    Program,
    Scale,
    Token,
    Truth,
    Vec,
    Where,
    operations,
)

__all__ = ["INV_I", "KINDS", "compile_crasp"]

KINDS = ("gate", "attn", "cmp")
"""The cycle of sublayer kinds: sublayer k (from 1) has kind ``KINDS[(k - 1) % 3]``."""

INV_I = "1/(i+1)"
"""The residual dim holding 1/(i+1) (constants c are c·(1/(i+1)))."""


def _place(kind: str, after: int) -> int:
    k = after + 1
    while KINDS[(k - 1) % 3] != kind:
        k += 1
    return k


class _Compiler:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.stage: dict[Vec, int] = {}
        self.dim: dict[Vec, str] = {}
        self.arg_dim: dict[Count, str] = {}
        self.blocks: dict[int, dict[str, object]] = {}
        counters = {"count": 0, "less": 0, "where": 0}
        reserved = {f"Q_{s}" for s in program.alphabet} | {INV_I, "output", "BOS"}
        used: set[str] = set()
        for op in operations(program.output):
            if isinstance(op, (Count, Less, Where)):
                kind = type(op).__name__.lower()
                if op.name:
                    name = op.name
                else:
                    counters[kind] += 1
                    name = f"{kind}{counters[kind]}"
                if name in used:
                    raise ValueError(
                        f"program {program.name!r}: operation name {name!r} is used twice; give each count, "
                        "comparison and conditional its own name with .named(...)"
                    )
                if name in reserved or "." in name:
                    raise ValueError(
                        f"program {program.name!r}: operation name {name!r} clashes with the compiler's dims "
                        f"({', '.join(sorted(reserved))}) or contains '.'; rename it with .named(...)"
                    )
                used.add(name)
                self.dim[op] = name
        for op in operations(program.output):
            self.visit(op)
        out_stage = _place("gate", self.stage[program.output])
        out = AND(NOT(var("BOS")), self.circuit(program.output))
        self.put(out_stage, "output", OR(var("BOS"), out) if program.empty else out)

    def put(self, k: int, dim: str, item: object) -> None:
        self.blocks.setdefault(k, {})[dim] = item

    def visit(self, op: Vec) -> None:
        """Place ``op`` (operands are visited first by :func:`operations`)."""
        if isinstance(op, (Token, Truth, Number)):
            self.stage[op] = 0
        elif isinstance(op, (Not, Count, Scale)):
            self.stage[op] = self.stage[op.arg]
        elif isinstance(op, (And, Or, Add)):
            self.stage[op] = max(self.stage[op.left], self.stage[op.right])
        if isinstance(op, Less):
            k = _place("cmp", max(self.stage[op.left], self.stage[op.right]))
            self.put(k, self.dim[op], op)
            self.stage[op] = k
        elif isinstance(op, Where):
            k = _place("gate", max(self.stage[op.cond], self.stage[op.then], self.stage[op.otherwise]))
            cond = self.circuit(op.cond)
            c1, c2 = self.linear(op.then), self.linear(op.otherwise)
            m = _bound(op.then) + _bound(op.otherwise)
            diff = {d: c1.get(d, Fraction(0)) - c2.get(d, Fraction(0)) for d in set(c1) | set(c2)}
            up = relu(lin(*((var(d), w) for d, w in diff.items()), (cond, m), bias=-m), "WHERE+")
            down = relu(lin(*((var(d), -w) for d, w in diff.items()), (cond, m), bias=-m), "WHERE-")
            self.put(k, self.dim[op], lin(*((var(d), w) for d, w in c2.items()), (up, 1), (down, -1)))
            self.stage[op] = k
        elif isinstance(op, Count):
            s = self.stage[op.arg]
            if isinstance(op.arg, Token):  # 0 at BOS already
                arg = f"Q_{op.arg.symbol}"
            else:
                s = _place("gate", s)
                arg = f"{self.dim[op]}.arg"
                self.put(s, arg, AND(NOT(var("BOS")), self.circuit(op.arg)))
            k = _place("attn", s)
            self.put(k, self.dim[op], arg)
            self.stage[op] = k

    def circuit(self, expr: Vec) -> Node:
        if isinstance(expr, Token):
            return var(f"Q_{expr.symbol}")
        if isinstance(expr, Truth):
            return const(1 if expr.value else 0)
        if isinstance(expr, Less):
            return var(self.dim[expr])
        if isinstance(expr, Not):
            return NOT(self.circuit(expr.arg))
        if isinstance(expr, And):
            return AND(self.circuit(expr.left), self.circuit(expr.right))
        if isinstance(expr, Or):
            return OR(self.circuit(expr.left), self.circuit(expr.right))
        raise TypeError(f"{expr!r} is a count where a Boolean vector is needed; compare it, e.g. C > 0")

    def linear(self, expr: Vec) -> dict[str, Fraction]:
        """C(i)/i as a linear map over residual dims."""
        if isinstance(expr, (Count, Where)):
            return {self.dim[expr]: Fraction(1)}
        if isinstance(expr, Number):
            return {INV_I: Fraction(expr.value)}
        if isinstance(expr, Add):
            left, right = self.linear(expr.left), self.linear(expr.right)
            return {d: left.get(d, Fraction(0)) + right.get(d, Fraction(0)) for d in {**left, **right}}
        if isinstance(expr, Scale):
            return {d: expr.k * w for d, w in self.linear(expr.arg).items()}
        raise TypeError(f"{expr!r} is a Boolean vector where a count is needed; count it with count(P)")

    def build(self) -> Network:
        prog = self.program
        dims: list[str] = [f"Q_{s}" for s in prog.alphabet] + ["BOS", INV_I]
        inv = uniform_average(INV_I, {INV_I: {"BOS": 1}}, mask="causal")
        layers: list[Sublayer] = [Sublayer(block=AttentionLayer(name="S0.attn", heads=(inv,)), residual=True)]
        for k in sorted(self.blocks):
            items = self.blocks[k]
            kind = KINDS[(k - 1) % 3]
            name = f"S{k}.{kind}"
            if kind == "gate":
                block: object = boolean_ffn(name, items)  # type: ignore[arg-type]
            elif kind == "attn":
                heads = tuple(uniform_average(d, {d: {arg: 1}}, mask="causal") for d, arg in items.items())
                block = AttentionLayer(name=name, heads=heads)
            else:
                block = self.comparisons(name, items)  # type: ignore[arg-type]
            dims += list(items)
            layers.append(Sublayer(block=block, residual=True))  # type: ignore[arg-type]
        return Network(
            name=f"crasp.{prog.name}",
            dims=tuple(dims),
            embedding=token_embedding(
                prog.alphabet, {s: {f"Q_{s}": 1} for s in prog.alphabet} | {"BOS": {"BOS": 1}}, prefix=("BOS",)
            ),
            layers=tuple(layers),
            readout=classifier("output", position=-1, bias=Fraction(-1, 2)),
            reference="Yang & Chiang 2024 (C-RASP); compiled by netproof.constructions.rasp",
        )

    def comparisons(self, name: str, items: dict[str, Less]) -> FFN:
        rows: dict[str, dict[str, Fraction]] = {}
        for d, op in items.items():
            right, left = self.linear(op.right), self.linear(op.left)
            x = {k: right.get(k, Fraction(0)) - left.get(k, Fraction(0)) for k in {**right, **left}}
            x[INV_I] = x.get(INV_I, Fraction(0)) - Fraction(1, 2)
            rows[f"{d}.+"] = x
            rows[f"{d}.-"] = {k: -w for k, w in x.items()}
        steps: list[object] = [affine(rows)]
        steps += [layernorm(0, over=(f"{d}.+", f"{d}.-")) for d in items]
        steps.append(affine({d: {f"{d}.+": Fraction(1, 2)} for d in items}, bias={d: Fraction(1, 2) for d in items}))
        return FFN(name=name, steps=tuple(steps))  # type: ignore[arg-type]


def _bound(expr: Vec) -> Fraction:
    """A bound on |C(i)/(i+1)| for every word and position."""
    if isinstance(expr, Count):
        return Fraction(1)
    if isinstance(expr, Number):
        return Fraction(abs(expr.value))
    if isinstance(expr, Add):
        return _bound(expr.left) + _bound(expr.right)
    if isinstance(expr, Scale):
        return abs(expr.k) * _bound(expr.arg)
    if isinstance(expr, Where):
        return max(_bound(expr.then), _bound(expr.otherwise))
    raise TypeError(f"{expr!r} is not a count")


def compile_crasp(program: Program) -> Network:
    """The exact transformer of ``program`` (see the module docstring)."""
    if not isinstance(program, Program):
        raise TypeError(f"compile_crasp needs a crasp.Program, got {type(program).__name__}; wrap the output vector in Program(name, alphabet, output)")
    return _Compiler(program).build()
