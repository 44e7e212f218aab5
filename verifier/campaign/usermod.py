"""Users' own construction modules: a Python file that defines ``CONSTRUCTIONS``, loaded like a
built-in construction module.

The contract is the built-ins' (``constructions/chiang2022/``): a module-level
``CONSTRUCTIONS`` tuple of :class:`netproof.verifier.claims.Construction`, or (and) a
``PROGRAMS`` dict of B-RASP / C-RASP programs, each compiled on load and given the claims the
library's programs have (:mod:`netproof.constructions.rasp.modules`, reached through the
registry :func:`netproof.constructions.program_constructions`). :func:`load` runs the file,
checks the contract and builds every construction's network and claims with its default
parameters, so that a malformed module is refused at once with one line naming the file, the
problem and the fix (:class:`UserModuleError`), never with a traceback halfway through a proof.

``netproof new NAME`` writes :data:`TEMPLATE` (MAJORITY with one uniform-attention layer) as a
starting module; ``netproof run|prove|fuzz|list|export FILE.py`` (or ``FILE.py:NAME``) uses it.
:class:`netproof.verifier.campaign.sources.Session` keeps the modules one invocation loaded.

Imports the IR, the vocabulary, the campaign's error class and (for ``PROGRAMS``) the registry
:mod:`netproof.constructions`.

>>> is_module_ref("my_majority.py"), is_module_ref("lib/mod.py:my-majority"), is_module_ref("parity")
(True, True, False)
>>> split_ref("lib/mod.py:my-majority")
('lib/mod.py', 'my-majority')
>>> module_filename("my-majority")
'my_majority.py'
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import sys
import traceback
from collections.abc import Collection
from types import FrameType, ModuleType

from netproof.symbolic import Network
from netproof.verifier.claims import ClaimBase, Construction

from .errors import CampaignError

__all__ = [
    "NAME_PATTERN",
    "TEMPLATE",
    "UserModuleError",
    "check_name",
    "claim_code_error",
    "is_module_ref",
    "load",
    "module_filename",
    "render_template",
    "split_ref",
]


class UserModuleError(CampaignError):
    """A user construction module is missing, does not import, or breaks the contract. The
    message is one line: the file, what is wrong, and how to fix it."""


NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
"""A construction name as typed on the command line: lowercase letters, digits, single dashes."""

_REF = re.compile(r"(?P<path>.+\.py)(?::(?P<name>[^:/\\]+))?")
_COUNTER = itertools.count(1)


def is_module_ref(arg: str) -> bool:
    """Does a command-line argument name a Python module (``FILE.py`` or ``FILE.py:NAME``)?"""
    return _REF.fullmatch(arg) is not None


def split_ref(arg: str) -> tuple[str, str | None]:
    """``FILE.py:NAME`` as (``FILE.py``, ``NAME``); ``FILE.py`` as (``FILE.py``, None)."""
    m = _REF.fullmatch(arg)
    if m is None:
        raise UserModuleError(f"{arg!r} is not a module reference; write FILE.py or FILE.py:NAME")
    return m.group("path"), m.group("name")


def module_filename(name: str) -> str:
    """The file ``netproof new NAME`` writes: the name with underscores, ``.py``."""
    return name.replace("-", "_") + ".py"


def check_name(name: str, where: str = "") -> None:
    """Raise :class:`UserModuleError` unless ``name`` is a valid construction name."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        fix = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-") or "my-construction"
        if not fix[0].isalpha():
            fix = f"my-{fix}"
        raise UserModuleError(
            f"{where}construction name {name!r} must be lowercase letters, digits and single dashes, "
            f"starting with a letter (e.g. {fix!r})"
        )


def render_template(name: str) -> str:
    """:data:`TEMPLATE` for the construction ``name`` (checked with :func:`check_name`)."""
    check_name(name)
    module = name.replace("-", "_")
    return (
        TEMPLATE.replace("__NAME__", name)
        .replace("__MODULE__", module)
        .replace("__FILE__", module_filename(name))
    )


# --------------------------------------------------------------------------- errors in claim code

_OURS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), part)
    + os.sep
    for part in ("symbolic", "verifier", "constructions")
)
"""netproof's own code: a frame in these folders is not the user's."""


def _is_users(filename: str) -> bool:
    """Whether a traceback frame's file is a user's own code (not netproof's, not Python's or an
    installed package's, not generated code)."""
    import sysconfig

    if not os.path.isfile(filename):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_OURS):
        return False
    paths = sysconfig.get_paths()
    installed = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return not any(path.startswith(os.path.abspath(p) + os.sep) for p in installed)


