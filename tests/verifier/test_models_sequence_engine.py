"""The per-position check's engine as ``check-model`` has it for recognizers: a plain float32
run's verdicts beside the rigorous ones, the margin histograms, the slow rigorous fallback for
a position the batched enclosure leaves open, and shards (``--jobs``) whose merged report is one
process's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from netproof.verifier.cli.app import main
from netproof.verifier.models import enclosure as enclosure_module
from netproof.verifier.models.sequence import (
    check_sequence,
    load_sequence_dump,
    merge_sequence_reports,
    recorded_run,
    slow_outputs,
)

pytestmark = pytest.mark.torch

TRACR = Path(__file__).parents[1] / "fixtures" / "models" / "tracr"


def _descending(w: tuple[str, ...]) -> list[object]:
    return sorted(w, reverse=True)


def _dump(name: str) -> tuple[Any, dict[str, Any]]:
    """A committed tracr dump, ungated, with tracr's recorded float32 run as ``float32``."""
    imported, kw = load_sequence_dump(TRACR / f"{name}.pt", compare=False)
    found = recorded_run(TRACR / f"{name}.pt")
    assert found is not None
    return imported, {**kw, "float32": found[0], "float32_name": found[1]}


def test_the_float32_column_counts_tracrs_own_wrong_positions_beside_the_rigorous_ones() -> None:
    imported, kw = _dump("sort")
    report = check_sequence(imported.net, **{**kw, "reference": _descending, "max_n": 3})
    t = report.totals
    assert report.float32.startswith("tracr's compiled model")
    assert (t.wrong, t.undecided) == (60, 0)  # margins near 1: float32 and rigorous agree
    assert (t.float32_wrong, t.float32_wrong_words, t.float32_differs) == (60, t.wrong_words, 0)
    right = check_sequence(imported.net, **{**kw, "max_n": 3}).totals
    assert (right.wrong, right.float32_wrong, right.float32_differs) == (0, 0, 0)


def test_a_float32_run_that_disagrees_is_counted_apart_from_the_rigorous_verdict() -> None:
    imported, kw = _dump("hist")
    run = kw["float32"]

    def flipped(words: list[tuple[str, ...]]) -> object:
        y = run(words).clone()
        if words and len(words[0]) == 2:
            y[0, 1] = -y[0, 1]  # the first word of length 2, at its position 1: argmax moved
        return y

    report = check_sequence(imported.net, **{**kw, "max_n": 2, "float32": flipped})
    t = report.totals
    assert (t.wrong, t.float32_wrong, t.float32_wrong_words, t.float32_differs) == (0, 1, 1, 1)
    assert [r.float32_wrong for r in report.rows] == [0, 1]


def test_the_margin_histograms_count_every_decided_position_and_the_wrong_ones_apart() -> None:
    imported, kw = _dump("sort")
    report = check_sequence(imported.net, **{**kw, "reference": _descending, "max_n": 3})
    t = report.totals
    assert sum(report.margins.values()) == t.correct + t.wrong == t.positions
    assert sum(report.wrong_margins.values()) == t.wrong
    doc = json.loads(report.to_json())
    assert sum(doc["margin_histogram"].values()) == t.positions
    low = min(v.margin for v in report.listed)
    assert f"1e{int(torch.floor(torch.log10(torch.tensor(low))))}" in doc["wrong_margin_histogram"]


def test_the_slow_interpreter_encloses_what_the_batched_enclosure_encloses() -> None:
    imported, kw = _dump("hist")
    net = imported.net
    from netproof.verifier.models.sequence import _differences

    lin = _differences(net.readout.logit.inputs, kw["unembed"], kw["bias"])  # type: ignore[union-attr]
    recorded = kw["float32"]([("a", "b", "a")])[0]  # tracr's own logits at the three positions
    for p in range(3):
        lo, hi, mid = slow_outputs(net, None, lin, ("a", "b", "a"), 1 + p, 30, None)
        k = recorded.shape[1]
        diffs = [
            float(recorded[p, i] - recorded[p, j]) for i in range(k) for j in range(k) if i != j
        ]
        assert all(a <= m <= b for a, m, b in zip(lo, mid, hi, strict=True))
        assert all(abs(m - d) < 1e-4 for m, d in zip(mid, diffs, strict=True))


