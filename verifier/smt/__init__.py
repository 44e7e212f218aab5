"""Proofs by SMT: the encoder of a network over a symbolic word, the compositional prover (block
lemmas, the abstraction, every-length search by transition systems, decision diagrams and
position classes), proof logs and their recheck with a second solver.

May import: the claims vocabulary, :mod:`netproof.symbolic`, the solver interface
(:mod:`netproof.verifier.smtlib`) and exhaustive checking (counterexamples are replayed by the
exact interpreter); z3 and cvc5 only inside functions. Never fuzzing, floats, campaigns or the CLI.
"""
