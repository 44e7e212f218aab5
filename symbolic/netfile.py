"""Network files: any network of the IR as a versioned, deterministic JSON document.

A file holds one network and the sha256 fingerprint of its canonical printed form
(:func:`netproof.symbolic.printing.fingerprint`), so a file that was edited by hand, truncated or written
for another network is caught when it is read. Every rational is a string, ``"p/q"`` or an
integer such as ``"-3"`` (the reader also takes a JSON integer); a JSON number with a fraction
part (``0.5``) is refused, never rounded.

Top level::

    {
      "extra": {...},                 optional: free JSON (construction name, params, claims)
      "fingerprint": "<sha256 hex>",  of symbolic.printing.pretty(network)
      "format": "netproof-network",
      "format_version": 1,
      "network": {"type": "Network", ...}
    }

The network mirrors the IR field for field. Every IR object is a JSON object whose ``"type"``
is the IR class name (``"Affine"``, ``"AttentionLayer"``, ``"Softmax"``, ...) and whose other
keys are exactly the dataclass's fields: all required, none unknown, ``null`` where a field is
``None``. A tuple of names or of tuples is an array in the same order (dims, steps, heads, the
embedding table, positional features, params). The one sparse field: an :class:`~netproof.symbolic.ir.Affine`
writes ``weights`` as ``{output: {input: w}}`` and ``bias`` as ``{output: b}`` with zero entries
left out (the reader takes explicit zeros too); ``inputs`` and ``outputs`` give the order.
The one set of optional fields: a :class:`~netproof.symbolic.ir.Head`'s relative-position fields
(``relative_bias``, ``query_conv``, ``key_conv``) are written only when set, so a file of a
network without them is the same as before they existed; when present they are read strictly.

Keys are sorted; arrays keep their order; indentation is 2 spaces and a value that fits in
100 columns is written on one line; the text ends with a newline. The reader is strict: an
unknown or missing field, a repeated key, a wrong type, a float, an unknown format or version
and a fingerprint that does not match the rebuilt network all raise :class:`NetworkFileError`,
whose message starts with the JSON path of the field (``network.layers[2].block.heads[0].mask``)
and says how to fix it. The IR's own validation errors come out the same way. A hand-written
file may start without ``fingerprint``: the error names the one to write for its network.

>>> from netproof.symbolic import Network, Sublayer, affine, classifier, ffn, token_embedding, RELU
>>> net = Network(
...     name="demo",
...     dims=("x",),
...     embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": "-1/2"}}),
...     layers=(Sublayer(block=ffn("gate", affine({"u": {"x": 2}}), RELU, affine({"x": {"u": 1}}))),),
...     readout=classifier("x"),
... )
>>> print(dumps(net), end="")  # doctest: +ELLIPSIS
{
  "fingerprint": "...",
  "format": "netproof-network",
  "format_version": 1,
  "network": {
    "dims": ["x"],
    "embedding": {
      "alphabet": ["a", "b"],
      "index_base": 0,
      "positional": [],
      "prefix": [],
      "suffix": [],
      "table": [["a", [["x", "1"]]], ["b", [["x", "-1/2"]]]],
      "type": "TokenEmbedding"
    },
    "layers": [
      {
        "block": {
          "name": "gate",
          "steps": [
            {
              "bias": {},
              "inputs": ["x"],
              "outputs": ["u"],
              "type": "Affine",
              "weights": {"u": {"x": "2"}}
            },
            {"kind": "relu", "type": "Activation"},
            {
              "bias": {},
              "inputs": ["u"],
              "outputs": ["x"],
              "type": "Affine",
              "weights": {"x": {"u": "1"}}
            }
          ],
          "type": "FFN"
        },
        "post_ln": null,
        "residual": true,
        "type": "Sublayer"
      }
    ],
    "name": "demo",
    "params": [],
    "readout": {
      "accept": "positive",
      "logit": {
        "bias": {},
        "inputs": ["x"],
        "outputs": ["logit"],
        "type": "Affine",
        "weights": {"logit": {"x": "1"}}
      },
      "position": 0,
      "type": "Classifier"
    },
    "reference": "",
    "type": "Network"
  }
}
>>> loads(dumps(net)) == net
True
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar, assert_never

from .errors import InexactNumberError, NetworkValidationError
from .ir import (
    ACTIVATIONS,
    EMPTY_RULES,
    FFN,
    MASKS,
    OUTSIDE_RULES,
    SCORINGS,
    TIE_RULES,
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
    RelativeBias,
    RelativeKernel,
    Scale,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .positional import feature
from .printing import fingerprint

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "NetworkFileError",
    "dump_file",
    "dumps",
    "from_json",
    "load_file",
    "loads",
    "to_json",
]

FORMAT = "netproof-network"
FORMAT_VERSION = 1
WIDTH = 100

JSON = Any  # a value as json.loads returns it
T = TypeVar("T")


class NetworkFileError(NetworkValidationError):
    """A network file is malformed. ``path`` is the JSON path of the faulty field (``""`` for the
    file as a whole) and ``detail`` what is wrong there and how to fix it."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path or '(top level)'}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (for --jobs worker processes)
        return (NetworkFileError, (self.path, self.detail))


