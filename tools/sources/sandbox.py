"""Sources that serve one recorded scenario from memory, the way the real backends would.

The sandbox is what the demo, the evaluation harness and most tests read, so it mimics the
real APIs where the tools could notice a difference: Kubernetes field selectors are limited
to the keys the API server supports (an unsupported key fails, as it does live), a missing
previous container log raises the API server's own message, log search matches all words
of the query like Elasticsearch's `match` with the `and` operator, and metric range queries
return one sample per step with Prometheus' five-minute lookback (tools.sources._range_query).
Everything is in memory and indexed once, so a call costs microseconds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from engines.errors import BackendError
from tools.scenarios import Scenario, parse_time
from tools.sources._range_query import evaluate_range, label_matcher
from tools.sources.base import (
    KubeObject,
    LogHits,
    LogQuery,
    LogRecord,
    Sample,
    Series,
    Sources,
    sample_type,
)

# Kinds as scenario-format.md lists them; lookups accept any case and the plural.
KINDS = (
    "Namespace", "Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
    "CronJob", "Service", "Endpoints", "Ingress", "ConfigMap", "PersistentVolumeClaim",
    "StorageClass", "HorizontalPodAutoscaler", "ResourceQuota", "LimitRange", "NetworkPolicy",
    "Event",
)
CLUSTER_SCOPED = frozenset({"Namespace", "Node", "StorageClass"})
_ALIASES = {k.lower(): k for k in KINDS} | {k.lower() + "s": k for k in KINDS} | {
    "endpoints": "Endpoints", "ingresses": "Ingress", "hpa": "HorizontalPodAutoscaler",
    "pvc": "PersistentVolumeClaim", "secrets": "Secret", "secret": "Secret",
    "networkpolicies": "NetworkPolicy", "storageclasses": "StorageClass",
}

# Field selectors the API server supports, by kind (metadata.* works for every kind).
_FIELDS: dict[str, frozenset[str]] = {
    "Event": frozenset({
        "involvedObject.kind", "involvedObject.name", "involvedObject.namespace",
        "involvedObject.uid", "involvedObject.fieldPath", "involvedObject.apiVersion",
        "reason", "type", "source", "reportingComponent",
    }),
    "Pod": frozenset({
        "spec.nodeName", "status.phase", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "status.podIP", "status.nominatedNodeName",
    }),
    "Node": frozenset({"spec.unschedulable"}),
}
_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
_WORD = re.compile(r"\w+")
_LEADING_TIME = re.compile(
    r"^\s*\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)"
)


def canonical_kind(kind: str) -> str:
    """`pods`, `pod` or `Pod` to `Pod`; refuses Secrets and unknown kinds with a BackendError."""
    name = _ALIASES.get(kind.strip().lower(), kind.strip())
    if name == "Secret":
        raise BackendError("Secrets are never read: Triage has no access to them by design")
    if name not in KINDS:
        raise BackendError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return name


def _copy(node: Any) -> Any:
    """A deep copy of JSON-like data (several times faster than `copy.deepcopy`): a tool
    may change what it is given without changing the scenario."""
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(value) for value in node]
    return node


def _path(obj: Mapping[str, Any], dotted: str) -> str:
    """The value at a dotted path as the API server compares it (a string, "" when absent)."""
    node: Any = obj
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return str(node).lower()
    if isinstance(node, Mapping):
        return str(node.get("component", ""))  # Event.source is {component, host}
    return str(node)


def sandbox_identity(scenario: Scenario) -> str:
    """One scenario's data, by its folder: two held-out sets may reuse an id, never a path."""
    return f"sandbox:{scenario.path.resolve()}"


