"""The torch export: every weight lands where the layout says, rounded as it says, and the
layout alone is enough to run the network.

The hand check at the end re-implements the forward pass from ``state_dict`` + ``layout`` only
(the positional features by their registry names, as the layout documents): no IR object is
read there, so agreement with the exact interpreter shows the layout is sufficient and its
documentation right.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mpmath.libmp import to_rational

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import parity_transformer
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic import (
    FFN,
    SIGMA,
    Affine,
    AttentionLayer,
    Classifier,
    FlatEmbedding,
    Hardmax,
    Head,
    LayerNorm,
    MissingExtraError,
    Network,
    NextSymbols,
    NotRationalError,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
    affine,
    classifier,
    constant,
    exact,
    ffn,
    interval,
    layernorm,
    token_embedding,
)
from netproof.symbolic import torch_export as te
from netproof.symbolic.evaluation import UndecidedSignError, UndefinedValueError
from netproof.symbolic.positional import feature

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.torch

REPO = Path(__file__).resolve().parents[2]
F = Fraction


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Tiny tensors: threads only add synchronisation (seconds on a busy 2-core machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def registry_network(name: str) -> Network:
    c = REGISTRY[name]
    values = c.parse_params({})
    return c.network(values, 3) if c.per_length else c.network(values)


#: Constructions whose networks the state_dict layout refuses, with the start of the reason.
NOT_EXPORTED = {"relpos": "network.layers[0].block.heads[0] (head 'fixed') has relative_bias"}
#: RecurrentNetworks and encoder–decoders (Seq2Seq) are refused whole (tested elsewhere).
OTHER_KINDS = {"stack-rnn", "baby-ntm", "stack-lstm", "tm-sim", "prop43-tight"}
NAMES = sorted(name for name in REGISTRY if name not in NOT_EXPORTED and name not in OTHER_KINDS)


@pytest.mark.parametrize("name", sorted(NOT_EXPORTED))
def test_a_construction_the_layout_cannot_hold_is_refused_naming_the_field(name: str) -> None:
    net = registry_network(name)
    with pytest.raises(te.StateDictError, match=re.escape(NOT_EXPORTED[name])):
        te.layout(net)
    with pytest.raises(te.StateDictError, match=re.escape(NOT_EXPORTED[name])):
        te.state_dict(net)


# --------------------------------------------------------------------------- expectations from the IR

Entries = dict[tuple[str | None, str | None], Fraction]
Expected = dict[str, tuple[list[str] | None, list[str] | None, Entries]]


def _affine(
    out: Expected, a: Affine, weight: str, bias: str, cols: Sequence[str] | None = None
) -> None:
    w: Entries = {}
    for o, row in zip(a.outputs, a.weights, strict=True):
        for i, x in zip(a.inputs, row, strict=True):
            w[o, i] = x
    out[weight] = (list(a.outputs), list(a.inputs if cols is None else cols), w)
    out[bias] = (
        list(a.outputs),
        None,
        {(o, None): b for o, b in zip(a.outputs, a.bias, strict=True)},
    )


def expected(net: Network) -> Expected:
    """Every tensor the module docstring documents, built from the IR by its rules."""
    out: Expected = {}
    dims = list(net.dims)
    emb = net.embedding
    if isinstance(emb, TokenEmbedding):
        tokens = list(
            dict.fromkeys([*emb.alphabet, *emb.prefix, *emb.suffix, *(t for t, _ in emb.table)])
        )
        table: Entries = {}
        for token, row in emb.table:
            for d, v in row:
                table[token, d] = table.get((token, d), F(0)) + v
        out["embedding.table"] = (tokens, dims, table)
        pos: Entries = {}
        for d, feat, coef in emb.positional:
            pos[feat, d] = pos.get((feat, d), F(0)) + coef
        features = list(dict.fromkeys(feat for _, feat, _ in emb.positional))
        out["embedding.positional"] = (features, dims, pos)
    else:
        assert isinstance(emb, FlatEmbedding)
        out["embedding.values"] = (list(emb.alphabet), None, {(s, None): v for s, v in emb.values})
    for i, sub in enumerate(net.layers):
        block = sub.block
        if isinstance(block, AttentionLayer):
            for h, head in enumerate(block.heads):
                p = f"layers.{i}.attention.heads.{h}"
                _affine(out, head.query, f"{p}.W_Q", f"{p}.b_Q", dims)
                _affine(out, head.key, f"{p}.W_K", f"{p}.b_K", dims)
                _affine(out, head.value, f"{p}.W_V", f"{p}.b_V", dims)
            if block.output is not None:
                concat = [o for head in block.heads for o in head.value.outputs]
                _affine(
                    out,
                    block.output,
                    f"layers.{i}.attention.W_O",
                    f"layers.{i}.attention.b_O",
                    concat,
                )
        else:
            assert isinstance(block, FFN)
            for j, step in enumerate(block.steps):
                if isinstance(step, Affine):
                    _affine(
                        out,
                        step,
                        f"layers.{i}.ffn.steps.{j}.weight",
                        f"layers.{i}.ffn.steps.{j}.bias",
                    )
                elif isinstance(step, LayerNorm):
                    out[f"layers.{i}.ffn.steps.{j}.eps"] = (None, None, {(None, None): step.eps})
        if sub.post_ln is not None:
            out[f"layers.{i}.post_ln.eps"] = (None, None, {(None, None): sub.post_ln.eps})
    r = net.readout
    if isinstance(r, Classifier):
        _affine(out, r.logit, "readout.logit.weight", "readout.logit.bias", dims)
    else:
        assert isinstance(r, NextSymbols)
        out["readout.scores"] = (
            [s for s, _ in r.scores],
            dims,
            {(s, d): F(1) for s, d in r.scores},
        )
        out["readout.threshold"] = (None, None, {(None, None): r.threshold})
    return out


def entry_names(
    rows: list[str] | None, cols: list[str] | None
) -> list[tuple[str | None, str | None]]:
    """The (row, col) names of a tensor's entries in row-major order."""
    if rows is None:
        return [(None, None)]
    if cols is None:
        return [(r, None) for r in rows]
    return [(r, c) for r in rows for c in cols]


