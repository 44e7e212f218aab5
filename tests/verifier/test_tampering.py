"""Tampered proof logs: every edit of a committed record that changes what it proves is caught by
``netproof recheck`` (rejected, exit 2; disagree, exit 1; or, where nothing can be decided in the
time given, undecided, exit 3), never "agree".

Each case works on a copy of a committed record (``proofs/dyck/Y2.n16.json``: a compositional proof
for every length; ``proofs/first-flawed-logn/recognizes.n48.json``: a monolithic proof, one query per length;
``proofs/parity/C4.n48.json``: a proof by position classes; ``proofs/parity/C4.n10.json``: an
exhaustive proof) and its ``.smt2`` files, in the same layout. The table holds the edit, the exit
status and words of the message; the forged proofs (a theorem query replaced by a trivially unsat
one, its sha256 updated, whatever the labels say) are tried with both cvc5 and z3. A hypothesis
test applies random edits to random fields of the same records.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.verifier import cli as np_cli
from netproof.verifier.smt.prooflog import ProofLogError, verify_record
from netproof.verifier.smt.recheck import recheck_log

REPO = Path(__file__).resolve().parents[2]
RECORDS = {
    "Y2": "dyck/Y2.n16.json",
    "FIRST": "first-flawed-logn/recognizes.n48.json",
    "C4": "parity/C4.n48.json",
    "C4x": "parity/C4.n10.json",
}
FALSE = "(set-logic QF_LRA)\n(assert false)\n(check-sat)\n"

Record = dict[str, Any]


@dataclass
class Copy:
    """A committed record copied under ``tmp/proofs`` with its query files."""

    path: Path
    rec: Record

    def save(self, text: str | None = None) -> None:
        self.path.write_text(
            json.dumps(self.rec, indent=2, sort_keys=True) + "\n" if text is None else text,
            encoding="utf-8",
        )

    def entries(self) -> list[Record]:
        out = list(self.rec["queries"] or [])
        stack = [self.rec["lemmas"]] if self.rec["lemmas"] else []
        while stack:
            node = stack.pop()
            out.extend(node["queries"])
            stack.extend(node["children"])
        return out

    def entry(self, name: str) -> Record:
        return next(e for e in self.entries() if e["name"] == name)

    def node(self, name: str) -> Record:
        stack = [self.rec["lemmas"]]
        while stack:
            node = stack.pop()
            if node["name"] == name:
                return node
            stack.extend(node["children"])
        raise KeyError(name)

    def forge(self, name: str, text: str = FALSE, new_name: str | None = None) -> None:
        """Replace query ``name``'s file by ``text`` and update its sha256 (and its name)."""
        e = self.entry(name)
        (self.path.parent / e["file"]).resolve().write_text(text, encoding="utf-8")
        e["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if new_name is not None:
            e["name"] = new_name


def copy_record(tmp: Path, key: str) -> Copy:
    rel = RECORDS[key]
    src = REPO / "proofs" / rel
    rec = json.loads(src.read_text(encoding="utf-8"))
    dest = tmp / "proofs" / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest)
    folders = {str(Path(e["file"]).parent) for e in Copy(dest, rec).entries()}
    for folder in folders:
        shutil.copytree(
            (src.parent / folder).resolve(), (dest.parent / folder).resolve(), dirs_exist_ok=True
        )
    return Copy(dest, rec)


def proved_to_unknown(c: Copy) -> None:
    for key in ("checked", "detail"):
        del c.rec[key]
    c.rec["verdict"] = "unknown"
    c.rec["reason"] = "timeout: the budget ran out"


def proved_to_refuted(c: Copy, word: str) -> None:
    del c.rec["checked"]
    c.rec["verdict"] = "refuted"
    c.rec["detail"] = f"{word} is misclassified"
    c.rec["counterexample"] = word
    c.rec["values"] = {}


def set_results(c: Copy, result: str, names: list[str] | None = None) -> None:
    for e in c.entries():
        if names is None or e["name"] in names:
            e["result"] = result


