"""The type symmetry of a layer induction: a recognizer that compares bracket types only for
equality is proved for every length on the words of three types, and the symmetry carries the
proof to every number of types (Yao et al.'s Dyck(128, D) with the induction of Dyck(3, D)'s size).

**The premise** (:func:`type_symmetry`, checked on the network's weights, exactly, before the
induction runs; any failure leaves the induction over every type):

1. *Embedding.* The code dims C are those on which two word symbols of the same shape (both
   push, or both pop, in the language's stack) differ. Every other dim of a word symbol's row is
   the same for all symbols of its shape; C of a symbol is 0/1 and a function of its type alone
   (a push and a pop of one type have one code), injective over types, and different from the
   zero vector and from the code of every prefix and suffix token; no positional feature writes
   C.
2. *Segments.* Each segment of the induction (the sublayers after one cut up to the next) is one
   attention sublayer (residual, no layer norm) and then one FFN sublayer. The attention layer
   has exactly two heads, masked ``strict_causal`` and ``strict_anticausal``, each with a proved
   :class:`~netproof.verifier.claims.NearestSelection` lemma preferring ``¬mark`` (the
   induction's mark dim), no relative-position terms, and query and key maps that read no
   register dim. A *register* is C or a head's copy of C: the value map writes the B dims of a
   copy with weight 1 from the matching code dim and nothing else (bias 0), its other outputs
   read no register dim, and every dim it writes is 0 in every embedding row and written by one
   head only, so after the attention sublayer a copy holds exactly the selected position's
   code (the induction itself checks that every dim but mark and error is the embedding's at a
   cut). The FFN has a proved :class:`~netproof.verifier.claims.BooleanBlock` lemma whose
   formula for each code dim is that dim itself and whose formulas of the other outputs read
   registers only through Boolean formulas over Boolean dims.
3. *The rest.* The sublayers after the last cut and the readout read no register dim.
4. *Invariance* (queries, recorded with the proof): every FFN formula that reads a register is
   the same when the codes in all its registers are replaced by their images under the
   transposition (1 2) and under the cycle (1 2 … k) of the types (codes of no type fixed),
   for every Boolean input whose registers hold a type's code, a special token's code or 0.
   Those two generate the symmetric group S_k, so each such output is S_k-invariant, i.e. a
   function of the register values' equality pattern (which are equal, which are a type's code
   and which not).

**The reduction** (why three types suffice for each step of the induction). Fix one step's query
(segment ℓ ``complete`` or ``sound``; ``output`` reads no register by 3.) and a counterexample
to it: a word w over k types, with input marks and errors. Let U be the input-unmarked positions
(prefix and suffix tokens included). By 2., the left head at position i selects L(i) = the last
position of U before i, or i − 1 if there is none (none at the first position: its copy holds 0),
and the right head R(i) symmetrically; the FFN at i reads the codes of i, L(i), R(i), so by 4.
its outputs depend on types only through the equality pattern of the triangle T_i = {i, L(i),
R(i)}. The query's own type conditions ("a pop's last input-unmarked position before it is a
push of its type", :class:`.layers._LastUnmarked`) compare a pop with L(pop), an edge of T_pop;
the rest of the query is "types aside". So any word w' with the same symbols' shapes whose types
are equal on exactly the same edges of the graph H = ∪ T_i (word positions; prefix and suffix
tokens have codes no type has, in w' as in w) is a counterexample too, with the same marks and
errors. :func:`three_types` builds such a w' over types 1..3: it colours the word positions in
an order where each position has at most two earlier neighbours in H and those two are
adjacent: first the positions of U in order (u_a's earlier neighbours: u_{a-1} and u_{a-2}, both
in T_{u_{a-1}}; u_2's: u_1 and u_1 − 1, both in T_{u_1 − 1}), the positions before u_1 inserted
right after u_1 in increasing order (position j: u_1 and j − 1, both in T_j), then the positions
after the last one u_m in increasing order (j: j − 1 and u_m, or u_{m-1} and u_m at j = u_m + 1,
in T_{j−1} or T_{u_m}), then the marked positions between two of U (u_a, u_{a+1}: one
triangle). With U empty, left to right (j − 1 and j − 2, both in T_{j−1}). A position equal in
w to an earlier neighbour takes that neighbour's colour (its relation to the other one is then
right, since the two neighbours are adjacent and already right); one different from both takes
a colour neither has: three colours always suffice. Edges are checked when their later end is
coloured, so every edge of H keeps its equality. Hence: the step holds on words of types 1..3
iff it holds on all words (the other direction is a restriction), and the language's stack
automaton compares types only for equality, so the types kept are any three. The step queries
on the words of types 1..3 are the induction's own queries with the word's symbol restricted
(:func:`.layers.induction_system`'s ``types``: the network with the embedding rows of those
types only, :func:`restricted`, which on those words computes what the network does); their
certificates are recorded as usual.

tests/verifier/test_type_symmetry.py checks :func:`three_types` against the triangles on random
marks and words, the premise on single-weight mutants (each refused), and the reduced proof
against exhaustive checks.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic`, :mod:`.lemmas` and :mod:`.system`; z3
inside functions.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import FFN, Affine, AttentionLayer, Network, TokenEmbedding
from netproof.verifier.claims import (
    BooleanBlock,
    Language,
    NearestSelection,
    Recognizes,
    StackAutomaton,
)
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import to_smt2

from .arithmetic import Values, sympy_to_z3
from .lemmas import LemmaResult
from .system import label_index

__all__ = [
    "DETAIL",
    "KEPT",
    "QUERY",
    "TypeSymmetry",
    "restricted",
    "three_types",
    "type_symmetry",
]

KEPT = 3
"""The number of types the reduced induction reads (see the module docstring)."""

QUERY = "type symmetry"
"""The invariance queries are named ``"<claim> every n: type symmetry: <FFN> <generator>"``."""

DETAIL = (
    r"(; the induction on the words of \d+ of the \d+ types, the rest by the type symmetry "
    r"\(code dims [^()]*; the FFNs S_\d+-invariant: \d+ queries\))?"
)
"""The regular expression of what :attr:`TypeSymmetry.detail` adds to an induction's detail."""

