"""Which claims a command works on: ``--claims ID[,ID…]`` and ``-k EXPR`` (as in pytest).

``--claims`` names claim ids exactly (a comma-separated list, the option may be repeated); an id
that none of the chosen constructions has is refused, naming the ids there are. ``-k`` is a
keyword expression: words joined by ``and``, ``or``, ``not`` and parentheses, each word true of a
claim when it is a case-insensitive substring of the claim's id or of its construction's name
(``-k "dyck and not Y5"``, ``-k "network= or no-ties"``). Both may be given: a claim must pass both.

:class:`ClaimFilter` is the parsed pair; ``netproof prove``, ``recheck`` and ``report`` use it
(the library's :func:`~.proving.prove` takes ``claims=`` and ``keyword=``).

May import: the vocabulary, :mod:`.errors` and :mod:`.sources`.

>>> f = ClaimFilter.parse(None, "dyck and not (Y5 or y4)")
>>> f.wants("dyck", "Y3"), f.wants("dyck", "Y5"), f.wants("parity", "Y3")
(True, False, False)
>>> ClaimFilter.parse(["C1,C3", "C4"], None).ids
('C1', 'C3', 'C4')
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netproof.verifier.claims import Claim, Construction

from .errors import CampaignError

__all__ = [
    "ClaimFilter",
    "keyword_matcher",
    "select_claims",
    "select_ids",
    "select_keyword",
    "split_ids",
]

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def split_ids(values: Iterable[str]) -> tuple[str, ...]:
    """The ids of ``--claims A,B --claims C``, in order, each once (blank items refused)."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            cid = part.strip()
            if not cid:
                raise CampaignError(
                    f"--claims {value!r} has an empty item; give claim ids separated by commas (e.g. --claims C1,C3)"
                )
            if cid not in out:
                out.append(cid)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def keyword_matcher(expr: str) -> Callable[[str], bool]:
    """A pytest-like ``-k`` expression compiled to a test of a text (the construction's name and
    the claim's id, space-separated): a word is true when it is a substring of the text, ignoring
    case; ``not`` binds tighter than ``and``, ``and`` tighter than ``or``. A malformed
    expression raises :class:`~.errors.CampaignError` naming where it breaks."""
    tokens = _TOKEN.findall(expr)
    if not tokens or "".join(tokens).strip() == "":
        raise CampaignError(
            f"-k {expr!r} is empty; give words joined by and/or/not, e.g. -k 'dyck and not Y5'"
        )
    pos = [0]

    def fail(what: str) -> CampaignError:
        return CampaignError(
            f"-k {expr!r}: {what}; write words joined by and, or, not and parentheses, e.g. -k 'dyck and not Y5'"
        )

    def peek() -> str | None:
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take() -> str:
        tok = peek()
        if tok is None:
            raise fail("it ends where a word or '(' was expected")
        pos[0] += 1
        return tok

    def disjunction() -> Callable[[str], bool]:
        parts = [conjunction()]
        while peek() == "or":
            take()
            parts.append(conjunction())
        return parts[0] if len(parts) == 1 else (lambda t: any(p(t) for p in parts))

    def conjunction() -> Callable[[str], bool]:
        parts = [negation()]
        while peek() == "and":
            take()
            parts.append(negation())
        return parts[0] if len(parts) == 1 else (lambda t: all(p(t) for p in parts))

    def negation() -> Callable[[str], bool]:
        if peek() == "not":
            take()
            inner = negation()
            return lambda t: not inner(t)
        tok = take()
        if tok == "(":
            inner = disjunction()
            if take() != ")":
                raise fail("a '(' is not closed")
            return inner
        if tok in (")", "and", "or"):
            raise fail(f"{tok!r} where a word was expected")
        word = tok.lower()
        return lambda t: word in t

    test = disjunction()
    if peek() is not None:
        raise fail(f"{peek()!r} after a complete expression")
    return lambda text: test(text.lower())


