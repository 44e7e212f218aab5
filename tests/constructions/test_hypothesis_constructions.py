"""Every construction of the registry, at its default parameters, under hypothesis.

- Every claim checked word by word holds on words drawn as ``netproof fuzz`` draws them
  (:func:`netproof.verifier.fuzzing.fuzz.plan`), replayed through :func:`netproof.verifier.exhaustive.checker.check_word`.
- Every recognizer accepts exactly its language on longer words (members, near-misses, uniform
  and long words), through the batched integers where the network allows it.
- Every network runs on drawn words, and the interpreters agree: exact = sympy where the values
  are rational, and the interval enclosures contain them with the same decisions.
- The generator's next-symbol sets equal :func:`netproof.verifier.claims.dyck.allowed_next` on prefixes of
  Dyck words (G1) and on whole strings (G2); the gates compute their Boolean functions.

The exhaustive proofs cover short words; these tests go further at bounded cost (small example
counts, moderate lengths).
"""

from __future__ import annotations

import random
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpmath.libmp import to_rational

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import END
from netproof.symbolic import Classifier, FlatEmbedding, Network, NotRationalError, Seq2Seq
from netproof.symbolic.batched import accepts, supports
from netproof.symbolic.evaluation import Trace, UndecidedSignError, UndefinedValueError
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.interval import run as run_interval
from netproof.symbolic.seq2seq import run as run_seq2seq
from netproof.symbolic.sympy_interp import run as run_sympy
from netproof.verifier.claims import Claim, Recognizes, Refuted
from netproof.verifier.claims.dyck import DYCK, allowed_next
from netproof.verifier.exhaustive.checker import Job, check_word
from netproof.verifier.fuzzing.fuzz import fuzzable, plan
from netproof.verifier.fuzzing.strategies import dyck_prefixes, dyck_words, language_words, words

FEW = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@cache
def job(name: str) -> Job:
    c = REGISTRY[name]
    return Job(c, c.parse_params({}))


def claims(name: str) -> tuple[Claim, ...]:
    j = job(name)
    return j.construction.claims(j.values)


WORD_CLAIMS = [(name, cl.id) for name in REGISTRY for cl in claims(name) if fuzzable(cl) is None]
RECOGNIZERS = [
    (name, cl.id) for name in REGISTRY for cl in claims(name) if isinstance(cl, Recognizes)
]
SLOW_BACKENDS = {"sympy", "symbolic", "interval"}
ENCODER_DECODERS = frozenset(
    {"tm-sim", "prop43-tight"}
)  # Seq2Seq: a decoder run per word, many steps


def claim_of(name: str, claim_id: str) -> Claim:
    return next(cl for cl in claims(name) if cl.id == claim_id)


def test_every_construction_has_hypothesis_tests_here() -> None:
    tested = (
        {name for name, _ in WORD_CLAIMS} | {"gates", "dyck-gen"} | RECURRENT
    )  # gates: Boolean tables below
    assert tested == set(REGISTRY), f"no hypothesis test for {sorted(set(REGISTRY) - tested)}"


# --------------------------------------------------------------------------- every word claim


@pytest.mark.parametrize(("name", "claim_id"), WORD_CLAIMS)
@FEW
@given(data=st.data())
def test_every_word_claim_holds_on_the_words_the_fuzzer_draws(
    name: str, claim_id: str, data: st.DataObject
) -> None:
    claim = claim_of(name, claim_id)
    slow = (
        getattr(claim, "backend", "exact") in SLOW_BACKENDS
        or name.endswith(("-ln", "-ce", "-ln-logn"))
        or name in ENCODER_DECODERS
    )
    bound = max(claim.min_len, 6 if slow else 12)
    w = data.draw(plan(job(name), claim, max_len=bound).strategy)
    verdict = check_word(job(name), claim, w)
    assert not isinstance(verdict, Refuted), verdict


# --------------------------------------------------------------------------- recognizers on longer words


@pytest.mark.parametrize(("name", "claim_id"), RECOGNIZERS)
@FEW
@given(data=st.data())
def test_every_recognizer_accepts_exactly_its_language_on_longer_words(
    name: str, claim_id: str, data: st.DataObject
) -> None:
    claim = claim_of(name, claim_id)
    assert isinstance(claim, Recognizes)
    j = job(name)
    net = j.network(0)
    batched = claim.backend == "exact" and not j.construction.per_length and supports(net) is None
    bound = 120 if batched else (10 if claim.backend == "interval" else 30)
    w = data.draw(language_words(claim.language, min_len=claim.min_len, max_len=bound))
    if batched:
        assert accepts(net, [w]) == [claim.language.contains(w)]
    else:
        assert check_word(j, claim, w) is None


