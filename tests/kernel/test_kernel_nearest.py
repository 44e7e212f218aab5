"""The kernel's rule for Dyck(k, D) for every length: matching rounds (kernel/rounds.py) over the
classes of a nearest-selection network (kernel/nearest.py), with the type symmetry for k > 3.
Proofs checked from the network file, mutants refused (the word they misclassify replayed on the
kernel's interpreter), a network outside the premises refused, and the rule's verdicts faithful
to the exhaustive check."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import Refused, check_record
from netproof.kernel.interpret import Exhaustive
from netproof.kernel.interpret import run as kernel_run
from netproof.kernel.languages import dyck
from netproof.kernel.netfile import loads
from netproof.kernel.rounds import prove_by_rounds, round_
from netproof.symbolic.netfile import dumps

REPO = Path(__file__).resolve().parents[2]
DYCK22 = "the (D+1)-layer network accepts γuω iff u ∈ Dyck(2,2)"


def _text(**params: str) -> str:
    c = REGISTRY["dyck"]
    return dumps(c.network(c.parse_params(params)))


@pytest.fixture(scope="module")
def dyck22() -> str:
    return _text(k="2", depth="2")


def _edit(text: str, where: list[object], value: str) -> str:
    """The network file's text with the number at path ``where`` (inside ``network``) set."""
    doc = json.loads(text)
    node = doc["network"]
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    return json.dumps(doc)


LEFT_M = ["layers", 2, "block", "heads", 0, "key", "weights", "q", "m"]
"""The left head's weight of m in its score p − m, at the second matching layer."""
NOT_RO = ["layers", 1, "block", "steps", 0, "weights", "L1.1:NOT", "r:o"]
"""The first logic FFN's weight of r:o in its gate NOT(r:o) (−1)."""


def test_a_score_gap_smaller_than_the_positions_weight_is_refused_not_passed(dyck22: str) -> None:
    with pytest.raises(Refused, match=r"closer than the position's weight 1"):
        prove_by_rounds(loads(_edit(dyck22, LEFT_M, "-1/2")), DYCK22)


def test_an_accept_bit_that_depends_on_the_final_layers_average_is_refused_not_passed(
    dyck22: str,
) -> None:
    final_m = ["layers", 4, "block", "heads", 0, "key", "weights", "q", "m"]
    with pytest.raises(Refused, match=r"the accept bit depends on the final layer's average"):
        prove_by_rounds(loads(_edit(dyck22, final_m, "0")), DYCK22)


def _mutants(text: str) -> list[tuple[list[object], str]]:
    """(path, value): every weight and bias of the matching layers' heads and of the accept FFN,
    and of the first affine map of the first logic FFN, +1."""
    doc = json.loads(text)["network"]
    out: list[tuple[list[object], str]] = []

    def affine(where: list[object], a: dict[str, Any]) -> None:
        for o, row in a["weights"].items():
            out.extend(([*where, "weights", o, i], str(Fraction(w) + 1)) for i, w in row.items())
        out.extend(([*where, "bias", o], str(Fraction(b) + 1)) for o, b in a["bias"].items())

    for li, sub in enumerate(doc["layers"]):
        block = sub["block"]
        for hi, h in enumerate(block.get("heads", ())):
            for part in ("key", "value"):
                affine(["layers", li, "block", "heads", hi, part], h[part])
        if block["name"] in ("logic1", "accept"):
            affine(["layers", li, "block", "steps", 0], block["steps"][0])
    return out


# ------------------------------------------------------------------ matching rounds (kernel/rounds.py)


def _rounds_accept(word: tuple[str, ...], k: int, rounds: int) -> bool:
    """R (kernel/rounds.py) run ``rounds`` times on γ word ω: every token matched, no error."""
    pairs = [("(", ")"), ("[", "]"), ("{", "}")][:k]
    kinds = {s: (t, 1 - 2 * j) for t, p in enumerate(pairs) for j, s in enumerate(p)}
    toks = [("γ", 1, 0), *((s, 0, 0) for s in word), ("ω", 1, 0)]
    for _ in range(rounds):
        near = []
        for i in range(len(toks)):
            left = [t for t in toks[:i] if not t[1]] or toks[:i]
            right = [t for t in toks[i + 1 :] if not t[1]] or toks[i + 1 :]
            near.append((left[-1] if left else None, right[0] if right else None))
        toks = [round_(t, lf, rt, kinds) for t, (lf, rt) in zip(toks, near, strict=True)]
    return all(t[1:] == (1, 0) for t in toks)


@pytest.mark.parametrize(
    ("k", "max_len"), [(1, 10), (2, 6), pytest.param(2, 8, marks=pytest.mark.slow)]
)
def test_the_height_lemma_holds_on_every_short_word_rounds_accept_exactly_dyck_k_n(
    k: int, max_len: int
) -> None:
    for n in range(max_len + 1):
        for w in itertools.product("()[]"[: 2 * k], repeat=n):
            for rounds in range(1, 5):
                assert _rounds_accept(w, k, rounds) == dyck(k, rounds)(w), (w, rounds)


