"""The kernel's exhaustive checks beyond its plain interpreter: the fast integer path
(:class:`netproof.kernel.interpret.Exhaustive`) equal to the plain one on every short word, and
mutants of a network that the kernel finds wrong, with a word its plain interpreter reproduces."""

from __future__ import annotations

import itertools
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import Refused, check_record
from netproof.kernel.interpret import Exhaustive, evaluator, run
from netproof.kernel.netfile import loads
from netproof.symbolic.netfile import dumps

REPO = Path(__file__).resolve().parents[2]


def _text(name: str, **params: str) -> str:
    c = REGISTRY[name]
    return dumps(c.network(c.parse_params(params)))


@pytest.mark.parametrize(
    ("name", "params", "max_len"),
    [
        ("brasp-dyck1-depth2", {}, 6),
        ("brasp-first-eq-last", {}, 6),
        ("dyck", {"k": "1", "depth": "3"}, 6),
        ("dyck", {"k": "2", "depth": "2", "variant": "paper"}, 3),
        ("dyck", {"k": "2", "depth": "2"}, 3),
    ],
)
def test_the_fast_path_gives_the_plain_interpreters_logit_on_every_short_word(
    name: str, params: dict[str, str], max_len: int
) -> None:
    net = loads(_text(name, **params))
    for n in range(max_len + 1):
        ev = Exhaustive(net, n)
        for w in itertools.product(net.alphabet, repeat=n):
            assert ev.logit(w) == run(net, w), (name, w)


def test_softmax_and_layer_norms_are_off_the_fast_path_and_the_evaluator_falls_back_to_the_plain_one() -> (
    None
):
    net = loads(_text("parity"))
    with pytest.raises(Refused, match="softmax"):
        Exhaustive(net, 3)
    ev = evaluator(net)
    assert all(ev(w) == run(net, w) for w in itertools.product(net.alphabet, repeat=4))
    net = loads(_text("first-ln"))
    with pytest.raises(Refused, match="layer norm"):
        Exhaustive(net, 3)
    with pytest.raises(Refused, match="is not rational"):  # the plain interpreter's own refusal
        evaluator(net)(("1", "0", "1"))


def _mutants(text: str) -> list[str]:
    """The network file's text with one weight or bias of an affine map changed by +1, each (the
    fingerprint kept: the kernel ties the file to the record by it, and does not recompute it)."""
    doc = json.loads(text)
    found: list[tuple[dict[str, str], str]] = []

    def walk(x: object) -> None:
        if isinstance(x, dict):
            if x.get("type") == "Affine":
                found.extend((row, k) for row in x["weights"].values() for k in row)
                found.extend((x["bias"], k) for k in x["bias"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc["network"])
    out = []
    for row, k in found:
        old = row[k]
        row[k] = str(Fraction(str(old)) + 1)
        out.append(json.dumps(doc))
        row[k] = old
    return out


def _cut(tmp_path: Path, source: str, hi: int, count: int) -> Path:
    rec = json.loads((REPO / "proofs" / source).read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 0, "max_len": hi}, checked=count)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    return path


_NAMED = re.compile(r"the network (accepts|rejects) '(.*)', which is (not )?in the language")


