"""Bounded proofs with z3: the network IR encoded as an SMT query over a symbolic word.

One query per word length ``m`` (``n`` = m plus the special tokens is concrete in each query,
so everything that depends on positions only is computed exactly in Python first). The word is
``m`` integer variables ``w0 … w{m−1}`` (symbol indices into the alphabet); every value of the
network is either a :class:`~fractions.Fraction` (it does not depend on the word: folded here)
or a z3 term over those variables, with an interval enclosure that fixes the phase of a ReLU,
step or σ wherever the interval decides it (the others become ``ite`` case splits).

Faithful arithmetic, no approximation:

- affine maps: linear terms with numerals built from Fractions (``z3.RealVal("p/q", ctx)``);
- ReLU / σ / step: ``ite`` case splits, after the interval pre-pass;
- hardmax: the maximum ``M`` of the unmasked scores (``M ≥ s_j``, ``M = s_j`` for some j), the
  selected set ``s_j ≥ M``; ``average`` divides the selected values' sum by their count with one
  linear case per possible count, ``leftmost`` / ``rightmost`` take the first / last selected
  position; masks and ``empty="zero"`` are resolved per position (n is concrete). Where the
  finite value sets of the scores (tracked next to the intervals) are pairwise disjoint, no tie
  is possible: the single selected value is taken without a count (Dyck's matching heads, whose
  scores i/n − m_i never tie);
- only the positions something reads are encoded (after the last attention layer, the
  classifier's position; in that layer, its query only);
- softmax: exact rational weights where the scores do not depend on the word (Chiang & Cholak's
  networks); where they do but take finitely many values with rational weights base^(κ·s)
  (integer scores, rational base), the output times the normalizer equals the weighted sum,
  one linear case per value of the normalizer; else ``Unknown("unsupported: ...")``;
- layer norm: computed exactly where its inputs do not depend on the word, else
  ``Unknown("unsupported: ...")`` (√ of a word-dependent variance is out of this encoding).

The claim side: :class:`~netproof.verifier.claims.Recognizes` against a language with an
:class:`~netproof.verifier.claims.Automaton` (the symbolic encoding of the language: a DFA run over the
word variables), one query ``accept ≠ member`` per length, ``unsat`` for every length = proved.
A ``sat`` model is a counterexample word: it is replayed through the exact interpreter (an
encoder whose counterexample the exact interpreter does not reproduce raises
:class:`EncoderBugError`), and shrunk to the shortlex-first counterexample of the shortest length
(lengths are tried in increasing order, then symbols fixed left to right, smallest first).

Every query is kept as an :class:`SmtQuery` with its SMT-LIB2 text (:func:`to_smt2`, which cvc5
accepts) for the proof log. z3 is imported inside functions only: importing this module loads
neither z3 nor torch, so the dataclasses can be used anywhere.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, assert_never

from netproof.symbolic import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FlatEmbedding,
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

from netproof.verifier.claims import (
    Claim,
    Construction,
    Language,
    Output,
    Point,
    Proved,
    Recognizes,
    Refuted,
    Unknown,
    ValueIs,
    Verdict,
    Word,
)

if TYPE_CHECKING:
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.claims import Automaton

from netproof.verifier.smtlib import (  # noqa: F401  (the solver interface, used by this module's callers too)
    SOLVER,
    LemmaNode,
    Outcome,
    SmtQuery,
    SmtResult,
    smt2_logic,
    smt2_portable,
    solve,
    solver_version,
    to_smt2,
)

class EncoderBugError(RuntimeError):
    """The SMT encoding disagrees with the exact interpreter: a ``sat`` model whose word the
    exact interpreter does not get wrong. Never a verdict: a bug to report."""


class Unsupported(Exception):
    """Part of the network (or claim) the encoder cannot encode faithfully; becomes
    ``Unknown("unsupported: ...")``."""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Sym:
    """A word-dependent value: a z3 term with an enclosure ``lo <= term <= hi`` and, where it
    is small and known, the finite set ``vals`` of every value it can take (None: unknown)."""

    term: Any
    lo: Fraction
    hi: Fraction
    vals: frozenset[Fraction] | None = None


VALUE_SET_MAX = 64
"""Value sets larger than this are forgotten (None)."""


def _vals(v: Val) -> frozenset[Fraction] | None:
    return frozenset({v}) if isinstance(v, Fraction) else v.vals


def _capped(vals: frozenset[Fraction] | None) -> frozenset[Fraction] | None:
    return vals if vals is not None and len(vals) <= VALUE_SET_MAX else None


Val: TypeAlias = Fraction | Sym


def _ascii(text: str) -> str:
    out = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.:+-") else "_" for ch in text)
    return out or "_"


class _Encoder:
    """The network on a symbolic word of one length, in one z3 context."""

    def __init__(self, z3: Any, ctx: Any, net: Network, m: int, word: str = "int", hardmax: str = "max") -> None:
        self.z3 = z3
        self.hardmax = hardmax
        self.ctx = ctx
        self.net = net
        self.m = m
        self.assertions: list[Any] = []
        self._names: set[str] = set()
        self._nums: dict[Fraction, Any] = {}
        k = len(net.alphabet)
        # symbol[t][a]: the Bool "the t-th symbol is alphabet[a]"
        if word == "int":  # one integer per symbol (linear integer arithmetic)
            ws = [z3.Int(f"w{t}", ctx) for t in range(m)]
            for w in ws:
                self.assertions += [w >= 0, w < k]
            self.symbol = [[w == a for a in range(k)] for w in ws]
        elif word == "onehot":  # k Bools per symbol, exactly one true (pure Boolean + real arithmetic)
            self.symbol = [[z3.Bool(f"w{t}={a}", ctx) for a in range(k)] for t in range(m)]
            for row in self.symbol:
                self.assertions.append(z3.Or(row))
                self.assertions += [z3.Not(z3.And(x, y)) for x, y in itertools.combinations(row, 2)]
        else:
            raise ValueError(f"word={word!r} is not one of onehot, int")

    # -------------------------------------------------------------- helpers

    def num(self, q: Fraction) -> Any:
        v = self._nums.get(q)
        if v is None:
            v = self._nums[q] = self.z3.RealVal(str(q), self.ctx)
        return v

    def fresh(self, label: str) -> Any:
        base = _ascii(label)
        name = base
        i = 1
        while name in self._names:
            i += 1
            name = f"{base}#{i}"
        self._names.add(name)
        return self.z3.Real(name, self.ctx)

    def term(self, v: Val) -> Any:
        return self.num(v) if isinstance(v, Fraction) else v.term

    def name(self, v: Val, label: str) -> Val:
        """A named variable equal to ``v`` (keeps terms small); constants stay constants."""
        if isinstance(v, Fraction):
            return v
        if v.lo == v.hi:
            return v.lo
        if v.vals is not None and len(v.vals) == 1:
            return next(iter(v.vals))
        x = self.fresh(label)
        self.assertions.append(x == v.term)
        return Sym(x, v.lo, v.hi, v.vals)

    def linear(self, terms: Sequence[tuple[Fraction, Val]], const: Fraction) -> Val:
        acc = const
        parts: list[Any] = []
        lo = hi = const
        vals: frozenset[Fraction] | None = frozenset({Fraction(0)})
        for c, v in terms:
            if c == 0:
                continue
            if isinstance(v, Fraction):
                acc += c * v
                lo += c * v
                hi += c * v
                continue
            parts.append(v.term if c == 1 else (-v.term if c == -1 else self.num(c) * v.term))
            lo += c * (v.lo if c > 0 else v.hi)
            hi += c * (v.hi if c > 0 else v.lo)
            if vals is not None and v.vals is not None and len(vals) * len(v.vals) <= VALUE_SET_MAX * 4:
                vals = _capped(frozenset(a + c * b for a in vals for b in v.vals))
            else:
                vals = None
        if not parts:
            return acc
        total = parts[0] if len(parts) == 1 else self.z3.Sum(parts)
        if acc != 0:
            total = total + self.num(acc)
        return Sym(total, lo, hi, None if vals is None else frozenset(a + acc for a in vals))

    def ite(self, cond: Any, a: Val, b: Val) -> Val:
        if isinstance(a, Fraction) and isinstance(b, Fraction) and a == b:
            return a
        lo = min(_lo(a), _lo(b))
        hi = max(_hi(a), _hi(b))
        va, vb = _vals(a), _vals(b)
        vals = None if va is None or vb is None else _capped(va | vb)
        return Sym(self.z3.If(cond, self.term(a), self.term(b)), lo, hi, vals)

    # -------------------------------------------------------------- blocks

    def affine(self, a: Affine, x: Mapping[str, Val], label: str) -> dict[str, Val]:
        out: dict[str, Val] = {}
        for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True):
            v = self.linear([(w, x[i]) for i, w in zip(a.inputs, row, strict=True) if w != 0], b)
            out[o] = self.name(v, f"{label}.{o}")
        return out

    def activation(self, kind: str, x: Mapping[str, Val], label: str) -> dict[str, Val]:
        zero, one = Fraction(0), Fraction(1)
        out: dict[str, Val] = {}
        for d, v in x.items():
            if isinstance(v, Fraction):
                out[d] = (max(v, zero) if kind == "relu" else (one if v > 0 else zero) if kind == "step" else min(max(v, zero), one))
                continue
            t = v.term
            if kind == "relu":
                if v.lo >= 0:
                    r: Val = v
                elif v.hi <= 0:
                    r = zero
                else:
                    r = Sym(self.z3.If(t > 0, t, self.num(zero)), zero, v.hi)
            elif kind == "step":
                if v.lo > 0:
                    r = one
                elif v.hi <= 0:
                    r = zero
                else:
                    r = Sym(self.z3.If(t > 0, self.num(one), self.num(zero)), zero, one)
            else:  # sigma: clip to [0, 1]
                if v.lo >= 0 and v.hi <= 1:
                    r = v
                elif v.hi <= 0:
                    r = zero
                elif v.lo >= 1:
                    r = one
                else:
                    inner = t if v.hi <= 1 else self.z3.If(t > 1, self.num(one), t)
                    r = Sym(inner if v.lo >= 0 else self.z3.If(t < 0, self.num(zero), inner), max(zero, v.lo), min(one, v.hi))
            if isinstance(r, Sym) and v.vals is not None:
                fn = {"relu": lambda q: max(q, zero), "step": lambda q: one if q > 0 else zero}.get(
                    kind, lambda q: min(max(q, zero), one))
                r = Sym(r.term, r.lo, r.hi, frozenset(fn(q) for q in v.vals))
            out[d] = self.name(r, f"{label}.{d}")
        return out

    def layernorm(self, ln: LayerNorm, x: dict[str, Val], where: str) -> dict[str, Val]:
        if any(isinstance(v, Sym) for v in x.values()):
            raise Unsupported(
                f"{where}: layer norm over word-dependent values (√ of a symbolic variance) is not "
                "encoded; check this claim with --method exhaustive"
            )
        from netproof.symbolic import NotRationalError
        from netproof.symbolic.evaluation import Evaluator
        from netproof.symbolic.exact import FractionArithmetic

        try:
            return dict(Evaluator(self.net, FractionArithmetic()).layernorm(ln, x, where))  # type: ignore[arg-type]
        except NotRationalError as exc:
            raise Unsupported(str(exc)) from exc

    def ffn(self, block: FFN, x: dict[str, Val], t: int) -> dict[str, Val]:
        if not block.steps:
            return {}
        for idx, step in enumerate(block.steps):
            label = f"{block.name}[{idx}]@{t}"
            match step:
                case Affine():
                    x = self.affine(step, x, label)
                case Activation(kind=kind):
                    x = self.activation(kind, x, label)
                case LayerNorm():
                    x = self.layernorm(step, x, f"ffn {block.name!r} step [{idx}] at token {t}")
                case _:
                    assert_never(step)
        return x

    def score(self, h: Head, q: Mapping[str, Val], k: Mapping[str, Val], label: str) -> Val:
        total: Val = Fraction(0)
        parts: list[tuple[Fraction, Val]] = []
        nonlinear: list[Any] = []
        lo = hi = Fraction(0)
        for name in h.query.outputs:
            qv, kv = q[name], k[name]
            if isinstance(qv, Fraction):
                parts.append((qv, kv))
            elif isinstance(kv, Fraction):
                parts.append((kv, qv))
            else:
                nonlinear.append(qv.term * kv.term)
                corners = [a * b for a in (qv.lo, qv.hi) for b in (kv.lo, kv.hi)]
                lo += min(corners)
                hi += max(corners)
        total = self.linear(parts, Fraction(0))
        if nonlinear:
            base = self.term(total)
            total = Sym(self.z3.Sum([base, *nonlinear]), _lo(total) + lo, _hi(total) + hi)
        if h.scoring == "neg_abs_dot":
            if isinstance(total, Fraction):
                total = -abs(total)
            else:
                t = total.term
                bound = max(abs(total.lo), abs(total.hi))
                total = Sym(self.z3.If(t > 0, -t, t), -bound, min(Fraction(0), total.hi, -total.lo) if total.lo > 0 or total.hi < 0 else Fraction(0),
                            None if total.vals is None else frozenset(-abs(q) for q in total.vals))
        return self.name(total, label)

    def head(
        self, layer: str, h: Head, rows: list[dict[str, Val]], n: int, live: frozenset[int] | None = None
    ) -> list[dict[str, Val] | None]:
        """The head's output at every query position in ``live`` (None: all); None elsewhere."""
        from netproof.symbolic.evaluation import visible_positions

        where = f"attention {layer!r} head {h.name!r}"
        if h.relative:
            raise Unsupported(f"{where} uses relative positions (relative_bias / query_conv / key_conv), which the encoder does not cover")
        qs = [self.affine(h.query, r, f"{layer}.{h.name}.q@{t}") for t, r in enumerate(rows)]
        ks = [self.affine(h.key, r, f"{layer}.{h.name}.k@{t}") for t, r in enumerate(rows)]
        vs = [self.affine(h.value, r, f"{layer}.{h.name}.v@{t}") for t, r in enumerate(rows)]
        outs = h.value.outputs
        result: list[dict[str, Val] | None] = []
        for i in range(n):
            allowed = visible_positions(h.mask, i, n)
            if not allowed:
                if h.empty == "error":
                    raise Unsupported(
                        f"{where}: position {i} attends to an empty set under mask {h.mask!r} with "
                        "empty='error': the output is undefined for every word of this length"
                    )
                result.append({o: Fraction(0) for o in outs})
                continue
            if live is not None and i not in live:
                result.append(None)  # never read: not encoded
                continue
            scores = [self.score(h, qs[i], ks[j], f"{layer}.{h.name}.s@{i},{j}") for j in allowed]
            match h.normalizer:
                case Hardmax(tie=tie):
                    result.append(self._hardmax(layer, h, tie, i, allowed, scores, vs, n))
                case Softmax():
                    result.append(self._softmax(h, i, allowed, scores, vs, n, where))
                case _:
                    assert_never(h.normalizer)
        return result

    def _hardmax(
        self, layer: str, h: Head, tie: str, i: int, allowed: list[int], scores: list[Val],
        vs: list[dict[str, Val]], n: int,
    ) -> dict[str, Val]:
        z3 = self.z3
        outs = h.value.outputs
        label = f"{layer}.{h.name}@{i}"
        factor_zero = h.scale.log_n and n == 1  # ln 1 = 0: every score is 0, all tie
        if factor_zero:
            scores = [Fraction(0)] * len(scores)
        if all(isinstance(s, Fraction) for s in scores):
            top = max(scores)  # type: ignore[type-var]
            best = [allowed[idx] for idx, s in enumerate(scores) if s == top]
            if tie == "leftmost":
                best = best[:1]
            elif tie == "rightmost":
                best = best[-1:]
            share = Fraction(1, len(best))
            return {
                o: self.name(self.linear([(share, vs[j][o]) for j in best], Fraction(0)), f"{label}.{o}")
                for o in outs
            }
        # The maximum M of the scores and the selected set {j : s_j >= M}, pruned by intervals:
        # a score whose upper bound is below another's lower bound is never selected.
        floor = max(_lo(s) for s in scores)
        cand = [(j, s) for j, s in zip(allowed, scores, strict=True) if _hi(s) >= floor]
        if len(cand) == 1:
            j = cand[0][0]
            return {o: vs[j][o] for o in outs}
        sel = {}
        if self.hardmax == "pairwise":  # j is selected iff its score is >= every other one
            for j, s in cand:
                b = z3.Bool(_ascii(f"{label}.sel{j}"), self.ctx)
                others = [self.term(s) >= self.term(t) for k, t in cand if k != j and not (_lo(s) >= _hi(t))]
                self.assertions.append(b == (z3.And(others) if others else z3.BoolVal(True, self.ctx)))
                sel[j] = b
        else:  # the maximum M of the scores, then j is selected iff s_j >= M
            top = self.fresh(f"{label}.max")
            self.assertions.append(z3.And([top >= self.term(s) for _, s in cand]))
            self.assertions.append(z3.Or([top == self.term(s) for _, s in cand]))
            for j, s in cand:
                b = z3.Bool(_ascii(f"{label}.sel{j}"), self.ctx)
                self.assertions.append(b == (self.term(s) >= top))
                sel[j] = b
        out: dict[str, Val] = {}
        if tie in ("leftmost", "rightmost"):
            order = [j for j, _ in cand] if tie == "leftmost" else [j for j, _ in reversed(cand)]
            # the first selected in `order`: nested ite, the last candidate as the default
            for o in outs:
                v: Val = vs[order[-1]][o]
                for j in reversed(order[:-1]):
                    v = self.ite(sel[j], vs[j][o], v)
                out[o] = self.name(v, f"{label}.{o}")
            return out
        sets = [_vals(sc) for _, sc in cand]
        if all(x is not None for x in sets) and all(
            not (a & b) for a, b in itertools.combinations(sets, 2)  # type: ignore[operator]
        ):
            # No two scores can ever be equal (their value sets are disjoint): exactly one
            # position is selected, every tie rule picks it, and no count is needed.
            for o in outs:
                v = vs[cand[-1][0]][o]
                for j, _ in reversed(cand[:-1]):
                    v = self.ite(sel[j], vs[j][o], v)
                out[o] = self.name(v, f"{label}.{o}")
            return out
        count = z3.Sum([z3.If(sel[j], self.num(Fraction(1)), self.num(Fraction(0))) for j, _ in cand])
        cnt = self.fresh(f"{label}.count")
        self.assertions.append(cnt == count)
        for o in outs:
            vals = [vs[j][o] for j, _ in cand]
            if all(isinstance(v, Fraction) and v == vals[0] for v in vals):
                out[o] = vals[0]
                continue
            parts = [self.ite(sel[j], vs[j][o], Fraction(0)) for j, _ in cand]
            total = self.term(self.name(self.linear([(Fraction(1), p) for p in parts], Fraction(0)), f"{label}.sum.{o}"))
            lo = min(_lo(v) for v in vals)
            hi = max(_hi(v) for v in vals)
            y = self.fresh(f"{label}.{o}")
            for c in range(1, len(cand) + 1):
                self.assertions.append(z3.Implies(cnt == c, (y if c == 1 else self.num(Fraction(c)) * y) == total))
            out[o] = Sym(y, lo, hi)
        return out

    def _softmax(
        self, h: Head, i: int, allowed: list[int], scores: list[Val], vs: list[dict[str, Val]], n: int, where: str
    ) -> dict[str, Val]:
        """Exact rational weights where the scores are constants; where they depend on the word
        but each takes finitely many values whose weights base^(κ·s) are rational, the output
        y = N/Z with N = Σ_j w(s_j)·v_j and Z = Σ_j w(s_j) (ite over each score's values), and
        one linear case z·y = N per value z that Z can take."""
        from netproof.symbolic import NotRationalError
        from netproof.symbolic.exact import FractionArithmetic

        assert isinstance(h.normalizer, Softmax)
        z3 = self.z3
        sets = [_vals(sc) for sc in scores]
        if any(x is None for x in sets):
            raise Unsupported(
                f"{where}: softmax over word-dependent scores at position {i} whose values are not a "
                "known finite set (the weights are exponentials of symbolic values); check this claim "
                "with --method exhaustive"
            )
        values = sorted(set().union(*sets))  # type: ignore[arg-type]
        try:
            shares = FractionArithmetic().softmax(h.normalizer, h.scale, values, n, where)
        except NotRationalError as exc:
            raise Unsupported(str(exc)) from exc
        weight = dict(zip(values, shares, strict=True))  # ∝ base^(κ·s): only ratios matter
        if all(isinstance(sc, Fraction) for sc in scores):
            total = sum((weight[sc] for sc in scores), Fraction(0))  # type: ignore[index]
            return {
                o: self.name(self.linear([(weight[sc] / total, vs[j][o]) for j, sc in zip(allowed, scores, strict=True)],  # type: ignore[index]
                                         Fraction(0)), f"{h.name}@{i}.{o}")
                for o in h.value.outputs
            }

        def chain(sc: Val, value_of: Any) -> Val:
            if isinstance(sc, Fraction):
                return value_of(sc)
            options = sorted(sc.vals)  # type: ignore[arg-type]
            v: Val = value_of(options[-1])
            for x in reversed(options[:-1]):
                v = self.ite(self.term(sc) == self.num(x), value_of(x), v)
            return v

        z_val = self.linear([(Fraction(1), chain(sc, lambda x: weight[x])) for sc in scores], Fraction(0))
        zs = _vals(z_val)
        if zs is None:
            raise Unsupported(f"{where}: the softmax normalizer at position {i} takes too many values to split into cases")
        z_term = self.name(z_val, f"{h.name}@{i}.Z")
        out: dict[str, Val] = {}
        for o in h.value.outputs:
            parts = [chain(sc, lambda x, vj=vs[j][o]: self.linear([(weight[x], vj)], Fraction(0)))
                     for j, sc in zip(allowed, scores, strict=True)]
            numer = self.name(self.linear([(Fraction(1), p) for p in parts], Fraction(0)), f"{h.name}@{i}.N.{o}")
            vals_o = [vs[j][o] for j in allowed]
            y = self.fresh(f"{h.name}@{i}.{o}")
            for z in sorted(zs):
                cond = z3.BoolVal(True, self.ctx) if isinstance(z_term, Fraction) else self.term(z_term) == self.num(z)
                self.assertions.append(z3.Implies(cond, self.num(z) * y == self.term(numer)))
            out[o] = Sym(y, min(_lo(v) for v in vals_o), max(_hi(v) for v in vals_o))
        return out

    # -------------------------------------------------------------- whole network

    def embed(self) -> tuple[list[dict[str, Val]], int]:
        net = self.net
        emb = net.embedding
        dims = net.dims
        match emb:
            case TokenEmbedding():
                from netproof.symbolic.positional import feature

                tokens: list[str | None] = [*emb.prefix, *([None] * self.m), *emb.suffix]
                n = len(tokens)
                table = {tok: dict(row) for tok, row in emb.table}
                rows: list[dict[str, Val]] = []
                widx = 0
                for t, token in enumerate(tokens):
                    pos = emb.index_base + t
                    shift = {d: Fraction(0) for d in dims}
                    for d, feat, coef in emb.positional:
                        shift[d] += coef * feature(feat)(pos, n)
                    row: dict[str, Val] = {}
                    if token is not None:
                        for d in dims:
                            row[d] = table[token].get(d, Fraction(0)) + shift[d]
                    else:
                        is_sym = self.symbol[widx]
                        widx += 1
                        for d in dims:
                            vals = [table[s].get(d, Fraction(0)) + shift[d] for s in net.alphabet]
                            v: Val = vals[-1]
                            for si in range(len(vals) - 2, -1, -1):
                                v = self.ite(is_sym[si], vals[si], v)
                            row[d] = self.name(v, f"input@{t}.{d}")
                    rows.append(row)
                return rows, n
            case FlatEmbedding():
                values = dict(emb.values)
                vals = [values[s] for s in net.alphabet]
                row = {d: Fraction(0) for d in dims}
                for d, is_sym in zip(emb.dims, self.symbol, strict=True):
                    v = vals[-1]
                    for si in range(len(vals) - 2, -1, -1):
                        v = self.ite(is_sym[si], vals[si], v)
                    row[d] = self.name(v, f"input.{d}")
                return [row], 1
            case _:
                assert_never(emb)

    def sublayer(self, sub: Sublayer, rows: list[dict[str, Val]], n: int, live: frozenset[int] | None) -> list[dict[str, Val | None]]:
        block = sub.block
        outs: list[dict[str, Val] | None]
        match block:
            case AttentionLayer():
                parts: list[dict[str, Val]] = [{} for _ in rows]
                for h in block.heads:
                    for t, o in enumerate(self.head(block.name, h, rows, len(rows), live)):
                        if o is not None:
                            parts[t].update(o)
                if block.output is not None:
                    full = {o: Fraction(0) for h in block.heads for o in h.value.outputs}
                    parts = [self.affine(block.output, {**full, **p}, f"{block.name}.out@{t}") if live is None or t in live else p
                             for t, p in enumerate(parts)]
                outs = [p if live is None or t in live else None for t, p in enumerate(parts)]
            case FFN():
                outs = [self.ffn(block, r, t) if live is None or t in live else None for t, r in enumerate(rows)]
            case Convolution():
                raise Unsupported(f"convolution block {block.name!r} (Chang et al.) is not encoded")
            case _:
                assert_never(block)
        new: list[dict[str, Val | None]] = []
        for t, (r, o) in enumerate(zip(rows, outs, strict=True)):
            if o is None:
                new.append({d: None for d in r})
                continue
            if sub.residual:
                x = {d: self.linear([(Fraction(1), r[d]), (Fraction(1), o[d])], Fraction(0)) if d in o else r[d] for d in r}
            else:
                x = {d: o.get(d, Fraction(0)) for d in r}
            if sub.post_ln is not None:
                x = self.layernorm(sub.post_ln, x, f"layer norm after {sub.name!r} at token {t}")
            new.append({d: self.name(v, f"{sub.name}@{t}.{d}") for d, v in x.items()})
        return new

    def logit(self) -> Val:
        net = self.net
        rows, n = self.embed()
        live_after = _live(net, len(rows))
        current: list[dict[str, Any]] = rows
        for idx, sub in enumerate(net.layers):
            current = self.sublayer(sub, current, n, live_after[idx])
        r = net.readout
        match r:
            case Classifier():
                t = r.position if r.position >= 0 else len(current) + r.position
                if not 0 <= t < len(current):
                    raise Unsupported(f"readout position {r.position} is outside the {len(current)} tokens")
                return self.affine(r.logit, current[t], "logit")[r.logit.outputs[0]]
            case NextSymbols():
                raise Unsupported("next-symbol readouts (generators) are not encoded; use --method exhaustive")
            case _:
                assert_never(r)

    def member(self, dfa: Automaton) -> Any:
        """The DFA run over the word: one Bool per (prefix length, state), true iff the prefix
        leads to that state (exactly one is, since the symbols are exactly one each); the
        result is the Bool "the word is accepted". Unreachable states are left out."""
        z3 = self.z3
        reach: dict[int, Any] = {dfa.start: z3.BoolVal(True, self.ctx)}
        for t, is_sym in enumerate(self.symbol):
            into: dict[int, list[Any]] = {}
            for q, here in reach.items():
                for a, target in enumerate(dfa.delta[q]):
                    into.setdefault(target, []).append(z3.And(here, is_sym[a]) if not z3.is_true(here) else is_sym[a])
            nxt: dict[int, Any] = {}
            for q in sorted(into):
                b = z3.Bool(f"state{t + 1}={q}", self.ctx)
                self.assertions.append(b == z3.Or(into[q]))
                nxt[q] = b
            reach = nxt
        accepted = [reach[q] for q in sorted(dfa.accepting) if q in reach]
        return z3.Or(accepted) if accepted else z3.BoolVal(False, self.ctx)


