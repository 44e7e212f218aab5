"""``netproof check-model MODEL --output categorical|numeric|next-set``: a model's output at every position
checked against a reference on every word up to ``--max-n`` (:mod:`netproof.verifier.models.
sequence` does the work): ``--reference FILE.py:NAME`` (a function from a word, a list of
symbols, to the expected output of each position, ``None``: don't care), or the expected outputs
a dump recorded (``examples/tracr_dump.py``: tracr's own RASP evaluator). ``--wrong FILE``
writes every wrong and undecided position as JSON lines, or CSV for a ``.csv`` name (input,
position, expected, got, margin, sampled; a set of next symbols as a list). ``--output
next-set`` reads one score per symbol at each position, a symbol allowed where its score is >
``--threshold`` (default: the dump's, else 0). The table gives each length's wrong words and error
rate; ``--sample N --sample-max-n M`` adds N random words per length beyond ``--max-n`` up to M,
an estimate with its 95% interval, labelled as sampled. Exit 0: every position correct; 1: some
wrong (sampled ones too); 3: none wrong, some undecided; 2: usage.

May import the models engine (torch loads when the command runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN
from netproof.verifier.models.sequence import wilson

from .usage import UsageError

__all__ = ["cmd_check_sequence", "load_reference", "shards", "write_wrong"]


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


def _shown(v: Any) -> str:
    """An output as printed: a set of next symbols (a sorted tuple) as ``{a, b}``."""
    return "{" + ", ".join(map(str, v)) + "}" if isinstance(v, tuple) else repr(v)


def _render(report: Any) -> str:
    t = report.totals
    lines = [
        f"model {report.network} against {report.reference}, "
        f"{ {'numeric': 'numerical', 'next-set': 'next-symbol-set'}.get(report.output, report.output) } "
        f"output at every position, every word of length <= {report.max_n}",
        f"{'length':>6} {'words':>7} {'positions':>9} {'correct':>8} {'wrong':>6} "
        f"{'undecided':>9} {'slow':>5} {'float32 wrong':>13} {'wrong words':>11}",
    ]
    exhaustive = [r for r in report.rows if not r.sampled]
    sampled = [r for r in report.rows if r.sampled]
    for r in [*exhaustive, t]:
        label = "all" if r is t else str(r.length)
        f32 = f"{r.float32_wrong} ({r.float32_wrong_words})" if report.float32 else "-"
        lines.append(
            f"{label:>6} {r.words:>7} {r.positions:>9} {r.correct:>8} {r.wrong:>6} "
            f"{r.undecided:>9} {r.slow:>5} {f32:>13} {r.wrong_words:>4} ({100 * r.error_rate:.1f}%)"
        )
    if sampled:
        lines.append(
            "sampled (an estimate, not a verdict: words drawn uniformly at random per length; "
            "wrong-word rate with its 95% Wilson interval):"
        )
        for r in sampled:
            lo, hi = wilson(r.wrong_words, r.words)
            lines.append(
                f"{r.length:>6} {r.words:>7} {r.positions:>9} {r.correct:>8} {r.wrong:>6} "
                f"{r.undecided:>9} {r.wrong_words:>4} ({100 * r.error_rate:.1f}%, 95% "
                f"{100 * lo:.1f}%..{100 * hi:.1f}%)"
            )
    sw = report.shortest_wrong
    if sw is not None:
        lines.append(
            f"shortest wrong: {' '.join(sw.word)!r} at position {sw.position}: expected "
            f"{_shown(sw.expected)}, got {_shown(sw.got)} (margin >= {sw.margin:.3g})"
        )
    sampled_wrong = report.sampled_wrong
    if sampled_wrong is not None:
        lines.append(
            f"wrong (found by sampling, not the shortest): {' '.join(sampled_wrong.word)!r} at "
            f"position {sampled_wrong.position}: expected {_shown(sampled_wrong.expected)}, got "
            f"{_shown(sampled_wrong.got)}"
        )
    undecided = [v for v in report.listed if v.got is None]
    for v in undecided[:10]:
        lines.append(
            f"undecided: {' '.join(v.word)!r} at position {v.position} (expected {_shown(v.expected)}; "
            f"the enclosure straddles the boundary: {v.margin:.3g})"
        )
    if report.float32:
        lines.append(
            f"float32 wrong: positions (words) where a plain float32 run "
            f"({report.float32}) is wrong; its verdict differs from the rigorous one at "
            f"{t.float32_differs} decided positions"
        )
    if report.margins:
        lines.append(
            "margins (distance of the deciding enclosure from the boundary, decided positions):"
        )
        width = max(report.margins.values())
        for e, count in sorted(report.margins.items()):
            wrong = report.wrong_margins.get(e, 0)
            lines.append(
                f"  [1e{e}, 1e{e + 1}) {count:>9} {'#' * max(1, round(40 * count / width))}"
                + (f" ({wrong} wrong)" if wrong else "")
            )
    lines.append(f"status: {report.status}")
    return "\n".join(lines)


def write_wrong(path: str, listed: Any) -> None:
    """Every wrong and undecided position to ``path``: CSV where it ends in ``.csv`` (a header
    row, then input, position, expected, got, margin, sampled), else JSON lines with those
    keys. Written atomically (:func:`~netproof.verifier.campaign.store.write_atomic`): never
    half a file; a folder that does not exist is an OSError, not made."""
    import csv
    import io
    import os

    from netproof.verifier.campaign.store import write_atomic
    from netproof.verifier.models.sequence import WRONG_FIELDS

    buf = io.StringIO()
    if path.lower().endswith(".csv"):
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(WRONG_FIELDS)
        for v in listed:
            row = v.to_dict()
            writer.writerow(
                [
                    ""
                    if row[k] is None
                    else json.dumps(row[k])
                    if isinstance(row[k], list)
                    else row[k]
                    for k in WRONG_FIELDS
                ]
            )
    else:
        for v in listed:
            buf.write(json.dumps(v.to_dict(), default=str) + "\n")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "No such file or directory", folder)
    write_atomic(path, buf.getvalue())


def _is_dump(path: str) -> bool:
    """Whether ``path`` is a TransformerLens/tracr-layout dump (else a model file)."""
    import torch

    from netproof.symbolic.importers.transformerlens import DUMP_FORMAT

    try:
        peek = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:
        return False
    return isinstance(peek, dict) and peek.get("format") == DUMP_FORMAT


def _finish(args: argparse.Namespace, report: Any, summary: str | None) -> int:
    if summary is not None:
        import sys

        print(f"import: {summary}", file=sys.stderr if args.json else None)
    if args.wrong:
        try:
            write_wrong(args.wrong, report.listed)
        except OSError as exc:
            raise UsageError(f"--wrong {args.wrong}: cannot write it ({exc.strerror})") from None
    print(report.to_json() if args.json else _render(report))
    codes: dict[str, int] = {"correct": EXIT_OK, "wrong": EXIT_REFUTED}
    return codes.get(report.status, int(EXIT_UNKNOWN))


def _check_columns(args: argparse.Namespace, threshold: float | None) -> int:
    """A model file whose forward returns ``[batch, length, vocabulary]``: one network per
    output column (:func:`~netproof.verifier.models.sequence.import_columns`), categorical
    unless ``--output`` says otherwise; the output values are ``--values`` (default the column
    indices)."""
    from netproof.symbolic.errors import MissingExtraError
    from netproof.symbolic.importers import ImporterError
    from netproof.symbolic.importers.torch_files import load_module_file
    from netproof.verifier.models.faithful import UnfaithfulImportError
    from netproof.verifier.models.sequence import check_sequence, import_columns

    from .model_sources import tokens

    if args.reference is None:
        raise UsageError(
            f"{args.model} is a model file: give --reference FILE.py:NAME (a function word -> "
            "the expected output per position)"
        )
    if args.sample:
        raise UsageError("--sample reads dumps so far; drop it for a model file")
    prefix, suffix = tokens(args.prefix), tokens(args.suffix)
    vocab = tokens(args.vocab)
    alphabet = [t for t in vocab if t not in (*prefix, *suffix)]
    if not alphabet:
        raise UsageError(
            f"{args.model}: give the vocabulary (--vocab T0,T1,... in token-id order, with "
            "--prefix/--suffix for special tokens)"
        )
    try:
        model = load_module_file(args.model, module=args.module, kwargs=args.kwargs)
        columns, gap = import_columns(
            model,
            alphabet=alphabet,
            vocab=vocab,
            prefix=prefix,
            suffix=suffix,
            max_len=args.max_n,
            compare=not args.no_compare,
            name=Path(args.model).stem,
        )
    except (ImporterError, UnfaithfulImportError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None
    output = args.output or "categorical"
    if output == "numeric" and len(columns) != 1:
        raise UsageError(f"--output numeric: {args.model} has {len(columns)} outputs, not one")
    values: list[Any] = list(tokens(getattr(args, "values", None))) or list(range(len(columns)))
    if len(values) != len(columns):
        raise UsageError(
            f"--values {args.values}: {args.model} has {len(columns)} outputs per position; "
            f"give {len(columns)} values"
        )
    if args.executor == "ray":
        raise UsageError(
            "--executor ray ships dumps; a model file per position runs on the local pool "
            "(--jobs N)"
        )
    fn = load_reference(args.reference)
    kw: dict[str, Any] = {
        "reference": lambda w: fn(list(w)),
        "unembed": [],
        "values": values,
        "max_n": args.max_n,
        "reference_name": args.reference,
        "threshold": (threshold or 0.0) if output == "next-set" else None,
        "columns": columns,
        "float32": _float32_run(model, vocab, prefix, suffix),
    }
    options = {
        "min_n": max(1, args.min_n),
        "tolerance": (args.tolerance if args.tolerance is not None else 1e-6)
        if output == "numeric"
        else None,
        "batch": args.batch,
        "digits": args.digits,
    }
    if args.jobs > 1:
        report = _sharded(args, columns[0], kw, options, 0, None)
    else:
        report = check_sequence(columns[0], **options, **kw)
    report.network = Path(args.model).stem
    summary = (
        None
        if gap is None
        else f"every output at every position gated against the model's float64 run "
        f"(largest gap {gap:.2g})"
    )
    return _finish(args, report, summary)


def _float32_of(model: str, max_n: int, path: str | None = None) -> dict[str, Any]:
    """The keyword arguments of a dump's recorded run as the float32 column (its source model's
    own outputs: tracr's float32 run), where it records every word up to ``max_n``."""
    from netproof.verifier.models.sequence import recorded_run

    found = recorded_run(path or model)
    if found is None or found[0].max_n < max_n:
        return {}
    return {"float32": found[0], "float32_name": found[1]}


