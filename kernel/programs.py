"""The kernel's own reader and interpreter of B-RASP and C-RASP program files (``program.rasp``,
``format: netproof-rasp-program``, version 1, written beside a compiled program's records), from
the semantics as documented (docs/rasp-semantics.md), sharing no code with netproof's.

A file lists every operation once, operands first: ``[op, field, ...]`` with an operand written
as the index of an earlier entry. Words are w_1..w_n (here indices 0..n-1); a program accepts a
non-empty word iff its Boolean output is 1 at the last position, the empty word iff ``empty``.

B-RASP (Boolean vectors): ``token a`` (Q_a(i) = [w_i = a]), ``const b``, ``not``, ``and``, ``or``
at one position; ``attend side mask score value default``: J = {j : M(i, j) and S(i, j)} with M
``past`` j < i, ``future`` j > i, ``all``; P(i) = D(i) if J is empty, else V(i, j*) with
j* = min J (``leftmost``) or max J (``rightmost``). Scores and values read ``ati``/``atj`` (a
vector at the query or the key position), constants and Boolean combinations of those.

C-RASP (Boolean and count vectors): ``token``, ``truth b``, ``not``, ``and``, ``or``;
``count P`` (C(i) = #{j ≤ i : P(j)}), ``number c``, ``add``, ``scale k C``, ``where P C1 C2``
(P(i) ? C1(i) : C2(i)) and ``less C1 C2`` (C1(i) < C2(i)).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

from .netfile import KernelError

Word = tuple[str, ...]
B_OPS = {"token": 1, "const": 1, "not": 1, "and": 2, "or": 2, "ati": 1, "atj": 1, "attend": 5}
C_OPS = {"token": 1, "truth": 1, "not": 1, "and": 2, "or": 2, "less": 2, "count": 1, "number": 1}
C_OPS |= {"add": 2, "scale": 2, "where": 3}
OPERANDS = {  # which fields of an entry are operands (indices of earlier entries)
    "not": (1,), "and": (1, 2), "or": (1, 2), "ati": (1,), "atj": (1,), "attend": (3, 4, 5),
    "less": (1, 2), "count": (1,), "add": (1, 2), "scale": (2,), "where": (1, 2, 3),
}  # fmt: skip

BINARY: dict[str, Callable[[Any, Any], Any]] = {"less": operator.lt, "add": operator.add}
BINARY |= {"and": lambda p, q: p and q, "or": lambda p, q: p or q}  # position-wise, two operands


def read(doc: Any) -> dict[str, Any]:
    """A program file's document, checked (format, version, operations, operands first)."""
    if not isinstance(doc, dict) or doc.get("format") != "netproof-rasp-program":
        raise KernelError("not a netproof program file (format must be 'netproof-rasp-program')")
    if doc.get("format_version") != 1 or doc.get("language") not in ("B-RASP", "C-RASP"):
        raise KernelError(
            "a program file of version 1 in B-RASP or C-RASP is what the kernel reads"
        )
    ops = B_OPS if doc["language"] == "B-RASP" else C_OPS
    alphabet, vectors = doc.get("alphabet"), doc.get("vectors")
    if not isinstance(alphabet, list) or not all(isinstance(a, str) for a in alphabet):
        raise KernelError("the program file's alphabet is not a list of symbols")
    if not isinstance(vectors, list) or not isinstance(doc.get("empty"), bool):
        raise KernelError("the program file has no vectors list or no Boolean 'empty'")
    for k, e in enumerate(vectors):
        if not (isinstance(e, list) and e and e[0] in ops and len(e) == 1 + ops[e[0]]):
            raise KernelError(f"vectors[{k}] = {e!r} is not a {doc['language']} operation")
        for f in OPERANDS.get(e[0], ()):
            if not (isinstance(e[f], int) and 0 <= e[f] < k):
                raise KernelError(f"vectors[{k}]: operand {e[f]!r} is not an earlier entry")
        if e[0] == "attend" and (
            e[1] not in ("leftmost", "rightmost") or e[2] not in ("past", "future", "all")
        ):
            raise KernelError(f"vectors[{k}]: side {e[1]!r} or mask {e[2]!r} unknown")
        if e[0] in ("number", "scale") and (isinstance(e[1], bool) or not isinstance(e[1], int)):
            raise KernelError(f"vectors[{k}]: {e[1]!r} is not an integer")
    out = doc.get("output")
    if not (isinstance(out, int) and 0 <= out < len(vectors)):
        raise KernelError(f"output {out!r} is not an entry")
    dims = doc.setdefault("dims", [])
    if not isinstance(dims, list) or not all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], int) and isinstance(x[1], str)
        and 0 <= x[0] < len(vectors) for x in dims
    ):  # fmt: skip
        raise KernelError("the program file's dims are not a list of [entry, dim name]")
    return doc


