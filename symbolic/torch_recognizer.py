"""The family of trained recognizers netproof imports: :class:`Recognizer`, a torch module made of
standard PyTorch modules only, with its JSON config.

A :class:`Recognizer` reads ``<cls> w_1 … w_m`` (one special token first, then the word) and
returns one logit per word; the word is accepted iff the logit is > 0. Its parts:

- ``token``: ``nn.Embedding(len(alphabet) + 1, d_model)``, row ``alphabet.index(a)`` for a symbol,
  the last row for ``<cls>``;
- ``position``: ``nn.Embedding(max_len, d_model)`` (``positional="learned"``) or the same table
  filled with the sinusoidal encoding of Vaswani et al. and frozen (``positional="sinusoidal"``);
  either way the stored float values are what counts;
- ``encoder``: ``nn.TransformerEncoder`` of ``num_layers`` ``nn.TransformerEncoderLayer`` (softmax
  attention with ``nhead`` heads, ``batch_first``, dropout 0, ReLU or GELU FFN
  (``activation``: ``relu``, or ``gelu``, the exact x·Φ(x)) of width ``dim_feedforward``, layer
  norm with ``layer_norm_eps``, post-norm or ``norm_first``), with a final ``nn.LayerNorm`` when
  ``final_norm``; ``causal`` adds the causal mask (j ≤ i);
- ``classifier``: ``nn.Linear(d_model, 1)`` at token 0 (``readout="first"``: the ``<cls>`` token)
  or at the last token (``readout="last"``).

:class:`RNNRecognizer` is the recurrent member of the family: an ``nn.Embedding``, a single-layer
``nn.RNN`` (tanh or ReLU) or ``nn.LSTM`` from zero states and an ``nn.Linear(hidden_size, 1)`` on
the last hidden state; its config says ``"model": "rnn"``.

``Recognizer.config`` is the JSON config; :func:`save_recognizer` writes
``{"format": "netproof-recognizer", "config", "state_dict"}`` with ``torch.save``, a file that
``torch.load(..., weights_only=True)`` reads safely. :mod:`netproof.symbolic.torch_import` turns any
such model (or the whole module saved with ``torch.save(model)``, or a bare state dict with its
config) into an exact network.

This module imports torch at module level (a pickled :class:`Recognizer` names this class); nothing
in the package imports it except at run time, so importing ``netproof.symbolic`` leaves torch
unloaded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

__all__ = [
    "CONFIG_KEYS",
    "FORMAT",
    "RNN_CONFIG_KEYS",
    "RNNRecognizer",
    "Recognizer",
    "full_rnn_config",
    "save_recognizer",
    "sinusoidal_table",
]

FORMAT = "netproof-recognizer"

CONFIG_KEYS: dict[str, Any] = {
    "alphabet": None,
    "d_model": None,
    "nhead": 1,
    "num_layers": 1,
    "dim_feedforward": None,
    "max_len": 64,
    "layer_norm_eps": 1e-5,
    "norm_first": False,
    "causal": False,
    "final_norm": False,
    "readout": "first",
    "positional": "learned",
    "activation": "relu",
}
"""Every config key with its default (``None``: required)."""


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """The sinusoidal encoding PE[i, 2j] = sin(i/10000^(2j/d)), PE[i, 2j+1] = cos(…), float32."""
    table = torch.zeros(max_len, d_model)
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    div = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )
    table[:, 0::2] = torch.sin(pos * div).float()
    table[:, 1::2] = torch.cos(pos * div)[:, : d_model // 2].float()
    return table


def full_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with its defaults filled in; a ValueError names an unknown or missing key."""
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise ValueError(
            f"recognizer config has unknown keys {unknown}; known keys: {', '.join(CONFIG_KEYS)}"
        )
    out = {k: config.get(k, v) for k, v in CONFIG_KEYS.items()}
    missing = [k for k, v in out.items() if v is None and k != "dim_feedforward"]
    if missing:
        raise ValueError(
            f"recognizer config lacks {missing}; give them (e.g. alphabet ['0', '1'], d_model 8)"
        )
    if out["dim_feedforward"] is None:
        out["dim_feedforward"] = 4 * int(out["d_model"])
    out["alphabet"] = [str(a) for a in out["alphabet"]]
    if out["readout"] not in ("first", "last"):
        raise ValueError(f"readout={out['readout']!r} must be 'first' (the <cls> token) or 'last'")
    if out["positional"] not in ("learned", "sinusoidal"):
        raise ValueError(f"positional={out['positional']!r} must be 'learned' or 'sinusoidal'")
    if out["activation"] not in ("relu", "gelu"):
        raise ValueError(
            f"activation={out['activation']!r} must be 'relu' or 'gelu' (the exact GELU, x·Φ(x); not the tanh approximation)"
        )
    return out


