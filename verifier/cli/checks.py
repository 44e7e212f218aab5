"""The command line's shared argument checks: argparse ``type=`` validators (a positive count,
finite positive seconds, a usable output directory or file) and the size-limited reading of a
word from ``@FILE``, each refusing bad input in one line before anything runs or is written.

An argparse validator raises :class:`argparse.ArgumentTypeError`, which the parser prints as
``netproof: error: argument --jobs: ...`` (exit status 2); :func:`read_word_file` raises the
CLI's :class:`~.usage.UsageError`. An output path is checked, never created, here: a command
that is refused leaves nothing behind, and one that runs makes its folders as it writes.

>>> positive_int("4")
4
>>> positive_int("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: 0 must be an integer >= 1
>>> positive_seconds("nan")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: 'nan' must be a finite number of seconds > 0

May import the CLI's usage error only.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from .usage import UsageError

__all__ = [
    "EMPTY_WORD_LINES",
    "MAX_EXACT_SYMBOLS",
    "MAX_FUZZ_LEN",
    "MAX_PLOT_LENGTH",
    "MAX_PLOT_STRINGS",
    "MAX_PLOT_WORK",
    "MAX_PRECISION_N",
    "MAX_RUN_LENGTH",
    "MAX_RUN_WORDS",
    "MAX_WORD_FILE_BYTES",
    "WordLines",
    "fuzz_length",
    "interval_digits",
    "nonnegative_int",
    "output_dir",
    "output_file",
    "output_path",
    "plot_length",
    "plot_size",
    "plot_strings",
    "positive_int",
    "positive_seconds",
    "precision_n",
    "read_word_file",
    "read_words",
    "run_length",
]

MAX_WORD_FILE_BYTES = 1 << 20
"""The largest word file ``@FILE`` that ``run`` reads (1 MiB): a longer word is refused with
its size, before it is read into memory."""

MAX_EXACT_SYMBOLS = 4096
"""The longest word ``run`` evaluates with the exact backends (``auto``, ``exact``, ``sympy``,
``interval``): an attention layer costs n² exact products whose numbers grow with n, so longer
words run for minutes to hours; ``--backend torch`` (floats: evidence, not proof) takes longer
ones."""

MAX_FUZZ_LEN = 10_000
"""The longest word ``fuzz --max-len`` takes: hypothesis draws words of at most about 16,000
symbols (it refuses a strategy whose shortest list is over its buffer)."""

MAX_RUN_WORDS = 10_000
"""The most words one ``run @FILE`` (or ``run -``) evaluates: an exact run of a word of a few
hundred symbols takes up to a second, so 10,000 such words stay within minutes."""

MAX_RUN_LENGTH = 2**53
"""The largest total length ``run --length`` takes: float64 holds every integer up to 2^53
exactly, and past it the positions i and n of a float run (``--backend torch``, the float
comparisons of positional features) are no longer exact."""

MAX_PRECISION_N = 4096
"""The longest words ``precision --max-n`` tests: the exact reference costs n² exact products
per word and layer; FIRST with the default 16 words per length took 8 s at 1,024, 21 s at 2,048
and 225 s at 4,096 on the 2-core development machine, so 8,192 would take about 15 minutes."""

MAX_PLOT_LENGTH = 4096
"""The longest word ``plot --lengths`` takes: float attention costs n² per word, and a point
averages ``--strings`` words (see :data:`MAX_PLOT_WORK` for the two together)."""

MAX_PLOT_WORK = 4096**2 * 100
"""The most ``max(--lengths)² × --strings`` one ``plot`` takes: Figure 2 at |w| = 4,096 with 100
strings took 340 s on the 2-core development machine (the defaults, |w| up to 1,000 with 1,000
strings, are 1.0e9 of it), so a run stays within about 10 minutes."""

MAX_PLOT_STRINGS = 100_000
"""The most random words per point ``plot --strings`` takes (the spec uses 1,000): a point's
cost grows linearly with it, and 100,000 words already give a mean to about 0.3% of its spread."""

_CHUNK = 1 << 16


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer; give a whole number >= {minimum}"
        ) from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} must be an integer >= {minimum}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (``--jobs``, ``--examples``, ``--strings``, ...)."""
    return _integer(text, 1)


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (a word length: ``--n``, ``--max-n``, ``--max-len``)."""
    return _integer(text, 0)


def fuzz_length(text: str) -> int:
    """A fuzz run's longest word (``fuzz --max-len``): an integer from 0 to :data:`MAX_FUZZ_LEN`."""
    value = _integer(text, 0)
    if value > MAX_FUZZ_LEN:
        raise argparse.ArgumentTypeError(
            f"{value:,} is over the limit {MAX_FUZZ_LEN:,}: hypothesis cannot draw longer words; give --max-len <= "
            f"{MAX_FUZZ_LEN} (`prove --method smt` covers longer lengths)"
        )
    return value


