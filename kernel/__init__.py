"""netproof.kernel: an independent proof checker, small enough to read in an afternoon.

It checks a proof record (JSON) against a network file, from the two files alone: its own reader
of the network file format (:mod:`.netfile`), its own exact interpreter (:mod:`.interpret`), its
own definitions of the languages claims name (:mod:`.languages`) and written-down rules
(:mod:`.check`). It imports nothing from the rest of netproof (a test enforces it): only the
standard library (``fractions`` for exact rationals) and, for its solver rules, the solvers'
Python bindings. What it trusts, checks and refuses: ``docs/kernel.md``.
"""

from .check import MAX_WORDS, KernelResult, check_record
from .netfile import KernelError, Refused

__all__ = ["MAX_WORDS", "KernelError", "KernelResult", "Refused", "check_record"]
