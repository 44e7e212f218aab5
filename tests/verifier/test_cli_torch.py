"""``netproof run --backend torch`` (``--device``, ``--dtype``, ``--check``, ``@FILE``) and
``netproof fuzz --backend torch``, run in-process through :func:`netproof.verifier.cli.main`; one test runs
a fresh process as a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Head,
    Network,
    Sublayer,
    affine,
    classifier,
    constant,
    token_embedding,
)
from netproof.verifier.claims import (
    Construction,
    Language,
    Recognizes,
    Refuted,
    Unknown,
)
from netproof.verifier.cli import main
from netproof.verifier.exhaustive.checker import Job
from netproof.verifier.fuzzing.fuzz import FloatIssue, fuzz

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.torch

REPO = Path(__file__).resolve().parents[2]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_with_the_torch_backend_prints_the_float_logit_and_its_hardmax_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "run", "dyck", "(())", "--backend", "torch")
    assert code == 0
    assert "(torch float64 on cpu: evidence, not proof)" in out
    assert "hardmax: smallest score gap 0.166667; unresolved ties: 0" in out
    assert "accepted (s > 0); Dyck(2,2): member" in out


def test_run_json_with_torch_keeps_the_exact_fields_and_adds_device_dtype_gap_and_ties(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys, "run", "parity", "0110", "--backend", "torch", "--dtype", "float32", "--json"
    )
    assert code == 0
    record = json.loads(out)
    exact_code, exact_out, _ = run_cli(capsys, "run", "parity", "0110", "--json")
    assert exact_code == 0
    assert set(json.loads(exact_out)) <= set(record)
    assert record["backend"] == "torch"
    assert (record["device"], record["dtype"]) == ("cpu", "float32")
    assert record["accepted"] is False and record["member"] is False
    assert abs(float(record["output"]) - float(Fraction(-3, 77))) < 1e-6
    assert record["min_gap"] is None  # parity's heads are softmax: no hardmax gap met
    assert record["unresolved_ties"] == {"count": 0, "first": []}
    assert "agreement" not in record


def test_run_check_reports_agreement_with_the_exact_interpreter_in_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "run", "dyck", "([])", "--backend", "torch", "--check", "--json")
    assert code == 0
    agreement = json.loads(out)["agreement"]
    assert agreement["agree"] is True
    assert (agreement["words"], agreement["disagreements"], agreement["first_disagreements"]) == (
        1,
        0,
        [],
    )
    assert agreement["exact_backends"] == ["exact"]
    assert agreement["max_logit_error"] == 0.0
    assert agreement["min_gap"] == pytest.approx(1 / 6)


def test_run_check_exits_1_and_names_the_disagreement_when_float16_breaks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    word = tmp_path / "long_word.txt"
    word.write_text("([])" * 300 + "\n", encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "run", "dyck", f"@{word}", "--backend", "torch", "--dtype", "float16", "--check"
    )
    assert code == 1
    assert "word: " + "([])" * 7 + "([... (1200 symbols)   n = 1202 positions" in out
    assert (
        "check: DISAGREES with the exact interpreter on the accept bit: float False, exact True"
        in out
    )


def test_a_word_read_from_a_file_is_the_same_word(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "w.txt"
    path.write_text("0110\n", encoding="utf-8")
    _, from_file, _ = run_cli(capsys, "run", "parity", f"@{path}", "--backend", "torch", "--json")
    _, typed, _ = run_cli(capsys, "run", "parity", "0110", "--backend", "torch", "--json")
    assert json.loads(from_file) == json.loads(typed)


def test_a_missing_word_file_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli(
        capsys, "run", "parity", f"@{tmp_path / 'nope.txt'}", "--backend", "torch"
    )
    assert code == 2
    assert "cannot read the word from" in err and "nope.txt" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_device_cuda_without_cuda_exits_2_naming_the_value_and_the_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "run", "parity", "01", "--backend", "torch", "--device", "cuda")
    assert code == 2
    assert "device='cuda': CUDA is not available here" in err
    assert "use device='cpu'" in err


def test_torch_options_without_the_torch_backend_are_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "run", "parity", "01", "--check")
    assert code == 2
    assert "--check applies to the torch backend; add --backend torch" in err
    code, _, err = run_cli(capsys, "run", "parity", "01", "--dtype", "float32")
    assert code == 2
    assert "--dtype applies to the torch backend" in err


def test_an_unknown_dtype_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match=r"2"):
        main(["run", "parity", "01", "--backend", "torch", "--dtype", "float8"])
    assert "invalid choice: 'float8'" in capsys.readouterr().err


def test_the_generator_runs_on_torch_with_its_next_symbols(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys, "run", "dyck-gen", "(()", "--backend", "torch", "--check", "--json"
    )
    exact_code, exact_out, _ = run_cli(capsys, "run", "dyck-gen", "(()", "--json")
    assert code == exact_code == 0
    record, exact = json.loads(out), json.loads(exact_out)
    assert (record["next"], record["end"], record["next_by_position"]) == (
        exact["next"],
        exact["end"],
        exact["next_by_position"],
    )
    assert record["agreement"]["agree"] is True


def test_netproof_run_on_torch_in_a_fresh_process(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-m", "netproof", "run", "first", "1000", "--backend", "torch", "--check"],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "check: agrees with the exact interpreter" in done.stdout


# --------------------------------------------------------------------------- fuzz


def test_fuzz_with_torch_finds_shrinks_and_replays_a_real_counterexample_exactly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys,
        "fuzz",
        "dyck",
        "-p",
        "variant=paper",
        "-p",
        "k=1",
        "-p",
        "depth=1",
        "--backend",
        "torch",
        "--max-len",
        "80",
        "--examples",
        "5",
        "--seed",
        "3",
        "--out",
        "",
        "--quiet",
        "--no-database",
    )
    assert code == 1
    assert "words re-checked exactly" in out
    assert "shrunk counterexample: () (replayed with the exact checker)" in out


def pick_network(delta: Fraction) -> Network:
    """b's key is 1 + delta, a's 1: hardmax at every query picks the b's (y = 1), accept iff a b occurs."""
    return Network(
        name="pick",
        dims=("k", "v", "y"),
        embedding=token_embedding(
            ("a", "b"), {"a": {"k": 1}, "b": {"k": 1 + delta, "v": 1}, "S": {"k": 1}}, prefix=("S",)
        ),
        layers=(
            Sublayer(
                block=AttentionLayer(
                    name="att",
                    heads=(
                        Head(
                            name="pick",
                            query=constant({"q": 1}),
                            key=affine({"q": {"k": 1}}),
                            value=affine({"y": {"v": 1}}),
                            normalizer=Hardmax(),
                        ),
                    ),
                )
            ),
        ),
        readout=classifier("y", bias="-1/2"),
    )


