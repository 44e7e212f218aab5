"""Chiang & Cholak 2022's claims, lemmas and construction declarations.

The paper's claims as data (spec ``chiang2022_yao2021.md`` §2.9, C1–C13). Each construction's
``claims(params)`` returns the fixed statements by default and the paper's literal statements for
``variant=paper``; :data:`CONSTRUCTIONS` declares the paper's eleven constructions for the
registry (:mod:`netproof.constructions`). May import: the IR, the vocabulary
(:mod:`netproof.verifier.claims`), sympy, and this paper's networks and experiments; never an
interpreter or an engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy

from netproof.symbolic import Network
from netproof.verifier.claims import (
    VARIANT,
    BlockIdentity,
    BooleanBlock,
    Bound,
    Claim,
    Construction,
    CrossEntropy,
    Identity,
    Lemma,
    MirrorInvariant,
    Output,
    Param,
    Point,
    Recognizes,
    ScaledBlock,
    SignForAllBases,
    StateValue,
    ValueIs,
    parse_fraction,
)
from netproof.verifier.claims.languages import FIRST, PARITY

from .experiments import EXTREMES, FLAWED_FIRST
from .networks import (
    BaseSpec,
    doubled,
    first_flawed,
    first_transformer,
    parity_transformer,
    parse_c,
    prop2_layer,
    rumelhart_parity,
)

__all__ = ["CONSTRUCTIONS", "parity_closed_form", "parity_closed_form_paper"]

PAPER = "chiang2022"
I0_DIM, CLS_DIM = "I[w=0]", "I[w=CLS]"


def _k(p: Point) -> int:
    return p.word.count("1")


# Closed forms (ValueIs.closed_form): the length n (tokens), the count of 1s, I[w₁ = 1].
_N, _K, _W1 = sympy.Symbol("n"), sympy.Symbol("#1"), sympy.Symbol("w1=1")


def _first_bit(p: Point) -> int:
    return int(len(p.word) >= 1 and p.word[0] == "1")


def parity_closed_form(p: Point) -> Any:
    """The exact s of the PARITY transformer (spec §2.2): (−1)^{k+1}(2/n²)·tanh c for even n,
    the Z₁/Z₂ form for odd n; tanh c = (E² − 1)/(E² + 1)."""
    E, n, k = p.E, p.n, _k(p)
    if n % 2 == 0:
        return (-1) ** (k + 1) * sympy.Rational(2, n * n) * (E**2 - 1) / (E**2 + 1)
    n_o, n_e = n // 2, (n + 1) // 2
    z1 = n_o * E + n_e / E
    z2 = n_o / E + n_e * E
    if k % 2 == 1:
        return (E / z1 - 1 / (E * z2)) / n
    return (1 / (E * z1) - E / z2) / n


def parity_closed_form_paper(p: Point) -> Any:
    """The paper's printed s for even n: (−1)^{k+1}(2/n)·tanh c (no statement for odd n)."""
    E, n, k = p.E, p.n, _k(p)
    if n % 2 == 1:
        return None
    return (-1) ** (k + 1) * sympy.Rational(2, n) * (E**2 - 1) / (E**2 + 1)


def _ce_weight(eta: Fraction, width: int) -> Fraction:
    """The smallest c′ on the 1/1000 grid with c′ ≥ −ln(e^η − 1)/√(D̂/2) (so CE ≤ η)."""
    if not 0 < eta < sympy.log(2):
        raise ValueError(f"eta={eta} must satisfy 0 < eta < ln 2 (c′ > 0 needs it); try eta=1/10")
    eta_s = sympy.Rational(eta.numerator, eta.denominator)
    c_star = -sympy.log(sympy.exp(eta_s) - 1) / sympy.sqrt(sympy.Rational(width, 2))
    return Fraction(int(sympy.ceiling(c_star * 1000)), 1000)


