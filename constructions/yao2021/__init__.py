"""Yao, Peng, Papadimitriou & Narasimhan 2021, *Self-Attention Networks Can Process Bounded
Hierarchical Languages*.

One package per paper, split by concern; this ``__init__`` re-exports the public names, so
``from netproof.constructions.yao2021 import dyck_recognizer`` works for each:

- :mod:`~netproof.constructions.yao2021.recognizer`: the (D+1)-layer hard-attention recognizer
  of Dyck(k, D) (Theorem 4.1, §5.1), the gates of Lemma A.1, errata 1–5;
- :mod:`~netproof.constructions.yao2021.generator`: the two-layer generator (Theorem 4.2, §5.2
  and Appendix B), its proved rational thresholds, errata 6–10;
- :mod:`~netproof.constructions.yao2021.claims`: the claims Y1–Y11, the recognizer's block
  lemmas and the construction declarations (:data:`CONSTRUCTIONS`: ``dyck``, ``dyck-gen``,
  ``gates``);
- :mod:`~netproof.constructions.yao2021.experiments`: the precision search's declarations
  (Hewitt samples, worst-case words, the generator's reference sets, the §3.6 runs).

Dyck(k, D) itself (membership, allowed next symbols, samplers, the Appendix-D metric) is data
that the engines use too: it lives in the vocabulary, :mod:`netproof.verifier.claims.dyck`.

May import: its own modules (which import the IR, the gate compiler, the vocabulary
:mod:`netproof.verifier.claims` and sympy); never an interpreter, an engine, z3 or torch.
"""

from __future__ import annotations

from .claims import CONSTRUCTIONS, default_max_len, pair_heights, valid_prefixes
from .experiments import (
    GENERATOR_PRECISION,
    RECOGNIZER_PRECISION,
    generator_next_sets,
    generator_worst_words,
    hewitt_generator_words,
    hewitt_recognizer_words,
    recognizer_worst_words,
)
from .generator import (
    READINGS,
    GeneratorConstants,
    bracket_sqrt_ratio,
    dyck_generator,
    gt_threshold,
    min_gap,
    output_base,
    theta,
)
from .recognizer import END, START, check_k_depth, dyck_recognizer, gate_network, symbols, type_bits

__all__ = [
    "CONSTRUCTIONS",
    "END",
    "GENERATOR_PRECISION",
    "READINGS",
    "RECOGNIZER_PRECISION",
    "START",
    "GeneratorConstants",
    "bracket_sqrt_ratio",
    "check_k_depth",
    "default_max_len",
    "dyck_generator",
    "dyck_recognizer",
    "gate_network",
    "generator_next_sets",
    "generator_worst_words",
    "gt_threshold",
    "hewitt_generator_words",
    "hewitt_recognizer_words",
    "min_gap",
    "output_base",
    "pair_heights",
    "recognizer_worst_words",
    "symbols",
    "theta",
    "type_bits",
    "valid_prefixes",
]
