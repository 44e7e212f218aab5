"""Proof logs (format 2): every query's .smt2 file with its sha256, a strict reader, freshness
against a rebuild without solving, atomic writes, and ``netproof recheck`` with cvc5."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.constructions import GROUPS, REGISTRY
from netproof.verifier import cli as np_cli
from netproof.verifier import smtlib as smt
from netproof.verifier.smt.prooflog import (
    ProofLogError,
    _all_entries,
    check_fresh,
    read_log,
    write_atomic,
)

pytestmark = pytest.mark.z3

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``prove first first-flawed-logn gates --method all --max-n 5`` written once for the module
    (first-flawed-logn declares no lemmas, so its smt proofs are one query per length)."""
    out = tmp_path_factory.mktemp("proofs")
    code = np_cli.main(
        [
            "prove",
            "first",
            "first-flawed-logn",
            "gates",
            "--method",
            "all",
            "--max-n",
            "5",
            "--out",
            str(out),
            "--jobs",
            "1",
            "--quiet",
        ]
    )
    assert code == 0
    return out


def copy_of(logs: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "proofs"
    shutil.copytree(logs, dest)
    return dest


def rec_file(root: Path, folder: str, stem: str) -> Path:
    """The one record ``<root>/<folder>/<stem>[.<method tag>].json`` (the store may tag a record's
    name with its method)."""
    found = sorted((root / folder).glob(f"{stem}.json")) + sorted(
        (root / folder).glob(f"{stem}.*-*.json")
    )
    assert len(found) == 1, found
    return found[0]


def query_file(record: Path, name: str) -> Path:
    """The ``.smt2`` file of query ``name`` of a record."""
    entry = next(
        e for e in _all_entries(json.loads(record.read_text(encoding="utf-8"))) if e["name"] == name
    )
    return (record.parent / entry["file"]).resolve()


def edit(path: Path, change: str, to: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert change in text
    path.write_text(text.replace(change, to, 1), encoding="utf-8")


# --------------------------------------------------------------------------- writing


def test_an_smt_proof_logs_one_smt2_file_per_length_with_its_sha256(logs: Path) -> None:
    log = read_log(str(rec_file(logs, "first-flawed-logn", "recognizes.n5")))
    rec = log.record
    assert rec["format_version"] == 2
    assert rec["method"] == "exhaustive (exact) + smt (z3)"
    assert rec["solver"]["name"] == "z3" and rec["lemmas"] is None
    assert [(q["name"], q["result"]) for q in rec["queries"]] == [
        (f"n={m}", "unsat") for m in range(6)
    ]
    assert [q["file"] for q in rec["queries"]] == [
        f"../queries/first-flawed-logn/{Path(log.path).stem}/n_{m}.smt2" for m in range(6)
    ]
    for q in rec["queries"]:
        assert log.smt2[q["sha256"]].startswith(
            "(set-logic QF_LIRA)\n" if q["name"] != "n=0" else "(set-logic QF_"
        )


def test_a_block_lemma_proved_by_z3_is_logged_with_its_query(logs: Path) -> None:
    rec = read_log(str(rec_file(logs, "gates", "Y1-AND.all"))).record
    assert (rec["verdict"], rec["bound"]) == ("proved", None)
    assert [(q["name"], q["result"], q["file"]) for q in rec["queries"]] == [
        ("Y1-AND", "unsat", "../queries/gates/Y1-AND.all/Y1-AND.smt2")
    ]


def test_exhaustive_only_claims_have_no_queries_and_no_solver(logs: Path) -> None:
    rec = read_log(str(rec_file(logs, "first", "C6.n5"))).record
    assert (rec["queries"], rec["solver"], rec["lemmas"]) == ([], None, None)


def test_the_logs_are_byte_identical_when_the_proof_runs_again(logs: Path, tmp_path: Path) -> None:
    code = np_cli.main(
        [
            "prove",
            "first",
            "first-flawed-logn",
            "gates",
            "--method",
            "all",
            "--max-n",
            "5",
            "--out",
            str(tmp_path),
            "--jobs",
            "1",
            "--quiet",
        ]
    )
    assert code == 0
    first = sorted(p.relative_to(logs) for p in logs.rglob("*") if p.is_file())
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == first
    for rel in first:
        assert (tmp_path / rel).read_bytes() == (logs / rel).read_bytes(), rel


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "log.json"
    target.write_text("old\n", encoding="utf-8")

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), "new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["log.json"]


# --------------------------------------------------------------------------- freshness


def test_every_log_is_fresh_against_a_rebuild_without_solving(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lemma_solve = smt.solve

    def lemmas_only(solver: object, *, name: str, **kwargs: object) -> object:
        if " n=" in name or " every n" in name:
            raise AssertionError(f"the freshness check must not solve the theorem query {name!r}")
        return lemma_solve(solver, name=name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(
        smt, "solve", lemmas_only
    )  # first's block lemma is proved again, as in a compositional record
    checked = [check_fresh(str(p), REGISTRY) for p in sorted(logs.rglob("*.json"))]
    assert (
        len(checked) == 3 + 2 + 7
    )  # first: recognizes, all-c, C6; first-flawed-logn: recognizes, C11-flawed; gates: 7 lemmas
    assert (
        sum(len(log.queries) for log in checked) == 2 + 6 + 6 + 7
    )  # first: its lemma and the position-classes query


def test_a_committed_version_1_record_is_still_read() -> None:
    log = read_log(str(REPO / "proofs" / "parity" / "C4.n10.json"))
    assert log.record["format_version"] in (1, 2)


# --------------------------------------------------------------------------- the strict reader


@pytest.mark.parametrize(
    ("change", "to", "message"),
    [
        ('"format_version": 2', '"format_version": 9', "format_version=9 is not supported"),
        (
            '"verdict": "proved"',
            '"verdict": "proved",\n  "verdict": "proved"',
            "duplicate key 'verdict'",
        ),
        ('"lemmas": null', '"lemmas": null,\n  "comment": "hi"', "unknown field.*comment"),
        ('"solver": {', '"solverx": {', "unknown field.*solverx"),
        (
            '"fingerprint": "',
            '"fingerprint": "00',
            "network fingerprint 00.* does not match the rebuilt first-flawed-logn network",
        ),
        (
            '"result": "unsat"',
            '"result": "proved"',
            "has result='proved'; expected unsat, sat or unknown",
        ),
    ],
    ids=["version", "duplicate-key", "unknown-field", "renamed-field", "fingerprint", "result"],
)
def test_the_strict_reader_rejects_a_tampered_log(
    logs: Path, tmp_path: Path, change: str, to: str, message: str
) -> None:
    root = copy_of(logs, tmp_path)
    path = rec_file(root, "first-flawed-logn", "recognizes.n5")
    edit(path, change, to)
    with pytest.raises(ProofLogError, match=message):
        check_fresh(str(path), REGISTRY)


def test_a_changed_smt2_file_is_rejected_by_its_hash(logs: Path, tmp_path: Path) -> None:
    root = copy_of(logs, tmp_path)
    query = query_file(rec_file(root, "first-flawed-logn", "recognizes.n5"), "n=3")
    query.write_text(
        query.read_text(encoding="utf-8").replace("(check-sat)", "(assert false)\n(check-sat)"),
        encoding="utf-8",
    )
    with pytest.raises(
        ProofLogError,
        match=r"query 'n=3': .*n_3.smt2 has sha256 .* the file was changed after the proof",
    ):
        read_log(str(rec_file(root, "first-flawed-logn", "recognizes.n5")))


def test_a_missing_smt2_file_is_rejected(logs: Path, tmp_path: Path) -> None:
    root = copy_of(logs, tmp_path)
    query_file(rec_file(root, "gates", "Y1-OR.all"), "Y1-OR").unlink()
    with pytest.raises(ProofLogError, match=r"query 'Y1-OR': its SMT-LIB2 file .* is missing"):
        read_log(str(rec_file(root, "gates", "Y1-OR.all")))


def _dyck_y2_copy(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proofs"
    shutil.copytree(REPO / "proofs" / "dyck", root / "dyck")
    shutil.copytree(
        REPO / "proofs" / "queries" / "dyck" / "Y2.n16", root / "queries" / "dyck" / "Y2.n16"
    )
    return root / "dyck" / "Y2.n16.json", root / "queries" / "dyck" / "Y2.n16"


def _rewrite(path: Path, query: Path, text: str) -> None:
    import hashlib

    old = hashlib.sha256(query.read_bytes()).hexdigest()
    query.write_text(text, encoding="utf-8")
    edit(path, old, hashlib.sha256(text.encode()).hexdigest())


def test_a_compositional_theorem_query_that_rebuilds_to_other_text_is_stale(tmp_path: Path) -> None:
    path, queries = _dyck_y2_copy(tmp_path)
    query = queries / "lemma_Y2_Y2_every_n__consecution.smt2"
    _rewrite(
        path,
        query,
        query.read_text(encoding="utf-8").replace("(check-sat)", "(assert true)\n(check-sat)"),
    )
    with pytest.raises(
        ProofLogError,
        match=r"theorem 'Y2' query 'Y2 every n: consecution' rebuilds to sha256 .* the query is not the claim's",
    ):
        check_fresh(str(path), REGISTRY)


def test_an_invariant_changed_in_the_initiation_query_alone_makes_the_other_certificate_queries_stale(
    tmp_path: Path,
) -> None:
    from netproof.constructions import REGISTRY
    from netproof.verifier.claims import Recognizes
    from netproof.verifier.smt.compositional import Diagram, certificate_queries, prove_lemma
    from netproof.verifier.smt.compositional import LemmaResult as _LemmaResult
    from netproof.verifier.smt.compositional.invariants import (
        recorded_invariant as _recorded_invariant,
    )

    path, queries = _dyck_y2_copy(tmp_path)
    query = queries / "lemma_Y2_Y2_every_n__initiation.smt2"
    invariant = _recorded_invariant(query.read_text(encoding="utf-8"))
    assert isinstance(invariant, Diagram)
    c = REGISTRY["dyck"]
    values = c.parse_params({})
    claim = next(x for x in c.claims(values) if isinstance(x, Recognizes))
    net = c.network(values)
    assert c.lemmas is not None
    results = [_LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in c.lemmas(values)]
    # The invariant and one more state variable: still a decision diagram.
    stronger = Diagram(
        (*invariant.nodes, (invariant.nodes[-1][0], 0, invariant.root)), len(invariant.nodes) + 2
    )
    changed = certificate_queries(net, claim, results, stronger)
    _rewrite(path, query, changed[0][1])
    with pytest.raises(
        ProofLogError, match="theorem 'Y2' query 'Y2 every n: consecution' rebuilds to sha256"
    ):
        check_fresh(str(path), REGISTRY)


def test_a_query_that_rebuilds_to_other_text_is_stale(logs: Path, tmp_path: Path) -> None:
    root = copy_of(logs, tmp_path)
    query = query_file(rec_file(root, "first-flawed-logn", "recognizes.n5"), "n=2")
    text = query.read_text(encoding="utf-8") + "; changed\n"
    query.write_text(text, encoding="utf-8")
    import hashlib

    path = rec_file(root, "first-flawed-logn", "recognizes.n5")
    rec = json.loads(path.read_text(encoding="utf-8"))
    old = rec["queries"][2]["sha256"]
    edit(path, old, hashlib.sha256(text.encode()).hexdigest())
    with pytest.raises(
        ProofLogError,
        match=r"query 'n=2' rebuilds to sha256 .* the query is not the claim's \(or the encoding or the network changed\)",
    ):
        check_fresh(str(path), REGISTRY)


# --------------------------------------------------------------------------- recheck


def test_recheck_with_cvc5_agrees_with_every_log(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = netproof(capsys, "recheck", str(logs), "--solver", "cvc5", "--json")
    assert done.code == 0, done.out + done.err
    report = json.loads(done.out)
    assert report["summary"] == {
        "agree": 12,
        "disagree": 0,
        "undecided": 0,
        "rejected": 0,
        "exit_code": 0,
    }
    answers = [
        (q["recorded"], q["answer"])
        for log in report["logs"]
        if log["solver"] == "cvc5"
        for q in log["queries"]
    ]
    assert answers == [("unsat", "unsat")] * (2 + 6 + 6 + 7)


def test_recheck_rejects_an_answer_that_does_not_give_the_verdict(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_of(logs, tmp_path)
    path = rec_file(root, "gates", "Y1-NOT.all")
    edit(path, '"result": "unsat"', '"result": "sat"')
    done = netproof(capsys, "recheck", str(path))
    assert done.code == 2
    assert (
        "REJECTED" in done.out
        and "query 'Y1-NOT' has result sat, but a proved verdict needs unsat there" in done.out
    )


def test_recheck_reports_a_disagreement_and_exits_1(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_of(logs, tmp_path)
    path = rec_file(root, "gates", "Y1-NOT.all")
    rec = json.loads(path.read_text(encoding="utf-8"))
    del rec["checked"]
    rec.update(verdict="refuted", detail="NOT is not computed", counterexample=None, values={})
    rec["queries"][0]["result"] = "sat"
    path.write_text(json.dumps(rec), encoding="utf-8")
    done = netproof(capsys, "recheck", str(path))
    assert done.code == 1
    assert (
        "DISAGREE" in done.out and "query 'Y1-NOT': the log says sat, cvc5 says unsat" in done.out
    )


def test_recheck_of_a_rejected_log_exits_2(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_of(logs, tmp_path)
    path = rec_file(root, "gates", "Y1-NOT.all")
    edit(path, '"lemmas": null', '"lemmas": null,\n  "extra": 1')
    done = netproof(capsys, "recheck", str(path))
    assert done.code == 2
    assert "REJECTED" in done.out and "unknown field(s) extra" in done.out


def test_a_compositional_proof_logs_its_lemma_tree_and_cvc5_agrees_with_every_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = netproof(
        capsys,
        "prove",
        "dyck",
        "-p",
        "k=1",
        "-p",
        "depth=1",
        "--method",
        "smt",
        "--max-n",
        "10",
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
        "--quiet",
    )
    assert done.code == 0, done.out  # Y3–Y5 are proved for every length too (their statable forms)
    for trace_claim in ("Y3", "Y4", "Y5"):
        traced = check_fresh(
            str(rec_file(tmp_path, "dyck", f"{trace_claim}.n10.47f2b3f2")), REGISTRY
        )
        assert (
            traced.record["verdict"] == "proved"
            and "and every longer one" in traced.record["detail"]
        )
    path = rec_file(tmp_path, "dyck", "Y2.n10.47f2b3f2")
    log = check_fresh(str(path), REGISTRY)
    rec = log.record
    assert (rec["verdict"], rec["method"], rec["queries"]) == (
        "proved",
        "smt (z3), compositional",
        [],
    )
    tree = rec["lemmas"]
    assert tree["name"] == "Y2" and tree["verdict"] == "proved"
    assert {child["verdict"] for child in tree["children"]} == {"proved"}
    steps = ("layer 1 complete", "layer 1 sound", "output")  # the claim's induction over layers
    assert [q["name"] for q in tree["queries"]] == [
        f"Y2 every n: {step}: {c}"
        for step in steps
        for c in ("initiation", "consecution", "safety")
    ]
    again = netproof(capsys, "recheck", str(path))
    assert again.code == 0, again.out
    assert f"AGREE     {path}  ({len(log.queries)} queries: every answer as recorded)" in again.out


# Dyck(k, D) records at the paper's sizes whose rebuild takes 4-22 s each (about 70 s of CPU
# in all): their freshness is checked in the slow run. Dyck(128, 3) stays in the default run, so
# the type symmetry's rebuild is covered there, as Dyck(8, 10)'s rounds are by the smaller ones.
PAPER_SIZES = frozenset({("128", "5"), ("128", "10"), ("128", "15"), ("8", "10")})


def _paper_size(path: str) -> bool:
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    params = rec.get("params", {})
    return rec.get("construction") == "dyck" and (
        (str(params.get("k")), str(params.get("depth"))) in PAPER_SIZES
    )


def _check_every_log_fresh(monkeypatch: pytest.MonkeyPatch, paper_sizes: bool) -> None:
    """Nothing is solved but a compositional proof's block lemmas (small queries, proved again
    because which of them hold shapes the theorem's encoding)."""
    lemma_solve = smt.solve
    lemmas_solved: list[str] = []

    def lemmas_only(solver: object, *, name: str, **kwargs: object) -> object:
        if " n=" in name:
            raise AssertionError(f"the freshness check must not solve the theorem query {name!r}")
        lemmas_solved.append(name)
        return lemma_solve(solver, name=name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(smt, "solve", lemmas_only)
    from netproof.verifier.campaign.ledger import _memoized
    from netproof.verifier.smt.prooflog import find_logs

    paths = find_logs([str(REPO / "proofs")])
    assert len(paths) > 100
    # the opt-in groups' records (synth-*): in the slow run, tests/constructions/test_synth_records.py
    opted = {name for group in GROUPS.values() for name in group}
    # each construction's network and claims built once per parameters, as the ledger does (the
    # TM simulation has dozens of records: rebuilding them per record took most of this test)
    registry = {name: _memoized(c) for name, c in REGISTRY.items()}
    chosen = [
        p for p in paths if Path(p).parent.name not in opted and _paper_size(p) == paper_sizes
    ]
    assert len(chosen) >= (7 if paper_sizes else 100)
    for path in chosen:
        check_fresh(path, registry)
    assert lemmas_solved  # compositional records were rebuilt (dyck Y2, parity C4; k = 128)


def test_every_committed_proof_log_is_fresh_without_solving_a_theorem_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The records under proofs/ still describe the networks the constructions build today, and
    their queries still rebuild to the recorded bytes (regenerate them with `netproof prove`);
    Dyck's larger paper-size records in the slow test below."""
    _check_every_log_fresh(monkeypatch, paper_sizes=False)


@pytest.mark.slow
def test_every_committed_proof_log_of_dycks_larger_paper_sizes_is_fresh_without_solving_a_theorem_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dyck(128, D) for D = 5, 10, 15 and Dyck(8, 10): as above (about 70 s of CPU)."""
    _check_every_log_fresh(monkeypatch, paper_sizes=True)


def test_a_recorded_invariant_that_is_not_readable_smt_lib2_makes_the_log_stale_with_one_clear_line(
    tmp_path: Path,
) -> None:
    import hashlib

    path, queries = _dyck_y2_copy(tmp_path)
    query = queries / "lemma_Y2_Y2_every_n__initiation.smt2"
    text = query.read_text(encoding="utf-8")
    _rewrite(
        path, query, text[: text.rindex("(assert")] + "(assert (not (= a!1 true)))\n(check-sat)\n"
    )
    assert hashlib.sha256(query.read_bytes()).hexdigest() in path.read_text(
        encoding="utf-8"
    )  # the hash was updated
    with pytest.raises(
        ProofLogError,
        match=r"the recorded initiation query is not SMT-LIB2 that z3 reads \(.*unknown constant a!1.*\); run the proof again",
    ):
        check_fresh(str(path), REGISTRY)


def test_writing_a_record_again_removes_the_query_files_it_no_longer_names(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proofs = copy_of(logs, tmp_path)
    folder = query_file(rec_file(proofs, "first-flawed-logn", "recognizes.n5"), "n=0").parent
    before = sorted(p.name for p in folder.iterdir())
    (folder / "lemma_recognizes_n_99.smt2").write_text(
        "(check-sat)\n", encoding="utf-8"
    )  # left by an earlier proof
    done = netproof(
        capsys,
        "prove",
        "first-flawed-logn",
        "--method",
        "smt",
        "--max-n",
        "5",
        "--out",
        str(proofs),
        "--jobs",
        "1",
        "--quiet",
    )
    assert done.code == 0  # recognizes and C11-flawed, both SMT claims
    assert sorted(p.name for p in folder.iterdir()) == before
    check_fresh(str(rec_file(proofs, "first-flawed-logn", "recognizes.n5")), REGISTRY)


def test_parity_proved_for_every_length_is_logged_with_its_one_query_and_cvc5_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = netproof(
        capsys,
        "prove",
        "parity",
        "--method",
        "smt",
        "--max-n",
        "6",
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
        "--quiet",
    )
    assert done.code == 3  # C4-all-c and C5 are not SMT claims
    path = rec_file(tmp_path, "parity", "C4.n6")
    log = check_fresh(str(path), REGISTRY)
    tree = log.record["lemmas"]
    assert (log.record["verdict"], tree["verdict"]) == ("proved", "proved")
    assert [q["name"] for q in tree["queries"]] == ["C4 every n: position classes"]
    assert "and every longer one" in log.record["detail"]
    again = netproof(capsys, "recheck", str(path), "--solver", "cvc5")
    assert again.code == 0, again.out
    assert f"AGREE     {path}  (2 queries: every answer as recorded)" in again.out
    # The query is rebuilt from the network: an edited one (a class of word positions every third, not every second) is stale.
    query = query_file(path, "C4 every n: position classes")
    _rewrite(path, query, query.read_text(encoding="utf-8").replace("(+ L 1) 2)", "(+ L 1) 3)", 1))
    with pytest.raises(
        ProofLogError, match=r"theorem 'C4' query 'C4 every n: position classes' rebuilds to sha256"
    ):
        check_fresh(str(path), REGISTRY)


def test_every_query_file_under_proofs_is_named_by_a_record() -> None:
    from netproof.verifier.smt.prooflog import _all_entries, find_logs

    named = set()
    for path in find_logs([str(REPO / "proofs")]):
        for entry in _all_entries(read_log(path).record):
            named.add((Path(path).parent / entry["file"]).resolve())
    files = {p.resolve() for p in (REPO / "proofs" / "queries").rglob("*.smt2")}
    assert sorted(str(p) for p in files - named) == []