def every_n(c: Copy, label: str | None) -> None:
    """The three every-length certificate queries of Y2 replaced by ``(assert false)``."""
    if label is not None:
        c.rec["method"] = label
    for what in ("initiation", "consecution", "safety"):
        c.forge(f"Y2 every n: {what}")


def remove_node(c: Copy, name: str) -> None:
    root = c.rec["lemmas"]
    root["children"] = [ch for ch in root["children"] if ch["name"] != name]


def raise_bound(c: Copy, hi: int, *, checked: bool = False) -> None:
    c.rec["bound"]["max_len"] = hi
    if checked:
        lo = c.rec["bound"]["min_len"]
        c.rec["checked"] = sum(2**m for m in range(lo, hi + 1))
        c.rec["detail"] = re.sub(r"<= \d+", f"<= {hi}", c.rec["detail"], count=1)


def stripped(c: Copy, label: str | None) -> None:
    c.rec["queries"] = []
    c.rec["lemmas"] = None
    c.rec["solver"] = None
    if label is not None:
        c.rec["method"] = label


@dataclass(frozen=True)
class Case:
    id: str
    record: str
    edit: Callable[[Copy], None]
    exit: int
    words: str
    text: Callable[[str], str] | None = None
    args: tuple[str, ...] = ()


def set_(*path: str, value: Any) -> Callable[[Copy], None]:
    def go(c: Copy) -> None:
        obj = c.rec
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value

    return go


def both(*edits: Callable[[Copy], None]) -> Callable[[Copy], None]:
    def go(c: Copy) -> None:
        for e in edits:
            e(c)

    return go


FORGED = [
    Case(
        "Y2-label-smt-and-every-n-forged", "Y2", lambda c: every_n(c, "smt (z3)"), 2, "lemma tree"
    ),
    Case(
        "Y2-every-n-forged",
        "Y2",
        lambda c: every_n(c, None),
        2,
        "the recorded initiation query does not end with a negated invariant",
    ),
    Case(
        "Y2-label-exhaustive-and-every-n-forged",
        "Y2",
        lambda c: every_n(c, "exhaustive (exact)"),
        2,
        "lemma tree",
    ),
    Case(
        "Y2-safety-forged",
        "Y2",
        lambda c: c.forge("Y2 every n: safety"),
        2,
        "'Y2 every n: safety' rebuilds to sha256",
    ),
    Case(
        "C4-label-smt-and-classes-forged",
        "C4",
        both(set_("method", value="smt (z3)"), lambda c: c.forge("C4 every n: position classes")),
        2,
        "lemma tree",
    ),
    Case(
        "C4-classes-forged",
        "C4",
        lambda c: c.forge("C4 every n: position classes"),
        2,
        "rebuilds to sha256",
    ),
    Case(
        "C4-classes-forged-renamed-range",
        "C4",
        lambda c: c.forge("C4 every n: position classes", new_name="C4 n=0..48"),
        2,
        "cannot be rebuilt",
    ),
    Case(
        "FIRST-n30-renamed-and-forged",
        "FIRST",
        lambda c: c.forge("n=30", new_name="n=30 "),
        2,
        "one per length",
    ),
    Case("FIRST-n30-forged", "FIRST", lambda c: c.forge("n=30"), 2, "'n=30' rebuilds to sha256"),
    Case(
        "FIRST-n30-forged-label-compositional",
        "FIRST",
        both(set_("method", value="smt (z3), compositional"), lambda c: c.forge("n=30")),
        2,
        "lemma tree",
    ),
    Case(
        "FIRST-fig1-lemma-forged",
        "C4",
        lambda c: c.forge("fig1"),
        2,
        "lemma 'fig1' query 'fig1' rebuilds to sha256",
    ),
]

