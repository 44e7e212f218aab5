"""``netproof check-model MODEL --output categorical``: a model's output at every position
checked against a reference on every word up to ``--max-n`` (:mod:`netproof.verifier.models.
sequence` does the work): ``--reference FILE.py:NAME`` (a function from a word, a list of
symbols, to the expected output of each position, ``None``: don't care), or the expected outputs
a dump recorded (``examples/tracr_dump.py``: tracr's own RASP evaluator). ``--wrong FILE``
writes every wrong and undecided position as JSON lines (input, position, expected, got,
margin). Exit 0: every position correct; 1: some wrong; 3: none wrong, some undecided; 2: usage.

May import the models engine (torch loads when the command runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN

from .usage import UsageError

__all__ = ["cmd_check_sequence", "load_reference"]


def load_reference(spec: str) -> Any:
    """The function ``FILE.py:NAME`` (a :class:`UsageError` names what is missing)."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise UsageError(f"--reference {spec!r}: give FILE.py:NAME (a function word -> outputs)")
    if not Path(path).is_file():
        raise UsageError(f"--reference {spec!r}: no file {path!r}")
    loader = importlib.util.spec_from_file_location(
        f"netproof_user_reference_{Path(path).stem}", path
    )
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as exc:
        raise UsageError(
            f"--reference {spec!r}: loading {path} failed: {type(exc).__name__}: {exc}"
        ) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UsageError(f"--reference {spec!r}: {path} has no function named {name!r}")
    return fn


def _render(report: Any) -> str:
    t = report.totals
    lines = [
        f"model {report.network} against {report.reference}, "
        f"{'numerical' if len(report.values) == 1 else 'categorical'} output at every "
        f"position, every word of length <= {report.max_n}",
        f"{'length':>6} {'words':>7} {'positions':>9} {'correct':>8} {'wrong':>6} {'undecided':>9}",
    ]
    for r in [*report.rows, t]:
        label = "all" if r is t else str(r.length)
        lines.append(
            f"{label:>6} {r.words:>7} {r.positions:>9} {r.correct:>8} {r.wrong:>6} {r.undecided:>9}"
        )
    sw = report.shortest_wrong
    if sw is not None:
        lines.append(
            f"shortest wrong: {' '.join(sw.word)!r} at position {sw.position}: expected "
            f"{sw.expected!r}, got {sw.got!r} (margin >= {sw.margin:.3g})"
        )
    undecided = [v for v in report.listed if v.got is None]
    for v in undecided[:10]:
        lines.append(
            f"undecided: {' '.join(v.word)!r} at position {v.position} (expected {v.expected!r}; "
            f"the enclosure straddles the boundary: {v.margin:.3g})"
        )
    lines.append(f"status: {report.status}")
    return "\n".join(lines)


def cmd_check_sequence(args: argparse.Namespace) -> int:
    """The per-position check (see the module docstring)."""
    from netproof.symbolic.errors import MissingExtraError
    from netproof.symbolic.importers import ImporterError
    from netproof.verifier.models.faithful import UnfaithfulImportError
    from netproof.verifier.models.sequence import check_sequence, load_sequence_dump

    if args.output == "accept":
        raise UsageError("--output accept checks one logit against --language, not --reference")
    tolerance = args.tolerance if args.tolerance is not None else 1e-6
    if args.tolerance is not None and (args.output != "numeric" or not tolerance >= 0):
        raise UsageError(f"--tolerance {args.tolerance}: give a number >= 0, with --output numeric")
    if args.language is not None:
        raise UsageError("give --language (accept/reject) or --reference (per position), not both")
    try:
        imported, kw = load_sequence_dump(args.model, compare=not args.no_compare)
    except (ImporterError, UnfaithfulImportError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None
    except (OSError, RuntimeError, KeyError) as exc:
        raise UsageError(
            f"{args.model}: not a dump with per-position outputs ({type(exc).__name__}: {exc}); "
            "--output categorical reads the dumps of examples/tracr_dump.py"
        ) from None
    if args.reference is not None:
        fn = load_reference(args.reference)
        kw["reference"] = lambda w: fn(list(w))
        kw["reference_name"] = args.reference
    if args.max_n > kw["max_n"] and args.reference is None:
        raise UsageError(
            f"--max-n {args.max_n}: the dump records its program's outputs up to length "
            f"{kw['max_n']}; give --max-n <= {kw['max_n']} or a --reference"
        )
    kw["max_n"] = args.max_n
    numeric = len(kw["values"]) == 1
    if args.output is not None and numeric != (args.output == "numeric"):
        raise UsageError(
            f"--output {args.output}: {args.model} has a "
            f"{'numerical' if numeric else 'categorical'} output; give --output "
            f"{'numeric' if numeric else 'categorical'}"
        )
    report = check_sequence(
        imported.net, min_n=max(1, args.min_n), tolerance=tolerance if numeric else None, **kw
    )
    if imported.faith is not None:
        import sys

        print(f"import: {imported.faith.summary()}", file=sys.stderr if args.json else None)
    if args.wrong:
        with open(args.wrong, "w", encoding="utf-8") as fh:
            for v in report.listed:
                fh.write(json.dumps(v.to_dict(), default=str) + "\n")
    print(report.to_json() if args.json else _render(report))
    codes: dict[str, int] = {"correct": EXIT_OK, "wrong": EXIT_REFUTED}
    return codes.get(report.status, int(EXIT_UNKNOWN))
