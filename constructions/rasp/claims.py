"""The claims every compiled B-RASP or C-RASP program declares (network = program, operations,
program = language, no ties), and its construction declaration.

For a program P, its compiled network N and optionally a reference language L:

- ``network=program``: N accepts exactly the words P accepts (a :class:`Recognizes` claim whose
  language is P's interpreter), every word up to the bound, the empty word included;
- ``operations``: after the last sublayer, every residual dim named after an operation holds
  that operation's vector (0/1 for Boolean vectors, C(i)/(i+1) for counts) at every word position — the
  compiled blocks compute the program step by step, not just its output. For a B-RASP program,
  of every length with the smt method: by the operation-wise correspondence, tried first, else
  (past masks only) by its :class:`FollowsAutomaton` form, built only then
  (``TraceProperty.statable_later``: Dyck-1 of depth <= 3 spends about 30 s of CPU finding it
  has none); for a C-RASP program without conditionals, also of every length (its
  :class:`FollowsCounts` form, :func:`.crasp_lemmas.operations_form`: the counting lemmas in
  place, the network read as a counter system in product with the program's counter automaton,
  every operation's dim watched);
- ``program=language`` (when L is given): P's interpreter agrees with L on every word up to the
  bound, the empty word included (an :class:`ExactFact`: no network); for a B-RASP program with
  past masks only and an L with an automaton, on every word of every length instead: the
  program's automaton (:func:`.brasp_lemmas.program_automaton`) and L's agree on every reachable
  pair of states; for a C-RASP program and an L with a counter automaton, also of every length
  with the smt method (its :class:`SameLanguage` form: the program's counter automaton,
  :func:`.crasp_lemmas.program_counters`, against L's);
- ``no-ties`` (B-RASP): every leftmost or rightmost head selects exactly one key or none (never a tie);
- ``network=language`` (C-RASP, when L has a counter automaton): N accepts exactly the words of L,
  a :class:`Recognizes` claim proved for every length from the counting lemmas and L's counter
  automaton alone (``network=program`` and ``program=language`` imply it; this proof does not
  rest on the program's counter automaton).

A B-RASP program with past masks only gets its own automaton as the symbolic twin of the
``network=program`` language, and every B-RASP construction declares one block lemma per compiled
block (:func:`.brasp_lemmas.brasp_lemmas`): ``netproof prove --method smt`` then proves
network = program for every length. A C-RASP program's ``network=program`` language carries the
program's counter automaton (:func:`.crasp_lemmas.program_counters`) and its construction one
counting lemma per head and comparison FFN (:func:`.crasp_lemmas.crasp_lemmas`): the smt method
proves it, and ``network=language``, for every length over integer counts.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import product
from types import SimpleNamespace
from typing import Any

from netproof.symbolic import Affine, AttentionLayer, Network
from netproof.verifier.claims import (
    Automaton,
    CompiledProgram,
    Construction,
    ExactFact,
    FollowsAutomaton,
    Language,
    Lemma,
    NearestSelection,
    RankedSelection,
    Recognizes,
    SameLanguage,
    TraceProperty,
    UniqueSelections,
    Word,
)
from netproof.verifier.claims.rasp import brasp, crasp
from netproof.verifier.claims.rasp.common import program_file

from .brasp_lemmas import automata_agree, brasp_lemmas, operations_automaton, program_automaton
from .compile_brasp import compile_brasp
from .compile_crasp import compile_crasp, operation_dims
from .crasp_lemmas import crasp_lemmas, operations_form, program_counters

__all__ = ["brasp_claims", "crasp_claims", "program_construction", "words_upto"]

REFERENCE_B = "Yang, Chiang & Angluin 2024 (B-RASP); docs/rasp-semantics.md#b-rasp"
REFERENCE_C = "Yang & Chiang 2024 (C-RASP); docs/rasp-semantics.md#c-rasp"


def _shown(w: Word) -> str:
    """A word in a message: quoted, or ε (unquoted) for the empty word."""
    return repr("".join(w)) if w else "ε"


def words_upto(alphabet: tuple[str, ...], max_len: int) -> Iterator[Word]:
    """Every word of length 0..max_len, shortest first."""
    for n in range(max_len + 1):
        yield from product(alphabet, repeat=n)


def _agrees(
    program: Any, accepts: Callable[[Any, Word], bool], lang: Language, max_len: int
) -> Callable[[], tuple[int, str | None]]:
    def check() -> tuple[int, str | None]:
        cases = 0
        for w in words_upto(program.alphabet, max_len):
            cases += 1
            if accepts(program, w) != lang.contains(w):
                return cases, (
                    f"on {_shown(w)} the program says {accepts(program, w)} "
                    f"and {lang.name} says {lang.contains(w)}"
                )
        return cases, None

    return check


def _apply(a: Affine, row: dict[str, Fraction]) -> dict[str, Fraction]:
    """An Affine map applied to one residual row (plain rational arithmetic on the IR)."""
    return {
        o: sum((w * row[i] for w, i in zip(ws, a.inputs, strict=True)), b)
        for o, ws, b in zip(a.outputs, a.weights, a.bias, strict=True)
    }


_ALLOWED: dict[str, Callable[[int, int], bool]] = {
    "none": lambda i, j: True,
    "strict_causal": lambda i, j: j < i,
    "strict_anticausal": lambda i, j: j > i,
    "causal": lambda i, j: j <= i,
    "anticausal": lambda i, j: j >= i,
}


def _no_ties(word: Word, trace: Any) -> str | None:
    """None if every hardmax head with a leftmost or rightmost tie rule has at most one
    maximizing key at every query position (the verdict head, ties averaged, is left out: it
    averages on purpose, over positions that all hold the same flag).

    The scores are recomputed from the residual state before each attention layer and the
    heads' query and key maps (dot scoring, the compiler's heads), since a trace records only
    the key a leftmost/rightmost head selected, not how many keys tied for it."""
    net = trace.network
    for k, layer in enumerate(net.layers):
        block = layer.block
        if not isinstance(block, AttentionLayer):
            continue
        rows = [dict(zip(net.dims, r, strict=True)) for r in trace.states[k].rows]
        for head in block.heads:
            if (
                getattr(head.normalizer, "tie", None) == "average"
            ):  # the verdict head averages by design
                continue
            queries = [_apply(head.query, r) for r in rows]
            keys = [_apply(head.key, r) for r in rows]
            for i, q in enumerate(queries):
                scores = [
                    sum(q[o] * kj[o] for o in q)
                    for j, kj in enumerate(keys)
                    if _ALLOWED[head.mask](i, j)
                ]
                if scores and scores.count(max(scores)) > 1:
                    return f"head {head.name} at position {i + 1}: {scores.count(max(scores))} keys tie for the top score {max(scores)}"
    return None


def _rows(state: Any, w: int, dims: Sequence[str]) -> list[tuple[Fraction, ...]]:
    """Word ``w``'s rows of a batched state, each in the order ``dims`` (a dim the state lacks
    is 0), as exact Fractions."""
    cols = [state.dims.index(d) if d in state.dims else None for d in dims]
    return [
        tuple(
            Fraction(0) if c is None else Fraction(int(state.num[w, t, c]), state.den) for c in cols
        )
        for t in range(state.num.shape[1])
    ]


class _Rows:
    """One word's residual states out of a batched trace, in the shape :func:`_no_ties` and the
    operations checks read (``network``, ``states[k].rows``, ``final.rows``): exact Fractions,
    the same values the exact interpreter gives."""

    def __init__(self, batch: Any, w: int) -> None:
        self.network = batch.network
        self.states = tuple(
            SimpleNamespace(rows=_rows(st, w, batch.network.dims)) for st in batch.states
        )
        self.final = self.states[-1]


def _no_ties_batch(words: Sequence[Word], batch: Any) -> list[str | None]:
    """:func:`_no_ties` over a batched trace: a word whose every checked head has at most one
    maximizer at every query position (the batch's selection counts) holds; the others get
    :func:`_no_ties`'s own text, from their exact states. A head without a selection summary
    (not hardmax) sends every word through :func:`_no_ties`."""
    net = batch.network
    suspect = batch.xp.zeros(len(words), dtype=bool)
    for layer in net.layers:
        if not isinstance(layer.block, AttentionLayer):
            continue
        for head in layer.block.heads:
            if getattr(head.normalizer, "tie", None) == "average":
                continue
            try:
                sel = batch.selection(layer.name, head.name)
            except KeyError:
                suspect[:] = True
                continue
            suspect |= (sel.count > 1).any(axis=1)
    return [_no_ties(w, _Rows(batch, k)) if suspect[k] else None for k, w in enumerate(words)]


def _brasp_operations(program: brasp.Program) -> Callable[[Word, Any], str | None]:
    named = {op: name for op, name in brasp.names(program).items() if isinstance(op, brasp.Attend)}

    def holds(word: Word, trace: Any) -> str | None:
        dims = trace.network.dims
        for op, name in named.items():
            want = brasp.evaluate(op, word)
            for t, row in enumerate(trace.final.rows[1:-1]):  # after BOS, before EOS
                got = row[dims.index(name)]
                if got != Fraction(int(want[t])):
                    return f"dim {name} at position {t + 1} is {got}, the program's {name}({t + 1}) is {int(want[t])}"
        return None

    return holds


def _crasp_operations(program: crasp.Program) -> Callable[[Word, Any], str | None]:
    named = operation_dims(program)  # the compiler's names for them

    def holds(word: Word, trace: Any) -> str | None:
        dims = trace.network.dims
        for op, name in named.items():
            want = crasp.evaluate(op, word)
            for t, row in enumerate(trace.final.rows[1:]):  # after BOS
                got = row[dims.index(name)]
                expected = (
                    Fraction(int(want[t]))
                    if isinstance(op, crasp.Less)
                    else Fraction(want[t], t + 2)
                )
                if got != expected:
                    return f"dim {name} at position {t + 1} is {got}, the program gives {expected}"
        return None

    return holds


def _operations_batch(
    program: Any, module: Any, holds: Callable[[Word, Any], str | None]
) -> Callable[[Sequence[Word], Any], list[str | None]]:
    """The operations check over a batched trace: each operation's dim at every word position
    compared, as integers, with the program's vector (the network runs once per chunk, the
    program word by word); a word where some dim differs gets ``holds``'s own text, from its
    exact final state."""
    named: dict[Any, str]
    if module is brasp:
        named = {
            op: name for op, name in brasp.names(program).items() if isinstance(op, brasp.Attend)
        }
    else:
        named = operation_dims(program)

    def holds_batch(words: Sequence[Word], batch: Any) -> list[str | None]:
        final = batch.states[-1]
        n = final.num.shape[1]
        word_rows = slice(1, n - 1) if module is brasp else slice(1, n)
        bad = [False] * len(words)
        for op, name in named.items():
            if name not in final.dims:
                bad = [True] * len(words)
                break
            got = final.numerators(name)[:, word_rows]
            for k, w in enumerate(words):
                if bad[k]:
                    continue
                want = module.evaluate(op, w)
                for t, x in enumerate(got[k]):
                    if module is brasp or isinstance(op, crasp.Less):
                        expected = int(want[t]) * final.den
                        if int(x) != expected:
                            bad[k] = True
                            break
                    elif int(x) * (t + 2) != int(want[t]) * final.den:
                        bad[k] = True
                        break
        out: list[str | None] = []
        for k, w in enumerate(words):
            if not bad[k]:
                out.append(None)
                continue
            rows = _rows(final, k, batch.network.dims)
            out.append(
                holds(w, SimpleNamespace(network=batch.network, final=SimpleNamespace(rows=rows)))
            )
        return out

    return holds_batch


def _same_automata(
    program: brasp.Program, own: Automaton, language: Language, reference: Automaton
) -> Callable[[], tuple[int, str | None]]:
    """program = language on every word: the program's automaton against the reference's."""

    def check() -> tuple[int, str | None]:
        pairs, word = automata_agree(own, reference)
        if word is None:
            return pairs, None
        w = tuple(program.alphabet[a] for a in word)
        return pairs, (
            f"on {_shown(w)} the program says {brasp.accepts(program, w)} "
            f"and {language.name}'s automaton says {reference.accepts(word)}"
        )

    return check


def _common(
    program: Any, module: Any, reference: str, language: Language | None, max_len: int
) -> list[Any]:
    own = module.language(program)
    if (
        module is crasp
    ):  # the program's counter automaton: network = program for every length (crasp_lemmas)
        own = dataclasses.replace(own, counters=program_counters(program))
    dfa = program_automaton(program) if module is brasp else None
    if dfa is not None:  # past masks only: the program's own automaton, for proofs of every length
        own = dataclasses.replace(own, automaton=dfa)
    if dfa is not None and language is not None and language.automaton is not None:
        return [
            _recognizes(program, own, reference, max_len),
            ExactFact(
                id="program=language",
                statement=(
                    f"program {program.name} accepts exactly the words of {language.name} ({language.description}), "
                    "of every length (the program's automaton and the language's compared)"
                ),
                reference=reference,
                check=_same_automata(program, dfa, language, language.automaton),
                every_length=True,
                cases=(
                    f"every word of every length: the program's automaton ({dfa.states} states, read off the program) "
                    f"and {language.name}'s ({language.automaton.states} states), compared on every reachable pair of states"
                ),
                max_len=max_len,
            ),
        ]
    return [
        _recognizes(program, own, reference, max_len),
        *_bounded_language(program, module, reference, language, max_len, own),
    ]


def _recognizes(program: Any, own: Language, reference: str, max_len: int) -> Recognizes:
    return Recognizes(
        id="network=program",
        statement=f"the compiled network accepts exactly the words program {program.name} accepts",
        reference=reference,
        language=own,
        min_len=0,
        max_len=max_len,
        compiled=_compiled(program) if isinstance(program, brasp.Program) else None,
    )


def _compiled(program: brasp.Program) -> CompiledProgram:
    """The program as the operation-wise correspondence reads it: each attention operation with
    the residual dim the compiler gives it."""
    return CompiledProgram(
        program=program,
        dims=tuple((name, op) for op, name in _operation_dims(program).items()),
    )


def _bounded_language(
    program: Any,
    module: Any,
    reference: str,
    language: Language | None,
    max_len: int,
    own: Language,
) -> list[Any]:
    if language is None:
        return []
    counted = own.counters is not None and language.counters is not None

    def fact(bound: int) -> ExactFact:
        statement = f"program {program.name} accepts exactly the words of {language.name} ({language.description})"
        if counted:  # C-RASP: the smt method compares the two counter automata, for every length
            statement += (
                f": the program's interpreter on every word up to length {bound} (exhaustive), and, of every length, the "
                f"program's counter automaton (read off the program) against {language.name}'s (smt)"
            )
        return ExactFact(
            id="program=language",
            statement=statement,
            reference=reference,
            check=_agrees(program, module.accepts, language, bound),
            cases=f"every word over {{{', '.join(program.alphabet)}}} of length 0..{bound}",
            max_len=bound,
            words=True,
            statable=SameLanguage(left=own, right=language) if counted else None,
            bounded=fact,
        )

    return [fact(max_len)]


def _tie_ruled_heads(network: Network) -> tuple[tuple[str, str], ...] | None:
    """The (layer, head) of every attention head that ``no-ties`` is about (all but the ones that
    average their maximizers), or None where some head is not a hardmax head with a tie rule."""
    heads = []
    for layer in network.layers:
        if not isinstance(layer.block, AttentionLayer):
            continue
        for head in layer.block.heads:
            tie = getattr(head.normalizer, "tie", None)
            if tie == "average":
                continue
            if tie not in ("leftmost", "rightmost"):
                return None
            heads.append((layer.name, head.name))
    return tuple(heads)


def _no_ties_form(
    program: brasp.Program, network: Network, declared: Sequence[Lemma] | None = None
) -> UniqueSelections | None:
    """``no-ties`` as the smt method states it for every length: every tie-ruled head selects
    one position or none (:class:`UniqueSelections`), where each such head has a selection
    lemma among the program's block lemmas (else None: the form would say less than the claim)."""
    heads = _tie_ruled_heads(network)
    if heads is None:
        return None
    lemmas = {
        (lemma.layer, lemma.head)
        for lemma in (brasp_lemmas(program) if declared is None else declared)
        if isinstance(lemma, (NearestSelection, RankedSelection))
    }
    return UniqueSelections(heads=heads) if set(heads) <= lemmas else None


