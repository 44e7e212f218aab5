"""What a compiled B-RASP program needs for proofs of every length: the program's own automaton
and one block lemma per compiled block.

- :func:`program_automaton`: a B-RASP program whose attention operations all look at the past
  (j < i) is read left to right with a finite memory: for each attention operation and each
  assignment a of the vectors its score reads at i, whether some earlier position j has
  S(a, j), and then V(b, j) for each assignment b of the vectors its value reads at i, at the
  leftmost (or the latest) such j. The automaton's states are the reachable memories, with the
  output bit at the last position; it is built by breadth-first search and is the program's
  language exactly, for every length (None past ``max_states``). A program with future or
  "all" masks gets the minimal automaton of a nondeterministic one that guesses what those
  operations give (:func:`_guessing_automaton`).
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
from collections.abc import Mapping
from itertools import product
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

__all__ = ["automata_agree", "brasp_lemmas", "program_automaton"]

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


def program_automaton(program: brasp.Program, *, max_states: int = 4096) -> Automaton | None:
    """The program's language as an automaton (see the module docstring), or None when an
    attention operation looks beyond the past or the memories exceed ``max_states``."""
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

    def step(memory: _Memory, symbol: str) -> tuple[_Memory, bool]:
        here: dict[brasp.BVec, bool] = {}
        for op in ops:
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
                s_vars, v_vars = reads[op]
                kept = memory[attends.index(op)][bits[op][0].index(tuple(here[v] for v in s_vars))]
                here[op] = (
                    here[op.default]
                    if kept is None
                    else kept[bits[op][1].index(tuple(here[v] for v in v_vars))]
                )
        new: list[tuple[tuple[bool, ...] | None, ...]] = []
        for k, op in enumerate(attends):
            s_vars, v_vars = reads[op]
            row = []
            for a, s_bits in enumerate(bits[op][0]):
                old = memory[k][a]
                if _pair(op.score, dict(zip(s_vars, s_bits, strict=True)), here) and (
                    old is None or op.side == "rightmost"
                ):
                    old = tuple(
                        _pair(op.value, dict(zip(v_vars, b, strict=True)), here)
                        for b in bits[op][1]
                    )
                row.append(old)
            new.append(tuple(row))
        return tuple(new), here[program.output]

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
    cls = [int(q in accepting) for q in range(states)]
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
    return Automaton(
        states=len(number),
        start=0,
        accepting=frozenset(number[cls[q]] for q in accepting),
        delta=tuple(tuple(rows[c]) for c in range(len(number))),
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
