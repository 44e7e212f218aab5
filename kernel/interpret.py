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

import operator
from collections.abc import Callable
from fractions import Fraction
from math import isqrt, lcm
from typing import Any

from .netfile import MASKS, Affine, Block, Head, KernelError, Net, Refused, Sublayer, power

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


def dot(u: Any, v: Any) -> Any:
    """Σ_k u_k·v_k over two sequences of one length."""
    return sum((a * b for a, b in zip(u, v, strict=True)), ZERO)


def layernorm(eps: Fraction, over: tuple[str, ...] | None, x: Row, where: str) -> Row:
    """(x − mean) / √(var + eps) over ``over`` (every dim when None); the rest kept; Refused
    where the square root is not rational."""
    names = list(x) if over is None else list(over)
    mean = sum((x[k] for k in names), ZERO) / len(names)
    var = sum(((x[k] - mean) ** 2 for k in names), ZERO) / len(names) + eps
    if var == 0:
        raise Refused(f"{where}: layer norm of a constant vector with eps = 0 is undefined")
    a, b = isqrt(var.numerator), isqrt(var.denominator)
    if var < 0 or a * a != var.numerator or b * b != var.denominator:
        raise Refused(f"{where}: √({var}) is not rational; outside the kernel")
    root = Fraction(a, b)
    return {**x, **{k: (x[k] - mean) / root for k in names}}


def activation(kind: str, v: Fraction) -> Fraction:
    if kind == "relu":
        return max(v, ZERO)
    if kind == "step":
        return ONE if v > 0 else ZERO
    return min(max(v, ZERO), ONE)  # sigma: the clipped identity


def ffn(block: Block, x: Any, where: str, lin: Any = affine, act: Any = activation) -> Any:
    """The steps in order; the output is the last step's values (no steps: nothing written).
    ``lin`` and ``act``: the affine maps and activations of a rule's own domain of values (its
    symbolic rows), where a layer norm is refused."""
    if not block.steps:
        return {}
    for step in block.steps:
        if isinstance(step, Affine):
            x = lin(step, x)
        elif step[0] == "act":
            x = {k: act(step[1], v) for k, v in x.items()}
        elif lin is affine:
            x = layernorm(step[1], step[2], x, where)
        else:
            raise Refused(f"{where}: a layer norm")
    return x


TIES = ("average", "leftmost", "rightmost")


def visible(mask: str, i: int, n: int) -> range:
    """The keys query i sees: none → all, causal j ≤ i, strict_causal j < i, anticausal j ≥ i,
    strict_anticausal j > i."""
    return {
        "none": range(n),
        "causal": range(i + 1),
        "strict_causal": range(i),
        "anticausal": range(i, n),
        "strict_anticausal": range(i + 1, n),
    }[mask]  # the reader reads no other mask


def weights(
    h: Head, q: Row, ks: Any, keys: list[int], i: int, n: int, where: str
) -> dict[int, Fraction]:
    """Head h's weight on each key j of ``keys`` (key rows ``ks[j]``) for the query row ``q`` at
    position i of n: none where ``keys`` is empty (Refused where the empty rule is ``error``)."""
    if not keys:
        if h.empty == "error":
            raise Refused(f"{where}: position {i} sees no key and the empty rule is 'error'")
        return {}
    dots = (sum((q[o] * ks[j][o] for o in h.query.outputs), ZERO) for j in keys)
    scores = [-abs(s) if h.scoring == "neg_abs_dot" else s for s in dots]
    if h.rel is not None:
        scores = [
            relative_logit(h, s, q, ks[j], j - i, n) for s, j in zip(scores, keys, strict=True)
        ]
    if h.hardmax:
        top = max(scores)
        best = [j for j, s in zip(keys, scores, strict=True) if s == top]
        best = {"leftmost": best[:1], "rightmost": best[-1:]}.get(h.tie, best)
        return {j: Fraction(1, len(best)) for j in best}
    assert h.base is not None
    k = h.coef * (n if h.times_n else 1) if h.rel is None else 1  # rel: scaled already
    top = max(k * s for s in scores)
    raw = [power(h.base, k * s - top, f"{where}: softmax") for s in scores]
    total = sum(raw, ZERO)
    return {j: w / total for j, w in zip(keys, raw, strict=True)}


