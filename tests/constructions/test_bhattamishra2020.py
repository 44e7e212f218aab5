"""Bhattamishra et al. 2020: machines, the σ-RNN compiler, both transformers, their claims."""

from __future__ import annotations

import functools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.constructions.bhattamishra2020 import (
    SHIPPED,
    compiled_machine,
    directional_transformer,
    expected_ticks,
    rnn_inputs,
    tm_network,
    vanilla_transformer,
)
from netproof.constructions.tm_rnn import compile_machine
from netproof.symbolic import NetworkValidationError, Seq2Seq, Sublayer, fingerprint, pretty
from netproof.symbolic.batched import supports
from netproof.symbolic.seq2seq import run
from netproof.verifier.claims import ForAll, Proved, Refuted, Simulates
from netproof.verifier.claims.machines import MachineError, SigmaRNN, parse_machine
from netproof.verifier.cli import main
from netproof.verifier.exhaustive.checker import Job, check, check_word
from netproof.verifier.fuzzing.strategies import sigma_rnns, two_stack_machines

TM = REGISTRY["tm-sim"]
TRANSFORMERS = ("vanilla", "directional")


@functools.cache
def job(
    machine: str = "balanced-parens", transformer: str = "vanilla", variant: str = "fixed"
) -> Job:
    return Job(
        TM, TM.parse_params({"machine": machine, "transformer": transformer, "variant": variant})
    )


def claim(j: Job, claim_id: str):  # type: ignore[no-untyped-def]
    return next(cl for cl in TM.claims(j.values) if cl.id == claim_id)


def simulation(j: Job) -> Simulates:
    found = next(cl for cl in TM.claims(j.values) if isinstance(cl, Simulates))
    return found


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("transformer", TRANSFORMERS)
@pytest.mark.parametrize("machine", SHIPPED)
def test_every_shipped_machine_is_simulated_exactly_step_by_step_by_both_transformers(
    machine: str, transformer: str
) -> None:
    j = job(machine, transformer)
    verdict = check(j, simulation(j), max_len=2)
    assert isinstance(verdict, Proved), verdict
    assert verdict.checked == 7
    assert "machine configurations matched" in verdict.detail


@pytest.mark.slow
@pytest.mark.parametrize("transformer", TRANSFORMERS)
@pytest.mark.parametrize("machine", SHIPPED)
def test_every_shipped_machine_is_simulated_on_every_input_up_to_length_8(
    machine: str, transformer: str
) -> None:
    j = job(machine, transformer)
    verdict = check(j, simulation(j), max_len=8)
    assert isinstance(verdict, Proved), verdict
    assert verdict.checked == 511


def test_binary_increment_ends_with_the_incremented_number_on_stack_one_and_halts_with_the_machine() -> (
    None
):
    j = job("binary-increment", "vanilla")
    cm = compiled_machine("binary-increment")
    word = tuple("0110")
    trace = run(j.network(), word, max_steps=200)
    ticks = expected_ticks(cm, "vanilla", word)
    assert trace.halted_at == ticks[-1][0] == 26
    assert str(ticks[-1][1]) == "done [0111 | ε]"
    h = {u: trace.value(26, f"h:{u}") for u in cm.rnn.unit_names}
    assert str(cm.decode(h)) == "done [0111 | ε]"


def test_the_printed_vanilla_construction_is_refuted_at_step_2_where_it_reads_s1_twice() -> None:
    j = job("binary-increment", "vanilla", "paper")
    verdict = check(j, simulation(j), max_len=2)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("0",)
    assert verdict.detail.startswith(
        "on '0': first failing step t = 2: y_2[h:pA] = 1/16 but h_2[pA] = 0"
    )
    assert verdict.values["t"] == "2"


def test_the_papers_directional_statement_y_t_holds_h_t_is_refuted_at_step_1() -> None:
    j = job("balanced-parens", "directional", "paper")
    verdict = check(j, simulation(j), max_len=2)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("(",)
    assert "first failing step t = 1" in verdict.detail


