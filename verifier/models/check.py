"""Every word up to a length, decided rigorously for an imported (or any softmax) recognizer, and
compared with a reference language: :func:`check_model`.

Words of each length are enumerated in shortlex order (the language's alphabet order) and
evaluated in batches by the float64 enclosure (:mod:`.enclosure`): a word is decided when its
logit's enclosure excludes 0 (accept iff the logit is > 0). The words it leaves open go to the slow
rigorous interpreter (:mod:`netproof.symbolic.interval`, mpmath intervals at ``digits`` digits);
a word that stays open there is **undecided** and named, never counted correct. A decided word
is correct when the verdict equals the language's membership, wrong otherwise; the first wrong
word met is the shortest one (shortlex-first). With ``float32`` (the model's own float32 run)
every decided word whose float32 sign differs from the rigorous verdict is counted and listed.

May import the claims vocabulary (languages), the IR and the interval interpreter, and torch
inside functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from netproof.symbolic import interval
from netproof.symbolic.errors import NotRationalError
from netproof.symbolic.evaluation import UndecidedSignError, UndefinedValueError
from netproof.symbolic.ir import Network, TokenEmbedding
from netproof.symbolic.printing import fingerprint
from netproof.symbolic.rnn_recognizers import (
    ElmanRecognizer,
    LSTMRecognizer,
    RNNRecognizerIR,
    rnn_fingerprint,
)
from netproof.verifier.claims.languages import Language

from .enclosure import Enclosure, EnclosureError, RNNEnclosure
from .exact_enclosure import ExactLogits, batched_logits

__all__ = ["LengthRow", "ModelReport", "WordVerdict", "check_model", "merge_reports"]

LISTED = 10
"""How many undecided words and float32 differences a report lists (all are counted)."""


@dataclass(frozen=True, slots=True)
class WordVerdict:
    """One word's rigorous verdict: ``accepted`` (None: undecided), the language's answer, the
    logit's enclosure [low, high] and which evaluation decided it (``batched`` or ``interval``)."""

    word: tuple[str, ...]
    expected: bool
    accepted: bool | None
    low: float
    high: float
    method: str
    note: str = ""


@dataclass(slots=True)
class LengthRow:
    """The counts of one length: every word is correct, wrong or undecided; ``slow`` of them
    went to the interval interpreter; ``float32_differs`` decided words whose float32 sign differs."""

    length: int
    words: int = 0
    correct: int = 0
    wrong: int = 0
    undecided: int = 0
    slow: int = 0
    float32_differs: int = 0


@dataclass(slots=True)
class ModelReport:
    """The whole check: one row per length, the shortest wrong word, the undecided words and the
    float32 differences (the first :data:`LISTED` of each)."""

    network: str
    fingerprint: str
    language: str
    max_n: int
    rows: list[LengthRow] = field(default_factory=list)
    shortest_wrong: WordVerdict | None = None
    undecided: list[WordVerdict] = field(default_factory=list)
    float32_differences: list[tuple[tuple[str, ...], float, bool]] = field(default_factory=list)
    margins: dict[int, int] = field(default_factory=dict)
    """The margin histogram: for each decade e, how many decided words have a margin (the distance
    of the logit's enclosure from 0) in [10^e, 10^(e+1))."""
    wrong_margins: dict[int, int] = field(default_factory=dict)
    """The same histogram over the wrong words only."""
    fine_margins: dict[int, list[int]] = field(default_factory=dict)
    """For the picture: by tenths of a decade (key ⌊10·log₁₀ margin⌋), [correct, wrong] words."""
    trace: list[dict[str, object]] = field(default_factory=list)
    """The shortest wrong word's rigorous trace at the readout token: every residual state (the
    midpoints of its dims' intervals) and every head's attention weights from that token."""
    search: dict[str, Any] | None = None
    """How a branch-and-bound run (:mod:`.bnb`) got there: words settled by bounds, words
    enumerated, per length and depth; None for plain enumeration."""

    @property
    def totals(self) -> LengthRow:
        t = LengthRow(length=self.max_n)
        for r in self.rows:
            for k in ("words", "correct", "wrong", "undecided", "slow", "float32_differs"):
                setattr(t, k, getattr(t, k) + getattr(r, k))
        return t

    @property
    def status(self) -> str:
        """``correct`` (every word), ``wrong`` (some word wrong) or ``undecided`` (none wrong, some open)."""
        t = self.totals
        return "wrong" if t.wrong else ("undecided" if t.undecided else "correct")

    def to_json(self) -> str:
        def word(w: Sequence[str]) -> str:
            return " ".join(w)

        doc = {
            "network": self.network,
            "fingerprint": self.fingerprint,
            "language": self.language,
            "max_n": self.max_n,
            "status": self.status,
            "rows": [asdict(r) for r in self.rows],
            "totals": asdict(self.totals),
            "shortest_wrong": None
            if self.shortest_wrong is None
            else {**asdict(self.shortest_wrong), "word": word(self.shortest_wrong.word)},
            "undecided": [{**asdict(u), "word": word(u.word)} for u in self.undecided],
            "shortest_wrong_trace": self.trace,
            "margin_histogram": {f"1e{e}": c for e, c in sorted(self.margins.items())},
            "wrong_margin_histogram": {f"1e{e}": c for e, c in sorted(self.wrong_margins.items())},
            "float32_differences": [
                {"word": word(w), "float32_logit": x, "rigorous_accepts": a}
                for w, x, a in self.float32_differences
            ],
        }
        if self.search is not None:
            doc["search"] = self.search
        return json.dumps(doc, sort_keys=True, indent=2)


