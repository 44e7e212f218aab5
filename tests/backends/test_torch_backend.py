"""The torch backend (symbolic/torch_backend.py) and the differential check (verifier/differential.py).

- Every registry construction at its default parameters: float64 agrees with the exact
  reference on every word of the exhaustive bound (exact-rational networks), on a deterministic
  prefix of it (networks that need sympy or intervals; the full bound in a ``slow`` test).
- Hypothesis long words, up to n = 2000, for PARITY, FIRST and Dyck.
- Padding does not change a word's result; errors name the value and the fix; float16 and a
  2^-20 score gap in float32 show the float run reporting what it cannot resolve.

Every block of the IR also runs through torch in tests/backends/test_blocks.py (``run_all``).
"""

from __future__ import annotations

import itertools
import random
import sys
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    LayerNorm,
    MissingExtraError,
    Network,
    Scale,
    Sublayer,
    SymbolicError,
    WordError,
    affine,
    classifier,
    constant,
    ffn,
    token_embedding,
)
from netproof.symbolic.evaluation import UndefinedValueError
from netproof.verifier.claims import ValueIs
from netproof.verifier.floats.differential import compare
from netproof.verifier.fuzzing.strategies import dyck_words, parity_words

torch = pytest.importorskip("torch")
from netproof.symbolic import torch_backend
from netproof.symbolic.torch_backend import TorchBackendError

pytestmark = pytest.mark.torch

