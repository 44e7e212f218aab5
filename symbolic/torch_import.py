"""Trained torch recognizers imported as exact networks: every float weight becomes its exact
:class:`~fractions.Fraction`.

The family (:mod:`netproof.symbolic.torch_recognizer`, :class:`Recognizer`): a token
``nn.Embedding`` with a ``<cls>`` token first, a learned or sinusoidal positional table (the
stored values), an ``nn.TransformerEncoder`` of ``nn.TransformerEncoderLayer`` (softmax attention
with any number of heads, layer norm with its eps, ReLU or GELU FFN, post-norm or pre-norm,
causal mask or none, optional final layer norm) and an ``nn.Linear(d_model, 1)`` classifier read at the first or
the last token. The FFN may be ReLU or the exact GELU (``activation`` in the config; the IR's
``Activation(kind="gelu")``). :func:`to_rnn` imports the recurrent member of the family, an
:class:`~netproof.symbolic.torch_recognizer.RNNRecognizer` (a single-layer ``nn.RNN`` or
``nn.LSTM`` read on its last hidden state), as an
:class:`~netproof.symbolic.rnn_recognizers.ElmanRecognizer` or
:class:`~netproof.symbolic.rnn_recognizers.LSTMRecognizer`. A model outside the family is refused
with one line naming the module and what is supported.

:func:`load_model` reads a file: a dict ``{"format": "netproof-recognizer", "config",
"state_dict"}`` (:func:`~netproof.symbolic.torch_recognizer.save_recognizer`, read with
``weights_only=True``), a bare state dict with its config given apart (a JSON file), or a whole
:class:`Recognizer` saved with ``torch.save(model)`` (a pickle: only load files you trust).
:func:`to_network` builds the exact :class:`~netproof.symbolic.ir.Network` and
:func:`import_model` does both. :func:`import_model` also reads netproof's own ``export --format
state_dict`` files (:func:`from_export`): a network whose export is exact comes back as the same
function (the identical network where its maps read every residual dim they list).

**The network.** Residual dims ``x0 … x{d-1}`` hold the torch residual stream. Each encoder
layer ``ℓ`` becomes sublayers named ``L{ℓ}.*``:

- attention: one :class:`~netproof.symbolic.ir.Head` per torch head (``Softmax(c=1)``, scale
  ``1/√d_head``, mask ``causal`` or ``none``), q/k names ``L{ℓ}.h{k}.q{j}``, values
  ``L{ℓ}.h{k}.v{j}``, the output projection as the layer's ``output`` map;
- post-norm (``norm_first=False``): the attention and FFN sublayers have a post-residual
  :class:`~netproof.symbolic.ir.LayerNorm` (γ = 1, β = 0 in the IR), followed by a sublayer
  ``L{ℓ}.norm1`` / ``L{ℓ}.norm2`` without residual that applies γ ⊙ z + β;
- pre-norm (``norm_first=True``): a sublayer ``L{ℓ}.norm1`` writes LN(x)·γ + β into fresh dims
  ``L{ℓ}.n1.{j}`` that the heads read; the FFN normalizes inside its branch and folds γ, β into
  its first linear map (exact rational products);
- the final layer norm, if any, writes ``final.{j}``, which the classifier reads.

The learned or sinusoidal table becomes positional features ``I[i=k]`` (the indicator of position
k) with the table's entries as coefficients. Positions run from 0 (the ``<cls>`` token).

This module imports the IR and its builders; torch only inside functions (the ``torch`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import MissingExtraError, SymbolicError
from .ir import (
    FFN,
    Activation,
    ActivationKind,
    Affine,
    AttentionLayer,
    Classifier,
    Head,
    LayerNorm,
    Mask,
    Network,
    Scale,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from .rnn_recognizers import ElmanRecognizer, LSTMRecognizer, RNNRecognizerIR, gate_names

__all__ = [
    "CLS",
    "SUPPORTED",
    "ImportModelError",
    "exact_matrix",
    "from_export",
    "import_model",
    "load_model",
    "to_network",
    "to_rnn",
]

CLS = "<cls>"

SUPPORTED = (
    "the netproof Recognizer family: nn.Embedding tokens, a learned or sinusoidal nn.Embedding "
    "position table, nn.TransformerEncoder of nn.TransformerEncoderLayer (softmax attention, any "
    "heads, ReLU or exact GELU FFN, layer norm, pre- or post-norm, causal or not), nn.Linear(d_model, 1) "
    "classifier; or an RNNRecognizer: nn.Embedding, a single-layer nn.RNN (tanh or ReLU) or nn.LSTM, nn.Linear(hidden, 1) "
    "on the last hidden state (see docs/models.md)"
)


class ImportModelError(SymbolicError, ValueError):
    """A model file or model is outside the imported family, or malformed."""


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(
            "importing a torch model needs torch; install the extra: pip install -e '.[torch]'"
        ) from exc
    return torch


def exact_matrix(t: Any, where: str) -> list[list[Fraction]]:
    """A 2-d (or 1-d, as one row) float tensor as exact Fractions (``Fraction(float)`` is exact)."""
    torch = _torch()
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        raise ImportModelError(f"{where} is not a float tensor ({type(t).__name__}); {SUPPORTED}")
    if not bool(torch.isfinite(t).all()):
        raise ImportModelError(
            f"{where} holds inf or nan; a trained model's weights must be finite"
        )
    rows = t.detach().to("cpu", torch.float64)
    if rows.dim() == 1:
        rows = rows.unsqueeze(0)
    return [[Fraction(v) for v in row] for row in rows.tolist()]


def _refuse_rnn_module(model: Any) -> None:
    """Raise :class:`ImportModelError` naming the first module of the :class:`RNNRecognizer`
    ``model`` outside the family (a stacked, bidirectional or bias-free ``nn.RNN``)."""
    nn = _torch().nn
    from .torch_recognizer import RNNRecognizer

    for name, mod in model.named_modules():
        cell = model.config.get("cell", "rnn")
        if type(mod) not in (
            RNNRecognizer,
            nn.Embedding,
            nn.Linear,
            nn.LSTM if cell == "lstm" else nn.RNN,
        ):
            raise ImportModelError(
                f"module {name or 'model'} ({type(mod).__name__}) is outside the family; supported: {SUPPORTED}"
            )
        if isinstance(mod, (nn.RNN, nn.LSTM)):
            kind = type(mod).__name__
            if (
                mod.num_layers != 1
                or mod.bidirectional
                or not mod.bias
                or not mod.batch_first
                or mod.proj_size
            ):
                raise ImportModelError(
                    f"module {name} is nn.{kind}(num_layers={mod.num_layers}, bidirectional={mod.bidirectional}, bias={mod.bias}, "
                    f"batch_first={mod.batch_first}, proj_size={mod.proj_size}); only a single-layer, one-directional nn.{kind} "
                    f"with biases and no projection is supported ({SUPPORTED})"
                )
            said = model.config.get("nonlinearity", "tanh")
            if isinstance(mod, nn.RNN) and mod.nonlinearity != said:
                raise ImportModelError(
                    f"module {name} has nonlinearity {mod.nonlinearity!r} but the config says {said!r}"
                )


def _refuse_module(model: Any) -> None:
    """Raise :class:`ImportModelError` naming the first module of ``model`` outside the family."""
    torch = _torch()
    from .torch_recognizer import Recognizer, RNNRecognizer

    if isinstance(model, RNNRecognizer):
        _refuse_rnn_module(model)
        return
    if not isinstance(model, Recognizer):
        raise ImportModelError(
            f"module {type(model).__module__}.{type(model).__name__} is not a netproof Recognizer; supported: {SUPPORTED}"
        )
    nn = torch.nn
    allowed = (
        Recognizer,
        nn.Embedding,
        nn.TransformerEncoder,
        nn.TransformerEncoderLayer,
        nn.ModuleList,
        nn.MultiheadAttention,
        nn.modules.linear.NonDynamicallyQuantizableLinear,
        nn.Linear,
        nn.LayerNorm,
        nn.Dropout,
        nn.ReLU,
        nn.GELU,
    )
    for name, mod in model.named_modules():
        if type(mod) not in allowed:
            raise ImportModelError(
                f"module {name or 'model'} ({type(mod).__name__}) is outside the family; supported: {SUPPORTED}"
            )
        if isinstance(mod, nn.TransformerEncoderLayer):
            act = getattr(mod, "activation", None)
            kind = _activation_kind(act)
            if kind is None:
                raise ImportModelError(
                    f"module {name} has activation {act!r}; only ReLU and the exact GELU (approximate='none') FFNs "
                    f"are supported ({SUPPORTED})"
                )
            said = model.config.get("activation", "relu")
            if kind != said:
                raise ImportModelError(
                    f"module {name} has activation {act!r} but the model's config says activation={said!r}; "
                    "set the config's 'activation' to the one its layers use"
                )
            if not mod.self_attn._qkv_same_embed_dim or mod.self_attn.in_proj_bias is None:
                raise ImportModelError(
                    f"module {name}.self_attn must have equal q/k/v widths and biases; {SUPPORTED}"
                )
        if isinstance(mod, nn.LayerNorm) and not mod.elementwise_affine:
            raise ImportModelError(
                f"module {name}: a LayerNorm without its affine weights is not supported; {SUPPORTED}"
            )


def _activation_kind(act: Any) -> str | None:
    """``relu`` or ``gelu`` for an FFN activation of the family, else None (the tanh-approximate
    GELU is another function, refused)."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    if act is F.relu or type(act) is nn.ReLU:
        return "relu"
    if act is F.gelu or (type(act) is nn.GELU and act.approximate == "none"):
        return "gelu"
    return None


