"""``netproof new``: write a commented starting module for a construction of the user's own
(:data:`netproof.verifier.campaign.usermod.TEMPLATE`).

May import the campaign (user modules, the built-in names).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.sources import Session, builtin_registry
from netproof.verifier.campaign.templates import PROGRAM_TEMPLATES, render_program_template
from netproof.verifier.campaign.usermod import check_name, module_filename, render_template

from .checks import output_path
from .usage import UsageError

__all__ = ["add_parser", "cmd_new"]


def add_parser(sub: Any) -> None:
    """Register ``netproof new`` on the CLI's subparsers."""
    p_new = sub.add_parser(
        "new", help="write a commented starting module for your own construction"
    )
    p_new.add_argument(
        "name",
        help="the construction's name: lowercase letters, digits and dashes (e.g. my-majority)",
    )
    p_new.add_argument(
        "--out",
        type=output_path,
        default="",
        help="the file to write (default: NAME with underscores, .py)",
    )
    p_new.add_argument(
        "--template",
        choices=("construction", "brasp", "crasp"),
        default="construction",
        help="construction: a hand-built network (default); brasp / crasp: a B-RASP / C-RASP program (docs/rasp.md)",
    )
    p_new.set_defaults(func=cmd_new)


def cmd_new(args: argparse.Namespace, session: Session) -> int:
    check_name(args.name)
    if args.name in builtin_registry():
        raise UsageError(
            f"{args.name!r} is the name of a built-in construction; pick another (e.g. 'my-{args.name}')"
        )
    path = args.out or module_filename(args.name)
    if os.path.isdir(path):
        path = os.path.join(path, module_filename(args.name))
    if not path.endswith(".py"):
        raise UsageError(f"--out {path!r} must end in .py (netproof takes user modules as FILE.py)")
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(
                render_template(args.name)
                if args.template == "construction"
                else render_program_template(args.name, args.template)
            )
    except FileExistsError:
        raise UsageError(
            f"{path} exists; not overwriting it (pick another NAME or --out PATH)"
        ) from None
    if args.template != "construction":
        return _written_program(path, args.name, args.template)
    print(f"wrote {path}: construction {args.name} (MAJORITY with one uniform-attention layer)")
    print(f"next: netproof run {path} 0110 --trace")
    print(f"      netproof prove {path}")
    return EXIT_OK


def _written_program(path: str, name: str, template: str) -> int:
    """What ``new --template brasp|crasp`` prints after writing the program module."""
    word = "bbab" if template == "brasp" else '"(())"'
    print(f"wrote {path}: program {name} ({PROGRAM_TEMPLATES[template][1]})")
    print(f"next: netproof run {path} {word} --trace")
    print(f"      netproof compile {path} --out {name.replace('-', '_')}.json")
    print(f"      netproof prove {path}")
    return EXIT_OK
