"""The kernel's rules for Dyck's nearest-unmatched selections (Y3), its budget of words
(``--max-words``), the generator's layer-1 averages (Y6) and facts about θ (Y8, Y11): each accepts the committed record and rejects tampered ones."""

from __future__ import annotations

import itertools
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import check_record
from netproof.kernel.nextsym import _at_least
from netproof.symbolic.netfile import dumps

REPO = Path(__file__).resolve().parents[2]


def _text(name: str, **params: str) -> str:
    c = REGISTRY[name]
    return dumps(c.network(c.parse_params(params)))


def _write(tmp_path: Path, text: str, name: str = "net.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _record(tmp_path: Path, source: str, **changes: object) -> Path:
    rec = json.loads((REPO / "proofs" / source).read_text(encoding="utf-8"))
    rec.update(changes)
    return _write(tmp_path, json.dumps(rec), "record.json")


def _mutants(text: str, every: int) -> list[str]:
    """The file with one weight or bias of an affine map +1 (every ``every``-th such mutant)."""
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
    for row, k in found[::every]:
        old = row[k]
        row[k] = str(Fraction(str(old)) + 1)
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


# ------------------------------------------------------------------ Y3: nearest-unmatched selections

Y3_K1 = "dyck/Y3.n15.156f5a2d.json"  # Dyck(1, 3), every word up to 15


def test_the_nearest_selections_record_cut_to_length_6_is_checked_and_tampered_ones_disagree(
    tmp_path: Path,
) -> None:
    net = _write(tmp_path, _text("dyck", k="1", depth="3"))
    got = check_record(
        _record(tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 6}, checked=127), net
    )
    assert got.outcome == "checked", got.detail
    assert got.detail == ("proved: every matching head selects as stated on all 127 words")
    flipped = _record(
        tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 6}, verdict="refuted", counterexample="("
    )
    got = check_record(flipped, net)
    assert got.outcome == "disagree" and "selects as stated on all 127 words" in got.detail
    wrong_count = _record(tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 6}, checked=126)
    assert check_record(wrong_count, net).outcome == "disagree"


def _first_broken(mutant: str, hi: int) -> tuple[str, ...] | None:
    """The shortlex-first word up to ``hi`` on which netproof's own Y3 check (its exact
    interpreter's selections, its reading of "unmatched") fails, on the mutated file."""
    from netproof.constructions.yao2021.claims import _neighbours_hold
    from netproof.symbolic.exact import run as exact_run

    holds, ref = _neighbours_hold(3), _netproof_network(mutant)
    words = (w for n in range(hi + 1) for w in itertools.product("()", repeat=n))
    return next((w for w in words if holds(w, exact_run(ref, w)) is not None), None)  # type: ignore[operator]


def test_a_key_that_ignores_m_disagrees_naming_the_first_word_netproofs_check_fails_on(
    tmp_path: Path,
) -> None:
    doc = json.loads(_text("dyck", k="1", depth="3"))
    key = doc["network"]["layers"][2]["block"]["heads"][0]["key"]  # match2's left head
    assert key["weights"]["q"] == {"m": "-1", "p": "1"}
    key["weights"]["q"]["m"] = "0"  # the nearest token, matched or not
    mutant = json.dumps(doc)
    record = _record(tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 4}, checked=31)
    got = check_record(record, _write(tmp_path, mutant))
    m = re.search(r"but on '([()]*)' match2 head left", got.detail)
    assert got.outcome == "disagree" and m is not None, got.detail
    assert tuple(m.group(1)) == _first_broken(mutant, 4)


