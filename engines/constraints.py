"""Humans steer a running investigation: their replies become typed constraints.

A reply is read once, when it arrives (`engines.steering`), into zero or more typed
constraints so the bot can confirm exactly what it will enforce ("Noted: staying out of
namespace kube-system") and a human can undo it. Constraints that can be checked (an
excluded namespace, workload, tool or data source; no writes; stop) are enforced by the
toolset and the engine; the rest are rules the model must follow, said in fixed sentences
(`RULES`) that `from_rule` reads back, so a model that only sees the prompt (the analyzer
served over the wire) obeys them as typed.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from engines.diagnosis import CATEGORIES

ConstraintKind = Literal[
    "stop", "pause", "exclude_namespace", "exclude_workload", "ban_tool", "exclude_source",
    "focus_namespace", "focus_workload", "focus_source", "time_window", "rule_out", "fact",
    "forbid_writes", "rule", "rewind",
]
KINDS: tuple[str, ...] = get_args(ConstraintKind)
Source = Literal["logs", "metrics", "cluster"]
SOURCES: tuple[str, ...] = get_args(Source)
# Which tools read each source, by the prefix of their names (tools/catalog.py's families).
SOURCE_PREFIXES: dict[str, str] = {"logs": "logs_", "metrics": "metrics_", "cluster": "k8s_"}


def source_of(tool: str) -> str | None:
    """The data source a tool reads, from its name's family."""
    return next((s for s, prefix in SOURCE_PREFIXES.items() if tool.startswith(prefix)), None)


@dataclass(frozen=True, slots=True)
class Constraint:
    """One instruction from a human. `reply` is the id of the Slack message it came from
    (its ts), so editing or deleting that message replaces or withdraws it."""

    kind: ConstraintKind
    text: str
    value: str = ""
    author: str = ""
    reply: str = ""

    @property
    def summary(self) -> str:
        """What the bot confirms in the thread, in its own words."""
        return SUMMARIES[self.kind].format(value=self.value, text=" ".join(self.text.split()))

    @property
    def rule(self) -> str:
        """The constraint as a rule for the model's prompt."""
        if self.kind in ("rule", "fact") and not self.value:
            return RULES[self.kind].format(value=" ".join(self.text.split()))
        return RULES[self.kind].format(value=self.value)

    @property
    def ruled_out(self) -> tuple[str, str]:
        """(category, component) of a `rule_out`; either may be "" (any)."""
        category, _, component = self.value.partition(":")
        if component or category in RULE_OUT_CATEGORIES:
            return category, component
        return "", category


# The words by which a workload's name says what kind of component it is: ruling out "the
# database" rules out `payments-db` and `orders-postgres`, not `payments`.
COMPONENT_KIND_WORDS: dict[str, frozenset[str]] = {
    "database": frozenset({"database", "db", "postgres", "postgresql", "pg", "mysql",
                           "mariadb", "mongo", "mongodb"}),
    "postgres": frozenset({"postgres", "postgresql", "pg"}),
    "cache": frozenset({"cache", "redis", "memcached", "valkey"}),
    "queue": frozenset({"queue", "broker", "kafka", "rabbitmq", "nats", "mq"}),
    "dns": frozenset({"dns", "coredns"}),
    "ingress": frozenset({"ingress", "nginx", "gateway"}),
}

# Words a service's name carries that do not make it another component: "not payments"
# also rules out `payments-api`, while `checkout-db` is a different thing from `checkout`.
NAME_SUFFIXES = frozenset({"api", "svc", "service", "server", "app", "web", "backend",
                           "frontend", "http", "grpc"})


def names_component(name: str, component: str) -> bool:
    """Whether a culprit's name is the component a human ruled out: the same name, the name
    with a suffix that does not change what it is, or (for a kind of component such as
    "database") a name with one of that kind's words."""
    name, component = name.lower(), component.lower().strip()
    if name == component:
        return True
    words = [w for w in re.split(r"[-_.]", name) if w]
    kind = COMPONENT_KIND_WORDS.get(component)
    if kind is not None:
        return any(word in kind for word in words)
    wanted = [w for w in re.split(r"[-_.\s]", component) if w]
    head, rest = words[:len(wanted)], words[len(wanted):]
    return bool(wanted) and head == wanted and all(word in NAME_SUFFIXES for word in rest)


