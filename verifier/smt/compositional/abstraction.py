"""The abstracted network: a network on a symbolic word with its proved lemmas in place of
their blocks (:class:`Abstraction`), over words of one length or, in one query, of a range of
lengths (padded slots and a symbolic length), and the readout lemma behind its presence readout
(after an averaging head, the sign of the logit depends only on which value patterns occur).

A proved BooleanBlock becomes its Boolean formulas, a proved NearestSelection a prefix scan
("the value at the nearest preferred position so far"), a proved RankedSelection a scan that
keeps the best ranked position (:mod:`.ranked`), a proved ScaledBlock its expressions
over a unit; every other block is encoded faithfully (affine maps, ReLU case splits, hardmax as
a maximum with a symbolic selection). A lemma replaces a block only where its side conditions
hold in the state the block reads (the dims it assumes Boolean are 0/1, its positional dims hold
their features, no position is scaled); elsewhere the block is encoded faithfully, and the
lemma's :class:`~.lemmas.LemmaResult` records where.

May import: :mod:`netproof.symbolic`, the claims vocabulary, the solver interface,
:mod:`netproof.verifier.smt.errors`, :mod:`.arithmetic`, :mod:`.lemmas` and :mod:`.ranked`; z3
inside functions (or handed in as an argument).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, assert_never

from netproof.symbolic import (
    FFN,
    Affine,
    AttentionLayer,
    Classifier,
    Convolution,
    Hardmax,
    Head,
    Network,
    NextSymbols,
    Softmax,
    Sublayer,
    TokenEmbedding,
)
from netproof.symbolic.positional import feature
from netproof.verifier import smtlib
from netproof.verifier.claims import (
    BooleanBlock,
    Language,
    NearestSelection,
    RankedSelection,
    ScaledBlock,
    Word,
)
from netproof.verifier.smt.errors import Unsupported
from netproof.verifier.smt.stack import stack_member
from netproof.verifier.smtlib import LemmaNode, SmtQuery

from .arithmetic import (
    COUNT_AT_LEAST,
    LENGTH_FREE_FEATURES,
    Pos,
    Values,
    affine_map,
    certainly_equal,
    commutative,
    ffn_faithful,
    sympy_to_z3,
)
from .lemmas import LemmaResult, nearer_is_later
from .ranked import abstraction_scan

State = tuple[dict[str, Any], Any]  # (dim -> value, scale or None)


class Abstraction:
    """The network on a symbolic word of length m, with proved lemmas in place of their blocks.
    Positions are computed on demand (the readout reads one position; an attention layer reads
    every position of the layer below)."""

    def __init__(
        self,
        z3: Any,
        ctx: Any,
        net: Network,
        m: int,
        lemmas: Sequence[LemmaResult],
        readout_lemmas: dict[Any, Any] | None = None,
        readout_nodes: list[LemmaNode] | None = None,
        lo: int | None = None,
    ) -> None:
        """Words of length exactly ``m``, or, with ``lo < m``, of every length ``lo..m`` in one
        query: ``m`` word slots, slot t present iff t < the word's length (Bool ``len>t``, each
        implying the one before), absent slots skipped by every lemma's scan, the automaton and
        the readout; positional values that depend on the length are :class:`Pos`."""
        if not isinstance(net.embedding, TokenEmbedding):
            raise Unsupported(
                "compositional proofs need a token embedding (a flat embedding has no positions)"
            )
        self.z3, self.ctx, self.net, self.m = z3, ctx, net, m
        self.lo = m if lo is None else lo
        self.ranged = self.lo < m
        self.vals = Values(z3, ctx)
        emb = net.embedding
        self.alphabet = emb.alphabet
        self.tokens: list[str | None] = [*emb.prefix, *([None] * m), *emb.suffix]
        self.N = len(self.tokens)
        self.first_slot = len(emb.prefix)
        self.nbits = max(1, (len(self.alphabet) - 1).bit_length())
        self.bits = [[z3.Bool(f"w{t}.{b}", ctx) for b in range(self.nbits)] for t in range(m)]
        self._symbols: dict[tuple[int, int], Any] = {}
        # present[t] for slot t: True below lo, else a Bool "the word is longer than t".
        self.present: list[Any] = [
            True if t < self.lo else z3.Bool(f"len>{t}", ctx) for t in range(m)
        ]
        for t in range(self.lo, m):
            if t > self.lo:
                self.vals.assertions.append(z3.Implies(self.present[t], self.present[t - 1]))
            # An absent slot holds symbol 0 (so that each length has one model per word).
            self.vals.assertions.append(
                z3.Or(self.present[t], *(self.vals.not_(bit) for bit in self.bits[t]))
            )
        for t in range(m):
            if len(self.alphabet) < 2**self.nbits:
                self.vals.assertions.append(
                    z3.Or([self.is_symbol(t, a) for a in range(len(self.alphabet))])
                )
        self.ffn_lemmas = {
            r.lemma.block: r
            for r in lemmas
            if isinstance(r.lemma, BooleanBlock | ScaledBlock) and r.proved
        }
        self.head_lemmas = {
            (r.lemma.layer, r.lemma.head): r
            for r in lemmas
            if isinstance(r.lemma, NearestSelection | RankedSelection) and r.proved
        }
        self._states: dict[tuple[int, int], State] = {}
        # per (sublayer, head): the selected value at each position, or None (no scan: fallback)
        self._scans: dict[tuple[int, str], Sequence[dict[str, Any] | None] | None] = {}
        self._same_query: dict[Any, tuple[dict[str, Any], Any]] = {}
        self.readout_lemmas: dict[Any, PresenceSigns | bool] = (
            readout_lemmas if readout_lemmas is not None else {}
        )
        self.readout_nodes: list[LemmaNode] = readout_nodes if readout_nodes is not None else []

    # -------------------------------------------------------------- word and embedding

    def is_symbol(self, t: int, a: int) -> Any:
        got = self._symbols.get((t, a))
        if got is None:
            lits = [
                bit if (a >> b) & 1 else self.vals.not_(bit) for b, bit in enumerate(self.bits[t])
            ]
            got = self._symbols[(t, a)] = self.vals.and_(lits)
        return got

    def present_at(self, pos: int) -> Any:
        """Whether token position ``pos`` is part of the word's sequence: True, or a Bool term."""
        j = pos - self.first_slot
        return self.present[j] if 0 <= j < self.m else True

    def length_of(self, model: Any) -> int:
        return sum(
            1
            for p in self.present
            if p is True or self.z3.is_true(model.eval(p, model_completion=True))
        )

    def feature_at(self, feat: str, pos: int) -> Fraction | Pos:
        """Positional feature ``feat`` at token position ``pos``: a Fraction where it does not
        depend on the symbolic length, else a :class:`Pos`."""
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        suffix = pos >= self.first_slot + self.m
        if not self.ranged or feat == "1" or (feat in LENGTH_FREE_FEATURES and not suffix):
            return feature(feat)(pos + emb.index_base, self.N)
        return Pos(((feat, Fraction(1)),), Fraction(0), pos)

    def word_of(self, model: Any) -> Word:
        out = []
        for t in range(self.length_of(model) if self.ranged else self.m):
            code = sum(
                1 << b
                for b, bit in enumerate(self.bits[t])
                if self.z3.is_true(model.eval(bit, model_completion=True))
            )
            out.append(self.alphabet[code])
        return tuple(out)

    def embed(self, t: int) -> State:
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        table = {tok: dict(row) for tok, row in emb.table}
        tok = self.tokens[t]
        x: dict[str, Any] = {}
        for d in self.net.dims:
            if tok is not None:
                x[d] = table[tok].get(d, Fraction(0))
                continue
            col = [table[a].get(d, Fraction(0)) for a in self.alphabet]
            if len(set(col)) == 1:
                x[d] = col[0]
            elif set(col) <= {Fraction(0), Fraction(1)}:
                j = t - self.first_slot
                ones = [self.is_symbol(j, a) for a, v in enumerate(col) if v == 1]
                x[d] = ones[0] if len(ones) == 1 else self.z3.Or(ones)
            else:
                j = t - self.first_slot
                x[d] = self.vals.lin(
                    [(v, self.is_symbol(j, a)) for a, v in enumerate(col)], Fraction(0)
                )
        for d, feat, coef in emb.positional:
            f = self.feature_at(feat, t)
            if isinstance(f, Fraction):
                if isinstance(x[d], Pos):
                    x[d] = Pos(x[d].terms, x[d].base + coef * f, t)
                else:
                    x[d] = self.vals.lin([(Fraction(1), x[d])], coef * f)
            elif isinstance(x[d], Fraction):
                x[d] = Pos(tuple((name, coef * c) for name, c in f.terms), x[d], t)
            elif isinstance(x[d], Pos):
                x[d] = Pos((*x[d].terms, *((name, coef * c) for name, c in f.terms)), x[d].base, t)
            else:
                raise Unsupported(
                    f"dim {d!r} adds a length-dependent feature {feat} to a word-dependent value"
                )
        return x, None

    # -------------------------------------------------------------- layers

    def state(self, layer: int, t: int) -> State:
        """The residual state at token t after ``layer`` sublayers."""
        key = (layer, t)
        got = self._states.get(key)
        if got is None:
            got = self.embed(t) if layer == 0 else self.sublayer(layer - 1, t)
            self._states[key] = got
        return got

    def sublayer(self, idx: int, t: int) -> State:
        sub: Sublayer = self.net.layers[idx]
        if sub.post_ln is not None:
            raise Unsupported(f"post-residual layer norm after {sub.name!r}")
        x, scale = self.state(idx, t)
        block = sub.block
        match block:
            case FFN():
                out = self.ffn(block, x, scale)
            case AttentionLayer():
                out, new_scale = self.attention(idx, block, t)
                if new_scale is not None:
                    if scale is not None:
                        raise Unsupported(f"two averaging layers scale position {t}")
                    x = {d: self.vals.times(v, new_scale) for d, v in x.items()}
                    scale = new_scale
            case Convolution():
                raise Unsupported(f"convolution block {block.name!r} (Chang et al.) is not encoded")
            case _:
                assert_never(block)
        if sub.residual:
            y = dict(x)
            for d, v in out.items():
                y[d] = self.vals.named(
                    self.vals.lin([(Fraction(1), x[d]), (Fraction(1), v)], Fraction(0)),
                    f"{d}@{sub.name}.{t}",
                )
        else:
            y = {
                d: self.vals.named(out.get(d, Fraction(0)), f"{d}@{sub.name}.{t}")
                for d in self.net.dims
            }
        return y, scale

    def ffn(self, block: FFN, x: Mapping[str, Any], scale: Any) -> dict[str, Any]:
        r = self.ffn_lemmas.get(block.name)
        if r is not None and isinstance(r.lemma, ScaledBlock):
            got = self.scaled_lemma(r, x, scale)
            if got is not None:
                return got
        elif r is not None:
            lemma = r.lemma
            assert isinstance(lemma, BooleanBlock)
            env: dict[str, Any] = dict(x)
            ok = scale is None
            for d in lemma.boolean:
                bv = self.vals.boolish(x.get(d, Fraction(0)))
                if bv is None:
                    ok = False
                    break
                env[d] = bv
            if ok:
                r.uses += 1
                return {d: self.vals.formula(e, env) for d, e in lemma.outputs.items()}
            r.fallbacks.append(f"a dim it assumes Boolean is not 0/1 at length {self.m}")
        return ffn_faithful(self.vals, block, x, scale)

    def scaled_lemma(
        self, r: LemmaResult, x: Mapping[str, Any], scale: Any
    ) -> dict[str, Any] | None:
        """A proved ScaledBlock in place of its FFN, where its side conditions hold: the unit dim
        is a concrete 1/u and every input dim is an integer (a concrete one, or an Int count)
        over u."""
        lemma = r.lemma
        assert isinstance(lemma, ScaledBlock)
        z3 = self.z3
        unit = x.get(lemma.unit, Fraction(0))
        if scale is not None or not isinstance(unit, Fraction) or unit <= 0 or unit.numerator != 1:
            r.fallbacks.append(
                f"the unit dim {lemma.unit!r} is not a concrete 1/u (length {self.m})"
            )
            return None
        u = unit.denominator
        env: dict[str, Any] = {}
        for d, v in lemma.inputs.items():
            value = x.get(d, Fraction(0))
            if isinstance(value, Fraction):
                if (value * u).denominator != 1:
                    r.fallbacks.append(
                        f"dim {d!r} is not an integer over the unit (length {self.m})"
                    )
                    return None
                self.vals.arithmetic = True
                env[str(v)] = z3.IntVal(int(value * u), self.ctx)
                continue
            term = z3.simplify(
                self.vals.arith(self.vals.defined(value)) * self.vals.num(Fraction(u))
            )
            if z3.is_to_real(term) and z3.is_int(term.arg(0)):
                env[str(v)] = term.arg(0)
            elif z3.is_int(term):
                env[str(v)] = term
            else:
                r.fallbacks.append(
                    f"dim {d!r} is not an integer term over the unit (length {self.m})"
                )
                return None
        r.uses += 1
        return {
            d: self.vals.lin([(unit, self.vals.formula(e, env))], Fraction(0))
            for d, e in lemma.outputs.items()
        }

    def attention(self, idx: int, layer: AttentionLayer, t: int) -> tuple[dict[str, Any], Any]:
        outs: dict[str, Any] = {}
        scale = None
        for h in layer.heads:
            got, s = self.head(idx, layer, h, t)
            if s is not None:
                if scale is not None or len(layer.heads) > 1:
                    raise Unsupported(
                        f"an averaging head {h.name!r} beside other heads in {layer.name!r}"
                    )
                scale = s
            outs.update(got)
        if layer.output is not None:
            outs = affine_map(self.vals, layer.output, outs, scale)
        return outs, scale

    def candidates(self, h: Head, t: int) -> list[int]:
        match h.mask:
            case "none":
                return list(range(self.N))
            case "causal":
                return list(range(t + 1))
            case "strict_causal":
                return list(range(t))
            case "anticausal":
                return list(range(t, self.N))
            case "strict_anticausal":
                return list(range(t + 1, self.N))
        raise Unsupported(f"mask {h.mask!r}")

    def head(self, idx: int, layer: AttentionLayer, h: Head, t: int) -> tuple[dict[str, Any], Any]:
        if h.relative:
            raise Unsupported(
                f"head {h.name!r} uses relative positions, which compositional proofs do not cover"
            )
        cands = self.candidates(h, t)
        zero = {o: Fraction(0) for o in h.value.outputs}
        if not cands:
            if h.empty == "zero":
                return zero, None
            raise Unsupported(f"head {h.name!r} with empty='error' over an empty masked set")
        r = self.head_lemmas.get((layer.name, h.name))
        if r is not None and isinstance(r.lemma, RankedSelection):
            key = (idx, h.name)
            if key not in self._scans:
                self._scans[key] = abstraction_scan(self, idx, h, r)
            ranked = self._scans[key]
            if ranked is not None:
                got = ranked[t]
                assert got is not None
                return got, None
        elif r is not None:
            scan = self.scan(idx, layer, h, r)
            if scan is not None:
                got = scan[t]
                assert got is not None
                return got, None
        return self.head_faithful(idx, h, t, cands)

    def scan(
        self, idx: int, layer: AttentionLayer, h: Head, r: LemmaResult
    ) -> Sequence[dict[str, Any] | None] | None:
        """The proved NearestSelection as a prefix scan over the positions: the selected value
        at each query position. None (with a recorded fallback) where a side condition fails."""
        key = (idx, h.name)
        if key in self._scans:
            return self._scans[key]
        lemma = r.lemma
        assert isinstance(lemma, NearestSelection)
        emb = self.net.embedding
        assert isinstance(emb, TokenEmbedding)
        states = [self.state(idx, j) for j in range(self.N)]
        for j, (x, scale) in enumerate(states):
            problem = None
            if scale is not None:
                problem = f"position {j} is scaled"
            for d in lemma.boolean:
                if self.vals.boolish(x.get(d, Fraction(0))) is None:
                    problem = f"dim {d!r} is not 0/1 at position {j}"
            for d, feat in lemma.positional.items():
                if not certainly_equal(x.get(d), self.feature_at(feat, j)):
                    problem = f"dim {d!r} does not hold {feat} at position {j}"
            if problem is not None:
                r.fallbacks.append(f"{problem} (length {self.m})")
                self._scans[key] = None
                return None
        z3 = self.z3
        prefer = [
            self.vals.boolish(
                sympy_to_z3(
                    self.vals,
                    lemma.prefer,
                    {d: self.vals.boolish(x.get(d, Fraction(0))) for d in lemma.boolean},
                )
            )
            for x, _ in states
        ]
        present = [self.present_at(j) for j in range(self.N)]
        prefer = [
            p if present[j] is True or z3.is_false(p) else self.vals.and_([present[j], p])
            for j, p in enumerate(prefer)
        ]
        values = [affine_map(self.vals, h.value, x) for x, _ in states]
        later = nearer_is_later(h.mask)
        strict = h.mask.startswith("strict")
        order = range(self.N) if later else range(self.N - 1, -1, -1)
        if present[order[0]] is not True:
            raise Unsupported(
                f"head {h.name!r}: the scan starts at a slot that may be absent (no prefix/suffix token there)"
            )
        out: list[dict[str, Any] | None] = [None] * self.N
        found: Any = z3.BoolVal(False, self.ctx)
        best: dict[str, Any] = {o: Fraction(0) for o in h.value.outputs}
        near: dict[str, Any] | None = None  # the value at the nearest present position passed
        for t in order:
            if not strict:
                found, best = self._scan_add(found, best, prefer[t], values[t])
                out[t] = {o: self.vals.ite(found, best[o], values[t][o]) for o in best}
            elif near is None:
                out[t] = {o: Fraction(0) for o in best}  # empty masked set: only with empty="zero"
            else:
                out[t] = {o: self.vals.ite(found, best[o], near[o]) for o in best}
            if strict:
                found, best = self._scan_add(found, best, prefer[t], values[t])
            if present[t] is True or near is None:
                near = values[t]
            else:
                near = {
                    o: self.vals.named(
                        self.vals.ite(present[t], values[t][o], near[o]), f"near.{o}"
                    )
                    for o in best
                }
        r.uses += 1
        self._scans[key] = out
        return out

    def _scan_add(
        self, found: Any, best: dict[str, Any], p: Any, v: dict[str, Any]
    ) -> tuple[Any, dict[str, Any]]:
        z3 = self.z3
        new_best = {o: self.vals.named(self.vals.ite(p, v[o], best[o]), f"scan.{o}") for o in best}
        found = p if z3.is_false(found) else self.vals.or_([p, found])
        return self.vals.named(found, "scan.found"), new_best

    def head_faithful(
        self, idx: int, h: Head, t: int, cands: list[int]
    ) -> tuple[dict[str, Any], Any]:
        vals = self.vals
        if self.ranged and any(self.present_at(j) is not True for j in cands):
            raise Unsupported(
                f"head {h.name!r} without a lemma attends over slots that may be absent (a query over several lengths)"
            )
        xq, sq = self.state(idx, t)
        if sq is not None:
            raise Unsupported(f"head {h.name!r} queries a scaled position")
        q = affine_map(vals, h.query, xq)
        if h.mask == "none" and all(isinstance(v, Fraction) for v in q.values()):
            # The same query over the same positions: the same output at every position.
            memo = (idx, h.name, tuple(q.items()))
            got = self._same_query.get(memo)
            if got is None:
                got = self._same_query[memo] = self._head_over(idx, h, t, cands, q)
            return got
        return self._head_over(idx, h, t, cands, q)

    def _head_over(
        self, idx: int, h: Head, t: int, cands: list[int], q: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Any]:
        vals, z3 = self.vals, self.z3
        scores: list[Any] = []
        values: list[dict[str, Any]] = []
        for j in cands:
            xk, sk = self.state(idx, j)
            if sk is not None:
                raise Unsupported(f"head {h.name!r} reads a scaled position")
            k = affine_map(vals, h.key, xk)
            terms = []
            for c in h.query.outputs:
                qa, ka = q[c], k[c]
                if isinstance(qa, Fraction):
                    terms.append((qa, ka))
                elif isinstance(ka, Fraction):
                    terms.append((ka, qa))
                else:
                    raise Unsupported(
                        f"head {h.name!r}: a score multiplies two word-dependent values"
                    )
            s = vals.lin(terms, Fraction(0))
            if h.scoring == "neg_abs_dot":
                s = (
                    -abs(s)
                    if isinstance(s, Fraction)
                    else -z3.If(vals.arith(s) >= 0, vals.arith(s), -vals.arith(s))
                )
            scores.append(s)
            values.append(affine_map(vals, h.value, xk))
        outputs = h.value.outputs
        if all(isinstance(s, Fraction) for s in scores):
            weights = self._concrete_weights(h, scores)
            return {
                o: vals.lin([(w, v[o]) for w, v in zip(weights, values, strict=True)], Fraction(0))
                for o in outputs
            }, None
        if not isinstance(h.normalizer, Hardmax):
            raise Unsupported(f"softmax head {h.name!r} with word-dependent scores")
        top = vals.fresh_real(f"max.{h.name}.{t}")
        sa = [vals.arith(s) for s in scores]
        vals.assertions.extend(top >= s for s in sa)
        vals.assertions.append(z3.Or([top == s for s in sa]))
        sel = [s >= top for s in sa]
        if h.normalizer.tie in ("leftmost", "rightmost"):
            order = list(range(len(cands)))
            if h.normalizer.tie == "rightmost":
                order.reverse()
            out = dict(values[order[-1]])
            for j in reversed(order[:-1]):
                out = {o: vals.ite(sel[j], values[j][o], out[o]) for o in outputs}
            return out, None
        count = z3.Sum([z3.If(s, vals.num(Fraction(1)), vals.num(Fraction(0))) for s in sel])
        zero_r = vals.num(Fraction(0))
        summed: dict[str, Any] = {}
        for o in outputs:
            parts = [
                z3.If(s, vals.arith(v[o]), zero_r)
                for s, v in zip(sel, values, strict=True)
                if not (isinstance(v[o], Fraction) and v[o] == 0)
            ]
            summed[o] = z3.Sum(parts) if parts else Fraction(0)
        return summed, count

    def _concrete_weights(self, h: Head, scores: list[Any]) -> list[Fraction]:
        if isinstance(h.normalizer, Hardmax):
            top = max(scores)
            best = [i for i, s in enumerate(scores) if s == top]
            if h.normalizer.tie == "leftmost":
                best = best[:1]
            elif h.normalizer.tie == "rightmost":
                best = best[-1:]
            return [
                Fraction(1, len(best)) if i in best else Fraction(0) for i in range(len(scores))
            ]
        sm: Softmax = h.normalizer
        if sm.r is None:
            raise Unsupported(f"softmax head {h.name!r} with base e^c (transcendental)")
        sc = h.scale
        if sc.log_n or sc.sqrt_d is not None:
            raise Unsupported(f"softmax head {h.name!r} with a ln n or 1/√d scale")
        mult = sc.coef * (self.N if sc.times_n else 1)
        exps = [s * mult for s in scores]
        if any(e.denominator != 1 for e in exps):
            raise Unsupported(
                f"softmax head {h.name!r}: a scaled score is not an integer (irrational weight)"
            )
        low = min(exps)
        raw = [sm.r ** int(e - low) for e in exps]
        z = sum(raw, Fraction(0))
        return [w / z for w in raw]

    # -------------------------------------------------------------- readout and language

    def accept(self) -> Any:
        r = self.net.readout
        match r:
            case Classifier():
                t = r.position if r.position >= 0 else self.N + r.position
                if not 0 <= t < self.N:
                    # The exact interpreter has no verdict here either (a WordError).
                    shown = "the empty word" if self.m == 0 else f"a word of length {self.m}"
                    raise Unsupported(
                        f"readout position {r.position} is outside the {self.N} tokens of {shown}: the network gives "
                        f"no verdict on it; declare the claim with min_len >= {self.m + 1} or give the network a prefix or suffix token"
                    )
                if self.present_at(t) is not True:
                    raise Unsupported(
                        f"the readout position {r.position} is a slot that may be absent (a query over several lengths)"
                    )
                got = self.presence_accept(r, t)
                if got is not None:
                    return got
                x, scale = self.state(len(self.net.layers), t)
                logit = affine_map(self.vals, r.logit, x, scale)[r.logit.outputs[0]]
                if isinstance(logit, Fraction):
                    return self.z3.BoolVal(logit > 0, self.ctx)
                return self.vals.arith(logit) > self.vals.num(Fraction(0))
            case NextSymbols():
                raise Unsupported("next-symbol readouts (generators)")
            case _:
                assert_never(r)

    def presence_accept(self, r: Classifier, t_r: int) -> Any | None:
        """The accept bit as a Boolean formula when the last attention layer is one averaging
        hardmax head over Boolean key and value dims followed by position-wise blocks: the
        head's output is a convex combination (all weights > 0) of the value patterns present in
        the top score class, and a readout lemma (proved here, over all such weights, with z3)
        says that the logit's sign depends only on which patterns are present. None where the
        network does not have that shape or the lemma fails (the arithmetic encoding is used)."""
        head = self.readout_head()
        if head is None:
            return None
        idx, h = head
        cands = self.candidates(h, t_r)
        if not cands:
            return None
        plan = self.readout_plan(idx, h, self.state(idx, t_r), t_r - self.N)
        if plan is None:
            return None
        dims, patterns = plan[0], plan[1]
        bits = [b for j in cands if (b := self.pattern_bits(dims, self.state(idx, j))) is not None]
        if len(bits) < len(cands):
            return None
        z3 = self.z3
        there = [self.present_at(j) for j in cands]
        present = []
        for pat in patterns:
            lits = [
                [row[d] if pat[d] else z3.Not(row[d]) for d in dims] + ([] if p is True else [p])
                for row, p in zip(bits, there, strict=True)
            ]
            present.append(self.vals.named(z3.Or([z3.And(lit) for lit in lits]), "present"))
        return self.presence_formula(plan, present)

    def readout_head(self) -> tuple[int, Head] | None:
        """The readout's averaging head (the last attention layer, one hardmax head with tie
        "average" and dot scores, residual, followed by position-wise blocks without layer norm)
        and its sublayer index; None where the network is not of that shape."""
        net = self.net
        att = [i for i, sub in enumerate(net.layers) if isinstance(sub.block, AttentionLayer)]
        if not att:
            return None
        idx = att[-1]
        sub = net.layers[idx]
        layer = sub.block
        assert isinstance(layer, AttentionLayer)
        later = net.layers[idx + 1 :]
        if (
            len(layer.heads) != 1
            or layer.output is not None
            or not sub.residual
            or sub.post_ln is not None
            or any(s.post_ln is not None for s in later)
            or any(not isinstance(s.block, FFN) for s in later)
        ):
            return None
        h = layer.heads[0]
        if (
            not isinstance(h.normalizer, Hardmax)
            or h.normalizer.tie != "average"
            or h.scoring != "dot"
        ):
            return None
        return idx, h

    def pattern_bits(self, dims: Sequence[str], state: State) -> dict[str, Any] | None:
        """The readout head's key and value dims at one position as Bool terms (None: not 0/1)."""
        x, scale = state
        if scale is not None:
            return None
        row = {d: self.vals.boolish(x.get(d, Fraction(0))) for d in dims}
        return None if any(v is None for v in row.values()) else row

    def readout_plan(
        self, idx: int, h: Head, state: State, where: int
    ) -> tuple[list[str], list[dict[str, bool]], dict[Fraction, list[int]], PresenceSigns] | None:
        """What the presence readout needs at the readout position (its ``state`` before the
        head; ``where`` its index from the end): the head's Boolean dims, their patterns, the
        patterns by score class, and the readout lemma's signs (proved once per key). None where
        the query or a dim read after the head is not concrete, or the lemma fails."""
        net, vals = self.net, self.vals
        xr, sr = state
        if sr is not None:
            return None
        q = affine_map(vals, h.query, xr)
        if not all(isinstance(v, Fraction) for v in q.values()):
            return None
        dims = sorted(
            {d for row in h.key.weights for d, w in zip(h.key.inputs, row, strict=True) if w != 0}
            | {
                d
                for row in h.value.weights
                for d, w in zip(h.value.inputs, row, strict=True)
                if w != 0
            }
        )
        if len(dims) > 6:
            return None
        r = net.readout
        assert isinstance(r, Classifier)
        reads = _read_dims(r.logit)
        for s_ in net.layers[idx + 1 :]:
            assert isinstance(s_.block, FFN)
            if s_.block.steps:
                first = s_.block.steps[0]
                if not isinstance(first, Affine):
                    return None
                reads |= _read_dims(first)
        fixed = {d: xr.get(d, Fraction(0)) for d in sorted(reads)}
        if not all(isinstance(v, Fraction) for v in fixed.values()):
            return None
        patterns = [dict(zip(dims, combo, strict=True)) for combo in _bool_combos(len(dims))]
        classes: dict[Fraction, list[int]] = {}
        for pi, pat in enumerate(patterns):
            env = {d: Fraction(int(b)) for d, b in pat.items()}
            k = affine_map(vals, h.key, env)
            score = sum((q[c] * k[c] for c in h.key.outputs), Fraction(0))
            classes.setdefault(score, []).append(pi)
        key = (idx, where, tuple(fixed.items()), tuple(dims))
        signs = self.readout_lemmas.get(key)
        if signs is None:
            signs = _presence_signs(net, idx, h, patterns, classes, fixed, self.readout_nodes)
            self.readout_lemmas[key] = signs
        if signs is False or signs is True:
            return None
        return dims, patterns, classes, signs

    def presence_formula(
        self,
        plan: tuple[list[str], list[dict[str, bool]], dict[Fraction, list[int]], PresenceSigns],
        present: Sequence[Any],
    ) -> Any:
        """The accept bit from which value patterns occur (``present[p]``, a Bool per pattern)."""
        z3 = self.z3
        _dims, _patterns, classes, signs = plan
        order = sorted(classes, reverse=True)
        class_present = {c: z3.Or([present[p] for p in classes[c]]) for c in order}
        cases = []
        for ci, c in enumerate(order):
            top = z3.And(class_present[c], *(z3.Not(class_present[c2]) for c2 in order[:ci]))
            for subset, positive in signs[c]:
                if positive:
                    cases.append(
                        z3.And(
                            top,
                            *(
                                present[p] if p in subset else z3.Not(present[p])
                                for p in classes[c]
                            ),
                        )
                    )
        return z3.Or(cases) if cases else z3.BoolVal(False, self.ctx)

    def member(self, language: Language) -> Any:
        dfa = language.automaton
        z3 = self.z3
        if dfa is None and language.stack is not None:
            symbols = [
                [self.is_symbol(t, a) for a in range(len(self.alphabet))] for t in range(self.m)
            ]
            return stack_member(
                z3, self.ctx, language.stack, symbols, self.present, self.vals.assertions
            )
        if dfa is None:
            raise Unsupported(f"the language {language.name} has no Automaton")
        if (
            len(self.alphabet) == 2
            and commutative(dfa)
            and self.m >= COUNT_AT_LEAST
            and not self.ranged
        ):
            # The state depends only on how many times each symbol occurs: membership is a set
            # of values of one count (the same Int the network's uniform heads sum into).
            ones = self.vals.count([self.is_symbol(t, 1) for t in range(self.m)])
            good = [c for c in range(self.m + 1) if dfa.accepts([1] * c + [0] * (self.m - c))]
            return z3.Or([ones == c for c in good]) if good else z3.BoolVal(False, self.ctx)
        state = [z3.BoolVal(q == dfa.start, self.ctx) for q in range(dfa.states)]
        for t in range(self.m):
            nxt = []
            for q2 in range(dfa.states):
                cases = [
                    self.vals.and_([state[q], self.is_symbol(t, a)])
                    for q in range(dfa.states)
                    for a in range(len(self.alphabet))
                    if dfa.delta[q][a] == q2 and not z3.is_false(state[q])
                ]
                if self.present[t] is not True:
                    # an absent slot leaves the state as it is
                    if not cases and z3.is_false(state[q2]):
                        nxt.append(state[q2])
                        continue
                    step = self.vals.bool_ite(self.present[t], self.vals.or_(cases), state[q2])
                elif not cases:
                    nxt.append(z3.BoolVal(False, self.ctx))
                    continue
                else:
                    step = self.vals.or_(cases)
                v = z3.Bool(f"q{t + 1}.{q2}", self.ctx)
                self.vals.assertions.append(self.vals.iff(v, step))
                nxt.append(v)
            state = nxt
        if not dfa.accepting:  # z3.Or([]) would be False in z3's global context
            return z3.BoolVal(False, self.ctx)
        return z3.Or([state[q] for q in sorted(dfa.accepting)])


