"""TransformerLens's layout (``HookedTransformer``: ``embed.W_E``, ``pos_embed.W_pos``,
``blocks.{l}.attn.W_Q [heads, d_model, d_head]`` …, ``unembed.W_U``), mapped onto the canonical
layout (:mod:`.canonical`): one small weight map, like TransformerLens's own weight conversions.

The source is a config (``n_layers``, ``d_model``, ``n_heads``, ``d_head``, ``d_mlp``,
``act_fn`` ``relu``/``gelu``, ``attention_dir`` ``causal``/``bidirectional``,
``normalization_type`` ``LN``/``LNPre``/None, ``eps``, ``attn_scale``, ``attn_only``,
``positional_embedding_type`` ``standard``) and a state dict with TransformerLens's key names: a
live ``HookedTransformer`` (``model.cfg``, ``model.state_dict()``), or a dump file
(:data:`DUMP_FORMAT`, see docs/models.md) such as ``examples/tracr_dump.py`` writes for a compiled
tracr model. The readout is one logit: the unembedding's ``accept`` logit minus its ``reject``
logit (or the ``accept`` logit alone) at one position.

Only the standard library here; tensors are read through :mod:`.torch_module`'s exact helpers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from .canonical import Act, Add, Attend, EmbRow, Graph, HeadSpec, ImporterError, Lin, Norm, Readout

__all__ = ["DUMP_FORMAT", "graph_of_transformerlens"]

DUMP_FORMAT = "netproof-transformerlens"
"""The ``format`` of a dump file: ``{"format", "version": 1, "cfg", "state_dict", "vocab",
"alphabet", "prefix", "suffix", "readout": {"position", "accept", "reject"}, "recorded"?}``."""


def _cfg(cfg: Any) -> dict[str, Any]:
    if isinstance(cfg, Mapping):
        return dict(cfg)
    keys = (
        "n_layers",
        "d_model",
        "n_heads",
        "d_head",
        "d_mlp",
        "act_fn",
        "attention_dir",
        "normalization_type",
        "eps",
        "attn_scale",
        "use_attn_scale",
        "attn_only",
        "positional_embedding_type",
        "d_vocab",
        "n_ctx",
    )
    return {k: getattr(cfg, k) for k in keys if hasattr(cfg, k)}


def graph_of_transformerlens(
    cfg: Any,
    state_dict: Mapping[str, Any],
    *,
    vocab: Sequence[str],
    alphabet: Sequence[str],
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    positions: int,
    accept: int,
    reject: int | None = None,
    position: int = -1,
) -> Graph:
    """The canonical graph of a TransformerLens-layout model (see the module docstring)."""
    from .torch_module import exact, matrix

    c = _cfg(cfg)
    where = "TransformerLens model"

    def need(key: str) -> Any:
        if key not in state_dict:
            raise ImporterError(f"{where}: the state dict has no {key!r}")
        return state_dict[key]

    for key, ok in (
        ("positional_embedding_type", ("standard", None)),
        ("normalization_type", ("LN", "LNPre", None)),
        ("attention_dir", ("causal", "bidirectional")),
    ):
        if c.get(key) not in ok:
            raise ImporterError(
                f"{where}: cfg.{key}={c.get(key)!r} is not supported (supported: {ok})"
            )
    act = {"relu": "relu", "gelu": "gelu"}.get(str(c.get("act_fn", "relu")))
    if act is None and not c.get("attn_only"):
        raise ImporterError(
            f"{where}: cfg.act_fn={c.get('act_fn')!r} (relu and the exact gelu only; gelu_new is "
            "the tanh approximation)"
        )
    L, d, H, dh = int(c["n_layers"]), int(c["d_model"]), int(c["n_heads"]), int(c["d_head"])
    eps = Fraction(float(c.get("eps", 1e-5)))
    ln_kind = c.get("normalization_type")
    mask = "causal" if c.get("attention_dir") == "causal" else "none"
    scale = c.get("attn_scale", math.sqrt(dh))
    if c.get("use_attn_scale") is False:
        scale = 1.0
    sqrt_d, coef = (
        (dh, Fraction(1)) if float(scale) == math.sqrt(dh) else (None, 1 / Fraction(float(scale)))
    )
    vocab = tuple(str(v) for v in vocab)
    g = Graph(
        vocab=vocab,
        alphabet=tuple(alphabet),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        positions=positions,
        source="imported from a TransformerLens-layout model (netproof.symbolic.importers)",
    )
    ids = sorted({vocab.index(t) for t in (*alphabet, *prefix, *suffix)})
    W_E, W_pos = need("embed.W_E"), need("pos_embed.W_pos")
    if positions > W_pos.shape[0]:
        raise ImporterError(
            f"{where}: {positions} positions are needed but W_pos has {W_pos.shape[0]} (n_ctx)"
        )
    rows = [EmbRow() for _ in range(d)]
    for t in ids:
        for j, v in enumerate(exact(W_E[t])):
            rows[j].tokens[t] = v
    for p in range(positions):
        for j, v in enumerate(exact(W_pos[p])):
            rows[j].positions[p] = v
    x = g.emb_value("resid", rows)

    def norm(key: str, y: tuple[str, ...]) -> tuple[str, ...]:
        if ln_kind is None:
            return y
        one, zero = (Fraction(1),) * d, (Fraction(0),) * d
        gamma = tuple(exact(need(f"{key}.w"))) if ln_kind == "LN" else one
        beta = tuple(exact(need(f"{key}.b"))) if ln_kind == "LN" else zero
        outs = g.fresh(key, d)
        g.add(Norm(eps, y, outs, gamma, beta))
        return outs

    def add(a: tuple[str, ...], b: tuple[str, ...], stem: str) -> tuple[str, ...]:
        outs = g.fresh(stem, len(a))
        g.add(Add(a, b, outs))
        return outs

    for layer in range(L):
        pre = f"blocks.{layer}"
        y = norm(f"{pre}.ln1", x)
        heads = []
        proj: dict[str, list[tuple[str, ...]]] = {}
        for part in "QKV":
            W, b = need(f"{pre}.attn.W_{part}"), need(f"{pre}.attn.b_{part}")
            proj[part] = []
            for h in range(H):
                outs = g.fresh(f"{pre}.attn.{part.lower()}{h}", dh)
                g.add(Lin(y, outs, matrix(W[h].T), tuple(exact(b[h]))))
                proj[part].append(outs)
        for h in range(H):
            heads.append(
                HeadSpec(
                    proj["Q"][h],
                    proj["K"][h],
                    proj["V"][h],
                    g.fresh(f"{pre}.attn.z{h}", dh),
                    coef,
                    sqrt_d,
                    mask,
                )
            )
        g.add(Attend(tuple(heads)))
        W_O, b_O = need(f"{pre}.attn.W_O"), need(f"{pre}.attn.b_O")
        cat = tuple(n for hd in heads for n in hd.outputs)
        attn_out = g.fresh(f"{pre}.attn.out", d)
        g.add(Lin(cat, attn_out, matrix(W_O.reshape(H * dh, d).T), tuple(exact(b_O))))
        x = add(x, attn_out, f"{pre}.resid_mid")
        if not c.get("attn_only"):
            y = norm(f"{pre}.ln2", x)
            W_in, b_in = need(f"{pre}.mlp.W_in"), need(f"{pre}.mlp.b_in")
            W_out, b_out = need(f"{pre}.mlp.W_out"), need(f"{pre}.mlp.b_out")
            pre_act = g.fresh(f"{pre}.mlp.pre", W_in.shape[1])
            g.add(Lin(y, pre_act, matrix(W_in.T), tuple(exact(b_in))))
            post = g.fresh(f"{pre}.mlp.post", W_in.shape[1])
            g.add(Act(act or "relu", pre_act, post))
            mlp_out = g.fresh(f"{pre}.mlp.out", d)
            g.add(Lin(post, mlp_out, matrix(W_out.T), tuple(exact(b_out))))
            x = add(x, mlp_out, f"{pre}.resid_post")
    x = norm("ln_final", x)
    W_U, b_U = need("unembed.W_U"), need("unembed.b_U")
    wa, ba = exact(W_U[:, accept]), exact(b_U[accept : accept + 1])[0]
    if reject is not None:
        wr, br = exact(W_U[:, reject]), exact(b_U[reject : reject + 1])[0]
        wa, ba = [p - q for p, q in zip(wa, wr, strict=True)], ba - br
    g.readout = Readout(x, tuple(wa), ba, position)
    return g
