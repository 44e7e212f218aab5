"""The kernel's solver calls: restarts with fresh seeds in doubling slices, within the time given."""

from __future__ import annotations

from typing import Any

import pytest

from netproof.kernel.interpret import solve


class _FakeZ3:
    """A stand-in for the z3 module whose solvers answer ``answers[seed]`` (unknown: 'timeout')."""

    unknown, unsat = "unknown", "unsat"

    def __init__(self, answers: dict[int, tuple[str, str]]) -> None:
        self.answers, self.tries = answers, []  # tries: (seed, timeout in ms)

    def Then(self, *_tactics: str) -> Any:
        fake = self

        class _Tactic:
            def solver(self) -> Any:
                return _Solver(fake)

        return _Tactic()


class _Solver:
    def __init__(self, fake: _FakeZ3) -> None:
        self.fake, self.params, self.why = fake, {}, ""

    def set(self, key: str, value: int) -> None:
        self.params[key] = value

    def add(self, *_constraints: Any) -> None:
        pass

    def check(self) -> str:
        seed = self.params["random_seed"]
        self.fake.tries.append((seed, self.params["timeout"]))
        got, self.why = self.fake.answers.get(seed, ("unknown", "timeout"))
        return got

    def reason_unknown(self) -> str:
        return self.why


def test_the_slices_double_from_one_second_and_the_last_gets_what_is_left() -> None:
    fake = _FakeZ3({})
    solve(fake, 30_000, "query")
    assert fake.tries == [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 15_000)]


def test_a_query_is_tried_again_with_a_new_seed_until_a_try_answers() -> None:
    fake = _FakeZ3({4: ("unsat", "")})
    got, _ = solve(fake, 60_000, "query")
    assert got == "unsat" and fake.tries == [(1, 1000), (2, 2000), (3, 4000), (4, 8000)]


def test_the_tries_never_take_more_than_the_time_given_and_then_the_answer_is_unknown() -> None:
    fake = _FakeZ3({})
    got, s = solve(fake, 4500, "query")
    assert got == "unknown" and s.reason_unknown() == "timeout"
    assert [ms for _, ms in fake.tries] == [1000, 2000, 1500]


def test_an_unknown_for_another_reason_than_the_slice_ending_is_not_tried_again() -> None:
    fake = _FakeZ3({1: ("unknown", "(incomplete quantifiers)")})
    got, s = solve(fake, 60_000, "query")
    assert got == "unknown" and s.reason_unknown() == "(incomplete quantifiers)"
    assert fake.tries == [(1, 1000)]


@pytest.mark.parametrize("answer", ["sat", "unsat"])
def test_a_real_query_gets_z3_s_answer(answer: str) -> None:
    z3 = pytest.importorskip("z3")
    x = z3.Int("x")
    got, s = solve(z3, 10_000, x * x == (4 if answer == "sat" else 2))
    assert str(got) == answer
    if answer == "sat":
        assert s.model().eval(x * x) == 4


def test_a_query_that_needs_one_long_run_gets_it_within_twice_its_time() -> None:
    """A query answered only by a run of 12 s or more: the first slice that long is the fifth
    (16 s), after 1 + 2 + 4 + 8 = 15 s of shorter tries, so it is answered 31 s in."""
    fake = _FakeZ3({5: ("unsat", "")})
    got, _ = solve(fake, 60_000, "query")
    assert got == "unsat" and sum(ms for _, ms in fake.tries) == 31_000
