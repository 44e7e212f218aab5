"""`netproof export` and running a network file like a built-in construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netproof.verifier import cli


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_an_exported_dyck_network_runs_like_the_built_in_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dyck22.json"
    code, _, _ = _main(
        capsys,
        "export",
        "dyck",
        "-p",
        "k=2",
        "-p",
        "depth=2",
        "--format",
        "json",
        "--out",
        str(out),
    )
    assert code == 0
    for word in ("([])", "([)]", ""):
        _, built_in, _ = _main(capsys, "run", "dyck", word, "-p", "k=2", "-p", "depth=2", "--json")
        _, from_file, _ = _main(capsys, "run", str(out), word, "--json")
        a, b = json.loads(built_in), json.loads(from_file)
        assert (b["accepted"], b["member"], b["output"], b["fingerprint"]) == (
            a["accepted"],
            a["member"],
            a["output"],
            a["fingerprint"],
        )
        assert b["construction"] == "dyck" and b["source"] == str(out)


def test_export_writes_the_claims_and_parameters_into_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, text, _ = _main(capsys, "export", "dyck-gen", "-p", "reading=G2")
    record = json.loads(text)
    assert code == 0 and record["format"] == "netproof-network" and record["format_version"] == 1
    assert record["extra"]["params"]["reading"] == "G2"
    assert [c["id"] for c in record["extra"]["claims"]][:2] == ["Y6", "Y7"]


def test_a_generator_file_reports_the_next_symbols(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gen.json"
    assert _main(capsys, "export", "dyck-gen", "-p", "depth=3", "--out", str(out))[0] == 0
    code, text, _ = _main(capsys, "run", str(out), "([", "--json")
    assert code == 0 and (json.loads(text)["next"], json.loads(text)["end"]) == (
        ["(", "[", "]"],
        False,
    )


def test_a_per_length_construction_needs_n_to_export(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(capsys, "export", "rumelhart")
    assert code == 2 and "give --n N" in err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('"format_version": 1', '"format_version": 9'), "format_version"),
        (lambda t: t.replace('"dims": [', '"dimz": [', 1), "dimz"),
        (
            lambda t: t.replace('"index_base": 1', '"index_base": 1.0', 1),
            "index_base: expected an integer",
        ),
    ],
)
def test_a_malformed_network_file_gets_one_error_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, message: str
) -> None:
    good = tmp_path / "good.json"
    assert _main(capsys, "export", "dyck", "--out", str(good))[0] == 0
    bad = tmp_path / "bad.json"
    bad.write_text(edit(good.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    code, out, err = _main(capsys, "run", str(bad), "()")
    assert (code, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_parameters_are_refused_for_a_network_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    assert _main(capsys, "export", "dyck", "--out", str(good))[0] == 0
    code, _, err = _main(capsys, "run", str(good), "()", "-p", "k=3")
    assert code == 2 and "drop -p" in err


def test_export_and_ledger_write_to_a_bare_file_name_in_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _main(capsys, "export", "dyck", "--out", "dyck.json")[0] == 0
    assert (tmp_path / "dyck.json").exists()


def test_a_state_dict_export_needs_an_output_file_and_loads_with_torch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    code, _, err = _main(capsys, "export", "dyck", "--format", "state_dict")
    assert code == 2 and "give --out FILE.pt" in err
    out = tmp_path / "dyck.pt"
    assert _main(capsys, "export", "dyck", "--format", "state_dict", "--out", str(out))[0] == 0
    saved = torch.load(out, weights_only=True)
    assert (
        saved["format"] == "netproof-state-dict" and "readout.logit.weight" in saved["state_dict"]
    )


def test_an_exported_network_file_proves_its_claims_like_the_built_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, paper = tmp_path / "d11.json", tmp_path / "p11.json"
    assert _main(capsys, "export", "dyck", "-p", "k=1", "-p", "depth=1", "--out", str(good))[0] == 0
    assert (
        _main(
            capsys,
            "export",
            "dyck",
            "-p",
            "k=1",
            "-p",
            "depth=1",
            "-p",
            "variant=paper",
            "--out",
            str(paper),
        )[0]
        == 0
    )
    code, out, _ = _main(capsys, "prove", str(good), "--out", "", "--json", "--max-n", "6")
    assert code == 0 and json.loads(out)["summary"]["proved"] == 4
    code, out, _ = _main(capsys, "prove", str(paper), "--out", "", "--json", "--max-n", "6")
    results = {r["claim"]["id"]: r for r in json.loads(out)["results"]}
    assert code == 1 and results["Y2-paper"]["counterexample"] == "()"


def test_proving_a_network_file_without_a_known_construction_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.constructions.yao2021 import dyck_recognizer
    from netproof.symbolic.netfile import dumps

    bare = tmp_path / "bare.json"
    bare.write_text(dumps(dyck_recognizer(k=1, depth=1)), encoding="utf-8")
    code, _, err = _main(capsys, "prove", str(bare))
    assert code == 2 and "names no known construction" in err
