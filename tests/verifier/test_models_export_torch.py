"""Compiled programs out, trained models back in: ``netproof export --format torch`` writes a
compiled B-RASP/C-RASP network as a standard torch module (a ``torch.export`` archive), the
importer reads it back to the same exact network through the faithfulness gate, and
``check-model`` decides it as the construction's own claim does; a perturbed module is found
wrong at its shortest wrong word, and a module whose code no longer computes its weights'
network is refused by the gate."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from netproof.constructions.chiang2022.networks import rumelhart_parity
from netproof.constructions.rasp import (
    BRASP_PROGRAMS,
    CRASP_PROGRAMS,
    REFERENCE_LANGUAGES,
    compile_brasp,
    compile_crasp,
)
from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Sublayer,
    affine,
    batched,
    classifier,
    constant,
    exact,
    token_embedding,
)
from netproof.symbolic.printing import fingerprint
from netproof.symbolic.torch_export import StateDictError
from netproof.symbolic.torch_pt2 import load_pt2, network_of, save_module, save_pt2, to_module
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model
from netproof.verifier.models.exported import import_exported
from netproof.verifier.models.faithful import UnfaithfulImportError

pytestmark = pytest.mark.torch

N = 6  # every word up to this length
PROGRAMS = {
    "a_then_b": compile_brasp(BRASP_PROGRAMS["a_then_b"]),  # B-RASP: rightmost/leftmost ties
    "majority": compile_crasp(CRASP_PROGRAMS["majority"]),  # C-RASP: averages and layer norms
}


def _words(alphabet: tuple[str, ...], n: int) -> list[tuple[str, ...]]:
    return [w for m in range(n + 1) for w in itertools.product(alphabet, repeat=m)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pt2")


def _archive(folder: Path, key: str) -> Path:
    path = folder / f"{key}.pt2"
    if not path.exists():
        save_pt2(PROGRAMS[key], path, max_len=N + 2)
    return path


def _logits(net: Network, words: list[tuple[str, ...]]) -> list[Fraction]:
    """Every word's exact logit (the batched exact evaluator where it runs the network)."""
    if batched.supports(net) is None:
        return batched.evaluate(net, words).logits()
    return [exact.run(net, w).output for w in words]  # type: ignore[misc]


@pytest.mark.parametrize(
    ("key", "via"),
    [
        ("a_then_b", "archive"),
        ("majority", "module"),
        pytest.param("majority", "archive", marks=pytest.mark.slow),
    ],
)
def test_an_exported_program_imports_back_to_the_same_network_and_the_same_verdict(
    key: str, via: str, folder: Path
) -> None:
    net, lang = PROGRAMS[key], REFERENCE_LANGUAGES[key]
    source = _archive(folder, key) if via == "archive" else to_module(net, max_len=N + 2)
    imported = import_exported(source, max_len=N)
    module = load_pt2(source) if isinstance(source, Path) else source
    assert fingerprint(network_of(module)) == fingerprint(net)
    assert imported.faith is not None and imported.faith.gaps["float64"] == 0.0
    words = _words(net.alphabet, N)
    assert _logits(imported.net, words) == _logits(net, words)
    report = check_model(imported.net, lang, max_n=N)
    # the construction's own claim (network = language on every word up to N), decided exactly
    claim = [q > 0 for q in _logits(net, words)] == [lang.contains(w) for w in words]
    assert claim and report.status == "correct"
    assert report.totals.words == len(words) and report.totals.undecided == 0


PERTURBED = ("layers.3.ffn.steps.0.weight", (1, 1))
"""One weight of the compiled a_then_b whose change (+1) changes the function within N."""


def _perturbed(module: Any) -> Any:
    key, at = PERTURBED
    with torch.no_grad():
        module.get_parameter(key)[at] += 1.0  # one weight, as a user would perturb it
    return module


