"""Recognition for every length by induction over layers (:class:`~netproof.verifier.claims.LayerInduction`):
the paper's own proof of a bounded-depth recognizer ("after matching layer ℓ a token is marked
iff its pair has height <= ℓ"), made one small query family per layer instead of one transition
system for the whole network, whose reachable states grow exponentially with the depth.

The network is cut after the sublayers ``plan.after`` (ℓ = 1..L). At each cut the state of a
position is the embedding's, except the dims ``mark`` and ``error``: segment ℓ (the sublayers
after cut ℓ - 1 up to cut ℓ) is read with those two dims free, a Bool per position (``in.m``,
``in.e``), and must leave every other dim as the embedding has it (checked per position while
the system is built, or in the query where both are Bool terms). So the state at every cut is
the embedding with some marks and errors, and each segment is a transition system over
positions of its own (the scans of its NearestSelection lemmas, its FFN lemmas and a stack),
proved for every length by its reachable states and three certificate queries, as
:func:`.search.reachable_states` does for the whole network.

Pairs are those of the claim's stack automaton (a push and the pop that matches it, types
aside); a pair's height is 1 + the largest height of the pairs directly inside. Three queries
per induction step, each a transition system proved for every length:

- **layer ℓ complete**: over every word that is balanced within the stack's depth (pushes and
  pops, types aside) and in which every pop whose nearest input-unmarked position to the left
  is a push has that push's type (every word of the language is such a word), with input marks
  that are consistent (a pair's two ends alike, a marked pair with only marked pairs directly
  inside), the prefix and suffix tokens marked and no error: the output has no error, marks the
  prefix and suffix tokens, keeps every other dim, and marks a pair iff it was marked or every
  pair directly inside it was (:class:`_ChildMarks`, :class:`_LastUnmarked`). The query does not
  depend on ℓ: identical segments give the same query, solved once.
- **layer ℓ sound**: over every word, with any marks and errors, where the output has no error:
  the input has none; marks only grow; and where the input's marked word positions nest (types
  aside) with height <= ℓ - 1, nothing unmarked inside a marked pair and the prefix and suffix
  tokens marked, the output's nest with height <= ℓ likewise (:class:`_MarkedPairs`), and every
  newly marked pop has, as its nearest input-unmarked position to the left, a newly marked push
  of its type (:class:`_LastUnmarked`).
- **output**: the sublayers after cut L and the readout accept iff every position is marked and
  none has an error.

The steps between them are the arithmetic of heights, not solver queries:

- *A word of the language is accepted.* Its marks at cut ℓ are "the pair has height <= ℓ" (the
  prefix and suffix tokens marked) with no error: at cut 0 by the embedding's table
  (:func:`check_base`: no word symbol marked, the prefix and suffix tokens marked, no error),
  and from cut ℓ - 1 to ℓ by the complete query, since such marks are consistent and a pair has
  height <= ℓ iff every pair directly inside has height <= ℓ - 1. At cut L, the stack's depth,
  every pair is marked (a word of the language has no pair higher than L): accepted (output).
- *An accepted word is in the language.* It has no error at cut L (output), hence at no cut
  (sound, backwards). Forwards from cut 0 (nothing marked), the marks at cut ℓ nest with height
  <= ℓ and every marked pair has one type: a pair marked at cut ℓ - 1 stays a pair (marks grow,
  and its inside is whole marked pairs), and a newly marked one has everything between its ends
  marked in the input, so its push is its pop's nearest input-unmarked position to the left, of
  its type. At cut L every position is marked: the word is nested pairs of one type each, of
  height <= L, which the stack automaton accepts.

The invariants these steps name are checked against the exact interpreter on every short word
(tests/verifier/test_layer_induction.py). The depth costs one query per layer for soundness and
one in all for completeness, each of a size linear in the depth, instead of one transition
system whose states grow exponentially with it (Dyck(8, 5): 6 s, where that system gave no proof within 600 s).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic`, :mod:`.lemmas`, :mod:`.abstraction`,
:mod:`.system` and :mod:`.invariants`; z3 inside functions.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic import Classifier, Network, TokenEmbedding
from netproof.verifier.claims import Language, LayerInduction, Recognizes, TieRuleFree
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode, to_smt2

from .arithmetic import Values, certainly_equal
from .invariants import Diagram, Invariant, certificate, from_clauses, from_diagram
from .lemmas import LemmaResult
from .symmetry import restricted
from .system import (
    StateVars,
    Step,
    TransitionSystem,
    head_dims,
    label_index,
    tie_ends,
    tie_single,
)

__all__ = [
    "KINDS",
    "REASONS",
    "check_base",
    "induction_certificates",
    "induction_detail",
    "induction_system",
    "marks_claim",
    "marks_detail",
    "step_names",
]

KINDS = ("complete", "sound")
"""The two queries of each segment, in order (the output query comes after every segment)."""


def step_names(layers: int) -> list[str]:
    """The induction's steps, in the order they are proved: ``"layer ℓ complete"`` and ``"layer
    ℓ sound"`` for ℓ = 1..L, then ``"output"``; each is a transition system with three
    certificate queries, named ``"<claim> every n: <step>: initiation"`` and so on."""
    return [*(f"layer {ell} {kind}" for ell in range(1, layers + 1) for kind in KINDS), "output"]


REASONS = {
    "complete": {
        "initiation": "the invariant holds before the first token",
        "consecution": "reading one more token keeps the invariant",
        "safety": "no word of the language whose marks in are its pairs' heights <= ℓ - 1 (with no error) leaves the segment "
        "with an error, or with marks out other than marked before or every pair directly inside marked",
    },
    "sound": {
        "initiation": "the invariant holds before the first token",
        "consecution": "reading one more token keeps the invariant",
        "safety": "no word leaves the segment with no error but an error in its input, or with marks in that are nested pairs "
        "of height <= ℓ - 1 and marks out that are not nested pairs of height <= ℓ",
    },
    "output": {
        "initiation": "the invariant holds before the first token",
        "consecution": "reading one more token keeps the invariant",
        "safety": "the network accepts iff every position is marked and none has an error",
    },
    "ties": {
        "initiation": "the invariant holds before the first token",
        "consecution": "reading one more token keeps the invariant",
        "safety": "whatever the marks and errors at the last cut, the accept bit under the leftmost and under the rightmost "
        "maximizer of the readout head is the average's",
    },
}
"""The reason of each certificate query, by the step's kind."""


