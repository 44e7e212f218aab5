"""Recurrent network files: a memory-augmented RNN of the IR (:mod:`netproof.symbolic.recurrent_ir`,
Suzgun et al. 2019's Stack-RNN, Stack-LSTM and Baby-NTM) as a versioned, deterministic JSON
document, for readers outside netproof (the independent kernel, :mod:`netproof.kernel`, reads it
with its own reader and interpreter; netproof itself rebuilds the network from its construction).

Top level::

    {
      "extra": {...},                 optional: free JSON (construction name, params, claims)
      "fingerprint": "<sha256 hex>",  of symbolic.printing.pretty(network), as proof records name it
      "format": "netproof-recurrent",
      "format_version": 1,
      "network": {
        "name": "stack-rnn-d2",
        "alphabet": ["(", ")", "[", "]"],              the input symbols, in order
        "embedding": [["(", [["x:(", "1"]]], ...],     each symbol's row x_t: its nonzero inputs
        "initial": [["unit", "q"], ...],               the nonzero entries of h_0 (c_0, memory: 0)
        "cell": {
          "kind": "stack-rnn" | "stack-lstm" | "baby-ntm",
          "inputs": [...], "hidden": [...], "element": [...],   the names of x, h and of one
                                                               stack element or memory slot
          "activation": "sigma", "gate": "sigma",             or "tanh" / "logistic"
          "decision": {"type": "Hardmax", "tie": "average"},  or a softmax-family object
          "ops": [{"name": "PUSH", "entries": []}, {"name": "POP", "entries": []}],
          "slots": null,
          "maps": {"W_ih": Affine, "W_hh": Affine, "W_sh": Affine, "W_a": Affine, "W_n": Affine}
        },
        "readout": {"symbols": [...], "W_y": Affine, "activation": "sigma", "threshold": "1/2"}
      }
    }

The cell's equations are the IR's (:class:`~netproof.symbolic.recurrent_ir.StackRNN` and the
others: §3.1–3.3 of the paper). Its maps, by kind: ``stack-rnn`` W_ih (bias b_ih + b_hh), W_hh,
W_sh, W_a, W_n; ``stack-lstm`` W_i, W_f, W_o, W_g (each reads the inputs and the hidden names:
[x_t, h̃]), W_sh, W_a, W_n; ``baby-ntm`` W_ih, W_hh, W_m, W_a, W_n. W_a writes one score per op,
named like the ops. A stack's ops are PUSH and POP with no entries (the stack is unbounded,
``slots`` null); a Baby-NTM's ops are its ``slots`` × ``slots`` matrices on the slot index,
``entries`` the nonzero ``[i, j, "v"]`` (new slot i gets v·old slot j), in the paper's order.
The readout's W_y writes ``y:<symbol>`` per readout symbol; symbol s is predicted next iff
σ(W_y h_t)[y:s] > ``threshold``.

Every rational is a string ``"p/q"`` or an integer such as ``"-3"``, never a JSON float. An
Affine is written as in network files (``symbolic/netfile.py``): ``inputs`` and ``outputs`` in
order, ``weights`` as ``{output: {input: w}}`` and ``bias`` as ``{output: b}``, zeros left out.
Keys are sorted, indentation is 2 spaces, the text ends with a newline. Joulin & Mikolov's cell
has no file format (netproof checks none of its claims exhaustively).

>>> from netproof.constructions.suzgun2019 import stack_rnn
>>> text = dumps(stack_rnn(task="d2"))
>>> import json; doc = json.loads(text)
>>> doc["format"], doc["network"]["cell"]["kind"], doc["network"]["cell"]["maps"]["W_a"]["outputs"]
('netproof-recurrent', 'stack-rnn', ['PUSH', 'POP'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from .blocks import Affine
from .errors import NetworkValidationError
from .printing import fingerprint
from .recurrent_ir import BabyNTM, RecurrentNetwork, StackLSTM, StackRNN

__all__ = ["FORMAT", "FORMAT_VERSION", "dumps", "to_json"]

FORMAT = "netproof-recurrent"
FORMAT_VERSION = 1
KINDS = {StackRNN: "stack-rnn", StackLSTM: "stack-lstm", BabyNTM: "baby-ntm"}
MAPS = {
    "stack-rnn": ("W_ih", "W_hh", "W_sh", "W_a", "W_n"),
    "stack-lstm": ("W_i", "W_f", "W_o", "W_g", "W_sh", "W_a", "W_n"),
    "baby-ntm": ("W_ih", "W_hh", "W_m", "W_a", "W_n"),
}


def _affine(a: Affine) -> dict[str, Any]:
    weights = {
        o: {i: str(w) for i, w in zip(a.inputs, row, strict=True) if w != 0}
        for o, row in zip(a.outputs, a.weights, strict=True)
    }
    return {
        "type": "Affine",
        "inputs": list(a.inputs),
        "outputs": list(a.outputs),
        "weights": {o: row for o, row in weights.items() if row},
        "bias": {o: str(b) for o, b in zip(a.outputs, a.bias, strict=True) if b != 0},
    }


def to_json(net: RecurrentNetwork, *, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The recurrent network file of ``net`` as JSON data; ``extra`` stored verbatim."""
    cell = net.cell
    kind = KINDS.get(type(cell))
    if kind is None:
        raise NetworkValidationError(
            f"{net.name!r} has a {type(cell).__name__} cell; recurrent network files hold "
            f"{', '.join(KINDS.values())} cells only"
        )
    if isinstance(cell, BabyNTM):
        ops = [
            {"name": op.name, "entries": [[i, j, str(v)] for i, j, v in op.entries]}
            for op in cell.ops
        ]
    else:
        ops = [{"name": op, "entries": []} for op in cell.ops]
    decision = {"type": type(cell.decision).__name__}
    decision |= {f.name: str(getattr(cell.decision, f.name)) for f in fields(cell.decision)}
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fingerprint": fingerprint(net),
        "network": {
            "name": net.name,
            "alphabet": list(net.alphabet),
            "embedding": [[s, [[d, str(v)] for d, v in row if v != 0]] for s, row in net.embedding],
            "initial": [[d, str(v)] for d, v in net.initial if v != 0],
            "cell": {
                "kind": kind,
                "inputs": list(cell.inputs),
                "hidden": list(cell.hidden),
                "element": list(cell.element),
                "activation": cell.activation,
                "gate": cell.gate,
                "decision": decision,
                "ops": ops,
                "slots": cell.slots if isinstance(cell, BabyNTM) else None,
                "maps": {m: _affine(getattr(cell, m)) for m in MAPS[kind]},
            },
            "readout": {
                "symbols": list(net.readout.symbols),
                "W_y": _affine(net.readout.W_y),
                "activation": net.readout.activation,
                "threshold": str(net.readout.threshold),
            },
        },
    }
    if extra is not None:
        doc["extra"] = json.loads(json.dumps(extra))
    return doc


def dumps(net: RecurrentNetwork, *, extra: Mapping[str, Any] | None = None) -> str:
    """The recurrent network file of ``net`` as text (keys sorted, 2-space indentation)."""
    return (
        json.dumps(to_json(net, extra=extra), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