@pytest.mark.parametrize(
    ("source", "name", "params", "hi", "every"),
    [
        pytest.param(
            "dyck/Y2.n15.156f5a2d.json",
            "dyck",
            {"k": "1", "depth": "3"},
            4,
            5,
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "dyck/Y2.n8.json", "dyck", {"k": "2", "depth": "2"}, 3, 11, marks=pytest.mark.slow
        ),
    ],
)
def test_every_mutant_that_misclassifies_a_short_word_disagrees_naming_a_word_the_plain_interpreter_misclassifies(
    tmp_path: Path, source: str, name: str, params: dict[str, str], hi: int, every: int
) -> None:
    """Each +1 mutant (every ``every``-th: Dyck's networks have hundreds of weights) of the
    record's network: the
    kernel (fast path) disagrees exactly when the plain interpreter misclassifies a word of the
    bound, and the word it names is one the plain interpreter misclassifies."""
    net = loads(_text(name, **params))
    alphabet = net.alphabet
    count = sum(len(alphabet) ** n for n in range(hi + 1))
    record = _cut(tmp_path, source, hi, count)
    assert check_record(record, _write(tmp_path, _text(name, **params))).outcome == "checked"
    member = _member(int(params["depth"]))
    words = [w for n in range(hi + 1) for w in itertools.product(alphabet, repeat=n)]
    seen = {"disagree": 0, "checked": 0}
    for text in _mutants(_text(name, **params))[::every]:
        got = check_record(record, _write(tmp_path, text))
        seen[got.outcome] += 1
        mutant = loads(text)
        m = _NAMED.search(got.detail)
        if got.outcome == "disagree":
            assert m is not None, got.detail
            word = tuple(m.group(2)) if m.group(2) != "ε" else ()
            assert (run(mutant, word) > 0) != member(word)
        else:
            assert got.outcome == "checked", got.detail
            first_wrong = next((w for w in words if (run(mutant, w) > 0) != member(w)), None)
            assert first_wrong is None
    assert seen["disagree"] > 0 and seen["checked"] > 0  # both kinds of mutant met


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "net.json"
    path.write_text(text, encoding="utf-8")
    return path


def _member(depth: int):  # type: ignore[no-untyped-def]
    """Dyck(k, depth) over ( ) [ ], written here again (the test's own reading)."""

    def dyck(w: tuple[str, ...]) -> bool:
        stack: list[str] = []
        for s in w:
            if s in "([":
                stack.append(s)
                if len(stack) > depth:
                    return False
            elif not stack or {"(": ")", "[": "]"}[stack.pop()] != s:
                return False
        return not stack

    return dyck


# ------------------------------------------------------------------ B-RASP and C-RASP programs


def _library() -> list[tuple[str, object, object, str]]:
    from netproof.constructions.rasp.library import BRASP_PROGRAMS, CRASP_PROGRAMS
    from netproof.verifier.claims.rasp import brasp, crasp

    return [("B-RASP", p, brasp, k) for k, p in BRASP_PROGRAMS.items()] + [
        ("C-RASP", p, crasp, k) for k, p in CRASP_PROGRAMS.items()
    ]


def test_the_kernels_program_interpreter_accepts_what_netprooofs_accepts_on_every_short_word() -> (
    None
):
    from netproof.kernel import programs
    from netproof.verifier.claims.rasp.common import program_file

    for kind, program, module, _ in _library():
        member = programs.language(programs.read(json.loads(program_file(program, kind))))
        for n in range(7):
            for w in itertools.product(program.alphabet, repeat=n):  # type: ignore[attr-defined]
                assert member(w) == module.accepts(program, w), (program, w)  # type: ignore[attr-defined]


def test_the_committed_program_files_are_what_netproof_writes_today() -> None:
    for kind, _program, _, key in _library():
        c = REGISTRY[f"{'brasp' if kind == 'B-RASP' else 'crasp'}-{key.replace('_', '-')}"]
        assert c.program_file is not None
        assert (REPO / "proofs" / c.name / "program.rasp").read_text(encoding="utf-8") == (
            c.program_file()
        )


def _program_record(tmp_path: Path, name: str, hi: int, program: str | None) -> Path:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    rec = json.loads((REPO / "proofs" / name / "network_program.n8.json").read_text("utf-8"))
    count = sum(2**n for n in range(hi + 1))
    rec.update(bound={"min_len": 0, "max_len": hi}, checked=count)
    (folder / "record.json").write_text(json.dumps(rec), encoding="utf-8")
    if program is not None:
        (folder / "program.rasp").write_text(program, encoding="utf-8")
    return folder / "record.json"


def test_a_program_record_is_checked_and_refused_without_its_program_file(tmp_path: Path) -> None:
    program = (REPO / "proofs" / "brasp-contains-ab" / "program.rasp").read_text("utf-8")
    net = _write(tmp_path, _text("brasp-contains-ab"))
    got = check_record(_program_record(tmp_path, "brasp-contains-ab", 6, program), net)
    assert got.outcome == "checked" and got.detail.startswith("proved: all 127 words")
    (tmp_path / "brasp-contains-ab" / "program.rasp").unlink()
    got = check_record(tmp_path / "brasp-contains-ab" / "record.json", net)
    assert got.outcome == "refused" and "no program file (program.rasp)" in got.detail


