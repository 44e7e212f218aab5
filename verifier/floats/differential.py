"""Differential checking: the torch backend's float run against the exact interpreters.

:func:`compare` evaluates the same words with :mod:`netproof.symbolic.torch_backend` and with an exact
reference, and reports where they agree: the accept bit of a classifier, the next-symbol sets of
a generator at every position, the largest |float logit − exact logit|, and what the float run
itself reports (the smallest hardmax score gap it met, the ties it could not resolve, the
smallest readout margin). The reference is, per network, the first that applies:

- :mod:`netproof.symbolic.batched` (integers, for hardmax classifiers :func:`netproof.symbolic.batched.supports`
  accepts, without ``length``);
- :func:`netproof.symbolic.exact.run` per word;
- :func:`netproof.symbolic.sympy_interp.run` where the exact interpreter leaves ℚ (√ in a layer norm,
  e^c in a softmax), then :func:`netproof.symbolic.interval.run` where sympy cannot decide a sign (the
  ``--backend auto`` order of ``netproof run``).

A word the reference calls undefined (``UndefinedValueError``) agrees when the float run gives
no verdict (NaN) for it; a word the reference cannot decide is counted as ``undecided``, a word
whose float logit is too close to 0 for its sign to mean anything (the float run's verdict is
``None``) as ``float_undecided`` (``float_undecided_at_zero`` of them have an exact logit of
exactly 0, where no float run can tell the sign): neither is a disagreement.

May import: :mod:`netproof.symbolic` and its interpreters (torch inside functions); never SMT,
fuzzing, campaigns, the CLI or a paper module.

>>> from netproof.constructions.chiang2022 import parity_transformer
>>> a = compare(parity_transformer(), ["", "1", "0110", "111"])
>>> a.agree, a.disagreements, a.exact_backends, a.max_logit_error < 1e-15
(True, 0, ('exact',), True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import Classifier, Network, NotRationalError, tokenize
from netproof.symbolic.evaluation import UndecidedSignError, UndefinedValueError

__all__ = ["MAX_LISTED", "REFERENCES", "Agreement", "Disagreement", "compare"]

MAX_LISTED = 5
"""How many disagreeing words an :class:`Agreement` lists (all of them are counted)."""


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One word on which the float run and the exact reference differ."""

    index: int
    word: tuple[str, ...]
    what: str  # "accept bit" | "next symbols" | "defined"
    float_value: str
    exact_value: str


@dataclass(frozen=True, slots=True)
class Agreement:
    """The result of :func:`compare` (see the module docstring)."""

    words: int
    disagreements: int
    first: tuple[Disagreement, ...]
    undecided: int
    float_undecided: int
    float_undecided_at_zero: int
    max_logit_error: float | None
    min_gap: float
    unresolved_ties: int
    tie_locations: tuple[str, ...]
    readout_margin: float
    dtype: str
    device: str
    exact_backends: tuple[str, ...]

    @property
    def agree(self) -> bool:
        return self.disagreements == 0

    def to_json(self) -> dict[str, Any]:
        """A JSON object (``inf`` becomes ``null``): the ``agreement`` of ``netproof run --check``."""
        return {
            "agree": self.agree,
            "words": self.words,
            "disagreements": self.disagreements,
            "first_disagreements": [
                {
                    "index": d.index,
                    "word": list(d.word),
                    "what": d.what,
                    "float": d.float_value,
                    "exact": d.exact_value,
                }
                for d in self.first
            ],
            "undecided": self.undecided,
            "float_undecided": self.float_undecided,
            "float_undecided_at_zero": self.float_undecided_at_zero,
            "max_logit_error": self.max_logit_error,
            "min_gap": _finite(self.min_gap),
            "unresolved_ties": self.unresolved_ties,
            "tie_locations": list(self.tie_locations),
            "readout_margin": _finite(self.readout_margin),
            "dtype": self.dtype,
            "device": self.device,
            "exact_backends": list(self.exact_backends),
        }


def _finite(x: float) -> float | None:
    return None if math.isinf(x) or math.isnan(x) else x


def _as_float(value: Any) -> float:
    """A float near an exact value (Fraction, sympy number, or the midpoint of an interval)."""
    if isinstance(value, Fraction):
        return float(value)
    mid = getattr(value, "mid", None)
    if mid is not None:  # an mpmath interval
        return float(mid.a)
    return float(value)


REFERENCES: tuple[str, ...] = ("auto", "exact", "sympy", "interval")


