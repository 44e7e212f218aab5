"""netproof: exact, checkable neural-network constructions from formal-language theory.

One import package with three subpackages:

- :mod:`netproof.symbolic`: the network language (an exact IR of frozen dataclasses) and its
  interpreters (exact, sympy, interval, batched integers, torch);
- :mod:`netproof.constructions`: the papers' constructions, one module per paper, each building
  IR and declaring claims;
- :mod:`netproof.verifier`: claims and how they are decided (exhaustive, SMT, fuzzing, floats),
  proof campaigns (:func:`netproof.verifier.campaign.prove`) and the command line
  (``netproof`` or ``python -m netproof``).

In the repository these are the top-level folders ``symbolic/``, ``constructions/`` and
``verifier/``; this file (the repository root's ``__init__.py``) is the package ``netproof``
itself, mapped by ``package-dir`` in ``pyproject.toml``. Importing :mod:`netproof` imports
none of its subpackages.
"""

__version__ = "0.2.0"
