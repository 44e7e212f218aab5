"""B-RASP and C-RASP: the program languages of the field, as plain data with a plain interpreter.

:mod:`.brasp` (Boolean RASP, masked hard attention) and :mod:`.crasp` (counting RASP, uniform
causal attention) follow ``docs/rasp-semantics.md``: programs are frozen expression trees built with
operators, :func:`~.brasp.accepts` / :func:`~.crasp.accepts` are the reference interpreters (the
oracle compiled networks are checked against), :func:`~.brasp.show` / :func:`~.crasp.show` print a
program in the papers' notation. The compilers live in :mod:`netproof.constructions.rasp`.

May import: the standard library and :mod:`netproof.verifier.claims.languages`.
"""

from . import brasp, crasp

__all__ = ["brasp", "crasp"]
