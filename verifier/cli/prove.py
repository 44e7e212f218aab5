"""``netproof prove``: check the claims of constructions and print a table, the refutations with
their counterexamples and a summary, or with ``--json`` the records and the summary
(:func:`netproof.verifier.campaign.prove` does the work; this module parses and prints; the
live progress on stderr is :mod:`.live`'s).

Stopping: Ctrl-C (exit 130) and SIGTERM (exit 143) stop the workers, keep every finished
record and print one line; a crash inside netproof (:class:`InternalError`) goes on up to the
command line's ``main``, which prints one line with where to report it and exits 70 (no record
of the claim it hit is written).

May import the campaign and the IR's printing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

from netproof.verifier.campaign.errors import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Interrupted,
)
from netproof.verifier.campaign.proving import (
    EXECUTORS,
    METHODS,
    REQUIREMENTS,
    ClaimResult,
    every_length_gap,
    prove,
    request_stop,
    verdict_name,
)
from netproof.verifier.campaign.sources import Session, parse_assignments
from netproof.verifier.claims import Proved, Refuted, Unknown

from .checks import nonnegative_int, output_dir, positive_int, positive_seconds
from .claimopts import add_claim_options, claim_filter
from .live import reporter
from .usage import UsageError

__all__ = ["add_parser", "cmd_prove"]


def _what_it_establishes(rec: Mapping[str, Any]) -> str:
    """A stronger record's verdict and reach, read from its structured fields: "proves it for
    every length" only where :func:`~netproof.verifier.campaign.store.every_length` says so."""
    from netproof.verifier.campaign.store import every_length

    if rec.get("verdict") == "refuted":
        return f"refutes it (counterexample {rec.get('counterexample')!r})"
    if every_length(rec):
        return "proves it for every length"
    bound = rec.get("bound")
    if isinstance(bound, Mapping):
        return f"proves it for {bound.get('min_len')} ≤ |w| ≤ {bound.get('max_len')}"
    return "proves it within its bound"


def add_parser(sub: Any) -> None:
    """Register ``netproof prove`` on the CLI's subparsers."""
    p_prove = sub.add_parser("prove", help="check the claims of constructions")
    p_prove.add_argument(
        "names", nargs="*", help="constructions or user modules FILE.py (default: every built-in)"
    )
    p_prove.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    add_claim_options(p_prove)
    p_prove.add_argument(
        "--max-n",
        type=nonnegative_int,
        default=None,
        help="override every claim's word-length bound",
    )
    p_prove.add_argument(
        "--method",
        choices=METHODS,
        default="exhaustive",
        help="exhaustive: every word of the bound, exactly (default); smt: z3 queries over a symbolic word, one "
        "per length, logged as .smt2; all: exhaustive where the bound is small, smt where the claim allows, both logged; "
        "best: per claim, a proof for every length where one can be had, else the exhaustive bound",
    )
    p_prove.add_argument(
        "--require",
        choices=REQUIREMENTS,
        default=None,
        help="every-length: exit 3 unless every claim with words is proved for every length (each one that is not "
        "is named, with why)",
    )
    p_prove.add_argument(
        "--timeout",
        type=positive_seconds,
        default=60.0,
        help="solver seconds per claim for smt (default 60)",
    )
    p_prove.add_argument(
        "--json", action="store_true", help="print all records and a summary as JSON"
    )
    p_prove.add_argument(
        "--out",
        type=output_dir,
        default="proofs",
        help="directory for the JSON records ('' for none)",
    )
    p_prove.add_argument(
        "--jobs", type=positive_int, default=0, help="worker processes (default: all cores)"
    )
    p_prove.add_argument("--quiet", action="store_true", help="no per-claim progress lines")
    p_prove.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="where the claims run: local (this machine, --jobs processes; default) or ray (a Ray cluster, large "
        "exhaustive claims split into shards by word prefix; needs the extra netproof[ray]); the records are the same",
    )
    p_prove.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="with --executor ray: the cluster's address (e.g. 127.0.0.1:6379, from `ray start --head`); "
        "default: a Ray instance on this machine for the run",
    )
    p_prove.add_argument(
        "--force",
        action="store_true",
        help="prove every claim again, even where --out holds its record for the same network, claim, bound and method",
    )
    p_prove.set_defaults(func=cmd_prove)