def _ce_identity(paper: bool, width: int, ref: str) -> Identity:
    eta = sympy.Symbol("eta", positive=True)
    x = sympy.sqrt(sympy.Rational(width, 2))
    c_star = -sympy.log(sympy.exp(eta) - 1) / x
    sigma = 1 / (1 + sympy.exp(-c_star * x))
    if paper:
        return Identity(
            id="C9-paper",
            statement=f"the cross-entropy is log σ(c√(d/2)) = η (d = {width}), as printed",
            reference=ref,
            lhs=sympy.log(sigma),
            rhs=eta,
            sample={"eta": Fraction(1, 10)},
        )
    return Identity(
        id="C9",
        statement=f"with c′ = −ln(e^η − 1)/√(D̂/2), the cross-entropy −ln σ(c′√(D̂/2)) equals η (D̂ = {width})",
        reference=ref,
        lhs=-sympy.log(sigma),
        rhs=eta,
        sample={"eta": Fraction(1, 10)},
    )


C_PARAM = Param(
    name="c",
    default="ln(2)",
    parse=parse_c,
    help="attention constant c > 0: ln(r) keeps softmax rational (base E = r); a rational c needs sympy",
)
EPS_PARAM = Param(
    name="eps",
    default="0",
    parse=parse_fraction("eps", minimum=Fraction(0)),
    help="layer-norm epsilon (exact rational, 0 allowed)",
)


def _parse_eta(raw: str) -> Fraction:
    eta = parse_fraction("eta", minimum=Fraction(0), strict=True)(raw)
    if not sympy.exp(sympy.Rational(eta.numerator, eta.denominator)) < 2:
        raise ValueError(
            f"eta={eta} must satisfy 0 < eta < ln 2 ≈ 0.693 (c′ > 0 needs it); try eta=1/10"
        )
    return eta


ETA_PARAM = Param(
    name="eta",
    default="1/10",
    parse=_parse_eta,
    help="target cross-entropy η (nats), 0 < η < ln 2; c′ is the next 1/1000 above the paper's value",
)


def _recognizes(
    lang: Any,
    ref: str,
    *,
    backend: str = "exact",
    max_len: int = 10,
    min_len: int = 0,
    cid: str = "recognizes",
) -> Recognizes:
    return Recognizes(
        id=cid,
        statement=f"accepts exactly the words of {lang.name} ({lang.description})",
        reference=ref,
        language=lang,
        backend=backend,  # type: ignore[arg-type]
        max_len=max_len,
        min_len=min_len,
    )


# --------------------------------------------------------------------------- per construction


def _rumelhart_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    return (_recognizes(PARITY, "§2.1", max_len=12, cid="C1"),)


