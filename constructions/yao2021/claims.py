"""Yao et al. 2021's claims, lemmas and construction declarations.

Owns the recognizer's claims (Y2–Y5: Dyck(k, D) recognition, the matching invariant, the
nearest-unmatched selections) and its block lemmas, the generator's claims (Y6–Y11: the layer-1
averages, Lemma B.1's angles, eq. (7), the proved thresholds, the next-symbol sets and
Definition 3.1), the gates' claims (Y1, Lemma A.1), and :data:`CONSTRUCTIONS` (``dyck``,
``dyck-gen``, ``gates``) for the registry :mod:`netproof.constructions`. May import: the
vocabulary (:mod:`netproof.verifier.claims`, Dyck(k, D) included), sympy, and this paper's
networks and experiments; never an interpreter or an engine (a trace reaches a claim as an
argument).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import sympy

from netproof.symbolic import AttentionLayer, Hardmax, Network
from netproof.verifier.claims import (
    VARIANT,
    AllowedNext,
    BlockIdentity,
    BooleanBlock,
    Claim,
    Construction,
    ExactFact,
    LayerInduction,
    Lemma,
    NearestSelection,
    PairHeights,
    Param,
    Recognizes,
    SelectsNearest,
    TieRuleFree,
    TraceProperty,
    parse_fraction,
    parse_int,
)
from netproof.verifier.claims.dyck import DYCK, allowed_next, dyck_alphabet

from .experiments import GENERATOR_PRECISION, RECOGNIZER_PRECISION
from .generator import READINGS, GeneratorConstants, bracket_sqrt_ratio, dyck_generator, theta
from .recognizer import END, dyck_recognizer, gate_network, symbols, type_bits

__all__ = ["CONSTRUCTIONS", "default_max_len", "pair_heights", "valid_prefixes"]


def default_max_len(k: int) -> int:
    """The largest |u| with at most 100,000 words in Σ^{<=|u|} (the checks are batched exact
    integer evaluations): 15 for k = 1, 8 for k = 2, 6 for k = 3 (the spec's bound), less for
    larger k (``--max-n`` raises it).

    >>> [default_max_len(k) for k in (1, 2, 3, 4, 8)]
    [15, 8, 6, 5, 4]
    """
    n = 2
    while sum((2 * k) ** i for i in range(n + 2)) <= 100_000:
        n += 1
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


def _neighbours_hold(depth: int, *, batch: bool = False) -> object:
    """Y3 on one word's trace (``holds``), or with ``batch`` on a batched trace (``holds_batch``,
    see :class:`TraceProperty`; its trace has ``n``, ``xp`` (numpy), ``selections`` with
    ``layer``, ``head``, ``tie`` and (words, positions) arrays ``first``, ``last``, ``count`` of
    the maximizers, ``state(label).equals(dim, q)`` and ``selected(layer, head, w, t)``)."""

    def holds(word: tuple[str, ...], trace: object) -> str | None:
        n = trace.n  # type: ignore[attr-defined]
        for sel in trace.selections:  # type: ignore[attr-defined]
            if not sel.layer.startswith("match"):
                continue
            ell = int(sel.layer[len("match") :])
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
                return (
                    f"{sel.layer} {sel.head} head at token {t}: a tie between tokens {sel.selected}"
                )
            if sel.selected[0] != expected:
                return (
                    f"{sel.layer} {sel.head} head at token {t} selects token {sel.selected[0]}, "
                    f"but the nearest unmatched one is {expected}"
                )
        return None

    def holds_batch(words: Sequence[tuple[str, ...]], trace: Any) -> list[str | None]:
        xp, n, size = trace.xp, trace.n, len(words)
        out: list[str | None] = [None] * size
        pending = xp.ones(size, dtype=bool)
        t = xp.arange(n)
        for sel in trace.selections:
            if not sel.layer.startswith("match"):
                continue
            ell = int(sel.layer[len("match") :])
            unmatched = trace.state(_previous_state(ell)).equals("m", 0)
            # What the head selects: every maximizer under "average", one under the other rules.
            count = sel.count if sel.tie == "average" else xp.minimum(sel.count, 1)
            chosen = sel.last if sel.tie == "rightmost" else sel.first
            if sel.head == "left":
                # The nearest unmatched j < t is the last unmatched index up to t − 1 (−1: none).
                seen = xp.maximum.accumulate(xp.where(unmatched, t, -1), axis=1)
                nearest = xp.concatenate([xp.full((size, 1), -1), seen[:, :-1]], axis=1)
                expected = xp.where(nearest >= 0, nearest, t - 1)
                empty = t == 0
            else:
                # The nearest unmatched j > t is the first unmatched index from t + 1 (n: none).
                seen = xp.minimum.accumulate(xp.where(unmatched, t, n)[:, ::-1], axis=1)[:, ::-1]
                nearest = xp.concatenate([seen[:, 1:], xp.full((size, 1), n)], axis=1)
                expected = xp.where(nearest < n, nearest, t + 1)
                empty = t == n - 1
            bad = (
                xp.where(empty, count != 0, (count != 1) | (chosen != expected)) & pending[:, None]
            )
            for w in xp.flatnonzero(bad.any(axis=1)).tolist():
                i = int(bad[w].argmax())
                if empty[i]:
                    out[w] = (
                        f"{sel.layer} {sel.head} head at token {i}: selects {trace.selected(sel.layer, sel.head, w, i)} from an empty set"
                    )
                elif count[w, i] != 1:
                    out[w] = (
                        f"{sel.layer} {sel.head} head at token {i}: a tie between tokens {trace.selected(sel.layer, sel.head, w, i)}"
                    )
                else:
                    out[w] = (
                        f"{sel.layer} {sel.head} head at token {i} selects token {int(chosen[w, i])}, "
                        f"but the nearest unmatched one is {int(expected[w, i])}"
                    )
                pending[w] = False
        return out

    return holds_batch if batch else holds


def _invariant_holds(k: int, depth: int, *, batch: bool = False) -> object:
    """Y4 on one word's trace (``holds``), or with ``batch`` on a batched trace (``holds_batch``;
    it reads ``n``, ``xp``, ``state(label).equals(dim, q)`` and ``state(label).value(w, t, dim)``)."""

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

    def holds_batch(words: Sequence[tuple[str, ...]], trace: Any) -> list[str | None]:
        xp, n, size = trace.xp, trace.n, len(words)
        heights = [pair_heights(word, k) for word in words]
        height = xp.full((size, n), depth + 1)
        for w, h in enumerate(heights):
            for t, v in h.items():
                height[w, t] = v
        t = xp.arange(n)
        special = (t == 0) | (t == n - 1)
        out: list[str | None] = [None] * size
        pending = xp.ones(size, dtype=bool)
        for ell in range(1, depth + 1):
            state = trace.state(f"logic{ell}")
            want = special | (height <= ell)
            m_ok = xp.where(want, state.equals("m", 1), state.equals("m", 0))
            bad = ~(m_ok & state.equals("e", 0)) & pending[:, None]
            for w in xp.flatnonzero(bad.any(axis=1)).tolist():
                i = int(bad[w].argmax())
                if not m_ok[w, i]:
                    out[w] = (
                        f"after layer {ell}, token {i} has m = {state.value(w, i, 'm')}, expected {int(want[w, i])} "
                        f"(pair height {heights[w].get(i)})"
                    )
                else:
                    out[w] = (
                        f"after layer {ell}, token {i} has e = {state.value(w, i, 'e')} on a valid word"
                    )
                pending[w] = False
        return out

    return holds_batch if batch else holds


TIE_RULES_COMPARED = ("average", "leftmost", "rightmost")


def _tie_variants(net: Network) -> dict[str, Network]:
    """The network with each of the tie rules of :data:`TIE_RULES_COMPARED` in its final head
    (Y5's variants: the checker runs each on every word)."""

    def with_tie(rule: str) -> Network:
        layers = []
        for sub in net.layers:
            block = sub.block
            if isinstance(block, AttentionLayer) and block.name == "final":
                heads = tuple(
                    dataclasses.replace(h, normalizer=Hardmax(tie=rule))  # type: ignore[arg-type]
                    if h.name == "any_open_or_error"
                    else h
                    for h in block.heads
                )
                sub = dataclasses.replace(sub, block=dataclasses.replace(block, heads=heads))
            layers.append(sub)
        return dataclasses.replace(net, layers=tuple(layers))

    return {rule: with_tie(rule) for rule in TIE_RULES_COMPARED}


def _tie_free_accept(*, batch: bool = False) -> object:
    """Y5 on one word's trace (``holds``), or with ``batch`` on a batched trace (``holds_batch``):
    the accept bits of the network run with each tie rule in its final head (the trace's
    ``variants``, :func:`_tie_variants`) are one bit."""

    def holds(word: tuple[str, ...], trace: Any) -> str | None:
        if not hasattr(trace, "variants"):
            raise TypeError(
                "Y5 compares the network's runs under each tie rule: pass the trace with its "
                "variants' traces (netproof.verifier.exhaustive.job.with_variants), as the checker does"
            )
        bits = {rule: bool(trace.variants[rule].accepted) for rule in TIE_RULES_COMPARED}
        if len(set(bits.values())) != 1:
            return f"the accept bit depends on the tie rule: {bits}"
        return None

    def holds_batch(words: Sequence[tuple[str, ...]], trace: Any) -> list[str | None]:
        bits = {rule: trace.variants[rule].accepted for rule in TIE_RULES_COMPARED}
        out: list[str | None] = [None] * len(words)
        for w in range(len(words)):
            shown = {rule: bool(bit[w]) for rule, bit in bits.items()}
            if len(set(shown.values())) != 1:
                out[w] = f"the accept bit depends on the tie rule: {shown}"
        return out

    return holds_batch if batch else holds


def _dyck_claims(values: Mapping[str, object]) -> tuple[Claim, ...]:
    k, depth = int(values["k"]), int(values["depth"])  # type: ignore[call-overload]
    lang = DYCK(k, depth)
    paper = values["variant"] == "paper"
    bound = default_max_len(k)
    ref = "§5.1, Theorem 4.1"
    # the paper's proof: after matching layer ℓ, m_i = 1 iff token i's pair has height <= ℓ
    induction = (
        None
        if paper
        else LayerInduction(
            after=tuple(f"logic{ell}" for ell in range(1, depth + 1)), mark="m", error="e"
        )
    )
    extra: list[Claim] = [
        TraceProperty(
            id="Y3",
            statement="every matching-layer head with tokens on its side selects exactly one (no score ties): the "
            "nearest unmatched one on its side (the nearest matched one if there is none); the left head at γ and the "
            "right head at ω select none",
            reference=ref,
            holds=_neighbours_hold(depth),  # type: ignore[arg-type]
            holds_batch=_neighbours_hold(depth, batch=True),  # type: ignore[arg-type]
            statable=SelectsNearest(
                heads=tuple(
                    (f"match{ell}", head)
                    for ell in range(1, depth + 1)
                    for head in ("left", "right")
                )
            ),
            max_len=bound,
        ),
        TraceProperty(
            id="Y5",
            statement="the accept bit is the same under the average, leftmost and rightmost tie rules of the final layer",
            reference=ref,
            holds=_tie_free_accept(),  # type: ignore[arg-type]
            holds_batch=_tie_free_accept(batch=True),  # type: ignore[arg-type]
            variants=_tie_variants,
            statable=TieRuleFree(
                layer="final", head="any_open_or_error", induction=induction, language=lang
            ),
            max_len=bound,
        ),
    ]
    if not paper:
        extra.append(
            TraceProperty(
                id="Y4",
                statement="on every valid word, after matching layer ℓ: m_i = 1 if token i is γ/ω or its bracket "
                "pair has height <= ℓ, else m_i = 0; and e_i = 0",
                reference=ref,
                holds=_invariant_holds(k, depth),  # type: ignore[arg-type]
                holds_batch=_invariant_holds(k, depth, batch=True),  # type: ignore[arg-type]
                statable=PairHeights(
                    language=lang,
                    after=tuple((f"logic{ell}", ell) for ell in range(1, depth + 1)),
                    dim="m",
                    special=1,
                    zero=("e",),
                    induction=induction,
                ),
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
            induction=induction,
        ),
        *extra,
    )


def _dyck_lemmas(values: Mapping[str, object]) -> tuple[Lemma, ...]:
    """The block lemmas of Theorem 4.1's proof (§5.1, Lemma A.1), as data: each matching FFN
    computes the m/e update as a Boolean formula of Boolean dims (and passes t, o, p through),
    and each matching head selects the nearest unmatched token on its side (the nearest token if
    none is unmatched). The formulas are the paper's (the printed ones for ``variant=paper``),
    written here independently of the gate circuits that implement them."""
    k, depth = int(values["k"]), int(values["depth"])  # type: ignore[call-overload]
    paper = values["variant"] == "paper"
    tb = [f"t{b}" for b in range(type_bits(k))]
    S = {name: sympy.Symbol(name) for name in (*tb, "o", "p", "m", "e")}
    L = {name: sympy.Symbol(f"l:{name}") for name in (*tb, "o", "m")}
    R = {name: sympy.Symbol(f"r:{name}") for name in (*tb, "o", "m")}
    m, e, o = S["m"], S["e"], S["o"]

    def same(side: Mapping[str, sympy.Symbol]) -> Any:
        return sympy.And(*(sympy.Equivalent(S[b], side[b]) for b in tb))

    if paper:  # as printed: s₁ with the left neighbour, s₂ with the right one, no ¬m guards
        s1, s2 = same(L), same(R)
        m_new = sympy.Or(m, sympy.And(o, ~R["o"], s1), sympy.And(~o, L["o"], s2))
        e_new = sympy.Or(e, sympy.And(o, ~R["o"], ~s1), sympy.And(~o, L["o"], ~s2))
    else:
        rg = sympy.And(~m, o, ~R["o"], ~R["m"])  # an unmatched open whose right partner is a close
        lg = sympy.And(~m, ~o, L["o"], ~L["m"])  # an unmatched close whose left partner is an open
        m_new = sympy.Or(m, sympy.And(rg, same(R)), sympy.And(lg, same(L)))
        e_new = sympy.Or(e, sympy.And(rg, ~same(R)), sympy.And(lg, ~same(L)))
    boolean = (
        *tb,
        "o",
        "m",
        "e",
        *(f"l:{d}" for d in (*tb, "o", "m")),
        *(f"r:{d}" for d in (*tb, "o", "m")),
    )
    outputs: dict[str, Any] = {d: S[d] for d in (*tb, "o", "p")}
    outputs.update({"m": m_new, "e": e_new})
    ref = "§5.1, Theorem 4.1; Lemma A.1"
    lemmas: list[Lemma] = []
    for ell in range(1, depth + 1):
        for head, side in (("left", "j < i"), ("right", "j > i")):
            lemmas.append(
                NearestSelection(
                    id=f"match{ell}.{head}",
                    statement=f"head {head} of match{ell} selects the nearest unmatched token {side} "
                    f"(the nearest token {side} if all are matched), with no score ties",
                    reference=ref,
                    layer=f"match{ell}",
                    head=head,
                    prefer=~m,
                    boolean=("m",),
                    positional={"p": "i/n"},
                )
            )
        lemmas.append(
            BooleanBlock(
                id=f"logic{ell}",
                statement=f"FFN logic{ell} computes m' and e' of §5.1"
                + (" (as printed)" if paper else "")
                + " on Boolean t, o, m, e and neighbour dims, and passes t, o, p through",
                reference=ref,
                block=f"logic{ell}",
                boolean=boolean,
                outputs=outputs,
            )
        )
    return tuple(lemmas)


# --------------------------------------------------------------------------- generator claims


def valid_prefixes(k: int, depth: int, max_inner: int) -> list[tuple[str, ...]]:
    """Every prefix of every Dyck(k, D) word with at most ``max_inner`` brackets, in shortlex
    order: the prefixes v that never close wrongly, stay within depth D and have room to close,
    |v| + depth(v) <= max_inner.

    >>> valid_prefixes(1, 1, 2)
    [(), ('(',), ('(', ')')]
    """
    pairs = symbols(k)
    found: list[tuple[str, ...]] = []

    def grow(prefix: tuple[str, ...], stack: tuple[int, ...]) -> None:
        found.append(prefix)
        for tau, (op, cl) in enumerate(pairs, start=1):
            if len(stack) < depth and len(prefix) + 1 + len(stack) + 1 <= max_inner:
                grow((*prefix, op), (*stack, tau))
            if stack and stack[-1] == tau:
                grow((*prefix, cl), stack[:-1])

    grow((), ())
    order = {s: i for i, s in enumerate(dyck_alphabet(k))}
    return sorted(found, key=lambda w: (len(w), [order[s] for s in w]))


def _stack_positions(word: tuple[str, ...], k: int) -> list[list[int]]:
    """For every token index t (γ = 0), the token indices of the unmatched opens after token t."""
    opens = {op for op, _cl in symbols(k)}
    stack: list[int] = []
    out: list[list[int]] = [[]]
    for t, s in enumerate(word, start=1):
        if s in opens:
            stack.append(t)
        elif s != END and stack:
            stack.pop()
        out.append(list(stack))
    return out


def _gen_bound(k: int) -> int:
    """The spec's inner length for the generator: 8 for k <= 2, 6 for larger k."""
    return 8 if k <= 2 else 6


def _def31_bound(k: int, g2: bool) -> int:
    """The largest |w| such that the words of Definition 3.1's check stay below 6000."""
    size = 2 * k + (1 if g2 else 0)
    n = 1
    while n < 12 and sum(size**i for i in range(n + 1)) <= 6000:
        n += 1
    return n


def _sympy_equals_sqrt_ratio(value: object, u: Fraction, w: Fraction) -> bool:
    """value == u/√w exactly (value a sympy number): equal signs and equal squares."""
    v = sympy.sympify(value)
    target_sq = sympy.Rational(
        u.numerator * u.numerator * w.denominator, u.denominator * u.denominator * w.numerator
    )
    sq = sympy.expand(v**2)
    if not sq.is_Rational:
        sq = sympy.nsimplify(sympy.simplify(sq))
    if sq != target_sq:
        return False
    sign = (u > 0) - (u < 0)
    return bool(v.is_zero) if sign == 0 else bool(v.is_positive if sign > 0 else v.is_negative)


def _gen_positions(
    word: tuple[str, ...], trace: object, g2: bool
) -> list[tuple[int, tuple[str, ...]]]:
    """(token index t, the bracket prefix read up to t) for every position that predicts."""
    last = trace.n - (1 if g2 and word and word[-1] == END else 0)  # type: ignore[attr-defined]
    return [(t, word[:t]) for t in range(last)]


def _gen_claims(values: Mapping[str, object]) -> tuple[Claim, ...]:
    k, D = int(values["k"]), int(values["depth"])  # type: ignore[call-overload]
    reading = str(values["reading"])
    g2 = reading == "G2"
    soft = _lambda2(values) is not None
    paper = values["variant"] == "paper"
    suffix = "-paper" if paper else ""
    N = _gen_bound(k)
    ref = "§5.2, Theorem 4.2; Appendix B"
    lang = DYCK(k, D)

    def full_strings(bound: int) -> list[tuple[str, ...]]:
        return [
            (*v, END)
            for v in valid_prefixes(k, D, bound)
            if lang.contains(v) and len(v) + 1 <= bound + 1
        ]

    def domain(bound: int) -> list[tuple[str, ...]]:
        # G1: every valid prefix, each run as the whole input (what `run dyck-gen PREFIX` does);
        # G2: every valid γuω (n = |u| + 2), whose positions are every prefix of that length.
        return full_strings(bound) if g2 else valid_prefixes(k, D, bound)

    domain_text = (
        f"valid γuω (u ∈ {lang.name}, ω appended; |w| counts ω)"
        if g2
        else f"prefix of a word of {lang.name}"
    )

    def depth_of(prefix: tuple[str, ...]) -> int:
        return 1 + sum(1 if op else -1 for op in (s in {o for o, _c in symbols(k)} for s in prefix))

    def layer1(word: tuple[str, ...], trace: object) -> str | None:
        for t in range(trace.n):  # type: ignore[attr-defined]
            i, d = (
                t + 1,
                depth_of(tuple(s for s in word[:t] if s != END))
                - (1 if t and word[t - 1] == END else 0),
            )
            a1, a2 = trace.value("depth", t, "a1"), trace.value("depth", t, "a2")  # type: ignore[attr-defined]
            if sympy.sympify(a1) != sympy.Rational(d, i) or sympy.sympify(a2) != sympy.Rational(
                1, i
            ):
                return f"at i={i}: (a1, a2) = ({a1}, {a2}), expected ({Fraction(d, i)}, {Fraction(1, i)})"
        return None

    def angles(word: tuple[str, ...], trace: object) -> str | None:
        n = trace.n  # type: ignore[attr-defined]
        for t, prefix in _gen_positions(word, trace, g2):
            i, d = t + 1, depth_of(prefix)
            checks = [("cθ", theta(d, D)[0], f"cos θ({d})"), ("sθ", theta(d, D)[1], f"sin θ({d})")]
            if g2:
                checks += [
                    ("cφ", theta(n - i, D)[0], f"cos θ(n − i = {n - i})"),
                    ("sφ", theta(n - i, D)[1], f"sin θ({n - i})"),
                ]
            for dim, (u, w), text in checks:
                v = trace.value("angle", t, dim)  # type: ignore[attr-defined]
                if not _sympy_equals_sqrt_ratio(v, u, w):
                    return f"at i={i}: {dim} = {v}, expected {text} = {u}/√{w}"
        return None

    def stack_top(word: tuple[str, ...], trace: object) -> str | None:
        tops = _stack_positions(word, k)
        for sel in trace.selections:  # type: ignore[attr-defined]
            if sel.layer != "top":
                continue
            t = sel.position
            if g2 and word and word[-1] == END and t == trace.n - 1:  # type: ignore[attr-defined]
                continue
            want = tops[t][-1] if tops[t] else 0
            if sel.selected != (want,):
                return f"at i={t + 1} the layer-2 head selects tokens {[j + 1 for j in sel.selected or ()]}, expected {want + 1} ({'the stack top' if want else 'γ'})"
        return None

    def next_sets(word: tuple[str, ...], trace: object) -> str | None:
        n = trace.n  # type: ignore[attr-defined]
        for t, prefix in _gen_positions(word, trace, g2):
            allowed, end = allowed_next(prefix, k, D, n=n if g2 else None)
            want = {*allowed, *([END] if end else [])}
            got = set(trace.next_symbols[t])  # type: ignore[attr-defined]
            if got != want:
                shown = "".join(prefix) or "ε"
                return f"after γ{shown} (i={t + 1}, n={n}) the network allows {sorted(got)}, the language {sorted(want)}"
        return None

    def def31_domain(bound: int) -> list[tuple[str, ...]]:
        inner = (*dyck_alphabet(k), END) if g2 else dyck_alphabet(k)
        return [(*u, END) for m in range(bound) for u in itertools.product(inner, repeat=m)]

    def def31(word: tuple[str, ...], trace: object) -> str | None:
        ok = all(word[t] in trace.next_symbols[t] for t in range(len(word)))  # type: ignore[attr-defined]
        member = lang.contains(word[:-1])
        if ok != member:
            if member:
                t = next(t for t in range(len(word)) if word[t] not in trace.next_symbols[t])  # type: ignore[attr-defined]
                return f"u ∈ {lang.name} but its token {t + 1} ({word[t]}) gets probability < ε"
            return f"u ∉ {lang.name} but every token gets probability >= ε"
        return None

    # Y6, Y7 and Y9 are checked on their domain only (the ledger shows the bound, not the domain).
    where = " before ω of every valid γuω" if g2 else f" of every prefix of a word of {lang.name}"
    exact_layers: list[Claim] = [
        TraceProperty(
            id="Y6",
            statement="layer 1 (uniform causal head, value (2o − 1, g)) gives (a₁, a₂) = (d_i/i, 1/i) exactly at every position"
            + (" of every valid γuω" if g2 else where)
            + ", d = 1 + depth"
            + (" (ω counted as a closing bracket: d = 0 at ω)" if g2 else ""),
            reference=ref,
            holds=layer1,
            domain=domain,
            domain_text=domain_text,
            backend="sympy",
            max_len=N,
        ),
        TraceProperty(
            id="Y7",
            statement="Lemma B.1 with layer norm ε = 0: FFN 1 gives (cθ, sθ) = (cos θ(d_i), sin θ(d_i)) exactly, θ(d) = atan2(d, D+2−d)"
            + (" (and (cφ, sφ) = θ(n − i))" if g2 else "")
            + f", at every position{where}",
            reference="Appendix B, Lemma B.1",
            holds=angles,
            domain=domain,
            domain_text=domain_text,
            backend="sympy",
            max_len=N,
        ),
    ]
    # Y6 and Y7 are about layer 1 and FFN 1, which λ₂ does not touch; sympy cannot evaluate the
    # soft layer 2 after them (its weights are transcendental), so they are stated for the hard
    # network only.
    claims: list[Claim] = [] if soft else exact_layers
    claims += [
        ExactFact(
            id="Y8",
            statement="eq. (7): for every D <= 80 and a, b ∈ {0..D+1}, cos(θ(a) − θ(b)) = 1 if a = b and < 1 − 1/(10D²) otherwise "
            "(so the layer-2 score separates: 20D²(1 − 1/(10D²)) + 3 = 20D² + 1 < 20D² + 2 + j/n)",
            reference="§5.2, eq. (7)",
            check=lambda: _eq7(80),
            cases="every D <= 80 and every pair a, b ∈ {0..D+1}, by rational squaring",
        ),
        ExactFact(
            id="Y11",
            statement="the gaps between consecutive sin θ(d) on {0..D+1} are >= 0.44/D² and those of cos θ(d) on {0..D+2} are >= 0.1/D², for every D <= 500",
            reference="Appendix B, Theorem B.1's proof",
            check=lambda: _gaps(500),
            cases="every D <= 500, with proved rational brackets of every sin θ(d), cos θ(d)",
        ),
        ExactFact(
            id="Y11-net",
            statement=f"the network's thresholds for D = {D} are proved: GT(sθ, r; c) is 0 at depth < D and 1 at depth D, "
            "GT(cφ, r; c) is 1 iff n − i = 1, and EQ's margin is at most the smallest cos θ gap",
            reference="Appendix B (FFN 2, rebuilt with rational thresholds)",
            check=lambda: _net_thresholds(D, paper),
            cases=f"the constants of the D = {D} network against exact brackets of θ",
        ),
    ]
    if not soft:
        claims.append(
            TraceProperty(
                id="Y9",
                statement="the layer-2 hard head selects exactly one token: the top of the stack, or γ when the stack is empty"
                + f", at every position{where}",
                reference=ref,
                holds=stack_top,
                domain=domain,
                domain_text=domain_text,
                backend="interval",
                max_len=N,
            )
        )
    claims += [
        TraceProperty(
            id="Y10" + suffix,
            statement=f"{reading}: the next-symbol set (probability >= ε = 1/(2k+1)) equals the allowed set of {lang.name} "
            + (
                "at every position before ω of every valid γuω (length-aware: opens need room to close, ω only at n)"
                if g2
                else "after every valid prefix"
            )
            + (f" (soft layer 2, λ₂ = {values['lambda2']}·n ln n)" if soft else "")
            + (" (as printed: opens tested at d = D, no ω row)" if paper else ""),
            reference=ref,
            holds=next_sets,
            domain=domain,
            domain_text=domain_text,
            backend="interval",
            max_len=N,
            # for every length: every position's state is a function of its depth, stack top (and, G2, n − i)
            statable=AllowedNext(language=lang, length_aware=g2),
        ),
        TraceProperty(
            id="Y10-def" + suffix,
            statement=f"Definition 3.1 ({reading}): every token of γuω gets probability >= ε iff u ∈ {lang.name}, "
            + ("for every u over the brackets and ω" if g2 else "for every bracket string u"),
            reference="§3, Definition 3.1",
            holds=def31,
            domain=def31_domain,
            domain_text="word uω" + (" (ω also inside u)" if g2 else ""),
            backend="interval",
            max_len=_def31_bound(k, g2),
        ),
    ]
    return tuple(claims)


def _eq7(max_depth: int) -> tuple[int, str | None]:
    cases = 0
    for D in range(1, max_depth + 1):
        t = 1 - Fraction(1, 10 * D * D)
        vec = [(D + 2 - a, a) for a in range(D + 2)]
        for a, u in enumerate(vec):
            uu = u[0] * u[0] + u[1] * u[1]
            for b, v in enumerate(vec):
                cases += 1
                vv = v[0] * v[0] + v[1] * v[1]
                dot = u[0] * v[0] + u[1] * v[1]
                if a == b:
                    if dot * dot != uu * vv or dot <= 0:
                        return cases, f"D={D}: cos(θ({a}) − θ({a})) != 1"
                elif dot >= 0 and dot * dot >= t * t * uu * vv:
                    return cases, f"D={D}: cos(θ({a}) − θ({b})) >= 1 − 1/(10D²)"
        if 20 * D * D * t + 3 >= 20 * D * D + 2:
            return cases, f"D={D}: the score separation fails"
    return cases, None


def _gap_at_least(
    x: tuple[Fraction, Fraction], y: tuple[Fraction, Fraction], t: Fraction
) -> bool | None:
    """y − x >= t for x = u/√w, y = u'/√w' (decided with rational brackets; None if too close)."""
    for digits in (20, 40, 80):
        xl, xu = bracket_sqrt_ratio(*x, digits)
        yl, yu = bracket_sqrt_ratio(*y, digits)
        if yl - xu >= t:
            return True
        if yu - xl < t:
            return False
    return None


GAP_SCALE = 10**20


def _scaled_floor(x: tuple[Fraction, Fraction]) -> int:
    """m = ⌊S·u/√w⌋ for x = (u, w) of θ (u >= 0 and w > 0 integers), S = :data:`GAP_SCALE`,
    exactly: m = isqrt(⌊S²u²/w⌋), as floor(√⌊v⌋) = floor(√v) for v >= 0; so S·x ∈ [m, m + 1)."""
    return math.isqrt((int(x[0]) * GAP_SCALE) ** 2 // int(x[1]))


def _gap_by_floors(lo: int, hi: int, t: Fraction) -> bool | None:
    """y − x >= t from the brackets S·x ∈ [lo, lo + 1) and S·y ∈ [hi, hi + 1), where they
    decide it: S·(y − x) lies strictly between hi − lo − 1 and hi − lo + 1."""
    need = t.numerator * GAP_SCALE
    if (hi - lo - 1) * t.denominator >= need:
        return True
    if (hi - lo + 1) * t.denominator < need:
        return False
    return None


def _gaps(max_depth: int) -> tuple[int, str | None]:
    """Each value of θ bracketed once (:func:`_scaled_floor`); a gap those brackets do not
    decide goes to :func:`_gap_at_least`'s finer ones."""
    cases = 0
    for D in range(1, max_depth + 1):
        cos = [theta(d, D)[0] for d in range(D + 3)]
        sin = [theta(d, D)[1] for d in range(D + 2)]
        for name, seq, t in (("sin", sin, Fraction(44, 100)), ("cos", cos[::-1], Fraction(1, 10))):
            bound = t / (D * D)
            floors = [_scaled_floor(x) for x in seq]
            for j in range(len(seq) - 1):
                cases += 1
                ok = _gap_by_floors(floors[j], floors[j + 1], bound)
                if ok is None:
                    ok = _gap_at_least(seq[j], seq[j + 1], bound)
                if ok is None:
                    return cases, f"D={D}: a {name} gap is within 10^-80 of {bound}: undecided"
                if not ok:
                    return cases, f"D={D}: a {name} gap is < {t}/D²"
    return cases, None


def _net_thresholds(D: int, paper: bool) -> tuple[int, str | None]:
    c = GeneratorConstants(D, full_at=D if paper else None)
    at = D if paper else D + 1
    sin_lo, sin_hi = theta(at - 1, D)[1], theta(at, D)[1]
    checks = [
        ("sin θ(D) <= r", _gap_at_least(sin_lo, (c.full_r, Fraction(1)), Fraction(0))),
        (
            "r + c <= sin θ(D+1)",
            _gap_at_least((c.full_r + c.full_c, Fraction(1)), sin_hi, Fraction(0)),
        ),
        ("cos θ(2) <= r_end", _gap_at_least(theta(2, D)[0], (c.end_r, Fraction(1)), Fraction(0))),
        (
            "r_end + c_end <= cos θ(1)",
            _gap_at_least((c.end_r + c.end_c, Fraction(1)), theta(1, D)[0], Fraction(0)),
        ),
    ]
    cos = [theta(d, D)[0] for d in range(D + 3)][::-1]
    checks += [
        (
            f"EQ margin <= cos θ({D + 1 - j}) − cos θ({D + 2 - j})",
            _gap_at_least(cos[j], cos[j + 1], c.eq_c),
        )
        for j in range(len(cos) - 1)
    ]
    for n, (text, ok) in enumerate(checks, start=1):
        if not ok:
            return n, f"D={D}: {text} fails"
    return len(checks), None


def _gate_claims(values: Mapping[str, object]) -> tuple[Claim, ...]:
    c = sympy.Rational(str(values["margin"]))
    paper = values["variant"] == "paper"
    a = sympy.symbols("a1 a2 a3 a4", integer=True)
    X, Y = sympy.symbols("x y", real=True)
    bits = tuple(sympy.And(v >= 0, v <= 1) for v in a)
    ins = {f"a{i + 1}": a[i] for i in range(4)}
    ref = "Appendix A, Lemma A.1"

    def boolean(
        cid: str, block: str, out: str, expected: sympy.Expr, text: str, n: int
    ) -> BlockIdentity:
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
        boolean(
            "Y1-OR",
            "or",
            "OR(a1,a2,a3)",
            1 - (1 - a[0]) * (1 - a[1]) * (1 - a[2]),
            "a1 ∨ a2 ∨ a3",
            3,
        ),
        boolean("Y1-NOT", "not", "NOT(a1)", 1 - a[0], "¬a1", 1),
        boolean("Y1-XNOR", "xnor", "XNOR(a1,a2)", xnor(a[0], a[1]), "[a1 = a2]", 2),
        boolean(
            "Y1-SAME" + ("-paper" if paper else ""),
            "same",
            "SAME(a1a2,a3a4)",
            xnor(a[0], a[2]) * xnor(a[1], a[3]),
            "[(a1, a2) = (a3, a4)]"
            + (" (with OR between the bits, as extracted)" if paper else ""),
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
                sympy.Implies(Y + c <= X, sympy.Eq(gt, 1)),
                sympy.Implies(X <= Y, sympy.Eq(gt, 0)),
                sympy.Implies(sympy.And(X > Y, Y + c > X), sympy.And(gt > 0, gt < 1)),
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
                sympy.Implies(sympy.Or(Y + c <= X, X + c <= Y), sympy.Eq(eq, 0)),
                sympy.And(eq >= 0, eq <= 1),
            ),
        ),
    ]
    return tuple(claims)


