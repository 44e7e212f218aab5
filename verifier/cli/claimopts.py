"""``--claims ID[,ID…]`` and ``-k EXPR``: the claim selection ``prove``, ``recheck`` and ``report``
share (:mod:`netproof.verifier.campaign.selection` parses and applies it).

May import the campaign's selection.
"""

from __future__ import annotations

import argparse
from typing import Any

from netproof.verifier.campaign.selection import ClaimFilter

__all__ = ["add_claim_options", "claim_filter"]


def add_claim_options(parser: Any) -> None:
    """Add ``--claims`` and ``-k`` to a subcommand's parser."""
    parser.add_argument(
        "--claims",
        action="append",
        default=None,
        metavar="ID[,ID...]",
        help="only these claims, by id (comma-separated; may be repeated); an id no chosen construction has is refused",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        default=None,
        metavar="EXPR",
        help="only the claims this expression matches, as pytest's -k: words joined by and/or/not and parentheses, "
        "each a case-insensitive substring of the claim id or the construction name (e.g. -k 'dyck and not Y5')",
    )


def claim_filter(args: argparse.Namespace) -> ClaimFilter:
    """The selection the command line asked for (a malformed ``-k`` refused here, exit 2)."""
    return ClaimFilter.parse(args.claims, args.keyword)
