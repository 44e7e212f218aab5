"""Regular expressions as minimal automata: a reference language written as a regular expression
becomes an :class:`~netproof.verifier.claims.Automaton` (the minimal DFA over the given
alphabet), the symbolic twin that proofs for every length compare a program or network with.

:func:`regex_automaton` reads the regular-expression syntax of Python's ``re`` that denotes a
regular language over one-character symbols: symbols (a backslash escapes one), ``.`` (any
symbol of the alphabet), classes ``[ab]``, ``[^a]``, ``[a-c]``, groups ``( )`` and ``(?: )``,
``|``, and the postfix ``*``, ``+``, ``?``, ``{m}``, ``{m,}``, ``{m,n}`` (lazy forms ``*?`` etc.
denote the same language), matched in full (as ``re.fullmatch``; a leading ``^`` and trailing
``$`` are allowed and change nothing). Anything else (backreferences, lookarounds, ``\\d``
and other escapes of classes) is refused with a :class:`RegexError` naming it. The automaton
is built by Thompson's construction, the subset construction over the alphabet and Moore's
partition refinement: its states are the Myhill-Nerode classes of the language (start state 0,
the others in breadth-first order of the symbols), so equal languages give equal automata.

:func:`minimal_automaton` minimizes any :class:`~netproof.verifier.claims.Automaton` the same
way (a DFA given as a reference is compared in its minimal form).

May import: the standard library and :mod:`.languages`.

>>> dfa = regex_automaton("(ab)*", ("a", "b"))
>>> dfa.states, [dfa.accepts(w) for w in ((), (0, 1), (0,), (1, 0))]
(3, [True, True, False, False])
>>> regex_automaton("a(?=b)", ("a", "b"))
Traceback (most recent call last):
...
netproof.verifier.claims.regular.RegexError: the regular expression 'a(?=b)' uses '(?=' at offset 1, which is not a regular operator; use symbols, ., [..], (..), |, *, +, ?, {m,n}
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, TypeAlias

from .languages import Automaton

__all__ = ["RegexError", "minimal_automaton", "regex_automaton"]

MAX_DFA_STATES = 4096
"""The subset construction stops past this many states (a :class:`RegexError`)."""

_OPERATORS = "use symbols, ., [..], (..), |, *, +, ?, {m,n}"


class RegexError(ValueError):
    """A regular expression this module does not turn into an automaton; the message names the
    construct and its offset."""


# An NFA with epsilon moves: moves[s] = list of (symbol set, or None for epsilon, target).
class _Nfa:
    def __init__(self) -> None:
        self.moves: list[list[tuple[frozenset[int] | None, int]]] = []

    def state(self) -> int:
        self.moves.append([])
        return len(self.moves) - 1

    def build(self, node: _Node) -> tuple[int, int]:
        """Thompson's construction: the (entry, exit) states of a fragment for ``node``."""
        a, b = self.state(), self.state()
        kind = node[0]
        if kind == "sym":
            self.moves[a].append((node[1], b))
        elif kind == "eps":
            self.moves[a].append((None, b))
        elif kind == "cat":
            x, y = self.build(node[1]), self.build(node[2])
            self.moves[a].append((None, x[0]))
            self.moves[x[1]].append((None, y[0]))
            self.moves[y[1]].append((None, b))
        elif kind == "alt":
            for part in node[1:]:
                x = self.build(part)
                self.moves[a].append((None, x[0]))
                self.moves[x[1]].append((None, b))
        elif kind == "star":
            x = self.build(node[1])
            self.moves[a] += [(None, x[0]), (None, b)]
            self.moves[x[1]] += [(None, x[0]), (None, b)]
        else:
            raise AssertionError(kind)
        return a, b


_Node: TypeAlias = tuple[Any, ...]
"""("sym", frozenset[int]) | ("eps",) | ("cat", n, n) | ("alt", n, n) | ("star", n)"""
_EPS: _Node = ("eps",)


def _cat(x: _Node, y: _Node) -> _Node:
    if x == _EPS:
        return y
    if y == _EPS:
        return x
    return ("cat", x, y)


def _repeat(x: _Node, lo: int, hi: int | None) -> _Node:
    """x{lo,hi} (hi None: unbounded) from concatenation, union with the empty word, and star."""
    out = _EPS
    for _ in range(lo):
        out = _cat(out, x)
    if hi is None:
        return _cat(out, ("star", x))
    for _ in range(hi - lo):
        out = _cat(out, ("alt", x, _EPS))
    return out


