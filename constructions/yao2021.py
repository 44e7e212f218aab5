"""Yao, Peng, Papadimitriou & Narasimhan 2021, *Self-Attention Networks Can Process Bounded
Hierarchical Languages*: the (D+1)-layer hard-attention recognizer of Dyck(k, D) (Theorem 4.1).

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

The printed version accepts ``)(`` (k = 1, D = 1), the shortest counterexample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Sublayer,
    affine,
    classifier,
    constant,
    token_embedding,
)
from symbolic import FlatEmbedding
from symbolic.gates import AND, EQ, GT, NOT, OR, SAME, XNOR, Node, compile_ffn, var

from .dyck import DYCK, dyck_alphabet

START, END = "γ", "ω"


def symbols(k: int) -> tuple[tuple[str, str], ...]:
    """(open, close) symbols of types 1..k: ``()[]{}<>`` for k <= 4, else ``(1 )1 (2 )2 ...``."""
    alpha = dyck_alphabet(k)
    return tuple(zip(alpha[0::2], alpha[1::2], strict=True))


def type_bits(k: int) -> int:
    """B = max(1, ⌈log₂(k+1)⌉): enough bits for the codes 1..k plus code 0 for γ/ω."""
    return max(1, math.ceil(math.log2(k + 1)))


def _check(k: int, depth: int) -> None:
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

    >>> from symbolic.exact import run
    >>> run(dyck_recognizer(k=2, depth=2), "([])[]").accepted
    True
    >>> run(dyck_recognizer(k=1, depth=1, variant="paper"), ")(").accepted   # the paper accepts it
    True
    """
    _check(k, depth)
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

    >>> from symbolic.exact import run
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
        embedding=FlatEmbedding(alphabet=("0", "1"), length=4, values=(("0", Fraction(0)), ("1", Fraction(1))), prefix="a"),
        layers=tuple(Sublayer(block=compile_ffn(name, {d: node})) for name, (d, node) in gates.items()),
        readout=classifier({"SAME(a1a2,a3a4)": 1}, bias=Fraction(-1, 2)),
        params=(("margin", str(margin)), ("variant", variant)),
        reference="Yao et al. 2021, Appendix A, Lemma A.1",
    )


# =========================================================================== claims

import sympy  # noqa: E402

from verifier.claims import (  # noqa: E402  (claims come after the networks they speak of)
    VARIANT,
    BlockIdentity,
    Claim,
    Construction,
    Param,
    Recognizes,
    TraceProperty,
    parse_fraction,
    parse_int,
)

def default_max_len(k: int) -> int:
    """The spec's exhaustive bound |u| <= 6, lowered while Σ^{<=|u|} has more than 6000 words
    (k >= 3) so that the default proof stays within a minute of exact evaluation."""
    n = 6
    while n > 2 and sum((2 * k) ** i for i in range(n + 1)) > 6000:
        n -= 1
    return n


def pair_heights(word: tuple[str, ...], k: int) -> dict[int, int]:
    """Token index (γ = 0, so symbol i of the word is token i + 1) -> height of its bracket pair
    (1 + the largest height of the pairs nested directly inside), for the matched pairs of a
    valid word."""
    opens = {op for op, _cl in symbols(k)}
    stack: list[tuple[int, int]] = []  # (token index of the open, largest child height)
    heights: dict[int, int] = {}
    for i, s in enumerate(word, start=1):
        if s in opens:
            stack.append((i, 0))
        elif stack:
            j, child = stack.pop()
            heights[i] = heights[j] = child + 1
            if stack:
                pj, pc = stack[-1]
                stack[-1] = (pj, max(pc, child + 1))
    return heights


def _previous_state(ell: int) -> str:
    return "input" if ell == 1 else f"logic{ell - 1}"


def _neighbours_hold(depth: int) -> object:
    def holds(word: tuple[str, ...], trace: object) -> str | None:
        n = trace.n  # type: ignore[attr-defined]
        for sel in trace.selections:  # type: ignore[attr-defined]
            if not sel.layer.startswith("match"):
                continue
            ell = int(sel.layer[len("match"):])
            m = [trace.value(_previous_state(ell), t, "m") for t in range(n)]  # type: ignore[attr-defined]
            t = sel.position
            side = range(t - 1, -1, -1) if sel.head == "left" else range(t + 1, n)
            candidates = list(side)
            if not candidates:
                if sel.selected != ():
                    return f"{sel.layer} {sel.head} head at token {t}: selects {sel.selected} from an empty set"
                continue
            unmatched = [j for j in candidates if m[j] == 0]
            expected = unmatched[0] if unmatched else candidates[0]
            if sel.selected is None or len(sel.selected) != 1:
                return f"{sel.layer} {sel.head} head at token {t}: a tie between tokens {sel.selected}"
            if sel.selected[0] != expected:
                return (
                    f"{sel.layer} {sel.head} head at token {t} selects token {sel.selected[0]}, "
                    f"but the nearest unmatched one is {expected}"
                )
        return None

    return holds