def head(h: Head, rows: list[Row], where: str) -> list[Row]:
    """One head at every position (see the module docstring)."""
    n = len(rows)
    qs, ks, vs = ([affine(a, r) for r in rows] for a in (h.query, h.key, h.value))
    out: list[Row] = []
    for i in range(n):
        w = weights(h, qs[i], ks, list(visible(h.mask, i, n)), i, n, where)
        out.append({o: sum((c * vs[j][o] for j, c in w.items()), ZERO) for o in h.value.outputs})
    return out


def mix(block: Block, part: Any, lin: Any = affine, zero: Any = ZERO) -> Any:
    """An attention layer's output: its output map of its heads' outputs (each head's outputs
    0 where it wrote none), or those outputs where it has no output map. ``lin`` and ``zero``:
    the affine maps and the 0 of a rule's own domain of values."""
    if block.output is None:
        return part
    return lin(block.output, {o: zero for h in block.heads for o in h.value.outputs} | part)


def combine(
    sub: Sublayer, x: Any, out: Any, where: str, add: Any = operator.add, zero: Any = ZERO
) -> Any:
    """A sublayer's output ``out`` added to the row x (residual) or in its place, then the post
    layer norm; ``add`` and ``zero``: the sum and the 0 of a rule's own domain of values."""
    if sub.residual and (bad := [d for d in out if d not in x]):
        raise KernelError(f"{where} writes {bad[0]!r}, which is not a dim")
    if sub.residual:
        y = {d: add(v, out[d]) if d in out else v for d, v in x.items()}
    else:
        y = {d: out.get(d, zero) for d in x}
    return y if sub.post_ln is None else layernorm(*sub.post_ln, y, where + " post layer norm")


def window(vals: Any, offset: int, rule: str) -> Any:
    """Entry j − i (``offset``) of a window of 2k+1 entries: beyond ±k None (rule ``zero``) or
    the nearest end (``clip``)."""
    k = len(vals) // 2
    if -k <= offset <= k:
        return vals[offset + k]
    return (vals[-1] if offset > k else vals[0]) if rule == "clip" else None


def relative_logit(h: Head, s: Fraction, qi: Row, kj: Row, offset: int, n: int) -> Fraction:
    """factor·(s + ⟨q_i, W^C_{j−i}⟩ + ⟨k_j, W^{C'}_{j−i}⟩) + β_{j−i} (factor = coef, times n)."""
    assert h.rel is not None
    beta, qconv, kconv = h.rel
    for win, vec in ((qconv, qi), (kconv, kj)):
        col = None if win is None else window(win[2], offset, win[1])
        if col is not None:
            if len(col) != len(h.query.outputs):
                raise KernelError(f"head {h.name!r}: a relative kernel column is not q/k-wide")
            s += sum((w * vec[o] for o, w in zip(h.query.outputs, col, strict=True)), ZERO)
    b = None if beta is None else window(beta[2], offset, beta[1])
    return h.coef * (n if h.times_n else 1) * s + (ZERO if b is None else b)


def embed(net: Net, tok: str, t: int, n: int) -> Row:
    """Token ``tok``'s row at position t of n: its table row plus each positional feature's
    coefficient times the feature's value at (index_base + t, n)."""
    row = dict.fromkeys(net.dims, ZERO)
    for d, v in net.table[tok]:
        row[d] += v
    for d, f, c in net.positional:
        row[d] += c * feature(f, net.index_base + t, n)
    return row


def numbered(net: Net, stem: str) -> list[int]:
    """The indices of the sublayers named ``stem``1, ``stem``2, … (consecutive from 1)."""
    names, found = [sub.block.name for sub in net.layers], list[int]()
    while f"{stem}{len(found) + 1}" in names:
        found.append(names.index(f"{stem}{len(found) + 1}"))
    return found


