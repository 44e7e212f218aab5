"""Compositional SMT proofs: a theorem about a network proved from its block lemmas, the way the
papers argue.

A monolithic encoding (:mod:`netproof.verifier.smt.encoder`) gives z3 the whole network in real arithmetic and
drowns at a few dozen tokens. A paper instead proves lemmas about blocks ("this FFN computes
AND on {0,1} inputs", "this head selects the nearest unmatched position") and then reasons
about the network in which each block is replaced by what the lemma says it computes. This
module does the same, mechanically, from the IR and the lemmas a construction declares
(:attr:`~netproof.verifier.claims.Construction.lemmas`):

1. **Each lemma is proved once over its whole input domain**, independently of any word length:

   - :class:`~netproof.verifier.claims.BooleanBlock`: the FFN's faithful encoding (affine maps and
     ReLU/σ/step as case splits) on Boolean inputs (Bool variables) and real inputs (Real
     variables) against the declared formulas; ``unsat`` of "some output differs" is a proof
     for every input.
   - :class:`~netproof.verifier.claims.NearestSelection`: the head's score, cleared of denominators and
     multiplied by n (so that a feature i/n becomes the integer i), compared pairwise at two
     symbolic positions a < b for a symbolic length n and all Boolean key dims: the better ranked
     position (preferred first, then nearer) has a strictly larger score. One query proves it for
     every n, and makes the argmax unique, so the tie rule does not matter.

2. **The theorem is proved over the abstracted network**, one query per range of word lengths
   (a symbolic length over padded slots, see :class:`_Abstraction`; one query per length where
   the network computes with a length-dependent value). The word is Bool bits per position; every value is a :class:`~fractions.Fraction` (it does not depend on
   the word), a Bool term (a dim known to be 0 or 1) or a Real term. A proved
   :class:`BooleanBlock` becomes its Boolean formulas; a proved :class:`NearestSelection`
   becomes a prefix scan ("the value at the nearest preferred position so far"), linear in n;
   every other block is encoded faithfully (affine maps, ReLU case splits, hardmax as a maximum
   with a symbolic selection; an averaging head over Boolean values scales its position by the
   integer count of maximizers, which ReLU's positive homogeneity carries to the readout).
   The language is its :class:`~netproof.verifier.claims.Automaton`, run over the word bits. Beside the
   ranges, every length is tried at once (:func:`prove_recognizes`): as a transition system
   over positions with an inductive invariant (the Dyck recognizers), or as one query over
   position classes (:mod:`netproof.verifier.smt.classes`: soft attention whose scores repeat with the
   position, e.g. PARITY; value claims with a closed form too, :func:`prove_value`).

3. **Side conditions**: a lemma replaces a block only where its assumptions hold in the state it
   reads: every dim it assumes Boolean is a Bool term (or 0/1) at every position, every
   positional dim holds its feature exactly, no position is scaled. These are checked while
   the query is built; where one fails the block is encoded faithfully instead, and the lemma
   tree records it.

A ``sat`` answer is a word; it is replayed through the exact interpreter, and a word the exact
interpreter does not misclassify is an encoder bug (:class:`~netproof.verifier.smt.encoder.EncoderBugError`),
never a verdict. Ranges are tried in increasing order; a counterexample is brought to the
shortest length its range allows and then shrunk to the shortlex-first counterexample of that
length. Value claims with a closed form (:func:`prove_value`) go the same way, one length at a
time.

z3 is imported inside functions only; numerals come from Fractions (``z3.RealVal("p/q", ctx)``),
every query has its own ``z3.Context`` and its SMT-LIB2 text in the lemma tree.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, assert_never

from netproof.symbolic import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Softmax,
    Sublayer,
    TokenEmbedding,
    render,
)
from netproof.symbolic.positional import feature

from netproof.verifier.smt import encoder as _smt
from netproof.verifier.claims import (
    Automaton,
    BooleanBlock,
    Construction,
    Language,
    Lemma,
    NearestSelection,
    Output,
    Proved,
    Recognizes,
    Refuted,
    ScaledBlock,
    Unknown,
    ValueIs,
    Verdict,
    Word,
)
from netproof.verifier.smt.encoder import EncoderBugError, LemmaNode, Outcome, SmtQuery, Unsupported

METHOD = "smt (z3), compositional"
_FIRST_RANGE = 16  # the first query over a range of lengths covers min_len..16
_COUNT_AT_LEAST = 4  # a sum of at least this many Bools with one coefficient becomes an Int count

# Positional features that stay linear in (i, n) once multiplied by n: name -> (coef of i, coef of n).
_SCALED_FEATURES: dict[str, tuple[int, int]] = {"i/n": (1, 0), "1-i/n": (-1, 1), "1/n": (0, 0), "1": (0, 1)}


# --------------------------------------------------------------------------- values


# Features whose value at a fixed index does not depend on the length (the rest, and any feature a
# user registers, are treated as length-dependent).
_LENGTH_FREE_FEATURES = frozenset({"1", "i", "i+1", "1/i", "1/i^2", "cos(iπ)", "I[i=0]", "I[i=1]", "1/2^i"})


@dataclass(frozen=True, slots=True)
class _Pos:
    """A positional value in a query over a range of lengths: ``base + Σ coef·feature(i, N)``
    at index ``i`` of a word whose length (hence N) is symbolic. It may only be carried along
    unchanged and compared with a lemma's positional side condition; any arithmetic on it is
    :class:`Unsupported` (the proof then falls back to one query per length)."""

    terms: tuple[tuple[str, Fraction], ...]
    base: Fraction
    index: int


def _no_pos(v: Any) -> Any:
    if isinstance(v, _Pos):
        shown = " + ".join(f"{c}·{f}" for f, c in v.terms)
        raise Unsupported(f"a value depends on the symbolic length ({shown} at index {v.index}) in a query over several lengths")
    return v


class _Values:
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
        return self.z3.BoolRef(self.z3.Z3_mk_ite(self.ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast()), self.ctx)

    def num(self, q: Fraction) -> Any:
        self.arithmetic = True
        v = self._nums.get(q)
        if v is None:
            v = self._nums[q] = self.z3.RealVal(str(q), self.ctx)
        return v

    def is_bool(self, v: Any) -> bool:
        return not isinstance(v, Fraction | _Pos) and self.z3.is_bool(v)

    def boolish(self, v: Any) -> Any | None:
        """v as a Bool term if it is 0/1 (a Bool term, or the Fraction 0 or 1), else None."""
        if isinstance(v, Fraction):
            return self.z3.BoolVal(v == 1, self.ctx) if v in (0, 1) else None
        if isinstance(v, _Pos):
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
        if len(bools) >= _COUNT_AT_LEAST:
            # Many Bools with one coefficient are an integer count: one Int variable (shared by
            # every sum of the same Bools, e.g. a uniform head's output and the automaton's count).
            by_coef: dict[Fraction, list[Any]] = {}
            for c, b in bools:
                by_coef.setdefault(c, []).append(b)
            bools = []
            for c, group in by_coef.items():
                if len(group) >= _COUNT_AT_LEAST:
                    ariths.append((c, z3.ToReal(self.count(group))))
                else:
                    bools.extend((c, b) for b in group)
        if not bools and not ariths:
            return const
        if len(bools) == 1 and not ariths:
            c, b = bools[0]
            if (const, const + c) == (0, 1):
                return b
            if (const, const + c) == (1, 0):
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
        if ba is not None and bb is not None and not (isinstance(a, Fraction) and isinstance(b, Fraction) and a not in (0, 1)):
            return self.bool_ite(cond, ba, bb)
        return self.z3.If(cond, self.arith(a), self.arith(b))

    def times(self, v: Any, scale: Any) -> Any:
        """v·scale for a positive scale term: exact for Fractions and Bools."""
        _no_pos(v)
        if isinstance(v, Fraction):
            return self.num(v) * scale if v not in (0, 1) else (Fraction(0) if v == 0 else scale)
        if self.z3.is_bool(v):
            return self.z3.If(v, scale, self.num(Fraction(0)))
        return v * scale  # nonlinear: only where no lemma made the residual Boolean (small n, mutants)

    def formula(self, expr: Any, env: Mapping[str, Any]) -> Any:
        """:func:`_sympy_to_z3` of ``expr`` with ``env``, through a plan made once per
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
                out = v if cond is None else self.ite(self._bool(self._run_plan(cond, env), plan), v, out)
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
                    self.assertions.append(part == z3.Sum(parts[i:i + 32]))
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
        if self.inline or isinstance(v, Fraction | _Pos) or (z3.is_const(v) and (v.decl().kind() == z3.Z3_OP_UNINTERPRETED or z3.is_true(v) or z3.is_false(v))):
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


def _sympy_to_z3(vals: _Values, expr: Any, env: Mapping[str, Any]) -> Any:
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
        v = _sympy_to_z3(vals, e, env)
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
        return z3.Xor(b(expr.args[0]), b(expr.args[1])) if len(expr.args) == 2 else z3.Not(z3.Or([]))
    if isinstance(expr, sympy.Equivalent):
        first = b(expr.args[0])
        return z3.And([first == b(a) for a in expr.args[1:]])
    if isinstance(expr, sympy.Implies):
        return z3.Implies(b(expr.args[0]), b(expr.args[1]))
    if isinstance(expr, sympy.Rational):
        return Fraction(int(expr.p), int(expr.q))
    if isinstance(expr, (sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge)):
        lhs, rhs = (vals.arith(_sympy_to_z3(vals, a, env)) for a in expr.args)
        ops = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b, sympy.Lt: lambda a, b: a < b,
               sympy.Le: lambda a, b: a <= b, sympy.Gt: lambda a, b: a > b, sympy.Ge: lambda a, b: a >= b}
        return ops[type(expr)](lhs, rhs)
    if isinstance(expr, sympy.Piecewise):
        out: Any = None
        for value, cond in reversed(expr.args):
            v = _sympy_to_z3(vals, value, env)
            if cond is sympy.true:
                out = v
            else:
                if out is None:
                    raise Unsupported(f"Piecewise {expr} has no otherwise branch")
                out = vals.ite(b(cond), v, out)
        return out
    if isinstance(expr, sympy.Add):
        return vals.lin([(Fraction(1), _sympy_to_z3(vals, a, env)) for a in expr.args], Fraction(0))
    if isinstance(expr, sympy.Mul):
        coef, rest = expr.as_coeff_Mul()
        if not isinstance(rest, sympy.Mul) and isinstance(coef, sympy.Rational):
            return vals.lin([(Fraction(int(coef.p), int(coef.q)), _sympy_to_z3(vals, rest, env))], Fraction(0))
    raise Unsupported(f"lemma expression {expr} is neither a Boolean formula nor linear in the dims")


_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _plan(expr: Any) -> tuple[Any, ...]:
    """A sympy lemma expression as nested tuples, evaluated by :meth:`_Values.formula`."""
    import sympy

    if isinstance(expr, sympy.Symbol):
        return ("sym", expr.name)
    if expr is sympy.true or expr is sympy.false:
        return ("bool", expr is sympy.true)
    if isinstance(expr, sympy.Rational):
        return ("const", Fraction(int(expr.p), int(expr.q)))
    for kind, name in ((sympy.And, "and"), (sympy.Or, "or"), (sympy.Not, "not"), (sympy.Equivalent, "equiv"), (sympy.Implies, "implies")):
        if isinstance(expr, kind):
            return (name, [_plan(a) for a in expr.args])
    if isinstance(expr, sympy.Xor) and len(expr.args) == 2:
        return ("xor", [_plan(a) for a in expr.args])
    for kind, name in ((sympy.Eq, "=="), (sympy.Ne, "!="), (sympy.Lt, "<"), (sympy.Le, "<="), (sympy.Gt, ">"), (sympy.Ge, ">=")):
        if isinstance(expr, kind):
            return ("rel", name, _plan(expr.args[0]), _plan(expr.args[1]))
    if isinstance(expr, sympy.Piecewise):
        if expr.args[-1][1] is not sympy.true:
            raise Unsupported(f"Piecewise {expr} has no otherwise branch")
        return ("piecewise", [(_plan(v), None if c is sympy.true else _plan(c)) for v, c in expr.args])
    if isinstance(expr, sympy.Add):
        return ("lin", [(Fraction(1), _plan(a)) for a in expr.args], Fraction(0))
    if isinstance(expr, sympy.Mul):
        coef, rest = expr.as_coeff_Mul()
        if not isinstance(rest, sympy.Mul) and isinstance(coef, sympy.Rational):
            return ("lin", [(Fraction(int(coef.p), int(coef.q)), _plan(rest))], Fraction(0))
    raise Unsupported(f"lemma expression {expr} is neither a Boolean formula nor linear in the dims")


# --------------------------------------------------------------------------- blocks of the IR


def _find_ffn(net: Network, name: str) -> FFN:
    for sub in net.layers:
        if isinstance(sub.block, FFN) and sub.block.name == name:
            return sub.block
    known = ", ".join(s.block.name for s in net.layers if isinstance(s.block, FFN))
    raise ValueError(f"block={name!r} is not an FFN of network {net.name!r}; its FFNs: {known}")


def _find_head(net: Network, layer: str, head: str) -> Head:
    for sub in net.layers:
        if isinstance(sub.block, AttentionLayer) and sub.block.name == layer:
            for h in sub.block.heads:
                if h.name == head:
                    return h
            raise ValueError(f"attention layer {layer!r} has no head {head!r}; its heads: {', '.join(h.name for h in sub.block.heads)}")
    raise ValueError(f"layer={layer!r} is not an attention layer of network {net.name!r}")


def _affine(vals: _Values, a: Affine, x: Mapping[str, Any], scale: Any = None) -> dict[str, Any]:
    return {
        o: vals.lin([(w, x.get(i, Fraction(0))) for w, i in zip(row, a.inputs, strict=True)], b, scale)
        for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True)
    }


def _ffn_faithful(vals: _Values, block: FFN, x: Mapping[str, Any], scale: Any = None) -> dict[str, Any]:
    """The FFN's exact value: affine maps, ReLU (positively homogeneous, so unchanged on a scaled
    position), σ and step (scaled explicitly)."""
    cur: Mapping[str, Any] = x
    last_outputs: tuple[str, ...] = ()
    for stepdef in block.steps:
        match stepdef:
            case Affine():
                cur = _affine(vals, stepdef, cur, scale)
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
                raise Unsupported(f"layer norm inside FFN {block.name!r} (√ of a word-dependent variance)")
            case _:
                assert_never(stepdef)
    return {o: cur[o] for o in last_outputs}


