"""``netproof run``: evaluate a construction (or a network file) on one word and print the trace,
the logit or next-symbol sets, the accept bit and the reference language's answer (text or
``--json``); ``--backend torch`` runs it in floats (evidence, not proof), ``--check`` against the
exact interpreter. Recurrent networks print one line per symbol, encoder–decoders their decoder
steps.

Many words: ``@FILE`` (one word per line) or ``-`` (standard input) with more than one word
prints a table (word, accepted, member, logit or next symbols), or JSON lines with ``--json``
(each line the record ``--json`` prints for one word); every word is checked before any runs
(a bad one: exit 2 naming its line). One word prints as always. ``--trace`` prints every state
through :func:`netproof.symbolic.display.format_trace`, irrational values as certified decimals
(:func:`.values.certified_text`).

May import the campaign (constructions, parameters, the exact backend choice), the IR and its
interpreters, and the float checks (torch loads only with ``--backend torch``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic import (
    AttentionLayer,
    Classifier,
    FlatEmbedding,
    Hardmax,
    Network,
    RecurrentNetwork,
    Seq2Seq,
    SymbolicError,
    WordError,
    fingerprint,
    render,
    tokenize,
)
from netproof.symbolic.display import format_trace
from netproof.symbolic.size import network_size
from netproof.verifier.campaign.errors import EXIT_OK, EXIT_REFUTED
from netproof.verifier.campaign.evaluate import evaluate
from netproof.verifier.campaign.sources import (
    Session,
    build_network,
    parameter_values,
    parse_assignments,
    show_params,
)
from netproof.verifier.campaign.usermod import is_module_ref
from netproof.verifier.claims import Construction

from .checks import MAX_EXACT_SYMBOLS, MAX_RUN_WORDS, WordLines, read_words, run_length
from .usage import UsageError

__all__ = ["add_parser", "cmd_run"]


def add_parser(sub: Any) -> None:
    """Register ``netproof run`` on the CLI's subparsers."""
    p_run = sub.add_parser(
        "run", help="evaluate a construction on a word (or many: @FILE, - for stdin)"
    )
    p_run.add_argument(
        "name",
        help="construction (see `netproof list`), a user module (FILE.py or FILE.py:NAME) or a network file "
        "(FILE.json, from `netproof export`)",
    )
    p_run.add_argument(
        "word",
        help="the word: symbols, or space-separated tokens; @FILE or - (standard input): one word per line "
        "(several words print a table, or JSON lines with --json)",
    )
    p_run.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_run.add_argument(
        "--backend",
        choices=("auto", "exact", "sympy", "interval", "torch"),
        default="auto",
        help="auto (default): exact rationals if the network stays rational, else sympy, else intervals; "
        "torch: floats (evidence, not proof), with --device, --dtype and --check",
    )
    p_run.add_argument(
        "--device", default="cpu", help="for --backend torch: cpu (default), cuda or cuda:N"
    )
    p_run.add_argument(
        "--dtype",
        choices=("float64", "float32", "float16", "bfloat16"),
        default="float64",
        help="for --backend torch: the float format (default float64)",
    )
    p_run.add_argument(
        "--check",
        action="store_true",
        help="for --backend torch: also run the exact interpreter on the word and report agreement (exit 1 if they differ)",
    )
    p_run.add_argument(
        "--length",
        type=run_length,
        default=None,
        metavar="N",
        help="evaluate the word as the start of a string of total length N (special tokens included): "
        "positional features such as i/n use N (causal networks only; e.g. dyck-gen reading=G2)",
    )
    p_run.add_argument(
        "--trace", action="store_true", help="every residual state and attention selection"
    )
    p_run.add_argument("--json", action="store_true", help="print one JSON object")
    p_run.add_argument(
        "--exact-form",
        action="store_true",
        help="print a long irrational logit as its exact sympy expression (default: a certified decimal ± its error bound)",
    )
    p_run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace, session: Session) -> int:
    if not is_module_ref(args.name) and _is_network_file(args.name):
        if args.param:
            raise UsageError(
                "a network file has its parameters built in; drop -p (re-export to change them)"
            )
        file_net, c_file, values = session.load_network_file(args.name)
        return _run_network(args, file_net, c_file, values, source=args.name)
    c = session.one(args.name, "run")
    given = parse_assignments(args.param)
    values = parameter_values(c, given)
    return _run_network(args, None, c, values, source=c.name)


