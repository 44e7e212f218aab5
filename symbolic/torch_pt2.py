"""A network as a standard PyTorch module: :func:`to_module` and, in one self-contained file,
:func:`save_pt2` (a ``torch.export`` archive); :func:`network_of` reads the exact network back.

The module (:func:`to_module`) holds the tensors of :func:`netproof.symbolic.torch_export.state_dict`
under the same keys (``embedding.table``, ``layers.0.attention.heads.0.W_Q``, …,
``readout.logit.weight``: trainable parameters; layer-norm ``eps`` and the next-symbol
``threshold``: buffers), the layout as JSON in the ``uint8`` buffer ``netproof_layout``, and
the positional features as a float table ``embedding.features[n, i, f]`` (feature ``f`` at
position ``i`` of ``n`` tokens) up to ``max_len`` tokens. ``forward(ids)`` takes token ids
``[batch, n]`` (the token of id ``t`` is ``layout["embedding"]["tokens"][t]``; the specials of
``prefix``/``suffix`` are part of the ids) and returns the classifier's logit ``[batch]`` (accept
iff > 0) or, for a next-symbol readout, the values ``[batch, n, symbols]`` (a symbol may come
next iff its value is >= the ``readout.threshold`` buffer).

**Hardmax is hardmax.** A hardmax head is not a softmax at a large scale (that is another
function): the forward selects the keys whose score is within ``tie_rtol·(1 + |max|)`` of the
largest unmasked score (the float run's rounding; ``tie_rtol`` is 32 machine epsilons, the torch
backend's default), then keeps them all (``average``: weights 1/count), the leftmost or the
rightmost one, as the IR's tie rule says; a query with no unmasked key yields 0 (``empty="zero"``).
A softmax head weighs key j by exp(κ·s_j), κ from a per-length table (``…heads.{h}.kappa[n]``).
Everything else is the layout's semantics (:mod:`netproof.symbolic.torch_export`).

**The file.** :func:`save_pt2` writes ``torch.export.export(module)`` with a dynamic batch and
length (1 … ``max_len`` tokens); plain torch reads it, without netproof:
``torch.export.load(path).module()`` is a module to run, fine-tune (its parameters require
grad) or perturb (``with torch.no_grad(): m.get_parameter(KEY)[r, c] += δ``). Such a module, or
its ``state_dict()`` saved with ``torch.save`` (the layout buffer is part of it), is read back by
:func:`network_of`: each tensor entry becomes its exact Fraction
(:func:`netproof.symbolic.torch_import.from_export`), so an unmodified dyadic export comes back as
the same network (same fingerprint), and a perturbed one as the perturbed network.

**Refused** (:class:`~netproof.symbolic.torch_export.StateDictError`, naming the block and the
fix): a flat (one-position) embedding, a head with ``empty="error"`` under a strict mask (a torch
module has no undefined value), and everything the state dict refuses (relative positions,
convolutions, recurrent networks, encoder–decoders).

Only :func:`layout_of` needs no torch; torch is imported inside functions (the ``torch`` extra).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import MissingExtraError
from .ir import AttentionLayer, Network, TokenEmbedding
from .positional import feature
from .torch_export import StateDictError, layout, state_dict

__all__ = [
    "MODULE_FORMAT",
    "MODULE_FORMAT_VERSION",
    "is_exported",
    "layout_of",
    "load_pt2",
    "network_of",
    "save_module",
    "save_pt2",
    "to_module",
]

MODULE_FORMAT = "netproof-torch-module"
MODULE_FORMAT_VERSION = 1
LAYOUT_BUFFER = "netproof_layout"
TIE_EPS_FACTOR = 32  # as the torch backend's default tie_rtol (symbolic/torch_common.py)
STRICT = ("strict_causal", "strict_anticausal")


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "a network as a torch module needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def _refuse(net: Network) -> None:
    if not isinstance(net.embedding, TokenEmbedding):
        raise StateDictError(
            f"network {net.name!r} has a {type(net.embedding).__name__} (one position); a torch "
            "module reads token sequences: export it as a JSON network file (netproof export) instead"
        )
    for i, sub in enumerate(net.layers):
        if isinstance(sub.block, AttentionLayer):
            for h, head in enumerate(sub.block.heads):
                if head.empty == "error" and head.mask in STRICT:
                    raise StateDictError(
                        f"network.layers[{i}].block.heads[{h}] (head {head.name!r}) has "
                        f"empty='error' with mask {head.mask!r}: a torch module has no undefined "
                        "value for a query with no key; rebuild the head with empty='zero' or "
                        "export a JSON network file (netproof export) instead"
                    )


def _kappa(scale: Mapping[str, Any], nz: Mapping[str, Any], n: int) -> float:
    """κ(n) of a softmax head as a float (see the torch_export layout)."""
    k = float(Fraction(scale["coef"]))
    if scale["sqrt_d"]:
        k /= math.sqrt(scale["sqrt_d"])
    if scale["times_n"]:
        k *= n
    if scale["log_n"]:
        k *= math.log(n) if n > 0 else 0.0
    k *= math.log(float(Fraction(nz["r"]))) if nz["r"] is not None else float(Fraction(nz["c"]))
    return k


def _module_class(torch: Any) -> Any:
    nn = torch.nn

    class NetworkModule(nn.Module):  # type: ignore[misc,name-defined]
        """A netproof network as torch code over its tensors (see :mod:`netproof.symbolic.torch_pt2`)."""

        def __init__(self, meta: Mapping[str, Any], tensors: Mapping[str, Any]) -> None:
            super().__init__()
            lay = meta["layout"]
            self.meta = dict(meta)
            dtype = next(iter(tensors.values())).dtype
            raw = json.dumps(meta, sort_keys=True).encode()
            self.register_buffer(LAYOUT_BUFFER, torch.tensor(list(raw), dtype=torch.uint8))
            for key, t in tensors.items():
                *path, leaf = key.split(".")
                mod: Any = self
                for part in path:
                    if not hasattr(mod, part):
                        mod.add_module(part, nn.Module())
                    mod = getattr(mod, part)
                if leaf in ("eps", "threshold"):
                    mod.register_buffer(leaf, t.clone())
                else:
                    mod.register_parameter(leaf, nn.Parameter(t.clone()))
            dims = lay["dims"]
            self.index = {d: i for i, d in enumerate(dims)}
            feats = [f["name"] for f in lay["embedding"]["positional_features"]]
            max_len = int(meta["max_len"])
            base = lay["embedding"]["index_base"]
            table = torch.zeros(max_len + 1, max_len, max(1, len(feats)), dtype=dtype)
            for n in range(1, max_len + 1):
                for i in range(n):
                    for f, name in enumerate(feats):
                        table[n, i, f] = float(feature(name)(base + i, n))
            self.embedding.register_buffer("features", table)
            self.tie_rtol = TIE_EPS_FACTOR * torch.finfo(dtype).eps
            for i, entry in enumerate(lay["layers"]):
                if entry["kind"] != "attention":
                    continue
                for h, hj in enumerate(entry["heads"]):
                    if hj["normalizer"]["type"] == "softmax":
                        kap = torch.tensor(
                            [_kappa(hj["scale"], hj["normalizer"], n) for n in range(max_len + 1)],
                            dtype=dtype,
                        )
                        self.get_submodule(f"layers.{i}.attention.heads.{h}").register_buffer(
                            "kappa", kap
                        )
            self._steps = [self._plan(i, entry) for i, entry in enumerate(lay["layers"])]

        def _idx(self, names: list[str], within: list[str]) -> Any:
            where = {nm: k for k, nm in enumerate(within)}
            return torch.tensor([where[nm] for nm in names], dtype=torch.long)

        def _plan(self, i: int, entry: Mapping[str, Any]) -> dict[str, Any]:
            lay = self.meta["layout"]
            dims = list(lay["dims"])
            ts = lay["tensors"]
            plan: dict[str, Any] = {"entry": entry}
            if entry["kind"] == "attention":
                values = [
                    nm
                    for h in range(len(entry["heads"]))
                    for nm in ts[f"layers.{i}.attention.heads.{h}.W_V"]["rows"]
                ]
                out = ts[f"layers.{i}.attention.W_O"]["rows"] if entry["output"] else values
                plan["write"] = self._idx(list(out), dims)
            else:
                names = dims
                ops: list[tuple[str, Any]] = []
                for j, sj in enumerate(entry["steps"]):
                    if sj["kind"] == "affine":
                        spec = ts[f"layers.{i}.ffn.steps.{j}.weight"]
                        ops.append(("affine", (j, self._idx(list(spec["cols"]), names))))
                        names = list(spec["rows"])
                    elif sj["kind"] == "activation":
                        ops.append(("act", sj["activation"]))
                    else:
                        over = names if sj["over"] is None else list(sj["over"])
                        ops.append(("ln", (j, self._idx(over, names))))
                plan["ops"] = ops
                plan["write"] = self._idx(names, dims) if entry["steps"] else None
            if entry["post_ln"] is not None:
                over = entry["post_ln"]["over"]
                plan["post_ln"] = self._idx(dims if over is None else list(over), dims)
            return plan

        @staticmethod
        def _ln(v: Any, eps: Any) -> Any:
            mu = v.mean(-1, keepdim=True)
            c = v - mu
            return c / torch.sqrt((c * c).mean(-1, keepdim=True) + eps)

        def _head(self, i: int, h: int, hj: Mapping[str, Any], x: Any, n: Any) -> Any:
            p = self.get_submodule(f"layers.{i}.attention.heads.{h}")
            q = x @ p.W_Q.T + p.b_Q
            k = x @ p.W_K.T + p.b_K
            v = x @ p.W_V.T + p.b_V
            s = q @ k.transpose(-1, -2)
            if hj["scoring"] == "neg_abs_dot":
                s = -s.abs()
            a = torch.arange(n, device=x.device)
            qi, kj = a.unsqueeze(1), a.unsqueeze(0)
            visible = {
                "none": kj >= 0,
                "causal": kj <= qi,
                "strict_causal": kj < qi,
                "anticausal": kj >= qi,
                "strict_anticausal": kj > qi,
            }[hj["mask"]]
            masked = s.masked_fill(~visible, -math.inf)
            if hj["normalizer"]["type"] == "hardmax":
                top = masked.amax(-1, keepdim=True)
                sel = visible & (s >= top - self.tie_rtol * (1 + top.abs()))
                tie = hj["normalizer"]["tie"]
                if tie == "leftmost":
                    sel = sel & (sel.to(torch.int64).cumsum(-1) == 1)
                elif tie == "rightmost":
                    sel = sel & (sel.flip(-1).to(torch.int64).cumsum(-1).flip(-1) == 1)
                w = sel.to(x.dtype)
                w = w / w.sum(-1, keepdim=True).clamp(min=1)
            else:
                z = masked * p.kappa[n]
                z = z - z.amax(-1, keepdim=True).nan_to_num(0.0, 0.0, 0.0).clamp(min=-1e300)
                e = torch.where(visible, torch.exp(z), torch.zeros_like(z))
                w = e / e.sum(-1, keepdim=True).clamp(min=1e-300)
            return w @ v

        def forward(self, ids: Any) -> Any:
            lay = self.meta["layout"]
            n = ids.shape[1]
            emb = self.embedding
            x = emb.table[ids]
            if lay["embedding"]["positional_features"]:
                x = x + emb.features[n, :n] @ emb.positional
            for i, plan in enumerate(self._steps):
                entry = plan["entry"]
                if entry["kind"] == "attention":
                    heads = [self._head(i, h, hj, x, n) for h, hj in enumerate(entry["heads"])]
                    o = torch.cat(heads, -1)
                    if entry["output"]:
                        att = self.get_submodule(f"layers.{i}.attention")
                        o = o @ att.W_O.T + att.b_O
                else:
                    o, v = None, x
                    for kind, arg in plan["ops"]:
                        if kind == "affine":
                            j, cols = arg
                            st = self.get_submodule(f"layers.{i}.ffn.steps.{j}")
                            v = v.index_select(-1, cols) @ st.weight.T + st.bias
                        elif kind == "act":
                            v = {
                                "relu": torch.relu,
                                "sigma": lambda t: t.clamp(0, 1),
                                "step": lambda t: (t > 0).to(t.dtype),
                                "gelu": torch.nn.functional.gelu,
                            }[arg](v)
                        else:
                            j, over = arg
                            st = self.get_submodule(f"layers.{i}.ffn.steps.{j}")
                            v = v.index_copy(-1, over, self._ln(v.index_select(-1, over), st.eps))
                    o = v if plan["write"] is not None else None
                if o is not None:
                    base = x if entry["residual"] else torch.zeros_like(x)
                    x = base.index_add(-1, plan["write"], o)
                elif not entry["residual"]:
                    x = torch.zeros_like(x)
                if "post_ln" in plan:
                    over = plan["post_ln"]
                    eps = self.get_submodule(f"layers.{i}").post_ln.eps
                    x = x.index_copy(-1, over, self._ln(x.index_select(-1, over), eps))
            ro = lay["readout"]
            if ro["type"] == "Classifier":
                at = ro["position"]
                w = self.readout.logit
                return (x[:, at] @ w.weight.T + w.bias)[:, 0]
            scores = x @ self.readout.scores.T
            nz = ro["softmax"]
            if nz is not None:
                kappa = (
                    math.log(float(Fraction(nz["r"])))
                    if nz["r"] is not None
                    else float(Fraction(nz["c"]))
                )
                scores = torch.softmax(scores * kappa, -1)
            return scores

    return NetworkModule


def to_module(net: Network, *, dtype: object = "float64", max_len: int = 64) -> Any:
    """``net`` as a torch module (see the module docstring) for words of up to ``max_len``
    tokens, specials included."""
    torch = _torch()
    _refuse(net)
    if max_len < 1:
        raise StateDictError(f"max_len={max_len} must be >= 1 (tokens, specials included)")
    lay = layout(net, dtype=dtype)
    tensors = state_dict(net, dtype=dtype)
    meta = {
        "format": MODULE_FORMAT,
        "format_version": MODULE_FORMAT_VERSION,
        "max_len": max_len,
        "layout": lay,
    }
    return _module_class(torch)(meta, tensors).eval()


def _example(module: Any, max_len: int) -> Any:
    torch = _torch()
    return torch.zeros(2, min(2, max_len), dtype=torch.long)


def save_module(module: Any, path: str | Path) -> None:
    """``torch.export`` ``module`` (a :func:`to_module` module, or one read back from an archive
    and then fine-tuned or perturbed) with a dynamic batch and length, and save it at ``path``."""
    torch = _torch()
    meta = layout_of(module)
    max_len = int(meta["max_len"])
    batch = torch.export.Dim("batch", min=1, max=1 << 20)
    length = torch.export.Dim("n", min=1, max=max_len)
    program = torch.export.export(
        module, (_example(module, max_len),), dynamic_shapes=({0: batch, 1: length},)
    )
    torch.export.save(program, str(path))


def save_pt2(
    net: Network, path: str | Path, *, dtype: object = "float64", max_len: int = 64
) -> None:
    """``net`` as a ``torch.export`` archive that plain torch loads (see the module docstring)."""
    save_module(to_module(net, dtype=dtype, max_len=max_len), path)


def load_pt2(path: str | Path) -> Any:
    """The module of an archive (``torch.export.load(path).module()``)."""
    return _torch().export.load(str(path)).module()


def _layout_bytes(state: Mapping[str, Any]) -> Any:
    return state.get(LAYOUT_BUFFER)


def layout_of(source: Any) -> dict[str, Any]:
    """The ``{"format", "format_version", "max_len", "layout"}`` a module or state dict of
    :func:`to_module` carries (a :class:`StateDictError` for anything else)."""
    state = source if isinstance(source, Mapping) else source.state_dict()
    raw = _layout_bytes(state)
    if raw is None:
        raise StateDictError(
            f"no {LAYOUT_BUFFER!r} buffer: not a module written by netproof export --format torch"
        )
    try:
        meta = json.loads(bytes(raw.tolist()).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateDictError(
            f"the {LAYOUT_BUFFER!r} buffer is not JSON ({exc}); re-export"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != MODULE_FORMAT:
        raise StateDictError(f"the {LAYOUT_BUFFER!r} buffer is not a {MODULE_FORMAT!r} layout")
    if meta.get("format_version") != MODULE_FORMAT_VERSION:
        raise StateDictError(
            f"format_version {meta.get('format_version')!r} is not {MODULE_FORMAT_VERSION}: "
            "re-export the network with this version of netproof"
        )
    return meta


def is_exported(source: Any) -> bool:
    """Whether ``source`` (a module or a state dict) carries a :func:`to_module` layout."""
    state = source if isinstance(source, Mapping) else source.state_dict()
    return _layout_bytes(state) is not None


def network_of(source: Any) -> Network:
    """The exact network of a :func:`to_module` module or its state dict, from the tensors it
    holds now (a fine-tuned or perturbed module gives the network it now computes)."""
    from .torch_import import from_export

    state = source if isinstance(source, Mapping) else source.state_dict()
    meta = layout_of(state)
    lay = meta["layout"]
    missing = [k for k in lay["tensors"] if k not in state]
    if missing:
        raise StateDictError(f"the module has no tensor {missing[0]!r} of its layout; re-export")
    tensors = {}
    for key, spec in lay["tensors"].items():
        t = state[key].detach().cpu()
        if list(t.shape) != spec["shape"]:
            raise StateDictError(
                f"tensor {key!r} has shape {list(t.shape)}, its layout {spec['shape']}; re-export"
            )
        tensors[key] = t
    return from_export({"layout": lay, "state_dict": tensors})
