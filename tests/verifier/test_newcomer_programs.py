"""The newcomer's two programs, written as user modules with a regular-expression reference and
no hand-written automaton, through ``netproof prove MODULE --method best --require every-length``:

- the B-RASP "no b after the first c": every claim (network = program, program = language,
  operations, no ties) proved for every length, exit 0;
- the C-RASP "Dyck-1 of depth <= 3": network = program, program = language and network =
  language proved for every length (the regex's minimal DFA as a counter automaton with no
  counters), and ``operations`` by its counter-system form (the counting lemmas in place, the
  program's counter automaton watching every count and comparison dim), exit 0 (``-m slow``:
  under two minutes of CPU, three to four on a loaded machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import netproof

pytestmark = pytest.mark.z3

BRASP_MODULE = """\
from netproof.verifier.claims.rasp import brasp as B

a, b, c = B.token("a"), B.token("b"), B.token("c")
seen_c = B.rightmost("past", score=c.at_j, value=B.TRUE).named("seen_c")
bad = b & seen_c
seen_bad = B.rightmost("past", score=bad.at_j, value=B.TRUE).named("seen_bad")

PROGRAMS = {
    "no-b-after-c": (
        B.Program("no_b_after_c", ("a", "b", "c"), output=~(seen_bad | bad), empty=True),
        r"[ab]*(c[ac]*)?",
    )
}
MAX_LEN = 5
"""

CRASP_MODULE = """\
from netproof.verifier.claims.rasp import crasp as C

o, c = C.token("a"), C.token("b")
below = C.count(c) > C.count(o)
too_deep = C.count(o) > C.count(c) + 3
depth3 = C.count(below).eq(0) & C.count(too_deep).eq(0) & C.count(o).eq(C.count(c))

PROGRAMS = {
    "dyck1-depth3": (
        C.Program("dyck1_depth3", ("a", "b"), output=depth3, empty=True),
        r"(a(a(ab)*b)*b)*",
    )
}
MAX_LEN = 6
"""


def test_the_brasp_program_is_proved_for_every_length_claim_by_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "no_b_after_c.py"
    module.write_text(BRASP_MODULE, encoding="utf-8")
    done = netproof(
        capsys,
        "prove",
        str(module),
        "--method",
        "best",
        "--require",
        "every-length",
        "--out",
        "",
        "--jobs",
        "1",
        "--json",
    )
    assert done.code == 0, done.out + done.err
    results = json.loads(done.out)["results"]
    assert [r["claim"]["id"] for r in results] == [
        "network=program",
        "program=language",
        "operations",
        "no-ties",
    ]
    assert all(r["every_length"] for r in results), [r["method"] for r in results]


@pytest.mark.slow
def test_the_crasp_program_is_proved_for_every_length_claim_by_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "dyck1_depth3.py"
    module.write_text(CRASP_MODULE, encoding="utf-8")
    done = netproof(
        capsys,
        "prove",
        str(module),
        "--method",
        "best",
        "--require",
        "every-length",
        "--out",
        "",
        "--jobs",
        "1",
        "--timeout",
        "300",
        "--json",
    )
    assert done.code == 0, done.out + done.err
    got = json.loads(done.out)
    by_id = {r["claim"]["id"]: r for r in got["results"]}
    assert sorted(by_id) == [
        "network=language",
        "network=program",
        "operations",
        "program=language",
    ]
    assert got["summary"]["refuted"] == 0 and got["summary"]["unknown"] == 0
    for cid, r in by_id.items():
        assert r["every_length"], (cid, r["method"])
    assert got["summary"]["not_every_length"] == 0
