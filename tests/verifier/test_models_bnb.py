"""Bounds over sets of words and branch and bound over the word trie (netproof.verifier.models
wordset and bnb): every bound holds every completion's value (enumeration on every committed
model), a bound made too tight is caught by that comparison, branch and bound gives plain
enumeration's report, and a network made wrong on purpose on one word of length 24 by a position
row is found with that word as the shortest wrong one."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from netproof.symbolic import (
    RELU,
    AttentionLayer,
    Head,
    Network,
    Sublayer,
    affine,
    constant,
    ffn,
    interval,
    token_embedding,
)
from netproof.symbolic import exact as exact_interp
from netproof.symbolic.ir import Classifier, Scale, Softmax
from netproof.symbolic.torch_import import import_model
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.cli.app import main
from netproof.verifier.models import check_model, compile_enclosure
from netproof.verifier.models import enclosure as enclosure_module
from netproof.verifier.models import wordset as wordset_module
from netproof.verifier.models.bnb import Membership, check_model_bnb
from netproof.verifier.models.wordset import WordSetBound

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

COMMITTED = {
    "first": (FIRST, 4),
    "parity": (PARITY, 4),
    "parity_gelu": (PARITY, 4),
    "parity_lstm": (PARITY, 5),
    "dyck12": (DYCK(1, 2), 5),
    "dyck22": (DYCK(2, 2), 3),
    "first_focused": (FIRST, 5),
}
"""Every committed model, its language and the length to which its bounds are compared with
enumeration (every prefix of every word of that length)."""


def _violations(
    net: object, alphabet: tuple[str, ...], n: int, value: object
) -> list[tuple[tuple[str, ...], tuple[str, ...], float, float]]:
    """Every (prefix, word, bound low, bound high) where the bound over the prefix's completions
    to length ``n`` provably misses the word's value; ``value(words)`` gives each word's value
    as an enclosure (low, high) or an exact Fraction."""
    ws = WordSetBound(compile_enclosure(net), alphabet)  # type: ignore[arg-type]
    words = list(itertools.product(range(len(alphabet)), repeat=n))
    values = value([tuple(alphabet[a] for a in w) for w in words])
    out = []
    for m in range(n + 1):
        prefixes = sorted({w[:m] for w in words})
        low, high = ws.bound(prefixes, n)
        at = {p: (float(low[i]), float(high[i])) for i, p in enumerate(prefixes)}
        for w, v in zip(words, values, strict=True):
            lo, hi = at[w[:m]]
            vlo, vhi = (v, v) if isinstance(v, Fraction) else v
            if not (Fraction(lo) <= Fraction(vhi) and Fraction(vlo) <= Fraction(hi)):
                out.append(
                    (tuple(alphabet[a] for a in w[:m]), tuple(alphabet[a] for a in w), lo, hi)
                )
    return out


def _per_word(net: object) -> object:
    """The batched per-word enclosure of each word (it holds the exact value: test_models_check)."""
    enc = compile_enclosure(net)  # type: ignore[arg-type]

    def run(words: list[tuple[str, ...]]) -> list[tuple[float, float]]:
        pre = [enc.token_index[t] for t in getattr(net.embedding, "prefix", ())]  # type: ignore[attr-defined]
        tokens = torch.tensor([[*pre, *(enc.token_index[a] for a in w)] for w in words])
        y = enc.logits(tokens.reshape(len(words), -1), tokens.shape[1] if words else 0)
        return [(float(a - b), float(a + b)) for a, b in zip(y.m, y.r, strict=True)]

    return run


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_the_bound_over_every_completion_holds_each_word_s_value_on_every_committed_model(
    name: str,
) -> None:
    lang, n = COMMITTED[name]
    net = import_model(FIXTURES / f"{name}.pt")
    assert _violations(net, lang.alphabet, n, _per_word(net)) == []


def _linear() -> Network:
    """logit = x − 2 at the last token, x = 1 on `a` and 3 on `b`: the bound over a free last
    position is [−1, 1], attained by `a` and `b`, with exact arithmetic everywhere."""
    return Network(
        name="linear",
        dims=("x",),
        embedding=token_embedding(("a", "b"), {"a": {"x": 1}, "b": {"x": 3}}),
        layers=(),
        readout=Classifier(logit=affine({"logit": {"x": 1}}, bias={"logit": -2}), position=-1),
    )


def _exact_values(net: Network) -> object:
    return lambda words: [exact_interp.run(net, w).output for w in words]


def test_the_bound_of_a_linear_network_is_attained_and_holds() -> None:
    net = _linear()
    ws = WordSetBound(compile_enclosure(net), ("a", "b"))
    low, high = ws.bound([("a",)[:0]], 1)
    assert -1.0 - 1e-12 < float(low[0]) <= -1.0 and 1.0 <= float(high[0]) < 1.0 + 1e-12
    assert _violations(net, ("a", "b"), 3, _exact_values(net)) == []


def test_an_outward_rounding_made_inward_is_caught_by_enumeration_with_a_word_the_exact_interpreter_reproduces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant: every radius rounded inward (the enclosure's a-priori growth factor below 1)."""
    U = enclosure_module.U

    def inward(r: object, k: int) -> object:
        return r.mul_(1.0 - 4.0 * (k + 4) * U)  # type: ignore[attr-defined]

    monkeypatch.setattr(enclosure_module, "_grow", inward)
    net = _linear()
    bad = _violations(net, ("a", "b"), 2, _exact_values(net))
    assert bad
    prefix, word, lo, hi = bad[0]
    v = exact_interp.run(net, word).output
    assert word[: len(prefix)] == prefix and not (Fraction(lo) <= v <= Fraction(hi))