def _float32_run(model: Any, vocab: Any, prefix: Any, suffix: Any) -> Any:
    """The model's own float32 run: its outputs at the word positions of words of one length."""
    import copy

    import torch

    model32 = copy.deepcopy(model).float().eval()
    index = {t: i for i, t in enumerate(vocab)}

    def run(words: list[tuple[str, ...]]) -> Any:
        ids = torch.tensor([[index[t] for t in (*prefix, *w, *suffix)] for w in words])
        with torch.no_grad():
            y = model32(ids)
        return y[:, len(prefix) : len(prefix) + len(words[0]), :].double()

    return run


def cmd_check_sequence(args: argparse.Namespace) -> int:
    """The per-position check (see the module docstring)."""
    from netproof.symbolic.errors import MissingExtraError
    from netproof.symbolic.importers import ImporterError
    from netproof.verifier.models.faithful import UnfaithfulImportError
    from netproof.verifier.models.sequence import check_sequence, load_sequence_dump

    if args.output == "accept":
        raise UsageError("--output accept checks one logit against --language, not --reference")
    if args.batch < 1 or args.threads < 1 or args.jobs < 1:
        raise UsageError("--batch, --threads and --jobs must be >= 1")
    if args.address is not None and args.executor != "ray":
        raise UsageError(
            f"--address {args.address} is a Ray cluster's address; give it with --executor ray"
        )
    if args.address is not None:  # before any work: nothing listening there is one line, now
        from netproof.verifier.campaign.executors import probe_address

        probe_address(args.address)
    import torch

    torch.set_num_threads(args.threads)  # before any work: a forked worker inherits no pool
    tolerance = args.tolerance if args.tolerance is not None else 1e-6
    if args.tolerance is not None and (args.output != "numeric" or not tolerance >= 0):
        raise UsageError(f"--tolerance {args.tolerance}: give a number >= 0, with --output numeric")
    threshold = getattr(args, "threshold", None)
    if threshold is not None and (args.output != "next-set" or threshold != threshold):
        raise UsageError(f"--threshold {threshold}: give a number, with --output next-set")
    if args.language is not None:
        raise UsageError("give --language (accept/reject) or --reference (per position), not both")
    if not _is_dump(args.model):
        return _check_columns(args, threshold)
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
    elif kw["reference"] is None:
        raise UsageError(
            f"{args.model} records no expected outputs; give --reference FILE.py:NAME (a "
            "function word -> the expected output per position)"
        )
    if args.max_n > kw["max_n"] and args.reference is None:
        raise UsageError(
            f"--max-n {args.max_n}: the dump records its program's outputs up to length "
            f"{kw['max_n']}; give --max-n <= {kw['max_n']} or a --reference"
        )
    kw["max_n"] = args.max_n
    kind = (
        "next-set" if "threshold" in kw else "numeric" if len(kw["values"]) == 1 else "categorical"
    )
    numeric = kind == "numeric"
    if args.output is not None and args.output != kind:
        raise UsageError(
            f"--output {args.output}: {args.model} has a "
            f"{'numerical' if numeric else kind} output; give --output {kind}"
        )
    if threshold is not None:
        kw["threshold"] = threshold
    sample, sample_max_n = args.sample, args.sample_max_n
    if sample < 0 or (sample > 0) != (sample_max_n is not None):
        raise UsageError(
            f"--sample {sample} --sample-max-n {sample_max_n}: give both (a number of words > 0 "
            "per length, and the longest length to sample), or neither"
        )
    if sample_max_n is not None and sample_max_n <= args.max_n:
        raise UsageError(
            f"--sample-max-n {sample_max_n}: sampling covers the lengths beyond --max-n "
            f"{args.max_n}; give a larger one"
        )
    if sample_max_n is not None and args.reference is None:
        raise UsageError(
            "--sample needs a --reference: the dump records its program's outputs only up to "
            f"length {kw['max_n']}"
        )
    kw.update(_float32_of(args.model, args.max_n))
    options = {
        "min_n": max(1, args.min_n),
        "tolerance": tolerance if numeric else None,
        "batch": args.batch,
        "digits": args.digits,
    }
    if args.jobs > 1 or args.executor == "ray":
        report = _sharded(args, imported.net, kw, options, sample, sample_max_n)
    else:
        report = check_sequence(
            imported.net,
            sample=sample,
            sample_max_n=sample_max_n,
            seed=args.seed,
            **options,
            **kw,
        )
    return _finish(args, report, None if imported.faith is None else imported.faith.summary())


