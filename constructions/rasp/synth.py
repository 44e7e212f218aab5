"""From a specification to a B-RASP program: star-free regular expressions, LTL formulas and
aperiodic DFAs synthesized into programs, with the spec's own minimal DFA as the reference.

:func:`synthesize` takes a :class:`Spec` (made by :func:`regex_spec`, :func:`ltl_spec`,
:func:`dfa_spec` or :func:`read_dfa_file`) and returns a :class:`Synthesis`:

- ``reference``: the minimal DFA of the spec, computed **without** the program (a regular
  expression by :func:`~netproof.verifier.claims.regular.regex_automaton`, an LTL formula by
  :func:`~netproof.verifier.claims.ltl.ltl_automaton`, a DFA by
  :func:`~netproof.verifier.claims.regular.minimal_automaton`): ``program=language`` compares
  the program with it;
- ``verdict``: the star-freeness decision on the reference's syntactic monoid
  (:func:`~netproof.verifier.claims.monoid.star_freeness`). A language that is not star-free is
  refused with :class:`~netproof.verifier.claims.monoid.NotStarFree` (its witness and the
  theorem: Yang, Chiang & Angluin 2024 — masked hard-attention transformers recognize exactly
  the star-free languages), never synthesized;
- ``program``: the B-RASP program. Route: an LTL formula by the paper's direct construction
  (:func:`.from_ltl.ltl_program`; ``via="dfa"`` goes through the reference DFA instead, for
  comparison); a regular expression or DFA through its minimal DFA
  (:func:`.from_dfa.dfa_program`, aperiodic DFA → past-only B-RASP);
- ``sizes``: the spec's size (LTL: syntax-tree nodes; a regex: its length without blanks; a
  DFA: its state count), the reference's states, the monoid's size, the program's operations
  and attention operations, and the compiled network's sublayers, attention layers, heads and
  residual dims.

``minimize=True`` builds every route the spec has (for an LTL formula: direct and via the
DFA), shares subformulas and simplifies each (:func:`.optimize.optimize`: common subexpressions
up to commutativity, constant folding, Boolean and attention simplifications, dead code; every
rule exactly sound) and keeps the program with the fewest operations; every route's program is
proved against the same reference, so the choice never changes the language (the tests check
``program=language`` on the kept one). ``Synthesis.sizes["saved_ops"]`` says what it saved
against the default route as built.

May import: its own package's modules and the vocabulary.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from netproof.verifier.claims import Automaton
from netproof.verifier.claims.rasp import brasp as B

__all__ = [
    "Spec",
    "SpecError",
    "Synthesis",
    "compiled",
    "dfa_spec",
    "ltl_spec",
    "network_sizes",
    "read_dfa_file",
    "regex_spec",
    "synthesize",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class SpecError(ValueError):
    """A specification that cannot be read (bad regex, bad LTL, bad DFA file); one line."""


@dataclass(frozen=True)
class Spec:
    """A specification: ``kind`` is ``regex``, ``ltl`` or ``dfa``; ``text`` the pattern or
    formula (a DFA's: its JSON); ``dfa`` the automaton of a DFA spec; ``empty`` whether an LTL
    spec accepts the empty word."""

    kind: str
    alphabet: tuple[str, ...]
    text: str = ""
    dfa: Automaton | None = None
    empty: bool = False


def regex_spec(pattern: str, alphabet: Sequence[str]) -> Spec:
    return Spec("regex", tuple(alphabet), text=pattern)


def ltl_spec(formula: str, alphabet: Sequence[str], empty: bool = False) -> Spec:
    return Spec("ltl", tuple(alphabet), text=formula, empty=empty)


def dfa_spec(dfa: Automaton, alphabet: Sequence[str]) -> Spec:
    return Spec("dfa", tuple(alphabet), text="", dfa=dfa)


def read_dfa_file(path: str) -> Spec:
    """A DFA spec from a JSON file ``{"alphabet": [...], "states": n, "start": q,
    "accepting": [...], "delta": [[...], ...]}`` (``delta[q][a]``: the state after
    ``alphabet[a]`` in state ``q``)."""
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise SpecError(
                f"{path} is not JSON ({exc.msg} at line {exc.lineno}); fix the file"
            ) from None
    return dfa_from_json(data, path)


def dfa_from_json(data: Any, where: str = "the DFA") -> Spec:
    keys = ("alphabet", "states", "start", "accepting", "delta")
    if not isinstance(data, dict) or any(k not in data for k in keys):
        raise SpecError(f"{where} must be a JSON object with the keys {', '.join(keys)}")
    alphabet = data["alphabet"]
    if (
        not isinstance(alphabet, list)
        or not alphabet
        or not all(isinstance(s, str) for s in alphabet)
    ):
        raise SpecError(f"{where}: alphabet must be a non-empty list of symbols (strings)")
    delta = data["delta"]
    if not isinstance(delta, list) or any(
        not isinstance(r, list) or len(r) != len(alphabet) for r in delta
    ):
        raise SpecError(
            f"{where}: delta must be a list of rows of {len(alphabet)} states (one per symbol)"
        )
    try:
        dfa = Automaton(
            states=int(data["states"]),
            start=int(data["start"]),
            accepting=frozenset(int(q) for q in data["accepting"]),
            delta=tuple(tuple(int(t) for t in r) for r in delta),
        )
    except (TypeError, ValueError) as exc:
        raise SpecError(f"{where}: {exc}") from None
    return Spec("dfa", tuple(alphabet), text=json.dumps(data, sort_keys=True), dfa=dfa)


@dataclass
class Synthesis:
    """What :func:`synthesize` returns (see the module docstring)."""

    spec: Spec
    name: str
    route: str
    program: B.Program
    reference: Automaton
    verdict: Any
    sizes: dict[str, int] = field(default_factory=dict)
    formula: Any = None


def _reference(spec: Spec) -> tuple[Automaton, Any, int]:
    """(minimal DFA, parsed formula or None, spec size)."""
    from netproof.verifier.claims.regular import RegexError, minimal_automaton, regex_automaton

    if spec.kind == "regex":
        try:
            dfa = regex_automaton(spec.text, spec.alphabet)
        except RegexError as exc:
            raise SpecError(str(exc)) from None
        return dfa, None, len(re.sub(r"\s", "", spec.text))
    if spec.kind == "ltl":
        from netproof.verifier.claims import ltl as L

        try:
            f = L.parse_ltl(spec.text, spec.alphabet)
            dfa = L.ltl_automaton(f, spec.alphabet, empty=spec.empty)
        except L.LtlError as exc:
            raise SpecError(str(exc)) from None
        return dfa, f, L.size(f)
    if spec.kind == "dfa":
        assert spec.dfa is not None
        if spec.dfa.delta and len(spec.dfa.delta[0]) != len(spec.alphabet):
            raise SpecError(
                f"the DFA reads {len(spec.dfa.delta[0])} symbols but the alphabet "
                f"{spec.alphabet} has {len(spec.alphabet)}; give one symbol per column of delta"
            )
        return minimal_automaton(spec.dfa), None, spec.dfa.states
    raise SpecError(f"spec kind {spec.kind!r} is not regex, ltl or dfa")


def compiled(program: B.Program) -> Any:
    """The program's compiled network (:func:`.compile_brasp.compile_brasp`)."""
    from .compile_brasp import compile_brasp

    return compile_brasp(program)


def network_sizes(program: B.Program) -> dict[str, int]:
    """The program's operations and its compiled network's sublayers, attention layers, heads
    and residual dims."""
    from netproof.symbolic import AttentionLayer

    from .compile_brasp import compile_brasp

    ops = B.operations(program.output)
    net = compile_brasp(program)
    attn = [s.block for s in net.layers if isinstance(s.block, AttentionLayer)]
    return {
        "program_ops": len(ops),
        "attention_ops": sum(isinstance(e, B.Attend) for e in ops),
        "sublayers": len(net.layers),
        "layers": len(attn),
        "heads": sum(len(a.heads) for a in attn),
        "dims": len(net.dims),
    }


def _from_dfa(dfa: Automaton, alphabet: tuple[str, ...], name: str) -> B.Program:
    try:
        from .from_dfa import dfa_program
    except ImportError:
        raise SpecError(
            "the DFA route (constructions/rasp/from_dfa.py, aperiodic DFA → B-RASP) is not "
            "installed in this checkout; give the spec as an LTL formula (--ltl)"
        ) from None
    return dfa_program(dfa, alphabet, name)


def synthesize(
    spec: Spec, name: str = "synth", *, via: str | None = None, minimize: bool = False
) -> Synthesis:
    """The B-RASP program of ``spec`` (see the module docstring); raises :class:`SpecError`
    for an unreadable spec and :class:`~netproof.verifier.claims.monoid.NotStarFree` for a
    language no B-RASP program recognizes."""
    from netproof.verifier.claims.monoid import NotStarFree, star_freeness

    if not _NAME.match(name):
        raise SpecError(f"name {name!r} must be letters, digits, _ and - (starting with a letter)")
    if via not in (None, "ltl", "dfa"):
        raise SpecError(f"via={via!r}: give ltl or dfa")
    reference, formula, spec_size = _reference(spec)
    verdict = star_freeness(reference, spec.alphabet)
    if not verdict.star_free:
        raise NotStarFree(verdict, "the specification's language")
    prog_name = name.replace("-", "_")
    routes: dict[str, Any] = {}
    if spec.kind == "ltl":
        from .from_ltl import ltl_program

        routes["ltl"] = lambda: ltl_program(formula, spec.alphabet, prog_name, empty=spec.empty)
    routes["dfa"] = lambda: _from_dfa(reference, spec.alphabet, prog_name)
    default = via or next(iter(routes))
    if default not in routes:
        raise SpecError(f"via={default!r}: a {spec.kind} spec has the routes {', '.join(routes)}")
    built = {default: routes[default]()}
    if minimize and via is None:
        for r, make in routes.items():
            if r not in built:
                with contextlib.suppress(SpecError):
                    built[r] = make()
    default_ops = len(B.operations(built[default].output))
    if minimize:
        from .optimize import optimize

        built = {r: optimize(p).program for r, p in built.items()}
    sized = {r: network_sizes(p) for r, p in built.items()}
    route = min(sized, key=lambda r: (sized[r]["program_ops"], r != default))
    sizes = {
        "spec_size": spec_size,
        "dfa_states": verdict.states,
        "monoid_size": verdict.monoid_size,
        **sized[route],
    }
    if minimize:
        sizes["saved_ops"] = default_ops - sized[route]["program_ops"]
    return Synthesis(spec, name, route, built[route], reference, verdict, sizes, formula)
