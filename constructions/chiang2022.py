"""Chiang & Cholak 2022, *Overcoming a Theoretical Limitation of Self-Attention*: the networks.

Every network here is written in the paper's notation with exact weights. Conventions (spec
``chiang2022_yao2021.md`` §1–§2): the input is ``CLS · w``, positions i = 0..n−1 with
**n = |w| + 1**, k = number of 1s in w; accept iff σ(s) > ½ iff s > 0.

Softmax made exact (spec §1.1): the paper writes W^Q = c√d·e₃ᵀ and softmax(Kq/√d); the √d
cancels, so the IR writes W^Q = e₃ᵀ and a softmax with base E = e^c. The parameter ``c`` is
either ``ln(r)`` (base E = r, rational: every weight is exact) or a rational ``c`` (base e^c,
transcendental: sympy only).

Errata of the paper, with their counterexamples and the fixes used (each is also a claim, declared
at the end of this module, whose ``paper`` variant is refuted):

1. §2.2 closed form: the paper prints s = (−1)^{k+1}(2/n)·tanh c for even n. The network computes
   **(2/n²)·tanh c** (the value I[i=k]/n carries a second 1/n). Counterexample: w = ``1``
   (n = 2, k = 1): s = tanh(c)/2, not tanh c. For odd n the exact form is
   s = (1/n)(E/Z₁ − E⁻¹/Z₂) (k odd) or (1/n)(E⁻¹/Z₁ − E/Z₂) (k even), with n_o = ⌊n/2⌋,
   n_e = ⌈n/2⌉, Z₁ = n_o·E + n_e/E, Z₂ = n_o/E + n_e·E.
2. §2.2/§2.3 "h^{4,n}": the vector read out is at position 0 (CLS), not n.
3. Empty word: PARITY and FIRST give s = 0 exactly (rejected, which is right for PARITY and
   FIRST, with zero margin); Proposition 2's layer norm then computes 0/0, so Prop. 2 holds
   for w ≠ ε only.
4. §3.1 x̄ = [x; 0] must be **x̄ = [x; −x]**: with [x; 0] the activations do not have mean 0, layer
   norm recentres them, and "every layer is [h; −h]" fails on every word (e.g. w = ε). The
   ``paper`` variant of the layer-norm networks builds the literal [x; 0].
5. §3.1's scale-invariance argument covers only uniform rescaling, but layer norm rescales each
   position by its own factor; the construction is still correct (checked exhaustively here, an
   empirical fact for each bound, not a lemma).
6. Prop. 2: the block layout of W̄^{L,2} is garbled (rebuilt below, d = the *doubled* width D̂);
   the cross-entropy is −ln σ(c′√(D̂/2)), not "log σ(…)" (a sign slip: log σ < 0 < η); c′ > 0
   needs η < ln 2.
7. Prop. 3: with c = 1 and ln n scaling, FIRST has 1/4 < |s| ≤ **1/3** for |w| ≥ 1 (the paper's
   ≤ 1/2 is true but loose); with layer norm the paper's s̄ = s((1+s²)/6 + ε)^{−½} is not what
   the network computes (the earlier layer norms rescale the CLS coordinate), though the bound
   (¼)(5/24 + ε)^{−½} still holds.

>>> from netproof.symbolic import pretty
>>> print(pretty(first_transformer()).splitlines()[0])
network first
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy

from netproof.symbolic import (
    FFN,
    RELU,
    STEP,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    FlatEmbedding,
    Head,
    Network,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
    affine,
    classifier,
    constant,
    ffn,
    layernorm,
    token_embedding,
)

__all__ = [
    "CLS",
    "BaseSpec",
    "doubled",
    "first_flawed",
    "first_transformer",
    "parity_transformer",
    "parse_c",
    "prop2_layer",
    "rumelhart_parity",
]

CLS = "CLS"
ALPHABET = ("0", "1")

# Dim names of the paper's coordinates (1-based in the paper).
I0, I1, ICLS = "I[w=0]", "I[w=1]", "I[w=CLS]"


class BaseSpec:
    """The softmax base E = e^c of a network, parsed from the ``c`` parameter.

    >>> BaseSpec.parse("ln(2)").softmax()
    Softmax(r=Fraction(2, 1), c=None, symbol='E')
    >>> BaseSpec.parse("1").softmax()
    Softmax(r=None, c=Fraction(1, 1), symbol='E')
    """

    def __init__(self, *, r: Fraction | None = None, c: Fraction | None = None) -> None:
        self.r, self.c = r, c

    @classmethod
    def parse(cls, text: str) -> BaseSpec:
        return parse_c(text)

    def softmax(self) -> Softmax:
        return Softmax(r=self.r, c=self.c, symbol="E")

    def __str__(self) -> str:
        return f"ln({self.r})" if self.r is not None else str(self.c)


def parse_c(text: str | Fraction | int) -> BaseSpec:
    """Parse the attention constant c: ``ln(r)`` with r > 1 rational, or a rational c > 0.

    >>> str(parse_c("ln(3/2)"))
    'ln(3/2)'
    >>> parse_c("ln(1)")
    Traceback (most recent call last):
      ...
    ValueError: c=ln(1) must be > 0, so r must be > 1 (got r=1); try c=ln(2)
    """
    if isinstance(text, (int, Fraction)):
        value = Fraction(text)
        if value <= 0:
            raise ValueError(f"c={value} must be > 0; try c=ln(2) or c=1")
        return BaseSpec(c=value)
    raw = text.strip().replace(" ", "")
    if "." in raw or "e" in raw.replace("ln(", "("):
        raise ValueError(
            f"c={text!r}: write c as a rational like 1 or 3/2, or as ln(r) with an exact r like ln(5/2); "
            "decimals are refused"
        )
    m = re.fullmatch(r"ln\((.+)\)", raw)
    try:
        if m:
            r = Fraction(m.group(1))
            if r <= 1:
                raise ValueError(f"c={text} must be > 0, so r must be > 1 (got r={r}); try c=ln(2)")
            return BaseSpec(r=r)
        if "." in raw:
            raise ValueError(f"c={text!r}: write c as a rational like 1 or 3/2, or as ln(r)")
        value = Fraction(raw)
    except ZeroDivisionError:
        raise ValueError(f"c={text!r} divides by zero; write c as ln(r) or a rational like 1") from None
    except ValueError as exc:
        if "must be" in str(exc) or "write c" in str(exc):
            raise
        raise ValueError(f"c={text!r} is not ln(r) or a rational number; try c=ln(2) or c=1") from None
    if value <= 0:
        raise ValueError(f"c={text} must be > 0; try c=ln(2) or c=1")
    return BaseSpec(c=value)


def _param_items(**params: object) -> tuple[tuple[str, str], ...]:
    return tuple((k, str(v)) for k, v in params.items())


# --------------------------------------------------------------------------- §2.1


def rumelhart_parity(n: int) -> Network:
    """Rumelhart et al.'s FFNN for PARITY on words of length exactly n (Chiang & Cholak §2.1).

    x_i = I[w_i = 1]; h¹ = H(W¹x + b¹) with W¹ all ones and b¹_j = −(j − ½), so h¹_j = I[k ≥ j];
    y = H(Σ_j (−1)^{j+1} h¹_j − ½) = k mod 2. H(x) = I[x > 0] is the ``step`` activation. The
    readout logit is y − ½ (accept iff y = 1).

    >>> from netproof.symbolic import pretty
    >>> print(pretty(rumelhart_parity(2)), end="")
    network rumelhart
      reference: Chiang & Cholak 2022, §2.1 (Rumelhart et al. 1986)
      params: n=2
      dims: x1 x2 y
      input flat length=2 dims=x1..x2 alphabet=0 1 values: 0->0 1->1
      ffn rumelhart (residual, post_ln=none)
        [0] I[k>=1] := 1*x1 + 1*x2 + -1/2
        [0] I[k>=2] := 1*x1 + 1*x2 + -3/2
        [1] step
        [2] W²h¹+b² := 1*I[k>=1] + -1*I[k>=2] + -1/2
        [3] step
        [4] y := 1*W²h¹+b²
      readout classifier at position 0: accept iff logit > 0
        logit := 1*y + -1/2
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n={n!r} must be an integer >= 0 (the word length)")
    xs = [f"x{i}" for i in range(1, n + 1)]
    hidden = [f"I[k>={j}]" for j in range(1, n + 1)]
    layer1 = affine(
        {h: {x: 1 for x in xs} for h in hidden},
        inputs=xs,
        bias={h: -(Fraction(2 * j - 1, 2)) for j, h in enumerate(hidden, start=1)},
        outputs=hidden,
    )
    layer2 = affine(
        {"W²h¹+b²": {h: (-1) ** (j + 1) for j, h in enumerate(hidden, start=1)}},
        inputs=hidden,
        bias={"W²h¹+b²": Fraction(-1, 2)},
    )
    copy = affine({"y": {"W²h¹+b²": 1}})
    return Network(
        name="rumelhart",
        dims=(*xs, "y"),
        embedding=FlatEmbedding(
            alphabet=ALPHABET, length=n, values=(("0", Fraction(0)), ("1", Fraction(1)))
        ),
        layers=(Sublayer(block=ffn("rumelhart", layer1, STEP, layer2, STEP, copy)),),
        readout=classifier({"y": 1}, bias=Fraction(-1, 2)),
        params=_param_items(n=n),
        reference="Chiang & Cholak 2022, §2.1 (Rumelhart et al. 1986)",
    )