F = Fraction
LONG = settings(
    max_examples=3,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def network_of(name: str, n: int | None = None) -> Network:
    c = REGISTRY[name]
    values = c.parse_params({})
    return c.network(values, n) if c.per_length else c.network(values)


def bound(name: str) -> int:
    c = REGISTRY[name]
    return max(cl.max_len for cl in c.claims(c.parse_params({})) if hasattr(cl, "max_len"))


def all_words(alphabet: tuple[str, ...], max_len: int, min_len: int = 0) -> list[tuple[str, ...]]:
    return [w for m in range(min_len, max_len + 1) for w in itertools.product(alphabet, repeat=m)]


def assert_agrees(
    net: Network, words: list[tuple[str, ...]], *, undecided: int | None = 0, **kwargs: Any
) -> None:
    a = compare(net, words, **kwargs)
    assert a.words == len(words)
    assert a.disagreements == 0, a.first
    assert a.unresolved_ties == 0, a.tie_locations
    assert undecided is None or a.undecided == undecided
    # a float sign is left undecided only where the exact logit is exactly 0 (first-flawed's flaw)
    assert a.float_undecided == a.float_undecided_at_zero
    if a.max_logit_error is not None:
        assert a.max_logit_error < 1e-9


EXACT_RATIONAL = ["parity", "first", "first-flawed", "first-flawed-logn", "first-logn", "dyck"]
# the B-RASP / C-RASP programs compiled to transformers (constructions/rasp): exact-rational too
RASP = sorted(name for name in REGISTRY if name.startswith(("brasp-", "crasp-")))
NEEDS_SYMPY = ["parity-ln", "parity-ce", "first-ln", "first-ce", "first-ln-logn", "dyck-gen"]
REFERENCE = {"dyck-gen": "sympy"}  # the claims' own backends; the layer-norm networks: intervals
# the empty word: a logit of exactly 0, which intervals cannot sign (the float run rejects it)
UNDECIDED = {"parity-ln": 1, "parity-ce": 1, "first-ln": 1, "first-ce": 1, "first-ln-logn": 1}


# networks that are not transformer-style Networks: compile refuses them (tested below)
NOT_COMPILED = ["tm-sim", "prop43-tight", "stack-rnn", "baby-ntm", "stack-lstm"]


def test_the_lists_cover_every_token_network_of_the_registry() -> None:
    flat = {"rumelhart", "gates"}
    state_claims = ["relpos"]  # claims about the states of its heads: tested below, state by state
    assert sorted(EXACT_RATIONAL + RASP + NEEDS_SYMPY + NOT_COMPILED + state_claims) == sorted(
        set(REGISTRY) - flat
    )


@pytest.mark.parametrize("name", EXACT_RATIONAL + RASP)
def test_float64_agrees_with_exact_on_every_word_of_the_exhaustive_bound(name: str) -> None:
    net = network_of(name)
    assert_agrees(net, all_words(net.alphabet, bound(name)))


@pytest.mark.parametrize("name", NEEDS_SYMPY)
def test_float64_agrees_with_sympy_or_intervals_on_the_shortest_words(name: str) -> None:
    net = network_of(name)
    words = all_words(net.alphabet, 3 if name == "dyck-gen" else 4)
    assert_agrees(
        net, words, reference=REFERENCE.get(name, "interval"), undecided=UNDECIDED.get(name, 0)
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", NEEDS_SYMPY)
def test_float64_agrees_with_sympy_or_intervals_on_every_word_of_the_exhaustive_bound(
    name: str,
) -> None:
    net = network_of(name)
    words = all_words(net.alphabet, min(bound(name), 6 if name == "dyck-gen" else 10))
    assert_agrees(net, words, reference=REFERENCE.get(name, "interval"), undecided=None)


def test_float64_agrees_with_exact_on_rumelharts_fixed_length_networks_for_every_length() -> None:
    for m in range(bound("rumelhart") + 1):
        net = network_of("rumelhart", m)
        assert_agrees(net, all_words(net.alphabet, m, m))


def test_float64_agrees_with_exact_on_the_gates_network_on_every_input() -> None:
    net = network_of("gates")
    m = net.embedding.length  # type: ignore[union-attr]
    assert_agrees(net, all_words(net.alphabet, m, m))


# --------------------------------------------------------------------------- relative positions and convolutions


def assert_states_agree(net: Network, words: list[tuple[str, ...]]) -> None:
    """One padded batch of every word: every state of every word within 1e-12 of the exact trace."""
    from netproof.symbolic import exact

    fb = torch_backend.run_batch(net, words, keep_states=True)
    assert fb.states is not None
    for w, word in enumerate(words):
        te = exact.run(net, word)
        assert [label for label, _ in fb.states] == [s.label for s in te.states]
        for (label, tensor), se in zip(fb.states, te.states, strict=True):
            got = tensor[w].tolist()
            for t, row in enumerate(se.rows):
                for d, want in enumerate(row):
                    where = f"{word}: state {label!r} token {t} dim {net.dims[d]!r}"
                    assert abs(got[t][d] - float(want)) <= 1e-12 * max(1.0, abs(float(want))), (
                        f"{where}: {got[t][d]} != {want}"
                    )
        assert fb.accepted[w] == te.accepted


def test_float64_computes_every_head_and_convolution_of_relpos_on_every_word_its_claims_use() -> (
    None
):
    # The network claims (ValueIs N2-*, N3-*, N4...) read the states of the five relative heads
    # and both convolutions at every position of every word up to their bound (the identities
    # I* are sympy facts about matrices, not about the network); padded together in one batch.
    c = REGISTRY["relpos"]
    net = network_of("relpos")
    state_claims = [cl for cl in c.claims(c.parse_params({})) if isinstance(cl, ValueIs)]
    assert {cl.quantity.after for cl in state_claims} == {"relpos", "lightweight", "depthwise"}
    assert_states_agree(net, all_words(net.alphabet, max(cl.max_len for cl in state_claims)))


@pytest.mark.parametrize("k", [0, 2, 4])
def test_float64_computes_relpos_at_other_kernel_widths(k: int) -> None:
    c = REGISTRY["relpos"]
    net = c.network(c.parse_params({"k": str(k)}))
    assert_states_agree(net, all_words(net.alphabet, 3))


@pytest.mark.parametrize("hardmax", [False, True], ids=["softmax", "hardmax"])
@pytest.mark.parametrize("seed", range(12))
def test_random_relative_heads_agree_with_exact_in_one_padded_batch(
    random_relative_head: Any, seed: int, hardmax: bool
) -> None:
    case = random_relative_head(seed, hardmax=hardmax)
    words = [tuple(w) for w in case.words]
    assert_states_agree(case.network, words)
    fb = torch_backend.run_batch(case.network, words, keep_states=True)
    for w, word in enumerate(case.words):
        got = [
            row[case.network.dims.index("y")] for row in fb.states[-1][1][w].tolist()[: len(word)]
        ]
        assert got == pytest.approx([float(v) for v in case.reference(word)], rel=1e-12, abs=1e-12)
    if hardmax:  # integer logits: every tie is exact in floats and every gap is at least 1
        assert fb.unresolved_ties.count == 0
        assert fb.min_gap >= 1


def test_a_relative_bias_decides_a_hardmax_head_and_its_gap_is_the_scaled_score_plus_bias() -> None:
    # logits 2·x_j + β_{j−i}, β = (0, 3, 0), zero beyond ±1: on "bab" (x = 2, 1, 2) query 0 sees
    # 7, 2, 4; query 1 sees 4, 5, 4; query 2 sees 4, 2, 7. The bias outweighs the content score.
    from netproof.symbolic import RelativeBias

    h = Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"x": 1}}),
        value=affine({"y": {"x": 1}}),
        normalizer=Hardmax(),
        scale=Scale(coef=F(2)),
        relative_bias=RelativeBias(beta=(F(0), F(3), F(0))),
    )
    net = Network(
        name="t",
        dims=("x", "y"),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": 2}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(h,))),),
        readout=classifier("y"),
    )
    fb = torch_backend.run(net, "bab")
    assert fb.states is not None and fb.gaps is not None
    assert fb.states[-1][1][0, :, 1].tolist() == [2, 1, 2]
    assert fb.gaps[0][2][0].tolist() == [3, 1, 3]