def _word_in(local_values: Collection[object]) -> tuple[str, ...] | None:
    """A word among a frame's local values: a tuple of symbols, or a point's ``word``."""
    for value in local_values:
        word = getattr(value, "word", value)
        if isinstance(word, tuple) and all(isinstance(x, str) for x in word):
            return word
    return None


def claim_code_error(
    exc: BaseException, construction: str, claim: str, alphabet: Collection[str], module: str | None
) -> UserModuleError | None:
    """The usage error for an exception raised inside a user's own code while one of their
    claims was checked (an ``expected=`` function, a language's ``contains``, a trace
    property's function): one line with the file, the line, the exception and the word being
    checked. The user's code is the user module ``module`` the construction came from and the
    modules beside it (not netproof's, not an installed package's); None without a module or
    when no frame of the traceback is there (a checker's own crash)."""
    if module is None or module.endswith(".json"):
        return None
    folder = os.path.dirname(os.path.abspath(module)) + os.sep
    frames: list[tuple[FrameType, int]] = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    users = [
        (f, line)
        for f, line in frames
        if os.path.abspath(f.f_code.co_filename).startswith(folder)
        and _is_users(f.f_code.co_filename)
    ]
    if not users:
        return None
    frame, line = users[-1]
    code = frame.f_code
    word = _word_in(list(frame.f_locals.values()))
    for outer, _line in reversed(frames):
        if word is not None:
            break
        word = _word_in([v for k, v in outer.f_locals.items() if k in ("w", "word", "p", "point")])
    text = traceback.extract_tb(exc.__traceback__)
    source = (
        next(
            (t.line for t in reversed(text) if t.filename == code.co_filename and t.lineno == line),
            "",
        )
        or ""
    )
    shown_word = (
        ""
        if word is None
        else (
            " on the word "
            + (
                "ε (the empty word)"
                if not word
                else ("".join(word) if all(len(a) == 1 for a in alphabet) else " ".join(word))
            )
        )
    )
    where = f" in `{source.strip()}`" if source.strip() else ""
    return UserModuleError(
        f"{code.co_filename}:{line}: claim {claim!r} of {construction}: your code ({code.co_name}) raised "
        f"{_first_line(exc)}{shown_word}{where}; fix it (a claim's code must answer for every word of its bound)"
    )


# --------------------------------------------------------------------------- loading


def _line_in(exc: BaseException, path: str) -> str:
    """`` (line N: text)`` for the deepest frame of ``exc``'s traceback in the file ``path``."""
    target = os.path.realpath(path)
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == target:
            found = frame
    if found is None:
        return ""
    text = (found.line or "").strip()
    return f" (line {found.lineno}: `{text}`)" if text else f" (line {found.lineno})"


def _a(value: object) -> str:
    """``a dict`` / ``an int``: the type of ``value`` with its article."""
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _execute(path: str) -> ModuleType:
    """Run the file as a fresh module (never a cached one: the file may have just been edited)."""
    if not os.path.exists(path):
        raise UserModuleError(
            f"{path}: no such file; check the path, or write a starting module with "
            "`netproof new NAME` (it creates NAME.py)"
        )
    if not os.path.isfile(path):
        raise UserModuleError(f"{path}: not a file; give the path of a Python module (FILE.py)")
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserModuleError(
            f"{path}: cannot read it: {_first_line(exc)}; save it as UTF-8 text"
        ) from None
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        shown = f" in `{exc.text.strip()}`" if exc.text and exc.text.strip() else ""
        raise UserModuleError(
            f"{path}:{exc.lineno}: {type(exc).__name__}: {exc.msg}{shown}; fix that line and run again"
        ) from None
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    module_name = f"netproof_user_{stem}_{next(_COUNTER)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:  # pragma: no cover - a .py path always has a spec
        raise UserModuleError(f"{path}: Python cannot load it as a module; give a FILE.py")
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs (dataclasses and pickling look modules up by name); its directory
    # is importable meanwhile, as for `python FILE.py`, so it may import its sibling modules.
    sys.modules[module_name] = module
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        del sys.modules[module_name]
        hint = (
            "; is that package installed in the Python that runs netproof?"
            if isinstance(exc, ImportError)
            else "; fix the module and run again"
        )
        raise UserModuleError(
            f"{path}: importing it failed: {_first_line(exc)}{_line_in(exc, path)}{hint}"
        ) from None
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    return module