# --------------------------------------------------------------------------- lemma proofs


@dataclass
class _LemmaResult:
    lemma: Lemma
    node: LemmaNode
    proved: bool
    uses: int = 0
    fallbacks: list[str] = field(default_factory=list)


def _prove_boolean_block(net: Network, lemma: BooleanBlock, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    block = _find_ffn(net, lemma.block)
    if not block.steps:
        raise ValueError(f"FFN {lemma.block!r} is empty; a BooleanBlock lemma needs a block that writes dims")
    written = block.steps[-1].outputs  # type: ignore[union-attr]
    missing = [d for d in written if d not in lemma.outputs]
    if missing:
        raise ValueError(f"lemma {lemma.id!r} leaves dims {missing} of FFN {lemma.block!r} unspecified; give a formula for each")
    ctx = z3.Context()
    vals = _Values(z3, ctx)
    reads = block.steps[0].inputs  # type: ignore[union-attr]
    env: dict[str, Any] = {}
    for d in reads:
        env[d] = z3.Bool(d, ctx) if d in lemma.boolean else z3.Real(d, ctx)
    for d in lemma.boolean:
        env.setdefault(d, z3.Bool(d, ctx))
    got = _ffn_faithful(vals, block, env)
    wrong = []
    for d in written:
        spec = _sympy_to_z3(vals, lemma.outputs[d], env)
        wrong.append(vals.arith(got[d]) != vals.arith(spec))
    solver = z3.Solver(ctx=ctx)
    solver.add(*vals.assertions)
    solver.add(z3.Or(wrong))
    logic = "QF_LIRA"
    query, model = _smt.solve(
        solver, name=lemma.id, logic=logic, timeout=timeout,
        reason_unsat=f"FFN {lemma.block} matches the lemma on every input with {len(lemma.boolean)} Boolean dims",
    )
    if query.result == "sat":
        shown = ", ".join(f"{d}={model.eval(env[d], model_completion=True)}" for d in reads)
        bad = [d for d in written if not z3.is_true(model.eval(vals.arith(got[d]) == vals.arith(_sympy_to_z3(vals, lemma.outputs[d], env)), model_completion=True))]
        query = SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                         reason=f"FFN {lemma.block} differs from the lemma on dims {bad} at {shown}", seconds=query.seconds)
    verdict = {"unsat": "proved", "sat": "refuted", "unknown": "unknown"}[query.result]
    return LemmaNode(name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)), query.result == "unsat"  # type: ignore[arg-type]


def _nearer_is_later(mask: str) -> bool:
    if mask in ("causal", "strict_causal"):
        return True
    if mask in ("anticausal", "strict_anticausal"):
        return False
    raise Unsupported(f"mask={mask!r}: 'nearest' needs a one-sided mask (causal or anticausal)")


def _key_form(net: Network, head: Head) -> tuple[dict[str, Fraction], Fraction]:
    """The score as an affine form of the key position's dims: Σ α_d·x_d + β (the query is a
    constant vector; a positive scale does not change a hardmax)."""
    if not isinstance(head.normalizer, Hardmax):
        raise Unsupported(f"head {head.name!r} is soft; NearestSelection is a hardmax lemma")
    if head.scoring != "dot":
        raise Unsupported(f"head {head.name!r} scores with {head.scoring!r}; NearestSelection covers 'dot'")
    if any(w != 0 for row in head.query.weights for w in row):
        raise Unsupported(f"head {head.name!r} has a query that depends on the position's dims")
    q = dict(zip(head.query.outputs, head.query.bias, strict=True))
    alpha: dict[str, Fraction] = {}
    beta = Fraction(0)
    for c, row, b in zip(head.key.outputs, head.key.weights, head.key.bias, strict=True):
        beta += q[c] * b
        for d, w in zip(head.key.inputs, row, strict=True):
            alpha[d] = alpha.get(d, Fraction(0)) + q[c] * w
    return {d: a for d, a in alpha.items() if a != 0}, beta


def _prove_nearest(net: Network, lemma: NearestSelection, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    head = _find_head(net, lemma.layer, lemma.head)
    later = _nearer_is_later(head.mask)
    alpha, beta = _key_form(net, head)
    for d in alpha:
        if d not in lemma.boolean and d not in lemma.positional:
            raise Unsupported(f"head {lemma.head!r} reads dim {d!r}, which lemma {lemma.id!r} declares neither Boolean nor positional")
    for d, feat in lemma.positional.items():
        if feat not in _SCALED_FEATURES:
            raise Unsupported(f"positional feature {feat!r} of dim {d!r} is not linear in (i, n) once multiplied by n")
    base = net.embedding.index_base if isinstance(net.embedding, TokenEmbedding) else 0
    den = math.lcm(*(a.denominator for a in (*alpha.values(), beta)))
    ctx = z3.Context()
    n, a, b = z3.Int("n", ctx), z3.Int("a", ctx), z3.Int("b", ctx)

    def score(pos: Any, x: Mapping[str, Any]) -> Any:
        # den·n·score: integer coefficients, a feature i/n becomes i
        total = z3.IntVal(int(beta * den), ctx) * n
        for d, al in alpha.items():
            c = z3.IntVal(int(al * den), ctx)
            if d in lemma.positional:
                ci, cn = _SCALED_FEATURES[lemma.positional[d]]
                total = total + c * (z3.IntVal(ci, ctx) * pos + z3.IntVal(cn, ctx) * n + (1 if lemma.positional[d] == "1/n" else 0))
            else:
                total = total + c * z3.If(x[d], n, z3.IntVal(0, ctx))
        return total

    xa = {d: z3.Bool(f"{d}@a", ctx) for d in lemma.boolean}
    xb = {d: z3.Bool(f"{d}@b", ctx) for d in lemma.boolean}
    vals = _Values(z3, ctx)
    pa = vals.boolish(_sympy_to_z3(vals, lemma.prefer, xa))
    pb = vals.boolish(_sympy_to_z3(vals, lemma.prefer, xb))
    if pa is None or pb is None:
        raise Unsupported(f"lemma {lemma.id!r}: prefer={lemma.prefer} is not a Boolean formula of Boolean dims")
    s_near, s_far = (score(b, xb), score(a, xa)) if later else (score(a, xa), score(b, xb))
    p_near, p_far = (pb, pa) if later else (pa, pb)
    solver = z3.Solver(ctx=ctx)
    solver.add(n >= 1, a >= base, a < b, b <= n - 1 + base)
    solver.add(z3.Or(
        z3.And(z3.Implies(p_far, p_near), s_near <= s_far),  # the nearer is ranked higher
        z3.And(p_far, z3.Not(p_near), s_far <= s_near),  # the farther is preferred
    ))
    query, model = _smt.solve(
        solver, name=lemma.id, logic="QF_LIA", timeout=timeout,
        reason_unsat=f"for every n, a better ranked position scores strictly higher under head {lemma.layer}.{lemma.head}",
    )
    if query.result == "sat":
        shown = ", ".join(f"{v}={model.eval(v, model_completion=True)}" for v in (n, a, b, *xa.values(), *xb.values()))
        query = SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                         reason=f"the score order breaks the ranking at {shown}", seconds=query.seconds)
    verdict = {"unsat": "proved", "sat": "refuted", "unknown": "unknown"}[query.result]
    return LemmaNode(name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)), query.result == "unsat"  # type: ignore[arg-type]


def _homogeneous(block: FFN) -> bool:
    """ReLU and affine maps without biases only: FFN(x/u) = FFN(x)/u for u > 0."""
    for st in block.steps:
        if isinstance(st, Affine) and any(b != 0 for b in st.bias):
            return False
        if isinstance(st, LayerNorm) or (isinstance(st, Activation) and st.kind != "relu"):
            return False
    return True


def _prove_scaled_block(net: Network, lemma: ScaledBlock, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    block = _find_ffn(net, lemma.block)
    if not _homogeneous(block):
        raise Unsupported(f"FFN {lemma.block!r} has a bias or a non-ReLU step, so it is not positively homogeneous")
    written = block.steps[-1].outputs if block.steps else ()  # type: ignore[union-attr]
    missing = [d for d in written if d not in lemma.outputs]
    if missing:
        raise ValueError(f"lemma {lemma.id!r} leaves dims {missing} of FFN {lemma.block!r} unspecified; give an expression for each")
    ctx = z3.Context()
    vals = _Values(z3, ctx)
    env = {str(v): z3.Int(str(v), ctx) for v in lemma.inputs.values()}
    # Homogeneity: the block on (v/u, 1/u) is 1/u times the block on (v, 1).
    x: dict[str, Any] = {lemma.unit: Fraction(1)}
    for d, v in lemma.inputs.items():
        x[d] = z3.ToReal(env[str(v)])
    got = _ffn_faithful(vals, block, x)
    wrong = [vals.arith(got[d]) != vals.arith(_sympy_to_z3(vals, lemma.outputs[d], env)) for d in written]
    solver = z3.Solver(ctx=ctx)
    solver.add(*vals.assertions)
    solver.add(z3.Or(wrong))
    query, model = _smt.solve(solver, name=lemma.id, logic="QF_LIRA", timeout=timeout,
                         reason_unsat=f"FFN {lemma.block} matches the lemma for all integers and every unit")
    if query.result == "sat":
        shown = ", ".join(f"{k}={model.eval(v, model_completion=True)}" for k, v in env.items())
        query = SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                         reason=f"FFN {lemma.block} differs from the lemma at {shown}", seconds=query.seconds)
    verdict = {"unsat": "proved", "sat": "refuted", "unknown": "unknown"}[query.result]
    return LemmaNode(name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)), query.result == "unsat"  # type: ignore[arg-type]


def prove_lemma(net: Network, lemma: Lemma, *, timeout: float = 60.0) -> tuple[LemmaNode, bool]:
    """Prove one lemma over its whole input domain (every length n for attention lemmas): its
    node in the lemma tree, and whether it is proved. An unsupported lemma is ``unknown``."""
    try:
        match lemma:
            case BooleanBlock():
                return _prove_boolean_block(net, lemma, timeout)
            case NearestSelection():
                return _prove_nearest(net, lemma, timeout)
            case ScaledBlock():
                return _prove_scaled_block(net, lemma, timeout)
            case _:
                assert_never(lemma)
    except Unsupported as exc:
        return LemmaNode(name=lemma.id, statement=f"{lemma.statement} [unsupported: {exc}]", verdict="unknown"), False


# --------------------------------------------------------------------------- the abstracted network


State = tuple[dict[str, Any], Any]  # (dim -> value, scale or None)


