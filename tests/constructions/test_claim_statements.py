"""Claims say what they check: a ValueIs claim that reads one residual dim (a StateValue) names that
quantity in its statement, and no statement names a dim of its block that the claim does not
check (PARITY's C3-count once said "k/n and 1/n" and checked only k/n)."""

from __future__ import annotations

import re

import pytest

from netproof.constructions import REGISTRY
from netproof.verifier.claims import Simulates, StateValue, ValueIs


def state_value_claims() -> list[tuple[str, str, ValueIs]]:
    out = []
    for name, c in REGISTRY.items():
        for variant in ({}, {"variant": "paper"}):
            try:
                values = c.parse_params(variant)
            except (KeyError, ValueError):
                continue
            for claim in c.claims(values):
                if isinstance(claim, ValueIs) and isinstance(claim.quantity, StateValue):
                    out.append((name, claim.id, claim))
    return out


CLAIMS = state_value_claims()


def names_quantity(claim: ValueIs) -> bool:
    q = claim.quantity
    assert isinstance(q, StateValue)
    head = re.fullmatch(r"y:(\w+)", q.dim)
    channel = re.fullmatch(r"[a-z](\d+)", q.dim)
    return (
        q.dim in claim.statement
        or (head is not None and f"head '{head.group(1)}'" in claim.statement)
        or (
            channel is not None
            and f"channel {channel.group(1)} of block '{q.after}'" in claim.statement
        )
    )


def test_there_are_state_value_claims_to_check() -> None:
    assert {cid for _n, cid, _c in CLAIMS} >= {"C3-count", "C3-1/n", "C3-fig1", "N4", "N2-u1"}


@pytest.mark.parametrize(
    ("name", "cid", "claim"), CLAIMS, ids=[f"{n}-{cid}" for n, cid, _c in CLAIMS]
)
def test_a_state_value_claim_names_the_quantity_it_checks(
    name: str, cid: str, claim: ValueIs
) -> None:
    assert names_quantity(claim), (name, cid, claim.statement, claim.quantity)


@pytest.mark.parametrize(
    ("name", "cid", "claim"), CLAIMS, ids=[f"{n}-{cid}" for n, cid, _c in CLAIMS]
)
def test_a_state_value_claim_names_no_other_dim_of_its_network_as_written(
    name: str, cid: str, claim: ValueIs
) -> None:
    c = REGISTRY[name]
    net = c.network(c.parse_params({}), 2) if c.per_length else c.network(c.parse_params({}))
    q = claim.quantity
    assert isinstance(q, StateValue)
    others = [
        d
        for d in net.dims
        if d != q.dim
        and len(d) > 2
        and re.search(rf"writes[^,;]*\b{re.escape(d)}(?![\w\]/])", claim.statement)
    ]
    assert others == [], (claim.statement, others)


def test_parity_c3_count_states_only_k_over_n() -> None:
    c = REGISTRY["parity"]
    claim = next(x for x in c.claims(c.parse_params({})) if x.id == "C3-count")
    assert claim.statement == "layer 1 writes k/n at every position"


def simulates_claims() -> list[tuple[str, str, Simulates]]:
    out = []
    for name, c in REGISTRY.items():
        if name != "tm-sim":
            continue
        for values in ({}, {"transformer": "directional"}):
            for claim in c.claims(c.parse_params(values)):
                if isinstance(claim, Simulates) and claim.machine is not None:
                    out.append((name, claim.id, claim))
    return out


def test_a_simulation_claim_states_only_the_block_of_y_t_it_compares() -> None:
    # The checker compares claim.hidden (the h block) with the RNN's state, not the rest of the
    # paper's invariant y_t = [h_t, 0, 0, t+1, 1]: the statement says "the h block of y_t".
    claims = simulates_claims()
    assert {cid for _n, cid, _c in claims} == {"B6", "B8"}
    for _name, cid, claim in claims:
        assert "y_t = [" not in claim.statement, (cid, claim.statement)
        block = claim.hidden[0].split(":")[0]
        assert f"the {block.replace('1', '₁')} block of y_t" in claim.statement, (
            cid,
            claim.statement,
            claim.hidden,
        )
