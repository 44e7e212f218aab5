"""``netproof import``: a trained torch recognizer (the Recognizer family,
:mod:`netproof.symbolic.torch_import`) as an exact JSON network file.

May import the campaign (atomic writes, the usage error), the IR's network files and the importer
(torch loads when the command runs).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.sources import Session
from netproof.verifier.campaign.store import write_atomic

from .export import announce_written
from .model_sources import add_model_options, faith_line, import_structural, is_structural, tokens
from .usage import UsageError

__all__ = ["add_parser", "cmd_import"]


def add_parser(sub: Any) -> None:
    """Register ``netproof import`` on the CLI's subparsers."""
    p = sub.add_parser(
        "import",
        help="a trained model (a netproof recognizer, any nn.Module, a TransformerLens/tracr dump, an ONNX file) as an exact JSON network file",
    )
    p.add_argument(
        "model",
        help="a torch.save file: a netproof Recognizer, its {format, config, state_dict} dict, or a state dict with --config",
    )
    p.add_argument("--config", default=None, help="the JSON config of a bare state dict")
    p.add_argument("--name", default=None, help="the network's name (default: the file's stem)")
    add_model_options(p)
    p.add_argument(
        "--alphabet",
        default=None,
        metavar="A,B,...",
        help="a model imported by its structure: the word symbols (default: --vocab without "
        "--prefix/--suffix, or a dump's own)",
    )
    p.add_argument(
        "--max-len",
        type=int,
        default=16,
        help="a model imported by its structure: the longest word the network is built for "
        "(its position table; default 16)",
    )
    p.add_argument(
        "--out", default="", help="write the network file here (atomically) instead of stdout"
    )
    p.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace, session: Session) -> int:
    from netproof.symbolic.errors import MissingExtraError
    from netproof.symbolic.ir import Network
    from netproof.symbolic.netfile import dumps
    from netproof.symbolic.torch_import import ImportModelError, import_model

    extra: dict[str, object] = {"imported_from": str(args.model)}
    if is_structural(args.model, args):
        if args.max_len < 1:
            raise UsageError(f"--max-len {args.max_len} must be >= 1")
        alphabet = tokens(args.alphabet) or [
            t for t in tokens(args.vocab) if t not in (*tokens(args.prefix), *tokens(args.suffix))
        ]
        imported = import_structural(args.model, args, alphabet or None, args.max_len)
        faith_line(imported, bool(args.out) is False)
        net = imported.net
        extra["faithfulness"] = (
            imported.faith.summary()
            if imported.faith is not None
            else "not compared (--no-compare)"
        )
    else:
        try:
            net = import_model(args.model, config=args.config, name=args.name)
        except (ImportModelError, MissingExtraError) as exc:
            raise UsageError(str(exc)) from None
    if not isinstance(net, Network):
        raise UsageError(
            f"{args.model} is an RNN recognizer ({net!r}); network files hold transformer-style networks only, so it "
            "has none yet: check it directly with `netproof check-model MODEL.pt`"
        )
    text = dumps(net, extra=extra)
    if args.out:
        write_atomic(args.out, text)
        announce_written(args.out, f"{args.model} imported as a network file", net)
    else:
        sys.stdout.write(text)
    return EXIT_OK