def slow_verdict(
    net: Network | RNNRecognizerIR,
    word: tuple[str, ...],
    expected: bool,
    digits: int,
    exact: bool = False,
) -> WordVerdict:
    """One word through the rigorous interval interpreter (every block, ``digits`` digits); with
    ``exact``, a word it leaves open goes on to the sympy interpreter, which decides a sign exactly
    when the value simplifies to 0 (a logit exactly 0 rejects)."""
    if isinstance(net, (ElmanRecognizer, LSTMRecognizer)):
        et = interval.run_rnn(net, word, digits=digits)
        open_note = "the logit's enclosure contains 0" + (
            "; the sympy interpreter does not run RNN recognizers" if exact else ""
        )
        return WordVerdict(
            word,
            expected,
            et.accepted,
            float(et.output.a),
            float(et.output.b),
            "interval",
            "" if et.accepted is not None else open_note,
        )
    try:
        tr = interval.run(net, word, digits=digits)
        out = tr.output
        assert out is not None  # an imported recognizer's readout is a classifier: one logit
        v = WordVerdict(
            word,
            expected,
            tr.accepted,
            float(out.a),
            float(out.b),
            "interval",
            "" if tr.accepted is not None else "the logit's enclosure contains 0",
        )
    except (UndecidedSignError, UndefinedValueError) as exc:
        v = WordVerdict(word, expected, None, float("-inf"), float("inf"), "interval", str(exc))
    if v.accepted is not None or not exact:
        return v
    from netproof.symbolic import sympy_interp

    try:
        st = sympy_interp.run(net, word)
    except (
        UndecidedSignError,
        UndefinedValueError,
        NotRationalError,
    ) as exc:  # e.g. a GELU, which sympy does not evaluate
        return WordVerdict(word, expected, None, v.low, v.high, "sympy", str(exc))
    if st.accepted is None:
        return WordVerdict(
            word, expected, None, v.low, v.high, "sympy", "the sympy interpreter left the sign open"
        )
    return WordVerdict(
        word, expected, st.accepted, v.low, v.high, "sympy", "decided by exact algebra"
    )


def readout_trace(
    net: Network | RNNRecognizerIR, word: tuple[str, ...], digits: int
) -> list[dict[str, object]]:
    """The rigorous trace of ``word`` at the readout token (see :attr:`ModelReport.trace`); for an
    RNN recognizer, every hidden state h_0 … h_m (and an LSTM's cell states c_0 … c_m)."""
    if isinstance(net, (ElmanRecognizer, LSTMRecognizer)):
        et = interval.run_rnn(net, word, digits=digits)
        steps: list[dict[str, object]] = [
            {"state": f"h_{t}", "values": {u: float(v.mid) for u, v in h.items()}}
            for t, h in enumerate(et.states)
        ]
        return steps + [
            {"state": f"c_{t}", "values": {u: float(v.mid) for u, v in c.items()}}
            for t, c in enumerate(et.cells)
        ]
    try:
        tr = interval.run(net, word, digits=digits)
    except (UndecidedSignError, UndefinedValueError):
        return []
    pos = net.readout.position if isinstance(net.readout.position, int) else 0  # type: ignore[union-attr]
    t = pos if pos >= 0 else len(tr.tokens) + pos
    out: list[dict[str, object]] = []
    for state in tr.states:
        row = state.rows[t]
        out.append(
            {
                "state": state.label,
                "values": {
                    d: (None if v is None else float(v.mid))
                    for d, v in zip(net.dims, row, strict=True)
                },
            }
        )
    for sel in tr.selections:
        if sel.position == t:
            out.append(
                {
                    "attention": f"{sel.layer}/{sel.head}",
                    "weights": [float(w.mid) for w in sel.weights],
                }
            )
    return out


