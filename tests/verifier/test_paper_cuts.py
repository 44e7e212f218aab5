"""The paper cuts a new user hit (issue: release quality), each pinned by a test: what a
command prints on success, how a word file lists the empty word, the counts in traces and reprs,
and the messages of C-RASP and of user code that misbehaves."""

from __future__ import annotations

import re
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


LANGUAGES = """def yes(w):
    return "yes"


def boom(w):
    if len(w) == 2:
        raise ValueError("boom")
    return w.count("1") % 2 == 1


def forever(w):
    while True:
        pass
"""


@pytest.fixture
def parity_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lang.py").write_text(LANGUAGES, encoding="utf-8")
    return Path(__file__).parent.parent / "fixtures" / "models" / "parity.pt"


@pytest.mark.torch
def test_a_language_answering_a_non_bool_is_refused_naming_the_word_and_the_value(
    parity_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _main(
        capsys, "check-model", str(parity_model), "--language", "lang.py:yes", "--max-n", "2"
    )
    assert (code, out) == (2, "")
    assert err.startswith(
        "netproof: error: --language lang.py:yes answered 'yes' (str) on the word ε; "
        "a language answers True or False"
    )


@pytest.mark.torch
def test_a_language_that_raises_is_named_with_its_file_line_and_word(
    parity_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _main(
        capsys, "check-model", str(parity_model), "--language", "lang.py:boom", "--max-n", "2"
    )
    assert code == 2
    assert err == (
        "netproof: error: lang.py:7: --language lang.py:boom raised ValueError: boom in "
        "`raise ValueError(\"boom\")` on the word '00'; fix it and run again\n"
    )


@pytest.mark.torch
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_language_that_never_returns_is_stopped_at_its_time_limit_naming_the_word(
    parity_model: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    code, _, err = _main(
        capsys,
        "check-model",
        str(parity_model),
        "--language",
        "lang.py:forever",
        "--max-n",
        "11",
        "--batch",
        "1024",
        "--jobs",
        jobs,
        "--language-timeout",
        "0.2",
    )
    assert code == 2
    # with --jobs 2 the first shard to stop may be another length's first word
    assert re.fullmatch(
        r"netproof: error: --language lang\.py:forever: no answer on the word (ε|'0+') within "
        r"0\.2 s \(--language-timeout SECONDS gives it longer\); a language function must return "
        r"True or False\n",
        err,
    ), err
    assert "Traceback" not in err


@pytest.mark.parametrize("digits", ["0", "15", "1001", "x"])
def test_check_model_refuses_digits_outside_the_valid_range_naming_it(
    capsys: pytest.CaptureFixture[str], digits: str
) -> None:
    with pytest.raises(SystemExit, match="2"):
        cli.main(
            ["check-model", "m.pt", "--language", "parity", "--max-n", "2", "--digits", digits]
        )
    err = capsys.readouterr().err
    assert err.startswith("netproof: error: argument --digits: ") and "16" in err and "1000" in err


@pytest.mark.parametrize(
    "command",
    [
        ("prove", "parity", "--executor", "ray", "--address", "127.0.0.1:1"),
        ("check-model", "m.pt", "--language", "parity", "--max-n", "2", "--executor", "ray"),
    ],
    ids=["prove", "check-model"],
)
def test_a_ray_address_where_nothing_listens_is_one_line_and_exit_2_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    args = [*command, "--out", str(tmp_path / "out")] if command[0] == "prove" else [*command]
    if command[0] == "check-model":
        args += ["--address", "127.0.0.1:1"]
    code, out, err = _main(capsys, *args)
    assert (code, out) == (2, "")
    assert err == (
        "netproof: error: cannot connect to the Ray cluster at '127.0.0.1:1': Connection refused; "
        "start one with `ray start --head` and pass its address (e.g. --address 127.0.0.1:6379), "
        "or leave --address out for a local instance\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_ray_address_that_is_not_host_and_port_is_refused_naming_the_form() -> None:
    from netproof.verifier.campaign.errors import CampaignError
    from netproof.verifier.campaign.executors import probe_address

    with pytest.raises(
        CampaignError, match=r"--address 'localhost' is not a Ray cluster's address"
    ):
        probe_address("localhost")


def test_rays_token_authentication_notice_is_dropped_and_its_other_warnings_kept() -> None:
    import inspect
    import logging

    pytest.importorskip("ray")
    from ray._private.authentication import authentication_token_setup as setup

    from netproof.verifier.campaign.executors import TOKEN_AUTH_NOTICE, quiet_token_auth_notice

    assert TOKEN_AUTH_NOTICE in inspect.getsource(setup)  # Ray still says it, from this logger
    quiet_token_auth_notice()
    quiet_token_auth_notice()  # once is enough: no second filter
    logger = logging.getLogger(setup.__name__)
    seen: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        setup._warn_token_auth_enabled()
        setup._warn_token_auth_disabled()
    finally:
        logger.removeHandler(handler)
    assert [m[:46] for m in seen] == ["Token authentication is disabled for this Ray "]
    assert len(logger.filters) == 1


def _near_boundary() -> object:
    """b - a at the last token, where a 1 adds 10^-17 to b and a 0 takes it away: 1/10 and
    1/10 ± 10^-17 are the same double, so the float64 batches decide no word."""
    from fractions import Fraction

    from netproof.symbolic import Network, classifier, token_embedding

    tenth, tiny = Fraction(1, 10), Fraction(1, 10**17)
    return Network(
        name="near-boundary",
        dims=("a", "b"),
        embedding=token_embedding(
            ("0", "1"), {"0": {"a": tenth, "b": tenth - tiny}, "1": {"a": tenth, "b": tenth + tiny}}
        ),
        layers=(),
        readout=classifier({"b": 1, "a": -1}, position=-1),
    )


@pytest.mark.torch
def test_every_word_sent_to_the_slow_fallback_is_counted_for_the_progress_line() -> None:
    pytest.importorskip("torch")
    from netproof.verifier.claims.languages import Language
    from netproof.verifier.models import check_model

    language = Language(name="ENDS1", alphabet=("0", "1"), contains=lambda w: w[-1:] == ("1",))
    calls: list[tuple[int, int]] = []
    report = check_model(
        _near_boundary(),  # type: ignore[arg-type]
        language,
        min_n=1,
        max_n=3,
        batch=4,
        on_slow=lambda m, sent: calls.append((m, sent)),
    )
    assert report.status == "correct" and report.totals.slow == 14
    assert calls == [(1, 1), (1, 2), *((2, s) for s in range(1, 5)), *((3, s) for s in range(1, 9))]


def test_the_slow_fallbacks_progress_line_comes_every_two_seconds_with_count_and_rate() -> None:
    import io

    from netproof.verifier.cli.check_model import SlowProgress

    now = [0.0]
    out = io.StringIO()
    progress = SlowProgress(50, out=out, clock=lambda: now[0])
    for t in range(6):  # a word a second, seconds 0..5: lines at 2 and 4
        now[0] = float(t)
        progress(7, 10 * (t + 1))
    assert out.getvalue().splitlines() == [
        "netproof: length 7: 30 words sent to the rigorous fallback so far (15.0 words/s at 50 "
        "digits; the float64 batches leave them open)",
        "netproof: length 7: 50 words sent to the rigorous fallback so far (12.5 words/s at 50 "
        "digits; the float64 batches leave them open)",
    ]
    progress(8, 1)  # a new length starts its own count, silently
    assert len(out.getvalue().splitlines()) == 2
