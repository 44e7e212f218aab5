"""How fast :func:`netproof.verifier.smtlib.smt2_portable` turns z3's SMT-LIB2 dumps into the text cvc5 reads,
against the reference printer it replaced (kept below, unchanged: parse into nested lists, drop
the one-argument sums and products recursively, print back).

    python benchmarks/smt2_printer.py [--cases dyck22:60,dyck11:480,parity:200] [--repeat 5]

Each case runs the compositional proof of its recognition claim for the words of exactly one
length (:func:`netproof.verifier.smt.compositional.prove_recognizes`, as ``netproof prove --method smt``
does) and keeps every raw dump z3 produced on the way (the lemmas' queries and the length's
query), with the ``logic`` the prover passed. Every dump is then printed by both printers, which
must give the same bytes, with the logic the prover gave and with ``logic=None`` (the printer
computes :func:`netproof.verifier.smtlib.smt2_logic`). A row gives the largest dump of the case and, on the
``all`` row, the sum over the case's dumps; times are the best of ``--repeat`` runs, in one
process, one printer after the other (the ratio is the figure to read: absolute times vary with
the machine's load).

The prover passes a logic with every compositional query, so ``given``/``ALL`` rows are those of
a proof: z3's dumps are then printed on their bytes (numpy). With ``logic=None`` the printer goes
through the tokens (it needs them for the logic): about 5x on the Dyck dumps, 3x on PARITY's.

One run on the shared 2-core machine (Python 3.11, numpy, load average 1.4 from another process)
with the printer of commit ada6a59, the default cases and ``dyck11:1920`` (a 7.8 MB dump):

```text
$ python benchmarks/smt2_printer.py --cases dyck22:60,dyck11:480,parity:200,dyck11:1920
case        dump               bytes  logic  reference ms      new ms   ratio
dyck22:60   largest           780488  ALL           114.9         6.3   18.4x
dyck22:60   largest           780488  None          132.0        23.0    5.7x
dyck22:60   all (17)          810689  given         127.1         8.4   15.1x
dyck11:480  largest          1885937  ALL           300.8        16.7   18.0x
dyck11:480  largest          1885937  None          342.8        61.8    5.5x
dyck11:480  all (14)         1900113  given         291.1        17.4   16.7x
parity:200  largest            98273  ALL            13.6         1.1   12.6x
parity:200  largest            98273  None           17.5         6.2    2.8x
parity:200  all (2)            98775  given          13.9         1.2   12.1x
dyck11:1920 largest          7837173  ALL          1386.1        89.9   15.4x
dyck11:1920 largest          7837173  None         1545.6       260.9    5.9x
dyck11:1920 all (14)         7851349  given        1389.1        89.7   15.5x
```
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from netproof.constructions import REGISTRY
from netproof.verifier.claims import Recognizes
from netproof.verifier.smt.compositional import prove_recognizes
from netproof.verifier.smtlib import printer as smt

CASES: dict[str, tuple[str, dict[str, str], str]] = {
    "dyck22": ("dyck", {"k": "2", "depth": "2"}, "Y2"),
    "dyck11": ("dyck", {"k": "1", "depth": "1"}, "Y2"),
    "dyck23": ("dyck", {"k": "2", "depth": "3"}, "Y2"),
    "parity": ("parity", {}, "C4"),
    "first": ("first", {}, "recognizes"),
}


# --------------------------------------------------------------------------- the reference printer
# verifier/smt.py before the one-pass printer (commit 6ba1bd6), unchanged but for the names.

_TOKEN = re.compile(r'\s+|;[^\n]*|"(?:[^"]|"")*"|\|[^|]*\||[()]|[^\s()";|]+')


def _sexprs(text: str) -> list[Any]:
    """Parse SMT-LIB2 text into nested lists of atoms (comments dropped)."""
    stack: list[list[Any]] = [[]]
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok.isspace() or tok.startswith(";"):
            continue
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced ')' in SMT-LIB2 text")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise ValueError("unbalanced '(' in SMT-LIB2 text")
    return stack[0]


def _unary_fixed(e: Any) -> Any:
    """Drop one-argument ``(+ x)`` / ``(* x)`` (z3 prints them; cvc5 refuses them)."""
    if isinstance(e, str):
        return e
    e = [_unary_fixed(x) for x in e]
    if len(e) == 2 and e[0] in ("+", "*"):
        return e[1]
    return e


def _show_sexpr(e: Any, out: list[str]) -> None:
    if isinstance(e, str):
        out.append(e)
        return
    out.append("(")
    for i, x in enumerate(e):
        if i:
            out.append(" ")
        _show_sexpr(x, out)
    out.append(")")


_NUMERAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def _constant(e: Any) -> bool:
    if isinstance(e, str):
        return bool(_NUMERAL.match(e))
    return bool(e) and e[0] in ("-", "/", "+", "*", "to_real") and all(_constant(x) for x in e[1:])


def _scan(e: Any, seen: set[str], lets: dict[str, bool]) -> bool:
    if isinstance(e, str):
        if e in ("Int", "Real"):
            seen.add(e)
        elif e in ("to_real", "to_int", "is_int"):
            seen.update(("Int", "Real"))
        elif "." in e and _NUMERAL.match(e):
            seen.add("Real")
        return False
    nonlinear = False
    if e and e[0] in ("*", "/", "div", "mod"):
        variable = [x for x in e[1:] if not _constant(x)]
        if len(variable) > 1 or (e[0] != "*" and len(e) > 2 and not _constant(e[2])):
            nonlinear = True
    for x in e:
        nonlinear = _scan(x, seen, lets) or nonlinear
    return nonlinear


def reference_logic(commands: Sequence[Any]) -> str:
    seen: set[str] = set()
    nonlinear = any(_scan(c, seen, {}) for c in commands)
    if any(isinstance(c, list) and c and c[0] in ("forall", "exists") for c in commands):
        return "ALL"
    if not seen:
        return "QF_UF"
    sorts = "IRA" if seen == {"Int", "Real"} else ("IA" if "Int" in seen else "RA")
    return f"QF_{'N' if nonlinear else 'L'}{sorts}"


def reference_portable(text: str, *, logic: str | None = None) -> str:
    commands = _sexprs(text)
    lines = [f"(set-logic {logic or reference_logic(commands)})"]
    saw_check = False
    for cmd in commands:
        if isinstance(cmd, list) and cmd and cmd[0] in ("set-info", "set-logic", "set-option"):
            continue
        if isinstance(cmd, list) and cmd and cmd[0] == "check-sat":
            saw_check = True
            continue
        out: list[str] = []
        _show_sexpr(_unary_fixed(cmd), out)
        lines.append("".join(out))
    if not saw_check:
        raise ValueError("the SMT-LIB2 text has no (check-sat)")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the benchmark


def dumps(key: str, length: int) -> list[tuple[str, str | None]]:
    """The raw z3 dumps (and the logic passed with each) of one compositional proof: the claim of
    ``key`` for the words of length ``length``."""
    name, params, claim_id = CASES[key]
    construction = REGISTRY[name]
    values = construction.parse_params(params)
    claim = {c.id: c for c in construction.claims(values)}[claim_id]
    if not isinstance(claim, Recognizes):
        raise SystemExit(
            f"{key}: claim {claim_id} is a {type(claim).__name__}, not a recognition claim"
        )
    lemmas = construction.lemmas(values) if construction.lemmas is not None else ()
    net = (
        construction.network(values, length)
        if construction.per_length
        else construction.network(values)
    )
    captured: list[tuple[str, str | None]] = []
    printer = smt.smt2_portable

    def capture(text: str, *, logic: str | None = None) -> str:
        captured.append((text, logic))
        return printer(text, logic=logic)

    smt.smt2_portable = capture  # type: ignore[assignment]
    try:
        prove_recognizes(
            net, replace(claim, min_len=length, max_len=length), lemmas, length, timeout=300.0
        )
    finally:
        smt.smt2_portable = printer  # type: ignore[assignment]
    return captured


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def row(
    case: str, label: str, size: int, shown: str, texts: list[tuple[str, str | None]], repeat: int
) -> None:
    """Time both printers on ``texts`` (each with its logic) and print one table row."""
    old = best(lambda: [reference_portable(t, logic=lg) for t, lg in texts], repeat)
    new = best(lambda: [smt.smt2_portable(t, logic=lg) for t, lg in texts], repeat)
    print(
        f"{case:11} {label:14} {size:>9}  {shown:5} {old * 1000:>13.1f} {new * 1000:>11.1f} {old / new:>6.1f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases",
        default="dyck22:60,dyck11:480,parity:200",
        help=f"comma-separated KEY:LENGTH, KEY one of {', '.join(CASES)}",
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per timing; the best is shown (default 5)"
    )
    args = parser.parse_args(argv)
    print(
        f"{'case':11} {'dump':14} {'bytes':>9}  {'logic':5} {'reference ms':>13} {'new ms':>11} {'ratio':>7}"
    )
    for case in args.cases.split(","):
        key, _, length = case.partition(":")
        if key not in CASES or not length.isdigit():
            parser.error(f"--cases: {case!r} is not KEY:LENGTH with KEY one of {', '.join(CASES)}")
        texts = dumps(key, int(length))
        for text, logic in texts:
            for given in (logic, None):
                if reference_portable(text, logic=given) != smt.smt2_portable(text, logic=given):
                    raise SystemExit(
                        f"{case}: the printers differ on a {len(text)}-byte dump with logic={given!r}"
                    )
        largest, logic = max(texts, key=lambda t: len(t[0]))
        row(case, "largest", len(largest), str(logic), [(largest, logic)], args.repeat)
        row(case, "largest", len(largest), "None", [(largest, None)], args.repeat)
        row(case, f"all ({len(texts)})", sum(len(t) for t, _ in texts), "given", texts, args.repeat)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