class Recognizer(nn.Module):
    """A transformer recognizer of the imported family (see the module docstring).

    >>> m = Recognizer(alphabet=["0", "1"], d_model=4, nhead=2, dim_feedforward=8)
    >>> m(m.encode([["1", "0"], ["0", "0"]])).shape
    torch.Size([2])
    """

    def __init__(self, **config: Any) -> None:
        super().__init__()
        cfg = full_config(config)
        self.config: dict[str, Any] = cfg
        d = int(cfg["d_model"])
        alphabet: list[str] = cfg["alphabet"]
        self.token = nn.Embedding(len(alphabet) + 1, d)
        self.position = nn.Embedding(int(cfg["max_len"]), d)
        if cfg["positional"] == "sinusoidal":
            with torch.no_grad():
                self.position.weight.copy_(sinusoidal_table(int(cfg["max_len"]), d))
            self.position.weight.requires_grad_(False)
        layer = nn.TransformerEncoderLayer(
            d,
            int(cfg["nhead"]),
            int(cfg["dim_feedforward"]),
            dropout=0.0,
            activation=str(cfg["activation"]),
            layer_norm_eps=float(cfg["layer_norm_eps"]),
            batch_first=True,
            norm_first=bool(cfg["norm_first"]),
        )
        norm = nn.LayerNorm(d, eps=float(cfg["layer_norm_eps"])) if cfg["final_norm"] else None
        self.encoder = nn.TransformerEncoder(
            layer, int(cfg["num_layers"]), norm=norm, enable_nested_tensor=False
        )
        self.classifier = nn.Linear(d, 1)

    def encode(self, words: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[B, 1 + m]`` of words of one length m (``<cls>`` first)."""
        alphabet: list[str] = self.config["alphabet"]
        index = {a: k for k, a in enumerate(alphabet)}
        cls = len(alphabet)
        return torch.tensor(
            [[cls, *(index[a] for a in w)] for w in words], dtype=torch.long
        ).reshape(len(words), -1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[1]
        x = self.token(tokens) + self.position.weight[:n].unsqueeze(0)
        if self.config["causal"]:
            mask = nn.Transformer.generate_square_subsequent_mask(n, dtype=x.dtype, device=x.device)
            x = self.encoder(x, mask=mask, is_causal=True)
        else:
            x = self.encoder(x)
        at = x[:, 0] if self.config["readout"] == "first" else x[:, -1]
        logit: torch.Tensor = self.classifier(at)
        return logit.squeeze(-1)


RNN_CONFIG_KEYS: dict[str, Any] = {
    "model": "rnn",
    "alphabet": None,
    "embedding_dim": None,
    "hidden_size": None,
    "cell": "rnn",
    "nonlinearity": "tanh",
}
"""Every key of an :class:`RNNRecognizer`'s config with its default (``None``: required); the
key ``model`` = ``"rnn"`` tells it from a transformer :class:`Recognizer`'s config."""


def full_rnn_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """An :class:`RNNRecognizer` config with its defaults filled in; a ValueError names an
    unknown, missing or wrong key."""
    unknown = sorted(set(config) - set(RNN_CONFIG_KEYS))
    if unknown:
        raise ValueError(
            f"RNN recognizer config has unknown keys {unknown}; known keys: {', '.join(RNN_CONFIG_KEYS)}"
        )
    out = {k: config.get(k, v) for k, v in RNN_CONFIG_KEYS.items()}
    missing = [k for k, v in out.items() if v is None]
    if missing:
        raise ValueError(
            f"RNN recognizer config lacks {missing}; give them (e.g. alphabet ['0', '1'], embedding_dim 4, hidden_size 8)"
        )
    if out["model"] != "rnn":
        raise ValueError(f"model={out['model']!r}: an RNN recognizer's config says model 'rnn'")
    if out["cell"] not in ("rnn", "lstm"):
        raise ValueError(f"cell={out['cell']!r} must be 'rnn' (nn.RNN) or 'lstm' (nn.LSTM)")
    if out["nonlinearity"] not in ("tanh", "relu"):
        raise ValueError(
            f"nonlinearity={out['nonlinearity']!r} must be 'tanh' or 'relu' (those of nn.RNN)"
        )
    if out["cell"] == "lstm" and out["nonlinearity"] != "tanh":
        raise ValueError(
            f"nonlinearity={out['nonlinearity']!r}: an nn.LSTM cell has tanh and logistic gates only"
        )
    out["alphabet"] = [str(a) for a in out["alphabet"]]
    return out


class RNNRecognizer(nn.Module):
    """A single-layer RNN recognizer: ``nn.Embedding(len(alphabet), embedding_dim)`` (no special
    token), ``nn.RNN(embedding_dim, hidden_size, nonlinearity, batch_first=True)`` (``cell="rnn"``)
    or ``nn.LSTM(embedding_dim, hidden_size, batch_first=True)`` (``cell="lstm"``) from zero
    states, and ``nn.Linear(hidden_size, 1)`` on the last hidden state (the empty word reads
    h_0 = 0); accept iff the logit is > 0.

    >>> m = RNNRecognizer(alphabet=["0", "1"], embedding_dim=3, hidden_size=4)
    >>> m(m.encode([["1", "0"], ["0", "0"]])).shape
    torch.Size([2])
    """

    def __init__(self, **config: Any) -> None:
        super().__init__()
        cfg = full_rnn_config(config)
        self.config: dict[str, Any] = cfg
        alphabet: list[str] = cfg["alphabet"]
        e, h = int(cfg["embedding_dim"]), int(cfg["hidden_size"])
        self.token = nn.Embedding(len(alphabet), e)
        self.rnn: nn.RNN | nn.LSTM = (
            nn.LSTM(e, h, num_layers=1, batch_first=True)
            if cfg["cell"] == "lstm"
            else nn.RNN(e, h, num_layers=1, nonlinearity=str(cfg["nonlinearity"]), batch_first=True)
        )
        self.classifier = nn.Linear(h, 1)

    def encode(self, words: Sequence[Sequence[str]]) -> torch.Tensor:
        """Token ids ``[B, m]`` of words of one length m."""
        alphabet: list[str] = self.config["alphabet"]
        index = {a: k for k, a in enumerate(alphabet)}
        return torch.tensor([[index[a] for a in w] for w in words], dtype=torch.long).reshape(
            len(words), -1
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.shape[1] == 0:
            last = self.classifier.weight.new_zeros(tokens.shape[0], self.rnn.hidden_size)
        else:
            _out, state = self.rnn(self.token(tokens))
            last = (state[0] if isinstance(state, tuple) else state)[-1]
        logit: torch.Tensor = self.classifier(last)
        return logit.squeeze(-1)


def save_recognizer(model: Recognizer | RNNRecognizer, path: str | Path) -> None:
    """``torch.save`` of ``{"format", "config", "state_dict"}`` (readable with ``weights_only``)."""
    sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    torch.save({"format": FORMAT, "config": dict(model.config), "state_dict": sd}, str(path))