def test_a_program_file_of_another_program_or_malformed_disagrees(tmp_path: Path) -> None:
    other = (REPO / "proofs" / "brasp-no-aa" / "program.rasp").read_text("utf-8")
    net = _write(tmp_path, _text("brasp-contains-ab"))
    got = check_record(_program_record(tmp_path, "brasp-contains-ab", 4, other), net)
    assert got.outcome == "disagree" and "program.rasp is program 'no_aa'" in got.detail
    doc = json.loads((REPO / "proofs" / "brasp-contains-ab" / "program.rasp").read_text("utf-8"))
    doc["vectors"][0] = ["attend", "leftmost", "past", 5, 0, 0]  # an operand not yet defined
    got = check_record(_program_record(tmp_path, "brasp-contains-ab", 4, json.dumps(doc)), net)
    assert got.outcome == "disagree" and "is not an earlier entry" in got.detail


_SWAP = {
    "leftmost": "rightmost", "rightmost": "leftmost", "past": "future", "future": "all",
    "all": "past", "and": "or", "or": "and", True: False, False: True,
}  # fmt: skip


def _program_mutants(text: str) -> list[str]:
    """The program file with one field of one operation changed: a side, mask, Boolean operator
    or constant swapped (_SWAP), an integer +1, the operands of a comparison swapped."""
    doc = json.loads(text)
    out = []
    for e in doc["vectors"]:
        for f, v in enumerate(e):
            if (f == 0 and v in ("and", "or")) or (
                f > 0 and isinstance(v, str | bool) and v in _SWAP
            ):
                if e[0] == "token":
                    continue
                e[f] = _SWAP[v]
                out.append(json.dumps(doc))
                e[f] = v
            elif e[0] in ("number", "scale") and f == 1:
                e[f] = v + 1
                out.append(json.dumps(doc))
                e[f] = v
        if e[0] == "less":
            e[1], e[2] = e[2], e[1]
            out.append(json.dumps(doc))
            e[1], e[2] = e[2], e[1]
    return out


@pytest.mark.parametrize(
    ("name", "hi"),
    [
        ("brasp-contains-ab", 6),
        pytest.param("brasp-first-eq-last", 6, marks=pytest.mark.slow),
        ("crasp-dyck1", 5),
    ],
)
def test_every_program_mutant_that_changes_a_short_words_verdict_disagrees_naming_a_word_both_interpreters_reproduce(
    tmp_path: Path, name: str, hi: int
) -> None:
    from netproof.kernel import programs

    text = (REPO / "proofs" / name / "program.rasp").read_text(encoding="utf-8")
    net_text = _text(name)
    net, path = loads(net_text), _write(tmp_path, net_text)
    words = [w for n in range(hi + 1) for w in itertools.product(net.alphabet, repeat=n)]
    seen = {"disagree": 0, "checked": 0}
    mutants = _program_mutants(text)
    assert len(mutants) >= 4
    for mutant in mutants:
        got = check_record(_program_record(tmp_path, name, hi, mutant), path)
        seen[got.outcome] += 1
        member = programs.language(programs.read(json.loads(mutant)))
        wrong = [w for w in words if (run(net, w) > 0) != member(w)]
        if got.outcome == "disagree":
            m = _NAMED.search(got.detail)
            assert m is not None, got.detail
            word = () if m.group(2) == "ε" else tuple(m.group(2))
            assert word == wrong[0]  # the shortlex-first word the network and program differ on
        else:
            assert got.outcome == "checked" and wrong == [], got.detail
    assert seen["disagree"] > 0


