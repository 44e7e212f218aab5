"""Bounded proofs with z3 over the whole network (the monolithic encoding,
:class:`netproof.verifier.smt.encoder.Encoder`): one query per word length.

:class:`~netproof.verifier.claims.Recognizes` against a language with an
:class:`~netproof.verifier.claims.Automaton` (the symbolic encoding of the language: a DFA run
over the word variables): one query ``accept ≠ member`` per length (:func:`recognition_query`),
``unsat`` for every length = proved (:func:`recognizes_smt`). A ``sat`` model is a
counterexample word: it is replayed through the exact interpreter (an encoder whose
counterexample the exact interpreter does not reproduce raises
:class:`~netproof.verifier.smt.errors.EncoderBugError`), and shrunk to the shortlex-first
counterexample of the shortest length (lengths are tried in increasing order, then symbols fixed
left to right, smallest first). :class:`~netproof.verifier.claims.ValueIs` with a closed form:
one query per length, "the value differs from the closed form somewhere" (:func:`value_query`,
:func:`value_is_smt`, which also runs the compositional prover's per-length queries).

Every query is kept as an :class:`~netproof.verifier.smtlib.SmtQuery` with its SMT-LIB2 text
(:func:`netproof.verifier.smtlib.to_smt2`, which cvc5 accepts) for the proof log.

May import: :mod:`netproof.symbolic` (its exact interpreter inside functions), the claims
vocabulary, the solver interface (:mod:`netproof.verifier.smtlib`), and
:mod:`netproof.verifier.smt.errors`, :mod:`~netproof.verifier.smt.encoder` and
:mod:`~netproof.verifier.smt.closed_forms`; z3 inside functions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

from netproof.symbolic import Network, TokenEmbedding, render
from netproof.verifier import smtlib
from netproof.verifier.claims import Language, Output, Proved, Refuted, Unknown, ValueIs, Word
from netproof.verifier.smt.closed_forms import closed_form_term, replay_value
from netproof.verifier.smt.encoder import Encoder
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smtlib import Outcome, SmtQuery, SmtResult

if TYPE_CHECKING:
    from netproof.verifier.exhaustive.checker import Job


@dataclass(frozen=True, slots=True)
class RecognitionQuery:
    """The query "some word of length ``m`` is misclassified", built but not yet solved."""

    m: int
    solver: Any
    encoder: Encoder
    logic: str | None

    @property
    def name(self) -> str:
        return f"n={self.m}"


def recognition_query(
    net: Network, language: Language, m: int, *, word: str = "int", hardmax: str = "max"
) -> RecognitionQuery:
    """Encode "the network's accept bit differs from membership in ``language``" over the words
    of length ``m``; raises :class:`Unsupported` for what the encoder does not cover. ``word``:
    ``int`` (one integer per position: the default; measured on Dyck(2,2), n = 6 and 8, z3
    took 1.5x to 2x longer with ``onehot``) or ``onehot`` (one Bool per position and symbol).
    ``hardmax``: ``max`` (a variable for the maximum score: the default) or ``pairwise`` (each
    selection as comparisons with every other score: 2x slower at n = 8). See
    ``benchmarks/smt_encodings.py``."""
    import z3

    if not isinstance(net, Network):
        raise Unsupported(
            f"{net.name!r} is a {type(net).__name__}; the encoder covers encoder-style Networks only"
        )
    machine = language.automaton if language.automaton is not None else language.stack
    if machine is None:
        raise Unsupported(
            f"the language {language.name} has no symbolic encoding (an Automaton); give its "
            "Language an automaton= to prove it with SMT"
        )
    if tuple(language.alphabet) != tuple(net.alphabet):
        raise Unsupported(
            f"the language's alphabet {language.alphabet} is not the network's {net.alphabet} in the same order"
        )
    ctx = z3.Context()
    enc = Encoder(z3, ctx, net, m, word, hardmax)
    logit = enc.logit()
    member = enc.member(machine)
    accept = z3.BoolVal(logit > 0, ctx) if isinstance(logit, Fraction) else enc.term(logit) > 0
    solver = z3.Solver(ctx=ctx)
    for a in enc.assertions:
        solver.add(a)
    solver.add(accept != member)
    return RecognitionQuery(m, solver, enc, None)


def logit_on(net: Network, word: Word) -> tuple[SmtResult, SmtResult]:
    """The encoding's self-check on one concrete word (for tests): with the word variables
    fixed to ``word``, is "logit = the exact interpreter's logit" ``sat`` (the constraints
    admit the right value) and is "logit ≠ it" ``unsat`` (they admit no other)? A faithful
    encoding answers ``("sat", "unsat")``."""
    import z3

    from netproof.symbolic.exact import run as run_exact

    want = run_exact(net, word).output
    assert isinstance(want, Fraction)
    answers: list[SmtResult] = []
    for equal in (True, False):
        ctx = z3.Context()
        enc = Encoder(z3, ctx, net, len(word))
        logit = enc.term(enc.logit())
        s = z3.Solver(ctx=ctx)
        s.add(*enc.assertions)
        s.add(*(row[net.alphabet.index(sym)] for row, sym in zip(enc.symbol, word, strict=True)))
        s.add(logit == enc.num(want) if equal else logit != enc.num(want))
        answer, _reason, _model = smtlib.check(s)
        answers.append("unsat" if answer == "unsat" else "sat" if answer == "sat" else "unknown")
    return answers[0], answers[1]


def _word_of(model: Any, enc: Encoder, alphabet: Sequence[str]) -> Word:
    out = []
    for row in enc.symbol:
        chosen = [a for a, b in enumerate(row) if z3_true(model.eval(b, model_completion=True))]
        out.append(alphabet[chosen[0]])
    return tuple(out)


def z3_true(value: Any) -> bool:
    import z3

    return bool(z3.is_true(value))


def _replay(net: Network, language: Language, word: Word) -> Refuted | None:
    """The exact interpreter's verdict on ``word``: Refuted if the network gets it wrong, else
    None (the encoder was wrong)."""
    from netproof.symbolic.evaluation import UndefinedValueError
    from netproof.symbolic.exact import run as run_exact

    method = "smt (z3), counterexample replayed exactly"
    shown = repr(render(language.alphabet, word)) if word else "ε (the empty word)"
    try:
        trace = run_exact(net, word)
    except UndefinedValueError as exc:
        return Refuted(method, f"the network's output is undefined on {shown}: {exc}", word)
    member = language.contains(word)
    if trace.accepted is None or trace.accepted == member:
        return None
    return Refuted(
        method,
        f"{shown} is {'in' if member else 'not in'} {language.name} but the network "
        f"{'accepts' if trace.accepted else 'rejects'} it (logit {trace.output})",
        word,
        {"logit": str(trace.output), "accepted": str(trace.accepted), "member": str(member)},
    )


def _shrink(q: RecognitionQuery, alphabet: Sequence[str], word: Word, deadline: float) -> Word:
    """The shortlex-first counterexample of this length: fix symbols left to right, each to the
    smallest one that still leaves a counterexample (within the deadline; else ``word``)."""
    solver = q.solver
    best = list(word)
    solver.push()
    try:
        for t, is_sym in enumerate(q.encoder.symbol):
            for si in range(len(alphabet)):
                if alphabet[si] == best[t]:
                    solver.add(is_sym[si])
                    break
                left = deadline - time.perf_counter()
                if left <= 0:
                    return tuple(best)
                solver.push()
                solver.add(is_sym[si])
                answer, _reason, model = smtlib.check(solver, timeout=left, want_model=True)
                if answer == "sat":
                    best = list(_word_of(model, q.encoder, alphabet))
                    solver.pop()
                    solver.add(is_sym[si])
                    break
                solver.pop()
    finally:
        solver.pop()
    return tuple(best)


def recognizes_smt(
    net_for: Any,
    language: Language,
    min_len: int,
    max_len: int,
    *,
    timeout: float = 60.0,
    shrink: bool = True,
    budget: str = "",
) -> Outcome:
    """Prove or refute "accept ⇔ w ∈ language" for every word with min_len ≤ |w| ≤ max_len, one
    z3 query per length (``net_for(m)`` is the network for words of length m). ``timeout`` is
    the budget in seconds for all the queries together; ``budget`` names it in a timeout's
    reason where it is what is left of a larger one (default: "the {timeout} s budget")."""
    method = "smt (z3)"
    budget = budget or f"the {timeout:g} s budget"
    started = time.perf_counter()
    deadline = started + timeout
    queries: list[SmtQuery] = []
    checked = 0
    k = len(language.alphabet)
    for m in range(min_len, max_len + 1):
        net = net_for(m)
        try:
            q = recognition_query(net, language, m)
        except Unsupported as exc:
            return Outcome(Unknown(method, f"unsupported: {exc}"), tuple(queries))
        left = deadline - time.perf_counter()
        if left <= 0:
            return Outcome(
                Unknown(
                    method,
                    f"timeout: {budget} ran out before length {m} (lengths {min_len}..{m - 1} proved)",
                ),
                tuple(queries),
            )
        query, model = smtlib.solve(
            q.solver,
            name=q.name,
            logic=q.logic,
            timeout=left,
            reason_unsat=f"no word of length {m} is misclassified",
        )
        if query.result == "unknown":
            queries.append(query)
            reason = query.reason or "unknown"
            if reason == "timeout":
                reason = f"timeout: {budget} ran out at length {m}"
            return Outcome(
                Unknown(method, f"z3: {reason} (lengths {min_len}..{m - 1} proved)"), tuple(queries)
            )
        if query.result == "sat":
            word = _word_of(model, q.encoder, language.alphabet)
            refuted = _replay(net, language, word)
            if refuted is None:
                raise EncoderBugError(
                    f"z3 says {render(language.alphabet, word)!r} (length {m}) is misclassified by "
                    f"{net.name!r}, but the exact interpreter classifies it correctly: the SMT encoding "
                    "is wrong; please report this with the network file"
                )
            if shrink:
                small = _shrink(q, language.alphabet, word, deadline)
                if small != word:
                    better = _replay(net, language, small)
                    if better is None:
                        raise EncoderBugError(
                            f"the shrunk counterexample {render(language.alphabet, small)!r} is not "
                            "reproduced by the exact interpreter: the SMT encoding is wrong"
                        )
                    word, refuted = small, better
            shown = render(language.alphabet, word) or "ε"
            queries.append(
                SmtQuery(
                    name=query.name,
                    smt2=query.smt2,
                    result="sat",
                    reason=f"counterexample {shown!r}",
                    seconds=query.seconds,
                )
            )
            return Outcome(Refuted(method, refuted.detail, word, refuted.values), tuple(queries))
        queries.append(query)
        checked += k**m
    return Outcome(
        Proved(
            method,
            checked,
            f"every word with {min_len} <= |w| <= {max_len}: one query per length, each unsat",
        ),
        tuple(queries),
    )


def _closed_form_z3(
    enc: Encoder, expr: Any, alphabet: Sequence[str], t: int, i: int, n: int
) -> Any:
    """:func:`closed_form_term` over the monolithic encoder's word."""
    z3 = enc.z3
    one, zero = z3.IntVal(1, enc.ctx), z3.IntVal(0, enc.ctx)
    counts: dict[str, Any] = {}

    def count(a: str) -> Any:
        if a not in counts:
            idx = list(alphabet).index(a)
            counts[a] = z3.ToReal(
                z3.Sum([z3.If(row[idx], one, zero) for row in enc.symbol]) if enc.symbol else zero
            )
        return counts[a]

    def indicator(j: int, a: str) -> Any:
        if j > len(enc.symbol):
            return enc.num(Fraction(0))
        return z3.If(
            enc.symbol[j - 1][list(alphabet).index(a)], enc.num(Fraction(1)), enc.num(Fraction(0))
        )

    return closed_form_term(z3, enc.ctx, expr, alphabet, (t, i, n), count, indicator)


