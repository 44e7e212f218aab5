"""Rigorous checking of a trained model against plain float64 evaluation, on every word up to n,
timed in one run of this script on one machine.

    python benchmarks/model_check.py [--model tests/fixtures/models/dyck12.pt] [--language dyck] [--max-n 14] [--threads 1]
    python benchmarks/model_check.py --model tests/fixtures/models/dyck22.pt -k 2 --max-n 10 --limit 16384

Three timings over the same words (every word of length min-n..max-n, or the first ``--limit``
words of each length in shortlex order; batches of ``--batch``), each as wall-clock and as the
process's CPU seconds (on a shared machine the wall clock also counts waiting for a core):

- float64: the torch model itself in float64, logits only (no verdicts): the baseline;
- enclosure: the batched rigorous enclosure (:mod:`netproof.verifier.models.enclosure`) alone;
- check: the whole ``check_model`` (enclosure, slow interval fallback for undecided words,
  language membership, float32 comparison off).

Prints words per CPU second of each and the ratios check/float64 and enclosure/float64 (the
issue's target: rigorous throughput at least 1/10 of float64's); with ``--limit``, the projected
CPU time of checking every word of those lengths.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from netproof.symbolic.torch_import import load_model, to_network
from netproof.symbolic.torch_recognizer import Recognizer
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.models import (
    ModelReport,
    check_model,
    compile_enclosure,
    merge_reports,
)

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(ROOT / "tests/fixtures/models/dyck12.pt"))
    ap.add_argument("--language", default="dyck", help="parity, first or dyck (Dyck(k, depth))")
    ap.add_argument("-k", type=int, default=1, help="bracket types of dyck (default 1)")
    ap.add_argument("--depth", type=int, default=2, help="depth bound of dyck (default 2)")
    ap.add_argument("--max-n", type=int, default=14)
    ap.add_argument("--min-n", type=int, default=0)
    ap.add_argument(
        "--limit",
        type=int,
        default=0,
        help="time only the first LIMIT words of each length and project the rest",
    )
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--no-enclosure-only",
        action="store_true",
        help="skip the enclosure-only timing (halves the run)",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    load_before = f"{os.getloadavg()[0]:.2f}"
    lang = {"parity": PARITY, "first": FIRST, "dyck": DYCK(args.k, args.depth)}[args.language]
    cfg, sd = load_model(args.model)
    model = Recognizer(**cfg)
    model.load_state_dict(sd)
    model.double().eval()
    net = to_network(cfg, sd)
    enc = compile_enclosure(net)
    alphabet = list(lang.alphabet)
    lengths = range(args.min_n, args.max_n + 1)
    limit = args.limit or len(alphabet) ** args.max_n
    batches = []
    for m in lengths:
        words = list(itertools.islice(itertools.product(alphabet, repeat=m), limit))
        for s in range(0, len(words), args.batch):
            batches.append((m, model.encode(words[s : s + args.batch])))
    total = sum(len(t) for _, t in batches)
    every = sum(len(alphabet) ** m for m in lengths)

    def timed(run: Callable[[], object]) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu

    def float64() -> None:
        with torch.no_grad():
            for _m, tokens in batches:
                model(tokens)

    def enclosure() -> None:
        with torch.no_grad():
            for m, tokens in batches:
                enc.logits(tokens, m + 1)

    parts: list[ModelReport] = []
    cpu_by_length: dict[int, tuple[int, float]] = {}

    def check() -> None:
        for m in lengths:
            cpu = time.process_time()
            parts.append(
                check_model(
                    net, lang, max_n=m, batch=args.batch, enclosure=enc, shard=(m, 0, limit)
                )
            )
            cpu_by_length[m] = (parts[-1].rows[0].words, time.process_time() - cpu)

    t_float = timed(float64)
    t_enc = (math.nan, math.nan) if args.no_enclosure_only else timed(enclosure)
    t_check = timed(check)
    report = merge_reports(parts, max_n=args.max_n)

    t = report.totals
    print(
        f"load average before the run: {load_before}; after: {os.getloadavg()[0]:.2f} (2 cores shared with other jobs: "
        "CPU seconds are the process's own, wall seconds include waiting for a core)"
    )
    print(
        f"model {Path(args.model).name} vs {lang.name}: {total} words of length {args.min_n}..{args.max_n}"
        f"{f' (the first {limit} of each length)' if args.limit else ''}, torch threads {args.threads}"
    )
    print(
        f"verdicts: {t.correct} correct, {t.wrong} wrong, {t.undecided} undecided, {t.slow} sent to the interval interpreter"
    )
    for name, (wall, cpu) in (
        ("float64 forward", t_float),
        ("enclosure only", t_enc),
        ("check_model", t_check),
    ):
        print(
            f"{name:16}: wall {wall:8.2f} s  cpu {cpu:8.2f} s  {total / cpu:10.0f} words/cpu-s"
            f"  cpu ratio to float64 {t_float[1] / cpu:.3f}  wall ratio {t_float[0] / wall:.3f}"
        )
    if args.limit:
        projected = sum(
            cpu / words * len(alphabet) ** m for m, (words, cpu) in cpu_by_length.items() if words
        )
        print(
            f"projected check_model cpu time for all {every} words of length {args.min_n}..{args.max_n}: {projected:.0f} s "
            f"(per-length cpu per word times the number of words)"
        )


if __name__ == "__main__":
    main()
