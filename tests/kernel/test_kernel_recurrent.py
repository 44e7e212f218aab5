"""The kernel's recurrent networks (``kernel/recurrent.py``): its step interpreter equal to
netproof's exact recurrent interpreter on every short word, its own next-symbol targets equal to
netproof's tasks, the committed ``PredictsNext`` records checked, forged records rejected, and
single-weight mutants of the three cells found wrong on a word where netproof's own exact
interpreter also predicts a wrong set."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.marnn_tasks import dyck_task, palindrome_task
from netproof.constructions.suzgun2019 import stack_rnn
from netproof.kernel import KernelError, Refused, check_record
from netproof.kernel.check import read_network
from netproof.kernel.recurrent import RNet, step, target
from netproof.symbolic import Affine, RecurrentNetwork
from netproof.symbolic.recurrent import Program
from netproof.symbolic.recurrent_ir import BabyNTM
from netproof.symbolic.recurrent_netfile import KINDS, MAPS, dumps

REPO = Path(__file__).resolve().parents[2]
CELLS = {  # construction -> (its S1 record with the exact network, params)
    "stack-rnn": ("stack-rnn/S1-next-sets.n6.json", {"task": "d2"}),
    "stack-lstm": ("stack-lstm/S1-next-sets.n6.json", {"task": "d2"}),
    "baby-ntm": ("baby-ntm/S1-next-sets.n6.json", {"task": "d2"}),
}


def _network(name: str, **params: str) -> RecurrentNetwork:
    c = REGISTRY[name]
    net = c.network(c.parse_params(params))
    assert isinstance(net, RecurrentNetwork)
    return net


def _kernel(net: RecurrentNetwork) -> RNet:
    got = read_network(dumps(net))
    assert isinstance(got, RNet)
    return got


def _trie(alphabet: tuple[str, ...], max_len: int) -> Iterator[tuple[str, ...]]:
    """Every word of 1..max_len symbols, each after its prefix (shortlex)."""
    for n in range(1, max_len + 1):
        yield from itertools.product(alphabet, repeat=n)


@pytest.mark.parametrize(
    ("name", "params", "max_len"),
    [
        ("stack-rnn", {"task": "d2"}, 4),
        ("stack-lstm", {"task": "d2"}, 4),
        ("baby-ntm", {"task": "d2"}, 4),
        ("baby-ntm", {"task": "palindrome", "slots": "6"}, 4),
        ("stack-rnn", {"task": "homomorphic-palindrome"}, 3),
    ],
)
def test_the_kernels_step_interpreter_gives_the_exact_interpreters_outputs_after_every_prefix(
    name: str, params: dict[str, str], max_len: int
) -> None:
    net = _network(name, **params)
    kernel, program = _kernel(net), Program(net)
    ours: dict[tuple[str, ...], Any] = {(): None}
    theirs: dict[tuple[str, ...], Any] = {(): program.start()}
    for w in _trie(net.alphabet, max_len):
        ours[w], y = step(kernel, ours[w[:-1]], w[-1])
        theirs[w], rec = program.step(theirs[w[:-1]], w[-1])
        assert y == {f"y:{s}": v for s, v in rec.y.items()}, (name, w)


def test_the_kernels_targets_are_the_tasks_next_sets_on_every_short_word() -> None:
    tasks = {
        "D2": dyck_task(2),
        "D3": dyck_task(3),
        "w#w^R": palindrome_task(hom=False),
        "w#φ(w^R)": palindrome_task(hom=True),
    }
    for name, task in tasks.items():
        for w in _trie(task.inputs, 5 if len(task.inputs) < 7 else 4):
            assert target(name, w) == task.next_sets(w)[-1], (name, w)


def _write(
    tmp_path: Path, net: RecurrentNetwork, fingerprint: str | None = None, name: str = "net"
) -> Path:
    """The network's recurrent network file; with ``fingerprint``, that one written in it (a
    tampered file keeps the fingerprint of the network it claims to be)."""
    doc = json.loads(dumps(net))
    doc["fingerprint"] = fingerprint or doc["fingerprint"]
    path = tmp_path / f"{name}.rnn.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _record(tmp_path: Path, source: str, max_len: int, **edit: object) -> Path:
    """A committed record cut to the words up to ``max_len`` (what netproof writes for that
    bound), with ``edit`` applied."""
    rec = json.loads((REPO / "proofs" / source).read_text(encoding="utf-8"))
    words = sum(len(rec_alphabet(rec)) ** n for n in range(1, max_len + 1))
    rec.update({"bound": {"min_len": 1, "max_len": max_len}, "checked": words, **edit})
    path = tmp_path / "record.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    return path


def rec_alphabet(rec: dict[str, Any]) -> tuple[str, ...]:
    return _network(rec["construction"], **rec["params"]).alphabet


@pytest.mark.parametrize("name", sorted(CELLS))
def test_a_committed_next_set_record_cut_to_length_3_is_checked(tmp_path: Path, name: str) -> None:
    source, params = CELLS[name]
    got = check_record(_record(tmp_path, source, 3), _write(tmp_path, _network(name, **params)))
    assert (got.outcome, got.kind) == ("checked", "PredictsNext"), got.detail
    assert got.detail == "proved: every predicted set is its target on all 84 words"


def test_a_forged_count_a_flipped_verdict_and_another_network_disagree(tmp_path: Path) -> None:
    source, params = CELLS["stack-lstm"]
    net = _write(tmp_path, _network("stack-lstm", **params))
    got = check_record(_record(tmp_path, source, 3, checked=85), net)
    assert got.outcome == "disagree" and "checked=85" in got.detail
    got = check_record(_record(tmp_path, source, 3, verdict="refuted", counterexample="(("), net)
    assert got.outcome == "disagree" and "every predicted set is its target" in got.detail
    got = check_record(
        _record(tmp_path, source, 3), _write(tmp_path, _network("stack-rnn", **params), name="rnn")
    )
    assert got.outcome == "disagree" and "the network file is" in got.detail
    other = json.loads(dumps(_network("stack-rnn", **params)))  # a Stack-RNN under its fingerprint
    other["fingerprint"] = json.loads(net.read_text(encoding="utf-8"))["fingerprint"]
    net.write_text(json.dumps(other), encoding="utf-8")
    got = check_record(_record(tmp_path, source, 3), net)
    assert got.outcome == "disagree" and "about a Stack-LSTM" in got.detail


def test_the_soft_network_a_float_and_a_softmax_decision_are_refused_or_malformed() -> None:
    with pytest.raises(Refused, match="tanh"):
        read_network(dumps(stack_rnn(task="d2", scale=6)))
    doc = json.loads(dumps(stack_rnn(task="d2")))
    doc["network"]["cell"]["maps"]["W_hh"]["bias"] = {"one": 0.5}
    with pytest.raises(KernelError, match=r"0\.5 is not a rational"):
        read_network(json.dumps(doc))
    doc = json.loads(dumps(stack_rnn(task="d2")))
    doc["network"]["cell"]["decision"] = {"type": "Softmax", "c": "6", "r": None}
    with pytest.raises(Refused, match="only hardmax"):
        read_network(json.dumps(doc))
    doc = json.loads(dumps(stack_rnn(task="d2")))
    doc["network"]["cell"]["maps"]["W_a"]["bias"] = {"PUSH": "1"}
    with pytest.raises(KernelError, match="W_a reads"):
        read_network(json.dumps(doc))


# ------------------------------------------------------------------ mutants


def _bumped(a: Affine) -> Iterator[Affine]:
    """``a`` with one nonzero weight or bias + 1, each."""
    for o, row in enumerate(a.weights):
        for i, w in enumerate(row):
            if w != 0:
                rows = [list(r) for r in a.weights]
                rows[o][i] = w + 1
                yield dataclasses.replace(a, weights=tuple(tuple(r) for r in rows))
    for o, b in enumerate(a.bias):
        if b != 0:
            yield dataclasses.replace(a, bias=tuple(b + (k == o) for k, b in enumerate(a.bias)))


def mutants(net: RecurrentNetwork) -> Iterator[RecurrentNetwork]:
    """Every single-weight mutant of ``net`` (+1 on a nonzero weight or bias of a cell map or the
    readout; for a Baby-NTM also on an entry of an op matrix among the first 3 slots)."""
    cell = net.cell
    for m in MAPS[KINDS[type(cell)]]:
        for a in _bumped(getattr(cell, m)):
            yield dataclasses.replace(net, cell=dataclasses.replace(cell, **{m: a}))
    for a in _bumped(net.readout.W_y):
        yield dataclasses.replace(net, readout=dataclasses.replace(net.readout, W_y=a))
    for k, op in enumerate(cell.ops if isinstance(cell, BabyNTM) else ()):
        for e, (i, j, v) in enumerate(op.entries):
            if max(i, j) < 3:
                entries = (*op.entries[:e], (i, j, v + 1), *op.entries[e + 1 :])
                ops = (*cell.ops[:k], dataclasses.replace(op, entries=entries), *cell.ops[k + 1 :])
                yield dataclasses.replace(net, cell=dataclasses.replace(cell, ops=ops))


def first_wrong(net: RecurrentNetwork, max_len: int) -> tuple[str, ...] | None:
    """The shortlex-first word up to ``max_len`` after which netproof's exact interpreter
    predicts another set than netproof's D2 task, or None."""
    program, task = Program(net), dyck_task(2)
    states: dict[tuple[str, ...], Any] = {(): program.start()}
    for w in _trie(net.alphabet, max_len):
        states[w], rec = program.step(states[w[:-1]], w[-1])
        if rec.predicted != task.next_sets(w)[-1]:
            return w
    return None


