"""The results store (:mod:`netproof.verifier.campaign.store`): records of several methods live
side by side, a weaker verdict never replaces a stronger one, a proof for every length is shown
as such, a rerun reuses the records it finds (``cached``; ``--force`` proves again), and Ctrl-C
keeps every finished record and nothing half-written."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.campaign import prove
from netproof.verifier.campaign.errors import Interrupted
from netproof.verifier.campaign.ledger import build
from netproof.verifier.campaign.store import (
    every_length,
    find_cached,
    kind_of,
    rank,
    read_record,
    record_path,
    recorded_method,
    slot,
    store,
)
from netproof.verifier.campaign.usermod import render_template
from netproof.verifier.claims import Proved, Refuted, Unknown
from netproof.verifier.cli import main
from netproof.verifier.smtlib import LemmaNode, Outcome, SmtQuery

REPO = Path(__file__).resolve().parents[2]


def digests(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, by relative path."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def readme_smt_example() -> list[str]:
    """The README's `netproof prove parity --method smt` line, as arguments."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^netproof (prove parity --method smt)\s*(#.*)?$", text, flags=re.MULTILINE)
    assert found is not None, "README.md has no `netproof prove parity --method smt` example"
    return found.group(1).split()


def test_the_readme_smt_example_after_the_default_proof_leaves_every_record_as_it_was(
    tmp_path: Path,
) -> None:
    proofs = tmp_path / "proofs"
    shutil.copytree(REPO / "proofs" / "parity", proofs / "parity")
    shutil.copytree(REPO / "proofs" / "queries" / "parity", proofs / "queries" / "parity")
    before = digests(proofs)
    assert (
        main([*readme_smt_example(), "--out", str(proofs), "--jobs", "1", "--quiet"]) == 3
    )  # C5, C4-all-c: unsupported
    after = digests(proofs)
    assert {k: after.get(k) for k in before} == before
    new = sorted(k for k in after if k not in before and k.endswith(".json"))
    assert new == [
        f"parity/{c}.smt.json"
        for c in ("C3-1_n.n10", "C3-count.n10", "C3-fig1.n10", "C4-all-c.n8", "C4.n10", "C5.n8")
    ]
    c4 = read_record(str(proofs / "parity" / "C4.n10.smt.json"))
    assert c4 is not None and every_length(c4) and c4["verdict"] == "proved"
    for entry in c4["lemmas"]["children"][0]["queries"]:
        assert (
            entry["file"].startswith("../queries/parity/C4.n10.smt/")
            and (proofs / "parity" / entry["file"]).is_file()
        )
    page = build({"parity": REGISTRY["parity"]}, str(proofs))
    assert (
        "| C4 | " in page
        and "| proved | every n (exhaustive: 0 ≤ \\|w\\| ≤ 10, not rechecked) | smt (z3), compositional |"
        in page  # 2047 words: more than the ledger re-runs
    )
    assert (
        "| C5 | s = " in page
        and "**not rechecked**" in page.split("| C5 | s = ", 1)[1].split("\n")[0]
    )


def test_a_weaker_verdict_never_replaces_a_stronger_record_and_the_other_kind_goes_beside_it(
    tmp_path: Path,
) -> None:
    c = REGISTRY["parity"]
    values = c.parse_params({})
    claim = next(cl for cl in c.claims(values) if cl.id == "C4")
    out = str(tmp_path)
    plain = record_path(out, c, values, claim, 4)
    first = store(
        out,
        c,
        values,
        claim,
        4,
        Outcome(Proved("exhaustive (exact)", 31, "every word with 0 <= |w| <= 4")),
    )
    assert first == type(first)(plain, None)
    text = Path(plain).read_text(encoding="utf-8")
    again = store(out, c, values, claim, 4, Outcome(Unknown("exhaustive (exact)", "timeout")))
    assert again.path == plain and again.kept is not None and again.kept["verdict"] == "proved"
    assert Path(plain).read_text(encoding="utf-8") == text
    # an SMT record goes beside it, under its own name
    other = store(out, c, values, claim, 4, Outcome(Unknown("smt (z3)", "timeout")))
    assert (
        other.path == plain[: -len(".json")] + ".smt.json" == slot(out, c, values, claim, 4, "smt")
    )
    assert Path(plain).read_text(encoding="utf-8") == text
    # an every-length proof is never replaced by a bounded one in its file
    strong = store(
        out,
        c,
        values,
        claim,
        4,
        Outcome(
            Proved(
                "smt (z3), compositional",
                31,
                "every word with 0 <= |w| <= 4, and every longer one: ...",
            ),
            lemmas=LemmaNode(  # every length is read from the theorem's queries, not the detail
                name="C4",
                statement=claim.statement,
                verdict="proved",
                queries=(
                    SmtQuery(
                        name="C4 every n: position classes", smt2="(check-sat)\n", result="unsat"
                    ),
                ),
            ),
        ),
    )
    assert strong.kept is None and strong.path == other.path
    weak = store(
        out, c, values, claim, 4, Outcome(Proved("smt (z3)", 31, "every word with 0 <= |w| <= 4"))
    )
    assert weak.kept is not None and every_length(read_record(other.path) or {})
    assert Path(plain).read_text(encoding="utf-8") == text


