"""An aperiodic DFA compiled to a B-RASP program with past masks only: :func:`dfa_program`.

Two constructions; :func:`dfa_program` builds every one that applies and keeps the program with
the fewest operations. Both read the DFA's run from its start state only, and every attention in
both is "the rightmost j < i with …" (the past mask), so the program is past-only: its own
automaton (:func:`.brasp_lemmas.program_automaton`) exists and ``program=language`` is decided
for every length by comparing it with the DFA's.

**The ordered route** (only for a partially ordered DFA: every cycle is a self-loop, e.g. "a, b,
c in this order", a*b*c*). Along a run each state is entered at most once and left at most once
(a state left is never reached again), so with the states in a topological order: q holds after
position i iff q was entered at some j ≤ i (the start state at −1) and no letter outside q's
self-loops was read after the entry and up to i. The entry at j is "w_j = a and p held after
j − 1" for an edge p —a→ q (p earlier in the order, so its vector is built), read with a head on
the previous position; "some j ≤ i" is the vector at i or a head on the earlier positions. About
three heads per state, depth twice the longest path.

**The cut route** (every aperiodic DFA). A DFA with states Q reads a word; the transformation of
a word x is τ_x : Q → Q, τ_x(p) the state after x from p. The program keeps, at every position
i, Boolean vectors T[p, q](i) = "the transformation of the current segment ending at i maps p
to q" for the rows p it needs; it accepts where the whole prefix maps the start state into an
accepting one. The segments and the construction, by induction on (|Q'|, the number of letters):

- ``trans(Q', letters, β, rows)``: the letters are transformations of Q' with one indicator
  vector each (exactly one holds at a position that is not a boundary); β is a boundary vector;
  the segment of i is (b(i), i], b(i) the last position ≤ i where β holds (−1 if none), and T
  is the composition of the letters read in it (the identity at a boundary). Q' is cut down to
  the states reachable from the rows (each letter maps that set into itself, and the restricted
  letters' monoid is a quotient of a submonoid of the DFA's, so it stays aperiodic); letters
  that act alike on it are one letter (the indicators or-ed), letters that act as the identity
  are dropped (they do not change T), and T[p, q] for q outside Q' is the constant 0.
- If no letter is left, T is the identity. (Q' of one state too.) A letter that permutes Q'
  is the identity, by aperiodicity (σⁿ = σⁿ⁺¹ gives σ = id), so some letter is not onto.
- Otherwise pick a letter c whose image R = Q'·c is smallest (|R| < |Q'|) and cut the segment
  at its c's: u₀ c u₁ c … c u_k, each u_m free of c.
  - A = ``trans(Q', letters without c, β ∨ c, rows ∪ R')``: the transformation of the c-free
    stretch ending at i (same states, one letter fewer);
  - F(j) = τ(u c) at a c position j: A at j − 1 (the previous position, a past head; the
    identity at position 0) followed by c;
  - the c's after the first one of the segment, read as letters of an automaton on R' ⊆ R, the
    states a word u c (u free of c) leads to from the rows, closed under the maps R → R that a
    word u c can give (found by closing the other letters' transformations under composition):
    at such a c, the restriction of F to R' (one indicator per map: the and of its entries of
    F); its monoid divides the DFA's, so it is aperiodic, and it has fewer states:
    E = ``trans(R', those letters, β ∨ the first c, the entry states)``;
  - G(i) = F at the first c of the segment (F itself at that c, else a past head on "first c
    or β", which also forgets the value at a boundary; a constant entry of F is its own G);
  - T(i) = A(i) before the segment's first c, else (G ∘ E) ∘ A (Boolean matrix products,
    G ∘ E first: |rows|·|R'|² + |rows|·|R'|·|Q'| conjunctions instead of their product).

Soundness of the result does not rest on these arguments: the claims of the compiled program
(:func:`.claims.program_construction`) prove network = program and program = language against
the DFA, for every length where the routes apply. Cost of the cut route: each level keeps
|rows|·|Q'| vectors for T (only the start state's row at the top), and the letters of E are at
most |R|^|R| maps; on the examples of ``docs/synth.md`` the programs have tens to hundreds of
operations. Small, not minimal: Dyck-1 of depth ≤ 3 as a regular expression (a cyclic DFA of
five states) gives 461 operations.

May import: its own package's modules and the vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from netproof.verifier.claims import Automaton
from netproof.verifier.claims.monoid import NotStarFree, star_freeness
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.regular import minimal_automaton

__all__ = ["dfa_program"]

_Map = tuple[tuple[int, int], ...]  # (state, image) pairs over a state set, in state order
_Letters = tuple[tuple[_Map, B.BVec], ...]
_Matrix = dict[tuple[int, int], B.BVec]


def _and(*xs: B.BVec) -> B.BVec:
    out: B.BVec | None = None
    for x in xs:
        if x == B.FALSE:
            return B.FALSE
        if x != B.TRUE:
            out = x if out is None else B.And(out, x)
    return B.TRUE if out is None else out


def _or(*xs: B.BVec) -> B.BVec:
    out: B.BVec | None = None
    for x in xs:
        if x == B.TRUE:
            return B.TRUE
        if x != B.FALSE:
            out = x if out is None else B.Or(out, x)
    return B.FALSE if out is None else out


def _not(x: B.BVec) -> B.BVec:
    if isinstance(x, B.Const):
        return B.Const(not x.value)
    return x.arg if isinstance(x, B.Not) else B.Not(x)


def _last(score: B.BVec, value: B.BVec, default: B.BVec) -> B.BVec:
    """``value`` at the rightmost j < i where ``score`` holds, else ``default`` (past mask)."""
    if score == B.FALSE or (isinstance(value, B.Const) and value == default):
        return default
    return B.rightmost("past", score=score.at_j, value=value.at_j, default=default)


def _reach(start: Iterable[int], maps: Sequence[dict[int, int]]) -> tuple[int, ...]:
    """The states reachable from ``start`` by the ``maps``, sorted."""
    seen = set(start)
    todo = list(seen)
    while todo:
        p = todo.pop()
        for m in maps:
            if m[p] not in seen:
                seen.add(m[p])
                todo.append(m[p])
    return tuple(sorted(seen))


def _get(matrix: _Matrix, p: int, q: int) -> B.BVec:
    return matrix.get((p, q), B.FALSE)


class _Builder:
    def __init__(self) -> None:
        self.memo: dict[tuple[object, ...], _Matrix] = {}

    def trans(
        self, states: tuple[int, ...], letters: _Letters, beta: B.BVec, rows: tuple[int, ...]
    ) -> _Matrix:
        """T[p, q] for p in ``rows``, q in the states reachable from them (absent: 0); see the
        module docstring."""
        states = _reach(rows, [dict(m) for m, _ind in letters])
        acting: dict[_Map, B.BVec] = {}
        for m, ind in letters:
            image = dict(m)
            r = tuple((p, image[p]) for p in states)
            if any(p != q for p, q in r):
                acting[r] = _or(acting[r], ind) if r in acting else ind
        letters = tuple(sorted(acting.items(), key=lambda x: x[0]))
        key = (states, letters, beta, rows)
        if key in self.memo:
            return self.memo[key]
        if len(states) == 1 or not letters:
            ident: _Matrix = {(p, q): B.Const(p == q) for p in rows for q in states}
            self.memo[key] = ident
            return ident
        shrinking = [(m, ind) for m, ind in letters if len({q for _p, q in m}) < len(states)]
        if not shrinking:
            raise ValueError(
                f"a letter permutes the states {states} without being the identity: the monoid "
                "is not aperiodic (the caller checks star-freeness first)"
            )
        cmap, cind = min(shrinking, key=lambda x: (len({q for _p, q in x[0]}), x[0]))
        out = self._cut(states, letters, beta, rows, cmap, cind)
        self.memo[key] = out
        return out

    def _cut(
        self,
        states: tuple[int, ...],
        letters: _Letters,
        beta: B.BVec,
        rows: tuple[int, ...],
        cmap: _Map,
        cind: B.BVec,
    ) -> _Matrix:
        fc = dict(cmap)
        others = tuple((m, ind) for m, ind in letters if m != cmap)
        # the transformations of the c-free words, then the maps R -> R a word u c can give
        position = {s: k for k, s in enumerate(states)}
        found = {states}
        todo = [states]
        gens = [dict(m) for m, _ind in others]
        while todo:
            t = todo.pop()
            for gen in gens:
                nt = tuple(gen[x] for x in t)
                if nt not in found:
                    found.add(nt)
                    todo.append(nt)
        image = tuple(sorted(set(fc.values())))
        words = {tuple(fc[t[position[r]]] for r in image) for t in found}
        entry = tuple(sorted({fc[t[position[p]]] for p in rows for t in found}))
        inner = _reach(entry, [dict(zip(image, d, strict=True)) for d in words])
        maps = sorted({tuple((r, d[image.index(r)]) for r in inner) for d in words})
        need = tuple(sorted(set(rows) | set(inner)))
        stretch = self.trans(states, others, _or(beta, cind), need)
        before = _last(
            _or(cind, beta), _and(cind, _not(beta)), B.FALSE
        )  # a c earlier in the segment
        seen = _and(_not(beta), _or(cind, before))
        first = _and(cind, _not(beta), _not(before))
        later = _and(cind, _not(beta), before)
        prev = {
            (p, r): _last(B.TRUE, _get(stretch, p, r), B.Const(p == r))
            for p in need
            for r in states
        }
        f = {(p, q): _or(*(prev[p, r] for r in states if fc[r] == q)) for p in need for q in image}
        identity = tuple((r, r) for r in inner)
        block = tuple(
            (d, _and(later, *(f[r, q] for r, q in d))) for d in maps if d != identity
        )  # the identity's c's change nothing: no letter
        blocks = self.trans(inner, block, _or(beta, first), entry)
        g = {
            (p, r): f[p, r]
            if isinstance(f[p, r], B.Const)
            else _or(
                _and(first, f[p, r]), _and(_not(first), _last(_or(first, beta), f[p, r], B.FALSE))
            )
            for p in rows
            for r in entry
        }
        ge = {
            (p, s): _or(*(_and(g[p, r], _get(blocks, r, s)) for r in entry))
            for p in rows
            for s in inner
        }
        out: _Matrix = {}
        for p in rows:
            for q in states:
                via = _or(*(_and(ge[p, s], _get(stretch, s, q)) for s in inner))
                alone = _get(stretch, p, q)
                out[p, q] = alone if via == alone else _or(_and(seen, via), _and(_not(seen), alone))
        return out


def _order(dfa: Automaton, symbols: int) -> list[int] | None:
    """The states in a topological order of the DFA's graph without its self-loops; ``None``
    when the DFA has another cycle."""
    succ = {q: {dfa.delta[q][a] for a in range(symbols)} - {q} for q in range(dfa.states)}
    indegree = dict.fromkeys(succ, 0)
    for q in succ:
        for r in succ[q]:
            indegree[r] += 1
    todo = sorted((q for q, d in indegree.items() if d == 0), reverse=True)
    order: list[int] = []
    while todo:
        q = todo.pop()
        order.append(q)
        for r in sorted(succ[q], reverse=True):
            indegree[r] -= 1
            if indegree[r] == 0:
                todo.append(r)
    return order if len(order) == dfa.states else None


def _ordered_route(dfa: Automaton, alphabet: tuple[str, ...]) -> dict[int, B.BVec] | None:
    """For each state q, the vector "the run is in q after position i" by the ordered route
    (module docstring); ``None`` when the DFA is not partially ordered."""
    order = _order(dfa, len(alphabet))
    if order is None:
        return None
    tok = [B.token(s) for s in alphabet]
    held: dict[int, B.BVec] = {}  # q held after position i
    before: dict[int, B.BVec] = {}  # q held after position i - 1 (at -1: the start state)
    for q in order:
        leaves = _not(_or(*(tok[a] for a in range(len(alphabet)) if dfa.delta[q][a] == q)))
        entered_earlier: B.BVec = B.TRUE  # the start state: entered at -1
        entered: B.BVec = B.TRUE
        if q != dfa.start:
            entry = _or(
                *(
                    _and(tok[a], before[p])
                    for p in order
                    if p in held
                    for a in range(len(alphabet))
                    if dfa.delta[p][a] == q
                )
            )
            entered_earlier = _last(entry, B.TRUE, B.FALSE)
            entered = _or(entry, entered_earlier)
        leaving = _and(leaves, entered_earlier)
        held[q] = _and(entered, _not(_or(leaving, _last(leaving, B.TRUE, B.FALSE))))
        before[q] = _last(B.TRUE, held[q], B.Const(q == dfa.start))
    return held


def _size(x: B.BVec) -> int:
    return len(B.operations(x))


def _program(
    held: dict[int, B.BVec], dfa: Automaton, alphabet: tuple[str, ...], name: str
) -> B.Program:
    """Accept where the run is in an accepting state: the or of those states' vectors, or the
    negated or of the others' (the vectors of one position are one-hot), whichever is smaller."""
    states = range(dfa.states)
    accept = _or(*(held.get(q, B.FALSE) for q in sorted(dfa.accepting)))
    reject = _not(_or(*(held.get(q, B.FALSE) for q in states if q not in dfa.accepting)))
    output = min((accept, reject), key=_size)
    if isinstance(output, B.Const):  # a program's output is an operation: 0 or 1 everywhere
        output = B.Or(output, output) if output.value else B.And(output, output)
    return B.Program(name, alphabet, output=output, empty=dfa.start in dfa.accepting)


