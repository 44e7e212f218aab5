"""The kernel's checks of one proof record against one network file.

A record is checked, refused (outside the kernel, with what is outside named) or found to
disagree with what the kernel computes. What the kernel checks today:

- a recognition claim's record whose verdict an exhaustive check establishes (``exhaustive
  (…)``, alone or beside per-length queries): every word of the bound run through the kernel's
  own interpreter (:mod:`.interpret`) and compared with the kernel's own definition of the
  language (:mod:`.languages`). Rule (exhaustive proof): if every word w with lo ≤ |w| ≤ hi is
  accepted exactly when it is in L, the claim "the network recognizes L on words of length lo..hi"
  holds; the record's ``checked`` must be the number of those words. Rule (refutation): a word
  on which acceptance and membership differ refutes the claim; the record's counterexample must
  be the first such word in shortlex order (the shortest, then the first), as netproof records it.

- a recognition claim proved by solver queries (per length, by lemmas, for every length): the
  kernel does not read the queries but re-derives the theorem outright for every length by its
  rule of position classes (:mod:`.classes`), which implies the record's claim whatever its
  bound; a network outside that rule is refused, named.

- the same claims of a family of networks, one per word length (:func:`family`): each word run
  on its own length's network, the exhaustive rules unchanged.

Everything else is refused, naming the claim kind and method: value, trace and simulation claims
need definitions the kernel does not have.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from . import nextsym, programs, recurrent, relative, seq2seq, traces
from .classes import prove_every_length
from .interpret import Exhaustive, evaluator, forward, numbered
from .languages import DYCK, brackets, dyck, language, pair_heights, program_beside
from .netfile import (
    MORE,
    KernelError,
    Refused,
    bounds,
    loads,
    loads_json,
    network,
    render,
    sweep,
)
from .rounds import prove_by_rounds

MAX_WORDS = 200_000
"""The most words an exhaustive record may hold for the kernel to run them all (its fast path,
:class:`.interpret.Exhaustive`, runs a few thousand words a second on Dyck(2, 2); the plain
interpreter, for softmax and layer norms, about a millisecond a word for the small networks)."""


def read_network(text: str) -> Any:
    """The network of a network file in any of the kernel's three formats, by its ``format``."""
    readers = {"netproof-network": network, recurrent.FORMAT: recurrent.RNet}
    return loads(text, readers | {seq2seq.FORMAT: seq2seq.S2S})


@dataclass(frozen=True)
class KernelResult:
    """``outcome``: ``checked``, ``refused`` or ``disagree``; ``kind``: the claim kind;
    ``detail``: what was checked, what is outside the kernel, or what differs."""

    outcome: str
    kind: str
    detail: str


def check_exhaustive(
    rec: dict[str, Any], net: Any, max_words: int, folder: Path | None = None
) -> str:
    """The exhaustive rules of the module docstring; the detail of what was checked, or KernelError
    (the record disagrees), or Refused."""
    if not isinstance(rec.get("bound"), dict):
        raise Refused("an exhaustive record without a bound")
    (lo, hi), a, cx = bounds(rec), len(net.alphabet), rec.get("counterexample")
    count = need = sum(a**n for n in range(lo, hi + 1))
    single = all(len(s) == 1 for s in net.alphabet)  # a word as render writes it, read back
    word = () if not isinstance(cx, str) else tuple(cx) if single else tuple(cx.split())
    if rec["verdict"] == "refuted" and set(word) <= set(net.alphabet) and lo <= len(word) <= hi:
        rank = functools.reduce(lambda r, s: r * a + net.alphabet.index(s), word, 0)  # shortlex
        need = sum(a**n for n in range(lo, len(word))) + rank + 1
    if need > max_words:
        return _beyond_budget(rec, net, need, count, max_words)
    member = language(rec["claim"]["statement"], net.alphabet, folder)
    verdict, run = rec["verdict"], net.run if isinstance(net, Family) else evaluator(net)
    for w in (w for n in range(lo, hi + 1) for w in itertools.product(net.alphabet, repeat=n)):
        accepted, want = run(w) > 0, member(w)
        if accepted != want:
            shown = render(net.alphabet, w)
            if verdict != "refuted":
                raise KernelError(
                    f"the record says {verdict}, but the network {'accepts' if accepted else 'rejects'} "
                    f"{shown or 'ε'!r}, which is {'' if want else 'not '}in the language"
                )
            if rec.get("counterexample") != shown:
                raise KernelError(
                    f"counterexample {rec.get('counterexample')!r}, but the first word the network "
                    f"misclassifies is {shown!r}"
                )
            return f"refuted: {shown or 'ε'!r} misclassified, every shorter word right"
        if verdict == "refuted" and count > max_words and render(net.alphabet, w) == cx:
            raise KernelError(f"counterexample {cx!r} is right, as is every word before it")
    if verdict != "proved":
        raise KernelError(f"the record says {verdict}, but every one of the {count} words is right")
    if rec.get("checked") != count:
        raise KernelError(f"checked={rec.get('checked')!r}, but the bound holds {count} words")
    return f"proved: all {count} words with {lo} <= |w| <= {hi}, each accepted iff in the language"


