"""Chiang & Cholak 2022, *Overcoming a Theoretical Limitation of Self-Attention*.

One package per paper, split by concern; this ``__init__`` re-exports the public names, so
``from netproof.constructions.chiang2022 import parity_transformer`` works for each:

- :mod:`~netproof.constructions.chiang2022.networks`: the networks (§2.1 Rumelhart's FFNN, the
  PARITY and FIRST transformers of §2.2–§2.3, the flawed FIRST transformer of §4.2, §3.1's
  doubling with layer norm, Proposition 2's layer) and the errata of the paper;
- :mod:`~netproof.constructions.chiang2022.claims`: the claims C1–C13, the block lemma of
  Fig. 1 and the eleven construction declarations (:data:`CONSTRUCTIONS`);
- :mod:`~netproof.constructions.chiang2022.experiments`: Figures 2 and 3 as experiment
  declarations (:data:`EXPERIMENTS`) and the worst-case words of the precision search.

May import: its own modules (which import the IR, the vocabulary :mod:`netproof.verifier.claims`
and sympy); never an interpreter, an engine, z3 or torch.
"""

from __future__ import annotations

from .claims import CONSTRUCTIONS, parity_closed_form, parity_closed_form_paper
from .experiments import (
    EXPERIMENTS,
    FIG2_LENGTHS,
    FIG2_SPEC,
    FIG3_DELTAS,
    FIG3_LENGTHS,
    FIGURE2,
    FIGURE3,
    binary_extremes,
    figure2_curves,
    figure3_curves,
    flawed_first_minimizers,
    with_count_weight,
)
from .networks import (
    CLS,
    BaseSpec,
    doubled,
    first_flawed,
    first_transformer,
    neg,
    parity_transformer,
    parse_c,
    prop2_layer,
    rumelhart_parity,
)

__all__ = [
    "CLS",
    "CONSTRUCTIONS",
    "EXPERIMENTS",
    "FIG2_LENGTHS",
    "FIG2_SPEC",
    "FIG3_DELTAS",
    "FIG3_LENGTHS",
    "FIGURE2",
    "FIGURE3",
    "BaseSpec",
    "binary_extremes",
    "doubled",
    "figure2_curves",
    "figure3_curves",
    "first_flawed",
    "first_transformer",
    "flawed_first_minimizers",
    "neg",
    "parity_closed_form",
    "parity_closed_form_paper",
    "parity_transformer",
    "parse_c",
    "prop2_layer",
    "rumelhart_parity",
    "with_count_weight",
]
