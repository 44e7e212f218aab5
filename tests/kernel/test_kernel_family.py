"""The kernel on a per-length family of networks (rumelhart: one flat FFN per word length): its
flat embedding against netproof's exact interpreter, the family rule on the committed records,
and every single-weight mutant of one length's network."""

from __future__ import annotations

import dataclasses
import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from weight_mutants import weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.kernel import KernelError, check_record
from netproof.kernel.interpret import run as kernel_run
from netproof.kernel.netfile import loads as kernel_loads
from netproof.symbolic import Network
from netproof.symbolic.exact import run as exact_run
from netproof.symbolic.netfile import dumps
from netproof.symbolic.printing import fingerprint
from netproof.verifier.campaign.kernelrun import KernelRun

REPO = Path(__file__).resolve().parents[2]
RUMELHART = REPO / "proofs" / "rumelhart"
C = REGISTRY["rumelhart"]
HI = 6  # the records cut to the words of length 0..6 (127 words): quick for the kernel


def _net(n: int) -> Network:
    net: Network = C.network(C.parse_params({}), n)
    return net


def _files(tmp_path: Path, nets: dict[int, Network]) -> dict[int, Path]:
    files = {}
    for n, net in nets.items():
        files[n] = tmp_path / f"n{n}.json"
        files[n].write_text(dumps(net), encoding="utf-8")
    return files


def _record(tmp_path: Path, source: str, nets: dict[int, Network]) -> Path:
    """The committed record ``source`` cut to lengths 0..HI, its fingerprints those of ``nets``."""
    rec = json.loads((RUMELHART / source).read_text(encoding="utf-8"))
    rec.update(bound={"min_len": 0, "max_len": HI}, checked=2 ** (HI + 1) - 1)
    rec["network"]["fingerprints"] = {str(n): fingerprint(net) for n, net in nets.items()}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    return path


@pytest.mark.parametrize("n", range(9))
def test_the_kernel_runs_a_flat_network_as_netproofs_exact_interpreter_does(n: int) -> None:
    net = kernel_loads(dumps(_net(n)))
    for w in itertools.product("01", repeat=n):
        assert kernel_run(net, w) == exact_run(_net(n), w).output


def test_a_flat_network_refuses_a_word_of_another_length() -> None:
    net = kernel_loads(dumps(_net(3)))
    with pytest.raises(KernelError, match="a flat network of words of 3 symbols"):
        kernel_run(net, ("1", "0"))


@pytest.mark.parametrize(("name", "field"), [("rumelhart", "values"), ("first", "table")])
def test_a_network_file_with_a_token_without_a_row_or_value_is_malformed(
    name: str, field: str
) -> None:
    c = REGISTRY[name]
    net = c.network(c.parse_params({}), 3) if c.per_length else c.network(c.parse_params({}))
    doc = json.loads(dumps(net))
    doc["network"]["embedding"][field] = doc["network"]["embedding"][field][1:]
    with pytest.raises(KernelError, match="no row \\(or value\\) for the token '0'"):
        kernel_loads(json.dumps(doc))


def test_the_committed_exhaustive_and_per_length_query_records_are_checked_by_the_family_rule() -> (
    None
):
    run = KernelRun(REGISTRY)
    got = [run.check(str(RUMELHART / f)) for f in ("C1.n12.json", "C1.n12.smt.json")]
    assert [(r.outcome, r.kind) for r in got] == [("checked", "Recognizes")] * 2
    assert all(r.detail.startswith("proved: all 8191 words with 0 <= |w| <= 12") for r in got)


def test_a_family_with_a_length_that_cannot_be_built_is_refused_naming_why() -> None:
    def build(values: dict[str, object], n: int) -> Network:
        if n == 5:
            raise ValueError("no network of length 5")
        return _net(n)

    run = KernelRun({"rumelhart": dataclasses.replace(C, build=build)})
    got = run.check(str(RUMELHART / "C1.n12.json"))
    assert (got.outcome, got.kind) == ("refused", "Recognizes")
    assert got.detail == "outside the kernel: no network file (no network of length 5)"


def test_a_family_record_needs_a_file_per_length_each_with_its_lengths_fingerprint(
    tmp_path: Path,
) -> None:
    nets = {n: _net(n) for n in range(HI + 1)}
    record, files = _record(tmp_path, "C1.n12.json", nets), _files(tmp_path, nets)
    assert check_record(record, files).outcome == "checked"
    swapped = {**files, 5: files[4]}  # length 4's network given for length 5
    got = check_record(record, swapped)
    assert got.outcome == "disagree" and "length 5 is not the record's network" in got.detail
    short = {n: f for n, f in files.items() if n != 3}
    got = check_record(record, short)
    assert got.outcome == "disagree" and "a file and a fingerprint per length 0..6" in got.detail
    got = check_record(record, files[4])  # one file for a family
    assert got.outcome == "refused" and "per-length family" in got.detail
    rec = json.loads(record.read_text(encoding="utf-8"))
    record.write_text(json.dumps({**rec, "verdict": "unknown"}), encoding="utf-8")
    got = check_record(record, files)
    assert got.outcome == "refused" and "verdict 'unknown': nothing to check" in got.detail


def _first_wrong(nets: dict[int, Network]) -> str | None:
    """netproof's exhaustive check of PARITY on the family: the shortlex-first misclassified word."""
    for n in range(HI + 1):
        for w in itertools.product("01", repeat=n):
            if (exact_run(nets[n], w).output > 0) != (w.count("1") % 2 == 1):
                return "".join(w)
    return None


@pytest.mark.parametrize("source", ["C1.n12.json", "C1.n12.smt.json"])
def test_every_single_weight_mutant_of_one_length_that_changes_the_function_is_found_wrong(
    tmp_path: Path, source: str
) -> None:
    base = {n: _net(n) for n in range(HI + 1)}
    changed = 0
    for site in list(weight_sites(base[4], zeros=True)):
        for delta in (Fraction(1), Fraction(-1, 2)):
            nets = {**base, 4: with_weight(base[4], site, delta)}
            got = check_record(_record(tmp_path, source, nets), _files(tmp_path, nets))
            wrong = _first_wrong(nets)
            if wrong is None:
                assert got.outcome == "checked", (site, delta, got.detail)
            else:
                changed += 1
                assert got.outcome == "disagree" and f"{wrong!r}, which is" in got.detail, (
                    site,
                    delta,
                    got.detail,
                )
    assert changed >= 10
