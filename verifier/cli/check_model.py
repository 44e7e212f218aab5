"""``netproof check-model``: every word up to ``--max-n`` decided rigorously for a trained recognizer
(a torch model file or a network file) against a language, with a table per length, the shortest
wrong word and where the model's float32 run differs (:mod:`netproof.verifier.models` does the
work). Exit 0: every word correct; 1: some word wrong; 3: none wrong, some undecided; 2: usage.
``--jobs N`` shards the words over the campaign's local pool, ``--executor ray`` over a Ray cluster.

May import the campaign (the usage error, parameters), the claims vocabulary (languages), the
models engine and the importer (torch loads when the command runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN
from netproof.verifier.campaign.sources import Session, parse_assignments
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY, Language

from .checks import MAX_INTERVAL_DIGITS, MIN_INTERVAL_DIGITS, interval_digits, positive_seconds
from .model_sources import add_model_options, faith_line, import_structural, is_structural, tokens
from .usage import UsageError

__all__ = ["LANGUAGE_TIMEOUT", "add_parser", "cmd_check_model", "resolve_language"]

LANGUAGES = ("parity", "first", "dyck", "FILE.py:NAME")
LANGUAGE_TIMEOUT = 10.0
"""The default of ``--language-timeout``: the seconds a user's language may take on one word."""