def nearest_float32(q: Fraction) -> float:
    """The float32 nearest to ``q`` (ties to even), found among the neighbours of a first guess
    without trusting any library's rounding of a rational."""
    guess = np.float32(float(q))
    candidates = {
        guess,
        np.nextafter(guess, np.float32(np.inf)),
        np.nextafter(guess, np.float32(-np.inf)),
    }

    def distance(c: np.float32) -> tuple[Fraction, int]:
        even = int(np.array(c).view(np.uint32)) & 1
        return abs(Fraction(float(c)) - q), even

    return float(min(candidates, key=distance))


# --------------------------------------------------------------------------- keys, shapes, entries


@pytest.mark.parametrize("name", NAMES)
def test_every_construction_exports_the_keys_shapes_and_names_the_layout_documents(
    name: str,
) -> None:
    net = registry_network(name)
    sd = te.state_dict(net)
    lay = te.layout(net)
    want = expected(net)
    assert list(sd) == list(lay["tensors"])
    assert set(sd) == set(want)
    json.dumps(lay, allow_nan=False)  # plain JSON
    assert lay["format"] == "netproof-state-dict" and lay["format_version"] == 1
    assert lay["dims"] == list(net.dims) and lay["dtype"] == "float64"
    for key, t in sd.items():
        info = lay["tensors"][key]
        rows, cols, _ = want[key]
        assert (info["rows"], info["cols"]) == (rows, cols), key
        shape = [] if rows is None else [len(rows)] if cols is None else [len(rows), len(cols)]
        assert info["shape"] == shape == list(t.shape), key
        assert t.dtype == torch.float64 and t.device.type == "cpu"
        assert info["from"].startswith("network."), key
    assert len(lay["layers"]) == len(net.layers)