def _positions(count: int) -> str:
    return f"n = {count} position" + "s" * (count != 1)


def _symbols(count: int) -> str:
    return f"({count} symbol" + "s" * (count != 1) + ")"


def _word_line(shown: str, word: Sequence[str], tokens: Sequence[str], what: str = "tokens") -> str:
    """The word with its length, the tokens the network reads with the special ones counted
    apart, and n: the positions (the ``n`` of the positional features, special tokens included)."""
    specials = len(tokens) - len(word)
    counted = f" ({specials} special)" if specials > 0 else ""
    return (
        f"word: {shown or 'ε'} {_symbols(len(word))}   {what}: {' '.join(tokens) or '(none)'}"
        f"{counted}   {_positions(len(tokens))}"
    )


def _is_network_file(name: str) -> bool:
    return name.endswith(".json") or os.sep in name


def _value_text(value: Any) -> str:
    from netproof.verifier.exhaustive.checker import format_value

    return format_value(value)


def _word_texts(arg: str) -> tuple[WordLines, str | None]:
    """The words ``arg`` gives and where they came from: ``-`` (standard input) and ``@FILE``
    hold one word per line (None: the word itself)."""
    if arg == "-":
        return read_words("-"), "standard input"
    if arg.startswith("@"):
        return read_words(arg[1:]), arg[1:]
    return WordLines(((1, arg),), ()), None


def _run_network(
    args: argparse.Namespace,
    file_net: Network | None,
    c: Construction | None,
    values: dict[str, Any],
    source: str,
) -> int:
    lines, origin = _word_texts(args.word)
    texts = lines.words
    if not texts:
        blank = f" (only {len(lines.blank)} blank lines)" if lines.blank else ""
        raise UsageError(
            f'{origin} holds no word{blank}; write one word per line, "" for the empty word'
        )
    if len(texts) > MAX_RUN_WORDS:
        raise UsageError(
            f"{origin} holds {len(texts):,} words; run takes at most {MAX_RUN_WORDS:,} at once (an exact run of "
            "a few hundred symbols can take a second per word): split the file"
        )
    probe: Network | RecurrentNetwork | Seq2Seq
    if file_net is not None:
        probe = file_net
    else:
        assert c is not None
        probe = build_network(c, values, 0) if c.per_length else build_network(c, values)
    words = []
    for line, text in texts:
        try:
            words.append(tokenize(probe.alphabet, text))
        except WordError as exc:
            raise UsageError(
                f"{origin}, line {line}: {exc}" if len(texts) > 1 else str(exc)
            ) from None
    if lines.blank:
        print(f"netproof: {origin}: {lines.blank_note()}", file=sys.stderr)
    if len(words) == 1:
        return _run_word(args, file_net, c, values, source, probe, words[0])
    if args.trace:
        raise UsageError(
            f"--trace prints one word's trace; {origin} holds {len(words)} words: give one word"
        )
    args.sink = []
    code = EXIT_OK
    for word in words:
        code = max(code, _run_word(args, file_net, c, values, source, probe, word))
    _print_many(args.sink, args.json)
    return code


def _collect(args: argparse.Namespace, record: dict[str, Any]) -> bool:
    """Keep ``record`` for the table of many words (True), or not (a single word: False)."""
    sink = getattr(args, "sink", None)
    if sink is None:
        return False
    sink.append(record)
    return True


def _yes(v: Any) -> str:
    return "—" if v is None else ("yes" if v else "no")


