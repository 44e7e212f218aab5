"""A verifier that never finds a bug is worthless (STYLE.md §8).

Every nonzero number of the PARITY and FIRST transformers (embedding rows, positional
coefficients, query/key/value maps, FFN steps, the heads' output map and the readout) is
perturbed by +1/2 and by −1/2, one at a time. Each mutant is checked against the reference
language at |w| ≤ 6 with the exact backend, and the verdict is compared with a plain
enumeration done here:

- the mutant gets some word wrong → the checker must say ``Refuted`` with the shortlex-first
  wrong word, and re-running the mutant on that word must reproduce the error;
- the mutant gets every word right → it is equivalent to the original up to 6 (the checker must
  say ``Proved``, and the enumeration shows why).

The base is E = 4 (c = ln 4), so a weight of ±1/2 in a score still gives rational softmax
weights (4^{1/2} = 2). The exact backend refuses such weights (it asks for integer exponent
differences), so the few mutants it refuses are checked with the sympy backend, whose values
are the same rationals.

The SMT method is held to the same standard (the second half of this file): every mutant of
PARITY and FIRST up to |w| = 5, and of Dyck(2,2) (every 40th site up to |w| = 3 by default; all
1242 mutants up to |w| = 4 with ``-m slow``), checked with ``recognizes_smt`` next to an
enumeration: a mutant that gets a word wrong must be ``Refuted`` with the shortlex-first wrong
word, one that gets every word right ``Proved`` (reported as equivalent), one the encoder cannot
encode exactly ``Unknown("unsupported: ...")``, never a verdict.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest
import sympy
from weight_mutants import get_at, replace_at, weight_sites, with_weight

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.symbolic import (
    Affine,
    InexactNumberError,
    Network,
    NetworkValidationError,
    NotRationalError,
)
from netproof.symbolic.exact import run as run_exact
from netproof.symbolic.sympy_interp import run as run_sympy
from netproof.verifier.claims import (
    Construction,
    Language,
    Output,
    Proved,
    Recognizes,
    Refuted,
    Unknown,
    ValueIs,
    Verdict,
)
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.smt.monolithic import recognizes_smt

MAX_LEN = 6
DELTAS = (Fraction(1, 2), Fraction(-1, 2))
Path = tuple[str | int, ...]

# Numbers that are not weights: the softmax base, score scales, layer-norm epsilons.


def job_for(net: Network, language: Language) -> Job:
    c = Construction(
        name=net.name,
        paper_id="mutant",
        title="mutant",
        reference="mutant",
        params=(),
        build=lambda values: net,
        claims=lambda values: (),
        language=language,
    )
    return Job(c, {})


def backend_for(net: Network, words: list[tuple[str, ...]]) -> str:
    """``exact`` if the exact backend evaluates ``net`` on every word, else ``sympy``."""
    try:
        for w in words:
            run_exact(net, w)
    except NotRationalError:
        return "sympy"
    return "exact"


def evaluate(net: Network, word: tuple[str, ...], backend: str) -> tuple[bool | None, Fraction]:
    """The accept bit and the logit as a Fraction, with the named backend."""
    if backend == "exact":
        trace = run_exact(net, word)
        assert isinstance(trace.output, Fraction)
        return trace.accepted, trace.output
    trace = run_sympy(net, word)
    out = sympy.nsimplify(trace.output)
    assert out.is_Rational, f"{net.name} on {word}: {trace.output} is not rational"
    return trace.accepted, Fraction(int(out.p), int(out.q))


def all_words() -> list[tuple[str, ...]]:
    return [w for n in range(MAX_LEN + 1) for w in itertools.product("01", repeat=n)]


def describe(net: Network, path: Path) -> str:
    """A readable name for a site, in the network's own names: ``fig1.steps[2] W[I[i=k]/n,
    relu(k-i)/n]``, ``parity.heads[0].key W[q, cos(iπ)]``, ``embedding[CLS, I[w=CLS]]``."""
    if path[:2] == ("embedding", "table"):
        token, row = net.embedding.table[path[2]]  # type: ignore[union-attr, index]
        return f"embedding[{token}, {row[path[4]][0]}]"  # type: ignore[index]
    if path[:2] == ("embedding", "positional"):
        dim, feature, _coef = net.embedding.positional[path[2]]  # type: ignore[union-attr, index]
        return f"positional[{dim} += coef·{feature}]"
    for cut in range(len(path), 0, -1):
        node = get_at(net, path[:cut])
        if isinstance(node, Affine):
            rest = path[cut:]
            entry = (
                f"W[{node.outputs[rest[1]]}, {node.inputs[rest[2]]}]"
                if rest[0] == "weights"
                else f"b[{node.outputs[rest[1]]}]"
            )  # type: ignore[index]
            break
    else:  # pragma: no cover - every weight site lies in an Affine or the embedding
        raise AssertionError(path)
    where = path[:cut]
    if where[0] == "layers":
        head = f"{net.layers[where[1]].name}"  # type: ignore[index]
        where = where[3:]
    else:
        head, where = str(where[0]), where[1:]
    return head + "".join(f".{k}" if isinstance(k, str) else f"[{k}]" for k in where) + " " + entry


# --------------------------------------------------------------------------- the helpers


def test_replace_at_changes_exactly_one_weight_and_revalidates_the_network() -> None:
    net = parity_transformer()
    sites = list(weight_sites(net))
    path = next(p for p in sites if p[:2] == ("readout", "logit"))
    mutant = with_weight(net, path, Fraction(1, 2))
    assert get_at(mutant, path) == get_at(net, path) + Fraction(1, 2)
    assert [get_at(mutant, p) for p in sites if p != path] == [
        get_at(net, p) for p in sites if p != path
    ]
    assert net.readout.logit.weights[0][0] == 1  # the original is untouched (frozen)
    # Rebuilding goes through validation: a non-Fraction weight is refused.
    with pytest.raises(InexactNumberError, match="int; IR fields hold Fractions"):
        replace_at(net, path, 3)
    # ... and so does a dim name that the network does not have.
    with pytest.raises(NetworkValidationError, match="nowhere"):
        replace_at(net, ("readout", "logit", "inputs"), ("nowhere",))


@pytest.mark.parametrize("build", [parity_transformer, first_transformer])
def test_the_sites_cover_embeddings_positional_features_attention_ffn_and_readout(
    build: Callable[..., Network],
) -> None:
    net = build("ln(4)")
    sites = list(weight_sites(net))
    kinds = {p[1] if p[0] == "embedding" else p[0] for p in sites}
    assert {"table", "positional", "readout", "layers"} <= kinds
    named = {describe(net, p) for p in sites}
    assert (
        any(".query " in d for d in named)
        and any(".key " in d for d in named)
        and any(".value " in d for d in named)
    )
    assert any(".steps[" in d for d in named)
    assert all(get_at(net, p) != 0 for p in sites)


# --------------------------------------------------------------------------- mutation runs


def mutation_run(net: Network, language: Language, capsys: pytest.CaptureFixture[str]) -> None:
    words = all_words()
    claim = Recognizes(
        id="C4", statement="recognizes", reference="mutation", language=language, max_len=MAX_LEN
    )
    assert isinstance(check(job_for(net, language), claim), Proved), "the original must be correct"
    killed: list[str] = []
    equivalent: list[str] = []
    via_sympy: list[str] = []
    for path in weight_sites(net):
        for delta in DELTAS:
            mutant = with_weight(net, path, delta)
            name = f"{describe(net, path)} {get_at(net, path)} → {get_at(mutant, path)}"
            backend = backend_for(mutant, words)
            if backend != "exact":
                via_sympy.append(name)
            verdict = check(job_for(mutant, language), dataclasses.replace(claim, backend=backend))
            # The enumeration, independent of the checker's search.
            wrong = [w for w in words if evaluate(mutant, w, backend)[0] != language.contains(w)]
            if wrong:
                assert isinstance(verdict, Refuted), f"mutant not killed: {name}: {verdict}"
                assert verdict.word == wrong[0], f"{name}: not the shortest counterexample"
                accepted, logit = evaluate(mutant, verdict.word, backend)
                assert accepted != language.contains(verdict.word)
                assert backend != "exact" or verdict.values["logit"] == str(logit)
                killed.append(name)
            else:
                assert isinstance(verdict, Proved), f"{name}: {verdict}"
                assert verdict.checked == len(words)
                equivalent.append(name)
    total = len(killed) + len(equivalent)
    with capsys.disabled():
        print(
            f"\n[mutation] {net.name}: {len(killed)}/{total} mutants killed "
            f"({100 * len(killed) / total:.0f}%), {len(equivalent)} equivalent up to |w| = {MAX_LEN}; "
            f"kill rate among non-equivalent mutants: {len(killed)}/{len(killed)} = 100%; "
            f"{len(via_sympy)} checked with the sympy backend (the exact one refuses 4^(k/2))"
        )
        for name in equivalent:
            print(f"[mutation]   equivalent: {name}")
    assert killed, "a verifier that kills no mutant is worthless"


@pytest.mark.slow  # 17 s; the default run keeps FIRST's exhaustive run and PARITY's smt and sampled ones
def test_every_parity_mutant_that_changes_an_accept_bit_up_to_6_is_refuted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    mutation_run(parity_transformer("ln(4)"), PARITY, capsys)


def test_every_first_mutant_that_changes_an_accept_bit_up_to_6_is_refuted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    mutation_run(first_transformer("ln(4)"), FIRST, capsys)


def test_every_first_mutant_that_changes_the_logit_up_to_6_is_refuted_by_the_closed_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Most FIRST mutants keep every accept bit (the margin is wide), so the accept-bit claim
    cannot see them; the closed-form claim C6 (s = E/(E+n−1)(I[w₁=1] − ½)) must."""
    net = first_transformer("ln(4)")
    E = Fraction(4)

    def closed_form(p: Any) -> Fraction:
        return (
            Fraction(0)
            if p.n == 1
            else E / (E + p.n - 1) * (int(p.word[0] == "1") - Fraction(1, 2))
        )

    claim = ValueIs(
        id="C6",
        statement="closed form",
        reference="§2.3",
        quantity=Output(),
        expected=closed_form,
        max_len=MAX_LEN,
    )
    words = all_words()
    original = {w: evaluate(net, w, "exact")[1] for w in words}
    killed = unchanged = 0
    for path in weight_sites(net):
        for delta in DELTAS:
            mutant = with_weight(net, path, delta)
            backend = backend_for(mutant, words)
            verdict = check(job_for(mutant, FIRST), dataclasses.replace(claim, backend=backend))
            moved = [w for w in words if evaluate(mutant, w, backend)[1] != original[w]]
            if moved:
                assert isinstance(verdict, Refuted), (describe(net, path), delta, verdict)
                assert verdict.word == moved[0]
                killed += 1
            else:
                assert isinstance(verdict, Proved)
                unchanged += 1
    with capsys.disabled():
        print(
            f"\n[mutation] first, closed form C6: {killed}/{killed + unchanged} mutants killed, {unchanged} leave s unchanged up to |w| = {MAX_LEN}"
        )
    assert killed > 0


