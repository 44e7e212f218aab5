"""Gate library (Yao et al. 2021, Lemma A.1) and a compiler from gate circuits to ReLU FFNs.

A circuit is built from :func:`var` (a residual dim), affine combinations and ReLUs; the gates
are ReLU formulas:

- ``NOT(x) = relu(1 − x)``, ``AND(x₁..x_m) = relu(Σx − m + 1)``, ``OR(x₁..x_m) = 1 − relu(1 − Σx)``
  (the outer ReLU of the lemma is the identity on {0, 1} and is folded into the next map);
- ``XNOR(a, b) = AND(OR(a, NOT b), OR(NOT a, b))`` and ``SAME(x, y) = AND_b XNOR(x_b, y_b)``
  (the lemma's text has OR between the bits: the overbars were lost; it must be AND);
- ``GT(x, y; c) = relu(1 − relu(c − relu(x − y))/c)``: 1 if x ≥ y + c, 0 if x ≤ y, in (0, 1)
  between; ``EQ(x, y; c) = AND(NOT GT(x, y; c), NOT GT(y, x; c))``: 1 if x = y, 0 if |x − y| ≥ c.

:func:`compile_ffn` turns named outputs into an :class:`~netproof.symbolic.ir.FFN`: every ReLU goes to the
layer after its deepest operand, values needed later are carried through the layers (a ReLU
output is ≥ 0, so relu(x) = x carries it; a residual dim may be negative, so it is carried as
relu(x) and relu(−x), or as relu(x − b) alone when the caller knows x ≥ b: ``lower``), and affine
combinations are folded into the next map. The result is a
plain FFN of the IR: every interpreter runs it.

>>> from fractions import Fraction
>>> from netproof.symbolic.exact import run
>>> f = compile_ffn("and", {"y": AND(var("a"), var("b"))})
>>> [step.__class__.__name__ for step in f.steps]
['Affine', 'Activation', 'Affine']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .builders import RELU
from .errors import NetworkValidationError
from .ir import FFN, Affine, FFNStep
from .numbers import Number, as_fraction

__all__ = [
    "AND",
    "EQ",
    "GT",
    "NOR",
    "NOT",
    "OR",
    "SAME",
    "XNOR",
    "Node",
    "compile_ffn",
    "const",
    "lin",
    "relu",
    "var",
]


@dataclass(frozen=True, slots=True)
class Var:
    """A residual dim read by the circuit (any real value)."""

    name: str


@dataclass(frozen=True, slots=True)
class Lin:
    """An affine combination ``Σ coef·node + bias`` (folded into the next map when compiled)."""

    terms: tuple[tuple[Node, Fraction], ...]
    bias: Fraction
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # circuits are DAGs with much sharing: a hash recomputed through the tree on every
        # dict lookup costs time exponential in the depth, so each node keeps its own
        object.__setattr__(self, "_hash", hash((self.terms, self.bias)))

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class Relu:
    """relu(arg); ``kind`` names the gate for the printed form (``AND``, ``NOT``, ``GT.1``...)."""

    arg: Lin
    kind: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.arg, self.kind)))

    def __hash__(self) -> int:
        return self._hash


Node = Var | Lin | Relu


def var(name: str) -> Var:
    return Var(name)


def const(value: Number) -> Lin:
    return Lin((), as_fraction(value))


def lin(*terms: tuple[Node, Number], bias: Number = 0) -> Lin:
    """``Σ coef·node + bias``."""
    return Lin(tuple((node, as_fraction(c)) for node, c in terms), as_fraction(bias))


def relu(arg: Node, kind: str = "relu") -> Relu:
    return Relu(arg if isinstance(arg, Lin) else lin((arg, 1)), kind)


def NOT(x: Node) -> Relu:
    return relu(lin((x, -1), bias=1), "NOT")


def AND(*xs: Node) -> Node:
    if not xs:
        return const(1)
    if len(xs) == 1:
        return xs[0]
    return relu(lin(*((x, 1) for x in xs), bias=1 - len(xs)), "AND")


def OR(*xs: Node) -> Node:
    if not xs:
        return const(0)
    if len(xs) == 1:
        return xs[0]
    return lin((relu(lin(*((x, -1) for x in xs), bias=1), "NOR"), -1), bias=1)


def NOR(*xs: Node) -> Node:
    if not xs:
        return const(1)
    return relu(lin(*((x, -1) for x in xs), bias=1), "NOR")


def XNOR(a: Node, b: Node) -> Node:
    return AND(OR(a, NOT(b)), OR(NOT(a), b))


def SAME(xs: Sequence[Node], ys: Sequence[Node]) -> Node:
    """1 iff the bit vectors are equal (AND of XNORs; 1 for zero bits)."""
    if len(xs) != len(ys):
        raise NetworkValidationError(
            f"SAME needs vectors of one length, got {len(xs)} and {len(ys)}"
        )
    return AND(*(XNOR(a, b) for a, b in zip(xs, ys, strict=True)))


def GT(x: Node, y: Node, c: Number) -> Relu:
    """GreaterThan with margin c > 0: 1 if x ≥ y + c, 0 if x ≤ y."""
    cq = as_fraction(c, "c")
    if cq <= 0:
        raise NetworkValidationError(f"GT needs c > 0, got c={cq}")
    r1 = relu(lin((x, 1), (y, -1)), "GT.1")
    r2 = relu(lin((r1, -1), bias=cq), "GT.2")
    return relu(lin((r2, -1 / cq), bias=1), "GT")


def EQ(x: Node, y: Node, c: Number) -> Node:
    """Equal with margin c > 0: 1 if x = y, 0 if |x − y| ≥ c."""
    return AND(NOT(GT(x, y, c)), NOT(GT(y, x, c)))


# --------------------------------------------------------------------------- compiler


def _expand(node: Node) -> tuple[dict[Var | Relu, Fraction], Fraction]:
    """``node`` as an affine map over Vars and Relus."""
    if isinstance(node, (Var, Relu)):
        return {node: Fraction(1)}, Fraction(0)
    coeffs: dict[Var | Relu, Fraction] = {}
    bias = node.bias
    for sub, c in node.terms:
        inner, b = _expand(sub)
        bias += c * b
        for k, v in inner.items():
            coeffs[k] = coeffs.get(k, Fraction(0)) + c * v
    return {k: v for k, v in coeffs.items() if v != 0}, bias


def compile_ffn(
    name: str, outputs: Mapping[str, Node], *, lower: Mapping[str, Number] | None = None
) -> FFN:
    """A ReLU FFN that writes each residual dim in ``outputs`` with the value of its circuit.

    ``lower`` gives lower bounds b of residual dims that hold x ≥ b at every position (0 for a
    0/1 dim): such a dim is carried through a ReLU step as the one unit relu(x − b) (b added back
    in the next map) instead of the two units relu(x) and relu(−x).
    """
    floor = {d: as_fraction(b, f"lower[{d!r}]") for d, b in (lower or {}).items()}
    level: dict[Relu, int] = {}
    order: list[Relu] = []
    index: dict[Relu, int] = {}

    def visit(node: Node) -> int:
        if isinstance(node, Var):
            return 0
        if isinstance(node, Lin):
            return max((visit(s) for s, _ in node.terms), default=0)
        if node not in level:
            level[node] = 1 + visit(node.arg)
            index[node] = len(order)
            order.append(node)
        return level[node]

    out_maps = {o: _expand(n) for o, n in outputs.items()}
    for n in outputs.values():
        visit(n)
    depth = max(level.values(), default=0)
    # The last layer that reads each signal: a ReLU at level ℓ reads its operands at layer ℓ; the
    # output map reads at layer depth + 1.
    last_use: dict[Var | Relu, int] = {}
    maps = {r: _expand(r.arg) for r in order}
    for r in order:
        for k in maps[r][0]:
            last_use[k] = max(last_use.get(k, 0), level[r])
    for coeffs, _b in out_maps.values():
        for k in coeffs:
            last_use[k] = max(last_use.get(k, 0), depth + 1)

    def unit(sig: Var | Relu, layer: int, sign: int = 1) -> str:
        if isinstance(sig, Var):
            return f"L{layer}:{'+' if sign > 0 else '−'}{sig.name}"
        return f"L{level[sig]}.{index[sig]}:{sig.kind}"

    steps: list[FFNStep] = []
    # ``avail`` maps each signal to how it is read from the previous layer: a list of
    # (unit name, coefficient) and a constant whose combination is the signal's value.
    avail: dict[Var | Relu, _Reads] = {
        v: ([(v.name, Fraction(1))], Fraction(0)) for v in last_use if isinstance(v, Var)
    }
    for layer in range(1, depth + 1):
        rows: dict[str, dict[str, Fraction]] = {}
        bias: dict[str, Fraction] = {}
        new_avail: dict[Var | Relu, _Reads] = {}
        for r in order:
            if level[r] != layer:
                continue
            coeffs, b = maps[r]
            rows[unit(r, layer)], const_ = _combine(coeffs, avail)
            bias[unit(r, layer)] = b + const_
            new_avail[r] = ([(unit(r, layer), Fraction(1))], Fraction(0))
        for sig, (reads, offset) in avail.items():
            if last_use.get(sig, 0) <= layer:
                continue
            if isinstance(sig, Var) and sig.name in floor:
                carry = unit(sig, layer, 1)
                rows[carry] = dict(reads)
                bias[carry] = offset - floor[sig.name]
                new_avail[sig] = ([(carry, Fraction(1))], floor[sig.name])
            elif isinstance(sig, Var):
                pos, neg = unit(sig, layer, 1), unit(sig, layer, -1)
                rows[pos] = dict(reads)
                rows[neg] = {u: -w for u, w in reads}
                if offset:
                    bias[pos], bias[neg] = offset, -offset
                new_avail[sig] = ([(pos, Fraction(1)), (neg, Fraction(-1))], Fraction(0))
            else:
                carry = f"L{layer}:carry({unit(sig, layer)})"
                rows[carry] = dict(reads)
                new_avail[sig] = ([(carry, Fraction(1))], Fraction(0))
        steps.append(_dense(rows, bias))
        steps.append(RELU)
        avail = new_avail
    final = {o: _combine(coeffs, avail) for o, (coeffs, _b) in out_maps.items()}
    steps.append(
        _dense(
            {o: row for o, (row, _c) in final.items()},
            {o: b + final[o][1] for o, (_c, b) in out_maps.items()},
        )
    )
    return FFN(name=name, steps=tuple(steps))


_Reads = tuple[list[tuple[str, Fraction]], Fraction]
"""How a signal is read from the previous layer: Σ coefficient·unit + constant."""


def _combine(
    coeffs: Mapping[Var | Relu, Fraction], avail: Mapping[Var | Relu, _Reads]
) -> tuple[dict[str, Fraction], Fraction]:
    """``Σ coef·signal`` as weights on the units the previous layer holds the signals in, and a
    constant (the lower bounds of signals carried as relu(x − b))."""
    row: dict[str, Fraction] = {}
    const_ = Fraction(0)
    for sig, c in coeffs.items():
        units, offset = avail[sig]
        const_ += c * offset
        for u, w in units:
            row[u] = row.get(u, Fraction(0)) + c * w
    return row, const_


def _dense(rows: Mapping[str, Mapping[str, Fraction]], bias: Mapping[str, Fraction]) -> Affine:
    """An Affine from sparse rows, inputs in order of first appearance."""
    inputs = tuple(dict.fromkeys(k for row in rows.values() for k in row))
    return Affine(
        inputs=inputs,
        outputs=tuple(rows),
        weights=tuple(tuple(row.get(i, Fraction(0)) for i in inputs) for row in rows.values()),
        bias=tuple(bias.get(o, Fraction(0)) for o in rows),
    )
