"""Dyck(k, D) in plain Python: alphabet, membership, stacks, allowed next symbols, samplers and
the close-bracket metric. This is the ground truth the Yao et al. 2021 networks are checked
against; nothing here builds or runs a network.

Reference: Yao, Peng, Papadimitriou, Narasimhan 2021, *Self-Attention Networks Can Process
Bounded Hierarchical Languages*, §3.1 eq. (1)-(2) (Dyck_k and its depth bound), Definition 3.1
(generation) and Appendix D (data and metric); spec ``chiang2022_yao2021.md`` §3.1 and §3.7. The
sampler and the metric follow the reference code the spec read (Hewitt et al.'s ``DyckPDFA`` in
``generate_mbounded_dyck.py``; ``reporter.py`` of ``princeton-nlp/dyck-transformer``).

Words are tuples of symbols. For k <= 4 the symbols are single characters, type 1 ``()``,
2 ``[]``, 3 ``{}``, 4 ``<>``; for k > 4 they are ``(1``, ``)1``, ``(2``, ... and a word is written
space-separated. The start and end tokens γ, ω of the paper are *not* part of a word here: a word
is the bracket string u of γuω.

Dyck(k, D) is data that both the Yao et al. constructions (:mod:`netproof.constructions.yao2021`)
and the engines (fuzzing strategies, the precision search) use, so it lives in the vocabulary.
May import: the standard library and the languages of this package.

>>> k, D = 2, 2
>>> dyck_alphabet(k)
('(', ')', '[', ']')
>>> w = parse_word("([])[]", k)
>>> is_dyck(w, k, D), is_dyck(w, k, 1)
(True, False)
>>> stack_after(parse_word("([", k))
[1, 2]
>>> allowed_next(parse_word("([", k), k, D)
((']',), False)
>>> DYCK(k, D).contains(w)
True
>>> format_word(parse_word("(1 (7 )7 )1", 7), 7)
'(1 (7 )7 )1'
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from typing import TypedDict

from .languages import Automaton, Language, StackAutomaton, Word

__all__ = [
    "DYCK",
    "END",
    "K_VALUES",
    "TABLE1",
    "CloseAccuracy",
    "allowed_next",
    "bracket",
    "close_accuracy",
    "close_symbol",
    "depth_profile",
    "dyck_alphabet",
    "dyck_automaton",
    "dyck_stack",
    "format_word",
    "hewitt_dataset",
    "hewitt_next_distribution",
    "is_dyck",
    "open_symbol",
    "parse_word",
    "sample_hewitt",
    "sample_pcfg",
    "stack_after",
]

END = "END"
"""The end token of the Appendix-D data (ω of the paper). It is never part of a returned word,
but every length in Appendix D counts it: a word w has length ``len(w) + 1`` there."""

TABLE1: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {
    3: ((1, 84), (85, 168)),
    5: ((1, 180), (181, 360)),
    10: ((1, 700), (701, 1400)),
    15: ((1, 1620), (1621, 3240)),
}
"""Yao et al. 2021, Appendix D.1, Table 1: for each depth D, ((train/val min, max), (test min,
max)) lengths, END token included (spec §3.7)."""

K_VALUES: tuple[int, ...] = (2, 8, 32, 128)
"""The numbers of bracket types k of the Appendix-D experiments."""

_PAIRS = ("()", "[]", "{}", "<>")
_SINGLE: dict[str, tuple[bool, int]] = {
    **{p[0]: (True, t) for t, p in enumerate(_PAIRS, start=1)},
    **{p[1]: (False, t) for t, p in enumerate(_PAIRS, start=1)},
}
_DIGITS = frozenset("0123456789")


# --------------------------------------------------------------------------- validation


def _check_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}={value!r} must be an int >= 1, e.g. {name}=2")
    if value < 1:
        raise ValueError(f"{name}={value} must be >= 1")
    return value


def _check_kD(k: int, D: int) -> None:
    _check_positive("k", k)
    _check_positive("D", D)


def _check_type(t: int, k: int) -> None:
    _check_positive("k", k)
    if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= k:
        raise ValueError(f"t={t!r} is not a bracket type of Dyck with k={k}; types are 1..{k}")


# --------------------------------------------------------------------------- alphabet


@cache
def dyck_alphabet(k: int) -> tuple[str, ...]:
    """The 2k bracket symbols, ordered open 1, close 1, open 2, close 2, ...

    >>> dyck_alphabet(4)
    ('(', ')', '[', ']', '{', '}', '<', '>')
    >>> dyck_alphabet(5)[:4]
    ('(1', ')1', '(2', ')2')
    >>> dyck_alphabet(0)
    Traceback (most recent call last):
    ...
    ValueError: k=0 must be >= 1
    """
    _check_positive("k", k)
    return tuple(s for t in range(1, k + 1) for s in (open_symbol(t, k), close_symbol(t, k)))


@cache
def _alphabet_set(k: int) -> frozenset[str]:
    return frozenset(dyck_alphabet(k))


def open_symbol(t: int, k: int) -> str:
    """The open bracket of type t in the alphabet of Dyck with k types.

    >>> open_symbol(2, 2), open_symbol(2, 5)
    ('[', '(2')
    """
    _check_type(t, k)
    return _PAIRS[t - 1][0] if k <= len(_PAIRS) else f"({t}"


def close_symbol(t: int, k: int) -> str:
    """The close bracket of type t in the alphabet of Dyck with k types.

    >>> close_symbol(2, 2), close_symbol(2, 5)
    (']', ')2')
    """
    _check_type(t, k)
    return _PAIRS[t - 1][1] if k <= len(_PAIRS) else f"){t}"


def _parse(symbol: str) -> tuple[bool, int, bool]:
    """(is_open, type, numbered): ``numbered`` tells the ``(t`` spelling from the ``(`` one."""
    if symbol in _SINGLE:
        is_open, t = _SINGLE[symbol]
        return is_open, t, False
    if len(symbol) >= 2 and symbol[0] in "()" and set(symbol[1:]) <= _DIGITS and symbol[1] != "0":
        return symbol[0] == "(", int(symbol[1:]), True
    raise ValueError(
        f"symbol={symbol!r} is not a bracket; expected one of ( ) [ ] {{ }} < > (k <= 4) "
        f"or (t / )t with a type number t >= 1 (k > 4)"
    )


def bracket(symbol: str) -> tuple[bool, int]:
    """(is_open, type) of a bracket symbol, in either spelling.

    >>> bracket("["), bracket(")12")
    ((True, 2), (False, 12))
    >>> bracket("x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: symbol='x' is not a bracket; expected one of ( ) [ ] { } < > (k <= 4) or ...
    """
    is_open, t, _ = _parse(symbol)
    return is_open, t


def parse_word(text: str, k: int) -> Word:
    """A word from its written form: characters for k <= 4, space-separated tokens for k > 4.

    >>> parse_word("([])", 2)
    ('(', '[', ']', ')')
    >>> parse_word("(5 )5", 5)
    ('(5', ')5')
    """
    _check_positive("k", k)
    word = tuple(text.split()) if k > len(_PAIRS) else tuple(c for c in text if not c.isspace())
    alphabet = _alphabet_set(k)
    for s in word:
        if s not in alphabet:
            raise ValueError(
                f"symbol={s!r} in text={text!r} is not in the alphabet of k={k}: {dyck_alphabet(k)}"
            )
    return word


def format_word(word: Sequence[str], k: int) -> str:
    """The written form of a word (the inverse of :func:`parse_word`)."""
    _check_positive("k", k)
    return " ".join(word) if k > len(_PAIRS) else "".join(word)


# --------------------------------------------------------------------------- stacks and membership


def depth_profile(word: Sequence[str]) -> list[int]:
    """depth(w_{1:i}) = #open − #close for i = 1..|w| (eq. (2)); types are not checked.

    >>> depth_profile(("(", "[", ")", ")", ")"))
    [1, 2, 1, 0, -1]
    """
    depths: list[int] = []
    depth = 0
    for s in word:
        depth += 1 if _parse(s)[0] else -1
        depths.append(depth)
    return depths


def _stack(word: Iterable[str], D: int | None = None) -> list[tuple[int, bool]] | None:
    """The unmatched opens (type, numbered) after ``word``; ``None`` on a mismatch, an unmatched
    close, or (when ``D`` is given) a prefix deeper than D."""
    stack: list[tuple[int, bool]] = []
    for s in word:
        is_open, t, numbered = _parse(s)
        if is_open:
            stack.append((t, numbered))
            if D is not None and len(stack) > D:
                return None
        elif not stack or stack[-1] != (t, numbered):
            return None
        else:
            stack.pop()
    return stack


def stack_after(word: Sequence[str]) -> list[int] | None:
    """The types of the unmatched open brackets after reading ``word``, bottom first; ``None`` if
    a close bracket meets an empty stack or an open bracket of another type (or spelling).

    >>> stack_after(("(", "[", "]"))
    [1]
    >>> stack_after(("(", "]")) is None, stack_after((")",)) is None
    (True, True)
    """
    stack = _stack(word)
    return None if stack is None else [t for t, _ in stack]


def is_dyck(word: Sequence[str], k: int, D: int) -> bool:
    """Membership in Dyck(k, D): every symbol is in the alphabet of k, the word is balanced with
    matching types, and every prefix depth is at most D. The empty word is in Dyck(k, D).

    >>> is_dyck(parse_word("((()))", 1), 1, 2), is_dyck(parse_word("([)]", 2), 2, 2)
    (False, False)
    >>> is_dyck((), 3, 1)
    True
    """
    _check_kD(k, D)
    alphabet = _alphabet_set(k)
    stack: list[str] = []
    for s in word:
        if s not in alphabet:
            return False
        is_open, t, _ = _parse(s)
        if is_open:
            if len(stack) == D:
                return False
            stack.append(close_symbol(t, k))
        elif not stack or stack.pop() != s:
            return False
    return not stack


@cache
def DYCK(k: int, D: int) -> Language:
    """The reference :class:`~netproof.verifier.claims.languages.Language` Dyck(k, D) over the 2k brackets (γ and ω
    are not symbols of it); one object per (k, D).

    >>> L = DYCK(1, 2)
    >>> L.name, L.alphabet, L.contains(("(", "(", ")", ")")), DYCK(1, 2) is L
    ('Dyck(1,2)', ('(', ')'), True, True)
    """
    _check_kD(k, D)

    def contains(word: Word) -> bool:
        return is_dyck(word, k, D)

    return Language(
        name=f"Dyck({k},{D})",
        alphabet=dyck_alphabet(k),
        contains=contains,
        description=(
            f"balanced words over {k} bracket type(s) with prefix depth at most {D} "
            "(Yao et al. 2021 §3.1)"
        ),
        automaton=dyck_automaton(k, D) if _stacks(k, D) <= AUTOMATON_STATES else None,
        stack=dyck_stack(k, D),
    )


AUTOMATON_STATES = 4096
"""The most states :func:`DYCK` writes out as a DFA (one per stack of at most D of k types, and
a dead state); a larger Dyck(k, D) gives only its :class:`StackAutomaton` (Dyck(8, 10) has
1.2·10⁹ stacks)."""


def _stacks(k: int, D: int) -> int:
    stacks: int = sum(k**h for h in range(D + 1)) + 1
    return stacks


def dyck_stack(k: int, D: int) -> StackAutomaton:
    """Dyck(k, D) as a :class:`StackAutomaton`: the open bracket of type t pushes t - 1, the
    close one pops it, at most D deep.

    >>> S = dyck_stack(2, 2)
    >>> S.accepts([0, 2, 3, 1]), S.accepts([0, 0, 0, 1, 1, 1]), S.accepts([0, 3])   # ([]), ((())), (]
    (True, False, False)
    """
    _check_kD(k, D)
    return StackAutomaton(
        depth=D,
        types=k,
        push=tuple(t if i == 0 else None for t in range(k) for i in (0, 1)),
        pop=tuple(t if i == 1 else None for t in range(k) for i in (0, 1)),
    )


def dyck_automaton(k: int, D: int) -> Automaton:
    """Dyck(k, D) as a bounded-stack automaton: one state per stack of at most D open types
    (state 0 the empty stack, the only accepting one) and a dead state for a mismatch, an
    unmatched close or a prefix deeper than D.

    >>> A = dyck_automaton(2, 2)
    >>> A.states, A.accepts([0, 2, 3, 1]), A.accepts([0, 0, 0, 1, 1, 1])   # ([]) and ((()))
    (8, True, False)
    """
    _check_kD(k, D)
    stacks: list[tuple[int, ...]] = [()]
    index: dict[tuple[int, ...], int] = {(): 0}
    for stack in stacks:  # grows while it is read: breadth first over the stacks
        if len(stack) < D:
            for t in range(k):
                child = (*stack, t)
                index[child] = len(stacks)
                stacks.append(child)
    dead = len(stacks)
    delta: list[tuple[int, ...]] = []
    for stack in stacks:
        row = []
        for t in range(k):
            row.append(index.get((*stack, t), dead))  # open of type t
            row.append(index[stack[:-1]] if stack and stack[-1] == t else dead)  # close of type t
        delta.append(tuple(row))
    delta.append(tuple(dead for _ in range(2 * k)))
    return Automaton(states=dead + 1, start=0, accepting=frozenset({0}), delta=tuple(delta))


# --------------------------------------------------------------------------- allowed next symbols


def allowed_next(
    prefix: Sequence[str], k: int, D: int, *, n: int | None = None
) -> tuple[tuple[str, ...], bool]:
    """(allowed next brackets in alphabet order, whether ω may come next) after ``prefix``.

    Spec §3.1 (the reference ``dyck_lang.allowed_next``), with δ the stack depth after
    ``prefix``:

    - **G1** (``n=None``, length-unaware, Hewitt-style): every open iff δ < D; the close of the
      top type iff δ >= 1; ω iff δ = 0.
    - **G2** (``n`` = the total length of γuω, γ and ω included): ``prefix`` is the bracket
      prefix after γ, so its length in tokens is i = 1 + len(prefix). Every open iff δ < D and
      n − i >= δ + 3; the close of the top type iff δ >= 1; ω iff δ = 0 and n − i = 1.

    G2 is exact (a symbol is allowed iff some Dyck(k, D) word with n − 2 brackets extends
    prefix + symbol) on every prefix that itself extends to such a word, which is every prefix
    a generator can reach by following these sets. On other prefixes the rules are applied as
    written: they ignore the parity of n − i − δ, and the close is allowed even when
    n − i < δ + 1 (as in the paper's network, spec §3.4).

    An invalid prefix (a mismatched or unmatched close, or some prefix of it deeper than D)
    allows nothing:
    ``((), False)``. A symbol outside the alphabet of k, or (G2) a prefix longer than n − 2,
    is a ``ValueError``.

    >>> allowed_next((), 2, 1)
    (('(', '['), True)
    >>> allowed_next(("(",), 2, 1)
    ((')',), False)
    >>> allowed_next(("(",), 2, 2, n=4)
    ((')',), False)
    >>> allowed_next((")",), 2, 2)
    ((), False)
    """
    _check_kD(k, D)
    alphabet = _alphabet_set(k)
    for s in prefix:
        if s not in alphabet:
            raise ValueError(
                f"symbol={s!r} in prefix={tuple(prefix)!r} is not in the alphabet of k={k}: "
                f"{dyck_alphabet(k)}"
            )
    remaining: int | None = None
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"n={n!r} must be an int: the total length of γuω, γ and ω included")
        if len(prefix) > n - 2:
            raise ValueError(
                f"n={n} leaves room for n − 2 = {n - 2} brackets, but len(prefix)={len(prefix)}; "
                "n counts γ and ω, so pass n >= len(prefix) + 2"
            )
        i = 1 + len(prefix)
        remaining = n - i
    stack = _stack(prefix, D)
    if stack is None:
        return (), False
    delta = len(stack)
    opens_ok = delta < D and (remaining is None or remaining >= delta + 3)
    top_close = close_symbol(stack[-1][0], k) if stack else None
    end_ok = delta == 0 and (remaining is None or remaining == 1)
    allowed = tuple(s for s in dyck_alphabet(k) if (opens_ok and bracket(s)[0]) or s == top_close)
    return allowed, end_ok


# --------------------------------------------------------------------------- Hewitt sampler


def hewitt_next_distribution(prefix: Sequence[str], k: int, D: int) -> dict[str, Fraction]:
    """The next-token distribution of Hewitt et al.'s ``DyckPDFA`` (spec §3.7) after a valid
    ``prefix``, over the brackets and :data:`END`, exactly; symbols of probability 0 are left out.

    Empty stack: each open 1/(2k), END 1/2. Full stack (depth D): the close of the top, 1.
    Otherwise: each open 1/(2k), the close of the top 1/2. (The sampler's redraw of an END that
    comes before ``min_len`` brackets is not part of this distribution.)

    >>> hewitt_next_distribution(("(",), 2, 2)
    {'(': Fraction(1, 4), '[': Fraction(1, 4), ')': Fraction(1, 2)}
    >>> hewitt_next_distribution(("(", "["), 2, 2)
    {']': Fraction(1, 1)}
    """
    _check_kD(k, D)
    alphabet = _alphabet_set(k)
    stack = _stack(prefix, D) if all(s in alphabet for s in prefix) else None
    if stack is None:
        raise ValueError(
            f"prefix={tuple(prefix)!r} is not a prefix of a Dyck({k},{D}) word; "
            "the Hewitt distribution is defined on valid prefixes only"
        )
    if len(stack) == D:
        return {close_symbol(stack[-1][0], k): Fraction(1)}
    dist = {open_symbol(t, k): Fraction(1, 2 * k) for t in range(1, k + 1)}
    if stack:
        dist[close_symbol(stack[-1][0], k)] = Fraction(1, 2)
    else:
        dist[END] = Fraction(1, 2)
    return dist


def _check_lengths(min_len: int, max_len: int) -> None:
    for name, value in (("min_len", min_len), ("max_len", max_len)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}={value!r} must be an int")
    if min_len < 0:
        raise ValueError(f"min_len={min_len} must be >= 0")
    if max_len < min_len:
        raise ValueError(f"max_len={max_len} must be >= min_len={min_len}")


def sample_hewitt(
    rng: random.Random,
    k: int,
    D: int,
    *,
    min_len: int,
    max_len: int,
    max_tries: int = 100_000,
) -> Word:
    """One Dyck(k, D) word from Hewitt et al.'s ``DyckPDFA``, as Appendix D samples it (spec §3.7).

    Each step draws r = ``rng.randrange(2k)``, so the probabilities are exact: on an empty stack
    r < k opens type r + 1 (1/(2k) each) and r >= k is END (1/2); on a full stack (depth D) the
    top is closed (probability 1, no draw); otherwise r < k opens type r + 1 and r >= k closes the
    top (1/2). An END drawn while fewer than ``min_len`` brackets have been written is redrawn
    (the reference code's ``len(string) < length_min`` test, which does not count the END). A
    sample is kept iff ``min_len <= len <= max_len`` where len **counts the END token**, i.e.
    len = ``len(word) + 1``; otherwise the whole word is sampled again (a sample is abandoned as
    soon as it can no longer fit, which leaves the distribution of kept words unchanged).

    The returned word holds the brackets only; END is implicit. So every kept word has an even
    number of brackets, at least ``min_len`` of them, and at most ``max_len − 1``.
    ``ValueError`` if no word fits the range; ``RuntimeError`` after ``max_tries`` rejections.

    >>> w = sample_hewitt(random.Random(0), 2, 3, min_len=1, max_len=20)
    >>> is_dyck(w, 2, 3) and 1 <= len(w) + 1 <= 20
    True
    """
    _check_kD(k, D)
    _check_lengths(min_len, max_len)
    smallest = min_len + (
        min_len % 2
    )  # the fewest brackets a kept word can have (even, >= min_len)
    if smallest + 1 > max_len:
        raise ValueError(
            f"no Dyck word fits min_len={min_len}, max_len={max_len}: a kept word has an even "
            f"number b >= min_len of brackets and length b + 1 (END counted) <= max_len; "
            f"raise max_len to at least {smallest + 1}"
        )
    for _ in range(max_tries):
        word: list[str] = []
        stack: list[int] = []
        while len(word) + 1 <= max_len:
            if len(stack) == D:
                word.append(close_symbol(stack.pop(), k))
                continue
            r = rng.randrange(2 * k)
            if r < k:
                stack.append(r + 1)
                word.append(open_symbol(r + 1, k))
            elif stack:
                word.append(close_symbol(stack.pop(), k))
            elif len(word) >= min_len:  # END, allowed
                return tuple(word)  # len(word) + 1 <= max_len by the loop test
            # else: END before min_len brackets: redraw
    raise RuntimeError(
        f"sample_hewitt(k={k}, D={D}, min_len={min_len}, max_len={max_len}) rejected {max_tries} "
        "samples in a row; widen the length range or raise max_tries"
    )


def hewitt_dataset(
    seed: int, k: int, D: int, *, min_len: int, max_len: int, token_budget: int
) -> list[Word]:
    """Words from :func:`sample_hewitt` with ``random.Random(seed)``, added while the tokens
    written so far (END counted, ``len(word) + 1`` each) are fewer than ``token_budget``, as the
    reference ``write_dataset`` does; the last word may overshoot the budget. Deterministic for a
    seed (Python's generator, not torch's: the words differ from the paper's files).

    >>> words = hewitt_dataset(1, 2, 3, min_len=1, max_len=84, token_budget=200)
    >>> sum(len(w) + 1 for w in words) >= 200 > sum(len(w) + 1 for w in words[:-1])
    True
    """
    _check_kD(k, D)
    _check_lengths(min_len, max_len)
    _check_positive("token_budget", token_budget)
    rng = random.Random(seed)
    words: list[Word] = []
    written = 0
    while written < token_budget:
        word = sample_hewitt(rng, k, D, min_len=min_len, max_len=max_len)
        words.append(word)
        written += len(word) + 1
    return words


# --------------------------------------------------------------------------- PCFG sampler


def sample_pcfg(
    rng: random.Random,
    k: int,
    D: int,
    *,
    p_branch: float = 0.5,
    p_stop: float = 0.5,
    max_len: int,
    max_tries: int = 100_000,
) -> Word:
    """One Dyck(k, D) word from the grammar S → ε | ⟨_τ S ⟩_τ S (eq. (1)), with the two S on the
    right-hand side given their own probabilities and the depth bounded by D:

    - ``A_d`` (the S *inside* a pair, at depth d): ε with probability 1 − ``p_branch``, else
      ⟨_τ A_{d+1} ⟩_τ B_d with τ uniform (``p_branch``/k each); at d = D only ε.
    - ``B_d`` (the S *after* a pair, and the start symbol B_0): ε with probability ``p_stop``,
      else ⟨_τ A_{d+1} ⟩_τ B_d with τ uniform ((1 − ``p_stop``)/k each).

    So ``p_branch`` controls nesting and ``p_stop`` the number of siblings; the empty word has
    probability ``p_stop``. Words with more than ``max_len`` brackets are rejected and sampled
    again (``RuntimeError`` after ``max_tries`` rejections). Draws use ``rng.random()`` (against
    the probabilities) and ``rng.randrange(k)`` (the type).

    >>> w = sample_pcfg(random.Random(0), 2, 2, max_len=30)
    >>> is_dyck(w, 2, 2) and len(w) <= 30
    True
    """
    _check_kD(k, D)
    for name, p in (("p_branch", p_branch), ("p_stop", p_stop)):
        if isinstance(p, bool) or not isinstance(p, (int, float, Fraction)):
            raise TypeError(f"{name}={p!r} must be a probability (a float in [0, 1])")
    if not 0 <= p_branch <= 1:
        raise ValueError(f"p_branch={p_branch} must lie in [0, 1]")
    if not 0 < p_stop <= 1:
        raise ValueError(f"p_stop={p_stop} must lie in (0, 1]; with p_stop=0 no word ever ends")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 0:
        raise ValueError(f"max_len={max_len!r} must be an int >= 0 (a number of brackets)")
    for _ in range(max_tries):
        word: list[str] = []
        stack: list[int] = []
        inside = False  # True: expanding A_d (just opened); False: expanding B_d
        while len(word) <= max_len:
            depth = len(stack)
            expand = (depth < D and rng.random() < p_branch) if inside else rng.random() >= p_stop
            if expand:
                t = rng.randrange(k) + 1
                stack.append(t)
                word.append(open_symbol(t, k))
                inside = True
            elif stack:
                word.append(close_symbol(stack.pop(), k))
                inside = False
            else:
                return tuple(word)
    raise RuntimeError(
        f"sample_pcfg(k={k}, D={D}, p_branch={p_branch}, p_stop={p_stop}) rejected {max_tries} "
        f"words longer than max_len={max_len} in a row; raise p_stop or max_len"
    )


# --------------------------------------------------------------------------- Appendix D metric


class CloseAccuracy(TypedDict):
    """The result of :func:`close_accuracy`."""

    pooled: float
    """E_l p_l: correct / counted over all positions."""
    mean_over_distance: float
    """mean_l p_l: the average over the distances l met of the per-l accuracy."""
    correct: int
    counted: int
    per_distance: dict[int, tuple[int, int]]
    """l -> (correct, counted)."""


def close_accuracy(
    words: Iterable[Sequence[str]], predict: Callable[[Word], Mapping[str, float | Fraction]]
) -> CloseAccuracy:
    """The close-bracket accuracy of Appendix D (spec §3.7; ``reporter.py``'s
    ``eval_closing_bracket_constraint`` with ``P_THRESHOLD = .8``).

    For every word and every position t = 1..|w| after which the stack is non-empty,
    ``predict(w[:t])`` gives the next-symbol probabilities, and the position is correct iff
    P(close of the top type) / Σ_τ P(close_τ) > 0.8, tested as 5·P(top) > 4·Σ (exact for
    ``Fraction``; a prediction with no close mass is incorrect). Keys that are not brackets
    (e.g. END) are ignored and missing closes have probability 0. Positions whose gold next token
    is an open bracket count too. The distance is l = t − (index of the top open bracket), both
    1-based in w, so l = 0 right after an open.

    A word that is not a valid Dyck prefix (mismatch or unmatched close) is a ``ValueError``, and
    so is an input without any counted position.

    >>> words = [parse_word("([])", 2)]
    >>> acc = close_accuracy(words, lambda p: hewitt_next_distribution(p, 2, 2))
    >>> acc["pooled"], acc["counted"], acc["per_distance"]
    (1.0, 3, {0: (2, 2), 2: (1, 1)})
    """
    per: dict[int, list[int]] = {}
    for word in words:
        word = tuple(word)
        stack: list[tuple[int, bool, int]] = []  # (type, numbered, 1-based index of the open)
        for t, s in enumerate(word, start=1):
            is_open, typ, numbered = _parse(s)
            if is_open:
                stack.append((typ, numbered, t))
            elif not stack or stack[-1][:2] != (typ, numbered):
                raise ValueError(
                    f"word={word!r} has an unmatched or mismatched close {s!r} at t={t}; "
                    "the metric is defined on Dyck words (and their prefixes) only"
                )
            else:
                stack.pop()
            if not stack:
                continue
            top_type, _, top_index = stack[-1]
            top_mass: float | Fraction = 0
            close_mass: float | Fraction = 0
            for symbol, p in predict(word[:t]).items():
                try:
                    sym_open, sym_type = bracket(symbol)
                except ValueError:
                    continue
                if not sym_open:
                    close_mass += p
                    if sym_type == top_type:
                        top_mass += p
            entry = per.setdefault(t - top_index, [0, 0])
            entry[0] += 1 if 5 * top_mass > 4 * close_mass else 0
            entry[1] += 1
    counted = sum(c for _, c in per.values())
    if counted == 0:
        raise ValueError("no position with a non-empty stack: the close accuracy is undefined")
    correct = sum(c for c, _ in per.values())
    per_distance = {d: (c, m) for d, (c, m) in sorted(per.items())}
    return CloseAccuracy(
        pooled=correct / counted,
        mean_over_distance=sum(c / m for c, m in per_distance.values()) / len(per_distance),
        correct=correct,
        counted=counted,
        per_distance=per_distance,
    )
