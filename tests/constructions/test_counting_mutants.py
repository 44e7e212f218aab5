"""Soundness of the counting-synthesized networks (``synth --counting``,
constructions/rasp/from_counting.py) against netproof's checkers: for every spec of
``counting_specs.SPECS``, single-weight mutants of its compiled C-RASP network that change the
accepted words within a small bound are refuted by the exhaustive proof of ``network = program``
with a word on which the exact interpreter shows the change, and the mutants that change nothing
within the bound are shown equal by that exhaustive check (every word) and proved by it; the
every-length (smt) proof never proves a mutant that differs from the program on a word up to
length 9; and a spec and a slightly different spec never yield the same proved network.

Nothing here hard-codes a program's size or a fingerprint. Three small specs run in the default
run (a sample of mutants each, two pairs, one pair that differs only beyond the bound); every
mutant of every spec, the smt sweep and the other pairs are ``slow``."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from fractions import Fraction

import pytest
from weight_mutants import get_at, weight_sites, with_weight

from netproof.constructions.rasp.claims import program_construction
from netproof.constructions.rasp.counting_specs import SPECS, CountingSpec
from netproof.constructions.rasp.from_counting import CountingSynthesis, synthesize_counting
from netproof.constructions.rasp.modules import as_language
from netproof.symbolic import Network, fingerprint
from netproof.symbolic.evaluation import UndefinedValueError
from netproof.symbolic.exact import run
from netproof.verifier.claims import Construction, Proved, Refuted, Unknown
from netproof.verifier.claims.rasp import crasp as C
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim

pytestmark = pytest.mark.z3

BOUND = 4
"""Words up to this length decide whether a mutant changes the function and bound the proof."""

LIGHT = {"majority", "ends-a-lead-two", "a-leads-every-prefix"}
"""Specs whose sampled mutants run by default."""

AB, ABC, BR = ("a", "b"), ("a", "b", "c"), ("(", ")")


def _words(alphabet: tuple[str, ...], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def _accepts(net: Network, word: tuple[str, ...]) -> bool | None:
    """The network's accept bit on ``word`` by the exact interpreter; None where a mutant makes
    its output undefined (a layer norm of a constant vector: the checker refutes that word)."""
    try:
        return run(net, word).accepted
    except UndefinedValueError:
        return None


def _synth(formula: str, alphabet: tuple[str, ...], name: str, empty: bool) -> CountingSynthesis:
    return synthesize_counting(formula, alphabet, name, empty=empty)


def _construction(syn: CountingSynthesis) -> Construction:
    lang = as_language(syn.program, syn.reference)
    return program_construction(syn.name, syn.program, lang, max_len=BOUND)


def _verdict(c: Construction, candidate: Network, method: str = "exhaustive") -> object:
    """The verdict of ``c``'s ``network = program`` with ``candidate`` as the network: the
    exhaustive check of every word up to BOUND, or (``smt``) the proof for every length."""
    claim = next(x for x in c.claims({}) if x.id == "network=program")
    job = Job(dataclasses.replace(c, build=lambda _v, m=candidate: m), {})
    return prove_claim(job, claim, method=method, max_len=BOUND, timeout=60).verdict


def _mutants(net: Network, seed: int, *, zeros: bool) -> Iterator[tuple[object, Network]]:
    """Every weight (every zero too with ``zeros``) moved by +1 or -1 (the sign drawn), in a
    shuffled order."""
    rng = random.Random(seed)
    sites = list(weight_sites(net, zeros=zeros))
    for path in rng.sample(sites, len(sites)):
        yield path, with_weight(net, path, Fraction(rng.choice((-1, 1))))


def _check_mutants(
    s: CountingSpec, *, changing: int | None, unchanged: int | None, zeros: bool
) -> tuple[int, int]:
    """Mutants of ``s``'s network, until ``changing`` of them changed an accept bit up to BOUND
    and ``unchanged`` did not (None: all of them). Each changing one is refuted with a word the
    interpreter confirms; each unchanged one agrees with the program on every word up to BOUND
    and the exhaustive proof proves it. Returns (refuted, unchanged)."""
    syn = _synth(s.formula, s.alphabet, f"counting-{s.name}", s.empty)
    c = _construction(syn)
    net = c.network({})
    assert isinstance(net, Network)
    assert isinstance(_verdict(c, net), Proved)
    truth = {w: C.accepts(syn.program, w) for w in _words(s.alphabet, BOUND)}
    refuted = same = 0
    for path, mutant in _mutants(net, seed=37, zeros=zeros):
        changes = any(_accepts(mutant, w) != want for w, want in truth.items())
        if changes and (changing is None or refuted < changing):
            v = _verdict(c, mutant)
            assert isinstance(v, Refuted), (s.name, path, v)
            assert v.word is not None and len(v.word) <= BOUND
            assert _accepts(mutant, v.word) != C.accepts(syn.program, v.word), (s.name, path)
            refuted += 1
        elif not changes and (unchanged is None or same < unchanged):
            assert isinstance(_verdict(c, mutant), Proved), (s.name, path)
            same += 1
        if refuted == changing and same == unchanged:
            break
    return refuted, same


def _cost_marked(s: CountingSpec) -> object:
    return s if s.name in LIGHT else pytest.param(s, marks=pytest.mark.slow, id=s.name)


@pytest.mark.parametrize("s", [_cost_marked(s) for s in SPECS], ids=lambda s: s.name)
def test_sampled_single_weight_mutants_that_change_the_function_are_refuted_with_a_word_the_interpreter_confirms(
    s: CountingSpec,
) -> None:
    refuted, same = _check_mutants(s, changing=2, unchanged=1, zeros=False)
    assert refuted == 2 and same <= 1


@pytest.mark.slow
@pytest.mark.parametrize("s", SPECS, ids=lambda s: s.name)
def test_every_single_weight_mutant_is_refuted_if_it_changes_the_function_and_proved_equal_if_not(
    s: CountingSpec,
) -> None:
    refuted, same = _check_mutants(s, changing=None, unchanged=None, zeros=True)
    print(
        f"{s.name}: {refuted} mutants change the function up to {BOUND} (all refuted), "
        f"{same} do not (all proved equal up to {BOUND})"
    )
    assert refuted > 0


@pytest.mark.slow
@pytest.mark.parametrize("s", [s for s in SPECS if s.name in LIGHT], ids=lambda s: s.name)
def test_the_every_length_proof_never_proves_a_mutant_that_differs_from_the_program_up_to_9(
    s: CountingSpec,
) -> None:
    syn = _synth(s.formula, s.alphabet, f"counting-{s.name}", s.empty)
    c = _construction(syn)
    net = c.network({})
    assert isinstance(net, Network) and isinstance(_verdict(c, net, "smt"), Proved)
    words = _words(s.alphabet, 9)
    truth = {w: C.accepts(syn.program, w) for w in words}
    proved = 0
    for path, mutant in _mutants(net, seed=41, zeros=False):
        v = _verdict(c, mutant, "smt")
        assert isinstance(v, (Proved, Refuted, Unknown)), (s.name, path, v)
        if isinstance(v, Proved):
            assert all(_accepts(mutant, w) == want for w, want in truth.items()), (s, path)
            proved += 1
        elif isinstance(v, Refuted):
            assert v.word is not None
            assert _accepts(mutant, v.word) != C.accepts(syn.program, v.word), (s.name, path)
    print(f"{s.name}: {proved} mutants proved equal for every length (each checked up to 9)")


def _variant(s: CountingSpec, formula: str, empty: bool | None = None) -> object:
    """``s`` against a slightly different formula over the same alphabet (``empty``: the empty
    word's membership, ``s``'s by default)."""
    other = (formula, s.alphabet, s.empty if empty is None else empty)
    pair = ((s.formula, s.alphabet, s.empty), other)
    return (
        pair
        if s.name in {"majority", "ends-a-lead-two"}
        else pytest.param(pair, marks=pytest.mark.slow)
    )


_SPEC = {s.name: s for s in SPECS}
PAIRS: list[object] = [
    _variant(_SPEC["majority"], "#(a) >= #(b)"),
    _variant(_SPEC["a-leads-every-prefix"], "#(#(a) < #(b)) == 0"),
    _variant(_SPEC["dyck1"], _SPEC["dyck1"].formula, empty=False),
    _variant(_SPEC["within-two"], "#(#(a) - #(b) > 1 | #(b) - #(a) > 2) == 0"),
    _variant(_SPEC["ambm"], "#(b & #(a) > 0) == 0 & #(a) == #(b)"),
    _variant(_SPEC["a-twice-b"], "#(a) - 2*#(c) == 0"),
    _variant(_SPEC["leads-more-often"], "#(#(a) > #(b)) >= #(#(b) > #(a))"),
    _variant(_SPEC["ends-a-lead-two"], "a & #(a) >= #(b) + 1"),
    _variant(_SPEC["c-when-even"], "#(c & #(a) != #(b)) <= 1"),
]


def _pair_id(p: object) -> str:
    (one, _a, e1), (two, _b, e2) = p  # type: ignore[misc]
    return f"{one}{' +ε' * e1} vs {two}{' +ε' * e2}"


Side = tuple[str, tuple[str, ...], bool]


@pytest.mark.parametrize("pair", PAIRS, ids=_pair_id)
def test_a_counting_spec_and_a_slightly_different_one_yield_different_networks_each_refuted_by_the_other_s_proof(
    pair: tuple[Side, Side],
) -> None:
    syns = [_synth(f, ab, f"spec-{i}", e) for i, (f, ab, e) in enumerate(pair)]
    cs = [_construction(y) for y in syns]
    nets = [c.network({}) for c in cs]
    assert all(isinstance(n, Network) for n in nets)
    assert fingerprint(nets[0]) != fingerprint(nets[1])
    words = _words(pair[0][1], BOUND)
    assert any(C.accepts(syns[0].program, w) != C.accepts(syns[1].program, w) for w in words)
    for mine, other in ((0, 1), (1, 0)):
        assert isinstance(_verdict(cs[mine], nets[mine]), Proved)
        v = _verdict(cs[mine], nets[other])  # type: ignore[arg-type]
        assert isinstance(v, Refuted), (pair[mine][0], v)
        assert v.word is not None
        assert run(nets[other], v.word).accepted != C.accepts(syns[mine].program, v.word)  # type: ignore[arg-type]


def test_two_specs_that_differ_only_beyond_the_bound_are_told_apart_by_the_every_length_proof() -> (
    None
):
    """``#(a) > #(b) + 4`` and ``+ 5`` agree on every word up to BOUND (both reject all), so the
    bounded proof accepts either network; the proof for every length proves the first spec's
    own network and neither spec's proof proves the other's network (refuted or unknown), and
    the interpreter shows where they part (the second spec's own every-length proof, the same
    proof with another constant, is not run here, for time)."""
    syns = [_synth(f"#(a) > #(b) + {k}", AB, f"spec-{k}", False) for k in (4, 5)]
    cs = [_construction(y) for y in syns]
    nets = [c.network({}) for c in cs]
    assert all(isinstance(n, Network) for n in nets)
    assert fingerprint(nets[0]) != fingerprint(nets[1])
    assert isinstance(_verdict(cs[0], nets[1]), Proved)  # the bound cannot tell them apart
    assert run(nets[1], ("a",) * 5).accepted != C.accepts(syns[0].program, ("a",) * 5)  # type: ignore[arg-type]
    assert isinstance(_verdict(cs[0], nets[0], "smt"), Proved)
    for mine, other in ((0, 1), (1, 0)):
        v = _verdict(cs[mine], nets[other], "smt")  # type: ignore[arg-type]
        assert not isinstance(v, Proved), v
        if isinstance(v, Refuted):
            assert v.word is not None
            assert run(nets[other], v.word).accepted != C.accepts(syns[mine].program, v.word)  # type: ignore[arg-type]


def test_a_mutant_moves_one_weight_by_one() -> None:
    """The mutation helper itself: one site changes, by exactly ±1, and nothing else."""
    net = _construction(_synth("#(a) > #(b)", AB, "m", False)).network({})
    assert isinstance(net, Network)
    sites = list(weight_sites(net, zeros=True))
    for path, mutant in itertools.islice(_mutants(net, seed=1, zeros=True), 5):
        moved = [p for p in sites if get_at(mutant, p) != get_at(net, p)]
        assert moved == [path]
        assert abs(get_at(mutant, path) - get_at(net, path)) == Fraction(1)