@pytest.mark.parametrize(
    ("transformer", "claim_id"), [("vanilla", "C5-trace"), ("directional", "B11")]
)
def test_the_attention_lemmas_hold_on_every_decoder_step(transformer: str, claim_id: str) -> None:
    j = job("reverse", transformer)
    verdict = check(j, claim(j, claim_id), max_len=3)
    assert isinstance(verdict, Proved), verdict


def test_without_the_dollar_key_the_decoder_encoder_attention_cannot_read_the_end_marker() -> None:
    j = job("balanced-parens", "vanilla", "paper")
    verdict = check_word(j, claim(j, "C5-trace"), ("(",))
    assert isinstance(verdict, Refuted)
    assert (
        "step t=1: the decoder–encoder attention reads positions (1,), expected only 2"
        in verdict.detail
    )


@pytest.mark.parametrize(
    ("ablation", "first_failure"),
    [
        ("enc-residual", None),
        ("dec-self-residual", None),
        ("enc-ffn-relu", None),
        ("dec-ffn-residual", None),
        ("enc-ffn-sigma", "on '(': first failing step t = 1"),
        ("dec-enc-residual", "on ε (the empty word): first failing step t = 2"),
    ],
)
def test_figure_2_each_component_is_replaceable_or_necessary_as_the_spec_found(
    ablation: str, first_failure: str | None
) -> None:
    j = Job(TM, TM.parse_params({"ablation": ablation}))
    verdict = check(j, simulation(j), max_len=1)
    if first_failure is None:
        assert isinstance(verdict, Proved), verdict
    else:
        assert isinstance(verdict, Refuted)
        assert verdict.detail.startswith(first_failure)


def test_proposition_4_3_without_the_dec_enc_residual_the_attention_output_takes_at_most_2_to_the_n_minus_1_values() -> (
    None
):
    j = Job(TM, TM.parse_params({"ablation": "dec-enc-residual"}))
    assert isinstance(check(j, claim(j, "B14"), max_len=3), Proved)
    with pytest.raises(ValueError, match=r"Figure 2's ablations are of the vanilla transformer"):
        TM.network(TM.parse_params({"ablation": "dec-enc-residual", "transformer": "directional"}))


# --------------------------------------------------------------------------- z3 lemmas


@pytest.mark.z3
@pytest.mark.parametrize(
    "claim_id",
    ["M1-read", "M1-read-empty", "M1-push", "M1-pop", "M1-pop-top", "M1-pop-to-empty", "M1-gate"],
)
def test_the_stack_lemmas_hold_for_all_reals(claim_id: str) -> None:
    verdict = check(job(), claim(job(), claim_id))
    assert isinstance(verdict, Proved), verdict
    assert verdict.method == "smt (z3), all reals"


@pytest.mark.z3
def test_a_gate_with_k_3_is_refuted_by_z3_with_a_witness() -> None:
    gate = claim(job(), "M1-gate")
    assert isinstance(gate, ForAll)
    import sympy

    x, g = sympy.symbols("x G")
    wrong = ForAll(
        id="gate-3",
        statement="σ(x + 3G − 3) = G·σ(x) for x ≤ 4",
        reference="test",
        variables=("x", "G"),
        assumptions=gate.assumptions,
        goal=sympy.Eq(sympy.Min(1, sympy.Max(0, x + 3 * g - 3)), g * sympy.Min(1, sympy.Max(0, x))),
    )
    verdict = check(job(), wrong)
    assert isinstance(verdict, Refuted)
    assert Fraction(verdict.values["x"]) > 3 and verdict.values["G"] == "0"


@pytest.mark.z3
@pytest.mark.parametrize(
    ("transformer", "claim_id", "fixed", "paper"),
    [("vanilla", "B3", Proved, Refuted), ("directional", "B12", Proved, Refuted)],
)
def test_lemma_c5_and_the_d3_gap_hold_as_fixed_and_fail_as_printed(
    transformer: str, claim_id: str, fixed: type, paper: type
) -> None:
    for variant, expected in (("fixed", fixed), ("paper", paper)):
        j = job("balanced-parens", transformer, variant)
        assert isinstance(check(j, claim(j, claim_id)), expected)


# --------------------------------------------------------------------------- random σ-RNNs