@pytest.mark.parametrize("name", NAMES)
def test_every_entry_is_the_float64_of_its_ir_rational_and_the_exactness_report_is_right(
    name: str,
) -> None:
    net = registry_network(name)
    sd = te.state_dict(net)
    lay = te.layout(net)
    for key, (rows, cols, entries) in expected(net).items():
        names = entry_names(rows, cols)
        assert all(pair in names for pair in entries), f"{key} drops a weight"
        flat = sd[key].reshape(-1).tolist()
        qs = [entries.get(pair, F(0)) for pair in names]
        assert flat == [float(q) for q in qs], key
        errors = [abs(Fraction(x) - q) for x, q in zip(flat, qs, strict=True)]
        info = lay["tensors"][key]
        assert info["exact"] == all(e == 0 for e in errors), key
        assert info["inexact_entries"] == sum(e != 0 for e in errors), key
        assert info["max_abs_error"] == float(max(errors, default=F(0))), key


@pytest.mark.parametrize("name", NAMES)
def test_float32_entries_are_the_nearest_float32_of_each_rational(name: str) -> None:
    net = registry_network(name)
    sd = te.state_dict(net, dtype=torch.float32)
    lay = te.layout(net, dtype=torch.float32)
    assert lay["dtype"] == "float32"
    for key, (rows, cols, entries) in expected(net).items():
        assert sd[key].dtype == torch.float32
        qs = [entries.get(pair, F(0)) for pair in entry_names(rows, cols)]
        flat = sd[key].reshape(-1).tolist()
        assert flat == [nearest_float32(q) for q in qs], key
        assert lay["tensors"][key]["exact"] == all(
            Fraction(x) == q for x, q in zip(flat, qs, strict=True)
        )


def one_weight(w: Fraction | int | str) -> Network:
    """A network whose one FFN weight is ``w`` (and every other number is 0 or 1)."""
    return Network(
        name="one_weight",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        layers=(Sublayer(block=ffn("w", affine({"y": {"x": w}}))),),
        readout=classifier("y"),
    )


KEY = "layers.0.ffn.steps.0.weight"


def test_dyadic_weights_are_exact_and_others_report_their_rounding_error() -> None:
    assert te.layout(one_weight("-3/8"))["tensors"][KEY] == {
        "shape": [1, 1],
        "rows": ["y"],
        "cols": ["x"],
        "from": "network.layers[0].block.steps[0].weights",
        "exact": True,
        "inexact_entries": 0,
        "max_abs_error": 0.0,
    }
    third = te.layout(one_weight("1/3"))["tensors"][KEY]
    assert (third["exact"], third["inexact_entries"]) == (False, 1)
    assert third["max_abs_error"] == float(abs(Fraction(1 / 3) - F(1, 3))) > 0
    assert te.state_dict(one_weight("1/3"))[KEY].item() == 1 / 3


def test_the_smallest_subnormal_is_exact_in_float64_and_rounds_to_zero_in_float32() -> None:
    tiny = F(1, 2**1074)
    assert te.layout(one_weight(tiny))["tensors"][KEY]["exact"] is True
    assert te.state_dict(one_weight(tiny))[KEY].item() == 5e-324
    report = te.layout(one_weight(tiny), dtype="float32")["tensors"][KEY]
    assert (report["exact"], report["max_abs_error"]) == (False, 5e-324)
    assert te.state_dict(one_weight(tiny), dtype="float32")[KEY].item() == 0.0


def test_float32_rounds_the_rational_once_not_through_float64() -> None:
    # 1 + 2^-24 + 2^-60 is just above the midpoint of 1 and the next float32, 1 + 2^-23; float64
    # rounds it onto the midpoint, so float64-then-float32 would tie to even and give 1.
    w = 1 + F(1, 2**24) + F(1, 2**60)
    assert torch.tensor(float(w), dtype=torch.float64).to(torch.float32).item() == 1.0
    assert te.state_dict(one_weight(w), dtype=torch.float32)[KEY].item() == 1 + 2**-23


