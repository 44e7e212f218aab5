"""The vocabulary: claims, verdicts, construction declarations, languages and reference machines.

Everything here is data that both the constructions and the engines use, so that neither has to
import the other: a paper module declares its claims, lemmas and experiments with these types,
and the checkers of :mod:`netproof.verifier.exhaustive` (and the SMT, fuzzing and float engines)
turn a claim into a :data:`Verdict`. Nothing here evaluates a network.

Modules, by concern (this package re-exports their public names, so
``from netproof.verifier.claims import Recognizes`` works for each):

- :mod:`~netproof.verifier.claims.languages`: :data:`Word`, :class:`Language`,
  :class:`Automaton`, :class:`SequenceTask`, and PARITY and FIRST;
- :mod:`~netproof.verifier.claims.dyck`: Dyck(k, D) in plain Python (membership, stacks,
  allowed next symbols, samplers, the close-bracket metric);
- :mod:`~netproof.verifier.claims.machines`: reference σ-RNNs and two-stack machines;
- :mod:`~netproof.verifier.claims.kinds`: the claim kinds (:class:`Recognizes`,
  :class:`ValueIs`, ..., :class:`Simulates`; the union :data:`Claim`);
- :mod:`~netproof.verifier.claims.lemmas`: the block lemmas of a paper's proof
  (:class:`BooleanBlock`, :class:`NearestSelection`, :class:`RankedSelection`, :class:`ScaledBlock`);
- :mod:`~netproof.verifier.claims.counting`: counter automata (:class:`CounterAutomaton`,
  :class:`CounterRule`, :func:`linear`) and the block lemmas of counting networks
  (:class:`UniformCount`, :class:`CountComparison`);
- :mod:`~netproof.verifier.claims.verdicts`: ``Verdict = Proved | Refuted | Unknown``;
- :mod:`~netproof.verifier.claims.experiments`: float experiments (:class:`Experiment`,
  :class:`Curve`) and the precision declaration (:class:`Precision`);
- :mod:`~netproof.verifier.claims.declarations`: :class:`Construction`, :class:`Param`, the
  parameter parsers and :data:`VARIANT`.

May import: the IR (:mod:`netproof.symbolic`, no interpreter) and the number helpers of
:mod:`netproof.symbolic.numbers`; never an interpreter, an engine, z3 or torch. The modules of
this package import each other directly (never this ``__init__``).
"""

from __future__ import annotations

from .counting import CountComparison, CounterAutomaton, CounterRule, UniformCount, linear
from .declarations import VARIANT, Construction, Param, parse_fraction, parse_int
from .experiments import (
    Curve,
    Experiment,
    ExperimentError,
    NextSets,
    Precision,
    Sampler,
    WordFamily,
)
from .kinds import (
    AllowedNext,
    Backend,
    BlockIdentity,
    Bound,
    Claim,
    ClaimBase,
    CompiledProgram,
    CrossEntropy,
    ExactFact,
    Expectation,
    FollowsAutomaton,
    FollowsCounts,
    ForAll,
    Identity,
    LayerInduction,
    MirrorInvariant,
    Output,
    PairHeights,
    Point,
    PredictsNext,
    Quantity,
    Recognizes,
    SameLanguage,
    SelectsNearest,
    SignForAllBases,
    Simulates,
    SoftAgrees,
    StateProperty,
    StateValue,
    TieRuleFree,
    TraceProperty,
    UniqueSelections,
    ValueIs,
    fact_at,
    stated,
)
from .languages import Automaton, Language, SequenceTask, StackAutomaton, Word
from .lemmas import BooleanBlock, Lemma, NearestSelection, RankedSelection, ScaledBlock
from .verdicts import Proved, Refuted, Unknown, Verdict

__all__ = [
    "VARIANT",
    "AllowedNext",
    "Automaton",
    "Backend",
    "BlockIdentity",
    "BooleanBlock",
    "Bound",
    "Claim",
    "ClaimBase",
    "CompiledProgram",
    "Construction",
    "CountComparison",
    "CounterAutomaton",
    "CounterRule",
    "CrossEntropy",
    "Curve",
    "ExactFact",
    "Expectation",
    "Experiment",
    "ExperimentError",
    "FollowsAutomaton",
    "FollowsCounts",
    "ForAll",
    "Identity",
    "Language",
    "LayerInduction",
    "Lemma",
    "MirrorInvariant",
    "NearestSelection",
    "NextSets",
    "Output",
    "PairHeights",
    "Param",
    "Point",
    "Precision",
    "PredictsNext",
    "Proved",
    "Quantity",
    "RankedSelection",
    "Recognizes",
    "Refuted",
    "SameLanguage",
    "Sampler",
    "ScaledBlock",
    "SelectsNearest",
    "SequenceTask",
    "SignForAllBases",
    "Simulates",
    "SoftAgrees",
    "StackAutomaton",
    "StateProperty",
    "StateValue",
    "TieRuleFree",
    "TraceProperty",
    "UniformCount",
    "UniqueSelections",
    "Unknown",
    "ValueIs",
    "Verdict",
    "Word",
    "WordFamily",
    "fact_at",
    "linear",
    "parse_fraction",
    "parse_int",
    "stated",
]
