"""Short displays of traces for people: a one-line repr, a compact text summary and notebook HTML.

``print(trace)`` gives :func:`trace_text` (under 40 lines for a word of a few symbols: the
attention of every head as one line of query → selected keys, and the final residual state as a
table with one row per named dim that is not zero everywhere). :func:`format_trace` is the public
formatter behind it: ``states="all"`` prints the input state and then, after each sublayer, its
heads and the dims it changed (``netproof run --trace``), ``weights=True`` adds a softmax head's weights row by row,
and ``value=`` chooses how a value prints (the CLI passes certified decimals,
:func:`netproof.verifier.cli.values.certified_text`); a table wider than ``width`` is cut into
blocks of positions. ``repr(trace)`` one line
(:func:`trace_repr`); Jupyter shows :func:`trace_html` (every head's attention matrix over
positions, shaded by weight and labelled with the tokens, the final state as a table and the
earlier states folded). Values are shown as the interpreter computed them: a Fraction as ``p/q``,
an irrational sympy value and an interval as a decimal marked ``≈``.

The trace is read through its fields only (``backend``, ``network``, ``tokens``, ``positions``,
``states``, ``selections``, ``output``, ``accepted``), so this module imports nothing of the
interpreters: :mod:`netproof.symbolic.evaluation` calls it. May import the standard library.
"""

from __future__ import annotations

import decimal
import html
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Literal

__all__ = [
    "attention_html",
    "attention_matrix",
    "format_trace",
    "heads_of",
    "network_title",
    "pre_html",
    "rows_table",
    "state_html",
    "summary_html",
    "to_float",
    "trace_html",
    "trace_repr",
    "trace_text",
    "value_text",
]

MAX_TEXT_DIMS = 24
"""The most dims :func:`trace_text` prints of the final state (the rest are counted)."""

CELL = 7
"""The width of a value in :func:`trace_text`'s table; longer values are cut with ``…``."""


def to_float(v: Any) -> float:
    """A value of any interpreter as a float (a Fraction, a sympy number, an mpmath interval's
    midpoint); ``nan`` for an undefined entry (``None``)."""
    if v is None:
        return float("nan")
    if isinstance(v, (Fraction, int, float)):
        return float(v)
    if hasattr(v, "delta") and hasattr(v, "mid"):  # an mpmath interval
        return float(v.mid.a)
    if hasattr(v, "args") and hasattr(v, "is_Add"):  # a sympy expression
        try:
            return float(_evaluate(v, {}))
        except (ArithmeticError, ValueError, TypeError, RecursionError):
            pass
    return float(v)


_DIGITS = decimal.Context(prec=50, Emax=10**6, Emin=-(10**6))
"""50 significant digits: a displayed value of 6 survives any cancellation these networks make."""


def _evaluate(e: Any, memo: dict[Any, decimal.Decimal]) -> decimal.Decimal:
    """A sympy expression to 50 digits, each shared subexpression once (sympy's own ``float``
    walks the expression as a tree: seconds for one of PARITY-LN's logits, whose subexpressions
    are shared many times over). Rational, Add, Mul, Pow, exp and log; anything else through
    ``float``."""
    hit = memo.get(e)
    if hit is not None:
        return hit
    c = _DIGITS
    if e.is_Rational:
        out = c.divide(decimal.Decimal(int(e.p)), decimal.Decimal(int(e.q)))
    elif e.is_Add:
        out = decimal.Decimal(0)
        for a in e.args:
            out = c.add(out, _evaluate(a, memo))
    elif e.is_Mul:
        out = decimal.Decimal(1)
        for a in e.args:
            out = c.multiply(out, _evaluate(a, memo))
    elif e.is_Pow:
        base, exponent = _evaluate(e.args[0], memo), e.args[1]
        if exponent.is_Integer:
            out = c.power(base, int(exponent))
        else:
            out = c.exp(c.multiply(_evaluate(exponent, memo), c.ln(base)))
    elif type(e).__name__ == "exp":
        out = c.exp(_evaluate(e.args[0], memo))
    elif type(e).__name__ == "log" and len(e.args) == 1:
        out = c.ln(_evaluate(e.args[0], memo))
    else:
        out = decimal.Decimal(repr(float(e)))
    memo[e] = out
    return out


def value_text(v: Any, digits: int = 6) -> str:
    """A value as a short text: ``p/q`` for a rational, ``≈`` and ``digits`` significant digits
    for an irrational or an interval, ``·`` for an undefined entry."""
    if v is None:
        return "·"
    if isinstance(v, (Fraction, int)):
        return str(v)
    if getattr(v, "is_Rational", False):
        return str(v)
    return f"≈{to_float(v):.{digits}g}"


