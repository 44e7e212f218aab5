"""``netproof compile``: a B-RASP or C-RASP program compiled to its exact network, written as a
JSON network file (the format of ``netproof export``: ``symbolic/netfile.py``).

The program is a library program (``netproof compile brasp-dyck1-depth2``) or one of a user
module's ``PROGRAMS`` (``netproof compile prog.py:NAME``); the file's ``extra`` names it (and,
for a module's program, the module's path relative to the file's folder and the fingerprint of
the network it built), so ``netproof prove FILE.json`` and ``run FILE.json`` check the program's
claims on the network as the file holds it, loading the module again where it has to.
With ``--out`` the network's size goes to stderr.

May import the campaign (constructions), the registry (which constructions are programs), the
IR's size and the ``export`` command it shares its writer with.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from netproof.symbolic import Network
from netproof.symbolic.size import network_size
from netproof.verifier.campaign.sources import Session

from .export import cmd_export
from .usage import UsageError

__all__ = ["add_parser", "cmd_compile"]


def add_parser(sub: Any) -> None:
    """Register ``netproof compile`` on the CLI's subparsers."""
    p = sub.add_parser("compile", help="compile a B-RASP or C-RASP program to its network file")
    p.add_argument(
        "name",
        help="a program: a library one (brasp-..., crasp-..., see `netproof list`) or FILE.py:NAME of a module's PROGRAMS",
    )
    p.add_argument(
        "--format",
        choices=("json",),
        default="json",
        help="json: the netproof network format (as `netproof export`)",
    )
    p.add_argument("--out", default="", help="write to this file (atomically) instead of stdout")
    p.set_defaults(func=cmd_compile)


def cmd_compile(args: argparse.Namespace, session: Session) -> int:
    from netproof.constructions import is_program

    c = session.one(args.name, "compile")
    if not is_program(c):
        raise UsageError(
            f"{c.name} is a construction, not a B-RASP or C-RASP program; its network is already built: "
            f"`netproof export {args.name}` writes it"
        )
    export_args = argparse.Namespace(
        name=args.name,
        param=[],
        format=args.format,
        dtype="float64",
        n=None,
        out=args.out,
        announce=False,
    )
    code = cmd_export(export_args, session)
    if args.out:
        net = c.network({})
        assert isinstance(net, Network)  # a compiled program is always a Network
        print(f"wrote {args.out}: {c.name} compiled to {network_size(net)}", file=sys.stderr)
    return code