def _parity_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§2.2, Proposition 1"
    paper = values["variant"] == "paper"
    claims: list[Claim] = [
        _recognizes(PARITY, ref, cid="C4"),
        SignForAllBases(
            id="C4-all-c",
            statement="for every c > 0 (E = e^c > 1): s > 0 iff w ∈ PARITY",
            reference=ref,
            language=PARITY,
            threshold=lambda m: Fraction(1),
            threshold_text="1",
            max_len=8,
        ),
        BlockIdentity(
            id="C2",
            statement="Fig. 1: relu(k−i−1) − 2·relu(k−i) + relu(k−i+1) = I[i=k] for all integers i, k",
            reference="§2.2, Fig. 1",
            block="fig1",
            inputs={"i/n": sympy.Symbol("i"), "k/n": sympy.Symbol("k"), "1/n": sympy.Integer(1)},
            outputs={
                "I[i=k]/n": sympy.Piecewise(
                    (1, sympy.Eq(sympy.Symbol("i"), sympy.Symbol("k"))), (0, True)
                )
            },
            variables=("i", "k"),
        ),
        ValueIs(
            id="C3-count",
            statement="layer 1 writes k/n at every position",
            reference=ref,
            quantity=StateValue(after="count", dim="k/n"),
            expected=lambda p: Fraction(_k(p), p.n),
            expected_text="k/n",
            closed_form=_K / _N,
        ),
        ValueIs(
            id="C3-1/n",
            statement="layer 1 writes 1/n at every position",
            reference=ref,
            quantity=StateValue(after="count", dim="1/n"),
            expected=lambda p: Fraction(1, p.n),
            expected_text="1/n",
            closed_form=1 / _N,
        ),
        ValueIs(
            id="C3-fig1",
            statement="FFN 1 writes I[i=k]/n at every position",
            reference=ref,
            quantity=StateValue(after="fig1", dim="I[i=k]/n"),
            expected=lambda p: Fraction(int(p.i == _k(p)), p.n),
            expected_text="I[i=k]/n",
            closed_form=sympy.Piecewise((1 / _N, sympy.Eq(sympy.Symbol("i"), _K)), (0, True)),
        ),
    ]
    if paper:
        claims.append(
            ValueIs(
                id="C5-paper",
                statement="for even n, s = (−1)^{k+1}·(2/n)·tanh c (as printed)",
                reference=ref,
                quantity=Output(),
                expected=parity_closed_form_paper,
                backend="symbolic",
                max_len=8,
                expected_text="(−1)^{k+1}(2/n)tanh c",
            )
        )
    else:
        claims.append(
            ValueIs(
                id="C5",
                statement="s = (−1)^{k+1}(2/n²)·tanh c for even n, and the Z₁/Z₂ form for odd n, as identities in E = e^c",
                reference=ref,
                quantity=Output(),
                expected=parity_closed_form,
                backend="symbolic",
                max_len=8,
                expected_text="(−1)^{k+1}(2/n²)tanh c (even n); (1/n)(E/Z₁ − E⁻¹/Z₂) or (1/n)(E⁻¹/Z₁ − E/Z₂) (odd n)",
            )
        )
    return tuple(claims)


def _parity_lemmas(values: Mapping[str, Any]) -> tuple[Lemma, ...]:
    """The step of Proposition 1's proof that is a block lemma (Fig. 1): FFN 1 turns i/n, k/n and
    1/n into I[i = k]/n, for all integers i, k and every n >= 1. (Layer 1's k/n is not a lemma:
    its uniform weights do not depend on the word, so the encoder computes them exactly.)"""
    i, k = sympy.symbols("i k", integer=True)
    return (
        ScaledBlock(
            id="fig1",
            statement="FFN fig1 writes I[i = k]/n from i/n, k/n and 1/n, for all integers i, k and n >= 1 (Fig. 1)",
            reference="§2.2, Proposition 1, Fig. 1",
            block="fig1",
            unit="1/n",
            inputs={"i/n": i, "k/n": k},
            outputs={"I[i=k]/n": sympy.Piecewise((1, sympy.Eq(i, k)), (0, True))},
        ),
    )


def _first_lemmas(values: Mapping[str, Any]) -> tuple[Lemma, ...]:
    """§2.3's FFN 1 as a block lemma: on one-hot inputs it writes dim 5 = I[i=1 ∧ w_i=1], i.e.
    relu(−I[w=0] − I[w=CLS] + I[i=1]) is 1 exactly when I[i=1] holds and the token is neither 0
    nor CLS. (The claims' proofs for every length, over position classes, encode the FFN
    faithfully; the lemma is the paper's own step, and it opens the compositional proof.)"""
    i1, w0, cls = sympy.symbols(f"I[i=1] {I0_DIM} {CLS_DIM}")
    return (
        BooleanBlock(
            id="first_symbol",
            statement="FFN first_symbol writes I[i=1∧w=1] = I[i=1] ∧ ¬I[w=0] ∧ ¬I[w=CLS] on 0/1 inputs",
            reference="§2.3",
            block="first_symbol",
            boolean=("I[i=1]", I0_DIM, CLS_DIM),
            outputs={"I[i=1∧w=1]": sympy.And(i1, sympy.Not(w0), sympy.Not(cls))},
        ),
    )


