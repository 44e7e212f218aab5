"""C-RASP (Yang & Chiang 2024): Boolean and count vector programs, their interpreter and printer.

Boolean vectors: ``token("a")`` is Q_a, ``~P``, ``P & Q``, ``P | Q``; comparisons of counts
``C1 < C2``, ``C1 <= C2``, ``C1 > C2``, ``C1 >= C2``, ``C1.eq(C2)``, ``C1.ne(C2)`` (an int
is the constant count). Count vectors: ``count(P)`` is #_{j ≤ i} P(j), ``C1 + C2``, ``C1 - C2``,
``k * C``, ``-C``, an int constant, and ``where(P, C1, C2)`` (P(i) ? C1(i) : C2(i)). A
:class:`Program` accepts a non-empty word iff its Boolean output is 1 at the last position; the
empty word iff ``empty``. The interpreter (:func:`evaluate`, :func:`accepts`) is the semantics
of ``docs/rasp-semantics.md`` written plainly: the oracle the compiled networks are checked against.

MAJORITY, more a's than b's:

>>> a, b = token("a"), token("b")
>>> prog = Program("majority", ("a", "b"), output=count(a) > count(b))
>>> [accepts(prog, w) for w in ("a", "ab", "aab", "bba")]
[True, False, True, False]
>>> evaluate(count(a) - 2 * count(b), "aab")
(1, 2, 0)
>>> print(show(prog))
program majority over {a, b}; accepts the empty word: no
output(i) = #_{j≤i} Q_b(j) < #_{j≤i} Q_a(j)

PARITY is not expressible in C-RASP (Chiang & Cholak need extra machinery for it).

May import: the standard library, :mod:`netproof.verifier.claims.languages` and :mod:`.common`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

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
    "TRUE",
    "Add",
    "And",
    "BVec",
    "CVec",
    "Const",
    "Count",
    "Less",
    "Not",
    "Number",
    "Or",
    "Program",
    "Scale",
    "Token",
    "Truth",
    "Where",
    "accepts",
    "count",
    "evaluate",
    "language",
    "operations",
    "show",
    "token",
    "where",
]


def _text(x: object) -> str:
    """A value in a message: a C-RASP vector in the papers' notation, anything else as repr."""
    return show_expr(x) if isinstance(x, (BVec, CVec)) else repr(x)


def _as_count(x: object, op: str) -> CVec:
    if isinstance(x, bool) or not isinstance(x, (int, CVec)):
        raise TypeError(
            f"C-RASP {op} got {_text(x)} ({type(x).__name__}); give a count vector such as "
            "count(token('a')) or an int constant"
        )
    return Number(x) if isinstance(x, int) else x


def _as_bool(x: object, op: str) -> BVec:
    if isinstance(x, bool):
        return TRUE if x else FALSE
    if not isinstance(x, BVec):
        raise TypeError(
            f"C-RASP {op} got {_text(x)} ({type(x).__name__}); give a Boolean vector such as "
            "token('a')"
            + (", or compare the count, e.g. count(token('a')) > 0" if isinstance(x, CVec) else "")
        )
    return x


class BVec(Expr):
    """A Boolean vector."""

    __slots__ = ()

    def __invert__(self) -> BVec:
        return Not(self)

    def __and__(self, other: object) -> BVec:
        return And(self, _as_bool(other, "&"))

    def __or__(self, other: object) -> BVec:
        return Or(self, _as_bool(other, "|"))

    def implies(self, other: object) -> BVec:
        """P → Q, i.e. ¬P ∨ Q."""
        return Or(Not(self), _as_bool(other, "implies"))

    def __bool__(self) -> bool:
        raise TypeError(
            f"{show_expr(self)} is a C-RASP vector, not a Python bool; combine vectors with ~, & and | "
            "(not `not`, `and`, `or`), and compare counts with <, <=, >, >=, .eq, .ne (not chains a < b < c)"
        )

    def named(self, name: str) -> BVec:
        """The same operation, with a name (its residual dim and printed line)."""
        return _named(self, name)


