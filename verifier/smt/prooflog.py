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

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netproof.symbolic import Network, fingerprint, render, tokenize
from netproof.verifier.claims import (
    AllowedNext,
    BlockIdentity,
    Claim,
    Construction,
    ExactFact,
    Lemma,
    MirrorInvariant,
    PairHeights,
    Proved,
    Recognizes,
    Refuted,
    SelectsNearest,
    TieRuleFree,
    TraceProperty,
    UniqueSelections,
    Unknown,
    ValueIs,
    Verdict,
    fact_at,
    stated,
)
from netproof.verifier.exhaustive.checker import Job, block_identity_query, check_word
from netproof.verifier.smt.compositional import METHOD as COMPOSITIONAL
from netproof.verifier.smt.compositional import rebuild_tree, same_language
from netproof.verifier.smt.compositional.classes import QUERY as CLASS_QUERY
from netproof.verifier.smt.compositional.correspondence import QUERY as CORRESPONDENCE
from netproof.verifier.smt.compositional.correspondence import (
    correspondence_detail,
    correspondence_queries,
)
from netproof.verifier.smt.compositional.counters import HOWS as COUNTING_HOWS
from netproof.verifier.smt.compositional.counters import every_length_detail as counting_detail
from netproof.verifier.smt.compositional.counters import is_counting, rebuild_counting
from netproof.verifier.smt.compositional.depth_features import (
    allowed_next_detail,
    depth_feature_tree,
)
from netproof.verifier.smt.compositional.invariants import CERTIFICATE
from netproof.verifier.smt.compositional.layers import (
    induction_detail,
    marks_claim,
    step_names,
    ties_claim,
)
from netproof.verifier.smt.compositional.symmetry import DETAIL as SYMMETRY_DETAIL
from netproof.verifier.smt.compositional.symmetry import QUERY as SYMMETRY
from netproof.verifier.smt.compositional.traces import trace_detail
from netproof.verifier.smt.errors import Unsupported
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


def claim_reference(c: Construction, claim: Claim) -> str:
    """The reference a record gives ``claim``: the construction's citation (its reference up to
    the first comma, e.g. ``Yao et al. 2021``) before the claim's own reference (``Theorem
    4.1``), once: a claim whose reference already starts with that citation (the claims of a
    B-RASP or C-RASP program cite ``Yang, Chiang & Angluin 2024 (B-RASP); ...`` in full) is
    given as it is, not as ``Yang, Yang, Chiang & Angluin 2024``.

    >>> from types import SimpleNamespace as N
    >>> claim_reference(N(reference="Yao et al. 2021, §5.1"), N(reference="Theorem 4.1"))
    'Yao et al. 2021, Theorem 4.1'
    >>> brasp = "Yang, Chiang & Angluin 2024 (B-RASP)"
    >>> claim_reference(N(reference=brasp), N(reference=brasp))
    'Yang, Chiang & Angluin 2024 (B-RASP)'
    """
    cite = c.reference.split(",")[0]
    return claim.reference if claim.reference.startswith(cite) else f"{cite}, {claim.reference}"


def _query_entry(q: SmtQuery, file: str) -> dict[str, Any]:
    return {
        "name": q.name,
        "file": file,
        "sha256": q.sha256,
        "result": q.result,
        "reason": q.reason,
    }


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
            "reference": claim_reference(c, claim),
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
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    kind: str = "prove",
) -> str:
    """``<out>/<construction>/<claim id>.n<bound>[.<params hash>].json`` (``.all`` for
    unbounded claims, ``.fact`` for facts without a word bound, ``.fuzz`` for fuzz logs)."""
    defaults = c.parse_params({})
    tag = ""
    if show_params(values) != show_params(defaults):
        blob = json.dumps(show_params(values), sort_keys=True).encode()
        tag = "." + hashlib.sha256(blob).hexdigest()[:8]
    n = "all" if bound is None else f"n{bound}"
    if type(claim).__name__ == "ExactFact" and bound is None:
        n = "fact"  # a fact about the words of a bound is named by its bound
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


def write_log(
    out: str,
    c: Construction,
    values: Mapping[str, Any],
    claim: Claim,
    bound: int | None,
    outcome: Outcome,
) -> str:
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
    folder = os.path.normpath(
        os.path.join(base, os.path.dirname(query_path(c.name, _stem(c, values, claim, bound), "x")))
    )
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
    "format_version",
    "tool",
    "construction",
    "paper_id",
    "params",
    "network",
    "claim",
    "bound",
    "method",
    "verdict",
}
_BY_VERDICT = {
    "proved": {"checked", "detail"},
    "refuted": {"detail", "counterexample", "values"},
    "unknown": {"reason"},
}
_V2 = {"solver", "queries", "lemmas"}
_QUERY_FIELDS = {"name", "file", "sha256", "result", "reason"}
_LEMMA_FIELDS = {"name", "statement", "verdict", "queries", "children"}


@dataclass(frozen=True, slots=True)
class ProofLog:
    """A record the strict reader accepted, with the ``.smt2`` text of each query (by sha256)."""

    path: str
    record: Mapping[str, Any]
    smt2: Mapping[str, str]
    rerun: bool = False
    """Set by :func:`verify_record` where no query establishes the verdict (an exhaustive proof):
    only the check run again can confirm it."""

    @property
    def queries(self) -> list[dict[str, Any]]:
        """Every query entry: the top-level ones, then the lemma tree's, depth first."""
        return _all_entries(self.record)


