"""Bring your own model from other sources: a TransformerLens-layout model, a model in the
layout of a compiled tracr model (the dump format of examples/tracr_dump.py) and an ONNX file,
each from a committed fixture (tests/fixtures/models/make_transformerlens.py, make_onnx.py)
imported, gated and checked; a wrong weight map refused by the gate on each path."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from netproof.symbolic.importers import ImporterError, torch_module
from netproof.verifier.claims.languages import Language
from netproof.verifier.models import check_model
from netproof.verifier.models.faithful import UnfaithfulImportError
from netproof.verifier.models.imported import import_file

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parents[1] / "fixtures" / "models"


def _transposed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = torch_module.matrix
    monkeypatch.setattr(
        torch_module, "matrix", lambda t: real(t.T if t.shape[0] == t.shape[1] else t)
    )


def test_a_transformerlens_model_imports_from_its_dump_and_matches_its_recorded_outputs() -> None:
    imp = import_file(FIXTURES / "tl_tiny.pt", max_len=5)
    assert imp.faith is not None and imp.faith.words == 62 and imp.faith.exhaustive_to == 5
    heads = [h for s in imp.net.layers if hasattr(s.block, "heads") for h in s.block.heads]
    assert [h.mask for h in heads] == ["causal", "causal"]
    starts_1 = Language("starts-1", ("0", "1"), lambda w: w[:1] == ("1",), "a test language")
    report = check_model(imp.net, starts_1, max_n=5, min_n=1)
    assert report.totals.words == 62 and report.totals.undecided == 0


def test_a_wrong_weight_map_of_a_transformerlens_model_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _transposed(monkeypatch)
    with pytest.raises(UnfaithfulImportError, match=r"model's recorded .* run gives"):
        import_file(FIXTURES / "tl_tiny.pt", max_len=5)


def test_a_model_in_the_layout_of_a_compiled_tracr_model_imports_with_its_bos_token() -> None:
    imp = import_file(FIXTURES / "tracr_layout.pt", max_len=3)
    assert imp.net.embedding.prefix == ("BOS",)  # type: ignore[union-attr]
    assert imp.net.readout.position == 0  # type: ignore[union-attr]
    assert imp.faith is not None and imp.faith.words == 40


@pytest.mark.skipif(
    importlib.util.find_spec("tracr") is None,
    reason="tracr is not on PyPI and not installed here: the live path of examples/tracr_dump.py is untested",
)
def test_a_compiled_tracr_program_dumps_imports_and_checks(tmp_path: Path) -> None:
    import runpy

    from netproof.verifier.models.sequence import check_sequence, load_sequence_dump

    dump = runpy.run_path(str(Path(__file__).parents[2] / "examples" / "tracr_dump.py"))
    path = tmp_path / "hist.pt"
    dump["dump_example"](path)
    imported, kw = load_sequence_dump(path)
    assert imported.faith is not None
    assert check_sequence(imported.net, **kw).status == "correct"


def test_an_onnx_file_imports_and_matches_the_onnx_reference_evaluator() -> None:
    pytest.importorskip("onnx")
    imp = import_file(FIXTURES / "hand_written.onnx", alphabet=["a", "b"], max_len=4)
    assert imp.faith is not None and imp.faith.words == 30
    assert "onnx reference evaluator" in imp.faith.summary()
    heads = [h for s in imp.net.layers if hasattr(s.block, "heads") for h in s.block.heads]
    assert len(heads) == 2 and {h.mask for h in heads} == {"causal"}


def test_a_wrong_weight_map_of_an_onnx_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnx")
    _transposed(monkeypatch)
    with pytest.raises(UnfaithfulImportError, match=r"onnx reference evaluator\) run gives"):
        import_file(FIXTURES / "hand_written.onnx", alphabet=["a", "b"], max_len=4)


def test_an_onnx_operator_outside_the_subset_is_refused_naming_the_node(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    table = helper.make_tensor("W", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 0.0, 1.0])
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["W", "ids"], ["e"]),
            helper.make_node("Tanh", ["e"], ["y"], name="squash"),
        ],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [table],
    )
    path = tmp_path / "tanh.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(ImporterError, match=r"node squash \(Tanh\): operator Tanh on a token"):
        import_file(path, alphabet=["a", "b"], max_len=3)


def test_a_live_transformerlens_style_model_is_run_by_the_gate_in_both_dtypes() -> None:
    spec = importlib.util.spec_from_file_location("make_tl", FIXTURES / "make_transformerlens.py")
    assert spec is not None and spec.loader is not None
    make_tl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_tl)
    dump = torch.load(FIXTURES / "tl_tiny.pt", weights_only=True)

    class Hooked(torch.nn.Module):  # HookedTransformer's interface: .cfg, .state_dict(), logits
        def __init__(self) -> None:
            super().__init__()
            self.cfg = dump["cfg"]
            self.weights = torch.nn.ParameterDict(
                {k.replace(".", "/"): torch.nn.Parameter(v) for k, v in dump["state_dict"].items()}
            )

        def state_dict(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return {k.replace("/", "."): v for k, v in self.weights.items()}

        def forward(self, ids):  # type: ignore[no-untyped-def]
            return make_tl.forward(self.cfg, self.state_dict(), ids)

    from netproof.verifier.models.imported import import_transformerlens

    imp = import_transformerlens(
        Hooked(), alphabet=["0", "1"], vocab=["0", "1"], accept=1, reject=0, max_len=4
    )
    assert imp.faith is not None and set(imp.faith.gaps) == {"float64", "float32"}
    assert imp.faith.gaps["float64"] <= 1e-12


def test_an_imported_model_round_trips_through_its_network_file_and_runs_in_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnx")
    from netproof.symbolic.netfile import load_file
    from netproof.symbolic.printing import fingerprint
    from netproof.verifier.cli import main

    out = tmp_path / "net.json"
    src = str(FIXTURES / "hand_written.onnx")
    args = ["import", src, "--alphabet", "a,b", "--max-len", "4", "--out", str(out)]
    assert main(args) == 0
    assert "import: faithful on 30 words" in capsys.readouterr().out
    net, extra = load_file(out)
    imp = import_file(FIXTURES / "hand_written.onnx", alphabet=["a", "b"], max_len=4)
    assert fingerprint(net) == fingerprint(imp.net) and extra["imported_from"] == src
    assert main(["run", str(out), "abba", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["backend"] == "interval"
    assert main(["show", str(out), "ab", "--out", str(tmp_path / "ab.html")]) == 0


def test_check_model_says_what_no_compare_skips(capsys: pytest.CaptureFixture[str]) -> None:
    from netproof.verifier.cli import main

    code = main(
        [
            "check-model",
            str(FIXTURES / "tl_tiny.pt"),
            "--language",
            "parity",
            "--max-n",
            "3",
            "--no-compare",
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "not compared with the model (--no-compare)" in out and "would go unnoticed" in out


def test_a_real_hookedtransformer_imports_and_passes_the_gate_in_both_dtypes() -> None:
    tl = pytest.importorskip("transformer_lens")
    try:
        tl.HookedTransformer  # noqa: B018 - 4.x raises ImportError here
    except (AttributeError, ImportError):
        pytest.skip("this transformer_lens has no HookedTransformer (4.x removed it); 2.x has it")
    torch.manual_seed(0)
    for norm, attn_only in (("LN", False), ("LNPre", True), (None, False)):
        cfg = tl.HookedTransformerConfig(
            n_layers=2,
            d_model=8,
            n_heads=2,
            d_head=4,
            d_mlp=None if attn_only else 16,
            act_fn="relu",
            normalization_type=norm,
            attn_only=attn_only,
            d_vocab=3,
            n_ctx=8,
            seed=0,
        )
        model = tl.HookedTransformer(cfg).eval()
        from netproof.verifier.models.imported import import_transformerlens

        imp = import_transformerlens(
            model, alphabet=["0", "1"], vocab=["0", "1", "2"], accept=1, reject=0, max_len=4
        )
        assert imp.faith is not None and set(imp.faith.gaps) == {"float64", "float32"}, norm
        assert imp.faith.gaps["float64"] <= 1e-9, (norm, imp.faith.gaps)