def load(path: str, *, builtin: Collection[str] = ()) -> tuple[Construction, ...]:
    """The constructions a user module defines, checked against the built-ins' contract.

    Refused with :class:`UserModuleError` (one line naming ``path``): a missing file, a syntax
    or import error (with the exception type and the line), neither ``CONSTRUCTIONS`` nor
    ``PROGRAMS``, a value that is not a tuple (or list) of
    :class:`~netproof.verifier.claims.Construction`, an invalid name, a name in ``builtin`` or used
    twice, a construction whose network or claims cannot be built with its default parameters
    (with the exception and the line of the module where it was raised), and a ``PROGRAMS`` entry
    that is not a program, has a reference of the wrong kind or does not compile
    (:mod:`netproof.constructions.rasp.modules`). The module's constructions come first, then its
    programs.
    """
    module = _execute(path)
    if not hasattr(module, "CONSTRUCTIONS") and not hasattr(module, "PROGRAMS"):
        raise UserModuleError(
            f"{path}: defines no CONSTRUCTIONS and no PROGRAMS; add a module-level tuple CONSTRUCTIONS = "
            "(Construction(...),) of verifier.claims.Construction (see `netproof new NAME`), or a dict "
            'PROGRAMS = {"my-name": program} of B-RASP/C-RASP programs (see `netproof new NAME --template brasp`)'
        )
    found = _constructions(path, module) if hasattr(module, "CONSTRUCTIONS") else ()
    programs = _programs(path, module) if hasattr(module, "PROGRAMS") else ()
    seen: set[str] = set()
    for where, c in [*((f"CONSTRUCTIONS[{idx}]", c) for idx, c in enumerate(found)), *programs]:
        check_name(c.name, f"{path}: {where}: ")
        if c.name in builtin:
            raise UserModuleError(
                f"{path}: construction {c.name!r} has the name of a built-in construction; rename it "
                f"(e.g. 'my-{c.name}') so that `netproof prove {c.name}` stays unambiguous"
            )
        if c.name in seen:
            raise UserModuleError(
                f"{path}: two constructions are named {c.name!r}; give each its own name"
            )
        seen.add(c.name)
    for c in found:
        _check_defaults(path, c)
    return (*found, *(c for _where, c in programs))


def _programs(path: str, module: ModuleType) -> list[tuple[str, Construction]]:
    """The module's ``PROGRAMS`` compiled (:func:`netproof.constructions.program_constructions`),
    each with where it was declared; a bad entry is one line naming the file."""
    from netproof.constructions import ProgramModuleError, program_constructions

    entries = module.PROGRAMS
    try:
        found = program_constructions(
            entries, **({"max_len": module.MAX_LEN} if hasattr(module, "MAX_LEN") else {})
        )
    except ProgramModuleError as exc:
        raise UserModuleError(f"{path}: {exc}") from None
    keys = list(entries) if isinstance(entries, dict) else range(len(found))
    return [(f"PROGRAMS[{key!r}]", c) for key, c in zip(keys, found, strict=True)]


def _constructions(path: str, module: ModuleType) -> tuple[Construction, ...]:
    """The module's ``CONSTRUCTIONS``, checked to be a non-empty tuple of constructions."""
    found = module.CONSTRUCTIONS
    if isinstance(found, Construction):
        raise UserModuleError(
            f"{path}: CONSTRUCTIONS is a single Construction, not a tuple; write "
            "CONSTRUCTIONS = (Construction(...),) with the trailing comma"
        )
    if not isinstance(found, (tuple, list)):
        raise UserModuleError(
            f"{path}: CONSTRUCTIONS is {_a(found)}; it must be a tuple of "
            "netproof.verifier.claims.Construction, e.g. CONSTRUCTIONS = (Construction(...),)"
        )
    if not found:
        raise UserModuleError(
            f"{path}: CONSTRUCTIONS is empty; put at least one Construction in it"
        )
    for idx, c in enumerate(found):
        if not isinstance(c, Construction):
            raise UserModuleError(
                f"{path}: CONSTRUCTIONS[{idx}] is {_a(c)}, not a verifier.claims.Construction; "
                "wrap it: Construction(name=..., build=lambda values: ..., claims=..., ...)"
            )
    return tuple(found)


def _check_defaults(path: str, c: Construction) -> None:
    """Build the network and the claims of ``c`` with its default parameters."""
    where = f"{path}: construction {c.name!r}"
    try:
        values = c.parse_params({})
    except Exception as exc:
        raise UserModuleError(
            f"{where}: its default parameters do not parse: {_first_line(exc)}{_line_in(exc, path)}"
        ) from None
    try:
        net = c.network(values, 0) if c.per_length else c.network(values)
    except Exception as exc:
        raise UserModuleError(
            f"{where}: building its network failed: {_first_line(exc)}{_line_in(exc, path)}; fix build()"
        ) from None
    if not isinstance(net, Network):
        raise UserModuleError(
            f"{where}: build returned {_a(net)}, not a symbolic.Network; "
            "build must return the network (e.g. build=lambda values: build())"
        )
    try:
        claims = c.claims(values)
    except Exception as exc:
        raise UserModuleError(
            f"{where}: its claims could not be built: {_first_line(exc)}{_line_in(exc, path)}; fix claims()"
        ) from None
    if not isinstance(claims, (tuple, list)) or not claims:
        raise UserModuleError(
            f"{where}: claims(values) returned {claims!r}; return a non-empty tuple of claims "
            "(e.g. (Recognizes(...),))"
        )
    ids: set[str] = set()
    for idx, claim in enumerate(claims):
        if not isinstance(claim, ClaimBase):
            raise UserModuleError(
                f"{where}: claim [{idx}] is {_a(claim)}, not a claim of verifier.claims "
                "(Recognizes, ValueIs, Bound, TraceProperty, ...)"
            )
        if claim.id in ids:
            raise UserModuleError(
                f"{where}: two claims have the id {claim.id!r}; proof records are named after ids, "
                "so give each claim its own"
            )
        ids.add(claim.id)