# --------------------------------------------------------------------------- §2.2


def _uniform_query_key() -> tuple[Affine, Affine]:
    """W^Q = W^K = 0: every score is 0, so attention averages uniformly."""
    return constant({"z": 0}), constant({"z": 0})


def parity_transformer(c: str | BaseSpec = "ln(2)") -> Network:
    """The PARITY transformer of Proposition 1 (Chiang & Cholak §2.2), no layer norm. Width 9.

    Layer 1, head 1 (W^Q = W^K = 0, uniform): k/n and 1/n into dims 6, 7 (the paper's second
    head does nothing and is left out). FFN 1: I[i=k]/n = relu(k−i−1) − 2relu(k−i) + relu(k−i+1),
    all over n (Fig. 1). Layer 2: two heads with query c√d·I[w=CLS] and keys ∓cos(iπ), values
    ±I[i=k]/n, summed into s (dim 9). FFN 2 does nothing. Readout: s at position 0.

    Erratum: for even n, s = (−1)^{k+1}(2/n²)tanh c, not (2/n)tanh c (module docstring).

    >>> from netproof.symbolic.exact import run
    >>> run(parity_transformer(), "1").output    # (2/n²)·tanh c = (1/2)(3/5) at n = 2, E = 2
    Fraction(3, 10)
    """
    base = c if isinstance(c, BaseSpec) else parse_c(c)
    dims = (I0, I1, ICLS, "i/n", "cos(iπ)", "k/n", "1/n", "I[i=k]/n", "s")
    emb = token_embedding(
        ALPHABET,
        {"0": {I0: 1}, "1": {I1: 1}, CLS: {ICLS: 1}},
        positional={"i/n": "i/n", "cos(iπ)": "cos(iπ)"},
        prefix=(CLS,),
    )
    q0, k0 = _uniform_query_key()
    count = Head(
        name="count",
        query=q0,
        key=k0,
        value=affine({"k/n": {I1: 1}, "1/n": {ICLS: 1}}),
        normalizer=base.softmax(),
    )
    fig1 = ffn(
        "fig1",
        affine(
            {
                "relu(k-i-1)/n": {"i/n": -1, "k/n": 1, "1/n": -1},
                "relu(k-i)/n": {"i/n": -1, "k/n": 1},
                "relu(k-i+1)/n": {"i/n": -1, "k/n": 1, "1/n": 1},
            },
            inputs=("i/n", "k/n", "1/n"),
        ),
        RELU,
        affine({"I[i=k]/n": {"relu(k-i-1)/n": 1, "relu(k-i)/n": -2, "relu(k-i+1)/n": 1}}),
    )
    heads = tuple(
        Head(
            name=name,
            query=affine({"q": {ICLS: 1}}),
            key=affine({"q": {"cos(iπ)": sign}}),
            value=affine({f"s_{name}": {"I[i=k]/n": -sign}}),
            normalizer=base.softmax(),
        )
        for name, sign in (("odd", -1), ("even", 1))
    )
    parity_heads = AttentionLayer(
        name="parity",
        heads=heads,
        output=affine({"s": {"s_odd": 1, "s_even": 1}}),
    )
    return Network(
        name="parity",
        dims=dims,
        embedding=emb,
        layers=(
            Sublayer(block=AttentionLayer(name="count", heads=(count,))),
            Sublayer(block=fig1),
            Sublayer(block=parity_heads),
            Sublayer(block=FFN(name="ffn2", steps=())),
        ),
        readout=classifier("s", position=0),
        params=_param_items(c=base),
        reference="Chiang & Cholak 2022, §2.2, Proposition 1",
    )