def test_dycks_proof_for_every_length_at_k2_d2_is_checked_by_two_matching_rounds(
    tmp_path: Path, dyck22: str
) -> None:
    net = tmp_path / "dyck.net.json"
    net.write_text(dyck22, encoding="utf-8")
    got = check_record(REPO / "proofs" / "dyck" / "Y2.n8.smt.json", net)
    assert got.outcome == "checked", got.detail
    assert got.detail.startswith("proved for every length by 2 matching rounds"), got.detail


@pytest.mark.parametrize(("k", "depth", "max_len"), [(2, 2, 5), (3, 3, 3), (1, 4, 8)])
def test_what_the_rounds_rule_proves_is_right_on_every_short_word(
    k: int, depth: int, max_len: int
) -> None:
    net = loads(_text(k=str(k), depth=str(depth)))
    statement = DYCK22.replace("(2,2)", f"({k},{depth})")
    assert prove_by_rounds(net, statement).startswith(f"proved for every length by {depth} ")
    for n in range(max_len + 1):
        ev = Exhaustive(net, n)
        for w in itertools.product(net.alphabet, repeat=n):
            assert (ev.logit(w) > 0) == dyck(k, depth)(w), w


@pytest.mark.parametrize(("edit", "value", "word"), [(LEFT_M, "0", "(())"), (NOT_RO, "0", "(()")])
def test_a_mutant_that_misclassifies_a_word_is_refused_by_the_rounds_rule(
    dyck22: str, edit: list[object], value: str, word: str
) -> None:
    net = loads(_edit(dyck22, edit, value))
    assert (kernel_run(net, tuple(word)) > 0) != dyck(2, 2)(tuple(word))
    with pytest.raises(Refused, match=r"layer \d|scores not 'unmatched first'"):
        prove_by_rounds(net, DYCK22)


def test_rounds_fewer_or_more_than_the_depth_and_the_printed_network_are_refused() -> None:
    with pytest.raises(Refused, match=r"3 nearest layers for Dyck\(2,2\): rounds != D"):
        prove_by_rounds(loads(_text(k="2", depth="3")), DYCK22)
    with pytest.raises(Refused, match=r"scores not 'unmatched first'"):  # γ, ω start unmatched
        prove_by_rounds(loads(_text(k="2", depth="2", variant="paper")), DYCK22)


@pytest.mark.slow
def test_every_mutant_the_rounds_rule_proves_is_right_up_to_length_6(dyck22: str) -> None:
    member, counts = dyck(2, 2), {"proved": 0, "refused, wrong": 0, "refused, right": 0}
    for where, value in _mutants(dyck22):
        net = loads(_edit(dyck22, where, value))
        wrong = any(
            (ev.logit(w) > 0) != member(w)
            for n in range(7)
            for ev in [Exhaustive(net, n)]
            for w in itertools.product(net.alphabet, repeat=n)
        )
        try:
            prove_by_rounds(net, DYCK22)
            counts["proved"] += 1
            assert not wrong, (where, value)
        except Refused:
            counts["refused, wrong" if wrong else "refused, right"] += 1
    print(f"{len(_mutants(dyck22))} mutants of Dyck(2,2), rounds rule: {counts}")
    assert counts["refused, wrong"] > 0 and counts["proved"] > 0


DYCK810 = DYCK22.replace("(2,2)", "(8,10)")


@pytest.mark.slow
def test_the_papers_size_k8_d10_is_checked_for_every_length_by_ten_rounds(tmp_path: Path) -> None:
    text = _text(k="8", depth="10")
    net = tmp_path / "dyck.net.json"
    net.write_text(text, encoding="utf-8")
    got = check_record(REPO / "proofs" / "dyck" / "Y2.n4.7e4147e4.json", net)
    assert got.outcome == "checked", got.detail
    assert got.detail.startswith("proved for every length by 10 matching rounds"), got.detail
    match5 = ["layers", 8, "block", "heads", 0, "key", "weights", "q", "m"]  # left head, score p
    mutant = loads(_edit(text, match5, "0"))
    word = ("(1",) * 5 + (")1",) * 5  # depth 5: in Dyck(8,10), rejected by the mutant
    assert kernel_run(mutant, word) <= 0 and dyck(8, 10)(word)
    with pytest.raises(Refused, match=r"scores not 'unmatched first'"):
        prove_by_rounds(mutant, DYCK810)


# ------------------------------------------------------------------ the type symmetry (kernel/rounds.py)

DYCK52 = DYCK22.replace("(2,2)", "(5,2)")
R_T2 = [
    ["layers", 1, "block", "steps", 0, "weights", o, "r:t2"]
    for o in ("L1.14:NOT", "L1:+r:t2", "L1:−r:t2")
]
"""logic1's weights of r:t2, the third bit of the right neighbour's code: set to 0, the FFN
compares only the first two bits on the right, which types 1..3 (codes 001, 010, 011) never
need and types 4, 5 (100, 101) do."""


