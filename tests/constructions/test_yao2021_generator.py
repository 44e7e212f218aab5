"""Theorem 4.2's two-layer generator (Yao et al. 2021 §5.2, Appendix B; spec §3.4): next-symbol
sets against the Dyck(k, D) oracle, the exact values of its layers, the rational thresholds, the
soft variant, the paper's version and the errors users get."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import pytest
import sympy

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import (
    END,
    GeneratorConstants,
    bracket_sqrt_ratio,
    dyck_generator,
    theta,
    valid_prefixes,
)
from netproof.constructions.yao2021.claims import (
    _eq7,
    _gap_at_least,
    _gap_by_floors,
    _gaps,
    _scaled_floor,
)
from netproof.symbolic import NetworkValidationError, NextSymbols
from netproof.symbolic.evaluation import WordError
from netproof.symbolic.interval import run as run_interval
from netproof.symbolic.sympy_interp import run as run_sympy
from netproof.verifier import cli
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.claims.dyck import allowed_next, is_dyck
from netproof.verifier.exhaustive.checker import Job, check


def _want(prefix: tuple[str, ...], k: int, D: int, n: int | None) -> set[str]:
    allowed, end = allowed_next(prefix, k, D, n=n)
    return {*allowed, *([END] if end else [])}


@pytest.mark.parametrize(("k", "D"), [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)])
def test_g1_next_sets_equal_the_oracle_after_every_prefix_of_every_valid_string_up_to_inner_length_8(
    k: int, D: int
) -> None:
    net = dyck_generator(k=k, depth=D)
    prefixes = valid_prefixes(k, D, 8)
    for v in prefixes:
        trace = run_interval(net, v)
        assert set(trace.next_symbols[-1]) == _want(v, k, D, None), v
    assert len(prefixes) > 8


@pytest.mark.parametrize(("k", "D"), [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)])
def test_g2_next_sets_equal_the_length_aware_oracle_at_every_position_of_every_valid_string_up_to_inner_length_8(
    k: int, D: int
) -> None:
    net = dyck_generator(k=k, depth=D, reading="G2")
    strings = [v for v in valid_prefixes(k, D, 8) if is_dyck(v, k, D)]
    for u in strings:
        trace = run_interval(net, (*u, END))
        n = len(u) + 2
        for t in range(n - 1):
            assert set(trace.next_symbols[t]) == _want(u[:t], k, D, n), (u, t)


def test_three_bracket_types_work_at_inner_length_6_in_both_readings() -> None:
    for reading in ("G1", "G2"):
        net = dyck_generator(k=3, depth=2, reading=reading)
        for v in valid_prefixes(3, 2, 6):
            if reading == "G1":
                assert set(run_interval(net, v).next_symbols[-1]) == _want(v, 3, 2, None)
            elif is_dyck(v, 3, 2):
                trace = run_interval(net, (*v, END))
                for t in range(len(v) + 1):
                    assert set(trace.next_symbols[t]) == _want(v[:t], 3, 2, len(v) + 2)


def test_a_g2_prefix_run_with_a_declared_length_equals_that_position_of_the_whole_string() -> None:
    net = dyck_generator(k=2, depth=2, reading="G2")
    u = tuple("([])[]")
    whole = run_interval(net, (*u, END))
    for t in range(len(u) + 1):
        prefix = run_interval(net, u[:t], length=len(u) + 2)
        assert prefix.next_symbols[-1] == whole.next_symbols[t]


def test_layer_one_and_lemma_b1_are_exact_with_layer_norm_eps_0() -> None:
    D = 2
    trace = run_sympy(dyck_generator(k=2, depth=D), "([")
    # i = 3 after γ ( [: d = 1 + depth = 3, so (a1, a2) = (3/3, 1/3) and θ(3) = atan2(3, 1).
    assert trace.value("depth", 2, "a1") == 1
    assert trace.value("depth", 2, "a2") == sympy.Rational(1, 3)
    assert sympy.simplify(trace.value("angle", 2, "cθ") - 1 / sympy.sqrt(10)) == 0
    assert sympy.simplify(trace.value("angle", 2, "sθ") - 3 / sympy.sqrt(10)) == 0
    assert theta(3, D) == ((Fraction(1), Fraction(10)), (Fraction(3), Fraction(10)))


def test_the_layer_two_head_selects_the_stack_top_or_the_start_token() -> None:
    trace = run_interval(dyck_generator(k=2, depth=3), "([]")
    chosen = {s.position: s.selected for s in trace.selections if s.layer == "top"}
    # tokens: γ=0 (=1 ([=2 ]=3: after ] the top is the ( at token 1.
    assert chosen == {0: (0,), 1: (1,), 2: (2,), 3: (1,)}


def test_the_output_layer_is_a_softmax_with_a_rational_base_and_an_omega_row() -> None:
    net = dyck_generator(k=2, depth=2)
    assert isinstance(net.readout, NextSymbols)
    assert net.readout.softmax is not None and net.readout.softmax.r == 15
    assert net.readout.threshold == Fraction(1, 5)
    assert net.readout.end == END and (END, f"score:{END}") in net.readout.scores


def test_every_threshold_of_ffn_two_lies_between_the_exact_angle_values() -> None:
    for D in (1, 2, 3, 7, 20):
        c = GeneratorConstants(D)
        sin_lo, sin_hi = theta(D, D)[1], theta(D + 1, D)[1]
        assert _gap_at_least(sin_lo, (c.full_r, Fraction(1)), Fraction(0)) is True
        assert _gap_at_least((c.full_r + c.full_c, Fraction(1)), sin_hi, Fraction(0)) is True
        assert _gap_at_least(theta(2, D)[0], (c.end_r, Fraction(1)), Fraction(0)) is True
        assert _gap_at_least((c.end_r + c.end_c, Fraction(1)), theta(1, D)[0], Fraction(0)) is True


def test_rational_brackets_enclose_the_square_root_ratio() -> None:
    lo, hi = bracket_sqrt_ratio(Fraction(-3), Fraction(10), 20)
    assert lo <= hi < 0
    assert lo * lo * 10 >= 9 >= hi * hi * 10


def test_eq7_and_the_gap_bounds_hold_and_a_false_gap_bound_is_refuted() -> None:
    assert _eq7(12) == (sum((D + 2) ** 2 for D in range(1, 13)), None)
    checked, failure = _gaps(30)
    assert failure is None and checked > 0
    # The spec: "≥ 1/D²" holds only from D = 3 on; at D = 1 the sin gap min·D² is 0.447.
    sin0, sin1 = theta(0, 1)[1], theta(1, 1)[1]
    assert _gap_at_least(sin0, sin1, Fraction(1)) is False


def test_the_integer_brackets_of_the_gap_check_decide_as_the_rational_ones_wherever_they_decide() -> (
    None
):
    """Every consecutive pair of sin θ and cos θ values for D <= 12, against thresholds just
    under, at and over the true gap (and the paper's): the one-bracket-per-value decision is
    never the opposite of the rational brackets' and decides most cases."""
    decided = 0
    for D in range(1, 13):
        for seq in (
            [theta(d, D)[1] for d in range(D + 2)],
            [theta(d, D)[0] for d in range(D + 3)][::-1],
        ):
            for x, y in itertools.pairwise(seq):
                gap = _gap_at_least(x, y, Fraction(0))
                assert gap is True
                approx = Fraction(_scaled_floor(y) - _scaled_floor(x), 10**20)
                for t in (
                    approx - Fraction(1, 10**6),
                    approx,
                    approx + Fraction(1, 10**6),
                    Fraction(44, 100 * D * D),
                ):
                    fast = _gap_by_floors(_scaled_floor(x), _scaled_floor(y), t)
                    if fast is not None:
                        decided += 1
                        assert fast == _gap_at_least(x, y, t), (D, x, y, t)
    assert decided > 500


def test_soft_layer_two_with_c_1_gives_the_exact_sets_and_smaller_temperatures_are_refuted_on_short_prefixes() -> (
    None
):
    one = dyck_generator(k=2, depth=3, lambda2=Fraction(1))
    for v in valid_prefixes(2, 3, 6):
        assert set(run_interval(one, v).next_symbols[-1]) == _want(v, 2, 3, None), v
    # c = 1/2 (enough at n ≈ 50–714 in the spec's samples): after γ()[ (n = 4) the earlier
    # same-depth open ( is only 2/n below the top [ and keeps weight 1/4, so ] drops below ε.
    half = dyck_generator(k=2, depth=3, lambda2=Fraction(1, 2))
    assert set(run_interval(half, "()[").next_symbols[-1]) == {"(", "["}
    quarter = dyck_generator(k=2, depth=3, lambda2=Fraction(1, 4))
    assert set(run_interval(quarter, "()").next_symbols[-1]) == {"(", "["}  # ω is missing


def test_the_paper_version_forbids_opens_one_level_early_and_never_allows_omega() -> None:
    net = dyck_generator(k=1, depth=2, variant="paper")
    assert run_interval(net, "").next_symbols[-1] == ("(",)  # ω missing: no ω row
    assert run_interval(net, "(").next_symbols[-1] == (")",)  # depth 1 < D = 2, yet no open


def _prove(name: str, *params: str, max_n: int | None = None) -> dict[str, object]:
    c = REGISTRY[name]
    values = c.parse_params(dict(p.split("=", 1) for p in params))
    job = Job(c, values)
    return {cl.id: check(job, cl, max_len=max_n) for cl in c.claims(values)}


def test_the_generator_claims_are_proved_for_g2_at_a_small_bound() -> None:
    verdicts = _prove("dyck-gen", "k=1", "depth=2", "reading=G2", max_n=6)
    assert set(verdicts) == {"Y6", "Y7", "Y8", "Y9", "Y10", "Y10-def", "Y11", "Y11-net"}
    assert all(isinstance(v, Proved) for v in verdicts.values()), verdicts


def test_the_paper_generator_claims_are_refuted_with_the_empty_word() -> None:
    verdicts = _prove("dyck-gen", "k=1", "depth=1", "variant=paper", max_n=4)
    assert isinstance(verdicts["Y10-paper"], Refuted) and verdicts["Y10-paper"].word == ()
    assert isinstance(verdicts["Y10-def-paper"], Refuted) and verdicts["Y10-def-paper"].word == (
        END,
    )


def test_run_json_gives_the_sorted_allowed_brackets_and_the_end_bit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["run", "dyck-gen", "([", "-p", "k=2", "-p", "depth=3", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["next"], record["end"], record["backend"]) == (["(", "[", "]"], False, "sympy")
    assert (
        cli.main(
            [
                "run",
                "dyck-gen",
                "([",
                "-p",
                "depth=3",
                "-p",
                "reading=G2",
                "--length",
                "6",
                "--json",
            ]
        )
        == 0
    )
    record = json.loads(capsys.readouterr().out)
    assert (record["next"], record["end"], record["length"]) == (["]"], False, 6)
    assert cli.main(["run", "dyck-gen", "()", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["end"] is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0, "depth": 2}, "k=0 must be an integer >= 1"),
        ({"k": 2, "depth": 0}, "depth=0 must be an integer >= 1"),
        ({"k": 2, "depth": 2, "reading": "G3"}, "reading='G3' must be G1"),
        ({"k": 2, "depth": 2, "lambda2": Fraction(0)}, "lambda2=0 must be a positive Fraction"),
        ({"k": 2, "depth": 2, "variant": "printed"}, "variant='printed' must be fixed or paper"),
    ],
)
def test_bad_generator_parameters_are_refused_with_the_fix(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        dyck_generator(**kwargs)  # type: ignore[arg-type]


def test_a_symbol_of_a_type_above_k_and_a_short_length_are_refused() -> None:
    net = dyck_generator(k=2, depth=2)
    with pytest.raises(WordError, match=r"\{"):
        run_interval(net, "({")
    with pytest.raises(WordError, match="length=2 must be an integer >= the 3 tokens"):
        run_interval(net, "()", length=2)


def test_a_declared_length_is_refused_for_a_network_that_reads_to_the_right() -> None:
    from netproof.constructions.yao2021 import dyck_recognizer
    from netproof.symbolic.exact import run

    with pytest.raises(WordError, match="needs causal attention; head 'right'"):
        run(dyck_recognizer(k=1, depth=1), "()", length=8)


def test_next_symbols_refuses_an_end_symbol_it_does_not_score() -> None:
    with pytest.raises(
        NetworkValidationError, match=r"NextSymbols\.end='ω' is not one of the scored symbols"
    ):
        NextSymbols(scores=(("(", "s"),), threshold=Fraction(1, 2), end="ω")
