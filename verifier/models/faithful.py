"""The faithfulness gate: an imported network is compared with the model it was imported from
before anything is claimed about it.

:func:`check_faithful` runs the source model (in float64 and in its own dtype) on every word up to
a small length and on random longer words, and compares each output with the imported network's
rigorous enclosure (:mod:`.enclosure`: an interval that holds the exact value of the imported
network). A float run of the same function lies within its rounding error of that interval; the
gate allows ``√ε·(1 + |y|)`` (ε the dtype's machine epsilon: 1.5·10⁻⁸ in float64, 3.5·10⁻⁴ in
float32) and refuses the import past it, naming the first differing word and both values. This
tolerance is a stated bound on the float run's rounding, not a proof: the gate is evidence that
the import is the model's function, and the words it ran are named in the report.

May import the enclosure and the IR; torch inside functions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from netproof.symbolic.errors import SymbolicError
from netproof.symbolic.ir import Network

from .exact_enclosure import batched_logits

__all__ = ["FaithReport", "UnfaithfulImportError", "check_faithful", "gate_words"]

Run = Callable[[list[tuple[str, ...]]], Sequence[float]]


class UnfaithfulImportError(SymbolicError, ValueError):
    """The imported network computes another function than the model it came from."""


@dataclass(slots=True)
class FaithReport:
    """What the gate ran: how many words (``exhaustive_to``: every word up to that length, then
    ``sampled`` random longer ones), the largest gap to the enclosure per dtype run and the
    tolerance used."""

    words: int = 0
    exhaustive_to: int = 0
    sampled: int = 0
    max_len: int = 0
    gaps: dict[str, float] = field(default_factory=dict)
    tolerances: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        runs = ", ".join(
            f"{k}: largest gap {self.gaps[k]:.2g} (tolerance {self.tolerances[k]:.2g}·(1+|y|))"
            for k in self.gaps
        )
        sampled = (
            f", {self.sampled} random words of length <= {self.max_len}" if self.sampled else ""
        )
        return (
            f"faithful on {self.words} words (every word of length <= {self.exhaustive_to}"
            f"{sampled}); {runs}"
        )


def gate_words(
    alphabet: Sequence[str], max_len: int, *, budget: int = 256, samples: int = 32, seed: int = 0
) -> tuple[list[tuple[str, ...]], int]:
    """Every word up to the longest length whose words fit in ``budget`` (at most ``max_len``),
    then ``samples`` random words of the longer lengths (fixed seed); and that length."""
    k = len(alphabet)
    words: list[tuple[str, ...]] = [()]
    layer: list[tuple[str, ...]] = [()]
    short = 0
    while short < max_len and len(words) + len(layer) * k <= budget:
        layer = [(*w, a) for w in layer for a in alphabet]
        words += layer
        short += 1
    rng = random.Random(seed)
    if short < max_len:
        for _ in range(samples):
            m = rng.randint(short + 1, max_len)
            words.append(tuple(rng.choice(list(alphabet)) for _ in range(m)))
    return words, short


def _enclose(net: Network, words: list[tuple[str, ...]]) -> list[tuple[float, float]]:
    import torch

    enc = batched_logits(net)
    emb = net.embedding
    pre = [enc.token_index[t] for t in getattr(emb, "prefix", ())]
    suf = [enc.token_index[t] for t in getattr(emb, "suffix", ())]
    by_len: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_len.setdefault(len(w), []).append(i)
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(words)
    for m, idx in by_len.items():
        rows = [pre + [enc.token_index[a] for a in words[i]] + suf for i in idx]
        tokens = torch.tensor(rows, dtype=torch.long).reshape(len(idx), -1)
        with torch.no_grad():
            y = enc.logits(tokens, len(pre) + m + len(suf))
        for j, i in enumerate(idx):
            out[i] = (float(y.m[j] - y.r[j]), float(y.m[j] + y.r[j]))
    return out


def check_faithful(
    net: Network,
    runs: dict[str, tuple[Run, float]],
    *,
    max_len: int,
    budget: int = 256,
    samples: int = 32,
    seed: int = 0,
    words: Sequence[tuple[str, ...]] | None = None,
) -> FaithReport:
    """Compare ``net``'s enclosure with each source run (``runs[label] = (run, eps)``: ``run``
    maps a list of words to the source model's outputs, ``eps`` its dtype's machine epsilon) on
    the gate's words (:func:`gate_words`, or ``words``: those of a recording); an :class:`UnfaithfulImportError` names the first word
    whose output lies further than ``√eps·(1 + |y|)`` from the enclosure, and both values."""
    if words is None:
        words, short = gate_words(net.alphabet, max_len, budget=budget, samples=samples, seed=seed)
    else:  # the words a recording holds (the source model ran where its library is installed)
        words = [tuple(w) for w in words if len(w) <= max_len]
        k, short = len(net.alphabet), 0
        while short < max_len and len([w for w in words if len(w) == short + 1]) == k ** (
            short + 1
        ):
            short += 1
    emb = net.embedding
    if not (getattr(emb, "prefix", ()) or getattr(emb, "suffix", ())):
        words = [w for w in words if w]  # the empty word gives such a model no token at all
    bounds = _enclose(net, words)
    report = FaithReport(
        words=len(words),
        exhaustive_to=short,
        sampled=sum(1 for w in words if len(w) > short),
        max_len=max_len,
    )
    for label, (run, eps) in runs.items():
        tol = eps**0.5
        ys = list(run(words))
        worst = 0.0
        for w, y, (lo, hi) in zip(words, ys, bounds, strict=True):
            y = float(y)
            gap = max(lo - y, y - hi, 0.0) if y == y else float("inf")
            if gap > tol * (1 + abs(y)):
                shown = " ".join(w) or "ε"
                raise UnfaithfulImportError(
                    f"the imported network is not the model: on the word {shown!r} (length "
                    f"{len(w)}) the model's {label} run gives {y:.10g} and the imported network "
                    f"[{lo:.10g}, {hi:.10g}] (gap {gap:.3g} > {tol:.2g}·(1+|y|)); the mapping of "
                    "the model is wrong (a convention of the import), please report it"
                )
            worst = max(worst, gap)
        report.gaps[label] = worst
        report.tolerances[label] = tol
    return report


def dtype_eps(dtype: Any) -> float:
    """The machine epsilon of a torch float dtype."""
    import torch

    return float(torch.finfo(dtype).eps)
