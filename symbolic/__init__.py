"""netproof's network language: the exact IR, its builders, printing and validation.

Interpreters live in their own modules (:mod:`symbolic.exact`, :mod:`symbolic.sympy_interp`)
and are imported explicitly; importing :mod:`symbolic` imports neither sympy, z3 nor torch.
"""

from .builders import RELU, SIGMA, STEP, affine, classifier, constant, ffn, layernorm, token_embedding
from .errors import (
    InexactNumberError,
    MissingExtraError,
    NetworkValidationError,
    NotRationalError,
    SymbolicError,
    WordError,
)
from .ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    DecoderLayer,
    FlatEmbedding,
    Halting,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .numbers import as_fraction
from .printing import fingerprint, pretty
from .words import render, tokenize

__all__ = [
    "FFN", "RELU", "SIGMA", "STEP", "Activation", "Affine", "AttentionLayer", "Classifier",
    "DecoderLayer", "FlatEmbedding", "Halting", "Hardmax", "Head", "InexactNumberError", "LayerNorm", "MissingExtraError",
    "Network", "NetworkValidationError", "NextSymbols", "NotRationalError", "Scale", "Seq2Seq", "Softmax",
    "Sublayer", "SymbolicError", "TokenEmbedding", "WordError", "affine", "as_fraction",
    "classifier", "constant", "ffn", "fingerprint", "layernorm", "pretty", "render",
    "token_embedding", "tokenize",
]
