"""Canonical printed form of whole networks and the network fingerprint (sha256 of that form).

One block per line (jaxpr-like), rationals as ``p/q``, zero weights left out. The form is
deterministic, so its sha256 identifies a network in proof logs. The lines of one block,
embedding, readout or decoder layer come from :mod:`netproof.symbolic.block_printing`; a whole
network's and encoder–decoder's from :func:`netproof.symbolic.ir.network_lines` and
:func:`netproof.symbolic.ir.seq2seq_lines` (validation errors and notebooks show them). This module prints transformers, encoder–decoders and recurrent networks: it imports
:mod:`netproof.symbolic.ir`, :mod:`netproof.symbolic.recurrent_ir` and the block printing.
"""

from __future__ import annotations

import hashlib
from typing import assert_never

from .block_printing import (
    affine_lines,
    normalizer_text,
    rational_text,
)
from .ir import Affine, Hardmax, Network, Seq2Seq, Softmax, network_lines, seq2seq_lines
from .recurrent_ir import (
    BabyNTM,
    Cell,
    Decision,
    GumbelSoftmax,
    JoulinMikolovRNN,
    RecurrentNetwork,
    StackLSTM,
    StackRNN,
    TemperatureSoftmax,
)


def decision_text(d: Decision) -> str:
    """A recurrent cell's decision normalizer: hardmax, softmax, softmax-temp or gumbel-softmax."""
    match d:
        case Hardmax() | Softmax():
            return normalizer_text(d)
        case TemperatureSoftmax(tau=tau):
            return f"softmax-temp(tau={tau})"
        case GumbelSoftmax(tau=tau, seed=seed):
            return f"gumbel-softmax(tau={tau}, seed={seed})"
        case _:
            assert_never(d)


def _maps(cell_maps: list[tuple[str, Affine]]) -> list[str]:
    return [f"  {name}.{x}" for name, a in cell_maps for x in affine_lines(a)]


def cell_lines(cell: Cell) -> list[str]:
    """The recurrent cell: its kind, fields and every map."""
    head = (
        f"inputs: {' '.join(cell.inputs)}",
        f"hidden: {' '.join(cell.hidden)}",
        f"element: {' '.join(cell.element)}",
    )
    match cell:
        case StackRNN():
            lines = [
                f"cell stack-rnn activation={cell.activation} gate={cell.gate} decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"
            ]
            maps = [
                ("W_ih", cell.W_ih),
                ("W_hh", cell.W_hh),
                ("W_sh", cell.W_sh),
                ("W_a", cell.W_a),
                ("W_n", cell.W_n),
            ]
        case StackLSTM():
            lines = [
                f"cell stack-lstm activation={cell.activation} gate={cell.gate} decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"
            ]
            maps = [
                ("W_i", cell.W_i),
                ("W_f", cell.W_f),
                ("W_o", cell.W_o),
                ("W_g", cell.W_g),
                ("W_sh", cell.W_sh),
                ("W_a", cell.W_a),
                ("W_n", cell.W_n),
            ]
        case BabyNTM():
            lines = [
                (
                    f"cell baby-ntm slots={cell.slots} activation={cell.activation} gate={cell.gate} "
                    f"decision={decision_text(cell.decision)} ops={' '.join(cell.op_names)}"
                )
            ]
            for op in cell.ops:
                entries = " ".join(f"({i},{j})={rational_text(v)}" for i, j, v in op.entries) or "0"
                lines.append(f"  op {op.name}: {entries}")
            maps = [
                ("W_ih", cell.W_ih),
                ("W_hh", cell.W_hh),
                ("W_m", cell.W_m),
                ("W_a", cell.W_a),
                ("W_n", cell.W_n),
            ]
        case JoulinMikolovRNN():
            lines = [
                (
                    f"cell joulin-mikolov top={cell.top} activation={cell.activation} gate={cell.gate} "
                    f"decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"
                )
            ]
            maps = [
                ("W_ih", cell.W_ih),
                ("W_hh", cell.W_hh),
                ("W_sh", cell.W_sh),
                ("W_a", cell.W_a),
                ("W_n", cell.W_n),
            ]
        case _:
            assert_never(cell)
    return lines + [f"  {x}" for x in head] + _maps(maps)


def pretty_recurrent(net: RecurrentNetwork) -> str:
    """The canonical printed form of a recurrent network."""
    lines = [f"recurrent network {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append(f"  input symbols: {' '.join(net.alphabet)}")
    for symbol, row in net.embedding:
        entries = " ".join(f"{d}={rational_text(v)}" for d, v in row if v != 0) or "0"
        lines.append(f"  embed {symbol}: {entries}")
    if net.initial:
        lines.append("  h0: " + " ".join(f"{d}={rational_text(v)}" for d, v in net.initial))
    lines += [f"  {x}" for x in cell_lines(net.cell)]
    r = net.readout
    lines.append(
        f"  readout k-hot activation={r.activation}: symbol predicted iff y > {r.threshold}: {' '.join(r.symbols)}"
    )
    lines += [f"    W_y.{x}" for x in affine_lines(r.W_y)]
    return "\n".join(lines) + "\n"


def pretty(net: Network | RecurrentNetwork | Seq2Seq) -> str:
    """The canonical printed form of ``net``."""
    if isinstance(net, RecurrentNetwork):
        return pretty_recurrent(net)
    if isinstance(net, Seq2Seq):
        return "\n".join(seq2seq_lines(net)) + "\n"
    return "\n".join(network_lines(net)) + "\n"


def fingerprint(net: Network | RecurrentNetwork | Seq2Seq) -> str:
    """sha256 of the canonical printed form."""
    return hashlib.sha256(pretty(net).encode("utf-8")).hexdigest()