# --------------------------------------------------------------------------- §2.3


def first_transformer(c: str | BaseSpec = "ln(2)", *, log_n: bool = False) -> Network:
    """The FIRST transformer (Chiang & Cholak §2.3). Width 6.

    x_i = (I[w_i=0], I[w_i=1], I[w_i=CLS], I[i=1], 0, 0). Layer 1 does nothing. FFN 1:
    dim 5 = relu(−I[w=0] − I[w=CLS] + I[i=1]) = I[i=1 ∧ w_1=1] (one-hot inputs). Layer 2: query
    c√d·I[w=CLS], key I[i=1], value −½·I[i=1] + dim 5 into s. So s = E/(E+n−1)·(I[w₁=1] − ½)
    for |w| ≥ 1 and s = 0 for the empty word.

    ``log_n=True`` is §4.3's attention (scores times ln n); with c = 1 the base is n and
    s = n/(2n−1)·(I[w₁=1] − ½) (Proposition 3).

    >>> from netproof.symbolic.exact import run
    >>> run(first_transformer(), "10").output
    Fraction(1, 4)
    """
    base = c if isinstance(c, BaseSpec) else parse_c(c)
    dims = (I0, I1, ICLS, "I[i=1]", "I[i=1∧w=1]", "s")
    emb = token_embedding(
        ALPHABET,
        {"0": {I0: 1}, "1": {I1: 1}, CLS: {ICLS: 1}},
        positional={"I[i=1]": "I[i=1]"},
        prefix=(CLS,),
    )
    detect = ffn(
        "first_symbol",
        affine({"h": {I0: -1, ICLS: -1, "I[i=1]": 1}}, inputs=(I0, ICLS, "I[i=1]")),
        RELU,
        affine({"I[i=1∧w=1]": {"h": 1}}),
    )
    look = Head(
        name="look_first",
        query=affine({"q": {ICLS: 1}}),
        key=affine({"q": {"I[i=1]": 1}}),
        value=affine({"s": {"I[i=1]": Fraction(-1, 2), "I[i=1∧w=1]": 1}}),
        normalizer=base.softmax(),
        scale=Scale(log_n=log_n),
    )
    return Network(
        name="first-logn" if log_n else "first",
        dims=dims,
        embedding=emb,
        layers=(
            Sublayer(block=AttentionLayer(name="att1", heads=())),
            Sublayer(block=detect),
            Sublayer(block=AttentionLayer(name="att2", heads=(look,))),
            Sublayer(block=FFN(name="ffn2", steps=())),
        ),
        readout=classifier("s", position=0),
        params=_param_items(c=base, scaling="log_n" if log_n else "none"),
        reference="Chiang & Cholak 2022, §4.3, Proposition 3" if log_n else "Chiang & Cholak 2022, §2.3",
    )