def _no_duplicates(path: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise ProofLogError(
                    f"{path}: duplicate key {k!r} in a JSON object; a proof log has each field once"
                )
            out[k] = v
        return out

    return hook


def _no_constant(path: str) -> Any:
    def hook(name: str) -> Any:
        raise ProofLogError(
            f"{path}: {name} is not JSON (strict JSON has no NaN or infinities); a proof log holds exact numbers"
        )

    return hook


def _texts(path: str, where: str, obj: Mapping[str, Any], keys: Sequence[str]) -> None:
    for key in keys:
        if not isinstance(obj[key], str):
            raise ProofLogError(f"{path}: {where}.{key}={obj[key]!r} must be text")


def _fields(
    path: str,
    where: str,
    obj: Any,
    required: set[str] | frozenset[str],
    optional: set[str] | frozenset[str] = frozenset(),
) -> None:
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
            rec = json.load(
                fh, object_pairs_hook=_no_duplicates(path), parse_constant=_no_constant(path)
            )
    except OSError as exc:
        raise ProofLogError(f"{path}: cannot read the proof log: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ProofLogError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno}); a proof log is one JSON object"
        ) from None
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
    _texts(path, "the record", rec, ("construction", "paper_id", "method"))
    _texts(path, "claim", rec["claim"], ("id", "kind", "statement", "reference"))
    _texts(path, "tool", rec["tool"], ("name", "version"))
    _texts(path, "network", rec["network"], ("name",))
    if not isinstance(rec["params"], dict) or not all(
        isinstance(v, str) for v in rec["params"].values()
    ):
        raise ProofLogError(
            f'{path}: params must be an object of texts, as typed (e.g. {{"k": "2"}})'
        )
    if not (
        rec["network"]["fingerprint"] is None or isinstance(rec["network"]["fingerprint"], str)
    ):
        raise ProofLogError(f"{path}: network.fingerprint must be a sha256 text or null")
    fps = rec["network"].get("fingerprints")
    if fps is not None and not (
        isinstance(fps, dict) and all(isinstance(v, str) and k.isdigit() for k, v in fps.items())
    ):
        raise ProofLogError(f"{path}: network.fingerprints must map each length to its sha256 text")
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
            _texts(path, where, node, ("name", "statement"))
            for key in ("queries", "children"):
                if not isinstance(node[key], list):
                    raise ProofLogError(f"{path}: {where}.{key} must be a list")
            if node["verdict"] not in _BY_VERDICT:
                raise ProofLogError(
                    f"{path}: {where}.verdict={node['verdict']!r} must be proved, refuted or unknown"
                )
            stack.extend(
                (f"{where} > {ch.get('name', '?') if isinstance(ch, dict) else '?'}", ch)
                for ch in node["children"]
            )
        entries = _all_entries(rec)
        if entries and rec["solver"] is None:
            raise ProofLogError(
                f"{path}: the log has queries but solver is null; name the solver that answered them"
            )
        base = os.path.dirname(path)
        for i, entry in enumerate(entries):
            _fields(path, f"query {i}", entry, _QUERY_FIELDS)
            _texts(path, f"query {i}", entry, ("name", "file", "sha256", "reason"))
            if entry["result"] not in ("unsat", "sat", "unknown"):
                raise ProofLogError(
                    f"{path}: query {entry['name']!r} has result={entry['result']!r}; expected unsat, sat or unknown"
                )
            file = os.path.normpath(os.path.join(base, entry["file"]))
            try:
                with open(file, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                raise ProofLogError(
                    f"{path}: query {entry['name']!r}: its SMT-LIB2 file {file} is missing"
                ) from None
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
        raise ProofLogError(
            f"construction={name!r} is not registered; cannot rebuild its network to check the log"
        )
    return registry[name]


def claim_of(log: ProofLog, c: Construction, values: Mapping[str, Any]) -> Claim:
    """The claim of ``c`` (with parameters ``values``) that the log is about (ProofLogError where
    the construction no longer has it)."""
    cid = log.record["claim"]["id"]
    bound = log.record.get("bound")
    for claim in c.claims(values):
        if claim.id == cid:
            if isinstance(claim, ExactFact) and isinstance(bound, Mapping):
                given = bound.get("max_len")
                return fact_at(claim, given if isinstance(given, int) else None)
            return claim
    raise ProofLogError(
        f"{log.path}: claim {cid!r} is no longer a claim of {c.name}; regenerate the log"
    )


def check_fresh(path: str, registry: Mapping[str, Construction]) -> ProofLog:
    """The strict read plus a rebuild that trusts nothing in the record but the evidence (see
    :func:`verify_record`, which this is)."""
    return verify_record(path, registry)


def verify_record(path: str, registry: Mapping[str, Construction]) -> ProofLog:
    """Read a record strictly and check it against its construction (looked up in ``registry``),
    nothing solved but the block lemmas of a compositional proof:

    - the parameters as the construction shows them, the claim (id, kind, statement, reference),
      ``paper_id``, the network's name and fingerprint(s) those of a rebuild;
    - from the claim, its bound and the method family alone, the queries that must be there
      (``n=lo`` … ``n=hi`` of a monolithic proof; the theorem's every-length certificate, its
      position-class query or ranges covering ``lo..hi`` exactly, and the lemma tree, of a
      compositional one; the one query of a block lemma; none otherwise), every one rebuilt to its
      recorded bytes whatever the method label says, each answered as the verdict needs, the lemma
      tree equal to the rebuilt one, the verdict the one the answers imply, ``checked`` the recount
      and the solver the one that answers here.

    A verdict that the queries do not establish (an exhaustive proof) comes back with
    :attr:`ProofLog.rerun` set: the check must be run again to trust it (``netproof recheck``
    does). ProofLogError names the first field that is not as the evidence says."""
    log = read_log(path)
    rec = log.record
    c = construction_of(rec["construction"], registry)
    try:
        values = c.parse_params(rec["params"])
    except (KeyError, ValueError, TypeError) as exc:
        raise ProofLogError(f"{path}: params {rec['params']} no longer parse: {exc}") from None
    if rec["params"] != show_params(values):
        raise ProofLogError(
            f"{path}: params {rec['params']} are not as {c.name} shows them ({show_params(values)}); run the proof again"
        )
    claim = claim_of(log, c, values)
    net = c.network(values, 0) if c.per_length else c.network(values)
    _check_header(log, c, claim, net)
    bound = _bound(log, claim)
    if not c.per_length and rec["network"]["fingerprint"] != fingerprint(net):
        raise ProofLogError(
            f"{path}: network fingerprint {str(rec['network']['fingerprint'])[:16]}… does not match the rebuilt "
            f"{c.name} network ({fingerprint(net)[:16]}…): the construction changed; run the proof again"
        )
    expected_lengths = (
        [str(n) for n in range(claim.min_len, bound + 1)]
        if c.per_length and bound is not None
        else None
    )
    recorded_fps = rec["network"].get("fingerprints")
    if (
        None if recorded_fps is None else sorted(recorded_fps, key=lambda k: (len(k), k))
    ) != expected_lengths:
        raise ProofLogError(
            f"{path}: network.fingerprints must name each length {claim.min_len}..{bound} of a per-length family, and only then"
        )
    for n, fp in (recorded_fps or {}).items():
        if fingerprint(c.network(values, int(n))) != fp:
            raise ProofLogError(
                f"{path}: the network for n={n} no longer has fingerprint {str(fp)[:16]}…; run the proof again"
            )
    entries = _all_entries(rec) if rec["format_version"] == 2 else []
    if rec["format_version"] == 2:
        _check_solver(log, bool(entries))
    job = Job(c, values)
    if isinstance(claim, Recognizes | ValueIs) and bound is not None:
        rerun = _check_words_claim(log, job, claim, bound)
    elif isinstance(claim, TraceProperty) and rec.get("lemmas") is not None and bound is not None:
        rerun = _check_trace_claim(log, job, claim, bound)
    elif isinstance(claim, BlockIdentity):
        rerun = _check_block(log, job, claim)
    elif (
        isinstance(claim, ExactFact)
        and claim.statable is not None
        and (entries or " smt (z3)" in f" {rec['method']}")
    ):
        rerun = _check_same_language(log, job, claim)
    else:
        if entries or rec.get("lemmas") is not None:
            raise ProofLogError(
                f"{path}: a {type(claim).__name__} claim is not proved by solver queries, yet the record lists {len(entries)}"
            )
        structural = (isinstance(claim, ExactFact) and claim.every_length) or isinstance(
            claim, MirrorInvariant
        )
        if str(rec["method"]).startswith("structural") and not structural:
            raise ProofLogError(
                f"{path}: method={rec['method']!r} claims a structural proof for every length, but {claim.id}'s "
                "check does not decide every length; run the proof again"
            )
        rerun = True
    if rec["verdict"] == "unknown":
        rerun = False
    return ProofLog(log.path, rec, log.smt2, rerun)


def _check_solver(log: ProofLog, has_queries: bool) -> None:
    """The solver entry: null without queries; with them, z3 and a version number. Which z3
    version answered is provenance, not evidence (every query is rebuilt and solved again), so a
    version other than this z3's is allowed (recheck says so)."""
    solver = log.record["solver"]
    if not has_queries:
        if solver is not None:
            raise ProofLogError(
                f"{log.path}: solver={solver} but the record has no queries; a record without queries names no solver"
            )
        return
    version = solver["version"]
    if (
        solver["name"] != SOLVER
        or not isinstance(version, str)
        or not re.fullmatch(r"\d+(\.\d+){1,3}", version)
    ):
        raise ProofLogError(
            f"{log.path}: solver={solver}: the queries of a proof log are answered by {SOLVER} with a version number like 4.13.0"
        )


def _check_header(log: ProofLog, c: Construction, claim: Claim, net: Any) -> None:
    rec = log.record
    expected = {
        "id": claim.id,
        "kind": type(claim).__name__,
        "statement": claim.statement,
        "reference": claim_reference(c, claim),
    }
    for key, want in expected.items():
        if rec["claim"][key] != want:
            raise ProofLogError(
                f"{log.path}: claim.{key}={rec['claim'][key]!r}, but {c.name} says {want!r}; run the proof again"
            )
    if rec["paper_id"] != c.paper_id:
        raise ProofLogError(
            f"{log.path}: paper_id={rec['paper_id']!r}, but {c.name} says {c.paper_id!r}"
        )
    if rec["network"]["name"] != net.name:
        raise ProofLogError(
            f"{log.path}: network.name={rec['network']['name']!r}, but the rebuilt network is {net.name!r}"
        )
    if rec["tool"]["name"] != "netproof":
        raise ProofLogError(
            f"{log.path}: tool.name={rec['tool']['name']!r}; a proof log is written by netproof"
        )
    if rec["verdict"] == "proved" and not (
        isinstance(rec["checked"], int)
        and not isinstance(rec["checked"], bool)
        and rec["checked"] >= 0
    ):
        raise ProofLogError(
            f"{log.path}: checked={rec['checked']!r} must be a count (an integer >= 0)"
        )
    if rec["verdict"] != "unknown" and not isinstance(rec["detail"], str):
        raise ProofLogError(f"{log.path}: detail={rec['detail']!r} must be text")


MAX_BOUND = 1_000_000
"""The largest word length a record's bound may name (a bound beyond it is no run's)."""


def _network(log: ProofLog, c: Construction, values: Mapping[str, Any], hi: int) -> Network:
    """The network a compositional proof is about (of length ``hi`` for a per-length one)."""
    net = c.network(values, hi) if c.per_length else c.network(values)
    if not isinstance(net, Network):
        raise ProofLogError(
            f"{log.path}: {c.name} builds a {type(net).__name__}; a proof for every length is about a transformer-style Network"
        )
    return net


def _lemmas(log: ProofLog, c: Construction, values: Mapping[str, Any]) -> tuple[Lemma, ...]:
    """The lemmas a compositional proof is made of."""
    if c.lemmas is None:
        raise ProofLogError(
            f"{log.path}: {c.name} declares no lemmas, and a proof for every length is made of them"
        )
    return tuple(c.lemmas(values))


def _bound(log: ProofLog, claim: Claim) -> int | None:
    b = log.record["bound"]
    if b is None:
        if isinstance(claim, Recognizes | ValueIs):
            raise ProofLogError(
                f"{log.path}: bound=null, but {claim.id} is about words of some lengths; a record names its bound"
            )
        return None
    lo, hi = b["min_len"], b["max_len"]
    for key, v in (("min_len", lo), ("max_len", hi)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise ProofLogError(f"{log.path}: bound.{key}={v!r} must be an integer")
    if lo != claim.min_len:
        raise ProofLogError(
            f"{log.path}: bound.min_len={lo}, but {claim.id} starts at length {claim.min_len}"
        )
    if not lo <= hi <= MAX_BOUND:
        raise ProofLogError(f"{log.path}: bound.max_len={hi} must be in {lo}..{MAX_BOUND}")
    return int(hi)


def _count(alphabet: Sequence[str], lo: int, hi: int) -> int:
    k = len(alphabet)
    if k == 1:
        return hi - lo + 1
    words: int = (k ** (hi + 1) - k**lo) // (k - 1)
    return words


def _result_needed(
    log: ProofLog, where: str, entries: Sequence[Mapping[str, Any]], refuted_last: bool
) -> None:
    """Every query unsat (a proof), or every one unsat but the last, which is sat (a refutation)."""
    where = f"{where} " if where else ""
    for i, entry in enumerate(entries):
        want = "sat" if refuted_last and i == len(entries) - 1 else "unsat"
        if entry["result"] != want:
            raise ProofLogError(
                f"{log.path}: {where}query {entry['name']!r} has result {entry['result']}, but a {log.record['verdict']} "
                f"verdict needs {want} there; the answers do not imply the verdict"
            )


def _same_text(log: ProofLog, entry: Mapping[str, Any], text: str | None, where: str) -> None:
    where = f"{where} " if where else ""
    if text is None:
        raise ProofLogError(
            f"{log.path}: {where}query {entry['name']!r} is not one the claim's proof makes; run the proof again"
        )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != entry["sha256"]:
        raise ProofLogError(
            f"{log.path}: {where}query {entry['name']!r} rebuilds to sha256 {digest[:16]}…, the log has "
            f"{str(entry['sha256'])[:16]}…: the query is not the claim's (or the encoding or the network changed); run the proof again"
        )


def _check_words_claim(log: ProofLog, job: Job, claim: Recognizes | ValueIs, hi: int) -> bool:
    """The checks of a recognition or value claim's record; whether its verdict needs the
    exhaustive check run again (no queries establish it)."""
    rec = log.record
    lo = claim.min_len
    method, verdict = str(rec["method"]), rec["verdict"]
    lemmas, top = (
        rec["lemmas"] if rec["format_version"] == 2 else None,
        rec["queries"] if rec["format_version"] == 2 else [],
    )
    if (lemmas is not None) != (COMPOSITIONAL in method):
        raise ProofLogError(
            f"{log.path}: method={method!r} {'with' if lemmas is not None else 'without'} a lemma tree: "
            "a compositional proof (and only one) has a lemma tree"
        )
    smt = method.startswith("smt (z3)") or " + smt (z3)" in method
    if (lemmas is not None or smt) and not re.fullmatch(
        r"(exhaustive \([^()]*\) \+ )?"
        + re.escape(COMPOSITIONAL if lemmas is not None else "smt (z3)"),
        method,
    ):
        raise ProofLogError(
            f"{log.path}: method={method!r} is not a method of netproof's SMT proofs (smt (z3), {COMPOSITIONAL})"
        )
    if lemmas is not None:
        if top:
            raise ProofLogError(
                f"{log.path}: a compositional proof keeps its queries in the lemma tree, yet the record lists {len(top)} beside it"
            )
        if isinstance(claim, Recognizes) and _by_correspondence(claim, lemmas):
            _check_correspondence(log, job, claim, lo, hi)
            return False
        every = _check_compositional(log, job, claim, lo, hi)
        if verdict == "proved":
            _check_proved(log, job, lo, hi, every, compositional=True, claim=claim)
        return False
    if top or (smt and verdict != "unknown"):
        names = [e["name"] for e in top]
        if verdict == "proved" and smt:
            want = [f"n={m}" for m in range(lo, hi + 1)]
        else:
            want = [f"n={m}" for m in range(lo, lo + len(top))]
        if names != want or (verdict == "proved" and not want):
            raise ProofLogError(
                f"{log.path}: the queries are {_span(names)}, but a {verdict} {method!r} record with bound {lo}..{hi} needs "
                f"{_span(want)}, one per length, in order"
            )
        rebuilt = rebuild_queries(job.construction, job.values, claim, rec)
        for entry in top:
            _same_text(log, entry, rebuilt.get(entry["name"]), "")
        if not smt:  # queries beside an exhaustive verdict (``--method all``): the check decides
            return bool(verdict != "unknown")
        if verdict != "unknown":
            _result_needed(log, "", top, verdict == "refuted")
        if verdict == "refuted":
            _check_refuted_length(log, job, len(top) - 1 + lo)
        if verdict == "proved":
            _check_proved(log, job, lo, hi, False, compositional=False)
        return False
    if verdict == "proved" and rec["checked"] != _count(job.alphabet, lo, hi):
        raise ProofLogError(
            f"{log.path}: checked={rec['checked']}, but {lo} <= |w| <= {hi} holds {_count(job.alphabet, lo, hi)} words; the count is not the bound's"
        )
    return True


def _span(names: Sequence[str]) -> str:
    if not names:
        return "none"
    return f"{len(names)} ({names[0]!r} … {names[-1]!r})" if len(names) > 2 else repr(list(names))


def _check_refuted_length(log: ProofLog, job: Job, m: int) -> None:
    cx = log.record["counterexample"]
    if not isinstance(cx, str):
        raise ProofLogError(
            f"{log.path}: a refutation by solver queries names its counterexample, got {cx!r}"
        )
    try:
        word = tokenize(job.alphabet, cx)
    except ValueError as exc:
        raise ProofLogError(
            f"{log.path}: counterexample {cx!r} is not a word over the alphabet: {exc}"
        ) from None
    if len(word) != m:
        raise ProofLogError(
            f"{log.path}: counterexample {cx!r} has length {len(word)}, but the sat query is at n={m}"
        )


def _check_proved(
    log: ProofLog,
    job: Job,
    lo: int,
    hi: int,
    every: bool,
    *,
    compositional: bool,
    claim: Claim | None = None,
) -> None:
    rec = log.record
    want = _count(job.alphabet, lo, hi)
    if rec["checked"] != want:
        raise ProofLogError(
            f"{log.path}: checked={rec['checked']}, but {lo} <= |w| <= {hi} holds {want} words; the count is not the bound's"
        )
    head = f"every word with {lo} <= |w| <= {hi}"
    detail = rec["detail"]
    if " + smt (z3)" in str(rec["method"]):  # --method all: both methods proved it
        if detail != f"{head}; each length also unsat in z3":
            raise ProofLogError(
                f"{log.path}: detail={detail!r} is not what the queries show ({head}; each length also unsat in z3)"
            )
    elif not compositional:
        if detail != f"{head}: one query per length, each unsat":
            raise ProofLogError(
                f"{log.path}: detail={detail!r} is not what the queries show ({head}: one query per length, each unsat)"
            )
    elif not any(re.fullmatch(p, detail) for p in _compositional_details(job, head, every, claim)):
        raise ProofLogError(
            f"{log.path}: detail={detail[:80]!r}… does not say what the queries show ({head}"
            + (", and every longer one" if every else "")
            + ")"
        )


_INVARIANTS = ("Spacer", "the reachable states, by binary decision diagrams")


def _compositional_details(
    job: Job, head: str, every: bool, claim: Claim | None = None
) -> list[str]:
    """The details a compositional proof writes (regular expressions): exact for a proof for
    every length, the part after the queries' description free (why not every length) else."""
    h = re.escape(head)
    lemmas = len(job.construction.lemmas(job.values)) if job.construction.lemmas is not None else 0
    if every:
        return [
            h
            + re.escape(
                f", and every longer one: {lemmas} lemmas proved for every input, then, over the network with the lemmas in "
                "place on a word of symbolic length, its positions grouped by the values of their positional features and by "
                "symbol, one query, unsat"
            ),
            *(
                h
                + re.escape(
                    f", and every longer one: {lemmas} lemmas proved for every input, then, over the network with the lemmas in "
                    f"place read as a transition system over positions, an inductive invariant ({how}) and its three queries "
                    f"({', '.join(CERTIFICATE)}), each unsat"
                )
                for how in _INVARIANTS
            ),
            h
            + re.escape(
                ", and every longer one: one query over a word of symbolic length, its positions grouped by the values of "
                "their positional features and by symbol, unsat"
            ),
            *(
                re.escape(counting_detail(head, lemmas, "@LANGUAGE@", how)).replace(
                    "@LANGUAGE@", ".+"
                )
                for how in COUNTING_HOWS
            ),
            *(
                [
                    h
                    + re.escape(
                        f", and every longer one: {lemmas} lemmas proved for every input, then, {induction_detail(claim)}"
                    )
                    + SYMMETRY_DETAIL
                ]
                if isinstance(claim, Recognizes) and claim.induction is not None
                else []
            ),
        ]
    return [
        h
        + r": \d+ lemmas proved for every input, then (one query per length|\d+ quer(y|ies) over ranges of lengths \([^()]*\)) "
        r"over the network with the lemmas in place, each unsat( \(not (over ranges of lengths|every length at once): .*\))*",
        h + r": one query per length, each unsat( \(not every length at once: .*\))?",
    ]


def _check_compositional(
    log: ProofLog, job: Job, claim: Recognizes | ValueIs, lo: int, hi: int
) -> bool:
    """The lemma tree of a compositional proof against its rebuild; whether the theorem's queries
    prove every length at once."""
    c, values, rec = job.construction, job.values, log.record
    if c.lemmas is None:
        raise ProofLogError(
            f"{log.path}: a compositional record for {claim.id!r}, but {c.name} declares no lemmas"
        )
    root = rec["lemmas"]
    if root["name"] != claim.id:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root is {root['name']!r}, not the claim {claim.id!r}"
        )
    statement = claim.statement + f" (every word with {lo} <= |w| <= {hi})"
    if root["statement"] != statement:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root states {root['statement']!r}, the claim {statement!r}"
        )
    verdict = rec["verdict"]
    if root["verdict"] != verdict:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root is {root['verdict']}, the record {verdict}"
        )
    theorem = root["queries"]
    names = [q["name"] for q in theorem]
    every_names = [
        [f"{claim.id} every n: {x}" for x in CERTIFICATE],
        [f"{claim.id} every n: {CLASS_QUERY}"],
    ]
    if isinstance(claim, Recognizes) and claim.induction is not None:
        every_names.append(
            [
                f"{claim.id} every n: {step}: {x}"
                for step in step_names(len(claim.induction.after))
                for x in CERTIFICATE
            ]
        )
    # a layer induction reduced by the type symmetry: its invariance queries come first
    # (rebuilt below with the premise checked again; a query not rebuilt is refused there)
    sym = f"{claim.id} every n: {SYMMETRY}: "
    lead = next((j for j, n in enumerate(names) if not n.startswith(sym)), len(names))
    every = names in every_names or (
        lead > 0
        and isinstance(claim, Recognizes)
        and claim.induction is not None
        and names[lead:] == every_names[-1]
    )
    if verdict != "unknown" and not every:
        covered = _ranges(claim.id, names)
        if (
            covered is None
            or covered[0] != lo
            or (verdict == "proved" and covered[1] != hi)
            or covered[1] > hi
        ):
            raise ProofLogError(
                f"{log.path}: the theorem's queries {_span(names)} neither prove every length at once nor cover "
                f"{lo}..{hi} by consecutive ranges of lengths, in order"
            )
    if verdict != "unknown":
        _result_needed(log, f"theorem {claim.id!r}", theorem, verdict == "refuted")
        if verdict == "refuted" and every:
            raise ProofLogError(
                f"{log.path}: a refutation comes from a range of lengths, not from an every-length query"
            )
    net = _network(log, c, values, hi)
    texts = {
        q["name"]: log.smt2[q["sha256"]]
        for q in theorem
        if q["name"].startswith(f"{claim.id} every n: ")
    }
    try:
        lemmas = _lemmas(log, c, values)
        rebuilt, nodes = (
            rebuild_counting(net, claim, lemmas, names, texts)
            if isinstance(claim, Recognizes) and is_counting(claim, lemmas)
            else rebuild_tree(net, claim, lemmas, names, texts)
        )
    except ValueError as exc:  # a recorded invariant that is not one (or not readable)
        raise ProofLogError(f"{log.path}: {exc}; run the proof again") from None
    except (
        Unsupported
    ) as exc:  # a theorem query the proof cannot have made (e.g. a range where it needs one length)
        raise ProofLogError(
            f"{log.path}: the theorem's queries {_span(names)} cannot be rebuilt ({exc}): not the claim's proof; run the proof again"
        ) from None
    for entry in theorem:
        _same_text(log, entry, rebuilt.get((claim.id, entry["name"])), f"theorem {claim.id!r}")
    children = root["children"]
    want_names = [n.name for n in nodes] + ["side conditions"]
    got_names = [ch["name"] for ch in children]
    if got_names != want_names:
        raise ProofLogError(
            f"{log.path}: the lemma tree below {claim.id!r} has {got_names}, but the proof makes {want_names}; the tree is not complete"
        )
    for node, ch in zip(nodes, children, strict=False):
        _same_node(log, node, ch)
    side = children[-1]
    if (
        side["verdict"] != "proved"
        or side["queries"]
        or side["children"]
        or not str(side["statement"]).startswith("every lemma was applied only where")
    ):
        raise ProofLogError(
            f"{log.path}: the lemma tree's side conditions node is not the proof's (proved, no queries, no children)"
        )
    if verdict == "refuted":
        covered = _ranges(claim.id, names)
        assert covered is not None
        cx = rec["counterexample"]
        try:
            word = tokenize(job.alphabet, cx) if isinstance(cx, str) else None
        except ValueError:
            word = None
        last = names[-1][len(f"{claim.id} n=") :].partition("..")
        if word is None or not int(last[0]) <= len(word) <= int(last[2] or last[0]):
            raise ProofLogError(
                f"{log.path}: counterexample {cx!r} is not a word of the sat query's lengths ({names[-1]})"
            )
    return every


