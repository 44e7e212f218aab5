"""Bad input to every ``netproof`` command, as a table: each row is a command line (run in a
folder of fixture files: a regular file ``afile``, word files too long, binary or missing,
network files that are not UTF-8, nested 200,000 deep or cut short, a record cut in half), the
words its one error line must hold, and the promise every row shares: exit status 2, exactly one
line ``netproof: error: ...`` on stderr, no traceback, nothing on stdout and nothing written.

The rows run in this process (``netproof.verifier.cli.main``); a few run as a user runs them,
in a fresh process with a time limit, to show that the sizes that used to run for ever are
refused at once. Crashes that are not bad input (exit status 70) are tested at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from netproof.constructions.chiang2022 import parity_transformer
from netproof.symbolic.netfile import dumps
from netproof.verifier import cli
from netproof.verifier.campaign.errors import EXIT_INTERNAL, EXIT_USAGE


@dataclass(frozen=True)
class Row:
    """A command line, and words its one error line must hold (case-sensitive)."""

    argv: tuple[str, ...]
    words: tuple[str, ...]
    id: str


def row(id: str, line: str | tuple[str, ...], *words: str) -> object:
    argv = tuple(line.split()) if isinstance(line, str) else line
    return pytest.param(Row(argv, words, id), id=id)


def make_fixtures(where: Path) -> None:
    """The files the rows name, in ``where``."""
    (where / "afile").write_text("a regular file, not a directory\n", encoding="utf-8")
    (where / "big.txt").write_text("01" * 25_000 + "\n", encoding="utf-8")  # 50,000 symbols
    (where / "huge.txt").write_text("0" * (1 << 20) + "1\n", encoding="utf-8")  # over 1 MiB
    (where / "r600.txt").write_text(
        "01" * 300 + "\n", encoding="utf-8"
    )  # rumelhart past its n limit
    (where / "bin.txt").write_bytes(bytes(range(128, 256)) * 4)
    (where / "latin1.txt").write_bytes("0110 café".encode("latin-1"))
    net = dumps(parity_transformer())
    (where / "net.json").write_text(net, encoding="utf-8")
    (where / "plain.json").write_text(
        dumps(parity_transformer()), encoding="utf-8"
    )  # its extra names nothing
    (where / "cut.json").write_text(net[: len(net) // 2], encoding="utf-8")
    (where / "bad-utf8.json").write_bytes(b"\xff\xfe" + net.encode("utf-16-le"))
    (where / "deep.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    (where / "notnet.json").write_text('{"format": "something-else"}\n', encoding="utf-8")
    (where / "broken_mod.py").write_text("def (:\n", encoding="utf-8")
    (where / "empty_mod.py").write_text("x = 1\n", encoding="utf-8")
    (where / "my_taken.py").write_text(
        "# an existing module: `new` never overwrites it\n", encoding="utf-8"
    )
    (where / "emptydir").mkdir()
    (where / "trunc" / "first").mkdir(parents=True)
    record = '{"claim": {"id": "recognizes", "kind": "Recognizes"}, "construction": "first", "format_version": 2}\n'
    (where / "trunc" / "first" / "recognizes.n2.json").write_text(
        record[: len(record) // 2], encoding="utf-8"
    )
    (where / "binrec" / "first").mkdir(parents=True)
    (where / "binrec" / "first" / "C6.n2.json").write_bytes(bytes(range(128, 256)))
    (where / "proofs").mkdir()
    if os.geteuid() != 0:
        (where / "locked").mkdir(mode=0o555)


ROWS = [
    # ------------------------------------------------------------------ the command itself
    row("no-command", "", "required"),
    row("unknown-command", "frobnicate", "invalid choice", "frobnicate"),
    row("unknown-flag", "list --bogus", "unrecognized arguments", "--bogus"),
    # ------------------------------------------------------------------ list
    row("list-unknown", "list nosuch", "unknown construction 'nosuch'", "netproof list"),
    row("list-missing-module", "list missing.py", "missing.py"),
    row("list-broken-module", "list broken_mod.py", "broken_mod.py"),
    row("list-module-without-constructions", "list empty_mod.py", "empty_mod.py", "CONSTRUCTIONS"),
    row("list-missing-netfile", "list missing.json", "cannot read the network file 'missing.json'"),
    row("list-netfile-not-a-network", "list notnet.json", "notnet.json"),
    # ------------------------------------------------------------------ run: arguments and parameters
    row("run-no-word", "run parity", "required", "word"),
    row("run-unknown", "run nosuch 01", "unknown construction 'nosuch'"),
    row("run-symbol", "run parity 012", "'2'", "not in the alphabet"),
    row("run-decimal", "run parity 01 -p c=0.5", "c='0.5'", "decimals are refused"),
    row("run-param-no-equals", "run parity 01 -p c", "key=value"),
    row("run-param-no-name", "run parity 01 -p =1", "no name"),
    row("run-param-twice", "run parity 01 -p c=1 -p c=2", "'c'", "given twice"),
    row("run-param-unknown", "run parity 01 -p zz=1", "zz"),
    row("run-param-choice", "run parity 01 -p variant=nope", "variant='nope'", "fixed"),
    row("run-depth-zero", "run dyck () -p depth=0", "depth=0", ">= 1"),
    row("run-k-not-integer", "run dyck () -p k=abc", "k='abc'", "not an integer"),
    row(
        "run-k-long-not-integer",
        "run dyck () -p k=" + "x" * 5000,
        "(5000 characters)",
        "not an integer",
    ),
    row(
        "run-c-long-decimal",
        "run parity 01 -p c=0." + "5" * 5000,
        "(5007 characters)",
        "decimals are refused",
    ),
    row("run-dyck-k-huge", "run dyck () -p k=100000", "k=100000", "k <= 128"),
    row("run-dyck-depth-huge", "run dyck () -p depth=1000", "depth=1000", "depth <= 16"),
    row("run-dyck-gen-k-huge", "run dyck-gen () -p k=100000", "k=100000", "k <= 128"),
    row("run-dyck-gen-depth-huge", "run dyck-gen () -p depth=17", "depth=17", "depth <= 16"),
    row(
        "run-baby-ntm-slots-huge", "run baby-ntm () -p slots=20000", "slots=20000", "slots <= 10000"
    ),
    row("run-relpos-n-huge", "run relpos 01 -p n_sym=7", "n_sym=7", "n_sym <= 6"),
    row("run-eps-negative", "run parity-ln 01 -p eps=-1", "eps"),
    row("run-backend", "run parity 01 --backend nope", "invalid choice", "nope"),
    row("run-check-without-torch", "run parity 01 --check", "--check", "--backend torch"),
    row("run-dtype-without-torch", "run parity 01 --dtype float32", "--dtype", "--backend torch"),
    row("run-length-negative", "run parity 01 --length -1", "--length", "-1", ">= 0"),
    row("run-length-not-integer", "run parity 01 --length x", "--length", "'x'", "not an integer"),
    row(
        "run-transcendental-exact",
        "run parity 1 -p c=1 --backend exact",
        "transcendental",
        "--backend sympy",
    ),
    row("run-missing-module", "run missing.py 01", "missing.py"),
    # ------------------------------------------------------------------ run: word files
    row(
        "run-word-50000-symbols",
        "run parity @big.txt",
        "50,000 symbols",
        "4,096",
        "--backend torch",
    ),
    row(
        "run-word-50000-symbols-torch-check",
        "run parity @big.txt --backend torch --check",
        "50,000 symbols",
        "--check",
        "without --check",
    ),
    row(
        "run-word-file-over-1MiB",
        "run parity @huge.txt",
        "huge.txt",
        "1,048,578 bytes",
        "1,048,576",
    ),
    row(
        "run-word-file-over-1MiB-torch",
        "run parity @huge.txt --backend torch",
        "huge.txt",
        "1,048,576",
    ),
    row("run-word-file-binary", "run parity @bin.txt", "bin.txt", "not UTF-8", "0x80"),
    row("run-word-file-latin1", "run parity @latin1.txt", "latin1.txt", "not UTF-8", "0xe9"),
    row(
        "run-word-file-missing",
        "run parity @missing.txt",
        "cannot read the word from 'missing.txt'",
    ),
    row("run-word-file-under-a-file", "run parity @afile/w.txt", "afile/w.txt", "Not a directory"),
    row("run-word-file-a-directory", "run parity @emptydir", "emptydir", "Is a directory"),
    row("run-rumelhart-too-long", "run rumelhart @r600.txt", "n=600", "n <= 512"),
    # ------------------------------------------------------------------ run: network files
    row("run-netfile-not-utf8", "run bad-utf8.json 01", "bad-utf8.json", "not UTF-8"),
    row("run-netfile-deep", "run deep.json 01", "deep.json", "too deeply"),
    row("run-netfile-cut", "run cut.json 01", "cut.json", "not JSON"),
    row("run-netfile-missing", "run missing.json 01", "missing.json"),
    row("run-netfile-with-params", "run net.json 01 -p c=1", "network file", "drop -p"),
    row("run-netfile-wrong-format", "run notnet.json 01", "notnet.json"),
    row("run-netfile-symbol", "run net.json 012", "'2'", "not in the alphabet"),
    # ------------------------------------------------------------------ prove
    row("prove-unknown", "prove nosuch", "unknown construction 'nosuch'"),
    row("prove-max-n-negative", "prove first --max-n -1", "--max-n", ">= 0"),
    row("prove-max-n-not-integer", "prove first --max-n ten", "--max-n", "'ten'", "not an integer"),
    row(
        "prove-max-n-million",
        "prove first --max-n 1000000",
        "first recognizes",
        "2^1,000,000",
        "1,000,000,000",
        "--method smt",
        "--max-n <= 28",
    ),
    row("prove-max-n-30", "prove first --max-n 30", "2,147,483,647 words", "--max-n <= 28"),
    row("prove-dyck-max-n-40", "prove dyck --max-n 40", "4^40", "--max-n <= 14"),
    row(
        "prove-all-max-n-huge",
        "prove parity --method all --max-n 100",
        "C4-all-c",
        "2^100",
        "--max-n <= 28",
    ),
    row(
        "prove-smt-max-n-huge",
        "prove dyck --method smt --max-n 5000",
        "smt",
        "1,000",
        "--max-n <= 1000",
    ),
    row("prove-method", "prove first --method magic", "invalid choice", "magic"),
    row("prove-timeout-zero", "prove first --timeout 0", "--timeout", "> 0"),
    row("prove-timeout-negative", "prove first --timeout -5", "--timeout", "> 0"),
    row("prove-timeout-nan", "prove first --timeout nan", "--timeout", "'nan'", "finite"),
    row("prove-timeout-inf", "prove first --timeout inf", "--timeout", "'inf'", "finite"),
    row("prove-timeout-text", "prove first --timeout soon", "--timeout", "'soon'"),
    row("prove-jobs-zero", "prove first --jobs 0", "--jobs", "0 must be an integer >= 1"),
    row("prove-jobs-negative", "prove first --jobs -1", "--jobs", "-1 must be an integer >= 1"),
    row("prove-jobs-text", "prove first --jobs many", "--jobs", "'many'"),
    row(
        "prove-out-is-a-file",
        "prove first --out afile",
        "--out",
        "'afile' is a file, not a directory",
    ),
    row(
        "prove-out-under-a-file",
        "prove first --out afile/records",
        "--out",
        "'afile' is a file, not a directory",
    ),
    row("prove-out-deep-under-a-file", "prove first --out afile/a/b/c", "'afile' is a file"),
    row(
        "prove-no-construction-has-params",
        "prove -p zz=1",
        "no construction has all of the parameters",
        "zz",
    ),
    row("prove-decimal", "prove parity -p c=0.5", "c="),
    row("prove-dyck-k-huge", "prove dyck -p k=100000", "k <= 128"),
    row("prove-missing-netfile", "prove missing.json", "missing.json"),
    row("prove-netfile-malformed", "prove notnet.json", "notnet.json", "format_version"),
    row(
        "prove-netfile-no-construction",
        "prove plain.json",
        "plain.json",
        "names no known construction",
    ),
    # ------------------------------------------------------------------ export
    row("export-unknown", "export nosuch", "unknown construction 'nosuch'"),
    row("export-per-length-without-n", "export rumelhart", "rumelhart", "--n"),
    row("export-n-negative", "export rumelhart --n -1", "--n", "-1", ">= 0"),
    row("export-n-huge", "export rumelhart --n 100000", "n=100000", "n <= 512"),
    row("export-n-not-per-length", "export parity --n 3", "drop --n"),
    row(
        "export-out-under-a-file",
        "export parity --out afile/net.json",
        "--out",
        "'afile' is a file",
    ),
    row(
        "export-out-a-directory",
        "export parity --out emptydir",
        "--out",
        "'emptydir' is a directory",
    ),
    row("export-format", "export parity --format onnx", "invalid choice", "onnx"),
    row("export-state-dict-without-out", "export parity --format state_dict", "--out FILE.pt"),
    row(
        "export-recurrent-state-dict",
        "export stack-rnn --format state_dict --out net.pt",
        "RecurrentNetwork",
        "--format json",
    ),
    row(
        "export-seq2seq-state-dict",
        "export tm-sim --format state_dict --out net.pt",
        "encoder–decoder",
        "--format json",
    ),
    row("export-dyck-k-huge", "export dyck -p k=100000", "k <= 128"),
    row("export-nothing", "export", "required"),
    # ------------------------------------------------------------------ fuzz
    row("fuzz-unknown", "fuzz nosuch", "unknown construction 'nosuch'"),
    row("fuzz-examples-zero", "fuzz first --examples 0", "--examples 0", ">= 1"),
    row("fuzz-examples-negative", "fuzz first --examples -3", "--examples -3", ">= 1"),
    row("fuzz-max-len-negative", "fuzz first --max-len -1", "--max-len", ">= 0"),
    row(
        "fuzz-max-len-huge", "fuzz first --max-len 100000000", "--max-len", "100,000,000", "10,000"
    ),
    row("fuzz-seed-text", "fuzz first --seed abc", "--seed", "'abc'"),
    row("fuzz-database-a-file", "fuzz first --database afile", "--database", "'afile' is a file"),
    row(
        "fuzz-database-under-a-file",
        "fuzz first --database afile/db",
        "--database",
        "'afile' is a file",
    ),
    row("fuzz-out-a-file", "fuzz first --out afile", "--out", "'afile' is a file"),
    row("fuzz-out-under-a-file", "fuzz first --out afile/logs", "--out", "'afile' is a file"),
    row("fuzz-backend", "fuzz first --backend gpu", "invalid choice", "gpu"),
    row("fuzz-jobs-zero", "fuzz first --jobs 0", "--jobs", ">= 1"),
    row("fuzz-jobs-negative", "fuzz first --jobs -1", "--jobs", ">= 1"),
    row("fuzz-dyck-k-huge", "fuzz dyck -p k=100000", "k <= 128"),
    row(
        "fuzz-no-construction-has-params",
        "fuzz -p zz=1",
        "no construction has all of the parameters",
    ),
    # ------------------------------------------------------------------ ledger
    row("ledger-no-proofs", "ledger --proofs nowhere", "no proof records at 'nowhere'"),
    row("ledger-proofs-a-file", "ledger --proofs afile", "no proof records at 'afile'"),
    row("ledger-out-under-a-file", "ledger --out afile/CLAIMS.md", "--out", "'afile' is a file"),
    row("ledger-out-a-directory", "ledger --out emptydir", "--out", "'emptydir' is a directory"),
    row(
        "ledger-truncated-record",
        "ledger first --proofs trunc",
        "recognizes.n2.json",
        "cut short",
        "--force",
    ),
    row(
        "ledger-truncated-record-every-construction",
        "ledger --proofs trunc",
        "recognizes.n2.json",
        "cut short",
    ),
    row("ledger-binary-record", "ledger first --proofs binrec", "C6.n2.json", "not UTF-8"),
    row("ledger-unknown", "ledger nosuch --proofs proofs", "unknown construction 'nosuch'"),
    # ------------------------------------------------------------------ recheck
    row("recheck-nothing", "recheck", "required"),
    row("recheck-missing", "recheck nowhere.json", "no proof log or directory at 'nowhere.json'"),
    row("recheck-empty-dir", "recheck emptydir", "no .json proof logs"),
    row("recheck-timeout-zero", "recheck emptydir --timeout 0", "--timeout", "> 0"),
    row("recheck-timeout-nan", "recheck emptydir --timeout nan", "--timeout", "finite"),
    row("recheck-solver", "recheck emptydir --solver yices", "invalid choice", "yices"),
    # ------------------------------------------------------------------ new
    row("new-nothing", "new", "required"),
    row("new-uppercase", "new Majority", "'Majority'", "lowercase"),
    row("new-double-dash", "new my--x", "'my--x'", "single dashes"),
    row("new-builtin", "new parity", "built-in"),
    row("new-exists", "new my-taken", "my_taken.py exists", "not overwriting"),
    row("new-not-py", "new my-x --out x.txt", "must end in .py"),
    row("new-out-under-a-file", "new my-x --out afile/x.py", "--out", "'afile' is a file"),
    row("new-out-deep-under-a-file", "new my-x --out afile/sub/x.py", "'afile' is a file"),
    # ------------------------------------------------------------------ precision
    row("precision-nothing", "precision", "name a construction"),
    row("precision-all-and-names", "precision --all first", "either --all or names"),
    row("precision-unknown", "precision nosuch", "unknown construction 'nosuch'"),
    row("precision-dtype", "precision first --dtype float8", "invalid choice", "float8"),
    row(
        "precision-markdown-under-a-file",
        "precision first --markdown afile/p.md",
        "--markdown",
        "'afile' is a file",
    ),
    row("precision-max-n-text", "precision first --max-n big", "--max-n", "'big'"),
    # ------------------------------------------------------------------ plot
    row("plot-figure", "plot figure9 --out f.png", "invalid choice", "figure9"),
    row("plot-no-out", "plot cross-entropy parity", "required", "--out"),
    row(
        "plot-out-under-a-file",
        "plot cross-entropy parity --out afile/f.png",
        "--out",
        "'afile' is a file",
    ),
    row(
        "plot-out-a-directory",
        "plot cross-entropy parity --out emptydir",
        "--out",
        "'emptydir' is a directory",
    ),
    row(
        "plot-csv-under-a-file",
        "plot cross-entropy parity --out f.png --csv afile/f.csv",
        "--csv",
        "'afile' is a file",
    ),
    row(
        "plot-strings-zero",
        "plot cross-entropy parity --out f.png --strings 0",
        "--strings",
        ">= 1",
    ),
    row(
        "plot-lengths-text", "plot cross-entropy parity --out f.png --lengths x", "--lengths", "'x'"
    ),
]

if os.geteuid() != 0:  # root may write anywhere: the permission rows need an ordinary user
    ROWS += [
        row(
            "prove-out-read-only",
            "prove first --out locked/records",
            "--out",
            "'locked' is not writable",
        ),
        row(
            "export-out-read-only",
            "export parity --out locked/net.json",
            "--out",
            "'locked' is not writable",
        ),
        row(
            "fuzz-database-read-only",
            "fuzz first --database locked/db",
            "--database",
            "'locked' is not writable",
        ),
    ]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("bad-input")
    make_fixtures(where)
    yield where
    if (where / "locked").exists():
        (where / "locked").chmod(0o755)


def snapshot(where: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``where`` with its size and modification time."""
    out = {}
    for p in sorted(where.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(where))] = (st.st_size, st.st_mtime_ns)
    return out


