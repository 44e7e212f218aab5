"""Proofs for every length of the generator's next-symbol claim (Yao et al.'s Theorem 4.2, Y10)
over the grid k ∈ {2, 8, 32, 128}, D ∈ {3, 5, 10, 15} (Appendix D), for both readings:

    python benchmarks/generator_grid.py [--budget 600] [--k 2,8] [--depth 3,5] [--reading G1,G2] [--json out.json]

Each cell runs ``prove_claim(..., method="smt")`` on ``dyck-gen`` (hard layer 2, the fixed
variant) in a process of its own, with the claim's own bound. Both readings are proved from the
positions' depth features (:mod:`netproof.verifier.smt.compositional.depth_features`); G2's
allowed set depends on m = n − i as well, a length feature checked for each m below a bound and
for all larger m at once.
A cell is ``every n`` (proved for every length), ``refuted`` or ``unknown`` (with the reason).
Figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

K_GRID = (2, 8, 32, 128)
D_GRID = (3, 5, 10, 15)

_CELL = r"""
import json, time
from netproof.constructions import REGISTRY
from netproof.verifier.claims import Proved, Refuted
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.smt.prove import prove_claim
c = REGISTRY["dyck-gen"]
values = c.parse_params({{"k": "{k}", "depth": "{D}", "reading": "{reading}"}})
claim = next(x for x in c.claims(values) if x.id == "Y10")
started = time.perf_counter()
v = prove_claim(Job(c, values), claim, method="smt", timeout={budget}).verdict
every = isinstance(v, Proved) and "every longer one" in v.detail
print(json.dumps({{"status": "every n" if every else type(v).__name__.lower(), "seconds": time.perf_counter() - started,
                  "detail": getattr(v, "detail", "") or getattr(v, "reason", "")}}))
"""


def run_cell(k: int, D: int, reading: str, budget: float) -> dict[str, object]:
    code = _CELL.format(k=k, D=D, reading=reading, budget=budget)
    started = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=budget + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "status": "unknown",
            "seconds": time.perf_counter() - started,
            "detail": "the cell's process passed its budget by 60 s and was killed",
        }
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no message"])[-1]
        return {"status": "error", "seconds": time.perf_counter() - started, "detail": tail}
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per cell (default 600)")
    ap.add_argument("--k", default=",".join(map(str, K_GRID)))
    ap.add_argument("--depth", default=",".join(map(str, D_GRID)))
    ap.add_argument("--reading", default="G1,G2")
    ap.add_argument("--json", default="", help="write every cell's result here")
    args = ap.parse_args()
    ks = [int(x) for x in args.k.split(",")]
    ds = [int(x) for x in args.depth.split(",")]
    cells = []
    for reading in args.reading.split(","):
        for k in ks:
            for D in ds:
                got = run_cell(k, D, reading, args.budget)
                cells.append({"reading": reading, "k": k, "D": D, **got})
                print(
                    f"{reading} k={k:<3} D={D:<2} {got['status']:<8} {float(got['seconds']):7.1f} s  {str(got['detail'])[:100]}",
                    flush=True,
                )
    for reading in args.reading.split(","):
        print(f"\nY10 ({reading}), {args.budget:g} s per cell\n")
        print("| k \\ D | " + " | ".join(map(str, ds)) + " |")
        print("|---" * (len(ds) + 1) + "|")
        for k in ks:
            row = [c for c in cells if c["reading"] == reading and c["k"] == k]
            print(
                f"| {k} | "
                + " | ".join(
                    f"{'**every n**' if c['status'] == 'every n' else c['status']} ({float(c['seconds']):.1f} s)"
                    for c in row
                )
                + " |"
            )  # type: ignore[arg-type]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(cells, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
