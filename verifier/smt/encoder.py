"""The network IR encoded over a symbolic word of one length, for z3 (:class:`Encoder`).

One encoding per word length ``m`` (``n`` = m plus the special tokens is concrete in each,
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
  one linear case per value of the normalizer; else :class:`~.errors.Unsupported`;
- layer norm: computed exactly where its inputs do not depend on the word, else
  :class:`~.errors.Unsupported` (√ of a word-dependent variance is out of this encoding).

The claim queries over this encoding (recognition, closed-form values) are
:mod:`netproof.verifier.smt.monolithic`. z3 is handed in (``Encoder(z3, ctx, ...)``): importing
this module loads neither z3 nor torch.

May import: :mod:`netproof.symbolic` (the IR and, inside functions, its exact interpreter for
word-independent layer norms), the claims vocabulary and :mod:`netproof.verifier.smt.errors`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias, assert_never

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
)
from netproof.verifier.claims import StackAutomaton
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.stack import stack_member

if TYPE_CHECKING:
    from netproof.verifier.claims import Automaton


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


class Encoder:
    """The network on a symbolic word of one length, in one z3 context."""

    def __init__(
        self, z3: Any, ctx: Any, net: Network, m: int, word: str = "int", hardmax: str = "max"
    ) -> None:
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
        elif (
            word == "onehot"
        ):  # k Bools per symbol, exactly one true (pure Boolean + real arithmetic)
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
            if (
                vals is not None
                and v.vals is not None
                and len(vals) * len(v.vals) <= VALUE_SET_MAX * 4
            ):
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
        if kind not in ("relu", "step", "sigma"):
            raise Unsupported(
                f"{label}: activation {kind!r} is not encoded (the SMT encoder covers relu, step and sigma); "
                "check this network with check-model or the interval interpreter"
            )
        out: dict[str, Val] = {}
        for d, v in x.items():
            if isinstance(v, Fraction):
                out[d] = (
                    max(v, zero)
                    if kind == "relu"
                    else (one if v > 0 else zero)
                    if kind == "step"
                    else min(max(v, zero), one)
                )
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
                    r = Sym(
                        inner if v.lo >= 0 else self.z3.If(t < 0, self.num(zero), inner),
                        max(zero, v.lo),
                        min(one, v.hi),
                    )
            if isinstance(r, Sym) and v.vals is not None:
                acts: dict[str, Callable[[Fraction], Fraction]] = {
                    "relu": lambda q: max(q, zero),
                    "step": lambda q: one if q > 0 else zero,
                    "sigma": lambda q: min(max(q, zero), one),
                }
                fn = acts.get(kind, acts["sigma"])
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
                total = Sym(
                    self.z3.If(t > 0, -t, t),
                    -bound,
                    min(Fraction(0), total.hi, -total.lo)
                    if total.lo > 0 or total.hi < 0
                    else Fraction(0),
                    None if total.vals is None else frozenset(-abs(q) for q in total.vals),
                )
        return self.name(total, label)

    def head(
        self,
        layer: str,
        h: Head,
        rows: list[dict[str, Val]],
        n: int,
        live: frozenset[int] | None = None,
    ) -> list[dict[str, Val] | None]:
        """The head's output at every query position in ``live`` (None: all); None elsewhere."""
        from netproof.symbolic.evaluation import visible_positions

        where = f"attention {layer!r} head {h.name!r}"
        if h.relative:
            raise Unsupported(
                f"{where} uses relative positions (relative_bias / query_conv / key_conv), which the encoder does not cover"
            )
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
        self,
        layer: str,
        h: Head,
        tie: str,
        i: int,
        allowed: list[int],
        scores: list[Val],
        vs: list[dict[str, Val]],
        n: int,
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
                o: self.name(
                    self.linear([(share, vs[j][o]) for j in best], Fraction(0)), f"{label}.{o}"
                )
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
                others = [
                    self.term(s) >= self.term(t)
                    for k, t in cand
                    if k != j and not (_lo(s) >= _hi(t))
                ]
                self.assertions.append(
                    b == (z3.And(others) if others else z3.BoolVal(True, self.ctx))
                )
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
        sets = [x for _, sc in cand if (x := _vals(sc)) is not None]
        if len(sets) == len(cand) and all(not (a & b) for a, b in itertools.combinations(sets, 2)):
            # No two scores can ever be equal (their value sets are disjoint): exactly one
            # position is selected, every tie rule picks it, and no count is needed.
            for o in outs:
                v = vs[cand[-1][0]][o]
                for j, _ in reversed(cand[:-1]):
                    v = self.ite(sel[j], vs[j][o], v)
                out[o] = self.name(v, f"{label}.{o}")
            return out
        count = z3.Sum(
            [z3.If(sel[j], self.num(Fraction(1)), self.num(Fraction(0))) for j, _ in cand]
        )
        cnt = self.fresh(f"{label}.count")
        self.assertions.append(cnt == count)
        for o in outs:
            vals = [vs[j][o] for j, _ in cand]
            if all(isinstance(v, Fraction) and v == vals[0] for v in vals):
                out[o] = vals[0]
                continue
            parts = [self.ite(sel[j], vs[j][o], Fraction(0)) for j, _ in cand]
            total = self.term(
                self.name(
                    self.linear([(Fraction(1), p) for p in parts], Fraction(0)), f"{label}.sum.{o}"
                )
            )
            lo = min(_lo(v) for v in vals)
            hi = max(_hi(v) for v in vals)
            y = self.fresh(f"{label}.{o}")
            for c in range(1, len(cand) + 1):
                self.assertions.append(
                    z3.Implies(cnt == c, (y if c == 1 else self.num(Fraction(c)) * y) == total)
                )
            out[o] = Sym(y, lo, hi)
        return out

    def _softmax(
        self,
        h: Head,
        i: int,
        allowed: list[int],
        scores: list[Val],
        vs: list[dict[str, Val]],
        n: int,
        where: str,
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
        fixed = [sc for sc in scores if isinstance(sc, Fraction)]
        if len(fixed) == len(scores):
            total = sum((weight[sc] for sc in fixed), Fraction(0))
            return {
                o: self.name(
                    self.linear(
                        [
                            (weight[sc] / total, vs[j][o])
                            for j, sc in zip(allowed, fixed, strict=True)
                        ],
                        Fraction(0),
                    ),
                    f"{h.name}@{i}.{o}",
                )
                for o in h.value.outputs
            }

        def chain(sc: Val, value_of: Callable[[Fraction], Val]) -> Val:
            if isinstance(sc, Fraction):
                return value_of(sc)
            assert sc.vals is not None  # checked above: every score has a known value set
            options = sorted(sc.vals)
            v: Val = value_of(options[-1])
            for x in reversed(options[:-1]):
                v = self.ite(self.term(sc) == self.num(x), value_of(x), v)
            return v

        z_val = self.linear(
            [(Fraction(1), chain(sc, lambda x: weight[x])) for sc in scores], Fraction(0)
        )
        zs = _vals(z_val)
        if zs is None:
            raise Unsupported(
                f"{where}: the softmax normalizer at position {i} takes too many values to split into cases"
            )
        z_term = self.name(z_val, f"{h.name}@{i}.Z")
        out: dict[str, Val] = {}

        def weighted(x: Fraction, vj: Val) -> Val:
            return self.linear([(weight[x], vj)], Fraction(0))

        for o in h.value.outputs:
            parts = [
                chain(sc, functools.partial(weighted, vj=vs[j][o]))
                for j, sc in zip(allowed, scores, strict=True)
            ]
            numer = self.name(
                self.linear([(Fraction(1), p) for p in parts], Fraction(0)), f"{h.name}@{i}.N.{o}"
            )
            vals_o = [vs[j][o] for j in allowed]
            y = self.fresh(f"{h.name}@{i}.{o}")
            for z in sorted(zs):
                cond = (
                    z3.BoolVal(True, self.ctx)
                    if isinstance(z_term, Fraction)
                    else self.term(z_term) == self.num(z)
                )
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

    def sublayer(
        self, sub: Sublayer, rows: list[dict[str, Val]], n: int, live: frozenset[int] | None
    ) -> list[dict[str, Val | None]]:
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
                    parts = [
                        self.affine(block.output, {**full, **p}, f"{block.name}.out@{t}")
                        if live is None or t in live
                        else p
                        for t, p in enumerate(parts)
                    ]
                outs = [p if live is None or t in live else None for t, p in enumerate(parts)]
            case FFN():
                outs = [
                    self.ffn(block, r, t) if live is None or t in live else None
                    for t, r in enumerate(rows)
                ]
            case Convolution():
                raise Unsupported(f"convolution block {block.name!r} (Chang et al.) is not encoded")
            case _:
                assert_never(block)
        new: list[dict[str, Val | None]] = []
        for t, (r, o) in enumerate(zip(rows, outs, strict=True)):
            if o is None:
                new.append(dict.fromkeys(r))
                continue
            if sub.residual:
                x = {
                    d: self.linear([(Fraction(1), r[d]), (Fraction(1), o[d])], Fraction(0))
                    if d in o
                    else r[d]
                    for d in r
                }
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
                    raise Unsupported(
                        f"readout position {r.position} is outside the {len(current)} tokens"
                    )
                return self.affine(r.logit, current[t], "logit")[r.logit.outputs[0]]
            case NextSymbols():
                raise Unsupported(
                    "next-symbol readouts (generators) are not encoded; use --method exhaustive"
                )
            case _:
                assert_never(r)

    def member(self, dfa: Automaton | StackAutomaton) -> Any:
        """The DFA run over the word: one Bool per (prefix length, state), true iff the prefix
        leads to that state (exactly one is, since the symbols are exactly one each); the
        result is the Bool "the word is accepted". Unreachable states are left out. A
        :class:`StackAutomaton` runs as its stack (:func:`netproof.verifier.smt.stack.stack_member`)."""
        z3 = self.z3
        if isinstance(dfa, StackAutomaton):
            return stack_member(z3, self.ctx, dfa, self.symbol, None, self.assertions)
        reach: dict[int, Any] = {dfa.start: z3.BoolVal(True, self.ctx)}
        for t, is_sym in enumerate(self.symbol):
            into: dict[int, list[Any]] = {}
            for q, here in reach.items():
                for a, target in enumerate(dfa.delta[q]):
                    into.setdefault(target, []).append(
                        z3.And(here, is_sym[a]) if not z3.is_true(here) else is_sym[a]
                    )
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


__all__ = ["VALUE_SET_MAX", "Encoder", "Sym", "Val"]
