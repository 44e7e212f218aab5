"""The proof report: a static HTML site built from the proof records, one page per construction
with its claims, verdicts and bounds, its errata with the counterexample's trace, links to every
record and ``.smt2`` query, and the commands that check them again. ``netproof report`` writes it.

The site is plain HTML and one stylesheet (``style.css``): no server, no JavaScript. It is built
from the records under ``proofs`` exactly as the claims ledger reads them
(:mod:`netproof.verifier.campaign.ledger`): of the records of a claim at its default parameters,
the strongest is shown (:func:`~netproof.verifier.campaign.ledger.find_record`: a refutation,
else a proof for every length, shown as "every length" with the largest exhaustive bound beside
it, else the largest bound), and every record shown is read through the checks ``netproof
recheck`` starts with (:class:`~netproof.verifier.campaign.ledger.RecordChecks`, with the
ledger's verification cache): a record that fails them is shown as **fails its check**, never
with the verdict it states, and one whose verdict no query establishes and that was not replayed
(a counterexample on the exact interpreter, an exhaustive check of at most
:data:`~netproof.verifier.campaign.ledger.REPLAY_WORDS` words) as **not rechecked**.

The records are copied into the site (``proofs/<construction>/`` and ``proofs/queries/<construction>/``,
the same tree as the repository's ``proofs/``), so every link is relative and the site works
when moved or archived as one folder, and ``netproof recheck proofs/...`` run in the site's
folder checks the very files the pages show. The errata are the claims of a construction's
``variant=paper``: each printed claim (an id ending ``-paper``, or a claim the paper variant's
record refutes) next to the fixed claim of the default construction, with the counterexample
word and its trace through the exact interpreter (attention matrices and residual states:
:func:`netproof.symbolic.display.trace_html`). Every text is escaped (:func:`html.escape`).

May import the IR (words, display), the vocabulary, and the campaign's store, ledger, sources
and exact evaluation.
"""

from __future__ import annotations

import html
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from netproof.symbolic import Network, SymbolicError, tokenize
from netproof.verifier.claims import Claim, Construction

from .errors import CampaignError
from .evaluate import evaluate
from .ledger import (
    DEFAULT_CACHE,
    PATH_KEY,
    REPLAY_WORDS,
    RecordChecks,
    VerificationCache,
    default_cache_dir,
    exhaustive_bound,
    find_record,
)
from .sources import build_network
from .store import every_length, read_record

__all__ = ["MARKER", "STYLE", "build_site", "page_name", "results_html"]

MARKER = ".netproof-report"
"""The file that marks a folder as a report :func:`build_site` wrote (and may replace)."""

