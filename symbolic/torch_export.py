"""Weights as plain torch tensors: a ``state_dict`` with a documented layout, for other tools.

:func:`state_dict` turns every number of a network into a float tensor (float64 by default,
float32 on request); :func:`layout` describes every tensor (shape, the names of its rows and
columns, the IR field it comes from, whether the conversion was exact) and everything that is
not a tensor (masks, tie rules, scoring, scale, activations, positional feature names);
:func:`save` writes both, with the network's fingerprint, in one ``torch.save`` file and
:func:`load` reads it back strictly. The exported tensors are evidence for other tools
(interpretability libraries, float re-implementations), not the network: the exact IR stays the
reference, and the layout says where a float could not hold a weight exactly.

Only :func:`state_dict`, :func:`save` and :func:`load` need torch (the ``torch`` extra:
``pip install -e '.[torch]'``); importing this module and calling :func:`layout` do not.

**Conversion.** Each rational is rounded to the nearest value of the chosen format (ties to
even, subnormals included), exactly as ``float(Fraction)`` does for float64; a value too large
for the format is an error, never ``inf``. A conversion is exact when every entry is a dyadic
rational the format holds; ``layout(net)["tensors"][key]`` records ``exact``,
``inexact_entries`` and ``max_abs_error`` (the largest |float − rational|, itself rounded to a
float for the report).

**Keys.** ``dims`` is the network's residual dims in order (``d_model = len(dims)``); a matrix
is ``rows × cols`` and maps a vector over ``cols`` to one over ``rows`` (``y = W @ x + b``, as
``torch.nn.Linear``). Layers are numbered from 0 and the key names the block kind; heads are
numbered from 0 in IR order (their names are in the layout) and FFN step ``j`` is the IR's step
``j`` (as in the printed form: activation steps count, and have no tensor).

======================================  ==================  ===============================
key                                     shape               rows × cols
======================================  ==================  ===============================
``embedding.table``                     tokens × d_model    ``embedding.tokens`` × dims
``embedding.positional``                features × d_model  feature names × dims
``embedding.values`` (flat networks)    alphabet            the alphabet, in order
``layers.{i}.attention.heads.{h}.W_Q``  q × d_model         the q/k names × dims
``layers.{i}.attention.heads.{h}.b_Q``  q                   the q/k names
``...W_K``, ``...b_K``                  q × d_model, q      the q/k names (× dims)
``...W_V``, ``...b_V``                  v × d_model, v      the value names (× dims)
``layers.{i}.attention.W_O``, ``b_O``   out × Σv, out       residual dims (× heads' values)
``layers.{i}.ffn.steps.{j}.weight``     out × in            the step's outputs × inputs
``layers.{i}.ffn.steps.{j}.bias``       out                 the step's outputs
``layers.{i}.ffn.steps.{j}.eps``        ()                  (a layer-norm step)
``layers.{i}.post_ln.eps``              ()                  (a post-residual layer norm)
``readout.logit.weight``, ``.bias``     1 × d_model, 1      the logit's name (× dims)
``readout.scores``                      symbols × d_model   the scored symbols × dims
``readout.threshold``                   ()                  (a next-symbol readout)
======================================  ==================  ===============================

Maps that read the residual stream (W_Q, W_K, W_V, the classifier's logit) have one column per
residual dim, zero where the IR does not read that dim. FFN steps keep the IR's own names: step
``j`` reads the names its ``cols`` lists, which are residual dims for the first affine step and
the previous affine step's outputs after it; its last affine step writes the residual dims its
``rows`` lists. ``W_O`` reads the heads' value outputs concatenated in head order.

**Semantics.** ``layout(net)`` has the keys ``format``, ``format_version``, ``network`` (its
name), ``params``, ``reference``, ``fingerprint`` (:func:`netproof.symbolic.printing.fingerprint`),
``dtype``, ``dims``, ``embedding``, ``layers``, ``readout`` and ``tensors`` (one entry per key,
in the state dict's order); rationals are exact strings ``"p/q"`` as in network files.

- ``embedding`` (``type: "TokenEmbedding"``): the input is ``prefix + word + suffix``, token
  ``t`` at position ``i = index_base + t``, ``n`` tokens in all (specials included); its residual
  vector is ``table[tokens.index(token)] + Σ_f feature_f(i, n) · positional[f]``, where the
  features are named in ``positional_features`` and defined in :mod:`netproof.symbolic.positional`.
  ``tokens`` lists the alphabet, then the prefix and suffix specials, then any other token of
  the table (never used). ``type: "FlatEmbedding"``: one position; residual dim
  ``input_dims[i]`` holds ``values[alphabet.index(w_i)]``, the other dims 0.
- ``layers[i]``: ``{"kind": "attention" | "ffn", "name", "residual", "post_ln"}``; the new
  state is ``post_ln(x + block(x))`` if ``residual`` else ``post_ln(block(x))``, ``block(x)``
  being 0 on the dims it does not write. A layer norm is ``(x − mean)/√(var + eps)`` over the
  dims in ``over`` (``null``: all of them; population variance, no gain or bias).
- An attention layer's ``heads`` give ``name``, ``scoring`` (``dot``: s = ⟨q_i, k_j⟩;
  ``neg_abs_dot``: −|⟨q_i, k_j⟩|), ``mask`` (``none``; ``causal`` j ≤ i; ``strict_causal``
  j < i; ``anticausal`` j ≥ i; ``strict_anticausal`` j > i), ``empty`` (what a query with no
  unmasked key yields: ``zero`` or ``error``), ``normalizer`` and ``scale``. ``hardmax`` puts
  all weight on the maximal scores: ``average`` splits it evenly, ``leftmost`` / ``rightmost``
  gives it to the smallest / largest maximizing position; its positive scale does not move
  the argmax. ``softmax`` weights are ∝ exp(κ·s), κ = coef · (1/√sqrt_d if set) · (n if
  times_n) · (ln n if log_n) · (ln r if r is set, else c), n being the number of tokens. The
  output is Σ_j weight_j · v_j; without ``W_O`` each head adds its values to the residual dims
  its ``W_V`` rows name (heads write disjoint dims), with ``W_O`` the layer writes
  ``W_O @ concat(head outputs) + b_O``.
- An FFN's ``steps`` are applied in order to a named vector that starts as the residual
  state: ``{"kind": "affine"}`` replaces it by ``weight @ v[cols] + bias`` (named by ``rows``),
  ``{"kind": "activation", "activation": "relu" | "sigma" | "step" | "gelu"}`` acts elementwise (σ =
  clip to [0, 1], step = I[x > 0], gelu = x·Φ(x)) and ``{"kind": "layernorm", "over", "eps"}`` normalizes the names
  in ``over`` (``null``: all of the vector's). The block outputs the last affine step's vector;
  with no steps it outputs 0.
- ``readout`` (``type: "Classifier"``): the logit at token ``position`` (−1 = last) of the
  final state; the word is accepted iff the logit is > 0. ``type: "NextSymbols"``: at every
  position, ``scores = readout.scores @ x``; with ``softmax`` they become probabilities ∝
  exp(κ·score) (κ = ln r or c); symbol s may come next iff its value is ≥ ``threshold``.

>>> from netproof.symbolic import Network, Sublayer, AttentionLayer, Head, Hardmax, affine, classifier
>>> from netproof.symbolic import constant, ffn, token_embedding, RELU
>>> net = Network(
...     name="demo",
...     dims=("a", "p", "s", "y"),
...     embedding=token_embedding(
...         ("a", "b"), {"a": {"a": 1}, "b": {}, "CLS": {}}, positional={"p": "i/n"}, prefix=("CLS",)
...     ),
...     layers=(
...         Sublayer(block=AttentionLayer(name="mean_a", heads=(Head(
...             name="mean", query=constant({"q": 0}), key=constant({"q": 0}),
...             value=affine({"s": {"a": 1}}), normalizer=Hardmax()),))),
...         Sublayer(block=ffn("gate", affine({"u": {"s": 3}}, bias={"u": -1}), RELU, affine({"y": {"u": 1}}))),
...     ),
...     readout=classifier("y", bias="-1/10"),
... )
>>> lay = layout(net)
>>> for key, t in lay["tensors"].items():
...     print(f"{key:30} {str(t['shape']):8} {t['rows']} x {t['cols']} exact={t['exact']}")
embedding.table                [3, 4]   ['a', 'b', 'CLS'] x ['a', 'p', 's', 'y'] exact=True
embedding.positional           [1, 4]   ['i/n'] x ['a', 'p', 's', 'y'] exact=True
layers.0.attention.heads.0.W_Q [1, 4]   ['q'] x ['a', 'p', 's', 'y'] exact=True
layers.0.attention.heads.0.b_Q [1]      ['q'] x None exact=True
layers.0.attention.heads.0.W_K [1, 4]   ['q'] x ['a', 'p', 's', 'y'] exact=True
layers.0.attention.heads.0.b_K [1]      ['q'] x None exact=True
layers.0.attention.heads.0.W_V [1, 4]   ['s'] x ['a', 'p', 's', 'y'] exact=True
layers.0.attention.heads.0.b_V [1]      ['s'] x None exact=True
layers.1.ffn.steps.0.weight    [1, 1]   ['u'] x ['s'] exact=True
layers.1.ffn.steps.0.bias      [1]      ['u'] x None exact=True
layers.1.ffn.steps.2.weight    [1, 1]   ['y'] x ['u'] exact=True
layers.1.ffn.steps.2.bias      [1]      ['y'] x None exact=True
readout.logit.weight           [1, 4]   ['logit'] x ['a', 'p', 's', 'y'] exact=True
readout.logit.bias             [1]      ['logit'] x None exact=False
>>> lay["tensors"]["readout.logit.bias"]["from"], lay["tensors"]["readout.logit.bias"]["max_abs_error"]
('network.readout.logit.bias', 5.551115123125783e-18)
>>> lay["layers"][0]["heads"][0]["normalizer"], lay["layers"][1]["steps"][1]
({'type': 'hardmax', 'tie': 'average'}, {'kind': 'activation', 'activation': 'relu'})
>>> lay["embedding"]["positional_features"]
[{'name': 'i/n', 'meaning': 'position over length (Chiang & Cholak dim 4; Yao p_i)'}]
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from .errors import MissingExtraError, SymbolicError
from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Seq2Seq,
    Softmax,
    TokenEmbedding,
)
from .positional import feature
from .printing import fingerprint

if TYPE_CHECKING:
    import torch

__all__ = ["FORMAT", "FORMAT_VERSION", "StateDictError", "layout", "load", "save", "state_dict"]

FORMAT = "netproof-state-dict"
FORMAT_VERSION = 1

JSON = Any  # a value as json.loads returns it

_ZERO = Fraction(0)
_TWO = Fraction(2)


class StateDictError(SymbolicError, ValueError):
    """A network cannot be exported in the asked format, or a saved state dict is malformed."""


# --------------------------------------------------------------------------- float formats


@dataclass(frozen=True, slots=True)
class _Format:
    """An IEEE binary format: ``precision`` significand bits, normal exponents emin..emax."""

    name: str
    precision: int
    emin: int
    emax: int

    @property
    def max_finite(self) -> Fraction:
        return (2 - _TWO ** (1 - self.precision)) * _TWO**self.emax


_FORMATS = {
    f.name: f for f in (_Format("float64", 53, -1022, 1023), _Format("float32", 24, -126, 127))
}


def _format(dtype: object) -> _Format:
    """The format of ``dtype``: ``torch.float64`` / ``torch.float32`` or their names."""
    name = dtype if isinstance(dtype, str) else str(dtype)
    fmt = _FORMATS.get(name.removeprefix("torch."))
    if fmt is None:
        raise StateDictError(
            f"dtype={dtype!r} is not supported; export as torch.float64 (the default, exact for every "
            "dyadic weight) or torch.float32"
        )
    return fmt


def _round(q: Fraction, fmt: _Format) -> Fraction:
    """The value of ``fmt`` nearest to ``q`` (ties to even, subnormals included), as an exact
    Fraction; a value beyond the largest finite one raises :class:`OverflowError`."""
    num, den = q.numerator, q.denominator
    k = den.bit_length() - 1
    if (
        den & (den - 1) == 0
        and abs(num).bit_length() <= fmt.precision
        and k <= fmt.precision - 1 - fmt.emin
    ):
        return q  # a dyadic rational the format holds (every small integer and p/2^k)
    a = abs(q)
    e = abs(num).bit_length() - den.bit_length()
    if a < _TWO**e:
        e -= 1  # now 2^e <= a < 2^(e+1)
    quantum = _TWO ** (max(e, fmt.emin) - (fmt.precision - 1))
    m = a / quantum
    whole = m.numerator // m.denominator
    rest = m - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    rounded = whole * quantum
    if rounded > fmt.max_finite:
        raise OverflowError(f"{q} is beyond the largest finite {fmt.name}")
    return rounded if q > 0 else -rounded


# --------------------------------------------------------------------------- the tensors, exactly


@dataclass(frozen=True, slots=True)
class _Spec:
    """One tensor before conversion: exact entries in row-major order."""

    key: str
    shape: tuple[int, ...]
    rows: tuple[str, ...] | None
    cols: tuple[str, ...] | None
    source: str
    values: tuple[Fraction, ...]


def _dense(
    key: str,
    rows: Sequence[str],
    cols: Sequence[str],
    source: str,
    entry: Callable[[str, str], Fraction],
) -> _Spec:
    values = tuple(entry(r, c) for r in rows for c in cols)
    return _Spec(key, (len(rows), len(cols)), tuple(rows), tuple(cols), source, values)


def _vector(key: str, rows: Sequence[str], source: str, values: Sequence[Fraction]) -> _Spec:
    return _Spec(key, (len(rows),), tuple(rows), None, source, tuple(values))


def _scalar(key: str, source: str, value: Fraction) -> _Spec:
    return _Spec(key, (), None, None, source, (value,))


def _affine_specs(
    a: Affine, weight_key: str, bias_key: str, source: str, cols: Sequence[str] | None = None
) -> list[_Spec]:
    """``a`` as a weight (its outputs × ``cols``, default its own inputs) and a bias."""
    entries = {
        (o, i): w
        for o, row in zip(a.outputs, a.weights, strict=True)
        for i, w in zip(a.inputs, row, strict=True)
    }
    return [
        _dense(
            weight_key,
            a.outputs,
            a.inputs if cols is None else cols,
            f"{source}.weights",
            lambda r, c: entries.get((r, c), _ZERO),
        ),
        _vector(bias_key, a.outputs, f"{source}.bias", a.bias),
    ]


def _embedding_tokens(emb: TokenEmbedding) -> tuple[str, ...]:
    """The row order of ``embedding.table``: alphabet, prefix, suffix, then the rest of the table."""
    order: list[str] = []
    for token in (*emb.alphabet, *emb.prefix, *emb.suffix, *(t for t, _ in emb.table)):
        if token not in order:
            order.append(token)
    return tuple(order)


def _positional_features(emb: TokenEmbedding) -> tuple[str, ...]:
    order: list[str] = []
    for _dim, feat, _coef in emb.positional:
        if feat not in order:
            order.append(feat)
    return tuple(order)


def _refuse_relative(net: Network) -> None:
    """The state_dict layout has no tensors for relative positions (Chang et al. 2021) or for
    convolution blocks yet: refuse them by name instead of exporting a different network."""
    for i, sub in enumerate(net.layers):
        block = sub.block
        if isinstance(block, Convolution):
            raise StateDictError(
                f"network.layers[{i}] is convolution {block.name!r}; the state_dict layout has no "
                "convolution tensors yet: export the network as a JSON network file (netproof export) instead"
            )
        if isinstance(block, AttentionLayer):
            for h, head in enumerate(block.heads):
                for field in ("relative_bias", "query_conv", "key_conv"):
                    if getattr(head, field) is not None:
                        raise StateDictError(
                            f"network.layers[{i}].block.heads[{h}] (head {head.name!r}) has {field}; the "
                            "state_dict layout has no relative-position tensors yet: export the network as a "
                            "JSON network file (netproof export) instead"
                        )


def _specs(net: Network) -> list[_Spec]:
    from .recurrent_ir import RecurrentNetwork

    if isinstance(net, RecurrentNetwork):
        raise StateDictError(
            f"network {net.name!r} is a RecurrentNetwork ({type(net.cell).__name__}): the state_dict layout covers "
            "transformer-style Networks only; export it as its canonical text (symbolic.pretty) instead"
        )
    if isinstance(net, Seq2Seq):
        raise StateDictError(
            f"{net.name!r} is an encoder–decoder (Seq2Seq); the state_dict layout covers encoder-style "
            "Networks only (its decoder recurrence has no tensor layout yet): evaluate it with symbolic.seq2seq"
        )
    _refuse_relative(net)
    dims = net.dims
    specs: list[_Spec] = []
    emb = net.embedding
    match emb:
        case TokenEmbedding():
            table: dict[tuple[str, str], Fraction] = {}
            for token, row in emb.table:
                for dim, v in row:  # a dim listed twice adds up, as the interpreters do
                    table[token, dim] = table.get((token, dim), _ZERO) + v
            specs.append(
                _dense(
                    "embedding.table",
                    _embedding_tokens(emb),
                    dims,
                    "network.embedding.table",
                    lambda r, c: table.get((r, c), _ZERO),
                )
            )
            pos: dict[tuple[str, str], Fraction] = {}
            for dim, feat, coef in emb.positional:
                pos[feat, dim] = pos.get((feat, dim), _ZERO) + coef
            specs.append(
                _dense(
                    "embedding.positional",
                    _positional_features(emb),
                    dims,
                    "network.embedding.positional",
                    lambda r, c: pos.get((r, c), _ZERO),
                )
            )
        case FlatEmbedding():
            values = dict(emb.values)
            specs.append(
                _vector(
                    "embedding.values",
                    emb.alphabet,
                    "network.embedding.values",
                    [values[s] for s in emb.alphabet],
                )
            )
        case _:
            assert_never(emb)
    for i, sub in enumerate(net.layers):
        block = sub.block
        src = f"network.layers[{i}].block"
        match block:
            case AttentionLayer():
                for h, head in enumerate(block.heads):
                    key = f"layers.{i}.attention.heads.{h}"
                    hsrc = f"{src}.heads[{h}]"
                    for field, letter in (("query", "Q"), ("key", "K"), ("value", "V")):
                        specs += _affine_specs(
                            getattr(head, field),
                            f"{key}.W_{letter}",
                            f"{key}.b_{letter}",
                            f"{hsrc}.{field}",
                            dims,
                        )
                if block.output is not None:
                    concat = [o for head in block.heads for o in head.value.outputs]
                    specs += _affine_specs(
                        block.output,
                        f"layers.{i}.attention.W_O",
                        f"layers.{i}.attention.b_O",
                        f"{src}.output",
                        concat,
                    )
            case FFN():
                for j, step in enumerate(block.steps):
                    key = f"layers.{i}.ffn.steps.{j}"
                    match step:
                        case Affine():
                            specs += _affine_specs(
                                step, f"{key}.weight", f"{key}.bias", f"{src}.steps[{j}]"
                            )
                        case LayerNorm():
                            specs.append(_scalar(f"{key}.eps", f"{src}.steps[{j}].eps", step.eps))
                        case Activation():
                            pass
                        case _:
                            assert_never(step)
            case Convolution():  # pragma: no cover - _refuse_relative refused convolutions above
                _refuse_relative(net)
            case _:
                assert_never(block)
        if sub.post_ln is not None:
            specs.append(
                _scalar(
                    f"layers.{i}.post_ln.eps", f"network.layers[{i}].post_ln.eps", sub.post_ln.eps
                )
            )
    r = net.readout
    match r:
        case Classifier():
            specs += _affine_specs(
                r.logit, "readout.logit.weight", "readout.logit.bias", "network.readout.logit", dims
            )
        case NextSymbols():
            reads = dict(r.scores)
            specs.append(
                _dense(
                    "readout.scores",
                    [s for s, _ in r.scores],
                    dims,
                    "network.readout.scores",
                    lambda s, d: Fraction(int(reads[s] == d)),
                )
            )
            specs.append(_scalar("readout.threshold", "network.readout.threshold", r.threshold))
        case _:
            assert_never(r)
    return specs


@dataclass(frozen=True, slots=True)
class _Converted:
    spec: _Spec
    floats: tuple[float, ...]
    inexact: int
    max_abs_error: Fraction


def _convert(spec: _Spec, fmt: _Format) -> _Converted:
    floats: list[float] = []
    inexact = 0
    worst = _ZERO
    for idx, q in enumerate(spec.values):
        try:
            rounded = _round(q, fmt)
        except OverflowError:
            raise StateDictError(
                f"{spec.key}{_entry_name(spec, idx)} = {q} (from {spec.source}) is too large for {fmt.name}; "
                "export as float64 or rescale the construction"
            ) from None
        if rounded != q:
            inexact += 1
            worst = max(worst, abs(rounded - q))
        floats.append(float(rounded))  # exact: rounded is a value of the format
    return _Converted(spec, tuple(floats), inexact, worst)


def _entry_name(spec: _Spec, idx: int) -> str:
    if spec.rows is None:
        return ""
    if spec.cols is None:
        return f"[{spec.rows[idx]!r}]"
    r, c = divmod(idx, len(spec.cols))
    return f"[{spec.rows[r]!r}, {spec.cols[c]!r}]"


def _converted(net: Network, fmt: _Format) -> list[_Converted]:
    return [_convert(spec, fmt) for spec in _specs(net)]


# --------------------------------------------------------------------------- the layout


def _q(x: Fraction) -> str:
    return str(x)


def _names(xs: Sequence[str] | None) -> list[str] | None:
    return None if xs is None else list(xs)


def _layernorm_json(ln: LayerNorm) -> dict[str, JSON]:
    return {"over": _names(ln.over), "eps": _q(ln.eps)}


def _scale_json(s: Scale) -> dict[str, JSON]:
    return {"coef": _q(s.coef), "sqrt_d": s.sqrt_d, "times_n": s.times_n, "log_n": s.log_n}


def _normalizer_json(nz: Hardmax | Softmax) -> dict[str, JSON]:
    match nz:
        case Hardmax():
            return {"type": "hardmax", "tie": nz.tie}
        case Softmax():
            return {
                "type": "softmax",
                "r": None if nz.r is None else _q(nz.r),
                "c": None if nz.c is None else _q(nz.c),
                "symbol": nz.symbol,
            }
        case _:
            assert_never(nz)


def _head_json(h: Head) -> dict[str, JSON]:
    return {
        "name": h.name,
        "scoring": h.scoring,
        "mask": h.mask,
        "empty": h.empty,
        "normalizer": _normalizer_json(h.normalizer),
        "scale": _scale_json(h.scale),
    }


def _layers_json(net: Network) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    for sub in net.layers:
        block = sub.block
        entry: dict[str, JSON] = {
            "name": block.name,
            "residual": sub.residual,
            "post_ln": None if sub.post_ln is None else _layernorm_json(sub.post_ln),
        }
        match block:
            case AttentionLayer():
                entry = {
                    "kind": "attention",
                    **entry,
                    "heads": [_head_json(h) for h in block.heads],
                    "output": block.output is not None,
                }
            case FFN():
                steps: list[dict[str, JSON]] = []
                for step in block.steps:
                    match step:
                        case Affine():
                            steps.append({"kind": "affine"})
                        case Activation():
                            steps.append({"kind": "activation", "activation": step.kind})
                        case LayerNorm():
                            steps.append({"kind": "layernorm", **_layernorm_json(step)})
                        case _:
                            assert_never(step)
                entry = {"kind": "ffn", **entry, "steps": steps}
            case Convolution():  # pragma: no cover - _specs refuses convolutions first
                _refuse_relative(net)
            case _:
                assert_never(block)
        out.append(entry)
    return out


def _embedding_json(emb: TokenEmbedding | FlatEmbedding) -> dict[str, JSON]:
    match emb:
        case TokenEmbedding():
            return {
                "type": "TokenEmbedding",
                "tokens": list(_embedding_tokens(emb)),
                "alphabet": list(emb.alphabet),
                "prefix": list(emb.prefix),
                "suffix": list(emb.suffix),
                "index_base": emb.index_base,
                "positional_features": [
                    {"name": name, "meaning": feature(name).meaning}
                    for name in _positional_features(emb)
                ],
            }
        case FlatEmbedding():
            return {
                "type": "FlatEmbedding",
                "alphabet": list(emb.alphabet),
                "length": emb.length,
                "input_dims": list(emb.dims),
            }
        case _:
            assert_never(emb)


def _readout_json(r: Classifier | NextSymbols) -> dict[str, JSON]:
    match r:
        case Classifier():
            return {"type": "Classifier", "position": r.position, "accept": "logit > 0"}
        case NextSymbols():
            return {
                "type": "NextSymbols",
                "symbols": [s for s, _ in r.scores],
                "score_dims": [d for _, d in r.scores],
                "threshold": _q(r.threshold),
                "softmax": None if r.softmax is None else _normalizer_json(r.softmax),
                "end": r.end,
            }
        case _:
            assert_never(r)


def _tensor_json(c: _Converted) -> dict[str, JSON]:
    s = c.spec
    return {
        "shape": list(s.shape),
        "rows": _names(s.rows),
        "cols": _names(s.cols),
        "from": s.source,
        "exact": c.inexact == 0,
        "inexact_entries": c.inexact,
        "max_abs_error": float(c.max_abs_error),
    }


def _layout(net: Network, fmt: _Format, converted: Sequence[_Converted]) -> dict[str, JSON]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "network": net.name,
        "params": [[k, v] for k, v in net.params],
        "reference": net.reference,
        "fingerprint": fingerprint(net),
        "dtype": fmt.name,
        "dims": list(net.dims),
        "embedding": _embedding_json(net.embedding),
        "layers": _layers_json(net),
        "readout": _readout_json(net.readout),
        "tensors": {c.spec.key: _tensor_json(c) for c in converted},
    }


def layout(net: Network, *, dtype: object = "float64") -> dict[str, JSON]:
    """The documented layout of ``state_dict(net, dtype=dtype)`` (see the module docstring).

    JSON data only (dicts, lists, strings, numbers, booleans, None); needs no torch. ``dtype`` is
    ``torch.float64`` / ``torch.float32`` or ``"float64"`` / ``"float32"``: it decides which
    conversions are exact.
    """
    fmt = _format(dtype)
    return _layout(net, fmt, _converted(net, fmt))


# --------------------------------------------------------------------------- torch


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "exporting weights to torch tensors needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def _tensors(converted: Sequence[_Converted], fmt: _Format) -> dict[str, torch.Tensor]:
    torch = _torch()
    dtype = getattr(torch, fmt.name)
    return {
        c.spec.key: torch.tensor(c.floats, dtype=dtype).reshape(c.spec.shape) for c in converted
    }


def state_dict(net: Network, *, dtype: object = "float64") -> dict[str, torch.Tensor]:
    """Every weight of ``net`` as a CPU tensor, keyed as the module docstring documents.

    ``dtype``: ``torch.float64`` (default) or ``torch.float32`` (or their names). Each entry is
    the rational rounded to the nearest value of the format; :func:`layout` says which tensors
    are exact and by how much the others are off.
    """
    fmt = _format(dtype)
    return _tensors(_converted(net, fmt), fmt)


def save(net: Network, path: str | Path, *, dtype: object = "float64") -> None:
    """``torch.save`` of ``{"format", "format_version", "fingerprint", "layout", "state_dict"}``
    (readable with ``torch.load(path, weights_only=True)``, or :func:`load`)."""
    fmt = _format(dtype)
    converted = _converted(net, fmt)
    tensors = _tensors(converted, fmt)
    lay = _layout(net, fmt, converted)
    _torch().save(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "fingerprint": lay["fingerprint"],
            "layout": lay,
            "state_dict": tensors,
        },
        str(path),
    )


_SAVED = ("fingerprint", "format", "format_version", "layout", "state_dict")


def load(path: str | Path, *, network: Network | None = None) -> dict[str, JSON]:
    """Read a file written by :func:`save` (``weights_only``: no code is run) and check it.

    The format, the version, the fields, that the state dict's keys and shapes are the layout's
    and (when ``network`` is given) that the fingerprint is that network's: else
    :class:`StateDictError`. A missing file raises :class:`FileNotFoundError`.
    """
    torch = _torch()
    try:
        obj = torch.load(str(path), weights_only=True, map_location="cpu")
    except (
        pickle.UnpicklingError,
        RuntimeError,
        EOFError,
        KeyError,
        ValueError,
    ) as exc:  # torch's ways to fail
        raise StateDictError(
            f"{path}: not a file written by symbolic.torch_export.save ({type(exc).__name__}: {str(exc)[:200]})"
        ) from exc
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise StateDictError(
            f"{path}: format {found!r} is not {FORMAT!r}; write the file with symbolic.torch_export.save"
        )
    if obj.get("format_version") != FORMAT_VERSION:
        raise StateDictError(
            f"{path}: format_version {obj.get('format_version')!r} is not supported; this reader reads "
            f"{FORMAT_VERSION}: re-export the network with this version of netproof"
        )
    if sorted(obj) != sorted(_SAVED):
        raise StateDictError(
            f"{path}: fields {sorted(obj)} are not {list(_SAVED)}; re-export the network"
        )
    lay, tensors = obj["layout"], obj["state_dict"]
    shapes = lay.get("tensors") if isinstance(lay, dict) else None
    if (
        not isinstance(tensors, dict)
        or not isinstance(shapes, dict)
        or list(tensors) != list(shapes)
    ):
        raise StateDictError(
            f"{path}: the state dict's keys are not the layout's tensors; re-export the network"
        )
    for key, t in tensors.items():
        if not isinstance(t, torch.Tensor) or list(t.shape) != shapes[key].get("shape"):
            raise StateDictError(
                f"{path}: state_dict[{key!r}] is not a tensor of the layout's shape {shapes[key].get('shape')}; "
                "re-export the network"
            )
    if lay.get("fingerprint") != obj["fingerprint"]:
        raise StateDictError(
            f"{path}: the layout's fingerprint is not the file's; re-export the network"
        )
    if network is not None and obj["fingerprint"] != fingerprint(network):
        raise StateDictError(
            f"{path}: the file is for the network with fingerprint {obj['fingerprint']}, not {network.name!r} "
            f"({fingerprint(network)}): export this network again"
        )
    return obj