# --------------------------------------------------------------------------- writing


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
    return {"type": "LayerNorm", "eps": str(ln.eps), "over": None if ln.over is None else list(ln.over)}


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
        "scale": {"type": "Scale", "coef": str(s.coef), "sqrt_d": s.sqrt_d, "log_n": s.log_n, "times_n": s.times_n},
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
        out["relative_bias"] = {"type": "RelativeBias", "beta": [str(x) for x in b.beta], "outside": b.outside}
    for name in RELATIVE_KERNELS:
        w: RelativeKernel | None = getattr(h, name)
        if w is not None:
            out[name] = {
                "type": "RelativeKernel",
                "columns": [[str(x) for x in col] for col in w.columns],
                "outside": w.outside,
            }
    return out


RELATIVE_KERNELS = ("query_conv", "key_conv")


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
            block_json = {"type": "FFN", "name": block.name, "steps": [_step_json(s) for s in block.steps]}
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
            return {"type": "Classifier", "logit": _affine_json(r.logit), "position": r.position, "accept": r.accept}
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
                raise NetworkFileError(path, f"key {k!r} is a {type(k).__name__}; JSON object keys are strings")
            out[k] = _plain(v, _key(path, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, _index(path, i)) for i, v in enumerate(value)]
    hint = f"; write str(value) = {str(value)!r}" if isinstance(value, Fraction) else "; convert it to a string"
    raise NetworkFileError(path, f"{value!r} is a {type(value).__name__}, not a JSON value{hint}")


def to_json(net: Network, *, extra: Mapping[str, Any] | None = None) -> dict[str, JSON]:
    """The network file of ``net`` as JSON data (dicts, lists, strings, ints, bools, None).

    ``extra`` is stored verbatim (as JSON: tuples become arrays); it must hold JSON values only.
    """
    from .recurrent_ir import RecurrentNetwork

    if isinstance(net, RecurrentNetwork):
        raise NetworkFileError(
            "network",
            f"{net.name!r} is a RecurrentNetwork ({type(net.cell).__name__}); network files hold transformer-style "
            "Networks only (format version 1): print it with symbolic.pretty instead",
        )
    if isinstance(net, Seq2Seq):
        raise NetworkFileError(
            "network",
            f"{net.name!r} is an encoder–decoder (Seq2Seq), which network files (format_version "
            f"{FORMAT_VERSION}) cannot hold yet; rebuild it from its construction and parameters instead",
        )
    obj: dict[str, JSON] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fingerprint": fingerprint(net),
        "network": _network_json(net),
    }
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise NetworkFileError("extra", f"is a {type(extra).__name__}; pass a mapping (a JSON object)")
        obj["extra"] = _plain(extra, "extra")
    return obj


def _compact(value: JSON) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "), allow_nan=False)


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


def dumps(net: Network, *, extra: Mapping[str, Any] | None = None) -> str:
    """The network file of ``net`` as text: deterministic, sorted keys, ending in a newline."""
    return _render(to_json(net, extra=extra), 0, 0) + "\n"


def dump_file(path: str | Path, net: Network, *, extra: Mapping[str, Any] | None = None) -> None:
    """Write the network file of ``net`` to ``path`` (UTF-8)."""
    Path(path).write_text(dumps(net, extra=extra), encoding="utf-8")


# --------------------------------------------------------------------------- reading


