"""Interpreters of recurrent networks (:mod:`netproof.symbolic.recurrent_ir`): exact and interval.

One public entry point, :func:`run` ``(net, word) -> RecurrentTrace``, keeps every step: the
input vector, h̃_{t−1}, h_t (and the LSTM cell state), the outputs y_t and the predicted next-
symbol set, the decision scores and weights, n_t, and the stack or memory after the step.

- ``backend="exact"`` (default): exact rationals (whole numbers as ``int``, which equal their
  Fractions; the rest as Fractions). ``sigma`` activations and :class:`Hardmax`
  decisions only; a ``tanh`` / ``logistic`` activation or a softmax-family decision raises
  :class:`~netproof.symbolic.errors.NotRationalError` naming it and the fix (the interval backend).
- ``backend="interval"``: rigorous enclosures (mpmath ``iv``, 60 digits) of every value, for
  tanh, logistic σ, softmax, softmax-temp and Gumbel-softmax (its noise drawn from
  ``random.Random(seed)``, one Gumbel(0, 1) draw per operation per step, then used as an exact
  number). A predicted set is ``None`` where an enclosure of y straddles the threshold.

:func:`start` and :func:`step` expose the recurrence one symbol at a time, so a checker can
walk every word up to a length along a trie of prefixes (each prefix evaluated once).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, assert_never

from .errors import NotRationalError, WordError
from .ir import Affine, Hardmax, Softmax
from .recurrent_ir import (
    BabyNTM,
    GumbelSoftmax,
    JoulinMikolovRNN,
    RecurrentNetwork,
    StackLSTM,
    StackRNN,
    TemperatureSoftmax,
)

RecurrentBackend = Literal["exact", "interval"]
Values = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Step:
    """One step t (1-based) of a recurrent run: the values are dicts keyed by dim names."""

    t: int
    symbol: str
    x: dict[str, Any]
    h_tilde: dict[str, Any]
    h: dict[str, Any]
    cell: dict[str, Any] | None
    y: dict[str, Any]
    predicted: frozenset[str] | None
    scores: dict[str, Any]
    decision: dict[str, Any]
    n: dict[str, Any]
    memory: tuple[tuple[Any, ...], ...]
    """The stack after the step (top first, trailing zero elements dropped) or the Baby-NTM
    memory (every slot)."""


@dataclass(frozen=True, slots=True)
class RecurrentTrace:
    network: RecurrentNetwork
    word: tuple[str, ...]
    backend: str
    steps: tuple[Step, ...]

    @property
    def predictions(self) -> tuple[frozenset[str] | None, ...]:
        """The predicted next-symbol set after each prefix w_1..w_t (t = 1..|w|)."""
        return tuple(s.predicted for s in self.steps)


@dataclass(frozen=True, slots=True)
class State:
    """Between steps: h, the LSTM cell state (or None), the stack or memory, the step count."""

    h: Values
    c: Values | None
    memory: tuple[Values, ...]
    t: int


# --------------------------------------------------------------------------- arithmetic


class _Exact:
    """Exact rationals: whole numbers are kept as ``int`` (equal to their Fraction, and far
    faster), the rest as :class:`Fraction`."""

    name = "exact"

    def const(self, q: Fraction) -> Any:
        return q.numerator if q.denominator == 1 else q

    def act(self, kind: str, x: Any, where: str) -> Any:
        if kind == "sigma":
            return 0 if x < 0 else min(x, 1)
        raise NotRationalError(
            f"{where} uses the activation {kind!r}, which has no exact rational value; "
            "use the interval backend (backend='interval'), or the saturated linear 'sigma' "
            "(the spec's exact replacement for tanh and the logistic σ)"
        )

    def decide(self, nz: Any, scores: Sequence[Any], where: str, noise: Sequence[Any]) -> list[Any]:
        if isinstance(nz, Hardmax):
            return _hardmax(nz, scores)
        raise NotRationalError(
            f"{where}.decision is {type(nz).__name__}: softmax-family weights are not rational; "
            "use the interval backend (backend='interval') or a Hardmax decision"
            + (
                " (Gumbel-softmax samples noise: numeric backends only)"
                if isinstance(nz, GumbelSoftmax)
                else ""
            )
        )

    def above(self, y: Any, threshold: Fraction) -> bool | None:
        return bool(y > threshold)

    def is_zero(self, x: Any) -> bool:
        return bool(x == 0)


def _hardmax(nz: Hardmax, scores: Sequence[Any]) -> list[Any]:
    top = max(scores)
    winners = [i for i, s in enumerate(scores) if s == top]
    if nz.tie == "leftmost":
        winners = winners[:1]
    elif nz.tie == "rightmost":
        winners = winners[-1:]
    share = 1 if len(winners) == 1 else Fraction(1, len(winners))
    return [share if i in winners else 0 for i in range(len(scores))]


class _Interval:
    name = "interval"

    def __init__(self) -> None:
        from mpmath import iv

        iv.dps = 60
        self.iv = iv
        self._zero = iv.mpf(0)._mpi_

    def const(self, q: Fraction) -> Any:
        return self.iv.mpf(q.numerator) / self.iv.mpf(q.denominator)

    def act(self, kind: str, x: Any, where: str) -> Any:
        iv = self.iv
        match kind:
            case "sigma":
                lo, hi = (min(max(v, 0), 1) for v in (x.a, x.b))
                return iv.mpf([lo, hi])
            case "tanh":
                return 1 - 2 / (iv.exp(2 * x) + 1)
            case "logistic":
                return 1 / (1 + iv.exp(-x))
        raise ValueError(f"{where}: unknown activation {kind!r}")

    def decide(self, nz: Any, scores: Sequence[Any], where: str, noise: Sequence[Any]) -> list[Any]:
        iv = self.iv
        match nz:
            case Hardmax():
                if all(
                    s.a == s.b for s in scores
                ):  # point scores: ties are exact, as in the exact backend
                    points = [s.a for s in scores]
                    top = max(points)
                    return [
                        self.const(Fraction(w))
                        for w in _hardmax(nz, [1 if p == top else 0 for p in points])
                    ]
                best = max(range(len(scores)), key=lambda i: scores[i].a)
                if all(i == best or scores[i].b < scores[best].a for i in range(len(scores))):
                    return [iv.mpf(1) if i == best else iv.mpf(0) for i in range(len(scores))]
                raise NotRationalError(
                    f"{where}: hardmax decision with overlapping score enclosures; use the exact backend"
                )
            case Softmax(r=r, c=c):
                factor = self.const(c) if c is not None else iv.log(self.const(r))  # type: ignore[arg-type]
                logits = [factor * s for s in scores]
            case TemperatureSoftmax(tau=tau):
                logits = [s / self.const(tau) for s in scores]
            case GumbelSoftmax(tau=tau):
                logits = [(s + g) / self.const(tau) for s, g in zip(scores, noise, strict=True)]
            case _:
                raise ValueError(f"{where}: unknown decision {nz!r}")
        # softmax_i = 1 / Σ_j exp(l_j − l_i): each weight from one expression, so it stays in [0, 1]
        return [1 / sum(iv.exp(lj - li) for lj in logits) for li in logits]

    def above(self, y: Any, threshold: Fraction) -> bool | None:
        t = self.const(threshold)
        if y.a > t.b:
            return True
        if y.b <= t.a:
            return False
        return None

    def is_zero(self, x: Any) -> bool:
        return bool(x._mpi_ == self._zero)  # the raw endpoints: far faster than comparing intervals


def _arith(backend: str) -> _Exact | _Interval:
    if backend == "exact":
        return _Exact()
    if backend == "interval":
        return _Interval()
    raise ValueError(f"backend={backend!r} is not 'exact' or 'interval'")


# --------------------------------------------------------------------------- compiled maps


class _Map:
    """An Affine compiled to sparse rows over index positions of named value tuples."""

    def __init__(self, a: Affine, index: dict[str, int], ar: _Exact | _Interval) -> None:
        self.outputs = a.outputs
        self.rows = [
            (
                [(index[i], ar.const(w)) for i, w in zip(a.inputs, row, strict=True) if w != 0],
                ar.const(b),
            )
            for row, b in zip(a.weights, a.bias, strict=True)
        ]

    def __call__(self, v: Sequence[Any]) -> list[Any]:
        return [sum((w * v[i] for i, w in terms), b) for terms, b in self.rows]


class Program:
    """A recurrent network prepared for one backend (weights converted, maps made sparse)."""

    def __init__(self, net: RecurrentNetwork, backend: RecurrentBackend = "exact") -> None:
        self.net = net
        self.ar = ar = _arith(backend)
        cell = net.cell
        self.cell = cell
        self.zero = ar.const(Fraction(0))
        self.one = ar.const(Fraction(1))
        inputs = {d: k for k, d in enumerate(cell.inputs)}
        hidden = {d: k for k, d in enumerate(cell.hidden)}
        element = {d: k for k, d in enumerate(cell.element)}
        self.x = {
            s: tuple(ar.const(dict(row).get(d, Fraction(0))) for d in cell.inputs)
            for s, row in net.embedding
        }
        self.readout = _Map(net.readout.W_y, hidden, ar)
        self.W_a = _Map(cell.W_a, hidden, ar)
        self.W_n = _Map(cell.W_n, hidden, ar)
        self.ops: tuple[str, ...]
        match cell:
            case StackRNN():
                self.W_ih = _Map(cell.W_ih, inputs, ar)
                self.W_hh = _Map(cell.W_hh, hidden, ar)
                self.W_sh = _Map(cell.W_sh, element, ar)
                self.ops = cell.ops
            case StackLSTM():
                both = {**inputs, **{d: len(inputs) + k for d, k in hidden.items()}}
                self.gates = [
                    _Map(getattr(cell, g), both, ar) for g in ("W_i", "W_f", "W_o", "W_g")
                ]
                self.W_sh = _Map(cell.W_sh, element, ar)
                self.ops = cell.ops
            case BabyNTM():
                self.W_ih = _Map(cell.W_ih, inputs, ar)
                self.W_hh = _Map(cell.W_hh, hidden, ar)
                self.W_sh = _Map(cell.W_m, element, ar)
                self.ops = cell.op_names
                self.matrices = [
                    [
                        [(j, ar.const(v)) for i2, j, v in op.entries if i2 == i]
                        for i in range(op.size)
                    ]
                    for op in cell.ops
                ]
                self.moves = [self._moves(op.entries, op.size) for op in cell.ops]
            case JoulinMikolovRNN():
                self.W_ih = _Map(cell.W_ih, inputs, ar)
                self.W_hh = _Map(cell.W_hh, hidden, ar)
                self.W_sh = _Map(cell.W_sh, {d: k for k, d in enumerate(cell.top_names)}, ar)
                self.ops = cell.ops
            case _:
                assert_never(cell)
        self.rng_seed = cell.decision.seed if isinstance(cell.decision, GumbelSoftmax) else None
        self.where = f"{type(cell).__name__} of {net.name!r}"

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def _moves(entries: Sequence[tuple[int, int, Fraction]], size: int) -> list[int | None] | None:
        """For a matrix that only moves slots (entries 1, at most one per row): the source slot
        of each row (None: the row is zero); else None."""
        src: list[int | None] = [None] * size
        for i, j, v in entries:
            if v != 1 or src[i] is not None:
                return None
            src[i] = j
        return src

    def _acts(self, kind: str, values: Sequence[Any], what: str) -> tuple[Any, ...]:
        return tuple(self.ar.act(kind, v, f"{self.where} {what}") for v in values)

    def _noise(self, t: int) -> list[Any]:
        if self.rng_seed is None:
            return []
        rng = random.Random(f"{self.rng_seed}:{t}")
        draws = []
        for _ in self.ops:
            u = rng.random() or 0.5
            draws.append(self.ar.const(Fraction(-math.log(-math.log(u)))))
        return draws

    def _element_zero(self, e: Sequence[Any]) -> bool:
        return all(self.ar.is_zero(v) for v in e)

    # ----------------------------------------------------------------- recurrence

    def start(self) -> State:
        cell = self.cell
        h0 = dict(self.net.initial)
        h = tuple(self.ar.const(h0.get(u, Fraction(0))) for u in cell.hidden)
        c = tuple(self.zero for _ in cell.hidden) if isinstance(cell, StackLSTM) else None
        memory: tuple[Values, ...] = ()
        if isinstance(cell, BabyNTM):
            memory = tuple(tuple(self.zero for _ in cell.element) for _ in range(cell.slots))
        return State(h, c, memory, 0)

    def step(self, state: State, symbol: str) -> tuple[State, Step]:
        cell = self.cell
        ar = self.ar
        x = self.x.get(symbol)
        if x is None:
            raise WordError(
                f"symbol {symbol!r} is not in the alphabet {self.net.alphabet} of {self.net.name!r}"
            )
        zero_el = tuple(self.zero for _ in cell.element)
        top = state.memory[0] if state.memory else zero_el
        c_new: Values | None = None
        match cell:
            case StackRNN() | BabyNTM():
                h_tilde = tuple(h + s for h, s in zip(state.h, self.W_sh(top), strict=True))
                pre = [a + b for a, b in zip(self.W_ih(x), self.W_hh(h_tilde), strict=True)]
                h = self._acts(cell.activation, pre, "hidden units")
            case StackLSTM():
                h_tilde = tuple(h + s for h, s in zip(state.h, self.W_sh(top), strict=True))
                z = (*x, *h_tilde)
                i_g, f_g, o_g = (self._acts(cell.gate, m(z), "gates") for m in self.gates[:3])
                g = self._acts(cell.activation, self.gates[3](z), "cell input")
                assert state.c is not None
                c_new = tuple(
                    f * c + i * gg for f, c, i, gg in zip(f_g, state.c, i_g, g, strict=True)
                )
                h = tuple(
                    o * a
                    for o, a in zip(
                        o_g, self._acts(cell.activation, c_new, "cell state"), strict=True
                    )
                )
            case JoulinMikolovRNN():
                h_tilde = state.h
                tops = [
                    v
                    for i in range(cell.top)
                    for v in (state.memory[i] if i < len(state.memory) else zero_el)
                ]
                pre = [
                    a + b + s
                    for a, b, s in zip(
                        self.W_ih(x), self.W_hh(state.h), self.W_sh(tops), strict=True
                    )
                ]
                h = self._acts(cell.activation, pre, "hidden units")
            case _:
                assert_never(cell)
        y = self._acts(self.net.readout.activation, self.readout(h), "readout")
        decided = [ar.above(v, self.net.readout.threshold) for v in y]
        predicted = (
            None
            if any(d is None for d in decided)
            else frozenset(s for s, d in zip(self.net.readout.symbols, decided, strict=True) if d)
        )
        scores = self.W_a(h)
        a = ar.decide(cell.decision, scores, self.where, self._noise(state.t + 1))
        n = self._acts(cell.gate, self.W_n(h), "n_t")
        memory = self._update(state.memory, a, n, zero_el)
        new = State(h, c_new, memory, state.t + 1)
        record = Step(
            t=state.t + 1,
            symbol=symbol,
            x=dict(zip(cell.inputs, x, strict=True)),
            h_tilde=dict(zip(cell.hidden, h_tilde, strict=True)),
            h=dict(zip(cell.hidden, h, strict=True)),
            cell=None if c_new is None else dict(zip(cell.hidden, c_new, strict=True)),
            y=dict(zip(self.net.readout.symbols, y, strict=True)),
            predicted=predicted,
            scores=dict(zip(self.ops, scores, strict=True)),
            decision=dict(zip(self.ops, a, strict=True)),
            n=dict(zip(cell.element, n, strict=True)),
            memory=memory,
        )
        return new, record

    def _update(
        self, memory: tuple[Values, ...], a: Sequence[Any], n: Values, zero_el: Values
    ) -> tuple[Values, ...]:
        cell = self.cell
        ar = self.ar
        if isinstance(cell, BabyNTM):
            chosen = [k for k, w in enumerate(a) if not ar.is_zero(w)]
            moves = self.moves[chosen[0]] if len(chosen) == 1 else None
            if moves is not None and a[chosen[0]] == 1:
                # one op with weight 1 whose matrix only moves slots (0/1, at most one 1 per row)
                moved = [memory[j] if j is not None else zero_el for j in moves]
                moved[0] = tuple(m + nv for m, nv in zip(moved[0], n, strict=True))
                return tuple(moved)
            empty = [self._element_zero(m) for m in memory]
            out: list[list[Any] | None] = [None] * cell.slots
            for weight, matrix in zip(a, self.matrices, strict=True):
                if ar.is_zero(weight):
                    continue
                for i, row in enumerate(matrix):
                    for j, v in row:
                        if empty[j]:
                            continue  # a zero slot adds nothing (slots far from the top stay exactly 0)
                        f = weight * v
                        acc = out[i]
                        out[i] = (
                            [f * m for m in memory[j]]
                            if acc is None
                            else [x + f * m for x, m in zip(acc, memory[j], strict=True)]
                        )
            first = out[0] if out[0] is not None else list(zero_el)
            out[0] = [x + nv for x, nv in zip(first, n, strict=True)]
            return tuple(zero_el if slot is None else tuple(slot) for slot in out)
        weights = dict(zip(self.ops, a, strict=True))
        push, pop, keep = weights["PUSH"], weights["POP"], weights.get("NO-OP", self.zero)

        def at(i: int) -> Values:
            return memory[i] if 0 <= i < len(memory) else zero_el

        if isinstance(cell, StackRNN | StackLSTM | JoulinMikolovRNN):
            new = []
            for i in range(len(memory) + 1):
                below = n if i == 0 else at(i - 1)
                new.append(
                    tuple(
                        push * b + pop * p + keep * k
                        for b, p, k in zip(below, at(i + 1), at(i), strict=True)
                    )
                )
            while new and self._element_zero(new[-1]):
                new.pop()
            return tuple(new)
        assert_never(cell)


def start(net: RecurrentNetwork, backend: RecurrentBackend = "exact") -> tuple[Program, State]:
    """A prepared program and the initial state (h = 0, empty stack / zero memory)."""
    program = Program(net, backend)
    return program, program.start()


def step(program: Program, state: State, symbol: str) -> tuple[State, Step]:
    """One step of the recurrence on ``symbol``."""
    return program.step(state, symbol)


def run(
    net: RecurrentNetwork, word: Sequence[str], backend: RecurrentBackend = "exact"
) -> RecurrentTrace:
    """Run ``net`` on ``word``; the trace keeps every step.

    >>> from netproof.constructions.suzgun2019 import stack_rnn
    >>> trace = run(stack_rnn(task="d2"), ("(", "[", "]", ")"))
    >>> [" ".join(sorted(p)) for p in trace.predictions]  # Table 1 of the paper
    ['( ) [', '( [ ]', '( ) [', '( [']
    """
    program, state = start(net, backend)
    steps = []
    for symbol in word:
        state, record = program.step(state, symbol)
        steps.append(record)
    return RecurrentTrace(net, tuple(word), backend, tuple(steps))