@dataclass(frozen=True, slots=True)
class ValueQuery:
    """ "Some word of length m has a value other than the closed form" for a :class:`ValueIs`."""

    solver: Any
    encoder: Encoder
    m: int
    logic: str | None = None

    @property
    def name(self) -> str:
        return f"n={self.m}"


def value_query(net: Network, claim: ValueIs, m: int) -> ValueQuery:
    """The z3 query for a :class:`ValueIs` with a closed form on every word of length ``m``:
    the quantity (the logit, or a dim after a named step at every token) differs from the
    closed form somewhere. ``unsat`` proves the claim for that length."""
    import z3

    if claim.closed_form is None:
        raise Unsupported(f"claim {claim.id} has no closed form (ValueIs.closed_form) to encode")
    ctx = z3.Context()
    enc = Encoder(z3, ctx, net, m)
    rows, n = enc.embed()
    if not isinstance(net.embedding, TokenEmbedding):
        raise Unsupported("closed forms are encoded for token embeddings only")
    base = net.embedding.index_base
    differs: list[Any] = []
    if isinstance(claim.quantity, Output):
        differs.append(
            enc.term(enc.logit())
            != _closed_form_z3(enc, claim.closed_form, net.alphabet, 0, base, n)
        )
    else:
        after, dim = claim.quantity.after, claim.quantity.dim
        if dim not in net.dims:
            raise Unsupported(f"claim {claim.id}: the network has no dim {dim!r}")
        current: list[dict[str, Any]] = rows
        if after != "input":
            for sub in net.layers:
                current = enc.sublayer(sub, current, n, None)
                if sub.name == after:
                    break
            else:
                raise Unsupported(f"claim {claim.id}: the network has no step named {after!r}")
        for t, row in enumerate(current):
            value = row[dim]
            if value is None:
                continue
            differs.append(
                enc.term(value)
                != _closed_form_z3(enc, claim.closed_form, net.alphabet, t, base + t, n)
            )
    solver = z3.Solver(ctx=ctx)
    solver.add(*enc.assertions)
    solver.add(z3.Or(differs) if differs else z3.BoolVal(False, ctx))
    return ValueQuery(solver, enc, m)


