"""Suzgun, Gehrmann, Belinkov, Shieber 2019, *Memory-Augmented Recurrent Neural Networks Can
Learn Generalized Dyck Languages*: hand-set exact memory-augmented RNNs.

The paper trains its networks; it prints no weights. The weights here are the verified ones of
spec ``bhattamishra2020_suzgun2019_chang2021.md`` §3.3, written in the paper's architectures
(§3.1 Stack-RNN, §3.2 Stack-LSTM, §3.3 Baby-NTM) with the spec's exact replacements: tanh → σ,
the logistic σ → σ (σ is the saturated linear σ(x) = min(1, max(0, x))), softmax → hardmax (no
tie ever occurs: the two scores are a 0/1 pair that sums to 1). All weights are integers and all
activations lie in {0, 1}. The maps the paper writes without bias (y, a, n) get their constants
through a unit ``one = σ(b_ih = 1)``. Stack fields reach W_hh through **slot units** that have no
incoming weights, so they are 0 in h and equal s_{t−1}(0) in h̃ = h + W_sh s_{t−1}(0). A prime
marks h_{t−1} (read from h̃).

Tasks (``task=``): ``d2``, ``d3`` (D_k, k = 2, 3: H = 4 + 6k, M = 2k; an element is [own
bracket one-hot | one-hot of the bracket below it], since h_t sees only s_{t−1}(0), the element
being *closed*, and the next set needs the one under it), ``palindrome`` (w#w^R: H = 18, M = 3)
and ``homomorphic-palindrome`` (w#φ(w^R): H = 21, M = 3). The paper's sizes (H = 8, M = 1) are
not reached: with M = 1 one would need threshold decoding of scalar codes (spec §3.3).

The Stack-LSTM construction is the Stack-RNN inside the LSTM equations with constant gates:
i = σ(1) = 1, f = σ(0) = 0, o = 1, g = σ(W_ih x + b + W_hh h̃) (σ for both the gates and the
activation), so c_t = g and h_t = σ(c_t) = c_t. It is a construction of the paper's
architecture, but it uses none of what the LSTM adds.

Soft version (``scale=K``, spec §3.3 "soft bridge"): the paper's literal architecture (tanh
hidden units, logistic σ for y and n, softmax(K·) for a) with h_tanh = tanh(K(z − ½))
representing h_exact = (h_tanh + 1)/2: W_ih·K, W_hh·K/2, W_sh·2, b·K − K/2 + (K/2)·(row sums of
W_hh), y and n through logistic(K(W h_exact − ½)) with the constant routed through ``one``, and
h₀ = −1 in tanh space (exact h₀ = 0). The spec found the thresholded outputs equal to the exact
ones for K ≥ 6 (1000 D₂ words of length 52–100).

Errata of the paper (spec §3.1, §3.2, §6): the EOS symbol of the palindrome tasks was lost in the
text and the transduction formula ``(a/b/c/#)^{|w|} φ(w^R)`` omits it (there are 2|w| + 1
outputs); POP-RIGHT is really a push that drops the last slot; the
Gumbel-softmax formula takes the log of logits (implemented as softmax((x + g)/τ)); τ is not given;
the Stack-LSTM cell state is unspecified (carried over unchanged).

Variants: the paper prints no weights, so there is no literal version of the networks; its
literal statements that fail are declared by ``baby-ntm -p variant=paper``: "POP-RIGHT pops"
(M5, refuted: it pushes a 0) and, with a palindrome task, the EOS-less target (refuted on ``#``).
``stack-rnn`` and ``stack-lstm`` have no ``variant`` parameter.

May import: the IR and the recurrent IR (:mod:`netproof.symbolic`), the vocabulary
(:mod:`netproof.verifier.claims`, Dyck(k, D) included) and the tasks of
:mod:`netproof.constructions.marnn_tasks`; never an interpreter or an engine.

>>> from netproof.symbolic.recurrent import run
>>> trace = run(baby_ntm(task="palindrome"), tuple("ab#ba"))
>>> [" ".join(sorted(p)) for p in trace.predictions]
['# a b c', '# a b c', 'b', 'a', 'EOS']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.constructions.marnn_tasks import EOS, LETTERS, PHI, dyck_task, palindrome_task
from netproof.symbolic import Affine, Hardmax, Softmax, affine
from netproof.symbolic.recurrent_ir import (
    BABY_NTM_OPS,
    STACK_OPS,
    BabyNTM,
    KHotReadout,
    RecurrentNetwork,
    StackLSTM,
    StackRNN,
    baby_ntm_ops,
)
from netproof.verifier.claims import (
    VARIANT,
    Construction,
    ExactFact,
    Identity,
    Param,
    PredictsNext,
    SequenceTask,
    SoftAgrees,
    parse_int,
)
from netproof.verifier.claims.dyck import dyck_alphabet

__all__ = [
    "CONSTRUCTIONS",
    "TASKS",
    "Controller",
    "baby_ntm",
    "controller",
    "memory_op_facts",
    "stack_lstm",
    "stack_rnn",
]

PAPER = "suzgun2019"
TASKS = ("d2", "d3", "palindrome", "homomorphic-palindrome")
Row = Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Controller:
    """The exact finite-state control shared by the three architectures: integer rows over the
    inputs ``x:<s>``, the primed hidden units (read from h̃) and ``"1"`` (the bias)."""

    task: SequenceTask
    hidden: tuple[str, ...]
    element: tuple[str, ...]
    pre: Mapping[str, Row]
    """h_t = σ(pre): hidden unit -> {input or primed unit or "1": weight}."""
    slots: Mapping[str, str]
    """slot unit -> the element component W_sh routes into it."""
    y: Mapping[str, Row]
    push: Row
    pop: Row
    n: Mapping[str, Row]

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(f"x:{s}" for s in self.task.inputs)


def _x(s: str) -> str:
    return f"x:{s}"


def _minus(units: list[str], row: dict[str, int] | None = None) -> dict[str, int]:
    out = dict(row or {})
    for u in units:
        out[u] = out.get(u, 0) - 1
    return out


def _dyck_controller(k: int) -> Controller:
    """D_k (spec §3.3): open_i / close_i are the bracket pairs of :func:`dyck_alphabet`."""
    alphabet = dyck_alphabet(k)
    opens, closes = alphabet[0::2], alphabet[1::2]
    pairs = list(zip(opens, closes, strict=True))
    pre: dict[str, dict[str, int]] = {
        "one": {"1": 1},
        "open": {_x(o): 1 for o in opens},
        "close": {_x(c): 1 for c in closes},
        "err": {"err": 1, **{f"mm:{o}": 1 for o in opens}},
    }
    for o, c in pairs:
        pre[f"in_o:{o}"] = {_x(o): 1}
        pre[f"top:{o}"] = {f"slot_own:{o}": 1}
        pre[f"cb:{o}"] = {**{_x(cc): 1 for cc in closes}, f"slot_below:{o}": 1, "1": -1}
        pre[f"mm:{o}"] = {_x(c): 1, f"slot_own:{o}": -1}
    slots = {
        **{f"slot_own:{o}": f"own:{o}" for o in opens},
        **{f"slot_below:{o}": f"below:{o}" for o in opens},
    }
    hidden = (*pre, *slots)
    bad = ["err", *(f"mm:{o}" for o in opens)]
    y: dict[str, dict[str, int]] = {}
    for o, c in pairs:
        y[o] = _minus(bad, {"one": 1})
        y[c] = _minus(bad, {f"in_o:{o}": 1, f"cb:{o}": 1})
    n = {
        **{f"own:{o}": {f"in_o:{o}": 1} for o in opens},
        **{f"below:{o}": {f"top:{o}": 1, "open": 1, "one": -1} for o in opens},
    }
    element = (*(f"own:{o}" for o in opens), *(f"below:{o}" for o in opens))
    return Controller(dyck_task(k), hidden, element, pre, slots, y, {"open": 1}, {"close": 1}, n)


def _palindrome_controller(hom: bool) -> Controller:
    """w#w^R (H = 18) and w#φ(w^R) (H = 21), spec §3.3. At step t, h_t sees s_{t−1}(0), which is
    the *next* expected letter, because the stack pops at ``#`` and after every match."""
    task = palindrome_task(hom=hom)
    pre: dict[str, dict[str, int]] = {
        "one": {"1": 1},
        "phase": {"phase": 1, _x("#"): 1},
        "U1": {"1": 1, "phase": -1, _x("#"): -1},
        "UE": {_x("#"): 1, "phase": 1, **{f"slot:{a}": -1 for a in LETTERS}},
    }
    for a in LETTERS:
        pre[f"U2:{a}"] = {f"slot:{a}": 1, _x("#"): 1, "phase": 1, "1": -1}
        pre[f"in:{a}"] = {_x(a): 1}
    if hom:
        for a in LETTERS:  # first-half letters: exempt at t = 1 (one' = 0 there)
            pre[f"mmf:{a}"] = {_x(a): 1, "U1": -1, "one": 1, "1": -1}
        for a in LETTERS:  # second-half letters φ(a): never exempt
            pre[f"mm:{a}"] = {_x(PHI[a]): 1, f"U2:{a}": -1}
        mms = [*(f"mmf:{a}" for a in LETTERS), *(f"mm:{a}" for a in LETTERS)]
    else:
        for a in LETTERS:
            pre[f"mm:{a}"] = {_x(a): 1, "U1": -1, f"U2:{a}": -1, "one": 1, "1": -1}
        mms = [f"mm:{a}" for a in LETTERS]
    pre["mmh"] = {_x("#"): 1, "U1": -1, "one": 1, "1": -1}
    pre["err"] = {"err": 1, "mmh": 1, **dict.fromkeys(mms, 1)}
    slots = {f"slot:{a}": f"s:{a}" for a in LETTERS}
    hidden = (*pre, *slots)
    bad = ["err", "mmh", *mms]
    y: dict[str, dict[str, int]] = {}
    for a in LETTERS:
        y[a] = _minus(bad, {"U1": 1} if hom else {"U1": 1, f"U2:{a}": 1})
    y["#"] = _minus(bad, {"U1": 1})
    if hom:
        for a in LETTERS:
            y[PHI[a]] = _minus(bad, {f"U2:{a}": 1})
    y[EOS] = _minus(bad, {"UE": 1})
    n = {f"s:{a}": {f"in:{a}": 1, "U1": 1, "one": -1} for a in LETTERS}
    element = tuple(f"s:{a}" for a in LETTERS)
    return Controller(task, hidden, element, pre, slots, y, {"U1": 1}, {"phase": 1}, n)


