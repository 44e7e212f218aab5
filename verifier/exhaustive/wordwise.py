"""The claims checked word by word over Σ^{min..max} in shortlex order (so the first
counterexample found is a shortest one): :class:`Recognizes`, :class:`ValueIs`, :class:`Bound`
and :class:`TraceProperty`, each with the claim's backend (exact, symbolic, sympy, interval),
and with :mod:`netproof.symbolic.batched` exact integers where the network allows it.

Each kind has a *body* (the verdict on one word's trace: what :func:`~netproof.verifier.exhaustive.checker.check_word`
replays) and a check over the bound (:func:`guard` runs a body on every word). Every check goes
through the words of one :class:`~netproof.verifier.exhaustive.job.Shard` (the whole bound, or a
part of it that a worker of a scaled-out run takes: :func:`check_part`) and finds a
:class:`~netproof.verifier.exhaustive.job.Part`; the verdict follows from the part
(:func:`finish`), so a bound checked in shards gives the verdict of the bound checked whole.

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
    Part,
    Progress,
    Shard,
    WithVariants,
    count_words,
    enclose,
    exhaustive_method,
    format_value,
    interval_sign,
    show_word,
    variant_networks,
    with_variants,
)

__all__ = [
    "Body",
    "bound_body",
    "check_bound",
    "check_part",
    "check_recognizes",
    "check_trace_property",
    "check_value_is",
    "empty_bound",
    "finish",
    "guard",
    "guard_part",
    "recognizes_body",
    "shardable",
    "trace_body",
    "traced",
    "value_is_body",
]

Body = Callable[[Word, Trace[Any]], Verdict | None]
"""The verdict on one word's trace (None: the claim holds on it)."""


def traced(job: Job, w: Word, backend: str, method: str) -> Trace[Any] | Verdict:
    """The trace of ``w``, or the verdict its evaluation already decides (unsupported or
    undecided: Unknown; an undefined output: Refuted)."""
    try:
        return job.trace(w, backend)
    except NotRationalError as exc:
        return Unknown(method, f"unsupported by the {backend} backend: {exc}")
    except UndecidedSignError as exc:
        return Unknown(method, f"undecided on {show_word(w, job.alphabet)}: {exc}")
    except UndefinedValueError as exc:
        return Refuted(
            method, f"the network's output is undefined on {show_word(w, job.alphabet)}: {exc}", w
        )


def empty_bound(alphabet: Sequence[str], claim: Claim, bound: int, method: str) -> Verdict | None:
    """The unknown verdict of a bound that holds no word (None: it holds some)."""
    if count_words(alphabet, claim.min_len, bound) == 0:
        return Unknown(
            method,
            f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked",
        )
    return None


def finish(claim: Claim, alphabet: Sequence[str], bound: int, part: Part) -> Verdict:
    """The verdict of ``claim`` over its bound from the :class:`Part` found in the whole bound:
    the verdict where the check stopped, else unknown at the first undecided word, else proved
    for the words checked."""
    if part.stop is not None:
        return part.stop
    if part.undecided is not None:
        backend = getattr(claim, "backend", "exact")
        return Unknown(
            part.method,
            f"the {backend} backend cannot prove equality (no word refutes it; first undecided: "
            f"{show_word(part.undecided, alphabet)})",
        )
    detail = f"every word with {claim.min_len} <= |w| <= {bound}"
    if part.only:
        detail += f" that the claim is about ({part.checked} words)"
    return Proved(part.method, part.checked, detail)


def guard(
    job: Job, claim: Claim, backend: str, bound: int, progress: Progress | None, body: Body
) -> Verdict:
    """Run ``body`` on every word's trace; the first non-None verdict stops the search."""
    empty = empty_bound(job.alphabet, claim, bound, exhaustive_method(backend))
    if empty is not None:
        return empty
    return finish(
        claim,
        job.alphabet,
        bound,
        guard_part(job, backend, Shard((), claim.min_len, bound), progress, body),
    )


def guard_part(job: Job, backend: str, shard: Shard, progress: Progress | None, body: Body) -> Part:
    """Run ``body`` on the trace of every word of ``shard``, in shortlex order, up to the first
    word where it (or the evaluation) gives a verdict."""
    alphabet = job.alphabet
    total = shard.count(alphabet)
    done = 0
    method = exhaustive_method(backend)
    for w in shard.words(alphabet):
        trace = traced(job, w, backend, method)
        if not isinstance(trace, TRACES):
            return Part(method, done, trace, w)
        verdict = body(w, trace)
        if verdict is not None:
            return Part(method, done, verdict, w)
        done += 1
        if progress is not None:
            progress(done, total)
    return Part(method, done)


