"""Network files: every network round-trips through JSON exactly, and the reader is strict."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
import re
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.constructions import REGISTRY
from netproof.symbolic import (
    RELU,
    SIGMA,
    STEP,
    AttentionLayer,
    Classifier,
    FlatEmbedding,
    Hardmax,
    Head,
    Network,
    NetworkValidationError,
    NextSymbols,
    Scale,
    Softmax,
    Sublayer,
    SymbolicError,
    affine,
    classifier,
    constant,
    exact,
    ffn,
    fingerprint,
    interval,
    layernorm,
    token_embedding,
)
from netproof.symbolic.errors import NotRationalError
from netproof.symbolic.netfile import (
    FORMAT,
    FORMAT_VERSION,
    NetworkFileError,
    dump_file,
    dumps,
    from_json,
    load_file,
    loads,
    to_json,
)

# --------------------------------------------------------------------------- networks

#: (construction, parameters, n for per-length constructions): every construction at its defaults
#: plus the variants whose networks differ in kind (soft layers, G2 positional features, paper text).
#: Recurrent networks (symbolic.recurrent_ir) and encoder–decoders (Seq2Seq) have no network file:
#: their refusals are tested below.
RECURRENT = frozenset({"stack-rnn", "baby-ntm", "stack-lstm"})
ENCODER_DECODERS = frozenset({"tm-sim", "prop43-tight"})
CASES: tuple[tuple[str, dict[str, str], int | None], ...] = (
    *(
        (name, {}, 3 if c.per_length else None)
        for name, c in REGISTRY.items()
        if name not in RECURRENT and name not in ENCODER_DECODERS
    ),
    ("rumelhart", {}, 1),
    ("rumelhart", {}, 5),
    ("parity", {"c": "1"}, None),
    ("parity", {"variant": "paper"}, None),
    ("parity-ln", {"eps": "1/10", "variant": "paper"}, None),
    ("first-ce", {"variant": "paper"}, None),
    ("dyck", {"variant": "paper"}, None),
    ("dyck", {"k": "1", "depth": "3"}, None),
    ("dyck-gen", {"reading": "G2", "lambda2": "1"}, None),
    ("dyck-gen", {"lambda2": "3/2"}, None),
    ("dyck-gen", {"variant": "paper"}, None),
    ("gates", {"variant": "paper"}, None),
    ("relpos", {"k": "2"}, None),
)


def _case_id(case: tuple[str, dict[str, str], int | None]) -> str:
    name, params, n = case
    parts = [name, *(f"{k}={v}" for k, v in params.items())]
    return " ".join(parts + ([f"n={n}"] if n is not None else []))


def _build(case: tuple[str, dict[str, str], int | None]) -> Network:
    name, params, n = case
    construction = REGISTRY[name]
    return construction.network(construction.parse_params(params), n)


def everything(*, readout: NextSymbols | Classifier | None = None) -> Network:
    """A token network touching every block and field: all masks and tie rules, both scorings,
    softmax with r and with c, every Scale field, an output map, empty blocks, layer norms over a
    subset and over everything, no-residual sublayers, specials on both sides, 1-based positions."""

    def head(name: str, writes: str, **fields: Any) -> Head:
        return Head(
            name=name,
            query=constant({"q": 1}),
            key=affine({"q": {"k/n": 1, "tok:a": "-1/3"}}),
            value=affine({writes: {"tok:a": 1}}),
            **fields,
        )

    look = AttentionLayer(
        name="look",
        heads=(
            head("h_none", "s:none", normalizer=Hardmax(tie="average")),
            head(
                "h_causal",
                "s:causal",
                normalizer=Hardmax(tie="leftmost"),
                mask="causal",
                empty="error",
                scale=Scale(sqrt_d=4),
            ),
            head(
                "h_strict",
                "s:strict",
                normalizer=Hardmax(tie="rightmost"),
                mask="strict_causal",
                scoring="neg_abs_dot",
                scale=Scale(coef=Fraction(2)),
            ),
            head(
                "h_anti",
                "s:anti",
                normalizer=Softmax(r=Fraction(2)),
                mask="anticausal",
                scale=Scale(coef=Fraction(-1, 2), times_n=True),
            ),
            head(
                "h_santi",
                "s:santi",
                normalizer=Softmax(c=Fraction(1), symbol="e"),
                mask="strict_anticausal",
                scale=Scale(log_n=True, times_n=True, sqrt_d=2),
            ),
        ),
    )
    mix = AttentionLayer(
        name="mix",
        heads=(
            head("u", "u1", normalizer=Softmax(r=Fraction(3, 2), symbol="E")),
            head("v", "u2", normalizer=Hardmax()),
        ),
        output=affine({"y": {"u1": 1, "u2": "-5/7"}}, bias={"y": "1/9"}),
    )
    gate = ffn(
        "gate",
        affine({"g1": {"x": 1, "y": -1}, "g2": {"s:none": 2}}, bias={"g1": "1/3"}),
        RELU,
        layernorm("1/4", over=("g1", "g2")),
        SIGMA,
        affine({"g3": {"g1": 1}}, bias={"g3": "1/7"}),  # >= 1/7: the step is decided in intervals
        STEP,
        affine({"x": {"g3": 1}}),
    )
    scores = ffn(
        "scores",
        affine(
            {"score:a": {"x": 1}, "score:b": {"y": 1}, "score:ω": {"s:causal": 1}},
            bias={"score:b": 1},
        ),
    )
    return Network(
        name="everything",
        dims=(
            "x",
            "y",
            "k/n",
            "tok:a",
            "s:none",
            "s:causal",
            "s:strict",
            "s:anti",
            "s:santi",
            "score:a",
            "score:b",
            "score:ω",
        ),
        embedding=token_embedding(
            ("a", "b", "ω"),
            {"a": {"tok:a": 1, "x": 0}, "b": {"x": "-1/2"}, "ω": {}, "⊢": {"y": 1}, "⊣": {"y": -1}},
            positional={"k/n": "i/n", "x": ("1/2^i", "-3/4"), "y": "cos(iπ)"},
            prefix=("⊢",),
            suffix=("⊣",),
            index_base=1,
        ),
        layers=(
            Sublayer(block=look),
            Sublayer(block=mix, post_ln=layernorm(0, over=("x", "y"))),
            Sublayer(block=AttentionLayer(name="no_heads", heads=())),
            Sublayer(block=gate, residual=False, post_ln=layernorm("1/100")),
            Sublayer(block=ffn("no_steps")),
            Sublayer(block=scores),
        ),
        readout=readout
        if readout is not None
        else NextSymbols(
            scores=(("a", "score:a"), ("b", "score:b"), ("ω", "score:ω")),
            threshold=Fraction(1, 4),
            softmax=Softmax(r=Fraction(2), symbol="e^λ"),
            end="ω",
        ),
        params=(("k", "2"), ("note", "ünïcode ω")),
        reference="Nobody 2000, §1",
    )


def flat() -> Network:
    """A plain FFNN on words of one length (FlatEmbedding) with a classifier."""
    return Network(
        name="flat",
        dims=("w1", "w2", "w3", "h"),
        embedding=FlatEmbedding(
            alphabet=("0", "1"),
            length=3,
            values=(("0", Fraction(0)), ("1", Fraction(1, 2))),
            prefix="w",
        ),
        layers=(
            Sublayer(
                block=ffn(
                    "sum",
                    affine({"u": {"w1": 1, "w2": -1, "w3": 1}}),
                    RELU,
                    affine({"h": {"u": 1}}),
                )
            ),
        ),
        readout=classifier({"h": 1}, bias="-1/4"),
    )


READOUTS: dict[str, Callable[[], Network]] = {
    "next symbols with a softmax and an end symbol": everything,
    "next symbols without softmax or end symbol": lambda: everything(
        readout=NextSymbols(scores=(("a", "score:a"), ("b", "score:b")), threshold=Fraction(0))
    ),
    "a classifier at the last position": lambda: everything(
        readout=classifier({"x": 1, "y": "2/3"}, position=-1)
    ),
    "a flat embedding": flat,
}

# --------------------------------------------------------------------------- running


def _words(net: Network) -> list[str]:
    if isinstance(net.embedding, FlatEmbedding):
        return ["".join(w) for w in itertools.product(net.alphabet, repeat=net.embedding.length)]
    return ["".join(w) for size in range(3) for w in itertools.product(net.alphabet, repeat=size)]


def _outcome(net: Network, word: str) -> tuple[object, ...]:
    """Everything a run shows (exact where the values are rational, else intervals), or the error."""
    try:
        try:
            trace: Any = exact.run(net, word)
        except NotRationalError:
            trace = interval.run(net, word)
    except SymbolicError as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        trace.backend,
        trace.tokens,
        trace.positions,
        repr(trace.states),
        repr(trace.selections),
        repr(trace.output),
        trace.accepted,
        trace.next_symbols,
    )


# --------------------------------------------------------------------------- round trips


def test_an_encoder_decoder_is_written_in_its_own_format_that_this_reader_refuses_by_name() -> None:
    net = REGISTRY["tm-sim"].network(REGISTRY["tm-sim"].parse_params({}))
    doc = json.loads(dumps(net))
    assert (doc["format"], doc["fingerprint"]) == ("netproof-seq2seq", fingerprint(net))
    assert [d["name"] for d in doc["network"]["decoder"]] == [d.name for d in net.decoder]
    with pytest.raises(NetworkFileError, match=r'"netproof-seq2seq" is not a network file format'):
        loads(dumps(net))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_every_construction_network_round_trips_to_an_equal_network_with_the_same_fingerprint(
    case: tuple[str, dict[str, str], int | None],
) -> None:
    net = _build(case)
    text = dumps(net)
    again = loads(text)
    assert again == net
    assert fingerprint(again) == fingerprint(net) == json.loads(text)["fingerprint"]
    assert from_json(to_json(net)) == net
    assert json.loads(text) == to_json(net)
    assert dumps(again) == text


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_a_reloaded_construction_network_computes_the_same_traces(
    case: tuple[str, dict[str, str], int | None],
) -> None:
    net = _build(case)
    again = loads(dumps(net))
    outcomes = [(_outcome(net, w), _outcome(again, w)) for w in _words(net)]
    assert all(a == b for a, b in outcomes)
    assert any(a[0] != "error" for a, _ in outcomes), "no word ran: the comparison would be empty"


@pytest.mark.parametrize("make", READOUTS.values(), ids=READOUTS.keys())
def test_a_hand_built_network_using_every_block_and_field_round_trips_and_runs_the_same(
    make: Callable[[], Network],
) -> None:
    net = make()
    again = loads(dumps(net))
    assert again == net
    assert fingerprint(again) == fingerprint(net)
    outcomes = [(_outcome(net, w), _outcome(again, w)) for w in _words(net)]
    assert all(a == b for a, b in outcomes)
    assert any(a[0] != "error" for a, _ in outcomes)


def test_the_hand_built_network_really_uses_every_kind_of_field() -> None:
    text = dumps(everything())
    for needle in (
        '"mask": "none"',
        '"mask": "causal"',
        '"mask": "strict_causal"',
        '"mask": "anticausal"',
        '"mask": "strict_anticausal"',
        '"tie": "average"',
        '"tie": "leftmost"',
        '"tie": "rightmost"',
        '"scoring": "neg_abs_dot"',
        '"sqrt_d": 4',
        '"log_n": true',
        '"times_n": true',
        '"c": "1"',
        '"r": "3/2"',
        '"over": ["g1", "g2"]',
        '"over": null',
        '"residual": false',
        '"empty": "error"',
        '"heads": []',
        '"steps": []',
        '"end": "ω"',
        '"index_base": 1',
        '"kind": "sigma"',
        '"kind": "step"',
        '"type": "LayerNorm"',
    ):
        assert needle in text, needle
    assert '"type": "FlatEmbedding"' in dumps(flat())


def test_writing_is_deterministic_and_the_text_is_the_json_data() -> None:
    net = everything()
    text = dumps(net, extra={"construction": "everything", "params": {"b": 1, "a": [1, 2]}})
    assert text == dumps(
        everything(), extra={"params": {"a": [1, 2], "b": 1}, "construction": "everything"}
    )
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert "ω" in text and "\\u" not in text  # ensure_ascii=False
    assert all((len(line) - len(line.lstrip(" "))) % 2 == 0 for line in text.splitlines())
    assert json.loads(text) == to_json(
        net, extra={"construction": "everything", "params": {"a": [1, 2], "b": 1}}
    )
    top = json.loads(text)
    assert (
        (top["format"], top["format_version"])
        == (FORMAT, FORMAT_VERSION)
        == ("netproof-network", 1)
    )
    assert list(top) == sorted(top)
    assert top["network"]["dims"] == list(net.dims)  # arrays keep their order
    assert [sub["block"]["name"] for sub in top["network"]["layers"]] == [
        sub.name for sub in net.layers
    ]


def test_rationals_are_written_as_strings_and_zero_weights_are_left_out() -> None:
    net = everything()
    top = to_json(net)
    mix = top["network"]["layers"][1]["block"]
    assert mix["output"]["weights"] == {"y": {"u1": "1", "u2": "-5/7"}}
    assert mix["output"]["bias"] == {"y": "1/9"}
    assert top["network"]["embedding"]["table"][0] == [
        "a",
        [["tok:a", "1"], ["x", "0"]],
    ]  # table zeros kept
    assert top["network"]["embedding"]["positional"][1] == ["x", "1/2^i", "-3/4"]
    assert top["network"]["layers"][0]["block"]["heads"][1]["scale"] == {
        "type": "Scale",
        "coef": "1",
        "sqrt_d": 4,
        "log_n": False,
        "times_n": False,
    }


def test_the_reader_takes_json_integers_and_explicit_zeros_for_rationals() -> None:
    top = to_json(flat())
    top["network"]["embedding"]["values"] = [["0", 0], ["1", "1/2"]]
    top["network"]["readout"]["logit"]["weights"]["logit"]["h"] = 1
    top["network"]["readout"]["logit"]["bias"]["logit"] = (
        "-2/8"  # not in lowest terms: the same rational
    )
    top["network"]["layers"][0]["block"]["steps"][0]["weights"]["u"]["w2"] = "-1"
    top["network"]["layers"][0]["block"]["steps"][0]["bias"] = {"u": "0"}
    assert from_json(top) == flat()


def test_extra_is_stored_verbatim_and_returned_by_load_file(tmp_path: Path) -> None:
    extra = {
        "construction": "dyck",
        "params": {"k": "2"},
        "claims": ("Y1", "Y2"),
        "n": 3,
        "ok": True,
        "x": None,
    }
    path = tmp_path / "net.json"
    dump_file(path, everything(), extra=extra)
    net, got = load_file(path)
    assert net == everything()
    assert got == {**extra, "claims": ["Y1", "Y2"]}
    dump_file(path, flat())
    assert load_file(path) == (flat(), None)
    assert path.read_text(encoding="utf-8") == dumps(flat())


def test_extra_that_is_not_json_is_refused_when_writing() -> None:
    fraction = (
        "extra.claims[1]: Fraction(1, 2) is a Fraction, not a JSON value; write str(value) = '1/2'"
    )
    with pytest.raises(NetworkFileError, match=re.escape(fraction)):
        to_json(flat(), extra={"claims": ["Y1", Fraction(1, 2)]})
    with pytest.raises(
        NetworkFileError, match=re.escape("extra: key 3 is a int; JSON object keys are strings")
    ):
        to_json(flat(), extra={3: "x"})
    with pytest.raises(
        NetworkFileError,
        match=re.escape("extra.bound: nan is not a JSON number; store it as a string"),
    ):
        to_json(flat(), extra={"bound": float("nan")})
    with pytest.raises(NetworkFileError, match=r"^extra: is a list; pass a mapping"):
        to_json(flat(), extra=["x"])  # type: ignore[arg-type]


def test_a_network_file_error_is_a_validation_error_with_its_path_and_survives_pickling() -> None:
    err = NetworkFileError("network.dims[2]", "fix it")
    assert isinstance(err, NetworkValidationError) and isinstance(err, SymbolicError)
    again = pickle.loads(pickle.dumps(err))
    assert (again.path, again.detail, str(again)) == (
        "network.dims[2]",
        "fix it",
        "network.dims[2]: fix it",
    )


# --------------------------------------------------------------------------- the strict reader

DELETE = object()


def _edited(
    path: tuple[str | int, ...], value: object, net: Network | None = None
) -> dict[str, Any]:
    """The JSON data of ``net`` (default: :func:`everything`) with the value at ``path`` replaced
    (or deleted with :data:`DELETE`)."""
    top = copy.deepcopy(to_json(net if net is not None else everything()))
    parent: Any = top
    for step in path[:-1]:
        parent = parent[step]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return top


AFFINE_X_TO_G3 = {
    "type": "Affine",
    "inputs": ["x"],
    "outputs": ["g3"],
    "weights": {"g3": {"x": "1"}},
    "bias": {},
}
AFFINE_TO_S_NONE = {
    "type": "Affine",
    "inputs": ["tok:a"],
    "outputs": ["s:none"],
    "weights": {},
    "bias": {},
}
AFFINE_TO_P = {"type": "Affine", "inputs": [], "outputs": ["p"], "weights": {}, "bias": {}}
HEAD0 = ("network", "layers", 0, "block", "heads", 0)
GATE = ("network", "layers", 3, "block")

#: (what is wrong, path in the data, new value, the error message's start: path and fix)
MALFORMED: tuple[tuple[str, tuple[str | int, ...], object, str], ...] = (
    (
        "an unknown field",
        (*HEAD0, "colour"),
        "red",
        (
            "network.layers[0].block.heads[0].colour: unknown field of Head; its fields are type, name, query, key, "
            "value, normalizer, scoring, scale, mask, empty: remove or rename it"
        ),
    ),
    (
        "a missing field",
        (*HEAD0, "mask"),
        DELETE,
        (
            "network.layers[0].block.heads[0].mask: missing field of Head; every field is required (write null where "
            "the IR has None)"
        ),
    ),
    (
        "a missing type",
        (*HEAD0, "scale", "type"),
        DELETE,
        'network.layers[0].block.heads[0].scale.type: missing: an IR object names its class, e.g. "type": "Scale"',
    ),
    (
        "a wrong type name",
        ("network", "layers", 0, "block", "type"),
        "MLP",
        'network.layers[0].block.type: the string "MLP" is not allowed here; write "AttentionLayer" or "FFN"',
    ),
    (
        "a bad mask",
        (*HEAD0, "mask"),
        "causall",
        (
            'network.layers[0].block.heads[0].mask: the string "causall" is not allowed; write one of "none", '
            '"causal", "strict_causal", "anticausal", "strict_anticausal"'
        ),
    ),
    (
        "a bad activation",
        (*GATE, "steps", 1, "kind"),
        "tanh",
        'network.layers[3].block.steps[1].kind: the string "tanh" is not allowed; write one of "relu", "sigma", "step"',
    ),
    (
        "a string for a boolean",
        ("network", "layers", 3, "residual"),
        "no",
        'network.layers[3].residual: expected true or false, got the string "no"',
    ),
    (
        "a float for a rational",
        (*GATE, "steps", 0, "bias", "g1"),
        0.5,
        (
            "network.layers[3].block.steps[0].bias.g1: the number 0.5 is a float; rationals are exact: write the exact "
            'string "1/2"'
        ),
    ),
    (
        "a float for a rational in a weight with an odd name",
        (*HEAD0, "key", "weights", "q", "k/n"),
        0.1,
        (
            'network.layers[0].block.heads[0].key.weights.q["k/n"]: the number 0.1 is a float; rationals are exact: '
            'write the exact string "1/10"'
        ),
    ),
    (
        "a decimal string for a rational",
        ("network", "readout", "threshold"),
        "0.25",
        'network.readout.threshold: the string "0.25" is not a rational; write an integer or "p/q"',
    ),
    (
        "a zero denominator",
        ("network", "layers", 1, "post_ln", "eps"),
        "1/0",
        'network.layers[1].post_ln.eps: the string "1/0" divides by zero; write a nonzero denominator',
    ),
    (
        "a boolean for a rational",
        ("network", "readout", "threshold"),
        True,
        'network.readout.threshold: expected a rational, got the boolean true; write "0" or "1"',
    ),
    (
        "a float for an integer",
        ("network", "embedding", "index_base"),
        1.0,
        "network.embedding.index_base: expected an integer, got the number 1.0; write 1",
    ),
    (
        "a boolean for an integer",
        (*HEAD0, "scale", "sqrt_d"),
        True,
        "network.layers[0].block.heads[0].scale.sqrt_d: expected an integer, got the boolean true",
    ),
    (
        "an object for an array",
        ("network", "dims"),
        {"x": 1},
        "network.dims: expected an array, got an object; write [...]",
    ),
    (
        "a short pair",
        ("network", "embedding", "positional", 0),
        ["k/n", "i/n"],
        "network.embedding.positional[0]: expected [dim, feature name, coefficient] (3 entries), got 2 entries",
    ),
    (
        "an unknown positional feature",
        ("network", "embedding", "positional", 0, 1),
        "j/n",
        "network.embedding.positional[0][1]: unknown positional feature 'j/n'; known features: ",
    ),
    (
        "an embedding into an unknown dim",
        ("network", "embedding", "table", 1, 1, 0, 0),
        "z",
        (
            'network.embedding.table[1][1][0][0]: embedding dim "z" is not a network dim; add it to network.dims or fix '
            "the name"
        ),
    ),
    (
        "a dim name with a space",
        ("network", "dims", 1),
        "y y",
        'network.dims[1]: dim name "y y" must be non-empty and without spaces',
    ),
    (
        "a repeated dim",
        ("network", "dims", 1),
        "x",
        'network.dims[1]: dim name "x" appears twice; rename one',
    ),
    (
        "a weight of an output that is not listed",
        (*HEAD0, "value", "weights", "zz"),
        {"tok:a": "1"},
        'network.layers[0].block.heads[0].value.weights.zz: "zz" is not among outputs; add it there or fix the name',
    ),
    (
        "a weight of an input that is not listed",
        (*HEAD0, "value", "weights", "s:none", "zz"),
        "1",
        (
            'network.layers[0].block.heads[0].value.weights["s:none"].zz: "zz" is not among inputs; add it there or fix '
            "the name"
        ),
    ),
    (
        "an IR error in a block (softmax with r and c)",
        ("network", "layers", 0, "block", "heads", 3, "normalizer", "c"),
        "1",
        "network.layers[0].block.heads[3].normalizer: Softmax needs exactly one of r (base r = e^{ln r}) and c",
    ),
    (
        "an IR error in a head (query and key spaces differ)",
        (*HEAD0, "key"),
        AFFINE_TO_P,
        (
            "network.layers[0].block.heads[0]: head 'h_none': query outputs ('q',) and key outputs ('p',) must be the "
            "same names in the same order"
        ),
    ),
    (
        "an IR error in a scale",
        (*HEAD0, "scale", "coef"),
        "0",
        "network.layers[0].block.heads[0].scale: Scale.coef=0 makes every score 0; use a nonzero coef",
    ),
    (
        "a negative layer-norm epsilon",
        ("network", "layers", 3, "post_ln", "eps"),
        "-1",
        "network.layers[3].post_ln: LayerNorm.eps=-1 must be >= 0",
    ),
    (
        "a sublayer reading a dim that is not there",
        (*GATE, "steps", 4),
        AFFINE_X_TO_G3,
        "network.layers[3]: ffn 'gate': step [4] reads 'x', which is not available there",
    ),
    (
        "two heads writing one dim",
        ("network", "layers", 0, "block", "heads", 1, "value"),
        AFFINE_TO_S_NONE,
        "network.layers[0]: attention 'look' head 'h_causal': writes 's:none', which head 'h_none' writes too",
    ),
    (
        "a repeated sublayer name",
        ("network", "layers", 4, "block", "name"),
        "gate",
        "network.layers[4].block.name: sublayer name 'gate' is used twice (or is the reserved name 'input')",
    ),
    (
        "an end symbol that is not scored",
        ("network", "readout", "end"),
        "⊣",
        "network.readout: NextSymbols.end='⊣' is not one of the scored symbols",
    ),
    (
        "a score read from an unknown dim",
        ("network", "readout", "scores", 2, 1),
        "score:ω2",
        'network.readout.scores[2][1]: score dim "score:ω2" is not a network dim; add it to network.dims',
    ),
    (
        "a wrong format",
        ("format",),
        "netproof-proof",
        'format: the string "netproof-proof" is not a network file format; this reader reads "netproof-network"',
    ),
    (
        "a newer format version",
        ("format_version",),
        2,
        (
            "format_version: the integer 2 is not supported; this reader reads format_version 1: re-export the network "
            "with this version of netproof"
        ),
    ),
    (
        "a string format version",
        ("format_version",),
        "1",
        'format_version: the string "1" is not supported; this reader reads format_version 1',
    ),
    (
        "a malformed fingerprint",
        ("fingerprint",),
        "abc",
        'fingerprint: the string "abc" is not a sha256 (64 lowercase hex digits)',
    ),
    (
        "a missing fingerprint",
        ("fingerprint",),
        DELETE,
        (
            f'fingerprint: missing top-level field; for the network in this file write "fingerprint": '
            f'"{fingerprint(everything())}"'
        ),
    ),
    (
        "a missing top-level field",
        ("network",),
        DELETE,
        "network: missing top-level field; re-export the network with symbolic.netfile.dumps",
    ),
    (
        "an unknown top-level field",
        ("comment",),
        "hi",
        "comment: unknown top-level field; a network file has format, format_version, fingerprint, network, extra",
    ),
    (
        "extra that is not an object",
        ("extra",),
        ["x"],
        "extra: expected extra data (a JSON object), got an array",
    ),
)


@pytest.mark.parametrize(
    ("path", "value", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
def test_a_malformed_file_is_refused_with_the_path_of_the_field_and_the_fix(
    path: tuple[str | int, ...], value: object, message: str
) -> None:
    top = _edited(path, value)
    with pytest.raises(NetworkFileError, match="^" + re.escape(message)) as info:
        from_json(top)
    assert str(info.value).startswith(info.value.path + ": ")
    text = json.dumps(top, ensure_ascii=False)
    with pytest.raises(NetworkFileError, match="^" + re.escape(message)):
        loads(text)


def test_a_flat_input_longer_than_the_network_is_refused_before_its_dims_are_listed() -> None:
    top = _edited(("network", "embedding", "length"), 10**12, flat())
    with pytest.raises(
        NetworkFileError,
        match="^"
        + re.escape(
            "network.embedding.length: 1000000000000 input dims but the network has 4 dims; fix length"
        ),
    ):
        from_json(top)
    top = _edited(("network", "embedding", "prefix"), "v", flat())
    with pytest.raises(
        NetworkFileError,
        match="^" + re.escape('network.embedding.length: flat input dim "v1" is not a network dim'),
    ):
        from_json(top)


def test_a_fingerprint_that_does_not_match_the_network_is_refused_and_the_right_one_is_named() -> (
    None
):
    net = everything()
    mix = net.layers[1]
    assert isinstance(mix.block, AttentionLayer)
    output = affine({"y": {"u1": 1, "u2": "-5/7"}}, bias={"y": "1/8"})
    edited = replace(
        net,
        layers=(
            net.layers[0],
            replace(mix, block=replace(mix.block, output=output)),
            *net.layers[2:],
        ),
    )
    top = _edited(("network", "layers", 1, "block", "output", "bias", "y"), "1/8")
    stated, actual = fingerprint(net), fingerprint(edited)
    with pytest.raises(
        NetworkFileError,
        match="^"
        + re.escape(f"fingerprint: the file states {stated} but its network prints to {actual}")
        + ".*"
        + re.escape(f"if the edit is intended, write {actual}"),
    ):
        from_json(top)
    top["fingerprint"] = actual
    assert from_json(top) == edited


def test_a_repeated_key_is_refused_with_its_path() -> None:
    text = dumps(everything())
    head = '"mask": "causal",'
    assert text.count(head) == 1
    repeated = text.replace(head, head + ' "mask": "none",')
    with pytest.raises(
        NetworkFileError,
        match="^" + re.escape("network.layers[0].block.heads[1].mask: this key appears twice"),
    ):
        loads(repeated)
    weights = '"weights": {"y": {"u1": "1", "u2": "-5/7"}}'
    assert weights in text
    with pytest.raises(
        NetworkFileError,
        match="^"
        + re.escape(
            "network.layers[1].block.output.weights.y.u1: this key appears twice in the same "
            "object; keep exactly one"
        ),
    ):
        loads(text.replace(weights, '"weights": {"y": {"u1": "1", "u1": "2", "u2": "-5/7"}}'))
    with pytest.raises(
        NetworkFileError, match="^" + re.escape('extra.claims[0]["k/n"]: this key appears twice')
    ):
        loads(
            dumps(flat(), extra={"claims": [{"k/n": 1}]}).replace('"k/n": 1', '"k/n": 1, "k/n": 2')
        )


def test_text_that_is_not_json_or_holds_nan_is_refused() -> None:
    not_json = r"^\(top level\): the text is not JSON: .* at line 1 column 2; fix the syntax there"
    with pytest.raises(NetworkFileError, match=not_json):
        loads("{,}")
    with pytest.raises(
        NetworkFileError,
        match=re.escape('(top level): NaN is not a JSON number; rationals are strings like "1/2"'),
    ):
        loads(dumps(flat()).replace('"position": 0', '"position": NaN'))
    with pytest.raises(
        NetworkFileError,
        match=re.escape("(top level): expected a network file (a JSON object), got an array"),
    ):
        loads("[]")


def test_load_file_names_the_file_when_it_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(dumps(flat())[:-3], encoding="utf-8")
    with pytest.raises(NetworkFileError, match=re.escape(f"(top level): {path} is not JSON")):
        load_file(path)


# --------------------------------------------------------------------------- relative positions (Chang et al.)


def _relpos() -> Network:
    return REGISTRY["relpos"].network(REGISTRY["relpos"].parse_params({}))


RELPOS_HEADS = ("network", "layers", 0, "block", "heads")
RELPOS_MALFORMED: tuple[tuple[str, tuple[str | int, ...], object, str], ...] = (
    (
        "an unknown field of a relative bias",
        (*RELPOS_HEADS, 0, "relative_bias", "scale"),
        "1",
        (
            "network.layers[0].block.heads[0].relative_bias.scale: unknown field of RelativeBias; its fields are type, "
            "beta, outside: remove or rename it"
        ),
    ),
    (
        "a bad outside rule",
        (*RELPOS_HEADS, 2, "query_conv", "outside"),
        "wrap",
        'network.layers[0].block.heads[2].query_conv.outside: the string "wrap" is not allowed; write one of "zero", "clip"',
    ),
    (
        "an even window",
        (*RELPOS_HEADS, 0, "relative_bias", "beta"),
        ["1", "2"],
        (
            "network.layers[0].block.heads[0].relative_bias: RelativeBias.beta has 2 entries; a window of offsets "
            "−k..k has 2k+1"
        ),
    ),
    (
        "a float in a kernel column",
        (*RELPOS_HEADS, 1, "query_conv", "columns", 0, 0),
        0.5,
        (
            "network.layers[0].block.heads[1].query_conv.columns[0][0]: the number 0.5 is a float; rationals are exact: "
            'write the exact string "1/2"'
        ),
    ),
    (
        "a kernel column of the wrong width",
        (*RELPOS_HEADS, 4, "key_conv", "columns", 0),
        ["1"],
        "network.layers[0].block.heads[4]: head 'key' key_conv: column for offset -1 has 1 entries but the q/k space has 4",
    ),
    (
        "a missing convolution field",
        ("network", "layers", 1, "block", "normalizer"),
        DELETE,
        (
            "network.layers[1].block.normalizer: missing field of Convolution; every field is required (write null "
            "where the IR has None)"
        ),
    ),
    (
        "a convolution writing an unknown dim",
        ("network", "layers", 2, "block", "outputs", 0),
        "w",
        "network.layers[2]: convolution 'depthwise': writes 'w', which are not residual dims",
    ),
)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [m[1:] for m in RELPOS_MALFORMED],
    ids=[m[0] for m in RELPOS_MALFORMED],
)
def test_a_malformed_relative_field_or_convolution_is_refused_with_its_path(
    path: tuple[str | int, ...], value: object, message: str
) -> None:
    with pytest.raises(NetworkFileError, match="^" + re.escape(message)):
        from_json(_edited(path, value, _relpos()))


def test_relative_fields_are_written_only_when_set_and_read_back_as_none_when_absent() -> None:
    data = to_json(_relpos())
    heads = data["network"]["layers"][0]["block"]["heads"]
    assert ["relative_bias" in h for h in heads] == [True, False, False, True, False]
    assert ["key_conv" in h for h in heads] == [False, False, False, False, True]
    assert '"relative_bias"' not in dumps(everything())
    again = from_json(data)
    assert again == _relpos()
    assert again.layers[0].block.heads[1].relative_bias is None  # type: ignore[union-attr]