# The categories a human may rule out: the taxonomy but "unknown".
RULE_OUT_CATEGORIES = frozenset(CATEGORIES) - {"unknown"}

SUMMARIES: dict[ConstraintKind, str] = {
    "stop": "stopping now and summarising what was found so far",
    "pause": "pausing: no further step until you say go on (or undo this)",
    "exclude_namespace": "staying out of namespace {value}",
    "exclude_workload": "leaving workload {value} alone: not queried, not blamed",
    "ban_tool": "not using {value} any more",
    "exclude_source": "not reading {value} any more",
    "focus_namespace": "focusing on namespace {value}",
    "focus_workload": "focusing on workload {value}",
    "focus_source": "looking at {value} first",
    "time_window": "looking at {value} only",
    "rule_out": "treating {value} as ruled out",
    "fact": "taking it as a fact: {value}",
    "forbid_writes": "read-only from now on: no tool that changes anything",
    "rule": "following your instruction: {text}",
    "rewind": "rolling back to step {value} and going on from there",
}

# How each constraint is said to the model. `from_rule` reads these back.
RULES: dict[ConstraintKind, str] = {
    "stop": "Stop investigating and submit your best diagnosis now.",
    "pause": "Pause: take no further step until a human says to go on.",
    "exclude_namespace": "Do not query or blame anything in namespace '{value}'.",
    "exclude_workload": "Do not query or blame the workload '{value}'.",
    "ban_tool": "Do not call the tool {value}.",
    "exclude_source": "Do not read {value} (no tool of that source).",
    "focus_namespace": "Focus the investigation on namespace '{value}'.",
    "focus_workload": "Focus the investigation on the workload '{value}'.",
    "focus_source": "Read {value} first.",
    "time_window": "Only consider the time window {value}.",
    "rule_out": "The humans ruled out {value}: do not submit it as the cause.",
    "fact": "A human states as a fact: {value}",
    "forbid_writes": "Do not call any tool that changes the cluster.",
    "rule": "{value}",
    "rewind": "Roll back to step {value} and go on from there.",
}
_RULE_FORMS = tuple(
    (kind, re.compile("^" + re.escape(form).replace(re.escape("{value}"), "(?P<value>.+?)")
                      + "$"))
    for kind, form in RULES.items() if kind != "rule"
)


def from_rule(rule: str, author: str = "") -> Constraint:
    """The typed constraint behind a rule as `Constraint.rule` says it; anything else is a
    free rule."""
    text = rule.strip()
    for kind, form in _RULE_FORMS:
        if match := form.match(text):
            return Constraint(kind, text, match.groupdict().get("value") or "", author)
    return Constraint("rule", text, text, author)


_IGNORE_TOPIC = re.compile(r"^\W*(?:please\s+)?(?:ignore|disregard|never mind|forget)\s+"
                           r"(?P<topic>.+)", re.I)


