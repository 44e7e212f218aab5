"""Live progress of a proof run on stderr: on a terminal, one bar per running claim (words checked
of the total, elapsed time and an ETA for exhaustive checks) under the lines of the finished
claims, drawn by rich; elsewhere (a pipe, a file, ``NO_COLOR`` set, or rich not installed) one
line per event: a long exhaustive check announces its number of words as it starts and, every
:data:`PERIOD_SECONDS` while it runs, its words done of the total with the rate and an ETA; each
finished claim prints ``[3/7] parity C4: proved (0.2s)`` (``cached`` for a reused record). A
running SMT proof shows its phase (:mod:`netproof.verifier.smt.phases`: ``lemmas 3/9:
match1.left``, ``every length: certificate query 'consecution'``): in its bar on a terminal, in a
line at most every :data:`PERIOD_SECONDS` elsewhere. ``--quiet`` prints nothing.

The other long-running commands (``recheck``, ``fuzz``, ``precision``, ``plot``) use
:func:`events`, the same design over named steps: :class:`EventBars` on a terminal (one rich line
per running step with its count done of the total, e.g. a record's queries solved or a claim's
examples tried), :class:`EventLines` elsewhere (one line per event; every tick too with
``verbose``), :class:`QuietEvents` with ``--quiet``.

May import the campaign (its :class:`~netproof.verifier.campaign.proving.Progress` and
:class:`~netproof.verifier.campaign.proving.Running` events) and rich (lazily).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from netproof.verifier.campaign.proving import Progress, Running, verdict_name

__all__ = [
    "ANNOUNCE_WORDS",
    "Bars",
    "EventBars",
    "EventLines",
    "Lines",
    "Quiet",
    "QuietEvents",
    "events",
    "finished_line",
    "phase_line",
    "progress_line",
    "reporter",
]

ANNOUNCE_WORDS = 1 << 16
"""An exhaustive check of at least this many words is announced (line per event) as it starts."""


def finished_line(p: Progress) -> str:
    """``[done/total] construction claim: verdict (seconds or cached)``."""
    took = "cached" if p.cached else f"{p.seconds:.1f}s"
    return f"[{p.done}/{p.total}] {p.construction} {p.claim}: {verdict_name(p.verdict)} ({took})"


PERIOD_SECONDS = 30.0
"""Without a terminal, a running exhaustive check prints its progress at most this often."""


def _duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 10m``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def progress_line(r: Running, elapsed: float) -> str:
    """``[..] construction claim: done of total words (pct), rate words/s, ETA`` for a running
    exhaustive check ``elapsed`` seconds after it started."""
    rate = r.done / elapsed if elapsed > 0 else 0.0
    eta = f", ETA {_duration((r.total - r.done) / rate)}" if rate > 0 else ""
    pct = 100 * r.done / r.total if r.total else 0.0
    return (
        f"[..] {r.construction} {r.claim}: {r.done:,} of {r.total:,} words ({pct:.1f}%), "
        f"{rate:,.0f} words/s{eta}"
    )


def phase_line(r: Running, elapsed: float) -> str:
    """``[..] construction claim: phase (elapsed)`` for a running SMT proof."""
    return f"[..] {r.construction} {r.claim}: {r.phase} ({_duration(elapsed)} so far)"


class Lines:
    """One line per event on ``stream``: a long exhaustive check's start (its number of words),
    its progress every :data:`PERIOD_SECONDS` while it runs (words done of the total, the rate
    and an ETA), a running SMT proof's phase at most as often (lemmas k/n, the reachable
    states, a certificate query), and every finished claim."""

    def __init__(self, stream: TextIO | None = None, period: float = PERIOD_SECONDS) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.announced: set[tuple[str, str]] = set()
        self.period = period
        self.started: dict[tuple[str, str], float] = {}
        self.last: dict[tuple[str, str], float] = {}

    def running(self, r: Running) -> None:
        key = (r.construction, r.claim)
        now = time.monotonic()
        if r.done == 0 or key not in self.started:
            self.started.setdefault(key, now)
            self.last.setdefault(key, now)
        if r.done == 0 and r.total >= ANNOUNCE_WORDS and key not in self.announced:
            self.announced.add(key)
            print(
                f"[start] {r.construction} {r.claim}: checking {r.total:,} words",
                file=self.stream,
                flush=True,
            )
        elif 0 < r.done < r.total and now - self.last[key] >= self.period:
            self.last[key] = now
            print(progress_line(r, now - self.started[key]), file=self.stream, flush=True)
        elif r.phase and now - self.last[key] >= self.period:
            self.last[key] = now
            print(phase_line(r, now - self.started[key]), file=self.stream, flush=True)

    def finished(self, p: Progress) -> None:
        print(finished_line(p), file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to take down."""


class Quiet(Lines):
    """Nothing at all (``--quiet``)."""

    def running(self, r: Running) -> None:
        """Say nothing."""

    def finished(self, p: Progress) -> None:
        """Say nothing."""