def _at_most(value: int, limit: int, flag: str, why: str) -> int:
    if value > limit:
        raise argparse.ArgumentTypeError(f"{value:,} is over the limit {limit:,}: {why}")
    return value


def run_length(text: str) -> int:
    """``run --length``: a total length from 0 to :data:`MAX_RUN_LENGTH` (2^53)."""
    return _at_most(
        _integer(text, 0),
        MAX_RUN_LENGTH,
        "--length",
        "float64 holds every integer up to 2^53 exactly, and past it positions and lengths of a float run "
        "are no longer exact; give a smaller N",
    )


def precision_n(text: str) -> int:
    """``precision --max-n``: an integer from 1 to :data:`MAX_PRECISION_N`."""
    return _at_most(
        _integer(text, 1),
        MAX_PRECISION_N,
        "--max-n",
        "the exact reference costs n² exact products per word and layer (FIRST: 225 s at n = 4,096, "
        "about 4 times more at each doubling); give --max-n 4096 or less",
    )


def plot_length(text: str) -> int:
    """``plot --lengths``: a word length from 1 to :data:`MAX_PLOT_LENGTH`."""
    return _at_most(
        _integer(text, 1),
        MAX_PLOT_LENGTH,
        "--lengths",
        "float attention costs n² per word and each point averages --strings words (|w| = 4,096 with 100 strings "
        "took 340 s on 2 cores); give lengths of 4096 or less",
    )


def plot_size(lengths: Sequence[int], strings: int) -> None:
    """Refuse a ``plot`` whose longest length and strings per point together are over
    :data:`MAX_PLOT_WORK` (a run of more than about 10 minutes), naming both fixes."""
    longest = max(lengths, default=0)
    if longest * longest * strings > MAX_PLOT_WORK:
        fewer = MAX_PLOT_WORK // (longest * longest)
        raise UsageError(
            f"--lengths up to {longest:,} with --strings {strings:,} is {longest * longest * strings / MAX_PLOT_WORK:.1f} "
            f"times the most one plot takes (longest length² × strings <= 4,096² × 100, since float attention costs n² "
            f"per word: |w| = 4,096 with 100 strings took 340 s on 2 cores); give --strings {fewer:,} or fewer, or "
            "shorter --lengths"
        )


def plot_strings(text: str) -> int:
    """``plot --strings``: a count of random words per point from 1 to :data:`MAX_PLOT_STRINGS`."""
    return _at_most(
        _integer(text, 1),
        MAX_PLOT_STRINGS,
        "--strings",
        "a point's cost grows with its words, and 100,000 already pin the mean to about 0.3% of its spread; "
        "give --strings 100000 or less (the spec uses 1000)",
    )


MIN_INTERVAL_DIGITS = 16
"""The fewest ``check-model --digits``: fewer decide nothing the float64 batches leave open."""
MAX_INTERVAL_DIGITS = 1000
"""The most ``check-model --digits``: mpmath's cost grows with them; 1000 settle any margin a
model's weights can give without an exact run (``--exact``)."""


