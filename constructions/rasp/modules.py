"""Programs from users' modules: a module's ``PROGRAMS`` turned into constructions, compiled on load.

A user module (``netproof run|prove|fuzz|export|compile|ledger prog.py:NAME``) may define
``PROGRAMS`` instead of (or beside) ``CONSTRUCTIONS``:

- a dict from construction names to programs, ``{"my-contains": program}``, or to pairs
  ``{"my-contains": (program, reference)}``;
- or a tuple (list) of programs or pairs, each named after its program (``contains_ab`` is the
  construction ``contains-ab``).

A program is a :class:`~netproof.verifier.claims.rasp.brasp.Program` (B-RASP) or a
:class:`~netproof.verifier.claims.rasp.crasp.Program` (C-RASP). The optional reference is the
language the program should recognize, the ``program=language`` claim's other side: a
:class:`~netproof.verifier.claims.Language`, an :class:`~netproof.verifier.claims.Automaton` over the
program's alphabet (in its order), a
:class:`~netproof.verifier.claims.counting.CounterAutomaton` over it (a language of counts:
``network=language`` is then proved for every length), a regular expression (a ``str``, matched in full against the
word's symbols written together: one-character symbols only), or a Python predicate on words
(a word is a tuple of symbols). ``MAX_LEN`` (an int, default 8) is every claim's word-length
bound. Each program becomes the construction :func:`~.claims.program_construction` declares for
the library's programs (network = program, operations, program = language, no ties), compiled
once, here, so that a program the compiler refuses is refused when the module loads.

Errors are :class:`ProgramModuleError` (a ``ValueError``): one line saying what is wrong and the
fix, without the file's name, which the loader (:mod:`netproof.verifier.campaign.usermod`) puts
in front.

May import: its own package's modules, the IR and the vocabulary.

>>> from netproof.verifier.claims.rasp import crasp as C
>>> majority = C.Program("majority", ("a", "b"), output=C.count(C.token("a")) > C.count(C.token("b")))
>>> [c.name for c in program_constructions((majority,))]
['majority']
>>> (c,) = program_constructions({"my-majority": (majority, r"(a|b)*")}, max_len=4)
>>> c.name, is_program(c), [claim.id for claim in c.claims({})]
('my-majority', True, ['network=program', 'program=language', 'network=language', 'operations'])
>>> program_constructions({"my-majority": (majority, 3)})
Traceback (most recent call last):
...
netproof.constructions.rasp.modules.ProgramModuleError: PROGRAMS['my-majority']: the reference is an int; give a Language, an Automaton, a regular expression (str) or a predicate on words (a function of a tuple of symbols)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from netproof.verifier.claims import Automaton, Construction, Language, Word
from netproof.verifier.claims.counting import CounterAutomaton
from netproof.verifier.claims.rasp import brasp, crasp
from netproof.verifier.claims.regular import RegexError, minimal_automaton, regex_automaton

from .claims import program_construction

__all__ = [
    "DEFAULT_MAX_LEN",
    "PROGRAM_IDS",
    "ProgramModuleError",
    "as_language",
    "is_program",
    "program_constructions",
]

DEFAULT_MAX_LEN = 8
"""The word-length bound of a user program's claims when its module sets no ``MAX_LEN``."""

PROGRAM_IDS = ("yang2024brasp", "yang2024crasp")
"""The first part of a compiled program's ``paper_id`` (:func:`~.claims.program_construction`)."""


class ProgramModuleError(ValueError):
    """A module's ``PROGRAMS`` (or ``MAX_LEN``) breaks the contract; the message is one line."""


def is_program(c: Construction) -> bool:
    """Is ``c`` a compiled B-RASP or C-RASP program (a library program or a user module's)?"""
    return c.paper_id.split(".", 1)[0] in PROGRAM_IDS


def _kind(value: object) -> str:
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _regex(program: Any, pattern: str, where: str) -> Language:
    if any(len(s) != 1 for s in program.alphabet):
        raise ProgramModuleError(
            f"{where}: a regular expression reads one-character symbols, and the alphabet {program.alphabet} has "
            "longer ones; give a predicate on words instead (a function of a tuple of symbols)"
        )
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ProgramModuleError(
            f"{where}: the regular expression {pattern!r} does not compile: {exc}; fix it"
        ) from None
    try:
        dfa: Automaton | None = regex_automaton(pattern, program.alphabet)
        why = ""
    except RegexError as exc:
        if "not a symbol of the alphabet" in str(exc):
            raise ProgramModuleError(f"{where}: {exc}") from None
        dfa, why = None, f" (no automaton: {exc}; checked up to the bound only)"
    size = "" if dfa is None else f", a minimal DFA of {dfa.states} states"
    return Language(
        name=f"/{pattern}/",
        alphabet=program.alphabet,
        contains=lambda w: compiled.fullmatch("".join(w)) is not None,
        description=f"the words matching the regular expression {pattern}{size}{why}",
        automaton=dfa,
        counters=None if dfa is None else CounterAutomaton.from_automaton(dfa),
    )


def _automaton(program: Any, dfa: Automaton, where: str) -> Language:
    width = {len(row) for row in dfa.delta}
    if width != {len(program.alphabet)}:
        raise ProgramModuleError(
            f"{where}: the automaton's rows have {sorted(width)} columns, the alphabet {program.alphabet} has "
            f"{len(program.alphabet)} symbols; give one column per symbol, in the alphabet's order"
        )
    index = {s: k for k, s in enumerate(program.alphabet)}
    minimal = minimal_automaton(dfa)
    return Language(
        name=f"DFA({program.name})",
        alphabet=program.alphabet,
        contains=lambda w: dfa.accepts([index[s] for s in w]),
        description=(
            f"the words a {dfa.states}-state automaton accepts (minimal DFA: {minimal.states} states)"
        ),
        automaton=minimal,
        counters=CounterAutomaton.from_automaton(minimal),
    )