def _first_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§2.3"
    return (
        _recognizes(FIRST, ref, cid="recognizes"),
        SignForAllBases(
            id="all-c",
            statement="for every c > 0 (E = e^c > 1): s > 0 iff w ∈ FIRST",
            reference=ref,
            language=FIRST,
            threshold=lambda m: Fraction(1),
            threshold_text="1",
            max_len=8,
        ),
        ValueIs(
            id="C6",
            statement="s = E/(E+n−1)·(I[w₁=1] − ½) for |w| ≥ 1 and s = 0 for the empty word, as identities in E",
            reference=ref,
            quantity=Output(),
            expected=lambda p: (
                0 if p.n == 1 else p.E / (p.E + p.n - 1) * (_first_bit(p) - sympy.Rational(1, 2))
            ),
            backend="symbolic",
            max_len=8,
            expected_text="E/(E+n−1)(I[w₁=1] − ½)",
        ),
    )


def _first_flawed_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§4.2"
    return (
        ValueIs(
            id="C10-form",
            statement="s = (E−1)/(E+n−1)·(I[w₁=1] − ½) + (k − n/2)/(E+n−1), as identities in E",
            reference=ref,
            quantity=Output(),
            expected=lambda p: (
                (p.E - 1) / (p.E + p.n - 1) * (_first_bit(p) - sympy.Rational(1, 2))
                + (_k(p) - sympy.Rational(p.n, 2)) / (p.E + p.n - 1)
            ),
            backend="symbolic",
            max_len=8,
            expected_text="(E−1)/(E+n−1)(I − ½) + (k − n/2)/(E+n−1)",
        ),
        SignForAllBases(
            id="C10",
            statement="correct on every word of length n−1 iff c > ln(n−1): for all E > n−1 every word is "
            "classified right, and for every E in (1, n−1] the word 1 0^{n−2} is misclassified",
            reference=ref,
            language=FIRST,
            threshold=lambda m: Fraction(max(m, 1)),
            threshold_text="n−1 = |w|",
            witness=lambda m: ("1",) + ("0",) * (m - 1),
            max_len=8,
        ),
    )


def _first_flawed_logn_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§4.3"
    return (
        _recognizes(FIRST, ref, cid="recognizes"),
        ValueIs(
            id="C11-flawed",
            statement="with ln n scaling and c = 1: s = (n−1)/(2n−1)·(I[w₁=1] − ½) + (k − n/2)/(2n−1)",
            reference=ref,
            quantity=Output(),
            expected=lambda p: (
                Fraction(p.n - 1, 2 * p.n - 1) * (_first_bit(p) - Fraction(1, 2))
                + (_k(p) - Fraction(p.n, 2)) / (2 * p.n - 1)
            ),
            expected_text="(n−1)/(2n−1)(I − ½) + (k − n/2)/(2n−1)",
            closed_form=(_N - 1) / (2 * _N - 1) * (_W1 - sympy.Rational(1, 2))
            + (_K - _N / 2) / (2 * _N - 1),
        ),
    )


def _first_logn_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§4.3, Proposition 3"
    return (
        _recognizes(FIRST, ref, cid="recognizes"),
        ValueIs(
            id="C11",
            statement="with ln n scaling and c = 1: s = n/(2n−1)·(I[w₁=1] − ½) for |w| ≥ 1",
            reference=ref,
            quantity=Output(),
            expected=lambda p: Fraction(p.n, 2 * p.n - 1) * (_first_bit(p) - Fraction(1, 2)),
            min_len=1,
            expected_text="n/(2n−1)(I − ½)",
            closed_form=_N / (2 * _N - 1) * (_W1 - sympy.Rational(1, 2)),
        ),
        Bound(
            id="C11-bound",
            statement="1/4 < |s| ≤ 1/3 for |w| ≥ 1 (the paper's ≤ 1/2 is true but loose)",
            reference=ref,
            quantity=Output(),
            absolute=True,
            lower=lambda p: Fraction(1, 4),
            upper=lambda p: Fraction(1, 3),
            strict_lower=True,
            strict_upper=False,
            min_len=1,
            bound_text="1/4 < |s| ≤ 1/3",
        ),
        Bound(
            id="C11-paper-bound",
            statement="1/4 < |s| ≤ 1/2 for |w| ≥ 1 (as printed)",
            reference=ref,
            quantity=Output(),
            absolute=True,
            lower=lambda p: Fraction(1, 4),
            upper=lambda p: Fraction(1, 2),
            min_len=1,
            bound_text="1/4 < |s| ≤ 1/2",
        ),
    )