# --------------------------------------------------------------------------- §4.2


def first_flawed(c: str | BaseSpec = "ln(2)", *, log_n: bool = False) -> Network:
    """The flawed one-layer FIRST transformer (Chiang & Cholak §4.2). Width 5.

    Query c√d·I[w=CLS], key I[i=1], value (−½, ½, −½, 0)·x into s: the non-first positions
    are not zeroed out, so s = (E−1)/(E+n−1)·(I[w₁=1] − ½) + (k − n/2)/(E+n−1). It is correct
    on every word of length n−1 iff E > n−1, i.e. c > ln(n−1); at E = n−1 the word 1 0^{n−2}
    gets s = 0. With ``log_n=True`` (§4.3, c = 1) the base is n and it is always correct.

    >>> from netproof.symbolic.exact import run
    >>> run(first_flawed("ln(3)"), "100").accepted    # E = 3 = n − 1: the tight counterexample
    False
    """
    base = c if isinstance(c, BaseSpec) else parse_c(c)
    dims = (I0, I1, ICLS, "I[i=1]", "s")
    emb = token_embedding(
        ALPHABET,
        {"0": {I0: 1}, "1": {I1: 1}, CLS: {ICLS: 1}},
        positional={"I[i=1]": "I[i=1]"},
        prefix=(CLS,),
    )
    look = Head(
        name="look_first",
        query=affine({"q": {ICLS: 1}}),
        key=affine({"q": {"I[i=1]": 1}}),
        value=affine({"s": {I0: Fraction(-1, 2), I1: Fraction(1, 2), ICLS: Fraction(-1, 2)}}),
        normalizer=base.softmax(),
        scale=Scale(log_n=log_n),
    )
    return Network(
        name="first-flawed-logn" if log_n else "first-flawed",
        dims=dims,
        embedding=emb,
        layers=(
            Sublayer(block=AttentionLayer(name="att1", heads=(look,))),
            Sublayer(block=FFN(name="ffn1", steps=())),
        ),
        readout=classifier("s", position=0),
        params=_param_items(c=base, scaling="log_n" if log_n else "none"),
        reference="Chiang & Cholak 2022, §4.3" if log_n else "Chiang & Cholak 2022, §4.2",
    )


