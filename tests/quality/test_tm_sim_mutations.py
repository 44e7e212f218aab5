"""Quality: the step-by-step simulation check finds a single wrong weight in either transformer."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from netproof.constructions import REGISTRY
from netproof.constructions.bhattamishra2020 import (
    compiled_machine,
    directional_transformer,
    vanilla_transformer,
)
from netproof.verifier.claims import Construction, Refuted, Simulates
from netproof.verifier.exhaustive.checker import Job, check

TM = REGISTRY["tm-sim"]


@pytest.mark.parametrize("transformer", ["vanilla", "directional"])
def test_one_perturbed_rnn_weight_inside_the_transformer_is_refuted_with_its_first_failing_step(
    transformer: str,
) -> None:
    values = TM.parse_params({"machine": "reverse", "transformer": transformer})
    cm = compiled_machine("reverse")
    rnn = cm.rnn
    r = rnn.unit_names.index("Cb2.push0")
    rows = [list(row) for row in rnn.W_h]
    rows[r][rnn.unit_names.index("C2")] += Fraction(1, 64)  # push a slightly wrong code
    wrong = replace(rnn, W_h=tuple(tuple(row) for row in rows))
    build = vanilla_transformer if transformer == "vanilla" else directional_transformer
    net = build(wrong, halt=cm.halt_weights, fb={"a": "a", "b": "b"})
    mutant = Construction(
        name="tm-sim-mutant",
        paper_id="test",
        title="",
        reference="",
        params=TM.params,
        build=lambda _values: net,
        claims=TM.claims,
        max_steps=TM.max_steps,
    )
    job = Job(mutant, values)
    claim = next(c for c in TM.claims(values) if isinstance(c, Simulates))
    verdict = check(job, claim, max_len=2)
    assert isinstance(verdict, Refuted)
    assert verdict.word == ("a", "a")
    assert "y_" in verdict.detail and "Cb2.push0" in verdict.detail
