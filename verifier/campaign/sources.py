"""Where a campaign's constructions come from: built-in names, user modules, network files and
``Construction`` objects, with their parameters.

A :class:`Session` is the registry of one invocation (one ``netproof`` command, one call of
:func:`netproof.verifier.campaign.prove`): the built-in constructions of
:data:`netproof.constructions.REGISTRY` plus what it loaded, each user module and network file
once (by real path), with the file every user construction came from, so that a worker process
that did not inherit the session can load it again (:meth:`Session.for_task`).

Construction arguments, as the command line takes them (:meth:`Session.resolve`):

- a built-in ``NAME`` (``netproof list``);
- an opt-in group ``GROUP`` of :data:`netproof.constructions.GROUPS` (``synth``: all of its
  constructions) or one of its members by name (``synth-contains-ab``), built when named: the
  default selection (no arguments) leaves the groups out;
- a user module ``FILE.py`` (all of its constructions) or ``FILE.py:NAME`` (one of them), see
  :mod:`netproof.verifier.campaign.usermod`;
- a network file ``FILE.json`` (``netproof export``): the file's network with the claims of the
  construction and parameters recorded in its ``extra``.

Parameters are text, ``key=value`` on the command line (:func:`parse_assignments`), parsed by the
construction (:func:`parameter_values`). Every bad input is a
:class:`~netproof.verifier.campaign.errors.CampaignError` naming the value and the fix.

>>> parse_assignments(["k=2", "depth = 3"])
{'k': '2', 'depth': '3'}
>>> session = Session()
>>> [c.name for c in session.resolve("parity")]
['parity']
>>> parameter_values(session.construction("dyck"), {"k": "1"})["k"]
1

May import the IR (and its network files), the vocabulary, the registry
:mod:`netproof.constructions` and the campaign's own lower modules (errors, usermod).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq, fingerprint
from netproof.verifier.claims import Construction, Experiment

from .errors import CampaignError
from .usermod import is_module_ref, load, module_filename, split_ref

__all__ = [
    "Session",
    "build_network",
    "builtin_experiments",
    "builtin_groups",
    "builtin_registry",
    "parameter_values",
    "parse_assignments",
    "show_params",
]


def builtin_registry() -> Mapping[str, Construction]:
    """The built-in constructions by name (:data:`netproof.constructions.REGISTRY`)."""
    from netproof.constructions import REGISTRY

    return REGISTRY


def builtin_groups() -> Mapping[str, Mapping[str, Callable[[], Construction]]]:
    """The opt-in groups (:data:`netproof.constructions.GROUPS`): outside the default set, each
    construction built when named."""
    from netproof.constructions import GROUPS

    return GROUPS


def builtin_experiments() -> Mapping[str, Experiment]:
    """The papers' float experiments (figures) by name (:data:`netproof.constructions.EXPERIMENTS`)."""
    from netproof.constructions import EXPERIMENTS

    return EXPERIMENTS


def parse_assignments(items: Sequence[str]) -> dict[str, str]:
    """``["key=value", ...]`` (the command line's ``-p``) as a mapping; refused: an item without
    ``=``, one with no name, a name given twice."""
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise CampaignError(f"parameter {item!r} must look like key=value (e.g. -p c=ln(2))")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise CampaignError(f"parameter {item!r} has no name before '='")
        if key in out:
            raise CampaignError(f"parameter {key!r} is given twice")
        out[key] = value.strip()
    return out


def parameter_values(c: Construction, given: Mapping[str, str]) -> dict[str, Any]:
    """Every parameter of ``c`` parsed (defaults for those not ``given``); an unknown name or a
    value the construction refuses is a :class:`CampaignError` with the construction's message."""
    try:
        return c.parse_params(given)
    except KeyError as exc:
        raise CampaignError(str(exc.args[0])) from None
    except ValueError as exc:
        raise CampaignError(f"{c.name}: {exc}") from None


def build_network(
    c: Construction, values: Mapping[str, Any], n: int | None = None
) -> Network | RecurrentNetwork | Seq2Seq:
    """``c``'s network for these parameter values (and, for a construction built per word
    length, the length ``n``); a value its builder refuses (a length out of range, a size over
    the construction's limit) is a :class:`CampaignError` with the builder's message."""
    try:
        return c.network(values, n) if c.per_length else c.network(values)
    except ValueError as exc:
        raise CampaignError(f"{c.name}: {exc}") from None


def show_params(values: Mapping[str, Any]) -> dict[str, str]:
    """Parameter values as text, as records and ``--json`` show them."""
    return {k: str(v) for k, v in values.items()}


