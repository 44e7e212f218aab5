"""The SMT encoder: faithful to the exact interpreter on every block kind, proofs per length,
counterexamples replayed exactly and shrunk, honest Unknowns, SMT-LIB2 that cvc5 reads."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netproof.constructions import REGISTRY
from netproof.constructions.chiang2022 import first_transformer, parity_transformer
from netproof.symbolic import (
    AttentionLayer,
    Hardmax,
    Network,
    Sublayer,
    classifier,
    layernorm,
    token_embedding,
)
from netproof.symbolic.exact import run as run_exact
from netproof.verifier.claims import (
    Automaton,
    Construction,
    Language,
    Point,
    Proved,
    Recognizes,
    Refuted,
    StateValue,
    Unknown,
    ValueIs,
)
from netproof.verifier.claims.dyck import DYCK
from netproof.verifier.claims.languages import FIRST, PARITY
from netproof.verifier.exhaustive.checker import Job, check
from netproof.verifier.fuzzing.strategies import networks
from netproof.verifier.smt.closed_forms import closed_form_at
from netproof.verifier.smt.compositional import prove_recognizes
from netproof.verifier.smt.errors import EncoderBugError, Unsupported
from netproof.verifier.smt.monolithic import (
    logit_on,
    recognition_query,
    recognizes_smt,
    value_is_smt,
)
from netproof.verifier.smt.prove import prove_claim_smt, prove_smt
from netproof.verifier.smtlib import LemmaNode, SmtQuery, smt2_portable, to_smt2
from netproof.verifier.smtlib import printer as smt2_printer

pytestmark = pytest.mark.z3

REPO = Path(__file__).resolve().parents[2]


def dyck_net(k: int, depth: int, **given: str) -> Network:
    c = REGISTRY["dyck"]
    return c.network(c.parse_params({"k": str(k), "depth": str(depth), **given}))


def with_ties(net: Network, tie: str) -> Network:
    """``net`` with every hardmax head's tie rule replaced."""
    layers = []
    for sub in net.layers:
        block = sub.block
        if hasattr(block, "heads"):
            heads = tuple(
                dataclasses.replace(h, normalizer=Hardmax(tie=tie))
                if isinstance(h.normalizer, Hardmax)
                else h  # type: ignore[arg-type]
                for h in block.heads
            )
            block = dataclasses.replace(block, heads=heads)
        layers.append(dataclasses.replace(sub, block=block))
    return dataclasses.replace(net, layers=tuple(layers))


def cvc5_answer(text: str) -> str:
    from netproof.verifier.smt.recheck import solve_smt2

    return solve_smt2(text, "cvc5", 60.0)[0]


# --------------------------------------------------------------------------- SMT-LIB2 text


def test_the_smt2_text_starts_with_set_logic_and_has_no_one_argument_sum() -> None:
    text = smt2_portable(
        "(set-info :status unknown)\n(declare-fun x () Real)\n(assert (> (+ x) (* 2.0)))\n(check-sat)\n"
    )
    assert text.splitlines() == [
        "(set-logic QF_LRA)",
        "(declare-fun x () Real)",
        "(assert (> x 2.0))",
        "(check-sat)",
    ]


@pytest.mark.parametrize(
    ("script", "logic"),
    [
        ("(declare-fun b () Bool)(assert b)(check-sat)", "QF_UF"),
        ("(declare-fun x () Int)(assert (> (* 3 x) 1))(check-sat)", "QF_LIA"),
        ("(declare-fun x () Int)(assert (> (to_real x) 0.5))(check-sat)", "QF_LIRA"),
        (
            "(declare-fun x () Real)(declare-fun y () Real)(assert (> (* x y) (/ 1.0 3.0)))(check-sat)",
            "QF_NRA",
        ),
        ("(declare-fun x () Real)(assert (> (/ 1.0 x) 2.0))(check-sat)", "QF_NRA"),
    ],
)
def test_the_logic_line_is_the_smallest_standard_logic_that_fits(script: str, logic: str) -> None:
    assert smt2_portable(script).splitlines()[0] == f"(set-logic {logic})"


def test_smt2_text_without_check_sat_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no \(check-sat\)"):
        smt2_portable("(declare-fun x () Real)")


def test_cvc5_reads_every_query_of_a_dyck_proof_and_gives_z3s_answer() -> None:
    outcome = recognizes_smt(lambda m: dyck_net(2, 2), DYCK(2, 2), 0, 4)
    assert isinstance(outcome.verdict, Proved)
    assert [q.name for q in outcome.queries] == ["n=0", "n=1", "n=2", "n=3", "n=4"]
    assert [cvc5_answer(q.smt2) for q in outcome.queries] == ["unsat"] * 5


