"""The operation-wise correspondence: a network compiled from a B-RASP program proved equal to
the program for every length, one operation at a time, with no automaton and no search.

The existing every-length route reads the network with its lemmas in place as a transition
system over positions and searches an inductive invariant against the program's automaton,
whose states are about the product of every operation's memory (Dyck-1 of depth <= 3: past
132,571 states). For a compiled program the composition needs no search. Walk the network's
sublayers in order, keeping for every residual dim what it holds at a word position as a
Boolean formula over *atoms* (the token bits, the program's attention operations, and "dim d at
the position head h selects"), and what it holds at ``BOS`` and ``EOS`` (0, 1, or a 0/1 bit not
known); by induction over the sublayers, every word of every length:

- the embedding writes 0/1 token dims (one-hot at word positions), ``BOS`` and ``EOS`` flags and
  one positional dim with its exact feature; every other dim starts at 0;
- an FFN with a proved :class:`~netproof.verifier.claims.BooleanBlock` lemma, whose Boolean
  dims are 0/1 everywhere (the induction), writes fresh dims (0 before: the residual adds), each
  the lemma's formula of what the dims it reads hold;
- a hardmax head with a proved :class:`~netproof.verifier.claims.NearestSelection` or
  :class:`~netproof.verifier.claims.RankedSelection` lemma (its key dims 0/1 everywhere, its
  positional dim the embedding's feature, never written again) selects at every position the
  unique best ranked position of its mask (the first or last among equal ranks), or none; its
  value map copies 0/1 dims into fresh dims, so each output is "that dim at the selected
  position" (0 where the mask is empty);
- where an FFN writes the dim of an attention operation P = ◁/▷_j [M, S] V : D, two small
  queries close the step (``P: selection``, ``P: value``): at word positions the head's ranks
  put every key with S above every key without S (and ``BOS``/``EOS`` below them), all keys
  with S on one rank, its mask is M (j < i: strict causal, j > i: strict anticausal, all: none)
  and its end is P's side; and the FFN's formula, with the head's outputs at a key with S (found)
  or at any key without S, ``BOS``, ``EOS`` or none (not found), is S-found ? V : D. The
  operation's dim then holds P's vector at every word position, and later blocks read it as the
  atom P;
- the tail: the FFN ``output`` is the program's output at word positions and its empty-word
  bit at ``BOS`` (``tail: output``); the head that copies it to ``EOS`` selects the nearest
  earlier position (the last symbol, ``BOS`` for ε); the flag FFN is 0 except at ``EOS``, where
  it is the copied bit's negation (``tail: flag``); the averaging head over a score increasing
  in the flag reads 1 iff the flag is raised (``tail: presence``), and the readout accepts iff
  it is 0.

So the network accepts exactly the program's words, and every operation's dim holds its
vector, at every length (linear in the operations). Every premise is checked, never assumed:
where one fails (a lemma not proved, a dim written twice, a head whose ranks are not its
operation's, an FFN formula that is not the operation) the route says why
(:class:`~netproof.verifier.smt.errors.Unsupported`) and the caller falls back to the other
routes; a ``sat`` answer is the same (a correspondence that does not hold is no proof, and no
refutation either: the fallback decides).

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface and
:mod:`.lemmas`; z3 and sympy inside functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import (
    FFN,
    AttentionLayer,
    Classifier,
    Hardmax,
    Head,
    Network,
    TokenEmbedding,
)
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    BooleanBlock,
    CompiledProgram,
    Lemma,
    NearestSelection,
    Proved,
    RankedSelection,
    Recognizes,
    TraceProperty,
    UniqueSelections,
    Unknown,
    Verdict,
)
from netproof.verifier.claims.rasp import brasp
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .lemmas import METHOD, LemmaResult, nearer_is_later, prove_lemma, prove_lemma_once

__all__ = [
    "QUERY",
    "CorrespondenceOutcome",
    "correspondence_detail",
    "correspondence_queries",
    "prove_correspondence",
]

QUERY = "correspondence"
"""The word in the names of the route's queries: ``"<claim> every n: correspondence: <step>"``."""

LOGIC = "QF_UF"

# --------------------------------------------------------------------------- Boolean formulas
# A formula is a tuple: ("c", bool), ("v", atom), ("not", f), ("and", f, ...), ("or", f, ...).
# Atoms: "tok:<symbol>", "op:<dim>" (an attention operation, once its dim is proved to hold it)
# and "sel:<layer>.<head>:<dim>" (dim at the position the head selects).

F = tuple[Any, ...]
TRUE: F = ("c", True)
FALSE: F = ("c", False)
Tri = bool | None  # a dim's value at BOS or EOS: 0, 1, or a 0/1 bit not known


def _not(f: F) -> F:
    if f[0] == "c":
        return ("c", not f[1])
    if f[0] == "not":
        return f[1]  # type: ignore[no-any-return]
    return ("not", f)


def _and(*fs: F) -> F:
    out = []
    for f in fs:
        if f == FALSE:
            return FALSE
        if f != TRUE:
            out.append(f)
    return TRUE if not out else out[0] if len(out) == 1 else ("and", *out)


def _or(*fs: F) -> F:
    out = []
    for f in fs:
        if f == TRUE:
            return TRUE
        if f != FALSE:
            out.append(f)
    return FALSE if not out else out[0] if len(out) == 1 else ("or", *out)


def _atoms(f: F, acc: set[str], seen: set[int]) -> set[str]:
    stack = [f]
    while stack:
        g = stack.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        if g[0] == "v":
            acc.add(g[1])
        elif g[0] != "c":
            stack.extend(g[1:])
    return acc


