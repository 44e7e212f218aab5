"""Checking trained models on every word (netproof.verifier.models): the batched enclosure holds the
exact value, a model on the decision boundary is never reported correct, the committed fixtures'
shortest wrong words are found and replayed, a network wrong on one long word is caught, and the
CLI's exit statuses."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(
    1
)  # the machine is shared: one torch thread runs these batches several times faster than two

from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Head,
    Network,
    Sublayer,
    affine,
    constant,
    ffn,
    interval,
    token_embedding,
)
from netproof.symbolic.ir import Classifier, Scale, Softmax
from netproof.symbolic.torch_import import import_model, load_model, to_network
from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model, compile_enclosure

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def _torch_model(path: Path) -> Recognizer:
    cfg, sd = load_model(path)
    m = Recognizer(**cfg)
    m.load_state_dict(sd)
    return m.double().eval()


@pytest.mark.parametrize("name", ["first", "parity", "dyck12"])
def test_the_batched_enclosure_holds_the_rigorous_interval_value_on_every_short_word(
    name: str,
) -> None:
    net = import_model(FIXTURES / f"{name}.pt")
    enc = compile_enclosure(net)
    alphabet = net.alphabet
    for m in range(5):
        words = list(itertools.product(alphabet, repeat=m))
        tokens = torch.tensor(
            [[enc.token_index["<cls>"], *(enc.token_index[a] for a in w)] for w in words]
        ).reshape(len(words), m + 1)
        y = enc.logits(tokens, m + 1)
        for b, w in enumerate(words):
            exact = interval.run(net, w, digits=40).output
            assert float(y.m[b] - y.r[b]) <= exact.a and exact.b <= float(y.m[b] + y.r[b])
            assert float(y.r[b]) < 1e-6


@pytest.mark.parametrize(
    "cfg",
    [
        {"norm_first": True, "causal": True, "readout": "last", "final_norm": True, "nhead": 2},
        {
            "norm_first": True,
            "causal": False,
            "num_layers": 2,
            "nhead": 4,
            "layer_norm_eps": 1e-3,
            "positional": "sinusoidal",
        },
        {
            "norm_first": False,
            "causal": True,
            "readout": "last",
            "num_layers": 2,
            "final_norm": True,
        },
    ],
    ids=["pre-causal-final", "pre-2layers-sinusoidal", "post-causal-final"],
)
def test_the_batched_enclosure_holds_the_rigorous_value_for_every_variant_of_the_family(
    cfg: dict[str, object],
) -> None:
    torch.manual_seed(7)
    m = (
        Recognizer(alphabet=["a", "b", "c"], d_model=8, dim_feedforward=12, max_len=8, **cfg)
        .double()
        .eval()
    )
    net = to_network(m.config, m.state_dict())
    enc = compile_enclosure(net)
    for n in range(4):
        words = list(itertools.product("abc", repeat=n))
        y = enc.logits(m.encode(words), n + 1)
        for b, w in enumerate(words):
            exact = interval.run(net, w, digits=40).output
            assert (
                float(y.m[b] - y.r[b]) <= exact.a
                and exact.b <= float(y.m[b] + y.r[b])
                and float(y.r[b]) < 1e-6
            )


def _boundary_model() -> Recognizer:
    """A model whose residual dims x0 and x1 are equal in exact arithmetic on every word, read by
    the classifier as x0 − x1: its logit is exactly 0, by two different float computations."""
    torch.manual_seed(5)
    m = (
        Recognizer(alphabet=["0", "1"], d_model=4, nhead=2, dim_feedforward=6, max_len=8)
        .double()
        .eval()
    )
    with torch.no_grad():
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
        m.classifier.weight[:] = torch.tensor([[1.0, -1.0, 0.0, 0.0]], dtype=torch.float64)
        m.classifier.bias.zero_()
    return m


def test_a_model_sitting_on_the_boundary_is_undecided_on_every_word_and_never_correct(
    tmp_path: Path,
) -> None:
    m = _boundary_model()
    net = to_network(m.config, m.state_dict())
    report = check_model(net, PARITY, max_n=4)
    t = report.totals
    assert (t.words, t.correct, t.wrong, t.undecided, t.slow) == (31, 0, 0, 31, 31)
    assert report.status == "undecided" and report.shortest_wrong is None and report.margins == {}
    assert report.undecided[0].word == () and report.undecided[0].low < 0 < report.undecided[0].high
    save_recognizer(m.float(), tmp_path / "boundary.pt")
    assert (
        main(["check-model", str(tmp_path / "boundary.pt"), "--language", "parity", "--max-n", "3"])
        == 3
    )


@pytest.mark.parametrize(
    ("name", "language", "max_n"), [("parity", PARITY, 6), ("dyck12", DYCK(1, 2), 6)]
)
def test_the_shortest_wrong_word_of_each_committed_model_is_found_and_replayed(
    name: str, language: object, max_n: int
) -> None:
    net = import_model(FIXTURES / f"{name}.pt")
    report = check_model(net, language, max_n=max_n)  # type: ignore[arg-type]
    wrong = report.shortest_wrong
    assert wrong is not None and report.status == "wrong"
    # replay: the slow rigorous interpreter and the torch model itself agree that it is wrong
    replay = interval.run(net, wrong.word, digits=60)
    assert replay.accepted is not None and replay.accepted != language.contains(wrong.word)  # type: ignore[attr-defined]
    m = _torch_model(FIXTURES / f"{name}.pt")
    with torch.no_grad():
        assert (float(m(m.encode([wrong.word]))[0]) > 0) == replay.accepted
    # no shorter word, and no earlier word of its length in shortlex order, is wrong
    for w in (
        w
        for k in range(len(wrong.word) + 1)
        for w in itertools.product(language.alphabet, repeat=k)
    ):  # type: ignore[attr-defined]
        if w == wrong.word:
            break
        assert interval.run(net, w, digits=60).accepted == language.contains(w)  # type: ignore[attr-defined]
    assert all(r.wrong == 0 for r in report.rows[: len(wrong.word)])


def test_the_trained_dyck22_model_is_mostly_right_and_its_shortest_wrong_word_is_found_and_replayed() -> (
    None
):
    net = import_model(FIXTURES / "dyck22.pt")
    language = DYCK(2, 2)
    report = check_model(net, language, max_n=6)
    t = report.totals
    assert (t.words, t.undecided) == (
        5461,
        0,
    ) and 0 < t.wrong < t.words // 100  # mostly right, not always
    assert [r.wrong for r in report.rows] == [0, 0, 0, 0, 0, 0, 1]
    wrong = report.shortest_wrong
    assert wrong is not None and wrong.word == tuple(
        "()[())"
    )  # accepted, though its last ")" meets an open "["
    # replay: the slow rigorous interpreter and the torch model itself agree that it is wrong
    replay = interval.run(net, wrong.word, digits=60)
    assert replay.accepted is True and not language.contains(wrong.word)
    assert wrong.low <= replay.output.a and replay.output.b <= wrong.high
    m = _torch_model(FIXTURES / "dyck22.pt")
    with torch.no_grad():
        assert float(m(m.encode([wrong.word]))[0]) > 0
    # every member up to length 6 is accepted, by the torch model too
    members = [
        w
        for k in range(7)
        for w in itertools.product(language.alphabet, repeat=k)
        if language.contains(w)
    ]
    with torch.no_grad():
        assert all(float(m(m.encode([w]))[0]) > 0 for w in members) and len(members) == 43


def test_the_trained_first_model_is_correct_on_every_word_up_to_10_and_a_perturbed_one_is_refuted() -> (
    None
):
    net = import_model(FIXTURES / "first.pt")
    report = check_model(net, FIRST, max_n=10)
    assert report.status == "correct" and report.totals.correct == 2047
    assert (
        sum(report.margins.values()) == 2047 and min(report.margins) >= -3
    )  # every margin at least 1e-3
    cfg, sd = load_model(FIXTURES / "first.pt")
    sd = dict(sd)
    sd["classifier.bias"] = sd["classifier.bias"] + 100.0  # mutation: accept everything
    bad = check_model(to_network(cfg, sd), FIRST, max_n=3)
    assert (
        bad.status == "wrong" and bad.shortest_wrong is not None and bad.shortest_wrong.word == ()
    )


def _first_with_a_trap() -> Network:
    """FIRST by softmax attention, except on the one word 1^12: a uniform head measures the share
    of 1s, and a ReLU unit that fires only above 23/25 (12/13 at 1^12, 11/12 at 1^11) turns the
    logit negative."""
    first = Head(
        name="first",
        query=constant({"q": 1}),
        key=affine({"q": {"p1": 1}}),
        value=affine({"f": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
        scale=Scale(coef=Fraction(40)),
    )
    mean = Head(
        name="mean",
        query=constant({"z": 0}),
        key=constant({"z": 0}),
        value=affine({"share": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
    )
    return Network(
        name="first_with_trap",
        dims=("one", "p1", "f", "share", "trap"),
        embedding=token_embedding(
            ("0", "1"), {"0": {}, "1": {"one": 1}, "<cls>": {}}, prefix=("<cls>",)
        ),
        layers=(
            Sublayer(block=AttentionLayer(name="read", heads=(first, mean))),
            Sublayer(
                block=ffn(
                    "trap",
                    affine({"u": {"share": 1}}, bias={"u": "-23/25"}),
                    RELU,
                    affine({"trap": {"u": 1000}}),
                )
            ),
        ),
        readout=Classifier(logit=affine({"logit": {"f": 1, "trap": -1}}, bias={"logit": "-1/2"})),
    )


def test_a_network_wrong_on_purpose_on_one_long_word_is_caught() -> None:
    from netproof.symbolic.ir import TokenEmbedding

    net = _first_with_a_trap()
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    net = Network(
        name=net.name,
        dims=net.dims,
        layers=net.layers,
        readout=net.readout,
        embedding=TokenEmbedding(
            alphabet=emb.alphabet,
            table=emb.table,
            prefix=emb.prefix,
            positional=(("p1", "I[i=1]", Fraction(1)),),
        ),
    )
    report = check_model(net, FIRST, max_n=12)
    assert report.totals.wrong == 1 and report.totals.undecided == 0
    assert report.shortest_wrong is not None and report.shortest_wrong.word == ("1",) * 12
    assert [r.wrong for r in report.rows] == [0] * 12 + [1]


def test_float32_differences_are_counted_against_the_rigorous_verdict() -> None:
    net = import_model(FIXTURES / "first.pt")
    report = check_model(
        net, FIRST, max_n=2, float32=lambda words: [1.0] * len(words)
    )  # a run that accepts all
    assert [r.float32_differs for r in report.rows] == [1, 1, 2]
    assert report.float32_differences[0] == ((), 1.0, False)


def test_check_model_cli_prints_the_table_and_exits_by_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = str(FIXTURES / "first.pt")
    assert main(["check-model", first, "--language", "first", "--max-n", "4"]) == 0
    out = capsys.readouterr().out
    assert (
        "   all        31        31         0         0      0         0" in out
        and "status: correct" in out
    )
    assert (
        main(
            [
                "check-model",
                str(FIXTURES / "parity.pt"),
                "--language",
                "parity",
                "--max-n",
                "4",
                "--json",
            ]
        )
        == 1
    )
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["status"] == "wrong"
        and doc["shortest_wrong"]["word"] == "0 1 1"
        and doc["totals"]["words"] == 31
    )
    trace = doc["shortest_wrong_trace"]
    assert trace[0]["state"] == "input" and any(
        abs(sum(e["weights"]) - 1) < 1e-12 for e in trace if "attention" in e
    )
    assert main(["check-model", first, "--language", "dyck", "--max-n", "2"]) == 2
    assert "has alphabet ['(', ')'] but network 'first' reads ['0', '1']" in capsys.readouterr().err
    assert main(["check-model", first, "--language", "first", "--max-n", "40"]) == 2
    assert "max_len=32" in capsys.readouterr().err
    assert main(["check-model", first, "--language", "nope", "--max-n", "2"]) == 2
    user = tmp_path / "lang.py"
    user.write_text("def ends_in_one(word):\n    return word[-1:] == ('1',)\n")
    assert main(["check-model", first, "--language", f"{user}:ends_in_one", "--max-n", "2"]) == 1


def test_import_cli_writes_a_network_file_that_check_model_reads(tmp_path: Path) -> None:
    out = tmp_path / "first.json"
    assert main(["import", str(FIXTURES / "first.pt"), "--out", str(out)]) == 0
    assert main(["check-model", str(out), "--language", "first", "--max-n", "3"]) == 0
    assert main(["import", str(tmp_path / "missing.pt")]) == 2


def test_check_model_reads_netproofs_own_export_of_a_construction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "parity.pt"
    assert main(["export", "parity-ln", "--format", "state_dict", "--out", str(out)]) == 0
    # Chiang & Cholak's layer-norm PARITY network: on the empty word the logit is exactly 0, which no
    # interval can prove; the sympy interpreter can
    assert main(["check-model", str(out), "--language", "parity", "--max-n", "5"]) == 3
    assert "undecided: ε: logit in [-6.25716e-49, 6.24774e-49]" in capsys.readouterr().out
    assert main(["check-model", str(out), "--language", "parity", "--max-n", "5", "--exact"]) == 0
    assert "   all        63        63         0         0      1" in capsys.readouterr().out


def test_a_sharded_run_in_worker_processes_prints_the_same_report_as_one_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from netproof.verifier.cli.check_model import shards

    assert shards(2, 0, 3, 2, 4) == [(0, 0, 1), (1, 0, 2), (2, 0, 4), (3, 0, 4), (3, 4, 8)]
    assert shards(2, 3, 4, 3, 4) == [(3, 0, 4), (3, 4, 8), (4, 0, 6), (4, 6, 12), (4, 12, 16)]
    argv = [
        "check-model",
        str(FIXTURES / "dyck12.pt"),
        "--language",
        "dyck",
        "--max-n",
        "8",
        "--json",
        "--batch",
        "16",
    ]
    assert main(argv) == 1
    one = capsys.readouterr().out
    assert main([*argv, "--jobs", "2"]) == 1
    assert capsys.readouterr().out == one


def test_the_margin_picture_is_a_png_of_the_checked_words(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "margins.png"
    assert (
        main(
            [
                "check-model",
                str(FIXTURES / "parity.pt"),
                "--language",
                "parity",
                "--max-n",
                "4",
                "--plot",
                str(png),
            ]
        )
        == 1
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = check_model(import_model(FIXTURES / "parity.pt"), PARITY, max_n=4)
    assert sum(c + w for c, w in report.fine_margins.values()) == 31
    assert (
        sum(w for _c, w in report.fine_margins.values())
        == report.totals.wrong
        == sum(report.wrong_margins.values())
    )
