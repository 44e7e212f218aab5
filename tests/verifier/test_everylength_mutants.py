"""The every-length provers against mutants that change what the network computes (issue 25).

Earlier mutation runs proved 81 Dyck mutants for every length, but 79 of them had residual
states identical to the original's on short words: dead mutations, which any prover may call
proved. Here every mutant is a single weight of PARITY, FIRST, Dyck(1,1) or Dyck(1,2) moved by
±1/2, kept only where it CHANGES a residual state (exact traces compared on every short word),
and checked with the smt method (``prove_claim(..., method="smt")``: the compositional proof
with the construction's lemmas, for every length where it succeeds, else the monolithic one per
length). Against a plain enumeration of the mutant with the exact interpreter up to the
exhaustive bound:

- a mutant whose recognised language changes within the bound is ``Refuted`` (its word
  reproduced by the exact interpreter: the shortlex-first wrong word) or ``Unknown``, never
  ``Proved``;
- any ``Refuted`` word is wrong when the exact interpreter runs it, any ``Proved`` mutant gets
  every word of the bound right;
- a proof for every length holds on 20 random longer words (exact interpreter);
- the same claim checked 10 times at once (threads, each with its own z3 contexts and its own
  decision-diagram process: "under load") gets the same verdict (and word) every time.

The default run takes a few mutants of PARITY, FIRST and Dyck(1,1) (spread over their
weights); ``-m slow`` takes every state-changing mutant of all four and prints the figures.
FIRST's one lemma (FFN 1) opens the compositional proof: its mutants are proved for every
length by position classes with word position 1 fixed, or refuted.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.symbolic import Network
from netproof.symbolic.errors import NetworkValidationError, NotRationalError
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import Construction, Proved, Recognizes, Refuted, Unknown, Verdict
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

Path = tuple[str | int, ...]
DELTAS = (Fraction(1, 2), Fraction(-1, 2))
RERUNS = 10
LONGER = 20  # random longer words each proof for every length is tried on
SAMPLE = {"parity": 5, "first": 3, "dyck11": 23}  # every k-th weight in the default run

# name, parameters, the length up to which states are compared, the exhaustive bound
NETWORKS = {
    "parity": ({}, 3, 6),
    "first": ({}, 3, 6),
    "dyck11": ({"k": "1", "depth": "1"}, 4, 6),
    "dyck12": ({"k": "1", "depth": "2"}, 4, 6),
}


@dataclass(frozen=True)
class Mutant:
    network: str
    path: Path
    delta: Fraction
    net: Network
    wrong: tuple[tuple[str, ...], ...]  # the words of the bound it gets wrong, shortlex order

    @property
    def label(self) -> str:
        return f"{self.network} {'.'.join(map(str, self.path))} {'+' if self.delta > 0 else ''}{self.delta}"


def _words(alphabet: tuple[str, ...], lo: int, hi: int) -> Iterator[tuple[str, ...]]:
    for m in range(lo, hi + 1):
        yield from itertools.product(alphabet, repeat=m)


def _setup(name: str) -> tuple[Construction, dict[str, Any], Network, Recognizes]:
    params, _short, _bound = NETWORKS[name]
    construction = REGISTRY["dyck" if name.startswith("dyck") else name]
    values = construction.parse_params(params)
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    return construction, values, construction.network(values), claim


def _states(net: Network, word: tuple[str, ...]) -> Any:
    trace = run_exact(net, word)
    return trace.states, trace.accepted


def state_changing_mutants(name: str, every: int = 1) -> tuple[int, list[Mutant]]:
    """The number of single-weight mutants of network ``name`` (of every ``every``-th weight),
    and those whose residual states differ from the original's on some word up to the short
    length (with the words of the exhaustive bound each gets wrong)."""
    _c, _values, net, claim = _setup(name)
    _params, short, bound = NETWORKS[name]
    shorts = list(_words(net.alphabet, max(1, claim.min_len), short))
    original = [_states(net, w) for w in shorts]
    total, found = 0, []
    for path in list(weight_sites(net))[::every]:
        for delta in DELTAS:
            try:
                mutant = with_weight(net, path, delta)
            except (NetworkValidationError, ValueError):
                continue
            total += 1
            try:
                if [_states(mutant, w) for w in shorts] == original:
                    continue  # a dead mutation on short words: not what this test is about
                wrong = tuple(
                    w
                    for w in _words(net.alphabet, claim.min_len, bound)
                    if run_exact(mutant, w).accepted != claim.language.contains(w)
                )
            except NotRationalError:
                continue  # a weight the exact interpreter cannot evaluate (an irrational softmax weight)
            found.append(Mutant(name, path, delta, mutant, wrong))
    return total, found


def _verdict(name: str, mutant: Mutant) -> Verdict:
    c, values, _net, claim = _setup(name)
    _params, _short, bound = NETWORKS[name]
    lemmas = c.lemmas(values) if c.lemmas is not None else ()
    wrapped = Construction(
        name=f"{c.name}-mutant",
        paper_id="mutant",
        title="mutant",
        reference="mutant",
        params=(),
        build=lambda _v: mutant.net,
        claims=lambda _v: (claim,),
        lemmas=(lambda _v: lemmas) if lemmas else None,
    )
    return prove_claim(Job(wrapped, {}), claim, method="smt", max_len=bound, timeout=120).verdict


def _shown(v: Verdict) -> tuple[str, Any]:
    return type(v).__name__, (v.word if isinstance(v, Refuted) else None)


def check_mutant(mutant: Mutant, reruns: int = RERUNS) -> Verdict:
    """The verdict on ``mutant``, checked ``reruns`` times at once; fails the test on an
    unsound or unstable answer."""
    _c, _values, _net, claim = _setup(mutant.network)
    with ThreadPoolExecutor(max_workers=reruns) as pool:
        verdicts = list(pool.map(lambda _i: _verdict(mutant.network, mutant), range(reruns)))
    shown = {_shown(v) for v in verdicts}
    assert len(shown) == 1, f"{mutant.label}: {reruns} runs at once gave {sorted(shown, key=str)}"
    v = verdicts[0]
    if isinstance(v, Refuted):
        assert v.word is not None
        assert run_exact(mutant.net, v.word).accepted != claim.language.contains(v.word), (
            mutant.label
        )
        if mutant.wrong:
            assert v.word == mutant.wrong[0], (
                f"{mutant.label}: {v.word} is not the shortlex-first wrong word {mutant.wrong[0]}"
            )
    elif isinstance(v, Proved):
        assert not mutant.wrong, f"{mutant.label}: proved, but it gets {mutant.wrong[0]} wrong"
        if "every longer one" in v.detail:  # a proof for every length: try longer words too
            bound = NETWORKS[mutant.network][2]
            rng = random.Random(mutant.label)
            for _ in range(LONGER):
                w = tuple(
                    rng.choice(mutant.net.alphabet)
                    for _ in range(rng.randint(bound + 1, bound + 10))
                )
                assert run_exact(mutant.net, w).accepted == claim.language.contains(w), (
                    f"{mutant.label}: proved for every length, but wrong on {w}"
                )
    else:
        assert isinstance(v, Unknown)
    return v


def _spread(items: list[Mutant], k: int) -> list[Mutant]:
    """k mutants spread over the list, function-changing ones first."""
    changing = [m for m in items if m.wrong] or items
    step = max(1, len(changing) // k)
    return changing[::step][:k]


@pytest.mark.parametrize("name", ["parity", "first", "dyck11"])
def test_a_few_state_changing_mutants_are_refuted_or_unknown_never_proved_and_the_same_on_concurrent_runs(
    name: str,
) -> None:
    _total, mutants = state_changing_mutants(name, every=SAMPLE[name])
    assert mutants, f"{name}: no single-weight mutant changes a state (the filter is broken)"
    assert any(m.wrong for m in mutants), (
        f"{name}: no mutant changes the language (the enumeration is broken)"
    )
    for mutant in _spread(mutants, 1 if name == "dyck11" else 2):
        check_mutant(
            mutant, reruns=4 if name == "dyck11" else RERUNS
        )  # -m slow: 10 for every Dyck mutant


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NETWORKS))
def test_every_state_changing_mutant_is_refuted_or_unknown_never_proved_and_the_same_on_ten_concurrent_runs(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    total, mutants = state_changing_mutants(name)
    counts = {"proved": 0, "refuted": 0, "unknown": 0}
    for mutant in mutants:
        v = check_mutant(mutant)
        counts[type(v).__name__.lower()] += 1
    with capsys.disabled():
        print(
            f"\n{name}: {total} mutants, {len(mutants)} change a state, {sum(bool(m.wrong) for m in mutants)} change the language "
            f"(bound {NETWORKS[name][2]}); refuted {counts['refuted']}, unknown {counts['unknown']}, proved {counts['proved']}"
        )
