"""Model files of any ``nn.Module``: a whole pickled model (``torch.save(model)``), a state dict
with its module class (``FILE.py:Class`` or ``package.module:Class`` and the constructor's keyword
arguments), or a ``torch.export`` archive (``.pt2``). torch inside functions only.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .canonical import ImporterError

__all__ = ["load_class", "load_module_file"]


def load_class(spec: str) -> Any:
    """The class named by ``FILE.py:Class`` or ``package.module:Class``."""
    if ":" not in spec:
        raise ImporterError(f"--module {spec!r} must be FILE.py:Class or package.module:Class")
    where, name = spec.rsplit(":", 1)
    try:
        if where.endswith(".py"):
            if not Path(where).is_file():
                raise ImporterError(f"--module {spec!r}: no file {where!r}")
            mspec = importlib.util.spec_from_file_location(
                f"netproof_user_model_{Path(where).stem}", where
            )
            if mspec is None or mspec.loader is None:
                raise ImporterError(f"--module {spec!r}: cannot load {where!r}")
            module = importlib.util.module_from_spec(mspec)
            mspec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except ImporterError:
        raise
    except Exception as exc:
        raise ImporterError(
            f"--module {spec!r}: loading failed: {type(exc).__name__}: {exc}"
        ) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise ImporterError(f"--module {spec!r}: {where} has no {name!r}")
    return cls


def load_module_file(
    path: str | Path,
    *,
    module: str | None = None,
    kwargs: Mapping[str, Any] | str | None = None,
) -> Any:
    """The ``nn.Module`` saved at ``path`` (see the module docstring), in eval mode."""
    import torch

    p = Path(path)
    if not p.is_file():
        raise ImporterError(f"model file {str(p)!r} does not exist")
    if isinstance(kwargs, str):
        try:
            kwargs = json.loads(kwargs)
        except json.JSONDecodeError as exc:
            raise ImporterError(f"--kwargs {kwargs!r} is not JSON: {exc}") from None
    if p.suffix == ".pt2":
        try:
            return torch.export.load(str(p)).module()
        except Exception as exc:
            raise ImporterError(
                f"cannot read {str(p)!r} as a torch.export archive: {exc}"
            ) from None
    try:
        obj = torch.load(str(p), map_location="cpu", weights_only=True)
    except Exception:
        try:
            obj = torch.load(str(p), map_location="cpu", weights_only=False)
        except (AttributeError, ModuleNotFoundError) as exc:
            raise ImporterError(
                f"{str(p)!r} is a pickled model whose class cannot be found here ({exc}); save its "
                "state dict (torch.save(model.state_dict(), ...)) and give --module FILE.py:Class "
                "--kwargs JSON"
            ) from None
        except Exception as exc:
            raise ImporterError(f"cannot read {str(p)!r}: {type(exc).__name__}: {exc}") from None
    if isinstance(obj, torch.nn.Module):
        return obj.eval()
    given: dict[str, Any] = dict(kwargs) if isinstance(kwargs, Mapping) else {}
    if isinstance(obj, Mapping) and module is not None:
        cls = load_class(module)
        try:
            model = cls(**given)
            model.load_state_dict(dict(obj))
        except Exception as exc:
            raise ImporterError(
                f"{module}(**{given}) does not take the state dict {str(p)!r}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            ) from None
        return model.eval()
    if isinstance(obj, Mapping):
        raise ImporterError(
            f"{str(p)!r} is a state dict; give its module class: --module FILE.py:Class "
            "(and --kwargs JSON for the constructor)"
        )
    raise ImporterError(f"{str(p)!r} holds a {type(obj).__name__}, not a torch module")
