"""Yao, Peng, Papadimitriou & Narasimhan 2021, *Self-Attention Networks Can Process Bounded
Hierarchical Languages*: the (D+1)-layer hard-attention recognizer of Dyck(k, D) (Theorem 4.1)
and the gates of Lemma A.1.

Owns the recognizer's network (:func:`dyck_recognizer`), the gate network (:func:`gate_network`)
and the token conventions both networks share (γ, ω, :func:`symbols`, :func:`type_bits`).
May import: the IR, its builders and gate compiler (:mod:`netproof.symbolic`,
:mod:`netproof.symbolic.gates`) and Dyck(k, D) from the vocabulary
(:mod:`netproof.verifier.claims.dyck`); never an interpreter or an engine.

Representation (spec ``chiang2022_yao2021.md`` §3.3): x_i = [t_i (B bits), o_i, p_i, m_i, e_i],
with t the binary code of the bracket type (code 0 for the start token γ and the end token ω, so
that γ "matches" ω), o = 1 for open brackets and γ, p_i = i/n (positions 1..n, n counting γ and
ω), m = "matched", e = "error". Matching layers ℓ = 1..D each attend, with hard attention, to
the nearest unmatched token on the left (score p_j − m_j, mask j < i) and on the right (score
−p_j − m_j, mask j > i), then a ReLU gate circuit (Lemma A.1) updates m and e. The final layer
attends from ω to any unmatched or erroneous token (score e_j − m_j + 1) and accepts iff none.

Errata of the paper and the fixes used (``variant=fixed``; ``variant=paper`` builds the printed
version so its counterexamples can be seen):

1. §5.1's FFN pairs s₁ = SAME(t_i, t_{j₁}) with the right neighbour j₂ and s₂ with j₁: the indices
   are swapped (an open bracket must compare its type with its *right* partner).
2. The FFN has no ¬m_i / ¬m_j guards: an already matched token meets an outer unmatched close in
   a later layer and sets e = 1, so valid strings such as ``([])`` are rejected for D ≥ 2.
3. γ and ω start unmatched (m = 0) and need a matching layer of their own: with D matching layers
   depth-D strings such as ``()`` at D = 1 are rejected. Fix: start γ and ω as matched.
4. t_i ∈ ℝ^{⌈log k⌉} has 0 bits for k = 1 and cannot tell γ/ω from brackets: B = max(1, ⌈log₂(k+1)⌉)
   bits with code 0 reserved for γ/ω (both variants use B; the paper variant keeps 1–3).
5. Masks are strict (j < i, j > i); an empty masked set (γ's left, ω's right) yields the zero
   vector.

At k = 1, D = 1 the printed version rejects ``()`` (the shortest counterexample, erratum 3)
and accepts ``)(``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from netproof.symbolic import (
    AttentionLayer,
    FlatEmbedding,
    Hardmax,
    Head,
    Network,
    Sublayer,
    affine,
    classifier,
    constant,
    token_embedding,
)
from netproof.symbolic.gates import (
    AND,
    EQ,
    GT,
    NOT,
    OR,
    SAME,
    XNOR,
    Node,
    compile_ffn,
    var,
)
from netproof.verifier.claims.dyck import dyck_alphabet

__all__ = [
    "END",
    "START",
    "check_k_depth",
    "dyck_recognizer",
    "gate_network",
    "symbols",
    "type_bits",
]

START, END = "γ", "ω"


def symbols(k: int) -> tuple[tuple[str, str], ...]:
    """(open, close) symbols of types 1..k: ``()[]{}<>`` for k <= 4, else ``(1 )1 (2 )2 ...``."""
    alpha = dyck_alphabet(k)
    return tuple(zip(alpha[0::2], alpha[1::2], strict=True))


def type_bits(k: int) -> int:
    """B = max(1, ⌈log₂(k+1)⌉): enough bits for the codes 1..k plus code 0 for γ/ω."""
    return max(1, math.ceil(math.log2(k + 1)))


def check_k_depth(k: int, depth: int) -> None:
    """Raise ``ValueError`` unless k (bracket types) and depth (D) are integers >= 1."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k={k!r} must be an integer >= 1 (the number of bracket types)")
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"depth={depth!r} must be an integer >= 1 (the maximal nesting depth D)")


