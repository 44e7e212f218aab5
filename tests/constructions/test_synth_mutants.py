"""Soundness of the synthesized networks (constructions/rasp/synth.py) against netproof's checker:
for every spec of ``synth_specs.SPECS``, single-weight mutants of its compiled network that change
the accepted language within a small bound are refuted by the exhaustive proof of ``network =
program`` with a word on which the exact interpreter shows the change (mutants that keep the
language are counted, not asserted); and pairs of slightly different specs yield networks with
different fingerprints and different languages, each one's proof refuting the other's network.

Nothing here hard-codes a program's size or a fingerprint: the programs may change (a B-RASP
optimizer), the properties may not. The small LTL specs run in the default run (a sample of
mutants each); the DFA-route specs, and every mutant of every spec, are ``slow``."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from fractions import Fraction

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions.rasp.claims import program_construction
from netproof.constructions.rasp.modules import as_language
from netproof.constructions.rasp.synth import Spec, Synthesis, ltl_spec, regex_spec, synthesize
from netproof.constructions.rasp.synth_specs import SPECS, SynthSpec
from netproof.symbolic import Network, fingerprint
from netproof.symbolic.exact import run
from netproof.verifier.claims import Construction, Proved, Refuted
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

BOUND = 4
"""Words up to this length decide whether a mutant changes the language and bound the proof."""

LIGHT = {s.name for s in SPECS if s.spec.kind == "ltl"}
"""Specs whose programs are a few dozen operations (the LTL route): their sampled mutants run by
default, at bound 3."""


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def _construction(name: str, syn: Synthesis) -> Construction:
    lang = as_language(syn.program, syn.reference)
    return program_construction(name, syn.program, lang, max_len=BOUND)


def _verdict(c: Construction, candidate: Network, bound: int = BOUND) -> object:
    """The exhaustive verdict of ``c``'s ``network = program`` with ``candidate`` as the network."""
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
    return prove_claim(job, claim, method="exhaustive", max_len=bound, timeout=120).verdict


def _mutants(net: Network, seed: int) -> Iterator[tuple[tuple[object, ...], Network]]:
    """Every weight moved by +1 or -1 (the sign drawn), in a shuffled order."""
    rng = random.Random(seed)
    sites = list(weight_sites(net))
    for path in rng.sample(sites, len(sites)):
        yield path, with_weight(net, path, Fraction(rng.choice((-1, 1))))


def _check_mutants(s: SynthSpec, changing_wanted: int | None, bound: int) -> tuple[int, int]:
    """Mutants of ``s``'s network: every one that changes an accept bit up to ``bound`` is
    refuted with a word the interpreter confirms, until ``changing_wanted`` of them were (None:
    all). Returns (refuted, unchanged)."""
    syn = synthesize(s.spec, f"synth-{s.name}")
    c = _construction(f"synth-{s.name}", syn)
    net = c.network({})
    assert isinstance(net, Network)
    assert isinstance(_verdict(c, net, bound), Proved)
    words = _words(s.spec.alphabet, bound)
    truth = {w: B.accepts(syn.program, w) for w in words}
    refuted = unchanged = 0
    for path, mutant in _mutants(net, seed=37):
        if all(run(mutant, w).accepted == truth[w] for w in words):
            unchanged += 1
            continue
        v = _verdict(c, mutant, bound)
        assert isinstance(v, Refuted), (s.name, path, v)
        assert v.word is not None and len(v.word) <= bound
        assert run(mutant, v.word).accepted != B.accepts(syn.program, v.word), (s.name, path)
        refuted += 1
        if refuted == changing_wanted:
            break
    return refuted, unchanged


def _cost_marked(s: SynthSpec) -> object:
    return s if s.name in LIGHT else pytest.param(s, marks=pytest.mark.slow, id=s.name)


@pytest.mark.parametrize("s", [_cost_marked(s) for s in SPECS], ids=lambda s: s.name)
def test_sampled_single_weight_mutants_that_change_the_language_are_refuted_with_a_word_the_interpreter_confirms(
    s: SynthSpec,
) -> None:
    refuted, _unchanged = _check_mutants(
        s, changing_wanted=2, bound=3 if s.name in LIGHT else BOUND
    )
    assert refuted == 2


@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in SPECS if s.name in LIGHT], ids=lambda s: s.name)
def test_every_single_weight_mutant_that_changes_the_language_is_refuted_and_the_others_are_counted(
    s: SynthSpec,
) -> None:
    refuted, unchanged = _check_mutants(s, changing_wanted=None, bound=BOUND)
    print(
        f"{s.name}: {refuted} mutants change the language up to {BOUND} (all refuted), {unchanged} do not"
    )
    assert refuted > 0


AB, ABC, BR = ("a", "b"), ("a", "b", "c"), ("(", ")")


def _dyck(k: int) -> str:
    inner = ""
    for _ in range(k):
        inner = rf"(\({inner}\))*"
    return inner


PAIRS: list[object] = [
    (ltl_spec("H(a -> F b)", AB, empty=True), ltl_spec("H(a -> O b)", AB, empty=True)),
    (ltl_spec("a S b", ABC), ltl_spec("a S c", ABC)),
    (ltl_spec("H(b -> !O c)", ABC, empty=True), ltl_spec("H(b -> !Y c)", ABC, empty=True)),
    (ltl_spec("b & Y a", AB), ltl_spec("a & Y b", AB)),
    (ltl_spec("Y a", AB), ltl_spec("Y b", AB)),
    (ltl_spec("(a S b) S c", ABC), ltl_spec("(a S b) U c", ABC)),
    (ltl_spec("H(c -> O a)", ABC, empty=True), ltl_spec("H(c -> F a)", ABC, empty=True)),
    (regex_spec("(a|b)*ab(a|b)*", AB), regex_spec("(a|b)*ba(a|b)*", AB)),
    pytest.param((regex_spec(_dyck(1), BR), regex_spec(_dyck(2), BR)), marks=pytest.mark.slow),
    pytest.param((regex_spec(_dyck(2), BR), regex_spec(_dyck(3), BR)), marks=pytest.mark.slow),
]


def _pair_id(p: object) -> str:
    one, two = p  # type: ignore[misc]
    return f"{one.text} vs {two.text}"


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_two_slightly_different_specs_yield_different_networks_each_refuted_by_the_other_s_proof(
    pair: tuple[Spec, Spec],
) -> None:
    syns = [synthesize(s, f"spec-{i}") for i, s in enumerate(pair)]
    cs = [_construction(f"spec-{i}", y) for i, y in enumerate(syns)]
    nets = [c.network({}) for c in cs]
    assert all(isinstance(n, Network) for n in nets)
    assert fingerprint(nets[0]) != fingerprint(nets[1])
    words = _words(pair[0].alphabet, BOUND)
    assert any(B.accepts(syns[0].program, w) != B.accepts(syns[1].program, w) for w in words)
    for mine, other in ((0, 1), (1, 0)):
        assert isinstance(_verdict(cs[mine], nets[mine]), Proved)
        v = _verdict(cs[mine], nets[other])  # type: ignore[arg-type]
        assert isinstance(v, Refuted), (pair[mine].text, v)
        assert v.word is not None
        assert run(nets[other], v.word).accepted != B.accepts(syns[mine].program, v.word)
