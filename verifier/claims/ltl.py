"""Linear temporal logic with past and future operators over finite words, as a specification
language: formulas, their text syntax, a direct evaluator and the minimal DFA of a formula.

Yang, Chiang & Angluin 2024 ("Masked hard-attention transformers recognize exactly the star-free
languages", arXiv:2310.13897) prove B-RASP equivalent to LTL with the strict operators *since*
and *until*, a formula defining the language of the words whose **last position** satisfies it
(a transformer outputs at the last position). netproof follows that convention and adds the
usual derived operators; the definitions below are the standard ones, and they are what the
code and its tests follow.
On a word w = w_1 … w_n and a position 1 ≤ i ≤ n:

- ``a`` (Q_a): w_i = a, for a symbol a of the alphabet; ``true`` / ``⊤`` and ``false`` / ``⊥``;
- ``!φ`` / ``¬φ``, ``φ & ψ`` / ``φ ∧ ψ``, ``φ | ψ`` / ``φ ∨ ψ``, ``φ -> ψ`` / ``φ → ψ``;
- past: ``Y φ`` (yesterday): i > 1 and φ at i − 1; ``φ S ψ`` (since, **strict**): some j < i has
  ψ, and φ holds at every k with j < k < i; ``O φ`` (once): some j ≤ i has φ; ``H φ``
  (historically): every j ≤ i has φ;
- future, the mirror images: ``X φ`` (next): i < n and φ at i + 1; ``φ U ψ`` (until,
  **strict**): some j > i has ψ, and φ holds at every k with i < k < j; ``F φ`` (eventually):
  some j ≥ i has φ; ``G φ`` (globally): every j ≥ i has φ.

Y and X are the paper's ⊥ S φ and ⊥ U φ. O, H, F and G include the current position
(Manna & Pnueli's reflexive convention; the strict forms are ``true S φ`` and ``true U φ``).
A non-empty word is in the language of φ iff φ holds at its last position n; at n, ``X φ`` and
``φ U ψ`` are false and ``F φ``, ``G φ`` mean φ, so future operators matter under past ones
(``H(a -> F b)``: every a is followed, here or later, by a b). The empty word has no last
position: its membership is a parameter (``empty``, default False: rejected).

Text syntax: operators bind, tightest first, as the prefix operators ``! ¬ Y X O H F G``, then
``S`` and ``U`` (right-associative), ``&``, ``|``, and ``->`` (right-associative); parentheses
group. A symbol is written bare when it is a run of letters, digits and ``_`` that is not one of
the operator letters (a run such as ``Fb`` reads as ``F b`` when ``Fb`` is not a symbol), or in
quotes (``'('``, ``'F'``) — quotes are needed for symbols that are operator letters or other
punctuation. A bad formula raises :class:`LtlError`, one line naming the offset and the fix.

:func:`ltl_automaton` builds the minimal DFA of a formula's language without B-RASP (see its
docstring for the construction and why it is right).

May import: the standard library, :mod:`.languages` and :mod:`.regular`.

>>> f = parse_ltl("H(b -> !O c)", ("a", "b", "c"))
>>> show(f), size(f)
('H (b → ¬O c)', 6)
>>> [holds(f, w) for w in ("ab", "acb", "bca", "")]
[True, False, True, False]
>>> ltl_automaton(f, ("a", "b", "c")).states  # start (ε rejected), no c yet, after a c, dead
4
>>> parse_ltl("a S", ("a", "b"))
Traceback (most recent call last):
...
netproof.verifier.claims.ltl.LtlError: LTL formula 'a S' ends at offset 3 where a formula is expected; write a formula after 'S'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from typing import TypeAlias

from .languages import Automaton, Language, Word
from .regular import minimal_automaton

__all__ = [
    "FALSE",
    "MAX_STATES",
    "TRUE",
    "Always",
    "And",
    "Atom",
    "Const",
    "Eventually",
    "Formula",
    "Historically",
    "Implies",
    "LtlError",
    "Next",
    "Not",
    "Once",
    "Or",
    "Since",
    "Until",
    "Yesterday",
    "holds",
    "holds_at",
    "ltl_automaton",
    "ltl_language",
    "parse_ltl",
    "show",
    "size",
    "subformulas",
]

MAX_STATES = 50_000
"""The most states the subset construction of :func:`ltl_automaton` may reach."""


class LtlError(ValueError):
    """A formula that cannot be read, or whose automaton is too large; the message says where
    and what to do."""


@dataclass(frozen=True, slots=True)
class Atom:
    """Q_a: the symbol at this position is ``symbol``."""

    symbol: str


@dataclass(frozen=True, slots=True)
class Const:
    """⊤ (``value`` True) or ⊥."""

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
class Implies:
    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True)
class Yesterday:
    """Y φ: the previous position exists and has φ."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Once:
    """O φ: φ at this position or an earlier one."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Historically:
    """H φ: φ at this position and every earlier one."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Since:
    """φ S ψ (strict): ψ at some j < i, φ at every k with j < k < i."""

    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True)
