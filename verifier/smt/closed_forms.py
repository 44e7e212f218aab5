"""Closed forms of value claims (:attr:`~netproof.verifier.claims.ValueIs.closed_form`): their
vocabulary (``n``, ``t``, ``i``, ``#a``, ``wj=a``), their value on a concrete word
(:func:`closed_form_at`), their z3 term at a symbolic position (:func:`closed_form_term`, shared
by the monolithic encoding, the abstracted network and position classes), and a solver's
counterexample to a closed-form claim replayed exactly (:func:`replay_value`).

May import: :mod:`netproof.symbolic` (its exact interpreter inside functions), the claims
vocabulary, :mod:`netproof.verifier.smt.errors`, and exhaustive checking inside a function (a
claim's own check of a word); sympy inside functions, z3 handed in as an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic import render
from netproof.verifier.claims import Point, Refuted, ValueIs, Word
from netproof.verifier.smt.errors import EncoderBugError, Unsupported

CLOSED_FORM_SYMBOLS = ("n", "t", "i")
"""The position symbols a :attr:`ValueIs.closed_form` may use, besides ``#a`` (the count of
symbol ``a`` in the word) and ``wj=a`` (1 if the word's j-th symbol, from 1, is ``a``, else 0)."""


def _indicator(name: str, alphabet: Sequence[str]) -> tuple[int, str] | None:
    """``wj=a`` as (j, a), or None."""
    head, eq, a = name.partition("=")
    if eq and head[:1] == "w" and head[1:].isdigit() and int(head[1:]) >= 1 and a in alphabet:
        return int(head[1:]), a
    return None


def closed_form_at(expr: Any, alphabet: Sequence[str], word: Word, t: int, i: int, n: int) -> Any:
    """A closed form's value on a concrete word at token ``t`` (a sympy number)."""
    import sympy

    subs: dict[Any, Any] = {sympy.Symbol("n"): n, sympy.Symbol("t"): t, sympy.Symbol("i"): i}
    subs.update({sympy.Symbol(f"#{a}"): sum(1 for x in word if x == a) for a in alphabet})
    for sym in expr.free_symbols:
        got = _indicator(sym.name, alphabet)
        if got is not None:
            j, a = got
            subs[sym] = int(len(word) >= j and word[j - 1] == a)
    return sympy.nsimplify(expr.xreplace({k: sympy.Integer(v) for k, v in subs.items()}))


def closed_form_term(
    z3: Any,
    ctx: Any,
    expr: Any,
    alphabet: Sequence[str],
    position: tuple[Any, Any, Any],
    count: Callable[[str], Any],
    indicator: Callable[[int, str], Any],
) -> Any:
    """A closed form at one token of a symbolic word, as a z3 Real term: ``position`` is
    ``(t, i, n)`` (ints, or z3 Real terms for a symbolic position or length), ``count(a)`` the
    Real term counting symbol ``a``, ``indicator(j, a)`` the Real 0/1 term "the j-th symbol is
    a" (0 past the word's end)."""
    import sympy

    names = ("t", "i", "n")
    fixed = {
        sympy.Symbol(k): sympy.Integer(v)
        for k, v in zip(names, position, strict=True)
        if isinstance(v, int)
    }
    terms = {k: v for k, v in zip(names, position, strict=True) if not isinstance(v, int)}

    def num(q: Fraction) -> Any:
        return z3.RealVal(str(q), ctx)

    def go(e: Any) -> Any:
        if e is sympy.true or e is sympy.false:
            return z3.BoolVal(bool(e), ctx)
        if e.is_Number:
            if e.is_Float:
                raise Unsupported(
                    f"the closed form has the float {e}; write it as a sympy.Rational (exact)"
                )
            if not e.is_Rational:
                raise Unsupported(f"the closed form has the irrational number {e}")
            return num(Fraction(int(e.p), int(e.q)))
        if e.is_Symbol:
            if e.name in terms:
                return terms[e.name]
            if e.name.startswith("#") and e.name[1:] in alphabet:
                return count(e.name[1:])
            got = _indicator(e.name, alphabet)
            if got is not None:
                return indicator(*got)
            raise Unsupported(
                f"the closed form names {e.name!r}; it may use n, t, i, #a and wj=a for a in {list(alphabet)}"
            )
        if isinstance(e, sympy.Add):
            return z3.Sum([go(a) for a in e.args])
        if isinstance(e, sympy.Mul):
            out = go(e.args[0])
            for a in e.args[1:]:
                out = out * go(a)
            return out
        if isinstance(e, sympy.Pow) and e.exp.is_Integer:
            base, k = go(e.base), int(e.exp)
            power = num(Fraction(1))
            for _ in range(abs(k)):
                power = power * base
            return power if k >= 0 else num(Fraction(1)) / power
        if isinstance(e, sympy.Piecewise):
            out = None
            for value, cond in reversed(e.args):
                v = go(value)
                out = v if out is None or cond is sympy.true else z3.If(go(cond), v, out)
            return out
        relations: dict[Any, Callable[[Any, Any], Any]] = {
            sympy.Eq: lambda a, b: a == b,
            sympy.Ne: lambda a, b: a != b,
            sympy.Lt: lambda a, b: a < b,
            sympy.Le: lambda a, b: a <= b,
            sympy.Gt: lambda a, b: a > b,
            sympy.Ge: lambda a, b: a >= b,
        }
        for kind, make in relations.items():
            if isinstance(e, kind):
                return make(go(e.lhs), go(e.rhs))
        if isinstance(e, sympy.And):
            return z3.And([go(a) for a in e.args])
        if isinstance(e, sympy.Or):
            return z3.Or([go(a) for a in e.args])
        if isinstance(e, sympy.Not):
            return z3.Not(go(e.args[0]))
        raise Unsupported(f"the closed form uses {type(e).__name__} ({e}), which is not encoded")

    return go(expr.xreplace(fixed))


def replay_value(
    net: Any, claim: ValueIs, alphabet: Sequence[str], word: Word, method: str
) -> Refuted:
    """The refutation of ``claim`` on ``word`` (a solver's counterexample), replayed with the
    exact interpreter against the claim's ``expected``. A word on which the network agrees with
    ``expected`` is an encoder bug (:class:`EncoderBugError`), unless the closed form itself
    disagrees with ``expected`` there (a :class:`ValueError` naming the claim)."""
    from netproof.symbolic.exact import run
    from netproof.verifier.exhaustive.checker import value_is_body

    trace = run(net, word)
    refuted = value_is_body(claim, alphabet, method, None)(word, trace)
    if isinstance(refuted, Refuted):
        return refuted
    for t in range(trace.n):
        point = Point(word, t, trace.positions[t], trace.n)
        wanted = claim.expected(point)
        if (
            wanted is not None
            and closed_form_at(claim.closed_form, alphabet, word, t, point.i, point.n) != wanted
        ):
            raise ValueError(
                f"claim {claim.id}: its closed_form {claim.closed_form} and its expected disagree on "
                f"{render(alphabet, word)!r} at token {t}; fix the claim's declaration"
            )
    raise EncoderBugError(
        f"z3 says the value of {render(alphabet, word)!r} (length {len(word)}) differs from claim {claim.id}'s closed form, "
        "but the exact interpreter agrees with it: the SMT encoding is wrong; please report this with the network file"
    )


__all__ = ["CLOSED_FORM_SYMBOLS", "closed_form_at", "closed_form_term", "replay_value"]
