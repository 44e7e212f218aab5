"""The papers' constructions: one module (or package) per paper, each building IR and declaring
claims, lemmas and experiments.

:data:`REGISTRY` maps each construction's short name (as typed on the command line) to its
:class:`~netproof.verifier.claims.Construction`; :data:`EXPERIMENTS` maps each float
experiment's name (``netproof plot NAME``) to its :class:`~netproof.verifier.claims.Experiment`;
:data:`GROUPS` holds the opt-in groups (the synthesized specs), outside the default set.
Both are collected from the paper modules' ``CONSTRUCTIONS`` and ``EXPERIMENTS`` declarations.

May import: the paper modules, and the vocabulary :mod:`netproof.verifier.claims` for the types.
The paper modules import the IR (:mod:`netproof.symbolic`, never an interpreter), the vocabulary
and sympy only; only the campaign and CLI layers of the verifier import this registry.
"""

from __future__ import annotations

from collections.abc import Callable

from netproof.constructions import (
    bhattamishra2020,
    chang2021,
    chiang2022,
    rasp,
    suzgun2019,
    yao2021,
)
from netproof.constructions.rasp import (
    ProgramModuleError,
    compile_crasp,
    from_counting,
    is_program,
    program_constructions,
    synth,
    synth_specs,
)
from netproof.verifier.claims import Construction, Experiment

REGISTRY: dict[str, Construction] = {
    c.name: c
    for c in (
        *chiang2022.CONSTRUCTIONS,
        *yao2021.CONSTRUCTIONS,
        *bhattamishra2020.CONSTRUCTIONS,
        *suzgun2019.CONSTRUCTIONS,
        *chang2021.CONSTRUCTIONS,
        *rasp.CONSTRUCTIONS,
    )
}

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in chiang2022.EXPERIMENTS}

GROUPS: dict[str, dict[str, Callable[[], Construction]]] = {"synth": synth_specs.GROUP}
"""Opt-in groups: constructions that are not in :data:`REGISTRY` (so not in the default
``netproof prove`` set nor under the registry-wide tests) because building them costs time, each
built only when named: by its group (``netproof prove synth``), by its own name
(``synth-contains-ab``) or by a record of it (``netproof recheck proofs/synth-contains-ab``)."""

__all__ = [
    "EXPERIMENTS",
    "GROUPS",
    "REGISTRY",
    "ProgramModuleError",
    "compile_crasp",
    "from_counting",
    "is_program",
    "program_constructions",
    "synth",
]
