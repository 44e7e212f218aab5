"""The twenty specifications of ``constructions/rasp/synth_specs.py`` synthesized and proved:
one line each with the spec's size, the minimal DFA's states, the syntactic monoid's size, the
program's operations, the network's attention layers, heads and dims, and the seconds to
synthesize and to prove network = program, program = language, operations and no-ties with
``--method best`` (``every`` when all four hold for every length). The issue's target: under a
minute each. Ends with the growth: network dims and heads against the spec's size (a
least-squares slope over the LTL specs and over the regex specs).

A spec whose route is missing in this checkout (the DFA route, ``from_dfa.py``) is printed as
such, not timed.

    python benchmarks/synth_twenty.py [NAME ...]
"""

from __future__ import annotations

import sys
import tempfile
import time

from netproof.constructions.rasp.modules import program_constructions
from netproof.constructions.rasp.synth import SpecError, synthesize
from netproof.constructions.rasp.synth_specs import SPECS
from netproof.verifier.campaign.proving import prove


def _slope(points: list[tuple[int, int]]) -> float:
    if len(points) < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else float("nan")


def main(names: list[str]) -> None:
    specs = [s for s in SPECS if not names or s.name in names]
    head = (
        f"{'spec':<20} {'kind':<5} {'size':>4} {'dfa':>3} {'monoid':>6} {'ops':>4} {'attn':>4} "
        f"{'layers':>6} {'heads':>5} {'dims':>4} {'synth s':>7} {'prove s':>7}  claims"
    )
    print(head)
    print("-" * len(head))
    growth: dict[str, list[tuple[int, int, int]]] = {"ltl": [], "regex": []}
    for s in specs:
        t0 = time.perf_counter()
        try:
            syn = synthesize(s.spec, f"synth-{s.name}")
        except SpecError as exc:
            print(f"{s.name:<20} {s.spec.kind:<5} not synthesized: {exc}")
            continue
        t1 = time.perf_counter()
        (c,) = program_constructions({f"synth-{s.name}": (syn.program, syn.reference)})
        with tempfile.TemporaryDirectory() as tmp:
            run = prove([c], method="best", jobs=1, out=tmp)
        t2 = time.perf_counter()
        verdicts = {
            r.record["claim"]["id"]: (r.record["verdict"], r.every_length) for r in run.results
        }
        every = all(v == "proved" and e for v, e in verdicts.values())
        shown = (
            "all proved, every length"
            if every
            else ", ".join(f"{k}={v}{'' if e else ' (bounded)'}" for k, (v, e) in verdicts.items())
        )
        z = syn.sizes
        print(
            f"{s.name:<20} {s.spec.kind:<5} {z['spec_size']:>4} {z['dfa_states']:>3} "
            f"{z['monoid_size']:>6} {z['program_ops']:>4} {z['attention_ops']:>4} {z['layers']:>6} "
            f"{z['heads']:>5} {z['dims']:>4} {t1 - t0:>7.2f} {t2 - t1:>7.1f}  {shown}"
        )
        growth[s.spec.kind].append((z["spec_size"], z["dims"], z["heads"]))
    for kind, pts in growth.items():
        if pts:
            dims = _slope([(x, d) for x, d, _ in pts])
            heads = _slope([(x, h) for x, _, h in pts])
            print(
                f"growth over the {len(pts)} {kind} specs: {dims:.2f} dims and {heads:.2f} heads "
                f"per unit of spec size (sizes {min(p[0] for p in pts)}..{max(p[0] for p in pts)})"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
