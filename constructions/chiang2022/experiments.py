"""Chiang & Cholak 2022's float experiments: Figures 2 and 3, and the words that stress float runs.

Owns the figures as :class:`~netproof.verifier.claims.Experiment` declarations (:data:`FIGURE2`,
:data:`FIGURE3`, listed in :data:`EXPERIMENTS` and collected by :mod:`netproof.constructions`),
their networks (:func:`figure2_curves`, :func:`figure3_curves`, :func:`with_count_weight`) and
the spec's numbers, and the worst-case words of the PARITY and FIRST transformers for the
precision search (:data:`EXTREMES`, :data:`FLAWED_FIRST`). May import: the IR, this paper's
networks and the vocabulary (:mod:`netproof.verifier.claims`); never an interpreter, an engine
or torch: :func:`netproof.verifier.floats.plots.experiment_rows` runs the figures.

``netproof plot cross-entropy parity first --out fig2.png`` reproduces Figure 2: the mean
cross-entropy (in bits) of the PARITY and FIRST transformers against the word length |w|, for
three networks each (spec ``chiang2022_yao2021.md`` §2.8; c = 1, so the softmax base is e, and
c′ = 1):

- ``no LN``: the transformers of §2.2/§2.3 (Proposition 1); |s| shrinks like 1/n² (PARITY) and
  1/n (FIRST), so the cross-entropy tends to 1 bit;
- ``LN eps=1e-5``: the §3.1 doubled network with layer norm ε = 10⁻⁵ after every residual, plus
  Proposition 2's layer with the same ε; the ε in the last layer norm swamps |s| as n grows;
- ``LN eps=0``: the same with ε = 0: the logit is exactly ±c′√(D̂/2) = ±3 (PARITY) and ±√6
  (FIRST), so the cross-entropy is the constant −log₂σ(3) = 0.0701 or −log₂σ(√6) = 0.1195.

``netproof plot sensitivity --out fig3.png`` reproduces Figure 3: PARITY with layer norm (ε = 0)
and Proposition 2's layer, with the weight [W̄^{1,1,V}]_{6,2} (value ``k/n`` of the counting
head, read from ``I[w=1]``) set to 1 + δ, its mirror row moving with it (:func:`with_count_weight`).

Each point is the mean over ``strings`` uniformly random words of {0,1}^|w| (seeded); these
figures are float experiments, as in the paper, not proofs.

>>> [c.name for c in figure2_curves(["first"])]
['first no LN', 'first LN eps=1e-5', 'first LN eps=0']
>>> binary_extremes({}, 3)
[('0', '0', '0'), ('1', '1', '1'), ('1', '0', '0'), ('0', '0', '1')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic import AttentionLayer, Network
from netproof.verifier.claims import Curve, Experiment, ExperimentError, Language, Precision, Word
from netproof.verifier.claims.languages import FIRST, PARITY

from .networks import doubled, first_transformer, parity_transformer, prop2_layer

__all__ = [
    "EXPERIMENTS",
    "EXTREMES",
    "FIG2_LENGTHS",
    "FIG2_SPEC",
    "FIG3_DELTAS",
    "FIG3_LENGTHS",
    "FIGURE2",
    "FIGURE3",
    "FLAWED_FIRST",
    "binary_extremes",
    "figure2_curves",
    "figure3_curves",
    "flawed_first_minimizers",
    "with_count_weight",
]

#: The |w| of the spec's Figure 2 table (§2.8).
FIG2_LENGTHS: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)

#: The spec's Figure 2 table (§2.8): mean cross-entropy in bits over 1000 random words per |w|,
#: keyed by curve name, one value per entry of :data:`FIG2_LENGTHS`.
FIG2_SPEC: dict[str, tuple[float, ...]] = {
    "parity no LN": (
        0.7513,
        0.8766,
        0.9698,
        0.9909,
        0.9975,
        0.9996,
        0.9999,
        1.0000,
        1.0000,
        1.0000,
    ),
    "parity LN eps=1e-5": (
        0.0701,
        0.0702,
        0.0709,
        0.0794,
        0.1771,
        0.7015,
        0.9155,
        0.9782,
        0.9965,
        0.9991,
    ),
    "parity LN eps=0": (0.0701,) * 10,
    "first no LN": (0.7603, 0.8071, 0.8786, 0.9250, 0.9575, 0.9815, 0.9905, 0.9952, 0.9981, 0.9990),
    "first LN eps=1e-5": (
        0.1195,
        0.1195,
        0.1195,
        0.1195,
        0.1195,
        0.1195,
        0.1197,
        0.1200,
        0.1222,
        0.1295,
    ),
    "first LN eps=0": (0.1195,) * 10,
}

#: Figure 3's perturbations δ of [W̄^{1,1,V}]_{6,2} and word lengths.
FIG3_DELTAS: tuple[Fraction, ...] = (
    Fraction(0),
    Fraction(1, 1000),
    Fraction(-1, 1000),
    Fraction(1, 100),
    Fraction(-1, 100),
    Fraction(1, 10),
    Fraction(-1, 10),
)
FIG3_LENGTHS: tuple[int, ...] = (10, 20, 50, 100, 200, 500)

_LANGUAGES: dict[str, tuple[Language, Callable[[str], Network]]] = {
    "parity": (PARITY, lambda c: parity_transformer(c)),
    "first": (FIRST, lambda c: first_transformer(c)),
}


# --------------------------------------------------------------------------- Figure 2


def figure2_curves(languages: Iterable[str]) -> tuple[Curve, ...]:
    """Figure 2's three networks per language (c = 1, c′ = 1; see the module docstring)."""
    curves: list[Curve] = []
    for name in languages:
        if name not in _LANGUAGES:
            raise ExperimentError(
                f"language={name!r} is not in Figure 2; choose from {', '.join(_LANGUAGES)}"
            )
        lang, build = _LANGUAGES[name]
        base = build("1")
        eps5 = Fraction(1, 100_000)
        curves += [
            Curve(name=f"{name} no LN", network=base, language=lang),
            Curve(
                name=f"{name} LN eps=1e-5",
                network=prop2_layer(doubled(base, eps=eps5), 1, eps=eps5),
                language=lang,
            ),
            Curve(
                name=f"{name} LN eps=0", network=prop2_layer(doubled(base, eps=0), 1), language=lang
            ),
        ]
    return tuple(curves)