def atoms(f: F) -> set[str]:
    return _atoms(f, set(), set())


def _sympy_formula(expr: Any, env: Callable[[str], F], memo: dict[Any, F]) -> F:
    """A lemma's sympy Boolean formula over dims, each dim replaced by ``env(dim)``."""
    import sympy

    if expr in memo:
        return memo[expr]
    if isinstance(expr, sympy.Symbol):
        out = env(expr.name)
    elif expr is sympy.true:
        out = TRUE
    elif expr is sympy.false:
        out = FALSE
    elif isinstance(expr, sympy.Not):
        out = _not(_sympy_formula(expr.args[0], env, memo))
    elif isinstance(expr, sympy.And):
        out = _and(*(_sympy_formula(a, env, memo) for a in expr.args))
    elif isinstance(expr, sympy.Or):
        out = _or(*(_sympy_formula(a, env, memo) for a in expr.args))
    elif isinstance(expr, sympy.Implies):
        a, b = (_sympy_formula(x, env, memo) for x in expr.args)
        out = _or(_not(a), b)
    elif isinstance(expr, sympy.Xor) and len(expr.args) == 2:
        a, b = (_sympy_formula(x, env, memo) for x in expr.args)
        out = _or(_and(a, _not(b)), _and(_not(a), b))
    elif isinstance(expr, sympy.Equivalent):
        parts = [_sympy_formula(x, env, memo) for x in expr.args]
        out = _or(_and(*parts), _and(*(_not(p) for p in parts)))
    else:
        raise Unsupported(f"the lemma formula {expr} is not a Boolean formula of And, Or and Not")
    memo[expr] = out
    return out


def _tri(expr: Any, env: Mapping[str, Tri]) -> Tri:
    """A lemma formula in Kleene's three-valued logic (None: a 0/1 bit not known)."""
    import sympy

    if isinstance(expr, sympy.Symbol):
        return env[expr.name]
    if expr is sympy.true:
        return True
    if expr is sympy.false:
        return False
    args = [_tri(a, env) for a in expr.args]
    if isinstance(expr, sympy.Not):
        return None if args[0] is None else not args[0]
    if isinstance(expr, sympy.And):
        return False if False in args else None if None in args else True
    if isinstance(expr, sympy.Or):
        return True if True in args else None if None in args else False
    if isinstance(expr, sympy.Implies):
        a, b = args
        return True if a is False or b is True else None if None in (a, b) else False
    if isinstance(expr, sympy.Xor) and len(args) == 2:
        return None if None in args else args[0] != args[1]
    if isinstance(expr, sympy.Equivalent):
        return None if None in args else len(set(args)) == 1
    raise Unsupported(f"the lemma formula {expr} is not a Boolean formula of And, Or and Not")


def _z3(z3: Any, ctx: Any, f: F, env: Callable[[str], Any], memo: dict[int, Any]) -> Any:
    key = id(f)
    if key in memo:
        return memo[key]
    tag = f[0]
    if tag == "c":
        out = z3.BoolVal(bool(f[1]), ctx)
    elif tag == "v":
        out = env(f[1])
    elif tag == "not":
        out = z3.Not(_z3(z3, ctx, f[1], env, memo))
    else:
        parts = [_z3(z3, ctx, g, env, memo) for g in f[1:]]
        out = z3.And(parts) if tag == "and" else z3.Or(parts)
    memo[key] = out
    return out


# --------------------------------------------------------------------------- the program's side


class _Program:
    """The program's vectors as formulas over atoms (position-wise ones inlined)."""

    def __init__(self, compiled: CompiledProgram) -> None:
        self.program: brasp.Program = compiled.program
        self.dim_of: dict[brasp.BVec, str] = {}
        for dim, op in compiled.dims:
            if not isinstance(op, brasp.Attend):
                raise Unsupported(f"dim {dim!r} names {op!r}, which is not an attention operation")
            self.dim_of[op] = dim
        self.op_of = {d: op for op, d in self.dim_of.items()}
        self.memo: dict[brasp.BVec, F] = {}

    def vec(self, e: brasp.BVec) -> F:
        """A position-wise vector at one position."""
        if e in self.memo:
            return self.memo[e]
        if isinstance(e, brasp.Token):
            out: F = ("v", f"tok:{e.symbol}")
        elif isinstance(e, brasp.Const):
            out = TRUE if e.value else FALSE
        elif isinstance(e, brasp.Attend):
            if e not in self.dim_of:
                raise Unsupported(
                    f"attention operation {brasp.show_expr(e)} has no dim in the program's dims"
                )
            out = ("v", f"op:{self.dim_of[e]}")
        elif isinstance(e, brasp.Not):
            out = _not(self.vec(e.arg))
        elif isinstance(e, (brasp.And, brasp.Or)):
            parts = (self.vec(e.left), self.vec(e.right))
            out = _and(*parts) if isinstance(e, brasp.And) else _or(*parts)
        else:
            raise Unsupported(f"{brasp.show_expr(e)} is read at a position outside attention")
        self.memo[e] = out
        return out

    def pair_formula(self, e: brasp.BVec, side: str) -> F:
        """A pair expression with its i-reads and j-reads marked: atoms of ``AtI`` get the
        prefix ``i|`` and of ``AtJ`` ``j|`` (``side`` is ignored for constants)."""
        if isinstance(e, brasp.AtI):
            return _mark(self.vec(e.vec), "i@")
        if isinstance(e, brasp.AtJ):
            return _mark(self.vec(e.vec), "j@")
        if isinstance(e, brasp.Const):
            return TRUE if e.value else FALSE
        if isinstance(e, brasp.Not):
            return _not(self.pair_formula(e.arg, side))
        if isinstance(e, (brasp.And, brasp.Or)):
            parts = (self.pair_formula(e.left, side), self.pair_formula(e.right, side))
            return _and(*parts) if isinstance(e, brasp.And) else _or(*parts)
        raise Unsupported(f"{brasp.show_expr(e)} is not a pair expression")


