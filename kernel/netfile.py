"""The kernel's own reader of netproof's network file format (``format: netproof-network``,
version 1), written from the format's documentation, sharing no code with netproof's reader.

It keeps only what the kernel's interpreter needs and refuses, with :class:`Refused`, every
block it does not interpret (a convolution, a flat embedding, relative positions, a next-symbol
softmax with base e^c): what it does not read it cannot misread. Every number is a
:class:`fractions.Fraction` from a string ``"p/q"`` or an integer; a JSON float is malformed,
never rounded. Duplicate keys are malformed. The file's ``fingerprint`` is read as given: the kernel checks it equals the one
the proof record names, which ties the two files together (the fingerprint's own definition,
sha256 of netproof's printed form, is netproof's and is not recomputed here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


class KernelError(ValueError):
    """A file the kernel reads is malformed, or a record says what its evidence does not."""


class Refused(Exception):
    """Something outside what the kernel checks (a block, a function, a claim kind): named, never passed."""


@dataclass(frozen=True)
class Affine:
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    weights: dict[str, dict[str, Fraction]]  # output -> input -> w (zeros left out)
    bias: dict[str, Fraction]


@dataclass(frozen=True)
class Head:
    name: str
    query: Affine
    key: Affine
    value: Affine
    hardmax: bool
    tie: str  # average | leftmost | rightmost (hardmax)
    base: Fraction | None  # softmax weights base^(coef·score) (softmax)
    coef: Fraction
    times_n: bool
    scoring: str  # dot | neg_abs_dot
    mask: str
    empty: str  # zero | error


@dataclass(frozen=True)
class Block:
    kind: str  # "ffn" | "attention"
    name: str
    steps: tuple[Any, ...] = ()  # FFN: Affine | ("act", kind) | ("ln", eps, over)
    heads: tuple[Head, ...] = ()
    output: Affine | None = None


@dataclass(frozen=True)
class Sublayer:
    block: Block
    residual: bool
    post_ln: tuple[Fraction, tuple[str, ...] | None] | None


@dataclass(frozen=True)
class Net:
    name: str
    dims: tuple[str, ...]
    alphabet: tuple[str, ...]
    table: dict[str, tuple[tuple[str, Fraction], ...]]
    positional: tuple[tuple[str, str, Fraction], ...]
    prefix: tuple[str, ...]
    suffix: tuple[str, ...]
    index_base: int
    layers: tuple[Sublayer, ...]
    logit: Affine
    position: int
    fingerprint: str
    next_symbols: tuple[Any, ...] | None = None  # NextSymbols: ((symbol, dim), …), threshold, base


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise KernelError(f"duplicate key {k!r}")
        out[k] = v
    return out


def loads_json(text: str) -> Any:
    """JSON with duplicate keys, NaN and infinities refused."""

    def no_constant(name: str) -> Any:
        raise KernelError(f"{name} is not a number the kernel reads")

    return json.loads(text, object_pairs_hook=_pairs, parse_constant=no_constant)


def q(v: Any, where: str) -> Fraction:
    """A rational from ``"p/q"``, ``"-3"`` or a JSON integer; a float is malformed."""
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise KernelError(f"{where}: {v!r} is not a rational written as a string or an integer")
    try:
        return Fraction(v)
    except (ValueError, ZeroDivisionError):
        raise KernelError(f"{where}: {v!r} is not a rational") from None


def _obj(v: Any, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(v, dict) or v.get("type") != kind:
        raise KernelError(f"{where}: expected a {kind} object")
    return v


def _names(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise KernelError(f"{where}: expected a list of names")
    return tuple(v)


def _affine(v: Any, where: str) -> Affine:
    a = _obj(v, "Affine", where)
    inputs, outputs = _names(a["inputs"], where), _names(a["outputs"], where)
    weights: dict[str, dict[str, Fraction]] = {o: {} for o in outputs}
    for o, row in a["weights"].items():
        if o not in weights:
            raise KernelError(f"{where}: weight row {o!r} is not an output")
        for i, w in row.items():
            if i not in inputs:
                raise KernelError(f"{where}: weight column {i!r} is not an input")
            weights[o][i] = q(w, where)
    bias = {o: q(b, where) for o, b in a["bias"].items()}
    if any(o not in outputs for o in bias):
        raise KernelError(f"{where}: a bias names no output")
    return Affine(inputs, outputs, weights, bias)


def _head(h: dict[str, Any], where: str) -> Head:
    for field in ("relative_bias", "query_conv", "key_conv"):
        if h.get(field) is not None:
            raise Refused(f"{where}: relative positions ({field}) are outside the kernel")
    nz, sc = h["normalizer"], _obj(h["scale"], "Scale", where)
    if sc["sqrt_d"] is not None or sc["log_n"]:
        raise Refused(f"{where}: a 1/√d or ln n scale is outside the kernel (irrational weights)")
    hardmax = nz.get("type") == "Hardmax"
    base = None
    if not hardmax:
        if nz.get("type") != "Softmax" or nz.get("r") is None:
            raise Refused(
                f"{where}: softmax with base e^c is outside the kernel (e^x is not rational)"
            )
        base = q(nz["r"], where)
        if base <= 0:
            raise KernelError(f"{where}: softmax base {base} must be > 0")
    coef = q(sc["coef"], where)
    if hardmax and coef <= 0:
        raise Refused(f"{where}: hardmax with a scale coef <= 0 is outside the kernel")
    if h["scoring"] not in ("dot", "neg_abs_dot") or h["empty"] not in ("zero", "error"):
        raise KernelError(f"{where}: unknown scoring or empty rule")
    tie = nz.get("tie", "average") if hardmax else "average"
    if tie not in ("average", "leftmost", "rightmost"):
        raise KernelError(f"{where}: unknown tie rule {tie!r}")
    return Head(
        name=h["name"],
        query=_affine(h["query"], where + ".query"),
        key=_affine(h["key"], where + ".key"),
        value=_affine(h["value"], where + ".value"),
        hardmax=hardmax,
        tie=tie,
        base=base,
        coef=coef,
        times_n=bool(sc["times_n"]),
        scoring=h["scoring"],
        mask=h["mask"],
        empty=h["empty"],
    )


def _ln(v: Any, where: str) -> tuple[Fraction, tuple[str, ...] | None]:
    ln = _obj(v, "LayerNorm", where)
    over = ln.get("over")
    return (q(ln["eps"], where), None if over is None else _names(over, where))


def _block(b: dict[str, Any], where: str) -> Block:
    if b.get("type") == "FFN":
        steps: list[Any] = []
        for i, s in enumerate(b["steps"]):
            w = f"{where}.steps[{i}]"
            if s.get("type") == "Affine":
                steps.append(_affine(s, w))
            elif s.get("type") == "Activation":
                if s["kind"] not in ("relu", "step", "sigma"):
                    raise Refused(
                        f"{w}: activation {s['kind']!r} is outside the kernel (not rational)"
                    )
                steps.append(("act", s["kind"]))
            elif s.get("type") == "LayerNorm":
                steps.append(("ln", *_ln(s, w)))
            else:
                raise Refused(f"{w}: FFN step {s.get('type')!r} is outside the kernel")
        return Block("ffn", b["name"], steps=tuple(steps))
    if b.get("type") == "AttentionLayer":
        heads = tuple(
            _head(_obj(h, "Head", f"{where}.heads[{i}]"), f"{where}.heads[{i}]")
            for i, h in enumerate(b["heads"])
        )
        out = None if b["output"] is None else _affine(b["output"], where + ".output")
        return Block("attention", b["name"], heads=heads, output=out)
    raise Refused(f"{where}: block {b.get('type')!r} is outside the kernel")


NO_LOGIT = {
    "type": "Classifier",
    "logit": {"type": "Affine", "inputs": [], "outputs": ["none"], "weights": {}, "bias": {}},
    "position": 0,
    "accept": "positive",
}


def _next_symbols(r: dict[str, Any]) -> tuple[Any, ...]:
    """A NextSymbols readout: symbol s may come next at a position iff its value there, the dim
    paired with it or with ``softmax`` base r the probability r^v_s / Σ r^v_s', is >= the
    threshold (docs/semantics.md, §7); a base e^c is refused (not rational)."""
    sm = r["softmax"]
    if sm is not None and (sm.get("type") != "Softmax" or sm.get("r") is None):
        raise Refused("a next-symbol softmax with base e^c is outside the kernel (not rational)")
    scores = tuple(_names(pair, "readout.scores") for pair in r["scores"])
    if any(len(pair) != 2 for pair in scores):
        raise KernelError("readout.scores: expected [symbol, dim] pairs")
    base = None if sm is None else q(sm["r"], "readout.softmax")
    if base is not None and base <= 0:
        raise KernelError(f"readout.softmax: base {base} must be > 0")
    return scores, q(r["threshold"], "readout.threshold"), base


def loads(text: str) -> Net:
    """The network of a network file's text (see the module docstring)."""
    doc = loads_json(text)
    if not isinstance(doc, dict) or doc.get("format") != "netproof-network":
        raise KernelError("not a netproof network file (format must be 'netproof-network')")
    if doc.get("format_version") != 1:
        raise KernelError(f"format_version={doc.get('format_version')!r}: the kernel reads 1")
    fp = doc.get("fingerprint")
    if not isinstance(fp, str) or len(fp) != 64:
        raise KernelError("the network file has no sha256 fingerprint")
    try:
        net = _obj(doc["network"], "Network", "network")
        emb = net["embedding"]
        if emb.get("type") != "TokenEmbedding":
            raise Refused(f"embedding {emb.get('type')!r} is outside the kernel")
        readout, nexts = net["readout"], None
        if readout.get("type") == "NextSymbols":  # a generator: no logit (its rules read nexts)
            nexts, readout = _next_symbols(readout), NO_LOGIT
        if readout.get("type") != "Classifier" or readout.get("accept") != "positive":
            raise Refused(f"readout {readout.get('type')!r} is outside the kernel")
        layers = []
        for i, s in enumerate(net["layers"]):
            w = f"network.layers[{i}]"
            sub = _obj(s, "Sublayer", w)
            ln = None if sub["post_ln"] is None else _ln(sub["post_ln"], w + ".post_ln")
            layers.append(Sublayer(_block(sub["block"], w + ".block"), bool(sub["residual"]), ln))
        table = {
            tok: tuple((d, q(v, "embedding.table")) for d, v in row) for tok, row in emb["table"]
        }
        return Net(
            name=net["name"],
            dims=_names(net["dims"], "network.dims"),
            alphabet=_names(emb["alphabet"], "embedding.alphabet"),
            table=table,
            positional=tuple((d, f, q(c, "embedding.positional")) for d, f, c in emb["positional"]),
            prefix=_names(emb["prefix"], "embedding.prefix"),
            suffix=_names(emb["suffix"], "embedding.suffix"),
            index_base=int(emb["index_base"]),
            layers=tuple(layers),
            logit=_affine(readout["logit"], "network.readout.logit"),
            position=int(readout["position"]),
            next_symbols=nexts,
            fingerprint=fp,
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, KernelError):
            raise
        raise KernelError(f"the network file is malformed: {type(exc).__name__} {exc}") from None