MAX_OPERATION_STATES = 4096
"""The most states the automaton of a program's operations (:func:`_operations_form`) may have."""


def _operations_form(program: brasp.Program) -> FollowsAutomaton | None:
    """``operations`` as the smt method states it for every length, for a program whose attention
    operations all look at the past (each one's vector at position t then depends on the first t
    symbols only): the product of the automata of the programs that output each operation
    (:func:`.brasp_lemmas.program_automaton`: its state after t symbols accepts iff the
    operation is 1 at t), with the operation's dim 1 exactly at the states whose component
    accepts. None where an operation looks beyond the past, or the product passes
    :data:`MAX_OPERATION_STATES` states."""
    named = {op: name for op, name in brasp.names(program).items() if isinstance(op, brasp.Attend)}
    ops = brasp.operations(program.output)
    if any(isinstance(op, brasp.Attend) and op.mask != "past" for op in ops):
        return None
    parts = []
    for op, name in named.items():
        own = _memories(brasp.Program(f"{program.name}.{name}", program.alphabet, output=op))
        if own is None:
            return _cascaded_operations(program, named)
        parts.append(own)
    start = tuple(a.start for a in parts)
    index = {start: 0}
    delta: list[list[int]] = []
    todo = [start]
    while todo:
        state = todo.pop(0)
        row = []
        for s in range(len(program.alphabet)):
            target = tuple(a.delta[q][s] for a, q in zip(parts, state, strict=True))
            if target not in index:
                if len(index) >= MAX_OPERATION_STATES:
                    return _cascaded_operations(program, named)
                index[target] = len(index)
                todo.append(target)
            row.append(index[target])
        delta.append(row)
    machine = Automaton(
        states=len(index),
        start=0,
        accepting=frozenset(),
        delta=tuple(tuple(r) for r in delta),
    )
    ones = tuple(
        (name, frozenset(i for st, i in index.items() if st[k] in parts[k].accepting))
        for k, name in enumerate(named.values())
    )
    return FollowsAutomaton(automaton=machine, ones=ones)


