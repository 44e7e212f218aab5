"""Languages and automata: the reference languages networks are checked against, in plain Python.

Owns :data:`Word` (a tuple of symbols), :class:`Automaton` (a DFA, the symbolic twin of a
membership test that SMT queries unroll), :class:`Language` (a membership test over an
alphabet, optionally with its automaton), :class:`SequenceTask` (Suzgun et al.'s next-symbol-set
form of a task) and the languages PARITY and FIRST (Chiang & Cholak 2022). Dyck(k, D) has its own
module, :mod:`netproof.verifier.claims.dyck`. Nothing here builds or runs a network.

May import: the standard library only.

>>> PARITY.contains(("1", "0", "1", "1"))
True
>>> FIRST.contains(())
False
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from .counting import CounterAutomaton

__all__ = ["FIRST", "PARITY", "Automaton", "Language", "SequenceTask", "StackAutomaton", "Word"]

Word: TypeAlias = tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Automaton:
    """A deterministic finite automaton over a language's alphabet: states ``0..states-1``,
    ``delta[q][a]`` the state after symbol ``alphabet[a]`` in state ``q``, start state
    ``start``, accepting states ``accepting``. A symbolic twin of ``Language.contains`` (the
    two are checked against each other on short words by the tests)."""

    states: int
    start: int
    accepting: frozenset[int]
    delta: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        if len(self.delta) != self.states:
            raise ValueError(
                f"Automaton has states={self.states} but {len(self.delta)} rows in delta"
            )
        for q, row in enumerate(self.delta):
            for target in row:
                if not 0 <= target < self.states:
                    raise ValueError(
                        f"Automaton delta[{q}] goes to state {target}, outside 0..{self.states - 1}"
                    )
        if not 0 <= self.start < self.states or any(
            not 0 <= q < self.states for q in self.accepting
        ):
            raise ValueError(
                f"Automaton start={self.start} or accepting={sorted(self.accepting)} is outside 0..{self.states - 1}"
            )

    def accepts(self, word_indices: Sequence[int]) -> bool:
        q = self.start
        for a in word_indices:
            q = self.delta[q][a]
        return q in self.accepting


@dataclass(frozen=True, slots=True, kw_only=True)
class StackAutomaton:
    """A bounded-stack automaton: each symbol pushes a type or pops one. Pushing onto a full
    stack (``depth`` types), popping an empty stack, or popping a type other than the top one
    rejects; a word is accepted iff it ends with the stack empty. The symbolic twin of a
    membership test whose DFA has one state per stack (``types``^``depth`` of them): an
    encoding holds the stack as ``depth`` slots of type codes and a height, so its size grows
    with ``depth`` and log ``types``, not with the number of stacks.

    ``push[a]`` is the type symbol ``a`` pushes (0..types-1) or None; ``pop[a]`` likewise; each
    symbol does exactly one of the two.

    >>> S = StackAutomaton(depth=2, types=1, push=(0, None), pop=(None, 0))
    >>> S.accepts([0, 1]), S.accepts([0, 0, 0, 1, 1, 1]), S.accepts([1, 0])
    (True, False, False)
    """

    depth: int
    types: int
    push: tuple[int | None, ...]
    pop: tuple[int | None, ...]

    def __post_init__(self) -> None:
        if self.depth < 1 or self.types < 1:
            raise ValueError(
                f"StackAutomaton depth={self.depth} and types={self.types} must both be >= 1"
            )
        if len(self.push) != len(self.pop):
            raise ValueError(
                f"StackAutomaton has {len(self.push)} push entries but {len(self.pop)} pop entries (one per symbol each)"
            )
        for a, (u, o) in enumerate(zip(self.push, self.pop, strict=True)):
            if (u is None) == (o is None):
                raise ValueError(
                    f"StackAutomaton symbol {a} must either push or pop (push={u!r}, pop={o!r})"
                )
            t = u if u is not None else o
            assert t is not None
            if not 0 <= t < self.types:
                raise ValueError(
                    f"StackAutomaton symbol {a} has type {t}, outside 0..{self.types - 1}"
                )

    def accepts(self, word_indices: Sequence[int]) -> bool:
        stack: list[int] = []
        for a in word_indices:
            u, o = self.push[a], self.pop[a]
            if u is not None:
                if len(stack) == self.depth:
                    return False
                stack.append(u)
            elif not stack or stack.pop() != o:
                return False
        return not stack


@dataclass(frozen=True, slots=True)
class Language:
    """A reference language: a plain-Python membership test over words of ``alphabet``, and
    optionally the same language as an :class:`Automaton` or a :class:`StackAutomaton` (for
    SMT proofs over symbolic words), or as a
    :class:`~netproof.verifier.claims.counting.CounterAutomaton` (``counters``: a language of
    counts, for proofs of every length over integers). Where both are given, they are the same
    language; a language whose DFA would be too large to write out gives only its ``stack``."""

    name: str
    alphabet: tuple[str, ...]
    contains: Callable[[Word], bool]
    description: str = ""
    automaton: Automaton | None = None
    stack: StackAutomaton | None = None
    counters: CounterAutomaton | None = None


@dataclass(frozen=True, slots=True)
class SequenceTask:
    """A task in the sequence-prediction form (Suzgun et al. 2019 §4.1): ``next_sets(w)`` gives
    the target set of possible next symbols after each prefix w_1..w_t (t = 1..|w|), empty
    after an invalid prefix; ``contains`` is membership; ``accepts(w, predicted)`` reads the
    paper's acceptance off a network's predicted sets (every next symbol was predicted and the
    last set says the word may end). Plain Python, no network."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    next_sets: Callable[[Word], tuple[frozenset[str], ...]]
    contains: Callable[[Word], bool]
    accepts: Callable[[Word, Sequence[frozenset[str]]], bool]
    description: str = ""


def _parity(w: Word) -> bool:
    return w.count("1") % 2 == 1


def _first(w: Word) -> bool:
    return len(w) >= 1 and w[0] == "1"


PARITY = Language(
    name="PARITY",
    alphabet=("0", "1"),
    contains=_parity,
    description="words over {0,1} with an odd number of 1s",
    automaton=Automaton(states=2, start=0, accepting=frozenset({1}), delta=((0, 1), (1, 0))),
)

FIRST = Language(
    name="FIRST",
    alphabet=("0", "1"),
    contains=_first,
    description="words over {0,1} whose first symbol is 1",
    automaton=Automaton(
        states=3, start=0, accepting=frozenset({2}), delta=((1, 2), (1, 1), (2, 2))
    ),
)
