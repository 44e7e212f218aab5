"""The Shuffle-Dyck-k example module (examples/shuffle_dyck.py): its C-RASP program and its
counter automaton accept exactly Shuffle-Dyck-k (an independent predicate) on every short word,
and, with ``-m slow``, the compiled network of Shuffle-Dyck-2 is proved to recognize the counter
automaton's language for every length (docs/rasp.md, "Shuffle-Dyck-k")."""

from __future__ import annotations

import itertools
import runpy
from pathlib import Path
from typing import Any

import pytest

from netproof.verifier.claims import Proved
from netproof.verifier.claims.rasp import crasp as C

EXAMPLE = Path(__file__).parents[2] / "examples" / "shuffle_dyck.py"


def _module() -> dict[str, Any]:
    return runpy.run_path(str(EXAMPLE))


def _shuffle_dyck(word: tuple[str, ...], k: int) -> bool:
    depth = [0] * k
    for s in word:
        if s in "([{":
            depth["([{".index(s)] += 1
        else:
            t = ")]}".index(s)
            depth[t] -= 1
            if depth[t] < 0:
                return False
    return all(d == 0 for d in depth)


@pytest.mark.parametrize("k,hi", [(1, 8), (2, 5), (3, 4)])
def test_the_program_and_its_counter_automaton_accept_exactly_shuffle_dyck_k(
    k: int, hi: int
) -> None:
    program, reference = _module()["PROGRAMS"][f"shuffle-dyck{k}"]
    alphabet = program.alphabet
    assert alphabet == tuple("([{"[:k]) + tuple(")]}"[:k])
    for m in range(hi + 1):
        for w in itertools.product(alphabet, repeat=m):
            want = _shuffle_dyck(w, k)
            assert C.accepts(program, w) == want, w
            assert reference.accepts(tuple(alphabet.index(s) for s in w)) == want, w
    assert _shuffle_dyck(tuple("([)]"), 2)  # not Dyck-2, but in the shuffle


@pytest.mark.slow
def test_the_network_of_shuffle_dyck_2_recognizes_it_for_every_length() -> None:
    from netproof.constructions.rasp import program_constructions
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.smt.prove import prove_claim

    mod = _module()
    (c,) = program_constructions(
        {"shuffle-dyck2": mod["PROGRAMS"]["shuffle-dyck2"]}, max_len=mod["MAX_LEN"]
    )
    claim = next(cl for cl in c.claims({}) if cl.id == "network=language")
    v = prove_claim(Job(c, {}), claim, method="smt", max_len=4, timeout=600).verdict
    assert isinstance(v, Proved) and "every longer one" in v.detail, v
