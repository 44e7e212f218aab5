"""The proof report (``netproof report``): a static HTML site built from the proof records.

The site is built once from the committed records (a copy of ``proofs/``) and moved to another
folder before its links are checked, so the links hold wherever the folder goes. The browser
test opens the index page in headless Chromium through the DevTools protocol (a pipe, no
network), collects every console message, uncaught exception and failed load, and decodes the
screenshot; it is skipped where Chromium is not installed (``apt-get install -y chromium``).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier import cli
from netproof.verifier.campaign.errors import CampaignError
from netproof.verifier.campaign.report import MARKER, build_site, page_name

REPO = Path(__file__).resolve().parents[2]
SHOWN = ("parity", "dyck", "first-flawed", "tm-sim", "gates")
"""The constructions of the site the tests build (every record folder still gets a page)."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of :data:`SHOWN` from a copy of the committed records, moved after building."""
    base = tmp_path_factory.mktemp("report")
    shutil.copytree(REPO / "proofs", base / "proofs")
    build_site(
        {n: REGISTRY[n] for n in SHOWN}, str(base / "proofs"), str(base / "built"), cache=None
    )
    shutil.move(str(base / "built"), str(base / "moved"))
    return base / "moved"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("href", "src") and value is not None:
                self.links.append(value)
            if key == "id" and value is not None:
                self.ids.add(value)


def _parse(page: Path) -> _Links:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    return p


def broken_links(root: Path) -> list[str]:
    """Every href/src of every page under ``root`` that does not resolve to a file (or an anchor)
    inside ``root``: each as ``page: link (why)``."""
    bad = []
    pages = {p: _parse(p) for p in root.rglob("*.html")}
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme == "data":
                continue
            if parts.scheme or parts.netloc or link.startswith("/"):
                bad.append(f"{page.name}: {link} (not relative)")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            if root.resolve() not in target.parents or not target.is_file():
                bad.append(f"{page.name}: {link} (no such file in the site)")
            elif (
                parts.fragment
                and target.suffix == ".html"
                and parts.fragment not in pages[target].ids
            ):
                bad.append(f"{page.name}: {link} (no such anchor)")
    return bad


# --------------------------------------------------------------------------- the site


def test_every_relative_link_of_the_moved_site_resolves_to_a_file_inside_it(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "style.css").is_file()
    links = sum(len(_parse(p).links) for p in site.rglob("*.html"))
    assert links > 100  # the record and query links are there to check
    assert broken_links(site) == []


@pytest.mark.slow
def test_the_report_of_every_built_in_construction_has_a_page_each_and_no_broken_link(
    tmp_path: Path,
) -> None:
    pages = build_site(REGISTRY, str(REPO / "proofs"), str(tmp_path / "site"), cache=None)
    assert pages[0] == "index.html" and {page_name(n) for n in REGISTRY} <= set(pages)
    assert broken_links(tmp_path / "site") == []


