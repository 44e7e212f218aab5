"""docs/tutorial.md works word for word, replayed in a fresh directory.

The tutorial's fenced blocks are its script, in order:

- ```` ```sh ````: one ``netproof ...`` command per line, run with :func:`netproof.verifier.cli.main` in
  the directory (``> FILE`` redirects stdout into a file). A trailing comment ``# exit status N``
  states the exit status; without one it must be 0.
- ```` ```text ````: what the last command printed: its stdout (its stderr when it exited with 2),
  line by line. Runs of spaces match any run of spaces, timings such as ``0.5s`` any timing, and
  ``...`` inside a line anything.
- ```` ```diff ````: an edit the reader makes: ``--- FILE`` / ``+++ FILE``, then lines starting
  with ``-`` (removed), ``+`` (added) or a space (kept); the old text must occur exactly once.
- ```` ```python ````: an excerpt of a module in the directory (it must occur there verbatim), or
  else a program the reader runs (executed in the directory).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from netproof.verifier import cli

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
EXIT = re.compile(r"#.*\bexit status (\d+)")
TIMING = re.compile(r"\d+\.\ds\b")


@dataclass(frozen=True)
class Done:
    command: str
    code: int
    out: str
    err: str


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` as (language, body), in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def _line_pattern(line: str) -> str:
    parts = re.split(r"(\.\.\.|\d+\.\ds\b|[ \t]+)", line.rstrip())
    out = []
    for part in parts:
        if part == "...":
            out.append(".*")
        elif TIMING.fullmatch(part):
            out.append(r"\d+\.\ds")
        elif part and part.isspace():
            out.append(r"[ \t]+")
        else:
            out.append(re.escape(part))
    return "".join(out)


def matches(expected: str, actual: str) -> bool:
    """Does ``actual`` read as ``expected`` (spaces, timings and ``...`` as the docstring says)?"""
    pattern = "\n".join(_line_pattern(line) for line in expected.rstrip("\n").split("\n"))
    got = "\n".join(line.rstrip() for line in actual.rstrip("\n").split("\n"))
    return re.fullmatch(pattern, got) is not None


def run_command(line: str, where: Path, capsys: pytest.CaptureFixture[str]) -> Done:
    command, expected = line, 0
    found = EXIT.search(line)
    if found is not None:
        expected = int(found.group(1))
    command = re.sub(r"\s+#.*$", "", line).strip()
    target = None
    if " > " in command:
        command, target = (part.strip() for part in command.split(" > "))
    argv = shlex.split(command)
    assert argv[0] == "netproof", f"the tutorial runs only netproof commands: {line!r}"
    capsys.readouterr()
    code = cli.main(argv[1:])
    cap = capsys.readouterr()
    assert code == expected, (
        f"`{command}` exited with {code}, the tutorial says {expected}\n{cap.err}"
    )
    if target is not None:
        (where / target).write_text(cap.out, encoding="utf-8")
    return Done(command, code, cap.out, cap.err)


def apply_diff(body: str, where: Path) -> None:
    lines = body.rstrip("\n").split("\n")
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ "), (
        f"a diff starts with --- FILE, +++ FILE:\n{body}"
    )
    path = where / lines[0][4:].strip()
    assert lines[1][4:].strip() == lines[0][4:].strip()
    hunk = lines[2:]
    assert all(line[:1] in ("-", "+", " ") for line in hunk), (
        f"diff lines start with -, + or a space:\n{body}"
    )
    old = "".join(line[1:] + "\n" for line in hunk if line[:1] in ("-", " "))
    new = "".join(line[1:] + "\n" for line in hunk if line[:1] in ("+", " "))
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (
        f"the text the tutorial edits occurs {text.count(old)} times in {path.name}:\n{old}"
    )
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_every_block_of_the_tutorial_works_word_for_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    script = blocks(TUTORIAL.read_text(encoding="utf-8"))
    kinds = [kind for kind, _ in script]
    assert {"sh", "text", "diff", "python"} <= set(kinds), kinds
    last: Done | None = None
    commands = 0
    for kind, body in script:
        if kind == "sh":
            for line in body.splitlines():
                if line.strip():
                    last = run_command(line, tmp_path, capsys)
                    commands += 1
        elif kind == "text":
            assert last is not None, "an output block before any command"
            shown = last.err if last.code == 2 else last.out
            assert matches(body, shown), (
                f"`{last.command}` printed\n{shown}\nthe tutorial shows\n{body}"
            )
        elif kind == "diff":
            apply_diff(body, tmp_path)
        elif kind == "python":
            modules = [p.read_text(encoding="utf-8") for p in sorted(tmp_path.glob("*.py"))]
            if not any(body in text for text in modules):
                namespace: dict[str, object] = {"__name__": "__tutorial__"}
                exec(compile(body, str(TUTORIAL), "exec"), namespace)
        else:
            pytest.fail(
                f"a ```{kind} block: the tutorial uses sh, text, diff and python blocks only"
            )
    assert commands >= 10
    assert (tmp_path / "proofs" / "my-majority" / "recognizes.n10.json").is_file()


def test_the_output_matcher_ignores_timings_and_spacing_and_nothing_else() -> None:
    assert matches("a  1.0s\nb ... c", "a 12.5s\nb anything c")
    assert not matches("a  1.0s", "a 1.0s\nextra line")
    assert not matches("proved", "refuted")