def test_the_exact_backend_evaluates_a_softmax_whose_weights_are_rational_powers_of_the_base() -> (
    None
):
    net = first_transformer("ln(4)")
    path = next(p for p in weight_sites(net) if describe(net, p).startswith("att2.heads[0].key "))
    mutant = with_weight(net, path, Fraction(1, 2))  # key 3/2: scores 0 and 3/2 at the CLS query
    trace = run_exact(mutant, "1")
    # weights ∝ (4^0, 4^{3/2}) = (1, 8) over (CLS, w₁); s = 8/9·(1 − ½)
    assert trace.output == Fraction(8, 9) * Fraction(1, 2)


# --------------------------------------------------------------------------- the SMT method


@dataclass
class Tally:
    killed: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)

    def line(self, name: str, bound: int) -> str:
        changed = len(self.killed)
        total = changed + len(self.equivalent) + len(self.unsupported)
        return (
            f"[smt mutation] {name}: {total} mutants up to |w| = {bound}: {changed} change the function and "
            f"{changed} are refuted by SMT (kill rate {changed}/{changed} = 100%); {len(self.equivalent)} "
            f"equivalent up to {bound}; {len(self.unsupported)} unsupported by the encoder"
        )


def first_wrong(net: Network, language: Language, bound: int) -> tuple[str, ...] | str | None:
    """The shortlex-first word the network gets wrong up to ``bound`` (exact interpreter), None
    if there is none, or "not rational" when the exact interpreter refuses the network."""
    for m in range(bound + 1):
        for w in itertools.product(language.alphabet, repeat=m):
            try:
                accepted = run_exact(net, w).accepted
            except NotRationalError:
                return "not rational"
            if accepted != language.contains(w):
                return w
    return None