def _print_many(records: Sequence[dict[str, Any]], as_json: bool) -> None:
    """Many words' records: JSON lines, or a table with a column for each field some record has."""
    if as_json:
        for r in records:
            print(json.dumps(r, ensure_ascii=False))
        return
    columns: list[tuple[str, Any]] = [("word", lambda r: r["word"] or "ε")]
    if any(r.get("accepted") is not None for r in records):
        columns.append(("accepted", lambda r: _yes(r.get("accepted"))))
    if any(r.get("member") is not None for r in records):
        columns.append(("member", lambda r: _yes(r.get("member"))))
    if any(r.get("output") is not None for r in records):
        columns.append(
            ("logit", lambda r: _short(r.get("output_decimal") or r.get("output") or "—"))
        )
    if any("next" in r for r in records):
        columns.append(("next", lambda r: " ".join(r.get("next", ())) or "∅"))
        columns.append(("may end", lambda r: _yes(r.get("end"))))
    if any("halted_at" in r for r in records):
        columns.append(
            ("halts at", lambda r: "—" if r.get("halted_at") is None else f"t = {r['halted_at']}")
        )
    if any("agreement" in r for r in records):
        columns.append(("check", lambda r: "agrees" if r["agreement"]["agree"] else "DISAGREES"))
    table = [[name for name, _ in columns]] + [[str(get(r)) for _, get in columns] for r in records]
    widths = [max(len(row[k]) for row in table) for k in range(len(columns))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _readout_check(net: Network, word: tuple[str, ...], source: str) -> None:
    """Refuse a word too short for the classifier's readout position (the empty word, for a
    network without a CLS token), naming the construction and the shortest word it reads."""
    r, emb = net.readout, net.embedding
    if not isinstance(r, Classifier) or isinstance(emb, FlatEmbedding):
        return
    specials = len(emb.prefix) + len(emb.suffix)
    count = specials + len(word)
    t = r.position if r.position >= 0 else count + r.position
    if 0 <= t < count:
        return
    shortest = (r.position + 1 if r.position >= 0 else -r.position) - specials
    shown = (
        "the empty word" if not word else f"{render(net.alphabet, word)!r} ({len(word)} symbols)"
    )
    raise UsageError(
        f"{source} reads its logit at token {r.position}, and {shown} gives {count} token{'s' * (count != 1)}: "
        f"{source} is defined on words of at least {shortest} symbol{'s' * (shortest != 1)}; give a longer word"
    )


def _run_word(
    args: argparse.Namespace,
    file_net: Network | None,
    c: Construction | None,
    values: dict[str, Any],
    source: str,
    probe: Any,
    word: tuple[str, ...],
) -> int:
    """``run`` on one word (printed, or kept for the table of many words)."""
    if (args.backend != "torch" or args.check) and len(word) > MAX_EXACT_SYMBOLS:
        where = (
            "--check runs the exact interpreters, which take"
            if args.check
            else "the exact backends evaluate"
        )
        raise UsageError(
            f"the word has {len(word):,} symbols; {where} words of at most {MAX_EXACT_SYMBOLS:,} (each attention "
            "layer costs n² exact products): give a shorter word, or --backend torch without --check for long words "
            "(floats: evidence, not proof)"
        )
    if file_net is None and c is not None and c.per_length:
        net = build_network(c, values, len(word))
    else:
        net = probe
    if args.backend != "torch" and (args.check or args.device != "cpu" or args.dtype != "float64"):
        flag = "--check" if args.check else ("--device" if args.device != "cpu" else "--dtype")
        raise UsageError(f"{flag} applies to the torch backend; add --backend torch")
    if args.backend == "torch":
        from netproof.symbolic.torch_backend import unsupported

        reason = unsupported(net)
        if reason is not None:
            raise UsageError(f"--backend torch: not supported: {reason}")
    if isinstance(net, RecurrentNetwork):
        return _run_recurrent(args, net, c, values, source, word)
    if isinstance(net, Seq2Seq):
        assert c is not None
        return _run_seq2seq(args, net, c, values, word, source)
    _readout_check(net, word, source)
    if args.backend == "torch":
        return _run_torch(args, net, c, values, source, word)
    backend, trace = evaluate(net, word, args.backend, args.length)
    lang = c.reference_language(values) if c is not None else None
    member = lang.contains(word) if lang else None
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": show_params(values),
        "word": render(net.alphabet, word),
        "tokens": list(trace.tokens),
        "n": trace.n,
        "backend": backend,
        "fingerprint": fingerprint(net),
        "size": network_size(net).to_json(),
        "accepted": trace.accepted,
        "output": _value_text(trace.output) if trace.output is not None else None,
        "output_decimal": _decimal(net, word, args.length, backend, trace.output),
        "member": member,
    }
    if trace.next_symbols is not None:
        end = getattr(net.readout, "end", None)
        record["length"] = args.length if args.length is not None else trace.n
        last = trace.next_symbols[-1]
        record["next"] = sorted(s for s in last if s != end)
        record["end"] = end in last if end is not None else None
        record["next_by_position"] = [
            {
                "i": trace.positions[t],
                "token": trace.tokens[t],
                "next": sorted(s for s in allowed if s != end),
                "end": end in allowed if end is not None else None,
            }
            for t, allowed in enumerate(trace.next_symbols)
        ]
    if args.trace and args.json:  # sympy prints a long exact value slowly: only for the JSON
        record["trace"] = _trace_json(trace)
    if _collect(args, record):
        return EXIT_OK
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(_word_line(record["word"], word, trace.tokens))
    if args.trace:
        from .values import certified_text

        print()
        print(format_trace(trace, states="all", value=certified_text, weights=True))
        print()
    if trace.output is not None:
        long_form = (
            record["output_decimal"] is not None and len(record["output"]) > EXACT_FORM_CHARS
        )
        shown = record["output_decimal"] if long_form and not args.exact_form else record["output"]
        print(f"logit s = {shown}   ({backend})")
    if trace.next_symbols is not None:
        shown = " ".join(record["next"]) or "(no bracket)"
        ending = (
            ""
            if record["end"] is None
            else ("; the string may end here" if record["end"] else "; the string may not end here")
        )
        print(
            f"allowed next after the input (n = {record['length']}): {shown}{ending}   ({backend})"
        )
    if trace.accepted is not None:
        verdict = "accepted (s > 0)" if trace.accepted else "rejected (s <= 0)"
        print(
            f"{verdict}"
            + ("" if lang is None else f"; {lang.name}: {'member' if member else 'not a member'}")
        )
    return EXIT_OK