def interval_digits(text: str) -> int:
    """The digits of the rigorous interval fallback (``check-model --digits``): an integer from
    :data:`MIN_INTERVAL_DIGITS` to :data:`MAX_INTERVAL_DIGITS`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer; give {MIN_INTERVAL_DIGITS} to {MAX_INTERVAL_DIGITS} digits"
        ) from None
    if not MIN_INTERVAL_DIGITS <= value <= MAX_INTERVAL_DIGITS:
        raise argparse.ArgumentTypeError(
            f"{value:,} digits is outside {MIN_INTERVAL_DIGITS}..{MAX_INTERVAL_DIGITS}: fewer than "
            f"{MIN_INTERVAL_DIGITS} decide nothing the float64 batches leave open, more cost time "
            "for no gain (--exact decides what intervals leave open)"
        )
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (``--timeout``): NaN and infinity are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds; give e.g. 60 or 0.5"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds > 0")
    return value


def _usable_folder(folder: str, arg: str) -> None:
    """Refuse the path ``arg`` (to be written in ``folder``, existing or to be made) unless the
    nearest existing ancestor of ``folder`` is a directory this process may write in."""
    probe = os.path.abspath(folder)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    shown = probe if os.path.isabs(folder) else os.path.relpath(probe)
    if not os.path.isdir(probe):
        raise argparse.ArgumentTypeError(
            f"cannot write {arg!r}: {shown!r} is a file, not a directory; give a path whose folders are directories"
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(
            f"cannot write {arg!r}: the directory {shown!r} is not writable; give a path in a directory you can write in"
        )


def output_dir(text: str) -> str:
    """A directory to write records, logs or a database in: '' (none) or a path that is a
    directory or can be made one (its nearest existing ancestor is a writable directory)."""
    if text:
        _usable_folder(text, text)
    return text


def output_file(text: str) -> str:
    """A file to write (atomically): '' (stdout) or a path that is not a directory and whose
    folder exists or can be made."""
    if text:
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(
                f"{text!r} is a directory; give a file path (e.g. {os.path.join(text, 'out')})"
            )
        _usable_folder(os.path.dirname(text) or ".", text)
    return text


def output_path(text: str) -> str:
    """A file to write, or an existing directory to write it in (``new --out``): '' (the
    default name) or a path whose folder exists or can be made."""
    if text and not os.path.isdir(text):
        _usable_folder(os.path.dirname(text) or ".", text)
    return text


EMPTY_WORD_LINES = ('""', "''")
"""A line of a word file that is the empty word: the quotes a shell needs for it (``run NAME ""``)."""


@dataclass(frozen=True, slots=True)
class WordLines:
    """The words of a word file (``run NAME @FILE``, ``-``): each with its line number, and the
    numbers of the blank lines left out."""

    words: tuple[tuple[int, str], ...]
    blank: tuple[int, ...]

    def blank_note(self) -> str:
        """'' when no line was blank; else what was left out and how to list the empty word."""
        if not self.blank:
            return ""
        lines = ", ".join(map(str, self.blank[:5])) + (", …" if len(self.blank) > 5 else "")
        many = len(self.blank) != 1
        return (
            f"{len(self.blank)} blank line{'s' * many} left out (line{'s' * many} {lines}); "
            'a line "" is the empty word'
        )


def read_words(path: str, limit: int = MAX_WORD_FILE_BYTES) -> WordLines:
    """The words in the text file ``path``, one per line (``run NAME @FILE``; ``-``: standard
    input), each stripped, with their line numbers; a line ``""`` (or ``''``) is the empty word,
    blank lines are left out (and counted); the limits of :func:`read_word_file`."""
    words: list[tuple[int, str]] = []
    blank: list[int] = []
    for number, line in enumerate(read_word_file(path, limit, strip=False).splitlines(), 1):
        text = line.strip()
        if not text:
            blank.append(number)
        else:
            words.append((number, "" if text in EMPTY_WORD_LINES else text))
    return WordLines(tuple(words), tuple(blank))


def read_word_file(path: str, limit: int = MAX_WORD_FILE_BYTES, *, strip: bool = True) -> str:
    """The text of the file ``path`` (``-``: standard input), stripped (unless ``strip`` is
    False): read in chunks, at most ``limit`` bytes (a larger file is refused with its size before
    it is read), UTF-8 only."""
    try:
        with nullcontext(sys.stdin.buffer) if path == "-" else open(path, "rb") as fh:
            size = 0 if path == "-" else os.fstat(fh.fileno()).st_size
            if size > limit:
                raise UsageError(
                    f"the word file {path!r} is {size:,} bytes; a word file holds at most {limit:,} bytes "
                    f"({limit >> 20} MiB): split the word or give a shorter one"
                )
            chunks: list[bytes] = []
            read = 0
            while chunk := fh.read(_CHUNK):
                read += len(chunk)
                if read > limit:  # a file that grew, or a pipe or device without a size
                    raise UsageError(
                        f"the word file {path!r} is over {limit:,} bytes, the most a word file holds "
                        f"({limit >> 20} MiB): split the word or give a shorter one"
                    )
                chunks.append(chunk)
    except OSError as exc:
        raise UsageError(f"cannot read the word from {path!r}: {exc.strerror}") from None
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
        return text.strip() if strip else text
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the word file {path!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "a word file holds the word's symbols as text"
        ) from None
