"""The kernel's own definitions of the languages a recognition claim names, each a few lines of
plain Python, matched to a claim by its exact statement (a statement the kernel does not know is
refused, never guessed)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import programs
from .netfile import KernelError, Refused, loads_json

Language = Callable[[tuple[str, ...]], bool]


def brackets(k: int) -> tuple[tuple[str, str], ...]:
    """The (open, close) symbols of k bracket types: ``()[]{}<>`` for k <= 4, else ``(1 )1 ...``."""
    if k <= 4:
        return tuple(zip("([{<"[:k], ")]}>", strict=False))
    return tuple((f"({t}", f"){t}") for t in range(1, k + 1))


def still_open(w: tuple[str, ...], k: int, depth: int | None = None) -> list[str] | None:
    """The closers of the brackets still open after w (the innermost last), or None when w is
    no prefix of a word over the first k bracket pairs nested at most ``depth`` deep (None: any)."""
    opens, stack = dict(brackets(k)), list[str]()
    for s in w:
        if s in opens and (depth is None or len(stack) < depth):
            stack.append(opens[s])
        elif s in opens or not stack or stack.pop() != s:
            return None
    return stack


def dyck(k: int, depth: int | None) -> Language:
    """Balanced words over the first k bracket pairs, nested at most ``depth`` deep (None: any)."""
    return lambda w: still_open(w, k, depth) == []


def pair_heights(w: tuple[str, ...], k: int) -> dict[int, int]:
    """Position in w (0-based) -> the height of its bracket pair (1 + the largest height of the
    pairs directly inside it), for every matched bracket of w over the first k pairs."""
    opens = dict(brackets(k))
    stack: list[tuple[int, int]] = []  # (position of the open bracket, largest height inside)
    out: dict[int, int] = {}
    for i, s in enumerate(w):
        if s in opens:
            stack.append((i, 0))
        elif stack:
            j, inner = stack.pop()
            out[i] = out[j] = inner + 1
            if stack:
                stack[-1] = (stack[-1][0], max(stack[-1][1], inner + 1))
    return out


PARITY = "accepts exactly the words of PARITY (words over {0,1} with an odd number of 1s)"
FIRST = "accepts exactly the words of FIRST (words over {0,1} whose first symbol is 1)"
FIXED: dict[str, Language] = {
    PARITY: lambda w: w.count("1") % 2 == 1,
    FIRST: lambda w: w[:1] == ("1",),
}
COMPILED: dict[str, Language] = {
    "AMBM (a^m b^m, m >= 0)": lambda w: w == ("a",) * (len(w) // 2) + ("b",) * (len(w) // 2),
    "A_MINUS_2B (#a = 2·#b)": lambda w: w.count("a") == 2 * w.count("b"),
    "DYCK1 (balanced brackets)": dyck(1, None),
    "DYCK1_ENDS_CLOSE (non-empty balanced brackets)": lambda w: len(w) > 0 and dyck(1, None)(w),
    "MAJORITY (more a's than b's)": lambda w: w.count("a") > w.count("b"),
}
_COMPILED = re.compile(
    r"the compiled network accepts exactly the words of (.+); with network=program, "
    r"program \w+ accepts exactly them"
)
DYCK = re.compile(
    r"the \(D\+1\)-layer network accepts γuω iff u ∈ Dyck\((\d+),(\d+)\)( \(as printed: [^()]*\))?"
)  # "as printed" names the paper's network variant; the language is the same


_PROGRAM = re.compile(r"the compiled network accepts exactly the words program (\w+) accepts")


def program_beside(folder: Path | None, alphabet: tuple[str, ...], name: str | None) -> Any:
    """The program file ``program.rasp`` in ``folder`` (beside the record), read by
    :func:`.programs.read`: program ``name`` (any name when None) over ``alphabet``, or Refused
    when there is none, KernelError when it is another program."""
    if folder is None or not (path := folder / "program.rasp").is_file():
        raise Refused(f"program {name or ''}: no program file (program.rasp) beside the record")
    doc = programs.read(loads_json(path.read_text(encoding="utf-8")))
    if (name is not None and doc.get("name") != name) or tuple(doc["alphabet"]) != alphabet:
        raise KernelError(
            f"program.rasp is program {doc.get('name')!r} over {doc['alphabet']}, the claim's "
            f"is {name!r} over the network's {list(alphabet)}"
        )
    return doc


def language(statement: str, alphabet: tuple[str, ...], folder: Path | None = None) -> Language:
    """The language a recognition claim's statement names, over ``alphabet``, or Refused. A
    statement naming a program X reads ``program.rasp`` in ``folder`` (beside the record), which
    must be program X over ``alphabet``: its language by the kernel's interpreter (:mod:`.programs`)."""
    if statement in FIXED and alphabet == ("0", "1"):
        return FIXED[statement]
    if m := _PROGRAM.fullmatch(statement):
        return programs.language(program_beside(folder, alphabet, m.group(1)))
    if (m := _COMPILED.fullmatch(statement)) and m.group(1) in COMPILED:
        return COMPILED[m.group(1)]
    if (m := DYCK.fullmatch(statement)) and int(m.group(1)) >= 1:
        k = int(m.group(1))
        if alphabet != tuple(s for pair in brackets(k) for s in pair):
            raise Refused(f"Dyck({k}, ·) over the alphabet {alphabet}, not the kernel's brackets")
        return dyck(k, int(m.group(2)))
    raise Refused(f"a recognition claim the kernel has no language for: {statement[:80]!r}")