def dyck_recognizer(*, k: int, depth: int, variant: str = "fixed") -> Network:
    """The (D+1)-layer hard-attention recognizer of Dyck(k, D).

    Reference: Yao et al. 2021, §5.1, Theorem 4.1; gates from Lemma A.1.
    Invariant (fixed variant): after matching layer ℓ, m_i = 1 iff token i's partner exists and
    their pair has height <= ℓ; e_i = 1 marks a type mismatch between nearest unmatched brackets.
    Erratum: see the module docstring (swapped SAME indices, missing ¬m guards, γ/ω start
    unmatched, ⌈log k⌉ bits); ``variant="paper"`` builds the printed version.

    >>> from netproof.symbolic.exact import run
    >>> run(dyck_recognizer(k=2, depth=2), "([])[]").accepted
    True
    >>> run(dyck_recognizer(k=1, depth=1, variant="paper"), ")(").accepted   # the paper accepts it
    True
    """
    check_k_depth(k, depth)
    if variant not in ("fixed", "paper"):
        raise ValueError(f"variant={variant!r} must be fixed or paper")
    fixed = variant == "fixed"
    B = type_bits(k)
    tb = [f"t{b}" for b in range(B)]
    base = (*tb, "o", "p", "m", "e")
    left = tuple(f"l:{d}" for d in (*tb, "o", "m"))
    right = tuple(f"r:{d}" for d in (*tb, "o", "m"))
    dims = (*base, *left, *right, "a1", "a2", "y")

    table: dict[str, dict[str, int]] = {}
    for tau, (op, cl) in enumerate(symbols(k), start=1):
        code = {tb[b]: (tau >> b) & 1 for b in range(B)}
        table[op] = {**code, "o": 1}
        table[cl] = dict(code)
    table[START] = {"o": 1, "m": 1 if fixed else 0}
    table[END] = {"m": 1 if fixed else 0}
    alphabet = tuple(s for pair in symbols(k) for s in pair)
    emb = token_embedding(
        alphabet, table, positional={"p": "i/n"}, prefix=(START,), suffix=(END,), index_base=1
    )

    def neighbour(name: str, score: Mapping[str, int], mask: str) -> Head:
        return Head(
            name=name,
            query=constant({"q": 1}),
            key=affine({"q": dict(score)}),
            value=affine({f"{name[0]}:{d}": {d: 1} for d in (*tb, "o", "m")}),
            normalizer=Hardmax(tie="average"),
            mask=mask,  # type: ignore[arg-type]
        )

    t = [var(d) for d in tb]
    lt = [var(f"l:{d}") for d in tb]
    rt = [var(f"r:{d}") for d in tb]
    m, e, o = var("m"), var("e"), var("o")
    lo, lm, ro, rm = var("l:o"), var("l:m"), var("r:o"), var("r:m")
    keep: dict[str, Node] = {d: var(d) for d in (*tb, "o", "p")}
    if fixed:
        rg = AND(NOT(m), o, NOT(ro), NOT(rm))
        lg = AND(NOT(m), NOT(o), lo, NOT(lm))
        s_r, s_l = SAME(t, rt), SAME(t, lt)
        update = {
            "m": OR(m, AND(rg, s_r), AND(lg, s_l)),
            "e": OR(e, AND(rg, NOT(s_r)), AND(lg, NOT(s_l))),
        }
    else:
        s1, s2 = SAME(t, lt), SAME(t, rt)  # as printed: s₁ uses j₁ (left), s₂ uses j₂ (right)
        update = {
            "m": OR(m, AND(o, NOT(ro), s1), AND(NOT(o), lo, s2)),
            "e": OR(e, AND(o, NOT(ro), NOT(s1)), AND(NOT(o), lo, NOT(s2))),
        }
    logic = {**keep, **update}

    layers: list[Sublayer] = []
    for ell in range(1, depth + 1):
        heads = (
            neighbour("left", {"p": 1, "m": -1}, "strict_causal"),
            neighbour("right", {"p": -1, "m": -1}, "strict_anticausal"),
        )
        layers.append(Sublayer(block=AttentionLayer(name=f"match{ell}", heads=heads)))
        layers.append(Sublayer(block=compile_ffn(f"logic{ell}", logic), residual=False))
    final = Head(
        name="any_open_or_error",
        query=constant({"q": 1}),
        key=affine({"q": {"e": 1, "m": -1}}, bias={"q": 1}),
        value=affine({"a1": {"e": 1}, "a2": {"m": 1}}),
        normalizer=Hardmax(tie="average"),
    )
    layers.append(Sublayer(block=AttentionLayer(name="final", heads=(final,))))
    layers.append(Sublayer(block=compile_ffn("accept", {"y": AND(NOT(var("a1")), var("a2"))})))
    return Network(
        name="dyck",
        dims=dims,
        embedding=emb,
        layers=tuple(layers),
        readout=classifier({"y": 1}, position=-1, bias=Fraction(-1, 2)),
        params=(("k", str(k)), ("depth", str(depth)), ("variant", variant)),
        reference="Yao et al. 2021, §5.1, Theorem 4.1",
    )