class CVec(Expr):
    """A count vector (an integer per position)."""

    __slots__ = ()

    def __add__(self, other: object) -> CVec:
        return Add(self, _as_count(other, "+"))

    def __radd__(self, other: object) -> CVec:
        return Add(_as_count(other, "+"), self)

    def __sub__(self, other: object) -> CVec:
        return Add(self, Scale(-1, _as_count(other, "-")))

    def __rsub__(self, other: object) -> CVec:
        return Add(_as_count(other, "-"), Scale(-1, self))

    def __neg__(self) -> CVec:
        return Scale(-1, self)

    def __mul__(self, k: object) -> CVec:
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(
                f"C-RASP multiplies a count by an int constant only, got {k!r} ({type(k).__name__})"
            )
        return Scale(k, self)

    __rmul__ = __mul__

    def __lt__(self, other: object) -> BVec:
        return Less(self, _as_count(other, "<"))

    def __gt__(self, other: object) -> BVec:
        return Less(_as_count(other, ">"), self)

    def __le__(self, other: object) -> BVec:
        return Not(Less(_as_count(other, "<="), self))

    def __ge__(self, other: object) -> BVec:
        return Not(Less(self, _as_count(other, ">=")))

    def eq(self, other: object) -> BVec:
        """C1 = C2, i.e. ¬(C1 < C2) ∧ ¬(C2 < C1)."""
        c = _as_count(other, "eq")
        return And(Not(Less(self, c)), Not(Less(c, self)))

    def ne(self, other: object) -> BVec:
        """C1 ≠ C2."""
        c = _as_count(other, "ne")
        return Or(Less(self, c), Less(c, self))

    def __mod__(self, other: object) -> CVec:
        raise TypeError(_NO_MODULO.format(f"{show_expr(self)} % {_text(other)}"))

    def __rmod__(self, other: object) -> CVec:
        raise TypeError(_NO_MODULO.format(f"{_text(other)} % {show_expr(self)}"))

    def __floordiv__(self, other: object) -> CVec:
        raise TypeError(_NO_DIVISION.format(f"{show_expr(self)} // {_text(other)}"))

    def __truediv__(self, other: object) -> CVec:
        raise TypeError(_NO_DIVISION.format(f"{show_expr(self)} / {_text(other)}"))

    def named(self, name: str) -> CVec:
        """The same operation, with a name (its residual dim and printed line)."""
        return _named(self, name)


_NO_MODULO = (
    "{}: C-RASP has no modular counting: counts are only added, subtracted, scaled by int "
    "constants, compared and chosen with where, so a count mod m (PARITY: #1 mod 2) is not "
    "expressible in C-RASP (Yang & Chiang 2024; the `parity` construction, Chiang & Cholak 2022, "
    "needs the positional feature cos(iπ))"
)
_NO_DIVISION = (
    "{}: C-RASP counts are integers, added, subtracted and scaled by int constants only; "
    "compare scaled counts instead (2 * count(token('a')) < count(token('b')))"
)


def _no_equality(cls: type) -> None:
    """``==`` of a count with anything but a C-RASP vector raises: Python would answer a bool
    (``count(x) == 0`` is False) where the program means the vector ``count(x).eq(0)``. Between
    two vectors ``==`` stays the expressions' structural equality (programs are DAGs whose
    operations are dict keys)."""
    klass: Any = cls  # the dataclass's own __eq__, called on its instances
    structural: Callable[[Any, object], Any] = klass.__eq__

    def __eq__(self: CVec, other: object) -> Any:  # bool, or NotImplemented from another class
        if not isinstance(other, (BVec, CVec)):
            raise TypeError(
                f"{show_expr(self)} == {_text(other)}: == on a C-RASP count is not a comparison; "
                f"use .eq(...) (and .ne(...) for !=), e.g. count(token('a')).eq({_text(other)})"
            )
        return structural(self, other)

    cls.__eq__ = __eq__  # type: ignore[assignment,method-assign]


_V = TypeVar("_V", BVec, CVec)


def _named(x: _V, name: str) -> _V:
    check_name(name, "balance")
    if isinstance(x, (Token, Truth, Number)):
        raise TypeError(
            f"{show_expr(x)} cannot be named; name an operation (count, <, where, &, ...)"
        )
    return replace(x, name=name)  # type: ignore[type-var]  # each BVec, CVec subclass is a dataclass