def test_a_record_that_says_the_same_is_left_byte_for_byte_as_it_was(tmp_path: Path) -> None:
    c = REGISTRY["parity"]
    values = c.parse_params({})
    claim = next(cl for cl in c.claims(values) if cl.id == "C4")
    out = str(tmp_path)
    store(
        out,
        c,
        values,
        claim,
        4,
        Outcome(Proved("exhaustive (exact)", 31, "every word with 0 <= |w| <= 4")),
    )
    path = Path(record_path(out, c, values, claim, 4))
    path.write_text(
        path.read_text(encoding="utf-8").replace('"version": "', '"version": "older-'),
        encoding="utf-8",
    )
    older = path.read_text(encoding="utf-8")
    assert (
        store(
            out,
            c,
            values,
            claim,
            4,
            Outcome(Proved("exhaustive (exact)", 31, "every word with 0 <= |w| <= 4")),
        ).kept
        is None
    )
    assert path.read_text(encoding="utf-8") == older


def test_ranks_and_every_length_are_read_from_the_records() -> None:
    assert rank({"verdict": "unknown"}) == 0
    assert (
        rank({"verdict": "refuted"})
        == rank({"verdict": "proved", "detail": "every word with 0 <= |w| <= 8"})
        == 1
    )
    every_n = {"name": "C4 every n: position classes"}
    assert (
        rank(
            {
                "verdict": "proved",
                "claim": {"id": "C4"},
                "lemmas": {"name": "C4", "queries": [every_n], "children": []},
            }
        )
        == 2
    )
    # the wording of detail is not evidence: every length is read from the theorem's queries
    assert (
        rank(
            {"verdict": "proved", "detail": "every word with 0 <= |w| <= 48, and every longer one"}
        )
        == 1
    )
    assert every_length(
        {
            "verdict": "proved",
            "claim": {"id": "C"},
            "queries": [{"name": "C every n: initiation"}, {"name": "C every n: safety"}],
        }
    )
    assert not every_length(
        {
            "verdict": "proved",
            "claim": {"id": "C"},
            "queries": [{"name": "C every n: initiation"}, {"name": "n=3"}],
        }
    )
    assert every_length({"verdict": "proved", "bound": None, "method": "structural (IR)"})
    assert not every_length(
        {"verdict": "proved", "bound": None, "method": "smt (z3), all integers"}
    )
    assert not every_length({"verdict": "unknown", "detail": "and every longer one"})


def test_the_method_and_kind_of_a_record_are_read_from_its_method_field() -> None:
    for path in (REPO / "proofs" / "parity").glob("*.json"):
        rec = read_record(str(path))
        assert rec is not None
        expected = (
            "smt"
            if path.name
            in ("C4.n48.json", "C3-count.n48.json", "C3-1_n.n48.json", "C3-fig1.n48.json")
            else "exhaustive"
        )
        assert recorded_method(rec) == kind_of(rec) == expected, path.name
    word = {"claim": {"kind": "Recognizes"}, "verdict": "proved"}
    assert (
        recorded_method({**word, "method": "exhaustive (exact) + smt (z3), compositional"}) == "all"
    )
    assert kind_of({**word, "method": "exhaustive (exact) + smt (z3)"}) == "smt"
    assert (
        recorded_method(
            {
                "claim": {"kind": "SignForAllBases"},
                "method": "exhaustive (symbolic in E) + smt (z3 nlsat) per word",
            }
        )
        == "exhaustive"
    )
    assert (
        recorded_method(
            {
                "claim": {"kind": "BlockIdentity"},
                "verdict": "proved",
                "method": "smt (z3), all integers",
            }
        )
        == "exhaustive"
    )
    assert (
        recorded_method(
            {"claim": {"kind": "TraceProperty"}, "verdict": "unknown", "method": "smt (z3)"}
        )
        == "smt"
    )


