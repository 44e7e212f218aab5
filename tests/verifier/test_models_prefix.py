"""Prefix sharing for causal models (netproof.verifier.models.prefix): the enclosures computed
along the word trie hold the same values as the per-word batches, the check's verdicts are the
same, and a network whose prefixes' states depend on the rest of the word is refused."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

from netproof.symbolic import interval
from netproof.symbolic.torch_import import import_model, to_network
from netproof.symbolic.torch_recognizer import Recognizer, save_recognizer
from netproof.verifier.claims.languages import PARITY
from netproof.verifier.cli.app import main
from netproof.verifier.models import EnclosureError, check_model, compile_enclosure
from netproof.verifier.models.prefix import CausalPrefixEnclosure

pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"

CONFIGS = [
    {"causal": True, "readout": "last", "nhead": 2, "num_layers": 2},
    {"causal": True, "readout": "last", "norm_first": True, "final_norm": True, "nhead": 2},
    {"causal": True, "readout": "last", "positional": "sinusoidal", "activation": "gelu"},
]


def _causal(cfg: dict[str, object], seed: int = 0) -> Recognizer:
    torch.manual_seed(seed)
    return Recognizer(alphabet=["0", "1"], d_model=8, dim_feedforward=16, max_len=16, **cfg)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_the_trie_s_enclosures_hold_the_values_of_the_per_word_batches_on_every_word(
    cfg: dict[str, object],
) -> None:
    net = to_network(_causal(cfg).config, _causal(cfg).state_dict())
    enc = compile_enclosure(net)
    trie = CausalPrefixEnclosure(enc, ("0", "1"), 7)
    cls = enc.token_index["<cls>"]
    for n in range(8):
        words = list(itertools.product("01", repeat=n))
        tokens = torch.tensor([[cls, *(enc.token_index[a] for a in w)] for w in words])
        tokens = tokens.reshape(len(words), n + 1)
        a, b = enc.logits(tokens, n + 1), trie.logits(tokens, n + 1)
        # both enclose the exact value, so they overlap; and they are equally tight
        assert bool(((a.m - b.m).abs() <= a.r + b.r).all())
        assert float(b.r.max()) < 1e-6
    for w in [("1", "0", "1"), ("0",) * 7]:  # and the rigorous interpreter's value is inside
        v = interval.run(net, w, digits=40).output
        t = torch.tensor([[cls, *(enc.token_index[a] for a in w)]])
        y = trie.logits(t, len(w) + 1)
        assert float(y.m[0] - y.r[0]) <= v.a and v.b <= float(y.m[0] + y.r[0])


def test_the_check_with_shared_prefixes_gives_the_same_verdicts(tmp_path: Path) -> None:
    net = to_network(_causal(CONFIGS[0]).config, _causal(CONFIGS[0]).state_dict())
    plain = check_model(net, PARITY, max_n=9)
    shared = check_model(
        net,
        PARITY,
        max_n=9,
        enclosure=CausalPrefixEnclosure(compile_enclosure(net), ("0", "1"), 9),  # type: ignore[arg-type]
    )
    assert [(r.correct, r.wrong, r.undecided) for r in plain.rows] == [
        (r.correct, r.wrong, r.undecided) for r in shared.rows
    ]
    assert plain.shortest_wrong is not None and shared.shortest_wrong is not None
    assert plain.shortest_wrong.word == shared.shortest_wrong.word
    # the CLI's --search prefix: same rows
    path = tmp_path / "causal.pt"
    save_recognizer(_causal(CONFIGS[0]), path)
    args = ["check-model", str(path), "--language", "parity", "--max-n", "6", "--json"]
    import contextlib
    import io

    out1, out2 = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out1):
        code = main(args)
    with contextlib.redirect_stdout(out2):
        assert main([*args, "--search", "prefix"]) == code
    rows1 = [(r["correct"], r["wrong"]) for r in json.loads(out1.getvalue())["rows"]]
    rows2 = [(r["correct"], r["wrong"]) for r in json.loads(out2.getvalue())["rows"]]
    assert rows1 == rows2


def test_a_bidirectional_model_is_refused_with_the_reason_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    net = import_model(FIXTURES / "first.pt")
    with pytest.raises(EnclosureError, match="mask 'none'; prefix sharing needs every head causal"):
        CausalPrefixEnclosure(compile_enclosure(net), ("0", "1"), 4)  # type: ignore[arg-type]
    dyck12 = import_model(FIXTURES / "dyck12.pt")  # causal, but read at <cls>
    with pytest.raises(EnclosureError, match="does not read the last token"):
        CausalPrefixEnclosure(compile_enclosure(dyck12), ("(", ")"), 4)  # type: ignore[arg-type]
    first = str(FIXTURES / "first.pt")
    assert (
        main(["check-model", first, "--language", "first", "--max-n", "3", "--search", "prefix"])
        == 2
    )
    assert "prefix sharing needs every head causal" in capsys.readouterr().err