STYLE = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#1d1d1f;background:#fff}
h1{font-size:1.6em;border-bottom:2px solid #3b5bdb;padding-bottom:.2em}
h2{font-size:1.25em;margin-top:1.6em;color:#243b8f}
table{border-collapse:collapse;margin:.5em 0 1em}
th,td{border:1px solid #ccd;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#eef1fb}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.92em}
pre{background:#f6f7f9;padding:.5em;overflow-x:auto}
.proved{background:#d3f9d8}
.every{background:#8ce99a;font-weight:bold}
.refuted{background:#ffc9c9;font-weight:bold}
.unknown{background:#fff3bf}
.missing{background:#f1f3f5;color:#555}
.failed{background:#ff8787;font-weight:bold}
.muted{color:#666;font-size:.9em}
nav{margin-bottom:1em}
details{margin:.3em 0}
"""
"""The site's one stylesheet."""

HEADER = (
    "Verdicts: <b>proved</b> (for every case in the bound, or for all inputs where the bound says all), "
    "<b>every length</b> (proved for every word of every length: an SMT proof by lemmas and an invariant or "
    "position classes, or a structural one, shown with the largest exhaustive bound beside it), <b>refuted</b> "
    "(with the shortest counterexample), <b>unknown</b> (with the reason). An exhaustive proof covers exactly "
    "its bound. Of several records of a claim, the strongest is shown. Every record shown passed the checks of "
    "<code>netproof recheck</code> (fields, network, claim, bound and queries rebuilt from the construction); "
    "one that does not is shown as <b>fails its check</b>."
)


def esc(text: object) -> str:
    """Any text as HTML (quotes included)."""
    return html.escape(str(text), quote=True)


def page_name(name: str) -> str:
    """The file of construction ``name``'s page: its name with every character outside
    ``[A-Za-z0-9._-]`` made ``_``, and ``.html``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".html"


def _href(path: str) -> str:
    return esc(quote(path, safe="/"))


def _link(path: str, text: str) -> str:
    return f'<a href="{_href(path)}">{esc(text)}</a>'


def _page(title: str, body: str, up: bool = True) -> str:
    nav = '<nav><a href="index.html">all constructions</a></nav>' if up else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(title)}</title>\n"
        '<link rel="icon" href="data:,">\n<link rel="stylesheet" href="style.css">\n</head>\n<body>\n'
        f"{nav}{body}\n</body>\n</html>\n"
    )


_INLINE = {
    "proved": "background:#d3f9d8",
    "every": "background:#8ce99a;font-weight:bold",
    "refuted": "background:#ffc9c9;font-weight:bold",
    "unknown": "background:#fff3bf",
}
"""The verdict colours of :data:`STYLE`, inline: a notebook has no stylesheet of ours."""


def _short(text: str, width: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def results_html(results: Any, summary: Mapping[str, Any] | None = None) -> str:
    """Proof or fuzz results as one compact HTML table for a notebook (the ``_repr_html_`` of
    :class:`~.proving.ProofRun`, :class:`~.proving.ClaimResult`, :class:`~.fuzzrun.FuzzRun` and
    :class:`~.fuzzrun.FuzzResult`): construction, claim, verdict (a refutation with its
    counterexample, an unknown with its reason), method, bound (``every length``, ``|w| ≤ n``, or
    ``—`` for a statement without words) and time; ``summary`` (``ProofRun.summary``) as a caption.
    A result whose record was reused from disk (``cached``: nothing ran) is shown as **not
    rechecked**, never with the verdict its file states. Every text is escaped; the colours are
    inline styles."""
    from netproof.verifier.claims import Proved, Refuted

    rows = []
    for r in results:
        v = r.verdict
        fuzz = hasattr(r, "float_issues")
        if getattr(r, "cached", False) and not fuzz:
            # a record reused from disk, not run here: its verdict is what a file says
            kind, text = "unknown", "not rechecked (a record reused as it was: netproof recheck it)"
        elif isinstance(v, Refuted):
            word = "(none)" if v.word is None else ("ε" if not v.word else repr(_word_text(v.word)))
            kind, text = "refuted", f"refuted on {word}: {_short(v.detail)}"
        elif isinstance(v, Proved):
            kind = "every" if getattr(r, "every_length", False) else "proved"
            text = "proved"
        else:
            kind, text = "unknown", ("" if fuzz else "unknown: ") + _short(v.reason)
        if fuzz:
            budget = r.record.get("budget", {}) if isinstance(r.record, Mapping) else {}
            bound = f"|w| ≤ {budget['max_len']} (fuzzed)" if "max_len" in budget else "—"
        elif getattr(r, "every_length", False) and not getattr(r, "cached", False):
            bound = "every length"
        else:
            bound = "—" if r.bound is None else f"|w| ≤ {r.bound}"
        time_text = "cached" if getattr(r, "cached", False) else f"{r.seconds:.2f} s"
        rows.append(
            f"<tr><td>{esc(r.construction.name)}</td><td>{esc(r.claim.id)}</td>"
            f'<td style="{_INLINE[kind]}">{esc(text)}</td><td>{esc(v.method)}</td><td>{esc(bound)}</td>'
            f'<td style="text-align:right">{esc(time_text)}</td></tr>'
        )
    caption = ""
    if summary is not None:
        counts = ", ".join(f"{summary.get(k, 0)} {k}" for k in ("proved", "refuted", "unknown"))
        seconds = summary.get("seconds")
        took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
        caption = f"<caption>{esc(counts + took)}; exit status {esc(summary.get('exit_code', ''))}</caption>"
    head = "".join(
        f"<th>{h}</th>" for h in ("construction", "claim", "verdict", "method", "bound", "time")
    )
    return (
        '<table style="border-collapse:collapse;font-size:12px">'
        f"{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _word_text(word: Any) -> str:
    """A counterexample word as text: its symbols run together, or space-separated tokens."""
    return "".join(word) if all(len(s) == 1 for s in word) else " ".join(word)


@dataclass(frozen=True)
class _Row:
    """One claim as a page shows it: ``verdict`` (a CSS class: proved, every, refuted, unknown,
    missing, failed) and the cells' HTML."""

    claim: Claim
    verdict: str
    verdict_html: str
    bound_html: str
    method_html: str
    links_html: str
    record: Mapping[str, Any] | None
    kernel_html: str = "—"


class _Builder:
    """The pages of one site: the records under ``proofs``, each shown record through ``checks``."""

    def __init__(self, proofs: str, sources: Mapping[str, str], checks: RecordChecks) -> None:
        self.proofs = proofs
        self.sources = sources
        self.checks = checks

    # ------------------------------------------------------------------ paths

    def site_path(self, record_file: str) -> str:
        """A record's path in the site (the same as under ``proofs``, below ``proofs/``)."""
        return "proofs/" + os.path.relpath(record_file, self.proofs).replace(os.sep, "/")

    def query_paths(self, rec: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(site path, name) of every ``.smt2`` query of a record, its lemma tree's included."""
        base = os.path.dirname(self.site_path(rec[PATH_KEY]))
        return [
            (
                os.path.normpath(os.path.join(base, e["file"])).replace(os.sep, "/"),
                str(e.get("name", e["file"])),
            )
            for e in _entries(rec)
        ]

    # ------------------------------------------------------------------ one claim

    def command(self, c: Construction, given: Mapping[str, str]) -> str:
        params = "".join(f" -p {k}={v}" for k, v in given.items())
        return f"netproof prove {self.sources.get(c.name, c.name)}{params}"

    def exhaustive_bound(
        self, c: Construction, values: Mapping[str, Any], claim: Claim
    ) -> tuple[Mapping[str, Any], bool] | None:
        return exhaustive_bound(self.proofs, c, values, claim, self.checks)

    def row(
        self,
        c: Construction,
        values: Mapping[str, Any],
        claim: Claim,
        given: Mapping[str, str],
        kernel: bool = True,
    ) -> _Row:
        """The claim's row; ``kernel``: ask the kernel for its cell (the claims table shows it,
        the errata table does not, and the kernel's check of one record can take a minute)."""
        rec = find_record(self.proofs, c, values, claim)
        if rec is None:
            return _Row(
                claim,
                "missing",
                "no record",
                "—",
                f"run <code>{esc(self.command(c, given))}</code>",
                "",
                None,
            )
        site = self.site_path(rec[PATH_KEY])
        recheck = f"<code>netproof recheck {esc(shlex.quote(site))}</code>"
        failure = self.checks.failure(rec)
        if failure is not None:
            return _Row(
                claim,
                "failed",
                f"fails its check: {esc(failure)}",
                "—",
                "—",
                _link(site, "record") + "<br>" + recheck,
                None,
            )
        if not self.checks.rechecked(rec):
            return _Row(
                claim,
                "unknown",
                f"not rechecked (the report re-runs at most {REPLAY_WORDS} words)",
                self.bound_html(rec, None),
                esc(rec.get("method", "")),
                _link(site, "record") + "<br>" + recheck,
                None,
                self.kernel_html(rec) if kernel else "—",
            )
        verdict = str(rec["verdict"])
        cls = (
            "every"
            if every_length(rec)
            else verdict
            if verdict in ("proved", "refuted")
            else "unknown"
        )
        text = esc("every length" if cls == "every" else verdict)
        if verdict == "refuted" and rec.get("counterexample") is not None:
            text += f": <code>{esc(rec['counterexample'] or 'ε')}</code>"
        elif verdict == "unknown" and rec.get("reason"):
            text += f": {esc(rec['reason'])}"
        links = [_link(site, os.path.basename(site))]
        queries = self.query_paths(rec)
        if queries:
            items = "".join(f"<li>{_link(p, name)}</li>" for p, name in queries)
            links.append(
                f"<details><summary>{len(queries)} .smt2 {'query' if len(queries) == 1 else 'queries'}</summary>"
                f"<ul>{items}</ul></details>"
            )
        links.append(recheck)
        bound = self.bound_html(
            rec, self.exhaustive_bound(c, values, claim) if cls == "every" else None
        )
        return _Row(
            claim,
            cls,
            text,
            bound,
            esc(rec.get("method", "")),
            "<br>".join(links),
            rec,
            self.kernel_html(rec) if kernel else "—",
        )

    def kernel_html(self, rec: Mapping[str, Any]) -> str:
        """The kernel's cell of a shown record."""
        return esc(self.checks.kernel(rec)).replace("**", "")

    @staticmethod
    def bound_html(
        rec: Mapping[str, Any], exhaustive: tuple[Mapping[str, Any], bool] | None
    ) -> str:
        bound = rec.get("bound")
        if every_length(rec):
            if exhaustive is None:
                return "every length"
            (b, again) = exhaustive
            return (
                f"every length (exhaustive: {b['min_len']} ≤ |w| ≤ {b['max_len']}"
                + ("" if again else ", not rechecked")
                + ")"
            )
        if bound is None:
            return "no words" if (rec.get("claim") or {}).get("kind") == "ExactFact" else "all"
        return esc(f"{bound['min_len']} ≤ |w| ≤ {bound['max_len']}")

    # ------------------------------------------------------------------ pages

    def claims_table(self, rows: list[_Row]) -> str:
        out = [
            (
                "<table><tr><th>claim</th><th>statement</th><th>paper</th><th>verdict</th><th>bound</th>"
                "<th>method</th><th>record, queries, re-check</th><th>kernel</th></tr>"
            )
        ]
        for r in rows:
            out.append(
                f'<tr id="{esc(r.claim.id)}"><td><code>{esc(r.claim.id)}</code></td><td>{esc(r.claim.statement)}</td>'
                f'<td>{esc(r.claim.reference)}</td><td class="{r.verdict}">{r.verdict_html}</td><td>{r.bound_html}</td>'
                f"<td>{r.method_html}</td><td>{r.links_html}</td><td>{r.kernel_html}</td></tr>"
            )
        out.append("</table>")
        return "\n".join(out)

    def errata(self, c: Construction, fixed: Mapping[str, _Row]) -> list[tuple[_Row, _Row | None]]:
        """The paper variant's printed claims (``-paper`` ids, and claims its records refute),
        each with the fixed claim's row."""
        if not any(p.name == "variant" for p in c.params):
            return []
        paper_values = c.parse_params({"variant": "paper"})
        found = []
        for claim in c.claims(paper_values):
            row = self.row(c, paper_values, claim, {"variant": "paper"}, kernel=False)
            if not claim.id.endswith("-paper") and row.verdict != "refuted":
                continue
            fix = (
                fixed.get(claim.id.removesuffix("-paper"))
                if claim.id.endswith("-paper")
                else fixed.get(claim.id)
            )
            found.append((row, fix))
        return found

    def trace(self, c: Construction, values: Mapping[str, Any], text: str) -> str:
        """The trace of the paper variant's network on the counterexample, through the exact
        interpreter, as HTML; or one line saying why there is none."""
        from netproof.symbolic.display import trace_html

        try:
            probe = build_network(c, values, 0) if c.per_length else build_network(c, values)
            word = tokenize(probe.alphabet, text)
            net = build_network(c, values, len(word)) if c.per_length else probe
            if not isinstance(net, Network):
                return f'<p class="muted">no attention trace here: the network is a {esc(type(net).__name__)}.</p>'
            backend, trace = evaluate(net, word)
        except (CampaignError, SymbolicError) as exc:
            return f'<p class="muted">no trace: {esc(exc)}</p>'
        return f'<p class="muted">exact interpreter: {esc(backend)}</p>' + trace_html(trace)

    def errata_html(self, c: Construction, errata: list[tuple[_Row, _Row | None]]) -> str:
        out = [
            "<h2>Errata: the paper's printed claims</h2>",
            (
                "<p>Each printed claim (<code>-p variant=paper</code>) with its verdict and the fixed claim of the "
                "default construction. The fix itself is described in the construction module's docstring.</p>"
            ),
            (
                "<table><tr><th>printed claim</th><th>statement</th><th>verdict</th><th>counterexample</th>"
                "<th>fixed claim</th><th>record</th></tr>"
            ),
        ]
        traces = []
        paper_values = c.parse_params({"variant": "paper"})
        for row, fix in errata:
            rec = row.record
            cx = "—"
            if rec is not None and row.verdict == "refuted":
                word = rec.get("counterexample")
                cx = esc(rec.get("detail", ""))
                if word is not None:
                    anchor = f"cx-{row.claim.id}"
                    cx = f'<a href="#{esc(anchor)}"><code>{esc(word or "ε")}</code></a>: {cx}'
                    run = f"netproof run {self.sources.get(c.name, c.name)} {shlex.quote(word)} -p variant=paper --trace"
                    traces.append(
                        f'<h3 id="{esc(anchor)}">{esc(row.claim.id)} on <code>{esc(word or "ε")}</code></h3>'
                        f"<p>Again by hand: <code>{esc(run)}</code></p>"
                        + self.trace(c, paper_values, word)
                    )
                witnesses = rec.get("values")
                if isinstance(witnesses, dict) and witnesses:
                    cells = "".join(
                        f"<tr><th>{esc(k)}</th><td><code>{esc(v)}</code></td></tr>"
                        for k, v in witnesses.items()
                    )
                    cx += f"<details><summary>values</summary><table>{cells}</table></details>"
            fix_html = (
                "—"
                if fix is None
                else (
                    f'<a href="#{esc(fix.claim.id)}"><code>{esc(fix.claim.id)}</code></a>: '
                    f'<span class="{fix.verdict}">{fix.verdict_html}</span>, {fix.bound_html}'
                )
            )
            out.append(
                f'<tr id="erratum-{esc(row.claim.id)}"><td><code>{esc(row.claim.id)}</code></td><td>{esc(row.claim.statement)}</td>'
                f'<td class="{row.verdict}">{row.verdict_html}</td><td>{cx}</td><td>{fix_html}</td><td>{row.links_html}</td></tr>'
            )
        out.append("</table>")
        if traces:
            out.append("<h2>Counterexample traces</h2>")
            out.extend(traces)
        return "\n".join(out)

    def files_html(self, name: str) -> str:
        folder = os.path.join(self.proofs, name)
        files = (
            sorted(f for f in os.listdir(folder) if f.endswith(".json"))
            if os.path.isdir(folder)
            else []
        )
        if not files:
            return ""
        out = [
            f"<h2>Every record file ({len(files)})</h2>",
            (
                "<p>Every record of this construction under <code>proofs/</code>, at any parameters (the tables above "
                "show the default parameters and the paper variant). The verdicts these files state are checked by "
                f"<code>netproof recheck proofs/{esc(name)}</code>.</p>"
            ),
            "<table><tr><th>file</th><th>claim</th><th>parameters</th></tr>",
        ]
        for f in files:
            rec = read_record(os.path.join(folder, f)) or {}
            given, about = rec.get("params"), rec.get("claim")
            params: dict[str, Any] = given if isinstance(given, dict) else {}
            claim = about.get("id", "") if isinstance(about, dict) else ""
            out.append(
                f"<tr><td>{_link(f'proofs/{name}/{f}', f)}</td><td><code>{esc(claim)}</code></td>"
                f"<td>{esc(' '.join(f'{k}={v}' for k, v in params.items()))}</td></tr>"
            )
        out.append("</table>")
        return "\n".join(out)

    def construction_page(self, c: Construction) -> tuple[str, dict[str, int]]:
        values = c.parse_params({})
        rows = [self.row(c, values, claim, {}) for claim in c.claims(values)]
        fixed = {r.claim.id: r for r in rows}
        errata = self.errata(c, fixed)
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        counts["errata"] = sum(1 for row, _ in errata if row.verdict == "refuted")
        params = ", ".join(f"{p.name}={p.default}" for p in c.params) or "none"
        body = [
            f"<h1><code>{esc(c.name)}</code>: {esc(c.title)}</h1>",
            f"<p>{esc(c.reference)}. Parameters: {esc(params)}.</p>",
            f'<p class="muted">{HEADER}</p>',
            "<h2>Claims</h2>",
            self.claims_table(rows),
        ]
        if errata:
            body.append(self.errata_html(c, errata))
        body.append("<h2>Checking them again</h2>")
        body.append(
            "<p>In this site's folder (or the repository's root), with netproof installed:</p>"
            f"<pre>netproof recheck proofs/{esc(c.name)}      # every record of this construction: "
            f"its queries re-solved by cvc5, exhaustive checks re-run\n"
            f"{esc(self.command(c, {}))}   # the proofs again, from scratch (add --force to ignore the records)</pre>"
        )
        body.append(self.files_html(c.name))
        return _page(f"{c.name}: netproof proof report", "\n".join(body)), counts

    def orphan_page(self, name: str) -> str:
        body = [
            f"<h1><code>{esc(name)}</code></h1>",
            (
                "<p>Records of a construction that is not among those this report was built for (a user's module "
                "or network file: pass it to <code>netproof report</code> to check its records).</p>"
            ),
            self.files_html(name),
        ]
        return _page(f"{name}: netproof proof report", "\n".join(body))


def _entries(rec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every query entry of a record: its own and its lemma tree's."""
    yield from rec.get("queries") or []
    stack = [rec["lemmas"]] if rec.get("lemmas") else []
    while stack:
        node = stack.pop()
        yield from node["queries"]
        stack.extend(node["children"])


def _record_folders(proofs: str) -> list[str]:
    from netproof.verifier.smt.prooflog import QUERY_DIR

    return sorted(
        f
        for f in os.listdir(proofs)
        if f != QUERY_DIR
        and os.path.isdir(os.path.join(proofs, f))
        and any(x.endswith(".json") for x in os.listdir(os.path.join(proofs, f)))
    )


def _check_out(out: str, proofs: str) -> None:
    if os.path.exists(out) and not os.path.isdir(out):
        raise CampaignError(f"--out {out!r} is a file; give a folder for the report (e.g. report)")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(os.path.join(out, MARKER)):
        raise CampaignError(
            f"--out {out!r} is a folder that holds files and no report netproof wrote; give a new or empty folder "
            "(the report replaces the folder's contents)"
        )
    real_out, real_proofs = os.path.realpath(out), os.path.realpath(proofs)
    if (
        real_out == real_proofs
        or real_proofs.startswith(real_out + os.sep)
        or real_out.startswith(real_proofs + os.sep)
    ):
        raise CampaignError(
            f"--out {out!r} and --proofs {proofs!r} overlap; give a folder outside the records (e.g. report)"
        )


def build_site(
    registry: Mapping[str, Construction],
    proofs: str = "proofs",
    out: str = "report",
    sources: Mapping[str, str] | None = None,
    cache: VerificationCache | str | None = DEFAULT_CACHE,
    every_folder: bool = True,
) -> list[str]:
    """Write the report of the constructions of ``registry`` from the records under ``proofs``
    into the folder ``out`` (made, or replaced when it holds a report written before; any
    other non-empty folder is refused) and return the pages written, relative to ``out``
    (``index.html`` first). ``sources``: the file a user's construction comes from, by name;
    ``cache``: as :func:`netproof.verifier.campaign.ledger.build`'s; ``every_folder``: give a
    page (its record files, unchecked) to every folder of records under ``proofs`` whose
    construction is not in ``registry``."""
    if not os.path.isdir(proofs):
        raise CampaignError(
            f"no proof records at {proofs!r}: run `netproof prove` first or pass --proofs DIR"
        )
    _check_out(out, proofs)
    sources = dict(sources or {})
    if cache == DEFAULT_CACHE:
        cache = VerificationCache(default_cache_dir())
    checks = RecordChecks(
        registry, cache if isinstance(cache, VerificationCache) else None, sources
    )
    builder = _Builder(proofs, sources, checks)
    from netproof.verifier.smt.prooflog import QUERY_DIR

    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".report-", dir=parent)
    try:
        pages: dict[str, str] = {}
        index_rows = []
        for c in registry.values():
            text, counts = builder.construction_page(c)
            pages[page_name(c.name)] = text
            index_rows.append((c.name, c.title, c.reference, counts))
        orphans = [f for f in _record_folders(proofs) if f not in registry] if every_folder else []
        for name in orphans:
            pages[page_name(name)] = builder.orphan_page(name)
        for name in [*registry, *orphans]:
            for src, dst in (
                (os.path.join(proofs, name), os.path.join(tmp, "proofs", name)),
                (
                    os.path.join(proofs, QUERY_DIR, name),
                    os.path.join(tmp, "proofs", QUERY_DIR, name),
                ),
            ):
                if os.path.isdir(src):
                    shutil.copytree(src, dst)
        index = _index(index_rows, orphans)
        for name, text in {"index.html": index, **pages}.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        with open(os.path.join(tmp, "style.css"), "w", encoding="utf-8") as fh:
            fh.write(STYLE)
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as fh:
            fh.write("written by `netproof report`; the next run replaces this folder\n")
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp)
    return ["index.html", *pages]


_COLUMNS = (
    ("every", "every length"),
    ("proved", "proved"),
    ("refuted", "refuted"),
    ("unknown", "unknown"),
    ("missing", "no record"),
    ("failed", "fails its check"),
)


def _index(rows: list[tuple[str, str, str, dict[str, int]]], orphans: list[str]) -> str:
    head = "".join(f"<th>{esc(label)}</th>" for _, label in _COLUMNS)
    out = [
        "<h1>netproof proof report</h1>",
        (
            "<p>Every construction with the verdicts of its proof records, its errata (the paper's printed claims "
            "refuted, next to the fixed claims) with counterexample traces, and every record and <code>.smt2</code> "
            "query, copied into this folder (<code>proofs/</code>) so that the links work wherever the folder goes.</p>"
        ),
        f'<p class="muted">{HEADER}</p>',
        f"<table><tr><th>construction</th><th>what it is</th>{head}<th>errata (printed claims refuted)</th></tr>",
    ]
    for name, title, reference, counts in rows:
        cells = "".join(
            f'<td class="{cls if counts.get(cls) else ""}">{counts.get(cls, 0) or ""}</td>'
            for cls, _ in _COLUMNS
        )
        out.append(
            f'<tr><td>{_link(page_name(name), name)}</td><td>{esc(title)}<br><span class="muted">{esc(reference)}</span></td>'
            f'{cells}<td class="{"refuted" if counts.get("errata") else ""}">{counts.get("errata", 0) or ""}</td></tr>'
        )
    out.append("</table>")
    if orphans:
        out.append(
            "<h2>Other records</h2><p>Folders of records whose construction this report was not built for:</p><ul>"
        )
        out.extend(f"<li>{_link(page_name(n), n)}</li>" for n in orphans)
        out.append("</ul>")
    out.append(
        "<h2>Checking them again</h2><p>In this folder (or the repository's root), with netproof and cvc5 "
        "installed:</p><pre>netproof recheck proofs   # every record: its queries re-solved by "
        "cvc5, exhaustive checks re-run</pre>"
    )
    return _page("netproof proof report", "\n".join(out), up=False)