ValueBuilder: TypeAlias = Callable[[Network, int], tuple[Any, Callable[[Any], Word], str | None]]
"""Builds the query "some word of length m has a value other than the closed form" for a
network: its z3 solver, the word of a model, and its SMT-LIB2 logic (None: the smallest)."""


def _monolithic_value(claim: ValueIs) -> ValueBuilder:
    def build(net: Network, m: int) -> tuple[Any, Callable[[Any], Word], str | None]:
        q = value_query(net, claim, m)
        return q.solver, lambda model: _word_of(model, q.encoder, net.alphabet), q.logic

    return build


def value_is_smt(
    job: Job,
    claim: ValueIs,
    min_len: int,
    max_len: int,
    *,
    timeout: float = 60.0,
    build: ValueBuilder | None = None,
    method: str = "smt (z3)",
    name: str = "n={m}",
    budget: str = "",
) -> Outcome:
    """Prove or refute a :class:`ValueIs` with a closed form for every word with
    ``min_len <= |w| <= max_len``, one z3 query per length (``build``: the monolithic encoding
    by default; :func:`netproof.verifier.smt.compositional.value_builder` for the network with its proved
    lemmas in place). A ``sat`` word is replayed with the exact interpreter against the claim's
    ``expected``: a word on which the network agrees with ``expected`` is an encoder bug, unless
    the closed form itself disagrees with ``expected`` there (a :class:`ValueError` naming the
    claim: its two statements differ)."""
    build = build or _monolithic_value(claim)
    if claim.backend != "exact":
        return Outcome(
            Unknown(
                method,
                f"unsupported: claim {claim.id} is checked with the {claim.backend} backend, not exactly",
            )
        )
    started = time.perf_counter()
    deadline = started + timeout
    queries: list[SmtQuery] = []
    checked = 0
    alphabet = job.alphabet
    for m in range(min_len, max_len + 1):
        net = job.network(m)
        try:
            solver, word_of, logic = build(net, m)
        except Unsupported as exc:
            return Outcome(Unknown(method, f"unsupported: {exc}"), tuple(queries))
        left = deadline - time.perf_counter()
        if left <= 0:
            return Outcome(
                Unknown(
                    method,
                    f"timeout: {budget or f'the {timeout:g} s budget'} ran out before length {m} (lengths {min_len}..{m - 1} proved)",
                ),
                tuple(queries),
            )
        query, model = smtlib.solve(
            solver,
            name=name.format(m=m),
            logic=logic,
            timeout=left,
            reason_unsat=f"on no word of length {m} does the value differ from the closed form",
        )
        if query.result == "unknown":
            queries.append(query)
            return Outcome(
                Unknown(
                    method, f"z3: {query.reason or 'unknown'} (lengths {min_len}..{m - 1} proved)"
                ),
                tuple(queries),
            )
        if query.result == "sat":
            word = word_of(model)
            refuted = replay_value(net, claim, alphabet, word, method)
            queries.append(
                SmtQuery(
                    name=query.name,
                    smt2=query.smt2,
                    result="sat",
                    reason=f"counterexample {render(alphabet, word) or 'ε'!r}",
                    seconds=query.seconds,
                )
            )
            return Outcome(Refuted(method, refuted.detail, word, refuted.values), tuple(queries))
        queries.append(query)
        checked += len(alphabet) ** m
    return Outcome(
        Proved(
            method,
            checked,
            f"every word with {min_len} <= |w| <= {max_len}: one query per length, each unsat",
        ),
        tuple(queries),
    )


__all__ = [
    "RecognitionQuery",
    "ValueBuilder",
    "ValueQuery",
    "logit_on",
    "recognition_query",
    "recognizes_smt",
    "value_is_smt",
    "value_query",
    "z3_true",
]