@dataclass(frozen=True)
class ClaimFilter:
    """The claims a command keeps: ``ids`` (None: any id) and ``keyword`` (a ``-k`` expression,
    None: any claim)."""

    ids: tuple[str, ...] | None = None
    keyword: str | None = None

    @classmethod
    def parse(cls, ids: Sequence[str] | str | None, keyword: str | None) -> ClaimFilter:
        """From the command line's values (``--claims`` as given, maybe repeated; ``-k``);
        a bad ``-k`` is refused here, before anything runs."""
        if isinstance(ids, str):
            ids = [ids]
        parsed = split_ids(ids) if ids else None
        if keyword is not None:
            keyword_matcher(keyword)
        return cls(parsed, keyword)

    @property
    def everything(self) -> bool:
        return self.ids is None and self.keyword is None

    def wants(self, construction: str, claim_id: str) -> bool:
        if self.ids is not None and claim_id not in self.ids:
            return False
        return self.keyword is None or keyword_matcher(self.keyword)(f"{construction} {claim_id}")

    def check_ids(self, known: Sequence[str], where: str) -> None:
        """Refuse an id of ``ids`` that is not in ``known`` (the ids of ``where``)."""
        for cid in self.ids or ():
            if cid not in known:
                raise CampaignError(
                    f"--claims: {cid!r} is not a claim of {where}; the claims there: {', '.join(known) or 'none'} "
                    "(see `netproof list NAME`)"
                )


def select_claims(
    registry: Mapping[str, Construction], wanted: ClaimFilter
) -> dict[str, Construction]:
    """The constructions of ``registry`` with only the claims ``wanted`` keeps (at every parameter
    value), those left with none dropped (at their default parameters); an id of ``wanted.ids``
    that none of them has is refused, and so is a selection that keeps nothing."""
    if wanted.everything:
        return dict(registry)
    from .sources import parameter_values

    known: list[str] = []
    kept: dict[str, Construction] = {}
    for name, c in registry.items():
        ids = [claim.id for claim in c.claims(parameter_values(c, {}))]
        known.extend(i for i in ids if i not in known)
        if any(wanted.wants(name, i) for i in ids):

            def selected(
                values: Mapping[str, Any], c: Construction = c, name: str = name
            ) -> tuple[Claim, ...]:
                return tuple(cl for cl in c.claims(values) if wanted.wants(name, cl.id))

            kept[name] = dataclasses.replace(c, claims=selected)
    wanted.check_ids(known, ", ".join(registry))
    if not kept:
        raise CampaignError(f"no claim of {', '.join(registry)} is selected by --claims/-k")
    return kept


def select_ids(
    plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]], wanted: list[str]
) -> None:
    """Keep only the claims whose id is in ``wanted`` (in place); an id no construction has is
    refused, naming the ids there are."""
    known = list(dict.fromkeys(claim.id for _c, _v, claims in plans for _i, claim in claims))
    for cid in wanted:
        if not isinstance(cid, str) or cid not in known:
            names = ", ".join(dict.fromkeys(c.name for c, _v, _cl in plans))
            raise CampaignError(
                f"claims: {cid!r} is not a claim of {names}; its claims: {', '.join(known)} (see `netproof list`)"
            )
    for _c, _v, claims in plans:
        claims[:] = [(i, claim) for i, claim in claims if claim.id in wanted]


def select_keyword(
    plans: list[tuple[Construction, dict[str, Any], list[tuple[int, Claim]]]], keyword: str
) -> None:
    """Keep only the claims the ``-k`` expression ``keyword`` matches (in place); an expression that matches no claim is refused."""
    wanted = ClaimFilter.parse(None, keyword)
    for c, _v, claims in plans:
        claims[:] = [(i, claim) for i, claim in claims if wanted.wants(c.name, claim.id)]
    if not any(claims for _c, _v, claims in plans):
        names = ", ".join(dict.fromkeys(c.name for c, _v, _cl in plans))
        raise CampaignError(
            f"-k {keyword!r} matches no claim of {names}; a word matches a claim id or a construction name "
            "as a substring (see `netproof list NAME` for the ids)"
        )
