"""The one shared path from the canonical layout (:mod:`.canonical`) into the IR: :func:`lower`.

Every canonical value that must be held gets its own residual dims (named after the value); a
chain of affine maps, activations and layer norms whose intermediate values are read once, by the
next op, becomes one :class:`~netproof.symbolic.ir.FFN`; the q/k/v maps read only by one
attention become its heads' query/key/value maps and a map read only by the next op after an
attention its output map; a sum ``a + f(…)`` whose ``a`` is not read afterwards becomes ``f``'s
sublayer writing ``a``'s dims with the residual connection (the transformer's residual stream).
Nothing here depends on where a graph came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from netproof.symbolic.ir import (
    FFN,
    Activation,
    Affine,
    AttentionLayer,
    Classifier,
    FFNStep,
    Head,
    LayerNorm,
    Network,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
)

from .canonical import (
    Act,
    Add,
    Attend,
    Graph,
    ImporterError,
    Lin,
    MeanPool,
    Norm,
    Op,
    reads,
)

__all__ = ["lower"]

_ZERO, _ONE = Fraction(0), Fraction(1)


def _identity(inputs: tuple[str, ...], outputs: tuple[str, ...]) -> Affine:
    n = len(inputs)
    return Affine(
        inputs=inputs,
        outputs=outputs,
        weights=tuple(tuple(_ONE if i == j else _ZERO for j in range(n)) for i in range(n)),
        bias=(_ZERO,) * n,
    )


def _affine(lin: Lin, alias: dict[str, str], outputs: tuple[str, ...] | None = None) -> Affine:
    return Affine(
        inputs=tuple(alias.get(n, n) for n in lin.inputs),
        outputs=lin.outputs if outputs is None else outputs,
        weights=lin.weights,
        bias=lin.bias,
    )


def _rows(lin: Lin, names: tuple[str, ...], alias: dict[str, str]) -> Affine:
    """The rows of ``lin`` that compute ``names``, as an affine map of ``lin``'s inputs."""
    at = {o: k for k, o in enumerate(lin.outputs)}
    return Affine(
        inputs=tuple(alias.get(n, n) for n in lin.inputs),
        outputs=names,
        weights=tuple(lin.weights[at[n]] for n in names),
        bias=tuple(lin.bias[at[n]] for n in names),
    )


@dataclass(slots=True)
class _Pending:
    """A block being built: an FFN chain (canonical ops applied in order) or an attention."""

    ops: list[Op]
    outputs: tuple[str, ...]
    out_map: Lin | None = None  # an attention's output map
    extra: list[str] = field(default_factory=list)
    at: int = -1  # the index of its last op


