"""Kernel limits that every pod of a node shares: inotify instances and watches.

`fs.inotify.max_user_instances` and `max_user_watches` are counted per user on the node,
not per container, so a node agent that watches every file there (a log shipper tailing
each container's log) can use them all up; then the other pods' file watchers fail with
"EMFILE: too many open files" or "inotify ... limit reached", whatever their own code
does. Several workloads, in different namespaces, failing that way at once point at the
agent, not at any of them; the agent shows itself by its own inotify lines.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import LOG_PATTERNS, LOG_TOOLS
from engines.analyzer.detectors._logs import Sighting, by_workload, sightings
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

PHRASES = ("inotify", "too many open files", "emfile", "max_user_watches",
           "max_user_instances", "number of file watchers")
WATCHER = re.compile(r"inotify|max_user_(?:watches|instances)|number of file watchers|"
                     r"(?:emfile|too many open files)\W.*\bwatch|\bwatch\w*\W.*(?:emfile|too "
                     r"many open files)", re.IGNORECASE)
"""A file watcher that could not get an inotify instance or watch."""
FOLLOW = {"text": "inotify", "level": "info"}
"""The log search that finds who else on the nodes uses inotify (a node agent logs its
watches at info)."""


def watcher_exhausted(text: str) -> bool:
    """Whether a line says a file watch failed for want of inotify instances or watches."""
    return WATCHER.search(text) is not None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    seen = [s for s in sightings(facts, scope, PHRASES) if watcher_exhausted(s.pattern.text)]
    grouped = by_workload(seen)
    victims = sorted((r for r in grouped if r.kind != "DaemonSet"), key=str)
    agents = sorted((r for r in grouped if r.kind == "DaemonSet"), key=str)
    if not victims or not agents:
        return []
    agent = max(agents, key=lambda r: sum(s.pattern.count for s in grouped[r]))
    return [_agent(agent, victims, grouped)]


def _agent(agent: Ref, victims: list[Ref], grouped: dict[Ref, list[Sighting]]) -> Candidate:
    """The node agent as the holder of its nodes' inotify instances, its victims named."""
    entry = Candidate("resource_exhaustion", agent, affects=tuple(victims))
    first = grouped[victims[0]][0]
    names = ", ".join(r.name for r in victims[:3]) + (" …" if len(victims) > 3 else "")
    namespaces = {r.namespace for r in victims}
    weight = 0.5 if len(namespaces) > 1 else 0.4 if len(victims) > 1 else 0.3
    entry.clues.append(Clue(weight, f"{len(victims)} workload(s) on its nodes ({names}) run out "
                            f"of inotify instances or watches, a limit of the node: "
                            f"{first.quote[:80]!r}", (first.quote, first.phrase),
                            first.pattern.source, LOG_TOOLS, "inotify-victims"))
    mine = grouped[agent][0]
    entry.clues.append(Clue(0.3 * max(mine.factor, 0.5), f"{agent.name} logs {mine.quote[:80]!r} "
                            f"×{mine.pattern.count}: it watches files on every node",
                            (mine.quote, mine.phrase), mine.pattern.source, LOG_TOOLS,
                            "inotify-agent"))
    entry.fix = (f"DaemonSet {agent.namespace}/{agent.name} holds its nodes' inotify instances "
                 "and watches (one per file it follows): roll back or fix the release that "
                 "leaks them and restart its pods on the affected nodes to free them; raise "
                 "fs.inotify.max_user_instances and max_user_watches if it needs more. The "
                 "workloads that fail to watch files need no change.")
    entry.follow(LOG_PATTERNS, {"namespace": agent.namespace, "service": agent.name,
                                "level": "info"}, f"see how {agent.name} uses inotify")
    return entry
