"""The hypothesis strategies of :mod:`netproof.verifier.fuzzing.strategies` and the reference machines of
:mod:`netproof.verifier.claims.machines`: members really are members, near-misses really are not, lengths are
respected, the Dyck words reach every depth up to D, every edit kind occurs, random networks
validate and run the same through the exact and the batched interpreters, random σ-RNNs and
two-stack machines are valid and behave as their reference semantics say."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from netproof.symbolic import (
    FFN,
    Activation,
    AttentionLayer,
    Hardmax,
    InexactNumberError,
    Network,
)
from netproof.symbolic.batched import evaluate, supports
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.ir import MASKS, SCORINGS, TIE_RULES
from netproof.verifier.claims import Language
from netproof.verifier.claims.dyck import (
    DYCK,
    bracket,
    depth_profile,
    dyck_alphabet,
    is_dyck,
    stack_after,
)
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.claims.machines import (
    EMPTY,
    KEEP,
    POP,
    MachineError,
    SigmaRNN,
    Transition,
    TwoStackMachine,
    balanced_ab_machine,
    push,
    sigma_rnn,
)
from netproof.verifier.fuzzing.strategies import (
    CI_PROFILE,
    dyck_prefixes,
    dyck_words,
    first_near_misses,
    first_words,
    language_words,
    long_words,
    members,
    near_misses,
    networks,
    non_members,
    parity_near_misses,
    parity_words,
    sigma_rnns,
    two_stack_machines,
    words,
)

FAST = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
QUICK_FIND = settings(
    max_examples=2000, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
KD = [(1, 1), (1, 3), (2, 2), (3, 3), (5, 2)]


def sample(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    """``n`` examples of ``strategy``, the same on every run (derandomized, nothing shrunk)."""
    out: list[Any] = []

    @settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(x: Any) -> None:
        out.append(x)

    collect()
    return out


def exists(strategy: st.SearchStrategy[Any], condition: Callable[[Any], bool]) -> Any:
    """Some example of ``strategy`` satisfying ``condition`` (a NoSuchExample error otherwise)."""
    return find(strategy, condition, settings=QUICK_FIND)


# --------------------------------------------------------------------------- plain words


@FAST
@given(words(("a", "b", "c"), min_len=2, max_len=7))
def test_uniform_words_use_the_alphabet_and_respect_the_lengths(w: tuple[str, ...]) -> None:
    assert isinstance(w, tuple) and 2 <= len(w) <= 7 and set(w) <= {"a", "b", "c"}


@settings(FAST, max_examples=10)
@given(long_words(("0", "1"), min_len=100, max_len=150))
def test_long_words_have_lengths_between_their_bounds(w: tuple[str, ...]) -> None:
    assert 100 <= len(w) <= 150


def test_word_strategies_refuse_bad_lengths_with_a_message_naming_the_value() -> None:
    with pytest.raises(ValueError, match=r"max_len=2 must be >= min_len=5"):
        words(("a",), min_len=5, max_len=2)
    with pytest.raises(ValueError, match=r"min_len=-1 must be >= 0"):
        words(("a",), min_len=-1)
    with pytest.raises(ValueError, match=r"alphabet is empty"):
        words(())
    with pytest.raises(ValueError, match=r"no Dyck word has a length in 3\.\.3"):
        dyck_words(1, 1, min_len=3, max_len=3)
    with pytest.raises(ValueError, match=r"k=0 must be an int >= 1"):
        dyck_words(0, 1)


# --------------------------------------------------------------------------- Dyck


@pytest.mark.parametrize(("k", "depth"), KD)
@FAST
@given(data=st.data())
def test_dyck_words_are_members_of_dyck_k_d_within_the_lengths(
    k: int, depth: int, data: st.DataObject
) -> None:
    w = data.draw(dyck_words(k, depth, min_len=3, max_len=30))
    assert is_dyck(w, k, depth) and DYCK(k, depth).contains(w)
    assert 4 <= len(w) <= 30  # even lengths: at least 4 when min_len = 3


@settings(FAST, max_examples=15)
@given(dyck_words(2, 4, min_len=100, max_len=400))
def test_long_dyck_words_are_members_of_the_right_length(w: tuple[str, ...]) -> None:
    assert is_dyck(w, 2, 4) and 100 <= len(w) <= 400


@pytest.mark.parametrize(("k", "depth"), [(1, 4), (2, 6), (3, 3)])
def test_dyck_words_reach_every_depth_up_to_d(k: int, depth: int) -> None:
    for d in range(depth + 1):
        w = exists(
            dyck_words(k, depth, max_len=40), lambda w, d=d: max(depth_profile(w), default=0) == d
        )
        assert is_dyck(w, k, depth)
    assert (
        exists(dyck_words(k, depth, max_len=40), lambda w: True) == ()
    )  # shrinks to the empty word


def test_a_failing_member_shrinks_to_the_shortest_failing_member() -> None:
    # the shortest Dyck(2,3) word of depth 3 with a square bracket somewhere
    w = exists(dyck_words(2, 3), lambda w: max(depth_profile(w), default=0) == 3 and "[" in w)
    assert len(w) == 6 and is_dyck(w, 2, 3)


@pytest.mark.parametrize(("k", "depth"), KD)
@FAST
@given(data=st.data())
def test_near_misses_are_never_members(k: int, depth: int, data: st.DataObject) -> None:
    w = data.draw(near_misses(k, depth, max_len=30))
    assert not is_dyck(w, k, depth)
    assert 1 <= len(w) <= 30 and set(w) <= set(dyck_alphabet(k))


@settings(FAST, max_examples=20)
@given(near_misses(2, 3, min_len=100, max_len=300))
def test_long_near_misses_are_non_members_of_the_right_length(w: tuple[str, ...]) -> None:
    assert not is_dyck(w, 2, 3) and 100 <= len(w) <= 300


def _types_ok_but_unbalanced_depth(w: tuple[str, ...], k: int, depth: int) -> bool:
    return stack_after(w) == [] and max(depth_profile(w), default=0) > depth


def _mismatched_type(w: tuple[str, ...]) -> bool:
    opens = [bracket(s)[0] for s in w]
    plain = tuple("(" if o else ")" for o in opens)
    return len(w) % 2 == 0 and is_dyck(plain, 1, 99) and stack_after(w) is None


def test_near_misses_cover_every_kind_of_edit() -> None:
    k, depth = 2, 2
    strategy = near_misses(k, depth, max_len=20, max_edits=1)
    assert len(exists(strategy, lambda w: len(w) % 2 == 1)) == 1  # a deletion or an insertion
    assert exists(strategy, lambda w: _types_ok_but_unbalanced_depth(w, k, depth)) == tuple(
        "((()))"
    )  # overflow
    assert exists(strategy, _mismatched_type) in {tuple("(]"), tuple("[)")}  # a swapped type
    assert exists(strategy, lambda w: len(w) % 2 == 0 and depth_profile(w)[0] == -1) == tuple(
        ")("
    )  # a turned pair


@FAST
@given(dyck_prefixes(2, 3, max_len=12))
def test_dyck_prefixes_extend_to_members_within_the_bound(v: tuple[str, ...]) -> None:
    stack = stack_after(v)
    assert stack is not None and len(stack) <= 3 and len(v) + len(stack) <= 12
    assert all(max(depth_profile(v[:i]), default=0) <= 3 for i in range(len(v) + 1))


# --------------------------------------------------------------------------- PARITY and FIRST


@FAST
@given(parity_words(member=True), parity_words(member=False), parity_near_misses())
def test_parity_members_are_members_and_its_near_misses_are_not(
    m: tuple[str, ...], n: tuple[str, ...], x: tuple[str, ...]
) -> None:
    assert PARITY.contains(m) and not PARITY.contains(n) and not PARITY.contains(x)


@FAST
@given(first_words(member=True), first_words(member=False), first_near_misses())
def test_first_members_are_members_and_its_near_misses_are_not(
    m: tuple[str, ...], n: tuple[str, ...], x: tuple[str, ...]
) -> None:
    assert FIRST.contains(m) and not FIRST.contains(n) and not FIRST.contains(x)


EVEN = Language(
    name="EVEN", alphabet=("a", "b"), contains=lambda w: len(w) % 2 == 0, description="even lengths"
)


@pytest.mark.parametrize("language", [DYCK(2, 2), PARITY, FIRST, EVEN], ids=lambda lang: lang.name)
@FAST
@given(data=st.data())
def test_members_and_non_members_of_any_language_are_what_they_say(
    language: Language, data: st.DataObject
) -> None:
    assert language.contains(data.draw(members(language, max_len=12)))
    assert not language.contains(data.draw(non_members(language, max_len=12)))


@pytest.mark.parametrize("language", [DYCK(2, 2), PARITY, FIRST, EVEN], ids=lambda lang: lang.name)
def test_the_fuzzing_mix_holds_members_non_members_and_long_words(language: Language) -> None:
    mix = language_words(language, max_len=60)
    assert language.contains(exists(mix, lambda w: len(w) >= 2 and language.contains(w)))
    assert not language.contains(exists(mix, lambda w: not language.contains(w)))
    assert len(exists(mix, lambda w: len(w) >= 30)) >= 30


# --------------------------------------------------------------------------- networks


def _words_upto(alphabet: tuple[str, ...], n: int) -> list[tuple[str, ...]]:
    return [w for m in range(n + 1) for w in itertools.product(alphabet, repeat=m)]


@settings(FAST, max_examples=40)
@given(networks(softmax=False))
def test_random_hardmax_networks_run_the_same_exactly_and_batched(net: Network) -> None:
    ws = _words_upto(net.alphabet, 3)
    assert supports(net) is None
    got = evaluate(net, ws)
    for i, w in enumerate(ws):
        trace = run_exact(net, w)
        assert (got.logit(i), bool(got.accepted[i])) == (trace.output, trace.accepted), w


@settings(FAST, max_examples=40)
@given(networks(), st.lists(st.sampled_from(("a", "b", "c")), max_size=5).map(tuple))
def test_random_networks_with_softmax_heads_run_exactly_on_every_word(
    net: Network, w: tuple[str, ...]
) -> None:
    trace = run_exact(net, w)
    assert isinstance(trace.output, Fraction) and trace.accepted == (trace.output > 0)


def _features(net: Network) -> set[str]:
    seen: set[str] = set()
    for sub in net.layers:
        block = sub.block
        if isinstance(block, AttentionLayer):
            seen.add("W^O" if block.output is not None else "no W^O")
            for h in block.heads:
                seen |= {h.mask, h.scoring}
                seen.add(h.normalizer.tie if isinstance(h.normalizer, Hardmax) else "softmax")
        elif isinstance(block, FFN):
            seen |= {s.kind for s in block.steps if isinstance(s, Activation)}
        seen.add("residual" if sub.residual else "plain")
    return seen


def test_random_networks_cover_every_mask_scoring_tie_rule_activation_and_kind_of_sublayer() -> (
    None
):
    seen: set[str] = set()
    for net in sample(networks(), 150):
        seen |= _features(net)
    wanted = {
        *MASKS,
        *SCORINGS,
        *TIE_RULES,
        "softmax",
        "relu",
        "sigma",
        "step",
        "W^O",
        "no W^O",
        "residual",
        "plain",
    }
    assert wanted <= seen, f"never drawn: {sorted(wanted - seen)}"


def test_networks_refuse_an_alphabet_that_uses_the_special_tokens() -> None:
    with pytest.raises(ValueError, match=r"must not use the special tokens 'S' and 'E'"):
        networks(alphabet=("a", "S"))


# --------------------------------------------------------------------------- σ-RNNs


@settings(FAST, max_examples=50)
@given(sigma_rnns(), st.lists(st.sampled_from(("0", "1")), max_size=8).map(tuple))
def test_random_sigma_rnns_keep_every_state_in_the_unit_cube_and_read_one_symbol_per_step(
    rnn: SigmaRNN, w: tuple[str, ...]
) -> None:
    states = rnn.run(w)
    assert len(states) == len(w) + 1 and states[0] == rnn.h0
    assert all(
        len(h) == rnn.d and all(isinstance(x, Fraction) and 0 <= x <= 1 for x in h)
        for h in states[1:]
    )
    assert states[1:] == tuple(rnn.step(states[t], w[t]) for t in range(len(w)))
    assert rnn.accepts(w) == (rnn.output(w) > 0)


def test_a_hand_checked_sigma_rnn_tracks_the_parity_of_its_input() -> None:
    # p = u + v is the parity so far; on input bit x: u' = σ(p − x) (p = 1, x = 0) and
    # v' = σ(x − p) (p = 0, x = 1), so u' + v' = p XOR x. Accept iff u + v − 1/2 > 0.
    rnn = sigma_rnn(
        ("0", "1"),
        W_h=[[1, 1], [-1, -1]],
        W_x=[[0, -1], [0, 1]],
        b=[0, 0],
        h0=[0, 0],
        readout=[1, 1],
        readout_bias="-1/2",
    )
    assert rnn.run(("1", "1", "0", "1")) == tuple(
        tuple(map(Fraction, h)) for h in ((0, 0), (0, 1), (0, 0), (0, 0), (0, 1))
    )
    for n in range(8):
        for w in itertools.product("01", repeat=n):
            assert rnn.accepts(w) == PARITY.contains(w), w


def test_a_sigma_rnn_refuses_floats_and_wrong_shapes_with_the_fix() -> None:
    with pytest.raises(
        InexactNumberError, match=r"W_h\[0\]\[0\]=0\.5 is a float.*Fraction\(1, 2\)"
    ):
        sigma_rnn(("a",), W_h=[[0.5]], W_x=[[1]], b=[0], h0=[0], readout=[1])  # type: ignore[list-item]
    with pytest.raises(MachineError, match=r"W_x has 2 rows, expected d=1"):
        sigma_rnn(("a",), W_h=[[1]], W_x=[[1], [1]], b=[0], h0=[0], readout=[1])
    with pytest.raises(MachineError, match=r"h0\[0\]=0 must be a Fraction"):
        SigmaRNN(
            alphabet=("a",),
            W_h=((Fraction(1),),),
            W_x=((Fraction(1),),),
            b=(Fraction(0),),
            h0=(0,),
            readout=(Fraction(1),),
        )  # type: ignore[arg-type]
    rnn = sigma_rnn(("a",), W_h=[[1]], W_x=[[1]], b=[0], h0=[0], readout=[1])
    with pytest.raises(MachineError, match=r"symbol 'b' at position 2 is not in the alphabet"):
        rnn.run(("a", "b"))


# --------------------------------------------------------------------------- two-stack machines


def test_the_hand_written_two_stack_machine_accepts_exactly_the_balanced_words() -> None:
    m = balanced_ab_machine()
    for n in range(9):
        for w in itertools.product("ab", repeat=n):
            run = m.run(w)
            assert run.accepted == (w.count("a") == w.count("b")), w
            if run.accepted:
                assert run.steps == n + 1 and run.stacks == ((), ())


def test_a_two_stack_machine_that_does_not_halt_reports_none_after_its_budget() -> None:
    loop = TwoStackMachine(
        states=("q",),
        start="q",
        accept=("q",),
        input_alphabet=("a",),
        stack_alphabet=("a",),
        transitions=(
            Transition(state="q", top1=EMPTY, top2=EMPTY, next="q", op2=push("a")),
            Transition(state="q", top1=EMPTY, top2="a", next="q", op2=push("a")),
        ),
    )
    run = loop.run((), max_steps=50)
    assert run.accepted is None and run.steps == 50 and len(run.stacks[1]) == 50


@settings(FAST, max_examples=50)
@given(two_stack_machines(), st.lists(st.sampled_from(("a", "b")), max_size=6).map(tuple))
def test_random_two_stack_machines_are_deterministic_and_never_pop_an_empty_stack(
    m: TwoStackMachine, w: tuple[str, ...]
) -> None:
    keys = [(t.state, t.top1, t.top2) for t in m.transitions]
    assert len(keys) == len(set(keys))
    assert all(
        not (t.op1 == POP and t.top1 == EMPTY) and not (t.op2 == POP and t.top2 == EMPTY)
        for t in m.transitions
    )
    run = m.run(w, max_steps=200)
    assert run == m.run(w, max_steps=200)
    assert set(run.stacks[0]) | set(run.stacks[1]) <= set(m.stack_alphabet)
    if run.accepted is None:
        assert run.steps == 200
    else:  # halted: no transition applies, and it accepts iff it halted in an accepting state
        tops = (
            run.stacks[0][-1] if run.stacks[0] else EMPTY,
            run.stacks[1][-1] if run.stacks[1] else EMPTY,
        )
        assert (run.state, *tops) not in m.table()
        assert run.accepted == (run.state in m.accept)


def test_a_two_stack_machine_refuses_a_pop_of_an_empty_stack_and_nondeterminism() -> None:
    with pytest.raises(MachineError, match=r"pops stack 1, which is empty there"):
        TwoStackMachine(
            states=("q",),
            start="q",
            accept=(),
            input_alphabet=("a",),
            stack_alphabet=("a",),
            transitions=(Transition(state="q", top1=EMPTY, top2=EMPTY, next="q", op1=POP),),
        )
    t = Transition(state="q", top1="a", top2=EMPTY, next="q", op1=KEEP)
    with pytest.raises(MachineError, match=r"is given twice; the machine must be deterministic"):
        TwoStackMachine(
            states=("q",),
            start="q",
            accept=(),
            input_alphabet=("a",),
            stack_alphabet=("a",),
            transitions=(t, t),
        )
    with pytest.raises(MachineError, match=r"input symbols \['b'\] are not stack symbols"):
        TwoStackMachine(
            states=("q",),
            start="q",
            accept=(),
            input_alphabet=("b",),
            stack_alphabet=("a",),
            transitions=(),
        )


# --------------------------------------------------------------------------- profile


def test_the_ci_profile_is_registered_derandomized_and_without_a_database() -> None:
    profile = settings.get_profile(CI_PROFILE)
    assert profile.derandomize is True and profile.database is None and profile.deadline is None
