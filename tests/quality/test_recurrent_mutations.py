"""The PredictsNext checker finds the bugs of mutated recurrent networks (STYLE.md §8).

Every nonzero weight and bias of the D2 Stack-RNN (W_ih with its bias, W_hh, W_sh, W_a, W_n and
the readout W_y) is moved by +1 and by −1, one at a time. Each mutant is checked at |w| <= 3 and
the verdict is compared with a plain enumeration done here (every string run on its own with
:func:`netproof.symbolic.recurrent.run`, its predictions compared with the D2 targets):

- some string gets a wrong set → the checker says ``Refuted`` with the shortlex-first such
  string;
- none does → the checker says ``Proved`` (the mutant is equivalent up to 3: σ saturates).

Most mutants must be caught (σ saturates, so many +1 moves change nothing).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from fractions import Fraction

import pytest

from netproof.constructions.marnn_tasks import dyck_task
from netproof.constructions.suzgun2019 import stack_rnn
from netproof.symbolic import Affine, RecurrentNetwork
from netproof.symbolic.recurrent import run
from netproof.verifier.claims import Construction, PredictsNext, Proved, Refuted
from netproof.verifier.exhaustive.checker import Job, check

BOUND = 3
TASK = dyck_task(2)
CELL_MAPS = ("W_ih", "W_hh", "W_sh", "W_a", "W_n")


def _moved(a: Affine, row: int, col: int | None, delta: Fraction) -> Affine:
    if col is None:
        bias = tuple(b + delta if i == row else b for i, b in enumerate(a.bias))
        return dataclasses.replace(a, bias=bias)
    weights = tuple(
        tuple(w + delta if (i, j) == (row, col) else w for j, w in enumerate(r))
        for i, r in enumerate(a.weights)
    )
    return dataclasses.replace(a, weights=weights)


def mutants() -> Iterator[tuple[str, RecurrentNetwork]]:
    net = stack_rnn(task="d2")
    maps = {name: getattr(net.cell, name) for name in CELL_MAPS} | {"W_y": net.readout.W_y}
    for name, a in maps.items():
        spots = [(i, j) for i, r in enumerate(a.weights) for j, w in enumerate(r) if w != 0]
        if name == "W_ih":
            spots += [(i, None) for i, b in enumerate(a.bias) if b != 0]
        for (i, j), delta in itertools.product(spots, (Fraction(1), Fraction(-1))):
            where = f"{name}[{a.outputs[i]}, {'bias' if j is None else a.inputs[j]}] {'+1' if delta > 0 else '-1'}"
            changed = _moved(a, i, j, delta)
            if name == "W_y":
                yield (
                    where,
                    dataclasses.replace(net, readout=dataclasses.replace(net.readout, W_y=changed)),
                )
            else:
                yield (
                    where,
                    dataclasses.replace(net, cell=dataclasses.replace(net.cell, **{name: changed})),
                )


MUTANTS = list(mutants())


def first_wrong(net: RecurrentNetwork) -> tuple[str, ...] | None:
    for m in range(1, BOUND + 1):
        for w in itertools.product(TASK.inputs, repeat=m):
            if run(net, w).predictions[-1] != TASK.next_sets(w)[-1]:
                return w
    return None


def verdict_of(net: RecurrentNetwork) -> object:
    c = Construction(
        name="mutant",
        paper_id="test.mutant",
        title="",
        reference="",
        params=(),
        build=lambda values: net,
        claims=lambda values: (),
    )
    claim = PredictsNext(id="S1", statement="", reference="", task=TASK, min_len=1, max_len=BOUND)
    return check(Job(c, {}), claim)


@pytest.mark.parametrize(("where", "net"), MUTANTS, ids=[w for w, _ in MUTANTS])
def test_a_mutated_weight_is_refuted_exactly_when_some_short_string_gets_a_wrong_set(
    where: str, net: RecurrentNetwork
) -> None:
    wrong = first_wrong(net)
    verdict = verdict_of(net)
    if wrong is None:
        assert isinstance(verdict, Proved), (where, verdict)
    else:
        assert isinstance(verdict, Refuted), (where, verdict)
        assert verdict.word == wrong, where


def test_most_mutants_are_caught() -> None:
    caught = sum(first_wrong(net) is not None for _where, net in MUTANTS)
    assert len(MUTANTS) >= 100
    assert caught >= 0.6 * len(MUTANTS), f"{caught} of {len(MUTANTS)}"