@dataclass(frozen=True, slots=True)
class Token(BVec):
    """Q_a."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Truth(BVec):
    """The constant Boolean vector 0 or 1."""

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
class Less(BVec):
    """P(i) = C1(i) < C2(i)."""

    left: CVec
    right: CVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Count(CVec):
    """C(i) = #_{j ≤ i} P(j)."""

    arg: BVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Number(CVec):
    """The constant count c."""

    value: int


@dataclass(frozen=True, slots=True)
class Add(CVec):
    left: CVec
    right: CVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Scale(CVec):
    """k·C for an int constant k."""

    k: int
    arg: CVec
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Where(CVec):
    """C(i) = P(i) ? C1(i) : C2(i)."""

    cond: BVec
    then: CVec
    otherwise: CVec
    name: str | None = None


Const = Number
TRUE = Truth(True)
FALSE = Truth(False)

for _cls in (Token, Truth, Not, And, Or, Less, Count, Number, Add, Scale, Where):
    hash_once(_cls)
for _cls in (Count, Number, Add, Scale, Where):
    _no_equality(_cls)


def token(symbol: str) -> Token:
    """Q_symbol."""
    return Token(check_symbol(symbol))


def count(p: object) -> Count:
    """#_{j ≤ i} P(j): how many positions up to i hold P."""
    return Count(_as_bool(p, "count"))


def where(p: object, then: object, otherwise: object) -> Where:
    """P(i) ? C1(i) : C2(i)."""
    return Where(_as_bool(p, "where"), _as_count(then, "where"), _as_count(otherwise, "where"))


@dataclass(frozen=True, slots=True)
class Program:
    """A C-RASP program: accepts a non-empty word iff the Boolean ``output`` is 1 at the last
    position; the empty word iff ``empty``."""

    name: str
    alphabet: tuple[str, ...]
    output: BVec
    empty: bool = False

    def __post_init__(self) -> None:
        check_alphabet(self.name, self.alphabet)
        if isinstance(self.output, CVec):
            raise TypeError(
                f"program {self.name!r}: output={show_expr(self.output)} is a count; the output must be "
                "a Boolean vector: compare it, e.g. count(token('a')) > 0"
            )
        if not isinstance(self.output, BVec):
            raise TypeError(
                f"program {self.name!r}: output={self.output!r} ({type(self.output).__name__}) must be "
                "a Boolean vector, e.g. count(token('a')) > 0"
            )
        check_tokens(
            self.name,
            self.alphabet,
            (op.symbol for op in operations(self.output) if isinstance(op, Token)),
        )


# --------------------------------------------------------------------------- the interpreter

Vec = BVec | CVec


def evaluate(expr: Vec, word: Sequence[str]) -> tuple[bool, ...] | tuple[int, ...]:
    """The vector ``expr`` on ``word``: one value per position 1..n (index 0 is position 1)."""
    memo: dict[Vec, tuple[Any, ...]] = {}
    return _vector(expr, tuple(word), memo)


def _vector(expr: Vec, w: Word, memo: dict[Vec, tuple[Any, ...]]) -> tuple[Any, ...]:
    if expr in memo:
        return memo[expr]
    n = len(w)
    positions = range(n)
    if isinstance(expr, Token):
        out: tuple[Any, ...] = tuple(w[i] == expr.symbol for i in positions)
    elif isinstance(expr, Truth):
        out = tuple(expr.value for _ in positions)
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
    elif isinstance(expr, Less):
        out = tuple(
            x < y
            for x, y in zip(_vector(expr.left, w, memo), _vector(expr.right, w, memo), strict=True)
        )
    elif isinstance(expr, Count):
        p = _vector(expr.arg, w, memo)
        out = tuple(sum(1 for j in range(i + 1) if p[j]) for i in positions)
    elif isinstance(expr, Number):
        out = tuple(expr.value for _ in positions)
    elif isinstance(expr, Add):
        out = tuple(
            x + y
            for x, y in zip(_vector(expr.left, w, memo), _vector(expr.right, w, memo), strict=True)
        )
    elif isinstance(expr, Scale):
        out = tuple(expr.k * x for x in _vector(expr.arg, w, memo))
    elif isinstance(expr, Where):
        c, t, e = (_vector(x, w, memo) for x in (expr.cond, expr.then, expr.otherwise))
        out = tuple(t[i] if c[i] else e[i] for i in positions)
    else:
        raise TypeError(f"{expr!r} is not a C-RASP vector")
    memo[expr] = out
    return out


