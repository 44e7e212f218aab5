"""Live progress of a proof run on stderr: on a terminal, one bar per running claim (words checked
of the total, elapsed time and an ETA for exhaustive checks) under the lines of the finished
claims, drawn by rich; elsewhere (a pipe, a file, ``NO_COLOR`` set, or rich not installed) one
line per event: a long exhaustive check announces its number of words as it starts, and each
finished claim prints ``[3/7] parity C4: proved (0.2s)`` (``cached`` for a reused record).
``--quiet`` prints nothing.

May import the campaign (its :class:`~netproof.verifier.campaign.proving.Progress` and
:class:`~netproof.verifier.campaign.proving.Running` events) and rich (lazily).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from netproof.verifier.campaign.proving import Progress, Running, verdict_name

__all__ = ["ANNOUNCE_WORDS", "Bars", "Lines", "Quiet", "finished_line", "reporter"]

ANNOUNCE_WORDS = 1 << 16
"""An exhaustive check of at least this many words is announced (line per event) as it starts."""


def finished_line(p: Progress) -> str:
    """``[done/total] construction claim: verdict (seconds or cached)``."""
    took = "cached" if p.cached else f"{p.seconds:.1f}s"
    return f"[{p.done}/{p.total}] {p.construction} {p.claim}: {verdict_name(p.verdict)} ({took})"


class Lines:
    """One line per event on ``stream``: a long exhaustive check's start (its number of words)
    and every finished claim."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.announced: set[tuple[str, str]] = set()

    def running(self, r: Running) -> None:
        key = (r.construction, r.claim)
        if r.done == 0 and r.total >= ANNOUNCE_WORDS and key not in self.announced:
            self.announced.add(key)
            print(f"[start] {r.construction} {r.claim}: checking {r.total:,} words", file=self.stream, flush=True)

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
        from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        self.console = console if console is not None else Console(stderr=True)
        self.bars = RichProgress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), console=self.console, transient=True,
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
        if key not in self.tasks:
            self.tasks[key] = self.bars.add_task(f"{r.construction} {r.claim}", total=total, completed=r.done)
        else:
            self.bars.update(self.tasks[key], total=total, completed=r.done)

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
