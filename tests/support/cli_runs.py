"""Running ``netproof`` in-process from a test: its exit status and what it printed, shared by
the CLI test files (on ``sys.path`` through ``tests/conftest.py``, as ``weight_mutants``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from netproof.verifier import cli

__all__ = ["Done", "netproof"]


@dataclass(frozen=True)
class Done:
    """A finished command: its exit status, its stdout and its stderr."""

    code: int
    out: str
    err: str


def netproof(capsys: pytest.CaptureFixture[str], *args: str) -> Done:
    """``netproof ARGS`` in this process (``cli.main``); an argparse error's ``SystemExit`` is
    taken as its exit status, as the shell would see it."""
    capsys.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    cap = capsys.readouterr()
    return Done(code, cap.out, cap.err)