# --------------------------------------------------------------------------- §3.1


def neg(dim: str) -> str:
    """The name of the mirrored coordinate −x of ``dim`` in a doubled network."""
    return f"−{dim}"


def _mirror_outputs(a: Affine) -> Affine:
    """[W; −W] and [b; −b]: append a negated row for every output."""
    return Affine(
        inputs=a.inputs,
        outputs=(*a.outputs, *(neg(o) for o in a.outputs)),
        weights=(*a.weights, *(tuple(-w for w in row) for row in a.weights)),
        bias=(*a.bias, *(-b for b in a.bias)),
    )


def doubled(net: Network, *, eps: Fraction | int | str = 0, mirror: bool = True, name: str | None = None) -> Network:
    """Chiang & Cholak §3.1: compute every value x together with −x, and put a layer norm with
    ``eps`` after every residual connection (both sublayers of every layer, no-ops included).

    ``mirror=True`` is the fix x̄ = [x; −x] (every activation then has mean 0 and layer norm only
    rescales); ``mirror=False`` is the paper's literal x̄ = [x; 0]. Attention values and the last
    FFN map get [W; −W] in both cases, queries, keys and the first FFN map read the x half, the
    readout reads [W 0].
    """
    if not isinstance(net.embedding, TokenEmbedding):
        raise ValueError(f"doubled() needs a transformer with a token embedding, got {net.name!r}")
    ln = layernorm(eps)
    emb = net.embedding
    table: dict[str, dict[str, Fraction]] = {}
    for token, row in emb.table:
        entries = dict(row)
        if mirror:
            entries.update({neg(d): -v for d, v in row})
        table[token] = entries
    positional: dict[str, tuple[str, Fraction]] = {}
    for dim, feat, coef in emb.positional:
        positional[dim] = (feat, coef)
        if mirror:
            positional[neg(dim)] = (feat, -coef)
    new_emb = token_embedding(
        emb.alphabet, table, positional=positional, prefix=emb.prefix, suffix=emb.suffix,
        index_base=emb.index_base,
    )
    layers: list[Sublayer] = []
    for sub in net.layers:
        block = sub.block
        if isinstance(block, AttentionLayer):
            if block.output is None:
                heads = tuple(_replace_value(h, _mirror_outputs(h.value)) for h in block.heads)
                new_block: AttentionLayer | FFN = AttentionLayer(name=block.name, heads=heads)
            else:
                new_block = AttentionLayer(
                    name=block.name, heads=block.heads, output=_mirror_outputs(block.output)
                )
        elif isinstance(block, Convolution):
            raise ValueError(
                f"doubled: block {block.name!r} is a convolution; §3.1's doubling is written for attention "
                "and FFN blocks only"
            )
        else:
            if block.steps:
                last = block.steps[-1]
                assert isinstance(last, Affine)  # FFN validates its last step
                new_block = FFN(name=block.name, steps=(*block.steps[:-1], _mirror_outputs(last)))
            else:
                new_block = block
        layers.append(Sublayer(block=new_block, residual=sub.residual, post_ln=ln))
    dims = (*net.dims, *(neg(d) for d in net.dims))
    suffix = "-ln" if mirror else "-ln-paper"
    return Network(
        name=name or f"{net.name}{suffix}",
        dims=dims,
        embedding=new_emb,
        layers=tuple(layers),
        readout=net.readout,
        params=(*net.params, ("eps", str(Fraction(eps))), ("x̄", "[x;−x]" if mirror else "[x;0]")),
        reference=f"{net.reference}; §3.1 (layer norm)",
    )


