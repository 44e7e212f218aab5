"""Counting temporal logic (Yang & Chiang's K_t[#], past counting only) as a specification
language: formulas, their text syntax, a direct evaluator and the counter automaton of a formula.

Yang & Chiang 2024 ("Counting Like Transformers: Compiling Temporal Counting Logic Into Softmax
Transformers", arXiv:2404.04393) prove C-RASP equivalent to the temporal counting logic
K_t[#]: formulas built from the letters Q_a with Boolean connectives and comparisons of linear
combinations of counting terms #⃖[φ], the number of positions j ≤ i where φ holds. A formula
defines the language of the words whose **last position** satisfies it (as LTL in
:mod:`.ltl`); the empty word has no last position and its membership is a parameter
(``empty``, default False). On a word w = w_1 … w_n and a position 1 ≤ i ≤ n:

- ``a`` (Q_a): w_i = a; ``true`` and ``false``;
- ``!φ``, ``φ & ψ``, ``φ | ψ``, ``φ -> ψ`` (also ``¬ ∧ ∨ →``);
- ``#(φ)`` (also ``#a`` for a symbol a): |{j ≤ i : φ holds at j}|;
- a term is a sum of integer multiples of counts and integer constants:
  ``2*#(a) - #(b) + 1`` (``*`` may be left out: ``2#(a)``);
- ``t1 < t2``, ``<=``, ``>``, ``>=``, ``==``, ``!=``: the comparison of the two terms at i.

Text syntax: ``!`` binds tightest, then the comparisons (one per pair of terms: ``a < b < c``
is refused), ``&``, ``|`` and ``->`` (right-associative); parentheses group formulas, never
terms (``(#(a) - #(b)) > 0`` is refused; write ``#(a) - #(b) > 0``). A symbol is a bare run
of letters, digits and ``_`` that is not a keyword (``true``, ``false``) and does not start
with a digit, or is written in quotes (``'('``, ``'1'``): a bare number is a constant. A bad
formula raises :class:`CountingError`, one line naming the offset and the fix.

:func:`formula_counters` builds the formula's counter automaton without C-RASP (counters: the
formula's count terms; control: the last symbol read; see its docstring), the reference a
synthesized C-RASP program is proved against for every length.

May import: the standard library, :mod:`.languages` and :mod:`.counting`.

>>> f = parse_counting("#(a) > #(b)", ("a", "b"))
>>> show(f), size(f)
('#(a) > #(b)', 5)
>>> [holds(f, w) for w in ("a", "ab", "aab", "")]
[True, False, True, False]
>>> dyck = parse_counting("#('(') == #(')') & #(#(')') > #('(')) == 0", ("(", ")"))
>>> [holds(dyck, w, empty=True) for w in ("", "()", "(())()", "())(", "(")]
[True, True, True, False, False]
>>> parse_counting("#(a) >", ("a", "b"))
Traceback (most recent call last):
...
netproof.verifier.claims.counting_ltl.CountingError: counting formula '#(a) >' ends at offset 6 where a term is expected; write a term after '>', e.g. #(b) or 0
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from .counting import Atom, CounterAutomaton, CounterRule
from .languages import Language

__all__ = [
    "FALSE",
    "TRUE",
    "And",
    "Compare",
    "Const",
    "Count",
    "CountingError",
    "Formula",
    "Letter",
    "Not",
    "Or",
    "Term",
    "counting_language",
    "counts",
    "formula_counters",
    "holds",
    "holds_at",
    "parse_counting",
    "show",
    "size",
    "values",
]


class CountingError(ValueError):
    """A counting formula that cannot be read; the message is one line with the fix."""


@dataclass(frozen=True, slots=True)
class Letter:
    """Q_a: the symbol at i is ``symbol``."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Const:
    value: bool


@dataclass(frozen=True, slots=True)
class Not:
    arg: Formula


@dataclass(frozen=True, slots=True)
class And:
    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True)
class Or:
    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True)
class Count:
    """#⃖[φ]: the number of positions j ≤ i where ``arg`` holds."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Term:
    """Σ k·#(φ) + c: ``parts`` pairs (count, k ≠ 0), each count once, in order of appearance."""

    parts: tuple[tuple[Count, int], ...]
    const: int = 0


@dataclass(frozen=True, slots=True)
class Compare:
    """``left op right`` at i, ``op`` one of ``< <= > >= == !=``."""

    op: str
    left: Term
    right: Term


