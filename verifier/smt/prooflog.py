"""Proof logs: one deterministic JSON record per (construction, claim, bound), with the SMT-LIB2
file of every solver query, and the strict reader.

A record (``format_version`` 2) is what ``netproof prove`` writes under ``proofs/``:

- ``format_version``, ``tool``, ``construction``, ``paper_id``, ``params`` (as typed),
  ``network`` (``name``, ``fingerprint``; per-length families add ``fingerprints``),
  ``claim`` (``id``, ``kind``, ``statement``, ``reference``), ``bound``, ``method``, ``verdict``;
- per verdict: ``checked``/``detail`` (proved), ``detail``/``counterexample``/``values``
  (refuted), ``reason`` (unknown);
- ``solver``: ``{"name", "version"}`` of the solver that answered the queries, or ``null``;
- ``queries``: one entry per solver query, ``{"name", "file", "sha256", "result", "reason"}``;
  ``file`` is the ``.smt2`` path relative to the record's directory (the files live under
  ``<out>/queries/<construction>/<record stem>/``), ``sha256`` its hash;
- ``lemmas``: the lemma tree of a compositional proof (``name``, ``statement``, ``verdict``,
  ``queries``, ``children``), or ``null``.

Records hold no timestamps and no times, so that running a proof again rewrites the same bytes;
times go to the terminal. Version 1 records (no ``solver``, ``queries``, ``lemmas``) are still
read. The reader is strict: a duplicate key, an unknown or missing field, a ``.smt2`` file whose
sha256 differs from the record, or (with :func:`check_fresh`) a network fingerprint or query
text that a rebuild no longer produces: rejected with :class:`ProofLogError`. A rebuild needs the
construction a record names: the caller passes the registry to look it up in (the built-in
constructions and any user modules).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface, exhaustive
checking and the engines of :mod:`netproof.verifier.smt` (to rebuild queries); never the
registry of constructions, which the caller passes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netproof.symbolic import fingerprint, render

from netproof.verifier.claims import BlockIdentity, Claim, Construction, Proved, Recognizes, Refuted, Unknown, ValueIs, Verdict
from netproof.verifier.exhaustive.checker import Job, block_identity_query
from netproof.verifier.smt.compositional import METHOD as COMPOSITIONAL
from netproof.verifier.smt.compositional import rebuild_queries as rebuild_compositional
from netproof.verifier.smt.monolithic import recognition_query, value_query
from netproof.verifier.smtlib import SOLVER, LemmaNode, Outcome, SmtQuery, solver_version, to_smt2

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
QUERY_DIR = "queries"


class ProofLogError(ValueError):
    """A proof log that the strict reader rejects; the message names the file and the field."""


# --------------------------------------------------------------------------- writing


def verdict_name(v: Verdict) -> str:
    match v:
        case Proved():
            return "proved"
        case Refuted():
            return "refuted"
        case Unknown():
            return "unknown"


def show_params(values: Mapping[str, Any]) -> dict[str, str]:
    return {k: _value_text(v) for k, v in values.items()}


def _value_text(value: Any) -> str:
    return str(value)


def safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def _query_entry(q: SmtQuery, file: str) -> dict[str, Any]:
    return {"name": q.name, "file": file, "sha256": q.sha256, "result": q.result, "reason": q.reason}


def record(
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    outcome: Outcome | Verdict,
    *,
    query_files: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON record of one verdict (``query_files`` maps a query's name to its ``.smt2``
    path relative to the record; without it the paths are the default layout's)."""
    from netproof import __version__

    if not isinstance(outcome, Outcome):
        outcome = Outcome(outcome)
    verdict = outcome.verdict
    net = c.network(values, 0) if c.per_length else c.network(values)
    rec: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "tool": {"name": "netproof", "version": __version__},
        "construction": c.name,
        "paper_id": c.paper_id,
        "params": show_params(values),
        "network": {"name": net.name, "fingerprint": None if c.per_length else fingerprint(net)},
        "claim": {
            "id": claim.id,
            "kind": type(claim).__name__,
            "statement": claim.statement,
            "reference": f"{c.reference.split(',')[0]}, {claim.reference}",
        },
        "bound": None if bound is None else {"min_len": claim.min_len, "max_len": bound},
        "method": verdict.method,
        "verdict": verdict_name(verdict),
    }
    match verdict:
        case Proved(checked=checked, detail=detail):
            rec["checked"] = checked
            rec["detail"] = detail
        case Refuted(detail=detail, word=word, values=vals):
            rec["detail"] = detail
            rec["counterexample"] = None if word is None else render(net.alphabet, word)
            rec["values"] = dict(vals)
        case Unknown(reason=reason):
            rec["reason"] = reason
    if c.per_length and bound is not None:
        rec["network"]["fingerprints"] = {
            str(n): fingerprint(c.network(values, n)) for n in range(claim.min_len, bound + 1)
        }
    files = dict(query_files or {})
    stem = _stem(c, values, claim, bound)

    def file_of(q: SmtQuery, prefix: str = "") -> str:
        key = prefix + q.name
        if key not in files:
            files[key] = query_path(c.name, stem, key)
        return files[key]

    def tree(node: LemmaNode, prefix: str) -> dict[str, Any]:
        here = f"{prefix}{safe(node.name)}."
        return {
            "name": node.name,
            "statement": node.statement,
            "verdict": node.verdict,
            "queries": [_query_entry(q, file_of(q, here)) for q in node.queries],
            "children": [tree(ch, here) for ch in node.children],
        }

    rec["queries"] = [_query_entry(q, file_of(q)) for q in outcome.queries]
    rec["lemmas"] = None if outcome.lemmas is None else tree(outcome.lemmas, "lemma.")
    uses_solver = bool(outcome.queries) or outcome.lemmas is not None
    rec["solver"] = _solver_info() if uses_solver else None
    return rec