def _mark(f: F, prefix: str) -> F:
    memo: dict[int, F] = {}

    def go(g: F) -> F:
        if id(g) in memo:
            return memo[id(g)]
        if g[0] == "c":
            out = g
        elif g[0] == "v":
            out = ("v", prefix + g[1])
        else:
            out = (g[0], *(go(x) for x in g[1:]))
        memo[id(g)] = out
        return out

    return go(f)


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True, slots=True)
class _Query:
    """One correspondence query: its name, what its ``unsat`` proves, and its solver."""

    name: str
    reason: str
    build: Callable[[Sequence[str]], Any]
    logic: str = LOGIC


@dataclass
class _Head:
    """A head with a proved selection lemma, as the walk reads it."""

    ident: str  # "<layer>.<head>"
    mask: str
    ranks: tuple[Any, ...]  # sympy formulas over key dims
    end: str  # "first" | "last"
    sources: dict[str, str]  # output dim -> the dim it copies
    lemma: str


class _Walk:
    def __init__(self, net: Network, compiled: CompiledProgram, results: Sequence[LemmaResult]):
        self.net = net
        self.prog = _Program(compiled)
        self.queries: list[_Query] = []
        self.used: list[str] = []  # lemma ids, in the order the walk applies them
        self.ffn: dict[str, BooleanBlock] = {}
        self.sel: dict[tuple[str, str], NearestSelection | RankedSelection] = {}
        for r in results:
            if not r.proved:
                continue
            if isinstance(r.lemma, BooleanBlock):
                self.ffn[r.lemma.block] = r.lemma
            elif isinstance(r.lemma, (NearestSelection, RankedSelection)):
                self.sel[(r.lemma.layer, r.lemma.head)] = r.lemma
        self.word: dict[str, F] = {}
        self.bos: dict[str, Tri] = {}
        self.eos: dict[str, Tri] = {}
        self.boolean: set[str] = set()
        self.fresh: set[str] = set()
        self.frozen: set[str] = set()  # read while still 0: must stay 0 (never written later)
        self.positional: dict[str, str] = {}
        self.heads: dict[str, _Head] = {}  # by output dim
        self.presence: dict[str, tuple[str, str]] = {}  # output dim -> (head ident, flag dim)
        self.verified: set[str] = set()
        self.selected: set[tuple[str, str]] = set()  # (layer, head) whose selection lemma applies

    # ---------------------------------------------------------------- embedding
    def embedding(self) -> None:
        net = self.net
        emb = net.embedding
        if not isinstance(emb, TokenEmbedding):
            raise Unsupported("the network has no token embedding")
        if len(emb.prefix) != 1 or len(emb.suffix) != 1:
            raise Unsupported(
                f"the embedding has prefix {emb.prefix} and suffix {emb.suffix}; the correspondence reads one start and one end token"
            )
        if tuple(emb.alphabet) != tuple(self.prog.program.alphabet):
            raise Unsupported(
                f"the network's alphabet {emb.alphabet} is not the program's {self.prog.program.alphabet}"
            )
        table = dict(emb.table)
        start, end = emb.prefix[0], emb.suffix[0]
        if start in emb.alphabet or end in emb.alphabet or start == end:
            raise Unsupported("the start and end tokens must be distinct from the word's symbols")
        written: dict[str, dict[str, Fraction]] = {}
        for tok, row in table.items():
            for d, v in row:
                written.setdefault(d, {})
                if tok in written[d] or v not in (0, 1):
                    raise Unsupported(
                        f"the embedding writes {v} into dim {d!r} for {tok!r}; 0/1 once only"
                    )
                written[d][tok] = v
        for d, feat, coef in emb.positional:
            if d in written or d in self.positional or coef != 1:
                raise Unsupported(
                    f"positional dim {d!r} is not one feature with coefficient 1 alone"
                )
            self.positional[d] = feat
        for d in net.dims:
            if d in self.positional:
                continue
            by_token = written.get(d, {})
            self.word[d] = _or(*(("v", f"tok:{s}") for s in emb.alphabet if by_token.get(s) == 1))
            self.bos[d] = by_token.get(start) == 1
            self.eos[d] = by_token.get(end) == 1
            self.boolean.add(d)
            if not by_token:
                self.fresh.add(d)
        self.start, self.end = start, end

    # ---------------------------------------------------------------- helpers
    def _claim_fresh(self, d: str, where: str) -> None:
        if d not in self.fresh:
            raise Unsupported(
                f"{where} writes dim {d!r}, which holds a value already (written before, or by the embedding)"
            )
        if d in self.frozen:
            raise Unsupported(f"{where} writes dim {d!r}, which an earlier block read as 0")
        self.fresh.discard(d)

    def _freeze(self, dims: Any) -> None:
        """Dims read now: those still 0 must stay 0, so that what was read is what they hold
        (the walk reads copies, ranks and the flag's formula again after the block)."""
        self.frozen.update(d for d in dims if d in self.fresh)

    def _formula(self, expr: Any, memo: dict[Any, F]) -> F:
        return _sympy_formula(expr, lambda d: self.word[d], memo)

    # ---------------------------------------------------------------- blocks
    def ffn_block(self, block: FFN) -> None:
        import sympy

        lemma = self.ffn.get(block.name)
        if lemma is None:
            raise Unsupported(f"FFN {block.name!r} has no proved BooleanBlock lemma")
        self.used.append(lemma.id)
        for d in lemma.boolean:
            if d not in self.boolean:
                raise Unsupported(
                    f"lemma {lemma.id!r} assumes dim {d!r} Boolean, which is not 0/1 at every position"
                )
        written = block.steps[-1].outputs if block.steps else ()  # type: ignore[union-attr]
        memo: dict[Any, F] = {}
        updates: dict[str, tuple[F, Tri, Tri]] = {}
        for d in written:
            expr = sympy.sympify(lemma.outputs[d])
            free = {str(s) for s in expr.free_symbols}
            if not free <= set(lemma.boolean):
                raise Unsupported(
                    f"lemma {lemma.id!r}: the formula of {d!r} reads {sorted(free - set(lemma.boolean))}, not declared Boolean"
                )
            updates[d] = (
                self._formula(expr, memo),
                _tri(expr, self.bos),
                _tri(expr, self.eos),
            )
        self._freeze(lemma.boolean)
        for d, (w, b, e) in updates.items():
            self._claim_fresh(d, f"FFN {block.name!r}")
            self.word[d], self.bos[d], self.eos[d] = w, b, e
            self.boolean.add(d)
            if d in self.prog.op_of:
                self._operation(d)

    def attention_block(self, layer: AttentionLayer) -> None:
        if layer.output is not None:
            raise Unsupported(f"attention layer {layer.name!r} has an output map")
        outs: list[tuple[str, str, Tri, Tri]] = []
        for head in layer.heads:
            ident = f"{layer.name}.{head.name}"
            if head.relative or head.scoring != "dot" or not isinstance(head.normalizer, Hardmax):
                raise Unsupported(f"head {ident} is not a plain hardmax head")
            if head.empty != "zero":
                raise Unsupported(f"head {ident} does not write 0 over an empty mask")
            sources = _copies(head, ident)
            self._freeze((*head.key.inputs, *head.query.inputs, *sources.values()))
            for src in sources.values():
                if src not in self.boolean:
                    raise Unsupported(
                        f"head {ident} copies dim {src!r}, which is not 0/1 everywhere"
                    )
            lemma = self.sel.get((layer.name, head.name))
            if lemma is not None:
                info = self._selection(head, ident, lemma, sources)
                for o, src in sources.items():
                    outs.append((o, f"sel:{ident}:{src}", *self._ends(head.mask, src)))
                    self.heads[o] = info
            elif head.normalizer.tie == "average":
                flag = self._presence(head, ident, sources)
                (o,) = sources
                outs.append((o, f"any:{ident}:{flag}", None, None))
                self.presence[o] = (ident, flag)
            else:
                raise Unsupported(f"head {ident} has no proved selection lemma")
        for o, atom, b, e in outs:
            self._claim_fresh(o, f"attention layer {layer.name!r}")
            self.word[o] = ("v", atom)
            self.bos[o], self.eos[o] = b, e
            self.boolean.add(o)

    def _ends(self, mask: str, src: str) -> tuple[Tri, Tri]:
        """A copied dim at BOS and EOS: 0 where the mask is empty there, else not known."""
        return (False if mask == "strict_causal" else None), (
            False if mask == "strict_anticausal" else None
        )

    def _selection(
        self,
        head: Head,
        ident: str,
        lemma: NearestSelection | RankedSelection,
        sources: dict[str, str],
    ) -> _Head:
        import sympy

        self.used.append(lemma.id)
        self.selected.add((lemma.layer, lemma.head))
        self._freeze(lemma.boolean)  # the ranks are read again when the operation is checked
        if any(w != 0 for row in head.query.weights for w in row):
            raise Unsupported(f"head {ident}'s query reads the position's dims")
        for d in lemma.boolean:
            if d not in self.boolean:
                raise Unsupported(
                    f"lemma {lemma.id!r} assumes dim {d!r} Boolean, which is not 0/1 everywhere"
                )
        for d, feat in lemma.positional.items():
            if self.positional.get(d) != feat:
                raise Unsupported(
                    f"lemma {lemma.id!r} reads dim {d!r} as feature {feat!r}, which the embedding does not write there"
                )
        for d in head.key.inputs:
            if d not in lemma.boolean and d not in lemma.positional:
                raise Unsupported(f"head {ident}'s key reads dim {d!r}, outside lemma {lemma.id!r}")
        if isinstance(lemma, NearestSelection):
            ranks: tuple[Any, ...] = (sympy.sympify(lemma.prefer),)
            end = "last" if nearer_is_later(head.mask) else "first"
        else:
            ranks, end = tuple(sympy.sympify(r) for r in lemma.ranks), lemma.end
        for r in ranks:
            if not {str(s) for s in r.free_symbols} <= set(lemma.boolean):
                raise Unsupported(f"lemma {lemma.id!r} ranks by dims it does not declare Boolean")
        return _Head(ident, head.mask, ranks, end, dict(sources), lemma.id)

    def _presence(self, head: Head, ident: str, sources: dict[str, str]) -> str:
        """An averaging head whose score is c·x + β (c > 0, x a 0/1 dim) and whose value copies
        x: at each position, 1 iff some position of its mask has x = 1 (the maximizers are
        exactly those, each with value 1; else every position, each with 0)."""
        if any(w != 0 for row in head.query.weights for w in row):
            raise Unsupported(f"head {ident}'s query reads the position's dims")
        q = dict(zip(head.query.outputs, head.query.bias, strict=True))
        alpha: dict[str, Fraction] = {}
        for c, row in zip(head.key.outputs, head.key.weights, strict=True):
            for d, w in zip(head.key.inputs, row, strict=True):
                alpha[d] = alpha.get(d, Fraction(0)) + q[c] * w
        alpha = {d: a for d, a in alpha.items() if a != 0}
        if len(alpha) != 1 or len(sources) != 1:
            raise Unsupported(f"head {ident} averages, and is not a presence head over one flag")
        ((flag, coef),) = alpha.items()
        (src,) = sources.values()
        if src != flag or flag not in self.boolean:
            raise Unsupported(f"head {ident} averages, and does not copy the 0/1 flag it scores")
        self.queries.append(_presence_query(ident, coef))
        return flag

    # ---------------------------------------------------------------- one operation
    def _operation(self, d: str) -> None:
        op = self.prog.op_of[d]
        assert isinstance(op, brasp.Attend)
        formula = self.word[d]
        sels = sorted(a for a in atoms(formula) if a.startswith("sel:"))
        idents = {a.split(":")[1] for a in sels}
        if len(idents) != 1:
            raise Unsupported(
                f"the FFN formula of operation {d!r} reads the selections of {len(idents)} heads, not one"
            )
        (ident,) = idents
        info = next(h for h in self.heads.values() if h.ident == ident)
        if _reads_i(op.score):
            raise Unsupported(f"operation {d!r}'s score reads the query position")
        want_mask = {"past": "strict_causal", "future": "strict_anticausal", "all": "none"}[op.mask]
        if info.mask != want_mask:
            raise Unsupported(
                f"head {ident} has mask {info.mask!r}, operation {d!r} needs {want_mask!r}"
            )
        want_end = "first" if op.side == "leftmost" else "last"
        if info.end != want_end:
            raise Unsupported(
                f"head {ident} takes the {info.end} of its best keys, operation {d!r} the {op.side}"
            )
        score = self.prog.pair_formula(op.score, "j")
        value = self.prog.pair_formula(op.value, "j")
        default = _mark(self.prog.vec(op.default), "i@")
        # the head's ranks and copied dims, as formulas of a key position's atoms
        memo: dict[Any, F] = {}
        ranks = [_mark(self._formula(r, memo), "j@") for r in info.ranks]
        ranks_bos = [_tri(r, self.bos) for r in info.ranks]
        ranks_eos = [_tri(r, self.eos) for r in info.ranks]
        copied = {}
        for a in sels:
            src = a.split(":", 2)[2]
            copied[a] = (_mark(self.word[src], "j@"), self.bos[src], self.eos[src])
        for f in (*ranks, *(c[0] for c in copied.values())):
            if any(x.startswith(("j@sel:", "j@any:")) for x in atoms(f)):
                raise Unsupported(f"head {ident}'s keys or values read another head's selection")
        self.queries.append(_selection_query(d, ident, score, ranks, ranks_bos, ranks_eos))
        self.queries.append(
            _value_query(d, ident, _mark(formula, "i@"), score, value, default, copied)
        )
        self.word[d] = ("v", f"op:{d}")
        self.verified.add(d)

    # ---------------------------------------------------------------- the tail
    def tail(self) -> None:
        net = self.net
        ro = net.readout
        if not isinstance(ro, Classifier) or ro.accept != "positive" or ro.position != -1:
            raise Unsupported("the readout is not a classifier at the last token")
        weights = {
            d: w for d, w in zip(ro.logit.inputs, ro.logit.weights[0], strict=True) if w != 0
        }
        if len(ro.logit.outputs) != 1 or len(weights) != 1:
            raise Unsupported("the readout's logit does not read one dim")
        ((z, wz),) = weights.items()
        bias = ro.logit.bias[0]
        if not (bias > 0 and wz + bias <= 0):
            raise Unsupported(f"the readout does not accept exactly when dim {z!r} is 0")
        if z not in self.presence:
            raise Unsupported(f"the readout's dim {z!r} is not written by a presence head")
        ident, flag = self.presence[z]
        mask = next(
            h.mask
            for sub in net.layers
            if isinstance(sub.block, AttentionLayer)
            for h in sub.block.heads
            if f"{sub.block.name}.{h.name}" == ident
        )
        if mask not in ("causal", "none"):
            raise Unsupported(f"presence head {ident}'s mask {mask!r} leaves out the end token")
        flag_lemma = self._writer(flag)
        if self.bos[flag] is not False:
            raise Unsupported(f"the flag {flag!r} may be raised at the start token")
        # the flag at EOS: the lemma's formula with the dims EOS holds; the one copied by a head
        # that selects the nearest earlier position (the last symbol, BOS for ε) is the bit ℓ
        import sympy

        expr = sympy.sympify(flag_lemma.outputs[flag])
        last = [
            str(s)
            for s in expr.free_symbols
            if str(s) in self.heads and self._nearest_earlier(self.heads[str(s)])
        ]
        if len(last) != 1:
            raise Unsupported(f"the flag {flag!r} does not read one copy of the last symbol's bit")
        (ell,) = last
        out = self.heads[ell].sources[ell]
        if out in self.prog.op_of or out not in self.word:
            raise Unsupported(f"dim {out!r} is not the program's output")
        if self.bos[out] is not self.prog.program.empty:
            raise Unsupported(f"dim {out!r} at the start token is not the empty word's membership")
        self.queries.append(_flag_query(flag, self.word[flag], expr, self.eos, ell))
        self.queries.append(
            _output_query(
                out,
                _mark(self.word[out], "i@"),
                _mark(self.prog.vec(self.prog.program.output), "i@"),
            )
        )

    def _writer(self, d: str) -> BooleanBlock:
        for lemma in self.ffn.values():
            if d in lemma.outputs and lemma.id in self.used:
                return lemma
        raise Unsupported(f"dim {d!r} is not written by an FFN with a proved lemma")

    @staticmethod
    def _nearest_earlier(h: _Head) -> bool:
        import sympy

        return (
            h.mask == "strict_causal" and h.end == "last" and all(r == sympy.true for r in h.ranks)
        )

    def run(self) -> None:
        self.embedding()
        for sub in self.net.layers:
            if not sub.residual or sub.post_ln is not None:
                raise Unsupported(f"sublayer {sub.block.name!r} is not a plain residual block")
            if isinstance(sub.block, FFN):
                self.ffn_block(sub.block)
            elif isinstance(sub.block, AttentionLayer):
                self.attention_block(sub.block)
            else:
                raise Unsupported(
                    f"block {sub.block.name!r} is neither an FFN nor an attention layer"
                )
        missing = sorted(set(self.prog.op_of) - self.verified)
        if missing:
            raise Unsupported(f"the dims of operations {missing[:3]} are never written by an FFN")
        self.tail()


