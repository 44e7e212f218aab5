"""The synthesized specs as an opt-in group (``netproof.constructions.GROUPS["synth"]``): outside
the default set (``netproof prove`` with no names, the registry-wide tests), built when named by
the group (``synth``), by a member's name (``synth-no-aa``) or by a record of it (``netproof
recheck``), and their records written, rechecked and shown by the ledger like any other."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.constructions import GROUPS, REGISTRY
from netproof.constructions.rasp.synth_specs import SPECS
from netproof.verifier.campaign.errors import CampaignError
from netproof.verifier.campaign.sources import Session

REPO = Path(__file__).resolve().parents[2]
LIGHT = ("synth-ends-ab", "synth-no-aa")


def test_the_group_has_every_spec_and_none_of_them_is_in_the_default_set() -> None:
    assert list(GROUPS["synth"]) == [f"synth-{s.name}" for s in SPECS]
    assert not set(GROUPS["synth"]) & set(REGISTRY)
    default = [c.name for c in Session().select([], {})]
    assert default == list(REGISTRY)


def test_a_member_named_is_built_and_the_default_set_still_leaves_it_out() -> None:
    session = Session()
    (c,) = session.select(["synth-no-aa"], {})
    assert c.name == "synth-no-aa"
    assert [x.id for x in c.claims({})][:2] == ["network=program", "program=language"]
    assert session.construction("synth-no-aa") is c
    assert "synth-no-aa" not in [x.name for x in session.select([], {})]
    assert Session().for_task("synth-ends-ab", None).name == "synth-ends-ab"  # a worker's lookup


def test_the_group_s_name_selects_every_member(monkeypatch: pytest.MonkeyPatch) -> None:
    small = {name: GROUPS["synth"][name] for name in LIGHT}
    monkeypatch.setitem(GROUPS, "synth", small)
    assert [c.name for c in Session().select(["synth"], {})] == list(LIGHT)


def test_an_unknown_name_is_still_refused_with_a_close_match() -> None:
    with pytest.raises(CampaignError, match=r"unknown construction 'synth-no-ab'.*'synth-no-aa'"):
        Session().construction("synth-no-ab")


@pytest.mark.z3
def test_records_of_members_are_written_rechecked_and_shown_by_the_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "proofs"
    done = netproof(capsys, "prove", *LIGHT, "--method", "best", "--out", str(out), "--quiet")
    assert done.code == 0, done.out
    assert sorted(p.name for p in out.iterdir()) == ["queries", *LIGHT]
    rec = json.loads((out / "synth-no-aa" / "network_program.n8.json").read_text("utf-8"))
    assert (rec["construction"], rec["verdict"]) == ("synth-no-aa", "proved")
    again = netproof(
        capsys, "recheck", str(out), "--quiet"
    )  # a new session: found from the records
    assert again.code == 0, again.out
    assert "0 disagree, 0 undecided, 0 rejected" in again.out
    assert again.out.count("AGREE") == len(list(out.glob("synth-*/*.json")))
    page = netproof(capsys, "ledger", "synth-no-aa", "--proofs", str(out), "--no-cache")
    assert page.code == 0
    assert "## `synth-no-aa`" in page.out
    assert re.search(r"\| network=program \|.*\| proved \| every n \|", page.out)
    default = netproof(capsys, "ledger", "--proofs", str(out), "--no-cache")
    assert "synth-" not in default.out


@pytest.mark.slow
@pytest.mark.z3
def test_every_committed_record_of_an_opt_in_group_is_fresh_without_solving() -> None:
    """The counterpart of test_prooflog's freshness check, which leaves the groups' records out:
    each record under proofs/synth-* still describes the network its spec synthesizes today."""
    from netproof.verifier.smt.prooflog import check_fresh, find_logs

    session = Session()
    opted = {name for group in GROUPS.values() for name in group}
    folders = [p for p in (REPO / "proofs").iterdir() if p.name in opted]
    for folder in folders:
        session.construction(folder.name)
        for path in find_logs([str(folder)]):
            check_fresh(path, session.registry())