FEW = settings(
    max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("transformer", TRANSFORMERS)
@FEW
@given(
    rnn=sigma_rnns(alphabet=("a", "b"), max_units=3),
    word=st.lists(st.sampled_from(("a", "b")), max_size=4).map(tuple),
)
def test_random_sigma_rnns_are_simulated_step_by_step_by_both_transformers(
    transformer: str, rnn: SigmaRNN, word: tuple[str, ...]
) -> None:
    build = vanilla_transformer if transformer == "vanilla" else directional_transformer
    halt = {rnn.unit_names[0]: Fraction(1)}
    net = build(rnn, halt=halt)
    steps = 8
    trace = run(net, word, max_steps=steps)
    hs = rnn.run_inputs(rnn_inputs(transformer, word, len(trace.steps)))  # type: ignore[arg-type]
    prefix = "h:" if transformer == "vanilla" else "h1:"
    for t in range(len(trace.steps)):
        assert tuple(trace.value(t, f"{prefix}{u}") for u in rnn.unit_names) == hs[t]
    rnn_halt = next((t for t, h in enumerate(hs) if h[0] == 1), None)
    assert trace.halted_at == rnn_halt


# --------------------------------------------------------------------------- machine files


GOOD = {
    "format": "netproof-machine",
    "version": 1,
    "name": "m",
    "description": "",
    "states": ["q", "done"],
    "start": "q",
    "accept": ["done"],
    "input_alphabet": ["a"],
    "stack_alphabet": ["a", "b"],
    "transitions": [
        {"state": "q", "top1": "*", "top2": "*", "next": "done", "op1": "keep", "op2": "keep"}
    ],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, r"top level: unknown fields \['colour'\]"),
        (
            {"format": "netproof-network"},
            r'format: is .netproof-network.; a machine file says "format": "netproof-machine"',
        ),
        ({"version": 2}, r"version: 2 is not supported"),
        ({"states": "q"}, r"states: must be a list of non-empty strings"),
        ({"stack_alphabet": ["a", "*"]}, r"'\*' is the wildcard"),
        (
            {
                "transitions": [
                    {
                        "state": "q",
                        "top1": "a",
                        "top2": "",
                        "next": "q",
                        "op1": "push c",
                        "op2": "keep",
                    }
                ]
            },
            r"pushes 'c', which is not a stack symbol",
        ),
        (
            {
                "transitions": [
                    {
                        "state": "q",
                        "top1": "a",
                        "top2": "",
                        "next": "q",
                        "op1": "swap",
                        "op2": "keep",
                    }
                ]
            },
            r"transitions\[0\].op1: 'swap' is not keep, pop or push X",
        ),
        (
            {
                "transitions": [
                    {
                        "state": "q",
                        "top1": "*",
                        "top2": "",
                        "next": "q",
                        "op1": "pop",
                        "op2": "keep",
                    }
                ]
            },
            r"pops a stack that a '\*' allows to be empty",
        ),
        (
            {
                "transitions": [
                    *GOOD["transitions"],
                    {
                        "state": "q",
                        "top1": "a",
                        "top2": "",
                        "next": "q",
                        "op1": "keep",
                        "op2": "keep",
                    },
                ]
            },
            r"transitions\[1\]: overlaps transitions\[0\]",
        ),
        (
            {
                "transitions": [
                    {"state": "q", "top1": "a", "next": "q", "op1": "keep", "op2": "keep"}
                ]
            },
            r"transitions\[0\]: unknown fields \[\] / missing fields \['top2'\]",
        ),
    ],
)
def test_the_machine_reader_refuses_malformed_files_naming_the_field(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(MachineError, match=message):
        parse_machine(json.dumps({**GOOD, **change}), "m.json")


def test_the_machine_reader_refuses_duplicate_keys_and_non_json() -> None:
    with pytest.raises(MachineError, match=r"m.json: field 'name': appears twice"):
        parse_machine('{"name": "a", "name": "b"}', "m.json")
    with pytest.raises(MachineError, match=r"m.json: not JSON: Expecting value at line 1 column 1"):
        parse_machine("states: q", "m.json")


def test_a_machine_with_three_stack_symbols_is_refused_by_the_compiler_with_the_fix() -> None:
    _name, _d, m = parse_machine(json.dumps({**GOOD, "stack_alphabet": ["a", "b", "c"]}))
    with pytest.raises(
        MachineError, match=r"needs exactly two stack symbols.*encode larger alphabets in binary"
    ):
        compile_machine("m", m)


def test_a_users_machine_file_is_compiled_and_simulated(tmp_path: Path) -> None:
    path = tmp_path / "pop-all.json"
    path.write_text(
        json.dumps(
            {
                **GOOD,
                "name": "pop-all",
                "input_alphabet": ["a", "b"],
                "transitions": [
                    {
                        "state": "q",
                        "top1": "a",
                        "top2": "*",
                        "next": "q",
                        "op1": "pop",
                        "op2": "keep",
                    },
                    {
                        "state": "q",
                        "top1": "b",
                        "top2": "*",
                        "next": "q",
                        "op1": "pop",
                        "op2": "push a",
                    },
                ],
            }
        )
    )
    j = Job(TM, TM.parse_params({"machine": str(path)}))
    verdict = check(j, simulation(j), max_len=2)
    assert isinstance(verdict, Proved), verdict
    with pytest.raises(ValueError, match=r"machine='nope' is neither a shipped machine"):
        TM.parse_params({"machine": "nope"})


def test_a_machine_that_stops_in_a_busy_state_gets_one_more_configuration_in_halt_reject() -> None:
    cm = compiled_machine("balanced-parens")
    assert "halt:reject" in cm.states
    ticks = expected_ticks(cm, "vanilla", ())
    assert [str(c) for _t, c in ticks] == ["q [ε | ε]", "acc [ε | ε]"]


# --------------------------------------------------------------------------- the IR and its consumers


def test_the_printed_form_names_the_decoder_semantics_and_fingerprints_deterministically() -> None:
    net = tm_network(job().values)
    text = pretty(net)
    assert text.startswith(
        "seq2seq tm-sim-vanilla\n  reference: Bhattamishra et al. 2020, Theorem 4.1"
    )
    assert "  decoder pos pos_i += i+1(t)\n  decoder pos pos_1 += 1(t)\n" in text
    assert (
        "    self   head dec_self: scoring=dot scale=1 normalizer=hardmax(tie=average) mask=causal empty=zero"
        in text
    )
    assert fingerprint(net) == fingerprint(tm_network(job().values))
    assert fingerprint(net) != fingerprint(tm_network(job(variant="paper").values))


def test_a_decoder_self_attention_that_is_not_causal_is_refused() -> None:
    net = tm_network(job().values)
    layer = net.decoder[0]
    block = layer.self_attention.block
    head = block.heads[0]  # type: ignore[union-attr]
    from dataclasses import replace

    with pytest.raises(
        NetworkValidationError,
        match=r"self_attention head 'dec_self' has mask 'none'; it must be one of causal",
    ):
        replace(
            layer,
            self_attention=Sublayer(block=replace(block, heads=(replace(head, mask="none"),))),
        )


def test_the_batched_evaluator_and_the_torch_export_refuse_an_encoder_decoder_by_name() -> None:
    net = tm_network(job().values)
    assert isinstance(net, Seq2Seq)
    assert "is an encoder–decoder (Seq2Seq)" in (supports(net) or "")
    from netproof.symbolic.torch_export import StateDictError, layout

    with pytest.raises(
        StateDictError,
        match=r"encoder–decoder \(Seq2Seq\); the state_dict layout covers encoder-style",
    ):
        layout(net)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- CLI


def test_run_trace_shows_each_configuration_next_to_the_decoder_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "tm-sim", "0110", "-p", "machine=binary-increment", "--trace"]) == 0
    out = capsys.readouterr().out
    assert (
        "word: 0110 (4 symbols)   encoder tokens: 0 1 1 0 $ (1 special)   n = 5 positions   d = 142"
        in out
    )
    assert "   1  1@2        ST=1  pA=1/4  e1=1/4\n" in out
    assert (
        "   6  $@5        config 0: decoder holds right [0110 | ε]  =  machine right [0110 | ε]\n"
        in out
    )
    assert "   7  $@5        C1=125/256  N1=1  D:right/0/E=1\n" in out
    assert (
        "  26  -          config 10: decoder holds done [0111 | ε]  =  machine done [0111 | ε]\n"
        in out
    )
    assert out.endswith(
        "the decoder halts at step t = 26   (exact)\nmachine: halts in configuration 10: done [0111 | ε]\n"
    )


