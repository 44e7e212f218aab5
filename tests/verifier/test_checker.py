"""The checkers: each claim kind is proved where it holds and refuted, with the shortest
counterexample and the values that show it, where it does not. Every refutation is re-checked
here independently of the checker (by running the interpreter, or by evaluating the block by
hand), so a checker that invents counterexamples fails too."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from typing import Any

import pytest
import sympy
from jobs import job_for

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import (
    doubled,
    first_flawed,
    first_transformer,
    parity_transformer,
)
from netproof.symbolic import FFN, Activation, Affine, Network
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.interval import run as run_interval
from netproof.verifier.claims import (
    BlockIdentity,
    Identity,
    Language,
    MirrorInvariant,
    Output,
    Proved,
    Recognizes,
    Refuted,
    Unknown,
    ValueIs,
)
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.exhaustive.checker import Job, check, count_words, words


def registry_job(name: str, **given: str) -> tuple[Job, dict[str, Any]]:
    c = REGISTRY[name]
    values = c.parse_params(given)
    return Job(c, values), {cl.id: cl for cl in c.claims(values)}


def recognizes(lang: Language, max_len: int) -> Recognizes:
    return Recognizes(
        id="rec", statement="recognizes", reference="test", language=lang, max_len=max_len
    )


# --------------------------------------------------------------------------- words


def test_words_come_in_shortlex_order_without_repeats() -> None:
    got = list(words(("0", "1"), 0, 3))
    assert got[:7] == [(), ("0",), ("1",), ("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]
    assert got == sorted(got, key=lambda w: (len(w), [("0", "1").index(s) for s in w]))
    assert len(set(got)) == len(got) == 15


@pytest.mark.parametrize(
    ("alphabet", "lo", "hi"),
    [
        (("0", "1"), 0, 6),
        (("0", "1"), 2, 4),
        (("a", "b", "c"), 0, 4),
        (("x",), 0, 5),
        (("0", "1"), 3, 2),
    ],
)
def test_count_words_matches_the_number_of_words_enumerated(
    alphabet: tuple[str, ...], lo: int, hi: int
) -> None:
    listed = list(words(alphabet, lo, hi))
    assert count_words(alphabet, lo, hi) == len(listed)
    assert all(lo <= len(w) <= hi for w in listed)
    assert set(listed) == {
        w for n in range(lo, hi + 1) for w in itertools.product(alphabet, repeat=n)
    }


# --------------------------------------------------------------------------- Recognizes


def test_a_network_checked_against_the_wrong_language_is_refuted_on_the_shortest_counterexample() -> (
    None
):
    net = first_transformer()
    verdict = check(job_for(net, PARITY), recognizes(PARITY, 5))
    assert isinstance(verdict, Refuted)
    # Independently: the first word in shortlex order where FIRST's net disagrees with PARITY.
    first_wrong = next(
        w for w in words(("0", "1"), 0, 5) if run_exact(net, w).accepted != PARITY.contains(w)
    )
    assert verdict.word == first_wrong == ("0", "1")
    assert verdict.values == {
        "logit": str(run_exact(net, "01").output),
        "accepted": "False",
        "member": "True",
    }


def test_recognizes_is_proved_with_one_check_per_word_in_the_bound() -> None:
    verdict = check(job_for(parity_transformer(), PARITY), recognizes(PARITY, 6))
    assert isinstance(verdict, Proved)
    assert verdict.checked == count_words(("0", "1"), 0, 6) == 127


# --------------------------------------------------------------------------- ValueIs / Bound


def test_the_papers_parity_closed_form_is_refuted_at_0_and_the_fixed_one_proved_up_to_5() -> None:
    _, paper = registry_job("parity", variant="paper")
    job, fixed = registry_job("parity")
    refuted = check(job, paper["C5-paper"], max_len=5)
    assert isinstance(refuted, Refuted)
    assert refuted.word == ("0",)
    E = sympy.Symbol("E", positive=True)
    network, claimed = (
        sympy.sympify(refuted.values[k], locals={"E": E}) for k in ("network", "claimed")
    )
    # n = 2, k = 0: the network's s is −(1/2)·tanh c; the paper's (2/n)·tanh c form says −tanh c.
    tanh = (E**2 - 1) / (E**2 + 1)
    assert sympy.cancel(network + tanh / 2) == 0
    assert sympy.cancel(claimed + tanh) == 0
    proved = check(job, fixed["C5"], max_len=5)
    assert isinstance(proved, Proved)
    assert proved.checked == count_words(("0", "1"), 0, 5)


def test_a_wrong_state_value_is_refuted_at_the_first_word_and_position_where_it_differs() -> None:
    job, claims = registry_job("parity")
    wrong = dataclasses.replace(claims["C3-fig1"], expected=lambda p: Fraction(int(p.i == 0), p.n))
    verdict = check(job, wrong, max_len=4)
    assert isinstance(verdict, Refuted)
    # I[i=k]/n vs I[i=0]/n first differ on w = '1' (k = 1): position 0 has 0, not 1/2.
    assert verdict.word == ("1",)
    assert (verdict.values["network"], verdict.values["claimed"]) == ("0", "1/2")


def test_a_bound_is_proved_where_it_holds_and_refuted_where_it_is_too_tight() -> None:
    job, claims = registry_job("first-logn")
    assert isinstance(check(job, claims["C11-bound"], max_len=5), Proved)
    tight = dataclasses.replace(claims["C11-bound"], upper=lambda p: Fraction(3, 10))
    verdict = check(job, tight, max_len=5)
    assert isinstance(verdict, Refuted)
    # |s| = n/(2n−1)·½ is largest at |w| = 1 (n = 2): 1/3 > 3/10.
    assert verdict.word == ("0",)
    assert verdict.values == {"value": "1/3", "upper": "3/10"}


def test_an_equality_the_interval_backend_cannot_decide_is_unknown() -> None:
    job, _ = registry_job("first")
    claim = ValueIs(
        id="third",
        statement="s",
        reference="test",
        quantity=Output(),
        backend="interval",
        expected=lambda p: (
            Fraction(0)
            if p.n == 1
            else Fraction(2, 2 + p.n - 1) * (Fraction(int(p.word[0] == "1")) - Fraction(1, 2))
        ),
        max_len=3,
    )
    verdict = check(job, claim)
    assert isinstance(verdict, Unknown)
    assert "cannot prove equality" in verdict.reason


def test_a_claim_whose_bound_contains_no_word_is_not_reported_proved() -> None:
    job, claims = registry_job("first-logn")
    verdict = check(job, claims["C11"], max_len=0)
    assert not isinstance(verdict, Proved), verdict


# --------------------------------------------------------------------------- SignForAllBases (z3)


@pytest.mark.z3
def test_flawed_first_is_right_for_every_base_above_n_minus_1_and_wrong_at_or_below_it_up_to_5() -> (
    None
):
    job, claims = registry_job("first-flawed")
    verdict = check(job, claims["C10"], max_len=5)
    assert isinstance(verdict, Proved)
    # every word of length 0..5, plus one witness per length 2..5 (at |w| = 1 the threshold is
    # E > 1, i.e. every c > 0, and there is nothing below it to witness)
    assert verdict.checked == count_words(("0", "1"), 0, 5) + 4


@pytest.mark.z3
def test_lowering_the_flawed_first_threshold_to_n_minus_2_is_refuted_with_a_base_that_misclassifies() -> (
    None
):
    job, claims = registry_job("first-flawed")
    lowered = dataclasses.replace(
        claims["C10"], threshold=lambda m: Fraction(max(m - 1, 1)), threshold_text="max(|w| − 1, 1)"
    )
    verdict = check(job, lowered, max_len=5)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("1", "0")
    E = Fraction(verdict.values["E"])
    assert 1 < E <= 2, "the counterexample base must lie in (threshold, n − 1] = (1, 2]"
    # Independently: the flawed net with c = ln(E) really rejects '10', which is in FIRST.
    trace = run_exact(first_flawed(f"ln({E})"), "10")
    assert trace.accepted is False
    assert trace.output == (E - 2) / (2 * (E + 2))


@pytest.mark.z3
def test_a_tightness_witness_that_is_classified_right_below_the_threshold_is_refuted() -> None:
    job, claims = registry_job("first-flawed")
    # 1^m is in FIRST and gets s > 0 for every E > 1, so it cannot witness the threshold.
    bad_witness = dataclasses.replace(claims["C10"], witness=lambda m: ("1",) * m)
    verdict = check(job, bad_witness, max_len=3)
    assert isinstance(verdict, Refuted)
    assert "tightness fails" in verdict.detail
    assert verdict.word is not None and set(verdict.word) == {"1"}
    E = Fraction(verdict.values["E"])
    assert run_exact(first_flawed(f"ln({E})"), verdict.word).accepted is True


# --------------------------------------------------------------------------- BlockIdentity (z3)


def _mutate_fig1(net: Network, step: int, row: int, col: int, value: Fraction) -> Network:
    index = next(i for i, sub in enumerate(net.layers) if sub.name == "fig1")
    sub = net.layers[index]
    block = sub.block
    assert isinstance(block, FFN)
    affine = block.steps[step]
    assert isinstance(affine, Affine)
    weights = tuple(
        tuple(value if (r, c) == (row, col) else w for c, w in enumerate(ws))
        for r, ws in enumerate(affine.weights)
    )
    steps = (
        *block.steps[:step],
        dataclasses.replace(affine, weights=weights),
        *block.steps[step + 1 :],
    )
    new_sub = dataclasses.replace(sub, block=dataclasses.replace(block, steps=steps))
    return dataclasses.replace(net, layers=(*net.layers[:index], new_sub, *net.layers[index + 1 :]))


def _eval_block(block: FFN, x: dict[str, Fraction]) -> dict[str, Fraction]:
    for step in block.steps:
        if isinstance(step, Affine):
            x = {
                o: b + sum((w * x[i] for i, w in zip(step.inputs, ws, strict=True)), Fraction(0))
                for o, ws, b in zip(step.outputs, step.weights, step.bias, strict=True)
            }
        else:
            assert isinstance(step, Activation) and step.kind == "relu"
            x = {k: max(v, Fraction(0)) for k, v in x.items()}
    return x


@pytest.mark.z3
def test_fig1_is_proved_for_all_integers_and_a_mutated_fig1_block_is_refuted_at_values_that_break_it() -> (
    None
):
    job, claims = registry_job("parity")
    c2 = claims["C2"]
    assert isinstance(c2, BlockIdentity)
    proved = check(job, c2)
    assert isinstance(proved, Proved)
    assert "unbounded" in proved.detail

    mutant = _mutate_fig1(parity_transformer(), step=2, row=0, col=1, value=Fraction(-3, 2))
    verdict = check(job_for(mutant), c2)
    assert isinstance(verdict, Refuted)
    i, k = int(verdict.values["i"]), int(verdict.values["k"])
    block = next(s.block for s in mutant.layers if s.name == "fig1")
    assert isinstance(block, FFN)
    out = _eval_block(block, {"i/n": Fraction(i), "k/n": Fraction(k), "1/n": Fraction(1)})
    assert out["I[i=k]/n"] != (1 if i == k else 0)


# --------------------------------------------------------------------------- Identity (sympy)


def test_the_cross_entropy_identity_is_proved_and_the_papers_log_sigma_version_refuted_at_eta_one_tenth() -> (
    None
):
    _, fixed = registry_job("parity-ce")
    _, paper = registry_job("parity-ce", variant="paper")
    assert isinstance(fixed["C9"], Identity)
    proved = check(Job(REGISTRY["parity-ce"], {}), fixed["C9"])
    assert isinstance(proved, Proved)
    refuted = check(Job(REGISTRY["parity-ce"], {}), paper["C9-paper"])
    assert isinstance(refuted, Refuted)
    # log σ(c√(d/2)) with c = −ln(e^η − 1)/√(d/2) is log e^{−η} = −η: −1/10, not η = 1/10.
    assert Fraction(refuted.values["eta"]) == Fraction(1, 10)
    assert Fraction(refuted.values["lhs"]) == Fraction(-1, 10)
    assert Fraction(refuted.values["rhs"]) == Fraction(1, 10)


def test_a_matrix_identity_is_proved_entry_by_entry_and_refuted_at_the_first_entry_its_sample_separates() -> (
    None
):
    a, b, c = sympy.symbols("a b c", real=True)
    job = Job(REGISTRY["parity-ce"], {})
    lhs = sympy.Matrix([[a + b, a * b], [sympy.exp(a + c), 0]])
    true = Identity(
        id="m",
        statement="m",
        reference="r",
        lhs=lhs,
        rhs=sympy.Matrix([[b + a, b * a], [sympy.exp(a) * sympy.exp(c), 0]]),
    )
    assert check(job, true) == Proved(
        "sympy (simplify)", 4, "identity holds symbolically (4 entries)"
    )
    false = Identity(
        id="m",
        statement="m",
        reference="r",
        lhs=lhs,
        rhs=sympy.Matrix([[a + b, a + b], [sympy.exp(a + c), 0]]),
        sample={"a": Fraction(2), "b": Fraction(3), "c": Fraction(1)},
    )
    refuted = check(job, false)
    assert isinstance(refuted, Refuted)
    # Entry [0, 1] reads a and b only: c is not listed among the values of the counterexample.
    assert (
        refuted.detail == "entry [0, 1] at a=2, b=3: left side = 6.0000000, right side = 5.0000000"
    )
    assert refuted.values["entry"] == "entry [0, 1]"


# --------------------------------------------------------------------------- MirrorInvariant

MIRROR = MirrorInvariant(id="mirror", statement="[u; −u]", reference="§3.1", max_len=3)


def _mirror_sums(net: Network, word: str) -> list[Any]:
    """d + (−d) for every pair, state after the input and position: all 0 iff states are [u; −u]."""
    trace = run_interval(net, word)
    pairs = [d for d in net.dims if not d.startswith("−")]
    return [
        trace.value(s.label, t, d) + trace.value(s.label, t, "−" + d)
        for s in trace.states[1:]
        for t in range(trace.n)
        for d in pairs
    ]


def _is_zero(x: Any) -> bool:
    return bool(x.a <= 0 <= x.b)


def test_the_mirror_invariant_of_parity_ln_is_proved_structurally_and_holds_on_evaluated_words() -> (
    None
):
    job, claims = registry_job("parity-ln")
    verdict = check(job, claims["C7-mirror"])
    assert isinstance(verdict, Proved)
    assert verdict.method == "structural (IR)"
    net = job.network()
    for w in ("", "0", "1", "01", "110"):
        assert all(_is_zero(x) for x in _mirror_sums(net, w)), w


def test_the_papers_x_0_doubling_is_refuted_on_the_empty_word() -> None:
    job, claims = registry_job("parity-ln", variant="paper")
    verdict = check(job, claims["C7-mirror-paper"])
    assert isinstance(verdict, Refuted)
    assert verdict.word == ()
    assert not all(_is_zero(x) for x in _mirror_sums(job.network(), ""))


def _with_extra_positional_on_a_mirror_dim(net: Network) -> Network:
    emb = net.embedding
    extra = (("−I[w=0]", "i/n", Fraction(1)),)
    return dataclasses.replace(
        net, embedding=dataclasses.replace(emb, positional=emb.positional + extra)
    )  # type: ignore[arg-type]


def _writing_only_the_mirror_of_a_dim(net: Network) -> Network:
    index = next(i for i, sub in enumerate(net.layers) if sub.name == "fig1")
    sub = net.layers[index]
    block = sub.block
    assert isinstance(block, FFN)
    last = block.steps[-1]
    assert isinstance(last, Affine) and last.outputs == ("I[i=k]/n", "−I[i=k]/n")
    only_mirror = dataclasses.replace(
        last, outputs=last.outputs[1:], weights=last.weights[1:], bias=last.bias[1:]
    )
    new_block = dataclasses.replace(block, steps=(*block.steps[:-1], only_mirror))
    return dataclasses.replace(
        net,
        layers=(
            *net.layers[:index],
            dataclasses.replace(sub, block=new_block),
            *net.layers[index + 1 :],
        ),
    )


@pytest.mark.parametrize(
    "break_mirror",
    [
        pytest.param(
            _with_extra_positional_on_a_mirror_dim, id="positional-feature-on-the-mirror-dim-only"
        ),
        pytest.param(_writing_only_the_mirror_of_a_dim, id="map-writes-the-mirror-dim-only"),
    ],
)
def test_a_doubled_network_that_breaks_the_mirror_is_never_proved(break_mirror: Any) -> None:
    net = break_mirror(doubled(parity_transformer(), eps=0))
    # The evaluation shows states that are not [u; −u] ...
    assert not all(_is_zero(x) for w in ("", "0", "1") for x in _mirror_sums(net, w))
    # ... so the checker must not prove the invariant.
    verdict = check(job_for(net), MIRROR)
    assert isinstance(verdict, Refuted), verdict