def _counter_automaton(program: Any, ca: CounterAutomaton, where: str) -> Language:
    if ca.symbols != len(program.alphabet):
        raise ProgramModuleError(
            f"{where}: the counter automaton reads {ca.symbols} symbols, the alphabet {program.alphabet} has "
            f"{len(program.alphabet)}; number the symbols in the alphabet's order"
        )
    index = {s: k for k, s in enumerate(program.alphabet)}
    return Language(
        name=f"COUNTERS({program.name})",
        alphabet=program.alphabet,
        contains=lambda w: ca.accepts([index[s] for s in w]),
        description=f"the words a counter automaton with counters {', '.join(ca.counters)} accepts",
        counters=ca,
    )


def as_language(
    program: brasp.Program | crasp.Program, reference: object, where: str = "reference"
) -> Language:
    """A program's reference, given as a module may give it (see the module's docstring), as a
    :class:`Language` over the program's alphabet."""
    if isinstance(reference, Language):
        if tuple(reference.alphabet) != tuple(program.alphabet):
            raise ProgramModuleError(
                f"{where}: the language {reference.name} is over {tuple(reference.alphabet)} and program "
                f"{program.name} over {program.alphabet}; give both the same alphabet, in the same order"
            )
        return reference
    if isinstance(reference, Automaton):
        return _automaton(program, reference, where)
    if isinstance(reference, CounterAutomaton):
        return _counter_automaton(program, reference, where)
    if isinstance(reference, str):
        return _regex(program, reference, where)
    if callable(reference):
        predicate: Callable[[Word], bool] = reference
        name = getattr(reference, "__name__", "predicate")
        return Language(
            name=name if name != "<lambda>" else f"reference of {program.name}",
            alphabet=program.alphabet,
            contains=lambda w: bool(predicate(w)),
            description=(getattr(reference, "__doc__", None) or "")
            .strip()
            .split("\n")[0]
            .rstrip(".")
            or f"the words {name} accepts",
        )
    raise ProgramModuleError(
        f"{where}: the reference is {_kind(reference)}; give a Language, an Automaton, a regular expression (str) "
        "or a predicate on words (a function of a tuple of symbols)"
    )


def _entries(programs: object) -> list[tuple[str, str, object]]:
    """(where, name, entry) for each entry of ``PROGRAMS``."""
    if isinstance(programs, (brasp.Program, crasp.Program)):
        raise ProgramModuleError(
            'PROGRAMS is a single Program; write PROGRAMS = {"my-name": program} or PROGRAMS = (program,) '
            "with the trailing comma"
        )
    if isinstance(programs, Mapping):
        out = []
        for key, entry in programs.items():
            if not isinstance(key, str):
                raise ProgramModuleError(
                    f"PROGRAMS has the key {key!r}; its keys are construction names (str), e.g. 'my-contains'"
                )
            out.append((f"PROGRAMS[{key!r}]", key, entry))
        return out
    if isinstance(programs, (tuple, list)):
        out = []
        for idx, entry in enumerate(programs):
            program = entry[0] if isinstance(entry, tuple) and entry else entry
            name = (
                program.name.replace("_", "-")
                if isinstance(program, (brasp.Program, crasp.Program))
                else ""
            )
            out.append((f"PROGRAMS[{idx}]", name, entry))
        return out
    raise ProgramModuleError(
        f"PROGRAMS is {_kind(programs)}; give a dict from construction names to programs "
        "(or to (program, reference) pairs), or a tuple of programs"
    )


def program_constructions(
    programs: object, *, max_len: object = DEFAULT_MAX_LEN
) -> tuple[Construction, ...]:
    """The constructions of a module's ``PROGRAMS``, each program compiled (see the module's
    docstring); refused with :class:`ProgramModuleError`. Names are not checked here (the
    loader checks them as it checks every construction's)."""
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
        raise ProgramModuleError(
            f"MAX_LEN = {max_len!r} must be a whole number >= 1 (the claims' word-length bound), e.g. MAX_LEN = 8"
        )
    entries = _entries(programs)
    if not entries:
        raise ProgramModuleError("PROGRAMS is empty; put at least one program in it")
    found = []
    for where, name, entry in entries:
        program, reference = (
            entry if isinstance(entry, tuple) and len(entry) == 2 else (entry, None)
        )
        if isinstance(entry, tuple) and len(entry) != 2:
            raise ProgramModuleError(
                f"{where} is a tuple of {len(entry)} items; give a program or a pair (program, reference)"
            )
        if not isinstance(program, (brasp.Program, crasp.Program)):
            raise ProgramModuleError(
                f"{where} is {_kind(program)}, not a program; give a brasp.Program or a crasp.Program "
                "(e.g. Program('name', ('a', 'b'), output=...)), or a pair (program, reference)"
            )
        language = None if reference is None else as_language(program, reference, where)
        c = program_construction(name, program, language, max_len=max_len)
        try:
            c.network({})
        except Exception as exc:
            text = str(exc).strip().splitlines()
            raise ProgramModuleError(
                f"{where}: compiling program {program.name!r} failed: {type(exc).__name__}"
                f"{': ' + text[0] if text else ''}"
            ) from None
        found.append(c)
    return tuple(found)
