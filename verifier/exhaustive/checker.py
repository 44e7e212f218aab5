"""Checkers: turn a claim about a construction into a verdict.

``exhaustive`` claims evaluate every word of Σ^{min..max} in shortlex order (so the first
counterexample found is a shortest one) with the backend the claim names:

- ``exact``: Fractions; equality and signs are exact.
- ``symbolic``: sympy with the softmax base kept as the symbol E; values are rational functions
  of E and identities are decided by ``cancel`` (a canonical form).
- ``sympy``: exact algebraic/transcendental expressions; signs from rigorous enclosures, zero by
  simplification.
- ``interval``: rigorous interval enclosures (mpmath ``iv``, 60 digits). They prove signs and
  strict inequalities and refute equalities; an equality they cannot refute is ``Unknown``.

:class:`SignForAllBases` and :class:`BlockIdentity` use z3 with an explicit context and
numerals built from Fractions; :class:`Identity` uses sympy; :class:`MirrorInvariant` is checked
on the IR (a proof for every word) and refuted by evaluation.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, assert_never

import sympy
from mpmath import iv

from netproof.symbolic import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    LayerNorm,
    Network,
    NotRationalError,
    Seq2Seq,
    TokenEmbedding,
    render,
)
from netproof.symbolic.evaluation import Trace, UndecidedSignError, UndefinedValueError
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.interval import run as run_interval
from netproof.symbolic.seq2seq import Seq2SeqTrace
from netproof.symbolic.sympy_interp import SympyArithmetic
from netproof.symbolic.sympy_interp import run as run_sympy

from netproof.verifier.claims import (
    BlockIdentity,
    Bound,
    Claim,
    Construction,
    CrossEntropy,
    ExactFact,
    ForAll,
    Identity,
    MirrorInvariant,
    Output,
    Point,
    PredictsNext,
    Proved,
    Recognizes,
    Refuted,
    SignForAllBases,
    Simulates,
    SoftAgrees,
    StateValue,
    TraceProperty,
    Unknown,
    ValueIs,
    Verdict,
    Word,
)

Progress = Callable[[int, int], None]
_TRACES = (Trace, Seq2SeqTrace)
TRACE_CACHE = 5000


def words(alphabet: Sequence[str], min_len: int, max_len: int) -> Iterator[Word]:
    """Every word with ``min_len <= |w| <= max_len`` in shortlex order."""
    for n in range(min_len, max_len + 1):
        yield from itertools.product(alphabet, repeat=n)


def count_words(alphabet: Sequence[str], min_len: int, max_len: int) -> int:
    return sum(len(alphabet) ** n for n in range(min_len, max_len + 1))


@dataclass
class Job:
    """A construction with parsed parameters, and a per-length network cache."""

    construction: Construction
    values: Mapping[str, Any]
    _cache: dict[int | None, Network] | None = None
    _traces: dict[tuple[str, Word], Trace[Any]] | None = None

    def trace(self, word: Word, backend: str) -> Trace[Any]:
        """Evaluate (and remember) the network on ``word`` with ``backend``: claims of one
        construction that use the same backend share their traces."""
        if self._traces is None:
            self._traces = {}
        key = (backend, word)
        hit = self._traces.get(key)
        if hit is None:
            if backend == "interval":
                # Intervals prove signs but cannot see an exact 0 (x − x is a small interval
                # around 0): where they leave a decision open, evaluate that word with sympy.
                try:
                    hit = _run(self, word, "interval")
                    if hit.accepted is None and isinstance(self.network(len(word)).readout, Classifier):
                        hit = _run(self, word, "sympy")
                except UndecidedSignError:
                    hit = _run(self, word, "sympy")
            else:
                hit = _run(self, word, backend)
            if len(self._traces) < TRACE_CACHE and not isinstance(hit, Seq2SeqTrace):
                # an encoder–decoder trace keeps every decoder step: too large to keep thousands
                self._traces[key] = hit
        return hit

    def network(self, n: int | None = None) -> Network:
        if self._cache is None:
            self._cache = {}
        key = n if self.construction.per_length else None
        if key not in self._cache:
            self._cache[key] = self.construction.network(self.values, n)
        return self._cache[key]

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.network(0).alphabet


_E = sympy.Symbol("E", positive=True)


def _run(job: Job, word: Word, backend: str) -> Trace[Any]:
    net = job.network(len(word))
    if isinstance(net, Seq2Seq):
        from netproof.symbolic.seq2seq import run as run_seq2seq

        if backend not in ("exact", "sympy"):
            raise ValueError(f"the encoder–decoder {net.name!r} runs with the exact or sympy backend, not {backend!r}")
        return run_seq2seq(net, word, backend=backend, max_steps=_budget(job, word))  # type: ignore[arg-type, return-value]
    if backend == "exact":
        return run_exact(net, word)
    if backend == "sympy":
        return run_sympy(net, word)
    if backend == "symbolic":
        return run_sympy(net, word, symbolic=True)
    if backend == "interval":
        return run_interval(net, word)
    raise ValueError(f"unknown backend {backend!r}")


def _budget(job: Job, word: Word) -> int:
    """The decoder step budget of an encoder–decoder run on ``word`` (see Construction.max_steps)."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS

    c = job.construction
    return DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(job.values, word)


def _method(backend: str) -> str:
    if backend == "interval":
        return "exhaustive (interval; sympy where an interval straddles 0)"
    return f"exhaustive ({backend})"


def _show(w: Word, alphabet: Sequence[str]) -> str:
    return repr(render(alphabet, w)) if w else "ε (the empty word)"


def format_value(value: Any) -> str:
    """A value as verdicts and the CLI show it: a Fraction as p/q, a sympy expression as sympy
    prints it (factored where it has symbols), an interval as its midpoint and radius."""
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, sympy.Basic):
        try:
            return str(sympy.factor(value)) if value.free_symbols else str(value)
        except (sympy.PolynomialError, TypeError):
            return str(value)
    if isinstance(value, iv.mpf):
        return _fmt_interval(value)
    return str(value)


def _fmt_interval(x: Any) -> str:
    """An enclosure as 'midpoint (±radius)' with 15 significant digits."""
    import mpmath

    mid = mpmath.mpf(x.mid.a)
    rad = mpmath.mpf(x.delta.b) / 2
    return f"{mpmath.nstr(mid, 15)} (±{mpmath.nstr(rad, 2)})"


