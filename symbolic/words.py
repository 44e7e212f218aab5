"""Words: turning user input into a tuple of symbols of a network's alphabet.

>>> tokenize(("0", "1"), "0110")
('0', '1', '1', '0')
>>> tokenize(("(1", ")1"), "(1 )1")
('(1', ')1')
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import WordError


def tokenize(alphabet: Sequence[str], word: str | Sequence[str]) -> tuple[str, ...]:
    """Split ``word`` into symbols of ``alphabet`` and check each one.

    A string with whitespace is split on whitespace (tokens like ``(3``); otherwise, when every
    symbol is one character, it is split into characters. A sequence is taken as given.
    """
    if isinstance(word, str):
        if any(c.isspace() for c in word) or any(len(s) != 1 for s in alphabet):
            symbols = tuple(word.split())
        else:
            symbols = tuple(word)
    else:
        symbols = tuple(word)
    allowed = set(alphabet)
    for pos, sym in enumerate(symbols, start=1):
        if sym not in allowed:
            raise WordError(
                f"symbol {sym!r} at position {pos} is not in the alphabet "
                f"{{{', '.join(alphabet)}}}; special tokens are added by the network, not typed"
            )
    return symbols


def render(alphabet: Sequence[str], word: Sequence[str]) -> str:
    """The inverse of :func:`tokenize`: characters joined, or tokens joined by spaces."""
    if all(len(s) == 1 for s in alphabet):
        return "".join(word)
    return " ".join(word)
