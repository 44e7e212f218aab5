"""Precision analysis: the longest words on which a float run of a construction still agrees
with its exact result.

``netproof precision NAME --dtype D`` runs the construction's network on the torch backend
(:mod:`netproof.symbolic.torch_backend`) in dtype D on words of growing length n = 2, 4, 8, … up to
``--max-n`` and compares each float verdict with the **reference**:

- ``exact``: the exact interpreter's verdict on the same word (``symbolic.batched`` integers for
  hardmax classifiers, ``symbolic.exact`` Fractions otherwise), whenever the network is rational;
- ``language``: for a network the exact interpreter cannot run (a layer norm with ε = 0 takes a
  square root; a softmax base e^c), the construction's reference language: what the exact
  network is proved to accept up to its claims' bounds (``netproof prove``), and what the paper
  proves for every n;
- ``allowed sets``: for a generator, the reference next-symbol sets its construction declares at
  every position (for the Dyck generator the allowed sets of Dyck(k, D); claim Y10 proves the
  exact network's sets equal them up to its bound).

At each n it draws ``--words`` words (seeded) and adds the **worst-case words** that the
construction's closed forms single out (its declared worst-case words: e.g. w = 1 0^{n−2} for the flawed
FIRST transformer, whose exact margin (E + 1 − n)/(2(E + n − 1)) is the smallest). The report
gives, per n, the number of disagreements, the smallest |logit| of the float run and of the
exact run (the margin curve), the largest |float − exact| logit error, the smallest hardmax score
gap the float run met and its unresolved ties; and the **limit**: the largest n such that every
n' ≤ n agreed, with the first disagreeing word. A float run is evidence, never proof: the limit
says where a float implementation of the construction stops being trustworthy on these words.

Known limits this reproduces (spec ``chiang2022_yao2021.md`` §1.6, §3.6): the Dyck generator with
the experiments' fixed position normalizer p = i/6000 (``-p depth=10 -p pos_norm=6000``) breaks
in float32; float16 breaks it at once.

**Hook for new constructions.** Any :class:`~netproof.verifier.claims.Construction` is analysed
with sampled words (uniform over its alphabet) as soon as it exists; what else the search needs
it declares in its ``precision`` field (:class:`~netproof.verifier.claims.Precision`): its
worst-case words (e.g. a directional transformer whose coordinate 2^{−t} underflows in float32
near t = 126 and in float16 near t = 15: declare words of the lengths at which the closed form's
coordinate drops below the dtype's smallest normal, and the search will report where the float
run stops agreeing), a sampler of its own (the Dyck networks draw Hewitt et al.'s samples), a
generator's reference next-symbol sets, and its documented runs (:func:`documented_runs`).
The paper modules declare theirs next to their constructions; this module imports none of them.

May import: the claims vocabulary and :mod:`netproof.symbolic` with its interpreters (torch
inside functions); never a paper module or the registry (a caller that wants every registered
construction passes the registry, as ``netproof precision --all`` does).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from netproof.symbolic import Network, Seq2Seq
from netproof.symbolic.errors import MissingExtraError, NotRationalError, SymbolicError
from netproof.symbolic.ir import FlatEmbedding, NextSymbols
from netproof.verifier.claims import Construction, NextSets, WordFamily

__all__ = [
    "DTYPES",
    "REPORT_COMMAND",
    "SEQ2SEQ_TOLERANCE",
    "Analysis",
    "Level",
    "PrecisionError",
    "all_runs",
    "analyse",
    "documented_runs",
    "markdown_report",
]

Word = tuple[str, ...]
DTYPES = ("float64", "float32", "float16")


class PrecisionError(ValueError):
    """A precision request that cannot be run (bad bound, unknown dtype, no reference)."""


# --------------------------------------------------------------------------- declarations


def _worst(c: Construction) -> WordFamily | None:
    """The construction's declared worst-case words, if any."""
    return None if c.precision is None else c.precision.worst


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True, kw_only=True)
class Level:
    """The float run against the reference on the words of one length bound n."""

    n: int
    words: int
    disagreements: int
    first_disagreement: str | None
    min_abs_logit_float: float | None
    min_abs_logit_exact: float | None
    max_logit_error: float | None
    min_gap: float | None
    unresolved_ties: int
    undefined: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    """One construction (with its parameters) in one dtype: the levels and the limit."""

    construction: str
    params: dict[str, str]
    dtype: str
    device: str
    reference: str
    max_n: int
    levels: tuple[Level, ...] = field(default=())
    unsupported: str | None = None
    """Why the construction was not analysed (a network the torch backend does not compile, a
    fixed-size input); ``levels`` is then empty."""

    @property
    def limit(self) -> int | None:
        """The largest tested n such that every tested n' <= n agreed (None: n = 2 already fails)."""
        best = None
        for lv in self.levels:
            if lv.disagreements:
                return best
            best = lv.n
        return best

    @property
    def broken_at(self) -> Level | None:
        return next((lv for lv in self.levels if lv.disagreements), None)

    def summary(self) -> str:
        if self.unsupported is not None:
            return f"not supported: {self.unsupported}"
        b = self.broken_at
        if b is None:
            return f"agrees at every tested n <= {self.limit} (no disagreement up to --max-n {self.max_n})"
        lim = "no tested n" if self.limit is None else f"every tested n <= {self.limit}"
        return (
            f"agrees at {lim}; breaks at n = {b.n}: {b.disagreements} of {b.words} words disagree, "
            f"e.g. {b.first_disagreement}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "construction": self.construction,
            "params": self.params,
            "dtype": self.dtype,
            "device": self.device,
            "reference": self.reference,
            "max_n": self.max_n,
            "limit": self.limit,
            "broken_at": None if self.broken_at is None else self.broken_at.n,
            "summary": self.summary(),
            "levels": [asdict(lv) for lv in self.levels],
            "unsupported": self.unsupported,
        }


