"""Construction claims of exact recurrent and encoder–decoder networks checked by the
per-position engine (:func:`~netproof.verifier.models.sequence.check_sequence`):
:func:`check_predicts_next` and :func:`check_simulates`.

The batched enclosure covers feed-forward and transformer models; the seed constructions that
predict per position are also recurrent networks (Suzgun et al. 2019's Stack-RNN, Stack-LSTM and
Baby-NTM on the MARNN tasks) and an encoder–decoder that runs a Turing machine (Bhattamishra et
al. 2020's ``tm-sim``). Their weights are exact and their runs are exact, so the engine decides
them by exact evaluation (an :class:`~netproof.verifier.models.sequence.ExactOutputs`), as
``check-model`` decides a hardmax network by its exact logits: every word of Σ^≤n in shortlex
order, one verdict per position, every wrong position listed (``--wrong``-style rows), the first
wrong word and position.

- **Next-symbol sets** (:class:`RecurrentNextSets`, a :class:`PredictsNext` claim): position p
  of word w is the prediction after w[:p+1], the k-hot readout's values y_s (exact), a symbol
  allowed where y_s > the readout's threshold (one at the threshold is undecided); the
  reference is the claim's task (``task.next_sets``). Each word costs one step: a word's run
  continues its prefix's, kept from the previous length. The claim's second half (acceptance
  by the predictions equals membership) follows once every set is right for a task whose own
  targets accept exactly its members (the four MARNN tasks do; the paper's literal no-EOS
  target does not, and its sets are wrong already).
- **Decoder steps** (:class:`DecoderSteps`, a :class:`Simulates` claim): position t is decoder
  step t (t = 0 up to the step budget: an encoder–decoder has its own positions, and the empty
  word is checked too). The output there is the decoder's hidden block of y_t, whether the
  decoder halts at t, and, at the machine's configuration ticks, the configuration that block
  decodes to; past the halt, ``halted``. The reference is the claim's σ-RNN (h_t on the
  claim's inputs, its halting step) and machine (the configuration at each tick, the halting
  tick). Where a word's first wrong step is a hidden-state mismatch, it is the step the claim's
  own checker names (the tests check both on the committed constructions).

May import the IR's recurrent and encoder–decoder interpreters, the claims vocabulary and the
engine (:mod:`.sequence`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from netproof.symbolic import RecurrentNetwork, Seq2Seq
from netproof.verifier.claims import PredictsNext, Simulates, Word

from .sequence import SequenceReport, check_sequence

__all__ = ["DecoderSteps", "RecurrentNextSets", "check_predicts_next", "check_simulates"]

HALTED = "halted"
"""The output at a decoder step after the run halted."""


class RecurrentNextSets:
    """The exact k-hot outputs y_s of a recurrent network after every prefix of a word, one
    tuple per position in the order of the readout's symbols (an
    :class:`~netproof.verifier.models.sequence.ExactOutputs`)."""

    def __init__(self, net: RecurrentNetwork) -> None:
        from netproof.symbolic.recurrent import Program

        self.program = Program(net, "exact")
        self.name = net.name
        self.alphabet = tuple(net.alphabet)
        self.symbols = tuple(net.readout.symbols)
        self.threshold = net.readout.threshold
        # word -> (state after it, the outputs after each of its prefixes); one length kept
        self._runs: dict[Word, tuple[Any, tuple[tuple[Fraction, ...], ...]]] = {
            (): (self.program.start(), ())
        }

    def _run(self, word: Word) -> tuple[Any, tuple[tuple[Fraction, ...], ...]]:
        hit = self._runs.get(word)
        if hit is None:
            state, path = self._run(word[:-1])
            state, step = self.program.step(state, word[-1])
            hit = (state, (*path, tuple(step.y[s] for s in self.symbols)))
            self._runs[word] = hit
        return hit

    def __call__(self, words: Sequence[Word]) -> list[list[Any]]:
        if words:  # forget the runs two lengths back: the next length continues this one's
            m = len(words[0])
            for w in [w for w in self._runs if 0 < len(w) < m - 1]:
                del self._runs[w]
        return [list(self._run(tuple(w))[1]) for w in words]


def check_predicts_next(
    net: RecurrentNetwork,
    claim: PredictsNext,
    *,
    max_n: int | None = None,
    batch: int = 256,
) -> SequenceReport:
    """Check ``claim`` (its task's next-symbol sets after every prefix) on ``net`` for every word
    of length ``max(claim.min_len, 1)`` to ``max_n`` (default: the claim's bound) at every
    position, by exact evaluation (see the module docstring)."""
    task = claim.task

    source = RecurrentNextSets(net)
    return check_sequence(
        source,
        lambda w: list(task.next_sets(w)),
        unembed=(),
        values=source.symbols,
        max_n=claim.max_len if max_n is None else max_n,
        min_n=max(claim.min_len, 1),
        reference_name=f"{task.name} targets (claim {claim.id})",
        batch=batch,
        threshold=source.threshold,
    )


def _step_value(
    h: Sequence[Fraction], halts: bool, configuration: object | None, with_conf: bool
) -> str:
    """One decoder step's output as text (equal texts are equal outputs, exactly)."""
    text = "h = (" + ", ".join(str(v) for v in h) + ")"
    if with_conf:
        text += f"; {configuration}"
    return text + ("; halts" if halts else "")


class DecoderSteps:
    """The decoder steps of an encoder–decoder that simulates a σ-RNN (a :class:`Simulates`
    claim's network), one output per step (see the module docstring; an
    :class:`~netproof.verifier.models.sequence.ExactOutputs`). ``network(n)`` is the network
    for words of length n; ``budget(word)`` the step budget of the word's run."""

    def __init__(
        self,
        network: Callable[[int], Seq2Seq],
        claim: Simulates,
        *,
        alphabet: Sequence[str],
        budget: Callable[[Word], int],
        name: str,
    ) -> None:
        self.network = network
        self.claim = claim
        self.alphabet = tuple(alphabet)
        self.budget = budget
        self.name = name

    def steps(self, word: Word) -> int:
        """The last decoder step run on ``word`` (its positions are 0 to this)."""
        return min(self.claim.max_steps, self.budget(word))

    def ticks(self, word: Word) -> dict[int, Any]:
        """The machine's configuration at each of its ticks (none without a machine)."""
        c = self.claim
        if c.machine is None or c.decode is None:
            return {}
        return dict(c.machine(word))

    def __call__(self, words: Sequence[Word]) -> list[list[Any]]:
        from netproof.symbolic.seq2seq import run as run_seq2seq

        c = self.claim
        units = c.rnn.unit_names
        out = []
        for w in words:
            last = self.steps(w)
            trace = run_seq2seq(self.network(len(w)), w, max_steps=last)
            ticks = self.ticks(w)
            row: list[Any] = []
            for t in range(last + 1):
                if t >= len(trace.steps):
                    row.append(HALTED)
                    continue
                y = trace.y(t)
                h = [y[d] for d in c.hidden]
                conf = None
                if t in ticks and c.decode is not None:
                    conf = c.decode(dict(zip(units, h, strict=True)))
                row.append(_step_value(h, trace.halted_at == t, conf, t in ticks))
            out.append(row)
        return out

    def reference(self, word: Word) -> list[str]:
        """The claim's expected output at every decoder step of ``word``: the σ-RNN's h_t, its
        halting step and the machine's halting tick (both "halts"), the machine's
        configuration at its ticks; ``halted`` after the last halt."""
        c = self.claim
        last = self.steps(word)
        hs = c.rnn.run_inputs(c.inputs(word, last + 1))
        units = c.rnn.unit_names
        halt: Mapping[str, Fraction] = c.halt
        halts = {
            t
            for t in range(last + 1)
            if sum(
                (halt.get(u, Fraction(0)) * v for u, v in zip(units, hs[t], strict=True)),
                Fraction(0),
            )
            == 1
        }
        halts = set(sorted(halts)[:1])  # the RNN halts at the first such step
        ticks = self.ticks(word)
        if ticks:
            halts.add(max(ticks))
        end = max(halts, default=last)
        return [
            HALTED if t > end else _step_value(hs[t], t in halts, ticks.get(t), t in ticks)
            for t in range(last + 1)
        ]


def check_simulates(
    network: Callable[[int], Seq2Seq],
    claim: Simulates,
    *,
    alphabet: Sequence[str],
    budget: Callable[[Word], int],
    max_n: int | None = None,
    name: str = "",
    batch: int = 64,
) -> SequenceReport:
    """Check ``claim`` (the decoder simulates its σ-RNN, and machine, step by step) for every
    word of length ``claim.min_len`` (0: the empty word too) to ``max_n`` (default: the claim's
    bound) at every decoder step, by exact evaluation (see the module docstring)."""
    source = DecoderSteps(
        network, claim, alphabet=alphabet, budget=budget, name=name or network(0).name
    )
    return check_sequence(
        source,
        source.reference,
        unembed=(),
        values=(),
        max_n=claim.max_len if max_n is None else max_n,
        min_n=claim.min_len,
        reference_name=f"the σ-RNN{' and the machine' if claim.machine else ''} (claim {claim.id})",
        batch=batch,
    )
