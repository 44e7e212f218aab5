"""The kernel's rule for every length by the layer induction: a Dyck(k, D) recognizer whose
nearest-selection layers (:mod:`.nearest`) each run one matching round.

The round R (the kernel's own statement of Yao et al. 2021's algorithm, §5.1). A word γuω is read
as tokens (t, m, e): t the symbol, m "matched", e "error"; γ and ω start (t, 1, 0), every bracket
(t, 0, 0). One round maps every token at once (:func:`round_`): a token with m = 1 stays; an open
bracket whose nearest unmatched token on the right is an unmatched close bracket (a close bracket
whose nearest unmatched token on the left is an unmatched open bracket) gets m = 1 where the two
have the same type, else e = 1; every other token stays. After N rounds *R accepts* iff every
token has m = 1 and e = 0.

Height lemma: R accepts γuω after N rounds iff u ∈ Dyck(k, N). Call the pairs of u those that
the reduction "delete an adjacent open_τ close_τ" deletes (for u ∈ Dyck(k): its bracket
matching), and the height of a pair 1 + the largest height of the pairs inside it (0 if none);
the depth of u ∈ Dyck(k) is the largest height. (1) A round marks i and j together, and only when
they are adjacent among the unmatched tokens and form open_τ close_τ (i's nearest unmatched on the
right is j iff j's on the left is i): a reduction step of the unmatched word, disjoint from the
round's others. So the matched tokens are pairs of u, and all matched means u ∈ Dyck(k).
(2) A pair matched in round r has every token inside it matched before (else its ends are not
adjacent among the unmatched): its height h satisfies h <= 1 + (r − 1) = r, by induction on r;
all matched after N rounds means depth(u) <= N. (3) For u ∈ Dyck(k), by induction on ℓ: after ℓ
rounds every pair of height <= ℓ is matched and e = 0 everywhere. A pair (i, j) of height ℓ + 1
has inside it only pairs of height <= ℓ: matched, so i and j are adjacent among the unmatched
and round ℓ + 1 matches them (same type: they are a pair of u). No round sets e: an unmatched
open i whose nearest unmatched on the right is a close j has only matched tokens between them,
a union of pairs by (1), hence balanced, so j is i's partner in u, of its type. With
depth(u) <= N, every pair is matched after N rounds. The rule checks N = D, the statement's D.

Rule (rounds). Premises, each checked from the network file: the network meets the premises of
:mod:`.nearest` (its classes C_ℓ, every head a nearest selection, the final layer's acceptance a
function of the last class and the set of key signatures present), with one prefix token γ and one
suffix token ω; N nearest layers with N = D. Each class c gets a token state α(c): the embedding
class of t gets γ's and ω's (t, 1, 0), a bracket's (t, 0, 0); then for every class c of C_ℓ with
a state, every key class of a state to its left (None: only at γ) and to its right (None: only at
ω), the class the network computes (``Machine.memo``, every combination of the heads' outputs)
gets R's state; two states for one class: refused. Every head's score (per query vector) is one
constant on the unmatched key classes and a smaller one on the matched ones: the nearest key of
the best score is then the nearest unmatched token, else the nearest token (matched), as R reads.
At the end, every signature of the final layer belongs to classes that are all accepted by R
(m = 1, e = 0) or all not, and for ω's every class and every set of signatures present (ω's among
them), the network's acceptance is "all of them accepted". By induction on ℓ, every token's class
after ℓ layers has R's state after ℓ rounds, so the network accepts γuω iff R does after N = D
rounds, iff u ∈ Dyck(k, D): for every length. A layer that repeats the one before it on the same
classes (``Machine`` shares them) repeats its check: it is checked once. The checks are
O(classes³) per layer: over ``MAX_STEPS`` class steps or triples the rule refuses, at once.

Rule (type symmetry), for k > KEPT = 3 types (Yao et al.'s k = 128): the rounds above run on the
network restricted to the words of types 1..3 (N3: the same file, the alphabet cut to 6 symbols),
and these premises carry them to every word of the k types (N). Checked from the file:
(S1) T, the dims on which two open (or two close) brackets' rows differ, holds a code of the
type: the same for the open and the close bracket of a type, different for two types and from
γ's, ω's and the zero vector (the *special* codes); no positional feature writes T. So a
bracket's row is its shape's row plus its type's code on T. (S2) Every attention layer but the
last (a matching layer) is residual with no output map and no layer norm, and is followed by
exactly one FFN, without residual; each of its heads' value map copies T into *copy* dims of
its own (weight 1 from each dim of T, nothing else, bias 0), and its other outputs read no code
dim (T or a copy); the copies are 0 in every embedding row, written by no positional feature and
by no FFN. (S3) No query or key, no value of the last attention layer, no affine map after it
and not the readout reads a code dim. A permutation σ of the types acts on a row by replacing
the code of type τ by the code of σ(τ) in T and in each copy (the special codes stay); it does
not change the *other* dims. (S4, :meth:`Symmetry.closed`, at every level of N3) every class
of a state holds its symbol's code in T (no p part) and 0 in the copies, and its images under
(1 2) and (1 2 3) are classes of the images of its state (σ acting on the state's symbol), so
the classes of states and their states are closed under all permutations of types 1..3.
(S5, :meth:`Symmetry.invariant`, by z3) each matching FFN F, on every input whose T and copies
hold any codes (the k types' or special) and whose other dims are those of a class step of N3
at a layer it serves (``Machine.pre``, p ∈ [0, 1]), passes T through and has its other outputs
the same on σ·x as on x, for σ = (1 2) and σ = (1 2 … k); these generate all permutations, and
the inputs are closed under them, so F(σ·x) = σ·F(x) for every σ.
Soundness, by induction on ℓ, for every word of N and every token i with R's state a_i after ℓ
rounds: row_ℓ(i) has 0 in the copies and, for every σ mapping i's type into 1..3, σ·row_ℓ(i) is
a class of N3 at level ℓ of state σ(a_i). ℓ = 0 by (S1). Step: the heads' scores read no code
dim (S3), so they are those of the classes σ·row_ℓ(j), whose checked scores make each head select
R's neighbour L, R of i; take σ mapping the (at most 3) types of i, L and R into 1..3 (γ and ω
have none): by (S2) the heads copy the codes (σ·v(j) = v(σ·row(j))), and by (S5)
σ·row_{ℓ+1}(i) = F(σ·row_ℓ(i) + σ-outputs) is the class N3 computes from the classes
σ·row_ℓ(i), σ·row_ℓ(L), σ·row_ℓ(R), which the per-layer check gave state R(σa_i, σa_L, σa_R) =
σ(a_i') (R compares types only for equality); (S4) extends it from this σ to every σ mapping
i's type into 1..3 (they differ only there, by a permutation of 1..3). The copies are 0 again
after the FFN (S2). At the end the final layer and readout read no code dim (S3): each token's
signature and ω's acceptance are those of N3's classes σ_i·row(i), checked as above: N accepts
γuω iff every token has R's m = 1, e = 0 after D rounds, iff u ∈ Dyck(k, D).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .interpret import solve
from .languages import DYCK, brackets, language
from .nearest import LEFT, Machine, budget, z3_ffn
from .netfile import Affine, Net, Refused

State = tuple[str, int, int]
KEPT = 3
"""The bracket types the rounds rule reads where the type symmetry holds (module docstring)."""


def round_(me: State, left: State | None, right: State | None, kinds: dict[str, Any]) -> State:
    """One round R at a token ``me`` with its nearest unmatched (else nearest) neighbours."""
    t, m, e = me
    side = kinds.get(t, (0, 0))[1]
    o = right if side == 1 else left
    if m or not side or o is None or o[1] or kinds.get(o[0], (0, 0))[1] != -side:
        return me
    return (t, 1, e) if kinds[o[0]][0] == kinds[t][0] else (t, 0, 1)


def prove_by_rounds(net: Net, statement: str) -> str:
    """The rule of the module docstring: the detail of what was checked, or Refused."""
    match = DYCK.fullmatch(statement)
    if not match or len(net.prefix) != 1 or len(net.suffix) != 1:
        raise Refused("the rounds rule reads Dyck(k, D) over γuω")
    k, depth = int(match.group(1)), int(match.group(2))
    language(statement, net.alphabet)  # the alphabet must be the kernel's brackets
    kinds = {s: (t, 1 - 2 * j) for t, p in enumerate(brackets(k)) for j, s in enumerate(p)}
    (g,), (w,) = net.prefix, net.suffix
    sym, why = None, ""
    if k > KEPT:
        try:
            sym = Symmetry(net, k)
            net = dataclasses.replace(net, alphabet=net.alphabet[: 2 * KEPT])
        except Refused as exc:
            why = f" (type symmetry refused: {exc})"
    try:
        m = Machine(net)
    except Refused as exc:
        raise Refused(f"{exc}{why}") from None
    if len(m.layers) != depth:
        raise Refused(f"{len(m.layers)} nearest layers for Dyck({k},{depth}): rounds != D")
    alpha: dict[int, State] = {}
    for tok in (g, *net.alphabet, w):
        _put(alpha, m.emb[tok], (tok, int(tok in (g, w)), 0), "the embedding")
    seen: list[Any] = []
    for ell, layer in enumerate(m.layers):
        if sym:
            sym.closed(m, ell, alpha, kinds)
        if seen and seen[-1][0] is layer and seen[-1][1] is m.memo[ell] and seen[-1][2] == alpha:
            continue  # the same check as the layer before: its result is alpha again
        seen.append((layer, m.memo[ell], dict(alpha)))
        budget(len(alpha) ** 3, "class triples")
        for mask, qid, s, _ in layer.heads:
            for sq in {tuple(s[qid[c]]) for c in alpha}:
                top, low = ({sq[c] for c, a in alpha.items() if a[1] == b} for b in (0, 1))
                if len(top) > 1 or len(low) > 1 or (top and low and min(top) <= max(low)):
                    raise Refused(f"layer {ell + 1} head ({mask}): scores not 'unmatched first'")
        nxt: dict[int, State] = {}
        near: dict[Any, Any] = {None: None, **alpha}
        for c, a in alpha.items():
            lefts = [None] if a[0] == g else [x for x in alpha if alpha[x][0] != w]
            rights = [None] if a[0] == w else [x for x in alpha if alpha[x][0] != g]
            for kl, kr in itertools.product(lefts, rights):
                ks = [(h[3], kl if h[0] == LEFT else kr) for h in layer.heads]
                outs = tuple(None if x is None else v[x] for v, x in ks)
                want = round_(a, near[kl], near[kr], kinds)
                _put(nxt, m.memo[ell][c, outs], want, f"layer {ell + 1}")
        alpha = nxt
    if sym:
        sym.closed(m, len(m.layers), alpha, kinds)
        why = sym.invariant(m)
    good: dict[int, Any] = {}
    for c, a in alpha.items():
        _put(good, m.sig[c], a[1:] == (1, 0), "a final signature, accepted")
    for c in (c for c, a in alpha.items() if a[0] == w):
        for r in range(len(good) + 1):
            for more in itertools.combinations(good, r):
                present = frozenset((m.sig[c], *more))
                if m.accept(c, present) != all(good[x] for x in present):
                    raise Refused("the final layer's acceptance is not 'every token matched'")
    return (
        f"proved for every length by {depth} matching rounds (height lemma, rounds = D = {depth}): "
        f"classes per layer {[len(c) for c in m.classes]}, {len(seen)} distinct layer checks{why}"
    )


def _put(alpha: dict[int, Any], c: int, want: Any, where: str) -> None:
    if alpha.setdefault(c, want) != want:
        raise Refused(f"{where}: one class for the token states {alpha[c]} and {want}")


class Symmetry:
    """The type symmetry's premises (S1)-(S3) on a network of k types (module docstring); (S4)
    by :meth:`closed` at every level, (S5) by :meth:`invariant`."""

    def __init__(self, net: Net, k: int) -> None:
        rows = {s: dict(net.table[s]) for s in (*net.prefix, *net.alphabet, *net.suffix)}
        pairs = brackets(k)
        sides = list(zip(*pairs, strict=True))  # the open brackets, the close brackets
        att = [i for i, x in enumerate(net.layers) if x.block.kind == "attention"]

        def varies(d: str) -> bool:  # two open (or two close) brackets differ on d
            return any(len({rows[s].get(d, 0) for s in side}) > 1 for side in sides)

        self.T = tuple(filter(varies, net.dims))
        self.code = code = {s: tuple(rows[s].get(d, 0) for d in self.T) for s in rows}
        self.special = sorted({code[s] for s in (*net.prefix, *net.suffix)} | {(0,) * len(self.T)})
        self.codes = self.special + [code[o] for o, _ in pairs]  # none, γ's, ω's; types 1..k
        self.sym = {(t, j): p[j] for t, p in enumerate(pairs) for j in (0, 1)}
        if len(set(self.codes)) < len(self.codes) or any(code[o] != code[c] for o, c in pairs):
            raise Refused("the dims the types change are not a code of the type alone")
        self.regs, self.ffns = [self.T], [net.layers[i + 1].block for i in att[:-1]]
        heads, others = [], set[str]()  # the value maps' copies (map, dim); their other outputs
        for i in att[:-1]:
            sub, ffn, mine = net.layers[i], net.layers[i + 1], set[str]()
            if i + 2 not in (*att, len(net.layers)) or ffn.block.kind != "ffn" or ffn.residual:
                raise Refused("a matching layer not attention then one FFN without residual")
            if not sub.residual or sub.post_ln or sub.block.output or ffn.post_ln:
                raise Refused("a matching layer with a layer norm, output map or no residual")
            for h in sub.block.heads:
                w, b = h.value.weights, h.value.bias
                reg = tuple(o for d in self.T for o in h.value.outputs if d in w[o])
                copy = [({d: Fraction(1)}, None) for d in self.T]
                if [(w[o], b.get(o)) for o in reg] != copy or (mine & {*reg}):
                    raise Refused(f"head {h.name}'s value does not copy the code to own dims")
                self.regs += [reg] if reg not in self.regs else []
                mine |= {*reg}
                heads += [(h.value, o) for o in reg]
                others |= {o for o in h.value.outputs if o not in reg}
        regs = {d for r in self.regs for d in r}
        self.copies, self.other = regs - {*self.T}, [d for d in net.dims if d not in regs]
        maps = [
            a for i in att for h in net.layers[i].block.heads for a in (h.query, h.key, h.value)
        ]
        maps += [a for x in net.layers[att[-1] :] for a in x.block.steps if isinstance(a, Affine)]
        kept = {
            o for b in self.ffns for o in [a for a in b.steps if isinstance(a, Affine)][-1].outputs
        }
        pos = {d for d, *_ in net.positional}
        kept |= {d for x in rows.values() for d, v in x.items() if v} | pos
        reads = [(a, o) for a in [*maps, net.logit] for o in a.outputs if {*a.weights[o]} & regs]
        leaks = any(x not in heads for x in reads) or regs & others
        if att[0] or leaks or self.copies & kept or {*self.T} & pos:
            raise Refused("a score, readout, value or FFN output reads or keeps a code dim")

    def closed(self, m: Machine, ell: int, alpha: dict[int, State], kinds: dict[str, Any]) -> None:
        """(S4) at level ``ell``: each class of a state holds its symbol's code in T, with no p
        part, and 0 in the copies; and its images under the permutations (1 2) and (1 2 3) of
        the types (the code in T replaced) are classes of the images of its state."""
        for c, a in alpha.items():
            row = dict(zip(m.net.dims, m.classes[ell][c], strict=False))
            t, side = kinds.get(a[0], (-1, 0))
            held = [row[d] for d in self.T] == [(v, 0) for v in self.code[a[0]]]
            if not held or any(row[d] != (0, 0) for d in self.copies):
                raise Refused(f"level {ell}: a class of state {a} does not hold its code alone")
            perms = ((1, 0, 2), (1, 2, 0)) if t >= 0 else ()  # (1 2), (1 2 3); γ, ω: no type
            for to in (self.sym[perm[t], side < 0] for perm in perms):
                img = {**row, **{d: (v, 0) for d, v in zip(self.T, self.code[to], strict=False)}}
                if alpha.get(m.ids[ell].get(tuple(img[d] for d in m.net.dims), -1)) != (to, *a[1:]):
                    raise Refused(
                        f"level {ell}: the classes are not closed under permuting 3 types"
                    )

    def invariant(self, m: Machine) -> str:
        """(S5) by z3, for each distinct matching FFN (its inputs' other dims those of every
        class step of the layers it serves) and each generator: the query is unsat."""
        import z3

        s0, n, p = len(self.special), len(self.codes), z3.Real("p")
        tau = [z3.Int(f"reg{j}") for j in range(len(self.regs))]
        gens: tuple[Callable[[Any], Any], ...] = (
            lambda t: z3.If(t == s0, s0 + 1, z3.If(t == s0 + 1, s0, t)),
            lambda t: z3.If(t < s0, t, z3.If(t == n - 1, s0, t + 1)),
        )  # (1 2), (1 2 … k)

        def row(ts: list[Any], x: dict[str, Any]) -> dict[str, Any]:
            for r, t in zip(self.regs, ts, strict=True):
                for i, d in enumerate(r):
                    x[d] = z3.RealVal(self.codes[-1][i])
                    for j in range(n - 1):
                        x[d] = z3.If(t == j, z3.RealVal(self.codes[j][i]), x[d])
            return x

        groups: list[list[Any]] = []  # [the FFN's steps, its inputs' other dims]
        for ell, ffn in enumerate(self.ffns, start=1):
            if not any(gr[0] == ffn.steps for gr in groups):
                groups.append([ffn.steps, set()])
            if ell == 1 or m.memo[ell - 1] is not m.memo[ell - 2]:
                next(gr[1] for gr in groups if gr[0] == ffn.steps).update(
                    tuple(m.pre(ell, c, o)[d] for d in self.other) for c, o in m.memo[ell - 1]
                )

        def lin(ab: tuple[Any, Any]) -> Any:  # a + b·p
            return z3.RealVal(ab[0]) + z3.RealVal(ab[1]) * p

        for steps, dom in groups:
            x = {d: z3.Real(d) for d in self.other}
            at = [z3.And([x[d] == lin(ab) for d, ab in zip(x, v, strict=False)]) for v in dom]
            base = [p >= 0, p <= 1, z3.Or(at), *(z3.And(0 <= t, t < n) for t in tau)]
            out = z3_ffn(steps, xs := row(tau, dict(x)))
            for g in gens:
                img = z3_ffn(steps, row([g(t) for t in tau], dict(x)))
                bad = [out[d] != xs[d] if d in out else xs[d] != 0 for d in self.T]
                bad += [img[o] != v for o, v in out.items() if o not in self.T]
                if (r := solve(z3, 120_000, *base, z3.Or(bad))[0]) != z3.unsat:
                    raise Refused(
                        f"a matching FFN is not invariant under permuting the types ({r})"
                    )
        queries = f"{2 * len(groups)} z3 queries"
        return f" on {KEPT} of the {n - s0} types, the rest by the type symmetry ({queries})"
