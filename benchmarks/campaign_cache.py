"""The results store's cache: a first ``netproof prove parity first`` (every claim proved, its
records written) against a second one into the same directory (every record found and reused,
nothing proved again), each a fresh ``netproof`` process, timed wall-clock in one run of this
script on one machine.

    python benchmarks/campaign_cache.py [--jobs 1] [--repeat 3]

The second run is timed ``--repeat`` times (the fastest counts: process start-up varies); the
first once, then its records are checked to be byte-identical after the reruns (the cache
rewrites nothing). Prints both times and their ratio (the issue's target: at least 20x).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(command: list[str], cwd: str) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes of the first run (default 1)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="times to time the second run (the fastest counts)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        command = [
            sys.executable,
            "-m",
            "netproof",
            "prove",
            "parity",
            "first",
            "--out",
            "records",
            "--jobs",
            str(args.jobs),
            "--json",
        ]
        first, printed = run(command, where)
        results = printed["results"]
        assert isinstance(results, list) and not any(r["cached"] for r in results)
        written = digests(Path(where) / "records")
        seconds = []
        for _ in range(max(1, args.repeat)):
            took, again = run(command, where)
            assert all(r["cached"] for r in again["results"]), (
                "the second run proved something again"
            )  # type: ignore[union-attr]
            seconds.append(took)
        assert digests(Path(where) / "records") == written, "the second run changed a record"
    second = min(seconds)
    print(
        f"netproof prove parity first ({len(results)} claims, --jobs {args.jobs}), wall-clock seconds per process"
    )
    print(f"{'run':<28}{'seconds':>10}")
    print(f"{'first (proves, writes)':<28}{first:>10.2f}")
    print(f"{'second (cached), fastest':<28}{second:>10.2f}")
    print(f"ratio first/second: {first / second:.1f}x (target >= 20x)")


if __name__ == "__main__":
    main()