def _enclose(value: Any) -> Any:
    """A rigorous interval around a Fraction, sympy number or interval."""
    if isinstance(value, iv.mpf):
        return value
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
        return iv.mpf(q.numerator) / iv.mpf(q.denominator)
    if isinstance(value, sympy.Basic):
        return SympyArithmetic()._enclose(sympy.sympify(value))
    raise TypeError(f"cannot enclose {value!r}")


def _iv_sign(x: Any) -> int | None:
    if x.a > 0:
        return 1
    if x.b < 0:
        return -1
    if x.a == 0 and x.b == 0:
        return 0
    return None


# --------------------------------------------------------------------------- dispatch


def check(
    job: Job,
    claim: Claim,
    *,
    max_len: int | None = None,
    progress: Progress | None = None,
    queries: list[Any] | None = None,
) -> Verdict:
    """The verdict of ``claim`` for ``job`` up to ``max_len`` (default: the claim's own bound).

    ``queries``: a list that receives the :class:`netproof.verifier.smt.encoder.SmtQuery` of every solver query
    a single-query claim (:class:`BlockIdentity`) makes, for its proof log."""
    bound = claim.max_len if max_len is None else max_len
    match claim:
        case Recognizes():
            return _recognizes(job, claim, bound, progress)
        case ValueIs():
            return _value_is(job, claim, bound, progress)
        case Bound():
            return _bound(job, claim, bound, progress)
        case SignForAllBases():
            return _sign_for_all_bases(job, claim, bound, progress)
        case MirrorInvariant():
            return _mirror(job, claim, bound, progress)
        case BlockIdentity():
            return _block_identity(job, claim, queries)
        case Identity():
            return _identity(claim)
        case TraceProperty():
            return _trace_property(job, claim, bound, progress)
        case ExactFact():
            return _exact_fact(claim)
        case PredictsNext():
            return _predicts_next(job, claim, bound, progress)
        case SoftAgrees():
            return _soft_agrees(job, claim, bound, progress)
        case ForAll():
            return _for_all(claim)
        case Simulates():
            return _simulates(job, claim, bound, progress)
        case _:
            assert_never(claim)


Body = Callable[[Word, Trace[Any]], Verdict | None]


def _traced(job: Job, w: Word, backend: str, method: str) -> Trace[Any] | Seq2SeqTrace[Any] | Verdict:
    """The trace of ``w``, or the verdict its evaluation already decides (unsupported or
    undecided: Unknown; an undefined output: Refuted)."""
    try:
        return job.trace(w, backend)
    except NotRationalError as exc:
        return Unknown(method, f"unsupported by the {backend} backend: {exc}")
    except UndecidedSignError as exc:
        return Unknown(method, f"undecided on {_show(w, job.alphabet)}: {exc}")
    except UndefinedValueError as exc:
        return Refuted(method, f"the network's output is undefined on {_show(w, job.alphabet)}: {exc}", w)


def _guard(job: Job, claim: Claim, backend: str, bound: int, progress: Progress | None, body: Body) -> Verdict:
    """Run ``body`` on every word's trace; the first non-None verdict stops the search."""
    alphabet = job.alphabet
    total = count_words(alphabet, claim.min_len, bound)
    done = 0
    method = _method(backend)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    for w in words(alphabet, claim.min_len, bound):
        trace = _traced(job, w, backend, method)
        if not isinstance(trace, _TRACES):
            return trace
        verdict = body(w, trace)
        if verdict is not None:
            return verdict
        done += 1
        if progress is not None:
            progress(done, total)
    return Proved(method, done, f"every word with {claim.min_len} <= |w| <= {bound}")


def _recognizes(job: Job, claim: Recognizes, bound: int, progress: Progress | None) -> Verdict:
    if claim.backend == "exact":
        verdict = _recognizes_batched(job, claim, bound, progress)
        if verdict is not None:
            return verdict

    return _guard(job, claim, claim.backend, bound, progress, _recognizes_body(claim, _method(claim.backend)))