class Next:
    """X φ: the next position exists and has φ."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Eventually:
    """F φ: φ at this position or a later one."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Always:
    """G φ: φ at this position and every later one."""

    arg: Formula


@dataclass(frozen=True, slots=True)
class Until:
    """φ U ψ (strict): ψ at some j > i, φ at every k with i < k < j."""

    left: Formula
    right: Formula


Formula: TypeAlias = (
    Atom
    | Const
    | Not
    | And
    | Or
    | Implies
    | Yesterday
    | Once
    | Historically
    | Since
    | Next
    | Eventually
    | Always
    | Until
)
TRUE = Const(True)
FALSE = Const(False)

_UNARY: dict[str, type[Not | Yesterday | Once | Historically | Next | Eventually | Always]] = {
    "!": Not,
    "Y": Yesterday,
    "O": Once,
    "H": Historically,
    "X": Next,
    "F": Eventually,
    "G": Always,
}
_BINARY: dict[type, str] = {And: "∧", Or: "∨", Implies: "→", Since: "S", Until: "U"}
_LETTERS = frozenset("YOHXFGSU")


def _children(f: Formula) -> tuple[Formula, ...]:
    if isinstance(f, (Atom, Const)):
        return ()
    if isinstance(f, (Not, Yesterday, Once, Historically, Next, Eventually, Always)):
        return (f.arg,)
    return (f.left, f.right)


def subformulas(formula: Formula) -> tuple[Formula, ...]:
    """Every distinct subformula of ``formula``, each once, operands before the formulas using
    them."""
    f = formula
    seen: dict[Formula, None] = {}
    stack: list[tuple[Formula, bool]] = [(f, False)]
    while stack:
        g, done = stack.pop()
        if g in seen:
            continue
        if done:
            seen[g] = None
            continue
        stack.append((g, True))
        stack.extend((c, False) for c in reversed(_children(g)) if c not in seen)
    return tuple(seen)


def size(formula: Formula) -> int:
    """The number of operators, symbols and constants in ``formula`` (its syntax tree's nodes)."""
    return 1 + sum(size(c) for c in _children(formula))


# --------------------------------------------------------------------------- semantics