def test_a_rerun_reuses_its_records_unless_forced_and_a_cached_refutation_keeps_its_word(
    tmp_path: Path,
) -> None:
    out = tmp_path / "records"
    first = prove(
        "parity", params={"variant": "paper"}, claims=["C5-paper", "C3-count"], max_n=4, out=out
    )
    assert first.summary["cached"] == 0 and [r.cached for r in first.results] == [False, False]
    text = {p.name: p.read_text(encoding="utf-8") for p in (out / "parity").glob("*.json")}
    again = prove(
        "parity", params={"variant": "paper"}, claims=["C5-paper", "C3-count"], max_n=4, out=out
    )
    assert [r.cached for r in again.results] == [True, True] and again.summary["cached"] == 2
    assert (
        again.verdicts == first.verdicts
        and again.records == first.records
        and again.exit_code == first.exit_code == 1
    )
    refuted = again.verdicts["parity", "C5-paper"]
    assert isinstance(refuted, Refuted) and refuted.word == ("0",)
    forced = prove(
        "parity",
        params={"variant": "paper"},
        claims=["C5-paper", "C3-count"],
        max_n=4,
        out=out,
        force=True,
    )
    assert [r.cached for r in forced.results] == [False, False]
    assert {p.name: p.read_text(encoding="utf-8") for p in (out / "parity").glob("*.json")} == text
    # another bound, another method or other parameters are not the same record
    assert [r.cached for r in prove("parity", claims=["C3-count"], max_n=3, out=out).results] == [
        False
    ]
    assert [
        r.cached
        for r in prove("parity", claims=["C3-count"], max_n=4, method="smt", out=out).results
    ] == [False]


def test_a_rerun_with_smt_or_all_reuses_lemma_records_fallbacks_and_proofs_for_every_length(
    tmp_path: Path,
) -> None:
    out = tmp_path / "records"
    claims = ["C2", "C4", "C3-count", "C4-all-c"]
    first = prove("parity", claims=claims, max_n=4, method="smt", out=out)
    assert (
        first.summary["cached"] == 0 and first.summary["proved"] == 3
    )  # C4-all-c: unsupported by smt
    again = prove("parity", claims=claims, max_n=4, method="smt", out=out)
    # C2 is one z3 query over the integers whatever the method; an unknown is never reused
    assert {r.claim.id: r.cached for r in again.results} == {
        "C2": True,
        "C4": True,
        "C3-count": True,
        "C4-all-c": False,
    }
    both = prove("parity", claims=claims, max_n=4, method="all", out=out)
    # the smt method's proofs for every length are stronger than anything --method all writes
    assert {r.claim.id: r.cached for r in both.results} == {
        "C2": True,
        "C4": True,
        "C3-count": True,
        "C4-all-c": False,
    }
    assert both.exit_code == 0  # --method all checks C4-all-c exhaustively (smt does not cover it)
    rerun = prove("parity", claims=claims, max_n=4, method="all", out=out)
    assert all(r.cached for r in rerun.results) and rerun.verdicts == both.verdicts


def test_a_record_of_a_changed_network_is_not_reused(tmp_path: Path) -> None:
    c = REGISTRY["first"]
    values = c.parse_params({})
    claim = next(cl for cl in c.claims(values) if cl.id == "recognizes")
    prove("first", claims=["recognizes"], max_n=3, out=tmp_path)
    assert find_cached(str(tmp_path), c, values, claim, (3,), "exhaustive") is not None
    path = Path(record_path(str(tmp_path), c, values, claim, 3))
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["network"]["fingerprint"] = "0" * 64
    path.write_text(json.dumps(rec), encoding="utf-8")
    assert find_cached(str(tmp_path), c, values, claim, (3,), "exhaustive") is None
    assert [
        r.cached for r in prove("first", claims=["recognizes"], max_n=3, out=tmp_path).results
    ] == [False]


