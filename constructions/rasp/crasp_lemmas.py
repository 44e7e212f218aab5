"""What a compiled C-RASP program needs for proofs of every length: the program's own counter
automaton and one block lemma per counting block.

- :func:`program_counters`: a C-RASP program read left to right keeps one integer per count
  operation (C(i) = C(i−1) + [P(i)]); everything at position i is a function of the counts at
  i−1, the symbol at i and the truth values of the comparisons at i, and each comparison, with
  the symbol and the comparisons before it fixed, is one linear constraint on the counts at
  i−1. So for each symbol and each assignment of truth values to the comparisons, one rule
  whose guard is those constraints (the assignments are exclusive and cover every case): a
  :class:`~netproof.verifier.claims.counting.CounterAutomaton` whose control state is the
  output bit at the last position read. It is the program's language exactly, for every length
  (None past ``max_comparisons`` comparisons: 2^m rules per symbol).
- :func:`operations_form`: the ``operations`` claim (every count, comparison and conditional dim
  holds the program's value at every position) as the smt method states it for every length:
  the program's counter automaton (its counters after t symbols are the counts at t) and, per
  dim, what it must hold: a count's dim its counter over 1/(i+1), a comparison's dim 1 exactly
  where the counters satisfy C2 − C1 ≥ 1 (a :class:`~netproof.verifier.claims.FollowsCounts`).
  None for a program with a conditional (its value is no linear form of the counts alone) or
  past ``max_comparisons`` comparisons.
- :func:`crasp_lemmas`: a :class:`~netproof.verifier.claims.counting.UniformCount` for every
  head the compiler wrote (each averages over j ≤ i with equal scores) and a
  :class:`~netproof.verifier.claims.counting.CountComparison` for every comparison FFN, its
  outputs stated from the program (C1 < C2 is 1 iff C2 − C1 > 0 over the integers), not from
  the weights. An FFN that reads a sum written into a dim of its own, or a comparison of a
  conditional count, gets no lemma (the prover then says which block it cannot read).

May import: its own package's modules, the IR's names and the vocabulary.
"""

from __future__ import annotations

from itertools import product

from netproof.symbolic import FFN, Affine, AttentionLayer, Network
from netproof.verifier.claims import FollowsCounts
from netproof.verifier.claims.counting import (
    Atom,
    CountComparison,
    CounterAutomaton,
    CounterRule,
    UniformCount,
)
from netproof.verifier.claims.rasp import crasp

from .compile_crasp import INV_I, operation_dims

__all__ = ["crasp_lemmas", "operations_form", "program_counters"]

REFERENCE = "Yang & Chiang 2024 (C-RASP); compiled by netproof.constructions.rasp"

_Linear = tuple[dict[str, int], int]  # (coefficients by count name, constant)


def _count_value(x: bool | _Linear) -> _Linear:
    """A count's value (a linear form), never a Boolean's (the program is well typed)."""
    assert isinstance(x, tuple)
    return x


def _add(a: _Linear, b: _Linear, k: int = 1) -> _Linear:
    coefs = dict(a[0])
    for d, w in b[0].items():
        coefs[d] = coefs.get(d, 0) + k * w
    return {d: w for d, w in coefs.items() if w != 0}, a[1] + k * b[1]


def _linear(expr: crasp.CVec, dims: dict[crasp.Vec, str]) -> _Linear | None:
    """A count expression as a linear form of the count operations' dims (None for a conditional)."""
    if isinstance(expr, crasp.Count):
        return {dims[expr]: 1}, 0
    if isinstance(expr, crasp.Number):
        return {}, expr.value
    if isinstance(expr, crasp.Add):
        left, right = _linear(expr.left, dims), _linear(expr.right, dims)
        return None if left is None or right is None else _add(left, right)
    if isinstance(expr, crasp.Scale):
        arg = _linear(expr.arg, dims)
        return (
            None
            if arg is None
            else ({d: expr.k * w for d, w in arg[0].items() if expr.k * w}, expr.k * arg[1])
        )
    return None