def _copies(head: Head, ident: str) -> dict[str, str]:
    """Each value output of the head with the one dim it copies (weight 1, no bias)."""
    out = {}
    for o, row, b in zip(head.value.outputs, head.value.weights, head.value.bias, strict=True):
        nz = [(d, w) for d, w in zip(head.value.inputs, row, strict=True) if w != 0]
        if b != 0 or len(nz) != 1 or nz[0][1] != 1:
            raise Unsupported(f"head {ident}'s value {o!r} does not copy one dim")
        out[o] = nz[0][0]
    return out


def _reads_i(e: brasp.BVec) -> bool:
    if isinstance(e, brasp.AtI):
        return True
    if isinstance(e, brasp.Not):
        return _reads_i(e.arg)
    if isinstance(e, (brasp.And, brasp.Or)):
        return _reads_i(e.left) or _reads_i(e.right)
    return False


# --------------------------------------------------------------------------- the queries


class _Ctx:
    """A z3 context with Bool atoms by name, and the one-hot token constraint per position."""

    def __init__(self) -> None:
        import z3

        self.z3 = z3
        self.ctx = z3.Context()
        self.vars: dict[str, Any] = {}
        self.solver = z3.Solver(ctx=self.ctx)

    def var(self, name: str) -> Any:
        if name not in self.vars:
            self.vars[name] = self.z3.Bool(name, self.ctx)
        return self.vars[name]

    def of(self, f: F, rename: Callable[[str], str] = lambda a: a) -> Any:
        return _z3(self.z3, self.ctx, f, lambda a: self.var(rename(a)), {})

    def one_hot(self, alphabet: Sequence[str], prefixes: Sequence[str]) -> None:
        z3 = self.z3
        for p in prefixes:
            toks = [self.var(f"{p}tok:{s}") for s in alphabet]
            self.solver.add(z3.Or(toks))
            for a in range(len(toks)):
                for b in range(a + 1, len(toks)):
                    self.solver.add(z3.Not(z3.And(toks[a], toks[b])))


