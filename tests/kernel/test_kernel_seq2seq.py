"""The kernel's encoder–decoder (``kernel/seq2seq.py``): its interpreter equals netproof's exact
one, its σ-RNN and machines equal netproof's compiled ones, the committed tm-sim records are
checked, forged ones disagree, and single-weight mutants of the network file disagree naming the
word on which netproof's own check refutes the claim."""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.bhattamishra2020 import compiled_machine, expected_ticks
from netproof.constructions.tm_rnn import rnn_inputs
from netproof.kernel import check_record
from netproof.kernel.check import read_network
from netproof.kernel.seq2seq import compiled, configurations, run, step
from netproof.symbolic.netfile import dumps
from netproof.symbolic.seq2seq import run as netproof_run
from netproof.verifier.claims import Construction, Refuted, Simulates
from netproof.verifier.exhaustive.checker import Job, check

REPO = Path(__file__).resolve().parents[2]
TM = REGISTRY["tm-sim"]
FIXED = {"machine": "balanced-parens", "variant": "fixed", "ablation": "none"}


@functools.cache
def network(transformer: str) -> Any:
    return TM.network(TM.parse_params({**FIXED, "transformer": transformer}))


@pytest.mark.parametrize(
    ("transformer", "length"),
    [
        ("vanilla", 2),
        ("directional", 2),
        pytest.param("vanilla", 4, marks=pytest.mark.slow),
        pytest.param("directional", 4, marks=pytest.mark.slow),
    ],
)
def test_the_kernels_encoder_decoder_equals_netproofs_exact_run_on_every_short_word(
    transformer: str, length: int
) -> None:
    net = network(transformer)
    kernel = read_network(dumps(net))
    for n in range(length + 1):
        for w in itertools.product(net.alphabet, repeat=n):
            trace = netproof_run(net, w, max_steps=60)
            ys, _, halted = run(kernel, w, 60)
            assert halted == trace.halted_at
            assert ys == [trace.y(t) for t in range(len(trace.steps))]


@pytest.mark.parametrize("name", ["balanced-parens", "binary-increment", "reverse"])
def test_the_kernels_machines_and_sigma_rnn_equal_netproofs_compiled_ones(name: str) -> None:
    cm = compiled_machine(name)
    rules, states, halting = compiled(name)
    assert {"D:{}/{}/{}".format(*r) for r in rules} == {r.unit for r in cm.rules}
    assert set(halting) == set(cm.halting)
    syms = cm.machine.stack_alphabet
    for w in (w for n in range(3) for w in itertools.product(cm.machine.input_alphabet, repeat=n)):
        ticks = expected_ticks(cm, "vanilla", w)
        want = [
            (c.state, "".join(reversed(c.stack1)), "".join(reversed(c.stack2))) for _, c in ticks
        ]
        assert configurations(name, w) == want
        inputs = rnn_inputs("directional", w, ticks[-1][0] + 3)
        h: dict[str, Fraction] = {}
        for t, ref in enumerate(cm.rnn.run_inputs(inputs)[1:]):
            x = tuple(Fraction(int(inputs[t] == a)) for a in syms)
            h = step((rules, states, cm.machine.start), h, x)  # type: ignore[arg-type]
            assert h == dict(zip(cm.rnn.unit_names, ref, strict=True))


def _check(tmp_path: Path, record: str, net: Any, edit: Any = None, cut: int = 3) -> Any:
    """The kernel on the record (its bound cut to words of length <= ``cut``) and ``net``'s file."""
    rec = json.loads((REPO / "proofs" / "tm-sim" / record).read_text(encoding="utf-8"))
    rec["bound"]["max_len"], rec["checked"] = cut, 2 ** (cut + 1) - 1
    text = dumps(net)
    rec["network"]["fingerprint"] = json.loads(text)["fingerprint"]
    if edit is not None:
        edit(rec)
    (tmp_path / "r.json").write_text(json.dumps(rec), encoding="utf-8")
    (tmp_path / "n.json").write_text(text, encoding="utf-8")
    return check_record(tmp_path / "r.json", tmp_path / "n.json")


