"""What a clause of a reply names: the cluster's namespaces and workloads, tools and data
sources, in the order it names them.

Names are matched the way people type them (`payments db`, a plural, a close misspelling)
but only against the vocabulary, so a word is a namespace only when the cluster has one of
that name or the reply says "namespace X". A name that is also a data source ("don't use
prometheus") is read as the source unless the reply says it means the workload.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engines.steering import lexicon as lx
from engines.steering.vocabulary import Vocabulary, squash

_TOKEN = re.compile(r"[a-z0-9][a-z0-9._/-]*[a-z0-9]|[a-z0-9]")
_NAMESPACE_WORD = re.compile(r"\b(?:namespaces?|ns)\b")
_WORKLOAD_WORD = re.compile(
    r"\b(?:deployments?|deploy|services?|svc|apps?|pods?|statefulsets?|sts|daemonsets?|"
    r"jobs?|cronjobs?|workloads?|service)\b")
_SAID_NAMESPACE = re.compile(
    r"\b(?:namespace|ns)\s+(?P<a>[a-z0-9][-a-z0-9]*[a-z0-9])|"
    r"(?P<b>[a-z0-9][-a-z0-9]*[a-z0-9])\s+(?:namespace|ns)\b")
_NOT_NAMES = frozenset({"the", "this", "that", "any", "every", "each", "a", "one", "other",
                        "no", "na", "em", "im", "dans", "en", "um", "ein", "une", "un",
                        "whole", "entire", "same", "which", "what", "in", "of", "el", "la",
                        "le", "den", "das", "die", "o", "do", "du", "de", "del"})
@dataclass(slots=True)
class Names:
    """What one clause names, in the order it names them."""

    namespaces: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    signal_names: list[str] = field(default_factory=list)  # "the redis warnings"

    def any(self) -> bool:
        return bool(self.namespaces or self.workloads or self.tools or self.sources)


def find_names(clause: str, vocab: Vocabulary) -> Names:
    names = Names()
    tokens = [(m.group(0), m.end()) for m in _TOKEN.finditer(clause)]
    words = [t for t, _ in tokens]
    prefers_namespace = bool(_NAMESPACE_WORD.search(clause))
    prefers_workload = bool(_WORKLOAD_WORD.search(clause))
    i = 0
    while i < len(words):
        for size in (3, 2, 1):
            phrase = " ".join(words[i:i + size])
            if i + size > len(words):
                continue
            if size == 1 and vocab.tool(phrase):
                names.tools.append(phrase)
                break
            found = _lookup(phrase, vocab, prefers_namespace, prefers_workload,
                            fuzzy=size == 1 and not _is_common(phrase))
            if found is None:
                continue
            kind, name = found
            (names.namespaces if kind == "namespace" else names.workloads).append(name)
            rest = clause[tokens[i + size - 1][1]:]
            if lx.SIGNAL_NOUNS.match(rest.strip()):
                names.signal_names.append(name)
            break
        else:
            i += 1
            continue
        i += size
    for said in _SAID_NAMESPACE.finditer(clause):  # "the namespace foo": a namespace, listed
        name = (said["a"] or said["b"] or "").lower()  # or not (the cluster may be unread)
        if name and name not in names.namespaces and name not in _NOT_NAMES:
            names.namespaces.append(name)
    names.sources = [s for s, pattern in lx.SOURCE_WORDS.items() if pattern.search(clause)]
    for name in [*names.namespaces, *names.workloads]:
        source = next((s for s, p in lx.SOURCE_WORDS.items() if p.fullmatch(name)), None)
        if source is None:
            continue
        if prefers_namespace or prefers_workload:  # "skip the logging ns"
            if source in names.sources and len(names.sources) == 1:
                names.sources.remove(source)
        else:  # "don't use prometheus": the source, not the workload of that name
            for listed in (names.namespaces, names.workloads):
                if name in listed:
                    listed.remove(name)
            if source not in names.sources:
                names.sources.append(source)
    return names


def _lookup(phrase: str, vocab: Vocabulary, prefers_namespace: bool, prefers_workload: bool,
            *, fuzzy: bool) -> tuple[str, str] | None:
    key = squash(phrase)
    in_namespaces = next((n for n in vocab.namespaces if squash(n) == key), None)
    in_workloads = next((w for w in vocab.workloads if squash(w) == key), None)
    if in_namespaces and in_workloads:
        if prefers_workload and not prefers_namespace:
            return "workload", in_workloads
        return "namespace", in_namespaces
    if in_namespaces:
        return "namespace", in_namespaces
    if in_workloads:
        return "workload", in_workloads
    return vocab.lookup(phrase, fuzzy=fuzzy)


def _is_common(word: str) -> bool:
    """Words of the lexicon are never fuzzy-matched to a cluster name."""
    return any(p.fullmatch(word) for p in (*lx.SOURCE_WORDS.values(),
                                           *lx.CATEGORY_WORDS.values(),
                                           *lx.COMPONENT_WORDS.values())) \
        or bool(lx.SIGNAL_NOUNS.fullmatch(word))


_FILLER = re.compile(r"\b(?:the|of|for|in|from|plz|pls|please|too|also|now|alone|de|von|du|des|"
                     r"la|le|les|los|das|die|der|el)\b")


def only_names(clause: str, names: Names) -> bool:
    """A clause that only names things (and sources): a focus said without a verb."""
    rest = _FILLER.sub(" ", clause)
    for name in (*names.namespaces, *names.workloads, *names.tools):
        rest = re.sub(re.escape(name).replace(r"\-", "[- ]"), " ", rest)
    for pattern in lx.SOURCE_WORDS.values():
        rest = pattern.sub(" ", rest)
    return not rest.split()


