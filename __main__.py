"""``python -m netproof`` is the same command line as ``netproof``."""

import sys

from netproof.verifier.cli import main

if __name__ == "__main__":
    sys.exit(main())
