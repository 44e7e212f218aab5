"""Rules for relative positions (Chang et al. 2021, §2–§3): the kernel's own transcriptions of
the paper's equations, against which the network file's heads and convolutions are checked.

A ``ValueIs`` record here says that a head (or a convolution channel) of the network computes
one of the paper's equations at every position of every word of the bound. The rule recomputes
the equation from the paper's text with the parameters the file gives the head (W^Q, W^K, W^V,
the window entries β, W^C, W^{C'}, the softmax base), but with the equation's own structure:
which terms are present, zero beyond ±k or clipped to ±k (Shaw), 1/√d_h with d_h the width of
the query, a softmax over every key. A head whose fields differ from the equation (a term too
many, the wrong outside rule, another scale or mask) therefore disagrees on a word where that
matters. Three ``ExactFact`` records state that a witness exists (n and base given); the kernel
exhibits its own witness and evaluates both sides exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .interpret import ZERO, affine, dot, forward, window
from .netfile import KernelError, Net, power, sweep

RULES: dict[str, tuple[str | None, str | None, str | None]] = {
    # head: (β rule, W^C rule, W^{C'} rule); a rule is "zero" (beyond ±k) or "clip"
    "fixed": ("zero", None, None),
    "dynamic": (None, "zero", None),
    "shaw": (None, "clip", None),
    "composite": ("zero", "zero", None),
    "key": (None, None, "zero"),
}
EQUATIONS = {  # head: the equation its statement names
    "fixed": "Eq. 4: y_i = Σ_j softmax_j(A_ij + β_{j−i}[|j−i| ≤ k]) v_j",
    "dynamic": "Eq. 5: logits (x_iW^Q)(x_jW^K + W^C_{j−i})ᵀ/√d_h, zero beyond ±k",
    "shaw": "Shaw et al.'s logits with j − i clipped to ±k",
    "composite": "Eq. 6: Eq. 5 + β_{j−i}",
    "key": "the key-based dynamic convolution A_ij + (x_jW^K)(W^{C'}_{j−i})ᵀ/√d_h",
}
HEADS = {
    f"head '{h}' computes {eq}, at every position of every word": h for h, eq in EQUATIONS.items()
}
CONV = re.compile(
    r"channel (\d+) of block '([^']+)' is (Eq\. 3 with Wu et al\.'s softmax-normalized kernel "
    r"\(base 2\)|Eq\. 2), zero padding"
)
FACTS = {
    "Eq. 4 (β before the softmax) and the text's 'add the attention map' (after it) are "
    "different operators: a witness X with softmax(A + T)V ≠ softmax(A)V + TV (n = 2, base 2)": "I4c",
    "Eq. 5 (zero beyond ±k) and Shaw's clipped embeddings differ as soon as n > k + 1: a witness "
    "(n = 3, k = 1) where the logits differ at |j − i| = 2": "I6b",
    "with a Toeplitz bias (Eq. 4) self-attention is not permutation-equivariant: a witness X, P "
    "with SA_T(PX) ≠ P·SA_T(X) (n = 2, base 2)": "I9b",
}
Rows = list[dict[str, Fraction]]
EQUATION = "the equation holds on all {count} words"


def _head_rule(net: Net, statement: str) -> tuple[int, str, Callable[..., list[Fraction]]]:
    name = HEADS[statement]
    b_rule, c_rule, ck_rule = RULES[name]
    found = [(i, h) for i, s in enumerate(net.layers) for h in s.block.heads if h.name == name]
    if len(found) != 1 or len(found[0][1].value.outputs) != 1 or found[0][1].base is None:
        raise KernelError(f"the network has no single softmax head {name!r} with one output")
    idx, h = found[0]
    beta, wc, wck = h.rel or (None, None, None)
    for rule, win, what in ((b_rule, beta, "β"), (c_rule, wc, "W^C"), (ck_rule, wck, "W^{C'}")):
        if rule is not None and win is None:
            raise KernelError(f"head {name!r} has no {what}, which its statement uses")
    qo = h.query.outputs
    root = power(Fraction(len(qo)), Fraction(1, 2), f"head {name!r}: √d_h")
    base = h.base
    assert base is not None  # checked above

    def ref(_w: Any, rows: Rows) -> list[Fraction]:
        qs, ks = ([[affine(a, r)[o] for o in qo] for r in rows] for a in (h.query, h.key))
        vs = [affine(h.value, r)[h.value.outputs[0]] for r in rows]

        def logit(i: int, j: int) -> Fraction:
            s: Fraction = dot(qs[i], ks[j])
            for rule, win, vec in ((c_rule, wc, qs[i]), (ck_rule, wck, ks[j])):
                col = None if rule is None else window(win[2], j - i, rule)
                s += ZERO if col is None else dot(vec, col)
            b = None if b_rule is None else window(beta[2], j - i, b_rule)
            return s / root + (ZERO if b is None else b)

        n = range(len(rows))
        return _softmax([[logit(i, j) for j in n] for i in n], vs, base)

    return idx, h.value.outputs[0], ref


def _softmax(logits: list[list[Fraction]], vs: list[Fraction], base: Fraction) -> list[Fraction]:
    """Σ_j softmax_j(logits[i]) v_j in ``base`` at every i, every key j seen (exactly; Refused
    where a weight is not rational)."""
    ws = [[power(base, a - max(row), "the softmax") for a in row] for row in logits]
    return [dot(w, vs) / sum(w, ZERO) for w in ws]


def _conv_rule(net: Net, statement: str) -> tuple[int, str, Callable[..., list[Fraction]]]:
    m = CONV.fullmatch(statement)
    assert m is not None
    c, name, eq3 = int(m[1]) - 1, m[2], m[3].startswith("Eq. 3")
    found = [i for i, s in enumerate(net.layers) if s.block.kind == "conv" and s.block.name == name]
    if len(found) != 1:
        raise KernelError(f"the network has no single convolution {name!r}")
    ins, outs, _, raw, base = net.layers[found[0]].block.steps
    if not 0 <= c < len(ins):
        raise KernelError(f"convolution {name!r} has no channel {c + 1}")
    if eq3:  # Eq. 3: one kernel row shared by every channel, softmax-normalized (base 2)
        if len(raw) != 1 or base != 2:
            raise KernelError(f"convolution {name!r} is not one shared row normalized in base 2")
        exps = [power(Fraction(2), b, f"convolution {name!r}") for b in raw[0]]
        w = [e / sum(exps, ZERO) for e in exps]
    elif base is not None:  # Eq. 2 is a depthwise convolution without a normalization
        raise KernelError(f"convolution {name!r} normalizes its kernel, which Eq. 2 does not")
    else:
        w = list(raw[c] if len(raw) > 1 else raw[0])

    def ref(_w: Any, rows: Rows) -> list[Fraction]:
        return _conv(w, [r[ins[c]] for r in rows])

    return found[0], outs[c], ref


def _conv(w: Any, x: list[Fraction]) -> list[Fraction]:
    """y_i = Σ_j w_{j−i}·x_j with zero padding (w_{j−i} is 0 beyond ±k, 2k + 1 = len(w))."""
    n = range(len(x))
    return [sum(((window(w, j - i, "zero") or ZERO) * x[j] for j in n), ZERO) for i in n]


def check_values(
    rec: dict[str, Any], net: Net, max_words: int, rule: Any = None, holds: str = EQUATION
) -> str:
    """Rule (a head or convolution channel computes the paper's equation, exhaustive): on every
    word of the bound, at every token, the dim the record names after that sublayer equals the
    kernel's own evaluation of the equation on the rows before it; the first word where it does
    not refutes the claim (a refuted record must name that word). ``rule``: another claim's
    (sublayer, dim, its values on a word and the rows before it), ``holds`` what then holds."""
    statement = rec["claim"]["statement"]
    rule = rule or (_head_rule if statement in HEADS else _conv_rule)
    idx, dim, ref = rule(net, statement)
    after = net.layers[idx].block.name

    def bad(w: tuple[str, ...]) -> str | None:
        want, rows = ref(w, forward(net, w, stop=idx - 1)[0]), forward(net, w, stop=idx)[0]
        for t, r in enumerate(rows):
            if r[dim] != want[t]:
                return f"after {after} {dim} at token {t} is {r[dim]}, not {want[t]}"
        return None

    return sweep(rec, net, max_words, lambda n: bad, holds)


def _attend(x: list[Fraction], beta: tuple[int, ...]) -> list[Fraction]:
    """softmax_j(x_i·x_j + β_{j−i}) x_j in base 2, d = 1, W^Q = W^K = W^V = 1, k = 1."""
    n = range(len(x))
    logits = [[x[i] * x[j] + (window(beta, j - i, "zero") or ZERO) for j in n] for i in n]
    return _softmax(logits, x, Fraction(2))


def check_fact(rec: dict[str, Any]) -> str:
    """Rule (a witness exists, exact arithmetic): the kernel's own witness (d = 1, k = 1, the
    weights 1, β = (0, 0, 1) at offsets −1, 0, 1) makes the two sides differ exactly."""
    which = FACTS[rec["claim"]["statement"]]
    if rec.get("verdict") != "proved":
        raise KernelError(f"the record says {rec.get('verdict')}, but a witness exists")
    beta, x = (0, 0, 1), [Fraction(1), Fraction(0)]
    if which == "I4c":  # softmax(A + T)V vs softmax(A)V + TV
        lhs = _attend(x, beta)
        rhs = [s + t for s, t in zip(_attend(x, (0, 0, 0)), _conv(beta, x), strict=True)]
    elif which == "I6b":  # logit terms q_i·W^C_{j−i}, q = 1, at j − i = ±2 (n = 3): zero vs clip
        lhs = [window(beta, d, "zero") or ZERO for d in (2, -2)]
        rhs = [window(beta, d, "clip") for d in (2, -2)]
    else:  # I9b: SA_T(PX) vs P·SA_T(X), P the swap
        lhs, rhs = _attend(x[::-1], beta), _attend(x, beta)[::-1]
    if lhs == rhs:  # pragma: no cover - the witness is fixed; a failure is a kernel bug
        raise KernelError(f"{which}: the kernel's witness does not separate the two sides")
    shown = [", ".join(map(str, side)) for side in (lhs, rhs)]
    return f"proved: a witness (X = (1, 0), β = (0, 0, 1), base 2): ({shown[0]}) ≠ ({shown[1]})"