def _by_correspondence(claim: Recognizes | TraceProperty, root: Mapping[str, Any]) -> bool:
    """Whether a lemma tree's theorem queries are those of the operation-wise correspondence."""
    names = [str(q.get("name")) for q in root.get("queries") or ()]
    lead = f"{claim.id} every n: {CORRESPONDENCE}: "
    return bool(names) and all(n.startswith(lead) for n in names)


def _check_correspondence(
    log: ProofLog, job: Job, claim: Recognizes | TraceProperty, lo: int, hi: int
) -> None:
    """The checks of a proof by the operation-wise correspondence
    (:mod:`~netproof.verifier.smt.compositional.correspondence`): the walk over the sublayers
    done again on the rebuilt network (every premise), its queries rebuilt to their recorded
    bytes in order, each unsat, the lemma tree proved again, the count and the detail."""
    rec, c, values = log.record, job.construction, job.values
    root = rec["lemmas"]
    if rec["method"] != COMPOSITIONAL or rec["verdict"] != "proved" or root["verdict"] != "proved":
        raise ProofLogError(
            f"{log.path}: the operation-wise correspondence proves ({COMPOSITIONAL!r}) or records nothing; "
            f"this record is {rec['verdict']} by {rec['method']!r}"
        )
    statement = claim.statement + f" (every word with {lo} <= |w| <= {hi})"
    if root["name"] != claim.id or root["statement"] != statement:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root is {root['name']!r} stating {root['statement']!r}, not the claim's {statement!r}"
        )
    if claim.compiled is None or c.lemmas is None:
        raise ProofLogError(
            f"{log.path}: a proof by the operation-wise correspondence, but {claim.id!r} names no compiled program "
            f"or {c.name} declares no lemmas"
        )
    net = _network(log, c, values, hi)
    lemmas = _lemmas(log, c, values)
    try:
        texts, nodes, side, ops = correspondence_queries(net, claim, lemmas)
    except Unsupported as exc:
        raise ProofLogError(
            f"{log.path}: the operation-wise correspondence does not apply to the rebuilt network ({exc}); run the proof again"
        ) from None
    theorem = root["queries"]
    names = [q["name"] for q in theorem]
    if names != list(texts):
        raise ProofLogError(
            f"{log.path}: the theorem's queries are {_span(names)}, but the correspondence makes {_span(list(texts))}"
        )
    for entry in theorem:
        _same_text(log, entry, texts[entry["name"]], f"theorem {claim.id!r}")
    _result_needed(log, f"theorem {claim.id!r}", theorem, False)
    children = root["children"]
    want = [n.name for n in nodes] + [side.name]
    if [ch["name"] for ch in children] != want:
        raise ProofLogError(
            f"{log.path}: the lemma tree below {claim.id!r} has {[ch['name'] for ch in children]}, but the proof makes {want}"
        )
    for node, ch in zip((*nodes, side), children, strict=True):
        _same_node(log, node, ch)  # proved again: the rebuilt walk applies only proved ones
    if rec["checked"] != _count(job.alphabet, lo, hi):
        raise ProofLogError(
            f"{log.path}: checked={rec['checked']}, but {lo} <= |w| <= {hi} holds {_count(job.alphabet, lo, hi)} words"
        )
    detail = correspondence_detail(claim, len(lemmas), ops, hi)
    if rec["detail"] != detail:
        raise ProofLogError(
            f"{log.path}: detail={str(rec['detail'])[:80]!r}… is not what the queries show ({detail[:80]}…)"
        )


