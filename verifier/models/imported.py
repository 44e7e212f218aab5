"""Bring your own model: any ``nn.Module`` (an object or a file) imported by its structure
(:mod:`netproof.symbolic.importers`), checked by the faithfulness gate (:mod:`.faithful`), with
the source model kept beside the network so that its own float runs can be compared later.

May import the importers, the gate, the IR; torch inside functions.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netproof.symbolic.importers import lower
from netproof.symbolic.ir import Network

from .faithful import FaithReport, check_faithful, dtype_eps

__all__ = ["Imported", "import_torch"]


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
            self._model64 = copy.deepcopy(self.model).double().eval()
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
                y = model(ids)
            if isinstance(y, (tuple, list)):
                y = y[0]
            y = y.to(torch.float64)
            if y.dim() == 2 and y.shape[1] == 2:
                y = y[:, 1] - y[:, 0]
            y = y.reshape(len(idx))
            for j, i in enumerate(idx):
                out[i] = float(y[j])
        return out


def import_torch(
    model: Any,
    *,
    alphabet: Sequence[str],
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

    from netproof.symbolic.importers.torch_files import load_module_file
    from netproof.symbolic.importers.torch_graph import graph_of_module

    if isinstance(model, (str, Path)):
        label = name or Path(model).stem
        model = load_module_file(model, module=module, kwargs=kwargs)
    else:
        label = name or type(model).__name__
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
