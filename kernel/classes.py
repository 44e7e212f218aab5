"""The kernel's rule for every length: position classes.

Rule (position classes). Let every positional feature of the network be one of ``1``,
``cos(iπ)`` and the indicators ``I[i=k]``, every attention head have mask ``none`` and a
softmax normalizer, and the network have no layer norm. Let ``f`` be one more than the largest
fixed position (an ``I[i=k]``'s k, or the last prefix token), and ``p`` the period of the
features (2 with ``cos(iπ)``, else 1). Call the class of a position its index if it is below
``f``, else its residue mod p. Then:

1. At the embedding, a position's row is a function of its class and token (the features are
   functions of the class; the table of the token).
2. If every row before a sublayer is a function of (class, token) and of the word's counts
   ``c[r][a]`` (how many positions of residue class r at or after f hold symbol a), so is every
   row after it: an FFN is position-wise; a head's query and key are then functions of
   (class, token, counts), and a softmax over all positions (mask ``none``) is
   Σ_j b^(κ·s_ij)·v_j / Σ_j b^(κ·s_ij), where the positions below f contribute one term each
   and the others, grouped by (residue, symbol), contribute ``c[r][a]`` equal terms. The kernel
   requires each score κ·s_ij to be a rational constant (it does not depend on the counts), so
   each weight is a rational number and the sum is a rational function of the counts.
3. Hence the readout's logit is a rational function of the fixed positions' symbols and the
   counts, for every word of length m ≥ f − (prefix length) (its fixed positions all inside the
   word), and a word is accepted iff it is > 0.

So "no word of length ≥ f − P is misclassified" is the unsatisfiability, over non-negative
integer counts with Σ_a c[r][a] = the number of positions of residue r in f .. P+m−1 (for some
m), and over the symbols at the fixed positions, of "accepted ≠ member", where membership is the
kernel's own symbolic form of the language on the same data (:data:`SYMBOLIC`). The shorter
words are checked one by one by the exact interpreter. Both together: every word of every length.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .interpret import run
from .languages import language
from .netfile import Affine, KernelError, Net, Refused

CLASS_FEATURES = ("1", "cos(iπ)")

# The kernel's symbolic form of the languages the rule covers: (fixed symbols by word position
# 1.., count of symbol a over the other positions) -> z3 Bool.
Symbolic = Callable[[Any, dict[int, Any], Callable[[str], Any]], Any]
SYMBOLIC: dict[str, Symbolic] = {
    "accepts exactly the words of PARITY (words over {0,1} with an odd number of 1s)": lambda z3, fixed, count: (
        (sum((z3.If(s == 1, 1, 0) for s in fixed.values()), z3.IntVal(0)) + count("1")) % 2 == 1
    ),
    "accepts exactly the words of FIRST (words over {0,1} whose first symbol is 1)": lambda z3, fixed, count: (
        fixed[1] == 1
    ),
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
    for sub in net.layers:
        if sub.post_ln is not None or any(
            not isinstance(s, Affine) and s[0] == "ln" for s in sub.block.steps
        ):
            raise Refused("a layer norm (its √ is not a rational function of the counts)")
        for h in sub.block.heads:
            if h.mask != "none" or h.hardmax or h.times_n:
                raise Refused(f"head {h.name!r}: only softmax heads with mask none and no n scale")
    return f, p


def _feature(name: str, cls: tuple[str, int]) -> Fraction:
    kind, v = cls
    if name == "1":
        return Fraction(1)
    if name == "cos(iπ)":
        return Fraction((-1) ** v)  # fixed: v is the index; else the residue mod 2: same parity
    return Fraction(int(kind == "fixed" and v == int(name[4:-1])))


def _affine(z3: Any, a: Affine, x: dict[str, Any]) -> dict[str, Any]:
    return {
        o: z3.simplify(
            sum((w * x[i] for i, w in a.weights[o].items()), z3.RealVal(a.bias.get(o, 0)))
        )
        for o in a.outputs
    }


def _act(z3: Any, kind: str, v: Any) -> Any:
    if kind == "relu":
        return z3.If(v > 0, v, 0)
    if kind == "step":
        return z3.If(v > 0, z3.RealVal(1), z3.RealVal(0))
    return z3.If(v < 0, z3.RealVal(0), z3.If(v > 1, z3.RealVal(1), v))


def _constant(z3: Any, t: Any, where: str) -> Fraction:
    t = z3.simplify(t)
    if not z3.is_rational_value(t):
        raise Refused(f"{where}: a score that depends on the word's counts")
    return Fraction(t.numerator_as_long(), t.denominator_as_long())


def prove_every_length(net: Net, statement: str, lo: int, timeout_s: float = 60.0) -> str:
    """The rule of the module docstring: the detail of what was proved, or KernelError (a word
    is misclassified: the counts of one), or Refused."""
    import z3

    if statement not in SYMBOLIC or net.alphabet != ("0", "1"):
        raise Refused(f"no symbolic form of the language in the kernel: {statement[:60]!r}")
    f, p = _shape(net)
    P = len(net.prefix)
    short = max(lo, 0), max(f - P - 1, lo - 1)
    member_of = language(statement, net.alphabet)
    for n in range(short[0], short[1] + 1):
        for w in itertools.product(net.alphabet, repeat=n):
            if (run(net, w) > 0) != member_of(w):
                raise KernelError(f"the network misclassifies {''.join(w)!r}")
    alphabet = net.alphabet
    ctx_counts = {(r, a): z3.Int(f"c[{r},{a}]") for r in range(p) for a in range(len(alphabet))}
    m = z3.Int("m")  # the word's length
    fixed_word = range(P, f)  # fixed positions inside the word
    sym = {i: z3.Int(f"a@{i - P + 1}") for i in fixed_word}
    # rows per class: fixed (index i, token) and residue (r, symbol a), as z3 terms
    classes: list[
        tuple[tuple[str, int], Any, Any]
    ] = []  # (class, token index or term, multiplicity)
    for i in range(f):
        if i < P:
            classes.append((("fixed", i), net.prefix[i], z3.IntVal(1)))
        else:
            for a in range(len(alphabet)):
                classes.append((("fixed", i), alphabet[a], z3.If(sym[i] == a, 1, 0)))
    for r in range(p):
        for a in range(len(alphabet)):
            classes.append((("res", r), alphabet[a], ctx_counts[(r, a)]))
    rows = []
    for cls, tok, _mult in classes:
        row = {d: z3.RealVal(0) for d in net.dims}
        for d, v in net.table[tok]:
            row[d] = row[d] + z3.RealVal(v)
        for d, name, c in net.positional:
            row[d] = row[d] + z3.RealVal(c * _feature(name, cls))
        rows.append(row)
    for idx, sub in enumerate(net.layers):
        where = f"sublayer {idx} ({sub.block.name})"
        if sub.block.kind == "ffn":
            outs: list[dict[str, Any]] = []
            for row in rows:
                x = dict(row)
                if not sub.block.steps:
                    outs.append({})
                    continue
                for s in sub.block.steps:
                    x = (
                        _affine(z3, s, x)
                        if isinstance(s, Affine)
                        else {k: _act(z3, s[1], v) for k, v in x.items()}
                    )
                outs.append(x)
        else:
            outs = [{} for _ in rows]
            for h in sub.block.heads:
                qs = [_affine(z3, h.query, r) for r in rows]
                ks = [_affine(z3, h.key, r) for r in rows]
                vs = [_affine(z3, h.value, r) for r in rows]
                for i in range(len(rows)):
                    dots = [
                        _constant(
                            z3,
                            sum((qs[i][o] * ks[j][o] for o in h.query.outputs), z3.RealVal(0)),
                            where,
                        )
                        for j in range(len(rows))
                    ]  # the score ⟨q, k⟩ or −|⟨q, k⟩|, then scaled (as the interpreter does)
                    neg = h.scoring == "neg_abs_dot"
                    scores = [h.coef * (-abs(d) if neg else d) for d in dots]
                    if any(s.denominator != 1 for s in scores):
                        raise Refused(f"{where}: a softmax weight {h.base}^(non-integer)")
                    assert h.base is not None
                    weights = [
                        z3.RealVal(h.base ** int(s)) * classes[j][2] for j, s in enumerate(scores)
                    ]
                    total = sum(weights, z3.RealVal(0))
                    for o in h.value.outputs:
                        outs[i][o] = (
                            sum((weights[j] * vs[j][o] for j in range(len(rows))), z3.RealVal(0))
                            / total
                        )
            if sub.block.output is not None:
                full = {o: z3.RealVal(0) for h in sub.block.heads for o in h.value.outputs}
                outs = [_affine(z3, sub.block.output, {**full, **o}) for o in outs]
        new = []
        for row, out in zip(rows, outs, strict=True):
            x = dict(row) if sub.residual else {d: z3.RealVal(0) for d in row}
            for d, v in out.items():
                x[d] = x[d] + v
            new.append(x)
        rows = new
    if net.position != 0 or P == 0:
        raise Refused("a readout at a position other than the first prefix token")
    logit = _affine(z3, net.logit, rows[0])[net.logit.outputs[0]]
    s = z3.Solver()
    s.set("timeout", int(timeout_s * 1000))
    start = max(lo, f - P)
    s.add(m >= start)
    for i in fixed_word:
        s.add(sym[i] >= 0, sym[i] < len(alphabet))
    last = P + m - 1  # the last position
    for r in range(p):
        # positions i in f..last with i ≡ r (mod p)
        n_r = (last - r) / p - (f - 1 - r) // p if p > 1 else last - f + 1  # z3 Int / is floor
        s.add(sum((ctx_counts[(r, a)] for a in range(len(alphabet))), z3.IntVal(0)) == n_r)
        for a in range(len(alphabet)):
            s.add(ctx_counts[(r, a)] >= 0)
    count = lambda sym_name: sum(  # noqa: E731
        (ctx_counts[(r, alphabet.index(sym_name))] for r in range(p)), z3.IntVal(0)
    )
    member = SYMBOLIC[statement](z3, {i - P + 1: sym[i] for i in fixed_word}, count)
    s.add((logit > 0) != member)
    got = s.check()
    if got == z3.sat:
        raise KernelError(
            f"a word of length {s.model()[m]} is misclassified (position classes: {s.model()})"
        )
    if got != z3.unsat:
        raise Refused(
            f"undecided: z3 says {got} on the position-class query ({s.reason_unknown()})"
        )
    return (
        f"proved for every length >= {lo}: lengths {short[0]}..{short[1]} word by word, "
        f"every length >= {start} by position classes (f={f}, period {p}), unsat"
    )