EXACT_FORM_CHARS = 60
"""An irrational logit whose exact form is longer than this prints as a certified decimal
(``--exact-form``: the exact form; the JSON has both, ``output`` and ``output_decimal``)."""


def _decimal(net: Network, word: Any, length: int | None, backend: str, output: Any) -> str | None:
    """An irrational sympy logit as a certified decimal ``d ± e`` from the interval interpreter's
    enclosure (None for a rational or no logit)."""
    if backend != "sympy" or output is None or getattr(output, "is_Rational", True):
        return None
    from .values import certified_decimal

    _interval, enclosing = evaluate(net, word, "interval", length)
    return certified_decimal(enclosing.output)


def _trace_json(trace: Any) -> dict[str, Any]:
    """The trace as JSON: every state's rows by dim, exact (``rows``), and where a value is
    irrational its certified decimal beside it (``decimals``: only those entries), and every
    head's weights and selections."""
    from .values import certified_text

    dims = trace.network.dims

    def decimals(row: Any) -> dict[str, str]:
        return {
            d: certified_text(v)
            for d, v in zip(dims, row, strict=True)
            if v is not None
            and not isinstance(v, Fraction)
            and not getattr(v, "is_Rational", False)
        }

    return {
        "dims": list(dims),
        "positions": list(trace.positions),
        "states": [
            {
                "after": s.label,
                "rows": [
                    {
                        d: None if v is None else _value_text(v)
                        for d, v in zip(dims, row, strict=True)
                    }
                    for row in s.rows
                ],
                **(
                    {"decimals": [decimals(row) for row in s.rows]}
                    if trace.backend != "exact"
                    else {}
                ),
            }
            for s in trace.states
        ],
        "attention": [
            {
                "layer": sel.layer,
                "head": sel.head,
                "position": trace.positions[sel.position],
                "weights": [_value_text(w) for w in sel.weights],
                "selected": None
                if sel.selected is None
                else [trace.positions[j] for j in sel.selected],
            }
            for sel in trace.selections
        ],
    }


