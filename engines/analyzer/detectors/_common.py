"""Helpers every detector shares: tool names, time, phrases, and who a log line is from."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache

from engines.analyzer.facts import Event, Facts, LogPattern, Pod, Ref, Workload, owns, parse_stamp
from tools import kubernetes
from tools.logs import logs_error_patterns, logs_search
from tools.metrics import metrics_query, metrics_workload_signals

# The tools the analyzer reads, by the name each tool is registered under (its function's).
DESCRIBE = kubernetes.k8s_describe_pod.name
PODS = kubernetes.k8s_list_pods.name
WORKLOADS = kubernetes.k8s_list_workloads.name
EVENTS = kubernetes.k8s_events.name
NODES = kubernetes.k8s_list_nodes.name
ROLLOUT = kubernetes.k8s_rollout_history.name
SERVICES = kubernetes.k8s_list_services.name
POLICIES = kubernetes.k8s_list_network_policies.name
INGRESSES = kubernetes.k8s_list_ingresses.name
AUTOSCALERS = kubernetes.k8s_list_autoscalers.name
QUOTAS = kubernetes.k8s_list_quotas.name
POD_LOGS = kubernetes.k8s_pod_logs.name
OBJECT = kubernetes.k8s_get_object.name
LOG_PATTERNS = logs_error_patterns.name
LOG_SEARCH = logs_search.name
SIGNALS = metrics_workload_signals.name
METRICS = metrics_query.name
ADMISSION = kubernetes.k8s_pod_limit_ranges.name  # the evidence tools (detectors/evidence.py)
CLAIMS = kubernetes.k8s_list_volume_claims.name
MOUNTS = kubernetes.k8s_mounted_config.name
ENDPOINTS = kubernetes.k8s_service_endpoints.name
LOG_TOOLS = (LOG_PATTERNS, LOG_SEARCH, POD_LOGS)
EVENT_TOOLS = (EVENTS, DESCRIBE, NODES, QUOTAS)

RECENT = timedelta(hours=1)
STALE_RUN = timedelta(days=1)  # a failed batch run older than this is a past story
BATCH = ("Job", "CronJob")


def older_than(workload: Workload, age: timedelta) -> bool:
    """Whether the workload is known to be older than `age` (the tool's number, not its
    text); one whose age was not given is not."""
    return workload.age_seconds is not None and workload.age_seconds > age.total_seconds()


def is_recent(moment: datetime | None, now: datetime, window: timedelta = RECENT) -> bool:
    """Within `window` before now; unknown times count as recent (events live an hour)."""
    return moment is None or now - moment <= window


def recent_events(facts: Facts, *, warnings: bool = False, reason: str = "") -> list[Event]:
    """The events of the last hour: only warnings, or only those of one reason, if asked."""
    return [e for e in facts.events if is_recent(e.last, facts.now)
            and (not warnings or e.type == "Warning") and (not reason or e.reason == reason)]


def _start(phrase: str) -> str:
    """A phrase that begins with a letter or digit matches on a word start only; one that
    begins with punctuation (":53: i/o timeout") anywhere, even right after a digit."""
    low = phrase.lower()
    return ("(?<![a-z0-9])" if low[:1].isalnum() else "") + re.escape(low)


@lru_cache(maxsize=256)
def _any_of(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(_start(p) for p in phrases))


@lru_cache(maxsize=4096)
def _one(phrase: str) -> re.Pattern[str]:
    return re.compile(_start(phrase))


def phrase_in(text: str, phrases: Sequence[str]) -> str | None:
    """The first of `phrases` (in their order) found in `text`, case-insensitive, on word
    starts. One combined regex rules out the common case (no phrase) in a single pass."""
    low = text.lower()
    if _any_of(tuple(phrases)).search(low) is None:
        return None
    return next((p for p in phrases if _one(p).search(low)), None)


def snippet(text: str, phrase: str, width: int = 70) -> str:
    """A short verbatim piece of `text` around `phrase`, for needles (single line)."""
    line = next((ln for ln in text.splitlines() if phrase.lower() in ln.lower()), text)
    index = line.lower().find(phrase.lower())
    if index < 0:
        return phrase
    if start := max(0, index - width // 3):
        space = line.find(" ", start, index)
        start = space + 1 if space >= 0 else start
    end = min(len(line), index + len(phrase) + width)
    if end < len(line):
        space = line.rfind(" ", index + len(phrase), end)
        end = space if space > 0 else end
    return line[start:end].strip()


def pattern_workloads(pattern: LogPattern, facts: Facts) -> list[Ref]:
    """The workloads a log pattern came from: by pod names, else by service names."""
    found: dict[Ref, int] = {}
    pods = dict(pattern.pods)
    if pattern.pod:
        pods[pattern.pod] = pods.get(pattern.pod, 0) + pattern.count
    for pod, count in pods.items():
        namespaces = [pattern.namespace] if pattern.namespace else sorted(facts.namespaces_seen)
        for namespace in namespaces:
            if (ref := facts.workload_of_pod(namespace, pod)) is not None:
                ref = batch_owner(facts, ref)  # a scheduled run's lines are its CronJob's
                found[ref] = found.get(ref, 0) + count
                break
    if not found:
        services = dict(pattern.services)
        if pattern.service:
            services[pattern.service] = services.get(pattern.service, 0) + pattern.count
        for service, count in services.items():
            for ref in facts.workloads:
                if ref.name == service and (not pattern.namespace
                                            or ref.namespace == pattern.namespace):
                    found[ref] = found.get(ref, 0) + count
    return sorted(found, key=lambda r: -found[r])


def batch_owner(facts: Facts, ref: Ref) -> Ref:
    """The CronJob a Job was made by (its name is the CronJob's plus a schedule suffix):
    a scheduled run's fault is its CronJob's. Any other object is its own owner."""
    if ref.kind != "Job":
        return ref
    crons = [r for r in facts.workloads if r.kind == "CronJob" and r.namespace == ref.namespace
             and owns(r.name, ref.name)]
    return max(crons, key=lambda r: len(r.name)) if crons else ref


def hosted(facts: Facts, node: str) -> list[Ref]:
    """The workloads with a known pod on this node: a node's fault reaches them."""
    return sorted({ref for pod in facts.pods.values() if pod.node == node
                   and (ref := pod_workload(facts, pod)) is not None}, key=str)


def failed_runs(facts: Facts, cronjob: Ref) -> list[Ref]:
    """The Jobs of a CronJob that failed (BackoffLimitExceeded, failed pods), oldest first."""
    return sorted((r for r, w in facts.workloads.items() if r.kind == "Job"
                   and batch_owner(facts, r) == cronjob and any(
                       "BackoffLimitExceeded" in p or "failed" in p.lower() for p in w.problems)),
                  key=str)


def pod_workload(facts: Facts, pod: Pod) -> Ref | None:
    ref = pod.owner if pod.owner and pod.owner.kind != "ReplicaSet" else \
        facts.workload_of_pod(pod.namespace, pod.name) or pod.owner
    return batch_owner(facts, ref) if ref is not None else None


def owned_pods(facts: Facts) -> list[tuple[Ref, Pod]]:
    """Every pod whose workload is known, with that workload."""
    return [(ref, pod) for pod in facts.pods.values()
            if (ref := pod_workload(facts, pod)) is not None]


def oom_job(facts: Facts, job: Ref) -> bool:
    """Whether the pods of a failed Job (or of its CronJob) all died OOMKilled, as the
    workload rollup or the pods seen tell: the Job failed for memory, not for a crash."""
    reasons: dict[str, int] = {}
    for ref in dict.fromkeys((job, batch_owner(facts, job))):
        if (workload := facts.workloads.get(ref)) is not None:
            for reason, count in workload.exit_reasons.items():
                if reason != "Completed":
                    reasons[reason] = reasons.get(reason, 0) + count
    for pod in facts.pods.values():
        if pod.namespace == job.namespace and pod_workload(facts, pod) == batch_owner(facts, job):
            for container in pod.containers:
                reason = container.terminated.split(" ")[0] or container.last_reason
                if reason and reason != "Completed":
                    reasons[reason] = reasons.get(reason, 0) + 1
    return bool(reasons) and set(reasons) == {"OOMKilled"}


def event_workload(facts: Facts, event: Event) -> Ref | None:
    """The workload an event is about (its pod's or ReplicaSet's owner, or itself)."""
    if event.kind in ("Deployment", "StatefulSet", "DaemonSet", *BATCH):
        return batch_owner(facts, Ref(event.kind, event.namespace, event.name))
    if event.kind not in ("Pod", "ReplicaSet"):
        return None
    if (ref := facts.workload_of_pod(event.namespace, event.name)) is not None:
        return batch_owner(facts, ref)
    return next((candidate for candidate in facts.workloads if candidate.namespace ==
                 event.namespace and owns(candidate.name, event.name)), None)


ERRORS = ("error", "fatal", "critical", "err")  # the levels of a line that reports a failure


def level_of(pattern: LogPattern) -> str:
    """The dominant level of a pattern ("" if unknown)."""
    return max(pattern.levels.items(), key=lambda kv: kv[1], default=("", 0))[0].lower()


def predates(pattern_first: datetime | None, onset: datetime | None,
             slack: timedelta = timedelta(minutes=10)) -> bool:
    """Whether a signal was already there well before the incident began."""
    return pattern_first is not None and onset is not None and pattern_first < onset - slack


def first_of(values: Sequence[datetime | None]) -> datetime | None:
    return min((v for v in values if v is not None), default=None)


def signal_change(facts: Facts, ref: Ref) -> datetime | None:
    """When the workload's 5xx ratio or latency turned abnormal, or its backlog (a
    consumer's lag) began to grow, per its metrics."""
    if (signals := facts.signals_of(ref)) is None:
        return None
    changes = [signals.get(name).get("change") for name in ("requests", "latency")
               if signals.get(name).get("abnormal")]
    backlog = signals.get("backlog")
    grew = [parse_stamp(backlog.get("growing_since"))] if backlog.get("abnormal") else []
    return first_of([*(parse_stamp(c.get("at")) for c in changes if isinstance(c, dict)), *grew])


def stamp(moment: datetime) -> str:
    """A time as the tools print it (RFC 3339 to the second), for needles."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

