"""The simulation claim (Bhattamishra et al. 2020): :class:`Simulates`, an encoder–decoder
whose decoder states hold a reference σ-RNN's hidden states step by step (and, optionally, a
two-stack machine's configurations), checked exactly on every word of the bound.

May import: the claims vocabulary, :mod:`netproof.symbolic` and its encoder–decoder interpreter,
and this package's :mod:`~netproof.verifier.exhaustive.job`.
"""

from __future__ import annotations

from fractions import Fraction

from netproof.symbolic import Seq2Seq
from netproof.verifier.claims import Proved, Refuted, Simulates, Unknown, Verdict, Word

from .job import Job, Progress, count_words, decoder_budget, show_word, words

__all__ = ["check_simulates", "simulates_word"]


def check_simulates(job: Job, claim: Simulates, bound: int, progress: Progress | None) -> Verdict:
    """A :class:`Simulates` claim over its bound, word by word and step by step."""
    method = "exhaustive (exact), step by step"
    alphabet = job.alphabet
    total = count_words(alphabet, claim.min_len, bound)
    if total == 0:
        return Unknown(
            method,
            f"the bound {claim.min_len} <= |w| <= {bound} contains no word: nothing was checked",
        )
    steps = 0
    configurations = 0
    for done, w in enumerate(words(alphabet, claim.min_len, bound), start=1):
        verdict = simulates_word(job, claim, w, method)
        if not isinstance(verdict, tuple):
            return verdict
        steps += verdict[0]
        configurations += verdict[1]
        if progress is not None:
            progress(done, total)
    what = f"; {configurations} machine configurations matched" if claim.machine is not None else ""
    return Proved(
        method,
        total,
        f"every word with {claim.min_len} <= |w| <= {bound}: {steps} decoder steps{what}",
    )


def simulates_word(job: Job, claim: Simulates, w: Word, method: str) -> Verdict | tuple[int, int]:
    """The Refuted/Unknown verdict of ``claim`` on ``w``, or (steps, configurations) checked."""
    from netproof.symbolic.seq2seq import run as run_seq2seq

    net = job.network(len(w))
    shown = show_word(w, job.alphabet)
    if not isinstance(net, Seq2Seq):
        return Unknown(
            method,
            f"unsupported: Simulates is about an encoder–decoder (Seq2Seq), {net.name!r} is a {type(net).__name__}",
        )
    trace = run_seq2seq(net, w, max_steps=min(claim.max_steps, decoder_budget(job, w)))
    T = len(trace.steps)
    hs = claim.rnn.run_inputs(claim.inputs(w, T))
    units = claim.rnn.unit_names
    for t in range(T):
        y = trace.y(t)
        diff = [
            (d, u, y[d], hs[t][k])
            for k, (d, u) in enumerate(zip(claim.hidden, units, strict=True))
            if y[d] != hs[t][k]
        ]
        if diff:
            more = f" (and {len(diff) - 3} more units)" if len(diff) > 3 else ""
            text = ", ".join(f"y_{t}[{d}] = {a} but h_{t}[{u}] = {b}" for d, u, a, b in diff[:3])
            return Refuted(
                method,
                f"on {shown}: first failing step t = {t}: {text}{more}",
                w,
                {"t": str(t), **{d: f"{a} (expected {b})" for d, _u, a, b in diff[:3]}},
            )
    rnn_halt = next(
        (
            t
            for t in range(T)
            if sum(
                (claim.halt.get(u, Fraction(0)) * v for u, v in zip(units, hs[t], strict=True)),
                Fraction(0),
            )
            == 1
        ),
        None,
    )
    if rnn_halt != trace.halted_at:
        return Refuted(
            method,
            f"on {shown}: the decoder halts at step {trace.halted_at} but the RNN at step {rnn_halt} "
            f"(within {claim.max_steps} steps)",
            w,
            {"decoder_halt": str(trace.halted_at), "rnn_halt": str(rnn_halt)},
        )
    configurations = 0
    if claim.machine is not None and claim.decode is not None:
        pairs = claim.machine(w)
        for k, (tick, conf) in enumerate(pairs):
            if tick >= T:
                return Refuted(
                    method,
                    f"on {shown}: the decoder stopped at step {T - 1}, before configuration {k} (tick {tick}): {conf}",
                    w,
                    {"k": str(k)},
                )
            got = claim.decode(dict(zip(units, hs[tick], strict=True)))
            if got != conf:
                return Refuted(
                    method,
                    f"on {shown}: at step t = {tick} (configuration {k}) the decoder holds {got}; the machine is in {conf}",
                    w,
                    {"t": str(tick), "k": str(k)},
                )
            configurations += 1
        if trace.halted_at != pairs[-1][0]:
            return Refuted(
                method,
                f"on {shown}: the machine halts at configuration {len(pairs) - 1} (step {pairs[-1][0]}) but the decoder at step {trace.halted_at}",
                w,
                {"t": str(pairs[-1][0])},
            )
    return T, configurations
