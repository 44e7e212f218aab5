"""The kernel's rule for Dyck's nearest-unmatched selections (Yao et al. 2021's Y3), exhaustive.

Each rule is stated with its soundness argument in its docstring; it reads the network file's
network (:mod:`.netfile`) through the kernel's fast path (:class:`.interpret.Exhaustive`), which
keeps every matching head's maximizers at every position when asked (``maxima``).
"""

from __future__ import annotations

from typing import Any

from .interpret import Exhaustive, numbered
from .netfile import KernelError, Refused, sweep

NEAREST = (
    "every matching-layer head with tokens on its side selects exactly one (no score ties): the "
    "nearest unmatched one on its side (the nearest matched one if there is none); the left head "
    "at γ and the right head at ω select none"
)


def _violation(ev: Exhaustive, layers: list[int], cm: int, word: tuple[str, ...]) -> str | None:
    """The first (layer, head, token) where the statement fails on ``word``, or None."""
    ev.maxima = {}
    ev.logit(word)
    for k in layers:
        rows = ev.kept[k - 1] if k > 0 else ev.embedded(word)
        free = [row[cm] == 0 for row in rows]  # unmatched: m = 0 in the rows the layer reads
        name = ev.net.layers[k].block.name
        for h in ev.net.layers[k].block.heads:
            tops = ev.maxima[k, h.name]
            for t in range(ev.n):
                side = range(t - 1, -1, -1) if h.name == "left" else range(t + 1, ev.n)
                want = () if not side else (next((j for j in side if free[j]), side[0]),)
                if tops[t] != want:
                    return (
                        f"{name} head {h.name} at token {t} selects (the keys of maximal score) "
                        f"{list(tops[t])}, the statement {list(want)}"
                    )
    return None


def check_nearest(rec: dict[str, Any], net: Any, max_words: int) -> str:
    """Rule (nearest-unmatched selections, exhaustive; ``NEAREST``): the matching layers are the
    attention sublayers named ``match1``, ``match2``, … (consecutive from 1), each with heads
    named ``left`` (side: the tokens before the query token, nearest first) and ``right`` (the
    tokens after it); a token is unmatched when its dim ``m`` is 0 in the rows the layer reads
    (its input: the embedding for the first sublayer). The heads' maximizers are computed by the
    kernel's fast path: the keys of maximal score among those the head's mask lets it see, all
    of them whatever the tie rule ("exactly one (no score ties)"). If on every word w with
    lo ≤ |w| ≤ hi, at every token t, every matching head's maximizers are exactly the nearest
    unmatched token on its side (else the adjacent token on it) when its side has tokens, and
    none when it has none (the left head at the first token, γ; the right head at the last, ω),
    the statement holds on the bound; the shortlex-first word where it does not refutes it."""
    layers = numbered(net, "match")
    heads = [h.name for k in layers for h in net.layers[k].block.heads]
    if not layers or any(net.layers[k].block.kind != "attention" for k in layers):
        raise Refused("nearest selections of a network without attention sublayers match1..")
    if any(h not in ("left", "right") for h in heads):
        raise Refused(f"matching heads {sorted(set(heads))}: the statement's are left and right")
    if "m" not in net.dims:
        raise KernelError("the network has no dim m")
    cm = net.dims.index("m")

    def fault(n: int) -> Any:
        ev = Exhaustive(net, n, keep=tuple(k - 1 for k in layers if k > 0))
        return lambda w: _violation(ev, layers, cm, w)

    holds = "every matching head selects as stated on all {count} words"
    return sweep(rec, net, max_words, fault, holds)
