"""Compositional SMT proofs: a theorem about a network proved from its block lemmas, the way the
papers argue.

A monolithic encoding (:mod:`netproof.verifier.smt.monolithic`) gives z3 the whole network in real arithmetic and
drowns at a few dozen tokens. A paper instead proves lemmas about blocks ("this FFN computes
AND on {0,1} inputs", "this head selects the nearest unmatched position") and then reasons
about the network in which each block is replaced by what the lemma says it computes. This
package does the same, mechanically, from the IR and the lemmas a construction declares
(:attr:`~netproof.verifier.claims.Construction.lemmas`):

1. **Each lemma is proved once over its whole input domain**, independently of any word length:

   - :class:`~netproof.verifier.claims.BooleanBlock`: the FFN's faithful encoding (affine maps and
     ReLU/σ/step as case splits) on Boolean inputs (Bool variables) and real inputs (Real
     variables) against the declared formulas; ``unsat`` of "some output differs" is a proof
     for every input.
   - :class:`~netproof.verifier.claims.NearestSelection`: the head's score, cleared of denominators and
     multiplied by n (so that a feature i/n becomes the integer i), compared pairwise at two
     symbolic positions a < b for a symbolic length n and all Boolean key dims: the better ranked
     position (preferred first, then nearer) has a strictly larger score. One query proves it for
     every n, and makes the argmax unique, so the tie rule does not matter.
   - :class:`~netproof.verifier.claims.RankedSelection`: the same comparison for a ranking by a
     tuple of Boolean formulas, the first or the last position among equal ranks, on any mask
     (the farthest position of a one-sided mask, the first or last of the whole word).

2. **The theorem is proved over the abstracted network**, one query per range of word lengths
   (a symbolic length over padded slots, see :class:`.abstraction.Abstraction`; one query per length where
   the network computes with a length-dependent value). The word is Bool bits per position; every value is a :class:`~fractions.Fraction` (it does not depend on
   the word), a Bool term (a dim known to be 0 or 1) or a Real term. A proved
   :class:`BooleanBlock` becomes its Boolean formulas; a proved :class:`NearestSelection`
   becomes a prefix scan ("the value at the nearest preferred position so far"), linear in n;
   every other block is encoded faithfully (affine maps, ReLU case splits, hardmax as a maximum
   with a symbolic selection; an averaging head over Boolean values scales its position by the
   integer count of maximizers, which ReLU's positive homogeneity carries to the readout).
   The language is its :class:`~netproof.verifier.claims.Automaton`, run over the word bits. Beside the
   ranges, every length is tried at once (:func:`prove_recognizes`): as a transition system
   over positions with an inductive invariant (the Dyck recognizers), or as one query over
   position classes (:mod:`.classes`: soft attention whose scores repeat with the
   position, e.g. PARITY; value claims with a closed form too, :func:`prove_value`).

3. **Side conditions**: a lemma replaces a block only where its assumptions hold in the state it
   reads: every dim it assumes Boolean is a Bool term (or 0/1) at every position, every
   positional dim holds its feature exactly, no position is scaled. These are checked while
   the query is built; where one fails the block is encoded faithfully instead, and the lemma
   tree records it.

A ``sat`` answer is a word; it is replayed through the exact interpreter, and a word the exact
interpreter does not misclassify is an encoder bug (:class:`~netproof.verifier.smt.errors.EncoderBugError`),
never a verdict. Ranges are tried in increasing order; a counterexample is brought to the
shortest length its range allows and then shrunk to the shortlex-first counterexample of that
length. Value claims with a closed form (:func:`prove_value`) go the same way, one length at a
time.

z3 is imported inside functions only; numerals come from Fractions (``z3.RealVal("p/q", ctx)``),
every query has its own ``z3.Context`` and its SMT-LIB2 text in the lemma tree.

The package, bottom to top (each module imports only those before it):

- :mod:`.arithmetic`: the faithful value arithmetic (Fractions, Bool, Real and Int terms) and the
  IR's affine maps and FFNs over it;
- :mod:`.lemmas`: the block lemmas and their proofs (:func:`prove_lemma`; in the routes of a
  run, each lemma of a network decided once, by content), :data:`METHOD`, :class:`LemmaResult`;
- :mod:`.ranked`: a proved RankedSelection as a scan, in the abstraction and in the system;
- :mod:`.abstraction`: the network with the proved lemmas in place, over one length or a range;
- :mod:`.system`: the same read as a transition system over positions;
- :mod:`.invariants`: inductive invariants (Spacer's clauses, decision diagrams) and their
  certificate queries (:func:`certificate_queries`);
- :mod:`.diagrams`: the reachable states by binary decision diagrams, in a child process
  (standard library and dd only);
- :mod:`.classes`: every length at once by position classes (soft attention);
- :mod:`.symmetry`: the type symmetry of a layer induction (words of three types suffice where
  the network compares types only for equality; its premise checked on the weights);
- :mod:`.search`: the search for a proof for every length, in a thread beside the ranges;
- :mod:`.ranges`: the range queries and the recognition theorem (:func:`prove_recognizes`,
  :func:`prove_compositional`);
- :mod:`.traces`: trace properties for every length (:func:`prove_trace`: the NearestSelection
  lemmas, or the transition system watching the property);
- :mod:`.value_claims`: value claims with a closed form (:func:`prove_value`,
  :func:`value_builder`);
- :mod:`.correspondence`: a network compiled from a B-RASP program, proved equal to the program
  for every length operation by operation (:func:`~.correspondence.prove_correspondence`: each
  block's lemma, then two small queries per attention operation; no automaton, no search);
- :mod:`.counters`: counting networks for every length (uniform causal heads as integer running
  sums, comparisons over the integers: :func:`~.counters.prove_counting`), the network read as a
  counter system in product with a language's counter automaton, an invariant by Houdini over
  candidate facts (else Spacer) and its three certificate queries in QF_LIA;
- :mod:`.same_language`: two languages' counter automata side by side, for every length
  (:func:`~.same_language.prove_same_language`: an :class:`~netproof.verifier.claims.ExactFact`
  with a :class:`~netproof.verifier.claims.SameLanguage` form, e.g. a C-RASP program against its
  reference language);
- :mod:`.rebuild`: the queries rebuilt for a proof log's freshness check (:func:`rebuild_queries`).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface
(:mod:`netproof.verifier.smtlib`) and, of :mod:`netproof.verifier.smt`, :mod:`~.errors`, :mod:`~.stack`,
:mod:`~.closed_forms`, :mod:`~.encoder` and :mod:`~.monolithic` (the per-length loop of value
claims); z3, sympy and dd only inside functions (or in the child process). Never the registry of
constructions: a caller passes the construction.
"""

from .invariants import Diagram, certificate_queries
from .lemmas import METHOD, LemmaResult, prove_lemma
from .ranges import Progress, prove_compositional, prove_recognizes
from .rebuild import rebuild_queries, rebuild_tree
from .traces import TraceOutcome, prove_trace
from .value_claims import prove_value, value_builder

__all__ = [
    "METHOD",
    "Diagram",
    "LemmaResult",
    "Progress",
    "TraceOutcome",
    "certificate_queries",
    "prove_compositional",
    "prove_lemma",
    "prove_recognizes",
    "prove_trace",
    "prove_value",
    "rebuild_queries",
    "rebuild_tree",
    "value_builder",
]
