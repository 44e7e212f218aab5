"""Attention maps: one exact trace drawn as a picture (PNG, SVG, or a self-contained HTML page).

For each attention head of each layer, the matrix of weights over positions (rows are queries,
columns keys, both labelled with the position and its token): hardmax selections are 1 (or 1/k on
each of k averaged ties), softmax weights as the interpreter computed them, written in the cell
where rational. Under the maps, the final residual state as a table by named dimension (one row
per dim that is not zero everywhere). The colours are floats of the exact values; the numbers
written in the cells are the exact ones.

Only encoder-style transformers (:class:`~netproof.symbolic.ir.Network`) are drawn; an
encoder–decoder or a recurrent network is refused by :func:`draw` with one line.

May import :mod:`netproof.symbolic` and its display helpers; matplotlib (the ``plot`` extra) inside
functions. Never a paper module.
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

from netproof.symbolic.display import (
    attention_matrix,
    heads_of,
    network_title,
    state_html,
    to_float,
    value_text,
)
from netproof.symbolic.errors import MissingExtraError

__all__ = ["FORMATS", "PictureError", "attention_figure", "draw"]

FORMATS = ("png", "svg", "html")
"""The formats :func:`draw` writes, by file suffix."""


class PictureError(ValueError):
    """A picture that cannot be drawn (an unknown format, a network kind without attention maps)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError(
            f"attention maps need matplotlib ({exc}); install the plot extra: pip install 'netproof[plot]'"
        ) from exc
    return plt


def _cell_text(w: Any) -> str:
    f = to_float(w)
    if f == 0:
        return ""
    text = value_text(w, 2)
    return text if len(text) <= 5 else f"{f:.2f}"


def _word(trace: Any) -> str:
    return "".join(trace.word) if all(len(s) == 1 for s in trace.word) else " ".join(trace.word)


def attention_figure(trace: Any) -> Any:
    """A matplotlib figure of ``trace``: one panel per attention head, then the final state."""
    plt = _pyplot()
    heads = heads_of(trace)
    labels = [f"{p}\n{t}" for p, t in zip(trace.positions, trace.tokens, strict=False)]
    state = trace.final
    dims = trace.network.dims
    shown = [d for k, d in enumerate(dims) if any(r[k] is not None and to_float(r[k]) != 0 for r in state.rows)]
    cols = max(1, min(len(heads), 4))
    rows = -(-len(heads) // cols) if heads else 0
    n = trace.n
    panel = max(2.6, 0.42 * n + 1.2)
    table_h = 0.28 * (len(shown) + 2) + 0.6
    fig = plt.figure(figsize=(max(cols * panel, 0.6 * n + 2.5), rows * (panel + 0.4) + table_h + 0.8))
    grid = fig.add_gridspec(rows + 1, cols, height_ratios=[panel] * rows + [table_h])
    verdict = "" if trace.accepted is None else ("accepted" if trace.accepted else "rejected")
    output = "" if trace.output is None else f", output {value_text(trace.output)}"
    fig.suptitle(f"{network_title(trace.network)} on {_word(trace)!r} ({trace.backend}): {verdict}{output}", fontsize=11)
    for idx, (layer, head) in enumerate(heads):
        ax = fig.add_subplot(grid[idx // cols, idx % cols])
        m = attention_matrix(trace, layer, head)
        values = [[to_float(w) for w in row] for row in m]
        ax.imshow(values, cmap="Blues", vmin=0, vmax=1)
        ax.set_title(f"layer {layer}, head {head}", fontsize=9)
        ax.set_xticks(range(len(m[0])), labels[: len(m[0])], fontsize=7)
        ax.set_yticks(range(len(m)), labels[: len(m)], fontsize=7)
        ax.set_xlabel("key position", fontsize=8)
        ax.set_ylabel("query position", fontsize=8)
        for i, row in enumerate(m):
            for j, w in enumerate(row):
                text = _cell_text(w)
                if text:
                    ax.text(j, i, text, ha="center", va="center", fontsize=6,
                            color="white" if to_float(w) > 0.6 else "black")
    ax = fig.add_subplot(grid[rows, :])
    ax.axis("off")
    if shown:
        cells = [[value_text(r[dims.index(d)], 3) for r in state.rows] for d in shown]
        tokens = [f"{p} {t}" for p, t in zip(trace.positions, trace.tokens, strict=False)][: len(state.rows)]
        table = ax.table(cellText=cells, rowLabels=shown, colLabels=tokens, loc="center", cellLoc="center")
        table.auto_set_font_size(False)
        table.set_fontsize(7)
    ax.set_title(f"residual state after {state.label!r} (dims not zero everywhere)", fontsize=9)
    fig.tight_layout()
    return fig


def draw(trace: Any, path: str | Path) -> Path:
    """Write ``trace``'s attention maps to ``path``: ``.png`` or ``.svg`` (matplotlib), or ``.html``
    (a self-contained page: the figure as inline SVG and the trace's tables, no JavaScript)."""
    from netproof.symbolic.evaluation import Trace

    out = Path(path)
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise PictureError(f"--out {str(path)!r}: give a file ending in .png, .svg or .html")
    if not isinstance(trace, Trace):
        raise PictureError(
            f"attention maps are drawn for encoder transformers; {type(trace).__name__} is not one "
            "(encoder–decoders and recurrent networks: use `netproof run --trace`)"
        )
    plt = _pyplot()
    fig = attention_figure(trace)
    try:
        if suffix in ("png", "svg"):
            fig.savefig(out, dpi=150 if suffix == "png" else None)
        else:
            buf = io.StringIO()
            fig.savefig(buf, format="svg")
            svg = buf.getvalue()
            svg = svg[svg.index("<svg"):]
            title = html.escape(f"{network_title(trace.network)} on {_word(trace)!r}")
            states = "".join(
                f"<details><summary>state after {html.escape(s.label)}</summary>{state_html(trace, s)}</details>"
                for s in trace.states
            )
            page = (
                f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
                "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;font-family:monospace;"
                "font-size:12px}td,th{border:1px solid #ccc;padding:1px 4px;text-align:right}"
                "svg{max-width:100%;height:auto}</style></head><body>"
                f"<h1>{title}</h1>{svg}<h2>every residual state</h2>{states}</body></html>\n"
            )
            out.write_text(page, encoding="utf-8")
    finally:
        plt.close(fig)
    return out
