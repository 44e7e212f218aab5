"""The independent kernel (netproof.kernel): faithful to netproof's exact interpreter, strict with
tampered records and malformed files, named refusals, and seeded bugs in netproof's own code that
produce a wrong record ``recheck`` accepts but the kernel rejects."""

from __future__ import annotations

import ast
import io
import itertools
import json
import re
import tokenize
from fractions import Fraction
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import KernelError, Refused, check_record
from netproof.kernel.interpret import run as kernel_run
from netproof.kernel.netfile import loads as kernel_loads
from netproof.symbolic.exact import run as exact_run
from netproof.symbolic.netfile import dumps

REPO = Path(__file__).resolve().parents[2]


def _netfile(tmp_path: Path, name: str, **params: str) -> Path:
    c = REGISTRY[name]
    path = tmp_path / f"{name}.net.json"
    path.write_text(dumps(c.network(c.parse_params(params))), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "max_len"), [("parity", 5), ("first", 5), ("crasp-dyck1", 5), ("dyck", 2)]
)
def test_the_kernels_interpreter_gives_the_exact_interpreters_logit_on_every_short_word(
    tmp_path: Path, name: str, max_len: int
) -> None:
    text = _netfile(tmp_path, name).read_text(encoding="utf-8")
    net = kernel_loads(text)
    c = REGISTRY[name]
    ref = c.network(c.parse_params({}))
    words = [w for n in range(max_len + 1) for w in itertools.product(net.alphabet, repeat=n)]
    assert all(kernel_run(net, w) == exact_run(ref, w).output for w in words)


SMALL = {
    "bound": {"min_len": 0, "max_len": 5},
    "checked": 63,
    "detail": "every word with 0 <= |w| <= 5",
}
"""A committed exhaustive record cut to the words up to length 5 (63 words): what netproof writes
for --max-n 5, and quick for the kernel."""


def _record(tmp_path: Path, source: str, edit: dict[str, object] | None = None) -> Path:
    rec = json.loads((REPO / "proofs" / source).read_text(encoding="utf-8"))
    rec.update(SMALL)
    rec.update(edit or {})
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec, indent=2, sort_keys=True), encoding="utf-8")
    return path


def test_a_small_exhaustive_record_is_checked(tmp_path: Path) -> None:
    got = check_record(_record(tmp_path, "first/recognizes.n10.json"), _netfile(tmp_path, "first"))
    assert got.outcome == "checked" and got.detail.startswith("proved: all 63 words")


@pytest.mark.slow
def test_the_committed_exhaustive_first_record_is_checked(tmp_path: Path) -> None:
    got = check_record(
        REPO / "proofs" / "first" / "recognizes.n10.json", _netfile(tmp_path, "first")
    )
    assert (got.outcome, got.kind) == ("checked", "Recognizes")
    assert got.detail.startswith("proved: all 2047 words")


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            {"verdict": "refuted", "counterexample": "1", "values": {}},
            "every one of the 63 words is right",
        ),
        ({"checked": 62}, "checked=62, but the bound holds 63 words"),
        ({"bound": {"min_len": 0, "max_len": 6}}, "checked=63, but the bound holds 127 words"),
        (
            {"network": {"fingerprint": "0" * 64, "name": "first"}},
            "the record's network 0000000000000000",
        ),
        (
            {
                "claim": {
                    "id": "C4",
                    "kind": "Recognizes",
                    "reference": "",
                    "statement": (
                        "accepts exactly the words of PARITY (words over {0,1} with an odd number of 1s)"
                    ),
                }
            },
            "the network rejects '01', which is in the language",
        ),
    ],
)
def test_a_tampered_record_disagrees_with_the_kernel(
    tmp_path: Path, edit: dict[str, object], why: str
) -> None:
    got = check_record(
        _record(tmp_path, "first/recognizes.n10.json", edit), _netfile(tmp_path, "first")
    )
    assert got.outcome == "disagree" and why in got.detail, got.detail


