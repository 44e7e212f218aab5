"""What a compiled B-RASP program needs for proofs of every length: the program's own automaton
and one block lemma per compiled block.

- :func:`program_automaton`: a B-RASP program whose attention operations all look at the past
  (j < i) is read left to right with a finite memory: for each attention operation and each
  assignment a of the vectors its score reads at i, whether some earlier position j has
  S(a, j), and then V(b, j) for each assignment b of the vectors its value reads at i, at the
  leftmost (or the latest) such j. The automaton's states are the reachable memories, with the
  output bit at the last position; it is built by breadth-first search and is the program's
  language exactly, for every length. Past ``max_states`` memories, a past-only program gets
  the minimal automaton of :func:`cascade_automaton` instead: the operations added one at a
  time, the memories no later operation tells apart merged after each attention operation
  (Dyck-1 of depth <= 3: more than 4096 memories at once, at most 42,284 in the cascade, 5
  states at the end). A program with future or "all" masks gets the minimal automaton of a
  nondeterministic one that guesses what those operations give (:func:`_guessing_automaton`).
- :func:`automata_agree`: two automata over one alphabet accept the same words, decided on the
  reachable pairs of states (a proof for every length).
- :func:`brasp_lemmas`: a :class:`BooleanBlock` for every FFN the compiler wrote (its outputs as
  Boolean formulas of the Boolean dims it reads, derived from the program, not from the gate
  circuits) and a :class:`NearestSelection` for every head of a ``rightmost`` operation with the
  mask j < i whose score reads nothing at i (it selects the nearest earlier position where the
  score holds, or the nearest earlier position), and a :class:`RankedSelection` for every other
  head whose score reads nothing at i (the first or last position of highest rank).

May import: its own package's modules, the IR's names, the vocabulary and sympy.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from itertools import product
from operator import itemgetter
from typing import Any

import sympy

from netproof.verifier.claims import (
    Automaton,
    BooleanBlock,
    Lemma,
    NearestSelection,
    RankedSelection,
)
from netproof.verifier.claims.rasp import brasp

from .compile_brasp import depth, dim_of, i_reads

__all__ = [
    "automata_agree",
    "brasp_lemmas",
    "cascade_automaton",
    "operations_automaton",
    "program_automaton",
]

REFERENCE = "Yang, Chiang & Angluin 2024 (B-RASP); compiled by netproof.constructions.rasp"


def _operands(op: brasp.BVec) -> tuple[brasp.BVec, ...]:
    """The operands of a position-wise operation."""
    if isinstance(op, brasp.Not):
        return (op.arg,)
    if isinstance(op, (brasp.And, brasp.Or)):
        return (op.left, op.right)
    return ()


_Memory = tuple[tuple[tuple[bool, ...] | None, ...], ...]


def _pair(
    expr: brasp.BVec, at_i: Mapping[brasp.BVec, bool], at_j: Mapping[brasp.BVec, bool]
) -> bool:
    """S(i, j) or V(i, j) from the vectors' values at i and at j."""
    if isinstance(expr, brasp.AtI):
        return at_i[expr.vec]
    if isinstance(expr, brasp.AtJ):
        return at_j[expr.vec]
    if isinstance(expr, brasp.Const):
        return expr.value
    if isinstance(expr, brasp.Not):
        return not _pair(expr.arg, at_i, at_j)
    if isinstance(expr, (brasp.And, brasp.Or)):
        left, right = _pair(expr.left, at_i, at_j), _pair(expr.right, at_i, at_j)
        return left and right if isinstance(expr, brasp.And) else left or right
    raise ValueError(f"{brasp.show_expr(expr)} is not a pair expression")


def program_automaton(
    program: brasp.Program, *, max_states: int = 4096, cascade: bool = True
) -> Automaton | None:
    """The program's language as an automaton (see the module docstring): the reachable
    memories where they are at most ``max_states``, else (with ``cascade``) the minimal
    automaton the cascade builds (:func:`cascade_automaton`, past masks only), or None."""
    plain = _memories(program, max_states)
    return cascade_automaton(program) if plain is None and cascade else plain