def _replace_value(h: Head, value: Affine) -> Head:
    return dataclasses.replace(h, value=value)


# --------------------------------------------------------------------------- §3.2


def prop2_layer(net: Network, c_prime: Fraction | int | str, *, eps: Fraction | int | str = 0) -> Network:
    """Proposition 2: append a layer that maps the logit s to [s; −s; 0…], normalize it with
    eps = 0 to [±√(D̂/2); ∓√(D̂/2); 0…], and read c′ times the first coordinate.

    ``net`` must be a doubled network (§3.1) with eps = 0; D̂ is its width. The new layer's
    attention does nothing; its FFN is W̄^{L,1} = [I; −I] (hidden relu(h), relu(−h)) and W̄^{L,2}
    = [−I, I] plus [W^L, −W^L] on row 1 and [−W^L, W^L] on row 2 (the paper's layout, rebuilt),
    bias [b^L; −b^L; 0]. Undefined on the empty word (s = 0 there, and LN computes 0/0).

    At every position but CLS the query of layer 2 is 0, so s = 0 there too and this layer's
    layer norm divides 0 by 0. Those positions are never read (the readout reads position 0 and
    every block after the last attention layer is position-wise), so the interpreters leave them
    undefined (``None`` in traces) instead of failing; PyTorch would put NaN there.

    ``eps`` is the new layer's layer-norm ε (Proposition 2 needs 0, the default). Figure 2's
    "ε = 10⁻⁵" curve puts that ε in every layer norm, this one included (spec §2.8): the
    normalized logit then shrinks with |s| ≈ 2/n², which is why its cross-entropy grows with n.
    """
    if not isinstance(net.readout, Classifier):
        raise ValueError("prop2_layer needs a classifier network")
    c_prime = Fraction(c_prime)
    dims = net.dims
    logit = net.readout.logit
    w_l = dict(zip(logit.inputs, logit.weights[0], strict=True))
    b_l = logit.bias[0]
    plus = {d: f"relu({d})" for d in dims}
    minus = {d: f"relu(−({d}))" for d in dims}
    w1 = affine(
        {**{plus[d]: {d: 1} for d in dims}, **{minus[d]: {d: -1} for d in dims}},
        inputs=dims,
    )
    rows: dict[str, dict[str, Fraction]] = {d: {plus[d]: Fraction(-1), minus[d]: Fraction(1)} for d in dims}
    first, second = dims[0], dims[1]
    for d, w in w_l.items():
        rows[first][plus[d]] = rows[first].get(plus[d], Fraction(0)) + w
        rows[first][minus[d]] = rows[first].get(minus[d], Fraction(0)) - w
        rows[second][plus[d]] = rows[second].get(plus[d], Fraction(0)) - w
        rows[second][minus[d]] = rows[second].get(minus[d], Fraction(0)) + w
    w2 = affine(rows, inputs=(*plus.values(), *minus.values()), bias={first: b_l, second: -b_l})
    ln0 = layernorm(Fraction(eps))
    layers = (
        *net.layers,
        Sublayer(block=AttentionLayer(name="prop2_att", heads=()), post_ln=ln0),
        Sublayer(block=ffn("prop2_ffn", w1, RELU, w2), post_ln=ln0),
    )
    return Network(
        name=f"{net.name}-ce",
        dims=dims,
        embedding=net.embedding,
        layers=layers,
        readout=classifier({first: c_prime}),
        params=(*net.params, ("c′", str(c_prime))),
        reference=f"{net.reference}; §3.2, Proposition 2",
    )




