"""Chiang & Cholak's Figures 2 and 3, recomputed in floating point: a CSV of the numbers and a PNG.

``netproof plot cross-entropy parity first --out fig2.png`` reproduces Figure 2: the mean
cross-entropy (in bits) of the PARITY and FIRST transformers against the word length |w|, for
three networks each (spec ``chiang2022_yao2021.md`` §2.8; c = 1, so the softmax base is e, and
c′ = 1):

- ``no LN``: the transformers of §2.2/§2.3 (Proposition 1); |s| shrinks like 1/n² (PARITY) and
  1/n (FIRST), so the cross-entropy tends to 1 bit;
- ``LN eps=1e-5``: the §3.1 doubled network with layer norm ε = 10⁻⁵ after every residual, plus
  Proposition 2's layer with the same ε; the ε in the last layer norm swamps |s| as n grows;
- ``LN eps=0``: the same with ε = 0: the logit is exactly ±c′√(D̂/2) = ±3 (PARITY) and ±√6
  (FIRST), so the cross-entropy is the constant −log₂σ(3) = 0.0701 or −log₂σ(√6) = 0.1195.

``netproof plot sensitivity --out fig3.png`` reproduces Figure 3: PARITY with layer norm (ε = 0)
and Proposition 2's layer, with the weight [W̄^{1,1,V}]_{6,2} (value ``k/n`` of the counting
head, read from ``I[w=1]``) set to 1 + δ, its mirror row moving with it (:func:`with_count_weight`).

Each point is the mean over ``strings`` uniformly random words of {0,1}^|w| (seeded); the CSV
also has the standard deviation of the per-word cross-entropy, the accuracy, and the smallest
|logit| met. The networks run on the torch backend (:mod:`netproof.symbolic.torch_backend`, float64 by
default): these figures are float experiments, as in the paper, not proofs.

The data pipeline (:func:`figure2_rows`, :func:`figure3_rows`, :func:`write_csv`) needs only a
*runner*, a function ``(network, words) -> logits``; :func:`torch_runner` is the one the command
uses. Only :func:`plot_rows` needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from netproof.constructions.chiang2022 import (
    doubled,
    first_transformer,
    parity_transformer,
    prop2_layer,
)
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.symbolic import AttentionLayer, Network
from netproof.symbolic.errors import MissingExtraError
from netproof.verifier.claims import Language

__all__ = [
    "FIG2_LENGTHS",
    "FIG2_SPEC",
    "FIG3_DELTAS",
    "FIG3_LENGTHS",
    "Curve",
    "PlotError",
    "Row",
    "cross_entropy_bits",
    "figure2_curves",
    "figure2_rows",
    "figure3_curves",
    "figure3_rows",
    "plot_rows",
    "torch_runner",
    "with_count_weight",
    "write_csv",
]

Runner = Callable[[Network, Sequence[tuple[str, ...]]], Sequence[float]]
"""Logits of a classifier network on a batch of words (any float backend)."""


class PlotError(ValueError):
    """A figure request that cannot be made (unknown language, bad lengths, missing extra)."""


#: The |w| of the spec's Figure 2 table (§2.8).
FIG2_LENGTHS: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)

#: The spec's Figure 2 table (§2.8): mean cross-entropy in bits over 1000 random words per |w|,
#: keyed by curve name, one value per entry of :data:`FIG2_LENGTHS`.
FIG2_SPEC: dict[str, tuple[float, ...]] = {
    "parity no LN": (0.7513, 0.8766, 0.9698, 0.9909, 0.9975, 0.9996, 0.9999, 1.0000, 1.0000, 1.0000),
    "parity LN eps=1e-5": (0.0701, 0.0702, 0.0709, 0.0794, 0.1771, 0.7015, 0.9155, 0.9782, 0.9965, 0.9991),
    "parity LN eps=0": (0.0701,) * 10,
    "first no LN": (0.7603, 0.8071, 0.8786, 0.9250, 0.9575, 0.9815, 0.9905, 0.9952, 0.9981, 0.9990),
    "first LN eps=1e-5": (0.1195, 0.1195, 0.1195, 0.1195, 0.1195, 0.1195, 0.1197, 0.1200, 0.1222, 0.1295),
    "first LN eps=0": (0.1195,) * 10,
}

#: Figure 3's perturbations δ of [W̄^{1,1,V}]_{6,2} and word lengths.
FIG3_DELTAS: tuple[Fraction, ...] = (
    Fraction(0), Fraction(1, 1000), Fraction(-1, 1000), Fraction(1, 100), Fraction(-1, 100),
    Fraction(1, 10), Fraction(-1, 10),
)
FIG3_LENGTHS: tuple[int, ...] = (10, 20, 50, 100, 200, 500)

_LANGUAGES: dict[str, tuple[Language, Callable[[str], Network]]] = {
    "parity": (PARITY, lambda c: parity_transformer(c)),
    "first": (FIRST, lambda c: first_transformer(c)),
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Curve:
    """One curve of a figure: a classifier network and the language its labels come from."""

    name: str
    network: Network
    language: Language


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One point of a curve: the mean and spread of the cross-entropy over ``strings`` words."""

    figure: str
    curve: str
    length: int
    strings: int
    ce_bits: float
    ce_sd: float
    accuracy: float
    min_abs_logit: float


