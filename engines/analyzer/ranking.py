"""Which candidate wins: relevance to the report, precedence between categories, and the
humans' constraints, applied to the detectors' candidates. Pure functions only.

Relevance is why red herrings lose: a cause in a workload the report does not name, in
another namespace, that no named workload calls, keeps only a third of its strength.
Precedence follows scenario-format.md: a more specific category beats bad_rollout, and a
symptom (probe failures after OOM kills, throttling under a capped autoscaler, a caller's
errors behind a broken Service) loses to its cause. The cluster's DNS server failing (a
crash loop, OOM kills, failing probes) while callers cannot resolve names is a network
outage; a DNS server whose image cannot be pulled, whose pods cannot be scheduled or whose
CPU limit throttles it is not (that is the more specific cause).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime

from engines.analyzer.candidates import Candidate, merge
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.graph import SLACK, Graph, build_graph, explained_by, onset
from engines.analyzer.rejections import Rejection
from engines.analyzer.scope import Scope

FLOOR = 0.3  # relevance of a cause that nothing links to the report
UNSCOPED = 0.85  # relevance of every cause when the report names nothing known
BATCH_KINDS = frozenset({"Job", "CronJob"})
# How much a report points at a culprit by what it misses rather than by name: a batch
# workload when it misses what batches make (statements...), a node agent that ships logs or
# metrics when it misses logs or metrics.
MISSING_OUTPUT_HINT = 0.6
TELEMETRY_AGENT = re.compile(r"vector|fluent|promtail|filebeat|metricbeat|otel|opentelemetry|"
                             r"collector|log-?agent|logging|node-exporter|datadog|telegraf|"
                             r"grafana-agent|alloy")


def relevance(candidate: Candidate, scope: Scope, graph: Graph) -> float:
    """0.3..1: how directly the report points at the culprit or what it affects."""
    if not scope.workloads and not scope.namespaces:
        return UNSCOPED
    culprit = candidate.culprit
    best = scope.weight(culprit.namespace, culprit.name)
    if culprit.kind in BATCH_KINDS and "batch" in scope.symptoms:
        best = max(best, MISSING_OUTPUT_HINT)
    if culprit.kind == "DaemonSet" and "telemetry" in scope.symptoms and \
            TELEMETRY_AGENT.search(culprit.name.lower()):
        best = max(best, MISSING_OUTPUT_HINT)
    for ref in candidate.affects:
        best = max(best, 0.95 * _reach(ref, scope, graph))
    best = max(best, _reach(culprit, scope, graph, own=False))
    return FLOOR + (1.0 - FLOOR) * min(best, 1.0)


HOP = 0.85  # what each hop down a call chain keeps of the report's pointing at its caller


def _reach(ref: Ref, scope: Scope, graph: Graph, *, own: bool = True) -> float:
    """How strongly the report points at `ref` itself (if `own`) or at a workload that calls
    it, directly or through up to three hops (a slow API two services below the one the
    report names is still its cause)."""
    best = scope.weight(ref.namespace, ref.name) if own else 0.0
    callers = graph.dependencies(ref, up=True).items()
    return max([best, *(HOP ** depth * scope.weight(*node) for node, (depth, _) in callers)])


def _ignore(candidate: Candidate, terms: frozenset[str]) -> None:
    """ "ignore the redis warnings in cart": drop clues about them, demote such culprits."""
    if not terms:
        return
    kept = []
    for clue in candidate.clues:
        text = f"{clue.note} {' '.join(clue.needles)}".lower()
        if any(term in text for term in terms):
            continue
        kept.append(clue)
    if len(kept) < len(candidate.clues):
        candidate.demoted_because.append("a human asked to ignore some of its evidence")
    candidate.clues = kept
    if any(term in candidate.culprit.name.lower() for term in terms):
        candidate.demote(0.4, "a human asked to ignore it")


WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
BACKLOG = frozenset({"exhausted-threads", "exhausted-workers", "exhausted-queue capacity"})
ROOM = frozenset({"exhausted-disk space", "exhausted-file descriptors"})
PULL_OR_PLACE = ("image_pull", "unschedulable")
DIES = ("oom_killed", "crash_loop")
NOT_STARTED = ("image_pull", "unschedulable", "quota_exceeded")
LIVENESS_KILL, OUT_OF_ROOM = "killed by its liveness probe", "out of disk or descriptors"
# What a client uses up of its own connections (channels on one AMQP connection, local ports,
# descriptors): its calls then fail however healthy what it calls is.
OWN_BUDGET, BUDGETS = "out of its own connections' budget", frozenset({
    "exhausted-channels", "exhausted-local ports", "exhausted-file descriptors"})
# A node's own state decides its category: (what it shows, what it also shows, how strong
# that must be, the demotion, why; what else it shows that cancels the rule). A running DNS
# server that crash-loops or fails its probes is only the form of a network outage
# (detectors/dns.py); a network "outage" of a workload is its pods that cannot pull, be
# scheduled, get CPU or keep within their memory limit: the limit is what to fix.
PRECEDENCE: tuple[tuple[str, tuple[str, ...], float, float, str, str], ...] = (
    *((form, ("network",), 0.6, 0.4, "it serves the cluster's DNS: its callers fail to "
       "resolve names, a network outage", "") for form in ("crash_loop", "probe_failure")),
    ("network", PULL_OR_PLACE, 0.6, 0.6, "its new pods cannot start: that is the cause", ""),
    ("network", ("cpu_throttling",), 0.6, 0.6,
     "it answers slowly because its CPU limit throttles it", ""),
    ("network", ("oom_killed",), 0.6, 0.6,
     "it is OOM-killed: its memory limit is what fails it", ""),
    ("unschedulable", ("quota_exceeded",), 0.4, 0.5,
     "its pods wait for what a quota refuses to create (a claim, a pod)", ""),
    ("bad_rollout", (*NOT_STARTED, *DIES, "probe_failure"), 0.5, 0.35,
     "the new revision fails in a more specific way", ""),
    ("probe_failure", DIES, 0.6, 0.4, "the probes fail because the container dies",
     LIVENESS_KILL),
    ("crash_loop", (LIVENESS_KILL,), 0.5, 0.5,
     "its restarts are the kubelet killing it for failed liveness probes", ""),
    ("crash_loop", ("oom_killed",), 0.6, 0.5, "the restarts are OOM kills", ""),
    ("crash_loop", ("certificate",), 0.6, 0.5, "it exits on a TLS certificate: that is the cause",
     ""),
    ("cpu_throttling", DIES, 0.6, 0.6, "it also restarts: the restarts are the cause",
     LIVENESS_KILL),
    ("crash_loop", (OUT_OF_ROOM,), 0.25, 0.5,
     "it dies because its disk or file descriptors run out", ""),
    ("cpu_throttling", ("autoscaling_limit",), 0.5, 0.6, "its autoscaler is capped: that is the "
     "limit", ""),
    ("backlog", ("cpu_throttling",), 0.5, 0.5, "its queue and workers fill because its CPU "
     "limit slows every request", ""),
    ("resource_exhaustion", ("autoscaling_limit",), 0.5, 0.6,
     "it is saturated because its autoscaler is capped", ""),
    ("dependency_failure", ("certificate",), 0.5, 0.5, "its calls fail on a TLS certificate", ""),
    ("dependency_failure", (OWN_BUDGET,), 0.25, 0.5, "its calls fail because it used up what "
     "its own connections allow (channels, local ports, descriptors)", ""),
    *((form, NOT_STARTED, 0.6, 0.5, "its pods do not even start", "") for form in (
        "dependency_failure", "bad_rollout", "resource_exhaustion", "cpu_throttling")),
)


def _forms(candidate: Candidate) -> set[str]:
    """What a candidate shows of its node: its category (a network fault only of a
    workload), and "backlog" for exhaustion seen only as busy threads, workers or a full
    queue, work that waits, which a throttled CPU causes as well (unlike leaked
    connections, files or a full disk)."""
    kinds = {c.topic for c in candidate.clues if c.topic.startswith("exhausted-")} - {
        "exhausted-requests", "exhausted-latency"}
    workload = candidate.culprit.kind in WORKLOAD_KINDS
    return {candidate.category} - ({"network"} if not workload else set()) | (
        {"backlog"} if candidate.category == "resource_exhaustion" and kinds and
        kinds <= BACKLOG else set())


def _states(candidates: Sequence[Candidate]) -> dict[tuple[str, str], dict[str, float]]:
    """Each node's own states, the strongest of each, by namespace and name: its candidates'
    categories, and how it dies: the kubelet killing it (exit 137 or 143, not OOM) after
    failed liveness probes, or its own disk or file descriptors running out."""
    states: dict[tuple[str, str], dict[str, float]] = {}
    for candidate in candidates:
        node = states.setdefault((candidate.culprit.namespace, candidate.culprit.name), {})
        topics = {clue.topic for clue in candidate.clues}
        for form in _forms(candidate) - {"backlog"} | (
                {LIVENESS_KILL} if candidate.category == "probe_failure"
                and ({"probe-kill", "probe-killing"} <= topics or "probe-sigterm" in topics)
                else set()) | (
                {OUT_OF_ROOM} if candidate.category == "resource_exhaustion"
                and ROOM & topics else set()) | (
                {OWN_BUDGET} if candidate.category == "resource_exhaustion"
                and BUDGETS & topics else set()):
            node[form] = max(node.get(form, 0.0), candidate.strength)
    return states


def apply_precedence(candidates: Sequence[Candidate]) -> None:
    """Demote candidates that a more specific state of the same node explains."""
    states = _states(candidates)
    for candidate in candidates:
        node, forms = states[(candidate.culprit.namespace, candidate.culprit.name)], \
            _forms(candidate)
        for victim, causes, least, factor, why, unless in PRECEDENCE:
            if victim in forms and max((node.get(c, 0.0) for c in causes), default=0.0) >= \
                    least and not node.get(unless):
                candidate.demote(factor, why)


def is_rejected(candidate: Candidate, rejections: Sequence[Rejection]) -> bool:
    """Whether one of the rejections names this candidate's category and culprit."""
    culprit = candidate.culprit
    return any(r.matches(candidate.category, culprit.kind, culprit.namespace, culprit.name)
               for r in rejections)


