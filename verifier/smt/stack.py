"""A :class:`~netproof.verifier.claims.StackAutomaton` run over a symbolic word of a fixed number
of slots, for the one-length and range queries (:func:`stack_member`): the stack as a height in
unary and slots of binary type codes, one copy per position, so that its size grows with the
depth and log(types), where a DFA's one-hot states grow with types^depth (Dyck(8, 10) has 1.2·10⁹
stacks).

May import: the claims vocabulary; z3 handed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from netproof.verifier.claims import StackAutomaton

__all__ = ["stack_member"]


def stack_member(
    z3: Any,
    ctx: Any,
    stack: StackAutomaton,
    symbols: Sequence[Sequence[Any]],
    present: Sequence[Any] | None,
    assertions: list[Any],
    prefix: str = "stack",
) -> Any:
    """The Bool "the word is accepted" of ``stack`` run over the word whose slot t holds symbol a
    iff ``symbols[t][a]`` (exactly one per slot). ``present[t]`` (a Bool, or True) says whether
    slot t is part of the word; an absent slot leaves the stack as it is. The stack after each
    slot is a set of fresh Bools (``{prefix}{t}.dead``, ``.h{j}`` = height >= j, ``.s{j}.{b}``:
    bit b of slot j's type code, zero above the height) defined by equalities appended to
    ``assertions``. A rejected prefix (a push onto a full stack, a pop of an empty stack or of
    another type) sets ``dead`` and clears the rest."""
    D = stack.depth
    nb = max(1, (stack.types - 1).bit_length())
    true, false = z3.BoolVal(True, ctx), z3.BoolVal(False, ctx)
    dead: Any = false
    h: list[Any] = [true, *([false] * D), false]  # h[0] = true, h[D + 1] = false
    slot = {(j, b): false for j in range(1, D + 1) for b in range(nb)}
    code: list[int] = []  # the type each symbol pushes or pops
    for u, o in zip(stack.push, stack.pop, strict=True):
        typ = u if u is not None else o
        assert typ is not None  # StackAutomaton checks that each symbol pushes or pops
        code.append(typ)

    def fresh(name: str, value: Any) -> Any:
        if z3.is_true(value) or z3.is_false(value):
            return value
        v = z3.Bool(name, ctx)
        assertions.append(v == value)
        return v

    for t, sym in enumerate(symbols):
        push = z3.Or([sym[a] for a in range(len(sym)) if stack.push[a] is not None] or [false])
        pop = z3.Or([sym[a] for a in range(len(sym)) if stack.pop[a] is not None] or [false])
        ty = [
            z3.Or([sym[a] for a in range(len(sym)) if (code[a] >> b) & 1] or [false])
            for b in range(nb)
        ]
        top = [
            z3.Or([z3.And(h[j], z3.Not(h[j + 1]), slot[(j, b)]) for j in range(1, D + 1)])
            for b in range(nb)
        ]
        mismatch = z3.Or([z3.Xor(top[b], ty[b]) for b in range(nb)])
        died = z3.Or(dead, z3.And(push, h[D]), z3.And(pop, z3.Or(z3.Not(h[1]), mismatch)))
        alive = z3.Not(died)
        new_h = [true]
        new_slot = {}
        for j in range(1, D + 1):
            new_h.append(z3.And(alive, z3.If(push, h[j - 1], h[j + 1])))
            here = z3.And(h[j - 1], z3.Not(h[j]))  # the slot a push writes
            for b in range(nb):
                new_slot[(j, b)] = z3.And(
                    alive,
                    z3.If(push, z3.If(here, ty[b], slot[(j, b)]), z3.And(slot[(j, b)], h[j + 1])),
                )
        new_h.append(false)
        at = None if present is None else present[t]
        if at is not None and not (isinstance(at, bool) and at) and not z3.is_true(at):
            died = z3.If(at, died, dead)
            new_h = [new_h[0], *(z3.If(at, new_h[j], h[j]) for j in range(1, D + 1)), false]
            new_slot = {key: z3.If(at, v, slot[key]) for key, v in new_slot.items()}
        dead = fresh(f"{prefix}{t + 1}.dead", died)
        h = [true, *(fresh(f"{prefix}{t + 1}.h{j}", new_h[j]) for j in range(1, D + 1)), false]
        slot = {(j, b): fresh(f"{prefix}{t + 1}.s{j}.{b}", v) for (j, b), v in new_slot.items()}
    return z3.And(z3.Not(dead), z3.Not(h[1]))