def _memories(program: brasp.Program) -> Automaton | None:
    """The automaton of the program's reachable memories, at most 4096 (no cascade)."""
    return program_automaton(program, cascade=False)


def _cascaded_operations(
    program: brasp.Program, named: Mapping[brasp.Attend, str]
) -> FollowsAutomaton | None:
    """``operations``'s form from one minimal machine that tells every attention operation's
    value after each prefix (:func:`.brasp_lemmas.operations_automaton`), where the product of
    the operations' automata is too large; None where that machine passes
    :data:`MAX_OPERATION_STATES` or one of the cascade's machines 8 times as many (Dyck-1 of
    depth <= 3: 132,571 states at the end, 258 s on this machine)."""
    got = operations_automaton(program, tuple(named), max_states=8 * MAX_OPERATION_STATES)
    if got is None or got[0].states > MAX_OPERATION_STATES:
        return None
    machine, ones = got
    return FollowsAutomaton(automaton=machine, ones=tuple(zip(named.values(), ones, strict=True)))


def brasp_claims(
    program: brasp.Program,
    language: Language | None = None,
    *,
    max_len: int = 8,
    network: Network | None = None,
    lemmas: Sequence[Lemma] | None = None,
) -> tuple[Any, ...]:
    """network = program, operations, program = language (if given) and no ties, to ``max_len``
    (``network``: the compiled program, compiled here if not given, for the form of ``no-ties``
    that the smt method proves for every length; ``lemmas``: the program's block lemmas,
    :func:`.brasp_lemmas.brasp_lemmas`, made here if not given)."""
    claims = _common(program, brasp, REFERENCE_B, language, max_len)
    claims.append(
        TraceProperty(
            id="operations",
            statement="every attention operation's residual dim holds the program's vector at every position",
            reference=REFERENCE_B,
            holds=_brasp_operations(program),
            holds_batch=_operations_batch(program, brasp, _brasp_operations(program)),
            min_len=1,
            max_len=max_len,
            statable_later=functools.cache(lambda: _operations_form(program)),
            compiled=_compiled(program),
        )
    )
    claims.append(
        TraceProperty(
            id="no-ties",
            statement="every leftmost or rightmost head selects exactly one key or none: the network never relies on a tie rule",
            reference=REFERENCE_B,
            holds=_no_ties,
            holds_batch=_no_ties_batch,
            min_len=1,
            max_len=max_len,
            statable=_no_ties_form(
                program, network if network is not None else compile_brasp(program), lemmas
            ),
            compiled=_compiled(program),
        )
    )
    return tuple(claims)