def cmd_prove(args: argparse.Namespace, session: Session) -> int:
    given = parse_assignments(args.param)
    if args.address is not None and args.executor != "ray":
        raise UsageError(
            f"--address {args.address} is a Ray cluster's address; give it with --executor ray"
        )
    if args.address is not None:  # before any work: nothing listening there is one line, now
        from netproof.verifier.campaign.executors import probe_address

        probe_address(args.address)
    wanted = claim_filter(args)
    display = reporter(quiet=args.quiet, json_out=args.json)
    terminated: list[bool] = []
    try:
        with sigterm_as_interrupt(terminated):
            result = prove(
                args.names,
                params=given,
                claims=wanted.ids,
                keyword=wanted.keyword,
                method=args.method,
                max_n=args.max_n,
                timeout=args.timeout,
                jobs=None if args.jobs == 0 else max(1, args.jobs),
                out=args.out or None,
                progress=display.finished,
                session=session,
                force=args.force,
                running=display.running,
                executor=args.executor,
                address=args.address,
                require=args.require,
            )
    except Interrupted as stop:
        display.close()
        kept = (
            f"; their records are in {args.out}/, run the same command again to finish the rest"
            if args.out
            else ""
        )
        how = "terminated (SIGTERM)" if terminated else "interrupted"
        sys.stderr.write(f"netproof: {how}: {stop.done} of {stop.total} claims done{kept}\n")
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    finally:  # an InternalError goes on up: the command line's main prints it (exit status 70)
        display.close()
    if args.json:
        results = [
            {
                **r.record,
                "every_length": r.every_length,
                "cached": r.cached,
                "record_path": r.path,
                **({"attempts": list(r.attempts)} if r.attempts else {}),
                **(
                    {"not_every_length": every_length_gap(r)}
                    if args.require is not None and every_length_gap(r) is not None
                    else {}
                ),
            }
            for r in result.results
        ]
        print(
            json.dumps(
                {"results": results, "summary": result.summary}, indent=2, ensure_ascii=False
            )
        )
        return result.exit_code
    print_table(result.results, gaps=args.require is not None or args.method == "best")
    summary = result.summary
    cached = f" ({summary['cached']} cached)" if summary["cached"] else ""
    print(
        f"\n{summary['proved']} proved, {summary['refuted']} refuted, {summary['unknown']} unknown{cached} "
        f"in {result.seconds:.1f}s" + (f"; records in {args.out}/" if args.out else "")
    )
    return result.exit_code


GRACE_SECONDS = 30.0
"""After SIGTERM, how long the run may take to stop its workers before it exits regardless."""