def test_a_weight_beyond_the_largest_float_is_an_error_that_names_the_entry() -> None:
    entry = (
        r"layers\.0\.ffn\.steps\.0\.weight\['y', 'x'\] = 1797\d+ "
        r"\(from network\.layers\[0\]\.block\.steps\[0\]\.weights\)"
    )
    with pytest.raises(te.StateDictError, match=entry + " is too large for float64"):
        te.state_dict(one_weight(2**1024))
    with pytest.raises(te.StateDictError, match="too large for float32; export as float64"):
        te.layout(one_weight(2**128), dtype="float32")
    assert te.state_dict(one_weight(2**128))[KEY].item() == 2.0**128


@pytest.mark.parametrize("dtype", ["float16", "torch.bfloat16", "int64"])
def test_a_dtype_other_than_float64_or_float32_is_refused(dtype: str) -> None:
    with pytest.raises(te.StateDictError, match=r"is not supported; export as torch\.float64"):
        te.state_dict(one_weight(1), dtype=getattr(torch, dtype.removeprefix("torch.")))
    with pytest.raises(te.StateDictError, match="is not supported"):
        te.layout(one_weight(1), dtype=dtype)


def test_layout_needs_no_torch_and_state_dict_names_the_extra_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    assert te.layout(one_weight(1))["tensors"][KEY]["exact"] is True
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[torch\]'"):
        te.state_dict(one_weight(1))


def test_importing_the_module_does_not_import_torch(tmp_path: Path) -> None:
    probe = "import sys, netproof.symbolic.torch_export\nprint('torch' in sys.modules)\n"
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --------------------------------------------------------------------------- save and load


@pytest.mark.parametrize("name", NAMES)
def test_save_then_torch_load_gives_back_the_same_tensors_and_layout(
    name: str, tmp_path: Path
) -> None:
    net = registry_network(name)
    path = tmp_path / "net.pt"
    te.save(net, path)
    raw = torch.load(path, weights_only=True)
    assert sorted(raw) == ["fingerprint", "format", "format_version", "layout", "state_dict"]
    assert (raw["format"], raw["format_version"]) == ("netproof-state-dict", 1)
    assert raw["fingerprint"] == te.layout(net)["fingerprint"]
    assert raw["layout"] == te.layout(net)
    sd = te.state_dict(net)
    assert list(raw["state_dict"]) == list(sd)
    assert all(torch.equal(raw["state_dict"][k], sd[k]) for k in sd)
    assert te.load(path, network=net)["layout"] == raw["layout"]


def test_save_in_float32_records_the_dtype(tmp_path: Path) -> None:
    te.save(one_weight("1/3"), tmp_path / "w.pt", dtype=torch.float32)
    obj = te.load(tmp_path / "w.pt")
    assert obj["layout"]["dtype"] == "float32" and obj["state_dict"][KEY].dtype == torch.float32
    assert obj["layout"]["tensors"][KEY]["exact"] is False


def test_load_refuses_a_file_for_another_network(tmp_path: Path) -> None:
    te.save(one_weight(1), tmp_path / "w.pt")
    with pytest.raises(te.StateDictError, match=r"not 'one_weight' .*: export this network again"):
        te.load(tmp_path / "w.pt", network=one_weight(2))