def _solver_info() -> dict[str, str]:
    return {"name": SOLVER, "version": solver_version()}


def query_path(construction: str, stem: str, name: str) -> str:
    """A query file's path relative to the record's directory."""
    return f"../{QUERY_DIR}/{safe(construction)}/{stem}/{safe(name)}.smt2"


def _stem(c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None) -> str:
    return os.path.basename(record_path("", c, values, claim, bound))[: -len(".json")]


def record_path(
    out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, kind: str = "prove"
) -> str:
    """``<out>/<construction>/<claim id>.n<bound>[.<params hash>].json`` (``.all`` for
    unbounded claims, ``.fact`` for facts about numbers, ``.fuzz`` for fuzz logs)."""
    defaults = c.parse_params({})
    tag = ""
    if show_params(values) != show_params(defaults):
        blob = json.dumps(show_params(values), sort_keys=True).encode()
        tag = "." + hashlib.sha256(blob).hexdigest()[:8]
    n = "all" if bound is None else f"n{bound}"
    if type(claim).__name__ == "ExactFact":
        n = "fact"
    if kind == "fuzz":
        n = "fuzz"
    return os.path.join(out, c.name, f"{safe(claim.id)}.{n}{tag}.json")


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``: an interrupted
    run leaves the old file or the new one, never half of one."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def dumps(rec: Mapping[str, Any]) -> str:
    return json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_log(out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, outcome: Outcome) -> str:
    """Write the record and its ``.smt2`` files under ``out``; the query files first, the JSON
    record last (each atomically), so a record never names a file that is not there. Query files
    of an earlier record of the same (claim, bound) that the new one does not name are removed
    after it is written (a proof that now takes one query for every length leaves no per-length
    files behind)."""
    path = record_path(out, c, values, claim, bound)
    rec = record(c, values, claim, bound, outcome)
    base = os.path.dirname(path)
    texts = _query_texts(outcome)
    kept: set[str] = set()
    for entry in _all_entries(rec):
        target = os.path.normpath(os.path.join(base, entry["file"]))
        write_atomic(target, texts[entry["sha256"]])
        kept.add(target)
    write_atomic(path, dumps(rec))
    folder = os.path.normpath(os.path.join(base, os.path.dirname(query_path(c.name, _stem(c, values, claim, bound), "x"))))
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            stale = os.path.join(folder, name)
            if name.endswith(".smt2") and stale not in kept:
                os.unlink(stale)
        if not os.listdir(folder):
            os.rmdir(folder)
    return path


