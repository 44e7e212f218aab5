"""SMT-LIB2 text that cvc5 and z3 both read: z3's printing made portable (logic, quoting,
unary operators), written so that the same query prints to the same bytes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

_TOKEN = re.compile(r';[^\n]*|("(?:[^"]|"")*"|\|[^|]*\||[()]|[^\s()";|]+)')
"""SMT-LIB2 tokens: a string literal, a ``|quoted symbol|``, a parenthesis or an atom (group 1,
empty for a comment); a character nothing matches (an unterminated ``"`` or ``|``) is skipped."""

_PLAIN_QUOTES = re.compile(r"(?:[^|]*+(?<![^\s()])\|[^|\s()]*+\|(?![^\s()]))*+[^|]*+")
"""Text whose ``|quoted symbols|`` hold no space or parenthesis and stand between spaces or
parentheses: each is then one word of the text split at spaces (z3's dumps are such text)."""

_NUMERAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_DELTA = {"(": 1, ")": -1}
_DROPPED = frozenset({"set-info", "set-logic", "set-option"})
_SKIPPED = _DROPPED | {"check-sat"}
_UNARY = ("+", "*")
_PRODUCT = ("*", "/", "div", "mod")
_CONSTANT_HEADS = frozenset({"-", "/", "+", "*", "to_real"})


def _uncommented(text: str) -> str:
    """``text`` without its leading comment lines (z3 starts its dumps with one)."""
    while text.startswith(";"):
        cut = text.find("\n")
        text = text[cut:] if cut >= 0 else ""
    return text


_ASCII_SPACE = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32)
"""The ASCII characters ``str.split`` and the regular expression ``\\s`` take for whitespace."""


def _portable_bytes(text: str, logic: str) -> str | None:
    """:func:`smt2_portable` of ``text`` with ``logic`` given, computed on the bytes with numpy
    (z3's dumps: two to three times faster than the tokens), or None where the text is not laid
    out as z3 dumps it, and the tokens handle it. The bytes cover ASCII text with balanced
    parentheses, a ``(check-sat)``, no string literal, no comment past the leading lines, no
    top-level atom, no whitespace after ``(``, no token against a parenthesis that needs a space
    between (``)(``, ``x(``, ``)x``), quoted symbols without whitespace or parentheses, and
    one-argument sums and products that are neither a whole command nor of ``+`` or ``*``.

    Tokens are then the maximal runs of bytes that are not whitespace or parentheses; a run of
    whitespace inside a command prints as one space (none before ``)``), the whitespace after a
    printed command as a line break, and the rest (and the commands not printed) not at all."""
    import numpy as np

    body = _uncommented(text)
    if not body or not body.isascii() or '"' in body or ";" in body or "check-sat" not in body:
        return None
    a = np.frombuffer(body.encode("ascii"), dtype=np.uint8)
    n = a.size
    space = np.zeros(256, dtype=bool)
    space[list(_ASCII_SPACE)] = True
    ws = space[a]
    op, cl = a == 40, a == 41
    delim = ws | op | cl
    token = ~ws
    if "|" in body and not _plain_quotes_bytes(np, a, delim):
        return None
    depth = np.cumsum(op.astype(np.int8) - cl.astype(np.int8), dtype=np.int32)
    if depth[-1] != 0 or depth.min() < 0:
        return None
    if (
        (op[:-1] & ws[1:]).any()  # whitespace after "("
        or (cl[:-1] & token[1:] & ~cl[1:]).any()  # ")(" or ")x"
        or (token[:-1] & ~op[:-1] & op[1:]).any()  # "x(" or ")("
        or (token & (depth == 0) & ~cl).any()  # a top-level atom
    ):
        return None
    run = np.flatnonzero(ws & ~np.concatenate(([False], ws[:-1])))  # whitespace runs: first byte
    last = np.flatnonzero(ws & ~np.concatenate((ws[1:], [False])))  # and last byte
    unary = _unary_bytes(np, a, depth, ws, delim, run, last)
    if unary is None:
        return None
    starts = np.flatnonzero(op & (depth == 1))
    ends = np.flatnonzero(cl & (depth == 0))
    printed = np.ones(starts.size, dtype=bool)
    check_sat = False
    for name in _SKIPPED:
        at = body.find("(" + name)
        while at >= 0:
            stop = at + 1 + len(name)
            if depth[at] == 1 and (stop == n or delim[stop]):
                printed[np.searchsorted(starts, at)] = False
                check_sat = check_sat or name == "check-sat"
            at = body.find("(" + name, stop)
    if not check_sat:
        return None
    keep = token.copy()
    out = a.copy()
    inner = depth[run] > 0
    spaced = run[inner & (a[np.minimum(last + 1, n - 1)] != 41)]
    keep[spaced] = True
    out[spaced] = 32
    top = run[~inner & (run > 0)]  # after a command (no top-level atoms): after its ")"
    broken = top[printed[np.searchsorted(ends, top - 1)]]
    keep[broken] = True
    out[broken] = 10
    keep[unary] = False
    for j in np.flatnonzero(~printed):
        keep[starts[j] : ends[j] + 1] = False
    lines = out[keep].tobytes().decode("ascii")
    if lines and not lines.endswith("\n"):
        lines += "\n"
    return f"(set-logic {logic})\n{lines}(check-sat)\n"


