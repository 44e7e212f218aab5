"""What B-RASP and C-RASP share: the expression base class with its kept structural hash, the
checks of a program's alphabet, tokens, words and names, its language, and its printed form.

May import: the standard library and :mod:`netproof.verifier.claims.languages`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from ..languages import Language, Word

__all__ = [
    "Expr",
    "check_alphabet",
    "check_name",
    "check_symbol",
    "check_tokens",
    "check_word",
    "hash_once",
    "program_file",
    "program_language",
    "show_program",
]


class Expr:
    """A vector expression of either language (its vector classes derive from it): the slot
    ``_hash`` keeps its structural hash (:func:`hash_once`)."""

    __slots__ = ("_hash",)


def hash_once(cls: type) -> type:
    """Make the dataclass ``cls`` compute its (structural) hash once, when an object is made, and
    keep it in the base class's ``_hash`` slot: a program is a DAG whose vectors are read many
    times, and the generated hash recurses into every operand, which re-walks shared operands on
    every call (exponential in the depth of a chain, and past Python's recursion limit for long
    ones). Operands are made first, so each object's hash reads its operands' kept ones."""
    klass: Any = cls  # any dataclass: its own methods, called on its instances
    structural: Callable[[Any], int] = klass.__hash__
    init: Callable[..., None] = klass.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        object.__setattr__(self, "_hash", structural(self))

    def __hash__(self: Any) -> int:
        try:
            kept: int = self._hash
            return kept
        except AttributeError:
            h = structural(self)
            object.__setattr__(self, "_hash", h)
            return h

    names = tuple(f.name for f in fields(cls))

    def __eq__(self: object, other: object) -> bool:
        # Structural equality of two DAGs, pair by pair, each pair once and without recursion
        # (the generated one re-walks shared operands: exponential in a chain's depth).
        if type(other) is not type(self):
            return NotImplemented
        todo, seen = [(self, other)], set()
        while todo:
            x, y = todo.pop()
            if x is y or (id(x), id(y)) in seen:
                continue
            if type(x) is not type(y) or hash(x) != hash(y):
                return False
            seen.add((id(x), id(y)))
            for name in names if type(x) is cls else tuple(f.name for f in fields(x)):  # type: ignore[arg-type]
                u, v = getattr(x, name), getattr(y, name)
                if isinstance(u, Expr) and isinstance(v, Expr):
                    todo.append((u, v))
                elif u != v:
                    return False
        return True

    cls.__init__ = __init__  # type: ignore[misc]
    cls.__hash__ = __hash__  # type: ignore[method-assign,assignment]
    cls.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    return cls


def check_name(name: object, example: str) -> str:
    """An operation's name: a non-empty string without spaces."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(
            f"name {name!r} must be a non-empty string without spaces, e.g. {example!r}"
        )
    return name


def check_symbol(symbol: object) -> str:
    """The symbol of ``token(symbol)``: a non-empty string."""
    if not isinstance(symbol, str) or not symbol:
        raise ValueError(f"token({symbol!r}): a symbol is a non-empty string, e.g. token('a')")
    return symbol


def check_alphabet(program: str, alphabet: object) -> None:
    """A program's alphabet: a non-empty tuple of distinct symbols."""
    if not isinstance(alphabet, tuple) or not alphabet or len(set(alphabet)) != len(alphabet):
        raise ValueError(
            f"program {program!r}: alphabet={alphabet!r} must be a tuple of distinct symbols, e.g. ('a', 'b')"
        )


def check_tokens(program: str, alphabet: tuple[str, ...], symbols: Iterable[str]) -> None:
    """Every token a program reads is a symbol of its alphabet."""
    for symbol in symbols:
        if symbol not in alphabet:
            raise ValueError(
                f"program {program!r} reads token({symbol!r}), which is not in its alphabet "
                f"{alphabet}; add the symbol to the alphabet or remove the token"
            )


def check_word(program: str, alphabet: tuple[str, ...], word: Sequence[str]) -> Word:
    """``word`` as a tuple, every symbol in the program's alphabet."""
    w = tuple(word)
    for s in w:
        if s not in alphabet:
            raise ValueError(
                f"symbol {s!r} of {w} is not in program {program!r}'s alphabet {alphabet}"
            )
    return w


def program_language(
    program: Any, accepts: Callable[[Any, Word], bool], kind: str, description: str = ""
) -> Language:
    """The language ``program`` recognizes, membership by the interpreter ``accepts``."""
    return Language(
        name=program.name,
        alphabet=program.alphabet,
        contains=lambda w: accepts(program, w),
        description=description or f"the words {kind} program {program.name} accepts",
    )


def show_program(
    program: Any, named: Mapping[Any, str], show_expr: Callable[[Any, dict[Any, str]], str]
) -> str:
    """A program in the papers' notation: a header line, one line per named operation, then the
    output (``show_expr(expr, named)`` prints an expression, reading named operations by name)."""
    lines = [
        (
            f"program {program.name} over {{{', '.join(program.alphabet)}}}; "
            f"accepts the empty word: {'yes' if program.empty else 'no'}"
        )
    ]
    for op, name in named.items():
        body = {k: v for k, v in named.items() if k != op}
        lines.append(f"{name}(i) = {show_expr(op, body)}")
    out = (
        f"{named[program.output]}(i)"
        if program.output in named
        else show_expr(program.output, dict(named))
    )
    lines.append(f"output(i) = {out}")
    return "\n".join(lines)


def program_file(program: Any, kind: str, dims: Mapping[Any, str] | None = None) -> str:
    """The program file of a B-RASP or C-RASP ``program`` (``kind``), which the independent kernel
    reads (``docs/kernel.md``, its own interpreter in ``kernel/programs.py``): a JSON document with
    ``format: netproof-rasp-program``, ``format_version: 1``, ``language`` (``kind``), ``name``,
    ``alphabet``, ``empty``, ``vectors`` (every operation once, operands first, each a list
    ``[op, field, ...]``: the class name in lower case, then its fields in order, an operand
    written as the index of its entry, ``name`` left out), ``output`` (the output's index) and
    ``dims`` (``[index, residual dim]`` of the operations in ``dims``: where the compiled network
    holds them)."""
    index: dict[Any, int] = {}
    entries: list[list[Any]] = []

    def visit(e: Any) -> int:
        if e in index:
            return index[e]
        row: list[Any] = [type(e).__name__.lower()]
        for f in fields(e):
            if f.name != "name":
                v = getattr(e, f.name)
                row.append(visit(v) if isinstance(v, Expr) else v)
        index[e] = len(entries)
        entries.append(row)
        return index[e]

    out = visit(program.output)
    head = {
        "format": "netproof-rasp-program",
        "format_version": 1,
        "language": kind,
        "name": program.name,
        "alphabet": list(program.alphabet),
        "empty": program.empty,
    }
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    rows = ",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in entries)
    held = json.dumps(sorted([index[e], d] for e, d in (dims or {}).items() if e in index))
    return (
        "{\n" + "\n".join(lines) + f'\n  "vectors": [\n{rows}\n  ],\n  "output": {out},\n'
        f'  "dims": {held}\n}}\n'
    )
