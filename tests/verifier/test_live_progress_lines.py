"""Without a terminal, a running exhaustive check prints its progress now and then (words done of
the total, the rate, an ETA); ``--quiet`` prints nothing."""

from __future__ import annotations

import io

import pytest

from netproof.verifier.campaign.proving import Running
from netproof.verifier.cli import live


def test_a_long_check_prints_its_words_done_rate_and_eta_every_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    lines = live.Lines(out, period=30.0)
    lines.running(Running("dyck", "Y2", 0, 200_000))
    for t, done in ((10.0, 20_000), (31.0, 62_000), (40.0, 80_000), (62.0, 124_000)):
        clock[0] = 100.0 + t
        lines.running(Running("dyck", "Y2", done, 200_000))
    assert out.getvalue().splitlines() == [
        "[start] dyck Y2: checking 200,000 words",
        "[..] dyck Y2: 62,000 of 200,000 words (31.0%), 2,000 words/s, ETA 1m 09s",
        "[..] dyck Y2: 124,000 of 200,000 words (62.0%), 2,000 words/s, ETA 38s",
    ]


def test_quiet_prints_no_progress() -> None:
    out = io.StringIO()
    quiet = live.Quiet(out)
    quiet.running(Running("dyck", "Y2", 0, 200_000))
    quiet.running(Running("dyck", "Y2", 100_000, 200_000))
    assert out.getvalue() == ""


def test_a_running_smt_proof_prints_its_phase_at_most_every_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(live.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    lines = live.Lines(out, period=30.0)
    lines.running(Running("dyck", "Y2", 0, 0))
    for t, phase in ((5.0, "lemmas 1/6: match1.left"), (31.0, "lemmas 4/6: depth"), (40.0, "x")):
        clock[0] = 100.0 + t
        lines.running(Running("dyck", "Y2", 0, 0, phase))
    assert out.getvalue().splitlines() == ["[..] dyck Y2: lemmas 4/6: depth (31s so far)"]


def test_a_smt_task_sends_the_phases_of_its_proof_lemmas_then_every_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """run_task with the smt method tells its listener what the proof does: each lemma k/n, the
    lengths, and the search for every length (every phase sent: no throttling here)."""
    from netproof.constructions import REGISTRY
    from netproof.verifier.campaign import proving

    monkeypatch.setattr(proving, "TICK_SECONDS", 0.0)

    c = REGISTRY["first"]
    index = [claim.id for claim in c.claims(c.parse_params({}))].index("recognizes")
    heard: list[Running] = []
    proving.run_task(
        proving.Task("first", (), (index,), 6, method="smt", timeout=60.0),
        running=heard.append,
    )
    phases = [r.phase for r in heard if r.phase]
    assert phases, "no phase heard"
    assert phases[0].startswith("lemmas 1/")
    assert any(p.startswith(("every length:", "length ")) for p in phases)
    assert all(r.construction == "first" and r.claim == "recognizes" for r in heard)
