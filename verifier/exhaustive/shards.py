"""A claim's bound in shards: the words of Σ^{min..max} split by their first symbols, so that
many workers share one large exhaustive check, and the verdict of the whole bound from the
shards' parts, the same verdict, count and shortest shortlex-first counterexample as the bound
checked whole.

A shard (:class:`~netproof.verifier.exhaustive.job.Shard`) is the words of the bound that begin
with one prefix of ``k`` symbols; the words shorter than ``k`` make one more shard (:func:`split`).
A worker checks one with :func:`~netproof.verifier.exhaustive.wordwise.check_part` and returns
a :class:`~netproof.verifier.exhaustive.job.Part` (the words it checked, the first word where it
stopped and its verdict there); :func:`merge` takes the earliest stop in shortlex order (the
whole check would have stopped there first: the shards partition the words, and each stops at
its own first), else the earliest undecided word, else a proof for the sum of the words
checked. Only the claims checked word by word split (:func:`~netproof.verifier.exhaustive.wordwise.shardable`).

>>> [s.prefix for s in split(("a", "b"), 0, 3, 1)]
[(), ('a',), ('b',)]
>>> [s.count(("a", "b")) for s in split(("a", "b"), 0, 3, 1)]
[1, 7, 7]

May import the claims vocabulary and the modules of this package.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from netproof.verifier.claims import Claim, Verdict

from .job import Part, Shard, count_words, shortlex_key
from .wordwise import check_part, empty_bound, finish, shardable

__all__ = ["Part", "Shard", "check_part", "combine", "merge", "prefix_length", "shardable", "split"]


def prefix_length(alphabet: Sequence[str], min_len: int, max_len: int, pieces: int) -> int:
    """The shortest prefix length ``k`` whose shards number at least ``pieces`` (0: do not
    split: one symbol, a bound of no word, or ``pieces`` <= 1), at most ``max_len``."""
    size = len(alphabet)
    if size < 2 or pieces <= 1 or count_words(alphabet, min_len, max_len) == 0:
        return 0
    k = 0
    while size**k < pieces and k < max_len:
        k += 1
    return k


def split(alphabet: Sequence[str], min_len: int, max_len: int, k: int) -> tuple[Shard, ...]:
    """The bound ``min_len <= |w| <= max_len`` in shards: the words shorter than ``k`` (if the
    bound has any), then one shard per prefix of ``k`` symbols in shortlex order. Every word of
    the bound is in exactly one shard; ``k = 0`` gives the whole bound as one shard."""
    k = max(0, min(k, max_len))
    if k == 0:
        return (Shard((), min_len, max_len),)
    head = (Shard((), min_len, k - 1),) if min_len <= k - 1 else ()
    return head + tuple(
        Shard(p, max(min_len, k), max_len) for p in itertools.product(alphabet, repeat=k)
    )


def combine(parts: Sequence[Part], alphabet: Sequence[str]) -> Part:
    """The :class:`Part` of the union of disjoint shards from their parts: the earliest stop in
    shortlex order, the earliest undecided word, the sum of the words checked. Parts found by
    different evaluation paths (different ``method``) are refused (``ValueError``)."""
    if not parts:
        raise ValueError("no parts to combine: a bound split into shards has at least one")
    methods = {p.method for p in parts}
    if len(methods) != 1 or len({p.only for p in parts}) != 1:
        raise ValueError(
            f"the shards were checked by different paths ({', '.join(sorted(methods))}); they cannot be merged"
        )
    stops = [p for p in parts if p.stop is not None]
    first = min(stops, key=lambda p: shortlex_key(p.at or (), alphabet)) if stops else None
    undecided = [p.undecided for p in parts if p.undecided is not None]
    return Part(
        parts[0].method,
        sum(p.checked for p in parts),
        None if first is None else first.stop,
        None if first is None else first.at,
        min(undecided, key=lambda w: shortlex_key(w, alphabet)) if undecided else None,
        parts[0].only,
    )


def merge(claim: Claim, alphabet: Sequence[str], bound: int, parts: Sequence[Part]) -> Verdict:
    """The verdict of ``claim`` over ``claim.min_len <= |w| <= bound`` from the parts of the
    shards of :func:`split` (all of them): what checking the whole bound gives."""
    empty = empty_bound(alphabet, claim, bound, parts[0].method if parts else "exhaustive")
    if empty is not None:
        return empty
    return finish(claim, alphabet, bound, combine(parts, alphabet))