Formula: TypeAlias = Letter | Const | Not | And | Or | Compare
TRUE = Const(True)
FALSE = Const(False)
OPS = ("<=", ">=", "==", "!=", "<", ">")


def implies(p: Formula, q: Formula) -> Formula:
    """φ → ψ, i.e. ¬φ ∨ ψ (not a node of its own)."""
    return Or(Not(p), q)


def _children(f: Formula | Count) -> tuple[Formula | Count, ...]:
    if isinstance(f, Not):
        return (f.arg,)
    if isinstance(f, (And, Or)):
        return (f.left, f.right)
    if isinstance(f, Count):
        return (f.arg,)
    if isinstance(f, Compare):
        return tuple(c for t in (f.left, f.right) for c, _k in t.parts)
    return ()


def _nodes(f: Formula | Count) -> Iterator[Formula | Count]:
    """Every node, operands before their operations (with repeats)."""
    for c in _children(f):
        yield from _nodes(c)
    yield f


def counts(formula: Formula) -> tuple[Count, ...]:
    """The distinct count terms of ``formula``, inner ones first."""
    return tuple(dict.fromkeys(n for n in _nodes(formula) if isinstance(n, Count)))


def size(formula: Formula) -> int:
    """Syntax-tree nodes: letters, constants, connectives, comparisons, counts, and one per
    coefficient other than 1 and per constant other than 0 of a term."""
    extra = 0
    if isinstance(formula, Compare):
        for t in (formula.left, formula.right):
            extra += sum(1 for _c, k in t.parts if k != 1) + (t.const != 0)
    return (
        1
        + extra
        + sum(size(c.arg) + 1 if isinstance(c, Count) else size(c) for c in _children(formula))
    )


# --------------------------------------------------------------------------- semantics


def values(formula: Formula, word: Sequence[str]) -> tuple[bool, ...]:
    """``formula`` at every position 1..n of ``word`` (index 0 is position 1)."""
    w = tuple(word)
    memo: dict[Formula, tuple[bool, ...]] = {}
    cmemo: dict[Count, tuple[int, ...]] = {}

    def count(c: Count) -> tuple[int, ...]:
        if c not in cmemo:
            run, out = 0, []
            for x in vec(c.arg):
                run += x
                out.append(run)
            cmemo[c] = tuple(out)
        return cmemo[c]

    def term(t: Term) -> list[int]:
        out = [t.const] * len(w)
        for c, k in t.parts:
            out = [o + k * x for o, x in zip(out, count(c), strict=True)]
        return out

    def vec(f: Formula) -> tuple[bool, ...]:
        if f in memo:
            return memo[f]
        if isinstance(f, Letter):
            out = tuple(s == f.symbol for s in w)
        elif isinstance(f, Const):
            out = (f.value,) * len(w)
        elif isinstance(f, Not):
            out = tuple(not x for x in vec(f.arg))
        elif isinstance(f, And):
            out = tuple(x and y for x, y in zip(vec(f.left), vec(f.right), strict=True))
        elif isinstance(f, Or):
            out = tuple(x or y for x, y in zip(vec(f.left), vec(f.right), strict=True))
        else:
            out = tuple(
                _compare(f.op, x, y) for x, y in zip(term(f.left), term(f.right), strict=True)
            )
        memo[f] = out
        return out

    return vec(formula)


def _compare(op: str, x: int, y: int) -> bool:
    return {
        "<": x < y,
        "<=": x <= y,
        ">": x > y,
        ">=": x >= y,
        "==": x == y,
        "!=": x != y,
    }[op]


def holds_at(formula: Formula, word: Sequence[str], i: int) -> bool:
    """``formula`` at position ``i`` (1-based) of ``word``."""
    if not 1 <= i <= len(word):
        raise ValueError(f"position i={i} is outside 1..{len(word)}")
    return values(formula, word)[i - 1]


def holds(formula: Formula, word: Sequence[str], empty: bool = False) -> bool:
    """Is ``word`` in the formula's language: ``formula`` at the last position (``empty`` for
    the empty word)."""
    return empty if not word else values(formula, word)[-1]


# --------------------------------------------------------------------------- text

