"""Words: splitting user input into symbols of a network's alphabet."""

from __future__ import annotations

import pytest

from netproof.symbolic import WordError, render, tokenize

BITS = ("0", "1")
BRACKETS = ("(1", ")1", "(2", ")2")


@pytest.mark.parametrize(
    ("alphabet", "word", "symbols"),
    [
        (BITS, "0110", ("0", "1", "1", "0")),
        (BITS, "", ()),
        (BITS, "0 1 1", ("0", "1", "1")),
        (BRACKETS, "(1 (2 )2 )1", ("(1", "(2", ")2", ")1")),
        (BRACKETS, "  (1   )1 ", ("(1", ")1")),
        (BRACKETS, "", ()),
        (BRACKETS, ["(2", ")2"], ("(2", ")2")),
        (BITS, ("1", "0"), ("1", "0")),
    ],
    ids=[
        "chars",
        "empty-chars",
        "chars-with-spaces",
        "tokens",
        "extra-spaces",
        "empty-tokens",
        "list",
        "tuple",
    ],
)
def test_a_word_splits_into_characters_or_space_separated_tokens(
    alphabet: tuple[str, ...], word: str | list[str], symbols: tuple[str, ...]
) -> None:
    assert tokenize(alphabet, word) == symbols


def test_a_character_outside_the_alphabet_is_refused_naming_the_symbol_and_its_position() -> None:
    with pytest.raises(
        WordError, match=r"symbol '2' at position 3 is not in the alphabet \{0, 1\}"
    ):
        tokenize(BITS, "012")


def test_a_token_outside_the_alphabet_is_refused_naming_the_token_and_its_position() -> None:
    with pytest.raises(
        WordError, match=r"symbol '\(3' at position 2 is not in the alphabet \{\(1, \)1, \(2, \)2\}"
    ):
        tokenize(BRACKETS, "(1 (3 )1")


def test_tokens_written_without_spaces_are_one_unknown_symbol() -> None:
    with pytest.raises(WordError, match=r"symbol '\(1\)1' at position 1 is not in the alphabet"):
        tokenize(BRACKETS, "(1)1")


def test_a_special_token_typed_by_the_user_is_refused_with_a_hint() -> None:
    with pytest.raises(
        WordError,
        match=r"symbol 'CLS' at position 1 .*special tokens are added by the network, not typed",
    ):
        tokenize(BITS, ["CLS", "0"])


def test_a_word_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"symbol 'x' at position 1"):
        tokenize(BITS, "x")


@pytest.mark.parametrize(
    ("alphabet", "word"), [(BITS, "0110"), (BITS, ""), (BRACKETS, "(1 (2 )2 )1")]
)
def test_render_is_the_inverse_of_tokenize(alphabet: tuple[str, ...], word: str) -> None:
    assert render(alphabet, tokenize(alphabet, word)) == word
