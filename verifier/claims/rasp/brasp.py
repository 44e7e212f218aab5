"""B-RASP (Yang, Chiang & Angluin 2024): Boolean vector programs, their interpreter and printer.

A program is frozen data built with operators, as in the papers: ``token("a")`` is Q_a,
``~P``, ``P & Q``, ``P | Q`` are position-wise operations, and :func:`leftmost` /
:func:`rightmost` are attention operations ◁_j / ▷_j [M(i, j), S(i, j)] V(i, j) : D(i), whose score
and value read vectors at the query position (``P.at_i``) and at the key position (``P.at_j``).
A :class:`Program` names its output vector and accepts a non-empty word iff the output is 1
at the last position; the empty word's membership is declared (``empty``). The interpreter
(:func:`evaluate`, :func:`accepts`) is the semantics of ``docs/rasp-semantics.md`` written as
plainly as possible: it is the oracle the compiled networks are checked against.

"The word contains ab": some position holds b and the position just before it holds a,
i.e. the nearest position left of a b is an a.

>>> a, b = token("a"), token("b")
>>> prev_a = rightmost("past", score=TRUE, value=a.at_j, default=FALSE).named("prev_a")
>>> seen = rightmost("past", score=(b & prev_a).at_j, value=TRUE, default=FALSE).named("seen")
>>> prog = Program("contains_ab", ("a", "b"), output=seen | (b & prev_a))
>>> [accepts(prog, w) for w in ("ab", "ba", "aab", "bbab", "")]
[True, False, True, True, False]
>>> print(show(prog))
program contains_ab over {a, b}; accepts the empty word: no
prev_a(i) = ▷_j [j < i, 1] Q_a(j) : 0
seen(i) = ▷_j [j < i, Q_b(j) ∧ prev_a(j)] 1 : 0
output(i) = seen(i) ∨ (Q_b(i) ∧ prev_a(i))

May import: the standard library, :mod:`netproof.verifier.claims.languages` and :mod:`.common`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from ..languages import Language, Word
from .common import (
    Expr,
    check_alphabet,
    check_name,
    check_symbol,
    check_tokens,
    check_word,
    hash_once,
    program_language,
    show_program,
)

__all__ = [
    "FALSE",
    "MASKS",
    "TRUE",
    "And",
    "AtI",
    "AtJ",
    "Attend",
    "BVec",
    "Const",
    "Not",
    "Or",
    "Program",
    "Token",
    "accepts",
    "evaluate",
    "language",
    "leftmost",
    "operations",
    "rightmost",
    "show",
    "token",
]

MaskName: TypeAlias = Literal["past", "future", "all"]
MASKS: dict[str, str] = {"past": "j < i", "future": "j > i", "all": "none"}
"""The masks M(i, j) an attention operation may use, by name, with the papers' notation."""


class BVec(Expr):
    """A Boolean vector expression (or, with ``at_i``/``at_j`` leaves, a Boolean combination of
    vectors read at the query position i and the key position j)."""

    __slots__ = ()

    def __invert__(self) -> BVec:
        return Not(self)

    def __and__(self, other: BVec) -> BVec:
        return And(self, _check_operand(other, "&"))

    def __or__(self, other: BVec) -> BVec:
        return Or(self, _check_operand(other, "|"))

    def implies(self, other: BVec) -> BVec:
        """P → Q, i.e. ¬P ∨ Q."""
        return Or(Not(self), _check_operand(other, "implies"))

    def __bool__(self) -> bool:
        raise TypeError(
            f"{show_expr(self)} is a B-RASP vector, not a Python bool; combine vectors with ~, & and | "
            "(not `not`, `and`, `or`)"
        )

    @property
    def at_i(self) -> AtI:
        """This vector read at the query position i (in an attention score, value or default)."""
        return AtI(self)

    @property
    def at_j(self) -> AtJ:
        """This vector read at the key position j (in an attention score or value)."""
        return AtJ(self)

    def named(self, name: str) -> BVec:
        """The same operation with a name (its residual dim and printed line in the compiled
        network). Only tokens cannot be renamed."""
        check_name(name, "prev_a")
        if isinstance(self, (Token, Const, AtI, AtJ)):
            raise TypeError(
                f"{show_expr(self)} cannot be named; name an operation (~, &, |, leftmost, rightmost)"
            )
        return replace(self, name=name)  # type: ignore[type-var]