def _read_dims(a: Affine) -> set[str]:
    """The input dims an affine map reads with a nonzero weight."""
    return {d for row in a.weights for d, w in zip(a.inputs, row, strict=True) if w != 0}


def _bool_combos(k: int) -> list[tuple[bool, ...]]:
    return [tuple(bool((i >> b) & 1) for b in range(k)) for i in range(2**k)]


PresenceSigns = dict[Fraction, list[tuple[frozenset[int], bool]]]


def _presence_signs(
    net: Network,
    idx: int,
    h: Head,
    patterns: list[dict[str, bool]],
    classes: Mapping[Fraction, list[int]],
    fixed: Mapping[str, Fraction],
    nodes: list[LemmaNode],
) -> PresenceSigns | bool:
    """The readout lemma behind :meth:`Abstraction.presence_accept`: for each score class and
    each nonempty set P of its value patterns, the sign of the logit is the same for every
    convex combination of P with positive weights. Two queries per set (is a positive logit
    possible? a non-positive one?); exactly one must be sat. False if some set has both."""
    import z3

    ctx = z3.Context()
    vals = Values(z3, ctx)
    value_of = [
        affine_map(vals, h.value, {d: Fraction(int(b)) for d, b in pat.items()}) for pat in patterns
    ]
    signs: PresenceSigns = {}
    queries: list[SmtQuery] = []
    ok = True
    for c, members in classes.items():
        signs[c] = []
        for mask in range(1, 2 ** len(members)):
            subset = [members[i] for i in range(len(members)) if (mask >> i) & 1]
            lam = [z3.Real(f"lambda{p}", ctx) for p in subset]
            x: dict[str, Any] = dict(fixed)
            for o in h.value.outputs:
                a = vals.lin(
                    [
                        (
                            Fraction(1),
                            z3.Sum(
                                [lam[i] * vals.num(value_of[p][o]) for i, p in enumerate(subset)]
                            ),
                        )
                    ],
                    Fraction(0),
                )
                x[o] = vals.lin(
                    [(Fraction(1), x.get(o, Fraction(0))), (Fraction(1), a)], Fraction(0)
                )
            for sub in net.layers[idx + 1 :]:
                assert isinstance(sub.block, FFN)
                out = ffn_faithful(vals, sub.block, x)
                if sub.residual:
                    x = {
                        **x,
                        **{
                            d: vals.lin(
                                [(Fraction(1), x.get(d, Fraction(0))), (Fraction(1), v)],
                                Fraction(0),
                            )
                            for d, v in out.items()
                        },
                    }
                else:
                    x = {d: out.get(d, Fraction(0)) for d in net.dims}
            r = net.readout
            assert isinstance(r, Classifier)
            logit = vals.arith(affine_map(vals, r.logit, x)[r.logit.outputs[0]])
            simplex = [*(v > 0 for v in lam), z3.Sum(lam) == 1]
            answers = []
            for label, goal in (("positive", logit > 0), ("non-positive", logit <= 0)):
                solver = z3.Solver(ctx=ctx)
                solver.add(*simplex, *vals.assertions, goal)
                shown = " + ".join(
                    "(" + ",".join(f"{d}={int(b)}" for d, b in patterns[p].items()) + ")"
                    for p in subset
                )
                query, _model = smtlib.solve(
                    solver,
                    name=f"readout.{h.name} class {c} patterns {shown} {label}",
                    logic="QF_LRA",
                    timeout=10.0,
                    reason_unsat=f"no {label} logit when the maximal value patterns are {shown}",
                )
                queries.append(query)
                answers.append(query.result)
            if answers == ["sat", "unsat"]:
                signs[c].append((frozenset(subset), True))
            elif answers == ["unsat", "sat"]:
                signs[c].append((frozenset(subset), False))
            else:
                ok = False
    shown_dims = ", ".join(sorted(patterns[0])) if patterns else ""
    nodes.append(
        LemmaNode(
            name=f"readout.{h.name}",
            statement=f"after the averaging head {h.name} (value patterns over {shown_dims}), the sign of the logit depends "
            "only on which patterns are present in the top score class, for every mix of them (all positive weights)",
            verdict="proved" if ok else "refuted",
            queries=tuple(queries),
        )
    )
    return signs if ok else False