def test_a_relative_bias_under_ln_n_scaling_and_base_e_to_the_c_matches_sympy() -> None:
    # exact refuses e^(c·β); sympy gives weights e^(c·(ln n·score + β)): scores are 0 here, so
    # at i = 0 on "ab" the weights are (1, e^(1/2))/(1 + e^(1/2)) with c = 1/2, β_{+1} = 1.
    import math

    from netproof.symbolic import RelativeBias, Softmax, sympy_interp

    h = Head(
        name="h",
        query=constant({"q": 1}),
        key=affine({"q": {"x": 0}}),
        value=affine({"y": {"x": 1}}),
        normalizer=Softmax(c=F(1, 2)),
        scale=Scale(log_n=True),
        relative_bias=RelativeBias(beta=(F(0), F(0), F(1))),
    )
    net = Network(
        name="t",
        dims=("x", "y"),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": 2}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(h,))),),
        readout=classifier("y"),
    )
    fb = torch_backend.run(net, "ab")
    assert fb.states is not None
    want = [float(v) for v in sympy_interp.run(net, "ab").state("att").rows[0]]
    assert fb.states[-1][1][0, 0].tolist() == pytest.approx(want, rel=1e-14)
    assert want[1] == pytest.approx((1 + 2 * math.exp(0.5)) / (1 + math.exp(0.5)), rel=1e-14)


def test_a_convolution_zero_pads_each_word_of_a_batch_at_its_own_end() -> None:
    from netproof.symbolic import Convolution

    conv = Convolution(name="conv", inputs=("x",), outputs=("y",), kernels=((F(1), F(10), F(100)),))
    net = Network(
        name="t",
        dims=("x", "y"),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": 2}}),
        layers=(Sublayer(block=conv),),
        readout=classifier("y", position=-1),
    )
    fb = torch_backend.run_batch(net, ["ab", "abab"], keep_states=True)
    assert fb.states is not None
    # "ab": the last position has no right neighbour although "abab" fills that slot of the batch
    assert fb.states[-1][1][0, :2, 1].tolist() == [10 + 200, 1 + 20]
    assert fb.states[-1][1][1, :, 1].tolist() == [10 + 200, 1 + 20 + 100, 2 + 10 + 200, 1 + 20]
    assert fb.logits.tolist() == [21.0, 21.0]


