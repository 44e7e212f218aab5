"""The margin histogram of a model check as a picture: decided words by their margin
(the distance of the logit's enclosure from 0, in tenths of a decade), correct and wrong words side by side.

May import the report (:mod:`.check`); matplotlib inside functions (the ``plot`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netproof.symbolic.errors import MissingExtraError

from .check import ModelReport

__all__ = ["plot_margins"]


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
