"""Words and jobs: the shortlex enumeration of Σ^{min..max}, :class:`Job` (a construction built
for one set of parameters, with its network and trace caches) and the helpers every exhaustive
check shares: running a word with a backend, showing words and values, rigorous enclosures.

May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters, sympy and
mpmath; never the claim-kind checkers of this package, SMT, fuzzing, floats, campaigns or the CLI.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from mpmath import iv

from netproof.symbolic import Classifier, Network, Seq2Seq, render
from netproof.symbolic.evaluation import Trace, UndecidedSignError
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.interval import run as run_interval
from netproof.symbolic.seq2seq import Seq2SeqTrace
from netproof.symbolic.sympy_interp import SympyArithmetic
from netproof.symbolic.sympy_interp import run as run_sympy
from netproof.verifier.claims import Construction, Verdict, Word

__all__ = [
    "BASE_E",
    "TRACES",
    "TRACE_CACHE",
    "Job",
    "Part",
    "Progress",
    "Shard",
    "count_words",
    "decoder_budget",
    "enclose",
    "exhaustive_method",
    "format_value",
    "interval_sign",
    "run_word",
    "shortlex_key",
    "show_word",
    "words",
]

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as a check goes through its words."""
TRACES = (Trace, Seq2SeqTrace)
"""The trace types a run gives (anything else a check meets in their place is a verdict)."""
TRACE_CACHE = 5000
"""How many traces a :class:`Job` keeps."""


def words(alphabet: Sequence[str], min_len: int, max_len: int) -> Iterator[Word]:
    """Every word with ``min_len <= |w| <= max_len`` in shortlex order."""
    for n in range(min_len, max_len + 1):
        yield from itertools.product(alphabet, repeat=n)


def count_words(alphabet: Sequence[str], min_len: int, max_len: int) -> int:
    """The number of words with ``min_len <= |w| <= max_len``."""
    return sum(len(alphabet) ** n for n in range(min_len, max_len + 1))


def shortlex_key(word: Word, alphabet: Sequence[str]) -> tuple[int, tuple[int, ...]]:
    """The key that sorts words in shortlex order over ``alphabet``: length, then symbol by symbol
    in the alphabet's order (the order of :func:`words`)."""
    return len(word), tuple(alphabet.index(s) for s in word)


@dataclass(frozen=True, slots=True)
class Shard:
    """The words ``w`` with ``min_len <= |w| <= max_len`` that begin with ``prefix``, in shortlex
    order: a part of a claim's bound that a worker checks on its own. ``Shard((), min, max)`` is
    the whole bound; the shards of :func:`netproof.verifier.exhaustive.shards.split` cover it,
    each word once."""

    prefix: Word = ()
    min_len: int = 0
    max_len: int = 0

    def lengths(self) -> range:
        """The word lengths the shard has words of."""
        return range(max(self.min_len, len(self.prefix)), self.max_len + 1)

    def block(self, alphabet: Sequence[str], m: int) -> tuple[int, int]:
        """The shortlex ranks ``start, stop`` of its words of length ``m`` among all of Σ^m (the
        words with one prefix are one run of ranks)."""
        rest = len(alphabet) ** (m - len(self.prefix))
        rank = 0
        for s in self.prefix:
            rank = rank * len(alphabet) + alphabet.index(s)
        return rank * rest, (rank + 1) * rest

    def words_of_length(self, alphabet: Sequence[str], m: int) -> Iterator[Word]:
        """Its words of length ``m``, in shortlex order."""
        tails = itertools.product(alphabet, repeat=m - len(self.prefix))
        if not self.prefix:
            return tails
        return (self.prefix + tail for tail in tails)

    def words(self, alphabet: Sequence[str]) -> Iterator[Word]:
        """Its words, in shortlex order."""
        for m in self.lengths():
            yield from self.words_of_length(alphabet, m)

    def count(self, alphabet: Sequence[str]) -> int:
        """The number of its words."""
        return sum(len(alphabet) ** (m - len(self.prefix)) for m in self.lengths())


@dataclass(frozen=True, slots=True)
class Part:
    """What a word-by-word check found in one :class:`Shard`: the ``method`` it used, how many
    words it ``checked`` and found the claim held on (for a claim with ``only``: those the claim
    is about, ``only`` then True), the first word ``at`` which it stopped with the verdict
    ``stop`` there (refuted or unknown; None: it went through every word), and the first word
    whose equality the backend left ``undecided`` without stopping (a :class:`ValueIs` claim).

    The verdict of a whole bound follows from its parts alone
    (:func:`netproof.verifier.exhaustive.shards.merge`): the earliest stop in shortlex order, else
    the earliest undecided word, else proved for the sum of the words checked."""

    method: str
    checked: int
    stop: Verdict | None = None
    at: Word | None = None
    undecided: Word | None = None
    only: bool = False


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
                    hit = run_word(self, word, "interval")
                    if hit.accepted is None and isinstance(
                        self.network(len(word)).readout, Classifier
                    ):
                        hit = run_word(self, word, "sympy")
                except UndecidedSignError:
                    hit = run_word(self, word, "sympy")
            else:
                hit = run_word(self, word, backend)
            if len(self._traces) < TRACE_CACHE and not isinstance(hit, Seq2SeqTrace):
                # an encoder–decoder trace keeps every decoder step: too large to keep thousands
                self._traces[key] = hit
        return hit

    def network(self, n: int | None = None) -> Network:
        if self._cache is None:
            self._cache = {}
        key = n if self.construction.per_length else None
        if key not in self._cache:
            # typed Network for the engines that take only those; a RecurrentNetwork or Seq2Seq
            # comes too, and each place that runs one checks its type first (run_word)
            self._cache[key] = self.construction.network(self.values, n)  # type: ignore[assignment]
        return self._cache[key]

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.network(0).alphabet