# --------------------------------------------------------------------------- words


def _grid(max_n: int) -> list[int]:
    out, n = [], 2
    while n <= max_n:
        out.append(n)
        n *= 2
    if not out or out[-1] != max_n:
        out.append(max_n)
    return out


def _is_generator(net: Network) -> bool:
    return isinstance(net.readout, NextSymbols)


def _sampled(
    c: Construction,
    values: Mapping[str, Any],
    net: Network | Seq2Seq,
    lo: int,
    n: int,
    count: int,
    rng: random.Random,
) -> list[Word]:
    """``count`` words with lo < |w| <= n: from the construction's declared sampler (the Dyck
    constructions draw members with Hewitt et al.'s sampler, and near-misses for the recognizer),
    uniform words over the alphabet otherwise."""
    if c.precision is not None and c.precision.sample is not None:
        return c.precision.sample(values, net.alphabet, lo, n, count, rng)
    alphabet = net.alphabet
    return [
        tuple(rng.choice(alphabet) for _ in range(rng.randint(max(lo + 1, 1), n)))
        for _ in range(count)
    ]


# --------------------------------------------------------------------------- references


def _exact_runner(net: Network) -> Callable[[Sequence[Word]], list[tuple[bool | None, Any]]] | None:
    """(accept bit, exact logit) per word from the exact interpreters, or None when the network is
    not rational (or is a generator)."""
    if _is_generator(net):
        return None
    from netproof.symbolic import batched
    from netproof.symbolic.exact import run as run_exact

    if batched.supports(net) is None:

        def run_b(words: Sequence[Word]) -> list[tuple[bool | None, Any]]:
            by_len: dict[int, list[int]] = {}
            for i, w in enumerate(words):
                by_len.setdefault(len(w), []).append(i)
            out: list[tuple[bool | None, Any]] = [(None, None)] * len(words)
            for idx in by_len.values():
                b = batched.evaluate(net, [list(words[i]) for i in idx])
                for j, i in enumerate(idx):
                    out[i] = (bool(b.accepted[j]), b.logit(j))
            return out

        return run_b

    def run_e(words: Sequence[Word]) -> list[tuple[bool | None, Any]]:
        out: list[tuple[bool | None, Any]] = []
        for w in words:
            tr = run_exact(net, w)
            out.append((tr.accepted, tr.output))
        return out

    emb = net.embedding
    probe = net.alphabet[:1] * (emb.length if isinstance(emb, FlatEmbedding) else 1)
    try:
        run_exact(net, probe)
    except NotRationalError:
        return None
    except SymbolicError:
        pass  # another error on the probe word (e.g. a 0/0): the words themselves will tell
    return run_e


# --------------------------------------------------------------------------- the search

# Exact verdicts already computed in this process, per (construction, parameters, n): the same
# seeded words come back for every dtype, and the exact run is the expensive side.
_EXACT_CACHE: dict[
    tuple[str, tuple[tuple[str, str], ...], int], dict[Word, tuple[bool | None, Any]]
] = {}


