"""What a user reads names only what they have: no path outside the repository, no dead link.

netproof's docs, committed records, module docstrings and messages were once written beside a
folder of specifications that is not part of the repository (``../shared/specs/rasp.md`` and the
like). A user has the repository (or the wheel) only, so:

- no file of the product (every committed or new file outside ``tests/`` that is text: docs,
  README, records and their queries, sources and their docstrings) and no output of
  ``netproof list`` / ``netproof list --json`` names a path outside the repository: the shared
  folder (``../shared``, ``shared/specs``, ``shared/seeds``, ...) or an absolute path of a
  development machine (``/work/...``, ``/home/...``, ``/Users/...``, ``/tmp/...``);
- every relative Markdown link of the docs, the README, the changelog and the other pages points
  at a file that exists, and a link to a heading (``page.md#anchor``, ``#anchor``) at a heading
  that exists.

``tests/`` is left out of the first check: its fixtures spell such paths on purpose (an
installation's ``direct_url.json``, this file's own patterns).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from netproof.verifier.cli import main

REPO = Path(__file__).resolve().parents[1]

OUTSIDE = re.compile(
    r"(?:\.\./)+shared\b"  # ../shared, ../../shared
    r"|(?<![\w.-])shared/(?:specs|seeds|[\w.-]+\.md)"  # shared/specs/rasp.md, shared/STYLE.md
    r"|(?<![\w.~-])/(?:work|home|Users|tmp)/[\w.-]"  # absolute paths of a development machine
)
"""A path outside the repository, as the product must never name one."""

TEXT = {".md", ".py", ".json", ".txt", ".html", ".ipynb", ".toml", ".csv", ".smt2", ".typed"}
"""The suffixes of the product's text files (pictures and trained weights are left out)."""

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _files() -> list[Path]:
    """Every file of the checkout that git tracks or would track (new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    return sorted(REPO / name for name in listed.split("\0") if name and (REPO / name).is_file())


def _product_text_files() -> list[Path]:
    return [
        p
        for p in _files()
        if p.relative_to(REPO).parts[0] != "tests"
        and (p.suffix in TEXT or p.name in {"LICENSE", "run"})
    ]


def outside_paths(text: str) -> list[str]:
    """The paths outside the repository that ``text`` names."""
    return [m.group(0) for m in OUTSIDE.finditer(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("the semantics of ``shared/specs/rasp.md``", ["shared/specs"]),
        ("see ../shared/specs/ for the papers", ["../shared"]),
        ("seeds in shared/seeds/dyck.txt", ["shared/seeds"]),
        ('{"file": "/work/main/proofs/x.json"}', ["/work/m"]),
        ("written to /tmp/run1/out.json", ["/tmp/r"]),
        ("/home/me/netproof and /Users/me/netproof", ["/home/m", "/Users/m"]),
        ("docs/rasp-semantics.md#b-rasp, proofs/queries/dyck/Y2.smt2", []),
        ("a shared key group; shared/exclusive; ~/tmp/x; a/work/b", []),
    ],
)
def test_the_pattern_finds_paths_outside_the_repository_and_nothing_else(
    text: str, found: list[str]
) -> None:
    assert outside_paths(text) == found


def test_no_file_of_the_product_names_a_path_outside_the_repository() -> None:
    files = _product_text_files()
    assert len(files) > 500  # docs, sources, records and their queries
    named = {
        f"{p.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for p in files
        for text in [p.read_text(encoding="utf-8", errors="replace")]
        for m in OUTSIDE.finditer(text)
    }
    assert not named, "paths outside the repository:\n" + "\n".join(sorted(named)[:40])


def test_netproof_list_names_no_path_outside_the_repository(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list"]) == 0
    shown = capsys.readouterr()
    assert main(["list", "--json"]) == 0
    as_json = capsys.readouterr()
    assert json.loads(as_json.out)  # the JSON is whole
    for out in (shown.out, shown.err, as_json.out, as_json.err):
        assert outside_paths(out) == []
    assert "docs/rasp-semantics.md#b-rasp" in shown.out  # the RASP programs cite the docs page


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as -."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans, which hold no links."""
    text = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.S)


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (a repeated heading's get -1, -2, ...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    text = re.sub(r"^```.*?^```[ \t]*$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    for line in text.splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return found


def dead_links(page: Path, root: Path = REPO) -> list[str]:
    """The relative links of a Markdown page whose file (inside ``root``), or heading, does not
    exist."""
    dead: list[str] = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists() or root not in (where, *where.parents):
            dead.append(f"{target} (no such file in the repository)")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            dead.append(f"{target} (no heading with that anchor)")
    return dead


def test_the_anchor_of_a_heading_is_githubs() -> None:
    assert _slug("Errata (with the first failing step, and the fix used)") == (
        "errata-with-the-first-failing-step-and-the-fix-used"
    )
    assert _slug("Exit status of `prove`") == "exit-status-of-prove"
    assert _slug("B-RASP") == "b-rasp"


def test_every_relative_link_of_the_docs_points_at_a_file_and_heading_that_exist() -> None:
    pages = [p for p in _files() if p.suffix == ".md" and p.relative_to(REPO).parts[0] != "tests"]
    assert {REPO / "README.md", REPO / "CHANGELOG.md", REPO / "docs" / "index.md"} <= set(pages)
    dead = [f"{p.relative_to(REPO)}: {link}" for p in pages for link in dead_links(p)]
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_a_dead_link_a_missing_anchor_and_a_link_out_of_the_repository_are_found(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cli.md").write_text("# The command line\n\n## prove\n", encoding="utf-8")
    (tmp_path.parent / "outside.md").touch()
    page = tmp_path / "docs" / "index.md"
    page.write_text(
        "[ok](cli.md#prove) [top](#start) [web](https://example.org/x.md) [gone](nowhere.md)\n"
        "[bad](cli.md#no-such-heading) [out](../../outside.md) `[code](not-a-link.md)`\n\n"
        "## Start\n\n```sh\n[fenced](not-a-link-either.md)\n```\n",
        encoding="utf-8",
    )
    assert dead_links(page, tmp_path) == [
        "nowhere.md (no such file in the repository)",
        "cli.md#no-such-heading (no heading with that anchor)",
        "../../outside.md (no such file in the repository)",
    ]
