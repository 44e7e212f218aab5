"""The import table of STYLE.md §2 and the layout of issue 18, enforced by reading every
module's imports with ``ast`` (module level, inside functions and ``TYPE_CHECKING`` blocks).

- One import package, ``netproof``: the repository root is the package itself, ``symbolic/``,
  ``verifier/`` and ``constructions/`` its subpackages; every import inside it says ``netproof.``
  (or is relative), never a top-level ``symbolic``, ``verifier`` or ``constructions``.
- No import cycle between any two modules of ``netproof`` (an import inside a function counts:
  it is a dependency all the same), no module takes another module's ``_private`` name, and no
  generic module names a paper: nothing in ``netproof.symbolic`` or ``netproof.verifier`` imports
  ``netproof.constructions``, except the campaign and CLI layers, which may import the registry
  (the package ``netproof.constructions``) and never a paper module.
- The subpackages of ``netproof.verifier`` import each other downwards only (:data:`LAYERS`).
- ``symbolic`` imports the standard library and itself only; its interpreters may import their
  number library, and its torch modules torch. Never z3, ``verifier`` or ``constructions``.
- ``constructions`` builds IR and declares claims: it may import ``symbolic`` (the IR and its
  builders), ``verifier.claims`` (claims, languages, reference machines) and sympy, never an
  interpreter, an engine, the CLI, z3 or torch.
- ``verifier`` imports z3 and torch only inside functions, so importing any package leaves them
  unloaded (checked in a fresh interpreter).
- No module is over :data:`MAX_LINES` lines unless its docstring says why it must be one piece.

The checks are functions of a source tree, so the tests at the end plant each kind of fault in a
small tree of their own and show that the check fires.
"""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
PACKAGE = "netproof"
SUBPACKAGES = ("symbolic", "verifier", "constructions", "kernel")
MAX_LINES = 1000
ONE_PIECE = "one piece"  # the words a long module's docstring uses to say why it is not split

INTERPRETERS = (
    "netproof.symbolic.exact",
    "netproof.symbolic.sympy_interp",
    "netproof.symbolic.interval",
    "netproof.symbolic.evaluation",
    "netproof.symbolic.batched",
    "netproof.symbolic.torch_",
    "netproof.symbolic.recurrent",
    "netproof.symbolic.seq2seq",
)
"""The interpreters, by module name (a name ending in ``_`` is a prefix: ``torch_`` covers every
torch module, ``torch_backend``, ``torch_export`` and their parts; ``recurrent`` is the recurrent
interpreter, not ``recurrent_ir``)."""

SYMBOLIC_EXTRAS: dict[str, frozenset[str]] = {
    "netproof.symbolic.sympy_interp": frozenset({"sympy", "mpmath"}),
    "netproof.symbolic.interval": frozenset({"mpmath"}),
    "netproof.symbolic.recurrent": frozenset({"mpmath"}),
    "netproof.symbolic.batched": frozenset({"numpy"}),
    "netproof.symbolic.torch_": frozenset({"torch"}),
    # the importers (one module per source): the source's library, inside functions
    "netproof.symbolic.importers": frozenset({"torch", "onnx", "transformer_lens", "tracr"}),
}
"""The number libraries a symbolic module may import, by module name (as in :data:`INTERPRETERS`)."""

LAYERS: dict[str, frozenset[str]] = {
    "claims": frozenset(),
    "smtlib": frozenset({"claims"}),
    "exhaustive": frozenset({"claims", "smtlib"}),
    "smt": frozenset({"claims", "smtlib", "exhaustive"}),
    "fuzzing": frozenset({"claims", "exhaustive"}),
    "floats": frozenset({"claims", "exhaustive"}),
    "models": frozenset({"claims"}),
    "campaign": frozenset({"claims", "smtlib", "exhaustive", "smt", "fuzzing", "floats"}),
    "cli": frozenset(
        {"claims", "smtlib", "exhaustive", "smt", "fuzzing", "floats", "models", "campaign"}
    ),
}
"""The subpackages of ``netproof.verifier`` each subpackage may import (itself always)."""

