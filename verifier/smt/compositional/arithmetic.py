"""The faithful value arithmetic of the compositional prover.

Every value of a network on a symbolic word is a :class:`~fractions.Fraction` (it does not
depend on the word), a Bool term (a dim known to be 0 or 1), a Real or Int term, or, in a query
over several lengths, a positional placeholder (:class:`Pos`). :class:`Values` makes the terms
(Boolean connectives through z3's C API, linear sums whose many Bools become one Int count,
ReLU/σ/step as case splits, named definitions that keep every term shallow) and reads a lemma's
sympy formulas (:func:`sympy_to_z3`); :func:`affine_map` and :func:`ffn_faithful` are the IR's
affine maps and FFNs over such values. Two small helpers that every encoding of the package
shares live here too: :func:`consts` (the uninterpreted constants of a term) and
:func:`commutative` (an automaton whose state is a function of the symbol counts).

May import: :mod:`netproof.symbolic` (the IR), the claims vocabulary and
:mod:`netproof.verifier.smt.errors`; sympy inside functions, z3 handed in as an argument. No
other module of :mod:`netproof.verifier.smt.compositional`: they all build on this one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, assert_never

from netproof.symbolic import FFN, Activation, Affine, LayerNorm
from netproof.verifier.claims import Automaton
from netproof.verifier.smt.errors import Unsupported

COUNT_AT_LEAST = 4
"""A sum of at least this many Bools with one coefficient becomes an Int count (one variable,
shared by every sum of the same Bools, e.g. a uniform head's output and the automaton's count)."""


LENGTH_FREE_FEATURES = frozenset(
    {"1", "i", "i+1", "1/i", "1/i^2", "cos(iπ)", "I[i=0]", "I[i=1]", "1/2^i"}
)
"""Positional features whose value at a fixed index does not depend on the length (the rest, and
any feature a user registers, are treated as length-dependent)."""


@dataclass(frozen=True, slots=True)
class Pos:
    """A positional value in a query over a range of lengths: ``base + Σ coef·feature(i, N)``
    at index ``i`` of a word whose length (hence N) is symbolic. It may only be carried along
    unchanged and compared with a lemma's positional side condition; any arithmetic on it is
    :class:`Unsupported` (the proof then falls back to one query per length)."""

    terms: tuple[tuple[str, Fraction], ...]
    base: Fraction
    index: int


def certainly_equal(a: Any, b: Any) -> bool:
    """Whether two values are the same for certain: equal Fractions or equal :class:`Pos`.
    A z3 term (a value that depends on the word: a mutated weight can make a positional dim
    one) is never certainly equal to anything here, and is never compared with a Python
    operator (``term != x`` is a z3 term, whose truth value Python cannot take): callers treat
    "not certainly equal" as a side condition that fails, and fall back soundly."""
    return (
        isinstance(a, Fraction | Pos)
        and isinstance(b, Fraction | Pos)
        and type(a) is type(b)
        and a == b
    )


def _no_pos(v: Any) -> Any:
    if isinstance(v, Pos):
        shown = " + ".join(f"{c}·{f}" for f, c in v.terms)
        raise Unsupported(
            f"a value depends on the symbolic length ({shown} at index {v.index}) in a query over several lengths"
        )
    return v


class Values:
    """Arithmetic on the three kinds of value: Fraction, Bool term (a 0/1 value), Real term."""

    def __init__(self, z3: Any, ctx: Any) -> None:
        self.z3 = z3
        self.ctx = ctx
        self._nums: dict[Fraction, Any] = {}
        self.assertions: list[Any] = []
        self._fresh = 0
        self._counts: dict[tuple[int, ...], Any] = {}
        self.definitions: dict[int, Any] = {}
        self._plans: dict[Any, tuple[Any, ...]] = {}
        self.arithmetic = False  # set once a numeral or a Real/Int variable is made
        self.inline = False  # named() returns the term itself (the steps of a transition system)

    # Bool connectives through z3's C API: the Python wrappers' sort coercion costs more than
    # the terms themselves when a lemma is instantiated at every position.

    def and_(self, args: Sequence[Any]) -> Any:
        return self._nary(self.z3.Z3_mk_and, args, True)

    def or_(self, args: Sequence[Any]) -> Any:
        return self._nary(self.z3.Z3_mk_or, args, False)

    def _nary(self, make: Any, args: Sequence[Any], unit: bool) -> Any:
        z3 = self.z3
        if not args:
            return z3.BoolVal(unit, self.ctx)
        if len(args) == 1:
            return args[0]
        arr = (z3.Ast * len(args))()
        for i, a in enumerate(args):
            arr[i] = a.as_ast()
        return z3.BoolRef(make(self.ctx.ref(), len(args), arr), self.ctx)

    def not_(self, a: Any) -> Any:
        return self.z3.BoolRef(self.z3.Z3_mk_not(self.ctx.ref(), a.as_ast()), self.ctx)

    def iff(self, a: Any, b: Any) -> Any:
        return self.z3.BoolRef(self.z3.Z3_mk_eq(self.ctx.ref(), a.as_ast(), b.as_ast()), self.ctx)

    def bool_ite(self, c: Any, a: Any, b: Any) -> Any:
        return self.z3.BoolRef(
            self.z3.Z3_mk_ite(self.ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()), self.ctx
        )

    def num(self, q: Fraction) -> Any:
        self.arithmetic = True
        v = self._nums.get(q)
        if v is None:
            v = self._nums[q] = self.z3.RealVal(str(q), self.ctx)
        return v

    def is_bool(self, v: Any) -> bool:
        return not isinstance(v, Fraction | Pos) and self.z3.is_bool(v)

    def boolish(self, v: Any) -> Any | None:
        """v as a Bool term if it is 0/1 (a Bool term, or the Fraction 0 or 1), else None."""
        if isinstance(v, Fraction):
            return self.z3.BoolVal(v == 1, self.ctx) if v in (0, 1) else None
        if isinstance(v, Pos):
            return None
        return v if self.z3.is_bool(v) else None

    def arith(self, v: Any) -> Any:
        if isinstance(v, Fraction):
            return self.num(v)
        _no_pos(v)
        if self.z3.is_bool(v):
            return self.z3.If(v, self.num(Fraction(1)), self.num(Fraction(0)))
        return v

    def lin(self, terms: Sequence[tuple[Fraction, Any]], bias: Fraction, scale: Any = None) -> Any:
        """Σ coef·value + bias (bias times ``scale`` when the position is scaled). Stays a
        Fraction when nothing depends on the word, and a Bool when the result is 0/1-valued
        (b, 1 − b)."""
        z3 = self.z3
        const = Fraction(0) if scale is not None else bias
        bools: list[tuple[Fraction, Any]] = []
        ariths: list[tuple[Fraction, Any]] = []
        for c, v in terms:
            if c == 0:
                continue
            if isinstance(v, Fraction):
                const += c * v
                continue
            _no_pos(v)
            if z3.is_bool(v):
                bools.append((c, v))
            else:
                ariths.append((c, v))
        if scale is not None and bias != 0:
            ariths.append((bias, scale))
        if len(bools) >= COUNT_AT_LEAST:
            # Many Bools with one coefficient are an integer count: one Int variable (shared by
            # every sum of the same Bools, e.g. a uniform head's output and the automaton's count).
            by_coef: dict[Fraction, list[Any]] = {}
            for c, b in bools:
                by_coef.setdefault(c, []).append(b)
            bools = []
            for c, group in by_coef.items():
                if len(group) >= COUNT_AT_LEAST:
                    ariths.append((c, z3.ToReal(self.count(group))))
                else:
                    bools.extend((c, b) for b in group)
        if not bools and not ariths:
            return const
        if len(bools) == 1 and not ariths:
            c, b = bools[0]
            if const == 0 and const + c == 1:
                return b
            if const == 1 and const + c == 0:
                return z3.Not(b)
        parts = [z3.If(b, self.num(c), self.num(Fraction(0))) for c, b in bools]
        parts += [v if c == 1 else self.num(c) * v for c, v in ariths]
        if const != 0:
            parts.append(self.num(const))
        return parts[0] if len(parts) == 1 else z3.Sum(parts)

    def relu(self, v: Any) -> Any:
        if isinstance(v, Fraction):
            return max(v, Fraction(0))
        if self.z3.is_bool(v):
            return v
        zero = self.num(Fraction(0))
        return self.z3.If(v > zero, v, zero)

    def step(self, v: Any, scale: Any = None) -> Any:
        if isinstance(v, Fraction):
            return Fraction(int(v > 0)) if scale is None else (scale if v > 0 else Fraction(0))
        if self.z3.is_bool(v):
            return v if scale is None else self.z3.If(v, scale, self.num(Fraction(0)))
        if scale is None:
            return v > self.num(Fraction(0))
        return self.z3.If(v > self.num(Fraction(0)), scale, self.num(Fraction(0)))

    def sigma(self, v: Any, scale: Any = None) -> Any:
        top = self.num(Fraction(1)) if scale is None else scale
        if isinstance(v, Fraction) and scale is None:
            return min(max(v, Fraction(0)), Fraction(1))
        if self.boolish(v) is not None and scale is None:
            return v
        t = self.arith(v)
        zero = self.num(Fraction(0))
        return self.z3.If(t < zero, zero, self.z3.If(t > top, top, t))

    def ite(self, cond: Any, a: Any, b: Any) -> Any:
        if isinstance(a, Fraction) and isinstance(b, Fraction) and a == b:
            return a
        ba, bb = self.boolish(a), self.boolish(b)
        if (
            ba is not None
            and bb is not None
            and not (isinstance(a, Fraction) and isinstance(b, Fraction) and a not in (0, 1))
        ):
            return self.bool_ite(cond, ba, bb)
        return self.z3.If(cond, self.arith(a), self.arith(b))

    def times(self, v: Any, scale: Any) -> Any:
        """v·scale for a positive scale term: exact for Fractions and Bools."""
        _no_pos(v)
        if isinstance(v, Fraction):
            return self.num(v) * scale if v not in (0, 1) else (Fraction(0) if v == 0 else scale)
        if self.z3.is_bool(v):
            return self.z3.If(v, scale, self.num(Fraction(0)))
        return (
            v * scale
        )  # nonlinear: only where no lemma made the residual Boolean (small n, mutants)

    def formula(self, expr: Any, env: Mapping[str, Any]) -> Any:
        """:func:`sympy_to_z3` of ``expr`` with ``env``, through a plan made once per
        expression (sympy's own traversal is slow when a lemma is applied at every position)."""
        plan = self._plans.get(expr)
        if plan is None:
            plan = self._plans[expr] = _plan(expr)
        return self._run_plan(plan, env)

    def _run_plan(self, plan: tuple[Any, ...], env: Mapping[str, Any]) -> Any:
        z3 = self.z3
        op = plan[0]
        if op == "sym":
            if plan[1] not in env:
                raise Unsupported(f"the lemma names dim {plan[1]!r}, which the block does not read")
            return env[plan[1]]
        if op == "const":
            return plan[1]
        if op == "bool":
            return z3.BoolVal(plan[1], self.ctx)
        if op == "lin":
            return self.lin([(c, self._run_plan(p, env)) for c, p in plan[1]], plan[2])
        if op == "rel":
            a, b = (self.arith(self._run_plan(p, env)) for p in plan[2:])
            return _RELATIONS[plan[1]](a, b)
        if op == "piecewise":
            out: Any = None
            for value, cond in reversed(plan[1]):
                v = self._run_plan(value, env)
                out = (
                    v
                    if cond is None
                    else self.ite(self._bool(self._run_plan(cond, env), plan), v, out)
                )
            return out
        args = [self._bool(self._run_plan(p, env), plan) for p in plan[1]]
        if op == "and":
            return self.and_(args)
        if op == "or":
            return self.or_(args)
        if op == "not":
            return self.not_(args[0])
        if op == "xor":
            return z3.Xor(args[0], args[1])
        if op == "equiv":
            return self.and_([self.iff(args[0], a) for a in args[1:]])
        if op == "implies":
            return z3.Implies(args[0], args[1])
        raise Unsupported(f"lemma plan {op!r}")

    def _bool(self, v: Any, plan: tuple[Any, ...]) -> Any:
        bv = self.boolish(v)
        if bv is None:
            raise Unsupported(f"the lemma uses a value as a Boolean that is not 0/1 ({plan[0]})")
        return bv

    def count(self, bools: Sequence[Any]) -> Any:
        """The number of true Bools among ``bools``, as one Int variable per set of Bools."""
        z3 = self.z3
        self.arithmetic = True
        key = tuple(sorted(b.get_id() for b in bools))
        got = self._counts.get(key)
        if got is None:
            label = f"count#{len(self._counts) + 1}"
            one, zero = z3.IntVal(1, self.ctx), z3.IntVal(0, self.ctx)
            parts = [z3.If(b, one, zero) for b in bools]
            # Partial sums of at most 32 terms each behind their own names: z3 prints a long sum
            # as nested terms, and a shallow query keeps every SMT-LIB2 reader within its limits.
            level = 0
            while len(parts) > 32:
                level += 1
                grouped = []
                for i in range(0, len(parts), 32):
                    part = z3.Int(f"{label}.{level}.{i // 32}", self.ctx)
                    self.assertions.append(part == z3.Sum(parts[i : i + 32]))
                    grouped.append(part)
                parts = grouped
            got = z3.Int(label, self.ctx)
            self.assertions.append(got == z3.Sum(parts))
            self._counts[key] = got
        return got

    def named(self, v: Any, label: str) -> Any:
        """A word-dependent term behind a fresh variable (asserted equal), so that every term
        stays shallow: the SMT-LIB2 text is flat and the solver shares the definition."""
        z3 = self.z3
        if (
            self.inline
            or isinstance(v, Fraction | Pos)
            or (
                z3.is_const(v)
                and (v.decl().kind() == z3.Z3_OP_UNINTERPRETED or z3.is_true(v) or z3.is_false(v))
            )
        ):
            return v
        self._fresh += 1
        name = f"{label}#{self._fresh}"
        if z3.is_bool(v):
            var = z3.Bool(name, self.ctx)
            self.assertions.append(self.iff(var, v))
        else:
            self.arithmetic = True
            var = z3.Real(name, self.ctx)
            self.assertions.append(var == v)
        self.definitions[var.get_id()] = v
        return var

    def defined(self, v: Any) -> Any:
        """The term a name made by :meth:`named` stands for (v itself otherwise)."""
        if isinstance(v, Fraction):
            return v
        return self.definitions.get(v.get_id(), v)

    def fresh_real(self, label: str) -> Any:
        self.arithmetic = True
        self._fresh += 1
        return self.z3.Real(f"{label}#{self._fresh}", self.ctx)


def sympy_to_z3(vals: Values, expr: Any, env: Mapping[str, Any]) -> Any:
    """A sympy Boolean formula (to a Bool term) or linear expression (to a value) over dims."""
    import sympy

    z3 = vals.z3
    if isinstance(expr, sympy.Symbol):
        if expr.name not in env:
            raise Unsupported(f"the lemma names dim {expr.name!r}, which the block does not read")
        return env[expr.name]
    if expr is sympy.true:
        return z3.BoolVal(True, vals.ctx)
    if expr is sympy.false:
        return z3.BoolVal(False, vals.ctx)

    def b(e: Any) -> Any:
        v = sympy_to_z3(vals, e, env)
        bv = vals.boolish(v)
        if bv is None:
            raise Unsupported(f"the lemma uses {e} as a Boolean, but it is not a 0/1 value")
        return bv

    if isinstance(expr, sympy.And):
        return z3.And([b(a) for a in expr.args])
    if isinstance(expr, sympy.Or):
        return z3.Or([b(a) for a in expr.args])
    if isinstance(expr, sympy.Not):
        return z3.Not(b(expr.args[0]))
    if isinstance(expr, sympy.Xor):
        return (
            z3.Xor(b(expr.args[0]), b(expr.args[1])) if len(expr.args) == 2 else z3.Not(z3.Or([]))
        )
    if isinstance(expr, sympy.Equivalent):
        first = b(expr.args[0])
        return z3.And([first == b(a) for a in expr.args[1:]])
    if isinstance(expr, sympy.Implies):
        return z3.Implies(b(expr.args[0]), b(expr.args[1]))
    if isinstance(expr, sympy.Rational):
        return Fraction(int(expr.p), int(expr.q))
    if isinstance(expr, (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)):
        lhs, rhs = (vals.arith(sympy_to_z3(vals, a, env)) for a in expr.args)
        ops = {
            sympy.Eq: lambda a, b: a == b,
            sympy.Ne: lambda a, b: a != b,
            sympy.Lt: lambda a, b: a < b,
            sympy.Le: lambda a, b: a <= b,
            sympy.Gt: lambda a, b: a > b,
            sympy.Ge: lambda a, b: a >= b,
        }
        return ops[type(expr)](lhs, rhs)
    if isinstance(expr, sympy.Piecewise):
        out: Any = None
        for value, cond in reversed(expr.args):
            v = sympy_to_z3(vals, value, env)
            if cond is sympy.true:
                out = v
            else:
                if out is None:
                    raise Unsupported(f"Piecewise {expr} has no otherwise branch")
                out = vals.ite(b(cond), v, out)
        return out
    if isinstance(expr, sympy.Add):
        return vals.lin([(Fraction(1), sympy_to_z3(vals, a, env)) for a in expr.args], Fraction(0))
    if isinstance(expr, sympy.Mul):
        coef, rest = expr.as_coeff_Mul()
        if not isinstance(rest, sympy.Mul) and isinstance(coef, sympy.Rational):
            return vals.lin(
                [(Fraction(int(coef.p), int(coef.q)), sympy_to_z3(vals, rest, env))], Fraction(0)
            )
    raise Unsupported(
        f"lemma expression {expr} is neither a Boolean formula nor linear in the dims"
    )


_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _plan(expr: Any) -> tuple[Any, ...]:
    """A sympy lemma expression as nested tuples, evaluated by :meth:`Values.formula`."""
    import sympy

    if isinstance(expr, sympy.Symbol):
        return ("sym", expr.name)
    if expr is sympy.true or expr is sympy.false:
        return ("bool", expr is sympy.true)
    if isinstance(expr, sympy.Rational):
        return ("const", Fraction(int(expr.p), int(expr.q)))
    for kind, name in (
        (sympy.And, "and"),
        (sympy.Or, "or"),
        (sympy.Not, "not"),
        (sympy.Equivalent, "equiv"),
        (sympy.Implies, "implies"),
    ):
        if isinstance(expr, kind):
            return (name, [_plan(a) for a in expr.args])
    if isinstance(expr, sympy.Xor) and len(expr.args) == 2:
        return ("xor", [_plan(a) for a in expr.args])
    for kind, name in (
        (sympy.Eq, "=="),
        (sympy.Ne, "!="),
        (sympy.Lt, "<"),
        (sympy.Le, "<="),
        (sympy.Gt, ">"),
        (sympy.Ge, ">="),
    ):
        if isinstance(expr, kind):
            return ("rel", name, _plan(expr.args[0]), _plan(expr.args[1]))
    if isinstance(expr, sympy.Piecewise):
        if expr.args[-1][1] is not sympy.true:
            raise Unsupported(f"Piecewise {expr} has no otherwise branch")
        return (
            "piecewise",
            [(_plan(v), None if c is sympy.true else _plan(c)) for v, c in expr.args],
        )
    if isinstance(expr, sympy.Add):
        return ("lin", [(Fraction(1), _plan(a)) for a in expr.args], Fraction(0))
    if isinstance(expr, sympy.Mul):
        coef, rest = expr.as_coeff_Mul()
        if not isinstance(rest, sympy.Mul) and isinstance(coef, sympy.Rational):
            return ("lin", [(Fraction(int(coef.p), int(coef.q)), _plan(rest))], Fraction(0))
    raise Unsupported(
        f"lemma expression {expr} is neither a Boolean formula nor linear in the dims"
    )


def affine_map(vals: Values, a: Affine, x: Mapping[str, Any], scale: Any = None) -> dict[str, Any]:
    """The affine map ``a`` on the values ``x`` (a dim it reads and ``x`` lacks is 0), its bias
    times ``scale`` on a scaled position."""
    return {
        o: vals.lin(
            [(w, x.get(i, Fraction(0))) for w, i in zip(row, a.inputs, strict=True)], b, scale
        )
        for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True)
    }


