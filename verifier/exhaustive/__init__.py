"""Exhaustive checking: every word of Σ^≤n through the exact interpreters (a proof for that n).

Owns :class:`~netproof.verifier.exhaustive.checker.Job` (a construction built for one set of
parameters, with its trace cache) and :func:`~netproof.verifier.exhaustive.checker.check`.
May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters, the solver
interface (:mod:`netproof.verifier.smtlib`) for the claims whose check is one z3 query; never the
SMT encoders, fuzzing, floats, campaigns or the CLI.
"""
