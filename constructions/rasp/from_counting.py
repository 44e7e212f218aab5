"""Counting temporal logic (K_t[#]) compiled to C-RASP programs, with the formula's own counter
automaton as the reference.

Yang & Chiang 2024 (arXiv:2404.04393, §4: K_t[#] and C-RASP define the same languages) map each
formula of the counting logic onto a C-RASP operation: Q_a is ``token(a)``, ¬ ∧ ∨ are ``~ & |``,
#⃖[φ] is ``count(φ)``, a sum of integer multiples of counts and constants is ``+``, ``k *`` and
an int, and a comparison is ``<`` (``>``, ``<=``, ``>=`` by swapping and negating; ``==`` and
``!=`` by ``.eq`` and ``.ne``). :func:`counting_program` does exactly that, one C-RASP vector
per distinct subformula (equal subformulas are one operation: C-RASP expressions are hashed
structurally). The formula holds at the last position iff the program accepts, and the empty
word is declared (``empty``).

:func:`synthesize_counting` parses a formula, builds the program, and returns it with its
reference: :func:`~netproof.verifier.claims.counting_ltl.counting_language`, membership by the
formula's own evaluator and, for proofs of every length, the counter automaton read off the
formula (:func:`~netproof.verifier.claims.counting_ltl.formula_counters`: counters = the
formula's count terms, control = the last symbol), built without the program. ``netproof
prove`` then proves network = program (the C-RASP compiler's counting lemmas), program =
language (the program's counter automaton against the formula's, an inductive invariant over
integers) and network = language, each for every length where the prover finds the invariant.

May import: its own package's modules and the vocabulary.

>>> syn = synthesize_counting("#(a) > #(b)", ("a", "b"), "majority")
>>> from netproof.verifier.claims.rasp import crasp
>>> print(crasp.show(syn.program))
program majority over {a, b}; accepts the empty word: no
output(i) = #_{j≤i} Q_b(j) < #_{j≤i} Q_a(j)
>>> syn.sizes["counters"], syn.reference.counters.counters
(2, ('n_a', 'n_b'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from netproof.verifier.claims import Language
from netproof.verifier.claims import counting_ltl as K
from netproof.verifier.claims.rasp import crasp as C

from .synth import SpecError

__all__ = [
    "CountingSynthesis",
    "counting_program",
    "module_source",
    "synthesize_counting",
]


def counting_program(
    formula: K.Formula, alphabet: Sequence[str], name: str, *, empty: bool = False
) -> C.Program:
    """The C-RASP program of ``formula`` (see the module docstring)."""
    memo: dict[K.Formula, C.BVec] = {}

    def term(t: K.Term) -> C.CVec:
        out: C.CVec | None = None
        for c, k in t.parts:
            x = C.count(vec(c.arg))
            part = x if k == 1 else k * x
            out = part if out is None else out + part
        if out is None:
            return C.Number(t.const)
        return out + t.const if t.const else out

    def vec(f: K.Formula) -> C.BVec:
        if f in memo:
            return memo[f]
        if isinstance(f, K.Letter):
            out: C.BVec = C.token(f.symbol)
        elif isinstance(f, K.Const):
            out = C.TRUE if f.value else C.FALSE
        elif isinstance(f, K.Not):
            out = ~vec(f.arg)
        elif isinstance(f, K.And):
            out = vec(f.left) & vec(f.right)
        elif isinstance(f, K.Or):
            out = vec(f.left) | vec(f.right)
        else:
            left, right = term(f.left), term(f.right)
            out = {
                "<": lambda: left < right,
                ">": lambda: left > right,
                "<=": lambda: left <= right,
                ">=": lambda: left >= right,
                "==": lambda: left.eq(right),
                "!=": lambda: left.ne(right),
            }[f.op]()
        memo[f] = out
        return out

    return C.Program(name, tuple(alphabet), output=vec(formula), empty=empty)


@dataclass
class CountingSynthesis:
    """What :func:`synthesize_counting` returns: the program, the formula's language (its
    ``counters``: the formula's counter automaton) and the sizes (the formula's syntax-tree
    nodes, its count terms and comparisons, the reference's rules, the program's operations,
    counts and comparisons, the network's sublayers, attention layers, heads and dims)."""

    name: str
    text: str
    alphabet: tuple[str, ...]
    empty: bool
    formula: K.Formula
    program: C.Program
    reference: Language
    sizes: dict[str, int] = field(default_factory=dict)


def network_sizes(program: C.Program) -> dict[str, int]:
    """The program's operations, counts and comparisons, and its compiled network's sublayers,
    attention layers, heads and residual dims."""
    from netproof.symbolic import AttentionLayer

    from .compile_crasp import compile_crasp

    ops = C.operations(program.output)
    net = compile_crasp(program)
    attn = [s.block for s in net.layers if isinstance(s.block, AttentionLayer)]
    return {
        "program_ops": sum(not isinstance(op, (C.Token, C.Truth, C.Number)) for op in ops),
        "counts": sum(isinstance(op, C.Count) for op in ops),
        "comparisons": sum(isinstance(op, C.Less) for op in ops),
        "sublayers": len(net.layers),
        "layers": len(attn),
        "heads": sum(len(a.heads) for a in attn),
        "dims": len(net.dims),
    }


def synthesize_counting(
    text: str, alphabet: Sequence[str], name: str = "synth", *, empty: bool = False
) -> CountingSynthesis:
    """The C-RASP program of the counting formula ``text`` and its reference (see the module
    docstring); :class:`~.synth.SpecError` (one line) for a formula or name that cannot be
    read."""
    import re

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
        raise SpecError(f"name {name!r} must be letters, digits, _ and - (starting with a letter)")
    alphabet = tuple(alphabet)
    try:
        formula = K.parse_counting(text, alphabet)
    except K.CountingError as exc:
        raise SpecError(str(exc)) from None
    program = counting_program(formula, alphabet, name.replace("-", "_"), empty=empty)
    reference = K.counting_language(formula, alphabet, empty, name=f"K_t[#]({text})")
    assert reference.counters is not None
    sizes = {
        "spec_size": K.size(formula),
        "counters": len(K.counts(formula)),
        "reference_rules": len(reference.counters.rules),
        **network_sizes(program),
    }
    return CountingSynthesis(name, text, alphabet, empty, formula, program, reference, sizes)


def module_source(syn: CountingSynthesis, spec_line: str) -> str:
    """A user program module defining ``PROGRAMS = {name: (program, reference)}``: the program
    written as the vocabulary's constructors, the reference rebuilt from the formula's text
    (its evaluator and its counter automaton)."""
    return (
        f'"""Synthesized by `netproof synth` from {spec_line}: '
        f'`netproof prove THIS.py:{syn.name}`."""\n\n'
        "from netproof.verifier.claims.counting_ltl import counting_language, parse_counting\n"
        "from netproof.verifier.claims.rasp.crasp import (  # noqa: F401\n"
        "    Add,\n    And,\n    Count,\n    Less,\n    Not,\n    Number,\n    Or,\n"
        "    Program,\n    Scale,\n    Token,\n    Truth,\n    Where,\n)\n\n"
        f"FORMULA = {syn.text!r}\n"
        f"ALPHABET = {syn.alphabet!r}\n\n"
        f"PROGRAM = {syn.program!r}\n\n"
        "REFERENCE = counting_language(\n"
        f"    parse_counting(FORMULA, ALPHABET), ALPHABET, {syn.empty!r}, name={f'K_t[#]({syn.text})'!r}\n"
        ")\n\n"
        f"PROGRAMS = {{{syn.name!r}: (PROGRAM, REFERENCE)}}\n"
    )