CASES = [
    *FORGED,
    # --- Y2: a compositional proof for every length
    Case("Y2-label-smt", "Y2", set_("method", value="smt (z3)"), 2, "lemma tree"),
    Case("Y2-label-exhaustive", "Y2", set_("method", value="exhaustive (exact)"), 2, "lemma tree"),
    Case(
        "Y2-bound-100000",
        "Y2",
        lambda c: raise_bound(c, 100000),
        2,
        "(every word with 0 <= |w| <= 100000)",
    ),
    Case(
        "Y2-bound-beyond-any-run",
        "Y2",
        lambda c: raise_bound(c, 10**9),
        2,
        "bound.max_len=1000000000 must be in 0..1000000",
    ),
    Case("Y2-checked-1", "Y2", set_("checked", value=1), 2, "checked=1"),
    Case("Y2-checked-string", "Y2", set_("checked", value="5726623061"), 2, "must be a count"),
    Case(
        "Y2-lemma-node-removed",
        "Y2",
        lambda c: remove_node(c, "match1.left"),
        2,
        "the tree is not complete",
    ),
    Case(
        "Y2-readout-node-removed",
        "Y2",
        lambda c: remove_node(c, "readout.any_open_or_error"),
        2,
        "the tree is not complete",
    ),
    Case(
        "Y2-side-conditions-removed",
        "Y2",
        lambda c: remove_node(c, "side conditions"),
        2,
        "the tree is not complete",
    ),
    Case(
        "Y2-lemma-verdict-flipped",
        "Y2",
        lambda c: c.node("logic1").update(verdict="refuted"),
        2,
        "lemma 'logic1': verdict='refuted'",
    ),
    Case(
        "Y2-lemma-query-removed",
        "Y2",
        lambda c: c.node("logic1").update(queries=[]),
        2,
        "lemma 'logic1' has queries",
    ),
    Case(
        "Y2-lemma-result-flipped",
        "Y2",
        lambda c: c.entry("logic1").update(result="sat"),
        2,
        "proving it again gives unsat",
    ),
    Case(
        "Y2-lemma-statement",
        "Y2",
        lambda c: c.node("logic1").update(statement="anything at all"),
        2,
        "statement='anything at all'",
    ),
    Case(
        "Y2-root-verdict-refuted",
        "Y2",
        lambda c: c.rec["lemmas"].update(verdict="refuted"),
        2,
        "the lemma tree's root is refuted",
    ),
    Case(
        "Y2-one-result-unknown",
        "Y2",
        lambda c: set_results(c, "unknown", ["Y2 every n: consecution"]),
        2,
        "needs unsat",
    ),
    Case("Y2-all-results-unknown", "Y2", lambda c: set_results(c, "unknown"), 2, "needs unsat"),
    Case(
        "Y2-query-renamed",
        "Y2",
        lambda c: c.entry("Y2 every n: safety").update(name="Y2 every n: safety "),
        2,
        "neither prove every length",
    ),
    Case(
        "Y2-verdict-refuted-forged",
        "Y2",
        lambda c: both(
            lambda d: proved_to_refuted(d, "(("),
            lambda d: d.rec["lemmas"].update(verdict="refuted"),
        )(c),
        2,
        "needs sat",
    ),
    Case(
        "Y2-verdict-unknown-forged",
        "Y2",
        lambda c: both(proved_to_unknown, lambda d: d.rec["lemmas"].update(verdict="unknown"))(c),
        3,
        "nothing to re-check",
    ),
    Case(
        "Y2-verdict-unknown-root-proved",
        "Y2",
        proved_to_unknown,
        2,
        "the lemma tree's root is proved, the record unknown",
    ),
    Case(
        "Y2-statement",
        "Y2",
        set_("claim", "statement", value="Y2 recognizes every language"),
        2,
        "claim.statement=",
    ),
    Case(
        "Y2-reference",
        "Y2",
        set_("claim", "reference", value="Yao et al. 2021, Theorem 9"),
        2,
        "claim.reference=",
    ),
    Case("Y2-claim-kind", "Y2", set_("claim", "kind", value="ValueIs"), 2, "claim.kind='ValueIs'"),
    Case(
        "Y2-claim-id",
        "Y2",
        set_("claim", "id", value="Y3"),
        2,
        "claim.kind='Recognizes', but dyck says 'TraceProperty'",
    ),
    Case(
        "Y2-detail",
        "Y2",
        set_("detail", value="every word with 0 <= |w| <= 16: exhaustive"),
        2,
        "does not say what the queries show",
    ),
    Case("Y2-params", "Y2", set_("params", "depth", value="02"), 2, "are not as dyck shows them"),
    Case("Y2-paper-id", "Y2", set_("paper_id", value="other2099"), 2, "paper_id='other2099'"),
    Case(
        "Y2-fingerprint",
        "Y2",
        set_("network", "fingerprint", value="0" * 64),
        2,
        "network fingerprint 0000000000000000",
    ),
    Case("Y2-min-len", "Y2", set_("bound", "min_len", value=1), 2, "bound.min_len=1"),
    Case("Y2-solver-name", "Y2", set_("solver", "name", value="cvc5"), 2, "answered by z3"),
    Case("Y2-solver-null", "Y2", set_("solver", value=None), 2, "solver is null"),
    Case("Y2-tool-name", "Y2", set_("tool", "name", value="other"), 2, "tool.name='other'"),
    Case(
        "Y2-checked-NaN",
        "Y2",
        lambda c: None,
        2,
        "NaN is not JSON",
        text=lambda t: t.replace('"checked": 5726623061', '"checked": NaN'),
    ),
    Case(
        "Y2-checked-Infinity",
        "Y2",
        lambda c: None,
        2,
        "Infinity is not JSON",
        text=lambda t: t.replace('"checked": 5726623061', '"checked": Infinity'),
    ),
    Case(
        "Y2-duplicate-key",
        "Y2",
        lambda c: None,
        2,
        "duplicate key 'verdict'",
        text=lambda t: t.replace(
            '"verdict": "proved"', '"verdict": "proved", "verdict": "proved"', 1
        ),
    ),
    Case("Y2-stripped", "Y2", lambda c: stripped(c, None), 2, "without a lemma tree"),
    Case(
        "Y2-stripped-label-exhaustive",
        "Y2",
        lambda c: stripped(c, "exhaustive (exact)"),
        3,
        "did not finish",
        args=("--timeout", "2"),
    ),
    Case(
        "Y2-file-outside",
        "Y2",
        lambda c: c.entry("logic1").update(file="../" * 30 + "etc/hostname"),
        2,
        "sha256",
    ),
    # --- FIRST: a monolithic proof, one query per length
    Case(
        "FIRST-queries-25-48-removed",
        "FIRST",
        lambda c: c.rec.update(queries=c.rec["queries"][:25]),
        2,
        "needs 49 ('n=0' … 'n=48')",
    ),
    Case("FIRST-bound-4800", "FIRST", lambda c: raise_bound(c, 4800), 2, "needs 4801"),
    Case(
        "FIRST-bound-47-consistent",
        "FIRST",
        lambda c: both(
            lambda d: raise_bound(d, 47, checked=True),
            lambda d: d.rec.update(queries=d.rec["queries"][:47]),
        )(c),
        2,
        "needs 48",
    ),
    Case(
        "FIRST-one-result-unknown",
        "FIRST",
        lambda c: set_results(c, "unknown", ["n=5"]),
        2,
        "'n=5' has result unknown",
    ),
    Case(
        "FIRST-all-results-unknown",
        "FIRST",
        lambda c: set_results(c, "unknown"),
        2,
        "'n=0' has result unknown",
    ),
    Case(
        "FIRST-queries-swapped",
        "FIRST",
        lambda c: c.rec["queries"].insert(3, c.rec["queries"].pop(4)),
        2,
        "in order",
    ),
    Case(
        "FIRST-label-compositional",
        "FIRST",
        set_("method", value="smt (z3), compositional"),
        2,
        "lemma tree",
    ),
    Case(
        "FIRST-label-exhaustive",
        "FIRST",
        set_("method", value="exhaustive (exact)"),
        3,
        "did not finish",
        args=("--timeout", "2"),
    ),
    Case(
        "FIRST-verdict-refuted-forged", "FIRST", lambda c: proved_to_refuted(c, "a"), 2, "needs sat"
    ),
    Case("FIRST-verdict-unknown", "FIRST", proved_to_unknown, 3, "nothing to re-check"),
    Case(
        "FIRST-detail",
        "FIRST",
        set_("detail", value="every word with 0 <= |w| <= 48, and every longer one"),
        2,
        "detail=",
    ),
    Case("FIRST-checked", "FIRST", set_("checked", value=1), 2, "checked=1"),
    # --- C4: proved for every length by position classes
    Case(
        "C4-fig1-verdict-unknown",
        "C4",
        lambda c: c.node("fig1").update(verdict="unknown"),
        2,
        "lemma 'fig1': verdict='unknown'",
    ),
    Case("C4-fig1-removed", "C4", lambda c: remove_node(c, "fig1"), 2, "the tree is not complete"),
    Case(
        "C4-classes-result-unknown",
        "C4",
        lambda c: set_results(c, "unknown", ["C4 every n: position classes"]),
        2,
        "needs unsat",
    ),
    Case(
        "C4-bound-4800",
        "C4",
        lambda c: raise_bound(c, 4800),
        2,
        "(every word with 0 <= |w| <= 4800)",
    ),
    # --- C4 exhaustive up to 10
    Case(
        "C4x-bound-12",
        "C4x",
        lambda c: raise_bound(c, 12),
        2,
        "checked=2047, but 0 <= |w| <= 12 holds 8191 words",
    ),
    Case("C4x-checked-1", "C4x", set_("checked", value=1), 2, "checked=1"),
    Case(
        "C4x-checked-NaN",
        "C4x",
        lambda c: None,
        2,
        "NaN is not JSON",
        text=lambda t: t.replace('"checked": 2047', '"checked": NaN'),
    ),
    Case("C4x-bound-40", "C4x", lambda c: raise_bound(c, 40), 2, "holds 2199023255551 words"),
    Case(
        "C4x-bound-40-checked-forged",
        "C4x",
        lambda c: raise_bound(c, 40, checked=True),
        3,
        "2,199,023,255,551 words",
        args=("--timeout", "2"),
    ),
    Case(
        "C4x-verdict-refuted-forged",
        "C4x",
        lambda c: proved_to_refuted(c, "1"),
        1,
        "the log says refuted, the check run again says proved",
    ),
    Case(
        "C4x-detail",
        "C4x",
        set_("detail", value="every word with 0 <= |w| <= 10, and every longer one"),
        1,
        "detail: the log says",
    ),
    Case(
        "C4x-method-label",
        "C4x",
        set_("method", value="exhaustive (interval)"),
        1,
        "method: the log says",
    ),
    Case("C4x-label-smt", "C4x", set_("method", value="smt (z3)"), 2, "needs 11 ('n=0' … 'n=10')"),
    Case(
        "C4x-solver-forged",
        "C4x",
        set_("solver", value={"name": "z3", "version": "4.13.0"}),
        2,
        "a record without queries names no solver",
    ),
    Case("C4x-verdict-unknown", "C4x", proved_to_unknown, 3, "nothing to re-check"),
    Case(
        "C4x-statement",
        "C4x",
        set_("claim", "statement", value="PARITY is easy"),
        2,
        "claim.statement=",
    ),
]