# --------------------------------------------------------------------------- networks torch does not compile


@pytest.mark.parametrize("name", NOT_COMPILED)
def test_compile_refuses_recurrent_and_encoder_decoder_networks_naming_the_kind_and_the_interpreter(
    name: str,
) -> None:
    net = network_of(name)
    kind, interpreter = {
        "RecurrentNetwork": (
            r"is a RecurrentNetwork \(\w+\)",
            r"symbolic\.recurrent\.run\(net, word\)",
        ),
        "Seq2Seq": (r"is an encoder–decoder \(Seq2Seq\)", r"symbolic\.seq2seq\.run\(net, word\)"),
    }[type(net).__name__]
    assert torch_backend.unsupported(net) is not None
    with pytest.raises(
        TorchBackendError,
        match=rf"network '{net.name}' {kind}, which the torch backend does not compile.*{interpreter}",
    ):
        torch_backend.compile(net)
    with pytest.raises(TorchBackendError, match=kind):
        torch_backend.run_batch(net, [""])


def test_every_transformer_style_construction_compiles() -> None:
    for name in EXACT_RATIONAL + NEEDS_SYMPY + ["relpos", "gates"]:
        assert torch_backend.unsupported(network_of(name)) is None, name


# --------------------------------------------------------------------------- long words


@LONG
@given(
    parity_words(member=True, min_len=1000, max_len=2000)
    | parity_words(member=False, min_len=1000, max_len=2000)
)
def test_parity_agrees_with_exact_on_long_words(word: tuple[str, ...]) -> None:
    assert_agrees(network_of("parity"), [word])


@LONG
@given(st.integers(1000, 2000), st.integers(0, 2**32))
def test_first_agrees_with_exact_on_long_words(length: int, seed: int) -> None:
    rng = random.Random(seed)
    assert_agrees(network_of("first"), [tuple(rng.choice("01") for _ in range(length))])


@LONG
@given(dyck_words(2, 2, min_len=1000, max_len=2000))
def test_the_dyck_recognizer_agrees_with_exact_on_long_members_and_their_one_symbol_edits(
    word: tuple[str, ...],
) -> None:
    net = network_of("dyck")
    edited = (*word[:-1], "(")
    assert_agrees(net, [word, edited, word[1:]])


# --------------------------------------------------------------------------- batching


def test_padding_next_to_a_long_word_does_not_change_any_result() -> None:
    net = network_of("dyck")
    rng = random.Random(7)
    words = [tuple(rng.choice(net.alphabet) for _ in range(m)) for m in (0, 1, 2, 5, 9)] + [
        ("(", ")") * 40
    ]
    together = torch_backend.run_batch(net, words)
    for i, w in enumerate(words):
        alone = torch_backend.run_batch(net, [w])
        assert alone.accepted[0] == together.accepted[i]
        assert alone.logit(0) == together.logit(i)
        assert alone.n == (together.n[i],)


def test_chunks_return_the_words_in_the_order_given() -> None:
    net = network_of("parity")
    words = ["1" * m for m in (7, 2, 5, 1, 4)]
    chunked = torch_backend.run_batch(net, words, chunk=2)
    whole = torch_backend.run_batch(net, words)
    assert chunked.accepted == whole.accepted == (True, False, True, True, False)
    assert chunked.n == whole.n == (8, 3, 6, 2, 5)
    assert chunked.logits.tolist() == whole.logits.tolist()


def test_a_declared_length_sets_n_for_every_word_of_a_causal_network() -> None:
    net = network_of("dyck-gen")
    fb = torch_backend.run_batch(net, ["(", "(("], length=10)
    assert fb.n == (10, 10)
    assert fb.tokens == (2, 3)
    a = compare(net, ["(", "(("], length=10)
    assert a.disagreements == 0


