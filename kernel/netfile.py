"""The kernel's own reader of netproof's network file format (``format: netproof-network``,
version 1), written from the format's documentation, sharing no code with netproof's reader.

It keeps only what the kernel's interpreter needs and refuses, with :class:`Refused`, every
block it does not interpret (an activation other than ReLU, step and σ, a softmax with base
e^c): what it does not read it cannot misread (a generator's ``NextSymbols`` readout, which no
rule reads, is not read at all). Every number is a
:class:`fractions.Fraction` from a string ``"p/q"`` or an integer; a JSON float is malformed,
never rounded. Duplicate keys are malformed. The file's ``fingerprint`` is read as given: the kernel checks it equals the one
the proof record names, which ties the two files together (the fingerprint's own definition,
sha256 of netproof's printed form, is netproof's and is not recomputed here).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from fractions import Fraction
from math import isqrt
from typing import Any


class KernelError(ValueError):
    """A file the kernel reads is malformed, or a record says what its evidence does not."""


class Refused(Exception):
    """Something outside what the kernel checks (a block, a function, a claim kind): named, never passed."""


def must_be_proved(rec: dict[str, Any], count: int, but: str) -> None:
    """KernelError unless the record says proved with ``checked`` the ``count`` words checked."""
    if rec["verdict"] != "proved" or rec.get("checked") != count:
        raise KernelError(
            f"the record says {rec['verdict']} with checked={rec.get('checked')!r}, but {but}"
        )


def bounds(rec: dict[str, Any]) -> tuple[int, int]:
    """The record's bound lo..hi on word lengths (KernelError unless 0 <= lo <= hi)."""
    bound = rec.get("bound") or {}
    lo, hi = bound.get("min_len"), bound.get("max_len")
    if not (isinstance(lo, int) and isinstance(hi, int) and 0 <= lo <= hi):
        raise KernelError(f"bound {bound} is not 0 <= min_len <= max_len")
    return lo, hi


def render(alphabet: tuple[str, ...], word: tuple[str, ...]) -> str:
    """A word as records write it: its symbols joined, by spaces where a symbol is longer."""
    return "".join(word) if all(len(s) == 1 for s in alphabet) else " ".join(word)


MORE = "pass --max-words N to `netproof recheck --kernel` to run them"


def bounded(
    rec: dict[str, Any], net: Any, max_words: int, shortest: int = 0, words: Any = None
) -> tuple[int, int, int]:
    """The record's bound lo..hi (lo at least ``shortest``) and its number of words (with
    ``words``, of the words ``words(n)`` of each length n, picked from all the words of the
    bound, which must number at most 8 × ``max_words``), within the budget of ``max_words``
    (else Refused, naming the option that raises it)."""
    lo, hi = bounds(rec)
    lengths = range(max(lo, shortest), hi + 1)
    count = sum(len(net.alphabet) ** n for n in lengths)
    if words and count <= 8 * max_words:  # words(n) picks from all the words of length n
        count = sum(len(words(n)) for n in lengths)
    if count > max_words:
        raise Refused(f"{count:,} words, over the kernel's budget of {max_words:,}: {MORE}")
    return max(lo, shortest), hi, count


def sweep(
    rec: dict[str, Any],
    net: Any,
    max_words: int,
    fault: Any,
    holds: str,
    shortest: int = 0,
    words: Any = None,
) -> str:
    """The exhaustive rules' common part: every word w of the record's bound of at least
    ``shortest`` symbols (:func:`bounded`; with ``words``, those of the list ``words(n)`` of each
    length n), shortest first, each length in the alphabet's order,
    goes to ``fault(n)(w)``: None, or what fails on w. The first word with a fault refutes the
    statement: the record must say refuted with that word as its counterexample, else it
    disagrees. With none, the record must say proved with ``checked`` the number of words;
    ``holds`` says what holds, ``{count}`` standing for that number."""
    lo, hi, count = bounded(rec, net, max_words, shortest, words)
    for n in range(lo, hi + 1):
        test = fault(n)
        for w in words(n) if words else itertools.product(net.alphabet, repeat=n):
            if (bad := test(w)) is not None:
                shown = render(net.alphabet, w)
                if rec["verdict"] == "refuted" and rec.get("counterexample") == shown:
                    return f"refuted: on {shown!r} {bad}"
                raise KernelError(f"the record says {rec['verdict']}, but on {shown!r} {bad}")
    must_be_proved(rec, count, holds.format(count=count))
    return f"proved: {holds.format(count=count)}"


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
    rel: tuple[Any, ...] | None = None  # relative positions: (β, W^C, W^{C'}), see _relative


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
    generator: bool = False  # a NextSymbols readout, which no rule reads (NO_LOGIT in its place)
    flat: tuple[str, int] | None = None  # FlatEmbedding: (stem, length); its table: symbol -> value


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


