"""Property-based fuzzing of a construction's claims with hypothesis: evidence, never proof.

:func:`fuzz` draws words with the strategies of :mod:`netproof.verifier.fuzzing.strategies` (chosen per claim:
for a Dyck language a mix of uniform words, members, near-misses and long members; words the
claim is about when it has ``only`` or a ``domain``), checks the claim on each word with the
claim's own backend, and when a word fails lets hypothesis shrink it, polishes it by one- and
two-symbol deletions and substitutions towards the shortlex order, and **replays** the result
through :func:`netproof.verifier.exhaustive.checker.check_word` (the exhaustive checker's per-word logic). The
verdict is then

- :class:`~netproof.verifier.claims.Refuted` with method ``"fuzz (hypothesis, <backend>)"``, the shrunk
  word and the replay's message and values; or
- :class:`~netproof.verifier.claims.Unknown` with the reason ``"no counterexample found in N examples
  (seed S, max length L); this is not a proof"``; or ``"not fuzzable: ..."`` for claims that
  are not checked word by word (z3 identities, structural invariants, facts about numbers).

While searching, exact claims on networks :mod:`netproof.symbolic.batched` supports (the Dyck
recognizers) are evaluated in integers, hundreds of times faster than the Fraction interpreter
on long words; the replay always uses the per-word checker.

With ``backend="torch"`` a recognizer's long words (:data:`TORCH_MIN_LEN` symbols or more;
give a ``max_len`` in the thousands) run in torch float64 (:mod:`netproof.symbolic.torch_backend`); a word the float run fails, or
cannot decide (a logit too close to 0, a hardmax tie it cannot resolve), is re-checked exactly,
and only an exact-confirmed failure counts: it is shrunk and replayed exactly as above. A word
where only the float run fails is a :class:`FloatIssue` (reported in the verdict's reason and to
``on_float_issue``), never a counterexample.

Reproducibility: ``seed=S`` replays exactly the run the verdict reported as "seed S";
``derandomize=True`` draws the same examples on every run (the ``netproof-ci`` profile of
:mod:`netproof.verifier.fuzzing.strategies`). An unseeded run draws a fresh seed (reported in the verdict), saves
its failing examples in an example database (``.netproof/fuzz-db`` under the current directory
by default, one key per construction, parameters, claim and bound; ``database=None`` turns it
off) and replays them first on the next unseeded run. As in hypothesis, seeded and derandomized
runs leave the database alone.

May import: hypothesis, the claims vocabulary (Dyck(k, D) included), :mod:`netproof.symbolic` and
its interpreters (torch inside functions), exhaustive checking (the replay) and the strategies of
this package; never SMT, floats, campaigns, the CLI or a paper module.

>>> from netproof.constructions import REGISTRY
>>> from netproof.verifier.exhaustive.checker import Job
>>> c = REGISTRY["dyck"]
>>> values = c.parse_params({"k": "1", "depth": "1", "variant": "paper"})
>>> claim = c.claims(values)[0]
>>> verdict = fuzz(Job(c, values), claim, examples=50, seed=1, database=None)
>>> verdict.word, verdict.method
(('(', ')'), 'fuzz (hypothesis, exact)')
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Unsatisfiable

from netproof.symbolic import Classifier, Network, NotRationalError, render
from netproof.symbolic.evaluation import UndecidedSignError, UndefinedValueError
from netproof.verifier.claims import (
    Bound,
    Claim,
    CrossEntropy,
    Language,
    Recognizes,
    Refuted,
    Simulates,
    TraceProperty,
    Unknown,
    ValueIs,
    Verdict,
    Word,
)
from netproof.verifier.claims.dyck import DYCK, bracket, dyck_alphabet, is_dyck
from netproof.verifier.exhaustive.checker import Job, check_word
from netproof.verifier.fuzzing import strategies
from netproof.verifier.fuzzing.strategies import CI_PROFILE

__all__ = [
    "BACKENDS",
    "CI_PROFILE",
    "DEFAULT_DATABASE",
    "DEFAULT_EXAMPLES",
    "DEFAULT_MAX_LEN",
    "TORCH_MIN_LEN",
    "FloatIssue",
    "FuzzError",
    "Plan",
    "fuzz",
    "fuzzable",
    "plan",
]

DEFAULT_EXAMPLES: Final = 500
"""Examples per claim when none is given (the default budget)."""

DEFAULT_MAX_LEN: Final = 40
"""The longest word drawn when no ``max_len`` is given."""

DEFAULT_DATABASE: Final = Path(".netproof") / "fuzz-db"
"""Where failing examples are kept (relative to the current directory) unless ``database`` says
otherwise."""

POLISH_BUDGET: Final = 400
"""The most claim evaluations the polish after hypothesis's shrinking may spend."""