def _recognizes_body(claim: Recognizes, method: str) -> Body:
    lang = claim.language

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        member = lang.contains(w)
        if trace.accepted is None:
            return Unknown(method, f"accept bit undecided on {_show(w, lang.alphabet)}")
        if trace.accepted != member:
            return Refuted(
                method,
                f"{_show(w, lang.alphabet)} is {'in' if member else 'not in'} {lang.name} but the network "
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
                return Refuted(method, f"the network's output is undefined on {_show(chunk[0], alphabet)}: {exc}", chunk[0])
            member = np.fromiter(map(lang.contains, chunk), dtype=bool, count=len(chunk))
            wrong = np.flatnonzero(got.accepted != member)
            if wrong.size:
                j = int(wrong[0])
                if progress is not None and j:
                    progress(done + j, total)
                w, accepted, is_member, logit = chunk[j], bool(got.accepted[j]), bool(member[j]), got.logit(j)
                return Refuted(
                    method,
                    f"{_show(w, lang.alphabet)} is {'in' if is_member else 'not in'} {lang.name} but the network "
                    f"{'accepts' if accepted else 'rejects'} it (logit {format_value(logit)})",
                    w,
                    {"logit": format_value(logit), "accepted": str(accepted), "member": str(is_member)},
                )
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return Proved(method, done, f"every word with {claim.min_len} <= |w| <= {bound}")


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
        d = _enclose(value) - _enclose(expected)
        s = _iv_sign(d)
        return False if s not in (0, None) else (True if s == 0 else None)
    raise ValueError(backend)


def _value_is(job: Job, claim: ValueIs, bound: int, progress: Progress | None) -> Verdict:
    undecided: list[str] = []
    body = value_is_body(claim, job.alphabet, _method(claim.backend), undecided)
    verdict = _guard(job, claim, claim.backend, bound, progress, body)
    if isinstance(verdict, Proved) and undecided:
        return Unknown(
            _method(claim.backend),
            f"the {claim.backend} backend cannot prove equality (no word refutes it; first undecided: {undecided[0]})",
        )
    return verdict


def value_is_body(claim: ValueIs, alphabet: Sequence[str], method: str, undecided: list[str] | None) -> Body:
    """With ``undecided`` a list, a word whose equality the backend cannot decide is noted there
    and the search goes on; with None it is an Unknown at once."""
    E = _E if claim.backend == "symbolic" else None

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        for point, value, where in _points(trace, claim.quantity, E):
            expected = claim.expected(point)
            if expected is None:
                continue
            same = _equal(claim.backend, value, expected)
            if same is None:
                if undecided is None:
                    return Unknown(method, f"the {claim.backend} backend cannot decide equality on {_show(w, alphabet)} ({where})")
                undecided.append(_show(w, alphabet))
                continue
            if not same:
                return Refuted(
                    method,
                    f"on {_show(w, alphabet)}: {where} is {format_value(value)}, the claim says {format_value(expected)}",
                    w,
                    {"network": format_value(value), "claimed": format_value(sympy.sympify(expected) if not isinstance(expected, Fraction) else expected)},
                )
        return None

    return body


def _trace_body(claim: TraceProperty, alphabet: Sequence[str], method: str) -> Body:
    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        failure = claim.holds(w, trace)
        if failure is not None:
            return Refuted(method, f"on {_show(w, alphabet)}: {failure}", w)
        return None

    return body


def _exact_fact(claim: ExactFact) -> Verdict:
    method = "exact rational arithmetic"
    checked, failure = claim.check()
    if failure is not None:
        return Refuted(method, failure, None)
    return Proved(method, checked, claim.cases)


def _trace_domain(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict:
    """A trace property over a domain the claim generates itself (see TraceProperty.domain)."""
    assert claim.domain is not None
    alphabet = job.alphabet
    method = _method(claim.backend)
    domain = [w for w in claim.domain(bound) if claim.min_len <= len(w) <= bound]
    if not domain:
        return Unknown(method, f"the domain of the claim has no word with {claim.min_len} <= |w| <= {bound}")
    body = _trace_body(claim, alphabet, method)
    for done, w in enumerate(domain, start=1):
        trace = _traced(job, w, claim.backend, method)
        verdict = trace if not isinstance(trace, _TRACES) else body(w, trace)
        if verdict is not None:
            return verdict
        if progress is not None:
            progress(done, len(domain))
    what = claim.domain_text or "word of the claim's domain"
    return Proved(method, len(domain), f"every {what} with {claim.min_len} <= |w| <= {bound} ({len(domain)} words)")


def _trace_property(job: Job, claim: TraceProperty, bound: int, progress: Progress | None) -> Verdict:
    if claim.domain is not None:
        return _trace_domain(job, claim, bound, progress)
    if claim.holds_batch is not None and claim.backend == "exact":
        verdict = _trace_property_batched(job, claim, bound, progress)
        if verdict is not None:
            return verdict
    if claim.only is not None:
        return _trace_only(job, claim, bound, progress)
    return _guard(job, claim, claim.backend, bound, progress, _trace_body(claim, job.alphabet, _method(claim.backend)))


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
            return Refuted(method, f"the network's output is undefined on {_show(chunk[0], alphabet)}: {exc}", chunk[0])
        assert claim.holds_batch is not None
        failures = claim.holds_batch(chunk, trace)
        if len(failures) != len(chunk):
            raise ValueError(
                f"claim {claim.id}: holds_batch returned {len(failures)} results for {len(chunk)} words; "
                "it must return one failure text or None per word, in order"
            )
        for w, failure in zip(chunk, failures, strict=True):
            if failure is not None:
                return Refuted(method, f"on {_show(w, alphabet)}: {failure}", w)
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
    method = _method(claim.backend)
    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    kept = 0
    body = _trace_body(claim, alphabet, method)
    for done, w in enumerate(words(alphabet, claim.min_len, bound), start=1):
        if claim.only(w):
            trace = _traced(job, w, claim.backend, method)
            verdict = trace if not isinstance(trace, _TRACES) else body(w, trace)
            if verdict is not None:
                return verdict
            kept += 1
        if progress is not None:
            progress(done, total)
    return Proved(method, kept, f"every word with {claim.min_len} <= |w| <= {bound} that the claim is about ({kept} words)")


def _cross_entropy(s: Any, member: bool) -> Any:
    x = _enclose(s)
    return iv.log(1 + iv.exp(-x)) if member else iv.log(1 + iv.exp(x))


def _bound(job: Job, claim: Bound, bound: int, progress: Progress | None) -> Verdict:
    return _guard(job, claim, claim.backend, bound, progress, _bound_body(claim, job.alphabet, _method(claim.backend)))


def _bound_body(claim: Bound, alphabet: Sequence[str], method: str) -> Body:
    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        q = claim.quantity
        if isinstance(q, CrossEntropy):
            points = [(Point(w, 0, 0, trace.n), _cross_entropy(trace.output, q.language.contains(w)), "cross-entropy")]
        else:
            points = list(_points(trace, q, None))
        for point, value, where in points:
            v = _enclose(value) if claim.backend != "exact" or isinstance(q, CrossEntropy) else value
            if claim.absolute:
                v = abs(v) if isinstance(v, Fraction) else iv.mpf([min(abs(v.a), abs(v.b)) if not (v.a <= 0 <= v.b) else 0, max(abs(v.a), abs(v.b))])
            for side, fn, strict in (("lower", claim.lower, claim.strict_lower), ("upper", claim.upper, claim.strict_upper)):
                if fn is None:
                    continue
                limit = fn(point)
                if isinstance(v, Fraction) and isinstance(limit, Fraction):
                    diff_sign: int | None = (v > limit) - (v < limit)
                else:
                    diff_sign = _iv_sign(_enclose(v) - _enclose(limit))
                ok_signs = ({1} if strict else {0, 1}) if side == "lower" else ({-1} if strict else {-1, 0})
                if diff_sign is None:
                    return Unknown(method, f"on {_show(w, alphabet)}: {where} = {format_value(v)} is not separated from the {side} bound {format_value(limit)}")
                if diff_sign not in ok_signs:
                    return Refuted(
                        method,
                        f"on {_show(w, alphabet)}: {'|' if claim.absolute else ''}{where}{'|' if claim.absolute else ''} = {format_value(v)} breaks the {side} bound {format_value(limit)} ({claim.bound_text})",
                        w,
                        {"value": format_value(v), side: format_value(limit)},
                    )
        return None

    return body


# --------------------------------------------------------------------------- recurrent networks


def _sets(s: frozenset[str] | None) -> str:
    return "undecided" if s is None else "{" + ", ".join(sorted(s)) + "}"


Visit = Callable[[Word, list[Any], tuple[Any, ...]], Verdict | None]


def _walk_prefixes(
    nets: Sequence[Any], backends: Sequence[str], alphabet: Sequence[str], min_len: int, bound: int,
    method: str, progress: Progress | None, visit: Visit,
) -> Verdict | int:
    """Every word of ``alphabet`` up to ``bound`` in shortlex order, each evaluated by one step
    from its prefix's state (level by level along the trie of prefixes), on every network of
    ``nets`` with its backend; ``visit(word, last steps, the first network's predicted sets after
    every prefix)`` for the words of length >= min_len. Returns the first verdict ``visit`` gives,
    or the number of words visited."""
    from netproof.symbolic.recurrent import Program

    try:
        programs = [Program(net, backend) for net, backend in zip(nets, backends, strict=True)]  # type: ignore[arg-type]
    except NotRationalError as exc:
        return Unknown(method, f"unsupported: {exc}")
    total = count_words(alphabet, max(min_len, 1), bound)
    level: list[tuple[Word, list[Any], tuple[Any, ...]]] = [((), [p.start() for p in programs], ())]
    done = 0
    for length in range(1, bound + 1):
        nxt: list[tuple[Word, list[Any], tuple[Any, ...]]] = []
        for w, states, path in level:
            for symbol in alphabet:
                w2 = (*w, symbol)
                try:
                    stepped = [p.step(st, symbol) for p, st in zip(programs, states, strict=True)]
                except NotRationalError as exc:
                    return Unknown(method, f"unsupported on {_show(w2, alphabet)}: {exc}")
                path2 = (*path, stepped[0][1].predicted)
                if length >= min_len:
                    verdict = visit(w2, [rec for _st, rec in stepped], path2)
                    if verdict is not None:
                        return verdict
                    done += 1
                    if progress is not None:
                        progress(done, total)
                if length < bound:
                    nxt.append((w2, [st for st, _rec in stepped], path2))
        level = nxt
    return done


def _recurrent(job: Job, claim: Claim, method: str) -> Any:
    from netproof.symbolic.recurrent_ir import RecurrentNetwork

    net = job.network(0)
    if not isinstance(net, RecurrentNetwork):
        return Unknown(method, f"unsupported: {type(claim).__name__} is a claim about a recurrent network, "
                       f"and {job.construction.name} builds a {type(net).__name__}")
    return net


def _predicts_next(job: Job, claim: PredictsNext, bound: int, progress: Progress | None) -> Verdict:
    method = "exhaustive (exact, recurrent, prefix trie)"
    net = _recurrent(job, claim, method)
    if isinstance(net, Unknown):
        return net
    task = claim.task
    alphabet = net.alphabet
    if bound < max(claim.min_len, 1):
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no nonempty word: nothing was checked")

    def visit(w: Word, recs: list[Any], predicted: tuple[Any, ...]) -> Verdict | None:
        got = recs[0].predicted
        want = task.next_sets(w)[-1]
        if got != want:
            return Refuted(
                method,
                f"on {_show(w, alphabet)}: after {len(w)} symbol{'s' if len(w) != 1 else ''} the network predicts "
                f"{_sets(got)}, the {task.name} target is {_sets(want)}",
                w,
                {"predicted": _sets(got), "target": _sets(want), "t": str(len(w))},
            )
        accepted, member = task.accepts(w, predicted), task.contains(w)
        if accepted != member:
            return Refuted(
                method,
                f"on {_show(w, alphabet)}: the predictions {'accept' if accepted else 'reject'} it but it is "
                f"{'in' if member else 'not in'} {task.name}",
                w,
                {"accepted": str(accepted), "member": str(member)},
            )
        return None

    result = _walk_prefixes([net], ["exact"], alphabet, claim.min_len, bound, method, progress, visit)
    if not isinstance(result, int):
        return result
    return Proved(
        method, result,
        f"every string over {{{', '.join(alphabet)}}} with {max(claim.min_len, 1)} <= |w| <= {bound}: the predicted "
        f"set after every prefix is the {task.name} target",
    )


def _soft_agrees(job: Job, claim: SoftAgrees, bound: int, progress: Progress | None) -> Verdict:
    method = "exhaustive (interval soft vs exact hard, prefix trie)"
    net = _recurrent(job, claim, method)
    if isinstance(net, Unknown):
        return net
    alphabet = net.alphabet
    if tuple(claim.soft.alphabet) != tuple(alphabet):
        return Unknown(method, f"unsupported: the soft network reads {claim.soft.alphabet}, the exact one {alphabet}")
    if bound < max(claim.min_len, 1):
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no nonempty word: nothing was checked")
    margin: list[Any] = []
    threshold = claim.soft.readout.threshold

    def visit(w: Word, recs: list[Any], _predicted: tuple[Any, ...]) -> Verdict | None:
        hard, soft = recs
        if soft.predicted is None:
            return Unknown(method, f"on {_show(w, alphabet)}: an enclosure of y straddles {threshold}: "
                           + ", ".join(f"y:{k} = {format_value(v)}" for k, v in soft.y.items()))
        if soft.predicted != hard.predicted:
            return Refuted(
                method,
                f"on {_show(w, alphabet)} ({claim.scale_text}): the soft network predicts {_sets(soft.predicted)}, "
                f"the exact one {_sets(hard.predicted)}",
                w,
                {"soft": _sets(soft.predicted), "exact": _sets(hard.predicted)},
            )
        for v in soft.y.values():
            gap = abs(v - _enclose(threshold))
            if not margin or gap.a < margin[0].a:
                margin[:] = [gap]
        return None

    result = _walk_prefixes([net, claim.soft], ["exact", "interval"], alphabet, claim.min_len, bound, method, progress, visit)
    if not isinstance(result, int):
        return result
    low = f"{float(margin[0].a):.3g}" if margin else "n/a"
    return Proved(
        method, result,
        f"every string with {max(claim.min_len, 1)} <= |w| <= {bound} ({claim.scale_text}): the soft network's "
        f"thresholded outputs equal the exact ones; smallest |y − {threshold}| met >= {low}",
    )


# --------------------------------------------------------------------------- z3 claims


def _z3_poly(z3: Any, ctx: Any, expr: Any, var: Any) -> Any:
    poly = sympy.Poly(sympy.expand(expr), _E)
    acc = z3.RealVal("0", ctx)
    for coeff in poly.all_coeffs():
        q = Fraction(int(sympy.numer(coeff)), int(sympy.denom(coeff)))
        acc = acc * var + z3.RealVal(str(q), ctx)
    return acc


def _sign_for_all_bases(job: Job, claim: SignForAllBases, bound: int, progress: Progress | None) -> Verdict:
    import z3

    ctx = z3.Context()
    E = z3.Real("E", ctx)
    lang = claim.language
    alphabet = job.alphabet
    method = "exhaustive (symbolic in E) + smt (z3 nlsat) per word"
    checked = 0

    def solve(word: Word, s: Any, lo: Fraction, hi: Fraction | None, want_correct: bool) -> tuple[str, Fraction | None]:
        """Is there E in (lo, hi] where the word is classified right (want_correct=False) or
        wrong (want_correct=True)? Returns ('unsat', None) or ('sat', E) or ('unknown', None)."""
        num, den = sympy.fraction(sympy.cancel(sympy.together(sympy.sympify(s))))
        prod = _z3_poly(z3, ctx, num, E) * _z3_poly(z3, ctx, den, E)
        accept = prod > 0
        member = lang.contains(word)
        right = accept if member else z3.Not(accept)
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", 20000)
        solver.add(E > z3.RealVal(str(lo), ctx))
        if hi is not None:
            solver.add(E <= z3.RealVal(str(hi), ctx))
        solver.add(z3.Not(right) if want_correct else right)
        result = solver.check()
        if result == z3.unsat:
            return "unsat", None
        if result == z3.sat:
            val = solver.model().eval(E, model_completion=True)
            if z3.is_rational_value(val):
                return "sat", Fraction(val.numerator_as_long(), val.denominator_as_long())
            return "sat", None
        return "unknown", None

    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    for w in words(alphabet, claim.min_len, bound):
        m = len(w)
        try:
            s = job.trace(w, "symbolic").output
        except (UndecidedSignError, NotRationalError) as exc:
            return Unknown(method, f"on {_show(w, alphabet)}: {exc}")
        threshold = claim.threshold(m)
        status, at = solve(w, s, threshold, None, want_correct=True)
        if status == "sat":
            return Refuted(
                method,
                f"on {_show(w, alphabet)} with E = {at if at is not None else '(irrational)'} > {threshold}: "
                f"s = {format_value(s)} has the wrong sign",
                w,
                {"E": str(at), "s(E)": format_value(s)},
            )
        if status == "unknown":
            return Unknown(method, f"z3 returned unknown on {_show(w, alphabet)}")
        checked += 1
        if progress is not None:
            progress(checked, total)
    if claim.witness is not None:
        for m in range(max(claim.min_len, 1), bound + 1):
            threshold = claim.threshold(m)
            if threshold <= 1:
                continue
            w = claim.witness(m)
            s = _run(job, w, "symbolic").output
            status, at = solve(w, s, Fraction(1), threshold, want_correct=False)
            if status == "sat":
                return Refuted(
                    method,
                    f"tightness fails: the witness {_show(w, alphabet)} is classified right at E = {at} <= {threshold}",
                    w,
                    {"E": str(at)},
                )
            if status == "unknown":
                return Unknown(method, f"z3 returned unknown on the witness {_show(w, alphabet)}")
            checked += 1
    return Proved(
        method,
        checked,
        f"every word with {claim.min_len} <= |w| <= {bound}, for all real E > {claim.threshold_text}"
        + ("; the witness is wrong for every E in (1, threshold]" if claim.witness else ""),
    )


def _sympy_to_z3(z3: Any, ctx: Any, expr: Any, env: Mapping[str, Any]) -> Any:
    expr = sympy.sympify(expr)
    if expr.is_Symbol:
        return env[str(expr)]
    if expr.is_Rational:
        return z3.RealVal(str(Fraction(int(expr.p), int(expr.q))), ctx)
    if isinstance(expr, sympy.Add):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            out = out + _sympy_to_z3(z3, ctx, a, env)
        return out
    if isinstance(expr, sympy.Mul):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            out = out * _sympy_to_z3(z3, ctx, a, env)
        return out
    if isinstance(expr, sympy.Piecewise):
        *cases, (last, _cond) = expr.args
        out = _sympy_to_z3(z3, ctx, last, env)
        for value, cond in reversed(cases):
            out = z3.If(_sympy_to_z3(z3, ctx, cond, env), _sympy_to_z3(z3, ctx, value, env), out)
        return out
    if isinstance(expr, sympy.Pow) and expr.exp == -1 and expr.base.is_Rational:
        return _sympy_to_z3(z3, ctx, sympy.Rational(1, 1) / expr.base, env)
    if isinstance(expr, sympy.Pow) and expr.exp == -1:
        return z3.RealVal("1", ctx) / _sympy_to_z3(z3, ctx, expr.base, env)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            other = _sympy_to_z3(z3, ctx, a, env)
            out = z3.If(other < out, other, out) if isinstance(expr, sympy.Min) else z3.If(other > out, other, out)
        return out
    if isinstance(expr, sympy.Abs):
        inner = _sympy_to_z3(z3, ctx, expr.args[0], env)
        return z3.If(inner < 0, -inner, inner)
    if expr is sympy.true or expr is sympy.false:
        return z3.BoolVal(bool(expr), ctx)
    if isinstance(expr, sympy.Eq):
        return _sympy_to_z3(z3, ctx, expr.lhs, env) == _sympy_to_z3(z3, ctx, expr.rhs, env)
    if isinstance(expr, sympy.core.relational.Relational):
        lhs, rhs = _sympy_to_z3(z3, ctx, expr.lhs, env), _sympy_to_z3(z3, ctx, expr.rhs, env)
        ops = {"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs, "!=": lhs != rhs}
        return ops[expr.rel_op]
    if isinstance(expr, sympy.And):
        return z3.And([_sympy_to_z3(z3, ctx, a, env) for a in expr.args])
    if isinstance(expr, sympy.Or):
        return z3.Or([_sympy_to_z3(z3, ctx, a, env) for a in expr.args])
    if isinstance(expr, sympy.Not):
        return z3.Not(_sympy_to_z3(z3, ctx, expr.args[0], env))
    if isinstance(expr, sympy.Implies):
        return z3.Implies(_sympy_to_z3(z3, ctx, expr.args[0], env), _sympy_to_z3(z3, ctx, expr.args[1], env))
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        base = _sympy_to_z3(z3, ctx, expr.base, env)
        out = base
        for _ in range(int(expr.exp) - 1):
            out = out * base
        return out
    raise NotImplementedError(f"unsupported: {type(expr).__name__} in {expr}")


def _block_identity(job: Job, claim: BlockIdentity, queries: list[Any] | None = None) -> Verdict:
    from netproof.verifier.smtlib import solve

    method = f"smt (z3), all {claim.domain}"
    built = block_identity_query(job, claim)
    if isinstance(built, Unknown):
        return built
    solver, ints = built
    shown = ", ".join(claim.variables) if len(claim.variables) <= 4 else f"{len(claim.variables)} variables"
    query, model = solve(solver, name=claim.id, logic=None, timeout=20.0,
                         reason_unsat=f"the block's outputs equal the lemma's for all {claim.domain} {shown}")
    if query.result == "sat":
        values = {v: str(model.eval(ints[v], model_completion=True)) for v in claim.variables}
        detail = f"fails at {', '.join(f'{k}={v}' for k, v in values.items())}"
        query = dataclasses.replace(query, reason=detail)
    if queries is not None:
        queries.append(query)
    if query.result == "unsat":
        return Proved(method, 1, f"for all {claim.domain} {shown} (unbounded)")
    if query.result == "sat":
        return Refuted(method, detail, None, values)
    return Unknown(method, f"z3: {query.reason}")


def block_identity_query(job: Job, claim: BlockIdentity) -> tuple[Any, dict[str, Any]] | Unknown:
    """The z3 solver (in its own context) whose unsat proves ``claim``, with the lemma's
    variables; Unknown when the block cannot be encoded. Built, not solved: proof-log freshness
    checks rebuild it and compare its SMT-LIB2 text."""
    import z3

    method = f"smt (z3), all {claim.domain}"
    net = job.network(0)
    block = next((s.block for s in net.layers if s.block.name == claim.block), None)
    if not isinstance(block, FFN):
        return Unknown(method, f"unsupported: no FFN block named {claim.block!r}")
    ctx = z3.Context()
    if claim.domain == "integers":
        ints = {v: z3.Int(v, ctx) for v in claim.variables}
        env = {v: z3.ToReal(x) for v, x in ints.items()}
    else:
        ints = {v: z3.Real(v, ctx) for v in claim.variables}
        env = dict(ints)
    x: dict[str, Any] = {}
    for d, e in claim.inputs.items():
        x[d] = _sympy_to_z3(z3, ctx, e, env)
    for step in block.steps:
        match step:
            case Affine():
                missing = [i for i in step.inputs if i not in x]
                if missing:
                    return Unknown(method, f"unsupported: the lemma does not give inputs {missing}")
                out = {}
                for o, row, b in zip(step.outputs, step.weights, step.bias, strict=True):
                    acc = z3.RealVal(str(b), ctx)
                    for i, w in zip(step.inputs, row, strict=True):
                        if w != 0:
                            acc = acc + z3.RealVal(str(w), ctx) * x[i]
                    out[o] = acc
                x = out
            case Activation(kind=kind):
                zero, one = z3.RealVal("0", ctx), z3.RealVal("1", ctx)
                if kind == "relu":
                    x = {k: z3.If(v > zero, v, zero) for k, v in x.items()}
                elif kind == "step":
                    x = {k: z3.If(v > zero, one, zero) for k, v in x.items()}
                else:
                    x = {k: z3.If(v < zero, zero, z3.If(v > one, one, v)) for k, v in x.items()}
            case LayerNorm():
                return Unknown(method, "unsupported: layer norm (√) inside the block")
            case _:
                assert_never(step)
    solver = z3.Solver(ctx=ctx)
    for a in claim.assumptions:
        solver.add(_sympy_to_z3(z3, ctx, a, env))
    out_env = {**env, **x}
    goals = [x[d] == _sympy_to_z3(z3, ctx, e, env) for d, e in claim.outputs.items()]
    goals += [_sympy_to_z3(z3, ctx, c, out_env) for c in claim.conditions]
    solver.add(z3.Not(z3.And(goals)))
    return solver, ints


def _identity(claim: Identity) -> Verdict:
    """A scalar identity, or a matrix identity entry by entry (sympy matrices of one shape)."""
    method = "sympy (simplify)"
    lhs_all, rhs_all = claim.lhs, claim.rhs
    matrix = isinstance(lhs_all, sympy.MatrixBase) or isinstance(rhs_all, sympy.MatrixBase)
    if matrix:
        if not (isinstance(lhs_all, sympy.MatrixBase) and isinstance(rhs_all, sympy.MatrixBase)) or (
            lhs_all.shape != rhs_all.shape
        ):
            shapes = [getattr(x, "shape", "a scalar") for x in (lhs_all, rhs_all)]
            return Refuted(method, f"the sides have different shapes: {shapes[0]} and {shapes[1]}", None)
        entries = [
            (f"entry [{r}, {c}]", lhs_all[r, c], rhs_all[r, c])
            for r in range(lhs_all.rows)
            for c in range(lhs_all.cols)
        ]
    else:
        entries = [("", lhs_all, rhs_all)]
    undecided: list[str] = []
    for where_entry, lhs_e, rhs_e in entries:
        lhs_e, rhs_e = sympy.sympify(lhs_e), sympy.sympify(rhs_e)
        if lhs_e == rhs_e:
            continue
        # A sample that separates the sides is a counterexample: try it before simplifying (a
        # false identity of exponentials can take sympy a long time to not simplify to 0).
        refuted = _identity_sample(claim, method, where_entry, lhs_e, rhs_e)
        if refuted is not None:
            return refuted
        diff = sympy.simplify(sympy.expand_log(lhs_e - rhs_e, force=True))
        if diff != 0:
            undecided.append(f"{where_entry + ': ' if where_entry else ''}{diff}")
    if not undecided:
        detail = f"identity holds symbolically ({len(entries)} entries)" if matrix else "identity holds symbolically"
        return Proved(method, len(entries), detail)
    return Unknown(method, f"sympy could not simplify the difference to 0: {undecided[0]}")


def _identity_sample(claim: Identity, method: str, entry: str, lhs_e: Any, rhs_e: Any) -> Refuted | None:
    """Refuted when the claim's sample values separate the two sides (rigorous intervals)."""
    symbols = lhs_e.free_symbols | rhs_e.free_symbols
    used = sorted((sym for sym in symbols if sym.name in claim.sample), key=lambda x: x.name)
    subs = {sym: sympy.Rational(claim.sample[sym.name].numerator, claim.sample[sym.name].denominator) for sym in used}
    lhs, rhs = lhs_e.subs(subs), rhs_e.subs(subs)
    if lhs.free_symbols or rhs.free_symbols:
        return None
    if _iv_sign(_enclose(lhs) - _enclose(rhs)) not in (1, -1):
        return None
    shown = {sym.name: claim.sample[sym.name] for sym in used}
    where = ", ".join(f"{k}={v}" for k, v in shown.items())
    at = f"{entry} " if entry else ""
    return Refuted(
        method,
        f"{at}at {where}: left side = {sympy.N(lhs, 8)}, right side = {sympy.N(rhs, 8)}",
        None,
        {
            "lhs": str(sympy.N(lhs, 15)),
            "rhs": str(sympy.N(rhs, 15)),
            **({"entry": entry} if entry else {}),
            **{k: str(v) for k, v in shown.items()},
        },
    )


# --------------------------------------------------------------------------- ForAll, Simulates


def _for_all(claim: ForAll) -> Verdict:
    import z3

    method = f"smt (z3), all {claim.domain}"
    ctx = z3.Context()
    if claim.domain == "integers":
        variables = {v: z3.Int(v, ctx) for v in claim.variables}
        env = {v: z3.ToReal(x) for v, x in variables.items()}
    else:
        variables = {v: z3.Real(v, ctx) for v in claim.variables}
        env = dict(variables)
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", 20000)
    try:
        for a in claim.assumptions:
            solver.add(_sympy_to_z3(z3, ctx, a, env))
        solver.add(z3.Not(_sympy_to_z3(z3, ctx, claim.goal, env)))
    except NotImplementedError as exc:
        return Unknown(method, str(exc))
    result = solver.check()
    if result == z3.unsat:
        return Proved(method, 1, f"for all {claim.domain} {', '.join(claim.variables)} under the assumptions (unbounded)")
    if result == z3.sat:
        model = solver.model()
        values = {v: str(model.eval(x, model_completion=True)) for v, x in variables.items()}
        return Refuted(method, f"fails at {', '.join(f'{k}={v}' for k, v in values.items())}", None, values)
    return Unknown(method, f"z3: {solver.reason_unknown()}")


def _simulates(job: Job, claim: Simulates, bound: int, progress: Progress | None) -> Verdict:
    method = "exhaustive (exact), step by step"
    alphabet = job.alphabet
    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(method, f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked")
    steps = 0
    configurations = 0
    for done, w in enumerate(words(alphabet, claim.min_len, bound), start=1):
        verdict = _simulates_word(job, claim, w, method)
        if not isinstance(verdict, tuple):
            return verdict
        steps += verdict[0]
        configurations += verdict[1]
        if progress is not None:
            progress(done, total)
    what = f"; {configurations} machine configurations matched" if claim.machine is not None else ""
    return Proved(method, total, f"every word with {claim.min_len} <= |w| <= {bound}: {steps} decoder steps{what}")


def _simulates_word(job: Job, claim: Simulates, w: Word, method: str) -> Verdict | tuple[int, int]:
    """The Refuted/Unknown verdict of ``claim`` on ``w``, or (steps, configurations) checked."""
    from netproof.symbolic.seq2seq import run as run_seq2seq

    net = job.network(len(w))
    shown = _show(w, job.alphabet)
    if not isinstance(net, Seq2Seq):
        return Unknown(method, f"unsupported: Simulates is about an encoder–decoder (Seq2Seq), {net.name!r} is a {type(net).__name__}")
    trace = run_seq2seq(net, w, max_steps=min(claim.max_steps, _budget(job, w)))
    T = len(trace.steps)
    hs = claim.rnn.run_inputs(claim.inputs(w, T))
    units = claim.rnn.unit_names
    for t in range(T):
        y = trace.y(t)
        diff = [(d, u, y[d], hs[t][k]) for k, (d, u) in enumerate(zip(claim.hidden, units, strict=True)) if y[d] != hs[t][k]]
        if diff:
            more = f" (and {len(diff) - 3} more units)" if len(diff) > 3 else ""
            text = ", ".join(f"y_{t}[{d}] = {a} but h_{t}[{u}] = {b}" for d, u, a, b in diff[:3])
            return Refuted(
                method, f"on {shown}: first failing step t = {t}: {text}{more}", w,
                {"t": str(t), **{d: f"{a} (expected {b})" for d, _u, a, b in diff[:3]}},
            )
    rnn_halt = next(
        (t for t in range(T) if sum((claim.halt.get(u, Fraction(0)) * v for u, v in zip(units, hs[t], strict=True)), Fraction(0)) == 1),
        None,
    )
    if rnn_halt != trace.halted_at:
        return Refuted(
            method, f"on {shown}: the decoder halts at step {trace.halted_at} but the RNN at step {rnn_halt} "
            f"(within {claim.max_steps} steps)", w, {"decoder_halt": str(trace.halted_at), "rnn_halt": str(rnn_halt)},
        )
    configurations = 0
    if claim.machine is not None and claim.decode is not None:
        pairs = claim.machine(w)
        for k, (tick, conf) in enumerate(pairs):
            if tick >= T:
                return Refuted(method, f"on {shown}: the decoder stopped at step {T - 1}, before configuration {k} (tick {tick}): {conf}", w, {"k": str(k)})
            got = claim.decode(dict(zip(units, hs[tick], strict=True)))
            if got != conf:
                return Refuted(
                    method, f"on {shown}: at step t = {tick} (configuration {k}) the decoder holds {got}; the machine is in {conf}",
                    w, {"t": str(tick), "k": str(k)},
                )
            configurations += 1
        if trace.halted_at != pairs[-1][0]:
            return Refuted(
                method, f"on {shown}: the machine halts at configuration {len(pairs) - 1} (step {pairs[-1][0]}) but the decoder at step {trace.halted_at}",
                w, {"t": str(pairs[-1][0])},
            )
    return T, configurations


# --------------------------------------------------------------------------- mirror


def _mirror_structure(net: Network, pre: str) -> str | None:
    """None if the IR is closed under x ↦ [x; −x]; else the first place where it is not.

    Every check runs both ways (from d to −d and from −d to d), so a write or a positional
    feature on one side only is caught.
    """
    dims = set(net.dims)

    def mirror(d: str) -> str:
        return d[len(pre):] if d.startswith(pre) else pre + d

    for d in net.dims:
        if mirror(d) not in dims:
            return f"dim {d!r} has no mirror {mirror(d)!r}"
    emb = net.embedding
    if not isinstance(emb, TokenEmbedding):
        return "not a token embedding"
    for token, row in emb.table:
        vals = dict(row)
        for d in net.dims:
            if vals.get(mirror(d), Fraction(0)) != -vals.get(d, Fraction(0)):
                return f"embedding of {token!r}: {mirror(d)} = {vals.get(mirror(d), 0)} but {d} = {vals.get(d, 0)}"
    pos: dict[tuple[str, str], Fraction] = {}
    for d, f, c in emb.positional:
        pos[(d, f)] = pos.get((d, f), Fraction(0)) + c
    for (d, f), c in pos.items():
        if pos.get((mirror(d), f), Fraction(0)) != -c:
            return f"positional feature {f!r}: {d} gets {c}·{f} but {mirror(d)} does not get {-c}·{f}"

    def mirrored(a: Affine) -> str | None:
        rows = dict(zip(a.outputs, zip(a.weights, a.bias, strict=True), strict=True))
        for o, (w, b) in rows.items():
            m = mirror(o)
            if m not in rows:
                return f"{o!r} is written but {m!r} is not"
            mw, mb = rows[m]
            if tuple(-x for x in w) != mw or mb != -b:
                return f"{m!r} is not written as −({o})"
        return None

    for sub in net.layers:
        block = sub.block
        if sub.post_ln is not None and sub.post_ln.over is not None:
            return f"{block.name}: layer norm over a sub-vector"
        if isinstance(block, Convolution):
            return f"{block.name}: a convolution block (not checked structurally)"
        if isinstance(block, AttentionLayer):
            maps = [block.output] if block.output is not None else [h.value for h in block.heads]
        else:
            maps = [block.steps[-1]] if block.steps else []  # type: ignore[list-item]
        for a in maps:
            assert isinstance(a, Affine)
            fault = mirrored(a)
            if fault is not None:
                return f"{block.name}: {fault}"
    return None


def _mirror(job: Job, claim: MirrorInvariant, bound: int, progress: Progress | None) -> Verdict:
    net = job.network(0)
    pre = claim.mirror_prefix
    fault = _mirror_structure(net, pre)
    if fault is None:
        return Proved(
            "structural (IR)",
            1,
            "embedding, every written map and every layer norm are closed under x ↦ [x; −x], so every "
            "state is [u; −u] for every word of every length",
        )
    alphabet = job.alphabet
    pairs = [(d, pre + d) for d in net.dims if not d.startswith(pre) and pre + d in net.dims]

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        for state in trace.states[1:]:
            for t in range(trace.n):
                for d, m in pairs:
                    total = _enclose(trace.value(state.label, t, d)) + _enclose(trace.value(state.label, t, m))
                    if _iv_sign(total) in (1, -1):
                        return Refuted(
                            "exhaustive (interval)",
                            f"on {_show(w, alphabet)} after {state.label!r} at position {trace.positions[t]}: "
                            f"{d} = {format_value(trace.value(state.label, t, d))} but {m} = {format_value(trace.value(state.label, t, m))} "
                            f"(structural cause: {fault})",
                            w,
                            {d: format_value(trace.value(state.label, t, d)), m: format_value(trace.value(state.label, t, m))},
                        )
        return None

    verdict = _guard(job, claim, "interval", bound, progress, body)
    if isinstance(verdict, Proved):
        return Unknown("structural (IR)", f"the IR is not mirror-closed ({fault}) but no word up to {bound} shows it")
    return verdict


# --------------------------------------------------------------------------- one word


def check_word(job: Job, claim: Claim, word: Word) -> Verdict | None:
    """The verdict of ``claim`` on the one word ``word``: a :class:`Refuted` (with the same
    message the exhaustive check gives for that word), an :class:`Unknown` when the claim's
    backend cannot decide it, or None when the claim holds on it. For replaying a counterexample
    found elsewhere (``netproof fuzz``, a user's word).

    Only claims checked word by word have a per-word verdict (:class:`Recognizes`,
    :class:`ValueIs`, :class:`Bound`, :class:`TraceProperty`); the others give an
    :class:`Unknown` that says to use :func:`check`. A :class:`TraceProperty` word that its
    ``only`` leaves out gives None; a ``domain`` is not checked (the caller draws from it).
    A word outside the alphabet is a ``ValueError``.
    """
    alphabet = job.alphabet
    w = tuple(word)
    bad = [s for s in w if s not in alphabet]
    if bad:
        raise ValueError(f"word {w!r} has symbols {bad} outside the alphabet {alphabet} of {job.construction.name}")
    if isinstance(claim, Simulates):
        verdict = _simulates_word(job, claim, w, "single word (exact), step by step")
        return None if isinstance(verdict, tuple) else verdict
    if not isinstance(claim, (Recognizes, ValueIs, Bound, TraceProperty)):
        return Unknown("single word", f"a {type(claim).__name__} claim is not checked word by word; use check()")
    backend = claim.backend
    method = f"single word ({backend})"
    if isinstance(claim, TraceProperty) and claim.only is not None and not claim.only(w):
        return None
    trace = _traced(job, w, backend, method)
    if not isinstance(trace, _TRACES):
        return trace
    match claim:
        case Recognizes():
            body = _recognizes_body(claim, method)
        case ValueIs():
            body = value_is_body(claim, alphabet, method, None)
        case Bound():
            body = _bound_body(claim, alphabet, method)
        case TraceProperty():
            body = _trace_body(claim, alphabet, method)
        case _:
            assert_never(claim)
    return body(w, trace)