def _figure2(names: Sequence[str], values: Sequence[str] | None) -> tuple[Curve, ...]:
    """The curves of ``netproof plot cross-entropy [LANGUAGES]`` (default both languages)."""
    return figure2_curves(names or ("parity", "first"))


# --------------------------------------------------------------------------- Figure 3


def with_count_weight(net: Network, value: Fraction, *, mirror: bool = True) -> Network:
    """``net`` with the counting head's weight from ``I[w=1]`` to ``k/n`` set to ``value``.

    That weight is the paper's [W̄^{1,1,V}]_{6,2} (dim 6 is k/n, dim 2 is I[w=1]). In a doubled
    network (§3.1, W̄^V = [[W^V 0]; [−W^V 0]]) ``mirror=True`` (the default) moves the mirrored
    row −k/n with it (to −value): the perturbation of W^V itself, so every activation keeps the
    form [u; −u]. This reproduces the spec's Figure 3 numbers (§2.8: perfect at |δ| ≤ 10⁻³ up
    to |w| = 500, |δ| = 0.01 perfect at |w| = 10 and about 0.45 accurate at |w| = 100);
    ``mirror=False`` changes the single entry of W̄ only, which breaks the mean-zero form and
    fails sooner (accuracy about 0.5 at |w| = 500 already for |δ| = 10⁻³). The copy is rebuilt
    through ``dataclasses.replace``, so every node is validated again.
    """
    for li, sub in enumerate(net.layers):
        block = sub.block
        if not (isinstance(block, AttentionLayer) and block.name == "count"):
            continue
        for hi, head in enumerate(block.heads):
            v = head.value
            if "k/n" in v.outputs and "I[w=1]" in v.inputs:
                col = v.inputs.index("I[w=1]")
                new = {"k/n": value, **({"−k/n": -value} if mirror and "−k/n" in v.outputs else {})}
                weights = tuple(
                    tuple(new[o] if c == col and o in new else w for c, w in enumerate(ws))
                    for o, ws in zip(v.outputs, v.weights, strict=True)
                )
                head2 = dataclasses.replace(head, value=dataclasses.replace(v, weights=weights))
                block2 = dataclasses.replace(
                    block, heads=(*block.heads[:hi], head2, *block.heads[hi + 1 :])
                )
                layers = (
                    *net.layers[:li],
                    dataclasses.replace(sub, block=block2),
                    *net.layers[li + 1 :],
                )
                return dataclasses.replace(net, layers=layers)
    raise ExperimentError(
        f"network {net.name!r} has no attention layer 'count' with a head writing k/n from I[w=1]; "
        "Figure 3 perturbs the PARITY transformer's counting head"
    )