def prover_mutation_run(
    net: Network,
    language: Language,
    bound: int,
    keep: Callable[[int], bool],
    prove: Callable[[Network], tuple[Verdict, int | None]],
) -> Tally:
    """Each kept single-weight mutant of ``net`` through ``prove`` (its verdict, and the
    length up to which it says every word was proved, or None), against the exact interpreter:
    a mutant that goes wrong up to ``bound`` must be refuted with the shortlex-first wrong word."""
    tally = Tally()
    for i, path in enumerate(weight_sites(net)):
        if not keep(i):
            continue
        for delta in DELTAS:
            mutant = with_weight(net, path, delta)
            name = f"{describe(net, path)} {get_at(net, path)} → {get_at(mutant, path)}"
            verdict, proved_up_to = prove(mutant)
            truth = first_wrong(mutant, language, bound)
            if isinstance(verdict, Unknown):
                assert verdict.reason.startswith("unsupported: "), f"{name}: {verdict}"
                tally.unsupported.append(name)
            elif truth is None:
                assert isinstance(verdict, Proved), f"{name}: {verdict}"
                tally.equivalent.append(name)
            else:
                assert isinstance(verdict, Refuted), f"mutant not killed: {name}: {verdict}"
                assert verdict.word is not None
                if truth != "not rational":
                    assert verdict.word == truth, (
                        f"{name}: {verdict.word} is not the shortlex-first wrong word {truth}"
                    )
                    assert run_exact(mutant, verdict.word).accepted != language.contains(
                        verdict.word
                    )
                    if proved_up_to is not None:
                        assert proved_up_to == len(truth) - 1
                tally.killed.append(name)
    return tally


