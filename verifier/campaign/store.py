"""Where a campaign's records go: their paths, their JSON text, atomic writes, and the results
store that never loses or downgrades a record.

A proof record is one deterministic JSON file per (construction, parameters, claim, bound,
kind of proof) under an output directory (``proofs/`` by default on the command line), with the
``.smt2`` file of every solver query beside it; its format belongs to
:mod:`netproof.verifier.smt.prooflog`, which this module puts behind the campaign's names, so
that the command line, the ledger and the float experiments write and find records one way.

File names: ``<construction>/<claim id>.n<bound>[.<params hash>].json`` (:func:`record_path`),
the name every record had before the method was part of a record's identity. Records are of two
kinds (:func:`kind_of`, read from the record's ``method``): an SMT proof of a word claim (the
``smt`` and ``all`` methods: ``smt (z3)…`` or ``exhaustive (…) + smt (z3)…``, or the smt
method's unknown) or not (every word enumerated, a lemma's query, a structural proof, a fact). A
record takes the plain name when it is free or holds a record of the same kind; else it goes
beside it, ``.smt`` (or ``.exhaustive``) before ``.json`` (:func:`slot`), so that an SMT run
after an exhaustive one (or the other way round) changes no record of the other kind.

Two rules keep work: a run writes each record as its claim is done, atomically
(:func:`write_atomic`: the old file or the new one, never half of one), and a new verdict never
replaces a stronger one of the same claim, network and bound in its file (:func:`rank`:
unknown < proved or refuted for the bound < proved for every length); the run keeps the
stronger record and says so (:func:`store`). A record that says what the new one says (the same
fields but for the tool's and the solver's version) is kept as it is.

A rerun reuses a record (:func:`find_cached`) whose construction, parameters, network
fingerprint(s), claim and bound are today's and whose method is the one asked for
(:func:`recorded_method`: ``all`` for an ``exhaustive (…) + smt (z3)…`` proof, ``smt`` for an
SMT proof of a word claim, ``exhaustive`` for the rest); never an unknown.

"Proved for every length" is a record whose proof covers every word of every length, read from
its structured fields alone, never from the free text of ``detail``: a proved record whose
theorem queries are all every-length queries (``<claim> every n: …``: an invariant's three
queries, the position-class query, the layer induction's steps), in its lemma tree or at its
top (two languages compared), a proved trace property's lemma tree (each one a proof for every
length), or a structural proof (no bound). :func:`every_length` reads it from a record; the
strict reader (:func:`netproof.verifier.smt.prooflog.verify_record`) checks exactly those
fields against their rebuild, so a record that passes it cannot claim every length by its
wording.

May import the vocabulary, the IR's word functions, and the proof-log module of the SMT engine
(lazily: importing the campaign loads no solver).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from netproof.verifier.claims import Claim, Construction, Proved, Refuted, Unknown, Verdict

if TYPE_CHECKING:
    from netproof.verifier.smtlib import Outcome

__all__ = [
    "EVERY_LONGER",
    "KINDS",
    "Stored",
    "dumps",
    "every_length",
    "find_cached",
    "identity",
    "kind_of",
    "rank",
    "read_record",
    "record",
    "record_path",
    "recorded_method",
    "slot",
    "store",
    "verdict_of",
    "write_atomic",
    "write_record",
]

KINDS = ("exhaustive", "smt")
"""The two kinds of record (see :func:`kind_of`); the second name of a file says its kind."""

EVERY_LONGER = "and every longer one"
"""The words of a proved record's ``detail`` that say the proof covers every longer word too."""

_IDENTITY = ("construction", "params", "network", "claim", "bound")
"""The fields that say which claim, network and bound a record is about."""


def record_path(
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    kind: str = "prove",
) -> str:
    """``<out>/<construction>/<claim id>.n<bound>[.<params hash>].json`` (``.all`` for claims
    without a word bound, ``.fact`` for facts about numbers, ``.fuzz`` for fuzz logs:
    ``kind="fuzz"``): the untagged name, which the exhaustive method writes."""
    from netproof.verifier.smt.prooflog import record_path as path_of

    return path_of(out, c, values, claim, bound, kind)


def record(
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    outcome: Outcome | Verdict,
) -> dict[str, Any]:
    """The JSON record of one verdict (or of an engine's outcome: the verdict with its solver
    queries and lemma tree)."""
    from netproof.verifier.smt.prooflog import record as record_of

    return record_of(c, values, claim, bound, outcome)


