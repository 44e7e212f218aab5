"""The import table of STYLE.md §2, enforced by reading every module's imports with ``ast``.

- ``symbolic`` imports the standard library and itself only; its interpreters may import their
  number library (``sympy_interp``: sympy and mpmath; ``interval`` and ``recurrent``: mpmath) and its torch export
  torch (``torch_export``, when called: importing it leaves torch unloaded). Never z3,
  ``verifier`` or ``constructions``, nor torch elsewhere.
- ``constructions`` builds IR and declares claims: it may import ``symbolic`` (the IR and its
  builders), ``verifier.claims``, ``verifier.machines`` (the reference machines it compiles) and
  sympy, never an interpreter, a checker, the CLI, z3 or torch.
- ``verifier`` imports z3 only inside functions, so importing any package leaves z3 and torch
  unloaded (checked in a fresh interpreter).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}

INTERPRETER_MODULES = frozenset(
    {
        "symbolic.exact", "symbolic.sympy_interp", "symbolic.interval", "symbolic.evaluation",
        "symbolic.batched", "symbolic.torch_export", "symbolic.torch_backend", "symbolic.recurrent",
        "symbolic.seq2seq",
    }
)
SYMBOLIC_EXTRAS = {
    "symbolic.sympy_interp": frozenset({"sympy", "mpmath"}),
    "symbolic.interval": frozenset({"mpmath"}),
    "symbolic.recurrent": frozenset({"mpmath"}),
    "symbolic.batched": frozenset({"numpy"}),
    "symbolic.torch_export": frozenset({"torch"}),
    "symbolic.torch_backend": frozenset({"torch"}),
}


@dataclass(frozen=True)
class Import:
    """One imported module, fully qualified, with where it was imported."""

    module: str  # e.g. "symbolic.exact", "z3", "mpmath.libmp"
    importer: str  # e.g. "verifier.checker"
    line: int
    lazy: bool  # inside a function body

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def __str__(self) -> str:
        where = "inside a function" if self.lazy else "at module level"
        return f"{self.importer}:{self.line} imports {self.module} ({where})"


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


def _local(module: str) -> str:
    """``netproof.symbolic.ir`` as the repository's ``symbolic.ir``."""
    return module.removeprefix("netproof.")


def imports_of(path: Path) -> list[Import]:
    """Every import in ``path`` (module level, functions, TYPE_CHECKING blocks), resolved to
    absolute module names; ``from pkg import sub`` counts as importing ``pkg.sub`` when ``sub`` is
    one of this repository's modules."""
    importer = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(_local(alias.name), importer, child.lineno, lazy))
            elif isinstance(child, ast.ImportFrom):
                base = _local(_resolve(importer, is_package, child.level, child.module))
                found.append(Import(base, importer, child.lineno, lazy))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    if alias.name != "*" and _is_module(sub):
                        found.append(Import(sub, importer, child.lineno, lazy))
            visit(child, inner)

    visit(tree, False)
    return found


def _package_imports(package: str) -> list[Import]:
    files = sorted((REPO / package).rglob("*.py"))
    assert files, f"no modules found under {REPO / package}"
    return [imp for f in files for imp in imports_of(f)]


def test_the_import_parser_sees_relative_lazy_and_submodule_imports() -> None:
    # A self-check of the helper on the real tree, so that the rules below cannot pass vacuously.
    checker = [i for i in _package_imports("verifier") if i.importer == "verifier.checker"]
    modules = {i.module for i in checker}
    assert {"symbolic.exact", "verifier.claims", "sympy"} <= modules
    assert any(i.module == "z3" and i.lazy for i in checker)
    cli = [i for i in _package_imports("verifier") if i.importer == "verifier.cli"]
    assert any(i.module == "constructions" and i.lazy for i in cli)


def test_symbolic_imports_only_the_standard_library_and_itself() -> None:
    offenders = []
    for imp in _package_imports("symbolic"):
        if imp.top in STDLIB or imp.top == "symbolic":
            continue
        if imp.top in SYMBOLIC_EXTRAS.get(imp.importer, frozenset()):
            continue
        offenders.append(str(imp))
    assert offenders == [], "symbolic must import only the stdlib and itself:\n" + "\n".join(offenders)


def test_no_module_of_symbolic_imports_z3_torch_verifier_or_constructions() -> None:
    banned = {"z3", "torch", "verifier", "constructions"}
    offenders = [
        str(i)
        for i in _package_imports("symbolic")
        if i.top in banned and i.top not in SYMBOLIC_EXTRAS.get(i.importer, frozenset())
    ]
    assert offenders == []


def test_constructions_never_import_an_interpreter_a_checker_the_cli_z3_or_torch() -> None:
    banned = INTERPRETER_MODULES | {"verifier.checker", "verifier.cli"}
    offenders = [
        str(i)
        for i in _package_imports("constructions")
        if i.module in banned or i.top in {"z3", "torch"}
    ]
    assert offenders == []


def test_constructions_import_only_the_ir_claims_sympy_and_the_standard_library() -> None:
    offenders = []
    for imp in _package_imports("constructions"):
        if imp.top in STDLIB or imp.top in {"constructions", "sympy"}:
            continue
        if imp.module == "symbolic" or (imp.top == "symbolic" and imp.module not in INTERPRETER_MODULES):
            continue
        if imp.module in ("verifier.claims", "verifier.machines"):
            # the claim types, and the reference machines a construction compiles (plain data with
            # their own plain-Python semantics; no network interpreter)
            continue
        offenders.append(str(imp))
    assert offenders == [], "\n".join(offenders)


def test_verifier_imports_z3_and_torch_only_inside_functions() -> None:
    eager = [str(i) for i in _package_imports("verifier") if i.top in {"z3", "torch"} and not i.lazy]
    assert eager == []


def test_importing_any_package_leaves_z3_and_torch_unloaded(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "import netproof.symbolic, netproof.constructions, netproof.verifier, netproof.verifier.cli\n"
        "import netproof.verifier.exhaustive.checker\n"
        "names = ('z3', 'torch', 'netproof.symbolic', 'netproof.verifier.cli')\n"
        "print(json.dumps(sorted(m for m in names if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # the package names prove the probe really imported the packages
    assert json.loads(done.stdout) == ["netproof.symbolic", "netproof.verifier.cli"]
