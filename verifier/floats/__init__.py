"""Floats: the torch backend checked against the exact interpreters (differential checks), where
float precision stops agreeing with the exact answer, and float experiments' plots.

May import: the claims vocabulary, :mod:`netproof.symbolic` and its interpreters (torch inside
functions); never SMT, fuzzing, campaigns or the CLI.
"""
