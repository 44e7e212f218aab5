"""The options and loading of a model brought from elsewhere (any ``nn.Module``, a
TransformerLens or tracr dump, an ONNX file), shared by ``netproof check-model`` and ``netproof
import``: the structural importer and its faithfulness gate
(:mod:`netproof.verifier.models.imported`).

May import the models engine and the importers (torch loads when a command runs).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .usage import UsageError

__all__ = ["add_model_options", "faith_line", "import_structural", "is_structural", "tokens"]


def add_model_options(p: Any) -> None:
    """The options of a model imported by its structure."""
    p.add_argument(
        "--vocab",
        default=None,
        metavar="T0,T1,...",
        help="any nn.Module or ONNX file (imported by its structure): the token of each id, in id "
        "order (default: the alphabet, ids 0, 1, ...), e.g. '<cls>,0,1'",
    )
    p.add_argument(
        "--prefix",
        default="",
        metavar="TOKENS",
        help="tokens put before every word (comma-separated, e.g. '<cls>')",
    )
    p.add_argument("--suffix", default="", metavar="TOKENS", help="tokens put after every word")
    p.add_argument(
        "--module",
        default=None,
        metavar="FILE.py:Class",
        help="the module class of a state dict (FILE.py:Class or package.module:Class)",
    )
    p.add_argument(
        "--kwargs", default=None, metavar="JSON", help="the keyword arguments of --module's class"
    )
    p.add_argument(
        "--no-compare",
        action="store_true",
        help="skip the faithfulness gate (the model's own runs compared with the imported "
        "network on every short word and random longer ones before anything is checked)",
    )


def tokens(text: str | None) -> tuple[str, ...]:
    return tuple(t for t in (text or "").split(",") if t)


def is_structural(model: str, args: argparse.Namespace) -> bool:
    """Whether ``model`` goes through the structural importer: a structural option is given, it
    is an ONNX file, a ``torch.export`` archive, a TransformerLens/tracr dump, or a pickled torch
    module that is not one of netproof's own recognizers."""
    if args.vocab or args.prefix or args.suffix or args.module:
        return True
    if model.endswith((".onnx", ".pt2")):
        return True
    if model.endswith(".json") or getattr(args, "config", None) is not None:
        return False
    try:
        import torch

        from netproof.symbolic.importers.transformerlens import DUMP_FORMAT
        from netproof.symbolic.torch_recognizer import Recognizer, RNNRecognizer

        try:
            obj = torch.load(model, map_location="cpu", weights_only=True)
        except Exception:  # a whole pickled module (a pickle: only files you trust)
            obj = torch.load(model, map_location="cpu", weights_only=False)
    except Exception:
        return False
    if isinstance(obj, dict) and obj.get("format") == DUMP_FORMAT:
        return True
    return isinstance(obj, torch.nn.Module) and not isinstance(obj, (Recognizer, RNNRecognizer))


def import_structural(
    model: str, args: argparse.Namespace, alphabet: Sequence[str] | None, max_len: int
) -> Any:
    """The :class:`~netproof.verifier.models.imported.Imported` model (a :class:`UsageError`
    names what went wrong: an unmapped node, a refused import, a missing extra)."""
    from netproof.symbolic.errors import MissingExtraError
    from netproof.symbolic.importers import ImporterError
    from netproof.verifier.models.exported import import_exported, is_exported_file
    from netproof.verifier.models.faithful import UnfaithfulImportError
    from netproof.verifier.models.imported import import_file

    try:
        if is_exported_file(model):  # netproof export --format torch: its layout says the rest
            return import_exported(
                model,
                max_len=max_len,
                compare=not args.no_compare,
                name=getattr(args, "name", None),
            )
        return import_file(
            model,
            alphabet=alphabet,
            vocab=tokens(args.vocab) or None,
            prefix=tokens(args.prefix),
            suffix=tokens(args.suffix),
            max_len=max_len,
            module=args.module,
            kwargs=args.kwargs,
            compare=not args.no_compare,
            name=getattr(args, "name", None),
        )
    except (ImporterError, UnfaithfulImportError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None


def faith_line(imported: Any, json_mode: bool) -> None:
    """Say what the gate ran (or that it was skipped): on stdout, or stderr beside JSON."""
    said = (
        f"import: {imported.faith.summary()}"
        if imported.faith is not None
        else "import: not compared with the model (--no-compare): the imported network was not "
        "run against the model's own outputs, so a wrong import convention would go unnoticed"
    )
    print(said, file=sys.stderr if json_mode else sys.stdout)
