"""Humans steer a running investigation: their replies become constraints.

A reply is parsed once, when it arrives, into a typed constraint so the bot can confirm
what it understood ("Noted: staying out of kube-system"). Constraints that can be checked
(an excluded namespace, a banned tool, no writes, stop) are enforced by the toolset; the
rest are handed to the model as rules it must follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

ConstraintKind = Literal[
    "stop", "exclude_namespace", "ban_tool", "forbid_writes", "focus", "ignore", "rule"
]

_NAME = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?"
_STOP = re.compile(r"^\W*(stop|cancel|abort|halt|enough|kill it|stop it)\b.{0,40}$", re.I)
_EXCLUDE = re.compile(
    r"\b(stay out of|keep out of|don'?t (look at|touch|query|go into)|do not (look at|touch|"
    r"query|go into)|exclude|avoid|skip|leave|not in|ignore)\s+(the\s+)?(namespace\s+)?"
    rf"`?(?P<name>{_NAME})`?(\s+namespace)?\b",
    re.I,
)
_NAMESPACE_WORD = re.compile(r"\bnamespaces?\b", re.I)
_NO_WRITES = re.compile(
    r"\b(read[- ]only|no writes?|don'?t (change|modify|restart|scale|delete|touch anything)|"
    r"do not (change|modify|restart|scale|delete)|no changes)\b",
    re.I,
)
_BAN_TOOL = re.compile(
    r"\b(don'?t|do not|never|stop)\s+(use|using|call|calling)\s+`?(?P<tool>[a-z0-9_]+)`?", re.I
)
_FOCUS = re.compile(
    r"\b(focus on|concentrate on|look (only )?at|only (look at|check)|check)\s+(the\s+)?"
    rf"`?(?P<target>{_NAME})`?",
    re.I,
)
_IGNORE = re.compile(r"\b(ignore|disregard|never mind)\s+(the\s+)?(?P<topic>[^,.;!]+)", re.I)


@dataclass(frozen=True, slots=True)
class Constraint:
    """One instruction from a human, typed when it can be enforced."""

    kind: ConstraintKind
    text: str
    value: str = ""
    author: str = ""

    @property
    def summary(self) -> str:
        """What the bot confirms in the thread, in its own words."""
        match self.kind:
            case "stop":
                return "stopping now and summarising what was found so far"
            case "exclude_namespace":
                return f"staying out of namespace {self.value}"
            case "ban_tool":
                return f"not using {self.value} any more"
            case "forbid_writes":
                return "read-only from now on: no tool that changes anything"
            case "focus":
                return f"focusing on {self.value}"
            case "ignore":
                return f"ignoring {self.value}"
            case "rule":
                return f"following your instruction: {self.text.strip()}"

    @property
    def rule(self) -> str:
        """The constraint as a rule for the model's prompt."""
        if self.kind == "rule":
            return " ".join(self.text.split())
        return RULES[self.kind].format(value=self.value)


# How each typed constraint is said to the model. `from_rule` reads them back, so a model
# that only sees the prompt (the analyzer served over the wire) can obey them as typed.
RULES: dict[ConstraintKind, str] = {
    "exclude_namespace": "Do not query or blame anything in namespace '{value}'.",
    "ban_tool": "Do not call the tool {value}.",
    "forbid_writes": "Do not call any tool that changes the cluster.",
    "focus": "Focus the investigation on '{value}'.",
    "ignore": "Ignore {value}: it is not the cause; do not cite it as evidence.",
    "stop": "Stop investigating and submit your best diagnosis now.",
}
_RULE_FORMS = tuple(
    (kind, re.compile("^" + re.escape(form).replace(re.escape("{value}"), "(?P<value>.+?)")
                      + "$"))
    for kind, form in RULES.items()
)


