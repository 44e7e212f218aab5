"""``netproof synth``: a star-free specification (a regular expression, an LTL formula or a DFA
file) synthesized into a B-RASP program and its compiled network (:mod:`netproof.constructions.rasp.synth`),
or a counting formula (K_t[#], ``--counting``) into a C-RASP program and its network
(:mod:`netproof.constructions.rasp.from_counting`); ``--out`` writes them, ``--prove`` proves
network = program = language.

Exit status: 0 synthesized (and, with ``--prove``, every claim proved); 1 a claim refuted; 2 a
usage error, an unreadable spec, or a language that is not star-free (refused: no B-RASP program
recognizes it; the line names the witness; a counting formula is never refused so); 3 a claim
unknown.

May import the campaign (proving, atomic writes), the constructions' RASP package and the IR's
network files.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from netproof.verifier.campaign.errors import EXIT_OK, EXIT_USAGE
from netproof.verifier.campaign.sources import Session
from netproof.verifier.campaign.store import write_atomic

from .usage import UsageError

if TYPE_CHECKING:
    from netproof.symbolic import Network

__all__ = ["add_parser", "cmd_synth", "module_text"]


def add_parser(sub: Any) -> None:
    """Register ``netproof synth`` on the CLI's subparsers."""
    p = sub.add_parser(
        "synth",
        help="synthesize a B-RASP program and network from a star-free regex, LTL formula or DFA, "
        "or a C-RASP program and network from a counting formula",
    )
    spec = p.add_mutually_exclusive_group(required=True)
    spec.add_argument(
        "--regex", metavar="PATTERN", help="a regular expression (one-character symbols)"
    )
    spec.add_argument(
        "--ltl", metavar="FORMULA", help="an LTL formula with past and future operators"
    )
    spec.add_argument(
        "--dfa",
        metavar="FILE.json",
        help='a DFA file: {"alphabet": [...], "states": n, "start": q, "accepting": [...], "delta": [[...], ...]}',
    )
    spec.add_argument(
        "--counting",
        metavar="FORMULA",
        help="a counting formula (K_t[#], e.g. '#(a) > #(b)'): a C-RASP program",
    )
    p.add_argument(
        "--alphabet",
        metavar="a,b,c",
        help="the symbols, comma-separated (--regex, --ltl, --counting)",
    )
    p.add_argument(
        "--empty",
        action="store_true",
        help="--ltl, --counting: the empty word is in the language (default: not)",
    )
    p.add_argument("--name", default="synth", help="the program's and construction's name")
    p.add_argument(
        "--via",
        choices=("ltl", "dfa"),
        default=None,
        help="the route: ltl (an LTL spec's direct construction, the default for --ltl) or dfa "
        "(through the minimal DFA); not for --counting",
    )
    p.add_argument(
        "--minimize",
        action="store_true",
        help="build every route, share subformulas and simplify each, keep the smallest program "
        "(not for --counting: its program has one operation per distinct subformula already)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default="",
        help="write NAME.rasp, NAME.py (PROGRAMS) and NAME.net.json",
    )
    p.add_argument(
        "--prove",
        action="store_true",
        help="prove network=program, program=language, operations and no-ties (--method best)",
    )
    p.add_argument("--max-n", type=int, default=None, help="--prove: the word-length bound")
    p.add_argument("--json", action="store_true", help="print a JSON object (see docs/synth.md)")
    p.set_defaults(func=cmd_synth)


def module_text(name: str, program: Any, reference: Any, spec_line: str) -> str:
    """A user program module defining ``PROGRAMS = {name: (program, reference)}``, the program and
    its reference automaton written as the vocabulary's constructors."""
    return (
        f'"""Synthesized by `netproof synth` from {spec_line}: '
        f'`netproof prove THIS.py:{name}`."""\n\n'
        "from netproof.verifier.claims import Automaton\n"
        "from netproof.verifier.claims.rasp.brasp import (  # noqa: F401\n"
        "    And,\n    AtI,\n    AtJ,\n    Attend,\n    Const,\n    Not,\n    Or,\n    Program,\n"
        "    Token,\n)\n\n"
        f"PROGRAM = {program!r}\n\n"
        f"REFERENCE = {reference!r}\n\n"
        f"PROGRAMS = {{{name!r}: (PROGRAM, REFERENCE)}}\n"
    )