REASON = (
    "the FFN's outputs that read type codes are the same with every code replaced by its image "
    "under {generator} of the types"
)


@dataclass(frozen=True, slots=True)
class TypeSymmetry:
    """The premise of the reduction, checked but for its invariance ``queries`` ((name, SMT-LIB2
    text, reason, solver): each must be unsat); ``kept`` the number of types the induction then
    reads, ``code`` the code dims, ``types`` the language's number of types."""

    code: tuple[str, ...]
    kept: int
    types: int
    queries: tuple[tuple[str, str, str, Any], ...]

    @property
    def detail(self) -> str:
        return (
            f"the induction on the words of {self.kept} of the {self.types} types, the rest by "
            f"the type symmetry (code dims {', '.join(self.code)}; the FFNs S_{self.types}-invariant: "
            f"{len(self.queries)} queries)"
        )


def _reads(aff: Affine, dims: set[str]) -> list[tuple[str, str]]:
    """(output, input) pairs where ``aff`` gives a register input a nonzero weight."""
    return [
        (o, i)
        for o, row in zip(aff.outputs, aff.weights, strict=True)
        for i, w in zip(aff.inputs, row, strict=True)
        if i in dims and w != 0
    ]


def _embedding_codes(
    net: Network, claim: Recognizes
) -> tuple[tuple[str, ...], dict[int, tuple[int, ...]], set[tuple[int, ...]]]:
    """Premise 1: the code dims, each type's code and the codes of the special tokens."""
    emb = net.embedding
    stack = claim.language.stack
    if not isinstance(emb, TokenEmbedding) or stack is None:
        raise Unsupported("no token embedding or no stack automaton")
    table = {tok: dict(row) for tok, row in emb.table}
    lang = claim.language.alphabet
    if set(lang) != set(emb.alphabet):
        raise Unsupported("the language's alphabet is not the embedding's")
    shape: dict[str, tuple[str, int]] = {}
    for a, sym in enumerate(lang):
        push, pop = stack.push[a], stack.pop[a]
        shape[sym] = ("push", push) if push is not None else ("pop", pop)  # type: ignore[assignment]
    dims = sorted({d for row in table.values() for d in row})
    code = tuple(
        d
        for d in net.dims
        if d in dims
        and any(
            table[s].get(d, Fraction(0)) != table[t].get(d, Fraction(0))
            for s in lang
            for t in lang
            if shape[s][0] == shape[t][0]
        )
    )
    if not code:
        raise Unsupported("no dim tells two symbols of one shape apart (no type code)")
    if any(d in code for d, _f, _c in emb.positional):
        raise Unsupported("a positional feature writes a code dim")
    codes: dict[int, tuple[int, ...]] = {}
    for sym in lang:
        values = [table[sym].get(d, Fraction(0)) for d in code]
        if any(v not in (0, 1) for v in values):
            raise Unsupported(f"the code of {sym!r} is not 0/1: {values}")
        c = tuple(int(v) for v in values)
        tau = shape[sym][1]
        if codes.setdefault(tau, c) != c:
            raise Unsupported(f"the two symbols of type {tau + 1} have different codes")
    if len(set(codes.values())) != len(codes):
        raise Unsupported("two types have one code (the codes are not injective)")
    special = {
        tuple(int(table[tok].get(d, Fraction(0)) != 0) for d in code)
        for tok in (*emb.prefix, *emb.suffix)
    }
    for tok in (*emb.prefix, *emb.suffix):
        if any(table[tok].get(d, Fraction(0)) not in (0, 1) for d in code):
            raise Unsupported(f"the code of special token {tok!r} is not 0/1")
    zero = tuple(0 for _ in code)
    for tau, c in codes.items():
        if c == zero or c in special:
            raise Unsupported(f"type {tau + 1}'s code {c} is 0 or a special token's")
    for shape_kind in ("push", "pop"):
        rows = [
            {d: v for d, v in table[s].items() if d not in code and v != 0}
            for s in lang
            if shape[s][0] == shape_kind
        ]
        if any(r != rows[0] for r in rows):
            raise Unsupported(f"two {shape_kind} symbols differ outside the code dims")
    return code, codes, special | {zero}