def test_a_perturbed_module_is_found_wrong_at_its_shortest_wrong_word() -> None:
    lang = REFERENCE_LANGUAGES["a_then_b"]
    imported = import_exported(
        _perturbed(to_module(PROGRAMS["a_then_b"], max_len=N + 2)), max_len=N
    )
    assert fingerprint(imported.net) != fingerprint(PROGRAMS["a_then_b"])
    words = _words(lang.alphabet, N)
    wrong = [
        w
        for w, q in zip(words, _logits(imported.net, words), strict=True)
        if (q > 0) != lang.contains(w)
    ]
    assert wrong  # the perturbation changes the function within the bound
    report = check_model(imported.net, lang, max_n=N)
    assert report.status == "wrong"
    assert report.shortest_wrong is not None and report.shortest_wrong.word == wrong[0]
    assert report.totals.wrong == len(wrong)


def test_a_module_whose_forward_is_not_its_weights_network_is_refused_by_the_gate() -> None:
    module = to_module(PROGRAMS["a_then_b"], max_len=N + 2)
    module.tie_rtol = 1e6  # its hardmax now keeps every key, not the IR's rightmost maximizer
    with pytest.raises(UnfaithfulImportError, match="the imported network is not the model"):
        import_exported(module, max_len=N)


@pytest.mark.slow  # a fresh interpreter imports torch (10-20 s on a loaded machine)
def test_a_plain_torch_without_netproof_runs_the_archive(folder: Path) -> None:
    net = PROGRAMS["a_then_b"]
    tokens = json.loads(bytes(load_pt2(_archive(folder, "a_then_b")).netproof_layout.tolist()))[
        "layout"
    ]["embedding"]["tokens"]
    word = ("a", "a", "b")
    ids = [tokens.index(t) for t in (*net.embedding.prefix, *word, *net.embedding.suffix)]  # type: ignore[union-attr]
    code = (
        "import sys; sys.modules['netproof'] = None; import torch; "
        f"m = torch.export.load({str(_archive(folder, 'a_then_b'))!r}).module(); "
        f"print(float(m(torch.tensor([{ids}]))[0]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) == float(exact.run(net, word).output)  # type: ignore[arg-type]


def test_a_flat_embedding_or_an_undefined_empty_head_is_refused_with_the_fix_named() -> None:
    def one_head(mask: str, empty: str) -> Network:
        head = Head(
            name="prev",
            query=constant({"q": 0}),
            key=constant({"q": 0}),
            value=affine({"s": {"a": 1}}),
            normalizer=Hardmax(),
            mask=mask,
            empty=empty,
        )
        return Network(
            name="demo",
            dims=("a", "s"),
            embedding=token_embedding(("a", "b"), {"a": {"a": 1}, "b": {}}),
            layers=(Sublayer(block=AttentionLayer(name="L", heads=(head,))),),
            readout=classifier("s"),
        )

    with pytest.raises(StateDictError, match=r"head 'prev'.*empty='error'.*empty='zero'"):
        to_module(one_head("strict_causal", "error"))
    to_module(one_head("causal", "error"))  # never empty: exported
    with pytest.raises(StateDictError, match=r"FlatEmbedding.*export it as a JSON network file"):
        to_module(rumelhart_parity(3))


@pytest.mark.slow
def test_the_cli_exports_a_program_and_check_model_decides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a_then_b.pt2"
    export = ["export", "brasp-a-then-b", "--format", "torch", "--max-len", "9"]
    assert main([*export, "--out", str(out)]) == 0
    lang = tmp_path / "lang.py"
    lang.write_text(
        "from netproof.constructions.rasp import REFERENCE_LANGUAGES\n"
        "a_then_b = REFERENCE_LANGUAGES['a_then_b'].contains\n"
    )
    check = ["--language", f"{lang}:a_then_b", "--max-n", "7", "--json"]
    assert main(["check-model", str(out), *check]) == 0
    save_module(_perturbed(load_pt2(out)), tmp_path / "perturbed.pt2")
    capsys.readouterr()
    code = main(["check-model", str(tmp_path / "perturbed.pt2"), *check])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["status"] == "wrong"
    assert report["shortest_wrong"]["word"] == "a"  # the word as `run` reads it
    assert main([*export, "--out", str(tmp_path / "x.pt")]) == 2
    assert not (tmp_path / "x.pt").exists()
