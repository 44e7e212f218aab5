"""``netproof ledger``: the claims ledger page (``docs/CLAIMS.md``) from the proof records
(:mod:`netproof.verifier.campaign.ledger` builds it), of every built-in construction or of the
constructions named (built-in names, user modules ``FILE.py``, network files).

May import the campaign.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.ledger import build
from netproof.verifier.campaign.sources import Session
from netproof.verifier.campaign.store import write_atomic

from .usage import UsageError

__all__ = ["add_parser", "cmd_ledger"]


def add_parser(sub: Any) -> None:
    """Register ``netproof ledger`` on the CLI's subparsers."""
    p_ledger = sub.add_parser("ledger", help="one Markdown page: every claim with the verdict of its proof record")
    p_ledger.add_argument(
        "names", nargs="*", help="constructions, user modules FILE.py or network files (default: every built-in)"
    )
    p_ledger.add_argument("--proofs", default="proofs", help="directory of the proof records (default: proofs)")
    p_ledger.add_argument("--out", default="", help="write to this file (atomically) instead of stdout")
    p_ledger.set_defaults(func=cmd_ledger)


def cmd_ledger(args: argparse.Namespace, session: Session) -> int:
    if not os.path.isdir(args.proofs):
        raise UsageError(f"no proof records at {args.proofs!r}: run `netproof prove` first or pass --proofs DIR")
    if args.names:
        chosen = session.select(args.names, {})
        registry = {c.name: c for c in chosen}
        sources = {c.name: src for c in chosen if (src := session.source(c.name)) is not None}
        text = build(registry, args.proofs, sources)
    else:
        text = build(session.registry(), args.proofs)
    if args.out:
        write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK
