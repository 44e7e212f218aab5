"""Claims (frozen data), verdicts (a sum type) and the declaration of a construction.

A claim says what a paper asserts about a network, with its bound and its paper reference; the
checkers in :mod:`netproof.verifier.exhaustive.checker` turn it into a :data:`Verdict`. Nothing here evaluates a
network: this module imports the IR only, so constructions can declare claims without importing
an interpreter, z3 or torch.

Claim kinds:

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
- :class:`TraceProperty`: a property of every word's trace (states and attention selections).
- :class:`ExactFact`: a statement about numbers checked by exact rational arithmetic (no network).
- :class:`PredictsNext`: a recurrent network's k-hot next-symbol sets equal a task's targets
  after every prefix of every input string up to the bound (Suzgun et al.'s sequence prediction).
- :class:`SoftAgrees`: a soft recurrent network (tanh, logistic σ, softmax), evaluated in
  rigorous intervals, predicts exactly the sets of the construction's exact network.
- :class:`ForAll`: a lemma over all reals or integers (sympy formulas, σ written with Min/Max),
  proved with z3 (no network, no bound).
- :class:`Simulates`: an encoder–decoder's output holds a reference σ-RNN's hidden state at
  every decoder step and halts when it does; optionally the RNN holds a two-stack machine's
  configurations at given ticks.

Lemmas (the steps of a paper's proof, declared per construction and proved block by block by
:mod:`netproof.verifier.smt.compositional`): :class:`BooleanBlock` (an FFN computes Boolean functions of
Boolean dims), :class:`ScaledBlock` (an FFN computes an integer function of integers over a
common unit, such as I[i = k]/n) and :class:`NearestSelection` (a hardmax head selects the
nearest position where a Boolean condition holds). A :class:`Language` may carry an :class:`Automaton`: a symbolic
statement of the language that an SMT query can unroll over a word of any length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, TypeAlias

from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq

from netproof.verifier.claims.machines import Configuration, SigmaRNN

Backend: TypeAlias = Literal["exact", "sympy", "symbolic", "interval"]
Word: TypeAlias = tuple[str, ...]


# --------------------------------------------------------------------------- languages


@dataclass(frozen=True, slots=True, kw_only=True)
class Automaton:
    """A deterministic finite automaton over a language's alphabet: states ``0..states-1``,
    ``delta[q][a]`` the state after symbol ``alphabet[a]`` in state ``q``, start state
    ``start``, accepting states ``accepting``. A symbolic twin of ``Language.contains`` (the
    two are checked against each other on short words by the tests)."""

    states: int
    start: int
    accepting: frozenset[int]
    delta: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        if len(self.delta) != self.states:
            raise ValueError(f"Automaton has states={self.states} but {len(self.delta)} rows in delta")
        for q, row in enumerate(self.delta):
            for target in row:
                if not 0 <= target < self.states:
                    raise ValueError(f"Automaton delta[{q}] goes to state {target}, outside 0..{self.states - 1}")
        if not 0 <= self.start < self.states or any(not 0 <= q < self.states for q in self.accepting):
            raise ValueError(f"Automaton start={self.start} or accepting={sorted(self.accepting)} is outside 0..{self.states - 1}")

    def accepts(self, word_indices: Sequence[int]) -> bool:
        q = self.start
        for a in word_indices:
            q = self.delta[q][a]
        return q in self.accepting


@dataclass(frozen=True, slots=True)
class Language:
    """A reference language: a plain-Python membership test over words of ``alphabet``, and
    optionally the same language as an :class:`Automaton` (for SMT proofs over symbolic words)."""

    name: str
    alphabet: tuple[str, ...]
    contains: Callable[[Word], bool]
    description: str = ""
    automaton: Automaton | None = None


@dataclass(frozen=True, slots=True)
class SequenceTask:
    """A task in the sequence-prediction form (Suzgun et al. 2019 §4.1): ``next_sets(w)`` gives
    the target set of possible next symbols after each prefix w_1..w_t (t = 1..|w|), empty
    after an invalid prefix; ``contains`` is membership; ``accepts(w, predicted)`` reads the
    paper's acceptance off a network's predicted sets (every next symbol was predicted and the
    last set says the word may end). Plain Python, no network."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    next_sets: Callable[[Word], tuple[frozenset[str], ...]]
    contains: Callable[[Word], bool]
    accepts: Callable[[Word, Sequence[frozenset[str]]], bool]
    description: str = ""


# --------------------------------------------------------------------------- claims


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
class Recognizes(ClaimBase):
    language: Language
    backend: Backend = "exact"


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
    prove the claim over a symbolic word (:func:`netproof.verifier.smt.encoder.value_is_smt`). It must agree
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactFact(ClaimBase):
    """A statement about numbers, not about a network (e.g. a bound on the constants a
    construction uses), checked by exact rational arithmetic in plain Python: ``check()``
    returns (the number of cases checked, None) when it holds for all of them, else (cases
    checked so far, the failing case). It has no word-length bound: ``cases`` says what it
    covers, and ``--max-n`` does not change it."""

    check: Callable[[], tuple[int, str | None]]
    cases: str


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


# --------------------------------------------------------------------------- lemmas


