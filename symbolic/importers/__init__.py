"""Importers: one small module per source that maps a model onto the canonical layout
(:mod:`.canonical`), then one shared path into the IR (:func:`.lower.lower`); the faithfulness
gate (the source model run against the imported network's rigorous enclosure) is
:mod:`netproof.verifier.models.faithful`.

- :mod:`.torch_module`: any ``nn.Module`` of standard parts, by its ``torch.fx`` graph.

Importing this package imports no optional library; each importer imports its source's library
inside functions.
"""

from .canonical import Graph, ImporterError
from .lower import lower

__all__ = ["Graph", "ImporterError", "lower"]
