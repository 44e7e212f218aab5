"""Gadgets: the heads and FFNs that hand-built transformers are made of, as exact IR.

Papers build their networks from a few recurring pieces; each function here returns one of them
as a plain IR block (:class:`~netproof.symbolic.ir.Head`, :class:`~netproof.symbolic.ir.AttentionLayer` or
:class:`~netproof.symbolic.ir.FFN`), so every interpreter runs it and every claim can refer to it by name.

Attention gadgets (each returns a :class:`~netproof.symbolic.ir.Head`; put heads in a layer with
:func:`attention`):

- :func:`uniform_average`: the average of a value over all positions (``mask="none"``) or over
  j ≤ i (``mask="causal"``): hardmax over constant scores with ties averaged, exact.
- :func:`nearest`: the nearest position to the left or right that has a property (Yao et al.
  2021 §5.1's matching heads, score ±p_j plus twice the property).
- :func:`select_position`: the position whose key feature equals a query (first, last,
  position i, position k), with −|k_j − q_i| scoring.

FFN gadgets: :func:`boolean_ffn` compiles gate circuits of :mod:`netproof.symbolic.gates` (Yao et al.
2021, Lemma A.1: AND, OR, NOT, XNOR, GT, EQ; re-exported here) into a ReLU FFN, and
:func:`threshold` writes I[x > c]. :func:`sublayers` wraps blocks in residual sublayers.

A whole network in a few lines: the fraction of 1s in every prefix, then "is it more than half".

>>> from netproof.symbolic import Network, classifier, token_embedding
>>> from netproof.symbolic.exact import run
>>> net = Network(
...     name="demo",
...     dims=("is1", "frac", "more"),
...     embedding=token_embedding("01", {"0": {}, "1": {"is1": 1}}),
...     layers=sublayers(
...         attention("count", uniform_average("frac", {"frac": {"is1": 1}}, mask="causal")),
...         threshold("half", "frac", "1/2", "more"),
...     ),
...     readout=classifier("more", position=-1, bias="-1/2"),
... )
>>> trace = run(net, "0110")
>>> [str(trace.value("count", t, "frac")) for t in range(4)]
['0', '1/2', '2/3', '1/2']
>>> [str(trace.value("half", t, "more")) for t in range(4)]
['0', '0', '1', '0']
>>> trace.accepted
False
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from .builders import STEP, affine, constant, ffn
from .errors import NetworkValidationError
from .gates import (
    AND,
    EQ,
    GT,
    NOR,
    NOT,
    OR,
    SAME,
    XNOR,
    Lin,
    Node,
    Relu,
    Var,
    compile_ffn,
    const,
    lin,
    relu,
    var,
)
from .ir import (
    FFN,
    MASKS,
    TIE_RULES,
    Affine,
    AttentionLayer,
    Block,
    Hardmax,
    Head,
    Mask,
    Sublayer,
    TieRule,
)
from .numbers import Number, as_fraction

__all__ = [
    "AND",
    "EQ",
    "GT",
    "NOR",
    "NOT",
    "OR",
    "SAME",
    "XNOR",
    "Lin",
    "Node",
    "Relu",
    "Var",
    "attention",
    "boolean_ffn",
    "const",
    "lin",
    "nearest",
    "relu",
    "select_position",
    "sublayers",
    "threshold",
    "uniform_average",
    "var",
]

Values = Mapping[str, Mapping[str, Number]]
"""What a head writes: ``{out_dim: {in_dim: weight}}``, i.e. out_dim = Σ weight·in_dim of the
attended position(s)."""


def _value_map(head: str, values: Values) -> Affine:
    if not isinstance(values, Mapping) or not values:
        raise NetworkValidationError(
            f"head {head!r}: values={values!r} must be a non-empty mapping {{out_dim: {{in_dim: weight}}}}, "
            "e.g. {'frac': {'is1': 1}} (what the head writes, read from the attended positions)"
        )
    for out, row in values.items():
        if not isinstance(row, Mapping):
            raise NetworkValidationError(
                f"head {head!r}: values[{out!r}]={row!r} must be a mapping {{in_dim: weight}}, "
                f"e.g. {{{out!r}: {{'is1': 1}}}}"
            )
    return affine(values)


def _check_mask(head: str, mask: str, allowed: tuple[str, ...]) -> None:
    if mask not in allowed:
        raise NetworkValidationError(
            f"head {head!r}: mask={mask!r} is not one of {', '.join(allowed)}"
        )


# --------------------------------------------------------------------------- attention gadgets


def uniform_average(name: str, values: Values, *, mask: Mask = "causal") -> Head:
    """The uniform average of ``values`` over the positions the mask allows.

    At position i the head writes ``out = (1/|A_i|)·Σ_{j ∈ A_i} Σ_d w_d·x_{j,d}`` for each
    ``out: {d: w_d}`` in ``values``, where A_i is all positions (``mask="none"``), j ≤ i
    (``"causal"``), j < i (``"strict_causal"``), j ≥ i (``"anticausal"``) or j > i
    (``"strict_anticausal"``); an empty A_i (j < i at the first position) gives 0.

    Built as hardmax over constant scores (W^Q = W^K = 0) with ties averaged, so the weights are
    exactly 1/|A_i|: no softmax, nothing irrational (Chiang & Cholak 2022 §2.2's counting head
    k/n, in hardmax form).

    >>> from netproof.symbolic import Network, classifier, token_embedding
    >>> from netproof.symbolic.exact import run
    >>> count = uniform_average("count", {"#1/n": {"is1": 1}}, mask="none")
    >>> net = Network(name="count", dims=("is1", "#1/n"),
    ...               embedding=token_embedding("01", {"0": {}, "1": {"is1": 1}}),
    ...               layers=sublayers(attention("count", count)), readout=classifier("#1/n"))
    >>> [str(run(net, "0111").value("count", t, "#1/n")) for t in range(4)]
    ['3/4', '3/4', '3/4', '3/4']
    """
    _check_mask(name, mask, MASKS)
    return Head(
        name=name,
        query=constant({"z": 0}),
        key=constant({"z": 0}),
        value=_value_map(name, values),
        normalizer=Hardmax(tie="average"),
        mask=mask,
    )


def nearest(
    name: str,
    *,
    side: str,
    where: Mapping[str, Number],
    values: Values,
    where_bias: Number = 0,
    position_dim: str = "p",
    strict: bool = True,
) -> Head:
    """The nearest position on ``side`` of i that has a property; write its ``values``.

    The property is φ_j = 1 with φ_j = Σ_d where[d]·x_{j,d} + where_bias (``where={"b": 1}``:
    "is a b"; ``where={"m": -1}, where_bias=1``: "is not matched", Yao et al.'s m_j = 0).
    The score of key j is ``2φ_j + p_j`` (``side="left"``, mask j < i, or j ≤ i if not
    ``strict``) or ``2φ_j − p_j`` (``side="right"``, mask j > i or j ≥ i), with hardmax.

    Precondition: φ_j ∈ {0, 1} at every position (0/1 property dims) and the position feature
    p = x[position_dim] lies in [0, 1] and strictly increases with the position (``i/n``). Then
    a position with the property scores at least 2 and one without at most 1, and among
    positions of one kind the largest (left) or smallest (right) p wins: the head selects
    exactly one position, never a tie:

    - the nearest position in the mask with φ_j = 1 if there is one;
    - otherwise the nearest position in the mask (which has φ_j = 0: put a property dim in
      ``values`` to tell the two cases apart);
    - at the edge (mask j < i at the first position) the mask is empty and the head writes 0.

    This is Yao et al. 2021 §5.1's matching head (score p_j − m_j for "nearest unmatched on the
    left"), with the property doubled so that it dominates for every p in [0, 1]. A tie shows
    that the precondition fails; the trace (``Selection.selected``) records it.

    >>> from netproof.symbolic import Network, classifier, token_embedding
    >>> from netproof.symbolic.exact import run
    >>> last_b = nearest("last_b", side="left", where={"isb": 1}, values={"b_at": {"p": 1}})
    >>> net = Network(name="near", dims=("isb", "p", "b_at"),
    ...               embedding=token_embedding("ab", {"a": {}, "b": {"isb": 1}},
    ...                                         positional={"p": "i/n"}, index_base=1),
    ...               layers=sublayers(attention("look", last_b)), readout=classifier("b_at"))
    >>> trace = run(net, "abab")   # p = i/4 at positions 1..4; b at positions 2 and 4
    >>> [str(trace.value("look", t, "b_at")) for t in range(4)]   # the nearest b to the left
    ['0', '1/4', '1/2', '1/2']

    At position 2 no b lies to the left, so the head falls back to the nearest position (1,
    p = 1/4); at position 1 the mask is empty.
    """
    if side not in ("left", "right"):
        raise NetworkValidationError(f"head {name!r}: side={side!r} must be 'left' or 'right'")
    if not isinstance(where, Mapping) or not where:
        raise NetworkValidationError(
            f"head {name!r}: where={where!r} must be a non-empty mapping {{dim: weight}} giving the "
            "property φ_j = Σ weight·x_j[dim] + where_bias, e.g. {'b': 1}"
        )
    if position_dim in where:
        raise NetworkValidationError(
            f"head {name!r}: the position feature {position_dim!r} appears in where={dict(where)!r}; "
            "the property must be a 0/1 value that does not depend on the position feature"
        )
    sign = 1 if side == "left" else -1
    if strict:
        mask: Mask = "strict_causal" if side == "left" else "strict_anticausal"
    else:
        mask = "causal" if side == "left" else "anticausal"
    two = Fraction(2)
    row = {d: two * as_fraction(w, f"where[{d!r}]") for d, w in where.items()}
    row[position_dim] = Fraction(sign)
    return Head(
        name=name,
        query=constant({"score": 1}),
        key=affine({"score": row}, bias={"score": two * as_fraction(where_bias, "where_bias")}),
        value=_value_map(name, values),
        normalizer=Hardmax(tie="average"),
        mask=mask,
    )


def select_position(
    name: str,
    *,
    key_dim: str,
    values: Values,
    query_dim: str | None = None,
    query: Number | None = None,
    mask: Mask = "none",
    tie: TieRule = "average",
) -> Head:
    """The position j whose key feature k_j = x_j[key_dim] equals the query q_i; write its values.

    q_i is the query position's own ``x_i[query_dim]`` (attend to position k: ``query_dim`` holds
    k) or the constant ``query`` (the first position: ``key_dim="i"``, ``query=0``). The score of
    key j is ``−|k_j − q_i|`` (``neg_abs_dot`` of query (1, −q_i) and key (k_j, 1)), with
    hardmax over the positions the mask allows. So the head computes exactly:

    - if one allowed position has k_j = q_i, that position's values;
    - if several have it, their average (``tie="average"``) or the leftmost / rightmost one;
    - if none has it, the position(s) with k_j nearest to q_i, split by ``tie`` likewise.

    Ties therefore happen only when keys repeat (e.g. a key dim that is the same at several
    positions) or when there is no exact match and two keys are equally near. A key that is a
    distinct function of the position (``i``, ``i/n``, ``I[i=n-1]`` with the query 1) and a
    query that some position attains gives exactly one position.

    >>> from netproof.symbolic import Network, classifier, token_embedding
    >>> from netproof.symbolic.exact import run
    >>> first = select_position("first", key_dim="i", query=0, values={"w1": {"is1": 1}})
    >>> net = Network(name="first", dims=("is1", "i", "w1"),
    ...               embedding=token_embedding("01", {"0": {}, "1": {"is1": 1}}, positional={"i": "i"}),
    ...               layers=sublayers(attention("look", first)), readout=classifier("w1", position=-1))
    >>> run(net, "1000").accepted, run(net, "0111").accepted
    (True, False)
    """
    if (query_dim is None) == (query is None):
        raise NetworkValidationError(
            f"head {name!r}: give exactly one of query_dim (a dim of the query position, e.g. "
            "query_dim='k') and query (a constant, e.g. query=0 for the first position)"
        )
    _check_mask(name, mask, MASKS)
    if tie not in TIE_RULES:
        raise NetworkValidationError(
            f"head {name!r}: tie={tie!r} is not one of {', '.join(TIE_RULES)}"
        )
    if query_dim is not None:
        q = affine({"key": {}, "one": {query_dim: -1}}, bias={"key": 1}, outputs=("key", "one"))
    else:
        q = constant({"key": 1, "one": -as_fraction(query, "query")})
    return Head(
        name=name,
        query=q,
        key=affine({"key": {key_dim: 1}}, bias={"one": 1}, outputs=("key", "one")),
        value=_value_map(name, values),
        normalizer=Hardmax(tie=tie),
        scoring="neg_abs_dot",
        mask=mask,
    )


def attention(
    name: str, *heads: Head, output: Mapping[str, Mapping[str, Number]] | None = None
) -> AttentionLayer:
    """An attention layer of parallel ``heads``. Without ``output`` each head writes its own
    residual dims (disjoint); with ``output`` (the paper's W^O, ``{residual_dim: {head_dim: w}}``)
    the heads write head-local names that ``output`` combines."""
    if not heads:
        raise NetworkValidationError(
            f"attention layer {name!r} has no heads; give at least one (an attention sublayer that "
            "does nothing is AttentionLayer(name=..., heads=()))"
        )
    for h in heads:
        if not isinstance(h, Head):
            raise NetworkValidationError(
                f"attention layer {name!r}: {h!r} has type {type(h).__name__}, not Head; build heads with "
                "uniform_average, nearest or select_position"
            )
    return AttentionLayer(
        name=name, heads=tuple(heads), output=None if output is None else affine(output)
    )


def sublayers(*blocks: Block, residual: bool = True) -> tuple[Sublayer, ...]:
    """Each block as a :class:`~netproof.symbolic.ir.Sublayer` (with the residual connection: a block adds
    what it writes to the residual stream, so write dims that are 0 before)."""
    for b in blocks:
        if not isinstance(b, (AttentionLayer, FFN)):
            raise NetworkValidationError(
                f"sublayers: {b!r} has type {type(b).__name__}; give AttentionLayers (attention(...)) and "
                "FFNs (boolean_ffn, threshold, ffn)"
            )
    return tuple(Sublayer(block=b, residual=residual) for b in blocks)


# --------------------------------------------------------------------------- FFN gadgets


def boolean_ffn(name: str, outputs: Mapping[str, Node | str]) -> FFN:
    """A ReLU FFN writing each dim of ``outputs`` with the value of its gate circuit
    (:mod:`netproof.symbolic.gates`; a string is the residual dim of that name, i.e. ``var(name)``).

    On 0/1 inputs AND, OR, NOT, NOR, XNOR and SAME give 0/1 exactly (Yao et al. 2021, Lemma
    A.1); GT(x, y, c) is 1 if x ≥ y + c and 0 if x ≤ y, EQ(x, y, c) is 1 if x = y and 0 if
    |x − y| ≥ c. In a residual sublayer the outputs are added to the stream: write fresh dims.

    >>> from netproof.symbolic import Network, classifier, token_embedding
    >>> from netproof.symbolic.exact import run
    >>> xor = boolean_ffn("xor", {"y": NOT(XNOR(var("a"), var("b")))})
    >>> net = Network(name="xor", dims=("a", "b", "y"),
    ...               embedding=token_embedding(("00", "01", "10", "11"),
    ...                                         {"00": {}, "01": {"b": 1}, "10": {"a": 1}, "11": {"a": 1, "b": 1}}),
    ...               layers=sublayers(xor), readout=classifier("y", bias="-1/2"))
    >>> [run(net, [w]).accepted for w in ("00", "01", "10", "11")]
    [False, True, True, False]
    """
    if not isinstance(outputs, Mapping) or not outputs:
        raise NetworkValidationError(
            f"ffn {name!r}: outputs={outputs!r} must be a non-empty mapping {{dim: gate circuit}}, "
            "e.g. {'y': AND(var('a'), var('b'))}"
        )
    circuits: dict[str, Node] = {}
    for dim, node in outputs.items():
        circuit = var(node) if isinstance(node, str) else node
        _check_circuit(name, dim, circuit)
        circuits[dim] = circuit
    return compile_ffn(name, circuits)


def _check_circuit(name: str, dim: str, node: object) -> None:
    """Every node of the circuit is a gate node (a residual dim inside a gate is ``var(dim)``)."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            continue
        if isinstance(x, Relu):
            stack.append(x.arg)
        elif isinstance(x, Lin):
            stack.extend(sub for sub, _c in x.terms)
        else:
            hint = f" (write var({x!r}))" if isinstance(x, str) else ""
            raise NetworkValidationError(
                f"ffn {name!r}: outputs[{dim!r}] contains {x!r}, which has type {type(x).__name__}, not a gate "
                f"circuit{hint}; build circuits from var('dim'), AND, OR, NOT, GT, EQ (symbolic.gates)"
            )


def threshold(name: str, dim: str, c: Number, out: str, *, margin: Number | None = None) -> FFN:
    """An FFN writing ``out = I[x > c]`` for x = x[dim].

    Without ``margin`` it uses the step activation H(z) = I[z > 0]: ``out = H(x − c)``, exact for
    every real x. With ``margin`` = m > 0 it is the ReLU gate GT(x, c; m) of Yao et al. 2021,
    Lemma A.1 (no step function): 1 if x ≥ c + m, 0 if x ≤ c, linear in between, so it equals
    I[x > c] exactly when no value of x falls strictly between c and c + m.

    >>> from netproof.symbolic import Network, classifier, token_embedding
    >>> from netproof.symbolic.exact import run
    >>> net = Network(name="t", dims=("x", "y"),
    ...               embedding=token_embedding("abc", {"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 3}}),
    ...               layers=sublayers(threshold("big", "x", 2, "y", margin=1)), readout=classifier("y"))
    >>> [str(run(net, w).value("big", 0, "y")) for w in "abc"]
    ['0', '0', '1']
    """
    cq = as_fraction(c, "c")
    if margin is None:
        pre = f"{dim}-({cq})"
        return ffn(name, affine({pre: {dim: 1}}, bias={pre: -cq}), STEP, affine({out: {pre: 1}}))
    m = as_fraction(margin, "margin")
    if m <= 0:
        raise NetworkValidationError(
            f"ffn {name!r}: margin={m} must be > 0 (GT(x, c; m) is 1 from c + m on); leave margin "
            "unset for the exact step function"
        )
    return compile_ffn(name, {out: GT(var(dim), const(cq), m)})