def _live(net: Network, n: int) -> list[frozenset[int] | None]:
    """For each sublayer, the token positions whose output is read later (None: all). Backwards
    from the classifier's position: a position-wise block needs its own positions, an attention
    layer needs its live queries' outputs only, and all positions of its input."""
    live: list[frozenset[int] | None] = [None] * len(net.layers)
    if not isinstance(net.readout, Classifier) or n == 0:
        return live
    t = net.readout.position if net.readout.position >= 0 else n + net.readout.position
    if not 0 <= t < n:
        return live
    needed: frozenset[int] | None = frozenset({t})
    for idx in range(len(net.layers) - 1, -1, -1):
        live[idx] = needed
        if isinstance(net.layers[idx].block, AttentionLayer):
            break  # everything before it is needed at every position
    return live


def _lo(v: Val) -> Fraction:
    return v if isinstance(v, Fraction) else v.lo


def _hi(v: Val) -> Fraction:
    return v if isinstance(v, Fraction) else v.hi


# --------------------------------------------------------------------------- recognition


@dataclass(frozen=True, slots=True)
class RecognitionQuery:
    """The query "some word of length ``m`` is misclassified", built but not yet solved."""

    m: int
    solver: Any
    encoder: _Encoder
    logic: str | None

    @property
    def name(self) -> str:
        return f"n={self.m}"


