"""The claims ledger (docs/CLAIMS.md) is built from the committed proof records."""

from __future__ import annotations

from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier import cli
from netproof.verifier.campaign.ledger import VerificationCache, build
from netproof.verifier.campaign.store import record
from netproof.verifier.claims import Unknown
from netproof.verifier.smtlib import Outcome

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_claims_ledger_is_up_to_date_with_the_proof_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # built as its command builds it, from the repository's root: the commands the page
    # suggests (`netproof recheck proofs/...`) name the records relatively
    monkeypatch.chdir(REPO)
    fresh = build(REGISTRY, "proofs")
    committed = (REPO / "docs" / "CLAIMS.md").read_text(encoding="utf-8")
    assert committed == fresh, "docs/CLAIMS.md is stale: run `netproof ledger --out docs/CLAIMS.md`"


def test_the_ledger_lists_every_claim_of_every_construction_and_every_printed_claim() -> None:
    page = build(REGISTRY, str(REPO / "proofs"))
    for c in REGISTRY.values():
        assert f"## `{c.name}`" in page
        for claim in c.claims(c.parse_params({})):
            assert f"| {claim.id} |" in page, (c.name, claim.id)
    assert "| `dyck` | Y2-paper |" in page and "`()`" in page


def test_a_claim_without_a_record_is_listed_with_the_command_that_makes_one(tmp_path: Path) -> None:
    page = build({"dyck": REGISTRY["dyck"]}, str(tmp_path))
    assert "| Y2 |" in page and "no record" in page and "`netproof prove dyck`" in page


def test_ledger_refuses_a_missing_proofs_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ledger", "--proofs", str(tmp_path / "none")]) == 2
    assert "run `netproof prove` first" in capsys.readouterr().err


def _parity_records(tmp_path: Path) -> Path:
    """A copy of the committed PARITY records and their queries."""
    import shutil

    proofs = tmp_path / "proofs"
    shutil.copytree(REPO / "proofs" / "parity", proofs / "parity")
    shutil.copytree(REPO / "proofs" / "queries" / "parity", proofs / "queries" / "parity")
    return proofs


def _row(page: str, claim: str) -> str:
    section = page.split("## `parity`:", 1)[1].split("\n## ", 1)[0]
    return next(line for line in section.splitlines() if line.startswith(f"| {claim} |"))


def test_a_tampered_record_shows_as_failing_its_check_in_the_ledger_never_as_proved(
    tmp_path: Path,
) -> None:
    import json

    proofs = _parity_records(tmp_path)
    registry = {"parity": REGISTRY["parity"]}
    assert "| proved | every n (exhaustive: 0 ≤ \\|w\\| ≤ 10, not rechecked) |" in _row(
        build(registry, str(proofs), cache=None), "C4"
    )
    path = proofs / "parity" / "C4.n48.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["bound"]["max_len"] = 4800  # the tampering: the bound raised, the same queries
    path.write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    row = _row(build(registry, str(proofs), cache=None), "C4")
    assert "**fails its check**" in row and "proved" not in row and "every n" not in row
    assert "netproof recheck" in row and "C4.n48.json" in row


def test_a_tampered_exhaustive_record_is_not_shown_as_the_exhaustive_bound_of_a_proof(
    tmp_path: Path,
) -> None:
    import json

    proofs = _parity_records(tmp_path)
    path = proofs / "parity" / "C4.n10.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["checked"] = 1  # the tampering: 2047 words said to be 1
    path.write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    row = _row(build({"parity": REGISTRY["parity"]}, str(proofs), cache=None), "C4")
    assert (
        "| proved | every n |" in row
    )  # the every-length proof still holds; the tampered bound is not shown


def test_the_verification_cache_gives_the_same_page_and_a_changed_record_is_checked_anew(
    tmp_path: Path,
) -> None:
    import json

    from netproof.verifier.campaign.ledger import VerificationCache

    proofs = _parity_records(tmp_path)
    registry = {"parity": REGISTRY["parity"]}
    cache = VerificationCache(tmp_path / "cache")
    first = build(registry, str(proofs), cache=cache)
    assert list((tmp_path / "cache").rglob("*.json"))  # results were kept
    assert (
        build(registry, str(proofs), cache=cache)
        == first
        == build(registry, str(proofs), cache=None)
    )
    path = proofs / "parity" / "C4.n48.json"
    before = cache.key(str(path))
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["detail"] = rec["detail"] + " (edited)"
    path.write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert cache.key(str(path)) != before
    assert "**fails its check**" in _row(build(registry, str(proofs), cache=cache), "C4")