def _lex_greater(z3: Any, a: Sequence[Any], b: Sequence[Any]) -> Any:
    return z3.Or(
        [z3.And(*(a[m] == b[m] for m in range(k)), a[k], z3.Not(b[k])) for k in range(len(a))]
    )


def _tri_z3(c: _Ctx, v: Tri, name: str) -> Any:
    return c.var(name) if v is None else c.z3.BoolVal(v, c.ctx)


def _selection_query(
    d: str,
    ident: str,
    score: F,
    ranks: Sequence[F],
    ranks_bos: Sequence[Tri],
    ranks_eos: Sequence[Tri],
) -> _Query:
    def build(alphabet: Sequence[str]) -> Any:
        c = _Ctx()
        z3 = c.z3
        s1 = c.of(score, lambda a: a.replace("j@", "j1@", 1))
        s2 = c.of(score, lambda a: a.replace("j@", "j2@", 1))
        r1 = [c.of(r, lambda a: a.replace("j@", "j1@", 1)) for r in ranks]
        r2 = [c.of(r, lambda a: a.replace("j@", "j2@", 1)) for r in ranks]
        rb = [_tri_z3(c, v, f"bos@rank{k}") for k, v in enumerate(ranks_bos)]
        re_ = [_tri_z3(c, v, f"eos@rank{k}") for k, v in enumerate(ranks_eos)]
        c.one_hot(alphabet, ("j1@", "j2@"))
        bad = z3.Or(
            z3.And(s1, s2, z3.Or([x != y for x, y in zip(r1, r2, strict=True)])),
            z3.And(s1, z3.Not(s2), z3.Not(_lex_greater(z3, r1, r2))),
            z3.And(s1, z3.Not(_lex_greater(z3, r1, rb))),
            z3.And(s1, z3.Not(_lex_greater(z3, r1, re_))),
        )
        c.solver.add(bad)
        return c.solver

    return _Query(
        f"{d}: selection",
        f"head {ident} ranks every key where {d}'s score holds on one rank, above every other key, BOS and EOS",
        build,
    )