def _beyond_budget(rec: dict[str, Any], net: Any, need: int, count: int, max_words: int) -> str:
    """Rule (a bounded proof implied by one for every length): a record over the budget that
    says proved is checked by the rounds rule (:mod:`.rounds`) where the language is Dyck(k, D):
    every word of every length classified right implies every word of the
    bound is, and ``checked`` must be their number. A word that rule finds misclassified may be
    longer than the bound: the record is then refused, not found to disagree."""
    over = f"{need:,} words, over the kernel's budget of {max_words:,}: {MORE}"
    statement = rec["claim"]["statement"]
    if rec["verdict"] != "proved" or not DYCK.fullmatch(statement) or isinstance(net, Family):
        raise Refused(over)
    try:
        detail = prove_by_rounds(net, statement)
    except (Refused, KernelError) as exc:
        raise Refused(f"{over} (the every-length rule: {exc})") from None
    if rec.get("checked") != count:
        raise KernelError(f"checked={rec.get('checked')!r}, but the bound holds {count} words")
    return f"proved: all {count} words of the bound, implied by: {detail}"


NO_TIES = (
    "every leftmost or rightmost head selects exactly one key or none: the network never relies "
    "on a tie rule"
)


def check_no_ties(rec: dict[str, Any], net: Any, max_words: int) -> str:
    """Rule (no ties, exhaustive): if on every word w with lo ≤ |w| ≤ hi, at every query
    position, every hardmax head whose tie rule is leftmost or rightmost has at most one key of
    maximal score among those its mask lets it see, then no tie rule decided any selection (the
    ``NO_TIES`` statement, read so: the heads that average their maximizers are not about ties).
    A word with such a tie refutes it; a refutation must name the shortlex-first one."""

    def fault(n: int) -> Any:
        ev = Exhaustive(net, n)

        def tie(w: tuple[str, ...]) -> str | None:
            ev.logit(w)
            return ev.tied and f"head {ev.tied[0]} ties at token {ev.tied[1]}"

        return tie

    return sweep(rec, net, max_words, fault, "none of the {count} words has a tie")


OPERATIONS = "every attention operation's residual dim holds the program's vector at every position"
CRASP_OPERATIONS = (
    "every count, comparison and conditional dim holds the program's value (count-valued and "
    "conditional dims as C(i)/(i+1), comparisons as 0/1)"
)


def check_operations(rec: dict[str, Any], net: Any, max_words: int, folder: Path) -> str:
    """Rule (operations, exhaustive): the program file beside the record names the residual dim
    of every operation the statement is about (``dims``): B-RASP's attention operations, held as
    1 or 0 (``OPERATIONS``), C-RASP's counts, comparisons and conditionals, a comparison as 1 or
    0 and a count-valued one as C(i)/(i+1) at word position i (1-based; the start token makes the
    denominator i + 1: ``CRASP_OPERATIONS``). If on every word w of the bound, at every position
    of w, the final residual state's dim equals that value of the operation's vector (the
    kernel's program interpreter), the statement holds on the bound."""
    doc = program_beside(folder, net.alphabet, None)
    held: dict[int, str] = dict(doc["dims"])
    about = ("attend",) if doc["language"] == "B-RASP" else ("count", "less", "where")
    if sorted(held) != [k for k, e in enumerate(doc["vectors"]) if e[0] in about]:
        raise Refused(f"a program file that does not name every {'/'.join(about)} dim")
    if any(d not in net.dims for d in held.values()):
        raise KernelError(f"a dim of {sorted(held.values())} is not one of the network's")
    if (rec["claim"]["statement"] == OPERATIONS) != (doc["language"] == "B-RASP"):
        raise KernelError(f"the statement is not the one of a {doc['language']} program")
    at = len(net.prefix)

    def fault(n: int) -> Any:
        rows = _final_rows(net, n)

        def bad(w: tuple[str, ...]) -> str | None:
            got, vecs = rows(w), programs.vectors(doc, w)
            for k, d in held.items():
                for t, v in enumerate(vecs[k]):
                    want = Fraction(int(v)) if isinstance(v, bool) else Fraction(v, t + 2)
                    if got(at + t, d) != want:
                        return (
                            f"dim {d} at position {t + 1} is {got(at + t, d)}, the program's {want}"
                        )
            return None

        return bad

    return sweep(rec, net, max_words, fault, "every dim holds its operation on all {count} words")


