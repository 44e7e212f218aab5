"""SIGTERM to a running ``netproof prove`` is handled like Ctrl-C: the workers are stopped (no
process of the run survives it), every finished record is kept, one line is printed, and the
exit status is 143 (:data:`~netproof.verifier.campaign.errors.EXIT_TERMINATED`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netproof.verifier.campaign.errors import EXIT_TERMINATED
from netproof.verifier.campaign.store import read_record
from netproof.verifier.campaign.usermod import render_template


def slow_module(where: Path) -> Path:
    """A user module with a cheap claim (frac, words up to 3) and one of many seconds
    (recognizes, 2^21 words)."""
    text = render_template("slow-maj")
    text = text.replace(
        "            min_len=1,  # the empty word has no position to read\n            max_len=10,",
        "            min_len=1,  # the empty word has no position to read\n            max_len=20,",
    )
    text = text.replace(
        "            min_len=1,\n            max_len=10,",
        "            min_len=1,\n            max_len=3,",
    )
    assert "max_len=20" in text and "max_len=3," in text
    path = where / "slow_maj.py"
    path.write_text(text, encoding="utf-8")
    return path


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text(encoding="utf-8")
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Running or sleeping (a zombie, or no process at all, is not alive)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc"
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_stops_the_workers_keeps_the_finished_records_and_exits_143(
    tmp_path: Path, jobs: str
) -> None:
    slow_module(tmp_path)
    out = tmp_path / "records" / "slow-maj"
    command = [
        sys.executable,
        "-m",
        "netproof",
        "prove",
        "slow_maj.py",
        "--out",
        "records",
        "--jobs",
        jobs,
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 120
        while not (out.is_dir() and any(p.suffix == ".json" for p in out.iterdir())):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no record was written in 120 s"
            time.sleep(0.01)
        workers = descendants(proc.pid)
        if jobs == "2":
            assert workers, "the run has no worker process to stop"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_TERMINATED, (stdout, stderr)
    assert time.monotonic() - started < 30  # not the grace period's forced exit: a clean stop
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        "netproof: terminated (SIGTERM): 1 of 2 claims done; their records are in records/, "
        "run the same command again to finish the rest"
    )
    assert sorted(p.name for p in out.iterdir()) == ["frac.n3.json"]  # the finished claim, whole
    assert read_record(str(out / "frac.n3.json"))["verdict"] == "proved"  # type: ignore[index]
    time.sleep(0.5)
    assert not [pid for pid in workers if alive(pid)], "a process of the run outlived it"


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc"
)
def test_sigterm_stops_a_run_on_a_local_ray_instance_and_leaves_no_process_of_it(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ray")
    slow_module(tmp_path)
    out = tmp_path / "records" / "slow-maj"
    command = [
        sys.executable,
        "-m",
        "netproof",
        "prove",
        "slow_maj.py",
        "--out",
        "records",
        "--executor",
        "ray",
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        deadline = time.monotonic() + 180
        while not (out.is_dir() and any(p.suffix == ".json" for p in out.iterdir())):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no record was written in 180 s"
            time.sleep(0.05)
        ray_processes = descendants(proc.pid)
        assert ray_processes, "the run started no Ray process"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_TERMINATED, (stdout, stderr)
    assert stderr.strip().splitlines()[-1] == (
        "netproof: terminated (SIGTERM): 1 of 2 claims done; their records are in records/, "
        "run the same command again to finish the rest"
    )
    assert sorted(p.name for p in out.iterdir()) == ["frac.n3.json"]
    deadline = time.monotonic() + 30  # Ray's own processes take a moment to go
    while [pid for pid in ray_processes if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not [pid for pid in ray_processes if alive(pid)], "a Ray process of the run outlived it"


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc"
)
def test_sigterm_with_claims_still_queued_prints_no_traceback_only_its_line(
    tmp_path: Path,
) -> None:
    """More claims than workers: the queued ones are not cancelled under the pool (Python 3.11's
    pool raised InvalidStateError: CANCELLED in its own thread, a traceback before the line)."""
    out = tmp_path / "records"
    command = [sys.executable, "-m", "netproof", "prove", "parity", "first", "--out", str(out)]
    proc = subprocess.Popen(
        [*command, "--jobs", "2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not (out.is_dir() and any(out.rglob("*.json"))):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no record was written in 120 s"
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_TERMINATED, stderr
    assert "Traceback" not in stderr and "InvalidStateError" not in stderr, stderr
    assert stderr.strip().splitlines()[-1].startswith("netproof: terminated (SIGTERM): ")
