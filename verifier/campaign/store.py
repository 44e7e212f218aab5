"""Where a campaign's records go: their paths, their JSON text, and atomic writes.

A proof record is one deterministic JSON file per (construction, claim, bound) under an output
directory (``proofs/`` by default on the command line), with the ``.smt2`` file of every solver
query beside it; its format and path scheme belong to :mod:`netproof.verifier.smt.prooflog`,
which this module puts behind the campaign's names, so that the command line, the ledger and
the float experiments write and find records one way.

May import the vocabulary and the proof-log module of the SMT engine (lazily: importing the
campaign loads no solver).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from netproof.verifier.claims import Claim, Construction, Verdict

if TYPE_CHECKING:
    from netproof.verifier.smtlib import Outcome

__all__ = ["dumps", "record", "record_path", "write_atomic", "write_record"]


def record_path(
    out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, kind: str = "prove"
) -> str:
    """``<out>/<construction>/<claim id>.n<bound>[.<params hash>].json`` (``.all`` for claims
    without a word bound, ``.fact`` for facts about numbers, ``.fuzz`` for fuzz logs:
    ``kind="fuzz"``)."""
    from netproof.verifier.smt.prooflog import record_path as path_of

    return path_of(out, c, values, claim, bound, kind)


def record(
    c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, outcome: Outcome | Verdict
) -> dict[str, Any]:
    """The JSON record of one verdict (or of an engine's outcome: the verdict with its solver
    queries and lemma tree)."""
    from netproof.verifier.smt.prooflog import record as record_of

    return record_of(c, values, claim, bound, outcome)


def write_record(out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None,
                 outcome: Outcome) -> str:
    """Write the record of ``outcome`` and its ``.smt2`` files under ``out`` (each atomically,
    the record last); returns the record's path."""
    from netproof.verifier.smt.prooflog import write_log

    return write_log(out, c, values, claim, bound, outcome)


def dumps(rec: Mapping[str, Any]) -> str:
    """A record's file text: indented JSON with sorted keys, UTF-8 as is, a final newline."""
    from netproof.verifier.smt.prooflog import dumps as dumps_record

    return dumps_record(rec)


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace`` (the folder is
    made): an interrupted run leaves the old file or the new one, never half of one."""
    from netproof.verifier.smt.prooflog import write_atomic as write

    write(path, text)
