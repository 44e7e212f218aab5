"""The command line's basics: ``--version``, shell completion, "did you mean" for a mistyped
command or construction, install hints that fit the installation, user errors without Python
class names, upper limits on the sizes a run takes, and a user builder's own exception reported
as the user's error (exit 2), never as netproof's crash (exit 70)."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.verifier import cli
from netproof.verifier.campaign.usermod import render_template
from netproof.verifier.cli import messages
from netproof.verifier.cli.completion import completion_script

REPO = Path(__file__).resolve().parents[2]


def test_version_prints_the_installed_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    done = netproof(capsys, "--version")
    assert (done.code, done.out) == (0, f"netproof {metadata.version('netproof')}\n")


def test_version_falls_back_to_the_checkouts_pyproject_when_netproof_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert messages.version() == "0.2.0"


def test_a_mistyped_command_exits_2_naming_it_and_the_closest_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "rn", "parity", "01")
    assert done.code == 2
    assert "invalid choice: 'rn'; did you mean 'run'?" in done.err


def test_a_mistyped_construction_exits_2_naming_it_and_the_closest_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "run", "parityy", "01")
    assert done.code == 2
    assert done.err.startswith(
        "netproof: error: unknown construction 'parityy'; did you mean 'parity'? known: "
    )


def test_a_mistyped_option_value_gets_the_closest_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "run", "parity", "01", "--backend", "sympi")
    assert done.code == 2 and "invalid choice: 'sympi'; did you mean 'sympy'?" in done.err


@pytest.fixture(scope="module")
def bash_script() -> str:
    return completion_script(cli.build_parser(), "bash", ["parity", "parity-ln", "dyck"])


def _complete(script: str, *words: str) -> list[str]:
    """What the bash completion offers for the command line ``words`` (the last one being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    program = f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _netproof; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_completes_commands_construction_names_options_and_choices(
    bash_script: str,
) -> None:
    assert _complete(bash_script, "netproof", "pr") == ["prove", "precision"]
    assert _complete(bash_script, "netproof", "run", "par") == ["parity", "parity-ln"]
    assert _complete(bash_script, "netproof", "prove", "--meth") == ["--method"]
    assert _complete(bash_script, "netproof", "run", "parity", "01", "--backend", "s") == ["sympy"]
    assert _complete(bash_script, "netproof", "completion", "") == ["bash", "zsh"]
    assert _complete(bash_script, "netproof", "new", "par") == []  # new names a new construction


def test_the_completion_command_prints_a_script_with_every_builtin_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "completion", "zsh")
    assert done.code == 0
    assert done.out.startswith("#compdef netproof\n") and "compdef _netproof netproof" in done.out
    assert (
        " dyck-gen " in done.out
        and "'run --backend') choices='auto exact sympy interval torch'" in done.out
    )
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n"], input=done.out, text=True, check=True)


class _Dist:
    def __init__(self, direct: dict[str, object] | None) -> None:
        self.direct = direct

    def read_text(self, name: str) -> str | None:
        return None if self.direct is None else json.dumps(self.direct)


WHEEL = "file:///srv/dist/netproof-0.2.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("direct", "prefix", "expected"),
    [
        (
            {"dir_info": {"editable": True}, "url": "file:///work/src/netproof"},
            "/venv",
            "pip install -e '/work/src/netproof[torch]'",
        ),
        (
            {"archive_info": {}, "url": WHEEL},
            "/venv",
            "pip install '/srv/dist/netproof-0.2.0-py3-none-any.whl[torch]'",
        ),
        (
            {"dir_info": {}, "url": "file:///work/src/netproof"},
            "/venv",
            "pip install '/work/src/netproof[torch]'",
        ),
        (
            {"archive_info": {}, "url": WHEEL},
            "/home/u/.local/pipx/venvs/netproof",
            "pipx install --force '/srv/dist/netproof-0.2.0-py3-none-any.whl[torch]'",
        ),
        (None, "/venv", "pip install 'netproof-0.2.0-py3-none-any.whl[torch]'"),
    ],
    ids=["editable", "wheel", "folder", "pipx", "unrecorded"],
)
def test_install_hints_fit_how_netproof_was_installed_and_never_name_a_package_index(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    direct: dict[str, object] | None,
    prefix: str,
    expected: str,
) -> None:
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(direct))
    monkeypatch.setattr(messages, "version", lambda: "0.2.0")
    monkeypatch.setattr(messages, "_ROOT", tmp_path)  # an installed package: no pyproject.toml
    monkeypatch.setattr(messages.sys, "prefix", prefix)
    assert messages.install_command("torch") == expected