def test_the_next_symbol_readout_lists_the_allowed_symbols_at_every_position_and_the_end() -> None:
    net = network_of("dyck-gen")
    fb = torch_backend.run(net, "()")
    assert fb.next_symbols is not None and fb.ends is not None
    assert len(fb.next_symbols[0]) == fb.tokens[0] == 3
    assert fb.ends[0] == (True, False, True)
    assert fb.logits is None and fb.accepted == (None,)


def test_keep_states_returns_every_state_and_every_hardmax_gap() -> None:
    net = network_of("dyck")
    fb = torch_backend.run(net, "(())")
    assert fb.states is not None and fb.gaps is not None
    assert [label for label, _ in fb.states] == ["input", *(sub.name for sub in net.layers)]
    assert fb.states[0][1].shape == (1, 4 + 2, len(net.dims))
    heads = [
        (sub.name, h.name)
        for sub in net.layers
        if isinstance(sub.block, AttentionLayer)
        for h in sub.block.heads
    ]
    assert [(layer, head) for layer, head, _ in fb.gaps] == heads
    assert min(float(g.min()) for _l, _h, g in fb.gaps) == fb.min_gap


# --------------------------------------------------------------------------- precision


def gap_network(delta: Fraction) -> Network:
    """Position 2 (token b) scores 1 + delta, position 1 (token a) scores 1: hardmax picks b."""
    return Network(
        name="gap",
        dims=("k", "v", "y"),
        embedding=token_embedding(
            ("a", "b"), {"a": {"k": 1}, "b": {"k": 1 + delta, "v": 1}, "S": {}}, prefix=("S",)
        ),
        layers=(
            Sublayer(
                block=AttentionLayer(
                    name="att",
                    heads=(
                        Head(
                            name="pick",
                            query=constant({"q": 1}),
                            key=affine({"q": {"k": 1}}),
                            value=affine({"y": {"v": 1}}),
                            normalizer=Hardmax(),
                        ),
                    ),
                )
            ),
        ),
        readout=classifier("y", bias="-3/4"),
    )


def test_float64_resolves_a_score_gap_of_two_to_the_minus_twenty_and_reports_it() -> None:
    net = gap_network(F(1, 2**20))
    a = compare(net, ["ab"])
    assert a.agree
    assert a.min_gap == 2.0**-20
    assert a.unresolved_ties == 0


def test_float32_cannot_resolve_that_gap_reports_the_unresolved_tie_and_disagrees_with_exact() -> (
    None
):
    net = gap_network(F(1, 2**20))
    a = compare(net, ["ab"], dtype="float32")
    assert a.unresolved_ties == 3  # every query of the word sees the near-tie
    assert a.tie_locations == tuple(f"word 0, 'att' head 'pick' at i={i}" for i in range(3))
    assert a.disagreements == 1
    assert a.first[0].what == "accept bit"


def test_float16_breaks_the_dyck_recognizer_on_a_long_word_where_float64_holds() -> None:
    net = network_of("dyck")
    word = ("(", "[", "]", ")") * 300
    assert_agrees(net, [word])
    half = compare(net, [word], dtype="float16")
    assert half.disagreements == 1
    assert half.unresolved_ties > 0
    # the near-tied scores it could not resolve are closer than float64's smallest gap
    assert half.min_gap < compare(net, [word]).min_gap


# --------------------------------------------------------------------------- errors


def test_an_unknown_dtype_is_an_error_that_lists_the_dtypes() -> None:
    with pytest.raises(
        TorchBackendError,
        match=r"dtype='float128' is not one of float64, float32, float16, bfloat16",
    ):
        torch_backend.compile(network_of("parity"), dtype="float128")


def test_an_unknown_device_is_an_error_that_names_it() -> None:
    with pytest.raises(TorchBackendError, match=r"device='tpu:0' is not a torch device"):
        torch_backend.compile(network_of("parity"), device="tpu:0")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_a_gpu_is_an_error_that_says_to_use_the_cpu() -> None:
    with pytest.raises(
        TorchBackendError, match=r"device='cuda': CUDA is not available here .*use device='cpu'"
    ):
        torch_backend.compile(network_of("parity"), device="cuda")


