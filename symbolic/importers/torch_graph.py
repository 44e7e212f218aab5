"""The graph walk of :mod:`.torch_module`: a model traced with ``torch.fx`` (every standard
``torch.nn`` module one node, the user's own modules traced through) evaluated node by node on
symbolic values, each node mapped onto the canonical layout; :func:`graph_of_module` is the entry
point. torch inside functions only.
"""

from __future__ import annotations

import contextlib
import math
import operator
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from .canonical import Graph, ImporterError, MeanPool, Readout
from .torch_module import (
    Importer,
    Scores,
    Sym,
    Tok,
    activation_kind,
    call_encoder,
    call_mha,
    positions_axis,
    torch_lib,
)

__all__ = ["graph_of_module"]

# --------------------------------------------------------------------------- the graph walk

_SHAPE_METHODS = frozenset(
    {
        "view",
        "reshape",
        "transpose",
        "permute",
        "contiguous",
        "unsqueeze",
        "squeeze",
        "expand",
        "expand_as",
        "flatten",
        "unflatten",
        "clone",
        "detach",
        "movedim",
        "narrow",
        "select",
    }
)
_IDENTITY_METHODS = frozenset({"float", "double", "half", "bfloat16", "to", "type_as", "type"})


def _has_sym(value: Any) -> bool:
    if isinstance(value, (Sym, Tok, Scores)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_sym(v) for v in value)
    if isinstance(value, dict):
        return any(_has_sym(v) for v in value.values())
    if isinstance(value, slice):
        return any(_has_sym(v) for v in (value.start, value.stop, value.step))
    return False


def _fn_name(fn: Any) -> str:
    torch = torch_lib()
    F = torch.nn.functional
    table = {
        operator.add: "add",
        torch.add: "add",
        operator.sub: "sub",
        torch.sub: "sub",
        operator.mul: "mul",
        torch.mul: "mul",
        operator.truediv: "div",
        torch.div: "div",
        operator.matmul: "matmul",
        torch.matmul: "matmul",
        torch.bmm: "matmul",
        operator.getitem: "getitem",
        getattr: "getattr",
        torch.relu: "relu",
        F.relu: "relu",
        F.gelu: "gelu",
        F.linear: "linear",
        F.layer_norm: "layer_norm",
        F.softmax: "softmax",
        torch.softmax: "softmax",
        F.dropout: "identity",
        F.embedding: "embedding",
        torch.transpose: "transpose",
        torch.reshape: "reshape",
        torch.flatten: "flatten",
        torch.squeeze: "squeeze",
        torch.unsqueeze: "unsqueeze",
        torch.permute: "permute",
        torch.mean: "mean",
        torch.cat: "cat",
        F.scaled_dot_product_attention: "sdpa",
        torch.masked_fill: "masked_fill",
        operator.neg: "neg",
        operator.eq: "eq",
        torch.eq: "eq",
        operator.ne: "ne",
        torch.ne: "ne",
    }
    for k, v in table.items():
        if fn is k:
            return v
    overload = getattr(fn, "_overloadpacket", None)  # an aten operator of a torch.export graph
    if overload is not None:
        return ATEN.get(str(getattr(overload, "__name__", "")), "aten." + str(overload))
    return getattr(fn, "__name__", repr(fn))


ATEN = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "div": "div",
    "linear": "linear",
    "matmul": "matmul",
    "bmm": "matmul",
    "relu": "relu",
    "gelu": "gelu",
    "layer_norm": "layer_norm",
    "softmax": "softmax",
    "_softmax": "softmax",
    "embedding": "aten_embedding",
    "dropout": "identity",
    "clone": "identity",
    "alias": "identity",
    "masked_fill": "masked_fill",
    "mean": "mean",
    "scaled_dot_product_attention": "sdpa",
    "transpose": "method:transpose",
    "view": "method:view",
    "reshape": "method:reshape",
    "_unsafe_view": "method:reshape",
    "unsqueeze": "method:unsqueeze",
    "squeeze": "method:squeeze",
    "permute": "method:permute",
    "expand": "method:expand",
    "flatten": "method:flatten",
    "select": "method:select",
    "contiguous": "identity",
    "slice": "aten_slice",
    "sym_size": "method:size",
}
"""The aten operators of a ``torch.export`` graph, by the handler they share with the traced
functions (``method:NAME``: as the tensor method)."""