def controller(task: str) -> Controller:
    """The exact controller for ``task`` (one of :data:`TASKS`)."""
    match task:
        case "d2":
            return _dyck_controller(2)
        case "d3":
            return _dyck_controller(3)
        case "palindrome":
            return _palindrome_controller(hom=False)
        case "homomorphic-palindrome":
            return _palindrome_controller(hom=True)
    raise ValueError(f"task={task!r} is not one of {', '.join(TASKS)}")


# --------------------------------------------------------------------------- IR assembly


def _maps(ctl: Controller, scale: int | None) -> dict[str, Any]:
    """W_ih (with b = b_ih + b_hh), W_hh, W_sh, the readout, W_a, W_n: exact (scale None) or the
    soft bridge at scale K."""
    hidden = ctl.hidden
    K = Fraction(scale) if scale is not None else None
    half = Fraction(1, 2)

    def soft_row(row: Row, constant: Fraction) -> dict[str, Fraction]:
        """K·(W h_exact − ½) written over h_tanh: K·(W/2 h_tanh + (Σ W/2 − ½)·one_tanh)."""
        assert K is not None
        out = {u: K * w * half for u, w in row.items() if w != 0}
        out["one"] = out.get("one", Fraction(0)) + K * (
            sum(Fraction(w) for w in row.values()) * half + constant
        )
        return out

    ih: dict[str, dict[str, Fraction]] = {}
    hh: dict[str, dict[str, Fraction]] = {}
    bias: dict[str, Fraction] = {}
    for unit in hidden:
        row = ctl.pre.get(unit, {})
        x_part = {d: Fraction(w) for d, w in row.items() if d.startswith("x:")}
        h_part = {d: Fraction(w) for d, w in row.items() if d in hidden}
        b = Fraction(row.get("1", 0))
        if K is None:
            ih[unit], hh[unit], bias[unit] = x_part, h_part, b
        else:
            ih[unit] = {d: K * w for d, w in x_part.items()}
            hh[unit] = {d: K * w * half for d, w in h_part.items()}
            bias[unit] = K * (b - half + sum(h_part.values(), Fraction(0)) * half)
    W_ih = affine(ih, inputs=ctl.inputs, bias=bias, outputs=hidden)
    W_hh = affine(hh, inputs=hidden, outputs=hidden)
    route = Fraction(1) if K is None else Fraction(2)
    W_sh = affine({u: {e: route} for u, e in ctl.slots.items()}, inputs=ctl.element, outputs=hidden)
    y: dict[str, dict[str, Fraction]]
    a: dict[str, dict[str, Fraction]]
    n: dict[str, dict[str, Fraction]]
    if K is None:
        y = {f"y:{s}": {u: Fraction(w) for u, w in row.items()} for s, row in ctl.y.items()}
        a = {
            "PUSH": {u: Fraction(w) for u, w in ctl.push.items()},
            "POP": {u: Fraction(w) for u, w in ctl.pop.items()},
        }
        n = {e: {u: Fraction(w) for u, w in row.items()} for e, row in ctl.n.items()}
    else:
        y = {f"y:{s}": soft_row(row, -half) for s, row in ctl.y.items()}
        a = {op: soft_row(row, Fraction(0)) for op, row in (("PUSH", ctl.push), ("POP", ctl.pop))}
        a = {
            op: {u: w / K for u, w in row.items()} for op, row in a.items()
        }  # softmax(c = K) scales
        n = {e: soft_row(row, -half) for e, row in ctl.n.items()}
    outputs = tuple(f"y:{s}" for s in ctl.task.outputs)
    return {
        "W_ih": W_ih,
        "W_hh": W_hh,
        "W_sh": W_sh,
        "W_y": affine(y, inputs=hidden, outputs=outputs),
        "a": a,
        "W_n": affine(n, inputs=hidden, outputs=ctl.element),
    }