def _ln_claims(lang: Any, values: Mapping[str, Any], ref: str) -> list[Claim]:
    paper = values["variant"] == "paper"
    return [
        _recognizes(lang, ref, backend="interval", cid="C7"),
        MirrorInvariant(
            id="C7-mirror" + ("-paper" if paper else ""),
            statement="every activation is [h; −h] (mean 0), so layer norm only rescales"
            + (" (with the printed x̄ = [x; 0])" if paper else ""),
            reference="§3.1",
            max_len=4,
        ),
    ]


def _ce_claims(lang: Any, values: Mapping[str, Any], width: int, ref: str) -> tuple[Claim, ...]:
    paper = values["variant"] == "paper"
    eta: Fraction = values["eta"]
    c_prime = _ce_weight(eta, width)
    claims: list[Claim] = [
        _recognizes(lang, ref, backend="interval", min_len=1, cid="recognizes"),
        _prop2_block_lemma(width),
        _prop2_ln_lemma(width, c_prime),
        Bound(
            id="C9-bound",
            statement=f"cross-entropy ≤ η = {eta} nats on every w ≠ ε",
            reference=ref,
            quantity=CrossEntropy(language=lang),
            upper=lambda p: eta,
            strict_upper=False,
            backend="interval",
            min_len=1,
            bound_text=f"CE ≤ {eta}",
        ),
        _ce_identity(paper, width, ref),
    ]
    return tuple(claims)


def _prop2_block_lemma(width: int) -> BlockIdentity:
    """C8, part 1: the extra layer's FFN plus the residual leaves exactly [s; −s; 0…], for every
    real input vector h (s = W^L·h is the old logit). The output layer W^L reads dim s."""
    base = parity_transformer() if width == 18 else first_transformer()
    dims = doubled(base).dims
    h = {d: sympy.Symbol(f"h[{d}]", real=True) for d in dims}
    logit = h["s"]
    first, second = dims[0], dims[1]
    outputs = {d: -h[d] + (logit if d == first else -logit if d == second else 0) for d in dims}
    return BlockIdentity(
        id="C8-layer",
        statement="for every real h, Prop. 2's FFN maps h to −h + [s; −s; 0…] (s = W^L h), so after the "
        "residual the layer holds exactly [s; −s; 0…]",
        reference="§3.2, Proposition 2",
        block="prop2_ffn",
        inputs=dict(h),
        outputs=outputs,
        variables=tuple(str(v) for v in h.values()),
        domain="reals",
    )


def _prop2_ln_lemma(width: int, c_prime: Fraction) -> Identity:
    """C8, part 2: layer norm (eps = 0) of [s; −s; 0…] is [√(D̂/2); −√(D̂/2); 0…] for s > 0 (and
    the negative of it for s < 0, by oddness), so the logit is ±c′√(D̂/2) whatever n is."""
    s = sympy.Symbol("s", positive=True)
    d = sympy.Integer(width)
    vector = [s, -s] + [sympy.Integer(0)] * (width - 2)
    mean = sum(vector) / d
    var = sum((x - mean) ** 2 for x in vector) / d
    first = (vector[0] - mean) / sympy.sqrt(var)
    cp = sympy.Rational(c_prime.numerator, c_prime.denominator)
    return Identity(
        id="C8",
        statement=f"the final logit c′·LN([s; −s; 0…])₁ equals c′√(D̂/2) = {cp}·√{sympy.Rational(width, 2)} for "
        "every s > 0, independent of n (s < 0 gives minus that by the oddness of LN, not checked here)",
        reference="§3.2, Proposition 2",
        lhs=cp * first,
        rhs=cp * sympy.sqrt(d / 2),
    )


