"""Models written the textbook way, as a user would (own classes, own attribute names): the
structural importer's test subjects (tests/verifier/test_models_byom.py). Not a test module."""

from __future__ import annotations

import math

import torch
from torch import nn


class Textbook(nn.Module):
    """A textbook encoder classifier: ``<cls>`` at index 0 of ``embed``, a learned ``pos`` table,
    the embedding scaled by √d, ``dropout`` after the embedding, ``nn.TransformerEncoder`` (with a
    padding mask of the ``pad`` token), and ``fc`` on the ``<cls>`` position (``pooling="cls"``),
    the last position (``"last"``) or the mean over positions (``"mean"``)."""

    def __init__(
        self,
        vocab_size: int = 3,
        d_model: int = 16,
        nhead: int = 2,
        num_layers: int = 1,
        dim_feedforward: int = 32,
        max_len: int = 16,
        dropout: float = 0.1,
        pooling: str = "cls",
        causal: bool = False,
        norm_first: bool = False,
        pad: int | None = None,
    ) -> None:
        super().__init__()
        self.d_model, self.pooling, self.causal, self.pad = d_model, pooling, causal, pad
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward, dropout, batch_first=True, norm_first=norm_first
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d_model, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.size(1)
        h = self.embed(x) * math.sqrt(self.d_model) + self.pos(torch.arange(n, device=x.device))
        h = self.dropout(h)
        mask = nn.Transformer.generate_square_subsequent_mask(n) if self.causal else None
        padding = None if self.pad is None else x == self.pad
        h = self.encoder(h, mask=mask, src_key_padding_mask=padding)
        if self.pooling == "mean":
            h = h.mean(dim=1)
        else:
            h = h[:, -1] if self.pooling == "last" else h[:, 0]
        return self.fc(h).squeeze(-1)


class Attention(nn.Module):
    """Hand-written causal multi-head attention: q/k/v maps, a head split by view/transpose,
    scaled scores, a masked_fill mask, softmax, the value sum, the output map."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q = self.q(x).view(b, n, self.h, self.dk).transpose(1, 2)
        k = self.k(x).view(b, n, self.h, self.dk).transpose(1, 2)
        v = self.v(x).view(b, n, self.h, self.dk).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.o(y.transpose(1, 2).reshape(b, n, d))


class HandWritten(nn.Module):
    """A GPT-style classifier written by hand: pre-norm blocks of :class:`Attention` and a GELU
    MLP, a sinusoidal table computed in ``forward``, the logit of the last position."""

    def __init__(
        self, vocab_size: int = 2, d: int = 8, heads: int = 2, layers: int = 1, act: str = "gelu"
    ) -> None:
        super().__init__()
        self.d = d
        self.tok = nn.Embedding(vocab_size, d)
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                {
                    "ln1": nn.LayerNorm(d),
                    "attn": Attention(d, heads),
                    "ln2": nn.LayerNorm(d),
                    "mlp": nn.Sequential(
                        nn.Linear(d, 2 * d),
                        nn.GELU() if act == "gelu" else nn.ReLU(),
                        nn.Linear(2 * d, d),
                    ),
                }
            )
            for _ in range(layers)
        )
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        i = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        f = torch.exp(torch.arange(0, self.d, 2, dtype=torch.float32) * (-math.log(100.0) / self.d))
        pe = torch.stack([torch.sin(i * f), torch.cos(i * f)], dim=-1).flatten(1)
        h = self.tok(x) + pe
        for blk in self.blocks:
            h = h + blk["attn"](blk["ln1"](h))
            h = h + blk["mlp"](blk["ln2"](h))
        return self.head(self.ln_f(h)[:, -1])


def train_first(seed: int = 0, steps: int = 40) -> Textbook:
    """A :class:`Textbook` model trained (CPU, seconds) on FIRST (accept iff the word starts with
    1) over words of length 1–6, tokens ``<cls>, 0, 1``."""
    torch.manual_seed(seed)
    model = Textbook(d_model=8, nhead=2, dim_feedforward=16, max_len=16, dropout=0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        n = int(torch.randint(1, 7, (), generator=gen))
        words = torch.randint(0, 2, (32, n), generator=gen)
        ids = torch.cat([torch.zeros(32, 1, dtype=torch.long), words + 1], 1)
        loss = nn.functional.binary_cross_entropy_with_logits(
            model(ids), (words[:, 0] == 1).float()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()