def figure2_curves(languages: Iterable[str]) -> tuple[Curve, ...]:
    """Figure 2's three networks per language (c = 1, c′ = 1; see the module docstring)."""
    curves: list[Curve] = []
    for name in languages:
        if name not in _LANGUAGES:
            raise PlotError(f"language={name!r} is not in Figure 2; choose from {', '.join(_LANGUAGES)}")
        lang, build = _LANGUAGES[name]
        base = build("1")
        eps5 = Fraction(1, 100_000)
        curves += [
            Curve(name=f"{name} no LN", network=base, language=lang),
            Curve(name=f"{name} LN eps=1e-5", network=prop2_layer(doubled(base, eps=eps5), 1, eps=eps5), language=lang),
            Curve(name=f"{name} LN eps=0", network=prop2_layer(doubled(base, eps=0), 1), language=lang),
        ]
    return tuple(curves)


def with_count_weight(net: Network, value: Fraction, *, mirror: bool = True) -> Network:
    """``net`` with the counting head's weight from ``I[w=1]`` to ``k/n`` set to ``value``.

    That weight is the paper's [W̄^{1,1,V}]_{6,2} (dim 6 is k/n, dim 2 is I[w=1]). In a doubled
    network (§3.1, W̄^V = [[W^V 0]; [−W^V 0]]) ``mirror=True`` (the default) moves the mirrored
    row −k/n with it (to −value): the perturbation of W^V itself, so every activation keeps the
    form [u; −u]. This reproduces the spec's Figure 3 numbers (§2.8: perfect at |δ| ≤ 10⁻³ up
    to |w| = 500, |δ| = 0.01 perfect at |w| = 10 and about 0.45 accurate at |w| = 100);
    ``mirror=False`` changes the single entry of W̄ only, which breaks the mean-zero form and
    fails sooner (accuracy about 0.5 at |w| = 500 already for |δ| = 10⁻³). The copy is rebuilt
    through ``dataclasses.replace``, so every node is validated again.
    """
    for li, sub in enumerate(net.layers):
        block = sub.block
        if not (isinstance(block, AttentionLayer) and block.name == "count"):
            continue
        for hi, head in enumerate(block.heads):
            v = head.value
            if "k/n" in v.outputs and "I[w=1]" in v.inputs:
                col = v.inputs.index("I[w=1]")
                new = {"k/n": value, **({"−k/n": -value} if mirror and "−k/n" in v.outputs else {})}
                weights = tuple(
                    tuple(new[o] if c == col and o in new else w for c, w in enumerate(ws))
                    for o, ws in zip(v.outputs, v.weights, strict=True)
                )
                head2 = dataclasses.replace(head, value=dataclasses.replace(v, weights=weights))
                block2 = dataclasses.replace(block, heads=(*block.heads[:hi], head2, *block.heads[hi + 1 :]))
                layers = (*net.layers[:li], dataclasses.replace(sub, block=block2), *net.layers[li + 1 :])
                return dataclasses.replace(net, layers=layers)
    raise PlotError(
        f"network {net.name!r} has no attention layer 'count' with a head writing k/n from I[w=1]; "
        "Figure 3 perturbs the PARITY transformer's counting head"
    )


def figure3_curves(deltas: Iterable[Fraction] = FIG3_DELTAS) -> tuple[Curve, ...]:
    """PARITY with layer norm (ε = 0) and Proposition 2's layer (c = c′ = 1), with
    [W̄^{1,1,V}]_{6,2} = 1 + δ for each δ."""
    base = prop2_layer(doubled(parity_transformer("1"), eps=0), 1)
    return tuple(
        Curve(name=f"delta={delta}", network=with_count_weight(base, 1 + delta), language=PARITY) for delta in deltas
    )


