"""Live progress of a proof run: the library reports each running claim's words (also from worker
processes), the tasks start cheapest first interleaved with the costliest, and ``netproof prove``
shows rich bars on a terminal and one line per event elsewhere; ``recheck`` (per record and per
query), ``fuzz``, ``precision`` and ``plot`` do the same, and ``--quiet`` silences them."""

from __future__ import annotations

import io
import json
import re

import pytest

from netproof.verifier.campaign.proving import Progress, Running, order, prove
from netproof.verifier.claims import Proved
from netproof.verifier.cli import main
from netproof.verifier.cli.live import (
    ANNOUNCE_WORDS,
    Bars,
    EventBars,
    EventLines,
    Lines,
    Quiet,
    QuietEvents,
    events,
    reporter,
)


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_exhaustive_claim_reports_its_words_from_start_to_end(jobs: int) -> None:
    heard: list[Running] = []
    result = prove(
        "parity", claims=["C4", "C3-count", "C2"], max_n=6, jobs=jobs, running=heard.append
    )
    assert result.exit_code == 0
    for claim in ("C4", "C3-count"):
        ticks = [(r.done, r.total) for r in heard if r.claim == claim]
        assert ticks[0] == (0, 127) and ticks[-1] == (127, 127), (
            claim,
            ticks,
        )  # 2^7 - 1 words of length <= 6
        assert [d for d, _t in ticks] == sorted(d for d, _t in ticks)
    assert [(r.done, r.total) for r in heard if r.claim == "C2"] == [(0, 0)]  # a lemma: no words


def test_tasks_start_cheapest_first_interleaved_with_the_costliest() -> None:
    assert order([5, 1, 100, 7, 3]) == [1, 2, 4, 3, 0]
    assert order([]) == [] and order([4]) == [0]
    assert sorted(order(list(range(9)))) == list(range(9))


def test_a_serial_run_finishes_the_cheapest_claim_first() -> None:
    heard: list[Progress] = []
    prove("parity", claims=["C4", "C2", "C3-count"], max_n=8, progress=heard.append)
    assert heard[0].claim == "C2"


def event(done: int, claim: str = "C4", cached: bool = False) -> Progress:
    return Progress("parity", claim, Proved("exhaustive (exact)", 10), 0.25, done, 2, cached)


def test_lines_announce_a_long_check_once_and_print_each_finished_claim() -> None:
    out = io.StringIO()
    lines = Lines(out)
    lines.running(Running("dyck", "Y2", 0, ANNOUNCE_WORDS))
    lines.running(Running("dyck", "Y2", 10, ANNOUNCE_WORDS))
    lines.running(Running("parity", "C4", 0, 127))  # short: not announced
    lines.finished(event(1))
    lines.finished(event(2, "C2", cached=True))
    assert out.getvalue().splitlines() == [
        f"[start] dyck Y2: checking {ANNOUNCE_WORDS:,} words",
        "[1/2] parity C4: proved (0.2s)",
        "[2/2] parity C2: proved (cached)",
    ]


def test_bars_show_words_done_of_the_total_and_print_finished_claims_above() -> None:
    from rich.console import Console

    out = io.StringIO()
    bars = Bars(Console(file=out, force_terminal=True, width=120, color_system=None))
    bars.running(Running("parity", "C4", 0, 2047))
    bars.running(Running("parity", "C4", 1024, 2047))
    bars.bars.refresh()
    assert "parity C4" in out.getvalue() and "1024/2047" in out.getvalue()
    bars.finished(event(1))
    bars.running(Running("parity", "C4", 2047, 2047))  # a late tick of a finished claim is dropped
    assert ("parity", "C4") not in bars.tasks
    bars.close()
    assert "[1/2] parity C4: proved (0.2s)" in out.getvalue()