def _memories(program: brasp.Program, max_states: int) -> Automaton | None:
    """The automaton of the program's reachable memories, or None when an attention operation
    looks beyond the past or the memories exceed ``max_states``."""
    ops: tuple[brasp.BVec, ...] = brasp.operations(program.output)
    attends = [op for op in ops if isinstance(op, brasp.Attend)]
    if any(op.mask != "past" for op in attends):
        return _guessing_automaton(program, max_states)
    reads = {op: (i_reads(op.score), i_reads(op.value)) for op in attends}
    # the pair expressions (scores and values, reading at i and j) are not vectors of their own
    pair: set[brasp.BVec] = set()
    for op in ops:
        if isinstance(op, (brasp.AtI, brasp.AtJ)) or (
            isinstance(op, (brasp.Not, brasp.And, brasp.Or))
            and any(x in pair for x in _operands(op))
        ):
            pair.add(op)
    ops = tuple(op for op in ops if op not in pair)
    bits = {
        op: (
            list(product((False, True), repeat=len(s))),
            list(product((False, True), repeat=len(v))),
        )
        for op, (s, v) in reads.items()
    }
    # The operations as instructions over their positions in ``ops``: an operation's equality
    # is structural, so looking operations up in the loop below would compare whole subterms.
    pos = {op: n for n, op in enumerate(ops)}
    code: list[tuple[int, Any, Any]] = []
    for op in ops:
        if isinstance(op, brasp.Token):
            code.append((0, op.symbol, None))
        elif isinstance(op, brasp.Const):
            code.append((1, op.value, None))
        elif isinstance(op, brasp.Not):
            code.append((2, pos[op.arg], None))
        elif isinstance(op, (brasp.And, brasp.Or)):
            code.append((3 if isinstance(op, brasp.And) else 4, pos[op.left], pos[op.right]))
        elif isinstance(op, brasp.Attend):
            s_vars, v_vars = reads[op]
            s_bits, v_bits = bits[op]
            code.append(
                (
                    5,
                    (
                        attends.index(op),
                        [pos[v] for v in s_vars],
                        [pos[v] for v in v_vars],
                        pos[op.default],
                    ),
                    ({b: n for n, b in enumerate(s_bits)}, {b: n for n, b in enumerate(v_bits)}),
                )
            )
        else:  # not reached: the pair expressions were set aside above
            code.append((6, None, None))
    # what position j contributes to each attention operation's memory depends on the values
    # there of the vectors the operation reads: worked out once for each
    contributions = []
    for op in attends:
        read = list(dict.fromkeys(_reads(op)))
        s_vars, v_vars = reads[op]
        seen: dict[tuple[bool, ...], tuple[list[bool], tuple[bool, ...]]] = {}

        def contribution(
            vals: tuple[bool, ...],
            op: brasp.Attend = op,
            read: list[brasp.BVec] = read,
            s_vars: list[brasp.BVec] = s_vars,
            v_vars: list[brasp.BVec] = v_vars,
            seen: dict[tuple[bool, ...], tuple[list[bool], tuple[bool, ...]]] = seen,
        ) -> tuple[list[bool], tuple[bool, ...]]:
            got = seen.get(vals)
            if got is None:
                at_j = dict(zip(read, vals, strict=True))
                got = seen[vals] = (
                    [_pair(op.score, dict(zip(s_vars, b, strict=True)), at_j) for b in bits[op][0]],
                    tuple(
                        _pair(op.value, dict(zip(v_vars, b, strict=True)), at_j)
                        for b in bits[op][1]
                    ),
                )
            return got

        contributions.append(([pos[v] for v in read], contribution, op.side == "rightmost"))
    out_at = pos[program.output]

    def step(memory: _Memory, symbol: str) -> tuple[_Memory, bool]:
        here: list[bool] = []
        for kind, x, y in code:
            if kind == 0:
                here.append(x == symbol)
            elif kind == 1:
                here.append(x)
            elif kind == 2:
                here.append(not here[x])
            elif kind == 3:
                here.append(here[x] and here[y])
            elif kind == 4:
                here.append(here[x] or here[y])
            elif kind == 5:
                k, s_at, v_at, default = x
                s_row, v_row = y
                kept = memory[k][s_row[tuple(here[n] for n in s_at)]]
                here.append(
                    here[default] if kept is None else kept[v_row[tuple(here[n] for n in v_at)]]
                )
            else:
                here.append(False)
        new: list[tuple[tuple[bool, ...] | None, ...]] = []
        for k, (read_at, contribution, latest) in enumerate(contributions):
            holds, given = contribution(tuple(here[n] for n in read_at))
            new.append(
                tuple(
                    given if h and (old is None or latest) else old
                    for h, old in zip(holds, memory[k], strict=True)
                )
            )
        return tuple(new), here[out_at]

    start: tuple[tuple[tuple[tuple[bool, ...] | None, ...], ...], bool] = (
        tuple(tuple(None for _ in bits[op][0]) for op in attends),
        program.empty,
    )
    index = {start: 0}
    delta: list[list[int]] = []
    todo = deque([start])
    while todo:
        memory, _out = todo.popleft()
        row = []
        for symbol in program.alphabet:
            target = step(memory, symbol)
            if target not in index:
                if len(index) >= max_states:
                    return None
                index[target] = len(index)
                todo.append(target)
            row.append(index[target])
        delta.append(row)
    return Automaton(
        states=len(index),
        start=0,
        accepting=frozenset(q for (_m, out), q in index.items() if out),
        delta=tuple(tuple(r) for r in delta),
    )