def shardable(claim: Claim) -> bool:
    """Whether ``claim`` is checked word by word over Σ^{min..max} (so that its bound can be
    split into shards: :func:`check_part`): :class:`Recognizes`, :class:`ValueIs`,
    :class:`Bound`, and :class:`TraceProperty` without a ``domain`` of its own."""
    if isinstance(claim, TraceProperty):
        return claim.domain is None
    return isinstance(claim, (Recognizes, ValueIs, Bound))


def check_part(
    job: Job, claim: Claim, bound: int, shard: Shard, progress: Progress | None = None
) -> Part:
    """Check ``claim`` (one that is :func:`shardable`) on the words of ``shard`` alone, the way
    the check of the whole bound ``claim.min_len <= |w| <= bound`` goes through them (the same
    evaluation path, chosen for the whole bound)."""
    if isinstance(claim, Recognizes):
        return _recognizes_part(job, claim, bound, shard, progress)
    if isinstance(claim, ValueIs):
        return _value_is_part(job, claim, shard, progress)
    if isinstance(claim, Bound):
        return guard_part(
            job,
            claim.backend,
            shard,
            progress,
            bound_body(claim, job.alphabet, exhaustive_method(claim.backend)),
        )
    if isinstance(claim, TraceProperty) and claim.domain is None:
        return _trace_property_part(job, claim, bound, shard, progress)
    raise TypeError(
        f"claim {claim.id!r} ({type(claim).__name__}) is not checked word by word over its bound; it has no shards"
    )


# --------------------------------------------------------------------------- Recognizes