def recognition_query(net: Network, language: Language, m: int, *, word: str = "int", hardmax: str = "max") -> RecognitionQuery:
    """Encode "the network's accept bit differs from membership in ``language``" over the words
    of length ``m``; raises :class:`Unsupported` for what the encoder does not cover. ``word``:
    ``int`` (one integer per position: the default; measured on Dyck(2,2), n = 6 and 8, z3
    took 1.5x to 2x longer with ``onehot``) or ``onehot`` (one Bool per position and symbol).
    ``hardmax``: ``max`` (a variable for the maximum score: the default) or ``pairwise`` (each
    selection as comparisons with every other score: 2x slower at n = 8). See
    ``benchmarks/smt_encodings.py``."""
    import z3

    if not isinstance(net, Network):
        raise Unsupported(f"{net.name!r} is a {type(net).__name__}; the encoder covers encoder-style Networks only")
    if getattr(language, "automaton", None) is None:
        raise Unsupported(
            f"the language {language.name} has no symbolic encoding (an Automaton); give its "
            "Language an automaton= to prove it with SMT"
        )
    if tuple(language.alphabet) != tuple(net.alphabet):
        raise Unsupported(
            f"the language's alphabet {language.alphabet} is not the network's {net.alphabet} in the same order"
        )
    ctx = z3.Context()
    enc = _Encoder(z3, ctx, net, m, word, hardmax)
    logit = enc.logit()
    member = enc.member(language.automaton)
    accept = z3.BoolVal(logit > 0, ctx) if isinstance(logit, Fraction) else enc.term(logit) > 0
    solver = z3.Solver(ctx=ctx)
    for a in enc.assertions:
        solver.add(a)
    solver.add(accept != member)
    return RecognitionQuery(m, solver, enc, None)