DOMAIN_LIMIT: Final = 50_000
"""A claim's own ``domain`` that no known strategy matches is drawn from as a list; this many
words at most."""


class FuzzError(ValueError):
    """Bad arguments to :func:`fuzz` (a budget below 1, a ``max_len`` below the claim's
    ``min_len``, a strategy that is not a hypothesis strategy)."""


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT_DATABASE"


_DEFAULT: Final = _Default()


def _show(w: Word, alphabet: Sequence[str]) -> str:
    return repr(render(alphabet, w)) if w else "ε (the empty word)"


def _method(claim: Claim) -> str:
    return f"fuzz (hypothesis, {getattr(claim, 'backend', 'exact')})"


def fuzzable(claim: Claim) -> str | None:
    """None if :func:`fuzz` can search ``claim`` word by word, else why not (one line)."""
    if isinstance(claim, (Recognizes, ValueIs, Bound, TraceProperty, Simulates)):
        return None
    why = {
        "ForAll": "it is a z3 lemma over all reals or integers, with no word in it",
        "SignForAllBases": "it quantifies over every base E with z3 per word; use `netproof prove`",
        "MirrorInvariant": "it is decided on the IR for every word at once; use `netproof prove`",
        "BlockIdentity": "it is a z3 statement about one block for all inputs, with no word in it",
        "Identity": "it is a sympy identity, with no word in it",
        "ExactFact": "it is a fact about numbers, with no word in it",
        "PredictsNext": "it is checked on every string along the trie of prefixes; use `netproof prove`",
        "SoftAgrees": "it compares interval and exact runs along the trie of prefixes; use `netproof prove`",
    }
    name = type(claim).__name__
    return f"not fuzzable: {claim.id} is a {name} claim; {why.get(name, 'it is not checked word by word')}"


# --------------------------------------------------------------------------- strategies per claim


@dataclass(frozen=True, slots=True)
class Plan:
    """What :func:`fuzz` draws for a claim: the ``strategy``, the words it may polish a
    counterexample into (``admissible``: within the lengths, and words the claim is about),
    and a one-line ``description`` (shown in verdicts and part of the database key)."""

    strategy: st.SearchStrategy[Word]
    admissible: Callable[[Word], bool]
    description: str


def _language(job: Job, claim: Claim) -> Language | None:
    if isinstance(claim, Recognizes):
        return claim.language
    if isinstance(claim, Bound) and isinstance(claim.quantity, CrossEntropy):
        return claim.quantity.language
    return job.construction.reference_language(job.values)


def _dyck_params(job: Job) -> tuple[int, int] | None:
    k, depth = job.values.get("k"), job.values.get("depth")
    if (
        isinstance(k, int)
        and isinstance(depth, int)
        and not isinstance(k, bool)
        and k >= 1
        and depth >= 1
    ) and set(dyck_alphabet(k)) <= set(job.alphabet):
        return k, depth
    return None


def _valid_prefix(w: Word, k: int, depth: int, bound: int) -> bool:
    """w never closes wrongly, stays within depth D and has room to close: |w| + depth(w) <= bound."""
    brackets = set(dyck_alphabet(k))
    stack: list[int] = []
    for s in w:
        if s not in brackets:
            return False
        is_open, t = bracket(s)
        if is_open:
            stack.append(t)
            if len(stack) > depth:
                return False
        elif not stack or stack.pop() != t:
            return False
    return len(w) + len(stack) <= bound


