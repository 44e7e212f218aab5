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

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import AttentionLayer, Classifier, Head, Network, TokenEmbedding
from netproof.symbolic.positional import feature
from netproof.verifier.claims import Language, NearestSelection
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode

from .abstraction import Abstraction
from .arithmetic import Pos, Values, affine_map, certainly_equal, sympy_to_z3
from .lemmas import LemmaResult, nearer_is_later


class _StateVars:
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


class _Step(Abstraction):
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
        self, z3: Any, ctx: Any, net: Network, lemmas: Sequence[LemmaResult], vals: Values, token: str | None,
        cur: _StateVars, nxt: _StateVars, readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode],
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
        self.scan_keys: dict[str, tuple[bool, tuple[str, ...]]] = {}  # key -> (toward the end?, value dims)

    def feature_at(self, feat: str, pos: int) -> Fraction | Pos:
        if feat == "1":
            return feature(feat)(pos + 1, 1)
        return Pos(((feat, Fraction(1)),), Fraction(0), pos)

    def candidates(self, h: Head, t: int) -> list[int]:
        raise Unsupported(f"head {h.name!r} without a NearestSelection lemma attends over the whole word")

    def head(self, idx: int, layer: AttentionLayer, h: Head, t: int) -> tuple[dict[str, Any], Any]:
        r = self.head_lemmas.get((layer.name, h.name))
        if h.relative or r is None:
            raise Unsupported(f"head {layer.name}.{h.name} has no proved NearestSelection lemma (a scan is what carries it from position to position)")
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
                raise Unsupported(f"head {h.name!r}: value dim {o!r} is not 0/1 (a scan's state is Boolean)")
            value[o] = b
        later = nearer_is_later(h.mask)
        strict = h.mask.startswith("strict")
        if strict and h.empty != "zero":
            raise Unsupported(f"head {h.name!r} with empty='error' (the first position's masked set is empty)")
        key = f"{idx}.{h.name}"
        outs = tuple(h.value.outputs)
        self.scan_keys[key] = (later, outs)
        before = self.cur if later else self.nxt  # the positions on the side this position is added to
        after = self.nxt if later else self.cur

        def part(sv: _StateVars, field: str) -> Any:
            return sv(f"scan{key}.{field}")

        found = vals.or_([prefer, part(before, "found")])
        best = {o: vals.bool_ite(prefer, value[o], part(before, f"best.{o}")) for o in outs}
        if strict:
            out = {o: vals.and_([part(before, "has"), vals.bool_ite(part(before, "found"), part(before, f"best.{o}"), part(before, f"near.{o}"))]) for o in outs}
        else:
            out = {o: vals.bool_ite(found, best[o], value[o]) for o in outs}
        vals.assertions.append(vals.iff(part(after, "found"), found))
        vals.assertions.append(part(after, "has"))
        for o in outs:
            vals.assertions.append(vals.iff(part(after, f"best.{o}"), best[o]))
            vals.assertions.append(vals.iff(part(after, f"near.{o}"), value[o]))
        r.uses += 1
        return {o: vals.named(v, f"{h.name}:{o}") for o, v in out.items()}


def _head_dims(h: Head) -> list[str]:
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