def marks_claim(claim: Any, watch: Any) -> tuple[Recognizes, list[str]]:
    """For a trace property whose :class:`~netproof.verifier.claims.PairHeights` form is what an
    induction over layers proves on its way (its ``induction``, with cuts ``after`` at
    thresholds 1..L, ``dim`` the mark, ``special`` 1, ``zero`` at most the error dim): the
    recognition claim whose completeness steps prove it, and those steps. Unsupported where the
    property says something else."""
    plan = watch.induction
    if plan is None:
        raise Unsupported("the PairHeights form declares no induction over layers")
    L = len(plan.after)
    if (
        tuple(label for label, _t in watch.after) != plan.after
        or tuple(t for _l, t in watch.after) != tuple(range(1, L + 1))
        or watch.dim != plan.mark
        or watch.special != 1
        or not set(watch.zero) <= {plan.error}
    ):
        raise Unsupported(
            "the PairHeights form is not the marks of its induction over layers (cuts, thresholds 1..L, mark, special 1, error)"
        )
    rec = Recognizes(
        id=claim.id,
        statement=claim.statement,
        reference=claim.reference,
        language=watch.language,
        induction=plan,
        min_len=claim.min_len,
        max_len=claim.max_len,
    )
    return rec, [f"layer {ell} complete" for ell in range(1, L + 1)]


def marks_detail(claim: Recognizes) -> str:
    """What a proof of the induction's marks (its completeness steps) did, as its detail says it."""
    plan = claim.induction
    assert plan is not None
    return (
        f"by the completeness steps of the induction over the {len(plan.after)} layers cut after {', '.join(plan.after)} "
        f"(marks {plan.mark!r}, errors {plan.error!r}), from the embedding's marks: per layer a transition system over positions, "
        "each with an inductive invariant (the reachable states, by binary decision diagrams) and its three queries (initiation, "
        "consecution, safety), each unsat"
    )


def induction_detail(claim: Recognizes, symmetry: str = "") -> str:
    """What a proof by ``claim``'s induction over layers did (after "… every longer one: N
    lemmas proved for every input, then, "), as its detail says it; ``symmetry``: the type
    symmetry's :attr:`~.symmetry.TypeSymmetry.detail` where the steps read fewer types."""
    plan = claim.induction
    assert plan is not None
    L = len(plan.after)
    return (
        f"by induction over the {L} layers cut after {', '.join(plan.after)} (marks {plan.mark!r}, errors {plan.error!r}): "
        f"per layer a transition system over positions for completeness and one for soundness, and one for the output, "
        f"{2 * L + 1} in all, each with an inductive invariant (the reachable states, by binary decision diagrams) and its "
        "three queries (initiation, consecution, safety), each unsat"
        + (f"; {symmetry}" if symmetry else "")
    )


TIES = "output ties"
"""The step of :func:`ties_claim`: the sublayers after the last cut watched for their tie rules."""


def ties_claim(claim: Any, watch: TieRuleFree) -> tuple[Recognizes, list[str]]:
    """For a trace property whose :class:`~netproof.verifier.claims.TieRuleFree` form declares
    the induction over layers its network is proved by (``induction`` and ``language``): the
    recognition claim whose cuts the proof uses, and its one step, :data:`TIES`. The theorem
    (Y5 for every word of every length) then rests on three premises, each checked:

    - *base*: at cut 0 the state is the embedding's, marks and errors 0/1 (:func:`check_base`);
    - *form*: every segment maps a state "the embedding's, with any 0/1 marks and errors" to one
      of that form, on every input, by the weights alone (:func:`keeps_form`: every other dim
      equal to the embedding's term by term, no query needed, and the mark and error 0/1 terms),
      so every word's state at the last cut is of that form, whatever the word;
    - *ties*: over every word with any 0/1 marks and errors at every position of the last cut
      (more states than the words reach), the sublayers after the cut accept under the leftmost
      and under the rightmost maximizer of the readout head exactly when under the average of
      them: a transition system over positions with no reachable bad state.

    The third alone would not do: a segment that changed another dim on some word would leave
    states the system never reads. Unsupported where the form declares no induction."""
    plan, language = watch.induction, watch.language
    if plan is None or language is None:
        raise Unsupported("the TieRuleFree form declares no induction over layers (and language)")
    rec = Recognizes(
        id=claim.id,
        statement=claim.statement,
        reference=claim.reference,
        language=language,
        induction=plan,
        min_len=claim.min_len,
        max_len=claim.max_len,
    )
    return rec, [TIES]


