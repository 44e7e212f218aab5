"""``netproof recheck``: check proof logs again, independently of the run that wrote them (the
strict reader, a rebuild of the network and queries, every ``.smt2`` query solved again by a
second solver, or an exhaustive check run again within ``--timeout`` after announcing its size),
one line per log as it is done (:mod:`netproof.verifier.smt.recheck` does the work). Progress goes
to stderr (:func:`~netproof.verifier.cli.live.events`): on a terminal a live line per log with its
queries solved (or words checked) of the total; elsewhere a line as each log starts, and with
``--verbose`` one per query; nothing with ``--quiet``.

May import the campaign (exit statuses, the session's registry, in which a log's construction is
looked up) and the SMT engine's proof logs and recheck (z3 and cvc5 load when a query is solved).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_REFUTED, EXIT_UNKNOWN, EXIT_USAGE
from netproof.verifier.campaign.selection import ClaimFilter
from netproof.verifier.campaign.sources import Session

from .checks import positive_seconds
from .claimopts import add_claim_options, claim_filter
from .live import EventLines, events
from .usage import UsageError

__all__ = ["add_parser", "cmd_recheck"]


def add_parser(sub: Any) -> None:
    """Register ``netproof recheck`` on the CLI's subparsers."""
    p_recheck = sub.add_parser(
        "recheck", help="re-solve the .smt2 queries of proof logs with a second solver (cvc5)"
    )
    p_recheck.add_argument(
        "logs", nargs="+", help="proof logs (.json) or directories of them (e.g. proofs)"
    )
    p_recheck.add_argument(
        "--solver",
        choices=("cvc5", "z3"),
        default="cvc5",
        help="the solver that answers again (default cvc5)",
    )
    p_recheck.add_argument(
        "--timeout",
        type=positive_seconds,
        default=120.0,
        help="seconds per query, or for an exhaustive re-run (default 120)",
    )
    p_recheck.add_argument(
        "--json", action="store_true", help="print every log's outcome and answers as JSON"
    )
    p_recheck.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p_recheck.add_argument(
        "--kernel",
        action="store_true",
        help="check with the independent kernel (netproof.kernel) instead: checked, refused or disagree",
    )
    p_recheck.add_argument(
        "--max-words",
        type=int,
        default=None,
        metavar="N",
        help="with --kernel: run exhaustive records of up to N words (default 200,000; "
        "Dyck's 1,398,101-word records take minutes each)",
    )
    add_claim_options(p_recheck)
    p_recheck.add_argument(
        "--verbose",
        action="store_true",
        help="a progress line per query solved (without a terminal)",
    )
    p_recheck.set_defaults(func=cmd_recheck)


