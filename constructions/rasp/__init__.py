"""B-RASP and C-RASP programs compiled to exact networks, with their claims and a library.

- :mod:`.compile_brasp`: B-RASP to masked hardmax heads and ReLU gate FFNs;
- :mod:`.compile_crasp`: C-RASP to uniform causal attention and the layer-norm sign trick;
- :mod:`.claims`: network = program, operations, program = language and no-ties claims;
- :mod:`.brasp_lemmas`: a past-only B-RASP program's automaton and the block lemmas of a compiled
  B-RASP program (for proofs of every length);
- :mod:`.from_ltl`: LTL formulas compiled to B-RASP programs (:func:`ltl_program`);
- :mod:`.library`: the spec's example programs, registered as :data:`CONSTRUCTIONS`;
- :mod:`.modules`: a user module's ``PROGRAMS`` as constructions (:func:`program_constructions`).

The languages themselves (programs, interpreters, printers) are vocabulary:
:mod:`netproof.verifier.claims.rasp`.

May import: its own modules, the IR and the vocabulary; never an interpreter.
"""

from __future__ import annotations

from .claims import brasp_claims, crasp_claims, program_construction, words_upto
from .compile_brasp import compile_brasp
from .compile_crasp import compile_crasp
from .from_ltl import ltl_program
from .library import BRASP_PROGRAMS, CONSTRUCTIONS, CRASP_PROGRAMS, REFERENCE_LANGUAGES
from .modules import (
    DEFAULT_MAX_LEN,
    ProgramModuleError,
    as_language,
    is_program,
    program_constructions,
)

__all__ = [
    "BRASP_PROGRAMS",
    "CONSTRUCTIONS",
    "CRASP_PROGRAMS",
    "DEFAULT_MAX_LEN",
    "REFERENCE_LANGUAGES",
    "ProgramModuleError",
    "as_language",
    "brasp_claims",
    "compile_brasp",
    "compile_crasp",
    "crasp_claims",
    "is_program",
    "ltl_program",
    "program_construction",
    "program_constructions",
    "words_upto",
]