def _alphabet(args: argparse.Namespace) -> tuple[str, ...]:
    if not args.alphabet:
        raise UsageError("give the symbols: --alphabet a,b,c")
    alphabet = tuple(s.strip() for s in args.alphabet.split(","))
    if any(not s for s in alphabet) or len(set(alphabet)) != len(alphabet):
        raise UsageError(f"--alphabet {args.alphabet!r} must be distinct, non-empty symbols: a,b,c")
    return alphabet


def _spec(args: argparse.Namespace) -> Any:
    from netproof.constructions import synth as S

    if args.dfa is not None:
        if args.alphabet:
            raise UsageError("--dfa files name their alphabet: drop --alphabet")
        try:
            return S.read_dfa_file(args.dfa)
        except OSError as exc:
            raise UsageError(f"cannot read --dfa {args.dfa}: {exc.strerror}") from None
        except S.SpecError as exc:
            raise UsageError(str(exc)) from None
    alphabet = _alphabet(args)
    if args.regex is not None:
        if args.empty:
            raise UsageError(
                "--empty is for --ltl; a regular expression says itself whether ε matches"
            )
        return S.regex_spec(args.regex, alphabet)
    return S.ltl_spec(args.ltl, alphabet, empty=args.empty)


def cmd_synth(args: argparse.Namespace, session: Session) -> int:
    from netproof.constructions import synth as S
    from netproof.verifier.claims.monoid import NotStarFree
    from netproof.verifier.claims.rasp import brasp as B

    if args.counting is not None:
        return _cmd_counting(args, session)
    spec = _spec(args)
    try:
        syn = S.synthesize(spec, args.name, via=args.via, minimize=args.minimize)
    except S.SpecError as exc:
        raise UsageError(str(exc)) from None
    except NotStarFree as exc:
        v = exc.result
        line = (
            f"refused: the language is not star-free (witness u = {''.join(v.witness or ()) or 'ε'!r}: "
            f"u^n and u^(n+1) differ for every n); no masked hard-attention transformer (B-RASP "
            "program) recognizes it (Yang, Chiang & Angluin 2024; Schützenberger 1965). Fix: "
            "give a star-free spec, or a C-RASP program for a counting language"
        )
        if args.json:
            print(
                json.dumps(
                    {"star_free": False, "refused": line, "explain": v.explain()},
                    ensure_ascii=False,
                )
            )
        else:
            print(f"netproof: {line}", file=__import__("sys").stderr)
        return EXIT_USAGE
    except ValueError as exc:  # the DFA route's own refusals, one line
        raise UsageError(str(exc)) from None
    spec_line = (
        f"--{spec.kind} {spec.text!r} over {','.join(spec.alphabet)}"
        if spec.kind != "dfa"
        else f"--dfa {args.dfa}"
    )
    written, code, verdicts = _write_and_prove(
        args,
        session,
        B.show(syn.program),
        module_text(args.name, syn.program, syn.reference, spec_line),
        lambda: S.compiled(syn.program),
        spec_line,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "name": args.name,
                    "spec": {"kind": spec.kind, "text": spec.text, "alphabet": list(spec.alphabet)},
                    "star_free": True,
                    "route": syn.route,
                    "sizes": syn.sizes,
                    "program": B.show(syn.program),
                    "written": written,
                    "claims": verdicts,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return code
    sz = syn.sizes
    print(B.show(syn.program))
    print(
        f"\n{args.name}: {spec_line}, route {syn.route}; spec size {sz['spec_size']}, minimal DFA "
        f"{sz['dfa_states']} states, monoid {sz['monoid_size']} elements (aperiodic); program "
        f"{sz['program_ops']} operations ({sz['attention_ops']} attention); network "
        f"{sz['layers']} attention layers ({sz['sublayers']} sublayers), {sz['heads']} heads, "
        f"{sz['dims']} dims"
        + (f"; --minimize saved {sz['saved_ops']} operations" if "saved_ops" in sz else "")
    )
    _print_written_and_verdicts(written, verdicts)
    return code


def _write_and_prove(
    args: argparse.Namespace,
    session: Session,
    program: str,
    module: str,
    network: Callable[[], Network],
    spec_line: str,
) -> tuple[list[str], int, list[dict[str, Any]]]:
    """Under ``--out``, NAME.rasp (the ``program`` as printed), NAME.py (the ``module``'s text)
    and NAME.net.json (the ``network``); then, with ``--prove``, its claims proved
    (:func:`_prove`): the files written, the exit status and one row per claim."""
    written: list[str] = []
    if args.out:
        from netproof.symbolic.netfile_writer import dumps

        base = os.path.join(args.out, args.name.replace("-", "_"))
        write_atomic(base + ".rasp", program + "\n")
        write_atomic(base + ".py", module)
        write_atomic(
            base + ".net.json",
            dumps(network(), extra={"construction": args.name, "spec": spec_line}),
        )
        written = [base + ext for ext in (".rasp", ".py", ".net.json")]
    code, verdicts = (
        _prove(args, session, written[1] if written else None, module)
        if args.prove
        else (EXIT_OK, [])
    )
    return written, code, verdicts


def _prove(
    args: argparse.Namespace, session: Session, module: str | None, text: str
) -> tuple[int, list[dict[str, Any]]]:
    """``prove MODULE:NAME --method best`` on the written module (or on ``text`` written to a
    temporary one): the exit status and one row per claim."""
    from netproof.verifier.campaign.proving import prove

    with tempfile.TemporaryDirectory() as tmp:
        if module is None:
            module = os.path.join(tmp, "synth_module.py")
            write_atomic(module, text)
        run = prove(
            [f"{module}:{args.name}"], method="best", max_n=args.max_n, jobs=1, session=session
        )
    rows = [
        {
            "claim": r.record["claim"]["id"],
            "verdict": r.record["verdict"],
            "method": r.record["method"],
            "every_length": bool(r.every_length),
            "bound": r.record.get("bound"),
        }
        for r in run.results
    ]
    return run.exit_code, rows


def _print_written_and_verdicts(written: list[str], verdicts: list[dict[str, Any]]) -> None:
    for w in written:
        print(f"wrote {w}")
    for row in verdicts:
        span = "every length" if row["every_length"] else f"words up to {row['bound']['max_len']}"
        print(f"  {row['claim']}: {row['verdict']} ({span}; {row['method']})")


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _cmd_counting(args: argparse.Namespace, session: Session) -> int:
    """``--counting FORMULA``: the formula's C-RASP program (one operation per distinct
    subformula), its network, and the formula's own language (its evaluator and its counter
    automaton) as the reference."""
    from netproof.constructions import compile_crasp
    from netproof.constructions import from_counting as F
    from netproof.constructions import synth as S
    from netproof.verifier.claims.rasp import crasp as C

    if args.via is not None or args.minimize:
        flag = "--via" if args.via is not None else "--minimize"
        raise UsageError(
            f"{flag} is for the B-RASP routes; a --counting formula has one route, one C-RASP "
            f"operation per distinct subformula: drop {flag}"
        )
    alphabet = _alphabet(args)
    try:
        syn = F.synthesize_counting(args.counting, alphabet, args.name, empty=args.empty)
    except S.SpecError as exc:
        raise UsageError(str(exc)) from None
    spec_line = f"--counting {syn.text!r} over {','.join(alphabet)}"
    written, code, verdicts = _write_and_prove(
        args,
        session,
        C.show(syn.program),
        F.module_source(syn, spec_line),
        lambda: compile_crasp(syn.program),
        spec_line,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "name": args.name,
                    "spec": {"kind": "counting", "text": syn.text, "alphabet": list(alphabet)},
                    "empty": syn.empty,
                    "route": "counting",
                    "sizes": syn.sizes,
                    "program": C.show(syn.program),
                    "written": written,
                    "claims": verdicts,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return code
    sz = syn.sizes
    print(C.show(syn.program))
    print(
        f"\n{args.name}: {spec_line}, route counting (C-RASP); spec size {sz['spec_size']}, "
        f"{_n(sz['counters'], 'count term')} (reference: the formula's counter automaton, "
        f"{_n(sz['reference_rules'], 'rule')}); program {_n(sz['program_ops'], 'operation')} "
        f"({_n(sz['counts'], 'count')}, {_n(sz['comparisons'], 'comparison')}); network "
        f"{_n(sz['layers'], 'attention layer')} ({_n(sz['sublayers'], 'sublayer')}), "
        f"{_n(sz['heads'], 'head')}, {_n(sz['dims'], 'dim')}"
    )
    _print_written_and_verdicts(written, verdicts)
    return code