def _domain_shapes(
    job: Job, claim: TraceProperty, min_len: int, max_len: int
) -> list[tuple[str, Callable[[Word, int], bool], Callable[[], st.SearchStrategy[Word]]]]:
    """The domains of the Dyck generator's claims, as (description, membership test at a bound,
    strategy up to ``max_len``): prefixes of Dyck words, Dyck words followed by the end symbol,
    bracket words followed by it, any words followed by it."""
    found = _dyck_params(job)
    if found is None:
        return []
    k, D = found
    lang = DYCK(k, D)
    brackets = dyck_alphabet(k)
    extra = [s for s in job.alphabet if s not in brackets]
    shapes: list[tuple[str, Callable[[Word, int], bool], Callable[[], st.SearchStrategy[Word]]]] = [
        (
            f"prefixes of {lang.name} words",
            lambda w, b: _valid_prefix(w, k, D, b),
            lambda: strategies.dyck_prefixes(k, D, min_len=min_len, max_len=max_len),
        )
    ]
    if len(extra) == 1 and max_len >= 1:
        end = extra[0]
        inner_min, inner_max = max(min_len - 1, 0), max_len - 1

        def ended(s: st.SearchStrategy[Word]) -> st.SearchStrategy[Word]:
            return s.map(lambda w: (*w, end))

        shapes += [
            (
                f"{lang.name} words followed by {end}",
                lambda w, b: len(w) >= 1 and w[-1] == end and is_dyck(w[:-1], k, D),
                lambda: ended(strategies.dyck_words(k, D, min_len=inner_min, max_len=inner_max)),
            ),
            (
                f"bracket words followed by {end}",
                lambda w, b: len(w) >= 1 and w[-1] == end and end not in w[:-1],
                lambda: ended(
                    strategies.language_words(lang, min_len=inner_min, max_len=inner_max)
                ),
            ),
            (
                f"words followed by {end}",
                lambda w, b: len(w) >= 1 and w[-1] == end,
                lambda: ended(
                    st.one_of(
                        strategies.words(job.alphabet, min_len=inner_min, max_len=inner_max),
                        strategies.language_words(lang, min_len=inner_min, max_len=inner_max),
                    )
                ),
            ),
        ]
    return shapes


def _matches(
    claim: TraceProperty, test: Callable[[Word, int], bool], alphabet: Sequence[str], min_len: int
) -> bool:
    """Does ``test`` pick out exactly the claim's domain on every word of length <= 4 (or
    fewer, while there are at most 5000 such words)?"""
    from netproof.verifier.exhaustive.checker import words as all_words

    assert claim.domain is not None
    bound = 4
    while bound > 1 and sum(len(alphabet) ** n for n in range(bound + 1)) > 5000:
        bound -= 1
    if bound < min_len:
        return False
    domain = {w for w in claim.domain(bound) if min_len <= len(w) <= bound}
    return domain == {w for w in all_words(alphabet, min_len, bound) if test(w, bound)}


