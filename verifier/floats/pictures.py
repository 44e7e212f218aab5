"""Pictures of one exact run: attention maps of an encoder transformer, one decoder step of an
encoder–decoder, the stack or memory of a recurrent network over time (PNG, SVG, or a
self-contained HTML page).

- **Encoder transformers** (:class:`~netproof.symbolic.evaluation.Trace`): for each attention
  head of each layer, the matrix of weights over positions (rows are queries, columns keys, both
  labelled with the position and its token): hardmax selections are 1 (or 1/k on each of k
  averaged ties), softmax weights as the interpreter computed them, written in the cell where
  rational. Under the maps, the final residual state as a table by named dimension (one row per
  dim that is not zero everywhere).
- **Encoder–decoders** (:class:`~netproof.symbolic.seq2seq.Seq2SeqTrace`): one decoder step t.
  On the left, the decoder–encoder attention of every step (rows t, columns the encoder
  positions; the chosen step framed; an optional note per step, e.g. the configuration of a
  simulated machine). On the right, every head of step t as one row of weights over its keys
  (encoder positions, or the decoder steps 0..t for self-attention), and the table of the named
  dims step t reads (y_t) and writes (after each sublayer, and ỹ_{t+1} = F(z_t)), changed cells
  shaded.
- **Recurrent networks** (:class:`~netproof.symbolic.recurrent.RecurrentTrace`): the weights
  of the stack (or memory) operations at every step, the stack after every step as a heatmap
  (one row per element component at each depth, top first; columns the steps, labelled with the
  symbol read), and the predicted next-symbol sets (with the targets when given).

The colours are floats of the exact values; the numbers written in the cells are the exact ones.

May import :mod:`netproof.symbolic` and its display helpers; matplotlib (the ``plot`` extra) inside
functions. Never a paper module.
"""

from __future__ import annotations

import html
import io
import sys
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

__all__ = [
    "FORMATS",
    "PictureError",
    "attention_figure",
    "draw",
    "recurrent_figure",
    "seq2seq_figure",
]

FORMATS = ("png", "svg", "html")
"""The formats :func:`draw` writes, by file suffix."""


class PictureError(ValueError):
    """A picture that cannot be drawn (an unknown format, a trace of another kind, a step that
    the run does not have, a word without steps)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        if (
            "ipykernel" not in sys.modules
        ):  # a notebook keeps its inline backend: the figures show there
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError(
            f"attention maps need matplotlib ({exc}); install the plot extra: pip install -e '.[plot]'"
        ) from exc
    return plt


def _cell_text(w: Any) -> str:
    f = to_float(w)
    if f == 0:
        return ""
    text = value_text(w, 2)
    return text if len(text) <= 5 else f"{f:.2f}"


def is_internal_dim(name: str) -> bool:
    """Whether dim ``name`` is one an operation keeps for itself, named ``OPERATION.PART`` by the
    RASP compilers (``seen_ab.k0``, ``count3.arg``), not one of the program's own values."""
    return "." in name


def _word(trace: Any) -> str:
    return "".join(trace.word) if all(len(s) == 1 for s in trace.word) else " ".join(trace.word)