def vectors(doc: dict[str, Any], w: Word) -> list[list[Any]]:
    """Every entry's vector on ``w`` (a pair expression's entry: None, it is read by ``pair``)."""
    n, vs = len(w), doc["vectors"]
    got: list[Any] = []

    def pair(k: int, i: int, j: int) -> bool:
        e = vs[k]
        if e[0] == "ati" or e[0] == "atj":
            return bool(got[e[1]][i if e[0] == "ati" else j])
        if e[0] == "const":
            return bool(e[1])
        if e[0] == "not":
            return not pair(e[1], i, j)
        if e[0] in ("and", "or"):
            return bool(BINARY[e[0]](pair(e[1], i, j), pair(e[2], i, j)))
        raise KernelError(f"vectors[{k}] ({e[0]}) in a score or value is not read at i or j")

    for e in vs:
        op = e[0]
        a = [got[e[f]] if f in OPERANDS.get(op, ()) else None for f in range(len(e))]
        if op in ("ati", "atj") or (op in ("not", "and", "or") and None in (a[1], a[-1])):
            v: Any = None  # read at i or j, or a Boolean combination of such: a pair expression
        elif op == "token":
            v = [s == e[1] for s in w]
        elif op in ("const", "truth", "number"):
            v = [e[1]] * n
        elif op == "not":
            v = [not x for x in _of(a[1], e)]
        elif op in BINARY:
            v = [BINARY[op](p, q) for p, q in zip(_of(a[1], e), _of(a[2], e), strict=True)]
        elif op == "attend":
            v = []
            for i in range(n):
                keys = {"past": range(i), "future": range(i + 1, n), "all": range(n)}[e[2]]
                hit = [j for j in keys if pair(e[3], i, j)]
                j = (hit[0] if e[1] == "leftmost" else hit[-1]) if hit else None
                v.append(_of(a[5], e)[i] if j is None else pair(e[4], i, j))
        elif op == "count":  # C(i) = #{j ≤ i : P(j)}, an int
            v = list(itertools.accumulate(int(bool(x)) for x in _of(a[1], e)))
        elif op == "scale":
            v = [e[1] * x for x in _of(a[2], e)]
        else:  # where
            cond, t, f = _of(a[1], e), _of(a[2], e), _of(a[3], e)
            v = [t[i] if cond[i] else f[i] for i in range(n)]
        got.append(v)
    return got


def _of(v: Any, e: list[Any]) -> list[Any]:
    if v is None:
        raise KernelError(f"{e[0]} reads a vector at i or j outside a score or value")
    return list(v)


def language(doc: dict[str, Any]) -> Callable[[Word], bool]:
    """The words the program accepts: its output at the last position (``empty`` for ε)."""

    def member(w: Word) -> bool:
        if not w:
            return bool(doc["empty"])
        last = vectors(doc, w)[doc["output"]]
        if last is None or not isinstance(last[-1], bool):
            raise KernelError("the program's output is not a Boolean vector")
        return last[-1]

    return member
