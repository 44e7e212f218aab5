"""The ``netproof`` command line (also ``python -m netproof``).

    netproof list [NAME|FILE.py...] [--json]
    netproof run NAME WORD|@FILE [-p key=value]... [--backend auto|exact|sympy|interval|torch] [--trace] [--json]
                 [--device cpu|cuda] [--dtype float64|float32|float16|bfloat16] [--check]
    netproof prove [NAME...] [-p key=value]... [--max-n N] [--method exhaustive|smt|all] [--timeout S] [--json] [--out DIR]
    netproof recheck LOG.json|DIR... [--solver cvc5|z3] [--timeout S] [--json]
    netproof new NAME [--out PATH]

Wherever a construction NAME is expected, a user module FILE.py (every construction it defines)
or FILE.py:NAME (one of them) works too: see :mod:`netproof.verifier.campaign.usermod`.

Exit status: 0 success (``prove``: every claim proved), 1 a claim refuted, 3 a claim unknown and
none refuted, 2 a usage error (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NoReturn

from netproof.symbolic import (
    Classifier,
    FlatEmbedding,
    Network,
    NotRationalError,
    RecurrentNetwork,
    Seq2Seq,
    SymbolicError,
    WordError,
    fingerprint,
    render,
    tokenize,
)

from netproof.verifier.claims import Claim, Construction, Proved, Refuted, Unknown, Verdict

EXIT_OK, EXIT_REFUTED, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


_USER: dict[str, Construction] = {}
"""Constructions loaded from user modules in this invocation (forked workers inherit them)."""
_USER_SOURCE: dict[str, str] = {}
"""The module file each user construction came from (a worker without them reloads it)."""
_LOADED: dict[str, tuple[Construction, ...]] = {}
"""User modules loaded in this invocation, by real path (each file is run once)."""


def _registry() -> dict[str, Construction]:
    from netproof.constructions import REGISTRY

    if not _USER:
        return REGISTRY
    return {**REGISTRY, **_USER}


def _construction(name: str) -> Construction:
    reg = _registry()
    if name not in reg:
        raise UsageError(f"unknown construction {name!r}; known: {', '.join(reg)} (see `netproof list`)")
    return reg[name]


def _load_user(path: str) -> tuple[Construction, ...]:
    """The constructions of the user module ``path``, added to the registry of this invocation."""
    from netproof.constructions import REGISTRY

    from netproof.verifier.campaign.usermod import UserModuleError, load

    key = os.path.realpath(path)
    if key in _LOADED:
        return _LOADED[key]
    try:
        found = load(path, builtin=REGISTRY)
    except UserModuleError as exc:
        raise UsageError(str(exc)) from None
    for c in found:
        if c.name in _USER:
            raise UsageError(
                f"{path}: construction {c.name!r} is also defined by {_USER_SOURCE[c.name]}; rename one of them"
            )
    for c in found:
        _USER[c.name] = c
        _USER_SOURCE[c.name] = path
    _LOADED[key] = found
    return found


def _load_file_construction(path: str) -> Construction:
    """A network file (``netproof export``) as a construction: the file's network, with the
    claims of the construction and parameters recorded in its ``extra`` (so ``prove FILE.json``
    checks those claims on the network as the file has it, edited or not)."""
    import dataclasses

    key = os.path.realpath(path)
    if key in _LOADED:
        return _LOADED[key][0]
    net, c, values = _load_network_file(path)
    if c is None:
        raise UsageError(
            f"{path}: its extra field names no known construction and parameters, so it has no claims to "
            "prove; `netproof run` it, or write a construction module (`netproof new`)"
        )
    if c.per_length:
        raise UsageError(
            f"{path} holds the {c.name} network for one word length only; prove the construction itself: "
            f"`netproof prove {c.name}`"
        )
    fixed = tuple(
        dataclasses.replace(p, default=str(values[p.name]), choices=(str(values[p.name]),) if p.choices else ())
        for p in c.params
    )
    name = os.path.basename(path)
    if name in _registry():
        raise UsageError(f"{path}: the file name {name!r} is also a construction's name; rename the file")
    file_c = dataclasses.replace(c, name=name, params=fixed, build=lambda _values: net)
    _USER[name] = file_c
    _USER_SOURCE[name] = path
    _LOADED[key] = (file_c,)
    return file_c


def _resolve(arg: str) -> list[Construction]:
    """A command-line construction: a built-in NAME, a user module FILE.py (all of its
    constructions) or FILE.py:NAME (one of them), or a network file FILE.json."""
    from netproof.verifier.campaign.usermod import is_module_ref, module_filename, split_ref

    if arg.endswith(".json"):
        if not os.path.isfile(arg):
            raise UsageError(f"cannot read the network file {arg!r}: no such file")
        return [_load_file_construction(arg)]
    if not is_module_ref(arg):
        if arg not in _registry():
            for guess in (f"{arg}.py", module_filename(arg)):
                if os.path.isfile(guess):
                    raise UsageError(f"unknown construction {arg!r}; to use the module {guess}, give its path: {guess}")
        return [_construction(arg)]
    path, name = split_ref(arg)
    found = _load_user(path)
    if name is None:
        return list(found)
    for c in found:
        if c.name == name:
            return [c]
    raise UsageError(f"{path} defines no construction {name!r}; it defines: {', '.join(c.name for c in found)}")


def _one(arg: str, command: str) -> Construction:
    """Exactly one construction for ``run`` and ``export``."""
    found = _resolve(arg)
    if len(found) > 1:
        names = ", ".join(c.name for c in found)
        raise UsageError(
            f"{arg} defines {len(found)} constructions ({names}); name one: "
            f"`netproof {command} {arg}:{found[0].name} ...`"
        )
    return found[0]


def _parse_assignments(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"parameter {item!r} must look like key=value (e.g. -p c=ln(2))")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise UsageError(f"parameter {item!r} has no name before '='")
        if key in out:
            raise UsageError(f"parameter {key!r} is given twice")
        out[key] = value.strip()
    return out


def _values(c: Construction, given: Mapping[str, str]) -> dict[str, Any]:
    try:
        return c.parse_params(given)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    except ValueError as exc:
        raise UsageError(f"{c.name}: {exc}") from None


def _show_params(values: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in values.items()}


# --------------------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace) -> int:
    rows = []
    listed = [c for name in args.names for c in _resolve(name)] if args.names else list(_registry().values())
    for c in listed:
        values = c.parse_params({})
        claims = c.claims(values)
        rows.append(
            {
                "name": c.name,
                "id": c.paper_id,
                "title": c.title,
                "reference": c.reference,
                "language": (lambda lang: lang.name if lang else None)(c.reference_language(values)),
                "params": [
                    {"name": p.name, "default": p.default, "help": p.help, **({"choices": list(p.choices)} if p.choices else {})}
                    for p in c.params
                ]
                + ([{"name": "n", "default": "the word's length", "help": "built per word length"}] if c.per_length else []),
                "claims": [{"id": cl.id, "statement": cl.statement, "reference": cl.reference} for cl in claims],
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
    return EXIT_OK


# --------------------------------------------------------------------------- run


def _value_text(value: Any) -> str:
    from netproof.verifier.exhaustive.checker import format_value

    return format_value(value)


def _is_network_file(name: str) -> bool:
    return name.endswith(".json") or os.sep in name


def _load_network_file(path: str) -> tuple[Network, Construction | None, dict[str, Any]]:
    """A network file (``netproof export``) with the construction and parameters it came from,
    when its ``extra`` names a known construction (for the reference language)."""
    from netproof.symbolic.netfile import NetworkFileError, load_file

    try:
        net, extra = load_file(path)
    except OSError as exc:
        raise UsageError(f"cannot read the network file {path!r}: {exc.strerror}") from None
    except NetworkFileError as exc:
        raise UsageError(f"{path}: {exc}") from None
    extra = dict(extra or {})
    name = extra.get("construction")
    reg = _registry()
    if isinstance(name, str) and name in reg:
        c = reg[name]
        params = extra.get("params") or {}
        try:
            values = c.parse_params({str(k): str(v) for k, v in dict(params).items()})
        except (KeyError, ValueError):
            return net, None, {}
        return net, c, values
    return net, None, {}


def cmd_run(args: argparse.Namespace) -> int:
    from netproof.verifier.campaign.usermod import is_module_ref

    if not is_module_ref(args.name) and _is_network_file(args.name):
        if args.param:
            raise UsageError("a network file has its parameters built in; drop -p (re-export to change them)")
        file_net, c_file, values = _load_network_file(args.name)
        return _run_network(args, file_net, c_file, values, source=args.name)
    c = _one(args.name, "run")
    given = _parse_assignments(args.param)
    values = _values(c, given)
    return _run_network(args, None, c, values, source=c.name)


def _run_network(
    args: argparse.Namespace, file_net: Network | None, c: Construction | None, values: dict[str, Any], source: str
) -> int:
    word_text: str = args.word
    if word_text.startswith("@"):
        try:
            with open(word_text[1:], encoding="utf-8") as fh:
                word_text = fh.read().strip()
        except OSError as exc:
            raise UsageError(f"cannot read the word from {word_text[1:]!r}: {exc.strerror}") from None
    if file_net is not None:
        probe = file_net
    else:
        assert c is not None
        probe = c.network(values, 0) if c.per_length else c.network(values)
    try:
        word = tokenize(probe.alphabet, word_text)
    except WordError as exc:
        raise UsageError(str(exc)) from None
    if file_net is None and c is not None and c.per_length:
        net = c.network(values, len(word))
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
    if args.backend == "torch":
        return _run_torch(args, net, c, values, source, word)
    backend, trace = _evaluate(net, word, args.backend, args.length)
    lang = c.reference_language(values) if c is not None else None
    member = lang.contains(word) if lang else None
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": _show_params(values),
        "word": render(net.alphabet, word),
        "tokens": list(trace.tokens),
        "n": trace.n,
        "backend": backend,
        "fingerprint": fingerprint(net),
        "accepted": trace.accepted,
        "output": _value_text(trace.output) if trace.output is not None else None,
        "member": member,
    }
    if trace.next_symbols is not None:
        end = getattr(net.readout, "end", None)
        record["length"] = args.length if args.length is not None else trace.n
        last = trace.next_symbols[-1]
        record["next"] = sorted(s for s in last if s != end)
        record["end"] = end in last if end is not None else None
        record["next_by_position"] = [
            {"i": trace.positions[t], "token": trace.tokens[t], "next": sorted(s for s in allowed if s != end),
             "end": end in allowed if end is not None else None}
            for t, allowed in enumerate(trace.next_symbols)
        ]
    if args.trace:
        record["trace"] = _trace_json(trace)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(f"word: {record['word'] or 'ε'}   tokens: {' '.join(trace.tokens) or '(none)'}   n = {trace.n}")
    if args.trace:
        _print_trace(trace)
    if trace.output is not None:
        print(f"logit s = {record['output']}   ({backend})")
    if trace.next_symbols is not None:
        shown = " ".join(record["next"]) or "(no bracket)"
        ending = "" if record["end"] is None else ("; the string may end here" if record["end"] else "; the string may not end here")
        print(f"allowed next after the input (n = {record['length']}): {shown}{ending}   ({backend})")
    if trace.accepted is not None:
        verdict = "accepted (s > 0)" if trace.accepted else "rejected (s <= 0)"
        print(f"{verdict}" + ("" if lang is None else f"; {lang.name}: {'member' if member else 'not a member'}"))
    return EXIT_OK


def _run_recurrent(
    args: argparse.Namespace, net: RecurrentNetwork, c: Construction | None, values: dict[str, Any], source: str, word: Any
) -> int:
    """``run`` for a recurrent network: the predicted next-symbol set after every prefix (exact;
    ``--backend interval`` for tanh / logistic / softmax cells), accepted iff every prediction is
    the task's target (when the construction names one)."""
    from netproof.symbolic.recurrent import run as run_recurrent

    if args.length is not None:
        raise UsageError(f"{source} is a recurrent network: it reads any length; drop --length")
    backend = {"auto": "exact", "exact": "exact", "interval": "interval"}.get(args.backend)
    if backend is None:
        raise UsageError(f"--backend {args.backend} does not run recurrent networks; use exact or interval")
    try:
        trace = run_recurrent(net, word, backend)  # type: ignore[arg-type]
    except SymbolicError as exc:
        raise UsageError(f"{type(exc).__name__}: {exc}") from None
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
            row["memory"] = [[_value_text(v) for v in e] for e in st.memory if any(v != 0 for v in e)]
        steps.append(row)
    decided = all(st.predicted is not None for st in trace.steps)
    accepted = None if task is None or not decided else task.accepts(tuple(word), trace.predictions)
    right = None if targets is None else all(st.predicted == t for st, t in zip(trace.steps, targets, strict=True))
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": _show_params(values),
        "word": render(net.alphabet, word),
        "backend": backend,
        "fingerprint": fingerprint(net),
        "task": None if task is None else task.name,
        "steps": steps,
        "accepted": accepted,
        "member": None if task is None else task.contains(tuple(word)),
        "predictions_equal_targets": right,
    }
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
            print("        h: " + ("  ".join(f"{d}={v}" for d, v in row["h"].items() if v != "0") or "0"))
            print("        memory (top first): " + (" | ".join(" ".join(e) for e in row["memory"]) or "empty"))
    if accepted is not None:
        print(
            ("accepted" if accepted else "rejected")
            + f"; {task.name}: {'member' if record['member'] else 'not a member'}"  # type: ignore[union-attr]
            + f"; every predicted set {'equals' if right else 'does not equal'} the target"
        )
    return EXIT_OK