def test_without_torch_the_backend_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[torch\]'"):
        torch_backend.compile(network_of("parity"))


def test_a_weight_the_dtype_cannot_hold_is_an_error_naming_the_block() -> None:
    net = Network(
        name="big",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        layers=(Sublayer(block=ffn("huge", affine({"y": {"x": 10**6}}))),),
        readout=classifier("y"),
    )
    assert torch_backend.run_batch(net, ["a"]).accepted == (True,)
    with pytest.raises(
        TorchBackendError,
        match=r"ffn 'huge' step \[0\]: a value \(1e\+06\) overflows float16.*use dtype='float64'",
    ):
        torch_backend.compile(net, dtype="float16")


def test_a_symbol_outside_the_alphabet_is_a_word_error() -> None:
    with pytest.raises(WordError, match=r"symbol '2' at position 2 is not in the alphabet"):
        torch_backend.run_batch(network_of("parity"), ["12"])


def test_a_declared_length_on_a_network_with_bidirectional_attention_is_a_word_error() -> None:
    with pytest.raises(
        WordError, match=r"length=9 evaluates a prefix, which needs causal attention"
    ):
        torch_backend.run_batch(network_of("parity"), ["01"], length=9)


def test_an_empty_masked_set_under_the_error_rule_raises_the_exact_interpreters_error() -> None:
    head = Head(
        name="prev",
        query=constant({"q": 0}),
        key=constant({"q": 0}),
        value=affine({"y": {"x": 1}}),
        normalizer=Hardmax(),
        mask="strict_causal",
        empty="error",
    )
    net = Network(
        name="strict",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=(head,))),),
        readout=classifier("y"),
    )
    with pytest.raises(
        UndefinedValueError,
        match=r"attention 'att' head 'prev': position 0 attends to an empty set",
    ):
        torch_backend.run_batch(net, ["aa"])


def test_a_layer_norm_of_a_constant_vector_gives_no_verdict_where_exact_calls_it_undefined() -> (
    None
):
    net = Network(
        name="ln0",
        dims=("x", "y"),
        embedding=token_embedding(("a",), {"a": {"x": 1, "y": 1}}),
        layers=(Sublayer(block=ffn("id", affine({"x": {"x": 0}})), post_ln=LayerNorm(eps=F(0))),),
        readout=classifier("y"),
    )
    assert torch_backend.run_batch(net, ["a"]).accepted == (None,)
    a = compare(net, ["a"])
    assert a.agree


def test_one_over_i_at_position_zero_raises_the_registrys_error() -> None:
    net = Network(
        name="inv",
        dims=("p", "y"),
        embedding=token_embedding(("a",), {"a": {}}, positional={"p": "1/i"}),
        layers=(),
        readout=classifier("y"),
    )
    with pytest.raises(SymbolicError, match=r"positional feature '1/i' is undefined at i=0"):
        torch_backend.run_batch(net, ["a"])


# --------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["parity", "first", "dyck", "dyck-gen"])
def test_cuda_float64_agrees_with_exact_as_the_cpu_does(name: str) -> None:
    net = network_of(name)
    words = all_words(net.alphabet, 3 if name == "dyck-gen" else 6)
    assert_agrees(net, words, device="cuda")
    fb = torch_backend.run_batch(net, words, device="cuda")
    assert fb.device.startswith("cuda")
    assert fb.accepted == torch_backend.run_batch(net, words).accepted


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_runs_a_word_of_two_thousand_symbols_in_every_dtype() -> None:
    net = network_of("dyck")
    word = ("(", "[", "]", ")") * 500
    assert_agrees(net, [word], device="cuda")
    for dtype in torch_backend.DTYPES:
        fb = torch_backend.run_batch(net, [word], dtype=dtype, device="cuda")
        assert fb.dtype == dtype and fb.logits.device.type == "cuda"