# --------------------------------------------------------------------------- interpreters agree


def _endpoints(x: Any) -> tuple[Fraction, Fraction]:
    lo, hi = x._mpi_  # the raw binary endpoints, read without rounding
    return Fraction(*to_rational(lo)), Fraction(*to_rational(hi))


def _encloses(x: Any, value: Fraction) -> bool:
    lo, hi = _endpoints(x)
    return lo <= value <= hi


def _word_strategy(j: Job) -> st.SearchStrategy[tuple[str, ...]]:
    net = j.network(4)
    if isinstance(net, Seq2Seq):
        return words(net.alphabet, max_len=2)
    if (
        isinstance(net.embedding, FlatEmbedding) and not j.construction.per_length
    ):  # one length (the gates)
        n = net.embedding.length
        return words(net.alphabet, min_len=n, max_len=n)
    return words(net.alphabet, max_len=5)


def _run(run: Any, net: Network, w: tuple[str, ...]) -> Trace[Any] | str:
    """The trace, or why there is none: "undefined" (0/0, the same for every backend),
    "irrational" (exact) or "undecided" (an interval straddles 0 where a decision is needed)."""
    try:
        return run(net, w)  # type: ignore[no-any-return]
    except UndefinedValueError:
        return "undefined"
    except NotRationalError:
        return "irrational"
    except UndecidedSignError:
        return "undecided"


RECURRENT = frozenset({"stack-rnn", "baby-ntm", "stack-lstm"})
"""Recurrent networks: their exact and interval runs are compared below."""


@pytest.mark.parametrize("name", [name for name in REGISTRY if name not in RECURRENT])
@FEW
@given(data=st.data())
def test_every_network_runs_and_its_interpreters_agree(name: str, data: st.DataObject) -> None:
    # Exact where the values are rational, checked against sympy (equal) and the intervals
    # (enclosing, same decisions); elsewhere the intervals alone must run (an interval that
    # cannot see an exact 0/0 may stop undecided where exact says undefined).
    j = job(name)
    w = data.draw(_word_strategy(j))
    net = j.network(len(w))
    if isinstance(net, Seq2Seq):  # exact and sympy share the decoder loop; their values must agree
        ex, sy = run_seq2seq(net, w), run_seq2seq(net, w, backend="sympy")
        assert (ex.halted_at, len(ex.steps)) == (sy.halted_at, len(sy.steps))
        for t in range(len(ex.steps)):
            assert {
                d: sympy.Rational(v.numerator, v.denominator) for d, v in ex.y(t).items()
            } == sy.y(t)
        return
    exact = _run(run_exact, net, w)
    ivl = _run(run_interval, net, w)
    if exact == "undefined":
        assert ivl in ("undefined", "undecided")
        return
    if isinstance(exact, str):
        assert exact == "irrational", exact
        if ivl == "undecided":  # only where the network is undefined (ε after Prop. 2's layer norm)
            assert _run(run_sympy, net, w) == "undefined"
        else:
            assert not isinstance(ivl, str), ivl
        return
    sym = run_sympy(net, w)
    if exact.output is None:
        assert sym.output is None
    else:
        assert sympy.sympify(sym.output) == sympy.Rational(
            exact.output.numerator, exact.output.denominator
        )
    assert (sym.accepted, sym.next_symbols) == (exact.accepted, exact.next_symbols)
    assert not isinstance(ivl, str), ivl
    assert ivl.next_symbols == exact.next_symbols
    if isinstance(net.readout, Classifier):
        assert _encloses(ivl.output, exact.output)
        assert ivl.accepted in (exact.accepted, None)


# --------------------------------------------------------------------------- the generator and the gates


@FEW
@given(dyck_prefixes(2, 2, max_len=16))
def test_the_generators_next_symbol_sets_are_the_allowed_ones_after_every_prefix(
    prefix: tuple[str, ...],
) -> None:
    # dyck-gen at its defaults: k = 2, D = 2, reading G1, hard layer 2; position t reads γ + prefix[:t]
    net = job("dyck-gen").network()
    trace = run_interval(net, prefix)
    for t in range(len(prefix) + 1):
        allowed, end = allowed_next(prefix[:t], 2, 2)
        assert set(trace.next_symbols[t]) == {*allowed, *([END] if end else [])}, (prefix, t)