def _edits(text: str, edits: list[list[object]], value: str) -> str:
    for where in edits:
        text = _edit(text, where, value)
    return text


def test_the_type_symmetry_reduces_dyck_5_2_to_three_types_and_the_network_is_right_on_every_short_word() -> (
    None
):
    net = loads(_text(k="5", depth="2"))
    got = prove_by_rounds(net, DYCK52)
    assert "on 3 of the 5 types, the rest by the type symmetry (2 z3 queries)" in got, got
    member = dyck(5, 2)
    for n in range(5):
        ev = Exhaustive(net, n)
        for w in itertools.product(net.alphabet, repeat=n):
            assert (ev.logit(w) > 0) == member(w), w


def test_a_mutant_wrong_only_on_the_fourth_type_is_refused_by_the_type_symmetrys_invariance_query() -> (
    None
):
    text = _text(k="5", depth="2")
    assert [
        json.loads(text)["network"]["layers"][1]["block"]["steps"][0]["weights"][w[6]]["r:t2"]
        for w in R_T2
    ]
    mutant = loads(_edits(text, R_T2, "0"))
    word = ("(4", ")4")  # in Dyck(5, 2); the mutant's open bracket sees another type on its right
    assert kernel_run(mutant, word) <= 0 and dyck(5, 2)(word)
    assert all(kernel_run(mutant, w) > 0 for w in [("(1", ")1"), ("(2", ")2"), ("(3", ")3")])
    with pytest.raises(Refused, match=r"not invariant under permuting the types \(sat\)"):
        prove_by_rounds(mutant, DYCK52)


def test_a_score_that_reads_a_code_dim_is_refused_at_once_at_k128_naming_the_budget_and_the_symmetry() -> (
    None
):
    doc = json.loads(_text(k="128", depth="1"))
    key = doc["network"]["layers"][0]["block"]["heads"][0]["key"]  # match1's left head
    key["inputs"].append("t0")
    key["weights"]["q"]["t0"] = "1"
    with pytest.raises(
        Refused, match=r"over the budget of 1,000,000 \(type symmetry refused: a score"
    ):
        prove_by_rounds(loads(json.dumps(doc)), DYCK22.replace("(2,2)", "(128,1)"))


@pytest.mark.slow
@pytest.mark.parametrize("record", ["Y2.n2.eae0e307.json", "Y2.n2.a3360227.json"])
def test_yao_et_als_k128_records_are_checked_for_every_length_by_the_type_symmetry(
    tmp_path: Path, record: str
) -> None:
    rec = json.loads((REPO / "proofs" / "dyck" / record).read_text(encoding="utf-8"))
    depth = rec["claim"]["statement"].split(",")[-1].rstrip(")")
    net = tmp_path / "dyck.net.json"
    net.write_text(_text(k="128", depth=depth), encoding="utf-8")
    got = check_record(REPO / "proofs" / "dyck" / record, net)
    assert got.outcome == "checked", got.detail
    assert f"by {depth} matching rounds" in got.detail and "on 3 of the 128 types" in got.detail


@pytest.mark.slow
def test_every_code_reading_mutant_the_type_symmetry_proves_is_right_up_to_length_3() -> None:
    """Every weight from a code dim (t*, l:t*, r:t*) in logic1's first affine map and in the
    heads' value maps of Dyck(5, 1) set to 0, one at a time (+1 changes no word: the gates are
    robust): each mutant the rule proves (by the type symmetry, or at k = 5 directly over all
    types where a premise fails) is right on every word up to length 3 by the fast interpreter,
    and each one wrong on one of them is refused."""
    text, member = _text(k="5", depth="1"), dyck(5, 1)
    codes = ("t0", "t1", "t2", "l:t0", "l:t1", "l:t2", "r:t0", "r:t1", "r:t2")
    mutants = [w for w, _ in _mutants(text) if w[-1] in codes and "weights" in w]
    counts = {"by symmetry": 0, "directly": 0, "refused, wrong": 0, "refused, right": 0}
    for where in mutants:
        net = loads(_edit(text, where, "0"))
        wrong = any(
            (ev.logit(w) > 0) != member(w)
            for n in range(4)
            for ev in [Exhaustive(net, n)]
            for w in itertools.product(net.alphabet, repeat=n)
        )
        try:
            got = prove_by_rounds(net, DYCK22.replace("(2,2)", "(5,1)"))
            counts["by symmetry" if "on 3 of the 5 types" in got else "directly"] += 1
            assert not wrong, (where, got)
        except Refused:
            counts["refused, wrong" if wrong else "refused, right"] += 1
    print(f"{len(mutants)} code-reading mutants (a weight set to 0) of Dyck(5,1): {counts}")
    assert counts["refused, wrong"] > 0