def _embedding(ctl: Controller) -> tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]:
    return tuple((s, ((_x(s), Fraction(1)),)) for s in ctl.task.inputs)


def _network(
    ctl: Controller, kind: str, cell: Any, W_y: Affine, scale: int | None, params: dict[str, str]
) -> RecurrentNetwork:
    soft = scale is not None
    return RecurrentNetwork(
        name=f"{kind}-{params['task']}" + (f"-soft-K{scale}" if soft else ""),
        alphabet=ctl.task.inputs,
        embedding=_embedding(ctl),
        cell=cell,
        readout=KHotReadout(
            symbols=ctl.task.outputs, W_y=W_y, activation="logistic" if soft else "sigma"
        ),
        initial=tuple((u, Fraction(-1)) for u in ctl.hidden) if soft else (),
        params=tuple(sorted(params.items())),
        reference=f"Suzgun et al. 2019, {'§3.1' if kind == 'stack-rnn' else '§3.2' if kind == 'stack-lstm' else '§3.3'}; "
        "spec §3.3 (hand-set exact weights" + (", soft bridge)" if soft else ")"),
    )


def stack_rnn(*, task: str = "d2", scale: int | None = None) -> RecurrentNetwork:
    """The Stack-RNN of §3.1 for ``task`` with the spec's exact weights; with ``scale=K`` the
    soft version (tanh, logistic σ, softmax(K·)).

    >>> from netproof.symbolic.recurrent import run
    >>> [" ".join(sorted(p)) for p in run(stack_rnn(task="d2"), tuple("(]")).predictions]
    ['( ) [', '']
    """
    ctl = controller(task)
    m = _maps(ctl, scale)
    soft = scale is not None
    cell = StackRNN(
        inputs=ctl.inputs,
        hidden=ctl.hidden,
        element=ctl.element,
        W_ih=m["W_ih"],
        W_hh=m["W_hh"],
        W_sh=m["W_sh"],
        W_a=affine(m["a"], inputs=ctl.hidden, outputs=STACK_OPS),
        W_n=m["W_n"],
        activation="tanh" if soft else "sigma",
        gate="logistic" if soft else "sigma",
        decision=Softmax(c=Fraction(scale)) if scale is not None else Hardmax(),
    )
    params = {"task": task, **({"scale": str(scale)} if soft else {})}
    return _network(ctl, "stack-rnn", cell, m["W_y"], scale, params)