def add_parser(sub: Any) -> None:
    """Register ``netproof check-model`` on the CLI's subparsers."""
    p = sub.add_parser(
        "check-model", help="decide every word up to --max-n for a trained model, rigorously"
    )
    p.add_argument(
        "model", help="a torch model file (see `netproof import`) or a JSON network file"
    )
    p.add_argument(
        "--language",
        default=None,
        help="parity, first, dyck (-p k=K -p depth=D) or FILE.py:NAME "
        "(a Language, or a function word -> bool over the model's alphabet)",
    )
    p.add_argument(
        "--reference",
        default=None,
        metavar="FILE.py:NAME",
        help="check the output at every position: a function word (a list of symbols) -> the "
        "expected output per position (None: don't care); default for a dump that records its "
        "program's outputs (examples/tracr_dump.py)",
    )
    p.add_argument(
        "--output",
        choices=("categorical", "numeric", "next-set", "accept"),
        default=None,
        help="categorical: the argmax of the logits at each position (with --reference); "
        "numeric: one value per position, within --tolerance; "
        "next-set: the set of symbols whose score is > --threshold at each position; "
        "accept: one logit, against --language (the default)",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=None,
        metavar="T",
        help="with --output numeric: the largest distance to the expected value (default 1e-6)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="T",
        help="with --output next-set: a symbol is allowed where its score is > T (default: the "
        "dump's, else 0)",
    )
    p.add_argument(
        "--values",
        default=None,
        metavar="V0,V1,...",
        help="with --reference and a model file whose forward returns [batch, length, vocabulary]: "
        "the value (or next symbol) of each output column, in order (default 0,1,...)",
    )
    p.add_argument(
        "--wrong",
        default=None,
        metavar="FILE",
        help="with --output categorical, numeric or next-set: every wrong and undecided position as JSON "
        "lines, or CSV for a FILE ending in .csv (input, position, expected, got, margin, sampled)",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="with --reference: also check N random words per length beyond --max-n, up to "
        "--sample-max-n (an estimate of the error rate with its 95%% interval, labelled sampled)",
    )
    p.add_argument(
        "--sample-max-n",
        type=int,
        default=None,
        metavar="M",
        help="with --sample: the longest length sampled",
    )
    p.add_argument("--seed", type=int, default=0, help="with --sample: the random seed (default 0)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--max-n", type=int, required=True, help="check every word of length <= this")
    p.add_argument("--min-n", type=int, default=0)
    p.add_argument("--config", default=None, help="the JSON config of a bare state dict")
    add_model_options(p)
    p.add_argument("--batch", type=int, default=4096, help="words per float64 batch (default 4096)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes (the campaign's local pool): the words of each "
        "length are split into shards by shortlex index (default 1: this process)",
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the shards run: local (this machine, --jobs processes; default) or ray (a Ray cluster, one "
        "CPU per shard, as many shards per length as the cluster has CPUs or --jobs, whichever is more; needs "
        "the extra netproof[ray]); the report is the same",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="with --executor ray: the cluster's address (e.g. 127.0.0.1:6379, from `ray start --head`); "
        "default: a Ray instance on this machine for the run",
    )
    p.add_argument(
        "--digits",
        type=interval_digits,
        default=50,
        help=f"digits of the slow interval fallback ({MIN_INTERVAL_DIGITS} to "
        f"{MAX_INTERVAL_DIGITS}; default 50)",
    )
    p.add_argument(
        "--language-timeout",
        type=positive_seconds,
        default=LANGUAGE_TIMEOUT,
        metavar="SECONDS",
        help="with --language FILE.py:NAME: the most seconds the function may take on one word "
        f"(default {LANGUAGE_TIMEOUT:g}); past it the run stops, exit 2, naming the word",
    )
    p.add_argument(
        "--exact",
        action="store_true",
        help="send the words the interval run leaves open on to the sympy "
        "interpreter (it decides a value that simplifies to exactly 0)",
    )
    p.add_argument(
        "--plot",
        default="",
        metavar="FILE.png",
        help="write the margin histogram as a picture (the plot extra)",
    )
    p.add_argument(
        "--search",
        choices=("enumerate", "bnb", "prefix"),
        default="enumerate",
        help="enumerate every word (default); bnb: branch and bound over the word trie (a "
        "subtree whose membership is constant, from the language's automaton, and whose logit "
        "bound over every completion has that sign is settled without enumerating it; same "
        "verdicts, the report adds a search section: words settled, words enumerated); prefix: "
        "every word, each prefix's states computed once (causal models read at the last token)",
    )
    p.add_argument(
        "--leaf",
        type=int,
        default=None,
        metavar="N",
        help="with --search bnb: enumerate subtrees of at most N words instead of branching "
        "(default 1024)",
    )
    p.add_argument(
        "--relax",
        action="store_true",
        help="with --search bnb: intersect each subtree's bound with a linear relaxation of the "
        "layers after the last attention layer (tighter where the readout depends on the free "
        "positions through layer norms; slower per bound)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_check_model)


def resolve_language(
    spec: str,
    params: dict[str, str],
    alphabet: Sequence[str],
    *,
    timeout: float = LANGUAGE_TIMEOUT,
) -> Language:
    """The language named ``spec`` (see :data:`LANGUAGES`), or a :class:`UsageError`. A user's
    language (``FILE.py:NAME``) is checked on every word it answers: an answer that is not a
    bool, an exception or more than ``timeout`` seconds on one word is a :class:`UsageError`
    naming the file, the word and (for an exception) the line."""

    def number(key: str, default: int) -> int:
        try:
            return int(params.pop(key, default))
        except ValueError:
            raise UsageError(f"-p {key}={params.get(key)!r} must be an integer") from None

    low = spec.lower()
    if low in ("parity", "first"):
        lang = PARITY if low == "parity" else FIRST
    elif low == "dyck":
        try:
            lang = DYCK(number("k", 1), number("depth", 2))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    elif ":" in spec and spec.split(":", 1)[0].endswith(".py"):
        path, name = spec.rsplit(":", 1)
        if not Path(path).is_file():
            raise UsageError(f"--language {spec!r}: no file {path!r}")
        mod_spec = importlib.util.spec_from_file_location(
            f"netproof_user_language_{Path(path).stem}", path
        )
        assert (
            mod_spec is not None and mod_spec.loader is not None
        )  # a .py file that exists has a spec
        module = importlib.util.module_from_spec(mod_spec)
        try:
            mod_spec.loader.exec_module(module)
        except Exception as exc:
            raise UsageError(
                f"--language {spec!r}: loading {path} failed: {type(exc).__name__}: {exc}"
            ) from None
        obj = getattr(module, name, None)
        if isinstance(obj, Language):
            lang = replace(obj, contains=_checked(obj.contains, spec, path, timeout))
        elif callable(obj):
            lang = Language(
                name=name,
                alphabet=tuple(alphabet),
                contains=_checked(obj, spec, path, timeout),
                description=f"{spec} (a user predicate)",
            )
        else:
            raise UsageError(
                f"--language {spec!r}: {path} has no Language or function named {name!r}"
            )
    else:
        raise UsageError(f"--language {spec!r} is not one of {', '.join(LANGUAGES)}")
    if params:
        raise UsageError(
            f"-p {', '.join(sorted(params))}: not a parameter of {lang.name} (dyck takes k and depth)"
        )
    return lang


class SlowProgress:
    """The line on stderr, at most every :attr:`every` seconds, while words go through the slow
    rigorous fallback (the interval interpreter, one word at a time, tens of milliseconds a
    word): how many words of the length so far, and how fast. A length whose fallback takes
    less than :attr:`every` seconds prints nothing."""

    every = 2.0

    def __init__(
        self, digits: int, *, out: Any = None, clock: Callable[[], float] | None = None
    ) -> None:
        import time

        self.digits = digits
        self.out = out
        self.clock = clock or time.monotonic
        self.started = 0.0
        self.shown = 0.0
        self.length = -1

    def __call__(self, length: int, sent: int) -> None:
        now = self.clock()
        if length != self.length:
            self.length, self.started, self.shown = length, now, now
            return
        if now - self.shown < self.every:
            return
        self.shown = now
        rate = sent / (now - self.started) if now > self.started else 0.0
        print(
            f"netproof: length {length}: {sent:,} words sent to the rigorous fallback so far "
            f"({rate:,.1f} words/s at {self.digits} digits; the float64 batches leave them open)",
            file=self.out if self.out is not None else sys.stderr,
            flush=True,
        )


class _LanguageTimeout(Exception):
    """Raised by the alarm inside a user's language function that ran past its time limit."""


def _checked(
    contains: Callable[[tuple[str, ...]], object], spec: str, path: str, timeout: float
) -> Callable[[tuple[str, ...]], bool]:
    """``contains`` (a user's membership function) made strict: its answer must be a bool
    (``'yes'`` is not taken by truthiness), an exception it raises becomes one line naming the
    file, line and word, and (in a main thread, where a timer signal can interrupt it) it has
    ``timeout`` seconds per word."""
    import signal
    import threading
    import traceback

    where = os.path.abspath(path)
    can_stop = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )

    def alarm(signum: int, frame: Any) -> None:
        raise _LanguageTimeout

    def checked(word: tuple[str, ...]) -> bool:
        shown = repr("".join(word)) if all(len(s) == 1 for s in word) else repr(" ".join(word))
        shown = shown if word else "ε"
        previous = signal.signal(signal.SIGALRM, alarm) if can_stop else None
        try:
            if can_stop:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            answer = contains(word)
        except _LanguageTimeout:
            raise UsageError(
                f"--language {spec}: no answer on the word {shown} within {timeout:g} s "
                "(--language-timeout SECONDS gives it longer); a language function must return "
                "True or False"
            ) from None
        except Exception as exc:
            frames = [
                f
                for f in traceback.extract_tb(exc.__traceback__)
                if os.path.abspath(f.filename) == where
            ]
            line = f"{path}:{frames[-1].lineno}: " if frames else f"{path}: "
            code = f" in `{frames[-1].line.strip()}`" if frames and frames[-1].line else ""
            raise UsageError(
                f"{line}--language {spec} raised {type(exc).__name__}: {exc}{code} on the word "
                f"{shown}; fix it and run again"
            ) from None
        finally:
            if can_stop:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
        if not isinstance(answer, bool) and type(answer).__name__ not in ("bool_", "bool"):
            raise UsageError(
                f"--language {spec} answered {answer!r} ({type(answer).__name__}) on the word {shown}; "
                "a language answers True or False (truthiness is not taken: 'no' would count as a member)"
            )
        return bool(answer)

    return checked


def _float32(path: str, config: str | None) -> Callable[[list[tuple[str, ...]]], list[float]]:
    """The model's own float32 run: logits of a list of words of one length."""
    import torch

    from netproof.symbolic.torch_import import load_model
    from netproof.symbolic.torch_recognizer import Recognizer, RNNRecognizer

    cfg, sd = load_model(path, config=config)
    model = RNNRecognizer(**cfg) if cfg.get("model") == "rnn" else Recognizer(**cfg)
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    model.float().eval()

    def run(words: list[tuple[str, ...]]) -> list[float]:
        with torch.no_grad():
            return [float(x) for x in model(model.encode(words))]

    return run


def cmd_check_model(args: argparse.Namespace, session: Session) -> int:
    from netproof.verifier.models import EnclosureError, check_model

    if args.reference is not None or args.output in ("categorical", "numeric", "next-set"):
        from .check_sequence import cmd_check_sequence

        return cmd_check_sequence(args)
    if args.language is None:
        raise UsageError("check-model needs --language (or --reference with --output categorical)")
    if args.max_n < 0 or args.min_n < 0 or args.min_n > args.max_n:
        raise UsageError(
            f"--min-n {args.min_n} and --max-n {args.max_n} must satisfy 0 <= min-n <= max-n"
        )
    if args.batch < 1 or args.threads < 1 or args.jobs < 1:
        raise UsageError("--batch, --threads and --jobs must be >= 1")
    if args.leaf is not None and (args.search != "bnb" or args.leaf < 1):
        raise UsageError(
            f"--leaf {args.leaf} needs --search bnb and a value >= 1 (the largest subtree enumerated)"
        )
    if args.relax and args.search != "bnb":
        raise UsageError("--relax tightens branch and bound's bounds; add --search bnb")
    if args.search == "prefix" and (args.jobs > 1 or args.executor == "ray"):
        raise UsageError(
            "--search prefix runs in one process; drop --jobs/--executor ray (or use --search enumerate)"
        )
    if args.address is not None and args.executor != "ray":
        raise UsageError(
            f"--address {args.address} is a Ray cluster's address; give it with --executor ray"
        )
    if args.address is not None:  # before any work: nothing listening there is one line, now
        from netproof.verifier.campaign.executors import probe_address

        probe_address(args.address)
    try:
        import torch
    except ImportError:
        raise UsageError(
            "check-model needs torch; install the extra: pip install -e '.[torch]'"
        ) from None
    torch.set_num_threads(args.threads)
    if is_structural(args.model, args):
        lang, net, float32 = _load_structural(args)
    else:
        net, float32 = _load(args.model, args.config, args.max_n)
        lang = resolve_language(
            args.language,
            parse_assignments(args.param),
            net.alphabet,
            timeout=args.language_timeout,
        )
    try:
        if args.search == "bnb" and (args.jobs > 1 or args.executor == "ray"):
            report = _bnb_sharded(args, lang.alphabet)
        elif args.executor == "ray":
            report = _on_ray(args, lang.alphabet)
        elif args.jobs > 1:
            report = _sharded(args, net, lang.alphabet)
        elif args.search == "bnb":
            from netproof.verifier.models.bnb import LEAF, check_model_bnb

            report = check_model_bnb(
                net,
                lang,
                max_n=args.max_n,
                min_n=args.min_n,
                float32=float32,
                batch=args.batch,
                digits=args.digits,
                exact=args.exact,
                leaf=LEAF if args.leaf is None else args.leaf,
                relax=args.relax,
            )
        else:
            enclosure = None
            if args.search == "prefix":
                from netproof.verifier.models import compile_enclosure
                from netproof.verifier.models.prefix import CausalPrefixEnclosure

                base = compile_enclosure(net)
                if not hasattr(base, "positions"):
                    raise UsageError(
                        "--search prefix shares the prefixes of a causal transformer; an RNN "
                        "recognizer already runs one step per symbol (use --search enumerate)"
                    )
                enclosure = CausalPrefixEnclosure(base, lang.alphabet, args.max_n)  # type: ignore[arg-type]
            report = check_model(
                net,
                lang,
                max_n=args.max_n,
                min_n=args.min_n,
                float32=float32,
                batch=args.batch,
                digits=args.digits,
                exact=args.exact,
                enclosure=enclosure,  # type: ignore[arg-type]
                on_slow=SlowProgress(args.digits),
            )
    except (EnclosureError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.plot:
        from netproof.symbolic.errors import MissingExtraError
        from netproof.verifier.models.plot import plot_margins

        try:
            plot_margins(report, args.plot)
        except MissingExtraError as exc:
            raise UsageError(str(exc)) from None
    if args.json:
        print(report.to_json())
    else:
        print(render(report))
    return {"correct": EXIT_OK, "wrong": EXIT_REFUTED, "undecided": EXIT_UNKNOWN}[report.status]


def _load_structural(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The language, the network and the model's own run of a model brought from elsewhere
    (:mod:`.model_sources`: the structural importer and the faithfulness gate)."""
    if args.jobs > 1 or args.executor == "ray":
        raise UsageError(
            "a model imported by its structure is checked in one process; drop --jobs/--executor"
        )
    prefix, suffix = tokens(args.prefix), tokens(args.suffix)
    guess = [t for t in tokens(args.vocab) if t not in (*prefix, *suffix)]
    lang = resolve_language(
        args.language, parse_assignments(args.param), guess, timeout=args.language_timeout
    )
    imported = import_structural(args.model, args, lang.alphabet or None, args.max_n)
    if not lang.alphabet:  # a predicate language: the alphabet the model's file gives
        lang = resolve_language(
            args.language,
            parse_assignments(args.param),
            imported.net.alphabet,
            timeout=args.language_timeout,
        )
    emb = imported.net.embedding
    if not (emb.prefix or emb.suffix) and args.min_n == 0:
        args.min_n = 1  # the empty word would give the model no token at all
    faith_line(imported, args.json)
    # the float32≠ column: the model's own run (a dump's source model is not here to run)
    return lang, imported.net, (imported.run if imported.model is not None else None)


def _load(
    model: str, config: str | None, max_n: int, name: str | None = None
) -> tuple[Any, Callable[[list[tuple[str, ...]]], list[float]] | None]:
    """The network of ``model`` (a model file or a network file) and, for a Recognizer, its own
    float32 run; a :class:`UsageError` for a file it cannot read or a ``max_n`` past its table."""
    from netproof.symbolic.errors import MissingExtraError, SymbolicError
    from netproof.symbolic.netfile import load_file
    from netproof.symbolic.torch_import import ImportModelError, import_model

    float32 = None
    net: Any  # a Network, or an RNN recognizer from import_model
    try:
        if model.endswith(".json"):
            net, _extra = load_file(model)
        else:
            net = import_model(model, config=config, name=name)
            params = dict(net.params)
            if params.get("model") == '"rnn"':  # an RNNRecognizer: its own float32 run, any length
                float32 = _float32(model, config)
            elif (
                "max_len" in params
            ):  # a Recognizer (not a netproof export): its own float32 run, its table's length
                float32 = _float32(model, config)
                max_len = int(params["max_len"])
                if max_n + 1 > max_len:
                    raise UsageError(
                        f"--max-n {max_n} needs {max_n + 1} positions but the model's table has max_len={max_len}"
                    )
    except (ImportModelError, MissingExtraError) as exc:
        raise UsageError(str(exc)) from None
    except SymbolicError as exc:
        raise UsageError(f"{model}: {exc}") from None
    return net, float32


def shards(
    alphabet_size: int, min_n: int, max_n: int, jobs: int, batch: int
) -> list[tuple[int, int, int]]:
    """The work of a sharded run, in shortlex order: ``(m, start, stop)`` ranges of word indices,
    a length split into ``jobs`` pieces once it has at least ``batch`` words per piece."""
    out = []
    for m in range(min_n, max_n + 1):
        total = alphabet_size**m
        pieces = max(1, min(jobs, total // batch))
        size = -(-total // pieces)
        out += [(m, s, min(total, s + size)) for s in range(0, total, size)]
    return out


_WORKER: dict[str, Any] = {}


def shard_work(
    model: str,
    config: str | None,
    language: str,
    params: dict[str, str],
    shard: tuple[int, int, int],
    batch: int,
    digits: int,
    exact: bool,
    threads: int,
    shipped: tuple[bytes, str | None] | None = None,
    language_timeout: float = LANGUAGE_TIMEOUT,
) -> Any:
    """One shard of a sharded ``check-model`` run, in a worker process (the model is loaded once
    per process). ``shipped`` (a Ray run): the model file's bytes and the config file's text,
    written to this worker's temporary directory, so that the nodes need not share a file system."""
    import torch

    from netproof.verifier.models import check_model, compile_enclosure

    torch.set_num_threads(threads)
    name = None
    if shipped is not None:  # the network keeps the name of the model file it was sent from
        name = None if model.endswith(".json") else Path(model).stem
        model, config = (
            _materialize(model, shipped[0]),
            None
            if shipped[1] is None
            else _materialize(config or "config.json", shipped[1].encode()),
        )
    if _WORKER.get("key") != (model, config, name):
        net, float32 = _load(model, config, shard[0], name)
        _WORKER.update(
            key=(model, config, name), net=net, float32=float32, enclosure=compile_enclosure(net)
        )
    net = _WORKER["net"]
    lang = resolve_language(language, dict(params), net.alphabet, timeout=language_timeout)
    return check_model(
        net,
        lang,
        max_n=shard[0],
        min_n=shard[0],
        float32=_WORKER["float32"],
        batch=batch,
        digits=digits,
        exact=exact,
        enclosure=_WORKER["enclosure"],
        shard=shard,
    )


def bnb_shard_work(
    model: str,
    config: str | None,
    language: str,
    params: dict[str, str],
    shard: tuple[int, tuple[str, ...]],
    options: dict[str, Any],
    shipped: tuple[bytes, str | None] | None = None,
) -> Any:
    """One subtree of a sharded ``check-model --search bnb`` run (``shard``: the length and the
    root prefix), in a worker process; the model is loaded once per process, as in
    :func:`shard_work`."""
    import torch

    from netproof.verifier.models import compile_enclosure
    from netproof.verifier.models.bnb import check_model_bnb

    torch.set_num_threads(options["threads"])
    name = None
    if shipped is not None:
        name = None if model.endswith(".json") else Path(model).stem
        model, config = (
            _materialize(model, shipped[0]),
            None
            if shipped[1] is None
            else _materialize(config or "config.json", shipped[1].encode()),
        )
    if _WORKER.get("key") != (model, config, name):
        net, float32 = _load(model, config, shard[0], name)
        _WORKER.update(
            key=(model, config, name), net=net, float32=float32, enclosure=compile_enclosure(net)
        )
    net = _WORKER["net"]
    lang = resolve_language(language, dict(params), net.alphabet)
    return check_model_bnb(
        net,
        lang,
        max_n=shard[0],
        min_n=shard[0],
        float32=_WORKER["float32"],
        batch=options["batch"],
        digits=options["digits"],
        exact=options["exact"],
        enclosure=_WORKER["enclosure"],
        leaf=options["leaf"],
        root=shard[1],
        relax=options.get("relax", False),
    )


def _bnb_sharded(args: argparse.Namespace, alphabet: Sequence[str]) -> Any:
    """Branch and bound with the subtrees as shards, on the local pool or a Ray cluster; the
    merged report's verdicts are one process's."""
    from netproof.verifier.models.bnb import LEAF, bnb_shards, merge_bnb

    params = parse_assignments(args.param)
    options = {
        "threads": args.threads,
        "batch": args.batch,
        "digits": args.digits,
        "exact": args.exact,
        "leaf": LEAF if args.leaf is None else args.leaf,
        "relax": args.relax,
    }
    parts: dict[int, Any] = {}
    work: list[tuple[Any, tuple[Any, ...]]]
    if args.executor == "ray":
        from netproof.verifier.campaign.executors import ray_cluster, run_ray

        shipped = (
            Path(args.model).read_bytes(),
            None if args.config is None else Path(args.config).read_text(),
        )
        with ray_cluster(args.address) as cpus:
            work_shards = bnb_shards(alphabet, args.min_n, args.max_n, max(cpus, args.jobs))
            work = [
                (
                    bnb_shard_work,
                    (args.model, args.config, args.language, params, sh, options, shipped),
                )
                for sh in work_shards
            ]
            run_ray(work, range(len(work)), lambda i, rep: parts.__setitem__(i, rep))
    else:
        from netproof.verifier.campaign.executors import run_pool

        work_shards = bnb_shards(alphabet, args.min_n, args.max_n, args.jobs)
        work = [
            (bnb_shard_work, (args.model, args.config, args.language, params, sh, options))
            for sh in work_shards
        ]
        run_pool(work, range(len(work)), args.jobs, lambda i, rep: parts.__setitem__(i, rep))
    return merge_bnb([parts[i] for i in range(len(work))], max_n=args.max_n)


def _materialize(name: str, data: bytes) -> str:
    """``data`` as a file in this process's temporary directory, named by its sha256 (written once)."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(data).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"netproof-check-model-{digest}{Path(name).suffix}"
    if not path.is_file() or path.read_bytes() != data:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


def _on_ray(args: argparse.Namespace, alphabet: Sequence[str]) -> Any:
    """The shards on a Ray cluster (:func:`~netproof.verifier.campaign.executors.run_ray`), one CPU
    each; the model file travels with the work, a ``FILE.py:NAME`` language must be readable at
    the same path on every node."""
    from netproof.verifier.campaign.executors import ray_cluster, run_ray
    from netproof.verifier.models import merge_reports

    shipped = (
        Path(args.model).read_bytes(),
        None if args.config is None else Path(args.config).read_text(),
    )
    params = parse_assignments(args.param)
    parts: dict[int, Any] = {}
    with ray_cluster(args.address) as cpus:
        work_shards = shards(
            len(alphabet), args.min_n, args.max_n, max(cpus, args.jobs), args.batch
        )
        work = [_shard_task(args, params, sh, shipped) for sh in work_shards]
        run_ray(work, range(len(work)), lambda i, rep: parts.__setitem__(i, rep))
    return merge_reports([parts[i] for i in range(len(work))], max_n=args.max_n)


def _shard_task(args: argparse.Namespace, params: Any, sh: Any, shipped: Any) -> tuple[Any, ...]:
    """One shard's task for an executor (the local pool ships nothing: ``shipped`` is None)."""
    return (
        shard_work,
        (
            args.model,
            args.config,
            args.language,
            params,
            sh,
            args.batch,
            args.digits,
            args.exact,
            args.threads,
            shipped,
            args.language_timeout,
        ),
    )


def _sharded(args: argparse.Namespace, net: Any, alphabet: Sequence[str]) -> Any:
    from netproof.verifier.campaign.executors import run_pool
    from netproof.verifier.models import merge_reports

    work_shards = shards(len(alphabet), args.min_n, args.max_n, args.jobs, args.batch)
    params = parse_assignments(args.param)
    work = [_shard_task(args, params, sh, None) for sh in work_shards]
    parts: dict[int, Any] = {}
    run_pool(work, range(len(work)), args.jobs, lambda i, rep: parts.__setitem__(i, rep))
    return merge_reports([parts[i] for i in range(len(work))], max_n=args.max_n)


def render(report: Any) -> str:
    """The report as a table per length, then the shortest wrong word, undecided words and float32 differences."""
    lines = [
        f"model {report.network} ({report.fingerprint[:12]}) against {report.language}, every word of length <= {report.max_n}",
        "",
    ]
    head = f"{'length':>6} {'words':>9} {'correct':>9} {'wrong':>9} {'undecided':>9} {'slow':>6} {'float32≠':>9}"
    lines += [head, "-" * len(head)]
    for label, r in [*((str(r.length), r) for r in report.rows), ("all", report.totals)]:
        lines.append(
            f"{label:>6} {r.words:>9} {r.correct:>9} {r.wrong:>9} {r.undecided:>9} {r.slow:>6} {r.float32_differs:>9}"
        )
    lines.append("")
    w = report.shortest_wrong
    if w is not None:
        said = "accepts" if w.accepted else "rejects"
        lines.append(
            f"shortest wrong word: {' '.join(w.word) or 'ε'} (length {len(w.word)}): the model {said} "
            f"(logit in [{w.low:.6g}, {w.high:.6g}], {w.method}), the language {'contains' if w.expected else 'does not contain'} it"
        )
    if report.trace:
        lines.append("  its rigorous trace at the readout token (midpoints):")
        for entry in report.trace:
            if "state" in entry:
                values = " ".join(
                    f"{d}={x:.4g}" for d, x in entry["values"].items() if x is not None
                )
                lines.append(f"    {entry['state']}: {values}")
            else:
                lines.append(
                    f"    attention {entry['attention']}: "
                    + " ".join(f"{x:.3f}" for x in entry["weights"])
                )
    for u in report.undecided:
        lines.append(
            f"undecided: {' '.join(u.word) or 'ε'}: logit in [{u.low:.6g}, {u.high:.6g}] {u.note}".rstrip()
        )
    for word, x, acc in report.float32_differences:
        lines.append(
            f"float32 differs: {' '.join(word) or 'ε'}: float32 logit {x:.6g}, rigorous verdict {'accept' if acc else 'reject'}"
        )
    if report.margins:
        lines.append("margins (distance of the logit's enclosure from 0, decided words):")
        width = max(report.margins.values())
        for e, count in sorted(report.margins.items()):
            lines.append(
                f"  [1e{e}, 1e{e + 1}) {count:>9} {'#' * max(1, round(40 * count / width))}"
            )
    search = getattr(report, "search", None)
    if search is not None:
        lines.append(
            f"branch and bound: {search['settled']} words settled by bounds, {search['enumerated']} "
            f"enumerated, {search['bounds']} subtree bounds (membership from the language's {search['membership']}); "
            "margins and float32 differences cover the enumerated words"
        )
    lines.append(f"status: {report.status}")
    return "\n".join(lines)
