"""Proof runs on Ray (``prove(..., executor="ray")``, ``netproof prove --executor ray``): a real
Ray instance on this machine (loopback only), large exhaustive claims split into shards by word
prefix, and the verdicts, counterexamples and record files byte for byte those of the local
executor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from netproof.verifier.campaign import prove
from netproof.verifier.campaign.proving import SHARD_WORDS, Running
from netproof.verifier.campaign.usermod import render_template
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.cli import main


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """One Ray instance for the module: 2 CPUs, no dashboard, on this machine's loopback."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        _node_ip_address="127.0.0.1",
    )
    try:
        yield
    finally:
        ray.shutdown()


def wrong_majority(where: Path) -> Path:
    """The MAJORITY starting module with its reference language wrong on the balanced words of
    length 6 (so its recognition claim is refuted there, in several shards at once) and bounds
    large enough to be split into shards (``frac``: 1 <= |w| <= 12, ``recognizes``: up to 13)."""
    text = render_template("wrongmaj")
    good = '    return w.count("1") > w.count("0")\n'
    assert good in text
    text = text.replace(
        good, '    return w.count("1") > w.count("0") or (len(w) == 6 and w.count("1") == 3)\n'
    )
    text = text.replace(
        "            min_len=1,  # the empty word has no position to read\n            max_len=10,",
        "            min_len=1,  # the empty word has no position to read\n            max_len=13,",
    )
    text = text.replace(
        "            min_len=1,\n            max_len=10,",
        "            min_len=1,\n            max_len=12,",
    )
    assert "max_len=13," in text and "max_len=12," in text
    path = where / "wrongmaj.py"
    path.write_text(text, encoding="utf-8")
    return path


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_a_sharded_proof_and_refutation_on_ray_are_the_local_runs_byte_for_byte(
    cluster: None, tmp_path: Path
) -> None:
    module = str(wrong_majority(tmp_path))
    local = prove(module, out=tmp_path / "local", jobs=1)
    heard: list[Running] = []
    on_ray = prove(module, out=tmp_path / "ray", executor="ray", running=heard.append)
    assert 2**13 - 2 >= SHARD_WORDS  # both claims are large enough to be split ...
    assert any(
        0 < r.done < r.total for r in heard if r.claim == "frac"
    )  # ... and came back shard by shard
    assert on_ray.verdicts == local.verdicts
    refuted = on_ray.verdicts["wrongmaj", "recognizes"]
    proved = on_ray.verdicts["wrongmaj", "frac"]
    assert isinstance(refuted, Refuted) and refuted.word == (
        "0",
        "0",
        "0",
        "1",
        "1",
        "1",
    )  # shortest, shortlex-first
    assert isinstance(proved, Proved) and proved.checked == 2**13 - 2
    assert on_ray.records == local.records
    assert files(tmp_path / "ray") == files(tmp_path / "local")
    assert len(files(tmp_path / "ray")) == 2


def test_prove_executor_ray_on_the_command_line_writes_the_records_of_a_local_run(
    cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "prove",
                "dyck",
                "--max-n",
                "6",
                "--out",
                str(tmp_path / "local"),
                "--jobs",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "prove",
                "dyck",
                "--max-n",
                "6",
                "--out",
                str(tmp_path / "ray"),
                "--executor",
                "ray",
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert files(tmp_path / "ray") == files(tmp_path / "local")
    assert len(files(tmp_path / "ray")) == 4


def test_a_crash_in_a_ray_worker_is_the_internal_error_of_a_local_run_and_no_record(
    cluster: None, tmp_path: Path
) -> None:
    from netproof.verifier.campaign.errors import InternalError

    module = wrong_majority(tmp_path)
    text = module.read_text(encoding="utf-8")
    # a claim about a dim the network lacks: the exact interpreter raises KeyError in the worker
    module.write_text(
        text.replace(
            'quantity=StateValue(after="count", dim="frac")',
            'quantity=StateValue(after="count", dim="no-such-dim")',
        ),
        encoding="utf-8",
    )
    expected = r"^KeyError: .*no dim 'no-such-dim'.* \(while checking claim 'frac' of wrongmaj\)$"
    with pytest.raises(InternalError, match=expected) as local:
        prove(str(module), claims=["frac"], out=tmp_path / "out", jobs=1)
    with pytest.raises(InternalError, match=expected) as on_ray:
        prove(str(module), claims=["frac"], out=tmp_path / "out", executor="ray")
    assert str(on_ray.value) == str(local.value)
    assert not list((tmp_path / "out").rglob("*.json"))


def test_a_construction_object_is_sent_to_the_ray_workers_with_its_tasks(cluster: None) -> None:
    import dataclasses

    from netproof.constructions import REGISTRY

    mine = dataclasses.replace(REGISTRY["dyck"], name="my-dyck")  # no file to load it from
    local = prove(mine, claims=["Y2", "Y3"], max_n=6, jobs=1)
    on_ray = prove(mine, claims=["Y2", "Y3"], max_n=6, executor="ray")
    assert on_ray.records == local.records
    assert on_ray.exit_code == 0
