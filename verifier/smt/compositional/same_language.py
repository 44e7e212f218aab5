"""Two languages of counts compared for every length: their counter automata run side by side.

A :class:`~netproof.verifier.claims.SameLanguage` (the statable form of an
:class:`~netproof.verifier.claims.ExactFact`) says that two languages, each with a
:class:`~netproof.verifier.claims.counting.CounterAutomaton`, have the same words. Both automata
read the same symbol at each step: their product is a :class:`.counters.CounterSystem` whose
state is the two control states (``left.q``, ``right.q``; −1 once no rule applies: the word is
rejected whatever follows) and the two automata's counters (``left.c.<name>``,
``right.c.<name>``), with a bad state wherever exactly one of them accepts. An inductive
invariant that excludes every bad state (the candidate facts of :func:`.counters.houdini`, else
Spacer) and its three certificate queries (initiation, consecution, safety, in QF_LIA, each
unsat) prove that the two accept the same words of every length. Before the invariant is
looked for, a shortest word up to the claim's bound on which the automata differ is looked for
by unrolling (one query per length), and replayed with both languages' membership tests: it
refutes the claim only where the tests differ too (a word on which only the automata differ says
that an automaton is not its language's, and the claim is unknown).

What is proved is about the two counter automata: each stands for its language, as
:class:`~netproof.verifier.claims.Language` requires of its ``counters`` (a C-RASP program's
automaton is read off the program, :func:`netproof.constructions.rasp.crasp_lemmas.program_counters`;
the tests compare each with its membership test on every short word).

- :func:`product_system`: the product of two counter automata;
- :func:`prove_same_language`: the claim for every length (or refuted by a word, or unknown);
- :func:`rebuild_same_language`: its certificate rebuilt around a recorded invariant, for the
  proof log's freshness check;
- :func:`same_language_detail`: the detail of a proof.

May import: :mod:`netproof.symbolic` (to print a word), the claims vocabulary, the solver interface and
:mod:`.counters`; z3 inside functions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from netproof.symbolic import render
from netproof.verifier import smtlib
from netproof.verifier.claims import ExactFact, Proved, Refuted, SameLanguage, Unknown
from netproof.verifier.claims.counting import CounterAutomaton
from netproof.verifier.smtlib import Outcome, SmtQuery, to_smt2

from .counters import (
    CERTIFICATE,
    HOWS,
    LOGIC,
    CounterSystem,
    certificate,
    guard_term,
    houdini,
    read_invariant,
    spacer,
    unroll_search,
)

__all__ = [
    "METHOD",
    "product_system",
    "prove_same_language",
    "query_names",
    "rebuild_same_language",
    "same_language_detail",
    "words_covered",
]

METHOD = "smt (z3)"
"""The method a verdict of :func:`prove_same_language` names."""

SIDES = ("left", "right")

_REASONS = {
    "initiation": "the invariant holds before the first symbol",
    "consecution": "reading one more symbol keeps the invariant",
    "safety": "no state of the invariant has one automaton accepting and the other not",
}


def query_names(claim_id: str) -> list[str]:
    """The names of a proof's three certificate queries, in order."""
    return [f"{claim_id} every n: {name}" for name in CERTIFICATE]


