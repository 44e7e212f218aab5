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
classes (``Machine`` shares them) repeats its check: it is checked once.
"""

from __future__ import annotations

import itertools
from typing import Any

from .languages import DYCK, brackets, language
from .nearest import LEFT, Machine, prove_by_nearest
from .netfile import Net, Refused

State = tuple[str, int, int]


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
    m = Machine(net)
    if len(m.layers) != depth:
        raise Refused(f"{len(m.layers)} nearest layers for Dyck({k},{depth}): rounds != D")
    alpha: dict[int, State] = {}
    for tok in (g, *net.alphabet, w):
        _put(alpha, m.emb[tok], (tok, int(tok in (g, w)), 0), "the embedding")
    seen: list[Any] = []
    for ell, layer in enumerate(m.layers):
        if seen and seen[-1][0] is layer and seen[-1][1] is m.memo[ell] and seen[-1][2] == alpha:
            continue  # the same check as the layer before: its result is alpha again
        seen.append((layer, m.memo[ell], dict(alpha)))
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
        f"classes per layer {[len(c) for c in m.classes]}, {len(seen)} distinct layer checks"
    )


def prove_dyck(net: Net, statement: str) -> str:
    """Rounds (this module), and where they are refused, nearest selections (:mod:`.nearest`)."""
    try:
        return prove_by_rounds(net, statement)
    except Refused as exc:
        try:
            return prove_by_nearest(net, statement)
        except Refused as again:
            raise Refused(f"{again}; rounds: {exc}") from None


def _put(alpha: dict[int, Any], c: int, want: Any, where: str) -> None:
    if alpha.setdefault(c, want) != want:
        raise Refused(f"{where}: one class for the token states {alpha[c]} and {want}")