class _Parser:
    def __init__(self, pattern: str, alphabet: Sequence[str]) -> None:
        self.p, self.i = pattern, 0
        self.index = {s: k for k, s in enumerate(alphabet)}
        self.all = frozenset(range(len(alphabet)))

    def fail(self, what: str, at: int | None = None) -> RegexError:
        where = self.i if at is None else at
        return RegexError(
            f"the regular expression {self.p!r} uses {what} at offset {where}, which is not a regular operator; {_OPERATORS}"
        )

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def alternation(self) -> _Node:
        node = self.sequence()
        while self.peek() == "|":
            self.i += 1
            node = ("alt", node, self.sequence())
        return node

    def sequence(self) -> _Node:
        node = _EPS
        while (c := self.peek()) is not None and c not in "|)":
            node = _cat(node, self.repeat())
        return node

    def repeat(self) -> _Node:
        node = self.atom()
        while (op := self.peek()) is not None and op in "*+?{":
            if op == "{":
                lo, hi = self.braces()
                node = _repeat(node, lo, hi)
            else:
                self.i += 1
                node = _repeat(node, *{"*": (0, None), "+": (1, None), "?": (0, 1)}[op])
            if self.peek() == "?":  # lazy: the same language
                self.i += 1
        return node

    def braces(self) -> tuple[int, int | None]:
        start = self.i
        end = self.p.find("}", start)
        body = self.p[start + 1 : end] if end > 0 else ""
        parts = body.split(",")
        hi: int | None
        try:
            if len(parts) == 1:
                lo, hi = int(parts[0]), int(parts[0])
            elif len(parts) == 2:
                lo = int(parts[0]) if parts[0] else 0
                hi = int(parts[1]) if parts[1] else None
            else:
                raise ValueError
        except ValueError:
            raise self.fail(repr(self.p[start : end + 1] if end > 0 else "{"), start) from None
        if lo > 256 or (hi is not None and not lo <= hi <= 256):
            raise self.fail(f"the count {{{body}}} (give m <= n <= 256)", start)
        self.i = end + 1
        return lo, hi

    def atom(self) -> _Node:
        ch = self.peek()
        if ch is None:
            raise self.fail("an operator with nothing before it")
        if ch == "(":
            if self.p.startswith("(?:", self.i):
                self.i += 3
            elif self.p.startswith("(?", self.i):
                raise self.fail(repr(self.p[self.i : self.i + 3]))
            else:
                self.i += 1
            node = self.alternation()
            if self.peek() != ")":
                raise self.fail("an unclosed '('")
            self.i += 1
            return node
        if ch in "*+?{":
            raise self.fail(f"{ch!r} with nothing to repeat")
        if ch == "[":
            return ("sym", self.klass())
        if ch == ".":
            self.i += 1
            return ("sym", self.all)
        if ch in "^$":
            if (ch == "^" and self.i == 0) or (ch == "$" and self.i == len(self.p) - 1):
                self.i += 1
                return _EPS
            raise self.fail(repr(ch))
        if ch == "\\":
            return ("sym", frozenset({self.escaped()}))
        self.i += 1
        return ("sym", frozenset({self.symbol(ch, self.i - 1)}))

    def symbol(self, ch: str, at: int) -> int:
        if ch not in self.index:
            raise RegexError(
                f"the regular expression {self.p!r} has {ch!r} at offset {at}, which is not a symbol of the "
                f"alphabet {tuple(self.index)}; write only the alphabet's symbols (a backslash escapes an operator)"
            )
        return self.index[ch]

    def escaped(self) -> int:
        at = self.i
        if at + 1 >= len(self.p):
            raise self.fail("a trailing backslash", at)
        ch = self.p[at + 1]
        if ch.isalnum():
            raise self.fail(repr("\\" + ch), at)
        self.i += 2
        return self.symbol(ch, at + 1)

    def klass(self) -> frozenset[int]:
        at = self.i
        self.i += 1
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        chosen: set[int] = set()
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise self.fail("an unclosed '['", at)
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "\\":
                if self.i + 1 >= len(self.p) or self.p[self.i + 1].isalnum():
                    raise self.fail(repr(self.p[self.i : self.i + 2]), self.i)
                lo_ch = self.p[self.i + 1]
                self.i += 2
            else:
                lo_ch = ch
                self.i += 1
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                hi_ch = self.p[self.i + 1]
                self.i += 2
                chosen.update(k for s, k in self.index.items() if lo_ch <= s <= hi_ch)
                continue
            if lo_ch in self.index:
                chosen.add(self.index[lo_ch])
            # a class may name characters outside the alphabet: they match no word's symbol
        got = frozenset(chosen)
        return self.all - got if negate else got