def _exact_per_word(
    net: Network, word: tuple[str, ...], length: int | None, reference: str = "auto"
) -> tuple[str, Any]:
    """The reference trace of one word: exact, else sympy, else intervals (``auto``), or the one
    ``reference`` names."""
    from netproof.symbolic import exact, interval, sympy_interp

    last: Exception | None = None
    order = (("exact", exact.run), ("sympy", sympy_interp.run), ("interval", interval.run))
    for name, run in order if reference == "auto" else [o for o in order if o[0] == reference]:
        try:
            return name, run(net, word, length=length)
        except (NotRationalError, UndecidedSignError) as exc:
            last = exc
    return "undecided", last


def compare(
    net: Network,
    words: Sequence[str | Sequence[str]],
    *,
    dtype: str = "float64",
    device: str = "cpu",
    length: int | None = None,
    compiled: Any = None,
    reference: str = "auto",
) -> Agreement:
    """Run ``words`` through the torch backend (``dtype``, ``device``) and an exact reference,
    and report their agreement (``compiled``: a :class:`~netproof.symbolic.torch_backend.CompiledNetwork`
    of ``net`` to reuse). ``reference``: ``auto`` (the module docstring's order), or ``exact``,
    ``sympy`` or ``interval`` per word (e.g. ``interval`` where sympy's simplification is slow)."""
    from netproof.symbolic import batched, torch_backend

    if reference not in REFERENCES:
        raise ValueError(f"reference={reference!r} is not one of {', '.join(REFERENCES)}")

    symbols = [tokenize(net.alphabet, w) for w in words]
    fb = torch_backend.run_batch(
        compiled if compiled is not None else net,
        symbols,
        dtype=dtype,
        device=device,
        length=length,
    )
    disagreements: list[Disagreement] = []
    count = 0
    undecided = 0
    float_undecided = 0
    at_zero = 0
    max_err: float | None = None
    backends: set[str] = set()

    def differ(i: int, what: str, got: object, want: object) -> None:
        nonlocal count
        count += 1
        if len(disagreements) < MAX_LISTED:
            disagreements.append(Disagreement(i, symbols[i], what, str(got), str(want)))

    def logit_error(i: int, exact_logit: Any) -> None:
        nonlocal max_err
        got = fb.logit(i)
        if got is None or math.isnan(got):
            return
        err = abs(got - _as_float(exact_logit))
        max_err = err if max_err is None else max(max_err, err)

    if (
        reference in ("auto", "exact")
        and length is None
        and symbols
        and batched.supports(net) is None
    ):
        backends.add("exact")
        ref = batched.evaluate(net, symbols)
        for i in range(len(symbols)):
            want = bool(ref.accepted[i])
            if fb.accepted[i] is None:
                float_undecided += 1
                at_zero += ref.logit(i) == 0
            elif fb.accepted[i] != want:
                differ(i, "accept bit", fb.accepted[i], want)
            logit_error(i, ref.logit(i))
    else:
        for i, word in enumerate(symbols):
            try:
                name, trace = _exact_per_word(net, word, length, reference)
            except UndefinedValueError as exc:
                backends.add("exact")
                if fb.accepted[i] is not None:
                    differ(i, "defined", f"accepted={fb.accepted[i]}", f"undefined ({exc})")
                continue
            if name == "undecided":
                undecided += 1
                continue
            backends.add(name)
            if isinstance(net.readout, Classifier):
                if trace.accepted is None:
                    undecided += 1
                elif fb.accepted[i] is None:
                    float_undecided += 1
                    at_zero += trace.output is not None and trace.output == 0
                elif fb.accepted[i] != trace.accepted:
                    differ(i, "accept bit", fb.accepted[i], trace.accepted)
                if trace.output is not None:
                    logit_error(i, trace.output)
            else:
                got = fb.next_symbols[i] if fb.next_symbols is not None else None
                if got != trace.next_symbols:
                    differ(i, "next symbols", got, trace.next_symbols)
    return Agreement(
        words=len(symbols),
        disagreements=count,
        first=tuple(disagreements),
        undecided=undecided,
        float_undecided=float_undecided,
        float_undecided_at_zero=at_zero,
        max_logit_error=max_err,
        min_gap=fb.min_gap,
        unresolved_ties=fb.unresolved_ties.count,
        tie_locations=tuple(str(t) for t in fb.unresolved_ties.first),
        readout_margin=fb.readout_margin,
        dtype=fb.dtype,
        device=fb.device,
        exact_backends=tuple(sorted(backends)),
    )