def _run_recurrent(
    args: argparse.Namespace,
    net: RecurrentNetwork,
    c: Construction | None,
    values: dict[str, Any],
    source: str,
    word: Any,
) -> int:
    """``run`` for a recurrent network: the predicted next-symbol set after every prefix (exact;
    ``--backend interval`` for tanh / logistic / softmax cells), accepted iff every prediction is
    the task's target (when the construction names one)."""
    from netproof.symbolic.recurrent import run as run_recurrent

    if args.length is not None:
        raise UsageError(f"{source} is a recurrent network: it reads any length; drop --length")
    backend = {"auto": "exact", "exact": "exact", "interval": "interval"}.get(args.backend)
    if backend is None:
        raise UsageError(
            f"--backend {args.backend} does not run recurrent networks; use exact or interval"
        )
    try:
        trace = run_recurrent(net, word, backend)  # type: ignore[arg-type]
    except SymbolicError as exc:
        raise UsageError(str(exc)) from None
    task = None
    if c is not None:
        for claim in c.claims(values):
            if type(claim).__name__ == "PredictsNext":
                task = claim.task  # type: ignore[union-attr]
                break
    targets = task.next_sets(tuple(word)) if task is not None else None
    steps = []
    for idx, st in enumerate(trace.steps):
        row: dict[str, Any] = {
            "t": st.t,
            "symbol": st.symbol,
            "predicted": None if st.predicted is None else sorted(st.predicted),
            "decision": {op: _value_text(v) for op, v in st.decision.items()},
        }
        if targets is not None:
            row["target"] = sorted(targets[idx])
        if args.trace:
            row["h"] = {d: _value_text(v) for d, v in st.h.items()}
            row["y"] = {s: _value_text(v) for s, v in st.y.items()}
            row["memory"] = [
                [_value_text(v) for v in e] for e in st.memory if any(v != 0 for v in e)
            ]
        steps.append(row)
    decided = all(st.predicted is not None for st in trace.steps)
    accepted = (
        None
        if task is None or not decided
        else task.accepts(tuple(word), tuple(p for p in trace.predictions if p is not None))
    )
    right = (
        None
        if targets is None
        else all(st.predicted == t for st, t in zip(trace.steps, targets, strict=True))
    )
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": show_params(values),
        "word": render(net.alphabet, word),
        "backend": backend,
        "fingerprint": fingerprint(net),
        "size": network_size(net).to_json(),
        "task": None if task is None else task.name,
        "steps": steps,
        "accepted": accepted,
        "member": None if task is None else task.contains(tuple(word)),
        "predictions_equal_targets": right,
    }
    if _collect(args, record):
        return EXIT_OK
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(f"word: {record['word'] or 'ε'}   ({backend})")
    for row in steps:
        shown = "undecided" if row["predicted"] is None else (" ".join(row["predicted"]) or "∅")
        ops = " ".join(f"{op}={v}" for op, v in row["decision"].items() if v != "0")
        target = "" if "target" not in row else f"   target: {' '.join(row['target']) or '∅'}"
        print(f"  t={row['t']:<3} {row['symbol']:>4} | next: {shown:<14} ops: {ops}{target}")
        if args.trace:
            print(
                "        h: "
                + ("  ".join(f"{d}={v}" for d, v in row["h"].items() if v != "0") or "0")
            )
            print(
                "        memory (top first): "
                + (" | ".join(" ".join(e) for e in row["memory"]) or "empty")
            )
    if accepted is not None:
        task_name = task.name  # type: ignore[union-attr]
        verdict = "accepted" if accepted else "rejected"
        member = "member" if record["member"] else "not a member"
        sets = "equals" if right else "does not equal"
        print(f"{verdict}; {task_name}: {member}; every predicted set {sets} the target")
    return EXIT_OK