def plan(job: Job, claim: Claim, *, max_len: int = DEFAULT_MAX_LEN) -> Plan:
    """The strategy :func:`fuzz` uses for ``claim`` (words of lengths ``claim.min_len ..
    max_len``):

    - a claim with a ``domain`` (the generator's claims): the Dyck shape that matches the
      domain on short words (prefixes of Dyck words, Dyck words followed by ω, ...), else the
      domain's own words up to the claim's bound, drawn as a list;
    - a claim with ``only``: members when ``only`` is the membership test of the
      construction's language, else the mix below filtered by ``only``;
    - otherwise: :func:`netproof.verifier.fuzzing.strategies.language_words` for the claim's language (uniform
      words, members, near-misses, long members), or uniform words when there is none.
    """
    min_len = claim.min_len
    if max_len < min_len:
        raise FuzzError(f"max_len={max_len} is below the claim's min_len={min_len}; raise max_len")
    alphabet = job.alphabet

    def within(w: Word) -> bool:
        return min_len <= len(w) <= max_len and all(s in alphabet for s in w)

    lang = _language(job, claim)
    if lang is not None and set(lang.alphabet) != set(alphabet):
        lang = None
    base = (
        strategies.language_words(lang, min_len=min_len, max_len=max_len)
        if lang is not None
        else strategies.words(alphabet, min_len=min_len, max_len=max_len)
    )
    mix = (
        f"uniform words, members and near-misses of {lang.name}"
        if lang is not None
        else "uniform words"
    )
    if isinstance(claim, TraceProperty) and claim.domain is not None:
        for text, test, make in _domain_shapes(job, claim, min_len, max_len):
            if _matches(claim, test, alphabet, min_len):
                return Plan(make(), lambda w, test=test: within(w) and test(w, max_len), text)  # type: ignore[misc]
        bound = min(claim.max_len, max_len)
        listed: list[Word] = []
        for w in claim.domain(bound):
            if min_len <= len(w) <= bound:
                listed.append(w)
                if len(listed) > DOMAIN_LIMIT:
                    raise FuzzError(
                        f"claim {claim.id}: its domain up to length {bound} has more than {DOMAIN_LIMIT} words and no "
                        "known strategy matches it; pass strategy= (a hypothesis strategy of its words)"
                    )
        if not listed:
            raise FuzzError(
                f"claim {claim.id}: its domain has no word of length {min_len}..{bound}"
            )
        members = set(listed)
        return Plan(
            st.sampled_from(listed),
            members.__contains__,
            f"the claim's own domain up to length {bound} ({len(listed)} words)",
        )
    if isinstance(claim, TraceProperty) and claim.only is not None:
        only = claim.only
        if lang is not None and only is lang.contains:
            return Plan(
                strategies.members(lang, min_len=min_len, max_len=max_len),
                lambda w: within(w) and only(w),
                f"members of {lang.name}",
            )
        return Plan(
            base.filter(only),
            lambda w: within(w) and only(w),
            f"{mix}, kept where the claim applies",
        )
    return Plan(base, within, mix)


# --------------------------------------------------------------------------- evaluation