def heads_of(trace: Any) -> list[tuple[str, str]]:
    """The (layer, head) pairs of the trace's selections, in the order they were computed."""
    seen: dict[tuple[str, str], None] = {}
    for s in trace.selections:
        seen.setdefault((s.layer, s.head), None)
    return list(seen)


def attention_matrix(trace: Any, layer: str, head: str) -> tuple[tuple[Any, ...], ...]:
    """Head ``head`` of ``layer``'s weights: row ``t`` is query token ``t``'s weights over the key
    tokens (0 where masked), exact as the interpreter computed them."""
    rows: dict[int, tuple[Any, ...]] = {}
    for s in trace.selections:
        if s.layer == layer and s.head == head:
            rows[s.position] = s.weights
    if not rows:
        known = (
            ", ".join(f"{lay}/{h}" for lay, h in heads_of(trace))
            or "none (the network has no attention)"
        )
        raise KeyError(f"no attention head {layer!r}/{head!r} in this trace; heads: {known}")
    return tuple(rows[t] for t in sorted(rows))


def trace_repr(trace: Any) -> str:
    """One line: the backend, the network's name, the word, n, the output and the accept bit."""
    word = "".join(trace.word) if all(len(s) == 1 for s in trace.word) else " ".join(trace.word)
    out = "" if trace.output is None else f" output={value_text(trace.output)}"
    acc = "" if trace.accepted is None else f" accepted={trace.accepted}"
    return (
        f"<Trace {trace.backend} {network_title(trace.network)} word={word!r} n={trace.n}{out}{acc}: "
        f"{len(trace.states)} states, {len(heads_of(trace))} heads>"
    )


def _cut(text: str, width: int = CELL) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ranges(items: Sequence[int]) -> str:
    """Positions as runs: ``1,2,3,5`` becomes ``1-3,5``."""
    runs: list[list[int]] = []
    for x in items:
        if runs and x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    return ",".join(str(r[0]) if len(r) < 3 else f"{r[0]}-{r[-1]}" for r in runs)


def network_title(net: Any) -> str:
    """The network's name with its builder parameters, e.g. ``dyck(k=2, depth=2)``."""
    params = getattr(net, "params", ())
    name: str = net.name
    return name + (f"({', '.join(f'{k}={v}' for k, v in params)})" if params else "")


def _selection_text(trace: Any, sel: Any) -> str:
    """Where one query went: ``i→j`` (hardmax), ``i→j,k`` (a tie averaged), ``i→∅`` (an empty
    mask), or the heaviest key with ``~`` for a softmax head."""
    pos = trace.positions
    i = pos[sel.position]
    if sel.selected is not None:
        return f"{i}→" + (_ranges([pos[j] for j in sel.selected]) or "∅")
    ws = [to_float(w) for w in sel.weights]
    best = max(range(len(ws)), key=lambda j: ws[j]) if ws else None
    return f"{i}→∅" if best is None else f"{i}~{pos[best]}"


_ATTENTION_KEY = "attention (query i → selected positions; ~ the heaviest key of a softmax head):"


def _attention_lines(
    trace: Any,
    layer: str | None = None,
    *,
    value: Callable[[Any], str] = value_text,
    weights: bool = False,
) -> list[str]:
    """One line per head (of ``layer``, or of every layer): query → selected keys; with
    ``weights`` a softmax head's weights follow, one line per query."""
    by_head: dict[tuple[str, str], list[Any]] = {}
    for s in trace.selections:
        if layer is None or s.layer == layer:
            by_head.setdefault((s.layer, s.head), []).append(s)
    if not by_head:
        return []
    width = max(len(f"{lay}/{h}") for lay, h in by_head)
    lines = [_ATTENTION_KEY] if layer is None else []
    for (lay, h), sels in by_head.items():
        lines.append(
            f"  {f'{lay}/{h}':<{width}}  " + " ".join(_selection_text(trace, s) for s in sels)
        )
        if weights:
            for s in sels:
                if s.selected is None:
                    lines.append(
                        f"    i={trace.positions[s.position]} weights: "
                        + " ".join(value(w) for w in s.weights)
                    )
    return lines