def type_symmetry(
    net: Network, claim: Recognizes, results: Sequence[LemmaResult]
) -> TypeSymmetry | None:
    """The reduction's premise for ``claim``'s induction on ``net`` (module docstring): None
    where the language has at most :data:`KEPT` types (nothing to reduce), Unsupported naming
    the first premise that fails, else the checked premise with its invariance queries (not yet
    solved)."""
    import sympy

    plan = claim.induction
    stack = claim.language.stack
    if plan is None or stack is None or stack.types <= KEPT:
        return None
    code, codes, others = _embedding_codes(net, claim)
    emb = net.embedding
    assert isinstance(emb, TokenEmbedding)
    table = {tok: dict(row) for tok, row in emb.table}
    registers: list[tuple[str, ...]] = [code]
    reg_dims = set(code)
    lemmas = {(type(r.lemma).__name__, _lemma_key(r.lemma)): r for r in results}
    cuts = [0, *(label_index(net, label) for label in plan.after)]
    ffns: list[tuple[FFN, BooleanBlock, list[tuple[str, ...]]]] = []
    for ell, (a, b) in enumerate(itertools.pairwise(cuts), 1):
        subs = net.layers[a:b]
        if (
            len(subs) != 2
            or not isinstance(subs[0].block, AttentionLayer)
            or not isinstance(subs[1].block, FFN)
            or not subs[0].residual
            or any(s.post_ln is not None for s in subs)
        ):
            raise Unsupported(f"segment {ell} is not one attention sublayer and one FFN")
        att, ffn = subs[0].block, subs[1].block
        heads = att.heads
        if sorted(h.mask for h in heads) != ["strict_anticausal", "strict_causal"]:
            raise Unsupported(f"segment {ell}'s attention has not one left and one right head")
        seg_regs: list[tuple[str, ...]] = [code]
        written: set[str] = set()
        for h in heads:
            res = lemmas.get(("NearestSelection", (att.name, h.name)))
            if res is None or not res.proved:
                raise Unsupported(f"head {att.name}.{h.name} has no proved NearestSelection lemma")
            prefer = res.lemma.prefer  # type: ignore[union-attr]
            if prefer != sympy.Not(sympy.Symbol(plan.mark)):
                raise Unsupported(f"head {att.name}.{h.name} does not prefer ¬{plan.mark}")
            if h.relative_bias is not None or h.query_conv is not None or h.key_conv is not None:
                raise Unsupported(f"head {att.name}.{h.name} has relative-position terms")
            bad = _reads(h.query, reg_dims) + _reads(h.key, reg_dims)
            if bad:
                raise Unsupported(f"head {att.name}.{h.name}'s score reads code dim {bad[0][1]!r}")
            copy: dict[str, str] = {}
            v = h.value
            for o, row, bias in zip(v.outputs, v.weights, v.bias, strict=True):
                if o in written or any(table[t].get(o, Fraction(0)) != 0 for t in table):
                    raise Unsupported(
                        f"head {att.name}.{h.name} writes dim {o!r}, which is not 0 at the cut or written twice"
                    )
                written.add(o)
                nz = {i: w for i, w in zip(v.inputs, row, strict=True) if w != 0}
                if set(nz) & reg_dims:
                    if len(nz) != 1 or next(iter(nz.values())) != 1 or bias != 0:
                        raise Unsupported(
                            f"head {att.name}.{h.name} writes {o!r} from a code dim other than as a copy"
                        )
                    copy[next(iter(nz))] = o
            if copy:
                if set(copy) != set(code):
                    raise Unsupported(f"head {att.name}.{h.name} copies only part of the code")
                reg = tuple(copy[d] for d in code)
                seg_regs.append(reg)
                registers.append(reg)
                reg_dims |= set(reg)
        res = lemmas.get(("BooleanBlock", ffn.name))
        if res is None or not res.proved:
            raise Unsupported(f"FFN {ffn.name} has no proved BooleanBlock lemma")
        lemma = res.lemma
        assert isinstance(lemma, BooleanBlock)
        for d in code:
            if d not in lemma.outputs or sympy.simplify(lemma.outputs[d] - sympy.Symbol(d)) != 0:
                raise Unsupported(f"FFN {ffn.name} does not pass code dim {d!r} through")
        ffns.append((ffn, lemma, seg_regs))
    for sub in net.layers[cuts[-1] :]:
        blk = sub.block
        maps: list[Affine] = []
        if isinstance(blk, AttentionLayer):
            maps = [m for h in blk.heads for m in (h.query, h.key, h.value)]
        elif isinstance(blk, FFN) and blk.steps:
            maps = [blk.steps[0]]  # type: ignore[list-item]
        else:
            raise Unsupported(f"sublayer {blk.name} after the last cut is not read")
        for m in maps:
            if _reads(m, reg_dims):
                raise Unsupported(f"sublayer {blk.name} after the last cut reads a code dim")
    r = net.readout
    logit = getattr(r, "logit", None)
    if not isinstance(logit, Affine) or _reads(logit, reg_dims):
        raise Unsupported("the readout reads a code dim or is no classifier")
    queries: list[tuple[str, str, str, Any]] = []
    built: dict[tuple[str, str], tuple[str, Any] | None] = {}  # identical FFNs: one query
    for ffn, lemma, seg_regs in ffns:
        for gen, perm in _generators(stack.types):
            name = f"{claim.id} every n: {QUERY}: {ffn.name} {gen}"
            key = (repr(sorted(lemma.outputs.items())) + repr(seg_regs), gen)
            if key not in built:
                built[key] = _invariance(lemma, seg_regs, reg_dims, codes, others, perm)
            got = built[key]
            if got is None:
                continue
            text, solver = got
            queries.append((name, text, REASON.format(generator=gen), solver))
    return TypeSymmetry(code=code, kept=KEPT, types=stack.types, queries=tuple(queries))


