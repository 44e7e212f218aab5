"""The example notebook docs/examples/tour.ipynb runs as written.

Without Jupyter: each code cell is parsed and run in one shared namespace, in order, as a kernel
would (a cell's last expression is evaluated and, where it has ``_repr_html_``, rendered as
Jupyter would show it). matplotlib draws off-screen (Agg) and the cells run in a temporary folder.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "examples" / "tour.ipynb"


def _cells(kind: str) -> list[str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def _run_cell(source: str, namespace: dict[str, Any], number: int) -> Any:
    """Run one cell like a kernel: every statement, and the value of a last bare expression."""
    tree = ast.parse(source, filename=f"tour.ipynb cell {number}")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, f"tour.ipynb cell {number}", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), f"tour.ipynb cell {number}", "eval"), namespace)


def test_the_example_notebook_is_stored_without_outputs_so_it_never_shows_stale_results() -> None:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) >= 8 and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_the_example_notebook_runs_and_shows_what_its_text_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    shown: list[Any] = []
    before = set(plt.get_fignums())
    try:
        for number, source in enumerate(_cells("code"), start=1):
            value = _run_cell(source, namespace, number)
            if value is not None:
                shown.append(value._repr_html_() if hasattr(value, "_repr_html_") else repr(value))
        figures = len(set(plt.get_fignums()) - before)
    finally:
        for number in set(plt.get_fignums()) - before:
            plt.close(number)
    # what the text promises: a network in one line, an accepted word, a proof, a refutation
    assert shown[0].startswith("<div><b>Network dyck(k=2, depth=2, variant=fixed)</b><table>")
    assert "<details><summary>the printed form" in shown[0]
    assert (
        shown[1] == "'<Network dyck(k=2, depth=2, variant=fixed): 6 sublayers, 5 heads, 17 dims>'"
    )
    assert namespace["trace"].accepted is True and "<table" in shown[2]
    assert namespace["fixed"].exit_code == 0 and ">proved<" in shown[3]
    assert namespace["paper"].exit_code == 1 and "refuted on &#x27;()&#x27;" in shown[4]
    assert len(shown) == 5
    assert figures == 2  # the attention maps and the stack over time
    assert list(tmp_path.iterdir()) == []  # the tour writes no files
