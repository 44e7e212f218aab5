"""One claim fuzzed in shards: the examples of a search spread over several processes, each
shard's budget and seed, and the one verdict their verdicts make.

A run of ``examples`` words in ``n`` shards gives shard ``i`` a share of the budget
(:func:`budgets`) and a seed (:func:`shard_settings`): shard 0 runs exactly as an unsharded run
would (the given seed, derandomized or fresh), every other shard a seed derived from the run's
seed (or from ``derandomized``), so that a seeded or derandomized run draws the same words every
time, whatever the order the shards finish in; an unseeded run draws fresh seeds everywhere.
:func:`merge` then takes the shortest counterexample any shard found (shortlex in the alphabet's
order, ties to the lower shard), so the word reported depends only on the shards' verdicts; when
none is refuted the "no counterexample found" texts are summed into one.

May import: the claims vocabulary (verdicts) and the standard library; never an engine,
campaigns or the CLI.

>>> budgets(10, 3)
[4, 3, 3]
>>> shard_settings(None, True, 0), shard_settings(7, False, 0)
((None, True), (7, False))
>>> shard_settings(7, False, 1) == shard_settings(7, False, 1) != shard_settings(8, False, 1)
True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from netproof.verifier.claims import Refuted, Unknown, Verdict

__all__ = ["budgets", "merge", "shard_settings"]

_NONE_FOUND = re.compile(
    r"^no counterexample found in (\d+) examples \((.*)\); this is not a proof(.*)$", re.DOTALL
)
"""The reason :func:`netproof.verifier.fuzzing.fuzz.fuzz` gives when no word fails."""


def budgets(examples: int, shards: int) -> list[int]:
    """The examples of each shard: ``examples`` spread over at most ``shards`` shards (never a
    shard without an example), the first ones taking the remainder."""
    if examples < 1 or shards < 1:
        raise ValueError(f"examples={examples} and shards={shards} must both be >= 1")
    n = min(shards, examples)
    q, r = divmod(examples, n)
    return [q + (i < r) for i in range(n)]


def shard_settings(seed: int | None, derandomize: bool, index: int) -> tuple[int | None, bool]:
    """``(seed, derandomize)`` for shard ``index`` of a run with ``seed`` and ``derandomize``:
    shard 0 keeps them; another shard of a seeded or derandomized run gets a seed derived from
    the run's seed and its index (not derandomized: the seed decides); an unseeded run's shards
    draw fresh seeds (None)."""
    if index == 0:
        return seed, derandomize
    if seed is None and not derandomize:
        return None, False
    text = f"netproof-fuzz-shard {'derandomized' if seed is None else seed} {index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big"), False


def merge(verdicts: Sequence[Verdict], alphabet: Sequence[str]) -> Verdict:
    """The verdict of a claim fuzzed in shards, from the shards' verdicts in shard order: the
    shortest counterexample (shortlex in ``alphabet``'s order, the lower shard on a tie); else
    the first shard's verdict that is not "no counterexample found" (a strategy without words,
    a replay that disagrees); else one "no counterexample found" over all the examples tried."""
    if not verdicts:
        raise ValueError("merge needs the verdict of at least one shard")
    order = {s: i for i, s in enumerate(alphabet)}
    refuted = [(i, v) for i, v in enumerate(verdicts) if isinstance(v, Refuted)]
    if refuted:
        _i, best = min(
            refuted,
            key=lambda iv: (
                len(iv[1].word or ()),
                [order.get(s, len(order)) for s in iv[1].word or ()],
                iv[0],
            ),
        )
        return best
    found = [_NONE_FOUND.match(v.reason) if isinstance(v, Unknown) else None for v in verdicts]
    for v, m in zip(verdicts, found, strict=True):
        if m is None:
            return v
    if len(verdicts) == 1:
        return verdicts[0]
    matches = [m for m in found if m is not None]
    total = sum(int(m.group(1)) for m in matches)
    wheres = [m.group(2) for m in matches]
    heads = [w.split(", max length ", 1) for w in wheres]
    if all(len(h) == 2 for h in heads) and len({h[1] for h in heads}) == 1:
        where = f"{', '.join(h[0] for h in heads)}, max length {heads[0][1]}"
    else:
        where = " | ".join(wheres)
    extra = next((m.group(3) for m in matches if m.group(3)), "")
    first = verdicts[0]
    assert isinstance(first, Unknown)
    return Unknown(
        first.method,
        f"no counterexample found in {total} examples in {len(verdicts)} shards ({where}); "
        f"this is not a proof{extra}",
    )