def _first_ln_logn_claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    ref = "§4.3, Proposition 3 (with layer norm)"
    eps: Fraction = values["eps"]
    eps_s = sympy.Rational(eps.numerator, eps.denominator)
    bound = sympy.Rational(1, 4) / sympy.sqrt(sympy.Rational(5, 24) + eps_s)
    claims: list[Claim] = [
        _recognizes(FIRST, ref, backend="interval", cid="recognizes"),
        Bound(
            id="C12",
            statement=f"|final logit| > (1/4)(5/24 + ε)^(−1/2) = {sympy.N(bound, 6)} for |w| ≥ 1",
            reference=ref,
            quantity=Output(),
            absolute=True,
            lower=lambda p: bound,
            strict_lower=True,
            backend="interval",
            min_len=1,
            bound_text="|s̄| > (1/4)(5/24+ε)^(−1/2)",
        ),
    ]
    if values["variant"] == "paper":

        def s_bar(p: Point) -> Any:
            s = sympy.Rational(p.n, 2 * p.n - 1) * (_first_bit(p) - sympy.Rational(1, 2))
            return s * ((1 + s**2) / 6 + eps_s) ** sympy.Rational(-1, 2)

        claims.append(
            ValueIs(
                id="C12-paper",
                statement="the final logit is s̄ = s((1 + s²)/6 + ε)^(−1/2) with s = n/(2n−1)(I − ½) (as printed)",
                reference=ref,
                quantity=Output(),
                expected=s_bar,
                backend="interval",
                min_len=1,
                expected_text="s((1+s²)/6 + ε)^(−1/2)",
            )
        )
    return tuple(claims)


# --------------------------------------------------------------------------- registry


def _c(values: Mapping[str, Any]) -> BaseSpec:
    return values["c"]  # type: ignore[no-any-return]


def _ln_net(base_net: Network, values: Mapping[str, Any]) -> Network:
    return doubled(base_net, eps=values["eps"], mirror=values["variant"] == "fixed")


def _ce_net(base_net: Network, values: Mapping[str, Any], width: int) -> Network:
    return prop2_layer(
        doubled(base_net, eps=0, mirror=values["variant"] == "fixed"),
        _ce_weight(values["eta"], width),
    )


ONE = Param(
    name="c",
    default="1",
    parse=parse_c,
    help="attention constant (the paper uses c = 1 with ln n scaling)",
)

