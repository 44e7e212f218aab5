"""B-RASP and C-RASP programs in users' modules (``PROGRAMS``): compiled on load, every command
takes ``prog.py:NAME`` like a construction, ``netproof compile`` writes the network file,
``netproof new --template brasp|crasp`` starts one, a malformed module is one line naming the
file (exit 2), and every network's size is reported by ``list`` and ``run --json``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runs import netproof

from netproof.constructions import REGISTRY
from netproof.constructions.rasp import (
    compile_brasp,
    compile_crasp,
    is_program,
    program_constructions,
)
from netproof.constructions.rasp.modules import ProgramModuleError, as_language
from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq, fingerprint
from netproof.symbolic.exact import run
from netproof.symbolic.netfile import load_file
from netproof.symbolic.size import NetworkSize, network_size
from netproof.verifier.campaign.templates import render_program_template
from netproof.verifier.campaign.usermod import UserModuleError, load
from netproof.verifier.claims import Automaton, Language
from netproof.verifier.claims.rasp import brasp as B
from netproof.verifier.claims.rasp import crasp as C


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


PROG = """
from netproof.verifier.claims.rasp.brasp import TRUE, Program, rightmost, token
from netproof.verifier.claims.rasp import crasp as C

a, b = token("a"), token("b")
prev_a = rightmost("past", score=TRUE, value=a.at_j).named("prev_a")
ab_here = b & prev_a
seen_ab = rightmost("past", score=ab_here.at_j, value=TRUE).named("seen_ab")
CONTAINS_AB = Program("contains_ab", ("a", "b"), output=seen_ab | ab_here)
MAJORITY = C.Program("majority", ("a", "b"), output=C.count(C.token("a")) > C.count(C.token("b")))