def _plain_quotes_bytes(np: Any, a: Any, delim: Any) -> bool:
    """The ``|quoted symbols|`` of the text in ``a`` (paired left to right) hold no whitespace or
    parenthesis and have whitespace, a parenthesis or the end of the text on both sides (the
    bytes version of :data:`_PLAIN_QUOTES`)."""
    bar = a == 124
    inside = np.logical_xor.accumulate(bar)  # from an opening bar to before its closing one
    if inside[-1] or (inside & ~bar & delim).any():
        return False
    before = np.concatenate(([True], delim[:-1]))
    if (bar & inside & ~before).any():
        return False
    after = np.concatenate((delim[1:], [True]))
    return not (bar & ~inside & ~after).any()


def _unary_bytes(np: Any, a: Any, depth: Any, ws: Any, delim: Any, run: Any, last: Any) -> Any:
    """The bytes to drop for the one-argument sums and products ``(+ x)`` / ``(* x)`` of the text
    in ``a`` (for :func:`_portable_bytes`): each one's ``(``, operator, the whitespace after it and
    its ``)``; None where one is a whole command or its argument is ``+`` or ``*`` (dropping it
    would make a new one: the tokens handle those)."""
    n = a.size
    op, cl = a == 40, a == 41
    # "(+" or "(*" then whitespace: "(+)" has no argument, and "(+(" is refused before
    p = np.flatnonzero(op[:-2] & ((a[1:-1] == 43) | (a[1:-1] == 42)) & ws[2:])
    if not p.size:
        return p
    if (depth[p] == 1).any():
        return None
    q = last[np.searchsorted(run, p + 2)] + 1  # the first argument (or the ")" of "(+ )")
    delims = np.flatnonzero(delim)
    end = (
        delims[np.minimum(np.searchsorted(delims, q, side="right"), delims.size - 1)] - 1
    )  # an atom's last byte
    listed = op[q]
    if listed.any():  # a list's ")": the openers and closers of one level alternate left to right
        opens, closes = np.flatnonzero(op), np.flatnonzero(cl)
        closing = np.empty(opens.size, dtype=np.int64)
        closing[np.argsort(depth[opens].astype(np.int64) * (n + 1) + opens)] = closes[
            np.argsort((depth[closes].astype(np.int64) + 1) * (n + 1) + closes)
        ]
        end = np.where(listed, closing[np.minimum(np.searchsorted(opens, q), opens.size - 1)], end)
    after = np.minimum(end + 1, n - 1)  # the next byte past whitespace: ")" for a one-argument list
    spaced = ws[after]
    after = np.where(spaced, last[np.minimum(np.searchsorted(run, after), run.size - 1)] + 1, after)
    one = ~cl[q] & cl[np.minimum(after, n - 1)]
    if (one & ~listed & (end == q) & ((a[q] == 43) | (a[q] == 42))).any():
        return None
    return np.concatenate((p[one], p[one] + 1, p[one] + 2, after[one]))


def _tokens(text: str) -> tuple[list[str], str]:
    """The tokens of SMT-LIB2 ``text`` (comments dropped) and a one-character separator that no
    token contains and that is not a parenthesis or a line break.

    Text without string literals, comments (past leading comment lines) or quoted symbols that
    a split at spaces would cut is split with ``str.split`` (z3's dumps: several times faster
    than the regular expression); any other text goes through :data:`_TOKEN`. Both give the same
    tokens."""
    body = _uncommented(text)
    if '"' not in body and ";" not in body and ("|" not in body or _PLAIN_QUOTES.fullmatch(body)):
        return body.replace("(", " ( ").replace(")", " ) ").split(), " "
    sep = next(c for c in map(chr, itertools.count()) if c not in text and c not in "()\n")
    return list(filter(None, _TOKEN.findall(text))), sep