def run_case(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], solver: str
) -> tuple[int, str]:
    c = copy_record(tmp_path, case.record)
    case.edit(c)
    c.save()
    if case.text is not None:
        before = c.path.read_text(encoding="utf-8")
        after = case.text(before)
        assert after != before
        c.path.write_text(after, encoding="utf-8")
    code = np_cli.main(["recheck", str(c.path), "--solver", solver, *case.args])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_tampered_record_is_never_agreed_with(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_case(case, tmp_path, capsys, "z3")
    assert not re.search(r"^AGREE ", out, re.M)
    assert (code, case.words in out) == (case.exit, True), out


@pytest.mark.parametrize("solver", ["cvc5", "z3"])
@pytest.mark.parametrize("case", FORGED, ids=[c.id for c in FORGED])
def test_a_forged_proof_is_rejected_by_both_solvers(
    case: Case, solver: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(solver)
    code, out = run_case(case, tmp_path, capsys, solver)
    assert (code, "REJECTED" in out, case.words in out) == (2, True, True), out


def test_the_table_holds_at_least_the_45_tamperings_of_the_issue() -> None:
    assert len(CASES) >= 45
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("key", sorted(RECORDS))
def test_the_untouched_copies_are_agreed_with(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = copy_record(tmp_path, key)
    code = np_cli.main(["recheck", str(c.path), "--solver", "z3"])
    out = capsys.readouterr().out
    assert (code, bool(re.search(r"^AGREE ", out, re.M))) == (0, True), out


def test_a_changed_solver_version_is_provenance_and_recheck_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = copy_record(tmp_path, "C4")
    c.rec["solver"]["version"] = "9.9.9"
    c.save()
    code = np_cli.main(["recheck", str(c.path), "--solver", "z3"])
    out = capsys.readouterr().out
    assert (code, "recorded with z3 9.9.9" in out) == (0, True), out


def test_an_exhaustive_rerun_announces_its_size_before_it_starts(tmp_path: Path) -> None:
    c = copy_record(tmp_path, "C4x")
    raise_bound(c, 40, checked=True)
    c.save()
    told: list[str] = []
    check = recheck_log(
        str(c.path), registry=REGISTRY, solver="z3", timeout=1.0, announce=told.append
    )
    assert (check.outcome, len(told)) == ("undecided", 1)
    assert (
        "re-running the exhaustive check over 2,199,023,255,551 words (0 <= |w| <= 40), at most 1 s"
        in told[0]
    )


# --------------------------------------------------------------------------- random edits

# Fields whose edit does not change what the record claims: provenance (which versions wrote and
# answered it) and the explanations of single answers.
PROVENANCE = {("tool", "version"), ("solver", "version")}


def leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, dict):
        return [p for k in sorted(obj) for p in leaves(obj[k], (*path, k))] or [path]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in leaves(v, (*path, i))] or [path]
    return [path]


def mutated(value: Any, how: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return [value + 1, value - 1, 0, str(value), None][how % 5]
    if isinstance(value, str):
        return [
            value + " ",
            value[:-1],
            "",
            value.upper() if value.upper() != value else value + "x",
            None,
        ][how % 5]
    if value is None:
        return ["x", 0, [], {}][how % 4]
    if isinstance(value, list):
        return value[:-1] if value else [{}]
    if isinstance(value, dict):
        return {}
    raise AssertionError(value)


def exempt(path: tuple[Any, ...]) -> bool:
    named = tuple(p for p in path if isinstance(p, str))
    return (
        named[-2:] in PROVENANCE
        or (len(named) >= 2 and named[-1] == "reason" and named[-2] == "queries")
        or ("lemmas" in named and named[-1] == "statement" and _is_side(path))
    )


_SIDE: dict[str, set[tuple[Any, ...]]] = {}


def _is_side(path: tuple[Any, ...]) -> bool:
    return path in _SIDE.get("paths", set())


def _originals() -> dict[str, Record]:
    out = {
        k: json.loads((REPO / "proofs" / rel).read_text(encoding="utf-8"))
        for k, rel in RECORDS.items()
    }
    side: set[tuple[Any, ...]] = set()
    for rec in out.values():
        root = rec["lemmas"]
        if root:
            for i, ch in enumerate(root["children"]):
                if ch["name"] == "side conditions":
                    side.add(("lemmas", "children", i, "statement"))
    _SIDE["paths"] = side
    return out


ORIGINALS = _originals()


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_random_edit_of_a_record_is_rejected_or_disagreed_with(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    key = data.draw(st.sampled_from(["Y2", "FIRST", "C4"]), label="record")
    rec = copy.deepcopy(ORIGINALS[key])
    paths = [p for p in leaves(rec) if p]
    path = data.draw(st.sampled_from(paths), label="field")
    how = data.draw(st.integers(0, 4), label="how")
    obj = rec
    for k in path[:-1]:
        obj = obj[k]
    new = mutated(obj[path[-1]], how)
    if (new == obj[path[-1]] and type(new) is type(obj[path[-1]])) or (
        isinstance(new, float) and math.isnan(new)
    ):
        return
    obj[path[-1]] = new
    c = copy_record(tmp_path_factory.mktemp("edit"), key)
    c.rec = rec
    c.save()
    check = recheck_log(str(c.path), registry=REGISTRY, solver="z3", timeout=30.0)
    if exempt(path):
        return
    assert check.outcome in ("rejected", "disagree", "undecided"), (path, new, check.detail)


def test_a_strict_reader_error_names_the_file(tmp_path: Path) -> None:
    c = copy_record(tmp_path, "C4")
    c.save(c.path.read_text(encoding="utf-8").replace('"bound"', '"bound": -Infinity, "x"', 1))
    with pytest.raises(ProofLogError, match=r"C4\.n48\.json: -Infinity is not JSON"):
        verify_record(str(c.path), REGISTRY)


def test_recheck_of_an_unknown_record_answers_at_once_with_nothing_to_re_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from netproof.verifier.smt import recheck as recheck_module

    code = np_cli.main(
        [
            "prove",
            "first",
            "--method",
            "smt",
            "--max-n",
            "4",
            "--out",
            str(tmp_path),
            "--jobs",
            "1",
            "--quiet",
        ]
    )
    capsys.readouterr()
    assert code == 3  # C6 has no closed form: unknown under --method smt
    [y5] = sorted((tmp_path / "first").glob("C6.*.json"))
    assert json.loads(y5.read_text(encoding="utf-8"))["verdict"] == "unknown"

    def no_rerun(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unknown record has nothing to re-run")

    monkeypatch.setattr(recheck_module, "check", no_rerun)
    assert np_cli.main(["recheck", str(y5)]) == 3
    out = capsys.readouterr().out
    assert "UNDECIDED" in out and "there is nothing to re-check" in out


def test_a_genuine_monolithic_refutation_passes_and_its_forged_twin_does_not(
    tmp_path: Path,
) -> None:
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.smt.prooflog import write_log
    from netproof.verifier.smt.prove import prove_claim_smt

    c = REGISTRY["dyck"]
    values = c.parse_params({"variant": "paper"})
    claim = next(x for x in c.claims(values) if x.id == "Y2-paper")
    outcome = prove_claim_smt(Job(c, values), claim, 4, compositional=False)
    path = write_log(str(tmp_path), c, values, claim, 4, outcome)
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    assert (rec["verdict"], rec["method"], rec["queries"][-1]["result"]) == (
        "refuted",
        "smt (z3)",
        "sat",
    )
    assert recheck_log(path, registry=REGISTRY, solver="z3").outcome == "agree"
    cx = rec["counterexample"]
    rec["counterexample"] = cx + cx
    Path(path).write_text(json.dumps(rec), encoding="utf-8")
    check = recheck_log(path, registry=REGISTRY, solver="z3")
    assert (check.outcome, "but the sat query is at n=" in check.detail) == ("rejected", True), (
        check.detail
    )
    # A word of the right length that is no counterexample: the sat answer agrees, the replay does not.
    import itertools

    from netproof.symbolic import render, tokenize
    from netproof.verifier.exhaustive.checker import check_word

    job = Job(c, values)
    n = len(tokenize(job.alphabet, cx))
    fine = next(
        w for w in itertools.product(job.alphabet, repeat=n) if check_word(job, claim, w) is None
    )
    rec["counterexample"] = render(job.alphabet, fine)
    Path(path).write_text(json.dumps(rec), encoding="utf-8")
    check = recheck_log(path, registry=REGISTRY, solver="z3")
    assert (check.outcome, "replayed exactly is no counterexample" in check.detail) == (
        "disagree",
        True,
    ), check.detail
