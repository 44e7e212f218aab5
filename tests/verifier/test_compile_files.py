"""``netproof prove FILE.json`` and ``run FILE.json`` of a network compiled from a user module's
program (``netproof compile prog.py:NAME``): the file records the module (its path relative to
the file's folder) and the fingerprint of the network the module built, so the program's claims
are checked on the network as the file holds it, and a moved module or a changed program is
refused in one line (exit 2)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.symbolic import Network, classifier
from netproof.symbolic.netfile import dumps, load_file


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


PROG = """
from netproof.verifier.claims.rasp import crasp as C

MAJORITY = C.Program("majority", ("a", "b"), output=C.count(C.token("a")) > C.count(C.token("b")))
MAX_LEN = 4
PROGRAMS = {"my-majority": (MAJORITY, lambda w: w.count("a") > w.count("b"))}
"""


def test_prove_of_a_compiled_user_program_file_proves_network_equals_program_and_program_equals_language(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    (here / "out").mkdir()
    assert netproof(capsys, "compile", "prog.py:my-majority", "--out", "out/m.json").code == 0
    _net, extra = load_file(str(here / "out" / "m.json"))
    assert extra is not None and extra["module"] == "../prog.py"
    done = netproof(capsys, "prove", "out/m.json", "--jobs", "1", "--json", "--out", "")
    verdicts = {r["claim"]["id"]: r["verdict"] for r in json.loads(done.out)["results"]}
    assert done.code == 0 and verdicts == {
        "network=program": "proved",
        "program=language": "proved",
        "operations": "proved",
    }
    done = netproof(capsys, "run", "out/m.json", "aab", "--json")
    record = json.loads(done.out)
    assert (done.code, record["construction"], record["accepted"], record["member"]) == (
        0,
        "my-majority",
        True,
        True,
    )


def test_an_edited_network_in_the_file_is_refuted_against_the_module_s_program(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    assert netproof(capsys, "compile", "prog.py:my-majority", "--out", "m.json").code == 0
    net, extra = load_file(str(here / "m.json"))
    assert isinstance(net, Network)
    wrong = dataclasses.replace(
        net, readout=classifier("output", position=-1, bias=Fraction(-3, 2))
    )
    (here / "m.json").write_text(dumps(wrong, extra=extra), encoding="utf-8")
    done = netproof(capsys, "prove", "m.json", "--jobs", "1", "--json", "--out", "")
    verdicts = {r["claim"]["id"]: r["verdict"] for r in json.loads(done.out)["results"]}
    assert (
        done.code == 1
        and verdicts["network=program"] == "refuted"
        and verdicts["program=language"] == "proved"
    )


def test_a_file_whose_module_is_gone_or_changed_is_refused_with_exit_2(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    assert netproof(capsys, "compile", "prog.py:my-majority", "--out", "m.json").code == 0
    (here / "prog.py").write_text(
        PROG.replace('> C.count(C.token("b"))', '>= C.count(C.token("b"))'), encoding="utf-8"
    )
    done = netproof(capsys, "prove", "m.json", "--quiet", "--out", "")
    assert (
        done.code == 2
        and "my-majority in prog.py no longer builds the network this file was exported from"
        in done.err
    )
    (here / "prog.py").unlink()
    done = netproof(capsys, "run", "m.json", "ab")
    assert (
        done.code == 2
        and "m.json was exported from the module prog.py, which is not there" in done.err
    )