class _RepeatedKey(dict[str, JSON]):
    """A JSON object in which a key appears twice (``repeated``); the reader reports it with
    its path."""

    repeated: str = ""


def _pairs_hook(pairs: list[tuple[str, JSON]]) -> dict[str, JSON]:
    obj: dict[str, JSON] = {}
    repeated = None
    for k, v in pairs:
        if k in obj and repeated is None:
            repeated = k
        obj[k] = v
    if repeated is None:
        return obj
    marked = _RepeatedKey(obj)
    marked.repeated = repeated
    return marked


def _refuse_constant(name: str) -> JSON:
    raise NetworkFileError("", f"{name} is not a JSON number; rationals are strings like \"1/2\"")


def _field(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _key(path: str, k: str) -> str:
    """``path.k`` for a plain key, ``path["k/n"]`` for any other (as jq writes paths)."""
    if _PLAIN_KEY.fullmatch(k):
        return _field(path, k)
    return f"{path}[{json.dumps(k, ensure_ascii=False)}]"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _describe(v: JSON) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {json.dumps(v)}"
    if isinstance(v, int):
        return f"the integer {v}"
    if isinstance(v, float):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the string {json.dumps(v, ensure_ascii=False)}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return f"a Python {type(v).__name__}"


def _check_repeats(v: JSON, path: str) -> None:
    if isinstance(v, _RepeatedKey):
        raise NetworkFileError(
            _key(path, v.repeated), "this key appears twice in the same object; keep exactly one"
        )


def _object(v: JSON, path: str, what: str) -> dict[str, JSON]:
    if not isinstance(v, dict):
        raise NetworkFileError(path, f"expected {what} (a JSON object), got {_describe(v)}")
    _check_repeats(v, path)
    return v


def _fields(v: dict[str, JSON], path: str, what: str, names: tuple[str, ...]) -> None:
    unknown = sorted(k for k in v if k not in names)
    if unknown:
        raise NetworkFileError(
            _field(path, unknown[0]),
            f"unknown field of {what}; its fields are {', '.join(names)}: remove or rename it",
        )
    missing = [k for k in names if k not in v]
    if missing:
        raise NetworkFileError(
            _field(path, missing[0]),
            f"missing field of {what}; every field is required (write null where the IR has None)",
        )


def _typed(v: JSON, path: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, JSON]]:
    """Read an IR object: check it is an object with a ``type`` among ``allowed``."""
    what = " or ".join(allowed)
    obj = _object(v, path, f"a {what}")
    if "type" not in obj:
        raise NetworkFileError(
            _field(path, "type"), f'missing: an IR object names its class, e.g. "type": "{allowed[0]}"'
        )
    kind = obj["type"]
    if kind not in allowed:
        raise NetworkFileError(
            _field(path, "type"), f"{_describe(kind)} is not allowed here; write {' or '.join(map(_quoted, allowed))}"
        )
    return kind, obj


def _ir_object(v: JSON, path: str, kind: str, names: tuple[str, ...]) -> dict[str, JSON]:
    _, obj = _typed(v, path, (kind,))
    _fields(obj, path, kind, ("type", *names))
    return obj


def _str(v: JSON, path: str) -> str:
    if not isinstance(v, str):
        raise NetworkFileError(path, f"expected a string, got {_describe(v)}")
    return v


def _bool(v: JSON, path: str) -> bool:
    if not isinstance(v, bool):
        raise NetworkFileError(path, f"expected true or false, got {_describe(v)}")
    return v