def test_every_network_mutant_of_a_compiled_program_that_misclassifies_a_short_word_disagrees(
    tmp_path: Path,
) -> None:
    """+1 mutants (every third) of brasp-no-aa's compiled network against its program (fast
    path): the kernel disagrees naming a word the plain interpreter misclassifies, or checks a
    mutant the plain interpreter finds right on every word up to length 4."""
    from netproof.kernel import programs

    name, hi = "brasp-no-aa", 4
    text = (REPO / "proofs" / name / "program.rasp").read_text(encoding="utf-8")
    member = programs.language(programs.read(json.loads(text)))
    record = _program_record(tmp_path, name, hi, text)
    words = [w for n in range(hi + 1) for w in itertools.product(("a", "b"), repeat=n)]
    seen = {"disagree": 0, "checked": 0}
    for mutant in _mutants(_text(name))[::3]:
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        net = loads(mutant)
        if got.outcome == "disagree":
            m = _NAMED.search(got.detail)
            assert m is not None, got.detail
            word = () if m.group(2) == "ε" else tuple(m.group(2))
            assert (run(net, word) > 0) != member(word)
        else:
            assert got.outcome == "checked", got.detail
            assert all((run(net, w) > 0) == member(w) for w in words)
    assert seen["disagree"] > 0 and seen["checked"] > 0


# ------------------------------------------------------------------ trace property: no ties


def _zeroed(text: str) -> list[str]:
    """The network file's text with one weight or bias of a head's query or key map set to 0."""
    doc = json.loads(text)
    found: list[tuple[dict[str, str], str]] = []

    def walk(x: object) -> None:
        if isinstance(x, dict):
            if x.get("type") == "Head":
                for a in (x["query"], x["key"]):
                    found.extend((row, k) for row in a["weights"].values() for k in row)
                    found.extend((a["bias"], k) for k in a["bias"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc["network"])
    out = []
    for row, k in found:
        old, row[k] = row[k], "0"
        out.append(json.dumps(doc))
        row[k] = old
    return out


def _netproof_network(text: str):  # type: ignore[no-untyped-def]
    """netproof's own reading of a (mutated) network file, its fingerprint made right."""
    from netproof.symbolic.netfile import NetworkFileError
    from netproof.symbolic.netfile import loads as netproof_loads

    doc = json.loads(text)
    del doc["fingerprint"]
    with pytest.raises(NetworkFileError, match="fingerprint") as err:
        netproof_loads(json.dumps(doc))
    doc["fingerprint"] = str(err.value).split('"fingerprint": "')[1].split('"')[0]
    return netproof_loads(json.dumps(doc))


def test_the_committed_no_ties_records_are_checked_and_a_false_verdict_disagrees(
    tmp_path: Path,
) -> None:
    net = _write(tmp_path, _text("brasp-no-aa"))
    record = REPO / "proofs" / "brasp-no-aa" / "no-ties.n8.json"
    got = check_record(record, net)
    assert got.outcome == "checked" and got.detail == ("proved: none of the 510 words has a tie")
    rec = json.loads(record.read_text(encoding="utf-8"))
    rec.update(verdict="refuted", counterexample="ab")
    (tmp_path / "r.json").write_text(json.dumps(rec), encoding="utf-8")
    got = check_record(tmp_path / "r.json", net)
    assert got.outcome == "disagree" and "none of the 510 words has a tie" in got.detail


def test_every_network_mutant_with_a_tie_disagrees_on_no_ties_naming_the_first_word_netproof_finds_tied(
    tmp_path: Path,
) -> None:
    """Mutants of brasp-contains-ab's network, each with one weight or bias of a head's query or
    key map set to 0 (+1 changes keep the wide score gaps of a compiled program and never tie),
    the no-ties record cut to lengths 1..4: the kernel disagrees exactly on the mutants where
    netproof's own trace check (its exact interpreter, its no-ties predicate) finds a tie, naming
    the first such word."""
    from netproof.constructions.rasp.claims import _no_ties
    from netproof.symbolic.exact import run as exact_run

    name, hi = "brasp-contains-ab", 4
    rec = json.loads((REPO / "proofs" / name / "no-ties.n8.json").read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 1, "max_len": hi}, checked=sum(2**n for n in range(1, hi + 1)))
    record = tmp_path / "record.json"
    record.write_text(json.dumps(rec), encoding="utf-8")
    words = [w for n in range(1, hi + 1) for w in itertools.product(("a", "b"), repeat=n)]
    seen = {"disagree": 0, "checked": 0, "refused": 0}
    for mutant in _zeroed(_text(name)):
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        if got.outcome == "refused":  # a mutant with a layer the fast path does not cover
            continue
        ref = _netproof_network(mutant)
        tied = next((w for w in words if _no_ties(w, exact_run(ref, w)) is not None), None)
        if got.outcome == "disagree":
            assert tied is not None and f"but on {''.join(tied)!r} head" in (got.detail), got.detail
        else:
            assert tied is None, (got.detail, tied)
    assert seen["disagree"] > 0 and seen["checked"] > 0