def pick_job(delta: Fraction) -> tuple[Job, Recognizes]:
    lang = Language("has-b", ("a", "b"), lambda w: "b" in w)
    claim = Recognizes(
        id="R", statement="accepts iff a b occurs", reference="test", language=lang, max_len=200
    )
    c = Construction(
        name="pick",
        paper_id="test.pick",
        title="pick",
        reference="test",
        params=(),
        build=lambda values: pick_network(delta),
        claims=lambda values: (claim,),
    )
    return Job(c, {}), claim


def test_fuzz_with_torch_reports_a_float_only_failure_as_a_float_issue_not_a_counterexample() -> (
    None
):
    # 1 + 2^-60 is 1 in float64: the float run averages over every position and misses a lone b
    job, claim = pick_job(Fraction(1, 2**60))
    issues: list[FloatIssue] = []
    words = (tuple("a" * 99 + "b"),)
    from hypothesis import strategies as st

    verdict = fuzz(
        job,
        claim,
        examples=5,
        seed=0,
        database=None,
        strategy=st.sampled_from(words),
        backend="torch",
        on_float_issue=issues.append,
    )
    assert isinstance(verdict, Unknown)
    assert verdict.reason.startswith("no counterexample found")
    assert "1 float-only disagreements" in verdict.reason
    assert [i.word for i in issues] == [words[0]]
    assert issues[0].detail.startswith("torch float64 rejects it, the exact interpreter does not")


