"""netproof's verifier: claims, verdicts, checkers and the command line.

Importing :mod:`verifier` imports neither z3 nor torch; the checkers import z3 when a claim
needs it.
"""

__version__ = "0.1.0"
