"""Builders: write blocks with ints, Fractions or ``"p/q"`` strings; get exact IR.

>>> a = affine({"k/n": {"tok:1": 1}, "1/n": {"tok:CLS": 1}})
>>> a.inputs, a.outputs
(('tok:1', 'tok:CLS'), ('k/n', '1/n'))
>>> a.weights[0]
(Fraction(1, 1), Fraction(0, 1))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from .ir import (
    FFN,
    Activation,
    Affine,
    Classifier,
    FFNStep,
    LayerNorm,
    TokenEmbedding,
)
from .numbers import Number, as_fraction

RELU = Activation(kind="relu")
SIGMA = Activation(kind="sigma")
STEP = Activation(kind="step")


def affine(
    rows: Mapping[str, Mapping[str, Number]],
    *,
    inputs: Iterable[str] | None = None,
    bias: Mapping[str, Number] | None = None,
    outputs: Iterable[str] | None = None,
) -> Affine:
    """An :class:`Affine` from sparse rows ``{output: {input: weight}}``.

    ``inputs`` defaults to the inputs in order of first appearance; ``outputs`` to the rows'
    keys followed by any bias-only outputs. Missing weights are 0.
    """
    bias = dict(bias or {})
    out_names = list(outputs) if outputs is not None else list(rows)
    if outputs is None:
        out_names += [o for o in bias if o not in rows]
    if inputs is None:
        in_names: list[str] = []
        for row in rows.values():
            for name in row:
                if name not in in_names:
                    in_names.append(name)
    else:
        in_names = list(inputs)
    for o, row in rows.items():
        if o not in out_names:
            raise ValueError(f"row {o!r} is not among outputs {out_names}")
        for name in row:
            if name not in in_names:
                raise ValueError(f"row {o!r} reads {name!r}, which is not among inputs {in_names}")
    weights = tuple(
        tuple(as_fraction(rows.get(o, {}).get(i, 0), f"weight[{o!r}, {i!r}]") for i in in_names)
        for o in out_names
    )
    return Affine(
        inputs=tuple(in_names),
        outputs=tuple(out_names),
        weights=weights,
        bias=tuple(as_fraction(bias.get(o, 0), f"bias[{o!r}]") for o in out_names),
    )


def constant(outputs: Mapping[str, Number]) -> Affine:
    """An Affine that reads nothing and outputs constants (e.g. a query of 1)."""
    return affine({}, inputs=(), bias=outputs, outputs=tuple(outputs))


def layernorm(eps: Number = 0, over: Iterable[str] | None = None) -> LayerNorm:
    return LayerNorm(eps=as_fraction(eps, "eps"), over=None if over is None else tuple(over))


def ffn(name: str, *steps: FFNStep) -> FFN:
    return FFN(name=name, steps=tuple(steps))


def token_embedding(
    alphabet: Iterable[str],
    table: Mapping[str, Mapping[str, Number]],
    *,
    positional: Mapping[str, str | tuple[str, Number]] | None = None,
    prefix: Iterable[str] = (),
    suffix: Iterable[str] = (),
    index_base: int = 0,
) -> TokenEmbedding:
    """A :class:`TokenEmbedding` from ``{token: {dim: value}}`` and ``{dim: feature name}``
    (or ``{dim: (feature name, coefficient)}``)."""
    pos: list[tuple[str, str, Fraction]] = []
    for dim, spec in (positional or {}).items():
        feat, coef = (spec, 1) if isinstance(spec, str) else spec
        pos.append((dim, feat, as_fraction(coef, f"positional[{dim!r}] coefficient")))
    return TokenEmbedding(
        alphabet=tuple(alphabet),
        table=tuple(
            (
                token,
                tuple((d, as_fraction(v, f"embedding[{token!r}, {d!r}]")) for d, v in row.items()),
            )
            for token, row in table.items()
        ),
        positional=tuple(pos),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        index_base=index_base,
    )


def classifier(
    weights: Mapping[str, Number] | str, *, position: int = 0, bias: Number = 0
) -> Classifier:
    """A classifier reading ``weights`` (or a single dim name, weight 1) at ``position``."""
    row = {weights: 1} if isinstance(weights, str) else dict(weights)
    return Classifier(logit=affine({"logit": row}, bias={"logit": bias}), position=position)


def fraction(value: Number) -> Fraction:
    """Alias of :func:`netproof.symbolic.numbers.as_fraction` for construction code."""
    return as_fraction(value)
