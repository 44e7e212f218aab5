"""The network file reader: strict, every error at the JSON path of its field.

Owns :func:`from_json`, :func:`loads` and :func:`load_file` (the format is described in
:mod:`netproof.symbolic.netfile`, which re-exports them). An unknown or missing field, a repeated
key, a wrong type, a float, an unknown format or version and a fingerprint that does not match the
rebuilt network all raise :class:`~netproof.symbolic.netfile_format.NetworkFileError`; the IR's own
validation errors come out the same way, with the path of the object that raised them. It imports
the IR, the validation of a sublayer, the positional features, the printed form (for the
fingerprint) and :mod:`netproof.symbolic.netfile_format`; never the writer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

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
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .netfile_format import (
    FORMAT,
    FORMAT_VERSION,
    JSON,
    RELATIVE_KERNELS,
    NetworkFileError,
    field_path,
    index_path,
    key_path,
)
from .positional import feature
from .printing import fingerprint
from .validate import validate_sublayer

__all__ = ["from_json", "load_file", "loads"]

T = TypeVar("T")


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
    raise NetworkFileError("", f'{name} is not a JSON number; rationals are strings like "1/2"')


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
            key_path(path, v.repeated),
            "this key appears twice in the same object; keep exactly one",
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
            field_path(path, unknown[0]),
            f"unknown field of {what}; its fields are {', '.join(names)}: remove or rename it",
        )
    missing = [k for k in names if k not in v]
    if missing:
        raise NetworkFileError(
            field_path(path, missing[0]),
            f"missing field of {what}; every field is required (write null where the IR has None)",
        )


def _typed(v: JSON, path: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, JSON]]:
    """Read an IR object: check it is an object with a ``type`` among ``allowed``."""
    what = " or ".join(allowed)
    obj = _object(v, path, f"a {what}")
    if "type" not in obj:
        raise NetworkFileError(
            field_path(path, "type"),
            f'missing: an IR object names its class, e.g. "type": "{allowed[0]}"',
        )
    kind = obj["type"]
    if kind not in allowed:
        raise NetworkFileError(
            field_path(path, "type"),
            f"{_describe(kind)} is not allowed here; write {' or '.join(map(_quoted, allowed))}",
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
        raise NetworkFileError(path, f'expected a rational, got {_describe(v)}; write "0" or "1"')
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, float):
        hint = Fraction(v).limit_denominator(10**6) if math.isfinite(v) else None
        fix = (
            f'write the exact string "{hint}"'
            if hint is not None
            else 'write an exact string like "1/2"'
        )
        raise NetworkFileError(path, f"{_describe(v)} is a float; rationals are exact: {fix}")
    if not isinstance(v, str):
        raise NetworkFileError(
            path, f'expected a rational as a string like "-1/2" or "3", got {_describe(v)}'
        )
    if not _RATIONAL.fullmatch(v):
        raise NetworkFileError(
            path,
            f'{_describe(v)} is not a rational; write an integer or "p/q" (no decimals, spaces or "+")',
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
    return tuple(read(x, index_path(path, i)) for i, x in enumerate(_list(v, path)))


def _optional(v: JSON, path: str, read: Callable[[JSON, str], T]) -> T | None:
    return None if v is None else read(v, path)


def _choice(v: JSON, path: str, allowed: tuple[str, ...]) -> str:
    text = _str(v, path)
    if text not in allowed:
        raise NetworkFileError(
            path, f"{_describe(v)} is not allowed; write one of {', '.join(map(_quoted, allowed))}"
        )
    return text


def _names(v: JSON, path: str) -> tuple[str, ...]:
    """An array of dim names: non-empty strings without whitespace, none repeated."""
    names = _tuple(v, path, _str)
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not name or any(c.isspace() for c in name):
            raise NetworkFileError(
                index_path(path, i),
                f"dim name {_quoted(name)} must be non-empty and without spaces",
            )
        if name in seen:
            raise NetworkFileError(
                index_path(path, i), f"dim name {_quoted(name)} appears twice; rename one"
            )
        seen.add(name)
    return names


def _tuple_of(
    v: JSON, path: str, reads: tuple[Callable[[JSON, str], Any], ...], what: str
) -> tuple[Any, ...]:
    """A fixed-length array such as ``[dim, value]``."""
    items = _list(v, path)
    if len(items) != len(reads):
        raise NetworkFileError(
            path, f"expected {what} ({len(reads)} entries), got {len(items)} entries"
        )
    return tuple(
        read(x, index_path(path, i)) for i, (read, x) in enumerate(zip(reads, items, strict=True))
    )


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
    inputs = _names(obj["inputs"], field_path(path, "inputs"))
    outputs = _names(obj["outputs"], field_path(path, "outputs"))
    wpath = field_path(path, "weights")
    rows: dict[str, dict[str, Fraction]] = {}
    for out, row in _object(
        obj["weights"], wpath, "the nonzero weights {output: {input: w}}"
    ).items():
        rpath = key_path(wpath, out)
        if out not in outputs:
            raise NetworkFileError(
                rpath, f"{_quoted(out)} is not among outputs; add it there or fix the name"
            )
        entries = _object(row, rpath, "a row {input: w}")
        for name in entries:
            if name not in inputs:
                raise NetworkFileError(
                    key_path(rpath, name),
                    f"{_quoted(name)} is not among inputs; add it there or fix the name",
                )
        rows[out] = {name: _rational(w, key_path(rpath, name)) for name, w in entries.items()}
    bpath = field_path(path, "bias")
    bias: dict[str, Fraction] = {}
    for out, b in _object(obj["bias"], bpath, "the nonzero biases {output: b}").items():
        if out not in outputs:
            raise NetworkFileError(
                key_path(bpath, out),
                f"{_quoted(out)} is not among outputs; add it there or fix the name",
            )
        bias[out] = _rational(b, key_path(bpath, out))
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
    eps = _rational(obj["eps"], field_path(path, "eps"))
    over = _optional(obj["over"], field_path(path, "over"), _names)
    return _build(path, lambda: LayerNorm(eps=eps, over=over))


def _softmax_fields(obj: dict[str, JSON], path: str) -> Softmax:
    _fields(obj, path, "Softmax", ("type", "r", "c", "symbol"))
    r = _optional(obj["r"], field_path(path, "r"), _rational)
    c = _optional(obj["c"], field_path(path, "c"), _rational)
    symbol = _str(obj["symbol"], field_path(path, "symbol"))
    return _build(path, lambda: Softmax(r=r, c=c, symbol=symbol))


def _softmax(v: JSON, path: str) -> Softmax:
    _, obj = _typed(v, path, ("Softmax",))
    return _softmax_fields(obj, path)


def _normalizer(v: JSON, path: str) -> Hardmax | Softmax:
    kind, obj = _typed(v, path, ("Hardmax", "Softmax"))
    if kind == "Softmax":
        return _softmax_fields(obj, path)
    _fields(obj, path, "Hardmax", ("type", "tie"))
    tie = _choice(obj["tie"], field_path(path, "tie"), TIE_RULES)
    return _build(path, lambda: Hardmax(tie=tie))  # type: ignore[arg-type]


def _scale(v: JSON, path: str) -> Scale:
    obj = _ir_object(v, path, "Scale", ("coef", "sqrt_d", "log_n", "times_n"))
    coef = _rational(obj["coef"], field_path(path, "coef"))
    sqrt_d = _optional(obj["sqrt_d"], field_path(path, "sqrt_d"), _int)
    log_n = _bool(obj["log_n"], field_path(path, "log_n"))
    times_n = _bool(obj["times_n"], field_path(path, "times_n"))
    return _build(path, lambda: Scale(coef=coef, sqrt_d=sqrt_d, log_n=log_n, times_n=times_n))


def _relative_bias(v: JSON, path: str) -> RelativeBias:
    obj = _ir_object(v, path, "RelativeBias", ("beta", "outside"))
    beta = _tuple(obj["beta"], field_path(path, "beta"), _rational)
    outside = _choice(obj["outside"], field_path(path, "outside"), OUTSIDE_RULES)
    return _build(path, lambda: RelativeBias(beta=beta, outside=outside))  # type: ignore[arg-type]


def _relative_kernel(v: JSON, path: str) -> RelativeKernel:
    obj = _ir_object(v, path, "RelativeKernel", ("columns", "outside"))
    columns = _tuple(
        obj["columns"], field_path(path, "columns"), lambda x, p: _tuple(x, p, _rational)
    )
    outside = _choice(obj["outside"], field_path(path, "outside"), OUTSIDE_RULES)
    return _build(path, lambda: RelativeKernel(columns=columns, outside=outside))  # type: ignore[arg-type]


def _head(v: JSON, path: str) -> Head:
    fields = ("name", "query", "key", "value", "normalizer", "scoring", "scale", "mask", "empty")
    _, raw = _typed(v, path, ("Head",))
    optional = ("relative_bias", *RELATIVE_KERNELS)
    _fields({k: x for k, x in raw.items() if k not in optional}, path, "Head", ("type", *fields))
    obj = raw
    relative_bias = _optional(
        obj.get("relative_bias"), field_path(path, "relative_bias"), _relative_bias
    )
    query_conv = _optional(obj.get("query_conv"), field_path(path, "query_conv"), _relative_kernel)
    key_conv = _optional(obj.get("key_conv"), field_path(path, "key_conv"), _relative_kernel)
    name = _str(obj["name"], field_path(path, "name"))
    query = _affine(obj["query"], field_path(path, "query"))
    key = _affine(obj["key"], field_path(path, "key"))
    value = _affine(obj["value"], field_path(path, "value"))
    normalizer = _normalizer(obj["normalizer"], field_path(path, "normalizer"))
    scoring = _choice(obj["scoring"], field_path(path, "scoring"), SCORINGS)
    scale = _scale(obj["scale"], field_path(path, "scale"))
    mask = _choice(obj["mask"], field_path(path, "mask"), MASKS)
    empty = _choice(obj["empty"], field_path(path, "empty"), EMPTY_RULES)
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
    act = _choice(obj["kind"], field_path(path, "kind"), ACTIVATIONS)
    return _build(path, lambda: Activation(kind=act))  # type: ignore[arg-type]


def _block(v: JSON, path: str) -> AttentionLayer | FFN | Convolution:
    kind, obj = _typed(v, path, ("AttentionLayer", "FFN", "Convolution"))
    if kind == "Convolution":
        _fields(
            obj, path, "Convolution", ("type", "name", "inputs", "outputs", "kernels", "normalizer")
        )
        name = _str(obj["name"], field_path(path, "name"))
        inputs = _names(obj["inputs"], field_path(path, "inputs"))
        outputs = _names(obj["outputs"], field_path(path, "outputs"))
        kernels = _tuple(
            obj["kernels"], field_path(path, "kernels"), lambda x, p: _tuple(x, p, _rational)
        )
        normalizer = _optional(obj["normalizer"], field_path(path, "normalizer"), _softmax)
        return _build(
            path,
            lambda: Convolution(
                name=name, inputs=inputs, outputs=outputs, kernels=kernels, normalizer=normalizer
            ),
        )
    if kind == "FFN":
        _fields(obj, path, "FFN", ("type", "name", "steps"))
        name = _str(obj["name"], field_path(path, "name"))
        steps = _tuple(obj["steps"], field_path(path, "steps"), _step)
        return _build(path, lambda: FFN(name=name, steps=steps))
    _fields(obj, path, "AttentionLayer", ("type", "name", "heads", "output"))
    name = _str(obj["name"], field_path(path, "name"))
    heads = _tuple(obj["heads"], field_path(path, "heads"), _head)
    output = _optional(obj["output"], field_path(path, "output"), _affine)
    return _build(path, lambda: AttentionLayer(name=name, heads=heads, output=output))


def _sublayer(v: JSON, path: str) -> Sublayer:
    obj = _ir_object(v, path, "Sublayer", ("block", "residual", "post_ln"))
    block = _block(obj["block"], field_path(path, "block"))
    residual = _bool(obj["residual"], field_path(path, "residual"))
    post_ln = _optional(obj["post_ln"], field_path(path, "post_ln"), _layernorm)
    return _build(path, lambda: Sublayer(block=block, residual=residual, post_ln=post_ln))


def _dim_in(dim: str, dims: tuple[str, ...], path: str, what: str) -> None:
    if dim not in dims:
        raise NetworkFileError(
            path,
            f"{what} {_quoted(dim)} is not a network dim; add it to network.dims or fix the name",
        )


def _positional_feature(v: JSON, path: str) -> str:
    name = _str(v, path)
    try:
        feature(name)
    except NetworkValidationError as exc:
        raise NetworkFileError(
            path, f"{exc}; use a known name or register the feature before reading"
        ) from exc
    return name


def _embedding(v: JSON, path: str, dims: tuple[str, ...]) -> TokenEmbedding | FlatEmbedding:
    kind, obj = _typed(v, path, ("TokenEmbedding", "FlatEmbedding"))
    if kind == "FlatEmbedding":
        _fields(obj, path, "FlatEmbedding", ("type", "alphabet", "length", "values", "prefix"))
        alphabet = _tuple(obj["alphabet"], field_path(path, "alphabet"), _str)
        length = _int(obj["length"], field_path(path, "length"))
        values = _tuple(
            obj["values"],
            field_path(path, "values"),
            lambda x, p: _tuple_of(x, p, (_str, _rational), "[symbol, value]"),
        )
        prefix = _str(obj["prefix"], field_path(path, "prefix"))
        if length > len(dims):  # checked before FlatEmbedding.dims lists length names
            raise NetworkFileError(
                field_path(path, "length"),
                f"{length} input dims but the network has {len(dims)} dims; fix length or dims",
            )
        flat = _build(
            path,
            lambda: FlatEmbedding(alphabet=alphabet, length=length, values=values, prefix=prefix),
        )
        for dim in flat.dims:
            _dim_in(dim, dims, field_path(path, "length"), "flat input dim")
        return flat
    _fields(
        obj,
        path,
        "TokenEmbedding",
        ("type", "alphabet", "table", "positional", "prefix", "suffix", "index_base"),
    )
    alphabet = _tuple(obj["alphabet"], field_path(path, "alphabet"), _str)
    tpath = field_path(path, "table")

    def row(x: JSON, p: str) -> tuple[str, Fraction]:
        dim, value = _tuple_of(x, p, (_str, _rational), "[dim, value]")
        _dim_in(dim, dims, index_path(p, 0), "embedding dim")
        return dim, value

    def table_row(x: JSON, p: str) -> tuple[str, tuple[tuple[str, Fraction], ...]]:
        return _tuple_of(
            x, p, (_str, lambda y, q: _tuple(y, q, row)), "[token, [[dim, value], ...]]"
        )

    table = _tuple(obj["table"], tpath, table_row)

    def positional_entry(x: JSON, p: str) -> tuple[str, str, Fraction]:
        dim, feat, coef = _tuple_of(
            x, p, (_str, _positional_feature, _rational), "[dim, feature name, coefficient]"
        )
        _dim_in(dim, dims, index_path(p, 0), "positional dim")
        return dim, feat, coef

    positional = _tuple(obj["positional"], field_path(path, "positional"), positional_entry)
    specials = _tuple(obj["prefix"], field_path(path, "prefix"), _str)
    suffix = _tuple(obj["suffix"], field_path(path, "suffix"), _str)
    index_base = _int(obj["index_base"], field_path(path, "index_base"))
    return _build(
        path,
        lambda: TokenEmbedding(
            alphabet=alphabet,
            table=table,
            positional=positional,
            prefix=specials,
            suffix=suffix,
            index_base=index_base,
        ),
    )


def _readout(v: JSON, path: str, dims: tuple[str, ...]) -> Classifier | NextSymbols:
    kind, obj = _typed(v, path, ("Classifier", "NextSymbols"))
    if kind == "Classifier":
        _fields(obj, path, "Classifier", ("type", "logit", "position", "accept"))
        logit = _affine(obj["logit"], field_path(path, "logit"))
        for i, name in enumerate(logit.inputs):
            _dim_in(
                name,
                dims,
                index_path(field_path(field_path(path, "logit"), "inputs"), i),
                "the logit reads",
            )
        position = _int(obj["position"], field_path(path, "position"))
        accept = _choice(obj["accept"], field_path(path, "accept"), ("positive",))
        return _build(path, lambda: Classifier(logit=logit, position=position, accept=accept))  # type: ignore[arg-type]
    _fields(obj, path, "NextSymbols", ("type", "scores", "threshold", "softmax", "end"))

    def score(x: JSON, p: str) -> tuple[str, str]:
        symbol, dim = _tuple_of(x, p, (_str, _str), "[symbol, dim]")
        _dim_in(dim, dims, index_path(p, 1), "score dim")
        return symbol, dim

    scores = _tuple(obj["scores"], field_path(path, "scores"), score)
    threshold = _rational(obj["threshold"], field_path(path, "threshold"))
    softmax = _optional(obj["softmax"], field_path(path, "softmax"), _softmax)
    end = _optional(obj["end"], field_path(path, "end"), _str)
    return _build(
        path, lambda: NextSymbols(scores=scores, threshold=threshold, softmax=softmax, end=end)
    )


def _network(v: JSON, path: str) -> Network:
    obj = _ir_object(
        v,
        path,
        "Network",
        ("name", "dims", "embedding", "layers", "readout", "params", "reference"),
    )
    name = _str(obj["name"], field_path(path, "name"))
    dims = _names(obj["dims"], field_path(path, "dims"))
    embedding = _embedding(obj["embedding"], field_path(path, "embedding"), dims)
    lpath = field_path(path, "layers")
    layers = _tuple(obj["layers"], lpath, _sublayer)
    seen = {"input"}
    for i, sub in enumerate(layers):
        spath = index_path(lpath, i)
        if sub.name in seen:
            raise NetworkFileError(
                field_path(field_path(spath, "block"), "name"),
                f"sublayer name {sub.name!r} is used twice (or is the reserved name 'input'); "
                "traces and claims refer to states by name, so give each sublayer its own",
            )
        seen.add(sub.name)
        try:  # the per-sublayer check, so that its errors get the sublayer's path
            validate_sublayer(sub, set(dims))
        except NetworkValidationError as exc:
            raise NetworkFileError(spath, str(exc)) from exc
    readout = _readout(obj["readout"], field_path(path, "readout"), dims)
    params = _tuple(
        obj["params"],
        field_path(path, "params"),
        lambda x, p: _tuple_of(x, p, (_str, _str), "[name, value]"),
    )
    reference = _str(obj["reference"], field_path(path, "reference"))
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
            _repeats_anywhere(x, key_path(path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _repeats_anywhere(x, index_path(path, i))


_TOP = ("format", "format_version", "fingerprint", "network", "extra")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _read(obj: JSON) -> tuple[Network, dict[str, JSON] | None]:
    top = _object(obj, "", "a network file")
    unknown = sorted(k for k in top if k not in _TOP)
    if unknown:
        raise NetworkFileError(
            unknown[0],
            f"unknown top-level field; a network file has {', '.join(_TOP)} (extra is optional): remove it",
        )
    for name in ("format", "format_version", "network"):
        if name not in top:
            raise NetworkFileError(
                name, "missing top-level field; re-export the network with symbolic.netfile.dumps"
            )
    if top["format"] != FORMAT:
        raise NetworkFileError(
            "format",
            f'{_describe(top["format"])} is not a network file format; this reader reads "{FORMAT}"',
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
            "fingerprint",
            f'missing top-level field; for the network in this file write "fingerprint": "{actual}"',
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
    """The network of a file already parsed as JSON data (strict: see :mod:`netproof.symbolic.netfile`)."""
    return _read(obj)[0]


def _parse(text: str, where: str) -> JSON:
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise NetworkFileError(
            "",
            f"{where} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; fix the syntax there",
        ) from exc
    except RecursionError:
        raise NetworkFileError(
            "",
            f"{where} nests arrays and objects too deeply to be a network file (a network file nests a few levels); "
            "it is not a file `netproof export` wrote",
        ) from None


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NetworkFileError(
            "",
            f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); a network file is "
            "UTF-8 JSON as `netproof export` writes it",
        ) from None


def loads(text: str) -> Network:
    """The network of a network file's text (strict: see :mod:`netproof.symbolic.netfile`)."""
    return from_json(_parse(text, "the text"))


def load_file(path: str | Path) -> tuple[Network, dict[str, JSON] | None]:
    """The network of the file at ``path`` and its ``extra`` object (None when it has none)."""
    return _read(_parse(_decode(Path(path).read_bytes(), str(path)), str(path)))