def figure3_curves(deltas: Iterable[Fraction] = FIG3_DELTAS) -> tuple[Curve, ...]:
    """PARITY with layer norm (ε = 0) and Proposition 2's layer (c = c′ = 1), with
    [W̄^{1,1,V}]_{6,2} = 1 + δ for each δ."""
    base = prop2_layer(doubled(parity_transformer("1"), eps=0), 1)
    return tuple(
        Curve(name=f"delta={delta}", network=with_count_weight(base, 1 + delta), language=PARITY)
        for delta in deltas
    )


def _figure3(names: Sequence[str], values: Sequence[str] | None) -> tuple[Curve, ...]:
    """The curves of ``netproof plot sensitivity [--deltas Q ...]`` (default :data:`FIG3_DELTAS`)."""
    if names:
        raise ExperimentError(
            f"sensitivity takes no languages (it is PARITY's Figure 3); got {list(names)}"
        )
    try:
        deltas = [Fraction(q) for q in values] if values else list(FIG3_DELTAS)
    except (ValueError, ZeroDivisionError) as exc:
        raise ExperimentError(
            f"--deltas {list(values or ())}: each must be a rational such as 1/100 ({exc})"
        ) from exc
    return figure3_curves(deltas)


FIGURE2 = Experiment(
    name="cross-entropy",
    figure="fig2",
    title="Chiang & Cholak Figure 2: cross-entropy against |w| (c = c′ = 1)",
    help="Figure 2 (CE against |w|)",
    reference="Chiang & Cholak 2022, Figure 2 (spec chiang2022_yao2021.md §2.8)",
    alphabet=PARITY.alphabet,
    lengths=FIG2_LENGTHS,
    curves=_figure2,
)

FIGURE3 = Experiment(
    name="sensitivity",
    figure="fig3",
    title="Chiang & Cholak Figure 3: PARITY (LN ε = 0, Prop. 2) with [W̄^{1,1,V}]_{6,2} = 1 + δ",
    help="Figure 3 (one weight set to 1 + δ)",
    reference="Chiang & Cholak 2022, Figure 3 (spec chiang2022_yao2021.md §2.8)",
    alphabet=PARITY.alphabet,
    lengths=FIG3_LENGTHS,
    curves=_figure3,
    accuracy_panel=True,
)

EXPERIMENTS: tuple[Experiment, ...] = (FIGURE2, FIGURE3)


# --------------------------------------------------------------------------- precision


def binary_extremes(values: Mapping[str, Any], m: int) -> list[Word]:
    """PARITY/FIRST (spec §2.2–2.3): |s| depends on n and the parity of k only (PARITY) or on n
    only (FIRST), so the all-0, all-1 and one-1 words cover every margin the closed forms give."""
    if m < 1:
        return []
    return [("0",) * m, ("1",) * m, ("1",) + ("0",) * (m - 1), ("0",) * (m - 1) + ("1",)]


def flawed_first_minimizers(values: Mapping[str, Any], m: int) -> list[Word]:
    """§4.2: s = (E−1)/(E+n−1)(I[w₁=1] − ½) + (k − n/2)/(E+n−1); its smallest margin on an
    accepted word is w = 1 0^{n−2} (s = (E+1−n)/(2(E+n−1))) and on a rejected one w = 0 1^{n−2}."""
    if m < 1:
        return []
    return [("1",) + ("0",) * (m - 1), ("0",) + ("1",) * (m - 1)]


EXTREMES = Precision(worst=binary_extremes, runs=({},))
"""The precision declaration of the PARITY and FIRST transformers: :func:`binary_extremes`,
one documented run with the defaults."""

FLAWED_FIRST = Precision(worst=flawed_first_minimizers, runs=({},))
"""The precision declaration of the flawed FIRST transformers: :func:`flawed_first_minimizers`,
one documented run with the defaults."""
