"""The canonical printed lines of the IR's blocks, embeddings, readouts and decoder layers.

One block per line group (jaxpr-like), rationals as ``p/q``, zero weights left out. The whole
networks' printed form and fingerprint (:func:`netproof.symbolic.printing.pretty`,
:func:`~netproof.symbolic.printing.fingerprint`) are made of these lines; validation shows them
around a fault (:mod:`netproof.symbolic.validate`), which is why they sit below the whole networks:
this module imports only :mod:`netproof.symbolic.blocks`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import assert_never

from .blocks import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    DecoderLayer,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    NextSymbols,
    RelativeBias,
    RelativeKernel,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
)


def affine_lines(a: Affine) -> list[str]:
    """``out := w·in + ... + b`` per output, zero terms left out."""
    lines = []
    for out, row, b in zip(a.outputs, a.weights, a.bias, strict=True):
        terms = [f"{w}*{name}" for name, w in zip(a.inputs, row, strict=True) if w != 0]
        if b != 0 or not terms:
            terms.append(str(b))
        lines.append(f"{out} := {' + '.join(terms)}")
    return lines


def scale_text(s: Scale) -> str:
    """The attention scale as a product such as ``2·1/√4·n·ln n``: only the factors the scale has,
    and the coefficient only when it is not 1 or is the only factor."""
    parts = []
    if s.coef != 1 or (s.sqrt_d is None and not s.log_n and not s.times_n):
        parts.append(str(s.coef))
    if s.sqrt_d is not None:
        parts.append(f"1/√{s.sqrt_d}")
    if s.times_n:
        parts.append("n")
    if s.log_n:
        parts.append("ln n")
    return "·".join(parts)


def normalizer_text(nz: Hardmax | Softmax) -> str:
    """``hardmax(tie=...)`` or ``softmax(base=...)``, with the base as the IR holds it."""
    match nz:
        case Hardmax(tie=tie):
            return f"hardmax(tie={tie})"
        case Softmax(r=r, c=c, symbol=sym):
            if r is not None:
                return f"softmax(base={sym}={r}, i.e. c=ln {r})"
            return f"softmax(base={sym}=e^{c})"
        case _:
            assert_never(nz)


def layernorm_text(ln: LayerNorm) -> str:
    """``layernorm(eps=..., over=...)``."""
    over = "all" if ln.over is None else "[" + ", ".join(ln.over) + "]"
    return f"layernorm(eps={ln.eps}, over={over})"


def head_lines(h: Head) -> list[str]:
    """One attention head: its semantics on the first line, then its q, k, v maps and relative terms."""
    lines = [
        f"head {h.name}: scoring={h.scoring} scale={scale_text(h.scale)} "
        f"normalizer={normalizer_text(h.normalizer)} mask={h.mask} empty={h.empty}"
    ]
    lines += [f"  q.{x}" for x in affine_lines(h.query)]
    lines += [f"  k.{x}" for x in affine_lines(h.key)]
    lines += [f"  v.{x}" for x in affine_lines(h.value)]
    if h.relative_bias is not None:
        lines.append(f"  {relative_bias_text(h.relative_bias)}")
    if h.query_conv is not None:
        lines.append(f"  query_conv {relative_kernel_text(h.query_conv, h.query.outputs)}")
    if h.key_conv is not None:
        lines.append(f"  key_conv {relative_kernel_text(h.key_conv, h.query.outputs)}")
    return lines


def _offsets(k: int) -> range:
    return range(-k, k + 1)


def relative_bias_text(b: RelativeBias) -> str:
    """``bias β[j−i]: -1:b 0:b 1:b (outside ±k: zero|clip)``."""
    entries = " ".join(f"{r}:{v}" for r, v in zip(_offsets(b.k), b.beta, strict=True))
    return f"bias β[j−i]: {entries} (outside ±{b.k}: {b.outside})"


def relative_kernel_text(w: RelativeKernel, names: tuple[str, ...]) -> str:
    """``W[j−i]: -1:[q1=1] 0:[0] 1:[q2=1] (outside ±k: zero|clip)``, nonzero entries by q/k name."""
    cols = []
    for r, col in zip(_offsets(w.k), w.columns, strict=True):
        entries = " ".join(f"{x}={v}" for x, v in zip(names, col, strict=True) if v != 0) or "0"
        cols.append(f"{r}:[{entries}]")
    return f"W[j−i]: {' '.join(cols)} (outside ±{w.k}: {w.outside})"


def block_lines(sub: Sublayer) -> list[str]:
    """One sublayer: the block, its residual connection and post layer norm, then its maps."""
    block = sub.block
    ln = "none" if sub.post_ln is None else layernorm_text(sub.post_ln)
    res = "residual" if sub.residual else "no residual"
    match block:
        case AttentionLayer():
            lines = [f"attention {block.name} ({res}, post_ln={ln})"]
            if not block.heads:
                lines.append("  (no heads: does nothing)")
            for h in block.heads:
                lines += [f"  {x}" for x in head_lines(h)]
            if block.output is not None:
                lines += [f"  out.{x}" for x in affine_lines(block.output)]
            return lines
        case FFN():
            lines = [f"ffn {block.name} ({res}, post_ln={ln})"]
            if not block.steps:
                lines.append("  (no steps: does nothing)")
            for idx, step in enumerate(block.steps):
                match step:
                    case Affine():
                        lines += [f"  [{idx}] {x}" for x in affine_lines(step)]
                    case Activation(kind=kind):
                        lines.append(f"  [{idx}] {kind}")
                    case LayerNorm():
                        lines.append(f"  [{idx}] {layernorm_text(step)}")
                    case _:
                        assert_never(step)
            return lines
        case Convolution():
            norm = "none" if block.normalizer is None else normalizer_text(block.normalizer)
            conv = "lightweight" if len(block.kernels) == 1 else "depthwise"
            lines = [
                f"convolution {block.name} ({res}, post_ln={ln}) {conv} k={block.k} normalizer={norm}"
            ]
            lines += [
                f"  {o} := conv({i})" for i, o in zip(block.inputs, block.outputs, strict=True)
            ]
            for c, row in enumerate(block.kernels):
                label = "all" if len(block.kernels) == 1 else block.inputs[c]
                entries = " ".join(f"{r}:{v}" for r, v in zip(_offsets(block.k), row, strict=True))
                lines.append(f"  kernel[{label}] w[j−i]: {entries}")
            return lines
        case _:
            assert_never(block)


def rational_text(x: Fraction) -> str:
    """A rational as the printed form writes it: ``p/q``, or an integer such as ``-3``."""
    return str(x)


def embedding_lines(emb: TokenEmbedding | FlatEmbedding) -> list[str]:
    """The input: the token sequence, the embedding table and the positional features."""
    match emb:
        case TokenEmbedding():
            seq = " · ".join([*emb.prefix, "w", *emb.suffix])
            lines = [
                f"input tokens {seq}  alphabet={' '.join(emb.alphabet)}  index_base={emb.index_base}"
            ]
            for token, row in emb.table:
                entries = " ".join(f"{d}={rational_text(v)}" for d, v in row if v != 0) or "0"
                lines.append(f"  embed {token}: {entries}")
            for dim, feat, coef in emb.positional:
                lines.append(
                    f"  pos {dim} := {feat}" if coef == 1 else f"  pos {dim} := {coef}*{feat}"
                )
            return lines
        case FlatEmbedding():
            vals = " ".join(f"{s}->{rational_text(v)}" for s, v in emb.values)
            return [
                f"input flat length={emb.length} dims={emb.prefix}1..{emb.prefix}{emb.length} "
                f"alphabet={' '.join(emb.alphabet)} values: {vals}"
            ]
        case _:
            assert_never(emb)


def readout_lines(r: Classifier | NextSymbols) -> list[str]:
    """The readout: a classifier's logit or the next-symbol scores and threshold."""
    match r:
        case Classifier():
            lines = [f"readout classifier at position {r.position}: accept iff logit > 0"]
            lines += [f"  {x}" for x in affine_lines(r.logit)]
            return lines
        case NextSymbols():
            pairs = " ".join(f"{s}<-{d}" for s, d in r.scores)
            if r.softmax is None:
                line = f"readout next-symbols: allowed iff score >= {r.threshold}: {pairs}"
            else:
                line = (
                    f"readout next-symbols: allowed iff {normalizer_text(r.softmax)} of the scores "
                    f">= {r.threshold}: {pairs}"
                )
            return [line + ("" if r.end is None else f"; end symbol {r.end}")]
        case _:
            assert_never(r)


def decoder_layer_lines(layer: DecoderLayer) -> list[str]:
    """One decoder layer: self-attention (causal, sees itself), cross-attention, FFN."""
    lines = [f"decoder layer {layer.name}"]
    lines += [f"  self {x}" for x in block_lines(layer.self_attention)]
    lines += [f"  cross {x}" for x in block_lines(layer.cross_attention)]
    lines += [f"  {x}" for x in block_lines(layer.ffn)]
    return lines
