"""The names a reply can mean: the cluster's namespaces and workloads, and the tools.

The parser only calls something a namespace when the cluster has a namespace of that name,
so "ignore the redis warnings" cannot exclude a namespace by accident of wording, and names
are matched the way people type them (`payments db` for `payments-db`, `Checkout`, a typo).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_SEPARATORS = re.compile(r"[-_.\s]+")
# Every cluster has these, listed or not.
ALWAYS_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})


def squash(name: str) -> str:
    """A name with its separators and case dropped, so `payments db` meets `payments-db`."""
    return _SEPARATORS.sub("", name.lower())


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What the cluster and the toolset call things, for one investigation."""

    namespaces: frozenset[str] = frozenset()
    workloads: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    _index: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, namespaces: Iterable[str] = (), workloads: Iterable[str] = (),
           tools: Iterable[str] = ()) -> Vocabulary:
        namespaces = frozenset(n.lower() for n in namespaces if n) | ALWAYS_NAMESPACES
        workloads = frozenset(w.lower() for w in workloads if w)
        index: dict[str, tuple[str, str]] = {}
        for kind, names in (("workload", workloads), ("namespace", namespaces)):
            for name in names:  # namespaces win a tie: inserted last
                index[squash(name)] = (kind, name)
        return cls(namespaces, workloads, frozenset(t.lower() for t in tools), index)

    def merged(self, other: Vocabulary) -> Vocabulary:
        return Vocabulary.of(self.namespaces | other.namespaces,
                             self.workloads | other.workloads, self.tools | other.tools)

    def lookup(self, words: str, *, fuzzy: bool = True) -> tuple[str, str] | None:
        """("namespace" | "workload", name) for a phrase that names one, or None.

        Exact names first (separators and case aside), then a close misspelling of a
        name at least five letters long (one wrong or missing letter)."""
        key = squash(words)
        if not key:
            return None
        if key in self._index:
            return self._index[key]
        if key.endswith("s") and key[:-1] in self._index:  # "the kafka brokers"
            return self._index[key[:-1]]
        if fuzzy and len(key) >= 5:
            close = difflib.get_close_matches(key, list(self._index), n=1, cutoff=0.86)
            if close:
                return self._index[close[0]]
        return None

    def tool(self, word: str) -> str | None:
        name = word.strip("`'\"").lower()
        return name if name in self.tools else None
