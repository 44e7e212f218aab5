"""One network on one word, with the exact interpreter that can run it: ``netproof run``'s
backend choice.

``auto`` takes the first of exact rationals, sympy and intervals that can: exact where the
network stays rational, sympy where √ or e^x enter, intervals where sympy cannot decide a sign;
for an imported trained model (its reference says "imported from"), exact, then intervals
(``--backend sympy`` still runs sympy, slowly).
A network no backend can evaluate on the word (an undefined value, a symbol outside the
alphabet) is a :class:`~netproof.verifier.campaign.errors.CampaignError` with the interpreter's
message.

>>> from netproof.constructions import REGISTRY
>>> c = REGISTRY["parity"]
>>> backend, trace = evaluate(c.network(c.parse_params({})), ("0", "1", "1", "0"))
>>> backend, str(trace.output)
('exact', '-3/77')

May import the IR's interpreters (lazily) and the campaign's error class.
"""

from __future__ import annotations

from typing import Any

from netproof.symbolic import NotRationalError, SymbolicError

from .errors import CampaignError

__all__ = ["BACKENDS", "evaluate"]

BACKENDS = ("auto", "exact", "sympy", "interval")
"""The exact interpreters :func:`evaluate` runs (``auto``: the first that can)."""


def evaluate(
    net: Any, word: Any, backend: str = "auto", length: int | None = None
) -> tuple[str, Any]:
    """Run ``net`` on ``word`` with ``backend`` (``length``: the total length a prefix is read
    at); the backend used and the trace."""
    from netproof.symbolic.evaluation import UndecidedSignError

    if backend not in BACKENDS:
        raise CampaignError(f"backend={backend!r}: choose one of {', '.join(BACKENDS)}")
    order: tuple[str, ...] = ("exact", "sympy", "interval") if backend == "auto" else (backend,)
    if backend == "auto" and str(getattr(net, "reference", "")).startswith("imported from"):
        # a trained model's weights are dyadic rationals of 24–53 bits: sympy's expressions of
        # its softmax and layer norms grow for minutes, the interval interpreter takes milliseconds
        order = ("exact", "interval")
    last: Exception | None = None
    for name in order:
        if name == "exact":
            from netproof.symbolic.exact import run
        elif name == "sympy":
            from netproof.symbolic.sympy_interp import run
        else:
            from netproof.symbolic.interval import run
        try:
            return name, run(net, word, length=length)
        except (NotRationalError, UndecidedSignError) as exc:
            last = exc
            if backend != "auto":
                break
        except SymbolicError as exc:
            raise CampaignError(f"{type(exc).__name__}: {exc}") from None
    raise CampaignError(f"{last}") from None