def logit_on(net: Network, word: Word) -> tuple[SmtResult, SmtResult]:
    """The encoding's self-check on one concrete word (for tests): with the word variables
    fixed to ``word``, is "logit = the exact interpreter's logit" ``sat`` (the constraints
    admit the right value) and is "logit ≠ it" ``unsat`` (they admit no other)? A faithful
    encoding answers ``("sat", "unsat")``."""
    import z3

    from netproof.symbolic.exact import run as run_exact

    want = run_exact(net, word).output
    assert isinstance(want, Fraction)
    answers: list[SmtResult] = []
    for equal in (True, False):
        ctx = z3.Context()
        enc = _Encoder(z3, ctx, net, len(word))
        logit = enc.term(enc.logit())
        s = z3.Solver(ctx=ctx)
        s.add(*enc.assertions)
        s.add(*(row[net.alphabet.index(sym)] for row, sym in zip(enc.symbol, word, strict=True)))
        s.add(logit == enc.num(want) if equal else logit != enc.num(want))
        r = s.check()
        answers.append("unsat" if r == z3.unsat else "sat" if r == z3.sat else "unknown")
    return answers[0], answers[1]


def _word_of(model: Any, enc: _Encoder, alphabet: Sequence[str]) -> Word:
    out = []
    for row in enc.symbol:
        chosen = [a for a, b in enumerate(row) if z3_true(model.eval(b, model_completion=True))]
        out.append(alphabet[chosen[0]])
    return tuple(out)


