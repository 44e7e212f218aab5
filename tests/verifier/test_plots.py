"""Chiang & Cholak's Figures 2 and 3 (declared in constructions/chiang2022/experiments.py, computed by
verifier/floats/plots.py) against the spec's numbers (§2.8).

The spec's table averages 1000 random words per point; these tests use fewer words, so a mean is
compared with a tolerance of four standard errors of both samples (ours and the spec's 1000),
computed from the per-word spread, plus the table's rounding (5e-5). The ε = 0 curves are exact
constants, −log₂σ(3) and −log₂σ(√6), whatever the words.
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions.chiang2022 import (
    FIG2_LENGTHS,
    FIG2_SPEC,
    FIGURE2,
    doubled,
    figure2_curves,
    figure3_curves,
    parity_transformer,
    prop2_layer,
    with_count_weight,
)
from netproof.symbolic.exact import run as run_exact
from netproof.verifier import cli
from netproof.verifier.floats import plots

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

STRINGS = 200
CHEAP = (1, 2, 5, 10, 20, 50)


def tolerance(sd: float, strings: int) -> float:
    return 4 * sd * math.sqrt(1 / strings + 1 / 1000) + 5e-5


@pytest.fixture(scope="module")
def fig2_rows() -> list[plots.Row]:
    torch.set_num_threads(1)
    return plots.experiment_rows(FIGURE2, lengths=CHEAP, strings=STRINGS)


def minus_log2_sigma(x: float) -> float:
    return math.log1p(math.exp(-x)) / math.log(2)


def test_every_figure_2_point_up_to_length_50_matches_the_spec_table_within_the_sampling_error(
    fig2_rows: list[plots.Row],
) -> None:
    assert len(fig2_rows) == len(CHEAP) * 6
    for r in fig2_rows:
        want = FIG2_SPEC[r.curve][FIG2_LENGTHS.index(r.length)]
        assert abs(r.ce_bits - want) <= tolerance(r.ce_sd, r.strings), (r, want)
        assert r.accuracy == 1.0


def test_the_eps_0_curves_are_the_exact_constants_minus_log2_sigma_3_and_sigma_root_6(
    fig2_rows: list[plots.Row],
) -> None:
    for r in fig2_rows:
        if r.curve == "parity LN eps=0":
            assert abs(r.ce_bits - minus_log2_sigma(3.0)) <= 1e-12
        if r.curve == "first LN eps=0":
            assert abs(r.ce_bits - minus_log2_sigma(math.sqrt(6))) <= 1e-12
    assert round(minus_log2_sigma(3.0), 4) == FIG2_SPEC["parity LN eps=0"][0]
    assert round(minus_log2_sigma(math.sqrt(6)), 4) == FIG2_SPEC["first LN eps=0"][0]


def test_the_eps_1e_5_curve_grows_with_n_while_no_layer_norm_tends_to_one_bit(
    fig2_rows: list[plots.Row],
) -> None:
    eps = [r.ce_bits for r in fig2_rows if r.curve == "parity LN eps=1e-5"]
    none = [r.ce_bits for r in fig2_rows if r.curve == "parity no LN"]
    assert eps == sorted(eps) and eps[-1] > 0.6
    assert none[-1] > 0.999


@pytest.mark.slow
def test_figure_2_at_lengths_100_to_1000_matches_the_spec_table() -> None:
    rows = plots.experiment_rows(FIGURE2, lengths=(100, 200, 500, 1000), strings=100)
    for r in rows:
        want = FIG2_SPEC[r.curve][FIG2_LENGTHS.index(r.length)]
        assert abs(r.ce_bits - want) <= tolerance(r.ce_sd, r.strings), (r, want)


def test_the_float_logits_of_the_figure_networks_agree_with_the_exact_interpreter_at_rational_base() -> (
    None
):
    # The figures use c = 1 (base e, not rational); with c = ln 2 the same builders are exact.
    net = prop2_layer(
        doubled(parity_transformer("ln(2)"), eps=Fraction(1, 100_000)), 1, eps=Fraction(1, 100_000)
    )
    assert [sub.post_ln.eps for sub in net.layers if sub.post_ln is not None] == [
        Fraction(1, 100_000)
    ] * 6
    words = [tuple("1"), tuple("0110"), tuple("111")]
    floats = plots.torch_runner()(
        with_count_weight(parity_transformer("ln(2)"), Fraction(1)), words
    )
    exact = [float(run_exact(parity_transformer("ln(2)"), w).output) for w in words]
    assert floats == pytest.approx(exact, rel=1e-12)


def changed_entries(before: Any, after: Any) -> list[tuple[str, str, Fraction]]:
    (head,) = after.layers[0].block.heads
    (old,) = before.layers[0].block.heads
    return [
        (o, i, w)
        for o, row, row0 in zip(
            head.value.outputs, head.value.weights, old.value.weights, strict=True
        )
        for i, w, w0 in zip(head.value.inputs, row, row0, strict=True)
        if w != w0
    ]


def test_the_figure_3_weight_is_the_count_heads_k_over_n_from_i_w_1_with_its_mirror_row() -> None:
    base = prop2_layer(doubled(parity_transformer("1"), eps=0), 1)
    moved = with_count_weight(base, Fraction(101, 100))
    assert changed_entries(base, moved) == [
        ("k/n", "I[w=1]", Fraction(101, 100)),
        ("−k/n", "I[w=1]", Fraction(-101, 100)),
    ]
    single = with_count_weight(base, Fraction(101, 100), mirror=False)
    assert changed_entries(base, single) == [("k/n", "I[w=1]", Fraction(101, 100))]


def test_a_network_without_the_counting_head_cannot_be_perturbed_and_the_error_says_why() -> None:
    from netproof.constructions.chiang2022 import first_transformer

    with pytest.raises(plots.PlotError, match="no attention layer 'count'"):
        with_count_weight(first_transformer(), Fraction(1))


def test_figure_3_is_perfect_for_small_delta_and_breaks_at_delta_0_01_by_length_100_as_the_spec_says() -> (
    None
):
    torch.set_num_threads(1)
    rows = plots.rows(
        "fig3",
        figure3_curves([Fraction(-1, 1000), Fraction(1, 100), Fraction(1, 10)]),
        lengths=(10, 100),
        strings=100,
    )
    acc = {(r.curve, r.length): r.accuracy for r in rows}
    assert acc[("delta=-1/1000", 10)] == acc[("delta=-1/1000", 100)] == 1.0
    assert acc[("delta=1/100", 10)] == 1.0
    # the spec: accuracy 0.455 at |w| = 100 (1000 words); 4 standard errors of 100 words is 0.2
    assert abs(acc[("delta=1/100", 100)] - 0.455) <= 0.2
    assert acc[("delta=1/10", 10)] < 0.9


def test_unknown_languages_and_empty_lengths_are_refused_with_the_fix() -> None:
    with pytest.raises(plots.PlotError, match="choose from parity, first"):
        figure2_curves(["dyck"])
    with pytest.raises(plots.PlotError, match="must be >= 1"):
        plots.experiment_rows(
            FIGURE2, ["parity"], lengths=(0,), strings=1, runner=lambda net, ws: [0.0] * len(ws)
        )


def test_plot_cross_entropy_writes_a_png_and_a_csv_with_one_line_per_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "fig2.png"
    code = cli.main(
        [
            "plot",
            "cross-entropy",
            "parity",
            "first",
            "--lengths",
            "1",
            "5",
            "--strings",
            "20",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(tmp_path / "fig2.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["curve"] for r in rows][:3] == [
        "parity no LN",
        "parity LN eps=1e-5",
        "parity LN eps=0",
    ]
    assert len(rows) == 12 and {r["length"] for r in rows} == {"1", "5"}
    assert float(rows[0]["ce_bits"]) == pytest.approx(0.7513, abs=5e-5)
    assert f"wrote {out}" in capsys.readouterr().out


def test_plot_prints_a_line_as_each_point_starts_and_one_as_it_is_done_and_quiet_prints_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    argv = [
        "plot",
        "cross-entropy",
        "parity",
        "--lengths",
        "1",
        "--strings",
        "5",
        "--out",
        str(tmp_path / "f.png"),
    ]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[::2] == [
        "[1/3] fig2 parity no LN |w|=1: 5 words",
        "[2/3] fig2 parity LN eps=1e-5 |w|=1: 5 words",
        "[3/3] fig2 parity LN eps=0 |w|=1: 5 words",
    ]
    assert len(err) == 6 and all(
        line.startswith("fig2 parity ") and "CE=" in line for line in err[1::2]
    )
    assert cli.main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_plot_sensitivity_writes_figure_3_and_refuses_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "fig3.png"
    assert (
        cli.main(
            [
                "plot",
                "sensitivity",
                "--deltas",
                "0",
                "1/100",
                "--lengths",
                "10",
                "--strings",
                "10",
                "--out",
                str(out),
                "--csv",
                str(tmp_path / "n.csv"),
                "--quiet",
            ]
        )
        == 0
    )
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "n.csv").read_text(encoding="utf-8").count("\n") == 3
    assert cli.main(["plot", "sensitivity", "parity", "--out", str(out)]) == 2
    assert "sensitivity takes no languages" in capsys.readouterr().err


def test_without_matplotlib_the_error_names_the_plot_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import builtins

    real = builtins.__import__

    def no_matplotlib(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(
        plots.MissingExtraError, match=r"install the plot extra: pip install .*\[plot\]"
    ):
        plots.plot_rows([], tmp_path / "x.png")


def test_a_network_the_torch_backend_does_not_compile_is_a_plot_error_naming_it() -> None:
    from netproof.constructions import REGISTRY

    c = REGISTRY["stack-rnn"]
    net = c.network(c.parse_params({}))
    with pytest.raises(
        plots.PlotError,
        match=r"not supported by the torch backend: network 'stack-rnn-d2' is a RecurrentNetwork",
    ):
        plots.torch_runner()(net, [("(",)])  # type: ignore[arg-type]
