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
