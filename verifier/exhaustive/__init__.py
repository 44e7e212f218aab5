"""Exhaustive checking: every word of Σ^≤n through the exact interpreters (a proof for that n).

The public API (re-exported here and from :mod:`netproof.verifier.exhaustive.checker`):
:class:`Job` (a construction built for one set of parameters, with its trace cache),
:func:`check` (a claim over its bound), :func:`check_word` (a claim on one word), :func:`words`
and :func:`count_words` (the shortlex enumeration), :func:`format_value`; for a bound shared by
many workers, :func:`split` (its shards by word prefix), :func:`check_part` (one shard) and
:func:`merge` (the verdict of the whole bound from the shards' parts). Modules, by concern:
``job`` (words, jobs, shared helpers), ``wordwise`` (claims checked word by word), ``shards``
(a bound in shards), ``solver_claims``
(claims decided by z3 or sympy), ``recurrent``, ``simulation``, ``mirror``, and ``checker`` (the
dispatcher).

May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters, the solver
interface (:mod:`netproof.verifier.smtlib`) for the claims whose check is one z3 query; never the
SMT encoders, fuzzing, floats, campaigns or the CLI.
"""

from .checker import Job, check, check_word, count_words, format_value, words
from .shards import Part, Shard, check_part, merge, prefix_length, shardable, split

__all__ = [
    "Job",
    "Part",
    "Shard",
    "check",
    "check_part",
    "check_word",
    "count_words",
    "format_value",
    "merge",
    "prefix_length",
    "shardable",
    "split",
    "words",
]
