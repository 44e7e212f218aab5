"""The kernel's rule for every length: position classes, with selections.

Rule (position classes). Let every positional feature of the network be one of ``1``,
``cos(iπ)``, ``i/n`` and the indicators ``I[i=k]``, positions numbered from 0, every attention
head have mask ``none`` and a softmax normalizer with a rational base, and the network have no
layer norm. Let ``f`` be one more than the largest fixed position (an ``I[i=k]``'s k, or the
last prefix token), and ``p`` the period of the features (2 with ``cos(iπ)``, else 1). Call the
class of a position its index if it is below ``f``, else its residue mod p. Then:

1. At the embedding, a position's row is a function of its class, token and index i (the
   index only through ``i/n``, which is i over n, n = the number of positions).
2. Every value is kept as num/den with den a product of positive terms (n, and softmax
   normalizers: each is Σ weight·multiplicity, positive since the first prefix position has
   multiplicity 1 and every weight is > 0), so ReLU, step and σ act on num alone (for den > 0,
   relu(x/d) = relu(x)/d, σ clips x to [0, d]) and no division is asserted.
3. If every row before a sublayer is a function of (class, token, i) and of the word's counts
   ``c[r][a]`` (positions of residue r at or after f holding symbol a), so is every row after it:
   an FFN is position-wise; a head's scores must be rational constants per (query class,
   key class) (checked: the kernel refuses otherwise), so each weight is a rational number, and
   Σ_j w_j·v_j groups into one term per fixed position and ``c[r][a]`` equal terms per class,
   where v does not depend on the key's index; a head whose weights are all equal divides by n
   (Σ of the multiplicities is n under the count constraints).
4. Rule (selection): where v_j at the positions j >= f depends on j's index (``i/n`` through an
   FFN, as in Chiang & Cholak's Fig. 1, whose output is I[i = k]/n), the kernel first proves,
   by one solver query, that at most one position j >= f has v_j ≠ 0; then the sum over them is
   v at one position J (of a class and symbol the counts hold, with v_J ≠ 0), or 0 where every
   position j >= f holds a symbol of its class with v = 0 (a quantified constraint). The real
   word satisfies these constraints with J its one nonzero position (or ``none``): the query
   ranges over more than the real words, so its unsat is sound; a model is replayed on the
   kernel's interpreter and refused as undecided where it is not a misclassified word.
5. Hence the readout's logit is num/den with den > 0, for every word of length m >= f − P
   (the fixed positions all inside the word), and a word is accepted iff num > 0.

So "no word of length >= f − P is misclassified" is the unsatisfiability, over non-negative
integer counts with Σ_a c[r][a] = the number of positions of residue r in f .. P+m−1 (for some
m), over the symbols at the fixed positions and the selections, of "accepted ≠ member", where
membership is the kernel's own symbolic form of the language on the same data
(:data:`SYMBOLIC`). The shorter words are checked one by one by the exact interpreter. Both
together: every word of every length.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

from .interpret import combine, feature, ffn, mix, run, solve
from .languages import FIRST, PARITY, language
from .netfile import Affine, KernelError, Net, Refused

CLASS_FEATURES = ("1", "cos(iπ)", "i/n")

# The kernel's symbolic form of the languages the rule covers: (fixed symbols by word position
# 1.., count of symbol a over the other positions) -> z3 Bool.
Symbolic = Callable[[Any, dict[int, Any], Callable[[str], Any]], Any]
SYMBOLIC: dict[str, Symbolic] = {
    PARITY: lambda z3, fixed, count: (
        (sum((z3.If(s == 1, 1, 0) for s in fixed.values()), z3.IntVal(0)) + count("1")) % 2 == 1
    ),
    FIRST: lambda z3, fixed, count: fixed[1] == 1,
}


def _shape(net: Net) -> tuple[int, int]:
    """(f, p) of the rule, or Refused naming what breaks it."""
    f, p = len(net.prefix), 1
    for _d, name, _c in net.positional:
        if name.startswith("I[i=") and name[4:-1].isdigit():
            f = max(f, int(name[4:-1]) + 1)
        elif name == "cos(iπ)":
            p = 2
        elif name not in CLASS_FEATURES:
            raise Refused(f"positional feature {name!r} is not a function of a position class")
    if net.suffix:
        raise Refused("suffix tokens (their positions move with the length)")
    if net.index_base != 0:
        raise Refused(f"index base {net.index_base} (the rule numbers positions from 0)")
    for sub in net.layers:
        if sub.post_ln or any(isinstance(s, tuple) and s[0] == "ln" for s in sub.block.steps):
            raise Refused("a layer norm (its √ is not a rational function of the counts)")
        for h in sub.block.heads:
            if h.mask != "none" or h.hardmax or h.times_n:
                raise Refused(f"head {h.name!r}: only softmax heads with mask none and no n scale")
    return f, p


# A value is (num, dens): num over the product of dens, each den a term the rule shows positive
# (n, or a softmax normalizer), so that ReLU, σ and the readout's sign act on num alone.
Val = tuple[Any, tuple[Any, ...]]


def _key(z3: Any, t: Any) -> str:
    return str(z3.simplify(t).sexpr())


def _sum(z3: Any, terms: list[tuple[Any, Val]], bias: Fraction = Fraction(0)) -> Val:
    """Σ coef·value + bias over the union of the values' denominators (coef: a z3 term)."""
    dens: dict[str, Any] = {}  # each denominator once, by its simplified form, in order
    for d in itertools.chain.from_iterable(ds for _c, (_n, ds) in terms):
        dens.setdefault(_key(z3, d), d)
    parts = []
    for c, (num, ds) in terms:
        own = {_key(z3, d) for d in ds}
        parts.append(c * math.prod((d for k, d in dens.items() if k not in own), start=num))
    if bias:
        parts.append(z3.RealVal(bias) * _prod(z3, tuple(dens.values())))
    return z3.simplify(sum(parts, z3.RealVal(0))), tuple(dens.values())