def every_length_system(
    net: Network, language: Language, results: Sequence[LemmaResult], readout_lemmas: dict[Any, Any], readout_nodes: list[LemmaNode], min_len: int
) -> TransitionSystem:
    """The network with the proved lemmas in place as a transition system reading one token per
    step: the prefix tokens, ``min_len`` or more word symbols, the suffix tokens. A state holds
    the phase (one-hot), every scan's state (:class:`_Step`), which value patterns of the
    readout's averaging head have occurred (its presence readout), and the automaton's state
    (one-hot). ``bad``: all tokens read, every scan toward the start ends on no position, and the
    accept bit differs from membership. No reachable bad state = the theorem for every length."""
    import z3

    emb = net.embedding
    r = net.readout
    dfa = language.automaton
    if not isinstance(emb, TokenEmbedding):
        raise Unsupported("compositional proofs need a token embedding (a flat embedding has no positions)")
    if dfa is None:
        raise Unsupported(f"the language {language.name} has no Automaton")
    if not isinstance(r, Classifier) or not -len(emb.suffix) <= r.position <= -1:
        raise Unsupported("the readout is not a classifier at a suffix token (every length needs a fixed readout position)")
    ctx = z3.Context()
    vals = Values(z3, ctx)
    vals.inline = True
    cur, nxt = _StateVars(z3, ctx, ""), _StateVars(z3, ctx, ".next")
    P, S = len(emb.prefix), len(emb.suffix)
    phases = [f"pre{i}" for i in range(P)] + [f"word{c}" for c in range(min_len + 1)] + [f"suf{s}" for s in range(1, S)] + ["done"]
    first_word = f"word{0}"
    moves: list[tuple[str, str | None, int | None, str]] = []  # (from, token, suffix index, to)
    for i, tok in enumerate(emb.prefix):
        moves.append((f"pre{i}", tok, None, f"pre{i + 1}" if i + 1 < P else first_word))
    for c in range(min_len + 1):
        moves.append((f"word{c}", None, None, f"word{min(c + 1, min_len)}"))
    for s, tok in enumerate(emb.suffix):
        moves.append((f"word{min_len}" if s == 0 else f"suf{s}", tok, s, f"suf{s + 1}" if s + 1 < S else "done"))
    plan = None
    head = None
    keys: dict[str, tuple[bool, tuple[str, ...]]] | None = None
    steps: dict[tuple[str | None, int | None], tuple[Any, dict[str, Any] | None]] = {}
    symbol_steps: list[_Step] = []  # the step that reads a word symbol (Bools w0.*)
    for _from, tok, s, _to in moves:
        if (tok, s) in steps:
            continue
        start = len(vals.assertions)
        step = _Step(z3, ctx, net, results, vals, tok, cur, nxt, readout_lemmas, readout_nodes)
        if head is None:
            head = step.readout_head()
            if head is None:
                raise Unsupported("the readout is not one averaging head over Boolean dims followed by position-wise blocks")
        idx, h = head
        st = step.state(idx, 0)
        dims = _head_dims(h)
        bits = step.pattern_bits(dims, st)
        if bits is None:
            raise Unsupported(f"the readout head {h.name!r} reads a dim that is not 0/1")
        if s is not None and s - S == r.position:
            plan = step.readout_plan(idx, h, st, r.position)
            if plan is None:
                raise Unsupported("the readout lemma does not hold or reads a dim that is not concrete at the readout position")
        if keys is None:
            keys = step.scan_keys
        elif keys != step.scan_keys:
            raise Unsupported("the tokens are not read by the same scans")
        if tok is None:
            symbol_steps.append(step)
        steps[(tok, s)] = (vals.and_(vals.assertions[start:]), bits)
        del vals.assertions[start:]
    assert plan is not None and keys is not None and head is not None
    dims, patterns = plan[0], plan[1]
    pres = [f"seen{pi}" for pi in range(len(patterns))]
    qs = [f"q{q}" for q in range(dfa.states)]
    # every state variable, both copies
    for name in (*phases, *pres, *qs):
        cur(name), nxt(name)
    for key, (_later, outs) in keys.items():
        for field in ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs)):
            cur(f"scan{key}.{field}"), nxt(f"scan{key}.{field}")
    names = sorted(cur.vars)
    alts = []
    for frm, tok, s, to in moves:
        formula, bits = steps[(tok, s)]
        assert bits is not None
        parts = [cur(frm), nxt(to), *(z3.Not(nxt(p)) for p in phases if p != to), formula]
        for pi, pat in enumerate(patterns):
            here = vals.and_([bits[d] if pat[d] else vals.not_(bits[d]) for d in dims])
            parts.append(vals.iff(nxt(pres[pi]), vals.or_([cur(pres[pi]), here])))
        if tok is None:
            word_step = symbol_steps[0]
            sym = [word_step.is_symbol(0, a) for a in range(len(language.alphabet))]
            for q2 in range(dfa.states):
                came = [z3.And(cur(qs[q]), sym[a]) for q in range(dfa.states) for a in range(len(language.alphabet)) if dfa.delta[q][a] == q2]
                parts.append(vals.iff(nxt(qs[q2]), vals.or_(came)))
        else:
            parts.extend(vals.iff(nxt(q), cur(q)) for q in qs)
        alts.append(vals.and_(parts))
    trans = vals.or_(alts)
    first = phases[0]
    init = [cur(first), *(z3.Not(cur(p)) for p in phases if p != first), *(z3.Not(cur(p)) for p in pres)]
    init += [cur(q) if i == dfa.start else z3.Not(cur(q)) for i, q in enumerate(qs)]
    end = [cur("done")]
    for key, (later, outs) in keys.items():
        fields = ("found", "has", *(f"best.{o}" for o in outs), *(f"near.{o}" for o in outs))
        for field in fields:
            (init if later else end).append(z3.Not(cur(f"scan{key}.{field}")))
    accept = step.presence_formula(plan, [cur(p) for p in pres])
    member = vals.or_([cur(qs[q]) for q in sorted(dfa.accepting)])
    bad = z3.And(*end, accept != member)
    state = [cur.vars[n] for n in names]
    primed = [nxt.vars[n] for n in names]
    return TransitionSystem(z3, ctx, state, primed, z3.And(init), trans, bad)
