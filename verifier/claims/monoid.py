"""Star-freeness as a decision: the syntactic monoid of a regular language, aperiodic or not.

A regular language is **star-free** (a regular expression with union, concatenation and
complement but no star denotes it) iff its syntactic monoid is **aperiodic**: every element m
has m^n = m^(n+1) for some n, i.e. no element generates a nontrivial group (Schützenberger
1965, "On finite monoids having only trivial subgroups"). Star-free is also first-order logic
with order (McNaughton & Papert 1971, "Counter-free automata") and linear temporal logic (Kamp
1968). Yang, Chiang & Angluin 2024 ("Masked hard-attention transformers recognize exactly the
star-free languages") prove that masked hard-attention transformers, and B-RASP programs,
recognize exactly the star-free languages: a language that is not star-free has **no** such
transformer, whatever its size.

:func:`star_freeness` minimizes the automaton (:func:`.regular.minimal_automaton`), computes the
transition monoid of the minimal DFA (which is the syntactic monoid) by breadth-first search over
words, symbols in alphabet order (so each element keeps its shortlex-first shortest word), and
looks at the powers of every element. A non-aperiodic element's shortest word is the witness
u; its powers u, u², … are pairwise-distinct up to u^index and then repeat with period p > 1, so
**u^n and u^(n+1) act differently on the minimal DFA for every n ≥ 1**, and a context x and a
suffix y are given with x·u^index·y and x·u^(index+1)·y on different sides of the language.

May import: the standard library, :mod:`.languages` and :mod:`.regular`.

>>> from netproof.verifier.claims.regular import regex_automaton
>>> star_freeness(regex_automaton("(ab)*", ("a", "b")), ("a", "b")).star_free
True
>>> even = star_freeness(regex_automaton("(aa)*", ("a",)), ("a",))
>>> even.star_free, even.witness, even.period, even.index
(False, ('a',), 2, 1)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from .languages import Automaton
from .regular import minimal_automaton

__all__ = ["MAX_MONOID", "MonoidTooLarge", "NotStarFree", "StarFreeness", "star_freeness"]

MAX_MONOID = 20_000
"""The most elements :func:`star_freeness` computes of a transition monoid before it stops."""

_Map = tuple[int, ...]  # a transformation of the states: q -> m[q]


class MonoidTooLarge(ValueError):
    """The transition monoid has more than ``limit`` elements (the decision would be too slow)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StarFreeness:
    """Whether a regular language is star-free, decided on its syntactic monoid.

    ``states``: of the minimal DFA; ``monoid_size``: elements of its transition monoid (the
    identity, the empty word's, included). Star-free: ``witness``, ``period``, ``index``,
    ``context`` and ``suffix`` are None and ``aperiodicity_index`` is the least n with
    m^n = m^(n+1) for every element m (so x·u^n·y ∈ L iff x·u^(n+1)·y ∈ L for all words).
    Not star-free: ``witness`` is a shortest word u (shortlex-first) whose element is not
    aperiodic: u^index = u^(index+period) with ``period`` > 1 the least such and ``index`` the
    least n for it, so u^n and u^(n+1) act differently for **every** n ≥ 1; and
    x = ``context``, y = ``suffix`` (shortest) put x·u^index·y and x·u^(index+1)·y on different
    sides of the language (``accepts_index`` says which side the first is on)."""

    star_free: bool
    states: int
    monoid_size: int
    alphabet: tuple[str, ...]
    witness: tuple[str, ...] | None = None
    period: int | None = None
    index: int | None = None
    context: tuple[str, ...] | None = None
    suffix: tuple[str, ...] | None = None
    accepts_index: bool | None = None
    aperiodicity_index: int | None = None

    def explain(self) -> str:
        """The verdict in words: the theorem it rests on and what it means for transformers."""
        head = (
            f"the minimal DFA has {self.states} states and its syntactic monoid "
            f"{self.monoid_size} elements"
        )
        if self.star_free:
            return (
                f"star-free: {head}, all aperiodic (m^n = m^(n+1) for every element m from "
                f"n = {self.aperiodicity_index} on). By Schützenberger's theorem (1965) the "
                "language is star-free, hence first-order definable (McNaughton & Papert 1971) "
                "and LTL-definable (Kamp 1968); by Yang, Chiang & Angluin 2024 some masked "
                "hard-attention transformer (a B-RASP program) recognizes it."
            )
        assert self.witness is not None and self.context is not None and self.suffix is not None
        u, x, y = _show(self.witness), _show(self.context), _show(self.suffix)
        inside = "in" if self.accepts_index else "not in"
        outside = "not in" if self.accepts_index else "in"
        return (
            f"not star-free: {head}, and the word u = {u} is not aperiodic: its powers repeat "
            f"with period {self.period} from u^{self.index} on, so u^n and u^(n+1) act differently "
            f"for every n ≥ 1 (with x = {x} and y = {y}: x·u^{self.index}·y is {inside} the "
            f"language, x·u^{(self.index or 0) + 1}·y {outside} it). By "
            "Schützenberger's theorem (1965; McNaughton & Papert 1971) the language is not "
            "star-free, so by Yang, Chiang & Angluin 2024 no masked hard-attention transformer "
            "(no B-RASP program, no LTL formula) recognizes it, whatever its size."
        )