def _final_rows(net: Any, n: int) -> Any:
    """``word -> (token, dim) -> value`` of the final rows, every position computed: by the fast
    path where the network is on it, else by the plain interpreter."""
    try:
        ev = Exhaustive(net, n, every_position=True)
    except Refused:
        return lambda w: (lambda rows: lambda t, d: rows[t][d])(forward(net, w, True)[0])
    col = {d: k for k, d in enumerate(net.dims)}

    def rows(w: tuple[str, ...]) -> Any:
        ev.logit(w)
        return lambda t, d: Fraction(ev.rows[t][col[d]], ev.d)

    return rows


HEIGHTS = (
    "on every valid word, after matching layer ℓ: m_i = 1 if token i is γ/ω or its bracket pair "
    "has height <= ℓ, else m_i = 0; and e_i = 0"
)


def check_heights(rec: dict[str, Any], net: Any, max_words: int) -> str:
    """Rule (Dyck's pair heights, exhaustive; ``HEIGHTS``): the network's FFN sublayers named
    ``logic1``..``logicD`` are the matching layers ℓ = 1..D, its alphabet the first k bracket
    pairs; the valid words are Dyck(k, D)'s (:func:`.languages.dyck`). If on every valid word of
    the bound, after sublayer logicℓ, every token's dim ``m`` is 1 when the token is a prefix or
    suffix token (γ, ω) or its bracket pair's height (:func:`.languages.pair_heights`) is <= ℓ,
    else 0, and its dim ``e`` is 0, the statement holds on the bound; ``checked`` must be the
    number of valid words; a refutation must name the shortlex-first valid word that breaks it."""
    layers = numbered(net, "logic")
    k = len(net.alphabet) // 2
    if not layers or net.alphabet != tuple(s for p in brackets(k) for s in p):
        raise Refused("pair heights of a network without logic1.. sublayers over brackets")
    if "m" not in net.dims or "e" not in net.dims:
        raise KernelError("the network has no dims m and e")
    member, cm, ce = dyck(k, len(layers)), net.dims.index("m"), net.dims.index("e")
    at = len(net.prefix)

    @functools.cache
    def words(n: int) -> list[tuple[str, ...]]:  # the valid words of length n
        return [w for w in itertools.product(net.alphabet, repeat=n) if member(w)]

    def fault(n: int) -> Any:
        ev = Exhaustive(net, n, keep=tuple(layers))

        def bad(w: tuple[str, ...]) -> str | None:
            ev.logit(w)
            heights = pair_heights(w, k)
            for ell, step in enumerate(layers, start=1):
                rows, d = ev.kept[step], ev.steps[step][-1]
                for t, row in enumerate(rows):
                    h = heights.get(t - at, len(layers) + 1)
                    want = 1 if not at <= t < at + n or h <= ell else 0
                    if row[cm] != want * d or row[ce] != 0:
                        m, e = Fraction(row[cm], d), Fraction(row[ce], d)
                        return f"after logic{ell} token {t} has m = {m}, e = {e} (want m = {want}, e = 0)"
            return None

        return bad

    holds = f"m and e as stated after each of the {len(layers)} layers, {{count}} valid words"
    return sweep(rec, net, max_words, fault, holds, words=words)


TIE_FREE = (
    "the accept bit is the same under the average, leftmost and rightmost tie rules of the final "
    "layer"
)


