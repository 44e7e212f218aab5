"""The kernel's reader and interpreter of encoder–decoder files (``format: netproof-seq2seq``,
version 1; ``symbolic/netfile.py`` documents it), its own run of the two-stack machines and of
their σ-RNN, and its rules for the records of Bhattamishra et al. 2020's Turing-machine
simulator (``tm-sim``) and of Proposition 4.3's tightness (``prop43-tight``).

The file's embedding, encoder sublayers and decoder sublayers are blocks of the network file
format: they are read by the kernel's own reader (:func:`.netfile.loads`, as one network whose
layers are the encoder's then each decoder layer's self-attention, cross-attention and FFN) and
run by its own interpreter (:mod:`.interpret`: :func:`~.interpret.forward` for the encoder,
:func:`~.interpret.head` and :func:`~.interpret.ffn` for the decoder). The decoder (the paper's
§3.2, eqs. 5–7): y_0 = seed + Σ coef·feature(0, n) over the decoder's positional features (n the
encoder's tokens); at step t the run halts if the halting unit of y_t equals its value, else
each decoder layer applies its causal self-attention over its inputs of steps 0..t, its
cross-attention over the encoder's final rows (a head of mask m sees the keys
visible(m, t, max(n, t + 1)) below n) and its FFN, each a sublayer (residual, post layer norm);
F, the output map, gives ỹ_{t+1} (dims it does not write are 0), and y_{t+1} = ỹ_{t+1} plus the
positional features at t + 1. Relative positions and softmax scaled by n are refused.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from fractions import Fraction
from typing import Any, cast

from . import netfile as nf
from .interpret import ONE, ZERO, Row, affine, combine, feature, ffn, forward, mix, visible, weights

FORMAT = "netproof-seq2seq"


class S2S:
    """An encoder–decoder file as the kernel reads it."""

    def __init__(self, doc: Any) -> None:
        s, k = doc["network"], len(doc["network"]["encoder"])
        if s.get("type") != "Seq2Seq":
            raise nf.KernelError("an encoder–decoder file's network has type 'Seq2Seq'")
        subs = [x[p] for x in s["decoder"] for p in ("self_attention", "cross_attention", "ffn")]
        net = {k: s[k] for k in ("name", "dims", "embedding")} | {"type": "Network"}
        net |= {"layers": s["encoder"] + subs, "readout": {"type": "NextSymbols"}}  # no logit
        full = nf.network({**doc, "network": net})
        self.fingerprint, self.alphabet = full.fingerprint, full.alphabet
        self.enc = dataclasses.replace(full, layers=full.layers[:k])
        self.dec = [full.layers[i : i + 3] for i in range(k, len(full.layers), 3)]
        if any([x.block.kind for x in d] != ["attention", "attention", "ffn"] for d in self.dec):
            raise nf.KernelError("a decoder layer is self-attention, cross-attention and an FFN")
        h, self.output = s["halting"], nf.read_affine(s["output"], "output")
        self.unit, self.value = nf.read_affine(h["unit"], "halting"), nf.q(h["value"], "halting")
        if len(self.unit.outputs) != 1:
            raise nf.KernelError("the halting unit has one output")
        self.seed = {d: nf.q(v, "seed") for d, v in s["seed"]}
        self.positional = [(d, f, nf.q(c, "positional")) for d, f, c in s["decoder_positional"]]


def attend(block: Any, x: Row, t: int, rows: list[Row], seen: dict[Any, Any] | None) -> Row:
    """An attention layer at decoder step t, query row ``x``, keys and values ``rows`` (the
    visible ones), each head's weights by :func:`.interpret.weights`. With ``seen``
    (cross-attention), each head's nonzero weights are kept in it ((layer, head) -> {j: w}),
    and its query row (("query", layer, head) -> the row)."""
    out: Row = {}
    for h in block.heads:
        if h.rel is not None or (h.times_n and not h.hardmax):
            raise nf.Refused(
                f"head {h.name}: relative positions or a softmax scaled by n (decoder)"
            )
        keys = [j for j in visible(h.mask, t, max(len(rows), t + 1)) if j < len(rows)]
        q, ks = affine(h.query, x), {j: affine(h.key, rows[j]) for j in keys}
        w = weights(h, q, ks, keys, t, len(rows), f"head {h.name}")
        got = {j: c for j, c in w.items() if c}
        if seen is not None:
            seen[block.name, h.name], seen["query", block.name, h.name] = got, q
        vs = {j: affine(h.value, rows[j]) for j in got}
        out |= {o: sum((c * vs[j][o] for j, c in got.items()), ZERO) for o in h.value.outputs}
    return cast(Row, mix(block, out))


def run(net: S2S, word: tuple[str, ...], max_steps: int) -> tuple[list[Row], list[Any], Any]:
    """y_0, y_1, … (until the run halts or y_{max_steps}), each step's attention weights
    ((layer, head) -> {key: weight}) and attention outputs (layer -> its output), and the
    halting step (None when it did not halt)."""
    empty = not (net.enc.prefix or word or net.enc.suffix)  # no tokens: no keys (no readout)
    memory = [] if empty else forward(net.enc, word, every_position=True)[0]
    n, zero = len(memory), dict.fromkeys(net.enc.dims, ZERO)

    def at(row: Row, t: int) -> Row:
        out = {**zero, **row}
        for d, f, c in net.positional:
            out[d] += c * feature(f, t, n)
        return out

    ys, steps, cache, y = list[Row](), list[Any](), [list[Row]() for _ in net.dec], at(net.seed, 0)
    for t in range(max_steps + 1):
        ys.append(y)
        if affine(net.unit, y)[net.unit.outputs[0]] == net.value:
            return ys, steps, t
        if t == max_steps:
            break
        x, seen, outs = y, dict[Any, Any](), dict[str, Row]()
        for k, (sa, ca, ff) in enumerate(net.dec):
            cache[k].append(x)
            x = combine(sa, x, attend(sa.block, x, t, cache[k], None), sa.block.name)
            outs[ca.block.name] = attend(ca.block, x, t, memory, seen)
            x = combine(ca, x, outs[ca.block.name], ca.block.name)
            x = combine(ff, x, ffn(ff.block, x, ff.block.name), ff.block.name)
        steps.append((seen, outs))
        y = at(affine(net.output, x), t + 1)
    return ys, steps, None


MACHINES = {  # name: "start accepting symbols (bits 0, 1): rule; rule; …"
    "balanced-parens": "q acc (): q ( * q - +(; q ) ( q - -; q ) E rej = =; q E ( rej = =; "
    "q E E acc = =",
    "binary-increment": "right done 01: right 0 * right - +0; right 1 * right - +1; "
    "right E * carry = =; carry * 1 carry +0 -; carry * 0 left +1 -; carry * E left +1 =; "
    "left * 0 left +0 -; left * 1 left +1 -; left * E done = =",
    "reverse": "move done ab: move a * move - +a; move b * move - +b; move E * done = =",
}
"""The spec's two-stack machines (Bhattamishra et al. 2020, Appendix B.1; the spec's §2.2, and
netproof's machine files, which the records name), the kernel's own transcription: a rule
``q a1 a2 q' op1 op2`` reads state q and the tops a1, a2 of the stacks (``E`` empty, ``*`` any),
goes to q' and applies op_i to stack i: ``=`` keep, ``-`` pop, ``+x`` push x. The input starts
on stack 1, its first symbol on top; the machine halts when no rule applies."""


def machine(name: str) -> tuple[str, str, str, list[list[str]]]:
    """The machine ``name``: start, accepting state, symbols, rules (q, a1, a2, q', op1, op2)."""
    if name not in MACHINES:
        raise nf.Refused(f"machine {name!r}: the kernel knows {', '.join(MACHINES)}")
    top, rules = MACHINES[name].split(":", 1)
    start, accept, syms = top.split()
    return start, accept, syms, [r.split() for r in rules.split(";")]


def configurations(name: str, word: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """The machine's run on ``word``: (state, stack 1, stack 2), stacks top first, until no rule
    applies; then, where that state has rules, one more configuration into ``halt:accept`` (the
    accepting state) or ``halt:reject``, the stacks kept (the spec's explicit halt, §2.2)."""
    q, accept, _, rules = machine(name)
    s1, s2, confs = "".join(word), "", []
    while True:
        confs.append((q, s1, s2))
        fits = [r for r in rules if r[0] == q and {r[1], s1[:1] or "E"} <= {s1[:1] or "E", "*"}]
        if not (fit := [r for r in fits if {r[2], s2[:1] or "E"} <= {s2[:1] or "E", "*"}]):
            break
        q, o1, o2 = fit[0][3:]
        s1 = s1[1:] if o1 == "-" else s1 if o1 == "=" else o1[1] + s1
        s2 = s2[1:] if o2 == "-" else s2 if o2 == "=" else o2[1] + s2
    if any(r[0] == q for r in rules):
        confs.append(("halt:accept" if q == accept else "halt:reject", s1, s2))
    return confs


def compiled(name: str) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """The rules of the machine's σ-RNN (the spec's §2.2) with the tops and ops as bits: for every
    state with rules and tops a1, a2 ∈ {E, 0, 1}, the rule that applies, else one into
    ``halt:accept``/``halt:reject``; for every state without rules (halting), (h, *, *) → h. Its
    states and its halting states."""
    _, accept, syms, rules = machine(name)
    bit = {"E": "E", "*": "*", syms[0]: "0", syms[1]: "1"}
    op = {"=": "noop", "-": "pop", "+" + syms[0]: "push0", "+" + syms[1]: "push1"}
    states = list(dict.fromkeys(x for r in rules for x in (r[0], r[3])))
    busy, out = {r[0] for r in rules}, list[tuple[str, ...]]()
    for q, a1, a2 in ((q, a, b) for q in states if q in busy for a in "E01" for b in "E01"):
        fit = [r for r in rules if r[0] == q and {bit[r[1]], a1} <= {a1, "*"}]
        fit = [r for r in fit if {bit[r[2]], a2} <= {a2, "*"}]
        halt = "halt:accept" if q == accept else "halt:reject"
        states += [] if fit or halt in states else [halt]
        r = fit[0] if fit else [q, a1, a2, halt, "=", "="]
        out.append((q, a1, a2, r[3], op[r[4]], op[r[5]]))
    halting = [s for s in states if s not in busy]
    return out + [(h, "*", "*", h, "noop", "noop") for h in halting], states, halting


def encode(syms: str, s: str) -> list[Fraction]:
    """Stack s (top first) as the σ-RNN holds it: its code Σ_j (2b_j + 1)/4^j (b_1 its top bit),
    its top bit (0 when empty), 1 iff it is nonempty."""
    code = sum((Fraction(2 * syms.index(b) + 1, 4 ** (j + 1)) for j, b in enumerate(s)), ZERO)
    return [code, Fraction(syms.index(s[0]) if s else 0), Fraction(int(bool(s)))]


STACKS = ("Cb1.", "Tb1.", "Nb1.", "Cb2.", "Tb2.", "Nb2.")  # a stack's code, top bit, nonempty
K = Fraction(4)  # the gating constant: σ(x + K·G − K) is σ(x) when G = 1, 0 when G = 0 (x <= K)


def step(rnn: Any, h0: Row, x: tuple[Fraction, ...]) -> Row:
    """One tick of the σ-RNN (the spec's §2.2 table, every neuron σ of an affine map of the
    previous state h, 0 where it has none, and the input x, the one-hot of the bit, 0 for a
    blank): the loader (ST, pA, pB, e1, e3, ACC, START, DONE), the B-neurons (Cb/Tb/Nb per stack
    and operation, the load of stack 1, S:q) and the A-neurons (C, T, N per stack, D per rule)."""
    rules, states, start = rnn
    h: defaultdict[str, Fraction] = defaultdict(Fraction, h0)

    def tot(p: str) -> Fraction:
        return sum((v for u, v in h0.items() if u.startswith(p)), ZERO)

    P, xs, acc, go = h["pA"] + h["pB"] - h["ST"] + 1, x[0] + x[1], h["ACC"], K * h["START"]
    new = {"ST": ONE, "pA": P / 4 + xs - 1, "pB": P - xs, "e1": P / 4 + x[0] - 1}
    new |= {"e3": 3 * P / 4 + x[1] - 1, "ACC": acc + h["e1"] + h["e3"], "Cb1.load": acc + go - K}
    new |= {"START": h["ST"] - xs - h["DONE"], "DONE": h["DONE"] + h["ST"] - xs}
    new |= {"Tb1.load": 4 * acc - 2 + go - K, "Nb1.load": 4 * acc + go - K}
    D, m = {r: h["D:{}/{}/{}".format(*r)] for r in rules}, []
    for i in (1, 2):
        C, T, N, G = h[f"C{i}"], h[f"T{i}"], h[f"N{i}"], defaultdict[str, Fraction](Fraction)
        for r, d in D.items():
            G[r[3 + i]] += K * d
        c, t, n, pops = f"Cb{i}.", f"Tb{i}.", f"Nb{i}.", 16 * C - 8 * T + G["pop"] - K
        new |= {c + "noop": C + G["noop"] - K, c + "pop": 4 * C - 2 * T - 1 + G["pop"] - K}
        new |= {c + f"push{b}": C / 4 + Fraction(2 * b + 1, 4) + G[f"push{b}"] - K for b in (0, 1)}
        new |= {t + "noop": T + G["noop"] - K, t + "push1": G["push1"] / K, t + "pop": pops - 6}
        new |= {n + "noop": N + G["noop"] - K, n + "push": (G["push0"] + G["push1"]) / K}
        new |= {n + "pop": pops - 4, f"C{i}": tot(c), f"T{i}": tot(t), f"N{i}": tot(n)}
        m.append({"1": tot(t), "0": tot(n) - tot(t), "E": 1 - tot(n)})
    for q in states:
        new[f"S:{q}"] = sum((d for r, d in D.items() if r[3] == q), go / K * (q == start))
    for r in rules:
        s = sum((m[i][a] - 1 for i, a in enumerate(r[1:3]) if a != "*"), ZERO)
        new["D:{}/{}/{}".format(*r)] = h[f"S:{r[0]}"] + s
    return {u: min(max(v, ZERO), ONE) for u, v in new.items()}


HALTS = "the decoder halts when the RNN does, and the RNN holds the machine's configuration k"
B6 = f"the h block of y_t equals the TM-RNN's state h_t at every step t (run on w, $, $, …), {HALTS} at tick t_S + 1 + 2k"
B8 = f"the h₁ block of y_t equals the TM-RNN's state hs[t] of the run on #, w, $, … at every step, {HALTS} at tick t_S + 1 + 2k"
B8_PAPER = "the decoder output at step t holds h_t, the RNN's state after t inputs of w, $, $, … (§4.2: 'O^dec has h_t')"
SIMULATES = {B6: ("h:", 0, True), B8: ("h1:", 1, True), B8_PAPER: ("h1:", 0, False)}
"""statement: (the h block's dims are its prefix and the RNN's units, the blanks # the RNN reads
before w, whether the halting and configuration parts are stated). B6's statement may end in a
parenthesis naming the network's variant ("(the construction as printed: …)")."""
C5 = "at every decoder step t the decoder–encoder attention selects exactly position min(t+1, n+1) (n+1 is $)"
B11 = "layer 1 averages every encoder position j ≤ t̄; layer 2 selects exactly the j ≤ t̄ with s_j = s_t̄ (t̄ = min(t, n))"
TRACES = (("TraceProperty", C5), ("TraceProperty", B11))
TIGHT = "with keys and values e_1..e_m and the queries running through every nonzero bit vector, the decoder–encoder attention output takes exactly 2^m − 1 distinct values (Proposition 4.3's bound is tight)"


def check_tight(rec: dict[str, Any], net: S2S, max_words: int) -> str:
    """Rule (``TIGHT``, Proposition 4.3's tightness, exhaustive over its domain, the words
    w = 12…m with m in the bound, the alphabet's first symbols 1, 2, …): the decoder is one
    layer whose cross-attention is one hardmax head, its query of width d. On w, the head's key
    and value at encoder position j (of m) are e_j (the j-th unit vector of width d); its
    queries at the decoder's steps until it halts (within 2^d steps) are the 2^d − 1 nonzero
    0/1 vectors, each once; and its outputs at those steps take exactly 2^m − 1 distinct values.
    The first m where one of these fails refutes the statement (the record must name 12…m)."""
    ca, hi = net.dec[0][1], nf.bounds(rec)[1]
    h = ca.block.heads[0]
    if net.alphabet[:hi] != tuple(str(k) for k in range(1, hi + 1)):
        raise nf.KernelError(f"the alphabet {net.alphabet} does not begin 1, 2, …, {hi}")
    d = len(h.query.outputs)
    nonzero = sorted(itertools.product((0, 1), repeat=d))[1:]

    def fault(w: tuple[str, ...]) -> str | None:
        e = [[int(i == j) for i in range(d)] for j in range(len(w))]
        memory = forward(net.enc, w, every_position=True)[0]
        if [[list(affine(a, r).values()) for r in memory] for a in (h.key, h.value)] != [e, e]:
            return "the keys and values are not e_1..e_m"
        steps = run(net, w, 2**d)[1]
        queries = sorted(tuple(seen["query", ca.block.name, h.name].values()) for seen, _ in steps)
        if queries != nonzero:
            return f"the {len(steps)} queries are not the {len(nonzero)} nonzero 0/1 vectors"
        outs = {tuple(out[ca.block.name].values()) for _, out in steps}
        if len(outs) != 2 ** len(w) - 1:
            return f"the attention output takes {len(outs)} values, not 2^{len(w)} − 1"
        return None

    holds = "the output takes 2^m − 1 values on each of the {count} words 12…m"
    return nf.sweep(rec, net, max_words, lambda n: fault, holds, words=lambda n: [net.alphabet[:n]])


def check(rec: dict[str, Any], net: S2S, kind: str, method: str, max_words: int) -> str:
    """The rules for an encoder–decoder's exhaustive records. Each is a statement read on every
    word w of the bound, the decoder run until it halts or two steps past tick t_S + 1 + 2k of
    the record's machine's last configuration k (t_S = max(|w| + 1, 2), or |w| + 2 where the
    network is the directional one, the RNN reading #, w, $, …: the tick at which the RNN's START
    is 1); a word where it fails refutes it, and the record must name the first.

    - Simulates (``SIMULATES``): the kernel runs the record's machine (``params.machine``,
      :data:`MACHINES`) and its σ-RNN (:func:`step`, h_0 = 0, inputs the one-hot of each symbol
      of w after the statement's blanks, then blanks). At every step t of the decoder's run,
      y_t's h block equals h_t, unit by unit; with the halting part, the decoder halts exactly at
      the first tick where the RNN's halting states' S units sum to 1, and at tick t_S + 1 + 2k
      the RNN holds configuration k (S one-hot on its state, Σ Cb_i.* the code Σ_j (2b_j+1)/4^j
      of stack i, b_1 on top, Σ Tb_i.* its top bit, Σ Nb_i.* 1 iff it is nonempty).
    - C5 (``C5``): at every step the one head of the one decoder layer's cross-attention gives
      weight to exactly one key, numbered as the embedding numbers positions, min(t + 1, n + 1).
    - B11 (``B11``): with n the index of the last encoder token ($) and t̄ = min(t, n), decoder
      layer 1's cross-attention head gives weight 1/(t̄ + 1) to each j ≤ t̄ and none elsewhere,
      layer 2's gives weight exactly to the j ≤ t̄ whose token is token t̄'s.
    """
    st, name = rec["claim"]["statement"], str((rec.get("params") or {}).get("machine"))
    base = next((s for s in SIMULATES if st == s or st.startswith(s + " (")), None)
    if (kind, base is None and st) not in (("Simulates", False), *TRACES, ("TraceProperty", TIGHT)):
        raise nf.Refused(f"{kind} {st!r}: no definition in the kernel")
    if not method.startswith("exhaustive ("):
        raise nf.Refused(f"claim kind {kind} by {method}")
    layers = [d[1].block for d in net.dec]
    other = any(len(b.heads) != 1 or not b.heads[0].hardmax for b in layers)
    if not base and (other or len(layers) != (2 if st == B11 else 1)):
        raise nf.Refused(f"{st!r} of a decoder of {len(layers)} layers, not one hardmax head each")
    if st == TIGHT:
        return check_tight(rec, net, max_words)
    rules, states, halting = rnn = compiled(name)
    start, _, syms, _ = machine(name)
    bits = {a: (ZERO, ONE) if a == syms[1] else (ONE, ZERO) for a in syms}
    units = set(step((*rnn[:2], ""), {}, (ZERO, ZERO)))

    def simulates(w: tuple[str, ...], ys: list[Row], halted: Any, t_s: int, confs: Any) -> Any:
        prefix, lead, full = SIMULATES[base]  # type: ignore[index]
        xs, hs = [(ZERO, ZERO)] * lead + [bits[a] for a in w] + [(ZERO, ZERO)] * len(ys), [Row()]
        while len(hs) < len(ys):
            hs.append(step((rules, states, start), hs[-1], xs[len(hs) - 1]))
        own = [d[len(prefix) :] for d in net.enc.dims if d.startswith(prefix)]
        if set(own) != units:
            raise nf.KernelError(f"the {prefix} block's dims are not the TM-RNN's units")
        for t, (y, h) in enumerate(zip(ys, hs, strict=True)):
            if bad := [u for u in own if y[prefix + u] != h.get(u, ZERO)]:
                return f"y_{t}[{prefix}{bad[0]}] = {y[prefix + bad[0]]}, the RNN's h_{t}[{bad[0]}] = {h.get(bad[0], ZERO)}"
        ends = (t for t, h in enumerate(hs) if sum(h.get(f"S:{q}", ZERO) for q in halting) == 1)
        if full and (stop := next(ends, None)) != halted:
            return f"the decoder halts at step {halted}, the RNN at {stop}"
        for k, (q, s1, s2) in enumerate(confs if full else ()):
            h = hs[t_s + 1 + 2 * k] if t_s + 1 + 2 * k < len(hs) else {}
            want: list[Any] = [int(p == q) for p in states] + encode(syms, s1) + encode(syms, s2)
            sums = [sum(v for u, v in h.items() if u.startswith(p)) for p in STACKS]
            if [h.get(f"S:{p}") for p in states] + sums != want:
                return f"at tick {t_s + 1 + 2 * k} the RNN does not hold configuration {k}: {q} [{s1} | {s2}]"
        return None

    def trace(w: tuple[str, ...], steps: list[Any]) -> str | None:
        toks = (*net.enc.prefix, *w, *net.enc.suffix)
        for t, (seen, _) in enumerate(steps):
            got, tb = [seen[b.name, b.heads[0].name] for b in layers], min(t, len(toks) - 1)
            at = [net.enc.index_base + j for j in got[0]]
            if st == C5 and at != [min(t + 1, len(w) + 1)]:
                return f"at step {t} the decoder–encoder attention selects positions {at}"
            if st == B11 and got[0] != {j: Fraction(1, tb + 1) for j in range(tb + 1)}:
                return f"at step {t} layer 1 weighs the keys {got[0]}, not each j <= {tb} by 1/{tb + 1}"
            if st == B11 and set(got[1]) != {j for j in range(tb + 1) if toks[j] == toks[tb]}:
                return f"at step {t} layer 2 selects {sorted(got[1])}, not the j <= {tb} holding {toks[tb]!r}"
        return None

    def faults(w: tuple[str, ...]) -> str | None:
        confs = configurations(name, w)
        t_s = max(len(w) + 1 + ("h1:ST" in net.enc.dims), 2)
        ys, steps, halted = run(net, w, t_s + 2 * len(confs) + 1)
        return simulates(w, ys, halted, t_s, confs) if base else trace(w, steps)

    holds = "the statement holds on all {count} words"
    return nf.sweep(rec, net, max_words, lambda n: faults, holds)
