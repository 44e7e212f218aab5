"""The claims checked word by word over Σ^{min..max} in shortlex order (so the first
counterexample found is a shortest one): :class:`Recognizes`, :class:`ValueIs`, :class:`Bound`
and :class:`TraceProperty`, each with the claim's backend (exact, symbolic, sympy, interval),
and with :mod:`netproof.symbolic.batched` exact integers where the network allows it.

Each kind has a *body* (the verdict on one word's trace: what :func:`~netproof.verifier.exhaustive.checker.check_word`
replays) and a check over the bound (:func:`guard` runs a body on every word).

May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters, numpy (inside
functions), sympy and mpmath, and :mod:`netproof.verifier.exhaustive.job`; never SMT, fuzzing,
floats, campaigns or the CLI.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

import sympy
from mpmath import iv

from netproof.symbolic import Network, NotRationalError
from netproof.symbolic.evaluation import Trace, UndecidedSignError, UndefinedValueError
from netproof.symbolic.seq2seq import Seq2SeqTrace
from netproof.symbolic.sympy_interp import SympyArithmetic

from netproof.verifier.claims import (
    Bound,
    Claim,
    CrossEntropy,
    Output,
    Point,
    Proved,
    Recognizes,
    Refuted,
    StateValue,
    TraceProperty,
    Unknown,
    ValueIs,
    Verdict,
    Word,
)

from .job import (
    BASE_E,
    TRACES,
    Job,
    Progress,
    count_words,
    enclose,
    exhaustive_method,
    format_value,
    interval_sign,
    show_word,
    words,
)

__all__ = [
    "Body",
    "bound_body",
    "check_bound",
    "check_recognizes",
    "check_trace_property",
    "check_value_is",
    "guard",
    "recognizes_body",
    "trace_body",
    "traced",
    "value_is_body",
]

Body = Callable[[Word, Trace[Any]], Verdict | None]
"""The verdict on one word's trace (None: the claim holds on it)."""


def traced(job: Job, w: Word, backend: str, method: str) -> Trace[Any] | Seq2SeqTrace[Any] | Verdict:
    """The trace of ``w``, or the verdict its evaluation already decides (unsupported or
    undecided: Unknown; an undefined output: Refuted)."""
    try:
        return job.trace(w, backend)
    except NotRationalError as exc:
        return Unknown(method, f"unsupported by the {backend} backend: {exc}")
    except UndecidedSignError as exc:
        return Unknown(method, f"undecided on {show_word(w, job.alphabet)}: {exc}")
    except UndefinedValueError as exc:
        return Refuted(method, f"the network's output is undefined on {show_word(w, job.alphabet)}: {exc}", w)


def guard(job: Job, claim: Claim, backend: str, bound: int, progress: Progress | None, body: Body) -> Verdict:
    """Run ``body`` on every word's trace; the first non-None verdict stops the search."""
    alphabet = job.alphabet
    total = count_words(alphabet, claim.min_len, bound)
    done = 0
    method = exhaustive_method(backend)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    for w in words(alphabet, claim.min_len, bound):
        trace = traced(job, w, backend, method)
        if not isinstance(trace, TRACES):
            return trace
        verdict = body(w, trace)
        if verdict is not None:
            return verdict
        done += 1
        if progress is not None:
            progress(done, total)
    return Proved(method, done, f"every word with {claim.min_len} <= |w| <= {bound}")


# --------------------------------------------------------------------------- Recognizes


