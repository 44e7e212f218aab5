"""Next-symbol-set outputs checked at every position (``check-model --output next-set``): a
hand-set causal transformer that predicts Dyck-1's allowed next symbols (committed fixture,
``tests/fixtures/models/make_next_symbol.py``), its planted-bug variant, scores exactly at the
threshold, and mutants whose rigorous verdicts agree with a float64 run."""

from __future__ import annotations

import csv
import functools
import itertools
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from netproof.symbolic.importers import ImporterError
from netproof.verifier.cli.app import main
from netproof.verifier.models.sequence import check_sequence, import_columns, load_sequence_dump

pytestmark = pytest.mark.torch

MODELS = Path(__file__).parents[1] / "fixtures" / "models"
sys.path.insert(0, str(MODELS))

from make_next_symbol import CFG, SYMBOLS, NextDyck, dyck_next
from make_transformerlens import forward

REFERENCE = f"{MODELS / 'make_next_symbol.py'}:dyck_next"
LONG = ("(",) * 10


def _words(n: int) -> list[tuple[str, ...]]:
    return [w for m in range(1, n + 1) for w in itertools.product("()", repeat=m)]


def _float64_wrong(sd: dict, n: int, threshold: float = 0.0) -> set[tuple[tuple[str, ...], int]]:
    """The (word, position) pairs a plain float64 run of the dump's equations gets wrong."""
    index = {"BOS": 0, "(": 1, ")": 2}
    sd64 = {k: v.double() for k, v in sd.items()}
    bad = set()
    for m in range(1, n + 1):
        words = list(itertools.product("()", repeat=m))
        ids = torch.tensor([[0, *(index[s] for s in w)] for w in words])
        with torch.no_grad():
            y = forward(CFG, sd64, ids)[:, 1:]
        for w, rows in zip(words, y, strict=True):
            for p, want in enumerate(dyck_next(list(w))):
                got = {SYMBOLS[c] for c in range(3) if float(rows[p, c]) > threshold}
                if want is not None and got != set(want):
                    bad.add((w, p))
    return bad


def test_the_hand_set_dyck_next_symbol_model_is_correct_at_every_position_up_to_length_10() -> None:
    imported, kw = load_sequence_dump(MODELS / "next_dyck.pt")
    assert imported.faith is not None and kw["threshold"] == 0.0
    report = check_sequence(imported.net, **{**kw, "reference": dyck_next, "max_n": 10})
    t = report.totals
    expected_positions = sum(
        e is not None for w in _words(10) for e in dyck_next(list(w))
    )  # every position of a Dyck prefix, counted apart
    assert (t.words, t.positions, t.correct, t.wrong, t.undecided) == (
        2046,
        expected_positions,
        expected_positions,
        0,
        0,
    )
    assert report.status == "correct" and report.output == "next-set"


