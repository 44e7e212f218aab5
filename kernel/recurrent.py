"""The kernel's reader and step interpreter of recurrent network files (``format:
netproof-recurrent``, version 1; ``symbolic/recurrent_netfile.py`` documents it) and its rule
for their ``PredictsNext`` records: Suzgun et al. 2019's Stack-RNN (§3.1), Stack-LSTM (§3.2)
and Baby-NTM (§3.3) with the exact replacements σ(x) = min(1, max(0, x)) for tanh and the
logistic σ, and hardmax for softmax. Anything else (tanh, a softmax decision) is refused, named.

The equations, as the kernel states them (h̃ the hidden state the step reads, x_t the symbol's
embedding row, ⊙ elementwise, a map without a bias where the paper writes none):

- Stack-RNN: h̃ = h_{t−1} + W_sh s_{t−1}(0); h_t = σ(W_ih x_t + b_ih + W_hh h̃ + b_hh);
  a_t = hardmax(W_a h_t) over (PUSH, POP); n_t = σ(W_n h_t);
  s_t(0) = a_t(PUSH) n_t + a_t(POP) s_{t−1}(1), s_t(i) = a_t(PUSH) s_{t−1}(i−1) + a_t(POP)
  s_{t−1}(i+1), an unbounded stack with zeros beyond its elements.
- Stack-LSTM: the same stack; i, f, o = σ(W_{i,f,o}[x_t, h̃] + b), g = σ(W_g[x_t, h̃] + b),
  c_t = f ⊙ c_{t−1} + i ⊙ g, h_t = o ⊙ σ(c_t) (c_0 = 0).
- Baby-NTM: h̃ = h_{t−1} + W_m 𝐌_{t−1}(0); h_t as the Stack-RNN's; 𝐌_t = Σ_op a_t(op)·OP·𝐌_{t−1}
  with each OP the file's N × N matrix on the slot index, then 𝐌_t(0) += n_t at every step.
- The readout: y_t = σ(W_y h_t); symbol s is predicted next iff y_t[y:s] > the threshold.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

from .interpret import ONE, TIES, ZERO, affine
from .languages import brackets, still_open
from .netfile import Affine, KernelError, Refused, q, read_affine, sweep

FORMAT = "netproof-recurrent"
MAPS = {"stack-rnn": "ih hh sh", "stack-lstm": "i f o g sh", "baby-ntm": "ih hh m"}  # W_<name>
GATES = ("W_i", "W_f", "W_o", "W_g")
SHAPE = {"W_ih": "ih", "W_hh": "hh", "W_sh": "eh0", "W_m": "eh0", "W_a": "ho0", "W_n": "he0"}
SHAPE |= {"W_y": "hy0", **dict.fromkeys(GATES, "Ih")}
# what each map reads and writes (i: x_t, h: h̃ or h_t, I: [x_t, h̃], e: an element, o: the ops'
# scores, y: the readout), 0 where the paper writes it without a bias


class RNet:
    """A recurrent network file as the kernel reads it, every map checked to read and write
    what its equation does (``SHAPE``)."""

    def __init__(self, doc: Any) -> None:
        net, self.fingerprint = doc["network"], doc["fingerprint"]
        cell, out = net["cell"], net["readout"]
        self.kind, self.alphabet = cell["kind"], tuple(net["alphabet"])
        if self.kind not in MAPS:
            raise Refused(f"a recurrent cell {self.kind!r} (the kernel reads {', '.join(MAPS)})")
        if (acts := (cell["activation"], cell["gate"], out["activation"])) != ("sigma",) * 3:
            raise Refused(f"activations {acts}: only σ is rational (tanh, logistic σ are not)")
        self.tie, self.ops = cell["decision"].get("tie"), tuple(o["name"] for o in cell["ops"])
        if cell["decision"]["type"] != "Hardmax" or self.tie not in TIES:
            raise Refused(f"the decision {cell['decision']} (only hardmax is rational)")
        names = [f"W_{m}" for m in MAPS[self.kind].split()] + ["W_a", "W_n"]
        self.maps = {m: read_affine(cell["maps"][m], f"cell.maps.{m}") for m in names}
        self.maps["W_y"] = self.y = read_affine(out["W_y"], "readout.W_y")
        self.theta, self.symbols = q(out["threshold"], "readout.threshold"), tuple(out["symbols"])
        self.x = {s: {d: q(v, "embedding") for d, v in row} for s, row in net["embedding"]}
        self.h0 = {d: q(v, "initial") for d, v in net["initial"]}
        i, h, e = (tuple(cell[f]) for f in ("inputs", "hidden", "element"))
        ys = tuple(f"y:{s}" for s in self.symbols)
        g = {"i": i, "h": h, "e": e, "I": i + h, "o": self.ops, "y": ys}
        for m, a in self.maps.items():
            bias = SHAPE[m][2:] and any(a.bias.values())
            if bias or not set(a.inputs) <= set(g[SHAPE[m][0]]) or a.outputs != g[SHAPE[m][1]]:
                raise KernelError(f"{m} reads {a.inputs}, writes {a.outputs}, bias {a.bias}")
        stack = self.kind != "baby-ntm"
        if (stack and self.ops != ("PUSH", "POP")) or len({*i, *h, *e}) < len(i + h + e):
            raise KernelError(f"a stack's ops {self.ops}, or inputs, hidden, element overlap")
        if not {d for r in self.x.values() for d in r} <= set(i) or not set(self.h0) <= set(h):
            raise KernelError("the embedding writes a non-input, or h_0 a non-hidden unit")
        slots, self.moves = 0 if stack else cell["slots"], list[Any]()
        for op in cell["ops"]:  # per op: source slot j -> [(target slot r, weight v)]
            moves: dict[int, list[tuple[int, Fraction]]] = {}
            for r, j, v in op["entries"]:
                if {type(r), type(j)} != {int} or not 0 <= min(r, j) <= max(r, j) < slots:
                    raise KernelError(f"op {op['name']}: entry ({r}, {j}) is not in {slots} slots")
                moves.setdefault(j, []).append((r, q(v, f"cell.ops.{op['name']}")))
            self.moves.append(moves.get)
        if stack:  # PUSH moves slot j to j + 1, POP moves j to j − 1 (the top is lost)
            self.moves = [lambda j: [(j + 1, ONE)], lambda j: [(j - 1, ONE)] if j else []]


def _map(a: Affine, v: dict[str, Fraction]) -> dict[str, Fraction]:
    """The affine map a on v, an input v leaves out read as 0 (the interpreter's map)."""
    return affine(a, dict.fromkeys(a.inputs, ZERO) | v)


def _sigma(v: dict[str, Fraction]) -> dict[str, Fraction]:
    return {k: min(max(x, ZERO), ONE) for k, x in v.items()}


State = tuple[dict[str, Fraction], dict[str, Fraction], dict[int, dict[str, Fraction]]]


def step(net: RNet, state: State | None, symbol: str) -> tuple[State, dict[str, Fraction]]:
    """One step of the module docstring's equations from ``state`` (None: h_0, c_0 = 0, empty
    memory): the new state (h, c, the memory's nonzero slots, top or slot 0 first) and y_t."""
    h, c, mem = state or (net.h0, {}, {})
    W = net.maps
    top = _map(W["W_m" if net.kind == "baby-ntm" else "W_sh"], mem.get(0, {}))
    ht = {u: h.get(u, ZERO) + v for u, v in top.items()}
    if net.kind == "stack-lstm":
        z = {**net.x[symbol], **ht}
        i, f, o, g = (_sigma(_map(W[m], z)) for m in GATES)
        c = {u: f[u] * c.get(u, ZERO) + i[u] * g[u] for u in g}
        h = {u: o[u] * s for u, s in _sigma(c).items()}
    else:
        hh = _map(W["W_hh"], ht)
        h = _sigma({u: v + hh[u] for u, v in _map(W["W_ih"], net.x[symbol]).items()})
    scores = list(_map(W["W_a"], h).values())
    best = [k for k, s in enumerate(scores) if s == max(scores)]
    best = best[:1] if net.tie == "leftmost" else best[-1:] if net.tie == "rightmost" else best
    a = [Fraction(int(k in best), len(best)) for k in range(len(scores))]
    new: dict[int, dict[str, Fraction]] = {}
    for weight, moves in zip(a, net.moves, strict=True):
        for j, e in mem.items() if weight else ():
            for r, v in moves(j) or ():
                slot = new.setdefault(r, {})
                slot.update({d: slot.get(d, ZERO) + weight * v * x for d, x in e.items()})
    n, push = _sigma(_map(W["W_n"], h)), a[0] if net.kind != "baby-ntm" else ONE  # Baby: n adds
    new[0] = {d: new.get(0, {}).get(d, ZERO) + push * x for d, x in n.items()}
    return (h, c, {r: e for r, e in new.items() if any(e.values())}), _sigma(_map(net.y, h))


def target(task: str, w: tuple[str, ...]) -> frozenset[str]:
    """The kernel's own next-symbol sets (Suzgun et al. §4.1, §5): after a prefix of D_k (k
    bracket types, no end symbol), every opening bracket and the closer of the innermost open
    one; after a prefix of w#w^R or w#φ(w^R) (w ∈ {a,b,c}*, φ = a→x, b→y, c→z), {a, b, c, #}
    before the #, then the next symbol of the second half, then EOS; ∅ after a prefix that no
    word of the language extends."""
    if task[0] == "D":
        opens, stack = dict(brackets(int(task[1:]))), still_open(w, int(task[1:]))
        return frozenset() if stack is None else frozenset([*opens, *stack[-1:]])
    image = dict(zip("abc", "xyz" if "φ" in task else "abc", strict=True))
    k = w.index("#") if "#" in w else len(w)
    second = [image.get(a, "") for a in reversed(w[:k])]  # the second half, in order
    if not set(w[:k]) <= set("abc") or tuple(second[: len(w[k + 1 :])]) != w[k + 1 :]:
        return frozenset()
    return frozenset("abc#") if k == len(w) else frozenset(second[len(w) - k - 1 :][:1] or ["EOS"])


NEXT = re.compile(
    r"the (Stack-RNN|Stack-LSTM|Baby-NTM)'s predicted next-symbol sets equal the (D2|D3|w#w\^R|"
    r"w#φ\(w\^R\)) targets after every nonempty prefix of every string \(∅ after an invalid "
    r"prefix\), so it accepts exactly the members"
)
INPUTS = {"D2": "()[]", "D3": "()[]{}", "w#w^R": "abc#", "w#φ(w^R)": "abc#xyz"}


def check(rec: dict[str, Any], net: RNet, kind: str, method: str, max_words: int) -> str:
    """Rule (next-symbol sets, exhaustive): if for every word w over the network's alphabet with
    max(lo, 1) <= |w| <= hi the set predicted after w (the step interpreter above, one step
    from the kept state of w's prefix: the prefix trie) is the kernel's own ``target`` of the
    task the statement names, then every prediction after every nonempty prefix of every word
    of the bound is its target (each such prefix is itself a word of the bound, or shorter than
    lo and not claimed). Acceptance (every symbol in the set before it, the last set that of a
    complete word) is then decided by the targets, which accept exactly the members. The first
    word where the sets differ refutes it; ``checked`` is the number of words."""
    m = NEXT.fullmatch(rec["claim"]["statement"])
    if kind != "PredictsNext" or not m or not method.startswith("exhaustive ("):
        raise Refused(f"claim kind {kind} by {method} on a recurrent network")
    if m[1].lower() != net.kind or not set(net.alphabet) == set(net.x) == set(INPUTS[m[2]]):
        raise KernelError(f"the statement is about a {m[1]} over {INPUTS[m[2]]}, not the file")

    @functools.cache  # the prefix trie: each prefix's state computed once
    def after(w: tuple[str, ...]) -> tuple[State, dict[str, Fraction]]:
        return step(net, after(w[:-1])[0] if len(w) > 1 else None, w[-1])

    def fault(w: tuple[str, ...]) -> str | None:
        y, want = after(w)[1], target(m[2], w)
        got = frozenset(s for s in net.symbols if y[f"y:{s}"] > net.theta)
        bad = f"the network predicts {sorted(got)}, the target is {sorted(want)}"
        return None if got == want else bad

    holds = "every predicted set is its target on all {count} words"
    return sweep(rec, net, max_words, lambda _n: fault, holds, shortest=1)