def test_queries_and_lemma_nodes_are_frozen_records_with_a_content_hash() -> None:
    q = SmtQuery(name="n=3", smt2="(set-logic ALL)\n(check-sat)\n", result="unsat")
    node = LemmaNode(
        name="theorem",
        statement="s",
        verdict="proved",
        queries=(q,),
        children=(LemmaNode(name="lemma", statement="t", verdict="proved"),),
    )
    assert q.sha256 == hashlib.sha256(b"(set-logic ALL)\n(check-sat)\n").hexdigest()
    assert [n.name for n in node.walk()] == ["theorem", "lemma"]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        q.result = "sat"  # type: ignore[misc]


# --------------------------------------------------------------------------- the one-pass printer
# The reference printer (verifier/smt.py before the one-pass printer, commit 6ba1bd6): parse into
# nested lists, drop one-argument sums and products recursively, print back. The oracle below.

_REF_TOKEN = re.compile(r'\s+|;[^\n]*|"(?:[^"]|"")*"|\|[^|]*\||[()]|[^\s()";|]+')
_REF_NUMERAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def _ref_sexprs(text: str) -> list[Any]:
    stack: list[list[Any]] = [[]]
    for m in _REF_TOKEN.finditer(text):
        tok = m.group(0)
        if tok.isspace() or tok.startswith(";"):
            continue
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced ')' in SMT-LIB2 text")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise ValueError("unbalanced '(' in SMT-LIB2 text")
    return stack[0]


def _ref_unary_fixed(e: Any) -> Any:
    if isinstance(e, str):
        return e
    e = [_ref_unary_fixed(x) for x in e]
    if len(e) == 2 and e[0] in ("+", "*"):
        return e[1]
    return e


def _ref_show(e: Any, out: list[str]) -> None:
    if isinstance(e, str):
        out.append(e)
        return
    out.append("(")
    for i, x in enumerate(e):
        if i:
            out.append(" ")
        _ref_show(x, out)
    out.append(")")


def _ref_constant(e: Any) -> bool:
    if isinstance(e, str):
        return bool(_REF_NUMERAL.match(e))
    return (
        bool(e) and e[0] in ("-", "/", "+", "*", "to_real") and all(_ref_constant(x) for x in e[1:])
    )


def _ref_scan(e: Any, seen: set[str]) -> bool:
    if isinstance(e, str):
        if e in ("Int", "Real"):
            seen.add(e)
        elif e in ("to_real", "to_int", "is_int"):
            seen.update(("Int", "Real"))
        elif "." in e and _REF_NUMERAL.match(e):
            seen.add("Real")
        return False
    nonlinear = False
    if e and e[0] in ("*", "/", "div", "mod"):
        variable = [x for x in e[1:] if not _ref_constant(x)]
        if len(variable) > 1 or (e[0] != "*" and len(e) > 2 and not _ref_constant(e[2])):
            nonlinear = True
    for x in e:
        nonlinear = _ref_scan(x, seen) or nonlinear
    return nonlinear


def _ref_logic(commands: list[Any]) -> str:
    seen: set[str] = set()
    nonlinear = any(_ref_scan(c, seen) for c in commands)
    if any(isinstance(c, list) and c and c[0] in ("forall", "exists") for c in commands):
        return "ALL"
    if not seen:
        return "QF_UF"
    sorts = "IRA" if seen == {"Int", "Real"} else ("IA" if "Int" in seen else "RA")
    return f"QF_{'N' if nonlinear else 'L'}{sorts}"


def reference_portable(text: str, *, logic: str | None = None) -> str:
    # This oracle recurses on the nesting, and z3 nests one let per shared subterm: a decision-
    # diagram invariant nests some 700 deep for Dyck(2,2), 2200 for Dyck(2,3).
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))
    try:
        return _reference_portable(text, logic)
    finally:
        sys.setrecursionlimit(old)


def _reference_portable(text: str, logic: str | None) -> str:
    commands = _ref_sexprs(text)
    lines = [f"(set-logic {logic or _ref_logic(commands)})"]
    saw_check = False
    for cmd in commands:
        if isinstance(cmd, list) and cmd and cmd[0] in ("set-info", "set-logic", "set-option"):
            continue
        if isinstance(cmd, list) and cmd and cmd[0] == "check-sat":
            saw_check = True
            continue
        out: list[str] = []
        _ref_show(_ref_unary_fixed(cmd), out)
        lines.append("".join(out))
    if not saw_check:
        raise ValueError("the SMT-LIB2 text has no (check-sat)")
    lines.append("(check-sat)")
    return "\n".join(lines) + "\n"


def printed(printer: Callable[..., str], text: str, logic: str | None) -> str:
    """The printer's text, or its error as text (both printers must fail alike)."""
    try:
        return printer(text, logic=logic)
    except ValueError as exc:
        return f"ValueError: {exc}"


