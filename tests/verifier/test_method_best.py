"""``prove --method best``: per claim, a proof for every length where one can be had, else the
exhaustive bound, with each attempt's outcome kept; ``--require every-length`` exits 3 naming
every claim proved within its bound only, with why (no encoder for its kind, a timeout), and
the exit statuses keep their meaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.constructions.rasp.modules import program_constructions
from netproof.verifier.campaign import prove
from netproof.verifier.campaign.errors import CampaignError
from netproof.verifier.campaign.proving import every_length_gap
from netproof.verifier.claims import Proved
from netproof.verifier.claims.rasp import brasp as B

_a = B.token("a")
_seen_a = B.rightmost("past", score=_a.at_j, value=B.TRUE).named("seen_a")
HAS_A = B.Program("has_a", ("a", "b"), output=_a | _seen_a)


def _has_a(reference: object = lambda w: "a" in w) -> object:
    (c,) = program_constructions({"has-a": (HAS_A, reference)}, max_len=5)
    return c


def test_best_proves_for_every_length_where_it_can_and_falls_back_to_the_bound() -> None:
    run = prove(_has_a(), method="best", claims=["network=program", "program=language"])
    by_id = {r.claim.id: r for r in run.results}
    network = by_id["network=program"]
    assert network.every_length and network.verdict.method.startswith("smt (z3)")
    assert network.attempts[0].startswith("smt: proved")
    assert every_length_gap(network) is None
    fact = by_id["program=language"]  # the reference is a predicate: no automaton to compare
    assert isinstance(fact.verdict, Proved) and not fact.every_length
    assert fact.verdict.method == "exact rational arithmetic"
    gap = every_length_gap(fact)
    assert gap is not None and "no encoder" in gap
    assert run.exit_code == 0  # without require, a proof within the bound is a proof


def test_a_timed_out_proof_for_every_length_falls_back_to_the_bound_saying_so() -> None:
    run = prove(_has_a(), method="best", claims=["network=program"], timeout=0.001)
    (r,) = run.results
    assert isinstance(r.verdict, Proved) and not r.every_length
    assert r.verdict.method.startswith("exhaustive")
    assert r.attempts and r.attempts[0].startswith("smt (")
    # out of time within the lengths, or with the lengths proved and no invariant found yet
    assert "0.001 s" in r.attempts[0], r.attempts


def test_require_every_length_makes_a_bounded_proof_exit_3_naming_it_and_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    module = tmp_path / "has_a.py"
    module.write_text(
        "from netproof.verifier.claims.rasp import brasp as B\n"
        "_a = B.token('a')\n"
        "_seen = B.rightmost('past', score=_a.at_j, value=B.TRUE).named('seen_a')\n"
        "PROGRAMS = {'has-a': (B.Program('has_a', ('a', 'b'), output=_a | _seen), lambda w: 'a' in w)}\n"
        "MAX_LEN = 4\n"
    )
    done = netproof(
        capsys,
        "prove",
        str(module),
        "--claims",
        "program=language",
        "--method",
        "best",
        "--require",
        "every-length",
        "--out",
        "",
        "--quiet",
    )
    assert done.code == 3, done.out + done.err
    assert "NOT EVERY LENGTH has-a program=language: 0≤|w|≤4 only" in done.out
    assert "no encoder: its reference language has no automaton" in done.out
    as_json = netproof(
        capsys,
        "prove",
        str(module),
        "--claims",
        "program=language",
        "--method",
        "best",
        "--require",
        "every-length",
        "--out",
        "",
        "--json",
    )
    assert as_json.code == 3
    got = json.loads(as_json.out)
    assert got["summary"]["not_every_length"] == 1
    assert "no encoder" in got["results"][0]["not_every_length"]


def test_require_every_length_exits_0_when_every_claim_has_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = netproof(
        capsys,
        "prove",
        "brasp-no-aa",
        "--claims",
        "program=language",
        "--method",
        "best",
        "--require",
        "every-length",
        "--out",
        "",
        "--quiet",
    )
    assert done.code == 0, done.out
    assert "every length" in done.out and "NOT EVERY LENGTH" not in done.out


def test_an_unknown_requirement_is_refused() -> None:
    with pytest.raises(CampaignError, match="require='all-lengths' is not a requirement"):
        prove("parity", require="all-lengths")


def test_best_reuses_a_record_where_no_method_gives_more(tmp_path: Path) -> None:
    # a fact about numbers (no words), a bounded fact of a predicate reference: one way to check
    first = prove(_has_a(), method="best", claims=["program=language"], out=tmp_path)
    again = prove(_has_a(), method="best", claims=["program=language"], out=tmp_path)
    assert not first.results[0].cached and again.results[0].cached
    facts = prove("baby-ntm", method="best", claims=["M2-no-op-identity"], out=tmp_path)
    assert (
        prove("baby-ntm", method="best", claims=["M2-no-op-identity"], out=tmp_path)
        .results[0]
        .cached
    ), facts.results[0].verdict


def test_a_construction_without_block_lemmas_has_no_route_for_every_length_and_best_says_so(
    tmp_path: Path,
) -> None:
    # first-flawed-logn declares no block lemmas: the smt method would prove it one length at a
    # time, so best does not try, says why, and reuses the bound's exhaustive record
    out = str(tmp_path)
    first = prove(["first-flawed-logn"], claims=["recognizes"], max_n=3, method="best", out=out)
    (r,) = first.results
    assert not r.cached and r.verdict.method.startswith("exhaustive")
    assert r.attempts == (
        "no route: first-flawed-logn declares no block lemmas, so the smt method proves it one "
        "length at a time (its proofs for every length start from lemmas)",
    )
    assert every_length_gap(r) == r.attempts[0]
    (again,) = prove(
        ["first-flawed-logn"], claims=["recognizes"], max_n=3, method="best", out=out
    ).results
    assert again.cached


def test_a_family_with_a_network_per_length_has_no_route_for_every_length() -> None:
    from netproof.constructions import REGISTRY
    from netproof.verifier.campaign.routes import every_length_route

    c = REGISTRY["rumelhart"]
    (claim,) = [cl for cl in c.claims(c.parse_params({})) if cl.id == "C1"]
    assert every_length_route(claim) is None  # the claim alone: the smt method covers its kind
    why = every_length_route(claim, c, c.parse_params({}))
    assert why is not None and "a network per word length" in why