def keeps_form(net: Network, claim: Recognizes, results: Sequence[LemmaResult]) -> None:
    """The *form* premise of :func:`ties_claim`: every segment of ``claim``'s induction keeps
    every dim other than the mark and the error as the embedding has it and leaves those two
    0/1, on every input (by the terms, never by a query, so on every word, in the language or
    not); Unsupported naming the first segment and dim where not."""
    plan = claim.induction
    assert plan is not None
    for ell in range(1, len(plan.after) + 1):
        induction_system(net, claim, results, f"layer {ell} complete", strict=True)


def ties_detail(claim: Recognizes) -> str:
    """What a proof of a tie-rule property by the induction's last cut did."""
    plan = claim.induction
    assert plan is not None
    return (
        f"by the induction over the {len(plan.after)} layers cut after {', '.join(plan.after)} (marks {plan.mark!r}, "
        f"errors {plan.error!r}): the embedding's marks and errors are 0/1, every segment keeps every other dim as the "
        "embedding has it and its marks and errors 0/1 on every input (checked term by term), and over any 0/1 marks "
        "and errors at the last cut a transition system over positions that watches the readout head's leftmost and "
        "rightmost maximizers, with an inductive invariant (the reachable states, by binary decision diagrams) and its "
        "three queries (initiation, consecution, safety), each unsat"
    )


class _CutStep(Step):
    """One position of a segment: the state after ``start`` sublayers is the embedding's with
    the dims ``free`` replaced by Bool inputs (``in.<dim>``), and nothing before it is read."""

    def __init__(self, *args: Any, start: int, free: Sequence[str]) -> None:
        super().__init__(*args)
        self.start = start
        self.free = tuple(free)
        self.inputs = {d: self.z3.Bool(f"in.{d}", self.ctx) for d in self.free}
        self.key_base = start  # identical segments make identical systems, whatever their place

    def state(self, layer: int, t: int) -> Any:
        if layer < self.start:
            raise Unsupported(
                f"the segment from sublayer {self.start} reads the state after sublayer {layer}, before its cut"
            )
        if layer == self.start and (layer, t) not in self._states:
            x, _scale = self.embed(t)
            for d in self.free:
                x[d] = self.inputs[d]
            self._states[(layer, t)] = (x, None)
        return super().state(layer, t)


class _MarkedPairs:
    """The check "the marked word positions are nested pairs (a push and the pop that matches
    it, whatever their types) of height <= T, with no unmarked word position inside a marked
    pair" over a word read one symbol at a time: the height of the stack of marked pushes in
    unary (``<p>h1..<p>hT``). Every pair has height <= T iff that stack never holds more than T.
    :meth:`read` gives the constraints of one symbol and the Bool "this symbol breaks the
    check"; :meth:`open` "some marked push is not popped" (at the end)."""

    def __init__(
        self,
        z3: Any,
        vals: Values,
        cur: StateVars,
        nxt: StateVars,
        language: Language,
        T: int,
        prefix: str,
    ) -> None:
        stack = language.stack
        if stack is None:
            raise Unsupported(
                f"marked pairs need a language with a StackAutomaton ({language.name} has none)"
            )
        self.z3, self.vals, self.cur, self.nxt, self.stack, self.T, self.p = (
            z3,
            vals,
            cur,
            nxt,
            stack,
            T,
            prefix,
        )
        self.names = [f"{prefix}h{j}" for j in range(1, T + 1)]

    def init(self) -> list[Any]:
        return [self.z3.Not(self.cur(n)) for n in self.names]

    def open(self) -> Any:
        return self.cur(f"{self.p}h1") if self.T else self.z3.BoolVal(False, self.cur.ctx)

    def read(self, sym: Sequence[Any], mark: Any) -> tuple[list[Any], Any]:
        z3, vals, cur, nxt, st, T, p = (
            self.z3,
            self.vals,
            self.cur,
            self.nxt,
            self.stack,
            self.T,
            self.p,
        )
        ctx = cur.ctx
        false, true = z3.BoolVal(False, ctx), z3.BoolVal(True, ctx)
        push = vals.or_([sym[a] for a in range(len(sym)) if st.push[a] is not None])
        pop = vals.or_([sym[a] for a in range(len(sym)) if st.pop[a] is not None])
        h = [true, *(cur(f"{p}h{j}") for j in range(1, T + 1)), false]
        broke = vals.or_(
            [
                vals.and_([vals.not_(mark), h[1]]),  # an unmarked position inside a marked pair
                vals.and_([mark, push, h[T]]),  # a marked pair deeper than T
                vals.and_([mark, pop, vals.not_(h[1])]),  # a marked pop with no marked push
            ]
        )
        mpush, mpop = vals.and_([mark, push]), vals.and_([mark, pop])
        out = [
            vals.iff(
                nxt(f"{p}h{j}"), vals.bool_ite(mpush, h[j - 1], vals.bool_ite(mpop, h[j + 1], h[j]))
            )
            for j in range(1, T + 1)
        ]
        return out, broke


