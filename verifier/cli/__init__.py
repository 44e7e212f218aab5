"""The ``netproof`` command line (also ``python -m netproof``): one thin module per command,
each parsing its arguments, calling the library (:mod:`netproof.verifier.campaign` and the
engines) and printing.

    netproof list [NAME|FILE.py...] [--json]
    netproof run NAME WORD|@FILE|- [-p key=value]... [--backend auto|exact|sympy|interval|torch] [--trace] [--json]
                 [--device cpu|cuda] [--dtype float64|float32|float16|bfloat16] [--check]
    netproof prove [NAME...] [-p key=value]... [--max-n N] [--method exhaustive|smt|all] [--timeout S] [--json] [--out DIR]
                   [--jobs N] [--force] [--executor local|ray [--address ADDR]]
    netproof recheck LOG.json|DIR... [--solver cvc5|z3] [--timeout S] [--json]
    netproof new NAME [--out PATH]
    netproof completion bash|zsh
    netproof --version

(and ``export``, ``compile``, ``fuzz``, ``ledger``, ``report``, ``precision``, ``plot``, ``show``,
``import``, ``check-model``: see ``docs/cli.md``). Wherever a construction NAME is expected, a
user module FILE.py (every construction or program it defines) or FILE.py:NAME (one of them)
works too: see :mod:`netproof.verifier.campaign.usermod`.

Exit status: 0 success (``prove``: every claim proved), 1 a claim refuted, 3 a claim unknown and
none refuted, 2 a usage error (one line on stderr, no traceback), 70 an internal error (one line
saying where to report it; never a verdict), 130 Ctrl-C, 143 SIGTERM (finished records kept).

Modules: :mod:`.app` (the parser and :func:`main`), :mod:`.usage` (the usage error),
:mod:`.checks` (argument validators), :mod:`.messages` (what errors say), :mod:`.live` (progress), one per command: :mod:`.list`,
:mod:`.run`, :mod:`.export`, :mod:`.compile`, :mod:`.fuzz`, :mod:`.ledger`, :mod:`.report`,
:mod:`.prove`, :mod:`.recheck`, :mod:`.new`, :mod:`.precision`, :mod:`.plot`, :mod:`.show`,
:mod:`.import_model`, :mod:`.check_model`, :mod:`.completion`.

May import the campaign and everything below it; nothing imports the CLI.
"""

from .app import build_parser, main

__all__ = ["build_parser", "main"]