def check_model(
    net: Network | RNNRecognizerIR,
    language: Language,
    *,
    max_n: int,
    min_n: int = 0,
    float32: Callable[[list[tuple[str, ...]]], Sequence[float]] | None = None,
    batch: int = 4096,
    digits: int = 50,
    exact: bool = False,
    enclosure: Enclosure | RNNEnclosure | ExactLogits | None = None,
    progress: Callable[[int, int], None] | None = None,
    shard: tuple[int, int, int] | None = None,
    trace: bool = True,
    on_slow: Callable[[int, int], None] | None = None,
) -> ModelReport:
    """Decide every word of length ``min_n..max_n`` of ``language``'s alphabet rigorously and
    compare with membership (see the module docstring). ``float32(words)`` returns the model's
    own float32 logits; ``progress(length, words_done)`` is called after each batch and
    ``on_slow(length, words_sent)`` after each word sent to the slow rigorous fallback; ``exact``
    sends the words the interval interpreter leaves open on to the sympy interpreter; without
    ``trace`` the shortest wrong word's rigorous trace is not computed (a part of a search that
    already met a shorter wrong word).

    ``shard=(m, start, stop)`` checks only the words of length m with shortlex index in
    [start, stop) (a work item of a sharded run; :func:`merge_reports` joins the parts)."""
    import torch

    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    if isinstance(net, Network):
        emb = net.embedding
        if not isinstance(emb, TokenEmbedding):
            raise EnclosureError(
                f"network {net.name!r} has a {type(emb).__name__}; check-model needs a TokenEmbedding"
            )
        prefix, suffix = emb.prefix, emb.suffix
    if set(language.alphabet) != set(net.alphabet):
        raise ValueError(
            f"language {language.name} has alphabet {list(language.alphabet)} but network {net.name!r} reads "
            f"{list(net.alphabet)}; pick the language the model was trained on"
        )
    if max_n < min_n or min_n < 0:
        raise ValueError(f"max_n={max_n} must be >= min_n={min_n} >= 0")
    enc = enclosure or batched_logits(net)  # exact logits for a hardmax network
    alphabet = list(language.alphabet)
    k = len(alphabet)
    ids = torch.tensor([enc.token_index[a] for a in alphabet], dtype=torch.long)
    pre = [enc.token_index[t] for t in prefix]
    suf = [enc.token_index[t] for t in suffix]
    report = ModelReport(
        net.name,
        fingerprint(net) if isinstance(net, Network) else rnn_fingerprint(net),
        language.name,
        max_n,
    )
    lengths = range(min_n, max_n + 1) if shard is None else range(shard[0], shard[0] + 1)
    for m in lengths:
        row = LengthRow(length=m)
        first, total = (0, k**m) if shard is None else (shard[1], min(shard[2], k**m))
        n_tokens = len(pre) + m + len(suf)
        for start in range(first, total, batch):
            idx = torch.arange(start, min(total, start + batch), dtype=torch.long)
            digits_ = (
                torch.stack([(idx // k ** (m - 1 - p)) % k for p in range(m)], 1)
                if m
                else idx.new_zeros(len(idx), 0)
            )
            tokens = torch.cat(
                [
                    torch.tensor(pre, dtype=torch.long).expand(len(idx), -1),
                    ids[digits_],
                    torch.tensor(suf, dtype=torch.long).expand(len(idx), -1),
                ],
                1,
            )
            with torch.no_grad():
                y = enc.logits(tokens, n_tokens)
            low, high = (y.m - y.r), (y.m + y.r)
            words = [tuple(alphabet[d] for d in w) for w in digits_.tolist()]
            expected = torch.tensor([bool(language.contains(w)) for w in words], dtype=torch.bool)
            accepted = low > 0
            decided = accepted | (high < 0)
            f32 = (
                torch.tensor(list(float32(words)), dtype=torch.float64)
                if float32 is not None
                else None
            )
            # the words the batched enclosure leaves open, one by one through the interval interpreter
            slow: dict[int, WordVerdict] = {}
            for b in torch.nonzero(~decided).flatten().tolist():
                slow[b] = slow_verdict(net, words[b], bool(expected[b]), digits, exact)
                if on_slow is not None:
                    on_slow(m, row.slow + len(slow))
                if slow[b].accepted is not None:
                    decided[b], accepted[b] = True, bool(slow[b].accepted)
                    low[b], high[b] = slow[b].low, slow[b].high
            row.words += len(words)
            row.slow += len(slow)
            row.undecided += int((~decided).sum())
            for b in sorted(slow):
                if slow[b].accepted is None and len(report.undecided) < LISTED:
                    report.undecided.append(slow[b])
            right = decided & (accepted == expected)
            wrong = decided & (accepted != expected)
            row.correct += int(right.sum())
            row.wrong += int(wrong.sum())
            # margin histograms, vectorized: decades and tenths of a decade of the decided words' margins
            margin = torch.where(accepted, low, -high)
            positive = margin > 0
            logm = torch.log10(torch.where(positive, margin, 1.0))
            decade = torch.where(positive, torch.floor(logm), -400.0).long()
            tenth = torch.where(positive, torch.floor(10 * logm), -4000.0).long()
            for mask, column in ((right, 0), (wrong, 1)):
                values, counts = torch.unique(tenth[mask], return_counts=True)
                for e, c in zip(values.tolist(), counts.tolist(), strict=True):
                    report.fine_margins.setdefault(e, [0, 0])[column] += c
            for mask, hist in ((decided, report.margins), (wrong, report.wrong_margins)):
                values, counts = torch.unique(decade[mask], return_counts=True)
                for e, c in zip(values.tolist(), counts.tolist(), strict=True):
                    hist[e] = hist.get(e, 0) + c
            if report.shortest_wrong is None and bool(wrong.any()):
                b = int(torch.nonzero(wrong)[0, 0])
                report.shortest_wrong = slow.get(b) or WordVerdict(
                    words[b],
                    bool(expected[b]),
                    bool(accepted[b]),
                    float(low[b]),
                    float(high[b]),
                    "batched",
                )
                report.trace = readout_trace(net, words[b], digits) if trace else []
            if f32 is not None:
                differs = decided & ((f32 > 0) != accepted)
                row.float32_differs += int(differs.sum())
                for b in (
                    torch.nonzero(differs)
                    .flatten()
                    .tolist()[: LISTED - len(report.float32_differences)]
                ):
                    report.float32_differences.append((words[b], float(f32[b]), bool(accepted[b])))
            if progress is not None:
                progress(m, min(total, start + batch))
        report.rows.append(row)
    return report


def merge_reports(parts: Sequence[ModelReport], *, max_n: int) -> ModelReport:
    """One report from the reports of shards, given in shortlex order of their words (so the
    first shortest wrong word among them is the shortest of all)."""
    if not parts:
        raise ValueError("merge_reports needs at least one part")
    out = ModelReport(parts[0].network, parts[0].fingerprint, parts[0].language, max_n)
    rows: dict[int, LengthRow] = {}
    for part in parts:
        for r in part.rows:
            into = rows.setdefault(r.length, LengthRow(length=r.length))
            for key in ("words", "correct", "wrong", "undecided", "slow", "float32_differs"):
                setattr(into, key, getattr(into, key) + getattr(r, key))
        if out.shortest_wrong is None and part.shortest_wrong is not None:
            out.shortest_wrong, out.trace = part.shortest_wrong, part.trace
        out.undecided += part.undecided[: LISTED - len(out.undecided)]
        out.float32_differences += part.float32_differences[: LISTED - len(out.float32_differences)]
        for e, c in part.margins.items():
            out.margins[e] = out.margins.get(e, 0) + c
        for e, c in part.wrong_margins.items():
            out.wrong_margins[e] = out.wrong_margins.get(e, 0) + c
        for e, (c, w) in part.fine_margins.items():
            into_fine = out.fine_margins.setdefault(e, [0, 0])
            into_fine[0] += c
            into_fine[1] += w
    out.rows = [rows[m] for m in sorted(rows)]
    return out
