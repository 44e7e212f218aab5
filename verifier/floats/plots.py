"""Float experiments' figures: curves of classifier networks, their cross-entropy against the
word length recomputed in floating point, a CSV of the numbers and a PNG.

A figure is a paper's :class:`~netproof.verifier.claims.Experiment` declaration (e.g. Chiang &
Cholak's Figures 2 and 3 in :mod:`netproof.constructions.chiang2022.experiments`, collected by
name in :data:`netproof.constructions.EXPERIMENTS`): it builds the :class:`Curve` objects, and
this module computes their points. :func:`experiment_rows` runs an experiment by its
declaration (what ``netproof plot NAME`` does); :func:`rows` runs any curves.

Each point is the mean over ``strings`` uniformly random words of the experiment's alphabet of
length |w| (seeded by the length: the same words for every curve at one length); the CSV also
has the standard deviation of the per-word cross-entropy, the accuracy, and the smallest |logit|
met. The networks run on the torch backend (:mod:`netproof.symbolic.torch_backend`, float64 by
default): these figures are float experiments, not proofs.

The data pipeline (:func:`rows`, :func:`experiment_rows`, :func:`write_csv`) needs only a
*runner*, a function ``(network, words) -> logits``; :func:`torch_runner` is the one the command
uses. Only :func:`plot_rows` needs matplotlib (the ``plot`` extra).

May import: the claims vocabulary (the experiment and curve types) and :mod:`netproof.symbolic`
(torch and matplotlib inside functions); never a paper module or the registry.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from netproof.symbolic import Network
from netproof.symbolic.errors import MissingExtraError
from netproof.verifier.claims import Curve, Experiment, ExperimentError

__all__ = [
    "CSV_FIELDS",
    "Curve",
    "MissingExtraError",
    "PlotError",
    "Row",
    "Runner",
    "cross_entropy_bits",
    "experiment_rows",
    "plot_rows",
    "random_words",
    "rows",
    "torch_runner",
    "write_csv",
]

Runner = Callable[[Network, Sequence[tuple[str, ...]]], Sequence[float]]
"""Logits of a classifier network on a batch of words (any float backend)."""

PlotError = ExperimentError
"""A figure request that cannot be made (unknown curve name, bad lengths, a network the torch
backend does not compile): the vocabulary's :class:`~netproof.verifier.claims.ExperimentError`,
so one ``except`` catches what an experiment's declaration and what this module refuse."""


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


def random_words(
    length: int, count: int, rng: random.Random, alphabet: Sequence[str] = ("0", "1")
) -> list[tuple[str, ...]]:
    """``count`` words drawn uniformly from alphabet^length (default {0,1}^length)."""
    return [tuple(rng.choice(alphabet) for _ in range(length)) for _ in range(count)]


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


def rows(
    figure: str,
    curves: Sequence[Curve],
    *,
    lengths: Sequence[int],
    strings: int = 1000,
    seed: int = 2022,
    alphabet: Sequence[str] = ("0", "1"),
    runner: Runner | None = None,
    progress: Callable[[str], None] | None = None,
    started: Callable[[str, int], None] | None = None,
) -> list[Row]:
    """The points of ``curves`` (one :class:`Row` per curve and length), labelled ``figure``:
    at each length the same ``strings`` random words of ``alphabet`` (seeded by ``seed`` and the
    length) for every curve. ``runner`` defaults to :func:`torch_runner` (float64, cpu).
    ``started`` hears each point as it begins (``"[k/total] figure curve |w|=n"`` and the number
    of words), ``progress`` a line as it is done."""
    if strings < 1:
        raise PlotError(f"strings={strings} must be at least 1")
    bad = [n for n in lengths if n < 1]
    if bad:
        raise PlotError(
            f"lengths {bad} must be >= 1 (the empty word has s = 0 and Proposition 2 is undefined there)"
        )
    run = runner or torch_runner()
    out: list[Row] = []
    for n in lengths:
        # The same words for every curve at one length (seeded by the length), as in a paired experiment.
        words = random_words(n, strings, random.Random(seed * 1_000_003 + n), alphabet)
        for curve in curves:
            if started is not None:
                started(
                    f"[{len(out) + 1}/{len(lengths) * len(curves)}] {figure} {curve.name} |w|={n}",
                    len(words),
                )
            labels = [curve.language.contains(w) for w in words]
            logits = list(run(curve.network, words))
            ces = [cross_entropy_bits(s, y) for s, y in zip(logits, labels, strict=True)]
            mean = math.fsum(ces) / len(ces)
            sd = math.sqrt(math.fsum((c - mean) ** 2 for c in ces) / len(ces))
            acc = sum((s > 0) == y for s, y in zip(logits, labels, strict=True)) / len(words)
            out.append(
                Row(
                    figure=figure,
                    curve=curve.name,
                    length=n,
                    strings=strings,
                    ce_bits=mean,
                    ce_sd=sd,
                    accuracy=acc,
                    min_abs_logit=min(abs(s) for s in logits),
                )
            )
            if progress is not None:
                progress(f"{figure} {curve.name:20} |w|={n:<5} CE={mean:.4f} bits  acc={acc:.3f}")
    return out


