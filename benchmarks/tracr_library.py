"""Every tracr library program checked at every position against its own RASP program, on every
input up to its ``max_seq_len``, timed in one run of this script on one machine.

    python benchmarks/tracr_library.py --dumps DIR            # dumps already written
    python benchmarks/tracr_library.py --tracr-python PYTHON  # write them first (a temp folder)

The dumps are those of ``python examples/tracr_dump.py DIR --benchmark``: the 20 programs and
variants of tracr's ``compiler/lib.py`` at lengths giving thousands of inputs each (2 symbols up
to 11, 3 up to 7, 4 up to 6), with tracr's own float32 outputs and its RASP evaluator's outputs
recorded for every input. They are 0.4 to 2.2 MB each, so they are not committed: without
``--dumps`` the script writes them into a temporary folder by running the dump script under an
interpreter where tracr is importable (``--tracr-python``, default this one), and says so.

Per program it prints: inputs (every word of length 1 to max_seq_len), positions checked, wrong
words and undecided positions of the rigorous check (netproof's ``check_sequence``: batched
enclosure, slow rigorous fallback), the wrong words of tracr's own float32 run (the recorded
outputs, read as the model itself reads them: argmax, or within ``--tolerance`` of a numerical value),
the smallest decided margin's decade, the seconds of the gate (the import checked against
tracr's recording at every position) and of the check, and throughput ratios against a plain
float64 batched forward of the same model (HookedTransformer's equations on the dump's
weights, no verdicts): ``enc/f64`` the rigorous enclosure alone over the same words and
positions, ``check/f64`` the whole check (enclosure, reference, verdicts, histograms).
Shortest wrong inputs are printed after the table. Ratios are CPU seconds of this process, so
they hold on a shared machine; all figures are from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from netproof.verifier.models.enclosure import MR
from netproof.verifier.models.sequence import check_sequence, load_sequence_dump, recorded_run

ROOT = Path(__file__).resolve().parents[1]


def _forward() -> Any:
    """HookedTransformer's forward in plain torch (the fixtures' script, read by path)."""
    path = ROOT / "tests" / "fixtures" / "models" / "make_transformerlens.py"
    spec = importlib.util.spec_from_file_location("netproof_bench_tl_forward", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.forward


def _cpu() -> float:
    return time.process_time()


def _words(a: int, m: int, start: int, stop: int) -> torch.Tensor:
    idx = torch.arange(start, stop, dtype=torch.long)
    return torch.stack([(idx // a ** (m - 1 - p)) % a for p in range(m)], 1)


def bench(path: Path, batch: int, forward: Any, tol: float) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), _cpu()
    imported, kw = load_sequence_dump(path)
    gate = time.perf_counter() - t0, _cpu() - c0
    net = imported.net
    numeric = len(kw["values"]) == 1 and "threshold" not in kw
    tolerance = tol if numeric else None
    c0, t0 = _cpu(), time.perf_counter()
    found = recorded_run(path)  # tracr's own float32 run, recorded for every input
    assert found is not None
    report = check_sequence(
        net, batch=batch, tolerance=tolerance, float32=found[0], float32_name=found[1], **kw
    )
    check = time.perf_counter() - t0, _cpu() - c0
    # the same words through a plain float64 forward, and through the enclosure alone
    dump = torch.load(path, map_location="cpu", weights_only=True)
    sd = {k: v.double() for k, v in dump["state_dict"].items()}
    cfg = dump["cfg"]
    from netproof.verifier.models.enclosure import Enclosure
    from netproof.verifier.models.sequence import _differences

    enc = Enclosure(net)
    ro = net.readout
    unembed, bias = kw["unembed"], kw["bias"]
    lin = (
        _differences(ro.logit.inputs, unembed, bias)  # type: ignore[union-attr]
        if not numeric
        else None
    )
    vocab_index = {t: i for i, t in enumerate(dump["vocab"])}
    ids = torch.tensor([vocab_index[s] for s in net.alphabet])  # the model's token ids
    pre = [vocab_index[t] for t in dump["prefix"]]
    e_ids = torch.tensor([enc.token_index[s] for s in net.alphabet])  # the enclosure's
    e_pre = [enc.token_index[t] for t in dump["prefix"]]
    a, max_n = len(net.alphabet), kw["max_n"]
    f64 = enc_t = 0.0
    for m in range(1, max_n + 1):
        for start in range(0, a**m, batch):
            digits = _words(a, m, start, min(a**m, start + batch))
            toks = torch.cat([torch.tensor(pre).expand(len(digits), -1), ids[digits]], 1)
            e_toks = torch.cat([torch.tensor(e_pre).expand(len(digits), -1), e_ids[digits]], 1)
            c0 = _cpu()
            with torch.no_grad():
                forward(cfg, sd, toks)
            f64 += _cpu() - c0
            c0 = _cpu()
            with torch.no_grad():
                x = enc.residual(e_toks, e_toks.shape[1])
                if lin is not None:
                    at = slice(len(pre), toks.shape[1])
                    enc.affine(lin, MR(x.m[:, at, :], x.r[:, at, :]), enc.index)
            enc_t += _cpu() - c0
    t = report.totals
    low = min(report.margins) if report.margins else None
    return {
        "name": path.stem,
        "kind": "numeric" if numeric else "categorical",
        "inputs": t.words,
        "positions": t.positions,
        "wrong": t.wrong_words,
        "undecided": t.undecided,
        "slow": t.slow,
        "float32_wrong": t.float32_wrong_words if report.float32 else None,
        "low": low,
        "gate": gate[0],
        "check": check[0],
        "check_cpu": check[1],
        "gate_cpu": gate[1],
        "enc_ratio": f64 / enc_t if enc_t else float("nan"),
        "check_ratio": f64 / check[1] if check[1] else float("nan"),
        "shortest": report.shortest_wrong,
        "d_model": cfg["d_model"],
        "layers": cfg["n_layers"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dumps", default=None, help="a folder of dumps (tracr_dump.py --benchmark)")
    ap.add_argument(
        "--tracr-python",
        default=sys.executable,
        help="an interpreter where tracr is importable, to write the dumps (default this one)",
    )
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument(
        "--tolerance",
        type=float,
        default=1e-3,
        help="a numerical output's absolute tolerance (default 1e-3; tracr's own tests allow a "
        "relative 0.5%%)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("names", nargs="*", help="only these programs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.dumps is None:
        folder = Path(tempfile.mkdtemp(prefix="netproof-tracr-"))
        print(f"writing the dumps with tracr ({args.tracr_python}) into {folder}", flush=True)
        t0 = time.perf_counter()
        subprocess.run(
            [
                args.tracr_python,
                str(ROOT / "examples" / "tracr_dump.py"),
                str(folder),
                "--benchmark",
                *args.names,
            ],
            check=True,
        )
        print(f"dumps written in {time.perf_counter() - t0:.0f} s", flush=True)
    else:
        folder = Path(args.dumps)
    paths = sorted(folder.glob("*.pt"))
    if args.names:
        paths = [p for p in paths if p.stem in args.names]
    if not paths:
        raise SystemExit(f"no dumps in {folder}: python examples/tracr_dump.py DIR --benchmark")
    forward = _forward()
    head = (
        f"{'program':26} {'kind':11} {'inputs':>6} {'positions':>9} {'wrong':>5} "
        f"{'undec':>5} {'slow':>4} {'f32 wrong':>9} {'margin>=':>8} {'gate s':>6} "
        f"{'check s':>7} {'enc/f64':>7} {'check/f64':>9}"
    )
    print(head)
    rows = []
    t_all = time.perf_counter()
    for p in paths:
        r = bench(p, args.batch, forward, args.tolerance)
        rows.append(r)
        low = "-" if r["low"] is None else f"1e{r['low']}"
        print(
            f"{r['name']:26} {r['kind']:11} {r['inputs']:>6} {r['positions']:>9} "
            f"{r['wrong']:>5} {r['undecided']:>5} {r['slow']:>4} "
            f"{'-' if r['float32_wrong'] is None else r['float32_wrong']:>9} "
            f"{low:>8} "
            f"{r['gate']:>6.1f} {r['check']:>7.1f} {r['enc_ratio']:>7.2f} "
            f"{r['check_ratio']:>9.2f}",
            flush=True,
        )
    total = time.perf_counter() - t_all
    print(
        f"{len(rows)} programs, {sum(r['inputs'] for r in rows)} inputs, "
        f"{sum(r['positions'] for r in rows)} positions: {total:.0f} s wall in all "
        f"(gates {sum(r['gate'] for r in rows):.0f} s, checks {sum(r['check'] for r in rows):.0f} "
        f"s; CPU seconds of this process: gates {sum(r['gate_cpu'] for r in rows):.0f}, checks "
        f"{sum(r['check_cpu'] for r in rows):.0f}, all {time.process_time():.0f}; load average "
        f"{os.getloadavg()[0]:.1f})"
    )
    for r in rows:
        sw = r["shortest"]
        if sw is not None:
            print(
                f"{r['name']}: wrong on {r['wrong']} of {r['inputs']} inputs; shortest "
                f"{' '.join(sw.word)!r} at position {sw.position}: expected {sw.expected!r}, "
                f"got {sw.got!r} (margin >= {sw.margin:.3g})"
            )
    agree = [r["name"] for r in rows if r["float32_wrong"] == r["wrong"]]
    print(f"float32 wrong-input count equals the rigorous one on {len(agree)} of {len(rows)}")


if __name__ == "__main__":
    main()