MAX_LEN = 5
PROGRAMS = {
    "my-contains": (CONTAINS_AB, "[ab]*ab[ab]*"),
    "my-majority": (MAJORITY, lambda w: w.count("a") > w.count("b")),
}
"""


def contains_ab() -> B.Program:
    a, b = B.token("a"), B.token("b")
    prev_a = B.rightmost("past", score=B.TRUE, value=a.at_j).named("prev_a")
    seen = B.rightmost("past", score=(b & prev_a).at_j, value=B.TRUE).named("seen_ab")
    return B.Program("contains_ab", ("a", "b"), output=seen | (b & prev_a))


MAJORITY = C.Program("majority", ("a", "b"), output=C.count(C.token("a")) > C.count(C.token("b")))


# --------------------------------------------------------------------------- loading


def test_a_programs_module_loads_as_compiled_constructions_with_the_library_s_claims(
    here: Path,
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    found = load("prog.py")
    assert [c.name for c in found] == ["my-contains", "my-majority"]
    assert all(is_program(c) for c in found)
    contains, majority = found
    assert fingerprint(contains.network({})) == fingerprint(compile_brasp(contains_ab()))
    assert fingerprint(majority.network({})) == fingerprint(compile_crasp(MAJORITY))
    assert [cl.id for cl in contains.claims({})] == [
        "network=program",
        "program=language",
        "operations",
        "no-ties",
    ]
    assert [cl.id for cl in majority.claims({})] == [
        "network=program",
        "program=language",
        "operations",
    ]
    assert {cl.max_len for cl in contains.claims({})} == {5}  # MAX_LEN
    assert contains.reference_language({}).contains(
        ("b", "a", "b")
    ) and not contains.reference_language({}).contains(("b", "a"))


def test_a_tuple_of_programs_names_each_construction_after_its_program() -> None:
    found = program_constructions((contains_ab(), (MAJORITY, "a+")))
    assert [c.name for c in found] == ["contains-ab", "majority"]
    assert [cl.id for cl in found[0].claims({})] == [
        "network=program",
        "operations",
        "no-ties",
    ]  # no reference


def test_a_module_may_define_constructions_and_programs_side_by_side(here: Path) -> None:
    from netproof.verifier.campaign.usermod import render_template

    (here / "both.py").write_text(render_template("my-maj") + PROG, encoding="utf-8")
    assert [c.name for c in load("both.py")] == ["my-maj", "my-contains", "my-majority"]


def test_every_kind_of_reference_language_means_the_same_language() -> None:
    program = contains_ab()
    dfa = Automaton(  # states: 0 start, 1 just read a, 2 seen ab
        states=3, start=0, accepting=frozenset({2}), delta=((1, 0), (1, 2), (2, 2))
    )
    given = [
        "[ab]*ab[ab]*",
        lambda w: "ab" in "".join(w),
        dfa,
        Language(name="CONTAINS_AB", alphabet=("a", "b"), contains=lambda w: "ab" in "".join(w)),
    ]
    languages = [as_language(program, ref) for ref in given]
    words = [w for n in range(6) for w in __import__("itertools").product("ab", repeat=n)]
    for lang in languages:
        assert [lang.contains(w) for w in words] == [B.accepts(program, w) for w in words], (
            lang.name
        )


def test_a_reference_that_disagrees_with_the_program_is_refuted_with_the_first_word(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(
        PROG.replace('"[ab]*ab[ab]*"', '"[ab]*ba[ab]*"'), encoding="utf-8"
    )
    done = netproof(capsys, "prove", "prog.py:my-contains", "--jobs", "1", "--out", "")
    assert done.code == 1
    assert re.search(r"network=program\s+PROVED", done.out)
    assert re.search(r"program=language\s+REFUTED", done.out)
    # the regex is a minimal DFA: the program's automaton and its are compared for every length
    assert "on 'ab' the program says True and /[ab]*ba[ab]*/'s automaton says False" in done.out


def test_a_wrong_mask_breaks_program_equals_language_but_not_network_equals_program(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(
        PROG.replace('prev_a = rightmost("past"', 'prev_a = rightmost("future"'), encoding="utf-8"
    )
    done = netproof(capsys, "prove", "prog.py:my-contains", "--jobs", "1", "--out", "")
    assert done.code == 1
    assert re.search(r"network=program\s+PROVED", done.out) and re.search(
        r"no-ties\s+PROVED", done.out
    )
    assert "on 'ab' the program says False and /[ab]*ab[ab]*/'s automaton says True" in done.out


# --------------------------------------------------------------------------- every command


def test_every_command_takes_a_program_like_a_construction(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    done = netproof(capsys, "run", "prog.py:my-contains", "bbab", "--json")
    record = json.loads(done.out)
    assert (done.code, record["accepted"], record["member"]) == (0, True, True)
    assert record["size"] == network_size(compile_brasp(contains_ab())).to_json()
    done = netproof(capsys, "prove", "prog.py", "--jobs", "1", "--quiet", "--out", "proofs")
    assert done.code == 0 and "7 proved, 0 refuted" in done.out
    assert (here / "proofs" / "my-majority" / "network_program.n5.json").is_file()
    done = netproof(capsys, "ledger", "prog.py", "--proofs", "proofs")
    assert done.code == 0 and "my-contains" in done.out and "my-majority" in done.out
    done = netproof(
        capsys,
        "fuzz",
        "prog.py:my-majority",
        "--examples",
        "20",
        "--max-len",
        "12",
        "--quiet",
        "--no-database",
        "--out",
        "",
    )
    assert done.code == 0, done.err
    done = netproof(capsys, "export", "prog.py:my-majority")
    net, extra = load_file_text(here, done.out)
    assert (
        fingerprint(net) == fingerprint(compile_crasp(MAJORITY))
        and extra["construction"] == "my-majority"
    )


def load_file_text(here: Path, text: str) -> tuple[Network, dict[str, object]]:
    (here / "net.json").write_text(text, encoding="utf-8")
    net, extra = load_file(str(here / "net.json"))
    assert isinstance(net, Network)
    return net, dict(extra or {})


def test_compile_writes_the_file_export_writes_for_a_user_program_and_a_library_program(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    done = netproof(capsys, "compile", "prog.py:my-contains", "--format", "json", "--out", "c.json")
    assert done.code == 0 and done.out == ""
    assert done.err == "wrote c.json: my-contains compiled to 4 layers, 4 heads, 19 dims\n"
    assert (here / "c.json").read_text(encoding="utf-8") == netproof(
        capsys, "export", "prog.py:my-contains"
    ).out
    compiled = netproof(capsys, "compile", "crasp-dyck1")
    assert compiled.code == 0 and compiled.out == netproof(capsys, "export", "crasp-dyck1").out
    net, extra = load_file_text(here, compiled.out)
    assert (
        fingerprint(net) == fingerprint(REGISTRY["crasp-dyck1"].network({}))
        and extra["construction"] == "crasp-dyck1"
    )
    assert all(run(net, w).accepted == ok for w, ok in (("()", True), (")(", False), ("", True)))


def test_compile_refuses_a_construction_that_is_not_a_program_and_a_module_with_two_programs(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "prog.py").write_text(PROG, encoding="utf-8")
    done = netproof(capsys, "compile", "parity")
    assert done.code == 2 and done.err == (
        "netproof: error: parity is a construction, not a B-RASP or C-RASP program; its network is already built: "
        "`netproof export parity` writes it\n"
    )
    done = netproof(capsys, "compile", "prog.py")
    assert (
        done.code == 2
        and "prog.py defines 2 constructions (my-contains, my-majority); name one: `netproof compile prog.py:my-contains"
        in done.err
    )
    done = netproof(capsys, "compile", "brasp-no-aa", "--format", "state_dict")
    assert done.code == 2 and "invalid choice: 'state_dict'" in done.err


# --------------------------------------------------------------------------- malformed modules

BAD_PROGRAMS: dict[str, tuple[str, str]] = {
    "not a dict": (
        "PROGRAMS = 3\n",
        r"PROGRAMS is an int; give a dict from construction names to programs",
    ),
    "a single program": (
        "PROGRAMS = CONTAINS_AB\n",
        r"PROGRAMS is a single Program; write PROGRAMS = \{\"my-name\": program\}",
    ),
    "empty": ("PROGRAMS = {}\n", r"PROGRAMS is empty; put at least one program in it"),
    "not a program": (
        "PROGRAMS = {'my-x': 'a & b'}\n",
        r"PROGRAMS\['my-x'\] is a str, not a program; give a brasp\.Program or a crasp\.Program",
    ),
    "a triple": (
        "PROGRAMS = {'my-x': (CONTAINS_AB, 'a', 'b')}\n",
        r"PROGRAMS\['my-x'\] is a tuple of 3 items; give a program or a pair",
    ),
    "a reference of the wrong kind": (
        "PROGRAMS = {'my-x': (CONTAINS_AB, 3)}\n",
        r"PROGRAMS\['my-x'\]: the reference is an int; give a Language, an Automaton, a regular expression",
    ),
    "a regex that does not compile": (
        "PROGRAMS = {'my-x': (CONTAINS_AB, '[ab')}\n",
        r"PROGRAMS\['my-x'\]: the regular expression '\[ab' does not compile: .*; fix it",
    ),
    "a language over another alphabet": (
        "from netproof.verifier.claims import Language\n"
        "PROGRAMS = {'my-x': (CONTAINS_AB, Language(name='L', alphabet=('b', 'a'), contains=bool))}\n",
        r"the language L is over \('b', 'a'\) and program contains_ab over \('a', 'b'\); give both the same alphabet",
    ),
    "an automaton of another width": (
        "from netproof.verifier.claims import Automaton\n"
        "PROGRAMS = {'my-x': (CONTAINS_AB, Automaton(states=1, start=0, accepting=frozenset(), delta=((0, 0, 0),)))}\n",
        r"the automaton's rows have \[3\] columns, the alphabet \('a', 'b'\) has 2 symbols",
    ),
    "a bad MAX_LEN": (
        "PROGRAMS = {'my-x': CONTAINS_AB}\nMAX_LEN = '8'\n",
        r"MAX_LEN = '8' must be a whole number >= 1",
    ),
    "a bad name": (
        "PROGRAMS = {'My X': CONTAINS_AB}\n",
        r"PROGRAMS\['My X'\]: construction name 'My X' must be lowercase letters",
    ),
    "a built-in name": (
        "PROGRAMS = {'brasp-contains-ab': CONTAINS_AB}\n",
        r"construction 'brasp-contains-ab' has the name of a built-in construction",
    ),
    "a program that does not build": (
        "PROGRAMS = {'my-x': Program('x', ('a', 'b'), output=token('c'))}\n",
        r"importing it failed: ValueError: program 'x' reads token\('c'\), which is not in its alphabet .* \(line \d+",
    ),
}

HEAD = PROG.split("MAX_LEN")[0]


@pytest.mark.parametrize("kind", list(BAD_PROGRAMS))
def test_a_malformed_programs_module_exits_2_with_one_line_naming_the_file(
    here: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    source, message = BAD_PROGRAMS[kind]
    (here / "bad.py").write_text(HEAD + source, encoding="utf-8")
    for command in (("prove", "bad.py"), ("compile", "bad.py"), ("run", "bad.py", "ab")):
        done = netproof(capsys, *command)
        assert (done.code, done.out) == (2, ""), (command, done)
        lines = done.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("netproof: error: bad.py"), done.err
        assert re.search(message, lines[0]), lines[0]
    assert not (here / "proofs").exists()


def test_a_program_the_compiler_refuses_is_refused_when_the_module_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import netproof.constructions.rasp.claims as rasp_claims

    def refuse(program: object) -> Network:
        raise ValueError("too deep for this test\nsecond line")

    monkeypatch.setattr(rasp_claims, "compile_brasp", refuse)
    with pytest.raises(
        ProgramModuleError,
        match=r"^PROGRAMS\['my-x'\]: compiling program 'contains_ab' failed: ValueError: too deep for this test$",
    ):
        program_constructions({"my-x": contains_ab()})


def test_the_loader_s_error_is_a_usage_error(here: Path) -> None:
    (here / "bad.py").write_text(HEAD + "PROGRAMS = 3\n", encoding="utf-8")
    with pytest.raises(UserModuleError, match=r"^bad\.py: PROGRAMS is an int"):
        load("bad.py")


# --------------------------------------------------------------------------- new --template


@pytest.mark.parametrize(
    ("template", "word", "member"), [("brasp", "bbab", True), ("crasp", "(()", False)]
)
def test_new_writes_a_program_module_that_proves_out_of_the_box(
    here: Path, capsys: pytest.CaptureFixture[str], template: str, word: str, member: bool
) -> None:
    done = netproof(capsys, "new", "my-prog", "--template", template)
    assert done.code == 0 and done.out.startswith(
        f"wrote my_prog.py: program my-prog (the {template[0].upper()}-RASP program"
    )
    assert "netproof compile my_prog.py --out my_prog.json" in done.out
    text = (here / "my_prog.py").read_text(encoding="utf-8")
    assert text == render_program_template("my-prog", template) and "__" not in text.replace(
        "__future__", ""
    )
    record = json.loads(netproof(capsys, "run", "my_prog.py", word, "--json").out)
    assert (record["accepted"], record["member"]) == (member, member)
    done = netproof(
        capsys, "prove", "my_prog.py", "--max-n", "4", "--jobs", "1", "--quiet", "--out", ""
    )
    assert done.code == 0 and " 0 refuted" in done.out, done.out
    assert netproof(capsys, "new", "my-prog", "--template", template).code == 2  # never overwrites


def test_new_keeps_the_construction_template_by_default_and_refuses_an_unknown_template(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = netproof(capsys, "new", "my-majority")
    assert (
        done.code == 0
        and "construction my-majority (MAJORITY with one uniform-attention layer)" in done.out
    )
    done = netproof(capsys, "new", "my-other", "--template", "tracr")
    assert done.code == 2 and "invalid choice: 'tracr'" in done.err
    with pytest.raises(
        ValueError, match=r"template='tracr' is not a program template; choose brasp or crasp"
    ):
        render_program_template("my-other", "tracr")


# --------------------------------------------------------------------------- sizes


def test_the_size_of_a_compiled_program_counts_its_layers_heads_and_dims() -> None:
    net = compile_brasp(contains_ab())
    attention = [layer for layer in net.layers if type(layer.block).__name__ == "AttentionLayer"]
    assert network_size(net) == NetworkSize(
        layers=len(attention),
        heads=sum(len(layer.block.heads) for layer in attention),
        dims=len(net.dims),
        sublayers=len(net.layers),
    )
    assert network_size(net) == NetworkSize(layers=4, heads=4, dims=19, sublayers=10)


def test_every_kind_of_network_has_a_size() -> None:
    kinds = {}
    for c in REGISTRY.values():
        values = c.parse_params({})
        net = c.network(values, 3) if c.per_length else c.network(values)
        kinds[type(net)] = network_size(net)
    assert set(kinds) == {Network, Seq2Seq, RecurrentNetwork}
    assert kinds[RecurrentNetwork].layers == 1 and kinds[RecurrentNetwork].heads == 0
    assert kinds[Seq2Seq].heads > 0
    with pytest.raises(
        TypeError, match=r"network_size takes a Network, a Seq2Seq or a RecurrentNetwork, not str"
    ):
        network_size("net")  # type: ignore[arg-type]


def test_list_and_run_json_report_the_size_of_every_construction(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = json.loads(netproof(capsys, "list", "--json").out)["constructions"]
    assert len(rows) == len(REGISTRY) and all(
        {"layers", "heads", "dims", "sublayers"} <= set(r["size"]) for r in rows
    )
    by_name = {r["name"]: r["size"] for r in rows}
    assert by_name["rumelhart"]["n"] == 8  # built per length: sized at n = 8
    assert by_name["brasp-contains-ab"] == {"layers": 4, "heads": 4, "dims": 19, "sublayers": 10}
    text = netproof(capsys, "list", "brasp-contains-ab").out
    assert "    size: 4 layers, 4 heads, 19 dims\n" in text
    for name, word in (("parity", "0110"), ("stack-rnn", "()"), ("tm-sim", "()")):
        c = REGISTRY[name]
        net = c.network(c.parse_params({}))
        done = netproof(capsys, "run", name, word, "--json")
        assert done.code == 0, done.err
        assert json.loads(done.out)["size"] == network_size(net).to_json(), name