def random_words(length: int, count: int, rng: random.Random) -> list[tuple[str, ...]]:
    """``count`` words drawn uniformly from {0,1}^length."""
    return [tuple(rng.choice("01") for _ in range(length)) for _ in range(count)]


def _softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def cross_entropy_bits(logit: float, label: bool) -> float:
    """−log₂ σ(±logit): the cross-entropy in bits of the label under P(accept) = σ(logit).

    >>> round(cross_entropy_bits(3.0, True), 4)
    0.0701
    >>> cross_entropy_bits(0.0, False)
    1.0
    """
    return _softplus(-logit if label else logit) / math.log(2)


def _rows(
    figure: str,
    curves: Sequence[Curve],
    lengths: Sequence[int],
    strings: int,
    seed: int,
    runner: Runner,
    progress: Callable[[str], None] | None,
) -> list[Row]:
    if strings < 1:
        raise PlotError(f"strings={strings} must be at least 1")
    bad = [n for n in lengths if n < 1]
    if bad:
        raise PlotError(f"lengths {bad} must be >= 1 (the empty word has s = 0 and Proposition 2 is undefined there)")
    rows: list[Row] = []
    for n in lengths:
        # The same words for every curve at one length (seeded by the length), as in a paired experiment.
        words = random_words(n, strings, random.Random(seed * 1_000_003 + n))
        for curve in curves:
            labels = [curve.language.contains(w) for w in words]
            logits = list(runner(curve.network, words))
            ces = [cross_entropy_bits(s, y) for s, y in zip(logits, labels, strict=True)]
            mean = math.fsum(ces) / len(ces)
            sd = math.sqrt(math.fsum((c - mean) ** 2 for c in ces) / len(ces))
            acc = sum((s > 0) == y for s, y in zip(logits, labels, strict=True)) / len(words)
            rows.append(Row(figure=figure, curve=curve.name, length=n, strings=strings, ce_bits=mean, ce_sd=sd,
                            accuracy=acc, min_abs_logit=min(abs(s) for s in logits)))
            if progress is not None:
                progress(f"{figure} {curve.name:20} |w|={n:<5} CE={mean:.4f} bits  acc={acc:.3f}")
    return rows


def figure2_rows(
    languages: Iterable[str] = ("parity", "first"),
    *,
    lengths: Sequence[int] = FIG2_LENGTHS,
    strings: int = 1000,
    seed: int = 2022,
    runner: Runner | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Row]:
    """Figure 2's points (one :class:`Row` per curve and length)."""
    return _rows("fig2", figure2_curves(languages), lengths, strings, seed, runner or torch_runner(), progress)


def figure3_rows(
    deltas: Iterable[Fraction] = FIG3_DELTAS,
    *,
    lengths: Sequence[int] = FIG3_LENGTHS,
    strings: int = 1000,
    seed: int = 2022,
    runner: Runner | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Row]:
    """Figure 3's points (one :class:`Row` per δ and length)."""
    return _rows("fig3", figure3_curves(deltas), lengths, strings, seed, runner or torch_runner(), progress)


def torch_runner(*, dtype: str = "float64", device: str = "cpu") -> Runner:
    """A runner on the torch backend (:func:`netproof.symbolic.torch_backend.run_batch`, which chunks the
    words itself); the logits come back as Python floats."""
    try:
        from netproof.symbolic.torch_backend import compile as compile_net
        from netproof.symbolic.torch_backend import run_batch, unsupported
    except ImportError as exc:
        raise MissingExtraError(
            f"the figures run on the torch backend, which needs torch ({exc}); pip install 'netproof[torch]'"
        ) from exc

    def run(net: Network, words: Sequence[tuple[str, ...]]) -> list[float]:
        reason = unsupported(net)
        if reason is not None:
            raise PlotError(f"a curve's network is not supported by the torch backend: {reason}")
        if not words:
            return []
        batch = run_batch(compile_net(net, dtype=dtype, device=device), list(words))
        return [float("nan") if x is None else x for x in (batch.logit(i) for i in range(len(words)))]

    return run


# --------------------------------------------------------------------------- output

CSV_FIELDS = ("figure", "curve", "length", "strings", "ce_bits", "ce_sd", "accuracy", "min_abs_logit")


