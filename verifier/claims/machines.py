"""Reference machines for the simulation constructions: σ-RNNs and two-stack machines.

These are the machines a transformer is shown to simulate (Bhattamishra, Patel & Goyal 2020,
*On the Computational Power of Transformers and its Implications in Sequence Modeling*, §4,
which simulates Siegelmann & Sontag's σ-RNNs; Siegelmann & Sontag 1995, *On the Computational
Power of Neural Nets*, §3, which simulate two-stack machines). Each is frozen data with exact
``Fraction`` weights and a plain-Python reference semantics (``run``), the ground truth a
simulation is checked against, as :class:`netproof.verifier.claims.Language` is for recognizers. Random
instances for differential tests come from :func:`netproof.verifier.fuzzing.strategies.sigma_rnns` and
:func:`netproof.verifier.fuzzing.strategies.two_stack_machines`.

A σ-RNN reads one symbol per step, h_t = σ(W_h·h_{t−1} + W_x·x_t + b) with x_t the one-hot code
of the t-th symbol and σ(x) = min(1, max(0, x)) (the saturated-linear σ of Siegelmann & Sontag);
it accepts iff the readout ⟨a, h_n⟩ + c is > 0.

May import: the standard library and :mod:`netproof.symbolic.numbers` (exact numbers); never an
interpreter, an engine, z3 or torch.

>>> rnn = sigma_rnn(
...     ("0", "1"),
...     W_h=[[-1]], W_x=[[0, 1]], b=[0], h0=[0], readout=[1], readout_bias="-1/2",
... )
>>> [h[0] for h in rnn.run(("1", "1", "0"))]   # h_t = σ(1 − h_{t−1}) on a 1, σ(−h_{t−1}) on a 0
[Fraction(0, 1), Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)]
>>> rnn.accepts(("1",)), rnn.accepts(("1", "1"))
(True, False)

A two-stack machine starts with the input on stack 1 (its first symbol on top) and stack 2
empty, and applies the unique transition for (state, top of stack 1, top of stack 2) until
none applies; it accepts iff it then is in an accepting state.

>>> m = balanced_ab_machine()
>>> m.run(("a", "b", "b", "a")).accepted, m.run(("a", "a", "b")).accepted
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeAlias

from netproof.symbolic.numbers import Number, as_fraction

__all__ = [
    "EMPTY",
    "KEEP",
    "POP",
    "Configuration",
    "MachineError",
    "MachineRun",
    "SigmaRNN",
    "StackOp",
    "Transition",
    "TwoStackMachine",
    "balanced_ab_machine",
    "load_machine",
    "parse_machine",
    "push",
    "sigma",
    "sigma_rnn",
]

Word: TypeAlias = tuple[str, ...]


class MachineError(ValueError):
    """A malformed σ-RNN or two-stack machine, or a word outside its alphabet."""


def sigma(x: Fraction) -> Fraction:
    """The saturated-linear σ(x) = min(1, max(0, x)).

    >>> sigma(Fraction(-1, 2)), sigma(Fraction(1, 3)), sigma(Fraction(7, 2))
    (Fraction(0, 1), Fraction(1, 3), Fraction(1, 1))
    """
    return min(Fraction(1), max(Fraction(0), x))


def _check_fraction(value: object, where: str) -> None:
    if not isinstance(value, Fraction):
        raise MachineError(
            f"{where}={value!r} must be a Fraction; build the machine with sigma_rnn(...), which "
            "converts ints and 'p/q' strings (and refuses floats)"
        )


def _check_word(word: Sequence[str], alphabet: tuple[str, ...], what: str) -> Word:
    w = tuple(word)
    allowed = set(alphabet)
    for pos, s in enumerate(w, start=1):
        if s not in allowed:
            raise MachineError(
                f"symbol {s!r} at position {pos} is not in the alphabet {alphabet} of the {what}"
            )
    return w


# --------------------------------------------------------------------------- σ-RNN


@dataclass(frozen=True, slots=True, kw_only=True)
class SigmaRNN:
    """h_t = σ(W_h·h_{t−1} + W_x·x_t + b), x_t one-hot over ``alphabet``; accept iff
    ⟨readout, h_n⟩ + readout_bias > 0. ``W_h`` is d×d, ``W_x`` is d×|Σ| (column j is the
    input weight of ``alphabet[j]``), every entry a Fraction (use :func:`sigma_rnn` to write
    ints or ``"p/q"``)."""

    alphabet: tuple[str, ...]
    W_h: tuple[tuple[Fraction, ...], ...]
    W_x: tuple[tuple[Fraction, ...], ...]
    b: tuple[Fraction, ...]
    h0: tuple[Fraction, ...]
    readout: tuple[Fraction, ...]
    readout_bias: Fraction = Fraction(0)
    units: tuple[str, ...] = ()
    """Names of the hidden units (a compiled machine's neurons: ``ST``, ``C1``, ``S:q0``, ...);
    empty means ``h1`` .. ``hd``. Simulations name their dims after them."""

    def __post_init__(self) -> None:
        if not self.alphabet or len(set(self.alphabet)) != len(self.alphabet):
            raise MachineError(f"alphabet={self.alphabet!r} must be non-empty without repeats")
        d = len(self.h0)
        if d < 1:
            raise MachineError("h0 is empty: a σ-RNN needs at least one hidden unit")
        if self.units and (len(self.units) != d or len(set(self.units)) != d):
            raise MachineError(
                f"units={self.units!r} must name each of the d={d} hidden units once"
            )
        for name, rows, width in (("W_h", self.W_h, d), ("W_x", self.W_x, len(self.alphabet))):
            if len(rows) != d:
                raise MachineError(
                    f"{name} has {len(rows)} rows, expected d={d} (the length of h0)"
                )
            for r, row in enumerate(rows):
                if len(row) != width:
                    raise MachineError(f"{name}[{r}] has {len(row)} entries, expected {width}")
                for c, v in enumerate(row):
                    _check_fraction(v, f"{name}[{r}][{c}]")
        for name, vec in (("b", self.b), ("h0", self.h0), ("readout", self.readout)):
            if len(vec) != d:
                raise MachineError(f"{name} has {len(vec)} entries, expected d={d}")
            for i, v in enumerate(vec):
                _check_fraction(v, f"{name}[{i}]")
        _check_fraction(self.readout_bias, "readout_bias")

    @property
    def d(self) -> int:
        """The number of hidden units."""
        return len(self.h0)

    @property
    def unit_names(self) -> tuple[str, ...]:
        """``units``, or ``h1`` .. ``hd`` when the units are unnamed."""
        return self.units or tuple(f"h{i}" for i in range(1, self.d + 1))

    def step_blank(self, h: Sequence[Fraction]) -> tuple[Fraction, ...]:
        """One update on a blank input (x = 0: the end marker ``$`` or the start marker ``#``
        of Bhattamishra et al., whose f_b maps them to 0): h ↦ σ(W_h·h + b)."""
        return tuple(
            sigma(
                sum((w * x for w, x in zip(row, h, strict=True) if w and x), Fraction(0))
                + self.b[r]
            )
            for r, row in enumerate(self.W_h)
        )

    def run_inputs(self, inputs: Sequence[str | None]) -> tuple[tuple[Fraction, ...], ...]:
        """h_0, h_1, ... on ``inputs``, where None is a blank input (x = 0).

        >>> rnn = sigma_rnn(("a",), W_h=[[1]], W_x=[[1]], b=[0], h0=[0], readout=[1])
        >>> [h[0] for h in rnn.run_inputs(("a", None, "a"))]
        [Fraction(0, 1), Fraction(1, 1), Fraction(1, 1), Fraction(1, 1)]
        """
        states = [self.h0]
        for s in inputs:
            states.append(self.step_blank(states[-1]) if s is None else self.step(states[-1], s))
        return tuple(states)

    def step(self, h: Sequence[Fraction], symbol: str) -> tuple[Fraction, ...]:
        """One update h ↦ σ(W_h·h + W_x·x + b) on ``symbol``."""
        j = _check_word((symbol,), self.alphabet, "σ-RNN")[0]
        col = self.alphabet.index(j)
        return tuple(
            sigma(
                sum((w * x for w, x in zip(row, h, strict=True) if w and x), Fraction(0))
                + self.W_x[r][col]
                + self.b[r]
            )
            for r, row in enumerate(self.W_h)
        )

    def run(self, word: Sequence[str]) -> tuple[tuple[Fraction, ...], ...]:
        """Every hidden state h_0, h_1, ..., h_n on ``word``, exactly."""
        w = _check_word(word, self.alphabet, "σ-RNN")
        states = [self.h0]
        for s in w:
            states.append(self.step(states[-1], s))
        return tuple(states)

    def output(self, word: Sequence[str]) -> Fraction:
        """The readout ⟨readout, h_n⟩ + readout_bias."""
        h = self.run(word)[-1]
        return (
            sum((a * x for a, x in zip(self.readout, h, strict=True)), Fraction(0))
            + self.readout_bias
        )

    def accepts(self, word: Sequence[str]) -> bool:
        """Accept iff the readout is > 0 (the :class:`netproof.symbolic.Classifier` rule)."""
        return self.output(word) > 0


def sigma_rnn(
    alphabet: Sequence[str],
    *,
    W_h: Sequence[Sequence[Number]],
    W_x: Sequence[Sequence[Number]],
    b: Sequence[Number],
    h0: Sequence[Number],
    readout: Sequence[Number],
    readout_bias: Number = 0,
    units: Sequence[str] = (),
) -> SigmaRNN:
    """A :class:`SigmaRNN` from ints, Fractions or ``"p/q"`` strings (floats are refused with
    the exact value to write instead)."""

    def vec(xs: Sequence[Number], name: str) -> tuple[Fraction, ...]:
        return tuple(as_fraction(x, f"{name}[{i}]") for i, x in enumerate(xs))

    def mat(rows: Sequence[Sequence[Number]], name: str) -> tuple[tuple[Fraction, ...], ...]:
        return tuple(vec(row, f"{name}[{r}]") for r, row in enumerate(rows))

    return SigmaRNN(
        alphabet=tuple(alphabet),
        W_h=mat(W_h, "W_h"),
        W_x=mat(W_x, "W_x"),
        b=vec(b, "b"),
        h0=vec(h0, "h0"),
        readout=vec(readout, "readout"),
        readout_bias=as_fraction(readout_bias, "readout_bias"),
        units=tuple(units),
    )


# --------------------------------------------------------------------------- two-stack machines

EMPTY = ""
"""The 'top' of an empty stack in a :class:`Transition`."""


@dataclass(frozen=True, slots=True)
class StackOp:
    """What a transition does to one stack: ``keep`` it, ``pop`` its top, or ``push`` a symbol."""

    kind: Literal["keep", "pop", "push"]
    symbol: str = EMPTY

    def __post_init__(self) -> None:
        if self.kind not in ("keep", "pop", "push"):
            raise MachineError(f"StackOp.kind={self.kind!r} must be keep, pop or push")
        if (self.kind == "push") != (self.symbol != EMPTY):
            raise MachineError(
                f"StackOp({self.kind!r}, {self.symbol!r}): only push takes a symbol; write push('a')"
            )

    def __str__(self) -> str:
        return f"push {self.symbol}" if self.kind == "push" else self.kind


KEEP = StackOp("keep")
POP = StackOp("pop")


def push(symbol: str) -> StackOp:
    """The stack operation that pushes ``symbol``."""
    return StackOp("push", symbol)


@dataclass(frozen=True, slots=True, kw_only=True)
class Transition:
    """In ``state`` with ``top1``/``top2`` on top of the stacks (:data:`EMPTY` for an empty
    stack): go to ``next`` and apply ``op1``/``op2``."""

    state: str
    top1: str
    top2: str
    next: str
    op1: StackOp = KEEP
    op2: StackOp = KEEP


@dataclass(frozen=True, slots=True)
class MachineRun:
    """The end of a run: ``accepted`` is None when the machine was still running after
    ``steps`` (= the step budget) steps; ``stacks`` are listed bottom first."""

    accepted: bool | None
    state: str
    steps: int
    stacks: tuple[Word, Word]


@dataclass(frozen=True, slots=True)
class Configuration:
    """A machine's state and stacks (bottom first) between two steps."""

    state: str
    stack1: Word
    stack2: Word

    def __str__(self) -> str:
        def show(stack: Word) -> str:
            return "".join(reversed(stack)) or "ε"

        return f"{self.state} [{show(self.stack1)} | {show(self.stack2)}]"


@dataclass(frozen=True, slots=True, kw_only=True)
class TwoStackMachine:
    """A deterministic machine with a finite control and two stacks over ``stack_alphabet``.

    The input (over ``input_alphabet`` ⊆ ``stack_alphabet``) starts on stack 1 with its first
    symbol on top; stack 2 starts empty. At most one transition exists per (state, top1, top2);
    the machine halts when none applies and accepts iff it halts in a state of ``accept``.
    """

    states: tuple[str, ...]
    start: str
    accept: tuple[str, ...]
    input_alphabet: tuple[str, ...]
    stack_alphabet: tuple[str, ...]
    transitions: tuple[Transition, ...]

    def __post_init__(self) -> None:
        if not self.states or len(set(self.states)) != len(self.states):
            raise MachineError(f"states={self.states!r} must be non-empty without repeats")
        if self.start not in self.states:
            raise MachineError(f"start={self.start!r} is not one of the states {self.states}")
        for q in self.accept:
            if q not in self.states:
                raise MachineError(f"accepting state {q!r} is not one of the states {self.states}")
        gamma = set(self.stack_alphabet)
        if len(gamma) != len(self.stack_alphabet) or EMPTY in gamma:
            raise MachineError(
                f"stack_alphabet={self.stack_alphabet!r} must be non-empty symbols without repeats"
            )
        missing = [s for s in self.input_alphabet if s not in gamma]
        if missing:
            raise MachineError(
                f"input symbols {missing} are not stack symbols; the input starts on stack 1, so add "
                "them to stack_alphabet"
            )
        seen: set[tuple[str, str, str]] = set()
        for t in self.transitions:
            where = f"transition ({t.state!r}, {t.top1!r}, {t.top2!r})"
            if t.state not in self.states or t.next not in self.states:
                raise MachineError(f"{where} → {t.next!r} names a state not in {self.states}")
            for top, op, i in ((t.top1, t.op1, 1), (t.top2, t.op2, 2)):
                if top != EMPTY and top not in gamma:
                    raise MachineError(f"{where}: top{i}={top!r} is not a stack symbol (or EMPTY)")
                if op.kind == "pop" and top == EMPTY:
                    raise MachineError(
                        f"{where} pops stack {i}, which is empty there; keep it or push instead"
                    )
                if op.kind == "push" and op.symbol not in gamma:
                    raise MachineError(f"{where} pushes {op.symbol!r}, which is not a stack symbol")
            key = (t.state, t.top1, t.top2)
            if key in seen:
                raise MachineError(f"{where} is given twice; the machine must be deterministic")
            seen.add(key)

    def table(self) -> dict[tuple[str, str, str], Transition]:
        """The transitions keyed by (state, top1, top2)."""
        return {(t.state, t.top1, t.top2): t for t in self.transitions}

    def configurations(
        self, word: Sequence[str], max_steps: int = 10_000
    ) -> tuple[Configuration, ...]:
        """Every configuration of the run on ``word``, the start one first, until the machine
        halts or ``max_steps`` transitions were made (stacks bottom first)."""
        w = _check_word(word, self.input_alphabet, "two-stack machine")
        table = self.table()
        s1, s2 = list(reversed(w)), list[str]()
        state = self.start
        out = [Configuration(state, tuple(s1), tuple(s2))]
        for _ in range(max_steps):
            t = table.get((state, s1[-1] if s1 else EMPTY, s2[-1] if s2 else EMPTY))
            if t is None:
                break
            for stack, op in ((s1, t.op1), (s2, t.op2)):
                if op.kind == "pop":
                    stack.pop()
                elif op.kind == "push":
                    stack.append(op.symbol)
            state = t.next
            out.append(Configuration(state, tuple(s1), tuple(s2)))
        return tuple(out)

    def halting_states(self) -> tuple[str, ...]:
        """The states without any transition (the machine always halts there)."""
        busy = {t.state for t in self.transitions}
        return tuple(q for q in self.states if q not in busy)

    def run(self, word: Sequence[str], max_steps: int = 10_000) -> MachineRun:
        """Run on ``word`` for at most ``max_steps`` transitions."""
        w = _check_word(word, self.input_alphabet, "two-stack machine")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
            raise MachineError(f"max_steps={max_steps!r} must be an int >= 0")
        table = self.table()
        s1, s2 = list(reversed(w)), list[str]()  # bottom first: the first input symbol is on top
        state = self.start
        for steps in range(max_steps + 1):
            t = table.get((state, s1[-1] if s1 else EMPTY, s2[-1] if s2 else EMPTY))
            if t is None:
                return MachineRun(state in self.accept, state, steps, (tuple(s1), tuple(s2)))
            if steps == max_steps:
                break
            for stack, op in ((s1, t.op1), (s2, t.op2)):
                if op.kind == "pop":
                    stack.pop()
                elif op.kind == "push":
                    stack.append(op.symbol)
            state = t.next
        return MachineRun(None, state, max_steps, (tuple(s1), tuple(s2)))


def balanced_ab_machine() -> TwoStackMachine:
    """A hand-written example: accepts the words over {a, b} with as many a's as b's.

    It pops the input symbol by symbol; stack 2 holds the surplus (a run of a's or of b's): a
    symbol equal to the surplus (or on an empty stack 2) is pushed, the other one cancels one.
    With both stacks empty it moves to ``acc``; with a surplus left on stack 2 it halts in ``q``
    and rejects.
    """
    ts: list[Transition] = [Transition(state="q", top1=EMPTY, top2=EMPTY, next="acc")]
    for x, y in (("a", "b"), ("b", "a")):
        ts += [
            Transition(state="q", top1=x, top2=EMPTY, next="q", op1=POP, op2=push(x)),
            Transition(state="q", top1=x, top2=x, next="q", op1=POP, op2=push(x)),
            Transition(state="q", top1=x, top2=y, next="q", op1=POP, op2=POP),
        ]
    return TwoStackMachine(
        states=("q", "acc"),
        start="q",
        accept=("acc",),
        input_alphabet=("a", "b"),
        stack_alphabet=("a", "b"),
        transitions=tuple(ts),
    )


# --------------------------------------------------------------------------- machine files

MACHINE_FORMAT = "netproof-machine"
_MACHINE_FIELDS = {
    "format",
    "version",
    "name",
    "description",
    "states",
    "start",
    "accept",
    "input_alphabet",
    "stack_alphabet",
    "transitions",
}
_TRANSITION_FIELDS = {"state", "top1", "top2", "next", "op1", "op2"}


def _machine_fail(where: str, message: str, source: str) -> MachineError:
    return MachineError(f"{source}: {where}: {message}")


def parse_machine(text: str, source: str = "<machine>") -> tuple[str, str, TwoStackMachine]:
    """Read a machine file: (name, description, machine). The format is JSON::

        {"format": "netproof-machine", "version": 1, "name": "reverse",
         "description": "...", "states": ["q", "done"], "start": "q", "accept": ["done"],
         "input_alphabet": ["a", "b"], "stack_alphabet": ["a", "b"],
         "transitions": [{"state": "q", "top1": "*", "top2": "*", "next": "q",
                          "op1": "pop", "op2": "push a"}, ...]}

    ``top1``/``top2`` is a stack symbol, ``""`` (the stack is empty) or ``"*"`` (any of them,
    expanded into one transition per case; a wildcard may not overlap another transition).
    ``op1``/``op2`` is ``keep``, ``pop`` or ``push X``. The input starts on stack 1, its first
    symbol on top; the machine halts when no transition applies. The reader is strict: unknown
    or missing fields, duplicate keys and overlapping transitions are errors naming the place.

    >>> name, _, m = parse_machine(
    ...     '{"format": "netproof-machine", "version": 1, "name": "pop-all", "description": "",'
    ...     ' "states": ["q"], "start": "q", "accept": ["q"], "input_alphabet": ["a"],'
    ...     ' "stack_alphabet": ["a"], "transitions": [{"state": "q", "top1": "a", "top2": "*",'
    ...     ' "next": "q", "op1": "pop", "op2": "keep"}]}')
    >>> name, len(m.transitions), m.run(("a", "a")).accepted
    ('pop-all', 2, True)
    """
    import json

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, v in items:
            if k in out:
                raise _machine_fail(f"field {k!r}", "appears twice", source)
            out[k] = v
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise MachineError(
            f"{source}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise _machine_fail(
            "top level",
            "must be a JSON object with the fields " + ", ".join(sorted(_MACHINE_FIELDS)),
            source,
        )
    unknown = sorted(set(data) - _MACHINE_FIELDS)
    if unknown:
        raise _machine_fail(
            "top level",
            f"unknown fields {unknown}; allowed: {', '.join(sorted(_MACHINE_FIELDS))}",
            source,
        )
    missing = sorted(_MACHINE_FIELDS - set(data) - {"description"})
    if missing:
        raise _machine_fail("top level", f"missing fields {missing}", source)
    if data["format"] != MACHINE_FORMAT:
        raise _machine_fail(
            "format",
            f'is {data["format"]!r}; a machine file says "format": "{MACHINE_FORMAT}"',
            source,
        )
    if data["version"] != 1:
        raise _machine_fail(
            "version", f"{data['version']!r} is not supported; this reader reads version 1", source
        )

    def text_field(key: str) -> str:
        v = data[key]
        if not isinstance(v, str):
            raise _machine_fail(key, f"must be a string, got {v!r}", source)
        return v

    def names(key: str) -> tuple[str, ...]:
        v = data[key]
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            raise _machine_fail(key, f"must be a list of non-empty strings, got {v!r}", source)
        return tuple(v)

    name = text_field("name")
    description = text_field("description") if "description" in data else ""
    gamma = names("stack_alphabet")
    if "*" in gamma:
        raise _machine_fail(
            "stack_alphabet",
            "'*' is the wildcard of the transition table; rename that symbol",
            source,
        )
    raw = data["transitions"]
    if not isinstance(raw, list):
        raise _machine_fail("transitions", "must be a list of objects", source)
    transitions: list[Transition] = []
    origin: dict[tuple[str, str, str], int] = {}
    for idx, item in enumerate(raw):
        where = f"transitions[{idx}]"
        if not isinstance(item, dict):
            raise _machine_fail(
                where,
                f"must be an object with the fields {', '.join(sorted(_TRANSITION_FIELDS))}",
                source,
            )
        if set(item) != _TRANSITION_FIELDS:
            extra = sorted(set(item) - _TRANSITION_FIELDS)
            lack = sorted(_TRANSITION_FIELDS - set(item))
            raise _machine_fail(where, f"unknown fields {extra} / missing fields {lack}", source)
        for key in _TRANSITION_FIELDS:
            if not isinstance(item[key], str):
                raise _machine_fail(
                    f"{where}.{key}", f"must be a string, got {item[key]!r}", source
                )

        def op(key: str, item: dict[str, object] = item, where: str = where) -> StackOp:
            v = str(item[key])
            if v in ("keep", "pop"):
                return StackOp(v)  # type: ignore[arg-type]
            if v.startswith("push "):
                return push(v[5:])
            raise _machine_fail(f"{where}.{key}", f"{v!r} is not keep, pop or push X", source)

        def tops(key: str, item: dict[str, object] = item, where: str = where) -> tuple[str, ...]:
            v = str(item[key])
            if v == "*":
                return (EMPTY, *gamma)
            if v != EMPTY and v not in gamma:
                raise _machine_fail(
                    f"{where}.{key}",
                    f"{v!r} is not a stack symbol, '' (empty) or '*' (any)",
                    source,
                )
            return (v,)

        op1, op2 = op("op1"), op("op2")
        for top1 in tops("top1"):
            for top2 in tops("top2"):
                pops_empty = (op1.kind == "pop" and top1 == EMPTY) or (
                    op2.kind == "pop" and top2 == EMPTY
                )
                if pops_empty and "*" in (item["top1"], item["top2"]):
                    raise _machine_fail(
                        where,
                        "pops a stack that a '*' allows to be empty; list the empty case separately",
                        source,
                    )
                key3 = (str(item["state"]), top1, top2)
                if key3 in origin:
                    raise _machine_fail(
                        where,
                        f"overlaps transitions[{origin[key3]}] on (state, top1, top2) = {key3}; "
                        "the machine must be deterministic",
                        source,
                    )
                origin[key3] = idx
                transitions.append(
                    Transition(
                        state=str(item["state"]),
                        top1=top1,
                        top2=top2,
                        next=str(item["next"]),
                        op1=op1,
                        op2=op2,
                    )
                )
    try:
        machine = TwoStackMachine(
            states=names("states"),
            start=text_field("start"),
            accept=names("accept"),
            input_alphabet=names("input_alphabet"),
            stack_alphabet=gamma,
            transitions=tuple(transitions),
        )
    except MachineError as exc:
        raise MachineError(f"{source}: {exc}") from None
    return name, description, machine


def load_machine(path: str) -> tuple[str, str, TwoStackMachine]:
    """:func:`parse_machine` on the file at ``path``."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise MachineError(f"cannot read the machine file {path!r}: {exc.strerror}") from None
    return parse_machine(text, path)