class NotStarFree(ValueError):
    """A language given where a star-free one is needed; ``result`` holds the decision and its
    witness (the message is :meth:`StarFreeness.explain`)."""

    def __init__(self, result: StarFreeness, what: str = "the language") -> None:
        super().__init__(f"{what} is {result.explain()}")
        self.result = result


def _show(word: tuple[str, ...]) -> str:
    return repr("".join(word)) if word else "ε"


def _compose(m: _Map, k: _Map) -> _Map:
    """First m, then k (the element of a word uv from those of u and v)."""
    return tuple(k[q] for q in m)


def _powers(m: _Map) -> tuple[int, int]:
    """(index, period) of m: the least index ≥ 1 and period ≥ 1 with m^index = m^(index+period)."""
    seen: dict[_Map, int] = {}
    p, n = m, 1
    while p not in seen:
        seen[p] = n
        p, n = _compose(p, m), n + 1
    return seen[p], n - seen[p]


def star_freeness(
    dfa: Automaton, alphabet: Sequence[str], *, limit: int = MAX_MONOID
) -> StarFreeness:
    """Decide whether ``dfa``'s language is star-free (see the module docstring); the symbols of
    ``alphabet`` name its columns. :class:`MonoidTooLarge` past ``limit`` monoid elements."""
    sigma = tuple(alphabet)
    if dfa.delta and len(dfa.delta[0]) != len(sigma):
        raise ValueError(
            f"the automaton reads {len(dfa.delta[0])} symbols but alphabet={sigma} has "
            f"{len(sigma)}; give one symbol per column of delta"
        )
    small = minimal_automaton(dfa)
    q_all = range(small.states)
    letters = [tuple(small.delta[q][a] for q in q_all) for a in range(len(sigma))]
    identity: _Map = tuple(q_all)
    word: dict[_Map, tuple[int, ...]] = {identity: ()}
    todo = deque([identity])
    while todo:
        m = todo.popleft()
        for a, g in enumerate(letters):
            k = _compose(m, g)
            if k not in word:
                if len(word) >= limit:
                    raise MonoidTooLarge(
                        f"the syntactic monoid of this {small.states}-state minimal DFA has more "
                        f"than limit={limit} elements; raise limit= to decide it (time grows with "
                        "the monoid's size)"
                    )
                word[k] = (*word[m], a)
                todo.append(k)
    worst = 1
    for m, w in word.items():  # breadth-first order: the first bad one has a shortest word
        index, period = _powers(m)
        if period == 1:
            worst = max(worst, index)
            continue
        x, y, accepts = _separate(small, m, index)
        return StarFreeness(
            star_free=False,
            states=small.states,
            monoid_size=len(word),
            alphabet=sigma,
            witness=tuple(sigma[a] for a in w),
            period=period,
            index=index,
            context=tuple(sigma[a] for a in x),
            suffix=tuple(sigma[a] for a in y),
            accepts_index=accepts,
            aperiodicity_index=None,
        )
    return StarFreeness(
        star_free=True,
        states=small.states,
        monoid_size=len(word),
        alphabet=sigma,
        aperiodicity_index=worst,
    )


def _separate(dfa: Automaton, m: _Map, index: int) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """Words x, y with x·u^index·y and x·u^(index+1)·y on different sides of the language (u's
    element is m, with period > 1), and whether the first is accepted."""
    power = m
    for _ in range(index - 1):
        power = _compose(power, m)
    after = _compose(power, m)
    access: dict[int, tuple[int, ...]] = {dfa.start: ()}
    todo = deque([dfa.start])
    while todo:  # shortest access words, breadth-first
        q = todo.popleft()
        for a, t in enumerate(dfa.delta[q]):
            if t not in access:
                access[t] = (*access[q], a)
                todo.append(t)
    q = min((q for q in access if power[q] != after[q]), key=lambda s: (len(access[s]), access[s]))
    pairs: dict[tuple[int, int], tuple[int, ...]] = {(power[q], after[q]): ()}
    queue: deque[tuple[int, int]] = deque(pairs)
    while queue:  # a shortest suffix telling the two states apart (the DFA is minimal)
        p, r = pair = queue.popleft()
        if (p in dfa.accepting) != (r in dfa.accepting):
            return access[q], pairs[pair], p in dfa.accepting
        for a in range(len(dfa.delta[p])):
            nxt = (dfa.delta[p][a], dfa.delta[r][a])
            if nxt not in pairs:
                pairs[nxt] = (*pairs[pair], a)
                queue.append(nxt)
    raise AssertionError("two states of a minimal DFA accept the same words")  # pragma: no cover
