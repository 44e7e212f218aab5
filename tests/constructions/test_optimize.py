"""The B-RASP optimizer (constructions/rasp/optimize.py) keeps every program's language: the
optimized program equals the input on every word up to length 6, for the synthesized specs and
random programs, and an unsound rule injected on purpose is caught by that same comparison."""

from __future__ import annotations

import itertools
import random

import pytest

from netproof.constructions.rasp import optimize as O
from netproof.constructions.rasp.synth import synthesize
from netproof.constructions.rasp.synth_specs import SPECS
from netproof.verifier.claims.rasp import brasp as B

LIGHT = [s for s in SPECS if s.name not in ("dyck1-depth3", "dyck1-depth4", "subword-abc")]


def _words(alphabet: tuple[str, ...], n: int) -> list[tuple[str, ...]]:
    return [w for k in range(n + 1) for w in itertools.product(alphabet, repeat=k)]


def _differences(p: B.Program, q: B.Program, n: int = 6) -> list[tuple[str, ...]]:
    return [w for w in _words(p.alphabet, n) if B.accepts(p, w) != B.accepts(q, w)]


def _random_vec(rng: random.Random, depth: int, alphabet: tuple[str, ...]) -> B.BVec:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([B.token(a) for a in alphabet] + [B.TRUE, B.FALSE])
    kind = rng.choice(["not", "and", "or", "attend", "attend"])
    if kind == "not":
        return ~_random_vec(rng, depth - 1, alphabet)
    if kind in ("and", "or"):
        x, y = _random_vec(rng, depth - 1, alphabet), _random_vec(rng, depth - 1, alphabet)
        if rng.random() < 0.3:
            y = x if rng.random() < 0.5 else ~x
        return x & y if kind == "and" else x | y
    p, q, d = (_random_vec(rng, depth - 1, alphabet) for _ in range(3))
    score = rng.choice([p.at_j, p.at_j & q.at_i, B.FALSE, B.TRUE, p.at_i | ~q.at_j])
    value = rng.choice([q.at_j, d.at_i, B.TRUE, B.FALSE, q.at_j & p.at_i])
    make = B.leftmost if rng.random() < 0.5 else B.rightmost
    return make(rng.choice(["past", "future", "all"]), score=score, value=value, default=d)


def _random_programs(count: int, seed: int = 37) -> list[B.Program]:
    rng = random.Random(seed)
    ab = ("a", "b")
    return [
        B.Program(f"r{k}", ab, output=_random_vec(rng, 4, ab) | B.token("a") & B.token("b"))
        for k in range(count)
    ]


def _check_specs(specs: list) -> None:
    for s in specs:
        program = synthesize(s.spec, "p").program
        opt = O.optimize(program)
        assert opt.ops_after <= opt.ops_before
        assert _differences(program, opt.program) == [], s.name


def test_the_small_synthesized_specs_keep_their_language_on_every_word_up_to_length_6() -> None:
    _check_specs(LIGHT[:7])


@pytest.mark.slow
def test_the_larger_synthesized_specs_keep_their_language_on_every_word_up_to_length_6() -> None:
    _check_specs(LIGHT[7:])


def test_random_programs_keep_their_language_and_never_grow() -> None:
    for program in _random_programs(150):
        opt = O.optimize(program)
        assert opt.ops_after <= opt.ops_before
        assert _differences(program, opt.program, 5) == [], B.show(program)


def test_commuted_and_renamed_copies_become_one_operation() -> None:
    a, b = B.token("a"), B.token("b")
    first = B.rightmost("past", score=(a & b).at_j, value=B.TRUE).named("first")
    twin = B.rightmost("past", score=(b & a).at_j, value=B.TRUE).named("twin")
    program = B.Program("p", ("a", "b"), output=(first | twin) & (B.TRUE | a))
    opt = O.optimize(program)
    assert opt.program.output == first
    assert opt.saved == opt.ops_before - opt.ops_after > 0


def test_an_attention_whose_score_is_false_is_its_default() -> None:
    a = B.token("a")
    dead = B.leftmost("all", score=B.FALSE, value=a.at_j, default=~a)
    assert O.optimize(B.Program("p", ("a", "b"), output=dead)).program.output == B.Not(a)


def test_an_unsound_rule_injected_is_caught_by_the_comparison(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # P ∨ ¬P = 0 (instead of 1): a wrong Boolean rule
    def wrong_or(left: B.BVec, right: B.BVec) -> B.BVec | None:
        if (isinstance(left, B.Not) and left.arg is right) or (
            isinstance(right, B.Not) and (right.arg is left)
        ):
            return B.FALSE
        return None

    # an attention whose value is constant is taken for its default: wrong when a j is chosen
    def wrong_attend(op: B.Attend) -> B.BVec | None:
        return op.default if isinstance(op.value, B.Const) else None

    caught = []
    for rule, fake in (("simplify_or", wrong_or), ("simplify_attend", wrong_attend)):
        with monkeypatch.context() as m:
            m.setattr(O, rule, fake)
            bad = [p for p in _random_programs(150) if _differences(p, O.optimize(p).program, 5)]
        caught.append((rule, len(bad)))
    assert all(n > 0 for _, n in caught), caught


def test_a_program_that_is_not_a_program_is_refused_with_the_type_named() -> None:
    with pytest.raises(AttributeError, match="output"):
        O.optimize("not a program")  # type: ignore[arg-type]