def test_a_record_about_another_network_disagrees_on_the_fingerprint(tmp_path: Path) -> None:
    got = check_record(
        REPO / "proofs" / "first" / "recognizes.n10.json", _netfile(tmp_path, "parity")
    )
    assert got.outcome == "disagree" and "the network file is" in got.detail


def test_a_refutation_must_name_the_first_misclassified_word(tmp_path: Path) -> None:
    net = _netfile(tmp_path, "parity")
    rec = {
        "verdict": "refuted",
        "counterexample": "0",
        "values": {},
        "bound": {"min_len": 0, "max_len": 3},
        "claim": {
            "id": "C4",
            "kind": "Recognizes",
            "reference": "",
            "statement": "accepts exactly the words of FIRST (words over {0,1} whose first symbol is 1)",
        },
    }
    got = check_record(_record(tmp_path, "parity/C4.n10.json", rec), net)  # parity's network, FIRST
    assert (
        got.outcome == "disagree"
        and "the first word the network misclassifies is '01'" in got.detail
    )
    right = check_record(
        _record(tmp_path, "parity/C4.n10.json", {**rec, "counterexample": "01"}), net
    )
    assert right.outcome == "checked" and right.detail.startswith("refuted: '01'")


@pytest.mark.parametrize(
    ("record", "network", "why"),
    [
        ("parity/C5.n8.json", "parity", "claim kind ValueIs by exhaustive (symbolic)"),
        ("first-ln/C7.n10.json", "first-ln", "√"),
        ("parity-ln/C7.n10.json", "parity-ln", "√"),
    ],
)
def test_what_the_kernel_does_not_check_is_refused_and_named(
    tmp_path: Path, record: str, network: str, why: str
) -> None:
    c = REGISTRY[network]
    params = json.loads((REPO / "proofs" / record).read_text(encoding="utf-8"))["params"]
    path = tmp_path / "net.json"
    path.write_text(dumps(c.network(c.parse_params(params))), encoding="utf-8")
    got = check_record(REPO / "proofs" / record, path)
    assert (
        got.outcome == "refused"
        and got.detail.startswith("outside the kernel")
        and why in got.detail
    ), got.detail


def test_a_float_or_a_repeated_key_in_a_network_file_is_malformed(tmp_path: Path) -> None:
    text = _netfile(tmp_path, "first").read_text(encoding="utf-8")
    with pytest.raises(KernelError, match=r"0\.5 is not a rational written as a string"):
        kernel_loads(
            text.replace('"index_base": 0', '"index_base": 0, "x": 1', 1).replace(
                '"coef": "1"', '"coef": 0.5', 1
            )
        )
    with pytest.raises(KernelError, match="duplicate key 'format'"):
        kernel_loads(
            text.replace(
                '"format": "netproof-network"', '"format": "netproof-network", "format": "x"'
            )
        )
    with pytest.raises(Refused, match="softmax with base e"):
        kernel_loads(_netfile(tmp_path, "parity", c="1").read_text(encoding="utf-8"))  # base e


def _edited(tmp_path: Path, name: str, layer: int, edit: dict[str, object]) -> str:
    """The network file of ``name`` with ``edit`` written into layer ``layer``'s first head (its
    normalizer for the key ``normalizer``), or into the convolution's normalizer."""
    doc = json.loads(_netfile(tmp_path, name).read_text(encoding="utf-8"))
    block = doc["network"]["layers"][layer]["block"]
    if block["type"] == "Convolution":
        block["normalizer"].update(edit)
    else:
        head = block["heads"][0]
        head.update({k: v for k, v in edit.items() if k != "normalizer"})
        head["normalizer"].update(edit.get("normalizer", {}))  # type: ignore[call-overload]
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("name", "layer", "edit", "error", "why"),
    [
        ("first", 2, {"mask": "sideways"}, KernelError, "unknown mask 'sideways'"),
        ("first", 2, {"normalizer": {"r": "-2"}}, KernelError, "softmax base -2 must be > 0"),
        ("first", 2, {"normalizer": {"r": None}}, Refused, "softmax with base e"),
        ("relpos", 1, {"r": "0"}, KernelError, "softmax base 0 must be > 0"),
        ("relpos", 1, {"r": None}, Refused, "softmax with base e"),
    ],
)
def test_a_heads_mask_and_a_softmax_base_are_read_strictly_for_heads_and_kernels_alike(
    tmp_path: Path, name: str, layer: int, edit: dict[str, object], error: type, why: str
) -> None:
    with pytest.raises(error, match=re.escape(why)):
        kernel_loads(_edited(tmp_path, name, layer, edit))


