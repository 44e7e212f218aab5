"""Recurrent networks in the IR: memory-augmented RNNs (Suzgun et al. 2019, §3).

Like :mod:`netproof.symbolic.ir`, these are frozen dataclasses holding data only; they are evaluated by
:mod:`netproof.symbolic.recurrent` (exact rationals, and rigorous intervals for tanh / logistic σ /
softmax), never by methods of their own. Every hidden unit, stack component and memory
component has a name; the weight matrices are :class:`~netproof.symbolic.ir.Affine` maps between named
dims.

The closed set of cells:

- :class:`StackRNN`: the paper's formulation (§3.1)::

      h̃_{t−1} = h_{t−1} + W_sh s_{t−1}(0)
      h_t     = act(W_ih x_t + b_ih + W_hh h̃_{t−1} + b_hh)
      a_t     = decision(W_a h_t)                       (PUSH, POP; no bias)
      n_t     = gate(W_n h_t)                           (no bias)
      s_t(0)  = a_t(PUSH) n_t + a_t(POP) s_{t−1}(1)
      s_t(i)  = a_t(PUSH) s_{t−1}(i−1) + a_t(POP) s_{t−1}(i+1)   (zeros beyond the stack)

- :class:`StackLSTM`: ``h_t, c_t = LSTM(x_t, h̃_{t−1}, c_{t−1})`` (§3.2) with the stack of the
  Stack-RNN. The paper does not say what happens to the cell state; here it is carried over
  unchanged (spec §3.1).
- :class:`BabyNTM`: a memory of ``slots`` × M, five (or more) operations given as matrices on
  the slot index (:class:`MemoryOp`), ``𝐌_t = Σ_i a_t(i) OP(i) 𝐌_{t−1}`` and then
  ``𝐌_t(0) += n_t`` at every step (§3.3); ``h̃ = h + W_m 𝐌_{t−1}(0)``.
- :class:`JoulinMikolovRNN`: ``h_t = act(W_ih x_t + W_hh h_{t−1} + W_sh s_{t−1}(0:k))`` with no
  biases and the ``k`` topmost stack elements read directly, ops PUSH, POP and NO-OP (Joulin &
  Mikolov 2015, as Suzgun et al. §3.1 and Appendix A describe it).

The decision normalizer is a field of every cell: :class:`~netproof.symbolic.ir.Hardmax` (exact),
:class:`~netproof.symbolic.ir.Softmax` with ``c`` (softmax(c·x); c = 1 is the paper's softmax),
:class:`TemperatureSoftmax` (softmax(x/τ)) and :class:`GumbelSoftmax` (softmax((x + g)/τ) with
g ~ Gumbel(0, 1) drawn from a seeded generator; numeric backends only). Activations are fields
too: ``sigma`` (the saturated linear σ(x) = min(1, max(0, x)), exact), ``tanh`` and
``logistic`` (1/(1 + e^{−x})): the exact interpreter refuses the last two with an error that
names them; the interval interpreter encloses them rigorously.

:class:`RecurrentNetwork` holds the input embedding (one vector per symbol), the cell and the
readout (:class:`KHotReadout`: ``y_t = act(W_y h_t)``, symbol k is predicted iff y_t[k] > ½),
and the initial hidden state h₀ (zero unless ``initial`` says otherwise).

This module imports only the blocks it reuses (:class:`~netproof.symbolic.blocks.Affine`,
:class:`~netproof.symbolic.blocks.Hardmax`, :class:`~netproof.symbolic.blocks.Softmax`), the field
checks of :mod:`netproof.symbolic.checks` and the errors; printing and interpreters are above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias, get_args

from .blocks import Affine, Hardmax, Softmax
from .checks import check_choice, check_fraction, check_names
from .errors import NetworkValidationError

CellActivation: TypeAlias = Literal["sigma", "tanh", "logistic"]
CELL_ACTIVATIONS: tuple[str, ...] = get_args(CellActivation)
EXACT_ACTIVATIONS: tuple[str, ...] = ("sigma",)

STACK_OPS: tuple[str, ...] = ("PUSH", "POP")
JM_STACK_OPS: tuple[str, ...] = ("PUSH", "POP", "NO-OP")
BABY_NTM_OPS: tuple[str, ...] = ("ROTATE-RIGHT", "ROTATE-LEFT", "NO-OP", "POP-RIGHT", "POP-LEFT")


@dataclass(frozen=True, slots=True, kw_only=True)
class TemperatureSoftmax:
    """softmax-temp(x, τ) = softmax(x/τ) (Suzgun et al. §3.4); τ = 1 is the plain softmax."""

    tau: Fraction

    def __post_init__(self) -> None:
        check_fraction(self.tau, "TemperatureSoftmax.tau")
        if self.tau <= 0:
            raise NetworkValidationError(f"TemperatureSoftmax.tau={self.tau} must be > 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GumbelSoftmax:
    """Gumbel-softmax-temp: softmax((x + g)/τ) with g_i ~ Gumbel(0, 1) i.i.d., drawn from a
    generator seeded with ``seed`` (one draw per operation per step, in step order).

    The paper prints ``exp((log x_i + g_i)/τ)/Σ…``, which takes the log of logits that may be
    negative (spec §3.1, erratum): the logits are used directly. A sampled decision is not a
    rational function of the weights: only numeric backends evaluate it.
    """

    tau: Fraction
    seed: int

    def __post_init__(self) -> None:
        check_fraction(self.tau, "GumbelSoftmax.tau")
        if self.tau <= 0:
            raise NetworkValidationError(f"GumbelSoftmax.tau={self.tau} must be > 0")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise NetworkValidationError(f"GumbelSoftmax.seed={self.seed!r} must be an int")


Decision: TypeAlias = Hardmax | Softmax | TemperatureSoftmax | GumbelSoftmax


def _check_map(
    a: Affine, where: str, inputs: tuple[str, ...], outputs: tuple[str, ...], *, bias: bool
) -> None:
    if not isinstance(a, Affine):
        raise NetworkValidationError(f"{where} must be an Affine, got {type(a).__name__}")
    unknown = [d for d in a.inputs if d not in inputs]
    if unknown:
        raise NetworkValidationError(f"{where} reads {unknown}, which are not among {inputs}")
    if tuple(a.outputs) != tuple(outputs):
        raise NetworkValidationError(
            f"{where} must write exactly {outputs} in that order, writes {a.outputs}"
        )
    if not bias and any(b != 0 for b in a.bias):
        raise NetworkValidationError(
            f"{where} has a nonzero bias {[str(b) for b in a.bias]}, but the paper's map has no bias; "
            "route the constant through a hidden unit that is always 1 (e.g. 'one' = σ(b_ih = 1))"
        )


def _check_disjoint(groups: dict[str, tuple[str, ...]], where: str) -> None:
    seen: dict[str, str] = {}
    for group, names in groups.items():
        check_names(names, f"{where} {group}")
        for name in names:
            if name in seen:
                raise NetworkValidationError(
                    f"{where}: name {name!r} is used by both {seen[name]} and {group}"
                )
            seen[name] = group


def _check_decision(d: Decision, where: str) -> None:
    if not isinstance(d, (Hardmax, Softmax, TemperatureSoftmax, GumbelSoftmax)):
        raise NetworkValidationError(
            f"{where}.decision is a {type(d).__name__}; use Hardmax, Softmax, TemperatureSoftmax or GumbelSoftmax"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StackRNN:
    """Suzgun et al. §3.1 Stack-RNN (see the module docstring for the equations).

    ``inputs`` are the names of x (the embedding's dims), ``hidden`` of h, ``element`` of one
    stack element s(i) ∈ R^M. ``W_ih`` maps inputs to hidden (bias b_ih), ``W_hh`` hidden to
    hidden (bias b_hh), ``W_sh`` element to hidden (no bias), ``W_a`` hidden to the ops
    ("PUSH", "POP"), ``W_n`` hidden to element (no bias, then ``gate``).
    """

    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    element: tuple[str, ...]
    W_ih: Affine
    W_hh: Affine
    W_sh: Affine
    W_a: Affine
    W_n: Affine
    activation: CellActivation
    gate: CellActivation
    decision: Decision

    def __post_init__(self) -> None:
        _check_disjoint(
            {"inputs": self.inputs, "hidden": self.hidden, "element": self.element}, "StackRNN"
        )
        check_choice(self.activation, CELL_ACTIVATIONS, "StackRNN.activation")
        check_choice(self.gate, CELL_ACTIVATIONS, "StackRNN.gate")
        _check_map(self.W_ih, "StackRNN.W_ih", self.inputs, self.hidden, bias=True)
        _check_map(self.W_hh, "StackRNN.W_hh", self.hidden, self.hidden, bias=True)
        _check_map(self.W_sh, "StackRNN.W_sh", self.element, self.hidden, bias=False)
        _check_map(self.W_a, "StackRNN.W_a", self.hidden, STACK_OPS, bias=False)
        _check_map(self.W_n, "StackRNN.W_n", self.hidden, self.element, bias=False)
        _check_decision(self.decision, "StackRNN")

    @property
    def ops(self) -> tuple[str, ...]:
        return STACK_OPS


@dataclass(frozen=True, slots=True, kw_only=True)
class StackLSTM:
    """Suzgun et al. §3.2 Stack-LSTM: the LSTM equations with h̃_{t−1} in place of h_{t−1}::

        i, f, o = gate(W_i·[x, h̃] + b),  g = activation(W_g·[x, h̃] + b)
        c_t = f ⊙ c_{t−1} + i ⊙ g,        h_t = o ⊙ activation(c_t)

    Each of ``W_i``, ``W_f``, ``W_o``, ``W_g`` reads inputs and hidden names and writes
    ``hidden`` (one cell unit per hidden unit; the cell state is named ``c:<unit>`` in traces).
    Stack, decision and ``W_n`` as in :class:`StackRNN`. The paper's gates are logistic and its
    activation tanh; with ``sigma`` for both the cell is exact.
    """

    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    element: tuple[str, ...]
    W_i: Affine
    W_f: Affine
    W_o: Affine
    W_g: Affine
    W_sh: Affine
    W_a: Affine
    W_n: Affine
    activation: CellActivation
    gate: CellActivation
    decision: Decision

    def __post_init__(self) -> None:
        _check_disjoint(
            {"inputs": self.inputs, "hidden": self.hidden, "element": self.element}, "StackLSTM"
        )
        check_choice(self.activation, CELL_ACTIVATIONS, "StackLSTM.activation")
        check_choice(self.gate, CELL_ACTIVATIONS, "StackLSTM.gate")
        both = (*self.inputs, *self.hidden)
        for name in ("W_i", "W_f", "W_o", "W_g"):
            _check_map(getattr(self, name), f"StackLSTM.{name}", both, self.hidden, bias=True)
        _check_map(self.W_sh, "StackLSTM.W_sh", self.element, self.hidden, bias=False)
        _check_map(self.W_a, "StackLSTM.W_a", self.hidden, STACK_OPS, bias=False)
        _check_map(self.W_n, "StackLSTM.W_n", self.hidden, self.element, bias=False)
        _check_decision(self.decision, "StackLSTM")

    @property
    def ops(self) -> tuple[str, ...]:
        return STACK_OPS


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryOp:
    """One memory operation of the Baby-NTM as a ``size`` × ``size`` matrix on the slot index
    (new slot i = Σ_j entries[i, j]·old slot j), stored sparsely: ``entries`` lists the nonzero
    ``(i, j, value)`` in row-major order."""

    name: str
    size: int
    entries: tuple[tuple[int, int, Fraction], ...]

    def __post_init__(self) -> None:
        if not self.name or any(c.isspace() for c in self.name):
            raise NetworkValidationError(
                f"MemoryOp.name={self.name!r} must be non-empty without spaces"
            )
        if not isinstance(self.size, int) or self.size < 1:
            raise NetworkValidationError(
                f"MemoryOp {self.name}: size={self.size!r} must be an int >= 1"
            )
        last = (-1, -1)
        for i, j, v in self.entries:
            if not (0 <= i < self.size and 0 <= j < self.size):
                raise NetworkValidationError(
                    f"MemoryOp {self.name}: entry ({i}, {j}) is outside {self.size}×{self.size}"
                )
            if (i, j) <= last:
                raise NetworkValidationError(
                    f"MemoryOp {self.name}: entries must be in row-major order without repeats; ({i}, {j}) follows {last}"
                )
            last = (i, j)
            check_fraction(v, f"MemoryOp {self.name}[{i}, {j}]")
            if v == 0:
                raise NetworkValidationError(
                    f"MemoryOp {self.name}: entry ({i}, {j}) is 0; list nonzero entries only"
                )


@dataclass(frozen=True, slots=True, kw_only=True)
class BabyNTM:
    """Suzgun et al. §3.3 Baby-NTM: a memory of ``len(ops[0])`` slots of width M (``element``),
    updated by the weighted sum of the ``ops`` matrices, then ``𝐌_t(0) += n_t`` at every step.
    ``W_m`` maps slot 0 (element names) to hidden; ``W_a`` writes one score per op, named like
    the ops."""

    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    element: tuple[str, ...]
    ops: tuple[MemoryOp, ...]
    W_ih: Affine
    W_hh: Affine
    W_m: Affine
    W_a: Affine
    W_n: Affine
    activation: CellActivation
    gate: CellActivation
    decision: Decision

    def __post_init__(self) -> None:
        _check_disjoint(
            {"inputs": self.inputs, "hidden": self.hidden, "element": self.element}, "BabyNTM"
        )
        check_choice(self.activation, CELL_ACTIVATIONS, "BabyNTM.activation")
        check_choice(self.gate, CELL_ACTIVATIONS, "BabyNTM.gate")
        if not self.ops:
            raise NetworkValidationError(
                "BabyNTM.ops is empty; give the memory operations (e.g. baby_ntm_ops(N))"
            )
        sizes = {op.size for op in self.ops}
        if len(sizes) != 1:
            raise NetworkValidationError(
                f"BabyNTM.ops have different sizes {sorted(sizes)}; all act on the same memory"
            )
        names = tuple(op.name for op in self.ops)
        check_names(names, "BabyNTM.ops")
        _check_map(self.W_ih, "BabyNTM.W_ih", self.inputs, self.hidden, bias=True)
        _check_map(self.W_hh, "BabyNTM.W_hh", self.hidden, self.hidden, bias=True)
        _check_map(self.W_m, "BabyNTM.W_m", self.element, self.hidden, bias=False)
        _check_map(self.W_a, "BabyNTM.W_a", self.hidden, names, bias=False)
        _check_map(self.W_n, "BabyNTM.W_n", self.hidden, self.element, bias=False)
        _check_decision(self.decision, "BabyNTM")

    @property
    def slots(self) -> int:
        return self.ops[0].size

    @property
    def op_names(self) -> tuple[str, ...]:
        return tuple(op.name for op in self.ops)


@dataclass(frozen=True, slots=True, kw_only=True)
class JoulinMikolovRNN:
    """Joulin & Mikolov's Stack-RNN as Suzgun et al. §3.1 describe it:
    ``h_t = act(W_ih x_t + W_hh h_{t−1} + W_sh s_{t−1}(0:k))``, no biases anywhere, the ``top``
    topmost elements read directly (names ``f"{e}@{i}"`` for element name e at depth i), ops
    PUSH, POP, NO-OP (NO-OP keeps the stack)."""

    inputs: tuple[str, ...]
    hidden: tuple[str, ...]
    element: tuple[str, ...]
    top: int
    W_ih: Affine
    W_hh: Affine
    W_sh: Affine
    W_a: Affine
    W_n: Affine
    activation: CellActivation
    gate: CellActivation
    decision: Decision

    def __post_init__(self) -> None:
        _check_disjoint(
            {"inputs": self.inputs, "hidden": self.hidden, "element": self.element},
            "JoulinMikolovRNN",
        )
        if not isinstance(self.top, int) or self.top < 1:
            raise NetworkValidationError(
                f"JoulinMikolovRNN.top={self.top!r} must be an int >= 1 (the k topmost elements)"
            )
        check_choice(self.activation, CELL_ACTIVATIONS, "JoulinMikolovRNN.activation")
        check_choice(self.gate, CELL_ACTIVATIONS, "JoulinMikolovRNN.gate")
        _check_map(self.W_ih, "JoulinMikolovRNN.W_ih", self.inputs, self.hidden, bias=False)
        _check_map(self.W_hh, "JoulinMikolovRNN.W_hh", self.hidden, self.hidden, bias=False)
        _check_map(self.W_sh, "JoulinMikolovRNN.W_sh", self.top_names, self.hidden, bias=False)
        _check_map(self.W_a, "JoulinMikolovRNN.W_a", self.hidden, JM_STACK_OPS, bias=False)
        _check_map(self.W_n, "JoulinMikolovRNN.W_n", self.hidden, self.element, bias=False)
        _check_decision(self.decision, "JoulinMikolovRNN")

    @property
    def top_names(self) -> tuple[str, ...]:
        return tuple(f"{e}@{i}" for i in range(self.top) for e in self.element)

    @property
    def ops(self) -> tuple[str, ...]:
        return JM_STACK_OPS


Cell: TypeAlias = StackRNN | StackLSTM | BabyNTM | JoulinMikolovRNN


@dataclass(frozen=True, slots=True, kw_only=True)
class KHotReadout:
    """The sequence-prediction output (§4.1): ``y_t = act(W_y h_t)`` (no bias); symbol k is
    predicted to be possible next iff ``y_t[k] > threshold`` (the paper's 0.5). ``W_y`` writes
    one output per output symbol, named ``f"y:{symbol}"``."""

    symbols: tuple[str, ...]
    W_y: Affine
    activation: CellActivation
    threshold: Fraction = Fraction(1, 2)

    def __post_init__(self) -> None:
        if not self.symbols or len(set(self.symbols)) != len(self.symbols):
            raise NetworkValidationError(
                f"KHotReadout.symbols={self.symbols} must be non-empty without repeats"
            )
        check_choice(self.activation, CELL_ACTIVATIONS, "KHotReadout.activation")
        check_fraction(self.threshold, "KHotReadout.threshold")
        if tuple(self.W_y.outputs) != self.outputs:
            raise NetworkValidationError(
                f"KHotReadout.W_y must write {self.outputs} (one 'y:<symbol>' per output symbol), writes {self.W_y.outputs}"
            )
        if any(b != 0 for b in self.W_y.bias):
            raise NetworkValidationError(
                "KHotReadout.W_y has a bias, but the paper's y_t = σ(W_y h_t) has none; "
                "route the constant through a hidden unit that is always 1"
            )

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(f"y:{s}" for s in self.symbols)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecurrentNetwork:
    """A recurrent network: ``embedding`` gives each input symbol's vector over ``cell.inputs``
    (one-hot in the paper), ``cell`` the recurrence, ``readout`` the k-hot next-symbol sets.
    The initial hidden state is ``initial`` (unlisted units 0); cell state, stack and memory
    start at zero. ``params`` and ``reference``
    as in :class:`~netproof.symbolic.ir.Network`."""

    name: str
    alphabet: tuple[str, ...]
    embedding: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]
    cell: Cell
    readout: KHotReadout
    initial: tuple[tuple[str, Fraction], ...] = ()
    """The nonzero entries of h₀ (the soft bridge starts from h₀ = −1 in tanh space)."""
    params: tuple[tuple[str, str], ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("RecurrentNetwork.name must be non-empty")
        if not self.alphabet or len(set(self.alphabet)) != len(self.alphabet):
            raise NetworkValidationError(
                f"RecurrentNetwork {self.name!r}: alphabet {self.alphabet} is empty or repeats"
            )
        if not isinstance(self.cell, (StackRNN, StackLSTM, BabyNTM, JoulinMikolovRNN)):
            raise NetworkValidationError(
                f"RecurrentNetwork {self.name!r}: cell is a {type(self.cell).__name__}, not a recurrent cell"
            )
        symbols = [s for s, _ in self.embedding]
        if sorted(symbols) != sorted(self.alphabet):
            raise NetworkValidationError(
                f"RecurrentNetwork {self.name!r}: the embedding has rows for {symbols}; it needs one per alphabet symbol {self.alphabet}"
            )
        for symbol, row in self.embedding:
            for dim, value in row:
                if dim not in self.cell.inputs:
                    raise NetworkValidationError(
                        f"RecurrentNetwork {self.name!r}: embedding of {symbol!r} writes {dim!r}, which is not a cell input {self.cell.inputs}"
                    )
                check_fraction(value, f"embedding[{symbol!r}, {dim!r}]")
        for dim, value in self.initial:
            if dim not in self.cell.hidden:
                raise NetworkValidationError(
                    f"RecurrentNetwork {self.name!r}: initial state sets {dim!r}, which is not a hidden unit"
                )
            check_fraction(value, f"initial[{dim!r}]")
        unknown = [d for d in self.readout.W_y.inputs if d not in self.cell.hidden]
        if unknown:
            raise NetworkValidationError(
                f"RecurrentNetwork {self.name!r}: the readout reads {unknown}, which are not hidden units"
            )


def baby_ntm_ops(size: int) -> tuple[MemoryOp, ...]:
    """The five Baby-NTM operations of §3.3 as ``size`` × ``size`` matrices, in the paper's
    order: ROTATE-RIGHT [a,b,c,d,e] → [e,a,b,c,d], ROTATE-LEFT → [b,c,d,e,a], NO-OP = I,
    POP-RIGHT → [0,a,b,c,d], POP-LEFT → [b,c,d,e,0].

    >>> [op.name for op in baby_ntm_ops(3)]
    ['ROTATE-RIGHT', 'ROTATE-LEFT', 'NO-OP', 'POP-RIGHT', 'POP-LEFT']
    >>> baby_ntm_ops(3)[3].entries  # POP-RIGHT: new slot i = old slot i − 1
    ((1, 0, Fraction(1, 1)), (2, 1, Fraction(1, 1)))
    """
    if not isinstance(size, int) or size < 1:
        raise NetworkValidationError(
            f"baby_ntm_ops(size={size!r}): the memory needs at least one slot"
        )
    one = Fraction(1)
    n = size
    rows = {
        "ROTATE-RIGHT": [(i, (i - 1) % n) for i in range(n)],
        "ROTATE-LEFT": [(i, (i + 1) % n) for i in range(n)],
        "NO-OP": [(i, i) for i in range(n)],
        "POP-RIGHT": [(i, i - 1) for i in range(1, n)],
        "POP-LEFT": [(i, i + 1) for i in range(n - 1)],
    }
    return tuple(
        MemoryOp(name=name, size=n, entries=tuple((i, j, one) for i, j in sorted(rows[name])))
        for name in BABY_NTM_OPS
    )