class _LastUnmarked:
    """The last word position unmarked in the input so far (``r.has``: there is one; ``r.o``:
    it pushes; ``r.new``: it is marked in the output; ``r.t{b}``: its type code). A pop newly
    marked (unmarked in, marked out) must close a pair with no position unmarked in between:
    the last unmarked position before it is a push of its type, newly marked too
    (:meth:`read`'s "breaks" Bool)."""

    def __init__(
        self, z3: Any, vals: Values, cur: StateVars, nxt: StateVars, language: Language
    ) -> None:
        stack = language.stack
        assert stack is not None
        self.z3, self.vals, self.cur, self.nxt, self.stack = z3, vals, cur, nxt, stack
        self.bits = max(1, (stack.types - 1).bit_length())
        self.names = ["r.has", "r.o", "r.new", *(f"r.t{b}" for b in range(self.bits))]

    def init(self) -> list[Any]:
        return [self.z3.Not(self.cur(n)) for n in self.names]

    def read(self, sym: Sequence[Any], m_in: Any, m_out: Any) -> tuple[list[Any], Any]:
        vals, cur, nxt, st, nb = self.vals, self.cur, self.nxt, self.stack, self.bits
        push = vals.or_([sym[a] for a in range(len(sym)) if st.push[a] is not None])
        pop = vals.or_([sym[a] for a in range(len(sym)) if st.pop[a] is not None])
        code = [st.push[a] if st.push[a] is not None else st.pop[a] for a in range(len(sym))]
        ty = [vals.or_([sym[a] for a in range(len(sym)) if (code[a] >> b) & 1]) for b in range(nb)]  # type: ignore[operator]
        same = vals.and_([vals.iff(cur(f"r.t{b}"), ty[b]) for b in range(nb)])
        opened = vals.and_([cur("r.has"), cur("r.o")])  # the last unmarked position pushes
        self.mistyped = vals.and_(
            [vals.not_(m_in), pop, opened, vals.not_(same)]
        )  # ... a type this pop does not close
        broke = vals.and_(
            [vals.not_(m_in), m_out, pop, vals.not_(vals.and_([opened, cur("r.new"), same]))]
        )
        here = vals.not_(m_in)
        out = [
            vals.iff(nxt("r.has"), vals.or_([cur("r.has"), here])),
            vals.iff(nxt("r.o"), vals.bool_ite(here, push, cur("r.o"))),
            vals.iff(nxt("r.new"), vals.bool_ite(here, m_out, cur("r.new"))),
            *(
                vals.iff(nxt(f"r.t{b}"), vals.bool_ite(here, ty[b], cur(f"r.t{b}")))
                for b in range(nb)
            ),
        ]
        return out, broke


