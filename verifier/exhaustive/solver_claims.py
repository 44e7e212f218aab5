"""The claims decided by a solver rather than by evaluating words one by one:
:class:`SignForAllBases` (per word, a polynomial inequality in the softmax base E, with z3),
:class:`BlockIdentity` and :class:`ForAll` (z3, unbounded), and :class:`Identity` (sympy).

z3 runs in an explicit context with numerals built from Fractions, imported inside functions.
May import: the claims vocabulary, :mod:`netproof.symbolic`, sympy, z3 (inside functions), the
solver interface :mod:`netproof.verifier.smtlib`, and this package's
:mod:`~netproof.verifier.exhaustive.job`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, assert_never

import sympy

from netproof.symbolic import FFN, Activation, Affine, LayerNorm, NotRationalError
from netproof.symbolic.evaluation import UndecidedSignError
from netproof.verifier.claims import (
    BlockIdentity,
    ForAll,
    Identity,
    Proved,
    Refuted,
    SignForAllBases,
    Unknown,
    Verdict,
    Word,
)
from netproof.verifier.smtlib import check as check_solver

from .job import (
    BASE_E,
    Job,
    Progress,
    count_words,
    enclose,
    format_value,
    interval_sign,
    run_word,
    show_word,
    words,
)

__all__ = [
    "block_identity_query",
    "check_block_identity",
    "check_for_all",
    "check_identity",
    "check_sign_for_all_bases",
]


# --------------------------------------------------------------------------- SignForAllBases


def _z3_poly(z3: Any, ctx: Any, expr: Any, var: Any) -> Any:
    poly = sympy.Poly(sympy.expand(expr), BASE_E)
    acc = z3.RealVal("0", ctx)
    for coeff in poly.all_coeffs():
        q = Fraction(int(sympy.numer(coeff)), int(sympy.denom(coeff)))
        acc = acc * var + z3.RealVal(str(q), ctx)
    return acc


def check_sign_for_all_bases(
    job: Job, claim: SignForAllBases, bound: int, progress: Progress | None
) -> Verdict:
    """A :class:`SignForAllBases` claim: per word, z3 shows no base E above the threshold gives the
    wrong sign (and the witness is wrong at or below it)."""
    import z3

    ctx = z3.Context()
    E = z3.Real("E", ctx)
    lang = claim.language
    alphabet = job.alphabet
    method = "exhaustive (symbolic in E) + smt (z3 nlsat) per word"
    checked = 0

    def solve(
        word: Word, s: Any, lo: Fraction, hi: Fraction | None, want_correct: bool
    ) -> tuple[str, Fraction | None]:
        """Is there E in (lo, hi] where the word is classified right (want_correct=False) or
        wrong (want_correct=True)? Returns ('unsat', None) or ('sat', E) or ('unknown', None)."""
        num, den = sympy.fraction(sympy.cancel(sympy.together(sympy.sympify(s))))
        prod = _z3_poly(z3, ctx, num, E) * _z3_poly(z3, ctx, den, E)
        accept = prod > 0
        member = lang.contains(word)
        right = accept if member else z3.Not(accept)
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", 20000)
        solver.add(z3.RealVal(str(lo), ctx) < E)
        if hi is not None:
            solver.add(z3.RealVal(str(hi), ctx) >= E)
        solver.add(z3.Not(right) if want_correct else right)
        answer, _reason, _model = check_solver(
            solver
        )  # a Ctrl-C raises, a crash is retried (never a verdict)
        result = {"unsat": z3.unsat, "sat": z3.sat}.get(answer, z3.unknown)
        if result == z3.unsat:
            return "unsat", None
        if result == z3.sat:
            val = solver.model().eval(E, model_completion=True)
            if z3.is_rational_value(val):
                return "sat", Fraction(val.numerator_as_long(), val.denominator_as_long())
            return "sat", None
        return "unknown", None

    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(
            method,
            f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked",
        )
    for w in words(alphabet, claim.min_len, bound):
        m = len(w)
        try:
            s = job.trace(w, "symbolic").output
        except (UndecidedSignError, NotRationalError) as exc:
            return Unknown(method, f"on {show_word(w, alphabet)}: {exc}")
        threshold = claim.threshold(m)
        status, at = solve(w, s, threshold, None, want_correct=True)
        if status == "sat":
            return Refuted(
                method,
                f"on {show_word(w, alphabet)} with E = {at if at is not None else '(irrational)'} > {threshold}: "
                f"s = {format_value(s)} has the wrong sign",
                w,
                {"E": str(at), "s(E)": format_value(s)},
            )
        if status == "unknown":
            return Unknown(method, f"z3 returned unknown on {show_word(w, alphabet)}")
        checked += 1
        if progress is not None:
            progress(checked, total)
    if claim.witness is not None:
        for m in range(max(claim.min_len, 1), bound + 1):
            threshold = claim.threshold(m)
            if threshold <= 1:
                continue
            w = claim.witness(m)
            s = run_word(job, w, "symbolic").output
            status, at = solve(w, s, Fraction(1), threshold, want_correct=False)
            if status == "sat":
                return Refuted(
                    method,
                    f"tightness fails: the witness {show_word(w, alphabet)} is classified right at E = {at} <= {threshold}",
                    w,
                    {"E": str(at)},
                )
            if status == "unknown":
                return Unknown(
                    method, f"z3 returned unknown on the witness {show_word(w, alphabet)}"
                )
            checked += 1
    return Proved(
        method,
        checked,
        f"every word with {claim.min_len} <= |w| <= {bound}, for all real E > {claim.threshold_text}"
        + ("; the witness is wrong for every E in (1, threshold]" if claim.witness else ""),
    )


# --------------------------------------------------------------------------- BlockIdentity and ForAll


def _sympy_to_z3(z3: Any, ctx: Any, expr: Any, env: Mapping[str, Any]) -> Any:
    expr = sympy.sympify(expr)
    if expr.is_Symbol:
        return env[str(expr)]
    if expr.is_Rational:
        return z3.RealVal(str(Fraction(int(expr.p), int(expr.q))), ctx)
    if isinstance(expr, sympy.Add):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            out = out + _sympy_to_z3(z3, ctx, a, env)
        return out
    if isinstance(expr, sympy.Mul):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            out = out * _sympy_to_z3(z3, ctx, a, env)
        return out
    if isinstance(expr, sympy.Piecewise):
        *cases, (last, _cond) = expr.args
        out = _sympy_to_z3(z3, ctx, last, env)
        for value, cond in reversed(cases):
            out = z3.If(_sympy_to_z3(z3, ctx, cond, env), _sympy_to_z3(z3, ctx, value, env), out)
        return out
    if isinstance(expr, sympy.Pow) and expr.exp == -1 and expr.base.is_Rational:
        return _sympy_to_z3(z3, ctx, sympy.Rational(1, 1) / expr.base, env)
    if isinstance(expr, sympy.Pow) and expr.exp == -1:
        return z3.RealVal("1", ctx) / _sympy_to_z3(z3, ctx, expr.base, env)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        out = _sympy_to_z3(z3, ctx, expr.args[0], env)
        for a in expr.args[1:]:
            other = _sympy_to_z3(z3, ctx, a, env)
            out = (
                z3.If(other < out, other, out)
                if isinstance(expr, sympy.Min)
                else z3.If(other > out, other, out)
            )
        return out
    if isinstance(expr, sympy.Abs):
        inner = _sympy_to_z3(z3, ctx, expr.args[0], env)
        return z3.If(inner < 0, -inner, inner)
    if expr is sympy.true or expr is sympy.false:
        return z3.BoolVal(bool(expr), ctx)
    if isinstance(expr, sympy.Eq):
        return _sympy_to_z3(z3, ctx, expr.lhs, env) == _sympy_to_z3(z3, ctx, expr.rhs, env)
    if isinstance(expr, sympy.core.relational.Relational):
        lhs, rhs = _sympy_to_z3(z3, ctx, expr.lhs, env), _sympy_to_z3(z3, ctx, expr.rhs, env)
        ops = {"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs, "!=": lhs != rhs}
        return ops[expr.rel_op]
    if isinstance(expr, sympy.And):
        return z3.And([_sympy_to_z3(z3, ctx, a, env) for a in expr.args])
    if isinstance(expr, sympy.Or):
        return z3.Or([_sympy_to_z3(z3, ctx, a, env) for a in expr.args])
    if isinstance(expr, sympy.Not):
        return z3.Not(_sympy_to_z3(z3, ctx, expr.args[0], env))
    if isinstance(expr, sympy.Implies):
        return z3.Implies(
            _sympy_to_z3(z3, ctx, expr.args[0], env), _sympy_to_z3(z3, ctx, expr.args[1], env)
        )
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        base = _sympy_to_z3(z3, ctx, expr.base, env)
        out = base
        for _ in range(int(expr.exp) - 1):
            out = out * base
        return out
    raise NotImplementedError(f"unsupported: {type(expr).__name__} in {expr}")


def check_block_identity(
    job: Job, claim: BlockIdentity, queries: list[Any] | None = None
) -> Verdict:
    """A :class:`BlockIdentity` claim: one z3 query (appended to ``queries`` for the proof log)."""
    from netproof.verifier.smtlib import solve

    method = f"smt (z3), all {claim.domain}"
    built = block_identity_query(job, claim)
    if isinstance(built, Unknown):
        return built
    solver, ints = built
    shown = (
        ", ".join(claim.variables)
        if len(claim.variables) <= 4
        else f"{len(claim.variables)} variables"
    )
    query, model = solve(
        solver,
        name=claim.id,
        logic=None,
        timeout=20.0,
        reason_unsat=f"the block's outputs equal the lemma's for all {claim.domain} {shown}",
    )
    refuted: Refuted | None = None
    if query.result == "sat":
        values = {v: str(model.eval(ints[v], model_completion=True)) for v in claim.variables}
        detail = f"fails at {', '.join(f'{k}={v}' for k, v in values.items())}"
        query = dataclasses.replace(query, reason=detail)
        refuted = Refuted(method, detail, None, values)
    if queries is not None:
        queries.append(query)
    if refuted is not None:
        return refuted
    if query.result == "unsat":
        return Proved(method, 1, f"for all {claim.domain} {shown} (unbounded)")
    return Unknown(method, f"z3: {query.reason}")


def block_identity_query(job: Job, claim: BlockIdentity) -> tuple[Any, dict[str, Any]] | Unknown:
    """The z3 solver (in its own context) whose unsat proves ``claim``, with the lemma's
    variables; Unknown when the block cannot be encoded. Built, not solved: proof-log freshness
    checks rebuild it and compare its SMT-LIB2 text."""
    import z3

    method = f"smt (z3), all {claim.domain}"
    net = job.network(0)
    block = next((s.block for s in net.layers if s.block.name == claim.block), None)
    if not isinstance(block, FFN):
        return Unknown(method, f"unsupported: no FFN block named {claim.block!r}")
    ctx = z3.Context()
    if claim.domain == "integers":
        ints = {v: z3.Int(v, ctx) for v in claim.variables}
        env = {v: z3.ToReal(x) for v, x in ints.items()}
    else:
        ints = {v: z3.Real(v, ctx) for v in claim.variables}
        env = dict(ints)
    x: dict[str, Any] = {}
    for d, e in claim.inputs.items():
        x[d] = _sympy_to_z3(z3, ctx, e, env)
    for step in block.steps:
        match step:
            case Affine():
                missing = [i for i in step.inputs if i not in x]
                if missing:
                    return Unknown(method, f"unsupported: the lemma does not give inputs {missing}")
                out = {}
                for o, row, b in zip(step.outputs, step.weights, step.bias, strict=True):
                    acc = z3.RealVal(str(b), ctx)
                    for i, w in zip(step.inputs, row, strict=True):
                        if w != 0:
                            acc = acc + z3.RealVal(str(w), ctx) * x[i]
                    out[o] = acc
                x = out
            case Activation(kind=kind):
                zero, one = z3.RealVal("0", ctx), z3.RealVal("1", ctx)
                if kind == "relu":
                    x = {k: z3.If(v > zero, v, zero) for k, v in x.items()}
                elif kind == "step":
                    x = {k: z3.If(v > zero, one, zero) for k, v in x.items()}
                elif kind == "sigma":
                    x = {k: z3.If(v < zero, zero, z3.If(v > one, one, v)) for k, v in x.items()}
                else:
                    return Unknown(
                        method,
                        f"unsupported: activation {kind!r} in the block (z3 encodes relu, step and sigma)",
                    )
            case LayerNorm():
                return Unknown(method, "unsupported: layer norm (√) inside the block")
            case _:
                assert_never(step)
    solver = z3.Solver(ctx=ctx)
    for a in claim.assumptions:
        solver.add(_sympy_to_z3(z3, ctx, a, env))
    out_env = {**env, **x}
    goals = [x[d] == _sympy_to_z3(z3, ctx, e, env) for d, e in claim.outputs.items()]
    goals += [_sympy_to_z3(z3, ctx, c, out_env) for c in claim.conditions]
    solver.add(z3.Not(z3.And(goals)))
    return solver, ints


def check_for_all(claim: ForAll) -> Verdict:
    """A :class:`ForAll` claim: z3 on the assumptions and the negated goal."""
    import z3

    method = f"smt (z3), all {claim.domain}"
    ctx = z3.Context()
    if claim.domain == "integers":
        variables = {v: z3.Int(v, ctx) for v in claim.variables}
        env = {v: z3.ToReal(x) for v, x in variables.items()}
    else:
        variables = {v: z3.Real(v, ctx) for v in claim.variables}
        env = dict(variables)
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", 20000)
    try:
        for a in claim.assumptions:
            solver.add(_sympy_to_z3(z3, ctx, a, env))
        solver.add(z3.Not(_sympy_to_z3(z3, ctx, claim.goal, env)))
    except NotImplementedError as exc:
        return Unknown(method, str(exc))
    answer, reason, _model = check_solver(
        solver
    )  # a Ctrl-C raises, a crash is retried (never a verdict)
    result = {"unsat": z3.unsat, "sat": z3.sat}.get(answer, z3.unknown)
    if result == z3.unsat:
        return Proved(
            method,
            1,
            f"for all {claim.domain} {', '.join(claim.variables)} under the assumptions (unbounded)",
        )
    if result == z3.sat:
        model = solver.model()
        values = {v: str(model.eval(x, model_completion=True)) for v, x in variables.items()}
        return Refuted(
            method, f"fails at {', '.join(f'{k}={v}' for k, v in values.items())}", None, values
        )
    return Unknown(method, f"z3: {reason}")


# --------------------------------------------------------------------------- Identity


def check_identity(claim: Identity) -> Verdict:
    """A scalar identity, or a matrix identity entry by entry (sympy matrices of one shape)."""
    method = "sympy (simplify)"
    lhs_all, rhs_all = claim.lhs, claim.rhs
    matrix = isinstance(lhs_all, sympy.MatrixBase) or isinstance(rhs_all, sympy.MatrixBase)
    if matrix:
        if not (
            isinstance(lhs_all, sympy.MatrixBase) and isinstance(rhs_all, sympy.MatrixBase)
        ) or (lhs_all.shape != rhs_all.shape):
            shapes = [getattr(x, "shape", "a scalar") for x in (lhs_all, rhs_all)]
            return Refuted(
                method, f"the sides have different shapes: {shapes[0]} and {shapes[1]}", None
            )
        entries = [
            (f"entry [{r}, {c}]", lhs_all[r, c], rhs_all[r, c])
            for r in range(lhs_all.rows)
            for c in range(lhs_all.cols)
        ]
    else:
        entries = [("", lhs_all, rhs_all)]
    undecided: list[str] = []
    for where_entry, lhs_e, rhs_e in entries:
        lhs_e, rhs_e = sympy.sympify(lhs_e), sympy.sympify(rhs_e)
        if lhs_e == rhs_e:
            continue
        # A sample that separates the sides is a counterexample: try it before simplifying (a
        # false identity of exponentials can take sympy a long time to not simplify to 0).
        refuted = _identity_sample(claim, method, where_entry, lhs_e, rhs_e)
        if refuted is not None:
            return refuted
        diff = sympy.simplify(sympy.expand_log(lhs_e - rhs_e, force=True))
        if diff != 0:
            undecided.append(f"{where_entry + ': ' if where_entry else ''}{diff}")
    if not undecided:
        detail = (
            f"identity holds symbolically ({len(entries)} entries)"
            if matrix
            else "identity holds symbolically"
        )
        return Proved(method, len(entries), detail)
    return Unknown(method, f"sympy could not simplify the difference to 0: {undecided[0]}")


def _identity_sample(
    claim: Identity, method: str, entry: str, lhs_e: Any, rhs_e: Any
) -> Refuted | None:
    """Refuted when the claim's sample values separate the two sides (rigorous intervals)."""
    symbols = lhs_e.free_symbols | rhs_e.free_symbols
    used = sorted((sym for sym in symbols if sym.name in claim.sample), key=lambda x: x.name)
    subs = {
        sym: sympy.Rational(claim.sample[sym.name].numerator, claim.sample[sym.name].denominator)
        for sym in used
    }
    lhs, rhs = lhs_e.subs(subs), rhs_e.subs(subs)
    if lhs.free_symbols or rhs.free_symbols:
        return None
    if interval_sign(enclose(lhs) - enclose(rhs)) not in (1, -1):
        return None
    shown = {sym.name: claim.sample[sym.name] for sym in used}
    where = ", ".join(f"{k}={v}" for k, v in shown.items())
    at = f"{entry} " if entry else ""
    return Refuted(
        method,
        f"{at}at {where}: left side = {sympy.N(lhs, 8)}, right side = {sympy.N(rhs, 8)}",
        None,
        {
            "lhs": str(sympy.N(lhs, 15)),
            "rhs": str(sympy.N(rhs, 15)),
            **({"entry": entry} if entry else {}),
            **{k: str(v) for k, v in shown.items()},
        },
    )
