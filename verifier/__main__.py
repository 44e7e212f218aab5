"""``python -m verifier`` is the same command line as ``netproof``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