def write_record(
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    outcome: Outcome,
) -> str:
    """Write the record of ``outcome`` and its ``.smt2`` files under ``out`` at the untagged
    name (each atomically, the record last); returns the record's path."""
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


# --------------------------------------------------------------------------- reading and ranking


def read_record(path: str) -> dict[str, Any] | None:
    """The record at ``path``, or None where there is none (or none that parses as a JSON
    object: such a file is not a record to keep or to reuse)."""
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def every_length(rec: Mapping[str, Any]) -> bool:
    """Whether a record proves its claim for every word of every length (see the module's
    docstring)."""
    if rec.get("verdict") != "proved":
        return False
    given = rec.get("claim")
    claim: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    every = f"{claim.get('id')} every n: "
    tree = rec.get("lemmas")
    if isinstance(tree, Mapping):
        if claim.get("kind") == "TraceProperty":
            return True  # a trace property's lemma tree proves it for every length, or is rejected
        names = [q.get("name") for q in tree.get("queries") or () if isinstance(q, Mapping)]
        return bool(names) and all(str(n).startswith(every) for n in names)
    names = [q.get("name") for q in rec.get("queries") or () if isinstance(q, Mapping)]
    if names and all(str(n).startswith(every) for n in names):
        return True
    return rec.get("bound") is None and str(rec.get("method", "")).startswith("structural")


def rank(rec: Mapping[str, Any]) -> int:
    """0 for unknown, 1 for proved or refuted within the bound, 2 for proved for every length."""
    if every_length(rec):
        return 2
    return 1 if rec.get("verdict") in ("proved", "refuted") else 0