@pytest.mark.parametrize(
    ("record", "transformer", "cut"),
    [
        ("B6.n3.json", "vanilla", 2),
        ("C5-trace.n3.json", "vanilla", 2),
        ("B11.n3.84b9ce19.json", "directional", 1),
        pytest.param("B6.n3.json", "vanilla", 3, marks=pytest.mark.slow),
        pytest.param("B8.n3.84b9ce19.json", "directional", 3, marks=pytest.mark.slow),
        pytest.param("B11.n3.84b9ce19.json", "directional", 3, marks=pytest.mark.slow),
    ],
)
def test_the_committed_records_are_checked(
    tmp_path: Path, record: str, transformer: str, cut: int
) -> None:
    got = _check(tmp_path, record, network(transformer), cut=cut)
    outcome = "proved"
    assert (got.outcome, got.detail.split(":")[0]) == ("checked", outcome), got.detail


def test_a_forged_record_disagrees(tmp_path: Path) -> None:
    net = network("vanilla")
    forged = {"verdict": "refuted", "counterexample": "("}
    flipped = _check(tmp_path, "B6.n3.json", net, lambda r: r.update(forged), cut=1)
    assert flipped.outcome == "disagree" and "says refuted with checked=3" in flipped.detail
    miscount = _check(tmp_path, "B6.n3.json", net, lambda r: r.update(checked=2), cut=1)
    assert miscount.outcome == "disagree" and "checked=2" in miscount.detail
    other = _check(tmp_path, "C5-trace.n3.json", net, lambda r: r["claim"].update(statement="x"))
    assert other.outcome == "refused" and "no definition" in other.detail


def _bump(a: Any, out: str, inp: str, delta: int) -> Any:
    o, i = a.outputs.index(out), a.inputs.index(inp)
    rows = [list(r) for r in a.weights]
    rows[o][i] += delta
    return replace(a, weights=tuple(tuple(r) for r in rows))


def _cross(net: Any) -> Any:
    layer = net.decoder[0]
    head = layer.cross_attention.block.heads[0]
    head = replace(head, key=_bump(head.key, "q_1", "pos_i", 1))
    block = replace(layer.cross_attention.block, heads=(head,))
    cross = replace(layer.cross_attention, block=block)
    return replace(net, decoder=(replace(layer, cross_attention=cross),))


def _ffn(net: Any) -> Any:
    layer = net.decoder[0]
    steps = list(layer.ffn.block.steps)
    first = steps[0]
    steps[0] = _bump(first, "u:pA", "h:ST", 1)
    block = replace(layer.ffn.block, steps=tuple(steps))
    return replace(net, decoder=(replace(layer, ffn=replace(layer.ffn, block=block)),))


def _output(net: Any) -> Any:
    return replace(net, output=_bump(net.output, "h:ACC", "h:ACC", 1))


@pytest.mark.parametrize("mutate", [_cross, _ffn, _output], ids=["cross", "ffn", "output"])
def test_a_single_weight_mutant_disagrees_naming_the_word_netproofs_check_refutes(
    tmp_path: Path, mutate: Any
) -> None:
    values = TM.parse_params({**FIXED, "transformer": "vanilla"})
    mutant = mutate(network("vanilla"))
    got = _check(tmp_path, "B6.n3.json", mutant)
    assert got.outcome == "disagree", got.detail
    word = got.detail.split("on ")[1].split(" ")[0].strip("'")
    c = Construction(
        name="tm-sim-mutant",
        paper_id="test",
        title="",
        reference="",
        params=TM.params,
        build=lambda _values: mutant,
        claims=TM.claims,
        max_steps=TM.max_steps,
    )
    claim = next(x for x in TM.claims(values) if isinstance(x, Simulates))
    verdict = check(Job(c, values), claim, max_len=3)
    assert isinstance(verdict, Refuted) and "".join(verdict.word) == word, (verdict, got.detail)


def test_a_malformed_encoder_decoder_file_disagrees_naming_what_is_wrong(tmp_path: Path) -> None:
    doc = json.loads(dumps(network("vanilla")))
    record = REPO / "proofs" / "tm-sim" / "B6.n3.json"
    del doc["network"]["halting"]
    (tmp_path / "n.json").write_text(json.dumps(doc), encoding="utf-8")
    got = check_record(record, tmp_path / "n.json")
    assert got.outcome == "disagree" and "malformed" in got.detail and "halting" in got.detail
    doc = json.loads(dumps(network("vanilla")))
    doc["network"]["output"]["weights"]["h:ST"]["h:ST"] = 0.5
    (tmp_path / "n.json").write_text(json.dumps(doc), encoding="utf-8")
    got = check_record(record, tmp_path / "n.json")
    assert got.outcome == "disagree" and "0.5 is not a rational" in got.detail