class _ChildMarks:
    """The language's stack, untyped (``h{j}``: its height is at least j), with, per slot, the
    input and output marks its push came with (``k{j}.0``, ``k{j}.1``) and whether a pair closed
    directly inside it so far had an unmarked input (``u{j}``). Types are left to
    :class:`_LastUnmarked` (a pop's partner is the last unmarked position exactly where nothing
    unmarked lies between). A pop knows its pair's input mark at both ends, whether every pair
    directly inside is marked, and its output mark at both ends: :meth:`read` gives the
    constraints (a push on a full stack or a pop on an empty one ends the run: the word is not
    balanced within the depth) and the Bools "the input breaks the assumption" (the pair's two
    ends marked differently, or a marked pair with an unmarked one directly inside) and "the
    output breaks the guarantee" (an end's output mark other than: marked before, or every pair
    directly inside marked)."""

    def __init__(
        self, z3: Any, vals: Values, cur: StateVars, nxt: StateVars, language: Language
    ) -> None:
        stack = language.stack
        assert stack is not None
        self.z3, self.vals, self.cur, self.nxt, self.stack = z3, vals, cur, nxt, stack
        D = stack.depth
        self.names = [n for j in range(1, D + 1) for n in (f"h{j}", f"k{j}.0", f"k{j}.1", f"u{j}")]

    def init(self) -> list[Any]:
        return [self.z3.Not(self.cur(n)) for n in self.names]

    def balanced(self) -> Any:
        return self.vals.not_(self.cur("h1"))

    def read(self, sym: Sequence[Any], m_in: Any, m_out: Any) -> tuple[list[Any], Any, Any]:
        z3, vals, cur, nxt, st = self.z3, self.vals, self.cur, self.nxt, self.stack
        D, ctx = st.depth, cur.ctx
        false, true = z3.BoolVal(False, ctx), z3.BoolVal(True, ctx)
        push = vals.or_([sym[a] for a in range(len(sym)) if st.push[a] is not None])
        pop = vals.or_([sym[a] for a in range(len(sym)) if st.pop[a] is not None])
        h = [true, *(cur(f"h{j}") for j in range(1, D + 1)), false]
        is_top = [false, *(vals.and_([h[j], vals.not_(h[j + 1])]) for j in range(1, D + 1))]
        fits = vals.not_(vals.or_([vals.and_([push, h[D]]), vals.and_([pop, vals.not_(h[1])])]))

        def at_top(field: str) -> Any:
            return vals.or_(
                [vals.and_([is_top[j], cur(field.format(j=j))]) for j in range(1, D + 1)]
            )

        opened_in, opened_out, inner_unmarked = at_top("k{j}.0"), at_top("k{j}.1"), at_top("u{j}")
        expected = vals.or_([opened_in, vals.not_(inner_unmarked)])
        assume = vals.and_(
            [
                pop,
                vals.or_(
                    [vals.not_(vals.iff(m_in, opened_in)), vals.and_([opened_in, inner_unmarked])]
                ),
            ]
        )
        guarantee = vals.and_(
            [
                pop,
                vals.or_(
                    [
                        vals.not_(vals.iff(m_out, expected)),
                        vals.not_(vals.iff(opened_out, expected)),
                    ]
                ),
            ]
        )
        out = [fits]
        for j in range(1, D + 1):
            out.append(vals.iff(nxt(f"h{j}"), vals.bool_ite(push, h[j - 1], h[j + 1])))
            here = vals.and_([h[j - 1], vals.not_(h[j])])  # the slot a push writes
            kept = h[j + 1]  # slot j survives a pop
            for i, mark in enumerate((m_in, m_out)):
                k = cur(f"k{j}.{i}")
                out.append(
                    vals.iff(
                        nxt(f"k{j}.{i}"),
                        vals.bool_ite(push, vals.bool_ite(here, mark, k), vals.and_([k, kept])),
                    )
                )
            u = cur(f"u{j}")
            # a pop makes slot j the top if j + 1 was: an unmarked pair closed there joins it
            popped = vals.and_(
                [
                    kept,
                    vals.or_([u, vals.and_([is_top[j + 1] if j < D else false, vals.not_(m_in)])]),
                ]
            )
            out.append(
                vals.iff(nxt(f"u{j}"), vals.bool_ite(push, vals.and_([vals.not_(here), u]), popped))
            )
        return out, assume, guarantee


_SLOT = re.compile(r"^([a-z]*?)(h|k|u)(\d+)(?:\.(\d+))?$")


def _order(name: str) -> tuple[Any, ...]:
    """The variable order of the decision diagrams: phases and flags, the scans, then each stack
    slot by slot (height bit, marks, unmarked pairs inside), so that a slot's bits sit together."""
    m = _SLOT.match(name)
    if name.startswith(("pre", "word", "suf", "done")) and not m:
        return (0, name)
    if name.startswith("scan"):
        return (
            2,
            tuple((int(x), "") if x.isdigit() else (-1, x) for x in re.split(r"(\d+)", name)),
        )
    if m:
        prefix, kind, j, rest = m.groups()
        return (3, prefix, int(j), "hku".index(kind), int(rest or 0))
    return (1, name)


def _moves(
    emb: TokenEmbedding, min_len: int
) -> tuple[list[str], list[tuple[str, str | None, int | None, str]]]:
    """The phases of a run (one-hot) and its moves (from, token or None for a word symbol,
    suffix index, to): the prefix tokens, at least ``min_len`` word symbols, the suffix tokens."""
    P, S = len(emb.prefix), len(emb.suffix)
    phases = (
        [f"pre{i}" for i in range(P)]
        + [f"word{c}" for c in range(min_len + 1)]
        + [f"suf{s}" for s in range(1, S)]
        + ["done"]
    )
    moves: list[tuple[str, str | None, int | None, str]] = []
    for i, tok in enumerate(emb.prefix):
        moves.append((f"pre{i}", tok, None, f"pre{i + 1}" if i + 1 < P else "word0"))
    for c in range(min_len + 1):
        moves.append((f"word{c}", None, None, f"word{min(c + 1, min_len)}"))
    for s, tok in enumerate(emb.suffix):
        moves.append(
            (
                f"word{min_len}" if s == 0 else f"suf{s}",
                tok,
                s,
                f"suf{s + 1}" if s + 1 < S else "done",
            )
        )
    return phases, moves


def _cuts(net: Network, plan: LayerInduction) -> list[int]:
    """The sublayer counts at the cuts: 0 (the embedding), then after each ``plan.after``."""
    cuts = [0, *(label_index(net, label) for label in plan.after)]
    if any(b <= a for a, b in itertools.pairwise(cuts)):
        raise Unsupported(f"the cuts after {', '.join(plan.after)} are not in the network's order")
    return cuts


