"""The claims ledger (docs/CLAIMS.md) is built from the committed proof records."""

from __future__ import annotations

from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier import cli
from netproof.verifier.campaign.ledger import build

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_claims_ledger_is_up_to_date_with_the_proof_records() -> None:
    fresh = build(REGISTRY, str(REPO / "proofs"))
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


def test_ledger_refuses_a_missing_proofs_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ledger", "--proofs", str(tmp_path / "none")]) == 2
    assert "run `netproof prove` first" in capsys.readouterr().err