def product_system(left: CounterAutomaton, right: CounterAutomaton) -> CounterSystem:
    """The two automata reading one symbol per step (see the module docstring)."""
    import z3

    if left.symbols != right.symbols:
        raise ValueError(
            f"the counter automata read {left.symbols} and {right.symbols} symbols; compare automata over one alphabet"
        )
    ctx = z3.Context()
    sym = z3.Int("sym", ctx)
    state: list[Any] = []
    primed: list[Any] = []
    init: list[Any] = []
    trans: list[Any] = [sym >= 0, sym < left.symbols]
    members: list[Any] = []
    atoms: list[Any] = []
    for side, aut in zip(SIDES, (left, right), strict=True):
        q, q1 = z3.Int(f"{side}.q", ctx), z3.Int(f"{side}.q.next", ctx)
        c = [z3.Int(f"{side}.c.{n}", ctx) for n in aut.counters]
        c1 = [z3.Int(f"{side}.c.{n}.next", ctx) for n in aut.counters]
        nq, nc = z3.IntVal(-1, ctx), list(c)  # the first rule that applies, else dead (q = -1)
        for r in reversed(aut.rules):
            fire = z3.And(q == r.state, sym == r.symbol, guard_term(z3, ctx, r.guard, c))
            nq = z3.If(fire, z3.IntVal(r.target, ctx), nq)
            nc = [z3.If(fire, x + r.add[i], y) for i, (x, y) in enumerate(zip(c, nc, strict=True))]
        trans += [q1 == nq, *(x1 == x for x1, x in zip(c1, nc, strict=True))]
        state += [q, *c]
        primed += [q1, *c1]
        init += [q == aut.start, *(x == 0 for x in c)]
        members.append(
            z3.And(
                q >= 0,
                z3.Or(
                    [
                        z3.BoolVal(False, ctx),
                        *(z3.And(q == s, guard_term(z3, ctx, g, c)) for s, g in aut.accepting),
                    ]
                ),
            )
        )
        atoms += [guard_term(z3, ctx, (atom,), c) for r in aut.rules for atom in r.guard]
        atoms += [guard_term(z3, ctx, (atom,), c) for _s, g in aut.accepting for atom in g]
    bad = members[0] != members[1]
    seen: dict[int, Any] = {}
    for a in atoms:
        a = z3.simplify(a)
        if not (z3.is_true(a) or z3.is_false(a)):
            seen.setdefault(a.get_id(), a)
    return CounterSystem(
        z3,
        ctx,
        state,
        primed,
        z3.And(init),
        z3.And(trans),
        bad,
        z3.BoolVal(True, ctx),
        bad,
        sym,
        list(seen.values()),
        control=tuple(f"{side}.q" for side in SIDES),
    )


def same_language_detail(statable: SameLanguage, max_len: int, how: str) -> str:
    """The detail of a proof for every length."""
    return (
        f"every word with 0 <= |w| <= {max_len}, and every longer one: {statable.left.name}'s counter automaton and "
        f"{statable.right.name}'s, read side by side (their product), an inductive invariant ({how}) and its three queries "
        f"({', '.join(CERTIFICATE)}), each unsat"
    )


def _words(alphabet: tuple[str, ...], max_len: int) -> int:
    return sum(len(alphabet) ** m for m in range(max_len + 1))


def _check(statable: SameLanguage) -> str | None:
    """Why the smt method cannot state the claim (None where it can)."""
    left, right = statable.left, statable.right
    missing = [lang.name for lang in (left, right) if lang.counters is None]
    if missing:
        return f"unsupported: {', '.join(missing)} has no CounterAutomaton (Language.counters)"
    if left.alphabet != right.alphabet:
        return f"unsupported: {left.name} is over {left.alphabet}, {right.name} over {right.alphabet}; compare languages over one alphabet"
    return None


def _replayed(statable: SameLanguage, word: tuple[str, ...]) -> Refuted | Unknown:
    left, right = statable.left, statable.right
    a, b = left.contains(word), right.contains(word)
    shown = render(left.alphabet, word) or "ε"
    if a == b:
        return Unknown(
            METHOD,
            (
                f"the counter automata differ on {shown!r}, but {left.name} and {right.name} both {'accept' if a else 'reject'} it: "
                "an automaton is not its language's (Language.counters must be the same language as contains)"
            ),
        )
    return Refuted(
        METHOD,
        (
            f"{shown!r} is {'in' if a else 'not in'} {left.name} but {'in' if b else 'not in'} {right.name}; "
            "found by z3 on their counter automata, replayed with both membership tests"
        ),
        word,
        {},
    )