def _prod(z3: Any, ds: tuple[Any, ...]) -> Any:
    return math.prod(ds, start=z3.RealVal(1))


def _affine(z3: Any, a: Affine, x: dict[str, Val]) -> dict[str, Val]:
    zero: Val = (z3.RealVal(0), ())
    out = {}
    for o in a.outputs:
        terms = [(z3.RealVal(w), x.get(i, zero)) for i, w in a.weights[o].items()]
        out[o] = _sum(z3, terms, a.bias.get(o, Fraction(0)))
    return out


def _act(z3: Any, kind: str, v: Val) -> Val:
    num, ds = v
    if kind == "relu":
        return z3.If(num > 0, num, 0), ds
    if kind == "step":
        return z3.If(num > 0, z3.RealVal(1), z3.RealVal(0)), ()
    top = _prod(z3, ds)  # σ clips num/top to [0, 1]
    return z3.If(num < 0, z3.RealVal(0), z3.If(num > top, top, num)), ds


def _mentions(z3: Any, t: Any, var: Any) -> bool:
    """Whether the term t names the constant var (substituting var + 1 for it changes t)."""
    return not z3.substitute(t, (var, var + 1)).eq(t)


def _constant(z3: Any, v: Val, where: str) -> Fraction:
    t = z3.simplify(v[0] / _prod(z3, v[1]))
    if not z3.is_rational_value(t):
        raise Refused(f"{where}: a score that depends on the word's counts or positions")
    return Fraction(t.numerator_as_long(), t.denominator_as_long())


