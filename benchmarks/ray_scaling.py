"""Ray scale-out: words per second of one exhaustive claim checked in shards on a Ray instance
with 1, 2, ... worker CPUs, beside the local executor (one process, the claim whole), all in one
run of this script on one machine.

    python benchmarks/ray_scaling.py [--construction dyck] [--claim Y2] [--max-n 9] [--workers 1 2] [--repeat 3]

For each worker count a fresh local Ray instance is started with that many CPUs
(``ray.init(num_cpus=...)``), warmed up (every worker imports netproof once on a small run),
then the claim is proved with ``prove(..., executor="ray")`` and timed wall-clock ``--repeat``
times, the fastest counting (Ray's start is not counted; the driver's planning, the shards'
round trips and the merge are); the local run is warmed up and timed the same way. Every run's
verdict and record must equal the local run's (byte for byte), else the script stops. Prints
words/s per run and the ratios to the 1-worker run and to the local run.
"""

from __future__ import annotations

import argparse
import os
import time

from netproof.verifier.campaign import prove
from netproof.verifier.campaign.proving import SHARDS_PER_CPU
from netproof.verifier.campaign.store import dumps
from netproof.verifier.claims import Proved


def timed(**kwargs: object) -> tuple[float, object]:
    started = time.perf_counter()
    result = prove(**kwargs)  # type: ignore[arg-type]
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--construction", default="dyck")
    parser.add_argument("--claim", default="Y2")
    parser.add_argument(
        "--max-n", type=int, default=9, help="the claim's word-length bound (default 9)"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per configuration, the fastest counts"
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="Ray worker CPUs to try (default 1 2)",
    )
    parser.add_argument("--no-local", action="store_true", help="skip the local executor's run")
    args = parser.parse_args()

    import ray

    def run(**extra: object) -> tuple[float, object]:
        timed(
            constructions=args.construction, claims=[args.claim], max_n=min(args.max_n, 4), **extra
        )  # warm up
        runs = [
            timed(constructions=args.construction, claims=[args.claim], max_n=args.max_n, **extra)
            for _ in range(max(1, args.repeat))
        ]
        return min(runs, key=lambda r: r[0])

    load = os.getloadavg()
    rows: list[tuple[str, float, int]] = []
    reference: str | None = None
    if not args.no_local:
        seconds, local = run(jobs=1)
        verdict = local.verdicts[args.construction, args.claim]  # type: ignore[attr-defined]
        assert isinstance(verdict, Proved), verdict
        reference = dumps(local.records[0])  # type: ignore[attr-defined]
        rows.append(("local, 1 process, whole", seconds, verdict.checked))
    for cpus in args.workers:
        ray.init(
            num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level="WARNING"
        )
        try:
            seconds, result = run(executor="ray")
        finally:
            ray.shutdown()
        verdict = result.verdicts[args.construction, args.claim]  # type: ignore[attr-defined]
        assert isinstance(verdict, Proved), verdict
        text = dumps(result.records[0])  # type: ignore[attr-defined]
        assert reference is None or text == reference, (
            "the Ray run's record differs from the local run's"
        )
        reference = text
        rows.append(
            (
                f"ray, {cpus} worker{'s' if cpus > 1 else ''}, {cpus * SHARDS_PER_CPU}+ shards",
                seconds,
                verdict.checked,
            )
        )

    print(
        f"{args.construction} {args.claim}, every word up to length {args.max_n}: {rows[0][2]} words "
        f"(fastest of {max(1, args.repeat)}; load average before: {load[0]:.1f})"
    )
    print(f"{'run':<34}{'seconds':>10}{'words/s':>12}{'vs 1 worker':>13}{'vs local':>10}")
    one = next((r for r in rows if r[0].startswith("ray, 1 ")), None)
    local_row = rows[0] if not args.no_local else None
    for name, seconds, words in rows:
        rate = words / seconds
        vs_one = f"{rate / (one[2] / one[1]):.2f}x" if one else "-"
        vs_local = f"{rate / (local_row[2] / local_row[1]):.2f}x" if local_row else "-"
        print(f"{name:<34}{seconds:>10.2f}{rate:>12.0f}{vs_one:>13}{vs_local:>10}")


if __name__ == "__main__":
    main()