# --------------------------------------------------------------------------- the template


TEMPLATE = '''\
"""__NAME__: MAJORITY (more 1s than 0s) with one uniform-attention layer.

A starting module written by `netproof new __NAME__`. It is plain Python: edit it, then

    netproof run __FILE__ 0110 --trace   # one word, exactly, with every residual vector
    netproof prove __FILE__              # every claim below, for every word in its bound
    netproof fuzz __FILE__               # longer random words: evidence, never proof

netproof reads the tuple CONSTRUCTIONS at the end of this file, as it reads the built-in
constructions (constructions/chiang2022/, constructions/yao2021/).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from netproof.symbolic import Network, classifier, token_embedding
from netproof.symbolic.gadgets import attention, sublayers, uniform_average
from netproof.verifier.claims import (
    Claim,
    Construction,
    Language,
    Point,
    Recognizes,
    StateValue,
    ValueIs,
    Word,
)

NAME = "__NAME__"


# 1. The reference language: plain Python, the ground truth the network is checked against.


def is_majority(w: Word) -> bool:
    """More 1s than 0s (a word is a tuple of symbols)."""
    return w.count("1") > w.count("0")


MAJORITY = Language(
    name="MAJORITY",
    alphabet=("0", "1"),
    contains=is_majority,
    description="words over {0,1} with more 1s than 0s",
)


# 2. The network: exact weights (ints, Fractions or "p/q" strings) on named dims.


def build() -> Network:
    """frac = #1/n at every position (n = |w|), then accept iff frac - 1/2 > 0, i.e. iff
    #1 > n/2 = (#1 + #0)/2, i.e. iff #1 > #0."""
    # The embedding: dim "is1" holds I[w_i = 1]; every dim a token does not name starts at 0.
    embedding = token_embedding(("0", "1"), {"0": {}, "1": {"is1": 1}})
    # The gadget: a head "ones" whose hardmax attention over equal scores averages "is1" over
    # all n positions (mask="none"), exactly, and writes that average into dim "frac".
    ones = uniform_average("ones", {"frac": {"is1": 1}}, mask="none")
    return Network(
        name=NAME,
        dims=("is1", "frac"),  # the residual stream by name: traces and claims use these names
        embedding=embedding,
        layers=sublayers(attention("count", ones)),  # layer "count"; frac = 0 + the head's output
        readout=classifier({"frac": 1}, bias="-1/2"),  # logit frac - 1/2 at position 0
        reference="my notes, section 1",
    )


# 3. The claims: what the network does, each with its bound (here: every word of length 1..10).


def ones_over_n(p: Point) -> Fraction:
    """#1/n for the word at a point (p.word: the word, p.n: its number of positions)."""
    return Fraction(p.word.count("1"), p.n)


def claims(values: Mapping[str, Any]) -> tuple[Claim, ...]:
    return (
        Recognizes(
            id="recognizes",
            statement="accepts exactly the words with more 1s than 0s",
            reference="section 1",
            language=MAJORITY,
            min_len=1,  # the empty word has no position to read
            max_len=10,
        ),
        ValueIs(
            id="frac",
            statement="the attention layer writes frac = #1/n at every position",
            reference="section 1",
            quantity=StateValue(after="count", dim="frac"),
            expected=ones_over_n,
            expected_text="#1/n",
            min_len=1,
            max_len=10,
        ),
    )


# 4. The registration: netproof looks for this tuple (note the trailing comma).

CONSTRUCTIONS = (
    Construction(
        name=NAME,
        paper_id="user.__MODULE__",
        title="MAJORITY with one uniform-attention layer",
        reference="my notes, section 1",
        params=(),
        build=lambda values: build(),
        claims=claims,
        language=MAJORITY,
    ),
)
'''
"""The module ``netproof new NAME`` writes (``__NAME__``, ``__MODULE__``, ``__FILE__`` are the
construction name, the name with underscores and the file name)."""