def test_run_json_reports_the_halting_step_and_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "tm-sim", "(", "-p", "transformer=directional", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["halted_at"], record["machine"]) == (
        8,
        {"configuration": 2, "halting": "rej [ε | (]"},
    )
    assert record["tokens"] == ["#", "(", "$"]


def test_export_writes_an_encoder_decoder_file_and_refuses_a_state_dict_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["export", "tm-sim"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["network"]["type"]) == ("netproof-seq2seq", "Seq2Seq")
    tm = REGISTRY["tm-sim"]
    assert doc["fingerprint"] == fingerprint(tm.network(tm.parse_params({})))
    assert (
        main(["export", "tm-sim", "--format", "state_dict", "--out", str(tmp_path / "x.pt")]) == 2
    )
    assert "state_dict and torch exports hold transformer-style" in capsys.readouterr().err


# --------------------------------------------------------------------------- random machines


@FEW
@given(
    machine=two_stack_machines(input_alphabet=("a",), extra_stack_symbols=1, max_states=3),
    word=st.lists(st.just("a"), max_size=3).map(tuple),
    convention=st.sampled_from(TRANSFORMERS),
)
def test_random_two_stack_machines_compile_to_rnns_that_hold_every_configuration(
    machine, word, convention
) -> None:  # type: ignore[no-untyped-def]
    cm = compile_machine("random", machine)
    confs = machine.configurations(word, max_steps=12)
    halted = machine.run(word, max_steps=12).accepted is not None
    pairs = [(cm.tick(k, len(word), convention), c) for k, c in enumerate(confs)]
    if halted and confs[-1].state not in machine.halting_states():
        target = "halt:accept" if confs[-1].state in machine.accept else "halt:reject"
        pairs.append(
            (pairs[-1][0] + 2, type(confs[-1])(target, confs[-1].stack1, confs[-1].stack2))
        )
    hs = cm.rnn.run_inputs(rnn_inputs(convention, word, pairs[-1][0] + 1))
    for tick, conf in pairs:
        h = dict(zip(cm.rnn.unit_names, hs[tick], strict=True))
        assert cm.decode(h) == conf
        assert all(h[a] == 0 for a in cm.a_neurons())
    halting = [
        t
        for t, h in enumerate(hs)
        if sum(dict(zip(cm.rnn.unit_names, h, strict=True))[f"S:{q}"] for q in cm.halting) == 1
    ]
    assert (halting[:1] == [pairs[-1][0]]) if halted else halting == []


