"""The induction over layers (:mod:`netproof.verifier.smt.compositional.layers`): a recognizer of a
stack language proved for every length by one small transition system per segment of the network.

- Faithfulness: the invariants each step assumes and guarantees hold of the exact interpreter's
  marks on every short word (completeness on the words of the language, soundness on every
  word), so the steps state what the network does; the proof agrees with the exhaustive check.
- Soundness: single-weight mutants of Dyck(1, 2) that change the language the network
  recognizes within the exhaustive bound are never proved by the induction (``-m slow``: every
  mutant, with the figures printed); those it proves get every word of the bound right.
- The proof log: its queries rebuild from the recorded invariants, the strict reader accepts
  it, and a tampered query is rejected.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021.recognizer import dyck_recognizer
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import LayerInduction, Proved, Recognizes
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt import prooflog
from netproof.verifier.smt.compositional.layers import check_base, step_names
from netproof.verifier.smt.compositional.lemmas import LemmaResult, prove_lemma
from netproof.verifier.smt.compositional.search import BY_LAYERS, prove_by_layers
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3


def _plan(depth: int) -> LayerInduction:
    return LayerInduction(
        after=tuple(f"logic{ell}" for ell in range(1, depth + 1)), mark="m", error="e"
    )


def _claim(k: int, depth: int) -> Recognizes:
    return Recognizes(
        id="Y2", statement="s", reference="r", language=DYCK(k, depth), induction=_plan(depth)
    )


def _lemmas(k: int, depth: int) -> tuple[Any, ...]:
    c = REGISTRY["dyck"]
    return c.lemmas(c.parse_params({"k": str(k), "depth": str(depth)}))  # type: ignore[misc]


def _by_layers(
    net: Network, k: int, depth: int, timeout: float = 120.0
) -> tuple[list[Any] | None, str]:
    from netproof.verifier import smtlib

    results = [LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in _lemmas(k, depth)]
    queries, because, how = prove_by_layers(
        net, _claim(k, depth), results, {}, [], timeout, smtlib.Stop()
    )
    assert how == BY_LAYERS
    return queries, because


# ----------------------------------------------------------------------------- the marks, exactly


def _pairs(word: tuple[str, ...], k: int) -> dict[int, int] | None:
    """Position -> its partner's position (word positions 1..n, γ at 0), or None where the word
    is not a balanced bracket word (types ignored)."""
    from netproof.constructions.yao2021.recognizer import symbols

    opens = {op for op, _cl in symbols(k)}
    stack: list[int] = []
    out: dict[int, int] = {}
    for i, s in enumerate(word, start=1):
        if s in opens:
            stack.append(i)
        elif not stack:
            return None
        else:
            j = stack.pop()
            out[i], out[j] = j, i
    return None if stack else out


def _heights(word: tuple[str, ...], k: int) -> dict[int, int]:
    from netproof.constructions.yao2021.claims import pair_heights

    return pair_heights(word, k)


def _nests(word: tuple[str, ...], k: int, marks: list[int], T: int) -> bool:
    """The marked word positions are nested pairs (types ignored) of height <= T with nothing
    unmarked inside a marked pair."""
    from netproof.constructions.yao2021.recognizer import symbols

    opens = {op for op, _cl in symbols(k)}
    depth = 0
    for i, s in enumerate(word, start=1):
        if not marks[i]:
            if depth:
                return False
            continue
        depth += 1 if s in opens else -1
        if depth < 0 or depth > T:
            return False
    return depth == 0


@pytest.mark.parametrize("k,depth,n", [(1, 2, 7), (2, 2, 4), (1, 3, 6)])
def test_the_exact_marks_meet_every_step_of_the_induction_on_every_short_word(
    k: int, depth: int, n: int
) -> None:
    net = dyck_recognizer(k=k, depth=depth)
    lang = DYCK(k, depth)
    for m in range(n + 1):
        for word in itertools.product(net.alphabet, repeat=m):
            trace = run_exact(net, word)
            member = lang.contains(word)
            heights = _heights(word, k) if member else {}
            before: list[int] | None = None
            for ell in range(1, depth + 1):
                marks = [int(trace.value(f"logic{ell}", t, "m")) for t in range(trace.n)]
                errors = [int(trace.value(f"logic{ell}", t, "e")) for t in range(trace.n)]
                assert marks[0] == marks[-1] == 1
                if member:  # completeness: marks are the pairs of height <= ℓ, no error
                    assert errors == [0] * len(errors), (word, ell)
                    assert marks[1:-1] == [int(heights[i] <= ell) for i in range(1, m + 1)], (
                        word,
                        ell,
                    )
                if not any(errors):  # soundness: nested pairs of height <= ℓ, marks only grow
                    assert _nests(word, k, marks, ell), (word, ell, marks)
                    if before is not None:
                        assert all(b <= a for a, b in zip(marks, before, strict=True)), (word, ell)
                before = marks
            assert trace.accepted == member


def test_the_base_case_refuses_an_embedding_that_marks_a_word_symbol() -> None:
    net = dyck_recognizer(k=1, depth=1)
    emb = net.embedding
    table = tuple(
        (tok, (*((d, v) for d, v in row if d != "m"), ("m", Fraction(1))))
        if tok == "("
        else (tok, row)
        for tok, row in emb.table
    )  # type: ignore[union-attr]
    marked = dataclasses.replace(net, embedding=dataclasses.replace(emb, table=table))
    with pytest.raises(Unsupported, match=r"the embedding of '\(' has m=1"):
        check_base(marked, _plan(1))


def test_an_induction_whose_depth_is_not_the_languages_is_unsupported() -> None:
    net = dyck_recognizer(k=1, depth=2)
    claim = Recognizes(
        id="Y2", statement="s", reference="r", language=DYCK(1, 3), induction=_plan(2)
    )
    results = [LemmaResult(lemma, *prove_lemma(net, lemma)) for lemma in _lemmas(1, 2)]
    from netproof.verifier.smt.compositional.layers import induction_system

    with pytest.raises(Unsupported, match="has 2 layers but Dyck"):
        induction_system(net, claim, results, "layer 1 sound")


# ----------------------------------------------------------------------------- proofs


@pytest.mark.parametrize("k,depth", [(1, 1), (2, 3)])
def test_the_induction_proves_the_recognizer_for_every_length(k: int, depth: int) -> None:
    queries, because = _by_layers(dyck_recognizer(k=k, depth=depth), k, depth)
    assert queries is not None, because
    assert [q.name for q in queries] == [
        f"Y2 every n: {step}: {c}"
        for step in step_names(depth)
        for c in ("initiation", "consecution", "safety")
    ]
    assert {q.result for q in queries} == {"unsat"}


def test_the_printed_recognizer_fails_its_first_step() -> None:
    queries, because = _by_layers(dyck_recognizer(k=1, depth=1, variant="paper"), 1, 1)
    assert queries is None
    assert "base case" in because or "fails on some word" in because


def _record(tmp_path: Path) -> Path:
    job = Job(REGISTRY["dyck"], REGISTRY["dyck"].parse_params({"k": "2", "depth": "3"}))
    claim = next(c for c in REGISTRY["dyck"].claims(job.values) if c.id == "Y2")
    outcome = prove_claim(job, claim, method="smt", max_len=6, timeout=120)
    assert (
        isinstance(outcome.verdict, Proved)
        and "by induction over the 3 layers" in outcome.verdict.detail
    )
    from netproof.verifier.campaign.store import write_record

    return Path(write_record(str(tmp_path), job.construction, job.values, claim, 6, outcome))


def test_a_proof_by_layers_is_recorded_and_its_log_checks(tmp_path: Path) -> None:
    path = _record(tmp_path)
    prooflog.verify_record(str(path), REGISTRY)


def test_a_tampered_step_of_a_proof_by_layers_is_rejected(tmp_path: Path) -> None:
    path = _record(tmp_path)
    rec = json.loads(path.read_text())
    queries = rec["lemmas"]["queries"]
    queries[4], queries[5] = queries[5], queries[4]  # layer 1 sound: consecution and safety swapped
    path.write_text(json.dumps(rec))
    with pytest.raises(prooflog.ProofLogError, match="neither prove every length at once"):
        prooflog.verify_record(str(path), REGISTRY)


# ----------------------------------------------------------------------------- mutants


def _mutants(
    k: int, depth: int, every: int, bound: int
) -> Iterator[tuple[str, Network, list[tuple[str, ...]]]]:
    net = dyck_recognizer(k=k, depth=depth)
    lang = DYCK(k, depth)
    words = [w for m in range(bound + 1) for w in itertools.product(net.alphabet, repeat=m)]
    for path in list(weight_sites(net))[::every]:
        for delta in (Fraction(1, 2), Fraction(-1, 2)):
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            wrong = [w for w in words if run_exact(mutant, w).accepted != lang.contains(w)]
            yield f"{'.'.join(map(str, path))} {'+' if delta > 0 else ''}{delta}", mutant, wrong


def _check_mutants(k: int, depth: int, every: int, bound: int) -> dict[str, int]:
    figures = {"mutants": 0, "changed": 0, "proved": 0, "not proved": 0}
    for label, mutant, wrong in _mutants(k, depth, every, bound):
        figures["mutants"] += 1
        figures["changed"] += bool(wrong)
        queries, _because = _by_layers(mutant, k, depth)
        if queries is not None:
            figures["proved"] += 1
            assert not wrong, (
                f"{label}: proved for every length by layers, but it gets {wrong[0]} wrong"
            )
        else:
            figures["not proved"] += 1
    return figures


def test_mutants_that_change_the_language_are_never_proved_by_layers() -> None:
    figures = _check_mutants(1, 2, every=73, bound=4)
    assert figures["changed"] >= 1  # the sample holds a mutant that matters


@pytest.mark.slow
def test_every_mutant_of_dyck_1_2_that_changes_the_language_is_never_proved_by_layers() -> None:
    figures = _check_mutants(1, 2, every=1, bound=8)
    print(f"Dyck(1, 2) single-weight mutants: {figures}")
    assert figures["changed"] > 0
