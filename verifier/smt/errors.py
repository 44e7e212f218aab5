"""The two errors of the SMT engine: :class:`Unsupported` (part of a network or claim that an
encoding does not cover: it becomes ``Unknown("unsupported: ...")``, never a verdict) and
:class:`EncoderBugError` (an encoding that disagrees with the exact interpreter: a bug to report).

May import: nothing (the bottom of :mod:`netproof.verifier.smt`).
"""

from __future__ import annotations


class EncoderBugError(RuntimeError):
    """The SMT encoding disagrees with the exact interpreter: a ``sat`` model whose word the
    exact interpreter does not get wrong. Never a verdict: a bug to report."""


class Unsupported(Exception):
    """Part of the network (or claim) the encoder cannot encode faithfully; becomes
    ``Unknown("unsupported: ...")``."""


__all__ = ["EncoderBugError", "Unsupported"]