def smt_mutation_run(
    net: Network, language: Language, bound: int, keep: Callable[[int], bool] = lambda i: True
) -> Tally:
    assert isinstance(recognizes_smt(lambda m: net, language, 0, bound).verdict, Proved), (
        "the original must be proved"
    )
    return prover_mutation_run(
        net,
        language,
        bound,
        keep,
        lambda mutant: (
            recognizes_smt(lambda m: mutant, language, 0, bound, timeout=600).verdict,
            None,
        ),
    )


def report(capsys: pytest.CaptureFixture[str], tally: Tally, name: str, bound: int) -> None:
    with capsys.disabled():
        print("\n" + tally.line(name, bound))
        for m in tally.unsupported:
            print(f"[smt mutation]   unsupported: {m}")
    assert tally.killed, "a verifier that kills no mutant is worthless"


def test_every_parity_mutant_that_changes_an_accept_bit_up_to_5_is_refuted_by_smt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report(capsys, smt_mutation_run(parity_transformer("ln(4)"), PARITY, 5), "PARITY", 5)


def test_every_first_mutant_that_changes_an_accept_bit_up_to_5_is_refuted_by_smt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report(capsys, smt_mutation_run(first_transformer("ln(4)"), FIRST, 5), "FIRST", 5)


def dyck22() -> Network:
    c = REGISTRY["dyck"]
    return c.network(c.parse_params({"k": "2", "depth": "2"}))


# The default run takes a sparser sample of the same sites (CI's time); -m slow the denser one.
SPARSE_OR_DENSE = "every"


