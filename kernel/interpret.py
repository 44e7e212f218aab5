"""The kernel's exact interpreter: a network file's network run on one word in rationals.

Semantics (netproof's network file format, docs/semantics.md), each rule stated where it is
applied: tokens are prefix + word + suffix, ``n`` their number; an embedding row is the token's
table row plus each positional feature's coefficient times its exact value at (i, n); a
sublayer adds its block's output to the residual stream (or replaces it) and may end with a
layer norm; an attention head scores query i against key j by ⟨q_i, k_j⟩ (or −|⟨q_i, k_j⟩|)
over the keys its mask lets it see, then hardmax (the maximal scores, averaged, or the leftmost
or rightmost of them) or a softmax with a rational base whose weights are rational; the readout
is the sign of an affine logit at one position (> 0 accepts). Only rationals: a square root
that is not rational, a softmax weight that is not, an activation other than ReLU, step and
σ (clip to [0, 1]) are refused with :class:`~.netfile.Refused`, never approximated.
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

from .netfile import Affine, Block, Head, KernelError, Net, Refused

Row = dict[str, Fraction]
ZERO, ONE = Fraction(0), Fraction(1)


def feature(name: str, i: int, n: int) -> Fraction:
    """The exact value of positional feature ``name`` at position i of n (the format's registry)."""
    if name.startswith("I[i=") and name[4:-1].isdigit() and name.endswith("]"):
        return Fraction(int(i == int(name[4:-1])))
    table = {
        "1": lambda: ONE,
        "i": lambda: Fraction(i),
        "n": lambda: Fraction(n),
        "i/n": lambda: Fraction(i, n),
        "1-i/n": lambda: 1 - Fraction(i, n),
        "1/n": lambda: Fraction(1, n),
        "1/i": lambda: Fraction(1, i),
        "1/i^2": lambda: Fraction(1, i * i),
        "cos(iπ)": lambda: Fraction((-1) ** i),
        "I[i=n-1]": lambda: Fraction(int(i == n - 1)),
        "1/2^i": lambda: Fraction(1, 2**i),
        "i+1": lambda: Fraction(i + 1),
    }
    if name not in table:
        raise Refused(f"positional feature {name!r} is outside the kernel")
    try:
        return table[name]()
    except ZeroDivisionError:
        raise Refused(f"positional feature {name!r} is undefined at i={i}") from None


def affine(a: Affine, x: Row) -> Row:
    """y_o = b_o + Σ_i W[o][i]·x_i."""
    try:
        return {
            o: a.bias.get(o, ZERO) + sum((w * x[i] for i, w in a.weights[o].items()), ZERO)
            for o in a.outputs
        }
    except KeyError as exc:
        raise KernelError(f"an affine map reads {exc}, which is not written before it") from None


def sqrt(v: Fraction, where: str) -> Fraction:
    """The exact square root of a non-negative rational, or Refused."""
    a, b = isqrt(v.numerator), isqrt(v.denominator)
    if v < 0 or a * a != v.numerator or b * b != v.denominator:
        raise Refused(f"{where}: √({v}) is not rational; outside the kernel")
    return Fraction(a, b)


def layernorm(eps: Fraction, over: tuple[str, ...] | None, x: Row, where: str) -> Row:
    """(x − mean) / √(var + eps) over ``over`` (every dim when None); the rest kept."""
    names = list(x) if over is None else list(over)
    mean = sum((x[k] for k in names), ZERO) / len(names)
    var = sum(((x[k] - mean) ** 2 for k in names), ZERO) / len(names) + eps
    if var == 0:
        raise Refused(f"{where}: layer norm of a constant vector with eps = 0 is undefined")
    root = sqrt(var, where)
    return {**x, **{k: (x[k] - mean) / root for k in names}}


def activation(kind: str, v: Fraction) -> Fraction:
    if kind == "relu":
        return max(v, ZERO)
    if kind == "step":
        return ONE if v > 0 else ZERO
    return min(max(v, ZERO), ONE)  # sigma: the clipped identity


def ffn(block: Block, x: Row, where: str) -> Row:
    """The steps in order; the output is the last step's values (no steps: nothing written)."""
    if not block.steps:
        return {}
    for step in block.steps:
        if isinstance(step, Affine):
            x = affine(step, x)
        elif step[0] == "act":
            x = {k: activation(step[1], v) for k, v in x.items()}
        else:
            x = layernorm(step[1], step[2], x, where)
    return x


def visible(mask: str, i: int, n: int) -> range:
    """The keys query i sees: none → all, causal j ≤ i, strict_causal j < i, anticausal j ≥ i,
    strict_anticausal j > i."""
    ranges = {
        "none": range(n),
        "causal": range(i + 1),
        "strict_causal": range(i),
        "anticausal": range(i, n),
        "strict_anticausal": range(i + 1, n),
    }
    if mask not in ranges:
        raise KernelError(f"unknown mask {mask!r}")
    return ranges[mask]


def head(h: Head, rows: list[Row], where: str) -> list[Row]:
    """One head at every position (see the module docstring)."""
    n = len(rows)
    qs, ks, vs = (
        [affine(h.query, r) for r in rows],
        [affine(h.key, r) for r in rows],
        [affine(h.value, r) for r in rows],
    )
    out: list[Row] = []
    for i in range(n):
        keys = list(visible(h.mask, i, n))
        if not keys:
            if h.empty == "error":
                raise Refused(f"{where}: position {i} sees no key and the empty rule is 'error'")
            out.append(dict.fromkeys(h.value.outputs, ZERO))
            continue
        scores = []
        for j in keys:
            s = sum((qs[i][o] * ks[j][o] for o in h.query.outputs), ZERO)
            scores.append(-abs(s) if h.scoring == "neg_abs_dot" else s)
        if h.hardmax:
            top = max(scores)
            best = [j for j, s in zip(keys, scores, strict=True) if s == top]
            if h.tie == "leftmost":
                best = best[:1]
            elif h.tie == "rightmost":
                best = best[-1:]
            weights = {j: Fraction(1, len(best)) for j in best}
        else:
            assert h.base is not None
            k = h.coef * (n if h.times_n else 1)
            top = max(k * s for s in scores)
            raw = {}
            for j, s in zip(keys, scores, strict=True):
                e = k * s - top
                if e.denominator != 1:
                    raise Refused(f"{where}: softmax weight {h.base}^({e}) is outside the kernel")
                raw[j] = h.base ** int(e)
            total = sum(raw.values(), ZERO)
            weights = {j: w / total for j, w in raw.items()}
        out.append(
            {o: sum((w * vs[j][o] for j, w in weights.items()), ZERO) for o in h.value.outputs}
        )
    return out


def run(net: Net, word: tuple[str, ...]) -> Fraction:
    """The readout logit of ``net`` on ``word`` (accepted iff > 0)."""
    tokens = (*net.prefix, *word, *net.suffix)
    n = len(tokens)
    rows: list[Row] = []
    for t, tok in enumerate(tokens):
        row = dict.fromkeys(net.dims, ZERO)
        for d, v in net.table[tok]:
            row[d] += v
        for d, f, c in net.positional:
            row[d] += c * feature(f, net.index_base + t, n)
        rows.append(row)
    readout = net.position if net.position >= 0 else n + net.position
    if not 0 <= readout < n:
        raise KernelError(f"readout position {net.position} is outside the {n} tokens")
    last_attention = max(
        (i for i, s in enumerate(net.layers) if s.block.kind == "attention"), default=-1
    )
    for idx, sub in enumerate(net.layers):
        where = f"sublayer {idx} ({sub.block.name})"
        live = range(n) if idx <= last_attention else [readout]  # later: position-wise, one read
        if sub.block.kind == "attention":
            parts: list[Row] = [{} for _ in range(n)]
            for h in sub.block.heads:
                for t, part in enumerate(head(h, rows, f"{where} head {h.name}")):
                    parts[t].update(part)
            if sub.block.output is not None:
                full = {o: ZERO for h in sub.block.heads for o in h.value.outputs}
                parts = [affine(sub.block.output, {**full, **p}) for p in parts]
        else:
            parts = [ffn(sub.block, rows[t], where) if t in live else {} for t in range(n)]
        for t in live:
            r, o = rows[t], parts[t]
            if sub.residual:
                x = dict(r)
                for d, v in o.items():
                    if d not in x:
                        raise KernelError(f"{where} writes {d!r}, which is not a dim")
                    x[d] += v
            else:
                x = {d: o.get(d, ZERO) for d in r}
            if sub.post_ln is not None:
                x = layernorm(sub.post_ln[0], sub.post_ln[1], x, where + " post layer norm")
            rows[t] = x
    return affine(net.logit, rows[readout])[net.logit.outputs[0]]
