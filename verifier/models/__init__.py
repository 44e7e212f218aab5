"""Trained models checked exactly: an imported recognizer decided on every word up to a length,
rigorously (batched float64 enclosures, the slow interval interpreter for the words they leave
open), against a reference language; the model's own float32 run compared with that verdict.

May import: the claims vocabulary (languages), :mod:`netproof.symbolic` and its interpreters
(torch inside functions); never SMT, fuzzing, campaigns, the CLI or a paper module.
"""

from .bnb import check_model_bnb, merge_bnb
from .check import LengthRow, ModelReport, WordVerdict, check_model, merge_reports
from .enclosure import LIBM_REL, Enclosure, EnclosureError, RNNEnclosure, compile_enclosure
from .prefix import CausalPrefixEnclosure
from .wordset import WordSetBound

__all__ = [
    "LIBM_REL",
    "CausalPrefixEnclosure",
    "Enclosure",
    "EnclosureError",
    "LengthRow",
    "ModelReport",
    "RNNEnclosure",
    "WordSetBound",
    "WordVerdict",
    "check_model",
    "check_model_bnb",
    "compile_enclosure",
    "merge_bnb",
    "merge_reports",
]
