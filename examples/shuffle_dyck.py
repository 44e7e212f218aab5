"""Shuffle-Dyck-k as a C-RASP program, with its counter automaton as the reference: a user
module (``netproof prove examples/shuffle_dyck.py --method best``).

Shuffle-Dyck-k is the shuffle of k Dyck-1 languages over k bracket pairs: every prefix has, for
each pair, at least as many openings as closings, and the whole word has as many of each. It is
not regular (nor Dyck-k: ``([)]`` is in it); its memory is k counts. The program counts each
bracket with one head (2k counts), flags a position where some pair's closings outnumber its
openings, counts the flags (one more count) and accepts where no flag was counted and every
pair balances. The reference has one control state and k counters, the depths, each step
guarded so that no depth goes below 0; it accepts where every depth is 0.

``PROGRAMS`` holds k = 1, 2 and 3 (symbols ``( ) [ ] { }``); ``MAX_LEN`` bounds the exhaustive
checks. docs/rasp.md ("Shuffle-Dyck-k") gives what is proved for every length, in what time.
"""

from __future__ import annotations

from netproof.verifier.claims.counting import CounterAutomaton
from netproof.verifier.claims.rasp import crasp as C

OPEN, CLOSE = "([{", ")]}"


def program(k: int) -> C.Program:
    """The C-RASP program of Shuffle-Dyck-k (2k + 1 counts)."""
    opens = [C.token(OPEN[t]) for t in range(k)]
    closes = [C.token(CLOSE[t]) for t in range(k)]
    flag = C.count(closes[0]) > C.count(opens[0])
    balanced = C.count(opens[0]).eq(C.count(closes[0]))
    for t in range(1, k):
        flag = flag | (C.count(closes[t]) > C.count(opens[t]))
        balanced = balanced & C.count(opens[t]).eq(C.count(closes[t]))
    alphabet = tuple(OPEN[:k]) + tuple(CLOSE[:k])
    return C.Program(
        f"shuffle_dyck{k}", alphabet, output=C.count(flag).eq(0) & balanced, empty=True
    )


def reference(k: int) -> CounterAutomaton:
    """Shuffle-Dyck-k's counter automaton: one state, the depths d0..d(k-1)."""
    depths = tuple(f"d{t}" for t in range(k))
    steps = []
    for t in range(k):
        steps.append(("q", OPEN[t], "", "q", {depths[t]: 1}))
        steps.append(("q", CLOSE[t], f"{depths[t]} >= 1", "q", {depths[t]: -1}))
    return CounterAutomaton.from_steps(
        alphabet=tuple(OPEN[:k]) + tuple(CLOSE[:k]),
        counters=depths,
        steps=steps,
        accept=[("q", " and ".join(f"{d} == 0" for d in depths))],
    )


PROGRAMS = {f"shuffle-dyck{k}": (program(k), reference(k)) for k in (1, 2, 3)}
MAX_LEN = 6