# ------------------------------------------------------------------ trace property: operations


def test_every_network_mutant_breaking_an_attention_dim_disagrees_on_operations_as_netproofs_check_does(
    tmp_path: Path,
) -> None:
    """+1 mutants (every second) of brasp-contains-ab's network, the operations record cut to
    lengths 1..4: the kernel disagrees exactly on the mutants where netproof's own operations
    check (its exact interpreter and program interpreter) fails on a word, naming such a word."""
    from netproof.constructions.rasp.claims import _brasp_operations
    from netproof.constructions.rasp.library import BRASP_PROGRAMS
    from netproof.symbolic.exact import run as exact_run

    name, hi = "brasp-contains-ab", 4
    folder = tmp_path / name
    folder.mkdir()
    (folder / "program.rasp").write_text(
        (REPO / "proofs" / name / "program.rasp").read_text(encoding="utf-8"), encoding="utf-8"
    )
    rec = json.loads((REPO / "proofs" / name / "operations.n8.json").read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 1, "max_len": hi}, checked=sum(2**n for n in range(1, hi + 1)))
    record = folder / "record.json"
    record.write_text(json.dumps(rec), encoding="utf-8")
    holds = _brasp_operations(BRASP_PROGRAMS["contains_ab"])
    words = [w for n in range(1, hi + 1) for w in itertools.product(("a", "b"), repeat=n)]
    assert check_record(record, _write(tmp_path, _text(name))).outcome == "checked"
    seen = {"disagree": 0, "checked": 0, "refused": 0}
    for mutant in _mutants(_text(name))[::2]:
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        ref = _netproof_network(mutant)
        broken = [w for w in words if holds(w, exact_run(ref, w)) is not None]
        if got.outcome == "disagree":
            m = re.search(r"but on '(\w+)' dim", got.detail)
            assert m is not None and tuple(m.group(1)) in broken, got.detail
        else:
            assert got.outcome == "checked" and broken == [], got.detail
    assert seen["disagree"] > 0 and seen["checked"] > 0


def test_a_program_file_without_every_attention_dim_is_refused_for_operations(
    tmp_path: Path,
) -> None:
    name = "brasp-contains-ab"
    folder = tmp_path / name
    folder.mkdir()
    doc = json.loads((REPO / "proofs" / name / "program.rasp").read_text(encoding="utf-8"))
    doc["dims"] = doc["dims"][:1]  # one attention operation's dim left out: it would go unchecked
    (folder / "program.rasp").write_text(json.dumps(doc), encoding="utf-8")
    rec = (REPO / "proofs" / name / "operations.n8.json").read_text(encoding="utf-8")
    (folder / "record.json").write_text(rec, encoding="utf-8")
    got = check_record(folder / "record.json", _write(tmp_path, _text(name)))
    assert got.outcome == "refused" and "does not name every attend dim" in got.detail