def experiment_rows(
    experiment: Experiment,
    names: Sequence[str] = (),
    values: Sequence[str] | None = None,
    *,
    lengths: Sequence[int] | None = None,
    strings: int = 1000,
    seed: int = 2022,
    runner: Runner | None = None,
    progress: Callable[[str], None] | None = None,
    started: Callable[[str, int], None] | None = None,
) -> list[Row]:
    """The points of a declared experiment: its curves for ``names`` and ``values`` (what the
    user gave; see :class:`~netproof.verifier.claims.Experiment`), at ``lengths`` (default the
    experiment's own), labelled with its figure id. ``netproof plot NAME`` is this call with the
    experiment looked up by name, then :func:`write_csv` and :func:`plot_rows`."""
    curves = experiment.curves(names, values)
    return rows(
        experiment.figure,
        curves,
        lengths=lengths or experiment.lengths,
        strings=strings,
        seed=seed,
        alphabet=experiment.alphabet,
        runner=runner or torch_runner(),
        progress=progress,
        started=started,
    )


def torch_runner(*, dtype: str = "float64", device: str = "cpu") -> Runner:
    """A runner on the torch backend (:func:`netproof.symbolic.torch_backend.run_batch`, which chunks the
    words itself); the logits come back as Python floats."""
    try:
        from netproof.symbolic.torch_backend import compile as compile_net
        from netproof.symbolic.torch_backend import run_batch, unsupported
    except ImportError as exc:
        raise MissingExtraError(
            f"the figures run on the torch backend, which needs torch ({exc}); pip install -e '.[torch]'"
        ) from exc

    def run(net: Network, words: Sequence[tuple[str, ...]]) -> list[float]:
        reason = unsupported(net)
        if reason is not None:
            raise PlotError(f"a curve's network is not supported by the torch backend: {reason}")
        if not words:
            return []
        batch = run_batch(compile_net(net, dtype=dtype, device=device), list(words))
        return [
            float("nan") if x is None else x for x in (batch.logit(i) for i in range(len(words)))
        ]

    return run


# --------------------------------------------------------------------------- output

CSV_FIELDS = (
    "figure",
    "curve",
    "length",
    "strings",
    "ce_bits",
    "ce_sd",
    "accuracy",
    "min_abs_logit",
)


def write_csv(rows: Sequence[Row], path: str | Path) -> None:
    """The rows as CSV (one line per point, floats with 10 significant digits)."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_FIELDS)
        for r in rows:
            w.writerow(
                [
                    r.figure,
                    r.curve,
                    r.length,
                    r.strings,
                    f"{r.ce_bits:.10g}",
                    f"{r.ce_sd:.10g}",
                    f"{r.accuracy:.10g}",
                    f"{r.min_abs_logit:.10g}",
                ]
            )


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError(
            f"plots need matplotlib ({exc}); install the plot extra: pip install -e '.[plot]'"
        ) from exc
    return plt


def plot_rows(
    rows: Sequence[Row], path: str | Path, *, title: str = "", accuracy: bool = False
) -> None:
    """A PNG: cross-entropy (bits) against |w| on a log axis, one line per curve; with
    ``accuracy`` (an experiment's ``accuracy_panel``, e.g. Figure 3) a second panel shows the
    accuracy."""
    plt = _pyplot()
    curves: dict[str, list[Row]] = {}
    for r in rows:
        curves.setdefault(r.curve, []).append(r)
    fig, axes = plt.subplots(
        1, 2 if accuracy else 1, figsize=(11 if accuracy else 7, 4.5), squeeze=False
    )
    ax = axes[0][0]
    for name, pts in curves.items():
        ax.plot(
            [p.length for p in pts], [p.ce_bits for p in pts], marker="o", markersize=3, label=name
        )
    ax.set_xscale("log")
    ax.set_xlabel("|w|")
    ax.set_ylabel("cross-entropy (bits)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    if accuracy:
        ax2 = axes[0][1]
        for name, pts in curves.items():
            ax2.plot(
                [p.length for p in pts],
                [p.accuracy for p in pts],
                marker="o",
                markersize=3,
                label=name,
            )
        ax2.set_xscale("log")
        ax2.set_xlabel("|w|")
        ax2.set_ylabel("accuracy")
        ax2.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=120)
    plt.close(fig)
