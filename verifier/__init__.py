"""netproof's verifier: claims, verdicts, checkers and the command line.

Importing :mod:`netproof.verifier` imports neither z3 nor torch; the checkers import z3 when a claim
needs it.
"""

from netproof import __version__

__all__ = ["__version__"]
