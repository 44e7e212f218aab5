"""The command line's usage error: a flag the command cannot take as given (``--check`` without
``--backend torch``, ``--n`` for a construction that reads every length, ...).

:class:`UsageError` is a :class:`~netproof.verifier.campaign.errors.CampaignError`, so that
``main`` prints both alike: one line ``netproof: error: <message>`` on stderr, exit status 2.

May import the campaign's error class only.
"""

from __future__ import annotations

from netproof.verifier.campaign.errors import CampaignError

__all__ = ["UsageError"]


class UsageError(CampaignError):
    """Bad command-line input: printed as one line, exit status 2."""
