"""``netproof check-model --executor ray``: the words of each length sharded over a real Ray
instance on this machine (loopback only), and the report byte for byte the local one's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from netproof.verifier.cli import main

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"


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


@pytest.mark.slow  # about 18 s: starting Ray (10 s) and its workers' imports
def test_a_check_sharded_on_ray_prints_the_same_report_as_one_process(
    cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from netproof.verifier.cli.check_model import shards

    argv = [
        "check-model",
        str(FIXTURES / "dyck12.pt"),
        "--language",
        "dyck",
        "--max-n",
        "8",
        "--json",
        "--batch",
        "16",
    ]
    assert len(shards(2, 0, 8, 2, 16)) == 13  # lengths 5 to 8 are split in two: a real sharded run
    assert main(argv) == 1
    local = capsys.readouterr().out
    assert main([*argv, "--executor", "ray"]) == 1
    assert capsys.readouterr().out == local
    doc = json.loads(
        local
    )  # the model is wrong on 2^(m/2 - 1) words of each even length m >= 2, and on the empty word
    assert [r["wrong"] for r in doc["rows"]] == [1, 0, 1, 0, 2, 0, 4, 0, 8] and doc[
        "shortest_wrong"
    ]["word"] == ""


def test_an_address_without_the_ray_executor_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        "check-model",
        str(FIXTURES / "first.pt"),
        "--language",
        "first",
        "--max-n",
        "2",
        "--address",
        "127.0.0.1:6379",
    ]
    assert main(argv) == 2
    assert (
        "--address 127.0.0.1:6379 is a Ray cluster's address; give it with --executor ray"
        in capsys.readouterr().err
    )


@pytest.mark.slow  # starting Ray and its workers' imports
def test_a_per_position_check_sharded_on_ray_prints_the_same_report_as_one_process(
    cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text("def descending(word):\n    return sorted(word, reverse=True)\n")
    argv = ["check-model", str(FIXTURES / "tracr" / "sort.pt"), "--reference", f"{ref}:descending"]
    argv += ["--max-n", "3", "--json", "--batch", "8", "--no-compare"]
    assert main(argv) == 1
    local = capsys.readouterr().out
    assert main([*argv, "--executor", "ray"]) == 1
    assert capsys.readouterr().out == local
    assert json.loads(local)["totals"]["wrong"] == 60


def test_an_address_without_the_ray_executor_is_refused_per_position_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["check-model", str(FIXTURES / "tracr" / "hist.pt"), "--output", "categorical"]
    assert main([*argv, "--max-n", "2", "--address", "127.0.0.1:6379"]) == 2
    assert "--address 127.0.0.1:6379 is a Ray cluster's address" in capsys.readouterr().err