@pytest.mark.parametrize(
    SPARSE_OR_DENSE,
    [
        pytest.param(120, id="every-120th", marks=pytest.mark.slow),
        pytest.param(40, id="every-40th", marks=pytest.mark.slow),
    ],
)
def test_every_nth_dyck_site_mutant_that_changes_an_accept_bit_up_to_3_is_refuted_by_smt(
    capsys: pytest.CaptureFixture[str],
    every: int,
) -> None:
    report(
        capsys,
        smt_mutation_run(dyck22(), DYCK(2, 2), 3, keep=lambda i: i % every == 0),
        f"Dyck(2,2), every {every}th site",
        3,
    )


@pytest.mark.slow
def test_every_dyck_mutant_that_changes_an_accept_bit_up_to_4_is_refuted_by_smt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report(capsys, smt_mutation_run(dyck22(), DYCK(2, 2), 4), "Dyck(2,2)", 4)


def test_a_sample_mutant_changes_exactly_the_weight_it_names() -> None:
    net = dyck22()
    path = next(iter(weight_sites(net)))
    assert get_at(with_weight(net, path, Fraction(1, 2)), path) == get_at(net, path) + Fraction(
        1, 2
    )


# --------------------------------------------------------------------------- compositional proofs over ranges of lengths


def compositional_mutation_run(
    k: int, depth: int, bound: int, keep: Callable[[int], bool]
) -> Tally:
    """Each kept single-weight mutant of the Dyck(k, depth) recognizer through the compositional
    proof (lemmas, then one query over every length 0..bound), against the exact interpreter."""
    from netproof.verifier.smt.compositional import prove_recognizes

    construction = REGISTRY["dyck"]
    values = construction.parse_params({"k": str(k), "depth": str(depth)})
    net = construction.network(values)
    assert construction.lemmas is not None
    lemmas = construction.lemmas(values)
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    assert isinstance(prove_recognizes(net, claim, lemmas, bound).verdict, Proved), (
        "the original must be proved"
    )

    def prove(mutant: Network) -> tuple[Verdict, int | None]:
        progress = prove_recognizes(mutant, claim, lemmas, bound, timeout=600)
        return progress.verdict, progress.proved_up_to

    return prover_mutation_run(net, DYCK(k, depth), bound, keep, prove)


@pytest.mark.parametrize(
    SPARSE_OR_DENSE,
    [
        pytest.param(24, id="every-24th", marks=pytest.mark.slow),
        pytest.param(8, id="every-8th", marks=pytest.mark.slow),
    ],
)
def test_every_nth_dyck11_site_mutant_is_refuted_by_the_compositional_proof_over_a_range_of_lengths_with_the_first_wrong_word(
    capsys: pytest.CaptureFixture[str],
    every: int,
) -> None:
    report(
        capsys,
        compositional_mutation_run(1, 1, 6, keep=lambda i: i % every == 0),
        f"Dyck(1,1), every {every}th site, compositional",
        6,
    )


@pytest.mark.slow
def test_every_10th_dyck22_site_mutant_is_refuted_by_the_compositional_proof_over_a_range_of_lengths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report(
        capsys,
        compositional_mutation_run(2, 2, 4, keep=lambda i: i % 10 == 0),
        "Dyck(2,2), every 10th site, compositional",
        4,
    )


