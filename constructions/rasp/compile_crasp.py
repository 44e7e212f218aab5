"""C-RASP compiled to a transformer with uniform causal attention and layer-norm signs, exactly.

The input is a start token ``BOS`` (position 0, dim ``BOS`` = 1) and the word (positions
1..n), so the empty word has a network too (its output at ``BOS`` is the declared membership of
the empty word). A first uniform causal head averages ``BOS``: the dim ``1/(i+1)``. A count
vector C is held as the fraction C(i)/(i+1): ``count(P)`` is a uniform head over j ≤ i (hardmax
over constant scores with ties averaged: exactly #_{j≤i} P(j)/(i+1), with P materialized as 0
at ``BOS``), the constant c is c·(1/(i+1)), and sums and integer multiples are linear maps:
folded into a block right after their operands, and written once, by the first comparison stage
after them, into a dim of their own (``sum1``... or their name) for every later block that
reads them. A comparison C1 < C2 holds iff C2 − C1 − 1/2 > 0 (integer counts), i.e. iff
x = (C2 − C1 − 1/2)/(i+1) > 0; an FFN writes [x; −x], a layer norm with eps = 0 turns it into
[sign x; −sign x] exactly (the variance is x², a perfect square; x ≠ 0 by the 1/2 shift: the
Chiang & Cholak trick), and (sign x + 1)/2 is the 0/1 result. Boolean operations are gate
circuits (¬x is 1 − x on 0/1 dims; nested ∧ and ∨ are one gate); P ? C1 : C2 is
C2 + relu(C1 − C2 − M(1 − P)) − relu(C2 − C1 − M(1 − P)) with M a static bound on
|C1/(i+1) − C2/(i+1)|.

After the ``1/(i+1)`` head, blocks are placed greedily in a repeating cycle of sublayers (gate
FFN, attention, comparison FFN), each operation in the first sublayer of its kind after its operands; empty ones are left
out. A gate stage whose circuits are d ReLU levels deep is d FFNs of one ReLU step each
(``S<k>.gate.1``...; a ReLU a later level reads is written into a dim ``S<k>.gate.r<m>``), and the
sums a comparison stage writes go into an FFN of one affine map of their own (``S<k>.sum``):
one FFN of depth d would carry every value it reads late or writes early through each of its
dense maps, which grows quadratically with a long stage. Residual dims are named after the operations (their names, or ``count1``, ``less1``,
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
    OR,
    Lin,
    Node,
    Relu,
    const,
    lin,
    relu,
    uniform_average,
    var,
)
from netproof.symbolic.gates import compile_ffn
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

__all__ = ["INV_I", "KINDS", "compile_crasp", "operation_dims"]

KINDS = ("gate", "attn", "cmp")
"""The cycle of sublayer kinds: sublayer k (from 1) has kind ``KINDS[(k - 1) % 3]``."""

INV_I = "1/(i+1)"
"""The residual dim holding 1/(i+1) (constants c are c·(1/(i+1)))."""


def operation_dims(program: Program) -> dict[Vec, str]:
    """The residual dim of every count, comparison and conditional of ``program``: its own name,
    else ``count1``, ``less1``, ``where1``... in order of definition."""
    counters = {"count": 0, "less": 0, "where": 0}
    out: dict[Vec, str] = {}
    for op in operations(program.output):
        if isinstance(op, (Count, Less, Where)):
            kind = type(op).__name__.lower()
            if op.name:
                out[op] = op.name
            else:
                counters[kind] += 1
                out[op] = f"{kind}{counters[kind]}"
    return out


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
        reserved = {f"Q_{s}" for s in program.alphabet} | {INV_I, "output", "BOS"}
        used: set[str] = set()
        for op, name in operation_dims(program).items():
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
        self.used, self.reserved = used, reserved
        self.given = {n for op in operations(program.output) if (n := getattr(op, "name", None))}
        self.fresh_counts: dict[str, int] = {}
        self.expansions: dict[tuple[Vec, int], dict[str, Fraction]] = {}
        self.bound: dict[Vec, Fraction] = {}
        self.circuits: dict[tuple[Vec, int, bool], Node] = {}
        for op in operations(program.output):
            self.visit(op)
        out_stage = _place("gate", self.stage[program.output])
        out = _and_not_bos(self.circuit(program.output, out_stage))
        self.put(out_stage, "output", OR(var("BOS"), out) if program.empty else out)

    def put(self, k: int, dim: str, item: object) -> None:
        self.blocks.setdefault(k, {})[dim] = item

    def visit(self, op: Vec) -> None:
        """Place ``op`` (operands are visited first by :func:`operations`) and, for a count,
        record a bound on |C(i)/(i+1)| over every word and position (a count is at most i)."""
        if isinstance(op, Count):
            self.bound[op] = Fraction(1)
        elif isinstance(op, Number):
            self.bound[op] = Fraction(abs(op.value))
        elif isinstance(op, Add):
            self.bound[op] = self.bound[op.left] + self.bound[op.right]
        elif isinstance(op, Scale):
            self.bound[op] = abs(op.k) * self.bound[op.arg]
        elif isinstance(op, Where):
            self.bound[op] = max(self.bound[op.then], self.bound[op.otherwise])
        if isinstance(op, (Token, Truth, Number)):
            self.stage[op] = 0
        elif isinstance(op, (Not, Count, Scale)):
            self.stage[op] = self.stage[op.arg]
        elif isinstance(op, (And, Or, Add)):
            self.stage[op] = max(self.stage[op.left], self.stage[op.right])
        if isinstance(op, Less):
            k = _place("cmp", max(self.stage[op.left], self.stage[op.right]))
            right, left = self.linear(op.right, k), self.linear(op.left, k)
            x = {d: right.get(d, Fraction(0)) - left.get(d, Fraction(0)) for d in {**right, **left}}
            x[INV_I] = x.get(INV_I, Fraction(0)) - Fraction(1, 2)
            self.put(k, self.dim[op], ("less", x))
            self.stage[op] = k
        elif isinstance(op, Where):
            k = _place(
                "gate", max(self.stage[op.cond], self.stage[op.then], self.stage[op.otherwise])
            )
            cond = self.circuit(op.cond, k)
            c1, c2 = self.linear(op.then, k), self.linear(op.otherwise, k)
            m = self.bound[op.then] + self.bound[op.otherwise]
            diff = {d: c1.get(d, Fraction(0)) - c2.get(d, Fraction(0)) for d in set(c1) | set(c2)}
            up = relu(lin(*((var(d), w) for d, w in diff.items()), (cond, m), bias=-m), "WHERE+")
            down = relu(lin(*((var(d), -w) for d, w in diff.items()), (cond, m), bias=-m), "WHERE-")
            self.put(
                k, self.dim[op], lin(*((var(d), w) for d, w in c2.items()), (up, 1), (down, -1))
            )
            self.stage[op] = k
        elif isinstance(op, Count):
            s = self.stage[op.arg]
            if isinstance(op.arg, Token):  # 0 at BOS already
                arg = f"Q_{op.arg.symbol}"
            else:
                s = _place("gate", s)
                arg = f"{self.dim[op]}.arg"
                self.put(s, arg, _and_not_bos(self.circuit(op.arg, s)))
            k = _place("attn", s)
            self.put(k, self.dim[op], arg)
            self.stage[op] = k

    def circuit(self, expr: Vec, at: int, negated: bool = False) -> Node:
        """The gate circuit of a Boolean vector (of its negation if ``negated``), for the gate FFN
        of stage ``at``. Every Boolean dim holds exactly 0 or 1, so ¬x is the affine 1 − x (no
        ReLU), and nested ∧ and ∨ (through ¬, by De Morgan) flatten into one AND or OR gate: one
        ReLU per alternation of ∧ and ∨. A Boolean operation computable in an earlier gate FFN is
        written there once, into a dim of its own (``bool1``, ``bool2``... or its name), and read
        from it: re-deriving it in every later FFN that reads it would make the network grow
        quadratically with a long program."""
        key = (expr, at, negated)
        if key not in self.circuits:
            self.circuits[key] = self._circuit(expr, at, negated)
        return self.circuits[key]

    def _circuit(self, expr: Vec, at: int, negated: bool) -> Node:
        if isinstance(expr, Truth):
            return const(1 if expr.value != negated else 0)
        if isinstance(expr, Token):
            x: Node = var(f"Q_{expr.symbol}")
        elif isinstance(expr, Less):
            x = var(self.dim[expr])
        elif not isinstance(expr, (Not, And, Or)):
            raise TypeError(
                f"{expr!r} is a count where a Boolean vector is needed; compare it, e.g. C > 0"
            )
        elif not self.inline(expr, at):
            if expr not in self.dim:
                home = _place("gate", self.stage[expr])
                self.dim[expr] = self.fresh(expr.name, "bool")
                self.put(home, self.dim[expr], self.circuit(expr, home))
            x = var(self.dim[expr])
        elif isinstance(expr, Not):
            return self.circuit(expr.arg, at, not negated)
        else:
            gate = "and" if isinstance(expr, And) != negated else "or"
            terms: dict[tuple[Vec, bool], Node | None] = {}
            self.flatten(expr, at, negated, gate, terms)
            return (AND if gate == "and" else OR)(*(t for t in terms.values() if t is not None))
        return _not(x) if negated else x

    def inline(self, expr: Vec, at: int) -> bool:
        """Whether the Boolean operation ``expr`` is computed inside the gate FFN of stage ``at``
        (rather than read from its dim, written by an earlier one)."""
        return _place("gate", self.stage[expr]) >= at

    def flatten(
        self,
        expr: Vec,
        at: int,
        negated: bool,
        gate: str,
        terms: dict[tuple[Vec, bool], Node | None],
    ) -> None:
        """The operands of one ``gate`` (``and`` or ``or``) equal to ``expr`` (negated if
        ``negated``), each (vector, sign) once (``None`` marks a vector flattened away): x ∧ (y ∧ z)
        is AND(x, y, z), ¬(x ∨ y) is AND(¬x, ¬y)."""
        if (expr, negated) in terms:
            return
        terms[(expr, negated)] = None
        if isinstance(expr, Not) and self.inline(expr, at):
            self.flatten(expr.arg, at, not negated, gate, terms)
        elif (
            isinstance(expr, (And, Or))
            and self.inline(expr, at)
            and ("and" if isinstance(expr, And) != negated else "or") == gate
        ):
            self.flatten(expr.left, at, negated, gate, terms)
            self.flatten(expr.right, at, negated, gate, terms)
        else:
            terms[(expr, negated)] = self.circuit(expr, at, negated)

    def fresh(self, name: str | None, prefix: str) -> str:
        """A residual dim for a Boolean operation or a sum: its own name, else ``bool1``,
        ``bool2``... (``sum1``, ``sum2``...), skipping the names the program gives."""
        if name is not None:
            if name in self.used or name in self.reserved or "." in name:
                raise ValueError(
                    f"program {self.program.name!r}: operation name {name!r} is used twice or clashes with the "
                    f"compiler's dims ({', '.join(sorted(self.reserved))}); rename it with .named(...)"
                )
            self.used.add(name)
            return name
        while True:
            self.fresh_counts[prefix] = self.fresh_counts.get(prefix, 0) + 1
            candidate = f"{prefix}{self.fresh_counts[prefix]}"
            if candidate not in self.used and candidate not in self.given:
                self.used.add(candidate)
                return candidate

    def linear(self, expr: Vec, at: int) -> dict[str, Fraction]:
        """C(i)/(i+1) as a linear map over residual dims, for the block of stage ``at``. A sum or
        multiple of two or more dims that a later block reads is written once, in the first
        comparison stage after its operands (its FFN ``S<k>.sum``), into a dim of its own (``sum1``, ``sum2``... or its
        name), and read from it: folding it into every block that reads it would make the
        network grow quadratically with a long chain of sums."""
        if isinstance(expr, (Count, Where)):
            return {self.dim[expr]: Fraction(1)}
        if isinstance(expr, Number):
            return {INV_I: Fraction(expr.value)}
        if not isinstance(expr, (Add, Scale)):
            raise TypeError(
                f"{expr!r} is a Boolean vector where a count is needed; count it with count(P)"
            )
        home = _place("cmp", self.stage[expr])
        if home < at:
            if expr not in self.dim:
                terms = self.linear(expr, home)
                if len(terms) < 2:
                    return terms
                self.dim[expr] = self.fresh(expr.name, "sum")
                self.put(home, self.dim[expr], ("sum", terms))
            return {self.dim[expr]: Fraction(1)}
        key = (expr, at)
        if key not in self.expansions:
            if isinstance(expr, Add):
                left, right = self.linear(expr.left, at), self.linear(expr.right, at)
                terms = {
                    d: left.get(d, Fraction(0)) + right.get(d, Fraction(0))
                    for d in {**left, **right}
                }
            else:
                terms = {d: expr.k * w for d, w in self.linear(expr.arg, at).items()}
            self.expansions[key] = {d: w for d, w in terms.items() if w != 0}
        return self.expansions[key]

    def build(self) -> Network:
        prog = self.program
        dims: list[str] = [f"Q_{s}" for s in prog.alphabet] + ["BOS", INV_I]
        inv = uniform_average(INV_I, {INV_I: {"BOS": 1}}, mask="causal")
        # A gate FFN carries a dim through its ReLU steps as one unit relu(x − b) where x ≥ b:
        # b = 0 for the 0/1 dims and the counts, −(the bound on |C/(i+1)|) for sums and wheres.
        lower = {
            d: -self.bound[op] if isinstance(op, (Add, Scale, Where)) else Fraction(0)
            for op, d in self.dim.items()
        }
        lower |= {d: Fraction(0) for d in dims}
        layers: list[Sublayer] = [
            Sublayer(block=AttentionLayer(name="S0.attn", heads=(inv,)), residual=True)
        ]
        for k in sorted(self.blocks):
            items = self.blocks[k]
            kind = KINDS[(k - 1) % 3]
            name = f"S{k}.{kind}"
            if kind == "gate":
                for sub_name, sub_items in _gate_levels(name, items):  # type: ignore[arg-type]
                    lower |= {d: Fraction(0) for d in sub_items if d not in lower}
                    dims += [d for d in sub_items if d not in items]
                    layers.append(
                        Sublayer(block=compile_ffn(sub_name, sub_items, lower=lower), residual=True)
                    )
                dims += list(items)
                continue
            if kind == "attn":
                heads = tuple(  # an attention item is the dim its head averages
                    uniform_average(d, {d: {str(arg): 1}}, mask="causal")
                    for d, arg in items.items()
                )
                block = AttentionLayer(name=name, heads=heads)
            else:
                # The comparisons, then the sums in an FFN of their own (one affine map: folded
                # into the comparison FFN's maps, a sum would be carried through its dense last map).
                less = {d: item for d, item in items.items() if item[0] == "less"}  # type: ignore[index]
                sums = {d: item[1] for d, item in items.items() if item[0] == "sum"}  # type: ignore[index]
                if less:
                    layers.append(Sublayer(block=self.comparisons(name, less), residual=True))  # type: ignore[arg-type]
                if sums:
                    layers.append(
                        Sublayer(block=FFN(name=f"S{k}.sum", steps=(affine(sums),)), residual=True)
                    )
                dims += list(items)
                continue
            dims += list(items)
            layers.append(Sublayer(block=block, residual=True))
        return Network(
            name=f"crasp.{prog.name}",
            dims=tuple(dims),
            embedding=token_embedding(
                prog.alphabet,
                {s: {f"Q_{s}": 1} for s in prog.alphabet} | {"BOS": {"BOS": 1}},
                prefix=("BOS",),
            ),
            layers=tuple(layers),
            readout=classifier("output", position=-1, bias=Fraction(-1, 2)),
            reference="Yang & Chiang 2024 (C-RASP); compiled by netproof.constructions.rasp",
        )

    @staticmethod
    def comparisons(name: str, items: dict[str, tuple[str, dict[str, Fraction]]]) -> FFN:
        """The comparison FFN: each C1 < C2 as x = (C2 − C1 − 1/2)/(i+1) → [x; −x] → layer norm
        → (sign x + 1)/2."""
        rows: dict[str, dict[str, Fraction]] = {}
        out: dict[str, dict[str, Fraction]] = {}
        bias: dict[str, Fraction] = {}
        for d, (_kind, x) in items.items():
            rows[f"{d}.+"] = x
            rows[f"{d}.-"] = {k: -w for k, w in x.items()}
            out[d], bias[d] = {f"{d}.+": Fraction(1, 2)}, Fraction(1, 2)
        steps: list[object] = [affine(rows)]
        steps += [layernorm(0, over=(f"{d}.+", f"{d}.-")) for d in items]
        steps.append(affine(out, bias=bias))
        return FFN(name=name, steps=tuple(steps))  # type: ignore[arg-type]


def _gate_levels(name: str, items: dict[str, Node]) -> list[tuple[str, dict[str, Node]]]:
    """A gate stage's circuits as one FFN per ReLU level, each of one ReLU step (named
    ``name.1``, ``name.2``...; just ``name`` when the circuits are one level deep).

    One FFN of depth d carries every value it reads late and writes early through each of its
    d ReLU steps, one dense map per step: a chain of Boolean operations in one stage costs
    quadratically in its length. Here a ReLU whose value a later level reads is written into a
    residual dim of its own (``name.r1``, ``name.r2``...: ≥ 0, so carried as one unit), the
    level that reads it reads that dim, and each output is written by the level of its deepest
    ReLU (level 1 if it has none)."""
    level: dict[Relu, int] = {}

    def visit(node: Node) -> int:
        if isinstance(node, Lin):
            return max((visit(t) for t, _c in node.terms), default=0)
        if isinstance(node, Relu):
            if node not in level:
                level[node] = 1 + visit(node.arg)
            return level[node]
        return 0

    placed = {d: max(1, visit(n)) for d, n in items.items()}
    depth = max(placed.values(), default=1)
    if depth == 1:
        return [(name, items)]
    # The latest level that reads each ReLU (from a deeper ReLU or from an output's map).
    read_at: dict[Relu, int] = {}

    def reads(node: Node, at: int) -> None:
        if isinstance(node, Lin):
            for t, _c in node.terms:
                reads(t, at)
        elif isinstance(node, Relu):
            read_at[node] = max(read_at.get(node, 0), at)

    for r in level:
        reads(r.arg, level[r])
    for d, n in items.items():
        reads(n, placed[d])
    home: dict[Relu, str] = {}
    for r in sorted((r for r in level if read_at.get(r, 0) > level[r]), key=lambda r: level[r]):
        home[r] = f"{name}.r{len(home) + 1}"
    memo: dict[tuple[int, int], Node] = {}

    def rewrite(node: Node, at: int) -> Node:
        if isinstance(node, Relu) and node in home and level[node] < at:
            return var(home[node])
        key = (id(node), at)
        if key in memo:
            return memo[key]
        if isinstance(node, Lin):
            out: Node = Lin(tuple((rewrite(t, at), c) for t, c in node.terms), node.bias)
        elif isinstance(node, Relu):
            out = Relu(rewrite(node.arg, level[node]), node.kind)  # type: ignore[arg-type]
        else:
            out = node
        memo[key] = out
        return out

    levels: list[tuple[str, dict[str, Node]]] = []
    for k in range(1, depth + 1):
        sub = {d: rewrite(r, level[r]) for d, r in ((home[r], r) for r in home if level[r] == k)}
        sub |= {d: rewrite(n, k) for d, n in items.items() if placed[d] == k}
        if sub:
            levels.append((f"{name}.{k}", sub))
    return levels


def _not(x: Node) -> Node:
    """¬x for a 0/1 value: the affine 1 − x."""
    return lin((x, -1), bias=1)


def _and_not_bos(x: Node) -> Node:
    """¬BOS ∧ x for a 0/1 value; into x's own gate when x is an AND: AND(x₁..x_m) is
    relu(Σx − m + 1), and ¬BOS ∧ AND(x₁..x_m) is relu(Σx − m + 1 − BOS)."""
    if getattr(x, "kind", None) == "AND":
        return relu(lin((x.arg, 1), (var("BOS"), -1)), "AND")  # type: ignore[union-attr]
    return AND(_not(var("BOS")), x)


def compile_crasp(program: Program) -> Network:
    """The exact transformer of ``program`` (see the module docstring)."""
    if not isinstance(program, Program):
        raise TypeError(
            f"compile_crasp needs a crasp.Program, got {type(program).__name__}; wrap the output vector in Program(name, alphabet, output)"
        )
    return _Compiler(program).build()