def run_in_process(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse refuses a flag before a command runs
        code = exc.code if isinstance(exc.code, int) else 1
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_the_table_holds_at_least_the_103_cases_of_the_issue() -> None:
    assert len(ROWS) >= 103
    ids = [r.values[0].id for r in ROWS]  # type: ignore[attr-defined]
    assert len(set(ids)) == len(ids)
    commands = {r.values[0].argv[0] for r in ROWS if r.values[0].argv}  # type: ignore[attr-defined]
    assert commands >= {
        "list",
        "run",
        "prove",
        "export",
        "fuzz",
        "ledger",
        "recheck",
        "new",
        "precision",
        "plot",
    }


@pytest.mark.parametrize("case", ROWS)
def test_bad_input_is_one_error_line_with_exit_2_and_nothing_written(
    case: Row, fixtures: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fixtures)
    monkeypatch.setenv("NETPROOF_CACHE_DIR", str(fixtures / ".." / "cache"))
    before = snapshot(fixtures)
    code, out, err = run_in_process(case.argv, capsys)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("netproof: error: "), line
    assert len(line) < 600, (
        f"an error line of {len(line)} characters"
    )  # a long value is cut, not repeated whole
    assert code == EXIT_USAGE, line
    for word in case.words:
        assert word in line, f"{word!r} not in: {line}"
    assert out == ""
    assert snapshot(fixtures) == before, "a refused command wrote something"


# --------------------------------------------------------------------------- as a user runs them

SUBPROCESS_ROWS = [
    pytest.param(("run", "dyck", "()", "-p", "k=100000"), "k <= 128", id="run-dyck-k-100000"),
    pytest.param(
        ("prove", "first", "--max-n", "1000000"), "--max-n <= 28", id="prove-max-n-1000000"
    ),
    pytest.param(("run", "parity", "@big.txt"), "50,000 symbols", id="run-50000-symbol-word-file"),
    pytest.param(("run", "deep.json", "01"), "too deeply", id="run-200000-deep-network-file"),
]


@pytest.mark.parametrize(("argv", "words"), SUBPROCESS_ROWS)
def test_sizes_that_used_to_run_for_ever_are_refused_at_once_in_a_fresh_process(
    argv: tuple[str, ...], words: str, fixtures: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NETPROOF_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-m", "netproof", *argv],
        cwd=fixtures,
        env=env,
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("netproof: error: ") and words in line


# --------------------------------------------------------------------------- crashes: exit 70


def crash(args: object, session: object) -> int:
    raise ZeroDivisionError("a bug\non two lines")


def test_a_crash_is_one_internal_error_line_with_exit_70_and_where_to_report_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from netproof.verifier.cli import list as list_cmd

    monkeypatch.delenv("NETPROOF_DEBUG", raising=False)
    monkeypatch.setattr(list_cmd, "cmd_list", crash)
    code, out, err = run_in_process(("list",), capsys)
    assert (code, out) == (EXIT_INTERNAL, "")
    assert err == (
        "netproof: internal error: ZeroDivisionError: a bug on two lines (please report it as an issue "
        "in the repository you got netproof from, with what netproof --version prints and the command line)\n"
    )


def test_netproof_debug_raises_the_crash_for_developers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from netproof.verifier.cli import list as list_cmd

    monkeypatch.setenv("NETPROOF_DEBUG", "1")
    monkeypatch.setattr(list_cmd, "cmd_list", crash)
    with pytest.raises(ZeroDivisionError, match="a bug"):
        cli.main(["list"])


def test_a_path_error_while_writing_is_a_usage_error_not_a_crash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from netproof.verifier.cli import list as list_cmd

    def full_disk(args: object, session: object) -> int:
        raise OSError(28, "No space left on device", str(tmp_path / "out.json"))

    monkeypatch.setattr(list_cmd, "cmd_list", full_disk)
    code, out, err = run_in_process(("list",), capsys)
    assert (code, out) == (EXIT_USAGE, "")
    assert (
        err
        == f"netproof: error: cannot use {str(tmp_path / 'out.json')!r}: No space left on device\n"
    )


# --------------------------------------------------------------------------- the limits at their edges


def test_a_word_file_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(
    tmp_path: Path,
) -> None:
    from netproof.verifier.cli.checks import read_word_file
    from netproof.verifier.cli.usage import UsageError

    path = tmp_path / "w.txt"
    path.write_text("0110011001", encoding="utf-8")
    assert read_word_file(str(path), limit=10) == "0110011001"
    with pytest.raises(UsageError, match=r"is 10 bytes; a word file holds at most 9 bytes"):
        read_word_file(str(path), limit=9)


def test_the_largest_exhaustive_bound_the_refusal_names_is_accepted_and_one_more_is_refused() -> (
    None
):
    from netproof.verifier.campaign.errors import CampaignError
    from netproof.verifier.campaign.limits import MAX_EXHAUSTIVE_WORDS, check_bounds, word_count
    from netproof.verifier.campaign.sources import Session, parameter_values

    first = Session().construction("first")
    values = parameter_values(first, {})
    plans = [
        (
            first,
            values,
            [(i, c) for i, c in enumerate(first.claims(values)) if c.id == "recognizes"],
        )
    ]
    assert word_count(2, 0, 28) <= MAX_EXHAUSTIVE_WORDS < word_count(2, 0, 29)
    check_bounds(plans, method="exhaustive", max_n=28)
    with pytest.raises(
        CampaignError,
        match=r"0 <= \|w\| <= 29 over 2 symbols, 1,073,741,823 words .* --max-n <= 28$",
    ):
        check_bounds(plans, method="exhaustive", max_n=29)
    check_bounds(plans, method="smt", max_n=1000)  # the smt method: no words enumerated
    with pytest.raises(CampaignError, match=r"--max-n 1001: the smt method .* at most 1,000"):
        check_bounds(plans, method="smt", max_n=1001)