class _Query:
    """The rule's query (module docstring) and the terms it shares: z3, n (``N``), f, p, the
    counts ``c[r, a]``, the word's length ``m`` and last position, its symbols ``sym`` at the
    fixed positions, the constraints (``base``, which the selections extend), the generic index
    ``ivar``, the places (index, residue or None, token, multiplicity) with their embedding rows
    (rule step 1), the alphabet, the solver's timeout and the selections made (their names)."""

    def __init__(self, z3: Any, net: Net, f: int, p: int, start: int, timeout_s: float) -> None:
        self.z3, self.f, self.p, self.timeout_s, self.selections = z3, f, p, timeout_s, list[str]()
        self.alphabet, self.P = alphabet, P = net.alphabet, len(net.prefix)
        A = len(alphabet)
        self.c = c = {(r, a): z3.Int(f"c[{r},{a}]") for r in range(p) for a in range(A)}
        self.m = m = z3.Int("m")  # the word's length
        self.N = N = z3.ToReal(m + P)  # n, the number of positions: >= 1
        self.ivar = ivar = z3.Int("i")  # the index of the generic position of a residue class
        self.sym = sym = {i: z3.Int(f"a@{i - P + 1}") for i in range(P, f)}
        self.last = last = P + m - 1  # the last position
        self.base = base = [m >= start, *(x >= 0 for x in c.values())]
        base += [z3.And(x >= 0, x < A) for x in sym.values()]
        for r in range(p):  # positions i in f..last with i ≡ r (mod p)
            n_r = (last - r) / p - (f - 1 - r) // p if p > 1 else last - f + 1  # z3 Int / is floor
            base.append(sum((c[(r, a)] for a in range(A)), z3.IntVal(0)) == n_r)
        # places: (index, residue or None, token, multiplicity); generic places have index ivar
        self.places = places = list[tuple[Any, int | None, str, Any]]()
        for i in range(f):
            if i < P:
                places.append((i, None, net.prefix[i], z3.IntVal(1)))
            else:
                places += [(i, None, alphabet[a], z3.If(sym[i] == a, 1, 0)) for a in range(A)]
        places += [(ivar, r, alphabet[a], c[(r, a)]) for r in range(p) for a in range(A)]
        self.rows = list[dict[str, Val]]()
        for index, res, tok, _mult in places:
            row: dict[str, Val] = {d: (z3.RealVal(0), ()) for d in net.dims}
            for d, v in net.table[tok]:
                row[d] = _sum(z3, [(z3.RealVal(1), row[d])], v)
            for d, name, k in net.positional:
                if name == "i/n":
                    val: Val = (z3.ToReal(z3.IntVal(index) if res is None else ivar), (N,))
                else:  # 1, cos(iπ), I[i=k]: the same at every position of the class
                    at = index if res is None else f + (res - f) % p
                    val = (z3.RealVal(feature(name, at, 1)), ())
                row[d] = _sum(z3, [(z3.RealVal(1), row[d]), (z3.RealVal(k), val)])
            self.rows.append(row)

    def word(self, model: Any) -> list[int]:
        """A word with the model's length, fixed symbols and counts per (residue, symbol)."""

        def val(t: Any) -> int:
            return int(model.eval(t, model_completion=True).as_long())

        left = {k: val(v) for k, v in self.c.items()}
        word = []
        for t in range(val(self.m)):
            i = self.P + t
            if i in self.sym:
                word.append(val(self.sym[i]))
            else:
                a = next((a for a in range(len(self.alphabet)) if left[(i % self.p, a)] > 0), 0)
                left[(i % self.p, a)] -= 1
                word.append(a)
        return word


