"""The sizes a proof run refuses up front: an exhaustive bound over more words than
:data:`MAX_EXHAUSTIVE_WORDS`, or a symbolic word (the smt method) longer than
:data:`MAX_SMT_LENGTH`, each with the size it implies and how to proceed.

Such a run would otherwise go on for hours or for ever with no word of what it is doing;
:func:`check_bounds` raises a :class:`~.errors.CampaignError` before anything runs.

>>> word_count(2, 0, 10)
2047
>>> largest_bound(2, 0, 2047)
10

May import the vocabulary, the SMT engine's coverage test (inside a function) and the campaign's
errors, store and sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from netproof.verifier.claims import Claim, Construction

from .errors import CampaignError
from .sources import build_network
from .store import claim_has_words

__all__ = ["MAX_EXHAUSTIVE_WORDS", "MAX_SMT_LENGTH", "check_bounds", "largest_bound", "word_count"]

MAX_EXHAUSTIVE_WORDS = 10**9
"""The most words an exhaustive check goes through (hours at the batched interpreter's speed;
the committed records check at most 1,398,101)."""

MAX_SMT_LENGTH = 1000
"""The longest symbolic word the smt method encodes (a proof for every length comes from the
compositional invariants, never from a larger bound)."""


def word_count(symbols: int, min_len: int, max_len: int, stop: int | None = None) -> int:
    """The number of words of ``min_len <= |w| <= max_len`` over ``symbols`` symbols; with
    ``stop``, counting ends as soon as the count passes it (any value above ``stop`` means
    "more than ``stop``", without computing a power of a million digits)."""
    total = 0
    power = symbols**min_len if max_len >= min_len else 0
    for _n in range(min_len, max_len + 1):
        total += power
        if stop is not None and total > stop:
            return total
        power *= symbols
    return total


def largest_bound(symbols: int, min_len: int, limit: int) -> int:
    """The largest ``max_len`` whose words from ``min_len`` on number at most ``limit``
    (``min_len - 1`` if even ``min_len`` alone is too many)."""
    bound = min_len - 1
    while word_count(symbols, min_len, bound + 1, stop=limit) <= limit:
        bound += 1
        if symbols <= 1 and bound - min_len > limit:
            break
    return bound


def check_bounds(
    plans: Sequence[tuple[Construction, Any, Sequence[tuple[int, Claim]]]],
    *,
    method: str,
    max_n: int | None,
) -> None:
    """Refuse a run whose ``max_n`` makes some claim's check too large: an exhaustive check
    (``method`` ``exhaustive``, or ``all``/``best`` for a claim the smt method does not cover) over
    more than :data:`MAX_EXHAUSTIVE_WORDS` words, or an smt check (``smt``, ``all``, ``best``) of a word longer
    than :data:`MAX_SMT_LENGTH`. Each claim's own bound (``max_n`` None) is taken as it is."""
    if max_n is None:
        return
    from netproof.verifier.smt.prove import smt_applicable

    for c, values, claims in plans:
        alphabet: tuple[str, ...] | None = None
        for _i, claim in claims:
            if not claim_has_words(claim):
                continue
            smt = method in ("smt", "all", "best") and smt_applicable(claim)
            if smt and max_n > MAX_SMT_LENGTH:
                raise CampaignError(
                    f"--max-n {max_n}: the smt method encodes a symbolic word of every length up to the bound, at most "
                    f"{MAX_SMT_LENGTH:,} ({c.name} {claim.id}); give --max-n <= {MAX_SMT_LENGTH} (a proof for every "
                    "length comes from the compositional invariants, not from a larger bound)"
                )
            if method == "smt" or smt:
                continue
            if alphabet is None:
                alphabet = tuple(build_network(c, values, 0).alphabet)
            k = len(alphabet)
            count = word_count(k, claim.min_len, max_n, stop=MAX_EXHAUSTIVE_WORDS)
            if count <= MAX_EXHAUSTIVE_WORDS:
                continue
            exact = max_n * k.bit_length() <= 64  # small enough to count in full
            size = (
                f"{word_count(k, claim.min_len, max_n):,}" if exact else f"more than {k}^{max_n:,}"
            )
            largest = largest_bound(k, claim.min_len, MAX_EXHAUSTIVE_WORDS)
            fix = (
                "use --method smt (a symbolic word per length), or "
                if smt_applicable(claim)
                else "give "
            )
            raise CampaignError(
                f"--max-n {max_n}: an exhaustive check of {c.name} {claim.id} goes through every word of "
                f"{claim.min_len} <= |w| <= {max_n} over {k} symbols, {size} words (the limit is "
                f"{MAX_EXHAUSTIVE_WORDS:,}); {fix}--max-n <= {largest}"
            )
