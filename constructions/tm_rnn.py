"""Siegelmann–Sontag: a two-stack machine compiled into one saturated-linear σ-RNN, exactly.

Bhattamishra, Patel & Goyal 2020, Appendix B.1, cite Siegelmann & Sontag (1995) for "a σ-RNN
simulates any Turing machine" and say only: h = [q (one-hot state), Ψ₁, Ψ₂], stacks in a
"Cantor-like encoding", the input loaded in O(|s|) steps. They give no construction. This module
is the construction of the verified spec (``bhattamishra2020_suzgun2019_chang2021.md`` §2.2):

- **Stack code** ``enc(b₁…b_k) = Σ_i (2b_i+1)/4^i`` (b₁ on top), so every code lies in
  {0} ∪ [1/4, 1/2) ∪ [3/4, 1): ``top = σ(4c − 2)``, ``nonempty = σ(4c)``,
  ``push b: c/4 + (2b+1)/4``, ``pop: 4c − 2·top − 1``; after a pop the new top is
  ``σ(16c − 8·top − 6)`` and the new nonempty flag ``σ(16c − 8·top − 4)`` (the stack lemmas:
  claims M1-* of ``tm-sim``, proved for all reals with z3).
- **Neurons** (all σ of an affine map of h_{t−1} and x_t; gating constant K = 4): a loader (ST,
  pA, pB, e1, e3, ACC, START, DONE) reads the input while it lasts and accumulates enc(w) in
  ACC; START fires once, at the first blank input after tick 1. Then two groups alternate:
  B-neurons (``Cb``/``Tb``/``Nb`` per stack and operation, ``S:q``) apply the operation the
  A-neurons chose, A-neurons (``C``/``T``/``N`` per stack, one ``D:`` per rule) read the stacks
  and fire the unique applicable rule. One machine step takes two ticks.
- **Timing**: with t_S the tick at which START = 1 (``max(n+1, 2)`` when the RNN reads
  w, $, $, …; ``n+2`` when it reads #, w, $, …), configuration k is held at tick
  ``t_S + 1 + 2k``, where every A-neuron is 0. State = the one-hot ``S:``; stack i's code =
  Σ ``Cb{i}.*``, its top = Σ ``Tb{i}.*``, nonempty = Σ ``Nb{i}.*``.

Size: d_h = 37 + |Q| + |rules|. The machine's two stack symbols become the bits 0 and 1 (in the
order of its ``stack_alphabet``); a machine with another number of stack symbols is refused.

**Halting.** :class:`netproof.verifier.claims.machines.TwoStackMachine` halts when no transition applies. The
compiler makes that explicit as the spec's rule format has it: a state without transitions is a
*halting state* and gets the self-loop ``(h, *, *) → (h, keep, keep)``; a (state, top1, top2)
of a busy state without a transition gets a rule into a new halting state ``halt:accept`` or
``halt:reject`` (one extra step, with the stacks unchanged). The RNN halts at the first tick
where Σ_{halting q} S:q = 1, which is the tick of the halting configuration.

Where it lives: the compiler builds data only (a :class:`~netproof.verifier.claims.machines.SigmaRNN` and the
decoding of its states) and evaluates nothing, so it is construction code. It imports
:mod:`netproof.verifier.claims.machines` for the machine and σ-RNN data classes and the machine file reader; their
plain-Python semantics (``TwoStackMachine.configurations``, ``SigmaRNN.run_inputs``) stay on the
verifier side as the reference the checker compares the compiled RNN and the transformers with.

May import: the reference machines of the vocabulary (:mod:`netproof.verifier.claims.machines`);
never an interpreter or an engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from netproof.verifier.claims.machines import (
    EMPTY,
    Configuration,
    MachineError,
    SigmaRNN,
    TwoStackMachine,
)

K = Fraction(4)
"""The gating constant: σ(x + K·G − K) is σ(x) when G = 1 and 0 when G = 0 (for x ≤ K)."""

LOADER = ("ST", "pA", "pB", "e1", "e3", "ACC", "START", "DONE")
Convention = Literal["vanilla", "directional"]


@dataclass(frozen=True, slots=True)
class Rule:
    """``(state, a1, a2) → (next, op1, op2)``; a_i is ``"0"``, ``"1"``, ``"E"`` (empty) or
    ``"*"`` (any); op_i is ``noop``, ``push0``, ``push1`` or ``pop``."""

    state: str
    a1: str
    a2: str
    next: str
    op1: str
    op2: str

    @property
    def unit(self) -> str:
        return f"D:{self.state}/{self.a1}/{self.a2}"


@dataclass(frozen=True, slots=True)
class CompiledMachine:
    """A machine, its σ-RNN and how to read the machine's configuration off a hidden state."""

    name: str
    machine: TwoStackMachine
    rnn: SigmaRNN
    rules: tuple[Rule, ...]
    states: tuple[str, ...]
    halting: tuple[str, ...]
    accepting: tuple[str, ...]

    @property
    def halt_weights(self) -> dict[str, Fraction]:
        """The halting unit Σ_{halting q} S:q as weights over the RNN's units."""
        return {f"S:{q}": Fraction(1) for q in self.halting}

    def bit_symbol(self, bit: int) -> str:
        return self.machine.stack_alphabet[bit]

    def t_start(self, n: int, convention: Convention) -> int:
        """The tick at which START = 1 for an input of length n."""
        return max(n + 1, 2) if convention == "vanilla" else n + 2

    def tick(self, k: int, n: int, convention: Convention) -> int:
        """The tick that holds configuration k."""
        return self.t_start(n, convention) + 1 + 2 * k

    def decode(self, h: Mapping[str, Fraction]) -> Configuration | str:
        """The configuration a B-tick hidden state holds, or a one-line reason why it holds none
        (no or several states, a stack code outside the Cantor set)."""
        on = [q for q in self.states if h[f"S:{q}"] != 0]
        if len(on) != 1 or h[f"S:{on[0]}"] != 1:
            shown = ", ".join(f"S:{q}={h['S:' + q]}" for q in on) or "all 0"
            return f"the state units are not one-hot ({shown})"
        stacks: list[tuple[str, ...]] = []
        for i in (1, 2):
            c = sum((v for k, v in h.items() if k.startswith(f"Cb{i}.")), Fraction(0))
            top = sum((v for k, v in h.items() if k.startswith(f"Tb{i}.")), Fraction(0))
            nonempty = sum((v for k, v in h.items() if k.startswith(f"Nb{i}.")), Fraction(0))
            bits = _cantor_bits(c)
            if bits is None:
                return f"stack {i}'s code {c} is not a Cantor code"
            if nonempty != (1 if bits else 0) or top != (bits[0] if bits else 0):
                return f"stack {i}: top={top} nonempty={nonempty} disagree with its code {c}"
            stacks.append(tuple(self.bit_symbol(b) for b in reversed(bits)))
        return Configuration(on[0], stacks[0], stacks[1])

    def a_neurons(self) -> tuple[str, ...]:
        """The A-group units (0 at every configuration tick)."""
        return (
            *(f"{x}{i}" for i in (1, 2) for x in ("C", "T", "N")),
            *(r.unit for r in self.rules),
        )