def _lemma_key(lemma: Any) -> Any:
    if isinstance(lemma, NearestSelection):
        return (lemma.layer, lemma.head)
    if isinstance(lemma, BooleanBlock):
        return lemma.block
    return lemma.id


def _generators(k: int) -> list[tuple[str, dict[int, int]]]:
    """The transposition (1 2) and the cycle (1 2 … k), over types 0..k-1."""
    return [
        ("(1 2)", {0: 1, 1: 0}),
        (f"(1 2 … {k})", {t: (t + 1) % k for t in range(k)}),
    ]


def _invariance(
    lemma: BooleanBlock,
    regs: Sequence[tuple[str, ...]],
    reg_dims: set[str],
    codes: Mapping[int, tuple[int, ...]],
    others: set[tuple[int, ...]],
    perm: Mapping[int, int],
) -> tuple[str, Any] | None:
    """The query "some output of ``lemma`` that reads a register changes when every register's
    code is mapped by ``perm``" (None where no output reads one); Unsupported where such an
    output reads a dim that is not Boolean."""
    import sympy
    import z3

    outs = {
        d: f
        for d, f in lemma.outputs.items()
        if d not in regs[0] and {str(s) for s in f.free_symbols} & reg_dims
    }
    if not outs:
        return None
    for d, f in outs.items():
        if not isinstance(f, sympy.logic.boolalg.Boolean) or not {
            str(s) for s in f.free_symbols
        } <= set(lemma.boolean):
            raise Unsupported(
                f"FFN {lemma.block}'s output {d!r} reads a register and is not Boolean"
            )
        stray = {str(s) for s in f.free_symbols} & reg_dims - {x for r in regs for x in r}
        if stray:
            raise Unsupported(
                f"FFN {lemma.block} reads code dims {sorted(stray)} of no register here"
            )
    ctx = z3.Context()
    vals = Values(z3, ctx)
    env = {d: z3.Bool(d, ctx) for d in lemma.boolean}
    primed = dict(env)
    allowed = [*codes.values(), *sorted(others)]
    solver = z3.Solver(ctx=ctx)

    def is_code(bits: Sequence[Any], c: Sequence[int]) -> Any:
        return z3.And(*(b if v else z3.Not(b) for b, v in zip(bits, c, strict=True)))

    for reg in regs:
        bits = [env[d] for d in reg]
        holds = {c: is_code(bits, c) for c in allowed}  # the register holds code c
        solver.add(z3.Or(*holds.values()))
        for j, d in enumerate(reg):
            # bit j of the image: the bit of codes[perm[t]] where the register holds codes[t]
            moved = [
                holds[codes[t]] for t in sorted(codes) if codes[perm.get(t, t)][j] != codes[t][j]
            ]
            primed[d] = z3.Xor(env[d], z3.Or(*moved)) if moved else env[d]
    wrong = [sympy_to_z3(vals, f, env) != sympy_to_z3(vals, f, primed) for f in outs.values()]
    solver.add(*vals.assertions)
    solver.add(z3.Or(*wrong))
    return to_smt2(solver, logic="QF_UF"), solver


