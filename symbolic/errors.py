"""Errors raised by the IR and its interpreters.

One base class for the package; every message names the value, the place (block and dim) and
the likely fix.
"""

from __future__ import annotations


class SymbolicError(Exception):
    """Base class of every error raised by :mod:`netproof.symbolic`."""


class InexactNumberError(SymbolicError, TypeError):
    """A float (or another inexact number) was handed to the exact IR."""


class NetworkValidationError(SymbolicError, ValueError):
    """A network is malformed: a dim is read before it exists, heads overlap, and so on."""


class WordError(SymbolicError, ValueError):
    """A word contains a symbol outside the network's alphabet, or has the wrong length."""


class NotRationalError(SymbolicError, ValueError):
    """The exact (Fraction) interpreter met a value that is not rational (√, e^c)."""


class MissingExtraError(SymbolicError, ImportError):
    """An optional library (torch) is needed and not installed."""
