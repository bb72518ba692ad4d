"""What the observations say, as typed facts the detectors can score.

Tools return compact dicts (see tools/_k8s_*.py, logs.py, metrics.py); this module reads
them defensively (a missing key is "unknown", never a crash) into small dataclasses, each
remembering the observation it came from so evidence can be quoted from that very text.
The readers live in `readers.py`; this module holds the shapes and the container.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from engines.analyzer.transcript import Observation

T = TypeVar("T")
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
ROLLING = ("Deployment", "StatefulSet", "DaemonSet")
"""The workload kinds that roll pods out and keep them running."""


def parse_stamp(value: Any) -> datetime | None:
    """The first RFC 3339 time in a value such as "2026-11-30T09:58:00Z (2m ago)"."""
    if isinstance(value, datetime):
        return value
    if (match := _STAMP.search(str(value or ""))) is None:
        return None
    return datetime.fromisoformat(match.group(0).replace("Z", "+00:00"))


# Reading a tool's data defensively: a value of another shape is "nothing", never a crash.
def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def as_strs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value if not isinstance(v, dict)) if isinstance(
        value, list) else ()


def as_int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def ref_of(text: Any, namespace: str) -> Ref | None:
    """ "Deployment/checkout" (or the last hop of "Deployment/x → ReplicaSet/y") to a Ref."""
    first = str(text or "").split("→")[0].strip()
    kind, sep, name = first.partition("/")
    return Ref(kind, namespace, name) if sep and kind and name else None


@dataclass(frozen=True, slots=True)
class Ref:
    """A workload (or other object) by kind, namespace and name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else \
            f"{self.kind} {self.name}"

    # The arguments that name this object to the tools (a pod by its workload's name).
    @property
    def pod_args(self) -> dict[str, str]:
        return {"namespace": self.namespace, "pod": self.name}

    @property
    def workload_args(self) -> dict[str, str]:
        return {"namespace": self.namespace, "workload": self.name}

    @property
    def object_args(self) -> dict[str, str]:
        return {"namespace": self.namespace, "object_name": self.name}


@dataclass(slots=True)
class Workload:
    ref: Ref
    ready: int | None = None
    desired: int | None = None
    images: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    restarts: int = 0
    exit_reasons: dict[str, int] = field(default_factory=dict)
    unhealthy_pods: int = 0
    pod_total: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    age: str = ""  # as the tool says it ("3d"), for the text of a clue
    age_seconds: int | None = None  # the same age as a number, for comparing
    source: Observation | None = None


@dataclass(slots=True)
class Container:
    name: str
    image: str = ""
    limits: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    probes: dict[str, str] = field(default_factory=dict)
    ready: bool | None = None
    restarts: int = 0
    waiting: str = ""
    waiting_message: str = ""
    terminated: str = ""
    running_since: datetime | None = None
    last_reason: str = ""
    last_exit: int | None = None
    last_started: datetime | None = None
    last_finished: datetime | None = None
    last_message: str = ""
    init: bool = False
    ports: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # NAME=value of its literal environment (URLs of its callees)


@dataclass(slots=True)
class Event:
    namespace: str
    type: str
    reason: str
    kind: str
    name: str
    count: int
    last: datetime | None
    first: datetime | None
    message: str
    source: Observation | None = None


@dataclass(slots=True)
class Pod:
    namespace: str
    name: str
    status: str = ""
    ready: str = ""
    restarts: int = 0
    last_exit: str = ""
    node: str = ""
    owner: Ref | None = None
    message: str = ""
    ip: str = ""
    failing_conditions: tuple[str, ...] = ()
    containers: list[Container] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    described: Observation | None = None
    source: Observation | None = None


@dataclass(slots=True)
class Node:
    name: str
    ready: str = "True"
    problems: tuple[str, ...] = ()
    taints: tuple[str, ...] = ()
    source: Observation | None = None


@dataclass(slots=True)
class Revision:
    number: int
    current: bool
    created: datetime | None
    images: tuple[str, ...]
    ready: int | None = None
    desired: int | None = None
    restarts: int = 0
    exit_reasons: tuple[str, ...] = ()
    unhealthy: int = 0
    hash: str = ""  # a StatefulSet's or DaemonSet's revision (its pods' controller-revision-hash)

    @property
    def label(self) -> str:
        return self.hash or f"revision {self.number}"


@dataclass(slots=True)
class Rollout:
    """Revisions newest first. For a StatefulSet or DaemonSet a revision's `created` is when
    its first pod was created, `workload_created` the controller's own creation, and
    `replaced` how many pods the controller deleted itself (a rolling update)."""

    ref: Ref
    revisions: list[Revision]
    changes: tuple[str, ...] = ()
    source: Observation | None = None
    workload_created: datetime | None = None
    replaced: int = 0

    @property
    def current(self) -> Revision | None:
        return next((r for r in self.revisions if r.current), None)

    @property
    def previous(self) -> Revision | None:
        current = self.current
        older = (r for r in self.revisions if current and r.number < current.number)
        return max(older, key=lambda r: r.number, default=None)


@dataclass(slots=True)
class Service:
    namespace: str
    name: str
    selector: str = ""
    ready_pods: int | None = None
    endpoints_ready: int | None = None
    problems: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()
    cluster_ip: str = ""
    external_name: str = ""  # an ExternalName Service: the outside name it aliases
    source: Observation | None = None


@dataclass(slots=True)
class Policy:
    namespace: str
    name: str
    applies_to: str = ""
    workloads: tuple[str, ...] = ()  # "Deployment/name" of the pods it selects, when listed
    types: tuple[str, ...] = ()
    ingress: tuple[str, ...] = ()
    egress: tuple[str, ...] = ()
    created: datetime | None = None
    changed: datetime | None = None  # its last write after creation (managedFields)
    source: Observation | None = None


