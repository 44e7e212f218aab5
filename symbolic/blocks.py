"""The IR's blocks: every frozen dataclass a network is made of, below the whole networks.

The closed set of blocks (the IR's overview is in :mod:`netproof.symbolic.ir`, which re-exports
every name defined here):

- linear maps and feed-forward sublayers: :class:`Affine`, :class:`Activation`,
  :class:`LayerNorm`, :class:`FFN`;
- attention: :class:`Scale`, :class:`Hardmax`, :class:`Softmax`, :class:`RelativeBias`,
  :class:`RelativeKernel`, :class:`Head`, :class:`AttentionLayer`; convolutions:
  :class:`Convolution`; :class:`Sublayer` (a block with its residual connection and layer norm);
- inputs: :class:`TokenEmbedding`, :class:`FlatEmbedding`; readouts: :class:`Classifier`,
  :class:`NextSymbols`;
- the encoder–decoder's parts: :class:`DecoderLayer`, :class:`Halting`;
- the closed sets of names their fields take (:data:`MASKS`, :data:`TIE_RULES`, ...).

Each block checks its own fields in ``__post_init__``; the checks that need the whole network
(every name read exists, heads write disjoint dims) run when a :class:`~netproof.symbolic.ir.Network`
or :class:`~netproof.symbolic.ir.Seq2Seq` is built. This module is below the printing and the
validation of blocks, so that those can run when a network is built: it imports only
:mod:`netproof.symbolic.checks` and :mod:`netproof.symbolic.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, TypeAlias, get_args

from .checks import check_choice, check_fraction, check_names
from .errors import NetworkValidationError

ActivationKind: TypeAlias = Literal["relu", "sigma", "step", "gelu"]
TieRule: TypeAlias = Literal["average", "leftmost", "rightmost"]
Mask: TypeAlias = Literal["none", "causal", "strict_causal", "anticausal", "strict_anticausal"]
Scoring: TypeAlias = Literal["dot", "neg_abs_dot"]
EmptyRule: TypeAlias = Literal["zero", "error"]
Outside: TypeAlias = Literal["zero", "clip"]
AcceptRule: TypeAlias = Literal["positive"]

ACTIVATIONS: tuple[str, ...] = get_args(ActivationKind)
TIE_RULES: tuple[TieRule, ...] = get_args(TieRule)
MASKS: tuple[Mask, ...] = get_args(Mask)
SCORINGS: tuple[Scoring, ...] = get_args(Scoring)
EMPTY_RULES: tuple[str, ...] = get_args(EmptyRule)
OUTSIDE_RULES: tuple[str, ...] = get_args(Outside)


# --------------------------------------------------------------------------- linear maps


@dataclass(frozen=True, slots=True, kw_only=True)
class Affine:
    """``y[o] = Σ_i weights[o][i]·x[inputs[i]] + bias[o]`` for ``o`` in ``outputs``."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    weights: tuple[tuple[Fraction, ...], ...]
    bias: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        check_names(self.inputs, "Affine.inputs")
        check_names(self.outputs, "Affine.outputs")
        if len(self.weights) != len(self.outputs):
            raise NetworkValidationError(
                f"Affine has {len(self.outputs)} outputs but {len(self.weights)} weight rows"
            )
        if len(self.bias) != len(self.outputs):
            raise NetworkValidationError(
                f"Affine has {len(self.outputs)} outputs but {len(self.bias)} bias entries"
            )
        for o, row in zip(self.outputs, self.weights, strict=True):
            if len(row) != len(self.inputs):
                raise NetworkValidationError(
                    f"Affine row for output {o!r} has {len(row)} entries, expected {len(self.inputs)}"
                )
            for i, w in zip(self.inputs, row, strict=True):
                check_fraction(w, f"weight[{o!r}, {i!r}]")
        for o, b in zip(self.outputs, self.bias, strict=True):
            check_fraction(b, f"bias[{o!r}]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Activation:
    """An elementwise nonlinearity: ``relu``, ``sigma`` (saturated linear: clip to [0, 1]),
    ``step`` (H(x) = I[x > 0]) or ``gelu`` (x·Φ(x), Φ the standard normal CDF: irrational, so
    only the interval interpreter and the torch backends evaluate it; the others refuse it)."""

    kind: ActivationKind

    def __post_init__(self) -> None:
        check_choice(self.kind, ACTIVATIONS, "Activation.kind")


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerNorm:
    """``LN(x) = (x − mean x)/√(var x + eps)`` with the population variance, γ = 1, β = 0.

    ``over`` names the sub-vector it normalizes (the others pass through unchanged); ``None``
    means the whole vector (the whole residual stream for a post-residual layer norm).
    """

    eps: Fraction
    over: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_fraction(self.eps, "LayerNorm.eps")
        if self.eps < 0:
            raise NetworkValidationError(f"LayerNorm.eps={self.eps} must be >= 0")
        if self.over is not None:
            check_names(self.over, "LayerNorm.over")
            if len(self.over) < 1:
                raise NetworkValidationError("LayerNorm.over must name at least one dim")


FFNStep: TypeAlias = Affine | Activation | LayerNorm


@dataclass(frozen=True, slots=True, kw_only=True)
class FFN:
    """A position-wise feed-forward block: ``steps`` applied in order.

    The first :class:`Affine` reads residual dims; later steps read the previous step's names;
    the last :class:`Affine` writes residual dims. ``steps=()`` is the paper's "FFN that does
    nothing" (W = b = 0): its output is zero.
    """

    name: str
    steps: tuple[FFNStep, ...]

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("FFN.name must be non-empty")
        if self.steps and (
            not isinstance(self.steps[0], Affine) or not isinstance(self.steps[-1], Affine)
        ):
            raise NetworkValidationError(
                f"FFN {self.name!r}: the first and last steps must be Affine maps"
            )


# --------------------------------------------------------------------------- attention


@dataclass(frozen=True, slots=True, kw_only=True)
class Scale:
    """Multiplier of the attention scores: ``coef · (1/√sqrt_d if set) · (n if times_n) · (ln n if
    log_n)``; ``times_n`` with ``log_n`` is a temperature growing like n ln n (Yao et al.'s λ₂)."""

    coef: Fraction = Fraction(1)
    sqrt_d: int | None = None
    log_n: bool = False
    times_n: bool = False

    def __post_init__(self) -> None:
        check_fraction(self.coef, "Scale.coef")
        if self.coef == 0:
            raise NetworkValidationError("Scale.coef=0 makes every score 0; use a nonzero coef")
        if self.sqrt_d is not None and (not isinstance(self.sqrt_d, int) or self.sqrt_d < 1):
            raise NetworkValidationError(f"Scale.sqrt_d={self.sqrt_d!r} must be a positive int")


@dataclass(frozen=True, slots=True, kw_only=True)
class Hardmax:
    """Hard attention: all weight on the maximal scores, split by ``tie``.

    ``average``: uniform over the maximizers; ``leftmost`` / ``rightmost``: the smallest /
    largest maximizing position.
    """

    tie: TieRule = "average"

    def __post_init__(self) -> None:
        check_choice(self.tie, TIE_RULES, "Hardmax.tie")


@dataclass(frozen=True, slots=True, kw_only=True)
class Softmax:
    """Soft attention with weights ``∝ base^{scaled score}``.

    Exactly one of ``r`` and ``c`` is set: ``r`` gives base = r (that is e^c with c = ln r, which
    keeps the weights rational when the scaled scores are integers); ``c`` gives base = e^c
    (transcendental: the sympy interpreter only). ``symbol`` names the base when the sympy
    interpreter is asked to keep it symbolic (for closed forms such as Chiang & Cholak's E = e^c).
    """

    r: Fraction | None = None
    c: Fraction | None = None
    symbol: str = "E"

    def __post_init__(self) -> None:
        if (self.r is None) == (self.c is None):
            raise NetworkValidationError(
                "Softmax needs exactly one of r (base r = e^{ln r}) and c (base e^c)"
            )
        if self.r is not None:
            check_fraction(self.r, "Softmax.r")
            if self.r <= 0:
                raise NetworkValidationError(f"Softmax.r={self.r} must be > 0 (it is e^c)")
        if self.c is not None:
            check_fraction(self.c, "Softmax.c")


Normalizer: TypeAlias = Hardmax | Softmax


def _check_window(size: int, where: str) -> None:
    if size % 2 != 1:
        raise NetworkValidationError(
            f"{where} has {size} entries; a window of offsets −k..k has 2k+1 (an odd number) entries, "
            "listed from offset −k to offset +k"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RelativeBias:
    """A fixed bias β_{j−i} added to the scaled attention logits (T5-style; Chang et al. Eq. 4:
    ``α_ij = A_ij + β_{j−i}·[|j−i| ≤ k]``), i = query position, j = key position.

    ``beta`` lists β_{−k}, …, β_{+k} (2k+1 entries). ``outside`` says what an offset with
    |j−i| > k gets: ``zero`` (Chang's convolution window) or ``clip`` (β_{clip(j−i, −k, k)},
    as Shaw et al. and T5 clip relative positions).
    """

    beta: tuple[Fraction, ...]
    outside: Outside = "zero"

    def __post_init__(self) -> None:
        _check_window(len(self.beta), "RelativeBias.beta")
        for r, b in enumerate(self.beta):
            check_fraction(b, f"RelativeBias.beta[{r - len(self.beta) // 2}]")
        check_choice(self.outside, OUTSIDE_RULES, "RelativeBias.outside")

    @property
    def k(self) -> int:
        return len(self.beta) // 2


@dataclass(frozen=True, slots=True, kw_only=True)
class RelativeKernel:
    """A relative-position kernel W^C: one vector over the head's q/k names per offset −k..k.

    As ``query_conv`` (Shaw et al.; Chang et al. Eq. 5) it adds ⟨q_i, W^C_{j−i}⟩ to the
    unscaled score ⟨q_i, k_j⟩; as ``key_conv`` (Huang et al.'s key-based dynamic convolution)
    it adds ⟨k_j, W^C_{j−i}⟩. Both are then scaled with the head's scale. ``columns[r + k]`` is
    W^C_r; ``outside``: ``zero`` (no term beyond ±k, Chang's window) or ``clip`` (W^C at the
    clipped offset, Shaw's definition).
    """

    columns: tuple[tuple[Fraction, ...], ...]
    outside: Outside = "zero"

    def __post_init__(self) -> None:
        _check_window(len(self.columns), "RelativeKernel.columns")
        k = len(self.columns) // 2
        for r, col in enumerate(self.columns):
            if not isinstance(col, tuple):
                raise NetworkValidationError(
                    f"RelativeKernel.columns[{r - k}] must be a tuple of Fractions, got {type(col).__name__}"
                )
            for x in col:
                check_fraction(x, f"RelativeKernel.columns[{r - k}] entry")
        check_choice(self.outside, OUTSIDE_RULES, "RelativeKernel.outside")

    @property
    def k(self) -> int:
        return len(self.columns) // 2


def relative_index(offset: int, k: int, outside: str) -> int | None:
    """The window index (0..2k) of relative offset j − i, or None when it gets no term."""
    if -k <= offset <= k:
        return offset + k
    if outside == "clip":
        return 2 * k if offset > k else 0
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Head:
    """One attention head.

    ``query`` and ``key`` map residual dims to the same named q/k space; ``value`` maps residual
    dims to the head's outputs. The score of position j for query i is ``⟨q_i, k_j⟩`` (``dot``)
    or ``−|⟨q_i, k_j⟩|`` (``neg_abs_dot``), times ``scale``. Masks: ``causal`` j ≤ i,
    ``strict_causal`` j < i, ``anticausal`` j ≥ i, ``strict_anticausal`` j > i. ``empty`` says
    what an empty masked set yields: the zero vector, or an evaluation error.

    Relative positions (all ``None`` by default; spec §4.1): the logit of key j for query i is
    ``scale·(⟨q_i, k_j⟩ + ⟨q_i, W^C_{j−i}⟩ + ⟨k_j, W^{C'}_{j−i}⟩) + β_{j−i}`` with W^C =
    ``query_conv``, W^{C'} = ``key_conv`` and β = ``relative_bias``; a softmax head weighs key j
    by base^logit. Composite attention (Eq. 6) is ``query_conv`` and ``relative_bias`` together.
    """

    name: str
    query: Affine
    key: Affine
    value: Affine
    normalizer: Normalizer
    scoring: Scoring = "dot"
    scale: Scale = field(default_factory=Scale)
    mask: Mask = "none"
    empty: EmptyRule = "zero"
    relative_bias: RelativeBias | None = None
    query_conv: RelativeKernel | None = None
    key_conv: RelativeKernel | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("Head.name must be non-empty")
        for field_name in ("query_conv", "key_conv"):
            kernel = getattr(self, field_name)
            if kernel is None:
                continue
            width = len(self.query.outputs)
            for r, col in enumerate(kernel.columns):
                if len(col) != width:
                    raise NetworkValidationError(
                        f"head {self.name!r} {field_name}: column for offset {r - kernel.k} has {len(col)} "
                        f"entries but the q/k space has {width} names {self.query.outputs}; give one entry per name"
                    )
        if self.relative and self.scoring != "dot":
            raise NetworkValidationError(
                f"head {self.name!r}: relative-position terms add to the dot-product score; "
                f"scoring={self.scoring!r} has no such form: use scoring='dot'"
            )
        if (
            self.relative_bias is not None
            and isinstance(self.normalizer, Hardmax)
            and (self.scale.sqrt_d is not None or self.scale.log_n)
        ):
            raise NetworkValidationError(
                f"head {self.name!r}: hardmax with a relative bias compares scale·score + β, which needs a "
                f"rational scale (coef, times n); scale 1/√d or ln n is not: fold it into the query weights"
            )
        check_choice(self.scoring, SCORINGS, f"head {self.name!r} scoring")
        check_choice(self.mask, MASKS, f"head {self.name!r} mask")
        check_choice(self.empty, EMPTY_RULES, f"head {self.name!r} empty")
        if self.query.outputs != self.key.outputs:
            raise NetworkValidationError(
                f"head {self.name!r}: query outputs {self.query.outputs} and key outputs "
                f"{self.key.outputs} must be the same names in the same order"
            )
        if isinstance(self.normalizer, Hardmax) and self.scale.coef < 0:
            raise NetworkValidationError(
                f"head {self.name!r}: hardmax with a negative scale selects the minimum; "
                "negate the query instead"
            )

    @property
    def relative(self) -> bool:
        """Whether the head has a relative-position term (its scores depend on j − i)."""
        return (
            self.relative_bias is not None
            or self.query_conv is not None
            or self.key_conv is not None
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionLayer:
    """Parallel heads. Without ``output`` each head writes residual dims (disjoint across heads);
    with ``output`` (the paper's W^O) the heads write head-local names that ``output`` maps to
    residual dims. ``heads=()`` is an attention sublayer that does nothing (W^V = 0)."""

    name: str
    heads: tuple[Head, ...]
    output: Affine | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("AttentionLayer.name must be non-empty")
        names = [h.name for h in self.heads]
        if len(set(names)) != len(names):
            raise NetworkValidationError(
                f"attention layer {self.name!r}: head names repeat: {names}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Convolution:
    """A convolution over positions, channel by channel (Chang et al. Eqs. 2–3, zero padding):
    ``y[outputs[c]]_i = Σ_{|j−i| ≤ k} w_{j−i, c}·x[inputs[c]]_j``.

    ``kernels`` holds one row w_{−k..k} shared by every channel (lightweight, Eq. 3) or one row
    per channel (depthwise, Eq. 2). With ``normalizer`` each row is softmax-normalized over its
    2k+1 offsets first, w_r = base^{β_r} / Σ_r' base^{β_r'} (Wu et al.'s lightweight
    convolution; the normalization ignores padding). Without it the rows are used as they are.
    """

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kernels: tuple[tuple[Fraction, ...], ...]
    normalizer: Softmax | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("Convolution.name must be non-empty")
        check_names(self.inputs, f"convolution {self.name!r} inputs")
        check_names(self.outputs, f"convolution {self.name!r} outputs")
        if len(self.inputs) != len(self.outputs):
            raise NetworkValidationError(
                f"convolution {self.name!r} has {len(self.inputs)} inputs but {len(self.outputs)} outputs; "
                "a depthwise convolution maps each input channel to one output channel"
            )
        if len(self.kernels) not in (1, len(self.inputs)):
            raise NetworkValidationError(
                f"convolution {self.name!r} has {len(self.kernels)} kernel rows; give 1 (shared: lightweight) "
                f"or {len(self.inputs)} (one per channel: depthwise)"
            )
        widths = {len(row) for row in self.kernels}
        if len(widths) != 1:
            raise NetworkValidationError(
                f"convolution {self.name!r}: kernel rows have different widths {sorted(widths)}; use one k"
            )
        for c, row in enumerate(self.kernels):
            _check_window(len(row), f"convolution {self.name!r} kernel row {c}")
            for x in row:
                check_fraction(x, f"convolution {self.name!r} kernel row {c} entry")

    @property
    def k(self) -> int:
        return len(self.kernels[0]) // 2


Block: TypeAlias = AttentionLayer | FFN | Convolution


@dataclass(frozen=True, slots=True, kw_only=True)
class Sublayer:
    """``post_ln(x + block(x))`` if ``residual`` else ``post_ln(block(x))`` (unwritten dims 0)."""

    block: Block
    residual: bool = True
    post_ln: LayerNorm | None = None

    @property
    def name(self) -> str:
        return self.block.name


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenEmbedding:
    """One vector per token: ``table[token]`` plus positional features.

    ``positional`` holds ``(dim, feature name, coefficient)``: dim += coefficient·feature(i, n).
    The input sequence is ``prefix + word + suffix``; the special tokens in ``prefix`` / ``suffix``
    (CLS, start, end) are added by the network, never typed by the user. Positions run from
    ``index_base``; ``n`` is the number of tokens including the specials.
    """

    alphabet: tuple[str, ...]
    table: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]
    positional: tuple[tuple[str, str, Fraction], ...] = ()
    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    index_base: int = 0

    def __post_init__(self) -> None:
        if not self.alphabet:
            raise NetworkValidationError("TokenEmbedding.alphabet is empty")
        if len(set(self.alphabet)) != len(self.alphabet):
            raise NetworkValidationError(f"alphabet {self.alphabet} repeats a symbol")
        tokens = [t for t, _ in self.table]
        if len(set(tokens)) != len(tokens):
            raise NetworkValidationError(f"embedding table repeats a token: {tokens}")
        for token in (*self.alphabet, *self.prefix, *self.suffix):
            if token not in tokens:
                raise NetworkValidationError(f"token {token!r} has no row in the embedding table")
        for special in (*self.prefix, *self.suffix):
            if special in self.alphabet:
                raise NetworkValidationError(
                    f"special token {special!r} is also in the alphabet; specials are added by "
                    "the network, so give them a name users cannot type"
                )
        for token, row in self.table:
            for dim, value in row:
                check_fraction(value, f"embedding[{token!r}, {dim!r}]")
        for dim, _feat, coef in self.positional:
            check_fraction(coef, f"positional[{dim!r}] coefficient")
        if self.index_base not in (0, 1):
            raise NetworkValidationError(f"index_base={self.index_base} must be 0 or 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class FlatEmbedding:
    """A word of exactly ``length`` symbols as one vector: dim ``f"{prefix}{i}"`` (i = 1..length)
    holds ``values[w_i]`` (Rumelhart et al.'s x_i = I[w_i = 1])."""

    alphabet: tuple[str, ...]
    length: int
    values: tuple[tuple[str, Fraction], ...]
    prefix: str = "x"

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or self.length < 0:
            raise NetworkValidationError(
                f"FlatEmbedding.length={self.length!r} must be an int >= 0"
            )
        if sorted(s for s, _ in self.values) != sorted(self.alphabet):
            raise NetworkValidationError("FlatEmbedding.values needs one value per alphabet symbol")
        for symbol, value in self.values:
            check_fraction(value, f"FlatEmbedding.values[{symbol!r}]")

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}{i}" for i in range(1, self.length + 1))


Embedding: TypeAlias = TokenEmbedding | FlatEmbedding


# --------------------------------------------------------------------------- readouts


@dataclass(frozen=True, slots=True, kw_only=True)
class Classifier:
    """A recognizer's output: ``logit`` (an Affine with one output) at token ``position``
    (0 = first, −1 = last), then σ; accept iff σ(logit) > 1/2, i.e. iff the logit is > 0."""

    logit: Affine
    position: int = 0
    accept: AcceptRule = "positive"

    def __post_init__(self) -> None:
        if len(self.logit.outputs) != 1:
            raise NetworkValidationError(
                f"Classifier.logit must have exactly one output, has {self.logit.outputs}"
            )
        check_choice(self.accept, ("positive",), "Classifier.accept")


@dataclass(frozen=True, slots=True, kw_only=True)
class NextSymbols:
    """A generator's output at every position: symbol ``s`` may come next iff its value is
    ``>= threshold``.

    Without ``softmax`` the value is the residual dim ``scores[s]``; with it, the value is the
    probability f(s | prefix) = base^{score_s} / Σ_s' base^{score_s'} over the listed symbols (the
    paper's output layer; a symbol not listed has probability 0 and is never allowed). ``end``
    names the end-of-string symbol, if one is scored, so that a reader can say whether the string
    may end.
    """

    scores: tuple[tuple[str, str], ...]
    threshold: Fraction
    softmax: Softmax | None = None
    end: str | None = None

    def __post_init__(self) -> None:
        check_fraction(self.threshold, "NextSymbols.threshold")
        if not self.scores:
            raise NetworkValidationError("NextSymbols.scores is empty")
        symbols = [s for s, _ in self.scores]
        if len(set(symbols)) != len(symbols):
            raise NetworkValidationError(f"NextSymbols.scores lists a symbol twice: {symbols}")
        if self.end is not None and self.end not in symbols:
            raise NetworkValidationError(
                f"NextSymbols.end={self.end!r} is not one of the scored symbols {symbols}; "
                "add a score for it or leave end unset"
            )


Readout: TypeAlias = Classifier | NextSymbols


# --------------------------------------------------------------------------- encoder–decoder


@dataclass(frozen=True, slots=True, kw_only=True)
class DecoderLayer:
    """One decoder layer of an encoder–decoder transformer (Bhattamishra et al. 2020, eqs. 5–7).

    At decoder step t, with y_t this layer's input:

    - ``self_attention``: heads over the layer inputs y_0..y_t of the steps so far. Every head's
      mask must be ``causal``: step t sees the steps j ≤ t, **itself included**. Earlier steps
      never change, so an interpreter may cache them.
    - ``cross_attention``: the decoder–encoder attention. A head's ``query`` reads this layer's
      residual dims (the paper's "the query is p_t itself": an identity map onto the q/k names),
      its ``key`` and ``value`` read the encoder's final residual dims (the paper's K^e = W_K Z,
      V^e = W_V Z). Mask ``none``: every encoder position; ``causal``: encoder positions
      j ≤ t (0-based token index; the directional transformer's masked cross-attention).
    - ``ffn``: the position-wise O(·).

    Each is a :class:`Sublayer`, so each has its own ``residual`` flag.
    """

    name: str
    self_attention: Sublayer
    cross_attention: Sublayer
    ffn: Sublayer

    def __post_init__(self) -> None:
        if not self.name:
            raise NetworkValidationError("DecoderLayer.name must be non-empty")
        for what, sub, masks in (
            ("self_attention", self.self_attention, ("causal",)),
            ("cross_attention", self.cross_attention, ("none", "causal")),
        ):
            if not isinstance(sub.block, AttentionLayer):
                raise NetworkValidationError(
                    f"decoder layer {self.name!r}: {what} must hold an AttentionLayer, got "
                    f"{type(sub.block).__name__}"
                )
            for h in sub.block.heads:
                if h.mask not in masks:
                    raise NetworkValidationError(
                        f"decoder layer {self.name!r}: {what} head {h.name!r} has mask {h.mask!r}; "
                        f"it must be one of {', '.join(masks)}"
                        + (
                            " (a decoder step sees itself and the steps before it)"
                            if what == "self_attention"
                            else ""
                        )
                    )
        if not isinstance(self.ffn.block, FFN):
            raise NetworkValidationError(
                f"decoder layer {self.name!r}: ffn must hold an FFN, got {type(self.ffn.block).__name__}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Halting:
    """The decoder halts at the first step t whose y_t has ``unit`` (an Affine with one output)
    equal to ``value`` (Bhattamishra et al. §4: H = {y : y[halt unit] = 1})."""

    unit: Affine
    value: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        if len(self.unit.outputs) != 1:
            raise NetworkValidationError(
                f"Halting.unit must have exactly one output, has {self.unit.outputs}"
            )
        check_fraction(self.value, "Halting.value")