class _Abstraction:
    """The network on a symbolic word of length m, with proved lemmas in place of their blocks.
    Positions are computed on demand (the readout reads one position; an attention layer reads
    every position of the layer below)."""

    def __init__(
        self,
        z3: Any,
        ctx: Any,
        net: Network,
        m: int,
        lemmas: Sequence[_LemmaResult],
        readout_lemmas: dict[Any, Any] | None = None,
        readout_nodes: list[LemmaNode] | None = None,
        lo: int | None = None,
    ) -> None:
        """Words of length exactly ``m``, or, with ``lo < m``, of every length ``lo..m`` in one
        query: ``m`` word slots, slot t present iff t < the word's length (Bool ``len>t``, each
        implying the one before), absent slots skipped by every lemma's scan, the automaton and
        the readout; positional values that depend on the length are :class:`_Pos`."""
        if not isinstance(net.embedding, TokenEmbedding):
            raise Unsupported("compositional proofs need a token embedding (a flat embedding has no positions)")
        self.z3, self.ctx, self.net, self.m = z3, ctx, net, m
        self.lo = m if lo is None else lo
        self.ranged = self.lo < m
        self.vals = _Values(z3, ctx)
        emb = net.embedding
        self.alphabet = emb.alphabet
        self.tokens: list[str | None] = [*emb.prefix, *([None] * m), *emb.suffix]
        self.N = len(self.tokens)
        self.first_slot = len(emb.prefix)
        self.nbits = max(1, (len(self.alphabet) - 1).bit_length())
        self.bits = [[z3.Bool(f"w{t}.{b}", ctx) for b in range(self.nbits)] for t in range(m)]
        self._symbols: dict[tuple[int, int], Any] = {}
        # present[t] for slot t: True below lo, else a Bool "the word is longer than t".
        self.present: list[Any] = [True if t < self.lo else z3.Bool(f"len>{t}", ctx) for t in range(m)]
        for t in range(self.lo, m):
            if t > self.lo:
                self.vals.assertions.append(z3.Implies(self.present[t], self.present[t - 1]))
            # An absent slot holds symbol 0 (so that each length has one model per word).
            self.vals.assertions.append(z3.Or(self.present[t], *(self.vals.not_(bit) for bit in self.bits[t])))
        for t in range(m):
            if len(self.alphabet) < 2**self.nbits:
                self.vals.assertions.append(z3.Or([self.is_symbol(t, a) for a in range(len(self.alphabet))]))
        self.ffn_lemmas = {r.lemma.block: r for r in lemmas if isinstance(r.lemma, BooleanBlock | ScaledBlock) and r.proved}
        self.head_lemmas = {(r.lemma.layer, r.lemma.head): r for r in lemmas if isinstance(r.lemma, NearestSelection) and r.proved}
        self._states: dict[tuple[int, int], State] = {}
        self._scans: dict[tuple[int, str], list[dict[str, Any] | None]] = {}
        self._same_query: dict[Any, tuple[dict[str, Any], Any]] = {}
        self.readout_lemmas: dict[Any, PresenceSigns | bool] = readout_lemmas if readout_lemmas is not None else {}
        self.readout_nodes: list[LemmaNode] = readout_nodes if readout_nodes is not None else []

    # -------------------------------------------------------------- word and embedding

    def is_symbol(self, t: int, a: int) -> Any:
        got = self._symbols.get((t, a))
        if got is None:
            lits = [bit if (a >> b) & 1 else self.vals.not_(bit) for b, bit in enumerate(self.bits[t])]
            got = self._symbols[(t, a)] = self.vals.and_(lits)
        return got

    def present_at(self, pos: int) -> Any:
        """Whether token position ``pos`` is part of the word's sequence: True, or a Bool term."""
        j = pos - self.first_slot
        return self.present[j] if 0 <= j < self.m else True

    def length_of(self, model: Any) -> int:
        return sum(1 for p in self.present if p is True or self.z3.is_true(model.eval(p, model_completion=True)))

    def feature_at(self, feat: str, pos: int) -> Fraction | _Pos:
        """Positional feature ``feat`` at token position ``pos``: a Fraction where it does not
        depend on the symbolic length, else a :class:`_Pos`."""
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        suffix = pos >= self.first_slot + self.m
        if not self.ranged or feat == "1" or (feat in _LENGTH_FREE_FEATURES and not suffix):
            return feature(feat)(pos + emb.index_base, self.N)
        return _Pos(((feat, Fraction(1)),), Fraction(0), pos)

    def word_of(self, model: Any) -> Word:
        out = []
        for t in range(self.length_of(model) if self.ranged else self.m):
            code = sum(1 << b for b, bit in enumerate(self.bits[t]) if self.z3.is_true(model.eval(bit, model_completion=True)))
            out.append(self.alphabet[code])
        return tuple(out)

    def embed(self, t: int) -> State:
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        table = {tok: dict(row) for tok, row in emb.table}
        tok = self.tokens[t]
        x: dict[str, Any] = {}
        for d in self.net.dims:
            if tok is not None:
                x[d] = table[tok].get(d, Fraction(0))
                continue
            col = [table[a].get(d, Fraction(0)) for a in self.alphabet]
            if len(set(col)) == 1:
                x[d] = col[0]
            elif set(col) <= {Fraction(0), Fraction(1)}:
                j = t - self.first_slot
                ones = [self.is_symbol(j, a) for a, v in enumerate(col) if v == 1]
                x[d] = ones[0] if len(ones) == 1 else self.z3.Or(ones)
            else:
                j = t - self.first_slot
                x[d] = self.vals.lin([(v, self.is_symbol(j, a)) for a, v in enumerate(col)], Fraction(0))
        for d, feat, coef in emb.positional:
            f = self.feature_at(feat, t)
            if isinstance(f, Fraction):
                if isinstance(x[d], _Pos):
                    x[d] = _Pos(x[d].terms, x[d].base + coef * f, t)
                else:
                    x[d] = self.vals.lin([(Fraction(1), x[d])], coef * f)
            elif isinstance(x[d], Fraction):
                x[d] = _Pos(tuple((name, coef * c) for name, c in f.terms), x[d], t)
            elif isinstance(x[d], _Pos):
                x[d] = _Pos((*x[d].terms, *((name, coef * c) for name, c in f.terms)), x[d].base, t)
            else:
                raise Unsupported(f"dim {d!r} adds a length-dependent feature {feat} to a word-dependent value")
        return x, None

    # -------------------------------------------------------------- layers

    def state(self, layer: int, t: int) -> State:
        """The residual state at token t after ``layer`` sublayers."""
        key = (layer, t)
        got = self._states.get(key)
        if got is None:
            if layer == 0:
                got = self.embed(t)
            else:
                got = self.sublayer(layer - 1, t)
            self._states[key] = got
        return got

    def sublayer(self, idx: int, t: int) -> State:
        sub: Sublayer = self.net.layers[idx]
        if sub.post_ln is not None:
            raise Unsupported(f"post-residual layer norm after {sub.name!r}")
        x, scale = self.state(idx, t)
        block = sub.block
        match block:
            case FFN():
                out = self.ffn(block, x, scale)
            case AttentionLayer():
                out, new_scale = self.attention(idx, block, t)
                if new_scale is not None:
                    if scale is not None:
                        raise Unsupported(f"two averaging layers scale position {t}")
                    x = {d: self.vals.times(v, new_scale) for d, v in x.items()}
                    scale = new_scale
            case Convolution():
                raise Unsupported(f"convolution block {block.name!r} (Chang et al.) is not encoded")
            case _:
                assert_never(block)
        if sub.residual:
            y = dict(x)
            for d, v in out.items():
                y[d] = self.vals.named(self.vals.lin([(Fraction(1), x[d]), (Fraction(1), v)], Fraction(0)), f"{d}@{sub.name}.{t}")
        else:
            y = {d: self.vals.named(out.get(d, Fraction(0)), f"{d}@{sub.name}.{t}") for d in self.net.dims}
        return y, scale

    def ffn(self, block: FFN, x: Mapping[str, Any], scale: Any) -> dict[str, Any]:
        r = self.ffn_lemmas.get(block.name)
        if r is not None and isinstance(r.lemma, ScaledBlock):
            got = self.scaled_lemma(r, x, scale)
            if got is not None:
                return got
        elif r is not None:
            lemma = r.lemma
            assert isinstance(lemma, BooleanBlock)
            env: dict[str, Any] = dict(x)
            ok = scale is None
            for d in lemma.boolean:
                bv = self.vals.boolish(x.get(d, Fraction(0)))
                if bv is None:
                    ok = False
                    break
                env[d] = bv
            if ok:
                r.uses += 1
                return {d: self.vals.formula(e, env) for d, e in lemma.outputs.items()}
            r.fallbacks.append(f"a dim it assumes Boolean is not 0/1 at length {self.m}")
        return _ffn_faithful(self.vals, block, x, scale)

    def scaled_lemma(self, r: _LemmaResult, x: Mapping[str, Any], scale: Any) -> dict[str, Any] | None:
        """A proved ScaledBlock in place of its FFN, where its side conditions hold: the unit dim
        is a concrete 1/u and every input dim is an integer (a concrete one, or an Int count)
        over u."""
        lemma = r.lemma
        assert isinstance(lemma, ScaledBlock)
        z3 = self.z3
        unit = x.get(lemma.unit, Fraction(0))
        if scale is not None or not isinstance(unit, Fraction) or unit <= 0 or unit.numerator != 1:
            r.fallbacks.append(f"the unit dim {lemma.unit!r} is not a concrete 1/u (length {self.m})")
            return None
        u = unit.denominator
        env: dict[str, Any] = {}
        for d, v in lemma.inputs.items():
            value = x.get(d, Fraction(0))
            if isinstance(value, Fraction):
                if (value * u).denominator != 1:
                    r.fallbacks.append(f"dim {d!r} is not an integer over the unit (length {self.m})")
                    return None
                self.vals.arithmetic = True
                env[str(v)] = z3.IntVal(int(value * u), self.ctx)
                continue
            term = z3.simplify(self.vals.arith(self.vals.defined(value)) * self.vals.num(Fraction(u)))
            if z3.is_to_real(term) and z3.is_int(term.arg(0)):
                env[str(v)] = term.arg(0)
            elif z3.is_int(term):
                env[str(v)] = term
            else:
                r.fallbacks.append(f"dim {d!r} is not an integer term over the unit (length {self.m})")
                return None
        r.uses += 1
        return {
            d: self.vals.lin([(unit, self.vals.formula(e, env))], Fraction(0))
            for d, e in lemma.outputs.items()
        }

    def attention(self, idx: int, layer: AttentionLayer, t: int) -> tuple[dict[str, Any], Any]:
        outs: dict[str, Any] = {}
        scale = None
        for h in layer.heads:
            got, s = self.head(idx, layer, h, t)
            if s is not None:
                if scale is not None or len(layer.heads) > 1:
                    raise Unsupported(f"an averaging head {h.name!r} beside other heads in {layer.name!r}")
                scale = s
            outs.update(got)
        if layer.output is not None:
            outs = _affine(self.vals, layer.output, outs, scale)
        return outs, scale

    def candidates(self, h: Head, t: int) -> list[int]:
        match h.mask:
            case "none":
                return list(range(self.N))
            case "causal":
                return list(range(t + 1))
            case "strict_causal":
                return list(range(t))
            case "anticausal":
                return list(range(t, self.N))
            case "strict_anticausal":
                return list(range(t + 1, self.N))
        raise Unsupported(f"mask {h.mask!r}")

    def head(self, idx: int, layer: AttentionLayer, h: Head, t: int) -> tuple[dict[str, Any], Any]:
        if h.relative:
            raise Unsupported(f"head {h.name!r} uses relative positions, which compositional proofs do not cover")
        cands = self.candidates(h, t)
        zero = {o: Fraction(0) for o in h.value.outputs}
        if not cands:
            if h.empty == "zero":
                return zero, None
            raise Unsupported(f"head {h.name!r} with empty='error' over an empty masked set")
        r = self.head_lemmas.get((layer.name, h.name))
        if r is not None:
            scan = self.scan(idx, layer, h, r)
            if scan is not None:
                got = scan[t]
                assert got is not None
                return got, None
        return self.head_faithful(idx, h, t, cands)

    def scan(self, idx: int, layer: AttentionLayer, h: Head, r: _LemmaResult) -> list[dict[str, Any] | None] | None:
        """The proved NearestSelection as a prefix scan over the positions: the selected value
        at each query position. None (with a recorded fallback) where a side condition fails."""
        key = (idx, h.name)
        if key in self._scans:
            return self._scans[key]
        lemma = r.lemma
        assert isinstance(lemma, NearestSelection)
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        states = [self.state(idx, j) for j in range(self.N)]
        for j, (x, scale) in enumerate(states):
            problem = None
            if scale is not None:
                problem = f"position {j} is scaled"
            for d in lemma.boolean:
                if self.vals.boolish(x.get(d, Fraction(0))) is None:
                    problem = f"dim {d!r} is not 0/1 at position {j}"
            for d, feat in lemma.positional.items():
                if x.get(d) != self.feature_at(feat, j):
                    problem = f"dim {d!r} does not hold {feat} at position {j}"
            if problem is not None:
                r.fallbacks.append(f"{problem} (length {self.m})")
                self._scans[key] = None
                return None
        z3 = self.z3
        prefer = [
            self.vals.boolish(_sympy_to_z3(self.vals, lemma.prefer, {d: self.vals.boolish(x.get(d, Fraction(0))) for d in lemma.boolean}))
            for x, _ in states
        ]
        present = [self.present_at(j) for j in range(self.N)]
        prefer = [p if present[j] is True or z3.is_false(p) else self.vals.and_([present[j], p]) for j, p in enumerate(prefer)]
        values = [_affine(self.vals, h.value, x) for x, _ in states]
        later = _nearer_is_later(h.mask)
        strict = h.mask.startswith("strict")
        order = range(self.N) if later else range(self.N - 1, -1, -1)
        if present[order[0]] is not True:
            raise Unsupported(f"head {h.name!r}: the scan starts at a slot that may be absent (no prefix/suffix token there)")
        out: list[dict[str, Any] | None] = [None] * self.N
        found: Any = z3.BoolVal(False, self.ctx)
        best: dict[str, Any] = {o: Fraction(0) for o in h.value.outputs}
        near: dict[str, Any] | None = None  # the value at the nearest present position passed
        for t in order:
            if not strict:
                found, best = self._scan_add(found, best, prefer[t], values[t])
                out[t] = {o: self.vals.ite(found, best[o], values[t][o]) for o in best}
            elif near is None:
                out[t] = {o: Fraction(0) for o in best}  # empty masked set: only with empty="zero"
            else:
                out[t] = {o: self.vals.ite(found, best[o], near[o]) for o in best}
            if strict:
                found, best = self._scan_add(found, best, prefer[t], values[t])
            if present[t] is True or near is None:
                near = values[t]
            else:
                near = {o: self.vals.named(self.vals.ite(present[t], values[t][o], near[o]), f"near.{o}") for o in best}
        r.uses += 1
        self._scans[key] = out
        return out

    def _scan_add(self, found: Any, best: dict[str, Any], p: Any, v: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        z3 = self.z3
        new_best = {o: self.vals.named(self.vals.ite(p, v[o], best[o]), f"scan.{o}") for o in best}
        found = p if z3.is_false(found) else self.vals.or_([p, found])
        return self.vals.named(found, "scan.found"), new_best

    def head_faithful(self, idx: int, h: Head, t: int, cands: list[int]) -> tuple[dict[str, Any], Any]:
        vals = self.vals
        if self.ranged and any(self.present_at(j) is not True for j in cands):
            raise Unsupported(f"head {h.name!r} without a lemma attends over slots that may be absent (a query over several lengths)")
        xq, sq = self.state(idx, t)
        if sq is not None:
            raise Unsupported(f"head {h.name!r} queries a scaled position")
        q = _affine(vals, h.query, xq)
        if h.mask == "none" and all(isinstance(v, Fraction) for v in q.values()):
            # The same query over the same positions: the same output at every position.
            memo = (idx, h.name, tuple(q.items()))
            got = self._same_query.get(memo)
            if got is None:
                got = self._same_query[memo] = self._head_over(idx, h, t, cands, q)
            return got
        return self._head_over(idx, h, t, cands, q)

    def _head_over(self, idx: int, h: Head, t: int, cands: list[int], q: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        vals, z3 = self.vals, self.z3
        scores: list[Any] = []
        values: list[dict[str, Any]] = []
        for j in cands:
            xk, sk = self.state(idx, j)
            if sk is not None:
                raise Unsupported(f"head {h.name!r} reads a scaled position")
            k = _affine(vals, h.key, xk)
            terms = []
            for c in h.query.outputs:
                qa, ka = q[c], k[c]
                if isinstance(qa, Fraction):
                    terms.append((qa, ka))
                elif isinstance(ka, Fraction):
                    terms.append((ka, qa))
                else:
                    raise Unsupported(f"head {h.name!r}: a score multiplies two word-dependent values")
            s = vals.lin(terms, Fraction(0))
            if h.scoring == "neg_abs_dot":
                s = -abs(s) if isinstance(s, Fraction) else -z3.If(vals.arith(s) >= 0, vals.arith(s), -vals.arith(s))
            scores.append(s)
            values.append(_affine(vals, h.value, xk))
        outputs = h.value.outputs
        if all(isinstance(s, Fraction) for s in scores):
            weights = self._concrete_weights(h, scores)
            return {o: vals.lin([(w, v[o]) for w, v in zip(weights, values, strict=True)], Fraction(0)) for o in outputs}, None
        if not isinstance(h.normalizer, Hardmax):
            raise Unsupported(f"softmax head {h.name!r} with word-dependent scores")
        top = vals.fresh_real(f"max.{h.name}.{t}")
        sa = [vals.arith(s) for s in scores]
        vals.assertions.extend(top >= s for s in sa)
        vals.assertions.append(z3.Or([top == s for s in sa]))
        sel = [s >= top for s in sa]
        if h.normalizer.tie in ("leftmost", "rightmost"):
            order = list(range(len(cands)))
            if h.normalizer.tie == "rightmost":
                order.reverse()
            out = dict(values[order[-1]])
            for j in reversed(order[:-1]):
                out = {o: vals.ite(sel[j], values[j][o], out[o]) for o in outputs}
            return out, None
        count = z3.Sum([z3.If(s, vals.num(Fraction(1)), vals.num(Fraction(0))) for s in sel])
        zero_r = vals.num(Fraction(0))
        summed: dict[str, Any] = {}
        for o in outputs:
            parts = [z3.If(s, vals.arith(v[o]), zero_r) for s, v in zip(sel, values, strict=True) if not (isinstance(v[o], Fraction) and v[o] == 0)]
            summed[o] = z3.Sum(parts) if parts else Fraction(0)
        return summed, count

    def _concrete_weights(self, h: Head, scores: list[Any]) -> list[Fraction]:
        if isinstance(h.normalizer, Hardmax):
            top = max(scores)
            best = [i for i, s in enumerate(scores) if s == top]
            if h.normalizer.tie == "leftmost":
                best = best[:1]
            elif h.normalizer.tie == "rightmost":
                best = best[-1:]
            return [Fraction(1, len(best)) if i in best else Fraction(0) for i in range(len(scores))]
        sm: Softmax = h.normalizer
        if sm.r is None:
            raise Unsupported(f"softmax head {h.name!r} with base e^c (transcendental)")
        sc = h.scale
        if sc.log_n or sc.sqrt_d is not None:
            raise Unsupported(f"softmax head {h.name!r} with a ln n or 1/√d scale")
        mult = sc.coef * (self.N if sc.times_n else 1)
        exps = [s * mult for s in scores]
        if any(e.denominator != 1 for e in exps):
            raise Unsupported(f"softmax head {h.name!r}: a scaled score is not an integer (irrational weight)")
        low = min(exps)
        raw = [sm.r ** int(e - low) for e in exps]
        z = sum(raw, Fraction(0))
        return [w / z for w in raw]

    # -------------------------------------------------------------- readout and language

    def accept(self) -> Any:
        r = self.net.readout
        match r:
            case Classifier():
                t = r.position if r.position >= 0 else self.N + r.position
                if self.present_at(t) is not True:
                    raise Unsupported(f"the readout position {r.position} is a slot that may be absent (a query over several lengths)")
                got = self.presence_accept(r, t)
                if got is not None:
                    return got
                x, scale = self.state(len(self.net.layers), t)
                logit = _affine(self.vals, r.logit, x, scale)[r.logit.outputs[0]]
                if isinstance(logit, Fraction):
                    return self.z3.BoolVal(logit > 0, self.ctx)
                return self.vals.arith(logit) > self.vals.num(Fraction(0))
            case NextSymbols():
                raise Unsupported("next-symbol readouts (generators)")
            case _:
                assert_never(r)

    def presence_accept(self, r: Classifier, t_r: int) -> Any | None:
        """The accept bit as a Boolean formula when the last attention layer is one averaging
        hardmax head over Boolean key and value dims followed by position-wise blocks: the
        head's output is a convex combination (all weights > 0) of the value patterns present in
        the top score class, and a readout lemma (proved here, over all such weights, with z3)
        says that the logit's sign depends only on which patterns are present. None where the
        network does not have that shape or the lemma fails (the arithmetic encoding is used)."""
        head = self.readout_head()
        if head is None:
            return None
        idx, h = head
        cands = self.candidates(h, t_r)
        if not cands:
            return None
        plan = self.readout_plan(idx, h, self.state(idx, t_r), t_r - self.N)
        if plan is None:
            return None
        dims, patterns = plan[0], plan[1]
        bits = [self.pattern_bits(dims, self.state(idx, j)) for j in cands]
        if any(b is None for b in bits):
            return None
        z3 = self.z3
        there = [self.present_at(j) for j in cands]
        present = []
        for pat in patterns:
            lits = [[row[d] if pat[d] else z3.Not(row[d]) for d in dims] + ([] if p is True else [p]) for row, p in zip(bits, there, strict=True)]
            present.append(self.vals.named(z3.Or([z3.And(lit) for lit in lits]), "present"))
        return self.presence_formula(plan, present)

    def readout_head(self) -> tuple[int, Head] | None:
        """The readout's averaging head (the last attention layer, one hardmax head with tie
        "average" and dot scores, residual, followed by position-wise blocks without layer norm)
        and its sublayer index; None where the network is not of that shape."""
        net = self.net
        att = [i for i, sub in enumerate(net.layers) if isinstance(sub.block, AttentionLayer)]
        if not att:
            return None
        idx = att[-1]
        sub = net.layers[idx]
        layer = sub.block
        assert isinstance(layer, AttentionLayer)
        later = net.layers[idx + 1:]
        if (
            len(layer.heads) != 1 or layer.output is not None or not sub.residual or sub.post_ln is not None
            or any(s.post_ln is not None for s in later) or any(not isinstance(s.block, FFN) for s in later)
        ):
            return None
        h = layer.heads[0]
        if not isinstance(h.normalizer, Hardmax) or h.normalizer.tie != "average" or h.scoring != "dot":
            return None
        return idx, h

    def pattern_bits(self, dims: Sequence[str], state: State) -> dict[str, Any] | None:
        """The readout head's key and value dims at one position as Bool terms (None: not 0/1)."""
        x, scale = state
        if scale is not None:
            return None
        row = {d: self.vals.boolish(x.get(d, Fraction(0))) for d in dims}
        return None if any(v is None for v in row.values()) else row

    def readout_plan(self, idx: int, h: Head, state: State, where: int) -> tuple[list[str], list[dict[str, bool]], dict[Fraction, list[int]], PresenceSigns] | None:
        """What the presence readout needs at the readout position (its ``state`` before the
        head; ``where`` its index from the end): the head's Boolean dims, their patterns, the
        patterns by score class, and the readout lemma's signs (proved once per key). None where
        the query or a dim read after the head is not concrete, or the lemma fails."""
        net, vals = self.net, self.vals
        xr, sr = state
        if sr is not None:
            return None
        q = _affine(vals, h.query, xr)
        if not all(isinstance(v, Fraction) for v in q.values()):
            return None
        dims = sorted(
            {d for row in h.key.weights for d, w in zip(h.key.inputs, row, strict=True) if w != 0}
            | {d for row in h.value.weights for d, w in zip(h.value.inputs, row, strict=True) if w != 0}
        )
        if len(dims) > 6:
            return None
        r = net.readout
        assert isinstance(r, Classifier)
        reads = _read_dims(r.logit)
        for s_ in net.layers[idx + 1:]:
            assert isinstance(s_.block, FFN)
            if s_.block.steps:
                first = s_.block.steps[0]
                if not isinstance(first, Affine):
                    return None
                reads |= _read_dims(first)
        fixed = {d: xr.get(d, Fraction(0)) for d in sorted(reads)}
        if not all(isinstance(v, Fraction) for v in fixed.values()):
            return None
        patterns = [dict(zip(dims, combo, strict=True)) for combo in _bool_combos(len(dims))]
        classes: dict[Fraction, list[int]] = {}
        for pi, pat in enumerate(patterns):
            env = {d: Fraction(int(b)) for d, b in pat.items()}
            k = _affine(vals, h.key, env)
            score = sum((q[c] * k[c] for c in h.key.outputs), Fraction(0))
            classes.setdefault(score, []).append(pi)
        key = (idx, where, tuple(fixed.items()), tuple(dims))
        signs = self.readout_lemmas.get(key)
        if signs is None:
            signs = _presence_signs(net, idx, h, patterns, classes, fixed, self.readout_nodes)
            self.readout_lemmas[key] = signs
        if signs is False or signs is True:
            return None
        return dims, patterns, classes, signs

    def presence_formula(self, plan: tuple[list[str], list[dict[str, bool]], dict[Fraction, list[int]], PresenceSigns], present: Sequence[Any]) -> Any:
        """The accept bit from which value patterns occur (``present[p]``, a Bool per pattern)."""
        z3 = self.z3
        _dims, _patterns, classes, signs = plan
        order = sorted(classes, reverse=True)
        class_present = {c: z3.Or([present[p] for p in classes[c]]) for c in order}
        cases = []
        for ci, c in enumerate(order):
            top = z3.And(class_present[c], *(z3.Not(class_present[c2]) for c2 in order[:ci]))
            for subset, positive in signs[c]:
                if positive:
                    cases.append(z3.And(top, *(present[p] if p in subset else z3.Not(present[p]) for p in classes[c])))
        return z3.Or(cases) if cases else z3.BoolVal(False, self.ctx)

    def member(self, language: Language) -> Any:
        dfa = language.automaton
        if dfa is None:
            raise Unsupported(f"the language {language.name} has no Automaton")
        z3 = self.z3
        if len(self.alphabet) == 2 and _commutative(dfa) and self.m >= _COUNT_AT_LEAST and not self.ranged:
            # The state depends only on how many times each symbol occurs: membership is a set
            # of values of one count (the same Int the network's uniform heads sum into).
            ones = self.vals.count([self.is_symbol(t, 1) for t in range(self.m)])
            good = [c for c in range(self.m + 1) if dfa.accepts([1] * c + [0] * (self.m - c))]
            return z3.Or([ones == c for c in good]) if good else z3.BoolVal(False, self.ctx)
        state = [z3.BoolVal(q == dfa.start, self.ctx) for q in range(dfa.states)]
        for t in range(self.m):
            nxt = []
            for q2 in range(dfa.states):
                cases = [self.vals.and_([state[q], self.is_symbol(t, a)]) for q in range(dfa.states) for a in range(len(self.alphabet)) if dfa.delta[q][a] == q2 and not z3.is_false(state[q])]
                if self.present[t] is not True:
                    # an absent slot leaves the state as it is
                    if not cases and z3.is_false(state[q2]):
                        nxt.append(state[q2])
                        continue
                    step = self.vals.bool_ite(self.present[t], self.vals.or_(cases), state[q2])
                elif not cases:
                    nxt.append(z3.BoolVal(False, self.ctx))
                    continue
                else:
                    step = self.vals.or_(cases)
                v = z3.Bool(f"q{t + 1}.{q2}", self.ctx)
                self.vals.assertions.append(self.vals.iff(v, step))
                nxt.append(v)
            state = nxt
        return z3.Or([state[q] for q in sorted(dfa.accepting)])


def _read_dims(a: Affine) -> set[str]:
    """The input dims an affine map reads with a nonzero weight."""
    return {d for row in a.weights for d, w in zip(a.inputs, row, strict=True) if w != 0}


def _commutative(dfa: Automaton) -> bool:
    """Whether the order of the symbols never matters (δ(δ(q, a), b) = δ(δ(q, b), a)), so that
    the state after a word is a function of its symbol counts."""
    k = len(dfa.delta[0]) if dfa.delta else 0
    return all(
        dfa.delta[dfa.delta[q][a]][b] == dfa.delta[dfa.delta[q][b]][a]
        for q in range(dfa.states) for a in range(k) for b in range(k)
    )


def _bool_combos(k: int) -> list[tuple[bool, ...]]:
    return [tuple(bool((i >> b) & 1) for b in range(k)) for i in range(2**k)]


PresenceSigns = dict[Fraction, list[tuple[frozenset[int], bool]]]


def _presence_signs(
    net: Network,
    idx: int,
    h: Head,
    patterns: list[dict[str, bool]],
    classes: Mapping[Fraction, list[int]],
    fixed: Mapping[str, Fraction],
    nodes: list[LemmaNode],
) -> PresenceSigns | bool:
    """The readout lemma behind :meth:`_Abstraction.presence_accept`: for each score class and
    each nonempty set P of its value patterns, the sign of the logit is the same for every
    convex combination of P with positive weights. Two queries per set (is a positive logit
    possible? a non-positive one?); exactly one must be sat. False if some set has both."""
    import z3

    ctx = z3.Context()
    vals = _Values(z3, ctx)
    value_of = [_affine(vals, h.value, {d: Fraction(int(b)) for d, b in pat.items()}) for pat in patterns]
    signs: PresenceSigns = {}
    queries: list[SmtQuery] = []
    ok = True
    for c, members in classes.items():
        signs[c] = []
        for mask in range(1, 2 ** len(members)):
            subset = [members[i] for i in range(len(members)) if (mask >> i) & 1]
            lam = [z3.Real(f"lambda{p}", ctx) for p in subset]
            x: dict[str, Any] = dict(fixed)
            for o in h.value.outputs:
                a = vals.lin([(Fraction(1), z3.Sum([lam[i] * vals.num(value_of[p][o]) for i, p in enumerate(subset)]))], Fraction(0))
                x[o] = vals.lin([(Fraction(1), x.get(o, Fraction(0))), (Fraction(1), a)], Fraction(0))
            for sub in net.layers[idx + 1:]:
                assert isinstance(sub.block, FFN)
                out = _ffn_faithful(vals, sub.block, x)
                if sub.residual:
                    x = {**x, **{d: vals.lin([(Fraction(1), x.get(d, Fraction(0))), (Fraction(1), v)], Fraction(0)) for d, v in out.items()}}
                else:
                    x = {d: out.get(d, Fraction(0)) for d in net.dims}
            r = net.readout
            assert isinstance(r, Classifier)
            logit = vals.arith(_affine(vals, r.logit, x)[r.logit.outputs[0]])
            simplex = [*(v > 0 for v in lam), z3.Sum(lam) == 1]
            answers = []
            for label, goal in (("positive", logit > 0), ("non-positive", logit <= 0)):
                solver = z3.Solver(ctx=ctx)
                solver.add(*simplex, *vals.assertions, goal)
                shown = " + ".join("(" + ",".join(f"{d}={int(b)}" for d, b in patterns[p].items()) + ")" for p in subset)
                query, _model = _smt.solve(solver, name=f"readout.{h.name} class {c} patterns {shown} {label}", logic="QF_LRA", timeout=10.0,
                                      reason_unsat=f"no {label} logit when the maximal value patterns are {shown}")
                queries.append(query)
                answers.append(query.result)
            if answers == ["sat", "unsat"]:
                signs[c].append((frozenset(subset), True))
            elif answers == ["unsat", "sat"]:
                signs[c].append((frozenset(subset), False))
            else:
                ok = False
    shown_dims = ", ".join(sorted(patterns[0])) if patterns else ""
    nodes.append(
        LemmaNode(
            name=f"readout.{h.name}",
            statement=f"after the averaging head {h.name} (value patterns over {shown_dims}), the sign of the logit depends "
            "only on which patterns are present in the top score class, for every mix of them (all positive weights)",
            verdict="proved" if ok else "refuted",
            queries=tuple(queries),
        )
    )
    return signs if ok else False


# --------------------------------------------------------------------------- every length


class _StateVars:
    """The Bool state variables of the transition system over positions, made on first use:
    ``cur`` (before a position) and ``nxt`` (after it, the same name and ``.next``)."""

    def __init__(self, z3: Any, ctx: Any, mark: str) -> None:
        self.z3, self.ctx, self.mark = z3, ctx, mark
        self.vars: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        got = self.vars.get(name)
        if got is None:
            got = self.vars[name] = self.z3.Bool(name + self.mark, self.ctx)
        return got


class _Step(_Abstraction):
    """One position of the network as one step of a transition system over the positions.

    The position's token is a fixed prefix or suffix token, or a symbolic word symbol
    (``token=None``, Bools ``w0.*``). A NearestSelection scan toward the end of the word (causal
    masks) reads its state over the positions before from ``cur`` and writes the state with this
    position added into ``nxt``. A scan toward the start (anticausal masks) reads the state over
    the positions after from ``nxt``, guessed, and checks that ``cur``, the state guessed one step
    earlier, is that state with this position added: a word has exactly one run, the scans'
    states of the range query. The state of a scan: ``found`` (a preferred position was seen),
    ``best.o`` (the nearest preferred position's value dims), ``near.o`` (the nearest position's)
    and ``has`` (some position was seen). Positional values are :class:`_Pos` placeholders."""

    def __init__(
        self, z3: Any, ctx: Any, net: Network, lemmas: Sequence[_LemmaResult], vals: _Values, token: str | None,
        cur: _StateVars, nxt: _StateVars, readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode],
    ) -> None:
        super().__init__(z3, ctx, net, 1, lemmas, readout_lemmas, readout_nodes)
        self.vals = vals
        if token is None and len(self.alphabet) < 2**self.nbits:
            vals.assertions.append(z3.Or([self.is_symbol(0, a) for a in range(len(self.alphabet))]))
        self.tokens = [token]
        self.N = 1
        self.first_slot = 0
        self.ranged = True
        self.cur, self.nxt = cur, nxt
        self.scan_keys: dict[str, tuple[bool, tuple[str, ...]]] = {}  # key -> (toward the end?, value dims)

    def feature_at(self, feat: str, pos: int) -> Fraction | _Pos:
        if feat == "1":
            return feature(feat)(pos + 1, 1)
        return _Pos(((feat, Fraction(1)),), Fraction(0), pos)

    def candidates(self, h: Head, t: int) -> list[int]:
        raise Unsupported(f"head {h.name!r} without a NearestSelection lemma attends over the whole word")

    def head(self, idx: int, layer: AttentionLayer, h: Head, t: int) -> tuple[dict[str, Any], Any]:
        r = self.head_lemmas.get((layer.name, h.name))
        if h.relative or r is None:
            raise Unsupported(f"head {layer.name}.{h.name} has no proved NearestSelection lemma (a scan is what carries it from position to position)")
        return self.step_scan(idx, h, r), None

    def step_scan(self, idx: int, h: Head, r: _LemmaResult) -> dict[str, Any]:
        lemma = r.lemma
        assert isinstance(lemma, NearestSelection)
        vals, z3 = self.vals, self.z3
        x, scale = self.state(idx, 0)
        if scale is not None:
            raise Unsupported(f"head {h.name!r} reads a scaled position")
        env = {}
        for d in lemma.boolean:
            b = vals.boolish(x.get(d, Fraction(0)))
            if b is None:
                raise Unsupported(f"lemma {lemma.id!r}: dim {d!r} is not 0/1")
            env[d] = b
        for d, feat in lemma.positional.items():
            if x.get(d) != self.feature_at(feat, 0):
                raise Unsupported(f"lemma {lemma.id!r}: dim {d!r} does not hold {feat}")
        prefer = vals.boolish(_sympy_to_z3(vals, lemma.prefer, env))
        if prefer is None:
            raise Unsupported(f"lemma {lemma.id!r}: prefer={lemma.prefer} is not a Boolean formula")
        value = {}
        for o, v in _affine(vals, h.value, x).items():
            b = vals.boolish(v)
            if b is None:
                raise Unsupported(f"head {h.name!r}: value dim {o!r} is not 0/1 (a scan's state is Boolean)")
            value[o] = b
        later = _nearer_is_later(h.mask)
        strict = h.mask.startswith("strict")
        if strict and h.empty != "zero":
            raise Unsupported(f"head {h.name!r} with empty='error' (the first position's masked set is empty)")
        key = f"{idx}.{h.name}"
        outs = tuple(h.value.outputs)
        self.scan_keys[key] = (later, outs)
        before = self.cur if later else self.nxt  # the positions on the side this position is added to
        after = self.nxt if later else self.cur

        def part(sv: _StateVars, field: str) -> Any:
            return sv(f"scan{key}.{field}")

        found = vals.or_([prefer, part(before, "found")])
        best = {o: vals.bool_ite(prefer, value[o], part(before, f"best.{o}")) for o in outs}
        if strict:
            out = {o: vals.and_([part(before, "has"), vals.bool_ite(part(before, "found"), part(before, f"best.{o}"), part(before, f"near.{o}"))]) for o in outs}
        else:
            out = {o: vals.bool_ite(found, best[o], value[o]) for o in outs}
        vals.assertions.append(vals.iff(part(after, "found"), found))
        vals.assertions.append(part(after, "has"))
        for o in outs:
            vals.assertions.append(vals.iff(part(after, f"best.{o}"), best[o]))
            vals.assertions.append(vals.iff(part(after, f"near.{o}"), value[o]))
        r.uses += 1
        return {o: vals.named(v, f"{h.name}:{o}") for o, v in out.items()}


def _head_dims(h: Head) -> list[str]:
    return sorted(
        {d for row in h.key.weights for d, w in zip(h.key.inputs, row, strict=True) if w != 0}
        | {d for row in h.value.weights for d, w in zip(h.value.inputs, row, strict=True) if w != 0}
    )


@dataclass
class _System:
    """The transition system over positions whose runs are the words of every length."""

    z3: Any
    ctx: Any
    state: list[Any]  # the state variables (before a position)
    primed: list[Any]  # the same after it
    init: Any
    trans: Any
    bad: Any


def _every_length_system(
    net: Network, language: Language, results: Sequence[_LemmaResult], readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode], min_len: int
) -> _System:
    """The network with the proved lemmas in place as a transition system reading one token per
    step: the prefix tokens, ``min_len`` or more word symbols, the suffix tokens. A state holds
    the phase (one-hot), every scan's state (:class:`_Step`), which value patterns of the
    readout's averaging head have occurred (its presence readout), and the automaton's state
    (one-hot). ``bad``: all tokens read, every scan toward the start ends on no position, and the
    accept bit differs from membership. No reachable bad state = the theorem for every length."""
    import z3

    emb = net.embedding
    r = net.readout
    dfa = language.automaton
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported("compositional proofs need a token embedding (a flat embedding has no positions)")
    if dfa is None:
        raise Unsupported(f"the language {language.name} has no Automaton")
    if not isinstance(r, Classifier) or not -len(emb.suffix) <= r.position <= -1:
        raise Unsupported("the readout is not a classifier at a suffix token (every length needs a fixed readout position)")
    ctx = z3.Context()
    vals = _Values(z3, ctx)
    vals.inline = True
    cur, nxt = _StateVars(z3, ctx, ""), _StateVars(z3, ctx, ".next")
    P, S = len(emb.prefix), len(emb.suffix)
    phases = [f"pre{i}" for i in range(P)] + [f"word{c}" for c in range(min_len + 1)] + [f"suf{s}" for s in range(1, S)] + ["done"]
    first_word = f"word{0}"
    moves: list[tuple[str, str | None, int | None, str]] = []  # (from, token, suffix index, to)
    for i, tok in enumerate(emb.prefix):
        moves.append((f"pre{i}", tok, None, f"pre{i + 1}" if i + 1 < P else first_word))
    for c in range(min_len + 1):
        moves.append((f"word{c}", None, None, f"word{min(c + 1, min_len)}"))
    for s, tok in enumerate(emb.suffix):
        moves.append((f"word{min_len}" if s == 0 else f"suf{s}", tok, s, f"suf{s + 1}" if s + 1 < S else "done"))
    plan = None
    head = None
    keys: dict[str, tuple[bool, tuple[str, ...]]] | None = None
    steps: dict[tuple[str | None, int | None], tuple[Any, dict[str, Any] | None]] = {}
    symbol_steps: list[_Step] = []  # the step that reads a word symbol (Bools w0.*)
    for _from, tok, s, _to in moves:
        if (tok, s) in steps:
            continue
        start = len(vals.assertions)
        step = _Step(z3, ctx, net, results, vals, tok, cur, nxt, readout_lemmas, readout_nodes)
        if head is None:
            head = step.readout_head()
            if head is None:
                raise Unsupported("the readout is not one averaging head over Boolean dims followed by position-wise blocks")
        idx, h = head
        st = step.state(idx, 0)
        dims = _head_dims(h)
        bits = step.pattern_bits(dims, st)
        if bits is None:
            raise Unsupported(f"the readout head {h.name!r} reads a dim that is not 0/1")
        if s is not None and s - S == r.position:
            plan = step.readout_plan(idx, h, st, r.position)
            if plan is None:
                raise Unsupported("the readout lemma does not hold or reads a dim that is not concrete at the readout position")
        if keys is None:
            keys = step.scan_keys
        elif keys != step.scan_keys:
            raise Unsupported("the tokens are not read by the same scans")
        if tok is None:
            symbol_steps.append(step)
        steps[(tok, s)] = (vals.and_(vals.assertions[start:]), bits)
        del vals.assertions[start:]
    assert plan is not None and keys is not None and head is not None
    dims, patterns = plan[0], plan[1]
    pres = [f"seen{pi}" for pi in range(len(patterns))]
    qs = [f"q{q}" for q in range(dfa.states)]
    # every state variable, both copies
    for name in (*phases, *pres, *qs):
        cur(name), nxt(name)
    for key, (_later, outs) in keys.items():
        for field in ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs)):
            cur(f"scan{key}.{field}"), nxt(f"scan{key}.{field}")
    names = sorted(cur.vars)
    alts = []
    for frm, tok, s, to in moves:
        formula, bits = steps[(tok, s)]
        assert bits is not None
        parts = [cur(frm), nxt(to), *(z3.Not(nxt(p)) for p in phases if p != to), formula]
        for pi, pat in enumerate(patterns):
            here = vals.and_([bits[d] if pat[d] else vals.not_(bits[d]) for d in dims])
            parts.append(vals.iff(nxt(pres[pi]), vals.or_([cur(pres[pi]), here])))
        if tok is None:
            word_step = symbol_steps[0]
            sym = [word_step.is_symbol(0, a) for a in range(len(language.alphabet))]
            for q2 in range(dfa.states):
                came = [z3.And(cur(qs[q]), sym[a]) for q in range(dfa.states) for a in range(len(language.alphabet)) if dfa.delta[q][a] == q2]
                parts.append(vals.iff(nxt(qs[q2]), vals.or_(came)))
        else:
            parts.extend(vals.iff(nxt(q), cur(q)) for q in qs)
        alts.append(vals.and_(parts))
    trans = vals.or_(alts)
    first = phases[0]
    init = [cur(first), *(z3.Not(cur(p)) for p in phases if p != first), *(z3.Not(cur(p)) for p in pres)]
    init += [cur(q) if i == dfa.start else z3.Not(cur(q)) for i, q in enumerate(qs)]
    end = [cur("done")]
    for key, (later, outs) in keys.items():
        fields = ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs))
        for field in fields:
            (init if later else end).append(z3.Not(cur(f"scan{key}.{field}")))
    accept = step.presence_formula(plan, [cur(p) for p in pres])
    member = vals.or_([cur(qs[q]) for q in sorted(dfa.accepting)])
    bad = z3.And(*end, accept != member)
    state = [cur.vars[n] for n in names]
    primed = [nxt.vars[n] for n in names]
    return _System(z3, ctx, state, primed, z3.And(init), trans, bad)


