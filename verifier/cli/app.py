"""The ``netproof`` parser and entry point: :func:`build_parser` registers every command's
module, :func:`main` runs one command in a fresh
:class:`~netproof.verifier.campaign.sources.Session` and turns a bad input into one line on
stderr with exit status 2.

Any other exception is a crash in netproof itself: one line ``netproof: internal error: <type>:
<message> (<REPORT_HINT>)`` and exit status 70
(:data:`~netproof.verifier.campaign.errors.EXIT_INTERNAL`), never a traceback and never a
verdict's status; ``NETPROOF_DEBUG=1`` in the environment raises it instead (the traceback, for
developers). A file-system error on a path the user gave (a folder that cannot be made, a full
disk) is a usage error; Ctrl-C exits 130. An exception raised in the user's own code (a builder
of a user module raising ``TypeError``) is the user's error too: exit 2, one line naming their
file, line and function.

User-facing lines never start with a Python class name (``WordError: ...`` prints as ``...``),
install hints fit where netproof was installed from (``pip install -e '.[torch]'`` in a
checkout, ``pip install 'PATH/netproof-0.2.0-py3-none-any.whl[torch]'`` for a wheel; never a
package index), a
mistyped command gets a "did you mean" (difflib), and ``netproof --version`` prints the
installed version (these messages are :mod:`.messages`'s).

May import the command modules of this package and the campaign's error class.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from netproof.verifier.campaign.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    REPORT_HINT,
    CampaignError,
    InternalError,
)
from netproof.verifier.campaign.sources import Session

from .compile import add_parser as add_compile
from .completion import add_parser as add_completion
from .export import add_parser as add_export
from .fuzz import add_parser as add_fuzz
from .ledger import add_parser as add_ledger
from .list import add_parser as add_list
from .messages import one_line, user_code_error, user_message, version
from .new import add_parser as add_new
from .prove import add_parser as add_prove
from .recheck import add_parser as add_recheck
from .report import add_parser as add_report
from .run import add_parser as add_run

__all__ = ["build_parser", "main", "one_line"]

_INVALID_CHOICE = re.compile(
    r"argument (?P<arg>[\w/-]+): invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found is not None:
            choices = re.findall(r"'([^']*)'", found["choices"])
            close = difflib.get_close_matches(found["value"], choices, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            message = f"argument {found['arg']}: invalid choice: {found['value']!r}; {hint}choose from {', '.join(choices)}"
        self.exit(EXIT_USAGE, f"netproof: error: {one_line(message)} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (``list``, ``run``, ``export``, ``fuzz``, ``ledger``, ``prove``,
    ``recheck``, ``new``, ``precision``, ``plot``); each sets ``func(args, session)``."""
    parser = _Parser(prog="netproof", description="Exact, checkable neural-network constructions.")
    parser.add_argument("--version", action="version", version=f"netproof {version()}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)
    for add in (
        add_list,
        add_run,
        add_export,
        add_compile,
        add_fuzz,
        add_ledger,
        add_prove,
        add_recheck,
        add_new,
    ):
        add(sub)
    add_report(sub)

    # their own modules, imported here: the float engines (torch, matplotlib) load only when run
    from .plot import add_parser as add_plot
    from .precision import add_parser as add_precision

    add_precision(sub)
    add_plot(sub)
    from .show import add_parser as add_show

    add_show(sub)
    from .check_model import add_parser as add_check_model
    from .import_model import add_parser as add_import

    add_import(sub)
    add_check_model(sub)
    from .synth import add_parser as add_synth

    add_synth(sub)
    add_completion(sub, parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``netproof`` command (``argv`` without the program name; None: ``sys.argv``)
    and return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args, Session()))
    except CampaignError as exc:
        print(f"netproof: error: {user_message(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("netproof: interrupted; no record was half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # sys.exit() in a user's module would pass for netproof's status
        users = None if _debugging() else user_code_error(exc)
        if users is None:
            raise
        print(f"netproof: error: {one_line(users)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `netproof list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        if exc.errno not in _PATH_ERRORS or exc.filename is None or _debugging():
            return _internal(exc)
        print(f"netproof: error: cannot use {exc.filename!r}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        users = None if _debugging() or isinstance(exc, InternalError) else user_code_error(exc)
        if users is not None:
            print(f"netproof: error: {one_line(users)}", file=sys.stderr)
            return EXIT_USAGE
        return _internal(exc)


_PATH_ERRORS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.ENOENT,
        errno.EEXIST,
        errno.ENOSPC,
        errno.EDQUOT,
        errno.ENAMETOOLONG,
        errno.ELOOP,
    }
)
"""The errors of a path the user gave (a folder that cannot be made, a full disk): usage errors, exit 2."""


def _debugging() -> bool:
    return os.environ.get("NETPROOF_DEBUG", "") not in ("", "0")


def _internal(exc: Exception) -> int:
    """An uncaught exception: one line on stderr naming it and where to report it, exit status
    :data:`EXIT_INTERNAL`; with ``NETPROOF_DEBUG=1`` it is raised again (its traceback shown)."""
    if _debugging():
        raise exc
    what = str(exc) if isinstance(exc, InternalError) else f"{type(exc).__name__}: {exc}"
    what = " ".join(what.split())
    print(
        f"netproof: internal error: {what} ({REPORT_HINT})",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
