"""`netproof fuzz`: hypothesis search over a construction's claims from the command line, in one or several
worker processes (`--jobs`), with progress on stderr and a table as wide as its names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from netproof.verifier import cli


def _fuzz(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object], str]:
    code = cli.main(["fuzz", *args, "--json", "--no-database"])
    cap = capsys.readouterr()
    return code, json.loads(cap.out) if cap.out else {}, cap.err


def test_fuzzing_the_printed_dyck_recognizer_finds_and_shrinks_its_shortest_counterexample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _fuzz(
        capsys,
        "dyck",
        "-p",
        "k=1",
        "-p",
        "depth=1",
        "-p",
        "variant=paper",
        "--examples",
        "100",
        "--seed",
        "3",
        "--out",
        "",
    )
    assert code == 1
    by_id = {r["claim"]["id"]: r for r in out["results"]}  # type: ignore[index]
    assert by_id["Y2-paper"]["verdict"] == "refuted" and by_id["Y2-paper"]["counterexample"] == "()"


def test_fuzzing_the_fixed_recognizer_reports_no_counterexample_and_never_proved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _fuzz(
        capsys, "dyck", "--examples", "30", "--max-len", "20", "--ci", "--out", str(tmp_path)
    )
    assert code == 0
    verdicts = {r["verdict"] for r in out["results"]}  # type: ignore[index]
    assert verdicts == {"no counterexample found"}
    logs = sorted(p.name for p in (tmp_path / "dyck").iterdir())
    assert logs == ["Y2.fuzz.json", "Y3.fuzz.json", "Y4.fuzz.json", "Y5.fuzz.json"]
    log = json.loads((tmp_path / "dyck" / "Y2.fuzz.json").read_text(encoding="utf-8"))
    assert log["kind"] == "fuzz" and "this is not a proof" in log["reason"]


def test_claims_that_are_not_about_words_are_listed_as_not_fuzzable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _fuzz(capsys, "gates", "--examples", "5", "--out", "")
    assert code == 0
    assert {r["verdict"] for r in out["results"]} == {"not fuzzable"}  # type: ignore[index]


def test_a_zero_budget_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["fuzz", "dyck", "--examples", "0"])
    assert code == 2 and "--examples 0 must be >= 1" in capsys.readouterr().err


PAPER = (
    "dyck",
    "-p",
    "k=1",
    "-p",
    "depth=1",
    "-p",
    "variant=paper",
    "--examples",
    "40",
    "--max-len",
    "20",
    "--seed",
    "3",
    "--out",
    "",
)


def test_two_jobs_give_the_same_verdicts_as_one_and_the_same_shortest_counterexample_every_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code1, one, _ = _fuzz(capsys, *PAPER, "--jobs", "1")
    code2, two, _ = _fuzz(capsys, *PAPER, "--jobs", "2")
    assert code1 == code2 == 1
    verdicts = [{r["claim"]["id"]: r["verdict"] for r in out["results"]} for out in (one, two)]  # type: ignore[index]
    assert verdicts[0] == verdicts[1] and verdicts[0]["Y2-paper"] == "refuted"
    assert [r.get("counterexample") for r in two["results"]] == [
        r.get("counterexample") for r in one["results"]
    ]  # type: ignore[index]
    assert any("in 2 shards (seed 3, seed " in r.get("reason", "") for r in two["results"])  # type: ignore[index]
    _code, again, _ = _fuzz(capsys, *PAPER, "--jobs", "2")
    assert (
        again == two
    )  # a seeded run in shards is reproduced exactly, whichever shard finishes first


def test_the_examples_tried_of_each_claim_are_reported_up_to_the_total_also_from_worker_processes() -> (
    None
):
    from netproof.verifier.campaign.fuzzrun import Trying, fuzz_claims
    from netproof.verifier.campaign.sources import Session

    selected = Session().select(["dyck"], {})
    for jobs in (1, 2):
        heard: list[Trying] = []
        run = fuzz_claims(
            selected,
            {},
            examples=20,
            max_len=12,
            derandomize=True,
            use_database=False,
            jobs=jobs,
            trying=heard.append,
        )
        assert run.exit_code == 0
        for r in run.results:
            ticks = [(t.done, t.total) for t in heard if t.claim == r.claim.id]
            assert ticks[0] == (0, 20) and ticks[-1] == (20, 20), (jobs, r.claim.id, ticks)
            assert [d for d, _t in ticks] == sorted(d for d, _t in ticks)


def test_fuzz_without_a_terminal_prints_a_line_per_claim_and_quiet_prints_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["fuzz", *PAPER, "--no-database", "--jobs", "2"]) == 1
    cap = capsys.readouterr()
    lines = cap.err.splitlines()
    assert sorted(line.split(":")[0] for line in lines) == ["dyck Y2-paper", "dyck Y3", "dyck Y5"]
    assert all(
        re.fullmatch(r"dyck \S+: (refuted|no counterexample found) \(\d+\.\ds\)", line)
        for line in lines
    ), lines
    assert cli.main(["fuzz", *PAPER, "--no-database", "--quiet"]) == 1
    quiet = capsys.readouterr()
    assert quiet.err == "" and "1 refuted, 2 with no counterexample found" in quiet.out


def test_a_long_construction_or_claim_name_keeps_the_table_aligned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import dataclasses
    from types import SimpleNamespace

    from netproof.verifier.campaign.fuzzrun import fuzz_claims
    from netproof.verifier.campaign.sources import Session
    from netproof.verifier.cli.fuzz import print_table

    run = fuzz_claims(
        Session().select(["gates"], {}), {}, examples=1, max_len=4, use_database=False
    )
    short, other = run.results[:2]
    long = dataclasses.replace(
        other,
        construction=SimpleNamespace(name="a-long-name-123"),
        claim=SimpleNamespace(id="a-claim-id-that-is-long-too"),
    )
    print_table([short, long])
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 2 and len(rows[0]) == len(rows[1])
    for word in ("not fuzzable",):
        assert rows[0].index(word) == rows[1].index(word)
    assert rows[1].startswith("a-long-name-123 a-claim-id-that-is-long-too ")
    assert rows[0].startswith(f"{short.construction.name:<15} {short.claim.id:<27} not fuzzable ")


def test_zero_jobs_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["fuzz", "dyck", "--jobs", "0"])
    assert code == 2 and "--jobs 0 must be >= 1" in capsys.readouterr().err