@pytest.mark.parametrize(
    ("mutant", "caught"), [("radius", ["a", "b"]), ("low", ["a"]), ("high", ["b"])]
)
def test_a_free_position_s_hull_one_ulp_too_tight_is_caught_against_the_alphabet_s_rows(
    monkeypatch: pytest.MonkeyPatch, mutant: str, caught: list[str]
) -> None:
    """The hull row (a free position's input) is compared with every symbol's row: its ends are
    attained by symbols, so a radius one ulp smaller, or a midpoint one ulp off (one end one
    ulp inward), misses a symbol. The unmutated hull holds every row on every committed model."""

    def rows_outside(enc: object, alphabet: tuple[str, ...]) -> list[str]:
        ws = WordSetBound(enc, alphabet)  # type: ignore[arg-type]
        e = ws.enclosure
        if hasattr(e, "drive"):
            t, rows = e.drive, [e.drive_exact[a] for a in alphabet]
        else:
            t = e.table
            table = {tok: dict(r) for tok, r in e.net.embedding.table}
            rows = [[table[a].get(d, Fraction(0)) for d in e.dims] for a in alphabet]
        out = []
        for a, row in zip(alphabet, rows, strict=True):
            for d, q in enumerate(row):
                m, r = Fraction(float(t.m[ws.free, d])), Fraction(float(t.r[ws.free, d]))
                if not m - r <= q <= m + r:
                    out.append(a)
                    break
        return out

    for name, (lang, _n) in COMMITTED.items():
        enc = compile_enclosure(import_model(FIXTURES / f"{name}.pt"))
        assert rows_outside(enc, lang.alphabet) == [], name
    hull = wordset_module._hull

    def shrunk(torch_: object, rows: object) -> object:
        h = hull(torch_, rows)  # type: ignore[arg-type]
        inf = torch.tensor(float("inf"), dtype=torch.float64)
        if mutant == "radius":
            return enclosure_module.MR(h.m, torch.nextafter(h.r, -inf))
        return enclosure_module.MR(torch.nextafter(h.m, inf if mutant == "low" else -inf), h.r)

    monkeypatch.setattr(wordset_module, "_hull", shrunk)
    enc = compile_enclosure(_linear())
    assert rows_outside(enc, ("a", "b")) == caught


# ------------------------------------------------------------------ branch and bound


def test_membership_is_constant_exactly_where_enumeration_says_so() -> None:
    """For Dyck(2, 2) (its DFA and its stack automaton), FIRST and PARITY: reach(state, r)
    equals (some completion is a member, some is not) by enumeration, r <= 4."""
    from dataclasses import replace

    d22 = DYCK(2, 2)
    for lang in (d22, replace(d22, automaton=None), FIRST, PARITY):
        mem = Membership(lang)
        k = len(lang.alphabet)
        for n in range(5):
            for p in itertools.product(range(k), repeat=n):
                state = mem.start
                for a in p:
                    state = mem.step(state, a)
                for r in range(5):
                    got = [
                        lang.contains(tuple(lang.alphabet[a] for a in (*p, *s)))
                        for s in itertools.product(range(k), repeat=r)
                    ]
                    assert mem.reach(state, r) == (any(got), not all(got)), (lang.name, p, r)


def _same(a: object, b: object) -> None:
    da, db = json.loads(a.to_json()), json.loads(b.to_json())  # type: ignore[attr-defined]
    db.pop("search")
    for d in (da, db):
        d.pop("margin_histogram")
        d.pop("wrong_margin_histogram")
    assert da == db