def z3_true(value: Any) -> bool:
    import z3

    return bool(z3.is_true(value))


def _replay(net: Network, language: Language, word: Word) -> Refuted | None:
    """The exact interpreter's verdict on ``word``: Refuted if the network gets it wrong, else
    None (the encoder was wrong)."""
    from netproof.symbolic.evaluation import UndefinedValueError
    from netproof.symbolic.exact import run as run_exact

    method = "smt (z3), counterexample replayed exactly"
    shown = repr(render(language.alphabet, word)) if word else "ε (the empty word)"
    try:
        trace = run_exact(net, word)
    except UndefinedValueError as exc:
        return Refuted(method, f"the network's output is undefined on {shown}: {exc}", word)
    member = language.contains(word)
    if trace.accepted is None or trace.accepted == member:
        return None
    return Refuted(
        method,
        f"{shown} is {'in' if member else 'not in'} {language.name} but the network "
        f"{'accepts' if trace.accepted else 'rejects'} it (logit {trace.output})",
        word,
        {"logit": str(trace.output), "accepted": str(trace.accepted), "member": str(member)},
    )


def _shrink(q: RecognitionQuery, alphabet: Sequence[str], word: Word, deadline: float) -> Word:
    """The shortlex-first counterexample of this length: fix symbols left to right, each to the
    smallest one that still leaves a counterexample (within the deadline; else ``word``)."""
    import z3

    solver = q.solver
    best = list(word)
    solver.push()
    try:
        for t, is_sym in enumerate(q.encoder.symbol):
            for si in range(len(alphabet)):
                if alphabet[si] == best[t]:
                    solver.add(is_sym[si])
                    break
                left = deadline - time.perf_counter()
                if left <= 0:
                    return tuple(best)
                solver.push()
                solver.add(is_sym[si])
                solver.set("timeout", max(1, int(left * 1000)))
                if solver.check() == z3.sat:
                    best = list(_word_of(solver.model(), q.encoder, alphabet))
                    solver.pop()
                    solver.add(is_sym[si])
                    break
                solver.pop()
    finally:
        solver.pop()
    return tuple(best)