def _invariant(system: _System, timeout: float) -> tuple[str, Any]:
    """Spacer (z3's Horn solver, IC3/PDR) on the system: ("safe", an inductive invariant as a
    formula over the state), ("unsafe", None) or ("unknown", the reason)."""
    z3, ctx = system.z3, system.ctx
    inv = z3.Function("Inv", *([z3.BoolSort(ctx)] * len(system.state)), z3.BoolSort(ctx))
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("timeout", max(1, int(timeout * 1000)))
    fp.register_relation(inv)
    free: dict[int, Any] = {}
    for f in (system.init, system.trans, system.bad):
        free.update(_consts(z3, f))
    fp.declare_var(*sorted(free.values(), key=str))
    fp.rule(inv(*system.state), system.init)
    fp.rule(inv(*system.primed), [inv(*system.state), system.trans])
    try:
        answer = fp.query(z3.And(inv(*system.state), system.bad))
    except z3.Z3Exception as exc:  # a timeout cancels the query
        return "unknown", exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
    if answer == z3.unsat:
        return "safe", z3.substitute_vars(fp.get_cover_delta(-1, inv), *system.state)
    if answer == z3.sat:
        return "unsafe", None
    return "unknown", fp.reason_unknown()


_CERTIFICATE = ("initiation", "consecution", "safety")