# --------------------------------------------------------------------------- Proposition 4.3, tight


def test_proposition_4_3_is_tight_every_nonzero_query_gives_its_own_attention_output() -> None:
    c = REGISTRY["prop43-tight"]
    j = Job(c, c.parse_params({}))
    verdict = check(j, c.claims(j.values)[0])
    assert isinstance(verdict, Proved), verdict
    assert verdict.checked == 7


def test_a_leftmost_tie_rule_collapses_the_outputs_and_the_tightness_claim_is_refuted() -> None:
    from dataclasses import replace as rep

    from netproof.constructions.bhattamishra2020 import prop43_network
    from netproof.symbolic import Hardmax
    from netproof.verifier.claims import Construction

    net = prop43_network()
    layer = net.decoder[0]
    block = layer.cross_attention.block
    head = rep(block.heads[0], normalizer=Hardmax(tie="leftmost"))  # type: ignore[union-attr]
    mutant_net = rep(
        net, decoder=(rep(layer, cross_attention=Sublayer(block=rep(block, heads=(head,)))),)
    )
    c = REGISTRY["prop43-tight"]
    mutant = Construction(
        name="mutant",
        paper_id="t",
        title="",
        reference="",
        params=(),
        build=lambda _v: mutant_net,
        claims=c.claims,
    )
    verdict = check(Job(mutant, {}), c.claims({})[0])
    assert isinstance(verdict, Refuted)
    assert (
        verdict.detail
        == "on '12': the attention output takes 2 distinct values, expected exactly 2^2 − 1 = 3"
    )