@dataclass(slots=True)
class Autoscaler:
    namespace: str
    name: str
    target: Ref | None
    maximum: int | None
    desired: int
    at_max: bool
    metrics: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    source: Observation | None = None
    scale_up: str = ""  # its behavior.scaleUp rate ("1 pod per 300s"), "" for the default


@dataclass(slots=True)
class QuotaItem:
    namespace: str
    quota: str
    resource: str
    used: str
    hard: str
    ratio: float | None
    source: Observation | None = None


@dataclass(slots=True)
class LogPattern:
    """A log template (store-wide patterns, or a pod's own log)."""

    template: str
    example: str
    count: int
    first: datetime | None = None
    last: datetime | None = None
    services: dict[str, int] = field(default_factory=dict)
    pods: dict[str, int] = field(default_factory=dict)
    levels: dict[str, int] = field(default_factory=dict)
    namespace: str = ""
    service: str = ""
    pod: str = ""
    previous: bool = False
    role: str = ""  # for a pod's own log: "exception", "first_error" or "" (any line)
    source: Observation | None = None

    @property
    def text(self) -> str:
        return f"{self.template} {self.example}"


@dataclass(slots=True)
class Signals:
    """metrics_workload_signals of one workload."""

    namespace: str
    workload: str
    abnormal: tuple[str, ...]
    signals: dict[str, dict[str, Any]]
    source: Observation | None = None

    def get(self, name: str) -> dict[str, Any]:
        value = self.signals.get(name)
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One series of a metrics_query answer: its distinguishing labels, summary and the
    shift of its level if it had one."""

    labels: dict[str, str]
    mean: float
    maximum: float
    last: float
    change_at: datetime | None = None
    before: float | None = None
    after: float | None = None
    source: Observation | None = None


@dataclass(slots=True)
class ObjectRead:
    """An object read whole (k8s_get_object): its creation time says what is new."""

    ref: Ref
    created: datetime | None
    source: Observation | None = None


@dataclass(slots=True)
class Facts:
    """Everything read so far, de-duplicated with the newest reading winning."""

    now: datetime
    workloads: dict[Ref, Workload] = field(default_factory=dict)
    pods: dict[tuple[str, str], Pod] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    rollouts: dict[Ref, Rollout] = field(default_factory=dict)
    services: dict[tuple[str, str], Service] = field(default_factory=dict)
    policies: dict[tuple[str, str], Policy] = field(default_factory=dict)
    autoscalers: dict[tuple[str, str], Autoscaler] = field(default_factory=dict)
    quotas: list[QuotaItem] = field(default_factory=list)
    patterns: list[LogPattern] = field(default_factory=list)
    signals: dict[Ref, Signals] = field(default_factory=dict)
    objects: dict[Ref, ObjectRead] = field(default_factory=dict)
    metric_rows: dict[str, list[MetricRow]] = field(default_factory=dict)
    """metrics_query answers by metric name (common labels merged into each row)."""
    ingress_hosts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Host an Ingress serves → (namespace, backend Service), from k8s_list_ingresses."""
    ingresses_read: bool = False
    namespaces_seen: set[str] = field(default_factory=set)
    observations: tuple[Observation, ...] = ()

    def drop_namespaces(self, excluded: frozenset[str]) -> None:
        """Forget the objects of excluded namespaces, even those read before the constraint
        came: the analyzer must not blame them."""
        self.workloads = {k: v for k, v in self.workloads.items() if k.namespace not in excluded}
        self.pods = {k: v for k, v in self.pods.items() if k[0] not in excluded}
        self.events = [e for e in self.events if e.namespace not in excluded]
        self.rollouts = {k: v for k, v in self.rollouts.items() if k.namespace not in excluded}
        self.services = {k: v for k, v in self.services.items() if k[0] not in excluded}
        self.policies = {k: v for k, v in self.policies.items() if k[0] not in excluded}
        self.autoscalers = {k: v for k, v in self.autoscalers.items() if k[0] not in excluded}
        self.quotas = [q for q in self.quotas if q.namespace not in excluded]
        self.patterns = [p for p in self.patterns if p.namespace not in excluded]
        self.signals = {k: v for k, v in self.signals.items() if k.namespace not in excluded}
        self.objects = {k: v for k, v in self.objects.items() if k.namespace not in excluded}
        self.namespaces_seen -= excluded

    def signals_of(self, ref: Ref) -> Signals | None:
        return _same_node(self.signals, ref)

    def rollout_of(self, ref: Ref) -> Rollout | None:
        return _same_node(self.rollouts, ref)

    def workload_of_pod(self, namespace: str, pod: str) -> Ref | None:
        known = self.pods.get((namespace, pod))
        if known is not None and known.owner is not None:
            return known.owner
        matches = [r for r in self.workloads if r.namespace == namespace and owns(r.name, pod)]
        return max(matches, key=lambda r: len(r.name)) if matches else None


def _same_node(found: dict[Ref, T], ref: Ref) -> T | None:
    """What is known of `ref`'s node whatever the kind it was read as (a Service and the
    workload of the same name are one node)."""
    return next((v for k, v in found.items() if (k.namespace, k.name) ==
                 (ref.namespace, ref.name)), None)


def owns(workload: str, name: str) -> bool:
    """Whether `name` looks generated from `workload` (pods, ReplicaSets, Jobs)."""
    if not name.startswith(workload + "-"):
        return False
    suffix = name[len(workload) + 1:]
    parts = suffix.split("-")
    return bool(suffix) and len(parts) <= 2 and all(p.isalnum() for p in parts) and any(
        any(c.isdigit() for c in p) or len(p) == 5 for p in parts)