def _finite(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x


def _run_torch(
    args: argparse.Namespace,
    net: Network,
    c: Construction | None,
    values: dict[str, Any],
    source: str,
    word: tuple[str, ...],
) -> int:
    """``run --backend torch``: the float evaluation (evidence, not proof), optionally checked
    against the exact interpreter on the same word (``--check``)."""
    from netproof.symbolic import torch_backend

    if args.trace:
        raise UsageError(
            "--trace prints exact traces; the torch backend keeps its states as tensors "
            "(symbolic.torch_backend.run(..., keep_states=True)): drop --trace or use --backend exact"
        )
    try:
        compiled = torch_backend.compile(net, dtype=args.dtype, device=args.device)
        fb = torch_backend.run_batch(compiled, [word], length=args.length)
        agreement = None
        if args.check:
            from netproof.verifier.floats.differential import compare

            agreement = compare(
                net,
                [word],
                dtype=args.dtype,
                device=args.device,
                length=args.length,
                compiled=compiled,
            )
    except SymbolicError as exc:
        raise UsageError(str(exc)) from None
    lang = c.reference_language(values) if c is not None else None
    member = lang.contains(word) if lang else None
    emb = net.embedding
    tokens = list(word) if isinstance(emb, FlatEmbedding) else [*emb.prefix, *word, *emb.suffix]
    positions = (
        [0] if isinstance(emb, FlatEmbedding) else [emb.index_base + t for t in range(len(tokens))]
    )
    logit = fb.logit(0)
    accepted = fb.accepted[0]
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": show_params(values),
        "word": render(net.alphabet, word),
        "tokens": tokens,
        "n": len(positions),
        "backend": "torch",
        "fingerprint": fingerprint(net),
        "size": network_size(net).to_json(),
        "accepted": accepted,
        "output": None if logit is None or math.isnan(logit) else repr(logit),
        "output_decimal": None,
        "member": member,
        "device": fb.device,
        "dtype": fb.dtype,
        "min_gap": _finite(fb.min_gap),
        "unresolved_ties": {
            "count": fb.unresolved_ties.count,
            "first": [
                {"layer": t.layer, "head": t.head, "i": t.position}
                for t in fb.unresolved_ties.first
            ],
        },
        "readout_margin": _finite(fb.readout_margin),
    }
    nexts = fb.next_symbols
    if nexts is not None:
        end = getattr(net.readout, "end", None)
        record["length"] = args.length if args.length is not None else len(positions)
        last = nexts[0][-1] if nexts[0] else ()
        record["next"] = sorted(s for s in last if s != end)
        record["end"] = end in last if end is not None else None
        record["next_by_position"] = [
            {
                "i": positions[t],
                "token": tokens[t],
                "next": sorted(s for s in allowed if s != end),
                "end": end in allowed if end is not None else None,
            }
            for t, allowed in enumerate(nexts[0])
        ]
    if agreement is not None:
        record["agreement"] = agreement.to_json()
    code = EXIT_OK if agreement is None or agreement.agree else EXIT_REFUTED
    if _collect(args, record):
        return code
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return code
    shown_word = record["word"] if len(word) <= 60 else f"{render(net.alphabet, word[:30])}..."
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(f"word: {shown_word or 'ε'} {_symbols(len(word))}   {_positions(record['n'])}")
    where = f"torch {fb.dtype} on {fb.device}"
    if logit is not None:
        print(f"logit s = {record['output']}   ({where}: evidence, not proof)")
    if nexts is not None:
        shown = " ".join(record["next"]) or "(no bracket)"
        ending = (
            ""
            if record["end"] is None
            else ("; the string may end here" if record["end"] else "; the string may not end here")
        )
        print(f"allowed next after the input (n = {record['length']}): {shown}{ending}   ({where})")
    if not _has_hardmax(net):
        print("hardmax: the network has no hardmax head (no score gap to measure)")
    else:
        gap = (
            "none met (no query had two candidate keys)"
            if fb.min_gap == float("inf")
            else f"{fb.min_gap:.6g}"
        )
        print(
            f"hardmax: smallest score gap {gap}; unresolved ties: {fb.unresolved_ties.count}"
            + "".join(
                f"\n   tie at {t.layer!r} head {t.head!r} i={t.position}"
                for t in fb.unresolved_ties.first
            )
        )
    if accepted is not None:
        verdict = "accepted (s > 0)" if accepted else "rejected (s <= 0)"
        print(
            f"{verdict}"
            + ("" if lang is None else f"; {lang.name}: {'member' if member else 'not a member'}")
        )
    elif isinstance(net.readout, Classifier):
        print("no verdict: the float logit is NaN (a value the exact interpreter calls undefined)")
    if agreement is not None:
        if agreement.agree:
            err = (
                ""
                if agreement.max_logit_error is None
                else f"; max |float logit - exact logit| = {agreement.max_logit_error:.3g}"
            )
            print(
                f"check: agrees with the {'/'.join(agreement.exact_backends) or 'exact'} interpreter{err}"
            )
        else:
            d = agreement.first[0]
            print(
                f"check: DISAGREES with the {'/'.join(agreement.exact_backends)} interpreter on the {d.what}: "
                f"float {d.float_value}, exact {d.exact_value}"
            )
    return code