def _tamper(tmp_path: Path, change: Any) -> Path:
    path = tmp_path / "w.pt"
    te.save(one_weight(1), path)
    obj = torch.load(path, weights_only=True)
    change(obj)
    torch.save(obj, path)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda o: o.update(format="netproof-network"),
            "format 'netproof-network' is not 'netproof-state-dict'",
        ),
        (
            lambda o: o.update(format_version=2),
            "format_version 2 is not supported; this reader reads 1",
        ),
        (lambda o: o.update(extra=1), r"fields \[.*'extra'.*\] are not"),
        (lambda o: o["state_dict"].pop("readout.logit.bias"), "keys are not the layout's tensors"),
        (
            lambda o: o["state_dict"].update({KEY: torch.zeros(2, 1)}),
            r"is not a tensor of the layout's shape \[1, 1\]",
        ),
        (lambda o: o.update(fingerprint="0" * 64), "the layout's fingerprint is not the file's"),
    ],
)
def test_load_refuses_a_tampered_file(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(te.StateDictError, match=message):
        te.load(_tamper(tmp_path, change))


def test_load_refuses_a_file_that_is_not_a_torch_file(tmp_path: Path) -> None:
    (tmp_path / "w.pt").write_text("not a torch file")
    with pytest.raises(
        te.StateDictError, match=r"not a file written by symbolic\.torch_export\.save"
    ):
        te.load(tmp_path / "w.pt")
    with pytest.raises(FileNotFoundError, match=r"missing\.pt"):
        te.load(tmp_path / "missing.pt")


# --------------------------------------------------------------------------- the hand check

Tensor = Any  # torch.Tensor


def reference_logit(sd: dict[str, Tensor], lay: dict[str, Any], word: Sequence[str]) -> float:
    """The classifier's logit on ``word``, in float64, from the state dict and the layout only.

    Written from the module docstring of :mod:`netproof.symbolic.torch_export`; hardmax ties are scores
    within 1e-9 of the maximum (a float consumer cannot test exact equality).
    """
    dims = lay["dims"]
    at = {d: k for k, d in enumerate(dims)}
    emb = lay["embedding"]
    if emb["type"] == "TokenEmbedding":
        tokens = [*emb["prefix"], *word, *emb["suffix"]]
        n = len(tokens)
        positions = range(emb["index_base"], emb["index_base"] + n)
        x = sd["embedding.table"][[emb["tokens"].index(t) for t in tokens]].clone()
        feats = [feature(f["name"]) for f in emb["positional_features"]]
        values = torch.tensor(
            [[float(f(i, n)) for f in feats] for i in positions], dtype=torch.float64
        )
        x += values.reshape(n, len(feats)) @ sd["embedding.positional"]
    else:
        n = 1
        x = torch.zeros(1, len(dims), dtype=torch.float64)
        for d, s in zip(emb["input_dims"], word, strict=True):
            x[0, at[d]] = sd["embedding.values"][emb["alphabet"].index(s)]

    def linear(key: str, v: Tensor) -> Tensor:
        return v @ sd[f"{key}.weight" if f"{key}.weight" in sd else key].T

    def layer_norm(v: Tensor, names: list[str], over: list[str] | None, eps: Tensor) -> Tensor:
        idx = list(range(len(names))) if over is None else [names.index(o) for o in over]
        part = v[:, idx]
        centered = part - part.mean(dim=1, keepdim=True)
        v = v.clone()
        v[:, idx] = centered / torch.sqrt((centered**2).mean(dim=1, keepdim=True) + eps)
        return v

    for i, layer in enumerate(lay["layers"]):
        out = torch.zeros(n, len(dims), dtype=torch.float64)
        if layer["kind"] == "attention":
            head_outputs = []
            for h, head in enumerate(layer["heads"]):
                p = f"layers.{i}.attention.heads.{h}"
                q = x @ sd[f"{p}.W_Q"].T + sd[f"{p}.b_Q"]
                k = x @ sd[f"{p}.W_K"].T + sd[f"{p}.b_K"]
                v = x @ sd[f"{p}.W_V"].T + sd[f"{p}.b_V"]
                s = q @ k.T
                if head["scoring"] == "neg_abs_dot":
                    s = -s.abs()
                qi, kj = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
                allowed = {
                    "none": torch.ones(n, n, dtype=torch.bool),
                    "causal": kj <= qi,
                    "strict_causal": kj < qi,
                    "anticausal": kj >= qi,
                    "strict_anticausal": kj > qi,
                }[head["mask"]]
                nz = head["normalizer"]
                if nz["type"] == "hardmax":
                    top = s.masked_fill(~allowed, -math.inf).max(dim=1, keepdim=True).values
                    chosen = allowed & (s >= top - 1e-9)
                    if nz["tie"] != "average":
                        rank = chosen.cumsum(dim=1)  # 1 at the first maximizer, count at the last
                        chosen &= rank == (1 if nz["tie"] == "leftmost" else rank[:, -1:])
                    weights = chosen.double()
                    weights = weights / weights.sum(dim=1, keepdim=True).clamp(
                        min=1
                    )  # (mask @ V) / count
                else:
                    sc = head["scale"]
                    kappa = float(Fraction(sc["coef"]))
                    kappa /= math.sqrt(sc["sqrt_d"]) if sc["sqrt_d"] is not None else 1
                    kappa *= n if sc["times_n"] else 1
                    kappa *= math.log(n) if sc["log_n"] else 1
                    kappa *= (
                        math.log(Fraction(nz["r"]))
                        if nz["r"] is not None
                        else float(Fraction(nz["c"]))
                    )
                    weights = torch.softmax((kappa * s).masked_fill(~allowed, -math.inf), dim=1)
                    weights = torch.nan_to_num(weights)  # a query with nothing unmasked: 0
                assert head["empty"] == "zero" or allowed.any(dim=1).all()
                head_outputs.append(weights @ v)
                if not layer["output"]:
                    out[:, [at[d] for d in lay["tensors"][f"{p}.W_V"]["rows"]]] = weights @ v
            if layer["output"]:
                p = f"layers.{i}.attention"
                z = (
                    torch.cat(head_outputs, dim=1)
                    if head_outputs
                    else torch.zeros(n, 0, dtype=torch.float64)
                )
                out[:, [at[d] for d in lay["tensors"][f"{p}.W_O"]["rows"]]] = (
                    z @ sd[f"{p}.W_O"].T + sd[f"{p}.b_O"]
                )
        else:
            names, v = list(dims), x
            for j, step in enumerate(layer["steps"]):
                p = f"layers.{i}.ffn.steps.{j}"
                if step["kind"] == "affine":
                    info = lay["tensors"][f"{p}.weight"]
                    v = (
                        v[:, [names.index(c) for c in info["cols"]]] @ sd[f"{p}.weight"].T
                        + sd[f"{p}.bias"]
                    )
                    names = info["rows"]
                elif step["kind"] == "activation":
                    v = {
                        "relu": torch.relu,
                        "sigma": lambda t: t.clamp(0, 1),
                        "step": lambda t: (t > 0).double(),
                    }[step["activation"]](v)
                else:
                    v = layer_norm(v, names, step["over"], sd[f"{p}.eps"])
            if layer["steps"]:
                out[:, [at[d] for d in names]] = v
        x = x + out if layer["residual"] else out
        if layer["post_ln"] is not None:
            x = layer_norm(x, dims, layer["post_ln"]["over"], sd[f"layers.{i}.post_ln.eps"])
    readout = lay["readout"]
    assert readout["type"] == "Classifier"
    return float(
        x[readout["position"]] @ sd["readout.logit.weight"][0] + sd["readout.logit.bias"][0]
    )


def endpoints(iv: Any) -> tuple[Fraction, Fraction]:
    """The exact rational endpoints of an mpmath interval (as conftest.py reads them)."""
    lo, hi = iv._mpi_
    return Fraction(*to_rational(lo)), Fraction(*to_rational(hi))


def words(alphabet: Sequence[str], up_to: int) -> list[tuple[str, ...]]:
    return [w for length in range(up_to + 1) for w in itertools.product(alphabet, repeat=length)]


def test_a_forward_pass_from_the_state_dict_alone_gives_the_exact_logit_of_dyck_on_every_word_up_to_6() -> (
    None
):
    net = dyck_recognizer(k=1, depth=1)
    sd, lay = te.state_dict(net), te.layout(net)
    assert all(t["exact"] for t in lay["tensors"].values())
    checked = 0
    for w in words(lay["embedding"]["alphabet"], 6):
        trace = exact.run(net, w)
        assert trace.output is not None
        assert reference_logit(sd, lay, w) == float(trace.output), (
            w
        )  # y ∈ {0, 1} and logit = y − 1/2
        checked += 1
    assert checked == 127


def test_a_forward_pass_from_the_state_dict_alone_matches_the_softmax_parity_transformer_up_to_6() -> (
    None
):
    net = parity_transformer()
    sd, lay = te.state_dict(net), te.layout(net)
    for w in words(lay["embedding"]["alphabet"], 6):
        trace = exact.run(net, w)
        assert trace.output is not None
        assert reference_logit(sd, lay, w) == pytest.approx(
            float(trace.output), rel=1e-12, abs=1e-15
        ), w


def test_a_forward_pass_from_the_state_dict_alone_matches_rumelharts_flat_network() -> None:
    c = REGISTRY["rumelhart"]
    net = c.network(c.parse_params({}), 4)
    sd, lay = te.state_dict(net), te.layout(net)
    for w in itertools.product(lay["embedding"]["alphabet"], repeat=4):
        assert reference_logit(sd, lay, w) == float(exact.run(net, w).output), w  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [n for n in NAMES if n != "rumelhart"])
