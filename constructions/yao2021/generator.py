"""Yao et al. 2021's two-layer generator of Dyck(k, D) (Theorem 4.2, §5.2 and Appendix B).

Owns :func:`dyck_generator`, the angles θ(d) with their proved rational brackets
(:func:`theta`, :func:`bracket_sqrt_ratio`) and the rational thresholds of its FFN 2
(:class:`GeneratorConstants`). May import: the IR and its builders, the gate compiler, and the
recognizer's token conventions (:mod:`netproof.constructions.yao2021.recognizer`); never an
interpreter or an engine.

The generator (spec §3.4). Its Appendix B is partly
unreadable in the source and partly wrong; the network here is rebuilt as the spec verified it:

6. Lemma B.1 uses layer norm with ε = 0 on an 8-dim vector with mean 0, giving
   2(−sin θ, −cos θ, sin θ, cos θ, 0…) (the paper's factors ½ fit another width); the output
   takes positive minus negative halves, which is sign-safe. With PyTorch's ε = 1e−5 the
   output shrinks for long prefixes (the spec measured 282 wrong sets at length 326).
7. B.2 tests "d_{i1} = sin θ(D)" on the *cos* coordinate, and with γ counted as an open the
   depth-D test must be d = D + 1: read literally, opens are forbidden one level early.
   The paper's output matrix has no row for ω, so the string can never end. ``variant=paper``
   keeps these two (shortest counterexample: the empty prefix, where ω is not allowed).
8. Equality with the irrational sin θ(D+1) (and, for G2, cos θ(1)) is not a rational weight:
   the network uses GT(x, r; c) with a rational r and margin c between consecutive values of θ,
   each proved against exact rational brackets of θ (claim Y11-net).
9. λ = ln(2k+1) + 1 makes the output base e(2k+1), irrational; base 3(2k+1) does the same
   job with rational probabilities (:func:`output_base`).
10. The soft layer 2 with λ₂ = c·n·ln n: the spec sampled n ≈ 50–714 and found c ≥ 0.5 enough.
   Exhaustively on short prefixes it is not: with k = 2, D = 3, c = 1/2 allows the wrong set
   after γ()[ (n = 4: the earlier same-depth open is only 2/n below the top and keeps weight
   1/4) and c = 1/4 after γ() (n = 3). c = 1 is proved for k <= 2, D <= 3 up to inner length 8.
(Errata 1–5 are the recognizer's, in :mod:`netproof.constructions.yao2021.recognizer`.)
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    NextSymbols,
    Scale,
    Softmax,
    Sublayer,
    affine,
    constant,
    ffn,
    layernorm,
    token_embedding,
)
from netproof.symbolic.gates import (
    AND,
    EQ,
    GT,
    NOR,
    NOT,
    OR,
    Node,
    compile_ffn,
    const,
    var,
)

from .recognizer import END, START, check_k_depth, symbols, type_bits

__all__ = [
    "READINGS",
    "GeneratorConstants",
    "bracket_sqrt_ratio",
    "dyck_generator",
    "gt_threshold",
    "min_gap",
    "output_base",
    "theta",
]

# θ(d) = atan2(d, D + 2 − d): cos θ(d) = (D + 2 − d)/√N(d), sin θ(d) = d/√N(d) with
# N(d) = (D + 2 − d)² + d². Such numbers u/√w are compared with rationals exactly: a rational
# bracket L <= u/√w <= U comes from an integer square root, and every threshold of the network
# is checked against these brackets (nothing is rounded without a proof).


def theta(d: int, depth: int) -> tuple[tuple[Fraction, Fraction], tuple[Fraction, Fraction]]:
    """((u, w) of cos θ(d), (u, w) of sin θ(d)): the value is u/√w, exactly."""
    a, b = Fraction(depth + 2 - d), Fraction(d)
    w = a * a + b * b
    return (a, w), (b, w)


def bracket_sqrt_ratio(u: Fraction, w: Fraction, digits: int = 30) -> tuple[Fraction, Fraction]:
    """Rationals L <= u/√w <= U with U − L about 10^−digits·|u/√w| (w > 0), proved by integer
    square roots.

    >>> lo, hi = bracket_sqrt_ratio(Fraction(1), Fraction(2), 6)
    >>> lo <= Fraction(7071067, 10**7) <= hi and hi - lo < Fraction(1, 10**5)
    True
    """
    if w <= 0:
        raise ValueError(f"w={w} must be > 0")
    scale = 10**digits
    num, den = w.numerator, w.denominator
    root = math.isqrt(num * den * scale * scale)  # root <= √(w)·den·scale < root + 1
    lo_sqrt, hi_sqrt = Fraction(root, den * scale), Fraction(root + 1, den * scale)
    if lo_sqrt == 0:
        return bracket_sqrt_ratio(u, w, digits + 10)
    if u >= 0:
        return u / hi_sqrt, u / lo_sqrt
    return u / lo_sqrt, u / hi_sqrt


def _decimal_between(lo_upper: Fraction, hi_lower: Fraction) -> tuple[Fraction, Fraction]:
    """A short decimal r >= lo_upper and a margin c > 0 with r + c <= hi_lower."""
    gap = hi_lower - lo_upper
    if gap <= 0:
        raise ValueError(f"no room between {lo_upper} and {hi_lower}")
    m = 0
    while Fraction(1, 10**m) > gap / 4:
        m += 1
    unit = Fraction(1, 10**m)
    r = math.ceil(lo_upper / unit) * unit
    c = math.floor((hi_lower - r) / 2 / unit) * unit
    assert r >= lo_upper and c > 0 and r + c <= hi_lower
    return r, c


def gt_threshold(
    lower: tuple[Fraction, Fraction], upper: tuple[Fraction, Fraction]
) -> tuple[Fraction, Fraction]:
    """(r, c) with x_lo <= r and r + c <= x_hi for x = u/√w given as (u, w): GT(x, r; c) is then
    0 at x_lo (and below) and 1 at x_hi (and above)."""
    _lo_l, lo_u = bracket_sqrt_ratio(*lower)
    hi_l, _hi_u = bracket_sqrt_ratio(*upper)
    return _decimal_between(lo_u, hi_l)


def min_gap(values: list[tuple[Fraction, Fraction]]) -> Fraction:
    """A rational lower bound of the smallest distance between consecutive values u/√w (given
    in increasing or decreasing order), proved by rational brackets."""
    brackets = [bracket_sqrt_ratio(u, w) for u, w in values]
    gaps = []
    for (l1, u1), (l2, u2) in itertools.pairwise(brackets):
        gaps.append(max(l2 - u1, l1 - u2))
    g = min(gaps)
    if g <= 0:
        raise ValueError("two values are too close to separate at 30 digits")
    return g


def _nice_below(x: Fraction) -> Fraction:
    """The largest decimal with two significant digits that is <= x (x > 0)."""
    m = 0
    while Fraction(1, 10**m) * 10 > x:
        m += 1
    unit = Fraction(1, 10 ** (m + 1))
    return math.floor(x / unit) * unit


class GeneratorConstants:
    """The rational thresholds of Theorem 4.2's FFN 2 for depth D, each proved against the exact
    values of θ (spec §3.4, with EQ against the irrational sin θ(D+1) replaced by a GT at a
    rational threshold between sin θ(D) and sin θ(D+1): the same test on every valid prefix,
    and rational).

    >>> c = GeneratorConstants(2)
    >>> c.full_r, c.full_c, c.end_r, c.end_c, c.eq_c
    (Fraction(71, 100), Fraction(11, 100), Fraction(71, 100), Fraction(11, 100), Fraction(513, 10000))
    """

    def __init__(self, depth: int, *, full_at: int | None = None) -> None:
        D = depth
        at = D + 1 if full_at is None else full_at
        sin = [theta(d, D)[1] for d in range(D + 3)]
        cos = [theta(d, D)[0] for d in range(D + 3)]
        self.full_r, self.full_c = gt_threshold(sin[at - 1], sin[at])
        self.end_r, self.end_c = gt_threshold(cos[2], cos[1])
        self.eq_c = _nice_below(min_gap(cos))


READINGS = ("G1", "G2")


def output_base(k: int) -> Fraction:
    """The base r = e^λ of the output softmax: 3(2k + 1), i.e. λ = ln(3(2k+1)).

    The paper takes λ = ln(2k + 1) + 1 = ln(e(2k + 1)), an irrational base; any base r > 2k + 1
    does the job (an allowed symbol gets >= 1/(k + 1 + k/r) > 1/(2k + 1) = ε, a forbidden one
    <= 1/r < ε), so 3 stands in for e and the probabilities stay rational.
    """
    return Fraction(3 * (2 * k + 1))


def dyck_generator(
    *,
    k: int,
    depth: int,
    reading: str = "G1",
    lambda2: Fraction | None = None,
    variant: str = "fixed",
    pos_norm: int | None = None,
) -> Network:
    """Theorem 4.2's two-layer generator of Dyck(k, D) (spec §3.4, rebuilt where the paper's
    Appendix B is unreadable or wrong).

    Representation: [t (B bits), o, p = i/n, g = I[γ], (G2: q = 1/n), a₁, a₂, cθ, sθ, (G2: cφ,
    sφ), top (B bits), open_ok, end_ok, one score per output symbol]. Positions i = 1..n with γ
    at 1; n counts γ and, when the string is complete, ω.

    - Layer 1: a uniform causal soft head with value (2o − 1, g): (a₁, a₂) = (d/i, 1/i) with
      d = 1 + depth (γ counts as an open).
    - FFN 1 (Lemma B.1): z = (−a₁, a₁ − (D+2)a₂, a₁, (D+2)a₂ − a₁, 0, 0, 0, 0), layer norm with
      ε = 0 (→ 2(−sin θ, −cos θ, sin θ, cos θ, 0…), θ = atan2(d, D+2−d)), ReLU,
      cθ = (h₄ − h₂)/2, sθ = (h₃ − h₁)/2. G2: a second branch on 1 − p and q gives θ(n − i).
    - Layer 2: a hard causal head, score 20D²·cos(θ_i − θ_j) + p_j + 2o_j: the stack top (γ if
      the stack is empty). ``lambda2=c`` makes it soft with temperature c·n·ln n.
    - FFN 2 + output: full = GT(sθ, r; c) (depth D; a rational threshold between sin θ(D) and
      sin θ(D+1)), open_ok = NOT full [G2: NOT OR(full, EQ(cφ, cθ))], end_ok = NOR(top)
      [G2: AND(NOR(top), GT(cφ, ·)) for n − i = 1]; scores B·open_ok (opens),
      Σ_b [code_b = top_b] (closes), B·end_ok (ω, the row the paper lacks); softmax with base
      3(2k+1) and ε = 1/(2k+1).

    ``variant="paper"`` keeps the two tests the paper's B.2 gets wrong: the open test at
    d = D (with γ counted, opens are forbidden one level early) and no ω row (ω is never
    allowed). G2 is meant for even n (γ, a balanced word, ω); for odd n no string exists.

    ``pos_norm=N`` (G1 only) replaces p = i/n by the fixed p = i/N of the experiments' code
    (Appendix D: "pos/n" is i/6000, MAX_LEN = 6000; spec §3.7). The layer-2 argmax needs
    p_j ≤ 1, so the network is right for n ≤ N; exactly it is the same generator, but the
    tie-breaking gap between two opens of one depth shrinks to 1/N against scores of size 20D²,
    which is what float32 cannot hold at D = 10, N = 6000 (spec §3.6; ``netproof precision``).

    >>> from netproof.symbolic.interval import run
    >>> run(dyck_generator(k=2, depth=2), "([").next_symbols[-1]
    (']',)
    >>> run(dyck_generator(k=2, depth=2), "()").next_symbols[-1]
    ('(', '[', 'ω')
    """
    check_k_depth(k, depth)
    if variant not in ("fixed", "paper"):
        raise ValueError(f"variant={variant!r} must be fixed or paper")
    if reading not in READINGS:
        raise ValueError(
            f"reading={reading!r} must be G1 (length-unaware) or G2 (length-aware, 1/n in the PE)"
        )
    if pos_norm is not None and (
        isinstance(pos_norm, bool) or not isinstance(pos_norm, int) or pos_norm < 1
    ):
        raise ValueError(
            f"pos_norm={pos_norm!r} must be a positive int N (p = i/N) or None (p = i/n)"
        )
    if pos_norm is not None and reading == "G2":
        raise ValueError(
            f"pos_norm={pos_norm} needs reading=G1: G2 reads n − i from p = i/n and q = 1/n; use pos_norm=None with G2"
        )
    if lambda2 is not None and (not isinstance(lambda2, Fraction) or lambda2 <= 0):
        raise ValueError(
            f"lambda2={lambda2} must be a positive Fraction (the c of λ₂ = c·n·ln n) or None (hard attention)"
        )
    D, B = depth, type_bits(k)
    g2 = reading == "G2"
    fixed = variant == "fixed"
    consts = GeneratorConstants(D, full_at=None if fixed else D)
    tb = [f"t{b}" for b in range(B)]
    top = [f"top{b}" for b in range(B)]
    pairs = symbols(k)
    out_symbols = [s for pair in pairs for s in pair] + ([END] if fixed else [])
    score = {s: f"score:{s}" for s in out_symbols}
    dims = (
        *tb,
        "o",
        "p",
        "g",
        *(["q"] if g2 else []),
        "a1",
        "a2",
        "cθ",
        "sθ",
        *(["cφ", "sφ"] if g2 else []),
        *top,
        "open_ok",
        "end_ok",
        *score.values(),
    )

    table: dict[str, dict[str, int]] = {}
    for tau, (op, cl) in enumerate(pairs, start=1):
        code = {tb[b]: (tau >> b) & 1 for b in range(B)}
        table[op] = {**code, "o": 1}
        table[cl] = dict(code)
    table[START] = {"o": 1, "g": 1}
    table[END] = {}
    p_feature: str | tuple[str, Fraction] = (
        "i/n" if pos_norm is None else ("i", Fraction(1, pos_norm))
    )
    positional: dict[str, str | tuple[str, Fraction]] = {
        "p": p_feature,
        **({"q": "1/n"} if g2 else {}),
    }
    emb = token_embedding(
        (*(s for pair in pairs for s in pair), END),
        table,
        positional=positional,
        prefix=(START,),
        index_base=1,
    )

    count = Head(
        name="count",
        query=constant({}),
        key=constant({}),
        value=affine({"a1": {"o": 2}, "a2": {"g": 1}}, bias={"a1": -1}),
        normalizer=Softmax(r=Fraction(2)),
        mask="causal",
    )
    Dp2 = D + 2
    zs = [f"z{j}" for j in range(1, 9)]
    ws = [f"w{j}" for j in range(1, 9)]
    rows: dict[str, dict[str, int]] = {
        "z1": {"a1": -1},
        "z2": {"a1": 1, "a2": -Dp2},
        "z3": {"a1": 1},
        "z4": {"a1": -1, "a2": Dp2},
    }
    bias: dict[str, int] = {}
    outs = list(zs)
    norms = [layernorm(0, zs)]
    unpack = {
        "cθ": {"z4": Fraction(1, 2), "z2": Fraction(-1, 2)},
        "sθ": {"z3": Fraction(1, 2), "z1": Fraction(-1, 2)},
    }
    if g2:
        # 1 − p = (n − i)/n and q = 1/n play the roles of d/i and 1/i: θ(n − i).
        rows |= {
            "w1": {"p": 1},
            "w2": {"p": -1, "q": -Dp2},
            "w3": {"p": -1},
            "w4": {"p": 1, "q": Dp2},
        }
        bias |= {"w1": -1, "w2": 1, "w3": 1, "w4": -1}
        outs += ws
        norms.append(layernorm(0, ws))
        unpack |= {
            "cφ": {"w4": Fraction(1, 2), "w2": Fraction(-1, 2)},
            "sφ": {"w3": Fraction(1, 2), "w1": Fraction(-1, 2)},
        }
    inputs = ["a1", "a2", *(["p", "q"] if g2 else [])]
    angle = ffn(
        "angle",
        affine(rows, inputs=inputs, bias=bias, outputs=outs),
        *norms,
        RELU,
        affine(unpack, inputs=outs),
    )

    big = 20 * D * D
    match_head = Head(
        name="match",
        query=affine(
            {"k1": {"cθ": big}, "k2": {"sθ": big}},
            bias={"k3": 1, "k4": 2},
            outputs=["k1", "k2", "k3", "k4"],
        ),
        key=affine({"k1": {"cθ": 1}, "k2": {"sθ": 1}, "k3": {"p": 1}, "k4": {"o": 1}}),
        value=affine({top[b]: {tb[b]: 1} for b in range(B)}),
        normalizer=Hardmax(tie="average") if lambda2 is None else Softmax(c=Fraction(1)),
        scale=Scale() if lambda2 is None else Scale(coef=lambda2, times_n=True, log_n=True),
        mask="causal",
    )

    full = GT(var("sθ"), const(consts.full_r), consts.full_c)
    no_top = NOR(*(var(d) for d in top))
    if g2:
        gates: dict[str, Node] = {
            "open_ok": NOT(OR(full, EQ(var("cφ"), var("cθ"), consts.eq_c))),
            "end_ok": AND(no_top, GT(var("cφ"), const(consts.end_r), consts.end_c)),
        }
    else:
        gates = {"open_ok": NOT(full), "end_ok": no_top}
    out_rows: dict[str, dict[str, int]] = {}
    out_bias: dict[str, int] = {}
    for tau, (op, cl) in enumerate(pairs, start=1):
        out_rows[score[op]] = {"open_ok": B}
        bits = [(tau >> b) & 1 for b in range(B)]
        # Σ_b code_b·top_b + (1 − code_b)(1 − top_b): B iff top = code(τ).
        out_rows[score[cl]] = {top[b]: 1 if bits[b] else -1 for b in range(B)}
        out_bias[score[cl]] = sum(1 - c for c in bits)
    if fixed:
        out_rows[score[END]] = {"end_ok": B}
    layers = (
        Sublayer(block=AttentionLayer(name="depth", heads=(count,))),
        Sublayer(block=angle),
        Sublayer(block=AttentionLayer(name="top", heads=(match_head,))),
        Sublayer(block=compile_ffn("tests", gates)),
        Sublayer(block=ffn("output", affine(out_rows, bias=out_bias))),
    )
    readout = NextSymbols(
        scores=tuple((s, score[s]) for s in out_symbols),
        threshold=Fraction(1, 2 * k + 1),
        softmax=Softmax(r=output_base(k), symbol="e^λ"),
        end=END if fixed else None,
    )
    params = [
        ("k", str(k)),
        ("depth", str(depth)),
        ("reading", reading),
        ("lambda2", "hard" if lambda2 is None else str(lambda2)),
        ("variant", variant),
    ]
    if pos_norm is not None:
        params.append(("pos_norm", str(pos_norm)))
    return Network(
        name="dyck-gen",
        dims=dims,
        embedding=emb,
        layers=layers,
        readout=readout,
        params=tuple(params),
        reference="Yao et al. 2021, §5.2 and Appendix B, Theorem 4.2",
    )