def recognizes_smt(
    net_for: Any, language: Language, min_len: int, max_len: int, *, timeout: float = 60.0, shrink: bool = True
) -> Outcome:
    """Prove or refute "accept ⇔ w ∈ language" for every word with min_len ≤ |w| ≤ max_len, one
    z3 query per length (``net_for(m)`` is the network for words of length m). ``timeout`` is
    the budget in seconds for all the queries together."""
    method = "smt (z3)"
    started = time.perf_counter()
    deadline = started + timeout
    queries: list[SmtQuery] = []
    checked = 0
    k = len(language.alphabet)
    for m in range(min_len, max_len + 1):
        net = net_for(m)
        try:
            q = recognition_query(net, language, m)
        except Unsupported as exc:
            return Outcome(Unknown(method, f"unsupported: {exc}"), tuple(queries))
        left = deadline - time.perf_counter()
        if left <= 0:
            return Outcome(
                Unknown(method, f"timeout: the {timeout:.1f} s budget ran out before length {m} (lengths {min_len}..{m - 1} proved)"),
                tuple(queries),
            )
        query, model = solve(q.solver, name=q.name, logic=q.logic, timeout=left,
                             reason_unsat=f"no word of length {m} is misclassified")
        if query.result == "unknown":
            queries.append(query)
            reason = query.reason or "unknown"
            if reason in ("timeout", "canceled"):
                reason = f"timeout: the {timeout:.1f} s budget ran out at length {m}"
            return Outcome(Unknown(method, f"z3: {reason} (lengths {min_len}..{m - 1} proved)"), tuple(queries))
        if query.result == "sat":
            word = _word_of(model, q.encoder, language.alphabet)
            refuted = _replay(net, language, word)
            if refuted is None:
                raise EncoderBugError(
                    f"z3 says {render(language.alphabet, word)!r} (length {m}) is misclassified by "
                    f"{net.name!r}, but the exact interpreter classifies it correctly: the SMT encoding "
                    "is wrong; please report this with the network file"
                )
            if shrink:
                small = _shrink(q, language.alphabet, word, deadline)
                if small != word:
                    better = _replay(net, language, small)
                    if better is None:
                        raise EncoderBugError(
                            f"the shrunk counterexample {render(language.alphabet, small)!r} is not "
                            "reproduced by the exact interpreter: the SMT encoding is wrong"
                        )
                    word, refuted = small, better
            shown = render(language.alphabet, word) or "ε"
            queries.append(SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                                    reason=f"counterexample {shown!r}", seconds=query.seconds))
            return Outcome(Refuted(method, refuted.detail, word, refuted.values), tuple(queries))
        queries.append(query)
        checked += k**m
    return Outcome(
        Proved(method, checked, f"every word with {min_len} <= |w| <= {max_len}: one query per length, each unsat"),
        tuple(queries),
    )


# --------------------------------------------------------------------------- closed forms


CLOSED_FORM_SYMBOLS = ("n", "t", "i")
"""The position symbols a :attr:`ValueIs.closed_form` may use, besides ``#a`` (the count of
symbol ``a`` in the word) and ``wj=a`` (1 if the word's j-th symbol, from 1, is ``a``, else 0)."""


def _indicator(name: str, alphabet: Sequence[str]) -> tuple[int, str] | None:
    """``wj=a`` as (j, a), or None."""
    head, eq, a = name.partition("=")
    if eq and head[:1] == "w" and head[1:].isdigit() and int(head[1:]) >= 1 and a in alphabet:
        return int(head[1:]), a
    return None


def closed_form_at(expr: Any, alphabet: Sequence[str], word: Word, t: int, i: int, n: int) -> Any:
    """A closed form's value on a concrete word at token ``t`` (a sympy number)."""
    import sympy

    subs: dict[Any, Any] = {sympy.Symbol("n"): n, sympy.Symbol("t"): t, sympy.Symbol("i"): i}
    subs.update({sympy.Symbol(f"#{a}"): sum(1 for x in word if x == a) for a in alphabet})
    for sym in expr.free_symbols:
        got = _indicator(sym.name, alphabet)
        if got is not None:
            j, a = got
            subs[sym] = int(len(word) >= j and word[j - 1] == a)
    return sympy.nsimplify(expr.xreplace({k: sympy.Integer(v) for k, v in subs.items()}))


def closed_form_term(
    z3: Any,
    ctx: Any,
    expr: Any,
    alphabet: Sequence[str],
    position: tuple[Any, Any, Any],
    count: Callable[[str], Any],
    indicator: Callable[[int, str], Any],
) -> Any:
    """A closed form at one token of a symbolic word, as a z3 Real term: ``position`` is
    ``(t, i, n)`` (ints, or z3 Real terms for a symbolic position or length), ``count(a)`` the
    Real term counting symbol ``a``, ``indicator(j, a)`` the Real 0/1 term "the j-th symbol is
    a" (0 past the word's end)."""
    import sympy

    names = ("t", "i", "n")
    fixed = {sympy.Symbol(k): sympy.Integer(v) for k, v in zip(names, position, strict=True) if isinstance(v, int)}
    terms = {k: v for k, v in zip(names, position, strict=True) if not isinstance(v, int)}

    def num(q: Fraction) -> Any:
        return z3.RealVal(str(q), ctx)

    def go(e: Any) -> Any:
        if e is sympy.true or e is sympy.false:
            return z3.BoolVal(bool(e), ctx)
        if e.is_Number:
            if e.is_Float:
                raise Unsupported(f"the closed form has the float {e}; write it as a sympy.Rational (exact)")
            if not e.is_Rational:
                raise Unsupported(f"the closed form has the irrational number {e}")
            return num(Fraction(int(e.p), int(e.q)))
        if e.is_Symbol:
            if e.name in terms:
                return terms[e.name]
            if e.name.startswith("#") and e.name[1:] in alphabet:
                return count(e.name[1:])
            got = _indicator(e.name, alphabet)
            if got is not None:
                return indicator(*got)
            raise Unsupported(f"the closed form names {e.name!r}; it may use n, t, i, #a and wj=a for a in {list(alphabet)}")
        if isinstance(e, sympy.Add):
            return z3.Sum([go(a) for a in e.args])
        if isinstance(e, sympy.Mul):
            out = go(e.args[0])
            for a in e.args[1:]:
                out = out * go(a)
            return out
        if isinstance(e, sympy.Pow) and e.exp.is_Integer:
            base, k = go(e.base), int(e.exp)
            power = num(Fraction(1))
            for _ in range(abs(k)):
                power = power * base
            return power if k >= 0 else num(Fraction(1)) / power
        if isinstance(e, sympy.Piecewise):
            out = None
            for value, cond in reversed(e.args):
                v = go(value)
                out = v if out is None or cond is sympy.true else z3.If(go(cond), v, out)
            return out
        relations = {sympy.Eq: lambda a, b: a == b, sympy.Ne: lambda a, b: a != b, sympy.Lt: lambda a, b: a < b,
                     sympy.Le: lambda a, b: a <= b, sympy.Gt: lambda a, b: a > b, sympy.Ge: lambda a, b: a >= b}
        for kind, make in relations.items():
            if isinstance(e, kind):
                return make(go(e.lhs), go(e.rhs))
        if isinstance(e, sympy.And):
            return z3.And([go(a) for a in e.args])
        if isinstance(e, sympy.Or):
            return z3.Or([go(a) for a in e.args])
        if isinstance(e, sympy.Not):
            return z3.Not(go(e.args[0]))
        raise Unsupported(f"the closed form uses {type(e).__name__} ({e}), which is not encoded")

    return go(expr.xreplace(fixed))


