"""The network file writer: a :class:`~netproof.symbolic.ir.Network` (or an encoder–decoder,
:class:`~netproof.symbolic.ir.Seq2Seq`, format ``netproof-seq2seq``) as deterministic JSON.

Owns :func:`to_json`, :func:`dumps` and :func:`dump_file` (the format is described in
:mod:`netproof.symbolic.netfile`, which re-exports them): keys sorted, arrays in order, 2-space
indentation, a value that fits in :data:`WIDTH` columns on one line, a final newline, the
network's fingerprint beside it. It imports the IR, the printed form (for the fingerprint) and
:mod:`netproof.symbolic.netfile_format`; never the reader.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, assert_never

from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FFNStep,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    RelativeKernel,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .netfile_format import (
    FORMAT,
    FORMAT_VERSION,
    JSON,
    RELATIVE_KERNELS,
    SEQ2SEQ_FORMAT,
    NetworkFileError,
    index_path,
    key_path,
)
from .printing import fingerprint
from .recurrent_ir import RecurrentNetwork

__all__ = ["WIDTH", "dump_file", "dumps", "to_json"]

WIDTH = 100
"""A JSON value that fits in this many columns (indentation and key included) is written on
one line."""


def _affine_json(a: Affine) -> dict[str, JSON]:
    weights: dict[str, dict[str, str]] = {}
    for out, row in zip(a.outputs, a.weights, strict=True):
        entries = {name: str(w) for name, w in zip(a.inputs, row, strict=True) if w != 0}
        if entries:
            weights[out] = entries
    return {
        "type": "Affine",
        "inputs": list(a.inputs),
        "outputs": list(a.outputs),
        "weights": weights,
        "bias": {out: str(b) for out, b in zip(a.outputs, a.bias, strict=True) if b != 0},
    }


def _layernorm_json(ln: LayerNorm) -> dict[str, JSON]:
    return {
        "type": "LayerNorm",
        "eps": str(ln.eps),
        "over": None if ln.over is None else list(ln.over),
    }


def _softmax_json(s: Softmax) -> dict[str, JSON]:
    return {
        "type": "Softmax",
        "r": None if s.r is None else str(s.r),
        "c": None if s.c is None else str(s.c),
        "symbol": s.symbol,
    }


def _normalizer_json(nz: Hardmax | Softmax) -> dict[str, JSON]:
    match nz:
        case Hardmax():
            return {"type": "Hardmax", "tie": nz.tie}
        case Softmax():
            return _softmax_json(nz)
        case _:
            assert_never(nz)


def _step_json(step: FFNStep) -> dict[str, JSON]:
    match step:
        case Affine():
            return _affine_json(step)
        case Activation():
            return {"type": "Activation", "kind": step.kind}
        case LayerNorm():
            return _layernorm_json(step)
        case _:
            assert_never(step)


def _head_json(h: Head) -> dict[str, JSON]:
    s = h.scale
    return {
        "type": "Head",
        "name": h.name,
        "query": _affine_json(h.query),
        "key": _affine_json(h.key),
        "value": _affine_json(h.value),
        "normalizer": _normalizer_json(h.normalizer),
        "scoring": h.scoring,
        "scale": {
            "type": "Scale",
            "coef": str(s.coef),
            "sqrt_d": s.sqrt_d,
            "log_n": s.log_n,
            "times_n": s.times_n,
        },
        "mask": h.mask,
        "empty": h.empty,
        **_relative_json(h),
    }


def _relative_json(h: Head) -> dict[str, JSON]:
    """The relative-position fields of a head, written only when set (a head without them is
    written exactly as before they existed)."""
    out: dict[str, JSON] = {}
    if h.relative_bias is not None:
        b = h.relative_bias
        out["relative_bias"] = {
            "type": "RelativeBias",
            "beta": [str(x) for x in b.beta],
            "outside": b.outside,
        }
    for name in RELATIVE_KERNELS:
        w: RelativeKernel | None = getattr(h, name)
        if w is not None:
            out[name] = {
                "type": "RelativeKernel",
                "columns": [[str(x) for x in col] for col in w.columns],
                "outside": w.outside,
            }
    return out


def _sublayer_json(sub: Sublayer) -> dict[str, JSON]:
    block = sub.block
    match block:
        case AttentionLayer():
            block_json: dict[str, JSON] = {
                "type": "AttentionLayer",
                "name": block.name,
                "heads": [_head_json(h) for h in block.heads],
                "output": None if block.output is None else _affine_json(block.output),
            }
        case FFN():
            block_json = {
                "type": "FFN",
                "name": block.name,
                "steps": [_step_json(s) for s in block.steps],
            }
        case Convolution():
            block_json = {
                "type": "Convolution",
                "name": block.name,
                "inputs": list(block.inputs),
                "outputs": list(block.outputs),
                "kernels": [[str(x) for x in row] for row in block.kernels],
                "normalizer": None if block.normalizer is None else _softmax_json(block.normalizer),
            }
        case _:
            assert_never(block)
    return {
        "type": "Sublayer",
        "block": block_json,
        "residual": sub.residual,
        "post_ln": None if sub.post_ln is None else _layernorm_json(sub.post_ln),
    }


def _embedding_json(emb: TokenEmbedding | FlatEmbedding) -> dict[str, JSON]:
    match emb:
        case TokenEmbedding():
            return {
                "type": "TokenEmbedding",
                "alphabet": list(emb.alphabet),
                "table": [[token, [[dim, str(v)] for dim, v in row]] for token, row in emb.table],
                "positional": [[dim, feat, str(coef)] for dim, feat, coef in emb.positional],
                "prefix": list(emb.prefix),
                "suffix": list(emb.suffix),
                "index_base": emb.index_base,
            }
        case FlatEmbedding():
            return {
                "type": "FlatEmbedding",
                "alphabet": list(emb.alphabet),
                "length": emb.length,
                "values": [[symbol, str(v)] for symbol, v in emb.values],
                "prefix": emb.prefix,
            }
        case _:
            assert_never(emb)


def _readout_json(r: Classifier | NextSymbols) -> dict[str, JSON]:
    match r:
        case Classifier():
            return {
                "type": "Classifier",
                "logit": _affine_json(r.logit),
                "position": r.position,
                "accept": r.accept,
            }
        case NextSymbols():
            return {
                "type": "NextSymbols",
                "scores": [[symbol, dim] for symbol, dim in r.scores],
                "threshold": str(r.threshold),
                "softmax": None if r.softmax is None else _softmax_json(r.softmax),
                "end": r.end,
            }
        case _:
            assert_never(r)


def _network_json(net: Network) -> dict[str, JSON]:
    return {
        "type": "Network",
        "name": net.name,
        "dims": list(net.dims),
        "embedding": _embedding_json(net.embedding),
        "layers": [_sublayer_json(sub) for sub in net.layers],
        "readout": _readout_json(net.readout),
        "params": [[k, v] for k, v in net.params],
        "reference": net.reference,
    }


def _seq2seq_json(net: Seq2Seq) -> dict[str, JSON]:
    """An encoder–decoder (format ``netproof-seq2seq``, described in :mod:`netproof.symbolic.netfile`)."""
    return {
        "type": "Seq2Seq",
        "name": net.name,
        "dims": list(net.dims),
        "embedding": _embedding_json(net.embedding),
        "encoder": [_sublayer_json(sub) for sub in net.encoder],
        "decoder": [
            {
                "type": "DecoderLayer",
                "name": layer.name,
                "self_attention": _sublayer_json(layer.self_attention),
                "cross_attention": _sublayer_json(layer.cross_attention),
                "ffn": _sublayer_json(layer.ffn),
            }
            for layer in net.decoder
        ],
        "output": _affine_json(net.output),
        "seed": [[dim, str(v)] for dim, v in net.seed],
        "halting": {
            "type": "Halting",
            "unit": _affine_json(net.halting.unit),
            "value": str(net.halting.value),
        },
        "decoder_positional": [[d, feat, str(coef)] for d, feat, coef in net.decoder_positional],
        "params": [[k, v] for k, v in net.params],
        "reference": net.reference,
    }


def _plain(value: object, path: str) -> JSON:
    """A copy of ``value`` made of JSON values only (tuples become arrays), or an error."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NetworkFileError(path, f"{value!r} is not a JSON number; store it as a string")
        return value
    if isinstance(value, Mapping):
        out: dict[str, JSON] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise NetworkFileError(
                    path, f"key {k!r} is a {type(k).__name__}; JSON object keys are strings"
                )
            out[k] = _plain(v, key_path(path, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, index_path(path, i)) for i, v in enumerate(value)]
    hint = (
        f"; write str(value) = {str(value)!r}"
        if isinstance(value, Fraction)
        else "; convert it to a string"
    )
    raise NetworkFileError(path, f"{value!r} is a {type(value).__name__}, not a JSON value{hint}")