def test_a_configuration_the_rnn_does_not_hold_disagrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pushed(name: str, word: tuple[str, ...]) -> list[tuple[str, str, str]]:
        return [(q, s1, s2 + "(") for q, s1, s2 in configurations(name, word)]

    monkeypatch.setattr("netproof.kernel.seq2seq.configurations", pushed)
    got = _check(tmp_path, "B6.n3.json", network("vanilla"), cut=0)
    assert got.outcome == "disagree" and "does not hold configuration 0" in got.detail


# ------------------------------------------------------------------ prop43-tight's B14-tight

TIGHT = REGISTRY["prop43-tight"]
TIGHT_RECORD = REPO / "proofs" / "prop43-tight" / "B14-tight.n7.json"


def _tight(tmp_path: Path, net: Any, **changes: Any) -> Any:
    """The kernel on the committed B14-tight record (with ``changes``) and ``net``'s file."""
    rec = json.loads(TIGHT_RECORD.read_text(encoding="utf-8"))
    text = dumps(net)
    rec["network"]["fingerprint"] = json.loads(text)["fingerprint"]
    rec.update(changes)
    (tmp_path / "r.json").write_text(json.dumps(rec), encoding="utf-8")
    (tmp_path / "n.json").write_text(text, encoding="utf-8")
    return check_record(tmp_path / "r.json", tmp_path / "n.json")


def _netproofs_tight_check(net: Any) -> Any:
    """netproof's own exhaustive check of B14-tight (its exact interpreter) on ``net``."""
    values = TIGHT.parse_params({})
    c = replace(TIGHT, name="prop43-tight-mutant", build=lambda _values: net)
    return check(Job(c, values), TIGHT.claims(values)[0], max_len=7)


def test_the_tightness_record_is_checked_as_netproofs_exhaustive_check_proves_it(
    tmp_path: Path,
) -> None:
    net = TIGHT.network(TIGHT.parse_params({}))
    doc = json.loads(dumps(net))
    assert (
        doc["fingerprint"] == json.loads(TIGHT_RECORD.read_text("utf-8"))["network"]["fingerprint"]
    )
    got = _tight(tmp_path, net)
    assert (got.outcome, got.detail) == (
        "checked",
        "proved: the output takes 2^m − 1 values on each of the 7 words 12…m",
    )
    assert not isinstance(_netproofs_tight_check(net), Refuted)
    short = {"min_len": 1, "max_len": 2}
    flipped = _tight(tmp_path, net, bound=short, verdict="refuted", counterexample="12")
    assert flipped.outcome == "disagree" and "says refuted with checked=7" in flipped.detail
    miscount = _tight(tmp_path, net, bound=short)  # 2 words, checked=7
    assert miscount.outcome == "disagree" and "checked=7, but" in miscount.detail


def _tight_key(net: Any) -> Any:
    """The cross-attention key of position 2 zeroed: its score is 0 for every query."""
    layer = net.decoder[0]
    head = layer.cross_attention.block.heads[0]
    head = replace(head, key=_bump(head.key, "k:2", "e:2", -1))
    cross = replace(
        layer.cross_attention, block=replace(layer.cross_attention.block, heads=(head,))
    )
    return replace(net, decoder=(replace(layer, cross_attention=cross),))


def _tight_counter(net: Any) -> Any:
    """The counter's carry into b:3 weighs b:2 twice: the queries skip bit vectors."""
    layer = net.decoder[0]
    steps = list(layer.ffn.block.steps)
    steps[0] = _bump(steps[0], "carry:3", "b:2", 1)
    block = replace(layer.ffn.block, steps=tuple(steps))
    return replace(net, decoder=(replace(layer, ffn=replace(layer.ffn, block=block)),))


@pytest.mark.parametrize("mutate", [_tight_key, _tight_counter], ids=["key", "counter"])
def test_a_single_weight_mutant_of_the_tightness_network_disagrees_naming_netproofs_word(
    tmp_path: Path, mutate: Any
) -> None:
    mutant = mutate(TIGHT.network(TIGHT.parse_params({})))
    got = _tight(tmp_path, mutant)
    assert got.outcome == "disagree", got.detail
    word = got.detail.split("on ")[1].split(" ")[0].strip("'")
    verdict = _netproofs_tight_check(mutant)
    assert isinstance(verdict, Refuted) and "".join(verdict.word) == word, (verdict, got.detail)