def _value_query(
    d: str,
    ident: str,
    formula: F,
    score: F,
    value: F,
    default: F,
    copied: Mapping[str, tuple[F, Tri, Tri]],
) -> _Query:
    def build(alphabet: Sequence[str]) -> Any:
        c = _Ctx()
        z3 = c.z3
        c.one_hot(alphabet, ("i@", "j@"))
        got = c.of(formula)  # its sel atoms are the variables "i@sel:..."
        s = c.of(score)
        cases = []  # the key selected: 0 one where S holds, 1 one without, 2 BOS, 3 EOS, 4 none
        for k in range(5):
            eqs = []
            for a, (at_key, at_bos, at_eos) in copied.items():
                x = c.var(f"i@{a}")
                if k in (0, 1):
                    eqs.append(x == c.of(at_key))
                elif k == 2:
                    eqs.append(x == _tri_z3(c, at_bos, f"bos@{a}"))
                elif k == 3:
                    eqs.append(x == _tri_z3(c, at_eos, f"eos@{a}"))
                else:
                    eqs.append(z3.Not(x))
            guard = s if k == 0 else z3.Not(s) if k == 1 else z3.BoolVal(True, c.ctx)
            want = c.of(value) if k == 0 else c.of(default)
            cases.append(z3.And(guard, *eqs, got != want))
        c.solver.add(z3.Or(cases))
        return c.solver

    return _Query(
        f"{d}: value",
        f"the FFN formula of {d}, with head {ident}'s copies at the key it selects, is the operation: "
        "its value there where its score holds, else its default",
        build,
    )