def _check_trace_claim(log: ProofLog, job: Job, claim: TraceProperty, hi: int) -> bool:
    """The checks of a trace property's compositional record (:func:`~netproof.verifier.smt.compositional.prove_trace`):
    its lemma tree rebuilt (the NearestSelection lemmas, or the certificate of the system that
    watches the property around the recorded invariant), the answers, the detail. Never needs a
    rerun: the queries establish a proof, and an unknown says nothing."""
    rec, c, values = log.record, job.construction, job.values
    lo = claim.min_len
    if rec["method"] != COMPOSITIONAL:
        raise ProofLogError(
            f"{log.path}: method={rec['method']!r}, but a trace property's lemma tree comes from {COMPOSITIONAL!r} only"
        )
    if rec["format_version"] != 2 or rec["queries"]:
        raise ProofLogError(
            f"{log.path}: a compositional proof keeps its queries in the lemma tree"
        )
    if rec["verdict"] == "proved" and _by_correspondence(claim, rec["lemmas"]):
        _check_correspondence(log, job, claim, lo, hi)
        return False
    claim = stated(claim)  # the form the record's route stated, built where built only when needed
    depth_features = isinstance(
        claim.statable, AllowedNext
    )  # its lemmas come from the network, not the construction
    if (c.lemmas is None and not depth_features) or claim.statable is None:
        raise ProofLogError(
            f"{log.path}: a compositional record for {claim.id!r}, but {c.name} declares no lemmas or the claim no statable form"
        )
    root = rec["lemmas"]
    statement = claim.statement + f" (every word with {lo} <= |w| <= {hi})"
    if root["name"] != claim.id or root["statement"] != statement:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root is {root['name']!r} stating {root['statement']!r}, not the claim's {statement!r}"
        )
    verdict = rec["verdict"]
    if root["verdict"] != verdict:
        raise ProofLogError(
            f"{log.path}: the lemma tree's root is {root['verdict']}, the record {verdict}"
        )
    if verdict == "refuted":
        raise ProofLogError(
            f"{log.path}: a trace property is refuted by a word, exhaustively, not by a lemma tree"
        )
    if verdict == "unknown":
        return False
    theorem = root["queries"]
    names = [q["name"] for q in theorem]
    want = (
        []
        if isinstance(claim.statable, SelectsNearest | AllowedNext | UniqueSelections)
        else [f"{claim.id} every n: {x}" for x in CERTIFICATE]
    )
    if isinstance(claim.statable, PairHeights) and claim.statable.induction is not None:
        # Unsupported: not the induction's marks; the whole network's system watched them
        with contextlib.suppress(Unsupported):
            want = [
                f"{claim.id} every n: {step}: {x}"
                for step in marks_claim(claim, claim.statable)[1]
                for x in CERTIFICATE
            ]
    if isinstance(claim.statable, TieRuleFree) and claim.statable.induction is not None:
        want = [
            f"{claim.id} every n: {step}: {x}"
            for step in ties_claim(claim, claim.statable)[1]
            for x in CERTIFICATE
        ]
    if names != want:
        raise ProofLogError(
            f"{log.path}: the theorem's queries are {_span(names)}, but a proof of {claim.id} for every length makes {_span(want)}"
        )
    _result_needed(log, f"theorem {claim.id!r}", theorem, False)
    net = _network(log, c, values, hi)
    texts = {q["name"]: log.smt2[q["sha256"]] for q in theorem}
    try:
        rebuilt, nodes = (
            ({}, depth_feature_tree(net, claim))
            if depth_features
            else rebuild_tree(net, claim, _lemmas(log, c, values), names, texts)
        )
    except ValueError as exc:
        raise ProofLogError(f"{log.path}: {exc}; run the proof again") from None
    except Unsupported as exc:
        raise ProofLogError(
            f"{log.path}: the proof of {claim.id} cannot be rebuilt ({exc}); run the proof again"
        ) from None
    for entry in theorem:
        _same_text(log, entry, rebuilt.get((claim.id, entry["name"])), f"theorem {claim.id!r}")
    children = root["children"]
    want_names = [n.name for n in nodes] + ["side conditions"]
    if [ch["name"] for ch in children] != want_names:
        raise ProofLogError(
            f"{log.path}: the lemma tree below {claim.id!r} has {[ch['name'] for ch in children]}, but the proof makes {want_names}"
        )
    for node, ch in zip(nodes, children, strict=False):
        _same_node(log, node, ch)
        if ch["verdict"] != "proved":
            raise ProofLogError(
                f"{log.path}: lemma {ch['name']!r} is {ch['verdict']}, but a proof of {claim.id} needs every lemma proved"
            )
    side = children[-1]
    if (
        side["verdict"] != "proved"
        or side["queries"]
        or side["children"]
        or not str(side["statement"]).startswith("every lemma was applied only where")
    ):
        raise ProofLogError(
            f"{log.path}: the lemma tree's side conditions node is not the proof's (proved, no queries, no children)"
        )
    if rec["checked"] != _count(job.alphabet, lo, hi):
        raise ProofLogError(
            f"{log.path}: checked={rec['checked']}, but {lo} <= |w| <= {hi} holds {_count(job.alphabet, lo, hi)} words"
        )
    detail = (
        allowed_next_detail(claim, hi)
        if depth_features
        else trace_detail(claim, len(_lemmas(log, c, values)), hi)
    )
    if rec["detail"] != detail:
        raise ProofLogError(
            f"{log.path}: detail={str(rec['detail'])[:80]!r}… is not what the queries show ({detail[:80]}…)"
        )
    return False


