"""Bounds shown as they are: a program = language fact decided for every length (two automata
compared) is a proof for every length in the record and the table; one that checked the words of
a bound shows that range, never "no words"; the ``prove`` table shows the strongest record of a
claim under ``--out`` (the one the ledger and the report show); a record that claims a structural
proof for a fact that does not decide every length is rejected by the strict reader."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.rasp.claims import program_construction
from netproof.verifier.campaign import prove
from netproof.verifier.campaign.store import every_length
from netproof.verifier.claims import Language
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.cli.prove import bound_text
from netproof.verifier.smt.prooflog import ProofLogError, verify_record

REPO = Path(__file__).resolve().parents[2]

_a, _b = B.token("a"), B.token("b")
_seen_a = B.rightmost("past", score=_a.at_j, value=B.TRUE).named("seen_a")
HAS_A = B.Program("has_a", ("a", "b"), output=_a | _seen_a)


def _with_a(w: tuple[str, ...]) -> bool:
    return "a" in w


def test_an_automata_comparison_is_a_proof_for_every_length_in_record_and_table() -> None:
    run = prove("brasp-no-aa", claims=["program=language"])
    (r,) = run.results
    assert r.verdict.method == "structural (exact, every length)"
    assert r.record["bound"] is None
    assert every_length(r.record)
    assert bound_text(r) == "every length"


def test_a_fact_checked_on_the_words_of_a_bound_shows_that_range_not_no_words() -> None:
    c = program_construction(
        "has-a", HAS_A, Language(name="HAS_A", alphabet=("a", "b"), contains=_with_a), max_len=5
    )
    run = prove(c, claims=["program=language"])
    (r,) = run.results
    assert r.verdict.method == "exact rational arithmetic"
    assert not every_length(r.record)
    assert bound_text(r) == "0≤|w|≤5"


def test_a_forged_structural_method_on_a_bounded_fact_is_rejected(tmp_path: Path) -> None:
    c = program_construction(
        "has-a", HAS_A, Language(name="HAS_A", alphabet=("a", "b"), contains=_with_a), max_len=5
    )
    run = prove(c, claims=["program=language"], out=tmp_path)
    (r,) = run.results
    assert r.path is not None
    rec = json.loads(Path(r.path).read_text())
    rec["method"] = "structural (exact, every length)"
    Path(r.path).write_text(json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    with pytest.raises(ProofLogError, match="claims a structural proof for every length"):
        verify_record(r.path, {"has-a": c})


def test_the_prove_table_shows_a_stronger_record_under_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    committed = REPO / "proofs" / "crasp-ambm" / "network_program.n8.smt.json"
    assert every_length(json.loads(committed.read_text()))
    (tmp_path / "crasp-ambm").mkdir()
    shutil.copy(committed, tmp_path / "crasp-ambm" / committed.name)
    exhaustive = prove("crasp-ambm", claims=["network=program"], max_n=4, out=tmp_path)
    (r,) = exhaustive.results
    assert not r.every_length  # this run's own proof is bounded
    assert r.every_length_shown and r.strongest is not None
    assert bound_text(r) == "every length"
    from netproof.verifier.cli.prove import print_table

    print_table(exhaustive.results)
    out = capsys.readouterr().out
    assert "every length" in out and "smt (z3), compositional" in out
    assert "STRONGER RECORD crasp-ambm network=program" in out


def test_a_stronger_record_that_is_bounded_is_named_with_its_bound_never_as_every_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    committed = REPO / "proofs" / "brasp-ab-star" / "operations.n8.json"
    assert not every_length(json.loads(committed.read_text()))
    (tmp_path / "brasp-ab-star").mkdir()
    shutil.copy(committed, tmp_path / "brasp-ab-star" / committed.name)
    # the claim without its compiled program: the smt method then has no route for it (the
    # operation-wise correspondence would prove it for every length), so the bounded record is
    # the stronger one
    base = REGISTRY["brasp-ab-star"]

    def claims(values: Any) -> tuple[Any, ...]:
        return tuple(
            dataclasses.replace(x, compiled=None) if x.id == "operations" else x
            for x in base.claims(values)
        )

    monkeypatch.setitem(REGISTRY, "brasp-ab-star", dataclasses.replace(base, claims=claims))
    run = prove("brasp-ab-star", claims=["operations"], method="smt", out=tmp_path)
    (r,) = run.results
    assert r.strongest is not None and not r.every_length_shown
    from netproof.verifier.cli.prove import print_table

    print_table(run.results)
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "STRONGER RECORD brasp-ab-star operations" in ln)
    assert "proves it for 1 ≤ |w| ≤ 8" in line and "every length" not in line


def test_max_n_reaches_a_fact_about_the_words_of_a_bound_and_its_record_names_it(
    tmp_path: Path,
) -> None:
    c = program_construction(
        "has-a", HAS_A, Language(name="HAS_A", alphabet=("a", "b"), contains=_with_a), max_len=5
    )
    (r,) = prove(c, claims=["program=language"], max_n=3, out=tmp_path).results
    assert bound_text(r) == "0≤|w|≤3" and r.verdict.checked == 15  # type: ignore[union-attr]
    assert r.record["bound"] == {"min_len": 0, "max_len": 3}
    assert r.path is not None and r.path.endswith("program_language.n3.json")
    # a record of the words up to 3 is not a record of the words up to 6: checked again
    (again,) = prove(c, claims=["program=language"], max_n=6, out=tmp_path).results
    assert not again.cached and again.verdict.checked == 127  # type: ignore[union-attr]
    assert verify_record(again.path, {"has-a": c}).rerun  # type: ignore[arg-type]


def test_a_counting_programs_fact_moves_its_statement_with_max_n() -> None:
    (r,) = prove("crasp-dyck1", claims=["program=language"], max_n=4).results
    assert "every word up to length 4 (exhaustive)" in r.claim.statement
    assert r.verdict.checked == 31  # type: ignore[union-attr]
