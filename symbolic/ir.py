"""The network IR: frozen dataclasses with exact weights and named residual dimensions.

A network is data only. It is evaluated by the interpreters (:mod:`netproof.symbolic.exact`,
:mod:`netproof.symbolic.sympy_interp`, later torch and the z3 encoder), never by methods of its own.

The set of blocks is closed:

- :class:`Affine`: ``y[o] = Σ_i W[o, i]·x[i] + b[o]`` over *named* inputs and outputs.
- :class:`FFN`: a position-wise feed-forward sublayer, a sequence of :class:`Affine`,
  :class:`Activation` (``relu``, ``sigma`` = clip to [0, 1], ``step`` = I[x > 0], ``gelu`` = x·Φ(x)) and
  :class:`LayerNorm` steps (layer norm inside an FFN branch, on a named sub-vector).
- :class:`Head` and :class:`AttentionLayer`: attention with the semantics papers disagree on
  written as fields: scoring (``dot`` or ``neg_abs_dot`` = −|⟨q, k⟩|), :class:`Scale`
  (constant, 1/√d, ln n), normalizer (:class:`Hardmax` with a tie rule, or :class:`Softmax`
  with base ``r`` = e^{ln r} or e^{c}), mask, and what an empty masked set yields.
  Relative positions (Chang et al. 2021) are fields of :class:`Head` too: a fixed bias
  β_{j−i} added to the logits (:class:`RelativeBias`, T5-style, Eq. 4), a query-dynamic kernel
  ⟨q_i, W^C_{j−i}⟩ (``query_conv``, Shaw et al., Eq. 5), a key-based kernel ⟨k_j, W^{C'}_{j−i}⟩
  (``key_conv``, Huang et al.); Eq. 6's composite attention is ``query_conv`` with a bias.
- :class:`Convolution`: a lightweight or depthwise convolution over positions (Chang Eqs. 2–3),
  optionally with softmax-normalized kernels (Wu et al.'s lightweight convolution).
- :class:`Sublayer`: a block with a structural residual connection and an optional post-residual
  :class:`LayerNorm`.
- Inputs: :class:`TokenEmbedding` (one vector per token, special tokens added by the network,
  positional features by name) or :class:`FlatEmbedding` (a fixed-length word as one vector,
  for plain FFNNs such as Rumelhart's).
- Readouts: :class:`Classifier` (a logit at one position, accept iff logit > 0) and
  :class:`NextSymbols` (a generator's allowed next symbols at every position).

Every number is a :class:`fractions.Fraction`; use the builders in :mod:`netproof.symbolic.builders`
to write ints, Fractions or ``"p/q"`` strings and get Fractions.

This module defines the whole networks, :class:`Network` and :class:`Seq2Seq`, and checks each
one whole when it is built (:func:`validate_network`, :func:`validate_seq2seq`: the checks name
the network classes, so they live beside them); every block is defined in
:mod:`netproof.symbolic.blocks` and re-exported here, so ``netproof.symbolic.ir`` names the whole
IR. It imports the blocks, the field checks, the validation of a network's parts
(:mod:`netproof.symbolic.validate`), the printed lines its errors show
(:mod:`netproof.symbolic.block_printing`) and the notebook display's HTML helpers
(:mod:`netproof.symbolic.display`); networks print as one line (``repr``: kind, size, name); the printed form of whole networks
(:mod:`netproof.symbolic.printing`) and every interpreter are above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass
from fractions import Fraction
from typing import TypeAlias

from .block_printing import (
    affine_lines,
    block_lines,
    decoder_layer_lines,
    embedding_lines,
    rational_text,
    readout_lines,
)
from .blocks import (
    ACTIVATIONS,
    EMPTY_RULES,
    FFN,
    MASKS,
    OUTSIDE_RULES,
    SCORINGS,
    TIE_RULES,
    AcceptRule,
    Activation,
    ActivationKind,
    Affine,
    AttentionLayer,
    Block,
    Classifier,
    Convolution,
    DecoderLayer,
    Embedding,
    EmptyRule,
    FFNStep,
    FlatEmbedding,
    Halting,
    Hardmax,
    Head,
    LayerNorm,
    Mask,
    NextSymbols,
    Normalizer,
    Outside,
    Readout,
    RelativeBias,
    RelativeKernel,
    Scale,
    Scoring,
    Softmax,
    Sublayer,
    TieRule,
    TokenEmbedding,
    relative_index,
)
from .checks import check_fraction, check_names
from .display import pre_html, summary_html
from .positional import feature
from .validate import (
    check_reads,
    check_writes,
    fail,
    validate_embedding,
    validate_readout,
    validate_sublayer,
    validate_token_embedding,
)

__all__ = [
    "ACTIVATIONS",
    "EMPTY_RULES",
    "FFN",
    "MASKS",
    "OUTSIDE_RULES",
    "SCORINGS",
    "TIE_RULES",
    "AcceptRule",
    "Activation",
    "ActivationKind",
    "Affine",
    "AnyNetwork",
    "AttentionLayer",
    "Block",
    "Classifier",
    "Convolution",
    "DecoderLayer",
    "Embedding",
    "EmptyRule",
    "FFNStep",
    "FlatEmbedding",
    "Halting",
    "Hardmax",
    "Head",
    "LayerNorm",
    "Mask",
    "Network",
    "NextSymbols",
    "Normalizer",
    "Outside",
    "Readout",
    "RelativeBias",
    "RelativeKernel",
    "Scale",
    "Scoring",
    "Seq2Seq",
    "Softmax",
    "Sublayer",
    "TieRule",
    "TokenEmbedding",
    "network_lines",
    "relative_index",
    "seq2seq_head_lines",
    "seq2seq_lines",
    "validate_network",
    "validate_seq2seq",
]


# --------------------------------------------------------------------------- network


@dataclass(frozen=True, slots=True, kw_only=True)
class Network:
    """A whole network: named residual dims, an input embedding, sublayers, a readout.

    ``params`` records the builder's parameters (printed and fingerprinted); ``reference``
    cites the paper section the network implements.
    """

    name: str
    dims: tuple[str, ...]
    embedding: Embedding
    layers: tuple[Sublayer, ...]
    readout: Readout
    params: tuple[tuple[str, str], ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        check_names(self.dims, f"network {self.name!r} dims")
        validate_network(self)

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.embedding.alphabet

    def __repr__(self) -> str:
        """One line: the kind, the size and the name (the whole form: ``print(pretty(net))``)."""
        return (
            f"<Network {_title(self.name, self.params)}: {_count(len(self.layers), 'sublayer')}, "
            f"{_count(_heads(self.layers), 'head')}, {_count(len(self.dims), 'dim')}>"
        )

    def _repr_html_(self) -> str:
        """For notebooks: a summary (name, reference, blocks, dims, heads, parameters), then the
        printed form folded."""
        blocks = [s.name for s in self.layers]
        rows = [
            ("reference", self.reference or "—"),
            ("alphabet", " ".join(self.alphabet)),
            ("sublayers", f"{len(blocks)}: {_listed(blocks)}"),
            ("heads", str(_heads(self.layers))),
            ("dims", f"{len(self.dims)}: {_listed(self.dims)}"),
            ("parameters", _parameters(self)),
        ]
        return summary_html(
            f"Network {_title(self.name, self.params)}",
            rows,
            "\n".join(network_lines(self)),
            "the printed form, every weight exact",
        )


def _listed(names: Sequence[str], most: int = 12) -> str:
    shown = ", ".join(names[:most])
    return shown + (f", … ({len(names) - most} more)" if len(names) > most else "")


def _parameters(net: Network) -> str:
    """How many rationals the network holds (weights, biases, embedding values, positional
    coefficients, scales) and how many of them are not 0."""
    total = nonzero = 0
    stack: list[object] = [net]
    while stack:
        node = stack.pop()
        if isinstance(node, Fraction):
            total += 1
            nonzero += node != 0
        elif isinstance(node, tuple):
            stack.extend(node)
        elif is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in fields(node))
    return f"{total:,} exact rationals, {nonzero:,} of them nonzero"


def _title(name: str, params: tuple[tuple[str, str], ...]) -> str:
    return name + (f"({', '.join(f'{k}={v}' for k, v in params)})" if params else "")


def _count(k: int, what: str) -> str:
    """``1 head``, ``2 heads``: a count with its noun in the number it takes."""
    return f"{k} {what}" if k == 1 else f"{k} {what}s"


def _heads(layers: tuple[Sublayer, ...]) -> int:
    return sum(len(s.block.heads) for s in layers if isinstance(s.block, AttentionLayer))


def network_lines(net: Network) -> list[str]:
    """The lines of a network's canonical printed form (:func:`netproof.symbolic.printing.pretty`
    joins them): header, dims, embedding, one block per sublayer, readout."""
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
    return lines


# --------------------------------------------------------------------------- encoder–decoder


@dataclass(frozen=True, slots=True, kw_only=True)
class Seq2Seq:
    """An encoder–decoder transformer whose decoder feeds its own output back (Bhattamishra,
    Patel & Goyal 2020, §3.2 and eqs. 5–7).

    Encoder and decoder share the named residual ``dims`` (the paper's one width d).

    - The encoder embeds ``prefix + word + suffix`` with ``embedding`` and applies ``encoder``
      (ordinary sublayers); its final rows are the memory Z the cross-attentions read.
    - The decoder starts from ``seed`` (ỹ_0, sparse: unlisted dims are 0). At step t,
      y_t = ỹ_t + Σ coef·feature(t, n) over ``decoder_positional`` (feature names from
      :mod:`netproof.symbolic.positional`, evaluated at i = t, the decoder step, and n = the number of
      encoder tokens). y_t goes through the ``decoder`` layers to z_t; ``output`` (the paper's F,
      an Affine from dims to dims) gives ỹ_{t+1} = F(z_t).
    - ``halting`` is checked on every y_t, from y_0 on; the run stops at the first halting step.
    """

    name: str
    dims: tuple[str, ...]
    embedding: TokenEmbedding
    encoder: tuple[Sublayer, ...]
    decoder: tuple[DecoderLayer, ...]
    output: Affine
    seed: tuple[tuple[str, Fraction], ...]
    halting: Halting
    decoder_positional: tuple[tuple[str, str, Fraction], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    reference: str = ""

    def __post_init__(self) -> None:
        check_names(self.dims, f"seq2seq {self.name!r} dims")
        validate_seq2seq(self)

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.embedding.alphabet

    def __repr__(self) -> str:
        """One line: the kind, the size and the name (the whole form: ``print(pretty(net))``)."""
        layers = (
            *self.encoder,
            *(s for d in self.decoder for s in (d.self_attention, d.cross_attention, d.ffn)),
        )
        return (
            f"<Seq2Seq {_title(self.name, self.params)}: "
            f"{_count(len(self.encoder), 'encoder sublayer')}, "
            f"{_count(len(self.decoder), 'decoder layer')}, {_count(_heads(layers), 'head')}, "
            f"{_count(len(self.dims), 'dim')}>"
        )

    def _repr_html_(self) -> str:
        """The printed form, for notebooks."""
        return pre_html("\n".join(seq2seq_lines(self)))


AnyNetwork: TypeAlias = Network | Seq2Seq


# --------------------------------------------------------------------------- whole-network checks


def validate_network(net: Network) -> None:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` if ``net`` is malformed: its
    input writes network dims, every sublayer has its own name and reads and writes residual dims
    (:func:`netproof.symbolic.validate.validate_sublayer`), its readout reads network dims."""
    dims = set(net.dims)
    validate_embedding(net.embedding, dims)
    seen: set[str] = {"input"}
    for sub in net.layers:
        if sub.name in seen:
            fail(
                f"sublayer name {sub.name!r} is used twice (or is the reserved name 'input'); "
                "traces and claims refer to states by name, so give each sublayer its own",
                block_lines(sub),
            )
        seen.add(sub.name)
        validate_sublayer(sub, dims)
    validate_readout(net.readout, dims)


def validate_seq2seq(net: Seq2Seq) -> None:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` if the encoder–decoder
    ``net`` is malformed: every sublayer reads and writes residual dims, names are unique, the
    seed, the decoder positional encoding, the output map F and the halting unit use residual
    dims."""
    dims = set(net.dims)
    context = seq2seq_head_lines(net)
    if not isinstance(net.embedding, TokenEmbedding):
        fail(f"seq2seq {net.name!r}: the encoder input must be a TokenEmbedding", context)
    validate_token_embedding(net.embedding, dims)
    seen: set[str] = {"input", "y", "F"}
    subs = [
        *net.encoder,
        *(
            s
            for layer in net.decoder
            for s in (layer.self_attention, layer.cross_attention, layer.ffn)
        ),
    ]
    for sub in subs:
        if sub.name in seen:
            fail(
                f"sublayer name {sub.name!r} is used twice (or is one of the reserved names input, y, F); "
                "traces and claims refer to states by name, so give each sublayer its own",
                block_lines(sub),
            )
        seen.add(sub.name)
        validate_sublayer(sub, dims)
    for dim, value in net.seed:
        if dim not in dims:
            fail(f"seq2seq {net.name!r}: the seed ỹ_0 sets unknown dim {dim!r}", context)
        check_fraction(value, f"seed[{dim!r}]")
    for dim, feat, coef in net.decoder_positional:
        if dim not in dims:
            fail(f"decoder positional feature {feat!r} writes unknown dim {dim!r}", context)
        feature(feat)
        check_fraction(coef, f"decoder_positional[{dim!r}] coefficient")
    check_reads(net.output, dims, "output map F", "F", context)
    check_writes(net.output, dims, "output map F", "F", context)
    check_reads(net.halting.unit, dims, "halting", "unit", context)


def seq2seq_lines(net: Seq2Seq) -> list[str]:
    """The lines of an encoder–decoder's canonical printed form: the header
    (:func:`seq2seq_head_lines`), the encoder's blocks, the decoder's layers."""
    lines = seq2seq_head_lines(net)
    for sub in net.encoder:
        lines += [f"  encoder {x}" for x in block_lines(sub)]
    for layer in net.decoder:
        lines += [f"  {x}" for x in decoder_layer_lines(layer)]
    return lines


def seq2seq_head_lines(net: Seq2Seq) -> list[str]:
    """The encoder–decoder's header: dims, embedding, seed, decoder positions, F, halting.

    The first lines of its printed form (:func:`netproof.symbolic.printing.pretty`), and the
    context :func:`validate_seq2seq`'s errors show."""
    lines = [f"seq2seq {net.name}"]
    if net.reference:
        lines.append(f"  reference: {net.reference}")
    if net.params:
        lines.append("  params: " + " ".join(f"{k}={v}" for k, v in net.params))
    lines.append("  dims: " + " ".join(net.dims))
    lines += [f"  encoder {x}" for x in embedding_lines(net.embedding)]
    lines.append(
        "  decoder seed ỹ_0: "
        + (" ".join(f"{d}={rational_text(v)}" for d, v in net.seed if v != 0) or "0")
    )
    for dim, feat, coef in net.decoder_positional:
        lines.append(
            f"  decoder pos {dim} += {feat}(t)"
            if coef == 1
            else f"  decoder pos {dim} += {coef}*{feat}(t)"
        )
    if not net.decoder_positional:
        lines.append("  decoder pos: none (y_t = ỹ_t)")
    lines += [f"  output F: {x}" for x in affine_lines(net.output)]
    lines.append(f"  halting: first t with unit = {net.halting.value}")
    lines += [f"    {x}" for x in affine_lines(net.halting.unit)]
    return lines