def to_json(net: Network | Seq2Seq, *, extra: Mapping[str, Any] | None = None) -> dict[str, JSON]:
    """The network file of ``net`` as JSON data (dicts, lists, strings, ints, bools, None).

    ``extra`` is stored verbatim (as JSON: tuples become arrays); it must hold JSON values only.
    """
    if isinstance(net, RecurrentNetwork):
        raise NetworkFileError(
            "network",
            f"{net.name!r} is a RecurrentNetwork ({type(net.cell).__name__}); network files hold transformer-style "
            "Networks only (format version 1): print it with symbolic.pretty instead",
        )
    seq = isinstance(net, Seq2Seq)
    obj: dict[str, JSON] = {
        "format": SEQ2SEQ_FORMAT if seq else FORMAT,
        "format_version": FORMAT_VERSION,
        "fingerprint": fingerprint(net),
        "network": _seq2seq_json(net) if isinstance(net, Seq2Seq) else _network_json(net),
    }
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise NetworkFileError(
                "extra", f"is a {type(extra).__name__}; pass a mapping (a JSON object)"
            )
        obj["extra"] = _plain(extra, "extra")
    return obj


def _compact(value: JSON) -> str:
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "), allow_nan=False
    )


def _render(value: JSON, indent: int, lead: int) -> str:
    """``value`` on one line if it fits in :data:`WIDTH` columns (after ``lead`` characters of
    indentation and key), else one member per line."""
    one = _compact(value)
    if not isinstance(value, (dict, list)) or not value or lead + len(one) + 1 <= WIDTH:
        return one
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        members = []
        for k in sorted(value):
            key = json.dumps(k, ensure_ascii=False) + ": "
            members.append(pad + key + _render(value[k], indent + 1, len(pad) + len(key)))
        return "{\n" + ",\n".join(members) + "\n" + "  " * indent + "}"
    items = [pad + _render(v, indent + 1, len(pad)) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"


def dumps(net: Network | Seq2Seq, *, extra: Mapping[str, Any] | None = None) -> str:
    """The network file of ``net`` as text: deterministic, sorted keys, ending in a newline."""
    return _render(to_json(net, extra=extra), 0, 0) + "\n"


def dump_file(
    path: str | Path, net: Network | Seq2Seq, *, extra: Mapping[str, Any] | None = None
) -> None:
    """Write the network file of ``net`` to ``path`` (UTF-8)."""
    Path(path).write_text(dumps(net, extra=extra), encoding="utf-8")