def _has_hardmax(net: Network) -> bool:
    return any(
        isinstance(sub.block, AttentionLayer)
        and any(isinstance(h.normalizer, Hardmax) for h in sub.block.heads)
        for sub in net.layers
    )


def _run_seq2seq(
    args: argparse.Namespace,
    net: Seq2Seq,
    c: Construction,
    values: dict[str, Any],
    word: tuple[str, ...],
    source: str,
) -> int:
    """``run`` on an encoder–decoder: the decoder's steps, and with a :class:`Simulates` claim
    the simulated RNN's state and (for a machine) the configuration each step holds."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS
    from netproof.symbolic.seq2seq import run as run_seq2seq
    from netproof.verifier.claims import Simulates

    if args.backend not in ("auto", "exact", "sympy"):
        raise UsageError(
            f"--backend {args.backend}: the encoder–decoder {net.name!r} runs with exact or sympy"
        )
    if args.length is not None:
        raise UsageError(
            "--length applies to encoder-style networks; an encoder–decoder reads the whole word"
        )
    backend = "sympy" if args.backend == "sympy" else "exact"
    budget = DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(values, word)
    try:
        trace = run_seq2seq(net, word, max_steps=budget, backend=backend)  # type: ignore[arg-type]
    except SymbolicError as exc:
        raise UsageError(str(exc)) from None
    sim = next((cl for cl in c.claims(values) if isinstance(cl, Simulates)), None)
    machine: dict[int, tuple[int, Any]] = {}
    if sim is not None and sim.machine is not None:
        machine = {tick: (k, conf) for k, (tick, conf) in enumerate(sim.machine(word))}
    final = machine.get(trace.halted_at) if trace.halted_at is not None else None
    steps = []
    for step in trace.steps:
        y = trace.y(step.t)
        reads = []
        for sel in step.selections:
            if sel.layer.endswith("_enc") and sel.selected is not None:
                reads.append(
                    {
                        "layer": sel.layer,
                        "positions": [trace.positions[j] for j in sel.selected],
                        "tokens": [trace.tokens[j] for j in sel.selected],
                    }
                )
        entry: dict[str, Any] = {"t": step.t, "reads": reads, "halts": step.halts}
        if sim is not None:
            h = {u: y[d] for u, d in zip(sim.rnn.unit_names, sim.hidden, strict=True)}
            entry["hidden"] = {u: _value_text(v) for u, v in h.items() if v != 0}
            if step.t in machine:
                k, conf = machine[step.t]
                got = sim.decode(h) if sim.decode is not None else None
                entry["configuration"] = {
                    "k": k,
                    "machine": str(conf),
                    "decoder": str(got),
                    "agree": got == conf,
                }
        entry["y"] = {d: _value_text(v) for d, v in y.items() if v != 0}
        steps.append(entry)
    record: dict[str, Any] = {
        "construction": c.name,
        "source": source,
        "id": c.paper_id,
        "params": show_params(values),
        "word": render(net.alphabet, word),
        "tokens": list(trace.tokens),
        "n": trace.n,
        "backend": backend,
        "fingerprint": fingerprint(net),
        "size": network_size(net).to_json(),
        "halted_at": trace.halted_at,
        "steps_run": len(trace.steps),
        "machine": None if final is None else {"configuration": final[0], "halting": str(final[1])},
    }
    if args.trace:
        record["steps"] = steps
    if _collect(args, record):
        return EXIT_OK
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(
        _word_line(record["word"], word, trace.tokens, "encoder tokens") + f"   d = {len(net.dims)}"
    )
    if args.trace:
        _print_seq2seq_steps(steps, bool(machine))
    if trace.halted_at is None:
        print(f"the decoder did not halt within {len(trace.steps) - 1} steps   ({backend})")
    else:
        print(f"the decoder halts at step t = {trace.halted_at}   ({backend})")
    if final is not None:
        print(f"machine: halts in configuration {final[0]}: {final[1]}")
    return EXIT_OK


def _print_seq2seq_steps(steps: Sequence[dict[str, Any]], with_machine: bool) -> None:
    """One line per decoder step: what the decoder–encoder attention read, the simulated RNN's
    state (its nonzero units, by name), and at configuration steps the machine's configuration
    next to the one decoded from the decoder's output."""
    print("\n   t  reads      decoder y_t (nonzero units of the simulated RNN's state h)")
    if with_machine:
        print(
            "   (configurations: state [stack 1 | stack 2], tops on the left; between them the rule unit D:state/top1/top2 fires;"
        )
        print(
            "    the loader units ST pA pB e1 e3 ACC START DONE are left out once the machine runs)"
        )
    started = False
    loader = {"ST", "pA", "pB", "e1", "e3", "ACC", "START", "DONE"}
    for e in steps:
        reads = (
            " ".join(
                f"{r['tokens'][-1]}@{','.join(map(str, r['positions']))}"
                if len(r["positions"]) <= 3
                else f"{r['tokens'][-1]}@{len(r['positions'])} pos"
                for r in e["reads"][-1:]
            )
            or "-"
        )
        hidden = e.get("hidden", e["y"])
        if "configuration" in e:
            conf = e["configuration"]
            mark = "=" if conf["agree"] else "≠"
            print(
                f"{e['t']:>4}  {reads:<9}  config {conf['k']}: decoder holds {conf['decoder']}  {mark}  machine {conf['machine']}"
            )
            started = True
            continue
        cells = [f"{u}={v}" for u, v in hidden.items() if not (started and u in loader)]
        shown = "  ".join(cells[:8]) + (f"  … (+{len(cells) - 8})" if len(cells) > 8 else "")
        halts = "   ← halts" if e["halts"] else ""
        print(f"{e['t']:>4}  {reads:<9}  {shown or '0'}{halts}")
    print()
