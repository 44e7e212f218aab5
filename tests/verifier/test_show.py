"""``netproof show``: attention maps of an exact run as PNG, SVG or a self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import pytest

from netproof.verifier.cli import main, messages

pytest.importorskip("matplotlib")


def test_show_draws_the_dyck_recognizer_as_a_png(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dyck.png"
    assert main(["show", "dyck", "([])", "-p", "k=2", "-p", "depth=2", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert capsys.readouterr().out == f"wrote {out}\n"


def test_show_writes_an_svg_whose_labels_are_the_words_symbols(tmp_path: Path) -> None:
    out = tmp_path / "parity.svg"
    assert main(["show", "parity", "0110", "--out", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert (
        "layer parity, head odd" in svg and "4/11" in svg
    )  # the exact softmax weights in the cells


def test_show_writes_a_self_contained_html_page_without_scripts(tmp_path: Path) -> None:
    out = tmp_path / "dyck.html"
    assert main(["show", "dyck", "([])", "-p", "k=2", "-p", "depth=2", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<script" not in page
    assert "state after match2" in page and 'src="http' not in page


def _texts(svg: str) -> list[str]:
    """The texts of a matplotlib SVG (it writes each one as a comment before its glyphs)."""
    import re

    return re.findall(r"<!-- (.*?) -->", svg)


def test_show_draws_one_decoder_step_of_tm_sim_with_what_it_reads_and_the_machine_configurations(
    tmp_path: Path,
) -> None:
    out = tmp_path / "tm.svg"
    assert main(["show", "tm-sim", "(())", "--out", str(out)]) == 0
    texts = _texts(out.read_text(encoding="utf-8"))
    title = next(t for t in texts if "decoder step t = 1 of 0..16" in t)
    assert title.endswith("halts at t = 16")
    assert (
        "dec_enc/dec_enc at t = 1, decoder–encoder attention over the encoder positions: reads i = 2 '('"
        in texts
    )
    # every configuration of the machine beside its step, the halting one last
    assert (
        "configuration 0: q [(()) | ε]   t=6" in texts
        and "configuration 5: acc [ε | ε], halts   t=16" in texts
    )
    assert [t for t in texts if t.startswith(("y_1", "after", "ỹ_2"))] == [
        "y_1 (reads)",
        "after dec_self",
        "after dec_enc",
        "after dec_ffn",
        "ỹ_2 = F(z_1) (writes)",
    ]


def test_the_decoder_step_table_holds_the_exact_values_of_the_trace() -> None:
    from netproof.constructions import REGISTRY
    from netproof.symbolic.display import value_text
    from netproof.symbolic.seq2seq import run
    from netproof.verifier.floats.pictures import seq2seq_figure

    c = REGISTRY["tm-sim"]
    values = c.parse_params({})
    trace = run(c.network(values), tuple("(())"), max_steps=c.max_steps(values, tuple("(())")))
    import matplotlib.pyplot as plt

    fig = seq2seq_figure(trace, 9)
    table = next(t for ax in fig.axes for t in ax.tables)
    plt.close(fig)
    cells = table.get_celld()
    labels = {
        cells[r, -1].get_text().get_text(): r for r in range(1, 1 + len(cells)) if (r, -1) in cells
    }
    step = trace.steps[9]
    assert set(labels) == {
        d for k, d in enumerate(trace.network.dims) if any(s.rows[0][k] != 0 for s in step.states)
    }
    for dim, r in labels.items():
        shown = [cells[r, c].get_text().get_text() for c in range(len(step.states))]
        assert shown == [
            value_text(s.rows[0][trace.network.dims.index(dim)], 4) for s in step.states
        ]
    assert labels.keys() >= {"h:D:q/0/0", "h:C1", "pos_i"}


def test_show_draws_the_stack_rnn_s_stack_over_time_with_its_operations_and_targets(
    tmp_path: Path,
) -> None:
    out = tmp_path / "stack.svg"
    assert main(["show", "stack-rnn", "([()])", "--out", str(out)]) == 0
    texts = _texts(out.read_text(encoding="utf-8"))
    assert any(
        t.endswith("on '([()])' (exact): every predicted set equals the target") for t in texts
    )
    assert "stack after each step (top first; empty cells are 0)" in texts
    assert {"PUSH", "POP", "top  own:(", "depth 2  below:[", "predicted next", "target"} <= set(
        texts
    )
    assert "depth 3  own:(" not in texts  # the stack of ([()]) is 3 deep: no row beyond depth 2


def test_the_stack_heatmap_holds_the_stack_of_every_step() -> None:
    from netproof.constructions import REGISTRY
    from netproof.symbolic.recurrent import run
    from netproof.verifier.floats.pictures import recurrent_figure

    c = REGISTRY["stack-rnn"]
    trace = run(c.network(c.parse_params({})), tuple("(())[]"))
    import matplotlib.pyplot as plt

    fig = recurrent_figure(trace)
    stack = fig.axes[1].images[0].get_array()
    plt.close(fig)
    width = len(trace.network.cell.element)
    for j, st in enumerate(trace.steps):
        column = [float(stack[r, j]) for r in range(stack.shape[0])]
        expected = [float(v) for e in st.memory for v in e]
        assert column == expected + [0.0] * (len(column) - len(expected))
    assert stack.shape == (2 * width, 6)


@pytest.mark.parametrize(("name", "word"), [("tm-sim", "01"), ("stack-rnn", "()")])
def test_show_draws_encoder_decoders_and_recurrent_networks_as_pngs(
    tmp_path: Path, name: str, word: str
) -> None:
    out = tmp_path / "x.png"
    params = ["-p", "machine=binary-increment"] if name == "tm-sim" else []
    assert main(["show", name, word, *params, "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["tm-sim", "(())", "--step", "17"],
            "--step 17: the run on '(())' has decoder steps 0..16; choose one of them",
        ),
        (
            ["parity", "0110", "--step", "1"],
            "--step 1: parity is not an encoder–decoder; drop --step",
        ),
        (
            ["stack-rnn", ""],
            "the empty word has no steps to draw; give a word of at least one symbol",
        ),
    ],
)
def test_show_refuses_a_step_the_run_does_not_have_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["show", *argv, "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "x.png").exists()


def test_show_refuses_an_unknown_format_naming_the_ones_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "parity", "0110", "--out", str(tmp_path / "x.jpg")]) == 2
    assert "give a file ending in .png, .svg or .html" in capsys.readouterr().err


def test_show_refuses_a_symbol_outside_the_alphabet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "parity", "01x", "--out", str(tmp_path / "x.png")]) == 2
    assert "'x'" in capsys.readouterr().err


def test_without_matplotlib_show_names_the_plot_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["show", "parity", "0110", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and messages.install_command("plot") in err
    assert "pip install" in err and "[plot]'" in err and "'netproof[plot]'" not in err


def test_a_certified_decimal_bounds_its_distance_to_every_point_of_the_enclosure() -> None:
    from fractions import Fraction

    from mpmath import iv

    from netproof.verifier.cli.values import certified_decimal

    lo, hi = "1.5", "1.7"
    text = certified_decimal(iv.mpf([lo, hi]), 3)
    assert text == "1.60 ± 2e-1"
    d, e = (Fraction(x) for x in text.split(" ± "))
    assert d - e <= Fraction(lo) and Fraction(hi) <= d + e
    point = certified_decimal(iv.mpf(["0.001", "0.001"]))
    d, e = (Fraction(x) for x in point.split(" ± "))
    assert abs(d - Fraction(1, 1000)) <= e < Fraction(1, 10**17)


@pytest.mark.slow  # 7-25 s; test_cli_run_words checks certified digits in the default run
def test_run_prints_a_long_irrational_logit_as_a_certified_decimal_and_keeps_the_exact_form_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    assert main(["run", "parity-ln", "0110"]) == 0
    assert "logit s = -0.130761573121031 ± 2e-16   (sympy)" in capsys.readouterr().out
    assert main(["run", "parity-ln", "0110", "--exact-form"]) == 0
    assert len(capsys.readouterr().out) > 20_000
    assert main(["run", "parity-ln", "0110", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["output_decimal"] == "-0.130761573121031 ± 2e-16" and "sqrt" in record["output"]


def test_show_marks_a_hard_head_that_found_no_key_and_puts_an_operations_own_dims_last_in_grey(
    tmp_path: Path,
) -> None:
    out = tmp_path / "contains.svg"
    assert main(["show", "brasp-contains-ab", "bbab", "--out", str(out)]) == 0
    texts = _texts(out.read_text(encoding="utf-8"))
    assert texts.count("∅ no key") == 3  # prev_a, seen_ab and last at BOS: nothing before it
    labels = [t for t in texts if t in ("Q_a", "prev_a", "last", "prev_a.k0", "seen_ab.val0")]
    assert labels == ["Q_a", "prev_a", "last", "prev_a.k0", "seen_ab.val0"]
    assert any("in grey, last: 8 dims an operation keeps for itself" in t for t in texts)


def test_the_state_table_fills_its_panel_so_no_blank_band_stands_above_it() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from netproof.constructions import REGISTRY
    from netproof.symbolic.exact import run
    from netproof.verifier.floats.pictures import attention_figure

    fig = attention_figure(run(REGISTRY["brasp-contains-ab"].network({}), "bbab"))
    try:
        fig.canvas.draw()
        panel = fig.axes[-1]
        (table,) = panel.tables
        top = table.get_window_extent(fig.canvas.get_renderer()).y1
        assert abs(top - panel.get_window_extent().y1) < 2  # pixels: the table starts at the top
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
