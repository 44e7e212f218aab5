"""Every length at once by position classes: one query over a word of symbolic length whose
word positions are grouped by the values of their positional features.

A network whose attention is *soft* and whose scores depend on positions only through
features that repeat (``cos(iπ)`` = ±1: the residue of i mod 2) sees a word through counts: a
softmax head's normalizer at a fixed query position is Σ over position classes c and symbols a
of base^{score(c, a)}·k_{c,a}, where k_{c,a} is the number of word positions of class c that
hold a; its output is the same sum over the values. This is Chiang & Cholak's own proof of
Proposition 1 (Z₁, Z₂ are class counts times E and E⁻¹). The module builds that sum from the
IR, for a symbolic length L:

- **Positions.** The prefix and suffix tokens are fixed positions (known token, index a
  numeral or ``L + …``); the word positions are one *generic* position: a symbolic index i, its
  residue r = i mod P (P the common period of the periodic features), its symbol (an Int in
  ``0..|Σ|−1``). Features are terms of (i, r, n): ``i/n`` is i over n, ``cos(iπ)`` is a table on
  r, ``I[i=1]`` is ``[i = 1]``; ``1/i``, ``1/2^i`` and the like are unsupported. A suffix
  token's features depend on the length (``cos(iπ)`` at index L + 1 is the parity of L); its
  score is split into cases over those conditions, and base^score with it.
- **Values** are fractions num/den of z3 terms, den > 0 and free of the generic position (a
  softmax head divides by its normalizer, a feature ``i/n`` by n), so that ReLU, σ and the
  readout's sign act on the numerator alone and no division is ever asserted.
- **Sums over the word positions.** A value at the generic position may depend on its symbol
  and residue (then the sum is Σ_{c,a} k_{c,a}·value(c, a), grouped into L, symbol counts or
  class sizes where the coefficients agree), and on its index only through equalities
  ``i = T`` with T free of the position, a *selection* (Chiang & Cholak's I[i = k], from the
  Fig. 1 lemma): Σ_i [i = T]·d(i) = d(T) where T is a word position. The symbol at a selected
  position T is a variable of its own, counted in k. Anything else that depends on the index
  (``relu(k − i)`` without the lemma) is unsupported: the sum would need the index's values.
- **Lemmas.** A proved :class:`~netproof.verifier.claims.ScaledBlock` replaces its FFN where its unit dim
  holds 1/u and its inputs hold integer terms over the same u (``i/n``: i over n; ``k/n``: the
  count over the normalizer n), exactly as in the other encodings; every other FFN is encoded
  faithfully.
- **ln n scaling.** A head with base e^c whose scores are scaled by ln n weighs a position by
  n^(c·score): where c·score is a natural number that is a power of the length (a polynomial
  in L), and the same sums hold; a fractional c·score (n^(1/2): irrational for most n), a negative
  one (a division by a power of n) and a rational base r (r^(score·ln n) = n^(score·ln r)) are
  unsupported.
- **The language** must be commutative after its first f symbols, f <= :data:`PREFIX_LIMIT`
  (:func:`commutative_after`, checked on the automaton: every state reachable from a state
  reached by f symbols commutes any two symbols). Then membership is a function of the symbols
  at word positions 1..f, each a selected position (the same symbol variable the network's
  selections of that index use, e.g. FIRST's I[i = 1]), and of the counts of the rest: the
  automaton reads the f symbols one by one and then runs on the counts, each symbol's powers of
  δ being eventually periodic. f = 0 is a commutative language (PARITY), f = 1 a language
  decided by the first symbol and counts (FIRST). A word shorter than f is read symbol by
  symbol. A language that needs the last symbol (no f works) is unsupported.

The counts k_{c,a} ≥ 0 with Σ_a k_{c,a} = the number of word positions of class c are exactly
the counts of some word of length L, so the query is exact: ``unsat`` proves the claim for every
length ≥ ``min_len``, and a model is a word (:meth:`_Classes.word_of`) that the exact interpreter
replays. Hard attention (a maximum over positions that depends on which classes are present),
masks at word positions and layer norm are unsupported here; the transition system and the
range queries of :mod:`netproof.verifier.smt.compositional` cover hard attention.

May import: :mod:`netproof.symbolic`, the claims vocabulary, :mod:`netproof.verifier.smt.errors`,
:mod:`netproof.verifier.smt.closed_forms` and :mod:`.arithmetic` (the value arithmetic it shares
with the abstracted network); z3 inside functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    Network,
    NextSymbols,
    Softmax,
    TokenEmbedding,
)
from netproof.verifier.claims import (
    Automaton,
    Output,
    Recognizes,
    ScaledBlock,
    StateValue,
    ValueIs,
    Word,
)
from netproof.verifier.smt.closed_forms import closed_form_term
from netproof.verifier.smt.errors import EncoderBugError, Unsupported

from .arithmetic import Values, consts

QUERY = "position classes"
"""The name of the query (after ``"<claim> every n: "``) in a proof log."""

LOGIC = "QF_NIRA"
"""The query's SMT-LIB2 logic: integer counts and rational values, products of normalizers."""

# Features periodic in the index: name -> values at residues 0..period-1 of i.
_PERIODIC: dict[str, tuple[Fraction, ...]] = {"cos(iπ)": (Fraction(1), Fraction(-1))}


def _iroot(x: int, q: int) -> int | None:
    """The integer q-th root of x >= 0, or None."""
    lo, hi = 0, 1
    while hi**q <= x:
        hi *= 2
    while lo < hi - 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if mid**q <= x else (lo, mid)
    return lo if lo**q == x else None


def _root(r: Fraction, q: int) -> Fraction | None:
    """The rational q-th root of r > 0, or None where it is irrational."""
    num, den = _iroot(r.numerator, q), _iroot(r.denominator, q)
    return None if num is None or den is None else Fraction(num, den)


PREFIX_LIMIT = 3
"""The most leading word symbols that become fixed positions of their own for the language."""