def _mutation_run(tmp_path: Path, name: str, every: int, max_len: int) -> tuple[int, int]:
    """Every ``every``-th mutant of the cell's D2 network against its record cut to
    ``max_len``: the kernel disagrees, naming the first word netproof's exact interpreter
    predicts wrongly, exactly when there is one; else it checks the record. Returns (mutants
    found wrong, mutants right on the bound)."""
    source, params = CELLS[name]
    net = _network(name, **params)
    fingerprint = json.loads(dumps(net))["fingerprint"]
    record = _record(tmp_path, source, max_len)
    wrong = right = 0
    for mutant in itertools.islice(mutants(net), 0, None, every):
        got = check_record(record, _write(tmp_path, mutant, fingerprint))
        w = first_wrong(mutant, max_len)
        if w is None:
            assert got.outcome == "checked", got.detail
            right += 1
        else:
            assert got.outcome == "disagree" and f"on {''.join(w)!r} the network" in got.detail
            wrong += 1
    return wrong, right


@pytest.mark.parametrize("name", sorted(CELLS))
def test_single_weight_mutants_that_change_a_prediction_make_the_kernel_disagree_on_that_word(
    tmp_path: Path, name: str
) -> None:
    wrong, right = _mutation_run(tmp_path, name, every=5, max_len=3)
    assert wrong > 0 and wrong + right > 5


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CELLS))
def test_every_single_weight_mutant_is_judged_as_netproofs_exact_interpreter_judges_it(
    tmp_path: Path, name: str
) -> None:
    wrong, right = _mutation_run(tmp_path, name, every=1, max_len=5)
    print(f"{name}: {wrong} mutants found wrong, {right} right on every word up to length 5")
    assert wrong > 0