def baby_ntm(*, task: str = "d2", slots: int = 104, scale: int | None = None) -> RecurrentNetwork:
    """The Baby-NTM of §3.3 for ``task``: the Stack-RNN's controller with ROTATE-RIGHT where it
    pushes and POP-LEFT where it pops (the other three ops score 0), a memory of ``slots`` slots
    (the paper's N = 104) and ``𝐌_t(0) += n_t`` at every step (n = 0 on pops, since n is gated
    by the push flag). Correct while the nesting depth stays below ``slots``."""
    ctl = controller(task)
    m = _maps(ctl, scale)
    soft = scale is not None
    zero: dict[str, Fraction] = {}
    scores = {
        "ROTATE-RIGHT": m["a"]["PUSH"],
        "ROTATE-LEFT": zero,
        "NO-OP": zero,
        "POP-RIGHT": zero,
        "POP-LEFT": m["a"]["POP"],
    }
    cell = BabyNTM(
        inputs=ctl.inputs,
        hidden=ctl.hidden,
        element=ctl.element,
        ops=baby_ntm_ops(slots),
        W_ih=m["W_ih"],
        W_hh=m["W_hh"],
        W_m=m["W_sh"],
        W_a=affine(scores, inputs=ctl.hidden, outputs=BABY_NTM_OPS),
        W_n=m["W_n"],
        activation="tanh" if soft else "sigma",
        gate="logistic" if soft else "sigma",
        decision=Softmax(c=Fraction(scale)) if scale is not None else Hardmax(),
    )
    params = {"task": task, "slots": str(slots), **({"scale": str(scale)} if soft else {})}
    return _network(ctl, "baby-ntm", cell, m["W_y"], scale, params)