def dfa_program(
    dfa: Automaton, alphabet: Sequence[str], name: str, route: str | None = None
) -> B.Program:
    """A past-only B-RASP program named ``name`` that accepts exactly the words ``dfa`` accepts
    (the empty word iff the start state accepts), for a DFA over ``alphabet`` (in its symbol
    order) whose language is star-free (it is minimized first, so its transition monoid is the
    syntactic one); :class:`~netproof.verifier.claims.monoid.NotStarFree` (its witness, the
    theorem) for any other. ``route``: ``"ordered"`` or ``"cut"`` (module docstring); by default
    the program with fewer operations of the routes that apply (the cut route always does).

    >>> from netproof.verifier.claims.regular import minimal_automaton, regex_automaton
    >>> prog = dfa_program(minimal_automaton(regex_automaton("a*b*", "ab")), "ab", "a_then_b")
    >>> [B.accepts(prog, w) for w in ("", "aab", "ba", "abb")]
    [True, True, False, True]
    """
    if route not in (None, "ordered", "cut"):
        raise ValueError(f"route={route!r}: give 'ordered', 'cut' or None (the smaller program)")
    alphabet = tuple(alphabet)
    dfa = minimal_automaton(dfa)  # its transition monoid is the syntactic one: aperiodic
    verdict = star_freeness(dfa, alphabet)
    if not verdict.star_free:
        raise NotStarFree(verdict, f"the DFA of {name!r}")
    programs = []
    if route in (None, "ordered"):
        ordered = _ordered_route(dfa, alphabet)
        if ordered is not None:
            programs.append(_program(ordered, dfa, alphabet, name))
        elif route == "ordered":
            raise ValueError(
                f"route='ordered' needs a partially ordered DFA (every cycle a self-loop); the "
                f"minimal DFA of {name!r} has another cycle: use route='cut' or None"
            )
        if route == "ordered":
            return programs[0]
    states = tuple(range(dfa.states))
    letters = tuple(
        (tuple((q, dfa.delta[q][a]) for q in states), B.token(s)) for a, s in enumerate(alphabet)
    )
    table = _Builder().trans(states, letters, B.FALSE, (dfa.start,))
    cut = {q: v for (_p, q), v in table.items()}
    programs.append(_program(cut, dfa, alphabet, name))
    return min(programs, key=lambda p: _size(p.output))