class _Script:
    """SMT-LIB2 text as tokens with the nesting depth after each token: the whole parse, without
    building a tree. ``starts``/``stops`` delimit the commands that are printed (all but
    ``set-info``, ``set-logic``, ``set-option`` and ``check-sat``) as token slices."""

    __slots__ = ("check_sat", "depth", "sep", "starts", "stops", "text", "tokens")

    def __init__(self, text: str) -> None:
        tokens, sep = _tokens(text)
        depth = list(itertools.accumulate(map(_DELTA.get, tokens, itertools.repeat(0))))
        if depth and depth[-1]:
            # the depth moves by ±1: it passes -1 wherever it goes below 0
            if -1 in depth:
                raise ValueError("unbalanced ')' in SMT-LIB2 text")
            raise ValueError("unbalanced '(' in SMT-LIB2 text")
        ends: list[int] = []
        add, find, i, n = ends.append, depth.index, 0, len(tokens)
        while i < n:
            i = find(0, i)
            add(i)
            i += 1
        starts = [0, *map((1).__add__, ends[:-1])] if ends else []
        firsts = list(map(tokens.__getitem__, starts))
        if ")" in firsts:  # a command that starts with ')': the first place the depth goes below 0
            raise ValueError("unbalanced ')' in SMT-LIB2 text")
        # the commands headed by set-info, set-logic, set-option or check-sat are not printed
        heads = list(map(tokens.__getitem__, map((1).__add__, starts[:-1])))
        if starts and firsts[-1] == "(":
            heads.append(tokens[starts[-1] + 1])
        skipped: list[int] = []
        check_sat = False
        for name in _SKIPPED.intersection(heads):
            j = -1
            try:
                while True:
                    j = heads.index(name, j + 1)
                    if firsts[j] == "(":
                        skipped.append(j)
                        check_sat = check_sat or name == "check-sat"
            except ValueError:
                pass
        skipped.sort()
        stops = list(map((1).__add__, ends))
        for j in reversed(skipped):
            del starts[j], stops[j]
        self.text, self.tokens, self.depth, self.sep = text, tokens, depth, sep
        self.starts, self.stops, self.check_sat = starts, stops, check_sat

    def close(self, i: int) -> int:
        """The index of the last token of the expression that starts at token ``i``."""
        return self.depth.index(self.depth[i] - 1, i + 1) if self.tokens[i] == "(" else i

    def heads(self, names: Iterable[str]) -> Iterator[int]:
        """The indices of the tokens in ``names`` that head a list (follow its ``(``)."""
        tokens = self.tokens
        for name in names:
            i = 0
            try:
                while True:
                    i = tokens.index(name, i + 1)
                    if tokens[i - 1] == "(":
                        yield i
            except ValueError:
                pass

    def arguments(self, head: int) -> list[tuple[int, int]]:
        """The first and last token index of each argument of the list headed by token ``head``."""
        out = []
        i = head + 1
        while self.tokens[i] != ")":
            j = self.close(i)
            out.append((i, j))
            i = j + 1
        return out

    def constant(self, first: int, last: int) -> bool:
        """The expression at tokens ``first..last`` is a numeral, or ``-``, ``/``, ``+``, ``*`` or
        ``to_real`` of constants only."""
        tokens = self.tokens
        i = first
        while i <= last:
            t = tokens[i]
            if t == "(":
                if tokens[i + 1] not in _CONSTANT_HEADS:
                    return False
                i += 2
            elif t == ")" or _NUMERAL.match(t):
                i += 1
            else:
                return False
        return True

    def nonlinear(self, head: int) -> bool:
        """The product or quotient headed by token ``head`` has two non-constant factors (or a
        non-constant divisor)."""
        args = self.arguments(head)
        variable = [a for a in args if not self.constant(*a)]
        return len(variable) > 1 or (
            self.tokens[head] != "*" and len(args) > 1 and not self.constant(*args[1])
        )

    def logic(self) -> str:
        """:func:`smt2_logic` of the script."""
        tokens, depth = self.tokens, self.depth
        atoms = set(tokens)
        if any(depth[i] == 1 for i in self.heads(atoms.intersection(("forall", "exists")))):
            return "ALL"
        # the sorts are those seen up to the end of the first command with a nonlinear term
        firsts = (
            next((i for i in self.heads((op,)) if self.nonlinear(i)), None)
            for op in _PRODUCT
            if op in atoms
        )
        first = min((i for i in firsts if i is not None), default=None)
        if first is not None:
            atoms = set(tokens[: depth.index(0, first) + 1])
        seen = atoms.intersection(("Int", "Real"))
        if not atoms.isdisjoint(("to_real", "to_int", "is_int")):
            seen.update(("Int", "Real"))
        if "Real" not in seen and any(_NUMERAL.match(t) for t in atoms if "." in t):
            seen.add("Real")
        if not seen:
            return "QF_UF"
        sorts = "IRA" if seen == {"Int", "Real"} else ("IA" if "Int" in seen else "RA")
        return f"QF_{'N' if first is not None else 'L'}{sorts}"

    def unary(self) -> list[tuple[int, int, int]] | None:
        """The one-argument sums and products ``(+ x)`` / ``(* x)``: the indices of their ``(``,
        operator and ``)``; None where dropping them makes new ones (``((+ +) x)``)."""
        tokens = self.tokens
        found = []
        for op in self.heads(name for name in _UNARY if name in self.text):
            arg = op + 1
            if tokens[arg] == ")":
                continue
            last = self.close(arg)
            if tokens[last + 1] == ")":
                if last == arg and tokens[arg] in _UNARY:
                    return None
                found.append((op - 1, op, last + 1))
        return found