def check_tie_free(rec: dict[str, Any], net: Any, max_words: int) -> str:
    """Rule (tie-rule free acceptance, exhaustive; ``TIE_FREE``): the final layer is the last
    attention sublayer, named ``final``. If on every word of the bound the logit's sign (> 0
    accepts) is the same with every head of that layer given the tie rule average, leftmost and
    rightmost in turn (the layers before it unchanged), the statement holds on the bound; a
    word where they differ refutes it (the record must name the first)."""
    attention = [s.block.name for s in net.layers if s.block.kind == "attention"]
    if not attention or attention[-1] != "final":
        raise Refused("tie rules of a final layer the network does not name 'final'")

    def fault(n: int) -> Any:
        ev = Exhaustive(net, n)

        def differ(w: tuple[str, ...]) -> str | None:
            bits = {t: v > 0 for t, v in ev.logits_by_tie(w).items()}
            return f"the accept bits differ: {bits}" if len(set(bits.values())) > 1 else None

        return differ

    return sweep(rec, net, max_words, fault, "the accept bit is the same on all {count} words")


VALUES: dict[str, tuple[str, str, Any]] = {  # statement -> (sublayer, dim, value at (k, i, n))
    "layer 1 writes k/n at every position": ("count", "k/n", lambda k, i, n: Fraction(k, n)),
    "layer 1 writes 1/n at every position": ("count", "1/n", lambda k, i, n: Fraction(1, n)),
    "FFN 1 writes I[i=k]/n at every position": (
        "fig1",
        "I[i=k]/n",
        lambda k, i, n: Fraction(int(i == k), n),
    ),
}
"""The value claims the kernel reads (Chiang & Cholak's PARITY, §2.2): k is the number of 1s of
the word, n the number of tokens (start and end tokens included), i a token's position as the
network's positional features number it (its index plus the file's ``index_base``)."""


VALUE_RIGHT = "the value is right on all {count} words"


def value_rule(net: Any, statement: str) -> tuple[int, str, Any]:
    """Rule (a value claim, exhaustive; ``VALUES``, run by :func:`.relative.check_values`): if
    on every word of the bound, at every token, the residual dim after the named sublayer equals
    the kernel's own value of the statement, the claim holds on the bound; the first word where
    it does not refutes it."""
    after, dim, value = VALUES[statement]
    names = [sub.block.name for sub in net.layers]
    if after not in names or dim not in net.dims:
        raise KernelError(f"the network has no sublayer {after!r} or no dim {dim!r}")

    def ref(w: tuple[str, ...], rows: list[Any]) -> list[Fraction]:
        return [value(w.count("1"), net.index_base + t, len(rows)) for t in range(len(rows))]

    return names.index(after), dim, ref


@dataclass(frozen=True)
class Family:
    """Networks by word length (a per-length family): a word of length n runs on network n."""

    alphabet: tuple[str, ...]
    runs: dict[int, Any]

    def run(self, word: tuple[str, ...]) -> Fraction:
        return self.runs[len(word)](word)  # type: ignore[no-any-return]


def family(rec: dict[str, Any], files: Mapping[int, str | Path]) -> Family:
    """Rule (a family): a record whose network is one per word length names a fingerprint for
    each length of its bound (``fingerprints``); each length's file must carry its length's
    fingerprint, one alphabet for all. Then each word of the bound is run on its own length's
    network, as netproof's exhaustive check runs it, and the exhaustive rules apply unchanged (a
    proof by per-length queries is re-derived outright by them: every word of its bound)."""
    (lo, hi), want = bounds(rec), (rec.get("network") or {}).get("fingerprints") or {}
    if set(files) != {*range(lo, hi + 1)} or set(want) != {str(n) for n in files}:
        raise KernelError(
            f"a family of networks needs a file and a fingerprint per length {lo}..{hi}"
        )
    nets = {n: read_network(Path(f).read_text(encoding="utf-8")) for n, f in files.items()}
    if bad := [n for n, net in nets.items() if net.fingerprint != want[str(n)]]:
        raise KernelError(f"the network file of length {bad[0]} is not the record's network")
    if len({net.alphabet for net in nets.values()}) != 1:
        raise KernelError("the family's networks read different alphabets")
    return Family(nets[lo].alphabet, {n: evaluator(net) for n, net in nets.items()})