def check_recognizes(job: Job, claim: Recognizes, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`Recognizes` claim over its bound: batched exact integers where the network allows
    it, else word by word."""
    empty = empty_bound(job.alphabet, claim, bound, exhaustive_method(claim.backend))
    if empty is not None:
        return empty
    return finish(
        claim,
        job.alphabet,
        bound,
        _recognizes_part(job, claim, bound, Shard((), claim.min_len, bound), progress),
    )


def _recognizes_part(
    job: Job, claim: Recognizes, bound: int, shard: Shard, progress: Progress | None
) -> Part:
    if claim.backend == "exact":
        part = _recognizes_batched(job, claim, bound, shard, progress)
        if part is not None:
            return part
    return guard_part(
        job,
        claim.backend,
        shard,
        progress,
        recognizes_body(claim, exhaustive_method(claim.backend)),
    )


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
                {
                    "logit": format_value(trace.output),
                    "accepted": str(trace.accepted),
                    "member": str(member),
                },
            )
        return None

    return body


def _batchable(job: Job, lengths: range) -> dict[int, Network] | None:
    """The network for each word length, if :mod:`netproof.symbolic.batched` runs every one of them on
    the job's alphabet (layer norms over two dims with eps = 0 included: a word where one is
    undefined sends the whole check to the per-word path); else None (the per-word path is used)."""
    from netproof.symbolic import batched

    nets = {m: job.network(m) for m in lengths}
    for net in {id(net): net for net in nets.values()}.values():
        if batched.supports(net, pair_norms=True) is not None or sorted(net.alphabet) != sorted(
            job.alphabet
        ):
            return None
    return nets


def _recognizes_batched(
    job: Job, claim: Recognizes, bound: int, shard: Shard, progress: Progress | None
) -> Part | None:
    """The exact exhaustive check of ``claim`` on the words of ``shard`` with
    :mod:`netproof.symbolic.batched`: the words of each length in shortlex chunks, as exact
    integers. Same verdicts, first counterexample, messages and ``checked`` count as the
    per-word path; None (use the per-word path) when a network of the bound is not batchable or
    the bound holds no word."""
    import numpy as np

    from netproof.symbolic import batched

    lang = claim.language
    alphabet = job.alphabet
    total = shard.count(alphabet)
    nets = (
        _batchable(job, range(claim.min_len, bound + 1))
        if count_words(alphabet, claim.min_len, bound)
        else None
    )
    if nets is None:
        return None
    method = "exhaustive (exact, batched integers)"
    evaluators: dict[int, batched.Evaluator] = {}
    done = 0
    for m in shard.lengths():
        net = nets[m]
        ev = evaluators.get(id(net))
        if ev is None:
            ev = evaluators[id(net)] = batched.Evaluator(net, pair_norms=True)
        code = np.array([net.alphabet.index(s) for s in alphabet], dtype=np.int64)
        stream = shard.words_of_length(alphabet, m)
        first, last = shard.block(alphabet, m)
        for start in range(first, last, batched.CHUNK):
            stop = min(last, start + batched.CHUNK)
            chunk = list(itertools.islice(stream, stop - start))
            try:
                got = ev.run(code[batched.shortlex_block(len(alphabet), m, start, stop)])
            except batched.PairNormUndefined:
                return None  # which word, and what the words before it give: per word
            except UndefinedValueError as exc:  # depends on the length only: the chunk's first word
                undefined = Refuted(
                    method,
                    f"the network's output is undefined on {show_word(chunk[0], alphabet)}: {exc}",
                    chunk[0],
                )
                return Part(method, done, undefined, chunk[0])
            member = np.fromiter(map(lang.contains, chunk), dtype=bool, count=len(chunk))
            wrong = np.flatnonzero(got.accepted != member)
            if wrong.size:
                j = int(wrong[0])
                if progress is not None and j:
                    progress(done + j, total)
                w, accepted, is_member, logit = (
                    chunk[j],
                    bool(got.accepted[j]),
                    bool(member[j]),
                    got.logit(j),
                )
                wrong_word = Refuted(
                    method,
                    f"{show_word(w, lang.alphabet)} is {'in' if is_member else 'not in'} {lang.name} but the network "
                    f"{'accepts' if accepted else 'rejects'} it (logit {format_value(logit)})",
                    w,
                    {
                        "logit": format_value(logit),
                        "accepted": str(accepted),
                        "member": str(is_member),
                    },
                )
                return Part(method, done + j, wrong_word, w)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return Part(method, done)


# --------------------------------------------------------------------------- ValueIs


def _points(
    trace: Trace[Any], quantity: Output | StateValue, E: Any
) -> Iterator[tuple[Point, Any, str]]:
    if isinstance(quantity, Output):
        t = 0
        yield (
            Point(trace.word, t, trace.positions[t] if trace.positions else 0, trace.n, E),
            trace.output,
            "s",
        )
        return
    for t in range(trace.n):
        value = trace.value(quantity.after, t, quantity.dim)
        yield (
            Point(trace.word, t, trace.positions[t], trace.n, E),
            value,
            f"{quantity.dim} at position {trace.positions[t]}",
        )


def _equal(backend: str, value: Any, expected: Any) -> bool | None:
    """True/False if decided, None if the backend cannot decide equality."""
    if backend == "exact":
        if isinstance(expected, sympy.Basic):
            return bool(sympy.Rational(value.numerator, value.denominator) == expected)
        return bool(value == Fraction(expected))
    if backend == "symbolic":
        diff = sympy.cancel(sympy.together(sympy.sympify(value) - expected))
        return bool(diff == 0)
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
    empty = empty_bound(job.alphabet, claim, bound, exhaustive_method(claim.backend))
    if empty is not None:
        return empty
    return finish(
        claim,
        job.alphabet,
        bound,
        _value_is_part(job, claim, Shard((), claim.min_len, bound), progress),
    )


def _value_is_part(job: Job, claim: ValueIs, shard: Shard, progress: Progress | None) -> Part:
    undecided: list[Word] = []
    body = value_is_body(claim, job.alphabet, exhaustive_method(claim.backend), undecided)
    part = guard_part(job, claim.backend, shard, progress, body)
    return Part(part.method, part.checked, part.stop, part.at, undecided[0] if undecided else None)


def value_is_body(
    claim: ValueIs, alphabet: Sequence[str], method: str, undecided: list[Word] | None
) -> Body:
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
                    return Unknown(
                        method,
                        f"the {claim.backend} backend cannot decide equality on {show_word(w, alphabet)} ({where})",
                    )
                undecided.append(w)
                continue
            if not same:
                return Refuted(
                    method,
                    f"on {show_word(w, alphabet)}: {where} is {format_value(value)}, the claim says {format_value(expected)}",
                    w,
                    {
                        "network": format_value(value),
                        "claimed": format_value(
                            sympy.sympify(expected)
                            if not isinstance(expected, Fraction)
                            else expected
                        ),
                    },
                )
        return None

    return body


# --------------------------------------------------------------------------- TraceProperty


def trace_body(claim: TraceProperty, alphabet: Sequence[str], method: str) -> Body:
    """The :class:`TraceProperty` verdict on one word's trace."""

    nets: dict[int, Any] = {}

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        failure = claim.holds(w, with_variants(claim, w, trace, nets))
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
        return Unknown(
            method, f"the domain of the claim has no word with {claim.min_len} <= |w| <= {bound}"
        )
    body = trace_body(claim, alphabet, method)
    for done, w in enumerate(domain, start=1):
        trace = traced(job, w, claim.backend, method)
        verdict = trace if not isinstance(trace, TRACES) else body(w, trace)
        if verdict is not None:
            return verdict
        if progress is not None:
            progress(done, len(domain))
    what = claim.domain_text or "word of the claim's domain"
    return Proved(
        method,
        len(domain),
        f"every {what} with {claim.min_len} <= |w| <= {bound} ({len(domain)} words)",
    )