@FEW
@given(dyck_words(2, 2, max_len=12))
def test_the_length_aware_generator_allows_what_dyck_allows_at_every_position_of_a_whole_string(
    u: tuple[str, ...],
) -> None:
    c = REGISTRY["dyck-gen"]
    net = c.network(c.parse_params({"reading": "G2"}))
    w = (*u, END)
    trace = run_interval(net, w)
    assert DYCK(2, 2).contains(u)
    for t in range(len(w)):
        allowed, end = allowed_next(w[:t], 2, 2, n=trace.n)
        assert set(trace.next_symbols[t]) == {*allowed, *([END] if end else [])}, (w, t)


@FEW
@given(words(("0", "1"), min_len=4, max_len=4))
def test_the_gates_compute_their_boolean_functions_on_every_drawn_input(w: tuple[str, ...]) -> None:
    a = [int(s) for s in w]
    trace = run_exact(job("gates").network(), w)
    expected = {
        ("and", "AND(a1,a2,a3)"): a[0] & a[1] & a[2],
        ("or", "OR(a1,a2,a3)"): a[0] | a[1] | a[2],
        ("not", "NOT(a1)"): 1 - a[0],
        ("xnor", "XNOR(a1,a2)"): int(a[0] == a[1]),
        ("same", "SAME(a1a2,a3a4)"): int(a[:2] == a[2:]),
        ("gt", "GT(x,y)"): 0,  # x = y = 0 on a word
        ("eq", "EQ(x,y)"): 1,
    }
    got = {key: trace.value(key[0], 0, key[1]) for key in expected}
    assert got == {key: Fraction(v) for key, v in expected.items()}


# --------------------------------------------------------------------------- recurrent networks


def _recurrent_words(name: str) -> st.SearchStrategy[tuple[str, ...]]:
    """Near-members of the task at lengths beyond the exhaustive bounds: members with up to two
    symbols changed, and uniform strings."""
    from netproof.constructions.marnn_tasks import sample_palindrome, sample_pcfg_dyck

    alphabet = job(name).network().alphabet

    @st.composite
    def near_member(draw: st.DrawFn) -> tuple[str, ...]:
        rng = random.Random(draw(st.integers(0, 2**32)))
        if "(" in alphabet:
            w = None
            while w is None or len(w) < 2:
                w = sample_pcfg_dyck(rng, len(alphabet) // 2, max_len=30)
        else:
            w = sample_palindrome(rng, hom="x" in alphabet, min_len=3, max_len=25)
        out = list(w)
        for _ in range(draw(st.integers(0, 2))):
            out[draw(st.integers(0, len(out) - 1))] = draw(st.sampled_from(alphabet))
        return tuple(out)

    return st.one_of(near_member(), words(alphabet, min_len=1, max_len=20))


@pytest.mark.parametrize("name", sorted(RECURRENT))
@FEW
@given(data=st.data())
def test_every_recurrent_network_predicts_the_task_targets_on_longer_near_members(
    name: str, data: st.DataObject
) -> None:
    from netproof.symbolic.recurrent import run as run_recurrent
    from netproof.verifier.claims import PredictsNext

    w = data.draw(_recurrent_words(name))
    task = next(cl for cl in claims(name) if isinstance(cl, PredictsNext)).task
    trace = run_recurrent(job(name).network(), w)
    assert trace.predictions == task.next_sets(w)
    assert task.accepts(w, trace.predictions) == task.contains(w)


@pytest.mark.parametrize("name", sorted(RECURRENT))
@FEW
@given(data=st.data())
def test_every_recurrent_network_has_interval_enclosures_of_its_exact_run(
    name: str, data: st.DataObject
) -> None:
    from netproof.symbolic.recurrent import run as run_recurrent

    net = job(name).network()
    w = data.draw(words(net.alphabet, min_len=1, max_len=8))
    exact, ivl = run_recurrent(net, w), run_recurrent(net, w, "interval")
    assert exact.predictions == ivl.predictions
    for e, i in zip(exact.steps, ivl.steps, strict=True):
        for d, v in e.h.items():
            assert i.h[d].a <= v <= i.h[d].b, (w, e.t, d)
        assert len(e.memory) <= len(i.memory)
