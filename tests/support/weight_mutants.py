"""Single-weight mutants of a network, shared by the mutation tests: the paths to its weights,
the value at a path, and the network with one value replaced (the frozen IR rebuilt and
validated again on the way up).

``tests/conftest.py`` puts this folder on ``sys.path`` (the tests run with
``--import-mode=importlib`` and are no package), so a test module imports it as
``from weight_mutants import weight_sites, with_weight``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from netproof.symbolic import (
    FFN,
    Affine,
    AttentionLayer,
    Hardmax,
    LayerNorm,
    Network,
    Scale,
    Softmax,
)

__all__ = [
    "NOT_WEIGHTS",
    "AffineSite",
    "Path",
    "affine_site_path",
    "affine_sites",
    "get_at",
    "replace_at",
    "weight_sites",
    "with_weight",
]

Path = tuple[str | int, ...]
"""Dataclass fields by name, tuple entries by index, from the network down to one Fraction."""

NOT_WEIGHTS: tuple[type, ...] = (Scale, Softmax, Hardmax, LayerNorm)
"""Numbers that are not weights: score scales, the softmax base, hardmax tie rules, layer-norm
epsilons."""


def weight_sites(
    node: Any, path: Path = (), *, skip: tuple[type, ...] = NOT_WEIGHTS, zeros: bool = False
) -> Iterator[Path]:
    """Paths to every Fraction of the IR below ``node`` that is a weight, bias, embedding value
    or positional coefficient, in field order: the nonzero ones (every one with ``zeros``), none
    inside a node of a type in ``skip``."""
    if isinstance(node, skip):
        return
    if isinstance(node, Fraction):
        if zeros or node != 0:
            yield path
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from weight_sites(getattr(node, f.name), (*path, f.name), skip=skip, zeros=zeros)
    elif isinstance(node, tuple):
        for i, item in enumerate(node):
            yield from weight_sites(item, (*path, i), skip=skip, zeros=zeros)


def get_at(node: Any, path: Path) -> Any:
    """The value at ``path`` below ``node``."""
    for key in path:
        node = node[key] if isinstance(key, int) else getattr(node, key)
    return node


def replace_at(node: Any, path: Path, value: Any) -> Any:
    """A copy of the frozen IR with the entry at ``path`` replaced: tuples are rebuilt and
    dataclasses go through ``dataclasses.replace``, so every node (and finally the Network)
    is validated again by its ``__post_init__``."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(key, int):
        return (*node[:key], replace_at(node[key], rest, value), *node[key + 1 :])
    return dataclasses.replace(node, **{key: replace_at(getattr(node, key), rest, value)})


def with_weight(net: Network, path: Path, delta: Fraction) -> Network:
    """``net`` with the value at ``path`` moved by ``delta``."""
    mutant: Network = replace_at(net, path, get_at(net, path) + delta)
    return mutant


AffineSite = tuple[int, str, str, int, int]
"""One weight of a sublayer's affine map, as the RASP mutation tests list them: (sublayer index,
part, head name, row, column), the part ``"stepS"`` (an FFN's S-th step, head ``""``) or a head's
``"query"``, ``"key"`` or ``"value"``."""


def affine_site_path(net: Network, site: AffineSite) -> Path:
    """The :data:`Path` of ``site`` in ``net`` (for :func:`with_weight`)."""
    k, part, head, row, col = site
    if part.startswith("step"):
        return ("layers", k, "block", "steps", int(part[4:]), "weights", row, col)
    heads = [h.name for h in get_at(net, ("layers", k, "block", "heads"))]
    return ("layers", k, "block", "heads", heads.index(head), part, "weights", row, col)


def affine_sites(
    net: Network, parts: tuple[str, ...] = ("query", "key", "value")
) -> list[AffineSite]:
    """Every weight of every FFN affine map and of each head's maps named in ``parts``, as
    :data:`AffineSite`s, in sublayer order."""
    sites = []
    for k, layer in enumerate(net.layers):
        block = layer.block
        if isinstance(block, FFN):
            for s, step in enumerate(block.steps):
                if isinstance(step, Affine):
                    sites += [
                        (k, f"step{s}", "", r, c)
                        for r in range(len(step.weights))
                        for c in range(len(step.weights[r]))
                    ]
        elif isinstance(block, AttentionLayer):
            for h in block.heads:
                for part in parts:
                    a = getattr(h, part)
                    sites += [
                        (k, part, h.name, r, c)
                        for r in range(len(a.weights))
                        for c in range(len(a.weights[r]))
                    ]
    return sites
