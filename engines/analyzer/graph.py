"""The causal graph: the things an incident involves, what depends on what, and each
thing's own anomalies with their onsets.

Nodes are objects by namespace and name (a Service and the workload of the same name are
one node: the scoring rule treats them alike). An edge `a -> b` says that `a` depends on
`b`, so that a fault of `b` can be what `a` shows:
- calls: a workload's log lines name a host or a workload it calls (detectors/_targets.py),
  or relay another workload's own error text word for word ("could not save: pq: <the
  database's own error>"): the relayer calls the one that said it first;
- hurts: a detector's candidate names the workloads its fault reaches (`affects`: the
  callers of a broken DNS server, the pods a NetworkPolicy cuts off, the tenants of a
  failing node), and a caller's failure names its callee (`blames`);
- scales: a workload depends on its HorizontalPodAutoscaler, and an autoscaler that cannot
  read its metrics depends on the server of the resource metrics API.

Detectors produce the anomalies (candidates, candidates.py); `onset` dates each one from
the times its own clues show. The walk (ranking.py) then asks, for a candidate that a
dependency can explain, whether something it depends on has an anomaly of its own, strong
and no later: that is the cause, and the category is that node's, never its victims'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors._common import event_workload, pattern_workloads
from engines.analyzer.detectors._targets import callers_by_callee
from engines.analyzer.facts import Facts, Ref, parse_stamp

Key = tuple[str, str]
CALLS, HURTS, SCALES = "calls", "hurts", "scales"
HOPS = 3
SLACK = timedelta(minutes=5)  # how much later a cause may show than its first victim
RELAY_MIN = 24  # characters of another workload's own error a relayed line must repeat
_LEVEL = re.compile(r"^\W*(?:error|err|warn|warning|fatal|panic|info|log)\W+", re.I)
METRICS_API = ("unable to get metrics", "failedgetresourcemetric", "failed to get cpu",
               "failed to get memory", "unable to fetch metrics", "metrics.k8s.io")
METRICS_SERVERS = ("metrics-server", "prometheus-adapter", "keda-operator-metrics")
# What a fault further down a path of each relation can be the cause of: a caller's failed
# calls, a new revision's errors, a pool or disk that runs out while its dependency is what
# fails; and a workload that saturates because its autoscaler cannot add pods.
VICTIMS = {CALLS: frozenset({"dependency_failure", "bad_rollout", "resource_exhaustion"}),
           SCALES: frozenset({"dependency_failure", "bad_rollout", "resource_exhaustion",
                              "cpu_throttling", "autoscaling_limit"})}
# A fault that names its victims (a NetworkPolicy that cuts pods off, a DNS server down)
# also explains their crash loops: their last words are that fault's errors; and an issuer
# that cannot sign explains its victims' bad certificates, a credentials refresher that fails
# its victims' refused pulls.
VICTIMS[HURTS] = VICTIMS[CALLS] | {"crash_loop", "certificate", "image_pull"}
ROLLOUT = "bad_rollout"
LEAST = {CALLS: 0.5, HURTS: 0.5, SCALES: 0.4}  # how strong the cause must be
# Clues by which a candidate shows it harms what it affects (a revision that floods its
# callee, whose new output its consumers reject, that starves its neighbours of CPU; a
# client that holds most of a database's connections; an image that fills the disk of the
# nodes it is pulled onto).
HARMS = frozenset({"overloads-callee", "named-by-victims", "starved-neighbours",
                   "unreadable-answers", "holds-connections", "fills-image-filesystem"})
# A node's own fault (hung I/O, lost network, pressure) also explains the failing probes of
# the pods it hosts: they answer slowly or not at all because the node does.
NODE_VICTIMS = frozenset({"probe_failure"})


def key(ref: Ref) -> Key:
    return ref.namespace, ref.name


@dataclass(slots=True)
class Graph:
    """Who depends on whom (`needs[a]` holds what `a` depends on), with the workload each
    node stands for so that a walk can name it."""

    needs: dict[Key, dict[Key, str]] = field(default_factory=dict)
    refs: dict[Key, Ref] = field(default_factory=dict)

    def add(self, source: Ref, target: Ref, relation: str = CALLS) -> None:
        if key(source) == key(target):
            return
        self.needs.setdefault(key(source), {}).setdefault(key(target), relation)
        for ref in (source, target):
            self.refs.setdefault(key(ref), ref)

    def dependencies(self, ref: Ref, hops: int = HOPS, *,
                     up: bool = False) -> dict[Key, tuple[int, str]]:
        """What `ref` depends on (`up`: what depends on it, its callers and victims),
        directly or through up to `hops` edges: the distance, and the relation of the first
        edge (how `ref` depends on that path)."""
        edges = self.needs if not up else {}
        for source, targets in self.needs.items() if up else ():
            for target, relation in targets.items():
                edges.setdefault(target, {})[source] = relation
        found: dict[Key, tuple[int, str]] = {}
        frontier = dict(edges.get(key(ref), {}))
        for depth in range(1, hops + 1):
            frontier = {n: r for n, r in frontier.items() if n not in found and n != key(ref)}
            if not frontier:
                break
            found.update({n: (depth, r) for n, r in frontier.items()})
            frontier = {n: r for f, r in frontier.items() for n in edges.get(f, {})}
        return found


def build_graph(facts: Facts, candidates: Iterable[Candidate] = (),
                known: Graph | None = None) -> Graph:
    """The dependency edges the observations and the detectors' candidates show, added to
    those `known` already."""
    graph = Graph({k: dict(v) for k, v in known.needs.items()}, dict(known.refs)) if known \
        else Graph()
    for callee, callers in callers_by_callee(facts).items():
        for caller in callers:
            graph.add(caller, callee)
    for caller, callee in _relays(facts):
        graph.add(caller, callee)
    for candidate in candidates:
        for victim in candidate.affects:
            graph.add(victim, candidate.culprit, HURTS)
        for callee in candidate.blames:
            graph.add(candidate.culprit, callee)
    _scaling(facts, graph)
    _storage_drivers(facts, graph)
    return graph


_CSI_DRIVER = re.compile(r"driver name ([\w.-]+) not found", re.IGNORECASE)
_CSI = re.compile(r"\bcsi\b", re.IGNORECASE)


def _storage_drivers(facts: Facts, graph: Graph) -> None:
    """A pod whose volume cannot be attached or mounted because the node's CSI driver is
    not registered (or fails) depends on the DaemonSet that runs that driver's node plugin:
    a plugin that crashes or is OOM-killed is the cause of the pods stuck behind it."""
    plugins = [r for r in facts.workloads if r.kind == "DaemonSet" and "csi" in r.name.lower()]
    if not plugins:
        return
    for event in facts.events:
        if event.type != "Warning" or not event.reason.startswith(("FailedMount",
                                                                   "FailedAttach")):
            continue
        named_driver = _CSI_DRIVER.search(event.message)
        if (named_driver is None and not _CSI.search(event.message)) or (
                victim := event_workload(facts, event)) is None:
            continue
        driver = named_driver.group(1).split(".")[0].lower() if named_driver else ""
        named = [r for r in plugins if driver and driver in r.name.lower()]
        for plugin in named or (plugins if len(plugins) == 1 else []):
            graph.add(victim, plugin, HURTS)


def _relays(facts: Facts) -> list[tuple[Ref, Ref]]:
    """(caller, callee) where the caller's log lines repeat the callee's own error, which
    the callee said no later: the caller only passes on what it was answered."""
    owned = [(pattern, owners[0]) for pattern in facts.patterns
             if (owners := pattern_workloads(pattern, facts))]
    own = [(text, owner, pattern.first) for pattern, owner in owned
           if len(text := _LEVEL.sub("", pattern.template).strip().lower()) >= RELAY_MIN]
    found: list[tuple[Ref, Ref]] = []
    for pattern, owner in owned:
        line = pattern.template.lower()
        for text, origin, first in own:
            if origin != owner and text in line and text != _LEVEL.sub("", line).strip() \
                    and (first is None or pattern.first is None or first <= pattern.first):
                found.append((owner, origin))
    return found


def _scaling(facts: Facts, graph: Graph) -> None:
    """A workload depends on its autoscaler; one that cannot read the resource metrics
    depends on the workloads that serve them."""
    servers = [r for r in facts.workloads if any(n in r.name for n in METRICS_SERVERS)]
    said = [(Ref(e.kind, e.namespace, e.name), f"{e.reason} {e.message}") for e in facts.events
            if e.kind == "HorizontalPodAutoscaler"]  # autoscalers listed or not
    for autoscaler in facts.autoscalers.values():
        if autoscaler.target is None:
            continue
        hpa = Ref("HorizontalPodAutoscaler", autoscaler.namespace, autoscaler.name)
        graph.add(autoscaler.target, hpa, SCALES)
        said.append((hpa, " ".join((*autoscaler.problems, *autoscaler.metrics))))
    for hpa, text in said:
        if any(n in text.lower() for n in METRICS_API):
            for server in servers:
                graph.add(hpa, server, SCALES)


def onset(candidate: Candidate, facts: Facts) -> datetime | None:
    """When the candidate's own anomaly began: the earliest time its clues print, or the
    first sighting of a log line or event they quote, on its own node."""
    node = key(candidate.culprit)
    needles = {n.lower() for clue in candidate.clues for n in clue.needles if len(n) >= 6}
    times = [moment for clue in candidate.clues if (moment := parse_stamp(clue.note)) is not None]
    if needles:
        for pattern in facts.patterns:
            if pattern.first is not None and any(n in pattern.text.lower() for n in needles) \
                    and node in {key(r) for r in pattern_workloads(pattern, facts)}:
                times.append(pattern.first)
        for event in facts.events:
            ref = event_workload(facts, event)
            if event.first is not None and ref is not None and key(ref) == node and any(
                    n in event.message.lower() for n in needles):
                times.append(event.first)
    return min(times) if times else None


def explained_by(candidate: Candidate, candidates: Sequence[Candidate], graph: Graph,
                 onsets: dict[int, datetime | None]) -> Candidate | None:
    """The strongest anomaly of something the candidate's node depends on, no later than
    the candidate's own (give or take SLACK), and not itself only a failed dependency
    (except for a new revision: it explains only the errors of its own code, not those of
    a callee that fails, whatever it fails of): the earlier fault on the path, of which
    this candidate is a victim."""
    reach = graph.dependencies(candidate.culprit)
    when = onsets.get(id(candidate))
    causes = []
    for other in candidates:
        if other.culprit in candidate.affects and any(c.topic in HARMS for c in candidate.clues):
            continue  # what the candidate's own evidence says it harms does not explain it
        depth, relation = reach.get(key(other.culprit), (0, ""))
        hosted = relation == HURTS and other.culprit.kind == "Node" and \
            candidate.category in NODE_VICTIMS
        if not depth or (candidate.category not in VICTIMS[relation] and not hosted) or (
                other.category == "dependency_failure" and candidate.category != ROLLOUT) or \
                other.strength * other.penalty < LEAST[relation]:
            continue
        began = onsets.get(id(other))
        if when is not None and began is not None and began > when + SLACK:
            continue
        causes.append(other)
    return max(causes, key=lambda c: (c.strength * c.penalty, -reach[key(c.culprit)][0]),
               default=None)
