"""Validation of a network's parts against its dims: every name read exists, heads write disjoint
dims, and so on.

On error the message names the block and the dim and prints the IR of the faulty block, the way
JAX's ``check_jaxpr`` shows the equation around a type error. The whole networks run these checks
when they are built (:func:`netproof.symbolic.ir.validate_network`,
:func:`~netproof.symbolic.ir.validate_seq2seq`), and the network-file reader runs
:func:`validate_sublayer` on each sublayer so that its errors carry the sublayer's JSON path.

This module is below the whole networks: it imports the blocks (:mod:`netproof.symbolic.blocks`),
their printed lines (:mod:`netproof.symbolic.block_printing`), the positional features and the
errors, never :mod:`netproof.symbolic.ir`.
"""

from __future__ import annotations

from typing import NoReturn, assert_never

from .block_printing import block_lines, embedding_lines, readout_lines
from .blocks import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FlatEmbedding,
    LayerNorm,
    NextSymbols,
    Sublayer,
    TokenEmbedding,
)
from .errors import NetworkValidationError
from .positional import feature


def fail(message: str, context: list[str]) -> NoReturn:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` with ``message`` and, below
    it, the printed IR around the fault (``context``: its first 40 lines)."""
    shown = "\n".join(f"    | {line}" for line in context[:40])
    more = f"\n    | ... ({len(context) - 40} more lines)" if len(context) > 40 else ""
    raise NetworkValidationError(f"{message}\n  in:\n{shown}{more}")


def check_reads(a: Affine, available: set[str], place: str, what: str, context: list[str]) -> None:
    """Fail unless every input of ``a`` (the map ``what`` of ``place``) is in ``available``."""
    missing = [x for x in a.inputs if x not in available]
    if missing:
        fail(
            f"{place}: {what} reads {', '.join(map(repr, missing))}, which "
            f"{'is' if len(missing) == 1 else 'are'} not available there "
            f"(available: {', '.join(sorted(available)) or 'nothing'})",
            context,
        )


def check_writes(a: Affine, allowed: set[str], place: str, what: str, context: list[str]) -> None:
    """Fail unless every output of ``a`` (the map ``what`` of ``place``) is a residual dim."""
    bad = [x for x in a.outputs if x not in allowed]
    if bad:
        fail(
            f"{place}: {what} writes {', '.join(map(repr, bad))}, which "
            f"{'is not a residual dim' if len(bad) == 1 else 'are not residual dims'}; "
            "add them to the network's dims or fix the name",
            context,
        )


def validate_sublayer(sub: Sublayer, dims: set[str]) -> None:
    """Raise :class:`~netproof.symbolic.errors.NetworkValidationError` unless the sublayer ``sub``
    reads and writes the residual ``dims`` correctly: its maps read names that exist where they
    are applied, its heads write disjoint dims, its layer norms name existing dims."""
    context = block_lines(sub)
    block = sub.block
    match block:
        case AttentionLayer():
            place = f"attention {block.name!r}"
            written: dict[str, str] = {}
            for h in block.heads:
                hp = f"{place} head {h.name!r}"
                check_reads(h.query, dims, hp, "query", context)
                check_reads(h.key, dims, hp, "key", context)
                check_reads(h.value, dims, hp, "value", context)
                if block.output is None:
                    check_writes(h.value, dims, hp, "value", context)
                for out in h.value.outputs:
                    if out in written:
                        fail(
                            f"{hp}: writes {out!r}, which head {written[out]!r} writes too; "
                            "parallel heads write disjoint dims (sum them with the layer's "
                            "output map instead)",
                            context,
                        )
                    written[out] = h.name
            if block.output is not None:
                check_reads(block.output, set(written), place, "output map", context)
                check_writes(block.output, dims, place, "output map", context)
        case FFN():
            place = f"ffn {block.name!r}"
            current: set[str] = dims
            for idx, step in enumerate(block.steps):
                match step:
                    case Affine():
                        check_reads(step, current, place, f"step [{idx}]", context)
                        if idx == len(block.steps) - 1:
                            check_writes(step, dims, place, f"step [{idx}] (output)", context)
                        current = set(step.outputs)
                    case Activation():
                        pass
                    case LayerNorm():
                        if step.over is not None:
                            missing = [x for x in step.over if x not in current]
                            if missing:
                                fail(
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
                fail(
                    f"{place}: reads {', '.join(map(repr, missing))}, which are not residual dims",
                    context,
                )
            bad = [x for x in block.outputs if x not in dims]
            if bad:
                fail(
                    f"{place}: writes {', '.join(map(repr, bad))}, which are not residual dims; "
                    "add them to the network's dims or fix the name",
                    context,
                )
        case _:
            assert_never(block)
    if sub.post_ln is not None and sub.post_ln.over is not None:
        missing = [x for x in sub.post_ln.over if x not in dims]
        if missing:
            fail(f"{block.name!r}: post-residual layer norm over unknown dims {missing}", context)


def validate_token_embedding(emb: TokenEmbedding, dims: set[str]) -> None:
    """Fail unless every embedding row and positional feature writes one of ``dims`` and every
    positional feature is a registered one."""
    context = embedding_lines(emb)
    for token, row in emb.table:
        for dim, _ in row:
            if dim not in dims:
                fail(f"embedding of token {token!r} writes unknown dim {dim!r}", context)
    for dim, feat, _coef in emb.positional:
        if dim not in dims:
            fail(f"positional feature {feat!r} writes unknown dim {dim!r}", context)
        feature(feat)


def validate_embedding(emb: TokenEmbedding | FlatEmbedding, dims: set[str]) -> None:
    """Fail unless the input ``emb`` writes ``dims`` only (see :func:`validate_token_embedding`;
    a flat input's dims must all be network dims)."""
    match emb:
        case TokenEmbedding():
            validate_token_embedding(emb, dims)
        case FlatEmbedding():
            missing = [d for d in emb.dims if d not in dims]
            if missing:
                fail(f"flat input dims {missing} are not network dims", embedding_lines(emb))
        case _:
            assert_never(emb)


def validate_readout(r: Classifier | NextSymbols, dims: set[str]) -> None:
    """Fail unless the readout ``r`` reads ``dims`` only."""
    match r:
        case Classifier():
            check_reads(r.logit, dims, "readout", "logit", readout_lines(r))
        case NextSymbols():
            for symbol, dim in r.scores:
                if dim not in dims:
                    fail(f"readout: symbol {symbol!r} reads unknown dim {dim!r}", readout_lines(r))
        case _:
            assert_never(r)
