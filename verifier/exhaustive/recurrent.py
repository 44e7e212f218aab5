"""The claims about recurrent networks (Suzgun et al. 2019): :class:`PredictsNext` (the exact
network's next-symbol sets equal a task's targets after every prefix) and :class:`SoftAgrees`
(a soft network in rigorous intervals predicts the exact network's sets), both checked by one
step per word along the trie of prefixes.

May import: the claims vocabulary, :mod:`netproof.symbolic` and its recurrent interpreter, and
this package's :mod:`~netproof.verifier.exhaustive.job`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from netproof.symbolic import NotRationalError
from netproof.verifier.claims import (
    Claim,
    PredictsNext,
    Proved,
    Refuted,
    SoftAgrees,
    Unknown,
    Verdict,
    Word,
)

from .job import Job, Progress, count_words, enclose, format_value, show_word

__all__ = ["check_predicts_next", "check_soft_agrees"]


def _sets(s: frozenset[str] | None) -> str:
    return "undecided" if s is None else "{" + ", ".join(sorted(s)) + "}"


Visit = Callable[[Word, list[Any], tuple[Any, ...]], Verdict | None]


def _walk_prefixes(
    nets: Sequence[Any],
    backends: Sequence[str],
    alphabet: Sequence[str],
    min_len: int,
    bound: int,
    method: str,
    progress: Progress | None,
    visit: Visit,
) -> Verdict | int:
    """Every word of ``alphabet`` up to ``bound`` in shortlex order, each evaluated by one step
    from its prefix's state (level by level along the trie of prefixes), on every network of
    ``nets`` with its backend; ``visit(word, last steps, the first network's predicted sets after
    every prefix)`` for the words of length >= min_len. Returns the first verdict ``visit`` gives,
    or the number of words visited."""
    from netproof.symbolic.recurrent import Program

    try:
        programs = [Program(net, backend) for net, backend in zip(nets, backends, strict=True)]  # type: ignore[arg-type]
    except NotRationalError as exc:
        return Unknown(method, f"unsupported: {exc}")
    total = count_words(alphabet, max(min_len, 1), bound)
    level: list[tuple[Word, list[Any], tuple[Any, ...]]] = [((), [p.start() for p in programs], ())]
    done = 0
    for length in range(1, bound + 1):
        nxt: list[tuple[Word, list[Any], tuple[Any, ...]]] = []
        for w, states, path in level:
            for symbol in alphabet:
                w2 = (*w, symbol)
                try:
                    stepped = [p.step(st, symbol) for p, st in zip(programs, states, strict=True)]
                except NotRationalError as exc:
                    return Unknown(method, f"unsupported on {show_word(w2, alphabet)}: {exc}")
                path2 = (*path, stepped[0][1].predicted)
                if length >= min_len:
                    verdict = visit(w2, [rec for _st, rec in stepped], path2)
                    if verdict is not None:
                        return verdict
                    done += 1
                    if progress is not None:
                        progress(done, total)
                if length < bound:
                    nxt.append((w2, [st for st, _rec in stepped], path2))
        level = nxt
    return done


def _recurrent(job: Job, claim: Claim, method: str) -> Any:
    from netproof.symbolic.recurrent_ir import RecurrentNetwork

    net = job.network(0)
    if not isinstance(net, RecurrentNetwork):
        return Unknown(
            method,
            f"unsupported: {type(claim).__name__} is a claim about a recurrent network, "
            f"and {job.construction.name} builds a {type(net).__name__}",
        )
    return net


def check_predicts_next(
    job: Job, claim: PredictsNext, bound: int, progress: Progress | None
) -> Verdict:
    """A :class:`PredictsNext` claim over its bound, one step per word along the trie of prefixes."""
    method = "exhaustive (exact, recurrent, prefix trie)"
    net = _recurrent(job, claim, method)
    if isinstance(net, Unknown):
        return net
    task = claim.task
    alphabet = net.alphabet
    if bound < max(claim.min_len, 1):
        return Unknown(
            method,
            f"the bound {claim.min_len} <= |w| <= {bound} contains no nonempty word: nothing was checked",
        )

    def visit(w: Word, recs: list[Any], predicted: tuple[Any, ...]) -> Verdict | None:
        got = recs[0].predicted
        want = task.next_sets(w)[-1]
        if got != want:
            return Refuted(
                method,
                f"on {show_word(w, alphabet)}: after {len(w)} symbol{'s' if len(w) != 1 else ''} the network predicts "
                f"{_sets(got)}, the {task.name} target is {_sets(want)}",
                w,
                {"predicted": _sets(got), "target": _sets(want), "t": str(len(w))},
            )
        accepted, member = task.accepts(w, predicted), task.contains(w)
        if accepted != member:
            return Refuted(
                method,
                f"on {show_word(w, alphabet)}: the predictions {'accept' if accepted else 'reject'} it but it is "
                f"{'in' if member else 'not in'} {task.name}",
                w,
                {"accepted": str(accepted), "member": str(member)},
            )
        return None

    result = _walk_prefixes(
        [net], ["exact"], alphabet, claim.min_len, bound, method, progress, visit
    )
    if not isinstance(result, int):
        return result
    return Proved(
        method,
        result,
        f"every string over {{{', '.join(alphabet)}}} with {max(claim.min_len, 1)} <= |w| <= {bound}: the predicted "
        f"set after every prefix is the {task.name} target",
    )


def check_soft_agrees(
    job: Job, claim: SoftAgrees, bound: int, progress: Progress | None
) -> Verdict:
    """A :class:`SoftAgrees` claim over its bound: the soft network in intervals beside the exact
    one."""
    method = "exhaustive (interval soft vs exact hard, prefix trie)"
    net = _recurrent(job, claim, method)
    if isinstance(net, Unknown):
        return net
    alphabet = net.alphabet
    if tuple(claim.soft.alphabet) != tuple(alphabet):
        return Unknown(
            method,
            f"unsupported: the soft network reads {claim.soft.alphabet}, the exact one {alphabet}",
        )
    if bound < max(claim.min_len, 1):
        return Unknown(
            method,
            f"the bound {claim.min_len} <= |w| <= {bound} contains no nonempty word: nothing was checked",
        )
    margin: list[Any] = []
    threshold = claim.soft.readout.threshold

    def visit(w: Word, recs: list[Any], _predicted: tuple[Any, ...]) -> Verdict | None:
        hard, soft = recs
        if soft.predicted is None:
            return Unknown(
                method,
                f"on {show_word(w, alphabet)}: an enclosure of y straddles {threshold}: "
                + ", ".join(f"y:{k} = {format_value(v)}" for k, v in soft.y.items()),
            )
        if soft.predicted != hard.predicted:
            return Refuted(
                method,
                f"on {show_word(w, alphabet)} ({claim.scale_text}): the soft network predicts {_sets(soft.predicted)}, "
                f"the exact one {_sets(hard.predicted)}",
                w,
                {"soft": _sets(soft.predicted), "exact": _sets(hard.predicted)},
            )
        for v in soft.y.values():
            gap = abs(v - enclose(threshold))
            if not margin or gap.a < margin[0].a:
                margin[:] = [gap]
        return None

    result = _walk_prefixes(
        [net, claim.soft],
        ["exact", "interval"],
        alphabet,
        claim.min_len,
        bound,
        method,
        progress,
        visit,
    )
    if not isinstance(result, int):
        return result
    low = f"{float(margin[0].a):.3g}" if margin else "n/a"
    return Proved(
        method,
        result,
        f"every string with {max(claim.min_len, 1)} <= |w| <= {bound} ({claim.scale_text}): the soft network's "
        f"thresholded outputs equal the exact ones; smallest |y − {threshold}| met >= {low}",
    )
