"""Precision analysis (verifier/floats/precision.py): where float runs stop agreeing with the exact
networks. The cheap cases run by default; the documented Dyck-generator limits are `slow`."""

from __future__ import annotations

import dataclasses
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.yao2021 import dyck_generator
from netproof.symbolic import fingerprint
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.interval import run as run_interval
from netproof.verifier import cli
from netproof.verifier.claims import Precision, WordFamily
from netproof.verifier.floats import precision

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def worst_cases(name: str) -> WordFamily:
    """The worst-case words construction ``name`` declares for the precision search."""
    declared = REGISTRY[name].precision
    assert declared is not None and declared.worst is not None
    return declared.worst


def analyse(name: str, dtype: str, max_n: int, words: int = 8, **given: str) -> precision.Analysis:
    c = REGISTRY[name]
    return precision.analyse(c, c.parse_params(given), dtype=dtype, max_n=max_n, words=words)


def test_parity_in_float64_agrees_with_the_exact_network_on_every_tested_length_up_to_128() -> None:
    a = analyse("parity", "float64", 128)
    assert a.reference == "exact"
    assert [lv.n for lv in a.levels] == [2, 4, 8, 16, 32, 64, 128]
    assert a.limit == 128 and a.broken_at is None
    for lv in a.levels:
        assert lv.max_logit_error is not None and lv.max_logit_error < 1e-12
        assert lv.min_abs_logit_float == pytest.approx(lv.min_abs_logit_exact, rel=1e-9)


def test_parity_in_float16_breaks_where_its_margin_2_over_n_squared_drops_below_float16_resolution() -> (
    None
):
    a = analyse("parity", "float16", 512, words=16)
    assert a.broken_at is not None and 64 <= a.broken_at.n <= 512
    assert a.limit is not None and a.limit < a.broken_at.n
    assert "exact reject" in (a.broken_at.first_disagreement or "") or "exact accept" in (
        a.broken_at.first_disagreement or ""
    )


def test_the_reference_of_the_flawed_first_transformer_is_the_exact_network_not_the_language() -> (
    None
):
    # At c = ln 2 the flawed network is wrong on FIRST from n = 4 on (it is right iff c > ln(n − 1));
    # float64 agrees with the *network* on every tested word but its zero-margin ones.
    a = analyse("first-flawed", "float64", 64)
    assert a.reference == "exact"
    for lv in a.levels:
        assert lv.max_logit_error is not None and lv.max_logit_error < 1e-12


def test_the_worst_case_words_of_the_flawed_first_transformer_are_the_closed_forms_minimizers() -> (
    None
):
    words = worst_cases("first-flawed")({}, 5)
    assert words == [("1", "0", "0", "0", "0"), ("0", "1", "1", "1", "1")]
    net = REGISTRY["first-flawed"].build(REGISTRY["first-flawed"].parse_params({}))
    E, n = 2, 6
    assert run_exact(net, words[0]).output == Fraction(E + 1 - n, 2 * (E + n - 1))


def test_layer_norm_networks_are_compared_with_their_language_since_the_exact_interpreter_cannot_take_roots() -> (
    None
):
    a = analyse("parity-ln", "float64", 32, words=6)
    assert a.reference == "language"
    assert a.limit == 32


def test_the_dyck_recognizer_in_float32_agrees_with_the_exact_integers_up_to_256() -> None:
    a = analyse("dyck", "float32", 256, words=6)
    assert a.reference == "exact" and a.limit == 256
    assert all(lv.unresolved_ties == 0 for lv in a.levels)


def test_dyck_worst_cases_reach_depth_d_with_varying_types_and_a_wrong_type_near_miss() -> None:
    good, near = worst_cases("dyck")({"k": 2, "depth": 2}, 8)
    assert "".join(good) == "([])[()]"
    assert "".join(near) == "([])[()]"[:-1] + ")"
    (only,) = worst_cases("dyck-gen")({"k": 2, "depth": 2, "reading": "G1"}, 8)
    assert only == good


def test_the_generator_with_p_i_over_n_agrees_in_float64_with_the_allowed_sets() -> None:
    a = analyse("dyck-gen", "float64", 64, words=4)
    assert a.reference == "allowed sets" and a.limit == 64


def test_pos_norm_default_keeps_the_generators_fingerprint_and_6000_keeps_its_exact_next_sets() -> (
    None
):
    c = REGISTRY["dyck-gen"]
    assert fingerprint(c.build(c.parse_params({}))) == fingerprint(dyck_generator(k=2, depth=2))
    net = c.build(c.parse_params({"pos_norm": "6000", "depth": "3"}))
    assert ("pos_norm", "6000") in net.params
    for prefix, want in (("([", ("(", "[", "]")), ("()", ("(", "[", "ω")), ("(((", (")",))):
        assert run_interval(net, prefix).next_symbols[-1] == want
    with pytest.raises(ValueError, match="pos_norm=6000 needs reading=G1"):
        c.build(c.parse_params({"pos_norm": "6000", "reading": "G2"}))
    with pytest.raises(ValueError, match="pos_norm"):
        c.parse_params({"pos_norm": "0"})


