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
    Convolution,
    DecoderLayer,
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
from .recurrent_ir import (
    BabyNTM,
    Cell,
    Decision,
    GumbelSoftmax,
    JoulinMikolovRNN,
    RecurrentNetwork,
    StackLSTM,
    StackRNN,
    TemperatureSoftmax,
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
            kind = "lightweight" if len(block.kernels) == 1 else "depthwise"
            lines = [f"convolution {block.name} ({res}, post_ln={ln}) {kind} k={block.k} normalizer={norm}"]
            lines += [f"  {o} := conv({i})" for i, o in zip(block.inputs, block.outputs, strict=True)]
            for c, row in enumerate(block.kernels):
                label = "all" if len(block.kernels) == 1 else block.inputs[c]
                entries = " ".join(f"{r}:{v}" for r, v in zip(_offsets(block.k), row, strict=True))
                lines.append(f"  kernel[{label}] w[j−i]: {entries}")
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


def decision_text(d: Decision) -> str:
    match d:
        case Hardmax() | Softmax():
            return normalizer_text(d)
        case TemperatureSoftmax(tau=tau):
            return f"softmax-temp(tau={tau})"
        case GumbelSoftmax(tau=tau, seed=seed):
            return f"gumbel-softmax(tau={tau}, seed={seed})"
        case _:
            assert_never(d)


def _maps(cell_maps: list[tuple[str, Affine]]) -> list[str]:
    return [f"  {name}.{x}" for name, a in cell_maps for x in affine_lines(a)]


def cell_lines(cell: Cell) -> list[str]:
    """The recurrent cell: its kind, fields and every map."""
    head = (
        f"inputs: {' '.join(cell.inputs)}",
        f"hidden: {' '.join(cell.hidden)}",
        f"element: {' '.join(cell.element)}",
    )
    match cell:
        case StackRNN():
            lines = [f"cell stack-rnn activation={cell.activation} gate={cell.gate} decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"]
            maps = [("W_ih", cell.W_ih), ("W_hh", cell.W_hh), ("W_sh", cell.W_sh), ("W_a", cell.W_a), ("W_n", cell.W_n)]
        case StackLSTM():
            lines = [f"cell stack-lstm activation={cell.activation} gate={cell.gate} decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"]
            maps = [
                ("W_i", cell.W_i), ("W_f", cell.W_f), ("W_o", cell.W_o), ("W_g", cell.W_g),
                ("W_sh", cell.W_sh), ("W_a", cell.W_a), ("W_n", cell.W_n),
            ]
        case BabyNTM():
            lines = [
                (
                    f"cell baby-ntm slots={cell.slots} activation={cell.activation} gate={cell.gate} "
                    f"decision={decision_text(cell.decision)} ops={' '.join(cell.op_names)}"
                )
            ]
            for op in cell.ops:
                entries = " ".join(f"({i},{j})={_q(v)}" for i, j, v in op.entries) or "0"
                lines.append(f"  op {op.name}: {entries}")
            maps = [("W_ih", cell.W_ih), ("W_hh", cell.W_hh), ("W_m", cell.W_m), ("W_a", cell.W_a), ("W_n", cell.W_n)]
        case JoulinMikolovRNN():
            lines = [
                (
                    f"cell joulin-mikolov top={cell.top} activation={cell.activation} gate={cell.gate} "
                    f"decision={decision_text(cell.decision)} ops={' '.join(cell.ops)}"
                )
            ]
            maps = [("W_ih", cell.W_ih), ("W_hh", cell.W_hh), ("W_sh", cell.W_sh), ("W_a", cell.W_a), ("W_n", cell.W_n)]
        case _:
            assert_never(cell)
    return lines + [f"  {x}" for x in head] + _maps(maps)


def pretty_recurrent(net: RecurrentNetwork) -> str:
    """The canonical printed form of a recurrent network."""
    lines = [f"recurrent network {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append(f"  input symbols: {' '.join(net.alphabet)}")
    for symbol, row in net.embedding:
        entries = " ".join(f"{d}={_q(v)}" for d, v in row if v != 0) or "0"
        lines.append(f"  embed {symbol}: {entries}")
    if net.initial:
        lines.append("  h0: " + " ".join(f"{d}={_q(v)}" for d, v in net.initial))
    lines += [f"  {x}" for x in cell_lines(net.cell)]
    r = net.readout
    lines.append(
        f"  readout k-hot activation={r.activation}: symbol predicted iff y > {r.threshold}: {' '.join(r.symbols)}"
    )
    lines += [f"    W_y.{x}" for x in affine_lines(r.W_y)]
    return "\n".join(lines) + "\n"


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


def pretty(net: Network | RecurrentNetwork | Seq2Seq) -> str:
    """The canonical printed form of ``net``."""
    if isinstance(net, RecurrentNetwork):
        return pretty_recurrent(net)
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


def fingerprint(net: Network | RecurrentNetwork | Seq2Seq) -> str:
    """sha256 of the canonical printed form."""
    return hashlib.sha256(pretty(net).encode("utf-8")).hexdigest()