def _throttled_first(probe: Candidate, candidates: Sequence[Candidate],
                     onsets: dict[int, datetime | None]) -> Candidate | None:
    """A strong CPU throttling of the probed workload that began no later than the probe
    failures: the probes time out because the container is starved of CPU."""
    began = onsets.get(id(probe))
    return next((c for c in candidates if c.category == "cpu_throttling"
                 and c.culprit == probe.culprit and c.strength >= 0.6
                 and (when := onsets.get(id(c))) is not None and began is not None
                 and when <= began + SLACK), None)


def walk(candidates: Sequence[Candidate], graph: Graph, facts: Facts) -> None:
    """The root cause is the earliest own anomaly on the path: a candidate that something
    it depends on explains (graph.explained_by) is demoted as that fault's victim."""
    onsets = {id(c): onset(c, facts) for c in candidates}
    for candidate in candidates:
        if candidate.category == "probe_failure" and (
                throttled := _throttled_first(candidate, candidates, onsets)) is not None:
            candidate.demote(0.5, f"its probes time out since its CPU limit throttles it "
                             f"({throttled.headline[:60]})")
    verdicts = [(c, explained_by(c, candidates, graph, onsets)) for c in candidates]
    for candidate, cause in verdicts:
        if cause is not None:
            candidate.demote(0.5, f"{cause.culprit}, which it depends on, fails by itself "
                             f"({cause.category.replace('_', ' ')})")


def rank(candidates: Iterable[Candidate], scope: Scope, facts: Facts, *,
         graph: Graph | None = None, excluded: frozenset[str] = frozenset(),
         rejected: Sequence[Rejection] = ()) -> list[Candidate]:
    """Merged candidates, constraints applied, the graph walked, best first (ties broken
    by name). `graph` adds links known beforehand to those the facts show."""
    ranked = []
    merged = merge(candidates)
    graph = build_graph(facts, merged, graph)
    for candidate in merged:
        culprit = candidate.culprit
        if culprit.namespace and culprit.namespace in excluded:
            continue
        if is_rejected(candidate, rejected):
            continue
        candidate.relevance = relevance(candidate, scope, graph)
        _ignore(candidate, scope.ignored_terms)
        if candidate.clues:
            ranked.append(candidate)
    apply_precedence(ranked)
    walk(ranked, graph, facts)
    ranked.sort(key=lambda c: (-round(c.score, 6), c.category, str(c.culprit)))
    return ranked