def test_prove_shows_cached_rows_and_every_length_in_the_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "records")
    args = ["prove", "parity", "--method", "smt", "--out", out, "--jobs", "1", "--quiet"]
    assert main([*args, "--json"]) == 3
    first = {r["claim"]["id"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert first["C4"]["every_length"] is True and first["C4"]["cached"] is False
    assert first["C4"]["record_path"] == os.path.join(
        out, "parity", "C4.n10.json"
    )  # a fresh directory: plain names
    assert first["C2"]["every_length"] is False and first["C5"]["verdict"] == "unknown"
    assert main(args) == 3
    table = capsys.readouterr().out
    assert re.search(
        r"^parity\s+C4\s+PROVED\s+every length\s+smt \(z3\), compositional\s+cached\s*$",
        table,
        flags=re.MULTILINE,
    )
    assert re.search(
        r"^parity\s+C5\s+UNKNOWN\s+0≤\|w\|≤8\s+smt \(z3\)\s+\d+\.\ds\s*$", table, flags=re.MULTILINE
    )  # unknowns run again
    assert "(5 cached)" in table  # C4, C3-* and the lemma C2 (one z3 query whatever the method)
    assert main([*args, "--force"]) == 3
    table = capsys.readouterr().out
    assert not re.search(r"\scached\s*$", table, flags=re.MULTILINE) and "cached)" not in table


def test_the_ledger_of_a_user_module_takes_the_strongest_record_of_each_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "maj.py").write_text(render_template("maj"), encoding="utf-8")
    assert main(["ledger", "maj.py", "--proofs", "."]) == 0
    page = capsys.readouterr().out
    assert (
        "## `maj`" in page
        and "no record | — | run `netproof prove maj.py` |" in page
        and "## `parity`" not in page
    )
    assert main(["prove", "maj.py", "--max-n", "4", "--out", "proofs", "--quiet"]) == 0
    assert main(["prove", "maj.py", "--max-n", "6", "--out", "proofs", "--quiet"]) == 0
    assert main(["prove", "maj.py", "--max-n", "5", "--out", "proofs", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ledger", "maj.py"]) == 0
    page = capsys.readouterr().out
    row = next(ln for ln in page.splitlines() if ln.startswith("| recognizes |"))
    # the n = 6 record, the strongest; its 126 words are more than the ledger re-runs, so it is
    # shown as not rechecked, never as proved on its own say-so
    assert "| 1 ≤ \\|w\\| ≤ 6 |" in row and "recognizes.n6.json" in row
    assert "**not rechecked**" in row and "| proved |" not in row


def slow_module(where: Path) -> Path:
    """A user module with a cheap claim (frac, words up to 3) and a claim of a few seconds
    (recognizes, 2^21 words)."""
    text = render_template("slow-maj")
    text = text.replace(
        "            min_len=1,  # the empty word has no position to read\n            max_len=10,",
        "            min_len=1,  # the empty word has no position to read\n            max_len=20,",
    )
    text = text.replace(
        "            min_len=1,\n            max_len=10,",
        "            min_len=1,\n            max_len=3,",
    )
    assert "max_len=20" in text and "max_len=3," in text
    path = where / "slow_maj.py"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_every_finished_record_and_a_rerun_runs_only_the_missing_claims(
    tmp_path: Path, jobs: str
) -> None:
    slow_module(tmp_path)
    out = tmp_path / "records" / "slow-maj"
    command = [
        sys.executable,
        "-m",
        "netproof",
        "prove",
        "slow_maj.py",
        "--out",
        "records",
        "--jobs",
        jobs,
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    # SIGINT at its default in the child: a shell that runs the suite in the background hands its
    # children SIGINT ignored, and Python then installs no Ctrl-C handler at all
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not (out.is_dir() and any(p.suffix == ".json" for p in out.iterdir())):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no record was written in 120 s"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr and "EOFError" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        "netproof: interrupted: 1 of 2 claims done; their records are in records/, run the same command again to finish the rest"
    )
    files = sorted(p.name for p in out.iterdir())
    assert files == ["frac.n3.json"]  # the finished claim, whole; no temporary file left
    assert read_record(str(out / "frac.n3.json"))["verdict"] == "proved"  # type: ignore[index]
    rerun = subprocess.run(
        [*command, "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    results = {r["claim"]["id"]: r["cached"] for r in json.loads(rerun.stdout)["results"]}
    assert results == {"recognizes": False, "frac": True}
    assert sorted(p.name for p in out.iterdir()) == ["frac.n3.json", "recognizes.n20.json"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_exception_in_a_users_claim_code_is_a_usage_error_naming_the_file_line_and_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    monkeypatch.chdir(tmp_path)
    text = render_template("broken")
    good = '    return Fraction(p.word.count("1"), p.n)\n'
    assert good in text
    bad = '    return Fraction(p.word.count("1"), p.n * int(p.word != ("1", "1")))\n'  # ZeroDivisionError on 11
    (tmp_path / "broken.py").write_text(text.replace(good, bad), encoding="utf-8")
    line = text.splitlines().index(good.rstrip("\n")) + 1
    code = main(
        ["prove", "broken.py", "--max-n", "4", "--out", "records", "--jobs", jobs, "--quiet"]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip() == (
        f"netproof: error: broken.py:{line}: claim 'frac' of broken: your code (ones_over_n) raised "
        'ZeroDivisionError: Fraction(2, 0) on the word 11 in `return Fraction(p.word.count("1"), p.n * int(p.word != ("1", "1")))`; '
        "fix it (a claim's code must answer for every word of its bound)"
    )
    assert not list(
        (tmp_path / "records").rglob("frac.*.json")
    )  # no record of the claim that raised


def test_a_crash_inside_netproof_itself_is_an_internal_error_and_no_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import functools
    import operator

    from netproof.verifier.campaign.errors import InternalError
    from netproof.verifier.exhaustive import checker

    # a checker that crashes without any frame of user code (a built-in called wrongly)
    monkeypatch.setattr(checker, "check", functools.partial(operator.truediv, 1, 0))
    with pytest.raises(
        InternalError, match=r"^TypeError: .* \(while checking claim 'C4' of parity\)$"
    ):
        prove("parity", claims=["C4"], max_n=2, running=lambda r: None, out=tmp_path)
    assert not list(tmp_path.rglob("*.json"))


def test_the_ledger_of_a_network_file_lists_its_claims_with_their_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["export", "first", "--format", "json"]) == 0
    (tmp_path / "net.json").write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["prove", "net.json", "--max-n", "3", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["ledger", "net.json"]) == 0
    page = capsys.readouterr().out
    assert "## `net.json`" in page and "## `first`" not in page
    assert (
        "| recognizes | accepts exactly the words of FIRST (words over {0,1} whose first symbol is 1) | §2.3 | proved | 0 ≤ \\|w\\| ≤ 3 | exhaustive (exact) |"
        in page
    )


def test_an_interrupt_arriving_while_a_record_is_written_counts_that_claim_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the signal comes the moment the first record is on disk, before the run has counted it:
    # the count given to the user must still match the records kept
    import netproof.verifier.campaign.proving as proving

    if not hasattr(signal, "pthread_sigmask"):
        pytest.skip("signals cannot be held on this platform")
    path = tmp_path / "slow_maj.py"
    path.write_text(render_template("slow-maj"), encoding="utf-8")
    real_store = proving.store

    def store_then_interrupt(*args: object, **kwargs: object) -> object:
        stored = real_store(*args, **kwargs)  # type: ignore[arg-type]
        os.kill(os.getpid(), signal.SIGINT)
        return stored

    monkeypatch.setattr(proving, "store", store_then_interrupt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(Interrupted, match="interrupted: 1 of 2 claims done"):
            prove([str(path)], out=str(tmp_path / "records"), jobs=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    kept = sorted(p.name for p in (tmp_path / "records" / "slow-maj").iterdir())
    assert len(kept) == 1


def test_a_stop_asked_for_whose_interrupt_was_swallowed_still_stops_the_run_after_that_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGTERM's handler asks the run to stop and raises; should the raise land where Python
    # ignores exceptions (a finalizer), the run still stops at the end of the claim
    import netproof.verifier.campaign.proving as proving

    path = tmp_path / "slow_maj.py"
    path.write_text(render_template("slow-maj"), encoding="utf-8")
    real_store = proving.store

    def store_then_ask(*args: object, **kwargs: object) -> object:
        stored = real_store(*args, **kwargs)  # type: ignore[arg-type]
        proving.request_stop()  # the interrupt itself lost
        return stored

    monkeypatch.setattr(proving, "store", store_then_ask)
    with pytest.raises(Interrupted, match="interrupted: 1 of 2 claims done"):
        prove([str(path)], out=str(tmp_path / "records"), jobs=1)
    # the next run starts afresh: the stop asked of the last one does not stop it
    monkeypatch.setattr(proving, "store", real_store)
    again = prove([str(path)], out=str(tmp_path / "records"), jobs=1)
    assert sorted(r.cached for r in again.results) == [False, True]
