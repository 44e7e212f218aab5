"""Block lemmas, each proved once over its whole input domain (every word length for attention
lemmas), and what every later stage of the compositional prover shares.

- :class:`~netproof.verifier.claims.BooleanBlock`: the FFN's faithful encoding (affine maps and
  ReLU/σ/step as case splits) on Boolean inputs (Bool variables) and real inputs (Real
  variables) against the declared formulas; ``unsat`` of "some output differs" is a proof for
  every input.
- :class:`~netproof.verifier.claims.NearestSelection`: the head's score, cleared of
  denominators and multiplied by n (so that a feature i/n becomes the integer i), compared
  pairwise at two symbolic positions a < b for a symbolic length n and all Boolean key dims: the
  better ranked position has a strictly larger score, for every n.
- :class:`~netproof.verifier.claims.RankedSelection`: the same score at two symbolic positions
  a < b: the higher ranked (rank tuples compared lexicographically, the first or the last among
  equals) has a strictly larger score, for every n, whatever the mask.
- :class:`~netproof.verifier.claims.ScaledBlock`: a positively homogeneous FFN against its
  expressions, for all integers and every unit.

Shared with the later stages: :data:`METHOD` (the method every verdict of the prover names),
:class:`LemmaResult` (a lemma, its proof, and where the proof was applied), :func:`replay`
(a counterexample word of an encoding, replayed by the exact interpreter) and
:func:`prove_lemma_once` (each lemma of a network decided once per process, by content: the
routes of one run prove the same lemmas for several claims).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface
(:mod:`netproof.verifier.smtlib`), :mod:`netproof.verifier.smt.errors` and :mod:`.arithmetic`;
z3 inside functions.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, assert_never

from netproof.symbolic import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Hardmax,
    Head,
    LayerNorm,
    Network,
    TokenEmbedding,
    fingerprint,
    render,
)
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    BooleanBlock,
    Language,
    Lemma,
    NearestSelection,
    RankedSelection,
    Refuted,
    ScaledBlock,
    Word,
)
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smtlib import VERDICT_OF, LemmaNode, SmtQuery

from .arithmetic import Values, ffn_faithful, sympy_to_z3

METHOD = "smt (z3), compositional"
"""The method every verdict of the compositional prover names (and its proof logs record)."""


# Positional features that stay linear in (i, n) once multiplied by n: name -> (coef of i, coef of n).
_SCALED_FEATURES: dict[str, tuple[int, int]] = {
    "i/n": (1, 0),
    "1-i/n": (-1, 1),
    "1/n": (0, 0),
    "1": (0, 1),
}


@dataclass
class LemmaResult:
    """A lemma with its node in the lemma tree and whether it is proved; while queries are built,
    how often the proof replaced its block (``uses``) and where a side condition failed and the
    block was encoded faithfully instead (``fallbacks``)."""

    lemma: Lemma
    node: LemmaNode
    proved: bool
    uses: int = 0
    fallbacks: list[str] = field(default_factory=list)


def _find_ffn(net: Network, name: str) -> FFN:
    for sub in net.layers:
        if isinstance(sub.block, FFN) and sub.block.name == name:
            return sub.block
    known = ", ".join(s.block.name for s in net.layers if isinstance(s.block, FFN))
    raise ValueError(f"block={name!r} is not an FFN of network {net.name!r}; its FFNs: {known}")


def _find_head(net: Network, layer: str, head: str) -> Head:
    for sub in net.layers:
        if isinstance(sub.block, AttentionLayer) and sub.block.name == layer:
            for h in sub.block.heads:
                if h.name == head:
                    return h
            raise ValueError(
                f"attention layer {layer!r} has no head {head!r}; its heads: {', '.join(h.name for h in sub.block.heads)}"
            )
    raise ValueError(f"layer={layer!r} is not an attention layer of network {net.name!r}")


def _prove_boolean_block(
    net: Network, lemma: BooleanBlock, timeout: float
) -> tuple[LemmaNode, bool]:
    import z3

    block = _find_ffn(net, lemma.block)
    if not block.steps:
        raise ValueError(
            f"FFN {lemma.block!r} is empty; a BooleanBlock lemma needs a block that writes dims"
        )
    written = block.steps[-1].outputs  # type: ignore[union-attr]
    missing = [d for d in written if d not in lemma.outputs]
    if missing:
        raise ValueError(
            f"lemma {lemma.id!r} leaves dims {missing} of FFN {lemma.block!r} unspecified; give a formula for each"
        )
    ctx = z3.Context()
    vals = Values(z3, ctx)
    reads = block.steps[0].inputs  # type: ignore[union-attr]
    env: dict[str, Any] = {}
    for d in reads:
        env[d] = z3.Bool(d, ctx) if d in lemma.boolean else z3.Real(d, ctx)
    for d in lemma.boolean:
        env.setdefault(d, z3.Bool(d, ctx))
    got = ffn_faithful(vals, block, env)
    wrong = []
    for d in written:
        spec = sympy_to_z3(vals, lemma.outputs[d], env)
        wrong.append(vals.arith(got[d]) != vals.arith(spec))
    solver = z3.Solver(ctx=ctx)
    solver.add(*vals.assertions)
    solver.add(z3.Or(wrong))
    logic = "QF_LIRA"
    query, model = smtlib.solve(
        solver,
        name=lemma.id,
        logic=logic,
        timeout=timeout,
        reason_unsat=f"FFN {lemma.block} matches the lemma on every input with {len(lemma.boolean)} Boolean dims",
    )
    if query.result == "sat":
        shown = ", ".join(f"{d}={model.eval(env[d], model_completion=True)}" for d in reads)
        bad = [
            d
            for d in written
            if not z3.is_true(
                model.eval(
                    vals.arith(got[d]) == vals.arith(sympy_to_z3(vals, lemma.outputs[d], env)),
                    model_completion=True,
                )
            )
        ]
        query = SmtQuery(
            name=query.name,
            smt2=query.smt2,
            result="sat",
            reason=f"FFN {lemma.block} differs from the lemma on dims {bad} at {shown}",
            seconds=query.seconds,
        )
    verdict = VERDICT_OF[query.result]
    return LemmaNode(
        name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)
    ), query.result == "unsat"


def nearer_is_later(mask: str) -> bool:
    """Whether a one-sided mask makes a later position the nearer one (causal masks); an
    unmasked head has no nearest position (:class:`Unsupported`)."""
    if mask in ("causal", "strict_causal"):
        return True
    if mask in ("anticausal", "strict_anticausal"):
        return False
    raise Unsupported(f"mask={mask!r}: 'nearest' needs a one-sided mask (causal or anticausal)")


def _key_form(net: Network, head: Head) -> tuple[dict[str, Fraction], Fraction]:
    """The score as an affine form of the key position's dims: Σ α_d·x_d + β (the query is a
    constant vector; a positive scale does not change a hardmax)."""
    if not isinstance(head.normalizer, Hardmax):
        raise Unsupported(f"head {head.name!r} is soft; NearestSelection is a hardmax lemma")
    if head.scoring != "dot":
        raise Unsupported(
            f"head {head.name!r} scores with {head.scoring!r}; NearestSelection covers 'dot'"
        )
    if any(w != 0 for row in head.query.weights for w in row):
        raise Unsupported(f"head {head.name!r} has a query that depends on the position's dims")
    q = dict(zip(head.query.outputs, head.query.bias, strict=True))
    alpha: dict[str, Fraction] = {}
    beta = Fraction(0)
    for c, row, b in zip(head.key.outputs, head.key.weights, head.key.bias, strict=True):
        beta += q[c] * b
        for d, w in zip(head.key.inputs, row, strict=True):
            alpha[d] = alpha.get(d, Fraction(0)) + q[c] * w
    return {d: a for d, a in alpha.items() if a != 0}, beta


def _scaled_score(
    z3: Any,
    ctx: Any,
    alpha: Mapping[str, Fraction],
    beta: Fraction,
    den: int,
    positional: Mapping[str, str],
    n: Any,
    pos: Any,
    x: Mapping[str, Any],
) -> Any:
    """den·n·score at position ``pos`` with Boolean key dims ``x``: integer coefficients, a
    feature i/n becomes i."""
    total = z3.IntVal(int(beta * den), ctx) * n
    for d, al in alpha.items():
        c = z3.IntVal(int(al * den), ctx)
        if d in positional:
            ci, cn = _SCALED_FEATURES[positional[d]]
            total = total + c * (
                z3.IntVal(ci, ctx) * pos
                + z3.IntVal(cn, ctx) * n
                + (1 if positional[d] == "1/n" else 0)
            )
        else:
            total = total + c * z3.If(x[d], n, z3.IntVal(0, ctx))
    return total


def _check_key_dims(
    lemma: NearestSelection | RankedSelection, alpha: Mapping[str, Fraction]
) -> None:
    for d in alpha:
        if d not in lemma.boolean and d not in lemma.positional:
            raise Unsupported(
                f"head {lemma.head!r} reads dim {d!r}, which lemma {lemma.id!r} declares neither Boolean nor positional"
            )
    for d, feat in lemma.positional.items():
        if feat not in _SCALED_FEATURES:
            raise Unsupported(
                f"positional feature {feat!r} of dim {d!r} is not linear in (i, n) once multiplied by n"
            )


def _prove_nearest(net: Network, lemma: NearestSelection, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    head = _find_head(net, lemma.layer, lemma.head)
    later = nearer_is_later(head.mask)
    alpha, beta = _key_form(net, head)
    _check_key_dims(lemma, alpha)
    base = net.embedding.index_base if isinstance(net.embedding, TokenEmbedding) else 0
    den = math.lcm(*(a.denominator for a in (*alpha.values(), beta)))
    ctx = z3.Context()
    n, a, b = z3.Int("n", ctx), z3.Int("a", ctx), z3.Int("b", ctx)

    def score(pos: Any, x: Mapping[str, Any]) -> Any:
        return _scaled_score(z3, ctx, alpha, beta, den, lemma.positional, n, pos, x)

    xa = {d: z3.Bool(f"{d}@a", ctx) for d in lemma.boolean}
    xb = {d: z3.Bool(f"{d}@b", ctx) for d in lemma.boolean}
    vals = Values(z3, ctx)
    pa = vals.boolish(sympy_to_z3(vals, lemma.prefer, xa))
    pb = vals.boolish(sympy_to_z3(vals, lemma.prefer, xb))
    if pa is None or pb is None:
        raise Unsupported(
            f"lemma {lemma.id!r}: prefer={lemma.prefer} is not a Boolean formula of Boolean dims"
        )
    s_near, s_far = (score(b, xb), score(a, xa)) if later else (score(a, xa), score(b, xb))
    p_near, p_far = (pb, pa) if later else (pa, pb)
    solver = z3.Solver(ctx=ctx)
    solver.add(n >= 1, a >= base, a < b, b <= n - 1 + base)
    solver.add(
        z3.Or(
            z3.And(z3.Implies(p_far, p_near), s_near <= s_far),  # the nearer is ranked higher
            z3.And(p_far, z3.Not(p_near), s_far <= s_near),  # the farther is preferred
        )
    )
    query, model = smtlib.solve(
        solver,
        name=lemma.id,
        logic="QF_LIA",
        timeout=timeout,
        reason_unsat=f"for every n, a better ranked position scores strictly higher under head {lemma.layer}.{lemma.head}",
    )
    if query.result == "sat":
        shown = ", ".join(
            f"{v}={model.eval(v, model_completion=True)}"
            for v in (n, a, b, *xa.values(), *xb.values())
        )
        query = SmtQuery(
            name=query.name,
            smt2=query.smt2,
            result="sat",
            reason=f"the score order breaks the ranking at {shown}",
            seconds=query.seconds,
        )
    verdict = VERDICT_OF[query.result]
    return LemmaNode(
        name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)
    ), query.result == "unsat"


def _prove_ranked(net: Network, lemma: RankedSelection, timeout: float) -> tuple[LemmaNode, bool]:
    """Two symbolic positions a < b of a symbolic length n, all Boolean key dims free: the one
    ranked higher (its rank tuple lexicographically larger, else a for end "first" and b for
    end "last") scores strictly higher. The order is total, so every masked set has exactly one
    maximizer: its first (last) position of highest rank, whatever the mask and tie rule."""
    import z3

    head = _find_head(net, lemma.layer, lemma.head)
    if head.relative:
        raise Unsupported(
            f"head {lemma.head!r} has relative-position terms: its score is not the key's alone"
        )
    alpha, beta = _key_form(net, head)
    _check_key_dims(lemma, alpha)
    base = net.embedding.index_base if isinstance(net.embedding, TokenEmbedding) else 0
    den = math.lcm(*(q.denominator for q in (*alpha.values(), beta)))
    ctx = z3.Context()
    n, a, b = z3.Int("n", ctx), z3.Int("a", ctx), z3.Int("b", ctx)
    xa = {d: z3.Bool(f"{d}@a", ctx) for d in lemma.boolean}
    xb = {d: z3.Bool(f"{d}@b", ctx) for d in lemma.boolean}
    vals = Values(z3, ctx)
    ra = [vals.boolish(sympy_to_z3(vals, f, xa)) for f in lemma.ranks]
    rb = [vals.boolish(sympy_to_z3(vals, f, xb)) for f in lemma.ranks]
    if any(r is None for r in (*ra, *rb)):
        raise Unsupported(
            f"lemma {lemma.id!r}: ranks={lemma.ranks} are not Boolean formulas of Boolean dims"
        )
    a_higher = z3.Or(
        [z3.And(*(ra[m] == rb[m] for m in range(k)), ra[k], z3.Not(rb[k])) for k in range(len(ra))]
    )
    same = z3.And([ra[k] == rb[k] for k in range(len(ra))])
    a_wins = z3.Or(a_higher, same) if lemma.end == "first" else a_higher
    s_a = _scaled_score(z3, ctx, alpha, beta, den, lemma.positional, n, a, xa)
    s_b = _scaled_score(z3, ctx, alpha, beta, den, lemma.positional, n, b, xb)
    solver = z3.Solver(ctx=ctx)
    solver.add(n >= 1, a >= base, a < b, b <= n - 1 + base)
    solver.add(z3.Or(z3.And(a_wins, s_a <= s_b), z3.And(z3.Not(a_wins), s_b <= s_a)))
    query, model = smtlib.solve(
        solver,
        name=lemma.id,
        logic="QF_LIA",
        timeout=timeout,
        reason_unsat=f"for every n, of two positions the higher ranked (the {lemma.end} among equal ranks) scores strictly higher under head {lemma.layer}.{lemma.head}",
    )
    if query.result == "sat":
        shown = ", ".join(
            f"{v}={model.eval(v, model_completion=True)}"
            for v in (n, a, b, *xa.values(), *xb.values())
        )
        query = SmtQuery(
            name=query.name,
            smt2=query.smt2,
            result="sat",
            reason=f"the score order breaks the ranking at {shown}",
            seconds=query.seconds,
        )
    verdict = VERDICT_OF[query.result]
    return LemmaNode(
        name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)
    ), query.result == "unsat"


def _homogeneous(block: FFN) -> bool:
    """ReLU and affine maps without biases only: FFN(x/u) = FFN(x)/u for u > 0."""
    for st in block.steps:
        if isinstance(st, Affine) and any(b != 0 for b in st.bias):
            return False
        if isinstance(st, LayerNorm) or (isinstance(st, Activation) and st.kind != "relu"):
            return False
    return True


def _prove_scaled_block(net: Network, lemma: ScaledBlock, timeout: float) -> tuple[LemmaNode, bool]:
    import z3

    block = _find_ffn(net, lemma.block)
    if not _homogeneous(block):
        raise Unsupported(
            f"FFN {lemma.block!r} has a bias or a non-ReLU step, so it is not positively homogeneous"
        )
    written = block.steps[-1].outputs if block.steps else ()  # type: ignore[union-attr]
    missing = [d for d in written if d not in lemma.outputs]
    if missing:
        raise ValueError(
            f"lemma {lemma.id!r} leaves dims {missing} of FFN {lemma.block!r} unspecified; give an expression for each"
        )
    ctx = z3.Context()
    vals = Values(z3, ctx)
    env = {str(v): z3.Int(str(v), ctx) for v in lemma.inputs.values()}
    # Homogeneity: the block on (v/u, 1/u) is 1/u times the block on (v, 1).
    x: dict[str, Any] = {lemma.unit: Fraction(1)}
    for d, v in lemma.inputs.items():
        x[d] = z3.ToReal(env[str(v)])
    got = ffn_faithful(vals, block, x)
    wrong = [
        vals.arith(got[d]) != vals.arith(sympy_to_z3(vals, lemma.outputs[d], env)) for d in written
    ]
    solver = z3.Solver(ctx=ctx)
    solver.add(*vals.assertions)
    solver.add(z3.Or(wrong))
    query, model = smtlib.solve(
        solver,
        name=lemma.id,
        logic="QF_LIRA",
        timeout=timeout,
        reason_unsat=f"FFN {lemma.block} matches the lemma for all integers and every unit",
    )
    if query.result == "sat":
        shown = ", ".join(f"{k}={model.eval(v, model_completion=True)}" for k, v in env.items())
        query = SmtQuery(
            name=query.name,
            smt2=query.smt2,
            result="sat",
            reason=f"FFN {lemma.block} differs from the lemma at {shown}",
            seconds=query.seconds,
        )
    verdict = VERDICT_OF[query.result]
    return LemmaNode(
        name=lemma.id, statement=lemma.statement, verdict=verdict, queries=(query,)
    ), query.result == "unsat"


def prove_lemma(net: Network, lemma: Lemma, *, timeout: float = 60.0) -> tuple[LemmaNode, bool]:
    """Prove one lemma over its whole input domain (every length n for attention lemmas): its
    node in the lemma tree, and whether it is proved. An unsupported lemma is ``unknown``."""
    try:
        match lemma:
            case BooleanBlock():
                return _prove_boolean_block(net, lemma, timeout)
            case NearestSelection():
                return _prove_nearest(net, lemma, timeout)
            case RankedSelection():
                return _prove_ranked(net, lemma, timeout)
            case ScaledBlock():
                return _prove_scaled_block(net, lemma, timeout)
            case _:
                assert_never(lemma)
    except Unsupported as exc:
        return LemmaNode(
            name=lemma.id, statement=f"{lemma.statement} [unsupported: {exc}]", verdict="unknown"
        ), False


_DECIDED: dict[tuple[str, str], tuple[LemmaNode, bool]] = {}
"""Lemmas decided in this process, by (network fingerprint, lemma content): see :func:`prove_lemma_once`."""
_PRINTS: dict[int, tuple[Network, str]] = {}
MAX_DECIDED = 1024
"""The most lemma results :func:`prove_lemma_once` keeps (the oldest go first)."""


def _content(x: Any) -> str:
    """A lemma's fields as text that names every part: sympy terms by ``srepr`` (their
    assumptions included), mappings in key order."""
    import sympy

    if isinstance(x, sympy.Basic):
        return str(sympy.srepr(x))
    if isinstance(x, Mapping):
        return (
            "{"
            + ", ".join(
                f"{k!r}: {_content(v)}" for k, v in sorted(x.items(), key=lambda kv: repr(kv[0]))
            )
            + "}"
        )
    if isinstance(x, tuple | list):
        return "(" + ", ".join(_content(v) for v in x) + ")"
    return repr(x)


def lemma_key(net: Network, lemma: Lemma) -> tuple[str, str]:
    """What a lemma's proof depends on: the network (its fingerprint, the sha256 of its printed
    form) and the lemma's kind and every field."""
    got = _PRINTS.get(id(net))
    if got is None or got[0] is not net:
        if len(_PRINTS) >= 64:
            _PRINTS.clear()
        got = _PRINTS[id(net)] = (net, fingerprint(net))
    fields = ", ".join(f"{f}={_content(getattr(lemma, f))}" for f in lemma.__dataclass_fields__)
    return got[1], hashlib.sha256(f"{type(lemma).__name__}({fields})".encode()).hexdigest()


