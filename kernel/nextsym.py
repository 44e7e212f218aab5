"""The kernel's rules for generators (a network file with a ``NextSymbols`` readout) and for
Yao et al. 2021's generator (``dyck-gen``): the layer-1 averages (Y6) and the exact facts about
the angles θ(d) (Y8: eq. (7); Y11: the gaps), each rule stated with its soundness argument in
its docstring. The generator's other claims (Lemma B.1's angles, the layer-2 selections, the
next-symbol sets, Definition 3.1) are about values past a layer norm whose variance is not a
rational square (cos θ(1) = 3/√10 at D = 2): the kernel runs the network on the empty word and
refuses them with its interpreter's reason, naming the √.
"""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from typing import Any

from .interpret import ONE, forward
from .languages import brackets, still_open
from .netfile import Affine, KernelError, Refused, bounds, must_be_proved, sweep

LAYER1 = re.compile(
    r"layer 1 \(uniform causal head, value \(2o − 1, g\)\) gives \(a₁, a₂\) = \(d_i/i, 1/i\) "
    r"exactly at every position of every prefix of a word of Dyck\((\d),(\d+)\), d = 1 \+ depth"
)


def check_layer1(rec: dict[str, Any], net: Any, max_words: int) -> str:
    """Rule (Y6, exhaustive; ``LAYER1``): the first sublayer is an attention layer of one causal
    head whose query map is empty (every score 0: uniform over the tokens it sees)
    and whose value map is a₁ = 2o − 1, a₂ = g, as the statement names it; the words are the
    prefixes v of the words of Dyck(k, D) with at most hi brackets (``still_open``: no bracket
    closes another, none nests deeper than D; and |v| + depth(v) <= hi, room to close), with
    |v| >= lo, read by the network after its prefix γ. If at every token of
    each, its 1-based position i (γ is 1) and d = 1 + the depth after the brackets up to it,
    the rows after the first sublayer hold a₁ = d/i and a₂ = 1/i (the kernel's interpreter,
    exactly), the statement holds on the bound; ``checked`` must be the number of those words."""
    m = LAYER1.fullmatch(rec["claim"]["statement"])
    k, depth = int(m.group(1)), int(m.group(2))  # type: ignore[union-attr]
    if net.alphabet[: 2 * k] != tuple(s for p in brackets(k) for s in p) or net.prefix != ("γ",):
        raise KernelError(f"the network does not read γ then the brackets of Dyck({k},{depth})")
    sub = net.layers[0] if net.layers else None
    value = Affine(("o", "g"), ("a1", "a2"), {"a1": {"o": 2 * ONE}, "a2": {"g": ONE}}, {"a1": -ONE})
    heads: tuple[Any, ...] = () if sub is None or sub.block.kind != "attention" else sub.block.heads
    if len(heads) != 1 or (heads[0].mask, heads[0].query.outputs) != ("causal", ()):
        raise KernelError("layer 1 is not one causal head with an empty query (scores 0: uniform)")
    if (heads[0].value, sub.block.output, sub.residual, sub.post_ln) != (value, None, True, None):  # type: ignore[union-attr]
        raise KernelError("layer 1's value map is not (a₁, a₂) = (2o − 1, g) added to the stream")
    hi = bounds(rec)[1]

    def words(n: int) -> list[tuple[str, ...]]:  # the prefixes with room to close within hi
        every = itertools.product(net.alphabet[: 2 * k], repeat=n)
        return [w for w in every if (s := still_open(w, k, depth)) is not None and n + len(s) <= hi]

    def fault(w: tuple[str, ...]) -> str | None:
        for t, row in enumerate(forward(net, w, stop=0)[0]):
            d = 1 + len(still_open(w[:t], k, depth))  # type: ignore[arg-type]
            want = (Fraction(d, t + 1), Fraction(1, t + 1))
            if (row["a1"], row["a2"]) != want:
                return f"at i={t + 1} (a₁, a₂) = ({row['a1']}, {row['a2']}), the statement's {want}"
        return None

    holds = "(a₁, a₂) = (d_i/i, 1/i) at every position of all {count} prefixes"
    return sweep(rec, net, max_words, lambda n: fault, holds, words=words)


def _at_least(x: tuple[int, int], y: tuple[int, int], t: Fraction) -> bool:
    """y − x >= t exactly, for x = a/√A and y = b/√B with a, b >= 0 and t > 0: y >= x + t >= 0
    iff y² >= (x + t)², i.e. L = b²/B − a²/A − t² >= 2t·a/√A >= 0, i.e. L >= 0 and
    L² >= 4t²a²/A."""
    (a, big_a), (b, big_b) = x, y
    rest = Fraction(b * b, big_b) - Fraction(a * a, big_a) - t * t
    return rest >= 0 and rest * rest >= 4 * t * t * Fraction(a * a, big_a)