def holds_at(formula: Formula, word: Sequence[str], i: int) -> bool:
    """Whether ``formula`` holds at position ``i`` (1..n) of ``word``: the definitions of the module
    docstring, written as quantifiers over positions (each subformula's value at a position
    computed once)."""
    w = tuple(word)
    n = len(w)
    if not 1 <= i <= n:
        raise ValueError(f"position i={i} is outside 1..{n} of a word of length {n}")
    memo: dict[tuple[Formula, int], bool] = {}

    def at(g: Formula, k: int) -> bool:
        if (g, k) not in memo:
            memo[g, k] = _at(g, k)
        return memo[g, k]

    def _at(g: Formula, i: int) -> bool:
        if isinstance(g, Atom):
            return w[i - 1] == g.symbol
        if isinstance(g, Const):
            return g.value
        if isinstance(g, Not):
            return not at(g.arg, i)
        if isinstance(g, And):
            return at(g.left, i) and at(g.right, i)
        if isinstance(g, Or):
            return at(g.left, i) or at(g.right, i)
        if isinstance(g, Implies):
            return not at(g.left, i) or at(g.right, i)
        if isinstance(g, Yesterday):
            return i > 1 and at(g.arg, i - 1)
        if isinstance(g, Once):
            return any(at(g.arg, j) for j in range(1, i + 1))
        if isinstance(g, Historically):
            return all(at(g.arg, j) for j in range(1, i + 1))
        if isinstance(g, Since):
            return any(
                at(g.right, j) and all(at(g.left, k) for k in range(j + 1, i)) for j in range(1, i)
            )
        if isinstance(g, Next):
            return i < n and at(g.arg, i + 1)
        if isinstance(g, Eventually):
            return any(at(g.arg, j) for j in range(i, n + 1))
        if isinstance(g, Always):
            return all(at(g.arg, j) for j in range(i, n + 1))
        if isinstance(g, Until):
            return any(
                at(g.right, j) and all(at(g.left, k) for k in range(i + 1, j))
                for j in range(i + 1, n + 1)
            )
        raise TypeError(f"{g!r} is not an LTL formula")

    return at(formula, i)


def holds(formula: Formula, word: Sequence[str], empty: bool = False) -> bool:
    """Whether ``word`` is in the language of ``formula``: ``formula`` at the last position
    (``empty`` for the empty word)."""
    w = tuple(word)
    return empty if not w else holds_at(formula, w, len(w))


# --------------------------------------------------------------------------- text


_WORD_OPS = {"true": TRUE, "false": FALSE}
_SYNTAX = {
    "!": "!",
    "~": "!",
    "¬": "!",
    "&": "&",
    "∧": "&",
    "|": "|",
    "∨": "|",
    "→": "->",
    "(": "(",
    ")": ")",
    "⊤": "true",
    "⊥": "false",
}
_Token: TypeAlias = tuple[str, str, int]  # (kind, text, offset): kind op, sym, const, end