def _state_lines(
    trace: Any,
    state: Any,
    *,
    value: Callable[[Any], str] = value_text,
    max_dims: int | None = MAX_TEXT_DIMS,
    width: int = 100,
    previous: Any = None,
) -> list[str]:
    """``state`` as a table: a row per dim not zero everywhere (with ``previous``, the state
    before it: a row per dim that changed), a column per position."""
    dims = trace.network.dims
    positions = trace.positions
    tokens = trace.tokens if len(trace.tokens) == len(state.rows) else ("".join(trace.tokens),)
    if previous is not None and len(previous.rows) == len(state.rows):
        shown = [
            d
            for k, d in enumerate(dims)
            if any(
                row[k] != before[k] for row, before in zip(state.rows, previous.rows, strict=True)
            )
        ]
        if not shown:
            return [f"state after {state.label!r}: no dim changed"]
    else:
        previous = None
        shown = [
            d
            for k, d in enumerate(dims)
            if any(row[k] is not None and to_float(row[k]) != 0 for row in state.rows)
        ]
    hidden = 0 if max_dims is None else len(shown) - max_dims
    shown = shown if max_dims is None else shown[:max_dims]
    # a dim named like a header row ("i", "token") is labelled "dim i": no two rows read "i"
    labels = [f"dim {d}" if d in _HEADER_ROWS else d for d in shown]
    name_width = max([5, *(len(label) for label in labels)])
    table = [[str(p) for p in positions[: len(state.rows)]], [_cut(t) for t in tokens]]
    table += [[_cut(value(row[dims.index(d)]), 2 * CELL) for row in state.rows] for d in shown]
    cols = [max(len(r[c]) for r in table) for c in range(len(state.rows))]
    what = "the dims it changed" if previous is not None else "dims not zero everywhere"
    lines = [f"state after {state.label!r} ({what}; columns are positions):"]
    blocks: list[list[int]] = [[]]
    used = name_width + 3
    for c, w in enumerate(cols):  # positions in blocks that fit ``width``
        if blocks[-1] and used + w + 1 > width:
            blocks.append([])
            used = name_width + 3
        blocks[-1].append(c)
        used += w + 1
    for block in blocks:
        if len(blocks) > 1:
            lines.append(f"  positions {positions[block[0]]}–{positions[block[-1]]}:")
        for name, cells in zip([*_HEADER_ROWS, *labels], table, strict=True):
            lines.append(
                f"  {name:<{name_width}} " + " ".join(f"{cells[c]:>{cols[c]}}" for c in block)
            )
    if hidden > 0:
        lines.append(f"  … {hidden} more dims (trace.states_array() has every value)")
    if not shown:
        lines.append("  (every dim is 0)")
    return lines


_HEADER_ROWS = ("i", "token")  # the rows above a state table's dims: positions, tokens


def format_trace(
    trace: Any,
    *,
    states: Literal["final", "all"] = "final",
    value: Callable[[Any], str] | None = None,
    weights: bool = False,
    width: int = 100,
) -> str:
    """The trace as text: a header (network, word, backend, n, output, verdict), the attention
    of every head as one line of query → selected keys, and residual states as tables (a row per
    named dim that is not zero everywhere, a column per position).

    ``states="final"`` (``print(trace)``): the final state, at most :data:`MAX_TEXT_DIMS` dims,
    and the labels of every state. ``states="all"``: the input state, then after each sublayer
    its heads and the dims it changed (every one of them). ``value`` formats one value (default :func:`value_text`, 3 digits in
    tables); ``weights`` adds each softmax head's weights per query; blocks of positions keep a
    table within ``width`` characters."""
    shown = value if value is not None else (lambda v: value_text(v, 3))
    word = "".join(trace.word) if all(len(s) == 1 for s in trace.word) else " ".join(trace.word)
    head = f"trace of {network_title(trace.network)} on {repr(word) if word else 'ε'} ({trace.backend}, n = {trace.n})"
    if trace.output is not None:
        head += f": output {value_text(trace.output) if value is None else value(trace.output)}"
    if trace.accepted is not None:
        head += ", accepted" if trace.accepted else ", rejected"
    if states == "final":
        lines = [
            head,
            *_attention_lines(trace, value=shown, weights=weights),
            *_state_lines(trace, trace.final, value=shown, width=width),
        ]
        lines.append(
            "states: "
            + ", ".join(s.label for s in trace.states)
            + "  (trace.state(label), trace.states_array())"
        )
        return "\n".join(lines)
    lines = [head]
    if trace.selections:
        lines.append(_ATTENTION_KEY)
    for k, state in enumerate(trace.states):
        lines.append("")
        lines += _attention_lines(trace, state.label, value=shown, weights=weights)
        lines += _state_lines(
            trace,
            state,
            value=shown,
            max_dims=None,
            width=width,
            previous=trace.states[k - 1] if k else None,
        )
    return "\n".join(lines)