def _closure(nfa: _Nfa, states: set[int]) -> frozenset[int]:
    stack, seen = list(states), set(states)
    while stack:
        s = stack.pop()
        for chars, t in nfa.moves[s]:
            if chars is None and t not in seen:
                seen.add(t)
                stack.append(t)
    return frozenset(seen)


def regex_automaton(pattern: str, alphabet: Sequence[str]) -> Automaton:
    """The minimal DFA of the words over ``alphabet`` (one-character symbols, in this order)
    that ``pattern`` matches in full (see the module docstring); :class:`RegexError` for a
    pattern outside the regular subset or a symbol outside the alphabet."""
    if any(len(s) != 1 for s in alphabet):
        raise RegexError(
            f"a regular expression reads one-character symbols, and the alphabet {tuple(alphabet)} has longer ones"
        )
    parser = _Parser(pattern, alphabet)
    tree = parser.alternation()
    if parser.peek() is not None:
        raise parser.fail(f"an unmatched {parser.peek()!r}")
    nfa = _Nfa()
    entry, exit_ = nfa.build(tree)
    start = _closure(nfa, {entry})
    index = {start: 0}
    subsets = [start]
    delta: list[list[int]] = []
    k = 0
    while k < len(subsets):
        row = []
        for a in range(len(alphabet)):
            step = {
                t
                for s in subsets[k]
                for chars, t in nfa.moves[s]
                if chars is not None and a in chars
            }
            target = _closure(nfa, step)
            if target not in index:
                if len(subsets) >= MAX_DFA_STATES:
                    raise RegexError(
                        f"the regular expression {pattern!r} needs more than {MAX_DFA_STATES} DFA states"
                    )
                index[target] = len(subsets)
                subsets.append(target)
            row.append(index[target])
        delta.append(row)
        k += 1
    accepting = {i for i, sub in enumerate(subsets) if exit_ in sub}
    return _minimize(len(subsets), accepting, delta, 0)


def minimal_automaton(dfa: Automaton) -> Automaton:
    """The minimal DFA of ``dfa``'s language (unreachable states dropped, equivalent ones
    merged; states numbered as :func:`regex_automaton` numbers them)."""
    return _minimize(dfa.states, set(dfa.accepting), [list(r) for r in dfa.delta], dfa.start)


def _minimize(states: int, accepting: set[int], delta: list[list[int]], start: int) -> Automaton:
    symbols = len(delta[0]) if delta else 0
    # reachable states only
    seen, queue = {start}, deque([start])
    while queue:
        q = queue.popleft()
        for t in delta[q]:
            if t not in seen:
                seen.add(t)
                queue.append(t)
    live = sorted(seen)
    # Moore's refinement: a state's class is its acceptance, then its successors' classes
    cls = {q: int(q in accepting) for q in live}
    while True:
        keys = {q: (cls[q], *(cls[delta[q][a]] for a in range(symbols))) for q in live}
        numbering: dict[tuple[int, ...], int] = {}
        new = {q: numbering.setdefault(keys[q], len(numbering)) for q in live}
        if len(numbering) == len(set(cls.values())):
            break
        cls = new
    # renumber breadth-first from the start state, symbols in order
    order = {cls[start]: 0}
    queue = deque([start])
    rep = {cls[start]: start}
    while queue:
        q = queue.popleft()
        for a in range(symbols):
            t = delta[q][a]
            if cls[t] not in order:
                order[cls[t]] = len(order)
                rep[cls[t]] = t
                queue.append(t)
    n = len(order)
    table = [[0] * symbols for _ in range(n)]
    for c, q in rep.items():
        for a in range(symbols):
            table[order[c]][a] = order[cls[delta[q][a]]]
    final = frozenset(order[c] for c, q in rep.items() if q in accepting)
    return Automaton(states=n, start=0, accepting=final, delta=tuple(tuple(r) for r in table))
