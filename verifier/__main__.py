"""``python -m verifier`` is the same command line as ``netproof``."""

import sys

from .cli import main

sys.exit(main())