class Walker:
    """Evaluates a traced graph on symbolic values (see the module docstring)."""

    def __init__(self, imp: Importer, token_ids: Sequence[int]) -> None:
        self.imp = imp
        self.token_ids = list(token_ids)

    def concrete(self, fn: Any, args: Any, kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise self.imp.refuse(
                f"computing a constant failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            ) from None

    def method(self, name: str, obj: Any, args: list[Any], kw: dict[str, Any]) -> Any:
        imp = self.imp
        torch = torch_lib()
        if isinstance(obj, (Sym, Tok)):
            if name in ("size",):
                return obj.shape if not args else obj.shape[args[0]]
            if name == "dim":
                return len(obj.shape)
            if name in ("masked_fill",) and isinstance(obj, Sym):
                raise imp.refuse("masked_fill on values (only on attention scores)")
        if isinstance(obj, Sym):
            if name in _IDENTITY_METHODS:
                return obj
            if name in _SHAPE_METHODS:
                return Sym(getattr(obj.ids, name)(*args, **kw), getattr(obj.pos, name)(*args, **kw))
            if name in ("add", "sub", "mul", "div", "matmul", "relu", "softmax", "mean", "max"):
                return self.function(name, [obj, *args], kw)
            if name == "__getitem__":
                return self.function("getitem", [obj, *args], kw)
        if isinstance(obj, Tok):
            if name in _IDENTITY_METHODS:
                return obj
            if name in _SHAPE_METHODS:
                return Tok(getattr(obj.pos, name)(*args, **kw))
            if name in ("eq", "ne", "__eq__", "__ne__"):
                return self.function("eq" if "eq" in name else "ne", [obj, *args], kw)
        if isinstance(obj, Scores):
            if name in ("masked_fill", "masked_fill_"):
                mask, value = args[0], args[1]
                if not (isinstance(value, (int, float)) and value == -math.inf):
                    raise imp.refuse(
                        f"masked_fill of scores with {value!r} (−∞ is a mask; a finite value "
                        "is another function: use float('-inf'))"
                    )
                return imp.mask_scores(obj, torch.as_tensor(mask), additive=False)
            if name == "softmax":
                return self.function("softmax", [obj, *args], kw)
            if name in _IDENTITY_METHODS or name in ("contiguous",):
                return obj
            if name in ("mul", "div", "add"):
                return self.function(name, [obj, *args], kw)
        if _has_sym([obj, args, kw]):
            raise imp.refuse(f"method .{name}() on a token-dependent value")
        return self.concrete(getattr(obj, name), args, kw)

    def function(self, name: str, args: list[Any], kw: dict[str, Any]) -> Any:
        imp = self.imp
        torch = torch_lib()
        stem = imp.stem
        if name == "getattr":
            obj, attr = args[0], args[1]
            if isinstance(obj, (Sym, Tok, Scores)):
                if attr == "shape":
                    return (
                        torch.Size(obj.shape) if not isinstance(obj, Scores) else obj.visible.shape
                    )
                if attr == "device":
                    return torch.device("cpu")
                if attr == "dtype":
                    return imp.dtype
                if attr == "ndim":
                    return len(obj.visible.shape if isinstance(obj, Scores) else obj.shape)
                raise imp.refuse(f"attribute .{attr} of a token-dependent value")
            return getattr(obj, attr)
        if name == "identity":
            return args[0]
        if name.startswith("method:"):
            return self.method(name.removeprefix("method:"), args[0], list(args[1:]), kw)
        if name == "aten_embedding":
            return self.function("embedding", [args[1], args[0]], kw)
        if name == "aten_slice" and isinstance(args[0], (Sym, Tok)):
            dim, start, end, step = ([*args[1:], None, None, None, None])[:4]
            index: list[Any] = [slice(None)] * len(args[0].shape)
            index[dim or 0] = slice(start, end, step)
            return self.function("getitem", [args[0], tuple(index)], {})
        if name in ("add", "sub", "mul", "div"):
            a, b = args[0], args[1] if len(args) > 1 else kw.get("other")
            if name == "add" and "alpha" in kw:
                raise imp.refuse("torch.add with alpha")
            if name == "div" and kw.get("rounding_mode"):
                raise imp.refuse("division with rounding")
            if name == "sub" and not isinstance(a, (Sym, Scores)) and isinstance(b, Sym):
                return imp.binary("rsub", b, a, stem)
            if name == "div" and not isinstance(a, (Sym, Scores)):
                raise imp.refuse("a constant divided by a token-dependent value")
            return imp.binary(name, a, b, stem)
        if name == "neg":
            return imp.binary("mul", args[0], -1.0, stem)
        if name == "matmul":
            return imp.matmul(args[0], args[1])
        if name == "relu":
            return imp.act(args[0], "relu", stem)
        if name == "gelu":
            if kw.get("approximate", args[1] if len(args) > 1 else "none") != "none":
                raise imp.refuse("the tanh-approximate GELU (only the exact x·Φ(x))")
            return imp.act(args[0], "gelu", stem)
        if name == "linear":
            w = args[1] if len(args) > 1 else kw["weight"]
            b = args[2] if len(args) > 2 else kw.get("bias")
            return imp.linear(args[0], w, b, stem)
        if name == "layer_norm":
            shape = args[1] if len(args) > 1 else kw["normalized_shape"]
            if len(tuple(shape)) != 1:
                raise imp.refuse("layer norm over more than the last axis")
            w = args[2] if len(args) > 2 else kw.get("weight")
            b = args[3] if len(args) > 3 else kw.get("bias")
            eps = args[4] if len(args) > 4 else kw.get("eps", 1e-5)
            return imp.layer_norm(args[0], eps, w, b, stem)
        if name == "softmax":
            x = args[0]
            dim = kw.get("dim", args[1] if len(args) > 1 else None)
            if not isinstance(x, Scores):
                raise imp.refuse("softmax of anything but attention scores q @ kᵀ")
            if dim not in (-1, len(x.visible.shape) - 1):
                raise imp.refuse(
                    f"softmax over axis {dim} (attention normalizes over the keys, -1)"
                )
            return Scores(x.lead, x.groups, x.visible, x.coef, x.sqrt_d, True)
        if name == "masked_fill":
            return self.method("masked_fill", args[0], list(args[1:]), kw)
        if name == "embedding" and isinstance(args[0], Tok):
            return imp.embed(args[0], args[1], stem, self.token_ids)
        if name == "sdpa":
            q, k, v = args[:3]
            mask = kw.get("attn_mask", args[3] if len(args) > 3 else None)
            causal = kw.get("is_causal", args[5] if len(args) > 5 else False)
            return imp.sdpa(q, k, v, mask, bool(causal), kw.get("scale"))
        if name == "mean":
            x = args[0]
            dim = kw.get("dim", args[1] if len(args) > 1 else None)
            if isinstance(x, Sym):
                return self.mean(
                    x, dim, bool(kw.get("keepdim", args[2] if len(args) > 2 else False))
                )
        if name in ("eq", "ne") and isinstance(args[0], Tok):
            c = args[1]
            if _has_sym(c) or not isinstance(c, int):
                raise imp.refuse("a comparison of tokens with anything but one token id")
            hit = c in self.token_ids
            if hit:
                raise imp.refuse(
                    f"tokens compared with id {c}, a token the words use (padding ids only)"
                )
            out = torch.zeros(args[0].shape, dtype=torch.bool)
            return out if name == "eq" else ~out
        if name == "getitem":
            x, idx = args[0], args[1]
            if isinstance(x, Sym):
                return Sym(x.ids[idx], x.pos[idx])
            if isinstance(x, Tok):
                return Tok(x.pos[idx])
            if isinstance(x, tuple | list) or not _has_sym(idx):
                if _has_sym(idx):
                    raise imp.refuse("indexing with a token-dependent index")
                return x[idx]
            if isinstance(idx, Tok) and isinstance(x, torch.Tensor) and x.dim() == 2:
                return imp.embed(idx, x, stem, self.token_ids)
        if name in ("transpose", "reshape", "flatten", "squeeze", "unsqueeze", "permute"):
            x = args[0]
            if isinstance(x, (Sym, Tok)):
                return self.method(name, x, list(args[1:]), kw)
        if name == "cat":
            parts = args[0]
            dim = kw.get("dim", args[1] if len(args) > 1 else 0)
            if all(isinstance(p, Sym) for p in parts):
                ids = torch.cat([p.ids for p in parts], dim)
                pos = torch.cat([p.pos for p in parts], dim)
                return Sym(ids, pos)
        if _has_sym([args, kw]):
            raise imp.refuse(f"function {name} on a token-dependent value")
        raise LookupError(name)

    def mean(self, x: Sym, dim: Any, keepdim: bool) -> Sym:
        imp = self.imp
        torch = torch_lib()
        ax = positions_axis(imp, x)
        if dim is None or (dim % x.ids.dim()) != ax or x.ids.dim() < 2:
            raise imp.refuse(f"a mean over axis {dim} (the mean over the positions only)")
        if ax == x.ids.dim() - 1:
            raise imp.refuse("a mean over the feature axis")
        first = Sym(x.ids.narrow(ax, 0, 1), x.pos.narrow(ax, 0, 1))
        if not bool((first.ids == x.ids).all()):
            raise imp.refuse("a mean over positions of different values")
        names, _ = imp.group(first)
        outs = imp.g.fresh(f"{imp.stem}.mean", len(names))
        imp.g.add(MeanPool(names, outs))
        y = imp.with_names(first, outs)
        y = Sym(y.ids, torch.zeros_like(y.pos))
        return y if keepdim else Sym(y.ids.squeeze(ax), y.pos.squeeze(ax))

    def module(self, mod: Any, args: list[Any], kw: dict[str, Any]) -> Any:
        imp = self.imp
        torch = torch_lib()
        nn = torch.nn
        stem = imp.stem
        if not _has_sym([args, kw]):
            return self.concrete(mod, args, kw)
        if type(mod).__name__ == "GuardsFn":  # a torch.export graph's input-shape checks
            return None
        x = args[0] if args else None
        if isinstance(mod, (nn.Dropout, nn.Identity)):
            return x
        if isinstance(mod, nn.Embedding) and isinstance(x, Tok):
            return imp.embed(x, mod.weight, stem, self.token_ids)
        if isinstance(x, Sym):
            if isinstance(mod, nn.Linear):
                return imp.linear(x, mod.weight, mod.bias, stem)
            if isinstance(mod, nn.LayerNorm):
                if len(mod.normalized_shape) != 1:
                    raise imp.refuse("nn.LayerNorm over more than the last axis")
                return imp.layer_norm(x, mod.eps, mod.weight, getattr(mod, "bias", None), stem)
            if isinstance(mod, (nn.ReLU, nn.GELU)):
                return imp.act(x, activation_kind(imp, mod), stem)
            if isinstance(mod, (nn.TransformerEncoder, nn.TransformerEncoderLayer)):
                return call_encoder(imp, mod, x, args[1:], kw)
            if isinstance(mod, nn.MultiheadAttention):
                return call_mha(imp, mod, args, kw)
        if isinstance(x, Scores) and isinstance(mod, nn.Softmax):
            return self.function("softmax", [x], {"dim": mod.dim})
        raise imp.refuse(f"module {type(mod).__name__} on a token-dependent value")

    def run(self, gm: Any, tokens: Tok) -> Any:
        import torch.fx as fx

        imp = self.imp
        env: dict[Any, Any] = {}
        first = True

        def load(a: Any) -> Any:
            return fx.node.map_arg(a, lambda n: env[n])

        for node in gm.graph.nodes:
            imp.where = f"node {node.name} ({node.op} {_target_text(node)})"
            imp.stem = node.name
            if node.op == "placeholder":
                if first:
                    env[node] = tokens
                    first = False
                else:
                    env[node] = node.args[0] if node.args else None
                continue
            if node.op == "get_attr":
                obj: Any = gm
                for part in node.target.split("."):
                    obj = getattr(obj, part)
                env[node] = obj
                continue
            if node.op == "output":
                return load(node.args[0])
            args, kw = load(node.args), load(node.kwargs)
            imp.where = f"node {node.name} ({node.op} {_target_text(node)})"
            if node.op == "call_module":
                env[node] = self.module(gm.get_submodule(node.target), list(args), dict(kw))
            elif node.op == "call_method":
                env[node] = self.method(node.target, args[0], list(args[1:]), dict(kw))
            else:
                if not _has_sym([args, kw]):
                    env[node] = self.concrete(node.target, args, kw)
                    continue
                try:
                    env[node] = self.function(_fn_name(node.target), list(args), dict(kw))
                except LookupError:
                    raise imp.refuse(
                        f"function {_target_text(node)} on a token-dependent value"
                    ) from None
        raise imp.refuse("the graph has no output")


def _eval(model: Any) -> None:
    """Eval mode (dropout off); a ``torch.export`` module has no mode to set."""
    with contextlib.suppress(NotImplementedError):
        model.eval()


def _target_text(node: Any) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    mod = getattr(t, "__module__", None) or ""
    return f"{mod}.{getattr(t, '__name__', repr(t))}".lstrip(".")


_FACTORIES = ("ones", "zeros", "full", "empty", "eye", "rand", "randn", "ones_like", "zeros_like")
"""torch functions whose C signature refuses an fx proxy as a size (``torch.ones(n, n)`` with n a
traced shape): wrapped while tracing so that they become graph nodes like any other call."""


def _tracer(model: Any) -> Any:
    """The fx graph of ``model``: every standard ``torch.nn`` module is one node (fx's default),
    the user's own modules are traced through; tensor factories of a traced size are recorded."""
    import torch
    import torch.fx as fx

    tracer = fx.Tracer()
    saved = {name: getattr(torch, name) for name in _FACTORIES}

    def wrapped(fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if any(isinstance(a, fx.Proxy) for a in _flat(args, kwargs)):
                return tracer.create_proxy("call_function", fn, args, kwargs)
            return fn(*args, **kwargs)

        return call

    try:
        for name, fn in saved.items():
            setattr(torch, name, wrapped(fn))
        graph = tracer.trace(model)
        return fx.GraphModule(tracer.root, graph, type(model).__name__)
    except Exception as exc:
        raise ImporterError(
            f"torch.fx could not trace {type(model).__name__}.forward: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''} (control flow on token values cannot "
            "be traced; a branch on a shape can: write it with x.shape)"
        ) from None
    finally:
        for name, fn in saved.items():
            setattr(torch, name, fn)


def _flat(*values: Any) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out += _flat(*v)
        elif isinstance(v, dict):
            out += _flat(*v.values())
        else:
            out.append(v)
    return out


def graph_of_module(
    model: Any,
    *,
    vocab: Sequence[str],
    alphabet: Sequence[str],
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    positions: int,
) -> Graph:
    """The canonical graph of ``model`` (an ``nn.Module`` whose forward takes token ids
    ``[batch, length]``; ``vocab[t]`` is the token of id t) for inputs of up to ``positions``
    tokens (prefix and suffix included)."""
    torch = torch_lib()
    vocab = tuple(str(v) for v in vocab)
    missing = [t for t in (*alphabet, *prefix, *suffix) if t not in vocab]
    if missing:
        raise ImporterError(f"token {missing[0]!r} is not in the vocabulary {list(vocab)}")
    if positions < len(prefix) + len(suffix) + 2:
        raise ImporterError(f"positions={positions} leaves no room for a word of length 2")
    g = Graph(
        vocab=vocab,
        alphabet=tuple(alphabet),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        positions=positions,
        source=f"imported from {type(model).__name__} by its torch.fx graph",
    )
    import torch.fx as fx

    was_training = model.training
    _eval(model)
    try:
        gm = model if isinstance(model, fx.GraphModule) else _tracer(model)
        dtype = next((p.dtype for p in model.parameters()), torch.float32)
        imp = Importer(g, dtype)
        ids = sorted({vocab.index(t) for t in (*alphabet, *prefix, *suffix)})
        # a torch.export graph may hold the batch size it was exported with (1, usually)
        batch = 1 if gm is model else 2
        pos = (
            torch.arange(positions, dtype=torch.long).unsqueeze(0).expand(batch, positions).clone()
        )
        with torch.no_grad():
            out = Walker(imp, ids).run(gm, Tok(pos))
    finally:
        if was_training:
            with contextlib.suppress(NotImplementedError):
                model.train(True)
    g.readout = readout_of(imp, out, positions)
    return g


def readout_of(imp: Importer, out: Any, positions: int) -> Readout:
    imp.where = "the output"
    if isinstance(out, (tuple, list)) and out:
        out = out[0]
    if not isinstance(out, Sym):
        raise imp.refuse(
            f"the output is {type(out).__name__}, not a value computed from the tokens"
        )
    shape = tuple(out.shape)
    if len(shape) == 1:
        ids, pos = out.ids.unsqueeze(-1), out.pos.unsqueeze(-1)
    elif len(shape) == 2 and shape[1] in (1, 2):
        ids, pos = out.ids, out.pos
    else:
        raise imp.refuse(
            f"an output of shape {list(shape)} (one logit per word: [B], [B, 1], or two classes [B, 2])"
        )
    if not (bool((ids == ids[:1]).all()) and bool((pos == pos[:1]).all())):
        raise imp.refuse("an output that is not the same function for every word of the batch")
    names = tuple(imp.names[i] for i in ids[0].tolist())
    p = int(pos[0, 0])
    if not bool((pos[0] == p).all()):
        raise imp.refuse("two output classes read at different positions")
    position = -1 if p == positions - 1 else p
    if len(names) == 1:
        return Readout(names, (Fraction(1),), Fraction(0), position)
    return Readout(names, (Fraction(-1), Fraction(1)), Fraction(0), position)
