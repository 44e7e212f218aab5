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
