"""What a running SMT proof is doing, for the progress display: the engines call :func:`phase`
at each step of a proof (``lemmas 3/9: match1.left``, ``length 12``, ``every length: the
reachable states``, ``every length: certificate query 'consecution'``), and whoever runs the
proof hears of it through :func:`listening`. Nobody listening, a phase costs one global read.

The listener is one per process, not per context: a proof's search for every length runs in a
thread of its own, which a context variable would not reach. A campaign's worker runs one claim
at a time, so one listener at a time is all there is.

>>> heard = []
>>> with listening(heard.append):
...     phase("lemmas 1/2: fig1")
>>> phase("not heard")
>>> heard
['lemmas 1/2: fig1']

May import the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["listening", "phase"]

_listener: Callable[[str], None] | None = None


def phase(text: str) -> None:
    """Tell the listener, if any, that the proof now does ``text`` (a short phrase)."""
    listener = _listener
    if listener is not None:
        listener(text)


@contextmanager
def listening(callback: Callable[[str], None]) -> Iterator[None]:
    """Within the block, every :func:`phase` calls ``callback`` with its text (the listener
    before the block is restored after it)."""
    global _listener
    before, _listener = _listener, callback
    try:
        yield
    finally:
        _listener = before