@dataclass(slots=True)
class ConstraintSet:
    """The constraints in force, with the enforceable ones indexed for the toolset."""

    items: list[Constraint] = field(default_factory=list)

    def add(self, constraint: Constraint) -> None:
        self.items.append(constraint)

    def withdraw(self, reply: str) -> list[Constraint]:
        """Remove the constraints read from reply `reply`; returns what was removed."""
        gone = [c for c in self.items if reply and c.reply == reply]
        self.items = [c for c in self.items if c not in gone]
        return gone

    def _values(self, kind: ConstraintKind) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.value for c in self.items if c.kind == kind))

    @property
    def excluded_namespaces(self) -> frozenset[str]:
        return frozenset(self._values("exclude_namespace"))

    @property
    def excluded_workloads(self) -> frozenset[str]:
        return frozenset(self._values("exclude_workload"))

    @property
    def excluded_sources(self) -> frozenset[str]:
        return frozenset(self._values("exclude_source"))

    @property
    def banned_tools(self) -> frozenset[str]:
        return frozenset(self._values("ban_tool"))

    def tool_allowed(self, tool: str) -> bool:
        """Not banned by name nor by its data source."""
        return tool not in self.banned_tools and source_of(tool) not in self.excluded_sources

    @property
    def writes_forbidden(self) -> bool:
        return any(c.kind == "forbid_writes" for c in self.items)

    @property
    def stop_requested(self) -> bool:
        return any(c.kind == "stop" for c in self.items)

    @property
    def paused(self) -> bool:
        return any(c.kind == "pause" for c in self.items)

    @property
    def focus(self) -> tuple[str, ...]:
        """Namespaces and workloads to focus on, in the order they were asked for."""
        return tuple(c.value for c in self.items
                     if c.kind in ("focus_namespace", "focus_workload"))

    @property
    def ignored(self) -> tuple[str, ...]:
        """Workloads, components and kinds of evidence a human put aside: demoted, never
        blamed ("ignore the redis warnings" is a rule whose topic is demoted)."""
        return (*self._values("exclude_workload"),
                *(m["topic"] for c in self.items if c.kind == "rule"
                  and (m := _IGNORE_TOPIC.match(c.value or c.text))),
                *(c.ruled_out[1] for c in self.items if c.kind == "rule_out"
                  and c.ruled_out[1] and not c.ruled_out[0]))

    @property
    def ruled_out(self) -> tuple[tuple[str, str], ...]:
        return tuple(c.ruled_out for c in self.items if c.kind == "rule_out")

    def rules_out(self, category: str, culprit: str) -> bool:
        """Whether a diagnosis (category, culprit name) is one the humans ruled out."""
        name = culprit.lower()
        for ruled_category, component in self.ruled_out:
            if ruled_category and ruled_category != category:
                continue
            if not component or names_component(name, component):
                return True
        return False

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.rule for c in self.items))


class ConstraintInbox:
    """Where typed constraints land while the engine runs; the engine takes them at each
    step. Withdrawals (an Undo, an edited or deleted reply) land here too.

    Everything runs on one event loop, so lists and flags are enough; the stop flag is also
    checked mid-step so "stop" does not wait for the next turn.
    """

    def __init__(self) -> None:
        self._pending: list[Constraint] = []
        self._withdrawn: list[str] = []
        self._changed: asyncio.Event | None = None
        self.stop_requested = False
        self.resume_requested = False
        self.rewind: Constraint | None = None  # a roll back asked for, done before the rest

    def put(self, constraint: Constraint) -> None:
        """A rewind is no standing constraint: the engine does it at its next step (the
        latest one asked wins), then takes what else is pending."""
        if constraint.kind == "rewind":
            self.rewind = constraint
        else:
            if constraint.kind == "stop":
                self.stop_requested = True
            self._pending.append(constraint)
        self._wake()

    def take_rewind(self) -> Constraint | None:
        taken, self.rewind = self.rewind, None
        return taken

    def withdraw(self, reply: str) -> None:
        """The constraints of `reply` no longer hold (pending ones are dropped at once)."""
        self._pending = [c for c in self._pending if c.reply != reply]
        if self.rewind is not None and self.rewind.reply == reply:
            self.rewind = None
        self.stop_requested = any(c.kind == "stop" for c in self._pending)
        self._withdrawn.append(reply)
        self._wake()

    def resume(self) -> None:
        """A human said to go on: a pause in force is lifted."""
        self.resume_requested = True
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def changed(self, seconds: float) -> bool:
        """Wait until something arrives (or `timeout` seconds); whether something did."""
        if self._pending or self._withdrawn or self.resume_requested or self.rewind:
            return True
        self._changed = self._changed or asyncio.Event()
        self._changed.clear()
        try:
            async with asyncio.timeout(seconds):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True

    def drain(self) -> list[Constraint]:
        taken, self._pending = self._pending, []
        return taken

    def drain_withdrawn(self) -> list[str]:
        taken, self._withdrawn = self._withdrawn, []
        return taken