def _check_same_language(log: ProofLog, job: Job, claim: ExactFact) -> bool:
    """The checks of an smt record of two languages compared for every length
    (:mod:`~netproof.verifier.smt.compositional.same_language`): a proof's three certificate
    queries rebuilt around the recorded invariant, each unsat, its ``checked`` and ``detail``; a
    refutation's word replayed with both membership tests (``--method all`` too: the smt method
    proves every length, or its refutation, without queries, is the word). Never needs the
    check run again."""
    rec = log.record
    method, verdict, entries = str(rec["method"]), rec["verdict"], _all_entries(rec)
    statable = claim.statable
    assert statable is not None
    if rec["format_version"] != 2 or rec["lemmas"] is not None:
        raise ProofLogError(
            f"{log.path}: a proof of {claim.id} for every length keeps its three queries in the record, with no lemma tree"
        )
    both = (
        re.fullmatch(r"exact rational arithmetic \+ " + re.escape(same_language.METHOD), method)
        is not None
    )
    if method != same_language.METHOD and not both:
        raise ProofLogError(
            f"{log.path}: method={method!r} is not {same_language.METHOD!r} (or the exhaustive check + it)"
        )
    names = [e["name"] for e in entries]
    want = same_language.query_names(claim.id)
    if entries and names != want:
        raise ProofLogError(
            f"{log.path}: the queries are {_span(names)}, but a proof of {claim.id} for every length makes {_span(want)}"
        )
    if entries:
        try:
            rebuilt = same_language.rebuild_same_language(
                claim, {e["name"]: log.smt2[e["sha256"]] for e in entries}
            )
        except ValueError as exc:
            raise ProofLogError(f"{log.path}: {exc}; run the proof again") from None
        for entry in entries:
            _same_text(log, entry, rebuilt.get(entry["name"]), f"theorem {claim.id!r}")
        _result_needed(log, f"theorem {claim.id!r}", entries, False)
    if entries and verdict != "proved":
        raise ProofLogError(
            f"{log.path}: a {verdict} record of {claim.id} lists queries; only a proof makes them"
        )
    if verdict == "proved" and not entries:
        raise ProofLogError(
            f"{log.path}: a proof of {claim.id} by {method!r} needs its queries {_span(want)}"
        )
    if (
        verdict == "proved" and not both
    ):  # beside the exhaustive check, the queries prove more than its detail says
        words = same_language.words_covered(statable, claim.max_len)
        if rec["checked"] != words:
            raise ProofLogError(
                f"{log.path}: checked={rec['checked']}, but 0 <= |w| <= {claim.max_len} holds {words} words"
            )
        details = [
            same_language.same_language_detail(statable, claim.max_len, how)
            for how in COUNTING_HOWS
        ]
        if rec["detail"] not in details:
            raise ProofLogError(
                f"{log.path}: detail={str(rec['detail'])[:80]!r}… is not what the queries show ({details[0][:80]}…)"
            )
    if verdict == "refuted":
        cx = rec["counterexample"]
        try:
            word = tokenize(job.alphabet, cx) if isinstance(cx, str) else None
        except ValueError:
            word = None
        again = None if word is None else check_word(job, claim, word)
        if not isinstance(again, Refuted):
            raise ProofLogError(
                f"{log.path}: counterexample {cx!r} is not a word on which {statable.left.name} and {statable.right.name} differ"
            )
    return False


