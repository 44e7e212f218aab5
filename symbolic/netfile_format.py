"""The network file format's shared ground: its name and version, its error, and JSON paths.

Owns :data:`FORMAT`, :data:`FORMAT_VERSION`, :class:`NetworkFileError` (whose message starts with
the JSON path of the faulty field), the spelling of those paths (:func:`field_path`,
:func:`index_path`, :func:`key_path`) and the names of a head's optional relative-position fields
(:data:`RELATIVE_KERNELS`). The writer (:mod:`netproof.symbolic.netfile_writer`) and the reader
(:mod:`netproof.symbolic.netfile_reader`) both use them; the format itself is described in
:mod:`netproof.symbolic.netfile`, the public face of the three. This module imports only the
errors of :mod:`netproof.symbolic.errors`.

>>> key_path(field_path("network", "dims"), "k/n")
'network.dims["k/n"]'
>>> index_path("network.layers", 2)
'network.layers[2]'
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import NetworkValidationError

FORMAT = "netproof-network"
"""The ``format`` field of every network file."""

FORMAT_VERSION = 1
"""The ``format_version`` this netproof writes and reads."""

SEQ2SEQ_FORMAT = "netproof-seq2seq"
"""The ``format`` field of an encoder–decoder's file (:class:`~netproof.symbolic.ir.Seq2Seq`): the
same top level and blocks, written for readers outside netproof (netproof's own reader reads
``netproof-network`` files only; it rebuilds an encoder–decoder from its construction)."""

JSON = Any  # a value as json.loads returns it

RELATIVE_KERNELS = ("query_conv", "key_conv")
"""A head's relative-position kernels: fields written only when set (with ``relative_bias``)."""


class NetworkFileError(NetworkValidationError):
    """A network file is malformed. ``path`` is the JSON path of the faulty field (``""`` for the
    file as a whole) and ``detail`` what is wrong there and how to fix it."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path or '(top level)'}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (for --jobs worker processes)
        return (NetworkFileError, (self.path, self.detail))


def field_path(path: str, name: str) -> str:
    """The JSON path of field ``name`` of the object at ``path`` (``name`` alone at the top)."""
    return f"{path}.{name}" if path else name


def index_path(path: str, i: int) -> str:
    """The JSON path of entry ``i`` of the array at ``path``."""
    return f"{path}[{i}]"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key_path(path: str, k: str) -> str:
    """``path.k`` for a plain key, ``path["k/n"]`` for any other (as jq writes paths)."""
    if _PLAIN_KEY.fullmatch(k):
        return field_path(path, k)
    return f"{path}[{json.dumps(k, ensure_ascii=False)}]"
