"""Fuzzing with hypothesis: strategies for words, languages, networks and machines, and the fuzz
driver that searches for counterexamples (evidence, never proof).

May import: the claims vocabulary (Dyck(k, D) included), :mod:`netproof.symbolic` and its
interpreters, exhaustive checking (every failure is confirmed by the exact checker); never SMT,
floats, campaigns, the CLI or a paper module.
"""
