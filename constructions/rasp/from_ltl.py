"""LTL formulas compiled to B-RASP programs: the constructive direction of Yang, Chiang & Angluin
2024 ("Masked hard-attention transformers recognize exactly the star-free languages": every LTL
formula has a B-RASP program, by induction on the formula), for the LTL of
:mod:`netproof.verifier.claims.ltl`.

Each distinct subformula becomes one B-RASP vector (a subformula written twice is computed
once), with the formula's value at every position:

- a symbol a is Q_a, ⊤ and ⊥ the constants, and ¬, ∧, ∨, → position-wise operations;
- φ S ψ (strict since) is ▷_j [j < i, ¬φ(j) ∨ ψ(j)] ψ(j) : 0. The rightmost earlier j where φ
  fails or ψ holds is the only candidate: if ψ holds there, φ holds (and ψ fails) at every
  position between it and i, so φ S ψ holds; if not, φ fails there, so no ψ-position at or
  before it can be extended to i, and none after it exists; if no such j, no earlier ψ. So the
  value ψ(j*) is φ S ψ (default 0: no j);
- φ U ψ (strict until) is its mirror, ◁_j [j > i, ¬φ(j) ∨ ψ(j)] ψ(j) : 0;
- Y φ = ▷_j [j < i, 1] φ(j) : 0 and X φ = ◁_j [j > i, 1] φ(j) : 0 (the nearest position);
- O φ = φ ∨ ▷_j [j < i, φ(j)] 1 : 0, H φ = φ ∧ ▷_j [j < i, ¬φ(j)] 0 : 1, and F φ, G φ the mirrors
  with ◁_j and j > i (O, H, F, G include the current position, as in the LTL module).

The program's output is the formula's vector, so it accepts a non-empty word iff the formula
holds at the last position: the LTL module's language, the empty word's membership given by
``empty``. Every attention operation's score reads only the key position j, so each compiled
head gets a selection lemma (:func:`.brasp_lemmas.brasp_lemmas`).

May import: the vocabulary (the B-RASP and LTL modules).

>>> from netproof.verifier.claims.ltl import parse_ltl
>>> from netproof.verifier.claims.rasp import brasp as B
>>> program = ltl_program(parse_ltl("H(b -> !O c)", ("a", "b", "c")), ("a", "b", "c"), "no_b_after_c")
>>> print(B.show(program))
program no_b_after_c over {a, b, c}; accepts the empty word: no
once1(i) = ▷_j [j < i, Q_c(j)] 1 : 0
hist2(i) = ▷_j [j < i, ¬(¬Q_b(j) ∨ ¬(Q_c(j) ∨ once1(j)))] 0 : 1
output(i) = (¬Q_b(i) ∨ ¬(Q_c(i) ∨ once1(i))) ∧ hist2(i)
>>> [B.accepts(program, w) for w in ("ab", "acb", "bca", "")]
[True, False, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence

from netproof.verifier.claims import ltl as L
from netproof.verifier.claims.rasp import brasp as B

__all__ = ["ltl_program"]

_NAMES = {
    L.Yesterday: "yesterday",
    L.Since: "since",
    L.Once: "once",
    L.Historically: "hist",
    L.Next: "next",
    L.Until: "until",
    L.Eventually: "event",
    L.Always: "always",
}


def ltl_program(
    formula: L.Formula, alphabet: Sequence[str], name: str, empty: bool = False
) -> B.Program:
    """The B-RASP program of ``formula`` over ``alphabet`` (see the module docstring): it accepts
    a non-empty word iff ``formula`` holds at its last position, the empty word iff ``empty``.
    Each temporal subformula's vector is named after its operator and a number (``since3``)."""
    sigma = tuple(alphabet)
    vec: dict[L.Formula, B.BVec] = {}
    count = 0
    for f in L.subformulas(formula):
        if isinstance(f, L.Atom):
            if f.symbol not in sigma:
                raise ValueError(
                    f"the formula {L.show(formula)!r} reads {f.symbol!r}, not a symbol of the "
                    f"alphabet {sigma}; use the alphabet's symbols"
                )
            vec[f] = B.token(f.symbol)
            continue
        if isinstance(f, L.Const):
            vec[f] = B.TRUE if f.value else B.FALSE
            continue
        if isinstance(f, L.Not):
            vec[f] = ~vec[f.arg]
            continue
        if isinstance(f, L.And):
            vec[f] = vec[f.left] & vec[f.right]
            continue
        if isinstance(f, L.Or):
            vec[f] = vec[f.left] | vec[f.right]
            continue
        if isinstance(f, L.Implies):
            vec[f] = vec[f.left].implies(vec[f.right])
            continue
        count += 1
        label = f"{_NAMES[type(f)]}{count}"
        vec[f] = _temporal(f, vec, label)
    return B.Program(name, sigma, output=vec[formula], empty=empty)


def _temporal(f: L.Formula, vec: dict[L.Formula, B.BVec], label: str) -> B.BVec:
    """The B-RASP vector of a temporal subformula, its operands' vectors in ``vec``, its
    attention operation named ``label``."""
    if isinstance(f, (L.Since, L.Until)):
        phi, psi = vec[f.left], vec[f.right]
        attend = B.rightmost if isinstance(f, L.Since) else B.leftmost
        mask = "past" if isinstance(f, L.Since) else "future"
        return attend(mask, score=(~phi | psi).at_j, value=psi.at_j, default=B.FALSE).named(label)
    if isinstance(f, L.Yesterday):
        return B.rightmost("past", score=B.TRUE, value=vec[f.arg].at_j).named(label)
    if isinstance(f, L.Next):
        return B.leftmost("future", score=B.TRUE, value=vec[f.arg].at_j).named(label)
    if isinstance(f, (L.Once, L.Eventually)):
        phi = vec[f.arg]
        look = (
            B.rightmost("past", score=phi.at_j, value=B.TRUE, default=B.FALSE)
            if isinstance(f, L.Once)
            else B.leftmost("future", score=phi.at_j, value=B.TRUE, default=B.FALSE)
        )
        return phi | look.named(label)
    if isinstance(f, (L.Historically, L.Always)):
        phi = vec[f.arg]
        look = (
            B.rightmost("past", score=(~phi).at_j, value=B.FALSE, default=B.TRUE)
            if isinstance(f, L.Historically)
            else B.leftmost("future", score=(~phi).at_j, value=B.FALSE, default=B.TRUE)
        )
        return phi & look.named(label)
    raise TypeError(f"{f!r} is not a temporal LTL formula")