def _without_unary(tokens: Sequence[str]) -> list[str]:
    """The tokens of one command without its one-argument sums and products, nested ones too,
    innermost first (the general case of :meth:`_Script.unary`)."""
    stack: list[list[list[str]]] = [[]]
    for t in tokens:
        if t == "(":
            stack.append([])
        elif t == ")":
            items = stack.pop()
            if len(items) == 2 and items[0] in (["+"], ["*"]):
                stack[-1].append(items[1])
            else:
                stack[-1].append(["(", *itertools.chain.from_iterable(items), ")"])
        else:
            stack[-1].append([t])
    return list(itertools.chain.from_iterable(stack[0]))


def smt2_logic(text: str) -> str:
    """The smallest standard logic SMT-LIB2 ``text`` fits: ``QF_`` + ``L``/``N`` (linear or not)
    + ``IA``/``RA``/``IRA``; ``QF_UF`` for Booleans only; ``ALL`` for a top-level quantifier.
    cvc5 is much faster with the right one (a lemma over bounded integers with products: unsat
    in 0.15 s as QF_NIRA, a timeout as ALL).

    The sorts are read from the atoms (``Int``, ``Real``, ``to_real``, ``to_int``, ``is_int``,
    decimal numerals) up to the end of the first command with a nonlinear term (a product or a
    quotient of two non-constant terms), or of all commands where there is none.

    >>> smt2_logic("(declare-fun x () Int)(assert (> (* 3 x) 1))(check-sat)")
    'QF_LIA'
    """
    return _Script(text).logic()


def smt2_portable(text: str, *, logic: str | None = None) -> str:
    """z3's SMT-LIB2 dump made acceptable to cvc5: a ``set-logic`` line first (``logic``, or
    the smallest standard one that fits: :func:`smt2_logic`), no ``set-info`` z3 adds,
    one-argument sums and products removed, one command per line, ``check-sat`` last.

    No tree is built. With ``logic`` given, text laid out as z3 dumps it is printed on its bytes
    (numpy: the depth after each byte delimits the commands, a run of whitespace becomes one
    space or a line break); any other text goes through its tokens (the depth after each token
    delimits the commands and the arguments, the tokens are joined with single spaces). Both
    give the bytes the former tree printer gave (``benchmarks/smt2_printer.py`` keeps it).

    >>> print(smt2_portable("(declare-fun x () Real)(assert (> (+ x) 0.0))(check-sat)", logic="QF_LRA"))
    (set-logic QF_LRA)
    (declare-fun x () Real)
    (assert (> x 0.0))
    (check-sat)
    <BLANKLINE>
    """
    if logic:
        fast = _portable_bytes(text, logic)
        if fast is not None:
            return fast
    script = _Script(text)
    tokens, sep = script.tokens, script.sep
    header = f"(set-logic {logic or script.logic()})\n"
    if not script.check_sat:
        raise ValueError("the SMT-LIB2 text has no (check-sat)")
    unary = script.unary()
    commands: Iterator[Any] = map(tokens.__getitem__, map(slice, script.starts, script.stops))
    if unary is None:
        commands = map(_without_unary, commands)
    elif unary:
        marked: list[str | None] = tokens  # type: ignore[assignment]  # in place: the script is done
        for redex in unary:
            for i in redex:
                marked[i] = None
        commands = map(filter, itertools.repeat(None), commands)
    body = "\n".join(map(sep.join, commands))
    body = body.replace("(" + sep, "(").replace(sep + ")", ")")
    if sep != " ":
        body = body.replace(sep, " ")
    return header + body + ("\n(check-sat)\n" if script.starts else "(check-sat)\n")


def to_smt2(solver: Any, *, logic: str | None = None) -> str:
    """The SMT-LIB2 script of a z3 ``Solver``'s assertions, in the form cvc5 accepts."""
    return smt2_portable(solver.to_smt2(), logic=logic)