def commutative_after(dfa: Automaton, symbols: int, limit: int) -> int | None:
    """The fewest leading symbols f <= ``limit`` after which the automaton is commutative: on
    every state reachable from a state reached by exactly f symbols from the start,
    δ(δ(q, a), b) = δ(δ(q, b), a). Then, for a word of length >= f, the state after it is a
    function of its first f symbols and the counts of the rest (a swap of two adjacent symbols
    keeps the state, and swaps reach every order); None where no f <= ``limit`` does."""
    level = {dfa.start}
    for f in range(limit + 1):
        closed, stack = set(level), list(level)
        while stack:
            q = stack.pop()
            for a in range(symbols):
                r = dfa.delta[q][a]
                if r not in closed:
                    closed.add(r)
                    stack.append(r)
        if all(
            dfa.delta[dfa.delta[q][a]][b] == dfa.delta[dfa.delta[q][b]][a]
            for q in closed
            for a in range(symbols)
            for b in range(symbols)
        ):
            return f
        level = {dfa.delta[q][a] for q in level for a in range(symbols)}
    return None


@dataclass(frozen=True, slots=True)
class _V:
    """A value num/den: z3 Real terms, den > 0 and free of the generic position."""

    num: Any
    den: Any


@dataclass(frozen=True, slots=True, eq=False)
class _Place:
    """A position: its token (None: the generic word position), index term and residue term."""

    token: str | None
    index: Any
    residue: Any
    label: str


def _period(net: Network) -> int:
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    p = 1
    for _d, feat, _c in emb.positional:
        if feat in _PERIODIC:
            p = math.lcm(p, len(_PERIODIC[feat]))
    return p


