"""Reference languages in plain Python, the ground truth the networks are checked against.

>>> PARITY.contains(("1", "0", "1", "1"))
True
>>> FIRST.contains(())
False
"""

from __future__ import annotations

from netproof.verifier.claims import Automaton, Language, Word


def _parity(w: Word) -> bool:
    return w.count("1") % 2 == 1


def _first(w: Word) -> bool:
    return len(w) >= 1 and w[0] == "1"


PARITY = Language(
    name="PARITY",
    alphabet=("0", "1"),
    contains=_parity,
    description="words over {0,1} with an odd number of 1s",
    automaton=Automaton(states=2, start=0, accepting=frozenset({1}), delta=((0, 1), (1, 0))),
)

FIRST = Language(
    name="FIRST",
    alphabet=("0", "1"),
    contains=_first,
    description="words over {0,1} whose first symbol is 1",
    automaton=Automaton(states=3, start=0, accepting=frozenset({2}), delta=((1, 2), (1, 1), (2, 2))),
)