def stack_lstm(*, task: str = "d2") -> RecurrentNetwork:
    """The Stack-LSTM of §3.2 with constant gates (i = o = σ(1) = 1, f = σ(0) = 0) and the
    Stack-RNN's map in g, so that c_t = g and h_t = σ(c_t) = h_t of :func:`stack_rnn`."""
    ctl = controller(task)
    m = _maps(ctl, None)
    both = (*ctl.inputs, *ctl.hidden)
    W_ih: Affine = m["W_ih"]
    W_hh: Affine = m["W_hh"]
    rows = {
        u: {
            **dict(zip(W_ih.inputs, r_ih, strict=True)),
            **dict(zip(W_hh.inputs, r_hh, strict=True)),
        }
        for u, r_ih, r_hh in zip(ctl.hidden, W_ih.weights, W_hh.weights, strict=True)
    }
    g = affine(
        rows, inputs=both, bias=dict(zip(ctl.hidden, W_ih.bias, strict=True)), outputs=ctl.hidden
    )

    def gate(value: int) -> Affine:
        return affine({}, inputs=both, bias=dict.fromkeys(ctl.hidden, value), outputs=ctl.hidden)

    cell = StackLSTM(
        inputs=ctl.inputs,
        hidden=ctl.hidden,
        element=ctl.element,
        W_i=gate(1),
        W_f=gate(0),
        W_o=gate(1),
        W_g=g,
        W_sh=m["W_sh"],
        W_a=affine(m["a"], inputs=ctl.hidden, outputs=STACK_OPS),
        W_n=m["W_n"],
        activation="sigma",
        gate="sigma",
        decision=Hardmax(),
    )
    return _network(ctl, "stack-lstm", cell, m["W_y"], None, {"task": task})


# --------------------------------------------------------------------------- memory operations


Matrix = tuple[tuple[Fraction, ...], ...]


def _dense(size: int, name: str) -> Matrix:
    op = next(o for o in baby_ntm_ops(size) if o.name == name)
    rows = [[Fraction(0)] * size for _ in range(size)]
    for i, j, v in op.entries:
        rows[i][j] = v
    return tuple(tuple(r) for r in rows)


def _mul(A: Matrix, B: Matrix) -> Matrix:
    return tuple(
        tuple(
            sum((A[i][k] * B[k][j] for k in range(len(B))), Fraction(0)) for j in range(len(B[0]))
        )
        for i in range(len(A))
    )


def _identity(size: int) -> Matrix:
    return tuple(tuple(Fraction(int(i == j)) for j in range(size)) for i in range(size))


def _diag(values: list[int]) -> Matrix:
    return tuple(
        tuple(Fraction(values[i]) if i == j else Fraction(0) for j in range(len(values)))
        for i in range(len(values))
    )


def _column(values: list[Fraction]) -> Matrix:
    return tuple((v,) for v in values)


def _show_column(m: Matrix) -> str:
    return "[" + ", ".join(str(r[0]) for r in m) + "]"


SIZES = (3, 5)
_ABCDE = [Fraction(v) for v in (2, 3, 5, 7, 11)]  # a, b, c, d, e: distinct primes


def _fact_printed() -> tuple[int, str | None]:
    """§3.3's table on M = [a,b,c,d,e] (a..e = 2, 3, 5, 7, 11)."""
    a, b, c, d, e = _ABCDE
    z = Fraction(0)
    printed = {
        "ROTATE-RIGHT": [e, a, b, c, d],
        "ROTATE-LEFT": [b, c, d, e, a],
        "NO-OP": [a, b, c, d, e],
        "POP-RIGHT": [z, a, b, c, d],
        "POP-LEFT": [b, c, d, e, z],
    }
    M = _column(_ABCDE)
    for done, (name, want) in enumerate(printed.items()):
        got = _mul(_dense(5, name), M)
        if got != _column(want):
            return (
                done,
                f"{name}·[a,b,c,d,e] = {_show_column(got)}, the paper prints {_show_column(_column(want))}",
            )
    return len(printed), None


def _fact_identity() -> tuple[int, str | None]:
    """NO-OP is the identity of the monoid: NO-OP = I and NO-OP·X = X·NO-OP = X."""
    checked = 0
    for n in SIZES:
        I = _identity(n)
        if _dense(n, "NO-OP") != I:
            return checked, f"N = {n}: NO-OP is not the identity matrix"
        for name in BABY_NTM_OPS:
            X = _dense(n, name)
            if _mul(_dense(n, "NO-OP"), X) != X or _mul(X, _dense(n, "NO-OP")) != X:
                return checked, f"N = {n}: NO-OP·{name} or {name}·NO-OP differs from {name}"
            checked += 1
    return checked, None


