"""Bring your own model: any ``nn.Module`` (an object or a file) imported by its structure
(:mod:`netproof.symbolic.importers`), checked by the faithfulness gate (:mod:`.faithful`), with
the source model kept beside the network so that its own float runs can be compared later.

May import the importers, the gate, the IR; torch inside functions.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netproof.symbolic.importers import lower
from netproof.symbolic.ir import Network

from .faithful import FaithReport, check_faithful, dtype_eps

__all__ = ["Imported", "import_file", "import_onnx", "import_torch", "import_transformerlens"]


@dataclass(slots=True)
class Imported:
    """An imported network with its source model: ``run(words)`` is the source's own output
    (in its own dtype, or float64 with ``float64=True``), the logit the network's readout
    computes; ``faith`` what the gate ran (None with ``compare=False``)."""

    net: Network
    model: Any
    vocab: tuple[str, ...]
    prefix: tuple[str, ...]
    suffix: tuple[str, ...]
    faith: FaithReport | None
    _model64: Any = None

    @property
    def dtype(self) -> Any:
        import torch

        return next((p.dtype for p in self.model.parameters()), torch.float32)

    def run(self, words: Sequence[Sequence[str]], *, float64: bool = False) -> list[float]:
        import torch

        if float64 and self._model64 is None:
            with warnings.catch_warnings():  # torch.export modules warn of a deprecation inside
                warnings.simplefilter("ignore", FutureWarning)
                self._model64 = copy.deepcopy(self.model).double()
            with contextlib.suppress(NotImplementedError):
                self._model64.eval()
        model = self._model64 if float64 else self.model
        index = {t: k for k, t in enumerate(self.vocab)}
        out = [0.0] * len(words)
        by_len: dict[int, list[int]] = {}
        for i, w in enumerate(words):
            by_len.setdefault(len(w), []).append(i)
        for _m, idx in by_len.items():
            ids = torch.tensor(
                [[index[t] for t in (*self.prefix, *words[i], *self.suffix)] for i in idx],
                dtype=torch.long,
            ).reshape(len(idx), -1)
            with torch.no_grad():
                try:
                    y = model(ids)
                except Exception:  # a torch.export module holds its batch size: one word a call
                    if len(idx) == 1:
                        raise
                    y = torch.cat([_first(model(row.unsqueeze(0))) for row in ids])
            y = _first(y)
            y = y.to(torch.float64)
            if y.dim() == 2 and y.shape[1] == 2:
                y = y[:, 1] - y[:, 0]
            y = y.reshape(len(idx))
            for j, i in enumerate(idx):
                out[i] = float(y[j])
        return out


def _first(y: Any) -> Any:
    return y[0] if isinstance(y, (tuple, list)) else y


def import_torch(
    model: Any,
    *,
    alphabet: Sequence[str] | None,
    vocab: Sequence[str] | None = None,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    max_len: int = 16,
    module: str | None = None,
    kwargs: Any = None,
    compare: bool = True,
    name: str | None = None,
    samples: int = 32,
    budget: int = 256,
) -> Imported:
    """Import ``model`` (an ``nn.Module`` or a model file, see
    :func:`netproof.symbolic.importers.torch_files.load_module_file`) for words of up to
    ``max_len`` symbols; ``vocab[t]`` is the token of id t (default: the alphabet, ids 0…),
    ``prefix``/``suffix`` the tokens around every word (e.g. ``("<cls>",)``). With ``compare``
    (the default) the faithfulness gate runs; an
    :class:`~netproof.verifier.models.faithful.UnfaithfulImportError` refuses the import."""
    import torch

    from netproof.symbolic.importers import ImporterError
    from netproof.symbolic.importers.torch_files import load_module_file
    from netproof.symbolic.importers.torch_graph import graph_of_module

    if not alphabet:
        raise ImporterError(
            "the word alphabet is needed to import a torch model: give the vocabulary (--vocab, "
            "with --prefix/--suffix for special tokens) or a language with an alphabet"
        )
    if isinstance(model, (str, Path)):
        label = name or Path(model).stem
        model = load_module_file(model, module=module, kwargs=kwargs)
    else:
        label = name or type(model).__name__
    with contextlib.suppress(NotImplementedError):  # a torch.export module has no mode
        model.eval()
    vocab = tuple(vocab if vocab is not None else alphabet)
    positions = max_len + len(prefix) + len(suffix)
    g = graph_of_module(
        model,
        vocab=vocab,
        alphabet=tuple(alphabet),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        positions=positions,
    )
    net = lower(g, name=label, params=(("vocab", " ".join(vocab)),))
    imported = Imported(net, model, vocab, tuple(prefix), tuple(suffix), None)
    if compare:
        own = imported.dtype
        runs: dict[str, tuple[Any, float]] = {
            "float64": (lambda ws: imported.run(ws, float64=True), dtype_eps(torch.float64))
        }
        if own != torch.float64:
            runs[str(own).removeprefix("torch.")] = (imported.run, dtype_eps(own))
        imported.faith = check_faithful(net, runs, max_len=max_len, samples=samples, budget=budget)
    return imported


class _LogitOf:
    """A model returning logits ``[B, n, vocabulary]`` read as one logit: ``accept`` minus
    ``reject`` (or ``accept`` alone) at ``position`` (an ``nn.Module`` built on first use)."""

    @staticmethod
    def wrap(model: Any, accept: int, reject: int | None, position: int) -> Any:
        import torch

        class LogitOf(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, ids: Any) -> Any:
                y = self.model(ids)[:, position]
                return y[:, accept] - (y[:, reject] if reject is not None else 0)

            def double(self) -> Any:
                # a HookedTransformer casts its activations to cfg.dtype: the float64 copy the
                # gate runs (made by deepcopy first, so the user's model keeps its cfg) says so
                cfg = getattr(self.model, "cfg", None)
                if cfg is not None and hasattr(cfg, "dtype"):
                    cfg.dtype = torch.float64
                return super().double()

        return LogitOf().eval()


def import_transformerlens(
    source: Any,
    *,
    alphabet: Sequence[str] | None = None,
    vocab: Sequence[str] | None = None,
    prefix: Sequence[str] | None = None,
    suffix: Sequence[str] | None = None,
    accept: int | None = None,
    reject: int | None = None,
    position: int | None = None,
    max_len: int = 8,
    compare: bool = True,
    name: str | None = None,
    samples: int = 32,
    budget: int = 256,
) -> Imported:
    """Import a TransformerLens-layout model: a live ``HookedTransformer`` (``.cfg``,
    ``.state_dict()``, logits ``[B, n, d_vocab]``) or a dump file
    (:data:`netproof.symbolic.importers.transformerlens.DUMP_FORMAT`, e.g. a compiled tracr
    model written by ``examples/tracr_dump.py``; its ``vocab``, ``readout`` … are defaults for the
    arguments). The gate runs the live model, or compares with the outputs a dump recorded where
    its source library ran; a dump without a recording needs ``compare=False``."""
    import torch

    from netproof.symbolic.importers import ImporterError
    from netproof.symbolic.importers.transformerlens import DUMP_FORMAT, graph_of_transformerlens

    dump: dict[str, Any] = {}
    if isinstance(source, (str, Path)):
        label = name or Path(source).stem
        try:
            dump = dict(torch.load(str(source), map_location="cpu", weights_only=True))
        except Exception as exc:
            raise ImporterError(
                f"cannot read {str(source)!r}: {type(exc).__name__}: {exc}"
            ) from None
        if dump.get("format") != DUMP_FORMAT or dump.get("version") != 1:
            raise ImporterError(
                f"{str(source)!r} has format {dump.get('format')!r} version {dump.get('version')!r}; "
                f"expected {DUMP_FORMAT!r} version 1 (docs/models.md)"
            )
        cfg, sd, live = dump["cfg"], dump["state_dict"], None
    else:
        label = name or type(source).__name__
        cfg, sd, live = source.cfg, source.state_dict(), source.eval()
    ro = dict(dump.get("readout", {}))
    vocab = tuple(vocab if vocab is not None else dump.get("vocab", ()))
    alphabet = tuple(alphabet if alphabet is not None else dump.get("alphabet", ()))
    prefix = tuple(prefix if prefix is not None else dump.get("prefix", ()))
    suffix = tuple(suffix if suffix is not None else dump.get("suffix", ()))
    accept = accept if accept is not None else ro.get("accept")
    reject = reject if reject is not None else ro.get("reject")
    position = position if position is not None else ro.get("position", -1)
    if not vocab or not alphabet or accept is None:
        raise ImporterError(
            "a TransformerLens model needs its vocab (token of each id), alphabet and the "
            "accept logit's index (the readout)"
        )
    g = graph_of_transformerlens(
        cfg,
        sd,
        vocab=vocab,
        alphabet=alphabet,
        prefix=prefix,
        suffix=suffix,
        positions=max_len + len(prefix) + len(suffix),
        accept=int(accept),
        reject=None if reject is None else int(reject),
        position=int(position),
    )
    net = lower(g, name=label, params=(("vocab", " ".join(vocab)),))
    model = None if live is None else _LogitOf.wrap(live, int(accept), reject, int(position))
    imported = Imported(net, model, vocab, prefix, suffix, None)
    if not compare:
        return imported
    recorded = dump.get("recorded")
    if model is not None:
        own = imported.dtype
        runs: dict[str, tuple[Any, float]] = {
            "float64": (lambda ws: imported.run(ws, float64=True), dtype_eps(torch.float64))
        }
        if own != torch.float64:
            runs[str(own).removeprefix("torch.")] = (imported.run, dtype_eps(own))
        imported.faith = check_faithful(net, runs, max_len=max_len, samples=samples, budget=budget)
    elif recorded:
        table = {
            tuple(w.split()): float(y)
            for w, y in zip(recorded["words"], recorded["outputs"], strict=True)
        }
        eps = dtype_eps(getattr(torch, str(recorded.get("dtype", "float32"))))
        label_ = f"recorded ({recorded.get('source', 'the source library')})"
        imported.faith = check_faithful(
            net,
            {label_: (lambda ws: [table[tuple(w)] for w in ws], eps)},
            max_len=max_len,
            words=list(table),
        )
    else:
        raise ImporterError(
            "this dump holds no recorded outputs of its source model, so the import cannot be "
            "compared with it; rerun the dump script where the source library is installed, or "
            "pass compare=False (--no-compare) to skip the gate"
        )
    return imported


def import_file(path: str | Path, **options: Any) -> Imported:
    """Any model file: a TransformerLens/tracr dump, an ONNX file or a torch model file."""
    import torch

    from netproof.symbolic.importers.transformerlens import DUMP_FORMAT

    p = Path(path)
    if p.suffix == ".onnx":
        keep = {
            k: v
            for k, v in options.items()
            if k not in ("module", "kwargs", "accept", "reject", "position")
        }
        return import_onnx(p, **keep)
    try:
        peek = torch.load(str(p), map_location="cpu", weights_only=True)
    except Exception:
        peek = None
    if isinstance(peek, dict) and peek.get("format") == DUMP_FORMAT:
        keep = {
            k: v
            for k, v in options.items()
            if k not in ("module", "kwargs") and v not in (None, ())
        }
        return import_transformerlens(p, **keep)
    options = {k: v for k, v in options.items() if k not in ("accept", "reject", "position")}
    return import_torch(p, **options)


class _OnnxRunner:
    """An ONNX model run by ``onnx``'s reference evaluator (numpy, the file's own dtype)."""

    def __init__(self, path: Path) -> None:
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.proto = onnx.load(str(path))
        self.session = ReferenceEvaluator(self.proto)
        init = {i.name for i in self.proto.graph.initializer}
        self.input = next(i.name for i in self.proto.graph.input if i.name not in init)

    def __call__(self, ids: Any) -> Any:
        import torch

        feeds: dict[str, Any] = {self.input: ids.numpy()}
        results: Any = self.session.run(None, feeds)
        out = results[0]
        return torch.from_numpy(out.copy())

    def parameters(self) -> Any:
        import torch

        return iter([torch.zeros(1, dtype=torch.float32)])

    def eval(self) -> _OnnxRunner:
        return self


def import_onnx(
    path: str | Path,
    *,
    alphabet: Sequence[str],
    vocab: Sequence[str] | None = None,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    max_len: int = 16,
    compare: bool = True,
    name: str | None = None,
    samples: int = 32,
    budget: int = 256,
) -> Imported:
    """Import the ONNX file at ``path`` (first input: token ids ``[batch, length]``; output one
    logit, ``[B]``/``[B, 1]``, or two classes) with the ``onnx`` package; the gate runs the file
    itself with ``onnx``'s reference evaluator, in the file's dtype."""
    import torch

    from netproof.symbolic.importers.onnx_graph import graph_of_onnx

    p = Path(path)
    if not alphabet:
        from netproof.symbolic.importers import ImporterError

        raise ImporterError(
            "the word alphabet is needed to import an ONNX file: give the vocabulary (--vocab, "
            "with --prefix/--suffix for special tokens) or a language with an alphabet"
        )
    vocab = tuple(vocab if vocab is not None else alphabet)
    g = graph_of_onnx(
        p,
        vocab=vocab,
        alphabet=tuple(alphabet),
        prefix=tuple(prefix),
        suffix=tuple(suffix),
        positions=max_len + len(prefix) + len(suffix),
    )
    net = lower(g, name=name or p.stem, params=(("vocab", " ".join(vocab)),))
    runner = _OnnxRunner(p)
    imported = Imported(net, runner, vocab, tuple(prefix), tuple(suffix), None)
    imported._model64 = runner  # the file's own dtype only: onnx runs it as it is
    if compare:
        imported.faith = check_faithful(
            net,
            {"float32 (onnx reference evaluator)": (imported.run, dtype_eps(torch.float32))},
            max_len=max_len,
            samples=samples,
            budget=budget,
        )
    return imported