CONSTRUCTIONS: tuple[Construction, ...] = (
    Construction(
        name="rumelhart",
        paper_id=f"{PAPER}.rumelhart_ffnn",
        title="Rumelhart et al.'s FFNN for PARITY on words of one length",
        reference="Chiang & Cholak 2022, §2.1",
        params=(),
        build=lambda values, n: rumelhart_parity(n),
        claims=_rumelhart_claims,
        language=PARITY,
        per_length=True,
        precision=EXTREMES,
    ),
    Construction(
        name="parity",
        paper_id=f"{PAPER}.parity_transformer",
        title="PARITY transformer, no layer norm (Proposition 1)",
        reference="Chiang & Cholak 2022, §2.2",
        params=(C_PARAM, VARIANT),
        build=lambda values: parity_transformer(_c(values)),
        claims=_parity_claims,
        lemmas=_parity_lemmas,
        language=PARITY,
        precision=EXTREMES,
    ),
    Construction(
        name="parity-ln",
        paper_id=f"{PAPER}.parity_transformer_layernorm",
        title="PARITY transformer with layer norm after every residual (§3.1 doubling)",
        reference="Chiang & Cholak 2022, §3.1",
        params=(C_PARAM, EPS_PARAM, VARIANT),
        build=lambda values: _ln_net(parity_transformer(_c(values)), values),
        claims=lambda values: tuple(_ln_claims(PARITY, values, "§3.1")),
        language=PARITY,
        precision=EXTREMES,
    ),
    Construction(
        name="parity-ce",
        paper_id=f"{PAPER}.parity_prop2",
        title="PARITY with layer norm (eps = 0) and Proposition 2's extra layer: cross-entropy ≤ η",
        reference="Chiang & Cholak 2022, §3.2, Proposition 2",
        params=(C_PARAM, ETA_PARAM, VARIANT),
        build=lambda values: _ce_net(parity_transformer(_c(values)), values, 18),
        claims=lambda values: _ce_claims(PARITY, values, 18, "§3.2, Proposition 2"),
        language=PARITY,
        precision=EXTREMES,
    ),
    Construction(
        name="first",
        paper_id=f"{PAPER}.first_transformer",
        title="FIRST transformer, no layer norm",
        reference="Chiang & Cholak 2022, §2.3",
        params=(C_PARAM,),
        build=lambda values: first_transformer(_c(values)),
        claims=_first_claims,
        lemmas=_first_lemmas,
        language=FIRST,
        precision=EXTREMES,
    ),
    Construction(
        name="first-ln",
        paper_id=f"{PAPER}.first_transformer_layernorm",
        title="FIRST transformer with layer norm after every residual (§3.1 doubling)",
        reference="Chiang & Cholak 2022, §3.1",
        params=(C_PARAM, EPS_PARAM, VARIANT),
        build=lambda values: _ln_net(first_transformer(_c(values)), values),
        claims=lambda values: tuple(_ln_claims(FIRST, values, "§3.1")),
        language=FIRST,
        precision=EXTREMES,
    ),
    Construction(
        name="first-ce",
        paper_id=f"{PAPER}.first_prop2",
        title="FIRST with layer norm (eps = 0) and Proposition 2's extra layer: cross-entropy ≤ η",
        reference="Chiang & Cholak 2022, §3.2, Proposition 2",
        params=(C_PARAM, ETA_PARAM, VARIANT),
        build=lambda values: _ce_net(first_transformer(_c(values)), values, 12),
        claims=lambda values: _ce_claims(FIRST, values, 12, "§3.2, Proposition 2"),
        language=FIRST,
        precision=EXTREMES,
    ),
    Construction(
        name="first-flawed",
        paper_id=f"{PAPER}.first_flawed",
        title="the flawed one-layer FIRST transformer: right iff c > ln(n−1)",
        reference="Chiang & Cholak 2022, §4.2",
        params=(C_PARAM,),
        build=lambda values: first_flawed(_c(values)),
        claims=_first_flawed_claims,
        language=FIRST,
        precision=FLAWED_FIRST,
    ),
    Construction(
        name="first-flawed-logn",
        paper_id=f"{PAPER}.first_flawed_logn",
        title="the flawed FIRST transformer with ln n scaled attention (c = 1)",
        reference="Chiang & Cholak 2022, §4.3",
        params=(ONE,),
        build=lambda values: first_flawed(_c(values), log_n=True),
        claims=_first_flawed_logn_claims,
        language=FIRST,
        precision=FLAWED_FIRST,
    ),
    Construction(
        name="first-logn",
        paper_id=f"{PAPER}.first_logn",
        title="FIRST with ln n scaled attention (c = 1), no layer norm (Proposition 3)",
        reference="Chiang & Cholak 2022, §4.3, Proposition 3",
        params=(ONE,),
        build=lambda values: first_transformer(_c(values), log_n=True),
        claims=_first_logn_claims,
        lemmas=_first_lemmas,
        language=FIRST,
        precision=EXTREMES,
    ),
    Construction(
        name="first-ln-logn",
        paper_id=f"{PAPER}.first_ln_logn",
        title="FIRST with ln n scaled attention and layer norm (Proposition 3)",
        reference="Chiang & Cholak 2022, §4.3, Proposition 3",
        params=(ONE, EPS_PARAM, VARIANT),
        build=lambda values: doubled(first_transformer(_c(values), log_n=True), eps=values["eps"]),
        claims=_first_ln_logn_claims,
        language=FIRST,
        precision=EXTREMES,
    ),
)
