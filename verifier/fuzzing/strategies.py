"""Hypothesis strategies for netproof: words of the papers' languages and their near-misses,
random networks of the IR, random σ-RNNs and two-stack machines.

Every word is a tuple of symbols (as :class:`netproof.verifier.claims.Language` takes it). The word
strategies are built so that hypothesis shrinks well: a Dyck word is a list of small integers
read as a walk (deleting an entry deletes a step; lowering one turns an open into a close), so
a failing member shrinks towards the shortest failing member.

Use them in your own tests::

    from hypothesis import given, settings

    from netproof.verifier.claims.dyck import is_dyck
    from netproof.verifier.fuzzing.strategies import dyck_words, near_misses

    @given(dyck_words(k=2, depth=3, max_len=40))
    def test_my_recognizer_accepts_members(w):
        assert my_recognizer(w)

    @given(near_misses(k=2, depth=3, max_len=40))
    def test_my_recognizer_rejects_near_misses(w):
        assert not is_dyck(w, 2, 3) and not my_recognizer(w)

    settings.load_profile("netproof-ci")  # derandomized, no example database (for CI)

What there is:

- words of any alphabet: :func:`words` (uniform symbols), :func:`long_words`;
- Dyck(k, D) (Yao et al. 2021 §3.1): :func:`dyck_words` (members, every depth up to D),
  :func:`dyck_prefixes` (prefixes of members, for the generator), :func:`near_misses`
  (members with one or two edits: a swapped bracket type, a deleted or inserted symbol, a
  depth overflow, a top-level pair turned inside out; never members);
- PARITY and FIRST (Chiang & Cholak 2022): :func:`parity_words`, :func:`parity_near_misses`,
  :func:`first_words`, :func:`first_near_misses`;
- any :class:`~netproof.verifier.claims.Language`: :func:`members`, :func:`non_members` (the strategies
  above for Dyck, PARITY and FIRST, filtering uniform words otherwise) and :func:`language_words`
  (a mix of uniform words, members, non-members and long members: what ``netproof fuzz`` draws);
- :func:`networks`: small valid IR networks (hardmax heads with every mask, scoring and tie
  rule, softmax heads with exact integer scores, FFNs of every activation, W^O, residual and
  plain sublayers, a :class:`~netproof.symbolic.Classifier`), for differential tests of interpreters;
- :func:`sigma_rnns` and :func:`two_stack_machines`: random :mod:`netproof.verifier.claims.machines`.

The settings profile :data:`CI_PROFILE` (``"netproof-ci"``) is registered on import:
derandomized, no example database, no deadline.

May import: hypothesis, the claims vocabulary (languages, Dyck(k, D), reference machines) and the
IR (:mod:`netproof.symbolic`); never an engine, campaigns, the CLI or a paper module.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, TypeAlias

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from netproof.symbolic import (
    RELU,
    SIGMA,
    STEP,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Softmax,
    Sublayer,
    affine,
    classifier,
    constant,
    ffn,
    token_embedding,
)
from netproof.symbolic.ir import MASKS, SCORINGS, TIE_RULES
from netproof.verifier.claims import Language, dyck
from netproof.verifier.claims.machines import (
    EMPTY,
    KEEP,
    POP,
    SigmaRNN,
    StackOp,
    Transition,
    TwoStackMachine,
    push,
    sigma_rnn,
)

__all__ = [
    "CI_PROFILE",
    "DEFAULT_MAX_LEN",
    "NEAR_MISS_EDITS",
    "dyck_prefixes",
    "dyck_words",
    "first_near_misses",
    "first_words",
    "language_words",
    "long_words",
    "members",
    "near_misses",
    "networks",
    "non_members",
    "parity_near_misses",
    "parity_words",
    "sigma_rnns",
    "two_stack_machines",
    "words",
]

Word: TypeAlias = tuple[str, ...]

DEFAULT_MAX_LEN = 40
"""The default longest word of the word strategies."""

CI_PROFILE = "netproof-ci"
"""A hypothesis settings profile for CI: derandomized (the same examples every run), no example
database, no deadline. Load it with ``settings.load_profile("netproof-ci")``."""

settings.register_profile(
    CI_PROFILE,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NEAR_MISS_EDITS: tuple[str, ...] = ("delete", "insert", "swap_type", "turn_pair", "overflow")
"""The edits :func:`near_misses` applies, in the order hypothesis shrinks towards: delete a
symbol, insert a symbol, swap a bracket's type (k >= 2), turn a top-level pair ``(u)`` into
``)u(``, wrap the deepest part in pairs until the depth is D + 1."""


def _check_lengths(min_len: int, max_len: int) -> None:
    for name, value in (("min_len", min_len), ("max_len", max_len)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}={value!r} must be an int")
    if min_len < 0:
        raise ValueError(f"min_len={min_len} must be >= 0")
    if max_len < min_len:
        raise ValueError(
            f"max_len={max_len} must be >= min_len={min_len}; raise max_len or lower min_len"
        )


def _check_kD(k: int, depth: int) -> None:
    for name, value in (("k", k), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be an int >= 1, e.g. {name}=2")


# --------------------------------------------------------------------------- plain words


def words(
    alphabet: Sequence[str], *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Words of ``alphabet`` with ``min_len <= |w| <= max_len``, each symbol drawn on its own.
    They shrink towards shorter words and towards the first symbols of ``alphabet`` (so towards
    the shortlex order the exhaustive checker uses)."""
    _check_lengths(min_len, max_len)
    symbols = tuple(alphabet)
    if not symbols:
        raise ValueError("alphabet is empty; give at least one symbol")
    return st.lists(st.sampled_from(symbols), min_size=min_len, max_size=max_len).map(tuple)


def long_words(
    alphabet: Sequence[str], *, min_len: int = 100, max_len: int = 400
) -> st.SearchStrategy[Word]:
    """:func:`words` of lengths ``min_len..max_len`` (default 100..400)."""
    return words(alphabet, min_len=min_len, max_len=max_len)


# --------------------------------------------------------------------------- Dyck


def _walk(steps: Sequence[int], k: int, depth: int, max_len: int, *, close: bool) -> Word:
    """Read ``steps`` (integers in 0..2k−1) as a walk through Dyck(k, depth).

    A step v < k closes the top if the stack is not empty (else opens type v + 1); a step v >= k
    opens type v − k + 1 if the depth and the room allow it (else closes). Room: a word and its
    stack never need more than ``max_len`` symbols, so with ``close`` the stack is closed at the
    end and the word has at most ``max_len`` symbols; without it the result is a prefix v with
    |v| + depth(v) <= max_len (the prefixes :func:`netproof.constructions.yao2021.valid_prefixes` lists).
    """
    opens = [dyck.open_symbol(t, k) for t in range(1, k + 1)]
    closes = [dyck.close_symbol(t, k) for t in range(1, k + 1)]
    word: list[str] = []
    stack: list[int] = []
    for v in steps:
        can_open = len(stack) < depth and len(word) + len(stack) + 2 <= max_len
        if stack and (v < k or not can_open):
            word.append(closes[stack.pop()])
        elif can_open:
            t = v % k
            stack.append(t)
            word.append(opens[t])
        else:
            break  # the stack is empty and no pair fits: the word is as long as it may be
    if close:
        word += [closes[t] for t in reversed(stack)]
    return tuple(word)


def dyck_words(
    k: int, depth: int, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Members of Dyck(k, D) (``D = depth``) with ``min_len <= |w| <= max_len``.

    Drawn as a list of steps of a walk (see :func:`_walk`), each step an open or a close with
    probability about 1/2, so the depth covers 0..D (a walk of n steps wanders about √n deep;
    long words hit the bound D often). Shrinks towards fewer pairs and towards ``()()…``.
    """
    _check_kD(k, depth)
    _check_lengths(min_len, max_len)
    top = max_len - max_len % 2
    if min_len + min_len % 2 > top:
        raise ValueError(
            f"no Dyck word has a length in {min_len}..{max_len} (lengths are even); widen the range"
        )
    steps = st.lists(st.integers(0, 2 * k - 1), min_size=min_len, max_size=max(min_len, top))
    return steps.map(lambda s: _walk(s, k, depth, top, close=True))


def dyck_prefixes(
    k: int, depth: int, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Prefixes v of members of Dyck(k, D) with room to close: ``|v| + depth(v) <= max_len``
    and ``min_len <= |v|`` (the inputs of the generator of Theorem 4.2, read as G1)."""
    _check_kD(k, depth)
    _check_lengths(min_len, max_len)
    steps = st.lists(st.integers(0, 2 * k - 1), min_size=min_len, max_size=max_len)

    def prefix(s: list[int]) -> Word:
        return _walk(s, k, depth, max_len, close=False)

    # The walk stops early only when it is within one symbol of max_len, so |v| >= min_len
    # except when min_len = max_len and the parity forbids it: filter that corner.
    return steps.map(prefix).filter(lambda v: len(v) >= min_len)


def _pairs(w: Word) -> list[tuple[int, int]]:
    """(open index, partner close index) of every pair, matched by depth (types ignored),
    outermost first in order of the opens; unmatched symbols are left out."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    for i, s in enumerate(w):
        if dyck.bracket(s)[0]:
            stack.append(i)
        elif stack:
            pairs.append((stack.pop(), i))
    return sorted(pairs)


def _depths(w: Word) -> list[int]:
    return dyck.depth_profile(w)


Draw: TypeAlias = st.DrawFn


def _edit(draw: Draw, kind: str, w: Word, k: int, depth: int, max_len: int) -> Word:
    """One edit of ``w`` (see :data:`NEAR_MISS_EDITS`); an edit that does not apply (nothing to
    delete, k = 1 for a type swap, no pair, no room) falls back to the next simpler one."""
    alphabet = dyck.dyck_alphabet(k)
    if kind == "overflow":
        prof = _depths(w)
        h = max(prof, default=0)
        times = max(1, depth - max(h, 0) + 1)
        if len(w) + 2 * times <= max_len:
            types = draw(st.lists(st.integers(1, k), min_size=times, max_size=times))
            opens = tuple(dyck.open_symbol(t, k) for t in types)
            closes = tuple(dyck.close_symbol(t, k) for t in reversed(types))
            # Wrap the top-level pair around the first deepest point (depth h + times = D + 1);
            # in a word without one (ε), nest D + 1 pairs in front.
            for i, j in _pairs(w):
                if h >= 1 and (i == 0 or prof[i - 1] == 0) and max(prof[i : j + 1]) == h:
                    return (*w[:i], *opens, *w[i : j + 1], *closes, *w[j + 1 :])
            return (*opens, *closes, *w)
        kind = "turn_pair"
    if kind == "turn_pair":
        prof = _depths(w)
        top = [(i, j) for i, j in _pairs(w) if i == 0 or prof[i - 1] == 0]
        if top:
            i, j = top[draw(st.integers(0, len(top) - 1))]
            edited = list(w)
            edited[i], edited[j] = w[j], w[i]
            return tuple(edited)
        kind = "swap_type"
    if kind == "swap_type":
        if w and k >= 2:
            i = draw(st.integers(0, len(w) - 1))
            is_open, t = dyck.bracket(w[i])
            other = draw(st.integers(1, k - 1))
            t2 = other if other < t else other + 1
            return (
                *w[:i],
                dyck.open_symbol(t2, k) if is_open else dyck.close_symbol(t2, k),
                *w[i + 1 :],
            )
        kind = "delete"
    if kind == "delete" and w:
        i = draw(st.integers(0, len(w) - 1))
        return w[:i] + w[i + 1 :]
    if len(w) + 1 > max_len:  # no room to insert: delete instead
        i = draw(st.integers(0, len(w) - 1))
        return w[:i] + w[i + 1 :]
    i = draw(st.integers(0, len(w)))
    return (*w[:i], draw(st.sampled_from(alphabet)), *w[i:])


def near_misses(
    k: int, depth: int, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN, max_edits: int = 2
) -> st.SearchStrategy[Word]:
    """Non-members of Dyck(k, D) one or two edits away from a member (see
    :data:`NEAR_MISS_EDITS`), with ``min_len <= |w| <= max_len``.

    One edit of a member is never a member: a deletion or insertion makes the length odd, a
    type swap mismatches a pair, a turned top-level pair starts with a close at depth 0, an
    overflow reaches depth D + 1. Two edits can undo each other; those words (few) are
    filtered out. ``max_len >= 1`` is needed (the shortest near-misses have length 1).
    """
    _check_kD(k, depth)
    _check_lengths(min_len, max_len)
    if max_len < 1:
        raise ValueError(
            f"max_len={max_len}: every near-miss has at least one symbol; use max_len >= 1"
        )
    if max_edits not in (1, 2):
        raise ValueError(f"max_edits={max_edits!r} must be 1 or 2")

    @st.composite
    def draw_near_miss(draw: Draw) -> Word:
        edits = draw(st.integers(1, max_edits))
        # Room for the edits: each changes the length by one, except an overflow (which falls
        # back to another edit when it does not fit).
        base_max = max(0, max_len - edits)
        base_min = 0 if min_len == 0 else min(min_len + edits, base_max - base_max % 2)
        w = draw(dyck_words(k, depth, min_len=base_min, max_len=base_max))
        for _ in range(edits):
            w = _edit(draw, draw(st.sampled_from(NEAR_MISS_EDITS)), w, k, depth, max_len)
        return w

    return draw_near_miss().filter(
        lambda w: min_len <= len(w) <= max_len and not dyck.is_dyck(w, k, depth)
    )


# --------------------------------------------------------------------------- PARITY and FIRST


def _ones(w: Word) -> int:
    return w.count("1")


def parity_words(
    *, member: bool = True, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Words over {0, 1} with an odd number of 1s (``member``) or an even one (not): a uniform
    word whose last symbol is flipped when its parity is wrong (the empty word, when it must
    have an odd number of 1s, becomes ``1`` if ``max_len`` allows)."""
    _check_lengths(min_len, max_len)
    if member and max_len < 1:
        raise ValueError("every member of PARITY has at least one symbol; use max_len >= 1")

    def fix(w: Word) -> Word:
        if (_ones(w) % 2 == 1) == member:
            return w
        if not w:
            return ("1",)
        return (*w[:-1], "1" if w[-1] == "0" else "0")

    return words(("0", "1"), min_len=min_len, max_len=max_len).map(fix)


def parity_near_misses(
    *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Non-members of PARITY one edit from a member: a flipped symbol, an inserted 1 or a
    deleted 1 (each changes the number of 1s by one)."""
    _check_lengths(min_len, max_len)

    @st.composite
    def draw_near_miss(draw: Draw) -> Word:
        w = draw(
            parity_words(member=True, min_len=max(min_len - 1, 0), max_len=max(max_len - 1, 1))
        )
        kind = draw(st.sampled_from(("flip", "insert", "delete")))
        ones = [i for i, s in enumerate(w) if s == "1"]
        if kind == "delete" and len(w) - 1 >= min_len:
            i = ones[draw(st.integers(0, len(ones) - 1))]
            return w[:i] + w[i + 1 :]
        if kind == "insert" and len(w) + 1 <= max_len:
            i = draw(st.integers(0, len(w)))
            return (*w[:i], "1", *w[i:])
        i = draw(st.integers(0, len(w) - 1))
        return (*w[:i], "1" if w[i] == "0" else "0", *w[i + 1 :])

    return draw_near_miss().filter(lambda w: min_len <= len(w) <= max_len)


def first_words(
    *, member: bool = True, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Words over {0, 1} whose first symbol is 1 (``member``) or not (the empty word or a
    word starting with 0)."""
    _check_lengths(min_len, max_len)
    if member and max_len < 1:
        raise ValueError("every member of FIRST has at least one symbol; use max_len >= 1")
    head = "1" if member else "0"

    def fix(w: Word) -> Word:
        if member and not w:
            return ("1",)
        return (head, *w[1:]) if w else w

    return words(("0", "1"), min_len=min_len, max_len=max_len).map(fix)


def first_near_misses(
    *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Non-members of FIRST one edit from a member: its first symbol flipped to 0, a 0
    inserted in front, or (for the member ``1``) the 1 deleted."""
    _check_lengths(min_len, max_len)

    @st.composite
    def draw_near_miss(draw: Draw) -> Word:
        w = draw(first_words(member=True, min_len=max(min_len - 1, 1), max_len=max(max_len - 1, 1)))
        kind = draw(st.sampled_from(("flip", "insert", "delete")))
        if kind == "delete" and len(w) == 1 and min_len == 0:
            return ()
        if kind == "insert" and len(w) + 1 <= max_len:
            return ("0", *w)
        return ("0", *w[1:])

    return draw_near_miss().filter(lambda w: min_len <= len(w) <= max_len)


# --------------------------------------------------------------------------- any language

_DYCK_NAME = re.compile(r"Dyck\((\d+),(\d+)\)")


def _kind(language: Language) -> tuple[str, int, int]:
    """("dyck", k, D), ("parity", 0, 0), ("first", 0, 0) for the papers' languages (the very
    objects of :mod:`netproof.constructions`), else ("other", 0, 0)."""
    match = _DYCK_NAME.fullmatch(language.name)
    if match:
        k, D = int(match.group(1)), int(match.group(2))
        if k >= 1 and D >= 1 and dyck.DYCK(k, D) is language:
            return "dyck", k, D
    from netproof.verifier.claims.languages import FIRST, PARITY

    if language is PARITY:
        return "parity", 0, 0
    if language is FIRST:
        return "first", 0, 0
    return "other", 0, 0


def members(
    language: Language, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Members of ``language``: :func:`dyck_words`, :func:`parity_words` or :func:`first_words`
    for the papers' languages, else uniform words filtered by ``language.contains`` (fine for
    a language with a fair share of the words; a sparse one makes hypothesis give up)."""
    kind, k, D = _kind(language)
    if kind == "dyck":
        return dyck_words(k, D, min_len=min_len, max_len=max_len)
    if kind == "parity":
        return parity_words(member=True, min_len=min_len, max_len=max_len)
    if kind == "first":
        return first_words(member=True, min_len=min_len, max_len=max_len)
    return words(language.alphabet, min_len=min_len, max_len=max_len).filter(language.contains)


def non_members(
    language: Language, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """Non-members of ``language`` close to members: :func:`near_misses`,
    :func:`parity_near_misses` or :func:`first_near_misses` for the papers' languages, else
    uniform words filtered by ``not language.contains``."""
    kind, k, D = _kind(language)
    if kind == "dyck":
        return near_misses(k, D, min_len=min_len, max_len=max(max_len, 1))
    if kind == "parity":
        return parity_near_misses(min_len=min_len, max_len=max_len)
    if kind == "first":
        return first_near_misses(min_len=min_len, max_len=max_len)
    return words(language.alphabet, min_len=min_len, max_len=max_len).filter(
        lambda w: not language.contains(w)
    )


def language_words(
    language: Language, *, min_len: int = 0, max_len: int = DEFAULT_MAX_LEN
) -> st.SearchStrategy[Word]:
    """The mix ``netproof fuzz`` draws for a claim about ``language``: uniform words (first, so
    that shrinking ends on the shortlex-smallest word it can), members, non-members, and, when
    ``max_len >= 20``, long members and long words (at least half of ``max_len``)."""
    _check_lengths(min_len, max_len)
    kind, _, _ = _kind(language)
    parts: list[st.SearchStrategy[Word]] = [
        words(language.alphabet, min_len=min_len, max_len=max_len)
    ]
    for make in (members, non_members):
        with contextlib.suppress(ValueError):  # e.g. no member fits the lengths
            parts.append(make(language, min_len=min_len, max_len=max_len))
    if max_len >= 20:
        long_min = max(min_len, max_len // 2)
        if kind != "other":
            with contextlib.suppress(ValueError):
                parts.append(members(language, min_len=long_min, max_len=max_len))
        parts.append(words(language.alphabet, min_len=long_min, max_len=max_len))
    return st.one_of(parts)


# --------------------------------------------------------------------------- networks

_SMALL = st.integers(-2, 2)
_HALVES = st.sampled_from((Fraction(1, 2), Fraction(-1, 3), Fraction(1), Fraction(2, 3)))
_FEATURES = ("i/n", "1/2^i", "cos(iπ)", "i")


@st.composite
def _network(draw: Draw, alphabet: tuple[str, ...], max_layers: int, softmax: bool) -> Network:
    dims = ("d0", "d1", "d2", "p", "z")
    table: dict[str, dict[str, Any]] = {}
    for s in (*alphabet, "S", "E"):
        table[s] = {d: draw(_SMALL) for d in ("d0", "d1", "d2", "z")}
    table["S"]["d2"] = draw(_HALVES)
    emb = token_embedding(
        alphabet,
        table,
        positional={
            "p": draw(st.sampled_from(_FEATURES)),
            "d0": ("1/n", draw(st.sampled_from((Fraction(1), Fraction(1, 2))))),
        },
        prefix=("S",),
        suffix=("E",) if draw(st.booleans()) else (),
        index_base=draw(st.sampled_from((0, 1))),
    )
    layers: list[Sublayer] = []
    for idx in range(draw(st.integers(1, max_layers))):
        residual = draw(st.booleans()) or draw(st.booleans())
        if draw(st.integers(0, 2)) == 0:
            block = ffn(
                f"f{idx}",
                affine(
                    {"h": {"d1": draw(_SMALL), "p": draw(_SMALL)}, "g": {"d0": Fraction(1, 2)}},
                    bias={"h": draw(_HALVES)},
                ),
                draw(st.sampled_from((RELU, SIGMA, STEP))),
                affine({"d2": {"h": 1, "g": draw(_SMALL)}}),
            )
            layers.append(Sublayer(block=block, residual=residual))
            continue
        outs: tuple[tuple[str, ...], ...] = (
            (("d1",), ("d2",)) if draw(st.booleans()) else (("d1", "d2"),)
        )
        with_output = draw(st.integers(0, 2)) == 0
        heads = []
        for hi, written in enumerate(outs):
            value = affine(
                {
                    (f"v{hi}{o}" if with_output else o): {
                        "d0": draw(_SMALL),
                        "p": draw(_SMALL),
                        "d2": Fraction(1, 2),
                    }
                    for o in written
                }
            )
            mask = draw(st.sampled_from(MASKS))
            scoring = draw(st.sampled_from(SCORINGS))
            if softmax and draw(st.integers(0, 2)) == 0:
                # Integer scores (a constant query against the integer token feature z) keep
                # base^score rational, so the exact interpreter can run the head.
                heads.append(
                    Head(
                        name=f"h{hi}",
                        query=constant({"q": draw(_SMALL)}),
                        key=affine({"q": {"z": draw(_SMALL)}}),
                        value=value,
                        normalizer=Softmax(
                            r=draw(st.sampled_from((Fraction(2), Fraction(3), Fraction(1, 2))))
                        ),
                        scoring=scoring,
                        mask=mask,
                    )
                )
                continue
            heads.append(
                Head(
                    name=f"h{hi}",
                    query=affine(
                        {"q": {"d0": draw(_SMALL), "p": draw(_SMALL)}, "r": {"d1": 1}},
                        bias={"q": draw(_SMALL)},
                    ),
                    key=affine(
                        {"q": {"d0": draw(_SMALL), "p": draw(_SMALL)}, "r": {"d2": draw(_SMALL)}}
                    ),
                    value=value,
                    normalizer=Hardmax(tie=draw(st.sampled_from(TIE_RULES))),
                    scoring=scoring,
                    mask=mask,
                )
            )
        output = None
        if with_output:
            names = [o for h in heads for o in h.value.outputs]
            output = affine({"d1": {names[0]: 2}, "d0": {names[-1]: Fraction(-1, 3)}}, inputs=names)
        layers.append(
            Sublayer(
                block=AttentionLayer(name=f"a{idx}", heads=tuple(heads), output=output),
                residual=residual,
            )
        )
    return Network(
        name="random",
        dims=dims,
        embedding=emb,
        layers=tuple(layers),
        readout=classifier(
            {"d1": 1, "d2": -1, "p": Fraction(1, 5)},
            position=draw(st.sampled_from((0, -1))),
            bias=Fraction(1, 7),
        ),
    )


def networks(
    *, alphabet: Sequence[str] = ("a", "b", "c"), max_layers: int = 4, softmax: bool = True
) -> st.SearchStrategy[Network]:
    """Small valid networks over ``alphabet`` (dims ``d0 d1 d2 p z``, a CLS token ``S`` first,
    sometimes an end token ``E``), 1..``max_layers`` sublayers: hardmax heads with every mask,
    scoring and tie rule; with ``softmax``, softmax heads of base 2, 3 or 1/2 whose scores are
    integers (so the exact interpreter runs them); FFNs with relu, sigma or step; attention with
    and without W^O; residual and plain sublayers; positional features; a Classifier at the
    first or last token. Every word of the alphabet runs (empty masked sets yield zero).
    Networks without softmax heads are also what :mod:`netproof.symbolic.batched` supports."""
    symbols = tuple(alphabet)
    if not symbols or any(s in ("S", "E") for s in symbols):
        raise ValueError(
            f"alphabet={symbols!r} must be non-empty and must not use the special tokens 'S' and 'E'"
        )
    if isinstance(max_layers, bool) or not isinstance(max_layers, int) or max_layers < 1:
        raise ValueError(f"max_layers={max_layers!r} must be an int >= 1")
    return _network(symbols, max_layers, softmax)


# --------------------------------------------------------------------------- machines

_WEIGHTS = st.sampled_from((*map(Fraction, (-2, -1, 0, 1, 2)), Fraction(1, 2), Fraction(-1, 2)))
_UNIT = st.sampled_from((Fraction(0), Fraction(1, 2), Fraction(1), Fraction(1, 3)))


def sigma_rnns(
    *, alphabet: Sequence[str] = ("0", "1"), max_units: int = 3
) -> st.SearchStrategy[SigmaRNN]:
    """Random :class:`~netproof.verifier.claims.machines.SigmaRNN` over ``alphabet`` with 1..``max_units``
    hidden units, weights in {−2, −1, −1/2, 0, 1/2, 1, 2} and h0 in [0, 1]."""
    symbols = tuple(alphabet)
    if not symbols:
        raise ValueError("alphabet is empty; give at least one symbol")
    if isinstance(max_units, bool) or not isinstance(max_units, int) or max_units < 1:
        raise ValueError(f"max_units={max_units!r} must be an int >= 1")

    @st.composite
    def draw_rnn(draw: Draw) -> SigmaRNN:
        d = draw(st.integers(1, max_units))

        def vec(n: int, xs: st.SearchStrategy[Fraction] = _WEIGHTS) -> list[Fraction]:
            return draw(st.lists(xs, min_size=n, max_size=n))

        return sigma_rnn(
            symbols,
            W_h=[vec(d) for _ in range(d)],
            W_x=[vec(len(symbols)) for _ in range(d)],
            b=vec(d),
            h0=vec(d, _UNIT),
            readout=vec(d),
            readout_bias=draw(_WEIGHTS),
        )

    return draw_rnn()


def two_stack_machines(
    *, input_alphabet: Sequence[str] = ("a", "b"), extra_stack_symbols: int = 1, max_states: int = 3
) -> st.SearchStrategy[TwoStackMachine]:
    """Random deterministic :class:`~netproof.verifier.claims.machines.TwoStackMachine`: 1..``max_states``
    states ``q0`` (start), ``q1``, ...; stack symbols the input symbols plus
    ``extra_stack_symbols`` more (``x0``, ``x1``, ...); for each (state, top1, top2) a
    transition or none, never popping an empty stack; a random set of accepting states."""
    inputs = tuple(input_alphabet)
    if not inputs or EMPTY in inputs:
        raise ValueError(f"input_alphabet={inputs!r} must be non-empty symbols")
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1:
        raise ValueError(f"max_states={max_states!r} must be an int >= 1")
    gamma = (*inputs, *(f"x{i}" for i in range(extra_stack_symbols)))

    @st.composite
    def draw_machine(draw: Draw) -> TwoStackMachine:
        states = tuple(f"q{i}" for i in range(draw(st.integers(1, max_states))))

        def op(top: str) -> StackOp:
            choices: list[StackOp] = [KEEP, *(push(s) for s in gamma)] + (
                [POP] if top != EMPTY else []
            )
            return draw(st.sampled_from(choices))

        transitions: list[Transition] = []
        for q in states:
            for top1 in (EMPTY, *gamma):
                for top2 in (EMPTY, *gamma):
                    if draw(st.booleans()):
                        transitions.append(
                            Transition(
                                state=q,
                                top1=top1,
                                top2=top2,
                                next=draw(st.sampled_from(states)),
                                op1=op(top1),
                                op2=op(top2),
                            )
                        )
        accept = tuple(q for q in states if draw(st.booleans()))
        return TwoStackMachine(
            states=states,
            start=states[0],
            accept=accept,
            input_alphabet=inputs,
            stack_alphabet=gamma,
            transitions=tuple(transitions),
        )

    return draw_machine()
