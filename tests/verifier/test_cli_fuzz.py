"""`netproof fuzz`: hypothesis search over a construction's claims from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netproof.verifier import cli


def _fuzz(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object], str]:
    code = cli.main(["fuzz", *args, "--json", "--no-database"])
    cap = capsys.readouterr()
    return code, json.loads(cap.out) if cap.out else {}, cap.err


def test_fuzzing_the_printed_dyck_recognizer_finds_and_shrinks_its_shortest_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _fuzz(capsys, "dyck", "-p", "k=1", "-p", "depth=1", "-p", "variant=paper", "--examples", "100", "--seed", "3", "--out", "")
    assert code == 1
    by_id = {r["claim"]["id"]: r for r in out["results"]}  # type: ignore[index]
    assert by_id["Y2-paper"]["verdict"] == "refuted" and by_id["Y2-paper"]["counterexample"] == "()"


def test_fuzzing_the_fixed_recognizer_reports_no_counterexample_and_never_proved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _fuzz(capsys, "dyck", "--examples", "30", "--max-len", "20", "--ci", "--out", str(tmp_path))
    assert code == 0
    verdicts = {r["verdict"] for r in out["results"]}  # type: ignore[index]
    assert verdicts == {"no counterexample found"}
    logs = sorted(p.name for p in (tmp_path / "dyck").iterdir())
    assert logs == ["Y2.fuzz.json", "Y3.fuzz.json", "Y4.fuzz.json", "Y5.fuzz.json"]
    log = json.loads((tmp_path / "dyck" / "Y2.fuzz.json").read_text(encoding="utf-8"))
    assert log["kind"] == "fuzz" and "this is not a proof" in log["reason"]


def test_claims_that_are_not_about_words_are_listed_as_not_fuzzable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _fuzz(capsys, "gates", "--examples", "5", "--out", "")
    assert code == 0
    assert {r["verdict"] for r in out["results"]} == {"not fuzzable"}  # type: ignore[index]


def test_a_zero_budget_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["fuzz", "dyck", "--examples", "0"])
    assert code == 2 and "--examples 0 must be >= 1" in capsys.readouterr().err