def test_fuzz_with_torch_confirms_a_real_failure_exactly_before_calling_it_a_counterexample() -> (
    None
):
    job, claim = pick_job(Fraction(-1, 2))  # b scores below a: the network misses every b
    from hypothesis import strategies as st

    verdict: Any = fuzz(
        job,
        claim,
        examples=5,
        seed=0,
        database=None,
        strategy=st.just(tuple("a" * 99 + "b")),
        backend="torch",
    )
    assert isinstance(verdict, Refuted)
    assert verdict.method == "fuzz (hypothesis, torch float64, exact re-check)"


# --------------------------------------------------------------------------- networks torch does not compile


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("stack-rnn", "is a RecurrentNetwork (StackRNN)"),
        ("tm-sim", "is an encoder–decoder (Seq2Seq)"),
    ],
)
def test_run_with_torch_on_a_recurrent_or_encoder_decoder_network_exits_2_saying_it_is_not_supported(
    capsys: pytest.CaptureFixture[str], name: str, kind: str
) -> None:
    code, out, err = run_cli(capsys, "run", name, "()", "--backend", "torch")
    assert code == 2 and out == ""
    assert f"--backend torch: not supported: network '{name}-" in err
    assert kind in err and "which the torch backend does not compile" in err


def test_fuzz_with_torch_runs_a_recurrent_constructions_claims_exactly_and_records_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys,
        "fuzz",
        "stack-rnn",
        "--backend",
        "torch",
        "--examples",
        "3",
        "--max-len",
        "4",
        "--out",
        "",
        "--no-database",
        "--json",
    )
    assert code == 0 and err == ""
    results = json.loads(out)["results"]
    assert results and all(r["backend"] == "exact" for r in results)
    assert all(
        r["torch_unsupported"].startswith("network 'stack-rnn-d2' is a RecurrentNetwork")
        for r in results
    )
    code, _out, err = run_cli(
        capsys,
        "fuzz",
        "stack-rnn",
        "--backend",
        "torch",
        "--examples",
        "3",
        "--max-len",
        "4",
        "--out",
        "",
        "--no-database",
    )
    assert code == 0
    assert err.startswith(
        "stack-rnn: not supported by --backend torch (network 'stack-rnn-d2' is a RecurrentNetwork"
    )
    assert "its claims run exactly" in err


# --------------------------------------------------------------------------- the fast paths


def spy_run_batch(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every FloatBatch that ``torch_backend.run_batch`` returns from now on (the path the CLI takes)."""
    from netproof.symbolic import torch_backend

    seen: list[Any] = []
    real = torch_backend.run_batch

    def spy(*args: Any, **kwargs: Any) -> Any:
        fb = real(*args, **kwargs)
        seen.append(fb)
        return fb

    monkeypatch.setattr(torch_backend, "run_batch", spy)
    return seen


PARITY_GROUPED = (
    ("count", "count", "groups"),
    ("parity", "even", "groups"),
    ("parity", "odd", "groups"),
)


def test_run_with_torch_goes_through_run_batch_with_paritys_heads_by_key_groups_and_dycks_by_running_maxima(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_run_batch(monkeypatch)
    code, _out, _ = run_cli(capsys, "run", "parity", "0110", "--backend", "torch", "--json")
    assert code == 0 and len(seen) == 1
    assert seen[0].paths == PARITY_GROUPED
    code, _out, _ = run_cli(capsys, "run", "dyck", "(())", "--backend", "torch", "--json")
    assert code == 0 and len(seen) == 2
    assert {path for _layer, _head, path in seen[1].paths} == {"running"}


def test_fuzz_with_torch_runs_long_words_through_run_batch_with_paritys_heads_by_key_groups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hypothesis import strategies as st

    from netproof.constructions import REGISTRY

    seen = spy_run_batch(monkeypatch)
    c = REGISTRY["parity"]
    values = c.parse_params({})
    claim = next(cl for cl in c.claims(values) if isinstance(cl, Recognizes))
    word = tuple("0110" * 25)  # 100 symbols: past TORCH_MIN_LEN, so the float run decides it
    verdict = fuzz(
        Job(c, values),
        claim,
        examples=3,
        seed=0,
        database=None,
        strategy=st.just(word),
        backend="torch",
    )
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("no counterexample found")
    assert seen and all(fb.words == (word,) and fb.paths == PARITY_GROUPED for fb in seen)
