"""A semantics-preserving B-RASP program optimizer: subformula sharing and simplification.

:func:`optimize` rewrites a :class:`~netproof.verifier.claims.rasp.brasp.Program` into one that
computes the same output vector on every word (so accepts the same language), with fewer
operations. It works bottom-up over the program's operations (operands before users, as
:func:`~netproof.verifier.claims.rasp.brasp.operations` lists them), so no recursion limit is
reached on programs of thousands of operations. The rules, each exactly sound under the semantics
of ``docs/rasp-semantics.md`` (the interpreter :func:`~netproof.verifier.claims.rasp.brasp.evaluate`):

- **sharing (hash-consing)**: two operations with the same kind, the same operands (after
  rewriting) and the same mask/side are one operation, whatever their names; ``P ∧ Q`` and
  ``Q ∧ P`` (likewise ∨) are one. Sound because an operation's vector is a function of its kind
  and its operands' vectors only (a name is printing, not semantics), and ∧, ∨ are commutative.
  The kept operation carries the first name met, so names stay readable.
- **constants**: ``¬0 = 1``, ``¬1 = 0``, ``P ∧ 1 = P``, ``P ∧ 0 = 0``, ``P ∨ 0 = P``,
  ``P ∨ 1 = 1`` (the Boolean identities, position by position, or pair (i, j) by pair inside an
  attention score or value); ``c.at_i = c.at_j = c`` for a constant c (a constant vector reads
  the same at every position).
- **Boolean**: ``¬¬P = P``, ``P ∧ P = P``, ``P ∨ P = P``, ``P ∧ ¬P = 0``, ``P ∨ ¬P = 1``
  (the identities hold for every value of P, so for every position or pair).
- **attention**: an attention operation whose score is the constant 0 selects no position, so its
  vector is its default D(i) at every i (the interpreter's "no chosen j" branch). One whose value
  V(i, j) is ``D.at_i`` (the default read at the query position) or a constant equal to the
  default yields D(i) whichever branch is taken, so it is D.
- **dead code**: only what the output reads is kept (the result is rebuilt from the output, so an
  operation that a rewrite made unreachable disappears).

The faithfulness test (``tests/constructions/test_optimize.py``) compares the optimized program
with the input on every word up to length 6 for every synthesized spec and for random programs,
and checks that an unsound rule injected on purpose is caught by that comparison.

May import: the vocabulary (``verifier.claims.rasp``).
"""

from __future__ import annotations

from dataclasses import dataclass

from netproof.verifier.claims.rasp import brasp as B

__all__ = ["Optimized", "optimize", "simplify_and", "simplify_not", "simplify_or"]


@dataclass(frozen=True)
class Optimized:
    """The optimized program and its operation counts before and after."""

    program: B.Program
    ops_before: int
    ops_after: int

    @property
    def saved(self) -> int:
        return self.ops_before - self.ops_after


def _is_const(x: B.BVec, value: bool) -> bool:
    return isinstance(x, B.Const) and x.value is value


def _negates(x: B.BVec, y: B.BVec) -> bool:
    return (isinstance(x, B.Not) and x.arg is y) or (isinstance(y, B.Not) and y.arg is x)


def simplify_not(arg: B.BVec) -> B.BVec | None:
    """¬c (a constant) and ¬¬P; ``None`` where no rule applies."""
    if isinstance(arg, B.Const):
        return B.Const(not arg.value)
    if isinstance(arg, B.Not):
        return arg.arg
    return None


def simplify_and(left: B.BVec, right: B.BVec) -> B.BVec | None:
    """P ∧ 1 = P, P ∧ 0 = 0, P ∧ P = P, P ∧ ¬P = 0 (operands already shared, so equal
    subformulas are the same object); ``None`` where no rule applies."""
    if _is_const(left, False) or _is_const(right, False):
        return B.FALSE
    if _is_const(left, True):
        return right
    if _is_const(right, True) or left is right:
        return left
    if _negates(left, right):
        return B.FALSE
    return None