def _check_operand(x: object, op: str) -> BVec:
    if isinstance(x, bool):
        return TRUE if x else FALSE
    if not isinstance(x, BVec):
        raise TypeError(
            f"B-RASP {op} got {x!r} ({type(x).__name__}); give a vector such as token('a'), TRUE or FALSE"
        )
    return x


@dataclass(frozen=True, slots=True)
class Token(BVec):
    """Q_a: 1 at the positions holding ``symbol``."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Const(BVec):
    """The constant vector 0 or 1."""

    value: bool


@dataclass(frozen=True, slots=True)
class Not(BVec):
    arg: BVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class And(BVec):
    left: BVec
    right: BVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Or(BVec):
    left: BVec
    right: BVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class AtI(BVec):
    """A vector read at the query position i (inside an attention operation)."""

    vec: BVec


@dataclass(frozen=True, slots=True)
class AtJ(BVec):
    """A vector read at the key position j (inside an attention score or value)."""

    vec: BVec


@dataclass(frozen=True, slots=True)
class Attend(BVec):
    """P(i) = ◁_j [M(i, j), S(i, j)] V(i, j) : D(i) (``side="leftmost"``) or ▷_j (``"rightmost"``)."""

    side: Literal["leftmost", "rightmost"]
    mask: MaskName
    score: BVec
    value: BVec
    default: BVec
    name: str | None = None


TRUE = Const(True)
FALSE = Const(False)

for _cls in (Token, Const, Not, And, Or, AtI, AtJ, Attend):
    hash_once(_cls)


def token(symbol: str) -> Token:
    """Q_symbol."""
    return Token(check_symbol(symbol))


def _attend(
    side: Literal["leftmost", "rightmost"], mask: str, score: object, value: object, default: object
) -> Attend:
    if mask not in MASKS:
        raise ValueError(
            f"mask={mask!r} is not a B-RASP mask; use 'past' (j < i), 'future' (j > i) or 'all'"
        )
    parts = {"score": _check_operand(score, "score"), "value": _check_operand(value, "value")}
    dflt = _check_operand(default, "default")
    for role, expr in parts.items():
        for leaf in _leaves(expr):
            if not isinstance(leaf, (AtI, AtJ, Const)):
                raise TypeError(
                    f"{side} {role}: {show_expr(leaf)} is not read at a position; write "
                    f"{show_expr(leaf)}.at_i (query position) or .at_j (key position)"
                )
            if isinstance(leaf, (AtI, AtJ)):
                _check_pointwise(leaf.vec, f"{side} {role}")
    _check_pointwise(dflt, f"{side} default")
    return Attend(side, mask, parts["score"], parts["value"], dflt)  # type: ignore[arg-type]


def leftmost(mask: str, *, score: object, value: object, default: object = FALSE) -> Attend:
    """◁_j [M(i, j), S(i, j)] V(i, j) : D(i): V at the leftmost j with M and S, else D.
    ``mask`` is ``"past"`` (j < i), ``"future"`` (j > i) or ``"all"``."""
    return _attend("leftmost", mask, score, value, default)


def rightmost(mask: str, *, score: object, value: object, default: object = FALSE) -> Attend:
    """▷_j [M(i, j), S(i, j)] V(i, j) : D(i): V at the rightmost j with M and S, else D."""
    return _attend("rightmost", mask, score, value, default)


def _leaves(expr: BVec) -> Iterator[BVec]:
    if isinstance(expr, Not):
        yield from _leaves(expr.arg)
    elif isinstance(expr, (And, Or)):
        yield from _leaves(expr.left)
        yield from _leaves(expr.right)
    else:
        yield expr


def _check_pointwise(expr: BVec, where: str) -> None:
    for leaf in _leaves(expr):
        if isinstance(leaf, (AtI, AtJ)):
            raise TypeError(
                f"{where}: {show_expr(leaf)} reads a position, which only an attention score or value "
                "may do; use the vector itself here"
            )


@dataclass(frozen=True, slots=True)
class Program:
    """A B-RASP program: accepts a non-empty word iff ``output`` is 1 at its last position;
    the empty word iff ``empty``."""

    name: str
    alphabet: tuple[str, ...]
    output: BVec
    empty: bool = False

    def __post_init__(self) -> None:
        check_alphabet(self.name, self.alphabet)
        if not isinstance(self.output, BVec):
            raise TypeError(
                f"program {self.name!r}: output={self.output!r} must be a B-RASP vector"
            )
        _check_pointwise(self.output, f"program {self.name!r} output")
        check_tokens(
            self.name,
            self.alphabet,
            (op.symbol for op in operations(self.output) if isinstance(op, Token)),
        )


# --------------------------------------------------------------------------- the interpreter


def evaluate(expr: BVec, word: Sequence[str]) -> tuple[bool, ...]:
    """The vector ``expr`` on ``word``: one bool per position 1..n (index 0 is position 1)."""
    memo: dict[BVec, tuple[bool, ...]] = {}
    return _vector(expr, tuple(word), memo)


def _vector(expr: BVec, w: Word, memo: dict[BVec, tuple[bool, ...]]) -> tuple[bool, ...]:
    if expr in memo:
        return memo[expr]
    n = len(w)
    if isinstance(expr, Token):
        out = tuple(w[i] == expr.symbol for i in range(n))
    elif isinstance(expr, Const):
        out = tuple(expr.value for _ in range(n))
    elif isinstance(expr, Not):
        out = tuple(not x for x in _vector(expr.arg, w, memo))
    elif isinstance(expr, And):
        out = tuple(
            x and y
            for x, y in zip(_vector(expr.left, w, memo), _vector(expr.right, w, memo), strict=True)
        )
    elif isinstance(expr, Or):
        out = tuple(
            x or y
            for x, y in zip(_vector(expr.left, w, memo), _vector(expr.right, w, memo), strict=True)
        )
    elif isinstance(expr, Attend):
        default = _vector(expr.default, w, memo)
        values = []
        for i in range(n):
            allowed = [j for j in range(n) if _allowed(expr.mask, i, j)]
            chosen = [j for j in allowed if _pair(expr.score, w, memo, i, j)]
            if not chosen:
                values.append(default[i])
            else:
                j_star = min(chosen) if expr.side == "leftmost" else max(chosen)
                values.append(_pair(expr.value, w, memo, i, j_star))
        out = tuple(values)
    else:
        raise TypeError(f"{show_expr(expr)} is read at a position outside an attention operation")
    memo[expr] = out
    return out


def _allowed(mask: str, i: int, j: int) -> bool:
    if mask == "past":
        return j < i
    if mask == "future":
        return j > i
    return True


def _pair(expr: BVec, w: Word, memo: dict[BVec, tuple[bool, ...]], i: int, j: int) -> bool:
    """S(i, j) or V(i, j)."""
    if isinstance(expr, AtI):
        return _vector(expr.vec, w, memo)[i]
    if isinstance(expr, AtJ):
        return _vector(expr.vec, w, memo)[j]
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Not):
        return not _pair(expr.arg, w, memo, i, j)
    if isinstance(expr, And):
        return _pair(expr.left, w, memo, i, j) and _pair(expr.right, w, memo, i, j)
    if isinstance(expr, Or):
        return _pair(expr.left, w, memo, i, j) or _pair(expr.right, w, memo, i, j)
    raise ValueError(
        f"{show_expr(expr)} must be read at i or j (.at_i / .at_j) inside an attention operation"
    )


def accepts(program: Program, word: Sequence[str]) -> bool:
    """Whether ``program`` accepts ``word``: the output at the last position (``empty`` for ``()``)."""
    w = check_word(program.name, program.alphabet, word)
    if not w:
        return program.empty
    return evaluate(program.output, w)[-1]


def language(program: Program, *, description: str = "") -> Language:
    """The language the program recognizes, membership by the interpreter."""
    return program_language(program, accepts, "B-RASP", description)


# --------------------------------------------------------------------------- structure and printing


def operations(expr: BVec) -> tuple[BVec, ...]:
    """Every sub-expression of ``expr`` (vectors read inside attention included), each once,
    operands before the operations that use them."""
    seen: dict[BVec, None] = {}
    # an explicit stack (a program of thousands of operations is deeper than Python's recursion)
    stack: list[tuple[BVec, bool]] = [(expr, False)]
    while stack:
        e, expanded = stack.pop()
        if e in seen:
            continue
        if expanded:
            seen[e] = None
            continue
        stack.append((e, True))
        for child in reversed(_operands(e)):
            if child not in seen:
                stack.append((child, False))
    return tuple(seen)


def _operands(e: BVec) -> tuple[BVec, ...]:
    """The vectors ``e`` reads, in the order :func:`operations` lists them."""
    if isinstance(e, Not):
        return (e.arg,)
    if isinstance(e, (And, Or)):
        return (e.left, e.right)
    if isinstance(e, (AtI, AtJ)):
        return (e.vec,)
    if isinstance(e, Attend):
        return (e.score, e.value, e.default)
    return ()


def names(program: Program) -> dict[BVec, str]:
    """The printed name of every attention operation and named operation: its own name or
    ``P1``, ``P2``... in order of definition."""
    out: dict[BVec, str] = {}
    k = 0
    for op in operations(program.output):
        name: str | None = getattr(op, "name", None)
        if name:
            out[op] = name
        elif isinstance(op, Attend):
            k += 1
            out[op] = f"P{k}"
    return out


def show_expr(expr: BVec, named: dict[BVec, str] | None = None, at: str = "i") -> str:
    """``expr`` in the papers' notation, read at position ``at``."""
    named = named or {}
    if expr in named:
        return f"{named[expr]}({at})"
    if isinstance(expr, Token):
        return f"Q_{expr.symbol}({at})"
    if isinstance(expr, Const):
        return "1" if expr.value else "0"
    if isinstance(expr, AtI):
        return show_expr(expr.vec, named, "i")
    if isinstance(expr, AtJ):
        return show_expr(expr.vec, named, "j")
    if isinstance(expr, Not):
        return f"¬{_paren(expr.arg, named, at)}"
    if isinstance(expr, (And, Or)):
        op = "∧" if isinstance(expr, And) else "∨"
        return f"{_paren(expr.left, named, at)} {op} {_paren(expr.right, named, at)}"
    if isinstance(expr, Attend):
        arrow = "◁" if expr.side == "leftmost" else "▷"
        return (
            f"{arrow}_j [{MASKS[expr.mask]}, {show_expr(expr.score, named, at)}] "
            f"{show_expr(expr.value, named, at)} : {show_expr(expr.default, named, at)}"
        ).replace("[none, ", "[")
    return repr(expr)


def _paren(expr: BVec, named: dict[BVec, str], at: str) -> str:
    text = show_expr(expr, named, at)
    inner = expr.vec if isinstance(expr, (AtI, AtJ)) else expr
    return f"({text})" if isinstance(inner, (And, Or)) and inner not in named else text


def show(program: Program) -> str:
    """The program in the papers' notation, one line per named or attention operation."""
    return show_program(program, names(program), show_expr)