_Token = tuple[str, str, int]  # kind (sym, num, op, const, end), text, offset
_UNICODE = {"¬": "!", "∧": "&", "∨": "|", "→": "->", "≤": "<=", "≥": ">=", "≠": "!="}
_PUNCT = ("->", "<=", ">=", "==", "!=", "<", ">", "!", "&", "|", "(", ")", "#", "+", "-", "*")


class _Parser:
    def __init__(self, text: str, alphabet: tuple[str, ...]) -> None:
        self.text, self.alphabet = text, alphabet
        self.tokens = [*self._lex(), ("end", "", len(text))]
        self.k = 0

    def fail(self, message: str) -> CountingError:
        return CountingError(f"counting formula {self.text!r} {message}")

    def _lex(self) -> Iterator[_Token]:
        t, i = self.text, 0
        while i < len(t):
            c = t[i]
            if c.isspace():
                i += 1
            elif c in "'\"":
                end = t.find(c, i + 1)
                if end < 0:
                    raise self.fail(f"has an unclosed quote {c} at offset {i}; close it")
                sym = t[i + 1 : end]
                if sym not in self.alphabet:
                    raise self.fail(
                        f"quotes {sym!r} at offset {i}, which is not a symbol of the alphabet "
                        f"{{{', '.join(self.alphabet)}}}; quote one of those"
                    )
                yield ("sym", sym, i)
                i = end + 1
            elif c.isdigit():
                j = i
                while j < len(t) and t[j].isdigit():
                    j += 1
                if j < len(t) and (t[j].isalpha() or t[j] == "_"):
                    raise self.fail(
                        f"has {t[i:j]}{t[j]}… at offset {i}: a bare run starting with a digit is a "
                        "number; write 2*#(a) for a multiple, or quote a symbol: '1a'"
                    )
                yield ("num", t[i:j], i)
                i = j
            elif c.isalpha() or c == "_":
                j = i
                while j < len(t) and (t[j].isalnum() or t[j] == "_"):
                    j += 1
                run = t[i:j]
                if run in ("true", "false"):
                    yield ("const", run, i)
                elif run in self.alphabet:
                    yield ("sym", run, i)
                else:
                    raise self.fail(
                        f"has {run!r} at offset {i}, which is not a symbol of the alphabet "
                        f"{{{', '.join(self.alphabet)}}}; write a symbol, true, false or #(...)"
                    )
                i = j
            elif c in _UNICODE:
                yield ("op", _UNICODE[c], i)
                i += 1
            else:
                op = next((p for p in _PUNCT if t.startswith(p, i)), None)
                if op is None or (op == "=" and not t.startswith("==", i)):
                    hint = "write == for equality" if c == "=" else "quote a symbol: '" + c + "'"
                    raise self.fail(f"has {c!r} at offset {i}; {hint}")
                yield ("op", op, i)
                i += len(op)

    def peek(self) -> _Token:
        return self.tokens[self.k]

    def take(self) -> _Token:
        tok = self.tokens[self.k]
        self.k += 1
        return tok

    def where(self, what: str) -> CountingError:
        kind, text, at = self.peek()
        before = self.tokens[self.k - 1][1] if self.k else ""
        after = f" after {before!r}" if before else ""
        example = "e.g. #(b) or 0" if what == "a term" else "e.g. a or #(a) > 0"
        if kind == "end":
            return self.fail(
                f"ends at offset {at} where {what} is expected; write {what}{after}, {example}"
            )
        return self.fail(f"has {text!r} at offset {at} where {what} is expected; {example}")

    def expect(self, op: str) -> None:
        kind, text, at = self.peek()
        if (kind, text) != ("op", op):
            shown = "the end" if kind == "end" else repr(text)
            raise self.fail(f"has {shown} at offset {at} where {op!r} is expected; add it")
        self.k += 1

    def formula(self) -> Formula:
        left = self.disjunction()
        if self.peek()[:2] == ("op", "->"):
            self.k += 1
            return implies(left, self.formula())
        return left

    def disjunction(self) -> Formula:
        f = self.conjunction()
        while self.peek()[:2] == ("op", "|"):
            self.k += 1
            f = Or(f, self.conjunction())
        return f

    def conjunction(self) -> Formula:
        f = self.unary()
        while self.peek()[:2] == ("op", "&"):
            self.k += 1
            f = And(f, self.unary())
        return f

    def unary(self) -> Formula:
        kind, text, _at = self.peek()
        if (kind, text) == ("op", "!"):
            self.k += 1
            return Not(self.unary())
        if (kind, text) == ("op", "("):
            self.k += 1
            f = self.formula()
            if self.peek()[1] in OPS:
                raise self.fail(
                    f"compares a parenthesized formula at offset {self.peek()[2]}: parentheses "
                    "group formulas, never terms; write #(a) - #(b) > 0, not (#(a) - #(b)) > 0"
                )
            self.expect(")")
            return f
        if kind == "const":
            self.k += 1
            return TRUE if text == "true" else FALSE
        if kind == "sym":
            self.k += 1
            return Letter(text)
        if kind == "num" or (kind == "op" and text in "#+-"):
            return self.comparison()
        raise self.where("a formula")

    def comparison(self) -> Compare:
        left = self.term()
        kind, op, at = self.peek()
        if kind != "op" or op not in OPS:
            shown = "the end" if kind == "end" else repr(op)
            raise self.fail(
                f"has {shown} at offset {at} where a comparison (< <= > >= == !=) is expected: "
                "a term is a count, not a formula; compare it, e.g. #(a) > 0"
                + (
                    " (parentheses group formulas, never terms: write #(a) - #(b) > 0)"
                    if op == ")"
                    else ""
                )
            )
        self.k += 1
        right = self.term()
        if self.peek()[1] in OPS:
            raise self.fail(
                f"chains comparisons at offset {self.peek()[2]}; join two with &, e.g. "
                "0 < #(a) & #(a) < 3"
            )
        return Compare(op, left, right)

    def term(self) -> Term:
        parts: dict[Count, int] = {}
        const = 0
        sign = 1
        if self.peek()[:2] in (("op", "+"), ("op", "-")):
            sign = -1 if self.take()[1] == "-" else 1
        while True:
            k, count = self.product()
            if count is None:
                const += sign * k
            else:
                parts[count] = parts.get(count, 0) + sign * k
            if self.peek()[:2] not in (("op", "+"), ("op", "-")):
                break
            sign = -1 if self.take()[1] == "-" else 1
        return Term(tuple((c, k) for c, k in parts.items() if k), const)

    def product(self) -> tuple[int, Count | None]:
        kind, text, _at = self.peek()
        k = 1
        if kind == "num":
            self.k += 1
            k = int(text)
            if self.peek()[:2] == ("op", "*"):
                self.k += 1
            elif self.peek()[:2] != ("op", "#"):
                return k, None
        if self.peek()[:2] != ("op", "#"):
            raise self.where("a term")
        self.k += 1
        kind, text, _at = self.peek()
        if kind == "sym":
            self.k += 1
            return k, Count(Letter(text))
        if (kind, text) != ("op", "("):
            raise self.fail(
                f"has {'the end' if kind == 'end' else repr(text)} at offset {_at} after '#'; "
                "write #(formula) or #symbol, e.g. #(a) or #a"
            )
        self.k += 1
        f = self.formula()
        self.expect(")")
        return k, Count(f)