@dataclass(frozen=True, slots=True, kw_only=True)
class BooleanBlock:
    """Lemma: the FFN named ``block``, on every input whose dims ``boolean`` are in {0, 1} (and
    whose other read dims are any reals), writes ``outputs[d]`` into dim ``d``: a sympy Boolean
    formula over the Boolean dims (the output is exactly 1 when it is true and 0 when false) or
    a sympy linear expression over the real dims (e.g. a position passed through). Sympy
    symbols are named like the dims they stand for."""

    id: str
    statement: str
    reference: str
    block: str
    boolean: tuple[str, ...]
    outputs: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class NearestSelection:
    """Lemma: head ``head`` of attention layer ``layer`` (hardmax, masked to one side of the
    query) selects exactly one position: the nearest one where the sympy Boolean formula
    ``prefer`` over the key position's dims holds, or the nearest one if there is none. Stated
    as pairwise score comparisons with a strict margin, for every length n at once, when the
    dims ``boolean`` are in {0, 1} and each dim of ``positional`` holds its named feature."""

    id: str
    statement: str
    reference: str
    layer: str
    head: str
    prefer: Any
    boolean: tuple[str, ...]
    positional: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaledBlock:
    """Lemma: the FFN named ``block``, positively homogeneous (ReLU, no biases), fed dims that
    hold integers over a common unit (dim ``unit`` holds 1/u; dim d of ``inputs`` holds v/u for
    the integer variable v, a sympy symbol), writes ``outputs[d]`` = f/u into dim d, f a sympy
    expression of the integer variables (``Piecewise``/``Eq`` allowed), for every integer value
    of the variables and every u >= 1 (e.g. Chiang & Cholak's FFN 1: I[i = k]/n from i/n, k/n
    and 1/n)."""

    id: str
    statement: str
    reference: str
    block: str
    unit: str
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]


Lemma: TypeAlias = BooleanBlock | NearestSelection | ScaledBlock


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True, slots=True)
class Proved:
    """The claim holds for every case in the bound. ``method`` says how (its strength)."""

    method: str
    checked: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Refuted:
    """The claim fails. ``word`` is the counterexample (shortest first in shortlex order) when
    there is one; ``detail`` says what was expected and what the network computed."""

    method: str
    detail: str
    word: Word | None = None
    values: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Unknown:
    """Neither proved nor refuted: ``reason`` says why (unsupported, undecided, timeout)."""

    method: str
    reason: str


Verdict: TypeAlias = Proved | Refuted | Unknown


# --------------------------------------------------------------------------- constructions


@dataclass(frozen=True, slots=True)
class Param:
    """A builder parameter: its name, default (as the user would type it), a parser that raises
    ValueError with a helpful message, and a help line. ``choices`` lists allowed values."""

    name: str
    default: str
    parse: Callable[[str], Any]
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Construction:
    """A paper's construction as the CLI sees it.

    ``build(params)`` returns the network; for fixed-length families (``per_length``) it is
    called as ``build(params, n)``. ``claims(params)`` returns the claims for those parameters
    (the ``paper`` variant returns the paper's literal statements).
    """

    name: str
    paper_id: str
    title: str
    reference: str
    params: tuple[Param, ...]
    build: Callable[..., Network | RecurrentNetwork | Seq2Seq]
    claims: Callable[[Mapping[str, Any]], tuple[Claim, ...]]
    language: Language | None = None
    per_length: bool = False
    language_of: Callable[[Mapping[str, Any]], Language] | None = None
    max_steps: Callable[[Mapping[str, Any], Word], int] | None = None
    """For an encoder–decoder (:class:`netproof.symbolic.Seq2Seq`): the decoder step budget of a run on a
    word (the run stops there if the decoder has not halted; checkers then see no halting).
    None: :data:`netproof.symbolic.seq2seq.DEFAULT_MAX_STEPS`."""
    lemmas: Callable[[Mapping[str, Any]], tuple[Lemma, ...]] | None = None
    """The block lemmas of the paper's proof for these parameters (used by compositional
    proofs); None when the construction declares none."""

    def reference_language(self, values: Mapping[str, Any]) -> Language | None:
        """The language the construction recognizes for these parameters, if it has one."""
        if self.language_of is not None:
            return self.language_of(values)
        return self.language

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise KeyError(f"construction {self.name!r} has no parameter {name!r}; its parameters: {known}")

    def parse_params(self, given: Mapping[str, str]) -> dict[str, Any]:
        """Defaults overridden by ``given``; raises ValueError/KeyError with a clear message."""
        values: dict[str, Any] = {}
        for p in self.params:
            raw = given.get(p.name, p.default)
            if p.choices and raw not in p.choices:
                raise ValueError(f"{p.name}={raw!r} is not allowed; choose one of {', '.join(p.choices)}")
            values[p.name] = p.parse(raw)
        for name in given:
            self.param(name)
        return values

    def network(self, values: Mapping[str, Any], n: int | None = None) -> Network | RecurrentNetwork | Seq2Seq:
        if self.per_length:
            if n is None:
                raise ValueError(f"{self.name} is built per word length; give n")
            return self.build(values, n)
        return self.build(values)


def parse_int(name: str, *, minimum: int) -> Callable[[str], int]:
    """A parser for an integer parameter with a lower bound."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r} is not an integer; give a whole number >= {minimum}") from None
        if value < minimum:
            raise ValueError(f"{name}={value} must be >= {minimum}")
        return value

    return parse


def parse_fraction(name: str, *, minimum: Fraction | None = None, strict: bool = False) -> Callable[[str], Fraction]:
    """A parser for an exact rational parameter (``3``, ``1/10``; decimals refused)."""

    def parse(raw: str) -> Fraction:
        text = raw.strip()
        if "." in text or "e" in text.lower():
            raise ValueError(f"{name}={raw!r}: give an exact rational like 1/10, not a decimal")
        try:
            value = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name}={raw!r} is not a rational number like 1/10") from None
        if minimum is not None and (value <= minimum if strict else value < minimum):
            raise ValueError(f"{name}={value} must be {'>' if strict else '>='} {minimum}")
        return value

    return parse


VARIANT = Param(
    name="variant",
    default="fixed",
    parse=str,
    help="fixed: the verified construction and statements; paper: the paper's literal text",
    choices=("fixed", "paper"),
)