def _lambda2(values: Mapping[str, object]) -> Fraction | None:
    v = values["lambda2"]
    return None if v == "hard" else v  # type: ignore[return-value]


def _parse_pos_norm(raw: str) -> int | str:
    if raw.strip() == "n":
        return "n"
    return parse_int("pos_norm", minimum=1)(raw)


def _pos_norm(values: Mapping[str, object]) -> int | None:
    v = values.get("pos_norm", "n")
    return None if v == "n" else v  # type: ignore[return-value]


def _parse_lambda2(raw: str) -> Fraction | str:
    if raw.strip() == "hard":
        return "hard"
    return parse_fraction("lambda2", minimum=Fraction(0), strict=True)(raw)


MAX_K = 128
"""The largest k taken: Yao et al.'s largest (Appendix D: k ∈ {2, 8, 32, 128}); the claims range over words of 2k symbols, and building them takes minutes from k ≈ 300."""
MAX_DEPTH = 16
"""The largest D taken: the claims' constants grow exponentially with D (minutes to build from D ≈ 20)."""


def _parse_size(name: str, maximum: int, why: str) -> Callable[[str], int]:
    parse = parse_int(name, minimum=1)

    def bounded(raw: str) -> int:
        value = parse(raw)
        if value > maximum:
            raise ValueError(
                f"{name}={value} is over the limit {name} <= {maximum}: {why}; give {name} <= {maximum}"
            )
        return value

    return bounded


