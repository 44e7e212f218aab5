"""``netproof run`` over many words (``@FILE``, ``-`` for standard input) as a table or JSON
lines, its messages (the empty word, the torch backend's hardmax line), and its traces: the
public formatter with every state, irrational values as certified decimals."""

from __future__ import annotations

import io
import json
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from cli_runs import netproof

from netproof.constructions.chiang2022 import parity_transformer
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic.display import format_trace
from netproof.symbolic.exact import run
from netproof.verifier.campaign.usermod import render_template
from netproof.verifier.cli.values import certified_rounding, certified_text


def test_run_over_a_file_of_words_prints_a_table_of_verdicts_and_logits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("0110\n0111\n\n1\n", encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{words}")
    assert done.code == 0
    assert done.out.splitlines() == [
        "word  accepted  member  logit",
        "0110  no        no      -3/77",
        "0111  yes       yes     9/154",
        "1     yes       yes     3/10",
    ]


def test_a_blank_line_in_a_word_file_is_left_out_and_the_run_says_so_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("0110\n0111\n\n1\n", encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{words}")
    assert done.code == 0 and len(done.out.splitlines()) == 4
    assert done.err == (
        f'netproof: {words}: 1 blank line left out (line 3); a line "" is the empty word\n'
    )


def test_a_line_of_two_quotes_in_a_word_file_is_the_empty_word(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text('0110\n""\n', encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{words}", "--json")
    records = [json.loads(line) for line in done.out.splitlines()]
    assert (done.code, done.err) == (0, "")
    assert [r["word"] for r in records] == ["0110", ""]
    assert records[1] == json.loads(netproof(capsys, "run", "parity", "", "--json").out)


def test_a_bad_word_after_a_blank_line_is_named_by_its_line_in_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("0110\n\n012\n", encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{words}")
    assert done.code == 2 and done.err.startswith(f"netproof: error: {words}, line 3: symbol '2'")


def test_a_word_file_of_blank_lines_only_is_refused_naming_how_to_list_the_empty_word(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    words = tmp_path / "words.txt"
    words.write_text("\n\n", encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{words}")
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"netproof: error: {words} holds no word (only 2 blank lines); write one word per line, "
        '"" for the empty word\n'
    )


def test_run_over_standard_input_with_json_prints_one_record_per_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0110\n1\n")))
    done = netproof(capsys, "run", "parity", "-", "--json")
    records = [json.loads(line) for line in done.out.splitlines()]
    assert done.code == 0
    assert [(r["word"], r["output"], r["accepted"]) for r in records] == [
        ("0110", "-3/77", False),
        ("1", "3/10", True),
    ]


def test_a_file_with_one_word_runs_it_as_a_single_word_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.txt").write_text("0110\n", encoding="utf-8")
    assert (
        netproof(capsys, "run", "parity", f"@{tmp_path / 'w.txt'}").out
        == netproof(capsys, "run", "parity", "0110").out
    )


def test_a_bad_word_among_many_exits_2_naming_its_line_before_anything_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0110\n012\n")))
    done = netproof(capsys, "run", "parity", "-")
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        "netproof: error: standard input, line 2: symbol '2' at position 3 is not in the alphabet {0, 1}; "
        "special tokens are added by the network, not typed\n"
    )


def test_trace_of_many_words_is_refused_naming_the_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "w.txt").write_text("01\n10\n", encoding="utf-8")
    done = netproof(capsys, "run", "parity", f"@{tmp_path / 'w.txt'}", "--trace")
    assert done.code == 2 and "--trace prints one word's trace" in done.err


def test_the_empty_word_on_a_network_without_special_tokens_names_the_construction_and_the_fix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "maj.py").write_text(render_template("my-majority"), encoding="utf-8")
    done = netproof(capsys, "run", "maj.py", "")
    assert done.code == 2
    assert done.err == (
        "netproof: error: my-majority reads its logit at token 0, and the empty word gives 0 tokens: "
        "my-majority is defined on words of at least 1 symbol; give a longer word\n"
    )


@pytest.mark.torch
def test_the_torch_hardmax_line_says_so_for_a_network_without_hardmax(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "run", "parity", "01", "--backend", "torch")
    assert (
        done.code == 0
        and "hardmax: the network has no hardmax head (no score gap to measure)\n" in done.out
    )
    assert (
        "hardmax: smallest score gap 0.25; unresolved ties: 0"
        in netproof(capsys, "run", "dyck", "()", "--backend", "torch").out
    )


def test_run_trace_prints_every_state_through_the_public_formatter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "run", "dyck", "([])[]", "-p", "k=2", "-p", "depth=2", "--trace")
    trace = run(dyck_recognizer(k=2, depth=2), "([])[]")
    assert done.code == 0
    assert format_trace(trace, states="all", value=certified_text, weights=True) in done.out
    assert (
        len(done.out.splitlines()) < 116
    )  # the private formatter's one line per position and head took 116


def test_run_trace_prints_irrational_values_with_every_digit_certified(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from netproof.constructions.chiang2022.networks import doubled
    from netproof.symbolic.sympy_interp import run as run_sympy

    done = netproof(capsys, "run", "parity-ln", "01", "--trace")
    assert done.code == 0
    trace = run_sympy(doubled(parity_transformer()), "01")
    # independently: sympy's own 30-digit evaluation, rounded to the 6 digits printed
    logit = f"{Decimal(str(trace.output.evalf(30))):.6g}"
    entry = f"{Decimal(str(trace.value('count', 1, 'I[w=0]').evalf(30))):.6g}"
    assert (logit, entry) == ("0.618542", "1.96396")
    assert f"output ≈{logit}, accepted" in done.out
    assert f"I[w=0]             0   ≈{entry}          0" in done.out


def test_certified_rounding_prints_only_the_digits_both_ends_of_the_enclosure_agree_on() -> None:
    iv = mpmath.iv
    assert certified_rounding(iv.mpf(["0.99999999", "1.00000001"])) == "≈1.00000"
    assert certified_rounding(iv.mpf(["0.1234", "0.1236"])) == "≈0.12"
    assert certified_rounding(iv.mpf(["-4e-42", "4.4e-42"])) == "0 ± 5e-42"
    assert certified_rounding(iv.mpf(["314159265", "314159266"])) == "≈3.14159e+8"
    assert certified_rounding(iv.mpf(["0.375", "0.375"])) == "3/8"
    assert certified_text(Fraction(-3, 77)) == "-3/77"


def test_format_trace_cuts_a_wide_table_into_blocks_of_positions_within_the_width() -> None:
    trace = run(parity_transformer(), "0110" * 8)
    text = format_trace(trace, states="all", width=60)
    assert all(
        len(line) <= 60
        for line in text.splitlines()
        if line.startswith(("  i ", "  token ", "  s "))
    )
    assert "  positions 0–" in text and [s.label for s in trace.states] == [
        "input",
        "count",
        "fig1",
        "parity",
        "ffn2",
    ]
    labels = [text.index(f"state after {s.label!r}") for s in trace.states]
    assert labels == sorted(labels)


def test_a_json_trace_has_each_irrational_values_certified_decimal_beside_its_exact_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "run", "parity-ln", "01", "--backend", "interval", "--trace", "--json")
    count = json.loads(done.out)["trace"]["states"][1]
    assert count["after"] == "count"
    assert count["rows"][1]["I[w=0]"] == "1.96396101212393 (±2.0e-60)"
    assert count["decimals"][1]["I[w=0]"] == "≈1.96396"
    assert count["decimals"][1]["I[w=1]"].startswith(
        "0 ± "
    )  # an enclosure of 0: only a bound is certified