def write_csv(rows: Sequence[Row], path: str | Path) -> None:
    """The rows as CSV (one line per point, floats with 10 significant digits)."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow([r.figure, r.curve, r.length, r.strings, f"{r.ce_bits:.10g}", f"{r.ce_sd:.10g}",
                        f"{r.accuracy:.10g}", f"{r.min_abs_logit:.10g}"])


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError(
            f"plots need matplotlib ({exc}); install the plot extra: pip install 'netproof[plot]'"
        ) from exc
    return plt


def plot_rows(rows: Sequence[Row], path: str | Path, *, title: str = "") -> None:
    """A PNG: cross-entropy (bits) against |w| on a log axis, one line per curve; for Figure 3
    a second panel shows the accuracy."""
    plt = _pyplot()
    curves: dict[str, list[Row]] = {}
    for r in rows:
        curves.setdefault(r.curve, []).append(r)
    fig3 = any(r.figure == "fig3" for r in rows)
    fig, axes = plt.subplots(1, 2 if fig3 else 1, figsize=(11 if fig3 else 7, 4.5), squeeze=False)
    ax = axes[0][0]
    for name, pts in curves.items():
        ax.plot([p.length for p in pts], [p.ce_bits for p in pts], marker="o", markersize=3, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("|w|")
    ax.set_ylabel("cross-entropy (bits)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    if fig3:
        ax2 = axes[0][1]
        for name, pts in curves.items():
            ax2.plot([p.length for p in pts], [p.accuracy for p in pts], marker="o", markersize=3, label=name)
        ax2.set_xscale("log")
        ax2.set_xlabel("|w|")
        ax2.set_ylabel("accuracy")
        ax2.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------- CLI


def add_plot_parser(sub: Any) -> None:
    """Register ``netproof plot`` on the CLI's subparsers."""
    p = sub.add_parser("plot", help="Chiang & Cholak's Figures 2 and 3 as PNG plots with their numbers in a CSV")
    p.add_argument("figure", choices=("cross-entropy", "sensitivity"),
                   help="cross-entropy: Figure 2 (CE against |w|); sensitivity: Figure 3 (one weight set to 1 + δ)")
    p.add_argument("languages", nargs="*", help="for cross-entropy: parity, first or both (default both)")
    p.add_argument("--out", required=True, help="the PNG to write; the CSV goes next to it (same name, .csv)")
    p.add_argument("--csv", default="", help="write the CSV here instead")
    p.add_argument("--strings", type=int, default=1000, help="random words per point (default 1000, as the spec)")
    p.add_argument("--lengths", type=int, nargs="+", default=None, metavar="N", help="the |w| to plot")
    p.add_argument("--deltas", nargs="+", default=None, metavar="Q", help="for sensitivity: the δ (rationals)")
    p.add_argument("--seed", type=int, default=2022)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        runner = torch_runner(dtype=args.dtype, device=args.device)
        if args.figure == "cross-entropy":
            rows = figure2_rows(args.languages or ("parity", "first"), lengths=args.lengths or FIG2_LENGTHS,
                                strings=args.strings, seed=args.seed, runner=runner, progress=progress)
            title = "Chiang & Cholak Figure 2: cross-entropy against |w| (c = c′ = 1)"
        else:
            if args.languages:
                raise PlotError(f"sensitivity takes no languages (it is PARITY's Figure 3); got {args.languages}")
            try:
                deltas = [Fraction(q) for q in args.deltas] if args.deltas else list(FIG3_DELTAS)
            except (ValueError, ZeroDivisionError) as exc:
                raise PlotError(f"--deltas {args.deltas}: each must be a rational such as 1/100 ({exc})") from exc
            rows = figure3_rows(deltas, lengths=args.lengths or FIG3_LENGTHS, strings=args.strings,
                                seed=args.seed, runner=runner, progress=progress)
            title = "Chiang & Cholak Figure 3: PARITY (LN ε = 0, Prop. 2) with [W̄^{1,1,V}]_{6,2} = 1 + δ"
        out = Path(args.out)
        csv_path = Path(args.csv) if args.csv else out.with_suffix(".csv")
        write_csv(rows, csv_path)
        plot_rows(rows, out, title=title)
    except (PlotError, MissingExtraError) as exc:
        print(f"netproof: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} and {csv_path} ({len(rows)} points)")
    return 0
