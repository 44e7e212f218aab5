"""Trained models with GELU FFNs (x·Φ(x)): imported as exact networks, enclosed rigorously by the
batched enclosure and the interval interpreter, and checked on every word by check-model."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from netproof.symbolic import interval
from netproof.symbolic.ir import FFN, Activation
from netproof.symbolic.torch_import import import_model, to_network
from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer
from netproof.verifier.claims.languages import Language
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model, compile_enclosure

pytestmark = pytest.mark.torch


def _gelu_model(seed: int, **cfg: object) -> Recognizer:
    torch.manual_seed(seed)
    return (
        Recognizer(
            alphabet=["0", "1"],
            d_model=8,
            nhead=2,
            dim_feedforward=12,
            max_len=10,
            activation="gelu",
            **cfg,
        )
        .double()
        .eval()
    )


def _torch_signs(m: Recognizer, words: list[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
    """The model's own float64 logits (one batch per length)."""
    out: dict[tuple[str, ...], float] = {}
    for n in sorted({len(w) for w in words}):
        group = [w for w in words if len(w) == n]
        with torch.no_grad():
            out.update({w: float(x) for w, x in zip(group, m(m.encode(group)), strict=True)})
    return out


def test_a_gelu_recognizer_imports_with_gelu_activations_and_agrees_with_torch_float64() -> None:
    m = _gelu_model(1, norm_first=True, causal=True, readout="last")
    net = to_network(m.config, m.state_dict())
    acts = {
        st.kind
        for sub in net.layers
        if isinstance(sub.block, FFN)
        for st in sub.block.steps
        if isinstance(st, Activation)
    }
    assert acts == {"gelu"}
    rng = random.Random(3)
    gap = 0.0
    for _ in range(6):
        word = tuple(rng.choice("01") for _ in range(rng.randint(0, 6)))
        out = interval.run(net, word, digits=40).output
        assert out.b - out.a < 1e-30
        gap = max(gap, abs(_torch_signs(m, [word])[word] - float(out.mid)))
    assert gap < 1e-12


@pytest.mark.parametrize(
    "cfg",
    [{}, {"norm_first": True, "num_layers": 2, "final_norm": True}],
    ids=["post-norm", "pre-norm-2-layers"],
)
def test_the_batched_enclosure_holds_the_rigorous_gelu_value_on_every_short_word(
    cfg: dict[str, object],
) -> None:
    m = _gelu_model(2, **cfg)
    net = to_network(m.config, m.state_dict())
    enc = compile_enclosure(net)
    for n in range(4):
        words = list(itertools.product("01", repeat=n))
        y = enc.logits(m.encode(words), n + 1)
        for b, w in enumerate(words):
            exact = interval.run(net, w, digits=40).output
            assert (
                float(y.m[b] - y.r[b]) <= exact.a
                and exact.b <= float(y.m[b] + y.r[b])
                and float(y.r[b]) < 1e-6
            )