def check_base(net: Network, plan: LayerInduction) -> None:
    """The induction's base: the embedding marks no word symbol and every prefix and suffix
    token, with no error anywhere (so it satisfies both invariants at cut 0); Unsupported where not."""
    emb = net.embedding
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported(
            "compositional proofs need a token embedding (a flat embedding has no positions)"
        )
    table = {tok: dict(row) for tok, row in emb.table}
    for d in (plan.mark, plan.error):
        if d not in net.dims:
            raise Unsupported(f"dim {d!r} of the induction is not a dim of network {net.name!r}")
        if any(d == pd for pd, _f, _c in emb.positional):
            raise Unsupported(f"dim {d!r} of the induction holds a positional feature")
    for tok in emb.alphabet:
        if (
            table[tok].get(plan.mark, Fraction(0)) != 0
            or table[tok].get(plan.error, Fraction(0)) != 0
        ):
            raise Unsupported(
                f"the embedding of {tok!r} has {plan.mark}={table[tok].get(plan.mark, 0)}, {plan.error}={table[tok].get(plan.error, 0)}; the base case needs both 0"
            )
    for tok in (*emb.prefix, *emb.suffix):
        if (
            table[tok].get(plan.mark, Fraction(0)) != 1
            or table[tok].get(plan.error, Fraction(0)) != 0
        ):
            raise Unsupported(
                f"the embedding of {tok!r} has {plan.mark}={table[tok].get(plan.mark, 0)}, {plan.error}={table[tok].get(plan.error, 0)}; the base case needs 1 and 0"
            )