def _presence_query(ident: str, coef: Fraction) -> _Query:
    def build(alphabet: Sequence[str]) -> Any:
        c = _Ctx()
        z3 = c.z3
        x1, x2 = c.var("flag@a"), c.var("flag@b")
        k = z3.RealVal(str(coef), c.ctx)
        zero = z3.RealVal("0", c.ctx)
        s1, s2 = z3.If(x1, k, zero), z3.If(x2, k, zero)
        c.solver.add(z3.Or(z3.And(x1, z3.Not(x2), s1 <= s2), z3.And(x1 == x2, s1 != s2)))
        return c.solver

    return _Query(
        f"tail: presence {ident}",
        f"head {ident} scores a raised flag strictly above an unraised one, equal flags equally",
        build,
        "QF_LRA",
    )


def _flag_query(flag: str, at_word: F, expr: Any, eos: Mapping[str, Tri], ell: str) -> _Query:
    def build(alphabet: Sequence[str]) -> Any:
        import sympy

        c = _Ctx()
        z3 = c.z3
        c.one_hot(alphabet, ("i@",))
        word = c.of(_mark(at_word, "i@"))
        env: dict[str, Any] = {}
        for s in expr.free_symbols:
            name = str(s)
            env[name] = c.var("last") if name == ell else _tri_z3(c, eos[name], f"eos@{name}")
        at_eos = _sympy_z3(z3, c.ctx, sympy.sympify(expr), env)
        c.solver.add(z3.Or(word, at_eos == c.var("last")))
        return c.solver

    return _Query(
        f"tail: flag {flag}",
        f"dim {flag} is 0 at every word position, and at the end token the negation of the last symbol's output",
        build,
    )


def _output_query(out: str, got: F, want: F) -> _Query:
    def build(alphabet: Sequence[str]) -> Any:
        c = _Ctx()
        c.one_hot(alphabet, ("i@",))
        c.solver.add(c.of(got) != c.of(want))
        return c.solver

    return _Query(
        f"tail: output {out}",
        f"dim {out} holds the program's output at every word position",
        build,
    )


def _sympy_z3(z3: Any, ctx: Any, expr: Any, env: Mapping[str, Any]) -> Any:
    f = _sympy_formula(expr, lambda d: ("v", d), {})
    return _z3(z3, ctx, f, lambda a: env[a], {})


# --------------------------------------------------------------------------- the route


@dataclass(frozen=True, slots=True)
class CorrespondenceOutcome:
    """A proof for every length (``verdict`` Proved, ``tree`` its lemma tree), or why the route
    does not apply (``verdict`` Unknown: the caller falls back)."""

    verdict: Verdict
    tree: LemmaNode | None


def _plan(
    net: Network,
    claim: Recognizes | TraceProperty,
    compiled: CompiledProgram,
    results: Sequence[LemmaResult],
) -> tuple[list[_Query], list[str], int]:
    walk = _Walk(net, compiled, results)
    walk.run()
    if isinstance(claim, TraceProperty) and isinstance(claim.statable, UniqueSelections):
        missing = sorted(set(claim.statable.heads) - walk.selected)
        if missing:
            raise Unsupported(
                f"heads {missing[:3]} have no selection lemma applied at every position"
            )
    return walk.queries, walk.used, len(walk.verified)


