"""``netproof ledger``: the claims ledger page (``docs/CLAIMS.md``) from the proof records
(:mod:`netproof.verifier.campaign.ledger` builds it), of every built-in construction or of the
constructions named (built-in names, user modules ``FILE.py``, network files).

May import the campaign.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.ledger import DEFAULT_CACHE, build
from netproof.verifier.campaign.sources import Session
from netproof.verifier.campaign.store import write_atomic

from .checks import output_file
from .usage import UsageError

__all__ = ["add_parser", "cmd_ledger"]


def add_parser(sub: Any) -> None:
    """Register ``netproof ledger`` on the CLI's subparsers."""
    p_ledger = sub.add_parser(
        "ledger", help="one Markdown page: every claim with the verdict of its proof record"
    )
    p_ledger.add_argument(
        "names",
        nargs="*",
        help="constructions, user modules FILE.py or network files (default: every built-in)",
    )
    p_ledger.add_argument(
        "--proofs", default="proofs", help="directory of the proof records (default: proofs)"
    )
    p_ledger.add_argument(
        "--out",
        type=output_file,
        default="",
        help="write to this file (atomically) instead of stdout",
    )
    p_ledger.add_argument(
        "--no-cache",
        action="store_true",
        help="check every record anew (the results of the records' checks are otherwise kept in the user's cache directory)",
    )
    p_ledger.set_defaults(func=cmd_ledger)


def cmd_ledger(args: argparse.Namespace, session: Session) -> int:
    if not os.path.isdir(args.proofs):
        raise UsageError(
            f"no proof records at {args.proofs!r}: run `netproof prove` first or pass --proofs DIR"
        )
    if args.names:
        chosen = session.select(args.names, {})
        registry = {c.name: c for c in chosen}
        sources = {c.name: src for c in chosen if (src := session.source(c.name)) is not None}
        check_readable(args.proofs, registry)
        text = build(registry, args.proofs, sources, cache=None if args.no_cache else DEFAULT_CACHE)
    else:
        check_readable(args.proofs, session.registry())
        text = build(
            session.registry(), args.proofs, cache=None if args.no_cache else DEFAULT_CACHE
        )
    if args.out:
        write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def check_readable(proofs: str, names: Iterable[str]) -> None:
    """Refuse a record file of these constructions under ``proofs`` that is not JSON (cut short,
    an editor's half-saved file): the ledger would otherwise list its claim as having no record."""
    for name in names:
        folder = os.path.join(proofs, name)
        if not os.path.isdir(folder):
            continue
        for entry in sorted(os.listdir(folder)):
            path = os.path.join(folder, entry)
            if not entry.endswith(".json") or not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as fh:
                    json.loads(fh.read().decode("utf-8"))
            except (UnicodeDecodeError, RecursionError):
                problem = "it is not UTF-8 JSON (cut short in a character, or not text)"
            except json.JSONDecodeError as exc:
                problem = f"its JSON is cut short or malformed ({exc.msg} at line {exc.lineno} column {exc.colno})"
            except OSError as exc:
                problem = f"it cannot be read ({exc.strerror})"
            else:
                continue
            raise UsageError(
                f"{path} is not a readable proof record: {problem}; remove it, or run `netproof prove {name} --force` "
                "to write it again"
            )