def _closed_form_z3(enc: _Encoder, expr: Any, alphabet: Sequence[str], t: int, i: int, n: int) -> Any:
    """:func:`closed_form_term` over the monolithic encoder's word."""
    z3 = enc.z3
    one, zero = z3.IntVal(1, enc.ctx), z3.IntVal(0, enc.ctx)
    counts: dict[str, Any] = {}

    def count(a: str) -> Any:
        if a not in counts:
            idx = list(alphabet).index(a)
            counts[a] = z3.ToReal(z3.Sum([z3.If(row[idx], one, zero) for row in enc.symbol]) if enc.symbol else zero)
        return counts[a]

    def indicator(j: int, a: str) -> Any:
        if j > len(enc.symbol):
            return enc.num(Fraction(0))
        return z3.If(enc.symbol[j - 1][list(alphabet).index(a)], enc.num(Fraction(1)), enc.num(Fraction(0)))

    return closed_form_term(z3, enc.ctx, expr, alphabet, (t, i, n), count, indicator)


@dataclass(frozen=True, slots=True)
class ValueQuery:
    """"Some word of length m has a value other than the closed form" for a :class:`ValueIs`."""

    solver: Any
    encoder: _Encoder
    m: int
    logic: str | None = None

    @property
    def name(self) -> str:
        return f"n={self.m}"


def value_query(net: Network, claim: ValueIs, m: int) -> ValueQuery:
    """The z3 query for a :class:`ValueIs` with a closed form on every word of length ``m``:
    the quantity (the logit, or a dim after a named step at every token) differs from the
    closed form somewhere. ``unsat`` proves the claim for that length."""
    import z3

    if claim.closed_form is None:
        raise Unsupported(f"claim {claim.id} has no closed form (ValueIs.closed_form) to encode")
    ctx = z3.Context()
    enc = _Encoder(z3, ctx, net, m)
    rows, n = enc.embed()
    if not isinstance(net.embedding, TokenEmbedding):
        raise Unsupported("closed forms are encoded for token embeddings only")
    base = net.embedding.index_base
    differs: list[Any] = []
    if isinstance(claim.quantity, Output):
        differs.append(enc.term(enc.logit()) != _closed_form_z3(enc, claim.closed_form, net.alphabet, 0, base, n))
    else:
        after, dim = claim.quantity.after, claim.quantity.dim
        if dim not in net.dims:
            raise Unsupported(f"claim {claim.id}: the network has no dim {dim!r}")
        current: list[dict[str, Any]] = rows
        if after != "input":
            for sub in net.layers:
                current = enc.sublayer(sub, current, n, None)
                if sub.name == after:
                    break
            else:
                raise Unsupported(f"claim {claim.id}: the network has no step named {after!r}")
        for t, row in enumerate(current):
            value = row[dim]
            if value is None:
                continue
            differs.append(enc.term(value) != _closed_form_z3(enc, claim.closed_form, net.alphabet, t, base + t, n))
    solver = z3.Solver(ctx=ctx)
    solver.add(*enc.assertions)
    solver.add(z3.Or(differs) if differs else z3.BoolVal(False, ctx))
    return ValueQuery(solver, enc, m)


ValueBuilder: TypeAlias = Callable[[Network, int], tuple[Any, Callable[[Any], Word], str | None]]
"""Builds the query "some word of length m has a value other than the closed form" for a
network: its z3 solver, the word of a model, and its SMT-LIB2 logic (None: the smallest)."""


def _monolithic_value(claim: ValueIs) -> ValueBuilder:
    def build(net: Network, m: int) -> tuple[Any, Callable[[Any], Word], str | None]:
        q = value_query(net, claim, m)
        return q.solver, lambda model: _word_of(model, q.encoder, net.alphabet), q.logic

    return build


def replay_value(net: Any, claim: ValueIs, alphabet: Sequence[str], word: Word, method: str) -> Refuted:
    """The refutation of ``claim`` on ``word`` (a solver's counterexample), replayed with the
    exact interpreter against the claim's ``expected``. A word on which the network agrees with
    ``expected`` is an encoder bug (:class:`EncoderBugError`), unless the closed form itself
    disagrees with ``expected`` there (a :class:`ValueError` naming the claim)."""
    from netproof.symbolic.exact import run

    from netproof.verifier.exhaustive.checker import value_is_body

    trace = run(net, word)
    refuted = value_is_body(claim, alphabet, method, None)(word, trace)
    if isinstance(refuted, Refuted):
        return refuted
    for t in range(trace.n):
        point = Point(word, t, trace.positions[t], trace.n)
        wanted = claim.expected(point)
        if wanted is not None and closed_form_at(claim.closed_form, alphabet, word, t, point.i, point.n) != wanted:
            raise ValueError(
                f"claim {claim.id}: its closed_form {claim.closed_form} and its expected disagree on "
                f"{render(alphabet, word)!r} at token {t}; fix the claim's declaration"
            )
    raise EncoderBugError(
        f"z3 says the value of {render(alphabet, word)!r} (length {len(word)}) differs from claim {claim.id}'s closed form, "
        "but the exact interpreter agrees with it: the SMT encoding is wrong; please report this with the network file"
    )


def value_is_smt(
    job: Job, claim: ValueIs, min_len: int, max_len: int, *, timeout: float = 60.0,
    build: ValueBuilder | None = None, method: str = "smt (z3)", name: str = "n={m}",
) -> Outcome:
    """Prove or refute a :class:`ValueIs` with a closed form for every word with
    ``min_len <= |w| <= max_len``, one z3 query per length (``build``: the monolithic encoding
    by default; :func:`netproof.verifier.smt.compositional.value_builder` for the network with its proved
    lemmas in place). A ``sat`` word is replayed with the exact interpreter against the claim's
    ``expected``: a word on which the network agrees with ``expected`` is an encoder bug, unless
    the closed form itself disagrees with ``expected`` there (a :class:`ValueError` naming the
    claim: its two statements differ)."""
    build = build or _monolithic_value(claim)
    if claim.backend != "exact":
        return Outcome(Unknown(method, f"unsupported: claim {claim.id} is checked with the {claim.backend} backend, not exactly"))
    started = time.perf_counter()
    deadline = started + timeout
    queries: list[SmtQuery] = []
    checked = 0
    alphabet = job.alphabet
    for m in range(min_len, max_len + 1):
        net = job.network(m)
        try:
            solver, word_of, logic = build(net, m)
        except Unsupported as exc:
            return Outcome(Unknown(method, f"unsupported: {exc}"), tuple(queries))
        left = deadline - time.perf_counter()
        if left <= 0:
            return Outcome(Unknown(method, f"timeout: the {timeout:.1f} s budget ran out before length {m} (lengths {min_len}..{m - 1} proved)"),
                           tuple(queries))
        query, model = solve(solver, name=name.format(m=m), logic=logic, timeout=left,
                             reason_unsat=f"on no word of length {m} does the value differ from the closed form")
        if query.result == "unknown":
            queries.append(query)
            return Outcome(Unknown(method, f"z3: {query.reason or 'unknown'} (lengths {min_len}..{m - 1} proved)"), tuple(queries))
        if query.result == "sat":
            word = word_of(model)
            refuted = replay_value(net, claim, alphabet, word, method)
            queries.append(SmtQuery(name=query.name, smt2=query.smt2, result="sat",
                                    reason=f"counterexample {render(alphabet, word) or 'ε'!r}", seconds=query.seconds))
            return Outcome(Refuted(method, refuted.detail, word, refuted.values), tuple(queries))
        queries.append(query)
        checked += len(alphabet) ** m
    return Outcome(Proved(method, checked, f"every word with {min_len} <= |w| <= {max_len}: one query per length, each unsat"), tuple(queries))


