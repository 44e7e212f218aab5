"""Users' own construction modules: `netproof new` writes one that proves out of the box, every
command takes FILE.py (or FILE.py:NAME) like a built-in name, and a malformed module is refused
with exit status 2 and one line naming the file and the problem."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.verifier.campaign.proving import Task, run_task
from netproof.verifier.campaign.usermod import TEMPLATE, UserModuleError, load, render_template
from netproof.verifier.claims import Proved

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def module(construction: str = "my-majority", /, **edits: str) -> str:
    """The template for ``construction`` with ``"old=>new"`` text replacements (keys are labels)."""
    text = render_template(construction)
    for old, new in (tuple(v.split("=>", 1)) for v in edits.values()):
        assert old in text, old
        text = text.replace(old, new)
    return text


SECOND = '''
def build_first() -> Network:
    """FIRST: accept iff the first symbol is 1 (read the position whose i is 0)."""
    from netproof.symbolic.gadgets import select_position

    first = select_position("first", key_dim="i", query=0, values={"w1": {"is1": 1}})
    return Network(
        name="first",
        dims=("is1", "i", "w1"),
        embedding=token_embedding(("0", "1"), {"0": {}, "1": {"is1": 1}}, positional={"i": "i"}),
        layers=sublayers(attention("look", first)),
        readout=classifier({"w1": 1}, position=-1, bias="-1/2"),
    )


FIRST = Language(name="FIRST", alphabet=("0", "1"), contains=lambda w: w[:1] == ("1",))
CONSTRUCTIONS = (
    *CONSTRUCTIONS,
    Construction(
        name="my-first",
        paper_id="user.first",
        title="FIRST",
        reference="notes",
        params=(),
        build=lambda values: build_first(),
        claims=lambda values: (
            Recognizes(id="recognizes", statement="FIRST", reference="notes", language=FIRST, min_len=1, max_len=6),
        ),
        language=FIRST,
    ),
)
'''


# --------------------------------------------------------------------------- new + prove


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_new_module_proves_every_claim_out_of_the_box(
    here: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    done = netproof(capsys, "new", "my-majority")
    assert (done.code, done.err) == (0, "")
    assert done.out.startswith("wrote my_majority.py: construction my-majority")
    assert (here / "my_majority.py").read_text(encoding="utf-8") == render_template("my-majority")
    done = netproof(capsys, "prove", "my_majority.py", "--jobs", jobs, "--quiet")
    assert done.code == 0, done.out + done.err
    assert "2 proved, 0 refuted, 0 unknown" in done.out
    record = json.loads(
        (here / "proofs" / "my-majority" / "recognizes.n10.json").read_text(encoding="utf-8")
    )
    assert (record["construction"], record["verdict"], record["bound"]) == (
        "my-majority",
        "proved",
        {"min_len": 1, "max_len": 10},
    )
    assert record["claim"]["reference"] == "my notes, section 1"
    assert (here / "proofs" / "my-majority" / "frac.n10.json").is_file()


def test_the_template_is_a_complete_module_for_any_name() -> None:
    text = render_template("dyck-2")
    assert (
        'NAME = "dyck-2"' in text
        and 'paper_id="user.dyck_2"' in text
        and "netproof prove dyck_2.py" in text
    )
    assert "__" not in text.replace("__future__", "")
    assert TEMPLATE.count("__NAME__") >= 2


def test_new_refuses_to_overwrite_a_bad_name_and_a_built_in_name(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "my_majority.py").write_text("# mine\n", encoding="utf-8")
    done = netproof(capsys, "new", "my-majority")
    assert done.code == 2 and "my_majority.py exists; not overwriting it" in done.err
    assert (here / "my_majority.py").read_text(encoding="utf-8") == "# mine\n"
    done = netproof(capsys, "new", "My_Majority")
    assert (
        done.code == 2
        and "construction name 'My_Majority' must be lowercase letters, digits and single dashes"
        in done.err
    )
    assert "e.g. 'my-majority'" in done.err
    done = netproof(capsys, "new", "parity")
    assert done.code == 2 and "'parity' is the name of a built-in construction" in done.err
    done = netproof(capsys, "new", "x", "--out", "x.txt")
    assert done.code == 2 and "must end in .py" in done.err


def test_new_writes_where_out_says_into_a_file_or_a_directory(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert netproof(capsys, "new", "maj", "--out", "lib/majority.py").code == 0
    assert (here / "lib" / "majority.py").is_file()
    (here / "mods").mkdir()
    assert netproof(capsys, "new", "maj-two", "--out", "mods").code == 0
    assert (here / "mods" / "maj_two.py").is_file()
    done = netproof(
        capsys, "prove", "lib/majority.py", "mods/maj_two.py", "--jobs", "1", "--quiet", "--out", ""
    )
    assert done.code == 0 and "4 proved" in done.out


def test_a_fresh_process_proves_a_module_in_the_working_directory(here: Path) -> None:
    (here / "my_majority.py").write_text(render_template("my-majority"), encoding="utf-8")
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run(
        [sys.executable, "-m", "netproof", "prove", "my_majority.py", "--quiet"],
        cwd=here,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 proved, 0 refuted, 0 unknown" in done.stdout


# --------------------------------------------------------------------------- every command


def test_run_a_user_module_like_a_built_in(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "maj.py").write_text(module(), encoding="utf-8")
    done = netproof(capsys, "run", "maj.py", "110", "--json")
    assert done.code == 0
    record = json.loads(done.out)
    assert (record["construction"], record["accepted"], record["member"], record["output"]) == (
        "my-majority",
        True,
        True,
        "1/6",
    )
    done = netproof(capsys, "run", "maj.py:my-majority", "0110", "--trace")
    assert (
        done.code == 0
        and "count/ones  0→0-3 1→0-3" in done.out
        and "frac  1/2 1/2 1/2 1/2" in done.out
    )
    done = netproof(capsys, "run", "maj.py:nope", "0110")
    assert (
        done.code == 2
        and "maj.py defines no construction 'nope'; it defines: my-majority" in done.err
    )
    done = netproof(capsys, "run", "maj.py", "012")
    assert done.code == 2 and "symbol '2' at position 3 is not in the alphabet" in done.err


def test_a_module_named_without_its_path_gets_a_hint(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "my_majority.py").write_text(module(), encoding="utf-8")
    done = netproof(capsys, "run", "my-majority", "0110")
    assert done.code == 2
    assert (
        done.err
        == "netproof: error: unknown construction 'my-majority'; to use the module my_majority.py, give its path: my_majority.py\n"
    )
    done = netproof(capsys, "prove", "my_majority")
    assert done.code == 2 and "give its path: my_majority.py" in done.err
    done = netproof(capsys, "prove", "no-such-thing")
    assert (
        done.code == 2
        and "unknown construction 'no-such-thing'; known: rumelhart, parity" in done.err
    )


def test_a_module_with_two_constructions_proves_both_and_run_needs_a_name(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "two.py").write_text(module() + SECOND, encoding="utf-8")
    done = netproof(capsys, "prove", "two.py", "--jobs", "2", "--quiet", "--out", "")
    assert done.code == 0, done.out + done.err
    assert "3 proved, 0 refuted" in done.out and "my-first" in done.out
    done = netproof(capsys, "run", "two.py", "10")
    assert done.code == 2
    assert (
        "two.py defines 2 constructions (my-majority, my-first); name one: `netproof run two.py:my-majority ...`"
        in done.err
    )
    done = netproof(capsys, "run", "two.py:my-first", "10", "--json")
    assert done.code == 0 and json.loads(done.out)["accepted"] is True
    done = netproof(capsys, "prove", "two.py:my-first", "--quiet", "--out", "")
    assert done.code == 0 and "1 proved" in done.out
    done = netproof(capsys, "export", "two.py")
    assert done.code == 2 and "name one: `netproof export two.py:my-majority ...`" in done.err


def test_a_refuted_claim_of_a_user_module_exits_1_with_the_shortest_counterexample(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "maj.py").write_text(module(bias='bias="-1/2"=>bias="-1/3"'), encoding="utf-8")
    done = netproof(capsys, "prove", "maj.py", "--jobs", "2", "--quiet", "--out", "")
    assert done.code == 1
    assert "counterexample: 01" in done.out and "1 proved, 1 refuted" in done.out


def test_fuzz_a_user_module_finds_the_counterexample_of_a_broken_one(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "good.py").write_text(module(), encoding="utf-8")
    (here / "bad.py").write_text(
        module("my-broken", bias='bias="-1/2"=>bias="-1/3"'), encoding="utf-8"
    )
    args = ("--examples", "30", "--seed", "1", "--no-database", "--out", "", "--json")
    done = netproof(capsys, "fuzz", "good.py", *args)
    assert done.code == 0
    assert {r["verdict"] for r in json.loads(done.out)["results"]} == {"no counterexample found"}
    done = netproof(capsys, "fuzz", "bad.py", *args)
    assert done.code == 1
    by_id = {r["claim"]["id"]: r for r in json.loads(done.out)["results"]}
    assert (by_id["recognizes"]["verdict"], by_id["recognizes"]["counterexample"]) == (
        "refuted",
        "01",
    )


def test_export_a_user_module_and_run_the_network_file(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "maj.py").write_text(module(), encoding="utf-8")
    done = netproof(capsys, "export", "maj.py")
    assert done.code == 0
    (here / "maj.json").write_text(done.out, encoding="utf-8")
    extra = json.loads((here / "maj.json").read_text(encoding="utf-8"))["extra"]
    assert (extra["construction"], [c["id"] for c in extra["claims"]]) == (
        "my-majority",
        ["recognizes", "frac"],
    )
    from_module = json.loads(netproof(capsys, "run", "maj.py", "1101", "--json").out)
    from_file = json.loads(netproof(capsys, "run", "maj.json", "1101", "--json").out)
    assert from_file["fingerprint"] == from_module["fingerprint"]
    assert (from_file["output"], from_file["accepted"]) == ("1/4", True)


def test_list_a_user_module(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "two.py").write_text(module() + SECOND, encoding="utf-8")
    done = netproof(capsys, "list", "two.py", "--json")
    assert done.code == 0
    rows = json.loads(done.out)["constructions"]
    assert [(r["name"], r["id"], r["language"]) for r in rows] == [
        ("my-majority", "user.my_majority", "MAJORITY"),
        ("my-first", "user.first", "FIRST"),
    ]
    assert [c["id"] for c in rows[0]["claims"]] == ["recognizes", "frac"]
    done = netproof(capsys, "list", "two.py:my-first", "parity")
    assert (
        done.code == 0
        and "my-first  (user.first)" in done.out
        and "parity  (chiang2022.parity_transformer)" in done.out
    )


def test_a_module_may_import_its_sibling_modules(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "helpers.py").write_text('WEIGHT = "-1/2"\n', encoding="utf-8")
    (here / "maj.py").write_text(
        module(
            imp='NAME = "my-majority"=>from helpers import WEIGHT\n\nNAME = "my-majority"',
            bias='bias="-1/2"=>bias=WEIGHT',
        ),
        encoding="utf-8",
    )
    done = netproof(capsys, "prove", "maj.py", "--jobs", "1", "--quiet", "--out", "")
    assert done.code == 0, done.err


# --------------------------------------------------------------------------- malformed modules

BAD_MODULES = {
    "missing file": (
        None,
        r"no such file; check the path, or write a starting module with `netproof new NAME`",
    ),
    "syntax error": (
        "x = (\n",
        r"bad\.py:1: SyntaxError: '\(' was never closed in `x = \(`; fix that line",
    ),
    "import error": (
        "import netproof_no_such_package\n",
        (
            r"importing it failed: ModuleNotFoundError: No module named 'netproof_no_such_package' "
            r"\(line 1: `import netproof_no_such_package`\); is that package installed"
        ),
    ),
    "error while importing": (
        "x = 1\ny = x / 0\n",
        r"importing it failed: ZeroDivisionError: division by zero \(line 2: `y = x / 0`\)",
    ),
    "no CONSTRUCTIONS": (
        "X = 1\n",
        r"defines no CONSTRUCTIONS and no PROGRAMS; add a module-level tuple CONSTRUCTIONS = \(Construction\(\.\.\.\),\)",
    ),
    "not a tuple": (
        "CONSTRUCTIONS = {'a': 1}\n",
        r"CONSTRUCTIONS is a dict; it must be a tuple of netproof\.verifier\.claims\.Construction",
    ),
    "a single Construction": (
        module(comma="    ),\n)\n=>    )\n)\n"),
        r"CONSTRUCTIONS is a single Construction, not a tuple; write CONSTRUCTIONS = \(Construction\(\.\.\.\),\) with the trailing comma",
    ),
    "empty": (
        "CONSTRUCTIONS = ()\n",
        r"CONSTRUCTIONS is empty; put at least one Construction in it",
    ),
    "not a Construction": (
        "CONSTRUCTIONS = ('my-majority',)\n",
        r"CONSTRUCTIONS\[0\] is a str, not a verifier\.claims\.Construction; wrap it",
    ),
    "a bad name": (
        module("my-majority", name='NAME = "my-majority"=>NAME = "My Majority"'),
        r"CONSTRUCTIONS\[0\]: construction name 'My Majority' must be lowercase letters, digits and single dashes",
    ),
    "a built-in name": (
        module(name='NAME = "my-majority"=>NAME = "parity"'),
        r"construction 'parity' has the name of a built-in construction; rename it \(e\.g\. 'my-parity'\)",
    ),
    "a name twice": (
        module() + "CONSTRUCTIONS = (*CONSTRUCTIONS, *CONSTRUCTIONS)\n",
        r"two constructions are named 'my-majority'; give each its own name",
    ),
    "a network that does not validate": (
        module(dims='dims=("is1", "frac")=>dims=("is1",)'),
        (
            r"construction 'my-majority': building its network failed: NetworkValidationError: attention 'count' head "
            r"'ones': value writes 'frac', which is not a residual dim.* \(line \d+: `return Network\(`\); fix build\(\)"
        ),
    ),
    "build returns something else": (
        module(build="build=lambda values: build(),=>build=lambda values: build,"),
        r"build returned a function, not a symbolic\.Network",
    ),
    "no claims": (
        module(claims="claims=claims,=>claims=lambda values: (),"),
        r"claims\(values\) returned \(\); return a non-empty tuple of claims",
    ),
    "a claim of the wrong type": (
        module(claims="claims=claims,=>claims=lambda values: ('recognizes',),"),
        r"claim \[0\] is a str, not a claim of verifier\.claims",
    ),
    "a claim id twice": (
        module(claims="claims=claims,=>claims=lambda values: claims(values) * 2,"),
        r"two claims have the id 'recognizes'",
    ),
    "claims that raise": (
        module(claims='expected_text="#1/n",=>expected_text=undefined_name,'),
        (
            r"its claims could not be built: NameError: name 'undefined_name' is not defined \(line \d+: "
            r"`expected_text=undefined_name,`\); fix claims\(\)"
        ),
    ),
}


@pytest.mark.parametrize("kind", list(BAD_MODULES))
def test_a_malformed_module_exits_2_with_one_line_naming_the_file_and_the_problem(
    here: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    source, message = BAD_MODULES[kind]
    if source is not None:
        (here / "bad.py").write_text(source, encoding="utf-8")
    done = netproof(capsys, "prove", "bad.py")
    assert (done.code, done.out) == (2, "")
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith("netproof: error: bad.py"), lines[0]
    assert re.search(message, lines[0]), lines[0]
    assert not (here / "proofs").exists()


@pytest.mark.parametrize(
    "command",
    [
        ("run", "bad.py", "01"),
        ("fuzz", "bad.py"),
        ("export", "bad.py"),
        ("list", "bad.py"),
        ("compile", "bad.py"),
    ],
)
def test_every_command_refuses_a_malformed_module_the_same_way(
    here: Path, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    (here / "bad.py").write_text(
        module(name='NAME = "my-majority"=>NAME = "dyck"'), encoding="utf-8"
    )
    done = netproof(capsys, *command)
    assert done.code == 2
    assert done.err == (
        "netproof: error: bad.py: construction 'dyck' has the name of a built-in construction; rename it "
        "(e.g. 'my-dyck') so that `netproof prove dyck` stays unambiguous\n"
    )


def test_two_modules_that_define_one_name_are_refused_but_one_module_twice_is_fine(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "a.py").write_text(module(), encoding="utf-8")
    (here / "b.py").write_text(module(), encoding="utf-8")
    done = netproof(capsys, "prove", "a.py", "b.py")
    assert (
        done.code == 2
        and "b.py: construction 'my-majority' is also defined by a.py; rename one of them"
        in done.err
    )
    done = netproof(
        capsys, "prove", "a.py", "a.py:my-majority", "--jobs", "1", "--quiet", "--out", ""
    )
    assert done.code == 0 and "4 proved" in done.out


# --------------------------------------------------------------------------- the loader


def test_load_runs_the_file_afresh_each_time_so_an_edit_is_seen_at_once(here: Path) -> None:
    path = here / "maj.py"
    path.write_text(module(), encoding="utf-8")
    first = load(str(path))
    path.write_text(
        module(bias='bias="-1/2"=>bias="-1/3"'), encoding="utf-8"
    )  # same size, same second
    second = load(str(path))
    biases = [str(c.network({}).readout.logit.bias[0]) for c in (*first, *second)]  # type: ignore[union-attr]
    assert biases == ["-1/2", "-1/3"]
    assert not list(here.glob("__pycache__"))


def test_load_refuses_a_missing_file_and_the_builtin_names_it_is_given(here: Path) -> None:
    with pytest.raises(UserModuleError, match=r"missing\.py: no such file"):
        load("missing.py")
    (here / "maj.py").write_text(module(), encoding="utf-8")
    assert [c.name for c in load("maj.py")] == ["my-majority"]
    with pytest.raises(
        UserModuleError, match=r"construction 'my-majority' has the name of a built-in construction"
    ):
        load("maj.py", builtin={"my-majority"})


def test_a_prove_worker_without_the_parent_s_registry_loads_the_module_named_in_its_task(
    here: Path,
) -> None:
    (here / "maj.py").write_text(module(), encoding="utf-8")
    verdicts = run_task(
        Task("my-majority", (), (0, 1), 4, "maj.py")
    )  # no session: a fresh registry
    assert [type(outcome.verdict) for outcome, _s in verdicts] == [Proved, Proved]