def z3_dumps(
    monkeypatch: pytest.MonkeyPatch, prove: Callable[[], object]
) -> list[tuple[str, str | None]]:
    """The raw z3 dumps (with the logic passed) that ``prove`` hands to the printer."""
    captured: list[tuple[str, str | None]] = []
    printer = smt2_printer.smt2_portable

    def capture(text: str, *, logic: str | None = None) -> str:
        captured.append((text, logic))
        return printer(text, logic=logic)

    with monkeypatch.context() as m:
        m.setattr(smt2_printer, "smt2_portable", capture)
        prove()
    assert captured, "the proof printed no query"
    return captured


def compositional(
    name: str, params: dict[str, str], claim_id: str, length: int
) -> Callable[[], object]:
    """The compositional proof (lemmas, then one query) of a recognition claim for one length."""

    def run() -> object:
        c = REGISTRY[name]
        values = c.parse_params(params)
        claim = {x.id: x for x in c.claims(values)}[claim_id]
        assert isinstance(claim, Recognizes) and c.lemmas is not None
        net = c.network(values, length) if c.per_length else c.network(values)
        return prove_recognizes(
            net,
            dataclasses.replace(claim, min_len=length, max_len=length),
            c.lemmas(values),
            length,
        )

    return run


def monolithic(net: Network, language: Language, m: int) -> Callable[[], object]:
    def run() -> None:
        q = recognition_query(net, language, m)
        to_smt2(q.solver, logic=q.logic)
        to_smt2(q.solver)

    return run


@pytest.mark.parametrize(
    "prove",
    [
        compositional("dyck", {"k": "2", "depth": "2"}, "Y2", 8),
        compositional("dyck", {"k": "1", "depth": "1"}, "Y2", 24),
        compositional("parity", {}, "C4", 12),
        lambda: prove_smt(REGISTRY["first"], {}, "recognizes", 4),
        monolithic(dyck_net(2, 2), DYCK(2, 2), 3),
        monolithic(parity_transformer(), PARITY, 4),
        monolithic(first_transformer(), FIRST, 4),
        lambda: prove_smt(REGISTRY["gates"], {}, "Y1-GT", 0),
    ],
    ids=[
        "dyck(2,2) n=8",
        "dyck(1,1) n=24",
        "parity n=12",
        "first n<=4",
        "monolithic dyck(2,2) n=3",
        "monolithic parity n=4",
        "monolithic first n=4",
        "gates Y1-GT",
    ],
)
def test_the_one_pass_printer_gives_the_reference_printers_bytes_on_real_z3_dumps(
    monkeypatch: pytest.MonkeyPatch, prove: Callable[[], object]
) -> None:
    for text, logic in z3_dumps(monkeypatch, prove):
        for passed in {logic, None}:
            assert smt2_portable(text, logic=passed) == reference_portable(text, logic=passed)


EDGE_CASES = {
    "nested unary sums and products": "(declare-fun x () Real)(assert (> (+ (* (+ x))) (* 2.0 (+ (- x)))))(check-sat)",
    "a top-level unary sum": "(+ (+ x))(check-sat)",
    "a unary sum whose operator is itself a unary sum": "(assert ((+ +) x))(assert ((* (+ *)) (+ y)))(+ (+ +))(check-sat)",
    "sums that are not unary": "(assert (= (+) (+ x y) (* 2 x y) (+ (f x))))(check-sat)",
    "quoted symbols with spaces and parentheses": "(declare-fun |a b| () Int)(declare-fun |p(q)| () Int)(assert (> (+ |a b|) |p(q)|))(check-sat)",
    "quoted symbols next to atoms and each other": "(assert (f a|b| |c||d|e))(assert (g |;|x))(check-sat)",
    "a quoted symbol over lines": "(declare-fun |line\none| () Bool)(assert |line\none|)(check-sat)",
    "string literals with quotes, parentheses and semicolons": '(assert (= s "a ( b"))(assert (= t "x""y;z"))(check-sat)',
    "comments before, between and inside commands": "; lead\n; two\n(assert x) ; after\n(assert ; inside (\n y)\n;(check-sat)\n(check-sat)",
    "unterminated quote characters": '(assert x)"(check-sat) |',
    "z3's let bindings over lines": "; benchmark\n(set-info :status unknown)\n(assert\n (let (($x1 (> x 0)))\n(let ((a!1 (+ 1 x)))\n (and $x1 (< a!1 2)))))\n(check-sat)\n",
    "a top-level quantifier": "(declare-fun f (Int) Int)(forall ((x Int)) (> (f x) 0))(check-sat)",
    "a quantifier inside an assertion": "(assert (exists ((x Real)) (> (* x x) 0.0)))(check-sat)",
    "Int and Real mixed": "(declare-fun i () Int)(declare-fun r () Real)(assert (> (to_real i) r))(check-sat)",
    "a decimal numeral only in set-info": "(set-info :version 4.8)(declare-fun i () Int)(assert (> i 0))(check-sat)",
    "a nonlinear product before the Real sort": "(declare-fun i () Int)(assert (> (* i i) 0))(declare-fun r () Real)(check-sat)",
    "nonlinear quotients and remainders": "(assert (= (div x y) (mod 3 x) (/ 1.0 (+ 2.0 3.0)) (/ x (- 2))))(check-sat)",
    "constant products are linear": "(assert (= (* 2.0 (/ 1 3) x) (* (to_real 2) (- 1.5) y)))(check-sat)",
    "top-level atoms, empty lists and set-logic": "x () (set-logic QF_LRA)(set-option :seed 1)(check-sat)y",
    "unicode and control whitespace": "(assert\u00a0(>\u2003x\x1c0))\u3000(check-sat)",
    "no whitespace at all": "(assert(>(+ x)0))(assert(f(g)(h)))(check-sat)",
    "empty text": "",
    "unbalanced (": "(assert (> x 0)(check-sat)",
    "unbalanced )": "(assert x))(check-sat)",
    "unbalanced ) then (": "(assert x)) ((check-sat)",
    "no check-sat": "(declare-fun x () Real)",
    "check-sat as an atom": "check-sat (assert x)",
}


