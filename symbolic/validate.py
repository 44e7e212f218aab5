"""Whole-network validation: every name read exists, heads write disjoint dims, and so on.

On error the message names the block and the dim and prints the IR of the faulty block, the way
JAX's ``check_jaxpr`` shows the equation around a type error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from .errors import NetworkValidationError
from .positional import feature

if TYPE_CHECKING:
    from .ir import Affine, Network, Seq2Seq, Sublayer, TokenEmbedding


def _fail(message: str, context: list[str]) -> None:
    shown = "\n".join(f"    | {line}" for line in context[:40])
    more = f"\n    | ... ({len(context) - 40} more lines)" if len(context) > 40 else ""
    raise NetworkValidationError(f"{message}\n  in:\n{shown}{more}")


def _reads(a: Affine, available: set[str], place: str, what: str, context: list[str]) -> None:
    missing = [x for x in a.inputs if x not in available]
    if missing:
        _fail(
            f"{place}: {what} reads {', '.join(map(repr, missing))}, which "
            f"{'is' if len(missing) == 1 else 'are'} not available there "
            f"(available: {', '.join(sorted(available)) or 'nothing'})",
            context,
        )


def _writes(a: Affine, allowed: set[str], place: str, what: str, context: list[str]) -> None:
    bad = [x for x in a.outputs if x not in allowed]
    if bad:
        _fail(
            f"{place}: {what} writes {', '.join(map(repr, bad))}, which "
            f"{'is not a residual dim' if len(bad) == 1 else 'are not residual dims'}; "
            "add them to the network's dims or fix the name",
            context,
        )


def _validate_sublayer(sub: Sublayer, dims: set[str]) -> None:
    from .ir import FFN, Activation, Affine, AttentionLayer, Convolution, LayerNorm
    from .printing import block_lines

    context = block_lines(sub)
    block = sub.block
    match block:
        case AttentionLayer():
            place = f"attention {block.name!r}"
            written: dict[str, str] = {}
            for h in block.heads:
                hp = f"{place} head {h.name!r}"
                _reads(h.query, dims, hp, "query", context)
                _reads(h.key, dims, hp, "key", context)
                _reads(h.value, dims, hp, "value", context)
                if block.output is None:
                    _writes(h.value, dims, hp, "value", context)
                for out in h.value.outputs:
                    if out in written:
                        _fail(
                            f"{hp}: writes {out!r}, which head {written[out]!r} writes too; "
                            "parallel heads write disjoint dims (sum them with the layer's "
                            "output map instead)",
                            context,
                        )
                    written[out] = h.name
            if block.output is not None:
                _reads(block.output, set(written), place, "output map", context)
                _writes(block.output, dims, place, "output map", context)
        case FFN():
            place = f"ffn {block.name!r}"
            current: set[str] = dims
            for idx, step in enumerate(block.steps):
                match step:
                    case Affine():
                        _reads(step, current, place, f"step [{idx}]", context)
                        if idx == len(block.steps) - 1:
                            _writes(step, dims, place, f"step [{idx}] (output)", context)
                        current = set(step.outputs)
                    case Activation():
                        pass
                    case LayerNorm():
                        if step.over is not None:
                            missing = [x for x in step.over if x not in current]
                            if missing:
                                _fail(
                                    f"{place}: step [{idx}] layer norm over {missing}, which the "
                                    f"previous step does not produce",
                                    context,
                                )
                    case _:
                        assert_never(step)
        case Convolution():
            place = f"convolution {block.name!r}"
            missing = [x for x in block.inputs if x not in dims]
            if missing:
                _fail(f"{place}: reads {', '.join(map(repr, missing))}, which are not residual dims", context)
            bad = [x for x in block.outputs if x not in dims]
            if bad:
                _fail(
                    f"{place}: writes {', '.join(map(repr, bad))}, which are not residual dims; "
                    "add them to the network's dims or fix the name",
                    context,
                )
        case _:
            assert_never(block)
    if sub.post_ln is not None and sub.post_ln.over is not None:
        missing = [x for x in sub.post_ln.over if x not in dims]
        if missing:
            _fail(f"{block.name!r}: post-residual layer norm over unknown dims {missing}", context)


def block_lines_of(sub: Sublayer) -> list[str]:
    from .printing import block_lines

    return block_lines(sub)


def _validate_token_embedding(emb: TokenEmbedding, dims: set[str]) -> None:
    from .printing import embedding_lines

    context = embedding_lines(emb)
    for token, row in emb.table:
        for dim, _ in row:
            if dim not in dims:
                _fail(f"embedding of token {token!r} writes unknown dim {dim!r}", context)
    for dim, feat, _coef in emb.positional:
        if dim not in dims:
            _fail(f"positional feature {feat!r} writes unknown dim {dim!r}", context)
        feature(feat)


def validate_seq2seq(net: Seq2Seq) -> None:
    """Raise :class:`NetworkValidationError` if the encoder–decoder ``net`` is malformed: every
    sublayer reads and writes residual dims, names are unique, the seed, the decoder positional
    encoding, the output map F and the halting unit use residual dims."""
    from .ir import TokenEmbedding
    from .printing import seq2seq_head_lines

    dims = set(net.dims)
    context = seq2seq_head_lines(net)
    if not isinstance(net.embedding, TokenEmbedding):
        _fail(f"seq2seq {net.name!r}: the encoder input must be a TokenEmbedding", context)
    _validate_token_embedding(net.embedding, dims)
    seen: set[str] = {"input", "y", "F"}
    subs = [*net.encoder, *(s for layer in net.decoder for s in (layer.self_attention, layer.cross_attention, layer.ffn))]
    for sub in subs:
        if sub.name in seen:
            _fail(
                f"sublayer name {sub.name!r} is used twice (or is one of the reserved names input, y, F); "
                "traces and claims refer to states by name, so give each sublayer its own",
                block_lines_of(sub),
            )
        seen.add(sub.name)
        _validate_sublayer(sub, dims)
    for dim, value in net.seed:
        if dim not in dims:
            _fail(f"seq2seq {net.name!r}: the seed ỹ_0 sets unknown dim {dim!r}", context)
        from .ir import _check_fraction

        _check_fraction(value, f"seed[{dim!r}]")
    for dim, feat, coef in net.decoder_positional:
        if dim not in dims:
            _fail(f"decoder positional feature {feat!r} writes unknown dim {dim!r}", context)
        feature(feat)
        from .ir import _check_fraction

        _check_fraction(coef, f"decoder_positional[{dim!r}] coefficient")
    _reads(net.output, dims, "output map F", "F", context)
    _writes(net.output, dims, "output map F", "F", context)
    _reads(net.halting.unit, dims, "halting", "unit", context)


def validate_network(net: Network) -> None:
    """Raise :class:`NetworkValidationError` if ``net`` is malformed."""
    from .ir import Classifier, FlatEmbedding, NextSymbols, TokenEmbedding
    from .printing import embedding_lines, readout_lines

    dims = set(net.dims)
    emb = net.embedding
    match emb:
        case TokenEmbedding():
            _validate_token_embedding(emb, dims)
        case FlatEmbedding():
            missing = [d for d in emb.dims if d not in dims]
            if missing:
                _fail(f"flat input dims {missing} are not network dims", embedding_lines(emb))
        case _:
            assert_never(emb)
    seen: set[str] = {"input"}
    for sub in net.layers:
        if sub.name in seen:
            _fail(
                f"sublayer name {sub.name!r} is used twice (or is the reserved name 'input'); "
                "traces and claims refer to states by name, so give each sublayer its own",
                block_lines_of(sub),
            )
        seen.add(sub.name)
        _validate_sublayer(sub, dims)
    r = net.readout
    match r:
        case Classifier():
            _reads(r.logit, dims, "readout", "logit", readout_lines(r))
        case NextSymbols():
            for symbol, dim in r.scores:
                if dim not in dims:
                    _fail(f"readout: symbol {symbol!r} reads unknown dim {dim!r}", readout_lines(r))
        case _:
            assert_never(r)