def from_rule(rule: str, author: str = "") -> Constraint:
    """The typed constraint behind a rule as `Constraint.rule` says it; anything else is a
    free rule."""
    text = rule.strip()
    for kind, form in _RULE_FORMS:
        if match := form.match(text):
            return Constraint(kind, text, match.groupdict().get("value") or "", author)
    return Constraint("rule", text, author=author)


def parse_constraint(
    text: str,
    *,
    author: str = "",
    known_namespaces: Iterable[str] = (),
    known_tools: Iterable[str] = (),
) -> Constraint:
    """Understand a human reply. Namespaces and tools the bot knows make the parse precise.

    A name after "stay out of" is a namespace when the cluster has such a namespace or the
    reply says "namespace"; otherwise it is a topic to ignore, given to the model as a rule.
    """
    cleaned = text.strip()
    namespaces = {n.lower() for n in known_namespaces}
    tools = {t.lower() for t in known_tools}
    if _STOP.match(cleaned):
        return Constraint("stop", cleaned, author=author)
    if banned := _BAN_TOOL.search(cleaned):
        tool = banned.group("tool").lower()
        if not tools or tool in tools:
            return Constraint("ban_tool", cleaned, tool, author)
    if _NO_WRITES.search(cleaned):
        return Constraint("forbid_writes", cleaned, author=author)
    if excluded := _EXCLUDE.search(cleaned):
        name = excluded.group("name").lower()
        says_namespace = bool(_NAMESPACE_WORD.search(cleaned))
        if name in namespaces or says_namespace or name.startswith("kube-"):
            return Constraint("exclude_namespace", cleaned, name, author)
    if ignored := _IGNORE.search(cleaned):
        return Constraint("ignore", cleaned, ignored.group("topic").strip(), author)
    if focus := _FOCUS.search(cleaned):
        return Constraint("focus", cleaned, focus.group("target").lower(), author)
    if excluded:
        return Constraint("ignore", cleaned, excluded.group("name").lower(), author)
    return Constraint("rule", cleaned, author=author)


@dataclass(slots=True)
class ConstraintSet:
    """The constraints in force, with the enforceable ones indexed for the toolset."""

    items: list[Constraint] = field(default_factory=list)

    def add(self, constraint: Constraint) -> None:
        self.items.append(constraint)

    @property
    def excluded_namespaces(self) -> frozenset[str]:
        return frozenset(c.value for c in self.items if c.kind == "exclude_namespace")

    @property
    def banned_tools(self) -> frozenset[str]:
        return frozenset(c.value for c in self.items if c.kind == "ban_tool")

    @property
    def writes_forbidden(self) -> bool:
        return any(c.kind == "forbid_writes" for c in self.items)

    @property
    def stop_requested(self) -> bool:
        return any(c.kind == "stop" for c in self.items)

    @property
    def focus(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.items if c.kind == "focus")

    @property
    def ignored(self) -> tuple[str, ...]:
        return tuple(c.value for c in self.items if c.kind == "ignore")

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(c.rule for c in self.items)


class ConstraintInbox:
    """Where replies land while the engine runs; the engine takes them at each step.

    Everything runs on one event loop, so a list and an `asyncio`-free flag are enough; the
    stop flag is also checked mid-step so "stop" does not wait for the next turn.
    """

    def __init__(
        self, *, known_namespaces: Iterable[str] = (), known_tools: Iterable[str] = ()
    ) -> None:
        self._pending: list[Constraint] = []
        self.known_namespaces: set[str] = set(known_namespaces)
        self.known_tools: set[str] = set(known_tools)
        self.stop_requested = False

    def add(self, text: str, author: str = "") -> Constraint:
        constraint = parse_constraint(
            text,
            author=author,
            known_namespaces=self.known_namespaces,
            known_tools=self.known_tools,
        )
        self.put(constraint)
        return constraint

    def put(self, constraint: Constraint) -> None:
        if constraint.kind == "stop":
            self.stop_requested = True
        self._pending.append(constraint)

    def drain(self) -> list[Constraint]:
        taken, self._pending = self._pending, []
        return taken
