"""Network files: any network of the IR as a versioned, deterministic JSON document.

A file holds one network and the sha256 fingerprint of its canonical printed form
(:func:`netproof.symbolic.printing.fingerprint`), so a file that was edited by hand, truncated or written
for another network is caught when it is read. Every rational is a string, ``"p/q"`` or an
integer such as ``"-3"`` (the reader also takes a JSON integer); a JSON number with a fraction
part (``0.5``) is refused, never rounded.

Top level::

    {
      "extra": {...},                 optional: free JSON (construction name, params, claims)
      "fingerprint": "<sha256 hex>",  of symbolic.printing.pretty(network)
      "format": "netproof-network",
      "format_version": 1,
      "network": {"type": "Network", ...}
    }

The network mirrors the IR field for field. Every IR object is a JSON object whose ``"type"``
is the IR class name (``"Affine"``, ``"AttentionLayer"``, ``"Softmax"``, ...) and whose other
keys are exactly the dataclass's fields: all required, none unknown, ``null`` where a field is
``None``. A tuple of names or of tuples is an array in the same order (dims, steps, heads, the
embedding table, positional features, params). The one sparse field: an :class:`~netproof.symbolic.ir.Affine`
writes ``weights`` as ``{output: {input: w}}`` and ``bias`` as ``{output: b}`` with zero entries
left out (the reader takes explicit zeros too); ``inputs`` and ``outputs`` give the order.
The one set of optional fields: a :class:`~netproof.symbolic.ir.Head`'s relative-position fields
(``relative_bias``, ``query_conv``, ``key_conv``) are written only when set, so a file of a
network without them is the same as before they existed; when present they are read strictly.

**Encoder–decoders** (:class:`~netproof.symbolic.ir.Seq2Seq`, Bhattamishra et al. 2020's
Turing-machine simulator) are written with ``"format": "netproof-seq2seq"`` (version 1, the same
top level and fingerprint) and the network object mirrors that class::

    {"type": "Seq2Seq", "name", "dims", "embedding": TokenEmbedding,
     "encoder": [Sublayer, ...],
     "decoder": [{"type": "DecoderLayer", "name", "self_attention": Sublayer,
                  "cross_attention": Sublayer, "ffn": Sublayer}, ...],
     "output": Affine (F), "seed": [[dim, value], ...] (ỹ_0, sparse),
     "halting": {"type": "Halting", "unit": Affine (one output), "value": "1"},
     "decoder_positional": [[dim, feature, coefficient], ...], "params", "reference"}

Every block inside is written as in a network file. Its semantics are the IR's
(:mod:`netproof.symbolic.seq2seq`): the decoder halts at the first step t whose y_t has the
halting unit equal to its value; step t's self-attention sees the steps j <= t, its
cross-attention the encoder positions its mask lets index t see; y_{t+1} = F(z_t) plus the
decoder positional features at i = t + 1 (n = the encoder's tokens). netproof writes these files
for readers outside it (the kernel, :mod:`netproof.kernel`, reads them with its own reader and
interpreter); this module's reader reads ``netproof-network`` files only and refuses the format
by name (netproof rebuilds an encoder–decoder from its construction).

Keys are sorted; arrays keep their order; indentation is 2 spaces and a value that fits in
100 columns is written on one line; the text ends with a newline. The reader is strict: an
unknown or missing field, a repeated key, a wrong type, a float, an unknown format or version
and a fingerprint that does not match the rebuilt network all raise :class:`NetworkFileError`,
whose message starts with the JSON path of the field (``network.layers[2].block.heads[0].mask``)
and says how to fix it. The IR's own validation errors come out the same way. A hand-written
file may start without ``fingerprint``: the error names the one to write for its network.

This module is the format's public face and holds no code of its own: the writer is
:mod:`netproof.symbolic.netfile_writer`, the reader :mod:`netproof.symbolic.netfile_reader`, and
what both use (the format's name and version, :class:`NetworkFileError`, JSON paths) is
:mod:`netproof.symbolic.netfile_format`. It imports those three and re-exports their public names.

>>> from netproof.symbolic import Network, Sublayer, affine, classifier, ffn, token_embedding, RELU
>>> net = Network(
...     name="demo",
...     dims=("x",),
...     embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": "-1/2"}}),
...     layers=(Sublayer(block=ffn("gate", affine({"u": {"x": 2}}), RELU, affine({"x": {"u": 1}}))),),
...     readout=classifier("x"),
... )
>>> print(dumps(net), end="")  # doctest: +ELLIPSIS
{
  "fingerprint": "...",
  "format": "netproof-network",
  "format_version": 1,
  "network": {
    "dims": ["x"],
    "embedding": {
      "alphabet": ["a", "b"],
      "index_base": 0,
      "positional": [],
      "prefix": [],
      "suffix": [],
      "table": [["a", [["x", "1"]]], ["b", [["x", "-1/2"]]]],
      "type": "TokenEmbedding"
    },
    "layers": [
      {
        "block": {
          "name": "gate",
          "steps": [
            {
              "bias": {},
              "inputs": ["x"],
              "outputs": ["u"],
              "type": "Affine",
              "weights": {"u": {"x": "2"}}
            },
            {"kind": "relu", "type": "Activation"},
            {
              "bias": {},
              "inputs": ["u"],
              "outputs": ["x"],
              "type": "Affine",
              "weights": {"x": {"u": "1"}}
            }
          ],
          "type": "FFN"
        },
        "post_ln": null,
        "residual": true,
        "type": "Sublayer"
      }
    ],
    "name": "demo",
    "params": [],
    "readout": {
      "accept": "positive",
      "logit": {
        "bias": {},
        "inputs": ["x"],
        "outputs": ["logit"],
        "type": "Affine",
        "weights": {"logit": {"x": "1"}}
      },
      "position": 0,
      "type": "Classifier"
    },
    "reference": "",
    "type": "Network"
  }
}
>>> loads(dumps(net)) == net
True
"""

from __future__ import annotations

from .netfile_format import FORMAT, FORMAT_VERSION, NetworkFileError
from .netfile_reader import from_json, load_file, loads
from .netfile_writer import dump_file, dumps, to_json

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "NetworkFileError",
    "dump_file",
    "dumps",
    "from_json",
    "load_file",
    "loads",
    "to_json",
]
