"""Compiled programs back in: a file of ``netproof export --format torch`` (a ``torch.export``
archive, :mod:`netproof.symbolic.torch_pt2`), as written or after a user fine-tuned or perturbed
it, imported to its exact network and checked by the faithfulness gate: :func:`import_exported`.

The module carries its layout (names, masks, tie rules, readout), so nothing is guessed: each
tensor entry becomes its exact Fraction (:func:`~netproof.symbolic.torch_pt2.network_of`). The
gate then runs the module itself, in float64 and in its own dtype, on every word up to the
longest length whose words fit in ``budget`` and on ``samples`` random longer ones, against the
imported network (:func:`~netproof.verifier.models.faithful.check_faithful`; a hardmax network's
logits are exact, :mod:`.exact_enclosure`): a module whose code was changed, or whose hardmax
met a float near-tie that its tolerance resolved the other way, is refused with the word.

May import the IR's torch module format, the gate and :mod:`.imported`; torch inside functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .faithful import check_faithful, dtype_eps
from .imported import Imported

__all__ = ["import_exported", "is_exported_file"]


def is_exported_file(path: str | Path) -> bool:
    """Whether ``path`` is a ``torch.export`` archive of ``netproof export --format torch``."""
    from netproof.symbolic.torch_pt2 import is_exported, load_pt2

    if not str(path).endswith(".pt2") or not Path(path).is_file():
        return False
    try:
        return bool(is_exported(load_pt2(path)))
    except Exception:  # not a torch.export archive: the structural importer says why
        return False


def import_exported(
    model: str | Path | Any,
    *,
    max_len: int = 16,
    compare: bool = True,
    samples: int = 32,
    budget: int = 256,
    name: str | None = None,
) -> Imported:
    """The exact network of ``model`` (a path to an archive, or the module itself) for words
    of up to ``max_len`` symbols, gated against the module's own runs unless ``compare`` is
    False. An :class:`~netproof.symbolic.importers.ImporterError` says what is wrong with the
    file; an :class:`~netproof.verifier.models.faithful.UnfaithfulImportError` refuses an
    import that computes another function than the module."""
    import torch

    from netproof.symbolic.importers import ImporterError
    from netproof.symbolic.ir import Network, TokenEmbedding
    from netproof.symbolic.torch_export import StateDictError
    from netproof.symbolic.torch_pt2 import layout_of, load_pt2, network_of

    label = name or (Path(model).stem if isinstance(model, (str, Path)) else "module")
    try:
        module = load_pt2(model) if isinstance(model, (str, Path)) else model
        meta = layout_of(module)
        net = network_of(module)
    except (StateDictError, RuntimeError, OSError) as exc:
        raise ImporterError(f"{label}: {exc}") from None
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)  # to_module refuses the others
    specials = len(emb.prefix) + len(emb.suffix)
    if max_len + specials > int(meta["max_len"]):
        raise ImporterError(
            f"{label} runs sequences of up to {meta['max_len']} tokens ({specials} of them "
            f"special), so words of up to {int(meta['max_len']) - specials} symbols, not "
            f"{max_len}: give a smaller --max-n or re-export with a larger --max-len"
        )
    net = Network(
        name=label,
        dims=net.dims,
        embedding=net.embedding,
        layers=net.layers,
        readout=net.readout,
        params=net.params,
        reference=net.reference,
    )
    vocab = tuple(meta["layout"]["embedding"]["tokens"])
    imported = Imported(net, module, vocab, emb.prefix, emb.suffix, None)
    if compare:
        own = imported.dtype
        runs: dict[str, tuple[Any, float]] = {
            "float64": (lambda ws: imported.run(ws, float64=True), dtype_eps(torch.float64))
        }
        if own != torch.float64:
            runs[str(own).removeprefix("torch.")] = (imported.run, dtype_eps(own))
        imported.faith = check_faithful(net, runs, max_len=max_len, samples=samples, budget=budget)
    return imported