def test_the_planted_wrong_input_in_a_long_word_is_found_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = tmp_path / "wrong.jsonl"
    argv = ["check-model", str(MODELS / "next_dyck_planted.pt"), "--reference", REFERENCE]
    code = main([*argv, "--max-n", "10", "--output", "next-set", "--json", "--wrong", str(wrong)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "wrong" and doc["output"] == "next-set"
    assert (doc["totals"]["wrong"], doc["totals"]["undecided"], doc["totals"]["words"]) == (
        1,
        0,
        2046,
    )
    sw = doc["shortest_wrong"]
    assert (sw["word"], sw["position"], sw["expected"], sw["got"]) == (
        " ".join(LONG),
        9,
        ["(", ")"],
        [")"],
    )
    assert sw["margin"] > 0
    lines = [json.loads(x) for x in wrong.read_text().splitlines()]
    assert [(r["input"], r["position"]) for r in lines] == [(" ".join(LONG), 9)]
    # the float64 run of the same weights finds that one position and no other
    sd = torch.load(MODELS / "next_dyck_planted.pt", weights_only=True)["state_dict"]
    assert _float64_wrong(sd, 10) == {(LONG, 9)}


def test_the_wrong_file_as_csv_carries_expected_and_got_as_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = tmp_path / "wrong.csv"
    argv = ["check-model", str(MODELS / "next_dyck_planted.pt"), "--reference", REFERENCE]
    assert main([*argv, "--max-n", "10", "--output", "next-set", "--wrong", str(wrong)]) == 1
    out = capsys.readouterr().out
    assert "next-symbol-set output" in out and "shortest wrong: '( ( ( ( ( ( ( ( ( ('" in out
    rows = list(csv.DictReader(wrong.read_text().splitlines()))
    assert len(rows) == 1
    assert (json.loads(rows[0]["expected"]), json.loads(rows[0]["got"])) == (["(", ")"], [")"])


def test_two_scores_exactly_at_the_threshold_are_undecided_never_decided() -> None:
    """With the biases of ``)`` and ``$`` set to 0, both scores are exactly 0 (the threshold)
    after a balanced prefix: those positions are undecided, every other one correct."""
    imported, kw = load_sequence_dump(MODELS / "next_dyck.pt")
    kw = {**kw, "reference": dyck_next, "max_n": 6, "bias": [Fraction(1), Fraction(0), Fraction(0)]}
    report = check_sequence(imported.net, **kw)
    balanced = {
        (w, p)
        for w in _words(6)
        for p, e in enumerate(dyck_next(list(w)))
        if e is not None and "$" in e
    }
    t = report.totals
    assert {(v.word, v.position) for v in report.listed} == balanced
    assert all(v.got is None and v.margin <= 0 for v in report.listed)
    assert (t.wrong, t.undecided, t.correct) == (0, len(balanced), t.positions - len(balanced))
    assert report.status == "undecided"


def test_a_threshold_equal_to_a_score_on_the_command_line_leaves_every_position_undecided(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["check-model", str(MODELS / "next_dyck.pt"), "--reference", REFERENCE]
    code = main([*argv, "--max-n", "4", "--output", "next-set", "--threshold", "1", "--json"])
    doc = json.loads(capsys.readouterr().out)  # the score of "(" is 1 everywhere
    assert code == 3 and doc["status"] == "undecided"
    assert doc["totals"]["correct"] == 0 and doc["totals"]["undecided"] == 28 + 11 + 4 + 1


@pytest.mark.parametrize(
    ("key", "index", "value"),
    [
        ("unembed.b_U", (1,), -3 / 16),  # ")" needs a mean above 3/16: long prefixes fail
        ("unembed.b_U", (2,), 3 / 16),  # "$" still allowed at depth 1 for long prefixes
        ("pos_embed.W_pos", (7, 2), 1.125),  # the planted neuron fires at position 6 too
        ("pos_embed.W_pos", (5, 2), 1.5),  # ... and at position 4, for every depth >= 3
    ],
)
def test_a_mutated_weight_is_wrong_exactly_where_a_float64_run_is_wrong(
    tmp_path: Path, key: str, index: tuple[int, ...], value: float
) -> None:
    dump = torch.load(MODELS / "next_dyck_planted.pt", weights_only=True)
    dump["state_dict"][key][index] = value
    path = tmp_path / "mutant.pt"
    torch.save(dump, path)
    imported, kw = load_sequence_dump(path, compare=False)
    report = check_sequence(imported.net, **{**kw, "reference": dyck_next, "max_n": 8})
    found = {(v.word, v.position) for v in report.listed}
    assert report.totals.undecided == 0 and len(found) > 0
    assert found == _float64_wrong(dump["state_dict"], 8)


def test_a_next_set_model_without_a_reference_is_refused_with_the_fix_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["check-model", str(MODELS / "next_dyck.pt"), "--output", "next-set", "--max-n", "3"]
    )
    assert code == 2 and "give --reference FILE.py:NAME" in capsys.readouterr().err


def test_a_next_set_model_read_as_categorical_is_refused_with_the_output_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["check-model", str(MODELS / "next_dyck.pt"), "--reference", REFERENCE, "--max-n", "3"]
    assert main([*argv, "--output", "categorical"]) == 2
    assert "has a next-set output; give --output next-set" in capsys.readouterr().err


def test_a_threshold_without_next_set_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check-model", str(MODELS / "next_dyck.pt"), "--reference", REFERENCE, "--max-n", "3"]
    assert main([*argv, "--output", "numeric", "--threshold", "0.5"]) == 2
    assert "--threshold 0.5: give a number, with --output next-set" in capsys.readouterr().err


def test_a_reference_giving_the_wrong_number_of_positions_is_refused() -> None:
    imported, kw = load_sequence_dump(MODELS / "next_dyck.pt")
    with pytest.raises(ValueError, match="it must give one per position"):
        check_sequence(imported.net, **{**kw, "reference": lambda w: [None], "max_n": 2})


@functools.cache
def _columns(planted: bool) -> list:
    columns, gap = import_columns(
        NextDyck(planted), alphabet=["(", ")"], vocab=["BOS", "(", ")"], prefix=["BOS"], max_len=10
    )
    assert gap is not None and gap < 1e-9  # the gate ran: every column at every position
    return columns


def test_a_module_returning_batch_length_vocabulary_is_checked_per_position_as_next_sets() -> None:
    """The same network as a plain nn.Module (one row of scores per position): correct at every
    position unplanted (up to length 6), the one planted position found and nothing else at
    length 10 (every length: the dump's test above)."""
    for planted, min_n, wrong in ((False, 1, set()), (True, 10, {(LONG, 9)})):
        report = check_sequence(
            None,  # type: ignore[arg-type]  # the columns carry the network
            dyck_next,
            unembed=[],
            values=SYMBOLS,
            min_n=min_n,
            max_n=10 if planted else 6,
            threshold=0,
            columns=_columns(planted),
        )
        assert report.totals.undecided == 0 and report.totals.words == (1024 if planted else 126)
        assert {(v.word, v.position) for v in report.listed} == wrong


def test_a_module_returning_batch_length_vocabulary_is_read_as_categorical_by_default() -> None:
    """The argmax of the planted module's three scores is ``(`` everywhere but on ten ``(`` at
    the last position, where ``)`` wins: that one position is wrong, nothing undecided."""
    report = check_sequence(
        None,  # type: ignore[arg-type]
        lambda w: ["("] * len(w),
        unembed=[],
        values=SYMBOLS,
        min_n=10,
        max_n=10,
        columns=_columns(True),
    )
    assert report.output == "categorical" and report.totals.undecided == 0
    assert [(v.word, v.position, v.got) for v in report.listed] == [(LONG, 9, ")")]


def test_a_module_with_one_output_row_per_word_is_refused_as_not_per_position() -> None:
    class Last(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = NextDyck()

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.inner(ids)[:, -1]

    with pytest.raises(ImporterError, match=r"a per-position output is \[batch, length"):
        import_columns(Last(), alphabet=["(", ")"], vocab=["BOS", "(", ")"], prefix=["BOS"])


MODULE = [
    str(MODELS / "next_dyck_planted_sd.pt"),
    "--module",
    f"{MODELS / 'make_next_symbol.py'}:NextDyck",
    "--kwargs",
    '{"planted": true}',
    "--vocab",
    "BOS,(,)",
    "--prefix",
    "BOS",
]


def test_check_model_reads_a_module_file_per_position_categorical_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text("def first_column(word):\n    return [0] * len(word)\n")
    argv = ["check-model", *MODULE, "--reference", f"{ref}:first_column", "--min-n", "10"]
    code = main([*argv, "--max-n", "10", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["output"] == "categorical"
    assert (doc["totals"]["words"], doc["totals"]["wrong"], doc["totals"]["undecided"]) == (
        1024,
        1,
        0,
    )
    sw = doc["shortest_wrong"]
    assert (sw["word"], sw["position"], sw["expected"], sw["got"]) == (" ".join(LONG), 9, 0, 1)


def test_a_module_file_without_its_vocabulary_is_refused_with_the_fix_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["check-model", *MODULE[:5], "--reference", REFERENCE, "--max-n", "3"]
    assert main([*argv, "--output", "next-set"]) == 2
    assert "give the vocabulary (--vocab T0,T1,..." in capsys.readouterr().err