def _invariant_holds(k: int, depth: int) -> object:
    def holds(word: tuple[str, ...], trace: object) -> str | None:
        heights = pair_heights(word, k)
        n = trace.n  # type: ignore[attr-defined]
        for ell in range(1, depth + 1):
            label = f"logic{ell}"
            for t in range(n):
                m = trace.value(label, t, "m")  # type: ignore[attr-defined]
                e = trace.value(label, t, "e")  # type: ignore[attr-defined]
                special = t in (0, n - 1)
                want = 1 if special or heights.get(t, depth + 1) <= ell else 0
                if m != want:
                    return f"after layer {ell}, token {t} has m = {m}, expected {want} (pair height {heights.get(t)})"
                if e != 0:
                    return f"after layer {ell}, token {t} has e = {e} on a valid word"
        return None

    return holds


def _tie_free_accept(depth: int) -> object:
    from fractions import Fraction as Q

    def y(a1: Q, a2: Q) -> Q:
        return max(Q(0), max(Q(0), 1 - a1) + a2 - 1)

    def holds(word: tuple[str, ...], trace: object) -> str | None:
        n = trace.n  # type: ignore[attr-defined]
        before = f"logic{depth}"
        e = [trace.value(before, t, "e") for t in range(n)]  # type: ignore[attr-defined]
        m = [trace.value(before, t, "m") for t in range(n)]  # type: ignore[attr-defined]
        score = [e[t] - m[t] + 1 for t in range(n)]
        top = max(score)
        best = [t for t in range(n) if score[t] == top]
        rules = {
            "average": y(sum((e[t] for t in best), Q(0)) / len(best), sum((m[t] for t in best), Q(0)) / len(best)),
            "leftmost": y(e[best[0]], m[best[0]]),
            "rightmost": y(e[best[-1]], m[best[-1]]),
        }
        bits = {rule: value > Q(1, 2) for rule, value in rules.items()}
        if len(set(bits.values())) != 1:
            return f"the accept bit depends on the tie rule: {bits}"
        return None

    return holds


def _dyck_claims(values: Mapping[str, object]) -> tuple[Claim, ...]:
    k, depth = int(values["k"]), int(values["depth"])  # type: ignore[call-overload]
    lang = DYCK(k, depth)
    paper = values["variant"] == "paper"
    bound = default_max_len(k)
    ref = "§5.1, Theorem 4.1"
    extra: list[Claim] = [
        TraceProperty(
            id="Y3",
            statement="every matching-layer head selects exactly one token (no score ties), the nearest "
            "unmatched one on its side (the nearest matched one if there is none)",
            reference=ref,
            holds=_neighbours_hold(depth),  # type: ignore[arg-type]
            max_len=bound,
        ),
        TraceProperty(
            id="Y5",
            statement="the accept bit is the same under the average, leftmost and rightmost tie rules of the final layer",
            reference=ref,
            holds=_tie_free_accept(depth),  # type: ignore[arg-type]
            max_len=bound,
        ),
    ]
    if not paper:
        extra.append(
            TraceProperty(
                id="Y4",
                statement="on every valid word, after matching layer ℓ: m_i = 1 iff token i is γ/ω or its bracket "
                "pair has height <= ℓ, and e_i = 0",
                reference=ref,
                holds=_invariant_holds(k, depth),  # type: ignore[arg-type]
                only=lang.contains,
                max_len=bound,
            )
        )
    return (
        Recognizes(
            id="Y2" + ("-paper" if paper else ""),
            statement=f"the (D+1)-layer network accepts γuω iff u ∈ {lang.name}"
            + (" (as printed: swapped SAME, no ¬m guards, γ/ω unmatched)" if paper else ""),
            reference="§5.1, Theorem 4.1",
            language=lang,
            max_len=bound,
        ),
        *extra,
    )


