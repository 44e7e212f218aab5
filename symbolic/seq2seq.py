"""Exact (and sympy) evaluation of an encoder–decoder transformer (:class:`netproof.symbolic.ir.Seq2Seq`).

The decoder feeds its output back (Bhattamishra, Patel & Goyal 2020, §3.2, eqs. 5–7):
ỹ_{t+1} = F(z_t), y_{t+1} = ỹ_{t+1} + pos_dec(t+1), until y_t is in the halting set. Every
block is evaluated by the shared loop of :mod:`netproof.symbolic.evaluation` (its Affine, FFN, attention
head and residual semantics, in the same :class:`~netproof.symbolic.evaluation.Arithmetic`), so the exact
and the sympy interpreters agree by construction. Decoder self-attention is causal and sees the
step itself; earlier steps never change, so each layer's inputs of earlier steps are kept and
only the new step is computed.

A decoder that counts to 3 (its FFN adds 1 to ``c``; F copies ``c``; it halts when c = 3):

>>> from netproof.symbolic import AttentionLayer, DecoderLayer, Halting, Seq2Seq, Sublayer, affine, ffn, token_embedding
>>> nothing = lambda name: Sublayer(block=AttentionLayer(name=name, heads=()))
>>> layer = DecoderLayer(name="dec", self_attention=nothing("self"), cross_attention=nothing("cross"),
...                      ffn=Sublayer(block=ffn("count", affine({"c": {}}, inputs=("c",), bias={"c": 1}))))
>>> net = Seq2Seq(name="counter", dims=("c",), embedding=token_embedding(("a",), {"a": {}}), encoder=(),
...               decoder=(layer,), output=affine({"c": {"c": 1}}), seed=(),
...               halting=Halting(unit=affine({"halt": {"c": 1}}), value=Fraction(3)))
>>> trace = run(net, "a")
>>> trace.halted_at, [trace.value(t, "c") for t in range(4)]
(3, [Fraction(0, 1), Fraction(1, 1), Fraction(2, 1), Fraction(3, 1)])

The constructions of Bhattamishra et al. are in :mod:`netproof.constructions.bhattamishra2020`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, Literal, TypeVar

from .errors import WordError
from .evaluation import Arithmetic, Evaluator, Selection, State, frozen_rows
from .ir import Seq2Seq
from .positional import feature
from .words import tokenize

V = TypeVar("V")

DEFAULT_MAX_STEPS = 10_000


@dataclass(frozen=True, slots=True)
class DecoderStep(Generic[V]):
    """Decoder step t: ``states`` are y_t (label ``y``), then the rows after each decoder
    sublayer (labelled by the sublayer's name), then ỹ_{t+1} = F(z_t) (label ``F``) unless the
    run stopped at t; ``selections`` are the attention selections of step t (``position`` = t)."""

    t: int
    states: tuple[State[V], ...]
    selections: tuple[Selection[V], ...]
    halts: bool

    def state(self, label: str) -> State[V]:
        for s in self.states:
            if s.label == label:
                return s
        raise KeyError(
            f"step {self.t} has no state {label!r}; states: {', '.join(s.label for s in self.states)}"
        )


@dataclass(frozen=True, slots=True)
class Seq2SeqTrace(Generic[V]):
    """Everything a run computed: the encoder's states and selections, and every decoder step.
    ``halted_at`` is the first t with y_t in the halting set, or None when the run stopped after
    ``max_steps`` steps without halting."""

    backend: str
    network: Seq2Seq
    word: tuple[str, ...]
    tokens: tuple[str, ...]
    positions: tuple[int, ...]
    encoder: tuple[State[V], ...]
    encoder_selections: tuple[Selection[V], ...]
    steps: tuple[DecoderStep[V], ...]
    halted_at: int | None

    @property
    def n(self) -> int:
        """The number of encoder tokens (special tokens included)."""
        return len(self.tokens)

    def y(self, t: int) -> dict[str, V]:
        """y_t by dim name."""
        row = self.steps[t].states[0].rows[0]
        return dict(zip(self.network.dims, row, strict=True))

    def value(self, t: int, dim: str, label: str = "y") -> V:
        """Dim ``dim`` at decoder step ``t`` after the step named ``label`` (default y_t)."""
        try:
            d = self.network.dims.index(dim)
        except ValueError:
            raise KeyError(f"no dim {dim!r}; dims: {' '.join(self.network.dims)}") from None
        return self.steps[t].state(label).rows[0][d]


def evaluate(
    net: Seq2Seq,
    word: str | Sequence[str],
    arith: Arithmetic[V],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Seq2SeqTrace[V]:
    """Run ``net`` on ``word`` in ``arith`` until it halts or ``max_steps`` decoder steps ran
    (y_0 .. y_{max_steps} are computed)."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise WordError(f"max_steps={max_steps!r} must be an int >= 0")
    ev: Evaluator[V] = Evaluator(net, arith)  # type: ignore[arg-type]
    ar = arith
    symbols = tokenize(net.alphabet, word)
    emb = net.embedding
    dims = net.dims
    tokens = (*emb.prefix, *symbols, *emb.suffix)
    n = len(tokens)
    ev.length_n = n
    positions = tuple(range(emb.index_base, emb.index_base + n))
    table = dict(emb.table)
    rows: list[dict[str, V]] = []
    for t, token in enumerate(tokens):
        row = dict.fromkeys(dims, ev.zero)
        for d, v in table[token]:
            row[d] = ar.add(row[d], ev.c(v))
        for d, feat, coef in emb.positional:
            row[d] = ar.add(row[d], ev.c(coef * feature(feat)(positions[t], n)))
        rows.append(row)
    enc_states: list[State[V]] = [State("input", frozen_rows(rows, dims))]
    enc_sel: list[Selection[V]] = []
    for sub in net.encoder:
        rows = ev.sublayer(sub, rows, n, positions, enc_sel)
        enc_states.append(State(sub.name, frozen_rows(rows, dims)))
    memory = rows

    def add_positional(row: dict[str, V], t: int) -> dict[str, V]:
        out = dict(row)
        for d, feat, coef in net.decoder_positional:
            out[d] = ar.add(out[d], ev.c(coef * feature(feat)(t, n)))
        return out

    halt_name = net.halting.unit.outputs[0]
    halt_value = ev.c(net.halting.value)
    seed = dict.fromkeys(dims, ev.zero)
    for d, v in net.seed:
        seed[d] = ar.add(seed[d], ev.c(v))
    y = add_positional(seed, 0)
    cache: list[list[dict[str, V]]] = [[] for _ in net.decoder]  # each layer's inputs so far
    steps: list[DecoderStep[V]] = []
    halted_at: int | None = None
    for t in range(max_steps + 1):
        states: list[State[V]] = [State("y", frozen_rows([y], dims))]
        selections: list[Selection[V]] = []
        halts = ar.is_zero(ar.sub(ev.affine(net.halting.unit, y)[halt_name], halt_value))
        if halts or t == max_steps:
            steps.append(DecoderStep(t, tuple(states), (), halts))
            if halts:
                halted_at = t
            break
        x = y
        for idx, layer in enumerate(net.decoder):
            cache[idx].append(x)
            sa = layer.self_attention
            out = ev.attend(sa.block, x, t, cache[idx], selections)  # type: ignore[arg-type]
            x = ev._combine(sa, x, out, t)
            states.append(State(sa.name, frozen_rows([x], dims)))
            ca = layer.cross_attention
            out = ev.attend(ca.block, x, t, memory, selections)  # type: ignore[arg-type]
            x = ev._combine(ca, x, out, t)
            states.append(State(ca.name, frozen_rows([x], dims)))
            ff = layer.ffn
            out = ev.ffn(ff.block, [x], [t])[0]  # type: ignore[arg-type]
            x = ev._combine(ff, x, out, t)
            states.append(State(ff.name, frozen_rows([x], dims)))
        y_tilde = dict.fromkeys(dims, ev.zero)
        y_tilde.update(ev.affine(net.output, x))
        states.append(State("F", frozen_rows([y_tilde], dims)))
        steps.append(DecoderStep(t, tuple(states), tuple(selections), False))
        y = add_positional(y_tilde, t + 1)
    return Seq2SeqTrace(
        backend=ar.name,
        network=net,
        word=symbols,
        tokens=tokens,
        positions=positions,
        encoder=tuple(enc_states),
        encoder_selections=tuple(enc_sel),
        steps=tuple(steps),
        halted_at=halted_at,
    )


def run(
    net: Seq2Seq,
    word: str | Sequence[str],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    backend: Literal["exact", "sympy"] = "exact",
) -> Seq2SeqTrace[Fraction]:
    """Evaluate ``net`` on ``word`` exactly (``backend="exact"``: Fractions) or with sympy."""
    if backend == "exact":
        from .exact import FractionArithmetic

        return evaluate(net, word, FractionArithmetic(), max_steps=max_steps)
    if backend == "sympy":
        from .sympy_interp import SympyArithmetic

        return evaluate(net, word, SympyArithmetic(), max_steps=max_steps)
    raise WordError(f"backend={backend!r}: the encoder–decoder runs with exact or sympy")
