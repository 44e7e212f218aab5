"""The ``netproof`` parser and entry point: :func:`build_parser` registers every command's
module, :func:`main` runs one command in a fresh
:class:`~netproof.verifier.campaign.sources.Session` and turns a bad input into one line on
stderr with exit status 2.

May import the command modules of this package and the campaign's error class.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_USAGE, CampaignError
from netproof.verifier.campaign.sources import Session

from .export import add_parser as add_export
from .fuzz import add_parser as add_fuzz
from .ledger import add_parser as add_ledger
from .list import add_parser as add_list
from .new import add_parser as add_new
from .prove import add_parser as add_prove
from .recheck import add_parser as add_recheck
from .run import add_parser as add_run

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"netproof: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (``list``, ``run``, ``export``, ``fuzz``, ``ledger``, ``prove``,
    ``recheck``, ``new``, ``precision``, ``plot``); each sets ``func(args, session)``."""
    parser = _Parser(prog="netproof", description="Exact, checkable neural-network constructions.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)
    for add in (add_list, add_run, add_export, add_fuzz, add_ledger, add_prove, add_recheck, add_new):
        add(sub)

    # their own modules, imported here: the float engines (torch, matplotlib) load only when run
    from .plot import add_parser as add_plot
    from .precision import add_parser as add_precision

    add_precision(sub)
    add_plot(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``netproof`` command (``argv`` without the program name; None: ``sys.argv``)
    and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args, Session()))
    except CampaignError as exc:
        print(f"netproof: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("netproof: interrupted; no record was half-written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `netproof list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
