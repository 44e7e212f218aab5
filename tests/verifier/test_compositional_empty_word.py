"""The compositional prover on a network that has no verdict on the empty word: a network with
no prefix or suffix token reads its verdict at word position -1, which the empty word does not
have (the exact interpreter raises a WordError). The prover says so (``Unknown``, unsupported),
at every mode of lengths; it used to crash with an IndexError in ``Abstraction.embed``. And a
language whose automaton accepts nothing, whose membership used to be built in z3's global
context (a context mismatch)."""

from __future__ import annotations

import dataclasses

import pytest

from netproof.constructions.rasp.brasp_lemmas import brasp_lemmas, program_automaton
from netproof.constructions.rasp.compile_brasp import compile_brasp
from netproof.constructions.rasp.library import BRASP_PROGRAMS
from netproof.symbolic import WordError
from netproof.symbolic.exact import run
from netproof.verifier.claims import Proved, Recognizes, Refuted, Unknown
from netproof.verifier.claims.rasp import brasp
from netproof.verifier.smt.compositional import prove_recognizes

pytestmark = pytest.mark.z3


def _bare(name: str, min_len: int) -> tuple:
    """A compiled B-RASP network stripped of its BOS and EOS tokens, its program's claim and lemmas."""
    program = BRASP_PROGRAMS[name]
    net = compile_brasp(program)
    bare = dataclasses.replace(
        net, embedding=dataclasses.replace(net.embedding, prefix=(), suffix=())
    )
    language = dataclasses.replace(brasp.language(program), automaton=program_automaton(program))
    claim = Recognizes(
        id="network=program",
        statement="bare network = program",
        reference="test",
        language=language,
        min_len=min_len,
        max_len=3,
    )
    return bare, claim, brasp_lemmas(program)


def test_the_exact_interpreter_gives_no_verdict_on_the_empty_word_of_a_network_without_prefix_or_suffix_tokens() -> (
    None
):
    bare, _claim, _lemmas = _bare("no_aa", 0)
    with pytest.raises(WordError, match="readout position -1 is outside the 0 tokens"):
        run(bare, ())


@pytest.mark.parametrize("lengths", ["all", "ranges", "each"])
def test_the_compositional_prover_calls_the_empty_word_unsupported_instead_of_crashing(
    lengths: str,
) -> None:
    bare, claim, lemmas = _bare("no_aa", 0)
    verdict = prove_recognizes(bare, claim, lemmas, 3, timeout=30, lengths=lengths).verdict
    assert isinstance(verdict, Unknown)
    assert "readout position -1 is outside the 0 tokens of the empty word" in verdict.reason
    assert "min_len >= 1" in verdict.reason


def test_from_length_one_the_same_network_is_refuted_by_a_word_the_exact_interpreter_reproduces() -> (
    None
):
    bare, claim, lemmas = _bare("contains_ab", 1)
    verdict = prove_recognizes(bare, claim, lemmas, 3, timeout=30, lengths="each").verdict
    assert isinstance(verdict, Refuted)
    assert verdict.word is not None
    assert run(bare, verdict.word).accepted != claim.language.contains(verdict.word)


def test_a_program_whose_automaton_accepts_nothing_is_proved_equal_to_its_network_at_every_length_asked() -> (
    None
):
    # ◁_j [all, Q_a(j)] ¬Q_a(j): the first a, read as "not a", is always 0 (and the default Q_a too).
    a = brasp.token("a")
    program = brasp.Program(
        "never", ("a", "b"), output=brasp.leftmost("all", score=a.at_j, value=~a.at_j, default=a)
    )
    automaton = program_automaton(program)
    assert automaton is not None and automaton.accepting == frozenset()
    claim = Recognizes(
        id="network=program",
        statement="network = program",
        reference="test",
        language=dataclasses.replace(brasp.language(program), automaton=automaton),
        min_len=0,
        max_len=3,
    )
    verdict = prove_recognizes(
        compile_brasp(program), claim, brasp_lemmas(program), 3, timeout=30, lengths="each"
    ).verdict
    assert isinstance(verdict, Proved), verdict