def _ranges(cid: str, names: Sequence[str]) -> tuple[int, int] | None:
    """(first, last) length of theorem queries ``"<id> n=a..b"``/``"<id> n=a"`` that follow each
    other without gap or overlap; None where they do not."""
    prefix = f"{cid} n="
    first = nxt = None
    for name in names:
        if not name.startswith(prefix):
            return None
        a, dots, b = name[len(prefix) :].partition("..")
        if (
            not a.isdigit()
            or (dots and not b.isdigit())
            or str(int(a)) != a
            or (dots and str(int(b)) != b)
        ):
            return None
        a_, b_ = int(a), int(b) if dots else int(a)
        if b_ < a_ or (nxt is not None and a_ != nxt) or (dots and b_ == a_):
            return None
        first = a_ if first is None else first
        nxt = b_ + 1
    return None if first is None or nxt is None else (first, nxt - 1)


def _same_node(log: ProofLog, node: LemmaNode, rec: Mapping[str, Any]) -> None:
    """A recorded lemma node equal to the rebuilt one: name, statement, verdict, queries (name,
    bytes, answer) and children."""
    where = f"lemma {node.name!r}"
    for key in ("name", "statement", "verdict"):
        if rec[key] != getattr(node, key):
            raise ProofLogError(
                f"{log.path}: {where}: {key}={rec[key]!r}, but proving it again gives {getattr(node, key)!r}"
            )
    got = [q["name"] for q in rec["queries"]]
    want = [q.name for q in node.queries]
    if got != want:
        raise ProofLogError(
            f"{log.path}: {where} has queries {_span(got)}, proving it again makes {_span(want)}"
        )
    for q, entry in zip(node.queries, rec["queries"], strict=True):
        _same_text(log, entry, q.smt2, where)
        if entry["result"] != q.result:
            raise ProofLogError(
                f"{log.path}: {where} query {q.name!r} has result {entry['result']}, proving it again gives {q.result}"
            )
    if [ch["name"] for ch in rec["children"]] != [ch.name for ch in node.children]:
        raise ProofLogError(
            f"{log.path}: {where} has children {[ch['name'] for ch in rec['children']]}, proving it again gives {[ch.name for ch in node.children]}"
        )
    for ch, r in zip(node.children, rec["children"], strict=True):
        _same_node(log, ch, r)