def correspondence_detail(claim: Recognizes | TraceProperty, lemmas: int, ops: int, hi: int) -> str:
    """The detail of a proof by the correspondence (the proof log checks it)."""
    what = (
        "the network accepts exactly the program's words"
        if isinstance(claim, Recognizes)
        else "every tie-ruled head's selection lemma holds at every position, whose strict score margins leave "
        "each head one maximizer or none,"
        if isinstance(claim.statable, UniqueSelections)
        else "every operation's dim holds its vector"
    )
    return (
        f"every word with {claim.min_len} <= |w| <= {hi}, and every longer one: {lemmas} lemmas proved for every "
        f"input, then the operation-wise correspondence: by induction over the sublayers, each of the program's "
        f"{ops} attention operations is its head's selection lemma and its FFN's formula (two queries each, "
        f"selection and value), the output, the copy to the end token, the flag and the presence head close the "
        f"tail, so {what} at every length; every query unsat"
    )


def _results(
    net: Network,
    lemmas: Sequence[Lemma],
    timeout: float,
    deadline: float | None = None,
    *,
    once: bool = False,
) -> list[LemmaResult] | None:
    """Each lemma proved within ``timeout`` s, or within what is left before ``deadline``
    (``time.perf_counter()``); None where the deadline passes before every lemma was tried.
    ``once``: a lemma this process already decided is not proved again
    (:func:`~.lemmas.prove_lemma_once`)."""
    import time

    prove = prove_lemma_once if once else prove_lemma
    out = []
    for lemma in lemmas:
        left = timeout if deadline is None else deadline - time.perf_counter()
        if left <= 0:
            return None
        node, ok = prove(net, lemma, timeout=left)
        out.append(LemmaResult(lemma, node, ok))
    return out


def _side(used: Sequence[str]) -> LemmaNode:
    return LemmaNode(
        name="side conditions",
        statement="every lemma was applied only where the dims it assumes Boolean are 0/1 terms and its positional "
        "dims hold their features, at every position of every length (checked by the operation-wise "
        "correspondence's walk over the sublayers, each dim written once); applied in order: "
        + ", ".join(used),
        verdict="proved",
    )


def prove_correspondence(
    net: Network,
    claim: Recognizes | TraceProperty,
    lemmas: Sequence[Lemma],
    hi: int,
    *,
    timeout: float = 60.0,
    results: Sequence[LemmaResult] | None = None,
) -> CorrespondenceOutcome:
    """``claim`` (with a :class:`CompiledProgram` form) for every length by the operation-wise
    correspondence (module docstring), or Unknown saying which premise fails."""
    import time

    compiled = claim.compiled
    if compiled is None:
        return CorrespondenceOutcome(Unknown(METHOD, "the claim names no compiled program"), None)
    started = time.perf_counter()
    deadline = started + timeout  # the whole route within ``timeout``, as the smt method's budget
    if results is None:
        proved = _results(net, lemmas, timeout, deadline, once=True)
        if proved is None:
            return CorrespondenceOutcome(
                Unknown(
                    METHOD, f"ran out of the {timeout:g} s budget while proving the block lemmas"
                ),
                None,
            )
        results = proved
    try:
        plan, used, ops = _plan(net, claim, compiled, results)
    except Unsupported as exc:
        return CorrespondenceOutcome(
            Unknown(METHOD, f"the operation-wise correspondence does not apply: {exc}"), None
        )
    alphabet = tuple(compiled.program.alphabet)
    queries: list[SmtQuery] = []
    for i, q in enumerate(plan):
        left = deadline - time.perf_counter()
        if left <= 0:
            return CorrespondenceOutcome(
                Unknown(
                    METHOD,
                    f"ran out of the {timeout:g} s budget after {i} of the correspondence's "
                    f"{len(plan)} queries",
                ),
                None,
            )
        query, _model = smtlib.solve(
            q.build(alphabet),
            name=f"{claim.id} every n: {QUERY}: {q.name}",
            logic=q.logic,
            timeout=left,
            reason_unsat=q.reason,
        )
        queries.append(query)
        if query.result != "unsat":
            why = "sat: the block is not the operation" if query.result == "sat" else query.reason
            return CorrespondenceOutcome(
                Unknown(
                    METHOD,
                    f"the operation-wise correspondence does not hold: {q.name}: {why}",
                ),
                None,
            )
    words = sum(len(alphabet) ** m for m in range(claim.min_len, hi + 1))
    verdict = Proved(METHOD, words, correspondence_detail(claim, len(results), ops, hi))
    side = _side(used)
    tree = LemmaNode(
        name=claim.id,
        statement=claim.statement + f" (every word with {claim.min_len} <= |w| <= {hi})",
        verdict="proved",
        queries=tuple(queries),
        children=(*(r.node for r in results), side),
    )
    return CorrespondenceOutcome(verdict, tree)


def correspondence_queries(
    net: Network, claim: Recognizes | TraceProperty, lemmas: Sequence[Lemma]
) -> tuple[dict[str, str], tuple[LemmaNode, ...], LemmaNode, int]:
    """The route's queries rebuilt without solving them (name -> SMT-LIB2 text, in order), the
    lemma nodes (the lemmas proved again), the side conditions node and the number of attention
    operations, for a proof log's freshness check; :class:`Unsupported` where the route does not
    apply to this network and claim."""
    compiled = claim.compiled
    if compiled is None:
        raise Unsupported("the claim names no compiled program")
    results = _results(net, lemmas, 60.0)
    assert results is not None  # no deadline
    plan, used, ops = _plan(net, claim, compiled, results)
    alphabet = tuple(compiled.program.alphabet)
    texts = {
        f"{claim.id} every n: {QUERY}: {q.name}": smtlib.to_smt2(q.build(alphabet), logic=q.logic)
        for q in plan
    }
    return texts, tuple(r.node for r in results), _side(used), ops