def cmd_recheck(args: argparse.Namespace, session: Session) -> int:
    from netproof.verifier.smt.prooflog import find_logs
    from netproof.verifier.smt.recheck import as_json, recheck_log

    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g} must be > 0 (seconds per query)")
    for p in args.logs:
        if not os.path.exists(p):
            raise UsageError(
                f"no proof log or directory at {p!r}; give a .json record written by `netproof prove`"
            )
    wanted = claim_filter(args)
    paths = find_logs(args.logs)
    if not paths:
        raise UsageError(f"no .json proof logs under {' '.join(args.logs)}")
    if not wanted.everything:
        paths = _selected(paths, wanted, " ".join(args.logs))
    _opt_in(paths, session)
    if args.max_words is not None and (not args.kernel or args.max_words < 1):
        raise UsageError(f"--max-words {args.max_words} needs --kernel and a count >= 1")
    if args.kernel:
        return _kernel(paths, session, args.json, args.max_words)
    try:
        import cvc5  # noqa: F401
    except ImportError:
        if args.solver == "cvc5":
            raise UsageError(
                "--solver cvc5 needs the smt extra: pip install -e '.[smt]' (PyPI cvc5)"
            ) from None
    checks = []
    shown = events(quiet=args.quiet, json_out=args.json, verbose=args.verbose)
    try:
        for i, path in enumerate(paths, start=1):
            key = f"[{i}/{len(paths)}] {path}"
            shown.start(key, None, f"{key}: rechecking")
            check = recheck_log(
                path,
                registry=session.registry(),
                solver=args.solver,
                timeout=args.timeout,
                announce=_announcer(shown, args.json),
                progress=_progress(shown, key),
            )
            checks.append(check)
            shown.finish(key)
            if not args.json:
                n = len(check.queries)
                what = (
                    f"{n} quer{'y' if n == 1 else 'ies'}"
                    if check.solver != "checker"
                    else "exhaustive check"
                )
                if check.outcome == "rejected" or (
                    check.outcome == "undecided" and not check.queries
                ):
                    what = "nothing solved"
                shown.out(f"{check.outcome.upper():9} {path}  ({what}: {check.detail})")
    finally:
        shown.close()
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
        print(
            json.dumps(
                {"logs": [as_json(c) for c in checks], "summary": {**summary, "exit_code": code}},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(
            f"\n{summary['agree']} agree, {summary['disagree']} disagree, {summary['undecided']} undecided, "
            f"{summary['rejected']} rejected ({args.solver})"
        )
    return code


def _opt_in(paths: list[str], session: Session) -> None:
    """Add to the session the opt-in groups' constructions (``synth-*``) that these records name,
    so that their records are checked like every other (a record that is not JSON is left to the
    checks, which name it)."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                name = json.load(fh).get("construction")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(name, str):
            session.opt_in(name)


def _kernel(paths: list[str], session: Session, json_out: bool, max_words: int | None) -> int:
    """``--kernel``: one line per record (``CHECKED``, ``REFUSED`` with what is outside the
    kernel, ``DISAGREE``), then the counts per claim kind; exit 1 on a disagreement."""
    from netproof.verifier.campaign.kernelrun import KernelRun, summary_lines

    run = KernelRun(session.registry(), max_words=max_words)
    results = []
    for path in paths:
        r = run.check(path)
        results.append(r)
        if not json_out:
            print(f"{r.outcome.upper():9} {path}  ({r.kind}: {r.detail})", flush=True)
    code = EXIT_REFUTED if any(r.outcome == "disagree" for r in results) else EXIT_OK
    if json_out:
        logs = [
            {"log": p, "outcome": r.outcome, "kind": r.kind, "detail": r.detail}
            for p, r in zip(paths, results, strict=True)
        ]
        counts = {
            o: sum(r.outcome == o for r in results) for o in ("checked", "refused", "disagree")
        }
        print(json.dumps({"logs": logs, "summary": {**counts, "exit_code": code}}, indent=2))
    else:
        print("\nthe kernel, per claim kind:")
        for line in summary_lines(results):
            print("  " + line)
    return code


def _selected(paths: list[str], wanted: ClaimFilter, where: str) -> list[str]:
    """The logs of the claims ``--claims``/``-k`` ask for (a log is read for its construction and
    claim id; one that cannot be read is kept, for the recheck to reject it with the reason)."""
    keys: list[tuple[str, str] | None] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
            keys.append((str(rec["construction"]), str(rec["claim"]["id"])))
        except (OSError, ValueError, KeyError, TypeError):
            keys.append(None)
    wanted.check_ids(
        list(dict.fromkeys(k[1] for k in keys if k is not None)), f"any log under {where}"
    )
    kept = [p for p, k in zip(paths, keys, strict=True) if k is None or wanted.wants(*k)]
    if not kept:
        raise UsageError(f"no proof log under {where} is of a claim that --claims/-k select")
    return kept


def _announcer(shown: EventLines, json_out: bool) -> Callable[[str], None]:
    """Where a long exhaustive re-run's size is announced: stdout, before the log's own line
    (stderr under ``--json``, whose stdout is the JSON alone); never silenced by ``--quiet``."""

    def announce(line: str) -> None:
        if json_out:
            print(line, file=sys.stderr, flush=True)
        else:
            shown.out(line)

    return announce


def _progress(shown: EventLines, key: str) -> Callable[[int, int, Any], None]:
    """The recheck's ``progress(done, total, query)`` shown as step ``key``: the queries solved
    (a line per query with ``--verbose``), or the words an exhaustive re-run has checked, of the
    total."""

    def progress(done: int, total: int, query: Any) -> None:
        line = None
        if query is not None:
            line = f"{key}: query {query.name!r} {query.answer} (log: {query.recorded}; {query.seconds:.1f}s, {done}/{total})"
        shown.advance(key, done, total, line)

    return progress