def test_check_model_decides_every_word_of_a_gelu_model_as_its_float64_run_does_and_catches_one_flipped_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Faithfulness: against the language "what the model's own float64 run accepts", every word up to
    length 6 is correct. Mutation: flip that language on one word and exactly that word is wrong."""
    m = _gelu_model(4)
    words = [w for k in range(7) for w in itertools.product("01", repeat=k)]
    logits = _torch_signs(m, words)
    assert (
        min(abs(x) for x in logits.values()) > 1e-6
    )  # far from the boundary: float64's signs are the true ones
    net = to_network(m.config, m.state_dict())
    own = Language(
        name="own",
        alphabet=("0", "1"),
        contains=lambda w: logits[tuple(w)] > 0,
        description="float64 signs",
    )
    report = check_model(net, own, max_n=6)
    t = report.totals
    assert (t.words, t.correct, t.wrong, t.undecided) == (127, 127, 0, 0)
    flipped = ("1", "0", "1", "1", "0")
    bad = Language(
        name="bad",
        alphabet=("0", "1"),
        contains=lambda w: (logits[tuple(w)] > 0) != (tuple(w) == flipped),
        description="float64 signs but one",
    )
    report = check_model(net, bad, max_n=6)
    assert (
        report.totals.wrong == 1
        and report.shortest_wrong is not None
        and report.shortest_wrong.word == flipped
    )
    # the CLI reads the saved model, checks it and exits by status (0: correct)
    save_recognizer(m.float(), tmp_path / "gelu.pt")
    assert import_model(tmp_path / "gelu.pt").params == to_network(m.config, m.state_dict()).params
    user = tmp_path / "lang.py"
    user.write_text("def anything(word):\n    return True\n")
    saved = import_model(tmp_path / "gelu.pt")  # the float32 weights: another exact network
    everything = Language(
        name="anything", alphabet=("0", "1"), contains=lambda w: True, description="every word"
    )
    want = check_model(saved, everything, max_n=3)
    assert want.totals.undecided == 0
    code = main(
        [
            "check-model",
            str(tmp_path / "gelu.pt"),
            "--language",
            f"{user}:anything",
            "--max-n",
            "3",
            "--json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == (1 if want.totals.wrong else 0) and doc["totals"]["wrong"] == want.totals.wrong
    assert doc["totals"]["float32_differs"] == 0


def test_the_gelu_config_is_part_of_the_fingerprint_and_relu_models_keep_theirs() -> None:
    torch.manual_seed(0)
    relu = Recognizer(
        alphabet=["0", "1"], d_model=4, nhead=1, dim_feedforward=4, max_len=4
    ).double()
    gelu = Recognizer(
        alphabet=["0", "1"], d_model=4, nhead=1, dim_feedforward=4, max_len=4, activation="gelu"
    ).double()
    gelu.load_state_dict(relu.state_dict())
    a, b = to_network(relu.config, relu.state_dict()), to_network(gelu.config, gelu.state_dict())
    assert "activation" not in dict(a.params) and dict(b.params)["activation"] == '"gelu"'


def test_a_config_with_an_unknown_activation_is_refused() -> None:
    with pytest.raises(ValueError, match="activation='tanh' must be 'relu' or 'gelu'"):
        Recognizer(alphabet=["0", "1"], d_model=4, activation="tanh")


def test_a_gelu_model_on_the_boundary_stays_undecided_with_exact_since_sympy_does_not_evaluate_gelu() -> (
    None
):
    from netproof.verifier.claims.languages import PARITY

    m = _gelu_model(5)
    with (
        torch.no_grad()
    ):  # residual dims x0 and x1 equal on every word, the logit x0 − x1: exactly 0
        for p in (m.token.weight, m.position.weight):
            p[:, 1] = p[:, 0]
        for layer in m.encoder.layers:
            for p in (layer.self_attn.out_proj.weight, layer.linear2.weight):
                p[1, :] = p[0, :]
            for p in (
                layer.self_attn.out_proj.bias,
                layer.linear2.bias,
                layer.norm1.weight,
                layer.norm1.bias,
                layer.norm2.weight,
                layer.norm2.bias,
            ):
                p[1] = p[0]
        m.classifier.weight[:] = torch.tensor([[1.0, -1.0] + [0.0] * 6], dtype=torch.float64)
        m.classifier.bias.zero_()
    report = check_model(to_network(m.config, m.state_dict()), PARITY, max_n=1, exact=True)
    assert (report.totals.words, report.totals.undecided, report.totals.correct) == (3, 3, 0)
    assert report.undecided[0].method == "sympy" and "activation 'gelu'" in report.undecided[0].note


def test_an_imported_gelu_network_exported_and_imported_again_is_the_identical_network(
    tmp_path: Path,
) -> None:
    from netproof.symbolic.printing import fingerprint
    from netproof.symbolic.torch_export import save

    net = to_network(_gelu_model(6).config, _gelu_model(6).state_dict(), name="g")
    save(net, tmp_path / "exported.pt")
    assert fingerprint(import_model(tmp_path / "exported.pt")) == fingerprint(net)  # type: ignore[arg-type]


def test_the_committed_trained_gelu_parity_model_has_its_shortest_wrong_word_found_and_replayed() -> (
    None
):
    """``examples/train_recognizer.py parity tests/fixtures/models/parity_gelu.pt --activation gelu``:
    like the ReLU PARITY transformer, it is first wrong on ``0 1 1``."""
    from netproof.symbolic.torch_import import load_model
    from netproof.verifier.claims.languages import PARITY

    path = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "parity_gelu.pt"
    net = import_model(path)
    report = check_model(net, PARITY, max_n=6)
    wrong = report.shortest_wrong
    assert wrong is not None and wrong.word == ("0", "1", "1") and report.totals.undecided == 0
    # replay: the 60-digit interval interpreter (erf by its series) and the torch model agree that it is wrong
    replay = interval.run(net, wrong.word, digits=60)
    assert replay.accepted is True and not PARITY.contains(wrong.word)
    assert wrong.low <= replay.output.a and replay.output.b <= wrong.high
    cfg, sd = load_model(path)
    m = Recognizer(**cfg)
    m.load_state_dict(sd)
    with torch.no_grad():
        assert float(m(m.encode([wrong.word]))[0]) > 0
    for w in [
        (),
        ("0",),
        ("1",),
        *itertools.product("01", repeat=2),
        ("0", "0", "0"),
        ("0", "0", "1"),
        ("0", "1", "0"),
    ]:
        assert interval.run(net, w, digits=60).accepted == PARITY.contains(w)