def _gate_claims(values: Mapping[str, object]) -> tuple[Claim, ...]:
    c = sympy.Rational(str(values["margin"]))
    paper = values["variant"] == "paper"
    a = sympy.symbols("a1 a2 a3 a4", integer=True)
    X, Y = sympy.symbols("x y", real=True)
    bits = tuple(sympy.And(v >= 0, v <= 1) for v in a)
    ins = {f"a{i + 1}": a[i] for i in range(4)}
    ref = "Appendix A, Lemma A.1"

    def boolean(cid: str, block: str, out: str, expected: sympy.Expr, text: str, n: int) -> BlockIdentity:
        return BlockIdentity(
            id=cid,
            statement=f"{out} = {text} on every input in {{0,1}}^{n}",
            reference=ref,
            block=block,
            inputs={k: v for k, v in ins.items() if int(k[1:]) <= n},
            outputs={out: expected},
            variables=tuple(str(v) for v in a[:n]),
            assumptions=bits[:n],
        )

    def xnor(p: sympy.Expr, q: sympy.Expr) -> sympy.Expr:
        return p * q + (1 - p) * (1 - q)

    gt, eq = sympy.Symbol("GT(x,y)"), sympy.Symbol("EQ(x,y)")
    claims: list[Claim] = [
        boolean("Y1-AND", "and", "AND(a1,a2,a3)", a[0] * a[1] * a[2], "a1 ∧ a2 ∧ a3", 3),
        boolean("Y1-OR", "or", "OR(a1,a2,a3)", 1 - (1 - a[0]) * (1 - a[1]) * (1 - a[2]), "a1 ∨ a2 ∨ a3", 3),
        boolean("Y1-NOT", "not", "NOT(a1)", 1 - a[0], "¬a1", 1),
        boolean("Y1-XNOR", "xnor", "XNOR(a1,a2)", xnor(a[0], a[1]), "[a1 = a2]", 2),
        boolean(
            "Y1-SAME" + ("-paper" if paper else ""),
            "same",
            "SAME(a1a2,a3a4)",
            xnor(a[0], a[2]) * xnor(a[1], a[3]),
            "[(a1, a2) = (a3, a4)]" + (" (with OR between the bits, as extracted)" if paper else ""),
            4,
        ),
        BlockIdentity(
            id="Y1-GT",
            statement=f"GreaterThan with c = {c}: 1 if x ≥ y + c, 0 if x ≤ y, strictly between 0 and 1 otherwise, for all reals x, y",
            reference=ref,
            block="gt",
            inputs={"x": X, "y": Y},
            outputs={},
            variables=("x", "y"),
            domain="reals",
            conditions=(
                sympy.Implies(X >= Y + c, sympy.Eq(gt, 1)),
                sympy.Implies(X <= Y, sympy.Eq(gt, 0)),
                sympy.Implies(sympy.And(X > Y, X < Y + c), sympy.And(gt > 0, gt < 1)),
            ),
        ),
        BlockIdentity(
            id="Y1-EQ",
            statement=f"Equal with c = {c}: 1 if x = y, 0 if |x − y| ≥ c, for all reals x, y",
            reference=ref,
            block="eq",
            inputs={"x": X, "y": Y},
            outputs={},
            variables=("x", "y"),
            domain="reals",
            conditions=(
                sympy.Implies(sympy.Eq(X, Y), sympy.Eq(eq, 1)),
                sympy.Implies(sympy.Or(X >= Y + c, Y >= X + c), sympy.Eq(eq, 0)),
                sympy.And(eq >= 0, eq <= 1),
            ),
        ),
    ]
    return tuple(claims)


CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        name="dyck",
        paper_id="yao2021.dyck_recognizer",
        title="(D+1)-layer hard-attention recognizer of Dyck(k, D) (Theorem 4.1)",
        reference="Yao et al. 2021, §5.1",
        params=(
            Param(name="k", default="2", parse=parse_int("k", minimum=1), help="number of bracket types k >= 1"),
            Param(name="depth", default="2", parse=parse_int("depth", minimum=1), help="maximal nesting depth D >= 1"),
            VARIANT,
        ),
        build=lambda values: dyck_recognizer(k=values["k"], depth=values["depth"], variant=values["variant"]),
        claims=_dyck_claims,
        language_of=lambda values: DYCK(values["k"], values["depth"]),
    ),
    Construction(
        name="gates",
        paper_id="yao2021.lemma_a1_gates",
        title="Lemma A.1's gates: AND, OR, NOT, XNOR, SAME, GreaterThan, Equal as ReLU FFNs",
        reference="Yao et al. 2021, Appendix A",
        params=(
            Param(
                name="margin",
                default="1/10",
                parse=parse_fraction("margin", minimum=Fraction(0), strict=True),
                help="the margin c > 0 of GreaterThan and Equal",
            ),
            VARIANT,
        ),
        build=lambda values: gate_network(margin=values["margin"], variant=values["variant"]),
        claims=_gate_claims,
    ),
)
