"""The classes of a hardmax network whose every head is a nearest selection (``Machine``): what
the rounds rule (:mod:`.rounds`) reads, layer by layer.

Premises, each checked from the network file:

1. The positional features are ``1`` and ``i/n`` only, positions numbered from 0 or 1 (so the
   feature p = i/n of a position lies in [0, 1], rises strictly with the position, and two
   positions of one word differ by less than 1 in p); no layer norm; the readout reads the
   last position, a suffix token's.
2. Every row is a + p·b with (a, b) one of finitely many *classes*. The embedding's rows are
   classes (a: the table row and the constant features, b: the ``i/n`` coefficients); an affine
   map sends (a, b) to (W·a + c, W·b); ReLU, step and σ act on a coordinate a_k + p·b_k only
   where it lies on one side of 0 (for σ, also of 1) at p = 0 and at p = 1, hence on all of
   [0, 1] (it is linear in p): there they are the identity, 0 or 1; elsewhere refused. The
   kernel computes a set C_ℓ of classes before each attention layer ℓ: the embedding's, then
   every class of C_ℓ with every combination of its heads' possible outputs (below), through the
   layer and the FFNs after it. C_ℓ holds every class any word produces there.
3. Every attention layer but the last has hardmax heads scoring ⟨q_i, k_j⟩ with mask j < i
   (*left*) or j > i (*right*) and empty rule zero, whose query and value have no p part, and
   for every query vector q of C_ℓ: ⟨q, k(κ)⟩ = s(κ) + c·p for every key class κ ∈ C_ℓ with one
   c, c > 0 for a left head and c < 0 for a right one, and |s(κ) − s(κ')| >= |c| wherever they
   differ. Then for two keys j ≠ j' of one word: if s(κ_j) > s(κ_j'), j's score is larger
   (|c·(p_j − p_j')| < |c|); if equal, the score of the nearer key to i is strictly larger. So the
   hardmax has one maximizer whatever its tie rule: the nearest key among those of the largest
   s; the output is that key's value (a function of its class), and 0 where the mask is empty.
   Hence the output at i is a *fold* over the keys taken from the far end towards i: per query
   vector, the pair (s, value) of the best key so far, replaced by a new key whose s is >= its
   s (the new key is nearer). ``None`` while no key was seen.
4. The last attention layer has hardmax heads with mask none scoring ⟨q, k⟩ with no p part in
   q, in v and in any ⟨q, k(κ)⟩ (the score is a constant s(q, κ)); after it come FFNs only.
   At the readout the output is then the average of v over the positions of the largest score:
   Σ λ_v·v over the set V of values of the top-score classes present, every λ_v > 0, Σ λ_v = 1
   (with tie rule leftmost or rightmost, only where V has one element). The logit's sign is
   decided for all such λ and every p in [0, 1] at once, by z3 (where V has one element, by
   the class computation alone); where it is not the same for all of them, refused.

So every token's row after a nearest layer is the class ``Machine.memo`` gives for its class
before it and its heads' outputs, each the value of the class of the nearest key of the best
score on its side (None where the side is empty), and the readout's acceptance is
``Machine.accept`` of the last token's class and the set of final-layer signatures present.
(Until the type symmetry, a second rule explored this machine's states with the language's
automaton; the rounds rule checks every record it checked, and it was removed for the size.)
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import operator
from fractions import Fraction
from typing import Any, cast

from .interpret import ZERO, combine, dot, ffn, mix, solve
from .netfile import Affine, Block, Head, KernelError, Net, Refused

MAX_STEPS = 1_000_000
"""The most class steps (a class with one combination of its heads' outputs) per layer, and the
rounds rule's class triples, before the rule refuses: Dyck(8, D) over all 8 types needs at most
80,850 and 287,496."""

Num = Fraction | int  # an integer-valued rational kept as an int (equal, and faster)
Lin = tuple[Num, Num]  # a + p·b
Row = dict[str, Lin]
LEFT, RIGHT = "strict_causal", "strict_anticausal"


def budget(work: int, what: str) -> None:
    """Refused where ``work`` (class steps, or the rounds rule's class triples) is over
    ``MAX_STEPS``."""
    if work > MAX_STEPS:
        raise Refused(f"{work:,} {what}, over the budget of {MAX_STEPS:,}")


def _int(v: Num) -> Num:
    """An integer-valued rational as an int (equal, same hash, and faster to add)."""
    return v.numerator if v.denominator == 1 else v


_MAPS: dict[int, tuple[Affine, list[Any]]] = {}


def _lin(a: Affine, x: Row) -> Row:
    """y_o = c_o + Σ W[o][i]·x_i, on both parts (the zero inputs skipped)."""
    if id(a) not in _MAPS:
        rows = ((o, a.bias.get(o, ZERO), a.weights[o].items()) for o in a.outputs)
        _MAPS[id(a)] = (a, [(o, _int(b), [(i, _int(w)) for i, w in ws]) for o, b, ws in rows])
    out: Row = {}
    try:
        for o, s0, terms in _MAPS[id(a)][1]:
            s1 = 0
            for i, w in terms:
                v0, v1 = x[i]
                if v0:
                    s0 += w * v0
                if v1:
                    s1 += w * v1
            out[o] = (s0, s1)
    except KeyError as exc:
        raise KernelError(f"an affine map reads {exc}, which is not written before it") from None
    return out


def _act(kind: str, v: Lin, where: str) -> Lin:
    """ReLU, step or σ of a + p·b for every p in [0, 1], or Refused (premise 2)."""
    ends = (v[0], v[0] + v[1])
    if ends[0] <= 0 and ends[1] <= 0:
        return (0, 0)
    if kind == "step" and ends[0] > 0 and ends[1] > 0:
        return (1, 0)
    if kind == "sigma" and ends[0] >= 1 and ends[1] >= 1:
        return (1, 0)
    if all(e >= 0 for e in ends) and (kind == "relu" or (kind == "sigma" and max(ends) <= 1)):
        return v
    raise Refused(f"{where}: {kind} of {v[0]} + {v[1]}·p changes with the position p")


def _finite(row: Row, where: str) -> tuple[Num, ...]:
    if any(b for _, b in row.values()):
        raise Refused(f"{where} depends on the position p (premises 3-4)")
    return tuple(a for a, _ in row.values())


def _vectors(h: Head, rows: list[Row], at: str, masks: tuple[str, ...], what: str) -> Any:
    """Head h's query vectors, its keys' constant and p parts and its value vectors at the
    classes ``rows`` (a query or value with a p part refused: premises 3-4), h a hardmax
    dot-product head of a mask in ``masks``."""
    if not h.hardmax or h.scoring != "dot" or h.mask not in masks:
        raise Refused(f"{at}: not a hardmax dot-product head with {what}")
    qs = [_finite(_lin(h.query, r), f"{at}'s query") for r in rows]
    ks = [[kk[o] for o in h.query.outputs] for kk in (_lin(h.key, r) for r in rows)]
    vs = [_finite(_lin(h.value, r), f"{at}'s value") for r in rows]
    return qs, [[k[0] for k in kk] for kk in ks], [[k[1] for k in kk] for kk in ks], vs


class _Layer:
    """A nearest-selection attention layer (premise 3) over the classes ``C``, numbered."""

    def __init__(self, block: Block, rows: list[Row], where: str) -> None:
        self.heads: list[tuple[str, list[int], list[list[Any]], list[int]]] = []
        ids: dict[tuple[Num, ...], int] = {}  # a value's id: its index in ``values``
        for h in block.heads:
            at = f"{where} head {h.name}"
            qs, k0, k1, vs = _vectors(h, rows, at, (LEFT, RIGHT), "a strict mask")
            if h.empty != "zero":
                raise Refused(f"{at}: empty rule {h.empty!r} (the first position sees no key)")
            vals = [ids.setdefault(v, len(ids)) for v in vs]
            qids = sorted(set(qs))
            s = [[dot(q, k) for k in k0] for q in qids]
            for q, sq in zip(qids, s, strict=True):
                cs = {dot(q, k) for k in k1}
                c = cs.pop()
                if cs or (c <= 0 if h.mask == LEFT else c >= 0):
                    raise Refused(
                        f"{at}: the position's weight in the score is not one constant "
                        f"of the sign that prefers the nearest key"
                    )
                ss = sorted(set(sq))
                if any(b - a < abs(Fraction(c)) for a, b in itertools.pairwise(ss)):
                    raise Refused(
                        f"{at}: key scores {', '.join(map(str, ss))} closer than the position's weight {abs(c)}"
                    )
            s = [[_int(x) for x in sq] for sq in s]
            self.heads.append((h.mask, [qids.index(q) for q in qs], s, vals))
        self.values = list(ids)


def _anon(stage: Any) -> list[Any]:
    """A stage's sublayers with their blocks' names blanked (two layers alike but for names)."""
    return [dataclasses.replace(s, block=dataclasses.replace(s.block, name="")) for s in stage]


class Machine:
    """The classes, layers and the class-level semantics of a network meeting premises 1-4."""

    def __init__(self, net: Net) -> None:
        self.net = net
        if net.index_base not in (0, 1) or net.position != -1:
            raise Refused("positions not numbered from 0 or 1, or a readout not at the last one")
        if any(s.post_ln is not None for s in net.layers):
            raise Refused("a layer norm")
        self.emb: dict[str, int] = {}
        self.classes: list[list[tuple[Lin, ...]]] = [[]]
        self.ids: list[dict[tuple[Lin, ...], int]] = [{}]
        att = [i for i, s in enumerate(net.layers) if s.block.kind == "attention"]
        if not att:
            raise Refused("no attention layer")
        self.stages = [net.layers[a:b] for a, b in itertools.pairwise([0, *att, len(net.layers)])]
        if bad := [f for _, f, _ in net.positional if f not in ("1", "i/n")]:
            raise Refused(f"positional feature {bad[0]!r} (the rule reads 1 and i/n)")
        for tok in (*net.prefix, *net.alphabet, *net.suffix):
            a, b = dict.fromkeys(net.dims, ZERO), dict.fromkeys(net.dims, ZERO)
            for d, v in net.table[tok]:
                a[d] += v
            for d, f, c in net.positional:  # a + p·b: the constant features in a, i/n's in b
                (a if f == "1" else b)[d] += c
            row = {d: (_int(a[d]), _int(b[d])) for d in net.dims}
            self.emb[tok] = self._id(0, self._subs(self.stages[0], row))
        self.layers: list[_Layer] = []
        self.memo: list[dict[Any, int]] = []
        levels: list[list[Any]] = [self.layers, self.memo, self.classes, self.ids]  # per level
        for ell, stage in enumerate(self.stages[1:-1], start=1):
            same = ell > 1 and _anon(stage) == _anon(self.stages[ell - 1])
            if same and self.classes[-1] is self.classes[-2]:  # the same map on the same classes
                for x in levels:
                    x.append(x[-1])
                continue
            rows = [dict(zip(net.dims, c, strict=True)) for c in self.classes[ell - 1]]
            layer = _Layer(stage[0].block, rows, f"layer {stage[0].block.name}")
            for x, level in zip(levels, (layer, {}, [], {}), strict=True):  # a new level
                x.append(level)
            work = len(rows) * math.prod(1 + len(set(v)) for *_, v in layer.heads)
            budget(work, f"class steps at layer {ell}")
            for key in range(len(rows)):
                for outs in itertools.product(*[[None, *set(v)] for *_, v in layer.heads]):
                    self.step(ell, key, outs)
            old, new = self.ids[ell - 1], self.classes[ell]
            if set(new) == set(self.classes[ell - 1]):  # the same classes: numbered as before
                self.memo[-1] = {k: old[new[v]] for k, v in self.memo[-1].items()}
                self.classes[ell], self.ids[ell] = self.classes[ell - 1], self.ids[ell - 1]
        if any(s.block.kind == "attention" for s in self.stages[-1][1:]):
            raise Refused("attention after the last layer")
        self._final()

    def _id(self, ell: int, row: Row) -> int:
        c = tuple(row[d] for d in self.net.dims)
        if c not in self.ids[ell]:
            self.ids[ell][c] = len(self.classes[ell])
            self.classes[ell].append(c)
        return self.ids[ell][c]

    def _subs(self, subs: Any, row: Row, part: Row | None = None) -> Row:
        """The sublayers ``subs`` on a row; ``part``: the first one's (attention) output."""
        for k, sub in enumerate(subs):
            where = f"sublayer {sub.block.name}"
            act = functools.partial(_act, where=where)
            o = part if k == 0 and part is not None else ffn(sub.block, row, where, _lin, act)
            row = combine(sub, row, o, where, _add, (0, 0))
        return row

    def _attend(self, block: Block, outs: list[tuple[Head, Any]]) -> Row:
        part: Row = {}
        for h, v in outs:
            vals = (0,) * len(h.value.outputs) if v is None else v
            part.update({o: (x, 0) for o, x in zip(h.value.outputs, vals, strict=True)})
        return cast(Row, mix(block, part, _lin, (0, 0)))

    def pre(self, ell: int, key: int, outs: tuple[Any, ...]) -> Row:
        """The row after layer ``ell``'s attention sublayer at class ``key``, its heads' outputs."""
        stage = self.stages[ell]
        row = dict(zip(self.net.dims, self.classes[ell - 1][key], strict=True))
        vs = [None if v is None else self.layers[ell - 1].values[v] for v in outs]
        part = self._attend(stage[0].block, list(zip(stage[0].block.heads, vs, strict=True)))
        return self._subs(stage[:1], row, part)

    def step(self, ell: int, key: int, outs: tuple[Any, ...]) -> int:
        """The class after layer ``ell`` (and its FFNs) of class ``key`` given its heads' outputs."""
        memo = self.memo[ell - 1]
        if (key, outs) not in memo:
            row = self._subs(self.stages[ell][1:], self.pre(ell, key, outs))
            memo[key, outs] = self._id(ell, row)
        return memo[key, outs]

    def _final(self) -> None:
        """Premise 4 over the classes before the last attention layer."""
        stage, ell = self.stages[-1], len(self.stages) - 1
        rows = [dict(zip(self.net.dims, c, strict=True)) for c in self.classes[ell - 1]]
        sig: list[tuple[Any, ...]] = [() for _ in rows]
        self.queries: list[list[tuple[Num, ...]]] = [[] for _ in rows]
        for h in stage[0].block.heads:
            at = f"layer {stage[0].block.name} head {h.name}"
            qs, k0, k1, vs = _vectors(h, rows, at, ("none",), "mask none")
            if any(dot(q, k) for q in qs for k in k1):
                raise Refused(f"{at}: a score that depends on the position p")
            for j, q in enumerate(qs):
                self.queries[j].append(q)
                sig[j] = (*sig[j], (tuple(k0[j]), vs[j]))
        self.sigs = sorted(set(sig))  # a signature's id: its index here
        self.sig = [self.sigs.index(x) for x in sig]
        self.accepts: dict[Any, bool] = {}

    def accept(self, last: int, present: frozenset[Any]) -> bool:
        """The readout's acceptance (premise 4): the last position of class ``last``, the final
        layer's key signatures ``present``."""
        if (last, present) in self.accepts:
            return self.accepts[last, present]
        stage, ell = self.stages[-1], len(self.stages) - 1
        tiers = []
        for k, h in enumerate(stage[0].block.heads):
            q = self.queries[last][k]
            scored = [(dot(q, sg[k][0]), sg[k][1]) for sg in map(self.sigs.__getitem__, present)]
            top = max(s for s, _ in scored)
            tier = sorted({v for s, v in scored if s == top})
            if len(tier) > 1 and h.tie != "average":
                raise Refused(f"head {h.name}: tie rule {h.tie} over several values")
            tiers.append((h, tier))
        row = dict(zip(self.net.dims, self.classes[ell - 1][last], strict=True))
        if all(len(t) == 1 for _, t in tiers):
            part = self._attend(stage[0].block, [(h, t[0]) for h, t in tiers])
            out = _lin(self.net.logit, self._subs(stage, row, part))[self.net.logit.outputs[0]]
            if (out[0] > 0) != (out[0] + out[1] > 0):
                raise Refused("the logit's sign changes with the position p")
            got = out[0] > 0
        else:
            got = _decide(self.net, stage, row, tiers)
        self.accepts[last, present] = got
        return got


def _add(u: Lin, v: Lin) -> Lin:
    return (u[0] + v[0], u[1] + v[1])


def z3_affine(a: Affine, x: dict[str, Any]) -> dict[str, Any]:
    """y_o = c_o + Σ W[o][i]·x_i on z3 terms."""
    import z3

    terms = {o: (z3.RealVal(w) * x[i] for i, w in a.weights[o].items()) for o in a.outputs}
    return {o: z3.RealVal(a.bias.get(o, ZERO)) + sum(terms[o], z3.RealVal(0)) for o in terms}


def z3_ffn(steps: tuple[Any, ...], x: dict[str, Any]) -> dict[str, Any]:
    """An FFN's affine maps, ReLU, step and σ on z3 terms (a layer norm refused); {} if empty."""
    import z3

    def act(kind: str, v: Any) -> Any:
        if kind == "sigma":
            return z3.If(v < 0, 0, z3.If(v > 1, 1, v))
        return z3.If(v > 0, v if kind == "relu" else 1, 0)

    return ffn(Block("ffn", "z3", steps=tuple(steps)), x, "an FFN", z3_affine, act)  # type: ignore[no-any-return]


def _decide(net: Net, stage: Any, row: Row, tiers: list[tuple[Head, list[Any]]]) -> bool:
    """The logit's sign for every average of each tier (λ > 0, Σ λ = 1) and p in [0, 1], by z3."""
    import z3

    p = z3.Real("p")
    cons = [p >= 0, p <= 1]
    x: dict[str, Any] = {d: z3.RealVal(a) + z3.RealVal(b) * p for d, (a, b) in row.items()}
    part: dict[str, Any] = {}
    for k, (h, tier) in enumerate(tiers):
        lam = [z3.Real(f"l{k}_{j}") for j in range(len(tier))]
        cons += [*(v > 0 for v in lam), sum(lam) == 1]
        for c, name in enumerate(h.value.outputs):
            terms = (w * z3.RealVal(v[c]) for w, v in zip(lam, tier, strict=True))
            part[name] = sum(terms, z3.RealVal(0))

    for k, sub in enumerate(stage):
        o = mix(sub.block, part, z3_affine, z3.RealVal(0)) if k == 0 else z3_ffn(sub.block.steps, x)
        x = combine(sub, x, o, f"sublayer {sub.block.name}", operator.add, z3.RealVal(0))
    logit = z3_affine(net.logit, x)[net.logit.outputs[0]]
    seen = []
    for goal in (logit > 0, logit <= 0):
        r = solve(z3, 20_000, *cons, goal)[0]
        if r == z3.unknown:
            raise Refused("z3 did not decide the final layer's average (unknown)")
        seen.append(r == z3.sat)
    if seen != [True, False] and seen != [False, True]:
        raise Refused("the accept bit depends on the final layer's average (not one sign)")
    return bool(seen[0])
