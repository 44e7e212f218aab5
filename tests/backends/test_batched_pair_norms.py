"""The batched integers run a layer norm over two dims with eps = 0 (``pair_norms=True``: the
comparisons of compiled C-RASP programs, x -> [x; -x] -> LN -> sign x): the same logits, accept
bits and states as the exact interpreter on every word, and where the norm meets 0/0 on a word
the exhaustive check gives the per-word path's verdict, word and message."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from jobs import job_for

from netproof.constructions.rasp.compile_crasp import compile_crasp
from netproof.constructions.rasp.library import CRASP_PROGRAMS
from netproof.symbolic import Network, Sublayer, affine, classifier, ffn, token_embedding
from netproof.symbolic.batched import Evaluator, NotBatchableError, PairNormUndefined, supports
from netproof.symbolic.builders import layernorm
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import Language, Proved, Recognizes, Refuted
from netproof.verifier.exhaustive.checker import check

F = Fraction
ZERO = F(0)


def _words(alphabet: Sequence[str], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def _same_as_exact(net: Network, max_len: int) -> int:
    ev = Evaluator(net, pair_norms=True)
    checked = 0
    for n in range(max_len + 1):
        ws = list(itertools.product(net.alphabet, repeat=n))
        idx = np.array([[net.alphabet.index(s) for s in w] for w in ws], dtype=np.int64).reshape(
            len(ws), n
        )
        got = ev.run(idx)
        trace = ev.trace(idx)
        for i, w in enumerate(ws):
            exact = run_exact(net, w)
            assert (got.logit(i), bool(got.accepted[i])) == (exact.output, exact.accepted), w
            for state in trace.states:
                for d in net.dims:
                    for t in range(trace.n):
                        assert state.value(i, t, d) == exact.value(state.label, t, d), (w, d, t)
            checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(CRASP_PROGRAMS))
def test_a_compiled_c_rasp_program_runs_batched_with_the_exact_interpreters_values_on_every_short_word(
    name: str,
) -> None:
    net = compile_crasp(CRASP_PROGRAMS[name])
    assert "layer norm" in (supports(net) or ""), "the comparisons are layer norms"
    assert supports(net, pair_norms=True) is None
    assert _same_as_exact(net, 5 if len(net.alphabet) <= 2 else 3) > 0


def _sign_net(eps: Fraction = ZERO) -> Network:
    """The last token's x (a: 1, b: -1, c: 0) through [x; -x] -> layer norm -> its first half:
    accepts a word ending in a (or the empty word, BOS having x = 1); undefined on a last c."""
    return Network(
        name="last-sign",
        dims=("x", "p", "m", "out"),
        embedding=token_embedding(
            ("a", "b", "c"),
            {"a": {"x": 1}, "b": {"x": -1}, "c": {}, "BOS": {"x": 1}},
            prefix=("BOS",),
        ),
        layers=(
            Sublayer(
                block=ffn(
                    "sign",
                    affine({"p": {"x": 1}, "m": {"x": -1}}),
                    layernorm(eps, over=("p", "m")),
                    affine({"out": {"p": 1}}),
                ),
                residual=True,
            ),
        ),
        readout=classifier("out", position=-1),
    )


ENDS_IN_A = Language(
    name="ends in a", alphabet=("a", "b", "c"), contains=lambda w: not w or w[-1] == "a"
)


def test_a_pair_norm_meeting_zero_over_zero_is_refused_in_the_batch_and_the_check_names_the_first_such_word() -> (
    None
):
    net = _sign_net()
    ev = Evaluator(net, pair_norms=True)
    assert bool(ev.run(np.array([[0], [1]])).accepted[0]) is True
    with pytest.raises(PairNormUndefined, match=r"layer norm over p, m.*0/0 on some word"):
        ev.run(np.array([[0], [2]]))
    claim = Recognizes(id="L", statement="s", reference="r", language=ENDS_IN_A, max_len=4)
    verdict = check(job_for(net, ENDS_IN_A), claim)
    assert isinstance(verdict, Refuted) and verdict.word == ("c",), verdict
    assert "the network's output is undefined on 'c': ffn 'sign'" in verdict.detail, verdict
    assert verdict.method == "exhaustive (exact)", "the per-word path names the word"


def test_without_a_zero_the_check_takes_the_batched_path_and_counts_every_word() -> None:
    net = _sign_net()
    two = Language(name="ends in a", alphabet=("a", "b"), contains=ENDS_IN_A.contains)
    small = Network(
        name=net.name,
        dims=net.dims,
        embedding=token_embedding(
            ("a", "b"), {"a": {"x": 1}, "b": {"x": -1}, "BOS": {"x": 1}}, prefix=("BOS",)
        ),
        layers=net.layers,
        readout=net.readout,
    )
    claim = Recognizes(id="L", statement="s", reference="r", language=two, max_len=6)
    verdict: Any = check(job_for(small, two), claim)
    assert verdict == Proved(
        "exhaustive (exact, batched integers)", 127, "every word with 0 <= |w| <= 6"
    )


def test_a_pair_norm_with_eps_or_over_three_dims_stays_outside_the_batched_fragment() -> None:
    assert "layer norm" in (supports(_sign_net(F(1, 10)), pair_norms=True) or "")
    with pytest.raises(NotBatchableError, match=r"is a layer norm \(√ is not batched\)"):
        Evaluator(_sign_net(F(1, 10)), pair_norms=True)
    with pytest.raises(NotBatchableError, match=r"is a layer norm \(√ is not batched\)"):
        Evaluator(_sign_net())