def _query_texts(outcome: Outcome) -> dict[str, str]:
    texts = {q.sha256: q.smt2 for q in outcome.queries}
    if outcome.lemmas is not None:
        for node in outcome.lemmas.walk():
            texts.update({q.sha256: q.smt2 for q in node.queries})
    return texts


def _all_entries(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    entries = list(rec.get("queries") or [])
    stack = [rec["lemmas"]] if rec.get("lemmas") else []
    while stack:
        node = stack.pop()
        entries.extend(node["queries"])
        stack.extend(node["children"])
    return entries


# --------------------------------------------------------------------------- reading


_COMMON = {
    "format_version", "tool", "construction", "paper_id", "params", "network", "claim", "bound",
    "method", "verdict",
}
_BY_VERDICT = {"proved": {"checked", "detail"}, "refuted": {"detail", "counterexample", "values"}, "unknown": {"reason"}}
_V2 = {"solver", "queries", "lemmas"}
_QUERY_FIELDS = {"name", "file", "sha256", "result", "reason"}
_LEMMA_FIELDS = {"name", "statement", "verdict", "queries", "children"}


@dataclass(frozen=True, slots=True)
class ProofLog:
    """A record the strict reader accepted, with the ``.smt2`` text of each query (by sha256)."""

    path: str
    record: Mapping[str, Any]
    smt2: Mapping[str, str]

    @property
    def queries(self) -> list[dict[str, Any]]:
        """Every query entry: the top-level ones, then the lemma tree's, depth first."""
        return _all_entries(self.record)


def _no_duplicates(path: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise ProofLogError(f"{path}: duplicate key {k!r} in a JSON object; a proof log has each field once")
            out[k] = v
        return out

    return hook


def _fields(path: str, where: str, obj: Any, required: set[str], optional: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    if not isinstance(obj, dict):
        raise ProofLogError(f"{path}: {where} must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - required - optional)
    if unknown:
        raise ProofLogError(
            f"{path}: {where} has unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(required | optional))}"
        )
    missing = sorted(required - set(obj))
    if missing:
        raise ProofLogError(f"{path}: {where} lacks field(s) {', '.join(missing)}")


def read_log(path: str) -> ProofLog:
    """Read and validate one proof log, and load (and hash-check) its ``.smt2`` files."""
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh, object_pairs_hook=_no_duplicates(path))
    except OSError as exc:
        raise ProofLogError(f"{path}: cannot read the proof log: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ProofLogError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); a proof log is one JSON object") from None
    if not isinstance(rec, dict):
        raise ProofLogError(f"{path}: a proof log is a JSON object, got {type(rec).__name__}")
    version = rec.get("format_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ProofLogError(
            f"{path}: format_version={version!r} is not supported; this reader reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}: rewrite the log with `netproof prove`"
        )
    verdict = rec.get("verdict")
    if verdict not in _BY_VERDICT:
        raise ProofLogError(f"{path}: verdict={verdict!r} must be one of proved, refuted, unknown")
    required = _COMMON | _BY_VERDICT[verdict] | (_V2 if version == 2 else set())
    _fields(path, "the record", rec, required)
    _fields(path, "network", rec["network"], {"name", "fingerprint"}, {"fingerprints"})
    _fields(path, "claim", rec["claim"], {"id", "kind", "statement", "reference"})
    _fields(path, "tool", rec["tool"], {"name", "version"})
    if rec["bound"] is not None:
        _fields(path, "bound", rec["bound"], {"min_len", "max_len"})
    smt2: dict[str, str] = {}
    if version == 2:
        if rec["solver"] is not None:
            _fields(path, "solver", rec["solver"], {"name", "version"})
        if not isinstance(rec["queries"], list):
            raise ProofLogError(f"{path}: queries must be a list")
        stack = [("lemmas", rec["lemmas"])] if rec["lemmas"] is not None else []
        while stack:
            where, node = stack.pop()
            _fields(path, where, node, _LEMMA_FIELDS)
            if node["verdict"] not in _BY_VERDICT:
                raise ProofLogError(f"{path}: {where}.verdict={node['verdict']!r} must be proved, refuted or unknown")
            stack.extend((f"{where} > {ch.get('name', '?') if isinstance(ch, dict) else '?'}", ch) for ch in node["children"])
        entries = _all_entries(rec)
        if entries and rec["solver"] is None:
            raise ProofLogError(f"{path}: the log has queries but solver is null; name the solver that answered them")
        base = os.path.dirname(path)
        for i, entry in enumerate(entries):
            _fields(path, f"query {i}", entry, _QUERY_FIELDS)
            if entry["result"] not in ("unsat", "sat", "unknown"):
                raise ProofLogError(f"{path}: query {entry['name']!r} has result={entry['result']!r}; expected unsat, sat or unknown")
            file = os.path.normpath(os.path.join(base, entry["file"]))
            try:
                with open(file, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                raise ProofLogError(f"{path}: query {entry['name']!r}: its SMT-LIB2 file {file} is missing") from None
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest != entry["sha256"]:
                raise ProofLogError(
                    f"{path}: query {entry['name']!r}: {file} has sha256 {digest[:16]}…, the log says "
                    f"{entry['sha256'][:16]}…; the file was changed after the proof: run the proof again"
                )
            smt2[digest] = text
    return ProofLog(path, rec, smt2)


# --------------------------------------------------------------------------- freshness


def construction_of(name: str, registry: Mapping[str, Construction]) -> Construction:
    """The construction a record names, from ``registry`` (ProofLogError where it is not there)."""
    if name not in registry:
        raise ProofLogError(f"construction={name!r} is not registered; cannot rebuild its network to check the log")
    return registry[name]


def claim_of(log: ProofLog, c: Construction, values: Mapping[str, Any]) -> Claim:
    """The claim of ``c`` (with parameters ``values``) that the log is about (ProofLogError where
    the construction no longer has it)."""
    cid = log.record["claim"]["id"]
    for claim in c.claims(values):
        if claim.id == cid:
            return claim
    raise ProofLogError(f"{log.path}: claim {cid!r} is no longer a claim of {c.name}; regenerate the log")


def check_fresh(path: str, registry: Mapping[str, Construction]) -> ProofLog:
    """The strict read plus a rebuild: the construction's network (the construction looked up in
    ``registry``; per length, for per-length families) still has the recorded fingerprint, and the queries of a monolithic SMT proof or a
    block lemma are rebuilt to the same SMT-LIB2 bytes without solving anything; those of a
    compositional proof too (its theorem's queries built, not solved; its block lemmas proved
    again, since which of them hold shapes the theorem's encoding)."""
    log = read_log(path)
    rec = log.record
    c = construction_of(rec["construction"], registry)
    try:
        values = c.parse_params(rec["params"])
    except (KeyError, ValueError) as exc:
        raise ProofLogError(f"{path}: params {rec['params']} no longer parse: {exc}") from None
    net = c.network(values, 0) if c.per_length else c.network(values)
    if not c.per_length and rec["network"]["fingerprint"] != fingerprint(net):
        raise ProofLogError(
            f"{path}: network fingerprint {rec['network']['fingerprint'][:16]}… does not match the rebuilt "
            f"{c.name} network ({fingerprint(net)[:16]}…): the construction changed; run the proof again"
        )
    for n, fp in (rec["network"].get("fingerprints") or {}).items():
        if fingerprint(c.network(values, int(n))) != fp:
            raise ProofLogError(f"{path}: the network for n={n} no longer has fingerprint {fp[:16]}…; run the proof again")
    if rec["format_version"] == 2 and rec["method"] == COMPOSITIONAL and rec.get("lemmas"):
        _check_compositional(log, c, values, c.network(values, rec["bound"]) if c.per_length else net)
    if rec["format_version"] == 2 and rec["queries"]:
        claim = claim_of(log, c, values)
        rebuilt = rebuild_queries(c, values, claim, rec)
        for entry in rec["queries"]:
            text = rebuilt.get(entry["name"])
            if text is None:
                continue  # a query the rebuild does not cover (e.g. a counterexample's shrinking)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if digest != entry["sha256"]:
                raise ProofLogError(
                    f"{path}: query {entry['name']!r} rebuilds to sha256 {digest[:16]}…, the log has "
                    f"{entry['sha256'][:16]}…: the encoding or the network changed; run the proof again"
                )
    return log


def _check_compositional(log: ProofLog, c: Construction, values: Mapping[str, Any], net: Any) -> None:
    """The queries of a compositional proof's lemma tree rebuilt to the recorded bytes: the
    lemmas' (proved again: small queries) and the theorem's (built, not solved)."""
    claim = claim_of(log, c, values)
    if not isinstance(claim, Recognizes | ValueIs) or c.lemmas is None:
        raise ProofLogError(f"{log.path}: a compositional record for {claim.id!r}, which is no longer a recognition or value claim with lemmas")
    recorded: list[tuple[str, Mapping[str, Any]]] = []

    def walk(node: Mapping[str, Any]) -> None:
        recorded.extend((node["name"], q) for q in node.get("queries", ()))
        for child in node.get("children", ()):
            walk(child)

    walk(log.record["lemmas"])
    theorem = [q for node, q in recorded if node == claim.id]
    texts = {q["name"]: log.smt2[q["sha256"]] for q in theorem if q["name"].startswith(f"{claim.id} every n: ") and q["sha256"] in log.smt2}
    try:
        rebuilt = rebuild_compositional(net, claim, c.lemmas(values), [q["name"] for q in theorem], texts)
    except ValueError as exc:  # a recorded invariant that is not one (or not readable)
        raise ProofLogError(f"{log.path}: {exc}; run the proof again") from None
    compared = 0
    for node, entry in recorded:
        text = rebuilt.get((node, entry["name"]))
        if text is None:
            continue  # a query the rebuild does not cover
        compared += 1
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest != entry["sha256"]:
            raise ProofLogError(
                f"{log.path}: query {entry['name']!r} of lemma tree node {node!r} rebuilds to sha256 {digest[:16]}…, the log "
                f"has {entry['sha256'][:16]}…: the encoding, a lemma or the network changed; run the proof again"
            )
    if not any(node == claim.id for node, _entry in recorded) or compared < len(recorded):
        missing = [f"{node}: {entry['name']}" for node, entry in recorded if (node, entry["name"]) not in rebuilt]
        raise ProofLogError(f"{log.path}: the rebuild does not give {len(missing)} recorded queries ({', '.join(missing[:3])}); run the proof again")


def rebuild_queries(c: Construction, values: Mapping[str, Any], claim: Claim, rec: Mapping[str, Any]) -> dict[str, str]:
    """The SMT-LIB2 text of the recorded queries, rebuilt (not solved), by query name."""
    job = Job(c, values)
    out: dict[str, str] = {}
    if isinstance(claim, BlockIdentity):
        built = block_identity_query(job, claim)
        if not isinstance(built, Unknown):
            out[claim.id] = to_smt2(built[0])
    elif isinstance(claim, Recognizes | ValueIs):
        # One query per length, named "n=m": the monolithic recognition or closed-form query.
        for entry in rec["queries"]:
            name = entry["name"]
            if name.startswith("n=") and name[2:].isdigit():
                m = int(name[2:])
                if isinstance(claim, Recognizes):
                    q = recognition_query(job.network(m), claim.language, m)
                elif claim.closed_form is not None:
                    q = value_query(job.network(m), claim, m)
                else:
                    continue
                out[name] = to_smt2(q.solver, logic=q.logic)
    return out


def find_logs(paths: Sequence[str]) -> list[str]:
    """The ``.json`` logs named by ``paths`` (files, or directories searched recursively)."""
    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d != QUERY_DIR)
                found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".json"))
        else:
            found.append(p)
    return found
