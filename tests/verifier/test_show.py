"""``netproof show``: attention maps of an exact run as PNG, SVG or a self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import pytest
from netproof.verifier.cli import main

pytest.importorskip("matplotlib")


def test_show_draws_the_dyck_recognizer_as_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dyck.png"
    assert main(["show", "dyck", "([])", "-p", "k=2", "-p", "depth=2", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert capsys.readouterr().out == f"wrote {out}\n"


def test_show_writes_an_svg_whose_labels_are_the_words_symbols(tmp_path: Path) -> None:
    out = tmp_path / "parity.svg"
    assert main(["show", "parity", "0110", "--out", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "layer parity, head odd" in svg and "4/11" in svg  # the exact softmax weights in the cells


def test_show_writes_a_self_contained_html_page_without_scripts(tmp_path: Path) -> None:
    out = tmp_path / "dyck.html"
    assert main(["show", "dyck", "([])", "-p", "k=2", "-p", "depth=2", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<script" not in page
    assert "state after match2" in page and 'src="http' not in page


@pytest.mark.parametrize(
    ("name", "word", "kind"),
    [("tm-sim", "01", "an encoder–decoder"), ("stack-rnn", "()", "a recurrent network")],
)
def test_show_refuses_networks_without_attention_maps_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, word: str, kind: str
) -> None:
    assert main(["show", name, word, "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{name} is {kind}" in err and "netproof run" in err
    assert not (tmp_path / "x.png").exists()


def test_show_refuses_an_unknown_format_naming_the_ones_it_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "parity", "0110", "--out", str(tmp_path / "x.jpg")]) == 2
    assert "give a file ending in .png, .svg or .html" in capsys.readouterr().err


def test_show_refuses_a_symbol_outside_the_alphabet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "parity", "01x", "--out", str(tmp_path / "x.png")]) == 2
    assert "'x'" in capsys.readouterr().err


def test_without_matplotlib_show_names_the_plot_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["show", "parity", "0110", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'netproof[plot]'" in err


def test_a_certified_decimal_bounds_its_distance_to_every_point_of_the_enclosure() -> None:
    from fractions import Fraction

    from mpmath import iv
    from netproof.verifier.cli.values import certified_decimal

    lo, hi = "1.5", "1.7"
    text = certified_decimal(iv.mpf([lo, hi]), 3)
    assert text == "1.60 ± 2e-1"
    d, e = (Fraction(x) for x in text.split(" ± "))
    assert d - e <= Fraction(lo) and Fraction(hi) <= d + e
    point = certified_decimal(iv.mpf(["0.001", "0.001"]))
    d, e = (Fraction(x) for x in point.split(" ± "))
    assert abs(d - Fraction(1, 1000)) <= e < Fraction(1, 10**17)


def test_run_prints_a_long_irrational_logit_as_a_certified_decimal_and_keeps_the_exact_form_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    assert main(["run", "parity-ln", "0110"]) == 0
    assert "logit s = -0.130761573121031 ± 2e-16   (sympy)" in capsys.readouterr().out
    assert main(["run", "parity-ln", "0110", "--exact-form"]) == 0
    assert len(capsys.readouterr().out) > 20_000
    assert main(["run", "parity-ln", "0110", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["output_decimal"] == "-0.130761573121031 ± 2e-16" and "sqrt" in record["output"]
