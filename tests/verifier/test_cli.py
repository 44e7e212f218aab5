"""The ``netproof`` command line, run as a user runs it: ``python -m netproof ...`` in a fresh
process, in an empty working directory. Exit status: 0 ok, 1 refuted, 2 usage error, 3 unknown."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.symbolic import fingerprint
from netproof.symbolic.exact import run as run_exact
from netproof.verifier import cli as np_cli
from netproof.verifier.claims import Proved, Refuted, StateValue, Unknown, ValueIs
from netproof.verifier.exhaustive.checker import Job, check

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def netproof(*args: str, cwd: Path) -> Done:
    """``python -m netproof ARGS`` in ``cwd`` (the package installed, as by the README)."""
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-m", "netproof", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> Done:
    code = np_cli.main(list(args))
    cap = capsys.readouterr()
    return Done(code, cap.out, cap.err)


def _pairs_sorted(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert keys == sorted(keys), f"keys are not sorted: {keys}"
    assert len(set(keys)) == len(keys), f"duplicate keys: {keys}"
    return dict(pairs)


def load_sorted(path: Path) -> dict[str, Any]:
    """Parse a record, asserting that every object's keys appear sorted and unique."""
    return json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_pairs_sorted)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- list


def test_list_names_every_construction_with_its_parameters_and_claim_ids(tmp_path: Path) -> None:
    done = netproof("list", cwd=tmp_path)
    assert (done.code, done.err) == (0, "")
    for name, c in REGISTRY.items():
        assert f"{name}  ({c.paper_id})" in done.out
    assert "params: c=ln(2), variant=fixed" in done.out
    parity = REGISTRY["parity"]
    ids = [cl.id for cl in parity.claims(parity.parse_params({}))]
    assert f"claims: {', '.join(ids)}" in done.out


def test_list_json_gives_the_name_id_params_and_claims_of_every_construction(
    tmp_path: Path,
) -> None:
    done = netproof("list", "--json", cwd=tmp_path)
    assert done.code == 0
    rows = json.loads(done.out)["constructions"]
    assert [r["name"] for r in rows] == list(REGISTRY)
    for row in rows:
        c = REGISTRY[row["name"]]
        assert {"name", "id", "params", "claims"} <= set(row)
        assert row["id"] == c.paper_id
        param_names = [p["name"] for p in row["params"]]
        assert param_names[: len(c.params)] == [p.name for p in c.params]
        for p, shown in zip(c.params, row["params"], strict=False):
            assert shown["default"] == p.default
        claims = c.claims(c.parse_params({}))
        assert [cl["id"] for cl in row["claims"]] == [cl.id for cl in claims]
        assert all(cl["statement"] and cl["reference"] for cl in row["claims"])
    rumelhart = next(r for r in rows if r["name"] == "rumelhart")
    assert [p["name"] for p in rumelhart["params"]] == ["n"]