class _Parser:
    def __init__(self, text: str, alphabet: tuple[str, ...]) -> None:
        self.text, self.alphabet = text, alphabet
        self.tokens = list(self._lex())
        self.k = 0

    def fail(self, message: str) -> LtlError:
        clash = [s for s in self.alphabet if s in _SYNTAX or s == "->"]
        hint = (
            f" (the symbols {', '.join(clash)} are also syntax: write them quoted, as '{clash[0]}')"
            if clash
            else ""
        )
        return LtlError(f"LTL formula {self.text!r} {message}{hint}")

    def _symbols_hint(self) -> str:
        return "{" + ", ".join(self.alphabet) + "}"

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
                        f"{self._symbols_hint()}; quote one of those"
                    )
                yield ("sym", sym, i)
                i = end + 1
            elif t.startswith("->", i):
                yield ("op", "->", i)
                i += 2
            elif c.isalnum() or c == "_":
                j = i
                while j < len(t) and (t[j].isalnum() or t[j] == "_"):
                    j += 1
                run = t[i:j]
                if run in _WORD_OPS:
                    yield ("const", run, i)
                    i = j
                elif run in self.alphabet:
                    yield ("sym", run, i)
                    i = j
                elif run[0] in _LETTERS and run[0] not in self.alphabet:
                    yield ("op", run[0], i)
                    i += 1
                elif prefix := max(
                    (s for s in self.alphabet if run.startswith(s)), key=len, default=""
                ):
                    yield ("sym", prefix, i)
                    i += len(prefix)
                else:
                    raise self.fail(
                        f"has {run!r} at offset {i}, which is neither a symbol of the alphabet "
                        f"{self._symbols_hint()} nor an operator; write a symbol, true, false, "
                        "! & | -> Y X O H F G S U or parentheses"
                    )
            elif c in self.alphabet and c not in _SYNTAX:
                yield ("sym", c, i)
                i += 1
            elif c in _SYNTAX:
                kind = "const" if _SYNTAX[c] in _WORD_OPS else "op"
                yield (kind, _SYNTAX[c], i)
                i += 1
            else:
                hint = (
                    f"quote the symbol: '{c}'"
                    if c in self.alphabet
                    else "write a symbol of the alphabet "
                    f"{self._symbols_hint()}, true, false, ! & | -> Y X O H F G S U or parentheses"
                )
                raise self.fail(f"has {c!r} at offset {i}, which is not part of LTL syntax; {hint}")
        yield ("end", "", len(t))

    def peek(self) -> _Token:
        return self.tokens[self.k]

    def take(self) -> _Token:
        tok = self.tokens[self.k]
        self.k += 1
        return tok

    def expected(self, what: str) -> LtlError:
        kind, text, at = self.peek()
        before = self.tokens[self.k - 1][1] if self.k else ""
        if kind == "end":
            after = f"after {before!r}" if before else "(the formula is empty)"
            return self.fail(f"ends at offset {at} where {what} is expected; write {what} {after}")
        return self.fail(
            f"has {text!r} at offset {at} where {what} is expected; "
            + (
                "join two formulas with & | -> S or U"
                if what == "an operator"
                else f"write {what} there"
            )
        )

    def formula(self) -> Formula:
        f = self.implication()
        if self.peek()[0] != "end":
            raise self.expected("an operator")
        return f

    def implication(self) -> Formula:
        left = self.disjunction()
        if self.peek()[:2] == ("op", "->"):
            self.take()
            return Implies(left, self.implication())
        return left

    def disjunction(self) -> Formula:
        f = self.conjunction()
        while self.peek()[:2] == ("op", "|"):
            self.take()
            f = Or(f, self.conjunction())
        return f

    def conjunction(self) -> Formula:
        f = self.temporal()
        while self.peek()[:2] == ("op", "&"):
            self.take()
            f = And(f, self.temporal())
        return f

    def temporal(self) -> Formula:
        left = self.unary()
        kind, text, _ = self.peek()
        if kind == "op" and text in ("S", "U"):
            self.take()
            right = self.temporal()
            return Since(left, right) if text == "S" else Until(left, right)
        return left

    def unary(self) -> Formula:
        kind, text, _at = self.peek()
        if kind == "op" and text in _UNARY:
            self.take()
            return _UNARY[text](self.unary())
        if kind == "op" and text == "(":
            self.take()
            f = self.implication()
            if self.peek()[:2] != ("op", ")"):
                raise self.expected("')'")
            self.take()
            return f
        if kind == "sym":
            self.take()
            return Atom(text)
        if kind == "const":
            self.take()
            return _WORD_OPS[text]
        raise self.expected("a formula")


def parse_ltl(text: str, alphabet: Sequence[str]) -> Formula:
    """The formula ``text`` over ``alphabet`` (the syntax of the module docstring);
    :class:`LtlError` naming the offset of what is wrong and the fix."""
    sigma = tuple(alphabet)
    if not sigma or any(not isinstance(s, str) or not s for s in sigma):
        raise LtlError(f"alphabet={sigma!r} must be a non-empty tuple of non-empty strings")
    return _Parser(text, sigma).formula()


def _symbol(s: str) -> str:
    plain = (s.isalnum() or s.replace("_", "").isalnum()) and s not in _WORD_OPS
    return s if plain and not (set(s[:1]) & _LETTERS) else repr(s)


