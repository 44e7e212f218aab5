"""``netproof export``: a construction's network as a JSON network file (``symbolic/netfile.py``),
or with ``--format state_dict`` as torch tensors with their layout (``symbolic/torch_export.py``).

May import the campaign (constructions, parameters, atomic writes) and the IR's network files
(torch loads only for ``--format state_dict``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq, fingerprint
from netproof.symbolic.size import network_size
from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.sources import (
    Session,
    build_network,
    parameter_values,
    parse_assignments,
    show_params,
)
from netproof.verifier.campaign.store import write_atomic

from .checks import nonnegative_int, output_file
from .usage import UsageError

__all__ = ["add_parser", "announce_written", "cmd_export"]


def add_parser(sub: Any) -> None:
    """Register ``netproof export`` on the CLI's subparsers."""
    p_export = sub.add_parser(
        "export", help="write a construction's network as a JSON network file"
    )
    p_export.add_argument(
        "name", help="construction (see `netproof list`) or a user module (FILE.py or FILE.py:NAME)"
    )
    p_export.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_export.add_argument(
        "--format",
        choices=("json", "state_dict", "torch"),
        default="json",
        help="json: the netproof network format (version 1); state_dict: torch tensors with their layout "
        "(symbolic/torch_export.py); torch: a standard PyTorch module in a torch.export archive "
        "(.pt2, symbolic/torch_pt2.py) that check-model reads back; both need --out and the torch extra",
    )
    p_export.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="for --format state_dict and torch",
    )
    p_export.add_argument(
        "--max-len",
        type=int,
        default=64,
        help="for --format torch: the longest token sequence the module runs (specials included)",
    )
    p_export.add_argument(
        "--n",
        type=nonnegative_int,
        default=None,
        help="the word length, for constructions built per length",
    )
    p_export.add_argument(
        "--out",
        type=output_file,
        default="",
        help="write to this file (atomically) instead of stdout",
    )
    p_export.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace, session: Session) -> int:
    from netproof.symbolic.netfile import dumps

    c = session.one(args.name, "export")
    given = parse_assignments(args.param)
    values = parameter_values(c, given)
    if c.per_length:
        if args.n is None:
            raise UsageError(
                f"{c.name} is built per word length: give --n N (the word length it reads)"
            )
        net = build_network(c, values, args.n)
    else:
        if args.n is not None:
            raise UsageError(f"{c.name} reads words of any length: drop --n")
        net = build_network(c, values)
    if isinstance(net, RecurrentNetwork) and args.format != "json":
        raise UsageError(
            f"{c.name} builds a RecurrentNetwork ({type(net.cell).__name__}); state_dict and torch exports "
            "hold transformer-style Networks only (--format json writes its recurrent network file)"
        )
    if isinstance(net, Seq2Seq) and args.format != "json":
        raise UsageError(
            f"{c.name} builds an encoder–decoder (Seq2Seq); state_dict and torch exports hold "
            "transformer-style Networks only (--format json writes its file, format netproof-seq2seq)"
        )
    extra = {
        "construction": c.name,
        "paper_id": c.paper_id,
        "params": show_params(values),
        "reference": c.reference,
        "claims": [{"id": cl.id, "statement": cl.statement} for cl in c.claims(values)],
    }
    source = session.source(c.name)
    if source is not None and not source.endswith(
        ".json"
    ):  # a user module's: `prove FILE.json` loads it again
        here = os.path.dirname(os.path.abspath(args.out)) if args.out else os.getcwd()
        extra |= {
            "module": os.path.relpath(os.path.abspath(source), here),
            "built": fingerprint(net),
        }
    if isinstance(net, RecurrentNetwork | Seq2Seq):  # their own formats, json only
        if isinstance(net, RecurrentNetwork):  # netproof-recurrent: symbolic/recurrent_netfile.py
            from netproof.symbolic.recurrent_netfile import dumps as dumps_recurrent

            text, kind = dumps_recurrent(net, extra=extra), "a recurrent network file"
        else:  # netproof-seq2seq (symbolic/netfile.py)
            text, kind = dumps(net, extra=extra), "an encoder–decoder file"
        if args.out:
            write_atomic(args.out, text)
            announce_written(args.out, f"{c.name} as {kind}", net)
        else:
            sys.stdout.write(text)
        return EXIT_OK
    if args.format == "torch":
        _write_torch(args, c.name, net)
        return EXIT_OK
    if args.format == "state_dict":
        from netproof.symbolic import MissingExtraError
        from netproof.symbolic.torch_export import save

        if not args.out:
            raise UsageError("--format state_dict writes a binary torch file: give --out FILE.pt")
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        tmp = f"{args.out}.tmp-{os.getpid()}"
        try:
            save(net, tmp, dtype=args.dtype)
            os.replace(tmp, args.out)
        except MissingExtraError as exc:
            raise UsageError(str(exc)) from None
        finally:
            if os.path.exists(tmp):  # a failed save leaves no half-written file
                os.remove(tmp)
        announce_written(args.out, f"{c.name} as a {args.dtype} state dict", net)
        return EXIT_OK
    text = dumps(net, extra=extra)
    if args.out:
        write_atomic(args.out, text)
        if getattr(args, "announce", True):
            announce_written(args.out, f"{c.name} as a network file", net)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _write_torch(args: argparse.Namespace, name: str, net: Network) -> None:
    """``--format torch``: the network as a torch module in a torch.export archive, atomically."""
    from netproof.symbolic import MissingExtraError
    from netproof.symbolic.torch_export import StateDictError
    from netproof.symbolic.torch_pt2 import save_pt2

    if not args.out or not args.out.endswith(".pt2"):
        raise UsageError(
            "--format torch writes a torch.export archive: give --out FILE.pt2 "
            "(read it with torch.export.load(FILE).module(), or netproof check-model FILE.pt2)"
        )
    if args.max_len < 1:
        raise UsageError(f"--max-len {args.max_len}: give the longest token sequence, >= 1")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    tmp = f"{args.out}.tmp-{os.getpid()}.pt2"
    try:
        save_pt2(net, tmp, dtype=args.dtype, max_len=args.max_len)
        os.replace(tmp, args.out)
    except (MissingExtraError, StateDictError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if os.path.exists(tmp):  # a failed save leaves no half-written file
            os.remove(tmp)
    announce_written(
        args.out, f"{name} as a {args.dtype} torch module (up to {args.max_len} tokens)", net
    )


def announce_written(path: str, what: str, net: Network | RecurrentNetwork | Seq2Seq) -> None:
    """The one line a command prints (on stderr, so that stdout stays the data) once it has
    written ``path``: what it holds, the network's size and the file's size in bytes."""
    print(
        f"wrote {path}: {what} ({network_size(net)}; {os.path.getsize(path):,} bytes)",
        file=sys.stderr,
    )
