"""Hypothesis strategies for random B-RASP and C-RASP programs and the words they read.

Each program strategy builds a pool of vectors from the tokens up, drawing one operation at a
time over earlier vectors, and outputs one Boolean vector of the pool; hypothesis shrinks a
program towards fewer, simpler operations. Every operation of the languages is drawn: for
B-RASP ¬, ∧, ∨ and leftmost/rightmost attention with each mask, scores and values that read
vectors at i and at j, and defaults; for C-RASP ¬, ∧, ∨, counting, +, −, integer constants and
multiples, comparisons (<, ≤, >, ≥, =, ≠) and conditionals.

Use them in your own tests::

    from hypothesis import given
    from netproof.verifier.fuzzing.rasp_strategies import brasp_programs, rasp_words

    @given(brasp_programs(), rasp_words(("a", "b"), max_len=12))
    def test_my_compiler(program, word):
        ...

May import: hypothesis and the vocabulary :mod:`netproof.verifier.claims.rasp`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C

__all__ = ["brasp_programs", "crasp_programs", "rasp_words"]


def rasp_words(
    alphabet: tuple[str, ...] = ("a", "b"), *, min_len: int = 1, max_len: int = 12
) -> st.SearchStrategy[tuple[str, ...]]:
    """Words over ``alphabet`` of length ``min_len..max_len``, as tuples."""
    return st.lists(st.sampled_from(alphabet), min_size=min_len, max_size=max_len).map(tuple)


@st.composite
def _pair(draw: st.DrawFn, pool: list[B.BVec]) -> B.BVec:
    """A Boolean combination of at most one vector read at i and up to two read at j."""
    j1 = draw(st.sampled_from(pool)).at_j
    kind = draw(st.sampled_from(("j", "not_j", "and_i", "or_jj", "const")))
    if kind == "j":
        return j1
    if kind == "not_j":
        return ~j1
    if kind == "and_i":
        return draw(st.sampled_from(pool)).at_i & j1
    if kind == "or_jj":
        return j1 | ~draw(st.sampled_from(pool)).at_j
    return draw(st.sampled_from((B.TRUE, B.FALSE)))


@st.composite
def brasp_programs(
    draw: Any, alphabet: tuple[str, ...] = ("a", "b"), *, max_ops: int = 5
) -> B.Program:
    """A random B-RASP program over ``alphabet`` with up to ``max_ops`` operations."""
    pool: list[B.BVec] = [B.token(s) for s in alphabet]
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(("not", "and", "or", "attend", "attend")))
        if kind == "not":
            pool.append(~draw(st.sampled_from(pool)))
        elif kind in ("and", "or"):
            x, y = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
            pool.append(x & y if kind == "and" else x | y)
        else:
            side = draw(st.sampled_from((B.leftmost, B.rightmost)))
            mask = draw(st.sampled_from(("past", "future", "all")))
            pool.append(
                side(
                    mask,
                    score=draw(_pair(pool)),
                    value=draw(_pair(pool)),
                    default=draw(st.sampled_from([*pool, B.TRUE, B.FALSE])),
                )
            )
    return B.Program(
        "random", alphabet, output=draw(st.sampled_from(pool[len(alphabet) :] or pool))
    )


@st.composite
def crasp_programs(
    draw: Any, alphabet: tuple[str, ...] = ("a", "b"), *, max_ops: int = 6
) -> C.Program:
    """A random C-RASP program over ``alphabet`` with up to ``max_ops`` operations; its output
    is a Boolean vector (at least one comparison of counts)."""
    bools: list[C.BVec] = [C.token(s) for s in alphabet]
    counts: list[C.CVec] = [C.count(C.token(alphabet[0]))]
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(
            st.sampled_from(
                ("not", "and", "or", "count", "add", "sub", "scale", "const", "cmp", "cmp", "where")
            )
        )
        if kind == "not":
            bools.append(~draw(st.sampled_from(bools)))
        elif kind in ("and", "or"):
            x, y = draw(st.sampled_from(bools)), draw(st.sampled_from(bools))
            bools.append(x & y if kind == "and" else x | y)
        elif kind == "count":
            counts.append(C.count(draw(st.sampled_from(bools))))
        elif kind in ("add", "sub"):
            x, y = draw(st.sampled_from(counts)), draw(st.sampled_from(counts))
            counts.append(x + y if kind == "add" else x - y)
        elif kind == "scale":
            counts.append(draw(st.sampled_from((-2, -1, 2, 3))) * draw(st.sampled_from(counts)))
        elif kind == "const":
            counts.append(draw(st.sampled_from(counts)) + draw(st.integers(-3, 3)))
        elif kind == "where":
            counts.append(
                C.where(
                    draw(st.sampled_from(bools)),
                    draw(st.sampled_from(counts)),
                    draw(st.sampled_from(counts)),
                )
            )
        else:
            x = draw(st.sampled_from(counts))
            y = draw(st.one_of(st.sampled_from(counts), st.integers(-2, 3)))
            op = draw(st.sampled_from(("<", "<=", ">", ">=", "eq", "ne")))
            cmp = {
                "<": x.__lt__,
                "<=": x.__le__,
                ">": x.__gt__,
                ">=": x.__ge__,
                "eq": x.eq,
                "ne": x.ne,
            }[op]
            bools.append(cmp(y))
    x, y = draw(st.sampled_from(counts)), draw(st.sampled_from(counts))
    output = draw(st.sampled_from([*bools[len(alphabet) :], x < y]))
    return C.Program("random", alphabet, output=output)