def test_a_forward_pass_from_the_state_dict_alone_agrees_with_every_classifier_on_short_words(
    name: str,
) -> None:
    # The other constructions (layer norm, ln n scaling, W^O, strict masks) on short words: the
    # exact logit where it is rational, else the interval interpreter's rigorous enclosure (words
    # whose hardmax the enclosure cannot decide are left out).
    net = registry_network(name)
    if not isinstance(net.readout, Classifier):
        pytest.skip(f"{name} is a generator (next-symbol readout)")
    sd, lay = te.state_dict(net), te.layout(net)
    emb = lay["embedding"]
    if emb["type"] == "FlatEmbedding":
        batch = list(itertools.product(emb["alphabet"], repeat=emb["length"]))
    else:
        batch = words(emb["alphabet"], 3 if len(emb["alphabet"]) <= 2 else 2)
    compared = 0
    for w in batch:
        try:
            lo = hi = exact.run(net, w).output
        except NotRationalError:
            try:
                lo, hi = endpoints(interval.run(net, w).output)
            except UndecidedSignError:
                continue
        except UndefinedValueError:  # e.g. a layer norm of a constant vector with eps = 0
            continue
        assert lo is not None and hi is not None
        got = reference_logit(sd, lay, w)
        assert (
            float(lo) - 1e-9 * (1 + abs(float(lo)))
            <= got
            <= float(hi) + 1e-9 * (1 + abs(float(hi)))
        ), w
        compared += 1
    assert compared >= len(batch) // 2


