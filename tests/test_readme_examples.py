"""The Python examples in README.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_python_block_of_the_readme_runs_and_its_tests_pass() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = list(re.finditer(r"```python\n(.*?)```", text, flags=re.DOTALL))
    assert blocks, "the README has no python example"
    for found in blocks:
        # padded to the block's first line, so that a line number (in a traceback, or where
        # hypothesis reads a test's source) is the README's own
        block = "\n" * text.count("\n", 0, found.start(1)) + found.group(1)
        namespace: dict[str, object] = {}
        exec(compile(block, str(README), "exec"), namespace)
        tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
        for test in tests:
            test()