class _Probe:
    """Evaluates the claim on one word during the search: False (holds), True (fails) or an
    :class:`Unknown` (undecided). Exact claims on batchable networks use :mod:`netproof.symbolic.batched`
    (the same values as the Fraction interpreter, as integers); the rest use
    :func:`check_word` on a job of its own whose traces are dropped after each word."""

    def __init__(
        self,
        job: Job,
        claim: Claim,
        backend: str = "exact",
        on_float_issue: Callable[[FloatIssue], None] | None = None,
    ) -> None:
        self.job = Job(job.construction, job.values)
        self.claim = claim
        self.evaluators: dict[int, Any] = {}
        self.torch = backend == "torch" and isinstance(claim, Recognizes)
        self.compiled: dict[int, Any] = {}
        self.on_float_issue = on_float_issue
        self.rechecked = 0

    def _float(self, w: Word) -> Any:
        """The torch float64 run of ``w`` (a FloatBatch of one)."""
        from netproof.symbolic import torch_backend

        net = self.job.network(len(w))
        compiled = self.compiled.get(id(net))
        if compiled is None:
            compiled = self.compiled[id(net)] = torch_backend.compile(net, dtype="float64")
        return torch_backend.run_batch(compiled, [w])

    def __call__(self, w: Word) -> bool | Unknown:
        if not self.torch or len(w) < TORCH_MIN_LEN:
            return self._exact(w)
        assert isinstance(self.claim, Recognizes)
        fb = self._float(w)
        got = fb.accepted[0]
        float_fails = got is not None and got != self.claim.language.contains(w)
        in_doubt = got is None or fb.unresolved_ties.count > 0
        if not (float_fails or in_doubt):
            return False
        self.rechecked += 1
        exact = self._exact(w)  # only an exact-confirmed failure is a counterexample
        if float_fails and exact is False and self.on_float_issue is not None:
            self.on_float_issue(
                FloatIssue(
                    w,
                    f"torch float64 {'accepts' if got else 'rejects'} it, the exact interpreter does not "
                    f"(smallest hardmax gap {fb.min_gap:.3g}, {fb.unresolved_ties.count} unresolved ties)",
                )
            )
        return exact

    def _evaluator(self, net: Network) -> Any:
        from netproof.symbolic import batched

        ev = self.evaluators.get(id(net))
        if ev is None:
            ok = batched.supports(net) is None and isinstance(net.readout, Classifier)
            ev = self.evaluators[id(net)] = batched.Evaluator(net) if ok else False
        return ev

    def _exact(self, w: Word) -> bool | Unknown:
        claim = self.claim
        fast = (isinstance(claim, Recognizes) and claim.backend == "exact") or (
            isinstance(claim, TraceProperty)
            and claim.holds_batch is not None
            and claim.backend == "exact"
            and claim.domain is None
            and claim.variants is None  # check_word runs the variant networks too
        )
        if fast:
            net = self.job.network(len(w))
            ev = self._evaluator(net)
            if ev:
                import numpy as np

                idx = np.array([[net.alphabet.index(s) for s in w]], dtype=np.int64).reshape(
                    1, len(w)
                )
                try:
                    if isinstance(claim, Recognizes):
                        return bool(ev.run(idx).accepted[0]) != claim.language.contains(w)
                    assert isinstance(claim, TraceProperty) and claim.holds_batch is not None
                    if claim.only is not None and not claim.only(w):
                        return False
                    return claim.holds_batch([w], ev.trace(idx))[0] is not None
                except UndefinedValueError:
                    return True
        try:
            verdict = check_word(self.job, claim, w)
        except (
            NotRationalError,
            UndecidedSignError,
        ) as exc:  # check_word turns these into Unknown; belt and braces
            return Unknown(_method(claim), str(exc))
        finally:
            self.job._traces = None  # a fuzz run meets many long words: keep no traces
        if isinstance(verdict, Unknown):
            return verdict
        return isinstance(verdict, Refuted)


def _shortlex(alphabet: Sequence[str]) -> Callable[[Word], tuple[int, list[int]]]:
    order = {s: i for i, s in enumerate(alphabet)}
    return lambda w: (len(w), [order[s] for s in w])


def _polish(
    word: Word,
    fails: Callable[[Word], bool],
    admissible: Callable[[Word], bool],
    alphabet: Sequence[str],
    budget: int,
) -> Word:
    """Greedy descent in shortlex order: replace the word by the smallest failing word among
    those one or two adjacent deletions or one smaller symbol away, until none fails or the
    budget of evaluations is spent. It crosses what the strategy's shrinker cannot (from a
    member to a uniform word, say), so the result is locally shortlex-minimal."""
    key = _shortlex(alphabet)
    while budget > 0:
        here = key(word)
        seen: set[Word] = set()
        candidates: list[Word] = []
        for i in range(len(word)):
            candidates.append(word[:i] + word[i + 1 :])
            candidates.append(word[:i] + word[i + 2 :])
            for s in alphabet:
                if s == word[i]:
                    break
                candidates.append((*word[:i], s, *word[i + 1 :]))
        better = None
        for c in sorted(candidates, key=key):
            if c in seen or key(c) >= here or not admissible(c):
                continue
            seen.add(c)
            budget -= 1
            if fails(c):
                better = c
                break
            if budget <= 0:
                break
        if better is None:
            break
        word = better
    return word


# --------------------------------------------------------------------------- the engine


class _Namespaced(ExampleDatabase):
    """An example database whose keys are prefixed by one claim's key, so the failures of
    different claims (all searched by the same inner test function) never mix."""

    def __init__(self, inner: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self.inner = inner
        self.prefix = prefix + b"."

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self.prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self.prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self.prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self.prefix + src, self.prefix + dest, value)


