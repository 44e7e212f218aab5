"""The reachable states of a Boolean transition system, by binary decision diagrams, in a
process of its own (this file run as a script).

The compositional proof for every length (:mod:`netproof.verifier.smt.compositional.search`) reads a
network with its lemmas in place as a transition system over Booleans; its reachable states are the
strongest inductive invariant. BDD operations (the package dd: CUDD where its wheel has it,
else dd's own Python BDDs) cannot be interrupted, and one image step can blow up, so they run in
a child process that is killed when the budget runs out or the caller says stop: a proof never
takes longer than its budget, and the answer is then ``unknown``, never a proof.

The system travels as plain data (:data:`Formula`: a list of nodes, children before parents),
so the child imports neither z3 nor the rest of netproof. Importing this module imports neither.

May import: the standard library and dd, nothing else (the child runs this file as a script, in
isolated mode: ``python -I <this file>``).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Formula = tuple[tuple[Any, ...], ...]
"""A Boolean formula as nodes, each ``("var", name)``, ``("const", bool)`` or
``(op, child, ...)`` with ``op`` one of not, and, or, iff, xor, implies, ite and children the
indices of earlier nodes; the last node is the formula."""

DiagramNodes = tuple[tuple[str, int, int], ...]
"""A BDD as (variable, node if false, node if true) per node, children first, the false
child's nodes before the true child's; 0 and 1 are the constants and node i is entry i - 2."""

_POLL = 0.05  # seconds between looks at the caller's stop flag


def reachable(
    order: Sequence[str],
    states: Sequence[str],
    primed: Sequence[str],
    init: Formula,
    trans: Formula,
    bad: Formula,
    deadline: float,
    stop: Callable[[], bool],
) -> tuple[str, Any]:
    """The reachable states of the system (``init``, ``trans`` over ``states``, ``primed`` and
    inputs, ``bad``) with the variables in ``order``: ("safe", (nodes, root)) with no bad state
    reachable, ("unsafe", steps) with one, ("unknown", why) where the deadline (of
    ``time.perf_counter``) passed or ``stop()`` said so, ("unsupported", why) where dd is not
    installed or the child failed."""
    try:
        import dd  # noqa: F401  (only to say early that it is missing)
    except ImportError:
        return "unsupported", "the BDD package dd is not installed (pip install dd)"
    payload = pickle.dumps((tuple(order), tuple(states), tuple(primed), init, trans, bad))
    started = time.perf_counter()
    # the child runs this file as a script in isolated mode (-I: neither the script's folder nor
    # PYTHONPATH on sys.path), so it needs nothing but the standard library and dd
    proc = subprocess.Popen(
        [sys.executable, "-I", str(Path(__file__).resolve())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    data: bytes | None = payload
    done: tuple[bytes, bytes] | None = None
    try:
        while done is None:
            try:
                done = proc.communicate(data, timeout=_POLL)
            except subprocess.TimeoutExpired:
                data = None  # sent with the first call
                if stop() or time.perf_counter() > deadline:
                    why = "stopped" if stop() else "time ran out"
                    return "unknown", f"{why} after {time.perf_counter() - started:.1f} s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    out, err = done
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return "unsupported", f"the BDD process failed (exit {proc.returncode}: {tail[0]})"
    return pickle.loads(out)  # type: ignore[no-any-return]


def _compute(
    order: Sequence[str],
    states: Sequence[str],
    primed: Sequence[str],
    init: Formula,
    trans: Formula,
    bad: Formula,
) -> tuple[str, Any]:
    try:
        from dd import cudd as module
    except ImportError:
        from dd import autoref as module
    bdd = module.BDD()
    bdd.configure(
        reordering=False
    )  # one order: the diagram, hence the proof log, does not depend on the run
    bdd.declare(*order)
    i, b = (_build(bdd, f) for f in (init, bad))
    hidden = set(order) - set(primed)
    back = dict(zip(primed, states, strict=True))
    alternatives = [_clusters(bdd, hidden, parts) for parts in _alternatives(trans)]
    reach = frontier = i
    steps = 0
    while True:
        if reach & b != bdd.false:
            return "unsafe", steps
        image = bdd.false
        for alt in alternatives:
            image = image | _image(bdd, module, frontier, alt, hidden)
        new = bdd.let(back, image) & ~reach
        if new == bdd.false:
            return "safe", _nodes(bdd, reach)
        reach, frontier = reach | new, new
        steps += 1


def _alternatives(formula: Formula) -> list[list[Formula]]:
    """The transition relation as a disjunction of conjunctions (the moves of the system, each
    the conjunction of its constraints), nested ``and``/``or`` flattened: each conjunct a
    formula of its own, so that the relation is never built as one diagram (Dyck(2, 10)'s
    segment: 5.4 million nodes and 89 s that way)."""
    top = len(formula) - 1

    def flat(index: int, op: str) -> list[int]:
        node = formula[index]
        if node[0] != op:
            return [index]
        return [c for child in node[1:] for c in flat(child, op)]

    def sub(index: int) -> Formula:
        # the nodes index depends on, renumbered (children before parents)
        keep: dict[int, int] = {}
        stack = [(index, False)]
        out: list[tuple[Any, ...]] = []
        while stack:
            k, expanded = stack.pop()
            if k in keep:
                continue
            node = formula[k]
            kids = node[1:] if node[0] not in ("var", "const") else ()
            if not expanded and kids:
                stack.append((k, True))
                stack.extend((c, False) for c in reversed(kids))
                continue
            keep[k] = len(out)
            out.append(node if not kids else (node[0], *(keep[c] for c in kids)))
        return tuple(out)

    return [[sub(c) for c in flat(alt, "and")] for alt in flat(top, "or")]


CLUSTER = 20_000
"""The most nodes a cluster of a move's conjuncts grows to before the next one starts."""