@pytest.mark.slow
def test_every_network_mutant_breaking_a_nearest_selection_disagrees_as_netproofs_check_does(
    tmp_path: Path,
) -> None:
    """+1 mutants (every 20th) of Dyck(1, 3)'s network, the Y3 record cut to lengths 0..5: the
    kernel disagrees exactly on the mutants where netproof's own Y3 check fails on a word,
    naming the first such word."""
    record = _record(tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 5}, checked=63)
    seen = {"disagree": 0, "checked": 0}
    for mutant in _mutants(_text("dyck", k="1", depth="3"), 20):
        got = check_record(record, _write(tmp_path, mutant))
        seen[got.outcome] += 1
        broken = _first_broken(mutant, 5)
        if got.outcome == "disagree":
            m = re.search(r"but on '([()]*)' match", got.detail)
            assert m is not None and tuple(m.group(1)) == broken, got.detail
        else:
            assert got.outcome == "checked" and broken is None, got.detail
    assert seen["disagree"] > 0 and seen["checked"] > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "params"),
    [
        ("dyck/Y3.n8.json", {"k": "2", "depth": "2"}),
        ("dyck/Y3.n8.292921db.json", {"k": "2", "depth": "2", "variant": "paper"}),
        ("dyck/Y3.n6.9c61f2f9.json", {"k": "3", "depth": "3"}),
        (Y3_K1, {"k": "1", "depth": "3"}),
    ],
)
def test_the_committed_nearest_selections_records_are_checked(
    tmp_path: Path, source: str, params: dict[str, str]
) -> None:
    got = check_record(REPO / "proofs" / source, _write(tmp_path, _text("dyck", **params)))
    assert got.outcome == "checked", got.detail


# ------------------------------------------------------------------ the budget of words


def test_a_record_over_the_budget_is_refused_naming_max_words_and_checked_with_a_larger_one(
    tmp_path: Path,
) -> None:
    net = _write(tmp_path, _text("dyck", k="1", depth="3"))
    record = _record(tmp_path, Y3_K1, bound={"min_len": 0, "max_len": 6}, checked=127)
    got = check_record(record, net, max_words=100)
    assert got.outcome == "refused"
    assert "127 words, over the kernel's budget of 100: pass --max-words N" in got.detail
    assert check_record(record, net, max_words=127).outcome == "checked"


def test_recheck_kernel_passes_max_words_to_the_kernel_and_refuses_it_without_kernel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.verifier.cli import main

    folder = tmp_path / "dyck"
    folder.mkdir()
    rec = json.loads((REPO / "proofs" / Y3_K1).read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 0, "max_len": 4}, checked=31)
    (folder / "Y3.json").write_text(json.dumps(rec), encoding="utf-8")
    assert main(["recheck", "--kernel", "--max-words", "30", str(folder)]) == 0
    assert "over the kernel's budget of 30: pass --max-words N" in capsys.readouterr().out
    assert main(["recheck", "--kernel", "--max-words", "31", str(folder)]) == 0
    assert "CHECKED" in capsys.readouterr().out
    assert main(["recheck", "--max-words", "31", str(folder)]) == 2
    assert "--max-words 31 needs --kernel" in capsys.readouterr().err


def test_a_proof_over_the_budget_is_checked_by_the_every_length_rule_and_a_forgery_disagrees(
    tmp_path: Path,
) -> None:
    """Dyck(2, 2)'s Y2.n10 (1,398,101 words): implied by the nearest-selection rule's proof for
    every length; a wrong count disagrees; a forged refutation is run up to its word only."""
    net = _write(tmp_path, _text("dyck", k="2", depth="2"))
    got = check_record(REPO / "proofs" / "dyck" / "Y2.n10.json", net)
    assert got.outcome == "checked", got.detail
    assert got.detail.startswith("proved: all 1398101 words of the bound, implied by: proved for")
    got = check_record(_record(tmp_path, "dyck/Y2.n10.json", checked=1398100), net)
    assert got.outcome == "disagree" and "the bound holds 1398101 words" in got.detail
    forged = _record(tmp_path, "dyck/Y2.n10.json", verdict="refuted", counterexample="(]")
    got = check_record(forged, net)
    assert got.outcome == "disagree" and "counterexample '(]' is right" in got.detail
    got = check_record(REPO / "proofs" / "dyck" / "Y5.n10.json", net)
    assert got.outcome == "refused" and "pass --max-words N" in got.detail


# ------------------------------------------------------------------ generators: Y6, Y7, Y8, Y11


