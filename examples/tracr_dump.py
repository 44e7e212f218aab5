"""Dump a compiled tracr model (an ``AssembledTransformerModel``) in netproof's TransformerLens-
layout dump format, with its own outputs recorded for the faithfulness gate:

    python examples/tracr_dump.py OUT.pt            # the example program below
    netproof check-model OUT.pt --language FILE.py:NAME --max-n 4

tracr (github.com/google-deepmind/tracr) is not on PyPI; install it from its repository. Nothing
of tracr's code is in netproof: this script reads a compiled model's parameters and writes data.
UNTESTED here: tracr is not installed where netproof's tests run (tests skip this path with that
reason); the dump format itself is tested with a fixture of the same layout
(tests/fixtures/models/tracr_layout.pt).

The format (``netproof-transformerlens`` version 1, a ``torch.save`` dict that
``torch.load(..., weights_only=True)`` reads): ``cfg`` (TransformerLens's names: n_layers,
d_model, n_heads, d_head, d_mlp, d_vocab, n_ctx, act_fn "relu", attention_dir, normalization_type
None, attn_scale, eps, attn_only False, positional_embedding_type "standard"), ``state_dict``
(TransformerLens's keys: ``embed.W_E [d_vocab, d_model]``, ``pos_embed.W_pos``,
``blocks.{l}.attn.W_Q/W_K/W_V [heads, d_model, d_head]``, ``b_Q/b_K/b_V [heads, d_head]``,
``W_O [heads, d_head, d_model]``, ``b_O``, ``blocks.{l}.mlp.W_in/b_in/W_out/b_out``,
``unembed.W_U [d_model, outputs]``, ``unembed.b_U``), ``vocab`` (the token of each input id),
``alphabet``, ``prefix`` (``["BOS"]``), ``suffix``, ``readout`` (``position``, ``accept`` and
``reject``: the output indices whose difference is the logit) and ``recorded`` (``words``,
``outputs``, ``dtype``, ``source``: the compiled model's own outputs, computed here by tracr).

tracr's layout: token and position embeddings, then per layer an attention block (haiku's
MultiHeadAttention: scores q·k/√key_size, softmax, causal or not) and an MLP (linear, ReLU,
linear), each added to the residual stream, no layer norm; the output is read off the residual
stream's output dimensions. A tracr "layer" pairs one attention with one MLP; a missing one
has zero weights.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import torch


def dump(
    assembled, path: Path, *, vocab: list[str], max_len: int, accept: str, reject: str
) -> None:
    """Write the dump of ``assembled`` (a compiled tracr model over ``vocab``, inputs of up to
    ``max_len`` symbols after BOS), read as output ``accept`` minus output ``reject`` at the last
    position."""
    cfg = assembled.model_config
    p = {k: {n: np.asarray(v) for n, v in d.items()} for k, d in assembled.params.items()}
    bos = assembled.input_encoder.bos_token
    enc = assembled.input_encoder.encoding_map
    tokens = [t for t, _ in sorted(enc.items(), key=lambda kv: kv[1])]
    W_E = p["token_embed"]["embeddings"]
    d = W_E.shape[1]
    H, dk = cfg.num_heads, cfg.key_size
    labels = [str(lab) for lab in assembled.residual_labels]
    out_dims = {lab: i for i, lab in enumerate(labels)}
    outputs = [f"{assembled.output_encoder.name}:{v}" for v in (reject, accept)]
    W_U = np.zeros((d, 2), dtype=np.float32)
    for j, lab in enumerate(outputs):
        W_U[out_dims[lab], j] = 1.0
    sd: dict[str, torch.Tensor] = {
        "embed.W_E": torch.tensor(W_E),
        "pos_embed.W_pos": torch.tensor(p["pos_embed"]["embeddings"]),
        "unembed.W_U": torch.tensor(W_U),
        "unembed.b_U": torch.zeros(2),
    }
    for layer in range(cfg.num_layers):
        a = f"transformer/layer_{layer}/attn"
        m = f"transformer/layer_{layer}/mlp"
        blk = f"blocks.{layer}"
        for part, name in (("Q", "query"), ("K", "key"), ("V", "value")):
            w = p.get(f"{a}/{name}", {}).get("w", np.zeros((d, H * dk), np.float32))
            b = p.get(f"{a}/{name}", {}).get("b", np.zeros(H * dk, np.float32))
            sd[f"{blk}.attn.W_{part}"] = torch.tensor(w.reshape(d, H, dk).transpose(1, 0, 2))
            sd[f"{blk}.attn.b_{part}"] = torch.tensor(b.reshape(H, dk))
        wo = p.get(f"{a}/linear", {}).get("w", np.zeros((H * dk, d), np.float32))
        sd[f"{blk}.attn.W_O"] = torch.tensor(wo.reshape(H, dk, d))
        sd[f"{blk}.attn.b_O"] = torch.tensor(
            p.get(f"{a}/linear", {}).get("b", np.zeros(d, np.float32))
        )
        w1 = p.get(f"{m}/linear_1", {}).get("w", np.zeros((d, 1), np.float32))
        sd[f"{blk}.mlp.W_in"] = torch.tensor(w1)
        sd[f"{blk}.mlp.b_in"] = torch.tensor(
            p.get(f"{m}/linear_1", {}).get("b", np.zeros(w1.shape[1], np.float32))
        )
        sd[f"{blk}.mlp.W_out"] = torch.tensor(
            p.get(f"{m}/linear_2", {}).get("w", np.zeros((w1.shape[1], d), np.float32))
        )
        sd[f"{blk}.mlp.b_out"] = torch.tensor(
            p.get(f"{m}/linear_2", {}).get("b", np.zeros(d, np.float32))
        )
    words = [w for k in range(1, max_len + 1) for w in itertools.product(vocab, repeat=k)]
    recorded = []
    for w in words:
        out = assembled.apply([bos, *w])
        resid = np.asarray(out.residuals[-1])[0, -1]  # the final residual stream, last position
        recorded.append(float(resid @ W_U[:, 1] - resid @ W_U[:, 0]))
    torch.save(
        {
            "format": "netproof-transformerlens",
            "version": 1,
            "cfg": {
                "n_layers": cfg.num_layers,
                "d_model": d,
                "n_heads": H,
                "d_head": dk,
                "d_mlp": sd["blocks.0.mlp.W_in"].shape[1],
                "d_vocab": W_E.shape[0],
                "n_ctx": sd["pos_embed.W_pos"].shape[0],
                "act_fn": "relu",
                "attention_dir": "causal" if cfg.causal else "bidirectional",
                "normalization_type": None,
                "attn_scale": math.sqrt(dk),
                "eps": 1e-5,
                "attn_only": False,
                "positional_embedding_type": "standard",
            },
            "state_dict": sd,
            "vocab": tokens,
            "alphabet": list(vocab),
            "prefix": [bos],
            "suffix": [],
            "readout": {"position": -1, "accept": 1, "reject": 0},
            "recorded": {
                "source": "tracr's compiled model (assembled.apply)",
                "dtype": "float32",
                "words": [" ".join(w) for w in words],
                "outputs": recorded,
            },
        },
        path,
    )


def dump_example(path: Path) -> None:
    """A small library-style program: whether the first token is ``a`` (a categorical output
    read at BOS: True minus False)."""
    from tracr.compiler import compiling
    from tracr.rasp import rasp

    first = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.Map(lambda _: 0, rasp.indices), rasp.Comparison.EQ),
        rasp.tokens,
        default=None,
    ).named("first")
    is_a = rasp.categorical(rasp.Map(lambda t: t == "a", first)).named("is_a")
    assembled = compiling.compile_rasp_to_model(
        is_a, vocab={"a", "b"}, max_seq_len=4, compiler_bos="BOS"
    )
    dump(assembled, path, vocab=["a", "b"], max_len=4, accept="True", reject="False")


if __name__ == "__main__":
    dump_example(Path(sys.argv[1] if len(sys.argv) > 1 else "tracr_first_is_a.pt"))
