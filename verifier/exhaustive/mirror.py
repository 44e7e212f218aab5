"""The mirror invariant (Chiang & Cholak §3.1): every residual state is [u; −u]. Proved
structurally on the IR (for every word of every length) when the network is closed under
x ↦ [x; −x]; otherwise refuted by evaluating words in rigorous intervals.

May import: the claims vocabulary, :mod:`netproof.symbolic`, and this package's
:mod:`~netproof.verifier.exhaustive.job` and :mod:`~netproof.verifier.exhaustive.wordwise`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from netproof.symbolic import Affine, AttentionLayer, Convolution, Network, TokenEmbedding
from netproof.symbolic.evaluation import Trace
from netproof.verifier.claims import MirrorInvariant, Proved, Refuted, Unknown, Verdict, Word

from .job import Job, Progress, enclose, format_value, interval_sign, show_word
from .wordwise import guard

__all__ = ["check_mirror"]


def _mirror_structure(net: Network, pre: str) -> str | None:
    """None if the IR is closed under x ↦ [x; −x]; else the first place where it is not.

    Every check runs both ways (from d to −d and from −d to d), so a write or a positional
    feature on one side only is caught.
    """
    dims = set(net.dims)

    def mirror(d: str) -> str:
        return d[len(pre) :] if d.startswith(pre) else pre + d

    for d in net.dims:
        if mirror(d) not in dims:
            return f"dim {d!r} has no mirror {mirror(d)!r}"
    emb = net.embedding
    if not isinstance(emb, TokenEmbedding):
        return "not a token embedding"
    for token, row in emb.table:
        vals = dict(row)
        for d in net.dims:
            if vals.get(mirror(d), Fraction(0)) != -vals.get(d, Fraction(0)):
                return f"embedding of {token!r}: {mirror(d)} = {vals.get(mirror(d), 0)} but {d} = {vals.get(d, 0)}"
    pos: dict[tuple[str, str], Fraction] = {}
    for d, f, c in emb.positional:
        pos[(d, f)] = pos.get((d, f), Fraction(0)) + c
    for (d, f), c in pos.items():
        if pos.get((mirror(d), f), Fraction(0)) != -c:
            return (
                f"positional feature {f!r}: {d} gets {c}·{f} but {mirror(d)} does not get {-c}·{f}"
            )

    def mirrored(a: Affine) -> str | None:
        rows = dict(zip(a.outputs, zip(a.weights, a.bias, strict=True), strict=True))
        for o, (w, b) in rows.items():
            m = mirror(o)
            if m not in rows:
                return f"{o!r} is written but {m!r} is not"
            mw, mb = rows[m]
            if tuple(-x for x in w) != mw or mb != -b:
                return f"{m!r} is not written as −({o})"
        return None

    for sub in net.layers:
        block = sub.block
        if sub.post_ln is not None and sub.post_ln.over is not None:
            return f"{block.name}: layer norm over a sub-vector"
        if isinstance(block, Convolution):
            return f"{block.name}: a convolution block (not checked structurally)"
        if isinstance(block, AttentionLayer):
            maps = [block.output] if block.output is not None else [h.value for h in block.heads]
        else:
            maps = [block.steps[-1]] if block.steps else []  # type: ignore[list-item]
        for a in maps:
            assert isinstance(a, Affine)
            fault = mirrored(a)
            if fault is not None:
                return f"{block.name}: {fault}"
    return None


def check_mirror(
    job: Job, claim: MirrorInvariant, bound: int, progress: Progress | None
) -> Verdict:
    """A :class:`MirrorInvariant` claim: proved on the IR, else refuted (or left Unknown) by
    interval evaluation."""
    net = job.network(0)
    pre = claim.mirror_prefix
    fault = _mirror_structure(net, pre)
    if fault is None:
        return Proved(
            "structural (IR)",
            1,
            "embedding, every written map and every layer norm are closed under x ↦ [x; −x], so every "
            "state is [u; −u] for every word of every length",
        )
    alphabet = job.alphabet
    pairs = [(d, pre + d) for d in net.dims if not d.startswith(pre) and pre + d in net.dims]

    def body(w: Word, trace: Trace[Any]) -> Verdict | None:
        for state in trace.states[1:]:
            for t in range(trace.n):
                for d, m in pairs:
                    total = enclose(trace.value(state.label, t, d)) + enclose(
                        trace.value(state.label, t, m)
                    )
                    if interval_sign(total) in (1, -1):
                        return Refuted(
                            "exhaustive (interval)",
                            f"on {show_word(w, alphabet)} after {state.label!r} at position {trace.positions[t]}: "
                            f"{d} = {format_value(trace.value(state.label, t, d))} but {m} = {format_value(trace.value(state.label, t, m))} "
                            f"(structural cause: {fault})",
                            w,
                            {
                                d: format_value(trace.value(state.label, t, d)),
                                m: format_value(trace.value(state.label, t, m)),
                            },
                        )
        return None

    verdict = guard(job, claim, "interval", bound, progress, body)
    if isinstance(verdict, Proved):
        return Unknown(
            "structural (IR)",
            f"the IR is not mirror-closed ({fault}) but no word up to {bound} shows it",
        )
    return verdict
