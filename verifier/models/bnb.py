"""Branch and bound over the word trie: every word up to a length decided without enumerating the
subtrees that a bound settles (:func:`check_model_bnb`).

For each length n the trie of words is searched depth first in shortlex order. At a prefix p with
r = n − |p| symbols left, the language's automaton says whether membership is constant on the
subtree (:class:`Membership`: the states reachable in exactly r steps are all accepting or all
rejecting: a dead state, an absorbing one, a parity or a depth that cannot come back). Where it
is, the rigorous enclosure of the logit over every completion (:class:`.wordset.WordSetBound`)
may settle the whole subtree: its k^r words are **correct** when the enclosure excludes 0 on the
side of the membership, **wrong** when it excludes 0 on the other side (then the subtree's first
word, the shortlex-first wrong one, is evaluated as a leaf to report it). Otherwise the search
branches on the next position; a subtree of at most ``leaf`` words whose membership is not
constant (or whose bound straddles 0) is enumerated by :func:`.check.check_model` (the batched
per-word enclosure and its rigorous fallbacks), as are words (r = 0).

The report is :func:`.check.check_model`'s, the parts in shortlex order joined by
:func:`.check.merge_reports`: the same rows, verdicts, shortest wrong word, trace and undecided
words as plain enumeration, since a settled word's verdict is proved by the subtree's bound (a
word whose own enclosure is open but whose subtree's bound is not would be decided here and
undecided there; none was met). The margin histograms and the float32 comparison cover the
enumerated words only. ``report.search`` adds, per length, the words settled by bounds, the
words enumerated, the bounds evaluated and the settled words by depth.

May import :mod:`.check`, :mod:`.wordset`, the claims vocabulary (languages) and torch inside
functions.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from netproof.symbolic.ir import Network, TokenEmbedding
from netproof.symbolic.printing import fingerprint
from netproof.symbolic.rnn_recognizers import RNNRecognizerIR, rnn_fingerprint
from netproof.verifier.claims.languages import Automaton, Language, StackAutomaton

from .check import LengthRow, ModelReport, check_model, merge_reports
from .enclosure import Enclosure, EnclosureError, RNNEnclosure, compile_enclosure
from .wordset import WordSetBound

__all__ = ["Membership", "SearchRow", "bnb_shards", "check_model_bnb", "merge_bnb"]

LEAF = 1024
"""Default size of the subtrees enumerated rather than branched (when their membership is not
constant or their bound straddles 0)."""


class Membership:
    """Which subtrees of the word trie have constant membership, from a language's
    :class:`~netproof.verifier.claims.languages.Automaton` (preferred) or
    :class:`~netproof.verifier.claims.languages.StackAutomaton`; a language with neither has
    constant membership only on single words (r = 0).

    ``reach(state, r)`` is (some completion of r symbols is a member, some is not)."""

    def __init__(self, language: Language) -> None:
        self.alphabet = tuple(language.alphabet)
        self.dfa: Automaton | None = language.automaton
        self.stack: StackAutomaton | None = None if self.dfa is not None else language.stack
        self.contains = language.contains
        self._dfa_reach: list[tuple[list[bool], list[bool]]] = []
        if self.dfa is not None:
            acc = [q in self.dfa.accepting for q in range(self.dfa.states)]
            self._dfa_reach.append((acc, [not a for a in acc]))

    @property
    def kind(self) -> str:
        return "dfa" if self.dfa is not None else ("stack" if self.stack is not None else "none")

    @property
    def start(self) -> Any:
        if self.dfa is not None:
            return self.dfa.start
        if self.stack is not None:
            return ()
        return ()  # no automaton: the state is the prefix itself

    def step(self, state: Any, a: int) -> Any:
        if self.dfa is not None:
            return self.dfa.delta[state][a]
        if self.stack is not None:
            if state is None:
                return None
            u, o = self.stack.push[a], self.stack.pop[a]
            if u is not None:
                return None if len(state) == self.stack.depth else (*state, u)
            return state[:-1] if state and state[-1] == o else None
        return (*state, self.alphabet[a])

    def reach(self, state: Any, r: int) -> tuple[bool, bool]:
        if self.dfa is not None:
            dfa = self.dfa
            while len(self._dfa_reach) <= r:
                acc, rej = self._dfa_reach[-1]
                self._dfa_reach.append(
                    (
                        [any(acc[t] for t in dfa.delta[q]) for q in range(dfa.states)],
                        [any(rej[t] for t in dfa.delta[q]) for q in range(dfa.states)],
                    )
                )
            acc, rej = self._dfa_reach[r]
            return acc[state], rej[state]
        if self.stack is not None:
            if state is None:
                return False, True
            h = len(state)
            # accept: pop the stack (the right types), then open-close pairs at height <= 1;
            # reject: with r >= 1 symbols left some completion errs or ends with a nonempty stack
            return (r >= h and (r - h) % 2 == 0), (r >= 1 or h > 0)
        if r == 0:
            member = bool(self.contains(state))
            return member, not member
        return True, True


@dataclass(slots=True)
class SearchRow:
    """One length's search: ``settled`` words decided by bounds (``settled_wrong`` of them
    wrong), ``enumerated`` words decided one by one, ``bounds`` subtree bounds evaluated,
    ``by_depth[d]`` = [subtrees settled at depth d, their words, subtrees bounded at depth d]."""

    length: int
    settled: int = 0
    settled_wrong: int = 0
    enumerated: int = 0
    bounds: int = 0
    seconds: float = 0.0
    by_depth: dict[int, list[int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "length": self.length,
            "settled": self.settled,
            "settled_wrong": self.settled_wrong,
            "enumerated": self.enumerated,
            "bounds": self.bounds,
            "seconds": round(self.seconds, 3),
            "by_depth": {str(d): v for d, v in sorted(self.by_depth.items())},
        }


class _Ranges:
    """Adjacent enumeration ranges of one length joined before they run (one batched check)."""

    def __init__(
        self, m: int, row: SearchRow, run: Callable[[int, int, int], None], most: int
    ) -> None:
        self.m, self.row, self.run, self.most = m, row, run, most
        self.pending: tuple[int, int] | None = None

    def add(self, start: int, stop: int) -> None:
        self.row.enumerated += stop - start
        p = self.pending
        if p is not None and p[1] == start and p[1] - p[0] < self.most:
            self.pending = (p[0], stop)
            return
        self.flush()
        self.pending = (start, stop)

    def flush(self) -> None:
        if self.pending is not None:
            self.run(self.m, *self.pending)
            self.pending = None


def _bounds(
    sets: WordSetBound, prefixes: list[tuple[int, ...]], m: int, row: SearchRow
) -> list[tuple[float, float]]:
    """The bounds over the completions of ``prefixes`` (one length) to length m, counted."""
    low, high = sets.bound(prefixes, m)
    row.bounds += len(prefixes)
    entry = row.by_depth.setdefault(len(prefixes[0]), [0, 0, 0])
    entry[2] += len(prefixes)
    return list(zip(low.tolist(), high.tolist(), strict=True))


def _settled_part(report: ModelReport, m: int, words: int, wrong: bool) -> ModelReport:
    part = ModelReport(report.network, report.fingerprint, report.language, m)
    row = LengthRow(length=m, words=words)
    if wrong:
        row.wrong = words
    else:
        row.correct = words
    part.rows.append(row)
    return part


def check_model_bnb(
    net: Network | RNNRecognizerIR,
    language: Language,
    *,
    max_n: int,
    min_n: int = 0,
    float32: Callable[[list[tuple[str, ...]]], Sequence[float]] | None = None,
    batch: int = 4096,
    digits: int = 50,
    exact: bool = False,
    enclosure: Enclosure | RNNEnclosure | None = None,
    leaf: int = LEAF,
    progress: Callable[[int, int], None] | None = None,
    root: tuple[str, ...] = (),
    relax: bool = False,
) -> ModelReport:
    """Every word of length ``min_n..max_n`` decided by branch and bound over the trie (see the
    module docstring); the arguments are :func:`.check.check_model`'s, and ``leaf``: the largest
    subtree enumerated instead of branched; ``root``: only the words that start with it (a
    shard of a run split by prefixes, :func:`bnb_shards`; :func:`merge_bnb` joins them);
    ``relax``: intersect each bound with the linear relaxation of the layers after the last
    attention layer (:mod:`.relax`, where it covers the network)."""
    if isinstance(net, Network) and not isinstance(net.embedding, TokenEmbedding):
        raise EnclosureError(
            f"network {net.name!r} has a {type(net.embedding).__name__}; check-model needs a TokenEmbedding"
        )
    if set(language.alphabet) != set(net.alphabet):
        raise ValueError(
            f"language {language.name} has alphabet {list(language.alphabet)} but network {net.name!r} reads "
            f"{list(net.alphabet)}; pick the language the model was trained on"
        )
    if max_n < min_n or min_n < 0:
        raise ValueError(f"max_n={max_n} must be >= min_n={min_n} >= 0")
    if leaf < 1:
        raise ValueError(f"leaf={leaf} must be >= 1")
    if root and (min_n != max_n or len(root) > max_n or set(root) - set(language.alphabet)):
        raise ValueError(
            f"root {' '.join(root)!r}: a shard is one length (min_n = max_n >= {len(root)}) "
            f"and a prefix over {list(language.alphabet)}"
        )
    enc = enclosure or compile_enclosure(net)
    sets = WordSetBound(enc, language.alphabet)
    relaxed = sets.use_relaxation(relax)
    member = Membership(language)
    k = len(language.alphabet)
    head = ModelReport(
        net.name,
        fingerprint(net) if isinstance(net, Network) else rnn_fingerprint(net),
        language.name,
        max_n,
    )
    parts: list[ModelReport] = []
    rows: list[SearchRow] = []

    def run_range(m: int, start: int, stop: int) -> None:
        met_wrong = any(p.shortest_wrong is not None for p in parts)
        parts.append(
            check_model(
                net,
                language,
                max_n=m,
                min_n=m,
                float32=float32,
                batch=batch,
                digits=digits,
                exact=exact,
                enclosure=enc,
                shard=(m, start, stop),
                trace=not met_wrong,
            )
        )

    for m in range(min_n, max_n + 1):
        t0 = time.process_time()
        row = SearchRow(length=m)
        ranges = _Ranges(m, row, run_range, 16 * batch)
        enum, flush = ranges.add, ranges.flush
        # depth-first in shortlex order: a stack of (prefix, state, shortlex index of the prefix,
        # the bound over its completions where it was computed with its siblings')
        top = tuple(language.alphabet.index(a) for a in root)
        state, index = member.start, 0
        for a in top:
            state, index = member.step(state, a), index * k + a
        stack: list[tuple[tuple[int, ...], Any, int, tuple[float, float] | None]] = [
            (top, state, index, None)
        ]
        while stack:
            prefix, state, index, bound = stack.pop()
            d = len(prefix)
            r = m - d
            size = k**r
            start = index * size
            if r == 0:
                enum(start, start + 1)
                continue
            can_accept, can_reject = member.reach(state, r)
            if can_accept != can_reject:  # constant membership: the bound may settle it
                if bound is None:
                    bound = _bounds(sets, [prefix], m, row)[0]
                lo, hi = bound
                verdict = True if lo > 0 else (False if hi < 0 else None)
                if verdict is not None:
                    entry = row.by_depth[d]
                    entry[0] += 1
                    entry[1] += size
                    row.settled += size
                    flush()
                    if verdict == can_accept:
                        parts.append(_settled_part(head, m, size, wrong=False))
                    else:  # every word wrong: the first one is reported as a leaf
                        row.settled_wrong += size
                        row.settled -= 1
                        entry[1] -= 1
                        enum(start, start + 1)
                        flush()
                        if size > 1:
                            parts.append(_settled_part(head, m, size - 1, wrong=True))
                    continue
            if size <= leaf:
                enum(start, start + size)
                continue
            children = [((*prefix, a), member.step(state, a), index * k + a) for a in range(k)]
            bounded = [c for c in children if r > 1 and len(set(member.reach(c[1], r - 1))) == 2]
            found = dict(
                zip(
                    (c[0] for c in bounded),
                    _bounds(sets, [c[0] for c in bounded], m, row) if bounded else [],
                    strict=True,
                )
            )
            for c in reversed(children):
                stack.append((*c, found.get(c[0])))
        flush()
        row.seconds = time.process_time() - t0
        rows.append(row)
        if progress is not None:
            progress(m, k**m)
    report = merge_reports(parts, max_n=max_n)
    report.search = {
        "method": "bnb",
        "membership": member.kind,
        "leaf": leaf,
        "relax": relaxed,
        "settled": sum(r.settled for r in rows),
        "enumerated": sum(r.enumerated for r in rows),
        "bounds": sum(r.bounds for r in rows),
        "rows": [r.as_dict() for r in rows],
    }
    return report


def bnb_shards(
    alphabet: Sequence[str], min_n: int, max_n: int, jobs: int
) -> list[tuple[int, tuple[str, ...]]]:
    """The work of a branch-and-bound run split over ``jobs`` processes, in shortlex order:
    ``(length, root)``, every length's trie cut at the depth where it has at least 4·jobs
    subtrees (a length that short is one shard)."""
    k = len(alphabet)
    depth = 0
    while k**depth < 4 * jobs:
        depth += 1
    out: list[tuple[int, tuple[str, ...]]] = []
    for m in range(min_n, max_n + 1):
        if m <= depth:
            out.append((m, ()))
        else:
            out += [(m, tuple(p)) for p in itertools.product(alphabet, repeat=depth)]
    return out


def merge_bnb(parts: Sequence[ModelReport], *, max_n: int) -> ModelReport:
    """One report from shards' reports given in shortlex order (:func:`bnb_shards`): the
    verdicts as :func:`.check.merge_reports` joins them, the search counts added up."""
    report = merge_reports(parts, max_n=max_n)
    rows: dict[int, dict[str, Any]] = {}
    for part in parts:
        if part.search is None:
            raise ValueError("merge_bnb joins the reports of check_model_bnb")
        for r in part.search["rows"]:
            into = rows.setdefault(
                r["length"],
                {"length": r["length"], "settled": 0, "settled_wrong": 0, "enumerated": 0}
                | {"bounds": 0, "seconds": 0.0, "by_depth": {}},
            )
            for key in ("settled", "settled_wrong", "enumerated", "bounds", "seconds"):
                into[key] += r[key]
            for d, v in r["by_depth"].items():
                got = into["by_depth"].setdefault(d, [0, 0, 0])
                for i in range(3):
                    got[i] += v[i]
    first = parts[0].search
    assert first is not None
    merged = [rows[m] for m in sorted(rows)]
    for r in merged:
        r["seconds"] = round(r["seconds"], 3)
        r["by_depth"] = dict(sorted(r["by_depth"].items(), key=lambda kv: int(kv[0])))
    report.search = {
        "method": "bnb",
        "membership": first["membership"],
        "leaf": first["leaf"],
        "relax": first.get("relax", False),
        "settled": sum(r["settled"] for r in merged),
        "enumerated": sum(r["enumerated"] for r in merged),
        "bounds": sum(r["bounds"] for r in merged),
        "rows": merged,
        "shards": len(parts),
    }
    return report