def test_the_layer1_averages_record_is_checked_and_tampered_ones_disagree(tmp_path: Path) -> None:
    text = _text("dyck-gen")
    net = _write(tmp_path, text)
    record = REPO / "proofs" / "dyck-gen" / "Y6.n8.json"
    got = check_record(record, net)
    assert got.outcome == "checked" and "all 425 prefixes" in got.detail, got.detail
    flipped = _record(tmp_path, "dyck-gen/Y6.n8.json", verdict="refuted", counterexample="(")
    assert check_record(flipped, net).outcome == "disagree"
    doc = json.loads(text)
    doc["network"]["embedding"]["table"][4][1][1][1] = "2"  # γ's g: 1 -> 2, so a₂ = 2/i at γ
    assert doc["network"]["embedding"]["table"][4][0] == "γ"
    got = check_record(record, _write(tmp_path, json.dumps(doc)))
    assert got.outcome == "disagree" and "on '' at i=1 (a₁, a₂) = (1, 2)" in got.detail
    doc = json.loads(text)
    doc["network"]["layers"][0]["block"]["heads"][0]["value"]["bias"]["a1"] = "-2"
    got = check_record(record, _write(tmp_path, json.dumps(doc)))
    assert got.outcome == "disagree" and "value map is not" in got.detail


def test_the_generators_claims_past_its_layer_norm_are_refused_naming_the_square_root(
    tmp_path: Path,
) -> None:
    net = _write(tmp_path, _text("dyck-gen"))
    for source in ("Y7.n8.json", "Y9.n8.json", "Y10.n8.json", "Y10-def.n7.json"):
        got = check_record(REPO / "proofs" / "dyck-gen" / source, net)
        assert got.outcome == "refused" and "√(5/2) is not rational" in got.detail, source
    g2 = _write(tmp_path, _text("dyck-gen", reading="G2"))
    got = check_record(REPO / "proofs" / "dyck-gen" / "Y6.n8.3734fcf0.json", g2)
    assert got.outcome == "refused" and "the kernel's rule reads prefixes" in got.detail


def test_eq7_is_checked_and_a_flipped_verdict_disagrees(tmp_path: Path) -> None:
    net = _write(tmp_path, _text("dyck-gen"))
    got = check_record(REPO / "proofs" / "dyck-gen" / "Y8.fact.json", net)
    assert got.outcome == "checked" and got.detail == (
        "proved: all 187160 cases, each decided in rationals"
    )
    got = check_record(_record(tmp_path, "dyck-gen/Y8.fact.json", verdict="refuted"), net)
    assert got.outcome == "disagree" and "all 187160 cases hold" in got.detail


@pytest.mark.slow
def test_the_theta_gaps_are_checked_and_a_tampered_count_disagrees(tmp_path: Path) -> None:
    net = _write(tmp_path, _text("dyck-gen"))
    got = check_record(REPO / "proofs" / "dyck-gen" / "Y11.fact.json", net)
    assert got.outcome == "checked" and "all 252000 cases" in got.detail
    got = check_record(_record(tmp_path, "dyck-gen/Y11.fact.json", checked=1), net)
    assert got.outcome == "disagree"


def test_the_exact_gap_comparison_decides_boundary_cases_with_square_roots() -> None:
    """y − x >= t for x = a/√A, y = b/√B, decided in rationals, on cases whose answer is known:
    equality holds at the boundary, and a hair above it fails."""
    assert _at_least((0, 1), (3, 9), Fraction(1))  # 1 − 0 >= 1
    assert not _at_least((0, 1), (3, 9), Fraction(1) + Fraction(1, 10**9))
    assert _at_least((1, 4), (3, 4), Fraction(1))  # 3/2 − 1/2 = 1
    assert not _at_least((1, 4), (3, 4), Fraction(1) + Fraction(1, 10**12))
    assert not _at_least((3, 4), (1, 4), Fraction(1, 10**12))  # negative
    # 1/√2 − 1/√8 = 1/√8 ≈ 0.35355: between 0.3535 and 0.3536
    assert _at_least((1, 8), (1, 2), Fraction(3535, 10**4))
    assert not _at_least((1, 8), (1, 2), Fraction(3536, 10**4))
