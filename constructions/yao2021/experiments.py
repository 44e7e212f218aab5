"""Yao et al. 2021's float experiments: what the precision search needs for the Dyck networks.

Owns the :class:`~netproof.verifier.claims.Precision` declarations of the recognizer
(:data:`RECOGNIZER_PRECISION`) and the generator (:data:`GENERATOR_PRECISION`): words sampled
as Appendix D samples them (Hewitt et al.'s sampler), the worst-case words (full depth D, many
same-depth opens of varying types), the generator's reference next-symbol sets (the allowed sets
of Dyck(k, D), which claim Y10 proves the exact network computes up to its bound), and the
documented runs of spec ``chiang2022_yao2021.md`` §3.6 (the experiments' fixed position
normalizer p = i/6000 at depths 3 and 10). May import: Dyck(k, D) and the declaration types of
the vocabulary (:mod:`netproof.verifier.claims`) and the recognizer's token conventions; never an
interpreter or an engine: :func:`netproof.verifier.floats.precision.analyse` runs the search.

>>> recognizer_worst_words({"k": 2, "depth": 2}, 8)
[('(', '[', ']', ')', '[', '(', ')', ']'), ('(', '[', ']', ')', '[', '(', ')', ')')]
>>> [sorted(s) for s in generator_next_sets({"k": 1, "depth": 1, "reading": "G1"}, ("(",))]
[['(', 'ω'], [')']]
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from netproof.verifier.claims import Precision, Word
from netproof.verifier.claims.dyck import allowed_next, sample_hewitt

from .recognizer import END, symbols

__all__ = [
    "GENERATOR_PRECISION",
    "RECOGNIZER_PRECISION",
    "generator_next_sets",
    "generator_worst_words",
    "hewitt_generator_words",
    "hewitt_recognizer_words",
    "recognizer_worst_words",
]


# --------------------------------------------------------------------------- worst-case words


def _deep_word(k: int, D: int, m: int) -> list[str]:
    """Blocks that climb to depth D with types t, t+1, … and come back down, then pairs, within
    m symbols: many opens of one depth with different types."""
    pairs = symbols(k)
    word: list[str] = []
    t = 0
    while len(word) + 2 * D <= m:
        # Climb to depth D with types t, t+1, …, come back down: many same-depth opens, types vary.
        block = [pairs[(t + j) % k][0] for j in range(D)]
        word += block + [pairs[(t + j) % k][1] for j in reversed(range(D))]
        t += 1
    while len(word) + 2 <= m:
        word += [pairs[t % k][0], pairs[t % k][1]]
        t += 1
    return word


def recognizer_worst_words(values: Mapping[str, Any], m: int) -> list[Word]:
    """The recognizer is tested hardest by words at the full depth D with many opens of one
    depth and different types (its matching layers see the most unmatched neighbours), and by a
    near-miss: the same word with its last close bracket of the wrong type. Words have an even
    number of symbols, at most m."""
    k, D = int(values["k"]), int(values["depth"])
    m -= m % 2
    if m < 2:
        return []
    word = _deep_word(k, D, m)
    out = [tuple(word)]
    if word and k > 1:
        last = word[-1]
        wrong = next(c for _o, c in symbols(k) if c != last)
        out.append((*word[:-1], wrong))
    return out


def generator_worst_words(values: Mapping[str, Any], m: int) -> list[Word]:
    """The generator is tested hardest by the same full-depth words (the layer-2 tie-break is
    the 1/n gap between same-depth opens of different types); no near-miss, since a generator's
    sets after an invalid prefix mean nothing. For the length-aware reading G2 the word ends
    with ω, as the network reads it."""
    k, D = int(values["k"]), int(values["depth"])
    m -= m % 2
    if m < 2:
        return []
    return [_ended(values, tuple(_deep_word(k, D, m)))]


def _ended(values: Mapping[str, Any], word: Word) -> Word:
    return (*word, END) if values.get("reading") == "G2" else word


# --------------------------------------------------------------------------- sampled words


def _hewitt_words(
    values: Mapping[str, Any],
    alphabet: tuple[str, ...],
    lo: int,
    n: int,
    count: int,
    rng: random.Random,
    *,
    near_misses: bool,
) -> list[Word]:
    """Up to ``count`` members of Dyck(k, D) with lo < |w| <= n from Hewitt et al.'s sampler (a
    draw that cannot fit the range is skipped); with ``near_misses``, every second one has one
    symbol changed to another symbol of ``alphabet``."""
    k, D = int(values["k"]), int(values["depth"])
    lo_even = max(lo + 1, 0)
    words: list[Word] = []
    for j in range(count):
        try:
            w = sample_hewitt(rng, k, D, min_len=lo_even, max_len=n + 1, max_tries=2000)
        except (RuntimeError, ValueError):
            continue
        if near_misses and j % 2 and w:
            at = rng.randrange(len(w))
            w = (
                *w[:at],
                rng.choice([s for s in alphabet if s != w[at]] or list(alphabet)),
                *w[at + 1 :],
            )
        words.append(tuple(w))
    return words


def hewitt_recognizer_words(
    values: Mapping[str, Any],
    alphabet: tuple[str, ...],
    lo: int,
    n: int,
    count: int,
    rng: random.Random,
) -> list[Word]:
    """Members of Dyck(k, D) from Hewitt et al.'s sampler (as Appendix D draws them), every
    second one with one symbol changed (a near-miss for the recognizer)."""
    return _hewitt_words(values, alphabet, lo, n, count, rng, near_misses=True)


def hewitt_generator_words(
    values: Mapping[str, Any],
    alphabet: tuple[str, ...],
    lo: int,
    n: int,
    count: int,
    rng: random.Random,
) -> list[Word]:
    """Members of Dyck(k, D) from Hewitt et al.'s sampler (as Appendix D draws them), followed by
    ω for the length-aware reading G2."""
    return [
        _ended(values, w)
        for w in _hewitt_words(values, alphabet, lo, n, count, rng, near_misses=False)
    ]


# --------------------------------------------------------------------------- reference sets


def generator_next_sets(values: Mapping[str, Any], word: Word) -> list[set[str]]:
    """The allowed next-symbol sets of Dyck(k, D) at every predicting position of ``word`` (γ is
    added by the network; under G2 the word ends with ω, which predicts nothing)."""
    k, D = int(values["k"]), int(values["depth"])
    g2 = values.get("reading") == "G2"
    tokens = len(word) + 1  # γ is added by the network
    last = tokens - (1 if g2 else 0)
    out = []
    for t in range(last):
        allowed, end = allowed_next(word[:t], k, D, n=tokens if g2 else None)
        out.append({*allowed, *([END] if end else [])})
    return out


RECOGNIZER_PRECISION = Precision(
    worst=recognizer_worst_words,
    sample=hewitt_recognizer_words,
    runs=({},),
)
"""The recognizer's precision declaration: Hewitt samples with near-misses, full-depth worst
cases, one documented run with the defaults."""

GENERATOR_PRECISION = Precision(
    worst=generator_worst_words,
    sample=hewitt_generator_words,
    next_sets=generator_next_sets,
    runs=({}, {"depth": "3", "pos_norm": "6000"}, {"depth": "10", "pos_norm": "6000"}),
)
"""The generator's precision declaration: Hewitt samples, full-depth worst cases, the allowed
sets of Dyck(k, D) as the reference, and the documented runs: the defaults, then spec §3.6's
fixed position normalizer p = i/6000 at depths 3 and 10 (which float32 breaks at depth 10)."""