def _certificate(system: _System, inv: Any) -> list[tuple[str, Any]]:
    """The three queries that make ``inv`` a proof for every length, each to be unsat: the
    initial states satisfy it (initiation), a step keeps it (consecution), and no state in it is
    bad (safety). Plain Boolean queries any SMT solver re-checks."""
    z3, ctx = system.z3, system.ctx
    primed = z3.substitute(inv, *zip(system.state, system.primed, strict=True))
    out = []
    for name, parts in zip(_CERTIFICATE, ((system.init, z3.Not(inv)), (inv, system.trans, z3.Not(primed)), (inv, system.bad)), strict=True):
        solver = z3.Solver(ctx=ctx)
        solver.add(*parts)
        out.append((name, solver))
    return out


Clauses = tuple[tuple[tuple[str, bool], ...], ...]


def _clauses(z3: Any, inv: Any) -> Clauses | None:
    """An invariant in conjunctive normal form over state variables, canonically ordered
    (each clause a sorted tuple of (variable name, polarity)), or None where it is not one."""

    def literal(e: Any) -> tuple[str, bool] | None:
        pos = not z3.is_not(e)
        atom = e if pos else e.arg(0)
        if z3.is_const(atom) and atom.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            return atom.decl().name(), pos
        return None

    out = []
    for clause in (inv.children() if z3.is_and(inv) else [inv]):
        lits = [literal(e) for e in (clause.children() if z3.is_or(clause) else [clause])]
        if any(lit is None for lit in lits):
            return None
        out.append(tuple(sorted(set(lits))))  # type: ignore[arg-type]
    return tuple(sorted(set(out)))


