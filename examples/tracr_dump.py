"""Dump compiled tracr models (``AssembledTransformerModel``) in netproof's TransformerLens-
layout dump format, with their own outputs and their RASP program's outputs recorded:

    python examples/tracr_dump.py OUTDIR [NAME ...]    # tracr's library programs (LIBRARY)
    netproof check-model OUTDIR/hist.pt --output categorical --max-n 4

tracr (github.com/google-deepmind/tracr) is not on PyPI; install it from its repository. Nothing
of tracr's code is in netproof: this script compiles tracr's library programs with tracr, reads
each compiled model's parameters and writes data (the committed fixtures
tests/fixtures/models/tracr/*.pt come from it).

The format (``netproof-transformerlens`` version 1, a ``torch.save`` dict that
``torch.load(..., weights_only=True)`` reads): ``cfg`` (TransformerLens's names: n_layers,
d_model, n_heads, d_head, d_mlp, d_vocab, n_ctx, act_fn "relu", attention_dir, normalization_type
None, attn_scale, eps, attn_only False, positional_embedding_type "standard"), ``state_dict``
(TransformerLens's keys: ``embed.W_E [d_vocab, d_model]``, ``pos_embed.W_pos``,
``blocks.{l}.attn.W_Q/W_K/W_V [heads, d_model, d_head]``, ``b_Q/b_K/b_V [heads, d_head]``,
``W_O [heads, d_head, d_model]``, ``b_O``, ``blocks.{l}.mlp.W_in/b_in/W_out/b_out``,
``unembed.W_U [d_model, outputs]``: the output space's residual dimensions, ``unembed.b_U``),
``vocab`` (the token of each input id), ``alphabet``, ``prefix`` (``["BOS"]``), ``suffix``,
``readout`` (``position``, ``accept`` and ``reject``: the output indices whose difference is the
one logit of the recognizer path), ``outputs`` (``kind`` "categorical" or "numerical", ``values``:
the value of each unembedding column, ``positions`` "from 1": BOS's output is not the program's)
and ``recorded`` (``words``, ``outputs``: the readout's logit per word, ``logits``: every
output at every position ``[words, 1 + max_len, outputs]``, NaN past the word, ``expected``: the
RASP program's value per position by tracr's own evaluator ``rasp.evaluate``, None at BOS and
where it gives None, ``decoded``: the compiled model's own decoded output, ``dtype``,
``source``).

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
from typing import Any

import numpy as np
import torch


def _value(v: Any) -> Any:
    """A RASP value as plain data (bools, ints, floats, strings)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return int(v) if float(v).is_integer() else float(v)
    return str(v)


