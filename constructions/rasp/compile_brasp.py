"""B-RASP compiled to a masked hard-attention transformer with exact weights.

The input is a start token ``BOS`` (position 0, dim ``BOS`` = 1), the word (positions 1..n) and
an end token ``EOS`` (position n + 1, dim ``EOS`` = 1), so that the empty word has a network too
(at ``BOS`` the output is the program's declared membership of the empty word) and the readout
sits at a fixed token. Every vector of the program is a 0/1 residual dim: ``Q_a`` for the
tokens, one dim per attention operation named after it (``prev_a``, or ``P1``, ``P2``... by
:func:`~netproof.verifier.claims.rasp.brasp.names`), and ``output``. Position-wise operations are
gate circuits (``symbolic/gates.py``: NOT, AND, OR as ReLU FFNs, exact on 0/1). An attention
operation P = ◁_j [M, S] V : D of attention depth L becomes:

- in FFN ``L<L>.pre``: for each assignment a of the vectors S reads at i, the query dim
  ``P.q<a>`` = [those vectors at i equal a] (no query dim when S reads nothing at i: the query
  is the constant 1) and the key dim ``P.k<a>`` = S(a, ·) at j; for each assignment b of the
  vectors V reads at i, the value dim ``P.v<b>`` = V(b, ·) at j; the key dims are 0 at ``BOS``
  and ``EOS``;
- a hardmax head with the mask (j < i: ``strict_causal``, j > i: ``strict_anticausal``, all:
  ``none``) and the score Σ_a 2·q_a(i)·k_a(j) ∓ p_j (− 4·BOS_j for a leftmost head whose mask
  lets ``BOS`` in) = 2·S(i, j) ∓ p_j (− for leftmost, + for rightmost; p = i/(n+2) over the
  n + 2 tokens): every word position j with S = 1 scores in (1, 3), every other in (−1, 1),
  ``BOS`` 0 for a rightmost head (below every word position) and −4 for a leftmost one (chosen
  only when the mask holds nothing else, and then found = 0), and among each the position term
  picks the leftmost (rightmost) one, so the head selects exactly one key, never a tie (the tie
  rule, leftmost or rightmost, agrees anyway). It copies ``P.found<a>`` = k_a(j*) and
  ``P.val<b>`` = v_b(j*); an empty mask writes 0;
- in FFN ``L<L>.post``: found = ∨_a q_a ∧ found_a (S(i, j*)), value = ∨_b [b at i] ∧ val_b, and
  P = (found ∧ value) ∨ (¬found ∧ D).

Then FFN ``output`` writes the program's output, head ``last`` (rightmost, j < i, score p_j)
copies at each position the output of the position before it (at ``EOS``: the last symbol's, or
``BOS``'s for the empty word) into ``last``, FFN ``verdict.pre`` raises ``reject`` = EOS ∧ ¬last,
and head ``verdict`` (j ≤ i, score ``reject``, ties averaged) writes into ``rejected`` 1 at ``EOS``
iff ``reject`` is raised there (the only position that can raise it). The readout accepts iff
1/2 − ``rejected`` > 0 at ``EOS``. This shape (a last averaging head whose verdict depends only on
which flags occur) is the one the compositional prover reads as a transition system over
positions, for proofs of every length (:mod:`.brasp_lemmas` declares the block lemmas).

>>> from netproof.verifier.claims.rasp.brasp import Program, token, leftmost, TRUE
>>> a = token("a")
>>> first_a = leftmost("all", score=TRUE, value=a.at_j).named("first_a")
>>> net = compile_brasp(Program("starts_a", ("a", "b"), output=first_a))
>>> [layer.block.name for layer in net.layers]
['L1.pre', 'L1', 'L1.post', 'output', 'last', 'verdict.pre', 'verdict']
>>> from netproof.symbolic.exact import run
>>> [run(net, w).accepted for w in ("", "a", "ba", "ab")]
[False, True, False, True]
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import product

from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Sublayer,
    affine,
    classifier,
    token_embedding,
)
from netproof.symbolic.gadgets import AND, NOT, OR, Node, boolean_ffn, const, var
from netproof.verifier.claims.rasp.brasp import (
    And,
    AtI,
    AtJ,
    Attend,
    BVec,
    Const,
    Not,
    Or,
    Program,
    Token,
    names,
    operations,
)

__all__ = ["HEAD_MASKS", "compile_brasp", "depth", "dim_of", "i_reads"]

HEAD_MASKS = {"past": "strict_causal", "future": "strict_anticausal", "all": "none"}
"""The IR mask of each B-RASP mask."""


def dim_of(symbol: str) -> str:
    """The residual dim holding Q_symbol."""
    return f"Q_{symbol}"


def depth(expr: BVec, memo: dict[BVec, int] | None = None) -> int:
    """The attention depth: the longest chain of attention operations ending at ``expr``."""
    memo = {} if memo is None else memo
    if expr in memo:
        return memo[expr]
    if isinstance(expr, Attend):
        d = 1 + max(depth(e, memo) for e in (expr.score, expr.value, expr.default))
    elif isinstance(expr, Not):
        d = depth(expr.arg, memo)
    elif isinstance(expr, (And, Or)):
        d = max(depth(expr.left, memo), depth(expr.right, memo))
    elif isinstance(expr, (AtI, AtJ)):
        d = depth(expr.vec, memo)
    else:
        d = 0
    memo[expr] = d
    return d


class _Compiler:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.named = names(program)
        self.attends = [op for op in operations(program.output) if isinstance(op, Attend)]
        reserved = {dim_of(s) for s in program.alphabet} | {
            "BOS",
            "EOS",
            "p",
            "output",
            "last",
            "reject",
            "rejected",
        }
        used: set[str] = set()
        for op, name in self.named.items():
            if not isinstance(op, Attend):
                continue
            if name in used:
                raise ValueError(
                    f"program {program.name!r}: operation name {name!r} is used twice; give each attention "
                    "operation its own name with .named(...)"
                )
            if name in reserved or "." in name:
                raise ValueError(
                    f"program {program.name!r}: operation name {name!r} clashes with the compiler's dims "
                    f"({', '.join(sorted(reserved))}) or contains '.'; rename it with .named(...)"
                )
            used.add(name)

    def circuit(self, expr: BVec) -> Node:
        """The gate circuit of a position-wise expression over the dims computed so far."""
        if isinstance(expr, Token):
            return var(dim_of(expr.symbol))
        if isinstance(expr, Const):
            return const(1 if expr.value else 0)
        if isinstance(expr, Attend):
            return var(self.named[expr])
        if isinstance(expr, Not):
            return NOT(self.circuit(expr.arg))
        if isinstance(expr, And):
            return AND(self.circuit(expr.left), self.circuit(expr.right))
        if isinstance(expr, Or):
            return OR(self.circuit(expr.left), self.circuit(expr.right))
        raise ValueError(f"{expr!r} reads a position outside an attention operation")

    def substituted(self, expr: BVec, at_i: dict[BVec, bool]) -> Node:
        """The circuit, at key position j, of a pair expression whose i-reads are fixed."""
        if isinstance(expr, AtI):
            return const(1 if at_i[expr.vec] else 0)
        if isinstance(expr, AtJ):
            return self.circuit(expr.vec)
        if isinstance(expr, Const):
            return const(1 if expr.value else 0)
        if isinstance(expr, Not):
            return NOT(self.substituted(expr.arg, at_i))
        if isinstance(expr, And):
            return AND(self.substituted(expr.left, at_i), self.substituted(expr.right, at_i))
        if isinstance(expr, Or):
            return OR(self.substituted(expr.left, at_i), self.substituted(expr.right, at_i))
        raise ValueError(f"{expr!r} must be read at i or j inside an attention operation")

    def minterm(self, vecs: Sequence[BVec], bits: Sequence[bool]) -> Node:
        return AND(
            *(
                self.circuit(v) if b else NOT(self.circuit(v))
                for v, b in zip(vecs, bits, strict=True)
            )
        )

    def build(self) -> Network:
        prog = self.program
        dims: list[str] = [dim_of(s) for s in prog.alphabet] + ["BOS", "EOS", "p"]
        not_bos = NOT(var("BOS"))
        not_end = NOT(var("EOS"))
        layers: list[Sublayer] = []
        memo: dict[BVec, int] = {}
        top = max((depth(op, memo) for op in self.attends), default=0)
        for level in range(1, top + 1):
            ops = [op for op in self.attends if depth(op, memo) == level]
            pre: dict[str, Node] = {}
            post: dict[str, Node] = {}
            heads: list[Head] = []
            for op in ops:
                name = self.named[op]
                s_vars = i_reads(op.score)
                v_vars = i_reads(op.value)
                s_bits = list(product((False, True), repeat=len(s_vars)))
                v_bits = list(product((False, True), repeat=len(v_vars)))
                for a, bits in enumerate(s_bits):
                    if s_vars:
                        pre[f"{name}.q{a}"] = self.minterm(s_vars, bits)
                    pre[f"{name}.k{a}"] = AND(
                        not_bos,
                        not_end,
                        self.substituted(op.score, dict(zip(s_vars, bits, strict=True))),
                    )
                for b, bits in enumerate(v_bits):
                    pre[f"{name}.v{b}"] = self.substituted(
                        op.value, dict(zip(v_vars, bits, strict=True))
                    )
                sign = -1 if op.side == "leftmost" else 1
                # BOS (p = 0, k = 0) must lose to every word position only where −p_j would
                # prefer it: a leftmost head whose mask lets it in
                bos = {"BOS": -4} if op.side == "leftmost" and op.mask != "future" else {}
                if len(s_bits) == 1:  # S reads nothing at i: the query is the constant 1
                    query = affine({"s0": {}, "pos": {}}, bias={"s0": 1, "pos": 1})
                else:
                    query = affine(
                        {f"s{a}": {f"{name}.q{a}": 1} for a in range(len(s_bits))}, bias={"pos": 1}
                    )
                values = {f"{name}.found{a}": {f"{name}.k{a}": 1} for a in range(len(s_bits))}
                values |= {f"{name}.val{b}": {f"{name}.v{b}": 1} for b in range(len(v_bits))}
                heads.append(
                    Head(
                        name=name,
                        query=query,
                        key=affine(
                            {f"s{a}": {f"{name}.k{a}": 2} for a in range(len(s_bits))}
                            | {"pos": {"p": sign} | bos},
                        ),
                        value=affine(values),
                        normalizer=Hardmax(tie=op.side),
                        mask=HEAD_MASKS[op.mask],  # type: ignore[arg-type]
                    )
                )
                found = OR(
                    *(
                        AND(var(f"{name}.q{a}"), var(f"{name}.found{a}"))
                        if s_vars
                        else var(f"{name}.found{a}")
                        for a in range(len(s_bits))
                    )
                )
                value = OR(
                    *(
                        AND(self.minterm(v_vars, bits), var(f"{name}.val{b}"))
                        for b, bits in enumerate(v_bits)
                    )
                )
                post[name] = OR(AND(found, value), AND(NOT(found), self.circuit(op.default)))
                dims += [d for d in pre if d.startswith(f"{name}.")] + list(values)
            dims += [self.named[op] for op in ops]
            layers.append(Sublayer(block=boolean_ffn(f"L{level}.pre", pre), residual=True))
            layers.append(
                Sublayer(block=AttentionLayer(name=f"L{level}", heads=tuple(heads)), residual=True)
            )
            layers.append(Sublayer(block=boolean_ffn(f"L{level}.post", post), residual=True))
        out = AND(not_bos, self.circuit(prog.output))
        if prog.empty:
            out = OR(var("BOS"), out)
        layers.append(Sublayer(block=boolean_ffn("output", {"output": out}), residual=True))
        # EOS reads the output at the nearest earlier position: the last symbol's (BOS's for ε)
        last = Head(
            name="last",
            query=affine({"pos": {}}, bias={"pos": 1}),
            key=affine({"pos": {"p": 1}}),
            value=affine({"last": {"output": 1}}),
            normalizer=Hardmax(tie="rightmost"),
            mask="strict_causal",
        )
        layers.append(Sublayer(block=AttentionLayer(name="last", heads=(last,)), residual=True))
        # The verdict: a flag only EOS can raise (its last symbol's output is 0), and a head over
        # every position that prefers a raised flag, ties averaged: it reads 1 iff the flag is
        # raised, whatever the length (the presence readout of the every-length prover).
        layers.append(
            Sublayer(
                block=boolean_ffn("verdict.pre", {"reject": AND(var("EOS"), NOT(var("last")))}),
                residual=True,
            )
        )
        verdict = Head(
            name="verdict",
            query=affine({"s": {}}, bias={"s": 1}),
            key=affine({"s": {"reject": 1}}),
            value=affine({"rejected": {"reject": 1}}),
            normalizer=Hardmax(tie="average"),
            mask="causal",
        )
        layers.append(
            Sublayer(block=AttentionLayer(name="verdict", heads=(verdict,)), residual=True)
        )
        dims += ["output", "last", "reject", "rejected"]
        return Network(
            name=f"brasp.{prog.name}",
            dims=tuple(dims),
            embedding=token_embedding(
                prog.alphabet,
                {s: {dim_of(s): 1} for s in prog.alphabet} | {"BOS": {"BOS": 1}, "EOS": {"EOS": 1}},
                positional={"p": "i/n"},
                prefix=("BOS",),
                suffix=("EOS",),
            ),
            layers=tuple(layers),
            readout=classifier({"rejected": -1}, position=-1, bias=Fraction(1, 2)),
            reference="Yang, Chiang & Angluin 2024 (B-RASP); compiled by netproof.constructions.rasp",
        )


def i_reads(expr: BVec) -> list[BVec]:
    """The distinct vectors a pair expression reads at the query position i, in order: the
    pair expression's own ``at_i`` leaves, never those inside the vectors it reads (an attention
    operation read at j has i-reads of its own, computed in its own layer)."""
    out: list[BVec] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, AtI):
            if e.vec not in out:
                out.append(e.vec)
        elif isinstance(e, Not):
            stack.append(e.arg)
        elif isinstance(e, (And, Or)):
            stack += [e.right, e.left]
    return out


_COMPILED: dict[Program, Network] = {}
"""The last few programs compiled in this process (a program is compared by content; the
network is immutable): synthesis sizes the network, its construction then builds it again."""


def compile_brasp(program: Program) -> Network:
    """The exact masked hard-attention transformer of ``program`` (see the module docstring)."""
    if not isinstance(program, Program):
        raise TypeError(
            f"compile_brasp needs a brasp.Program, got {type(program).__name__}; wrap the output vector in Program(name, alphabet, output)"
        )
    got = _COMPILED.get(program)
    if got is None:
        got = _Compiler(program).build()
        if len(_COMPILED) >= 8:
            del _COMPILED[next(iter(_COMPILED))]
        _COMPILED[program] = got
    return got
