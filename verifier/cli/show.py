"""``netproof show``: a construction's exact run on one word drawn as a picture (PNG, SVG or a
self-contained HTML page). An encoder transformer: per layer and head the attention matrix over
positions labelled with the word's symbols, and the final residual state by named dim. An
encoder–decoder: one decoder step (``--step``, default 1): the decoder–encoder attention of every
step, the step's heads and the named dims it reads and writes, with the simulated machine's
configuration beside the steps that hold one. A recurrent network: the stack (or memory) over
time, the operation weights and the predicted next-symbol sets next to the task's targets
(:mod:`netproof.verifier.floats.pictures` draws; this module parses and prints).

May import the campaign (constructions, parameters, the exact backend choice) and the pictures
(matplotlib loads when it runs).
"""

from __future__ import annotations

import argparse
from typing import Any

from netproof.symbolic import (
    NotRationalError,
    RecurrentNetwork,
    Seq2Seq,
    SymbolicError,
    WordError,
    tokenize,
)
from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.evaluate import evaluate
from netproof.verifier.campaign.sources import (
    Session,
    build_network,
    parameter_values,
    parse_assignments,
)
from netproof.verifier.claims import Construction, PredictsNext, Simulates

from .checks import MAX_EXACT_SYMBOLS, nonnegative_int, output_file
from .usage import UsageError

__all__ = ["add_parser", "cmd_show"]


def add_parser(sub: Any) -> None:
    """Register ``netproof show`` on the CLI's subparsers."""
    p = sub.add_parser(
        "show",
        help="draw a construction's run on one word: attention maps, a decoder step, a stack (PNG, SVG or HTML)",
    )
    p.add_argument("name", help="construction (see `netproof list`)")
    p.add_argument("word", help="the word: symbols, or space-separated tokens")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument(
        "--out",
        type=output_file,
        required=True,
        help="the file to write: FILE.png, FILE.svg or FILE.html",
    )
    p.add_argument(
        "--step",
        type=nonnegative_int,
        default=None,
        metavar="T",
        help="encoder–decoders: the decoder step to draw (default 1, or 0 when the run has one step)",
    )
    p.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace, session: Session) -> int:
    from netproof.symbolic.errors import MissingExtraError
    from netproof.verifier.floats.pictures import FORMATS, PictureError, draw

    suffix = args.out.rsplit(".", 1)[-1].lower() if "." in args.out else ""
    if suffix not in FORMATS:
        raise UsageError(f"--out {args.out!r}: give a file ending in .png, .svg or .html")
    imported = _imported_file(args.name)
    if imported is not None:  # a network file of an imported model (`netproof import`)
        try:
            word = tokenize(imported.alphabet, args.word)
        except WordError as exc:
            raise UsageError(str(exc)) from None
        _backend, trace = evaluate(imported, word)
        try:
            out = draw(trace, args.out)
        except (PictureError, MissingExtraError) as exc:
            raise UsageError(str(exc)) from None
        print(f"wrote {out}")
        return EXIT_OK
    c = session.one(args.name, "show")
    values = parameter_values(c, parse_assignments(args.param))
    probe = build_network(c, values, 0) if c.per_length else build_network(c, values)
    if args.step is not None and not isinstance(probe, Seq2Seq):
        raise UsageError(f"--step {args.step}: {c.name} is not an encoder–decoder; drop --step")
    try:
        word = tokenize(probe.alphabet, args.word)
    except WordError as exc:
        raise UsageError(str(exc)) from None
    if len(word) > MAX_EXACT_SYMBOLS:
        raise UsageError(
            f"the word has {len(word):,} symbols; `show` draws words of at most {MAX_EXACT_SYMBOLS:,}"
        )
    options: dict[str, Any] = {}
    if isinstance(probe, Seq2Seq):
        trace, options = _seq2seq(c, values, probe, word, args.step)
    elif isinstance(probe, RecurrentNetwork):
        trace, options = _recurrent(c, values, probe, word)
    else:
        net = build_network(c, values, len(word)) if c.per_length else probe
        _backend, trace = evaluate(net, word)
    try:
        out = draw(trace, args.out, **options)
    except (PictureError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None
    print(f"wrote {out}")
    return EXIT_OK


def _imported_file(name: str) -> Any:
    """The network of a file ``netproof import`` wrote (its extra names where it came from), else
    None."""
    from pathlib import Path

    if not name.endswith(".json") or not Path(name).is_file():
        return None
    from netproof.symbolic.netfile import load_file

    try:
        net, extra = load_file(name)
    except Exception:
        return None
    return net if isinstance(extra, dict) and "imported_from" in extra else None


def _seq2seq(
    c: Construction, values: dict[str, Any], net: Seq2Seq, word: tuple[str, ...], step: int | None
) -> tuple[Any, dict[str, Any]]:
    """The exact run of an encoder–decoder, the step to draw, and a note beside every step that
    holds a configuration of the machine a :class:`Simulates` claim names (as the decoder holds
    it, and the machine's where they differ)."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS
    from netproof.symbolic.seq2seq import run as run_seq2seq

    budget = DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(values, word)
    try:
        trace = run_seq2seq(net, word, max_steps=budget)
    except SymbolicError as exc:
        raise UsageError(f"{exc}") from None
    last = len(trace.steps) - 1
    chosen = min(1, last) if step is None else step
    if chosen > last:
        raise UsageError(
            f"--step {chosen}: the run on {_word_text(word)} has decoder steps 0..{last}; choose one of them"
        )
    notes: dict[int, str] = {}
    sim = next((cl for cl in c.claims(values) if isinstance(cl, Simulates)), None)
    if sim is not None and sim.machine is not None:
        for k, (tick, conf) in enumerate(sim.machine(word)):
            if tick < len(trace.steps):
                y = trace.y(tick)
                got = (
                    sim.decode(
                        {u: y[d] for u, d in zip(sim.rnn.unit_names, sim.hidden, strict=True)}
                    )
                    if sim.decode
                    else None
                )
                held = str(conf) if got is None or got == conf else f"{got} (machine: {conf})"
                notes[tick] = f"configuration {k}: {held}"
    caption = ""
    if notes:
        caption = (
            "beside the steps: the simulated machine's configuration that y_t holds, "
            "as state [stack 1 | stack 2] with the tops on the left (ε: empty)"
        )
    return trace, {"step": chosen, "notes": notes, "caption": caption}


def _recurrent(
    c: Construction, values: dict[str, Any], net: RecurrentNetwork, word: tuple[str, ...]
) -> tuple[Any, dict[str, Any]]:
    """The run of a recurrent network (exact; intervals where a cell is not rational) and the
    targets of the construction's next-symbol task."""
    from netproof.symbolic.recurrent import run as run_recurrent

    if not word:
        raise UsageError("the empty word has no steps to draw; give a word of at least one symbol")
    try:
        try:
            trace = run_recurrent(net, word, "exact")
        except NotRationalError:
            trace = run_recurrent(net, word, "interval")
    except SymbolicError as exc:
        raise UsageError(f"{exc}") from None
    task = next((cl.task for cl in c.claims(values) if isinstance(cl, PredictsNext)), None)
    return trace, {"targets": None if task is None else task.next_sets(word)}


def _word_text(word: tuple[str, ...]) -> str:
    return repr("".join(word)) if all(len(s) == 1 for s in word) else repr(" ".join(word))
