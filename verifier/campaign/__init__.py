"""Campaigns: the library API that runs a set of claims (built-in constructions, user modules,
network files) and stores their records; the claims ledger.

May import every engine (exhaustive, SMT, fuzzing, floats) and the vocabulary; never the CLI.
"""
