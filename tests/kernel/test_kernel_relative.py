"""The kernel's rules for relative positions (Chang et al. 2021, kernel/relative.py): the
committed records of ``relpos`` are checked, tampered ones are rejected."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.kernel import check_record
from netproof.kernel.interpret import run as kernel_run
from netproof.kernel.netfile import loads as kernel_loads
from netproof.symbolic.exact import run as exact_run
from netproof.symbolic.netfile import dumps

REPO = Path(__file__).resolve().parents[2]
SHORT = {"bound": {"min_len": 0, "max_len": 2}, "checked": 13}
"""A committed record cut to the words up to length 2 (13 words), quick for the kernel."""


def _net(tmp_path: Path, edit: Any = None) -> Path:
    c = REGISTRY["relpos"]
    obj = json.loads(dumps(c.network(c.parse_params({}))))
    if edit is not None:
        edit(obj["network"])  # the fingerprint field is kept: the kernel reads what it is given
    path = tmp_path / "relpos.net.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _rec(tmp_path: Path, source: str, **edit: Any) -> Path:
    rec = json.loads((REPO / "proofs" / "relpos" / source).read_text(encoding="utf-8"))
    if rec["bound"] is not None:
        rec.update(SHORT)
    rec.update(edit)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    return path


def _head(name: str) -> Any:
    return lambda net: next(h for h in net["layers"][0]["block"]["heads"] if h["name"] == name)


def test_the_kernels_interpreter_gives_the_exact_interpreters_logit_on_relpos(
    tmp_path: Path,
) -> None:
    net = kernel_loads(_net(tmp_path).read_text(encoding="utf-8"))
    c = REGISTRY["relpos"]
    ref = c.network(c.parse_params({}))
    words = [w for n in range(4) for w in itertools.product(net.alphabet, repeat=n)]
    assert all(kernel_run(net, w) == exact_run(ref, w).output for w in words)


@pytest.mark.parametrize(
    "record",
    [
        *("N4.n4.json", "N5.n4.json", "N5-shaw.n4.json", "N6.n4.json", "N-key.n4.json"),
        *("N2-u2.n4.json", "N3-z1.n4.json", "I4c.fact.json", "I6b.fact.json", "I9b.fact.json"),
    ],
)
def test_the_committed_relative_position_records_are_checked(tmp_path: Path, record: str) -> None:
    got = check_record(_rec(tmp_path, record), _net(tmp_path))
    assert got.outcome == "checked" and got.detail.startswith("proved: "), got.detail


@pytest.mark.parametrize("record", ["N4.n4.json", "N2-u1.n4.json", "I9b.fact.json"])
def test_a_flipped_verdict_disagrees(tmp_path: Path, record: str) -> None:
    got = check_record(_rec(tmp_path, record, verdict="refuted"), _net(tmp_path))
    assert got.outcome == "disagree", got.detail


def test_a_wrong_counterexample_disagrees(tmp_path: Path) -> None:
    rec = _rec(tmp_path, "N6.n4.json", verdict="refuted", counterexample="ab")
    got = check_record(rec, _net(tmp_path))
    assert got.outcome == "disagree" and "holds on all 13 words" in got.detail, got.detail


@pytest.mark.parametrize(
    ("record", "edit", "why"),
    [
        ("N4.n4.json", lambda n: _head("fixed")(n)["scale"].update(coef="2"), "y:fixed"),
        ("N5.n4.json", lambda n: _head("dynamic")(n)["scale"].update(sqrt_d=1), "y:dynamic"),
        (
            "N5-shaw.n4.json",
            lambda n: _head("shaw")(n)["query_conv"].update(outside="zero"),
            "y:shaw",
        ),
        ("N-key.n4.json", lambda n: _head("key")(n).update(mask="causal"), "y:key"),
        ("N4.n4.json", lambda n: _head("fixed")(n).update(relative_bias=None), "no β"),
        (
            "N2-u1.n4.json",
            lambda n: n["layers"][2]["block"].update(
                normalizer=n["layers"][1]["block"]["normalizer"]
            ),
            "normalizes",
        ),
    ],
)
def test_a_network_file_whose_head_or_convolution_is_not_the_equation_disagrees(
    tmp_path: Path, record: str, edit: Any, why: str
) -> None:
    got = check_record(_rec(tmp_path, record), _net(tmp_path, edit))
    assert got.outcome == "disagree" and why in got.detail, got.detail


def test_a_refutation_naming_the_first_word_where_the_head_is_not_the_equation_is_checked(
    tmp_path: Path,
) -> None:
    net = _net(tmp_path, lambda n: _head("composite")(n)["scale"].update(coef="2"))
    rec = _rec(tmp_path, "N6.n4.json", verdict="refuted", counterexample="a")
    got = check_record(rec, net)
    assert got.outcome == "checked" and got.detail.startswith("refuted: on 'a'"), got.detail


def test_a_softmax_weight_that_is_not_rational_is_refused_and_named(tmp_path: Path) -> None:
    net = _net(tmp_path, lambda n: _head("fixed")(n)["normalizer"].update(r="2"))
    got = check_record(_rec(tmp_path, "N4.n4.json"), net)
    assert got.outcome == "refused" and "is not rational" in got.detail, got.detail