@pytest.mark.parametrize("logic", [None, "QF_NIRA"])
@pytest.mark.parametrize("text", list(EDGE_CASES.values()), ids=list(EDGE_CASES))
def test_the_one_pass_printer_gives_the_reference_printers_bytes_on_edge_cases(
    text: str, logic: str | None
) -> None:
    assert printed(smt2_portable, text, logic) == printed(reference_portable, text, logic)


def test_one_argument_sums_and_products_are_dropped_innermost_first() -> None:
    text = smt2_portable(
        "(assert (> (+ (* (+ x))) (* 2.0 (+ y))))(assert ((+ +) z))(check-sat)", logic="QF_LRA"
    )
    assert text.splitlines()[1:3] == ["(assert (> x (* 2.0 y)))", "(assert z)"]


def test_quoted_symbols_and_string_literals_keep_their_spaces_parentheses_and_line_breaks() -> None:
    text = smt2_portable('(assert (= |a ( b| "c ) d"))\n(assert |e\nf|)\n(check-sat)', logic="ALL")
    assert text == '(set-logic ALL)\n(assert (= |a ( b| "c ) d"))\n(assert |e\nf|)\n(check-sat)\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(assert (> x 0)(check-sat)", r"unbalanced '\(' in SMT-LIB2 text"),
        ("(assert x))(check-sat)", r"unbalanced '\)' in SMT-LIB2 text"),
        ("(assert x)) ((check-sat)", r"unbalanced '\)' in SMT-LIB2 text"),
        ("check-sat (assert x)", r"the SMT-LIB2 text has no \(check-sat\)"),
    ],
)
def test_unbalanced_text_and_text_without_check_sat_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        smt2_portable(text)


_ATOMS = [
    "x",
    "y",
    "+",
    "*",
    "-",
    "/",
    "div",
    "mod",
    "to_real",
    "to_int",
    "Int",
    "Real",
    "1",
    "2.5",
    "0.0",
    "set-info",
    "set-logic",
    "check-sat",
    "forall",
    "exists",
    "assert",
    "let",
    "|a b|",
    "|p(q|",
    "|x|",
    "||",
    '"s t"',
    '"a""b"',
    "w0.1",
]
_SPACE = st.sampled_from([" ", "\n", "\n ", "\t", "", "\u00a0", " ; note\n"])


@st.composite
def _sexpr(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 4 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    items = draw(st.lists(st.deferred(lambda: _sexpr(depth + 1)), max_size=4))
    return "(" + "".join(draw(_SPACE) + item for item in items) + draw(_SPACE) + ")"


@st.composite
def _scripts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.one_of(_sexpr(), st.sampled_from(["(check-sat)", "; c\n", '"', "|", ")", "("])),
            max_size=6,
        )
    )
    return "".join(draw(_SPACE) + p for p in parts)


@settings(max_examples=300, deadline=None)
@given(text=_scripts(), logic=st.sampled_from([None, "ALL"]))
def test_the_one_pass_printer_gives_the_reference_printers_bytes_on_random_scripts(
    text: str, logic: str | None
) -> None:
    assert printed(smt2_portable, text, logic) == printed(reference_portable, text, logic)


_Z3_HEADS = ["+", "*", "+", "*", "f", "and", "-", "(+ +)", "(* x)", "let", "forall"]
_Z3_ATOMS = ["x", "y", "2.0", "+", "*", "|q|", "|a.b#1|", "+x", "Int"]