def restricted(net: Network, claim: Recognizes, types: int) -> tuple[Network, Recognizes]:
    """``net`` with its embedding's rows of the language's first ``types`` types only (and the
    prefix and suffix tokens), and ``claim`` over the language restricted likewise: on a word of
    those types both compute exactly what the originals do, and a step query over them reads
    constant code bits where no kept type has a 1."""
    import dataclasses

    language = claim.language
    stack = language.stack
    emb = net.embedding
    if stack is None or not isinstance(emb, TokenEmbedding):
        raise Unsupported("no stack automaton or no token embedding to restrict")
    keep = [
        a
        for a in range(len(language.alphabet))
        if (stack.push[a] if stack.push[a] is not None else stack.pop[a]) < types  # type: ignore[operator]
    ]
    alphabet = tuple(language.alphabet[a] for a in keep)
    sub = StackAutomaton(
        depth=stack.depth,
        types=types,
        push=tuple(stack.push[a] for a in keep),
        pop=tuple(stack.pop[a] for a in keep),
    )
    lang = Language(
        name=f"{language.name} on its first {types} types",
        alphabet=alphabet,
        contains=language.contains,
        description=language.description,
        stack=sub,
    )
    specials = {*emb.prefix, *emb.suffix}
    table = tuple((tok, row) for tok, row in emb.table if tok in alphabet or tok in specials)
    small = dataclasses.replace(
        net,
        embedding=dataclasses.replace(
            emb, alphabet=tuple(a for a in emb.alphabet if a in alphabet), table=table
        ),
    )
    return small, dataclasses.replace(claim, language=lang)


def three_types(types: Sequence[int | None], unmarked: Sequence[bool]) -> list[int | None]:
    """The word of the reduction (module docstring): ``types[i]`` is position i's type (None for
    a prefix or suffix token, whose code no type has), ``unmarked[i]`` whether it is in U.
    Returns types in 1..3 (None kept) equal on exactly the edges of the triangles {i, L(i), R(i)}
    where ``types`` are.

    >>> three_types([None, 5, 7, 9, 5, None], [False] * 6)
    [None, 1, 2, 3, 1, None]
    """
    n = len(types)
    U = [i for i in range(n) if unmarked[i]]

    def left(i: int) -> int | None:
        before = [u for u in U if u < i]
        return before[-1] if before else (i - 1 if i > 0 else None)

    def right(i: int) -> int | None:
        after = [u for u in U if u > i]
        return after[0] if after else (i + 1 if i < n - 1 else None)

    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for i in range(n):
        tri = [j for j in (i, left(i), right(i)) if j is not None]
        for a in tri:
            adj[a].update(b for b in tri if b != a)
    if U:
        order = [U[0], *range(U[0]), *U[1:], *range(U[-1] + 1, n)]
        order += [i for i in range(n) if i not in set(order)]
    else:
        order = list(range(n))
    out: list[int | None] = [None] * n
    done: set[int] = set()
    for v in order:
        done.add(v)
        if types[v] is None:
            continue
        earlier = [u for u in adj[v] if u in done and u != v and types[u] is not None]
        same = [u for u in earlier if types[u] == types[v]]
        if same:
            out[v] = out[same[0]]
        else:
            out[v] = min({1, 2, 3} - {out[u] for u in earlier})
    return out
