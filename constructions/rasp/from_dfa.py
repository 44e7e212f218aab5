"""An aperiodic DFA compiled to a B-RASP program with past masks only: :func:`dfa_program`.

A DFA with states Q reads a word; the transformation of a word x is τ_x : Q → Q, τ_x(p) the
state after x from p. The program keeps, at every position i, Boolean vectors T[p, q](i) = "the
transformation of the current segment ending at i maps p to q"; it accepts where the whole
prefix maps the start state into an accepting one. The segments and the construction, by
induction on (|Q'|, the number of letters):

- ``trans(Q', letters, β)``: the letters are transformations of Q' with one indicator vector
  each (exactly one holds at a position that is not a boundary); β is a boundary vector; the
  segment of i is (b(i), i], b(i) the last position ≤ i where β holds (−1 if none), and T is
  the composition of the letters read in it (the identity at a boundary).
- If every letter permutes Q', aperiodicity makes each the identity (σⁿ = σⁿ⁺¹ gives σ = id):
  T is the identity. (Q' of one state too.)
- Otherwise pick a letter c whose image R = Q'·c is smallest (|R| < |Q'|) and cut the segment
  at its c's: u₀ c u₁ c … c u_k, each u_m free of c.
  - A = ``trans(Q', letters without c, β ∨ c)``: the transformation of the c-free stretch
    ending at i (same states, one letter fewer);
  - F(j) = τ(u c) at a c position j: A at j − 1 (the previous position, a past head; the
    identity at position 0) followed by c;
  - the c's after the first one of the segment, read as letters of an automaton on R: at such a
    c, the restriction of F to R (the maps R → R that a word u c can give, found by closing the
    other letters' transformations under composition), the identity elsewhere; its monoid
    divides the DFA's, so it is aperiodic, and it has fewer states:
    E = ``trans(R, those letters, β ∨ the first c)``;
  - G(i) = F at the first c of the segment (a past head on "first c or β");
  - T(i) = A(i) before the segment's first c, else G ∘ E ∘ A (Boolean matrix products).
  Every attention is "the rightmost j < i with …" (the past mask), so the program is past-only:
  its own automaton (:func:`.brasp_lemmas.program_automaton`) exists and ``program=language``
  is decided for every length by comparing it with the DFA's.

Soundness of the result does not rest on this argument: the claims of the compiled program
(:func:`.claims.program_construction`) prove network = program and program = language against
the DFA, for every length where the routes apply. Cost: each level keeps |Q'|² vectors for T
(only the start state's row at the top), and the letters of E are at most |R|^|R| maps; on the
examples of ``docs/synth.md`` the programs have tens to hundreds of operations. Small, not
minimal: Dyck-1 of depth ≤ 3 as a regular expression gives 644 operations, which the LTL route
does in far fewer.

May import: its own package's modules and the vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

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


class _Builder:
    def __init__(self) -> None:
        self.memo: dict[tuple[object, ...], _Matrix] = {}

    def trans(
        self, states: tuple[int, ...], letters: _Letters, beta: B.BVec, rows: tuple[int, ...]
    ) -> _Matrix:
        """T[p, q] for p in ``rows``, q in ``states`` (see the module docstring)."""
        key = (states, letters, beta, rows)
        if key in self.memo:
            return self.memo[key]
        ident: _Matrix = {(p, q): B.Const(p == q) for p in rows for q in states}
        moving = [(m, ind) for m, ind in letters if any(p != q for p, q in m)]
        if len(states) == 1 or not moving:
            self.memo[key] = ident
            return ident
        shrinking = [(m, ind) for m, ind in moving if len({q for _p, q in m}) < len(states)]
        if not shrinking:
            raise ValueError(
                f"a letter permutes the states {states} without being the identity: the monoid "
                "is not aperiodic (the caller checks star-freeness first)"
            )
        cmap, cind = min(shrinking, key=lambda x: (len({q for _p, q in x[0]}), x[0]))
        fc = dict(cmap)
        image = tuple(sorted(set(fc.values())))
        others = tuple((m, ind) for m, ind in letters if m != cmap)
        need = tuple(sorted(set(rows) | set(image)))
        stretch = self.trans(states, others, _or(beta, cind), need)
        before = _last(
            _or(cind, beta), _and(cind, _not(beta)), B.FALSE
        )  # a c earlier in the segment
        seen = _and(_not(beta), _or(cind, before))
        first = _and(cind, _not(beta), _not(before))
        later = _and(cind, _not(beta), before)
        prev = {(p, r): _last(B.TRUE, stretch[p, r], B.Const(p == r)) for p in need for r in states}
        f = {(p, q): _or(*(prev[p, r] for r in states if fc[r] == q)) for p in need for q in image}
        # the maps R -> R a word u c can give (u over the other letters), as letters of E
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
        maps = sorted({tuple((r, fc[t[position[r]]]) for r in image) for t in found})
        identity = tuple((r, r) for r in image)
        stay = _not(later)
        block: list[tuple[_Map, B.BVec]] = []
        for d in maps:
            ind = _and(later, *(f[r, q] for r, q in d))
            if d == identity:
                stay = _or(stay, ind)
            else:
                block.append((d, ind))
        block.append((identity, stay))
        blocks = self.trans(image, tuple(block), _or(beta, first), image)
        g = {
            (p, r): _or(
                _and(first, f[p, r]), _and(_not(first), _last(_or(first, beta), f[p, r], B.FALSE))
            )
            for p in rows
            for r in image
        }
        out: _Matrix = {}
        for p in rows:
            for q in states:
                via = _or(
                    *(_and(g[p, r], blocks[r, s], stretch[s, q]) for r in image for s in image)
                )
                out[p, q] = _or(_and(seen, via), _and(_not(seen), stretch[p, q]))
        self.memo[key] = out
        return out


def dfa_program(dfa: Automaton, alphabet: Sequence[str], name: str) -> B.Program:
    """A past-only B-RASP program named ``name`` that accepts exactly the words ``dfa`` accepts
    (the empty word iff the start state accepts), for a DFA over ``alphabet`` (in its symbol
    order) whose language is star-free (it is minimized first, so its transition monoid is the
    syntactic one); :class:`~netproof.verifier.claims.monoid.NotStarFree` (its witness, the
    theorem) for any other.

    >>> from netproof.verifier.claims.regular import minimal_automaton, regex_automaton
    >>> prog = dfa_program(minimal_automaton(regex_automaton("a*b*", "ab")), "ab", "a_then_b")
    >>> [B.accepts(prog, w) for w in ("", "aab", "ba", "abb")]
    [True, True, False, True]
    """
    alphabet = tuple(alphabet)
    dfa = minimal_automaton(dfa)  # its transition monoid is the syntactic one: aperiodic
    verdict = star_freeness(dfa, alphabet)
    if not verdict.star_free:
        raise NotStarFree(verdict, f"the DFA of {name!r}")
    states = tuple(range(dfa.states))
    letters = tuple(
        (tuple((q, dfa.delta[q][a]) for q in states), B.token(s)) for a, s in enumerate(alphabet)
    )
    table = _Builder().trans(states, letters, B.FALSE, (dfa.start,))
    output = _or(*(table[dfa.start, q] for q in sorted(dfa.accepting)))
    if isinstance(output, B.Const):  # a program's output is an operation: 0 or 1 everywhere
        output = B.Or(output, output) if output.value else B.And(output, output)
    return B.Program(name, alphabet, output=output, empty=dfa.start in dfa.accepting)
