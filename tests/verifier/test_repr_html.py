"""Campaign results in a notebook: ``ProofRun``, ``ClaimResult``, ``FuzzRun`` and ``FuzzResult``
show as one compact HTML table (claim, verdict, method, bound, time), every text escaped."""

from __future__ import annotations

import dataclasses
import re

from netproof.verifier.campaign import prove
from netproof.verifier.claims import Refuted, Unknown


def _cells(page: str) -> list[list[str]]:
    """The table's body rows as lists of cell texts (tags stripped, entities left as they are)."""
    body = page[page.index("<tbody>") :]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_a_proof_run_shows_each_claim_with_its_verdict_method_bound_and_time() -> None:
    run = prove(["parity"], claims=["C4", "C2"], max_n=4)
    page = run._repr_html_()
    assert page.startswith("<table") and page.endswith("</table>")
    assert (
        "<caption>2 proved, 0 refuted, 0 unknown in " in page and "exit status 0</caption>" in page
    )
    rows = _cells(page)
    assert [r[:5] for r in rows] == [
        ["parity", "C4", "proved", "exhaustive (exact)", "|w| ≤ 4"],
        [
            "parity",
            "C2",
            "proved",
            "smt (z3), all integers",
            "—",
        ],  # a statement over all integers: no word bound
    ]
    assert all(re.fullmatch(r"\d+\.\d\d s", r[5]) for r in rows)
    assert _cells(run.results[0]._repr_html_()) == rows[:1]


def test_a_refutation_shows_its_counterexample_and_an_unknown_its_reason() -> None:
    run = prove(["dyck"], params={"variant": "paper"}, claims=["Y2-paper"], max_n=4)
    rows = _cells(run._repr_html_())
    assert rows[0][1] == "Y2-paper" and rows[0][2].startswith("refuted on &#x27;()&#x27;: ")
    assert 'style="background:#ffc9c9' in run._repr_html_()
    unknown = dataclasses.replace(
        run.results[0], verdict=Unknown(method="smt (z3)", reason="timeout after 60 s")
    )
    assert _cells(unknown._repr_html_())[0][2:4] == ["unknown: timeout after 60 s", "smt (z3)"]


def test_every_text_in_the_table_is_escaped() -> None:
    run = prove(["parity"], claims=["C4"], max_n=2)
    evil = Refuted(method="<b>m</b>", detail="x < y & <script>alert(1)</script>", word=("<", ">"))
    page = dataclasses.replace(run.results[0], verdict=evil)._repr_html_()
    assert "<script>" not in page and "<b>" not in page and "x < y" not in page
    assert (
        "x &lt; y &amp; &lt;script&gt;alert(1)&lt;/script&gt;" in page
        and "&lt;b&gt;m&lt;/b&gt;" in page
    )
    assert "refuted on &#x27;&lt;&gt;&#x27;" in page


def test_a_fuzz_run_shows_its_budget_as_the_bound_and_never_says_proved() -> None:
    from netproof.verifier.campaign.fuzzrun import FuzzResult, FuzzRun

    base = prove(["parity"], claims=["C4"], max_n=2).results[0]
    found = FuzzResult(
        construction=base.construction,
        values=base.values,
        claim=base.claim,
        verdict=Unknown(
            method="fuzz (hypothesis)", reason="no counterexample found in 20 examples"
        ),
        seconds=1.5,
        float_issues=(),
        record={"budget": {"examples": 20, "max_len": 5}},
    )
    rows = _cells(FuzzRun(results=(found,), exit_code=0)._repr_html_())
    assert rows == [
        [
            "parity",
            "C4",
            "no counterexample found in 20 examples",
            "fuzz (hypothesis)",
            "|w| ≤ 5 (fuzzed)",
            "1.50 s",
        ]
    ]