@pytest.mark.parametrize(
    SPARSE_OR_DENSE,
    [pytest.param(6, id="every-6th"), pytest.param(1, id="every", marks=pytest.mark.slow)],
)
def test_each_sampled_parity_mutant_is_refuted_with_its_first_wrong_word_or_proved_and_a_proof_for_every_length_holds_beyond_the_bound(
    capsys: pytest.CaptureFixture[str],
    every: int,
) -> None:
    """The compositional proof of PARITY (the position-classes query for every length, else one
    query per length) on every single-weight mutant of the ln(4) network: a mutant that goes
    wrong up to 6 is refuted with its first wrong word; one proved for every length is checked
    exhaustively up to 9 as well, since that proof says more than the bound."""
    from netproof.verifier.smt.compositional import prove_recognizes

    construction = REGISTRY["parity"]
    values = construction.parse_params({"c": "ln(4)"})
    net = construction.network(values)
    assert construction.lemmas is not None
    lemmas = construction.lemmas(values)
    claim = next(c for c in construction.claims(values) if isinstance(c, Recognizes))
    original = prove_recognizes(net, claim, lemmas, 6)
    assert isinstance(original.verdict, Proved) and original.every_length, (
        "the original must be proved for every length"
    )
    for_every_length: list[Network] = []

    def prove(mutant: Network) -> tuple[Verdict, int | None]:
        progress = prove_recognizes(mutant, claim, lemmas, 6, timeout=600)
        if progress.every_length:
            for_every_length.append(mutant)
        return progress.verdict, progress.proved_up_to

    tally = prover_mutation_run(net, PARITY, 6, lambda i: i % every == 0, prove)
    assert for_every_length, (
        "some mutant (a weight that changes nothing) is proved for every length"
    )
    for mutant in for_every_length:
        assert first_wrong(mutant, PARITY, 9) is None
    with capsys.disabled():
        print(
            f"\n[smt mutation] PARITY, compositional (sites i with i % {every} == 0): {len(for_every_length)} mutants proved for every length (and checked exhaustively up to 9)"
        )
    report(capsys, tally, "PARITY, compositional", 6)


@pytest.mark.parametrize(
    SPARSE_OR_DENSE,
    [pytest.param(6, id="every-6th"), pytest.param(1, id="every", marks=pytest.mark.slow)],
)
def test_each_sampled_parity_mutant_layer_value_is_proved_for_every_length_only_where_it_holds_and_else_refuted_with_a_replayed_word(
    every: int,
) -> None:
    """PARITY's closed-form claims C3-count, C3-1/n and C3-fig1 over position classes (one query
    for every length) on every single-weight mutant of the ln(4) network: unsat only where the
    exact interpreter agrees with the closed form on every word up to 6, and a model word that
    the exact interpreter refutes otherwise (replay_value raises on an encoder bug)."""
    from netproof.verifier.exhaustive.checker import value_is_body
    from netproof.verifier.smt.closed_forms import replay_value
    from netproof.verifier.smt.compositional import LemmaResult as _LemmaResult
    from netproof.verifier.smt.compositional import prove_lemma
    from netproof.verifier.smt.compositional.classes import value_query

    construction = REGISTRY["parity"]
    values = construction.parse_params({"c": "ln(4)"})
    net = construction.network(values)
    assert construction.lemmas is not None
    claims = [
        c
        for c in construction.claims(values)
        if isinstance(c, ValueIs) and c.closed_form is not None
    ]
    words = [w for m in range(7) for w in itertools.product(PARITY.alphabet, repeat=m)]
    tally: dict[str, int] = {"proved": 0, "refuted": 0}
    for path in itertools.islice(weight_sites(net), 0, None, every):
        for delta in DELTAS:
            mutant = with_weight(net, path, delta)
            results = [
                _LemmaResult(lemma, *prove_lemma(mutant, lemma))
                for lemma in construction.lemmas(values)
            ]
            traces = [(w, run_exact(mutant, w)) for w in words]
            for claim in claims:
                _ctx, solver, enc = value_query(mutant, claim, results)
                answer = str(solver.check())
                name = f"{describe(net, path)} → {get_at(mutant, path)}, {claim.id}"
                if answer == "unsat":
                    wrong = [
                        w
                        for w, trace in traces
                        if isinstance(
                            value_is_body(claim, PARITY.alphabet, "exhaustive", None)(w, trace),
                            Refuted,
                        )
                    ]
                    assert not wrong, f"{name}: proved for every length, but wrong on {wrong[:3]}"
                else:
                    assert answer == "sat", f"{name}: {answer}"
                    replay_value(
                        mutant, claim, PARITY.alphabet, enc.word_of(solver.model()), "test"
                    )
                tally["proved" if answer == "unsat" else "refuted"] += 1
    assert tally["proved"] and tally["refuted"], tally