def _theta(d: int, depth: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """θ(d) = atan2(d, D + 2 − d): (cos, sin) as (numerator, square of the denominator)."""
    w = (depth + 2 - d) ** 2 + d * d
    return (depth + 2 - d, w), (d, w)


EQ7 = (
    "eq. (7): for every D <= 80 and a, b ∈ {0..D+1}, cos(θ(a) − θ(b)) = 1 if a = b and < 1 − "
    "1/(10D²) otherwise (so the layer-2 score separates: 20D²(1 − 1/(10D²)) + 3 = 20D² + 1 < "
    "20D² + 2 + j/n)"
)
GAPS = (
    "the gaps between consecutive sin θ(d) on {0..D+1} are >= 0.44/D² and those of cos θ(d) on "
    "{0..D+2} are >= 0.1/D², for every D <= 500"
)


def check_fact(rec: dict[str, Any]) -> str:
    """Rules (facts about θ(d) = atan2(d, D + 2 − d), the angle of (D + 2 − d, d)), each case
    decided in rationals: EQ7: cos(θ(a) − θ(b)) = u·v/(|u||v|) for u, v the two vectors, = 1
    iff (u·v)² = |u|²|v|² with u·v > 0, and < t = 1 − 1/(10D²) iff u·v < 0 or (u·v)² < t²|u|²|v|²;
    and 20D²·t + 3 = 20D² + 1 < 20D² + 2 <= 20D² + 2 + j/n (j/n >= 0). GAPS: |y − x| >= t for
    consecutive values x = a/√A, y = b/√B (``_at_least``, one way or the other). ``checked``
    must be the number of cases (pairs a, b; gaps)."""
    eq7, cases = rec["claim"]["statement"] == EQ7, 0
    for depth in range(1, 81 if eq7 else 501):
        t = 1 - Fraction(1, 10 * depth * depth)
        if eq7 and not 20 * depth * depth * t + 3 == 20 * depth * depth + 1:
            raise KernelError(f"D = {depth}: 20D²(1 − 1/(10D²)) + 3 is not 20D² + 1")
        vec = [(depth + 2 - a, a) for a in range(depth + 2)] if eq7 else []
        for (a, u), (b, v) in itertools.product(enumerate(vec), repeat=2):
            cases += 1
            dot, uv = u[0] * v[0] + u[1] * v[1], (u[0] ** 2 + u[1] ** 2) * (v[0] ** 2 + v[1] ** 2)
            one, below = dot > 0 and dot * dot == uv, dot <= 0 or dot * dot < t * t * uv
            if not (one if a == b else below):
                raise KernelError(f"the record says proved, but eq. (7) fails: D={depth}, {a}, {b}")
        gaps = [] if eq7 else [(1, depth + 1, Fraction(44, 100)), (0, depth + 2, Fraction(1, 10))]
        for which, top, at_least in gaps:
            gap = at_least / (depth * depth)
            for d in range(top):
                cases += 1
                x, y = _theta(d, depth)[which], _theta(d + 1, depth)[which]
                if not (_at_least(x, y, gap) or _at_least(y, x, gap)):
                    raise KernelError(f"the record says proved, but D={depth}, d={d}: gap < {gap}")
    must_be_proved(rec, cases, f"all {cases} cases hold")
    return f"proved: all {cases} cases, each decided in rationals"


def check(rec: dict[str, Any], net: Any, kind: str, method: str, max_words: int) -> str:
    """A generator's record: Y6 by ``check_layer1``; any other claim of a network the kernel's
    interpreter cannot run (on the empty word) is refused with the interpreter's reason."""
    exhaustive = method.startswith("exhaustive (")
    if kind == "TraceProperty" and exhaustive and LAYER1.fullmatch(rec["claim"]["statement"]):
        return check_layer1(rec, net, max_words)
    if "of every valid γuω, d = 1 + depth" in rec["claim"]["statement"]:
        raise Refused(
            "layer 1 over the words γuω (ω read as a closing bracket): the kernel's rule reads prefixes"
        )
    forward(net, net.alphabet[:1])  # Refused with the reason (√, e^c) where values are irrational
    raise Refused(f"claim kind {kind} by {method} of a generator")
