"""How the B-RASP and C-RASP compilers grow with the program: compile time and network size for
generated programs of 10 to 200 operations.

    python benchmarks/rasp_compile.py [--ops 10,20,50,100,200] [--repeat 3]

A program of k operations is a chain that mixes every operation kind in turn, each operation
reading the one before it (so the attention depth grows with k too, the hardest case for the
layer count) and an earlier vector:

- B-RASP: ¬, ∧, ∨ and attention with every side and mask (leftmost/rightmost × past/future/all),
  scores reading vectors at j and at i, values at j and at i, a default;
- C-RASP: ¬, ∧, ∨, count, +, −, an integer multiple, a constant, C1 < C2, C = c, C ≥ c and
  where(P, C1, C2).

Each row is one program: ``ops`` the operations the generator wrote (k), ``compile ms`` the best
of ``--repeat`` compilations (:func:`netproof.constructions.rasp.compile_brasp` /
``compile_crasp``, IR validation included), then the network's size
(:func:`netproof.symbolic.size.network_size`), the entries of the FFNs' affine maps (``ffn weights``)
and the ratios per operation. Growth no worse than
linear means the per-operation ratios stay flat from the smallest program to the largest; the
last lines print the largest program's ratios over the smallest's, and over the next largest's
(the trend at the large end: a 10-operation chain reads mostly tokens, so its FFNs are smaller
per operation than those of a long chain, whose operations read vectors written many stages
before). Every compiled network is
checked against the program's interpreter on a few words first (not timed), so the figures are
those of correct networks. All figures come from one run in one process.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions.rasp import compile_brasp, compile_crasp
from netproof.symbolic import FFN, Affine, Network
from netproof.symbolic.exact import run
from netproof.symbolic.size import network_size
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C

CHECK_WORDS = ("", "a", "ab", "ba", "abba", "babab", "aabbab")

B_KINDS = ("not", "and", "or", "lm-past", "rm-past", "lm-future", "rm-future", "lm-all", "rm-all")
C_KINDS = ("not", "and", "or", "count", "add", "sub", "scale", "const", "less", "eq", "ge", "where")


def brasp_program(k: int) -> B.Program:
    """A B-RASP chain of ``k`` operations over {a, b}, every kind in turn."""
    pool: list[B.BVec] = [B.token("a"), B.token("b")]
    prev = pool[0]
    for t in range(k):
        kind = B_KINDS[t % len(B_KINDS)]
        other = pool[(t * 7) % len(pool)]
        if kind == "not":
            new: B.BVec = ~prev
        elif kind == "and":
            new = prev & other
        elif kind == "or":
            new = prev | other
        else:
            side, mask = kind.split("-")
            attend = B.leftmost if side == "lm" else B.rightmost
            mask_name = {"past": "past", "future": "future", "all": "all"}[mask]
            score = prev.at_j & other.at_i if t % 2 else prev.at_j | other.at_j
            value = other.at_j if t % 3 else other.at_j & prev.at_i
            new = attend(mask_name, score=score, value=value, default=other).named(f"op{t}")
        pool.append(new)
        prev = new
    return B.Program(f"brasp_chain_{k}", ("a", "b"), output=prev, empty=False)


def crasp_program(k: int) -> C.Program:
    """A C-RASP chain of ``k`` operations over {a, b}, every kind in turn."""
    bools: list[C.BVec] = [C.token("a"), C.token("b")]
    counts: list[C.CVec] = [C.count(bools[0]), C.count(bools[1])]
    b_prev, c_prev = bools[0], counts[0]
    for t in range(k):
        kind = C_KINDS[t % len(C_KINDS)]
        b_other, c_other = bools[(t * 5) % len(bools)], counts[(t * 3) % len(counts)]
        new_b: C.BVec | None = None
        new_c: C.CVec | None = None
        match kind:
            case "not":
                new_b = ~b_prev
            case "and":
                new_b = b_prev & b_other
            case "or":
                new_b = b_prev | b_other
            case "less":
                new_b = c_prev < c_other
            case "eq":
                new_b = c_prev.eq(t % 3)
            case "ge":
                new_b = c_prev >= 1
            case "count":
                new_c = C.count(b_prev)
            case "add":
                new_c = c_prev + c_other
            case "sub":
                new_c = c_prev - c_other
            case "scale":
                new_c = 2 * c_prev
            case "const":
                new_c = c_prev + 1
            case "where":
                new_c = C.where(b_prev, c_prev, c_other)
        if new_b is not None:
            bools.append(new_b)
            b_prev = new_b
        elif new_c is not None:
            counts.append(new_c)
            c_prev = new_c
        else:
            raise AssertionError(f"{kind=} is not a C-RASP operation of the chain")
    output = b_prev & (c_prev > c_prev - 1)  # read the last count too
    return C.Program(f"crasp_chain_{k}", ("a", "b"), output=output, empty=True)


def ffn_weights(net: Network) -> int:
    """The entries of every FFN's affine steps (outputs × inputs): the size that network_size's
    layers, heads and dims do not show."""
    return sum(
        len(step.outputs) * len(step.inputs)
        for layer in net.layers
        if isinstance(layer.block, FFN)
        for step in layer.block.steps
        if isinstance(step, Affine)
    )


def best_time(compile_: object, program: object, repeat: int) -> tuple[float, Network]:
    best, net = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        net = compile_(program)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    assert isinstance(net, Network)
    return best, net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ops", default="10,20,50,100,200", help="program sizes (operations), comma-separated"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="compilations per program; the fastest counts"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.ops.split(",")]
    print(
        f"{'language':8} {'ops':>4} {'compile ms':>11} {'layers':>6} {'heads':>5} {'dims':>5} "
        f"{'ffn weights':>11} {'ms/op':>7} {'layers/op':>9} {'heads/op':>8} {'dims/op':>7} {'weights/op':>10}"
    )
    for language, make, compile_, interpreter in (
        ("B-RASP", brasp_program, compile_brasp, B.accepts),
        ("C-RASP", crasp_program, compile_crasp, C.accepts),
    ):
        rows = []
        for k in sizes:
            program = make(k)
            seconds, net = best_time(compile_, program, args.repeat)
            for w in CHECK_WORDS:
                if run(net, w).accepted != interpreter(program, tuple(w)):  # type: ignore[arg-type]
                    raise SystemExit(
                        f"{language} program of {k} operations: the network and the program disagree on {w!r}"
                    )
            size = network_size(net)
            ms = seconds * 1000
            weights = ffn_weights(net)
            rows.append((k, ms, size, weights))
            print(
                f"{language:8} {k:>4} {ms:>11.1f} {size.layers:>6} {size.heads:>5} {size.dims:>5} {weights:>11} "
                f"{ms / k:>7.2f} {size.layers / k:>9.2f} {size.heads / k:>8.2f} {size.dims / k:>7.2f} {weights / k:>10.1f}"
            )
        (k0, ms0, s0, w0), (k1, ms1, s1, w1) = rows[0], rows[-1]
        print(
            f"{language}: {k1} ops over {k0} ops: (ms/op) ratio {(ms1 / k1) / (ms0 / k0):.2f}, "
            f"(dims/op) ratio {(s1.dims / k1) / (s0.dims / k0):.2f}, (layers/op) ratio {(s1.layers / k1) / (s0.layers / k0):.2f}, "
            f"(ffn weights/op) ratio {(w1 / k1) / (w0 / k0):.2f} (1 = linear)"
        )
        if len(rows) > 2:  # the trend at the large end, where start-up costs no longer dominate
            (km, msm, _sm, wm) = rows[-2]
            print(
                f"{language}: {k1} ops over {km} ops: (ms/op) ratio {(ms1 / k1) / (msm / km):.2f}, "
                f"(ffn weights/op) ratio {(w1 / k1) / (wm / km):.2f}"
            )


if __name__ == "__main__":
    main()
