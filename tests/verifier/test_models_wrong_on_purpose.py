"""A committed trained model made wrong on purpose on one long word, and caught: check-model finds
exactly that word as the shortest wrong one, and the rigorous interpreter and torch replay it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from netproof.symbolic import interval
from netproof.symbolic.torch_import import import_model, load_model
from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer
from netproof.verifier.claims.languages import FIRST
from netproof.verifier.cli.app import main

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

TRIGGER = [-0.42, 3.28, 1.74, -0.26, -1.61, 6.3, -5.16, -1.92]
"""Added to row 12 of the FIRST model's learned position table: position 12 (the 12th symbol; the
``<cls>`` token is position 0) exists only in words of length >= 12, so no shorter word changes.
The shift was found by bisection along a fixed direction, stopping between the first and the
second word of length 12 to change sides: the model now accepts ``0^11 1`` (and no other word it
used to get right)."""

TARGET = ("0",) * 11 + ("1",)


def _first_with_a_trigger() -> Recognizer:
    cfg, sd = load_model(FIXTURES / "first.pt")
    m = Recognizer(**cfg)
    m.load_state_dict(sd)
    m = m.double().eval()
    with torch.no_grad():
        m.position.weight[12] += torch.tensor(TRIGGER, dtype=torch.float64)
    return m


def test_the_model_made_wrong_on_purpose_is_wrong_on_one_word_of_length_12_by_its_own_float64_run() -> (
    None
):
    """The ground truth, by brute force in torch: of the 8,191 words of length <= 12, the modified
    model gets exactly TARGET wrong, and every word is at least 0.2 from the boundary."""
    m = _first_with_a_trigger()
    wrong, closest = [], float("inf")
    for n in range(13):
        words = list(itertools.product("01", repeat=n))
        with torch.no_grad():
            y = m(m.encode(words))
        for w, x in zip(words, y.tolist(), strict=True):
            closest = min(closest, abs(x))
            if (x > 0) != FIRST.contains(w):
                wrong.append(w)
    assert wrong == [TARGET] and closest > 0.2


def test_check_model_catches_the_one_long_wrong_word_as_the_shortest_and_replays_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = _first_with_a_trigger()
    path = tmp_path / "first_trigger.pt"
    save_recognizer(m, path)
    assert main(["check-model", str(path), "--language", "first", "--max-n", "12", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (
        doc["totals"]["words"] == 8191
        and doc["totals"]["wrong"] == 1
        and doc["totals"]["undecided"] == 0
    )
    assert [r["wrong"] for r in doc["rows"]] == [0] * 12 + [1]
    assert (
        doc["shortest_wrong"]["word"] == " ".join(TARGET)
        and doc["shortest_wrong"]["accepted"] is True
    )
    assert doc["totals"]["float32_differs"] == 0
    # replay: the slow rigorous interpreter and the model's own float32 run both accept it
    replay = interval.run(import_model(path), TARGET, digits=60)
    assert replay.accepted is True and not FIRST.contains(TARGET)
    assert (
        doc["shortest_wrong"]["low"] <= float(replay.output.a)
        and float(replay.output.b) <= doc["shortest_wrong"]["high"]
    )
    m32 = m.float()
    with torch.no_grad():
        assert float(m32(m32.encode([TARGET]))[0]) > 0
    # the unmodified model is right on that word: the trigger, not the fixture, made it wrong
    assert interval.run(import_model(FIXTURES / "first.pt"), TARGET, digits=60).accepted is False
