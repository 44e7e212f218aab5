"""Twenty star-free specifications for :mod:`.synth`, of growing size: regular expressions and
LTL formulas from Yang, Chiang & Angluin 2024's examples and classical ones, each with a Python
predicate written independently of the spec (the tests check predicate = the spec's automaton on
every word up to length 7).

:data:`SPECS` lists them; reading this module's ``PROGRAMS`` (computed on first access)
synthesizes every one whose route this checkout has (a regular expression needs the DFA
route, ``from_dfa.py``), so the file is a user program module:
``netproof prove constructions/rasp/synth_specs.py:synth-contains-ab --method best``.

May import: its own package's modules and the vocabulary.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from netproof.constructions.rasp.synth import Spec, ltl_spec, regex_spec
from netproof.verifier.claims import Construction, Word

__all__ = ["GROUP", "SPECS", "SynthSpec", "construction", "spec_named"]

ABC = ("a", "b", "c")
AB = ("a", "b")
BR = ("(", ")")


@dataclass(frozen=True)
class SynthSpec:
    name: str
    description: str
    spec: Spec
    predicate: Callable[[Word], bool]


def _dyck_depth(k: int) -> Callable[[Word], bool]:
    def pred(w: Word) -> bool:
        d = 0
        for s in w:
            d += 1 if s == "(" else -1
            if d < 0 or d > k:
                return False
        return d == 0

    return pred


def _dyck_regex(k: int) -> str:
    inner = ""
    for _ in range(k):
        inner = rf"(\({inner}\))*"
    return inner


def _no_b_after_first_c(w: Word) -> bool:
    return "c" not in w or "b" not in w[w.index("c") :]


def _no_b_after_last_c(w: Word) -> bool:
    if "c" not in w:
        return True
    last = len(w) - 1 - w[::-1].index("c")
    return "b" not in w[last:]


def _every_a_then_b(w: Word) -> bool:
    return all("b" in w[i + 1 :] for i, s in enumerate(w) if s == "a")


def _first_eq_last(w: Word) -> bool:
    return len(w) > 0 and w[0] == w[-1]


def _ab_star(w: Word) -> bool:
    return len(w) % 2 == 0 and all(s == "ab"[i % 2] for i, s in enumerate(w))


def _sorted_abc(w: Word) -> bool:
    return list(w) == sorted(w)


def _contains_ab(w: Word) -> bool:
    return any(w[i] == "a" and w[i + 1] == "b" for i in range(len(w) - 1))


def _subword_abc(w: Word) -> bool:
    k = 0
    for s in w:
        if k < 3 and s == "abc"[k]:
            k += 1
    return k == 3


def _c_after_a(w: Word) -> bool:
    return all("a" in w[:i] for i, s in enumerate(w) if s == "c")


def _no_aa(w: Word) -> bool:
    return all(not (w[i] == w[i + 1] == "a") for i in range(len(w) - 1))


def _second_to_last_a(w: Word) -> bool:
    return len(w) >= 2 and w[-2] == "a"


def _nested_since(w: Word) -> bool:
    # (a S b) S c at the last position n: some j < n with c, and (a S b) at every k in (j, n)
    n = len(w)

    def a_s_b(k: int) -> bool:  # 0-based k: some j < k with b, a strictly between
        return any(w[j] == "b" and all(w[m] == "a" for m in range(j + 1, k)) for j in range(k))

    if n == 0:
        return False
    last = n - 1
    return any(w[j] == "c" and all(a_s_b(k) for k in range(j + 1, last)) for j in range(last))


def _a_then_not_c_until_b(w: Word) -> bool:
    # every a is followed later by a b with no c strictly between
    for i, s in enumerate(w):
        if s != "a":
            continue
        ok = False
        for j in range(i + 1, len(w)):
            if w[j] == "b":
                ok = True
                break
            if w[j] == "c":
                break
        if not ok:
            return False
    return True


def _b_after_a_c_after_b(w: Word) -> bool:
    return all(
        (s != "b" or (i > 0 and w[i - 1] == "a")) and (s != "c" or "b" in w[:i])
        for i, s in enumerate(w)
    )


def _a_then_b_then_c(w: Word) -> bool:
    for i, s in enumerate(w):
        if s == "a" and not any(w[j] == "b" and "c" in w[j:] for j in range(i, len(w))):
            return False
    return True


def _ends_ab(w: Word) -> bool:
    return w[-2:] == ("a", "b")


SPECS: tuple[SynthSpec, ...] = (
    SynthSpec("ends-ab", "ends with ab", ltl_spec("b & Y a", AB), _ends_ab),
    SynthSpec(
        "second-to-last-a", "the second-to-last symbol is a", ltl_spec("Y a", AB), _second_to_last_a
    ),
    SynthSpec("no-aa", "no two consecutive a's", ltl_spec("H(a -> !Y a)", AB, empty=True), _no_aa),
    SynthSpec(
        "c-after-a",
        "every c is preceded (somewhere) by an a",
        ltl_spec("H(c -> O a)", ABC, empty=True),
        _c_after_a,
    ),
    SynthSpec(
        "no-b-after-first-c",
        "no b after the first c",
        ltl_spec("H(b -> !O c)", ABC, empty=True),
        _no_b_after_first_c,
    ),
    SynthSpec(
        "a-then-b",
        "every a is eventually followed by a b",
        ltl_spec("H(a -> F b)", AB, empty=True),
        _every_a_then_b,
    ),
    SynthSpec("ab-star", "(ab)*", regex_spec("(ab)*", AB), _ab_star),
    SynthSpec("abc-sorted", "a*b*c*", regex_spec("a*b*c*", ABC), _sorted_abc),
    SynthSpec("contains-ab", "contains ab", regex_spec("(a|b)*ab(a|b)*", AB), _contains_ab),
    SynthSpec(
        "dyck1-depth1", "Dyck-1 of depth at most 1", regex_spec(_dyck_regex(1), BR), _dyck_depth(1)
    ),
    SynthSpec(
        "dyck1-depth2", "Dyck-1 of depth at most 2", regex_spec(_dyck_regex(2), BR), _dyck_depth(2)
    ),
    SynthSpec(
        "dyck1-depth3", "Dyck-1 of depth at most 3", regex_spec(_dyck_regex(3), BR), _dyck_depth(3)
    ),
    SynthSpec(
        "dyck1-depth4", "Dyck-1 of depth at most 4", regex_spec(_dyck_regex(4), BR), _dyck_depth(4)
    ),
    SynthSpec(
        "first-eq-last-ab",
        "non-empty, first symbol = last symbol, over {a, b}",
        ltl_spec("(a & H(Y true | a)) | (b & H(Y true | b))", AB),
        _first_eq_last,
    ),
    SynthSpec(
        "first-eq-last-abc",
        "non-empty, first symbol = last symbol, over {a, b, c}",
        ltl_spec("(a & H(Y true | a)) | (b & H(Y true | b)) | (c & H(Y true | c))", ABC),
        _first_eq_last,
    ),
    SynthSpec(
        "subword-abc",
        "contains a, b, c in this order (a subword)",
        regex_spec("(a|b|c)*a(a|b|c)*b(a|b|c)*c(a|b|c)*", ABC),
        _subword_abc,
    ),
    SynthSpec(
        "no-b-after-last-c",
        "no b after the last c",
        regex_spec("(a|b)*|(a|b|c)*c(a|c)*", ABC),
        _no_b_after_last_c,
    ),
    SynthSpec("nested-since", "(a S b) S c", ltl_spec("(a S b) S c", ABC), _nested_since),
    SynthSpec(
        "a-until-b-no-c",
        "every a is followed by a b with no c in between",
        ltl_spec("H(a -> (!c U b))", ABC, empty=True),
        _a_then_not_c_until_b,
    ),
    SynthSpec(
        "b-after-a-c-after-b",
        "every b right after an a, every c after some b",
        ltl_spec("H((b -> Y a) & (c -> O b))", ABC, empty=True),
        _b_after_a_c_after_b,
    ),
    SynthSpec(
        "a-then-b-then-c",
        "every a is followed by a b that is followed by a c",
        ltl_spec("H(a -> F(b & F c))", ABC, empty=True),
        _a_then_b_then_c,
    ),
)
"""The twenty (and one more: ``ends-ab``), smallest first within each kind."""


def spec_named(name: str) -> SynthSpec:
    for s in SPECS:
        if s.name == name:
            return s
    raise KeyError(f"no synth spec {name!r}; the specs: {', '.join(s.name for s in SPECS)}")


@functools.cache
def construction(name: str) -> Construction:
    """The construction ``synth-NAME`` of the spec ``NAME`` (synthesized on this call, once per
    process): the claims a ``PROGRAMS`` entry of this module gets when it is loaded as a user
    module, so records written either way are the same records."""
    from netproof.constructions.rasp.modules import program_constructions
    from netproof.constructions.rasp.synth import synthesize

    s = spec_named(name)
    syn = synthesize(s.spec, f"synth-{s.name}")
    return program_constructions({f"synth-{s.name}": (syn.program, syn.reference)})[0]


GROUP: dict[str, Callable[[], Construction]] = {
    f"synth-{s.name}": functools.partial(construction, s.name) for s in SPECS
}
"""The opt-in group ``synth`` of :data:`netproof.constructions.GROUPS`: each spec's construction
by name, built only when named (``netproof prove synth``, ``netproof recheck proofs/synth-*``),
never part of the default set."""


def __getattr__(attr: str) -> Any:  # PROGRAMS, synthesized on first access
    if attr == "PROGRAMS":
        from netproof.constructions.rasp.synth import SpecError, synthesize

        programs = {}
        for s in SPECS:
            try:
                syn = synthesize(s.spec, f"synth-{s.name}")
            except SpecError:  # its route (the DFA route, from_dfa.py) is not in this checkout
                continue
            programs[f"synth-{s.name}"] = (syn.program, syn.reference)
        globals()["PROGRAMS"] = programs
        return programs
    raise AttributeError(attr)