class _Classes:
    """The network over a word of symbolic length, word positions grouped by class (residue of
    the index mod the period) and symbol; see the module docstring."""

    def __init__(
        self, z3: Any, ctx: Any, net: Network, results: Sequence[Any], min_len: int
    ) -> None:
        emb = net.embedding
        if not isinstance(emb, TokenEmbedding):
            raise Unsupported("a flat embedding has no positions")
        self.z3, self.ctx, self.net = z3, ctx, net
        self.emb = emb
        self.alphabet = emb.alphabet
        self.P = _period(net)
        self.assertions: list[Any] = []
        I = self._I
        self.min_len = min_len
        self.L = z3.Int("L", ctx)
        self.assertions.append(I(min_len) <= self.L)
        npre, nsuf, base = len(emb.prefix), len(emb.suffix), emb.index_base
        self.first = npre + base  # the index of the first word position
        self.n = self.L + I(npre + nsuf)
        self.n_real = self._real_affine(Fraction(1), Fraction(npre + nsuf))
        # Counts of each (class, symbol); class c holds the word indices ≡ c (mod P).
        self.k = {
            (c, a): z3.Int(f"k[{c},{a}]", ctx)
            for c in range(self.P)
            for a in range(len(self.alphabet))
        }
        for c in range(self.P):
            m = (c - self.first) % self.P  # word offsets t (index first + t) of class c are ≡ m
            size = (self.L + I(self.P - 1 - m)) / I(self.P) if self.P > 1 else self.L
            self.assertions.append(
                z3.Sum([self.k[(c, a)] for a in range(len(self.alphabet))]) == size
            )
            for a in range(len(self.alphabet)):
                self.assertions.append(self.k[(c, a)] >= I(0))
        self.K = {
            a: z3.Sum([self.k[(c, a)] for c in range(self.P)]) for a in range(len(self.alphabet))
        }
        # The generic word position.
        self.i = z3.Int("i", ctx)
        self.r = z3.Int("r", ctx)
        self.sym = z3.Int("a", ctx)
        self.generic = _Place(None, self.i, self.r, "word")
        self.fixed = [
            _Place(tok, I(p + base), I((p + base) % self.P), f"{tok}@{p}")
            for p, tok in enumerate(emb.prefix)
        ]
        for s, tok in enumerate(emb.suffix):
            index = self.n - I(nsuf - s) + I(base)
            self.fixed.append(_Place(tok, index, index % I(self.P), f"{tok}@n-{nsuf - s}"))
        self.scaled = {
            r.lemma.block: r for r in results if isinstance(r.lemma, ScaledBlock) and r.proved
        }
        self._states: dict[tuple[int, str], dict[str, _V]] = {}
        self._tokens: dict[
            str, tuple[Any, Any]
        ] = {}  # selected index (sexpr) -> (index, its symbol)
        self.vals = Values(z3, ctx)
        self.targets: list[tuple[Any, Any]] = []

    # ------------------------------------------------------------------ numbers

    def _I(self, v: int) -> Any:  # an Int numeral
        return self.z3.IntVal(v, self.ctx)

    def _inside(self, T: Any) -> Any:
        """Whether the index T is a word position."""
        return self.z3.And(self._I(self.first) <= T, self._I(self.first - 1) + self.L >= T)

    def num(self, q: Fraction) -> Any:
        return self.z3.RealVal(str(q), self.ctx)

    def _real_affine(self, coef: Fraction, const: Fraction) -> Any:
        return self.z3.simplify(self.num(coef) * self.z3.ToReal(self.L) + self.num(const))

    def const(self, q: Fraction) -> _V:
        return _V(self.num(q), self.num(Fraction(1)))

    def fraction(self, v: _V) -> Fraction | None:
        """v as a Fraction where it is a numeral, else None."""
        z3 = self.z3
        t = z3.simplify(v.num / v.den)
        if z3.is_rational_value(t):
            return Fraction(t.numerator_as_long(), t.denominator_as_long())
        if z3.is_int_value(t):
            return Fraction(t.as_long())
        return None

    def same(self, a: Any, b: Any) -> bool:
        return bool(self.z3.simplify(a).eq(self.z3.simplify(b)))

    def lin(self, terms: Sequence[tuple[Fraction, _V]], bias: Fraction) -> _V:
        """Σ coef·value + bias, over one denominator where they share it (else their product)."""
        z3 = self.z3
        terms = [(c, v) for c, v in terms if c != 0 and not self._zero(v)]
        dens: list[Any] = []
        for _c, v in terms:
            if not any(self.same(v.den, d) for d in dens) and not self._one(v.den):
                dens.append(v.den)
        if not dens:
            den = self.num(Fraction(1))
        else:
            den = dens[0]
            for d in dens[1:]:
                den = den * d
        parts = []
        for c, v in terms:
            others = [d for d in dens if not self.same(d, v.den)]
            t = v.num
            for d in others:
                t = t * d
            parts.append(t if c == 1 else self.num(c) * t)
        if bias != 0:
            parts.append(self.num(bias) * den if len(dens) else self.num(bias))
        num = z3.Sum(parts) if len(parts) > 1 else (parts[0] if parts else self.num(Fraction(0)))
        return _V(num, den)

    def _zero(self, v: _V) -> bool:
        t = self.z3.simplify(v.num)
        return bool(self.z3.is_rational_value(t) and t.numerator_as_long() == 0) or bool(
            self.z3.is_int_value(t) and t.as_long() == 0
        )

    def _one(self, t: Any) -> bool:
        t = self.z3.simplify(t)
        return bool(
            self.z3.is_rational_value(t) and t.numerator_as_long() == t.denominator_as_long()
        )

    def as_int(self, t: Any) -> Any | None:
        """The Int term an integer-valued Real term stands for, or None."""
        z3 = self.z3
        t = z3.simplify(t)

        def go(e: Any) -> Any | None:
            if z3.is_int(e):
                return e
            if z3.is_rational_value(e):
                return (
                    z3.IntVal(e.numerator_as_long(), self.ctx)
                    if e.denominator_as_long() == 1
                    else None
                )
            if z3.is_to_real(e):
                return e.arg(0)
            if z3.is_add(e):
                args = [go(a) for a in e.children()]
                return None if any(a is None for a in args) else z3.Sum(args)
            if z3.is_mul(e):
                factors = [f for a in e.children() if (f := go(a)) is not None]
                if len(factors) < len(e.children()):
                    return None
                out = factors[0]
                for f in factors[1:]:
                    out = out * f
                return out
            return None

        return go(t)

    # ------------------------------------------------------------------ states

    def embed(self, place: _Place) -> dict[str, _V]:
        z3, emb = self.z3, self.emb
        table = {tok: dict(row) for tok, row in emb.table}
        x: dict[str, _V] = {}
        for d in self.net.dims:
            if place.token is not None:
                x[d] = self.const(table[place.token].get(d, Fraction(0)))
                continue
            col = [table[a].get(d, Fraction(0)) for a in self.alphabet]
            t: Any = self.num(col[-1])
            for a in range(len(col) - 2, -1, -1):
                t = z3.If(self.sym == self._I(a), self.num(col[a]), t)
            x[d] = _V(t, self.num(Fraction(1)))
        for d, feat, coef in emb.positional:
            x[d] = self.lin([(Fraction(1), x[d]), (coef, self.feature(feat, place))], Fraction(0))
        return x

    def feature(self, feat: str, place: _Place) -> _V:
        z3 = self.z3
        i, n = z3.ToReal(place.index), self.n_real
        one = self.num(Fraction(1))
        if feat in _PERIODIC:
            values = _PERIODIC[feat]
            t: Any = self.num(values[-1])
            for c in range(len(values) - 2, -1, -1):
                t = z3.If(
                    place.residue % self._I(len(values)) == self._I(c)
                    if len(values) != self.P
                    else place.residue == self._I(c),
                    self.num(values[c]),
                    t,
                )
            return _V(t, one)
        match feat:
            case "1":
                return _V(one, one)
            case "i":
                return _V(i, one)
            case "i+1":
                return _V(i + one, one)
            case "n":
                return _V(n, one)
            case "i/n":
                return _V(i, n)
            case "1-i/n":
                return _V(n - i, n)
            case "1/n":
                return _V(one, n)
            case "I[i=0]" | "I[i=1]":
                c = 0 if feat == "I[i=0]" else 1
                return _V(z3.If(place.index == self._I(c), one, self.num(Fraction(0))), one)
            case "I[i=n-1]":
                return _V(
                    z3.If(place.index == self.n - self._I(1), one, self.num(Fraction(0))), one
                )
        raise Unsupported(
            f"the positional feature {feat!r} neither repeats nor is linear in (i, n), so word positions have no finite classes"
        )

    def state(self, layer: int, place: _Place) -> dict[str, _V]:
        key = (layer, place.label)
        got = self._states.get(key)
        if got is None:
            got = self.embed(place) if layer == 0 else self.sublayer(layer - 1, place)
            self._states[key] = got
        return got

    def sublayer(self, idx: int, place: _Place) -> dict[str, _V]:
        sub = self.net.layers[idx]
        if sub.post_ln is not None:
            raise Unsupported(f"layer norm after {sub.name!r}")
        x = self.state(idx, place)
        block = sub.block
        match block:
            case FFN():
                out = self.ffn(block, x, place)
            case AttentionLayer():
                out = self.attention(idx, block, place)
            case Convolution():
                raise Unsupported(f"convolution block {block.name!r}")
            case _:
                assert_never(block)
        if sub.residual:
            return {
                d: self.lin([(Fraction(1), x[d]), (Fraction(1), out[d])], Fraction(0))
                if d in out
                else x[d]
                for d in self.net.dims
            }
        zero = self.const(Fraction(0))
        return {d: out.get(d, zero) for d in self.net.dims}

    def affine(self, a: Affine, x: Mapping[str, _V]) -> dict[str, _V]:
        zero = self.const(Fraction(0))
        return {
            o: self.lin([(w, x.get(d, zero)) for d, w in zip(a.inputs, row, strict=True)], b)
            for o, row, b in zip(a.outputs, a.weights, a.bias, strict=True)
        }

    def ffn(self, block: FFN, x: Mapping[str, _V], place: _Place) -> dict[str, _V]:
        r = self.scaled.get(block.name)
        if r is not None:
            got = self.scaled_lemma(r, x)
            if got is not None:
                return got
        z3 = self.z3
        zero = self.num(Fraction(0))
        cur: dict[str, _V] = dict(x)
        for step in block.steps:
            if isinstance(step, Affine):
                cur = self.affine(step, cur)
                continue
            assert isinstance(step, Activation)
            new = {}
            for d, v in cur.items():
                match step.kind:
                    case "relu":
                        new[d] = _V(z3.If(v.num > zero, v.num, zero), v.den)
                    case "step":
                        new[d] = _V(
                            z3.If(v.num > zero, self.num(Fraction(1)), zero), self.num(Fraction(1))
                        )
                    case "sigma":
                        new[d] = _V(
                            z3.If(v.num < zero, zero, z3.If(v.num > v.den, v.den, v.num)), v.den
                        )
                    case _:
                        raise Unsupported(f"activation {step.kind!r}")
            cur = new
        return cur if block.steps else {}

    def scaled_lemma(self, r: Any, x: Mapping[str, _V]) -> dict[str, _V] | None:
        """The proved ScaledBlock where its unit dim holds 1/u and its inputs integers over u."""
        lemma = r.lemma
        unit = x.get(lemma.unit)
        if unit is None or not self._one(unit.num):
            r.fallbacks.append(
                f"the unit dim {lemma.unit!r} is not 1 over a positive term (position classes)"
            )
            return None
        env: dict[str, Any] = {}
        for d, v in lemma.inputs.items():
            value = x.get(d)
            if value is None or self._zero(value):
                got = self._I(0)
            else:
                got = self.as_int(value.num) if self.same(value.den, unit.den) else None
            if got is None:
                r.fallbacks.append(
                    f"dim {d!r} is not an integer term over the unit (position classes)"
                )
                return None
            env[str(v)] = got
        r.uses += 1
        return {
            d: _V(self.vals.arith(self.vals.formula(e, env)), unit.den)
            for d, e in lemma.outputs.items()
        }

    # ------------------------------------------------------------------ attention

    def attention(self, idx: int, layer: AttentionLayer, place: _Place) -> dict[str, _V]:
        outs: dict[str, _V] = {}
        for h in layer.heads:
            outs.update(self.head(idx, h, place))
        if layer.output is not None:
            outs = self.affine(layer.output, outs)
        return outs

    def _factor(self, h: Head) -> Fraction:
        s = h.scale
        if s.times_n:
            raise Unsupported(f"head {h.name!r} scales its scores with the length (times n)")
        f = s.coef
        if s.sqrt_d is not None:
            root = math.isqrt(s.sqrt_d)
            if root * root != s.sqrt_d:
                raise Unsupported(
                    f"head {h.name!r} divides its scores by √{s.sqrt_d}, an irrational number"
                )
            f /= root
        return f

    def _power(self, h: Head, score: Fraction) -> Any:
        """base^score: a Fraction, or with ln n scaling (base e^c, weight e^(c·score·ln n) =
        n^(c·score)) the z3 term n^(c·score), a product of the length n, where c·score is a
        natural number (else the weight is irrational for most n, or a division by a power of n)."""
        norm = h.normalizer
        assert isinstance(norm, Softmax)
        if h.scale.log_n:
            if norm.c is None:
                raise Unsupported(
                    f"head {h.name!r} has the base {norm.r} and ln n scaling: its weight {norm.r}^(score·ln n) = "
                    f"n^(score·ln {norm.r}) is irrational"
                )
            k = norm.c * score
            if k.denominator != 1:
                raise Unsupported(
                    f"head {h.name!r} scales its scores by ln n and has the weight n^({k}), which is irrational for most n"
                )
            if k < 0:
                raise Unsupported(
                    f"head {h.name!r} scales its scores by ln n and has the weight n^({k}), a division by a power of the length"
                )
            t: Any = self.num(Fraction(1))
            for _ in range(int(k)):
                t = t * self.n_real
            return self.z3.simplify(t)
        if norm.r is None:
            raise Unsupported(f"head {h.name!r} has the transcendental base e^{norm.c}")
        root = _root(norm.r, score.denominator)
        if root is None:
            raise Unsupported(
                f"head {h.name!r} has the score {score} and the base {norm.r}, whose power is irrational"
            )
        return root**score.numerator

    def _term(self, w: Any) -> Any:
        """A weight of :meth:`_power` as a z3 Real term."""
        return self.num(w) if isinstance(w, Fraction) else w

    def _power_cases(self, h: Head, factor: Fraction, score: Any, p: _Place) -> Any:
        """base^(factor·score) for a score that is a numeral once the conditions of its
        if-then-else terms are decided (at most six of them): the same case split over powers."""
        z3 = self.z3
        conditions: dict[int, Any] = {}
        seen: set[int] = set()
        stack = [score]
        while stack:
            e = stack.pop()
            if e.get_id() in seen:
                continue
            seen.add(e.get_id())
            if z3.is_app_of(e, z3.Z3_OP_ITE):
                conditions.setdefault(e.arg(0).get_id(), e.arg(0))
            stack.extend(e.children())
        if len(conditions) > 6:
            raise Unsupported(
                f"the score of head {h.name!r} at {p.label} depends on the word through {len(conditions)} conditions"
            )

        def split(decided: list[tuple[Any, Any]], rest: list[Any]) -> Any:
            if rest:
                c, more = rest[0], rest[1:]
                return z3.If(
                    c,
                    split([*decided, (c, z3.BoolVal(True, self.ctx))], more),
                    split([*decided, (c, z3.BoolVal(False, self.ctx))], more),
                )
            value = self.fraction(
                _V(z3.substitute(score, *decided) if decided else score, self.num(Fraction(1)))
            )
            if value is None:
                raise Unsupported(f"the score of head {h.name!r} at {p.label} depends on the word")
            return self._term(self._power(h, factor * value))

        return split([], list(conditions.values()))

    def _types(self) -> list[tuple[int, int]]:
        return [(c, a) for c in range(self.P) for a in range(len(self.alphabet))]

    def _at(self, t: Any, c: int, a: int) -> Any:
        return self.z3.simplify(self.z3.substitute(t, (self.r, self._I(c)), (self.sym, self._I(a))))

    def head(self, idx: int, h: Head, place: _Place) -> dict[str, _V]:
        z3 = self.z3
        match h.normalizer:
            case Hardmax():
                raise Unsupported(
                    f"hard attention in head {h.name!r} (a maximum over the classes present) without a NearestSelection lemma"
                )
            case Softmax():
                pass
            case _:
                assert_never(h.normalizer)
        if (
            h.scoring != "dot"
            or h.relative_bias is not None
            or h.query_conv is not None
            or h.key_conv is not None
        ):
            raise Unsupported(f"head {h.name!r} scores with relative positions or −|q·k|")
        x = self.state(idx, place)
        q = self.affine(h.query, x)
        if place.token is None:
            # A query at the word position: one case per (class, symbol), where it depends on them.
            free = [
                v
                for v in q.values()
                if self._mentions(v.num, (self.i,))
                or self._mentions(v.den, (self.i, self.r, self.sym))
            ]
            if free:
                raise Unsupported(
                    f"the query of head {h.name!r} at a word position depends on its index"
                )
            if not any(self._mentions(v.num, (self.r, self.sym)) for v in q.values()):
                return self._head_for(idx, h, q, place)
            cases = {
                (c, a): self._head_for(
                    idx, h, {d: _V(self._at(v.num, c, a), v.den) for d, v in q.items()}, place
                )
                for c, a in self._types()
            }
            out: dict[str, _V] = {}
            for d in cases[(0, 0)]:
                # Over the product of the cases' distinct normalizers, free of the position.
                dens: list[Any] = []
                for t in self._types():
                    if not any(self.same(cases[t][d].den, e) for e in dens):
                        dens.append(cases[t][d].den)
                num: Any = None
                for t in self._types():
                    v = cases[t][d]
                    term = v.num
                    for e in dens:
                        if not self.same(e, v.den):
                            term = term * e
                    num = (
                        term
                        if num is None
                        else z3.If(
                            z3.And(self.r == self._I(t[0]), self.sym == self._I(t[1])), term, num
                        )
                    )
                common = dens[0]
                for e in dens[1:]:
                    common = common * e
                out[d] = _V(num, common)
            return out
        return self._head_for(idx, h, q, place)

    def _mentions(self, t: Any, among: Sequence[Any]) -> bool:
        ids = {c.get_id() for c in among}
        return any(k in ids for k in consts(self.z3, t))

    def _head_for(self, idx: int, h: Head, q: Mapping[str, _V], place: _Place) -> dict[str, _V]:
        """The head's output for the query vector ``q`` (free of the word position) at ``place``."""
        z3 = self.z3
        factor = self._factor(h)
        zero = self.const(Fraction(0))

        def score_of(state: Mapping[str, _V]) -> Any:
            k = self.affine(h.key, state)
            return self.lin(
                [
                    (Fraction(1), _V(q[d].num * k[d].num, q[d].den * k[d].den))
                    for d in h.key.outputs
                    if d in q
                ],
                Fraction(0),
            )

        keys: list[_Place] = []
        generic = True
        if h.mask != "none":
            if place.token is None:
                raise Unsupported(f"head {h.name!r} masks positions relative to a word position")
            here = next(j for j, p in enumerate(self.fixed) if p.label == place.label)
            npre = len(self.emb.prefix)
            before = (
                [
                    p
                    for j, p in enumerate(self.fixed)
                    if j < npre and (j < here if h.mask == "strict_causal" else j <= here)
                ]
                if here < npre
                else None
            )
            match h.mask:
                case "causal" | "strict_causal":
                    if before is None:
                        raise Unsupported(f"head {h.name!r} masks at a suffix position")
                    keys, generic = before, False
                case "anticausal" | "strict_anticausal":
                    if here >= npre:
                        raise Unsupported(f"head {h.name!r} masks at a suffix position")
                    keys = [
                        p
                        for j, p in enumerate(self.fixed)
                        if (j > here if h.mask == "strict_anticausal" else j >= here)
                    ]
                case _:
                    raise Unsupported(f"mask {h.mask!r}")
        else:
            keys = list(self.fixed)
        if not keys and not generic:
            if h.empty == "zero":
                return dict.fromkeys(h.value.outputs, zero)
            raise Unsupported(
                f"head {h.name!r} attends to no position at {place.label} and its empty rule is an error"
            )
        if not keys and self.min_len == 0:
            raise Unsupported(
                f"head {h.name!r} attends to the word positions only, and the empty word has none"
            )
        # Fixed key positions: concrete scores.
        z_parts: list[tuple[Fraction, _V]] = []
        v_parts: dict[str, list[tuple[Fraction, _V]]] = {d: [] for d in h.value.outputs}
        for p in keys:
            state = self.state(idx, p)
            score = score_of(state)
            s = self.fraction(score)
            if s is not None:
                w = self._power(h, factor * s)
                if isinstance(w, Fraction):
                    z_parts.append((w, self.const(Fraction(1))))
                    for d, v in self.affine(h.value, state).items():
                        v_parts[d].append((w, v))
                else:  # a power of the length (ln n scaling)
                    z_parts.append((Fraction(1), _V(w, self.num(Fraction(1)))))
                    for d, v in self.affine(h.value, state).items():
                        v_parts[d].append((Fraction(1), _V(w * v.num, v.den)))
                continue
            # A score that takes finitely many values (a feature of a suffix token's index, which
            # depends on the length): base^score as the same case split.
            w_term = self._power_cases(h, factor, self.z3.simplify(score.num / score.den), p)
            z_parts.append((Fraction(1), _V(w_term, self.num(Fraction(1)))))
            for d, v in self.affine(h.value, state).items():
                v_parts[d].append((Fraction(1), _V(w_term * v.num, v.den)))
        if generic:
            state = self.state(idx, self.generic)
            z_term, sums = self._generic_sums(
                h, factor, score_of(state), self.affine(h.value, state)
            )
            z_parts.append((Fraction(1), _V(z_term, self.num(Fraction(1)))))
            for d, v in sums.items():
                v_parts[d].append((Fraction(1), v))
        Z = self.lin(z_parts, Fraction(0))
        out: dict[str, _V] = {}
        for d in h.value.outputs:
            v = self.lin(v_parts[d], Fraction(0)) if v_parts[d] else zero
            out[d] = _V(v.num * Z.den, z3.simplify(v.den * Z.num)) if not self._zero(v) else zero
        return out

    def _grouped(self, coef: Mapping[tuple[int, int], Any]) -> Any:
        """Σ_{c,a} coef[c,a]·k[c,a], written with L, the symbol counts or the class sizes where
        the coefficients agree (so that equal sums are equal terms)."""
        z3 = self.z3
        types = self._types()
        first = coef[types[0]]
        if all(self.same(coef[t], first) for t in types):
            return z3.simplify(first * z3.ToReal(self.L))
        if all(self.same(coef[(c, a)], coef[(0, a)]) for c, a in types):
            return z3.simplify(
                z3.Sum([coef[(0, a)] * z3.ToReal(self.K[a]) for a in range(len(self.alphabet))])
            )
        return z3.simplify(z3.Sum([coef[t] * z3.ToReal(self.k[t]) for t in types]))

    def _generic_sums(
        self, h: Head, factor: Fraction, score: _V, values: Mapping[str, _V]
    ) -> tuple[Any, dict[str, _V]]:
        """Σ over the word positions i of base^score(i) (the normalizer's share) and of
        base^score(i)·value(i) for each value dim: per (class, symbol) where nothing depends on
        i beyond them, plus, where the score or a value holds an atom ``i = T``, the change at T."""
        z3 = self.z3
        where = (self.i, self.r, self.sym)
        if self._mentions(score.den, where) or any(
            self._mentions(v.den, where) for v in values.values()
        ):
            raise Unsupported(
                f"head {h.name!r} divides a score or a value by a term that depends on the word position"
            )
        atoms = self._selections([score.num, *(v.num for v in values.values())])
        if len(atoms) > 1:
            raise Unsupported(
                f"head {h.name!r} selects two positions ({', '.join(str(t) for _a, t in atoms)}) at once"
            )
        no = [(atom, z3.BoolVal(False, self.ctx)) for group, _t in atoms for atom in group]
        s_base = z3.substitute(score.num, *no) if no else score.num
        v_base = {d: z3.substitute(v.num, *no) if no else v.num for d, v in values.items()}
        weight: dict[tuple[int, int], Any] = {}
        for c, a in self._types():
            s = self.fraction(_V(self._at(s_base, c, a), score.den))
            if s is None:
                raise Unsupported(
                    f"the score of head {h.name!r} at a word position depends on the word beyond its symbol and class, "
                    "or on its index beyond its class"
                )
            weight[(c, a)] = self._power(h, factor * s)
        z_term = self._grouped({t: self._term(w) for t, w in weight.items()})
        sums: dict[str, Any] = {}
        for d, f in v_base.items():
            coef = {}
            for c, a in self._types():
                g = self._at(f, c, a)
                if self._mentions(g, (self.i,)):
                    raise Unsupported(
                        f"the value {d!r} of head {h.name!r} at a word position depends on its index beyond its class "
                        "(a lemma that turns it into a selection [i = T] may help)"
                    )
                coef[(c, a)] = z3.simplify(self._term(weight[(c, a)]) * g)
            sums[d] = self._grouped(coef)
        for group, T in atoms:
            yes = [(atom, z3.BoolVal(True, self.ctx)) for atom in group]
            tok = self.token_at(T)
            residue = T % self._I(self.P) if self.P > 1 else self._I(0)
            at_T = ((self.i, T), (self.r, residue), (self.sym, tok))
            s_true = z3.substitute(score.num, *yes)
            w_true: Any = None
            w_base: Any = None
            for c, a in reversed(self._types()):
                here = (self.i, T), (self.r, self._I(c)), (self.sym, self._I(a))
                s = self.fraction(_V(z3.substitute(s_true, *here), score.den))
                if s is None:
                    raise Unsupported(
                        f"the score of head {h.name!r} at the selected position {T} depends on the word"
                    )
                wt, wb = self._term(self._power(h, factor * s)), self._term(weight[(c, a)])
                is_type = z3.And(residue == self._I(c), tok == self._I(a))
                w_true = wt if w_true is None else z3.If(is_type, wt, w_true)
                w_base = wb if w_base is None else z3.If(is_type, wb, w_base)
            inside = self._inside(T)
            zero = self.num(Fraction(0))
            z_term = z_term + z3.If(inside, w_true - w_base, zero)
            for d, v in values.items():
                v_true = z3.substitute(z3.substitute(v.num, *yes), *at_T)
                v_at = z3.substitute(v_base[d], *at_T)
                sums[d] = sums[d] + z3.If(inside, w_true * v_true - w_base * v_at, zero)
        return z_term, {d: _V(t, values[d].den) for d, t in sums.items()}

    def _selections(self, terms: Sequence[Any]) -> list[tuple[tuple[Any, ...], Any]]:
        """The atoms ``i = T`` of the terms (T free of the word position), grouped by T (as
        ``T = i`` and ``i = T``, say), each group with its T."""
        z3 = self.z3
        out: dict[int, tuple[Any, Any]] = {}
        seen: set[int] = set()
        stack = list(terms)
        while stack:
            e = stack.pop()
            if e.get_id() in seen:
                continue
            seen.add(e.get_id())
            if z3.is_eq(e) and z3.is_int(e.arg(0)):
                for me, other in ((e.arg(0), e.arg(1)), (e.arg(1), e.arg(0))):
                    if me.eq(self.i) and not self._mentions(other, (self.i, self.r, self.sym)):
                        out[e.get_id()] = (e, other)
            stack.extend(e.children())
        by_target: dict[str, tuple[list[Any], Any]] = {}
        for atom, T in out.values():
            by_target.setdefault(z3.simplify(T).sexpr(), ([], T))[0].append(atom)
        return [(tuple(atoms), T) for atoms, T in by_target.values()]

    def token_at(self, T: Any) -> Any:
        """The symbol at the selected word position T: a variable of its own, counted in k."""
        key = self.z3.simplify(T).sexpr()
        got = self._tokens.get(key)
        if got is None:
            tok = self.z3.Int(f"a@{len(self._tokens)}", self.ctx)
            self.assertions.append(tok >= self._I(0))
            self.assertions.append(tok < self._I(len(self.alphabet)))
            self._tokens[key] = got = (T, tok)
            self.targets.append(got)
        return got[1]

    def _target_constraints(self) -> list[Any]:
        """Selected positions are word positions of their class whose symbols the counts hold:
        equal positions have equal symbols; distinct ones of one (class, symbol) fit in k."""
        z3 = self.z3
        out = []
        inside = self._inside
        for j, (T, tok) in enumerate(self.targets):
            for T2, tok2 in self.targets[:j]:
                out.append(z3.Implies(T == T2, tok == tok2))
        one, zero = self._I(1), self._I(0)
        for c, a in self._types():
            marks = []
            for j, (T, tok) in enumerate(self.targets):
                new = z3.And(
                    inside(T),
                    (T % self._I(self.P)) == self._I(c)
                    if self.P > 1
                    else z3.BoolVal(True, self.ctx),
                    tok == self._I(a),
                    *(T != T2 for T2, _t in self.targets[:j]),
                )
                marks.append(z3.If(new, one, zero))
            if marks:
                out.append(z3.Sum(marks) <= self.k[(c, a)])
        return out

    # ------------------------------------------------------------------ readout and language

    def accept(self) -> Any:
        """The network accepts: its logit is positive (every denominator is)."""
        return self.logit().num > self.num(Fraction(0))

    def readout_place(self) -> _Place:
        """The fixed position the classifier reads (a prefix or suffix token)."""
        r = self.net.readout
        match r:
            case Classifier():
                pass
            case NextSymbols():
                raise Unsupported("next-symbol readouts (generators)")
            case _:
                assert_never(r)
        npre, nsuf = len(self.emb.prefix), len(self.emb.suffix)
        if 0 <= r.position < npre:
            return self.fixed[r.position]
        if r.position < 0 and -r.position <= nsuf:
            return self.fixed[npre + nsuf + r.position]
        raise Unsupported(
            f"the readout reads position {r.position}, a word position (not a prefix or suffix token)"
        )

    def logit(self) -> _V:
        """The readout's logit at its fixed position."""
        r = self.net.readout
        assert isinstance(r, Classifier)
        place = self.readout_place()
        return self.affine(r.logit, self.state(len(self.net.layers), place))[r.logit.outputs[0]]

    def member(self, dfa: Automaton | None, name: str) -> Any:
        """Membership of the word in the automaton's language: a function of the symbols at the
        first f word positions (each a selected position, the same variable the network's
        selections of that index use) and of the symbol counts, where f is the fewest leading
        symbols after which the automaton is commutative (:func:`commutative_after`; f = 0 for
        PARITY, 1 for a language decided by the first symbol and counts). Words shorter than f
        are read symbol by symbol."""
        z3 = self.z3
        if dfa is None:
            raise Unsupported(
                f"{name} has no automaton, so membership cannot be stated over the symbol counts"
            )
        if any(len(row) != len(self.alphabet) for row in dfa.delta):
            raise Unsupported(
                f"{name}'s automaton reads {len(dfa.delta[0])} symbols, the network's alphabet has {len(self.alphabet)}"
            )
        f = commutative_after(dfa, len(self.alphabet), PREFIX_LIMIT)
        if f is None:
            raise Unsupported(
                f"{name} is not given as an automaton that is commutative after its first {PREFIX_LIMIT} symbols or fewer, "
                "so membership is not a function of the symbols at fixed first positions and the symbol counts"
            )
        if f == 0:
            return self._accepting(
                dfa, self._count_run(dfa, z3.IntVal(dfa.start, self.ctx), self.K)
            )
        zero, one = self._I(0), self._I(1)
        firsts = [self.token_at(self._I(self.first + j)) for j in range(f)]
        states: list[Any] = [z3.IntVal(dfa.start, self.ctx)]  # the state after the first j symbols
        for a in firsts:
            states.append(self._step(dfa, states[-1], a))
        # The rest of the word (L - f symbols) through its counts, from the state after f symbols.
        rest = {
            b: self.K[b] - z3.Sum([z3.If(a == self._I(b), one, zero) for a in firsts])
            for b in range(len(self.alphabet))
        }
        out = self._accepting(dfa, self._count_run(dfa, states[f], rest))
        for m in range(f - 1, -1, -1):
            out = z3.If(self._I(m) == self.L, self._accepting(dfa, states[m]), out)
        return out

    def _step(self, dfa: Automaton, state: Any, symbol: Any) -> Any:
        """δ(state, symbol) for Int terms, as a table of cases."""
        z3 = self.z3
        out: Any = None
        for q in range(dfa.states):
            for a in range(len(self.alphabet)):
                v = z3.IntVal(dfa.delta[q][a], self.ctx)
                out = (
                    v
                    if out is None
                    else z3.If(z3.And(state == self._I(q), symbol == self._I(a)), v, out)
                )
        return out

    def _accepting(self, dfa: Automaton, state: Any) -> Any:
        z3 = self.z3
        return (
            z3.Or([state == self._I(q) for q in sorted(dfa.accepting)])
            if dfa.accepting
            else z3.BoolVal(False, self.ctx)
        )

    def _count_run(self, dfa: Automaton, state: Any, counts: Mapping[int, Any]) -> Any:
        """The state after counts[0] symbols 0, then counts[1] symbols 1, ... from ``state``:
        each δ_a^m(q) is eventually periodic in m (a tail, then a cycle)."""
        z3 = self.z3
        for a in range(len(self.alphabet)):
            m = counts[a]
            new: Any = None
            for q in range(dfa.states):
                seq, first_seen = [q], {q: 0}
                nxt = dfa.delta[q][a]
                while nxt not in first_seen:
                    first_seen[nxt] = len(seq)
                    seq.append(nxt)
                    nxt = dfa.delta[nxt][a]
                tail, period = first_seen[nxt], len(seq) - first_seen[nxt]
                cyc: Any = z3.IntVal(seq[tail + period - 1], self.ctx)
                for t in range(period - 2, -1, -1):
                    cyc = z3.If(
                        (m - self._I(tail)) % self._I(period) == self._I(t),
                        z3.IntVal(seq[tail + t], self.ctx),
                        cyc,
                    )
                reached: Any = cyc
                for t in range(tail - 1, -1, -1):
                    reached = z3.If(m == self._I(t), z3.IntVal(seq[t], self.ctx), reached)
                new = reached if new is None else z3.If(state == self._I(q), reached, new)
            state = new
        return state

    def word_of(self, model: Any) -> Word:
        """A word with the model's length and counts (selected positions hold their symbols)."""

        def val(t: Any) -> int:
            return int(model.eval(t, model_completion=True).as_long())

        length = val(self.L)
        left = {(c, a): val(self.k[(c, a)]) for c, a in self._types()}
        word: list[int | None] = [None] * length
        for T, tok in self.targets:
            t = val(T) - self.first
            if 0 <= t < length and word[t] is None:
                word[t] = val(tok)
                left[((t + self.first) % self.P, val(tok))] -= 1
        for t in range(length):
            if word[t] is None:
                c = (t + self.first) % self.P
                a = next(a for a in range(len(self.alphabet)) if left[(c, a)] > 0)
                left[(c, a)] -= 1
                word[t] = a
        return tuple(self.alphabet[a] for a in word if a is not None)