def crasp_claims(
    program: crasp.Program, language: Language | None = None, *, max_len: int = 8
) -> tuple[Any, ...]:
    """network = program, operations and program = language (if given), to ``max_len``."""
    claims = _common(program, crasp, REFERENCE_C, language, max_len)
    if language is not None and language.counters is not None:
        # network = L directly (the counting lemmas and L's counter automaton, not the
        # program's): what network=program and program=language imply, on a trust base
        # without the program's counter automaton.
        claims.append(
            Recognizes(
                id="network=language",
                statement=(
                    f"the compiled network accepts exactly the words of {language.name} ({language.description}); "
                    f"with network=program, program {program.name} accepts exactly them"
                ),
                reference=REFERENCE_C,
                language=language,
                min_len=0,
                max_len=max_len,
            )
        )
    claims.append(
        TraceProperty(
            id="operations",
            statement="every count, comparison and conditional dim holds the program's value (count-valued and conditional dims as C(i)/(i+1), comparisons as 0/1)",
            reference=REFERENCE_C,
            holds=_crasp_operations(program),
            holds_batch=_operations_batch(program, crasp, _crasp_operations(program)),
            min_len=1,
            max_len=max_len,
            statable=operations_form(program),
        )
    )
    return tuple(claims)


def _operation_dims(program: brasp.Program | crasp.Program) -> dict[Any, str]:
    """The operations the ``operations`` claim is about, with the residual dims they are compiled
    to: a B-RASP program's attention operations, a C-RASP program's counts, comparisons and
    conditionals (:func:`.compile_crasp.operation_dims`)."""
    if not isinstance(program, brasp.Program):
        return dict(operation_dims(program))
    return {op: n for op, n in brasp.names(program).items() if isinstance(op, brasp.Attend)}


