"""The tie rules of a layered recognizer's readout head for every length, at the induction's
last cut (:func:`netproof.verifier.smt.compositional.layers.ties_claim`): Dyck(k, D)'s Y5 at the
papers' size, its record rechecked, a tampered record rejected, faithfulness against the
exhaustive check, and mutants whose tie rules really differ on a short word never proved.

The ground truth here is the network itself run three times, its readout head's tie rule set
to average, leftmost and rightmost (the claim's own ``holds`` recomputes the paper's final
layer from the marks and errors, so a mutant of that layer needs the network's own run).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from weight_mutants import get_at, weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.symbolic import AttentionLayer, Hardmax, Network
from netproof.symbolic.errors import NetworkValidationError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import Proved, Refuted, TraceProperty, Unknown
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt import prooflog
from netproof.verifier.smt.compositional import prove_trace
from netproof.verifier.smt.compositional.layers import TIES
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

BOUND = 6


def _dyck(k: int, depth: int) -> tuple[Any, dict[str, Any], Network, TraceProperty]:
    c = REGISTRY["dyck"]
    values = c.parse_params({"k": str(k), "depth": str(depth)})
    claim = next(cl for cl in c.claims(values) if cl.id == "Y5")
    assert isinstance(claim, TraceProperty)
    return c, values, c.build(values), claim


def _with_tie(net: Network, tie: str) -> Network:
    """``net`` with the tie rule of its ``final`` layer's heads set to ``tie``."""
    layers = list(net.layers)
    for i, sub in enumerate(layers):
        block = sub.block
        if isinstance(block, AttentionLayer) and block.name == "final":
            heads = tuple(dataclasses.replace(h, normalizer=Hardmax(tie=tie)) for h in block.heads)
            layers[i] = dataclasses.replace(sub, block=dataclasses.replace(block, heads=heads))
    return dataclasses.replace(net, layers=tuple(layers))


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(lo, hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _tie_truth(net: Network, words: Iterator[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The first word on which the accept bit depends on the final head's tie rule, or None."""
    nets = [_with_tie(net, tie) for tie in ("average", "leftmost", "rightmost")]
    for w in words:
        if len({run_exact(n, w).accepted for n in nets}) > 1:
            return w
    return None


def test_the_tie_rules_of_dyck_8_10_are_proved_for_every_length_at_the_last_cut() -> None:
    c, values, net, claim = _dyck(8, 10)
    out = prove_trace(net, claim, c.lemmas(values), 4, timeout=300)
    assert isinstance(out.verdict, Proved), out.verdict
    assert "every longer one" in out.verdict.detail and "last cut" in out.verdict.detail
    assert [q.name for q in out.tree.queries] == [
        f"Y5 every n: {TIES}: {q}" for q in ("initiation", "consecution", "safety")
    ]


@pytest.mark.parametrize("k,depth", [(1, 2), (2, 2)])
def test_the_proof_at_the_last_cut_agrees_with_the_network_run_under_each_tie_rule(
    k: int, depth: int
) -> None:
    c, values, net, claim = _dyck(k, depth)
    out = prove_trace(net, claim, c.lemmas(values), BOUND, timeout=120)
    assert isinstance(out.verdict, Proved) and "every longer one" in out.verdict.detail
    assert _tie_truth(net, _words(net.alphabet, 0, 3 if k == 2 else 7)) is None


def _record(tmp_path: Path) -> Path:
    job = Job(REGISTRY["dyck"], REGISTRY["dyck"].parse_params({"k": "2", "depth": "3"}))
    claim = next(cl for cl in REGISTRY["dyck"].claims(job.values) if cl.id == "Y5")
    outcome = prove_claim(job, claim, method="smt", max_len=4, timeout=120)
    assert isinstance(outcome.verdict, Proved), outcome.verdict
    from netproof.verifier.campaign.store import write_record

    return Path(write_record(str(tmp_path), job.construction, job.values, claim, 4, outcome))


def test_a_record_of_the_tie_rules_checks_and_one_with_a_weakened_invariant_and_its_hash_is_rejected(
    tmp_path: Path,
) -> None:
    path = _record(tmp_path)
    prooflog.verify_record(str(path), REGISTRY)
    rec = json.loads(path.read_text())
    first = next(q for q in rec["lemmas"]["queries"] if q["name"].endswith("initiation"))
    smt2 = (path.parent / first["file"]).resolve()
    text = smt2.read_text()
    # the invariant weakened to "true", its hash updated in the log: the rebuilt query differs
    smt2.write_text(text.replace("(assert", "(assert true)\n(assert", 1) + "\n")
    first["sha256"] = hashlib.sha256(smt2.read_bytes()).hexdigest()
    path.write_text(json.dumps(rec, indent=2))
    with pytest.raises(
        prooflog.ProofLogError, match="query 'Y5 every n: output ties: initiation' rebuilds to"
    ):
        prooflog.verify_record(str(path), REGISTRY)


def _mutants(net: Network) -> Iterator[tuple[str, Network]]:
    """Single-weight mutants (±1/2, ±1) of the second matching layer on: logic2, the final head,
    the accept FFN and the readout; zeros included, so that a weight can appear."""
    for path in weight_sites(net, zeros=True):
        if (path[0] == "layers" and int(path[1]) < 3) or path[0] == "embedding":
            continue
        for delta in (Fraction(1, 2), Fraction(-1, 2), Fraction(1), Fraction(-1)):
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            yield f"{'.'.join(map(str, path))} {get_at(net, path)} + {delta}", mutant


def _check(label: str, mutant: Network, c: Any, values: Any, claim: TraceProperty) -> str:
    out = prove_trace(mutant, claim, c.lemmas(values), 4, timeout=120)
    first = _tie_truth(mutant, _words(mutant.alphabet, 0, 4))
    if first is not None:
        assert not isinstance(out.verdict, Proved), (
            f"{label}: the tie rules differ on {first}, but Y5 is proved"
        )
        return "breaks"
    if isinstance(out.verdict, Proved):
        rng = random.Random(label)
        longer = [
            tuple(rng.choice(mutant.alphabet) for _ in range(rng.randint(6, 12))) for _ in range(6)
        ]
        assert _tie_truth(mutant, iter(longer)) is None, f"{label}: proved, broken on a longer word"
        return "proved"
    assert isinstance(out.verdict, Unknown)
    return "unknown"


def test_a_final_head_that_ignores_the_marks_is_never_proved_tie_free() -> None:
    c, values, net, claim = _dyck(1, 2)
    # the final head's key weight on m, -1 -> 0: γ, the open brackets and ω tie at the top
    mutant = with_weight(net, ("layers", 4, "block", "heads", 0, "key", "weights", 0, 1), 1)
    assert _tie_truth(mutant, _words(mutant.alphabet, 0, 2)) == ("(", "(")
    assert _check("key m 0", mutant, c, values, claim) == "breaks"


@pytest.mark.parametrize(
    "path,delta,kind",
    [
        (("readout", "logit", "bias", 0), Fraction(1, 4), "proved"),  # still tie-free
        (("layers", 3, "block", "steps", 0, "bias", 0), Fraction(1, 2), "unknown"),  # logic2 broken
    ],
)
def test_a_harmless_mutant_is_proved_and_one_that_breaks_a_segment_is_not(
    path: tuple[Any, ...], delta: Fraction, kind: str
) -> None:
    c, values, net, claim = _dyck(1, 2)
    assert _check(str(path), with_weight(net, path, delta), c, values, claim) == kind


@pytest.mark.slow
def test_single_weight_mutants_after_the_last_matching_layer_are_never_proved_where_ties_matter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    c, values, net, claim = _dyck(1, 2)
    counts = {"breaks": 0, "proved": 0, "unknown": 0}
    for label, mutant in itertools.islice(_mutants(net), 0, None, 29):
        counts[_check(label, mutant, c, values, claim)] += 1
    with capsys.disabled():
        print(f"\nDyck(1,2) Y5 mutants after the last matching layer: {counts}")
    assert counts["proved"] > 0 and counts["unknown"] > 0, counts


def _exhaustive(net: Network, values: Any, claim: TraceProperty, bound: int) -> tuple[Any, Any]:
    """Y5's exhaustive verdict on ``net``: batched, and word by word (``holds`` alone)."""
    from netproof.verifier.claims import Construction
    from netproof.verifier.exhaustive.checker import check

    c = REGISTRY["dyck"]
    mine = Construction(
        name=c.name,
        paper_id=c.paper_id,
        title=c.title,
        reference=c.reference,
        params=c.params,
        build=lambda _values: net,
        claims=c.claims,
        language=c.language,
    )
    job = Job(mine, values)
    fast = check(job, claim, max_len=bound)
    slow = check(Job(mine, values), dataclasses.replace(claim, holds_batch=None), max_len=bound)
    return fast, slow


def test_the_exhaustive_check_runs_the_network_under_each_tie_rule_not_a_formula_for_it() -> None:
    _c, values, net, claim = _dyck(1, 2)
    seen: list[set[str]] = []
    spy = dataclasses.replace(
        claim,
        holds=lambda w, t: seen.append(set(t.variants)) or claim.holds(w, t),
        holds_batch=None,
    )
    fast, slow = _exhaustive(net, values, claim, 5)
    assert isinstance(fast, Proved) and fast.method == "exhaustive (exact, batched integers)"
    assert isinstance(slow, Proved) and slow.method == "exhaustive (exact)"
    _exhaustive(net, values, spy, 2)
    assert seen and all(s == {"average", "leftmost", "rightmost"} for s in seen)
    # the final head's key weight on m, -1 -> 0: the marks no longer order the ties, which the
    # paper's formula for the final layer (computed from e and m) could not see
    mutant = with_weight(net, ("layers", 4, "block", "heads", 0, "key", "weights", 0, 1), 1)
    fast, slow = _exhaustive(mutant, values, claim, 4)
    assert isinstance(fast, Refuted) and isinstance(slow, Refuted), (fast, slow)
    assert fast.word == slow.word == _tie_truth(mutant, _words(mutant.alphabet, 0, 4)), (fast, slow)
    assert fast.detail == slow.detail and "depends on the tie rule" in fast.detail, fast
