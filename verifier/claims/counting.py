"""Counter automata and the block lemmas of counting networks: the vocabulary of proofs for every
length over integer counts.

- :class:`CounterAutomaton`: a deterministic automaton with a finite control and integer
  counters (unbounded), each step guarded by linear constraints on the counters. It is the
  symbolic twin of a membership test whose memory is counts (balanced brackets, majority,
  a^m b^m), as :class:`~netproof.verifier.claims.Automaton` is for a finite memory; a
  :class:`~netproof.verifier.claims.Language` carries one in its ``counters`` field. Its
  runs are linear integer arithmetic, so "a network (or another counter automaton) accepts the
  same words" is a question for an inductive invariant over integers.
- :class:`UniformCount`: a causal attention head that scores every position alike, so that at
  position i it writes the average of its value over positions 0..i, i.e. the running count of
  its value over the unit 1/(i+1).
- :class:`CountComparison`: an FFN that, fed integers over a common unit, writes 0/1 results
  of linear comparisons of those integers (e.g. layer norm of [x; −x] is [sign x; −sign x]).

May import: the standard library only.

>>> d = ("d",)
>>> dyck1 = CounterAutomaton(
...     states=1, counters=d, symbols=2, start=0,
...     rules=(CounterRule(state=0, symbol=0, guard=(), target=0, add=(1,)),
...            CounterRule(state=0, symbol=1, guard=linear(d, {"d": 1}, ">=", 1), target=0, add=(-1,))),
...     accepting=((0, linear(d, {"d": 1}, "==", 0)),),
... )
>>> [dyck1.accepts(w) for w in ((), (0, 1), (1, 0), (0, 0, 1))]
[True, True, False, False]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Atom",
    "CountComparison",
    "CounterAutomaton",
    "CounterRule",
    "UniformCount",
    "linear",
    "parse_guard",
]

Atom = tuple[tuple[int, ...], int]
"""A linear constraint Σ_k coef_k·c_k ≥ bound over a counter automaton's counters: (the
coefficients, one per counter in order, the bound)."""


def linear(
    counters: Sequence[str], coefs: Mapping[str, int], op: str, bound: int
) -> tuple[Atom, ...]:
    """The atoms of Σ coefs[c]·c ``op`` bound (``op`` one of ``>=``, ``<=``, ``==``, ``>``,
    ``<``; over integers, > b is >= b + 1), as a conjunction.

    >>> linear(("x", "y"), {"x": 1, "y": -2}, "==", 0)
    (((1, -2), 0), ((-1, 2), 0))
    """
    unknown = sorted(set(coefs) - set(counters))
    if unknown:
        raise ValueError(
            f"linear: counters {unknown} are not among {tuple(counters)}; name a counter of the automaton"
        )
    row = tuple(int(coefs.get(c, 0)) for c in counters)
    neg = tuple(-x for x in row)
    if op == ">=":
        return ((row, bound),)
    if op == ">":
        return ((row, bound + 1),)
    if op == "<=":
        return ((neg, -bound),)
    if op == "<":
        return ((neg, -bound + 1),)
    if op == "==":
        return ((row, bound), (neg, -bound))
    raise ValueError(f"linear: op={op!r} is not one of >=, >, <=, <, ==")


_TERM = re.compile(r"\s*([+-]?)\s*(\d*)\s*\*?\s*([A-Za-z_][A-Za-z_0-9]*)?\s*")
_COMPARISON = re.compile(r"^(.*?)(>=|<=|==|>|<)\s*([+-]?\d+)\s*$")


def parse_guard(counters: Sequence[str], text: str) -> tuple[Atom, ...]:
    """A guard written as text: linear comparisons of counters with an integer on the right,
    joined by ``and`` (``"d >= 1 and 2*a - b == 0"``; ``""`` is always true).

    >>> parse_guard(("a", "b"), "2*a - b == 0 and a > 0")
    (((2, -1), 0), ((-2, 1), 0), ((1, 0), 1))
    """
    atoms: list[Atom] = []
    for part in [p for p in re.split(r"\band\b", text) if p.strip()]:
        m = _COMPARISON.match(part.strip())
        if m is None:
            raise ValueError(
                f"guard {text!r}: {part.strip()!r} is not a comparison; write e.g. 'd >= 1' or '2*a - b == 0'"
            )
        left, op, bound = m.group(1), m.group(2), int(m.group(3))
        coefs: dict[str, int] = {}
        pos, left = 0, left.strip()
        while pos < len(left):
            t = _TERM.match(left, pos)
            if t is None or t.end() == pos or t.group(3) is None:
                raise ValueError(
                    f"guard {text!r}: {left!r} is not a sum of counters with integer factors; write e.g. '2*a - b'"
                )
            factor = int(t.group(2) or 1) * (-1 if t.group(1) == "-" else 1)
            if pos > 0 and not t.group(1):
                raise ValueError(f"guard {text!r}: a + or - is missing before {t.group(3)!r}")
            coefs[t.group(3)] = coefs.get(t.group(3), 0) + factor
            pos = t.end()
        if not coefs:
            raise ValueError(f"guard {text!r}: {part.strip()!r} compares no counter")
        atoms.extend(linear(counters, coefs, op, bound))
    return tuple(atoms)


def holds(guard: Sequence[Atom], values: Sequence[int]) -> bool:
    """Whether the counter values satisfy every atom of ``guard``."""
    return all(
        sum(a * v for a, v in zip(row, values, strict=True)) >= bound for row, bound in guard
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CounterRule:
    """In control state ``state``, reading symbol ``symbol`` (an index into the alphabet), when
    the counters satisfy every atom of ``guard``: go to ``target`` and add ``add`` (one integer
    per counter) to the counters."""

    state: int
    symbol: int
    guard: tuple[Atom, ...]
    target: int
    add: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CounterAutomaton:
    """A deterministic counter automaton: control states ``0..states-1``, integer counters
    ``counters`` (all 0 at the start, in control state ``start``), symbols ``0..symbols-1``. A
    step takes the **first** rule of ``rules`` (in order) whose state and symbol are the current
    ones and whose guard holds; where none does, the word is rejected (whatever follows). A word
    is accepted iff, after it, some pair (q, guard) of ``accepting`` has the control state q and
    a guard the counters satisfy."""

    states: int
    counters: tuple[str, ...]
    symbols: int
    start: int
    rules: tuple[CounterRule, ...]
    accepting: tuple[tuple[int, tuple[Atom, ...]], ...]

    def __post_init__(self) -> None:
        k = len(self.counters)
        if self.states < 1 or self.symbols < 1 or not 0 <= self.start < self.states:
            raise ValueError(
                f"CounterAutomaton states={self.states}, symbols={self.symbols}, start={self.start}: need states, symbols >= 1 and 0 <= start < states"
            )
        if len(set(self.counters)) != k:
            raise ValueError(
                f"CounterAutomaton counters={self.counters} repeat a name; give each counter its own"
            )
        guards = [r.guard for r in self.rules] + [g for _q, g in self.accepting]
        for g in guards:
            for row, _bound in g:
                if len(row) != k:
                    raise ValueError(
                        f"CounterAutomaton: an atom has {len(row)} coefficients for {k} counters; give one per counter (see linear())"
                    )
        for r in self.rules:
            if (
                not (
                    0 <= r.state < self.states
                    and 0 <= r.target < self.states
                    and 0 <= r.symbol < self.symbols
                )
                or len(r.add) != k
            ):
                raise ValueError(
                    f"CounterAutomaton rule {r} has a state, target or symbol out of range, or not one increment per counter"
                )
        for q, _g in self.accepting:
            if not 0 <= q < self.states:
                raise ValueError(
                    f"CounterAutomaton accepting state {q} is outside 0..{self.states - 1}"
                )

    @classmethod
    def from_automaton(cls, dfa: Any) -> CounterAutomaton:
        """A finite automaton (:class:`~netproof.verifier.claims.Automaton`) as a counter
        automaton with no counters: the same language, for the proofs that compare counter
        automata (a regular reference of a C-RASP program). States from which no accepting state
        can be reached are left out (a word that enters one is rejected because no rule applies,
        as before); the others keep their order, the start state first.

        >>> from netproof.verifier.claims import Automaton
        >>> even_a = Automaton(states=2, start=0, accepting=frozenset({0}), delta=((1, 0), (0, 1)))
        >>> ca = CounterAutomaton.from_automaton(even_a)
        >>> ca.counters, [ca.accepts(w) for w in ((), (0,), (0, 1, 0))]
        ((), [True, False, True])
        """
        symbols = len(dfa.delta[0]) if dfa.delta else 0
        alive = set(dfa.accepting)
        grown = True
        while grown:
            grown = False
            for q in range(dfa.states):
                if q not in alive and any(t in alive for t in dfa.delta[q]):
                    alive.add(q)
                    grown = True
        keep = [dfa.start] + [q for q in range(dfa.states) if q in alive and q != dfa.start]
        number = {q: k for k, q in enumerate(keep)}
        rules = tuple(
            CounterRule(state=number[q], symbol=a, guard=(), target=number[t], add=())
            for q in keep
            if q in alive
            for a, t in enumerate(dfa.delta[q])
            if t in alive
        )
        accepting = tuple((number[q], ()) for q in keep if q in dfa.accepting)
        return cls(
            states=len(keep),
            counters=(),
            symbols=max(symbols, 1),
            start=0,
            rules=rules,
            accepting=accepting,
        )

    @classmethod
    def from_steps(
        cls,
        alphabet: Sequence[str],
        counters: Sequence[str],
        steps: Sequence[tuple[str, str, str, str, Mapping[str, int]]],
        accept: Sequence[tuple[str, str]],
        start: str | None = None,
    ) -> CounterAutomaton:
        """A counter automaton written with names: ``steps`` are (state, symbol, guard, target,
        increments), tried in order (the first whose state and symbol match and whose guard
        holds is taken; none: the word is rejected); a guard is linear comparisons of counters
        joined by ``and`` (``"d >= 1"``, ``"2*a - b == 0 and a > 0"``; ``""``: always);
        increments map counter names to what the step adds (missing: 0); ``accept`` lists
        (state, guard) pairs; ``start`` is the start state (default: the first step's state).
        States are numbered in order of first mention, symbols by their place in ``alphabet``.

        Dyck-1 (balanced brackets): one state, one counter, the depth.

        >>> dyck1 = CounterAutomaton.from_steps(
        ...     alphabet=("(", ")"),
        ...     counters=("d",),
        ...     steps=[("q", "(", "", "q", {"d": 1}), ("q", ")", "d >= 1", "q", {"d": -1})],
        ...     accept=[("q", "d == 0")],
        ... )
        >>> [dyck1.accepts(w) for w in ((), (0, 1), (1, 0), (0, 0, 1))]
        [True, True, False, False]
        """
        names: dict[str, int] = {}
        order = ([start] if start is not None else []) + [s[0] for s in steps]
        for st in [*order, *(s[3] for s in steps), *(a[0] for a in accept)]:
            names.setdefault(st, len(names))
        index = {a: k for k, a in enumerate(alphabet)}
        rules = []
        for state, symbol, guard, target, add in steps:
            if symbol not in index:
                raise ValueError(
                    f"CounterAutomaton.from_steps: the step ({state!r}, {symbol!r}, ...) reads {symbol!r}, not a "
                    f"symbol of the alphabet {tuple(alphabet)}"
                )
            unknown = sorted(set(add) - set(counters))
            if unknown:
                raise ValueError(
                    f"CounterAutomaton.from_steps: the step ({state!r}, {symbol!r}, ...) adds to {unknown}, not "
                    f"among the counters {tuple(counters)}"
                )
            rules.append(
                CounterRule(
                    state=names[state],
                    symbol=index[symbol],
                    guard=parse_guard(counters, guard),
                    target=names[target],
                    add=tuple(int(add.get(c, 0)) for c in counters),
                )
            )
        return cls(
            states=len(names),
            counters=tuple(counters),
            symbols=len(alphabet),
            start=names[order[0]] if order else 0,
            rules=tuple(rules),
            accepting=tuple((names[q], parse_guard(counters, g)) for q, g in accept),
        )

    def run(self, word_indices: Sequence[int]) -> tuple[int, tuple[int, ...]] | None:
        """The control state and counters after the word, or None where no rule applied."""
        q, c = self.start, (0,) * len(self.counters)
        for a in word_indices:
            for r in self.rules:
                if r.state == q and r.symbol == a and holds(r.guard, c):
                    q, c = r.target, tuple(x + y for x, y in zip(c, r.add, strict=True))
                    break
            else:
                return None
        return q, c

    def accepts(self, word_indices: Sequence[int]) -> bool:
        end = self.run(word_indices)
        return end is not None and any(q == end[0] and holds(g, end[1]) for q, g in self.accepting)


@dataclass(frozen=True, slots=True, kw_only=True)
class UniformCount:
    """Lemma: head ``head`` of attention layer ``layer`` (causal mask, j ≤ i) scores every key
    position alike and has a value map without bias, so at position i it writes the average of
    its value over positions 0..i: (Σ_{j≤i} v_j)/(i+1), the running sum of its value over the
    unit 1/(i+1) (an integer count where the value is 0/1), for every length."""

    id: str
    statement: str
    reference: str
    layer: str
    head: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CountComparison:
    """Lemma: the FFN named ``block``, fed dims ``counts`` that hold integers v_d over a common
    unit (v_d/u) and the dim ``unit`` that holds 1/u (u > 0), writes into each dim d of
    ``outputs`` 1 if Σ coef·v + constant > 0 and 0 otherwise (``outputs[d]`` = (the
    coefficients by dim, the constant)), for every integer value of the v_d and every u."""

    id: str
    statement: str
    reference: str
    block: str
    unit: str
    counts: tuple[str, ...]
    outputs: Mapping[str, tuple[Mapping[str, int], int]]