def program_construction(
    name: str,
    program: brasp.Program | crasp.Program,
    language: Language | None = None,
    *,
    max_len: int = 8,
    title: str = "",
) -> Construction:
    """A registered construction for ``program``: its compiled network, its claims and its
    block lemmas, each built once, on first use (a program has no parameters: a run asks for
    the claims once per task, and building them reads the program's automaton, Dyck-1 of depth
    <= 3: about 20 s of CPU)."""
    is_b = isinstance(program, brasp.Program)

    @functools.cache
    def network() -> Network:
        return (
            compile_brasp(program) if isinstance(program, brasp.Program) else compile_crasp(program)
        )

    @functools.cache
    def block_lemmas() -> tuple[Any, ...]:
        if isinstance(program, brasp.Program):
            return brasp_lemmas(program)
        return crasp_lemmas(program, network())

    @functools.cache
    def all_claims() -> tuple[Any, ...]:
        if isinstance(program, brasp.Program):
            return brasp_claims(
                program, language, max_len=max_len, network=network(), lemmas=block_lemmas()
            )
        return crasp_claims(program, language, max_len=max_len)

    return Construction(
        name=name,
        paper_id=f"{'yang2024brasp' if is_b else 'yang2024crasp'}.{program.name}",
        title=title or f"{'B' if is_b else 'C'}-RASP program {program.name}, compiled",
        reference=REFERENCE_B if is_b else REFERENCE_C,
        params=(),
        build=lambda _values: network(),
        claims=lambda _values: all_claims(),
        lemmas=lambda _values: block_lemmas(),
        language=language or (brasp if is_b else crasp).language(program),
        program_file=lambda: program_file(
            program, "B-RASP" if is_b else "C-RASP", _operation_dims(program)
        ),
    )
