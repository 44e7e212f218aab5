"""Bring your own model: any nn.Module imported by its structure (symbolic/importers), the
faithfulness gate (verifier/models/faithful.py) and its mutation test: each wrong import
convention is refused, the right import of the same model never is."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from netproof.symbolic import interval
from netproof.symbolic.importers import ImporterError, torch_graph, torch_module
from netproof.verifier.claims.languages import FIRST
from netproof.verifier.cli import main
from netproof.verifier.models import check_model
from netproof.verifier.models.faithful import UnfaithfulImportError
from netproof.verifier.models.imported import import_torch

sys.path.insert(0, str(Path(__file__).parent))
from byom_models import HandWritten, Textbook, train_first

pytestmark = pytest.mark.torch

HERE = Path(__file__).parent
CLS: dict[str, object] = {"alphabet": ["0", "1"], "vocab": ["<cls>", "0", "1"], "prefix": ["<cls>"]}
SMALL: dict[str, object] = {"max_len": 4, "samples": 2, "budget": 32}


def textbook(**kw: object) -> Textbook:
    torch.manual_seed(7)
    return Textbook(d_model=8, nhead=2, dim_feedforward=16, **kw).eval()  # type: ignore[arg-type]


def test_a_textbook_model_is_the_imported_network_on_every_short_word() -> None:
    model = textbook(causal=True)
    imp = import_torch(model, **CLS, **SMALL)  # type: ignore[arg-type]
    assert imp.faith is not None and imp.faith.gaps["float64"] <= 1e-12
    word = ("1", "0", "1")
    trace = interval.run(imp.net, word, digits=30)
    ids = torch.tensor([[0, 2, 1, 2]])
    with torch.no_grad():
        want = float(model.double()(ids)[0])
    assert abs(float(trace.output.mid) - want) < 1e-12
    heads = [h for s in imp.net.layers if hasattr(s.block, "heads") for h in s.block.heads]
    assert [h.mask for h in heads] == ["causal", "causal"]


def test_a_cls_token_at_the_end_and_a_padding_mask_the_words_never_trigger_import() -> None:
    model = textbook(vocab_size=4, pooling="last", pad=3)
    imp = import_torch(
        model, alphabet=["0", "1"], vocab=["0", "1", "<cls>", "<pad>"], suffix=["<cls>"], **SMALL
    )  # type: ignore[arg-type]
    assert imp.net.readout.position == -1 and imp.net.embedding.suffix == ("<cls>",)  # type: ignore[union-attr]
    assert imp.faith is not None and imp.faith.gaps["float64"] <= 1e-12


def test_a_padding_mask_on_a_token_the_words_use_is_refused() -> None:
    with pytest.raises(ImporterError, match=r"tokens compared with id 1, a token the words use"):
        import_torch(textbook(pad=1), **CLS, **SMALL)  # type: ignore[arg-type]


def test_hand_written_attention_is_read_from_the_code() -> None:
    torch.manual_seed(3)
    imp = import_torch(HandWritten().eval(), alphabet=["a", "b"], **SMALL)  # type: ignore[arg-type]
    heads = [h for s in imp.net.layers if hasattr(s.block, "heads") for h in s.block.heads]
    assert len(heads) == 2 and {h.mask for h in heads} == {"causal"}
    assert imp.net.readout.position == -1  # type: ignore[union-attr]


# the seven wrong conventions, each a deliberately wrong variant of the mapping


def _cls_last(monkeypatch: pytest.MonkeyPatch) -> None:
    real = torch_module.Importer.embed

    def embed(self, tok, w, stem, ids):  # type: ignore[no-untyped-def]
        return real(self, tok, torch.cat([w[1:], w[:1]]), stem, ids)  # <cls> read from row 1

    monkeypatch.setattr(torch_module.Importer, "embed", embed)


def _cls_for_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    def mean(self, x, dim, keepdim):  # type: ignore[no-untyped-def]
        return torch_module.Sym(x.ids.select(1, 0), x.pos.select(1, 0))

    monkeypatch.setattr(torch_graph.Walker, "mean", mean)


def _no_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    real = torch_module.Importer.scale

    def scale(self, x, c, stem, divisor=None):  # type: ignore[no-untyped-def]
        names, _ = self.per_name(x, torch.zeros(()))
        return x if self.emb_only(names) else real(self, x, c, stem, divisor)

    monkeypatch.setattr(torch_module.Importer, "scale", scale)


def _no_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_module, "mask_of", lambda imp, mask, n, causal: "none")


def _heads_interleaved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_module, "head_slices", lambda d, h, k: list(range(k, d, h)))


def _transposed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = torch_module.matrix
    monkeypatch.setattr(
        torch_module, "matrix", lambda t: real(t.T if t.shape[0] == t.shape[1] else t)
    )


def _norm_flipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_module, "is_norm_first", lambda layer: not layer.norm_first)


WRONG = {
    "cls row at the wrong index": (_cls_last, {}),
    "cls pooling for mean pooling": (_cls_for_mean, {"pooling": "mean"}),
    "missing embedding scale": (_no_scale, {}),
    "causal mask dropped": (_no_mask, {"causal": True}),
    "head split order": (_heads_interleaved, {}),
    "a transposed weight": (_transposed, {}),
    "pre- for post-norm": (_norm_flipped, {}),
}


@functools.cache
def _right_import(kw: tuple[tuple[str, object], ...]) -> object:
    """The gate's report on the right import of a model (once per model)."""
    return import_torch(textbook(**dict(kw)), **CLS, **SMALL).faith  # type: ignore[arg-type]


