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

from .usage import UsageError

__all__ = [
    "MAX_EXACT_SYMBOLS",
    "MAX_FUZZ_LEN",
    "MAX_WORD_FILE_BYTES",
    "fuzz_length",
    "nonnegative_int",
    "output_dir",
    "output_file",
    "output_path",
    "positive_int",
    "positive_seconds",
    "read_word_file",
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

_CHUNK = 1 << 16


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give a whole number >= {minimum}") from None
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


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0 (``--timeout``): NaN and infinity are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds; give e.g. 60 or 0.5") from None
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
            raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file path (e.g. {os.path.join(text, 'out')})")
        _usable_folder(os.path.dirname(text) or ".", text)
    return text


def output_path(text: str) -> str:
    """A file to write, or an existing directory to write it in (``new --out``): '' (the
    default name) or a path whose folder exists or can be made."""
    if text and not os.path.isdir(text):
        _usable_folder(os.path.dirname(text) or ".", text)
    return text


def read_word_file(path: str, limit: int = MAX_WORD_FILE_BYTES) -> str:
    """The word in the text file ``path`` (``run NAME @FILE``), stripped: read in chunks, at most
    ``limit`` bytes (a larger file is refused with its size before it is read), UTF-8 only."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
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
        return data.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the word file {path!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "a word file holds the word's symbols as text"
        ) from None