@st.composite
def _z3_term(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 5 or draw(st.integers(0, 9)) < 3:
        return draw(st.sampled_from(_Z3_ATOMS))
    items = [
        draw(st.sampled_from(_Z3_HEADS)),
        *draw(st.lists(st.deferred(lambda: _z3_term(depth + 1)), max_size=3)),
    ]
    gaps = draw(
        st.lists(
            st.sampled_from([" ", "\n ", "  ", "\n"]), min_size=len(items), max_size=len(items)
        )
    )
    return (
        "("
        + items[0]
        + "".join(g + it for g, it in zip(gaps[1:], items[1:], strict=True))
        + draw(st.sampled_from(["", " ", "\n"]))
        + ")"
    )


@st.composite
def _z3_dumps(draw: st.DrawFn) -> str:
    """Text laid out as z3 dumps it (what the byte path covers), with one-argument sums nested
    in every way, and now and then something it leaves to the tokens."""
    commands = [f"(assert {t})" for t in draw(st.lists(_z3_term(), min_size=1, max_size=4))]
    commands.insert(draw(st.integers(0, len(commands))), "(check-sat)")
    extra = draw(
        st.sampled_from(["", "", "", "(+ x)", "x", "(f (g x)(h y))", "(declare-fun |a b| () Int)"])
    )
    return (
        "; benchmark generated from python API\n(set-info :status unknown)\n"
        + "\n".join(commands)
        + "\n"
        + extra
    )


@settings(max_examples=300, deadline=None)
@given(text=_z3_dumps())
def test_the_one_pass_printer_gives_the_reference_printers_bytes_on_random_z3_like_dumps(
    text: str,
) -> None:
    assert printed(smt2_portable, text, "ALL") == printed(reference_portable, text, "ALL")


@pytest.mark.parametrize(
    "prove",
    [
        compositional("dyck", {"k": "2", "depth": "2"}, "Y2", 8),
        compositional("parity", {}, "C4", 12),
    ],
    ids=["dyck(2,2) n=8", "parity n=12"],
)
def test_the_byte_path_prints_the_largest_dump_of_a_proof_as_the_reference_printer_does(
    monkeypatch: pytest.MonkeyPatch, prove: Callable[[], object]
) -> None:
    """z3's dumps with a given logic are printed on their bytes (numpy), not through the tokens."""
    text, logic = max(z3_dumps(monkeypatch, prove), key=lambda d: len(d[0]))
    logic = (
        logic or "QF_LIRA"
    )  # PARITY's queries have arithmetic: the prover leaves the logic to smt2_logic
    assert smt2_printer._portable_bytes(text, logic) == reference_portable(text, logic=logic)


def test_every_committed_query_is_printed_back_to_its_own_bytes() -> None:
    """The committed .smt2 files are the printer's output: printing one again (with its own logic)
    gives the same bytes, so the one-pass printer writes what the reference printer wrote."""
    files = sorted((REPO / "proofs" / "queries").rglob("*.smt2"))
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        logic = text.splitlines()[0].removeprefix("(set-logic ").removesuffix(")")
        assert smt2_portable(text, logic=logic) == text, path


# --------------------------------------------------------------------------- faithful encoding


@pytest.mark.parametrize(
    ("name", "net", "alphabet", "max_len"),
    [
        ("parity", parity_transformer(), ("0", "1"), 3),
        ("first", first_transformer(), ("0", "1"), 3),
        ("dyck(2,2)", dyck_net(2, 2), DYCK(2, 2).alphabet, 2),
        ("dyck(2,2) leftmost", with_ties(dyck_net(2, 2), "leftmost"), DYCK(2, 2).alphabet, 1),
        ("dyck(2,2) rightmost", with_ties(dyck_net(2, 2), "rightmost"), DYCK(2, 2).alphabet, 1),
        ("dyck(1,2) paper", dyck_net(1, 2, variant="paper"), DYCK(1, 2).alphabet, 3),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_the_encoded_logit_is_the_exact_logit_on_every_short_word(
    name: str, net: Network, alphabet: tuple[str, ...], max_len: int
) -> None:
    for m in range(max_len + 1):
        for w in itertools.product(alphabet, repeat=m):
            assert logit_on(net, w) == ("sat", "unsat"), (name, w)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    net=networks(softmax=False),
    word=st.lists(st.sampled_from(("a", "b", "c")), max_size=4).map(tuple),
)
def test_the_encoded_logit_is_the_exact_logit_on_random_hardmax_networks(
    net: Network, word: tuple[str, ...]
) -> None:
    """Every mask, scoring, tie rule, activation, W^O and residual kind the strategy draws."""
    assert logit_on(net, word) == ("sat", "unsat")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    net=networks(softmax=True),
    word=st.lists(st.sampled_from(("a", "b", "c")), max_size=3).map(tuple),
)
def test_the_encoded_logit_is_the_exact_logit_on_random_networks_with_softmax_heads(
    net: Network, word: tuple[str, ...]
) -> None:
    """Softmax heads of base 2, 3 or 1/2 with integer scores, word-dependent ones included (the
    output times the normalizer is the weighted sum, one case per value of the normalizer)."""
    from netproof.symbolic import NotRationalError
    from netproof.verifier.smt.errors import Unsupported

    try:
        run_exact(net, word)
    except NotRationalError:
        return  # the exact interpreter has no rational value to compare with
    try:
        answers = logit_on(net, word)
    except Unsupported as exc:
        assert str(exc), "an unsupported network says why"
        return
    assert answers == ("sat", "unsat")


# --------------------------------------------------------------------------- proofs


@pytest.mark.parametrize(
    ("net", "language", "n"),
    [
        (parity_transformer(), PARITY, 12),
        (first_transformer(), FIRST, 12),
        (dyck_net(1, 1), DYCK(1, 1), 10),
        (dyck_net(2, 2), DYCK(2, 2), 4),
    ],
    ids=["parity", "first", "dyck(1,1)", "dyck(2,2)"],
)
def test_the_recognizers_are_proved_for_every_length_with_one_unsat_query_per_length(
    net: Network, language: Language, n: int
) -> None:
    outcome = recognizes_smt(lambda m: net, language, 0, n)
    assert isinstance(outcome.verdict, Proved)
    assert outcome.verdict.checked == sum(len(language.alphabet) ** m for m in range(n + 1))
    assert [q.result for q in outcome.queries] == ["unsat"] * (n + 1)
    assert all(
        q.smt2.startswith("(set-logic QF_LIRA)\n") and q.smt2.endswith("(check-sat)\n")
        for q in outcome.queries[1:]
    )


def test_the_paper_dyck_recognizer_is_refuted_with_the_exhaustive_checkers_counterexample() -> None:
    net = dyck_net(1, 1, variant="paper")
    claim = Recognizes(id="rec", statement="s", reference="r", language=DYCK(1, 1), max_len=6)
    job = Job(
        Construction(
            name="m",
            paper_id="m",
            title="m",
            reference="m",
            params=(),
            build=lambda v: net,
            claims=lambda v: (),
        ),
        {},
    )
    exhaustive = check(job, claim)
    outcome = recognizes_smt(lambda m: net, DYCK(1, 1), 0, 6)
    assert isinstance(exhaustive, Refuted) and isinstance(outcome.verdict, Refuted)
    assert outcome.verdict.word == exhaustive.word  # shortest length, then shortlex-first
    trace = run_exact(net, outcome.verdict.word)
    assert trace.accepted != DYCK(1, 1).contains(outcome.verdict.word)
    assert outcome.queries[-1].result == "sat"
    assert [q.result for q in outcome.queries[:-1]] == ["unsat"] * (len(outcome.queries) - 1)


def _parity_mutant() -> Network:
    """PARITY with the embedding of "1" in dim I[w=1] raised by 1/2."""
    net = parity_transformer()
    emb = net.embedding
    table = tuple(
        (
            tok,
            tuple(
                (d, v + Fraction(1, 2)) if (tok, d) == ("1", "I[w=1]") else (d, v) for d, v in row
            ),
        )
        for tok, row in emb.table
    )
    return dataclasses.replace(net, embedding=dataclasses.replace(emb, table=table))


def test_a_mutated_weight_is_refuted_with_a_word_the_exact_interpreter_gets_wrong() -> None:
    mutant = _parity_mutant()
    outcome = recognizes_smt(lambda m: mutant, PARITY, 0, 8)
    assert isinstance(outcome.verdict, Refuted)
    word = outcome.verdict.word
    assert word is not None and run_exact(mutant, word).accepted != PARITY.contains(word)
    shorter = [w for m in range(len(word)) for w in itertools.product("01", repeat=m)]
    assert all(run_exact(mutant, w).accepted == PARITY.contains(w) for w in shorter)


def test_a_model_the_exact_interpreter_does_not_reproduce_raises_an_encoder_bug() -> None:
    wrong = Language(
        name="PARITY with FIRST's automaton",
        alphabet=("0", "1"),
        contains=PARITY.contains,
        automaton=FIRST.automaton,
    )
    with pytest.raises(EncoderBugError, match="the SMT encoding is wrong"):
        recognizes_smt(lambda m: parity_transformer(), wrong, 0, 3)


def test_a_timeout_is_unknown_with_the_solvers_reason_never_a_proof() -> None:
    outcome = recognizes_smt(lambda m: dyck_net(2, 2), DYCK(2, 2), 0, 12, timeout=0.05)
    assert isinstance(outcome.verdict, Unknown)
    assert "timeout" in outcome.verdict.reason or "canceled" in outcome.verdict.reason


@pytest.mark.parametrize(
    ("name", "claim_id", "reason"),
    [
        (
            "parity-ln",
            "C7",
            r"unsupported: layer norm after 'count' at token 0: layer norm needs √\(1/3\), which is not rational",
        ),
        (
            "parity-ln",
            "C7-mirror",
            "unsupported: the smt method does not cover MirrorInvariant claims",
        ),
        (
            "first-ln-logn",
            "recognizes",
            r"unsupported: layer norm after 'att1' at token 0: layer norm needs √\(1/6\)",
        ),
    ],
)
def test_what_the_encoder_cannot_encode_is_unknown_unsupported(
    name: str, claim_id: str, reason: str
) -> None:
    outcome = prove_smt(REGISTRY[name], {}, claim_id, 3, timeout=30)
    assert isinstance(outcome.verdict, Unknown)
    assert re.search(reason, outcome.verdict.reason), outcome.verdict.reason


def test_a_layer_norm_over_word_dependent_values_is_unknown_unsupported() -> None:
    net = Network(
        name="ln",
        dims=("u", "v"),
        embedding=token_embedding(("a", "b"), {"a": {"u": 1, "v": -1}, "b": {"u": 3, "v": 1}}),
        layers=(Sublayer(block=AttentionLayer(name="att", heads=()), post_ln=layernorm(0)),),
        readout=classifier("u"),
    )
    lang = Language(
        name="all",
        alphabet=("a", "b"),
        contains=lambda w: True,
        automaton=Automaton(states=1, start=0, accepting=frozenset({0}), delta=((0, 0),)),
    )
    outcome = recognizes_smt(lambda m: net, lang, 1, 2)
    assert isinstance(outcome.verdict, Unknown)
    assert outcome.verdict.reason == (
        "unsupported: layer norm after 'att' at token 0: layer norm over word-dependent values (√ of a "
        "symbolic variance) is not encoded; check this claim with --method exhaustive"
    )


def test_prove_smt_names_the_claims_when_the_id_is_wrong() -> None:
    with pytest.raises(KeyError, match="its claims: C4"):
        prove_smt(REGISTRY["parity"], {}, "C99", 4)


@pytest.mark.parametrize("claim_id", ["Y1-AND", "Y1-SAME", "Y1-GT"])
def test_prove_smt_routes_block_lemmas_through_one_logged_query_that_cvc5_also_proves(
    claim_id: str,
) -> None:
    outcome = prove_smt(REGISTRY["gates"], {}, claim_id, 0)
    assert isinstance(outcome.verdict, Proved)
    assert [(q.name, q.result) for q in outcome.queries] == [(claim_id, "unsat")]
    assert cvc5_answer(outcome.queries[0].smt2) == "unsat"


# --------------------------------------------------------------------------- closed forms (ValueIs.closed_form)


def _closed_form_claims() -> list[tuple[str, Any, Any]]:
    out = []
    for name, construction in sorted(REGISTRY.items()):
        values = construction.parse_params({})
        for claim in construction.claims(values):
            if isinstance(claim, ValueIs) and claim.closed_form is not None:
                out.append((name, values, claim))
    return out


def test_some_constructions_declare_closed_forms() -> None:
    assert {(name, claim.id) for name, _values, claim in _closed_form_claims()} >= {
        ("parity", "C3-count"),
        ("parity", "C3-1/n"),
        ("parity", "C3-fig1"),
    }


@pytest.mark.parametrize(
    ("name", "values", "claim"),
    _closed_form_claims(),
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_every_declared_closed_form_agrees_with_its_expectation_on_every_word_up_to_length_6(
    name: str, values: Any, claim: ValueIs
) -> None:
    construction = REGISTRY[name]
    net = construction.network(values)
    for m in range(7):
        for word in itertools.product(net.alphabet, repeat=m):
            trace = run_exact(net, word)
            for t in range(trace.n if isinstance(claim.quantity, StateValue) else 1):
                point = Point(word, t, trace.positions[t], trace.n)
                wanted = claim.expected(point)
                if wanted is not None:
                    assert (
                        closed_form_at(claim.closed_form, net.alphabet, word, t, point.i, point.n)
                        == wanted
                    ), (word, t)


@pytest.mark.parametrize("claim_id", ["C3-count", "C3-1/n", "C3-fig1"])
def test_a_closed_form_of_parity_is_proved_over_a_symbolic_word_with_one_query_per_length(
    claim_id: str,
) -> None:
    outcome = prove_smt(REGISTRY["parity"], {}, claim_id, 10)
    assert isinstance(outcome.verdict, Proved), outcome.verdict
    assert [(q.name, q.result) for q in outcome.queries] == [(f"n={m}", "unsat") for m in range(11)]
    assert cvc5_answer(outcome.queries[-1].smt2) == "unsat"


def _parity_claim(claim_id: str) -> ValueIs:
    construction = REGISTRY["parity"]
    claim = next(c for c in construction.claims(construction.parse_params({})) if c.id == claim_id)
    assert isinstance(claim, ValueIs)
    return claim


def test_a_closed_form_a_mutant_breaks_is_refuted_with_a_word_the_exact_interpreter_confirms() -> (
    None
):
    mutant = _parity_mutant()
    job = Job(
        Construction(
            name="mutant",
            paper_id="test",
            title="mutant",
            reference="test",
            params=(),
            build=lambda values: mutant,
            claims=lambda values: (),
        ),
        {},
    )
    outcome = value_is_smt(job, _parity_claim("C3-count"), 0, 6)
    assert isinstance(outcome.verdict, Refuted)
    word = outcome.verdict.word
    assert word == ("1",)  # the first length with a 1 in it
    trace = run_exact(mutant, word)
    assert trace.value("count", 0, "k/n") != Fraction(1, 2)


def test_a_closed_form_that_contradicts_its_expectation_is_a_declaration_error() -> None:
    import sympy

    claim = dataclasses.replace(
        _parity_claim("C3-count"), closed_form=sympy.Symbol("#1") / (sympy.Symbol("n") + 1)
    )
    job = Job(REGISTRY["parity"], REGISTRY["parity"].parse_params({}))
    with pytest.raises(
        ValueError,
        match=r"claim C3-count: its closed_form .* and its expected disagree on '1' at token 0",
    ):
        value_is_smt(job, claim, 0, 4)


def test_a_closed_form_with_a_symbol_outside_the_vocabulary_is_unknown_unsupported() -> None:
    import sympy

    claim = dataclasses.replace(
        _parity_claim("C3-count"), closed_form=sympy.Symbol("k") / sympy.Symbol("n")
    )
    job = Job(REGISTRY["parity"], REGISTRY["parity"].parse_params({}))
    outcome = value_is_smt(job, claim, 0, 4)
    assert isinstance(outcome.verdict, Unknown)
    assert (
        outcome.verdict.reason
        == "unsupported: the closed form names 'k'; it may use n, t, i, #a and wj=a for a in ['0', '1']"
    )


def test_a_closed_form_with_a_float_is_refused_as_unknown_naming_it() -> None:
    import sympy

    claim = dataclasses.replace(
        _parity_claim("C3-count"),
        closed_form=sympy.Float(0.5) * sympy.Symbol("#1") / sympy.Symbol("n"),
    )
    job = Job(REGISTRY["parity"], REGISTRY["parity"].parse_params({}))
    outcome = value_is_smt(job, claim, 0, 2)
    assert isinstance(outcome.verdict, Unknown)
    assert (
        outcome.verdict.reason
        == "unsupported: the closed form has the float 0.500000000000000; write it as a sympy.Rational (exact)"
    )


def test_a_value_claim_without_a_closed_form_is_unknown_under_smt_with_the_reason() -> None:
    outcome = prove_smt(REGISTRY["parity"], {}, "C5", 4)
    assert isinstance(outcome.verdict, Unknown)
    assert (
        "does not cover ValueIs claims checked with the symbolic backend" in outcome.verdict.reason
        or "does not cover ValueIs claims without a closed form" in outcome.verdict.reason
    )


def test_a_closed_form_is_proved_compositionally_with_the_lemmas_in_place_when_the_construction_declares_them() -> (
    None
):
    construction = REGISTRY["parity"]
    job = Job(construction, construction.parse_params({}))
    outcome = prove_claim_smt(job, _parity_claim("C3-fig1"), 40, timeout=120)
    assert isinstance(outcome.verdict, Proved), outcome.verdict
    assert outcome.verdict.method == "smt (z3), compositional"
    assert "and every longer one" in outcome.verdict.detail
    tree = outcome.lemmas
    assert tree is not None
    assert [(q.name, q.result) for q in tree.queries] == [
        ("C3-fig1 every n: position classes", "unsat")
    ]
    assert {node.name: node.verdict for node in tree.children}["fig1"] == "proved"


def test_a_closed_form_outside_the_position_classes_is_proved_one_length_at_a_time_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from netproof.verifier.smt.compositional import classes as np_classes

    def unsupported(*args: object) -> object:
        raise Unsupported("a feature that does not repeat")

    monkeypatch.setattr(np_classes, "value_query", unsupported)
    construction = REGISTRY["parity"]
    job = Job(construction, construction.parse_params({}))
    outcome = prove_claim_smt(job, _parity_claim("C3-fig1"), 40, timeout=120)
    assert isinstance(outcome.verdict, Proved), outcome.verdict
    assert outcome.verdict.detail.endswith(
        "(not every length at once: unsupported by position classes: a feature that does not repeat)"
    )
    tree = outcome.lemmas
    assert tree is not None
    assert [(q.name, q.result) for q in tree.queries] == [
        (f"C3-fig1 n={m}", "unsat") for m in range(41)
    ]