def attention_figure(trace: Any) -> Any:
    """A matplotlib figure of ``trace``: one panel per attention head, then the final state."""
    plt = _pyplot()
    heads = heads_of(trace)
    labels = [f"{p}\n{t}" for p, t in zip(trace.positions, trace.tokens, strict=False)]
    state = trace.final
    dims = trace.network.dims
    nonzero = [
        d
        for k, d in enumerate(dims)
        if any(r[k] is not None and to_float(r[k]) != 0 for r in state.rows)
    ]
    # the program's dims first, then the dims an operation keeps for itself (`seen_ab.k0`)
    shown = [d for d in nonzero if not is_internal_dim(d)] + [
        d for d in nonzero if is_internal_dim(d)
    ]
    cols = max(1, min(len(heads), 4))
    rows = -(-len(heads) // cols) if heads else 0
    n = trace.n
    panel = max(2.6, 0.42 * n + 1.2)
    table_h = 0.28 * (len(shown) + 2) + 0.6
    fig = plt.figure(
        figsize=(max(cols * panel, 0.6 * n + 2.5), rows * (panel + 0.4) + table_h + 0.8)
    )
    grid = fig.add_gridspec(rows + 1, cols, height_ratios=[panel] * rows + [table_h])
    verdict = "" if trace.accepted is None else ("accepted" if trace.accepted else "rejected")
    output = "" if trace.output is None else f", output {value_text(trace.output)}"
    fig.suptitle(
        f"{network_title(trace.network)} on {_word(trace)!r} ({trace.backend}): {verdict}{output}",
        fontsize=11,
    )
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
        empty = {
            s.position
            for s in trace.selections
            if s.layer == layer and s.head == head and s.selected == ()
        }
        for i, row in enumerate(m):
            if i in empty:  # a hard head whose masked set was empty: it found no key
                ax.axhspan(i - 0.5, i + 0.5, facecolor="none", edgecolor="darkred", hatch="///")
                ax.text(
                    (len(row) - 1) / 2,
                    i,
                    "∅ no key",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="darkred",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
                )
            for j, w in enumerate(row):
                text = _cell_text(w)
                if text:
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="white" if to_float(w) > 0.6 else "black",
                    )
    ax = fig.add_subplot(grid[rows, :])
    ax.axis("off")
    if shown:
        cells = [[value_text(r[dims.index(d)], 3) for r in state.rows] for d in shown]
        tokens = [f"{p} {t}" for p, t in zip(trace.positions, trace.tokens, strict=False)][
            : len(state.rows)
        ]
        table = ax.table(
            cellText=cells,
            rowLabels=shown,
            colLabels=tokens,
            cellLoc="center",
            bbox=(0, 0, 1, 1),  # the table fills its panel: no blank band above or below it
        )
        table.auto_set_font_size(False)
        table.set_fontsize(7)
        for r, d in enumerate(shown, start=1):
            if is_internal_dim(d):
                for c in range(-1, len(tokens)):
                    table[r, c].get_text().set_color("0.45")
                    table[r, c].set_facecolor("0.96")
    internal = sum(is_internal_dim(d) for d in shown)
    ax.set_title(
        f"residual state after {state.label!r} (dims not zero everywhere"
        + (
            f"; in grey, last: {internal} {'dim' if internal == 1 else 'dims'} an operation keeps "
            "for itself"
            if internal
            else ""
        )
        + ")",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


MAX_STEP_ROWS = 40
"""The most decoder steps :func:`seq2seq_figure` shows in its overview (a window around the step)."""

MAX_TABLE_DIMS = 32
"""The most dims :func:`seq2seq_figure`'s table shows (the rest are counted in its title)."""

MAX_STACK_ROWS = 64
"""The most stack rows (depth × element components) :func:`recurrent_figure` shows."""


def _is_zero(v: Any) -> bool:
    return v is not None and to_float(v) == 0


def _writes_nothing(a: Any) -> bool:
    """An affine map whose weights and bias are all 0 (the value map of a head that attends
    only for show)."""
    return all(w == 0 for row in a.weights for w in row) and all(b == 0 for b in a.bias)


def _decoder_heads(net: Any) -> dict[tuple[str, str], tuple[Any, bool]]:
    """(attention layer, head) -> (the head, whether it is a decoder–encoder head)."""
    out: dict[tuple[str, str], tuple[Any, bool]] = {}
    for layer in net.decoder:
        for sub, cross in ((layer.self_attention, False), (layer.cross_attention, True)):
            for h in sub.block.heads:
                out[(sub.block.name, h.name)] = (h, cross)
    return out


MAX_WRITTEN = 16
"""Up to this many keys a row of weights has every value written in and every key labelled;
beyond it, every k-th key is labelled and the shading alone shows the weights."""


def _key_ticks(ax: Any, labels: list[str]) -> None:
    every = 1 if len(labels) <= MAX_WRITTEN else -(-len(labels) // 12)
    ticks = list(range(0, len(labels), every))
    ax.set_xticks(ticks, [labels[j] for j in ticks], fontsize=7)


def _weights_strip(ax: Any, weights: Any, labels: list[str]) -> None:
    """One row of weights as a shaded strip with the exact values written in."""
    ax.imshow([[to_float(w) for w in weights]], cmap="Blues", vmin=0, vmax=1, aspect="auto")
    _key_ticks(ax, labels)
    ax.set_yticks([])
    if len(weights) > MAX_WRITTEN:
        return
    for j, w in enumerate(weights):
        text = _cell_text(w)
        if text:
            ax.text(
                j,
                0,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if to_float(w) > 0.6 else "black",
            )


def seq2seq_figure(
    trace: Any, step: int, notes: dict[int, str] | None = None, caption: str = ""
) -> Any:
    """A matplotlib figure of decoder step ``step`` of an encoder–decoder ``trace``: the
    decoder–encoder attention of every step (framed: ``step``; ``notes[t]`` beside step t), the
    weights of every head at ``step``, and the named dims it reads and writes; ``caption``
    (e.g. how to read the notes) under it all."""
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    net = trace.network
    steps = trace.steps
    if not 0 <= step < len(steps):
        raise PictureError(
            f"--step {step}: the run has decoder steps 0..{len(steps) - 1}; choose one of them"
        )
    notes = notes or {}
    heads = _decoder_heads(net)
    cur = steps[step]
    cross = [(lay, h) for (lay, h), (_, is_cross) in heads.items() if is_cross]
    enc_labels = [f"{p}\n{t}" for p, t in zip(trace.positions, trace.tokens, strict=True)]
    lo = max(0, min(step - MAX_STEP_ROWS // 2, len(steps) - MAX_STEP_ROWS))
    shown_steps = range(lo, min(len(steps), lo + MAX_STEP_ROWS))
    # the dims of the table: nonzero somewhere in this step
    dims = net.dims
    labels = [s.label for s in cur.states]
    rows_all = [
        d for k, d in enumerate(dims) if any(not _is_zero(s.rows[0][k]) for s in cur.states)
    ]
    rows = rows_all[:MAX_TABLE_DIMS]
    n_heads = max(1, len(cur.selections))
    table_h = 0.24 * (len(rows) + 2) + 0.8
    over_h = 0.24 * len(shown_steps) + 1.6
    height = max(over_h, 1.0 * n_heads + table_h + 0.6) + 1.0 + (0.3 if caption else 0)
    note_w = max((len(notes.get(t, "")) for t in shown_steps), default=0) * 0.065
    left_w = 0.45 * trace.n * max(1, len(cross)) + 1.0 + note_w
    right_w = max(6.0, 0.55 * trace.n + 3.0, 1.05 * len(labels) + 2.2)
    fig = plt.figure(figsize=(left_w + right_w, height))
    outer = fig.add_gridspec(1, 2, width_ratios=[left_w, right_w], wspace=0.25)
    halting = "" if trace.halted_at is None else f", halts at t = {trace.halted_at}"
    title = f"{network_title(net)} on {_word(trace)!r} ({trace.backend}): decoder step t = {step} of 0..{len(steps) - 1}{halting}"
    if notes.get(step):
        title += f"\nat t = {step}: {notes[step]}"
    fig.suptitle(title, fontsize=11)
    # left: the decoder–encoder attention of every step
    left = outer[0].subgridspec(1, max(1, len(cross)), wspace=0.1)
    for c_idx, (lay, h) in enumerate(cross):
        ax = fig.add_subplot(left[0, c_idx])
        m = []
        for t in shown_steps:
            sel = next((x for x in steps[t].selections if x.layer == lay and x.head == h), None)
            m.append([0.0] * trace.n if sel is None else [to_float(w) for w in sel.weights])
        ax.imshow(m, cmap="Blues", vmin=0, vmax=1, aspect="auto")
        for r, t in enumerate(shown_steps):
            sel = next((x for x in steps[t].selections if x.layer == lay and x.head == h), None)
            for j, w in enumerate(() if sel is None or trace.n > MAX_WRITTEN else sel.weights):
                text = _cell_text(w)
                if text and text != "1":
                    ax.text(
                        j,
                        r,
                        text,
                        ha="center",
                        va="center",
                        fontsize=5,
                        color="white" if to_float(w) > 0.6 else "black",
                    )
        _key_ticks(ax, enc_labels)
        ax.set_xlabel("encoder position i, token", fontsize=8)
        ticks = [f"{notes[t]}   t={t}" if notes.get(t) else f"t={t}" for t in shown_steps]
        if steps[shown_steps[-1]].halts:
            last = shown_steps[-1]
            ticks[-1] = (
                f"{notes[last]}, halts   t={last}" if notes.get(last) else f"halts   t={last}"
            )
        ax.set_yticks(
            range(len(shown_steps)), ticks if c_idx == 0 else [], fontsize=6 if notes else 7
        )
        if c_idx == 0:
            ax.set_ylabel("decoder step t", fontsize=8)
        r = step - shown_steps[0]
        ax.add_patch(
            Rectangle((-0.5, r - 0.5), trace.n, 1, fill=False, edgecolor="crimson", linewidth=2)
        )
        ax.set_title(f"{lay}/{h} at every step\n(decoder–encoder attention)", fontsize=9)
    right = outer[1].subgridspec(2, 1, height_ratios=[1.0 * n_heads + 0.4, table_h], hspace=0.45)
    strips = right[0].subgridspec(n_heads, 1, hspace=1.6)
    if not cur.selections:
        ax = fig.add_subplot(strips[0, 0])
        ax.axis("off")
        ax.text(
            0.5,
            0.5,
            f"step {step} halts: y_t is in the halting set, no layer runs",
            ha="center",
            va="center",
            fontsize=9,
        )
    for k, sel in enumerate(cur.selections):
        ax = fig.add_subplot(strips[k, 0])
        head, is_cross = heads[(sel.layer, sel.head)]
        keys = enc_labels if is_cross else [f"t={j}" for j in range(len(sel.weights))]
        _weights_strip(ax, sel.weights, keys[: len(sel.weights)])
        what = (
            "decoder–encoder attention over the encoder positions"
            if is_cross
            else f"self-attention over the decoder steps 0..{step}"
        )
        picked = ""
        if sel.selected is not None and len(sel.selected) == 1:
            j = sel.selected[0]
            picked = (
                f": reads i = {trace.positions[j]} {trace.tokens[j]!r}"
                if is_cross
                else f": reads step {j}"
            )
        elif sel.selected is not None:
            picked = f": averages {len(sel.selected)} keys"
        silent = " (its value map is 0: writes nothing)" if _writes_nothing(head.value) else ""
        ax.set_title(f"{sel.layer}/{sel.head} at t = {step}, {what}{picked}{silent}", fontsize=8)
    ax = fig.add_subplot(right[1])
    ax.axis("off")
    if rows:
        names = {"y": f"y_{step} (reads)", "F": f"ỹ_{step + 1} = F(z_{step}) (writes)"}
        cols = [names.get(lab, f"after {lab}") for lab in labels]
        cells, colours = [], []
        for d in rows:
            k = dims.index(d)
            vals = [s.rows[0][k] for s in cur.states]
            cells.append([value_text(v, 4) for v in vals])
            colours.append(
                ["white"]
                + ["#fff3bf" if vals[c] != vals[c - 1] else "white" for c in range(1, len(vals))]
            )
        table = ax.table(
            cellText=cells,
            cellColours=colours,
            rowLabels=rows,
            colLabels=cols,
            loc="upper center",
            cellLoc="center",
        )
        table.auto_set_font_size(False)
        table.set_fontsize(7)
        table.auto_set_column_width(list(range(-1, len(cols))))
    more = f"; {len(rows_all) - len(rows)} more not shown" if len(rows_all) > len(rows) else ""
    ax.set_title(
        f"the named dims step t = {step} reads and writes (dims nonzero in this step{more}; changed cells shaded)",
        fontsize=9,
    )
    if caption:
        fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=8, style="italic")
    return fig


def recurrent_figure(trace: Any, targets: Any = None) -> Any:
    """A matplotlib figure of a recurrent ``trace``: the operation weights per step, the stack
    (or memory) after every step, and the predicted next-symbol sets (``targets``: the expected
    ones, one per step, drawn beside them)."""
    plt = _pyplot()
    steps = trace.steps
    if not steps:
        raise PictureError(
            "the empty word has no steps to draw; give a word of at least one symbol"
        )
    cell = trace.network.cell
    element = tuple(cell.element)
    width = len(element)
    is_memory = type(cell).__name__ == "BabyNTM"
    used = 0
    for st in steps:
        for d, e in enumerate(st.memory):
            if any(not _is_zero(v) for v in e):
                used = max(used, d + 1)
    depth = max(1, min(used, MAX_STACK_ROWS // max(1, width)))
    cut = used > depth
    ops = list(steps[0].decision)
    xlabels = [f"t={st.t}\n{st.symbol}" for st in steps]
    T = len(steps)
    stack_rows = depth * width
    fig_w = max(7.0, 0.62 * T + 3.4)
    fig_h = 0.3 * len(ops) + 0.26 * stack_rows + 0.9 + 3.4
    fig = plt.figure(figsize=(fig_w, fig_h))
    grid = fig.add_gridspec(
        3, 1, height_ratios=[0.3 * len(ops) + 0.5, 0.26 * stack_rows + 0.5, 1.1], hspace=0.75
    )
    verdict = ""
    if targets is not None:
        right = all(st.predicted == frozenset(tg) for st, tg in zip(steps, targets, strict=True))
        verdict = (
            ": every predicted set equals the target"
            if right
            else ": some predicted set differs from the target"
        )
    fig.suptitle(
        f"{network_title(trace.network)} on {_word(trace)!r} ({trace.backend}){verdict}",
        fontsize=11,
    )
    ax = fig.add_subplot(grid[0])
    m = [[to_float(st.decision[o]) for st in steps] for o in ops]
    ax.imshow(m, cmap="Oranges", vmin=0, vmax=1, aspect="auto")
    for i, o in enumerate(ops):
        for j, st in enumerate(steps):
            text = _cell_text(st.decision[o])
            if text:
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if m[i][j] > 0.6 else "black",
                )
    ax.set_yticks(range(len(ops)), ops, fontsize=7)
    ax.set_xticks(range(T), xlabels, fontsize=7)
    ax.set_title("operation weights at each step (the decision)", fontsize=9)
    ax = fig.add_subplot(grid[1])
    values = []
    texts = []
    for d in range(depth):
        for k in range(width):
            row, trow = [], []
            for st in steps:
                v = st.memory[d][k] if d < len(st.memory) else 0
                row.append(to_float(v))
                trow.append(_cell_text(v))
            values.append(row)
            texts.append(trow)
    top = max([1.0] + [x for r in values for x in r])
    ax.imshow(values, cmap="Greens", vmin=0, vmax=top, aspect="auto")
    for i, trow in enumerate(texts):
        for j, text in enumerate(trow):
            if text:
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if values[i][j] > 0.6 * top else "black",
                )
    where = "slot" if is_memory else "depth"
    first = "slot 0" if is_memory else "top"
    ylabels = [f"{first if d == 0 else f'{where} {d}'}  {e}" for d in range(depth) for e in element]
    ax.set_yticks(range(stack_rows), ylabels, fontsize=6 if stack_rows > 16 else 7)
    for d in range(1, depth):
        ax.axhline(d * width - 0.5, color="#555", linewidth=1)
    ax.set_xticks(range(T), xlabels, fontsize=7)
    ax.set_xlabel("step t and the symbol it reads", fontsize=8)
    ax.set_ylabel(
        "memory slot, component" if is_memory else "stack cell (top first), component", fontsize=8
    )
    what = (
        "memory after each step (slot 0 first)"
        if is_memory
        else "stack after each step (top first; empty cells are 0)"
    )
    if used == 0:
        what += ": empty at every step"
    if cut:
        what += f"; the first {depth} of {used} used {where}s shown"
    ax.set_title(what, fontsize=9)
    ax = fig.add_subplot(grid[2])
    ax.axis("off")

    def setname(s: Any) -> str:
        return "undecided" if s is None else (" ".join(sorted(s)) or "∅")

    cells = [[setname(st.predicted) for st in steps]]
    rowl = ["predicted next"]
    colours = [["white"] * T]
    if targets is not None:
        cells.append([setname(frozenset(tg)) for tg in targets])
        rowl.append("target")
        bad = [st.predicted != frozenset(tg) for st, tg in zip(steps, targets, strict=True)]
        colours = [["#ffc9c9" if b else "#d3f9d8" for b in bad], ["white"] * T]
    table = ax.table(
        cellText=cells,
        cellColours=colours,
        rowLabels=rowl,
        colLabels=[x.replace("\n", " ") for x in xlabels],
        loc="center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    ax.set_title("the next symbols predicted after each prefix", fontsize=9)
    return fig


def _figure(
    trace: Any, step: int | None, notes: dict[int, str] | None, caption: str, targets: Any
) -> Any:
    from netproof.symbolic.evaluation import Trace
    from netproof.symbolic.recurrent import RecurrentTrace
    from netproof.symbolic.seq2seq import Seq2SeqTrace

    if isinstance(trace, Trace):
        return attention_figure(trace)
    if isinstance(trace, Seq2SeqTrace):
        return seq2seq_figure(trace, 0 if step is None else step, notes, caption)
    if isinstance(trace, RecurrentTrace):
        return recurrent_figure(trace, targets)
    raise PictureError(
        f"{type(trace).__name__} is not a trace netproof draws (an encoder, encoder–decoder or recurrent trace)"
    )


def draw(
    trace: Any,
    path: str | Path,
    *,
    step: int | None = None,
    notes: dict[int, str] | None = None,
    caption: str = "",
    targets: Any = None,
) -> Path:
    """Write a picture of ``trace`` to ``path``: ``.png`` or ``.svg`` (matplotlib), or ``.html``
    (a self-contained page: the figure as inline SVG, and for an encoder transformer every
    residual state as a table; no JavaScript). An encoder transformer's trace gets its attention
    maps (:func:`attention_figure`), an encoder–decoder's decoder step ``step`` (default 0;
    ``notes``: a text per step, ``caption``: a line under it, see :func:`seq2seq_figure`), a recurrent network's stack over
    time (``targets``: the expected next-symbol sets, see :func:`recurrent_figure`)."""
    from netproof.symbolic.evaluation import Trace

    out = Path(path)
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise PictureError(f"--out {str(path)!r}: give a file ending in .png, .svg or .html")
    plt = _pyplot()
    fig = _figure(trace, step, notes, caption, targets)
    try:
        if suffix in ("png", "svg"):
            fig.savefig(out, dpi=150 if suffix == "png" else None, bbox_inches="tight")
        else:
            buf = io.StringIO()
            fig.savefig(buf, format="svg", bbox_inches="tight")
            svg = buf.getvalue()
            svg = svg[svg.index("<svg") :]
            title = html.escape(f"{network_title(trace.network)} on {_word(trace)!r}")
            states = ""
            if isinstance(trace, Trace):
                states = "<h2>every residual state</h2>" + "".join(
                    f"<details><summary>state after {html.escape(s.label)}</summary>{state_html(trace, s)}</details>"
                    for s in trace.states
                )
            page = (
                f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
                "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;font-family:monospace;"
                "font-size:12px}td,th{border:1px solid #ccc;padding:1px 4px;text-align:right}"
                "svg{max-width:100%;height:auto}</style></head><body>"
                f"<h1>{title}</h1>{svg}{states}</body></html>\n"
            )
            out.write_text(page, encoding="utf-8")
    finally:
        plt.close(fig)
    return out
