"""The papers' constructions: one module per paper, each building IR and declaring claims.

:data:`REGISTRY` maps each construction's short name (as typed on the command line) to its
:class:`~netproof.verifier.claims.Construction`.
"""

from __future__ import annotations

from netproof.verifier.claims import Construction

from netproof.constructions import bhattamishra2020, chang2021, chiang2022, suzgun2019, yao2021

REGISTRY: dict[str, Construction] = {
    c.name: c
    for c in (
        *chiang2022.CONSTRUCTIONS,
        *yao2021.CONSTRUCTIONS,
        *bhattamishra2020.CONSTRUCTIONS,
        *suzgun2019.CONSTRUCTIONS,
        *chang2021.CONSTRUCTIONS,
    )
}

__all__ = ["REGISTRY"]
