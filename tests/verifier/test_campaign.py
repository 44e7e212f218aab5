"""The library API for proving, :func:`netproof.verifier.campaign.prove`: the README's example runs
as written, verdicts and records come back as ``netproof prove`` prints them, the claims filter
and the progress callback work, bad input raises :class:`CampaignError` before anything runs, and
``out=None`` writes nothing."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.campaign import CampaignError, Progress, ProofRun, Session, prove
from netproof.verifier.campaign.store import dumps
from netproof.verifier.campaign.usermod import render_template
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.cli import main, messages

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_section(title: str) -> str:
    """The text of the README's ``## title`` section."""
    text = README.read_text(encoding="utf-8")
    found = re.search(
        rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL
    )
    assert found is not None, f"README.md has no section '## {title}'"
    return found.group(1)


def test_the_readme_example_of_proving_from_python_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(
        r"```python\n(.*?)```", readme_section("Proving from Python"), flags=re.DOTALL
    )
    assert len(blocks) == 1
    assert (
        len([line for line in blocks[0].splitlines() if line.strip() and not line.startswith("#")])
        <= 4
    )
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    result = namespace["result"]
    assert isinstance(result, ProofRun) and result.exit_code == 0
    assert list(tmp_path.iterdir()) == []  # no records unless asked for


def test_a_proof_run_returns_verdicts_records_and_summary_as_prove_json_prints_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    result = prove("first", max_n=4)
    assert set(result.verdicts) == {
        ("first", cl.id) for cl in REGISTRY["first"].claims(REGISTRY["first"].parse_params({}))
    }
    assert all(isinstance(v, Proved) for v in result.verdicts.values())
    assert result.exit_code == 0 and result.summary["exit_code"] == 0
    assert result.summary["proved"] == len(result.records) == len(result.results)
    capsys.readouterr()
    assert main(["prove", "first", "--max-n", "4", "--json", "--out", "", "--jobs", "1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    extra = ("every_length", "cached", "record_path")
    assert [{k: v for k, v in r.items() if k not in extra} for r in printed["results"]] == list(
        result.records
    )
    assert [(r["every_length"], r["cached"], r["record_path"]) for r in printed["results"]] == [
        (False, False, None)
    ] * len(result.records)
    assert {k: v for k, v in printed["summary"].items() if k != "seconds"} == {
        k: v for k, v in result.summary.items() if k != "seconds"
    }


def test_a_refuted_claim_gives_exit_code_1_and_its_counterexample() -> None:
    result = prove("parity", params={"variant": "paper"}, claims=["C5-paper"], max_n=4)
    assert result.exit_code == 1 and result.summary["refuted"] == 1
    verdict = result.verdicts["parity", "C5-paper"]
    assert isinstance(verdict, Refuted) and verdict.word == ("0",)
    assert result.records[0]["verdict"] == "refuted" and result.records[0]["counterexample"] == "0"


def test_the_claims_filter_checks_only_the_named_claims_in_declaration_order() -> None:
    result = prove("parity", claims=["C3-count", "C2"], max_n=3)
    assert list(result.verdicts) == [("parity", "C2"), ("parity", "C3-count")]
    assert [r["claim"]["id"] for r in result.records] == ["C2", "C3-count"]
    assert [r.bound for r in result.results] == [None, 3]


def test_the_progress_callback_is_called_once_per_claim_also_from_worker_processes() -> None:
    for jobs in (1, 2):
        heard: list[Progress] = []
        result = prove(["parity", "first"], max_n=3, jobs=jobs, progress=heard.append)
        assert sorted((p.construction, p.claim) for p in heard) == sorted(result.verdicts)
        assert [p.done for p in heard] == list(range(1, len(result.verdicts) + 1))
        assert {p.total for p in heard} == {len(result.verdicts)}
        assert all(
            p.verdict == result.verdicts[p.construction, p.claim] and p.seconds >= 0 for p in heard
        )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"constructions": "nope"}, r"unknown construction 'nope'; known: rumelhart, parity"),
        ({"constructions": "missing.py"}, r"missing\.py: no such file"),
        ({"constructions": "parity", "params": {"nope": "1"}}, r"has no parameter 'nope'"),
        ({"constructions": "parity", "params": {"c": "0.5"}}, r"decimals are refused"),
        (
            {"constructions": "parity", "params": {"c": 0.5}},
            r"params\['c'\]=0\.5: give parameter values as text",
        ),
        ({"params": {"nope": "1"}}, r"no construction has all of the parameters nope"),
        (
            {"constructions": "parity", "claims": ["C99"]},
            r"claims: 'C99' is not a claim of parity; its claims: C4, ",
        ),
        (
            {"constructions": "parity", "method": "fast"},
            r"method='fast' is not a method; choose one of exhaustive, smt, all",
        ),
        ({"constructions": "parity", "max_n": -1}, r"max_n=-1 must be an integer >= 0"),
        ({"constructions": "parity", "timeout": 0}, r"timeout=0 must be > 0"),
        (
            {"constructions": "parity", "jobs": 0},
            r"jobs=0 must be an integer >= 1, or None for every core",
        ),
        ({"constructions": 3}, r"constructions=3: give one name or a list of names"),
        (
            {"constructions": "parity", "executor": "dask"},
            r"executor='dask' is not an executor; choose one of local, ray",
        ),
        (
            {"constructions": "parity", "address": "127.0.0.1:6379"},
            r"address='127.0.0.1:6379' is a Ray cluster's address",
        ),
    ],
)
def test_bad_names_parameters_and_options_raise_a_campaign_error_naming_the_value(
    arguments: dict[str, object], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    heard: list[Progress] = []
    with pytest.raises(CampaignError, match=message):
        prove(**arguments, progress=heard.append, out=str(tmp_path / "records"))  # type: ignore[arg-type]
    assert heard == [] and not (tmp_path / "records").exists()


def test_out_none_writes_nothing_and_out_writes_the_records_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    prove("first", max_n=3)
    assert list(tmp_path.iterdir()) == []
    result = prove("first", max_n=3, out=tmp_path / "records")
    files = sorted((tmp_path / "records" / "first").glob("*.json"))
    assert [f.name for f in files] == sorted(f"{r['claim']['id']}.n3.json" for r in result.records)
    assert {f.read_text(encoding="utf-8") for f in files} == {dumps(r) for r in result.records}


def test_construction_objects_and_user_modules_are_proved_like_builtins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "maj.py").write_text(render_template("my-majority"), encoding="utf-8")
    mine = dataclasses.replace(REGISTRY["first"], name="my-first")
    result = prove(
        ["maj.py", mine, REGISTRY["first"]], max_n=3, jobs=2
    )  # forked workers inherit the object
    assert result.exit_code == 0
    assert {name for name, _claim in result.verdicts} == {"my-majority", "my-first", "first"}
    with pytest.raises(
        CampaignError, match=r"construction 'parity' has the name of a built-in construction"
    ):
        prove(dataclasses.replace(REGISTRY["parity"], title="changed"))


