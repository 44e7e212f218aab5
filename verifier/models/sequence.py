"""Outputs per position: every word up to a length checked at every position against a
reference (a function from a word to the expected output of each position, ``None``: don't care),
with a categorical output read rigorously: :func:`check_sequence`.

The model's output at a position is a row of logits, ``unembed`` applied to the last residual
stream there. The verdict is the argmax, **decided** when the enclosure of top-1 minus every
other logit excludes 0 (each difference enclosed directly, from the exact difference of the
unembedding's columns, by the batched enclosure of :mod:`.enclosure`); otherwise the position is
**undecided** and named, never counted correct (two logits equal in exact arithmetic are
undecided). A numerical output (one column, with a tolerance) is correct where its whole
enclosure lies within the tolerance of the expected number, wrong where none of it does,
undecided otherwise. A next-symbol-set output (``threshold``) has one score per symbol: a
symbol is allowed where its score is > the threshold; the position is decided where every
symbol's enclosure lies strictly on one side of it (a score equal to the threshold in exact
arithmetic is undecided), and wrong where the decided set differs from the expected one.
Words are enumerated in shortlex order, in batches, as :func:`.check.check_model`
does; positions left open go to the slow rigorous interpreter (:func:`slow_outputs`), as a
recognizer's words do. A plain float run's verdicts are counted beside the rigorous ones, and
the decided positions' margins make a histogram per decade, as for a recognizer.

A network the enclosure does not cover but that evaluates exactly (a recurrent network, an
encoder–decoder: a construction's own claim, :mod:`.exact_claims`) comes as an
:class:`ExactOutputs`: its outputs at every position of a word, exactly. The verdicts are then
decided in exact arithmetic: the argmax where the top logit is strictly above every other (a tie
undecided), the symbols whose score is > the threshold (a score equal to it undecided), a value
within the tolerance, or (no ``values``) an output that is a value of its own, right where it
equals the expected one (its margin is 0: equal or not, no distance). Its positions need not be
the word's: an encoder–decoder has one per decoder step.

Beyond the exhaustive bound, ``sample`` words drawn uniformly at random (seeded) per length up
to ``sample_max_n`` are checked the same way, rigorously; their rows are marked ``sampled`` and
carry the wrong-word rate with its 95% Wilson interval, an estimate and never a verdict for the
length. A wrong word found by sampling is a real wrong word (its status is ``wrong``), listed
with ``sampled`` set, but it is not the shortest wrong word: ``shortest_wrong`` comes from the
exhaustive lengths only (``sampled_wrong`` is the first one sampling found).

May import the IR and the enclosure; torch inside functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from netproof.symbolic.blocks import Affine, Classifier
from netproof.symbolic.ir import Network, TokenEmbedding

from .enclosure import MR, Enclosure, EnclosureError

__all__ = [
    "WRONG_FIELDS",
    "ExactOutputs",
    "PositionVerdict",
    "RecordedRun",
    "SequenceReport",
    "check_sequence",
    "import_columns",
    "load_sequence_dump",
    "merge_sequence_reports",
    "recorded_run",
    "same_value",
    "wilson",
]

Reference = Callable[[tuple[str, ...]], Sequence[Any]]


@runtime_checkable
class ExactOutputs(Protocol):
    """A network evaluated exactly, word by word (see the module docstring): ``name``, the
    ``alphabet`` it reads, and called with words of one length, for each word its outputs at
    each of its positions: a tuple of Fractions (a categorical output's logits, one per value;
    a next-set output's scores, one per symbol), a Fraction (a numerical output) or a value
    compared as it is (no ``values``)."""

    name: str
    alphabet: tuple[str, ...]

    def __call__(self, words: Sequence[tuple[str, ...]]) -> list[list[Any]]: ...


def _down(q: Fraction) -> float:
    """The largest float <= q."""
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


def exact_judge(
    out: Any,
    e: Any,
    values: Sequence[Any],
    theta: Fraction | None,
    tolerance: float | None,
) -> tuple[Any, float]:
    """The verdict at one position from its exact outputs ``out`` (see :class:`ExactOutputs`):
    the value got (None: undecided, a tie or a score at the threshold) and the margin (a lower
    bound, > 0 where decided; 0 for a value compared as it is)."""
    if not values:
        return out, 0.0
    if theta is not None:
        sides = [abs(s - theta) for s in out]
        got = tuple(sorted(str(values[c]) for c, s in enumerate(out) if s > theta))
        margin = min(sides)
        return (got if margin > 0 else None), _down(margin)
    if tolerance is not None:
        gap, tol = abs(out - Fraction(e)), Fraction(tolerance)
        if gap <= tol:
            return e, _down(tol - gap)
        return float(out), _down(gap - tol)
    top = max(out)
    i = out.index(top)
    margin = min((top - x for c, x in enumerate(out) if c != i), default=Fraction(0))
    return (values[i] if margin > 0 else None), _down(margin)


def same_value(a: Any, b: Any) -> bool:
    """Whether an expected output and an output value are the same (``3`` and ``"3"`` are)."""
    return a == b or str(a) == str(b)


@dataclass(frozen=True, slots=True)
class PositionVerdict:
    """One checked position of one word: ``got`` the rigorous argmax (None: undecided),
    ``margin`` the lower bound of top-1 minus the runner-up (≤ 0: undecided)."""

    word: tuple[str, ...]
    position: int
    expected: Any
    got: Any
    margin: float
    sampled: bool = False

    def to_dict(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:  # a set of next symbols (a sorted tuple) as a list
            return list(v) if isinstance(v, tuple) else v

        return {
            "input": " ".join(self.word),
            "position": self.position,
            "expected": plain(self.expected),
            "got": plain(self.got),
            "margin": self.margin,
            "sampled": self.sampled,
        }


WRONG_FIELDS = ("input", "position", "expected", "got", "margin", "sampled")
"""The columns of ``--wrong FILE.csv`` (and the keys of each JSON line of ``--wrong FILE``)."""


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a rate ``k/n`` (``(0, 1)`` for ``n = 0``).

    >>> [round(x, 3) for x in wilson(0, 100)]
    [0.0, 0.037]
    """
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


ROW_COUNTS = (
    "words",
    "positions",
    "correct",
    "wrong",
    "undecided",
    "wrong_words",
    "slow",
    "float32_wrong",
    "float32_wrong_words",
    "float32_differs",
)


@dataclass(slots=True)
class SequenceRow:
    length: int
    words: int = 0
    positions: int = 0
    correct: int = 0
    wrong: int = 0
    undecided: int = 0
    wrong_words: int = 0
    sampled: bool = False
    slow: int = 0
    float32_wrong: int = 0
    float32_wrong_words: int = 0
    float32_differs: int = 0

    @property
    def error_rate(self) -> float:
        """Wrong words of the words checked at this length (of the sample, for a sampled row)."""
        return self.wrong_words / self.words if self.words else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = {**asdict(self), "error_rate": self.error_rate}
        if self.sampled:
            out["error_rate_95"] = list(wilson(self.wrong_words, self.words))
        return out


@dataclass(slots=True)
class SequenceReport:
    """The check of every word up to ``max_n``: per length, the positions checked (those with an
    expected output), correct, wrong and undecided; every wrong and undecided position in
    ``listed`` (shortlex order), the first wrong one in ``shortest_wrong``."""

    network: str
    reference: str
    max_n: int
    values: tuple[Any, ...]
    rows: list[SequenceRow] = field(default_factory=list)
    listed: list[PositionVerdict] = field(default_factory=list)
    shortest_wrong: PositionVerdict | None = None
    sampled_wrong: PositionVerdict | None = None
    kind: str = ""
    float32: str = ""
    """The plain float32 run whose verdicts the rows count, named ("": none; ``float32_wrong``:
    positions where it disagrees with the reference; ``float32_differs``: decided positions
    where it disagrees with the rigorous verdict)."""
    margins: dict[int, int] = field(default_factory=dict)
    """The margin histogram of the exhaustive lengths' decided positions: for each decade e, how
    many have a margin in [10^e, 10^(e+1)) (the distance of the deciding enclosure from the
    boundary: top-1 minus the runner-up, the tolerance's edge, or the threshold)."""
    wrong_margins: dict[int, int] = field(default_factory=dict)
    """The same histogram over the wrong positions only."""

    @property
    def output(self) -> str:
        """``categorical``, ``numeric``, ``next-set`` or ``value`` (an :class:`ExactOutputs`'s
        outputs compared as they are)."""
        return self.kind or ("numeric" if len(self.values) == 1 else "categorical")

    @property
    def totals(self) -> SequenceRow:
        """The exhaustive lengths' counts added up (sampled rows are not in it)."""
        t = SequenceRow(length=self.max_n)
        for r in self.rows:
            if r.sampled:
                continue
            for k in ROW_COUNTS:
                setattr(t, k, getattr(t, k) + getattr(r, k))
        return t

    @property
    def status(self) -> str:
        """``wrong`` where any word checked is wrong (sampled ones too: each is a real wrong
        word), else ``undecided`` where an exhaustive length has an undecided position, else
        ``correct`` (every word of every exhaustive length)."""
        t = self.totals
        if t.wrong or self.sampled_wrong is not None:
            return "wrong"
        return "undecided" if t.undecided else "correct"

    def to_json(self) -> str:
        sw = self.shortest_wrong
        return json.dumps(
            {
                "network": self.network,
                "reference": self.reference,
                "output": self.output,
                "max_n": self.max_n,
                "status": self.status,
                "rows": [r.to_dict() for r in self.rows],
                "totals": self.totals.to_dict(),
                "shortest_wrong": None
                if sw is None
                else {**sw.to_dict(), "word": " ".join(sw.word)},
                "sampled_wrong": None
                if self.sampled_wrong is None
                else {**self.sampled_wrong.to_dict(), "word": " ".join(self.sampled_wrong.word)},
                "undecided": [v.to_dict() for v in self.listed if v.got is None][:10],
                "float32": self.float32,
                "margin_histogram": {f"1e{e}": c for e, c in sorted(self.margins.items())},
                "wrong_margin_histogram": {
                    f"1e{e}": c for e, c in sorted(self.wrong_margins.items())
                },
            },
            sort_keys=True,
            indent=2,
            default=str,
        )


def _differences(
    inputs: tuple[str, ...], unembed: Sequence[Sequence[Fraction]], bias: Sequence[Fraction]
) -> Affine:
    """Every logit minus every other, as one Affine over the readout's inputs (exact weights):
    output ``i*(k-1) + j'`` is logit i minus the j'-th other logit."""
    k = len(unembed)
    rows, bs, names = [], [], []
    for i in range(k):
        for j in range(k):
            if i != j:
                rows.append(tuple(a - b for a, b in zip(unembed[i], unembed[j], strict=True)))
                bs.append(bias[i] - bias[j])
                names.append(f"diff_{i}_{j}")
    return Affine(inputs=inputs, outputs=tuple(names), weights=tuple(rows), bias=tuple(bs))


def check_sequence(
    net: Network | ExactOutputs,
    reference: Reference,
    *,
    unembed: Sequence[Sequence[Fraction]],
    values: Sequence[Any],
    max_n: int,
    min_n: int = 1,
    bias: Sequence[Fraction] | None = None,
    reference_name: str = "reference",
    batch: int = 1024,
    tolerance: float | None = None,
    sample: int = 0,
    sample_max_n: int | None = None,
    seed: int = 0,
    threshold: float | Fraction | None = None,
    columns: Sequence[Network] | None = None,
    float32: Callable[[list[tuple[str, ...]]], Any] | None = None,
    float32_name: str = "the model itself",
    slow: bool = True,
    digits: int = 50,
    shard: tuple[int, int, int] | None = None,
    enclosure: Enclosure | None = None,
) -> SequenceReport:
    """Check every word of length ``min_n..max_n`` at every word position (see the module
    docstring). ``unembed[c]`` is output ``c``'s weights over ``net.readout``'s inputs (the last
    residual stream), ``values[c]`` its value; ``reference(word)`` the expected value at each of
    the word's positions (``None``: not checked). With ``tolerance`` the output is numerical
    (one column): a position is correct when the whole enclosure of its value lies within
    ``tolerance`` of the expected number, wrong when none of it does, undecided otherwise.
    With ``threshold`` the output is a set of next symbols (``values[c]`` the symbol of column
    ``c``, allowed where its score is > ``threshold``; the reference gives a set or list of
    symbols per position). With ``columns`` (one network per output, :func:`import_columns`: a
    model whose forward returns ``[batch, length, vocabulary]``) output ``c`` at each position
    is ``columns[c]``'s readout there (``net``, ``unembed`` and ``bias`` are then not read); a
    categorical output's differences are then enclosed from the columns' enclosures apart. ``sample`` words per length from ``max_n + 1`` to ``sample_max_n`` are drawn with the seed
    ``seed`` and checked the same way (rows marked ``sampled``; see the module docstring).

    A position the batched enclosure leaves undecided goes, with ``slow``, to the slow rigorous
    interpreter (:func:`slow_outputs`, ``digits`` digits; counted in the row's ``slow``), and is
    undecided only if it stays open there. ``float32(words)`` (a plain float run of the model:
    outputs ``[words, length, outputs]`` at the word positions, e.g. a dump's
    :class:`RecordedRun`) gives each exhaustive row's ``float32_wrong`` (positions where that
    run's own verdict, argmax, value within the tolerance or set above the threshold, is not
    the reference's), ``float32_wrong_words`` and ``float32_differs`` (decided positions where
    it disagrees with the rigorous verdict). ``shard=(m, start, stop)`` checks only the words of
    length m with shortlex index in [start, stop) (:func:`merge_sequence_reports` joins the
    parts). ``enclosure`` replaces ``Enclosure(net)`` (e.g. one that also encloses hardmax
    heads: :class:`~netproof.verifier.models.next_claims.NextSetEnclosure`).

    ``net`` may instead be an :class:`ExactOutputs` (``unembed``, ``columns``, ``enclosure``,
    ``slow`` and ``float32`` are then not read; no ``values``: each output is a value compared
    as it is); its words may be empty (``min_n=0``) and its positions per word are its own."""
    import torch

    if isinstance(net, ExactOutputs):
        return _check_exact(
            net,
            reference,
            values=values,
            max_n=max_n,
            min_n=min_n,
            reference_name=reference_name,
            batch=batch,
            tolerance=tolerance,
            sample=sample,
            sample_max_n=sample_max_n,
            seed=seed,
            threshold=threshold,
            shard=shard,
        )
    if columns is not None:
        net = columns[0]
        unembed = [(Fraction(1),)] * len(columns)  # placeholders: the columns' own readouts
    emb, ro = net.embedding, net.readout
    if not isinstance(emb, TokenEmbedding) or not isinstance(ro, Classifier):
        raise EnclosureError(
            f"network {net.name!r}: a per-position output needs a TokenEmbedding and a readout"
        )
    k = len(values)
    _check_kind(k, len(unembed), tolerance, threshold)
    enc = enclosure if enclosure is not None else Enclosure(net)
    encs = [Enclosure(c) for c in columns] if columns is not None else []
    theta = None if threshold is None else Fraction(threshold)
    lin = (
        Affine(  # every score minus the threshold, exactly
            inputs=ro.logit.inputs,
            outputs=tuple(f"score_{c}" for c in range(k)),
            weights=tuple(tuple(col) for col in unembed),
            bias=tuple(b - theta for b in (bias or [Fraction(0)] * k)),
        )
        if theta is not None
        else _differences(ro.logit.inputs, unembed, bias or [Fraction(0)] * k)
        if tolerance is None
        else Affine(
            inputs=ro.logit.inputs,
            outputs=("value",),
            weights=(tuple(unembed[0]),),
            bias=((bias or [Fraction(0)])[0],),
        )
    )
    alphabet = list(net.alphabet)
    a = len(alphabet)
    ids = torch.tensor([enc.token_index[s] for s in alphabet], dtype=torch.long)
    pre = [enc.token_index[t] for t in emb.prefix]
    suf = [enc.token_index[t] for t in emb.suffix]
    report = SequenceReport(
        net.name,
        reference_name,
        max_n,
        tuple(values),
        kind="" if theta is None else "next-set",
        float32="" if float32 is None else float32_name,
    )
    if sample < 0 or (sample and (sample_max_n is None or sample_max_n <= max_n)):
        raise ValueError(
            f"sample={sample}, sample_max_n={sample_max_n}: sample words per length beyond "
            f"max_n={max_n} need sample > 0 and sample_max_n > max_n"
        )

    value_index = _value_index(values)

    def judge(lo: list[float], hi: list[float], mid: list[float], e: Any) -> tuple[Any, float]:
        """The verdict at one position from its outputs' bounds (in ``lin``'s order): the value
        got (None: undecided) and the margin (> 0 where decided)."""
        if theta is not None:
            sides = [max(x, -y) for x, y in zip(lo, hi, strict=True)]
            margin = min(sides)
            got = tuple(sorted(str(values[c]) for c in range(k) if lo[c] > 0))
            return (got if margin > 0 else None), margin
        if tolerance is not None:
            x0 = float(e)
            inside = min(x0 + tolerance - hi[0], lo[0] - (x0 - tolerance))
            outside = max(lo[0] - (x0 + tolerance), (x0 - tolerance) - hi[0])
            if inside >= 0:
                return e, inside
            return (mid[0], outside) if outside > 0 else (None, inside)
        low = [min(lo[i * (k - 1) : (i + 1) * (k - 1)]) for i in range(k)]
        i = max(range(k), key=lambda c: low[c])
        return (values[i] if low[i] > 0 else None), low[i]

    def slow_judge(word: tuple[str, ...], p: int, e: Any) -> tuple[Any, float]:
        """One position through the slow rigorous interpreter (:mod:`netproof.symbolic.
        interval`, ``digits`` digits, the readout moved to the position)."""
        lo, hi, mid = slow_outputs(net, columns, lin, word, len(pre) + p, digits, theta)
        return judge(lo, hi, mid, e)

    def check_batch(digits_: Any, m: int, row: SequenceRow) -> None:
        n_tokens = len(pre) + m + len(suf)
        tokens = torch.cat(
            [
                torch.tensor(pre, dtype=torch.long).expand(len(digits_), -1),
                ids[digits_],
                torch.tensor(suf, dtype=torch.long).expand(len(digits_), -1),
            ],
            1,
        )
        at = slice(len(pre), len(pre) + m)
        with torch.no_grad():
            if columns is not None:
                d = _column_scores(columns, encs, tokens, n_tokens, at, theta, tolerance)
            else:
                x = enc.residual(tokens, n_tokens)
                d = enc.affine(lin, MR(x.m[:, at, :], x.r[:, at, :]), enc.index)
        # the class margins (no tolerance), or the value bounds (torch tensors)
        best: Any = None
        vlo: Any = None
        vhi: Any = None
        if theta is not None:
            vlo, vhi = d.m - d.r, d.m + d.r  # [B, m, k], the scores minus the threshold
        elif tolerance is None:
            low = (d.m - d.r).reshape(len(digits_), m, k, k - 1).min(dim=3).values  # [B, m, k]
            best = low.max(dim=2)
        else:
            vlo, vhi = (d.m - d.r)[..., 0], (d.m + d.r)[..., 0]
        words = [tuple(alphabet[s] for s in w) for w in digits_.tolist()]
        f32: Any = None
        f32_arg: Any = None
        if float32 is not None and not row.sampled:
            f32 = torch.as_tensor(float32(words), dtype=torch.float64)  # [B, m, k]
            f32_arg = f32.argmax(dim=2).tolist() if theta is None and tolerance is None else None
        margins: list[float] = []
        wrong_margins: list[float] = []
        expected_all = [list(reference(word)) for word in words]
        for word, expected in zip(words, expected_all, strict=True):
            if len(expected) != m:
                raise ValueError(
                    f"the reference gives {len(expected)} outputs for the word "
                    f"{' '.join(word)!r} of length {m}; it must give one per position"
                )
        # the positions decided right by the batched enclosure, tallied in tensors; every other
        # checked position goes through the loop below, one by one
        fast, f32_bad_words, fast_margins = _tally_right(
            expected_all, best, vlo, vhi, f32, tolerance, theta, row, value_index
        )
        if fast_margins is not None:
            margins += fast_margins.tolist()
        rest: list[list[int]] | None = [[] for _ in words] if fast is not None else None
        if fast is not None and rest is not None:
            todo = torch.nonzero(fast[1] & ~fast[0]).tolist()  # checked, not decided right
            for b, p in todo:
                rest[b].append(p)
        for b, word in enumerate(words):
            expected = expected_all[b]
            row.words += 1
            bad = False
            f32_bad = bool(f32_bad_words[b]) if f32_bad_words is not None else False
            for p in range(m) if rest is None else rest[b]:
                e = expected[p]
                if e is None:
                    continue
                row.positions += 1
                if theta is not None:
                    e = tuple(sorted({str(x) for x in e}))
                    got, margin = judge(vlo[b, p].tolist(), vhi[b, p].tolist(), [], e)
                elif tolerance is not None:
                    got, margin = judge(
                        [float(vlo[b, p])], [float(vhi[b, p])], [float(d.m[b, p, 0])], e
                    )
                else:
                    margin = float(best.values[b, p])
                    got = values[int(best.indices[b, p])] if margin > 0 else None
                if got is None and slow:
                    row.slow += 1
                    got, margin = slow_judge(word, p, e)
                right = got is not None and (
                    (got == e) if theta is not None else same_value(got, e)
                )
                if f32 is not None:
                    if theta is not None:
                        f_got: Any = tuple(
                            sorted(str(values[c]) for c in range(k) if float(f32[b, p, c]) > theta)
                        )
                        f_right = f_got == e
                    elif tolerance is not None:
                        f_got = float(f32[b, p, 0])
                        f_right = abs(f_got - float(e)) <= tolerance
                    else:
                        f_got = values[f32_arg[b][p]]
                        f_right = same_value(f_got, e)
                    if not f_right:
                        row.float32_wrong += 1
                        f32_bad = True
                    if got is not None and f_right != right:
                        row.float32_differs += 1
                if got is not None and not row.sampled:
                    margins.append(margin)
                    if not right:
                        wrong_margins.append(margin)
                if right:
                    row.correct += 1
                    continue
                verdict = PositionVerdict(word, p, e, got, margin, row.sampled)
                if verdict.got is None:
                    row.undecided += 1
                else:
                    row.wrong += 1
                    bad = True
                    if row.sampled and report.sampled_wrong is None:
                        report.sampled_wrong = verdict
                    elif not row.sampled and report.shortest_wrong is None:
                        report.shortest_wrong = verdict
                report.listed.append(verdict)
            row.wrong_words += bad
            row.float32_wrong_words += f32_bad
        for ms, hist in ((margins, report.margins), (wrong_margins, report.wrong_margins)):
            if ms:
                decades = torch.floor(torch.log10(torch.tensor(ms, dtype=torch.float64)))
                for dec, c in zip(*torch.unique(decades, return_counts=True), strict=True):
                    hist[int(dec)] = hist.get(int(dec), 0) + int(c)

    return _enumerate(
        report, check_batch, a, min_n, max_n, shard, batch, sample, sample_max_n, seed
    )


def _enumerate(
    report: SequenceReport,
    check_batch: Callable[[Any, int, SequenceRow], None],
    a: int,
    min_n: int,
    max_n: int,
    shard: Any,
    batch: int,
    sample: int,
    sample_max_n: int | None,
    seed: int,
) -> SequenceReport:
    """``report`` with a row per length: every word of ``min_n..max_n`` in shortlex batches (a
    shard's block of one length where ``shard`` is given), then ``sample`` random words of each
    length up to ``sample_max_n``, each batch given to ``check_batch`` as alphabet indices."""
    import torch

    lengths = range(min_n, max_n + 1) if shard is None else range(shard[0], shard[0] + 1)
    for m in lengths:
        row = SequenceRow(length=m)
        start0, stop = (0, a**m) if shard is None else (shard[1], min(shard[2], a**m))
        for start in range(start0, stop, batch):
            check_batch(_shortlex(a, m, start, min(stop, start + batch)), m, row)
        report.rows.append(row)
    generator = torch.Generator().manual_seed(seed)
    for m in range(max_n + 1, (sample_max_n or max_n) + 1 if sample else max_n + 1):
        row = SequenceRow(length=m, sampled=True)
        for start in range(0, sample, batch):
            size = min(batch, sample - start)
            check_batch(torch.randint(0, a, (size, m), generator=generator), m, row)
        report.rows.append(row)
    return report


def _value_index(values: Sequence[Any]) -> Callable[[Any], int]:
    """The column whose value is ``e`` (:func:`same_value`): -1 where none is or several are, or
    ``e`` is unhashable (such a position is checked one by one)."""
    cache: dict[Any, int] = {}

    def index(e: Any) -> int:
        try:
            return cache[e]
        except KeyError:
            hits = [c for c, v in enumerate(values) if same_value(v, e)]
            cache[e] = hits[0] if len(hits) == 1 else -1
            return cache[e]
        except TypeError:
            return -1

    return index


def _tally_right(
    expected: list[list[Any]],
    best: Any,
    vlo: Any,
    vhi: Any,
    f32: Any,
    tolerance: float | None,
    theta: Fraction | None,
    row: SequenceRow,
    value_index: Callable[[Any], int],
) -> tuple[Any, Any, Any]:
    """The positions of a batch that the batched enclosure decides right (a categorical argmax
    that is the expected value's column with a margin > 0, a numerical value whose enclosure
    lies within the tolerance), counted in ``row`` at once (positions, correct, and the float
    run's wrong ones there: each is also a decided position where it differs). Returns
    ((those positions, the checked ones) as [B, m] masks, the words where the float run is
    wrong at one of them, their margins), or Nones for a next-set output (every position one
    by one)."""
    import torch

    if theta is not None:
        return None, None, None
    if tolerance is None:
        eidx = torch.tensor(
            [[-2 if e is None else value_index(e) for e in ex] for ex in expected],
            dtype=torch.long,
        ).reshape(best.indices.shape)
        checked = eidx != -2
        margin = best.values
        right = (eidx >= 0) & (margin > 0) & (best.indices == eidx)
        f_right = None if f32 is None else f32.argmax(dim=2) == eidx
    else:

        def number(e: Any) -> float:
            try:
                return float(e)
            except (TypeError, ValueError):
                return math.nan  # checked one by one

        x0 = torch.tensor(
            [[math.inf if e is None else number(e) for e in ex] for ex in expected],
            dtype=torch.float64,
        ).reshape(vlo.shape)
        checked = x0 != math.inf
        margin = torch.minimum(x0 + tolerance - vhi, vlo - (x0 - tolerance))
        right = checked & (margin >= 0)  # NaN compares false
        f_right = None if f32 is None else (f32[..., 0] - x0).abs() <= tolerance
    n = int(right.sum())
    row.positions += n
    row.correct += n
    f32_bad_words = None
    if f_right is not None:
        f_bad = right & ~f_right
        row.float32_wrong += int(f_bad.sum())
        row.float32_differs += int(f_bad.sum())
        f32_bad_words = f_bad.any(1).tolist()
    return (right, checked), f32_bad_words, None if row.sampled else margin[right]


def _check_kind(
    k: int, columns: int, tolerance: float | None, threshold: float | Fraction | None
) -> None:
    if tolerance is not None and (k != 1 or columns != 1 or not tolerance >= 0):
        raise ValueError(f"a numerical output has one column and a tolerance >= 0, got {k}")
    if threshold is not None and (tolerance is not None or k < 1 or columns != k):
        raise ValueError(
            f"a next-symbol-set output has one column per symbol and no tolerance, got {k}"
        )
    if threshold is None and tolerance is None and (k < 2 or columns != k):
        raise ValueError(f"a categorical output needs >= 2 values with one column each, got {k}")


def _shortlex(a: int, m: int, start: int, stop: int) -> Any:
    """The words of length ``m`` with shortlex index in [start, stop), as digit rows."""
    import torch

    idx = torch.arange(start, stop, dtype=torch.long)
    if m == 0:
        return torch.zeros((len(idx), 0), dtype=torch.long)
    return torch.stack([(idx // a ** (m - 1 - p)) % a for p in range(m)], 1)


def _check_exact(
    source: ExactOutputs,
    reference: Reference,
    *,
    values: Sequence[Any],
    max_n: int,
    min_n: int,
    reference_name: str,
    batch: int,
    tolerance: float | None,
    sample: int,
    sample_max_n: int | None,
    seed: int,
    threshold: float | Fraction | None,
    shard: tuple[int, int, int] | None,
) -> SequenceReport:
    """:func:`check_sequence` for an :class:`ExactOutputs`: the same enumeration, rows, listed
    positions and histograms, every verdict decided in exact arithmetic (:func:`exact_judge`)."""

    k = len(values)
    if k:
        _check_kind(k, k, tolerance, threshold)
    elif tolerance is not None or threshold is not None:
        raise ValueError("an output compared as a value (no values) has no tolerance or threshold")
    if min_n < 0 or sample < 0 or (sample and (sample_max_n is None or sample_max_n <= max_n)):
        raise ValueError(
            f"min_n={min_n}, sample={sample}, sample_max_n={sample_max_n}: min_n >= 0, and sample "
            f"words per length beyond max_n={max_n} need sample > 0 and sample_max_n > max_n"
        )
    theta = None if threshold is None else Fraction(threshold)
    alphabet = list(source.alphabet)
    a = len(alphabet)
    report = SequenceReport(
        source.name,
        reference_name,
        max_n,
        tuple(values),
        kind="next-set" if theta is not None else "" if k else "value",
    )

    def check_batch(digits_: Any, m: int, row: SequenceRow) -> None:
        words = [tuple(alphabet[s] for s in w) for w in digits_.tolist()]
        outs = source(words)
        margins: list[float] = []
        wrong_margins: list[float] = []
        for word, out in zip(words, outs, strict=True):
            expected = list(reference(word))
            if len(expected) != len(out):
                raise ValueError(
                    f"the reference gives {len(expected)} outputs for the word "
                    f"{' '.join(word)!r}; {source.name} has {len(out)} positions there"
                )
            row.words += 1
            bad = False
            for p, e in enumerate(expected):
                if e is None:
                    continue
                row.positions += 1
                if theta is not None:
                    e = tuple(sorted({str(x) for x in e}))
                got, margin = exact_judge(out[p], e, values, theta, tolerance)
                right = got is not None and (
                    (got == e) if theta is not None or not k else same_value(got, e)
                )
                if got is not None and not row.sampled and k:
                    margins.append(margin)
                    if not right:
                        wrong_margins.append(margin)
                if right:
                    row.correct += 1
                    continue
                verdict = PositionVerdict(word, p, e, got, margin, row.sampled)
                if got is None:
                    row.undecided += 1
                else:
                    row.wrong += 1
                    bad = True
                    if row.sampled and report.sampled_wrong is None:
                        report.sampled_wrong = verdict
                    elif not row.sampled and report.shortest_wrong is None:
                        report.shortest_wrong = verdict
                report.listed.append(verdict)
            row.wrong_words += bad
        for ms, hist in ((margins, report.margins), (wrong_margins, report.wrong_margins)):
            for x in ms:
                if x > 0:
                    dec = math.floor(math.log10(x))
                    hist[dec] = hist.get(dec, 0) + 1

    return _enumerate(
        report, check_batch, a, min_n, max_n, shard, batch, sample, sample_max_n, seed
    )


def slow_outputs(
    net: Network,
    columns: Sequence[Network] | None,
    lin: Affine,
    word: tuple[str, ...],
    t: int,
    digits: int,
    theta: Fraction | None,
) -> tuple[list[float], list[float], list[float]]:
    """The outputs at token ``t`` of ``word``, in the order of the batched enclosure's (``lin``
    over the last residual stream; with ``columns``, each column's readout, then for a
    categorical output every column minus every other), by the rigorous interval interpreter
    at ``digits`` digits: lower bounds (rounded down to floats), upper bounds (rounded up) and
    midpoints. The readout is moved to token ``t`` (the blocks after the last attention are
    computed only where the readout reads)."""
    import dataclasses
    import math

    from netproof.symbolic import interval

    ar = interval.IntervalArithmetic(digits)

    def outputs(n: Network, f: Affine) -> list[Any]:
        ro = n.readout
        assert isinstance(ro, Classifier)
        moved = dataclasses.replace(n, readout=dataclasses.replace(ro, position=t))
        state = interval.run(moved, word, digits=digits).states[-1]
        x = dict(zip(n.dims, state.rows[t], strict=True))
        out = []
        for ws, b in zip(f.weights, f.bias, strict=True):
            acc = ar.const(b)
            for name, w in zip(f.inputs, ws, strict=True):
                if w:
                    acc = ar.add(acc, ar.mul(ar.const(w), x[name]))
            out.append(acc)
        return out

    if columns is None:
        ys = outputs(net, lin)
    else:
        cols = []
        for c in columns:
            ro = c.readout
            assert isinstance(ro, Classifier)
            f = ro.logit
            if theta is not None:
                f = dataclasses.replace(f, bias=tuple(b - theta for b in f.bias))
            cols += outputs(c, f)
        k = len(cols)
        ys = (
            cols
            if theta is not None or len(lin.outputs) == 1
            else [ar.sub(cols[i], cols[j]) for i in range(k) for j in range(k) if i != j]
        )
    lo = [math.nextafter(float(y.a), -math.inf) for y in ys]
    hi = [math.nextafter(float(y.b), math.inf) for y in ys]
    return lo, hi, [float(y.mid) for y in ys]


def merge_sequence_reports(parts: Sequence[SequenceReport]) -> SequenceReport:
    """One report from the reports of shards (:func:`check_sequence` with ``shard``), given in
    shortlex order of their words: the rows added up per length, the listed positions joined in
    that order (so the first wrong one is the shortest of all), the histograms added up."""
    if not parts:
        raise ValueError("merge_sequence_reports needs at least one part")
    first = parts[0]
    out = SequenceReport(
        first.network,
        first.reference,
        max(p.max_n for p in parts),
        first.values,
        kind=first.kind,
        float32=first.float32,
    )
    rows: dict[tuple[bool, int], SequenceRow] = {}
    for part in parts:
        for r in part.rows:
            into = rows.setdefault((r.sampled, r.length), SequenceRow(r.length, sampled=r.sampled))
            for key in ROW_COUNTS:
                setattr(into, key, getattr(into, key) + getattr(r, key))
        out.listed += part.listed
        if out.shortest_wrong is None:
            out.shortest_wrong = part.shortest_wrong
        if out.sampled_wrong is None:
            out.sampled_wrong = part.sampled_wrong
        for hist, into_hist in (
            (part.margins, out.margins),
            (part.wrong_margins, out.wrong_margins),
        ):
            for e, c in hist.items():
                into_hist[e] = into_hist.get(e, 0) + c
    out.rows = [rows[key] for key in sorted(rows)]
    return out


def _column_scores(
    columns: Sequence[Network],
    encs: Sequence[Enclosure],
    tokens: Any,
    n_tokens: int,
    at: slice,
    theta: Fraction | None,
    tolerance: float | None,
) -> MR:
    """The enclosures of every column's readout at the positions ``at`` (each column minus
    ``theta``, exactly, for a next-set output), or, for a categorical output, every column minus
    every other in :func:`_differences`'s order, from the columns' enclosures apart."""
    import torch

    ms, rs = [], []
    for net, enc in zip(columns, encs, strict=True):
        ro = net.readout
        assert isinstance(ro, Classifier)
        lin = ro.logit
        if theta is not None:
            lin = Affine(
                inputs=lin.inputs,
                outputs=lin.outputs,
                weights=lin.weights,
                bias=tuple(b - theta for b in lin.bias),
            )
        x = enc.residual(tokens, n_tokens)
        y = enc.affine(lin, MR(x.m[:, at, :], x.r[:, at, :]), enc.index)
        ms.append(y.m[..., 0])
        rs.append(y.r[..., 0])
    m, r = torch.stack(ms, -1), torch.stack(rs, -1)
    if theta is not None or tolerance is not None:
        return MR(m, r)
    k = m.shape[-1]
    dm, dr = [], []
    for i in range(k):
        for j in range(k):
            if i != j:
                diff = m[..., i] - m[..., j]
                # the float difference's rounding (half an ulp) added to the radius, rounded up
                err = diff.abs() * 2.0**-52 + 2.0**-1074
                dm.append(diff)
                dr.append((r[..., i] + r[..., j] + err) * (1 + 2.0**-50))
    return MR(torch.stack(dm, -1), torch.stack(dr, -1))


def import_columns(
    model: Any,
    *,
    alphabet: Sequence[str],
    vocab: Sequence[str] | None = None,
    prefix: Sequence[str] = (),
    suffix: Sequence[str] = (),
    max_len: int = 16,
    compare: bool = True,
    samples: int = 32,
    budget: int = 256,
    name: str | None = None,
) -> tuple[list[Network], float | None]:
    """A model whose forward returns ``[batch, length, vocabulary]`` (an ``nn.Module``), read
    per position: one network per output column (the structural importer, column ``c`` at the
    last position as its readout; the layers are the same at every position). With ``compare``
    the gate checks every column at every position of every word up to the longest length with
    at most ``budget`` words, and ``samples`` random longer ones, against the model's own float64
    run (:func:`gate_positions`); an :class:`UnfaithfulImportError` refuses the import. Returns
    the networks and the largest gap (None without ``compare``)."""
    import copy
    import itertools
    import random

    import torch

    from netproof.symbolic.importers import ImporterError

    from .imported import import_torch

    class Column(torch.nn.Module):  # output c at the last position, one logit per word
        def __init__(self, c: int) -> None:
            super().__init__()
            self.model, self.c = model, c

        def forward(self, ids: Any) -> Any:
            return self.model(ids)[:, -1, self.c]

    vocab = tuple(vocab if vocab is not None else alphabet)
    index = {t: i for i, t in enumerate(vocab)}
    model.eval()
    probe = [index[t] for t in (*prefix, alphabet[0], *suffix)]
    with torch.no_grad():
        y = model(torch.tensor([probe]))
    if getattr(y, "dim", lambda: 0)() != 3 or y.shape[1] != len(probe):
        raise ImporterError(
            f"the model returns {tuple(getattr(y, 'shape', ()))} for one word of "
            f"{len(probe)} tokens; a per-position output is [batch, length, vocabulary]"
        )
    label = name or type(model).__name__
    columns = [
        import_torch(
            Column(c).eval(),
            alphabet=alphabet,
            vocab=vocab,
            prefix=prefix,
            suffix=suffix,
            max_len=max_len,
            compare=False,
            name=f"{label}[{c}]",
        ).net
        for c in range(int(y.shape[2]))
    ]
    if not compare:
        return columns, None
    words: list[tuple[str, ...]] = []
    for m in range(1, max_len + 1):
        if len(words) + len(alphabet) ** m > budget:
            break
        words += list(itertools.product(alphabet, repeat=m))
    rng = random.Random(0)
    words += [
        tuple(rng.choice(alphabet) for _ in range(rng.randint(1, max_len))) for _ in range(samples)
    ]
    model64 = copy.deepcopy(model).double().eval()
    n = max(len(w) for w in words) + len(prefix) + len(suffix)
    logits = torch.full((len(words), n, len(columns)), float("nan"), dtype=torch.float64)
    by_len: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_len.setdefault(len(w), []).append(i)
    with torch.no_grad():
        for idx in by_len.values():
            ids = torch.tensor([[index[t] for t in (*prefix, *words[i], *suffix)] for i in idx])
            logits[idx, : ids.shape[1]] = model64(ids)
    worst = 0.0
    for c, net in enumerate(columns):
        ro = net.readout
        assert isinstance(ro, Classifier)
        worst = max(
            worst,
            gate_positions(
                net,
                [ro.logit.weights[0]],
                [ro.logit.bias[0]],
                words,
                logits[..., c : c + 1],
                float(torch.finfo(torch.float64).eps),
            ),
        )
    return columns, worst


def gate_positions(
    net: Network,
    unembed: Sequence[Sequence[Fraction]],
    bias: Sequence[Fraction],
    words: Sequence[tuple[str, ...]],
    logits: Any,
    eps: float,
) -> float:
    """The faithfulness gate at every position and output: each recorded float logit
    (``logits[i, p, c]`` of ``words[i]``, NaN past the word) lies within ``√eps·(1 + |y|)`` of
    the imported network's enclosure, or an :class:`UnfaithfulImportError` names the first word,
    position and output that does not; the largest gap otherwise."""
    import torch

    from .faithful import UnfaithfulImportError

    emb, ro = net.embedding, net.readout
    assert isinstance(emb, TokenEmbedding) and isinstance(ro, Classifier)
    enc = Enclosure(net)
    k = len(unembed)
    lin = Affine(
        inputs=ro.logit.inputs,
        outputs=tuple(f"out_{c}" for c in range(k)),
        weights=tuple(tuple(col) for col in unembed),
        bias=tuple(bias),
    )
    pre = [enc.token_index[t] for t in emb.prefix]
    suf = [enc.token_index[t] for t in emb.suffix]
    by_len: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_len.setdefault(len(w), []).append(i)
    tol, worst = eps**0.5, 0.0
    for m, idx in sorted(by_len.items()):
        n = len(pre) + m + len(suf)
        tokens = torch.tensor(
            [pre + [enc.token_index[a] for a in words[i]] + suf for i in idx], dtype=torch.long
        )
        with torch.no_grad():
            y = enc.affine(lin, enc.residual(tokens, n), enc.index)
        lo, hi = y.m - y.r, y.m + y.r
        got = torch.as_tensor(logits, dtype=torch.float64)[idx][:, :n, :]
        gap = torch.clamp(torch.maximum(lo - got, got - hi), min=0.0)
        bad = gap > tol * (1 + got.abs())
        if bool(bad.any()):
            b, p, c = (int(v) for v in torch.nonzero(bad)[0])
            raise UnfaithfulImportError(
                f"the imported network is not the model: on the word "
                f"{' '.join(words[idx[b]])!r} at position {p}, output {c}, the model's recorded "
                f"run gives {float(got[b, p, c]):.10g} and the imported network "
                f"[{float(lo[b, p, c]):.10g}, {float(hi[b, p, c]):.10g}]; the mapping of the "
                "model is wrong (a convention of the import), please report it"
            )
        worst = max(worst, float(gap.max()))
    return worst


class RecordedRun:
    """A dump's recorded run as the plain float run of :func:`check_sequence`'s ``float32``:
    called with words of one length, it gives their recorded outputs at the word positions
    (``[words, length, outputs]``). :attr:`max_n` is the longest length whose every word is
    recorded (a word not recorded is a KeyError)."""

    def __init__(self, words: Sequence[tuple[str, ...]], logits: Any, skip: int, a: int) -> None:
        import torch

        self.logits = torch.as_tensor(logits, dtype=torch.float64)
        self.row = {w: i for i, w in enumerate(words)}
        self.skip = skip
        by_len: dict[int, int] = {}
        for w in self.row:
            by_len[len(w)] = by_len.get(len(w), 0) + 1
        self.max_n = 0
        while by_len.get(self.max_n + 1, 0) == a ** (self.max_n + 1):
            self.max_n += 1

    def __call__(self, words: list[tuple[str, ...]]) -> Any:
        m = len(words[0]) if words else 0
        return self.logits[[self.row[w] for w in words], self.skip : self.skip + m, :]


def recorded_run(path: str | Path) -> tuple[RecordedRun, str] | None:
    """A dump's recorded run (its source model's own outputs at every position, e.g. tracr's
    float32 run) as :func:`check_sequence`'s ``float32``, with its name; None where the dump
    records no per-position outputs."""
    import torch

    dump = torch.load(str(path), map_location="cpu", weights_only=True)
    rec = dump.get("recorded") or {}
    if "logits" not in rec:
        return None
    source = str(rec.get("source", "the dump's source model")).split(";")[0]
    alphabet = dump.get("alphabet") or [
        t for t in dump["vocab"] if t not in (*dump.get("prefix", ()), *dump.get("suffix", ()))
    ]
    run = RecordedRun(
        [tuple(w.split()) for w in rec["words"]],
        rec["logits"],
        len(dump.get("prefix", ())),
        len(alphabet),
    )
    return run, f"{source}, recorded"


def load_sequence_dump(path: str | Path, *, compare: bool = True) -> tuple[Any, dict[str, Any]]:
    """A dump with per-position outputs (``examples/tracr_dump.py``): the imported model (gated
    on its recording) and the keyword arguments of :func:`check_sequence` (``unembed``,
    ``values``, ``max_n``, ``reference``: the recorded expected outputs, BOS dropped, or None
    where the dump records none; ``threshold`` for a ``next-set`` output)."""
    import torch

    from netproof.symbolic.importers import ImporterError
    from netproof.symbolic.importers.torch_module import exact

    from .imported import import_file

    dump = torch.load(str(path), map_location="cpu", weights_only=True)
    outs = dump.get("outputs")
    if not outs or outs.get("kind") not in ("categorical", "numerical", "next-set"):
        raise ImporterError(
            f"{str(path)!r} has no categorical per-position outputs (its 'outputs' is "
            f"{outs!r}); check it as a recognizer (--language) instead"
        )
    max_n = int(dump["cfg"]["n_ctx"]) - len(dump.get("prefix", ())) - len(dump.get("suffix", ()))
    imported = import_file(path, max_len=max_n, compare=compare)
    W_U, b_U = dump["state_dict"]["unembed.W_U"], dump["state_dict"]["unembed.b_U"]
    unembed = [tuple(exact(W_U[:, c])) for c in range(W_U.shape[1])]
    rec = dump.get("recorded") or {}
    if compare and "logits" in rec:  # the gate at every position and output, not one logit
        eps = float(torch.finfo(getattr(torch, str(rec.get("dtype", "float32")))).eps)
        worst = gate_positions(
            imported.net,
            unembed,
            list(exact(b_U)),
            [tuple(w.split()) for w in rec["words"]],
            rec["logits"],
            eps,
        )
        if imported.faith is not None:
            imported.faith.gaps["every output at every position"] = worst
            imported.faith.tolerances["every output at every position"] = eps**0.5
    extra: dict[str, Any] = (
        {"threshold": float(outs.get("threshold", 0.0))} if outs["kind"] == "next-set" else {}
    )
    if "expected" not in rec:  # no recorded program: the caller gives the reference
        return imported, {
            **extra,
            "unembed": unembed,
            "bias": list(exact(b_U)),
            "values": list(outs["values"]),
            "max_n": max_n,
            "reference": None,
            "reference_name": "",
        }
    skip = int(outs.get("positions", 0))
    table = {
        tuple(w.split()): list(e)[skip:]
        for w, e in zip(rec.get("words", []), rec.get("expected", []), strict=True)
    }
    return imported, {
        **extra,
        "unembed": unembed,
        "bias": list(exact(b_U)),
        "values": list(outs["values"]),
        "max_n": max(len(w) for w in table) if table else max_n,
        "reference": lambda w: table[tuple(w)],
        "reference_name": "the RASP program (rasp.evaluate, recorded in the dump)",
    }