def check_trace_property(
    job: Job, claim: TraceProperty, bound: int, progress: Progress | None
) -> Verdict:
    """A :class:`TraceProperty` claim: over its own domain, batched, over the words ``only`` keeps,
    or every word."""
    if claim.domain is not None:
        return _trace_domain(job, claim, bound, progress)
    empty = empty_bound(job.alphabet, claim, bound, exhaustive_method(claim.backend))
    if empty is not None:
        return empty
    return finish(
        claim,
        job.alphabet,
        bound,
        _trace_property_part(job, claim, bound, Shard((), claim.min_len, bound), progress),
    )


def _trace_property_part(
    job: Job, claim: TraceProperty, bound: int, shard: Shard, progress: Progress | None
) -> Part:
    if claim.holds_batch is not None and claim.backend == "exact":
        from netproof.symbolic.batched import PairNormUndefined

        try:
            part = _trace_property_batched(job, claim, bound, shard, progress)
        except PairNormUndefined:
            part = None  # which word, and what the words before it give: per word
        if part is not None:
            return part
    if claim.only is not None:
        return _trace_only(job, claim, shard, progress)
    return guard_part(
        job,
        claim.backend,
        shard,
        progress,
        trace_body(claim, job.alphabet, exhaustive_method(claim.backend)),
    )


def _trace_property_batched(
    job: Job, claim: TraceProperty, bound: int, shard: Shard, progress: Progress | None
) -> Part | None:
    """``claim.holds_batch`` over :mod:`netproof.symbolic.batched` traces of the words of ``shard``:
    the words of each length in shortlex chunks (those ``claim.only`` keeps, filtered before
    evaluation), as exact integers. The same verdict, first counterexample, message and counts
    as the per-word path; None (use the per-word path) when a network of the bound is not
    batchable or the bound holds no word."""
    import numpy as np

    from netproof.symbolic import batched

    assert claim.holds_batch is not None
    alphabet = job.alphabet
    total = shard.count(alphabet)
    nets = (
        _batchable(job, range(claim.min_len, bound + 1))
        if count_words(alphabet, claim.min_len, bound)
        else None
    )
    if nets is None:
        return None
    method = "exhaustive (exact, batched integers)"
    size = batched.CHUNK // 4  # a trace keeps every state: a quarter of the accept-only chunk
    evaluators: dict[int, batched.Evaluator] = {}
    made: dict[int, Any] = {}
    others: dict[int, batched.Evaluator] = {}
    if claim.variants is not None and any(
        batched.supports(v, pair_norms=True) is not None
        for net in nets.values()
        for v in variant_networks(claim, net, made).values()
    ):
        return None

    def first_failure(ev: batched.Evaluator, chunk: list[Word], idx: Any) -> Refuted | None:
        try:
            trace: Any = ev.trace(idx)
            if claim.variants is not None:
                # each variant network on the same words, batched the same way
                variants = {}
                for name, net in variant_networks(claim, ev.net, made).items():
                    if id(net) not in others:
                        others[id(net)] = batched.Evaluator(net, pair_norms=True)
                    variants[name] = others[id(net)].trace(idx)
                trace = WithVariants(trace, variants)
        except batched.PairNormUndefined:
            raise
        except UndefinedValueError as exc:  # depends on the length only: the chunk's first word
            return Refuted(
                method,
                f"the network's output is undefined on {show_word(chunk[0], alphabet)}: {exc}",
                chunk[0],
            )
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

    only = claim.only is not None
    done = kept = 0
    for m in shard.lengths():
        net = nets[m]
        ev = evaluators.get(id(net))
        if ev is None:
            ev = evaluators[id(net)] = batched.Evaluator(net, pair_norms=True)
        code = np.array([net.alphabet.index(s) for s in alphabet], dtype=np.int64)
        stream = shard.words_of_length(alphabet, m)
        first, last = shard.block(alphabet, m)
        if claim.only is None:
            for start in range(first, last, size):
                stop = min(last, start + size)
                chunk = list(itertools.islice(stream, stop - start))
                verdict = first_failure(
                    ev, chunk, code[batched.shortlex_block(len(alphabet), m, start, stop)]
                )
                if verdict is not None:
                    return Part(method, kept, verdict, verdict.word)
                done = kept = done + len(chunk)
                if progress is not None:
                    progress(done, total)
            continue
        position = {s: i for i, s in enumerate(alphabet)}
        pending: list[Word] = []
        for start in range(first, last, batched.CHUNK):
            raw = list(itertools.islice(stream, min(batched.CHUNK, last - start)))
            pending += filter(claim.only, raw)
            done += len(raw)
            if pending and (len(pending) >= size or start + len(raw) == last):
                idx = code[
                    np.array([[position[s] for s in w] for w in pending], dtype=np.int64).reshape(
                        len(pending), m
                    )
                ]
                verdict = first_failure(ev, pending, idx)
                if verdict is not None:
                    return Part(method, kept, verdict, verdict.word, only=only)
                kept += len(pending)
                pending = []
            if progress is not None:
                progress(done, total)
    return Part(method, kept, only=only)