def _database(database: object) -> ExampleDatabase | None:
    if database is None:
        return None
    if isinstance(database, _Default):
        return DirectoryBasedExampleDatabase(str(DEFAULT_DATABASE))
    if isinstance(database, ExampleDatabase):
        return database
    if isinstance(database, (str, os.PathLike)):
        return DirectoryBasedExampleDatabase(os.fspath(database))
    raise FuzzError(
        f"database={database!r} must be None, a directory path or a hypothesis ExampleDatabase"
    )


def _key(job: Job, claim: Claim, max_len: int, description: str) -> bytes:
    params = sorted((k, str(v)) for k, v in job.values.items())
    text = repr(("netproof-fuzz", job.construction.name, params, claim.id, max_len, description))
    return hashlib.sha256(text.encode()).hexdigest()[:32].encode()


@dataclass(frozen=True, slots=True)
class FloatIssue:
    """A word on which the torch float run and the exact interpreter disagree while the claim
    holds exactly: a float limitation, never a counterexample."""

    word: Word
    detail: str


TORCH_MIN_LEN: Final = 64
"""With ``backend="torch"``, shorter words run exactly (the exact evaluators are as fast there)."""

BACKENDS: Final = ("exact", "torch")
"""``fuzz(backend=...)``: ``torch`` runs Recognizes claims in torch float64 and re-checks exactly."""


class _Counterexample(Exception):
    """Raised by the search on a failing word; hypothesis shrinks it and raises it again."""

    def __init__(self, word: Word) -> None:
        super().__init__(word)
        self.word = word


