"""Floats: the torch backend checked against the exact interpreters (differential checks), where
float precision stops agreeing with the exact answer (the precision search), and float
experiments' plots. The paper-specific parts (a paper's figures, the worst-case words of its
constructions, its documented precision runs) are declarations in the paper modules
(:class:`~netproof.verifier.claims.Experiment`, :class:`~netproof.verifier.claims.Precision`),
passed in by the caller; nothing here names a paper.

May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters (torch inside
functions); never SMT, fuzzing, campaigns, the CLI, the registry or a paper module.
"""
