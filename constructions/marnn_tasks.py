"""Suzgun et al. 2019's tasks in plain Python: oracles of the sequence-prediction form and
samplers. Nothing here builds or runs a network.

Reference: Suzgun, Gehrmann, Belinkov, Shieber 2019, *Memory-Augmented Recurrent Neural Networks
Can Learn Generalized Dyck Languages*, §4.1 (sequence prediction), §5 (tasks); spec
``bhattamishra2020_suzgun2019_chang2021.md`` §3.2.

Sequence prediction (§4.1): one input symbol per step; after each prefix w_1..w_t the target is
the k-hot set of symbols that may come next; a word is accepted iff every prediction is right.
Here the target after an *invalid* prefix (one no word of the language extends) is the empty
set, so a network that is right on every string of Σ^{≤n} also rejects every non-member.

- ``D_k`` (Dyck with k bracket types, no depth bound): outputs are the 2k brackets and there is
  **no end symbol** (Table 1: ``([])`` → ``(/[/)``, ``(/[/]``, ``(/[/)``, ``(/[``).
- ``w#w^R`` and ``w#φ(w^R)`` (w ∈ {a,b,c}*, φ: a→x, b→y, c→z): ``{a,b,c,#}`` after each letter
  of w, then the next letter of the second half, then **EOS** (erratum: the EOS glyph was lost
  in the text extraction and the transduction formula ``(a/b/c/#)^{|w|} φ(w^R)`` omits it; the
  target has 2|w| + 1 sets).
- string reversal: input ``w #^{|w|}``, target ``#^{|w|} w^R`` (one output per input).

May import: the vocabulary (:mod:`netproof.verifier.claims`, Dyck(k, D) included); never the IR,
an interpreter or an engine.

>>> [" ".join(sorted(s)) for s in dyck_task(2).next_sets(tuple("([])"))]
['( ) [', '( [ ]', '( ) [', '( [']
>>> [" ".join(sorted(s)) for s in palindrome_task(hom=True).next_sets(tuple("abc#zyx"))][-4:]
['z', 'y', 'x', 'EOS']
>>> round(pcfg_length_distribution(2, 1)[1], 4)  # P(|w| = 2) for D2, p = 1/2, q = 1/4
0.1547
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from netproof.verifier.claims import SequenceTask, Word
from netproof.verifier.claims.dyck import bracket, dyck_alphabet

__all__ = [
    "EOS",
    "LETTERS",
    "PHI",
    "SequenceTask",
    "dyck_task",
    "max_depth",
    "palindrome_task",
    "pcfg_depth_distribution",
    "pcfg_length_distribution",
    "reversal_task",
    "sample_palindrome",
    "sample_pcfg_dyck",
    "sample_set",
]

EOS = "EOS"
LETTERS = ("a", "b", "c")
PHI = {"a": "x", "b": "y", "c": "z"}


# --------------------------------------------------------------------------- Dyck


def dyck_task(k: int) -> SequenceTask:
    """D_k in the sequence-prediction form (no end symbol; no depth bound)."""
    alphabet = dyck_alphabet(k)
    opens = alphabet[0::2]
    closes = alphabet[1::2]
    close_of = dict(zip(opens, closes, strict=True))

    def next_sets(w: Word) -> tuple[frozenset[str], ...]:
        stack: list[str] = []
        out: list[frozenset[str]] = []
        valid = True
        for s in w:
            if valid:
                if s in close_of:
                    stack.append(s)
                elif stack and close_of[stack[-1]] == s:
                    stack.pop()
                else:
                    valid = False
            out.append(
                frozenset((*opens, close_of[stack[-1]]) if stack else opens)
                if valid
                else frozenset()
            )
        return tuple(out)

    def contains(w: Word) -> bool:
        stack: list[str] = []
        for s in w:
            if s in close_of:
                stack.append(s)
            elif stack and close_of[stack[-1]] == s:
                stack.pop()
            else:
                return False
        return not stack

    def accepts(w: Word, predicted: Sequence[frozenset[str]]) -> bool:
        """Every next bracket was predicted and the last set has no close (the stack is empty)."""
        if not w:
            return True
        return (
            all(w[t + 1] in predicted[t] for t in range(len(w) - 1))
            and bool(predicted[-1])
            and not any(c in predicted[-1] for c in closes)
        )

    return SequenceTask(
        name=f"D{k}",
        inputs=alphabet,
        outputs=alphabet,
        next_sets=next_sets,
        contains=contains,
        accepts=accepts,
        description=f"Dyck words over {k} bracket types (Suzgun et al. §5.1), no end symbol",
    )


def max_depth(w: Sequence[str]) -> int:
    """The largest nesting depth of a bracket word (any k: ``(`` or ``(6`` spellings).

    >>> max_depth(tuple("(()[])")), max_depth(("(6", "(1", ")1", ")6"))
    (2, 2)
    """
    depth = best = 0
    for s in w:
        depth += 1 if bracket(s)[0] else -1
        best = max(best, depth)
    return best


# --------------------------------------------------------------------------- palindromes


def palindrome_task(*, hom: bool) -> SequenceTask:
    """w#w^R (``hom=False``) or the deterministic homomorphic palindrome w#φ(w^R) (``hom=True``)."""
    second = tuple(PHI[a] for a in LETTERS) if hom else ()
    inputs = (*LETTERS, "#", *second)
    outputs = (*inputs, EOS)
    phase1 = frozenset((*LETTERS, "#"))
    image = PHI if hom else {a: a for a in LETTERS}

    def next_sets(w: Word) -> tuple[frozenset[str], ...]:
        out: list[frozenset[str]] = []
        first: list[str] = []
        expected: list[str] | None = None  # the second half still to come, next first
        valid = True
        for s in w:
            if valid:
                if expected is None:
                    if s in LETTERS:
                        first.append(s)
                    elif s == "#":
                        expected = [image[a] for a in reversed(first)]
                    else:
                        valid = False
                elif expected and expected[0] == s:
                    expected.pop(0)
                else:
                    valid = False
            if not valid:
                out.append(frozenset())
            elif expected is None:
                out.append(phase1)
            else:
                out.append(frozenset({expected[0]}) if expected else frozenset({EOS}))
        return tuple(out)

    def contains(w: Word) -> bool:
        if w.count("#") != 1:
            return False
        i = w.index("#")
        left, right = w[:i], w[i + 1 :]
        return all(a in LETTERS for a in left) and tuple(image[a] for a in reversed(left)) == tuple(
            right
        )

    def accepts(w: Word, predicted: Sequence[frozenset[str]]) -> bool:
        """Every next symbol was predicted and EOS is predicted after the last one."""
        return (
            bool(w)
            and all(w[t + 1] in predicted[t] for t in range(len(w) - 1))
            and EOS in predicted[-1]
        )

    name = "w#φ(w^R)" if hom else "w#w^R"
    return SequenceTask(
        name=name,
        inputs=inputs,
        outputs=outputs,
        next_sets=next_sets,
        contains=contains,
        accepts=accepts,
        description=f"{name} over w ∈ {{a,b,c}}* (Suzgun et al. §5.3), EOS after the last symbol",
    )


def reversal_task() -> SequenceTask:
    """String reversal as a transduction: input w #^{|w|}, target #^{|w|} w^R (singleton sets;
    empty after a prefix that is not a prefix of some w #^{|w|})."""

    def next_sets(w: Word) -> tuple[frozenset[str], ...]:
        out: list[frozenset[str]] = []
        letters: list[str] = []
        hashes = 0
        valid = True
        for s in w:
            if valid:
                if s in LETTERS and hashes == 0:
                    letters.append(s)
                elif s == "#" and hashes < len(letters):
                    hashes += 1
                else:
                    valid = False
            if not valid:
                out.append(frozenset())
            elif hashes == 0:
                out.append(frozenset({"#"}))
            else:
                out.append(frozenset({letters[len(letters) - hashes]}))
        return tuple(out)

    def contains(w: Word) -> bool:
        m = len(w) // 2
        return len(w) % 2 == 0 and all(a in LETTERS for a in w[:m]) and all(s == "#" for s in w[m:])

    def accepts(w: Word, predicted: Sequence[frozenset[str]]) -> bool:
        """A transduction: accepted iff w is an input of the task and every output is right."""
        return contains(w) and tuple(predicted) == next_sets(w)

    return SequenceTask(
        name="reversal",
        inputs=(*LETTERS, "#"),
        outputs=(*LETTERS, "#"),
        next_sets=next_sets,
        contains=contains,
        accepts=accepts,
        description="string reversal w #^{|w|} → #^{|w|} w^R (Suzgun et al. §5.3)",
    )


# --------------------------------------------------------------------------- PCFG (§5.1)


def sample_pcfg_dyck(
    rng: random.Random,
    k: int,
    *,
    p: float = 0.5,
    q: float = 0.25,
    max_len: int,
    max_steps: int = 1_000_000,
) -> Word | None:
    """One draw of the PCFG S → (_τ S )_τ with p/k per type | S S with q | ε with 1 − p − q
    (spec §3.2), expanded leftmost first; ``None`` when the word grows beyond ``max_len``
    symbols (a rejected draw: the process is critical for p + 2q = 1, with heavy-tailed
    lengths). ``max_steps`` bounds the expansions of one draw (``None`` past it)."""
    if not (p >= 0 and q >= 0 and p + q <= 1):
        raise ValueError(f"p={p}, q={q}: need p, q >= 0 and p + q <= 1 (ε gets 1 − p − q)")
    alphabet = dyck_alphabet(k)
    word: list[str] = []
    todo: list[str | None] = [None]  # None is the nonterminal S; a string is a pending close
    steps = 0
    while todo:
        item = todo.pop()
        if item is not None:
            word.append(item)
            if len(word) > max_len:
                return None
            continue
        steps += 1
        if steps > max_steps:
            return None
        u = rng.random()
        if u < p:
            t = min(int(u / p * k), k - 1)
            word.append(alphabet[2 * t])
            if len(word) > max_len:
                return None
            todo.append(alphabet[2 * t + 1])
            todo.append(None)
        elif u < p + q:
            todo.append(None)
            todo.append(None)
    return tuple(word)


def sample_set(
    rng: random.Random,
    draw: Callable[[random.Random], Word | None],
    *,
    count: int,
    min_len: int,
    max_len: int,
) -> tuple[list[Word], int]:
    """``count`` distinct words with ``min_len <= |w| <= max_len`` by rejection (the paper's
    5000-word training and test sets, spec §3.2); returns them in drawing order and the number
    of draws it took."""
    seen: set[Word] = set()
    words: list[Word] = []
    draws = 0
    while len(words) < count:
        draws += 1
        w = draw(rng)
        if w is not None and min_len <= len(w) <= max_len and w not in seen:
            seen.add(w)
            words.append(w)
    return words, draws


def pcfg_length_distribution(k: int, pairs: int, *, p: float = 0.5, q: float = 0.25) -> list[float]:
    """P(the PCFG derives a word with m bracket pairs), m = 0..``pairs`` (any nesting): f(0)
    solves f = r + q f² (r = 1 − p − q; the smallest root, since ε has infinitely many
    derivations S → SS → …), and for m >= 1, f(m)(1 − 2q f(0)) = p f(m−1) + q Σ_{i=1}^{m−1}
    f(i) f(m−i). Floats: a reference for statistics, not an exact claim."""
    return pcfg_depth_distribution(k, pairs, None, p=p, q=q)


def pcfg_depth_distribution(
    k: int, pairs: int, depth: int | None, *, p: float = 0.5, q: float = 0.25
) -> list[float]:
    """P(m pairs and nesting depth <= ``depth``), m = 0..``pairs`` (``None``: any depth). The
    bracket type does not change the shape distribution, so k does not enter."""
    r = 1 - p - q
    f0 = r if q == 0 else (1 - math.sqrt(1 - 4 * q * r)) / (2 * q)
    if depth is None:  # any depth: the pair's inside is distributed like S itself
        f = [f0] + [0.0] * pairs
        for m in range(1, pairs + 1):
            f[m] = (p * f[m - 1] + q * sum(f[i] * f[m - i] for i in range(1, m))) / (1 - 2 * q * f0)
        return f
    inner = [f0] + [0.0] * pairs  # depth <= 0: only ε
    for _ in range(depth):
        f = [f0] + [0.0] * pairs
        for m in range(1, pairs + 1):
            acc = p * inner[m - 1] + q * sum(f[i] * f[m - i] for i in range(1, m))
            f[m] = acc / (1 - 2 * q * f0)
        inner = f
    return inner


# --------------------------------------------------------------------------- palindromes (§5.3)


def sample_palindrome(rng: random.Random, *, hom: bool, min_len: int, max_len: int) -> Word:
    """One word w#w^R (or w#φ(w^R)) with total length in [min_len, max_len]: |w| uniform over the
    lengths that fit (the total 2|w| + 1 is odd, so "length 2–50" means 3..49), letters uniform
    (the paper does not give the distribution of w; spec §3.2)."""
    sizes = [m for m in range(max_len) if min_len <= 2 * m + 1 <= max_len]
    if not sizes:
        raise ValueError(f"no w#w^R word has its length (2|w| + 1, odd) in [{min_len}, {max_len}]")
    m = rng.choice(sizes)
    w = [rng.choice(LETTERS) for _ in range(m)]
    image = PHI if hom else {a: a for a in LETTERS}
    return (*w, "#", *(image[a] for a in reversed(w)))
