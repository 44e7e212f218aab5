"""Suzgun et al. 2019: the hand-set Stack-RNN, Stack-LSTM and Baby-NTM (spec §3.3), their
claims, and the memory operations (spec §5 S1–S6)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.marnn_tasks import (
    dyck_task,
    palindrome_task,
    sample_palindrome,
    sample_pcfg_dyck,
    sample_set,
)
from netproof.constructions.suzgun2019 import TASKS, baby_ntm, controller, stack_lstm, stack_rnn
from netproof.symbolic import fingerprint, pretty
from netproof.symbolic.recurrent import run
from netproof.verifier.claims import ExactFact, PredictsNext, Proved, Refuted, SoftAgrees
from netproof.verifier.exhaustive.checker import Job, check

BUILDERS = {"stack-rnn": stack_rnn, "baby-ntm": baby_ntm, "stack-lstm": stack_lstm}
SMALL = {"d2": 4, "d3": 3, "palindrome": 4, "homomorphic-palindrome": 3}


def shown(trace: Any) -> list[str]:
    return [" ".join(sorted(p)) for p in trace.predictions]


def job_of(name: str, **given: str) -> tuple[Job, dict[str, Any]]:
    c = REGISTRY[name]
    values = c.parse_params(given)
    return Job(c, values), {cl.id: cl for cl in c.claims(values)}


# --------------------------------------------------------------------------- the paper's examples


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_architecture_gives_table_1s_d2_outputs_for_the_sample_word(name: str) -> None:
    trace = run(BUILDERS[name](task="d2"), tuple("([])"))
    assert shown(trace) == ["( ) [", "( [ ]", "( ) [", "( ["]  # Table 1: (/[/)  (/[/]  (/[/)  (/[


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_architecture_gives_table_1s_palindrome_outputs_and_the_lost_eos(name: str) -> None:
    trace = run(BUILDERS[name](task="homomorphic-palindrome"), tuple("abc#zyx"))
    assert shown(trace) == ["# a b c"] * 3 + ["z", "y", "x", "EOS"]


def test_the_sizes_are_the_specs_h_and_m() -> None:
    sizes = {task: (len(controller(task).hidden), len(controller(task).element)) for task in TASKS}
    assert sizes == {
        "d2": (16, 4),
        "d3": (22, 6),
        "palindrome": (18, 3),
        "homomorphic-palindrome": (21, 3),
    }


def test_the_stack_lstm_keeps_its_cell_state_equal_to_the_stack_rnns_hidden_state() -> None:
    w = tuple("([)]((")
    lstm, rnn = run(stack_lstm(task="d2"), w), run(stack_rnn(task="d2"), w)
    for a, b in zip(lstm.steps, rnn.steps, strict=True):
        assert a.cell == a.h == b.h
        assert a.memory == b.memory
    assert fingerprint(stack_lstm(task="d2")) != fingerprint(stack_rnn(task="d2"))


def test_the_baby_ntm_pushes_with_rotate_right_and_pops_with_pop_left() -> None:
    trace = run(baby_ntm(task="d2", slots=4), tuple("(["))
    assert [s.decision["ROTATE-RIGHT"] for s in trace.steps] == [1, 1]
    top, below = trace.steps[-1].memory[:2]
    assert (top, below) == ((0, 1, 1, 0), (1, 0, 0, 0))  # own:[ and below:( | own:(
    popped = run(baby_ntm(task="d2", slots=4), tuple("([]")).steps[-1]
    assert popped.decision["POP-LEFT"] == 1 and popped.memory[0] == (1, 0, 0, 0)


def test_the_printed_form_names_the_cell_its_normalizer_and_every_map() -> None:
    text = pretty(baby_ntm(task="d2", slots=3))
    assert text.startswith("recurrent network baby-ntm-d2\n")
    assert "cell baby-ntm slots=3 activation=sigma gate=sigma decision=hardmax(tie=average)" in text
    assert "  op POP-RIGHT: (1,0)=1 (2,1)=1\n" in text
    assert "W_a.POP-LEFT := 1*close" in text
    soft = pretty(stack_rnn(task="d2", scale=6))
    assert (
        "activation=tanh gate=logistic decision=softmax(base=E=e^6)" in soft
        and "h0: one=-1" in soft
    )


# --------------------------------------------------------------------------- claims


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_the_next_symbol_sets_are_exact_on_every_string_up_to_a_small_bound(
    name: str, task: str
) -> None:
    job, claims = job_of(name, task=task)
    claim = next(cl for cl in claims.values() if isinstance(cl, PredictsNext))
    verdict = check(job, claim, max_len=SMALL[task])
    assert isinstance(verdict, Proved), verdict
    alphabet = len(claim.task.inputs)
    assert verdict.checked == sum(alphabet**m for m in range(1, SMALL[task] + 1))


@pytest.mark.parametrize("name", ["stack-rnn", "baby-ntm"])
def test_the_soft_version_at_k_6_agrees_with_the_exact_one(name: str) -> None:
    job, claims = job_of(name)
    verdict = check(job, claims["S5-soft-agrees"], max_len=3)
    assert isinstance(verdict, Proved), verdict
    assert "smallest |y − 1/2| met >= 0.4" in verdict.detail


def test_the_soft_version_at_k_1_is_refuted_with_the_shortest_word_it_gets_wrong() -> None:
    job, claims = job_of("stack-rnn", scale="1")
    verdict = check(job, claims["S5-soft-agrees"], max_len=3)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("(", ")")
    assert verdict.detail == "on '()' (K = 1): the soft network predicts {}, the exact one {(, [}"


def test_the_memory_operation_facts_are_proved_and_the_paper_reading_of_pop_right_is_refuted() -> (
    None
):
    job, claims = job_of("baby-ntm", variant="paper")
    facts = {cid: check(job, cl) for cid, cl in claims.items() if isinstance(cl, ExactFact)}
    assert {cid for cid, v in facts.items() if isinstance(v, Proved)} == {
        "M1-printed",
        "M2-no-op-identity",
        "M3-monoid-action",
        "M4-pop-right-effect",
    }
    refuted = facts["M5-pop-right-pops"]
    assert isinstance(refuted, Refuted)
    assert "POP-RIGHT then gives [0, 13, 2, 3, 5], not [2, 3, 5, 7, 0]" in refuted.detail


def test_the_papers_eos_less_palindrome_target_is_refuted_on_the_word_hash() -> None:
    job, claims = job_of("baby-ntm", variant="paper", task="palindrome")
    verdict = check(job, claims["S4-paper-no-eos"], max_len=3)
    assert isinstance(verdict, Refuted) and verdict.word == ("#",)
    assert verdict.values == {"predicted": "{EOS}", "target": "{}", "t": "1"}


def test_a_baby_ntm_with_too_few_slots_is_refuted_once_the_depth_reaches_them() -> None:
    job, claims = job_of("baby-ntm", slots="2")
    verdict = check(job, claims["S1-next-sets"], max_len=4)
    assert isinstance(verdict, Refuted)
    assert len(verdict.word or ()) == 4 and verdict.word[:2] == ("(", "(")


def test_appendix_as_rewriting_of_w_hh_h_tilde_is_a_symbolic_identity() -> None:
    job, claims = job_of("stack-rnn")
    verdict = check(job, claims["S7-appendix-a"])
    assert isinstance(verdict, Proved) and verdict.method == "sympy (simplify)"


def test_the_soft_claim_carries_the_soft_network_of_the_same_task() -> None:
    _job, claims = job_of("stack-rnn", task="palindrome", scale="10")
    claim = claims["S5-soft-agrees"]
    assert isinstance(claim, SoftAgrees) and claim.scale_text == "K = 10"
    assert claim.soft == stack_rnn(task="palindrome", scale=10)


# --------------------------------------------------------------------------- spec bounds (slow)


SPEC_BOUND = {"d2": 8, "d3": 6, "palindrome": 8, "homomorphic-palindrome": 6}


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", ["stack-rnn", "baby-ntm"])
def test_the_next_symbol_sets_are_exact_on_every_string_up_to_the_specs_bound(
    name: str, task: str
) -> None:
    job, claims = job_of(name, task=task)
    claim = next(cl for cl in claims.values() if isinstance(cl, PredictsNext))
    verdict = check(job, claim, max_len=SPEC_BOUND[task])
    assert isinstance(verdict, Proved), verdict


@pytest.mark.slow
def test_every_pcfg_d2_word_of_the_papers_training_and_test_ranges_is_predicted_right() -> None:
    task = dyck_task(2)
    for name in ("stack-rnn", "baby-ntm"):
        net = BUILDERS[name](task="d2")
        for seed, (lo, hi) in enumerate(((2, 50), (52, 100))):
            words, _draws = sample_set(
                random.Random(seed),
                lambda r, hi=hi: sample_pcfg_dyck(r, 2, max_len=hi),
                count=5000,
                min_len=lo,
                max_len=hi,
            )
            for w in words:
                assert run(net, w).predictions == task.next_sets(w), (name, w)


@pytest.mark.slow
@pytest.mark.parametrize("K", [6, 10, 20])
def test_the_soft_stack_rnn_reproduces_the_exact_outputs_on_long_d2_and_palindrome_words(
    K: int,
) -> None:
    rng = random.Random(K)
    long_d2, _draws = sample_set(
        rng, lambda r: sample_pcfg_dyck(r, 2, max_len=100), count=5, min_len=52, max_len=100
    )
    cases = [("d2", w) for w in long_d2]
    cases += [
        ("palindrome", sample_palindrome(rng, hom=False, min_len=51, max_len=99)) for _ in range(2)
    ]
    for task, w in cases:
        soft = run(stack_rnn(task=task, scale=K), w, "interval").predictions
        assert soft == run(stack_rnn(task=task), w).predictions, (K, w)
    assert all(palindrome_task(hom=False).contains(w) for task, w in cases if task == "palindrome")