class Session:
    """The constructions one invocation can name: the built-ins plus the user modules, network
    files and ``Construction`` objects it added. Each file is read once."""

    def __init__(self) -> None:
        self._user: dict[str, Construction] = {}
        self._source: dict[str, str | None] = {}
        self._loaded: dict[str, tuple[Construction, ...]] = {}
        self._opted: set[str] = set()

    def registry(self) -> Mapping[str, Construction]:
        """Every construction by name: the built-ins, then those this session added."""
        builtin = builtin_registry()
        if not self._user:
            return builtin
        return {**builtin, **self._user}

    def construction(self, name: str) -> Construction:
        """The construction called ``name`` (built-in, added, or of an opt-in group)."""
        reg = self.registry()
        if name not in reg and self.opt_in(name) is not None:
            reg = self.registry()
        if name not in reg:
            groups = builtin_groups()
            members = [m for group in groups.values() for m in group]
            close = difflib.get_close_matches(name, [*reg, *groups, *members], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            opt = "".join(
                f"; the opt-in group {g!r} ({len(m)} members, e.g. {next(iter(m))!r})"
                for g, m in groups.items()
                if m
            )
            raise CampaignError(
                f"unknown construction {name!r}; {hint}known: {', '.join(reg)}{opt} (see `netproof list`)"
            )
        return reg[name]

    def opt_in(self, name: str) -> Construction | None:
        """The construction ``name`` of an opt-in group (:data:`netproof.constructions.GROUPS`),
        built now and added to this session; None where no group has it (or it is already
        here)."""
        if name in self.registry():
            return None
        for group in builtin_groups().values():
            if name in group:
                c = group[name]()
                self._user[c.name] = c
                self._source[c.name] = None
                self._opted.add(c.name)
                return c
        return None

    def group(self, name: str) -> list[Construction] | None:
        """Every construction of the opt-in group ``name`` (built now), or None for no group."""
        group = builtin_groups().get(name)
        if group is None:
            return None
        return [self.construction(member) for member in group]

    def source(self, name: str) -> str | None:
        """The user module or network file the construction ``name`` came from (as given), or
        None for a built-in or a ``Construction`` object."""
        return self._source.get(name)

    # ------------------------------------------------------------------ adding

    def load_module(self, path: str) -> tuple[Construction, ...]:
        """The constructions of the user module ``path``, added to this session."""
        key = os.path.realpath(path)
        if key in self._loaded:
            return self._loaded[key]
        found = load(path, builtin=builtin_registry())
        for c in found:
            if c.name in self._user:
                raise CampaignError(
                    f"{path}: construction {c.name!r} is also defined by {self._source[c.name]}; rename one of them"
                )
        for c in found:
            self._user[c.name] = c
            self._source[c.name] = path
        self._loaded[key] = found
        return found

    def add(self, c: Construction) -> Construction:
        """A ``Construction`` object given directly (a notebook's own), added under its name; a
        built-in passed as an object is the built-in."""
        if not isinstance(c, Construction):
            raise CampaignError(
                f"{c!r} is {type(c).__name__}, not a netproof.verifier.claims.Construction; pass a construction's "
                "name, a module FILE.py, a network file FILE.json or a Construction"
            )
        reg = self.registry()
        if reg.get(c.name) is c:
            return c
        if c.name in builtin_registry():
            raise CampaignError(
                f"construction {c.name!r} has the name of a built-in construction; rename it (e.g. 'my-{c.name}')"
            )
        if c.name in self._user:
            where = self._source[c.name] or "another Construction object"
            raise CampaignError(
                f"construction {c.name!r} is also defined by {where}; rename one of them"
            )
        self._user[c.name] = c
        self._source[c.name] = None
        return c

    def load_network_file(self, path: str) -> tuple[Network, Construction | None, dict[str, Any]]:
        """A network file (``netproof export``) with the construction and parameters it came
        from, when its ``extra`` names a known construction (for the reference language)."""
        from netproof.symbolic.netfile import NetworkFileError, load_file

        try:
            net, extra = load_file(path)
        except OSError as exc:
            raise CampaignError(f"cannot read the network file {path!r}: {exc.strerror}") from None
        except NetworkFileError as exc:
            raise CampaignError(f"{path}: {exc}") from None
        extra = dict(extra or {})
        name = extra.get("construction")
        reg = self.registry()
        module = extra.get("module")
        module = os.path.join(os.path.dirname(path), module) if isinstance(module, str) else None
        if isinstance(name, str) and name not in reg and module is not None:
            # exported from a user module (`netproof export|compile FILE.py:NAME`): it declares the claims
            if not os.path.isfile(module):
                raise CampaignError(
                    f"{path} was exported from the module {module}, which is not there; put the module back "
                    "(the file records its path relative to the file's folder), or prove the module itself"
                )
            self.load_module(module)
            reg = self.registry()
        if isinstance(name, str) and name in reg:
            c = reg[name]
            params = extra.get("params") or {}
            try:
                values = c.parse_params({str(k): str(v) for k, v in dict(params).items()})
            except (KeyError, ValueError):
                return net, None, {}
            built = extra.get("built")
            if (
                isinstance(built, str)
                and not c.per_length
                and fingerprint(build_network(c, values)) != built
            ):
                raise CampaignError(
                    f"{path}: {name} in {module} no longer builds the network this file was exported from (the "
                    f"module changed since); export it again: netproof export {module}:{name} --out {path}"
                )
            return net, c, values
        return net, None, {}

    def file_construction(self, path: str) -> Construction:
        """A network file as a construction: the file's network, with the claims of the
        construction and parameters recorded in its ``extra`` (so proving ``FILE.json`` checks
        those claims on the network as the file has it, edited or not)."""
        key = os.path.realpath(path)
        if key in self._loaded:
            return self._loaded[key][0]
        net, c, values = self.load_network_file(path)
        if c is None:
            raise CampaignError(
                f"{path}: its extra field names no known construction and parameters, so it has no claims to "
                "prove; `netproof run` it, or write a construction module (`netproof new`)"
            )
        if c.per_length:
            raise CampaignError(
                f"{path} holds the {c.name} network for one word length only; prove the construction itself: "
                f"`netproof prove {c.name}`"
            )
        fixed = tuple(
            dataclasses.replace(
                p, default=str(values[p.name]), choices=(str(values[p.name]),) if p.choices else ()
            )
            for p in c.params
        )
        name = os.path.basename(path)
        if name in self.registry():
            raise CampaignError(
                f"{path}: the file name {name!r} is also a construction's name; rename the file"
            )
        file_c = dataclasses.replace(c, name=name, params=fixed, build=lambda _values: net)
        self._user[name] = file_c
        self._source[name] = path
        self._loaded[key] = (file_c,)
        return file_c

    # ------------------------------------------------------------------ resolving

    def resolve(self, arg: str | Construction) -> list[Construction]:
        """A construction argument: a built-in NAME, a user module FILE.py (all of its
        constructions) or FILE.py:NAME (one of them), a network file FILE.json, or a
        ``Construction`` object."""
        if not isinstance(arg, str):
            return [self.add(arg)]
        if arg.endswith(".json"):
            if not os.path.isfile(arg):
                raise CampaignError(f"cannot read the network file {arg!r}: no such file")
            return [self.file_construction(arg)]
        if not is_module_ref(arg):
            if arg not in self.registry() and (members := self.group(arg)) is not None:
                return members
            if arg not in self.registry():
                for guess in (f"{arg}.py", module_filename(arg)):
                    if os.path.isfile(guess):
                        raise CampaignError(
                            f"unknown construction {arg!r}; to use the module {guess}, give its path: {guess}"
                        )
            return [self.construction(arg)]
        path, name = split_ref(arg)
        found = self.load_module(path)
        if name is None:
            return list(found)
        for c in found:
            if c.name == name:
                return [c]
        raise CampaignError(
            f"{path} defines no construction {name!r}; it defines: {', '.join(c.name for c in found)}"
        )

    def one(self, arg: str, command: str) -> Construction:
        """Exactly one construction, for the commands that take one (``run``, ``export``,
        ``precision``); ``command`` is named in the fix."""
        found = self.resolve(arg)
        if len(found) > 1:
            names = ", ".join(c.name for c in found)
            raise CampaignError(
                f"{arg} defines {len(found)} constructions ({names}); name one: "
                f"`netproof {command} {arg}:{found[0].name} ...`"
            )
        return found[0]

    def select(
        self, args: Sequence[str | Construction], given: Mapping[str, str]
    ) -> list[Construction]:
        """The constructions ``args`` name, in order; with no ``args``, every construction of the
        registry that has all the ``given`` parameters (none: a :class:`CampaignError`), the
        opt-in groups' constructions left out."""
        if args:
            return [c for arg in args for c in self.resolve(arg)]
        selected = [
            c
            for c in self.registry().values()
            if c.name not in self._opted and all(any(p.name == k for p in c.params) for k in given)
        ]
        if not selected:
            raise CampaignError(f"no construction has all of the parameters {', '.join(given)}")
        return selected

    def for_task(self, name: str, module: str | None) -> Construction:
        """The construction ``name`` for a worker: from this session, else loaded from the user
        module or network file ``module`` it came from."""
        reg = self.registry()
        if name not in reg and self.opt_in(name) is not None:
            reg = self.registry()
        if name not in reg and module is not None:
            if module.endswith(".json"):
                self.file_construction(module)
            else:
                self.load_module(module)
            reg = self.registry()
        if name not in reg:
            raise CampaignError(
                f"construction {name!r} is not in this process's registry and its task names no module to load it "
                "from; a Construction object is found only by worker processes forked from the session that added it"
            )
        return reg[name]
