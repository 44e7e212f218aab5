"""``netproof show``: a construction's exact run on one word drawn as attention maps (PNG, SVG or
a self-contained HTML page): per layer and head the attention matrix over positions labelled with
the word's symbols, and the final residual state by named dim
(:mod:`netproof.verifier.floats.pictures` draws; this module parses and prints).

May import the campaign (constructions, parameters, the exact backend choice) and the pictures
(matplotlib loads when it runs).
"""

from __future__ import annotations

import argparse
from typing import Any

from netproof.symbolic import RecurrentNetwork, Seq2Seq, WordError, tokenize
from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.evaluate import evaluate
from netproof.verifier.campaign.sources import (
    Session,
    build_network,
    parameter_values,
    parse_assignments,
)

from .checks import MAX_EXACT_SYMBOLS, output_file
from .usage import UsageError

__all__ = ["add_parser", "cmd_show"]


def add_parser(sub: Any) -> None:
    """Register ``netproof show`` on the CLI's subparsers."""
    p = sub.add_parser("show", help="draw a construction's attention maps on one word (PNG, SVG or HTML)")
    p.add_argument("name", help="construction (see `netproof list`)")
    p.add_argument("word", help="the word: symbols, or space-separated tokens")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", type=output_file, required=True, help="the file to write: FILE.png, FILE.svg or FILE.html")
    p.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace, session: Session) -> int:
    from netproof.symbolic.errors import MissingExtraError
    from netproof.verifier.floats.pictures import FORMATS, PictureError, draw

    suffix = args.out.rsplit(".", 1)[-1].lower() if "." in args.out else ""
    if suffix not in FORMATS:
        raise UsageError(f"--out {args.out!r}: give a file ending in .png, .svg or .html")
    c = session.one(args.name, "show")
    values = parameter_values(c, parse_assignments(args.param))
    probe = build_network(c, values, 0) if c.per_length else build_network(c, values)
    if isinstance(probe, (Seq2Seq, RecurrentNetwork)):
        kind = "an encoder–decoder" if isinstance(probe, Seq2Seq) else "a recurrent network"
        raise UsageError(f"{c.name} is {kind}: `show` draws encoder transformers only; see its steps with "
                         f"`netproof run {c.name} WORD --trace`")
    try:
        word = tokenize(probe.alphabet, args.word)
    except WordError as exc:
        raise UsageError(str(exc)) from None
    if len(word) > MAX_EXACT_SYMBOLS:
        raise UsageError(f"the word has {len(word):,} symbols; `show` draws words of at most {MAX_EXACT_SYMBOLS:,}")
    net = build_network(c, values, len(word)) if c.per_length else probe
    _backend, trace = evaluate(net, word)
    try:
        out = draw(trace, args.out)
    except (PictureError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None
    print(f"wrote {out}")
    return EXIT_OK
