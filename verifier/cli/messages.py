"""What the command line says to a person: one-line errors without Python class names, install
hints that fit how netproof was installed, errors in the user's own code named as theirs, and the
version.

- :func:`one_line`: an error message as one line of sensible length;
- :func:`user_message`: a usage error as printed (no leading ``WordError:``; every install hint
  of a message, ``pip install -e '.[EXTRA]'``, replaced by :func:`install_command`);
- :func:`install_command`: the command that installs an extra where this netproof came from
  (netproof is on no package index): ``pip install -e '.[torch]'`` in a checkout, ``pip install
  'PATH/netproof-0.2.0-py3-none-any.whl[torch]'`` for the wheel it was installed from;
- :func:`user_code_error`: the message for an exception raised in a user's own module (a builder
  raising ``TypeError``), naming their file, line and function;
- :func:`version`: the installed version, else the checkout's ``pyproject.toml``'s.

May import the standard library only.
"""

from __future__ import annotations

import json
import os
import re
import sys
import sysconfig
import traceback
from pathlib import Path

__all__ = ["install_command", "one_line", "user_code_error", "user_message", "version"]

_ROOT = Path(__file__).resolve().parents[2]
"""The package's own folder (the repository root in a checkout): files under it are netproof's."""

_LONG = re.compile(r"\S{121,}")


def one_line(message: str) -> str:
    """An error message as one line of sensible length: whitespace runs become one space, and a
    value the user gave that is over 120 characters long is cut to its first 60 with its length named.

    >>> one_line("k='" + "9" * 5000 + "' is not an integer")
    "k='999999999999999999999999999999999999999999999999999999999… (5004 characters) is not an integer"
    """
    return _LONG.sub(
        lambda m: f"{m.group()[:60]}… ({len(m.group())} characters)", " ".join(message.split())
    )


def version() -> str:
    """netproof's version: the installed package's metadata, else (a checkout run without
    installing) the ``version`` in the checkout's ``pyproject.toml``, else ``unknown``."""
    from importlib import metadata

    try:
        return metadata.version("netproof")
    except metadata.PackageNotFoundError:
        pass
    try:
        import tomllib

        with open(_ROOT / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def install_command(extra: str) -> str:
    """The command that installs the optional ``extra`` from where this netproof came from
    (netproof is on no package index, so never ``pip install 'netproof[extra]'``):

    - a checkout (run without installing, or installed editable): ``pip install -e
      '.[extra]'`` in its folder, the folder's path elsewhere;
    - installed from a folder or a wheel file (pip's ``direct_url.json`` names it): ``pip install
      'FOLDER[extra]'`` or ``pip install 'PATH/netproof-VERSION-py3-none-any.whl[extra]'``
      (``pipx install --force ...`` under pipx);
    - else (where it came from is not recorded): the wheel by its name,
      ``pip install 'netproof-VERSION-py3-none-any.whl[extra]'``.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("netproof")
    except metadata.PackageNotFoundError:
        return _editable(str(_ROOT), extra)
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    url = str(direct.get("url", ""))
    installer = (
        "pipx install --force"
        if f"{os.sep}pipx{os.sep}venvs{os.sep}" in sys.prefix + os.sep
        else "pip install"
    )
    if url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        source = unquote(urlparse(url).path)
        if direct.get("dir_info", {}).get("editable"):
            return _editable(source, extra)
        return f"{installer} '{_here_or(source)}[{extra}]'"
    if not url and (_ROOT / "pyproject.toml").is_file():
        return _editable(str(_ROOT), extra)  # run from a checkout beside stale metadata
    return f"{installer} 'netproof-{version()}-py3-none-any.whl[{extra}]'"


def _here_or(folder: str) -> str:
    try:
        return "." if os.path.samefile(folder, os.getcwd()) else folder
    except OSError:
        return folder


def _editable(folder: str, extra: str) -> str:
    return f"pip install -e '{_here_or(folder)}[{extra}]'"


_HINT = re.compile(r"pip install (?:-e )?'(?:\.|netproof)\[(\w+)\]'")
"""An install hint as netproof's messages write it (``pip install -e '.[torch]'``)."""
_CLASS_PREFIX = re.compile(r"^(?:[A-Z][A-Za-z]*(?:Error|Exception|Warning)): ")


def user_message(message: str) -> str:
    """A usage error as the user reads it: one line, no leading Python class name, and every
    install hint fitted to this installation (:func:`install_command`).

    >>> user_message("WordError: symbol '2' at position 3 is not in the alphabet")
    "symbol '2' at position 3 is not in the alphabet"
    """
    text = one_line(message)
    while (m := _CLASS_PREFIX.match(text)) is not None:
        text = text[m.end() :]
    return _HINT.sub(lambda m: install_command(m.group(1)), text)


def user_code_error(exc: BaseException) -> str | None:
    """The one-line message for an exception raised in the user's own code (a frame of its
    traceback is in a file that is neither netproof's nor Python's nor an installed package's,
    e.g. a user module's builder raising ``TypeError``), naming the file, line and function;
    None when no frame is the user's (a crash in netproof itself)."""
    frames = [
        (f.filename, f.lineno, f.name, f.line or "")
        for f in traceback.extract_tb(exc.__traceback__)
    ]
    remote = getattr(exc.__cause__, "tb", None)  # raised in a worker process: its traceback as text
    if isinstance(remote, str):
        last = remote.rsplit("Traceback (most recent call last):", 1)[-1]
        frames += [
            (m["file"], int(m["line"]), m["name"], m["code"] or "")
            for m in _REMOTE_FRAME.finditer(last)
        ]
    users = [f for f in frames if _is_users_file(f[0])]
    if not users:
        return None
    filename, lineno, name, code = users[-1]
    text = str(exc).strip().splitlines()
    what = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    shown = f" in `{code.strip()}`" if code.strip() else ""
    return f"{filename}:{lineno}: your code ({name}) raised {what}{shown}; fix it and run again"


_REMOTE_FRAME = re.compile(
    r'^ *File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)\n(?: {4,}(?P<code>[^\n]*)\n)?',
    re.M,
)


def _is_users_file(filename: str) -> bool:
    if not os.path.isfile(filename):
        return False
    path = os.path.abspath(filename)
    if path.startswith(str(_ROOT) + os.sep):
        return False
    paths = sysconfig.get_paths()
    installed = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return not any(path.startswith(os.path.abspath(p) + os.sep) for p in installed)