def parse_counting(text: str, alphabet: Sequence[str]) -> Formula:
    """A counting formula from its text (see the module docstring); :class:`CountingError` if
    it cannot be read."""
    alphabet = tuple(alphabet)
    if not alphabet or any(not isinstance(s, str) or not s for s in alphabet):
        raise CountingError(f"alphabet {alphabet!r} must be non-empty symbols (strings)")
    p = _Parser(text, alphabet)
    if p.peek()[0] == "end":
        raise CountingError(f"counting formula {text!r} is empty; write one, e.g. #(a) > #(b)")
    f = p.formula()
    kind, rest, at = p.peek()
    if kind != "end":
        raise p.fail(
            f"has {rest!r} at offset {at} after a whole formula; join formulas with & | ->"
        )
    return f


def _symbol(s: str) -> str:
    return (
        s if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) and s not in ("true", "false") else repr(s)
    )


def _show_term(t: Term) -> str:
    out = ""
    for c, k in t.parts:
        body = f"#({show(c.arg)})"
        mag = f"{abs(k)}*{body}" if abs(k) != 1 else body
        out += (" - " if k < 0 else " + ") + mag if out else ("-" if k < 0 else "") + mag
    if t.const or not out:
        out += (f" - {-t.const}" if t.const < 0 else f" + {t.const}") if out else str(t.const)
    return out


