"""ONNX files, mapped onto the canonical layout (:mod:`.canonical`) node by node with the same
symbolic tensors as the ``nn.Module`` importer (:mod:`.torch_module`): the graph is read with the
``onnx`` package (the ``onnx`` extra) and evaluated on a symbolic input of token ids; shape
arithmetic (``Shape``, ``Gather`` of a shape, ``Concat``, ``Range`` …) is computed, weights are
exact, and the operators of a small transformer are mapped:

``Gather`` (a token lookup, an index), ``MatMul``/``Gemm`` (a linear map, q·kᵀ, weights·v),
``Add``/``Sub``/``Mul``/``Div`` (residual sums, biases, scales, an additive 0/−∞ mask),
``Where`` (a −∞ mask), ``Softmax`` over the keys, ``LayerNormalization``, ``Relu``, ``Gelu``
(opset 20, exact), ``Reshape``/``Transpose``/``Unsqueeze``/``Squeeze``/``Slice``/``Concat``/
``Identity``/``Cast``, ``ReduceMean`` over the positions. Anything else on a token-dependent value
is refused with one line naming the node, its operator and the supported set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .canonical import Graph, ImporterError
from .torch_graph import Walker, readout_of
from .torch_module import Importer, Scores, Sym, Tok, torch_lib

__all__ = ["ONNX_SUPPORTED", "graph_of_onnx"]

ONNX_SUPPORTED = (
    "supported ONNX operators on token-dependent values: Gather, MatMul, Gemm, Add, Sub, Mul, "
    "Div, Where (a −∞ mask), Softmax, LayerNormalization, Relu, Gelu, Reshape, Transpose, "
    "Unsqueeze, Squeeze, Slice, Concat, Identity, Cast, ReduceMean over positions"
)


def _onnx() -> Any:
    from netproof.symbolic.errors import MissingExtraError

    try:
        import onnx
    except ImportError as exc:
        raise MissingExtraError(
            "reading an ONNX file needs onnx; install the extra: pip install -e '.[onnx]'"
        ) from exc
    return onnx


def _sym(v: Any) -> bool:
    return isinstance(v, (Sym, Tok, Scores))


class OnnxWalker:
    def __init__(self, imp: Importer, token_ids: Sequence[int]) -> None:
        self.imp = imp
        self.walker = Walker(imp, token_ids)
        self.token_ids = list(token_ids)

    def refuse(self, what: str) -> ImporterError:
        return ImporterError(f"{self.imp.where}: {what}; {ONNX_SUPPORTED}")

    def shape_op(self, x: Any, fn: Any) -> Any:
        try:
            return self._shape_op(x, fn)
        except (RuntimeError, IndexError) as exc:
            raise self.refuse(
                f"a shape operation failed at {self.imp.positions} positions ({str(exc).splitlines()[0]}); "
                "was the file exported for one input length only? (export with a dynamic length axis)"
            ) from None

    def _shape_op(self, x: Any, fn: Any) -> Any:
        if isinstance(x, Sym):
            return Sym(fn(x.ids), fn(x.pos))
        if isinstance(x, Tok):
            return Tok(fn(x.pos))
        if isinstance(x, Scores):
            raise self.refuse("a shape operation on attention scores")
        return fn(x)

    def node(self, op: str, ins: list[Any], attrs: dict[str, Any]) -> Any:
        torch = torch_lib()
        imp = self.imp
        x: Any = ins[0] if ins else None
        if op in ("Identity", "Cast", "Dropout"):
            if op == "Cast" and not _sym(x):
                to = {
                    1: torch.float32,
                    6: torch.int32,
                    7: torch.int64,
                    9: torch.bool,
                    11: torch.float64,
                }
                return torch.as_tensor(x).to(to.get(attrs["to"], torch.float32))
            return x
        if op == "Shape":
            return torch.tensor(list(x.shape) if _sym(x) else list(torch.as_tensor(x).shape))
        if op == "Transpose":
            perm = attrs.get("perm")
            return self.shape_op(
                x, lambda t: t.permute(*perm) if perm else t.permute(*reversed(range(t.dim())))
            )
        if op == "Reshape":
            shape = [int(s) for s in torch.as_tensor(ins[1]).tolist()]
            cur = list(x.shape if _sym(x) else torch.as_tensor(x).shape)
            if not attrs.get("allowzero", 0):
                shape = [cur[i] if s == 0 else s for i, s in enumerate(shape)]
            return self.shape_op(x, lambda t: t.reshape(shape))
        if op in ("Unsqueeze", "Squeeze"):
            axes: Any = attrs.get("axes")
            if axes is None and len(ins) > 1 and ins[1] is not None:
                axes = [int(a) for a in torch.as_tensor(ins[1]).reshape(-1).tolist()]
            if op == "Unsqueeze":

                def unsq(t: Any) -> Any:
                    for a in sorted(a % (t.dim() + len(axes)) for a in axes):
                        t = t.unsqueeze(a)
                    return t

                return self.shape_op(x, unsq)
            if axes is None:
                return self.shape_op(x, lambda t: t.squeeze())
            return self.shape_op(x, lambda t: t.squeeze(tuple(a % t.dim() for a in axes)))
        if op == "Flatten":
            axis = attrs.get("axis", 1)
            return self.shape_op(
                x,
                lambda t: (
                    t.reshape(1, -1) if axis == 0 else t.reshape(math.prod(t.shape[:axis]), -1)
                ),
            )
        if op == "Gather":
            axis = attrs.get("axis", 0)
            idx = ins[1]
            if isinstance(idx, Tok):
                if _sym(x) or axis != 0:
                    raise self.refuse("a token lookup in anything but a constant table")
                return imp.embed(idx, torch.as_tensor(x), imp.stem, self.token_ids)
            if _sym(idx):
                raise self.refuse("a gather with token-dependent indices")
            i = torch.as_tensor(idx).to(torch.long)
            return self.shape_op(
                x,
                lambda t: (
                    t.select(axis, int(i))
                    if i.dim() == 0
                    else t.index_select(axis % t.dim(), i.reshape(-1)).reshape(
                        *t.shape[: axis % t.dim()], *i.shape, *t.shape[axis % t.dim() + 1 :]
                    )
                ),
            )
        if op == "Slice":
            starts, ends = (torch.as_tensor(v).tolist() for v in ins[1:3])
            axes = (
                torch.as_tensor(ins[3]).tolist()
                if len(ins) > 3 and ins[3] is not None
                else list(range(len(starts)))
            )
            steps = (
                torch.as_tensor(ins[4]).tolist()
                if len(ins) > 4 and ins[4] is not None
                else [1] * len(starts)
            )

            def sl(t: Any) -> Any:
                index: list[Any] = [slice(None)] * t.dim()
                for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
                    n = t.shape[a]
                    s = max(-n, min(s, n)) if s < 0 else min(s, n)
                    e = max(-n - 1, min(e, n)) if e < 0 else min(e, n)
                    if st < 0:
                        raise self.refuse("a slice with a negative step")
                    index[a] = slice(s, e, st)
                return t[tuple(index)]

            return self.shape_op(x, sl)
        if op == "Concat":
            axis = attrs["axis"]
            if all(isinstance(v, Sym) for v in ins):
                return Sym(
                    torch.cat([v.ids for v in ins], axis), torch.cat([v.pos for v in ins], axis)
                )
            if any(_sym(v) for v in ins):
                raise self.refuse("a concatenation of token-dependent and constant values")
            return torch.cat([torch.as_tensor(v) for v in ins], axis)
        if op in ("Add", "Sub", "Mul", "Div"):
            a, b = ins
            if not (_sym(a) or _sym(b)):
                fn = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div}[op]
                ta, tb = torch.as_tensor(a), torch.as_tensor(b)
                if op == "Div" and not ta.is_floating_point() and not tb.is_floating_point():
                    return torch.div(ta, tb, rounding_mode="trunc")
                return fn(ta, tb)
            name = op.lower()
            return self.walker.function(name, [a, b], {})
        if op == "MatMul":
            return imp.matmul(ins[0], ins[1])
        if op == "Gemm":
            a, w = ins[0], torch.as_tensor(ins[1])
            if attrs.get("transA", 0) or not isinstance(a, Sym):
                raise self.refuse("Gemm with a transposed or constant first input")
            if not attrs.get("transB", 0):
                w = w.transpose(0, 1)
            alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
            if alpha != 1.0 or beta != 1.0:
                raise self.refuse("Gemm with alpha or beta other than 1")
            return imp.linear(a, w, ins[2] if len(ins) > 2 else None, imp.stem)
        if op == "Softmax":
            axis = attrs.get("axis", -1)
            return self.walker.function("softmax", [x], {"dim": axis})
        if op == "LayerNormalization":
            if attrs.get("axis", -1) != -1:
                raise self.refuse("layer norm over more than the last axis")
            return imp.layer_norm(
                x, attrs.get("epsilon", 1e-5), ins[1], ins[2] if len(ins) > 2 else None, imp.stem
            )
        if op == "Relu":
            return imp.act(x, "relu", imp.stem)
        if op == "Gelu":
            if attrs.get("approximate", "none") not in ("none", b"none"):
                raise self.refuse("the tanh-approximate GELU")
            return imp.act(x, "gelu", imp.stem)
        if op == "Where":
            cond, a, b = ins
            if isinstance(b, Scores) and not _sym(a) and not _sym(cond):
                av = torch.as_tensor(a)
                if not bool((av == -math.inf).all()):
                    raise self.refuse("Where on scores with a value other than −∞")
                return imp.mask_scores(b, torch.as_tensor(cond).to(torch.bool), additive=False)
            if isinstance(a, Scores) and not _sym(b) and not _sym(cond):
                bv = torch.as_tensor(b)
                if not bool((bv == -math.inf).all()):
                    raise self.refuse("Where on scores with a value other than −∞")
                return imp.mask_scores(a, ~torch.as_tensor(cond).to(torch.bool), additive=False)
        if op == "ReduceMean" and isinstance(x, Sym):
            axes = attrs.get("axes")
            if axes is None and len(ins) > 1:
                axes = torch.as_tensor(ins[1]).tolist()
            if not axes or len(axes) != 1:
                raise self.refuse("a mean over several axes")
            return self.walker.mean(x, axes[0], bool(attrs.get("keepdims", 1)))
        if any(_sym(v) for v in ins):
            raise self.refuse(f"operator {op} on a token-dependent value")
        return self.constant(op, ins, attrs)

    def constant(self, op: str, ins: list[Any], attrs: dict[str, Any]) -> Any:
        torch = torch_lib()
        t: list[Any] = [torch.as_tensor(v) if v is not None else None for v in ins]
        simple = {
            "Sqrt": torch.sqrt,
            "Neg": torch.neg,
            "Equal": torch.eq,
            "Less": torch.lt,
            "Greater": torch.gt,
            "Not": torch.logical_not,
            "Mod": torch.remainder,
            "Pow": torch.pow,
            "Sin": torch.sin,
            "Cos": torch.cos,
            "Exp": torch.exp,
            "Log": torch.log,
            "Reciprocal": torch.reciprocal,
            "And": torch.logical_and,
            "Or": torch.logical_or,
        }
        if op in simple:
            return simple[op](*[v for v in t if v is not None])
        if op == "Range":
            return torch.arange(t[0].item(), t[1].item(), t[2].item(), dtype=t[0].dtype)
        if op == "Expand":
            shape = [int(s) for s in t[1].tolist()]
            return (
                t[0] * torch.ones(shape, dtype=t[0].dtype)
                if t[0].dtype != torch.bool
                else t[0].expand(*shape)
            )
        if op == "Trilu":
            k = int(t[1].item()) if len(t) > 1 and t[1] is not None else 0
            return torch.triu(t[0], k) if attrs.get("upper", 1) else torch.tril(t[0], k)
        if op == "Where":
            return torch.where(t[0].to(torch.bool), t[1], t[2])
        if op == "ConstantOfShape":
            value = attrs.get("value")
            return torch.full(
                [int(s) for s in t[0].tolist()], float(value[0]) if value is not None else 0.0
            )
        if op == "MatMul":
            return t[0] @ t[1]
        raise self.refuse(f"operator {op} (not computed on constants either)")

    def run(self, model: Any, tokens: Tok) -> Any:
        onnx = _onnx()
        from onnx import numpy_helper

        torch = torch_lib()
        g = model.graph
        env: dict[str, Any] = {
            i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in g.initializer
        }
        inputs = [i.name for i in g.input if i.name not in env]
        if not inputs:
            raise ImporterError("the ONNX graph has no input of token ids")
        env[inputs[0]] = tokens
        env[""] = None
        for k, node in enumerate(g.node):
            self.imp.where = f"node {node.name or k} ({node.op_type})"
            self.imp.stem = (node.name or node.op_type).strip("/").replace("/", ".") or "v"
            attrs = {}
            value = None
            for a in node.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    value = torch.from_numpy(numpy_helper.to_array(a.t).copy())
                    attrs[a.name] = (
                        value.reshape(-1).tolist() if node.op_type == "ConstantOfShape" else value
                    )
                else:
                    attrs[a.name] = onnx.helper.get_attribute_value(a)
            if node.op_type == "Constant":
                if value is None:
                    for key in ("value_float", "value_int", "value_floats", "value_ints"):
                        if key in attrs:
                            value = torch.tensor(attrs[key])
                env[node.output[0]] = value
                continue
            if node.domain not in ("", "ai.onnx"):
                raise self.refuse(f"operator {node.domain}.{node.op_type} of a custom domain")
            out = self.node(node.op_type, [env[i] for i in node.input], attrs)
            env[node.output[0]] = out
        return env[g.output[0].name]


def graph_of_onnx(
    path: Any,
    *,
    vocab: Sequence[str],
    alphabet: Sequence[str],
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    positions: int,
) -> Graph:
    """The canonical graph of the ONNX model at ``path`` (a file or a ``ModelProto``) whose first
    input is token ids ``[batch, length]`` (``vocab[t]``: the token of id t)."""
    onnx = _onnx()
    torch = torch_lib()
    model = onnx.load(str(path)) if not hasattr(path, "graph") else path
    vocab = tuple(str(v) for v in vocab)
    g = Graph(
        vocab=vocab,
        alphabet=tuple(alphabet),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        positions=positions,
        source="imported from an ONNX graph (netproof.symbolic.importers.onnx_graph)",
    )
    imp = Importer(g, torch.float32)
    imp.positions = positions
    ids = sorted({vocab.index(t) for t in (*alphabet, *prefix, *suffix)})
    pos = torch.arange(positions, dtype=torch.long).unsqueeze(0).expand(2, positions).clone()
    with torch.no_grad():
        out = OnnxWalker(imp, ids).run(model, Tok(pos))
    g.readout = readout_of(imp, out, positions)
    return g