def test_a_session_loads_each_user_module_once_and_knows_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "maj.py").write_text(render_template("my-majority"), encoding="utf-8")
    session = Session()
    first = session.resolve("maj.py")
    assert session.resolve("maj.py:my-majority") == first
    assert session.source("my-majority") == "maj.py" and session.source("parity") is None
    assert "my-majority" in session.registry() and "my-majority" not in Session().registry()
    with pytest.raises(
        CampaignError, match=r"maj\.py defines no construction 'nope'; it defines: my-majority"
    ):
        session.resolve("maj.py:nope")


def test_the_ray_executor_without_ray_installed_fails_in_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sys

    monkeypatch.setitem(
        sys.modules, "ray", None
    )  # `import ray` raises ImportError, as without the extra
    with pytest.raises(
        CampaignError, match=r"executor='ray' needs Ray, .*pip install -e '\.\[ray\]'"
    ):
        prove("parity", claims=["C4"], max_n=2, executor="ray")
    code = main(
        ["prove", "parity", "--max-n", "2", "--executor", "ray", "--out", str(tmp_path), "--quiet"]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert (
        err
        == "netproof: error: executor='ray' needs Ray, which is not installed; install the extra: "
        f"{messages.install_command('ray')}\n"
    )
    assert not list(tmp_path.iterdir())


def test_an_address_without_the_ray_executor_is_a_usage_error_on_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["prove", "parity", "--max-n", "2", "--address", "127.0.0.1:6379", "--out", ""])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "netproof: error: --address 127.0.0.1:6379 is a Ray cluster's address; give it with --executor ray"
    )


def test_a_solver_that_crashed_twice_is_an_internal_error_and_nothing_is_recorded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from netproof.verifier.campaign.errors import InternalError
    from netproof.verifier.smt import prove as dispatch
    from netproof.verifier.smtlib import SolverCrashed

    def crashed(*args: object, **kwargs: object) -> None:
        raise SolverCrashed(
            "a solver call failed twice (the second time: canceled); this is not a verdict"
        )

    monkeypatch.setattr(dispatch, "prove_claim", crashed)
    with pytest.raises(
        InternalError,
        match=r"^SolverCrashed: a solver call failed twice .* \(while checking claim 'C4' of parity\)$",
    ):
        prove("parity", claims=["C4"], method="smt", max_n=3, jobs=1, out=tmp_path)
    assert not list(tmp_path.rglob("*.json"))
