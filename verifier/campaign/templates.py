"""The starting program modules ``netproof new NAME --template brasp`` (or ``crasp``) writes: a
B-RASP and a C-RASP program, commented, each with its reference language, in a ``PROGRAMS`` dict.

The construction template (``--template construction``, the default) is
:data:`netproof.verifier.campaign.usermod.TEMPLATE`. A program module is loaded as
:mod:`netproof.verifier.campaign.usermod` describes (``PROGRAMS``, ``MAX_LEN``).

May import the campaign's user modules (names) only.

>>> text = render_program_template("my-contains", "brasp")
>>> "PROGRAMS = {NAME: (CONTAINS_AB, contains_ab)}" in text and 'NAME = "my-contains"' in text
True
>>> render_program_template("my-contains", "lisp")
Traceback (most recent call last):
...
ValueError: template='lisp' is not a program template; choose brasp or crasp
"""

from __future__ import annotations

from .usermod import check_name, module_filename

__all__ = ["BRASP_TEMPLATE", "CRASP_TEMPLATE", "PROGRAM_TEMPLATES", "render_program_template"]

BRASP_TEMPLATE = '''\
"""__NAME__: "the word contains ab", written as a B-RASP program.

A starting program written by `netproof new __NAME__ --template brasp`. It is plain Python:
edit it, then

    netproof run __FILE__ bbab --trace               # one word through the compiled network
    netproof compile __FILE__ --out __MODULE__.json  # the compiled network as a file
    netproof prove __FILE__                          # network = program, program = language, no ties

B-RASP (Yang, Chiang & Angluin 2024) has Boolean vectors only: token(a) is Q_a(i) = [w_i = a];
~, &, | combine vectors position by position; and an attention operation

    rightmost(mask, score=S, value=V, default=D)   (leftmost: the same with the leftmost key)

is, at each position i, V(i, j) at the rightmost j with mask(i, j) and S(i, j) = 1, or D(i) when
there is none. The mask is "past" (j < i), "future" (j > i) or "all". A score or value reads a
vector at the key position j as P.at_j and at the query position i as P.at_i. A program
accepts a non-empty word iff its output vector is 1 at the last position (docs/rasp.md).
"""

from __future__ import annotations

from netproof.verifier.claims import Word
from netproof.verifier.claims.rasp.brasp import TRUE, Program, rightmost, token

NAME = "__NAME__"

a, b = token("a"), token("b")

# prev_a(i) = ▷_j [j < i, 1] Q_a(j) : 0 — the symbol just before position i is an a.
prev_a = rightmost("past", score=TRUE, value=a.at_j).named("prev_a")

# ab ends at i: w_i = b and w_(i-1) = a (a position-wise operation, no attention).
ab_here = b & prev_a

# seen_ab(i) = ▷_j [j < i, ab ends at j] 1 : 0 — some ab ends strictly before i.
seen_ab = rightmost("past", score=ab_here.at_j, value=TRUE).named("seen_ab")

CONTAINS_AB = Program("contains_ab", ("a", "b"), output=seen_ab | ab_here)


# The reference language, the ground truth the program is checked against: a predicate on
# words (a word is a tuple of symbols). A regular expression "[ab]*ab[ab]*", a Language or an
# Automaton would do as well.


def contains_ab(w: Word) -> bool:
    """words over {a, b} that contain ab"""
    return "ab" in "".join(w)


# Every claim's bound: each claim is checked on every word of length 0..MAX_LEN.
MAX_LEN = 8

# netproof reads this dict: construction name -> program, or (program, reference language).
PROGRAMS = {NAME: (CONTAINS_AB, contains_ab)}
'''
"""The B-RASP starting program ("contains ab")."""

CRASP_TEMPLATE = '''\
"""__NAME__: Dyck-1 (balanced brackets), written as a C-RASP program.

A starting program written by `netproof new __NAME__ --template crasp`. It is plain Python:
edit it, then

    netproof run __FILE__ "(())" --trace             # one word through the compiled network
    netproof compile __FILE__ --out __MODULE__.json  # the compiled network as a file
    netproof prove __FILE__                          # network = program, program = language

C-RASP (Yang & Chiang 2024) has Boolean vectors and counts: token(a) is Q_a(i) = [w_i = a];
~, &, | combine Boolean vectors; count(P)(i) = #_{j <= i} P(j) counts the positions up to i
where P holds; counts add, subtract and scale by integers (c1 + c2, c1 - c2, 2 * c), compare
(<, <=, >, >=, .eq, .ne; with an integer too) and choose (where(P, c1, c2)). A program accepts a
non-empty word iff its output vector is 1 at the last position (docs/rasp.md).
"""

from __future__ import annotations

from netproof.verifier.claims import Word
from netproof.verifier.claims.rasp.crasp import Program, count, token

NAME = "__NAME__"

opening, closing = token("("), token(")")

# A prefix closes more than it opened: #)(i) > #((i).
too_many_closed = count(closing) > count(opening)

# Balanced: no prefix ever closed too many, and as many ( as ) at the end.
DYCK1 = Program(
    "dyck1",
    ("(", ")"),
    output=count(too_many_closed).eq(0) & count(opening).eq(count(closing)),
    empty=True,  # the empty word is balanced
)


# The reference language, the ground truth the program is checked against: a predicate on
# words (a word is a tuple of symbols).


def balanced(w: Word) -> bool:
    """balanced brackets over ( and )"""
    depth = 0
    for s in w:
        depth += 1 if s == "(" else -1
        if depth < 0:
            return False
    return depth == 0


# Every claim's bound: each claim is checked on every word of length 0..MAX_LEN.
MAX_LEN = 8

# netproof reads this dict: construction name -> program, or (program, reference language).
PROGRAMS = {NAME: (DYCK1, balanced)}
'''
"""The C-RASP starting program (Dyck-1)."""

PROGRAM_TEMPLATES: dict[str, tuple[str, str]] = {
    "brasp": (BRASP_TEMPLATE, 'the B-RASP program "contains ab"'),
    "crasp": (CRASP_TEMPLATE, "the C-RASP program Dyck-1"),
}
"""``--template`` name → (module text, what it holds, as ``netproof new`` says it)."""


def render_program_template(name: str, template: str) -> str:
    """The ``template`` (``brasp`` or ``crasp``) module for the program ``name`` (checked with
    :func:`~.usermod.check_name`)."""
    if template not in PROGRAM_TEMPLATES:
        raise ValueError(
            f"{template=!r} is not a program template; choose {' or '.join(PROGRAM_TEMPLATES)}"
        )
    check_name(name)
    module = name.replace("-", "_")
    text = PROGRAM_TEMPLATES[template][0]
    return (
        text.replace("__NAME__", name)
        .replace("__MODULE__", module)
        .replace("__FILE__", module_filename(name))
    )