def _fact_monoid() -> tuple[int, str | None]:
    """A left monoid action: (A·B)·M = A·(B·M) for every pair of ops and a memory M; every product
    of two ops is a 0/1 matrix with at most one 1 per row (so the ops and their products move,
    or drop, whole slots); the rotations are inverse to each other and ROTATE-RIGHT^N = I."""
    checked = 0
    for n in SIZES:
        M = _column(_ABCDE[:n])
        for A_name in BABY_NTM_OPS:
            for B_name in BABY_NTM_OPS:
                A, B = _dense(n, A_name), _dense(n, B_name)
                AB = _mul(A, B)
                if _mul(AB, M) != _mul(A, _mul(B, M)):
                    return checked, f"N = {n}: ({A_name}·{B_name})·M ≠ {A_name}·({B_name}·M)"
                for row in AB:
                    if any(v not in (0, 1) for v in row) or sum(row) > 1:
                        return (
                            checked,
                            f"N = {n}: {A_name}·{B_name} has the row {[str(v) for v in row]}",
                        )
                checked += 1
        RR, RL, I = _dense(n, "ROTATE-RIGHT"), _dense(n, "ROTATE-LEFT"), _identity(n)
        if _mul(RR, RL) != I or _mul(RL, RR) != I:
            return checked, f"N = {n}: ROTATE-RIGHT and ROTATE-LEFT are not inverse"
        P = I
        for _ in range(n):
            P = _mul(RR, P)
        if P != I:
            return checked, f"N = {n}: ROTATE-RIGHT^{n} ≠ I"
        checked += 2
    return checked, None


def _fact_pop_right() -> tuple[int, str | None]:
    """POP-RIGHT's actual effect: ROTATE-RIGHT with the wrapped slot zeroed, i.e. a push of 0 that
    drops the last slot (POP-RIGHT = ROTATE-RIGHT − e₀e_{N−1}ᵀ); POP-LEFT·POP-RIGHT = diag(1,…,1,0)
    (a push then a pop loses the last slot) and POP-RIGHT·POP-LEFT = diag(0,1,…,1)."""
    checked = 0
    for n in SIZES:
        RR, PR, PL = _dense(n, "ROTATE-RIGHT"), _dense(n, "POP-RIGHT"), _dense(n, "POP-LEFT")
        wrapped = tuple(
            tuple(RR[i][j] - Fraction(int(i == 0 and j == n - 1)) for j in range(n))
            for i in range(n)
        )
        if wrapped != PR:
            return checked, f"N = {n}: POP-RIGHT ≠ ROTATE-RIGHT − e₀e_{n - 1}ᵀ"
        if _mul(PL, PR) != _diag([1] * (n - 1) + [0]):
            return checked, f"N = {n}: POP-LEFT·POP-RIGHT ≠ diag(1, …, 1, 0)"
        if _mul(PR, PL) != _diag([0] + [1] * (n - 1)):
            return checked, f"N = {n}: POP-RIGHT·POP-LEFT ≠ diag(0, 1, …, 1)"
        checked += 3
    return checked, None


def _fact_pop_right_pops() -> tuple[int, str | None]:
    """The paper's name read literally: POP-RIGHT undoes a push (ROTATE-RIGHT, then 𝐌(0) += x),
    as POP-LEFT does."""
    n = 5
    before = [Fraction(v) for v in (2, 3, 5, 7, 0)]
    x = Fraction(13)
    pushed = [row[0] for row in _mul(_dense(n, "ROTATE-RIGHT"), _column(before))]
    pushed[0] += x
    for done, name in enumerate(("POP-LEFT", "POP-RIGHT")):
        after = _mul(_dense(n, name), _column(pushed))
        if after != _column(before):
            return done, (
                f"push 13 onto [2,3,5,7,0] gives {_show_column(_column(pushed))}; {name} then gives "
                f"{_show_column(after)}, not [2, 3, 5, 7, 0]: POP-RIGHT pushes a 0 and drops the last slot"
            )
    return 2, None


