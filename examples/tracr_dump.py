"""Dump compiled tracr models (``AssembledTransformerModel``) in netproof's TransformerLens-
layout dump format, with their own outputs and their RASP program's outputs recorded:

    python examples/tracr_dump.py OUTDIR [NAME ...]    # tracr's library programs (the fixtures)
    python examples/tracr_dump.py OUTDIR --benchmark   # all 20, thousands of inputs each
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
    encode = assembled.input_encoder.encode
    done = 0
    for k in range(1, max_len + 1):  # one batch per length: assembled.apply's forward, batched
        batch = words[done : done + len(vocab) ** k]
        out = assembled.forward(
            assembled.params, np.asarray([encode([bos, *w]) for w in batch], dtype=np.int32)
        )
        resid = np.asarray(out.transformer_output.residuals[-1])  # [B, 1 + k, d], every position
        y = resid @ W_U
        logits[done : done + len(batch), : k + 1] = y
        unembedded = np.asarray(out.unembedded_output).tolist()
        for i, w in enumerate(batch):
            recorded.append(float(y[i, -1, ia] - (y[i, -1, ir] if ir is not None else 0.0)))
            row = unembedded[i]
            got = out_enc.decode(row) if out_enc is not None else row
            decoded.append([None] + [_value(v) for v in got[1:]])
            if program is not None:
                from tracr.rasp import rasp

                expected.append([None] + [_value(v) for v in rasp.evaluate(program, list(w))])
        done += len(batch)
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


FIXTURE_LENGTHS = {
    "length": 5,
    "reverse": 4,
    "hist": 5,
    "sort_unique": 4,
    "sort": 4,
    "sort_freq": 4,
    "frac_prevs": 5,
    "pair_balance": 5,
    "shuffle_dyck": 5,
    "shuffle_dyck2": 4,
    "count_less_freq": 4,
    "count_a": 5,
}
"""The ``max_seq_len`` of the committed fixtures (tests/fixtures/models/tracr/)."""

BENCHMARK_LENGTHS = {
    "length": 7,
    "length_numerical": 7,
    "reverse": 7,
    "hist": 7,
    "sort_unique": 7,
    "sort": 7,
    "sort_by_position": 7,
    "sort_freq": 7,
    "frac_prevs": 11,
    "pair_balance": 11,
    "shuffle_dyck": 11,
    "shuffle_dyck2": 6,
    "count_less_freq": 7,
    "count_less_freq_numerical": 7,
    "count_a": 7,
    "shift_by_1": 7,
    "shift_by_2": 7,
    "detect_pattern_ab": 11,
    "detect_pattern_abc": 7,
    "nary_sequencemap": 7,
}
"""Every library program and variant, with a ``max_seq_len`` giving thousands of inputs each
(2 symbols up to 11, 3 up to 7, 4 up to 6): ``benchmarks/tracr_library.py``."""


def library(lengths: dict[str, int] | None = None) -> dict[str, tuple[Any, list[Any], int]]:
    """tracr's library programs (tracr.compiler.lib: every function of it, with the variants of
    its own test cases) with a small vocabulary: name -> (program, vocabulary, max_seq_len), for
    the names of ``lengths`` (default :data:`FIXTURE_LENGTHS`)."""
    from tracr.compiler import lib
    from tracr.rasp import rasp

    abc, nums = ["a", "b", "c"], [1, 2, 3]
    lengths = FIXTURE_LENGTHS if lengths is None else lengths
    build: dict[str, tuple[Any, list[Any]]] = {
        "length": (lambda n: lib.make_length(), abc),
        "length_numerical": (lambda n: rasp.numerical(lib.make_length()), abc),
        "reverse": (lambda n: lib.make_reverse(rasp.tokens), abc),
        "hist": (lambda n: lib.make_hist(), abc),
        "sort_unique": (lambda n: lib.make_sort_unique(rasp.tokens, rasp.tokens), nums),
        "sort": (
            lambda n: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1),
            nums,
        ),
        "sort_by_position": (
            lambda n: lib.make_sort(rasp.tokens, 1 - rasp.indices, max_seq_len=n, min_key=1),
            abc,
        ),
        "sort_freq": (lambda n: lib.make_sort_freq(max_seq_len=n), abc),
        "frac_prevs": (lambda n: lib.make_frac_prevs(rasp.tokens == "x"), ["x", "y"]),
        "pair_balance": (lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"), ["(", ")"]),
        "shuffle_dyck": (lambda n: lib.make_shuffle_dyck(["()"]), ["(", ")"]),
        "shuffle_dyck2": (lambda n: lib.make_shuffle_dyck2(), ["(", ")", "{", "}"]),
        "count_less_freq": (lambda n: lib.make_count_less_freq(2), abc),
        "count_less_freq_numerical": (
            lambda n: rasp.numerical(lib.make_count_less_freq(2)),
            abc,
        ),
        "count_a": (lambda n: lib.make_count(rasp.tokens, "a"), abc),
        "shift_by_1": (lambda n: lib.shift_by(1, rasp.tokens), abc),
        "shift_by_2": (lambda n: lib.shift_by(2, rasp.tokens), abc),
        "detect_pattern_ab": (lambda n: lib.detect_pattern(rasp.tokens, "ab"), ["a", "b"]),
        "detect_pattern_abc": (lambda n: lib.detect_pattern(rasp.tokens, "abc"), abc),
        "nary_sequencemap": (
            lambda n: lib.make_nary_sequencemap(
                lambda x, y, z: x + y - z, rasp.tokens, rasp.tokens, rasp.indices
            ),
            nums,
        ),
    }
    out = {}
    for name, n in lengths.items():
        make, vocab = build[name]
        out[name] = (make(n).named(name), vocab, n)
    return out


def dump_library(
    out: Path, names: list[str] | None = None, lengths: dict[str, int] | None = None
) -> list[str]:
    """Compile and dump the programs of :func:`library` (those of ``names``, default all) into
    ``out``; returns the names dumped (a program tracr does not compile is said and skipped)."""
    import time

    from tracr.compiler import compiling

    out.mkdir(parents=True, exist_ok=True)
    dumped = []
    for name, (program, vocab, n) in library(lengths).items():
        if names and name not in names:
            continue
        t0 = time.perf_counter()
        try:
            assembled = compiling.compile_rasp_to_model(
                program, vocab=set(vocab), max_seq_len=n, compiler_bos="BOS"
            )
        except Exception as exc:  # a program tracr does not compile: said, not dumped
            print(f"{name}: tracr does not compile it: {type(exc).__name__}: {exc}", flush=True)
            continue
        path = out / f"{name}.pt"
        dump(assembled, path, vocab=vocab, max_len=n, program=program)
        dumped.append(name)
        print(
            f"{name}: {path} ({path.stat().st_size} bytes, {time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    return dumped


def dump_example(path: Path) -> None:
    """One library program (make_hist over a, b, c, up to 3 symbols) to ``path``."""
    from tracr.compiler import compiling, lib

    program = lib.make_hist()
    assembled = compiling.compile_rasp_to_model(
        program, vocab={"a", "b", "c"}, max_seq_len=3, compiler_bos="BOS"
    )
    dump(assembled, path, vocab=["a", "b", "c"], max_len=3, program=program)


if __name__ == "__main__":
    args = sys.argv[1:]
    big = "--benchmark" in args  # every program at BENCHMARK_LENGTHS (benchmarks/tracr_library.py)
    args = [a for a in args if a != "--benchmark"]
    dump_library(
        Path(args[0] if args else "tracr"),
        args[1:] or None,
        BENCHMARK_LENGTHS if big else None,
    )