def show(formula: Formula) -> str:
    """The formula in the text syntax (:func:`parse_counting` reads it back to the same formula)."""
    if isinstance(formula, Letter):
        return _symbol(formula.symbol)
    if isinstance(formula, Const):
        return "true" if formula.value else "false"
    if isinstance(formula, Not):
        return f"!{_operand(formula.arg)}"
    if isinstance(formula, And):
        return f"{_operand(formula.left, And)} & {_operand(formula.right, And)}"
    if isinstance(formula, Or):
        return f"{_operand(formula.left, Or)} | {_operand(formula.right, Or)}"
    return f"{_show_term(formula.left)} {formula.op} {_show_term(formula.right)}"


def _operand(f: Formula, within: type | None = None) -> str:
    text = show(f)
    simple = isinstance(f, (Letter, Const, Not)) or (within is not None and type(f) is within)
    return text if simple else f"({text})"


# --------------------------------------------------------------------------- the counter automaton

_Linear = tuple[tuple[int, ...], int]  # coefficients over the counters, constant


def _term_at(t: Term, index: dict[Count, int], shift: Sequence[int]) -> _Linear:
    """A term at i over the counters at i − 1, the counts' increments at i being ``shift``
    (all zero: the term over the counters as they are)."""
    row = [0] * len(index)
    const = t.const
    for c, k in t.parts:
        row[index[c]] += k
        const += k * shift[index[c]]
    return tuple(row), const


def _cases(op: str, d: _Linear) -> list[tuple[bool, tuple[Atom, ...]]]:
    """The truth of ``d op 0`` (d = left − right, a linear form), as exclusive cases covering
    every counter value: (truth, atoms)."""
    row, c = d
    neg = tuple(-x for x in row)
    below = ((neg, c + 1),)  # d <= -1: -row·x >= c + 1
    above = ((row, 1 - c),)  # d >= 1
    zero = ((row, -c), (neg, c))
    at_most = ((neg, c),)  # d <= 0
    at_least = ((row, -c),)  # d >= 0
    if op == "<":
        return [(True, below), (False, at_least)]
    if op == ">=":
        return [(False, below), (True, at_least)]
    if op == ">":
        return [(True, above), (False, at_most)]
    if op == "<=":
        return [(False, above), (True, at_most)]
    if op == "==":
        return [(False, below), (True, zero), (False, above)]
    return [(True, below), (False, zero), (True, above)]


def _decided(atoms: tuple[Atom, ...]) -> bool | None:
    """An atom set without counters is true or false outright; else None."""
    if any(any(row) for row, _b in atoms):
        return None
    return all(0 >= b for _row, b in atoms)


class _Need(Exception):
    """A comparison whose truth is not decided yet, with the increments at i of the counts it
    reads (zero at acceptance, where the counters already include position i)."""

    def __init__(self, compare: Compare, shift: tuple[int, ...]) -> None:
        super().__init__()
        self.compare, self.shift = compare, shift


_Case = tuple[tuple[Atom, ...], dict[Formula | Count, int]]


def _branches(
    goals: Sequence[Formula | Count], symbol: str, index: dict[Count, int], *, at_i: bool
) -> Iterator[_Case]:
    """Every case of the symbol at i being ``symbol``: (guard, values), the guards exclusive and
    covering every counter value, ``values`` giving each goal (a formula: 0/1, a count: its
    increment at i) under its guard. ``at_i=False``: the counters hold the counts at i − 1 and
    a comparison reads them plus the increments at i (the rules); True: they hold the counts at
    i (acceptance). Only the comparisons a goal needs are split on, each after the counts it
    reads (inner counts first)."""

    def attempt(decided: dict[Compare, bool]) -> dict[Formula | Count, int]:
        incs: dict[Count, int] = {}

        def truth(f: Formula) -> bool:
            if isinstance(f, Letter):
                return f.symbol == symbol
            if isinstance(f, Const):
                return f.value
            if isinstance(f, Not):
                return not truth(f.arg)
            if isinstance(f, And):
                return truth(f.left) and truth(f.right)
            if isinstance(f, Or):
                return truth(f.left) or truth(f.right)
            if f in decided:
                return decided[f]
            shift = [0] * len(index)
            if not at_i:
                for c, _k in (*f.left.parts, *f.right.parts):
                    shift[index[c]] = inc(c)
            raise _Need(f, tuple(shift))

        def inc(c: Count) -> int:
            if c not in incs:
                incs[c] = int(truth(c.arg))
            return incs[c]

        return {g: inc(g) if isinstance(g, Count) else int(truth(g)) for g in goals}

    def walk(decided: dict[Compare, bool], guard: tuple[Atom, ...]) -> Iterator[_Case]:
        try:
            results = attempt(decided)
        except _Need as need:
            cmp = need.compare
            left = _term_at(cmp.left, index, need.shift)
            right = _term_at(cmp.right, index, need.shift)
            d = (tuple(x - y for x, y in zip(left[0], right[0], strict=True)), left[1] - right[1])
            for value, atoms in _cases(cmp.op, d):
                known = _decided(atoms)
                if known is not False:
                    yield from walk({**decided, cmp: value}, guard + (() if known else atoms))
            return
        yield guard, results

    yield from walk({}, ())