def prove_same_language(claim: ExactFact, *, timeout: float = 60.0) -> Outcome:
    """The claim's :class:`SameLanguage` form for every length (see the module docstring), with
    the claim's ``max_len`` as the bound of the search for a word on which the two differ."""
    started = time.perf_counter()
    statable = claim.statable
    if statable is None:
        return Outcome(
            Unknown(
                METHOD,
                f"unsupported: {claim.id} has no form the smt method states (ExactFact.statable)",
            )
        )
    why = _check(statable)
    if why is not None:
        return Outcome(Unknown(METHOD, why))
    left, right = statable.left.counters, statable.right.counters
    assert left is not None and right is not None
    system = product_system(left, right)
    symbols = len(statable.left.alphabet)
    # a word up to the bound first (quick: one unrolling per length), then an invariant
    found, unrolled = unroll_search(system, 0, claim.max_len, max(1.0, timeout / 4))
    if found is not None:
        return Outcome(_replayed(statable, tuple(statable.left.alphabet[a] for a in found)))
    how = HOWS[0]
    status, inv = houdini(
        system, 0, max(1.0, (timeout - (time.perf_counter() - started)) / 2), symbols
    )
    if status != "safe":
        how = HOWS[1]
        status, inv = spacer(system, max(1.0, timeout - (time.perf_counter() - started)))
    if status == "unsafe":
        return Outcome(
            Unknown(
                METHOD,
                (
                    f"the counter automata differ on some word longer than {claim.max_len} (Spacer), none found up to that length; "
                    "raise the claim's bound to find it"
                )
                if unrolled
                else (
                    f"the counter automata differ on some word (Spacer); the unrolling up to length {claim.max_len} "
                    "got no answer in time, so where is not known"
                ),
            )
        )
    if status != "safe":
        return Outcome(
            Unknown(
                METHOD,
                f"no inductive invariant found ({inv}) after {time.perf_counter() - started:.1f} s",
            )
        )
    # The certificate in a fresh system around the invariant read back from its printed
    # initiation query, as the rebuild does, so that the texts are the rebuild's (twice: a
    # term's printed form depends on the order its context made terms in).
    for _ in range(2):
        text = to_smt2(certificate(system, inv)[0][1], logic=LOGIC)
        system = product_system(left, right)
        inv = read_invariant(system, text)
    queries: list[SmtQuery] = []
    for name, (part, solver) in zip(query_names(claim.id), certificate(system, inv), strict=True):
        text = to_smt2(solver, logic=LOGIC)
        began = time.perf_counter()
        answer, reason, _model = smtlib.check(
            solver, timeout=max(60.0, timeout - (began - started))
        )
        if answer != "unsat":
            return Outcome(
                Unknown(
                    METHOD,
                    f"the invariant was found ({how}), but its query {part!r} was {answer} ({reason or 'not unsat'})",
                )
            )
        queries.append(
            SmtQuery(
                name=name,
                smt2=text,
                result="unsat",
                reason=_REASONS[part],
                seconds=time.perf_counter() - began,
            )
        )
    detail = same_language_detail(statable, claim.max_len, how)
    return Outcome(
        Proved(METHOD, _words(statable.left.alphabet, claim.max_len), detail), tuple(queries)
    )


def rebuild_same_language(claim: ExactFact, recorded: Mapping[str, str]) -> dict[str, str]:
    """The certificate queries of a proof of ``claim``, by name, rebuilt around the invariant
    read back from the recorded initiation query (``recorded``: query name -> text); ValueError
    where the claim has no statable form, or the recorded text holds no invariant."""
    statable = claim.statable
    if statable is None or _check(statable) is not None:
        raise ValueError(
            f"{claim.id} has no form the smt method proves for every length ({'no statable form' if statable is None else _check(statable)})"
        )
    first = query_names(claim.id)[0]
    if first not in recorded:
        raise ValueError(f"the record has no query {first!r}")
    left, right = statable.left.counters, statable.right.counters
    assert left is not None and right is not None
    system = product_system(left, right)
    out = {}
    for name, (_part, solver) in zip(
        query_names(claim.id),
        certificate(system, read_invariant(system, recorded[first])),
        strict=True,
    ):
        out[name] = to_smt2(solver, logic=LOGIC)
    return out


def words_covered(statable: SameLanguage, max_len: int) -> int:
    """The number of words up to ``max_len`` (a proof's ``checked``)."""
    return _words(statable.left.alphabet, max_len)