# --------------------------------------------------------------------------- claims


SMT_KINDS = ("Recognizes", "BlockIdentity", "ValueIs with a closed form")


def smt_applicable(claim: Claim) -> bool:
    """Whether the smt method covers this claim kind (recognition against a language with an
    automaton, FFN block lemmas, exact values with a closed form)."""
    from netproof.verifier.claims import BlockIdentity

    if isinstance(claim, Recognizes):
        return getattr(claim.language, "automaton", None) is not None
    if isinstance(claim, ValueIs):
        return claim.closed_form is not None and claim.backend == "exact"
    return isinstance(claim, BlockIdentity)


def prove_claim_smt(
    job: Job, claim: Claim, max_len: int | None = None, *, timeout: float = 60.0, compositional: bool = True
) -> Outcome:
    """The smt method on one claim of a job; ``compositional=False`` skips the compositional
    proof and encodes the whole network (the monolithic encoding)."""
    from netproof.verifier.exhaustive.checker import check
    from netproof.verifier.claims import BlockIdentity

    bound = claim.max_len if max_len is None else max_len
    if isinstance(claim, Recognizes):
        started = time.perf_counter()
        lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
        if compositional and lemmas and claim.min_len == 0 and getattr(claim.language, "automaton", None) is not None:
            # The paper's proof first: block lemmas, then the claim over their specifications
            # (verifier.compositional); the monolithic encoding when that decides nothing.
            from netproof.verifier.smt.compositional import prove_recognizes

            progress = prove_recognizes(job.network(bound), claim, lemmas, bound, timeout=timeout)
            if not isinstance(progress.verdict, Unknown):
                return Outcome(progress.verdict, (), progress.tree)
        left = max(1.0, timeout - (time.perf_counter() - started))
        return recognizes_smt(job.network, claim.language, claim.min_len, bound, timeout=left)
    if isinstance(claim, BlockIdentity):
        log: list[SmtQuery] = []
        verdict = check(job, claim, queries=log)
        return Outcome(verdict, tuple(log))
    if isinstance(claim, ValueIs) and claim.closed_form is not None:
        started = time.perf_counter()
        lemmas = job.construction.lemmas(job.values) if job.construction.lemmas is not None else ()
        if compositional and lemmas and claim.backend == "exact":
            # The network with its proved block lemmas in place (PARITY's uniform head becomes
            # an Int count); the monolithic encoding when that decides nothing.
            from netproof.verifier.smt.compositional import prove_value

            outcome = prove_value(job, claim, lemmas, bound, timeout=timeout)
            if not isinstance(outcome.verdict, Unknown):
                return outcome
        left = max(1.0, timeout - (time.perf_counter() - started))
        return value_is_smt(job, claim, claim.min_len, bound, timeout=left)
    kind = type(claim).__name__
    if isinstance(claim, ValueIs):
        kind = "ValueIs claims without a closed form (ValueIs.closed_form)" if claim.closed_form is None else f"ValueIs claims checked with the {claim.backend} backend"
    else:
        kind += " claims"
    return Outcome(Unknown("smt (z3)", f"unsupported: the smt method does not cover {kind}; use --method exhaustive or --method all"))


EXHAUSTIVE_WORDS = 1 << 17
"""``--method all`` enumerates a bound exhaustively when it holds at most this many words."""


def prove_claim(job: Job, claim: Claim, *, method: str, max_len: int | None = None, timeout: float = 60.0) -> Outcome:
    """One claim with one of the ``prove --method`` methods.

    - ``exhaustive``: :func:`netproof.verifier.exhaustive.checker.check` (lemma claims keep their z3 query);
    - ``smt``: :func:`prove_claim_smt` (Unknown for claim kinds it does not cover);
    - ``all``: exhaustive where the bound holds at most :data:`EXHAUSTIVE_WORDS` words (or the
      smt method does not apply), smt where it applies; with both, a refutation from either wins
      (each is replayed exactly), else a proof from either, and the log keeps the queries.
    """
    from netproof.verifier.exhaustive.checker import check, count_words

    if method == "exhaustive":
        log: list[SmtQuery] = []
        return Outcome(check(job, claim, max_len=max_len, queries=log), tuple(log))
    if method == "smt":
        return prove_claim_smt(job, claim, max_len, timeout=timeout)
    if method != "all":
        raise ValueError(f"method={method!r} is not one of exhaustive, smt, all")
    from netproof.verifier.claims import BlockIdentity

    if isinstance(claim, BlockIdentity) or not smt_applicable(claim):
        return prove_claim(job, claim, method="exhaustive", max_len=max_len)
    bound = claim.max_len if max_len is None else max_len
    smt = prove_claim_smt(job, claim, max_len, timeout=timeout)
    if count_words(job.alphabet, claim.min_len, bound) > EXHAUSTIVE_WORDS:
        return smt
    exhaustive = check(job, claim, max_len=max_len)
    return Outcome(_combine(exhaustive, smt.verdict), smt.queries, smt.lemmas)


def _combine(exhaustive: Verdict, smt: Verdict) -> Verdict:
    both = f"{exhaustive.method} + {smt.method}"
    for v in (exhaustive, smt):
        if isinstance(v, Refuted):
            return Refuted(both, v.detail, v.word, v.values)
    if isinstance(exhaustive, Proved) and isinstance(smt, Proved):
        return Proved(both, exhaustive.checked, f"{exhaustive.detail}; each length also unsat in z3")
    for v in (exhaustive, smt):
        if isinstance(v, Proved):
            other = smt if v is exhaustive else exhaustive
            assert isinstance(other, Unknown)
            return Proved(v.method, v.checked, f"{v.detail} ({other.method}: {other.reason})")
    assert isinstance(exhaustive, Unknown) and isinstance(smt, Unknown)
    return Unknown(both, f"{exhaustive.reason}; {smt.reason}")


def prove_smt(
    construction: Construction, params: Mapping[str, str], claim_id: str, n: int, timeout: float = 60.0
) -> Outcome:
    """The monolithic SMT proof of one claim of a construction up to length ``n`` (the whole
    network encoded, never the compositional proof), for the benchmark and scripts: ``params``
    as typed on the command line (``{"k": "2"}``), ``timeout`` seconds for all lengths."""
    from netproof.verifier.exhaustive.checker import Job

    values = construction.parse_params(dict(params))
    claims = {c.id: c for c in construction.claims(values)}
    if claim_id not in claims:
        raise KeyError(f"claim_id={claim_id!r} is not a claim of {construction.name}; its claims: {', '.join(claims)}")
    return prove_claim_smt(Job(construction, values), claims[claim_id], n, timeout=timeout, compositional=False)


__all__ = [
    "EncoderBugError",
    "LemmaNode",
    "Outcome",
    "SmtQuery",
    "logit_on",
    "prove_claim",
    "prove_claim_smt",
    "prove_smt",
    "recognition_query",
    "recognizes_smt",
    "smt2_portable",
    "solve",
    "to_smt2",
]