def _clusters(
    bdd: Any, hidden: set[str], parts: Sequence[Formula]
) -> list[tuple[Any, set[str], set[str]]]:
    """One move's conjuncts in their order, conjoined into clusters of up to :data:`CLUSTER`
    nodes, each with the hidden variables it or an earlier cluster mentions and those a later
    one mentions (so that they are quantified as soon as no later cluster needs them)."""
    built: list[Any] = []
    for f in parts:
        u = _build(bdd, f)
        if built and len(built[-1]) < CLUSTER:
            joined = built[-1] & u
            if len(joined) <= CLUSTER:
                built[-1] = joined
                continue
        built.append(u)
    supports = [set(bdd.support(u)) & hidden for u in built]
    return [
        (u, set().union(*supports[: k + 1]), set().union(*supports[k + 1 :]))
        for k, u in enumerate(built)
    ]


def _image(
    bdd: Any,
    module: Any,
    frontier: Any,
    clusters: Sequence[tuple[Any, set[str], set[str]]],
    hidden: set[str],
) -> Any:
    """∃ hidden. frontier ∧ the move's clusters, each hidden variable quantified as soon as no
    later cluster mentions it."""
    mine = set(bdd.support(frontier)) & hidden
    if not clusters:
        return bdd.exist(mine, frontier)
    u = frontier
    for part, upto, later in clusters:
        q = (mine | upto) - later
        # CUDD's relational product; dd's own Python BDDs: the conjunction, then the quantifier
        u = (
            module.and_exists(u, part, q)
            if hasattr(module, "and_exists")
            else bdd.exist(q, u & part)
        )
    return u


def _build(bdd: Any, formula: Formula) -> Any:
    done: list[Any] = []
    for node in formula:
        op = node[0]
        if op == "var":
            got = bdd.var(node[1])
        elif op == "const":
            got = bdd.true if node[1] else bdd.false
        else:
            args = [done[c] for c in node[1:]]
            if op == "not":
                got = ~args[0]
            elif op == "and":
                got = bdd.true
                for a in args:
                    got = got & a
            elif op == "or":
                got = bdd.false
                for a in args:
                    got = got | a
            elif op == "iff":
                got = args[0].equiv(args[1])
            elif op == "xor":
                got = ~args[0].equiv(args[1])
            elif op == "implies":
                got = args[0].implies(args[1])
            elif op == "ite":
                got = bdd.ite(args[0], args[1], args[2])
            else:
                raise ValueError(f"formula node {node!r}: unknown operation {op!r}")
        done.append(got)
    return done[-1]


def _nodes(bdd: Any, u: Any) -> tuple[DiagramNodes, int]:
    """``u`` as :data:`DiagramNodes` and its root (complemented edges, where the package has
    them, pushed down to the constants)."""
    index: dict[int, int] = {}
    nodes: list[tuple[str, int, int]] = []
    stack: list[tuple[Any, bool]] = [(u, False)]
    while stack:
        f, expanded = stack.pop()
        key = int(f)
        if key in index:
            continue
        if f == bdd.false or f == bdd.true:
            index[key] = int(f == bdd.true)
            continue
        level, lo, hi = bdd.succ(f)
        if f.negated:
            lo, hi = ~lo, ~hi
        if not expanded:
            stack.extend(((f, True), (hi, False), (lo, False)))  # the false child first
            continue
        nodes.append((bdd.var_at_level(level), index[int(lo)], index[int(hi)]))
        index[key] = len(nodes) + 1
    return tuple(nodes), index[int(u)]


def main() -> None:
    """The child: a pickled system on stdin, the pickled answer on stdout."""
    args = pickle.loads(sys.stdin.buffer.read())
    answer = _compute(*args)
    sys.stdout.buffer.write(pickle.dumps(answer))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