def _trace_only(job: Job, claim: TraceProperty, shard: Shard, progress: Progress | None) -> Part:
    """The per-word check of a claim with ``only`` on the words of ``shard``: the words it is
    about, each traced only after ``only`` kept it (so the words it leaves out cost nothing)."""
    assert claim.only is not None
    alphabet = job.alphabet
    method = exhaustive_method(claim.backend)
    total = shard.count(alphabet)
    kept = 0
    body = trace_body(claim, alphabet, method)
    for done, w in enumerate(shard.words(alphabet), start=1):
        if claim.only(w):
            trace = traced(job, w, claim.backend, method)
            verdict = trace if not isinstance(trace, TRACES) else body(w, trace)
            if verdict is not None:
                return Part(method, kept, verdict, w, only=True)
            kept += 1
        if progress is not None:
            progress(done, total)
    return Part(method, kept, only=True)


# --------------------------------------------------------------------------- Bound


def _cross_entropy(s: Any, member: bool) -> Any:
    x = enclose(s)
    return iv.log(1 + iv.exp(-x)) if member else iv.log(1 + iv.exp(x))


def check_bound(job: Job, claim: Bound, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`Bound` claim over its bound."""
    return guard(
        job,
        claim,
        claim.backend,
        bound,
        progress,
        bound_body(claim, job.alphabet, exhaustive_method(claim.backend)),
    )


def bound_body(claim: Bound, alphabet: Sequence[str], method: str) -> Body:
    """The :class:`Bound` verdict on one word's trace."""

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        q = claim.quantity
        if isinstance(q, CrossEntropy):
            points = [
                (
                    Point(w, 0, 0, trace.n),
                    _cross_entropy(trace.output, q.language.contains(w)),
                    "cross-entropy",
                )
            ]
        else:
            points = list(_points(trace, q, None))
        for point, value, where in points:
            v = enclose(value) if claim.backend != "exact" or isinstance(q, CrossEntropy) else value
            if claim.absolute:
                v = (
                    abs(v)
                    if isinstance(v, Fraction)
                    else iv.mpf(
                        [
                            min(abs(v.a), abs(v.b)) if not (v.a <= 0 <= v.b) else 0,
                            max(abs(v.a), abs(v.b)),
                        ]
                    )
                )
            for side, fn, strict in (
                ("lower", claim.lower, claim.strict_lower),
                ("upper", claim.upper, claim.strict_upper),
            ):
                if fn is None:
                    continue
                limit = fn(point)
                if isinstance(v, Fraction) and isinstance(limit, Fraction):
                    diff_sign: int | None = (v > limit) - (v < limit)
                else:
                    diff_sign = interval_sign(enclose(v) - enclose(limit))
                ok_signs = (
                    ({1} if strict else {0, 1})
                    if side == "lower"
                    else ({-1} if strict else {-1, 0})
                )
                if diff_sign is None:
                    return Unknown(
                        method,
                        f"on {show_word(w, alphabet)}: {where} = {format_value(v)} is not separated from the {side} bound {format_value(limit)}",
                    )
                if diff_sign not in ok_signs:
                    return Refuted(
                        method,
                        f"on {show_word(w, alphabet)}: {'|' if claim.absolute else ''}{where}{'|' if claim.absolute else ''} = {format_value(v)} breaks the {side} bound {format_value(limit)} ({claim.bound_text})",
                        w,
                        {"value": format_value(v), side: format_value(limit)},
                    )
        return None

    return body
