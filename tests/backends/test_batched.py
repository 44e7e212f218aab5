"""The batched integer evaluator (:mod:`netproof.symbolic.batched`) against the exact (Fraction) one:
the same logits, as Fractions, and the same accept bits on every word up to a length, on the Dyck
recognizers, on random hardmax networks, on every tie rule and mask, and past int64 (where it
must switch to Python ints rather than wrap). Networks it cannot run are refused with a reason.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from jobs import job_for

from netproof.constructions.chiang2022 import (
    doubled,
    first_transformer,
    parity_transformer,
    rumelhart_parity,
)
from netproof.constructions.yao2021 import dyck_recognizer
from netproof.symbolic import (
    RELU,
    SIGMA,
    STEP,
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    NextSymbols,
    Sublayer,
    affine,
    classifier,
    constant,
    ffn,
    token_embedding,
)
from netproof.symbolic.batched import (
    LIMIT,
    Evaluator,
    NotBatchableError,
    accepts,
    evaluate,
    shortlex_block,
    supports,
)
from netproof.symbolic.evaluation import UndefinedValueError
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.ir import MASKS, SCORINGS, TIE_RULES
from netproof.verifier.claims import Language, Proved, Recognizes, Refuted
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.exhaustive.checker import Job, check, count_words, words

F = Fraction


def all_words(alphabet: Sequence[str], max_len: int) -> list[tuple[str, ...]]:
    return [w for n in range(max_len + 1) for w in itertools.product(alphabet, repeat=n)]


def assert_same_as_exact(net: Network, ws: Sequence[tuple[str, ...]]) -> None:
    """Every word's batched logit and accept bit equal the exact interpreter's (== on Fractions)."""
    got = evaluate(net, ws)
    for i, w in enumerate(ws):
        trace = run_exact(net, w)
        assert (got.logit(i), bool(got.accepted[i])) == (trace.output, trace.accepted), f"word {w}"


# --------------------------------------------------------------------------- Dyck


@pytest.mark.parametrize(
    ("k", "depth", "variant", "max_len"),
    [
        (1, 1, "fixed", 6),
        (2, 2, "fixed", 4),
        (3, 1, "fixed", 3),
        (1, 1, "paper", 6),
        (2, 2, "paper", 4),
    ],
)
def test_batched_logits_and_accept_bits_equal_exact_ones_on_every_dyck_word_up_to_a_length(
    k: int, depth: int, variant: str, max_len: int
) -> None:
    net = dyck_recognizer(k=k, depth=depth, variant=variant)
    assert_same_as_exact(net, all_words(net.alphabet, max_len))


@pytest.mark.parametrize(("k", "depth", "max_len"), [(1, 1, 10), (1, 3, 10), (2, 2, 8), (3, 1, 5)])
def test_the_batched_fixed_dyck_recognizer_accepts_exactly_dyck_up_to_a_length(
    k: int, depth: int, max_len: int
) -> None:
    net = dyck_recognizer(k=k, depth=depth)
    ws = all_words(net.alphabet, max_len)
    lang = DYCK(k, depth)
    assert accepts(net, ws) == [lang.contains(w) for w in ws]


def test_the_batched_paper_recognizer_accepts_the_papers_counterexample_and_rejects_the_depth_d_word() -> (
    None
):
    # Errata 1–3 of constructions.yao2021: the printed network accepts ')(' and, with γ/ω
    # unmatched, rejects '()' at D = 1.
    net = dyck_recognizer(k=1, depth=1, variant="paper")
    assert accepts(net, [")(", "()", ")"]) == [True, False, False]
    assert accepts(net, [")(", "()", ")"]) == [
        run_exact(net, w).accepted for w in (")(", "()", ")")
    ]


@pytest.mark.slow
def test_batched_and_exact_agree_on_every_dyck_2_2_word_up_to_length_6() -> None:
    net = dyck_recognizer(k=2, depth=2)
    assert_same_as_exact(net, all_words(net.alphabet, 6))


def test_words_of_mixed_lengths_come_back_in_the_order_given() -> None:
    net = dyck_recognizer(k=2, depth=2)
    ws = [tuple("([])"), (), tuple(")"), tuple("[]()"), tuple("(["), tuple("()")]
    got = evaluate(net, ws)
    assert [got.logit(i) for i in range(len(ws))] == [run_exact(net, w).output for w in ws]
    assert got.logits() == [run_exact(net, w).output for w in ws]


def test_shortlex_blocks_enumerate_words_in_the_order_of_itertools_product() -> None:
    expected = [list(w) for w in itertools.product(range(3), repeat=4)]
    assert shortlex_block(3, 4, 0, 81).tolist() == expected
    assert shortlex_block(3, 4, 10, 20).tolist() == expected[10:20]
    assert shortlex_block(3, 0, 0, 1).tolist() == [[]]


# --------------------------------------------------------------------------- random networks

ALPHABET = ("a", "b", "c")


def _small(rng: random.Random) -> int:
    return rng.randint(-2, 2)


def random_hardmax_network(seed: int) -> Network:
    """Hardmax heads with every mask, scoring and tie rule, W^O, FFNs of every activation,
    residual and non-residual sublayers, positional features and special tokens."""
    rng = random.Random(seed)
    dims = ("d0", "d1", "d2", "p")
    table: dict[str, dict[str, Any]] = {
        s: {d: _small(rng) for d in dims[:3]} for s in (*ALPHABET, "S", "E")
    }
    table["S"]["d2"] = F(1, 3)
    feat = rng.choice(("i/n", "1/2^i", "cos(iπ)", "i"))
    emb = token_embedding(
        ALPHABET,
        table,
        positional={"p": feat, "d0": ("1/n", rng.choice((1, F(1, 2))))},
        prefix=("S",) if rng.random() < 0.7 else (),
        suffix=("E",) if rng.random() < 0.5 else (),
        index_base=rng.choice((0, 1)),
    )
    layers: list[Sublayer] = []
    for idx in range(rng.randint(1, 4)):
        if rng.random() < 0.35:
            act = rng.choice((RELU, SIGMA, STEP))
            block = ffn(
                f"f{idx}",
                affine(
                    {"h": {"d1": _small(rng), "p": _small(rng)}, "g": {"d0": F(1, 2)}},
                    bias={"h": F(1, 2)},
                ),
                act,
                affine({"d2": {"h": 1, "g": _small(rng)}}),
            )
            layers.append(Sublayer(block=block, residual=rng.random() < 0.8))
            continue
        heads = []
        outs = (("d1",), ("d2",)) if rng.random() < 0.5 else (("d1", "d2"),)
        with_output = rng.random() < 0.3
        for hi, written in enumerate(outs):
            value_rows = {
                (f"v{hi}{o}" if with_output else o): {
                    "d0": _small(rng),
                    "p": _small(rng),
                    "d2": F(1, 2),
                }
                for o in written
            }
            heads.append(
                Head(
                    name=f"h{hi}",
                    query=affine(
                        {"q": {"d0": _small(rng), "p": _small(rng)}, "r": {"d1": 1}},
                        bias={"q": _small(rng)},
                    ),
                    key=affine(
                        {"q": {"d0": _small(rng), "p": _small(rng)}, "r": {"d2": _small(rng)}}
                    ),
                    value=affine(value_rows),
                    normalizer=Hardmax(tie=rng.choice(TIE_RULES)),
                    scoring=rng.choice(SCORINGS),
                    mask=rng.choice(MASKS),
                )
            )
        output = None
        if with_output:
            names = [o for h in heads for o in h.value.outputs]
            output = affine({"d1": {names[0]: 2}, "d0": {names[-1]: F(-1, 3)}}, inputs=names)
        layers.append(
            Sublayer(
                block=AttentionLayer(name=f"a{idx}", heads=tuple(heads), output=output),
                residual=rng.random() < 0.9,
            )
        )
    return Network(
        name=f"random-{seed}",
        dims=dims,
        embedding=emb,
        layers=tuple(layers),
        readout=classifier(
            {"d1": 1, "d2": -1, "p": F(1, 5)}, position=rng.choice((0, -1, 1)), bias=F(1, 7)
        ),
    )


@pytest.mark.parametrize("seed", range(40))
def test_batched_logits_equal_exact_ones_on_random_hardmax_networks(seed: int) -> None:
    net = random_hardmax_network(seed)
    ws = [
        w
        for w in all_words(ALPHABET, 4)
        if len(w) + len(net.embedding.prefix) + len(net.embedding.suffix) >= 2
    ]  # type: ignore[union-attr]
    assert supports(net) is None
    assert_same_as_exact(net, ws)


def test_the_random_networks_cover_every_mask_scoring_tie_rule_and_activation() -> None:
    seen: set[str] = set()
    for seed in range(40):
        for sub in random_hardmax_network(seed).layers:
            if isinstance(sub.block, AttentionLayer):
                for h in sub.block.heads:
                    assert isinstance(h.normalizer, Hardmax)
                    seen |= {h.mask, h.scoring, h.normalizer.tie}
                seen.add("W^O" if sub.block.output is not None else "no W^O")
            else:
                seen |= {s.kind for s in sub.block.steps if hasattr(s, "kind")}
    assert seen >= {*MASKS, *SCORINGS, *TIE_RULES, "relu", "sigma", "step", "W^O", "no W^O"}


# --------------------------------------------------------------------------- ties and masks


def tie_network(tie: str, mask: str = "none") -> Network:
    """Every score is 0, so each query ties over all its allowed tokens; the value is i."""
    head = Head(
        name="h",
        query=constant({"q": 1}),
        key=constant({"q": 0}),
        value=affine({"y": {"p": 1}}),
        normalizer=Hardmax(tie=tie),  # type: ignore[arg-type]
        mask=mask,  # type: ignore[arg-type]
    )
    return Network(
        name="ties",
        dims=("p", "y"),
        embedding=token_embedding(("a",), {"a": {}}, positional={"p": "i"}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(head,))),),
        readout=classifier({"y": 1}, position=1, bias=F(-3, 2)),
    )


@pytest.mark.parametrize(
    ("tie", "expected"), [("leftmost", F(0)), ("rightmost", F(4)), ("average", F(2))]
)
def test_each_tie_rule_reads_its_own_token_of_a_full_tie(tie: str, expected: Fraction) -> None:
    # five tokens, all tied at query 1: leftmost reads i = 0, rightmost i = 4, average (0+…+4)/5
    net = tie_network(tie)
    got = evaluate(net, ["aaaaa"]).logit(0)
    assert got == expected - F(3, 2) == run_exact(net, "aaaaa").output


@pytest.mark.parametrize("tie", TIE_RULES)
@pytest.mark.parametrize("mask", MASKS)
def test_every_tie_rule_under_every_mask_equals_exact_on_words_up_to_length_6(
    tie: str, mask: str
) -> None:
    net = tie_network(tie, mask)
    assert_same_as_exact(net, all_words(("a",), 6)[2:])


def test_an_average_over_ties_of_different_sizes_is_exact() -> None:
    # keys 1 on 'b': query i ties over the b's allowed to it (causal): 1, 2, 3 ... of them
    head = Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"k": 1}}),
        value=affine({"y": {"p": 1}}),
        normalizer=Hardmax(tie="average"),
        mask="causal",
    )
    net = Network(
        name="sizes",
        dims=("k", "p", "y"),
        embedding=token_embedding(("a", "b"), {"a": {}, "b": {"k": 1}}, positional={"p": "i/n"}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(head,))),),
        readout=classifier({"y": 1}, position=-1, bias=F(-1, 2)),
    )
    assert_same_as_exact(net, all_words(("a", "b"), 7)[1:])


def empty_error_network(mask: str) -> Network:
    head = Head(
        name="h",
        query=constant({"q": 1}),
        key=constant({"q": 0}),
        value=affine({"y": {"p": 1}}),
        normalizer=Hardmax(),
        mask=mask,  # type: ignore[arg-type]
        empty="error",
    )
    return Network(
        name="empty",
        dims=("p", "y"),
        embedding=token_embedding(("a",), {"a": {}}, positional={"p": "i"}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(head,))),),
        readout=classifier("y"),
    )


@pytest.mark.parametrize(("mask", "position"), [("strict_causal", 0), ("strict_anticausal", 3)])
def test_an_empty_masked_set_under_the_error_rule_raises_what_exact_raises(
    mask: str, position: int
) -> None:
    net = empty_error_network(mask)
    with pytest.raises(UndefinedValueError, match="attends to an empty set") as exact_error:
        run_exact(net, "aaaa")
    with pytest.raises(
        UndefinedValueError,
        match=rf"attention 'att' head 'h': position {position} attends to an empty set under mask '{mask}'",
    ) as batched_error:
        evaluate(net, ["aaaa"])
    assert str(batched_error.value) == str(exact_error.value)


def test_masks_that_never_empty_run_under_the_error_rule() -> None:
    assert_same_as_exact(empty_error_network("causal"), all_words(("a",), 5)[1:])


# --------------------------------------------------------------------------- past int64

BIG = F(2**40)


def big_network() -> Network:
    """Values of 2^40 and more: the scores (2^80), the FFN products (2^120) and the logit pass
    2^62 and have to be Python ints; a wrapping int64 would get the sign of the logit wrong."""
    head = Head(
        name="h",
        query=affine({"q": {"x": BIG}}),
        key=affine({"q": {"x": BIG}}),
        value=affine({"y": {"x": BIG}}),
        normalizer=Hardmax(tie="average"),
        scoring="neg_abs_dot",
    )
    grow = ffn(
        "grow",
        affine({"h": {"y": BIG}, "g": {"x": -1}}, bias={"h": F(-1, 3)}),
        RELU,
        affine({"z": {"h": BIG, "g": 1}}),
    )
    return Network(
        name="big",
        dims=("x", "y", "z"),
        embedding=token_embedding(
            ("a", "b", "c"), {"a": {"x": BIG}, "b": {"x": -BIG}, "c": {"x": F(1, 5)}}
        ),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(head,))), Sublayer(block=grow)),
        readout=classifier({"z": 1, "x": -(BIG**3)}, position=-1, bias=F(1, 2)),
    )


def test_values_past_2_to_the_62_fall_back_to_python_ints_and_stay_exact() -> None:
    net = big_network()
    ws = all_words(("a", "b", "c"), 4)[1:]
    assert_same_as_exact(net, ws)
    got = evaluate(net, ws)
    assert max(abs(q) for q in got.logits()) > LIMIT  # the fallback was needed
    assert {bool(b) for b in got.accepted} == {True, False}


def test_a_value_past_2_to_the_62_inside_the_network_is_not_wrapped() -> None:
    # step(2^80·x): int64 arithmetic mod 2^64 would turn 3·2^80/7 into 0 and reject 'a'.
    grow = ffn(
        "grow",
        affine({"u": {"x": BIG}}),
        affine({"w": {"u": BIG}}),
        STEP,
        affine({"s": {"w": 1}}),
    )
    net = Network(
        name="grow",
        dims=("x", "s"),
        embedding=token_embedding(
            ("a", "b", "c"), {"a": {"x": F(3, 7)}, "b": {"x": F(-2)}, "c": {"x": F(1, 2**30)}}
        ),
        layers=(Sublayer(block=grow),),
        readout=classifier({"s": 1}, bias=F(-1, 2)),
    )
    got = evaluate(net, ["a", "b", "c"])
    assert (
        got.logits()
        == [F(1, 2), F(-1, 2), F(1, 2)]
        == [run_exact(net, w).output for w in ("a", "b", "c")]
    )


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("net", "reason"),
    [
        (parity_transformer(), r"attention 'count' head 'count' uses softmax"),
        (first_transformer(), r"uses softmax; only hardmax heads are batched"),
        (rumelhart_parity(3), r"FlatEmbedding"),
        (doubled(dyck_recognizer(k=1, depth=1), eps=0, mirror=False), r"post-residual layer norm"),
    ],
    ids=["parity-softmax", "first-softmax", "rumelhart-flat", "layer-norm"],
)
def test_networks_outside_the_batched_fragment_are_refused_with_a_reason(
    net: Network, reason: str
) -> None:
    found = supports(net)
    assert found is not None
    with pytest.raises(NotBatchableError, match=reason):
        Evaluator(net)
    with pytest.raises(NotBatchableError, match=r"evaluate it per word with symbolic\.exact\.run"):
        evaluate(net, ["0"])


def test_a_next_symbols_readout_is_refused() -> None:
    base = dyck_recognizer(k=1, depth=1)
    net = Network(
        name="gen",
        dims=base.dims,
        embedding=base.embedding,
        layers=base.layers,
        readout=NextSymbols(scores=(("(", "m"),), threshold=F(1)),
    )
    assert supports(net) == "the NextSymbols readout; only Classifier accept bits are batched"


def test_every_dyck_recognizer_is_in_the_batched_fragment() -> None:
    for k, depth, variant in itertools.product((1, 2, 3), (1, 2), ("fixed", "paper")):
        assert supports(dyck_recognizer(k=k, depth=depth, variant=variant)) is None


# --------------------------------------------------------------------------- the checker


def dyck_job(net: Network, lang: Any) -> Job:
    return job_for(net, lang)


def test_the_checker_proves_dyck_with_the_batched_path_and_counts_every_word() -> None:
    lang = DYCK(2, 2)
    claim = Recognizes(id="Y2", statement="s", reference="r", language=lang, max_len=7)
    verdict = check(dyck_job(dyck_recognizer(k=2, depth=2), lang), claim)
    assert verdict == Proved(
        "exhaustive (exact, batched integers)",
        count_words(lang.alphabet, 0, 7),
        "every word with 0 <= |w| <= 7",
    )


def test_the_batched_checker_refutes_on_the_same_first_word_with_the_same_values_as_the_per_word_path() -> (
    None
):
    lang = DYCK(2, 2)
    net = dyck_recognizer(k=2, depth=2, variant="paper")
    claim = Recognizes(id="Y2", statement="s", reference="r", language=lang, max_len=5)
    calls: list[tuple[int, int]] = []
    verdict = check(
        dyck_job(net, lang), claim, progress=lambda done, total: calls.append((done, total))
    )
    assert isinstance(verdict, Refuted)
    first = next(
        w for w in words(lang.alphabet, 0, 5) if run_exact(net, w).accepted != lang.contains(w)
    )
    trace = run_exact(net, first)
    assert verdict.word == first
    assert verdict.values == {
        "logit": str(trace.output),
        "accepted": str(trace.accepted),
        "member": str(lang.contains(first)),
    }
    shown = "".join(first)
    assert verdict.detail == (
        f"'{shown}' is {'in' if lang.contains(first) else 'not in'} {lang.name} but the network "
        f"{'accepts' if trace.accepted else 'rejects'} it (logit {trace.output})"
    )
    done_before = list(words(lang.alphabet, 0, 5)).index(first)
    assert calls[-1] == (done_before, count_words(lang.alphabet, 0, 5))


def test_the_batched_checker_reports_an_undefined_output_on_the_first_word_of_the_length() -> None:
    net = empty_error_network("strict_causal")
    lang = Language(name="all", alphabet=("a",), contains=lambda w: True)
    claim = Recognizes(id="r", statement="s", reference="r", language=lang, min_len=2, max_len=4)
    verdict = check(dyck_job(net, lang), claim)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("a", "a")
    assert verdict.detail.startswith(
        "the network's output is undefined on 'aa': attention 'att' head 'h': position 0"
    )


def test_networks_outside_the_fragment_keep_the_per_word_checker() -> None:
    claim = Recognizes(id="r", statement="s", reference="r", language=PARITY, max_len=4)
    verdict = check(dyck_job(parity_transformer(), PARITY), claim)
    assert verdict == Proved(
        "exhaustive (exact)", count_words(("0", "1"), 0, 4), "every word with 0 <= |w| <= 4"
    )


def test_batched_numerators_are_int64_when_they_fit() -> None:
    assert (
        Evaluator(dyck_recognizer(k=1, depth=1)).run(np.array([[0, 1], [1, 0]])).numerators.dtype
        == np.int64
    )