def shards(a: int, min_n: int, max_n: int, jobs: int, batch: int) -> list[tuple[int, int, int]]:
    """The work of a sharded run in shortlex order: ``(m, start, stop)`` ranges of the word
    indices of length m, a length split into ``jobs`` pieces once it has ``batch`` words a piece
    (as a recognizer's run splits them)."""
    out = []
    for m in range(min_n, max_n + 1):
        total = a**m
        size = -(-total // max(1, min(jobs, total // batch)))
        out += [(m, s, min(total, s + size)) for s in range(0, total, size)]
    return out


def _materialize(name: str, data: bytes) -> str:
    """A shipped dump as a file in this worker's temporary directory, named by its sha256."""
    import hashlib
    import os
    import tempfile

    path = Path(tempfile.gettempdir()) / (
        f"netproof-check-sequence-{hashlib.sha256(data).hexdigest()[:16]}{Path(name).suffix}"
    )
    if not path.is_file() or path.read_bytes() != data:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


_SHARED: dict[str, Any] = {}
"""The network and keyword arguments of a sharded run, set before the local pool forks (its
workers inherit them)."""


def sequence_shard_work(
    shard: tuple[int, int, int],
    shipped: tuple[bytes, str, str | None, dict[str, Any], dict[str, Any]] | None = None,
) -> Any:
    """One shard of a sharded per-position run, in a worker process: from the forked parent's
    :data:`_SHARED` (the local pool), or, on Ray, from ``shipped`` (the dump's bytes and name,
    the ``--reference`` or None for the recorded outputs, the options and the keyword arguments
    that are plain data), the dump loaded once per process without its gate (the parent gated
    it)."""
    from netproof.verifier.models.sequence import check_sequence, load_sequence_dump

    if shipped is not None:
        data, name, reference, options, plain = shipped
        key = (name, reference, len(data))
        if _SHARED.get("key") != key:
            imported, kw = load_sequence_dump(_materialize(name, data), compare=False)
            if reference is not None:
                fn = load_reference(reference)
                kw["reference"] = lambda w: fn(list(w))
                kw["reference_name"] = reference
            kw.update(plain)
            kw.update(_float32_of(name, kw["max_n"], _materialize(name, data)))
            _SHARED.update(key=key, net=imported.net, kw=kw, options=options)
    return check_sequence(_SHARED["net"], shard=shard, **_SHARED["options"], **_SHARED["kw"])


def _sharded(
    args: argparse.Namespace,
    net: Any,
    kw: dict[str, Any],
    options: dict[str, Any],
    sample: int,
    sample_max_n: int | None,
) -> Any:
    """The words of each length in shards by shortlex index (:func:`shards`) on
    the local pool (``--jobs``) or a Ray cluster (``--executor ray``); the sampled lengths run
    here; the parts merged in shortlex order give one process's report."""
    from netproof.verifier.models.sequence import check_sequence, merge_sequence_reports

    a = len(net.alphabet)
    parts: dict[int, Any] = {}
    work: list[tuple[Any, tuple[Any, ...]]]
    if args.executor == "ray":
        from netproof.verifier.campaign.executors import ray_cluster, run_ray

        plain = {key: kw[key] for key in ("max_n", "tolerance", "threshold") if key in kw}
        shipped = (
            Path(args.model).read_bytes(),
            args.model,
            args.reference,
            options,
            plain,
        )
        with ray_cluster(args.address) as cpus:
            work_shards = shards(a, options["min_n"], kw["max_n"], max(cpus, args.jobs), args.batch)
            work = [(sequence_shard_work, (sh, shipped)) for sh in work_shards]
            run_ray(work, range(len(work)), lambda i, rep: parts.__setitem__(i, rep))
    else:
        from netproof.verifier.campaign.executors import run_pool

        _SHARED.update(key=None, net=net, kw=kw, options=options)
        try:
            work_shards = shards(a, options["min_n"], kw["max_n"], args.jobs, args.batch)
            work = [(sequence_shard_work, (sh,)) for sh in work_shards]
            run_pool(work, range(len(work)), args.jobs, lambda i, rep: parts.__setitem__(i, rep))
        finally:
            _SHARED.clear()
    merged = [parts[i] for i in range(len(work))]
    if sample:
        merged.append(
            check_sequence(
                net,
                sample=sample,
                sample_max_n=sample_max_n,
                seed=args.seed,
                **{**options, "min_n": kw["max_n"] + 1},
                **kw,
            )
        )
    report = merge_sequence_reports(merged)
    report.max_n = kw["max_n"]
    report.network = net.name  # a Ray worker's copy of the dump has a file name of its own
    return report
