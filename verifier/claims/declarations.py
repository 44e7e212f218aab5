"""Construction declarations: how a paper's construction presents itself to the tools.

:class:`Construction` is what a paper module lists in ``CONSTRUCTIONS`` (and what a user module
defines): its name, reference, parameters (:class:`Param`, parsed by :func:`parse_int`,
:func:`parse_fraction` and friends), how to build the network, the claims and lemmas it
declares, its reference language and its float-precision declaration. :data:`VARIANT` is the
shared ``variant=fixed|paper`` parameter.

May import: the IR (:mod:`netproof.symbolic`, for the network types) and the other modules of
this package; never an interpreter, an engine, z3 or torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq

from .experiments import Precision
from .kinds import Claim
from .languages import Language, Word
from .lemmas import Lemma

__all__ = ["VARIANT", "Construction", "Param", "parse_fraction", "parse_int", "shown"]


@dataclass(frozen=True, slots=True)
class Param:
    """A builder parameter: its name, default (as the user would type it), a parser that raises
    ValueError with a helpful message, and a help line. ``choices`` lists allowed values."""

    name: str
    default: str
    parse: Callable[[str], Any]
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Construction:
    """A paper's construction as the CLI sees it.

    ``build(params)`` returns the network; for fixed-length families (``per_length``) it is
    called as ``build(params, n)``. ``claims(params)`` returns the claims for those parameters
    (the ``paper`` variant returns the paper's literal statements).
    """

    name: str
    paper_id: str
    title: str
    reference: str
    params: tuple[Param, ...]
    build: Callable[..., Network | RecurrentNetwork | Seq2Seq]
    claims: Callable[[Mapping[str, Any]], tuple[Claim, ...]]
    language: Language | None = None
    per_length: bool = False
    language_of: Callable[[Mapping[str, Any]], Language] | None = None
    max_steps: Callable[[Mapping[str, Any], Word], int] | None = None
    """For an encoder–decoder (:class:`netproof.symbolic.Seq2Seq`): the decoder step budget of a run on a
    word (the run stops there if the decoder has not halted; checkers then see no halting).
    None: :data:`netproof.symbolic.seq2seq.DEFAULT_MAX_STEPS`."""
    lemmas: Callable[[Mapping[str, Any]], tuple[Lemma, ...]] | None = None
    """The block lemmas of the paper's proof for these parameters (used by compositional
    proofs); None when the construction declares none."""
    precision: Precision | None = None
    """What the float precision search needs beyond the network (worst-case words, a sampler,
    a generator's reference sets, the documented runs); None: sampled words only."""
    program_file: Callable[[], str] | None = None
    """For a compiled B-RASP or C-RASP program: its program file's text (``program.rasp``, read
    by the independent kernel; :func:`netproof.verifier.claims.rasp.common.program_file`), written
    beside the construction's records; None for every other construction."""

    def reference_language(self, values: Mapping[str, Any]) -> Language | None:
        """The language the construction recognizes for these parameters, if it has one."""
        if self.language_of is not None:
            return self.language_of(values)
        return self.language

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise KeyError(
            f"construction {self.name!r} has no parameter {name!r}; its parameters: {known}"
        )

    def parse_params(self, given: Mapping[str, str]) -> dict[str, Any]:
        """Defaults overridden by ``given``; raises ValueError/KeyError with a clear message."""
        values: dict[str, Any] = {}
        for p in self.params:
            raw = given.get(p.name, p.default)
            if p.choices and raw not in p.choices:
                raise ValueError(
                    f"{p.name}={raw!r} is not allowed; choose one of {', '.join(p.choices)}"
                )
            values[p.name] = p.parse(raw)
        for name in given:
            self.param(name)
        return values

    def network(
        self, values: Mapping[str, Any], n: int | None = None
    ) -> Network | RecurrentNetwork | Seq2Seq:
        if self.per_length:
            if n is None:
                raise ValueError(f"{self.name} is built per word length; give n")
            return self.build(values, n)
        return self.build(values)


def shown(raw: str, limit: int = 40, *, quoted: bool = True) -> str:
    """``raw`` for an error line (``repr`` unless ``quoted=False``), cut to ``limit`` characters
    with the full length named.

    >>> shown("12")
    "'12'"
    >>> shown("9" * 5000)
    "'9999999999999999999999999999999999999999…' (5000 characters)"
    """
    if len(raw) <= limit:
        return repr(raw) if quoted else raw
    head = raw[:limit] + "…"
    return f"{repr(head) if quoted else head} ({len(raw)} characters)"


def parse_int(name: str, *, minimum: int) -> Callable[[str], int]:
    """A parser for an integer parameter with a lower bound."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(
                f"{name}={shown(raw)} is not an integer; give a whole number >= {minimum}"
            ) from None
        if value < minimum:
            raise ValueError(f"{name}={shown(str(value), quoted=False)} must be >= {minimum}")
        return value

    return parse


def parse_fraction(
    name: str, *, minimum: Fraction | None = None, strict: bool = False
) -> Callable[[str], Fraction]:
    """A parser for an exact rational parameter (``3``, ``1/10``; decimals refused)."""

    def parse(raw: str) -> Fraction:
        text = raw.strip()
        if "." in text or "e" in text.lower():
            raise ValueError(
                f"{name}={shown(raw)}: give an exact rational like 1/10, not a decimal"
            )
        try:
            value = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name}={shown(raw)} is not a rational number like 1/10") from None
        if minimum is not None and (value <= minimum if strict else value < minimum):
            raise ValueError(
                f"{name}={shown(str(value), quoted=False)} must be {'>' if strict else '>='} {minimum}"
            )
        return value

    return parse


VARIANT = Param(
    name="variant",
    default="fixed",
    parse=str,
    help="fixed: the verified construction and statements; paper: the paper's literal text",
    choices=("fixed", "paper"),
)