def simplify_or(left: B.BVec, right: B.BVec) -> B.BVec | None:
    """P ∨ 0 = P, P ∨ 1 = 1, P ∨ P = P, P ∨ ¬P = 1; ``None`` where no rule applies."""
    if _is_const(left, True) or _is_const(right, True):
        return B.TRUE
    if _is_const(left, False):
        return right
    if _is_const(right, False) or left is right:
        return left
    if _negates(left, right):
        return B.TRUE
    return None


def simplify_attend(op: B.Attend) -> B.BVec | None:
    """A score that is the constant 0 gives the default; a value that is the default read at i,
    or the same constant as the default, gives the default. ``None`` where no rule applies."""
    if _is_const(op.score, False):
        return op.default
    if isinstance(op.value, B.AtI) and op.value.vec is op.default:
        return op.default
    value, default = op.value, op.default
    if isinstance(value, B.Const) and isinstance(default, B.Const) and value.value is default.value:
        return op.default
    return None


class _Sharer:
    def __init__(self) -> None:
        self.table: dict[tuple[object, ...], B.BVec] = {}
        self.ids: dict[int, int] = {}  # id(canonical node) -> a stable number
        self.keep: list[B.BVec] = []  # keeps the canonical nodes alive (ids stay unique)

    def num(self, x: B.BVec) -> int:
        return self.ids[id(x)]

    def share(self, key: tuple[object, ...], build: B.BVec) -> B.BVec:
        found = self.table.get(key)
        if found is not None:
            return found
        self.table[key] = build
        self.ids[id(build)] = len(self.keep)
        self.keep.append(build)
        return build

    def leaf(self, x: B.BVec) -> B.BVec:
        if isinstance(x, B.Const):
            return self.share(("const", x.value), x)
        assert isinstance(x, B.Token)
        return self.share(("token", x.symbol), x)

    def node(self, op: B.BVec, new: dict[B.BVec, B.BVec]) -> B.BVec:
        if isinstance(op, (B.Const, B.Token)):
            return self.leaf(op)
        if isinstance(op, (B.AtI, B.AtJ)):
            v = new[op.vec]
            if isinstance(v, B.Const):
                return v
            kind = "at_i" if isinstance(op, B.AtI) else "at_j"
            return self.share((kind, self.num(v)), type(op)(v))
        name = getattr(op, "name", None)
        if isinstance(op, B.Not):
            a = new[op.arg]
            s = simplify_not(a)
            if s is not None:
                return self.leaf(s) if isinstance(s, B.Const) else s
            return self.share(("not", self.num(a)), B.Not(a, name))
        if isinstance(op, (B.And, B.Or)):
            left, right = new[op.left], new[op.right]
            s = (simplify_and if isinstance(op, B.And) else simplify_or)(left, right)
            if s is not None:
                return self.leaf(s) if isinstance(s, B.Const) else s
            kind = "and" if isinstance(op, B.And) else "or"
            lo, hi = sorted((self.num(left), self.num(right)))
            return self.share((kind, lo, hi), type(op)(left, right, name))
        assert isinstance(op, B.Attend)
        built = B.Attend(op.side, op.mask, new[op.score], new[op.value], new[op.default], name)
        s = simplify_attend(built)
        if s is not None:
            return self.leaf(s) if isinstance(s, B.Const) else s
        key = (
            "attend",
            op.side,
            op.mask,
            self.num(built.score),
            self.num(built.value),
            self.num(built.default),
        )
        return self.share(key, built)


def optimize(program: B.Program) -> Optimized:
    """``program`` with shared subformulas, folded constants and simplified attention (the rules
    of this module's docstring); it accepts exactly the same words."""
    ops = B.operations(program.output)
    sharer = _Sharer()
    new: dict[B.BVec, B.BVec] = {}
    for op in ops:
        new[op] = sharer.node(op, new)
    output = new[program.output]
    named = getattr(program.output, "name", None)
    if named and isinstance(output, (B.Not, B.And, B.Or)) and output.name is None:
        output = output.named(named)
    out = B.Program(program.name, program.alphabet, output=output, empty=program.empty)
    return Optimized(out, len(ops), len(B.operations(out.output)))
