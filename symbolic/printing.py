"""Canonical printed form of the IR and the network fingerprint (sha256 of that form).

One block per line (jaxpr-like), rationals as ``p/q``, zero weights left out. The form is
deterministic, so its sha256 identifies a network in proof logs.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from typing import assert_never

from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    DecoderLayer,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Seq2Seq,
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
    over = "all" if ln.over is None else "[" + ", ".join(ln.over) + "]"
    return f"layernorm(eps={ln.eps}, over={over})"


def head_lines(h: Head) -> list[str]:
    lines = [
        f"head {h.name}: scoring={h.scoring} scale={scale_text(h.scale)} "
        f"normalizer={normalizer_text(h.normalizer)} mask={h.mask} empty={h.empty}"
    ]
    lines += [f"  q.{x}" for x in affine_lines(h.query)]
    lines += [f"  k.{x}" for x in affine_lines(h.key)]
    lines += [f"  v.{x}" for x in affine_lines(h.value)]
    return lines


def block_lines(sub: Sublayer) -> list[str]:
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
        case _:
            assert_never(block)


def _q(x: Fraction) -> str:
    return str(x)


def embedding_lines(emb: TokenEmbedding | FlatEmbedding) -> list[str]:
    match emb:
        case TokenEmbedding():
            seq = " · ".join([*emb.prefix, "w", *emb.suffix])
            lines = [
                f"input tokens {seq}  alphabet={' '.join(emb.alphabet)}  index_base={emb.index_base}"
            ]
            for token, row in emb.table:
                entries = " ".join(f"{d}={_q(v)}" for d, v in row if v != 0) or "0"
                lines.append(f"  embed {token}: {entries}")
            for dim, feat, coef in emb.positional:
                lines.append(f"  pos {dim} := {feat}" if coef == 1 else f"  pos {dim} := {coef}*{feat}")
            return lines
        case FlatEmbedding():
            vals = " ".join(f"{s}->{_q(v)}" for s, v in emb.values)
            return [
                f"input flat length={emb.length} dims={emb.prefix}1..{emb.prefix}{emb.length} "
                f"alphabet={' '.join(emb.alphabet)} values: {vals}"
            ]
        case _:
            assert_never(emb)


def readout_lines(r: Classifier | NextSymbols) -> list[str]:
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


def seq2seq_head_lines(net: Seq2Seq) -> list[str]:
    """The encoder–decoder's header: dims, embedding, seed, decoder positions, F, halting."""
    lines = [f"seq2seq {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append("  dims: " + " ".join(net.dims))
    lines += [f"  encoder {x}" for x in embedding_lines(net.embedding)]
    lines.append("  decoder seed ỹ_0: " + (" ".join(f"{d}={_q(v)}" for d, v in net.seed if v != 0) or "0"))
    for dim, feat, coef in net.decoder_positional:
        lines.append(f"  decoder pos {dim} += {feat}(t)" if coef == 1 else f"  decoder pos {dim} += {coef}*{feat}(t)")
    if not net.decoder_positional:
        lines.append("  decoder pos: none (y_t = ỹ_t)")
    lines += [f"  output F: {x}" for x in affine_lines(net.output)]
    lines.append(f"  halting: first t with unit = {net.halting.value}")
    lines += [f"    {x}" for x in affine_lines(net.halting.unit)]
    return lines


def decoder_layer_lines(layer: DecoderLayer) -> list[str]:
    """One decoder layer: self-attention (causal, sees itself), cross-attention, FFN."""
    lines = [f"decoder layer {layer.name}"]
    lines += [f"  self {x}" for x in block_lines(layer.self_attention)]
    lines += [f"  cross {x}" for x in block_lines(layer.cross_attention)]
    lines += [f"  {x}" for x in block_lines(layer.ffn)]
    return lines


def pretty(net: Network | Seq2Seq) -> str:
    """The canonical printed form of ``net``."""
    if isinstance(net, Seq2Seq):
        lines = seq2seq_head_lines(net)
        for sub in net.encoder:
            lines += [f"  encoder {x}" for x in block_lines(sub)]
        for layer in net.decoder:
            lines += [f"  {x}" for x in decoder_layer_lines(layer)]
        return "\n".join(lines) + "\n"
    lines = [f"network {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append("  dims: " + " ".join(net.dims))
    lines += [f"  {x}" for x in embedding_lines(net.embedding)]
    for sub in net.layers:
        lines += [f"  {x}" for x in block_lines(sub)]
    lines += [f"  {x}" for x in readout_lines(net.readout)]
    return "\n".join(lines) + "\n"


def fingerprint(net: Network | Seq2Seq) -> str:
    """sha256 of the canonical printed form."""
    return hashlib.sha256(pretty(net).encode("utf-8")).hexdigest()