_Table = tuple[
    tuple[bool, ...] | None, ...
]  # per score assignment a at i: None, or V(b, j*) for each b


class _Guesses:
    """The pieces of :func:`_guessing_automaton`: each attention operation's i-reads, and its
    tables (what its masked set gives for each assignment of the vectors its score reads at i)."""

    def __init__(self, program: brasp.Program) -> None:
        ops = brasp.operations(program.output)
        pair: set[brasp.BVec] = set()
        for op in ops:
            if isinstance(op, (brasp.AtI, brasp.AtJ)) or (
                isinstance(op, (brasp.Not, brasp.And, brasp.Or))
                and any(x in pair for x in _operands(op))
            ):
                pair.add(op)
        self.program = program
        self.ops = tuple(op for op in ops if op not in pair)
        self.attends = [op for op in self.ops if isinstance(op, brasp.Attend)]
        self.reads = {op: (i_reads(op.score), i_reads(op.value)) for op in self.attends}
        self.bits = {
            op: (
                list(product((False, True), repeat=len(sv))),
                list(product((False, True), repeat=len(vv))),
            )
            for op, (sv, vv) in self.reads.items()
        }

    def empty(self, op: brasp.Attend) -> _Table:
        return tuple(None for _ in self.bits[op][0])

    def tables(self, op: brasp.Attend) -> list[_Table]:
        """Every table of ``op``: per score assignment, none found or one value per value assignment."""
        cell: list[tuple[bool, ...] | None] = [
            None,
            *product((False, True), repeat=len(self.bits[op][1])),
        ]
        return [tuple(t) for t in product(cell, repeat=len(self.bits[op][0]))]

    def add(
        self, op: brasp.Attend, table: _Table, here: Mapping[brasp.BVec, bool], first_wins: bool
    ) -> _Table:
        """``table`` with one more position (its vectors ``here``): where the score holds there,
        its values replace the kept ones unless one is kept and ``first_wins``."""
        s_vars, v_vars = self.reads[op]
        row = []
        for a, s_bits in enumerate(self.bits[op][0]):
            old = table[a]
            if _pair(op.score, dict(zip(s_vars, s_bits, strict=True)), here) and (
                old is None or not first_wins
            ):
                old = tuple(
                    _pair(op.value, dict(zip(v_vars, b, strict=True)), here)
                    for b in self.bits[op][1]
                )
            row.append(old)
        return tuple(row)

    def here(self, symbol: str, seen: Mapping[brasp.BVec, _Table]) -> dict[brasp.BVec, bool]:
        """The vectors at one position, each attention operation read from its table ``seen``
        (the positions of its masked set)."""
        here: dict[brasp.BVec, bool] = {}
        for op in self.ops:
            if isinstance(op, brasp.Token):
                here[op] = op.symbol == symbol
            elif isinstance(op, brasp.Const):
                here[op] = op.value
            elif isinstance(op, brasp.Not):
                here[op] = not here[op.arg]
            elif isinstance(op, brasp.And):
                here[op] = here[op.left] and here[op.right]
            elif isinstance(op, brasp.Or):
                here[op] = here[op.left] or here[op.right]
            elif isinstance(op, brasp.Attend):
                s_vars, v_vars = self.reads[op]
                kept = seen[op][self.bits[op][0].index(tuple(here[v] for v in s_vars))]
                here[op] = (
                    here[op.default]
                    if kept is None
                    else kept[self.bits[op][1].index(tuple(here[v] for v in v_vars))]
                )
        return here


# An NFA state of _guessing_automaton: per attention operation (in order) its part (see there), and the output bit.
_Guess = tuple[tuple[tuple[_Table, ...], ...], bool]