def memory_op_facts(variant: str) -> tuple[ExactFact, ...]:
    """The memory-operation claims of §3.3 (spec §5 S6) as exact matrix facts."""
    ref = "§3.3 (memory operations as matrices)"
    facts = [
        ExactFact(
            id="M1-printed",
            statement="the five Baby-NTM operations act on [a,b,c,d,e] as printed in §3.3",
            reference=ref,
            check=_fact_printed,
            cases="the five ops on [a,b,c,d,e] = [2,3,5,7,11]",
        ),
        ExactFact(
            id="M2-no-op-identity",
            statement="NO-OP is the identity: NO-OP = I and NO-OP·X = X·NO-OP = X for every op X (N ∈ {3, 5})",
            reference=ref,
            check=_fact_identity,
            cases="N ∈ {3, 5}, every op",
        ),
        ExactFact(
            id="M3-monoid-action",
            statement="the ops act as a left monoid action ((A·B)·M = A·(B·M)); every product of two ops is 0/1 with "
            "at most one 1 per row; ROTATE-LEFT = ROTATE-RIGHT⁻¹ and ROTATE-RIGHT^N = I (N ∈ {3, 5}; M = [2,3,5,7,11] cut to N)",
            reference=ref,
            check=_fact_monoid,
            cases="N ∈ {3, 5}, every ordered pair of ops",
        ),
        ExactFact(
            id="M4-pop-right-effect",
            statement="POP-RIGHT is a push of 0 that drops the last slot: POP-RIGHT = ROTATE-RIGHT − e₀e_{N−1}ᵀ, "
            "POP-LEFT·POP-RIGHT = diag(1,…,1,0), POP-RIGHT·POP-LEFT = diag(0,1,…,1) (N ∈ {3, 5})",
            reference=f"{ref}; spec §3.1 and §6 (POP-RIGHT is really a push)",
            check=_fact_pop_right,
            cases="N ∈ {3, 5}",
        ),
    ]
    if variant == "paper":
        facts.append(
            ExactFact(
                id="M5-pop-right-pops",
                statement="(paper, literal name) POP-RIGHT pops: it undoes a push, as POP-LEFT does",
                reference=f"{ref}, the operation's name",
                check=_fact_pop_right_pops,
                cases="a push of 13 onto [2,3,5,7,0], N = 5",
            )
        )
    return tuple(facts)


# --------------------------------------------------------------------------- claims


NEXT_BOUND = {"d2": 6, "d3": 4, "palindrome": 6, "homomorphic-palindrome": 4}
"""Default exhaustive bounds (every string up to this length; the spec verified 8, 6, 8, 6: see
the slow tests)."""
SOFT_BOUND = {"d2": 4, "d3": 3, "palindrome": 4, "homomorphic-palindrome": 3}


def _paper_target(task: SequenceTask) -> SequenceTask:
    """The paper's transduction formula (a/b/c/#)^{|w|} φ(w^R) read literally: no EOS, so after
    the last symbol of w#φ(w^R) nothing is predicted."""

    def next_sets(w: tuple[str, ...]) -> tuple[frozenset[str], ...]:
        return tuple(frozenset() if s == frozenset({EOS}) else s for s in task.next_sets(w))

    return SequenceTask(
        name=f"{task.name} (paper's formula, no EOS)",
        inputs=task.inputs,
        outputs=task.outputs,
        next_sets=next_sets,
        contains=task.contains,
        accepts=task.accepts,
        description=task.description,
    )


def _next_claims(kind: str, values: Mapping[str, Any]) -> list[Any]:
    task_name = values["task"]
    task = controller(task_name).task
    ref = "§4.1 (sequence prediction), §5; spec §3.3"
    claims: list[Any] = [
        PredictsNext(
            id="S1-next-sets" if task_name.startswith("d") else "S4-next-sets",
            statement=f"the {kind}'s predicted next-symbol sets equal the {task.name} targets after every nonempty prefix of every "
            "string (∅ after an invalid prefix), so it accepts exactly the members",
            reference=ref,
            task=task,
            min_len=1,
            max_len=NEXT_BOUND[task_name],
        )
    ]
    if values.get("variant") == "paper" and "palindrome" in task_name:
        claims.append(
            PredictsNext(
                id="S4-paper-no-eos",
                statement=f"(paper, literal) the {task.name} targets are (a/b/c/#)^{{|w|}} φ(w^R): nothing after the last symbol",
                reference="§5.3, the transduction formula",
                task=_paper_target(task),
                min_len=1,
                max_len=NEXT_BOUND[task_name],
            )
        )
    return claims


def _soft_claim(
    kind: str, values: Mapping[str, Any], build: Callable[..., RecurrentNetwork]
) -> SoftAgrees:
    K = values["scale"]
    task_name = values["task"]
    return SoftAgrees(
        id="S5-soft-agrees",
        statement=f"the soft {kind} (tanh, logistic σ, softmax(K·); weights scaled by K = {K}) predicts exactly the sets "
        "of the exact one after every nonempty prefix of every string",
        reference="spec §3.3 (soft bridge; K >= 6 found sufficient)",
        soft=build(task=task_name, scale=K),
        scale_text=f"K = {K}",
        min_len=1,
        max_len=SOFT_BOUND[task_name],
    )


TASK_PARAM = Param(
    name="task",
    default="d2",
    parse=str,
    choices=TASKS,
    help="d2, d3 (Dyck with 2 or 3 bracket types), palindrome (w#w^R), homomorphic-palindrome (w#φ(w^R))",
)
MAX_SCALE = 10**6
"""The largest K taken: the soft cells saturate long before it (the spec found K >= 6 enough), and
a K of about 10^100 overflows the rigorous interval arithmetic of the soft claim (S5)."""