def show(formula: Formula) -> str:
    """``formula`` in the papers' notation (¬ ∧ ∨ → ⊤ ⊥, Y X O H F G, S U); :func:`parse_ltl`
    reads it back to ``formula``."""
    f = formula
    if isinstance(f, Atom):
        return _symbol(f.symbol)
    if isinstance(f, Const):
        return "⊤" if f.value else "⊥"
    if isinstance(f, Not):
        return "¬" + _operand(f.arg)
    if isinstance(f, (Yesterday, Once, Historically, Next, Eventually, Always)):
        letter = {
            Yesterday: "Y",
            Once: "O",
            Historically: "H",
            Next: "X",
            Eventually: "F",
            Always: "G",
        }[type(f)]
        return f"{letter} {_operand(f.arg)}"
    return f"{_operand(f.left)} {_BINARY[type(f)]} {_operand(f.right)}"


def _operand(f: Formula) -> str:
    text = show(f)
    return f"({text})" if isinstance(f, (And, Or, Implies, Since, Until)) else text


# --------------------------------------------------------------------------- automaton

_FUTURE = (Next, Until, Eventually, Always)
_Type = tuple[bool, ...]  # one truth value per subformula, in subformulas() order


def ltl_automaton(
    formula: Formula,
    alphabet: Sequence[str],
    empty: bool = False,
    *,
    max_states: int = MAX_STATES,
) -> Automaton:
    """The minimal DFA of the words over ``alphabet`` in the language of ``formula`` (``empty``: the
    empty word's membership), built without B-RASP.

    Construction. A *type* gives a truth value to every subformula. Read the word left to right
    with a nondeterministic automaton whose state is the type of the position just read; on a
    symbol it moves to every type T that is *locally consistent*: atoms and Boolean operators
    agree with the symbol and T; past operators follow from the previous type P (none at the
    first position) by their one-step recursions — Y φ = φ(P), φ S ψ = ψ(P) ∨ (φ(P) ∧ (φ S ψ)(P)),
    O φ = φ(T) ∨ (O φ)(P), H φ = φ(T) ∧ (H φ)(P), with Y, S, O-part false and H-part true at the
    first position; a future operator's value is guessed in T, and P's guesses are checked
    against T: X φ(P) = φ(T), (φ U ψ)(P) = ψ(T) ∨ (φ(T) ∧ (φ U ψ)(T)), F φ(P) = φ(P) ∨ F φ(T),
    G φ(P) = φ(P) ∧ G φ(T). A run is accepted when its last type has X φ and φ U ψ false,
    F φ = φ and G φ = φ (the recursions' ends at n), and f true.

    Why it is right: these recursions with their end conditions determine every subformula's
    vector on the word uniquely, by induction on the subformula (a past operator's vector
    forward from position 1, a future one's backward from n, from its operands' vectors), and
    the true vectors satisfy them; so exactly one run passes every check, the one whose types
    are the true values, and it accepts iff f holds at n. The subset construction makes the
    automaton deterministic and :func:`.regular.minimal_automaton` minimal.
    :class:`LtlError` past ``max_states`` subsets."""
    f = formula
    sigma = tuple(alphabet)
    subs = subformulas(f)
    pos = {g: k for k, g in enumerate(subs)}
    bad = sorted({g.symbol for g in subs if isinstance(g, Atom) and g.symbol not in sigma})
    if bad:
        raise LtlError(
            f"the formula {show(f)!r} reads {bad}, not symbols of the alphabet {sigma}; "
            "use the alphabet's symbols"
        )
    futures = [k for k, g in enumerate(subs) if isinstance(g, _FUTURE)]

    def types(prev: _Type | None, symbol: str) -> list[_Type]:
        out = []
        for guess in product((False, True), repeat=len(futures)):
            v: list[bool] = []
            guessed = dict(zip(futures, guess, strict=True))
            for k, g in enumerate(subs):
                v.append(_value(g, k, v, pos, prev, symbol, guessed))
            t = tuple(v)
            if prev is None or _checks(subs, pos, prev, t):
                out.append(t)
        return out

    def final(t: _Type) -> bool:
        for k, g in enumerate(subs):
            if isinstance(g, (Next, Until)) and t[k]:
                return False
            if isinstance(g, (Eventually, Always)) and t[k] != t[pos[g.arg]]:
                return False
        return t[pos[f]]

    start: frozenset[_Type | None] = frozenset({None})
    index: dict[frozenset[_Type | None], int] = {start: 0}
    order = [start]
    delta: list[list[int]] = []
    for subset in order:
        row = []
        for symbol in sigma:
            target = frozenset(t for p in subset for t in types(p, symbol))
            if target not in index:
                if len(index) >= max_states:
                    raise LtlError(
                        f"the automaton of {show(f)!r} passes max_states={max_states} subsets; "
                        "raise max_states= or give a smaller formula"
                    )
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        delta.append(row)
    accepting = frozenset(
        q
        for q, subset in enumerate(order)
        if (empty if q == 0 else any(t is not None and final(t) for t in subset))
    )
    return minimal_automaton(
        Automaton(
            states=len(order),
            start=0,
            accepting=accepting,
            delta=tuple(tuple(r) for r in delta),
        )
    )


