"""Campaigns: the library API that runs a set of claims (built-in constructions, user modules,
network files, ``Construction`` objects) and stores their records; the claims ledger.

Proving from Python (a notebook, a pytest test) is one call::

    from netproof.verifier.campaign import prove
    result = prove(["parity"], claims=["C4"], max_n=6)
    assert result.exit_code == 0, result.summary

:func:`prove` returns a :class:`ProofRun` (verdicts per (construction, claim), the records,
the summary, the exit status); bad input raises :class:`CampaignError`, a crash inside netproof
:class:`InternalError`. ``prove(..., executor="ray", address=...)`` runs on a Ray cluster (the
extra ``netproof[ray]``) with the same records.

Modules: :mod:`.errors` (the error class, exit statuses), :mod:`.usermod` (users' construction
modules), :mod:`.sources` (resolving constructions and parameters: :class:`Session`),
:mod:`.store` (record paths and atomic writes), :mod:`.proving` (proof runs: tasks, workers,
:func:`prove`), :mod:`.executors` (where the work runs: local processes or Ray), :mod:`.fuzzrun` (fuzz runs), :mod:`.evaluate` (one word, the exact backend that
can), :mod:`.ledger` (the claims ledger page).

May import every engine (exhaustive, SMT, fuzzing, floats), the vocabulary, the IR and the
registry :mod:`netproof.constructions`; never the CLI. Importing it loads neither z3 nor torch.
"""

from .errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUTED,
    EXIT_TERMINATED,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    CampaignError,
    InternalError,
    Interrupted,
)
from .executors import EXECUTORS
from .proving import ClaimResult, Progress, ProofRun, prove
from .sources import Session

__all__ = [
    "EXECUTORS",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REFUTED",
    "EXIT_TERMINATED",
    "EXIT_UNKNOWN",
    "EXIT_USAGE",
    "CampaignError",
    "ClaimResult",
    "InternalError",
    "Interrupted",
    "Progress",
    "ProofRun",
    "Session",
    "prove",
]