def accepts(program: Program, word: Sequence[str]) -> bool:
    """Whether ``program`` accepts ``word``: the output at the last position (``empty`` for ``()``)."""
    w = check_word(program.name, program.alphabet, word)
    if not w:
        return program.empty
    return bool(evaluate(program.output, w)[-1])


def language(program: Program, *, description: str = "") -> Language:
    """The language the program recognizes, membership by the interpreter."""
    return program_language(program, accepts, "C-RASP", description)


# --------------------------------------------------------------------------- structure and printing


def _children(e: Vec) -> Iterator[Vec]:
    if isinstance(e, (Not, Count)):
        yield e.arg
    elif isinstance(e, (And, Or, Less, Add)):
        yield e.left
        yield e.right
    elif isinstance(e, Scale):
        yield e.arg
    elif isinstance(e, Where):
        yield e.cond
        yield e.then
        yield e.otherwise


def operations(expr: Vec) -> tuple[Vec, ...]:
    """Every sub-expression of ``expr``, each once, operands before their operations."""
    seen: dict[Vec, None] = {}

    def visit(e: Vec) -> None:
        if e in seen:
            return
        for c in _children(e):
            visit(c)
        seen[e] = None

    visit(expr)
    return tuple(seen)


def names(program: Program) -> dict[Vec, str]:
    """The printed name of every named operation (its own name)."""
    return {op: op.name for op in operations(program.output) if getattr(op, "name", None)}  # type: ignore[union-attr]


def show_expr(expr: Vec, named: dict[Vec, str] | None = None) -> str:
    """``expr`` in the papers' notation at position i."""
    named = named or {}
    if expr in named:
        return f"{named[expr]}(i)"
    if isinstance(expr, Token):
        return f"Q_{expr.symbol}(i)"
    if isinstance(expr, Truth):
        return "1" if expr.value else "0"
    if isinstance(expr, Number):
        return str(expr.value)
    if isinstance(expr, Not):
        return f"¬{_paren(expr.arg, named)}"
    if isinstance(expr, (And, Or)):
        return f"{_paren(expr.left, named)} {'∧' if isinstance(expr, And) else '∨'} {_paren(expr.right, named)}"
    if isinstance(expr, Less):
        return f"{show_expr(expr.left, named)} < {show_expr(expr.right, named)}"
    if isinstance(expr, Count):
        return f"#_{{j≤i}} {show_expr(expr.arg, named).replace('(i)', '(j)')}"
    if isinstance(expr, Add):
        k, inner = _scaled(expr.right, named)
        if k < 0:
            neg = _paren(inner, named) if k == -1 else f"{-k}·{_paren(inner, named)}"
            return f"{show_expr(expr.left, named)} − {neg}"
        return f"{show_expr(expr.left, named)} + {_paren(expr.right, named)}"
    if isinstance(expr, Scale):
        k, inner = _scaled(expr, named)
        return f"−{_paren(inner, named)}" if k == -1 else f"{k}·{_paren(inner, named)}"
    if isinstance(expr, Where):
        return f"{show_expr(expr.cond, named)} ? {_paren(expr.then, named)} : {_paren(expr.otherwise, named)}"
    return repr(expr)


def _scaled(expr: Vec, named: dict[Vec, str]) -> tuple[int, Vec]:
    """``expr`` as k·inner with nested constant multiples folded (for printing)."""
    k = 1
    while isinstance(expr, Scale) and expr not in named:
        k *= expr.k
        expr = expr.arg
    return k, expr


def _paren(expr: Vec, named: dict[Vec, str]) -> str:
    text = show_expr(expr, named)
    compound = (And, Or, Less, Add, Where, Count, Scale)
    return f"({text})" if isinstance(expr, compound) and expr not in named else text


def show(program: Program) -> str:
    """The program in the papers' notation, one line per named operation, then the output."""
    return show_program(program, names(program), show_expr)
