"""``--claims ID[,ID…]`` and ``-k EXPR`` on ``prove``, ``recheck`` and ``report``: the claims
they keep, the ids and expressions they refuse (exit 2, naming the valid ids or where the
expression breaks), and the library's ``keyword=``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.verifier.campaign import prove
from netproof.verifier.campaign.errors import CampaignError
from netproof.verifier.campaign.selection import ClaimFilter, keyword_matcher, select_claims
from netproof.verifier.campaign.sources import builtin_registry


@pytest.mark.parametrize(
    ("expr", "text", "expected"),
    [
        ("C3", "parity C3-count", True),
        ("c3", "parity C3-count", True),
        ("C3 and not count", "parity C3-count", False),
        ("C3 and not count", "parity C3-fig1", True),
        ("dyck or parity", "first C1", False),
        ("not (Y4 or Y5) and dyck", "dyck Y3", True),
        ("not (Y4 or Y5) and dyck", "dyck Y5", False),
        ("network= or no-ties", "brasp-no-aa no-ties", True),
        ("a or b and c", "x a", True),  # and binds tighter than or
        ("(a or b) and c", "x a", False),
    ],
)
def test_a_keyword_expression_matches_as_pytests_k_does(
    expr: str, text: str, expected: bool
) -> None:
    assert keyword_matcher(expr)(text) is expected


@pytest.mark.parametrize(
    ("expr", "where"),
    [
        ("C3 and", "it ends where a word"),
        ("(C3 or C4", "it ends where a word or"),
        ("C3 C4", "'C4' after a complete expression"),
        ("and C3", "'and' where a word was expected"),
        ("  ", "is empty"),
    ],
)
def test_a_malformed_keyword_expression_is_refused_naming_where_it_breaks(
    expr: str, where: str
) -> None:
    with pytest.raises(CampaignError, match=re.escape(where)):
        keyword_matcher(expr)


def test_claim_ids_split_on_commas_keep_their_order_and_refuse_an_empty_item() -> None:
    assert ClaimFilter.parse(["C4,C2", "C4", " C5 "], None).ids == ("C4", "C2", "C5")
    with pytest.raises(CampaignError, match="--claims 'C4,,C2' has an empty item"):
        ClaimFilter.parse(["C4,,C2"], None)


def test_the_library_keeps_the_claims_a_keyword_matches_and_refuses_one_matching_none() -> None:
    run = prove("parity", keyword="C3 and not fig", max_n=3)
    assert [r.claim.id for r in run.results] == ["C3-count", "C3-1/n"]
    with pytest.raises(CampaignError, match=r"-k 'Y5' matches no claim of parity"):
        prove("parity", keyword="Y5", max_n=3)


def test_prove_with_claims_runs_those_claims_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(
        capsys, "prove", "parity", "--claims", "C4,C2", "--max-n", "3", "--out", "", "--json"
    )
    assert done.code == 0, done.err
    ids = [r["claim"]["id"] for r in json.loads(done.out)["results"]]
    assert ids == ["C4", "C2"]


def test_prove_with_k_runs_the_claims_it_matches(capsys: pytest.CaptureFixture[str]) -> None:
    done = netproof(
        capsys, "prove", "parity", "-k", "C3 and not 1/n", "--max-n", "3", "--out", "", "--json"
    )
    assert done.code == 0, done.err
    ids = [r["claim"]["id"] for r in json.loads(done.out)["results"]]
    assert ids == ["C3-count", "C3-fig1"]


def test_prove_with_an_unknown_claim_id_exits_2_naming_the_valid_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "prove", "parity", "--claims", "C99", "--out", "")
    assert done.code == 2
    assert "'C99' is not a claim of parity" in done.err
    assert "C4, C4-all-c, C2" in done.err
    assert done.out == ""


def test_prove_with_a_malformed_k_exits_2_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(capsys, "prove", "parity", "-k", "C3 and (", "--out", "")
    assert done.code == 2
    assert "-k 'C3 and ('" in done.err
    assert done.out == ""


def test_recheck_with_claims_or_k_rechecks_those_logs_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = netproof(
        capsys, "prove", "parity", "--claims", "C2,C3-count", "--max-n", "3", "--out", str(tmp_path)
    )
    assert done.code == 0, done.err
    only = netproof(capsys, "recheck", str(tmp_path), "--claims", "C2", "--solver", "z3", "--json")
    assert only.code == 0, only.err
    logs = json.loads(only.out)["logs"]
    assert [Path(log["log"]).name for log in logs] == ["C2.all.json"]
    keyword = netproof(
        capsys, "recheck", str(tmp_path), "-k", "count", "--solver", "z3", "--json", "--quiet"
    )
    assert keyword.code == 0, keyword.err
    assert [Path(log["log"]).name for log in json.loads(keyword.out)["logs"]] == [
        "C3-count.n3.json"
    ]
    unknown = netproof(capsys, "recheck", str(tmp_path), "--claims", "C4")
    assert unknown.code == 2
    assert "'C4' is not a claim of any log under" in unknown.err
    assert "the claims there: C2, C3-count" in unknown.err


def test_report_with_claims_shows_only_those_claims() -> None:
    registry = {"parity": builtin_registry()["parity"]}
    kept = select_claims(registry, ClaimFilter.parse(["C2"], None))
    assert [cl.id for cl in kept["parity"].claims({"c": None, "variant": "fixed"})] == ["C2"]
    with pytest.raises(CampaignError, match=r"'Y5' is not a claim of parity; the claims there: C4"):
        select_claims(registry, ClaimFilter.parse(["Y5"], None))
    assert select_claims(builtin_registry(), ClaimFilter.parse(None, "parity and C2")).keys() == {
        "parity"
    }


def test_report_with_k_writes_pages_of_the_selected_claims_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proofs = tmp_path / "proofs"
    assert (
        netproof(
            capsys,
            "prove",
            "parity",
            "--claims",
            "C2,C3-count",
            "--max-n",
            "3",
            "--out",
            str(proofs),
        ).code
        == 0
    )
    site = tmp_path / "site"
    done = netproof(
        capsys, "report", "parity", "--proofs", str(proofs), "--out", str(site), "-k", "C2"
    )
    assert done.code == 0, done.err
    page = (site / "parity.html").read_text()
    assert ">C2<" in page
    assert ">C3-count<" not in page.split("Every record file")[0]