def _plan(net: Net, n: int) -> tuple[int, int]:
    """The readout's position among n tokens and the last sublayer that mixes positions (an
    attention layer or a convolution; -1 where there is none)."""
    readout = net.position if net.position >= 0 else n + net.position
    if not 0 <= readout < n:
        raise KernelError(f"readout position {net.position} is outside the {n} tokens")
    return readout, max((i for i, s in enumerate(net.layers) if s.block.kind != "ffn"), default=-1)


def run(net: Net, word: tuple[str, ...]) -> Fraction:
    """The readout logit of ``net`` on ``word`` (accepted iff > 0)."""
    rows, readout = forward(net, word)
    return affine(net.logit, rows[readout])[net.logit.outputs[0]]


def forward(
    net: Net, word: tuple[str, ...], every_position: bool = False, stop: int | None = None
) -> tuple[list[Row], int]:
    """The final rows of ``net`` on ``word`` (with ``stop``: the rows after sublayer ``stop``,
    every position computed) and the readout's position: after the last attention layer only
    the readout's row is computed, unless ``every_position``."""
    tokens = (*net.prefix, *word, *net.suffix)
    if net.flat:  # a flat embedding: one position, dim stem+i holding values[w_i], the rest 0
        xs = {f"{net.flat[0]}{i}": net.table[s][0][1] for i, s in enumerate(word, start=1)}
        if len(word) != net.flat[1] or not xs.keys() <= set(net.dims):
            raise KernelError(f"a flat network of words of {net.flat[1]} symbols, or with no x_i")
        rows = [{d: xs.get(d, ZERO) for d in net.dims}]
    else:
        rows = [embed(net, tok, t, len(tokens)) for t, tok in enumerate(tokens)]
    n = len(rows)
    readout, last_attention = _plan(net, n)
    for idx, sub in enumerate(net.layers):
        if stop is not None and idx > stop:
            break
        where = f"sublayer {idx} ({sub.block.name})"
        late = idx > last_attention and not every_position and stop is None
        live = [readout] if late else range(n)
        if sub.block.kind == "attention":
            parts: list[Row] = [{} for _ in range(n)]
            for h in sub.block.heads:
                for t, part in enumerate(head(h, rows, f"{where} head {h.name}")):
                    parts[t].update(part)
            parts = [mix(sub.block, p) for p in parts]
        elif sub.block.kind == "conv":
            ins, outs, kernels = sub.block.steps[:3]  # y_i = Σ_{|j−i|≤k} w_{j−i}·x_j per channel
            k = len(kernels[0]) // 2
            parts = [{} for _ in range(n)]
            for c, (x, y) in enumerate(zip(ins, outs, strict=True)):
                w = kernels[c % len(kernels)]
                for i in range(n):
                    near = range(max(0, i - k), min(n, i + k + 1))
                    parts[i][y] = sum((w[j - i + k] * rows[j][x] for j in near), ZERO)
        else:
            parts = [ffn(sub.block, rows[t], where) if t in live else {} for t in range(n)]
        for t in live:
            rows[t] = combine(sub, rows[t], parts[t], where)
    return rows, readout


# ---------------------------------------------------------------- the fast path: integers, one length


class _Lin:
    """An affine map over one denominator: y = (b·D + W·X) / (D·den) for X over D."""

    def __init__(self, a: Affine, index: dict[str, int]) -> None:
        coeffs = [w for row in a.weights.values() for w in row.values()] + list(a.bias.values())
        self.den = lcm(*(c.denominator for c in coeffs))
        try:
            self.rows = [
                (
                    int(a.bias.get(o, ZERO) * self.den),
                    [(index[i], int(w * self.den)) for i, w in a.weights[o].items() if w],
                )
                for o in a.outputs
            ]
        except KeyError as exc:
            raise KernelError(
                f"an affine map reads {exc}, which is not written before it"
            ) from None
        self.outputs = a.outputs

    def __call__(self, x: tuple[int, ...], d: int) -> tuple[int, ...]:
        return tuple(b * d + sum(w * x[i] for i, w in terms) for b, terms in self.rows)