# ------------------------------------------------------------------ seeded bugs in netproof


def _relu_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """netproof's exact arithmetic drops the ReLU (one constraint of every FFN gone)."""
    import netproof.symbolic.exact as exact

    monkeypatch.setattr(exact.FractionArithmetic, "relu", lambda self, a: a)


def _tie_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """netproof's hardmax takes the leftmost maximum where the head says average."""
    import netproof.symbolic.batched as batched
    import netproof.symbolic.evaluation as ev

    argmax = ev.Evaluator._argmax
    monkeypatch.setattr(ev.Evaluator, "_argmax", lambda self, s: argmax(self, s)[:1])
    monkeypatch.setattr(ev, "GROUPED_MAX", -1)  # every head through the per-position path
    # the exhaustive checker runs compiled C-RASP programs on batched integers since bae8fe8:
    # the bug is seeded in the per-word evaluator, so the check is sent there
    monkeypatch.setattr(batched, "supports", lambda net, **_: "seeded: the per-word path")


def _position_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """netproof's positional feature i/n is (i+1)/n: every position one class off."""
    import netproof.symbolic.positional as positional

    monkeypatch.setitem(
        positional._REGISTRY,
        "i/n",
        positional.FeatureDef("i/n", lambda i, n: Fraction(i + 1, n), ""),
    )


@pytest.mark.parametrize(
    ("seed", "args"),
    [
        (_relu_dropped, ["parity", "--claims", "C4", "--max-n", "4"]),
        (_tie_swapped, ["crasp-dyck1", "--claims", "network=language", "--max-n", "5"]),
        (_position_off_by_one, ["parity", "--claims", "C4", "--max-n", "4"]),
    ],
)
def test_a_seeded_bug_in_netproof_gives_a_wrong_record_recheck_accepts_and_the_kernel_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: object, args: list[str]
) -> None:
    from netproof.verifier.campaign.kernelrun import KernelRun
    from netproof.verifier.cli import main
    from netproof.verifier.smt.recheck import recheck_log

    kernel = KernelRun(REGISTRY, str(tmp_path))  # the network files written before the bug
    net = kernel.network_file(
        {"construction": args[0], "params": REGISTRY[args[0]].parse_params({}) and {}}
    )
    assert isinstance(net, str)
    seed(monkeypatch)  # type: ignore[operator]
    out = tmp_path / "proofs"
    assert (
        main(
            ["prove", *args, "--method", "exhaustive", "--out", str(out), "--jobs", "1", "--quiet"]
        )
        == 1
    )
    (record,) = (out / args[0]).glob("*.json")
    assert json.loads(record.read_text(encoding="utf-8"))["verdict"] == "refuted"  # wrong: it holds
    assert recheck_log(str(record), registry=REGISTRY).outcome == "agree"  # the same bug, again
    got = check_record(record, net)
    assert (
        got.outcome == "disagree"
        and "every one of the" in got.detail
        and "words is right" in got.detail
    )


# ------------------------------------------------------------------ size


