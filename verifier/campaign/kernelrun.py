"""``netproof recheck --kernel``: proof records checked by the independent kernel
(:mod:`netproof.kernel`), each against the network file of its construction and parameters.

The kernel reads files only; this module makes the network file it needs (the construction
rebuilt from the record's parameters and written in the network file format, once per
construction and parameters, into a temporary folder) and hands both files over. The kernel then
checks that the file's fingerprint is the record's: a record about another network disagrees.

May import the kernel, the IR's network files and the vocabulary.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from netproof.kernel import KernelResult, check_record
from netproof.verifier.claims import Construction

__all__ = ["KernelRun", "summary_lines"]


class KernelRun:
    """Records checked by the kernel, with their network files written once per construction
    and parameters into ``folder`` (a temporary folder of its own by default)."""

    def __init__(
        self,
        registry: Mapping[str, Construction],
        folder: str | None = None,
        max_words: int | None = None,
    ) -> None:
        self.registry = registry
        self.max_words = max_words  # the kernel's budget of words (None: its default)
        self.folder = folder or tempfile.mkdtemp(prefix="netproof-kernel-")
        self._files: dict[str, str | KernelResult] = {}

    def network_file(self, rec: Mapping[str, Any]) -> str | dict[int, str] | KernelResult:
        """The path of the network file of ``rec``'s construction and parameters (for a
        construction with a network per word length: a path per length of the record's bound),
        or the kernel's refusal when there is none."""
        kind = str((rec.get("claim") or {}).get("kind"))
        c = self.registry.get(str(rec.get("construction")))
        try:
            if c is None:
                raise ValueError(f"no construction {rec.get('construction')!r}")
            values = c.parse_params(rec.get("params") or {})
            if not c.per_length:
                return self._write(rec, None, lambda: c.network(values))
            bound = rec.get("bound") or {}
            lengths = range(int(bound["min_len"]), int(bound["max_len"]) + 1)
            files = {n: self._write(rec, n, lambda n=n: c.network(values, n)) for n in lengths}
        except (ValueError, TypeError, KeyError) as exc:
            return KernelResult("refused", kind, f"outside the kernel: no network file ({exc})")
        refused = [f for f in files.values() if isinstance(f, KernelResult)]
        return refused[0] if refused else {n: f for n, f in files.items() if isinstance(f, str)}

    def _write(self, rec: Mapping[str, Any], n: int | None, build: Any) -> str | KernelResult:
        """The network file ``build()`` gives, written once per construction, parameters and
        length ``n`` (None: the construction's one network), or the kernel's refusal."""
        from netproof.symbolic import Network, RecurrentNetwork, Seq2Seq
        from netproof.symbolic.netfile import dumps
        from netproof.symbolic.recurrent_netfile import dumps as dumps_recurrent

        key = json.dumps([rec.get("construction"), rec.get("params"), n], sort_keys=True)
        if key in self._files:
            return self._files[key]
        got: str | KernelResult
        try:
            net = build()
            if isinstance(net, RecurrentNetwork):  # a recurrent network file (its own format)
                text = dumps_recurrent(net)
            elif isinstance(net, Network | Seq2Seq):  # Seq2Seq: format netproof-seq2seq
                text = dumps(net)
            else:
                raise ValueError(
                    f"a {type(net).__name__}, not a Network, Seq2Seq or RecurrentNetwork"
                )
            got = os.path.join(self.folder, f"net{len(self._files)}.json")
            with open(got, "w", encoding="utf-8") as f:
                f.write(text)
        except (ValueError, TypeError, KeyError) as exc:
            kind = str((rec.get("claim") or {}).get("kind"))
            got = KernelResult("refused", kind, f"outside the kernel: no network file ({exc})")
        self._files[key] = got
        return got

    def check(self, path: str) -> KernelResult:
        """The kernel's result on the record at ``path``."""
        try:
            with open(path, encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError) as exc:
            return KernelResult("disagree", "?", f"the record cannot be read: {exc}")
        rec = rec if isinstance(rec, dict) else {}
        net = self.network_file(rec)
        if isinstance(
            net, KernelResult
        ):  # kept per construction and parameters: this record's kind
            return KernelResult(net.outcome, str((rec.get("claim") or {}).get("kind")), net.detail)
        if self.max_words is None:
            return check_record(path, net)
        return check_record(path, net, max_words=self.max_words)


def summary_lines(results: Sequence[KernelResult]) -> list[str]:
    """Per claim kind: how many records the kernel checked, refused, found to disagree."""
    per: dict[str, Counter[str]] = {}
    for r in results:
        per.setdefault(r.kind, Counter())[r.outcome] += 1
    return [
        f"{kind:16} {n['checked']:4} checked  {n['refused']:4} refused (outside the kernel)  "
        f"{n['disagree']:3} disagree"
        for kind, n in sorted(per.items())
    ]