def check_recognizes(job: Job, claim: Recognizes, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`Recognizes` claim over its bound: batched exact integers where the network allows
    it, else word by word."""
    if claim.backend == "exact":
        verdict = _recognizes_batched(job, claim, bound, progress)
        if verdict is not None:
            return verdict

    return guard(job, claim, claim.backend, bound, progress, recognizes_body(claim, exhaustive_method(claim.backend)))


def recognizes_body(claim: Recognizes, method: str) -> Body:
    """The :class:`Recognizes` verdict on one word's trace."""
    lang = claim.language

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        member = lang.contains(w)
        if trace.accepted is None:
            return Unknown(method, f"accept bit undecided on {show_word(w, lang.alphabet)}")
        if trace.accepted != member:
            return Refuted(
                method,
                f"{show_word(w, lang.alphabet)} is {'in' if member else 'not in'} {lang.name} but the network "
                f"{'accepts' if trace.accepted else 'rejects'} it (logit {format_value(trace.output)})",
                w,
                {"logit": format_value(trace.output), "accepted": str(trace.accepted), "member": str(member)},
            )
        return None

    return body


def _batchable(job: Job, lengths: range) -> dict[int, Network] | None:
    """The network for each word length, if :mod:`netproof.symbolic.batched` runs every one of them on
    the job's alphabet; else None (the per-word path is used)."""
    from netproof.symbolic import batched

    nets = {m: job.network(m) for m in lengths}
    for net in {id(net): net for net in nets.values()}.values():
        if batched.supports(net) is not None or sorted(net.alphabet) != sorted(job.alphabet):
            return None
    return nets


def _recognizes_batched(job: Job, claim: Recognizes, bound: int, progress: Progress | None) -> Verdict | None:
    """The exact exhaustive check of ``claim`` with :mod:`netproof.symbolic.batched`: the words of each
    length in shortlex chunks, as exact integers. Same verdicts, first counterexample, messages
    and ``checked`` count as the per-word path; None (use the per-word path) when a network of
    the bound is not batchable or the bound holds no word."""
    import numpy as np

    from netproof.symbolic import batched

    lang = claim.language
    alphabet = job.alphabet
    lengths = range(claim.min_len, bound + 1)
    total = count_words(alphabet, claim.min_len, bound)
    nets = _batchable(job, lengths) if total else None
    if nets is None:
        return None
    method = "exhaustive (exact, batched integers)"
    evaluators: dict[int, batched.Evaluator] = {}
    done = 0
    for m in lengths:
        net = nets[m]
        ev = evaluators.get(id(net))
        if ev is None:
            ev = evaluators[id(net)] = batched.Evaluator(net)
        code = np.array([net.alphabet.index(s) for s in alphabet], dtype=np.int64)
        stream = itertools.product(alphabet, repeat=m)
        count = len(alphabet) ** m
        for start in range(0, count, batched.CHUNK):
            stop = min(count, start + batched.CHUNK)
            chunk = list(itertools.islice(stream, stop - start))
            try:
                got = ev.run(code[batched.shortlex_block(len(alphabet), m, start, stop)])
            except UndefinedValueError as exc:  # depends on the length only: the chunk's first word
                return Refuted(method, f"the network's output is undefined on {show_word(chunk[0], alphabet)}: {exc}", chunk[0])
            member = np.fromiter(map(lang.contains, chunk), dtype=bool, count=len(chunk))
            wrong = np.flatnonzero(got.accepted != member)
            if wrong.size:
                j = int(wrong[0])
                if progress is not None and j:
                    progress(done + j, total)
                w, accepted, is_member, logit = chunk[j], bool(got.accepted[j]), bool(member[j]), got.logit(j)
                return Refuted(
                    method,
                    f"{show_word(w, lang.alphabet)} is {'in' if is_member else 'not in'} {lang.name} but the network "
                    f"{'accepts' if accepted else 'rejects'} it (logit {format_value(logit)})",
                    w,
                    {"logit": format_value(logit), "accepted": str(accepted), "member": str(is_member)},
                )
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return Proved(method, done, f"every word with {claim.min_len} <= |w| <= {bound}")


# --------------------------------------------------------------------------- ValueIs


def _points(trace: Trace[Any], quantity: Output | StateValue, E: Any) -> Iterator[tuple[Point, Any, str]]:
    if isinstance(quantity, Output):
        t = 0
        yield Point(trace.word, t, trace.positions[t] if trace.positions else 0, trace.n, E), trace.output, "s"
        return
    for t in range(trace.n):
        value = trace.value(quantity.after, t, quantity.dim)
        yield Point(trace.word, t, trace.positions[t], trace.n, E), value, f"{quantity.dim} at position {trace.positions[t]}"


def _equal(backend: str, value: Any, expected: Any) -> bool | None:
    """True/False if decided, None if the backend cannot decide equality."""
    if backend == "exact":
        if isinstance(expected, sympy.Basic):
            return bool(sympy.Rational(value.numerator, value.denominator) == expected)
        return bool(value == Fraction(expected))
    if backend == "symbolic":
        diff = sympy.cancel(sympy.together(sympy.sympify(value) - expected))
        return diff == 0
    if backend == "sympy":
        diff = sympy.sympify(value) - sympy.sympify(expected)
        if diff == 0:
            return True
        try:
            return SympyArithmetic().sign(diff) == 0
        except UndecidedSignError:
            return None
    if backend == "interval":
        d = enclose(value) - enclose(expected)
        s = interval_sign(d)
        return False if s not in (0, None) else (True if s == 0 else None)
    raise ValueError(backend)


def check_value_is(job: Job, claim: ValueIs, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`ValueIs` claim over its bound; words whose equality the backend cannot decide make
    it Unknown."""
    undecided: list[str] = []
    body = value_is_body(claim, job.alphabet, exhaustive_method(claim.backend), undecided)
    verdict = guard(job, claim, claim.backend, bound, progress, body)
    if isinstance(verdict, Proved) and undecided:
        return Unknown(
            exhaustive_method(claim.backend),
            f"the {claim.backend} backend cannot prove equality (no word refutes it; first undecided: {undecided[0]})",
        )
    return verdict


def value_is_body(claim: ValueIs, alphabet: Sequence[str], method: str, undecided: list[str] | None) -> Body:
    """With ``undecided`` a list, a word whose equality the backend cannot decide is noted there
    and the search goes on; with None it is an Unknown at once."""
    E = BASE_E if claim.backend == "symbolic" else None

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        for point, value, where in _points(trace, claim.quantity, E):
            expected = claim.expected(point)
            if expected is None:
                continue
            same = _equal(claim.backend, value, expected)
            if same is None:
                if undecided is None:
                    return Unknown(method, f"the {claim.backend} backend cannot decide equality on {show_word(w, alphabet)} ({where})")
                undecided.append(show_word(w, alphabet))
                continue
            if not same:
                return Refuted(
                    method,
                    f"on {show_word(w, alphabet)}: {where} is {format_value(value)}, the claim says {format_value(expected)}",
                    w,
                    {"network": format_value(value), "claimed": format_value(sympy.sympify(expected) if not isinstance(expected, Fraction) else expected)},
                )
        return None

    return body


# --------------------------------------------------------------------------- TraceProperty


def trace_body(claim: TraceProperty, alphabet: Sequence[str], method: str) -> Body:
    """The :class:`TraceProperty` verdict on one word's trace."""
    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        failure = claim.holds(w, trace)
        if failure is not None:
            return Refuted(method, f"on {show_word(w, alphabet)}: {failure}", w)
        return None

    return body


def _trace_domain(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict:
    """A trace property over a domain the claim generates itself (see TraceProperty.domain)."""
    assert claim.domain is not None
    alphabet = job.alphabet
    method = exhaustive_method(claim.backend)
    domain = [w for w in claim.domain(bound) if claim.min_len <= len(w) <= bound]
    if not domain:
        return Unknown(method, f"the domain of the claim has no word with {claim.min_len} <= |w| <= {bound}")
    body = trace_body(claim, alphabet, method)
    for done, w in enumerate(domain, start=1):
        trace = traced(job, w, claim.backend, method)
        verdict = trace if not isinstance(trace, TRACES) else body(w, trace)
        if verdict is not None:
            return verdict
        if progress is not None:
            progress(done, len(domain))
    what = claim.domain_text or "word of the claim's domain"
    return Proved(method, len(domain), f"every {what} with {claim.min_len} <= |w| <= {bound} ({len(domain)} words)")


def check_trace_property(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`TraceProperty` claim: over its own domain, batched, over the words ``only`` keeps,
    or every word."""
    if claim.domain is not None:
        return _trace_domain(job, claim, bound, progress)
    if claim.holds_batch is not None and claim.backend == "exact":
        verdict = _trace_property_batched(job, claim, bound, progress)
        if verdict is not None:
            return verdict
    if claim.only is not None:
        return _trace_only(job, claim, bound, progress)
    return guard(job, claim, claim.backend, bound, progress, trace_body(claim, job.alphabet, exhaustive_method(claim.backend)))


def _trace_property_batched(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict | None:
    """``claim.holds_batch`` over :mod:`netproof.symbolic.batched` traces: the words of each length in
    shortlex chunks (those ``claim.only`` keeps, filtered before evaluation), as exact integers.
    The same verdict, first counterexample, message and counts as the per-word path; None (use
    the per-word path) when a network of the bound is not batchable or the bound holds no word."""
    import numpy as np

    from netproof.symbolic import batched

    assert claim.holds_batch is not None
    alphabet = job.alphabet
    lengths = range(claim.min_len, bound + 1)
    total = count_words(alphabet, claim.min_len, bound)
    nets = _batchable(job, lengths) if total else None
    if nets is None:
        return None
    method = "exhaustive (exact, batched integers)"
    size = batched.CHUNK // 4  # a trace keeps every state: a quarter of the accept-only chunk
    evaluators: dict[int, batched.Evaluator] = {}

    def first_failure(ev: batched.Evaluator, chunk: list[Word], idx: Any) -> Verdict | None:
        try:
            trace = ev.trace(idx)
        except UndefinedValueError as exc:  # depends on the length only: the chunk's first word
            return Refuted(method, f"the network's output is undefined on {show_word(chunk[0], alphabet)}: {exc}", chunk[0])
        assert claim.holds_batch is not None
        failures = claim.holds_batch(chunk, trace)
        if len(failures) != len(chunk):
            raise ValueError(
                f"claim {claim.id}: holds_batch returned {len(failures)} results for {len(chunk)} words; "
                "it must return one failure text or None per word, in order"
            )
        for w, failure in zip(chunk, failures, strict=True):
            if failure is not None:
                return Refuted(method, f"on {show_word(w, alphabet)}: {failure}", w)
        return None

    done = kept = 0
    for m in lengths:
        net = nets[m]
        ev = evaluators.get(id(net))
        if ev is None:
            ev = evaluators[id(net)] = batched.Evaluator(net)
        code = np.array([net.alphabet.index(s) for s in alphabet], dtype=np.int64)
        stream = itertools.product(alphabet, repeat=m)
        count = len(alphabet) ** m
        if claim.only is None:
            for start in range(0, count, size):
                stop = min(count, start + size)
                chunk = list(itertools.islice(stream, stop - start))
                verdict = first_failure(ev, chunk, code[batched.shortlex_block(len(alphabet), m, start, stop)])
                if verdict is not None:
                    return verdict
                done = kept = done + len(chunk)
                if progress is not None:
                    progress(done, total)
            continue
        position = {s: i for i, s in enumerate(alphabet)}
        pending: list[Word] = []
        for start in range(0, count, batched.CHUNK):
            raw = list(itertools.islice(stream, min(batched.CHUNK, count - start)))
            pending += filter(claim.only, raw)
            done += len(raw)
            if pending and (len(pending) >= size or start + len(raw) == count):
                idx = code[np.array([[position[s] for s in w] for w in pending], dtype=np.int64).reshape(len(pending), m)]
                verdict = first_failure(ev, pending, idx)
                if verdict is not None:
                    return verdict
                kept += len(pending)
                pending = []
            if progress is not None:
                progress(done, total)
    detail = f"every word with {claim.min_len} <= |w| <= {bound}"
    if claim.only is None:
        return Proved(method, done, detail)
    return Proved(method, kept, f"{detail} that the claim is about ({kept} words)")


def _trace_only(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict:
    """The per-word check of a claim with ``only``: the words it is about, each traced only
    after ``only`` kept it (so the words it leaves out cost nothing)."""
    assert claim.only is not None
    alphabet = job.alphabet
    method = exhaustive_method(claim.backend)
    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    kept = 0
    body = trace_body(claim, alphabet, method)
    for done, w in enumerate(words(alphabet, claim.min_len, bound), start=1):
        if claim.only(w):
            trace = traced(job, w, claim.backend, method)
            verdict = trace if not isinstance(trace, TRACES) else body(w, trace)
            if verdict is not None:
                return verdict
            kept += 1
        if progress is not None:
            progress(done, total)
    return Proved(method, kept, f"every word with {claim.min_len} <= |w| <= {bound} that the claim is about ({kept} words)")


# --------------------------------------------------------------------------- Bound


def _cross_entropy(s: Any, member: bool) -> Any:
    x = enclose(s)
    return iv.log(1 + iv.exp(-x)) if member else iv.log(1 + iv.exp(x))


def check_bound(job: Job, claim: Bound, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`Bound` claim over its bound."""
    return guard(job, claim, claim.backend, bound, progress, bound_body(claim, job.alphabet, exhaustive_method(claim.backend)))


def bound_body(claim: Bound, alphabet: Sequence[str], method: str) -> Body:
    """The :class:`Bound` verdict on one word's trace."""
    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        q = claim.quantity
        if isinstance(q, CrossEntropy):
            points = [(Point(w, 0, 0, trace.n), _cross_entropy(trace.output, q.language.contains(w)), "cross-entropy")]
        else:
            points = list(_points(trace, q, None))
        for point, value, where in points:
            v = enclose(value) if claim.backend != "exact" or isinstance(q, CrossEntropy) else value
            if claim.absolute:
                v = abs(v) if isinstance(v, Fraction) else iv.mpf([min(abs(v.a), abs(v.b)) if not (v.a <= 0 <= v.b) else 0, max(abs(v.a), abs(v.b))])
            for side, fn, strict in (("lower", claim.lower, claim.strict_lower), ("upper", claim.upper, claim.strict_upper)):
                if fn is None:
                    continue
                limit = fn(point)
                if isinstance(v, Fraction) and isinstance(limit, Fraction):
                    diff_sign: int | None = (v > limit) - (v < limit)
                else:
                    diff_sign = interval_sign(enclose(v) - enclose(limit))
                ok_signs = ({1} if strict else {0, 1}) if side == "lower" else ({-1} if strict else {-1, 0})
                if diff_sign is None:
                    return Unknown(method, f"on {show_word(w, alphabet)}: {where} = {format_value(v)} is not separated from the {side} bound {format_value(limit)}")
                if diff_sign not in ok_signs:
                    return Refuted(
                        method,
                        f"on {show_word(w, alphabet)}: {'|' if claim.absolute else ''}{where}{'|' if claim.absolute else ''} = {format_value(v)} breaks the {side} bound {format_value(limit)} ({claim.bound_text})",
                        w,
                        {"value": format_value(v), side: format_value(limit)},
                    )
        return None

    return body