@pytest.mark.parametrize(
    ("name", "n", "leaf"),
    [
        ("first", 7, 2),
        ("parity", 6, 2),
        ("parity_gelu", 5, 2),
        ("first_focused", 8, 2),
        ("parity_lstm", 7, 4),
        ("dyck12", 9, 2),
        ("dyck22", 4, 16),
    ],
)
def test_branch_and_bound_gives_plain_enumeration_s_report_on_the_committed_models(
    name: str, n: int, leaf: int
) -> None:
    lang = COMMITTED[name][0]
    net = import_model(FIXTURES / f"{name}.pt")
    plain = check_model(net, lang, max_n=n)
    bnb = check_model_bnb(net, lang, max_n=n, leaf=leaf)
    _same(plain, bnb)
    assert bnb.search is not None
    assert bnb.search["settled"] + bnb.search["enumerated"] == plain.totals.words  # type: ignore[operator]
    if name == "dyck12":  # read at <cls> under a causal mask: one logit for every word
        assert bnb.search["settled"] > 0.9 * plain.totals.words  # type: ignore[operator]


TRIGGER = Fraction(7, 4)
"""Added to dim ``one`` by the position row of position 24 (``I[i=24]``): the counting head's
share of 1s becomes (#1 + 7/4)/(n + 1) on words of length >= 24, above the trap's threshold
101/100 only at 1^24 (99.0 % + 7 % = 103 %; the next words, with one 0, reach 99.0 %): the
position-table trigger, on a network whose bounds are tight."""


TRIGGER_14 = (14, Fraction(7, 4))
"""The same trigger at position 14: (14 + 7/4)/15 > 101/100 > (13 + 7/4)/15."""