def identity(rec: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields that say which construction, parameters, network, claim and bound a record
    is about, as comparable text."""
    return tuple(json.dumps(rec.get(k), sort_keys=True) for k in _IDENTITY)


def recorded_method(rec: Mapping[str, Any]) -> str:
    """The ``--method`` that wrote a record, from its ``method``: ``all`` for a proof by both
    (``exhaustive (…) + smt (z3)…``), ``smt`` for an SMT proof or SMT unknown of a word claim
    (recognition, values, trace properties, facts with a statable form) or the smt method's unknown of a claim it does not cover, else
    ``exhaustive``."""
    method = str(rec.get("method", ""))
    kind = (rec.get("claim") or {}).get("kind")
    if " + smt (z3)" in method and " + smt (z3 nlsat)" not in method:
        return "all"
    if method.startswith("smt (z3)") and (
        kind in ("Recognizes", "ValueIs", "TraceProperty", "ExactFact")
        or rec.get("verdict") == "unknown"
    ):
        return "smt"
    return "exhaustive"


def kind_of(rec: Mapping[str, Any]) -> str:
    """``smt`` for a record the smt or all method wrote (:func:`recorded_method`), else
    ``exhaustive``."""
    return "exhaustive" if recorded_method(rec) == "exhaustive" else "smt"


def _tagged(plain: str, kind: str) -> str:
    return f"{plain[: -len('.json')]}.{kind}.json"


def slot(
    out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, kind: str
) -> str:
    """The file a record of ``kind`` goes in: the plain name (:func:`record_path`) when it is
    free or holds a record of that kind, else the plain name with ``.<kind>`` before ``.json``."""
    plain = record_path(out, c, values, claim, bound)
    there = read_record(plain)
    return plain if there is None or kind_of(there) == kind else _tagged(plain, kind)


def verdict_of(rec: Mapping[str, Any], alphabet: tuple[str, ...]) -> Verdict:
    """The verdict a record holds (a refutation's counterexample read back into symbols of
    ``alphabet``)."""
    from netproof.symbolic import tokenize

    method = str(rec["method"])
    if rec["verdict"] == "proved":
        return Proved(method, int(rec.get("checked", 0)), str(rec.get("detail", "")))
    if rec["verdict"] == "refuted":
        text = rec.get("counterexample")
        word = None if text is None else tokenize(alphabet, text)
        return Refuted(method, str(rec.get("detail", "")), word, dict(rec.get("values") or {}))
    return Unknown(method, str(rec.get("reason", "")))


def find_cached(
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bounds: tuple[int | None, ...],
    method: str | Collection[str],
) -> tuple[str, dict[str, Any]] | None:
    """A record under ``out`` that ``method`` wrote for this claim (or, given several, one of the
    methods as :func:`recorded_method` names them), on this very network and parameters, at one
    of ``bounds`` (a structural proof is recorded without a bound): its path and contents, or
    None. A proof for every length is reused whatever method wrote it: no run can write a
    stronger record of the claim, so the store would keep it anyway. An unknown is never
    reused (a rerun may decide it)."""
    accept = {method} if isinstance(method, str) else set(method)
    for bound in bounds:
        wanted = identity(record(c, values, claim, bound, Unknown("cache lookup", "")))
        plain = record_path(out, c, values, claim, bound)
        for path in (plain, *(_tagged(plain, kind) for kind in KINDS)):
            rec = read_record(path)
            if rec is None or identity(rec) != wanted or rec.get("verdict") == "unknown":
                continue
            if recorded_method(rec) not in accept and not (
                rec.get("verdict") == "proved" and every_length(rec)
            ):
                continue
            if bound is None and claim_has_words(claim) and not every_length(rec):
                continue
            return path, rec
    return None


def claim_has_words(claim: Claim) -> bool:
    """Whether a claim is about words (not a lemma over numbers or a fact)."""
    from netproof.verifier.claims import BlockIdentity, ExactFact, ForAll, Identity

    return not isinstance(claim, (BlockIdentity, Identity, ExactFact, ForAll))


@dataclass(frozen=True)
class Stored:
    """Where a verdict went: ``path`` of the record now on disk, and ``kept``, the stronger
    record that was there and stays (None when the new record was written)."""

    path: str
    kept: dict[str, Any] | None = None


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two records say the same (every field but the tool's and the solver's version)."""

    def strip(r: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in r.items() if k not in ("tool", "solver")} | {
            "solver": (r.get("solver") or {}).get("name")
        }

    return strip(a) == strip(b)


def store(
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    outcome: Outcome,
) -> Stored:
    """Write the record of ``outcome`` under ``out`` in its file (:func:`slot`; query files
    first, the record last, each atomically; a compiled program's ``program.rasp`` beside it,
    always), unless that file already holds a stronger record
    of the same claim, network and bound (:func:`rank`: that one is kept and returned as
    ``kept``) or one that says the same (kept as it is)."""
    rec = record(c, values, claim, bound, outcome)
    plain = record_path(out, c, values, claim, bound)
    target = slot(out, c, values, claim, bound, kind_of(rec))
    if target != plain:
        _retarget(rec, target, plain)
    if c.program_file is not None:  # a compiled program: its file beside, for the kernel
        write_atomic(os.path.join(os.path.dirname(target), "program.rasp"), c.program_file())
    old = read_record(target)
    if old is not None and identity(old) == identity(rec):
        if rank(old) > rank(rec):
            return Stored(target, old)
        if _same(old, rec):
            return Stored(target)
    if target == plain:
        write_record(out, c, values, claim, bound, outcome)
    else:
        _write_tagged(target, rec, outcome)
    return Stored(target)


def _retarget(rec: dict[str, Any], target: str, plain: str) -> None:
    """Point a record's query files at the folder named after ``target`` instead of ``plain``
    (so that the query files of records side by side never mix)."""
    old_stem = os.path.basename(plain)[: -len(".json")]
    new_stem = os.path.basename(target)[: -len(".json")]
    for entry in _entries(rec):
        folder, name = entry["file"].rsplit("/", 1)
        parts = folder.split("/")
        if parts[-1] == old_stem:
            parts[-1] = new_stem
        entry["file"] = "/".join([*parts, name])


def _write_tagged(target: str, rec: dict[str, Any], outcome: Outcome) -> None:
    """Write a record (its query files already pointed at their folder) at a tagged name: the
    query files first, then the record; query files of an earlier record there that this one
    does not name are removed."""
    texts = {q.sha256: q.smt2 for q in outcome.queries}
    if outcome.lemmas is not None:
        for node in outcome.lemmas.walk():
            texts.update({q.sha256: q.smt2 for q in node.queries})
    base = os.path.dirname(target)
    kept: set[str] = set()
    for entry in _entries(rec):
        path = os.path.normpath(os.path.join(base, entry["file"]))
        write_atomic(path, texts[entry["sha256"]])
        kept.add(path)
    write_atomic(target, dumps(rec))
    for folder in {os.path.dirname(p) for p in kept}:
        for name in sorted(os.listdir(folder)):
            stale = os.path.join(folder, name)
            if name.endswith(".smt2") and stale not in kept:
                os.unlink(stale)


def _entries(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every query entry of a record: its own and its lemma tree's."""
    entries = list(rec.get("queries") or [])
    stack = [rec["lemmas"]] if rec.get("lemmas") else []
    while stack:
        node = stack.pop()
        entries.extend(node["queries"])
        stack.extend(node["children"])
    return entries
