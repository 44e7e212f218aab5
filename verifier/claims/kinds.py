"""Claim kinds: what a paper asserts about a network, as frozen data with its bound and reference.

A claim says what a paper asserts about a network, with its bound and its paper reference; the
checkers of :mod:`netproof.verifier.exhaustive` (and the SMT engines) turn it into a
:data:`~netproof.verifier.claims.verdicts.Verdict`. Nothing here evaluates a network, so
constructions can declare claims without importing an interpreter, z3 or torch.

- :class:`Recognizes`: the accept bit equals membership in a reference language for every word
  with ``min_len <= |w| <= max_len``.
- :class:`ValueIs`: a value of the network (the output logit, or a residual dim after a named
  step, at every position) equals a closed form, exactly (optionally as an identity in the
  symbolic softmax base E).
- :class:`Bound`: a value (or its absolute value, or the cross-entropy) lies within bounds.
- :class:`SignForAllBases`: for every word and *every* base E above a threshold, the sign of
  the output is right (a polynomial-inequality proof per word, with z3); optionally with a
  witness word that is misclassified for every E at or below the threshold (tightness).
- :class:`MirrorInvariant`: every residual state has the form [u; −u] (Chiang & Cholak §3.1),
  proved structurally on the IR for all words and refuted by evaluation when it fails.
- :class:`BlockIdentity`: an FFN block computes given functions on all integer (or real)
  inputs (z3, unbounded).
- :class:`Identity`: a closed-form mathematical identity in sympy (no network).
- :class:`TraceProperty`: a property of every word's trace (states and attention selections),
  optionally with a form the smt method can state for every length (:data:`StateProperty`:
  :class:`SelectsNearest`, :class:`PairHeights`, :class:`TieRuleFree`, :class:`UniqueSelections`,
  :class:`FollowsAutomaton`, :class:`FollowsCounts`).
- :class:`ExactFact`: a statement about numbers checked by exact rational arithmetic (no network),
  optionally with a form the smt method proves for every length (:class:`SameLanguage`).
- :class:`PredictsNext`: a recurrent network's k-hot next-symbol sets equal a task's targets
  after every prefix of every input string up to the bound (Suzgun et al.'s sequence prediction).
- :class:`SoftAgrees`: a soft recurrent network (tanh, logistic σ, softmax), evaluated in
  rigorous intervals, predicts exactly the sets of the construction's exact network.
- :class:`ForAll`: a lemma over all reals or integers (sympy formulas, σ written with Min/Max),
  proved with z3 (no network, no bound).
- :class:`Simulates`: an encoder–decoder's output holds a reference σ-RNN's hidden state at
  every decoder step and halts when it does; optionally the RNN holds a two-stack machine's
  configurations at given ticks.

May import: the IR (:mod:`netproof.symbolic`), the languages, the counter automata and the
reference machines of this package; never an interpreter, an engine, z3 or torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal, TypeAlias

from netproof.symbolic import RecurrentNetwork

from .counting import Atom, CounterAutomaton
from .languages import Automaton, Language, SequenceTask, Word
from .machines import Configuration, SigmaRNN

__all__ = [
    "Backend",
    "BlockIdentity",
    "Bound",
    "Claim",
    "ClaimBase",
    "CrossEntropy",
    "ExactFact",
    "Expectation",
    "FollowsAutomaton",
    "FollowsCounts",
    "ForAll",
    "Identity",
    "MirrorInvariant",
    "Output",
    "PairHeights",
    "Point",
    "PredictsNext",
    "Quantity",
    "Recognizes",
    "SameLanguage",
    "SelectsNearest",
    "SignForAllBases",
    "Simulates",
    "SoftAgrees",
    "StateProperty",
    "StateValue",
    "TieRuleFree",
    "TraceProperty",
    "UniqueSelections",
    "ValueIs",
    "fact_at",
    "stated",
]

Backend: TypeAlias = Literal["exact", "sympy", "symbolic", "interval"]


@dataclass(frozen=True, slots=True)
class Point:
    """Where a :class:`ValueIs`/:class:`Bound` expectation is evaluated: the word, the token
    index ``t``, the paper's position ``i``, the length ``n`` (specials included) and, for
    symbolic runs, the base symbol ``E`` (else ``None``)."""

    word: Word
    t: int
    i: int
    n: int
    E: Any = None


Expectation: TypeAlias = Callable[[Point], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """The classifier's logit."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StateValue:
    """Residual dim ``dim`` after the step named ``after``, at every position."""

    after: str
    dim: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossEntropy:
    """−ln σ(s) for members, −ln(1 − σ(s)) for non-members (nats)."""

    language: Language