def test_a_refutation_naming_the_first_wrong_word_is_checked_and_another_word_disagrees(
    tmp_path: Path,
) -> None:
    source, params = CELLS["baby-ntm"]
    net = _network("baby-ntm", **params)
    fingerprint = json.loads(dumps(net))["fingerprint"]
    mutant = next(m for m in mutants(net) if first_wrong(m, 3) is not None)
    w = "".join(first_wrong(mutant, 3) or ())
    path = _write(tmp_path, mutant, fingerprint)
    got = check_record(_record(tmp_path, source, 3, verdict="refuted", counterexample=w), path)
    assert got.outcome == "checked" and got.detail.startswith(f"refuted: on {w!r}")
    forged = w[:-1] + ("(" if w[-1] != "(" else "[")
    got = check_record(_record(tmp_path, source, 3, verdict="refuted", counterexample=forged), path)
    assert got.outcome == "disagree" and f"on {w!r}" in got.detail


@pytest.mark.slow
@pytest.mark.parametrize(
    "source",
    sorted(
        str(p.relative_to(REPO / "proofs"))
        for d in ("stack-rnn", "stack-lstm", "baby-ntm")
        for p in (REPO / "proofs" / d).glob("S[14]-next-sets.*.json")
    ),
)
def test_every_committed_next_set_record_is_checked_whole(tmp_path: Path, source: str) -> None:
    rec = json.loads((REPO / "proofs" / source).read_text(encoding="utf-8"))
    got = check_record(
        REPO / "proofs" / source, _write(tmp_path, _network(rec["construction"], **rec["params"]))
    )
    assert got.outcome == "checked", got.detail
    assert got.detail.endswith(f"on all {rec['checked']} words")


def test_recheck_kernel_and_export_hand_the_kernel_a_recurrent_network_file(
    tmp_path: Path,
) -> None:
    from netproof.verifier.campaign.kernelrun import KernelRun
    from netproof.verifier.cli import main

    source, _params = CELLS["stack-lstm"]
    record = _record(tmp_path, source, 2)
    got = KernelRun(REGISTRY, str(tmp_path)).check(str(record))
    assert (got.outcome, got.detail) == (
        "checked",
        "proved: every predicted set is its target on all 20 words",
    )
    out = tmp_path / "exported.json"
    assert main(["export", "stack-lstm", "--format", "json", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["format"] == "netproof-recurrent"
    assert check_record(record, out).outcome == "checked"