def prove_lemma_once(
    net: Network, lemma: Lemma, *, timeout: float = 60.0
) -> tuple[LemmaNode, bool]:
    """:func:`prove_lemma`, each lemma of a network decided at most once in this process (by
    content, :func:`lemma_key`): a proved or refuted lemma's node is given again, the same
    queries and answers; an unknown one (a timeout, an unsupported fragment) is tried again
    within the new ``timeout``. For the routes of a run, which prove the same lemmas for
    several claims; the strict reader proves them anew."""
    key = lemma_key(net, lemma)
    got = _DECIDED.get(key)
    if got is not None:
        return got
    node, ok = prove_lemma(net, lemma, timeout=timeout)
    if node.verdict != "unknown":
        if len(_DECIDED) >= MAX_DECIDED:
            del _DECIDED[next(iter(_DECIDED))]
        _DECIDED[key] = (node, ok)
    return node, ok


def replay(net: Network, language: Language, word: Word) -> Refuted:
    """The refutation of "``net`` recognizes ``language``" on ``word``, a counterexample of an
    encoding, replayed by the exact interpreter; a word the network classifies right is an
    encoder bug (:class:`EncoderBugError`), never a verdict."""
    from netproof.symbolic.exact import run

    trace = run(net, word)
    member = language.contains(word)
    shown = render(language.alphabet, word) or "ε"
    if trace.accepted == member:
        raise EncoderBugError(
            f"the compositional encoding says {shown!r} (length {len(word)}) is misclassified by {net.name!r}, "
            f"but the exact interpreter {'accepts' if member else 'rejects'} it, as it should: the encoding is "
            "wrong; please report this with the network file"
        )
    return Refuted(
        METHOD,
        f"{shown!r} is {'in' if member else 'not in'} {language.name} but the network "
        f"{'accepts' if trace.accepted else 'rejects'} it (logit {trace.output}); found by z3, replayed exactly",
        word,
        {"logit": str(trace.output)},
    )
