"""netproof's network language: the exact IR, its builders, printing and validation.

Recurrent networks (memory-augmented RNNs) are in :mod:`netproof.symbolic.recurrent_ir`, re-exported
here; their interpreter is :mod:`netproof.symbolic.recurrent`.

Interpreters live in their own modules (:mod:`netproof.symbolic.exact`, :mod:`netproof.symbolic.sympy_interp`)
and are imported explicitly; importing :mod:`netproof.symbolic` imports neither sympy, z3 nor torch.

The IR's modules, each importing only those before it: :mod:`~netproof.symbolic.errors`,
:mod:`~netproof.symbolic.numbers`, :mod:`~netproof.symbolic.positional`,
:mod:`~netproof.symbolic.words`; :mod:`~netproof.symbolic.checks` (the field checks);
:mod:`~netproof.symbolic.blocks` (every block); :mod:`~netproof.symbolic.block_printing` (their
printed lines); :mod:`~netproof.symbolic.validate` (a network's parts against its dims);
:mod:`~netproof.symbolic.ir` (the whole networks, validated on construction; every block
re-exported); :mod:`~netproof.symbolic.recurrent_ir`; :mod:`~netproof.symbolic.builders`;
:mod:`~netproof.symbolic.printing` (printed form and fingerprint). The interpreters and the network
files (:mod:`~netproof.symbolic.netfile`) are above the IR. This package imports only itself, the
standard library and its interpreters' number libraries (sympy, mpmath, numpy, torch).
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
    "FFN",
    "RELU",
    "SIGMA",
    "STEP",
    "Activation",
    "Affine",
    "AttentionLayer",
    "BabyNTM",
    "Classifier",
    "Convolution",
    "DecoderLayer",
    "FlatEmbedding",
    "GumbelSoftmax",
    "Halting",
    "Hardmax",
    "Head",
    "InexactNumberError",
    "JoulinMikolovRNN",
    "KHotReadout",
    "LayerNorm",
    "MemoryOp",
    "MissingExtraError",
    "Network",
    "NetworkValidationError",
    "NextSymbols",
    "NotRationalError",
    "RecurrentNetwork",
    "RelativeBias",
    "RelativeKernel",
    "Scale",
    "Seq2Seq",
    "Softmax",
    "StackLSTM",
    "StackRNN",
    "Sublayer",
    "SymbolicError",
    "TemperatureSoftmax",
    "TokenEmbedding",
    "WordError",
    "affine",
    "as_fraction",
    "baby_ntm_ops",
    "classifier",
    "constant",
    "ffn",
    "fingerprint",
    "layernorm",
    "pretty",
    "render",
    "token_embedding",
    "tokenize",
]
