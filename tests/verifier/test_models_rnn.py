"""Trained RNN recognizers (nn.Embedding, a single-layer nn.RNN with tanh or ReLU or an nn.LSTM,
nn.Linear on the last hidden state): imported with exact weights, enclosed rigorously, checked on every word,
and every model outside the family refused naming the module."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from netproof.symbolic import interval
from netproof.symbolic.rnn_recognizers import rnn_fingerprint
from netproof.symbolic.torch_import import ImportModelError, import_model, to_rnn
from netproof.symbolic.torch_recognizer import RNNRecognizer, save_recognizer
from netproof.verifier.claims.languages import PARITY, Language
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model, compile_enclosure

pytestmark = pytest.mark.torch


def _rnn(
    seed: int, nonlinearity: str = "tanh", alphabet: str = "abc", cell: str = "rnn"
) -> RNNRecognizer:
    torch.manual_seed(seed)
    return (
        RNNRecognizer(
            alphabet=list(alphabet),
            embedding_dim=3,
            hidden_size=6,
            nonlinearity=nonlinearity,
            cell=cell,
        )
        .double()
        .eval()
    )


def _float64(m: RNNRecognizer, words: list[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
    out: dict[tuple[str, ...], float] = {}
    for n in sorted({len(w) for w in words}):
        group = [w for w in words if len(w) == n]
        with torch.no_grad():
            out.update({w: float(x) for w, x in zip(group, m(m.encode(group)), strict=True)})
    return out


def test_every_float_weight_of_the_rnn_becomes_its_exact_fraction() -> None:
    m = _rnn(0)
    net = to_rnn(m.config, m.state_dict())
    assert net.W_hh.weights[2] == tuple(Fraction(float(x)) for x in m.rnn.weight_hh_l0.detach()[2])
    assert net.W_ih.bias == tuple(Fraction(float(x)) for x in m.rnn.bias_ih_l0.detach())
    assert net.W_y.bias == (Fraction(float(m.classifier.bias.detach()[0])),)
    assert dict(dict(net.embedding)["b"]) == {
        f"e{j}": Fraction(float(x)) for j, x in enumerate(m.token.weight.detach()[1]) if x != 0
    }


@pytest.mark.parametrize(
    ("cell", "nonlinearity"), [("rnn", "tanh"), ("rnn", "relu"), ("lstm", "tanh")]
)
def test_the_imported_rnn_agrees_with_torch_float64_and_the_enclosures_hold_the_rigorous_value(
    cell: str, nonlinearity: str
) -> None:
    m = _rnn(1, nonlinearity, cell=cell)
    net = to_rnn(m.config, m.state_dict())
    enc = compile_enclosure(net)
    gap = 0.0
    for n in range(5):
        words = list(itertools.product("abc", repeat=n))
        y = enc.logits(m.encode(words), n)
        f64 = _float64(m, words)
        for b, w in enumerate(words):
            exact = interval.run_rnn(net, w, digits=40).output
            assert exact.b - exact.a < 1e-30
            assert (
                float(y.m[b] - y.r[b]) <= exact.a
                and exact.b <= float(y.m[b] + y.r[b])
                and float(y.r[b]) < 1e-10
            )
            gap = max(gap, abs(f64[w] - float(exact.mid)))
    assert gap < 1e-12


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_check_model_decides_every_word_of_an_rnn_as_its_float64_run_does_and_catches_one_flipped_word(
    cell: str,
) -> None:
    """Faithfulness against the model's own float64 signs on every word up to length 5; mutation:
    that language flipped on one word, and exactly that word is the shortest wrong one."""
    m = _rnn(2, cell=cell)
    words = [w for k in range(6) for w in itertools.product("abc", repeat=k)]
    logits = _float64(m, words)
    assert min(abs(x) for x in logits.values()) > 1e-6
    net = to_rnn(m.config, m.state_dict())
    own = Language(
        name="own",
        alphabet=("a", "b", "c"),
        contains=lambda w: logits[tuple(w)] > 0,
        description="float64 signs",
    )
    t = check_model(net, own, max_n=5).totals
    assert (t.words, t.correct, t.wrong, t.undecided, t.slow) == (364, 364, 0, 0, 0)
    flipped = ("c", "a", "b", "b")
    bad = Language(
        name="bad",
        alphabet=("a", "b", "c"),
        contains=lambda w: (logits[tuple(w)] > 0) != (tuple(w) == flipped),
        description="one word flipped",
    )
    report = check_model(net, bad, max_n=5)
    assert (
        report.totals.wrong == 1
        and report.shortest_wrong is not None
        and report.shortest_wrong.word == flipped
    )
    states = ["h_0", "h_1", "h_2", "h_3", "h_4"] + (
        ["c_0", "c_1", "c_2", "c_3", "c_4"] if cell == "lstm" else []
    )
    assert [e["state"] for e in report.trace] == states


def test_an_rnn_on_the_boundary_is_undecided_never_correct() -> None:
    m = _rnn(3, alphabet="01")
    with (
        torch.no_grad()
    ):  # hidden units 0 and 1 are equal on every word; the logit is h0 − h1: exactly 0
        for p in (m.rnn.weight_ih_l0, m.rnn.bias_ih_l0, m.rnn.bias_hh_l0):
            p[1] = p[0]
        m.rnn.weight_hh_l0[1] = m.rnn.weight_hh_l0[0]
        m.rnn.weight_hh_l0[:, 1] = 0.0  # h1 is read by no unit, so h0 and h1 stay equal
        m.classifier.weight[:] = torch.tensor([[1.0, -1.0, 0, 0, 0, 0]], dtype=torch.float64)
        m.classifier.bias.zero_()
    report = check_model(to_rnn(m.config, m.state_dict()), PARITY, max_n=3)
    t = report.totals
    # the empty word reads h_0 = 0 exactly: its logit is the point 0, which rejects (and ε is not in
    # PARITY); on every other word h0 and h1 are the same real computed twice: never decided
    assert (t.words, t.correct, t.wrong, t.undecided) == (
        15,
        1,
        0,
        14,
    ) and report.status == "undecided"
    assert report.rows[0].correct == 1 and all(u.word for u in report.undecided)
    exact = check_model(to_rnn(m.config, m.state_dict()), PARITY, max_n=1, exact=True)
    assert (
        exact.undecided[0].note
        == "the logit's enclosure contains 0; the sympy interpreter does not run RNN recognizers"
    )


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_the_check_model_cli_checks_a_saved_rnn_with_its_float32_run(
    cell: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = _rnn(4, alphabet="01", cell=cell)
    path = tmp_path / "rnn.pt"
    save_recognizer(m.float(), path)
    net = import_model(path)
    want = check_model(net, PARITY, max_n=6)
    assert want.totals.undecided == 0
    code = main(["check-model", str(path), "--language", "parity", "--max-n", "6", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == {"correct": 0, "wrong": 1}[want.status]
    assert (
        doc["fingerprint"] == rnn_fingerprint(net) and doc["totals"]["wrong"] == want.totals.wrong
    )
    assert (
        doc["totals"]["float32_differs"] == 0
    )  # float32 agrees with the rigorous verdict on all 127 words
    assert main(["import", str(path)]) == 2
    assert "is an RNN recognizer" in capsys.readouterr().err


def test_a_whole_pickled_rnn_and_its_saved_dict_import_to_the_same_recognizer(
    tmp_path: Path,
) -> None:
    m = _rnn(5, "relu")
    torch.save(m, tmp_path / "whole.pt")
    save_recognizer(m, tmp_path / "dict.pt")
    a, b = (
        import_model(tmp_path / "whole.pt", name="m"),
        import_model(tmp_path / "dict.pt", name="m"),
    )
    assert rnn_fingerprint(a) == rnn_fingerprint(b)  # type: ignore[arg-type]


def test_rnns_outside_the_family_are_refused_naming_the_module(tmp_path: Path) -> None:
    m = _rnn(6)
    m.rnn = torch.nn.RNN(3, 6, num_layers=2, batch_first=True)
    torch.save(m, tmp_path / "stacked.pt")
    with pytest.raises(
        ImportModelError,
        match=r"module rnn is nn.RNN\(num_layers=2, .*only a single-layer, one-directional nn.RNN",
    ):
        import_model(tmp_path / "stacked.pt")
    m = _rnn(6)
    m.rnn = torch.nn.LSTM(3, 6, batch_first=True)
    torch.save(m, tmp_path / "lstm.pt")
    with pytest.raises(
        ImportModelError,
        match=r"module rnn \(LSTM\) is outside the family; supported: .*RNNRecognizer",
    ):
        import_model(tmp_path / "lstm.pt")
    m = _rnn(6, cell="lstm")
    m.rnn = torch.nn.LSTM(3, 6, batch_first=True, proj_size=2)
    torch.save(m, tmp_path / "proj.pt")
    with pytest.raises(
        ImportModelError,
        match=r"module rnn is nn.LSTM\(.*proj_size=2\); only a single-layer, one-directional nn.LSTM",
    ):
        import_model(tmp_path / "proj.pt")
    with pytest.raises(
        ValueError, match=r"nonlinearity='relu': an nn\.LSTM cell has tanh and logistic gates only"
    ):
        RNNRecognizer(
            alphabet=["0"], embedding_dim=1, hidden_size=1, cell="lstm", nonlinearity="relu"
        )
    with pytest.raises(ValueError, match="nonlinearity='sigmoid' must be 'tanh' or 'relu'"):
        RNNRecognizer(alphabet=["0"], embedding_dim=1, hidden_size=1, nonlinearity="sigmoid")


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_every_tensor_of_the_rnn_state_dict_reaches_the_imported_recognizer(cell: str) -> None:
    """Mutation: change the first entry of any one tensor and the imported logit changes."""
    m = _rnn(7, cell=cell)
    sd = m.state_dict()
    words = [("a",), ("c", "a", "b")]
    base = [interval.run_rnn(to_rnn(m.config, sd), w, digits=30).output.mid for w in words]
    for key in sd:
        mutated = {k: v.clone() for k, v in sd.items()}
        mutated[key].view(-1)[0] += 0.25
        outs = [interval.run_rnn(to_rnn(m.config, mutated), w, digits=30).output.mid for w in words]
        assert outs != base, f"changing {key}[0] did not change the imported recognizer"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def test_the_committed_trained_parity_lstm_is_correct_on_every_word_up_to_12_and_a_perturbed_one_is_caught() -> (
    None
):
    """``examples/train_rnn_recognizer.py parity tests/fixtures/models/parity_lstm.pt --cell lstm``
    (trained on words up to length 12): right on all 8,191 words, every one decided in batch."""
    from netproof.symbolic.rnn_recognizers import LSTMRecognizer
    from netproof.symbolic.torch_import import load_model

    net = import_model(FIXTURES / "parity_lstm.pt")
    assert isinstance(net, LSTMRecognizer)
    report = check_model(net, PARITY, max_n=12)
    t = report.totals
    assert (t.words, t.correct, t.wrong, t.undecided, t.slow) == (8191, 8191, 0, 0, 0)
    assert min(report.margins) >= -2  # every margin at least 1e-2
    cfg, sd = load_model(FIXTURES / "parity_lstm.pt")
    sd = dict(sd)
    sd["classifier.bias"] = sd["classifier.bias"] + 100.0  # mutation: accept everything
    bad = check_model(to_rnn(cfg, sd), PARITY, max_n=3)
    assert (
        bad.status == "wrong" and bad.shortest_wrong is not None and bad.shortest_wrong.word == ()
    )


def test_the_rnn_training_example_writes_a_model_that_imports(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "examples" / "train_rnn_recognizer.py"
    out = tmp_path / "tiny.pt"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "first",
            str(out),
            "--cell",
            "rnn",
            "--steps",
            "3",
            "--train-n",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    net = import_model(out)
    assert net.alphabet == ("0", "1") and dict(net.params)["cell"] == '"rnn"'
