"""The code base passes its own lint, format and type checks, configured in ``pyproject.toml``:
``ruff check``, ``ruff format --check`` and ``mypy`` (strict) on the package ``netproof``.

Each test skips, saying so, where its tool is not installed (both are in the ``test`` extra).
mypy checks the package under its import name: the repository root is the package, so the test
gives mypy a folder in which ``netproof`` links to the checkout (what the strict editable install
of the README does with a folder under ``build/``), and a cache in a temporary directory."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(args)} found problems:\n{done.stdout}{done.stderr}"
    return done.stdout


def test_ruff_finds_no_lint_finding_in_the_repository() -> None:
    _tool("ruff")
    _run(["ruff", "check", "--no-cache", "."], REPO)


def test_every_python_file_is_formatted_as_ruff_format_writes_it() -> None:
    _tool("ruff")
    _run(["ruff", "format", "--check", "--no-cache", "."], REPO)


def test_mypy_finds_no_type_error_in_the_package(tmp_path: Path) -> None:
    _tool("mypy")
    root = tmp_path / "src"
    root.mkdir()
    try:
        (root / "netproof").symlink_to(REPO, target_is_directory=True)
    except OSError as exc:  # e.g. Windows without the right to make links
        pytest.skip(f"cannot link the checkout as a package named netproof: {exc}")
    env = {**os.environ, "MYPYPATH": str(root)}
    out = _run(
        [
            "mypy",
            "-p",
            "netproof",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        tmp_path,
        env,
    )
    assert out.startswith("Success: no issues found"), out


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    after = readme.split("Install and run the tests", 1)[1]
    command = after.split("```sh\n", 1)[1].split("\n```", 1)[0].strip()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == command