def _from_clauses(system: _System, clauses: Clauses) -> Any:
    """The invariant ``clauses`` over ``system``'s state variables (an unknown name: ValueError)."""
    z3 = system.z3
    by_name = {str(v): v for v in system.state}
    missing = sorted({name for clause in clauses for name, _pos in clause} - set(by_name))
    if missing:
        raise ValueError(f"the invariant names {', '.join(missing[:3])}, which are not state variables of the system")
    return z3.And([z3.Or([by_name[name] if pos else z3.Not(by_name[name]) for name, pos in clause]) for clause in clauses])


@dataclass(frozen=True, slots=True)
class Diagram:
    """An invariant as a reduced ordered binary decision diagram over the state variables:
    ``nodes[i]`` is node ``i + 2``, a (variable, node if it is false, node if it is true); 0 and
    1 are the constants false and true; ``root`` is the invariant. The nodes come in one order
    (children before parents, the false child's nodes first), so a diagram read back from a
    recorded query is the diagram that was written."""

    nodes: tuple[tuple[str, int, int], ...]
    root: int


Invariant = Clauses | Diagram


def _from_diagram(system: _System, diagram: Diagram) -> Any:
    """The invariant ``diagram`` over ``system``'s state variables: ``(ite v hi lo)`` per node."""
    z3 = system.z3
    by_name = {str(v): v for v in system.state}
    missing = sorted({name for name, _lo, _hi in diagram.nodes} - set(by_name))
    if missing:
        raise ValueError(f"the invariant names {', '.join(missing[:3])}, which are not state variables of the system")
    terms = [z3.BoolVal(False, system.ctx), z3.BoolVal(True, system.ctx)]
    for name, lo, hi in diagram.nodes:
        terms.append(z3.If(by_name[name], terms[hi], terms[lo]))
    return terms[diagram.root]


def _diagram_of_formula(z3: Any, inv: Any) -> Diagram | None:
    """The diagram a formula of nested ``ite`` over state variables writes (as
    :func:`_from_diagram` prints it), or None where it is not one."""
    index: dict[int, int] = {}
    nodes: list[tuple[str, int, int]] = []
    stack: list[tuple[Any, bool]] = [(inv, False)]
    while stack:
        e, expanded = stack.pop()
        if e.get_id() in index:
            continue
        if z3.is_false(e) or z3.is_true(e):
            index[e.get_id()] = int(z3.is_true(e))
            continue
        if not z3.is_app_of(e, z3.Z3_OP_ITE):
            return None
        var, hi, lo = e.arg(0), e.arg(1), e.arg(2)
        if not (z3.is_const(var) and var.decl().kind() == z3.Z3_OP_UNINTERPRETED):
            return None
        if not expanded:
            stack.extend(((e, True), (hi, False), (lo, False)))  # the false child first
            continue
        nodes.append((var.decl().name(), index[lo.get_id()], index[hi.get_id()]))
        index[e.get_id()] = len(nodes) + 1
    return Diagram(tuple(nodes), index[inv.get_id()])


def _recorded_invariant(text: str) -> Invariant:
    """The invariant of a recorded initiation query (its last assertion is ``not Inv``), parsed
    in a context of its own: clauses (Spacer's) or a decision diagram (the reachable states)."""
    import z3

    ctx = z3.Context()
    try:
        assertions = z3.parse_smt2_string(text, ctx=ctx)
    except z3.Z3Exception as exc:
        reason = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
        raise ValueError(f"the recorded initiation query is not SMT-LIB2 that z3 reads ({reason.strip()})") from None
    last = assertions[len(assertions) - 1] if len(assertions) else None
    inv: Invariant | None = None
    if last is not None and z3.is_not(last):
        inv = _diagram_of_formula(z3, last.arg(0)) if z3.is_app_of(last.arg(0), z3.Z3_OP_ITE) else _clauses(z3, last.arg(0))
    if inv is None:
        raise ValueError(
            "the recorded initiation query does not end with a negated invariant in conjunctive normal form or as a decision diagram"
        )
    return inv


def _reachable(system: _System, deadline: float, stop: Callable[[], bool]) -> tuple[str, Any]:
    """The reachable states of the system, by binary decision diagrams in a process of their own
    (:func:`netproof.verifier.smt.diagrams.reachable`: killed at the deadline or when ``stop()`` says so),
    from the initial states one step at a time until no new state comes: ("safe", the reachable
    states as a :class:`Diagram`: the strongest inductive invariant), ("unsafe", None) where a
    bad state is reachable, ("unknown", why), ("unsupported", why) without dd. The variables
    keep one order, the inputs first and each state variable beside its next copy."""
    from netproof.verifier.smt.diagrams import reachable

    z3 = system.z3
    names = [str(v) for v in system.state]
    primed = [str(v) for v in system.primed]
    inputs = sorted(
        {str(v) for f in (system.init, system.trans, system.bad) for v in _consts(z3, f).values()} - set(names) - set(primed)
    )
    order = [*inputs, *(v for pair in zip(names, primed, strict=True) for v in pair)]
    try:
        init, trans, bad = (_plain(z3, f) for f in (system.init, system.trans, system.bad))
    except Unsupported as exc:
        return "unsupported", str(exc)
    status, got = reachable(order, names, primed, init, trans, bad, deadline, stop)
    if status == "safe":
        nodes, root = got
        return "safe", Diagram(nodes, root)
    return status, (None if status == "unsafe" else got)


_PLAIN_OPS = {"Z3_OP_NOT": "not", "Z3_OP_AND": "and", "Z3_OP_OR": "or", "Z3_OP_IFF": "iff", "Z3_OP_XOR": "xor", "Z3_OP_IMPLIES": "implies", "Z3_OP_ITE": "ite"}


def _plain(z3: Any, formula: Any) -> tuple[tuple[Any, ...], ...]:
    """A Boolean z3 formula (and, or, not, =, distinct, xor, =>, ite over Bool constants) as a
    :data:`netproof.verifier.smt.diagrams.Formula`: plain data, children before parents."""
    ops = {getattr(z3, k): v for k, v in _PLAIN_OPS.items()}
    index: dict[int, int] = {}
    nodes: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, bool]] = [(formula, False)]
    while stack:
        e, expanded = stack.pop()
        if e.get_id() in index:
            continue
        if z3.is_true(e) or z3.is_false(e):
            node: tuple[Any, ...] = ("const", z3.is_true(e))
        elif not z3.is_bool(e):
            raise Unsupported(f"the transition system has a term {str(e)[:60]!r} that is not Boolean")
        elif z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            node = ("var", e.decl().name())
        elif not expanded:
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(e.children()))
            continue
        else:
            kind = e.decl().kind()
            args = [index[c.get_id()] for c in e.children()]
            if kind in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(args) == 2 and z3.is_bool(e.arg(0)):
                node = ("iff" if kind == z3.Z3_OP_EQ else "xor", *args)
            elif kind in ops:
                node = (ops[kind], *args)
            else:
                raise Unsupported(f"the transition system has a term {e.decl().name()!r} that is not Boolean logic")
        nodes.append(node)
        index[e.get_id()] = len(nodes) - 1
    return tuple(nodes)


def _prove_every_length(
    net: Network, claim: Recognizes, results: Sequence[_LemmaResult], readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode], timeout: float,
    on_context: Callable[[Any], None] | None = None, stop: Callable[[], bool] = lambda: False,
) -> tuple[list[SmtQuery] | None, str, str]:
    """The theorem for every length (see :func:`prove_recognizes`): its three certificate
    queries, each unsat, or None and why not, and how the invariant was found. The reachable
    states (:func:`_reachable`, binary decision diagrams) come first, within half of
    ``timeout``; Spacer (z3's IC3/PDR) gets the rest where they give no answer (dd missing, or a
    diagram too big for the time). ``on_context`` is given the z3 context Spacer runs in, before
    it starts, and ``stop()`` is asked between steps (to stop either from another thread)."""
    started = time.perf_counter()
    try:
        system = _every_length_system(net, claim.language, results, readout_lemmas, readout_nodes, claim.min_len)
    except Unsupported as exc:
        return _prove_by_classes(net, claim, results, timeout, on_context, f"not a transition system ({exc})")
    status, found = _reachable(system, started + timeout / 2, stop)
    how = "the reachable states, by binary decision diagrams"
    if status == "unsafe":
        return None, "a misclassified word (of some length) is reachable, so the ranges look for the shortest", how
    invariant: Invariant | None = found if status == "safe" else None
    if invariant is None:
        if stop():
            return None, f"stopped after {time.perf_counter() - started:.1f} s, before an invariant was found", how
        how = "Spacer"
        if on_context is not None:
            on_context(system.ctx)
        status, inv = _invariant(system, max(0.001, timeout - (time.perf_counter() - started)))
        if status == "unsafe":
            return None, "Spacer found a misclassified word (of some length), so the ranges look for the shortest", how
        if status != "safe":
            if stop():
                return None, f"stopped after {time.perf_counter() - started:.1f} s, before an invariant was found (the reachable states: {found}; Spacer: {inv})", how
            return None, f"the reachable states: {found}; Spacer: {inv} after {time.perf_counter() - started:.1f} s", how
        invariant = _clauses(system.z3, inv)
        if invariant is None:
            return None, "Spacer's invariant is not in conjunctive normal form over the state", how
    # The certificate in a fresh system, from the canonical invariant: the proof log's rebuild
    # (certificate_queries) makes the same terms in the same order, hence the same text.
    queries = []
    for name, text, solver in certificate_queries(net, claim, results, invariant, readout_lemmas):
        solver.set("timeout", 60_000)
        began = time.perf_counter()
        answer = str(solver.check())
        if answer != "unsat":
            raise EncoderBugError(
                f"the invariant ({how}) for {claim.id} fails its query {name!r} ({answer}): a bug in the transition system or its reading"
            )
        queries.append(SmtQuery(name=name, smt2=text, result="unsat", reason=_CERTIFICATE_REASONS[name.rsplit(" ", 1)[-1]], seconds=time.perf_counter() - began))
    return queries, "", how


def _prove_by_classes(
    net: Network, claim: Recognizes, results: Sequence[_LemmaResult], timeout: float,
    on_context: Callable[[Any], None] | None, why_not_system: str,
) -> tuple[list[SmtQuery] | None, str, str]:
    """The theorem for every length as one query over position classes (:mod:`netproof.verifier.smt.classes`),
    for a network that is no transition system (soft attention over every position): its query,
    unsat, or None and why not. A model is a word; one the exact interpreter does not
    misclassify is an encoder bug."""
    from netproof.verifier.smt.classes import LOGIC, QUERY, class_query

    how = "position classes"
    try:
        ctx, solver, enc = class_query(net, claim, results)
    except Unsupported as exc:
        return None, f"unsupported: {why_not_system}; position classes: {exc}", ""
    if on_context is not None:
        on_context(ctx)
    query, model = _smt.solve(solver, name=f"{claim.id} every n: {QUERY}", logic=LOGIC, timeout=timeout,
                              reason_unsat=f"no word of any length >= {claim.min_len} is misclassified (its positions grouped by class and symbol)")
    if query.result == "unsat":
        return [query], "", how
    if query.result == "sat":
        word = enc.word_of(model)
        _replay(net, claim.language, word)  # raises EncoderBugError where the word is classified right
        return None, f"a misclassified word of length {len(word)} exists (position classes), so the ranges look for the shortest", how
    return None, f"position classes: z3 {query.reason or 'unknown'}", how


def certificate_queries(
    net: Network, claim: Recognizes, results: Sequence[_LemmaResult], invariant: Invariant,
    readout_lemmas: dict[Any, Any] | None = None, readout_nodes: list[LemmaNode] | None = None,
) -> list[tuple[str, str, Any]]:
    """The certificate of the theorem for every length with the invariant ``clauses``: (query
    name, SMT-LIB2 text, solver) for initiation, consecution and safety, over a system built
    afresh (the same text wherever it is built: in the proof and in the proof log's rebuild)."""
    from netproof.verifier.smt.encoder import to_smt2

    uses = [r.uses for r in results]
    system = _every_length_system(
        net, claim.language, results, {} if readout_lemmas is None else readout_lemmas, [] if readout_nodes is None else readout_nodes, claim.min_len
    )
    for r, u in zip(results, uses, strict=True):
        r.uses = u  # the lemmas' applications were counted when the invariant was found
    inv = _from_diagram(system, invariant) if isinstance(invariant, Diagram) else _from_clauses(system, invariant)
    return [(f"{claim.id} every n: {name}", to_smt2(solver, logic="QF_UF"), solver) for name, solver in _certificate(system, inv)]


_CERTIFICATE_REASONS = {
    "initiation": "the invariant holds before the first token",
    "consecution": "reading one more token (a prefix, word or suffix token) keeps the invariant",
    "safety": "no state of the invariant, with every token read, has an accept bit other than membership",
}


