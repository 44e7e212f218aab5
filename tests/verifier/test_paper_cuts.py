"""The paper cuts a new user hit (issue: release quality), each pinned by a test: what a
command prints on success, how a word file lists the empty word, the counts in traces and reprs,
and the messages of C-RASP and of user code that misbehaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from netproof.verifier import cli


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_export_to_a_file_says_in_one_line_what_it_wrote_where_and_how_big(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "parity.json"
    code, stdout, err = _main(capsys, "export", "parity", "--out", str(out))
    assert code == 0 and stdout == ""
    size = out.stat().st_size
    assert err == (
        f"wrote {out}: parity as a network file (2 layers, 3 heads, 9 dims; {size:,} bytes)\n"
    )


def test_export_to_stdout_writes_only_the_network_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, err = _main(capsys, "export", "parity")
    assert code == 0 and stdout.startswith("{") and err == ""


@pytest.mark.torch
def test_a_state_dict_export_says_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "dyck.pt"
    code, stdout, err = _main(capsys, "export", "dyck", "--format", "state_dict", "--out", str(out))
    assert code == 0 and stdout == ""
    assert err == (
        f"wrote {out}: dyck as a float64 state dict (3 layers, 5 heads, 17 dims; "
        f"{out.stat().st_size:,} bytes)\n"
    )


@pytest.mark.torch
def test_import_to_a_file_says_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    model = Path(__file__).parent.parent / "fixtures" / "models" / "dyck12.pt"
    out = tmp_path / "dyck12.json"
    code, stdout, err = _main(capsys, "import", str(model), "--out", str(out))
    assert code == 0 and stdout == ""
    assert err.startswith(f"wrote {out}: {model} imported as a network file (2 layers, 4 heads")
    assert err.endswith(f"; {out.stat().st_size:,} bytes)\n") and err.count("\n") == 1


def test_compile_to_a_file_says_what_it_wrote_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "maj.json"
    code, _, err = _main(capsys, "compile", "crasp-majority", "--out", str(out))
    assert (
        code == 0 and err == f"wrote {out}: crasp-majority compiled to 2 layers, 3 heads, 8 dims\n"
    )


def test_run_gives_the_words_length_apart_from_the_special_tokens_and_the_positions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _main(capsys, "run", "brasp-contains-ab", "bbab")
    assert code == 0
    assert (
        "word: bbab (4 symbols)   tokens: BOS b b a b EOS (2 special)   n = 6 positions"
        in out.splitlines()
    )
    _, empty, _ = _main(capsys, "run", "parity", "")
    assert "word: ε (0 symbols)   tokens: CLS (1 special)   n = 1 position" in empty.splitlines()


@pytest.mark.parametrize("status", [0, 3])
@pytest.mark.parametrize(
    "command", [("prove", "--json"), ("run", "0110"), ("list",)], ids=["prove", "run", "list"]
)
def test_a_user_build_that_raises_system_exit_is_a_usage_error_naming_the_file_line_and_function(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
    status: int,
) -> None:
    from netproof.verifier.campaign.usermod import render_template

    monkeypatch.chdir(tmp_path)
    text = render_template("my-majority").replace(
        '    # The embedding: dim "is1"',
        f'    raise SystemExit({status})\n    # The embedding: dim "is1"',
        1,
    )
    (tmp_path / "bad.py").write_text(text, encoding="utf-8")
    line = text.splitlines().index(f"    raise SystemExit({status})") + 1
    args = [command[0], "bad.py", *command[1:]]
    if command[0] == "prove":
        args += ["--out", str(tmp_path / "out")]
    code, out, err = _main(capsys, *args)
    assert (code, out) == (2, "")
    assert err == (
        f"netproof: error: bad.py:{line}: your code (build) raised SystemExit: {status} in "
        f"`raise SystemExit({status})`; fix it and run again\n"
    )
    assert not (tmp_path / "out").exists()


def test_system_exit_at_a_user_modules_top_level_is_a_usage_error_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("import sys\n\nsys.exit(0)\n", encoding="utf-8")
    code, out, err = _main(capsys, "list", "bad.py")
    assert (code, out) == (2, "")
    assert err.startswith("netproof: error: bad.py:3: your code (<module>) raised SystemExit: 0")
