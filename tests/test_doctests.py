"""Every docstring example in the package runs, as ``netproof.*`` modules.

pytest's ``--doctest-modules`` would import ``symbolic/ir.py`` by its path in the checkout (as
``symbolic.ir``: a second copy of the module beside ``netproof.symbolic.ir``, with classes of its
own), so the examples are collected here instead: every module under :mod:`netproof` is imported
by its package name and each docstring with examples is one test, run with the options pytest's
doctests use (``ELLIPSIS``).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import netproof

OPTIONAL = frozenset({"torch", "matplotlib", "cvc5"})


def _modules() -> list[str]:
    names = ["netproof"]
    for info in pkgutil.walk_packages(netproof.__path__, "netproof."):
        top = info.name.split(".")[1]
        if top in {"symbolic", "verifier", "constructions"}:
            names.append(info.name)
    return sorted(names)


def _import(name: str) -> ModuleType | str:
    """The module, or why it cannot be imported here (an optional library missing)."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        if err.name is not None and err.name.split(".")[0] in OPTIONAL:
            return f"{name} needs {err.name}, not installed"
        raise


def _examples() -> list[object]:
    finder = doctest.DocTestFinder()
    params: list[object] = []
    for name in _modules():
        module = _import(name)
        if isinstance(module, str):
            params.append(pytest.param(None, id=name, marks=pytest.mark.skip(reason=module)))
            continue
        for test in sorted(finder.find(module, name), key=lambda t: t.name):
            if test.examples:
                params.append(pytest.param(test, id=test.name))
    return params


@pytest.mark.parametrize("test", _examples())
def test_the_docstring_examples_run_as_written(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test.globs = dict(test.globs)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_module_of_the_package_is_found() -> None:
    names = _modules()
    assert {
        "netproof.symbolic.ir",
        "netproof.verifier.claims",
        "netproof.constructions.yao2021",
    } <= set(names)