def _int(v: JSON, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        fix = f"; write {int(v)}" if isinstance(v, float) and v.is_integer() else ""
        raise NetworkFileError(path, f"expected an integer, got {_describe(v)}{fix}")
    return v


_RATIONAL = re.compile(r"-?[0-9]+(/[0-9]+)?")


def _rational(v: JSON, path: str) -> Fraction:
    if isinstance(v, bool):
        raise NetworkFileError(path, f"expected a rational, got {_describe(v)}; write \"0\" or \"1\"")
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        hint = Fraction(v).limit_denominator(10**6) if math.isfinite(v) else None
        fix = f'write the exact string "{hint}"' if hint is not None else 'write an exact string like "1/2"'
        raise NetworkFileError(path, f"{_describe(v)} is a float; rationals are exact: {fix}")
    if not isinstance(v, str):
        raise NetworkFileError(path, f'expected a rational as a string like "-1/2" or "3", got {_describe(v)}')
    if not _RATIONAL.fullmatch(v):
        raise NetworkFileError(
            path, f'{_describe(v)} is not a rational; write an integer or "p/q" (no decimals, spaces or "+")'
        )
    if "/" in v and int(v.rsplit("/", 1)[1]) == 0:
        raise NetworkFileError(path, f"{_describe(v)} divides by zero; write a nonzero denominator")
    try:
        return Fraction(v)
    except ValueError as exc:  # e.g. more digits than int() converts
        raise NetworkFileError(path, f"{_describe(v)[:80]}...: {exc}") from exc


def _list(v: JSON, path: str) -> list[JSON]:
    if not isinstance(v, list):
        raise NetworkFileError(path, f"expected an array, got {_describe(v)}; write [...]")
    return v


def _tuple(v: JSON, path: str, read: Callable[[JSON, str], T]) -> tuple[T, ...]:
    return tuple(read(x, _index(path, i)) for i, x in enumerate(_list(v, path)))


def _optional(v: JSON, path: str, read: Callable[[JSON, str], T]) -> T | None:
    return None if v is None else read(v, path)


def _choice(v: JSON, path: str, allowed: tuple[str, ...]) -> str:
    text = _str(v, path)
    if text not in allowed:
        raise NetworkFileError(path, f"{_describe(v)} is not allowed; write one of {', '.join(map(_quoted, allowed))}")
    return text


def _names(v: JSON, path: str) -> tuple[str, ...]:
    """An array of dim names: non-empty strings without whitespace, none repeated."""
    names = _tuple(v, path, _str)
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not name or any(c.isspace() for c in name):
            raise NetworkFileError(
                _index(path, i), f"dim name {_quoted(name)} must be non-empty and without spaces"
            )
        if name in seen:
            raise NetworkFileError(_index(path, i), f"dim name {_quoted(name)} appears twice; rename one")
        seen.add(name)
    return names


def _tuple_of(v: JSON, path: str, reads: tuple[Callable[[JSON, str], Any], ...], what: str) -> tuple[Any, ...]:
    """A fixed-length array such as ``[dim, value]``."""
    items = _list(v, path)
    if len(items) != len(reads):
        raise NetworkFileError(path, f"expected {what} ({len(reads)} entries), got {len(items)} entries")
    return tuple(read(x, _index(path, i)) for i, (read, x) in enumerate(zip(reads, items, strict=True)))


def _build(path: str, make: Callable[[], T]) -> T:
    """Construct an IR object; its own validation errors come out with ``path``."""
    try:
        return make()
    except NetworkFileError:
        raise
    except (NetworkValidationError, InexactNumberError) as exc:
        raise NetworkFileError(path, str(exc)) from exc


def _affine(v: JSON, path: str) -> Affine:
    obj = _ir_object(v, path, "Affine", ("inputs", "outputs", "weights", "bias"))
    inputs = _names(obj["inputs"], _field(path, "inputs"))
    outputs = _names(obj["outputs"], _field(path, "outputs"))
    wpath = _field(path, "weights")
    rows: dict[str, dict[str, Fraction]] = {}
    for out, row in _object(obj["weights"], wpath, "the nonzero weights {output: {input: w}}").items():
        rpath = _key(wpath, out)
        if out not in outputs:
            raise NetworkFileError(rpath, f"{_quoted(out)} is not among outputs; add it there or fix the name")
        entries = _object(row, rpath, "a row {input: w}")
        for name in entries:
            if name not in inputs:
                raise NetworkFileError(
                    _key(rpath, name), f"{_quoted(name)} is not among inputs; add it there or fix the name"
                )
        rows[out] = {name: _rational(w, _key(rpath, name)) for name, w in entries.items()}
    bpath = _field(path, "bias")
    bias: dict[str, Fraction] = {}
    for out, b in _object(obj["bias"], bpath, "the nonzero biases {output: b}").items():
        if out not in outputs:
            raise NetworkFileError(
                _key(bpath, out), f"{_quoted(out)} is not among outputs; add it there or fix the name"
            )
        bias[out] = _rational(b, _key(bpath, out))
    zero = Fraction(0)
    return _build(
        path,
        lambda: Affine(
            inputs=inputs,
            outputs=outputs,
            weights=tuple(tuple(rows.get(o, {}).get(i, zero) for i in inputs) for o in outputs),
            bias=tuple(bias.get(o, zero) for o in outputs),
        ),
    )


def _layernorm(v: JSON, path: str) -> LayerNorm:
    obj = _ir_object(v, path, "LayerNorm", ("eps", "over"))
    eps = _rational(obj["eps"], _field(path, "eps"))
    over = _optional(obj["over"], _field(path, "over"), _names)
    return _build(path, lambda: LayerNorm(eps=eps, over=over))


def _softmax_fields(obj: dict[str, JSON], path: str) -> Softmax:
    _fields(obj, path, "Softmax", ("type", "r", "c", "symbol"))
    r = _optional(obj["r"], _field(path, "r"), _rational)
    c = _optional(obj["c"], _field(path, "c"), _rational)
    symbol = _str(obj["symbol"], _field(path, "symbol"))
    return _build(path, lambda: Softmax(r=r, c=c, symbol=symbol))


def _softmax(v: JSON, path: str) -> Softmax:
    _, obj = _typed(v, path, ("Softmax",))
    return _softmax_fields(obj, path)


def _normalizer(v: JSON, path: str) -> Hardmax | Softmax:
    kind, obj = _typed(v, path, ("Hardmax", "Softmax"))
    if kind == "Softmax":
        return _softmax_fields(obj, path)
    _fields(obj, path, "Hardmax", ("type", "tie"))
    tie = _choice(obj["tie"], _field(path, "tie"), TIE_RULES)
    return _build(path, lambda: Hardmax(tie=tie))  # type: ignore[arg-type]


def _scale(v: JSON, path: str) -> Scale:
    obj = _ir_object(v, path, "Scale", ("coef", "sqrt_d", "log_n", "times_n"))
    coef = _rational(obj["coef"], _field(path, "coef"))
    sqrt_d = _optional(obj["sqrt_d"], _field(path, "sqrt_d"), _int)
    log_n = _bool(obj["log_n"], _field(path, "log_n"))
    times_n = _bool(obj["times_n"], _field(path, "times_n"))
    return _build(path, lambda: Scale(coef=coef, sqrt_d=sqrt_d, log_n=log_n, times_n=times_n))


def _relative_bias(v: JSON, path: str) -> RelativeBias:
    obj = _ir_object(v, path, "RelativeBias", ("beta", "outside"))
    beta = _tuple(obj["beta"], _field(path, "beta"), _rational)
    outside = _choice(obj["outside"], _field(path, "outside"), OUTSIDE_RULES)
    return _build(path, lambda: RelativeBias(beta=beta, outside=outside))  # type: ignore[arg-type]


def _relative_kernel(v: JSON, path: str) -> RelativeKernel:
    obj = _ir_object(v, path, "RelativeKernel", ("columns", "outside"))
    columns = _tuple(obj["columns"], _field(path, "columns"), lambda x, p: _tuple(x, p, _rational))
    outside = _choice(obj["outside"], _field(path, "outside"), OUTSIDE_RULES)
    return _build(path, lambda: RelativeKernel(columns=columns, outside=outside))  # type: ignore[arg-type]


def _head(v: JSON, path: str) -> Head:
    fields = ("name", "query", "key", "value", "normalizer", "scoring", "scale", "mask", "empty")
    _, raw = _typed(v, path, ("Head",))
    optional = ("relative_bias", *RELATIVE_KERNELS)
    _fields({k: x for k, x in raw.items() if k not in optional}, path, "Head", ("type", *fields))
    obj = raw
    relative_bias = _optional(obj.get("relative_bias"), _field(path, "relative_bias"), _relative_bias)
    query_conv = _optional(obj.get("query_conv"), _field(path, "query_conv"), _relative_kernel)
    key_conv = _optional(obj.get("key_conv"), _field(path, "key_conv"), _relative_kernel)
    name = _str(obj["name"], _field(path, "name"))
    query = _affine(obj["query"], _field(path, "query"))
    key = _affine(obj["key"], _field(path, "key"))
    value = _affine(obj["value"], _field(path, "value"))
    normalizer = _normalizer(obj["normalizer"], _field(path, "normalizer"))
    scoring = _choice(obj["scoring"], _field(path, "scoring"), SCORINGS)
    scale = _scale(obj["scale"], _field(path, "scale"))
    mask = _choice(obj["mask"], _field(path, "mask"), MASKS)
    empty = _choice(obj["empty"], _field(path, "empty"), EMPTY_RULES)
    return _build(
        path,
        lambda: Head(
            name=name,
            query=query,
            key=key,
            value=value,
            normalizer=normalizer,
            scoring=scoring,  # type: ignore[arg-type]
            scale=scale,
            mask=mask,  # type: ignore[arg-type]
            empty=empty,  # type: ignore[arg-type]
            relative_bias=relative_bias,
            query_conv=query_conv,
            key_conv=key_conv,
        ),
    )


def _step(v: JSON, path: str) -> FFNStep:
    kind, obj = _typed(v, path, ("Affine", "Activation", "LayerNorm"))
    if kind == "Affine":
        return _affine(obj, path)
    if kind == "LayerNorm":
        return _layernorm(obj, path)
    _fields(obj, path, "Activation", ("type", "kind"))
    act = _choice(obj["kind"], _field(path, "kind"), ACTIVATIONS)
    return _build(path, lambda: Activation(kind=act))  # type: ignore[arg-type]


def _block(v: JSON, path: str) -> AttentionLayer | FFN | Convolution:
    kind, obj = _typed(v, path, ("AttentionLayer", "FFN", "Convolution"))
    if kind == "Convolution":
        _fields(obj, path, "Convolution", ("type", "name", "inputs", "outputs", "kernels", "normalizer"))
        name = _str(obj["name"], _field(path, "name"))
        inputs = _names(obj["inputs"], _field(path, "inputs"))
        outputs = _names(obj["outputs"], _field(path, "outputs"))
        kernels = _tuple(obj["kernels"], _field(path, "kernels"), lambda x, p: _tuple(x, p, _rational))
        normalizer = _optional(obj["normalizer"], _field(path, "normalizer"), _softmax)
        return _build(
            path,
            lambda: Convolution(name=name, inputs=inputs, outputs=outputs, kernels=kernels, normalizer=normalizer),
        )
    if kind == "FFN":
        _fields(obj, path, "FFN", ("type", "name", "steps"))
        name = _str(obj["name"], _field(path, "name"))
        steps = _tuple(obj["steps"], _field(path, "steps"), _step)
        return _build(path, lambda: FFN(name=name, steps=steps))
    _fields(obj, path, "AttentionLayer", ("type", "name", "heads", "output"))
    name = _str(obj["name"], _field(path, "name"))
    heads = _tuple(obj["heads"], _field(path, "heads"), _head)
    output = _optional(obj["output"], _field(path, "output"), _affine)
    return _build(path, lambda: AttentionLayer(name=name, heads=heads, output=output))


def _sublayer(v: JSON, path: str) -> Sublayer:
    obj = _ir_object(v, path, "Sublayer", ("block", "residual", "post_ln"))
    block = _block(obj["block"], _field(path, "block"))
    residual = _bool(obj["residual"], _field(path, "residual"))
    post_ln = _optional(obj["post_ln"], _field(path, "post_ln"), _layernorm)
    return _build(path, lambda: Sublayer(block=block, residual=residual, post_ln=post_ln))


def _dim_in(dim: str, dims: tuple[str, ...], path: str, what: str) -> None:
    if dim not in dims:
        raise NetworkFileError(
            path, f"{what} {_quoted(dim)} is not a network dim; add it to network.dims or fix the name"
        )


def _positional_feature(v: JSON, path: str) -> str:
    name = _str(v, path)
    try:
        feature(name)
    except NetworkValidationError as exc:
        raise NetworkFileError(path, f"{exc}; use a known name or register the feature before reading") from exc
    return name


def _embedding(v: JSON, path: str, dims: tuple[str, ...]) -> TokenEmbedding | FlatEmbedding:
    kind, obj = _typed(v, path, ("TokenEmbedding", "FlatEmbedding"))
    if kind == "FlatEmbedding":
        _fields(obj, path, "FlatEmbedding", ("type", "alphabet", "length", "values", "prefix"))
        alphabet = _tuple(obj["alphabet"], _field(path, "alphabet"), _str)
        length = _int(obj["length"], _field(path, "length"))
        values = _tuple(
            obj["values"], _field(path, "values"), lambda x, p: _tuple_of(x, p, (_str, _rational), "[symbol, value]")
        )
        prefix = _str(obj["prefix"], _field(path, "prefix"))
        if length > len(dims):  # checked before FlatEmbedding.dims lists length names
            raise NetworkFileError(
                _field(path, "length"), f"{length} input dims but the network has {len(dims)} dims; fix length or dims"
            )
        flat = _build(path, lambda: FlatEmbedding(alphabet=alphabet, length=length, values=values, prefix=prefix))
        for dim in flat.dims:
            _dim_in(dim, dims, _field(path, "length"), "flat input dim")
        return flat
    _fields(obj, path, "TokenEmbedding", ("type", "alphabet", "table", "positional", "prefix", "suffix", "index_base"))
    alphabet = _tuple(obj["alphabet"], _field(path, "alphabet"), _str)
    tpath = _field(path, "table")

    def row(x: JSON, p: str) -> tuple[str, Fraction]:
        dim, value = _tuple_of(x, p, (_str, _rational), "[dim, value]")
        _dim_in(dim, dims, _index(p, 0), "embedding dim")
        return dim, value

    def table_row(x: JSON, p: str) -> tuple[str, tuple[tuple[str, Fraction], ...]]:
        return _tuple_of(x, p, (_str, lambda y, q: _tuple(y, q, row)), "[token, [[dim, value], ...]]")

    table = _tuple(obj["table"], tpath, table_row)

    def positional_entry(x: JSON, p: str) -> tuple[str, str, Fraction]:
        dim, feat, coef = _tuple_of(x, p, (_str, _positional_feature, _rational), "[dim, feature name, coefficient]")
        _dim_in(dim, dims, _index(p, 0), "positional dim")
        return dim, feat, coef

    positional = _tuple(obj["positional"], _field(path, "positional"), positional_entry)
    prefix = _tuple(obj["prefix"], _field(path, "prefix"), _str)
    suffix = _tuple(obj["suffix"], _field(path, "suffix"), _str)
    index_base = _int(obj["index_base"], _field(path, "index_base"))
    return _build(
        path,
        lambda: TokenEmbedding(
            alphabet=alphabet, table=table, positional=positional, prefix=prefix, suffix=suffix, index_base=index_base
        ),
    )


def _readout(v: JSON, path: str, dims: tuple[str, ...]) -> Classifier | NextSymbols:
    kind, obj = _typed(v, path, ("Classifier", "NextSymbols"))
    if kind == "Classifier":
        _fields(obj, path, "Classifier", ("type", "logit", "position", "accept"))
        logit = _affine(obj["logit"], _field(path, "logit"))
        for i, name in enumerate(logit.inputs):
            _dim_in(name, dims, _index(_field(_field(path, "logit"), "inputs"), i), "the logit reads")
        position = _int(obj["position"], _field(path, "position"))
        accept = _choice(obj["accept"], _field(path, "accept"), ("positive",))
        return _build(path, lambda: Classifier(logit=logit, position=position, accept=accept))  # type: ignore[arg-type]
    _fields(obj, path, "NextSymbols", ("type", "scores", "threshold", "softmax", "end"))

    def score(x: JSON, p: str) -> tuple[str, str]:
        symbol, dim = _tuple_of(x, p, (_str, _str), "[symbol, dim]")
        _dim_in(dim, dims, _index(p, 1), "score dim")
        return symbol, dim

    scores = _tuple(obj["scores"], _field(path, "scores"), score)
    threshold = _rational(obj["threshold"], _field(path, "threshold"))
    softmax = _optional(obj["softmax"], _field(path, "softmax"), _softmax)
    end = _optional(obj["end"], _field(path, "end"), _str)
    return _build(path, lambda: NextSymbols(scores=scores, threshold=threshold, softmax=softmax, end=end))


def _network(v: JSON, path: str) -> Network:
    # the per-sublayer check, so that its errors get the sublayer's path
    from .validate import _validate_sublayer

    obj = _ir_object(v, path, "Network", ("name", "dims", "embedding", "layers", "readout", "params", "reference"))
    name = _str(obj["name"], _field(path, "name"))
    dims = _names(obj["dims"], _field(path, "dims"))
    embedding = _embedding(obj["embedding"], _field(path, "embedding"), dims)
    lpath = _field(path, "layers")
    layers = _tuple(obj["layers"], lpath, _sublayer)
    seen = {"input"}
    for i, sub in enumerate(layers):
        spath = _index(lpath, i)
        if sub.name in seen:
            raise NetworkFileError(
                _field(_field(spath, "block"), "name"),
                f"sublayer name {sub.name!r} is used twice (or is the reserved name 'input'); "
                "traces and claims refer to states by name, so give each sublayer its own",
            )
        seen.add(sub.name)
        try:
            _validate_sublayer(sub, set(dims))
        except NetworkValidationError as exc:
            raise NetworkFileError(spath, str(exc)) from exc
    readout = _readout(obj["readout"], _field(path, "readout"), dims)
    params = _tuple(obj["params"], _field(path, "params"), lambda x, p: _tuple_of(x, p, (_str, _str), "[name, value]"))
    reference = _str(obj["reference"], _field(path, "reference"))
    return _build(
        path,
        lambda: Network(
            name=name,
            dims=dims,
            embedding=embedding,
            layers=layers,
            readout=readout,
            params=params,
            reference=reference,
        ),
    )


def _repeats_anywhere(v: JSON, path: str) -> None:
    _check_repeats(v, path)
    if isinstance(v, dict):
        for k, x in v.items():
            _repeats_anywhere(x, _key(path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _repeats_anywhere(x, _index(path, i))


_TOP = ("format", "format_version", "fingerprint", "network", "extra")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _read(obj: JSON) -> tuple[Network, dict[str, JSON] | None]:
    top = _object(obj, "", "a network file")
    unknown = sorted(k for k in top if k not in _TOP)
    if unknown:
        raise NetworkFileError(
            unknown[0], f"unknown top-level field; a network file has {', '.join(_TOP)} (extra is optional): remove it"
        )
    for name in ("format", "format_version", "network"):
        if name not in top:
            raise NetworkFileError(name, "missing top-level field; re-export the network with symbolic.netfile.dumps")
    if top["format"] != FORMAT:
        raise NetworkFileError(
            "format", f'{_describe(top["format"])} is not a network file format; this reader reads "{FORMAT}"'
        )
    version = top["format_version"]
    if version != FORMAT_VERSION or isinstance(version, bool) or not isinstance(version, int):
        raise NetworkFileError(
            "format_version",
            f"{_describe(version)} is not supported; this reader reads format_version {FORMAT_VERSION}: "
            "re-export the network with this version of netproof",
        )
    extra = None
    if "extra" in top:
        extra = _object(top["extra"], "extra", "extra data")
        _repeats_anywhere(extra, "extra")
    net = _network(top["network"], "network")
    actual = fingerprint(net)
    if "fingerprint" not in top:
        raise NetworkFileError(
            "fingerprint", f'missing top-level field; for the network in this file write "fingerprint": "{actual}"'
        )
    stated = _str(top["fingerprint"], "fingerprint")
    if not _SHA256.fullmatch(stated):
        raise NetworkFileError(
            "fingerprint",
            f"{_describe(stated)} is not a sha256 (64 lowercase hex digits) of the network's printed form; "
            f"for the network in this file write {actual}",
        )
    if actual != stated:
        raise NetworkFileError(
            "fingerprint",
            f"the file states {stated} but its network prints to {actual}: the network was edited or "
            f"the file is for another network; if the edit is intended, write {actual}",
        )
    return net, extra


def from_json(obj: JSON) -> Network:
    """The network of a file already parsed as JSON data (strict: see the module docstring)."""
    return _read(obj)[0]


def _parse(text: str, where: str) -> JSON:
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise NetworkFileError(
            "", f"{where} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; fix the syntax there"
        ) from exc


def loads(text: str) -> Network:
    """The network of a network file's text (strict: see the module docstring)."""
    return from_json(_parse(text, "the text"))


def load_file(path: str | Path) -> tuple[Network, dict[str, JSON] | None]:
    """The network of the file at ``path`` and its ``extra`` object (None when it has none)."""
    return _read(_parse(Path(path).read_text(encoding="utf-8"), str(path)))