class SandboxCluster:
    """A read-only cluster made of a scenario's `cluster.yaml` and `pod-logs/`."""

    def __init__(self, scenario: Scenario) -> None:
        self.identity = sandbox_identity(scenario)  # what tools.cache keys results by
        self._scenario = scenario
        self._by_kind: dict[str, list[KubeObject]] = {}
        for obj in scenario.cluster_objects:
            kind = _ALIASES.get(str(obj.get("kind", "")).lower(), str(obj.get("kind", "")))
            self._by_kind.setdefault(kind, []).append(obj)
        self._texts: dict[Path, str | None] = {}

    async def list_objects(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: Mapping[str, str] | None = None,
        field_selector: Mapping[str, str] | None = None,
    ) -> list[KubeObject]:
        name = canonical_kind(kind)
        allowed = _FIELDS.get(name, frozenset()) | _COMMON_FIELDS
        for key in field_selector or {}:
            if key not in allowed:
                raise BackendError(
                    f'field label not supported: "{key}" for {name} '
                    f"(supported: {', '.join(sorted(allowed))})"
                )
        found = []
        for obj in self._by_kind.get(name, []):
            meta = obj.get("metadata") or {}
            if namespace and name not in CLUSTER_SCOPED and meta.get("namespace") != namespace:
                continue
            labels = meta.get("labels") or {}
            if any(labels.get(k) != v for k, v in (label_selector or {}).items()):
                continue
            if any(_path(obj, k) != v for k, v in (field_selector or {}).items()):
                continue
            found.append(_copy(obj))
        return found

    async def get_object(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        canonical = canonical_kind(kind)
        for obj in self._by_kind.get(canonical, []):
            meta = obj.get("metadata") or {}
            if meta.get("name") != name:
                continue
            if canonical in CLUSTER_SCOPED or meta.get("namespace") == namespace:
                return _copy(obj)
        return None

    async def pod_logs(
        self,
        namespace: str,
        pod: str,
        container: str | None = None,
        *,
        previous: bool = False,
        tail_lines: int | None = None,
        since: datetime | None = None,
    ) -> str:
        obj = await self.get_object("Pod", namespace, pod)
        containers = _container_names(obj) if obj else self._logged_containers(namespace, pod)
        if obj is None and not containers:
            raise BackendError(f'pods "{pod}" not found in namespace "{namespace}"')
        if container is None:
            if len(containers) != 1:
                raise BackendError(
                    f"a container name must be specified for pod {pod}, choose one of: "
                    f"[{' '.join(containers)}]"
                )
            container = containers[0]
        elif container not in containers:
            raise BackendError(f"container {container} is not valid for pod {pod}")
        file = self._scenario.pod_log_file(namespace, pod, container, previous=previous)
        text = self._read(file)
        if text is None:
            if previous:
                raise BackendError(
                    f'previous terminated container "{container}" in pod "{pod}" not found'
                )
            waiting = _waiting_reason(obj, container) if obj else None
            if waiting:
                raise BackendError(
                    f'container "{container}" in pod "{pod}" is waiting to start: {waiting}'
                )
            return ""
        lines = text.splitlines()
        if since is not None:
            lines = _lines_since(lines, since)
        if tail_lines is not None:
            lines = lines[-tail_lines:] if tail_lines > 0 else []
        return "\n".join(lines) + ("\n" if lines else "")

    def _read(self, file: Path) -> str | None:
        """A pod log file's text, read once (they are small and local)."""
        if file not in self._texts:
            self._texts[file] = file.read_text() if file.is_file() else None
        return self._texts[file]

    def _logged_containers(self, namespace: str, pod: str) -> list[str]:
        folder = self._scenario.path / "pod-logs" / namespace / pod
        if not folder.is_dir():
            return []
        return sorted({p.name.split(".")[0] for p in folder.glob("*.log")})


def _container_names(pod: KubeObject) -> list[str]:
    spec = pod.get("spec") or {}
    names = [c.get("name", "") for c in spec.get("containers") or []]
    return names + [c.get("name", "") for c in spec.get("initContainers") or []]


def _waiting_reason(pod: KubeObject, container: str) -> str | None:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            waiting = (status.get("state") or {}).get("waiting")
            if waiting is not None:
                return str(waiting.get("reason") or "ContainerCreating")
    return None


def _lines_since(lines: list[str], since: datetime) -> list[str]:
    """Lines logged at or after `since`, dated by their leading timestamp.

    The kubelet knows when each line was written; a recorded file only knows what the line
    says. A line without a timestamp takes the previous line's; a file without any is
    returned whole, since it cannot be cut honestly.
    """
    kept: list[str] = []
    current: datetime | None = None
    dated = False
    for line in lines:
        if match := _LEADING_TIME.match(line):
            try:
                current = parse_time(match.group(1).replace(" ", "T"))
                dated = True
            except ValueError:
                pass
        if current is None or current >= since:
            kept.append(line)
    return kept if dated else lines


class SandboxLogs:
    """A log store made of a scenario's `logs.ndjson`, with Elasticsearch's query semantics."""

    def __init__(self, scenario: Scenario) -> None:
        self.identity = sandbox_identity(scenario)
        self._records = scenario.log_records  # oldest first

    def _matching(self, query: LogQuery) -> list[LogRecord]:
        words = [w.lower() for w in _WORD.findall(query.text or "")]
        levels = {level.lower() for level in query.levels}
        found = []
        for record in self._records:
            if not query.start <= record.timestamp <= query.end:
                continue
            if levels and record.level.lower() not in levels:
                continue
            if query.service is not None and record.service != query.service:
                continue
            if query.namespace is not None and record.namespace != query.namespace:
                continue
            if query.pod is not None and record.pod != query.pod:
                continue
            if record.namespace in query.exclude_namespaces:
                continue
            if words and not set(words) <= _message_words(record.message):
                continue
            found.append(record)
        return found

    async def search(self, query: LogQuery, *, limit: int = 100) -> LogHits:
        found = self._matching(query)
        newest = list(reversed(found[-limit:])) if limit > 0 else []
        return LogHits(total=len(found), records=newest)

    async def count_over_time(
        self, query: LogQuery, *, interval_seconds: int
    ) -> list[tuple[datetime, int]]:
        if interval_seconds <= 0:
            raise BackendError("interval_seconds must be positive")
        step = timedelta(seconds=interval_seconds)
        epoch = datetime.fromtimestamp(0, query.start.tzinfo)
        first = epoch + step * ((query.start - epoch) // step)  # aligned like date_histogram
        counts: Counter[int] = Counter(
            (record.timestamp - first) // step for record in self._matching(query)
        )
        buckets = int((query.end - first) // step) + 1
        return [(first + step * i, counts.get(i, 0)) for i in range(buckets)]

    async def top_values(
        self, query: LogQuery, field: str, *, size: int = 10
    ) -> list[tuple[str, int]]:
        getter = _FIELD_GETTERS.get(field)
        counts: Counter[str] = Counter()
        for record in self._matching(query):
            value = getter(record) if getter else record.fields.get(field)
            if value not in (None, ""):
                counts[str(value)] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]


_FIELD_GETTERS: dict[str, Callable[[LogRecord], str]] = {
    "service": lambda r: r.service,
    "service.name": lambda r: r.service,
    "namespace": lambda r: r.namespace,
    "kubernetes.namespace": lambda r: r.namespace,
    "pod": lambda r: r.pod,
    "kubernetes.pod.name": lambda r: r.pod,
    "container": lambda r: r.container,
    "kubernetes.container.name": lambda r: r.container,
    "level": lambda r: r.level,
    "log.level": lambda r: r.level,
}


@lru_cache(maxsize=65536)
def _message_words(message: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(message))


class SandboxMetrics:
    """A metric store made of a scenario's `metrics.om`, with range-query semantics."""

    def __init__(self, scenario: Scenario) -> None:
        self.identity = sandbox_identity(scenario)
        self._by_name: dict[str, list[Series]] = {}
        self._types = scenario.metric_types
        for series in scenario.metric_series:
            self._by_name.setdefault(series.metric, []).append(series)
        # Investigations ask for the same windows over and over (every workload's signals
        # share the incident window): evaluating a series once per window saves most of
        # the CPU a step costs, which matters on the bot's event loop.
        self._evaluated: dict[tuple[int, datetime, datetime, timedelta], tuple[Sample, ...]] = {}

    async def series(
        self,
        metric: str,
        matchers: Mapping[str, str],
        start: datetime,
        end: datetime,
        *,
        step_seconds: int = 60,
    ) -> list[Series]:
        if step_seconds <= 0:
            raise BackendError("step_seconds must be positive")
        tests = [(label, label_matcher(value)) for label, value in matchers.items()]
        step = timedelta(seconds=step_seconds)
        found = []
        for series in self._by_name.get(metric, []):
            if all(test(series.labels.get(label, "")) for label, test in tests):
                key = (id(series), start, end, step)
                samples = self._evaluated.get(key)
                if samples is None:
                    samples = self._evaluated[key] = tuple(
                        evaluate_range(series.samples, start, end, step)
                    )
                if samples:
                    found.append(Series(series.metric, dict(series.labels), samples))
        return found

    def metric_names(self) -> list[str]:
        """Every metric name the scenario holds."""
        return sorted(self._by_name)

    async def metric_type(self, metric: str) -> str | None:
        """The type its family's `# TYPE` line declares."""
        return sample_type(metric, self._types)

    @property
    def promql(self) -> None:
        """None: a scenario is raw samples, there is no PromQL engine behind it."""
        return None


def sandbox_sources(scenario: Scenario) -> Sources:
    """The three sources over one scenario; a source whose files are absent is still served
    (and answers empty), because a scenario uses only the data its story needs."""
    return Sources(
        cluster=SandboxCluster(scenario),
        logs=SandboxLogs(scenario),
        metrics=SandboxMetrics(scenario),
        description=f"sandbox: scenario {scenario.id}",
    )
