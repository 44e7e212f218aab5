"""A proved :class:`~netproof.verifier.claims.RankedSelection` as a scan over the positions, in
the abstraction (:func:`abstraction_scan`: words of one length or of a range of lengths) and as
one step of the transition system over positions (:func:`step_scan`, :func:`scan_bounds`).

The head selects, in its masked set, the first (or last) position of highest rank (rank tuples
compared lexicographically). A scan visits the positions in the order in which the masked sets
grow (token order for the masks ``none``, ``causal`` and ``strict_causal``; backwards for the
anticausal ones) and keeps the best position so far: its rank and its value dims. A new position
replaces it when its rank is higher, or equal where the lemma prefers it among equals (the last
one in a forward scan for ``end="last"``, the first one in a backward scan for ``end="first"``).
The selection at query position i is the state after i (masks that hold i), before i (strict
masks), or after the whole word (mask ``none``: the same selection at every position).

In the transition system a forward scan reads its state before the position from ``cur`` and
writes the state after it into ``nxt``; a backward scan guesses its state over the positions
after it (``nxt``) and checks that ``cur`` is that state with this position added (as the
anticausal NearestSelection scans of :mod:`.system` do). Mask ``none`` reads the scan's final
state at every position: a guess ``fin.o`` kept unchanged through the run and checked against
the scan's state once every token is read (:func:`scan_bounds`: a bad state needs every guess
right). A word thus has exactly one run whose guesses are right, and its outputs are the
network's.

May import: :mod:`netproof.symbolic`, the claims vocabulary, :mod:`netproof.verifier.smt.errors`,
:mod:`.arithmetic` and :mod:`.lemmas`; z3 handed in (with the abstraction or step it works on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import Head
from netproof.verifier.claims import RankedSelection
from netproof.verifier.smt.errors import Unsupported

from .arithmetic import Values, affine_map, certainly_equal, sympy_to_z3
from .lemmas import LemmaResult

__all__ = ["RankedScan", "abstraction_scan", "forward", "scan_bounds", "step_scan"]

_MASKS = ("none", "causal", "strict_causal", "anticausal", "strict_anticausal")


def forward(mask: str) -> bool:
    """Whether the scan of a head with this mask runs in token order (the masked sets grow
    toward the end of the word), else backwards."""
    if mask not in _MASKS:
        raise Unsupported(f"mask={mask!r}: a RankedSelection scan covers {', '.join(_MASKS)}")
    return mask in ("none", "causal", "strict_causal")


def _ranks(vals: Values, lemma: RankedSelection, x: dict[str, Any]) -> list[Any] | None:
    env = {}
    for d in lemma.boolean:
        b = vals.boolish(x.get(d, Fraction(0)))
        if b is None:
            return None
        env[d] = b
    out = [vals.boolish(sympy_to_z3(vals, f, env)) for f in lemma.ranks]
    return None if any(r is None for r in out) else out


def _and(vals: Values, args: Sequence[Any]) -> Any:
    z3 = vals.z3
    if any(z3.is_false(a) for a in args):
        return z3.BoolVal(False, vals.ctx)
    return vals.and_([a for a in args if not z3.is_true(a)])


def _or(vals: Values, args: Sequence[Any]) -> Any:
    z3 = vals.z3
    if any(z3.is_true(a) for a in args):
        return z3.BoolVal(True, vals.ctx)
    return vals.or_([a for a in args if not z3.is_false(a)])


def _takes(vals: Values, has: Any, best: Sequence[Any], rank: Sequence[Any], on_tie: bool) -> Any:
    """Whether a position of rank ``rank`` replaces the scan's best (``has``: there is one, of
    rank ``best``): no best yet, a higher rank, or (``on_tie``) an equal one."""
    z3 = vals.z3
    higher = [
        _and(vals, [*(vals.iff(rank[m], best[m]) for m in range(k)), rank[k], vals.not_(best[k])])
        for k in range(len(rank))
    ]
    cases = [vals.not_(has) if not z3.is_false(has) else z3.BoolVal(True, vals.ctx), *higher]
    if on_tie:
        cases.append(_and(vals, [vals.iff(rank[k], best[k]) for k in range(len(rank))]))
    return _or(vals, cases)


def abstraction_scan(ab: Any, idx: int, h: Head, r: LemmaResult) -> list[dict[str, Any]] | None:
    """The proved RankedSelection of head ``h`` (reading the state after ``idx`` sublayers of the
    :class:`~.abstraction.Abstraction` ``ab``) as a scan: the selected value dims at each query
    position. None (with a recorded fallback) where a side condition fails at some position."""
    lemma = r.lemma
    assert isinstance(lemma, RankedSelection)
    vals, z3 = ab.vals, ab.z3
    states = [ab.state(idx, j) for j in range(ab.N)]
    ranks: list[list[Any]] = []
    for j, (x, scale) in enumerate(states):
        problem = None
        got = _ranks(vals, lemma, x) if scale is None else None
        if scale is not None:
            problem = f"position {j} is scaled"
        elif got is None:
            problem = f"a dim of {', '.join(lemma.boolean)} is not 0/1 at position {j}"
        for d, feat in lemma.positional.items():
            if not certainly_equal(x.get(d), ab.feature_at(feat, j)):
                problem = f"dim {d!r} does not hold {feat} at position {j}"
        if problem is not None:
            r.fallbacks.append(f"{problem} (length {ab.m})")
            return None
        assert got is not None
        ranks.append(got)
    values = [affine_map(vals, h.value, x) for x, _ in states]
    present = [ab.present_at(j) for j in range(ab.N)]
    ahead = forward(h.mask)
    on_tie = (lemma.end == "last") == ahead
    outs = tuple(h.value.outputs)
    has: Any = z3.BoolVal(False, ab.ctx)
    best: list[Any] = [z3.BoolVal(False, ab.ctx)] * len(lemma.ranks)
    val: dict[str, Any] = {
        o: Fraction(0) for o in outs
    }  # 0 until a position is taken: an empty set reads 0
    before: list[tuple[Any, dict[str, Any]]] = [(has, val)] * ab.N
    after: list[tuple[Any, dict[str, Any]]] = [(has, val)] * ab.N
    for t in range(ab.N) if ahead else range(ab.N - 1, -1, -1):
        before[t] = (has, val)
        take = _takes(vals, has, best, ranks[t], on_tie)
        if present[t] is not True:
            take = _and(vals, [present[t], take])
        take = vals.named(take, f"rank.{h.name}.take")
        has = (
            z3.BoolVal(True, ab.ctx)
            if present[t] is True
            else vals.named(_or(vals, [has, present[t]]), f"rank.{h.name}.has")
        )
        best = [
            vals.named(vals.bool_ite(take, ranks[t][k], best[k]), f"rank.{h.name}.r{k}")
            for k in range(len(best))
        ]
        val = {
            o: vals.named(vals.ite(take, values[t][o], val[o]), f"rank.{h.name}.{o}") for o in outs
        }
        after[t] = (has, val)
    strict = h.mask.startswith("strict")
    out: list[dict[str, Any]] = []
    for t in range(ab.N):
        seen, picked = (has, val) if h.mask == "none" else (before[t] if strict else after[t])
        if not z3.is_true(seen) and h.empty != "zero":
            raise Unsupported(
                f"head {h.name!r} with empty='error' over a masked set that may be empty"
            )
        out.append(picked)
    r.uses += 1
    return out


@dataclass(frozen=True)
class RankedScan:
    """What the transition system keeps of one RankedSelection scan: its direction, whether it
    is read whole at every position (mask ``none``), its number of ranks and its value dims."""

    ahead: bool
    everywhere: bool
    ranks: int
    outs: tuple[str, ...]

    def fields(self) -> tuple[str, ...]:
        own = ("has", *(f"r{k}" for k in range(self.ranks)), *(f"val.{o}" for o in self.outs))
        return (*own, *(f"fin.{o}" for o in self.outs)) if self.everywhere else own


def step_scan(step: Any, idx: int, h: Head, r: LemmaResult) -> dict[str, Any]:
    """The head's output at the one position of ``step`` (a transition-system step of
    :mod:`.system`, with ``cur``, ``nxt`` and ``ranked_keys``): the scan's state moves by this
    position (see the module docstring); the selection is read from it."""
    lemma = r.lemma
    assert isinstance(lemma, RankedSelection)
    vals = step.vals
    x, scale = step.state(idx, 0)
    if scale is not None:
        raise Unsupported(f"head {h.name!r} reads a scaled position")
    rank = _ranks(vals, lemma, x)
    if rank is None:
        raise Unsupported(f"lemma {lemma.id!r}: a dim of {', '.join(lemma.boolean)} is not 0/1")
    for d, feat in lemma.positional.items():
        if not certainly_equal(x.get(d), step.feature_at(feat, 0)):
            raise Unsupported(f"lemma {lemma.id!r}: dim {d!r} does not hold {feat}")
    value = {}
    for o, v in affine_map(vals, h.value, x).items():
        b = vals.boolish(v)
        if b is None:
            raise Unsupported(
                f"head {h.name!r}: value dim {o!r} is not 0/1 (a scan's state is Boolean)"
            )
        value[o] = b
    ahead = forward(h.mask)
    strict = h.mask.startswith("strict")
    if strict and h.empty != "zero":
        raise Unsupported(
            f"head {h.name!r} with empty='error' (the first position's masked set is empty)"
        )
    key = f"{idx}.{h.name}"
    spec = RankedScan(ahead, h.mask == "none", len(lemma.ranks), tuple(h.value.outputs))
    step.ranked_keys[key] = spec
    before = step.cur if ahead else step.nxt
    after = step.nxt if ahead else step.cur

    def part(sv: Any, field: str) -> Any:
        return sv(f"rank{key}.{field}")

    has = part(before, "has")
    best = [part(before, f"r{k}") for k in range(spec.ranks)]
    take = _takes(vals, has, best, rank, (lemma.end == "last") == ahead)
    vals.assertions.append(part(after, "has"))
    for k in range(spec.ranks):
        vals.assertions.append(
            vals.iff(part(after, f"r{k}"), vals.bool_ite(take, rank[k], best[k]))
        )
    new = {o: vals.bool_ite(take, value[o], part(before, f"val.{o}")) for o in spec.outs}
    for o in spec.outs:
        vals.assertions.append(vals.iff(part(after, f"val.{o}"), new[o]))
    if spec.everywhere:
        for o in spec.outs:
            vals.assertions.append(vals.iff(part(step.nxt, f"fin.{o}"), part(step.cur, f"fin.{o}")))
        out = {o: part(step.cur, f"fin.{o}") for o in spec.outs}
    elif strict:
        out = {o: vals.and_([has, part(before, f"val.{o}")]) for o in spec.outs}
    else:
        out = new
    r.uses += 1
    return {o: vals.named(v, f"{h.name}:{o}") for o, v in out.items()}


def scan_bounds(
    z3: Any, vals: Values, key: str, spec: RankedScan, cur: Any
) -> tuple[list[Any], list[Any]]:
    """The scan's constraints on the first state (a forward scan starts with no position) and on
    the last (a backward scan's guess ends with no position; a guess ``fin`` equals the
    forward scan's final state), as (init, end)."""
    fields = [f for f in spec.fields() if not f.startswith("fin.")]
    empty = [z3.Not(cur(f"rank{key}.{f}")) for f in fields]
    if spec.ahead:
        end = (
            [vals.iff(cur(f"rank{key}.fin.{o}"), cur(f"rank{key}.val.{o}")) for o in spec.outs]
            if spec.everywhere
            else []
        )
        return empty, end
    return [], empty