@pytest.mark.slow
def test_float32_breaks_the_generator_at_depth_10_with_position_scale_1_over_6000() -> None:
    a = analyse("dyck-gen", "float32", 1024, words=8, depth="10", pos_norm="6000")
    assert a.broken_at is not None and a.broken_at.n <= 1024
    b = analyse("dyck-gen", "float64", 1024, words=8, depth="10", pos_norm="6000")
    assert b.broken_at is None


@pytest.mark.slow
def test_float16_breaks_the_generator_at_once() -> None:
    a = analyse("dyck-gen", "float16", 64, words=8, depth="3")
    assert a.broken_at is not None and a.broken_at.n <= 64


def test_a_new_construction_can_register_its_worst_case_words_once() -> None:
    # A construction declares its worst-case words once, in its Precision declaration; the search
    # adds them at every length (here the only words: none are sampled).
    c = dataclasses.replace(
        REGISTRY["parity"],
        name="test-directional",
        precision=Precision(worst=lambda values, n: [("1",) * n]),
    )
    assert c.precision is not None and c.precision.worst is not None
    assert c.precision.worst({}, 3) == [("1", "1", "1")]
    a = precision.analyse(c, c.parse_params({}), dtype="float64", max_n=4, words=0)
    assert [(lv.n, lv.words) for lv in a.levels] == [(2, 1), (4, 1)]


def test_bad_bounds_and_fixed_size_networks_are_refused_with_the_reason() -> None:
    with pytest.raises(precision.PrecisionError, match="max_n=1 must be at least 2"):
        analyse("parity", "float32", 1)
    with pytest.raises(precision.PrecisionError, match="fixed input size"):
        analyse("gates", "float32", 8)