def _finite(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x


def _run_torch(
    args: argparse.Namespace, net: Network, c: Construction | None, values: dict[str, Any], source: str, word: tuple[str, ...]
) -> int:
    """``run --backend torch``: the float evaluation (evidence, not proof), optionally checked
    against the exact interpreter on the same word (``--check``)."""
    from netproof.symbolic import torch_backend

    if args.trace:
        raise UsageError("--trace prints exact traces; the torch backend keeps its states as tensors "
                         "(symbolic.torch_backend.run(..., keep_states=True)): drop --trace or use --backend exact")
    try:
        compiled = torch_backend.compile(net, dtype=args.dtype, device=args.device)
        fb = compiled.forward(compiled.encode([word], length=args.length), keep_states=False)
        agreement = None
        if args.check:
            from netproof.verifier.floats.differential import compare

            agreement = compare(net, [word], dtype=args.dtype, device=args.device, length=args.length, compiled=compiled)
    except SymbolicError as exc:
        raise UsageError(f"{type(exc).__name__}: {exc}") from None
    lang = c.reference_language(values) if c is not None else None
    member = lang.contains(word) if lang else None
    emb = net.embedding
    tokens = list(word) if isinstance(emb, FlatEmbedding) else [*emb.prefix, *word, *emb.suffix]
    positions = [0] if isinstance(emb, FlatEmbedding) else [emb.index_base + t for t in range(len(tokens))]
    logit = fb.logit(0)
    accepted = fb.accepted[0]
    record: dict[str, Any] = {
        "construction": c.name if c is not None else None,
        "source": source,
        "id": c.paper_id if c is not None else None,
        "params": _show_params(values),
        "word": render(net.alphabet, word),
        "tokens": tokens,
        "n": len(positions),
        "backend": "torch",
        "fingerprint": fingerprint(net),
        "accepted": accepted,
        "output": None if logit is None or math.isnan(logit) else repr(logit),
        "member": member,
        "device": fb.device,
        "dtype": fb.dtype,
        "min_gap": _finite(fb.min_gap),
        "unresolved_ties": {
            "count": fb.unresolved_ties.count,
            "first": [{"layer": t.layer, "head": t.head, "i": t.position} for t in fb.unresolved_ties.first],
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
            {"i": positions[t], "token": tokens[t], "next": sorted(s for s in allowed if s != end),
             "end": end in allowed if end is not None else None}
            for t, allowed in enumerate(nexts[0])
        ]
    if agreement is not None:
        record["agreement"] = agreement.to_json()
    code = EXIT_OK if agreement is None or agreement.agree else EXIT_REFUTED
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return code
    shown_word = record["word"] if len(word) <= 60 else f"{render(net.alphabet, word[:30])}... ({len(word)} symbols)"
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(f"word: {shown_word or 'ε'}   n = {record['n']}")
    where = f"torch {fb.dtype} on {fb.device}"
    if logit is not None:
        print(f"logit s = {record['output']}   ({where}: evidence, not proof)")
    if nexts is not None:
        shown = " ".join(record["next"]) or "(no bracket)"
        ending = "" if record["end"] is None else ("; the string may end here" if record["end"] else "; the string may not end here")
        print(f"allowed next after the input (n = {record['length']}): {shown}{ending}   ({where})")
    gap = "none met" if fb.min_gap == float("inf") else f"{fb.min_gap:.6g}"
    print(f"hardmax: smallest score gap {gap}; unresolved ties: {fb.unresolved_ties.count}"
          + "".join(f"\n   tie at {t.layer!r} head {t.head!r} i={t.position}" for t in fb.unresolved_ties.first))
    if accepted is not None:
        verdict = "accepted (s > 0)" if accepted else "rejected (s <= 0)"
        print(f"{verdict}" + ("" if lang is None else f"; {lang.name}: {'member' if member else 'not a member'}"))
    elif isinstance(net.readout, Classifier):
        print("no verdict: the float logit is NaN (a value the exact interpreter calls undefined)")
    if agreement is not None:
        if agreement.agree:
            err = "" if agreement.max_logit_error is None else f"; max |float logit - exact logit| = {agreement.max_logit_error:.3g}"
            print(f"check: agrees with the {'/'.join(agreement.exact_backends) or 'exact'} interpreter{err}")
        else:
            d = agreement.first[0]
            print(f"check: DISAGREES with the {'/'.join(agreement.exact_backends)} interpreter on the {d.what}: "
                  f"float {d.float_value}, exact {d.exact_value}")
    return code


def cmd_export(args: argparse.Namespace) -> int:
    from netproof.symbolic.netfile import dumps

    c = _one(args.name, "export")
    given = _parse_assignments(args.param)
    values = _values(c, given)
    if c.per_length:
        if args.n is None:
            raise UsageError(f"{c.name} is built per word length: give --n N (the word length it reads)")
        net = c.network(values, args.n)
    else:
        if args.n is not None:
            raise UsageError(f"{c.name} reads words of any length: drop --n")
        net = c.network(values)
    if isinstance(net, RecurrentNetwork):
        raise UsageError(
            f"{c.name} builds a RecurrentNetwork ({type(net.cell).__name__}); network files and state_dict exports "
            "hold transformer-style Networks only (see `netproof run` for its traces)"
        )
    if isinstance(net, Seq2Seq):
        raise UsageError(
            f"{c.name} builds an encoder–decoder (Seq2Seq), which neither network files nor state_dicts hold yet; "
            f"rebuild it from its construction: netproof run {c.name} WORD -p ..."
        )
    extra = {
        "construction": c.name,
        "paper_id": c.paper_id,
        "params": _show_params(values),
        "reference": c.reference,
        "claims": [{"id": cl.id, "statement": cl.statement} for cl in c.claims(values)],
    }
    if args.format == "state_dict":
        from netproof.symbolic.torch_export import MissingExtraError, save

        if not args.out:
            raise UsageError("--format state_dict writes a binary torch file: give --out FILE.pt")
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        tmp = f"{args.out}.tmp-{os.getpid()}"
        try:
            save(net, tmp, dtype=args.dtype)
        except MissingExtraError as exc:
            raise UsageError(str(exc)) from None
        os.replace(tmp, args.out)
        return EXIT_OK
    text = dumps(net, extra=extra)
    if args.out:
        _write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_fuzz(args: argparse.Namespace) -> int:
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.fuzzing.fuzz import FuzzError, fuzz, fuzzable

    given = _parse_assignments(args.param)
    reg = _registry()
    if args.names:
        selected = [c for n in args.names for c in _resolve(n)]
    else:
        selected = [c for c in reg.values() if all(any(p.name == k for p in c.params) for k in given)]
        if not selected:
            raise UsageError(f"no construction has all of the parameters {', '.join(given)}")
    if args.examples < 1:
        raise UsageError(f"--examples {args.examples} must be >= 1")
    if args.max_len < 0:
        raise UsageError(f"--max-len {args.max_len} must be >= 0")
    database: Any = None if (args.no_database or args.ci) else (args.database or None)
    # --backend torch: a construction whose network the torch backend does not compile (a
    # recurrent network, an encoder–decoder) is fuzzed exactly, and says so.
    torch_unsupported: dict[str, str] = {}
    if args.backend == "torch":
        from netproof.symbolic import torch_backend

        compiled_one = False
        for c in selected:
            net = c.network(_values(c, given), 1) if c.per_length else c.network(_values(c, given))
            reason = torch_backend.unsupported(net)
            if reason is not None:
                torch_unsupported[c.name] = reason
                if not args.quiet and not args.json:
                    print(f"{c.name}: not supported by --backend torch ({reason}); its claims run exactly",
                          file=sys.stderr, flush=True)
            elif not compiled_one:  # torch itself, the device and the dtype fail here, before the search
                try:
                    torch_backend.compile(net)
                except SymbolicError as exc:
                    raise UsageError(f"{type(exc).__name__}: {exc}") from None
                compiled_one = True
    rows: list[tuple[Construction, dict[str, Any], Claim, Verdict, float]] = []
    float_issues: dict[tuple[str, str], list[Any]] = {}
    for c in selected:
        values = _values(c, given)
        job = Job(c, values)
        backend = "exact" if c.name in torch_unsupported else args.backend
        for claim in c.claims(values):
            started = time.perf_counter()
            if fuzzable(claim) is None:
                kwargs: dict[str, Any] = {"examples": args.examples, "max_len": max(args.max_len, claim.min_len),
                                          "seed": args.seed, "derandomize": args.ci}
                if database is not None:
                    kwargs["database"] = database
                elif args.no_database or args.ci:
                    kwargs["database"] = None
                issues: list[Any] = []
                kwargs["backend"] = backend
                kwargs["on_float_issue"] = issues.append
                try:
                    verdict = fuzz(job, claim, **kwargs)
                except FuzzError as exc:
                    raise UsageError(str(exc)) from None
            else:
                issues = []
                verdict = fuzz(job, claim)
            seconds = time.perf_counter() - started
            rows.append((c, values, claim, verdict, seconds))
            float_issues[(c.name, claim.id)] = issues
            if not args.quiet and not args.json:
                print(f"{c.name} {claim.id}: {_fuzz_verdict(verdict)} ({seconds:.1f}s)", file=sys.stderr, flush=True)
    records = []
    for c, values, claim, verdict, seconds in rows:
        record = _record(c, values, claim, None, verdict)
        record["verdict"] = _fuzz_verdict(verdict)
        record["kind"] = "fuzz"
        record["budget"] = {"examples": args.examples, "max_len": args.max_len, "seed": args.seed, "derandomized": args.ci}
        if args.backend == "torch" and c.name in torch_unsupported:
            record["backend"] = "exact"
            record["torch_unsupported"] = torch_unsupported[c.name]
        elif args.backend == "torch":
            record["backend"] = "torch"
            record["float_issues"] = [
                {"word": render(_alphabet_of(c, values), i.word), "detail": i.detail} for i in float_issues.get((c.name, claim.id), [])
            ]
        records.append(record)
        if args.out:
            path = _record_path(args.out, c, values, claim, None, kind="fuzz")
            _write_atomic(path, json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    refuted = [r for r in rows if isinstance(r[3], Refuted)]
    code = EXIT_REFUTED if refuted else EXIT_OK
    if args.json:
        print(json.dumps({"results": records, "exit_code": code}, indent=2, ensure_ascii=False))
        return code
    for c, _vals, claim, verdict, seconds in rows:
        line = f"{c.name:<14} {claim.id:<16} {_fuzz_verdict(verdict):<26} {seconds:6.1f}s"
        print(line)
    for c, vals, claim, verdict, _s in refuted:
        assert isinstance(verdict, Refuted)
        alphabet = _alphabet_of(c, vals)
        shown = "ε (empty word)" if not verdict.word else render(alphabet, verdict.word)
        print(f"\n  REFUTED {c.name} {claim.id}: {claim.statement}\n      {verdict.detail}\n      shrunk counterexample: {shown} (replayed with the exact checker)")
    for c, vals, claim, _verdict, _s in rows:
        for issue in float_issues.get((c.name, claim.id), [])[:3]:
            shown = render(_alphabet_of(c, vals), issue.word) or "ε"
            if len(shown) > 60:
                shown = f"{shown[:40]}... ({len(issue.word)} symbols)"
            print(f"\n  float issue {c.name} {claim.id} (not a counterexample: the exact re-check holds): {shown}\n      {issue.detail}")
    searched = [r for r in rows if not isinstance(r[3], Refuted) and not r[3].reason.startswith("not fuzzable")]  # type: ignore[union-attr]
    print(
        f"\n{len(refuted)} refuted, {len(searched)} with no counterexample found (not a proof), "
        f"{len(rows) - len(refuted) - len(searched)} not fuzzable" + (f"; logs in {args.out}/" if args.out else "")
    )
    return code


def _fuzz_verdict(v: Verdict) -> str:
    if isinstance(v, Refuted):
        return "refuted"
    if isinstance(v, Unknown) and v.reason.startswith("not fuzzable"):
        return "not fuzzable"
    if isinstance(v, Unknown) and v.reason.startswith("no counterexample found"):
        return "no counterexample found"
    return "unknown"


def cmd_ledger(args: argparse.Namespace) -> int:
    from netproof.verifier.campaign.ledger import build

    if not os.path.isdir(args.proofs):
        raise UsageError(f"no proof records at {args.proofs!r}: run `netproof prove` first or pass --proofs DIR")
    text = build(_registry(), args.proofs)
    if args.out:
        _write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _evaluate(net: Any, word: Any, backend: str, length: int | None) -> tuple[str, Any]:
    """Run ``net`` with ``backend``; ``auto`` takes the first of exact, sympy, interval that can
    (exact rationals where the network stays rational; sympy where √ or e^x enter; intervals
    where sympy cannot decide a sign). Returns the backend used and the trace."""
    from netproof.symbolic.evaluation import UndecidedSignError

    order = ("exact", "sympy", "interval") if backend == "auto" else (backend,)
    last: Exception | None = None
    for name in order:
        if name == "exact":
            from netproof.symbolic.exact import run
        elif name == "sympy":
            from netproof.symbolic.sympy_interp import run
        else:
            from netproof.symbolic.interval import run
        try:
            return name, run(net, word, length=length)
        except (NotRationalError, UndecidedSignError) as exc:
            last = exc
            if backend != "auto":
                break
        except SymbolicError as exc:
            raise UsageError(f"{type(exc).__name__}: {exc}") from None
    raise UsageError(f"{last}") from None


def _trace_json(trace: Any) -> dict[str, Any]:
    dims = trace.network.dims
    return {
        "dims": list(dims),
        "positions": list(trace.positions),
        "states": [
            {
                "after": s.label,
                "rows": [
                    {d: None if v is None else _value_text(v) for d, v in zip(dims, row, strict=True)}
                    for row in s.rows
                ],
            }
            for s in trace.states
        ],
        "attention": [
            {
                "layer": sel.layer,
                "head": sel.head,
                "position": trace.positions[sel.position],
                "weights": [_value_text(w) for w in sel.weights],
                "selected": None if sel.selected is None else [trace.positions[j] for j in sel.selected],
            }
            for sel in trace.selections
        ],
    }


def _print_trace(trace: Any) -> None:
    dims = trace.network.dims
    sels: dict[str, list[Any]] = {}
    for sel in trace.selections:
        sels.setdefault(sel.layer, []).append(sel)
    for state in trace.states:
        print(f"\n-- after {state.label}")
        for layer_sel in sels.get(state.label, []):
            where = trace.positions[layer_sel.position]
            if layer_sel.selected is not None:
                chosen = ", ".join(str(trace.positions[j]) for j in layer_sel.selected) or "nothing (empty mask: zero vector)"
                print(f"   head {layer_sel.head} at i={where} selects {chosen}")
            else:
                ws = " ".join(_value_text(w) for w in layer_sel.weights)
                print(f"   head {layer_sel.head} at i={where} weights: {ws}")
        for t, row in enumerate(state.rows):
            token = trace.tokens[t] if len(trace.tokens) == len(state.rows) else render(trace.network.alphabet, trace.tokens)
            if all(v is None for v in row):
                print(f"   i={trace.positions[t]:<3} {token:>4} | (never read after this point: left undefined)")
                continue
            cells = [f"{d}={_value_text(v)}" for d, v in zip(dims, row, strict=True) if not (isinstance(v, Fraction) and v == 0)]
            print(f"   i={trace.positions[t]:<3} {token:>4} | " + ("  ".join(cells) or "0"))
    print()


# --------------------------------------------------------------------------- encoder–decoder runs


def _run_seq2seq(
    args: argparse.Namespace, net: Seq2Seq, c: Construction, values: dict[str, Any], word: tuple[str, ...], source: str
) -> int:
    """``run`` on an encoder–decoder: the decoder's steps, and with a :class:`Simulates` claim
    the simulated RNN's state and (for a machine) the configuration each step holds."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS
    from netproof.symbolic.seq2seq import run as run_seq2seq

    from netproof.verifier.claims import Simulates

    if args.backend not in ("auto", "exact", "sympy"):
        raise UsageError(f"--backend {args.backend}: the encoder–decoder {net.name!r} runs with exact or sympy")
    if args.length is not None:
        raise UsageError("--length applies to encoder-style networks; an encoder–decoder reads the whole word")
    backend = "sympy" if args.backend == "sympy" else "exact"
    budget = DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(values, word)
    try:
        trace = run_seq2seq(net, word, max_steps=budget, backend=backend)  # type: ignore[arg-type]
    except SymbolicError as exc:
        raise UsageError(f"{type(exc).__name__}: {exc}") from None
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
                reads.append({"layer": sel.layer, "positions": [trace.positions[j] for j in sel.selected],
                              "tokens": [trace.tokens[j] for j in sel.selected]})
        entry: dict[str, Any] = {"t": step.t, "reads": reads, "halts": step.halts}
        if sim is not None:
            h = {u: y[d] for u, d in zip(sim.rnn.unit_names, sim.hidden, strict=True)}
            entry["hidden"] = {u: _value_text(v) for u, v in h.items() if v != 0}
            if step.t in machine:
                k, conf = machine[step.t]
                got = sim.decode(h) if sim.decode is not None else None
                entry["configuration"] = {"k": k, "machine": str(conf), "decoder": str(got), "agree": got == conf}
        entry["y"] = {d: _value_text(v) for d, v in y.items() if v != 0}
        steps.append(entry)
    record: dict[str, Any] = {
        "construction": c.name,
        "source": source,
        "id": c.paper_id,
        "params": _show_params(values),
        "word": render(net.alphabet, word),
        "tokens": list(trace.tokens),
        "n": trace.n,
        "backend": backend,
        "fingerprint": fingerprint(net),
        "halted_at": trace.halted_at,
        "steps_run": len(trace.steps),
        "machine": None if final is None else {"configuration": final[0], "halting": str(final[1])},
    }
    if args.trace:
        record["steps"] = steps
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{source} — {net.reference}")
    print("params: " + (" ".join(f"{k}={v}" for k, v in record["params"].items()) or "(none)"))
    print(f"word: {record['word'] or 'ε'}   encoder tokens: {' '.join(trace.tokens) or '(none)'}   n = {trace.n}   d = {len(net.dims)}")
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
        print("   (configurations: state [stack 1 | stack 2], tops on the left; between them the rule unit D:state/top1/top2 fires;")
        print("    the loader units ST pA pB e1 e3 ACC START DONE are left out once the machine runs)")
    started = False
    loader = {"ST", "pA", "pB", "e1", "e3", "ACC", "START", "DONE"}
    for e in steps:
        reads = " ".join(f"{r['tokens'][-1]}@{','.join(map(str, r['positions']))}" if len(r["positions"]) <= 3
                         else f"{r['tokens'][-1]}@{len(r['positions'])} pos" for r in e["reads"][-1:]) or "-"
        hidden = e.get("hidden", e["y"])
        if "configuration" in e:
            conf = e["configuration"]
            mark = "=" if conf["agree"] else "≠"
            print(f"{e['t']:>4}  {reads:<9}  config {conf['k']}: decoder holds {conf['decoder']}  {mark}  machine {conf['machine']}")
            started = True
            continue
        cells = [f"{u}={v}" for u, v in hidden.items() if not (started and u in loader)]
        shown = "  ".join(cells[:8]) + (f"  … (+{len(cells) - 8})" if len(cells) > 8 else "")
        halts = "   ← halts" if e["halts"] else ""
        print(f"{e['t']:>4}  {reads:<9}  {shown or '0'}{halts}")
    print()


# --------------------------------------------------------------------------- prove


@dataclass(frozen=True)
class Task:
    construction: str
    given: tuple[tuple[str, str], ...]
    claim_indices: tuple[int, ...]
    max_n: int | None
    module: str | None = None  # the user module the construction comes from, if any
    method: str = "exhaustive"
    timeout: float = 60.0


def _claim_bound(claim: Claim, max_n: int | None, verdict: Verdict | None = None) -> int | None:
    """The word-length bound a verdict covers; None for statements without one (lemmas over all
    integers or reals, identities, structural proofs that hold for every length)."""
    from netproof.verifier.claims import BlockIdentity, ExactFact, ForAll, Identity

    if isinstance(claim, (BlockIdentity, Identity, ExactFact, ForAll)):
        return None
    if isinstance(verdict, Proved) and verdict.method.startswith("structural"):
        return None
    return claim.max_len if max_n is None else max_n


def _work(task: Task) -> list[tuple[Any, float]]:
    """Check the claims of one construction in one process, so that claims evaluated with the
    same backend share their traces."""
    from netproof.verifier.exhaustive.checker import Job
    from netproof.verifier.smt.encoder import Outcome, prove_claim

    reg = _registry()
    if task.construction not in reg and task.module is not None:
        # a worker that did not inherit the parent's registry
        if task.module.endswith(".json"):
            _load_file_construction(task.module)
        else:
            _load_user(task.module)
        reg = _registry()
    c = reg[task.construction]
    values = c.parse_params(dict(task.given))
    claims = c.claims(values)
    job = Job(c, values)
    out: list[tuple[Any, float]] = []
    for idx in task.claim_indices:
        started = time.perf_counter()
        try:
            outcome = prove_claim(job, claims[idx], method=task.method, max_len=task.max_n, timeout=task.timeout)
        except Exception as exc:  # a crash in a checker is reported as Unknown, never as a pass
            outcome = Outcome(Unknown(task.method, f"checker error: {type(exc).__name__}: {exc}"))
        out.append((outcome, time.perf_counter() - started))
    return out


def _verdict_name(v: Verdict) -> str:
    match v:
        case Proved():
            return "proved"
        case Refuted():
            return "refuted"
        case Unknown():
            return "unknown"


def _record(c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, verdict: Verdict) -> dict[str, Any]:
    from netproof.verifier.smt.prooflog import record

    return record(c, values, claim, bound, verdict)


def _write_atomic(path: str, text: str) -> None:
    from netproof.verifier.smt.prooflog import write_atomic

    write_atomic(path, text)


def _record_path(
    out: str, c: Construction, values: Mapping[str, Any], claim: Claim, bound: int | None, kind: str = "prove"
) -> str:
    from netproof.verifier.smt.prooflog import record_path

    return record_path(out, c, values, claim, bound, kind)


def cmd_prove(args: argparse.Namespace) -> int:
    given = _parse_assignments(args.param)
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g} must be > 0 (seconds of solver time per claim)")
    if args.max_n is not None and args.max_n < 0:
        raise UsageError(f"--max-n {args.max_n} must be >= 0")
    reg = _registry()
    if args.names:
        selected = [c for n in args.names for c in _resolve(n)]
    else:
        selected = [c for c in reg.values() if all(any(p.name == k for p in c.params) for k in given)]
        if not selected:
            raise UsageError(f"no construction has all of the parameters {', '.join(given)}")
    plans: list[tuple[Construction, dict[str, Any], list[Claim]]] = []
    for c in selected:
        values = _values(c, given)
        plans.append((c, values, list(c.claims(values))))
    # Tasks carry only names and the user's raw parameters (the worker rebuilds the rest). The
    # claims of one construction that evaluate words one by one with the same backend go in one
    # task, so that they share their traces; claims that do not share (batched exact checks,
    # facts, lemmas) get a task each, so that --jobs runs them side by side.
    flat = [(c, values, claim) for c, values, claims in plans for claim in claims]
    base = [0]
    for _c, _v, claims in plans:
        base.append(base[-1] + len(claims))
    tasks: list[tuple[Construction, dict[str, Any], list[Claim], Task, list[int]]] = []
    for p, (c, values, claims) in enumerate(plans):
        groups: dict[object, list[int]] = {}
        for idx, claim in enumerate(claims):
            groups.setdefault(_share_key(claim, idx), []).append(idx)
        for indices in groups.values():
            source = _USER_SOURCE.get(c.name)
            task = Task(c.name, tuple(sorted(given.items())), tuple(indices), args.max_n,
                        None if source is None else os.path.abspath(source), args.method, args.timeout)
            tasks.append((c, values, [claims[i] for i in indices], task, [base[p] + i for i in indices]))
    results: list[tuple[Construction, dict[str, Any], Claim, Verdict, float]] = [None] * len(flat)  # type: ignore[list-item]
    outcomes: list[Any] = [None] * len(flat)
    jobs = max(1, args.jobs if args.jobs else (os.cpu_count() or 1))
    interactive = sys.stderr.isatty() and not args.json
    started = time.perf_counter()

    def report(task_idx: int, done_here: list[tuple[Any, float]]) -> None:
        for flat_idx, (outcome, seconds) in zip(tasks[task_idx][4], done_here, strict=True):
            outcomes[flat_idx] = outcome
            report_one(flat_idx, outcome.verdict, seconds)

    def report_one(idx: int, verdict: Verdict, seconds: float) -> None:
        c, values, claim = flat[idx]
        results[idx] = (c, values, claim, verdict, seconds)
        done = sum(r is not None for r in results)
        line = f"[{done}/{len(flat)}] {c.name} {claim.id}: {_verdict_name(verdict)} ({seconds:.1f}s)"
        if interactive:
            width = 30
            filled = width * done // len(flat)
            sys.stderr.write(f"\r\033[K{'#' * filled}{'.' * (width - filled)} {line}")
            sys.stderr.flush()
        elif not args.quiet:
            print(line, file=sys.stderr, flush=True)

    if jobs == 1 or len(tasks) == 1:
        for idx, (_c, _v, _cl, task, _flat) in enumerate(tasks):
            report(idx, _work(task))
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            # Most expensive first, so the long constructions do not start last.
            order = sorted(range(len(tasks)), key=lambda i: -sum(_cost(cl, args.max_n) for cl in tasks[i][2]))
            futures: dict[Future[list[tuple[Any, float]]], int] = {pool.submit(_work, tasks[i][3]): i for i in order}
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    report(futures[f], f.result())
    if interactive:
        sys.stderr.write("\n")
    elapsed = time.perf_counter() - started

    from netproof.verifier.smt.prooflog import record, write_log

    records = []
    for (c, values, claim, verdict, _seconds), outcome in zip(results, outcomes, strict=True):
        bound = _claim_bound(claim, args.max_n, verdict)
        records.append(record(c, values, claim, bound, outcome))
        if args.out:
            write_log(args.out, c, values, claim, bound, outcome)
    verdicts = [r[3] for r in results]
    code = EXIT_OK
    if any(isinstance(v, Refuted) for v in verdicts):
        code = EXIT_REFUTED
    elif any(isinstance(v, Unknown) for v in verdicts):
        code = EXIT_UNKNOWN
    summary = {
        "proved": sum(isinstance(v, Proved) for v in verdicts),
        "refuted": sum(isinstance(v, Refuted) for v in verdicts),
        "unknown": sum(isinstance(v, Unknown) for v in verdicts),
        "seconds": round(elapsed, 1),
        "exit_code": code,
    }
    if args.json:
        print(json.dumps({"results": records, "summary": summary}, indent=2, ensure_ascii=False))
        return code
    _print_table(results, args.max_n)
    print(
        f"\n{summary['proved']} proved, {summary['refuted']} refuted, {summary['unknown']} unknown "
        f"in {elapsed:.1f}s" + (f"; records in {args.out}/" if args.out else "")
    )
    return code


def cmd_recheck(args: argparse.Namespace) -> int:
    from netproof.verifier.smt.prooflog import find_logs
    from netproof.verifier.smt.recheck import as_json, recheck_log

    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g} must be > 0 (seconds per query)")
    for p in args.logs:
        if not os.path.exists(p):
            raise UsageError(f"no proof log or directory at {p!r}; give a .json record written by `netproof prove`")
    paths = find_logs(args.logs)
    if not paths:
        raise UsageError(f"no .json proof logs under {' '.join(args.logs)}")
    try:
        import cvc5  # noqa: F401
    except ImportError:
        if args.solver == "cvc5":
            raise UsageError("--solver cvc5 needs the smt extra: pip install 'netproof[smt]' (PyPI cvc5)") from None
    checks = []
    for path in paths:
        check = recheck_log(path, solver=args.solver, timeout=args.timeout)
        checks.append(check)
        if not args.json:
            n = len(check.queries)
            what = f"{n} quer{'y' if n == 1 else 'ies'}" if check.solver != "checker" else "exhaustive check"
            print(f"{check.outcome.upper():9} {path}  ({what}: {check.detail})")
    outcomes = [c.outcome for c in checks]
    code = EXIT_OK
    if "disagree" in outcomes:
        code = EXIT_REFUTED
    elif "rejected" in outcomes:
        code = EXIT_USAGE
    elif "undecided" in outcomes:
        code = EXIT_UNKNOWN
    summary = {o: outcomes.count(o) for o in ("agree", "disagree", "undecided", "rejected")}
    if args.json:
        print(json.dumps({"logs": [as_json(c) for c in checks], "summary": {**summary, "exit_code": code}}, indent=2, ensure_ascii=False))
    else:
        print(f"\n{summary['agree']} agree, {summary['disagree']} disagree, {summary['undecided']} undecided, "
              f"{summary['rejected']} rejected ({args.solver})")
    return code


def _share_key(claim: Claim, idx: int) -> object:
    """Claims with equal keys run in one task (and share traces); see cmd_prove."""
    from netproof.verifier.claims import (
        BlockIdentity,
        ExactFact,
        ForAll,
        Identity,
        PredictsNext,
        Recognizes,
        Simulates,
        SoftAgrees,
        TraceProperty,
    )

    if isinstance(claim, (BlockIdentity, ExactFact, Identity, PredictsNext, SoftAgrees, ForAll, Simulates)):
        return ("alone", idx)  # PredictsNext, SoftAgrees: each walks its own trie of prefixes
    backend = getattr(claim, "backend", "exact")
    if backend == "exact" and isinstance(claim, (Recognizes, TraceProperty)) and getattr(claim, "domain", None) is None:
        return ("alone", idx)  # batched where the network allows it: nothing to share
    return ("backend", backend)


def _cost(claim: Claim, max_n: int | None) -> int:
    """A rough cost: words in the bound, times 20 for the backends that leave the rationals."""
    bound = _claim_bound(claim, max_n)
    if bound is None:
        return 1
    slow = getattr(claim, "backend", "exact") in ("interval", "sympy")
    return 2 ** min(bound, 30) * (20 if slow else 1)


def _alphabet_of(c: Construction, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The symbols a construction's words are written in, for these parameters."""
    net = c.network(values, 0) if c.per_length else c.network(values)
    return net.alphabet


def _print_table(results: Sequence[tuple[Construction, Mapping[str, Any], Claim, Verdict, float]], max_n: int | None) -> None:
    headers = ("construction", "claim", "verdict", "bound", "method", "time")
    rows = []
    for c, _values, claim, verdict, seconds in results:
        bound = _claim_bound(claim, max_n, verdict)
        btxt = "all" if bound is None else f"{claim.min_len}≤|w|≤{bound}"
        if type(claim).__name__ == "ExactFact":
            btxt = "no words"
        rows.append((c.name, claim.id, _verdict_name(verdict).upper(), btxt, verdict.method, f"{seconds:.1f}s"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)))
    problems = [(c, vals, claim, v) for c, vals, claim, v, _s in results if not isinstance(v, Proved)]
    for c, vals, claim, v in problems:
        if isinstance(v, Refuted):
            cx = "" if v.word is None else f"\n      counterexample: {render(_alphabet_of(c, vals), v.word) or 'ε (empty word)'}"
            print(f"\n  REFUTED {c.name} {claim.id}: {claim.statement}\n      {v.detail}{cx}")
        elif isinstance(v, Unknown):
            print(f"\n  UNKNOWN {c.name} {claim.id}: {claim.statement}\n      {v.reason}")


# --------------------------------------------------------------------------- new


def cmd_new(args: argparse.Namespace) -> int:
    from netproof.constructions import REGISTRY

    from netproof.verifier.campaign.usermod import UserModuleError, check_name, module_filename, render_template

    try:
        check_name(args.name)
    except UserModuleError as exc:
        raise UsageError(str(exc)) from None
    if args.name in REGISTRY:
        raise UsageError(f"{args.name!r} is the name of a built-in construction; pick another (e.g. 'my-{args.name}')")
    path = args.out or module_filename(args.name)
    if os.path.isdir(path):
        path = os.path.join(path, module_filename(args.name))
    if not path.endswith(".py"):
        raise UsageError(f"--out {path!r} must end in .py (netproof takes user modules as FILE.py)")
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(render_template(args.name))
    except FileExistsError:
        raise UsageError(f"{path} exists; not overwriting it (pick another NAME or --out PATH)") from None
    print(f"wrote {path}: construction {args.name} (MAJORITY with one uniform-attention layer)")
    print(f"next: netproof run {path} 0110 --trace")
    print(f"      netproof prove {path}")
    return EXIT_OK


# --------------------------------------------------------------------------- main


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"netproof: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="netproof", description="Exact, checkable neural-network constructions.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)

    p_list = sub.add_parser("list", help="constructions, their parameters and claims")
    p_list.add_argument("names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=cmd_list)

    p_run = sub.add_parser("run", help="evaluate a construction on one word")
    p_run.add_argument(
        "name",
        help="construction (see `netproof list`), a user module (FILE.py or FILE.py:NAME) or a network file "
        "(FILE.json, from `netproof export`)",
    )
    p_run.add_argument("word", help="the word: symbols, or space-separated tokens, or @FILE")
    p_run.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_run.add_argument(
        "--backend",
        choices=("auto", "exact", "sympy", "interval", "torch"),
        default="auto",
        help="auto (default): exact rationals if the network stays rational, else sympy, else intervals; "
        "torch: floats (evidence, not proof), with --device, --dtype and --check",
    )
    p_run.add_argument("--device", default="cpu", help="for --backend torch: cpu (default), cuda or cuda:N")
    p_run.add_argument(
        "--dtype", choices=("float64", "float32", "float16", "bfloat16"), default="float64",
        help="for --backend torch: the float format (default float64)",
    )
    p_run.add_argument(
        "--check", action="store_true",
        help="for --backend torch: also run the exact interpreter on the word and report agreement (exit 1 if they differ)",
    )
    p_run.add_argument(
        "--length",
        type=int,
        default=None,
        metavar="N",
        help="evaluate the word as the start of a string of total length N (special tokens included): "
        "positional features such as i/n use N (causal networks only; e.g. dyck-gen reading=G2)",
    )
    p_run.add_argument("--trace", action="store_true", help="every residual state and attention selection")
    p_run.add_argument("--json", action="store_true", help="print one JSON object")
    p_run.set_defaults(func=cmd_run)

    p_export = sub.add_parser("export", help="write a construction's network as a JSON network file")
    p_export.add_argument("name", help="construction (see `netproof list`) or a user module (FILE.py or FILE.py:NAME)")
    p_export.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_export.add_argument(
        "--format",
        choices=("json", "state_dict"),
        default="json",
        help="json: the netproof network format (version 1); state_dict: torch tensors with their layout "
        "(symbolic/torch_export.py), needs --out and the torch extra",
    )
    p_export.add_argument("--dtype", choices=("float64", "float32"), default="float64", help="for --format state_dict")
    p_export.add_argument("--n", type=int, default=None, help="the word length, for constructions built per length")
    p_export.add_argument("--out", default="", help="write to this file (atomically) instead of stdout")
    p_export.set_defaults(func=cmd_export)

    p_fuzz = sub.add_parser("fuzz", help="search for counterexamples with hypothesis (evidence, never proof)")
    p_fuzz.add_argument("names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)")
    p_fuzz.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_fuzz.add_argument("--examples", type=int, default=500, help="words per claim (default 500)")
    p_fuzz.add_argument("--max-len", type=int, default=40, help="the longest word drawn (default 40)")
    p_fuzz.add_argument("--seed", type=int, default=None, help="reproduce a run (default: a fresh seed, reported)")
    p_fuzz.add_argument("--ci", action="store_true", help="derandomized, no example database (the netproof-ci profile)")
    p_fuzz.add_argument("--database", default="", help="example database directory (default .netproof/fuzz-db)")
    p_fuzz.add_argument("--no-database", action="store_true", help="do not read or save failing examples")
    p_fuzz.add_argument("--json", action="store_true", help="print all logs as JSON")
    p_fuzz.add_argument("--out", default="fuzz-logs", help="directory for the fuzz logs ('' for none)")
    p_fuzz.add_argument("--quiet", action="store_true", help="no progress lines")
    p_fuzz.add_argument(
        "--backend", choices=("exact", "torch"), default="exact",
        help="torch: recognizers' words run in torch float64 (for long words, --max-len 2000), every failing or "
        "doubtful word is re-checked exactly; only exact-confirmed failures are counterexamples",
    )
    p_fuzz.set_defaults(func=cmd_fuzz)

    p_ledger = sub.add_parser("ledger", help="one Markdown page: every claim with the verdict of its proof record")
    p_ledger.add_argument("--proofs", default="proofs", help="directory of the proof records (default: proofs)")
    p_ledger.add_argument("--out", default="", help="write to this file (atomically) instead of stdout")
    p_ledger.set_defaults(func=cmd_ledger)

    p_prove = sub.add_parser("prove", help="check the claims of constructions")
    p_prove.add_argument("names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)")
    p_prove.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p_prove.add_argument("--max-n", type=int, default=None, help="override every claim's word-length bound")
    p_prove.add_argument(
        "--method",
        choices=("exhaustive", "smt", "all"),
        default="exhaustive",
        help="exhaustive: every word of the bound, exactly (default); smt: z3 queries over a symbolic word, one "
        "per length, logged as .smt2; all: exhaustive where the bound is small, smt where the claim allows, both logged",
    )
    p_prove.add_argument("--timeout", type=float, default=60.0, help="solver seconds per claim for smt (default 60)")
    p_prove.add_argument("--json", action="store_true", help="print all records and a summary as JSON")
    p_prove.add_argument("--out", default="proofs", help="directory for the JSON records ('' for none)")
    p_prove.add_argument("--jobs", type=int, default=0, help="worker processes (default: all cores)")
    p_prove.add_argument("--quiet", action="store_true", help="no per-claim progress lines")
    p_prove.set_defaults(func=cmd_prove)

    p_recheck = sub.add_parser("recheck", help="re-solve the .smt2 queries of proof logs with a second solver (cvc5)")
    p_recheck.add_argument("logs", nargs="+", help="proof logs (.json) or directories of them (e.g. proofs)")
    p_recheck.add_argument("--solver", choices=("cvc5", "z3"), default="cvc5", help="the solver that answers again (default cvc5)")
    p_recheck.add_argument("--timeout", type=float, default=120.0, help="seconds per query (default 120)")
    p_recheck.add_argument("--json", action="store_true", help="print every log's outcome and answers as JSON")
    p_recheck.set_defaults(func=cmd_recheck)

    p_new = sub.add_parser("new", help="write a commented starting module for your own construction")
    p_new.add_argument("name", help="the construction's name: lowercase letters, digits and dashes (e.g. my-majority)")
    p_new.add_argument("--out", default="", help="the file to write (default: NAME with underscores, .py)")
    p_new.set_defaults(func=cmd_new)

    from netproof.verifier.floats import (  # their own modules: torch and matplotlib load only when run
        plots,
        precision,
    )

    precision.add_precision_parser(sub)
    plots.add_plot_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _USER.clear()
    _USER_SOURCE.clear()
    _LOADED.clear()
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"netproof: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("netproof: interrupted; no record was half-written", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `netproof list | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK

