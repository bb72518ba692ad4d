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

from collections.abc import Iterable, Sequence
from datetime import datetime

from engines.analyzer.candidates import Candidate, merge
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.graph import SLACK, Graph, build_graph, explained_by, key, onset
from engines.analyzer.rejections import Rejection
from engines.analyzer.scope import Scope

SPECIFIC = frozenset({"image_pull", "unschedulable", "crash_loop", "oom_killed",
                      "probe_failure", "quota_exceeded"})
FLOOR = 0.3  # relevance of a cause that nothing links to the report
UNSCOPED = 0.85  # relevance of every cause when the report names nothing known
BATCH_KINDS = frozenset({"Job", "CronJob"})
BATCH_HINT = 0.6  # a batch culprit when the report misses what batches make (statements...)


def relevance(candidate: Candidate, scope: Scope, graph: Graph) -> float:
    """0.3..1: how directly the report points at the culprit or what it affects."""
    if not scope.workloads and not scope.namespaces:
        return UNSCOPED
    culprit = candidate.culprit
    best = scope.weight(culprit.namespace, culprit.name)
    if culprit.kind in BATCH_KINDS and "batch" in scope.symptoms:
        best = max(best, BATCH_HINT)
    for ref in candidate.affects:
        best = max(best, 0.95 * _reach(ref, scope, graph))
    best = max(best, _reach(culprit, scope, graph, own=False))
    return FLOOR + (1.0 - FLOOR) * min(best, 1.0)


HOP = 0.85  # what each hop down a call chain keeps of the report's pointing at its caller
HOPS = 3


def _reach(ref: Ref, scope: Scope, graph: Graph, *, own: bool = True) -> float:
    """How strongly the report points at `ref` itself (if `own`) or at a workload that calls
    it, directly or through up to three hops (a slow API two services below the one the
    report names is still its cause)."""
    best = scope.weight(ref.namespace, ref.name) if own else 0.0
    frontier, seen, factor = {key(ref)}, {key(ref)}, 1.0
    for _ in range(HOPS):
        factor *= HOP
        frontier = {c for r in frontier for c in graph.dependents(r) if c not in seen}
        if not frontier:
            break
        seen |= frontier
        best = max(best, factor * max(scope.weight(*c) for c in frontier))
    return best


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


def _strongest(candidates: Iterable[Candidate], workload: Ref, categories: Iterable[str]) -> float:
    wanted = set(categories)
    return max((c.strength for c in candidates if c.category in wanted
                and c.culprit.namespace == workload.namespace
                and c.culprit.name == workload.name), default=0.0)


WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
# How a running DNS server fails is only the form of a network outage; a new revision that
# cannot pull or be scheduled is a cause of its own, whatever the workload serves.
OUTAGE_FORMS = frozenset({"crash_loop", "oom_killed", "probe_failure"})


def _outage(candidates: Sequence[Candidate], candidate: Candidate) -> Candidate | None:
    """The network candidate that names this very workload (the cluster's DNS server, see
    detectors/dns.py) strongly enough: how it fails is only the form of that outage."""
    if candidate.category not in OUTAGE_FORMS:
        return None
    ref = candidate.culprit
    return next((c for c in candidates if c.category == "network" and c.strength >= 0.6
                 and c.culprit.kind in WORKLOAD_KINDS and c.culprit.namespace == ref.namespace
                 and c.culprit.name == ref.name), None)


BACKLOG = frozenset({"exhausted-threads", "exhausted-workers", "exhausted-queue capacity"})


def _only_work_backlog(candidate: Candidate) -> bool:
    """Exhaustion seen only as busy threads, workers or a full queue: work that waits, which
    a throttled CPU causes as well (unlike leaked connections, files or a full disk)."""
    kinds = {c.topic for c in candidate.clues if c.topic.startswith("exhausted-")} - {
        "exhausted-requests", "exhausted-latency"}
    return bool(kinds) and kinds <= BACKLOG


def _killed_by_liveness(candidates: Sequence[Candidate], ref: Ref) -> bool:
    """The kubelet killed the container (exit 137 or 143, not OOM) after failed liveness
    probes: its restarts are the probe's doing, not a crash of its own."""
    return any(c.category == "probe_failure" and c.culprit == ref and
               {"probe-kill", "probe-killing"} <= {clue.topic for clue in c.clues}
               for c in candidates)


ROOM = frozenset({"exhausted-disk space", "exhausted-file descriptors"})


def _out_of_room(candidates: Sequence[Candidate], ref: Ref) -> bool:
    """The workload itself logs a full disk or no file descriptors left: why it exits."""
    return any(c.category == "resource_exhaustion" and c.culprit == ref and c.strength >= 0.25
               and ROOM & {clue.topic for clue in c.clues} for c in candidates)


def apply_precedence(candidates: Sequence[Candidate]) -> None:
    """Demote candidates that a more specific cause of the same node explains."""
    for candidate in candidates:
        ref = candidate.culprit
        if _outage(candidates, candidate) is not None:
            candidate.demote(0.4, "it serves the cluster's DNS: its callers fail to resolve "
                             "names, a network outage")
        if candidate.category == "network" and candidate.culprit.kind in WORKLOAD_KINDS and \
                _strongest(candidates, ref, ("image_pull", "unschedulable")) >= 0.6:
            candidate.demote(0.6, "its new pods cannot start: that is the cause")
        if candidate.category == "network" and candidate.culprit.kind in WORKLOAD_KINDS and \
                _strongest(candidates, ref, ("cpu_throttling",)) >= 0.6:
            candidate.demote(0.6, "it answers slowly because its CPU limit throttles it")
        if candidate.category == "bad_rollout" and _strongest(candidates, ref, SPECIFIC) >= 0.5:
            candidate.demote(0.35, "the new revision fails in a more specific way")
        killed_by_probe = _killed_by_liveness(candidates, ref)
        if candidate.category == "probe_failure" and not killed_by_probe and _strongest(
                candidates, ref, ("oom_killed", "crash_loop")) >= 0.6:
            candidate.demote(0.4, "the probes fail because the container dies")
        if candidate.category == "crash_loop" and killed_by_probe:
            candidate.demote(0.5, "its restarts are the kubelet killing it for failed liveness "
                             "probes")
        if candidate.category == "crash_loop" and _strongest(candidates, ref,
                                                             ("oom_killed",)) >= 0.6:
            candidate.demote(0.5, "the restarts are OOM kills")
        if candidate.category == "crash_loop" and _strongest(candidates, ref,
                                                             ("certificate",)) >= 0.6:
            candidate.demote(0.5, "it exits on a TLS certificate: that is the cause")
        if candidate.category == "cpu_throttling" and not killed_by_probe and _strongest(
                candidates, ref, ("oom_killed", "crash_loop")) >= 0.6:
            candidate.demote(0.6, "it also restarts: the restarts are the cause")
        if candidate.category == "crash_loop" and _out_of_room(candidates, ref):
            candidate.demote(0.5, "it dies because its disk or file descriptors run out")
        if candidate.category == "cpu_throttling" and _strongest(
                candidates, ref, ("autoscaling_limit",)) >= 0.5:
            candidate.demote(0.6, "its autoscaler is capped: that is the limit")
        if candidate.category == "resource_exhaustion" and _only_work_backlog(candidate) and \
                _strongest(candidates, ref, ("cpu_throttling",)) >= 0.5:
            candidate.demote(0.5, "its queue and workers fill because its CPU limit slows "
                             "every request")
        if candidate.category == "resource_exhaustion" and _strongest(
                candidates, ref, ("autoscaling_limit",)) >= 0.5:
            candidate.demote(0.6, "it is saturated because its autoscaler is capped")
        if candidate.category == "dependency_failure" and _strongest(
                candidates, ref, ("certificate",)) >= 0.5:
            candidate.demote(0.5, "its calls fail on a TLS certificate")
        if candidate.category in ("dependency_failure", "bad_rollout", "resource_exhaustion",
                                  "cpu_throttling") and _strongest(
                candidates, ref, ("image_pull", "unschedulable", "quota_exceeded")) >= 0.6:
            candidate.demote(0.5, "its pods do not even start")


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