def test_the_display_is_quiet_lines_or_bars_as_the_terminal_and_options_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert isinstance(reporter(quiet=True, json_out=False, stream=Terminal()), Quiet)
    assert type(reporter(quiet=False, json_out=False, stream=io.StringIO())) is Lines
    assert type(reporter(quiet=False, json_out=True, stream=Terminal())) is Lines
    bars = reporter(quiet=False, json_out=False, stream=Terminal())
    assert isinstance(bars, Bars)
    bars.close()
    monkeypatch.setenv("NO_COLOR", "1")
    assert type(reporter(quiet=False, json_out=False, stream=Terminal())) is Lines


def test_prove_without_a_terminal_prints_one_line_per_event(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["prove", "parity", "--max-n", "4", "--out", "", "--jobs", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[1/7] parity C2: proved (")
    assert len(err) == 7 and all(
        line.startswith(f"[{i}/7] parity ") for i, line in enumerate(err, start=1)
    )
    assert main(["prove", "parity", "--max-n", "4", "--out", "", "--jobs", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_a_refuted_lemma_is_shown_under_the_table_and_its_row_says_the_bound_it_fell_back_to(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import dataclasses

    from netproof.verifier.cli.prove import print_table

    result = prove("parity", claims=["C4"], max_n=6, method="smt")
    (r,) = result.results
    assert r.every_length and r.record["lemmas"]["children"][0]["name"] == "fig1"
    print_table([r])
    assert "LEMMA REFUTED" not in capsys.readouterr().out
    record = json.loads(json.dumps(r.record))
    record["lemmas"]["children"][0]["verdict"] = (
        "refuted"  # as a run whose lemma fig1 fails would record it
    )
    print_table([dataclasses.replace(r, record=record, every_length=False)])
    out = capsys.readouterr().out
    assert re.search(
        r"^parity\s+C4\s+PROVED\s+0≤\|w\|≤6 \(a lemma refuted\)\s", out, flags=re.MULTILINE
    )
    statement = record["lemmas"]["children"][0]["statement"]
    assert (
        f"\n  LEMMA REFUTED parity C4 / fig1: {statement}\n      C4 was proved without it, for 0≤|w|≤6 only\n"
        in out
    )


# --------------------------------------------------------------------------- recheck, fuzz, precision, plot


def test_event_lines_print_starts_ends_and_notes_and_ticks_only_when_verbose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = io.StringIO()
    lines = EventLines(err)
    lines.start("[1/2] a.json", 3, "[1/2] a.json: rechecking")
    lines.advance("[1/2] a.json", 1, 3, "[1/2] a.json: query 'q1' unsat")
    lines.note("an announcement")
    lines.finish("[1/2] a.json", "done")
    lines.finish("[2/2] b.json")  # no line: nothing printed
    lines.out("AGREE a.json")
    assert err.getvalue().splitlines() == ["[1/2] a.json: rechecking", "an announcement", "done"]
    assert capsys.readouterr().out == "AGREE a.json\n"
    verbose = EventLines(err := io.StringIO(), verbose=True)
    verbose.advance("[1/2] a.json", 1, 3, "[1/2] a.json: query 'q1' unsat")
    assert err.getvalue() == "[1/2] a.json: query 'q1' unsat\n"
    quiet = QuietEvents(err := io.StringIO(), verbose=True)
    quiet.start("k", 1, "start")
    quiet.advance("k", 1, 1, "tick")
    quiet.note("note")
    quiet.finish("k", "end")
    quiet.out("the command's own output")
    assert err.getvalue() == "" and capsys.readouterr().out == "the command's own output\n"


def test_event_bars_show_done_of_the_total_print_end_lines_above_and_drop_late_ticks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rich.console import Console

    err = io.StringIO()
    bars = EventBars(Console(file=err, force_terminal=True, width=120, color_system=None))
    bars.start("[1/2] proofs/dyck/Y2.json")
    bars.advance("[1/2] proofs/dyck/Y2.json", 0, 14)
    bars.advance("[1/2] proofs/dyck/Y2.json", 5, 14)
    bars.last.clear()  # past the redraw interval
    bars.advance("[1/2] proofs/dyck/Y2.json", 6, 14)
    bars.bars.refresh()
    assert "[1/2] proofs/dyck/Y2.json" in err.getvalue() and "6/14" in err.getvalue()
    bars.finish("[1/2] proofs/dyck/Y2.json", "Y2 finished")
    bars.advance("[1/2] proofs/dyck/Y2.json", 14, 14)  # a late tick of a finished step
    assert bars.tasks == {}
    bars.out("AGREE proofs/dyck/Y2.json")
    bars.close()
    assert "Y2 finished" in err.getvalue()
    assert (
        capsys.readouterr().out == "AGREE proofs/dyck/Y2.json\n"
    )  # the command's output stays on stdout


def test_the_other_commands_display_is_quiet_lines_or_bars_as_the_terminal_and_options_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert isinstance(events(quiet=True, stream=Terminal()), QuietEvents)
    assert type(events(quiet=False, stream=io.StringIO())) is EventLines
    assert type(events(quiet=False, json_out=True, stream=Terminal())) is EventLines
    bars = events(quiet=False, stream=Terminal(), verbose=True)
    assert isinstance(bars, EventBars) and bars.verbose
    bars.close()
    monkeypatch.setenv("NO_COLOR", "1")
    assert type(events(quiet=False, stream=Terminal())) is EventLines


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two exhaustive records and one SMT record of parity, written by a real proof run."""
    out = tmp_path_factory.mktemp("records")
    assert prove("parity", claims=["C3-count", "C2"], max_n=4, out=out).exit_code == 0
    assert prove("parity", claims=["C4"], max_n=4, method="smt", out=out).exit_code == 0
    return str(out)


def test_recheck_without_a_terminal_prints_a_line_as_each_record_starts_and_per_query_with_verbose(
    records: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recheck", records, "--solver", "z3"]) == 0
    cap = capsys.readouterr()
    starts = cap.err.splitlines()
    n = len(starts)
    assert n >= 3 and [re.sub(r" .*", "", line) for line in starts] == [
        f"[{i}/{n}]" for i in range(1, n + 1)
    ]
    assert all(line.endswith(".json: rechecking") for line in starts)
    assert cap.out.count("AGREE ") == n and f"{n} agree" in cap.out
    assert main(["recheck", records, "--solver", "z3", "--verbose"]) == 0
    verbose = capsys.readouterr()
    queries = [line for line in verbose.err.splitlines() if ": query " in line]
    assert queries and all(
        re.search(r": query '.+' unsat \(log: unsat; \d+\.\ds, \d+/\d+\)$", q) for q in queries
    ), queries
    assert verbose.out == cap.out  # the output itself is the same
    assert main(["recheck", records, "--solver", "z3", "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out == cap.out


def test_recheck_reports_each_query_solved_and_an_exhaustive_re_runs_words_up_to_the_total(
    records: str,
) -> None:
    from netproof.constructions import REGISTRY
    from netproof.verifier.smt.prooflog import find_logs
    from netproof.verifier.smt.recheck import recheck_log

    for path in find_logs([records]):
        heard: list[tuple[int, int, object]] = []
        check = recheck_log(
            path,
            registry=REGISTRY,
            solver="z3",
            progress=lambda d, t, q, heard=heard: heard.append((d, t, q)),
        )
        assert check.outcome == "agree", check.detail
        done = [d for d, _t, _q in heard]
        assert heard and done == sorted(done) and heard[-1][0] == heard[-1][1], (path, heard)
        if check.solver == "checker":  # words of the re-run: 2^5 - 1 of length <= 4
            assert heard[-1][:2] == (31, 31) and all(q is None for _d, _t, q in heard)
        else:
            assert heard[0] == (0, len(check.queries), None)
            assert [q for _d, _t, q in heard[1:]] == list(check.queries)