def _words_for(
    c: Construction,
    values: Mapping[str, Any],
    net: Network,
    lo: int,
    n: int,
    count: int,
    rng: random.Random,
) -> list[Word]:
    """The sampled words of one level, then the declared worst-case words not among them."""
    words = _sampled(c, values, net, lo, n, count, rng)
    worst = _worst(c)
    if worst is not None:
        words += [w for w in worst(values, n) if w not in words]
    return words


def _fmt_word(w: Word) -> str:
    text = "".join(w) if all(len(s) == 1 for s in w) else " ".join(w)
    return text if len(text) <= 40 else f"{text[:18]}…{text[-18:]} (|w| = {len(w)})"


def analyse(
    c: Construction,
    values: Mapping[str, Any],
    *,
    dtype: str = "float32",
    device: str = "cpu",
    max_n: int = 1024,
    words: int = 16,
    seed: int = 0,
    tie_rtol: float | None = 0.0,
    progress: Callable[[str], None] | None = None,
    started: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Run the search (see the module docstring) for one construction and dtype: ``started``
    hears ``(n, words)`` as each length begins, ``progress`` a line as each length is done.

    ``tie_rtol`` is the torch backend's hardmax tie tolerance. The default 0 is a plain float
    argmax (scores tie only when equal as floats), what a float implementation of the network
    computes; ``None`` is the backend's conservative default (scores within 32·eps of the
    dot products' magnitude count as tied and are reported as unresolved), which flags a
    hardmax head as unreliable long before a plain argmax goes wrong."""
    supported = (*DTYPES, "bfloat16")
    if dtype not in supported:
        raise PrecisionError(
            f"dtype={dtype!r} is not supported; choose one of {', '.join(supported)}"
        )
    if max_n < 2:
        raise PrecisionError(f"max_n={max_n} must be at least 2")
    if words < 0:
        raise PrecisionError(f"words={words} must be >= 0")
    try:
        from netproof.symbolic.torch_backend import compile as compile_net
        from netproof.symbolic.torch_backend import run_batch, unsupported
    except ImportError as exc:
        raise MissingExtraError(
            f"precision runs need torch ({exc}); pip install -e '.[torch]'"
        ) from exc
    params = {k: str(v) for k, v in values.items()}
    if not c.per_length and isinstance(c.build(values), Seq2Seq):
        return _analyse_seq2seq(
            c,
            values,
            dtype=dtype,
            device=device,
            max_n=max_n,
            words=words,
            seed=seed,
            tie_rtol=tie_rtol,
            progress=progress,
            started=started,
        )
    if not c.per_length:
        reason = unsupported(c.build(values))
        if reason is not None:
            return Analysis(
                construction=c.name,
                params=params,
                dtype=dtype,
                device=device,
                reference="—",
                max_n=max_n,
                unsupported=reason,
            )
    levels: list[Level] = []
    rng = random.Random(seed)
    net0: Network | None = None
    compiled: Any = None
    exact: Callable[[Sequence[Word]], list[tuple[bool | None, Any]]] | None = None
    next_sets: NextSets | None = None
    if c.per_length:
        reference = "exact"
        grid = [n for n in _grid(max_n) if n <= 64]  # a network per length: n × n weights
    else:
        built = c.build(values)
        assert isinstance(built, Network)  # unsupported() refused the others above
        net0 = built
        if isinstance(net0.embedding, FlatEmbedding):
            raise PrecisionError(
                f"construction {c.name!r} has a fixed input size ({net0.embedding.length} inputs): "
                "there is no word length to grow; its float agreement is a finite check (netproof fuzz)"
            )
        if _is_generator(net0):
            if c.precision is None or c.precision.next_sets is None:
                raise PrecisionError(
                    f"construction {c.name!r} is a generator but declares no reference next-symbol "
                    "sets (Precision.next_sets): nothing to compare the float run with"
                )
            next_sets = c.precision.next_sets
            reference = "allowed sets"
        elif _exact_runner(net0) is not None:
            reference = "exact"
        elif c.reference_language(values) is not None:
            reference = "language"
        else:
            raise PrecisionError(
                f"construction {c.name!r} is neither rational nor has a reference language or "
                "generator sets: nothing to compare the float run with"
            )
        grid = _grid(max_n)
        compiled = compile_net(net0, dtype=dtype, device=device, tie_rtol=tie_rtol)
        exact = _exact_runner(net0) if reference == "exact" else None
    lo = 0
    for n in grid:
        if net0 is None:  # a network per length
            built = c.build(values, n)
            reason = unsupported(built)
            if reason is not None or not isinstance(built, Network):
                raise PrecisionError(reason or f"{built.name!r} is not a Network")
            net = built
            compiled = compile_net(net, dtype=dtype, device=device, tie_rtol=tie_rtol)
            exact = _exact_runner(net)
            ws = list({tuple(rng.choice(net.alphabet) for _ in range(n)) for _ in range(words)})
            worst = _worst(c)
            if worst is not None:
                ws += [w for w in worst(values, n) if w not in ws]
        else:
            net = net0
            ws = _words_for(c, values, net, lo, n, words, rng)
        if not ws:
            lo = n
            continue
        if started is not None:
            started(n, len(ws))
        fb = run_batch(compiled, ws)
        bad: list[str] = []
        undefined = 0
        min_f = min_e = max_err = None
        if reference == "allowed sets":
            assert next_sets is not None
            got = fb.next_symbols or ()
            for w, sets in zip(ws, got, strict=True):
                want = next_sets(values, w)
                wrong = [t for t, exp in enumerate(want) if set(sets[t]) != exp]
                if wrong:
                    t = wrong[0]
                    bad.append(
                        f"{_fmt_word(w)}: {len(wrong)} wrong next-symbol sets, first after {t} symbols "
                        f"(float {sorted(sets[t])}, allowed {sorted(want[t])})"
                    )
            margin = fb.readout_margin
            min_f = None if margin is None or math.isnan(margin) else float(margin)
        else:
            logits = [fb.logit(i) for i in range(len(ws))]
            finite = [abs(x) for x in logits if x is not None and not math.isnan(x)]
            min_f = min(finite) if finite else None
            if reference == "exact":
                assert exact is not None
                key = (c.name, tuple(sorted(params.items())), n)
                cached = _EXACT_CACHE.setdefault(key, {})
                todo = [w for w in dict.fromkeys(ws) if w not in cached]
                cached.update(zip(todo, exact(todo), strict=True))
                ref = [cached[w] for w in ws]
                errs, mins = [], []
                for w, x, fa, (acc, q) in zip(ws, logits, fb.accepted, ref, strict=True):
                    if q is not None:
                        mins.append(abs(float(q)))
                        if x is not None and not math.isnan(x):
                            errs.append(abs(x - float(q)))
                    if fa is None:
                        undefined += acc is not None
                    if fa != acc:
                        bad.append(
                            f"{_fmt_word(w)}: float {_verdict(fa)} (logit {x:.3g}), exact {_verdict(acc)} "
                            f"(logit {float(q):.3g})"
                            if q is not None and x is not None
                            else f"{_fmt_word(w)}: float {_verdict(fa)}, exact {_verdict(acc)}"
                        )
                min_e = min(mins) if mins else None
                max_err = max(errs) if errs else None
            else:
                lang = c.reference_language(values)
                assert lang is not None
                for w, fa, x in zip(ws, fb.accepted, logits, strict=True):
                    member = lang.contains(w)
                    if fa is None:
                        undefined += 1
                    if fa != member:
                        shown = "NaN" if x is None or math.isnan(x) else f"{x:.3g}"
                        bad.append(
                            f"{_fmt_word(w)}: float {_verdict(fa)} (logit {shown}), "
                            f"{lang.name} {_verdict(member)}"
                        )
        gap = fb.min_gap
        lv = Level(
            n=n,
            words=len(ws),
            disagreements=len(bad),
            first_disagreement=bad[0] if bad else None,
            min_abs_logit_float=min_f,
            min_abs_logit_exact=min_e,
            max_logit_error=max_err,
            min_gap=None if gap is None or math.isinf(gap) or math.isnan(gap) else float(gap),
            unresolved_ties=int(fb.unresolved_ties.count),
            undefined=undefined,
        )
        levels.append(lv)
        if progress is not None:
            progress(
                f"{c.name} {dtype} n={n:<6} words={lv.words:<4} disagree={lv.disagreements:<3} "
                f"min|logit| float={_g(lv.min_abs_logit_float)} exact={_g(lv.min_abs_logit_exact)} "
                f"ties={lv.unresolved_ties}"
            )
        lo = n
    return Analysis(
        construction=c.name,
        params=params,
        dtype=dtype,
        device=device,
        reference=reference,
        max_n=max_n,
        levels=tuple(levels),
    )


SEQ2SEQ_TOLERANCE = 1e-3
"""An encoder–decoder's float run disagrees with the exact one at the first decoder step t where
a coordinate of y_t is off by more than this (a wrong simulated state, not a rounding error), or
when it halts at another step."""


def _analyse_seq2seq(
    c: Construction,
    values: Mapping[str, Any],
    *,
    dtype: str,
    device: str,
    max_n: int,
    words: int,
    seed: int,
    tie_rtol: float | None,
    progress: Callable[[str], None] | None,
    started: Callable[[int, int], None] | None = None,
) -> Analysis:
    """The search for an encoder–decoder (:class:`netproof.symbolic.Seq2Seq`): every word runs in
    :func:`netproof.symbolic.torch_backend.run_seq2seq` and in :func:`netproof.symbolic.seq2seq.run` for the
    construction's decoder step budget, and the decoder states y_t are compared step by step
    (:data:`SEQ2SEQ_TOLERANCE`) with the halting steps. The logit columns of a level hold the
    largest |float − exact| coordinate of any y_t (``max_logit_error``); there is no logit."""
    from netproof.symbolic.seq2seq import DEFAULT_MAX_STEPS
    from netproof.symbolic.seq2seq import run as run_exact
    from netproof.symbolic.torch_backend import run_seq2seq

    params = {k: str(v) for k, v in values.items()}
    net = c.build(values)
    assert isinstance(net, Seq2Seq)
    rng = random.Random(seed)
    levels: list[Level] = []
    lo = 0
    for n in _grid(max_n):
        ws = _sampled(c, values, net, lo, n, words, rng)
        worst = _worst(c)
        if worst is not None:
            ws += [w for w in worst(values, n) if w not in ws]
        lo = n
        if not ws:
            continue
        if started is not None:
            started(n, len(ws))
        bad: list[str] = []
        max_err = 0.0
        min_gap = math.inf
        ties = 0
        for w in ws:
            budget = DEFAULT_MAX_STEPS if c.max_steps is None else c.max_steps(values, w)
            key = (c.name, tuple(sorted(params.items())), -1)
            cached = _EXACT_CACHE.setdefault(key, {})
            if w not in cached:
                cached[w] = (None, run_exact(net, w, max_steps=budget))
            exact = cached[w][1]
            fl = run_seq2seq(
                net, w, dtype=dtype, device=device, max_steps=budget, tie_rtol=tie_rtol
            )
            min_gap = min(min_gap, fl.min_gap)
            ties += fl.unresolved_ties
            first: tuple[int, str, float, Any] | None = None
            for t in range(min(fl.steps, len(exact.steps))):
                for d in net.dims:
                    q = exact.value(t, d)
                    err = abs(fl.value(t, d) - float(q))
                    max_err = max(max_err, err)
                    if first is None and err > SEQ2SEQ_TOLERANCE:
                        first = (t, d, fl.value(t, d), q)
            if first is not None:
                t, d, x, q = first
                bad.append(
                    f"{_fmt_word(w)}: y_{t}[{d}] is {x:.6g} in {dtype}, {q} exactly (n = {exact.n})"
                )
            elif fl.halted_at != exact.halted_at:
                bad.append(
                    f"{_fmt_word(w)}: halts at step {fl.halted_at} in {dtype}, at {exact.halted_at} exactly"
                )
        lv = Level(
            n=n,
            words=len(ws),
            disagreements=len(bad),
            first_disagreement=bad[0] if bad else None,
            min_abs_logit_float=None,
            min_abs_logit_exact=None,
            max_logit_error=max_err,
            min_gap=None if math.isinf(min_gap) or math.isnan(min_gap) else float(min_gap),
            unresolved_ties=ties,
            undefined=0,
        )
        levels.append(lv)
        if progress is not None:
            progress(
                f"{c.name} {dtype} n={n:<6} words={lv.words:<4} disagree={lv.disagreements:<3} "
                f"max|y float − y exact|={_g(max_err)} ties={ties}"
            )
    return Analysis(
        construction=c.name,
        params=params,
        dtype=dtype,
        device=device,
        reference="exact (decoder states)",
        max_n=max_n,
        levels=tuple(levels),
    )


def _verdict(a: bool | None) -> str:
    return "undefined" if a is None else "accept" if a else "reject"


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


# --------------------------------------------------------------------------- the report


def documented_runs(registry: Mapping[str, Construction]) -> list[tuple[str, dict[str, str]]]:
    """The documented runs of ``registry``'s constructions, in registry order: each
    construction's declared runs (``Precision.runs``: its defaults, and for the Dyck generator
    the experiments of spec §3.6), as (name, parameters)."""
    return [
        (name, dict(given))
        for name, c in registry.items()
        if c.precision is not None
        for given in c.precision.runs
    ]


def all_runs(registry: Mapping[str, Construction]) -> list[tuple[str, dict[str, str]]]:
    """``--all``: the documented runs, then every other construction of ``registry`` with its
    defaults (those the analysis cannot run get a line saying why). The CLI passes
    :data:`netproof.constructions.REGISTRY`."""
    documented = documented_runs(registry)
    named = {name for name, _ in documented}
    return [*documented, *((name, {}) for name in registry if name not in named)]


REPORT_COMMAND = "netproof precision --all --max-n 256 --words 8 --markdown docs/precision.md"


def markdown_report(analyses: Sequence[Analysis], *, command: str = REPORT_COMMAND) -> str:
    """The docs page: one table of limits, then each run's margin curve."""
    lines = [
        "# Precision: where float runs stop agreeing with the exact networks",
        "",
        "Generated by",
        "",
        "```",
        command,
        "```",
        "",
        "(do not edit by hand). Each row runs one construction on the torch backend in one dtype on",
        "words of length n = 2, 4, 8, … (seeded samples plus the worst-case words of the construction's",
        "closed forms; see `verifier/floats/precision.py`) and compares every verdict with the reference:",
        "`exact` (the exact interpreter on the same words), `language` (the construction's language:",
        "what the exact network is proved to accept up to its claims' bounds, for networks with a",
        "square root or e^c that the exact interpreter cannot run) or `allowed sets` (the Dyck",
        "generator's next-symbol sets against the allowed sets of Dyck(k, D) at every position)",
        "or `exact (decoder states)` (an encoder–decoder: every decoder state y_t of the exact run,",
        "step by step, up to the construction's step budget; its *max error* is the largest",
        "|float − exact| coordinate of a y_t, and it has no logit).",
        "**limit** is the largest tested n up to which every tested length agreed. A float run is",
        "evidence, not proof. Hardmax heads take a plain float argmax (`--backend-ties` would use",
        "the torch backend's conservative tie tolerance). A row marked *not supported* says why the",
        "construction was not analysed: `gates` (Lemma A.1's gates) has a fixed input size, so there",
        "is no word length to grow; recurrent networks have no torch evaluation.",
        "",
        "| construction | params | dtype | reference | limit | first disagreement |",
        "|---|---|---|---|---|---|",
    ]
    for a in analyses:
        b = a.broken_at
        kept = {k: v for k, v in a.params.items() if k != "variant" or v != "fixed"}
        params = " ".join(f"{k}={v}" for k, v in kept.items()) or "—"
        limit = (
            f"≥ {a.limit} (all tested)"
            if b is None
            else "none"
            if a.limit is None
            else str(a.limit)
        )
        first = (
            "—"
            if b is None
            else f"n = {b.n}: {b.disagreements}/{b.words} words; e.g. `{b.first_disagreement}`"
        )
        if a.unsupported is not None:
            limit, first = "not supported", a.unsupported
        lines.append(
            f"| `{a.construction}` | {params} | {a.dtype} | {a.reference} | {limit} | "
            f"{first.replace('|', '∣')} |"
        )
    lines += [
        "",
        "## Margin curves",
        "",
        "Per n: words tested, disagreements, the smallest |logit| of the float run and of the exact",
        "run (for the generator: the float readout's margin to the ε threshold), the largest",
        "|float − exact| logit error, the smallest hardmax score gap met and the unresolved ties.",
        "",
    ]
    for a in analyses:
        if a.unsupported is not None:
            continue
        shown = " ".join(f"{k}={v}" for k, v in a.params.items())
        lines += [
            f"### `{a.construction}` {shown}, {a.dtype}",
            "",
            "| n | words | disagree | min abs logit (float) | min abs logit (exact) | max error | min gap | ties |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for lv in a.levels:
            lines.append(
                f"| {lv.n} | {lv.words} | {lv.disagreements} | {_g(lv.min_abs_logit_float)} | "
                f"{_g(lv.min_abs_logit_exact)} | {_g(lv.max_logit_error)} | {_g(lv.min_gap)} | "
                f"{lv.unresolved_ties} |"
            )
        lines.append("")
    return "\n".join(lines)