def _parse_scale(raw: str) -> int:
    k = parse_int("scale", minimum=1)(raw)
    if k > MAX_SCALE:
        raise ValueError(
            f"scale={k} is over the limit scale <= {MAX_SCALE:,}: tanh, σ and softmax of K·x are saturated "
            f"long before (K >= 6 suffices), and a K near 10^100 overflows the interval check; "
            f"give scale <= {MAX_SCALE}"
        )
    return k


SCALE_PARAM = Param(
    name="scale",
    default="6",
    parse=_parse_scale,
    help="K of the soft version (tanh/sigmoid/softmax with weights scaled by K); the spec found K >= 6 sufficient",
)
MAX_SLOTS = 10_000
"""The largest N taken: every step reads and writes all N slots (the paper's N is 104)."""


def _parse_slots(raw: str) -> int:
    n = parse_int("slots", minimum=1)(raw)
    if n > MAX_SLOTS:
        raise ValueError(
            f"slots={n} is over the limit slots <= {MAX_SLOTS:,}: every step reads and writes all N "
            f"slots (the paper uses 104); give slots <= {MAX_SLOTS}"
        )
    return n


SLOTS_PARAM = Param(
    name="slots",
    default="104",
    parse=_parse_slots,
    help="N, the number of memory slots (the paper's 104); correct while the depth stays below N",
)


def appendix_a_identity() -> Identity:
    """Appendix A: W_hh h̃ = W_hh h + (W_hh W_sh) s(0), the step that makes the Stack-RNN "almost
    equivalent" to Joulin & Mikolov's, as a sympy identity in symbolic matrices (H = 3, M = 2),
    contracted with a symbolic row vector u so that it is one scalar identity for all u."""
    import sympy

    W_hh = sympy.Matrix(3, 3, lambda i, j: sympy.Symbol(f"Whh_{i}{j}"))
    W_sh = sympy.Matrix(3, 2, lambda i, j: sympy.Symbol(f"Wsh_{i}{j}"))
    h = sympy.Matrix(3, 1, lambda i, _j: sympy.Symbol(f"h_{i}"))
    s = sympy.Matrix(2, 1, lambda i, _j: sympy.Symbol(f"s_{i}"))
    u = sympy.Matrix(1, 3, lambda _i, j: sympy.Symbol(f"u_{j}"))
    lhs = (u * (W_hh * (h + W_sh * s)))[0, 0]
    rhs = (u * (W_hh * h + (W_hh * W_sh) * s))[0, 0]
    return Identity(
        id="S7-appendix-a",
        statement="Appendix A: W_hh h̃ = W_hh h + (W_hh W_sh) s(0) with h̃ = h + W_sh s(0) (symbolic H = 3, M = 2)",
        reference="Appendix A",
        lhs=lhs,
        rhs=rhs,
    )


def _stack_rnn_claims(values: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        *_next_claims("Stack-RNN", values),
        _soft_claim("Stack-RNN", values, stack_rnn),
        appendix_a_identity(),
    )


def _baby_ntm_claims(values: Mapping[str, Any]) -> tuple[Any, ...]:
    def soft(*, task: str, scale: int) -> RecurrentNetwork:
        return baby_ntm(task=task, slots=values["slots"], scale=scale)

    return (
        *_next_claims("Baby-NTM", values),
        _soft_claim("Baby-NTM", values, soft),
        *memory_op_facts(values["variant"]),
    )


CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        name="stack-rnn",
        paper_id=f"{PAPER}.stack_rnn",
        title="Stack-RNN with hand-set exact weights for D2, D3, w#w^R, w#φ(w^R) (and its soft version)",
        reference="Suzgun et al. 2019, §3.1",
        params=(TASK_PARAM, SCALE_PARAM),
        build=lambda values: stack_rnn(task=values["task"]),
        claims=_stack_rnn_claims,
    ),
    Construction(
        name="baby-ntm",
        paper_id=f"{PAPER}.baby_ntm",
        title="Baby-NTM with hand-set exact weights (ROTATE-RIGHT pushes, POP-LEFT pops) and its memory operations",
        reference="Suzgun et al. 2019, §3.3",
        params=(TASK_PARAM, SLOTS_PARAM, SCALE_PARAM, VARIANT),
        build=lambda values: baby_ntm(task=values["task"], slots=values["slots"]),
        claims=_baby_ntm_claims,
    ),
    Construction(
        name="stack-lstm",
        paper_id=f"{PAPER}.stack_lstm",
        title="Stack-LSTM with constant gates carrying the Stack-RNN's weights",
        reference="Suzgun et al. 2019, §3.2",
        params=(TASK_PARAM,),
        build=lambda values: stack_lstm(task=values["task"]),
        claims=lambda values: tuple(_next_claims("Stack-LSTM", values)),
    ),
)