def _guessing_automaton(program: brasp.Program, max_states: int) -> Automaton | None:
    """The language of a program with any masks as a minimal automaton: a nondeterministic one
    that guesses what the other positions give, made deterministic and minimal. Its state keeps,
    per attention operation: a past mask, the table of the positions before (as
    :func:`program_automaton`); mask all, the guessed table of the whole word and the table of
    the positions so far (equal at the end); a future mask, the guessed table of the positions
    from here on, which the next position checks (this position added to its own guess for the
    positions after it; none at the end). Each word has one run whose guesses are right; the
    automaton accepts where that run's output bit at the last position is 1. None past
    ``max_states`` (deterministic states, before or after minimizing)."""
    g = _Guesses(program)
    first_wins = {op: op.side == "leftmost" for op in g.attends}

    def starts() -> list[_Guess]:
        choices: list[list[tuple[_Table, ...]]] = []
        for op in g.attends:
            if op.mask == "past":
                choices.append([(g.empty(op),)])
            elif op.mask == "all":
                choices.append([(t, g.empty(op)) for t in g.tables(op)])
            else:
                choices.append([(t,) for t in g.tables(op)])
        return [(parts, program.empty) for parts in product(*choices)]

    def good(state: _Guess) -> bool:
        parts, out = state
        for op, part in zip(g.attends, parts, strict=True):
            if op.mask == "all" and part[0] != part[1]:
                return False
            if op.mask == "future" and part[0] != g.empty(op):
                return False
        return out

    futures = [g.tables(op) if op.mask == "future" else [None] for op in g.attends]

    def moves(state: _Guess, symbol: str) -> list[_Guess]:
        parts, _out = state
        found: list[_Guess] = []
        for after in product(*futures):
            seen: dict[brasp.BVec, _Table] = {}
            for op, part, f in zip(g.attends, parts, after, strict=True):
                if op.mask != "future":
                    seen[op] = part[0]
                else:
                    assert f is not None  # a future mask's guess
                    seen[op] = f
            here = g.here(symbol, seen)
            new: list[tuple[_Table, ...]] = []
            for op, part, f in zip(g.attends, parts, after, strict=True):
                if op.mask == "past":
                    new.append((g.add(op, part[0], here, first_wins[op]),))
                elif op.mask == "all":
                    new.append((part[0], g.add(op, part[1], here, first_wins[op])))
                else:
                    # from here on = this position added before the positions after it
                    assert f is not None
                    if g.add(op, f, here, not first_wins[op]) != part[0]:
                        break
                    new.append((f,))
            else:
                found.append((tuple(new), here[program.output]))
        return found

    start = frozenset(starts())
    index: dict[frozenset[_Guess], int] = {start: 0}
    order = [start]
    delta: list[list[int]] = []
    for subset in order:
        row = []
        for symbol in program.alphabet:
            target = frozenset(t for s in subset for t in moves(s, symbol))
            if target not in index:
                if len(index) >= max_states:
                    return None
                index[target] = len(index)
                order.append(target)
            row.append(index[target])
        delta.append(row)
    accepting = {q for q, subset in enumerate(order) if any(good(s) for s in subset)}
    return _minimal(len(order), accepting, delta)


def _minimal(states: int, accepting: set[int], delta: list[list[int]]) -> Automaton:
    """The minimal automaton of a complete DFA whose states are all reachable (start 0), its
    states numbered in breadth-first order from the start (symbols in order): the same
    automaton for the same language, whatever the input's numbering."""
    number, rows = _classes([int(q in accepting) for q in range(states)], delta)
    return Automaton(
        states=len(rows),
        start=0,
        accepting=frozenset(number[q] for q in accepting),
        delta=tuple(tuple(r) for r in rows),
    )