def test_the_cli_prints_one_summary_per_dtype_and_json_with_the_levels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        cli.main(
            [
                "precision",
                "first",
                "--dtype",
                "float64",
                "float32",
                "--max-n",
                "16",
                "--words",
                "4",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith(
        "first (c=ln(2)) float64, reference exact: agrees at every tested n <= 16"
    )
    assert cli.main(["precision", "first", "--max-n", "8", "--words", "2", "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert (
        record["dtype"] == "float32"
        and record["limit"] == 8
        and [lv["n"] for lv in record["levels"]] == [2, 4, 8]
    )


def test_the_cli_prints_a_line_as_each_length_starts_and_one_as_it_is_done_and_quiet_prints_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        cli.main(["precision", "first", "--dtype", "float64", "--max-n", "4", "--words", "2"]) == 0
    )
    cap = capsys.readouterr()
    err = cap.err.splitlines()
    assert [line.split(":")[0] if ": evaluating" in line else line.split()[2] for line in err] == [
        "first float64 n=2",
        "n=2",
        "first float64 n=4",
        "n=4",
    ]
    assert re.fullmatch(r"first float64 n=2: evaluating \d+ words", err[0]) and err[1].startswith(
        "first float64 n=2      words="
    )
    assert (
        cli.main(
            ["precision", "first", "--dtype", "float64", "--max-n", "4", "--words", "2", "--quiet"]
        )
        == 0
    )
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out == cap.out


def test_the_cli_refuses_a_run_without_names_and_an_unknown_construction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["precision"]) == 2
    assert "name a construction" in capsys.readouterr().err
    assert cli.main(["precision", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_markdown_report_names_the_command_that_made_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "precision.md"
    assert (
        cli.main(
            [
                "precision",
                "first",
                "--max-n",
                "8",
                "--words",
                "2",
                "--quiet",
                "--markdown",
                str(page),
            ]
        )
        == 0
    )
    text = page.read_text(encoding="utf-8")
    assert f"netproof precision first --max-n 8 --words 2 --markdown {page}" in text
    assert "| `first` | c=ln(2) | float32 | exact | ≥ 8 (all tested) | — |" in text
    broken = precision.markdown_report(
        [analyse("dyck-gen", "float16", 4, words=2, depth="10", pos_norm="6000")]
    )
    assert "e.g. `" in broken  # words such as [](( are code, not Markdown links


def test_docs_precision_md_is_the_output_of_the_command_it_names() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "precision.md").read_text(
        encoding="utf-8"
    )
    assert precision.REPORT_COMMAND in text
    for name, _given in precision.documented_runs(REGISTRY):
        for dtype in precision.DTYPES:
            assert any(
                line.startswith(f"| `{name}` |") and f"| {dtype} |" in line
                for line in text.splitlines()
            )


@pytest.mark.parametrize("name", ["stack-rnn", "baby-ntm", "stack-lstm"])
def test_recurrent_constructions_are_reported_as_not_supported_by_the_torch_backend(
    name: str,
) -> None:
    a = analyse(name, "float32", 8)
    assert a.levels == () and a.reference == "—"
    assert a.unsupported is not None and "which the torch backend does not compile" in a.unsupported
    assert a.summary().startswith("not supported: network ")
    assert a.to_json()["unsupported"] == a.unsupported and a.to_json()["limit"] is None


@pytest.mark.torch
def test_the_encoder_decoder_tm_sim_in_float64_agrees_with_the_exact_decoder_states_step_by_step() -> (
    None
):
    a = analyse("tm-sim", "float64", 16, words=0, transformer="directional")
    assert a.reference == "exact (decoder states)" and a.unsupported is None
    assert [(lv.n, lv.words, lv.disagreements) for lv in a.levels] == [
        (2, 2, 0),
        (4, 2, 0),
        (8, 2, 0),
        (16, 2, 0),
    ]
    assert a.limit == 16 and a.broken_at is None


@pytest.mark.torch
def test_tm_sim_in_float32_breaks_on_its_stack_encoding_between_8_and_16_symbols() -> None:
    # the stacks are dyadic rationals whose denominators grow with the word: float32 loses them
    # at 16 symbols (here y_33), long before 2^{-t} reaches 2^{-150}
    a = analyse("tm-sim", "float32", 16, words=0, transformer="directional")
    assert a.limit == 8
    b = a.broken_at
    assert b is not None and b.n == 16 and b.disagreements == 2
    assert b.first_disagreement is not None
    assert b.first_disagreement.startswith(
        "((((((((((((((((: y_33[h1:Cb1.pop] is 0.335938 in float32, 87381/262144 exactly"
    )


@pytest.mark.torch
def test_the_tm_sim_worst_case_words_repeat_the_least_input_symbol_and_cycle_through_the_alphabet() -> (
    None
):
    assert worst_cases("tm-sim")({"machine": "balanced-parens"}, 3) == [
        ("(", "(", "("),
        ("(", ")", "("),
    ]
    assert worst_cases("tm-sim")({"machine": "balanced-parens"}, 1) == [("(",)]
    assert worst_cases("tm-sim")({"machine": "balanced-parens"}, 0) == []


def test_all_runs_every_registered_construction_after_the_documented_runs() -> None:
    runs = precision.all_runs(REGISTRY)
    documented = precision.documented_runs(REGISTRY)
    assert runs[: len(documented)] == documented
    assert {name for name, _ in runs} == set(REGISTRY)


def test_the_cli_prints_a_not_supported_line_and_the_report_a_not_supported_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "precision.md"
    assert (
        cli.main(
            ["precision", "stack-rnn", "tm-sim", "--max-n", "8", "--quiet", "--markdown", str(page)]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith(
        "stack-rnn (task=d2 scale=6) float32, reference —: not supported: network 'stack-rnn-d2' is a RecurrentNetwork"
    )
    assert out[1] == (
        "tm-sim (machine=balanced-parens transformer=vanilla variant=fixed ablation=none) float32, reference "
        "exact (decoder states): agrees at every tested n <= 8 (no disagreement up to --max-n 8)"
    )
    text = page.read_text(encoding="utf-8")
    assert (
        "| `tm-sim` | machine=balanced-parens transformer=vanilla ablation=none | float32 | exact (decoder states) |"
        in text
    )
    assert (
        "| `stack-rnn` | task=d2 scale=6 | float32 | — | not supported | network 'stack-rnn-d2' is a RecurrentNetwork"
        in text
    )
    assert "### `stack-rnn`" not in text  # no margin curve for a construction that did not run


def test_all_reports_a_fixed_size_network_as_not_supported_with_the_reason() -> None:
    c = REGISTRY["gates"]
    with pytest.raises(precision.PrecisionError, match=r"has a fixed input size"):
        precision.analyse(c, c.parse_params({}), max_n=8)
    # under --all the same reason becomes the construction's line (cmd_precision catches it)
    a = precision.Analysis(
        construction="gates",
        params={},
        dtype="float32",
        device="cpu",
        reference="—",
        max_n=8,
        unsupported="construction 'gates' has a fixed input size (4 inputs)",
    )
    assert (
        "| `gates` | — | float32 | — | not supported | construction 'gates' has a fixed input size (4 inputs) |"
        in (precision.markdown_report([a]))
    )
