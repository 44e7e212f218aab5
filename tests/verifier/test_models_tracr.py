"""tracr's library programs compiled by tracr (committed dumps written by examples/tracr_dump.py
where tracr is installed: weights, tracr's own outputs and its RASP evaluator's outputs for every
input up to the program's max_seq_len) imported through the TransformerLens-layout importer,
gated on tracr's recorded outputs, and checked at every position against the RASP program."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from netproof.verifier.cli.app import main
from netproof.verifier.models.faithful import UnfaithfulImportError
from netproof.verifier.models.imported import import_file
from netproof.verifier.models.sequence import check_sequence, load_sequence_dump

pytestmark = pytest.mark.torch

TRACR = Path(__file__).parents[1] / "fixtures" / "models" / "tracr"
CATEGORICAL = ["length", "reverse", "hist", "sort_unique", "sort", "count_less_freq", "count_a"]
NUMERICAL = ["frac_prevs", "pair_balance"]
FAST = {"hist", "sort_unique", "count_less_freq"}


def _marks(name: str) -> object:
    return pytest.param(name, marks=() if name in FAST else pytest.mark.slow)


@pytest.mark.parametrize("name", [_marks(n) for n in CATEGORICAL])
def test_a_compiled_tracr_library_program_imports_and_computes_its_rasp_program(
    name: str,
) -> None:
    imported, kw = load_sequence_dump(TRACR / f"{name}.pt")
    assert imported.faith is not None and imported.faith.exhaustive_to == kw["max_n"]
    report = check_sequence(imported.net, **kw)
    t = report.totals
    assert (report.status, t.wrong, t.undecided) == ("correct", 0, 0)
    assert t.words == sum(len(imported.net.alphabet) ** m for m in range(1, kw["max_n"] + 1))
    assert t.correct == t.positions > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", NUMERICAL)
def test_a_numerical_tracr_program_imports_and_matches_tracrs_outputs(name: str) -> None:
    dump = torch.load(TRACR / f"{name}.pt", weights_only=True)
    imp = import_file(TRACR / f"{name}.pt", max_len=dump["cfg"]["n_ctx"] - 1)
    assert imp.faith is not None and imp.faith.words == len(dump["recorded"]["words"])


@pytest.mark.parametrize("name", [pytest.param("frac_prevs"), _marks("pair_balance")])
def test_a_numerical_tracr_program_is_within_a_millionth_of_its_rasp_program(name: str) -> None:
    imported, kw = load_sequence_dump(TRACR / f"{name}.pt")
    report = check_sequence(imported.net, tolerance=1e-6, **kw)
    t = report.totals
    assert (report.status, t.words, t.positions, t.correct) == ("correct", 62, 258, 258)


def test_a_numerical_value_off_by_more_than_the_tolerance_is_wrong_and_one_inside_it_is_not() -> (
    None
):
    imported, kw = load_sequence_dump(TRACR / "frac_prevs.pt", compare=False)
    recorded = kw["reference"]

    def reference(w: tuple[str, ...]) -> list[object]:
        out = list(recorded(w))
        if tuple(w) == ("x", "y", "x", "x", "y"):
            out[4] += 0.01  # planted: off by 1e-2
        if tuple(w) == ("y", "y"):
            out[1] += 1e-9  # inside the tolerance
        return out

    report = check_sequence(imported.net, **{**kw, "reference": reference, "tolerance": 1e-3})
    assert report.totals.wrong == 1 and report.totals.undecided == 0
    sw = report.shortest_wrong
    assert sw is not None and (sw.word, sw.position) == (("x", "y", "x", "x", "y"), 4)


def test_two_logits_equal_in_exact_arithmetic_are_undecided_never_decided() -> None:
    imported, kw = load_sequence_dump(TRACR / "hist.pt", compare=False)
    same = kw["unembed"][1]
    kw.update(unembed=[same, same], values=["x", "y"], bias=[Fraction(0)] * 2, max_n=2)
    report = check_sequence(imported.net, **{**kw, "reference": lambda w: ["x"] * len(w)})
    t = report.totals
    assert (t.positions, t.undecided, t.correct, t.wrong) == (21, 21, 0, 0)
    assert report.status == "undecided" and all(v.got is None for v in report.listed)


def test_a_planted_wrong_output_in_a_long_word_is_found_and_nothing_else() -> None:
    imported, kw = load_sequence_dump(TRACR / "sort_unique.pt", compare=False)
    recorded = kw["reference"]
    planted = ("3", "1", "2", "1")

    def reference(w: tuple[str, ...]) -> list[object]:
        out = list(recorded(w))
        return [*out[:2], 9, *out[3:]] if tuple(w) == planted else out

    report = check_sequence(imported.net, **{**kw, "reference": reference})
    assert report.totals.wrong == 1 and report.totals.undecided == 0
    sw = report.shortest_wrong
    assert sw is not None and (sw.word, sw.position, sw.expected) == (planted, 2, 9)
    assert [v.word for v in report.listed] == [planted]


def test_swapped_output_columns_are_caught_with_the_word_tracr_disagrees_on() -> None:
    imported, kw = load_sequence_dump(TRACR / "count_less_freq.pt", compare=False)
    u = list(kw["unembed"])
    u[0], u[1] = u[1], u[0]  # a wrong reading of the unembedding: values 0 and 1 swapped
    report = check_sequence(imported.net, **{**kw, "unembed": u})
    assert report.status == "wrong" and report.shortest_wrong is not None
    sw = report.shortest_wrong
    expected = kw["reference"](sw.word)[sw.position]
    assert sw.expected == expected and sw.got != expected and {sw.got, expected} <= {0, 1}


def test_a_mutated_tracr_weight_is_refused_by_the_gate(tmp_path: Path) -> None:
    dump = torch.load(TRACR / "hist.pt", weights_only=True)
    w = dump["state_dict"]["blocks.0.mlp.W_out"]
    writes = (w @ dump["state_dict"]["unembed.W_U"]).abs().sum(1)
    w[int(torch.nonzero(writes)[0, 0]), :] *= 0.5  # a hidden unit that writes the output
    torch.save(dump, tmp_path / "hist.pt")
    with pytest.raises(UnfaithfulImportError, match=r"is not the model: on the word '.*' at"):
        load_sequence_dump(tmp_path / "hist.pt")


def test_check_model_reference_json_and_wrong_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text(
        "def hist(word):\n"
        "    out = [word.count(a) for a in word]\n"
        "    return [None, None, 5] if word == ['a', 'b', 'a'] else out\n"
    )
    wrong = tmp_path / "wrong.jsonl"
    code = main(
        [
            "check-model",
            str(TRACR / "hist.pt"),
            "--reference",
            f"{ref}:hist",
            "--max-n",
            "3",
            "--json",
            "--wrong",
            str(wrong),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "wrong"
    assert doc["totals"]["words"] == 39 and doc["totals"]["wrong"] == 1
    assert (doc["shortest_wrong"]["word"], doc["shortest_wrong"]["position"]) == ("a b a", 2)
    lines = [json.loads(x) for x in wrong.read_text().splitlines()]
    assert lines == [
        {
            "input": "a b a",
            "position": 2,
            "expected": 5,
            "got": 2,
            "margin": lines[0]["margin"],
            "sampled": False,
        }
    ]
    assert [r["error_rate"] for r in doc["rows"]] == [0.0, 0.0, 1 / 27]


def test_wrong_inputs_go_to_a_csv_file_that_reads_back_with_one_row_per_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv

    ref = tmp_path / "ref.py"
    ref.write_text(
        "def hist(word):\n"
        "    out = [word.count(a) for a in word]\n"
        "    return [9] * len(word) if word[:2] == ['c', 'c'] else out\n"
    )
    wrong = tmp_path / "wrong.csv"
    argv = ["check-model", str(TRACR / "hist.pt"), "--reference", f"{ref}:hist"]
    code = main([*argv, "--max-n", "3", "--wrong", str(wrong)])
    out = capsys.readouterr().out
    assert code == 1 and "shortest wrong: 'c c' at position 0" in out
    with wrong.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    # c c (2 positions) and c c a, c c b, c c c (3 each): every position is wrong
    assert len(rows) == 2 + 3 * 3
    assert {r["input"] for r in rows} == {"c c", "c c a", "c c b", "c c c"}
    assert all(r["expected"] == "9" and r["sampled"] == "False" for r in rows)
    assert list(rows[0]) == ["input", "position", "expected", "got", "margin", "sampled"]


def test_sampled_lengths_beyond_the_bound_are_labelled_estimates_with_an_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every word up to 3 is right; beyond it the reference is wrong on the words that start
    with 'a' (a third of them): sampling finds such a word (status wrong, exit 1), never calls it
    the shortest, and its interval holds the true rate 1/3."""
    ref = tmp_path / "ref.py"
    ref.write_text(
        "def hist(word):\n"
        "    out = [word.count(a) for a in word]\n"
        "    return [9] + out[1:] if len(word) > 3 and word[0] == 'a' else out\n"
    )
    argv = ["check-model", str(TRACR / "hist.pt"), "--reference", f"{ref}:hist", "--json"]
    code = main([*argv, "--max-n", "3", "--sample", "300", "--sample-max-n", "5", "--seed", "1"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "wrong" and doc["shortest_wrong"] is None
    assert doc["totals"]["wrong"] == 0 and doc["totals"]["words"] == 39
    sampled = [r for r in doc["rows"] if r["sampled"]]
    assert [(r["length"], r["words"]) for r in sampled] == [(4, 300), (5, 300)]
    for r in sampled:
        lo, hi = r["error_rate_95"]
        assert lo < 1 / 3 < hi and 0.2 < r["error_rate"] < 0.45
    assert doc["sampled_wrong"]["word"].startswith("a ") and doc["sampled_wrong"]["position"] == 0
    code = main([*argv[:-1], "--max-n", "3", "--sample", "10"])
    assert code == 2 and "--sample-max-n" in capsys.readouterr().err


def test_check_model_without_language_or_reference_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["check-model", str(TRACR / "hist.pt"), "--max-n", "3"])
    assert code == 2 and "needs --language" in capsys.readouterr().err


def test_check_model_output_numeric_checks_a_numerical_dump_and_refuses_the_wrong_kind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(TRACR / "frac_prevs.pt")
    code = main(["check-model", path, "--output", "numeric", "--max-n", "3", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["output"] == "numeric" and doc["totals"]["positions"] == 34
    code = main(["check-model", path, "--output", "categorical", "--max-n", "3"])
    assert code == 2 and "has a numerical output; give --output numeric" in capsys.readouterr().err