class _EveryLengthSearch:
    """The proof for every length (:func:`_prove_every_length`) in a thread of its own, beside
    the range queries of the main thread: z3 and CUDD let go of Python's lock while they work, so
    on two cores the ranges keep the whole budget where the invariant takes long or is not found
    (Spacer finds none for the Dyck(2,3) recognizer in 11 minutes; the ranges used to wait for it).

    The thread works on copies of the lemma results and its own readout lemmas, so the counts of
    lemma applications in a verdict's detail are those of the proof it reports. Either side
    interrupts the other's z3 context when it wins: a proof for every length stops the range
    query under way (:meth:`claim_ranges`), a counterexample or the end of the budget stops
    the search (:meth:`cancel`: the BDD steps ask between steps, Spacer is interrupted). z3 loses an interrupt that comes before its check starts, so an
    interrupt is repeated until the other side answers."""

    _POLL = 0.05  # seconds between repeated interrupts

    def __init__(self, net: Network, claim: Recognizes, results: Sequence[_LemmaResult], timeout: float) -> None:
        import threading

        self.results = [_LemmaResult(r.lemma, r.node, r.proved) for r in results]
        self.readout_lemmas: dict[Any, Any] = {}
        self.readout_nodes: list[LemmaNode] = []
        self.queries: list[SmtQuery] | None = None
        self.because = ""
        self.how = ""  # how the invariant was found
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._own: Any = None  # the context Spacer runs in
        self._ranges: Any = None  # the context of the range query under way
        self._cancelled = False
        self._answered = threading.Event()  # the main thread has seen the proof (or gave up)
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(net, claim, timeout), name=f"every-length {claim.id}", daemon=True)
        self._thread.start()

    def _run(self, net: Network, claim: Recognizes, timeout: float) -> None:
        try:
            self.queries, self.because, self.how = _prove_every_length(
                net, claim, self.results, self.readout_lemmas, self.readout_nodes, timeout, self._search_context, lambda: self._cancelled
            )
        except BaseException as exc:  # re-raised in the main thread (an EncoderBugError above all)
            self._error = exc
        finally:
            self.done.set()
        if self.queries is not None:
            # Stop the range query under way: repeat until the main thread has seen the proof.
            while not self._answered.wait(self._POLL):
                with self._lock:
                    ctx = self._ranges
                if ctx is not None:
                    ctx.interrupt()

    def _search_context(self, ctx: Any) -> None:
        """Register the z3 context the search solves in (Spacer's, or the position-classes query's), for cancel()."""
        with self._lock:
            self._own = ctx

    @property
    def proved(self) -> bool:
        """Whether the proof for every length is done (its queries checked)."""
        self._raise()
        return self.done.is_set() and self.queries is not None

    def claim_ranges(self, ctx: Any) -> bool:
        """Register the context of the range query about to be solved (None: none under way);
        False where the proof for every length is already done, and no query should start."""
        with self._lock:
            self._ranges = ctx
        if self.proved:
            self._answered.set()
            return False
        return True

    def wait(self, until: float) -> None:
        """Wait for the thread until the time ``until`` (of ``time.perf_counter``), then stop it."""
        self.done.wait(max(0.0, until - time.perf_counter()))
        self.cancel()

    def cancel(self) -> None:
        """Stop Spacer (repeating the interrupt until the thread ends) and release the thread."""
        self._cancelled = True
        self._answered.set()
        while not self.done.wait(self._POLL):
            with self._lock:
                ctx = self._own
            if ctx is not None:
                ctx.interrupt()
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def _consts(z3: Any, f: Any) -> dict[int, Any]:
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



# --------------------------------------------------------------------------- the theorem


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a compositional proof got: the verdict, the lemma tree, and the largest length
    every shorter length of which was proved (−1: none)."""

    verdict: Verdict
    tree: LemmaNode
    proved_up_to: int
    every_length: bool = False  # proved for every length (an inductive invariant, or position classes), not only up to the bound


def _replay(net: Network, language: Language, word: Word) -> Refuted:
    from netproof.symbolic.exact import run

    trace = run(net, word)
    member = language.contains(word)
    shown = render(language.alphabet, word) or "ε"
    if trace.accepted == member:
        raise EncoderBugError(
            f"the compositional encoding says {shown!r} (length {len(word)}) is misclassified by {net.name!r}, "
            f"but the exact interpreter {'accepts' if member else 'rejects'} it, as it should: the encoding is "
            "wrong; please report this with the network file"
        )
    return Refuted(
        METHOD,
        f"{shown!r} is {'in' if member else 'not in'} {language.name} but the network "
        f"{'accepts' if trace.accepted else 'rejects'} it (logit {trace.output}); found by z3, replayed exactly",
        word,
        {"logit": str(trace.output)},
    )


def _next_range(a: int, n: int, done: Sequence[tuple[int, int, float]], left: float) -> int:
    """The last length of the range that starts at ``a``: twice the last one (``min_len..16``,
    ``17..32``, ...), unless the ranges proved so far (``(first, last, seconds)`` each) predict
    that it would not fit in half the budget left; then the longest range predicted to fit (at
    least length ``a`` alone). The prediction: a full range's time (one that doubled the
    lengths) grows as (last length)^p, p fitted to the last two full ranges (clamped to 1..4;
    3 with fewer than two), from the last full range."""
    b = min(n, max(_FIRST_RANGE, 2 * (a - 1)))
    full = [(hi, t) for i, (lo, hi, t) in enumerate(done) if i == 0 or hi >= 2 * (lo - 1)]
    if not full:
        return b
    hi, t = full[-1]
    p = 3.0
    if len(full) >= 2:
        hi0, t0 = full[-2]
        if hi > hi0 > 0 and t > 0.05 and t0 > 0.05:
            p = min(4.0, max(1.0, math.log(t / t0) / math.log(hi / hi0)))
    if t <= 0 or t * (b / hi) ** p <= left / 2:
        return b
    fits = int(hi * ((left / 2) / t) ** (1 / p))
    return max(a, min(b, fits))


def _theorem_query(
    net: Network,
    language: Language,
    results: Sequence[_LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
    lo: int,
    hi: int,
) -> tuple[_Abstraction, Any, str | None]:
    """The theorem's query over the words of length ``lo..hi`` (the network with the proved
    lemmas in place, accept != membership), its solver and its SMT-LIB2 logic."""
    import z3

    ctx = z3.Context()
    ab = _Abstraction(z3, ctx, net, hi, results, readout_lemmas, readout_nodes, lo=lo)
    goal = ab.accept() != ab.member(language)  # first: both add definitions to the assertions
    # The smallest standard logic (cvc5 re-checks C4 at n = 22 in 0.01 s as QF_LIRA and not in 30 s as ALL).
    logic = None if ab.vals.arithmetic else "QF_UF"
    solver = z3.Solver(ctx=ctx) if ab.vals.arithmetic else _boolean_solver(z3, ctx)
    solver.add(*ab.vals.assertions)
    solver.add(goal)
    return ab, solver, logic


def rebuild_queries(
    net: Network, claim: Recognizes | ValueIs, lemmas: Sequence[Lemma], names: Sequence[str], recorded: Mapping[str, str] | None = None
) -> dict[tuple[str, str], str]:
    """The SMT-LIB2 text of a compositional proof's queries, by (lemma tree node, query name),
    for the freshness check of its proof log: the block lemmas are proved again (small queries,
    and the theorem's encoding depends on which of them hold), the theorem's queries named
    ``names`` (``"Y2 n=0..16"``, ``"C4 n=22"``, ``"C3-count n=5"``, ``"Y2 every n: safety"``)
    are built and printed, not solved. The certificate of a proof for every length is rebuilt
    around the invariant read from its recorded initiation query (``recorded``: query name ->
    recorded text); the rebuilt initiation query must then be that text again."""
    from netproof.verifier.smt.encoder import to_smt2

    results: list[_LemmaResult] = []
    for lemma in lemmas:
        node, ok = prove_lemma(net, lemma)
        results.append(_LemmaResult(lemma, node, ok))
    readout_lemmas: dict[Any, Any] = {}
    readout_nodes: list[LemmaNode] = []
    theorem: dict[tuple[str, str], str] = {}
    prefix = f"{claim.id} n="
    every = f"{claim.id} every n: {_CERTIFICATE[0]}"
    if isinstance(claim, Recognizes) and every in names and recorded is not None and every in recorded:
        for name, text, _solver in certificate_queries(net, claim, results, _recorded_invariant(recorded[every]), readout_lemmas, readout_nodes):
            theorem[(claim.id, name)] = text
    from netproof.verifier.smt.classes import LOGIC, QUERY, class_query, value_query

    if f"{claim.id} every n: {QUERY}" in names:
        _ctx, solver, _enc = class_query(net, claim, results) if isinstance(claim, Recognizes) else value_query(net, claim, results)
        theorem[(claim.id, f"{claim.id} every n: {QUERY}")] = to_smt2(solver, logic=LOGIC)
    for name in names:
        if not name.startswith(prefix):
            continue
        lo, _, hi = name[len(prefix):].partition("..")
        if not lo.isdigit() or not (hi or lo).isdigit():
            continue
        if isinstance(claim, ValueIs):
            if hi:
                continue
            solver, _word_of, logic = value_builder(claim, results, readout_lemmas, readout_nodes)(net, int(lo))
        else:
            _ab, solver, logic = _theorem_query(net, claim.language, results, readout_lemmas, readout_nodes, int(lo), int(hi or lo))
        theorem[(claim.id, name)] = to_smt2(solver, logic=logic)
    out = {(node.name, q.name): q.smt2 for r in results for node in r.node.walk() for q in node.queries}
    out.update({(node.name, q.name): q.smt2 for node in readout_nodes for q in node.queries})
    out.update(theorem)
    return out


def _boolean_solver(z3: Any, ctx: Any) -> Any:
    """The solver for a query with Booleans only (every block a Boolean lemma or a scan, the
    automaton): z3's simplifier and equation solver first (they remove the named definitions),
    then its SMT core. Measured on the range queries (2-core machine, one run each): Dyck(1,1)
    lengths 1025..2048 2.2 s (plain ``Solver()`` 8.7 s, ``SolverFor("QF_UF")`` 8.7 s); Dyck(2,2)
    lengths 65..128 14 s (``Solver()`` 24 s, ``SolverFor("QF_UF")`` 7 s)."""
    return z3.Then(z3.Tactic("simplify", ctx=ctx), z3.Tactic("solve-eqs", ctx=ctx), z3.Tactic("smt", ctx=ctx), ctx=ctx).solver()


def _shortest(ab: _Abstraction, solver: Any, model: Any, deadline: float) -> Word:
    """A counterexample of the shortest length the range query allows (binary search on the
    symbolic length; the model's word where time runs out)."""
    import z3

    word = ab.word_of(model)
    low, high = ab.lo, len(word)
    while low < high and time.perf_counter() < deadline:
        mid = (low + high) // 2
        solver.push()
        solver.add(z3.Not(ab.present[mid]))  # length <= mid
        solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
        answer = solver.check()
        if answer == z3.sat:
            word = ab.word_of(solver.model())
            high = len(word)
        elif answer == z3.unsat:
            low = mid + 1
        solver.pop()
        if answer not in (z3.sat, z3.unsat):
            break
    return word


def _shrink(ab: _Abstraction, solver: Any, word: Word, deadline: float) -> Word:
    """The shortlex-first counterexample of this length: fix the symbols left to right, each to
    the smallest one that still leaves a counterexample (one solver call per position and
    candidate, within the deadline; the word found so far if time runs out)."""
    import z3

    fixed: list[Any] = []
    out = list(word)
    for t in range(ab.m):
        for a in range(len(ab.alphabet)):
            if ab.alphabet[a] == out[t] or time.perf_counter() >= deadline:
                fixed.append(ab.is_symbol(t, ab.alphabet.index(out[t])))
                break
            solver.push()
            solver.add(*fixed, ab.is_symbol(t, a))
            solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
            answer = solver.check()
            model = solver.model() if answer == z3.sat else None
            solver.pop()
            if model is not None:
                out = list(ab.word_of(model))
                fixed.append(ab.is_symbol(t, a))
                break
    return tuple(out)


def prove_recognizes(
    net: Network,
    claim: Recognizes,
    lemmas: Sequence[Lemma],
    n: int,
    *,
    timeout: float = 60.0,
    on_length: Callable[[int, float], None] | None = None,
    lengths: str = "all",
) -> Progress:
    """Prove ``claim`` (accept ⇔ membership) for every word with ``claim.min_len <= |w| <= n``
    from ``lemmas``: each lemma once, then queries over the abstracted network.

    ``lengths="all"`` (the default) tries every length at once, in a thread beside the range
    queries (:class:`_EveryLengthSearch`): the network with the lemmas in place as a transition
    system over positions (:func:`_every_length_system`), an inductive invariant (its reachable
    states by binary decision diagrams, else Spacer, z3's IC3/PDR), and three unsat queries that
    make it a proof (initiation, consecution, safety: the theorem's queries in the log). Where it
    succeeds, that proof is the verdict, and the range queries are dropped. Where the network is
    not such a system (a head without a NearestSelection lemma, a readout that is not a presence
    readout), the search asks one query over position classes instead (:mod:`netproof.verifier.smt.classes`:
    soft attention whose scores repeat with the position, as in PARITY). Where neither applies,
    or no invariant is found in time, or a word that breaks the claim (of any length) exists, the
    verdict is that of ``lengths="ranges"``, which find the shortest counterexample. Once the
    ranges reach ``n``, the search gets at most half the budget.

    ``lengths="ranges"`` asks one query per range of lengths, the ranges doubling
    (``min_len..16``, ``17..32``, ``33..64``, ...): the word has ``hi`` slots and a symbolic
    length, so a query costs about what one length ``hi`` costs and the whole proof about twice
    the last range, instead of the sum over every length. Where the network cannot be encoded
    over a symbolic length (a positional value it computes with, an averaging or softmax head
    without a lemma over the slots), it falls back to ``lengths="each"``: one query per length.
    ``timeout`` is the budget in seconds for everything; ``on_length(m, seconds)`` is called
    after each proved range or length, with its last length (for benchmarks)."""
    if lengths not in ("all", "ranges", "each"):
        raise ValueError(
            f"lengths={lengths!r}: use 'all' (every length at once where the network allows, else ranges), "
            "'ranges' (one query per range of lengths) or 'each' (one query per length)"
        )

    started = time.perf_counter()
    deadline = started + timeout
    results: list[_LemmaResult] = []
    for lemma in lemmas:
        node, ok = prove_lemma(net, lemma, timeout=max(0.001, deadline - time.perf_counter()))
        results.append(_LemmaResult(lemma, node, ok))
    language = claim.language
    readout_lemmas: dict[Any, Any] = {}
    readout_nodes: list[LemmaNode] = []
    queries: list[SmtQuery] = []
    verdict: Verdict | None = None
    proved_up_to = claim.min_len - 1
    per_length_because = ""
    last_build = 0.0  # seconds the last range's query took to build (and print, below)
    done: list[tuple[int, int, float]] = []  # (first length, last length, seconds) of each range proved
    every_because = ""
    every_done = False
    search: _EveryLengthSearch | None = None
    if lengths == "all":
        lengths = "ranges"
        search = _EveryLengthSearch(net, claim, results, deadline - time.perf_counter())
    try:
        a = claim.min_len
        while a <= n:
            if search is not None and search.proved:
                break
            b = a if lengths == "each" else _next_range(a, n, done, deadline - time.perf_counter())
            shown = f"{a}" if a == b else f"{a}..{b}"
            left = deadline - time.perf_counter()
            if left <= 0:
                verdict = Unknown(METHOD, f"timeout: the {timeout:g} s budget ran out before length {a} (lengths {claim.min_len}..{a - 1} proved)")
                break
            if a < b and 2 * last_build > left:
                # Building a query cannot be interrupted, and a range twice as long takes about twice as long to build.
                verdict = Unknown(METHOD, f"timeout: {left:.1f} s of the {timeout:g} s budget left, less than building lengths {shown} "
                                          f"would take (twice the {last_build:.1f} s of the last range); lengths {claim.min_len}..{a - 1} proved")
                break
            range_started = time.perf_counter()
            before = [(r.uses, len(r.fallbacks)) for r in results]
            try:
                ab, solver, logic = _theorem_query(net, language, results, readout_lemmas, readout_nodes, a, b)
            except Unsupported as exc:
                if a < b:
                    # Not encodable over a symbolic length: one query per length from here on.
                    lengths, per_length_because = "each", str(exc)
                    for r, (uses, fallbacks) in zip(results, before, strict=True):
                        r.uses, r.fallbacks = uses, r.fallbacks[:fallbacks]
                    continue
                verdict = Unknown(METHOD, f"unsupported: {exc}")
                break
            built = time.perf_counter() - range_started
            words = f"length {a}" if a == b else f"length {a} to {b}"
            if search is not None and not search.claim_ranges(ab.ctx):
                break
            query, model = _smt.solve(solver, name=f"{claim.id} n={shown}", logic=logic, timeout=max(0.001, deadline - time.perf_counter()),
                                 reason_unsat=f"no word of {words} is misclassified (lemmas in place of their blocks)")
            if search is not None and not search.claim_ranges(None):
                break  # the proof for every length came first (and may have interrupted this query)
            queries.append(query)
            if query.result == "unsat":
                proved_up_to = b
                last_build = built
                done.append((a, b, time.perf_counter() - range_started))
                if on_length is not None:
                    on_length(b, time.perf_counter() - started)
                a = b + 1
                continue
            if query.result == "sat":
                word = _shortest(ab, solver, model, deadline)
                if len(word) != b or a != b:
                    # Shrink among the words of that one length, in a query of its own.
                    ab1, solver1, _logic = _theorem_query(net, language, results, readout_lemmas, readout_nodes, len(word), len(word))
                    word = _shrink(ab1, solver1, word, deadline)
                else:
                    word = _shrink(ab, solver, word, deadline)
                verdict = _replay(net, language, word)
                queries[-1] = SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                                       reason=f"counterexample {render(language.alphabet, word) or 'ε'!r}", seconds=query.seconds)
                proved_up_to = len(word) - 1
                break
            reason = query.reason or "unknown"
            if reason in ("timeout", "canceled"):
                reason = f"timeout after {timeout:g} s at length {shown}"
            verdict = Unknown(METHOD, f"z3: {reason} (lengths {claim.min_len}..{a - 1} proved)")
            break
        if search is not None:
            # Spacer may still prove every length: until the budget's end where the ranges did not
            # reach n, and as before (half the budget) where they did.
            if isinstance(verdict, Refuted):
                search.cancel()
                if search.proved:
                    raise EncoderBugError(
                        f"Spacer's invariant proves {claim.id} for every length, but the range queries found the counterexample "
                        f"{verdict.reason}: a bug in the transition system or the range encoding"
                    )
            else:
                search.wait(started + timeout / 2 if verdict is None else deadline)
            if search.proved:
                assert search.queries is not None
                queries[:] = search.queries
                results, readout_nodes = search.results, search.readout_nodes
                lengths, per_length_because = "ranges", ""
                detail = f"every word with {claim.min_len} <= |w| <= {n}, and every longer one: {len(results)} lemmas proved for every input, then, " + (
                    "over the network with the lemmas in place on a word of symbolic length, its positions grouped by the "
                    "values of their positional features and by symbol, one query, unsat"
                    if search.how == "position classes" else
                    "over the network with the lemmas in place read as a transition system over positions, an inductive "
                    f"invariant ({search.how}) and its three queries ({', '.join(_CERTIFICATE)}), each unsat"
                )
                verdict = Proved(METHOD, sum(len(language.alphabet) ** m for m in range(claim.min_len, n + 1)), detail)
                proved_up_to = n
                every_done = True
                if on_length is not None:
                    on_length(n, time.perf_counter() - started)
            else:
                every_because = search.because
                if verdict is None and every_because.startswith("stopped after "):
                    every_because += ": the ranges had reached the bound, and half the budget was spent"
    finally:
        if search is not None:
            search.cancel()  # an exception or Ctrl-C leaves no thread running
    unproved = [r for r in results if not r.proved]
    if verdict is None:
        detail = (
            f"every word with {claim.min_len} <= |w| <= {n}: {len(results) - len(unproved)} lemmas proved for every "
            + (
                "input, then one query per length over the network with the lemmas in place, each unsat"
                if lengths == "each"
                else f"input, then {len(queries)} {'query' if len(queries) == 1 else 'queries'} over ranges of lengths "
                f"({', '.join(q.name.split('n=', 1)[-1] for q in queries)}) over the network with the lemmas in place, each unsat"
            )
            + (f" (not over ranges of lengths: {per_length_because})" if per_length_because else "")
            + (f" (not every length at once: {every_because})" if every_because else "")
        )
        verdict = Proved(METHOD, sum(len(language.alphabet) ** m for m in range(claim.min_len, n + 1)), detail)
    side = LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where the dims it assumes Boolean are 0/1 terms and its positional "
        "dims hold their features, at every position of every length; "
        + "; ".join(
            f"{r.lemma.id}: applied {r.uses} times" + (f", encoded faithfully where {r.fallbacks[0]}" if r.fallbacks else "")
            for r in results
        ),
        verdict="proved",
    )
    status = {Proved: "proved", Refuted: "refuted", Unknown: "unknown"}[type(verdict)]
    tree = LemmaNode(
        name=claim.id,
        statement=claim.statement + f" (every word with {claim.min_len} <= |w| <= {n})",
        verdict=status,  # type: ignore[arg-type]
        queries=tuple(queries),
        children=(*(r.node for r in results), *readout_nodes, side),
    )
    return Progress(verdict, tree, proved_up_to, every_length=every_done)