def kernel_lines(root: Path = REPO / "kernel") -> int:
    """Lines of the kernel's code: blank lines, comments and docstrings excluded."""
    total = 0
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        skip: set[int] = set()
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                value = body[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    skip.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
        code = {
            tok.start[0]
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type
            not in (
                tokenize.COMMENT,
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENDMARKER,
            )
        }
        total += len(code - skip)
    return total


def test_the_kernel_is_under_its_size_goal_of_2500_lines_of_code() -> None:
    n = kernel_lines()
    print(f"netproof.kernel: {n} lines of code (comments, docstrings and blank lines excluded)")
    assert 0 < n <= 2500


def test_the_size_docs_kernel_md_states_last_is_the_kernels_line_count() -> None:
    section = (REPO / "docs" / "kernel.md").read_text(encoding="utf-8").split("\n## Size\n")[1]
    section = section.split("\n## ")[0]
    stated = re.findall(r"\*\*([0-9,]+) lines\*\*", section)[-1]
    assert int(stated.replace(",", "")) == kernel_lines(), "update docs/kernel.md's Size section"


# ------------------------------------------------------------------ every length: position classes


def test_firsts_proof_for_every_length_is_checked_by_position_classes(tmp_path: Path) -> None:
    got = check_record(
        REPO / "proofs" / "first" / "recognizes.n48.json", _netfile(tmp_path, "first")
    )
    assert got.outcome == "checked" and "every length >= 1 by position classes" in got.detail


def _mutants(text: str) -> list[str]:
    """The network file's text with one weight or bias of an affine map changed by +1, each."""
    doc = json.loads(text)
    found: list[tuple[dict[str, object], str]] = []

    def walk(x: object) -> None:
        if isinstance(x, dict):
            if x.get("type") == "Affine":
                found.extend((row, k) for row in x["weights"].values() for k in row)  # type: ignore[union-attr]
                found.extend((x["bias"], k) for k in x["bias"])  # type: ignore[arg-type]
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


def test_every_mutant_of_first_the_class_rule_proves_has_no_short_counterexample_and_the_rest_have_one(
    tmp_path: Path,
) -> None:
    from netproof.kernel.classes import prove_every_length

    statement = "accepts exactly the words of FIRST (words over {0,1} whose first symbol is 1)"
    verdicts = []
    for text in _mutants(_netfile(tmp_path, "first").read_text(encoding="utf-8")):
        net = kernel_loads(text)
        words = [w for n in range(7) for w in itertools.product(net.alphabet, repeat=n)]
        wrong = [w for w in words if (kernel_run(net, w) > 0) != (w[:1] == ("1",))]
        try:
            prove_every_length(net, statement, 0)
            verdicts.append("proved")
            assert wrong == [], "the class rule proved a mutant the interpreter refutes"
        except KernelError:
            verdicts.append("refuted")
            assert wrong, "the class rule refuted a mutant right on every word up to length 6"
    assert "refuted" in verdicts and len(verdicts) >= 4


def test_a_seeded_bug_in_netproofs_position_classes_proves_a_wrong_network_and_the_kernel_rejects_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """netproof's position-class query asserts only one direction of "accept ≠ member" (a member
    rejected): a FIRST network made to accept every non-empty word is then proved for every
    length, and recheck, rebuilding the query with the same code, agrees. The bounded range
    queries, which run beside the class query in a thread of their own and would find '0' first
    on some runs, cover the empty word only (``--max-n 0``), so the verdict does not depend on
    which thread wins."""
    import netproof.verifier.smt.compositional.classes as classes
    import netproof.verifier.smt.compositional.rebuild as rebuild
    import netproof.verifier.smt.compositional.search as search
    from netproof.verifier.campaign.sources import Session
    from netproof.verifier.cli import main
    from netproof.verifier.smt.recheck import recheck_log

    mutant = _first_mutant(tmp_path)
    query = classes.class_query

    def one_direction(net, claim, results):  # type: ignore[no-untyped-def]
        ctx, _solver, enc = query(net, claim, results)
        z3 = enc.z3
        member = enc.member(claim.language.automaton, claim.language.name)
        bug = z3.Solver(ctx=ctx)  # the query's own assertions, rebuilt in a fixed order
        bug.add(*enc.assertions, *enc.vals.assertions, *enc._target_constraints())
        bug.add(z3.And(member, z3.Not(enc.accept())))  # only "a member rejected"
        return ctx, bug, enc

    for module in (classes, rebuild, search):  # the prover and the rebuild recheck runs
        monkeypatch.setattr(module, "class_query", one_direction)
    out = tmp_path / "proofs"
    args = ["prove", str(mutant), "--claims", "recognizes", "--method", "smt", "--max-n", "0"]
    assert main([*args, "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    (record,) = (p for p in out.rglob("*.json") if p.is_file())
    rec = json.loads(record.read_text(encoding="utf-8"))
    assert rec["verdict"] == "proved" and "every longer one" in rec["detail"]  # wrong: '0'
    c = Session().file_construction(str(mutant))
    assert recheck_log(str(record), registry={**REGISTRY, c.name: c}).outcome == "agree"
    got = check_record(record, mutant)
    assert got.outcome == "disagree" and "a word of length 1 is misclassified" in got.detail


def _first_mutant(tmp_path: Path) -> Path:
    """FIRST's network file with the value weight of its head on I[i=1] halved: it accepts
    every non-empty word (its fingerprint recomputed, so that the file is well formed)."""
    from netproof.symbolic.netfile import NetworkFileError
    from netproof.symbolic.netfile import loads as netproof_loads
    from netproof.verifier.cli import main

    exported = tmp_path / "first.json"
    assert main(["export", "first", "--out", str(exported)]) == 0  # with its claims in extra
    doc = json.loads(exported.read_text(encoding="utf-8"))
    doc["network"]["layers"][2]["block"]["heads"][0]["value"]["weights"]["s"]["I[i=1]"] = "1/2"
    del doc["fingerprint"]
    with pytest.raises(NetworkFileError, match="fingerprint") as err:
        netproof_loads(json.dumps(doc))
    doc["fingerprint"] = str(err.value).split('"fingerprint": "')[1].split('"')[0]
    mutant = tmp_path / "first-mutant.json"
    mutant.write_text(json.dumps(doc, indent=2, sort_keys=True), encoding="utf-8")
    return mutant


@pytest.mark.parametrize(
    ("max_n", "verdict", "why"),
    [
        ("1", "proved", "the record says proved, but the network accepts '0'"),
        (
            "3",
            "refuted",
            "counterexample '01', but the first word the network misclassifies is '0'",
        ),
    ],
)
def test_a_seeded_bug_in_netproofs_word_enumeration_skips_a_word_recheck_agrees_and_the_kernel_rejects_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_n: str, verdict: str, why: str
) -> None:
    """netproof's exhaustive checker enumerates the words of each length from shortlex rank 1
    and checks the last word twice (the count stays right): the FIRST mutant that accepts every
    non-empty word is proved up to length 1 ('0', the misclassified word, never run), or refuted
    up to length 3 on '01' instead of '0'; recheck, re-running the same enumeration, agrees."""
    import netproof.verifier.exhaustive.job as job
    from netproof.verifier.campaign.sources import Session
    from netproof.verifier.cli import main
    from netproof.verifier.smt.recheck import recheck_log

    mutant = _first_mutant(tmp_path)
    words_of_length = job.Shard.words_of_length

    def off_by_one(self, alphabet, m):  # type: ignore[no-untyped-def]
        words = list(words_of_length(self, alphabet, m))
        return iter(words[1:] + words[-1:])

    monkeypatch.setattr(job.Shard, "words_of_length", off_by_one)
    out = tmp_path / "proofs"
    args = ["prove", str(mutant), "--claims", "recognizes", "--method", "exhaustive"]
    main([*args, "--max-n", max_n, "--out", str(out), "--jobs", "1", "--quiet"])
    (record,) = (p for p in out.rglob("*.json") if p.is_file())
    assert json.loads(record.read_text(encoding="utf-8"))["verdict"] == verdict
    c = Session().file_construction(str(mutant))
    assert recheck_log(str(record), registry={**REGISTRY, c.name: c}).outcome == "agree"
    got = check_record(record, mutant)
    assert got.outcome == "disagree" and why in got.detail, got.detail


def test_a_refutation_is_checked_up_to_its_counterexample_even_in_a_bound_over_the_budget(
    tmp_path: Path,
) -> None:
    record = REPO / "proofs" / "dyck" / "Y2-paper.n8.292921db.json"  # 87,381 words, refuted on ()
    params = json.loads(record.read_text(encoding="utf-8"))["params"]
    got = check_record(record, _netfile(tmp_path, "dyck", **params))
    assert got.outcome == "checked" and got.detail.startswith("refuted: '()'")
    assert (
        check_record(record, _netfile(tmp_path, "dyck", **params), max_words=3).outcome == "refused"
    )


def test_netproof_recheck_kernel_prints_one_line_per_record_and_exits_1_on_a_disagreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.verifier.cli import main

    folder = tmp_path / "proofs" / "first"
    folder.mkdir(parents=True)
    rec = json.loads(
        (REPO / "proofs" / "first" / "recognizes.n10.json").read_text(encoding="utf-8")
    )
    rec.update(SMALL)
    (folder / "recognizes.n5.json").write_text(json.dumps(rec), encoding="utf-8")
    assert main(["recheck", "--kernel", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CHECKED   ") and "Recognizes          1 checked" in out
    rec["checked"] = 64
    (folder / "recognizes.n5.json").write_text(json.dumps(rec), encoding="utf-8")
    assert main(["recheck", "--kernel", str(folder)]) == 1
    assert capsys.readouterr().out.startswith("DISAGREE  ")


# ------------------------------------------------------------------ every length: selections


def test_paritys_proof_for_every_length_is_checked_by_position_classes_with_selections(
    tmp_path: Path,
) -> None:
    got = check_record(REPO / "proofs" / "parity" / "C4.n48.json", _netfile(tmp_path, "parity"))
    assert got.outcome == "checked", got.detail
    assert "selections odd.s_odd, even.s_even" in got.detail


@pytest.mark.slow
def test_every_mutant_of_parity_the_class_rule_proves_is_right_up_to_length_10_and_every_refutation_replays(
    tmp_path: Path,
) -> None:
    """Mutation and faithfulness test of the selection rule: each PARITY mutant (one affine
    weight or bias +1) is proved (then the exhaustive check up to length 10 finds no
    misclassified word), refuted (the word named is one the interpreter misclassifies) or
    refused; at least one is refuted and the unmutated network is proved."""
    from netproof.kernel.classes import prove_every_length

    statement = "accepts exactly the words of PARITY (words over {0,1} with an odd number of 1s)"
    text = _netfile(tmp_path, "parity").read_text(encoding="utf-8")
    verdicts = []
    for t in [text, *_mutants(text)]:
        net = kernel_loads(t)
        words = [w for n in range(11) for w in itertools.product(net.alphabet, repeat=n)]
        wrong = [w for w in words if (kernel_run(net, w) > 0) != (w.count("1") % 2 == 1)]
        try:
            prove_every_length(net, statement, 0, timeout_s=20)
            verdicts.append("proved")
            assert wrong == [], "the class rule proved a mutant the interpreter refutes"
        except KernelError as exc:
            verdicts.append("refuted")
            word = tuple(str(exc).split("'")[1])
            assert (kernel_run(net, word) > 0) != (word.count("1") % 2 == 1), str(exc)
        except Refused:
            verdicts.append("refused")
    assert verdicts[0] == "proved" and "refuted" in verdicts, verdicts
    print(verdicts)


def test_a_refusal_kept_per_network_is_counted_under_each_records_own_claim_kind(
    tmp_path: Path,
) -> None:
    from netproof.verifier.campaign.kernelrun import KernelRun

    kernel = KernelRun(REGISTRY, str(tmp_path))
    folder = REPO / "proofs" / "tm-sim"
    got = []
    for name in ("B3.all.json", "B6.n3.json", "C5-trace.n3.json"):  # of a construction now gone
        rec = json.loads((folder / name).read_text(encoding="utf-8"))
        (tmp_path / name).write_text(json.dumps({**rec, "construction": "gone"}), encoding="utf-8")
        got.append(kernel.check(str(tmp_path / name)))
    assert [(r.outcome, r.kind) for r in got] == [
        ("refused", "ForAll"),
        ("refused", "Simulates"),
        ("refused", "TraceProperty"),
    ]
    assert all("no network file (no construction 'gone')" in r.detail for r in got)