def _check_block(log: ProofLog, job: Job, claim: BlockIdentity) -> bool:
    rec = log.record
    if rec["format_version"] != 2:
        raise ProofLogError(
            f"{log.path}: a version 1 record holds no query for the block lemma {claim.id!r}; run the proof again"
        )
    if rec["lemmas"] is not None:
        raise ProofLogError(f"{log.path}: a block lemma's record has no lemma tree")
    built = block_identity_query(job, claim)
    want = [] if isinstance(built, Unknown) else [claim.id]
    names = [e["name"] for e in rec["queries"]]
    if rec["verdict"] != "unknown" and names != want:
        raise ProofLogError(
            f"{log.path}: the queries are {names}, but the block lemma {claim.id!r} is shown by {want}"
        )
    for entry in rec["queries"]:
        _same_text(
            log,
            entry,
            None if isinstance(built, Unknown) or entry["name"] != claim.id else to_smt2(built[0]),
            "",
        )
    if rec["verdict"] != "unknown" and want:
        _result_needed(log, "", rec["queries"], rec["verdict"] == "refuted")
    return not want and rec["verdict"] != "unknown"


def rebuild_queries(
    c: Construction, values: Mapping[str, Any], claim: Claim, rec: Mapping[str, Any]
) -> dict[str, str]:
    """The SMT-LIB2 text of the recorded top-level queries, rebuilt (not solved), by query name."""
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
            if name.startswith("n=") and name[2:].isdigit() and str(int(name[2:])) == name[2:]:
                m = int(name[2:])
                if isinstance(claim, Recognizes):
                    rq = recognition_query(job.network(m), claim.language, m)
                    out[name] = to_smt2(rq.solver, logic=rq.logic)
                elif claim.closed_form is not None:
                    vq = value_query(job.network(m), claim, m)
                    out[name] = to_smt2(vq.solver, logic=vq.logic)
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
