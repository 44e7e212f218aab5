"""Chiang & Cholak 2022, *Overcoming a Theoretical Limitation of Self-Attention*: the networks.

Owns the builders of §2.1–§4.2 (Rumelhart's FFNN, the PARITY and FIRST transformers, the flawed
FIRST transformer), §3.1's doubling with layer norm and Proposition 2's extra layer. May import:
the IR and its builders (:mod:`netproof.symbolic`); never the claims, an interpreter or an
engine.

Every network here is written in the paper's notation with exact weights. Conventions (spec
``chiang2022_yao2021.md`` §1–§2): the input is ``CLS · w``, positions i = 0..n−1 with
**n = |w| + 1**, k = number of 1s in w; accept iff σ(s) > ½ iff s > 0.

Softmax made exact (spec §1.1): the paper writes W^Q = c√d·e₃ᵀ and softmax(Kq/√d); the √d
cancels, so the IR writes W^Q = e₃ᵀ and a softmax with base E = e^c. The parameter ``c`` is
either ``ln(r)`` (base E = r, rational: every weight is exact) or a rational ``c`` (base e^c,
transcendental: sympy only).

Errata of the paper, with their counterexamples and the fixes used (each is also a claim, declared
in :mod:`netproof.constructions.chiang2022.claims`, whose ``paper`` variant is refuted):

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
from fractions import Fraction

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
        raise ValueError(
            f"c={text!r} divides by zero; write c as ln(r) or a rational like 1"
        ) from None
    except ValueError as exc:
        if "must be" in str(exc) or "write c" in str(exc):
            raise
        raise ValueError(
            f"c={text!r} is not ln(r) or a rational number; try c=ln(2) or c=1"
        ) from None
    if value <= 0:
        raise ValueError(f"c={text} must be > 0; try c=ln(2) or c=1")
    return BaseSpec(c=value)


def _param_items(**params: object) -> tuple[tuple[str, str], ...]:
    return tuple((k, str(v)) for k, v in params.items())


# --------------------------------------------------------------------------- §2.1


RUMELHART_MAX_N = 512
"""The longest word length :func:`rumelhart_parity` builds for (n² weights: minutes from n ≈ 1000)."""


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
    if n > RUMELHART_MAX_N:
        raise ValueError(
            f"n={n} is over the limit n <= {RUMELHART_MAX_N}: the network has n² weights and takes minutes to build "
            f"from n ≈ 1000; give words of at most {RUMELHART_MAX_N} symbols"
        )
    xs = [f"x{i}" for i in range(1, n + 1)]
    hidden = [f"I[k>={j}]" for j in range(1, n + 1)]
    layer1 = affine(
        {h: dict.fromkeys(xs, 1) for h in hidden},
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
        reference="Chiang & Cholak 2022, §4.3, Proposition 3"
        if log_n
        else "Chiang & Cholak 2022, §2.3",
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


def doubled(
    net: Network, *, eps: Fraction | int | str = 0, mirror: bool = True, name: str | None = None
) -> Network:
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
        emb.alphabet,
        table,
        positional=positional,
        prefix=emb.prefix,
        suffix=emb.suffix,
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


def prop2_layer(
    net: Network, c_prime: Fraction | int | str, *, eps: Fraction | int | str = 0
) -> Network:
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
    rows: dict[str, dict[str, Fraction]] = {
        d: {plus[d]: Fraction(-1), minus[d]: Fraction(1)} for d in dims
    }
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
