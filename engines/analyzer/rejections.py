"""How a rejected diagnosis is read back, so that a retry does not submit it again.

A Reflexion engine (or a human) that rejects a diagnosis tells the next attempt in one
sentence of a fixed shape, in a user message or in the lessons:

    The previous diagnosis <category> of <culprit> was rejected: <why>

where <culprit> is `Culprit.__str__` ("Deployment shop/checkout", or "Node ip-10-0-1-2"
for a cluster-scoped object). The sentence is `engines.diagnosis.REJECTION_PHRASE`, which
the engine writes with `rejection_message`; the pattern here is built from its words, so
the writer and the reader cannot drift apart.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

from engines.diagnosis import REJECTION_PHRASE


def _pattern() -> re.Pattern[str]:
    """REJECTION_PHRASE as a regex: its words verbatim, the culprit split into kind,
    namespace and name, the reason optional (a sentence cut after "was rejected")."""
    parsed = list(string.Formatter().parse(REJECTION_PHRASE))
    assert [field for _, field, _, _ in parsed] == ["category", "culprit", "reason"], parsed
    head, of, verdict = (literal for literal, *_ in parsed)
    said = verdict.removesuffix(": ")  # " was rejected", then ": <reason>" if not cut off
    return re.compile(
        re.escape(head) + r"(?P<category>[a-z_]+)" + re.escape(of)
        + r"(?P<kind>[A-Za-z]+) (?:(?P<namespace>[a-z0-9][-a-z0-9.]*)/)?"
        r"(?P<name>[A-Za-z0-9][-A-Za-z0-9._]*?)"
        + re.escape(said) + r"\b(?::[ \t]*(?P<reason>.*?)(?=\.(?:\s|$)|\n|$))?"
    )


_REJECTION = _pattern()
# What an evaluator says of an answer it merely doubts: the answer may still be right, and a
# retry's alternative must be compared with it, not preferred to it by default.
DOUBTS = ("confidence ", "the evidence ", "no evidence", "the category is unknown")


def _doubt_only(reason: str | None) -> bool:
    parts = [p.strip().rstrip(".").lower() for p in (reason or "").split(";")]
    return bool(reason) and all(p.startswith(DOUBTS) for p in parts if p)


@dataclass(frozen=True, slots=True)
class Rejection:
    """A (category, culprit) pair that must not be submitted again. `doubted` when it was
    turned down only for low confidence or unquotable evidence (not refuted by a human):
    it then still counts as a rival when the confidence of another answer is judged."""

    category: str
    kind: str
    namespace: str
    name: str
    doubted: bool = False

    def matches(self, category: str, kind: str, namespace: str, name: str) -> bool:
        """Same category and the same object (kind is not compared: a Deployment and its
        pod name the same culprit for the scoring rule)."""
        return (self.category == category and self.name == name
                and (self.namespace == namespace or self.kind == "Node"))


def parse_rejections(texts: Iterable[str]) -> tuple[Rejection, ...]:
    """Every rejection stated in `texts` (messages, lessons), in order, without repeats."""
    found: dict[tuple[str, str, str, str], bool] = {}
    for text in texts:
        for match in _REJECTION.finditer(text):
            key = (match["category"], match["kind"], match["namespace"] or "", match["name"])
            found[key] = found.get(key, True) and _doubt_only(match["reason"])
    return tuple(Rejection(*key, doubted=doubted) for key, doubted in found.items())
