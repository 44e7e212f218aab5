"""Transformers that simulate σ-RNNs, hence two-stack machines, exactly (Bhattamishra, Patel &
Goyal 2020, *On the Computational Power of Transformers and its Implications in Sequence
Modeling*, CoNLL 2020).

Two encoder–decoder constructions (:class:`netproof.symbolic.Seq2Seq`) of a single-layer σ-RNN
h_t = σ(W_h h_{t−1} + W_x f_b(s_t) + b), run on its input and then on ``$`` (f_b($) = 0) forever:

- :func:`vanilla_transformer` (Theorem 4.1, Appendix C.2): positional encodings and −|⟨q,k⟩|
  scoring. Layout ``[h (d_h) | s (d_b) | h' (d_h) | pos_i | pos_1]``, d = 2d_h + d_b + 2. The
  encoder is the identity (W_V = 0, O = 0, residuals on); K^e gives k_i = (−1, i) on
  (pos_i, pos_1), so at step t the decoder–encoder attention scores −|i − (t+1)| and reads
  position min(t+1, n+1) (Lemma C.5); the FFN computes σ(W_h h + W_x s + b) − h and clears s
  (Lemma C.4). Invariant: y_t = [h_t, 0, 0, t+1, 1].
- :func:`directional_transformer` (Theorem 4.2, Appendix D.1): no positional encoding; the
  encoder self-attention and the decoder–encoder attention are masked (j ≤ t). Input
  ``# w $``. Layout ``[h1 | h2 | s | B4 (m) | x | B6 (m) | B7 (m) | B8 (m)]`` over the alphabet
  β₁ = #, …, β_m = $. Layer 1 averages ⟦s_j⟧ over j ≤ t̄ (ω_t̄, into B7) and computes
  δ_t = (σ(ω_t̄ − ω_{t−1}‾)_{1..m−1}, 2^{−(t+1)}) in B4; layer 2 scores ⟨δ_t, ⟦s_j⟧⟩, which is
  maximal exactly at the j ≤ t̄ with s_j = s_t̄ (Lemma D.3), and the FFN updates h.
  Invariant: y_t = [h_{t−1}, 0, 0, 0, 2^{−t}, 0, 0, ω_{t−1}‾]: y_t holds hs[t] of the RNN run on
  #, w, $, $, … (h₋₁ = the RNN's h₀).

``tm-sim`` compiles a two-stack machine into a σ-RNN (:mod:`netproof.constructions.tm_rnn`,
Siegelmann–Sontag with a Cantor stack code) and feeds it to either transformer, so the decoder
runs the machine: configuration k sits in y_t at t = t_S + 1 + 2k.

Errata (spec ``bhattamishra2020_suzgun2019_chang2021.md`` §2.3–§2.6, §6), each with the
first failing step of the literal reading on binary increment:

1. *Decoder position off by one* (C.2): ``y_t = ỹ_t + pos(t)`` contradicts y₀ = [0,0,0,1,1] and
   the invariant y_t = [h_t,…,t+1,1]; read literally, s₁ is read twice (first failing step
   t = 2). Fix: pos_dec(t) = pos(t+1).
2. *``$`` has no key* (Lemma C.3 outputs k₁..k_n only): for t ≥ n the decoder re-reads s_n
   forever instead of f_b($) = 0, and the TM-RNN never starts (t = 5 on 1011). Fix: ``$`` gets
   position n+1 and its own key/value.
3. *σ saturates the position* (Lemma C.4): the FFN feeds (t+1, 1) through σ and σ(t+1) = 1 for
   t ≥ 1, so the position coordinate drifts (t = 4). Fix: F = projection onto the non-position
   dims (here), or a ReLU FFN.
4. W_K's sign under the row convention (harmless under |·|); Lemma C.5's maximum is −(t+1−n),
   not t+1−n (claim B3 in the paper variant is refuted); block sizes d_b vs d_h in §4.1.
5. *Directional*: y_t holds h_{t−1}, not h_t (the RNN consumes ``#`` at step 0): the paper's
   "O^dec has h_t" is refuted at the first step; h₀ = 0 and h₋₁ = 0 are inconsistent (only h₋₁ is
   a seed); Theorem D.1 says "vanilla"; ω_t sums ⟦s_t⟧ for ⟦s_j⟧; Δ_{t,n−1} is Δ_{t,m−1}; Lemma
   D.2's W₁/W₂ are garbled (rebuilt here from the spec §2.4, only the 2^{−(t+1)} two-unit trick
   is as printed); Lemma D.3's λ_t sums to n−1 instead of t̄ and its hardmax vector starts at 1.
6. The strict gap (φ+1)/(t+1) − φ/t ≥ 1/(t(t+1)) behind Lemma D.3 needs the unique ``#`` at
   position 0 (claim B12; without it φ = t is allowed and the gap is 0).
7. In floats 2^{−(t+1)} underflows (float64 at t+1 ≥ 1075); a constant 1 in that coordinate is
   equally correct. Exact arithmetic is unaffected, so the printed coordinate is kept.

The paper variant of ``tm-sim`` builds what the text prints where it can be built (the vanilla
construction with errata 1–3; the directional one with the spec's weights, since the printed
Lemma D.2 matrices do not type-check) and states the paper's claims literally.

May import: the IR and its builders (:mod:`netproof.symbolic`), the vocabulary
(:mod:`netproof.verifier.claims`, the reference machines included), sympy and the machine
compiler :mod:`netproof.constructions.tm_rnn`; never an interpreter or an engine.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy

from netproof.constructions.tm_rnn import CompiledMachine, Convention, compile_machine, rnn_inputs
from netproof.symbolic import (
    RELU,
    SIGMA,
    AttentionLayer,
    DecoderLayer,
    Halting,
    Hardmax,
    Head,
    Seq2Seq,
    Sublayer,
    affine,
    ffn,
    token_embedding,
)
from netproof.symbolic.ir import Affine, Mask
from netproof.verifier.claims import (
    VARIANT,
    Claim,
    Construction,
    ForAll,
    Param,
    Precision,
    Simulates,
    TraceProperty,
    Word,
)
from netproof.verifier.claims.machines import Configuration, MachineError, SigmaRNN, load_machine

PAPER = "bhattamishra2020"
MACHINES_DIR = os.path.join(os.path.dirname(__file__), "machines")
SHIPPED = ("balanced-parens", "binary-increment", "reverse")
DEFAULT_MAX_LEN = 3

# --------------------------------------------------------------------------- small helpers


def _none() -> Affine:
    """A map that writes nothing (the paper's W_V = 0)."""
    return affine({}, inputs=(), outputs=())


def _v0_head(name: str, mask: Mask) -> Head:
    """An attention head with W_V = 0: its output is 0 whatever it attends to."""
    return Head(
        name=name, query=_none(), key=_none(), value=_none(), normalizer=Hardmax(), mask=mask
    )


def _halting(halt: Mapping[str, Fraction], prefix: str) -> Halting:
    return Halting(unit=affine({"halt": {f"{prefix}{u}": w for u, w in halt.items()}}))


def _fb(rnn: SigmaRNN, fb: Mapping[str, str] | None) -> dict[str, str]:
    """f_b: each input symbol's RNN symbol (one-hot over the RNN's alphabet)."""
    table = dict(fb) if fb is not None else {a: a for a in rnn.alphabet}
    for a, r in table.items():
        if r not in rnn.alphabet:
            raise MachineError(
                f"f_b maps {a!r} to {r!r}, which is not in the RNN's alphabet {rnn.alphabet}"
            )
        if a in ("#", "$"):
            raise MachineError(
                f"the input symbol {a!r} is reserved for the transformer's start/end marker; rename it"
            )
    return table


def _rnn_pre(rnn: SigmaRNN, h: str, s: str) -> dict[str, dict[str, Fraction]]:
    """Rows of W_h h + W_x s (over dims named ``{h}{unit}`` and ``{s}{symbol}``)."""
    units = rnn.unit_names
    rows: dict[str, dict[str, Fraction]] = {}
    for r, u in enumerate(units):
        row = {f"{h}{v}": w for v, w in zip(units, rnn.W_h[r], strict=True) if w != 0}
        row.update({f"{s}{a}": w for a, w in zip(rnn.alphabet, rnn.W_x[r], strict=True) if w != 0})
        rows[u] = row
    return rows


# --------------------------------------------------------------------------- Theorem 4.1 / C.2

ABLATIONS: dict[str, str] = {
    "none": "the construction as it is",
    "enc-residual": "no residual around the encoder attention; its head is the identity instead (q_i=(i,1), k_j=(−1,j), V=I)",
    "dec-self-residual": "no residual around the decoder self-attention; its head is the identity instead",
    "enc-ffn-relu": "no residual around the encoder FFN; a ReLU FFN computes the identity instead",
    "enc-ffn-sigma": "no residual around the encoder FFN; a σ FFN stands in for the identity (σ is bounded: fails)",
    "dec-ffn-residual": "no residual around the decoder FFN (the 'dashed' one): O outputs h_{t+1} itself",
    "dec-enc-residual": "no residual around the decoder–encoder attention (Proposition 4.3: fails)",
}
"""Figure 2's component analysis (§5, spec §2.6) as variants of the vanilla construction."""


def _identity_head(name: str, dims: tuple[str, ...], mask: str) -> Head:
    """A head that selects its own position and copies it: q = (pos_i, pos_1), k = (−pos_1,
    pos_i), score −|j − i| (one-hot at j = i), V = I (spec §2.6)."""
    return Head(
        name=name,
        query=affine({"q_i": {"pos_i": 1}, "q_1": {"pos_1": 1}}),
        key=affine({"q_i": {"pos_1": -1}, "q_1": {"pos_i": 1}}, outputs=("q_i", "q_1")),
        value=affine({d: {d: 1} for d in dims}),
        normalizer=Hardmax(),
        scoring="neg_abs_dot",
        mask=mask,  # type: ignore[arg-type]
    )


def vanilla_transformer(
    rnn: SigmaRNN,
    *,
    halt: Mapping[str, Fraction],
    fb: Mapping[str, str] | None = None,
    variant: str = "fixed",
    name: str = "vanilla-rnn-sim",
    ablation: str = "none",
) -> Seq2Seq:
    """The transformer of Theorem 4.1 (Appendix C.2) simulating ``rnn``.

    Reference: Bhattamishra et al. 2020, §4.1, Lemmas C.3–C.5. ``halt`` weights the RNN's units
    into its halting unit (the decoder halts when it is 1). ``variant="paper"`` is the printed
    construction: y_t = ỹ_t + pos(t), no key for ``$``, σ over the positions and F = identity.

    ``ablation`` removes one component (Figure 2, §5; spec §2.6), see :data:`ABLATIONS`.
    """
    if ablation not in ABLATIONS:
        raise ValueError(f"ablation={ablation!r} is not one of {', '.join(ABLATIONS)}")
    fbm = _fb(rnn, fb)
    units = rnn.unit_names
    H = [f"h:{u}" for u in units]
    S = [f"s:{a}" for a in rnn.alphabet]
    Hp = [f"h':{u}" for u in units]
    dims = (*H, *S, *Hp, "pos_i", "pos_1")
    paper = variant == "paper"
    table: dict[str, dict[str, int]] = {a: {f"s:{r}": 1} for a, r in fbm.items()}
    table["$"] = {}
    emb = token_embedding(
        tuple(fbm),
        table,
        positional={"pos_i": "i", "pos_1": "1"},
        suffix=() if paper else ("$",),
        index_base=1,
    )
    encoder = (
        Sublayer(block=AttentionLayer(name="enc_attention", heads=(_v0_head("enc_self", "none"),))),
        Sublayer(block=ffn("enc_ffn")),  # O_enc ≡ 0
    )
    if ablation == "enc-residual":  # the head alone: q_i = (i, 1), k_j = (−1, j), −|j − i|, V = I
        encoder = (
            Sublayer(
                block=AttentionLayer(
                    name="enc_attention", heads=(_identity_head("enc_self", dims, "none"),)
                ),
                residual=False,
            ),
            encoder[1],
        )
    elif ablation in ("enc-ffn-relu", "enc-ffn-sigma"):  # the FFN alone must output x itself
        if ablation == "enc-ffn-relu":  # x = ReLU(x) − ReLU(−x)
            up = affine(
                {**{f"p:{d}": {d: 1} for d in dims}, **{f"n:{d}": {d: -1} for d in dims}},
                inputs=dims,
            )
            down = affine({d: {f"p:{d}": 1, f"n:{d}": -1} for d in dims}, inputs=up.outputs)
            block = ffn("enc_ffn", up, RELU, down)
        else:  # σ(x): bounded, so it cannot carry the position i ≥ 2
            up = affine({f"g:{d}": {d: 1} for d in dims}, inputs=dims)
            block = ffn(
                "enc_ffn", up, SIGMA, affine({d: {f"g:{d}": 1} for d in dims}, inputs=up.outputs)
            )
        encoder = (encoder[0], Sublayer(block=block, residual=False))
    cross = Head(
        name="dec_enc",
        # the query is p_t itself: ⟨p_t, k_i⟩ only involves (pos_i, pos_1)
        query=affine({"q_i": {"pos_i": 1}, "q_1": {"pos_1": 1}}),
        # K^e = W_K Z: k_i = (−1, i) on (pos_i, pos_1)   (Lemma C.3, column convention)
        key=affine({"q_i": {"pos_1": -1}, "q_1": {"pos_i": 1}}, outputs=("q_i", "q_1")),
        # V^e copies s (the h and h' blocks of Z are 0)
        value=affine({f"s:{a}": {f"s:{a}": 1} for a in rnn.alphabet}),
        normalizer=Hardmax(),
        scoring="neg_abs_dot",
    )
    pre = _rnn_pre(rnn, "h:", "s:")
    rows1: dict[str, dict[str, Fraction]] = {f"u:{u}": pre[u] for u in units}
    bias1 = {f"u:{u}": rnn.b[r] for r, u in enumerate(units)}
    rows1 |= {f"gs:{a}": {f"s:{a}": Fraction(1)} for a in rnn.alphabet}
    rows1 |= {f"gh:{u}": {f"h:{u}": Fraction(1)} for u in units}
    rows2: dict[str, dict[str, int]] = {f"h:{u}": {f"u:{u}": 1, f"gh:{u}": -1} for u in units}
    rows2 |= {f"s:{a}": {f"gs:{a}": -1} for a in rnn.alphabet}
    if paper:  # Lemma C.4 as printed: the positions go through σ too
        rows1 |= {"gp_i": {"pos_i": Fraction(1)}, "gp_1": {"pos_1": Fraction(1)}}
        rows2 |= {"pos_i": {"gp_i": -1}, "pos_1": {"gp_1": -1}}
    first = affine(rows1, inputs=dims, bias=bias1)
    O = ffn("dec_ffn", first, SIGMA, affine(rows2, inputs=first.outputs))
    self_att = Sublayer(
        block=AttentionLayer(name="dec_self", heads=(_v0_head("dec_self", "causal"),))
    )
    if ablation == "dec-self-residual":  # y_j carries (j+1, 1): the head alone selects j = t, V = I
        self_att = Sublayer(
            block=AttentionLayer(
                name="dec_self", heads=(_identity_head("dec_self", dims, "causal"),)
            ),
            residual=False,
        )
    if ablation == "dec-ffn-residual":  # O writes h_{t+1} itself; F drops the rest
        O = ffn(
            "dec_ffn",
            first,
            SIGMA,
            affine({f"h:{u}": {f"u:{u}": 1} for u in units}, inputs=first.outputs),
        )
    layer = DecoderLayer(
        name="dec",
        self_attention=self_att,
        cross_attention=Sublayer(
            block=AttentionLayer(name="dec_enc", heads=(cross,)),
            residual=ablation != "dec-enc-residual",
        ),
        ffn=Sublayer(block=O, residual=ablation != "dec-ffn-residual"),
    )
    keep = [d for d in dims if paper or d not in ("pos_i", "pos_1")]
    if ablation == "dec-ffn-residual":
        keep = [f"h:{u}" for u in units]
    F = affine({d: {d: 1} for d in keep}, inputs=dims, outputs=dims)
    return Seq2Seq(
        name=name,
        dims=dims,
        embedding=emb,
        encoder=encoder,
        decoder=(layer,),
        output=F,
        seed=tuple((f"h:{u}", v) for u, v in zip(units, rnn.h0, strict=True) if v != 0),
        halting=_halting(halt, "h:"),
        decoder_positional=(
            ("pos_i", "i" if paper else "i+1", Fraction(1)),
            ("pos_1", "1", Fraction(1)),
        ),
        params=(("variant", variant), ("ablation", ablation)),
        reference="Bhattamishra et al. 2020, Theorem 4.1, Appendix C.2",
    )


# --------------------------------------------------------------------------- Theorem 4.2 / D.1


def directional_transformer(
    rnn: SigmaRNN,
    *,
    halt: Mapping[str, Fraction],
    fb: Mapping[str, str] | None = None,
    variant: str = "fixed",
    name: str = "directional-rnn-sim",
) -> Seq2Seq:
    """The directional transformer of Theorem 4.2 (Appendix D.1) simulating ``rnn``.

    Reference: Bhattamishra et al. 2020, §4.2, Lemmas D.2–D.3, with Lemma D.2's weights
    rebuilt (spec §2.4). The alphabet is β₁ = #, the input symbols, β_m = $; the encoder reads
    ``# w $``. The weights are the same in both variants (the printed D.2 matrices cannot be
    built); the paper variant differs in its claims.
    """
    fbm = _fb(rnn, fb)
    units = rnn.unit_names
    sigma_ = ("#", *fbm, "$")
    H1 = [f"h1:{u}" for u in units]
    H2 = [f"h2:{u}" for u in units]
    S = [f"s:{a}" for a in rnn.alphabet]

    def blk(b: str) -> list[str]:
        return [f"{b}:{x}" for x in sigma_]

    dims = (*H1, *H2, *S, *blk("B4"), "x", *blk("B6"), *blk("B7"), *blk("B8"))
    table: dict[str, dict[str, int]] = {a: {f"s:{r}": 1, f"B4:{a}": 1} for a, r in fbm.items()}
    table["#"] = {"B4:#": 1}
    table["$"] = {"B4:$": 1}
    emb = token_embedding(tuple(fbm), table, prefix=("#",), suffix=("$",), index_base=0)
    encoder = (
        Sublayer(
            block=AttentionLayer(name="enc_attention", heads=(_v0_head("enc_self", "causal"),))
        ),
        Sublayer(block=ffn("enc_ffn")),
    )

    def cross(name: str) -> Head:
        return Head(
            name=name,
            query=affine({f"k:{x}": {f"B4:{x}": 1} for x in sigma_}),  # the query is p_t itself
            key=affine({f"k:{x}": {f"B4:{x}": 1} for x in sigma_}),  # k_j = ⟦s_j⟧
            # v_j = [0, 0, f_b(s_j), 0, 0, 0, ⟦s_j⟧, 0]: copy s, move B4 to B7
            value=affine(
                {
                    **{f"s:{a}": {f"s:{a}": 1} for a in rnn.alphabet},
                    **{f"B7:{x}": {f"B4:{x}": 1} for x in sigma_},
                }
            ),
            normalizer=Hardmax(),
            mask="causal",
        )

    # O^(1): g_s = σ(s), g_Δ = σ(B7 − B8) on β₁..β_{m−1}, g_u = g_u' = σ(x/2), g₇ = σ(B7), g₈ = σ(B8)
    half = Fraction(1, 2)
    r1: dict[str, dict[str, Fraction]] = {f"gs:{a}": {f"s:{a}": Fraction(1)} for a in rnn.alphabet}
    r1 |= {f"gD:{x}": {f"B7:{x}": Fraction(1), f"B8:{x}": Fraction(-1)} for x in sigma_[:-1]}
    r1 |= {"gu": {"x": half}, "gu'": {"x": half}}
    r1 |= {f"g7:{x}": {f"B7:{x}": Fraction(1)} for x in sigma_}
    r1 |= {f"g8:{x}": {f"B8:{x}": Fraction(1)} for x in sigma_}
    a1 = affine(r1, inputs=dims)
    o1: dict[str, dict[str, int]] = {f"s:{a}": {f"gs:{a}": -1} for a in rnn.alphabet}
    o1 |= {f"B4:{x}": {f"gD:{x}": 1} for x in sigma_[:-1]}
    o1 |= {"B4:$": {"gu": 1}, "x": {"gu": -2, "gu'": 1}}
    o1 |= {f"B7:{x}": {f"g7:{x}": -1} for x in sigma_}
    o1 |= {f"B8:{x}": {f"g7:{x}": 1, f"g8:{x}": -1} for x in sigma_}
    O1 = ffn("dec1_ffn", a1, SIGMA, affine(o1, inputs=a1.outputs))
    # O^(2): g₁ = σ(W_h h1 + W_x s + b), g₂ = σ(h1), g₃ = σ(s), g₄ = σ(B4), g₇ = σ(B7)
    pre = _rnn_pre(rnn, "h1:", "s:")
    r2: dict[str, dict[str, Fraction]] = {f"g1:{u}": pre[u] for u in units}
    r2 |= {f"g2:{u}": {f"h1:{u}": Fraction(1)} for u in units}
    r2 |= {f"g3:{a}": {f"s:{a}": Fraction(1)} for a in rnn.alphabet}
    r2 |= {f"g4:{x}": {f"B4:{x}": Fraction(1)} for x in sigma_}
    r2 |= {f"g7:{x}": {f"B7:{x}": Fraction(1)} for x in sigma_}
    a2 = affine(r2, inputs=dims, bias={f"g1:{u}": rnn.b[r] for r, u in enumerate(units)})
    o2: dict[str, dict[str, int]] = {f"h1:{u}": {f"g1:{u}": 1, f"g2:{u}": -1} for u in units}
    o2 |= {f"s:{a}": {f"g3:{a}": -1} for a in rnn.alphabet}
    o2 |= {f"B4:{x}": {f"g4:{x}": -1} for x in sigma_}
    o2 |= {f"B7:{x}": {f"g7:{x}": -1} for x in sigma_}
    O2 = ffn("dec2_ffn", a2, SIGMA, affine(o2, inputs=a2.outputs))
    layers = tuple(
        DecoderLayer(
            name=f"dec{k}",
            self_attention=Sublayer(
                block=AttentionLayer(
                    name=f"dec{k}_self", heads=(_v0_head(f"dec{k}_self", "causal"),)
                )
            ),
            cross_attention=Sublayer(
                block=AttentionLayer(name=f"dec{k}_enc", heads=(cross(f"dec{k}_enc"),))
            ),
            ffn=Sublayer(block=O),
        )
        for k, O in ((1, O1), (2, O2))
    )
    return Seq2Seq(
        name=name,
        dims=dims,
        embedding=emb,
        encoder=encoder,
        decoder=layers,
        output=affine({d: {d: 1} for d in dims}, inputs=dims, outputs=dims),
        seed=(
            ("x", Fraction(1)),
            *((f"h1:{u}", v) for u, v in zip(units, rnn.h0, strict=True) if v != 0),
        ),
        halting=_halting(halt, "h1:"),
        params=(("variant", variant),),
        reference="Bhattamishra et al. 2020, Theorem 4.2, Appendix D.1",
    )


# --------------------------------------------------------------------------- machines


def _parse_machine(raw: str) -> str:
    if raw in SHIPPED:
        return raw
    if not raw.endswith(".json"):
        raise ValueError(
            f"machine={raw!r} is neither a shipped machine ({', '.join(SHIPPED)}) nor a machine file (a path "
            "ending in .json; see docs/papers/bhattamishra2020.md for the format)"
        )
    try:
        _compiled(os.path.abspath(raw))
    except MachineError as exc:
        raise ValueError(str(exc)) from None
    return os.path.abspath(raw)


@functools.lru_cache(maxsize=16)
def _compiled(ref: str) -> CompiledMachine:
    path = os.path.join(MACHINES_DIR, f"{ref}.json") if ref in SHIPPED else ref
    name, _description, machine = load_machine(path)
    return compile_machine(name, machine)


def compiled_machine(ref: str) -> CompiledMachine:
    """A shipped machine by name, or a machine file by path, compiled into its σ-RNN."""
    return _compiled(ref if ref in SHIPPED else os.path.abspath(ref))


def expected_ticks(
    cm: CompiledMachine, convention: Convention, word: Word
) -> tuple[tuple[int, Configuration], ...]:
    """(tick, configuration) for every configuration of the machine's run on ``word``; the last
    is the halting configuration (an extra one into ``halt:accept``/``halt:reject`` when the
    machine stops in a busy state)."""
    confs = list(cm.machine.configurations(word))
    last = confs[-1]
    if last.state not in cm.machine.halting_states():
        target = "halt:accept" if last.state in cm.machine.accept else "halt:reject"
        confs.append(Configuration(target, last.stack1, last.stack2))
    return tuple((cm.tick(k, len(word), convention), c) for k, c in enumerate(confs))


def tm_network(values: Mapping[str, Any]) -> Seq2Seq:
    cm = compiled_machine(values["machine"])
    fb = {a: a for a in cm.machine.input_alphabet}
    name = f"tm-sim-{values['transformer']}"
    ablation = values.get("ablation", "none")
    if values["transformer"] == "vanilla":
        net = vanilla_transformer(
            cm.rnn,
            halt=cm.halt_weights,
            fb=fb,
            variant=values["variant"],
            name=name,
            ablation=ablation,
        )
    else:
        if ablation != "none":
            raise ValueError(
                f"ablation={ablation!r}: Figure 2's ablations are of the vanilla transformer; use transformer=vanilla"
            )
        net = directional_transformer(
            cm.rnn, halt=cm.halt_weights, fb=fb, variant=values["variant"], name=name
        )
    params = (
        ("machine", cm.name),
        ("transformer", values["transformer"]),
        ("variant", values["variant"]),
        ("ablation", ablation),
    )
    return Seq2Seq(
        name=net.name,
        dims=net.dims,
        embedding=net.embedding,
        encoder=net.encoder,
        decoder=net.decoder,
        output=net.output,
        seed=net.seed,
        halting=net.halting,
        decoder_positional=net.decoder_positional,
        params=params,
        reference=net.reference,
    )


# --------------------------------------------------------------------------- claims


def sigma_expr(x: Any) -> Any:
    """σ(x) = min(1, max(0, x)) as a sympy expression (for :class:`ForAll` lemmas)."""
    return sympy.Min(1, sympy.Max(0, x))


def stack_lemmas() -> tuple[ForAll, ...]:
    """The Cantor stack lemmas (spec §2.2, M1), for every real tail code c' ∈ [0, 1)."""
    c, tail, b, x, g, tb = sympy.symbols("c tail b x G b2")
    ref = "Appendix B.1 (Siegelmann & Sontag stack code; spec §2.2)"
    code = (2 * b + 1) / sympy.Integer(4) + tail / 4  # b on top of a stack whose code is tail
    bit = sympy.Or(sympy.Eq(b, 0), sympy.Eq(b, 1))
    tail_ok = sympy.And(tail >= 0, tail < 1)
    # a tail that itself has top b2: tail = (2·b2+1)/4 + rest/4, rest ∈ [0, 1)
    rest = sympy.Symbol("rest")
    tail_top = (2 * tb + 1) / sympy.Integer(4) + rest / 4
    bit2 = sympy.Or(sympy.Eq(tb, 0), sympy.Eq(tb, 1))
    rest_ok = sympy.And(rest >= 0, rest < 1)
    return (
        ForAll(
            id="M1-read",
            statement="top = σ(4c−2) and nonempty = σ(4c) read a nonempty stack's code c",
            reference=ref,
            variables=("b", "tail"),
            assumptions=(bit, tail_ok),
            goal=sympy.And(
                sympy.Eq(sigma_expr(4 * code - 2), b), sympy.Eq(sigma_expr(4 * code), 1)
            ),
        ),
        ForAll(
            id="M1-read-empty",
            statement="top = nonempty = 0 on the empty stack's code 0",
            reference=ref,
            variables=("c",),
            assumptions=(sympy.Eq(c, 0),),
            goal=sympy.And(sympy.Eq(sigma_expr(4 * c - 2), 0), sympy.Eq(sigma_expr(4 * c), 0)),
        ),
        ForAll(
            id="M1-push",
            statement="push b: c/4 + (2b+1)/4 is a code with b on top and c below, in [0,1) (σ is the identity on it)",
            reference=ref,
            variables=("b", "tail"),
            assumptions=(bit, tail_ok),
            goal=sympy.And(
                sympy.Eq(sigma_expr(code), code), sympy.Eq(sigma_expr(4 * code - 2), b), code < 1
            ),
        ),
        ForAll(
            id="M1-pop",
            statement="pop: 4c − 2·top − 1 is the code below the top",
            reference=ref,
            variables=("b", "tail"),
            assumptions=(bit, tail_ok),
            goal=sympy.Eq(sigma_expr(4 * code - 2 * b - 1), tail),
        ),
        ForAll(
            id="M1-pop-top",
            statement="after a pop, σ(16c − 8·top − 6) is the new top and σ(16c − 8·top − 4) the new nonempty flag",
            reference=ref,
            variables=("b", "b2", "rest"),
            assumptions=(bit, bit2, rest_ok),
            goal=sympy.And(
                sympy.Eq(
                    sigma_expr(16 * ((2 * b + 1) / sympy.Integer(4) + tail_top / 4) - 8 * b - 6), tb
                ),
                sympy.Eq(
                    sigma_expr(16 * ((2 * b + 1) / sympy.Integer(4) + tail_top / 4) - 8 * b - 4), 1
                ),
            ),
        ),
        ForAll(
            id="M1-pop-to-empty",
            statement="popping the last symbol: both second-level reads give 0",
            reference=ref,
            variables=("b",),
            assumptions=(bit,),
            goal=sympy.And(
                sympy.Eq(sigma_expr(16 * ((2 * b + 1) / sympy.Integer(4)) - 8 * b - 6), 0),
                sympy.Eq(sigma_expr(16 * ((2 * b + 1) / sympy.Integer(4)) - 8 * b - 4), 0),
            ),
        ),
        ForAll(
            id="M1-gate",
            statement="gating with K = 4: σ(x + 4G − 4) = G·σ(x) for G ∈ {0,1} and every x ≤ 4",
            reference=ref,
            variables=("x", "G"),
            assumptions=(sympy.Or(sympy.Eq(g, 0), sympy.Eq(g, 1)), x <= 4),
            goal=sympy.Eq(sigma_expr(x + 4 * g - 4), g * sigma_expr(x)),
        ),
    )


def _selected_positions(trace: Any, t: int, layer: str) -> tuple[int, ...] | None:
    for sel in trace.steps[t].selections:
        if sel.layer == layer:
            return sel.selected  # type: ignore[no-any-return]
    return None


def _c5_holds(word: Word, trace: Any) -> str | None:
    """Lemma C.5 on the trace: the decoder–encoder attention reads exactly position
    min(t+1, n+1) at every step (n+1 is the ``$``)."""
    n = len(word)
    for step in trace.steps:
        if not step.selections:
            continue
        sel = _selected_positions(trace, step.t, "dec_enc")
        want = min(step.t + 1, n + 1)
        got = None if sel is None else tuple(trace.positions[j] for j in sel)
        if got != (want,):
            return f"step t={step.t}: the decoder–encoder attention reads positions {got}, expected only {want}"
    return None


def _prop43_holds(word: Word, trace: Any) -> str | None:
    """Proposition 4.3: hardmax averages a nonempty subset of the n values, so the attention
    output a_t (the state after ``dec_enc`` without its residual) takes ≤ 2^n − 1 values."""
    seen = {step.state("dec_enc").rows[0] for step in trace.steps if len(step.states) > 1}
    bound = 2 ** len(trace.tokens) - 1
    if len(seen) > bound:
        return f"a_t takes {len(seen)} distinct values over {len(trace.steps)} steps, more than 2^{len(trace.tokens)} − 1 = {bound}"
    return None


def _d3_holds(word: Word, trace: Any) -> str | None:
    """Lemmas D.2/D.3 on the trace: layer 1 averages every j ≤ t̄; layer 2 selects exactly the
    j ≤ t̄ with s_j = s_t̄ (t̄ = min(t, n), n the index of ``$``)."""
    n = len(trace.tokens) - 1
    for step in trace.steps:
        if not step.selections:
            continue
        tb = min(step.t, n)
        got1 = _selected_positions(trace, step.t, "dec1_enc")
        if got1 != tuple(range(tb + 1)):
            return f"step t={step.t}: layer 1 selects {got1}, expected all of 0..{tb}"
        got2 = _selected_positions(trace, step.t, "dec2_enc")
        want = tuple(j for j in range(tb + 1) if trace.tokens[j] == trace.tokens[tb])
        if got2 != want:
            return f"step t={step.t}: layer 2 selects {got2}, expected {want} (the positions holding s_t̄ = {trace.tokens[tb]!r})"
    return None


def _tm_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    cm = compiled_machine(values["machine"])
    conv: Convention = values["transformer"]
    paper = values["variant"] == "paper"
    prefix = "h:" if conv == "vanilla" else "h1:"
    units = cm.rnn.unit_names
    claims: list[Claim] = []
    if conv == "vanilla":
        claims.append(
            Simulates(
                id="B6",
                statement=(
                    "the h block of y_t equals the TM-RNN's state h_t at every step t (run on w, $, $, …), the decoder halts "
                    "when the RNN does, and the RNN holds the machine's configuration k at tick t_S + 1 + 2k"
                    + (
                        " (the construction as printed: pos(t), no $ key, σ over the positions)"
                        if paper
                        else ""
                    )
                    + (
                        ""
                        if values.get("ablation", "none") == "none"
                        else f" (Figure 2 ablation: {ABLATIONS[values['ablation']]})"
                    )
                ),
                reference="Theorem 4.1, Lemmas C.3–C.4; Appendix B.1",
                max_len=DEFAULT_MAX_LEN,
                rnn=cm.rnn,
                hidden=tuple(f"{prefix}{u}" for u in units),
                inputs=functools.partial(rnn_inputs, conv),
                halt=cm.halt_weights,
                machine=functools.partial(expected_ticks, cm, conv),
                decode=cm.decode,
            )
        )
        ablation = values.get("ablation", "none")
        if ablation == "dec-enc-residual":
            claims.append(
                TraceProperty(
                    id="B14",
                    statement="without the decoder–encoder residual, a_t takes at most 2^n − 1 distinct values over the whole run (n encoder tokens)",
                    reference="Proposition 4.3 / C.1",
                    max_len=DEFAULT_MAX_LEN,
                    holds=_prop43_holds,
                )
            )
        claims.append(
            TraceProperty(
                id="C5-trace",
                statement="at every decoder step t the decoder–encoder attention selects exactly position min(t+1, n+1) (n+1 is $)",
                reference="Lemma C.5",
                max_len=DEFAULT_MAX_LEN,
                holds=_c5_holds,
            )
        )
        n, t, i = sympy.symbols("n t i", integer=True)
        if paper:
            claims.append(
                ForAll(
                    id="B3",
                    statement="for t ≥ n the maximum of ⟨p_t, k_i⟩ = −|i − (t+1)| over i = 1..n is t+1−n, at i = n (as printed)",
                    reference="Lemma C.5",
                    variables=("n", "t"),
                    domain="integers",
                    assumptions=(n >= 1, t >= n),
                    goal=sympy.Eq(-sympy.Abs(n - (t + 1)), t + 1 - n),
                )
            )
        else:
            m = sympy.Min(t + 1, n + 1)
            claims.append(
                ForAll(
                    id="B3",
                    statement="∀ n, t ≥ 0: −|i − (t+1)| over i = 1..n+1 has its unique maximum at i = min(t+1, n+1)",
                    reference="Lemma C.5 (with the $ key at n+1)",
                    variables=("n", "t", "i"),
                    domain="integers",
                    assumptions=(n >= 0, t >= 0, i >= 1, i <= n + 1, sympy.Ne(i, m)),
                    goal=-sympy.Abs(i - (t + 1)) < -sympy.Abs(m - (t + 1)),
                )
            )
    else:
        if paper:
            claims.append(
                Simulates(
                    id="B8",
                    statement="the decoder output at step t holds h_t, the RNN's state after t inputs of w, $, $, … (§4.2: 'O^dec has h_t')",
                    reference="Theorem 4.2 / D.1",
                    max_len=DEFAULT_MAX_LEN,
                    rnn=cm.rnn,
                    hidden=tuple(f"{prefix}{u}" for u in units),
                    inputs=functools.partial(rnn_inputs, "vanilla"),
                    halt=cm.halt_weights,
                )
            )
        else:
            claims.append(
                Simulates(
                    id="B8",
                    statement=(
                        "the h₁ block of y_t equals the TM-RNN's state hs[t] of the run on #, w, $, … at every "
                        "step, the decoder halts when the RNN does, and the RNN holds the machine's configuration k at tick t_S + 1 + 2k"
                    ),
                    reference="Theorem 4.2, Lemmas D.2–D.3; Appendix B.1",
                    max_len=DEFAULT_MAX_LEN,
                    rnn=cm.rnn,
                    hidden=tuple(f"{prefix}{u}" for u in units),
                    inputs=functools.partial(rnn_inputs, conv),
                    halt=cm.halt_weights,
                    machine=functools.partial(expected_ticks, cm, conv),
                    decode=cm.decode,
                )
            )
        claims.append(
            TraceProperty(
                id="B11",
                statement="layer 1 averages every encoder position j ≤ t̄; layer 2 selects exactly the j ≤ t̄ with s_j = s_t̄ (t̄ = min(t, n))",
                reference="Lemmas D.2–D.3",
                max_len=DEFAULT_MAX_LEN,
                holds=_d3_holds,
            )
        )
        t, phi = sympy.symbols("t phi", integer=True)
        claims.append(
            ForAll(
                id="B12",
                statement=(
                    "(φ+1)/(t+1) − φ/t ≥ 1/(t(t+1)) for t ≥ 1 and 0 ≤ φ ≤ "
                    + ("t (no # at position 0, as printed)" if paper else "t − 1 (# at 0)")
                ),
                reference="Lemma D.3 (the gap of δ_t at s_t)",
                variables=("t", "phi"),
                domain="integers",
                assumptions=(t >= 1, phi >= 0, phi <= (t if paper else t - 1)),
                goal=(phi + 1) / (t + 1) - phi / t >= 1 / (t * (t + 1)),
            )
        )
    claims.extend(stack_lemmas())
    return tuple(claims)


def _tm_budget(values: Mapping[str, Any], word: Word) -> int:
    """Two steps past the tick at which the machine's run halts (so a decoder that fails to halt
    there is seen): the machine's own run bounds every decoder run."""
    cm = compiled_machine(values["machine"])
    return expected_ticks(cm, values["transformer"], word)[-1][0] + 2


# --------------------------------------------------------------------------- Proposition 4.3, tight

PROP43_MAX = 7


def prop43_network() -> Seq2Seq:
    """Proposition 4.3's bound is tight (spec §2.5): encoder keys and values e_1..e_m (the word
    ``12…m``), dot scoring, and a decoder whose query runs through every nonzero bit vector.

    The decoder holds a binary counter b (dims ``b:1``..``b:8``, seeded at 1) that its FFN
    increments each step: b_k += carry_k − 2·AND(b_k, carry_k) with carry_k = σ(Σ_{j<k} b_j −
    (k−2)) and AND(b_k, carry_k) = σ(Σ_{j≤k} b_j − (k−1)). The decoder–encoder head scores
    ⟨b, e_i⟩ = b_i, so hardmax averages the e_i with b_i = 1 into ``a:*`` (which the FFN clears
    again). It halts when the counter reaches 2^7 (b_8 = 1), after the queries 1..2^7 − 1.
    """
    K = range(1, PROP43_MAX + 1)
    B = range(1, PROP43_MAX + 2)
    dims = (*(f"b:{k}" for k in B), *(f"a:{k}" for k in K), *(f"e:{k}" for k in K))
    emb = token_embedding(tuple(str(k) for k in K), {str(k): {f"e:{k}": 1} for k in K})
    head = Head(
        name="dec_enc",
        query=affine({f"k:{k}": {f"b:{k}": 1} for k in K}),
        key=affine({f"k:{k}": {f"e:{k}": 1} for k in K}),
        value=affine({f"a:{k}": {f"e:{k}": 1} for k in K}),
        normalizer=Hardmax(),
    )
    up = affine(
        {
            **{f"carry:{k}": {f"b:{j}": 1 for j in range(1, k)} for k in B},
            **{f"and:{k}": {f"b:{j}": 1 for j in range(1, k + 1)} for k in B},
            **{f"ga:{k}": {f"a:{k}": 1} for k in K},
        },
        inputs=dims,
        bias={**{f"carry:{k}": -(k - 2) for k in B}, **{f"and:{k}": -(k - 1) for k in B}},
    )
    down = affine(
        {
            **{f"b:{k}": {f"carry:{k}": 1, f"and:{k}": -2} for k in B},
            **{f"a:{k}": {f"ga:{k}": -1} for k in K},
        },
        inputs=up.outputs,
    )
    layer = DecoderLayer(
        name="dec",
        self_attention=Sublayer(
            block=AttentionLayer(name="dec_self", heads=(_v0_head("dec_self", "causal"),))
        ),
        cross_attention=Sublayer(block=AttentionLayer(name="dec_enc", heads=(head,))),
        ffn=Sublayer(block=ffn("count", up, SIGMA, down)),
    )
    return Seq2Seq(
        name="prop43-tight",
        dims=dims,
        embedding=emb,
        encoder=(),
        decoder=(layer,),
        output=affine({d: {d: 1} for d in dims if d.startswith("b:")}, inputs=dims, outputs=dims),
        seed=(("b:1", Fraction(1)),),
        halting=Halting(unit=affine({"wrapped": {f"b:{PROP43_MAX + 1}": 1}})),
        reference="Bhattamishra et al. 2020, Proposition 4.3 / C.1 (tightness)",
    )


def _prop43_tight_holds(word: Word, trace: Any) -> str | None:
    m = len(word)
    outputs = {
        tuple(
            step.state("dec_enc").rows[0][trace.network.dims.index(f"a:{k}")]
            for k in range(1, PROP43_MAX + 1)
        )
        for step in trace.steps
        if len(step.states) > 1
    }
    if trace.halted_at != 2**PROP43_MAX - 1:
        return f"the counter halts at step {trace.halted_at}, expected {2**PROP43_MAX - 1} (every nonzero query once)"
    if len(outputs) != 2**m - 1:
        return f"the attention output takes {len(outputs)} distinct values, expected exactly 2^{m} − 1 = {2**m - 1}"
    return None


def _prop43_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    return (
        TraceProperty(
            id="B14-tight",
            statement=(
                "with keys and values e_1..e_m and the queries running through every nonzero bit vector, the "
                "decoder–encoder attention output takes exactly 2^m − 1 distinct values (Proposition 4.3's bound is tight)"
            ),
            reference="Proposition 4.3 / C.1",
            min_len=1,
            max_len=PROP43_MAX,
            holds=_prop43_tight_holds,
            domain=lambda bound: [
                tuple(str(k) for k in range(1, m + 1)) for m in range(1, min(bound, PROP43_MAX) + 1)
            ],
            domain_text="word 12…m",
        ),
    )


MACHINE_PARAM = Param(
    name="machine",
    default="balanced-parens",
    parse=_parse_machine,
    help=f"a shipped machine ({', '.join(SHIPPED)}) or the path of a machine file (*.json)",
)
ABLATION_PARAM = Param(
    name="ablation",
    default="none",
    parse=str,
    help="Figure 2: remove one component of the vanilla transformer ("
    + "; ".join(f"{k}: {v}" for k, v in ABLATIONS.items())
    + ")",
    choices=tuple(ABLATIONS),
)
TRANSFORMER_PARAM = Param(
    name="transformer",
    default="vanilla",
    parse=str,
    help="vanilla: Theorem 4.1 (positional encodings, −|⟨q,k⟩|); directional: Theorem 4.2 (masking only)",
    choices=("vanilla", "directional"),
)


def tm_long_words(values: Mapping[str, Any], m: int) -> list[Word]:
    """The precision search's worst-case words for ``tm-sim``: a word of one (the least) input
    symbol repeated and the word cycling through the sorted input alphabet (``(((…`` and
    ``()()…`` for balanced-parens). The machine's stacks are encoded as dyadic rationals whose
    denominators grow with the word, and float32 loses them between 8 and 16 symbols on both
    words (measured); on longer words the decoder also runs past t = n, where the directional
    transformer's 2^{−t} coordinate is wrong in float32 from t = 150 on (spec bhattamishra2020
    §2.4 item 7, claim B18; tests/backends/test_torch_seq2seq.py isolates it with a stateless RNN).

    >>> tm_long_words({"machine": "balanced-parens"}, 3)
    [('(', '(', '('), ('(', ')', '(')]
    """
    alphabet = sorted(compiled_machine(values["machine"]).machine.input_alphabet)
    if m < 1 or not alphabet:
        return []
    words = [(alphabet[0],) * m, tuple(alphabet[t % len(alphabet)] for t in range(m))]
    return list(dict.fromkeys(words))


CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        name="tm-sim",
        paper_id=f"{PAPER}.tm_sim",
        title="an encoder–decoder transformer runs a two-stack machine through its σ-RNN",
        reference="Bhattamishra et al. 2020, §4 (Theorems 4.1, 4.2), Appendices B.1, C, D",
        params=(MACHINE_PARAM, TRANSFORMER_PARAM, VARIANT, ABLATION_PARAM),
        build=tm_network,
        claims=_tm_claims,
        max_steps=_tm_budget,
        precision=Precision(worst=tm_long_words),
    ),
    Construction(
        name="prop43-tight",
        paper_id=f"{PAPER}.prop43_tight",
        title="Proposition 4.3's 2^n − 1 bound on the decoder–encoder attention output is tight",
        reference="Bhattamishra et al. 2020, Proposition 4.3 / Appendix C.1",
        params=(),
        build=lambda values: prop43_network(),
        claims=_prop43_claims,
    ),
)
