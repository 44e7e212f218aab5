"""Test-wide setup: ``tests/support`` (helper modules shared by test files, e.g.
``weight_mutants``) goes on ``sys.path``. The tests run with ``--import-mode=importlib`` and
``tests/`` is no package, so this is how a test module imports a shared helper; pytest loads this
file before any test module, in every xdist worker too."""

from __future__ import annotations

import sys
from pathlib import Path

SUPPORT = str(Path(__file__).parent / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)