def test_python_dash_m_netproof_and_the_console_script_print_the_same_list(tmp_path: Path) -> None:
    script = shutil.which("netproof")
    if script is None:
        pytest.skip("the netproof console script is not installed on PATH (pip install -e .)")
    env = dict(os.environ)
    console = subprocess.run(
        [script, "list"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    module = netproof("list", cwd=tmp_path)
    assert (console.returncode, console.stdout) == (module.code, module.out)


# --------------------------------------------------------------------------- run


def test_run_parity_on_0110_reports_the_exact_rejecting_logit_as_json(tmp_path: Path) -> None:
    done = netproof("run", "parity", "0110", "--json", cwd=tmp_path)
    assert (done.code, done.err) == (0, "")
    record = json.loads(done.out)
    assert record["construction"] == "parity"
    assert record["params"] == {"c": "ln(2)", "variant": "fixed"}
    assert record["word"] == "0110"
    assert record["tokens"] == ["CLS", "0", "1", "1", "0"]
    assert record["n"] == 5
    assert record["accepted"] is False
    assert record["member"] is False
    # n = 5 is odd, k = 2 is even: s = (1/n)(E⁻¹/Z₁ − E/Z₂) with E = 2, Z₁ = 11/2, Z₂ = 7.
    assert Fraction(record["output"]) == Fraction(1, 5) * (
        Fraction(1, 2) / Fraction(11, 2) - 2 / Fraction(7)
    )
    assert record["output"] == "-3/77"
    assert record["fingerprint"] == fingerprint(parity_transformer())


def test_run_first_with_trace_prints_every_state_label_and_every_dim_by_name(
    tmp_path: Path,
) -> None:
    done = netproof("run", "first", "1000", "--trace", cwd=tmp_path)
    assert (done.code, done.err) == (0, "")
    trace = run_exact(first_transformer(), "1000")
    labels = [s.label for s in trace.states]
    assert labels == ["input", "att1", "first_symbol", "att2", "ffn2"]
    positions = [done.out.index(f"state after {label!r}") for label in labels]
    assert positions == sorted(positions), "states must be printed in order"
    for dim in trace.network.dims:
        assert f"\n  {dim} " in done.out, f"dim {dim!r} is not shown by name"
    # E = 2, n = 5, w₁ = 1: s = E/(E+n−1)·(1 − ½) = 1/6; the CLS query puts weight 2/6 on i = 1.
    assert "att2/look_first  0~1" in done.out and "i=0 weights: 1/6 1/3 1/6 1/6 1/6" in done.out
    assert "logit s = 1/6" in done.out
    assert "accepted (s > 0); FIRST: member" in done.out


@pytest.mark.parametrize(
    ("word", "logit", "verdict"),
    [("0110", "-1/2", "rejected"), ("0111", "1/2", "accepted"), ("", "-1/2", "rejected")],
)
def test_run_rumelhart_builds_the_network_for_the_words_own_length(
    tmp_path: Path, word: str, logit: str, verdict: str
) -> None:
    done = netproof("run", "rumelhart", word, "--json", cwd=tmp_path)
    assert (done.code, done.err) == (0, "")
    record = json.loads(done.out)
    assert record["output"] == logit
    assert record["accepted"] is (verdict == "accepted")
    assert record["tokens"] == list(word)


@pytest.mark.parametrize("backend", ["sympy", "interval"])
def test_run_parity_ln_with_a_backend_that_handles_square_roots_rejects_011(
    tmp_path: Path, backend: str
) -> None:
    done = netproof("run", "parity-ln", "011", "--backend", backend, "--json", cwd=tmp_path)
    assert (done.code, done.err) == (0, "")
    record = json.loads(done.out)
    assert record["backend"] == backend
    assert record["accepted"] is False
    assert record["member"] is False
    assert record["output"]


def test_a_word_can_be_read_from_a_file_with_an_at_sign(tmp_path: Path) -> None:
    (tmp_path / "word.txt").write_text("0110\n", encoding="utf-8")
    from_file = netproof("run", "parity", "@word.txt", "--json", cwd=tmp_path)
    direct = netproof("run", "parity", "0110", "--json", cwd=tmp_path)
    assert from_file.code == 0
    assert json.loads(from_file.out) == json.loads(direct.out)


BAD_INPUT = [
    pytest.param(
        ["run", "parity", "012"],
        "symbol '2' at position 3 is not in the alphabet",
        id="symbol-outside-alphabet",
    ),
    pytest.param(["run", "nope", "01"], "unknown construction 'nope'", id="unknown-construction"),
    pytest.param(
        ["prove", "nope", "--max-n", "1"],
        "unknown construction 'nope'",
        id="prove-unknown-construction",
    ),
    pytest.param(
        ["run", "parity", "01", "-p", "foo=1"], "has no parameter 'foo'", id="unknown-parameter"
    ),
    pytest.param(["run", "parity", "01", "-p", "c"], "must look like key=value", id="malformed-p"),
    pytest.param(
        ["run", "parity", "01", "-p", "c=ln(2)", "-p", "c=ln(3)"],
        "given twice",
        id="parameter-twice",
    ),
    pytest.param(
        ["run", "parity", "01", "-p", "variant=foo"],
        "variant='foo' is not allowed",
        id="variant-foo",
    ),
    pytest.param(["run", "parity", "01", "-p", "c=0"], "c=0 must be > 0", id="c-zero"),
    pytest.param(["run", "parity", "01", "-p", "c=ln(1)"], r"r must be > 1", id="c-ln-1"),
    pytest.param(["run", "parity", "01", "-p", "c=0.5"], "write c as a rational", id="c-decimal"),
    pytest.param(["run", "parity-ln", "01", "-p", "eps=0.1"], "not a decimal", id="eps-decimal"),
    pytest.param(["run", "parity-ce", "01", "-p", "eta=0"], "eta=0 must be > 0", id="eta-zero"),
    pytest.param(["run", "parity-ce", "01", "-p", "eta=1"], "eta", id="eta-not-below-ln2"),
    pytest.param(
        ["prove", "first-ce", "-p", "eta=1", "--max-n", "1", "--out", ""],
        "eta",
        id="prove-eta-not-below-ln2",
    ),
    pytest.param(
        ["run", "parity-ln", "011", "--backend", "exact"],
        "use the sympy interpreter",
        id="exact-backend-on-layer-norm",
    ),
    pytest.param(
        ["run", "parity", "@missing.txt"],
        "cannot read the word from 'missing.txt'",
        id="missing-word-file",
    ),
    pytest.param(["run", "parity"], "word", id="missing-word-argument"),
    pytest.param(
        ["prove", "parity", "--max-n", "-1"],
        "argument --max-n: -1 must be an integer >= 0",
        id="negative-max-n",
    ),
    pytest.param(
        ["prove", "parity", "--method", "magic"], "invalid choice: 'magic'", id="unknown-method"
    ),
    pytest.param(
        ["prove", "parity", "--method", "smt", "--timeout", "0"],
        "argument --timeout: '0' must be a finite number of seconds > 0",
        id="zero-timeout",
    ),
    pytest.param(
        ["recheck", "missing.json"],
        "no proof log or directory at 'missing.json'",
        id="recheck-missing-log",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_bad_input_exits_2_with_one_error_line_and_no_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = netproof(*args, cwd=tmp_path)
    assert "Traceback" not in done.err
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith("netproof: error:")
    assert message in lines[0]
    assert done.code == 2
    assert done.out == ""
    assert list(tmp_path.iterdir()) == [], "a usage error must not write anything"


def test_the_exact_backend_on_a_layer_norm_network_points_to_sympy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = in_process(capsys, "run", "parity-ln", "011", "--backend", "exact")
    assert done.code == 2
    assert "--backend sympy" in done.err
    assert "not rational" in done.err


def test_the_default_backend_takes_exact_rationals_where_it_can_and_sympy_where_square_roots_enter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        json.loads(in_process(capsys, "run", "parity", "011", "--json").out)["backend"] == "exact"
    )
    record = json.loads(in_process(capsys, "run", "parity-ln", "011", "--json").out)
    assert (record["backend"], record["accepted"]) == ("sympy", False)


# --------------------------------------------------------------------------- prove


@pytest.fixture(scope="module")
def proved_parity(tmp_path_factory: pytest.TempPathFactory) -> tuple[Done, Path]:
    cwd = tmp_path_factory.mktemp("prove-parity")
    done = netproof("prove", "parity", "--max-n", "4", "--out", "records", "--json", cwd=cwd)
    return done, cwd / "records"


@pytest.mark.z3
def test_prove_parity_up_to_4_exits_0_and_reports_every_claim_proved(
    proved_parity: tuple[Done, Path],
) -> None:
    done, _ = proved_parity
    assert done.code == 0, done.out + done.err
    report = json.loads(done.out)
    ids = [c.id for c in REGISTRY["parity"].claims(REGISTRY["parity"].parse_params({}))]
    assert [r["claim"]["id"] for r in report["results"]] == ids
    assert {r["verdict"] for r in report["results"]} == {"proved"}
    assert report["summary"] == {
        **report["summary"],
        "proved": len(ids),
        "refuted": 0,
        "unknown": 0,
        "exit_code": 0,
    }


@pytest.mark.z3
def test_prove_writes_one_sorted_versioned_record_per_claim(
    proved_parity: tuple[Done, Path],
) -> None:
    _, out = proved_parity
    c = REGISTRY["parity"]
    claims = c.claims(c.parse_params({}))
    files = sorted((out / "parity").glob("*.json"))
    assert len(files) == len(claims)
    assert [p for p in out.rglob("*") if ".tmp-" in p.name] == []
    seen = set()
    for path in files:
        record = load_sorted(path)
        seen.add(record["claim"]["id"])
        assert record["format_version"] == 2
        assert record["construction"] == "parity"
        assert record["network"]["fingerprint"] == fingerprint(parity_transformer())
        assert record["verdict"] == "proved"
        assert record["params"] == {"c": "ln(2)", "variant": "fixed"}
        if record["claim"]["kind"] in ("BlockIdentity", "Identity"):
            assert record["bound"] is None
        else:
            assert record["bound"] == {"min_len": 0, "max_len": 4}
            assert path.name.endswith(".n4.json")
    assert seen == {cl.id for cl in claims}


@pytest.mark.z3
def test_records_are_byte_identical_when_the_proof_is_run_again(
    proved_parity: tuple[Done, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = proved_parity
    again = in_process(
        capsys, "prove", "parity", "--max-n", "4", "--out", str(tmp_path), "--jobs", "1", "--quiet"
    )
    assert again.code == 0
    names = sorted(p.name for p in (first / "parity").iterdir())
    assert sorted(p.name for p in (tmp_path / "parity").iterdir()) == names
    for name in names:
        assert (tmp_path / "parity" / name).read_bytes() == (
            first / "parity" / name
        ).read_bytes(), name


@pytest.mark.z3
def test_prove_parity_paper_variant_exits_1_with_the_counterexample_0_for_c5_paper(
    tmp_path: Path,
) -> None:
    done = netproof(
        "prove", "parity", "-p", "variant=paper", "--max-n", "4", "--out", "records", cwd=tmp_path
    )
    assert done.code == 1, done.out + done.err
    assert "REFUTED parity C5-paper" in done.out
    assert "counterexample: 0\n" in done.out
    (record_path,) = (tmp_path / "records" / "parity").glob("C5-paper.n4.*.json")
    record = load_sorted(record_path)
    assert record["verdict"] == "refuted"
    assert record["counterexample"] == "0"
    assert record["params"]["variant"] == "paper"
    others = [
        load_sorted(p) for p in (tmp_path / "records" / "parity").iterdir() if p != record_path
    ]
    assert {r["verdict"] for r in others} == {"proved"}


def test_prove_parity_ln_paper_variant_exits_1_refuting_the_mirror_claim_on_the_empty_word(
    tmp_path: Path,
) -> None:
    done = netproof(
        "prove", "parity-ln", "-p", "variant=paper", "--max-n", "3", "--out", "", cwd=tmp_path
    )
    assert done.code == 1, done.out + done.err
    assert "REFUTED parity-ln C7-mirror-paper" in done.out
    assert "counterexample: ε (empty word)" in done.out
    assert list(tmp_path.iterdir()) == []


def test_a_value_claim_the_interval_backend_cannot_decide_is_unknown_not_proved() -> None:
    c = REGISTRY["parity"]
    job = Job(c, c.parse_params({}))
    # True (layer 1 writes 1/n), but 1/3 is not a binary float: intervals cannot prove the equality.
    claim = ValueIs(
        id="1/n-interval",
        statement="layer 1 writes 1/n",
        reference="§2.2",
        quantity=StateValue(after="count", dim="1/n"),
        expected=lambda p: Fraction(1, p.n),
        backend="interval",
        max_len=2,
    )
    verdict = check(job, claim)
    assert isinstance(verdict, Unknown)
    assert "cannot prove equality" in verdict.reason
    # The same claim with the exact backend is proved: the Unknown is the backend's, not the claim's.
    exact = check(job, dataclasses.replace(claim, backend="exact"))
    assert isinstance(exact, Proved)


def test_prove_exits_3_when_a_claim_is_unknown_and_none_refuted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.verifier.exhaustive import checker as np_checker
    from netproof.verifier.smt import prove as np_dispatch

    def undecided(job: Job, claim: Any, **kwargs: Any) -> Unknown:
        return Unknown("exhaustive (interval)", f"{claim.id} undecided on purpose")

    monkeypatch.setattr(np_checker, "check", undecided)
    monkeypatch.setattr(np_dispatch, "check", undecided)  # the prove dispatcher's own name for it
    done = in_process(
        capsys, "prove", "first", "--max-n", "1", "--jobs", "1", "--out", "", "--json"
    )
    assert done.code == 3
    report = json.loads(done.out)
    assert {r["verdict"] for r in report["results"]} == {"unknown"}
    assert [r["reason"] for r in report["results"]] == [
        f"{r['claim']['id']} undecided on purpose" for r in report["results"]
    ]
    assert report["summary"]["exit_code"] == 3


def test_prove_exits_1_when_one_claim_is_refuted_even_if_others_are_unknown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.verifier.exhaustive import checker as np_checker
    from netproof.verifier.smt import prove as np_dispatch

    def mixed(job: Job, claim: Any, **kwargs: Any) -> Refuted | Unknown:
        if claim.id == "recognizes":
            return Refuted("exhaustive (exact)", "wrong on purpose", ("1",))
        return Unknown("exhaustive (exact)", "undecided on purpose")

    monkeypatch.setattr(np_checker, "check", mixed)
    monkeypatch.setattr(np_dispatch, "check", mixed)  # the prove dispatcher's own name for it
    done = in_process(capsys, "prove", "first", "--max-n", "1", "--jobs", "1", "--out", "")
    assert done.code == 1
    assert "REFUTED first recognizes" in done.out
    assert "counterexample: 1" in done.out
    assert "UNKNOWN first" in done.out


def test_a_structural_proof_is_recorded_without_a_word_length_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = in_process(
        capsys,
        "prove",
        "parity-ln",
        "--max-n",
        "2",
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
        "--quiet",
    )
    assert done.code == 0
    mirror = load_sorted(tmp_path / "parity-ln" / "C7-mirror.all.json")
    assert (mirror["verdict"], mirror["method"], mirror["bound"]) == (
        "proved",
        "structural (IR)",
        None,
    )
    recognizes = load_sorted(tmp_path / "parity-ln" / "C7.n2.json")
    assert recognizes["bound"] == {"min_len": 0, "max_len": 2}


def test_a_checker_crash_is_an_internal_error_with_exit_70_never_a_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from netproof.verifier.campaign.errors import REPORT_HINT
    from netproof.verifier.exhaustive import checker as np_checker
    from netproof.verifier.smt import prove as np_dispatch

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(np_checker, "check", crash)
    monkeypatch.setattr(np_dispatch, "check", crash)  # the prove dispatcher's own name for it
    done = in_process(
        capsys, "prove", "first", "--max-n", "1", "--jobs", "1", "--out", str(tmp_path), "--json"
    )
    assert done.code == 70
    assert done.out == ""  # no verdict, no table
    (line,) = done.err.strip().splitlines()
    assert line.startswith(
        "netproof: internal error: RuntimeError: boom (while checking claim 'recognizes' of first)"
    )
    assert line.endswith(f"({REPORT_HINT})") and "http" not in line
    assert not list(tmp_path.rglob("*.json"))  # nothing recorded
