"""Next-symbol sets for every length from the positions' stack depths (:func:`prove_allowed_next`):
a generator of a :class:`~netproof.verifier.claims.StackAutomaton` language whose every
position's state, proved block by block, is a function of a few finite features of the prefix
read so far (its stack height h, its stack top, its own token), so that the claim
:class:`~netproof.verifier.claims.AllowedNext` for every length is a finite check over those
features.

The lemmas, each for every length (derived from the network, not declared):

1. **Uniform prefix average.** An attention head whose key is a constant vector gives every
   visible position the same score, so a causal head averages its values over the positions
   j <= i: (1/c_i)·Σ_j V(x_j), c_i the number of positions so far. Where V reads only the
   token embedding, is the same vector Δ for every push symbol and −Δ for every pop symbol, the
   sum is V(start) + h_i·Δ: the head writes (V(start) + h_i·Δ)/c_i ("scaled by the count").
2. **Scale-free feed-forward block.** An affine map without bias of scaled dims stays scaled,
   ReLU keeps the scale (positive homogeneity), and layer norm with ε = 0 of scaled dims drops
   it (LN(z/c) = LN(z) for c > 0): its outputs are functions of h_i alone.
3. **Nearest same-depth push.** A hardmax causal head whose query reads only dims that are
   functions of h_i and whose key reads functions of (h_j, token j) and one feature i/n, scores
   key j at A(h_i; h_j, token j) + β(h_i)·j/n. For every h_i, every realizable key (the start
   token at height 0, a push at 1..D, a pop at 0..D−1): where the key is a push (or the start
   token) at height h_i ("preferred") A is one value A*, and every other key has
   A* − A >= β > 0. Since |j − j'|/n < 1, the head then selects exactly one position, the
   latest preferred one, for every n; in a prefix of a stack language that is the push of the
   stack top (the start token when the stack is empty): a later push at height h_i would be
   above it, and a push at that height under it is matched before i. The comparisons are of
   exact algebraic numbers (the sympy interpreter's values), decided by rigorous intervals (the
   interval interpreter's values) and, where an interval holds 0, by the minimal polynomial.
4. **Finite readout check.** Every later block reads only functions of (h_i, the top's token,
   token i); for each realizable combination one short prefix that ends in it is run exactly
   (the interval interpreter), and its last next-symbol set must be the allowed one.

The length-aware form (``AllowedNext(length_aware=True)``: words γuω, the allowed set one that
still fits the length n) adds one lemma and one dimension to the check:

5. **Length features.** Affine maps of the positional features i/n and 1/n (and a bias) are
   (a_i·i + a_n·n + a_1)/n; where a_i = −a_n for every dim of a layer norm with ε = 0, they are
   (a_n·(n − i) + a_1)/n and the layer norm drops the 1/n: its outputs are functions of
   m = n − i alone.
6. **Readout over m.** The state after the selection layer is then a function of (h_i, top,
   token i) but for those functions of m; the later blocks (FFNs only) and the readout are
   evaluated in rigorous intervals on the representative's state with the functions of m
   computed at the fictitious position i = 0, n = m (the same vector up to m/n > 0): for each m
   below M that fits the height (m >= h + 1, m − 1 − h even) at the point 1/m, and for every
   m >= M at once with 1/m the interval [0, 1/M] (M from D + 3, doubled while undecided). Each
   must give the set that still fits the length.

Any other shape (a soft or scaled selection head, a positional feature other than i/n and 1/n,
a layer norm with ε > 0, a value that mixes the count scale or the length with anything else,
suffix tokens, several prefix tokens, a readout that depends on n − i under a claim that is not
length-aware) is :class:`Unsupported`: no verdict. A readout mismatch on a representative word
is a genuine violation (``violated``): the caller looks for the shortlex-first violating word.

Lemmas 1, 2 and 5 are structural (the class of every dim, from the IR); lemma 3's comparisons
are decided exactly and then stated as one z3 query (``QF_NRA``, each square root a variable r
with r >= 0 and r² = w), which the proof log keeps and ``recheck`` re-solves; lemmas 4 and 6
are runs of the interval interpreter. A proof log's freshness check rebuilds the whole tree
(:func:`depth_feature_tree`).

May import: :mod:`netproof.symbolic` (the IR and the sympy and interval interpreters), the claims
vocabulary, the solver interface's :class:`~netproof.verifier.smtlib.LemmaNode`,
:mod:`netproof.verifier.smt.errors` and :mod:`.lemmas`; sympy inside functions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from netproof.symbolic import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    NextSymbols,
    Scale,
    TokenEmbedding,
)
from netproof.symbolic.errors import SymbolicError
from netproof.symbolic.evaluation import UndecidedSignError
from netproof.verifier.claims import (
    AllowedNext,
    Proved,
    StackAutomaton,
    TraceProperty,
    Unknown,
    Verdict,
)
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .lemmas import METHOD

__all__ = ["DepthOutcome", "allowed_next_detail", "depth_feature_tree", "prove_allowed_next"]

# A dim's sources: "tok" (token i's embedding), "depth" (h_i), "top" (the stack top's token),
# "pos" (a positional feature), "scaled" (a function of h_i divided by the count c_i, alone),
# "const" (a nonzero constant), "other" (anything else: a mix of the count scale with other
# values); no source at all: the dim is 0.
Sources = frozenset[str]
_KAPPA = frozenset({"tok", "depth", "top", "const", "rem"})


@dataclass(frozen=True, slots=True)
class DepthOutcome:
    """What :func:`prove_allowed_next` found: the verdict (Proved for every length, or Unknown),
    the lemma tree, and ``violated`` where a prefix breaks the claim (its word in ``word``)."""

    verdict: Verdict
    tree: LemmaNode
    violated: bool = False
    word: tuple[str, ...] | None = None


@dataclass
class _Shape:
    """The network read as depth features: the classes of every dim, the uniform heads, the
    selection head and the state label before it."""

    sources: dict[str, Sources]
    uniform: list[str] = field(default_factory=list)
    selection: Head | None = None
    selection_layer: str = ""
    before_selection: str = ""
    pos_dims: dict[str, Fraction] = field(default_factory=dict)
    readout_sources: Sources = frozenset()
    scale_free: list[str] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    vec: dict[str, tuple[Fraction, Fraction, Fraction]] = field(default_factory=dict)
    rem_ffn: int | None = None  # the sublayer whose layer norm makes functions of n − i
    selection_index: int | None = None
    at_selection: dict[str, Sources] = field(default_factory=dict)


def _reads(aff: Affine) -> list[str]:
    return [d for j, d in enumerate(aff.inputs) if any(row[j] != 0 for row in aff.weights)]


def _union(parts: Sequence[Sources]) -> Sources:
    out: set[str] = set()
    for p in parts:
        out |= p
    return frozenset(out)


Vec = tuple[Fraction, Fraction, Fraction]


def _affine_sources(
    aff: Affine, env: Mapping[str, Sources], vec: dict[str, Vec]
) -> dict[str, Sources]:
    """The sources of each output; an output of positional dims alone (and a bias) keeps its
    form (a_i·i + a_n·n + a_1)/n in ``vec``."""
    out: dict[str, Sources] = {}
    for o, row, b in zip(aff.outputs, aff.weights, aff.bias, strict=True):
        terms = [(d, w) for d, w in zip(aff.inputs, row, strict=True) if w != 0]
        ins = [env.get(d, frozenset()) for d, _w in terms]
        if any("scaled" in s for s in ins):
            pure = all(s <= {"scaled"} for s in ins) and b == 0
            out[o] = frozenset({"scaled"}) if pure else frozenset({"other"})
        elif any("pos" in s for s in ins):
            if all(
                s <= {"pos"} and (not s or d in vec) for s, (d, _w) in zip(ins, terms, strict=True)
            ):
                z = Fraction(0)
                parts = [vec.get(d, (z, z, z)) for d, _w in terms]
                vec[o] = (
                    sum((w * v[0] for (_d, w), v in zip(terms, parts, strict=True)), z),
                    b + sum((w * v[1] for (_d, w), v in zip(terms, parts, strict=True)), z),
                    sum((w * v[2] for (_d, w), v in zip(terms, parts, strict=True)), z),
                )
                out[o] = frozenset({"pos"})
            else:
                out[o] = frozenset({"other"})
        else:
            out[o] = _union(ins) | (frozenset({"const"}) if b != 0 else frozenset())
    return out


def _stack_of(language: object) -> StackAutomaton:
    stack = getattr(language, "stack", None)
    if not isinstance(stack, StackAutomaton):
        raise Unsupported(
            f"language {getattr(language, 'name', language)!r} gives no StackAutomaton"
        )
    return stack


def _embedding(net: Network) -> TokenEmbedding:
    emb = net.embedding
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported("the network has no token embedding")
    if len(emb.prefix) != 1 or emb.suffix:
        raise Unsupported(
            f"prefix={emb.prefix}, suffix={emb.suffix}: depth features need exactly one prefix token (the start) and no suffix"
        )
    return emb


def _row(emb: TokenEmbedding, token: str) -> dict[str, Fraction]:
    return dict(dict(emb.table)[token])


def analyse(net: Network, stack: StackAutomaton, alphabet: Sequence[str]) -> _Shape:
    """The network's dims classified by what they are functions of (lemmas 1–3's shapes);
    :class:`Unsupported` where a block does not fit."""
    emb = _embedding(net)
    if not isinstance(net.readout, NextSymbols):
        raise Unsupported("the readout is not a NextSymbols readout")
    sources: dict[str, Sources] = {d: frozenset() for d in net.dims}
    for _tok, row in emb.table:
        for d, v in row:
            if v != 0:
                sources[d] = sources[d] | {"tok"}
    shape = _Shape(sources)
    z = Fraction(0)
    for d, feat, coef in emb.positional:
        if feat not in ("i/n", "1/n") or d in shape.vec:
            raise Unsupported(
                f"positional feature {feat!r} of dim {d!r}: depth features cover one i/n or 1/n per dim"
            )
        sources[d] = sources[d] | {"pos"}
        shape.vec[d] = (coef, z, z) if feat == "i/n" else (z, z, coef)
        if feat == "i/n":
            shape.pos_dims[d] = coef
    written = shape.written
    labels = ["input"]
    for index, sub in enumerate(net.layers):
        if sub.post_ln is not None or not sub.residual:
            raise Unsupported(
                f"sublayer {sub.block.name!r} has a post layer norm or no residual connection"
            )
        block = sub.block
        new: dict[str, Sources] = {}
        if isinstance(block, AttentionLayer):
            if block.output is not None:
                raise Unsupported(f"attention layer {block.name!r} has an output map")
            for head in block.heads:
                new |= _head_sources(net, emb, stack, alphabet, block.name, head, shape, labels[-1])
        elif isinstance(block, FFN):
            new = _ffn_sources(block, sources, shape, index)
        else:
            raise Unsupported(
                f"block {block.name!r} ({type(block).__name__}) is not an attention layer or an FFN"
            )
        for d, s in new.items():
            sources[d] = sources[d] | s
            written.add(d)
        labels.append(block.name)
        if shape.selection is not None and shape.selection_index is None:
            shape.selection_index = index
            shape.at_selection = dict(sources)
    readout = net.readout
    assert isinstance(readout, NextSymbols)
    shape.readout_sources = _union([sources[d] for _s, d in readout.scores])
    if not shape.readout_sources <= _KAPPA:
        raise Unsupported(
            f"the readout's scores depend on {sorted(shape.readout_sources - _KAPPA)}, not only on the depth, the stack top and the token"
        )
    for d in shape.pos_dims:
        if d in written:
            raise Unsupported(f"positional dim {d!r} is written by a block")
    return shape


def _head_sources(
    net: Network,
    emb: TokenEmbedding,
    stack: StackAutomaton,
    alphabet: Sequence[str],
    layer: str,
    head: Head,
    shape: _Shape,
    before: str,
) -> dict[str, Sources]:
    src = shape.sources
    if (
        head.relative_bias is not None
        or head.query_conv is not None
        or head.key_conv is not None
        or head.scoring != "dot"
    ):
        raise Unsupported(
            f"head {layer}.{head.name} has relative positions or a scoring other than dot"
        )
    if head.mask != "causal":
        raise Unsupported(
            f"head {layer}.{head.name} has mask {head.mask!r}; depth features need 'causal'"
        )
    value_reads = _reads(head.value)
    if not _reads(head.key):
        # lemma 1: equal scores everywhere, so the head averages over j <= i
        if isinstance(head.normalizer, Hardmax) and head.normalizer.tie != "average":
            raise Unsupported(
                f"head {layer}.{head.name}: a constant score with tie rule {head.normalizer.tie!r} selects one position"
            )
        bad = [d for d in value_reads if src[d] != frozenset({"tok"}) or d in shape.written]
        if bad:
            raise Unsupported(
                f"uniform head {layer}.{head.name} averages dims {bad}, which are not token embedding dims"
            )
        value = {t: _apply(head.value, _row(emb, t)) for t in (*emb.prefix, *alphabet)}
        pushes = [value[a] for i, a in enumerate(alphabet) if stack.push[i] is not None]
        pops = [value[a] for i, a in enumerate(alphabet) if stack.pop[i] is not None]
        if any(v != pushes[0] for v in pushes) or any(v != pops[0] for v in pops):
            raise Unsupported(
                f"uniform head {layer}.{head.name} gives push symbols (or pop symbols) different values"
            )
        if any(pushes[0][d] + pops[0][d] != 0 for d in head.value.outputs):
            raise Unsupported(
                f"uniform head {layer}.{head.name}: a push and a pop do not cancel ({pushes[0]} + {pops[0]} != 0), so its sum is no function of the height"
            )
        shape.uniform.append(f"{layer}.{head.name}")
        return {d: frozenset({"scaled"}) for d in head.value.outputs}
    # lemma 3's shape: a hardmax head that picks the nearest push at the query's depth
    if (
        not isinstance(head.normalizer, Hardmax)
        or head.scale != Scale(coef=head.scale.coef)
        or head.scale.coef <= 0
    ):
        raise Unsupported(
            f"head {layer}.{head.name} is soft or scaled with the length; depth features need hardmax with a constant positive scale"
        )
    if shape.selection is not None:
        raise Unsupported(
            f"head {layer}.{head.name} is a second selection head; depth features cover one"
        )
    for d in _reads(head.query):
        if not src[d] <= {"depth", "const"}:
            raise Unsupported(
                f"head {layer}.{head.name}'s query reads {d!r}, which is not a function of the depth alone ({sorted(src[d])})"
            )
    for d in _reads(head.key):
        if not src[d] <= {"tok", "depth", "const"} and not (
            src[d] == frozenset({"pos"}) and d in shape.pos_dims
        ):
            raise Unsupported(f"head {layer}.{head.name}'s key reads {d!r} ({sorted(src[d])})")
    for d in value_reads:
        if not src[d] <= {"tok", "depth", "const"}:
            raise Unsupported(f"head {layer}.{head.name}'s value reads {d!r} ({sorted(src[d])})")
    shape.selection, shape.selection_layer, shape.before_selection = head, layer, before
    out: Sources = frozenset({"top"}) | (
        frozenset({"depth"}) if any("depth" in src[d] for d in value_reads) else frozenset()
    )
    return dict.fromkeys(head.value.outputs, out)


def _ffn_sources(
    block: FFN, sources: Mapping[str, Sources], shape: _Shape, index: int
) -> dict[str, Sources]:
    env: dict[str, Sources] = dict(sources)
    vec = {d: v for d, v in shape.vec.items() if sources[d] == frozenset({"pos"})}
    dropped = False
    for step in block.steps:
        match step:
            case Affine():
                env = _affine_sources(step, env, vec)
            case LayerNorm():
                names = list(env) if step.over is None else list(step.over)
                group = [env.get(d, frozenset()) for d in names]
                if step.eps == 0 and all(s <= {"scaled"} for s in group) and any(group):
                    out: Sources = frozenset({"depth"})  # lemma 2: LN(z/c) = LN(z)
                    dropped = True
                elif (
                    step.eps == 0
                    and any(group)
                    and all(s <= {"pos"} for s in group)
                    and all(vec[d][0] == -vec[d][1] for d, s in zip(names, group, strict=True) if s)
                ):
                    # (a_n·(n − i) + a_1)/n for every dim: LN drops the 1/n, a function of n − i
                    out = frozenset({"rem"})
                    if shape.rem_ffn not in (None, index):
                        raise Unsupported(
                            f"FFN {block.name!r} is a second block with functions of n − i"
                        )
                    shape.rem_ffn = index
                elif any("scaled" in s or "pos" in s for s in group):
                    out = frozenset({"other"})
                else:
                    out = _union(group)
                env = {**env, **dict.fromkeys(names, out)}
            case Activation():
                # ReLU keeps the count scale (positive homogeneity); no activation keeps a linear form in (i, n)
                env = {
                    d: (
                        frozenset({"other"})
                        if ("scaled" in s and step.kind != "relu") or "pos" in s
                        else s
                    )
                    for d, s in env.items()
                }
            case _:
                raise Unsupported(f"FFN {block.name!r} has a step {type(step).__name__}")
    if dropped:
        shape.scale_free.append(block.name)
    written = block.steps[-1].outputs if block.steps and isinstance(block.steps[-1], Affine) else ()
    if block.steps and not isinstance(block.steps[-1], Affine):
        raise Unsupported(f"FFN {block.name!r} does not end with an affine map")
    return {d: env[d] for d in written}


def _iv(q: Fraction) -> Any:
    from mpmath import iv

    return iv.mpf(q.numerator) / iv.mpf(q.denominator)


def _apply(aff: Affine, x: Mapping[str, Any], conv: Any = None) -> dict[str, Any]:
    """The affine map on ``x`` (sympy values, or mpmath intervals with ``conv=_iv``)."""
    c = conv or (lambda q: q)
    out: dict[str, Any] = {}
    for o, row, b in zip(aff.outputs, aff.weights, aff.bias, strict=True):
        total: Any = c(b)
        for d, w in zip(aff.inputs, row, strict=True):
            if w != 0:
                total = total + c(w) * x.get(d, 0)
        out[o] = total
    return out


def _representative(
    stack: StackAutomaton, alphabet: Sequence[str], h: int, last: str | None, top: str | None
) -> tuple[str, ...]:
    """A prefix of a word of the language whose last token is ``last`` (None: the start token)
    and whose stack after it has height ``h`` and top pushed by ``top`` (None: empty)."""
    if last is None:
        return ()
    i = alphabet.index(last)
    if stack.push[i] is not None:
        return (last,) * h  # so that the prefixes of one word cover every height
    opener = next(a for j, a in enumerate(alphabet) if stack.push[j] == stack.pop[i])
    under: tuple[str, ...] = ()
    if h > 0:
        assert top is not None  # a non-empty stack has a top
        under = (top,) * h
    return (*under, opener, last)


def _allowed(
    stack: StackAutomaton, alphabet: Sequence[str], word: Sequence[str]
) -> tuple[set[str], bool]:
    """The symbols the stack allows after ``word`` (a prefix of a word of the language), and
    whether the word may end there."""
    types: list[int] = []
    for a in word:
        i = alphabet.index(a)
        pushed = stack.push[i]
        if pushed is not None:
            types.append(pushed)
        else:
            types.pop()
    out = {
        a for i, a in enumerate(alphabet) if stack.push[i] is not None and len(types) < stack.depth
    }
    out |= {
        a
        for i, a in enumerate(alphabet)
        if stack.pop[i] is not None and types and stack.pop[i] == types[-1]
    }
    return out, not types


def _exact(x: Any) -> Any:
    """A Fraction or a sympy number as a sympy number."""
    import sympy

    return (
        sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sympy.sympify(x)
    )


def _is_zero(expr: Any) -> bool:
    import sympy

    x = sympy.Symbol("x")
    return bool(sympy.minimal_polynomial(_exact(expr), x) == x)


def _sign(sym: Any, ivl: Any) -> int | None:
    """The sign of an exact algebraic number (sympy) given with a rigorous enclosure (mpmath iv):
    1, -1, 0, or None where neither decides."""
    if ivl.a > 0:
        return 1
    if ivl.b < 0:
        return -1
    try:
        return 0 if _is_zero(sym) else None
    except (NotImplementedError, ValueError):
        return None


def _groups(
    emb: TokenEmbedding, shape: _Shape, dims: Sequence[str], tokens: Sequence[str]
) -> dict[tuple[Any, ...], list[str]]:
    """``tokens`` grouped by their embedding rows on ``dims`` (on every dim where one of
    ``dims`` is written by a block: the block may read any of them)."""
    if any(d in shape.written for d in dims):
        dims = [d for d in shape.sources if d not in shape.pos_dims]
    groups: dict[tuple[Any, ...], list[str]] = {}
    for t in tokens:
        row = _row(emb, t)
        groups.setdefault(tuple(row.get(d, Fraction(0)) for d in dims), []).append(t)
    return groups


def prove_allowed_next(
    net: Network, claim: TraceProperty, hi: int, *, timeout: float = 60.0
) -> DepthOutcome:
    """``claim`` (an :class:`AllowedNext` trace property) for every length from the lemmas
    above; Unknown where the network does not fit their shapes, a comparison is undecided, or
    time runs out."""
    started = time.perf_counter()
    assert isinstance(claim.statable, AllowedNext)
    statement = claim.statement + f" (every word with {claim.min_len} <= |w| <= {hi})"
    try:
        nodes, word = _lemmas(net, claim.statable, deadline=started + timeout)
    except Unsupported as exc:
        tree = LemmaNode(name=claim.id, statement=statement, verdict="unknown")
        return DepthOutcome(Unknown(METHOD, f"unsupported: {exc}"), tree)
    except TimeoutError as exc:
        tree = LemmaNode(name=claim.id, statement=statement, verdict="unknown")
        return DepthOutcome(Unknown(METHOD, f"timeout: {exc}"), tree)
    except (
        SymbolicError,
        ArithmeticError,
    ) as exc:  # an interval that holds 0, a layer norm of a constant vector
        tree = LemmaNode(name=claim.id, statement=statement, verdict="unknown")
        return DepthOutcome(
            Unknown(
                METHOD, f"undecided: a representative prefix cannot be evaluated exactly ({exc})"
            ),
            tree,
        )
    bad = [n for n in nodes if n.verdict != "proved"]
    if bad or word is not None:
        tree = LemmaNode(
            name=claim.id, statement=statement, verdict="unknown", children=tuple(nodes)
        )
        if word is not None:
            return DepthOutcome(
                Unknown(
                    METHOD,
                    f"the prefix {repr(''.join(word)) if ''.join(word) else 'ε'} breaks the claim (of some length)",
                ),
                tree,
                True,
                word,
            )
        return DepthOutcome(
            Unknown(METHOD, f"lemma {bad[0].name!r} is {bad[0].verdict}: {bad[0].statement}"), tree
        )
    side = LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where its shape holds, at every position of every length: the dims each block "
        "reads were classified from the network (token, stack height, stack top, count-scaled, positional), and every block "
        "that reads count-scaled or positional dims is one of the lemmas' shapes",
        verdict="proved",
    )
    tree = LemmaNode(name=claim.id, statement=statement, verdict="proved", children=(*nodes, side))
    k = len(net.embedding.alphabet)
    checked = sum(k**m for m in range(claim.min_len, hi + 1))
    return DepthOutcome(Proved(METHOD, checked, allowed_next_detail(claim, hi)), tree)


def allowed_next_detail(claim: TraceProperty, hi: int) -> str:
    """The detail of a proof of ``claim`` for every length (the proof log checks it)."""
    return (
        f"every word with {claim.min_len} <= |w| <= {hi}, and every longer one: every position's state proved a function of its "
        "stack height, its stack top and its token (a uniform prefix average, a scale-free layer norm, a nearest same-depth "
        "selection, each for every length by exact arithmetic), then one representative prefix per combination run exactly"
    )


def depth_feature_tree(net: Network, claim: TraceProperty) -> tuple[LemmaNode, ...]:
    """The lemma nodes of a proof of ``claim`` rebuilt (deterministic: the proof log's freshness
    check compares them)."""
    assert isinstance(claim.statable, AllowedNext)
    nodes, _word = _lemmas(net, claim.statable, deadline=None)
    return tuple(nodes)


def _lemmas(
    net: Network, watch: AllowedNext, *, deadline: float | None
) -> tuple[list[LemmaNode], tuple[str, ...] | None]:
    from netproof.symbolic import interval, sympy_interp

    def tick() -> None:
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeoutError("the depth features' checks ran out of time")

    stack = _stack_of(watch.language)
    alphabet = tuple(watch.language.alphabet)
    emb = _embedding(net)
    if not set(alphabet) <= set(emb.alphabet):
        raise Unsupported(
            f"the language's symbols {alphabet} are not all the network's {emb.alphabet}"
        )
    shape = analyse(net, stack, alphabet)
    D = stack.depth
    readout = net.readout
    assert isinstance(readout, NextSymbols)
    nodes: list[LemmaNode] = []
    for name in shape.uniform:
        nodes.append(
            LemmaNode(
                name=f"uniform {name}",
                statement=f"head {name} has a constant key, so at every position i of every length it averages its values over the "
                "positions j <= i; its value is the same vector for every push symbol and its negation for every pop symbol, so it "
                "writes (V(start) + h_i·Δ)/c_i, c_i the number of positions so far",
                verdict="proved",
            )
        )
    for name in shape.scale_free:
        nodes.append(
            LemmaNode(
                name=f"scale-free {name}",
                statement=f"FFN {name} feeds the dims scaled by 1/c_i through bias-free affine maps and ReLU into a layer norm with "
                "ε = 0, which is invariant under positive scaling: its outputs are functions of h_i alone",
                verdict="proved",
            )
        )
    if shape.rem_ffn is not None:
        name = net.layers[shape.rem_ffn].block.name
        nodes.append(
            LemmaNode(
                name=f"length features {name}",
                statement=f"FFN {name} feeds positional dims (a_i·i + a_n·n + a_1)/n with a_i = −a_n, i.e. (a_n·(n − i) + a_1)/n, through "
                "bias-free affine maps into a layer norm with ε = 0, which drops the positive factor: its outputs are functions of n − i alone",
                verdict="proved",
            )
        )
    pushes = [a for i, a in enumerate(alphabet) if stack.push[i] is not None]
    pops = [a for i, a in enumerate(alphabet) if stack.pop[i] is not None]
    start = emb.prefix[0]

    def run_both(word: tuple[str, ...]) -> tuple[Any, Any]:
        tick()
        return sympy_interp.run(net, word), interval.run(net, word)

    head = shape.selection
    if head is not None:
        before = shape.before_selection
        key_dims = _reads(head.key)
        tok_dims = [d for d in key_dims if d not in shape.pos_dims and "tok" in shape.sources[d]]
        # realizable keys: (height, token group); a group's tokens look the same to the key
        keys: list[tuple[int, str, bool]] = [
            (0, start, True)
        ]  # (h, representative token, push or start)
        for grp in _groups(emb, shape, tok_dims, pushes).values():
            keys += [(h, grp[0], True) for h in range(1, D + 1)]
        for grp in _groups(emb, shape, tok_dims, pops).values():
            keys += [(h, grp[0], False) for h in range(D)]
        kq: dict[
            tuple[int, str], tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]
        ] = {}
        for h, tok, _pref in keys:
            word = _representative(
                stack, alphabet, h, None if tok == start else tok, pushes[0] if h else None
            )
            ts, ti = run_both(word)
            t = len(word)
            xs = {d: (0 if d in shape.pos_dims else ts.value(before, t, d)) for d in net.dims}
            xi = {d: (0 if d in shape.pos_dims else ti.value(before, t, d)) for d in net.dims}
            kq[(h, tok)] = (
                _apply(head.query, xs),
                _apply(head.key, xs),
                _apply(head.query, xi, _iv),
                _apply(head.key, xi, _iv),
            )
        cases = 0
        atoms: list[tuple[str, Any]] = []  # ("eq", x): x = 0; ("ge", x): x >= 0, for the query
        for hq in range(D + 1):
            qs, _k, qi, _k2 = kq[(hq, start if hq == 0 else pushes[0])]
            # β: the query against the key's positional column
            beta = sum(
                (
                    qs[c] * w * shape.pos_dims[d]
                    for c, row in zip(head.key.outputs, head.key.weights, strict=True)
                    for d, w in zip(head.key.inputs, row, strict=True)
                    if d in shape.pos_dims and w != 0
                ),
                0,
            )
            beta_i = sum(
                (
                    qi[c] * _iv(w * shape.pos_dims[d])
                    for c, row in zip(head.key.outputs, head.key.weights, strict=True)
                    for d, w in zip(head.key.inputs, row, strict=True)
                    if d in shape.pos_dims and w != 0
                ),
                0,
            )
            # head.scale is a positive constant: it multiplies every score alike and changes no order
            if _sign(beta, beta_i) != 1:
                nodes.append(
                    _selection_node(
                        shape,
                        "refuted",
                        f"at height {hq} the positional term's coefficient β = {beta} is not positive",
                    )
                )
                return nodes, None
            score = {
                (h, tok): (
                    sum((qs[c] * ks[c] for c in head.key.outputs), Fraction(0)),
                    sum((qi[c] * ki[c] for c in head.key.outputs), 0),
                )
                for (h, tok), (_q, ks, _q2, ki) in kq.items()
            }
            preferred = [(h, tok) for h, tok, pref in keys if pref and h == hq]
            best_s, best_i = score[preferred[0]]
            for key in preferred[1:]:
                cases += 1
                s, i = score[key]
                atoms.append(("eq", s - best_s))
                if _sign(s - best_s, i - best_i) != 0:
                    nodes.append(
                        _selection_node(
                            shape,
                            "refuted",
                            f"at height {hq} two preferred keys score {best_s} and {s}",
                        )
                    )
                    return nodes, None
            for h, tok, pref in keys:
                if pref and h == hq:
                    continue
                cases += 1
                s, i = score[(h, tok)]
                atoms.append(("ge", best_s - s - beta))
                sign = _sign(best_s - s - beta, best_i - i - beta_i)
                if sign is None or sign < 0:
                    verdict = "unknown" if sign is None else "refuted"
                    nodes.append(
                        _selection_node(
                            shape,
                            verdict,
                            f"at height {hq}, key ({h}, {tok}) scores {s}, not β = {beta} below the preferred {best_s}",
                        )
                    )
                    return nodes, None
        what = f"{cases} comparisons over {D + 1} query heights and {len(keys)} realizable keys, decided exactly"
        query = _comparisons_query(
            atoms, f"same-depth {shape.selection_layer}.{head.name}", deadline
        )
        if query.result != "unsat":
            nodes.append(
                _selection_node(
                    shape,
                    "unknown",
                    f"{what}, but z3 says {query.result} to them ({query.reason})",
                    (query,),
                )
            )
            return nodes, None
        nodes.append(
            _selection_node(
                shape, "proved", f"{what}, and by z3 over the square roots as variables", (query,)
            )
        )
    # lemma 4: one representative per realizable (h, top, token) the readout can tell apart
    use = shape.readout_sources
    value_dims = _reads(head.value) if head is not None else []
    top_groups = (
        [g[0] for g in _groups(emb, shape, value_dims, pushes).values()]
        if "top" in use
        else pushes[:1]
    )
    # (h, last token, top's push): the start token; a push (the top is that push); a pop (any top)
    candidates: list[tuple[int, str | None, str | None]] = [(0, None, None)]
    candidates += [(h, t, t) for h in range(1, D + 1) for t in top_groups]
    if "tok" in use:
        lasts = [
            g[0]
            for g in _groups(
                emb, shape, [d for d in net.dims if d not in shape.pos_dims], [*pushes, *pops]
            ).values()
        ]
        candidates += [(h, a, a) for a in lasts if a in pushes for h in range(1, D + 1)]
        candidates += [
            (h, b, t if h else None)
            for b in lasts
            if b in pops
            for h in range(D)
            for t in top_groups
        ]
    combos: dict[tuple[Any, ...], tuple[str, ...]] = {}
    for h, last, top in candidates:
        combos.setdefault((h, last, top), _representative(stack, alphabet, h, last, top))
    end = readout.end
    if watch.length_aware:
        return _length_aware_readout(net, shape, stack, alphabet, combos, nodes, tick)
    if "rem" in use:
        raise Unsupported("the readout depends on n − i, but the claim is not length-aware")
    checked = 0
    # one exact run per longest representative: the others are its prefixes, and a position's
    # next-symbol set is that of the prefix ending there
    runs: dict[tuple[str, ...], Any] = {}
    covering: dict[tuple[str, ...], tuple[str, ...]] = {}
    for word in sorted(set(combos.values()), key=len, reverse=True):
        covering[word] = next((r for r in runs if r[: len(word)] == word), word)
        runs.setdefault(covering[word], None)
    for word in combos.values():
        tick()
        try:
            whole = covering[word]
            if runs[whole] is None:
                runs[whole] = interval.run(net, whole).next_symbols
            got = set(runs[whole][len(word)])
        except UndecidedSignError as exc:
            nodes.append(
                LemmaNode(
                    name="readout by depth features",
                    statement=f"undecided on {repr(''.join(word)) if ''.join(word) else 'ε'}: {exc}",
                    verdict="unknown",
                )
            )
            return nodes, None
        want, end_ok = _allowed(stack, alphabet, word)
        checked += 1
        if got != want | ({end} if end_ok and end is not None else set()) or (
            end_ok and end is None
        ):
            nodes.append(
                LemmaNode(
                    name="readout by depth features",
                    statement=f"the prefix {repr(''.join(word)) if ''.join(word) else 'ε'} gets {sorted(got)}",
                    verdict="refuted",
                )
            )
            return nodes, word
    nodes.append(
        LemmaNode(
            name="readout by depth features",
            statement=f"the readout depends only on {', '.join(sorted(use)) or 'nothing'} of each position ({'h = stack height, ' if 'depth' in use else ''}"
            f"top = the stack top's token, tok = its own); each of the {checked} realizable combinations, run exactly on one prefix that ends in it, "
            "gets the next-symbol set the stack allows",
            verdict="proved",
        )
    )
    return nodes, None


def _allowed_within(
    stack: StackAutomaton, alphabet: Sequence[str], word: Sequence[str], m: int
) -> tuple[set[str], bool]:
    """The symbols allowed after ``word`` when m = n − i tokens are still to come (the last of
    them the end symbol): those after which the word can still end at exactly n; and whether the
    end symbol is allowed (the stack is empty and m = 1)."""
    out, _end = _allowed(stack, alphabet, word)
    h = len([a for a in word if stack.push[alphabet.index(a)] is not None]) - len(
        [a for a in word if stack.pop[alphabet.index(a)] is not None]
    )
    fits = {
        a
        for a in out
        if m - 1 >= (h + 1 if stack.push[alphabet.index(a)] is not None else h - 1) + 1
    }
    return fits, h == 0 and m == 1


def _length_aware_readout(
    net: Network,
    shape: _Shape,
    stack: StackAutomaton,
    alphabet: Sequence[str],
    combos: Mapping[tuple[Any, ...], tuple[str, ...]],
    nodes: list[LemmaNode],
    tick: Any,
) -> tuple[list[LemmaNode], tuple[str, ...] | None]:
    """Lemma 4 where the readout may also depend on m = n − i (the length-aware reading): the
    state after the selection layer at a representative prefix (its dims other than the
    functions of n − i are those of every position with its features), the functions of n − i
    computed by their FFN at the fictitious position i = 0, n = m (the same vector up to the
    positive factor m/n, which its layer norm drops), and the later FFNs and the readout run in
    rigorous intervals: at each m below M one by one (where m fits the height), and for every
    m >= M at once, with 1/m the interval [0, 1/M] (M doubled while that is undecided)."""
    from mpmath import iv

    from netproof.symbolic import interval
    from netproof.symbolic.evaluation import Evaluator
    from netproof.symbolic.interval import IntervalArithmetic

    readout = net.readout
    assert isinstance(readout, NextSymbols)
    emb = _embedding(net)
    end = readout.end
    if end is None or end not in emb.alphabet or end in alphabet:
        raise Unsupported(
            "a length-aware claim needs the readout's end symbol as the word's last symbol"
        )
    if shape.selection_index is None:
        raise Unsupported("a length-aware readout needs the selection head")
    later = net.layers[shape.selection_index + 1 :]
    if not all(isinstance(sub.block, FFN) for sub in later):
        raise Unsupported("a block after the selection layer is not an FFN")
    rem_dims = [d for d, src in shape.at_selection.items() if "rem" in src]
    if any(shape.at_selection[d] != frozenset({"rem"}) for d in rem_dims):
        raise Unsupported(
            f"dims {rem_dims} mix functions of n − i with other values before the selection head's output"
        )
    if rem_dims and (shape.rem_ffn is None or shape.rem_ffn >= shape.selection_index):
        raise Unsupported("the functions of n − i are made after the selection layer")
    ar = IntervalArithmetic()
    ev = Evaluator(net, ar)
    thr = ev.c(readout.threshold)
    labels = ["input", *(sub.block.name for sub in net.layers)]

    rem_cache: dict[Any, dict[str, Any]] = {}

    def rem_values(row_before: Mapping[str, Any], t: Any) -> dict[str, Any]:
        # the rem dims depend on t alone (their FFN reads no other dim with a nonzero weight into them)
        key = (str(t.a), str(t.b))
        if key in rem_cache:
            return rem_cache[key]
        assert shape.rem_ffn is not None
        x = dict(row_before)
        for d, feat, coef in emb.positional:
            x[d] = ar.const(Fraction(0)) if feat == "i/n" else _iv(coef) * t
        block = net.layers[shape.rem_ffn].block
        assert isinstance(block, FFN)
        out = ev.ffn(block, [x], [0])[0]
        rem_cache[key] = {d: row_before[d] + out[d] for d in rem_dims}
        return rem_cache[key]

    def next_set(row: Mapping[str, Any], rem: Mapping[str, Any]) -> set[str]:
        x = {**row, **rem}
        for sub in later:
            x = ev.sublayer(sub, [x], 2, [0], [], None)[0]
        values = [x[d] for _s, d in readout.scores]
        if readout.softmax is not None:
            values = ar.softmax(readout.softmax, Scale(), values, 2, "readout softmax")
        return {
            s
            for (s, _d), v in zip(readout.scores, values, strict=True)
            if ar.sign(ar.sub(v, thr)) >= 0
        }

    def completion(word: tuple[str, ...], m: int) -> tuple[str, ...]:
        types = []
        for a in word:
            i = alphabet.index(a)
            if stack.push[i] is not None:
                types.append(stack.push[i])
            else:
                types.pop()
        pop_of = {stack.pop[i]: a for i, a in enumerate(alphabet) if stack.pop[i] is not None}
        push_of = {stack.push[i]: a for i, a in enumerate(alphabet) if stack.push[i] is not None}
        rest = tuple(pop_of[t] for t in reversed(types))
        pairs = (m - 1 - len(rest)) // 2
        return (*word, *rest, *((push_of[0], pop_of[0]) * pairs), end)

    checked = 0
    runs: dict[tuple[str, ...], Any] = {}
    covering: dict[tuple[str, ...], tuple[str, ...]] = {}
    for word in sorted(
        set(combos.values()), key=len, reverse=True
    ):  # one run per longest representative
        covering[word] = next((r for r in runs if r[: len(word)] == word), word)
        runs.setdefault(covering[word], None)
    for word in combos.values():
        tick()
        if runs[covering[word]] is None:
            runs[covering[word]] = interval.run(net, covering[word])
        trace = runs[covering[word]]
        t_last = len(word)
        row_sel = {d: trace.value(labels[shape.selection_index + 1], t_last, d) for d in net.dims}
        row_rem = (
            {d: trace.value(labels[shape.rem_ffn], t_last, d) for d in net.dims}
            if rem_dims and shape.rem_ffn is not None
            else {}
        )
        h = len(completion(word, 1)) - len(word) - 1  # the stack height after the word
        M = stack.depth + 3
        m = h + 1
        while True:
            tick()
            while m < M:  # every m that fits: m >= h + 1 with m − 1 − h even
                try:
                    got = next_set(
                        row_sel, rem_values(row_rem, iv.mpf(1) / iv.mpf(m)) if rem_dims else {}
                    )
                except UndecidedSignError as exc:
                    nodes.append(
                        LemmaNode(
                            name="readout by depth features",
                            statement=f"undecided after {repr(''.join(word)) if ''.join(word) else 'ε'} at n − i = {m}: {exc}",
                            verdict="unknown",
                        )
                    )
                    return nodes, None
                want, end_ok = _allowed_within(stack, alphabet, word, m)
                checked += 1
                if got != want | ({end} if end_ok else set()):
                    nodes.append(
                        LemmaNode(
                            name="readout by depth features",
                            statement=f"after {repr(''.join(word)) if ''.join(word) else 'ε'} at n − i = {m} the network allows {sorted(got)}",
                            verdict="refuted",
                        )
                    )
                    return nodes, completion(word, m)
                m += 2
            try:
                got = next_set(
                    row_sel, rem_values(row_rem, iv.mpf([0, 1]) / iv.mpf(M)) if rem_dims else {}
                )
            except UndecidedSignError:
                if 64 * (stack.depth + 3) <= M:
                    nodes.append(
                        LemmaNode(
                            name="readout by depth features",
                            statement=f"undecided after {repr(''.join(word)) if ''.join(word) else 'ε'} for n − i >= {M}",
                            verdict="unknown",
                        )
                    )
                    return nodes, None
                M *= 2
                continue
            want, _end_ok = _allowed_within(stack, alphabet, word, M + (M - 1 - h) % 2)
            checked += 1
            if got != want:
                nodes.append(
                    LemmaNode(
                        name="readout by depth features",
                        statement=f"after {repr(''.join(word)) if ''.join(word) else 'ε'} for every n − i >= {M} the network allows {sorted(got)}",
                        verdict="refuted",
                    )
                )
                m = M + (M - 1 - h) % 2
                return nodes, completion(word, m)
            break
    nodes.append(
        LemmaNode(
            name="readout by depth features",
            statement=f"the readout depends only on {', '.join(sorted(shape.readout_sources)) or 'nothing'} of each position (rem = n − i); "
            f"each of the {checked} realizable combinations, by one prefix that ends in it with n − i one value below M or every "
            "value from M on (rigorous intervals), gets the next-symbol set that still fits the length",
            verdict="proved",
        )
    )
    return nodes, None


def _selection_node(
    shape: _Shape, verdict: str, what: str, queries: tuple[SmtQuery, ...] = ()
) -> LemmaNode:
    name = f"{shape.selection_layer}.{shape.selection.name if shape.selection else '?'}"
    return LemmaNode(
        name=f"same-depth {name}",
        statement=f"head {name} selects exactly one position, the latest push at the query's stack height (the start token "
        f"at height 0), for every length: the preferred keys score alike and every other at least β below ({what})",
        verdict=verdict,  # type: ignore[arg-type]
        queries=queries,
    )


def _z3_of(expr: Any, ctx: Any, roots: dict[Any, Any]) -> Any:
    """An exact algebraic number of sympy (sums and products of rationals and square roots of
    rationals) as a z3 term; each √w becomes the variable ``roots[w]`` (its definition, r >= 0
    and r² = w, is asserted by the caller)."""
    import sympy
    import z3

    if expr.is_Rational:
        return z3.RealVal(str(sympy.Rational(expr)), ctx)
    if expr.is_Add:
        return z3.Sum([_z3_of(a, ctx, roots) for a in expr.args])
    if expr.is_Mul:
        return z3.Product([_z3_of(a, ctx, roots) for a in expr.args])
    if (
        expr.is_Pow
        and expr.base.is_Rational
        and expr.exp in (sympy.Rational(1, 2), sympy.Rational(-1, 2))
    ):
        w = sympy.Rational(expr.base)
        if w not in roots:
            roots[w] = z3.Real(f"sqrt_{str(w).replace('/', '_')}", ctx)
        return roots[w] if expr.exp > 0 else 1 / roots[w]
    if expr.is_Pow and expr.exp.is_Integer:
        base = _z3_of(expr.base, ctx, roots)
        n = int(expr.exp)
        out = base
        for _ in range(abs(n) - 1):
            out = out * base
        return out if n > 0 else 1 / out
    raise Unsupported(
        f"the value {expr} is not a sum of products of rationals and square roots of rationals"
    )


def _comparisons_query(
    atoms: Sequence[tuple[str, Any]], name: str, deadline: float | None
) -> SmtQuery:
    """The same-depth comparisons as one query over the square roots as variables: unsat of
    "some preferred key scores differently, or some other key is less than β below"."""
    import sympy
    import z3

    from netproof.verifier import smtlib

    ctx = z3.Context()
    roots: dict[Any, Any] = {}
    bad = []
    for kind, x in atoms:
        term = _z3_of(sympy.expand(_exact(x)), ctx, roots)
        bad.append(term != 0 if kind == "eq" else term < 0)
    solver = z3.Solver(ctx=ctx)
    for w in sorted(roots):
        r = roots[w]
        solver.add(r >= 0, r * r == z3.RealVal(str(w), ctx))
    solver.add(z3.Or(bad) if bad else z3.BoolVal(False, ctx))
    left = 600.0 if deadline is None else max(1.0, deadline - time.perf_counter())
    query, _model = smtlib.solve(
        solver,
        name=name,
        logic="QF_NRA",
        timeout=left,
        reason_unsat="every preferred key scores the same and every other key at least β less, with each square root a variable",
    )
    return query
