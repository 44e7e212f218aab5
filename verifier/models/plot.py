"""The margin histogram of a model check as a picture: decided words by their margin
(the distance of the logit's enclosure from 0, in tenths of a decade), correct and wrong words side by side;
and a branch-and-bound search over the word trie (:func:`plot_search`).

May import the report (:mod:`.check`); matplotlib inside functions (the ``plot`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netproof.symbolic.errors import MissingExtraError

from .check import ModelReport

__all__ = ["plot_margins", "plot_search"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError(
            f"the margin picture needs matplotlib ({exc}); install the plot extra: pip install -e '.[plot]'"
        ) from exc
    return plt


def plot_margins(report: ModelReport, path: str | Path) -> None:
    """A PNG histogram over the margin (the distance of the logit's enclosure from 0, log axis, bins
    of a tenth of a decade): correct words in blue, wrong words in red (undecided words have no
    margin and are counted in the title)."""
    plt = _pyplot()
    keys = sorted(report.fine_margins)
    fig, ax = plt.subplots(figsize=(7, 4))
    for column, label, color in ((0, "correct", "#4c72b0"), (1, "wrong", "#dd5555")):
        # each bin [10^(k/10), 10^((k+1)/10)) is split in two halves: correct left, wrong right
        xs = [10 ** ((k + column / 2) / 10) for k in keys if report.fine_margins[k][column]]
        widths = [x * (10**0.05 - 1) for x in xs]
        counts = [report.fine_margins[k][column] for k in keys if report.fine_margins[k][column]]
        ax.bar(xs, counts, width=widths, align="edge", label=label, color=color, alpha=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("margin: distance of the logit's enclosure from 0")
    ax.set_ylabel("words")
    t = report.totals
    ax.set_title(
        f"{report.network} vs {report.language}, |w| <= {report.max_n}: "
        f"{t.correct} correct, {t.wrong} wrong, {t.undecided} undecided",
        fontsize=9,
    )
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110)
    plt.close(fig)


def plot_search(report: ModelReport, path: str | Path, *, title: str = "") -> None:
    """A PNG of a branch-and-bound search (:mod:`.bnb`, ``report.search``): left, for each length
    (row) and depth of the trie (column), the share of that length's words settled by one bound
    at that depth (log colour); right, per length, the words settled by bounds and the words
    enumerated (log axis)."""
    if report.search is None:
        raise ValueError("plot_search needs the report of a branch-and-bound run (--search bnb)")
    plt = _pyplot()
    import math

    rows = report.search["rows"]
    lengths = [r["length"] for r in rows]
    depth = max([int(d) for r in rows for d in r["by_depth"]] + [1])
    grid = [[math.nan] * (depth + 1) for _ in rows]
    for i, r in enumerate(rows):
        total = r["settled"] + r["enumerated"]
        for d, (_subtrees, words, _bounds) in r["by_depth"].items():
            if words and total:
                grid[i][int(d)] = math.log10(words / total)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    im = left.imshow(
        grid,
        aspect="auto",
        origin="lower",
        cmap="viridis",
        vmin=-8,
        vmax=0,
        interpolation="nearest",
    )
    left.set_yticks(range(len(lengths)))
    left.set_yticklabels([str(n) if n % 4 == 0 else "" for n in lengths], fontsize=7)
    step = max(1, (depth + 1) // 12)
    left.set_xticks(range(0, depth + 1, step))
    left.set_xlabel("depth in the trie (symbols fixed)")
    left.set_ylabel("word length n")
    left.set_title("share of the length's words settled by one bound at that depth", fontsize=9)
    fig.colorbar(im, ax=left, label="log10 share")
    settled = [max(r["settled"], 0) for r in rows]
    enumerated = [r["enumerated"] for r in rows]
    right.semilogy(lengths, [s or math.nan for s in settled], "o-", ms=3, label="settled by bounds")
    right.semilogy(lengths, [e or math.nan for e in enumerated], "s-", ms=3, label="enumerated")
    right.set_xlabel("word length n")
    right.set_ylabel("words")
    right.grid(True, alpha=0.3)
    right.legend(fontsize=8)
    t = report.totals
    right.set_title(
        f"{t.words:.3g} words: {t.correct:.3g} correct, {t.wrong} wrong, {t.undecided} undecided",
        fontsize=9,
    )
    fig.suptitle(title or f"{report.network} vs {report.language}, branch and bound", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110)
    plt.close(fig)
