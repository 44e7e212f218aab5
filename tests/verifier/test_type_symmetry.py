"""The type symmetry of the layer induction (verifier/smt/compositional/symmetry.py): the
recolouring to three types against the triangles it must keep, the premise on the shipped
recognizer and on single-weight mutants that break it at one type, and the reduced proof
against exhaustive checks."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021.recognizer import dyck_recognizer, symbols
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier import smtlib
from netproof.verifier.claims import BooleanBlock, LayerInduction, Proved, Recognizes
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt import prooflog
from netproof.verifier.smt.compositional.lemmas import LemmaResult, prove_lemma
from netproof.verifier.smt.compositional.search import prove_by_layers
from netproof.verifier.smt.compositional.symmetry import QUERY, three_types, type_symmetry
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3


def _claim(k: int, depth: int) -> Recognizes:
    plan = LayerInduction(
        after=tuple(f"logic{ell}" for ell in range(1, depth + 1)), mark="m", error="e"
    )
    return Recognizes(
        id="Y2", statement="s", reference="r", language=DYCK(k, depth), induction=plan
    )


def _results(net: Network, k: int, depth: int) -> list[LemmaResult]:
    c = REGISTRY["dyck"]
    lemmas = c.lemmas(c.parse_params({"k": str(k), "depth": str(depth)}))  # type: ignore[misc]
    return [LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in lemmas]


def _reduced(net: Network, k: int, depth: int) -> tuple[list[Any] | None, str, str]:
    return prove_by_layers(
        net,
        _claim(k, depth),
        _results(net, k, depth),
        {},
        [],
        120.0,
        smtlib.Stop(),
        reduce_types=True,
    )


# ----------------------------------------------------------------------------- the recolouring


def _triangles(n: int, unmarked: list[bool]) -> list[tuple[int, ...]]:
    """{i, L(i), R(i)} per position, L and R as the NearestSelection heads select them."""
    out = []
    for i in range(n):
        before = [j for j in range(i) if unmarked[j]]
        after = [j for j in range(i + 1, n) if unmarked[j]]
        left = before[-1] if before else (i - 1 if i > 0 else None)
        right = after[0] if after else (i + 1 if i < n - 1 else None)
        out.append(tuple(j for j in (i, left, right) if j is not None))
    return out


def test_three_types_keep_every_equality_of_every_triangle_on_random_marks_and_words() -> None:
    rng = random.Random(33)
    for _ in range(3000):
        n = rng.randint(2, 14)
        unmarked = [rng.random() < rng.choice((0.2, 0.5, 0.8)) for _ in range(n)]
        types: list[int | None] = [None] + [rng.randint(1, 6) for _ in range(n - 2)] + [None]
        got = three_types(types, unmarked)
        assert all(
            g is None if t is None else g in (1, 2, 3) for t, g in zip(types, got, strict=True)
        )
        for tri in _triangles(n, unmarked):
            for a, b in itertools.combinations(tri, 2):
                if types[a] is not None and types[b] is not None:
                    assert (types[a] == types[b]) == (got[a] == got[b]), (types, unmarked, tri)


def test_two_colours_do_not_suffice_for_the_triangles() -> None:
    # three word positions, all unmarked: one triangle of three different types needs three
    types: list[int | None] = [None, 1, 2, 3, None]
    tri = _triangles(5, [True] * 5)[2]
    assert set(tri) == {1, 2, 3}
    assert len(set(three_types(types, [True] * 5)[1:4])) == 3


# ----------------------------------------------------------------------------- the premise


def test_the_shipped_recognizer_meets_the_premise_and_its_ffns_are_invariant() -> None:
    net = dyck_recognizer(k=5, depth=2)
    sym = type_symmetry(net, _claim(5, 2), _results(net, 5, 2))
    assert sym is not None and sym.code == ("t0", "t1", "t2") and sym.kept == 3
    assert [q[0] for q in sym.queries] == [
        f"Y2 every n: {QUERY}: logic{ell} {g}" for ell in (1, 2) for g in ("(1 2)", "(1 2 … 5)")
    ]
    for _name, _text, _reason, solver in sym.queries:
        assert smtlib.check(solver, timeout=60)[0] == "unsat"


def test_three_types_or_fewer_need_no_symmetry() -> None:
    net = dyck_recognizer(k=3, depth=1)
    assert type_symmetry(net, _claim(3, 1), _results(net, 3, 1)) is None


def _embedding_sites(net: Network, token: str) -> list[tuple[Any, ...]]:
    rows = [tok for tok, _row in net.embedding.table]  # type: ignore[union-attr]
    i = rows.index(token)
    return [
        p
        for p in weight_sites(net, zeros=True)
        if p[:3] == ("embedding", "table", i) and p[-1] == 1
    ]


def test_every_single_weight_mutant_of_the_last_types_embedding_breaks_the_premise() -> None:
    k, depth = 5, 1
    net = dyck_recognizer(k=k, depth=depth)
    results = _results(net, k, depth)
    tried = 0
    for token in symbols(k)[-1]:
        for path in _embedding_sites(net, token):
            for delta in (Fraction(1), Fraction(-1), Fraction(1, 2)):
                try:
                    mutant = with_weight(net, path, delta)
                except (NetworkValidationError, ValueError):
                    continue
                tried += 1
                with pytest.raises(Unsupported, match=r"code|differ|shape|type"):
                    type_symmetry(mutant, _claim(k, depth), results)
    assert tried >= 8


def test_a_score_that_reads_a_code_bit_breaks_the_premise() -> None:
    net = dyck_recognizer(k=5, depth=1)
    sub = net.layers[0].block
    head = sub.heads[0]  # type: ignore[union-attr]
    key = dataclasses.replace(
        head.key,
        inputs=(*head.key.inputs, "t0"),
        weights=tuple((*row, Fraction(1, 1000)) for row in head.key.weights),
    )
    heads = (dataclasses.replace(head, key=key), *sub.heads[1:])  # type: ignore[union-attr]
    layers = (
        dataclasses.replace(net.layers[0], block=dataclasses.replace(sub, heads=heads)),
        *net.layers[1:],
    )
    mutant = dataclasses.replace(net, layers=layers)
    with pytest.raises(Unsupported, match=r"match1\.left"):
        type_symmetry(mutant, _claim(5, 1), _results(mutant, 5, 1))


def test_an_ffn_that_singles_out_one_type_fails_its_invariance_query() -> None:
    net = dyck_recognizer(k=5, depth=1)
    results = _results(net, 5, 1)
    block = next(r for r in results if isinstance(r.lemma, BooleanBlock))
    t0, t1, t2, e = (sympy.Symbol(d) for d in ("t0", "t1", "t2", "e"))
    lemma = block.lemma
    assert isinstance(lemma, BooleanBlock)
    # e' also set at type 1 (code 001): every type but one is treated alike
    outputs = {**lemma.outputs, "e": sympy.Or(lemma.outputs["e"], t0 & ~t1 & ~t2 & ~e)}
    odd = dataclasses.replace(lemma, outputs=outputs)
    swapped = [LemmaResult(odd, block.node, True) if r is block else r for r in results]
    sym = type_symmetry(net, _claim(5, 1), swapped)
    assert sym is not None
    answers = [smtlib.check(q[3], timeout=60)[0] for q in sym.queries]
    assert "sat" in answers


# ----------------------------------------------------------------------------- against exhaustive


def _wrong(net: Network, k: int, depth: int, bound: int) -> list[tuple[str, ...]]:
    """Every word up to ``bound`` the network gets wrong (the batched exact evaluator)."""
    from netproof.symbolic.batched import evaluate

    lang = DYCK(k, depth)
    words = [w for m in range(bound + 1) for w in itertools.product(net.alphabet, repeat=m)]
    accepted = evaluate(net, words).accepted
    assert run_exact(net, words[-1]).accepted == bool(accepted[-1])
    return [w for w, a in zip(words, accepted, strict=True) if bool(a) != lang.contains(w)]


def test_the_reduced_induction_proves_dyck_4_1_as_the_exhaustive_check_does() -> None:
    net = dyck_recognizer(k=4, depth=1)
    queries, because, how = _reduced(net, 4, 1)
    assert queries is not None, because
    assert "3 of the 4 types" in how
    assert sum(q.name.startswith(f"Y2 every n: {QUERY}") for q in queries) == 2
    assert not _wrong(net, 4, 1, 4)


def test_a_mutant_wrong_on_the_fourth_type_only_is_never_proved_by_the_reduction() -> None:
    # ")]" ... the last type's close bracket gets the third type's code bit: only words with the
    # fourth type go wrong, which the three types of the reduced induction never read
    net = dyck_recognizer(k=4, depth=1)
    close = symbols(4)[-1][1]
    rows = [tok for tok, _row in net.embedding.table]  # type: ignore[union-attr]
    row = dict(net.embedding.table[rows.index(close)][1])  # type: ignore[union-attr]
    path = next(
        p
        for p in weight_sites(net, zeros=True)
        if p[:3] == ("embedding", "table", rows.index(close))
        and p[-1] == 1
        and row[get_dim(net, p)] == 0
        and get_dim(net, p) == "t0"
    )
    mutant = with_weight(net, path, Fraction(1))
    wrong = _wrong(mutant, 4, 1, 4)
    assert wrong and all(any(s in symbols(4)[-1] for s in w) for w in wrong)
    queries, _because, _how = _reduced(mutant, 4, 1)
    assert queries is None, "proved for every length, but wrong on " + " ".join(wrong[0])


def get_dim(net: Network, path: tuple[Any, ...]) -> str:
    row = net.embedding.table[path[2]][1]  # type: ignore[union-attr]
    return str(row[path[4]][0])


@pytest.mark.slow
def test_single_weight_mutants_of_dyck_4_1_are_never_proved_by_the_reduction_when_wrong() -> None:
    net = dyck_recognizer(k=4, depth=1)
    figures = {"mutants": 0, "changed": 0, "proved": 0}
    for path in list(weight_sites(net))[::29]:
        for delta in (Fraction(1, 2), Fraction(-1, 2)):
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            figures["mutants"] += 1
            wrong = _wrong(mutant, 4, 1, 3)
            figures["changed"] += bool(wrong)
            queries, _because, _how = _reduced(mutant, 4, 1)
            if queries is not None:
                figures["proved"] += 1
                assert not wrong, f"{path} {delta}: proved, but {wrong[0]} is wrong"
    print(f"Dyck(4, 1) single-weight mutants under the reduction: {figures}")
    assert figures["changed"] > 0


# ----------------------------------------------------------------------------- the record


def _record(tmp_path: Path) -> Path:
    job = Job(REGISTRY["dyck"], REGISTRY["dyck"].parse_params({"k": "4", "depth": "1"}))
    claim = next(c for c in REGISTRY["dyck"].claims(job.values) if c.id == "Y2")
    outcome = prove_claim(job, claim, method="smt", max_len=2, timeout=120)
    assert isinstance(outcome.verdict, Proved) and "3 of the 4 types" in outcome.verdict.detail
    from netproof.verifier.campaign.store import write_record

    return Path(write_record(str(tmp_path), job.construction, job.values, claim, 2, outcome))


def test_a_reduced_proof_is_recorded_its_log_checks_and_a_dropped_symmetry_query_is_refused(
    tmp_path: Path,
) -> None:
    path = _record(tmp_path)
    prooflog.verify_record(str(path), REGISTRY)
    rec = json.loads(path.read_text())
    queries = rec["lemmas"]["queries"]
    assert queries[0]["name"].startswith(f"Y2 every n: {QUERY}: ")
    rec["lemmas"]["queries"] = [q for q in queries if QUERY not in q["name"]]
    path.write_text(json.dumps(rec))
    with pytest.raises(prooflog.ProofLogError, match=r"differ|rebuil|not the"):
        prooflog.verify_record(str(path), REGISTRY)