def test_install_hint_in_a_checkout_beside_metadata_without_a_source_is_the_editable_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`python -m netproof` in a checkout whose folder holds a built `netproof.egg-info` (no
    direct_url.json): the checkout's install, not a wheel's."""
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(None))
    monkeypatch.chdir(REPO)
    assert messages.install_command("ray") == "pip install -e '.[ray]'"


def test_install_hint_from_inside_an_editable_checkout_is_a_relative_editable_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        metadata,
        "distribution",
        lambda name: _Dist({"dir_info": {"editable": True}, "url": REPO.as_uri()}),
    )
    monkeypatch.chdir(REPO)
    assert messages.install_command("plot") == "pip install -e '.[plot]'"


def test_a_user_message_drops_the_class_name_and_fits_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(messages, "install_command", lambda extra: f"HINT[{extra}]")
    text = messages.user_message(
        "MissingExtraError: run needs torch; install the extra: pip install -e '.[torch]'"
    )
    assert text == "run needs torch; install the extra: HINT[torch]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["precision", "first", "--max-n", "5000"],
            "5,000 is over the limit 4,096: the exact reference costs n²",
        ),
        (
            ["plot", "cross-entropy", "--out", "f.png", "--lengths", "10", "5000"],
            "5,000 is over the limit 4,096: float attention",
        ),
        (
            ["plot", "cross-entropy", "--out", "f.png", "--strings", "100001"],
            "100,001 is over the limit 100,000",
        ),
        (
            ["plot", "cross-entropy", "--out", "f.png", "--lengths", "2048"],
            "--lengths up to 2,048 with --strings 1,000 is 2.5 times",
        ),
        (
            ["run", "dyck-gen", "(", "--length", str(2**53 + 1)],
            "is over the limit 9,007,199,254,740,992: float64 holds",
        ),
        (
            ["run", "stack-rnn", "()", "-p", "scale=1000001"],
            "scale=1000001 is over the limit scale <= 1,000,000",
        ),
        (
            ["run", "baby-ntm", "()", "-p", "scale=1000001"],
            "scale=1000001 is over the limit scale <= 1,000,000",
        ),
    ],
    ids=[
        "precision-max-n",
        "plot-lengths",
        "plot-strings",
        "plot-work",
        "run-length",
        "stack-rnn-scale",
        "baby-ntm-scale",
    ],
)
def test_sizes_over_their_limit_exit_2_saying_why(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    done = netproof(capsys, *args)
    assert done.code == 2 and message in done.err and len(done.err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_user_builder_raising_a_type_error_is_the_users_error_naming_the_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = render_template("my-majority")
    for old, new in [
        (
            "from netproof.verifier.claims import (",
            "from netproof.verifier.claims import Param\nfrom netproof.verifier.claims import (",
        ),
        ("params=(),", "params=(Param(name='width', default='1', parse=int, help='w'),),"),
        (
            "build=lambda values: build(),",
            "build=lambda values: build() if values['width'] == 1 else build() + values['width'],",
        ),
    ]:
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "wide.py").write_text(text, encoding="utf-8")
    for command in (
        ["run", "wide.py", "01"],
        ["prove", "wide.py", "--out", ""],
        ["export", "wide.py"],
    ):
        done = netproof(capsys, *command, "-p", "width=2")
        assert done.code == 2, (command, done.err)
        assert (
            done.err.startswith("netproof: error: wide.py:")
            and "your code (<lambda>) raised TypeError: unsupported operand" in done.err
        )