def check_record(
    record: str | Path,
    network: str | Path | Mapping[int, str | Path],
    *,
    max_words: int = MAX_WORDS,
) -> KernelResult:
    """Check the proof record at ``record`` against the network file at ``network`` (for a
    per-length family: a file per word length, :func:`family`)."""
    try:
        rec = loads_json(Path(record).read_text(encoding="utf-8"))
        claim = rec["claim"]
        kind, method = str(claim["kind"]), str(rec["method"])
    except (OSError, KeyError, TypeError, ValueError) as exc:
        return KernelResult("disagree", "?", f"the record cannot be read: {exc}")
    try:
        fp, exh = (rec.get("network") or {}).get("fingerprint"), method.startswith("exhaustive (")
        if rec.get("verdict") not in ("proved", "refuted"):
            raise Refused(f"verdict {rec.get('verdict')!r}: nothing to check")
        by_words = exh or (method.startswith("smt (") and rec["verdict"] == "proved")
        if fp is None or isinstance(network, Mapping):  # a family: a network per word length
            if fp is not None or not isinstance(network, Mapping) or not by_words:
                raise Refused("a per-length family of networks: the kernel reads its word claims")
            if kind != "Recognizes":
                raise Refused(f"claim kind {kind} of a per-length family of networks")
            detail = check_exhaustive(rec, family(rec, network), max_words)
            return KernelResult("checked", kind, detail)
        if kind == "ExactFact" and claim["statement"] in (nextsym.EQ7, nextsym.GAPS):
            return KernelResult("checked", kind, nextsym.check_fact(rec))  # no network in it
        if kind == "ExactFact" and claim["statement"] in relative.FACTS:
            return KernelResult("checked", kind, relative.check_fact(rec))  # a witness, no network
        net = read_network(Path(network).read_text(encoding="utf-8"))
        if net.fingerprint != fp:
            raise KernelError(
                f"the network file is {net.fingerprint[:16]}…, the record's network {str(fp)[:16]}…"
            )
        if isinstance(net, recurrent.RNet):
            return KernelResult("checked", kind, recurrent.check(rec, net, kind, method, max_words))
        if isinstance(net, seq2seq.S2S):
            return KernelResult("checked", kind, seq2seq.check(rec, net, kind, method, max_words))
        if net.generator:  # a generator: only the rules of nextsym read it
            return KernelResult("checked", kind, nextsym.check(rec, net, kind, method, max_words))
        if net.flat and not (kind == "Recognizes" and exh):
            raise Refused(f"claim kind {kind} by {method} of a flat network (a word as one vector)")
        st, folder = claim["statement"], Path(record).parent
        trace, value = exh and kind == "TraceProperty", exh and kind == "ValueIs"
        if kind == "Recognizes" and exh:
            detail = check_exhaustive(rec, net, max_words, folder)
        elif trace and st == NO_TIES:
            detail = check_no_ties(rec, net, max_words)
        elif trace and st in (OPERATIONS, CRASP_OPERATIONS):
            detail = check_operations(rec, net, max_words, folder)
        elif trace and st == HEIGHTS:
            detail = check_heights(rec, net, max_words)
        elif trace and st == traces.NEAREST:
            detail = traces.check_nearest(rec, net, max_words)
        elif trace and st == TIE_FREE:
            detail = check_tie_free(rec, net, max_words)
        elif value and st in VALUES:
            detail = relative.check_values(rec, net, max_words, value_rule, VALUE_RIGHT)
        elif value and (st in relative.HEADS or relative.CONV.fullmatch(st)):
            detail = relative.check_values(rec, net, max_words)
        elif kind == "Recognizes" and rec["verdict"] == "proved" and method.startswith("smt (z3)"):
            lo = (rec.get("bound") or {}).get("min_len", 0)
            detail = (
                prove_by_rounds(net, st) if DYCK.fullmatch(st) else prove_every_length(net, st, lo)
            )
        else:
            raise Refused(f"claim kind {kind} by {method}")
        return KernelResult("checked", kind, detail)
    except Refused as exc:
        return KernelResult("refused", kind, f"outside the kernel: {exc}")
    except KernelError as exc:
        return KernelResult("disagree", kind, str(exc))