def prove_every_length(net: Net, statement: str, lo: int, timeout_s: float = 60.0) -> str:
    """The rule of the module docstring: the detail of what was proved, or KernelError (a word
    the kernel's interpreter misclassifies, found from the query's model), or Refused."""
    import z3

    if statement not in SYMBOLIC or net.alphabet != ("0", "1"):
        raise Refused(f"no symbolic form of the language in the kernel: {statement[:60]!r}")
    f, p = _shape(net)
    P = len(net.prefix)
    if net.position != 0 or P == 0:
        raise Refused("a readout at a position other than the first prefix token")
    short = max(lo, 0), max(f - P - 1, lo - 1)
    member_of = language(statement, net.alphabet)
    for n in range(short[0], short[1] + 1):
        for w in itertools.product(net.alphabet, repeat=n):
            if (run(net, w) > 0) != member_of(w):
                raise KernelError(f"the network misclassifies {''.join(w)!r}")
    start = max(lo, f - P)
    q = _Query(z3, net, f, p, start, timeout_s)
    rows, lin, zero = q.rows, partial(_affine, z3), (z3.RealVal(0), ())

    def add(u: Val, v: Val) -> Val:
        return _sum(z3, [(z3.RealVal(1), u), (z3.RealVal(1), v)])

    for idx, sub in enumerate(net.layers):
        where = f"sublayer {idx} ({sub.block.name})"
        if sub.block.kind == "ffn":
            outs = [ffn(sub.block, r, where, lin, partial(_act, z3)) for r in rows]
        else:
            outs = [{} for _ in rows]
            for h in sub.block.heads:
                outs = _head(q, h, rows, outs, where)
            outs = [mix(sub.block, o, lin, zero) for o in outs]
        rows = [combine(sub, r, o, where, add, zero) for r, o in zip(rows, outs, strict=True)]
    logit = _affine(z3, net.logit, rows[0])[net.logit.outputs[0]][0]
    if _mentions(z3, logit, q.ivar):
        raise Refused("the logit still names the generic position (a sum the rule did not resolve)")

    def count(name: str) -> Any:  # a symbol's count over the positions >= f
        return sum((q.c[(r, net.alphabet.index(name))] for r in range(p)), z3.IntVal(0))

    member = SYMBOLIC[statement](z3, {i - P + 1: q.sym[i] for i in q.sym}, count)
    got, s = solve(z3, int(timeout_s * 1000), *q.base, (logit > 0) != member)
    if got == z3.sat:
        word = tuple(net.alphabet[a] for a in q.word(s.model()))
        shown = "".join(word)
        if (run(net, word) > 0) != member_of(word):
            raise KernelError(
                f"a word of length {len(word)} is misclassified: {shown!r} (position classes)"
            )
        raise Refused(
            f"undecided: the position-class query has a model, but its word {shown!r} is classified "
            "right (the selections over-approximate the sums)"
        )
    if got != z3.unsat:
        raise Refused(
            f"undecided: z3 says {got} on the position-class query ({s.reason_unknown()})"
        )
    sel = f", selections {', '.join(q.selections)}" if q.selections else ""
    return (
        f"proved for every length >= {lo}: "
        + (f"lengths {short[0]}..{short[1]} word by word, " if short[0] <= short[1] else "")
        + f"every length >= {start} by position classes (f={f}, period {p}{sel}), unsat"
    )


def _head(
    q: _Query, h: Any, rows: list[dict[str, Val]], outs: list[dict[str, Val]], where: str
) -> list[dict[str, Val]]:
    """One softmax head over every position, at every place (rule step 3 and the selections)."""
    z3, places, ivar, one = q.z3, q.places, q.ivar, q.z3.RealVal(1)
    qs, ks, vs = ([_affine(z3, a, r) for r in rows] for a in (h.query, h.key, h.value))
    generic = [j for j, pl in enumerate(places) if pl[1] is not None]
    selected: dict[str, tuple[Any, Any, Any]] = {}
    for o in h.value.outputs:
        if any(_mentions(z3, vs[j][o][0], ivar) for j in generic):
            selected[o] = _select(q, o, vs, generic, f"{where} head {h.name!r}")
            q.selections.append(f"{h.name}.{o}")
    new = []
    for x in range(len(rows)):
        dots = []  # the score ⟨q, k⟩ or −|⟨q, k⟩|, then scaled (as the interpreter does)
        for y in range(len(rows)):
            qk = [(qs[x][o][0] * ks[y][o][0], qs[x][o][1] + ks[y][o][1]) for o in h.query.outputs]
            dots.append(_constant(z3, _sum(z3, [(one, t) for t in qk]), where))
        scores = [h.coef * (-abs(d) if h.scoring == "neg_abs_dot" else d) for d in dots]
        if any(sc.denominator != 1 for sc in scores):
            raise Refused(f"{where}: a softmax weight {h.base}^(non-integer)")
        weights = [h.base ** int(sc) for sc in scores]
        same = len(set(weights)) == 1  # then Σ weight·mult = weight·n: divide by n
        weights = [Fraction(1)] * len(weights) if same else weights
        wm = [z3.RealVal(w) * z3.ToReal(places[y][3]) for y, w in enumerate(weights)]
        norm = q.N if same else z3.simplify(sum(wm, z3.RealVal(0)))
        out = dict(outs[x])
        for o in h.value.outputs:
            kept = [y for y in range(len(rows)) if not (o in selected and y in generic)]
            terms = [(wm[y], vs[y][o]) for y in kept]
            if o in selected:
                J, aJ, none = selected[o]
                for y in generic:
                    a = q.alphabet.index(places[y][2])
                    on = z3.And(z3.Not(none), J % q.p == places[y][1], aJ == a)
                    w = z3.If(on, z3.RealVal(weights[y]), z3.RealVal(0))
                    terms.append((w, (z3.substitute(vs[y][o][0], (ivar, J)), vs[y][o][1])))
            num, ds = _sum(z3, terms)
            out[o] = (num, (*ds, norm))
        new.append(out)
    return new