def value_builder(
    claim: ValueIs, results: Sequence[_LemmaResult], readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode]
) -> Callable[[Network, int], tuple[Any, Callable[[Any], Word], str | None]]:
    """The query "some word of length m has a value other than the closed form" over the
    network with the proved lemmas in place (:class:`netproof.verifier.smt.encoder.ValueBuilder`): the value of
    the claim's dim after its step at every token (or the logit), against the closed form, whose
    counts are the same Int variables the network's uniform heads sum into."""
    from netproof.verifier.smt.encoder import closed_form_term

    def build(net: Network, m: int) -> tuple[Any, Callable[[Any], Word], str | None]:
        import z3

        if claim.closed_form is None:
            raise Unsupported(f"claim {claim.id} has no closed form")
        ctx = z3.Context()
        ab = _Abstraction(z3, ctx, net, m, results, readout_lemmas, readout_nodes)
        emb = net.embedding
        assert isinstance(emb, TokenEmbedding)
        alphabet = list(ab.alphabet)

        def count(a: str) -> Any:
            bools = [ab.is_symbol(j, alphabet.index(a)) for j in range(m)]
            return z3.ToReal(ab.vals.count(bools)) if bools else ab.vals.num(Fraction(0))

        def indicator(j: int, a: str) -> Any:
            if j > m:
                return ab.vals.num(Fraction(0))
            return ab.vals.arith(ab.is_symbol(j - 1, alphabet.index(a)))

        points: list[tuple[int, Any]] = []
        if isinstance(claim.quantity, Output):
            r = net.readout
            if not isinstance(r, Classifier):
                raise Unsupported("the logit of a network without a classifier readout")
            t = r.position if r.position >= 0 else ab.N + r.position
            x, scale = ab.state(len(net.layers), t)
            if scale is not None:
                raise Unsupported("the logit at a scaled position (an averaging head before it)")
            points.append((0, _affine(ab.vals, r.logit, x)[r.logit.outputs[0]]))
        else:
            names = ["input", *(sub.name for sub in net.layers)]
            if claim.quantity.after not in names:
                raise Unsupported(f"claim {claim.id}: the network has no step named {claim.quantity.after!r}")
            layer = names.index(claim.quantity.after)
            for t in range(ab.N):
                x, scale = ab.state(layer, t)
                if scale is not None:
                    raise Unsupported(f"dim {claim.quantity.dim!r} at token {t} is scaled (an averaging head before it)")
                points.append((t, x.get(claim.quantity.dim, Fraction(0))))
        differs = []
        for t, value in points:
            expected = closed_form_term(z3, ctx, claim.closed_form, alphabet, (t, emb.index_base + t, ab.N), count, indicator)
            differs.append(ab.vals.arith(value) != expected)
        solver = z3.Solver(ctx=ctx)
        solver.add(*ab.vals.assertions)
        solver.add(z3.Or(differs) if differs else z3.BoolVal(False, ctx))
        return solver, ab.word_of, None

    return build


def _value_by_classes(job: Any, claim: ValueIs, results: Sequence[_LemmaResult], n: int, timeout: float) -> Outcome | str:
    """The value claim for every length as one query over position classes
    (:func:`netproof.verifier.smt.classes.value_query`): its outcome where z3 says unsat, else why not (a
    word of the model is replayed exactly first: one on which the network agrees with the claim
    is an encoder bug)."""
    from netproof.verifier.smt.classes import LOGIC, QUERY, value_query

    if job.construction.per_length:
        return "the construction builds one network per length"
    net = job.network(n)
    try:
        _ctx, solver, enc = value_query(net, claim, results)
    except Unsupported as exc:
        return f"unsupported by position classes: {exc}"
    query, model = _smt.solve(solver, name=f"{claim.id} every n: {QUERY}", logic=LOGIC, timeout=timeout,
                              reason_unsat=f"on no word of any length >= {claim.min_len} does the value differ from the closed form "
                              "(its positions grouped by class and symbol)")
    if query.result == "unsat":
        checked = sum(len(job.alphabet) ** m for m in range(claim.min_len, n + 1))
        return Outcome(Proved(METHOD, checked, f"every word with {claim.min_len} <= |w| <= {n}, and every longer one: one query over "
                              "a word of symbolic length, its positions grouped by the values of their positional features and by symbol, unsat"),
                       (query,))
    if query.result == "sat":
        word = enc.word_of(model)
        _smt.replay_value(net, claim, job.alphabet, word, METHOD)
        return f"position classes give the word {render(job.alphabet, word) or 'ε'!r}, so the lengths are tried one by one for the shortest"
    return f"position classes: z3 {query.reason or 'unknown'}"


def prove_value(job: Any, claim: ValueIs, lemmas: Sequence[Lemma], n: int, *, timeout: float = 60.0) -> Outcome:
    """A :class:`ValueIs` with a closed form, proved compositionally: each lemma once, then one
    query for every length over position classes where the network allows it
    (:func:`_value_by_classes`), else one query per length over the network with the proved
    lemmas in place (:func:`netproof.verifier.smt.encoder.value_is_smt` with :func:`value_builder`); the outcome
    carries the lemma tree (the claim at the root with its queries, the lemmas below)."""
    started = time.perf_counter()
    results: list[_LemmaResult] = []
    for lemma in lemmas:
        node, ok = prove_lemma(job.network(n), lemma, timeout=max(0.001, timeout - (time.perf_counter() - started)))
        results.append(_LemmaResult(lemma, node, ok))
    readout_nodes: list[LemmaNode] = []
    every = _value_by_classes(job, claim, results, n, timeout / 2)
    if isinstance(every, Outcome):
        outcome = every
    else:
        outcome = _smt.value_is_smt(
            job, claim, claim.min_len, n, timeout=max(0.001, timeout - (time.perf_counter() - started)),
            build=value_builder(claim, results, {}, readout_nodes), method=METHOD, name=f"{claim.id} n={{m}}",
        )
        if isinstance(outcome.verdict, Proved):
            outcome = Outcome(replace(outcome.verdict, detail=f"{outcome.verdict.detail} (not every length at once: {every})"), outcome.queries)
    status = {Proved: "proved", Refuted: "refuted", Unknown: "unknown"}[type(outcome.verdict)]
    side = LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where its assumptions hold, at every position of every length; "
        + "; ".join(f"{r.lemma.id}: applied {r.uses} times" + (f", encoded faithfully where {r.fallbacks[0]}" if r.fallbacks else "")
                    for r in results),
        verdict="proved",
    )
    tree = LemmaNode(
        name=claim.id,
        statement=claim.statement + f" (every word with {claim.min_len} <= |w| <= {n})",
        verdict=status,  # type: ignore[arg-type]
        queries=outcome.queries,
        children=(*(r.node for r in results), *readout_nodes, side),
    )
    return Outcome(outcome.verdict, (), tree)


def prove_compositional(
    construction_name: str | Construction, params: Mapping[str, str], claim_id: str, n: int, *, timeout: float = 60.0, lengths: str = "all"
) -> tuple[Verdict, LemmaNode]:
    """The compositional proof of claim ``claim_id`` of a construction for every word length up
    to ``n``, within ``timeout`` seconds in all: its verdict and its lemma tree (the theorem at
    the root, each lemma a child with its own verdict and query). ``params`` as typed on the
    command line (``{"k": "2", "depth": "2"}``); ``lengths`` as in :func:`prove_recognizes`.

    A claim that is not a recognition claim with an automaton, or a construction that declares
    no lemmas, is ``Unknown("unsupported: ...")``.
    """
    construction = _construction(construction_name)
    values = construction.parse_params(dict(params))
    claims = {c.id: c for c in construction.claims(values)}
    if claim_id not in claims:
        raise KeyError(f"claim_id={claim_id!r} is not a claim of {construction.name}; its claims: {', '.join(claims)}")
    claim = claims[claim_id]
    lemmas = construction.lemmas(values) if construction.lemmas is not None else ()
    if not isinstance(claim, Recognizes) or claim.language.automaton is None:
        reason = f"unsupported: compositional proofs cover recognition claims against a language with an automaton, not {type(claim).__name__} {claim_id}"
        return Unknown(METHOD, reason), LemmaNode(name=claim_id, statement=claim.statement, verdict="unknown")
    net = construction.network(values, n) if construction.per_length else construction.network(values)
    progress = prove_recognizes(net, claim, lemmas, n, timeout=timeout, lengths=lengths)
    return progress.verdict, progress.tree


def _construction(name: str | Construction) -> Construction:
    if isinstance(name, Construction):
        return name
    from netproof.constructions import REGISTRY

    if name not in REGISTRY:
        raise KeyError(f"construction_name={name!r} is unknown; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


__all__ = ["METHOD", "Progress", "prove_compositional", "prove_lemma", "prove_recognizes", "prove_value", "rebuild_queries", "value_builder"]
