"""The kernel's rules for Dyck(k, D) for every length: nearest selections (kernel/nearest.py) and
matching rounds (kernel/rounds.py). Proofs checked from the network file, mutants rejected (the
nearest rule with a word both exact interpreters misclassify, the rounds rule by refusing), a
network outside the premises refused, and the rules' verdicts faithful to the exhaustive check."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import KernelError, Refused, check_record
from netproof.kernel.interpret import Exhaustive
from netproof.kernel.interpret import run as kernel_run
from netproof.kernel.languages import dyck, dyck_automaton
from netproof.kernel.nearest import prove_by_nearest
from netproof.kernel.netfile import loads
from netproof.kernel.rounds import prove_by_rounds, round_
from netproof.symbolic.exact import run as exact_run
from netproof.symbolic.netfile import dumps
from netproof.symbolic.netfile import loads as netproof_loads
from netproof.symbolic.netfile_format import NetworkFileError

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


def _misclassified(text: str, edit: list[object], value: str) -> tuple[str, ...]:
    """The word the kernel names for the edited network, after checking that the kernel's and
    netproof's exact interpreters both misclassify it."""
    edited = _edit(text, edit, value)
    with pytest.raises(KernelError, match=r"the network (accepts|rejects) '[()\[\]]*'") as exc:
        prove_by_nearest(loads(edited), DYCK22)
    word = tuple(str(exc.value).split("'")[1])
    assert (kernel_run(loads(edited), word) > 0) != dyck(2, 2)(word)
    doc = json.loads(edited)
    with pytest.raises(NetworkFileError, match="the network was edited") as err:
        netproof_loads(edited)
    doc["fingerprint"] = str(err.value).split()[-1]  # the edited network's own, as the error says
    assert exact_run(netproof_loads(json.dumps(doc)), "".join(word)).accepted != dyck(2, 2)(word)
    return word


def test_the_kernels_dyck_automaton_is_its_dyck_language_on_every_word_up_to_length_8() -> None:
    start, step, final = dyck_automaton(DYCK22, ("(", ")", "[", "]"))
    member = dyck(2, 2)
    for n in range(9):
        for w in itertools.product("()[]", repeat=n):
            state = start
            for s in w:
                state = step(state, s)
            assert final(state) == member(w)


def test_dycks_network_at_k2_d2_is_proved_for_every_length_by_nearest_selections(
    dyck22: str,
) -> None:
    got = prove_by_nearest(loads(dyck22), DYCK22)
    assert got.startswith("proved for every length by nearest selections")


def test_the_left_heads_score_without_m_is_rejected_with_a_word_both_interpreters_misclassify(
    dyck22: str,
) -> None:
    assert _misclassified(dyck22, LEFT_M, "0") == tuple("(())")


def test_a_logic_ffn_weight_changed_is_rejected_with_a_word_both_interpreters_misclassify(
    dyck22: str,
) -> None:
    assert _misclassified(dyck22, NOT_RO, "0") == tuple("(()")


def test_a_score_gap_smaller_than_the_positions_weight_is_refused_not_passed(dyck22: str) -> None:
    with pytest.raises(Refused, match=r"closer than the position's weight 1"):
        prove_by_nearest(loads(_edit(dyck22, LEFT_M, "-1/2")), DYCK22)


def test_an_accept_bit_that_depends_on_the_final_layers_average_is_refused_not_passed(
    dyck22: str,
) -> None:
    final_m = ["layers", 4, "block", "heads", 0, "key", "weights", "q", "m"]
    with pytest.raises(Refused, match=r"the accept bit depends on the final layer's average"):
        prove_by_nearest(loads(_edit(dyck22, final_m, "0")), DYCK22)


def test_the_nearest_rule_refuses_eight_bracket_types_naming_why() -> None:
    with pytest.raises(Refused, match=r"Dyck\(8,10\): the nearest-selection rule reads 3 bracket"):
        prove_by_nearest(loads(_text(k="8", depth="10")), DYCK22.replace("(2,2)", "(8,10)"))


@pytest.mark.slow
def test_dycks_network_at_k2_d3_is_proved_for_every_length_by_nearest_selections() -> None:
    got = prove_by_nearest(loads(_text(k="2", depth="3")), DYCK22.replace("(2,2)", "(2,3)"))
    assert got.startswith("proved for every length by nearest selections")


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


@pytest.mark.slow
def test_every_mutant_the_rule_proves_is_right_up_to_length_6_and_every_rejection_replays(
    dyck22: str,
) -> None:
    member, counts = dyck(2, 2), {"proved": 0, "rejected": 0, "refused": 0}
    for where, value in _mutants(dyck22):
        net = loads(_edit(dyck22, where, value))
        first = None
        for n in range(7):
            ev = Exhaustive(net, n)
            first = next(
                (
                    w
                    for w in itertools.product(net.alphabet, repeat=n)
                    if (ev.logit(w) > 0) != member(w)
                ),
                None,
            )
            if first is not None:
                break
        try:
            prove_by_nearest(net, DYCK22)
            counts["proved"] += 1
            assert first is None, (where, value, first)
        except KernelError as exc:
            counts["rejected"] += 1
            word = tuple(str(exc).split("'")[1])
            assert (kernel_run(net, word) > 0) != member(word), (where, value)
            assert first is None or len(word) == len(first), (where, value, word, first)
        except Refused:
            counts["refused"] += 1
    print(f"{len(_mutants(dyck22))} mutants of Dyck(2,2): {counts}")
    assert counts["rejected"] > 0 and counts["proved"] > 0


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
