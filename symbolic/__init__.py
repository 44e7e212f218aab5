"""netproof's network language: the exact IR, its builders, printing and validation.

Recurrent networks (memory-augmented RNNs) are in :mod:`netproof.symbolic.recurrent_ir`, re-exported
here; their interpreter is :mod:`netproof.symbolic.recurrent`.

Interpreters live in their own modules (:mod:`netproof.symbolic.exact`, :mod:`netproof.symbolic.sympy_interp`)
and are imported explicitly; importing :mod:`netproof.symbolic` imports neither sympy, z3 nor torch.
"""

from .builders import (
    RELU,
    SIGMA,
    STEP,
    affine,
    classifier,
    constant,
    ffn,
    layernorm,
    token_embedding,
)
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
    Convolution,
    DecoderLayer,
    FlatEmbedding,
    Halting,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    RelativeBias,
    RelativeKernel,
    Scale,
    Seq2Seq,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .numbers import as_fraction
from .printing import fingerprint, pretty
from .recurrent_ir import (
    BabyNTM,
    GumbelSoftmax,
    JoulinMikolovRNN,
    KHotReadout,
    MemoryOp,
    RecurrentNetwork,
    StackLSTM,
    StackRNN,
    TemperatureSoftmax,
    baby_ntm_ops,
)
from .words import render, tokenize

__all__ = [
    "FFN", "RELU", "SIGMA", "STEP", "Activation", "Affine", "AttentionLayer", "Classifier",
    "Convolution", "DecoderLayer", "FlatEmbedding", "Halting", "Hardmax", "Head", "InexactNumberError", "LayerNorm",
    "MissingExtraError", "Network", "NetworkValidationError", "NextSymbols", "NotRationalError", "RelativeBias",
    "RelativeKernel", "Scale", "Seq2Seq", "Softmax",
    "Sublayer", "SymbolicError", "TokenEmbedding", "WordError", "affine", "as_fraction",
    "classifier", "constant", "ffn", "fingerprint", "layernorm", "pretty", "render",
    "token_embedding", "tokenize",
    # recurrent networks (symbolic.recurrent_ir)
    "BabyNTM", "GumbelSoftmax", "JoulinMikolovRNN", "KHotReadout", "MemoryOp", "RecurrentNetwork",
    "StackLSTM", "StackRNN", "TemperatureSoftmax", "baby_ntm_ops",
]
