"""``netproof list``: the constructions, their parameters and claims (text or ``--json``).

May import the campaign (the session's registry) and the vocabulary.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from netproof.symbolic.size import NetworkSize, network_size
from netproof.verifier.campaign.errors import EXIT_OK
from netproof.verifier.campaign.sources import Session

__all__ = ["add_parser", "cmd_list"]


def add_parser(sub: Any) -> None:
    """Register ``netproof list`` on the CLI's subparsers."""
    p = sub.add_parser("list", help="constructions, their parameters and claims")
    p.add_argument(
        "names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace, session: Session) -> int:
    rows: list[dict[str, Any]] = []
    listed = (
        [c for name in args.names for c in session.resolve(name)]
        if args.names
        else list(session.registry().values())
    )
    for c in listed:
        values = c.parse_params({})
        claims = c.claims(values)
        rows.append(
            {
                "name": c.name,
                "id": c.paper_id,
                "title": c.title,
                "reference": c.reference,
                "language": (lambda lang: lang.name if lang else None)(
                    c.reference_language(values)
                ),
                "params": [
                    {
                        "name": p.name,
                        "default": p.default,
                        "help": p.help,
                        **({"choices": list(p.choices)} if p.choices else {}),
                    }
                    for p in c.params
                ]
                + (
                    [{"name": "n", "default": "the word's length", "help": "built per word length"}]
                    if c.per_length
                    else []
                ),
                "claims": [
                    {"id": cl.id, "statement": cl.statement, "reference": cl.reference}
                    for cl in claims
                ],
                "size": _size(c, values),
            }
        )
    if args.json:
        print(json.dumps({"constructions": rows}, indent=2, ensure_ascii=False))
        return EXIT_OK
    for r in rows:
        print(f"{r['name']}  ({r['id']})")
        print(f"    {r['title']} — {r['reference']}")
        if r["params"]:
            print("    params: " + ", ".join(f"{p['name']}={p['default']}" for p in r["params"]))
        print(f"    claims: {', '.join(cl['id'] for cl in r['claims'])}")
        size = r["size"]
        shown = str(NetworkSize(**{k: v for k, v in size.items() if k != "n"}))
        print(
            f"    size: {shown}"
            + (f" (built per word length; at n = {size['n']})" if "n" in size else "")
        )
    return EXIT_OK


SIZE_AT_N = 8
"""The word length at which ``list`` sizes a construction built per length (its size grows with n)."""


def _size(c: Any, values: Any) -> dict[str, int]:
    """The construction's network size with these parameters (``layers``, ``heads``, ``dims``,
    ``sublayers``; with ``n`` for one built per word length, sized at n = :data:`SIZE_AT_N`)."""
    if c.per_length:
        return {**network_size(c.network(values, SIZE_AT_N)).to_json(), "n": SIZE_AT_N}
    return network_size(c.network(values)).to_json()
