"""Why a claim has no proof for every length: :func:`every_length_route` names what the claim
lacks (no encoder for its kind, a reference without an automaton), or None where some method
can prove it for every length. ``prove --method best`` (:mod:`.strongest`) and the ledger
(:mod:`.ledger`, its section of claims proved within a bound only) both ask it.

May import the vocabulary and the SMT engine (lazily).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netproof.verifier.claims import Claim, Construction

__all__ = ["every_length_route"]


def every_length_route(
    claim: Claim, c: Construction | None = None, values: Mapping[str, Any] | None = None
) -> str | None:
    """None where some method can prove ``claim`` for every length (the smt method covers it, or
    its own check decides every length), else why not: what the claim lacks, or, given its
    construction ``c`` (with parameters ``values``), what the construction lacks: a recognition
    or value claim is proved for every length only over a construction's block lemmas, and a
    family with a network per length has no one network to prove it of."""
    from netproof.verifier.claims import (
        BlockIdentity,
        ExactFact,
        ForAll,
        Identity,
        MirrorInvariant,
        Recognizes,
        TraceProperty,
        ValueIs,
    )
    from netproof.verifier.smt.prove import smt_applicable

    if isinstance(claim, (BlockIdentity, ForAll, Identity, MirrorInvariant)):
        return None  # unbounded statements, or structural for every word
    if isinstance(claim, ExactFact) and claim.every_length:
        return None
    if smt_applicable(claim):
        if c is not None and isinstance(claim, (Recognizes, ValueIs)):
            if c.per_length:
                return (
                    f"no route: {c.name} is a network per word length, so the smt method proves "
                    "it one length at a time"
                )
            declared = c.lemmas({} if values is None else values) if c.lemmas is not None else ()
            if not declared:
                return (
                    f"no route: {c.name} declares no block lemmas, so the smt method proves it one "
                    "length at a time (its proofs for every length start from lemmas)"
                )
        return None
    kind = type(claim).__name__
    if isinstance(claim, ExactFact):
        if claim.words:
            return (
                "no encoder: its reference language has no automaton or counter automaton to compare the "
                "program's with (give the reference as a regular expression, an Automaton or a CounterAutomaton)"
            )
        return None  # a fact about numbers: no words, no lengths
    if isinstance(claim, TraceProperty):
        return "no encoder: a TraceProperty without a form the smt method states (TraceProperty.statable)"
    if isinstance(claim, ValueIs):
        return (
            "no encoder: a ValueIs without a closed form (ValueIs.closed_form)"
            if claim.closed_form is None
            else f"no encoder: a ValueIs checked with the {claim.backend} backend"
        )
    if isinstance(claim, Recognizes):
        return f"no encoder: a {kind} claim whose language has no automaton, stack or counter automaton"
    return f"no encoder for {kind} claims"
