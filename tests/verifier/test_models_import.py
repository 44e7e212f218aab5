"""Importing trained torch recognizers (netproof.symbolic.torch_import): exact weights, faithful
to torch's float64 run within a reported gap, refusals that name the module, network files."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from netproof.symbolic import exact, interval
from netproof.symbolic.errors import NotRationalError
from netproof.symbolic.netfile import dumps, loads
from netproof.symbolic.printing import fingerprint
from netproof.symbolic.torch_import import (
    ImportModelError,
    import_model,
    load_model,
    to_network,
)
from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

CONFIGS = [
    {"norm_first": False, "causal": False, "readout": "first"},
    {"norm_first": True, "causal": True, "readout": "last", "final_norm": True, "nhead": 2},
    {
        "norm_first": False,
        "causal": True,
        "readout": "last",
        "positional": "sinusoidal",
        "num_layers": 2,
        "nhead": 2,
    },
    {
        "norm_first": True,
        "causal": False,
        "readout": "first",
        "num_layers": 2,
        "nhead": 4,
        "layer_norm_eps": 1e-3,
    },
]


def _model(seed: int, **cfg: object) -> Recognizer:
    torch.manual_seed(seed)
    return (
        Recognizer(alphabet=["a", "b", "c"], d_model=8, dim_feedforward=12, max_len=12, **cfg)
        .double()
        .eval()
    )


def test_every_float_weight_becomes_its_exact_fraction() -> None:
    m = _model(0)
    net = to_network(m.config, m.state_dict())
    w = m.classifier.weight.detach()[0]
    assert net.readout.logit.weights[0] == tuple(Fraction(float(x)) for x in w)
    row = dict(dict(net.embedding.table)["b"])
    assert all(
        row.get(f"x{j}", Fraction(0)) == Fraction(float(m.token.weight.detach()[1, j]))
        for j in range(8)
    )


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_the_imported_network_agrees_with_torch_float64_on_random_words_within_a_reported_gap(
    cfg: dict[str, object],
) -> None:
    m = _model(1, **cfg)
    net = to_network(m.config, m.state_dict())
    rng = random.Random(2)
    gap = 0.0
    for _ in range(12):
        word = [rng.choice("abc") for _ in range(rng.randint(0, 8))]
        with torch.no_grad():
            f = float(m(m.encode([word]))[0])
        out = interval.run(net, word, digits=40).output
        assert out.b - out.a < 1e-30  # the rigorous value is pinned down
        gap = max(gap, abs(f - float(out.mid)))
    print(f"largest |torch float64 − exact| over 12 random words: {gap:.3g}")
    assert gap < 1e-12


def test_the_exact_interpreter_refuses_an_imported_softmax_with_a_clear_error() -> None:
    net = import_model(FIXTURES / "first.pt")
    with pytest.raises(NotRationalError, match="softmax base e\\^1 is transcendental"):
        exact.run(net, "01")


def test_a_model_outside_the_family_is_refused_with_one_line_naming_the_module(
    tmp_path: Path,
) -> None:
    path = tmp_path / "seq.pt"
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 1)), path)
    with pytest.raises(
        ImportModelError,
        match=r"torch\.nn\.modules\.container\.Sequential is not a netproof Recognizer; supported: ",
    ):
        import_model(path)
    m = _model(0)
    m.encoder.layers[0].activation = torch.nn.GELU(
        approximate="tanh"
    )  # another function than x·Φ(x)
    torch.save(m, tmp_path / "gelu_tanh.pt")
    with pytest.raises(
        ImportModelError,
        match=r"module encoder.layers.0 has activation GELU\(approximate='tanh'\); only ReLU and the exact GELU",
    ):
        import_model(tmp_path / "gelu_tanh.pt")
    m.encoder.layers[0].activation = torch.nn.GELU()  # the exact GELU, but the config says relu
    torch.save(m, tmp_path / "gelu.pt")
    with pytest.raises(
        ImportModelError,
        match=r"has activation GELU\(approximate='none'\) but the model's config says activation='relu'",
    ):
        import_model(tmp_path / "gelu.pt")


def test_a_state_dict_that_does_not_match_its_config_is_refused_naming_the_keys() -> None:
    m = _model(0)
    sd = dict(m.state_dict())
    sd["extra.weight"] = torch.zeros(1)
    with pytest.raises(ImportModelError, match=r"unexpected keys \['extra.weight'\]"):
        to_network(m.config, sd)


def test_a_bare_state_dict_needs_its_json_config(tmp_path: Path) -> None:
    m = _model(0)
    torch.save(m.state_dict(), tmp_path / "sd.pt")
    with pytest.raises(ImportModelError, match="bare state dict; give its JSON config"):
        import_model(tmp_path / "sd.pt")
    import json

    (tmp_path / "cfg.json").write_text(json.dumps(m.config))
    assert fingerprint(
        import_model(tmp_path / "sd.pt", config=tmp_path / "cfg.json", name="m")
    ) == fingerprint(to_network(m.config, m.state_dict(), name="m"))


def test_a_whole_pickled_model_and_its_saved_dict_import_to_the_same_network(
    tmp_path: Path,
) -> None:
    m = _model(3, **CONFIGS[1])
    torch.save(m, tmp_path / "whole.pt")
    save_recognizer(m, tmp_path / "dict.pt")
    a = import_model(tmp_path / "whole.pt", name="m")
    b = import_model(tmp_path / "dict.pt", name="m")
    assert fingerprint(a) == fingerprint(b)
    cfg, _sd = load_model(tmp_path / "dict.pt")
    assert cfg == m.config


def test_an_imported_network_survives_its_network_file_unchanged() -> None:
    net = import_model(FIXTURES / "dyck12.pt")
    again = loads(dumps(net))
    assert fingerprint(again) == fingerprint(net)


def _export_and_import(net: object, tmp_path: Path) -> object:
    from netproof.symbolic.torch_export import save

    path = tmp_path / "exported.pt"
    save(net, path)  # type: ignore[arg-type]
    return import_model(path)


@pytest.mark.parametrize(
    "name", ["parity", "parity-ln", "first", "first-ln", "crasp-dyck1", "crasp-majority"]
)
def test_netproofs_own_state_dict_export_imports_back_to_the_identical_network(
    name: str, tmp_path: Path
) -> None:
    from netproof.verifier.campaign.sources import Session, parameter_values

    c = Session().one(name, "import")
    net = c.network(parameter_values(c, {}))
    assert fingerprint(_export_and_import(net, tmp_path)) == fingerprint(net)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["dyck", "brasp-dyck1-depth2", "brasp-contains-ab"])
def test_an_exported_network_whose_maps_list_unread_dims_imports_back_to_the_same_function(
    name: str, tmp_path: Path
) -> None:
    import itertools

    from netproof.verifier.campaign.sources import Session, parameter_values

    c = Session().one(name, "import")
    net = c.network(parameter_values(c, {}))
    back = _export_and_import(net, tmp_path)
    for m in range(5 if len(net.alphabet) <= 2 else 4):
        for w in itertools.product(net.alphabet, repeat=m):
            assert exact.run(back, w).output == exact.run(net, w).output  # type: ignore[arg-type]


def test_an_imported_recognizer_exported_and_imported_again_is_the_identical_network(
    tmp_path: Path,
) -> None:
    net = import_model(FIXTURES / "dyck12.pt")
    assert fingerprint(_export_and_import(net, tmp_path)) == fingerprint(net)  # type: ignore[arg-type]


def test_every_tensor_of_the_state_dict_reaches_the_imported_network() -> None:
    """Mutation: change the first entry of any one tensor and the imported network's logit changes
    (the importer reads every weight, none is dropped or misplaced to a dead spot)."""
    m = _model(4, **CONFIGS[1])
    sd = m.state_dict()
    words = [["a"], ["c", "a", "b"]]
    base = [interval.run(to_network(m.config, sd), w, digits=30).output.mid for w in words]
    for key in sd:
        mutated = {k: v.clone() for k, v in sd.items()}
        mutated[key].view(-1)[0] += 0.25
        outs = [interval.run(to_network(m.config, mutated), w, digits=30).output.mid for w in words]
        assert outs != base, f"changing {key}[0] did not change the imported network"