@pytest.mark.parametrize("convention", list(WRONG))
def test_each_wrong_convention_is_refused_by_the_gate_and_the_right_one_is_not(
    convention: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong, kw = WRONG[convention]
    model = textbook(**kw)
    assert _right_import(tuple(sorted(kw.items()))) is not None
    wrong(monkeypatch)
    with pytest.raises(UnfaithfulImportError, match=r"not the model: on the word '.*' .* gives"):
        import_torch(model, **CLS, **SMALL)  # type: ignore[arg-type]


def test_no_compare_skips_the_gate_and_the_wrong_import_goes_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_mask(monkeypatch)
    imp = import_torch(textbook(causal=True), **CLS, compare=False, **SMALL)  # type: ignore[arg-type]
    assert imp.faith is None


def test_what_cannot_be_mapped_is_refused_naming_the_node_and_the_supported_set() -> None:
    class MaxPool(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.e = torch.nn.Embedding(2, 4)
            self.f = torch.nn.Linear(4, 1)

        def forward(self, x):  # type: ignore[no-untyped-def]
            return self.f(torch.tanh(self.e(x)).amax(1))

    with pytest.raises(ImporterError, match=r"node tanh \(call_function torch.tanh\).*supported:"):
        import_torch(MaxPool(), alphabet=["a", "b"], **SMALL)  # type: ignore[arg-type]


def test_a_textbook_model_trained_here_is_checked_with_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch.set_num_threads(1)
    model = train_first()
    imported = import_torch(model, **CLS, **SMALL)  # type: ignore[arg-type]
    report = check_model(imported.net, FIRST, max_n=5, float32=imported.run)
    sd = tmp_path / "first.pt"
    torch.save(model.state_dict(), sd)
    code = main(
        [
            "check-model",
            str(sd),
            "--module",
            f"{HERE / 'byom_models.py'}:Textbook",
            "--kwargs",
            json.dumps({"d_model": 8, "nhead": 2, "dim_feedforward": 16}),
            "--vocab",
            "<cls>,0,1",
            "--prefix",
            "<cls>",
            "--language",
            "first",
            "--max-n",
            "5",
            "--json",
        ]
    )
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert "import: faithful on" in out.err
    assert code == {"correct": 0, "wrong": 1}[doc["status"]]
    assert doc["totals"]["wrong"] == report.totals.wrong
    assert doc["totals"]["words"] == 2**6 - 1  # lengths 0..5 (with <cls>, ε is an input too)


def test_a_whole_pickled_model_imports_from_its_file(tmp_path: Path) -> None:
    model = textbook(pooling="mean")
    path = tmp_path / "whole.pt"
    torch.save(model, path)
    imp = import_torch(path, **CLS, **SMALL)  # type: ignore[arg-type]
    assert imp.net.name == "whole" and imp.faith is not None


def test_a_state_dict_without_its_class_is_refused_with_the_fix_named(tmp_path: Path) -> None:
    path = tmp_path / "sd.pt"
    torch.save(textbook().state_dict(), path)
    with pytest.raises(ImporterError, match=r"is a state dict; give its module class: --module"):
        import_torch(path, **CLS, **SMALL)  # type: ignore[arg-type]


def test_a_torch_export_archive_goes_through_the_same_path() -> None:
    path = HERE.parent / "fixtures" / "models" / "hand_written.pt2"
    imp = import_torch(path, alphabet=["a", "b"], **SMALL)  # type: ignore[arg-type]
    assert imp.faith is not None and set(imp.faith.gaps) == {"float64", "float32"}
    heads = [h for s in imp.net.layers if hasattr(s.block, "heads") for h in s.block.heads]
    assert len(heads) == 2 and {h.mask for h in heads} == {"causal"}