def test_every_network_mutant_breaking_a_count_dim_disagrees_on_crasp_operations_as_netproofs_check_does(
    tmp_path: Path,
) -> None:
    """Every +1 mutant of crasp-majority's network (layer norms: the plain
    interpreter's path), the operations record cut to lengths 1..3: the kernel disagrees exactly
    on the mutants where netproof's own operations check fails on a word, naming such a word."""
    from netproof.constructions.rasp.claims import _crasp_operations
    from netproof.constructions.rasp.library import CRASP_PROGRAMS
    from netproof.symbolic.exact import run as exact_run

    name, hi = "crasp-majority", 3
    folder = tmp_path / name
    folder.mkdir()
    (folder / "program.rasp").write_text(
        (REPO / "proofs" / name / "program.rasp").read_text(encoding="utf-8"), encoding="utf-8"
    )
    rec = json.loads((REPO / "proofs" / name / "operations.n8.json").read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 1, "max_len": hi}, checked=sum(2**n for n in range(1, hi + 1)))
    record = folder / "record.json"
    record.write_text(json.dumps(rec), encoding="utf-8")
    holds = _crasp_operations(CRASP_PROGRAMS["majority"])
    words = [w for n in range(1, hi + 1) for w in itertools.product(("a", "b"), repeat=n)]
    assert check_record(record, _write(tmp_path, _text(name))).outcome == "checked"
    seen = {"disagree": 0, "checked": 0, "refused": 0}
    for mutant in _mutants(_text(name)):
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        if got.outcome == "refused":  # a layer norm whose variance is no longer a square, or 0
            assert "is not rational" in got.detail or "eps = 0 is undefined" in got.detail
            continue
        ref = _netproof_network(mutant)
        broken = [w for w in words if holds(w, exact_run(ref, w)) is not None]
        if got.outcome == "disagree":
            m = re.search(r"but on '(\w+)' dim", got.detail)
            assert m is not None and tuple(m.group(1)) in broken, got.detail
        else:
            assert got.outcome == "checked" and broken == [], got.detail
    assert seen["disagree"] > 0 and seen["checked"] > 0


# ------------------------------------------------------------------ trace property: Dyck's heights


def test_every_network_mutant_breaking_the_pair_heights_disagrees_as_netproofs_check_does(
    tmp_path: Path,
) -> None:
    """+1 mutants (every 30th) of Dyck(1, 3)'s network, the Y4 record cut to lengths 0..6 (9
    valid words): the kernel disagrees exactly on the mutants where netproof's own Y4 check (its
    exact interpreter, its pair heights) fails on a valid word, naming the first such word, and
    checks the refutation that names it."""
    from netproof.constructions.yao2021.claims import _invariant_holds
    from netproof.symbolic.exact import run as exact_run

    params = {"k": "1", "depth": "3"}
    rec = json.loads((REPO / "proofs" / "dyck" / "Y4.n15.156f5a2d.json").read_text("utf-8"))
    rec.update(bound={"min_len": 0, "max_len": 6}, checked=9)
    record = tmp_path / "record.json"
    record.write_text(json.dumps(rec), encoding="utf-8")
    holds = _invariant_holds(1, 3)
    member = _member(3)
    words = [w for n in range(7) for w in itertools.product("()", repeat=n) if member(w)]
    assert len(words) == 9
    assert check_record(record, _write(tmp_path, _text("dyck", **params))).outcome == "checked"
    seen = {"disagree": 0, "checked": 0}
    for mutant in _mutants(_text("dyck", **params))[::30]:
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        ref = _netproof_network(mutant)
        broken = [w for w in words if holds(w, exact_run(ref, w)) is not None]  # type: ignore[operator]
        if got.outcome == "disagree":
            m = re.search(r"but on '([()]*)' after", got.detail)
            assert m is not None and tuple(m.group(1)) == broken[0], got.detail
            refuted = tmp_path / "refuted.json"  # the record netproof writes for the mutant
            shown = "".join(broken[0])
            refuted.write_text(json.dumps({**rec, "verdict": "refuted", "counterexample": shown}))
            got = check_record(refuted, _write(tmp_path, mutant))
            assert got.outcome == "checked" and got.detail.startswith(f"refuted: on {shown!r}")
        else:
            assert got.outcome == "checked" and broken == [], got.detail
    assert seen["disagree"] > 0 and seen["checked"] > 0


# ------------------------------------------------------------------ trace property: Dyck's tie rules


def _final_tie(text: str, tie: str) -> str:
    """The network file with every head of its layer ``final`` given the tie rule ``tie``."""
    doc = json.loads(text)
    for sub in doc["network"]["layers"]:
        if sub["block"]["type"] == "AttentionLayer" and sub["block"]["name"] == "final":
            for h in sub["block"]["heads"]:
                h["normalizer"]["tie"] = tie
    return json.dumps(doc)


