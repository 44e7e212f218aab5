"""Proofs by SMT: the encoder of a network over a symbolic word, the compositional prover (block
lemmas, the abstraction, every-length search by transition systems, decision diagrams and
position classes), proof logs and their recheck with a second solver.

The modules, bottom to top (each imports only those before it):

- :mod:`.errors`: :class:`~.errors.Unsupported` and :class:`~.errors.EncoderBugError`;
- :mod:`.encoder`: the network on a symbolic word of one length (:class:`~.encoder.Encoder`);
- :mod:`.closed_forms`: closed forms of value claims as z3 terms, and their counterexamples replayed;
- :mod:`.monolithic`: the claim queries over the whole network, one per length;
- :mod:`.compositional`: the compositional prover (a subpackage);
- :mod:`.prove`: the smt method and the ``prove --method`` dispatcher (exhaustive, smt, all);
- :mod:`.prooflog`: proof logs, their strict reader and the freshness check;
- :mod:`.recheck`: a proof log's queries solved again by a second solver.

May import: the claims vocabulary, :mod:`netproof.symbolic`, the solver interface
(:mod:`netproof.verifier.smtlib`) and exhaustive checking (counterexamples are replayed by the
exact interpreter; ``--method all`` runs both); z3, cvc5 and dd only inside functions. Never
fuzzing, floats, campaigns, the CLI or the registry of constructions (a caller passes it).
"""