class Bars:
    """rich bars: the claims done of all, and one bar per running claim (words done of the
    total with an ETA where the claim is checked word by word, a spinner otherwise); each
    finished claim's line is printed above them."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.console = console if console is not None else Console(stderr=True)
        self.bars = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self.tasks: dict[tuple[str, str], Any] = {}
        self.done: set[tuple[str, str]] = set()
        self.overall: Any = None
        self.bars.start()

    def running(self, r: Running) -> None:
        key = (r.construction, r.claim)
        if key in self.done:
            return  # a late tick of a claim already finished
        total = r.total if r.total > 0 else None
        what = f"{r.construction} {r.claim}" + (f": {r.phase}" if r.phase else "")
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(what, total=total, completed=r.done)
        else:
            self.bars.update(self.tasks[key], total=total, completed=r.done, description=what)

    def finished(self, p: Progress) -> None:
        key = (p.construction, p.claim)
        self.done.add(key)
        if key in self.tasks:
            self.bars.remove_task(self.tasks.pop(key))
        if self.overall is None:
            self.overall = self.bars.add_task("claims", total=p.total)
        self.bars.update(self.overall, completed=p.done)
        self.console.print(finished_line(p), markup=False, highlight=False)

    def close(self) -> None:
        self.bars.stop()


def reporter(*, quiet: bool, json_out: bool, stream: TextIO | None = None) -> Lines | Bars:
    """The progress display for ``netproof prove``: nothing with ``--quiet``; rich bars when
    stderr is a terminal, ``NO_COLOR`` is unset, the output is not ``--json`` and rich is
    installed; else one line per event."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return Quiet(stream)
    if stream.isatty() and not json_out and not os.environ.get("NO_COLOR"):
        try:
            return Bars()
        except ImportError:
            pass  # rich is a dependency; a broken install still gets the line-per-event display
    return Lines(stream)


# --------------------------------------------------------------------------- the other commands

TICK_SECONDS = 0.1
"""A terminal's bar is redrawn at most this often per step (a tick in between only updates it)."""


class EventLines:
    """One line per event on ``stream`` (stderr): a step's start and end lines and every note;
    with ``verbose`` also the lines its ticks carry (e.g. each query solved). ``out`` prints a
    line of the command's own output (stdout)."""

    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.verbose = verbose

    def _say(self, line: str | None) -> None:
        if line:
            print(line, file=self.stream, flush=True)

    def start(self, key: str, total: int | None = None, line: str | None = None) -> None:
        """Step ``key`` begins (``total`` things to do, if known); ``line`` says so."""
        self._say(line)

    def advance(
        self, key: str, done: int, total: int | None = None, line: str | None = None
    ) -> None:
        """``done`` things of step ``key`` are done; ``line`` is shown only with ``verbose``."""
        if self.verbose:
            self._say(line)

    def finish(self, key: str, line: str | None = None) -> None:
        """Step ``key`` is over; ``line`` says how it ended."""
        self._say(line)

    def note(self, line: str) -> None:
        """A line that is not about one step (an announcement)."""
        self._say(line)

    def out(self, line: str) -> None:
        """A line of the command's own output, on stdout, as it is ready."""
        print(line, flush=True)

    def close(self) -> None:
        """Nothing to take down."""


class QuietEvents(EventLines):
    """No progress at all (``--quiet``); the command's own output still goes to stdout."""

    def _say(self, line: str | None) -> None:
        """Say nothing."""


class EventBars(EventLines):
    """rich: one transient line per running step (its description, a bar, done of the total and
    the time elapsed; a spinner where the total is unknown); end lines and notes are printed
    above the bars. A line of the command's own output goes to stdout with the bars taken down
    for a moment, so that stdout stays the command's alone (``netproof recheck DIR > out.txt``)."""

    def __init__(self, console: Any = None, *, verbose: bool = False) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress

        super().__init__(verbose=verbose)
        self.console = console if console is not None else Console(stderr=True)
        self.bars = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.tasks: dict[str, Any] = {}
        self.last: dict[str, float] = {}
        self.over: set[str] = set()
        self.bars.start()

    def start(self, key: str, total: int | None = None, line: str | None = None) -> None:
        self.over.discard(key)
        if key in self.tasks:
            self.bars.update(self.tasks[key], total=total, completed=0)
        else:
            self.tasks[key] = self.bars.add_task(key, total=total, completed=0)

    def advance(
        self, key: str, done: int, total: int | None = None, line: str | None = None
    ) -> None:
        if key in self.over:
            return  # a late tick of a step already finished
        if key not in self.tasks:
            self.start(key, total)
        now = time.monotonic()
        if total is not None and done < total and now - self.last.get(key, 0.0) < TICK_SECONDS:
            return
        self.last[key] = now
        if total is None:
            self.bars.update(self.tasks[key], completed=done)
        else:
            self.bars.update(self.tasks[key], completed=done, total=total)
        if self.verbose and line:
            self.console.print(line, markup=False, highlight=False)

    def finish(self, key: str, line: str | None = None) -> None:
        self.over.add(key)
        if key in self.tasks:
            self.bars.remove_task(self.tasks.pop(key))
        self.last.pop(key, None)
        if line:
            self.console.print(line, markup=False, highlight=False)

    def note(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False)

    def out(self, line: str) -> None:
        self.bars.stop()
        try:
            print(line, flush=True)
        finally:
            self.bars.start()

    def close(self) -> None:
        self.bars.stop()


def events(
    *, quiet: bool, json_out: bool = False, verbose: bool = False, stream: TextIO | None = None
) -> EventLines:
    """The progress display of ``recheck``, ``fuzz``, ``precision`` and ``plot``: nothing with
    ``--quiet``; rich bars when ``stream`` (stderr) is a terminal, ``NO_COLOR`` is unset, the
    output is not ``--json`` and rich is installed; else one line per event."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return QuietEvents(stream)
    if stream.isatty() and not json_out and not os.environ.get("NO_COLOR"):
        try:
            return EventBars(verbose=verbose)
        except ImportError:
            pass  # rich is a dependency; a broken install still gets the line-per-event display
    return EventLines(stream, verbose=verbose)