BASE_E = sympy.Symbol("E", positive=True)
"""The softmax base E of the ``symbolic`` backend (a positive symbol)."""


def run_word(job: Job, word: Word, backend: str) -> Trace[Any]:
    """The trace of ``word`` on the job's network with ``backend`` (not cached: see :meth:`Job.trace`)."""
    net = job.network(len(word))
    if isinstance(net, Seq2Seq):
        from netproof.symbolic.seq2seq import run as run_seq2seq

        if backend not in ("exact", "sympy"):
            raise ValueError(
                f"the encoder–decoder {net.name!r} runs with the exact or sympy backend, not {backend!r}"
            )
        # typed Trace for the word-by-word bodies; an encoder–decoder's Seq2SeqTrace comes only
        # with its TraceProperty claims, whose predicates take the trace they are given
        return run_seq2seq(net, word, backend=backend, max_steps=decoder_budget(job, word))
    return run_network(net, word, backend)


def run_network(net: Network, word: Word, backend: str) -> Trace[Any]:
    """The trace of ``word`` on ``net`` with ``backend`` (``exact``, ``sympy``, ``symbolic``
    or ``interval``)."""
    if backend == "exact":
        return run_exact(net, word)
    if backend == "sympy":
        return run_sympy(net, word)
    if backend == "symbolic":
        return run_sympy(net, word, symbolic=True)
    if backend == "interval":
        return run_interval(net, word)
    raise ValueError(f"unknown backend {backend!r}")


class WithVariants:
    """A trace of a word (or a batched trace of words) and, as ``variants``, the traces of the
    claim's variant networks (:attr:`TraceProperty.variants`) on the same word(s); every other
    attribute is the trace's own."""

    __slots__ = ("_trace", "variants")

    def __init__(self, trace: Any, variants: Mapping[str, Any]) -> None:
        self._trace = trace
        self.variants = dict(variants)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trace, name)


def variant_networks(claim: Any, net: Any, cache: dict[int, Any]) -> Mapping[str, Any]:
    """``claim.variants(net)``, made once per network (``cache``, by identity: the network is
    kept beside its variants, so a reused ``id`` is never mistaken for it)."""
    hit = cache.get(id(net))
    if hit is None or hit[0] is not net:
        hit = cache[id(net)] = (net, claim.variants(net))
    return hit[1]  # type: ignore[no-any-return]


def with_variants(claim: Any, word: Word, trace: Trace[Any], cache: dict[int, Any]) -> Any:
    """``trace`` as ``holds`` takes it: itself, or with the traces of ``claim``'s variant
    networks on ``word`` (same interpreter) where the claim has variants."""
    if getattr(claim, "variants", None) is None:
        return trace
    nets = variant_networks(claim, trace.network, cache)
    return WithVariants(
        trace, {name: run_network(v, word, trace.backend) for name, v in nets.items()}
    )


def decoder_budget(job: Job, word: Word) -> int:
    """The decoder step budget of an encoder–decoder run on ``word`` (see Construction.max_steps)."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS

    c = job.construction
    return DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(job.values, word)


def exhaustive_method(backend: str) -> str:
    """The method an exhaustive check with ``backend`` records in its verdict."""
    if backend == "interval":
        return "exhaustive (interval; sympy where an interval straddles 0)"
    return f"exhaustive ({backend})"


def show_word(w: Word, alphabet: Sequence[str]) -> str:
    """A word as verdicts show it (written in its alphabet, quoted; the empty word by name)."""
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


def enclose(value: Any) -> Any:
    """A rigorous interval around a Fraction, sympy number or interval."""
    if isinstance(value, iv.mpf):
        return value
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
        return iv.mpf(q.numerator) / iv.mpf(q.denominator)
    if isinstance(value, sympy.Basic):
        return SympyArithmetic()._enclose(sympy.sympify(value))
    raise TypeError(f"cannot enclose {value!r}")


def interval_sign(x: Any) -> int | None:
    """The sign of every point of the interval ``x`` (1, −1, or 0 for [0, 0]); None if it straddles 0."""
    if x.a > 0:
        return 1
    if x.b < 0:
        return -1
    if x.a == 0 and x.b == 0:
        return 0
    return None