def load_model(
    path: str | Path, *, config: str | Path | Mapping[str, object] | None = None
) -> tuple[dict[str, object], dict[str, Any]]:
    """The config and the float state dict of the model saved at ``path`` (see the module docs)."""
    torch = _torch()
    from .torch_recognizer import FORMAT, full_config, full_rnn_config

    p = Path(path)
    if not p.is_file():
        raise ImportModelError(f"model file {str(p)!r} does not exist")
    try:
        obj = torch.load(str(p), map_location="cpu", weights_only=True)
    except Exception:
        try:
            obj = torch.load(str(p), map_location="cpu", weights_only=False)
        except Exception as exc:
            raise ImportModelError(
                f"cannot read {str(p)!r} as a torch.save file: {type(exc).__name__}: {exc}"
            ) from None
    if isinstance(obj, torch.nn.Module):
        _refuse_module(obj)
        return dict(obj.config), dict(obj.state_dict())
    if not isinstance(obj, Mapping):
        raise ImportModelError(
            f"{str(p)!r} holds a {type(obj).__name__}; expected a Recognizer, its state dict or a netproof-recognizer dict"
        )
    if "format" in obj:
        if obj.get("format") != FORMAT or set(obj) != {"format", "config", "state_dict"}:
            raise ImportModelError(
                f"{str(p)!r} has format {obj.get('format')!r} and keys {sorted(obj)}; expected {FORMAT!r} with config and state_dict"
            )
        cfg, sd = obj["config"], obj["state_dict"]
    else:
        if config is None:
            raise ImportModelError(
                f"{str(p)!r} is a bare state dict; give its JSON config (--config cfg.json)"
            )
        sd = obj
        cfg = config
    if isinstance(cfg, (str, Path)):
        try:
            cfg = json.loads(Path(cfg).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ImportModelError(f"cannot read the config {str(cfg)!r}: {exc}") from None
    try:
        full = (full_rnn_config if dict(cfg).get("model") == "rnn" else full_config)(dict(cfg))
    except ValueError as exc:
        raise ImportModelError(str(exc)) from None
    return full, dict(sd)


def _affine(
    inputs: Sequence[str],
    outputs: Sequence[str],
    w: Sequence[Sequence[Fraction]],
    b: Sequence[Fraction],
) -> Affine:
    return Affine(
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        weights=tuple(tuple(r) for r in w),
        bias=tuple(b),
    )


def _identity(inputs: Sequence[str], outputs: Sequence[str]) -> Affine:
    n = len(inputs)
    return _affine(
        inputs,
        outputs,
        [[Fraction(int(i == j)) for j in range(n)] for i in range(n)],
        [Fraction(0)] * n,
    )


def _diag(
    inputs: Sequence[str],
    outputs: Sequence[str],
    gamma: Sequence[Fraction],
    beta: Sequence[Fraction],
) -> Affine:
    n = len(inputs)
    return _affine(
        inputs,
        outputs,
        [[gamma[i] if i == j else Fraction(0) for j in range(n)] for i in range(n)],
        beta,
    )


def to_network(
    config: Mapping[str, object], state_dict: Mapping[str, Any], *, name: str = "imported"
) -> Network:
    """The exact network of a :class:`~netproof.symbolic.torch_recognizer.Recognizer` with this
    config and state dict (see the module docstring for the layout)."""
    cfg: dict[str, Any] = dict(config)
    alphabet = [str(a) for a in cfg["alphabet"]]
    d, heads, layers = int(cfg["d_model"]), int(cfg["nhead"]), int(cfg["num_layers"])
    eps = Fraction(float(cfg["layer_norm_eps"]))
    said = str(cfg.get("activation", "relu"))
    if said not in ("relu", "gelu"):
        raise ImportModelError(
            f"activation={said!r} is not supported; the FFN activation must be 'relu' or 'gelu' ({SUPPORTED})"
        )
    act: ActivationKind = "gelu" if said == "gelu" else "relu"
    if d % heads:
        raise ImportModelError(f"d_model={d} is not a multiple of nhead={heads}")
    dh = d // heads
    expected = {"token.weight", "position.weight", "classifier.weight", "classifier.bias"}
    for ell in range(layers):
        expected |= {
            f"encoder.layers.{ell}.{k}"
            for k in (
                "self_attn.in_proj_weight",
                "self_attn.in_proj_bias",
                "self_attn.out_proj.weight",
                "self_attn.out_proj.bias",
                "linear1.weight",
                "linear1.bias",
                "linear2.weight",
                "linear2.bias",
                "norm1.weight",
                "norm1.bias",
                "norm2.weight",
                "norm2.bias",
            )
        }
    if cfg["final_norm"]:
        expected |= {"encoder.norm.weight", "encoder.norm.bias"}
    got = set(state_dict)
    if got != expected:
        extra, missing = sorted(got - expected), sorted(expected - got)
        raise ImportModelError(
            f"state dict does not match the config: unexpected keys {extra[:4]}, missing keys {missing[:4]}; {SUPPORTED}"
        )

    def m(key: str) -> list[list[Fraction]]:
        return exact_matrix(state_dict[key], key)

    def v(key: str) -> list[Fraction]:
        return m(key)[0]

    x = [f"x{j}" for j in range(d)]
    dims = list(x)
    tok = m("token.weight")
    pos = m("position.weight")
    if len(tok) != len(alphabet) + 1 or len(tok[0]) != d:
        raise ImportModelError(
            f"token.weight has shape {len(tok)}×{len(tok[0])}; expected {len(alphabet) + 1}×{d} (alphabet + <cls>)"
        )
    table = tuple(
        (a, tuple((x[j], tok[k][j]) for j in range(d) if tok[k][j] != 0))
        for k, a in enumerate([*alphabet, CLS])
    )
    positional = tuple(
        (x[j], f"I[i={i}]", row[j]) for i, row in enumerate(pos) for j in range(d) if row[j] != 0
    )
    embedding = TokenEmbedding(
        alphabet=tuple(alphabet), table=table, positional=positional, prefix=(CLS,), index_base=0
    )
    mask: Mask = "causal" if cfg["causal"] else "none"
    subs: list[Sublayer] = []
    for ell in range(layers):
        pre = f"encoder.layers.{ell}."
        L = f"L{ell}"
        w_in, b_in = m(pre + "self_attn.in_proj_weight"), v(pre + "self_attn.in_proj_bias")
        g1, be1, g2, be2 = (
            v(pre + "norm1.weight"),
            v(pre + "norm1.bias"),
            v(pre + "norm2.weight"),
            v(pre + "norm2.bias"),
        )
        ln = LayerNorm(eps=eps, over=tuple(x))
        if cfg["norm_first"]:
            n1 = [f"{L}.n1.{j}" for j in range(d)]
            tmp = [f"{L}.n1in.{j}" for j in range(d)]
            dims += n1
            subs.append(
                Sublayer(
                    block=FFN(
                        name=f"{L}.norm1",
                        steps=(
                            _identity(x, tmp),
                            LayerNorm(eps=eps, over=tuple(tmp)),
                            _diag(tmp, n1, g1, be1),
                        ),
                    )
                )
            )
            reads = n1
        else:
            reads = x
        head_list = []
        values: list[str] = []
        for k in range(heads):
            rows = slice(k * dh, (k + 1) * dh)
            q = [f"{L}.h{k}.q{j}" for j in range(dh)]
            vv = [f"{L}.h{k}.v{j}" for j in range(dh)]
            values += vv
            head_list.append(
                Head(
                    name=f"h{k}",
                    query=_affine(reads, q, w_in[0:d][rows], b_in[0:d][rows]),
                    key=_affine(reads, q, w_in[d : 2 * d][rows], b_in[d : 2 * d][rows]),
                    value=_affine(reads, vv, w_in[2 * d : 3 * d][rows], b_in[2 * d : 3 * d][rows]),
                    normalizer=Softmax(c=Fraction(1)),
                    scale=Scale(sqrt_d=dh),
                    mask=mask,
                )
            )
        out = _affine(
            values, x, m(pre + "self_attn.out_proj.weight"), v(pre + "self_attn.out_proj.bias")
        )
        attention = AttentionLayer(name=f"{L}.attention", heads=tuple(head_list), output=out)
        w1, b1, w2, b2 = (
            m(pre + "linear1.weight"),
            v(pre + "linear1.bias"),
            m(pre + "linear2.weight"),
            v(pre + "linear2.bias"),
        )
        hidden = [f"{L}.ff{j}" for j in range(len(w1))]
        if cfg["norm_first"]:
            subs.append(Sublayer(block=attention))
            tmp2 = [f"{L}.n2.{j}" for j in range(d)]
            w1f = [[w * g2[j] for j, w in enumerate(row)] for row in w1]  # W1·diag(γ)
            b1f = [
                b + sum((w * be2[j] for j, w in enumerate(row)), Fraction(0))
                for row, b in zip(w1, b1, strict=True)
            ]
            subs.append(
                Sublayer(
                    block=FFN(
                        name=f"{L}.ffn",
                        steps=(
                            _identity(x, tmp2),
                            LayerNorm(eps=eps, over=tuple(tmp2)),
                            _affine(tmp2, hidden, w1f, b1f),
                            Activation(kind=act),
                            _affine(hidden, x, w2, b2),
                        ),
                    )
                )
            )
        else:
            subs.append(Sublayer(block=attention, post_ln=ln))
            subs.append(
                Sublayer(
                    block=FFN(name=f"{L}.norm1", steps=(_diag(x, x, g1, be1),)), residual=False
                )
            )
            subs.append(
                Sublayer(
                    block=FFN(
                        name=f"{L}.ffn",
                        steps=(
                            _affine(x, hidden, w1, b1),
                            Activation(kind=act),
                            _affine(hidden, x, w2, b2),
                        ),
                    ),
                    post_ln=ln,
                )
            )
            subs.append(
                Sublayer(
                    block=FFN(name=f"{L}.norm2", steps=(_diag(x, x, g2, be2),)), residual=False
                )
            )
    reads = x
    if cfg["final_norm"]:
        fin = [f"final.{j}" for j in range(d)]
        tmp = [f"final_in.{j}" for j in range(d)]
        dims += fin
        subs.append(
            Sublayer(
                block=FFN(
                    name="final_norm",
                    steps=(
                        _identity(x, tmp),
                        LayerNorm(eps=eps, over=tuple(tmp)),
                        _diag(tmp, fin, v("encoder.norm.weight"), v("encoder.norm.bias")),
                    ),
                )
            )
        )
        reads = fin
    logit = _affine(reads, ["logit"], m("classifier.weight"), v("classifier.bias"))
    # the default activation is left out of the params, so that a ReLU model keeps the fingerprint
    # it had before GELU FFNs were imported
    params = tuple(
        (k, json.dumps(cfg[k])) for k in sorted(cfg) if not (k == "activation" and cfg[k] == "relu")
    )
    return Network(
        name=name,
        dims=tuple(dims),
        embedding=embedding,
        layers=tuple(subs),
        readout=Classifier(logit=logit, position=0 if cfg["readout"] == "first" else -1),
        params=params,
        reference="imported from a trained torch Recognizer (netproof.symbolic.torch_import)",
    )


def import_model(
    path: str | Path,
    *,
    config: str | Path | Mapping[str, object] | None = None,
    name: str | None = None,
) -> Network | RNNRecognizerIR:
    """The exact network of the model file at ``path``: a file of netproof's own ``export --format
    state_dict`` (:func:`from_export`), a Recognizer (:func:`load_model`, then :func:`to_network`)
    or an RNNRecognizer (:func:`to_rnn`)."""
    from .torch_export import FORMAT as EXPORT_FORMAT
    from .torch_export import StateDictError, load

    torch = _torch()
    try:
        peek = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception:
        peek = None
    if isinstance(peek, Mapping) and peek.get("format") == EXPORT_FORMAT:
        try:
            net = from_export(load(path))
        except StateDictError as exc:
            raise ImportModelError(str(exc)) from None
        return net if name is None else _renamed(net, name)
    cfg, sd = load_model(path, config=config)
    if cfg.get("model") == "rnn":
        return to_rnn(cfg, sd, name=name or Path(path).stem)
    return to_network(cfg, sd, name=name or Path(path).stem)


def to_rnn(
    config: Mapping[str, object], state_dict: Mapping[str, Any], *, name: str = "imported"
) -> RNNRecognizerIR:
    """The exact :class:`~netproof.symbolic.rnn_recognizers.ElmanRecognizer` (``cell="rnn"``) or
    :class:`~netproof.symbolic.rnn_recognizers.LSTMRecognizer` (``cell="lstm"``) of an
    :class:`~netproof.symbolic.torch_recognizer.RNNRecognizer` with this config and state dict:
    inputs ``e0 …``, hidden units ``h0 …``, an LSTM's gate rows ``i:h0 … f:… g:… o:…`` (torch's
    row order); W_ih with bias b_ih and W_hh with bias b_hh as torch holds them, every weight its
    exact Fraction."""

    cfg: dict[str, Any] = dict(config)
    alphabet = [str(a) for a in cfg["alphabet"]]
    e, hsize = int(cfg["embedding_dim"]), int(cfg["hidden_size"])
    expected = {
        "token.weight",
        "rnn.weight_ih_l0",
        "rnn.weight_hh_l0",
        "rnn.bias_ih_l0",
        "rnn.bias_hh_l0",
        "classifier.weight",
        "classifier.bias",
    }
    got = set(state_dict)
    if got != expected:
        extra, missing = sorted(got - expected), sorted(expected - got)
        raise ImportModelError(
            f"state dict does not match the RNN config: unexpected keys {extra[:4]}, missing keys {missing[:4]}; {SUPPORTED}"
        )

    def m(key: str, shape: tuple[int, int]) -> list[list[Fraction]]:
        rows = exact_matrix(state_dict[key], key)
        if (len(rows), len(rows[0])) != shape:
            raise ImportModelError(
                f"{key} has shape {len(rows)}×{len(rows[0])}; the config gives {shape[0]}×{shape[1]}"
            )
        return rows

    xs, hs = [f"e{j}" for j in range(e)], [f"h{j}" for j in range(hsize)]
    tok = m("token.weight", (len(alphabet), e))
    embedding = tuple(
        (a, tuple((xs[j], tok[k][j]) for j in range(e) if tok[k][j] != 0))
        for k, a in enumerate(alphabet)
    )
    lstm = cfg.get("cell", "rnn") == "lstm"
    rows = list(gate_names(tuple(hs))) if lstm else hs
    W_ih = _affine(
        xs, rows, m("rnn.weight_ih_l0", (len(rows), e)), m("rnn.bias_ih_l0", (1, len(rows)))[0]
    )
    W_hh = _affine(
        hs, rows, m("rnn.weight_hh_l0", (len(rows), hsize)), m("rnn.bias_hh_l0", (1, len(rows)))[0]
    )
    W_y = _affine(
        hs, ["logit"], m("classifier.weight", (1, hsize)), m("classifier.bias", (1, 1))[0]
    )
    params = tuple((k, json.dumps(cfg[k])) for k in sorted(cfg))
    reference = "imported from a trained torch RNNRecognizer (netproof.symbolic.torch_import)"
    if lstm:
        return LSTMRecognizer(
            name=name,
            alphabet=tuple(alphabet),
            inputs=tuple(xs),
            hidden=tuple(hs),
            embedding=embedding,
            W_ih=W_ih,
            W_hh=W_hh,
            W_y=W_y,
            params=params,
            reference=reference,
        )
    return ElmanRecognizer(
        name=name,
        alphabet=tuple(alphabet),
        inputs=tuple(xs),
        hidden=tuple(hs),
        embedding=embedding,
        W_ih=W_ih,
        W_hh=W_hh,
        W_y=W_y,
        activation="relu" if cfg["nonlinearity"] == "relu" else "tanh",
        params=params,
        reference=reference,
    )


def _renamed(net: Network, name: str) -> Network:
    return Network(
        name=name,
        dims=net.dims,
        embedding=net.embedding,
        layers=net.layers,
        readout=net.readout,
        params=net.params,
        reference=net.reference,
    )


# --------------------------------------------------------------------------- netproof's own exports


def from_export(saved: Mapping[str, Any]) -> Network:
    """The network of a file written by :func:`netproof.symbolic.torch_export.save` (as
    :func:`~netproof.symbolic.torch_export.load` returns it): every tensor entry becomes its exact
    Fraction, the layout gives the rest (names, masks, normalizers, scales as exact strings).

    A network whose export is exact (``layout["tensors"][key]["exact"]`` everywhere) comes back as
    the same function; maps that read the residual stream read the dims with a nonzero column."""
    from .ir import FlatEmbedding, Hardmax, NextSymbols

    lay, tensors = saved["layout"], saved["state_dict"]
    dims = tuple(lay["dims"])

    def mat(key: str) -> list[list[Fraction]]:
        return exact_matrix(tensors[key], key)

    def affine_from(
        prefix_w: str,
        prefix_b: str,
        rows: Sequence[str] | None = None,
        cols: Sequence[str] | None = None,
        drop_zero: bool = False,
    ) -> Affine:
        spec = lay["tensors"][prefix_w]
        r = list(rows if rows is not None else spec["rows"])
        c = list(cols if cols is not None else spec["cols"])
        w = mat(prefix_w) if r else []
        b = exact_matrix(tensors[prefix_b], prefix_b)[0] if r else []
        if drop_zero:
            keep = [j for j in range(len(c)) if any(row[j] != 0 for row in w)]
            c = [c[j] for j in keep]
            w = [[row[j] for j in keep] for row in w]
        return _affine(c, r, w, b)

    emb_json = lay["embedding"]
    if emb_json["type"] == "TokenEmbedding":
        table_m = mat("embedding.table")
        tokens = emb_json["tokens"]
        table = tuple(
            (t, tuple((d, v) for d, v in zip(dims, row, strict=True) if v != 0))
            for t, row in zip(tokens, table_m, strict=True)
        )
        feats = [f["name"] for f in emb_json["positional_features"]]
        pos_m = mat("embedding.positional") if feats else []
        positional = tuple(
            (d, f, v)
            for f, row in zip(feats, pos_m, strict=True)
            for d, v in zip(dims, row, strict=True)
            if v != 0
        )
        embedding: TokenEmbedding | FlatEmbedding = TokenEmbedding(
            alphabet=tuple(emb_json["alphabet"]),
            table=table,
            positional=positional,
            prefix=tuple(emb_json["prefix"]),
            suffix=tuple(emb_json["suffix"]),
            index_base=emb_json["index_base"],
        )
    else:
        values = exact_matrix(tensors["embedding.values"], "embedding.values")[0]
        first = emb_json["input_dims"][0] if emb_json["input_dims"] else "x1"
        embedding = FlatEmbedding(
            alphabet=tuple(emb_json["alphabet"]),
            length=emb_json["length"],
            values=tuple(zip(emb_json["alphabet"], values, strict=True)),
            prefix=first[:-1] or "x",
        )

    def eps_of(key: str) -> Fraction:
        return exact_matrix(tensors[key].reshape(1), key)[0][0]

    layers: list[Sublayer] = []
    for i, entry in enumerate(lay["layers"]):
        post = None
        if entry["post_ln"] is not None:
            over = entry["post_ln"]["over"]
            post = LayerNorm(
                eps=eps_of(f"layers.{i}.post_ln.eps"), over=None if over is None else tuple(over)
            )
        if entry["kind"] == "attention":
            heads = []
            for h, hj in enumerate(entry["heads"]):
                key = f"layers.{i}.attention.heads.{h}"
                nz = hj["normalizer"]
                normalizer: Hardmax | Softmax = (
                    Hardmax(tie=nz["tie"])
                    if nz["type"] == "hardmax"
                    else Softmax(
                        r=None if nz["r"] is None else Fraction(nz["r"]),
                        c=None if nz["c"] is None else Fraction(nz["c"]),
                        symbol=nz["symbol"],
                    )
                )
                sc = hj["scale"]
                heads.append(
                    Head(
                        name=hj["name"],
                        query=affine_from(f"{key}.W_Q", f"{key}.b_Q", drop_zero=True),
                        key=affine_from(f"{key}.W_K", f"{key}.b_K", drop_zero=True),
                        value=affine_from(f"{key}.W_V", f"{key}.b_V", drop_zero=True),
                        normalizer=normalizer,
                        scoring=hj["scoring"],
                        mask=hj["mask"],
                        empty=hj["empty"],
                        scale=Scale(
                            coef=Fraction(sc["coef"]),
                            sqrt_d=sc["sqrt_d"],
                            times_n=sc["times_n"],
                            log_n=sc["log_n"],
                        ),
                    )
                )
            output = (
                affine_from(f"layers.{i}.attention.W_O", f"layers.{i}.attention.b_O")
                if entry["output"]
                else None
            )
            block: AttentionLayer | FFN = AttentionLayer(
                name=entry["name"], heads=tuple(heads), output=output
            )
        else:
            steps: list[Affine | Activation | LayerNorm] = []
            for j, sj in enumerate(entry["steps"]):
                key = f"layers.{i}.ffn.steps.{j}"
                if sj["kind"] == "affine":
                    steps.append(affine_from(f"{key}.weight", f"{key}.bias"))
                elif sj["kind"] == "activation":
                    steps.append(Activation(kind=sj["activation"]))
                else:
                    steps.append(
                        LayerNorm(
                            eps=eps_of(f"{key}.eps"),
                            over=None if sj["over"] is None else tuple(sj["over"]),
                        )
                    )
            block = FFN(name=entry["name"], steps=tuple(steps))
        layers.append(Sublayer(block=block, residual=entry["residual"], post_ln=post))
    rj = lay["readout"]
    if rj["type"] == "Classifier":
        readout: Classifier | NextSymbols = Classifier(
            logit=affine_from("readout.logit.weight", "readout.logit.bias", drop_zero=True),
            position=rj["position"],
        )
    else:
        nz = rj["softmax"]
        readout = NextSymbols(
            scores=tuple(zip(rj["symbols"], rj["score_dims"], strict=True)),
            threshold=eps_of("readout.threshold"),
            softmax=None
            if nz is None
            else Softmax(
                r=None if nz["r"] is None else Fraction(nz["r"]),
                c=None if nz["c"] is None else Fraction(nz["c"]),
                symbol=nz["symbol"],
            ),
            end=rj["end"],
        )
    return Network(
        name=lay["network"],
        dims=dims,
        embedding=embedding,
        layers=tuple(layers),
        readout=readout,
        params=tuple((k, v) for k, v in lay["params"]),
        reference=lay["reference"],
    )