def test_a_position_the_batched_enclosure_leaves_open_is_decided_by_the_slow_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    imported, kw = _dump("hist")
    kw = {**kw, "max_n": 2}
    plain = check_sequence(imported.net, **kw)
    affine = enclosure_module.Enclosure.affine

    def loose(self: object, *args: object, **kwargs: object) -> object:
        y = affine(self, *args, **kwargs)  # type: ignore[arg-type]
        return enclosure_module.MR(y.m, y.r + 1e6)  # every batched margin below 0

    monkeypatch.setattr(enclosure_module.Enclosure, "affine", loose)
    slow = check_sequence(imported.net, **kw)
    t, s = plain.totals, slow.totals
    assert (t.slow, s.slow) == (0, t.positions) and s.undecided == 0
    assert (s.correct, s.wrong) == (t.correct, t.wrong) == (t.positions, 0)
    without = check_sequence(imported.net, **{**kw, "slow": False}).totals
    assert (without.undecided, without.correct) == (t.positions, 0)


def test_shards_merged_in_shortlex_order_give_one_processs_report() -> None:
    imported, kw = _dump("sort")
    kw = {**kw, "reference": _descending, "max_n": 3}
    whole = check_sequence(imported.net, **kw)
    parts = [
        check_sequence(imported.net, **kw, shard=sh)
        for sh in [(1, 0, 3), (2, 0, 4), (2, 4, 9), (3, 0, 10), (3, 10, 27)]
    ]
    merged = merge_sequence_reports(parts)
    assert merged.to_json() == whole.to_json()
    assert merged.listed == whole.listed


def test_check_model_with_two_jobs_prints_the_report_of_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text("def descending(word):\n    return sorted(word, reverse=True)\n")
    argv = ["check-model", str(TRACR / "sort.pt"), "--reference", f"{ref}:descending"]
    argv += ["--max-n", "3", "--json", "--batch", "8", "--no-compare"]
    assert main([*argv, "--wrong", str(tmp_path / "one.jsonl")]) == 1
    one = capsys.readouterr().out
    assert main([*argv, "--jobs", "2", "--wrong", str(tmp_path / "two.jsonl")]) == 1
    assert capsys.readouterr().out == one
    assert (tmp_path / "two.jsonl").read_text() == (tmp_path / "one.jsonl").read_text()
    assert json.loads(one)["totals"]["wrong"] == 60


@pytest.mark.parametrize("name", ["sort", "frac_prevs"])
def test_the_enclosure_over_the_maps_nonzero_parts_holds_the_rigorous_value_at_every_position(
    name: str,
) -> None:
    imported, kw = _dump(name)
    net = imported.net
    from netproof.symbolic import interval
    from netproof.verifier.models.enclosure import MR, Enclosure
    from netproof.verifier.models.sequence import _differences

    enc = Enclosure(net)
    numeric = len(kw["values"]) == 1
    lin = (
        _differences(net.readout.logit.inputs, kw["unembed"], kw["bias"])  # type: ignore[union-attr]
        if not numeric
        else None
    )
    alphabet = net.alphabet
    word = tuple(alphabet[i % len(alphabet)] for i in range(3))
    tokens = torch.tensor([[enc.token_index[t] for t in ("BOS", *word)]])
    x = enc.residual(tokens, 4)
    assert any(c.part is not None for c in enc._linears.values())  # mostly-zero maps gathered
    exact = interval.run(net, word, digits=40).states[-1]
    for p in range(4):
        for d, (lo, hi) in enumerate(
            zip((x.m - x.r)[0, p].tolist(), (x.m + x.r)[0, p].tolist(), strict=True)
        ):
            v = exact.rows[p][d]
            assert lo <= v.a and v.b <= hi, (p, net.dims[d])
    if lin is not None:
        y = enc.affine(lin, MR(x.m[:, 1:], x.r[:, 1:]), enc.index)
        assert bool((y.r < 1e-6).all())


@pytest.mark.parametrize(("name", "max_n"), [("sort", 3), ("frac_prevs", 4), ("hist", 3)])
def test_the_positions_tallied_at_once_give_the_report_of_the_one_by_one_loop(
    name: str, max_n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from netproof.verifier.models import sequence

    imported, kw = _dump(name)
    numeric = len(kw["values"]) == 1
    wrong = {"reference": _descending} if name == "sort" else {}
    args = {**kw, **wrong, "max_n": max_n, "tolerance": 1e-3 if numeric else None}
    tallied = check_sequence(imported.net, **args)
    monkeypatch.setattr(sequence, "_tally_right", lambda *_a: (None, None, None))
    one_by_one = check_sequence(imported.net, **args)
    assert tallied.to_json() == one_by_one.to_json()
    assert tallied.listed == one_by_one.listed
    assert tallied.totals.positions > 0 and (name != "sort" or tallied.totals.wrong > 0)