def class_query(
    net: Network, claim: Recognizes, results: Sequence[Any]
) -> tuple[Any, Any, _Classes]:
    """The theorem for every length ≥ ``claim.min_len`` as one query over position classes (see
    the module docstring): (z3 context, solver, the encoding). :class:`Unsupported` where the
    network or the language is outside what the encoding covers."""
    import z3

    ctx = z3.Context()
    enc = _Classes(z3, ctx, net, results, claim.min_len)
    goal = enc.accept() != enc.member(claim.language.automaton, claim.language.name)
    if enc._mentions(goal, (enc.i, enc.r, enc.sym)):
        raise EncoderBugError(
            f"the readout of {net.name!r} over position classes still names the generic word position: every sum should remove it"
        )
    solver = z3.Solver(ctx=ctx)
    solver.add(*enc.assertions)
    solver.add(*enc.vals.assertions)
    solver.add(*enc._target_constraints())
    solver.add(goal)
    return ctx, solver, enc


def value_query(net: Network, claim: ValueIs, results: Sequence[Any]) -> tuple[Any, Any, _Classes]:
    """A :class:`ValueIs` with a closed form for every length ≥ ``claim.min_len`` as one query over
    position classes: at every fixed token and at the generic word position (a word position of
    any class, holding any symbol the counts allow), the value differs from the closed form, whose
    ``#a`` are the symbol counts, ``n``, ``t`` and ``i`` the length and the position (symbolic at
    the word position) and ``wj=a`` the symbol at word position j (a selected position of its
    own). (z3 context, solver, the encoding); :class:`Unsupported` where the network or the
    closed form is outside the encoding."""
    import z3

    if claim.closed_form is None:
        raise Unsupported(f"claim {claim.id} has no closed form")
    ctx = z3.Context()
    enc = _Classes(z3, ctx, net, results, claim.min_len)
    emb = enc.emb
    alphabet = list(enc.alphabet)
    zero, one = enc.num(Fraction(0)), enc.num(Fraction(1))
    some_word_position = enc._I(1) <= enc.L
    points: list[tuple[_Place, _V]] = []
    if isinstance(claim.quantity, Output):
        if not isinstance(net.readout, Classifier):
            raise Unsupported("the logit of a network without a classifier readout")
        points.append((enc.readout_place(), enc.logit()))
    else:
        names = ["input", *(sub.name for sub in net.layers)]
        if claim.quantity.after not in names:
            raise Unsupported(
                f"claim {claim.id}: the network has no step named {claim.quantity.after!r}"
            )
        layer = names.index(claim.quantity.after)
        for place in (*enc.fixed, enc.generic):
            points.append(
                (place, enc.state(layer, place).get(claim.quantity.dim, enc.const(Fraction(0))))
            )

    def count(a: str) -> Any:
        return z3.ToReal(enc.K[alphabet.index(a)])

    def indicator(j: int, a: str) -> Any:
        T = enc._I(enc.first + j - 1)
        return z3.If(
            z3.And(enc._inside(T), enc.token_at(T) == enc._I(alphabet.index(a))), one, zero
        )

    differs = []
    for place, v in points:
        where: tuple[Any, Any, Any]
        if place.token is not None and z3.is_int_value(z3.simplify(place.index)):
            index = z3.simplify(place.index).as_long()
            where = (index - emb.index_base, index, z3.ToReal(enc.n))
        else:
            where = (
                z3.ToReal(place.index) - enc.num(Fraction(emb.index_base)),
                z3.ToReal(place.index),
                z3.ToReal(enc.n),
            )
        expected = closed_form_term(z3, ctx, claim.closed_form, alphabet, where, count, indicator)
        differ = v.num != expected * v.den
        differs.append(z3.And(some_word_position, differ) if place.token is None else differ)
    solver = z3.Solver(ctx=ctx)
    solver.add(*enc.assertions)
    solver.add(*enc.vals.assertions)
    if isinstance(claim.quantity, StateValue):
        # The generic word position is one of the word's positions, of its class, holding a symbol the counts hold.
        solver.add(
            z3.Implies(
                some_word_position,
                z3.And(
                    enc._inside(enc.i),
                    enc.r == enc.i % enc._I(enc.P),
                    enc.sym >= enc._I(0),
                    enc.sym < enc._I(len(alphabet)),
                ),
            )
        )
        enc.targets.append((enc.i, enc.sym))
    solver.add(*enc._target_constraints())
    solver.add(z3.Or(differs))
    return ctx, solver, enc