def fuzz(
    job: Job,
    claim: Claim,
    *,
    examples: int = DEFAULT_EXAMPLES,
    max_len: int = DEFAULT_MAX_LEN,
    seed: int | None = None,
    derandomize: bool = False,
    database: ExampleDatabase | str | os.PathLike[str] | _Default | None = _DEFAULT,
    strategy: st.SearchStrategy[Word] | None = None,
    backend: str = "exact",
    on_float_issue: Callable[[FloatIssue], None] | None = None,
    tried: Callable[[int], None] | None = None,
) -> Verdict:
    """Search for a counterexample to ``claim`` among ``examples`` generated words of length at
    most ``max_len`` (see the module docstring). ``strategy`` replaces the automatic choice
    (:func:`plan`); its words must be ones the claim is about.

    ``seed`` makes the run reproducible (hypothesis then leaves the example database alone);
    ``derandomize`` draws the same examples on every run (no database either); otherwise
    hypothesis draws a fresh seed (reported in the verdict) and replays the failures kept in
    ``database`` first (default :data:`DEFAULT_DATABASE`; None: no database).

    ``backend="torch"`` evaluates a :class:`Recognizes` claim's words with the torch backend in
    float64 (fast on long words) and re-checks exactly every word the float run fails or is in
    doubt about (an undecided sign, an unresolved hardmax tie): only an exact-confirmed failure
    is a counterexample; a float-only failure goes to ``on_float_issue`` as a
    :class:`FloatIssue`. Other claims run exactly, as with ``backend="exact"``.

    ``tried`` hears the number of examples tried so far after each one, until a failing word
    is found (the caller throttles what it shows).

    Returns :class:`Refuted` (the shrunk word, replayed through the per-word checker) or
    :class:`Unknown` ("no counterexample found ..." / "not fuzzable: ..."); never ``Proved``.
    """
    if backend not in BACKENDS:
        raise FuzzError(f"backend={backend!r} is not one of {', '.join(BACKENDS)}")
    method = _method(claim)
    if backend == "torch" and isinstance(claim, Recognizes):
        method = "fuzz (hypothesis, torch float64, exact re-check)"
    reason = fuzzable(claim)
    if reason is not None:
        return Unknown(method, reason)
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise FuzzError(f"examples={examples!r} must be an int >= 1 (the number of words to try)")
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 0:
        raise FuzzError(f"max_len={max_len!r} must be an int >= 0")
    if max_len < claim.min_len:
        raise FuzzError(
            f"max_len={max_len} is below the claim's min_len={claim.min_len}; raise max_len"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise FuzzError(f"seed={seed!r} must be an int (or None for a fresh one)")
    if strategy is None:
        the_plan = plan(job, claim, max_len=max_len)
    elif not isinstance(strategy, st.SearchStrategy):
        raise FuzzError(
            f"strategy={strategy!r} must be a hypothesis SearchStrategy of words (tuples of symbols)"
        )
    else:
        # The polish stays within the lengths and ``only``; a domain it cannot know: no polish.
        only = claim.only if isinstance(claim, TraceProperty) else None
        has_domain = isinstance(claim, TraceProperty) and claim.domain is not None

        def admissible(w: Word) -> bool:
            return (
                not has_domain and claim.min_len <= len(w) <= max_len and (only is None or only(w))
            )

        the_plan = Plan(strategy, admissible, "the given strategy")
    key = _key(job, claim, max_len, the_plan.description)
    db = _database(database)  # checked even when unused
    if derandomize or seed is not None:
        db = None

    issues: list[FloatIssue] = []

    def record_issue(issue: FloatIssue) -> None:
        if all(i.word != issue.word for i in issues):
            issues.append(issue)
            if on_float_issue is not None:
                on_float_issue(issue)

    probe = _Probe(job, claim, backend, record_issue)
    alphabet = job.alphabet
    stats = {"tried": 0, "found_at": 0, "found_len": 0}
    undecided: list[tuple[Word, Unknown]] = []

    def fails(w: Word) -> bool:
        got = probe(w)
        if isinstance(got, Unknown):
            if not undecided:
                undecided.append((w, got))
            return False
        return got

    base = settings.get_profile(CI_PROFILE) if derandomize else settings()
    config = settings(
        base,
        max_examples=examples,
        derandomize=derandomize,
        database=None if db is None else _Namespaced(db, key),
        deadline=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )

    @config
    @given(the_plan.strategy)
    def search(word: Word) -> None:
        if not stats["found_at"]:
            stats["tried"] += 1
            if tried is not None:
                tried(stats["tried"])
        if fails(word):
            if not stats["found_at"]:
                stats["found_at"], stats["found_len"] = stats["tried"], len(word)
            raise _Counterexample(word)

    if seed is not None:
        search = hypothesis.seed(seed)(search)
    found: Word | None = None
    try:
        search()
    except _Counterexample as exc:
        found = exc.word
    except Unsatisfiable:
        return Unknown(
            method,
            f"the strategy ({the_plan.description}) gave no usable word of length <= {max_len}",
        )
    if derandomize:
        seed_text = "derandomized"
    else:
        used = (
            seed
            if seed is not None
            else getattr(search, "_hypothesis_internal_use_generated_seed", None)
        )
        seed_text = f"seed {used}" if used is not None else "random seed"
    where = f"{seed_text}, max length {max_len}; {the_plan.description}"
    if probe.torch:
        where += f"; {probe.rechecked} words re-checked exactly"
        if issues:
            where += f", {len(issues)} float-only disagreements (first {_show(issues[0].word, alphabet)}: {issues[0].detail})"
    if found is None:
        text = (
            f"no counterexample found in {stats['tried']} examples ({where}); this is not a proof"
        )
        if undecided:
            w, why = undecided[0]
            text += f"; the {getattr(claim, 'backend', 'exact')} backend left some words undecided (first {_show(w, alphabet)}: {why.reason})"
        return Unknown(method, text)
    word = _polish(tuple(found), fails, the_plan.admissible, alphabet, POLISH_BUDGET)
    replay = check_word(job, claim, word)
    if not isinstance(replay, Refuted):
        shown = f"is undecided ({replay.reason})" if isinstance(replay, Unknown) else "holds"
        return Unknown(
            method,
            f"the search flagged {_show(word, alphabet)} but the replay through the per-word checker says the claim {shown} "
            "there; this is a bug in the fast path, please report it",
        )
    provenance = (
        f"found by hypothesis after {stats['found_at']} examples ({where}), shrunk from length "
        f"{stats['found_len']} to {len(word)} and replayed with the {getattr(claim, 'backend', 'exact')} checker"
    )
    return Refuted(method, f"{replay.detail} [{provenance}]", word, dict(replay.values))