def lower(g: Graph, *, name: str, params: tuple[tuple[str, str], ...] = ()) -> Network:
    """The IR network of the canonical graph ``g`` (see the module docstring)."""
    if g.readout is None:
        raise ImporterError("the graph has no readout (one logit at one position)")
    ops = g.ops
    end = len(ops)
    users: dict[str, set[int]] = {}
    for i, op in enumerate(ops):
        for n in reads(op):
            users.setdefault(n, set()).add(i)
    for n in g.readout.inputs:
        users.setdefault(n, set()).add(end)
    # q/k/v maps read by one attention only: its heads' maps
    absorbed: dict[int, int] = {}
    producer: dict[str, int] = {}
    for i, op in enumerate(ops):
        for o in op.outputs:
            producer[o] = i
    for i, op in enumerate(ops):
        if isinstance(op, Lin):
            us = set().union(*(users.get(o, set()) for o in op.outputs))
            if len(us) == 1:
                (j,) = us
                if j < end and isinstance(ops[j], Attend):
                    absorbed[i] = j
    eff: dict[int, set[str]] = {i: set() for i in range(end + 1)}
    for i, op in enumerate(ops):
        if i in absorbed:  # a Lin (only those are absorbed)
            eff[absorbed[i]] |= set(reads(op))
            continue
        for n in reads(op):
            if not (n in producer and producer[n] in absorbed):
                eff[i].add(n)
    eff[end] |= set(g.readout.inputs)
    last: dict[str, int] = {}
    for i in range(end + 1):
        for n in eff[i]:
            last[n] = max(last.get(n, -1), i)

    emb_dims = [n for n in g.emb if users.get(n) or any(n in eff[i] for i in eff)]
    dims: list[str] = list(emb_dims)
    alias: dict[str, str] = {}
    subs: list[Sublayer] = []
    count = [0]

    def block_name(kind: str) -> str:
        count[0] += 1
        return f"{kind}{count[0]}"

    def head_affine(names: tuple[str, ...], outputs: tuple[str, ...] | None = None) -> Affine:
        # a head's query/key/value: the absorbed map's rows, else the dims themselves
        src = {producer[n] for n in names if n in producer}
        a = _identity(tuple(alias.get(n, n) for n in names), names)
        if len(src) == 1:
            (i,) = src
            if i in absorbed and isinstance(ops[i], Lin):
                a = _rows(ops[i], names, alias)  # type: ignore[arg-type]
        if outputs is None:
            return a
        return Affine(inputs=a.inputs, outputs=outputs, weights=a.weights, bias=a.bias)

    def emit(p: _Pending, target: tuple[str, ...], residual_into: bool) -> None:
        first = p.ops[0]
        if isinstance(first, (Attend, MeanPool)):
            heads = []
            if isinstance(first, MeanPool):
                x0 = alias.get(first.inputs[0], first.inputs[0])
                zero = Affine(inputs=(x0,), outputs=("~q",), weights=((_ZERO,),), bias=(_ZERO,))
                value = _identity(tuple(alias.get(n, n) for n in first.inputs), first.outputs)
                specs = [("mean", zero, zero, value, Scale(), "none")]
            else:
                specs = [
                    (
                        f"h{k}",
                        head_affine(h.query, tuple(f"q{j}" for j in range(len(h.query)))),
                        head_affine(h.key, tuple(f"q{j}" for j in range(len(h.key)))),
                        head_affine(h.value, h.outputs),
                        Scale(coef=h.coef, sqrt_d=h.sqrt_d),
                        h.mask,
                    )
                    for k, h in enumerate(first.heads)
                ]
            outs = first.outputs
            rename = dict(zip(outs, target, strict=True)) if p.out_map is None else {}
            for hname, q, k, v, scale, mask in specs:
                v = Affine(
                    inputs=v.inputs,
                    outputs=tuple(rename.get(o, o) for o in v.outputs),
                    weights=v.weights,
                    bias=v.bias,
                )
                heads.append(
                    Head(
                        name=hname,
                        query=q,
                        key=k,
                        value=v,
                        normalizer=Softmax(c=_ONE),
                        scale=scale,
                        mask=mask,  # type: ignore[arg-type]
                    )
                )
            output = None
            if p.out_map is not None:
                output = Affine(
                    inputs=p.out_map.inputs,
                    outputs=target,
                    weights=p.out_map.weights,
                    bias=p.out_map.bias,
                )
            block: AttentionLayer | FFN = AttentionLayer(
                name=block_name("attention"), heads=tuple(heads), output=output
            )
        else:
            steps: list[FFNStep] = []
            cur: tuple[str, ...] = tuple(alias.get(n, n) for n in reads(first))
            for op in p.ops:
                if isinstance(op, Lin):
                    steps.append(
                        Affine(
                            inputs=tuple(alias.get(n, n) for n in op.inputs),
                            outputs=op.outputs,
                            weights=op.weights,
                            bias=op.bias,
                        )
                    )
                    cur = op.outputs
                elif isinstance(op, Add):
                    ins = tuple(dict.fromkeys(alias.get(n, n) for n in (*op.a, *op.b)))
                    at = {n: k for k, n in enumerate(ins)}
                    w = [[_ZERO] * len(ins) for _ in op.outputs]
                    for r, (a, b) in enumerate(zip(op.a, op.b, strict=True)):
                        w[r][at[alias.get(a, a)]] += 1
                        w[r][at[alias.get(b, b)]] += 1
                    steps.append(
                        Affine(
                            inputs=ins,
                            outputs=op.outputs,
                            weights=tuple(tuple(r) for r in w),
                            bias=(_ZERO,) * len(op.outputs),
                        )
                    )
                    cur = op.outputs
                elif isinstance(op, Act):
                    prev = steps[-1] if steps else None
                    if isinstance(prev, Affine) and prev.outputs == op.inputs:
                        steps[-1] = Affine(
                            inputs=prev.inputs,
                            outputs=op.outputs,
                            weights=prev.weights,
                            bias=prev.bias,
                        )
                    else:
                        steps.append(
                            _identity(tuple(alias.get(n, n) for n in op.inputs), op.outputs)
                        )
                    steps.append(Activation(kind=op.kind))  # type: ignore[arg-type]
                    cur = op.outputs
                else:
                    assert isinstance(op, Norm)  # the chain holds position-wise maps only
                    prev = steps[-1] if steps else None
                    if isinstance(prev, Affine) and prev.outputs == op.inputs:
                        cur = op.inputs
                    else:
                        tmp = tuple(f"{o}~in" for o in op.outputs)
                        steps.append(_identity(tuple(alias.get(n, n) for n in op.inputs), tmp))
                        cur = tmp
                    steps.append(LayerNorm(eps=op.eps, over=cur))
                    n = len(cur)
                    steps.append(
                        Affine(
                            inputs=cur,
                            outputs=op.outputs,
                            weights=tuple(
                                tuple(op.gamma[i] if i == j else _ZERO for j in range(n))
                                for i in range(n)
                            ),
                            bias=op.beta,
                        )
                    )
                    cur = op.outputs
            last_step = steps[-1]
            if isinstance(last_step, Affine):
                steps[-1] = Affine(
                    inputs=last_step.inputs,
                    outputs=target,
                    weights=last_step.weights,
                    bias=last_step.bias,
                )
            else:
                steps.append(_identity(cur, target))
            block = FFN(name=block_name("ffn"), steps=tuple(steps))
        subs.append(Sublayer(block=block, residual=True))

    def in_place_norm(p: _Pending) -> bool:
        """A layer norm whose input is read by nothing after it overwrites its input's dims:
        x + (γ·LN(x) + β − x), the FFN carrying a copy of x past the norm of the other copy."""
        op = p.ops[0]
        if len(p.ops) != 1 or not isinstance(op, Norm):
            return False
        x = tuple(alias.get(n, n) for n in op.inputs)
        if len(set(x)) != len(x) or not all(n in dims for n in x):
            return False
        if not all(last.get(n, -1) == p.at for n in op.inputs):
            return False
        k = len(x)
        tmp = tuple(f"{o}~in" for o in op.outputs)
        keep = tuple(f"{o}~x" for o in op.outputs)
        steps: list[FFNStep] = [
            Affine(
                inputs=x,
                outputs=tmp + keep,
                weights=tuple(
                    tuple(_ONE if j == r % k else _ZERO for j in range(k)) for r in range(2 * k)
                ),
                bias=(_ZERO,) * (2 * k),
            ),
            LayerNorm(eps=op.eps, over=tmp),
            Affine(
                inputs=tmp + keep,
                outputs=x,
                weights=tuple(
                    tuple(
                        op.gamma[r] if j == r else (-_ONE if j == k + r else _ZERO)
                        for j in range(2 * k)
                    )
                    for r in range(k)
                ),
                bias=op.beta,
            ),
        ]
        subs.append(Sublayer(block=FFN(name=block_name("ffn"), steps=tuple(steps)), residual=True))
        for o, n in zip(op.outputs, x, strict=True):
            alias[o] = n
        return True

    def materialize(p: _Pending) -> None:
        if in_place_norm(p):
            return
        dims.extend(p.outputs)
        emit(p, p.outputs, False)

    pending: _Pending | None = None
    for i, op in enumerate(ops):
        if i in absorbed:
            continue
        if pending is not None:
            only_here = all(users.get(o, set()) == {i} for o in pending.outputs)
            pend_first = pending.ops[0]
            is_attn = isinstance(pend_first, (Attend, MeanPool))
            if only_here and isinstance(op, Add) and op.b == pending.outputs:
                a = tuple(alias.get(n, n) for n in op.a)
                if (
                    len(set(a)) == len(a)
                    and all(n in dims for n in a)
                    and all(last.get(n, -1) == i for n in op.a)
                ):
                    emit(pending, a, True)
                    for o, n in zip(op.outputs, a, strict=True):
                        alias[o] = n
                    pending = None
                    continue
            if only_here and isinstance(op, Add) and op.a == pending.outputs:
                b = tuple(alias.get(n, n) for n in op.b)
                if (
                    len(set(b)) == len(b)
                    and all(n in dims for n in b)
                    and all(last.get(n, -1) == i for n in op.b)
                ):
                    emit(pending, b, True)
                    for o, n in zip(op.outputs, b, strict=True):
                        alias[o] = n
                    pending = None
                    continue
            if (
                only_here
                and isinstance(op, Lin)
                and is_attn
                and pending.out_map is None
                and set(op.inputs) <= set(pending.outputs)
            ):
                pending = _Pending(pending.ops, op.outputs, out_map=op, at=i)
                continue
            if (
                only_here
                and not is_attn
                and isinstance(op, (Lin, Act, Norm))
                and set(reads(op)) <= set(pending.outputs)
            ):
                pending = _Pending([*pending.ops, op], op.outputs, at=i)
                continue
            materialize(pending)
            pending = None
        pending = _Pending([op], op.outputs, at=i)
    if pending is not None:
        materialize(pending)
    ro = g.readout
    inputs = tuple(alias.get(n, n) for n in ro.inputs)
    missing = [n for n in inputs if n not in dims]
    if missing:
        raise ImporterError(f"the readout reads {missing[:3]}, which no op computes")
    alphabet = g.alphabet
    tokens = tuple(dict.fromkeys((*alphabet, *g.prefix, *g.suffix)))
    ids = {t: k for k, t in enumerate(g.vocab)}
    table = []
    for t in tokens:
        row = []
        for d in emb_dims:
            r = g.emb[d]
            v = r.tokens.get(ids[t], _ZERO) + r.const
            if v:
                row.append((d, v))
        table.append((t, tuple(row)))
    positional = tuple(
        (d, f"I[i={p}]", v) for d in emb_dims for p, v in sorted(g.emb[d].positions.items()) if v
    )
    embedding = TokenEmbedding(
        alphabet=alphabet,
        table=tuple(table),
        positional=positional,
        prefix=g.prefix,
        suffix=g.suffix,
        index_base=0,
    )
    readout = Classifier(
        logit=Affine(inputs=inputs, outputs=("logit",), weights=(ro.weights,), bias=(ro.bias,)),
        position=ro.position,
    )
    return Network(
        name=name,
        dims=tuple(dims),
        embedding=embedding,
        layers=tuple(subs),
        readout=readout,
        params=params,
        reference=g.source,
    )