def gate_network(*, margin: Fraction = Fraction(1, 10), variant: str = "fixed") -> Network:
    """Lemma A.1's gates side by side, one FFN sublayer each, so that each can be checked.

    Inputs: the bits a1..a4 (a word of length 4 over {0, 1}) and two reals x, y (0 when run on a
    word; the claims quantify over all reals with z3). ``variant="paper"`` builds SAME as the
    extracted text reads it, with OR between the bits: wrong on 8 of the 16 inputs for 2 bits.

    >>> from netproof.symbolic.exact import run
    >>> t = run(gate_network(), "1011")
    >>> [t.value("same", 0, "SAME(a1a2,a3a4)"), t.value("and", 0, "AND(a1,a2,a3)")]
    [Fraction(0, 1), Fraction(0, 1)]
    """
    a = [var(f"a{i}") for i in range(1, 5)]
    x, y = var("x"), var("y")
    if variant == "paper":
        same: Node = OR(XNOR(a[0], a[2]), XNOR(a[1], a[3]))
    else:
        same = SAME(a[:2], a[2:])
    gates: dict[str, tuple[str, Node]] = {
        "and": ("AND(a1,a2,a3)", AND(a[0], a[1], a[2])),
        "or": ("OR(a1,a2,a3)", OR(a[0], a[1], a[2])),
        "not": ("NOT(a1)", NOT(a[0])),
        "xnor": ("XNOR(a1,a2)", XNOR(a[0], a[1])),
        "same": ("SAME(a1a2,a3a4)", same),
        "gt": ("GT(x,y)", GT(x, y, margin)),
        "eq": ("EQ(x,y)", EQ(x, y, margin)),
    }
    dims = ("a1", "a2", "a3", "a4", "x", "y", *(d for d, _ in gates.values()))
    return Network(
        name="gates",
        dims=dims,
        embedding=FlatEmbedding(
            alphabet=("0", "1"),
            length=4,
            values=(("0", Fraction(0)), ("1", Fraction(1))),
            prefix="a",
        ),
        layers=tuple(
            Sublayer(block=compile_ffn(name, {d: node})) for name, (d, node) in gates.items()
        ),
        readout=classifier({"SAME(a1a2,a3a4)": 1}, bias=Fraction(-1, 2)),
        params=(("margin", str(margin)), ("variant", variant)),
        reference="Yao et al. 2021, Appendix A, Lemma A.1",
    )