def test_an_edited_query_file_changes_the_cache_key_of_its_record(tmp_path: Path) -> None:
    from netproof.verifier.campaign.ledger import VerificationCache

    proofs = _parity_records(tmp_path)
    cache = VerificationCache(tmp_path / "cache")
    path = str(proofs / "parity" / "C4.n48.json")
    before = cache.key(path)
    query = next((proofs / "queries" / "parity" / "C4.n48").rglob("*.smt2"))
    query.write_text(
        query.read_text(encoding="utf-8").replace("(check-sat)", "(assert false)\n(check-sat)"),
        encoding="utf-8",
    )
    assert cache.key(path) != before


def test_netproof_ledger_no_cache_shows_a_tampered_record_as_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    proofs = _parity_records(tmp_path)
    path = proofs / "parity" / "C4.n48.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["verdict"] = "refuted"  # a forged verdict with the proof's queries
    path.write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert cli.main(["ledger", "parity", "--proofs", str(proofs), "--no-cache"]) == 0
    row = _row(capsys.readouterr().out, "C4")
    assert "**fails its check**" in row and "| refuted" not in row


def _forged_c4(tmp_path: Path, edit: dict[str, object], drop: tuple[str, ...] = ()) -> Path:
    """A proofs folder holding only PARITY's exhaustive C4 record, edited."""
    import json

    path = tmp_path / "proofs" / "parity" / "C4.n10.json"
    path.parent.mkdir(parents=True)
    rec = json.loads((REPO / "proofs" / "parity" / "C4.n10.json").read_text(encoding="utf-8"))
    for key in drop:
        del rec[key]
    rec.update(edit)
    path.write_text(json.dumps(rec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return tmp_path / "proofs"


def _site_c4(tmp_path: Path, proofs: Path) -> str:
    """The C4 row of the report's PARITY page."""
    from netproof.verifier.campaign.report import build_site

    site = tmp_path / "site"
    build_site({"parity": REGISTRY["parity"]}, str(proofs), str(site), cache=None)
    page = (site / "parity.html").read_text(encoding="utf-8")
    return page.split('<tr id="C4">', 1)[1].split("</tr>", 1)[0]


def test_an_exhaustive_record_forged_to_refuted_with_counterexample_1_is_shown_as_failing(
    tmp_path: Path,
) -> None:
    proofs = _forged_c4(
        tmp_path, {"verdict": "refuted", "counterexample": "1", "values": {}}, drop=("checked",)
    )
    row = _row(build({"parity": REGISTRY["parity"]}, str(proofs), cache=None), "C4")
    assert "**fails its check**" in row and "replayed exactly is no counterexample" in row
    assert "| refuted" not in row
    c4 = _site_c4(tmp_path, proofs)
    assert "fails its check" in c4 and "refuted" not in c4.split("</td>")[3]


def test_an_exhaustive_record_whose_detail_claims_every_longer_word_is_not_shown_as_every_n(
    tmp_path: Path,
) -> None:
    proofs = _forged_c4(  # the record cut to 127 words (quick for the kernel column), then forged
        tmp_path,
        {
            "bound": {"min_len": 0, "max_len": 6},
            "checked": 127,
            "detail": "every word with 0 <= |w| <= 6, and every longer one",
        },
    )
    row = _row(build({"parity": REGISTRY["parity"]}, str(proofs), cache=None), "C4")
    assert "every n" not in row and "0 ≤ \\|w\\| ≤ 6" in row
    assert "**not rechecked**" in row and "| proved" not in row  # 127 words: not re-run here
    c4 = _site_c4(tmp_path, proofs)
    assert "every length" not in c4 and 'class="every"' not in c4 and "not rechecked" in c4


def test_a_small_exhaustive_record_is_run_again_and_a_wrong_one_fails_its_check(
    tmp_path: Path,
) -> None:
    proofs = _forged_c4(
        tmp_path,
        {
            "bound": {"min_len": 0, "max_len": 3},
            "checked": 15,
            "detail": "every word with 0 <= |w| <= 3",
        },
    )
    (proofs / "parity" / "C4.n10.json").rename(proofs / "parity" / "C4.n3.json")
    row = _row(build({"parity": REGISTRY["parity"]}, str(proofs), cache=None), "C4")
    assert "| proved | 0 ≤ \\|w\\| ≤ 3 |" in row  # 15 words: run again, and it holds
    assert row.endswith("| exhaustive (exact) | checked |")  # and the independent kernel agrees
    refuted = _forged_c4(
        tmp_path / "y",
        {
            "bound": {"min_len": 0, "max_len": 3},
            "verdict": "refuted",
            "counterexample": "0",
            "values": {},
            "detail": "forged",
        },
        drop=("checked",),
    )
    (refuted / "parity" / "C4.n10.json").rename(refuted / "parity" / "C4.n3.json")
    row = _row(build({"parity": REGISTRY["parity"]}, str(refuted), cache=None), "C4")
    assert "**fails its check**" in row and "| refuted" not in row


def test_a_refutation_the_exact_interpreter_cannot_replay_is_run_again_not_shown_as_failing() -> (
    None
):
    # parity-ln's C7-mirror-paper is refuted on ε by the interval check (layer norm's √): the exact
    # interpreter answers unknown on that word, so the ledger runs the record's own check again
    page = build({"parity-ln": REGISTRY["parity-ln"]}, "proofs", cache=None)
    errata = page.split("## Errata", 1)[1]
    row = next(
        ln for ln in errata.splitlines() if ln.startswith("| `parity-ln` | C7-mirror-paper |")
    )
    assert "fails its check" not in row and "not rechecked" not in row
    assert "| refuted | `ε`" in row


def _why_row(page: str, construction: str, claim: str) -> str:
    section = page.split("## Proved within a bound only", 1)[1].split("\n## ", 1)[0]
    return next(
        line for line in section.splitlines() if line.startswith(f"| `{construction}` | {claim} |")
    )


def test_every_claim_proved_within_a_bound_only_is_listed_with_why_it_has_no_proof_for_every_length(
    tmp_path: Path,
) -> None:
    """A claim without an encoder says what it lacks; a claim with an smt attempt that ended
    unknown says the attempt's reason; one with none says the command that tries one; a claim
    proved for every length is not listed."""
    import json
    import shutil

    proofs = _parity_records(tmp_path)
    # one cache for the four builds: a record's check is keyed by its bytes (and its queries'
    # and the code's), so each build checks only the records it has not seen
    cache = VerificationCache(tmp_path / "cache")
    page = build({"parity": REGISTRY["parity"]}, str(proofs), cache=cache)
    assert "no encoder for SignForAllBases claims" in _why_row(page, "parity", "C4-all-c")
    assert "C4 |" not in page.split("## Proved within a bound only", 1)[1].split("\n## ", 1)[0]
    # parity-ln declares no block lemmas: no route, whatever records there are
    shutil.copytree(REPO / "proofs" / "parity-ln", proofs / "parity-ln")
    one = {"parity-ln": REGISTRY["parity-ln"]}
    row = _why_row(build(one, str(proofs), cache=cache), "parity-ln", "C7")
    assert "no route: parity-ln declares no block lemmas" in row
    # parity's C4 has a route: with its exhaustive record alone, the command that tries it;
    # with an smt attempt that ended unknown beside it, that attempt's reason
    (proofs / "parity" / "C4.n48.json").unlink()
    parity = {"parity": REGISTRY["parity"]}
    row = _why_row(build(parity, str(proofs), cache=cache), "parity", "C4")
    assert "try `netproof prove parity --claims C4 --method best`" in row
    c = REGISTRY["parity"]
    values = c.parse_params({})
    (claim,) = [cl for cl in c.claims(values) if cl.id == "C4"]
    tried = record(c, values, claim, 10, Outcome(Unknown("smt (z3)", "timed out after 0.1 s")))
    (proofs / "parity" / "C4.n10.smt.json").write_text(json.dumps(tried), encoding="utf-8")
    row = _why_row(build(parity, str(proofs), cache=cache), "parity", "C4")
    assert "attempt ended unknown: timed out after 0.1 s" in row