Quantity: TypeAlias = Output | StateValue | CrossEntropy


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimBase:
    """Fields every claim has: an id (the spec's C1…C13 where one exists), a one-line statement,
    the paper reference, the default bound and whether the claim is the paper's literal text."""

    id: str
    statement: str
    reference: str
    max_len: int = 10
    min_len: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerInduction:
    """How a recognizer of a :class:`StackAutomaton` language is proved for every length: by
    induction over its layers, the way a paper argues "after layer ℓ a position is marked iff
    its pair has height <= ℓ". The network is cut after each sublayer of ``after`` (one per
    stack level, in order); at every cut a position's state is the embedding's except the 0/1
    dims ``mark`` and ``error``. The smt method proves, per segment, that a word of the language
    marked as its pairs' heights <= ℓ - 1 leaves it marked as heights <= ℓ with no error, and that
    on any word an output with no error keeps nested same-type marked pairs of height <= ℓ; and
    that the layers after the last cut accept iff every position is marked and none has an error
    (:mod:`netproof.verifier.smt.compositional.layers`)."""

    after: tuple[str, ...]
    mark: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledProgram:
    """The B-RASP program a network is compiled from, as a claim's form for the operation-wise
    correspondence (:mod:`netproof.verifier.smt.compositional.correspondence`): ``program`` is a
    :class:`~netproof.verifier.claims.rasp.brasp.Program` and ``dims`` names the residual dim of
    each of its attention operations (``(dim, operation)``). A :class:`Recognizes` claim with this
    form says the network accepts exactly the program's words; a :class:`TraceProperty` with it
    says every listed dim holds its operation's vector at every word position after the last
    sublayer. The smt method tries to prove either for every length operation by operation (each
    block's lemma, then one small query per operation that the lemma is the operation), before
    any other route."""

    program: Any
    dims: tuple[tuple[str, Any], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Recognizes(ClaimBase):
    """``induction``: a proof plan for every length by layers (used by the smt method before the
    transition system of the whole network, whose states grow with the depth)."""

    language: Language
    backend: Backend = "exact"
    induction: LayerInduction | None = None
    compiled: CompiledProgram | None = None
    """The program the network is compiled from, where ``language`` is that program's: the smt
    method then tries the operation-wise correspondence first (:class:`CompiledProgram`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ValueIs(ClaimBase):
    quantity: Output | StateValue
    expected: Expectation
    backend: Backend = "exact"
    expected_text: str = ""
    closed_form: Any = None
    """Optionally, the same expectation as a sympy expression over the symbols ``n`` (tokens),
    ``t`` (token index), ``i`` (the paper's position), ``#a`` (how many times symbol ``a``
    occurs in the word) and ``wj=a`` (1 if the j-th symbol, from 1, is ``a``, else 0), e.g.
    ``Symbol("#1") / Symbol("n")``: what lets ``--method smt``
    prove the claim over a symbolic word (:func:`netproof.verifier.smt.monolithic.value_is_smt`). It must agree
    with ``expected`` wherever that is not None (a test checks the declared ones)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bound(ClaimBase):
    quantity: Quantity
    lower: Expectation | None = None
    upper: Expectation | None = None
    strict_lower: bool = True
    strict_upper: bool = False
    absolute: bool = False
    backend: Backend = "exact"
    bound_text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SignForAllBases(ClaimBase):
    """∀ words in the bound, ∀ E > threshold(m) (m = |w|): accept ⇔ w ∈ language. With
    ``witness``: for every length m, ``witness(m)`` is misclassified for every E in (1, threshold(m)]."""

    language: Language
    threshold: Callable[[int], Fraction]
    threshold_text: str
    witness: Callable[[int], Word] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MirrorInvariant(ClaimBase):
    """Every residual state is [u; −u]: dim ``−d`` holds minus dim ``d``."""

    mirror_prefix: str = "−"


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockIdentity(ClaimBase):
    """The FFN named ``block``, fed ``inputs`` (sympy expressions in the ``variables``), has
    outputs equal to ``outputs`` (sympy expressions) and satisfies every sympy relation in
    ``conditions`` (a symbol named like an output dim stands for that output), for all values of
    the variables in ``domain`` (integers or reals) that satisfy ``assumptions``. An unbounded
    statement: no word length enters."""

    block: str
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]
    variables: tuple[str, ...]
    domain: Literal["integers", "reals"] = "integers"
    assumptions: tuple[Any, ...] = ()
    conditions: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Identity(ClaimBase):
    """``lhs == rhs`` as a sympy identity in the given positive symbols; ``sample`` gives values
    at which a failed identity is shown numerically (the counterexample)."""

    lhs: Any
    rhs: Any
    sample: Mapping[str, Fraction] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectsNearest:
    """A trace property's SMT form: each head ``(layer, head)`` selects exactly one position, the
    nearest on its side of the mask where the head's NearestSelection lemma prefers (else the
    nearest one), and none where its side is empty. What a proved NearestSelection lemma says
    about every input that meets its side conditions (Boolean dims, positional dims): the smt
    method proves it for every length where each listed head has such a lemma, proved, and the
    network with its lemmas in place is the transition system over positions (every position
    of every word then meets the side conditions)."""

    heads: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PairHeights:
    """A trace property's SMT form, over the matched pairs of a :class:`StackAutomaton`
    language: on every word of ``language``, after each sublayer ``label`` of ``after`` (with
    its threshold T), dim ``dim`` is 1 at a word position iff the pair it belongs to (a push and
    the pop that matches it) has height <= T (height 1 + the largest height of the pairs
    directly inside), and ``special`` at the prefix and suffix tokens; every dim of ``zero`` is
    0 at every token after each of those sublayers.

    ``induction``: where the property is what an induction over layers proves on its way (the
    cuts ``after`` with thresholds 1..L, ``dim`` its mark, ``special`` 1, ``zero`` at most its
    error dim), the smt method proves it from the induction's completeness steps alone."""

    language: Language
    after: tuple[tuple[str, int], ...]
    dim: str
    special: int
    zero: tuple[str, ...] = ()
    induction: LayerInduction | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TieRuleFree:
    """A trace property's SMT form: the accept bit is the same whether the hardmax head
    ``(layer, head)`` of the readout averages its maximizers, takes the leftmost one or the
    rightmost one.

    ``induction`` and ``language``: the induction over layers that the network's recognition
    is proved by (:class:`LayerInduction`), where it has one. The smt method then proves the
    property at the last cut, over any 0/1 marks and errors there, once it has checked that
    every segment keeps that form on every input (smaller than the whole network's system,
    whose states grow with the depth)."""

    layer: str
    head: str
    induction: LayerInduction | None = None
    language: Language | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AllowedNext:
    """A trace property's SMT form, for a generator (a :class:`~netproof.symbolic.NextSymbols`
    readout) and a :class:`StackAutomaton` language: at every position of every prefix of a word
    of ``language`` (the prefix tokens first), the network's next-symbol set is the set the
    stack allows next: every push symbol while the stack is not full, the pop symbol of the top's
    type while it is not empty, and the readout's end symbol while it is empty.

    With ``length_aware``, the words are γuω with u in ``language`` and ω (the readout's end
    symbol) last, the positions those before ω, and the allowed set is the one that still fits
    the length n: a symbol is allowed iff the word can go on with it and still end, with ω, at
    exactly n tokens (a push needs room for its pop: n − i >= h + 3; ω only at n − i = 1)."""

    language: Language
    length_aware: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class UniqueSelections:
    """A trace property's SMT form: each hardmax head ``(layer, head)`` selects exactly one
    position of its masked set, or none where that set is empty: its top score is never shared
    (so its tie rule never matters). What a proved NearestSelection or RankedSelection lemma of
    the head says (pairwise score comparisons with a strict margin) about every input that meets
    its side conditions: the smt method proves it for every length where each listed head has
    such a lemma, proved, and the network with its lemmas in place is the transition system over
    positions, each listed head's lemma applied at every position (then every position of every
    word meets the side conditions)."""

    heads: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FollowsAutomaton:
    """A trace property's SMT form: at every word position t of every word (the prefix and
    suffix tokens left out), after the network's last sublayer, each dim d of ``ones`` holds 1
    where the state ``automaton`` reaches on the word's first t symbols is in ``ones[d]``, and 0
    where it is not (a Moore machine over the network's alphabet says what each dim must hold).
    The smt method proves it for every length on the network with its lemmas in place, read as
    a transition system over positions in product with the automaton (an inductive invariant
    and its three certificate queries, as for recognition)."""

    automaton: Automaton
    ones: tuple[tuple[str, frozenset[int]], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FollowsCounts:
    """A trace property's SMT form, for a counting network: at every word position t of every
    word (the prefix tokens left out; u tokens read in all, the prefix included), after the
    network's last sublayer, with c the counters of ``automaton`` after the word's first t
    symbols, each dim d of ``counts`` holds c_d/u (``d`` is one of the automaton's counters),
    and each dim d of ``comparisons`` holds 1 where c satisfies its guard and 0 where it does
    not (a counter automaton says what each dim must hold, as :class:`FollowsAutomaton`'s Moore
    machine does for 0/1 dims); the automaton must have a rule for every step. The smt method
    proves it for every length on the network with its counting lemmas in place, read as a
    counter system over positions in product with the automaton (an inductive invariant over
    the integers and its three certificate queries, as for recognition)."""

    automaton: CounterAutomaton
    counts: tuple[str, ...]
    comparisons: tuple[tuple[str, tuple[Atom, ...]], ...]


StateProperty: TypeAlias = (
    SelectsNearest
    | PairHeights
    | TieRuleFree
    | AllowedNext
    | UniqueSelections
    | FollowsAutomaton
    | FollowsCounts
)
"""The trace properties the smt method states over the transition system of every length."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceProperty(ClaimBase):
    """A property of every word's exact trace: ``holds(word, trace)`` returns None when the
    property holds and a one-line description of the failure otherwise. ``only`` restricts the
    words (e.g. to members of the language); the trace is passed in, so a construction states
    the property without importing an interpreter."""

    holds: Callable[[Word, Any], str | None]
    only: Callable[[Word], bool] | None = None
    backend: Backend = "exact"
    domain: Callable[[int], Iterable[Word]] | None = None
    """The words the claim is about up to a length bound, generated directly (in shortlex
    order) instead of filtering every word with ``only``: for sparse domains such as the
    prefixes of valid strings."""
    domain_text: str = ""
    holds_batch: Callable[[Sequence[Word], Any], Sequence[str | None]] | None = None
    """The same property as ``holds``, for many words of one length at once over a batched
    trace (:class:`netproof.symbolic.batched.BatchedTrace`: exact integer states over a common
    denominator and each hardmax head's first/last/count of maximizers, word ``w`` of the list
    being row ``w``); returns one failure text or None per word, the text ``holds`` would give.
    The checker uses it for the exact backend on networks the batched evaluator supports (and
    without ``domain``); it must agree with ``holds`` word for word."""
    compiled: CompiledProgram | None = None
    """Where the property is "every operation's dim holds the program's vector" (or, with a
    :class:`UniqueSelections` form, "no tie-ruled head ties"): the program the network is
    compiled from, for the operation-wise correspondence (:class:`CompiledProgram`), tried by the
    smt method before ``statable``."""
    statable: StateProperty | None = None
    """The same property in a form the smt method states for every length (see
    :data:`StateProperty`); it must say what ``holds`` says (the tests check the two on every
    short word, of the network and of its single-weight mutants)."""
    statable_later: Callable[[], StateProperty | None] | None = None
    """Where ``statable`` is costly to build and a route tried first needs none (an automaton
    of every operation of a compiled program, which the operation-wise correspondence does not
    read): ``statable`` is None and this function builds it, at most once (the construction
    keeps what it built); :func:`stated` gives the claim with it, wherever a route or the
    strict reader needs the form."""
    variants: Callable[[Any], Mapping[str, Any]] | None = None
    """Networks the property compares the network with: a function from the network of a word
    to named networks made from it (IR to IR, e.g. another tie rule in one layer). The checker
    runs each on every word with the same interpreter, and ``holds`` (and ``holds_batch``)
    receive a trace whose ``variants`` maps each name to that network's trace of the same
    word(s): a property of the network under other rules is judged by running them, not by a
    formula for what they would give."""


def stated(claim: TraceProperty) -> TraceProperty:
    """``claim`` with its :attr:`~TraceProperty.statable` form built where it is built only
    when needed (:attr:`~TraceProperty.statable_later`); else ``claim`` itself."""
    if claim.statable_later is None:
        return claim
    return replace(claim, statable=claim.statable_later(), statable_later=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactFact(ClaimBase):
    """A statement about numbers, not about a network (e.g. a bound on the constants a
    construction uses), checked by exact rational arithmetic in plain Python: ``check()``
    returns (the number of cases checked, None) when it holds for all of them, else (cases
    checked so far, the failing case). ``cases`` says what it covers. A fact about numbers has
    no word-length bound; a fact about the words of a bound (``words``) is checked to
    ``--max-n`` where it has ``bounded``, and its record names that bound."""

    check: Callable[[], tuple[int, str | None]]
    cases: str
    statable: SameLanguage | None = None
    """The same fact in a form the smt method proves for every word of every length (see
    :class:`SameLanguage`); ``check`` is then its check up to ``max_len`` and must say the same
    there (the tests compare the two)."""
    every_length: bool = False
    """``check()`` itself decides the statement for every word of every length (e.g. two finite
    automata compared on every reachable pair of states): its proof is recorded with a
    ``structural (…)`` method and no bound, a proof for every length (the strict reader accepts
    that method only where this is set)."""
    words: bool = False
    """``check()`` goes through every word of length ``min_len..max_len`` (a program against its
    reference language up to the bound): tables show that range as the claim's bound, not
    "no words"."""
    bounded: Callable[[int], ExactFact] | None = None
    """For a fact about the words of a bound (``words``): the same fact with ``max_len`` (and
    its check, statement and cases) at another bound, which ``--max-n`` asks for
    (:func:`fact_at`); None where the fact has its one bound only."""


def fact_at(claim: ExactFact, max_len: int | None) -> ExactFact:
    """``claim`` checked to ``max_len``: its ``bounded`` form there where it has one and
    ``max_len`` is another bound, else ``claim`` itself."""
    if max_len is None or max_len == claim.max_len or not claim.words or claim.bounded is None:
        return claim
    moved = claim.bounded(max_len)
    if moved.id != claim.id or moved.max_len != max_len or not moved.words:
        raise ValueError(
            f"claim {claim.id!r}: its bounded({max_len}) is claim {moved.id!r} up to {moved.max_len}; "
            "it must be the same claim with max_len set"
        )
    return moved


@dataclass(frozen=True, slots=True, kw_only=True)
class SameLanguage:
    """The statable form of an :class:`ExactFact` that two languages have the same words:
    ``left`` and ``right`` (each with a
    :class:`~netproof.verifier.claims.counting.CounterAutomaton` in ``counters``, over one
    alphabet) accept the same words of every length. The smt method proves it over their counter
    automata (their product, an inductive invariant); a word on which they differ is replayed
    with both membership tests (``contains``)."""

    left: Language
    right: Language


@dataclass(frozen=True, slots=True, kw_only=True)
class PredictsNext(ClaimBase):
    """For every input string u with ``min_len <= |u| <= max_len`` and every t, the recurrent
    network's predicted set after u_1..u_t equals ``task.next_sets(u)[t−1]`` (exact backend).
    Acceptance (every prediction right) then coincides with membership on every string."""

    task: SequenceTask


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftAgrees(ClaimBase):
    """The recurrent network ``soft`` (tanh / logistic σ / softmax weights), evaluated in
    rigorous intervals, predicts the same set as the construction's exact network after every
    prefix of every input string up to the bound; ``scale_text`` says which scale it was built at."""

    soft: RecurrentNetwork
    scale_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ForAll(ClaimBase):
    """For all values of ``variables`` in ``domain`` that satisfy every ``assumptions``
    formula, ``goal`` holds (sympy formulas; σ(x) written ``Min(1, Max(0, x))``). Proved by z3
    (unsat of assumptions ∧ ¬goal), unbounded; a model is the counterexample."""

    variables: tuple[str, ...]
    goal: Any
    assumptions: tuple[Any, ...] = ()
    domain: Literal["integers", "reals"] = "reals"


@dataclass(frozen=True, slots=True, kw_only=True)
class Simulates(ClaimBase):
    """For every word in the bound, the encoder–decoder simulates ``rnn`` step by step.

    ``inputs(word, ticks)`` gives the RNN's inputs for ``ticks`` ticks (None = a blank input:
    the paper's f_b($) = f_b(#) = 0). At every decoder step t until the run halts (at most
    ``max_steps`` steps), the decoder dims ``hidden`` of y_t equal h_t, the RNN's state after t
    inputs, exactly; the decoder halts at the first t with Σ ``halt`` weights·h_t = 1, as the
    RNN does (neither halting within ``max_steps`` also agrees). With ``machine``:
    ``machine(word)`` lists (tick, configuration) pairs, the last one the halting
    configuration, and ``decode`` reads a configuration off h (by unit name), which must match
    at each of those ticks; the RNN must halt exactly at the last tick.
    """

    rnn: SigmaRNN
    hidden: tuple[str, ...]
    inputs: Callable[[Word, int], tuple[str | None, ...]]
    halt: Mapping[str, Fraction]
    max_steps: int = 10_000
    machine: Callable[[Word], tuple[tuple[int, Configuration], ...]] | None = None
    decode: Callable[[Mapping[str, Fraction]], Configuration | str] | None = None


Claim: TypeAlias = (
    Recognizes
    | ValueIs
    | Bound
    | SignForAllBases
    | MirrorInvariant
    | BlockIdentity
    | Identity
    | TraceProperty
    | ExactFact
    | PredictsNext
    | SoftAgrees
    | ForAll
    | Simulates
)