def ffn_faithful(
    vals: Values, block: FFN, x: Mapping[str, Any], scale: Any = None
) -> dict[str, Any]:
    """The FFN's exact value: affine maps, ReLU (positively homogeneous, so unchanged on a scaled
    position), σ and step (scaled explicitly)."""
    cur: Mapping[str, Any] = x
    last_outputs: tuple[str, ...] = ()
    for stepdef in block.steps:
        match stepdef:
            case Affine():
                cur = affine_map(vals, stepdef, cur, scale)
                last_outputs = stepdef.outputs
            case Activation(kind="relu"):
                cur = {k: vals.relu(v) for k, v in cur.items()}
            case Activation(kind="step"):
                cur = {k: vals.step(v, scale) for k, v in cur.items()}
            case Activation(kind="sigma"):
                cur = {k: vals.sigma(v, scale) for k, v in cur.items()}
            case Activation():
                raise Unsupported(f"activation {stepdef.kind!r} in FFN {block.name!r}")
            case LayerNorm():
                raise Unsupported(
                    f"layer norm inside FFN {block.name!r} (√ of a word-dependent variance)"
                )
            case _:
                assert_never(stepdef)
    return {o: cur[o] for o in last_outputs}


def consts(z3: Any, f: Any) -> dict[int, Any]:
    """The uninterpreted constants (the variables) of the z3 term ``f``, by their z3 id."""
    seen: set[int] = set()
    out: dict[int, Any] = {}
    stack = [f]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out[e.get_id()] = e
        stack.extend(e.children())
    return out


def commutative(dfa: Automaton) -> bool:
    """Whether the order of the symbols never matters (δ(δ(q, a), b) = δ(δ(q, b), a)), so that
    the state after a word is a function of its symbol counts."""
    k = len(dfa.delta[0]) if dfa.delta else 0
    return all(
        dfa.delta[dfa.delta[q][a]][b] == dfa.delta[dfa.delta[q][b]][a]
        for q in range(dfa.states)
        for a in range(k)
        for b in range(k)
    )