@contextmanager
def sigterm_as_interrupt(terminated: list[bool]) -> Iterator[None]:
    """Within the block, SIGTERM stops the run as Ctrl-C does (a KeyboardInterrupt: the workers
    stopped, the finished records kept) and appends True to ``terminated``; should stopping take
    more than :data:`GRACE_SECONDS` (a long call that does not return), the worker processes are
    killed and the process exits with status 143 at once (records are written atomically, so
    none is half-written). The previous handler comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return
    timers: list[threading.Timer] = []

    def force_exit() -> None:
        for child in multiprocessing.active_children():
            child.kill()
        sys.stderr.write(
            "netproof: terminated (SIGTERM): the workers did not stop in time; finished records are kept\n"
        )
        sys.stderr.flush()
        os._exit(EXIT_TERMINATED)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if terminated:
            return  # already stopping
        terminated.append(True)
        timer = threading.Timer(GRACE_SECONDS, force_exit)
        timer.daemon = True
        timer.start()
        timers.append(timer)
        request_stop()  # should this interrupt be swallowed, the run stops at its next step
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        for timer in timers:
            timer.cancel()  # the run stopped in time


def bound_text(r: ClaimResult) -> str:
    """The bound column, of the record the ledger and the report show for the claim (this
    run's, or a stronger one under ``--out``): ``every length`` for a proof of every length,
    ``all`` for a claim without words proved for every input, ``min≤|w|≤max`` for the words a
    claim checked (a fact about the words of a bound too), ``no words`` for a fact about
    numbers."""
    if r.every_length_shown:
        return "every length"
    if type(r.claim).__name__ == "ExactFact":
        if getattr(r.claim, "words", False):
            return f"{r.claim.min_len}≤|w|≤{r.claim.max_len if r.bound is None else r.bound}"
        return "no words"
    text = "all" if r.bound is None else f"{r.claim.min_len}≤|w|≤{r.bound}"
    return f"{text} (a lemma refuted)" if refuted_lemmas(r.record) else text


def refuted_lemmas(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The refuted lemmas of a compositional proof's lemma tree (below its root), in order."""
    found: list[Mapping[str, Any]] = []
    stack = list(reversed((rec.get("lemmas") or {}).get("children") or []))
    while stack:
        node = stack.pop()
        if node.get("verdict") == "refuted":
            found.append(node)
        stack.extend(reversed(node.get("children") or []))
    return found


def print_table(results: Sequence[ClaimResult], gaps: bool = False) -> None:
    """One row per claim (construction, claim, verdict, bound, method, time or ``cached``),
    then every refutation with its counterexample, every unknown with its reason, with ``gaps``
    every claim proved within its bound only with why it has no proof for every length, every refuted
    lemma of a compositional proof (its row's bound says it fell back) and every stronger record
    that was kept over this run's weaker verdict."""
    headers = ("construction", "claim", "verdict", "bound", "method", "time")
    rows = []
    for r in results:
        rows.append(
            (
                r.construction.name,
                r.claim.id,
                str(r.shown.get("verdict", verdict_name(r.verdict))).upper(),
                bound_text(r),
                str(r.shown.get("method", r.verdict.method)),
                "cached" if r.cached else f"{r.seconds:.1f}s",
            )
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)))
    for r in results:
        v = r.verdict
        c, claim = r.construction, r.claim
        if isinstance(v, Refuted):
            text = r.record.get("counterexample")
            cx = "" if text is None else f"\n      counterexample: {text or 'ε (empty word)'}"
            print(f"\n  REFUTED {c.name} {claim.id}: {claim.statement}\n      {v.detail}{cx}")
        elif isinstance(v, Unknown):
            print(f"\n  UNKNOWN {c.name} {claim.id}: {claim.statement}\n      {v.reason}")
        for lemma in refuted_lemmas(r.record):
            print(
                f"\n  LEMMA REFUTED {c.name} {claim.id} / {lemma['name']}: {lemma['statement']}\n      "
                f"{claim.id} was proved without it, for {bound_text(r).removesuffix(' (a lemma refuted)')} only"
            )
        if r.strongest is not None and r.kept is None:
            print(
                f"\n  STRONGER RECORD {c.name} {claim.id}: {r.strongest_path} "
                f"{_what_it_establishes(r.strongest)} "
                f"({r.strongest.get('method')}); this run's {verdict_name(v)} ({v.method}) is the row's time"
            )
        gap = every_length_gap(r) if gaps and isinstance(v, Proved) else None
        if gap is not None:
            print(f"\n  NOT EVERY LENGTH {c.name} {claim.id}: {bound_text(r)} only\n      {gap}")
        if r.kept is not None:
            print(
                f"\n  KEPT {r.path}: its {r.kept['verdict']} ({r.kept['method']}) is stronger than this run's "
                f"{verdict_name(v)}, so it stays"
            )
