"""``netproof report``: the proof report, a static HTML site (one page per construction: claims,
verdicts and bounds, errata with counterexample traces, links to every record and ``.smt2``
query, copied into the site) from the proof records (:mod:`netproof.verifier.campaign.report`
builds it), of every built-in construction or of the constructions named; ``--claims`` and
``-k`` keep only the claims they select (and the constructions that have one).

May import the campaign.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.ledger import DEFAULT_CACHE
from netproof.verifier.campaign.report import build_site
from netproof.verifier.campaign.selection import select_claims
from netproof.verifier.campaign.sources import Session

from .checks import output_dir
from .claimopts import add_claim_options, claim_filter
from .ledger import check_readable
from .usage import UsageError

__all__ = ["add_parser", "cmd_report"]


def add_parser(sub: Any) -> None:
    """Register ``netproof report`` on the CLI's subparsers."""
    p = sub.add_parser(
        "report",
        help="a static HTML site: every claim's verdict, the errata with traces, the records",
    )
    p.add_argument(
        "names",
        nargs="*",
        help="constructions, user modules FILE.py or network files (default: every built-in)",
    )
    p.add_argument(
        "--proofs", default="proofs", help="directory of the proof records (default: proofs)"
    )
    p.add_argument(
        "--out",
        type=output_dir,
        default="report",
        help="folder to write the site in (default: report); a report written before there is replaced",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="check every record anew (the results of the records' checks are otherwise kept in the user's cache directory)",
    )
    add_claim_options(p)
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace, session: Session) -> int:
    if not os.path.isdir(args.proofs):
        raise UsageError(
            f"no proof records at {args.proofs!r}: run `netproof prove` first or pass --proofs DIR"
        )
    wanted = claim_filter(args)
    cache = None if args.no_cache else DEFAULT_CACHE
    if args.names:
        chosen = session.select(args.names, {})
        registry = {c.name: c for c in chosen}
        sources = {c.name: src for c in chosen if (src := session.source(c.name)) is not None}
        registry = select_claims(registry, wanted)
        check_readable(args.proofs, registry)
        pages = build_site(
            registry, args.proofs, args.out, sources, cache=cache, every_folder=False
        )
    else:
        registry = select_claims(dict(session.registry()), wanted)
        check_readable(args.proofs, registry)
        pages = build_site(
            registry, args.proofs, args.out, cache=cache, every_folder=wanted.everything
        )
    print(
        f"wrote {len(pages)} pages to {args.out}/; open {os.path.join(args.out, 'index.html')} in a browser"
    )
    return EXIT_OK