def _select(q: _Query, o: str, vs: list[dict[str, Val]], generic: list[int], where: str) -> Any:
    """Rule (selection): where the value o at word positions depends on the position's index,
    the kernel proves (one query) that at most one word position i >= f has a nonzero value o;
    then the sum over those positions is the term at one position J (its class, symbol a_J
    with c[class, a_J] >= 1), or 0 (``none``): the query ranges over every J, so it over-
    approximates the sum, which is sound for unsat. The new variables and their constraints
    join the query's."""
    z3, f, p, last, c, base = q.z3, q.f, q.p, q.last, q.c, q.base

    def v(y: int, at: Any) -> Any:  # place y's value o at position ``at``
        return z3.substitute(vs[y][o][0], (q.ivar, at))

    j1, j2 = z3.Ints(f"j1_{len(base)} j2_{len(base)}")
    pairs = []
    for y1, y2 in itertools.product(generic, repeat=2):
        (_, r1, _t1, m1), (_, r2, _t2, m2) = q.places[y1], q.places[y2]
        pairs.append(
            z3.And(j1 % p == r1, j2 % p == r2, m1 >= 1, m2 >= 1, v(y1, j1) != 0, v(y2, j2) != 0)
        )
    ms = int(q.timeout_s * 1000)
    got = solve(z3, ms, *base, j1 != j2, f <= j1, j1 <= last, f <= j2, j2 <= last, z3.Or(pairs))[0]
    if got != z3.unsat:
        raise Refused(
            f"{where}: value {o!r} depends on the position's index and is not shown nonzero at one word position at most (z3: {got})"
        )
    k = len(base)
    J, aJ, none, j = z3.Int(f"J{k}"), z3.Int(f"aJ{k}"), z3.Bool(f"none{k}"), z3.Int(f"j{k}")
    cls: list[tuple[int, Any, int]] = [  # place y, its residue r and symbol a
        (y, q.places[y][1], q.alphabet.index(q.places[y][2])) for y in generic
    ]

    def nonzero(y: int, r: int, a: int) -> Any:  # J of place y's class holds its symbol, v ≠ 0
        return z3.And(J % p == r, aJ == a, c[(r, a)] >= 1, v(y, J) != 0)

    some = z3.And(f <= J, J <= last, z3.Or([nonzero(*x) for x in cls]))
    # none: every word position j holds some symbol present in its class whose value o is 0
    zero_at = z3.Or([z3.And(j % p == r, c[(r, a)] >= 1, v(y, j) == 0) for y, r, a in cls])
    nothing = z3.ForAll([j], z3.Implies(z3.And(f <= j, j <= last), zero_at))
    base.append(z3.If(none, nothing, some))
    return J, aJ, none