@pytest.mark.parametrize("variant", ["fixed", "paper"])
def test_the_logits_under_each_final_tie_rule_are_the_plain_interpreters_on_the_edited_network(
    variant: str,
) -> None:
    text = _text("dyck", k="2", depth="2", variant=variant)
    net = loads(text)
    edited = {t: loads(_final_tie(text, t)) for t in ("average", "leftmost", "rightmost")}
    for n in range(3):
        ev = Exhaustive(net, n)
        for w in itertools.product(net.alphabet, repeat=n):
            got = ev.logits_by_tie(w)
            assert got == {t: run(edited[t], w) for t in edited}, w
            assert ev.logit(w) == run(net, w)


def test_every_network_mutant_whose_accept_bit_depends_on_the_final_tie_rule_disagrees(
    tmp_path: Path,
) -> None:
    """Mutants of Dyck(1, 3)'s network, each with one weight or bias of a head's query or key
    map set to 0 (+1 changes never make the accept bit depend on the tie rule), the Y5 record
    cut to lengths 0..5: the kernel disagrees exactly on the mutants whose three tie-rule
    versions (the network file edited, each run by itself) accept some word differently,
    naming such a word, which the plain interpreter confirms."""
    params = {"k": "1", "depth": "3"}
    rec = json.loads((REPO / "proofs" / "dyck" / "Y5.n15.156f5a2d.json").read_text("utf-8"))
    rec.update(bound={"min_len": 0, "max_len": 5}, checked=63)
    record = tmp_path / "record.json"
    record.write_text(json.dumps(rec), encoding="utf-8")
    assert check_record(record, _write(tmp_path, _text("dyck", **params))).outcome == "checked"
    ties = ("average", "leftmost", "rightmost")
    seen = {"disagree": 0, "checked": 0}
    for mutant in _zeroed(_text("dyck", **params)):
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        edited = [loads(_final_tie(mutant, t)) for t in ties]
        if got.outcome == "disagree":
            m = re.search(r"but on '([()]*)' the accept bits differ", got.detail)
            assert m is not None, got.detail
            word = tuple(m.group(1))
            assert len({run(e, word) > 0 for e in edited}) == 2
        else:
            assert got.outcome == "checked", got.detail
            for n in range(6):
                evs = [Exhaustive(e, n) for e in edited]
                for w in itertools.product("()", repeat=n):
                    assert len({ev.logit(w) > 0 for ev in evs}) == 1
    assert seen["disagree"] > 0 and seen["checked"] > 0


# ------------------------------------------------------------------ value claims: PARITY's C3


@pytest.mark.parametrize(
    ("record", "after", "dim"),
    [("C3-count.n10.json", "count", "k/n"), ("C3-fig1.n10.json", "fig1", "I[i=k]/n")],
)
def test_every_network_mutant_changing_a_stated_value_disagrees_as_netproofs_trace_shows(
    tmp_path: Path, record: str, after: str, dim: str
) -> None:
    """Every +1 mutant of PARITY's network, the record cut to lengths 0..3: the kernel
    disagrees exactly on the mutants where netproof's exact trace has another value of ``dim``
    after ``after`` than the statement's (k the number of 1s, n the tokens, i the position), on
    a word it names."""
    from netproof.symbolic.exact import run as exact_run

    rec = json.loads((REPO / "proofs" / "parity" / record).read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 0, "max_len": 3}, checked=15)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    words = [w for n in range(4) for w in itertools.product("01", repeat=n)]
    base = loads(_text("parity")).index_base

    def wrong(ref: object, w: tuple[str, ...]) -> bool:
        trace = exact_run(ref, w)  # type: ignore[arg-type]
        k, n = w.count("1"), trace.n
        want = [
            Fraction(k, n) if dim == "k/n" else Fraction(int(base + t == k), n) for t in range(n)
        ]
        return [trace.value(after, t, dim) for t in range(n)] != want

    assert check_record(path, _write(tmp_path, _text("parity"))).outcome == "checked"
    seen = {"disagree": 0, "checked": 0}
    for mutant in _mutants(_text("parity")):
        got = check_record(path, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        ref = _netproof_network(mutant)
        if got.outcome == "disagree":
            m = re.search(r"but on '([01]*)' after", got.detail)
            assert m is not None and wrong(ref, tuple(m.group(1))), got.detail
        else:
            assert got.outcome == "checked" and not any(wrong(ref, w) for w in words), got.detail
    assert seen["disagree"] > 0 and seen["checked"] > 0