# =========================================================================== claims
#
# The paper's claims as data (spec §2.9, C1–C13). Each construction's ``claims(params)`` returns
# the fixed statements by default and the paper's literal statements for ``variant=paper``.

from netproof.verifier.claims import (  # noqa: E402  (claims come after the networks they speak of)
    VARIANT,
    BlockIdentity,
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

from netproof.verifier.claims.languages import FIRST, PARITY  # noqa: E402

PAPER = "chiang2022"


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
        raise ValueError(f"eta={eta} must satisfy 0 < eta < ln 2 ≈ 0.693 (c′ > 0 needs it); try eta=1/10")
    return eta


ETA_PARAM = Param(
    name="eta",
    default="1/10",
    parse=_parse_eta,
    help="target cross-entropy η (nats), 0 < η < ln 2; c′ is the next 1/1000 above the paper's value",
)


def _recognizes(lang: Any, ref: str, *, backend: str = "exact", max_len: int = 10, min_len: int = 0,
                cid: str = "recognizes") -> Recognizes:
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
    return (
        _recognizes(PARITY, "§2.1", max_len=12, cid="C1"),
    )


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
            outputs={"I[i=k]/n": sympy.Piecewise((1, sympy.Eq(sympy.Symbol("i"), sympy.Symbol("k"))), (0, True))},
            variables=("i", "k"),
        ),
        ValueIs(
            id="C3-count",
            statement="layer 1 writes k/n and 1/n at every position",
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
            expected=lambda p: 0 if p.n == 1 else p.E / (p.E + p.n - 1) * (_first_bit(p) - sympy.Rational(1, 2)),
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
            expected=lambda p: (p.E - 1) / (p.E + p.n - 1) * (_first_bit(p) - sympy.Rational(1, 2))
            + (_k(p) - sympy.Rational(p.n, 2)) / (p.E + p.n - 1),
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
            expected=lambda p: Fraction(p.n - 1, 2 * p.n - 1) * (_first_bit(p) - Fraction(1, 2))
            + (_k(p) - Fraction(p.n, 2)) / (2 * p.n - 1),
            expected_text="(n−1)/(2n−1)(I − ½) + (k − n/2)/(2n−1)",
            closed_form=(_N - 1) / (2 * _N - 1) * (_W1 - sympy.Rational(1, 2)) + (_K - _N / 2) / (2 * _N - 1),
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
        "every s > 0 (and minus that for s < 0): independent of n",
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
    return prop2_layer(doubled(base_net, eps=0, mirror=values["variant"] == "fixed"), _ce_weight(values["eta"], width))


ONE = Param(name="c", default="1", parse=parse_c, help="attention constant (the paper uses c = 1 with ln n scaling)")

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
    ),
    Construction(
        name="first",
        paper_id=f"{PAPER}.first_transformer",
        title="FIRST transformer, no layer norm",
        reference="Chiang & Cholak 2022, §2.3",
        params=(C_PARAM,),
        build=lambda values: first_transformer(_c(values)),
        claims=_first_claims,
        language=FIRST,
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
    ),
    Construction(
        name="first-logn",
        paper_id=f"{PAPER}.first_logn",
        title="FIRST with ln n scaled attention (c = 1), no layer norm (Proposition 3)",
        reference="Chiang & Cholak 2022, §4.3, Proposition 3",
        params=(ONE,),
        build=lambda values: first_transformer(_c(values), log_n=True),
        claims=_first_logn_claims,
        language=FIRST,
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
    ),
)