def test_the_link_check_finds_a_missing_file_and_an_absolute_link(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(
        '<a href="b.html">b</a><a href="/etc/passwd">x</a><a href="a.html#nowhere">y</a>'
    )
    assert broken_links(tmp_path) == [
        "a.html: b.html (no such file in the site)",
        "a.html: /etc/passwd (not relative)",
        "a.html: a.html#nowhere (no such anchor)",
    ]


def test_every_construction_of_the_records_has_a_page_linked_from_the_index(site: Path) -> None:
    folders = [
        f.name
        for f in (REPO / "proofs").iterdir()
        if f.is_dir() and f.name != "queries" and any(f.glob("*.json"))
    ]
    index = _parse(site / "index.html").links
    assert len(folders) > 20
    for name in folders:
        assert (site / page_name(name)).is_file(), name
        assert page_name(name) in index, name


def test_every_record_and_query_file_of_a_shown_construction_is_copied_into_the_site(
    site: Path,
) -> None:
    for name in SHOWN:
        for f in (REPO / "proofs" / name).glob("*.json"):
            assert (site / "proofs" / name / f.name).read_bytes() == f.read_bytes()
    copied = sorted(
        p.relative_to(site) for p in (site / "proofs" / "queries" / "dyck").rglob("*.smt2")
    )
    assert copied == sorted(
        p.relative_to(REPO) for p in (REPO / "proofs" / "queries" / "dyck").rglob("*.smt2")
    )


def _row(page: str, claim: str) -> str:
    m = re.search(rf'<tr id="{re.escape(claim)}">.*?</tr>', page, re.DOTALL)
    assert m is not None, claim
    return m.group(0)


def test_a_proof_for_every_length_shows_as_every_length_with_its_exhaustive_bound(
    site: Path,
) -> None:
    row = _row((site / "parity.html").read_text(encoding="utf-8"), "C4")
    assert '<td class="every">every length</td>' in row
    assert "every length (exhaustive: 0 ≤ |w| ≤ 10, not rechecked)" in row  # 2047 words
    assert (
        'href="proofs/parity/C4.n48.json"' in row
        and "netproof recheck proofs/parity/C4.n48.json" in row
    )
    assert 'href="proofs/queries/parity/C4.n48/' in row  # its .smt2 queries
    assert row.endswith("<td>checked</td></tr>")  # the kernel's cell: it checked the record


def test_every_claim_shows_the_verdict_the_claims_ledger_shows_for_it(site: Path) -> None:
    from netproof.verifier.campaign.ledger import build

    ledger = build({n: REGISTRY[n] for n in SHOWN}, str(REPO / "proofs"), cache=None)
    compared = 0
    for name in SHOWN:
        page = (site / page_name(name)).read_text(encoding="utf-8")
        section = ledger.split(f"## `{name}`:", 1)[1].split("\n## ", 1)[0]
        for line in section.splitlines():
            if not line.startswith("| ") or line.startswith(("| claim |", "|---")):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            claim, verdict, bound = cells[0], cells[3], cells[4]
            shown = re.search(r'<td class="(\w+)">', _row(page, claim)).group(1)  # type: ignore[union-attr]
            expected = {
                "proved": "every" if bound.startswith("every n") else "proved",
                "refuted": "refuted",
                "unknown": "unknown",
                "no record": "missing",
                "**fails its check**": "failed",
                "**not rechecked**": "unknown",
            }[re.split(r"[:(]", verdict)[0].strip()]
            assert shown == expected, (name, claim, verdict, bound)
            compared += 1
    assert compared > 25
    errata = 0
    for line in ledger.split("## Errata", 1)[1].splitlines():
        m = re.match(r"\| `([^`]+)` \| (\S+) \| .*? \| (refuted|proved|unknown|no record)", line)
        if m is None:
            continue
        name, claim, verdict = m.groups()
        page = (site / page_name(name)).read_text(encoding="utf-8")
        row = page.split(f'<tr id="erratum-{claim}">', 1)[1].split("\n", 1)[0]
        assert f'<td class="{ {"no record": "missing"}.get(verdict, verdict) }">' in row, (
            name,
            claim,
            verdict,
        )
        errata += 1
    assert errata >= 3


def test_a_refuted_printed_claim_shows_its_counterexample_and_its_trace_next_to_the_proved_fix(
    site: Path,
) -> None:
    page = (site / "dyck.html").read_text(encoding="utf-8")
    errata = page.split("<h2>Errata", 1)[1]
    row = errata.split('<tr id="erratum-Y2-paper">', 1)[1].split("\n", 1)[0]
    assert '<td class="refuted">refuted: <code>()</code></td>' in row
    assert '<a href="#Y2"><code>Y2</code></a>: <span class="every">every length</span>' in row
    trace = errata.split('<h3 id="cx-Y2-paper">', 1)[1]
    assert "netproof run dyck &#x27;()&#x27; -p variant=paper --trace" in trace
    assert (
        "query \\ key" in trace and "rejected" in trace
    )  # an attention matrix, and the paper network rejects ()


def test_a_printed_claim_refuted_on_the_empty_word_shows_it_as_epsilon(site: Path) -> None:
    page = (site / "tm-sim.html").read_text(encoding="utf-8")
    assert "refuted: <code>ε</code>" in page.split("<h2>Errata", 1)[1]


def test_a_tampered_record_shows_as_failing_its_check_never_with_its_verdict(
    tmp_path: Path,
) -> None:
    proofs = tmp_path / "proofs"
    (proofs / "parity").mkdir(parents=True)
    shutil.copy(REPO / "proofs" / "parity" / "C5.n8.json", proofs / "parity")  # C5's one record
    path = proofs / "parity" / "C5.n8.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["network"]["fingerprint"] = "0" * 64
    path.write_text(json.dumps(rec), encoding="utf-8")
    build_site({"parity": REGISTRY["parity"]}, str(proofs), str(tmp_path / "site"), cache=None)
    row = _row((tmp_path / "site" / "parity.html").read_text(encoding="utf-8"), "C5")
    assert '<td class="failed">fails its check: ' in row and "proved" not in row


def test_every_text_from_a_record_is_escaped(tmp_path: Path) -> None:
    proofs = tmp_path / "proofs"
    (proofs / "mine").mkdir(parents=True)
    (proofs / "mine" / "x.n1.json").write_text(
        json.dumps({"claim": {"id": "<script>alert(1)</script>"}, "params": {"k": '"><b>'}}),
        encoding="utf-8",
    )
    build_site({}, str(proofs), str(tmp_path / "site"), cache=None)
    page = (tmp_path / "site" / page_name("mine")).read_text(encoding="utf-8")
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "k=&quot;&gt;&lt;b&gt;" in page


def test_a_construction_name_becomes_a_safe_file_name() -> None:
    assert page_name("dyck") == "dyck.html"
    assert page_name("../a b/c") == ".._a_b_c.html"


def test_a_report_folder_is_replaced_but_another_non_empty_folder_is_refused(
    tmp_path: Path,
) -> None:
    proofs = tmp_path / "proofs"
    shutil.copytree(REPO / "proofs" / "first-flawed", proofs / "first-flawed")
    out = tmp_path / "site"
    build_site({"first-flawed": REGISTRY["first-flawed"]}, str(proofs), str(out), cache=None)
    (out / "stale.html").write_text("old")
    build_site({"first-flawed": REGISTRY["first-flawed"]}, str(proofs), str(out), cache=None)
    assert (out / MARKER).is_file() and not (out / "stale.html").exists()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(CampaignError, match="holds files and no report netproof wrote"):
        build_site({}, str(proofs), str(other), cache=None)
    assert (other / "notes.txt").read_text() == "keep"
    with pytest.raises(CampaignError, match="overlap"):
        build_site({}, str(proofs), str(proofs / "site"), cache=None)


def test_netproof_report_writes_the_site_and_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proofs = tmp_path / "proofs"
    shutil.copytree(REPO / "proofs" / "first-flawed", proofs / "first-flawed")
    out = tmp_path / "site"
    assert (
        cli.main(
            ["report", "first-flawed", "--proofs", str(proofs), "--out", str(out), "--no-cache"]
        )
        == 0
    )
    assert (
        capsys.readouterr().out
        == f"wrote 2 pages to {out}/; open {out / 'index.html'} in a browser\n"
    )
    assert (out / "first-flawed.html").is_file()
    assert broken_links(out) == []


def test_netproof_report_refuses_a_folder_it_did_not_write_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    assert (
        cli.main(
            ["report", "first-flawed", "--proofs", str(REPO / "proofs"), "--out", str(tmp_path)]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds files and no report netproof wrote" in err[0]
    assert cli.main(["report", "--proofs", str(tmp_path / "none")]) == 2
    assert "run `netproof prove` first" in capsys.readouterr().err


# --------------------------------------------------------------------------- in a real browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def open_in_browser(page: Path, width: int = 1200, height: int = 900) -> tuple[bytes, list[str]]:
    """Open ``page`` in headless Chromium through the DevTools protocol on a pipe; return the PNG
    screenshot and every problem the page had: console errors and warnings, uncaught
    exceptions, log entries of level error (a file that failed to load)."""
    browser = _chromium()
    assert browser is not None
    profile = tempfile.mkdtemp(
        prefix="np-chromium-"
    )  # short: Chromium's profile holds a Unix socket (108 bytes a path)
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    for fd in (to_r, from_w):  # above 4, so that bash's redirections to 3 and 4 cannot clobber them
        high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        to_r, from_w = (high, from_w) if fd == to_r else (to_r, high)
    args = [
        browser,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--remote-debugging-pipe",
        f"--user-data-dir={profile}",
        "about:blank",
    ]
    proc = subprocess.Popen(
        ["bash", "-c", f'exec "$0" "$@" 3<&{to_r} 4>&{from_w}', *args],
        pass_fds=(to_r, from_w),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(to_r)
    os.close(from_w)
    buf = b""
    events: list[dict] = []
    ids = iter(range(1, 1_000_000))
    deadline = time.monotonic() + 60

    def receive() -> dict:
        nonlocal buf
        while b"\0" not in buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([from_r], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("chromium did not answer within 60 s")
            chunk = os.read(from_r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed its DevTools pipe")
            buf += chunk
        msg, buf = buf.split(b"\0", 1)
        return json.loads(msg)

    def call(method: str, session: str | None = None, **params: object) -> dict:
        n = next(ids)
        msg: dict = {"id": n, "method": method, "params": params}
        if session is not None:
            msg["sessionId"] = session
        os.write(to_w, json.dumps(msg).encode() + b"\0")
        while True:
            got = receive()
            if got.get("id") == n:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got["result"]
            events.append(got)

    def wait_for(method: str) -> None:
        while not any(e.get("method") == method for e in events):
            events.append(receive())

    try:
        target = call("Target.createTarget", url="about:blank")["targetId"]
        session = call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            call(f"{domain}.enable", session)
        call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        events.clear()
        call("Page.navigate", session, url=page.resolve().as_uri())
        wait_for("Page.loadEventFired")
        png = base64.b64decode(call("Page.captureScreenshot", session, format="png")["data"])
        call("Browser.close")
    finally:
        os.close(to_w)
        os.close(from_r)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    problems = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in (
            "error",
            "warning",
            "assert",
        ):
            problems.append(
                f"console.{p['type']}: "
                + " ".join(str(a.get("value", a.get("description"))) for a in p["args"])
            )
        elif e.get("method") == "Runtime.exceptionThrown":
            problems.append(
                "exception: "
                + str(
                    p["exceptionDetails"]
                    .get("exception", {})
                    .get("description", p["exceptionDetails"])
                )
            )
        elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            problems.append(f"log: {p['entry']['text']} {p['entry'].get('url', '')}".strip())
    return png, problems


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """A non-interlaced 8-bit RGB or RGBA PNG decoded: width, height and each pixel's bytes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(height):
        f, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.extend(bytes(line[i : i + 3]) for i in range(0, stride, bpp))
        prev = line
    return width, height, pixels


needs_chromium = pytest.mark.skipif(
    _chromium() is None,
    reason="Chromium is not installed (Debian: apt-get install -y chromium; CI installs it)",
)


EVERY_LENGTH, REFUTED = b"\x8c\xe9\x9a", b"\xff\xc9\xc9"  # the stylesheet's cell colours


# the index (both colours in its first screen), and a page with a counterexample's trace (its
# first screen is the claims table, whose every-length rows are green; the errata come below)
@needs_chromium
@pytest.mark.parametrize(
    ("page", "colours_seen"),
    [("index.html", {EVERY_LENGTH, REFUTED}), ("dyck.html", {EVERY_LENGTH})],
)
def test_the_page_renders_in_headless_chromium_without_a_console_error(
    site: Path, page: str, colours_seen: set[bytes]
) -> None:
    png, problems = open_in_browser(site / page)
    assert problems == []
    width, height, pixels = png_pixels(png)
    assert (width, height) == (1200, 900)
    colours = set(pixels)
    white = sum(1 for p in pixels if p == b"\xff\xff\xff")
    assert len(colours) > 50, len(colours)  # text, links, the verdict colours of the table
    assert white < 0.97 * len(pixels), "the page is (almost) blank"
    assert colours_seen <= colours  # the stylesheet loaded


@needs_chromium
def test_the_browser_check_reports_a_missing_stylesheet_a_console_error_and_an_exception(
    tmp_path: Path,
) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="missing.css"></head>'
        '<body><p>x</p><script>console.error("boom"); undefined_function();</script></body></html>'
    )
    _, problems = open_in_browser(page)
    assert any("console.error: boom" in p for p in problems), problems
    assert any("undefined_function" in p for p in problems), problems
    assert any("missing.css" in p or "ERR_FILE_NOT_FOUND" in p for p in problems), problems