def ltl_language(
    formula: Formula, alphabet: Sequence[str], empty: bool = False, *, name: str = ""
) -> Language:
    """The language of ``formula`` as a reference: membership by :func:`holds`, and the automaton
    :func:`ltl_automaton` (so proofs against it hold for every length)."""
    f = formula
    sigma = tuple(alphabet)

    def contains(w: Word) -> bool:
        return holds(f, w, empty=empty)

    return Language(
        name=name or f"LTL {show(f)}",
        alphabet=sigma,
        contains=contains,
        description=(
            f"the words whose last position satisfies {show(f)}"
            + (" (and the empty word)" if empty else "")
        ),
        automaton=ltl_automaton(f, sigma, empty=empty),
    )


def _value(
    g: Formula,
    k: int,
    v: list[bool],
    pos: dict[Formula, int],
    prev: _Type | None,
    symbol: str,
    guessed: dict[int, bool],
) -> bool:
    """Subformula ``g``'s value in the new type, from the values ``v`` of its operands (listed
    before it), the previous type and the guesses of the future operators."""
    if k in guessed:
        return guessed[k]
    if isinstance(g, Atom):
        return g.symbol == symbol
    if isinstance(g, Const):
        return g.value
    if isinstance(g, Not):
        return not v[pos[g.arg]]
    if isinstance(g, And):
        return v[pos[g.left]] and v[pos[g.right]]
    if isinstance(g, Or):
        return v[pos[g.left]] or v[pos[g.right]]
    if isinstance(g, Implies):
        return not v[pos[g.left]] or v[pos[g.right]]
    if isinstance(g, Yesterday):
        return prev is not None and prev[pos[g.arg]]
    if isinstance(g, Since):
        return prev is not None and (prev[pos[g.right]] or (prev[pos[g.left]] and prev[pos[g]]))
    if isinstance(g, Once):
        return v[pos[g.arg]] or (prev is not None and prev[pos[g]])
    if isinstance(g, Historically):
        return v[pos[g.arg]] and (prev is None or prev[pos[g]])
    raise AssertionError(g)  # pragma: no cover  (future operators are guessed)


def _checks(subs: tuple[Formula, ...], pos: dict[Formula, int], p: _Type, t: _Type) -> bool:
    """The previous type's future guesses agree with the new type."""
    for k, g in enumerate(subs):
        if isinstance(g, Next):
            ok = p[k] == t[pos[g.arg]]
        elif isinstance(g, Until):
            ok = p[k] == (t[pos[g.right]] or (t[pos[g.left]] and t[k]))
        elif isinstance(g, Eventually):
            ok = p[k] == (p[pos[g.arg]] or t[k])
        elif isinstance(g, Always):
            ok = p[k] == (p[pos[g.arg]] and t[k])
        else:
            continue
        if not ok:
            return False
    return True
