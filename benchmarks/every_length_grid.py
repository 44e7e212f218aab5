"""Proofs for every length over Yao et al.'s grid of Dyck(k, D) recognizers: for each k in
{2, 8, 32, 128} and D in {3, 5, 10, 15} (Appendix D), whether the compositional proof of Y2
(Theorem 4.1) reaches every length within the budget, and in how many seconds.

    python benchmarks/every_length_grid.py [--budget 600] [--k 2,8] [--depth 3,5] [--all-cells] [--json out.json]

Each cell runs in a process of its own (``prove_recognizes`` with its default ``lengths="all"``,
the bound the claim declares), so a cell's memory and its BDD child go with it. A cell is
``every n`` (an inductive invariant and its three certificate queries, each unsat), ``n <= N``
(the ranges proved the bound, no invariant within the budget) or ``unknown``. By default a cell
is not run where a smaller cell of its row or column already got no proof for every length
(the system only grows with k and D); ``--all-cells`` runs them all. Figures depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

K_GRID = (2, 8, 32, 128)
D_GRID = (3, 5, 10, 15)

_CELL = r"""
import json, sys, time
from netproof.constructions import REGISTRY
from netproof.verifier.claims import Proved
from netproof.verifier.smt.compositional import prove_recognizes
k, D, budget = {k}, {D}, {budget}
c = REGISTRY["dyck"]
values = c.parse_params({{"k": str(k), "depth": str(D)}})
claim = next(x for x in c.claims(values) if x.id == "Y2")
started = time.perf_counter()
p = prove_recognizes(c.network(values), claim, c.lemmas(values), claim.max_len, timeout=budget)
v = p.verdict
print(json.dumps({{"proved": isinstance(v, Proved), "every_length": p.every_length, "up_to": p.proved_up_to,
                  "bound": claim.max_len, "seconds": time.perf_counter() - started,
                  "detail": getattr(v, "detail", "") or getattr(v, "reason", "")}}))
"""


def run_cell(k: int, D: int, budget: float) -> dict[str, object]:
    code = _CELL.format(k=k, D=D, budget=budget)
    started = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=budget + 120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {
            "status": "unknown",
            "seconds": time.perf_counter() - started,
            "detail": "the cell's process passed its budget by 120 s and was killed",
        }
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no message"])[-1]
        return {"status": "error", "seconds": time.perf_counter() - started, "detail": tail}
    got = json.loads(out.stdout.strip().splitlines()[-1])
    status = (
        "every n"
        if got["every_length"]
        else (f"n <= {got['up_to']}" if got["proved"] else "unknown")
    )
    return {"status": status, **got}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--budget", type=float, default=600.0, help="seconds per cell (default 600)"
    )
    parser.add_argument(
        "--k",
        default=",".join(map(str, K_GRID)),
        help="comma-separated k values (default: the paper's)",
    )
    parser.add_argument(
        "--depth",
        default=",".join(map(str, D_GRID)),
        help="comma-separated D values (default: the paper's)",
    )
    parser.add_argument(
        "--all-cells",
        action="store_true",
        help="run every cell, even above one without a proof for every length",
    )
    parser.add_argument("--json", type=Path, help="also write the cells as JSON here")
    args = parser.parse_args(argv)
    ks = [int(x) for x in args.k.split(",")]
    ds = [int(x) for x in args.depth.split(",")]
    cells: dict[tuple[int, int], dict[str, object]] = {}
    for k in ks:
        for D in ds:
            below = [cells.get((k2, D2)) for k2, D2 in ((k, d) for d in ds if d < D)] + [
                cells.get((k2, D)) for k2 in ks if k2 < k
            ]
            if not args.all_cells and any(
                c is not None and c["status"] != "every n" for c in below
            ):
                cells[(k, D)] = {
                    "status": "not run",
                    "detail": "a smaller cell of its row or column got no proof for every length",
                }
            else:
                cells[(k, D)] = run_cell(k, D, args.budget)
            c = cells[(k, D)]
            secs = f" ({c['seconds']:.1f} s)" if "seconds" in c else ""
            print(
                f"Dyck({k},{D}): {c['status']}{secs}  {str(c.get('detail', ''))[:160]}", flush=True
            )
    print()
    print(f"Y2 for every length, {args.budget:g} s per cell:")
    print()
    print("| k \\ D | " + " | ".join(str(D) for D in ds) + " |")
    print("|---|" + "---|" * len(ds))
    for k in ks:
        row = []
        for D in ds:
            c = cells[(k, D)]
            row.append(c["status"] + (f" ({c['seconds']:.0f} s)" if "seconds" in c else ""))
        print(f"| {k} | " + " | ".join(row) + " |")
    if args.json:
        args.json.write_text(
            json.dumps({f"{k},{D}": c for (k, D), c in cells.items()}, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