def induction_system(
    net: Network,
    claim: Recognizes,
    results: Sequence[LemmaResult],
    name: str,
    readout_lemmas: dict[Any, Any] | None = None,
    readout_nodes: list[LemmaNode] | None = None,
    *,
    strict: bool = False,
    watch: TieRuleFree | None = None,
    types: int | None = None,
) -> TransitionSystem:
    """The transition system of one step of the induction (``name``, one of
    :func:`step_names`, or :data:`TIES` with ``watch``): segment ℓ's ``complete`` or ``sound``
    query, the ``output`` query, or the tie rules of the sublayers after the last cut. No
    reachable bad state = that step for every length. ``strict``: Unsupported where the segment
    keeps a dim other than the mark and the error only up to a query (:func:`keeps_form`).
    ``types``: words of the language's first ``types`` types only (the reduction of
    :mod:`.symmetry`, whose premise the caller has checked)."""
    import z3

    if types is not None:  # the network on those words is the network with those rows only
        net, claim = restricted(net, claim, types)
    plan = claim.induction
    if plan is None:
        raise Unsupported(f"claim {claim.id} declares no induction over layers")
    language = claim.language
    stack = language.stack
    if stack is None:
        raise Unsupported(
            f"an induction over layers needs a language with a StackAutomaton ({language.name} has none)"
        )
    L = len(plan.after)
    if stack.depth != L:
        raise Unsupported(
            f"the induction has {L} layers but {language.name}'s stack has depth {stack.depth}: the last cut must be at the depth"
        )
    emb = net.embedding
    r = net.readout
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported(
            "compositional proofs need a token embedding (a flat embedding has no positions)"
        )
    tail = name
    cuts = _cuts(net, plan)
    if tail in ("output", TIES):
        kind, ell = ("output" if tail == "output" else "ties"), L + 1
        if kind == "ties" and watch is None:
            raise ValueError(f"step {TIES!r} needs the TieRuleFree form it watches")
        start, end = cuts[-1], len(net.layers)
        if not isinstance(r, Classifier) or not -len(emb.suffix) <= r.position <= -1:
            raise Unsupported(
                "the readout is not a classifier at a suffix token (every length needs a fixed readout position)"
            )
    else:
        got = re.fullmatch(r"layer (\d+) (complete|sound)", tail)
        if got is None or not 1 <= int(got.group(1)) <= L:
            raise ValueError(
                f"{name!r} is not a step of the induction ({', '.join(step_names(L))})"
            )
        ell, kind = int(got.group(1)), got.group(2)
        start, end = cuts[ell - 1], cuts[ell]
    ctx = z3.Context()
    vals = Values(z3, ctx)
    vals.inline = True
    cur, nxt = StateVars(z3, ctx, ""), StateVars(z3, ctx, ".next")
    phases, moves = _moves(emb, claim.min_len)
    readout_lemmas = {} if readout_lemmas is None else readout_lemmas
    readout_nodes = [] if readout_nodes is None else readout_nodes
    keys: dict[str, tuple[bool, tuple[str, ...]]] | None = None
    built: dict[tuple[str | None, int | None], dict[str, Any]] = {}
    plan_r = None
    head = None
    word_step: _CutStep | None = None
    for _frm, tok, s, _to in moves:
        if (tok, s) in built:
            continue
        begin = len(vals.assertions)
        step = _CutStep(
            z3,
            ctx,
            net,
            results,
            vals,
            tok,
            cur,
            nxt,
            readout_lemmas,
            readout_nodes,
            start=start,
            free=(plan.mark, plan.error),
        )
        info: dict[str, Any] = {"m": step.inputs[plan.mark], "e": step.inputs[plan.error]}
        if kind in ("output", "ties"):
            if head is None:
                head = step.readout_head()
                if head is None or head[0] < start:
                    raise Unsupported(
                        "the sublayers after the last cut are not one averaging head followed by position-wise blocks"
                    )
                if watch is not None and (net.layers[head[0]].block.name, head[1].name) != (
                    watch.layer,
                    watch.head,
                ):
                    raise Unsupported(
                        f"head {watch.layer}.{watch.head} is not the readout's averaging head "
                        f"({net.layers[head[0]].block.name}.{head[1].name})"
                    )
            idx, h = head
            st = step.state(idx, 0)
            bits = step.pattern_bits(head_dims(h), st)
            if bits is None:
                raise Unsupported(f"the readout head {h.name!r} reads a dim that is not 0/1")
            info["bits"] = bits
            if s is not None and s - len(emb.suffix) == r.position:  # type: ignore[union-attr]
                plan_r = step.readout_plan(idx, h, st, r.position)  # type: ignore[union-attr]
                if plan_r is None:
                    raise Unsupported(
                        "the readout lemma does not hold or reads a dim that is not concrete at the readout position"
                    )
        else:
            cut, _ = step.state(start, 0)
            out, scale = step.state(end, 0)
            if scale is not None:
                raise Unsupported(f"the state after {plan.after[ell - 1]!r} is scaled")
            changed = []
            for d in net.dims:
                if d in (plan.mark, plan.error):
                    continue
                a, b = out.get(d, Fraction(0)), cut.get(d, Fraction(0))
                if certainly_equal(a, b):
                    continue
                ba, bb = vals.boolish(a), vals.boolish(b)
                if ba is not None and bb is not None:
                    if not ba.eq(bb):  # the same term, or checked in the query
                        if strict:
                            raise Unsupported(
                                f"segment {ell} keeps dim {d!r} as the embedding has it only on some inputs "
                                f"(after {plan.after[ell - 1]!r}): not on every word"
                            )
                        changed.append(vals.not_(vals.iff(ba, bb)))
                else:
                    raise Unsupported(
                        f"segment {ell} does not keep dim {d!r} as the embedding has it (after {plan.after[ell - 1]!r})"
                    )
            m_out, e_out = (
                vals.boolish(out.get(plan.mark, Fraction(0))),
                vals.boolish(out.get(plan.error, Fraction(0))),
            )
            if m_out is None or e_out is None:
                raise Unsupported(
                    f"dim {plan.mark!r} or {plan.error!r} after {plan.after[ell - 1]!r} is not 0/1"
                )
            info.update(m_out=m_out, e_out=e_out, changed=vals.or_(changed))
        if step.ranked_keys:
            raise Unsupported(
                f"the segment has RankedSelection scans ({', '.join(step.ranked_keys)}), which the induction over layers does not read"
            )
        if keys is None:
            keys = step.scan_keys
        elif keys != step.scan_keys:
            raise Unsupported("the tokens are not read by the same scans")
        if tok is None:
            word_step = step
        info["formula"] = vals.and_(vals.assertions[begin:])
        del vals.assertions[begin:]
        built[(tok, s)] = info
    assert keys is not None and word_step is not None
    sym = [word_step.is_symbol(0, a) for a in range(len(word_step.alphabet))]
    flags: list[str]
    lang: Any = None
    pairs: list[_MarkedPairs] = []
    last: _LastUnmarked | None = None  # kinds complete and sound
    if kind == "complete":
        lang = _ChildMarks(z3, vals, cur, nxt, language)
        last = _LastUnmarked(z3, vals, cur, nxt, language)
        flags = ["viol"]
    elif kind == "sound":
        pairs = [
            _MarkedPairs(z3, vals, cur, nxt, language, ell - 1, "a"),
            _MarkedPairs(z3, vals, cur, nxt, language, ell, "g"),
        ]
        last = _LastUnmarked(z3, vals, cur, nxt, language)
        flags = ["avoid", "viol", "err_in"]
    else:
        assert plan_r is not None and head is not None
        flags = ["unmarked", "erred"]
        patterns = plan_r[1]
        flags += [f"seen{pi}" for pi in range(len(patterns))]
        if kind == "ties":
            classes = plan_r[2]
            flags += [
                f"{end_}{c}.{p}"
                for end_ in ("first", "last")
                for c in sorted(classes)
                for p in classes[c]
            ]
    state_names = [
        *phases,
        *flags,
        *(lang.names if lang is not None else ()),
        *(n for p in pairs for n in p.names),
        *(last.names if last is not None else ()),
    ]
    for key, (_later, outs) in keys.items():
        state_names += [
            f"scan{key}.{f}"
            for f in ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs))
        ]
    for n in state_names:
        cur(n), nxt(n)
    order = sorted(cur.vars, key=_order)
    alts = []
    for frm, tok, s, to in moves:
        info = built[(tok, s)]
        parts = [cur(frm), nxt(to), *(z3.Not(nxt(p)) for p in phases if p != to), info["formula"]]
        m_in, e_in = info["m"], info["e"]
        if kind in ("output", "ties"):
            dims = plan_r[0]  # type: ignore[index]
            here = {}
            for pi, pat in enumerate(plan_r[1]):  # type: ignore[index]
                here[pi] = vals.and_(
                    [info["bits"][d] if pat[d] else vals.not_(info["bits"][d]) for d in dims]
                )
                parts.append(vals.iff(nxt(f"seen{pi}"), vals.or_([cur(f"seen{pi}"), here[pi]])))
            if kind == "ties":
                parts += tie_ends(vals, cur, nxt, plan_r[2], here)  # type: ignore[index]
            parts.append(vals.iff(nxt("unmarked"), vals.or_([cur("unmarked"), vals.not_(m_in)])))
            parts.append(vals.iff(nxt("erred"), vals.or_([cur("erred"), e_in])))
            alts.append(vals.and_(parts))
            continue
        m_out, e_out = info["m_out"], info["e_out"]
        assert last is not None  # kinds complete and sound
        if kind == "complete":
            if tok is None:
                cons, broke_in, broke_out = lang.read(sym, m_in, m_out)
                cons_r, _broke = last.read(sym, m_in, m_out)
                parts.extend((*cons, *cons_r))
                # a word of the language: a pop whose partner is the last unmarked position closes its type
                assume = vals.or_([e_in, broke_in, last.mistyped])
                guarantee = vals.or_([e_out, info["changed"], broke_out])
            else:
                parts.extend(vals.iff(nxt(q), cur(q)) for q in (*lang.names, *last.names))
                assume = vals.or_([e_in, vals.not_(m_in)])
                guarantee = vals.or_([e_out, vals.not_(m_out), info["changed"]])
            parts.append(vals.not_(assume))  # a run whose input breaks the assumption ends here
        else:
            if tok is None:
                cons_a, broke_a = pairs[0].read(sym, m_in)
                cons_g, broke_g = pairs[1].read(sym, m_out)
                cons_r, broke_r = last.read(sym, m_in, m_out)
                parts.extend((*cons_a, *cons_g, *cons_r))
            else:
                parts.extend(
                    vals.iff(nxt(n), cur(n))
                    for n in (*pairs[0].names, *pairs[1].names, *last.names)
                )
                broke_a, broke_g, broke_r = (
                    vals.not_(m_in),
                    vals.not_(m_out),
                    z3.BoolVal(False, ctx),
                )
            assume = broke_a
            # marks only grow; the output's pairs nest; a newly marked pair has one type and nothing unmarked inside
            guarantee = vals.or_(
                [vals.and_([m_in, vals.not_(m_out)]), broke_g, broke_r, info["changed"]]
            )
            parts.append(vals.iff(nxt("err_in"), vals.or_([cur("err_in"), e_in])))
            parts.append(
                vals.not_(e_out)
            )  # a run with an error in the output is never bad: it ends here
            parts.append(vals.iff(nxt("avoid"), vals.or_([cur("avoid"), assume])))
        parts.append(vals.iff(nxt("viol"), vals.or_([cur("viol"), guarantee])))
        alts.append(vals.and_(parts))
    trans = vals.or_(alts)
    init = [cur(phases[0]), *(z3.Not(cur(p)) for p in phases[1:]), *(z3.Not(cur(f)) for f in flags)]
    if lang is not None:
        init += lang.init()
    if last is not None:
        init += last.init()
    for p in pairs:
        init += p.init()

    done = [cur("done")]
    for key, (later, outs) in keys.items():
        for f in ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs)):
            (init if later else done).append(z3.Not(cur(f"scan{key}.{f}")))
    if kind == "complete":
        bad = z3.And(*done, lang.balanced(), cur("viol"))
    elif kind == "sound":
        assumed = vals.not_(vals.or_([cur("avoid"), pairs[0].open()]))
        broken = vals.or_([cur("viol"), pairs[1].open()])
        bad = z3.And(*done, z3.Or(cur("err_in"), z3.And(assumed, broken)))
    else:
        assert plan_r is not None
        accept = word_step.presence_formula(
            plan_r, [cur(f"seen{pi}") for pi in range(len(plan_r[1]))]
        )
        if kind == "ties":
            bad = z3.And(
                *done,
                z3.Or(
                    *(accept != tie_single(vals, cur, plan_r, end_) for end_ in ("first", "last"))
                ),
            )
        else:
            clean = z3.And(z3.Not(cur("unmarked")), z3.Not(cur("erred")))
            bad = z3.And(*done, accept != clean)
    state = [cur.vars[n] for n in order]
    primed = [nxt.vars[n] for n in order]
    return TransitionSystem(z3, ctx, state, primed, z3.And(init), trans, bad)


def induction_certificates(
    net: Network,
    claim: Recognizes,
    results: Sequence[LemmaResult],
    name: str,
    invariant: Invariant,
    readout_lemmas: dict[Any, Any] | None = None,
    readout_nodes: list[LemmaNode] | None = None,
    watch: TieRuleFree | None = None,
    types: int | None = None,
) -> list[tuple[str, str, Any]]:
    """The three certificate queries of step ``name`` with ``invariant``: (query name, SMT-LIB2
    text, solver), the same text wherever they are built (``types``: see :func:`induction_system`)."""
    uses = [r.uses for r in results]
    system = induction_system(
        net, claim, results, name, readout_lemmas, readout_nodes, watch=watch, types=types
    )
    for r, u in zip(results, uses, strict=True):
        r.uses = u
    inv = (
        from_diagram(system, invariant)
        if isinstance(invariant, Diagram)
        else from_clauses(system, invariant)
    )
    return [
        (f"{claim.id} every n: {name}: {q}", to_smt2(solver, logic="QF_UF"), solver)
        for q, solver in certificate(system, inv)
    ]