def trace_text(trace: Any) -> str:
    """The trace for ``print``: a header, one line per attention head, the final residual state
    as a table, and the labels of every state (:func:`format_trace` with its defaults)."""
    return format_trace(trace)


# --------------------------------------------------------------------------- HTML

_STYLE = (
    "<style>.np-trace table{border-collapse:collapse;margin:4px 12px 8px 0;font-family:monospace;font-size:12px}"
    ".np-trace td,.np-trace th{border:1px solid #ccc;padding:1px 4px;text-align:right}"
    ".np-trace th{background:#f4f4f4}.np-trace .np-maps{display:flex;flex-wrap:wrap}"
    ".np-trace caption{font-weight:bold;text-align:left}</style>"
)


def _shade(w: float) -> str:
    level = 0.0 if math.isnan(w) else max(0.0, min(1.0, w))
    g = int(255 - 175 * level)
    return f"background:rgb({g},{g},255)"


def attention_html(trace: Any, layer: str, head: str) -> str:
    """One head's attention matrix as an HTML table: rows are queries, columns keys, each cell
    shaded by its weight and showing it exactly (empty where the weight is 0)."""
    m = attention_matrix(trace, layer, head)
    labels = [f"{p} {html.escape(t)}" for p, t in zip(trace.positions, trace.tokens, strict=False)]
    out = [
        f"<table><caption>{html.escape(layer)} / {html.escape(head)}</caption><tr><th>query \\ key</th>"
    ]
    out += [f"<th>{lab}</th>" for lab in labels[: len(m[0]) if m else 0]]
    out.append("</tr>")
    for t, row in enumerate(m):
        out.append(f"<tr><th>{labels[t] if t < len(labels) else t}</th>")
        for w in row:
            f = to_float(w)
            text = "" if f == 0 else html.escape(value_text(w))
            out.append(f'<td style="{_shade(f)}">{text}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def state_html(trace: Any, state: Any) -> str:
    """One residual state as an HTML table: a row per named dim, a column per position."""
    dims = trace.network.dims
    tokens = trace.tokens if len(trace.tokens) == len(state.rows) else ("".join(trace.tokens),)
    out = [f"<table><caption>after {html.escape(state.label)}</caption><tr><th>dim \\ i</th>"]
    out += [f"<th>{p} {html.escape(t)}</th>" for p, t in zip(trace.positions, tokens, strict=False)]
    out.append("</tr>")
    for k, d in enumerate(dims):
        cells = "".join(f"<td>{html.escape(value_text(row[k]))}</td>" for row in state.rows)
        out.append(f"<tr><th>{html.escape(d)}</th>{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def trace_html(trace: Any) -> str:
    """The trace for a notebook: the header line, every head's attention matrix, the final state
    as a table and the earlier states folded (``<details>``, no JavaScript)."""
    parts = [
        _STYLE,
        '<div class="np-trace">',
        f"<p>{html.escape(trace_text(trace).splitlines()[0])}</p>",
    ]
    heads = heads_of(trace)
    if heads:
        parts.append(
            '<div class="np-maps">'
            + "".join(attention_html(trace, lay, h) for lay, h in heads)
            + "</div>"
        )
    parts.append(state_html(trace, trace.final))
    for state in trace.states[:-1]:
        parts.append(
            f"<details><summary>state after {html.escape(state.label)}</summary>{state_html(trace, state)}</details>"
        )
    parts.append("</div>")
    return "".join(parts)


def pre_html(text: str) -> str:
    """Text (a network's printed form) as an escaped ``<pre>`` block."""
    return f"<pre>{html.escape(text)}</pre>"


def summary_html(title: str, rows: Sequence[tuple[str, str]], text: str, what: str) -> str:
    """A notebook display that starts with a summary: ``title`` in bold, the key–value ``rows``,
    then ``text`` (a network's printed form) folded under a ``<details>`` line naming ``what``
    it is and how many lines it has (no JavaScript)."""
    lines = text.count("\n") + 1
    return (
        f"<div><b>{html.escape(title)}</b>{rows_table(rows)}"
        f"<details><summary>{html.escape(what)} ({lines} lines)</summary>{pre_html(text)}"
        "</details></div>"
    )


def rows_table(rows: Sequence[tuple[str, str]]) -> str:
    """Key–value pairs as a two-column HTML table."""
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"
