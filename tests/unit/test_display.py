"""Short reprs and notebook display of networks, traces and verdicts; traces as arrays."""

from __future__ import annotations

import html
from fractions import Fraction

import numpy as np
import pytest

from netproof.constructions.chiang2022 import parity_transformer
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic import fingerprint, pretty
from netproof.symbolic.exact import run
from netproof.verifier.claims.verdicts import Proved, Refuted, Unknown


@pytest.fixture(scope="module")
def dyck_trace():  # type: ignore[no-untyped-def]
    return run(dyck_recognizer(k=2, depth=2), "([])[]")


def test_print_of_a_trace_on_a_six_symbol_dyck_word_is_under_forty_lines(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    text = str(dyck_trace)
    assert len(text.splitlines()) < 40
    assert "match2/left" in text and "1→∅ 2→1 3→2 4→2 5→2 6→5 7→5 8→5" in text
    assert "output 1/2, accepted" in text


def test_repr_of_a_trace_is_one_line_with_network_word_and_verdict(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    assert repr(dyck_trace) == (
        "<Trace exact dyck(k=2, depth=2, variant=fixed) word='([])[]' n=8 output=1/2 accepted=True: 7 states, 5 heads>"
    )


def test_trace_attention_is_the_exact_weight_matrix_of_one_head(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    m = dyck_trace.attention("match1", "left")
    assert len(m) == dyck_trace.n and all(len(row) == dyck_trace.n for row in m)
    assert m[3] == (0, 0, 1, 0, 0, 0, 0, 0)
    assert all(isinstance(w, Fraction) for row in m for w in row)
    averaged = dyck_trace.attention("final", "any_open_or_error")
    assert averaged[0] == (Fraction(1, 8),) * 8
    assert np.array(m, dtype=float).shape == (8, 8)


def test_trace_attention_of_an_unknown_head_names_the_heads_there_are(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KeyError, match=r"no attention head 'match1'/'nope'.*match1/left"):
        dyck_trace.attention("match1", "nope")


def test_states_array_holds_every_state_exactly_in_dims_order(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    arr = np.array(dyck_trace.states_array(), dtype=object)
    net = dyck_trace.network
    assert arr.shape == (len(dyck_trace.states), dyck_trace.n, len(net.dims))
    p = net.dims.index("p")
    assert arr[-1, 3, p] == Fraction(1, 2) == dyck_trace.value("accept", 3, "p")
    assert arr[0, 0, p] == dyck_trace.value("input", 0, "p")


def test_a_trace_shows_in_a_notebook_as_attention_tables_and_states(dyck_trace) -> None:  # type: ignore[no-untyped-def]
    page = dyck_trace._repr_html_()
    assert page.count("<table>") == 5 + len(dyck_trace.states)
    assert "match2 / right" in page and "after accept" in page and "<script" not in page


def test_a_network_prints_as_one_line_and_keeps_its_equality_and_fingerprint() -> None:
    net = parity_transformer()
    assert repr(net) == "<Network parity(c=ln(2)): 4 sublayers, 3 heads, 9 dims>"
    assert net == parity_transformer() and hash(net) == hash(parity_transformer())
    page = net._repr_html_()
    printed = "<pre>" + html.escape(pretty(net).rstrip("\n")) + "</pre>"
    assert page.endswith(printed + "</details></div>")
    assert len(fingerprint(net)) == 64


def test_a_softmax_trace_shows_irrational_values_as_decimals() -> None:
    from netproof.constructions.chiang2022.networks import doubled
    from netproof.symbolic.sympy_interp import run as run_sympy

    trace = run_sympy(doubled(parity_transformer()), "0110")
    text = str(trace)
    assert "output ≈-0.130762, rejected" in text
    assert len(text.splitlines()) < 40


def test_verdicts_print_as_one_short_line_and_stay_equal_and_hashable() -> None:
    refuted = Refuted(
        "exhaustive", "expected reject, computed accept " * 5, ("(", ")"), {"logit": "1/2"}
    )
    assert repr(refuted).startswith("<Refuted by exhaustive on '()': expected reject")
    assert len(repr(refuted)) < 130 and "\n" not in repr(refuted)
    assert refuted == Refuted(
        "exhaustive", "expected reject, computed accept " * 5, ("(", ")"), {"logit": "1/2"}
    )
    assert repr(Proved("smt", 1234)) == "<Proved by smt, 1,234 cases>"
    assert hash(Proved("smt", 1234)) == hash(Proved("smt", 1234))
    assert repr(Unknown("smt", "timeout after 10 s")) == "<Unknown (smt): timeout after 10 s>"


def test_a_refuted_verdict_shows_its_counterexample_in_a_notebook() -> None:
    page = Refuted("exhaustive", "expected reject", ("(", ")"), {"logit": "1/2"})._repr_html_()
    assert (
        "<th>counterexample</th><td>&#x27;()&#x27;</td>" in page
        and "<th>value logit</th><td>1/2</td>" in page
    )


def test_a_one_line_repr_puts_each_count_in_the_number_it_takes() -> None:
    from netproof.symbolic import Network, classifier, token_embedding
    from netproof.symbolic.gadgets import attention, sublayers, uniform_average

    ones = uniform_average("ones", {"frac": {"is1": 1}}, mask="none")
    net = Network(
        name="demo",
        dims=("is1", "frac"),
        embedding=token_embedding(("0", "1"), {"0": {}, "1": {"is1": 1}}),
        layers=sublayers(attention("count", ones)),
        readout=classifier({"frac": 1}, bias="-1/2"),
    )
    assert repr(net) == "<Network demo: 1 sublayer, 1 head, 2 dims>"


def test_a_trace_of_the_empty_word_names_it_epsilon_without_quotes() -> None:
    from netproof.symbolic.display import format_trace
    from netproof.symbolic.exact import run

    assert format_trace(run(parity_transformer(), "")).startswith(
        "trace of parity(c=ln(2)) on ε (exact, n = 1)"
    )


def test_a_dim_named_like_a_header_row_is_labelled_as_a_dim_so_no_two_rows_read_i() -> None:
    from netproof.symbolic import Network, classifier, token_embedding
    from netproof.symbolic.display import format_trace
    from netproof.symbolic.exact import run
    from netproof.symbolic.gadgets import attention, select_position, sublayers

    embedding = token_embedding(
        ("0", "1"), {"0": {}, "1": {"is1": 1}}, positional={"i": "i"}, index_base=1
    )
    first = select_position("first", key_dim="i", query=1, values={"w1": {"is1": 1}})
    net = Network(
        name="demo",
        dims=("is1", "i", "w1"),
        embedding=embedding,
        layers=sublayers(attention("look", first)),
        readout=classifier("w1", position=-1),
    )
    lines = format_trace(run(net, "10")).splitlines()
    table = lines[
        lines.index("state after 'look' (dims not zero everywhere; columns are positions):") + 1 :
    ]
    assert [line[:8] for line in table[:5]] == [
        "  i     ",
        "  token ",
        "  is1   ",
        "  dim i ",
        "  w1    ",
    ]


def test_a_network_in_a_notebook_starts_with_a_summary_and_folds_its_printed_form() -> None:
    from netproof.constructions.yao2021 import dyck_recognizer

    page = dyck_recognizer(k=2, depth=2)._repr_html_()
    summary, folded = page.split("<details>", 1)
    assert summary.startswith("<div><b>Network dyck(k=2, depth=2, variant=fixed)</b><table>")
    assert "<th>sublayers</th><td>6: match1, logic1, match2, logic2, final, accept</td>" in summary
    assert "<th>heads</th><td>5</td>" in summary
    assert (
        "<th>dims</th><td>17: t0, t1, o, p, m, e, l:t0, l:t1, l:o, l:m, r:t0, r:t1, … (5 more)"
        in summary
    )
    assert "<th>parameters</th><td>5,582 exact rationals, 626 of them nonzero</td>" in summary
    assert len(summary.splitlines()) == 1  # the wall of blocks is folded, not shown
    assert folded.startswith("<summary>the printed form, every weight exact (346 lines)</summary>")