def rnn_inputs(convention: Convention, word: Sequence[str], ticks: int) -> tuple[str | None, ...]:
    """The inputs a transformer feeds its RNN for ``ticks`` ticks: w, then blanks ($), after a
    leading blank (#) in the directional convention (None = f_b(#) = f_b($) = 0)."""
    lead: tuple[str | None, ...] = (None,) if convention == "directional" else ()
    seq = (*lead, *word)
    return tuple(seq[t] if t < len(seq) else None for t in range(ticks))


def _cantor_bits(c: Fraction) -> list[int] | None:
    """The bits (top first) of a stack code, or None when c is not a finite Cantor code."""
    bits: list[int] = []
    for _ in range(10_000):
        if c == 0:
            return bits
        d = int(4 * c)
        if d not in (1, 3) or not 0 < c < 1:
            return None
        bits.append((d - 1) // 2)
        c = 4 * c - d
    return None


def _bit(machine: TwoStackMachine, top: str) -> str:
    return "E" if top == EMPTY else str(machine.stack_alphabet.index(top))


def _op(machine: TwoStackMachine, kind: str, symbol: str) -> str:
    if kind == "keep":
        return "noop"
    if kind == "pop":
        return "pop"
    return f"push{machine.stack_alphabet.index(symbol)}"


def rules_of(
    machine: TwoStackMachine,
) -> tuple[tuple[Rule, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The compiled rule list, the states (with ``halt:accept``/``halt:reject`` when needed),
    the halting states and the accepting halting states."""
    halting = list(machine.halting_states())
    rules = [
        Rule(
            t.state,
            _bit(machine, t.top1),
            _bit(machine, t.top2),
            t.next,
            _op(machine, t.op1.kind, t.op1.symbol),
            _op(machine, t.op2.kind, t.op2.symbol),
        )
        for t in machine.transitions
    ]
    table = machine.table()
    extra: list[str] = []
    tops = (EMPTY, *machine.stack_alphabet)
    for q in machine.states:
        if q in halting:
            continue
        for a1 in tops:
            for a2 in tops:
                if (q, a1, a2) not in table:
                    target = "halt:accept" if q in machine.accept else "halt:reject"
                    if target not in extra:
                        extra.append(target)
                    rules.append(
                        Rule(q, _bit(machine, a1), _bit(machine, a2), target, "noop", "noop")
                    )
    halting += extra
    for h in halting:
        rules.append(Rule(h, "*", "*", h, "noop", "noop"))
    states = (*machine.states, *extra)
    accepting = tuple(q for q in halting if q in machine.accept or q == "halt:accept")
    return tuple(rules), states, tuple(halting), accepting


def compile_machine(name: str, machine: TwoStackMachine) -> CompiledMachine:
    """The σ-RNN of spec §2.2 for ``machine`` (exact weights; data only)."""
    if len(machine.stack_alphabet) != 2:
        raise MachineError(
            f"machine {name!r} has stack alphabet {machine.stack_alphabet}; the Cantor encoding needs "
            "exactly two stack symbols (bits 0 and 1): encode larger alphabets in binary"
        )
    rules, states, halting, accepting = rules_of(machine)
    units: list[str] = list(LOADER)
    ops = ("noop", "push0", "push1", "pop")
    for i in (1, 2):
        units += [f"Cb{i}.{op}" for op in ops]
        units += [
            f"Tb{i}.noop",
            f"Tb{i}.push1",
            f"Tb{i}.pop",
            f"Nb{i}.noop",
            f"Nb{i}.push",
            f"Nb{i}.pop",
        ]
    units += ["Cb1.load", "Tb1.load", "Nb1.load"]
    units += [f"S:{q}" for q in states]
    units += [f"{x}{i}" for i in (1, 2) for x in ("C", "T", "N")]
    units += [r.unit for r in rules]
    W: dict[str, dict[str, Fraction]] = {u: {} for u in units}
    X: dict[str, dict[int, Fraction]] = {u: {} for u in units}
    b: dict[str, Fraction] = {u: Fraction(0) for u in units}

    def add(
        u: str,
        terms: Mapping[str, Fraction | int],
        bias: Fraction | int = 0,
        x: Mapping[int, int] | None = None,
    ) -> None:
        for v, w in terms.items():
            W[u][v] = W[u].get(v, Fraction(0)) + Fraction(w)
        for j, w in (x or {}).items():
            X[u][j] = X[u].get(j, Fraction(0)) + Fraction(w)
        b[u] += Fraction(bias)

    q4 = Fraction(1, 4)
    # loader: P' = pA' + pB' − ST' + 1 is 4^{-(symbols read)}
    add("ST", {}, 1)
    add("pA", {"pA": q4, "pB": q4, "ST": -q4}, q4 - 1, {0: 1, 1: 1})
    add("pB", {"pA": 1, "pB": 1, "ST": -1}, 1, {0: -1, 1: -1})
    add("e1", {"pA": q4, "pB": q4, "ST": -q4}, q4 - 1, {0: 1})
    add("e3", {"pA": 3 * q4, "pB": 3 * q4, "ST": -3 * q4}, 3 * q4 - 1, {1: 1})
    add("ACC", {"ACC": 1, "e1": 1, "e3": 1})
    add("START", {"ST": 1, "DONE": -1}, 0, {0: -1, 1: -1})
    add("DONE", {"DONE": 1, "ST": 1}, 0, {0: -1, 1: -1})

    def gate(i: int, op: str) -> dict[str, Fraction]:
        """K·G_{i,op} = K·Σ_{rules r with op_i(r) = op} D_r'."""
        return {r.unit: K for r in rules if (r.op1 if i == 1 else r.op2) == op}

    for i in (1, 2):
        C, T, N = f"C{i}", f"T{i}", f"N{i}"
        add(f"Cb{i}.noop", {C: 1, **gate(i, "noop")}, -K)
        for bit in (0, 1):
            add(f"Cb{i}.push{bit}", {C: q4, **gate(i, f"push{bit}")}, Fraction(2 * bit + 1, 4) - K)
        add(f"Cb{i}.pop", {C: 4, T: -2, **gate(i, "pop")}, -1 - K)
        add(f"Tb{i}.noop", {T: 1, **gate(i, "noop")}, -K)
        add(f"Tb{i}.push1", {u: w / K for u, w in gate(i, "push1").items()})
        add(f"Tb{i}.pop", {C: 16, T: -8, **gate(i, "pop")}, -6 - K)
        add(f"Nb{i}.noop", {N: 1, **gate(i, "noop")}, -K)
        add(
            f"Nb{i}.push",
            {
                **{u: w / K for u, w in gate(i, "push0").items()},
                **{u: w / K for u, w in gate(i, "push1").items()},
            },
        )
        add(f"Nb{i}.pop", {C: 16, T: -8, **gate(i, "pop")}, -4 - K)
    add("Cb1.load", {"ACC": 1, "START": K}, -K)
    add("Tb1.load", {"ACC": 4, "START": K}, -2 - K)
    add("Nb1.load", {"ACC": 4, "START": K}, -K)
    for q in states:
        add(
            f"S:{q}",
            {r.unit: 1 for r in rules if r.next == q}
            | ({"START": 1} if q == machine.start else {}),
        )
    for i in (1, 2):
        for x in ("C", "T", "N"):
            add(f"{x}{i}", {u: 1 for u in units if u.startswith(f"{x}b{i}.")})
    for r in rules:
        terms: dict[str, Fraction] = {f"S:{r.state}": Fraction(1)}
        bias = Fraction(0)
        for i, a in ((1, r.a1), (2, r.a2)):
            if a == "*":
                continue
            tb = [u for u in units if u.startswith(f"Tb{i}.")]
            nb = [u for u in units if u.startswith(f"Nb{i}.")]
            bias -= 1
            if a == "1":
                for u in tb:
                    terms[u] = terms.get(u, Fraction(0)) + 1
            elif a == "0":
                for u in nb:
                    terms[u] = terms.get(u, Fraction(0)) + 1
                for u in tb:
                    terms[u] = terms.get(u, Fraction(0)) - 1
            else:
                bias += 1
                for u in nb:
                    terms[u] = terms.get(u, Fraction(0)) - 1
        add(r.unit, terms, bias)
    rnn = SigmaRNN(
        alphabet=machine.stack_alphabet,
        W_h=tuple(tuple(W[u].get(v, Fraction(0)) for v in units) for u in units),
        W_x=tuple(tuple(X[u].get(j, Fraction(0)) for j in (0, 1)) for u in units),
        b=tuple(b[u] for u in units),
        h0=tuple(Fraction(0) for _ in units),
        readout=tuple(
            Fraction(1) if u in {f"S:{q}" for q in accepting} else Fraction(0) for u in units
        ),
        readout_bias=Fraction(-1, 2),
        units=tuple(units),
    )
    return CompiledMachine(name, machine, rnn, rules, states, halting, accepting)
