"""A checker job for a hand-built (e.g. mutated) network: the network wrapped in a
construction of its own, with no claims and no parameters."""

from __future__ import annotations

from typing import Any

from netproof.symbolic import Network
from netproof.verifier.claims import Construction
from netproof.verifier.exhaustive.checker import Job


def job_for(net: Network, language: Any = None) -> Job:
    """A :class:`Job` over ``net`` (and ``language``, where a check needs the construction's)."""
    c = Construction(
        name=net.name,
        paper_id="test",
        title="test",
        reference="test",
        params=(),
        build=lambda values: net,
        claims=lambda values: (),
        language=language,
    )
    return Job(c, {})