def _counter_names(cs: Sequence[Count]) -> tuple[str, ...]:
    """``n_a`` for #(a) with a plain symbol a, else ``n1``, ``n2``… in order."""
    names: list[str] = []
    for k, c in enumerate(cs, 1):
        plain = isinstance(c.arg, Letter) and re.fullmatch(r"[A-Za-z0-9_]+", c.arg.symbol)
        name = f"n_{c.arg.symbol}" if plain else f"n{k}"  # type: ignore[union-attr]
        names.append(name if name not in names else f"n{k}")
    return tuple(names)


def formula_counters(
    formula: Formula, alphabet: Sequence[str], empty: bool = False
) -> CounterAutomaton:
    """The formula's language as a counter automaton, read off the formula (not a program).

    Counters: one per distinct count term #(φ) of the formula (:func:`counts`), each the count
    at the last position read. Control: 0 before the first symbol, 1 + a after the symbol
    ``alphabet[a]`` (the letters at the last position). Rules: reading a, each counter adds
    [φ at i]; φ is a Boolean combination of letters (known: a) and comparisons of inner counts
    at i, each of which is a linear constraint on the counters at i − 1 once the inner counts'
    increments are known, so the rules split on those constraints (:func:`_branches`: inner
    counts first, only the comparisons needed). Acceptance: in state 1 + a, the formula at the
    last position is a Boolean combination of comparisons of the counters as they are: one
    accepting pair per case where it is true; state 0 accepts iff ``empty``.

    >>> f = parse_counting("#(a) > #(b)", ("a", "b"))
    >>> ca = formula_counters(f, ("a", "b"))
    >>> ca.counters, [ca.accepts(w) for w in ((), (0,), (0, 1), (0, 0, 1))]
    (('n_a', 'n_b'), [False, True, False, True])
    """
    alphabet = tuple(alphabet)
    cs = counts(formula)
    index = {c: k for k, c in enumerate(cs)}
    rules: list[CounterRule] = []
    for a, s in enumerate(alphabet):
        for guard, res in _branches(cs, s, index, at_i=False):
            add = tuple(res[c] for c in cs)
            for q in range(len(alphabet) + 1):
                rules.append(CounterRule(state=q, symbol=a, guard=guard, target=1 + a, add=add))
    accepting: list[tuple[int, tuple[Atom, ...]]] = [(0, ())] if empty else []
    for a, s in enumerate(alphabet):
        for guard, res in _branches((formula,), s, index, at_i=True):
            if res[formula]:
                accepting.append((1 + a, guard))
    return CounterAutomaton(
        states=len(alphabet) + 1,
        counters=_counter_names(cs),
        symbols=len(alphabet),
        start=0,
        rules=tuple(rules),
        accepting=tuple(accepting),
    )


def counting_language(
    formula: Formula, alphabet: Sequence[str], empty: bool = False, name: str = ""
) -> Language:
    """The formula's language: membership by :func:`holds`, and its counter automaton
    (:func:`formula_counters`) for proofs of every length."""
    alphabet = tuple(alphabet)
    text = show(formula)
    return Language(
        name=name or f"K_t[#]({text})",
        alphabet=alphabet,
        contains=lambda w: holds(formula, w, empty),
        description=(
            f"the words whose last position satisfies {text}"
            + ("; the empty word too" if empty else "")
        ),
        counters=formula_counters(formula, alphabet, empty),
    )