def dump(
    assembled: Any,
    path: Path,
    *,
    vocab: list[str],
    max_len: int,
    program: Any = None,
    accept: Any = None,
    reject: Any = None,
) -> None:
    """Write the dump of ``assembled`` (a compiled tracr model over ``vocab``, inputs of 1 to
    ``max_len`` symbols after BOS); ``program`` (its RASP program) gives the expected outputs.
    The recognizer readout is output ``accept`` minus output ``reject`` (default: the first two
    values) at the last position; a numerical output is its one dimension."""
    cfg = assembled.model_config
    p = {k: {n: np.asarray(v) for n, v in d.items()} for k, d in assembled.params.items()}
    bos = assembled.input_encoder.bos_token
    enc = assembled.input_encoder.encoding_map
    tokens = [str(t) for t, _ in sorted(enc.items(), key=lambda kv: kv[1])]
    W_E = p["token_embed"]["embeddings"]
    d = W_E.shape[1]
    H, dk = cfg.num_heads, cfg.key_size
    labels = [str(lab) for lab in assembled.residual_labels]
    dims = {lab: i for i, lab in enumerate(labels)}
    out_enc = assembled.output_encoder
    if getattr(out_enc, "encoding_map", None) is not None:
        kind = "categorical"
        values = [v for v, _ in sorted(out_enc.encoding_map.items(), key=lambda kv: kv[1])]
        name = program.label if program is not None else labels[0].split(":")[0]
        cols = [dims[f"{name}:{v}"] for v in values]
    else:
        kind = "numerical"
        name = program.label
        values = [name]
        cols = [dims[name]]
    W_U = np.zeros((d, len(cols)), dtype=np.float32)
    for j, c in enumerate(cols):
        W_U[c, j] = 1.0
    ia = 0 if kind == "numerical" else (values.index(accept) if accept is not None else 1)
    ir = None if kind == "numerical" else (values.index(reject) if reject is not None else 0)
    sd: dict[str, torch.Tensor] = {
        "embed.W_E": torch.tensor(W_E),
        "pos_embed.W_pos": torch.tensor(p["pos_embed"]["embeddings"]),
        "unembed.W_U": torch.tensor(W_U),
        "unembed.b_U": torch.zeros(len(cols)),
    }
    d_mlp = max(
        [p[k]["w"].shape[1] for k in p if k.endswith("mlp/linear_1")] or [1]
    )  # tracr pads every MLP to the widest
    for layer in range(cfg.num_layers):
        a = f"transformer/layer_{layer}/attn"
        m = f"transformer/layer_{layer}/mlp"
        blk = f"blocks.{layer}"
        for part, nm in (("Q", "query"), ("K", "key"), ("V", "value")):
            w = p.get(f"{a}/{nm}", {}).get("w", np.zeros((d, H * dk), np.float32))
            b = p.get(f"{a}/{nm}", {}).get("b", np.zeros(H * dk, np.float32))
            sd[f"{blk}.attn.W_{part}"] = torch.tensor(w.reshape(d, H, dk).transpose(1, 0, 2))
            sd[f"{blk}.attn.b_{part}"] = torch.tensor(b.reshape(H, dk))
        wo = p.get(f"{a}/linear", {}).get("w", np.zeros((H * dk, d), np.float32))
        sd[f"{blk}.attn.W_O"] = torch.tensor(wo.reshape(H, dk, d))
        sd[f"{blk}.attn.b_O"] = torch.tensor(
            p.get(f"{a}/linear", {}).get("b", np.zeros(d, np.float32))
        )
        w1 = p.get(f"{m}/linear_1", {}).get("w", np.zeros((d, d_mlp), np.float32))
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
    recorded, expected, decoded = [], [], []
    logits = np.full((len(words), max_len + 1, len(cols)), np.nan, dtype=np.float32)
    for i, w in enumerate(words):
        out = assembled.apply([bos, *w])
        resid = np.asarray(out.residuals[-1])[0]  # the final residual stream, every position
        y = resid @ W_U
        logits[i, : len(w) + 1] = y
        recorded.append(float(y[-1, ia] - (y[-1, ir] if ir is not None else 0.0)))
        decoded.append([None] + [_value(v) for v in out.decoded[1:]])
        if program is not None:
            from tracr.rasp import rasp

            expected.append([None] + [_value(v) for v in rasp.evaluate(program, list(w))])
    torch.save(
        {
            "format": "netproof-transformerlens",
            "version": 1,
            "cfg": {
                "n_layers": cfg.num_layers,
                "d_model": d,
                "n_heads": H,
                "d_head": dk,
                "d_mlp": d_mlp,
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
            "alphabet": [str(a) for a in vocab],
            "prefix": [str(bos)],
            "suffix": [],
            "readout": {"position": -1, "accept": ia, "reject": ir},
            "outputs": {"kind": kind, "values": [_value(v) for v in values], "positions": 1},
            "recorded": {
                "source": "tracr's compiled model (assembled.apply); expected: rasp.evaluate",
                "dtype": "float32",
                "words": [" ".join(str(a) for a in w) for w in words],
                "outputs": recorded,
                "logits": torch.tensor(logits),
                "expected": expected,
                "decoded": decoded,
            },
        },
        path,
    )


def library() -> dict[str, tuple[Any, list[Any], int]]:
    """tracr's library programs (tracr.compiler.lib) with a small vocabulary and length: name ->
    (program, vocabulary, max_seq_len)."""
    from tracr.compiler import lib
    from tracr.rasp import rasp

    abc = ["a", "b", "c"]
    programs = {
        "length": (lib.make_length(), abc, 5),
        "reverse": (lib.make_reverse(rasp.tokens), abc, 4),
        "hist": (lib.make_hist(), abc, 5),
        "sort_unique": (lib.make_sort_unique(rasp.tokens, rasp.tokens), [1, 2, 3], 4),
        "sort": (lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=4, min_key=1), [1, 2, 3], 4),
        "sort_freq": (lib.make_sort_freq(max_seq_len=4), abc, 4),
        "frac_prevs": (lib.make_frac_prevs(rasp.tokens == "x"), ["x", "y"], 5),
        "pair_balance": (lib.make_pair_balance(rasp.tokens, "(", ")"), ["(", ")"], 5),
        "shuffle_dyck": (lib.make_shuffle_dyck(["()"]), ["(", ")"], 5),
        "shuffle_dyck2": (lib.make_shuffle_dyck2(), ["(", ")", "{", "}"], 4),
        "count_less_freq": (lib.make_count_less_freq(2), ["a", "b", "c"], 4),
        "count_a": (lib.make_count(rasp.tokens, "a"), abc, 5),
    }
    return {k: (prog.named(k), v, n) for k, (prog, v, n) in programs.items()}


def dump_library(out: Path, names: list[str] | None = None) -> None:
    from tracr.compiler import compiling

    out.mkdir(parents=True, exist_ok=True)
    for name, (program, vocab, n) in library().items():
        if names and name not in names:
            continue
        try:
            assembled = compiling.compile_rasp_to_model(
                program, vocab=set(vocab), max_seq_len=n, compiler_bos="BOS"
            )
        except Exception as exc:  # a program tracr does not compile: said, not dumped
            print(f"{name}: tracr does not compile it: {type(exc).__name__}: {exc}")
            continue
        path = out / f"{name}.pt"
        dump(assembled, path, vocab=vocab, max_len=n, program=program)
        print(f"{name}: {path} ({path.stat().st_size} bytes)")


def dump_example(path: Path) -> None:
    """One library program (make_hist over a, b, c, up to 3 symbols) to ``path``."""
    from tracr.compiler import compiling, lib

    program = lib.make_hist()
    assembled = compiling.compile_rasp_to_model(
        program, vocab={"a", "b", "c"}, max_seq_len=3, compiler_bos="BOS"
    )
    dump(assembled, path, vocab=["a", "b", "c"], max_len=3, program=program)


if __name__ == "__main__":
    dump_library(Path(sys.argv[1] if len(sys.argv) > 1 else "tracr"), sys.argv[2:] or None)