def _classes(labels: list[Any], delta: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """The coarsest partition of the states (start 0, all reachable) that keeps ``labels``
    and is kept by every symbol's move (Moore's refinement): each state's class, the classes
    numbered in breadth-first order from the start (symbols in order), and the classes' moves."""
    states = len(delta)
    ids0: dict[Any, int] = {}
    cls = [ids0.setdefault(x, len(ids0)) for x in labels]
    while True:
        sig = [(cls[q], *(cls[t] for t in delta[q])) for q in range(states)]
        ids: dict[tuple[int, ...], int] = {}
        new = [ids.setdefault(x, len(ids)) for x in sig]
        if len(ids) == len(set(cls)):
            break
        cls = new
    number = {cls[0]: 0}
    todo = deque([0])
    rows: dict[int, list[int]] = {}
    while todo:
        q = todo.popleft()
        row = []
        for t in delta[q]:
            if cls[t] not in number:
                number[cls[t]] = len(number)
                todo.append(t)
            row.append(number[cls[t]])
        rows[number[cls[q]]] = row
    return [number[c] for c in cls], [rows[c] for c in range(len(number))]


# --------------------------------------------------------------------------- the cascade


CASCADE_STATES = 1 << 16
"""The most states :func:`cascade_automaton` lets any of its machines have."""


def _reads(op: brasp.BVec) -> tuple[brasp.BVec, ...]:
    """The vectors a position-wise or attention operation reads (at i or at j)."""
    if not isinstance(op, brasp.Attend):
        return _operands(op)
    found: list[brasp.BVec] = []
    stack = [op.score, op.value]
    while stack:
        e = stack.pop()
        if isinstance(e, (brasp.AtI, brasp.AtJ)):
            found.append(e.vec)
        else:
            stack += _operands(e)
    return (*found, op.default)


class _Mealy:
    """A machine reading the word left to right: ``delta[s][a]``, the state after symbol ``a``
    in state ``s``, and ``out[s][a]``, the values of the vectors ``live`` at that position."""

    def __init__(self, alphabet: tuple[str, ...]) -> None:
        self.delta: list[list[int]] = [[0 for _ in alphabet]]
        self.out: list[list[tuple[bool, ...]]] = [[() for _ in alphabet]]
        self.live: list[brasp.BVec] = []

    def minimize(self) -> None:
        number, rows = _classes([tuple(r) for r in self.out], self.delta)
        out: list[list[tuple[bool, ...]] | None] = [None] * len(rows)
        for q, c in enumerate(number):
            out[c] = self.out[q]
        self.delta = rows
        self.out = [r for r in out if r is not None]


def _cascade(
    program: brasp.Program, watched: tuple[brasp.BVec, ...], max_states: int
) -> _Mealy | None:
    """The program's operations one at a time, in the order :func:`brasp.operations` lists
    them, as a machine whose output at each position is the vectors later operations read there
    and ``watched``: a position-wise operation adds its value to the outputs; an attention
    operation (mask past) pairs each state with the operation's table (as
    :func:`program_automaton`'s memory) and computes its value from the table; after it, the
    vectors no later operation reads and not watched leave the outputs and states with the
    same outputs for every word from them on are merged (:func:`_classes`). The machine's
    output at every position of every word is then exactly the watched vectors' values there.
    None where some machine passes ``max_states``."""
    pair: set[brasp.BVec] = set()
    for op in brasp.operations(program.output):
        if isinstance(op, (brasp.AtI, brasp.AtJ)) or (
            isinstance(op, (brasp.Not, brasp.And, brasp.Or))
            and any(x in pair for x in _operands(op))
        ):
            pair.add(op)
    ops = [op for op in brasp.operations(program.output) if op not in pair]
    last: dict[brasp.BVec, int] = {}
    for k, op in enumerate(ops):
        for v in _reads(op):
            last[v] = k
    kept = set(watched)
    alphabet = program.alphabet
    m = _Mealy(alphabet)
    k = 0
    while k < len(ops):
        at = {v: n for n, v in enumerate(m.live)}
        attend = ops[k]
        if isinstance(attend, brasp.Attend):
            if not _attend_step(m, attend, at, max_states):
                return None
            m.live.append(attend)
            done = k
        else:  # a run of position-wise operations, each an index into the outputs so far
            run: list[tuple[int, int, int]] = []  # (kind, x, y)
            kind = {brasp.Not: 1, brasp.And: 2, brasp.Or: 3}
            while k < len(ops) and not isinstance(ops[k], brasp.Attend):
                op = ops[k]
                if isinstance(op, brasp.Token):
                    run.append((4, alphabet.index(op.symbol) if op.symbol in alphabet else -1, 0))
                elif isinstance(op, brasp.Const):
                    run.append((5, int(op.value), 0))
                else:
                    x, *y = (at[v] for v in _operands(op))
                    run.append((kind[type(op)], x, y[0] if y else 0))
                at[op] = len(at)
                m.live.append(op)
                k += 1
            done = k - 1
            m.out = [[_run(vals, a, run) for a, vals in enumerate(row)] for row in m.out]
        stay = [n for n, v in enumerate(m.live) if v in kept or last.get(v, -1) > done]
        if len(stay) < len(m.live):
            m.live = [m.live[n] for n in stay]
            pick = _picker(stay)
            m.out = [[pick(vals) for vals in row] for row in m.out]
        if isinstance(ops[done], brasp.Attend) or done == len(ops) - 1:
            m.minimize()
        k = done + 1
    return m


def _picker(indices: list[int]) -> Callable[[tuple[bool, ...]], tuple[bool, ...]]:
    """The function picking ``indices`` (in order) out of a tuple, as a tuple."""
    if len(indices) == 1:
        (n,) = indices
        return lambda vals: (vals[n],)
    return itemgetter(*indices) if indices else lambda vals: ()


def _run(vals: tuple[bool, ...], a: int, run: list[tuple[int, int, int]]) -> tuple[bool, ...]:
    """``vals`` with the values of a run of position-wise operations (at symbol ``a``) added."""
    out = list(vals)
    for kind, x, y in run:
        if kind == 1:
            out.append(not out[x])
        elif kind == 2:
            out.append(out[x] and out[y])
        elif kind == 3:
            out.append(out[x] or out[y])
        elif kind == 4:
            out.append(x == a)
        else:
            out.append(bool(x))
    return tuple(out)


def _attend_step(
    m: _Mealy, op: brasp.Attend, at: Mapping[brasp.BVec, int], max_states: int
) -> bool:
    """Pair each of ``m``'s states with ``op``'s table and add its value to the outputs (see
    :func:`_cascade`); False where the states pass ``max_states``."""
    s_vars, v_vars = i_reads(op.score), i_reads(op.value)
    s_bits = list(product((False, True), repeat=len(s_vars)))
    v_bits = list(product((False, True), repeat=len(v_vars)))
    first_wins = op.side == "leftmost"
    empty: tuple[tuple[bool, ...] | None, ...] = tuple(None for _ in s_bits)
    # what a position contributes depends on the outputs op reads alone: worked out once each
    read = list(dict.fromkeys(_reads(op)))
    key = _picker([at[v] for v in read])
    seen: dict[tuple[bool, ...], tuple[int, int, list[bool], tuple[bool, ...]]] = {}

    def reading(vals: tuple[bool, ...]) -> tuple[int, int, list[bool], tuple[bool, ...]]:
        bits = key(vals)
        got = seen.get(bits)
        if got is None:
            here = dict(zip(read, bits, strict=True))
            holds = [_pair(op.score, dict(zip(s_vars, bits, strict=True)), here) for bits in s_bits]
            given = tuple(_pair(op.value, dict(zip(v_vars, c, strict=True)), here) for c in v_bits)
            got = seen[bits] = (
                s_bits.index(tuple(here[v] for v in s_vars)),
                v_bits.index(tuple(here[v] for v in v_vars)),
                holds,
                given,
            )
        return got

    default = at[op.default]
    index = {(0, empty): 0}
    order = [(0, empty)]
    delta: list[list[int]] = []
    out: list[list[tuple[bool, ...]]] = []
    for s, table in order:
        d_row, o_row = [], []
        for a, vals in enumerate(m.out[s]):
            a_idx, b_idx, holds, given = reading(vals)
            kept_a = table[a_idx]
            value = vals[default] if kept_a is None else kept_a[b_idx]
            row = tuple(
                given if h and (old is None or not first_wins) else old
                for h, old in zip(holds, table, strict=True)
            )
            target = (m.delta[s][a], row)
            if target not in index:
                if len(index) >= max_states:
                    return False
                index[target] = len(index)
                order.append(target)
            d_row.append(index[target])
            o_row.append((*vals, value))
        delta.append(d_row)
        out.append(o_row)
    m.delta, m.out = delta, out
    return True


def _moore(
    m: _Mealy, watched: tuple[brasp.BVec, ...], start: tuple[bool, ...]
) -> tuple[list[list[int]], list[tuple[bool, ...]]]:
    """The states after each prefix of ``m``'s runs, each with the watched vectors' values at
    the prefix's last position (``start`` for the empty prefix), minimal and numbered as
    :func:`_classes` numbers them: the moves and each state's values."""
    pick = [m.live.index(v) for v in watched]
    first = (0, start)
    index = {first: 0}
    order = [first]
    delta: list[list[int]] = []
    for s, _vals in order:
        row = []
        for a in range(len(m.delta[s])):
            target = (m.delta[s][a], tuple(m.out[s][a][n] for n in pick))
            if target not in index:
                index[target] = len(index)
                order.append(target)
            row.append(index[target])
        delta.append(row)
    number, rows = _classes([vals for _s, vals in order], delta)
    labels: list[tuple[bool, ...]] = [()] * len(rows)
    for q, c in enumerate(number):
        labels[c] = order[q][1]
    return rows, labels


def cascade_automaton(
    program: brasp.Program, *, max_states: int = CASCADE_STATES
) -> Automaton | None:
    """The minimal automaton of a program whose attention operations all look at the past,
    built operation by operation (:func:`_cascade`, merging after each attention operation the
    memories that no later operation tells apart), where :func:`program_automaton`'s memories
    of every operation at once are too many. None where a mask is not past or some machine of
    the cascade passes ``max_states``."""
    if any(
        isinstance(op, brasp.Attend) and op.mask != "past"
        for op in brasp.operations(program.output)
    ):
        return None
    m = _cascade(program, (program.output,), max_states)
    if m is None:
        return None
    rows, labels = _moore(m, (program.output,), (program.empty,))
    return Automaton(
        states=len(rows),
        start=0,
        accepting=frozenset(q for q, (bit,) in enumerate(labels) if bit),
        delta=tuple(tuple(r) for r in rows),
    )


def operations_automaton(
    program: brasp.Program, ops: tuple[brasp.BVec, ...], *, max_states: int = CASCADE_STATES
) -> tuple[Automaton, tuple[frozenset[int], ...]] | None:
    """A minimal machine whose state after each prefix of a word tells the value of each of
    ``ops`` at the prefix's last position (every mask past): the automaton (no state
    accepting) and, per operation, the states where it is 1 (none at the start). None where a
    mask is not past or a machine passes ``max_states``."""
    if any(
        isinstance(op, brasp.Attend) and op.mask != "past"
        for op in brasp.operations(program.output)
    ):
        return None
    m = _cascade(program, ops, max_states)
    if m is None:
        return None
    rows, labels = _moore(m, ops, tuple(False for _ in ops))
    machine = Automaton(
        states=len(rows), start=0, accepting=frozenset(), delta=tuple(tuple(r) for r in rows)
    )
    return machine, tuple(
        frozenset(q for q, vals in enumerate(labels) if vals[k]) for k in range(len(ops))
    )


def automata_agree(left: Automaton, right: Automaton) -> tuple[int, tuple[int, ...] | None]:
    """(reachable pairs of states, None) when the two automata accept the same words; else
    (pairs explored, the shortest word, as symbol indices, that one accepts and the other not)."""
    start = (left.start, right.start)
    seen: dict[tuple[int, int], tuple[int, ...]] = {start: ()}
    todo = deque([start])
    while todo:
        p, q = pair = todo.popleft()
        if (p in left.accepting) != (q in right.accepting):
            return len(seen), seen[pair]
        for a in range(len(left.delta[p])):
            nxt = (left.delta[p][a], right.delta[q][a])
            if nxt not in seen:
                seen[nxt] = (*seen[pair], a)
                todo.append(nxt)
    return len(seen), None


# --------------------------------------------------------------------------- block lemmas


class _Formulas:
    """Sympy formulas of the program's vectors over the compiled network's dims."""

    def __init__(self, program: brasp.Program) -> None:
        self.named = brasp.names(program)

    def dim(self, name: str) -> Any:
        return sympy.Symbol(name)

    def vec(self, expr: brasp.BVec) -> Any:
        """A position-wise vector over the dims of the tokens and the attention operations."""
        if isinstance(expr, brasp.Token):
            return self.dim(dim_of(expr.symbol))
        if isinstance(expr, brasp.Const):
            return sympy.true if expr.value else sympy.false
        if isinstance(expr, brasp.Attend):
            return self.dim(self.named[expr])
        if isinstance(expr, brasp.Not):
            return sympy.Not(self.vec(expr.arg))
        if isinstance(expr, (brasp.And, brasp.Or)):
            f = sympy.And if isinstance(expr, brasp.And) else sympy.Or
            return f(self.vec(expr.left), self.vec(expr.right))
        raise ValueError(f"{brasp.show_expr(expr)} is not position-wise")

    def pair(self, expr: brasp.BVec, at_i: Mapping[brasp.BVec, bool]) -> Any:
        """A pair expression at key position j, its i-reads fixed."""
        if isinstance(expr, brasp.AtI):
            return sympy.true if at_i[expr.vec] else sympy.false
        if isinstance(expr, brasp.AtJ):
            return self.vec(expr.vec)
        if isinstance(expr, brasp.Const):
            return sympy.true if expr.value else sympy.false
        if isinstance(expr, brasp.Not):
            return sympy.Not(self.pair(expr.arg, at_i))
        if isinstance(expr, (brasp.And, brasp.Or)):
            f = sympy.And if isinstance(expr, brasp.And) else sympy.Or
            return f(self.pair(expr.left, at_i), self.pair(expr.right, at_i))
        raise ValueError(f"{brasp.show_expr(expr)} is not a pair expression")

    def minterm(self, vecs: list[brasp.BVec], bits: tuple[bool, ...]) -> Any:
        return sympy.And(
            *(self.vec(v) if b else sympy.Not(self.vec(v)) for v, b in zip(vecs, bits, strict=True))
        )


def _boolean_block(block: str, outputs: dict[str, Any], statement: str) -> BooleanBlock:
    read = sorted({str(s) for f in outputs.values() for s in sympy.sympify(f).free_symbols})
    return BooleanBlock(
        id=block,
        statement=statement,
        reference=REFERENCE,
        block=block,
        boolean=tuple(read),
        outputs=outputs,
    )


def _ranked(level: int, name: str, op: brasp.Attend) -> RankedSelection:
    """The RankedSelection of the head of ``op`` (its score reads nothing at i): the compiled
    score 2·k(j) ∓ p_j (− 4·BOS_j for a leftmost head whose mask lets BOS in) ranks a key by
    (not BOS, k) for such a head, else by k, and among equals prefers the leftmost (rightmost)."""
    key = sympy.Symbol(f"{name}.k0")
    bos = op.side == "leftmost" and op.mask != "future"
    where = {"past": "earlier position", "future": "later position", "all": "position"}[op.mask]
    return RankedSelection(
        id=f"L{level}.{name}",
        statement=f"head {name} selects the {op.side} {where} where its score holds (the {op.side} "
        f"{where}{' other than BOS' if bos else ''} if none does), with no score ties",
        reference=REFERENCE,
        layer=f"L{level}",
        head=name,
        ranks=(sympy.Not(sympy.Symbol("BOS")), key) if bos else (key,),
        end="first" if op.side == "leftmost" else "last",
        boolean=(f"{name}.k0", "BOS") if bos else (f"{name}.k0",),
        positional={"p": "i/n"},
    )


def brasp_lemmas(program: brasp.Program) -> tuple[Lemma, ...]:
    """One lemma per compiled block of ``program`` (see the module docstring), in network order."""
    f = _Formulas(program)
    bos, end = sympy.Symbol("BOS"), sympy.Symbol("EOS")
    attends = [op for op in brasp.operations(program.output) if isinstance(op, brasp.Attend)]
    memo: dict[brasp.BVec, int] = {}
    top = max((depth(op, memo) for op in attends), default=0)
    lemmas: list[Lemma] = []
    for level in range(1, top + 1):
        pre: dict[str, Any] = {}
        post: dict[str, Any] = {}
        heads: list[Lemma] = []
        for op in (op for op in attends if depth(op, memo) == level):
            name = f.named[op]
            s_vars, v_vars = i_reads(op.score), i_reads(op.value)
            s_bits = list(product((False, True), repeat=len(s_vars)))
            v_bits = list(product((False, True), repeat=len(v_vars)))
            for a, bits in enumerate(s_bits):
                if s_vars:
                    pre[f"{name}.q{a}"] = f.minterm(s_vars, bits)
                pre[f"{name}.k{a}"] = sympy.And(
                    sympy.Not(bos),
                    sympy.Not(end),
                    f.pair(op.score, dict(zip(s_vars, bits, strict=True))),
                )
            for b, bits in enumerate(v_bits):
                pre[f"{name}.v{b}"] = f.pair(op.value, dict(zip(v_vars, bits, strict=True)))
            found = sympy.Or(
                *(
                    sympy.And(f.dim(f"{name}.q{a}"), f.dim(f"{name}.found{a}"))
                    if s_vars
                    else f.dim(f"{name}.found{a}")
                    for a in range(len(s_bits))
                )
            )
            value = sympy.Or(
                *(
                    sympy.And(f.minterm(v_vars, bits), f.dim(f"{name}.val{b}"))
                    for b, bits in enumerate(v_bits)
                )
            )
            post[name] = sympy.Or(
                sympy.And(found, value), sympy.And(sympy.Not(found), f.vec(op.default))
            )
            if op.side == "rightmost" and op.mask == "past" and not s_vars:
                heads.append(
                    NearestSelection(
                        id=f"L{level}.{name}",
                        statement=f"head {name} selects the nearest earlier position where its score holds "
                        "(the nearest earlier position if none does), with no score ties",
                        reference=REFERENCE,
                        layer=f"L{level}",
                        head=name,
                        prefer=sympy.Symbol(f"{name}.k0"),
                        boolean=(f"{name}.k0",),
                        positional={"p": "i/n"},
                    )
                )
            elif not s_vars:
                heads.append(_ranked(level, name, op))
        lemmas.append(
            _boolean_block(
                f"L{level}.pre",
                pre,
                f"FFN L{level}.pre writes each head's query, key and value bits",
            )
        )
        lemmas += heads
        lemmas.append(
            _boolean_block(
                f"L{level}.post", post, f"FFN L{level}.post writes each operation of depth {level}"
            )
        )
    out = sympy.And(sympy.Not(bos), f.vec(program.output))
    lemmas.append(
        _boolean_block(
            "output",
            {"output": sympy.Or(bos, out) if program.empty else out},
            "FFN output writes the program's output",
        )
    )
    lemmas.append(
        NearestSelection(
            id="last",
            statement="head last selects the nearest earlier position (at EOS: the last symbol, or BOS for the empty word)",
            reference=REFERENCE,
            layer="last",
            head="last",
            prefer=sympy.true,
            boolean=(),
            positional={"p": "i/n"},
        )
    )
    last = sympy.Symbol("last")
    lemmas.append(
        _boolean_block(
            "verdict.pre",
            {"reject": sympy.And(end, sympy.Not(last))},
            "FFN verdict.pre raises reject at EOS when the last symbol's output is 0",
        )
    )
    return tuple(lemmas)
