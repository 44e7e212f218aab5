"""A network's size: its depth in layers, its attention heads and its residual width, read off the IR.

:func:`network_size` works on every network of the IR (a :class:`~netproof.symbolic.ir.Network`,
an encoder–decoder :class:`~netproof.symbolic.ir.Seq2Seq`, a
:class:`~netproof.symbolic.recurrent_ir.RecurrentNetwork`); ``netproof list`` and ``netproof run
--json`` report it for every construction, and the RASP compiler's benchmark measures it.

- ``layers``: the sublayers that mix positions (attention, convolution), i.e. the transformer's
  depth: an attention sublayer and the FFNs after it are one layer; one for a recurrent cell; an
  encoder–decoder counts its encoder's and its decoder's layers;
- ``heads``: the attention heads of every layer (self- and cross-attention included);
- ``dims``: the residual stream's named dims (a recurrent network: its hidden units);
- ``sublayers``: every block (attention, FFN, convolution; a decoder layer is three).

May import: the IR only.

>>> from netproof.symbolic import Network, classifier, token_embedding
>>> from netproof.symbolic.gadgets import attention, sublayers, uniform_average
>>> net = Network(
...     name="majority", dims=("is1", "frac"),
...     embedding=token_embedding(("0", "1"), {"0": {}, "1": {"is1": 1}}),
...     layers=sublayers(attention("count", uniform_average("ones", {"frac": {"is1": 1}}, mask="none"))),
...     readout=classifier({"frac": 1}, bias="-1/2"),
... )
>>> network_size(net)
NetworkSize(layers=1, heads=1, dims=2, sublayers=1)
>>> network_size(net).to_json()
{'layers': 1, 'heads': 1, 'dims': 2, 'sublayers': 1}
>>> print(network_size(net))
1 layer, 1 head, 2 dims
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from .blocks import FFN, AttentionLayer, Convolution, Sublayer
from .ir import Network, Seq2Seq
from .recurrent_ir import RecurrentNetwork

__all__ = ["NetworkSize", "network_size"]


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkSize:
    """How big a network is (see the module's docstring for what each count counts)."""

    layers: int
    heads: int
    dims: int
    sublayers: int

    def to_json(self) -> dict[str, int]:
        """``{"layers": …, "heads": …, "dims": …, "sublayers": …}``, as ``run --json`` prints it."""
        return {
            "layers": self.layers,
            "heads": self.heads,
            "dims": self.dims,
            "sublayers": self.sublayers,
        }

    def __str__(self) -> str:
        def count(k: int, what: str) -> str:
            return f"{k} {what}" if k == 1 else f"{k} {what}s"

        return (
            f"{count(self.layers, 'layer')}, {count(self.heads, 'head')}, {count(self.dims, 'dim')}"
        )


def _mixing(subs: Sequence[Sublayer]) -> tuple[int, int]:
    """(layers, heads) of a stack of sublayers: attention and convolution sublayers, and heads."""
    layers = heads = 0
    for sub in subs:
        block = sub.block
        match block:
            case AttentionLayer():
                layers += 1
                heads += len(block.heads)
            case Convolution():
                layers += 1
            case FFN():
                pass
            case _:
                assert_never(block)
    return layers, heads


def network_size(net: Network | Seq2Seq | RecurrentNetwork) -> NetworkSize:
    """The size of any network of the IR."""
    match net:
        case Network():
            layers, heads = _mixing(net.layers)
            return NetworkSize(
                layers=layers, heads=heads, dims=len(net.dims), sublayers=len(net.layers)
            )
        case Seq2Seq():
            layers, heads = _mixing(net.encoder)
            for dec in net.decoder:
                _, self_heads = _mixing((dec.self_attention,))
                _, cross_heads = _mixing((dec.cross_attention,))
                layers += 1
                heads += self_heads + cross_heads
            return NetworkSize(
                layers=layers,
                heads=heads,
                dims=len(net.dims),
                sublayers=len(net.encoder) + 3 * len(net.decoder),
            )
        case RecurrentNetwork():
            return NetworkSize(layers=1, heads=0, dims=len(net.cell.hidden), sublayers=1)
        case _:
            raise TypeError(
                f"network_size takes a Network, a Seq2Seq or a RecurrentNetwork, not {type(net).__name__}"
            )