def program_counters(
    program: crasp.Program, *, max_comparisons: int = 10
) -> CounterAutomaton | None:
    """The program's language as a counter automaton (see the module docstring), or None past
    ``max_comparisons`` comparisons."""
    ops = crasp.operations(program.output)
    dims = operation_dims(program)
    counts = [op for op in ops if isinstance(op, crasp.Count)]
    less = [op for op in ops if isinstance(op, crasp.Less)]
    if len(less) > max_comparisons:
        return None
    names = tuple(dims[c] for c in counts)
    rules: list[CounterRule] = []
    for a, symbol in enumerate(program.alphabet):
        for bits in product((False, True), repeat=len(less)):
            truth = dict(zip(less, bits, strict=True))
            # Booleans, and counts at i as linear forms of the counts at i − 1
            here: dict[crasp.Vec, bool | _Linear] = {}
            guard: list[Atom] = []
            for op in ops:
                if isinstance(op, crasp.Token):
                    here[op] = op.symbol == symbol
                elif isinstance(op, crasp.Truth):
                    here[op] = op.value
                elif isinstance(op, crasp.Not):
                    here[op] = not here[op.arg]
                elif isinstance(op, crasp.And):
                    here[op] = bool(here[op.left]) and bool(here[op.right])
                elif isinstance(op, crasp.Or):
                    here[op] = bool(here[op.left]) or bool(here[op.right])
                elif isinstance(op, crasp.Count):
                    here[op] = ({dims[op]: 1}, int(bool(here[op.arg])))
                elif isinstance(op, crasp.Number):
                    here[op] = ({}, op.value)
                elif isinstance(op, crasp.Add):
                    here[op] = _add(_count_value(here[op.left]), _count_value(here[op.right]))
                elif isinstance(op, crasp.Scale):
                    coefs, const = _count_value(here[op.arg])
                    here[op] = ({d: op.k * w for d, w in coefs.items() if op.k * w}, op.k * const)
                elif isinstance(op, crasp.Where):
                    here[op] = here[op.then] if here[op.cond] else here[op.otherwise]
                elif isinstance(op, crasp.Less):
                    # right − left > 0 (true) or left − right >= 0 (false), over the counts at i − 1
                    coefs, const = _add(
                        _count_value(here[op.right]), _count_value(here[op.left]), -1
                    )
                    sign = 1 if truth[op] else -1
                    row = tuple(sign * coefs.get(n, 0) for n in names)
                    guard.append((row, 1 - const if truth[op] else const))
                    here[op] = truth[op]
            add = tuple(_count_value(here[c])[1] for c in counts)
            target = int(bool(here[program.output]))
            for q in (0, 1):
                rules.append(
                    CounterRule(state=q, symbol=a, guard=tuple(guard), target=target, add=add)
                )
    return CounterAutomaton(
        states=2,
        counters=names,
        symbols=len(program.alphabet),
        start=int(program.empty),
        rules=tuple(rules),
        accepting=((1, ()),),
    )


def operations_form(program: crasp.Program, *, max_comparisons: int = 10) -> FollowsCounts | None:
    """The ``operations`` claim of ``program`` as the smt method states it for every length (see
    the module docstring), or None where the program has a conditional or more than
    ``max_comparisons`` comparisons."""
    automaton = program_counters(program, max_comparisons=max_comparisons)
    if automaton is None:
        return None
    dims = operation_dims(program)
    counts: list[str] = []
    comparisons: list[tuple[str, tuple[Atom, ...]]] = []
    for op, d in dims.items():
        if isinstance(op, crasp.Count):
            counts.append(d)
        elif isinstance(op, crasp.Less):
            left, right = _linear(op.left, dims), _linear(op.right, dims)
            if left is None or right is None:
                return None
            # left < right over the integers: right − left ≥ 1
            coefs, const = _add(right, left, -1)
            row = tuple(coefs.get(n, 0) for n in automaton.counters)
            comparisons.append((d, ((row, 1 - const),)))
        else:
            return None  # a conditional: its value is the count of one branch or the other
    return FollowsCounts(automaton=automaton, counts=tuple(counts), comparisons=tuple(comparisons))


def crasp_lemmas(
    program: crasp.Program, net: Network
) -> tuple[UniformCount | CountComparison, ...]:
    """One lemma per head and per comparison FFN of ``net``, the compiled ``program`` (see the
    module docstring), in network order."""
    dims = operation_dims(program)
    by_dim = {d: op for op, d in dims.items()}
    lemmas: list[UniformCount | CountComparison] = []
    for sub in net.layers:
        block = sub.block
        if isinstance(block, AttentionLayer):
            for h in block.heads:
                lemmas.append(
                    UniformCount(
                        id=f"{block.name}.{h.name}",
                        reference=REFERENCE,
                        layer=block.name,
                        head=h.name,
                        statement=f"head {h.name} averages its value over positions 0..i: its running count over 1/(i+1)",
                    )
                )
        elif isinstance(block, FFN) and block.steps and isinstance(block.steps[-1], Affine):
            written = block.steps[-1].outputs
            if not written or not all(isinstance(by_dim.get(d), crasp.Less) for d in written):
                continue
            outputs: dict[str, tuple[dict[str, int], int]] = {}
            for d in written:
                op = by_dim[d]
                assert isinstance(op, crasp.Less)
                left, right = _linear(op.left, dims), _linear(op.right, dims)
                if left is None or right is None:
                    break
                outputs[d] = _add(right, left, -1)
            else:
                counts = tuple(sorted({c for coefs, _k in outputs.values() for c in coefs}))
                shown = "; ".join(f"{d} = [{crasp.show_expr(by_dim[d])}]" for d in written)
                lemmas.append(
                    CountComparison(
                        id=block.name,
                        reference=REFERENCE,
                        block=block.name,
                        unit=INV_I,
                        counts=counts,
                        outputs=outputs,
                        statement=f"FFN {block.name}, fed counts over 1/(i+1), writes each comparison's 0/1 value: {shown}",
                    )
                )
    return tuple(lemmas)
