"""The error class of campaigns and the exit statuses of a proof run.

:class:`CampaignError` is the one error a campaign raises for bad input (an unknown construction
or claim, a parameter the construction refuses, a malformed user module or network file, a
bound or timeout out of range); its message names the value and the fix, in one line, so that
the command line prints it as it is (``netproof: error: <message>``, exit status 2).

Imports nothing of netproof: every other module of the campaign (and the CLI) imports it.
"""

from __future__ import annotations

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REFUTED",
    "EXIT_TERMINATED",
    "EXIT_UNKNOWN",
    "EXIT_USAGE",
    "REPORT_HINT",
    "CampaignError",
    "InternalError",
    "Interrupted",
]

EXIT_OK = 0
"""Every claim proved (for its bound)."""
EXIT_REFUTED = 1
"""Some claim refuted."""
EXIT_USAGE = 2
"""Bad input (a :class:`CampaignError`): nothing was run."""
EXIT_UNKNOWN = 3
"""Some claim unknown (undecided, unsupported, a solver timeout) and none refuted."""
EXIT_INTERNAL = 70
"""An internal error of netproof (a crash in a checker or a solver call that failed twice): never a
verdict, nothing recorded for the claim it hit (``EX_SOFTWARE`` of ``sysexits.h``)."""
EXIT_INTERRUPTED = 130
"""Stopped by Ctrl-C (128 + SIGINT), the records of the finished claims kept."""
EXIT_TERMINATED = 143
"""Stopped by SIGTERM (128 + 15), handled like Ctrl-C: the records of the finished claims kept."""

REPORT_HINT = (
    "please report it as an issue in the repository you got netproof from, "
    "with what netproof --version prints and the command line"
)
"""How to report an internal error (printed with it): netproof has no address of its own, so the
hint names none."""


class CampaignError(ValueError):
    """Bad input to a campaign: one line naming the value and how to fix it."""


class Interrupted(KeyboardInterrupt):
    """A proof run stopped by Ctrl-C: ``done`` of ``total`` claims finished (their records, if
    any, are written); the command line says so in one line and exits with :data:`EXIT_INTERRUPTED`."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"interrupted: {done} of {total} claims done")
        self.done = done
        self.total = total


class InternalError(RuntimeError):
    """A crash inside netproof itself (not the user's input or code): the command line prints one
    line with where to report it and exits with :data:`EXIT_INTERNAL`; no record is written for
    the claim it hit."""