def _first_with_a_trigger(trigger: Fraction | tuple[int, Fraction] | None = TRIGGER) -> Network:
    """FIRST by softmax attention (one head reads position 1 with scale 40), a uniform head
    measuring the share of 1s, and a ReLU trap above a share of 101/100, which no word reaches;
    the trigger (a position-24 row) makes the network wrong on exactly one word of length 24."""
    first = Head(
        name="first",
        query=constant({"q": 1}),
        key=affine({"q": {"p1": 1}}),
        value=affine({"f": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
        scale=Scale(coef=Fraction(40)),
    )
    mean = Head(
        name="mean",
        query=constant({"z": 0}),
        key=constant({"z": 0}),
        value=affine({"share": {"one": 1}}),
        normalizer=Softmax(c=Fraction(1)),
    )
    positional: dict[str, str | tuple[str, Fraction]] = {"p1": "I[i=1]"}
    if trigger is not None:
        at, shift = trigger if isinstance(trigger, tuple) else (24, trigger)
        positional["one"] = (f"I[i={at}]", shift)
    return Network(
        name="first_with_trigger",
        dims=("one", "p1", "f", "share", "trap"),
        embedding=token_embedding(
            ("0", "1"),
            {"0": {}, "1": {"one": 1}, "<cls>": {}},
            prefix=("<cls>",),
            positional=positional,
        ),
        layers=(
            Sublayer(block=AttentionLayer(name="read", heads=(first, mean))),
            Sublayer(
                block=ffn(
                    "trap",
                    affine({"u": {"share": 1}}, bias={"u": "-101/100"}),
                    RELU,
                    affine({"trap": {"u": 1000}}),
                )
            ),
        ),
        readout=Classifier(logit=affine({"logit": {"f": 1, "trap": -1}}, bias={"logit": "-1/2"})),
    )


def test_branch_and_bound_finds_the_one_wrong_word_of_length_24_as_the_shortest() -> None:
    net = _first_with_a_trigger()
    report = check_model_bnb(net, FIRST, max_n=24)
    target = ("1",) * 24
    assert report.status == "wrong" and report.totals.wrong == 1
    assert report.totals.words == 2**25 - 1 and report.totals.undecided == 0
    assert report.shortest_wrong is not None and report.shortest_wrong.word == target
    assert [r.wrong for r in report.rows] == [0] * 24 + [1]
    assert report.search is not None
    assert report.search["settled"] > 0.9999 * report.totals.words  # type: ignore[operator]
    # the rigorous interpreter replays it: the network rejects a member
    replay = interval.run(net, target, digits=40)
    assert replay.accepted is False and FIRST.contains(target)
    # and the network without the trigger is correct on every word to length 24
    clean = check_model_bnb(_first_with_a_trigger(None), FIRST, max_n=24)
    assert clean.status == "correct" and clean.totals.correct == 2**25 - 1


def test_branch_and_bound_on_the_trigger_network_agrees_with_enumeration_to_length_10() -> None:
    net = _first_with_a_trigger(None)
    _same(check_model(net, FIRST, max_n=10), check_model_bnb(net, FIRST, max_n=10, leaf=1))


def test_check_model_cli_searches_by_branch_and_bound_with_the_same_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    dyck12 = str(FIXTURES / "dyck12.pt")
    args = ["check-model", dyck12, "--language", "dyck", "--max-n", "6", "--json"]
    code = main(args)
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--search", "bnb", "--leaf", "2"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["search"]["settled"] + doc["search"]["enumerated"] == plain["totals"]["words"]
    assert doc["rows"] == plain["rows"] and doc["shortest_wrong"] == plain["shortest_wrong"]
    assert main([*args, "--search", "bnb", "--leaf", "0"]) == 2
    assert "--leaf 0" in capsys.readouterr().err


def _verdicts(report: object) -> dict[str, object]:
    doc = json.loads(report.to_json())  # type: ignore[attr-defined]
    for key in ("search", "margin_histogram", "wrong_margin_histogram"):
        doc.pop(key, None)
    return doc


@pytest.mark.slow
def test_subtree_shards_merged_give_one_process_s_report() -> None:
    from netproof.verifier.models.bnb import bnb_shards, merge_bnb

    for net, lang, n in [
        (_first_with_a_trigger(TRIGGER_14), FIRST, 14),
        (import_model(FIXTURES / "dyck12.pt"), DYCK(1, 2), 6),
    ]:
        enc = compile_enclosure(net)
        one = check_model_bnb(net, lang, max_n=n, leaf=4, enclosure=enc)
        shards = bnb_shards(lang.alphabet, 0, n, 2)
        assert shards[-1] == (n, tuple(lang.alphabet[-1:] * 3))  # 8 subtrees per long length
        parts = [
            check_model_bnb(net, lang, max_n=m, min_n=m, leaf=4, root=root, enclosure=enc)
            for m, root in shards
        ]
        merged = merge_bnb(parts, max_n=n)
        assert _verdicts(merged) == _verdicts(one)
        assert one.status == ("wrong" if lang is FIRST else one.status)
        assert merged.search is not None and one.search is not None
        for a, b in zip(merged.search["rows"], one.search["rows"], strict=True):  # type: ignore[arg-type]
            assert a["settled"] + a["enumerated"] == b["settled"] + b["enumerated"]


def test_check_model_cli_shards_branch_and_bound_over_the_local_pool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    dyck12 = str(FIXTURES / "dyck12.pt")
    args = ["check-model", dyck12, "--language", "dyck", "--max-n", "5", "--json"]
    args += ["--search", "bnb", "--leaf", "2"]
    code = main(args)
    one = json.loads(capsys.readouterr().out)
    assert main([*args, "--jobs", "2"]) == code
    pooled = json.loads(capsys.readouterr().out)
    assert pooled["search"]["shards"] == 4 + 2 * 8  # lengths 0..3 whole, 4 and 5 in 8 subtrees
    for doc in (one, pooled):
        for key in ("search", "margin_histogram", "wrong_margin_histogram"):
            doc.pop(key)
    assert pooled == one


def test_free_positions_kept_as_symbols_up_to_the_first_attention_tighten_the_bound() -> None:
    """Measured on the focused FIRST model (examples/train_focused_first.py): with the free
    positions as boxes the bound over every completion of `1` to length 24 is the whole
    layer-norm box; with the alternatives it settles the subtree."""
    net = import_model(FIXTURES / "first_focused.pt")
    ws = WordSetBound(compile_enclosure(net), FIRST.alphabet)
    low, high = ws.bound([(0,), (1,)], 24)
    assert float(high[0]) < 0 < float(low[1])
    ws.symbolic = False
    low, high = ws.bound([(0,), (1,)], 24)
    assert float(low[0]) < 0 < float(high[0]) and float(low[1]) < 0 < float(high[1])


def test_the_focused_trained_model_is_decided_on_every_word_to_length_30_mostly_by_bounds() -> None:
    net = import_model(FIXTURES / "first_focused.pt")
    report = check_model_bnb(net, FIRST, max_n=30, leaf=64)
    assert report.totals.words == 2**31 - 1 and report.totals.undecided == 0
    # it accepts the empty word (trained on lengths 1..64) and nothing else wrongly
    assert report.totals.wrong == 1 and report.shortest_wrong is not None
    assert report.shortest_wrong.word == () and report.shortest_wrong.accepted is True
    assert report.search is not None
    assert report.search["enumerated"] < 10_000  # type: ignore[operator]


def test_the_search_picture_is_a_png_and_a_plain_report_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from netproof.verifier.models.plot import plot_search

    net = import_model(FIXTURES / "dyck12.pt")
    report = check_model_bnb(net, DYCK(1, 2), max_n=5, leaf=4)
    plot_search(report, tmp_path / "trie.png")
    assert (tmp_path / "trie.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="needs the report of a branch-and-bound run"):
        plot_search(check_model(net, DYCK(1, 2), max_n=2), tmp_path / "no.png")