K_PARAM = Param(
    name="k",
    default="2",
    help=f"number of bracket types 1 <= k <= {MAX_K}",
    parse=_parse_size(
        "k", MAX_K, "the alphabet has 2k symbols and the claims' words grow as (2k)^n"
    ),
)
DEPTH_PARAM = Param(
    name="depth",
    default="2",
    help=f"maximal nesting depth 1 <= D <= {MAX_DEPTH}",
    parse=_parse_size("depth", MAX_DEPTH, "the claims' constants grow exponentially with D"),
)


CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        name="dyck",
        paper_id="yao2021.dyck_recognizer",
        title="(D+1)-layer hard-attention recognizer of Dyck(k, D) (Theorem 4.1)",
        reference="Yao et al. 2021, §5.1",
        params=(
            K_PARAM,
            DEPTH_PARAM,
            VARIANT,
        ),
        build=lambda values: dyck_recognizer(
            k=values["k"], depth=values["depth"], variant=values["variant"]
        ),
        claims=_dyck_claims,
        language_of=lambda values: DYCK(values["k"], values["depth"]),
        lemmas=_dyck_lemmas,
        precision=RECOGNIZER_PRECISION,
    ),
    Construction(
        name="dyck-gen",
        paper_id="yao2021.dyck_generator",
        title="two-layer generator of Dyck(k, D): next-symbol sets (Theorem 4.2)",
        reference="Yao et al. 2021, §5.2 and Appendix B",
        params=(
            K_PARAM,
            DEPTH_PARAM,
            Param(
                name="reading",
                default="G1",
                parse=str,
                help="G1: length-unaware (ω iff the stack is empty); G2: length-aware (1/n in the positional "
                "encoding; run a prefix with --length n)",
                choices=READINGS,
            ),
            Param(
                name="lambda2",
                default="hard",
                parse=_parse_lambda2,
                help="hard: layer 2 is hard attention; a rational c > 0: soft attention with temperature c·n·ln n",
            ),
            Param(
                name="pos_norm",
                default="n",
                parse=_parse_pos_norm,
                help="n: the position feature is p = i/n; an integer N: p = i/N, the experiments' fixed "
                "normalizer (their code uses N = 6000; right for n <= N; G1 only)",
            ),
            VARIANT,
        ),
        build=lambda values: dyck_generator(
            k=values["k"],
            depth=values["depth"],
            reading=values["reading"],
            lambda2=_lambda2(values),
            variant=values["variant"],
            pos_norm=_pos_norm(values),
        ),
        claims=_gen_claims,
        precision=GENERATOR_PRECISION,
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