def every_attention_field() -> Network:
    """The fields no registered construction uses: leftmost / rightmost ties, −|dot| scoring,
    anticausal masks, an empty rule of ``error``, 1/√d and n scaling, σ. Layer 2 averages a
    mix of the layer-1 heads' outputs over all positions (through W^O), so each of them moves
    the logit."""

    def head(name: str, value: Any, **fields: Any) -> Head:
        key = fields.pop("key", affine({"q": {"x": 1}}))
        normalizer = fields.pop("normalizer", Hardmax())
        return Head(
            name=name,
            query=constant({"q": 1}),
            key=key,
            value=affine(value),
            normalizer=normalizer,
            **fields,
        )

    pos = {"p": 1}
    return Network(
        name="every_attention_field",
        dims=("x", "p", "l", "r", "z", "s", "e", "y"),
        embedding=token_embedding(
            ("a", "b", "c"),
            {"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 1}, "S": {}},
            positional={"p": "i"},
            suffix=("S",),
            index_base=1,
        ),
        layers=(
            Sublayer(
                block=AttentionLayer(
                    name="select",
                    heads=(
                        head(
                            "first", {"l": pos}, normalizer=Hardmax(tie="leftmost"), mask="causal"
                        ),
                        head(
                            "last",
                            {"r": pos},
                            normalizer=Hardmax(tie="rightmost"),
                            mask="anticausal",
                        ),
                        head(
                            "near1",
                            {"z": pos},
                            key=affine({"q": {"x": 1}}, bias={"q": -1}),
                            scoring="neg_abs_dot",
                            mask="strict_anticausal",
                        ),
                        head(
                            "soft",
                            {"s": pos},
                            normalizer=Softmax(r=F(2)),
                            scale=Scale(coef=F(4), sqrt_d=4, times_n=True),
                            mask="strict_causal",
                        ),
                        head("all", {"e": pos}, empty="error"),
                    ),
                )
            ),
            Sublayer(
                block=AttentionLayer(
                    name="mix",
                    heads=(
                        head(
                            "mean",
                            {"t": {"l": 1, "r": 10, "z": 100, "s": 1000, "e": 10000}},
                            key=constant({"q": 0}),
                        ),
                        head("last_max", {"t2": pos}, normalizer=Hardmax(tie="rightmost")),
                    ),
                    output=affine({"y": {"t": "1/2", "t2": 1}}, bias={"y": -1}),
                )
            ),
            Sublayer(
                block=ffn(
                    "clip",
                    affine({"u1": {"y": "1/100000"}, "u2": {"y": 1}}, bias={"u2": -3}),
                    SIGMA,
                    affine({"y": {"u1": 1000, "u2": 1}}),
                )
            ),
        ),
        readout=classifier("y", position=0, bias="-1/2"),
    )


def test_a_forward_pass_from_the_state_dict_alone_agrees_on_every_attention_field() -> None:
    net = every_attention_field()
    sd, lay = te.state_dict(net), te.layout(net)
    heads = lay["layers"][0]["heads"]
    assert [h["normalizer"].get("tie") for h in heads] == [
        "leftmost",
        "rightmost",
        "average",
        None,
        "average",
    ]
    assert heads[3]["scale"] == {"coef": "4", "sqrt_d": 4, "times_n": True, "log_n": False}
    assert lay["layers"][1]["output"] is True and sd["layers.1.attention.W_O"].tolist() == [
        [0.5, 1.0]
    ]
    outputs = set()
    for w in words(lay["embedding"]["alphabet"], 4):
        want = exact.run(net, w).output
        assert want is not None
        assert reference_logit(sd, lay, w) == pytest.approx(float(want), rel=1e-12, abs=1e-9), w
        outputs.add(want)
    assert (
        len(outputs) > 20
    )  # the words tell the heads apart (each head's field changes many logits)


def test_the_hand_check_notices_a_wrong_layout() -> None:
    # The check is not vacuous: swapping two residual dims' names in the layout breaks it.
    net = dyck_recognizer(k=1, depth=1)
    sd, lay = te.state_dict(net), te.layout(net)
    dims = lay["dims"]
    i, j = dims.index("m"), dims.index("e")
    dims[i], dims[j] = dims[j], dims[i]
    wrong = [
        w for w in words("()", 4) if reference_logit(sd, lay, w) != float(exact.run(net, w).output)
    ]  # type: ignore[arg-type]
    assert wrong


def test_layer_norm_steps_and_post_layer_norms_export_their_eps() -> None:
    net = Network(
        name="ln",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        layers=(
            Sublayer(
                block=ffn(
                    "f",
                    affine({"u": {"x": 1}, "v": {"y": 1}}),
                    layernorm("1/4", ("u", "v")),
                    affine({"y": {"u": 1}}),
                )
            ),
            Sublayer(block=ffn("g", affine({"y": {"x": 0}})), post_ln=layernorm("1/3")),
        ),
        readout=classifier("y"),
    )
    sd, lay = te.state_dict(net), te.layout(net)
    assert (
        sd["layers.0.ffn.steps.1.eps"].item() == 0.25 and sd["layers.0.ffn.steps.1.eps"].shape == ()
    )
    assert sd["layers.1.post_ln.eps"].item() == 1 / 3
    assert lay["layers"][0]["steps"][1] == {"kind": "layernorm", "over": ["u", "v"], "eps": "1/4"}
    assert lay["layers"][1]["post_ln"] == {"over": None, "eps": "1/3"}
    assert lay["tensors"]["layers.1.post_ln.eps"]["exact"] is False