def _root(x: int, m: int) -> int | None:
    """The integer m-th root of x >= 0, or None where there is none."""
    r = 1 << -(-x.bit_length() // m)
    while (t := ((m - 1) * r + x // r ** (m - 1)) // m) < r:
        r = t
    return r if r**m == x else None


def power(base: Fraction, e: Fraction, where: str) -> Fraction:
    """base^e exactly (base > 0), or Refused where it is not rational."""
    if base <= 0:
        raise KernelError(f"{where}: a softmax base {base} must be > 0")
    m = e.denominator
    r, t = _root(base.numerator, m), _root(base.denominator, m)
    if m > 64 or r is None or t is None:
        raise Refused(f"{where}: the weight {base}^({e}) is not rational")
    return Fraction(r, t) ** e.numerator


def _obj(v: Any, kind: str, where: str) -> dict[str, Any]:
    if not isinstance(v, dict) or v.get("type") != kind:
        raise KernelError(f"{where}: expected a {kind} object")
    return v


def _names(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise KernelError(f"{where}: expected a list of names")
    return tuple(v)


def read_affine(v: Any, where: str) -> Affine:
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


def _window(v: Any, type_: str, field: str, where: str) -> tuple[Any, ...] | None:
    """A relative window (k, outside, entries) of the file's RelativeBias / RelativeKernel."""
    if v is None:
        return None
    o = _obj(v, type_, f"{where}.{field}")
    rows = o["beta"] if type_ == "RelativeBias" else o["columns"]
    if not isinstance(rows, list) or len(rows) % 2 != 1 or o["outside"] not in ("zero", "clip"):
        raise KernelError(f"{where}.{field}: expected an odd-length window and outside zero|clip")
    vals = [q(x, where) if type_ == "RelativeBias" else [q(y, where) for y in x] for x in rows]
    return (len(rows) // 2, o["outside"], vals)


def _relative(h: dict[str, Any], where: str) -> tuple[Any, ...] | None:
    """The head's relative-position fields (the logit of key j for query i is
    factor·(score + ⟨q_i, W^C_{j−i}⟩ + ⟨k_j, W^{C'}_{j−i}⟩) + β_{j−i}), or None."""
    kinds = (("relative_bias", "RelativeBias"), ("query_conv", "RelativeKernel"))
    rel = tuple(_window(h.get(f), t, f, where) for f, t in (*kinds, ("key_conv", "RelativeKernel")))
    return None if rel == (None, None, None) else rel


MASKS = ("none", "causal", "strict_causal", "anticausal", "strict_anticausal")


def _base(nz: dict[str, Any], where: str) -> Fraction:
    """A softmax's base r (its weights r^x), > 0; Refused where it is e^c (e^x is not rational)."""
    if nz.get("type") != "Softmax" or nz.get("r") is None:
        raise Refused(f"{where}: softmax with base e^c is outside the kernel (e^x is not rational)")
    if (base := q(nz["r"], where)) <= 0:
        raise KernelError(f"{where}: softmax base {base} must be > 0")
    return base


def _head(h: dict[str, Any], where: str) -> Head:
    nz, sc = h["normalizer"], _obj(h["scale"], "Scale", where)
    root = 1 if sc["sqrt_d"] is None else isqrt(max(int(sc["sqrt_d"]), 0))
    if root * root != (sc["sqrt_d"] or 1) or root == 0 or sc["log_n"]:
        raise Refused(f"{where}: a 1/√d (d not a square) or ln n scale is outside the kernel")
    hardmax = nz.get("type") == "Hardmax"
    base = None if hardmax else _base(nz, where)
    coef = q(sc["coef"], where) / root
    if hardmax and coef <= 0:
        raise Refused(f"{where}: hardmax with a scale coef <= 0 is outside the kernel")
    if h["scoring"] not in ("dot", "neg_abs_dot") or h["empty"] not in ("zero", "error"):
        raise KernelError(f"{where}: unknown scoring or empty rule")
    if h["mask"] not in MASKS:
        raise KernelError(f"{where}: unknown mask {h['mask']!r}")
    tie = nz.get("tie", "average") if hardmax else "average"
    if tie not in ("average", "leftmost", "rightmost"):
        raise KernelError(f"{where}: unknown tie rule {tie!r}")
    qu, k, v = (read_affine(h[m], f"{where}.{m}") for m in ("query", "key", "value"))
    fields = (hardmax, tie, base, coef, bool(sc["times_n"]), h["scoring"], h["mask"], h["empty"])
    return Head(h["name"], qu, k, v, *fields, _relative(h, where))


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
                steps.append(read_affine(s, w))
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
        out = None if b["output"] is None else read_affine(b["output"], where + ".output")
        return Block("attention", b["name"], heads=heads, output=out)
    if b.get("type") == "Convolution":  # y[out_c]_i = Σ_{|j−i|≤k} w_{j−i,c}·x[in_c]_j
        ins, outs = _names(b["inputs"], where), _names(b["outputs"], where)
        rows = [[q(w, where) for w in row] for row in b["kernels"]]
        if len(ins) != len(outs) or len(rows) not in (1, len(ins)) or len(set(map(len, rows))) != 1:
            raise KernelError(f"{where}: a convolution needs one kernel row or one per channel")
        if len(rows[0]) % 2 != 1:
            raise KernelError(f"{where}: a kernel row has 2k+1 weights")
        base, ws = None, rows
        if b["normalizer"] is not None:  # w_r = base^β_r / Σ base^β_r' (Wu et al.)
            base = _base(_obj(b["normalizer"], "Softmax", where), where)
            exps = [[power(base, w, where) for w in row] for row in rows]
            ws = [[w / sum(row, Fraction(0)) for w in row] for row in exps]
        return Block("conv", b["name"], steps=(ins, outs, ws, rows, base))  # (…, raw rows, base)
    raise Refused(f"{where}: block {b.get('type')!r} is outside the kernel")


NO_LOGIT = Affine((), ("none",), {"none": {}}, {})
"""A generator's logit: its rules read its layers, never its ``NextSymbols`` readout."""


def loads(text: str, readers: dict[str, Any] | None = None) -> Any:
    """The network of a network file's text: ``readers`` maps each format the caller reads to
    its reader of the parsed file (by default the transformer format's, :func:`network`)."""
    doc, readers = loads_json(text), readers or {"netproof-network": network}
    what = doc.get("format") if isinstance(doc, dict) else None
    if what not in readers:
        raise KernelError(f"not a netproof network file (format must be one of {list(readers)})")
    if doc.get("format_version") != 1:
        raise KernelError(f"format_version={doc.get('format_version')!r}: the kernel reads 1")
    fp = doc.get("fingerprint")
    if not isinstance(fp, str) or len(fp) != 64:
        raise KernelError("the network file has no sha256 fingerprint")
    try:
        return readers[what](doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        if isinstance(exc, KernelError):
            raise
        raise KernelError(f"the network file is malformed: {type(exc).__name__} {exc}") from None


def network(doc: dict[str, Any]) -> Net:
    """The network of a ``netproof-network`` file (see the module docstring)."""
    net = _obj(doc["network"], "Network", "network")
    emb, flat = net["embedding"], None
    if emb.get("type") == "FlatEmbedding":  # one position whose dim stem+i holds values[w_i]
        flat = (emb["prefix"], int(emb["length"]))
        none = {"prefix": [], "suffix": [], "positional": [], "index_base": 0}
        emb = {**emb, **none, "table": [(s, [(emb["prefix"], v)]) for s, v in emb["values"]]}
    elif emb.get("type") != "TokenEmbedding":
        raise Refused(f"embedding {emb.get('type')!r} is outside the kernel")
    readout = net["readout"]
    generator = readout.get("type") == "NextSymbols"
    if not generator and (readout.get("type"), readout.get("accept")) != ("Classifier", "positive"):
        raise Refused(f"readout {readout.get('type')!r} is outside the kernel")
    layers = []
    for i, s in enumerate(net["layers"]):
        w = f"network.layers[{i}]"
        sub = _obj(s, "Sublayer", w)
        ln = None if sub["post_ln"] is None else _ln(sub["post_ln"], w + ".post_ln")
        layers.append(Sublayer(_block(sub["block"], w + ".block"), bool(sub["residual"]), ln))
    table = {tok: tuple((d, q(v, "embedding.table")) for d, v in row) for tok, row in emb["table"]}
    tokens = {*emb["prefix"], *emb["alphabet"], *emb["suffix"]}
    if bad := sorted(tokens - set(table)):
        raise KernelError(f"embedding: no row (or value) for the token {bad[0]!r}")
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
        logit=NO_LOGIT if generator else read_affine(readout["logit"], "network.readout.logit"),
        position=0 if generator else int(readout["position"]),
        generator=generator,
        fingerprint=doc["fingerprint"],
        flat=flat,
    )