REGISTRY_USERS = ("netproof.verifier.campaign", "netproof.verifier.cli")
"""The layers that may import the registry ``netproof.constructions`` (not a paper module)."""


@dataclass(frozen=True)
class Import:
    """One imported module, fully qualified, with where it was imported."""

    module: str  # e.g. "netproof.symbolic.exact", "z3", "mpmath.libmp"
    importer: str  # e.g. "netproof.verifier.exhaustive.checker"
    line: int
    lazy: bool  # inside a function body
    names: tuple[str, ...] = ()  # for `from module import a, b`: a, b

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def __str__(self) -> str:
        where = "inside a function" if self.lazy else "at module level"
        return f"{self.importer}:{self.line} imports {self.module} ({where})"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def modules(root: Path = REPO) -> dict[str, Module]:
    """Every module of the package in the tree at ``root``, by its import name."""
    found: dict[str, Module] = {}
    for file, name in (("__init__.py", PACKAGE), ("__main__.py", f"{PACKAGE}.__main__")):
        if (root / file).is_file():
            found[name] = Module(name, root / file)
    for sub in SUBPACKAGES:
        for path in sorted((root / sub).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = [PACKAGE, *rel.parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = Module(".".join(parts), path)
    return found


def _resolve(importer: Module, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = importer.name.split(".")
    if not importer.is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


def imports_of(mod: Module, known: Mapping[str, Module]) -> list[Import]:
    """Every import in ``mod``, resolved to absolute module names; ``from pkg import sub`` counts
    as importing ``pkg.sub`` when ``sub`` is one of the package's modules (and not ``pkg`` itself,
    which Python loads before any of its submodules anyway)."""
    tree = ast.parse(mod.path.read_text(encoding="utf-8"), filename=str(mod.path))
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(alias.name, mod.name, child.lineno, lazy))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(mod, child.level, child.module)
                plain = tuple(a.name for a in child.names if f"{base}.{a.name}" not in known)
                if plain:  # `from pkg import sub` alone loads pkg only as every submodule does
                    found.append(Import(base, mod.name, child.lineno, lazy, plain))
                for alias in child.names:
                    if f"{base}.{alias.name}" in known:
                        found.append(Import(f"{base}.{alias.name}", mod.name, child.lineno, lazy))
            visit(child, inner)

    visit(tree, False)
    return found


def all_imports(root: Path = REPO) -> list[Import]:
    known = modules(root)
    return [imp for mod in known.values() for imp in imports_of(mod, known)]


def _target(imp: Import, known: Mapping[str, Module]) -> str | None:
    """The package module an import loads (its longest known prefix), or None for a library."""
    parts = imp.module.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in known:
            return name
    return None


def cycles(root: Path = REPO) -> list[list[str]]:
    """The import cycles between modules: each strongly connected component of more than one
    module of the import graph (lazy imports included), as a sorted list of names."""
    known = modules(root)
    edges: dict[str, set[str]] = {name: set() for name in known}
    for imp in all_imports(root):
        target = _target(imp, known)
        if target is not None and target != imp.importer:
            edges[imp.importer].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def private_imports(root: Path = REPO) -> list[str]:
    """``from other_module import _name``: a module taking another module's private name."""
    known = modules(root)
    out = []
    for imp in all_imports(root):
        if _target(imp, known) is None or imp.module == imp.importer:
            continue
        for name in imp.names:
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                out.append(f"{imp} and takes its private name {name}")
    return out


def paper_imports(root: Path = REPO) -> list[str]:
    """Generic modules (symbolic, verifier) importing the constructions: only the campaign and
    CLI layers may, and only the registry ``netproof.constructions`` itself."""
    out = []
    for imp in all_imports(root):
        generic = imp.importer.startswith((f"{PACKAGE}.symbolic", f"{PACKAGE}.verifier"))
        if not generic or not (
            imp.module == f"{PACKAGE}.constructions"
            or imp.module.startswith(f"{PACKAGE}.constructions.")
        ):
            continue
        if imp.importer.startswith(REGISTRY_USERS) and imp.module == f"{PACKAGE}.constructions":
            continue
        out.append(str(imp))
    return out


def layer_violations(root: Path = REPO) -> list[str]:
    """Imports between subpackages of ``netproof.verifier`` that point up or sideways."""
    prefix = f"{PACKAGE}.verifier."
    out = []
    for imp in all_imports(root):
        if not (imp.importer.startswith(prefix) and imp.module.startswith(prefix)):
            continue
        src = imp.importer[len(prefix) :].split(".")[0]
        dst = imp.module[len(prefix) :].split(".")[0]
        if src == dst or src not in LAYERS:
            continue
        if dst not in LAYERS[src]:
            out.append(f"{imp}: {src} may import only {', '.join(sorted(LAYERS[src])) or 'itself'}")
    return out


def unwrapped_lines(text: str) -> int:
    """The module's lines with every bracketed expression on one line: the lines the formatter
    adds when it wraps a call or a literal across lines are layout, not size, so they do not
    count (docstrings, comments and statements do, one line each as written)."""
    continued = set()
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
            if depth == 0:
                continued.update(range(tok.start[0] + 1, tok.end[0] + 1))
        if depth > 0 and tok.type in (tokenize.NL, tokenize.NEWLINE):
            continued.add(tok.start[0] + 1)
    return text.count("\n") - len(continued)


def long_modules(root: Path = REPO) -> list[str]:
    out = []
    for mod in modules(root).values():
        text = mod.path.read_text(encoding="utf-8")
        lines = unwrapped_lines(text)
        doc = ast.get_docstring(ast.parse(text)) or ""
        if lines > MAX_LINES and ONE_PIECE not in doc:
            out.append(
                f"{mod.name}: {lines} lines, and its docstring does not say why it must be {ONE_PIECE}"
            )
    return out


def _imports_in(package: str) -> list[Import]:
    found = [
        i for i in all_imports() if i.importer == package or i.importer.startswith(package + ".")
    ]
    assert found, f"no imports found in {package}"
    return found


def _named(module: str, name: str) -> bool:
    """``module`` is ``name``, a module inside it, or (for a name ending in ``_``) starts with it."""
    return (
        module.startswith(name)
        if name.endswith("_")
        else module == name or module.startswith(name + ".")
    )


def _is_interpreter(module: str) -> bool:
    return any(_named(module, name) for name in INTERPRETERS)


def _extras(importer: str) -> frozenset[str]:
    return frozenset().union(
        *(libs for name, libs in SYMBOLIC_EXTRAS.items() if _named(importer, name))
    )


# --------------------------------------------------------------------------- the rules on this tree


def test_the_import_parser_sees_relative_lazy_and_submodule_imports() -> None:
    # A self-check of the helper on the real tree, so that the rules below cannot pass vacuously.
    imports = _imports_in("netproof.verifier.exhaustive")
    modules_seen = {i.module for i in imports}
    assert {"netproof.symbolic.exact", "netproof.verifier.claims", "sympy"} <= modules_seen
    assert any(i.module == "z3" and i.lazy for i in imports)
    upper = _imports_in("netproof.verifier.campaign") + _imports_in("netproof.verifier.cli")
    assert any(i.module == "netproof.constructions" for i in upper)
    assert len(modules()) > 60


def test_every_import_inside_the_package_names_netproof() -> None:
    offenders = [str(i) for i in all_imports() if i.top in SUBPACKAGES]
    assert offenders == [], "write `netproof.symbolic`, not `symbolic`:\n" + "\n".join(offenders)


def test_no_two_modules_import_each_other_even_through_others() -> None:
    assert cycles() == []


def test_no_module_takes_another_modules_private_name() -> None:
    assert private_imports() == []


def test_no_generic_module_imports_a_paper_module() -> None:
    assert paper_imports() == []


def test_the_verifiers_subpackages_import_downwards_only() -> None:
    assert set(LAYERS) == {
        p.name for p in (REPO / "verifier").iterdir() if (p / "__init__.py").is_file()
    }
    assert layer_violations() == []


def test_no_module_is_over_a_thousand_lines_without_saying_why() -> None:
    assert long_modules() == []


def test_symbolic_imports_only_the_standard_library_and_itself() -> None:
    offenders = []
    for imp in _imports_in("netproof.symbolic"):
        if (
            imp.top in STDLIB
            or imp.module == "netproof.symbolic"
            or imp.module.startswith("netproof.symbolic.")
        ):
            continue
        if imp.top in _extras(imp.importer):
            continue
        offenders.append(str(imp))
    assert offenders == [], "symbolic must import only the stdlib and itself:\n" + "\n".join(
        offenders
    )


KERNEL_MAY_IMPORT = frozenset({"z3", "cvc5"})
"""What ``netproof.kernel`` may import besides the standard library (``fractions`` included) and
itself: the solvers' Python bindings. Nothing of netproof, nothing else."""


def kernel_violations(root: Path = REPO) -> list[str]:
    """Imports in ``netproof.kernel`` of anything but the stdlib, itself and the solvers."""
    return [
        str(imp)
        for imp in all_imports(root)
        if (imp.importer == "netproof.kernel" or imp.importer.startswith("netproof.kernel."))
        and not (
            (imp.top in STDLIB and imp.top != PACKAGE)
            or imp.top in KERNEL_MAY_IMPORT
            or imp.module == "netproof.kernel"
            or imp.module.startswith("netproof.kernel.")
        )
    ]


def test_the_kernel_imports_only_the_standard_library_and_the_solvers() -> None:
    assert _imports_in("netproof.kernel")
    assert kernel_violations() == [], (
        "netproof.kernel must import nothing of netproof:\n" + "\n".join(kernel_violations())
    )


def test_a_planted_netproof_import_in_the_kernel_is_found(tmp_path: Path) -> None:
    for what in (
        "from netproof.symbolic import exact",
        "import numpy",
        "from ..verifier import smt",
    ):
        (tmp_path / "kernel").mkdir(exist_ok=True)
        (tmp_path / "kernel" / "__init__.py").write_text(
            "from .check import run\n", encoding="utf-8"
        )
        (tmp_path / "kernel" / "check.py").write_text(
            f"import fractions\nimport z3\n\ndef run():\n    {what}\n", encoding="utf-8"
        )
        assert len(kernel_violations(tmp_path)) == 1, what


def test_constructions_import_only_the_ir_the_claims_sympy_and_the_standard_library() -> None:
    offenders = []
    for imp in _imports_in("netproof.constructions"):
        if (
            imp.top in STDLIB
            or imp.top == "sympy"
            or imp.module.startswith("netproof.constructions")
        ):
            continue
        if imp.module.startswith("netproof.symbolic") and not _is_interpreter(imp.module):
            continue
        if imp.module == "netproof.verifier.claims" or imp.module.startswith(
            "netproof.verifier.claims."
        ):
            # claims, languages, and the reference machines a construction compiles (plain data
            # with their own plain-Python semantics; no network interpreter)
            continue
        offenders.append(str(imp))
    assert offenders == [], "\n".join(offenders)


def test_verifier_imports_z3_and_torch_only_inside_functions() -> None:
    eager = [
        str(i)
        for i in _imports_in("netproof.verifier")
        if i.top in {"z3", "torch", "cvc5"} and not i.lazy
    ]
    assert eager == []


def test_importing_any_package_leaves_z3_and_torch_unloaded(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "import netproof.symbolic, netproof.constructions, netproof.verifier, netproof.verifier.cli\n"
        "import netproof.verifier.exhaustive, netproof.verifier.smt, netproof.verifier.campaign\n"
        "names = ('z3', 'torch', 'netproof.symbolic', 'netproof.verifier.cli')\n"
        "print(json.dumps(sorted(m for m in names if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # the package names prove the probe really imported the packages
    assert json.loads(done.stdout) == ["netproof.symbolic", "netproof.verifier.cli"]


# --------------------------------------------------------------------------- the checks fire


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    """A small package tree: the root package, the three subpackages, and ``files``."""
    base = {
        "__init__.py": '"""netproof."""\n',
        "symbolic/__init__.py": '"""IR."""\n',
        "symbolic/ir.py": '"""IR."""\n\n\ndef _check() -> None:\n    pass\n',
        "verifier/__init__.py": '"""Verifier."""\n',
        "verifier/claims/__init__.py": '"""Claims."""\n',
        "verifier/exhaustive/__init__.py": '"""Exhaustive."""\n',
        "verifier/smt/__init__.py": '"""SMT."""\n',
        "constructions/__init__.py": '"""Registry."""\n\nfrom . import paper\n',
        "constructions/paper.py": '"""A paper."""\n',
    }
    for rel, text in {**base, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _names(found: Iterable[object]) -> str:
    return "\n".join(map(str, found))


def test_a_planted_cycle_is_found_even_through_an_import_inside_a_function(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "verifier/smt/a.py": '"""A."""\n\nfrom netproof.verifier.smt import b\n',
            "verifier/smt/b.py": '"""B."""\n\n\ndef f() -> None:\n    from . import c\n',
            "verifier/smt/c.py": '"""C."""\n\nfrom .a import x\n',
        },
    )
    assert cycles(root) == [
        ["netproof.verifier.smt.a", "netproof.verifier.smt.b", "netproof.verifier.smt.c"]
    ]


def test_a_planted_private_import_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"symbolic/validate.py": '"""V."""\n\nfrom .ir import _check\n'})
    assert "netproof.symbolic.validate:3 imports netproof.symbolic.ir" in _names(
        private_imports(root)
    )
    assert "_check" in _names(private_imports(root))


def test_a_planted_paper_import_is_found_but_the_registry_in_the_cli_is_allowed(
    tmp_path: Path,
) -> None:
    root = _tree(
        tmp_path,
        {
            "verifier/exhaustive/checker.py": '"""C."""\n\n\ndef f() -> None:\n    from netproof.constructions.paper import x\n',
            "verifier/cli/__init__.py": '"""CLI."""\n\nfrom netproof.constructions import REGISTRY\n',
            "verifier/cli/run.py": '"""Run."""\n\nfrom netproof.constructions.paper import x\n',
        },
    )
    found = _names(paper_imports(root))
    assert "netproof.verifier.exhaustive.checker:5 imports netproof.constructions.paper" in found
    assert "netproof.verifier.cli.run:3 imports netproof.constructions.paper" in found
    assert "netproof.verifier.cli:3" not in found


def test_a_planted_upward_import_between_subpackages_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "verifier/exhaustive/checker.py": '"""C."""\n\nfrom netproof.verifier.smt import encoder\n'
        },
    )
    assert "exhaustive may import only claims, smtlib" in _names(layer_violations(root))


def test_a_planted_long_module_is_found_unless_its_docstring_says_why(tmp_path: Path) -> None:
    body = "x = 1\n" * (MAX_LINES + 1)
    root = _tree(
        tmp_path,
        {
            "symbolic/long.py": '"""Long."""\n' + body,
            "symbolic/whole.py": '"""Long, and it must be one piece: the reason."""\n' + body,
        },
    )
    assert _names(long_modules(root)).startswith("netproof.symbolic.long:")
    assert "whole" not in _names(long_modules(root))


def test_every_module_is_listed_in_the_architecture_page() -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [
        str(mod.path.relative_to(REPO))
        for mod in modules().values()
        if f"`{mod.path.relative_to(REPO)}`" not in page
    ]
    assert missing == [], "add them to docs/architecture.md's module tables:\n" + "\n".join(missing)