class Exhaustive:
    """:func:`run` on every word of one length, in integers: the same semantics, faster.

    Every value at one point of the network (a sublayer's input, a head's query, …) is held as
    an integer numerator over one denominator that depends only on that point and the length,
    never on the word: an affine map multiplies it by the lcm of its coefficients' denominators,
    a hardmax average over c maximizers by lcm(1..n) (the sum times lcm(1..n)/c), a residual sum
    takes the lcm of its two sides'. Comparisons (ReLU, step, σ's clip, argmax) are then
    comparisons of integers over one positive denominator, and the logit is the exact rational
    numerator/denominator, equal to :func:`run`'s (``tests/kernel/test_kernel_exhaustive.py``).
    Position-wise blocks are memoized by their input row (a function of the row alone). After
    the last attention layer only the readout's position is computed, unless ``every_position``
    (then ``rows`` holds every position's final row, for trace properties); ``kept`` holds the
    rows after the sublayers in ``keep``.
    Softmax attention and layer norms are not on this path: :func:`evaluator` falls back to
    :func:`run` for such networks.
    """

    def __init__(
        self, net: Net, length: int, every_position: bool = False, keep: tuple[int, ...] = ()
    ) -> None:
        if net.flat:
            raise Refused("a flat embedding (the fast path has none)")
        self.net, self.keep = net, keep
        self.tied: tuple[str, int] | None = None
        self.maxima: dict[tuple[int, str], list[tuple[int, ...]]] | None = None  # see _head
        self.at = 0  # the sublayer _head is run for
        self.kept: dict[int, list[tuple[int, ...]]] = {}  # sublayer -> its rows (over steps[k][-1])
        idx = {d: k for k, d in enumerate(net.dims)}
        self.n = n = len(net.prefix) + length + len(net.suffix)
        self.readout, last_attention = _plan(net, n)
        emb = {(t, tok): embed(net, tok, t, n).values() for t in range(n) for tok in net.table}
        d0 = lcm(*(v.denominator for row in emb.values() for v in row))
        self.emb = {key: tuple(int(v * d0) for v in row) for key, row in emb.items()}
        self.d0, d = d0, d0
        self.steps: list[tuple[Any, ...]] = []  # compiled sublayers, each with its denominators
        lcm_n = lcm(*range(1, n + 1))
        self.visible = {m: [visible(m, i, n) for i in range(n)] for m in MASKS}
        for k, sub in enumerate(net.layers):
            if sub.post_ln is not None:
                raise Refused("a layer norm (the fast path has none)")
            b = sub.block
            if b.kind == "conv":
                raise Refused("a convolution (the fast path has none)")
            if b.kind == "attention":
                heads: list[tuple[Any, ...]] = []
                for h in b.heads:
                    if not h.hardmax:
                        raise Refused("softmax attention (the fast path has none)")
                    if h.rel is not None:
                        raise Refused("relative positions (the fast path has none)")
                    lq, lk, lv = _Lin(h.query, idx), _Lin(h.key, idx), _Lin(h.value, idx)
                    avg = lcm_n if h.tie == "average" or k == last_attention else 1
                    heads.append((h, lq, lk, lv, avg, d * lv.den * avg, {}))
                dh = lcm(*(hd[5] for hd in heads))
                names = [o for h in b.heads for o in h.value.outputs]
                cols = {o: j for j, o in enumerate(names)}
                out = None if b.output is None else _Lin(b.output, cols)
                do, onames = (dh, names) if out is None else (dh * out.den, list(out.outputs))
                kind: tuple[Any, ...] = ("attention", heads, dh, out)
            else:
                ffn_steps: list[tuple[Any, ...]] = []
                cur, do = {name: j for j, name in enumerate(net.dims)}, d
                onames = [] if not b.steps else list(net.dims)
                for s in b.steps:
                    if isinstance(s, Affine):
                        lin = _Lin(s, cur)
                        ffn_steps.append(("lin", lin, do))
                        do, onames = do * lin.den, list(s.outputs)
                        cur = {name: j for j, name in enumerate(onames)}
                    elif s[0] == "act":
                        ffn_steps.append(("act", s[1], do))
                    else:
                        raise Refused("a layer norm (the fast path has none)")
                kind = ("ffn", ffn_steps, {})
            if any(o not in idx for o in onames):
                raise KernelError(f"sublayer {k} ({b.name}) writes a name that is not a dim")
            new = lcm(d, do) if sub.residual else do
            sx, so = (new // d if sub.residual else 0), new // do
            late = k > last_attention and not every_position
            self.steps.append((kind, sx, so, [idx[o] for o in onames], late, d, new))
            d = new
        self.logit_map, self.d = _Lin(net.logit, idx), d
        self.rows: list[tuple[int, ...]] = []  # the last word's rows (numerators over self.d)

    def _head(
        self, hd: tuple[Any, ...], rows: list[tuple[int, ...]], d: int, tie: str | None = None
    ) -> list[Any]:
        """The head's output at every position (with ``tie``: at the readout's position only, the
        others ``()``, under that tie rule)."""
        h, lq, lk, lv, avg, _, memo = hd
        rule = tie or h.tie
        tops: list[tuple[int, ...]] = []  # each position's maximizers, kept when maxima is set
        watch = self.maxima is not None and tie is None
        if watch:
            self.maxima[self.at, h.name] = tops  # type: ignore[index]
        neg, scalar = h.scoring == "neg_abs_dot", len(lq.outputs) == 1
        qkv = []
        for r in rows:  # the head's maps are position-wise: memoized by the row
            if r not in memo:
                q, k = lq(r, d), lk(r, d)
                memo[r] = (q[0], k[0], lv(r, d)) if scalar else (q, k, lv(r, d))
            qkv.append(memo[r])
        ks, vs = [x[1] for x in qkv], [x[2] for x in qkv]
        out: list[tuple[int, ...]] = []
        for i, keys in enumerate(self.visible[h.mask]):
            if tie is not None and i != self.readout:
                out.append(())
                continue
            if not keys:
                if h.empty == "error":
                    raise Refused(f"position {i} sees no key and the empty rule is 'error'")
                out.append((0,) * len(lv.outputs))
                if watch:
                    tops.append(())
                continue
            qi, a = qkv[i][0], keys.start
            if scalar:
                sc = [qi * k for k in ks[a : keys.stop]]
            else:
                sc = [sum(x * y for x, y in zip(qi, k, strict=True)) for k in ks[a : keys.stop]]
            if neg:
                sc = [-abs(x) for x in sc]
            top = max(sc)
            best = [a + j for j, x in enumerate(sc) if x == top]
            if watch:
                tops.append(tuple(best))
            if rule != "average" and self.tied is None and len(best) > 1:
                self.tied = (h.name, i)  # the tie rule decided: kept for the no-ties rule
            best = {"leftmost": best[:1], "rightmost": best[-1:]}.get(rule, best)
            vals = [vs[j] for j in best]
            v = vals[0] if len(best) == 1 else tuple(map(sum, zip(*vals, strict=True)))
            m = avg // len(best)
            out.append(v if m == 1 else tuple(m * x for x in v))
        return out

    def logit(self, word: tuple[str, ...]) -> Fraction:
        """:func:`run`'s logit on ``word`` (of this evaluator's length); ``tied`` is then the
        first (head, position) where a leftmost or rightmost head had more than one maximizer,
        or None."""
        self.tied = None
        return self._forward(self.embedded(word), 0)

    def embedded(self, word: tuple[str, ...]) -> list[tuple[int, ...]]:
        """The embedding's rows of ``word`` (numerators over ``d0``)."""
        toks = (*self.net.prefix, *word, *self.net.suffix)
        return [self.emb[t, tok] for t, tok in enumerate(toks)]

    def logits_by_tie(self, word: tuple[str, ...]) -> dict[str, Fraction]:
        """The logit on ``word`` with every head of the last attention layer given each tie rule
        (``average``, ``leftmost``, ``rightmost``) in turn, the layers before it shared."""
        last = max(k for k, s in enumerate(self.steps) if s[0][0] == "attention")
        if last - 1 not in self.keep:
            self.keep = (*self.keep, last - 1)
        self.logit(word)
        before = self.kept[last - 1] if last > 0 else self.embedded(word)
        return {tie: self._forward(before[:], last, tie) for tie in TIES}

    def _forward(self, rows: list[tuple[int, ...]], start: int, tie: str | None = None) -> Fraction:
        """The steps from ``start`` on ``rows`` (over that step's input denominator), in place;
        the logit. ``tie``: the tie rule of every head of step ``start`` instead of its own."""
        n, d = self.n, self.d0
        for step, (kind, sx, so, where, late, d, dnew) in enumerate(self.steps):
            if step < start:
                continue
            live = [self.readout] if late or tie is not None else range(n)
            parts: list[tuple[int, ...]] = [()] * n
            if kind[0] == "attention":
                _, heads, dh, out = kind
                self.at = step
                for hd in heads:
                    m = dh // hd[5]
                    got = self._head(hd, rows, d, tie if step == start else None)
                    parts = [p + tuple(m * v for v in g) for p, g in zip(parts, got, strict=True)]
                if out is not None:
                    parts = [out(p, dh) if t in live else () for t, p in enumerate(parts)]
            else:
                memo = kind[2]
                for t in live:
                    if rows[t] not in memo:
                        memo[rows[t]] = _ffn(kind[1], rows[t])
                    parts[t] = memo[rows[t]]
            for t in live:
                x = list(rows[t]) if sx == 1 else [v * sx for v in rows[t]]
                if so == 1:
                    for k, v in zip(where, parts[t], strict=True):
                        x[k] += v
                else:
                    for k, v in zip(where, parts[t], strict=True):
                        x[k] += v * so
                rows[t] = tuple(x)
            if step in self.keep:
                self.kept[step] = rows[:]
            d = dnew
        self.rows = rows
        return Fraction(self.logit_map(rows[self.readout], d)[0], d * self.logit_map.den)


def _ffn(steps: list[tuple[Any, ...]], x: tuple[int, ...]) -> tuple[int, ...]:
    """An FFN's steps on integers (each step's input denominator compiled beside it)."""
    for kind, f, d in steps:
        if kind == "lin":
            x = f(x, d)
        elif f == "relu":
            x = tuple(v if v > 0 else 0 for v in x)
        elif f == "step":
            x = tuple(d if v > 0 else 0 for v in x)
        else:  # sigma: clip to [0, 1], i.e. to [0, d] over d
            x = tuple(min(max(v, 0), d) for v in x)
    return x


def solve(z3: Any, timeout_ms: int, *constraints: Any) -> tuple[Any, Any]:
    """z3's answer on ``constraints`` within ``timeout_ms`` in all, and the last solver, for its
    model or its reason_unknown: the rules' solver queries.

    z3's time on the rules' nonlinear queries is heavy-tailed in its random seed (PARITY's
    class query: 0.2 s to 46 s), so fresh solvers with seeds 1, 2, ... run for slices of 1, 2,
    4, ... seconds, until one answers sat or unsat, or unknown for a reason other than its
    slice, or the time is spent (the last slice gets what is left). A query that needs one long
    run, as the type symmetry's invariance queries at k = 128 do, gets it having spent at most
    as long again on the slices before. Every try solves the same constraints, so any answer is
    the query's: restarts change only the time."""
    spent, i = 0, 1
    while True:
        s = z3.Then("simplify", "elim-term-ite", "smt").solver()
        s.set("random_seed", i)
        ms = min(1000 << (i - 1), timeout_ms - spent)
        s.set("timeout", ms)
        s.add(*constraints)
        got = s.check()
        spent, i = spent + ms, i + 1
        if spent >= timeout_ms or got != z3.unknown or s.reason_unknown() not in _SLICE_ENDED:
            return got, s


_SLICE_ENDED = ("timeout", "canceled")


def evaluator(net: Net) -> Callable[[tuple[str, ...]], Fraction]:
    """``word -> run(net, word)``: by :class:`Exhaustive` (one per length, built when first
    needed) where the network is on its path, else by :func:`run` itself."""
    fast: dict[int, Exhaustive | None] = {}

    def logit(word: tuple[str, ...]) -> Fraction:
        if len(word) not in fast:
            try:
                fast[len(word)] = Exhaustive(net, len(word))
            except Refused:
                fast[len(word)] = None
        ev = fast[len(word)]
        return run(net, word) if ev is None else ev.logit(word)

    return logit
