"""The network with its proved lemmas in place, read as a transition system over positions
(:func:`every_length_system`): one step per token (a prefix token, a word symbol, a suffix
token); the state holds the phase, the state of every NearestSelection scan, which value
patterns of the readout's averaging head have occurred, and the automaton's state. Its runs are
the words of every length, so no reachable bad state is the theorem for every length.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic`, :mod:`.lemmas` and
:mod:`.abstraction` (a step is the abstraction on one position); z3 inside functions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import Affine, AttentionLayer, Classifier, Head, Network, TokenEmbedding
from netproof.symbolic.positional import feature
from netproof.verifier.claims import (
    FollowsAutomaton,
    Language,
    NearestSelection,
    PairHeights,
    RankedSelection,
    SelectsNearest,
    TieRuleFree,
    UniqueSelections,
)
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode

from .abstraction import Abstraction
from .arithmetic import Pos, Values, affine_map, certainly_equal, sympy_to_z3
from .lemmas import LemmaResult, nearer_is_later
from .ranked import RankedScan
from .ranked import scan_bounds as ranked_bounds
from .ranked import step_scan as ranked_step


class StateVars:
    """The Bool state variables of the transition system over positions, made on first use:
    ``cur`` (before a position) and ``nxt`` (after it, the same name and ``.next``)."""

    def __init__(self, z3: Any, ctx: Any, mark: str) -> None:
        self.z3, self.ctx, self.mark = z3, ctx, mark
        self.vars: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        got = self.vars.get(name)
        if got is None:
            got = self.vars[name] = self.z3.Bool(name + self.mark, self.ctx)
        return got


class Step(Abstraction):
    """One position of the network as one step of a transition system over the positions.

    The position's token is a fixed prefix or suffix token, or a symbolic word symbol
    (``token=None``, Bools ``w0.*``). A NearestSelection scan toward the end of the word (causal
    masks) reads its state over the positions before from ``cur`` and writes the state with this
    position added into ``nxt``. A scan toward the start (anticausal masks) reads the state over
    the positions after from ``nxt``, guessed, and checks that ``cur``, the state guessed one step
    earlier, is that state with this position added: a word has exactly one run, the scans'
    states of the range query. The state of a scan: ``found`` (a preferred position was seen),
    ``best.o`` (the nearest preferred position's value dims), ``near.o`` (the nearest position's)
    and ``has`` (some position was seen). Positional values are :class:`Pos` placeholders."""

    def __init__(
        self,
        z3: Any,
        ctx: Any,
        net: Network,
        lemmas: Sequence[LemmaResult],
        vals: Values,
        token: str | None,
        cur: StateVars,
        nxt: StateVars,
        readout_lemmas: dict[Any, Any],
        readout_nodes: list[LemmaNode],
    ) -> None:
        super().__init__(z3, ctx, net, 1, lemmas, readout_lemmas, readout_nodes)
        self.vals = vals
        if token is None and len(self.alphabet) < 2**self.nbits:
            vals.assertions.append(z3.Or([self.is_symbol(0, a) for a in range(len(self.alphabet))]))
        self.tokens = [token]
        self.N = 1
        self.first_slot = 0
        self.ranged = True
        self.cur, self.nxt = cur, nxt
        self.scan_keys: dict[
            str, tuple[bool, tuple[str, ...]]
        ] = {}  # key -> (toward the end?, value dims)
        self.key_base = 0  # scan keys count sublayers from here (a segment's own start)
        self.ranked_keys: dict[str, RankedScan] = {}  # the RankedSelection scans (:mod:`.ranked`)

    def feature_at(self, feat: str, pos: int) -> Fraction | Pos:
        if feat == "1":
            return feature(feat)(pos + 1, 1)
        return Pos(((feat, Fraction(1)),), Fraction(0), pos)

    def candidates(self, h: Head, t: int) -> list[int]:
        raise Unsupported(
            f"head {h.name!r} without a NearestSelection lemma attends over the whole word"
        )

    def head(self, idx: int, layer: AttentionLayer, h: Head, t: int) -> tuple[dict[str, Any], Any]:
        r = self.head_lemmas.get((layer.name, h.name))
        if h.relative or r is None:
            raise Unsupported(
                f"head {layer.name}.{h.name} has no proved NearestSelection lemma (a scan is what carries it from position to position)"
            )
        if isinstance(r.lemma, RankedSelection):
            return ranked_step(self, idx, h, r), None
        return self.step_scan(idx, h, r), None

    def step_scan(self, idx: int, h: Head, r: LemmaResult) -> dict[str, Any]:
        lemma = r.lemma
        assert isinstance(lemma, NearestSelection)
        vals = self.vals
        x, scale = self.state(idx, 0)
        if scale is not None:
            raise Unsupported(f"head {h.name!r} reads a scaled position")
        env = {}
        for d in lemma.boolean:
            b = vals.boolish(x.get(d, Fraction(0)))
            if b is None:
                raise Unsupported(f"lemma {lemma.id!r}: dim {d!r} is not 0/1")
            env[d] = b
        for d, feat in lemma.positional.items():
            if not certainly_equal(x.get(d), self.feature_at(feat, 0)):
                raise Unsupported(f"lemma {lemma.id!r}: dim {d!r} does not hold {feat}")
        prefer = vals.boolish(sympy_to_z3(vals, lemma.prefer, env))
        if prefer is None:
            raise Unsupported(f"lemma {lemma.id!r}: prefer={lemma.prefer} is not a Boolean formula")
        value = {}
        for o, v in affine_map(vals, h.value, x).items():
            b = vals.boolish(v)
            if b is None:
                raise Unsupported(
                    f"head {h.name!r}: value dim {o!r} is not 0/1 (a scan's state is Boolean)"
                )
            value[o] = b
        later = nearer_is_later(h.mask)
        strict = h.mask.startswith("strict")
        if strict and h.empty != "zero":
            raise Unsupported(
                f"head {h.name!r} with empty='error' (the first position's masked set is empty)"
            )
        key = f"{idx - self.key_base}.{h.name}"
        outs = tuple(h.value.outputs)
        self.scan_keys[key] = (later, outs)
        before = (
            self.cur if later else self.nxt
        )  # the positions on the side this position is added to
        after = self.nxt if later else self.cur

        def part(sv: StateVars, field: str) -> Any:
            return sv(f"scan{key}.{field}")

        found = vals.or_([prefer, part(before, "found")])
        best = {o: vals.bool_ite(prefer, value[o], part(before, f"best.{o}")) for o in outs}
        if strict:
            out = {
                o: vals.and_(
                    [
                        part(before, "has"),
                        vals.bool_ite(
                            part(before, "found"),
                            part(before, f"best.{o}"),
                            part(before, f"near.{o}"),
                        ),
                    ]
                )
                for o in outs
            }
        else:
            out = {o: vals.bool_ite(found, best[o], value[o]) for o in outs}
        vals.assertions.append(vals.iff(part(after, "found"), found))
        vals.assertions.append(part(after, "has"))
        for o in outs:
            vals.assertions.append(vals.iff(part(after, f"best.{o}"), best[o]))
            vals.assertions.append(vals.iff(part(after, f"near.{o}"), value[o]))
        r.uses += 1
        return {o: vals.named(v, f"{h.name}:{o}") for o, v in out.items()}


def head_dims(h: Head) -> list[str]:
    return sorted(
        {d for row in h.key.weights for d, w in zip(h.key.inputs, row, strict=True) if w != 0}
        | {d for row in h.value.weights for d, w in zip(h.value.inputs, row, strict=True) if w != 0}
    )


@dataclass
class TransitionSystem:
    """The transition system over positions whose runs are the words of every length."""

    z3: Any
    ctx: Any
    state: list[Any]  # the state variables (before a position)
    primed: list[Any]  # the same after it
    init: Any
    trans: Any
    bad: Any


def _natural(name: str) -> tuple[tuple[int, str], ...]:
    """A sort key that orders the numbers in a name by value (``scan2`` before ``scan10``)."""
    import re

    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"(\d+)", name))


ONE_HOT_STATES = 16
"""The most DFA states the transition system holds one-hot where the language also has a
:class:`~netproof.verifier.claims.StackAutomaton` (Dyck(2, 2) and Dyck(2, 3), whose committed
proofs hold their DFAs so, have 8 and 16)."""


class _LanguageState:
    """The language's automaton as state variables of the transition system: one-hot states of
    its :class:`~netproof.verifier.claims.Automaton` (``q0``, ``q1``, ...), or, for a language
    given only as a :class:`~netproof.verifier.claims.StackAutomaton`, its stack: the height in
    unary (``h1`` .. ``hD``: height >= j), ``D`` slots of binary type codes (``s1.0``, ...:
    zero above the height) and ``dead`` (a rejected prefix: every other bit then zero). The
    stack's size grows with D and log(types), the one-hot states with types^D: the stack is
    used where the language has one and its DFA has more than :data:`ONE_HOT_STATES` states
    (Dyck(3, 5), 365 states: the reachable states in 9.6 s as a stack, none within 58 s one-hot),
    or where ``thresholds`` asks for pair heights.

    With ``thresholds`` (T₁, T₂, ...), each slot also holds the largest height of the pairs
    closed directly inside it so far, in unary up to max T (``c{j}.{c}``: >= c), and, for each
    T, the mark its push came with (``k{j}.{i}``); a pop knows its pair's height (1 + that
    largest height) and checks both marks against "height <= T" (:meth:`read`'s second value)."""

    def __init__(
        self,
        z3: Any,
        vals: Values,
        cur: StateVars,
        nxt: StateVars,
        language: Language | None,
        thresholds: Sequence[int] = (),
    ) -> None:
        self.z3, self.vals, self.cur, self.nxt = z3, vals, cur, nxt
        self.thresholds = tuple(thresholds)
        self.dfa = None if language is None else language.automaton
        self.stack = None if language is None else language.stack
        if self.thresholds and self.stack is None:
            raise Unsupported(
                f"pair heights need a language with a StackAutomaton ({'none given' if language is None else language.name + ' has none'})"
            )
        if self.stack is not None and (
            self.thresholds or self.dfa is None or self.dfa.states > ONE_HOT_STATES
        ):
            self.dfa = None
        else:
            self.stack = None
        self.names: list[str] = []
        if self.dfa is not None:
            self.names = [f"q{q}" for q in range(self.dfa.states)]
        elif self.stack is not None:
            D = self.stack.depth
            self.bits = max(1, (self.stack.types - 1).bit_length())
            self.cap = max(self.thresholds, default=0)
            self.names = ["dead", *(f"h{j}" for j in range(1, D + 1))]
            for j in range(1, D + 1):
                self.names += [f"s{j}.{b}" for b in range(self.bits)]
                self.names += [f"c{j}.{c}" for c in range(1, self.cap + 1)]
                self.names += [f"k{j}.{i}" for i in range(len(self.thresholds))]

    def init(self) -> list[Any]:
        z3, cur = self.z3, self.cur
        if self.dfa is not None:
            return [
                cur(q) if i == self.dfa.start else z3.Not(cur(q)) for i, q in enumerate(self.names)
            ]
        return [z3.Not(cur(name)) for name in self.names]

    def member(self) -> Any:
        if self.dfa is not None:
            return self.vals.or_([self.cur(self.names[q]) for q in sorted(self.dfa.accepting)])
        if self.stack is None:
            return self.z3.BoolVal(True, self.cur.ctx)
        return self.vals.and_([self.vals.not_(self.cur("dead")), self.vals.not_(self.cur("h1"))])

    def read(self, sym: Sequence[Any], marks: Sequence[Any] = ()) -> tuple[list[Any], Any]:
        """The constraints of one word symbol (``sym[a]``: the symbol is ``alphabet[a]``), and
        the Bool "a pair closed here has a mark other than its height says" (``marks[i]``: this
        position's mark for threshold i)."""
        z3, vals, cur, nxt = self.z3, self.vals, self.cur, self.nxt
        false = z3.BoolVal(False, cur.ctx)
        if self.dfa is not None:
            dfa, qs = self.dfa, self.names
            out = []
            for q2 in range(dfa.states):
                came = [
                    z3.And(cur(qs[q]), sym[a])
                    for q in range(dfa.states)
                    for a in range(len(sym))
                    if dfa.delta[q][a] == q2
                ]
                out.append(vals.iff(nxt(qs[q2]), vals.or_(came)))
            return out, false
        st = self.stack
        if st is None:
            return [], false
        D, nb, cap, T = st.depth, self.bits, self.cap, self.thresholds
        push = vals.or_([sym[a] for a in range(len(sym)) if st.push[a] is not None])
        pop = vals.or_([sym[a] for a in range(len(sym)) if st.pop[a] is not None])
        code = [st.push[a] if st.push[a] is not None else st.pop[a] for a in range(len(sym))]
        ty = [vals.or_([sym[a] for a in range(len(sym)) if (code[a] >> b) & 1]) for b in range(nb)]  # type: ignore[operator]
        ctx = cur.ctx
        h = [
            z3.BoolVal(True, ctx),
            *(cur(f"h{j}") for j in range(1, D + 1)),
            z3.BoolVal(False, ctx),
        ]  # h[0], h[D + 1]
        is_top = [
            false,
            *(vals.and_([h[j], vals.not_(h[j + 1])]) for j in range(1, D + 1)),
        ]  # slot j is the top
        slot = {(j, b): cur(f"s{j}.{b}") for j in range(1, D + 1) for b in range(nb)}
        top = [
            vals.or_([vals.and_([is_top[j], slot[(j, b)]]) for j in range(1, D + 1)])
            for b in range(nb)
        ]
        mismatch = vals.or_([vals.not_(vals.iff(top[b], ty[b])) for b in range(nb)])
        dead = vals.or_(
            [
                cur("dead"),
                vals.and_([push, h[D]]),
                vals.and_([pop, vals.or_([vals.not_(h[1]), mismatch])]),
            ]
        )
        alive = vals.not_(dead)
        out = [vals.iff(nxt("dead"), dead)]
        # the height of the pair a pop closes: >= c iff the largest height inside is >= c - 1
        inner = {(j, c): cur(f"c{j}.{c}") for j in range(1, D + 1) for c in range(1, cap + 1)}
        height_ge = {
            c: vals.or_([vals.and_([is_top[j], inner[(j, c - 1)]]) for j in range(1, D + 1)])
            if c > 1
            else z3.BoolVal(True, ctx)
            for c in range(1, cap + 2)
        }
        wrong = []
        for i, t in enumerate(T):
            low = vals.not_(height_ge[t + 1])  # the closed pair has height <= t
            opened = vals.or_([vals.and_([is_top[j], cur(f"k{j}.{i}")]) for j in range(1, D + 1)])
            wrong.append(
                vals.or_([vals.not_(vals.iff(opened, low)), vals.not_(vals.iff(marks[i], low))])
            )
        self.wrong = wrong  # per threshold, for a caller that tells them apart
        bad_pair = vals.and_([alive, pop, vals.or_(wrong)]) if T else false
        for j in range(1, D + 1):
            out.append(
                vals.iff(nxt(f"h{j}"), vals.and_([alive, vals.bool_ite(push, h[j - 1], h[j + 1])]))
            )
            here = vals.and_([h[j - 1], vals.not_(h[j])])  # the slot a push writes
            kept = h[j + 1]  # slot j survives a pop
            for b in range(nb):
                pushed = vals.bool_ite(here, ty[b], slot[(j, b)])
                popped = vals.and_([slot[(j, b)], kept])
                out.append(
                    vals.iff(
                        nxt(f"s{j}.{b}"), vals.and_([alive, vals.bool_ite(push, pushed, popped)])
                    )
                )
            for c in range(1, cap + 1):
                pushed = vals.and_(
                    [vals.not_(here), inner[(j, c)]]
                )  # a new slot has nothing inside yet
                # a pop makes slot j the top if j + 1 was: the closed pair's height joins its largest
                popped = vals.and_(
                    [
                        kept,
                        vals.or_(
                            [
                                inner[(j, c)],
                                vals.and_([is_top[j + 1] if j < D else false, height_ge[c]]),
                            ]
                        ),
                    ]
                )
                out.append(
                    vals.iff(
                        nxt(f"c{j}.{c}"), vals.and_([alive, vals.bool_ite(push, pushed, popped)])
                    )
                )
            for i in range(len(T)):
                pushed = vals.bool_ite(here, marks[i], cur(f"k{j}.{i}"))
                popped = vals.and_([cur(f"k{j}.{i}"), kept])
                out.append(
                    vals.iff(
                        nxt(f"k{j}.{i}"), vals.and_([alive, vals.bool_ite(push, pushed, popped)])
                    )
                )
        return out, bad_pair


def label_index(net: Network, label: str) -> int:
    """The number of sublayers up to and including the one whose block is named ``label``."""
    for i, sub in enumerate(net.layers):
        if sub.block.name == label:
            return i + 1
    raise Unsupported(
        f"no sublayer named {label!r}; the network's: {', '.join(sub.block.name for sub in net.layers)}"
    )


def _pair_terms(
    step: Step, vals: Values, watch: PairHeights, special: bool
) -> tuple[list[Any], Any]:
    """This position's marks (the dim after each watched sublayer, a Bool) and the Bool "the
    position keeps the parts of ``watch`` that need no pair": its zero dims are 0 and, at a
    prefix or suffix token, its marks are ``watch.special``."""
    marks, ok = [], []
    for label, _t in watch.after:
        x, scale = step.state(label_index(step.net, label), 0)
        if scale is not None:
            raise Unsupported(f"the state after {label!r} is scaled")
        mark = vals.boolish(x.get(watch.dim, Fraction(0)))
        if mark is None:
            raise Unsupported(f"dim {watch.dim!r} after {label!r} is not 0/1")
        marks.append(mark)
        if special:
            ok.append(mark if watch.special else vals.not_(mark))
        for d in watch.zero:
            v = x.get(d, Fraction(0))
            if isinstance(v, Fraction):
                ok.append(vals.z3.BoolVal(v == 0, vals.ctx))
                continue
            b = vals.boolish(v)
            if b is None:
                raise Unsupported(f"dim {d!r} after {label!r} is not 0/1")
            ok.append(vals.not_(b))
    return marks, vals.and_(ok)


def _written(node: Any) -> set[str]:
    """Every dim an affine map inside ``node`` (a block, a head) writes: more than the block
    writes into the residual stream (its hidden dims too), never less."""
    if isinstance(node, Affine):
        return set(node.outputs)
    out: set[str] = set()
    if isinstance(node, tuple):
        for item in node:
            out |= _written(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            out |= _written(getattr(node, f.name))
    return out


def _followed_dims(step: Step, vals: Values, watch: FollowsAutomaton, readout: int) -> list[Any]:
    """This word position's dims of ``watch.ones`` as Bools, from the state before the readout's
    averaging head (sublayer ``readout``), where no sublayer from it on writes them (so they are
    the final state's); Unsupported where one is written there or is not 0/1."""
    watched = {d for d, _ones in watch.ones}
    for sub in step.net.layers[readout:]:
        late = sorted(watched & _written(sub.block))
        if late:
            raise Unsupported(f"sublayer {sub.name!r}, at or after the readout, writes {late}")
    x, scale = step.state(readout, 0)
    if scale is not None:
        raise Unsupported("the state before the readout is scaled")
    out = []
    for d, _ones in watch.ones:
        b = vals.boolish(x.get(d, Fraction(0)))
        if b is None:
            raise Unsupported(f"dim {d!r} after the last sublayer is not 0/1")
        out.append(b)
    return out


def tie_ends(
    vals: Values, cur: StateVars, nxt: StateVars, classes: Any, here: dict[int, Any]
) -> list[Any]:
    """The value pattern of the first and of the last position of each score class of the
    readout head (``first{c}.{p}``, ``last{c}.{p}``), updated by one position whose patterns
    are ``here``."""
    parts = []
    for c in sorted(classes):
        seen = vals.or_([cur(f"first{c}.{p}") for p in classes[c]])
        now = vals.or_([here[p] for p in classes[c]])
        for p in classes[c]:
            first = vals.or_([cur(f"first{c}.{p}"), vals.and_([vals.not_(seen), here[p]])])
            parts.append(vals.iff(nxt(f"first{c}.{p}"), first))
            parts.append(
                vals.iff(nxt(f"last{c}.{p}"), vals.bool_ite(now, here[p], cur(f"last{c}.{p}")))
            )
    return parts


def tie_single(vals: Values, cur: StateVars, plan: Any, end: str) -> Any:
    """The accept bit where the readout head takes the first (``end`` = "first") or the last
    maximizer: the sign of its one pattern in the highest score class present."""
    _dims, _patterns, classes, signs = plan
    order = sorted(classes, reverse=True)
    present = {c: vals.or_([cur(f"seen{p}") for p in classes[c]]) for c in order}
    cases = []
    for ci, c in enumerate(order):
        top = vals.and_([present[c], *(vals.not_(present[c2]) for c2 in order[:ci])])
        positive = {next(iter(subset)) for subset, pos in signs[c] if len(subset) == 1 and pos}
        cases.append(
            vals.and_([top, vals.or_([cur(f"{end}{c}.{p}") for p in classes[c] if p in positive])])
        )
    return vals.or_(cases)


def every_length_system(
    net: Network,
    language: Language | None,
    results: Sequence[LemmaResult],
    readout_lemmas: dict[Any, Any],
    readout_nodes: list[LemmaNode],
    min_len: int,
    watch: PairHeights
    | TieRuleFree
    | SelectsNearest
    | UniqueSelections
    | FollowsAutomaton
    | None = None,
) -> TransitionSystem:
    """The network with the proved lemmas in place as a transition system reading one token per
    step: the prefix tokens, ``min_len`` or more word symbols, the suffix tokens. A state holds
    the phase (one-hot), every scan's state (:class:`Step`), which value patterns of the
    readout's averaging head have occurred (its presence readout), and the automaton's state
    (:class:`_LanguageState`). ``bad``: all tokens read, every scan toward the start ends on no
    position, and the accept bit differs from membership. No reachable bad state = the theorem
    for every length.

    ``watch`` asks for a trace property instead (the language is then ``watch``'s, or none):
    :class:`PairHeights` adds pair heights to the stack and ``viol`` (some position broke the
    property), bad where a word of the language ends with ``viol``; :class:`TieRuleFree` adds,
    per score class of the readout head, the value pattern of its first and of its last
    position (``first{c}.{p}``, ``last{c}.{p}``), bad where the accept bit of the leftmost or
    the rightmost maximizer differs from the average's; :class:`SelectsNearest` builds the
    system only (no state is bad): that every step can be built is what it asks."""
    import z3

    emb = net.embedding
    r = net.readout
    if isinstance(watch, PairHeights):
        language = watch.language
    if isinstance(watch, FollowsAutomaton):  # the Moore machine runs beside the network
        language = Language(
            name="follows",
            alphabet=net.alphabet,
            contains=lambda w: True,
            automaton=watch.automaton,
        )
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported(
            "compositional proofs need a token embedding (a flat embedding has no positions)"
        )
    if watch is None and (
        language is None or (language.automaton is None and language.stack is None)
    ):
        raise Unsupported(
            f"the language {getattr(language, 'name', None)} has no Automaton (nor a StackAutomaton)"
        )
    if not isinstance(r, Classifier) or not -len(emb.suffix) <= r.position <= -1:
        raise Unsupported(
            "the readout is not a classifier at a suffix token (every length needs a fixed readout position)"
        )
    ctx = z3.Context()
    vals = Values(z3, ctx)
    vals.inline = True
    cur, nxt = StateVars(z3, ctx, ""), StateVars(z3, ctx, ".next")
    P, S = len(emb.prefix), len(emb.suffix)
    phases = (
        [f"pre{i}" for i in range(P)]
        + [f"word{c}" for c in range(min_len + 1)]
        + [f"suf{s}" for s in range(1, S)]
        + ["done"]
    )
    first_word = f"word{0}"
    moves: list[tuple[str, str | None, int | None, str]] = []  # (from, token, suffix index, to)
    for i, special in enumerate(emb.prefix):
        moves.append((f"pre{i}", special, None, f"pre{i + 1}" if i + 1 < P else first_word))
    for m in range(min_len + 1):
        moves.append((f"word{m}", None, None, f"word{min(m + 1, min_len)}"))
    for k, special in enumerate(emb.suffix):
        moves.append(
            (
                f"word{min_len}" if k == 0 else f"suf{k}",
                special,
                k,
                f"suf{k + 1}" if k + 1 < S else "done",
            )
        )
    plan = None
    head = None
    keys: dict[str, tuple[bool, tuple[str, ...]]] | None = None
    ranked: dict[str, RankedScan] = {}
    steps: dict[
        tuple[str | None, int | None],
        tuple[Any, dict[str, Any] | None, tuple[list[Any], Any] | None],
    ] = {}
    symbol_steps: list[Step] = []  # the step that reads a word symbol (Bools w0.*)
    step: Step | None = None
    for _from, tok, s, _to in moves:
        if (tok, s) in steps:
            continue
        start = len(vals.assertions)
        step = Step(z3, ctx, net, results, vals, tok, cur, nxt, readout_lemmas, readout_nodes)
        if head is None:
            head = step.readout_head()
            if head is None:
                raise Unsupported(
                    "the readout is not one averaging head over Boolean dims followed by position-wise blocks"
                )
            if isinstance(watch, TieRuleFree) and (
                net.layers[head[0]].block.name,
                head[1].name,
            ) != (watch.layer, watch.head):
                raise Unsupported(
                    f"head {watch.layer}.{watch.head} is not the readout's averaging head ({net.layers[head[0]].block.name}.{head[1].name})"
                )
        idx, h = head
        st = step.state(idx, 0)
        dims = head_dims(h)
        bits = step.pattern_bits(dims, st)
        if bits is None:
            raise Unsupported(f"the readout head {h.name!r} reads a dim that is not 0/1")
        if s is not None and s - S == r.position:
            plan = step.readout_plan(idx, h, st, r.position)
            if plan is None:
                raise Unsupported(
                    "the readout lemma does not hold or reads a dim that is not concrete at the readout position"
                )
        pair = (
            _pair_terms(step, vals, watch, tok is not None)
            if isinstance(watch, PairHeights)
            else None
        )
        if isinstance(watch, FollowsAutomaton) and tok is None:
            pair = (_followed_dims(step, vals, watch, idx), vals.z3.BoolVal(True, ctx))
        if keys is None:
            keys, ranked = step.scan_keys, step.ranked_keys
        elif keys != step.scan_keys or ranked != step.ranked_keys:
            raise Unsupported("the tokens are not read by the same scans")
        if tok is None:
            symbol_steps.append(step)
        steps[(tok, s)] = (vals.and_(vals.assertions[start:]), bits, pair)
        del vals.assertions[start:]
    assert plan is not None and keys is not None and head is not None
    dims, patterns, classes, _signs = plan
    pres = [f"seen{pi}" for pi in range(len(patterns))]
    lang = _LanguageState(
        z3,
        vals,
        cur,
        nxt,
        language,
        [t for _l, t in watch.after] if isinstance(watch, PairHeights) else (),
    )
    extra: list[str] = []
    if isinstance(watch, (PairHeights, FollowsAutomaton)):
        extra = ["viol"]
    elif isinstance(watch, TieRuleFree):
        extra = [
            f"{end}{c}.{p}"
            for end in ("first", "last")
            for ci, c in enumerate(sorted(classes))
            for p in classes[c]
        ]
    # every state variable, both copies
    for name in (*phases, *pres, *lang.names, *extra):
        cur(name), nxt(name)
    for key, (_later, outs) in keys.items():
        for field in ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs)):
            cur(f"scan{key}.{field}"), nxt(f"scan{key}.{field}")
    names = sorted(cur.vars, key=_natural)
    alts = []
    for frm, tok, s, to in moves:
        formula, bits, pair = steps[(tok, s)]
        assert bits is not None
        parts = [cur(frm), nxt(to), *(z3.Not(nxt(p)) for p in phases if p != to), formula]
        here = {}
        for pi, pat in enumerate(patterns):
            here[pi] = vals.and_([bits[d] if pat[d] else vals.not_(bits[d]) for d in dims])
            parts.append(vals.iff(nxt(pres[pi]), vals.or_([cur(pres[pi]), here[pi]])))
        broke = z3.BoolVal(False, ctx)
        if tok is None:
            word_step = symbol_steps[0]
            cons, broke = lang.read(
                [word_step.is_symbol(0, a) for a in range(len(word_step.alphabet))],
                pair[0] if pair is not None else (),
            )
            parts.extend(cons)
        else:
            parts.extend(vals.iff(nxt(q), cur(q)) for q in lang.names)
        if isinstance(watch, FollowsAutomaton):
            # at a word position: some dim differs from what the machine's state after it says
            wrong = (
                []
                if pair is None
                else [
                    vals.not_(vals.iff(b, vals.or_([nxt(lang.names[q]) for q in sorted(ones)])))
                    for b, ones in zip(pair[0], (o for _d, o in watch.ones), strict=True)
                ]
            )
            parts.append(vals.iff(nxt("viol"), vals.or_([cur("viol"), *wrong])))
        elif pair is not None:
            parts.append(vals.iff(nxt("viol"), vals.or_([cur("viol"), broke, vals.not_(pair[1])])))
        if isinstance(watch, TieRuleFree):
            parts += tie_ends(vals, cur, nxt, classes, here)
        alts.append(vals.and_(parts))
    trans = vals.or_(alts)
    first = phases[0]
    init = [
        cur(first),
        *(z3.Not(cur(p)) for p in phases if p != first),
        *(z3.Not(cur(p)) for p in pres),
    ]
    init += lang.init()
    init += [z3.Not(cur(e)) for e in extra]
    end = [cur("done")]
    for key, (later, outs) in keys.items():
        fields = ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs))
        for field in fields:
            (init if later else end).append(z3.Not(cur(f"scan{key}.{field}")))
    for key, spec in ranked.items():
        first_state, last_state = ranked_bounds(z3, vals, key, spec, cur)
        init += first_state
        end += last_state
    assert step is not None  # moves always holds the word symbols' moves
    accept = step.presence_formula(plan, [cur(p) for p in pres])
    if isinstance(watch, PairHeights):
        bad = z3.And(*end, lang.member(), cur("viol"))
    elif isinstance(watch, (SelectsNearest, UniqueSelections)):
        bad = z3.BoolVal(False, ctx)
    elif isinstance(watch, FollowsAutomaton):
        bad = z3.And(*end, cur("viol"))
    elif isinstance(watch, TieRuleFree):
        bad = z3.And(
            *end,
            z3.Or(*(accept != tie_single(vals, cur, plan, e) for e in ("first", "last"))),
        )
    else:
        bad = z3.And(*end, accept != lang.member())
    state = [cur.vars[n] for n in names]
    primed = [nxt.vars[n] for n in names]
    return TransitionSystem(z3, ctx, state, primed, z3.And(init), trans, bad)
