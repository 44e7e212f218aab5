"""Float experiments as declarations: a paper's figures, and the words that stress a float run.

A construction module declares its float experiments here the way it declares claims: as frozen
data that names no engine. The float engines (:mod:`netproof.verifier.floats`) read them.

- :class:`Experiment`: a paper's figure, e.g. Chiang & Cholak's Figure 2: curves of classifier
  networks (:class:`Curve`) whose mean cross-entropy on random words is plotted against |w|.
  A construction module lists its experiments in ``EXPERIMENTS``; :mod:`netproof.constructions`
  collects them by name (``netproof plot NAME``) and
  :func:`netproof.verifier.floats.plots.experiment_rows` computes their points.
- :class:`Precision`: what a construction declares for the precision search
  (:func:`netproof.verifier.floats.precision.analyse`, ``netproof precision``): its worst-case
  words, how to sample words of it, the reference next-symbol sets of a generator, and the
  documented runs. It is the ``precision`` field of a
  :class:`~netproof.verifier.claims.declarations.Construction`.

May import: the IR (:mod:`netproof.symbolic`, for the networks a curve holds) and the languages
of this package; never an interpreter, an engine, z3 or torch.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from netproof.symbolic import Network

from .languages import Language, Word

__all__ = [
    "Curve",
    "Experiment",
    "ExperimentError",
    "NextSets",
    "Precision",
    "Sampler",
    "WordFamily",
]


class ExperimentError(ValueError):
    """An experiment request that cannot be made: an unknown curve name, a value that does not
    parse, a network the experiment cannot perturb. The message names the value and the fix."""


# --------------------------------------------------------------------------- figures


@dataclass(frozen=True, slots=True, kw_only=True)
class Curve:
    """One curve of a figure: a classifier network and the language its labels come from."""

    name: str
    network: Network
    language: Language


@dataclass(frozen=True, slots=True, kw_only=True)
class Experiment:
    """A paper's float figure: for each length |w| in ``lengths``, random words of ``alphabet``
    (the same words for every curve at one length), and per curve the mean cross-entropy of its
    network's logit against its language's labels (and the accuracy).

    ``curves(names, values)`` builds the curves from what the user gave: ``names`` (the command
    line's positional arguments, e.g. the languages of Figure 2; empty when none were given) and
    ``values`` (the strings given with ``--deltas``, None when none were given). It raises
    :class:`ExperimentError` with the fix when they do not fit the experiment.
    """

    name: str
    """The name ``netproof plot`` takes (e.g. ``cross-entropy``)."""
    figure: str
    """The figure's short id, the CSV's ``figure`` column (e.g. ``fig2``)."""
    title: str
    """The title of the plot."""
    help: str
    """One line for the command's help (e.g. ``Figure 2 (CE against |w|)``)."""
    reference: str
    alphabet: tuple[str, ...]
    lengths: tuple[int, ...]
    """The word lengths of the paper's figure (the default of ``--lengths``)."""
    curves: Callable[[Sequence[str], Sequence[str] | None], tuple[Curve, ...]]
    accuracy_panel: bool = False
    """Whether the plot has a second panel with the accuracy against |w|."""


# --------------------------------------------------------------------------- precision

WordFamily: TypeAlias = Callable[[Mapping[str, Any], int], list[Word]]
"""(parameter values, n) -> the words with about n symbols that a construction's closed forms
single out as the hardest for a float run."""

Sampler: TypeAlias = Callable[
    [Mapping[str, Any], tuple[str, ...], int, int, int, random.Random], list[Word]
]
"""(parameter values, the network's alphabet, lo, n, count, rng) -> ``count`` words with
lo < |w| <= n (fewer when the sampler cannot fit the range), drawn with ``rng`` only."""

NextSets: TypeAlias = Callable[[Mapping[str, Any], Word], list[set[str]]]
"""(parameter values, word) -> the reference set of allowed next symbols at every predicting
position of the word, in the order a generator's readout gives them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Precision:
    """What a construction declares for the float precision search.

    ``worst``: the worst-case words the search adds at every length (e.g. w = 1 0^{n−2} for the
    flawed FIRST transformer, whose exact margin is the smallest). ``sample``: how to draw the
    sampled words (None: uniform words over the network's alphabet). ``next_sets``: for a
    generator (a network with a next-symbol readout), the reference sets the float run is
    compared with. ``runs``: the documented runs of ``netproof precision --all`` for this
    construction, as parameter overrides (``{}``: the defaults); empty when the construction is
    not part of the documented set (``--all`` still runs it with its defaults, after them).
    """

    worst: WordFamily | None = None
    sample: Sampler | None = None
    next_sets: NextSets | None = None
    runs: tuple[Mapping[str, str], ...] = ()
