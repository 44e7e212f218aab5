"""A construction's next-symbol claim through the per-position engine: Yao et al.'s Dyck
generator (softmax layer 1, hardmax layer 2, a softmax readout) checked by
:func:`~netproof.verifier.models.next_claims.check_next_sets` on every word up to a length,
agreeing with the construction's own claim checker (claim Y10, the interval interpreter along
the valid prefixes) on every word, for the right network and for a wrong one."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021.claims import valid_prefixes
from netproof.constructions.yao2021.generator import dyck_generator
from netproof.symbolic import Network, interval
from netproof.verifier.claims import TraceProperty
from netproof.verifier.claims.dyck import allowed_next
from netproof.verifier.models.enclosure import EnclosureError
from netproof.verifier.models.next_claims import check_next_sets

pytestmark = pytest.mark.torch

K, D, N = 1, 2, 5
Word = tuple[str, ...]


def _claim() -> TraceProperty:
    c = REGISTRY["dyck-gen"]
    values = c.parse_params({"k": "1", "depth": str(D)})
    claim = next(cl for cl in c.claims(values) if cl.id == "Y10")
    assert isinstance(claim, TraceProperty)
    return claim


VALID = set(valid_prefixes(K, D, N))


def reference(word: Word) -> list[set[str] | None]:
    """The allowed next symbols after each prefix word[:p+1] of the claim's domain."""
    out: list[set[str] | None] = []
    for p in range(len(word)):
        prefix = tuple(word[: p + 1])
        if prefix in VALID:
            allowed, end = allowed_next(prefix, K, D)
            out.append({*allowed, *(["ω"] if end else [])})
        else:
            out.append(None)
    return out


def _existing_fails(net: Network) -> set[Word]:
    """The words of claim Y10's domain on which its own check (the claim's ``holds`` on the
    interval interpreter's trace, as the exhaustive checker runs it) fails."""
    claim = _claim()
    assert claim.domain is not None
    return {w for w in claim.domain(N) if claim.holds(w, interval.run(net, w)) is not None}


@pytest.mark.parametrize("depth", [D, D + 1], ids=["the generator", "a planted wrong one"])
def test_the_engine_agrees_with_the_generators_own_claim_checker_on_every_word(
    depth: int,
) -> None:
    net = dyck_generator(k=K, depth=depth)  # depth D + 1: opens allowed one level too deep
    report = check_next_sets(net, reference, max_n=N, reference_name="allowed_next")
    assert report.totals.undecided == 0
    assert report.totals.words == sum(3**m for m in range(1, N + 1))
    engine_wrong: set[Word] = {v.word for v in report.listed if v.got is not None}
    existing = _existing_fails(net)
    assert () not in existing  # the prediction after γ alone, which the engine does not check
    # the claim fails on a valid prefix iff the engine finds a wrong position in that word
    assert existing == {w for w in VALID if w and w in engine_wrong}
    # and every word the engine finds wrong has a valid prefix the claim fails on
    assert all(any(w[: p + 1] in existing for p in range(len(w))) for w in engine_wrong)
    if depth == D:
        assert report.status == "correct" and not existing
    else:
        assert report.status == "wrong" and existing
        assert report.shortest_wrong is not None
        assert report.shortest_wrong.word == ("(", "(")  # depth 2 = D: no further open
        assert report.shortest_wrong.position == 1
        assert report.shortest_wrong.got == ("(", ")")


def test_a_generator_head_the_enclosure_cannot_bound_is_refused_by_name() -> None:
    from netproof.constructions.chiang2022 import parity_transformer

    with pytest.raises(EnclosureError, match="not NextSymbols"):
        check_next_sets(parity_transformer(), reference, max_n=1)


@pytest.mark.parametrize("depth", [D, D + 1])
def test_the_enclosure_decides_every_position_as_the_interval_interpreter_does(depth: int) -> None:
    net = dyck_generator(k=K, depth=depth)

    def interpreter(word: Word) -> list[set[str]]:  # every word, in the domain or not
        trace = interval.run(net, word)
        return [set(trace.next_symbols[1 + p]) for p in range(len(word))]

    report = check_next_sets(net, interpreter, max_n=N - 1, reference_name="interval")
    assert report.status == "correct" and report.totals.undecided == 0
    assert report.totals.positions == sum(m * 3**m for m in range(1, N))
