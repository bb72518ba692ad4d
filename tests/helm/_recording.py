"""Run cluster tools over a scenario and record every Kubernetes permission they use.

`RecordingCluster` wraps any ClusterSource and notes, for each call, the (API group,
resource, verb) the live API server would check, as `tools.sources.kube_api` declares it.
`argument_sets` makes plausible arguments for a tool from its JSON schema and the
scenario's objects: every enum value, both booleans, each namespace, and real pod, node and
workload names (every declared kind for a tool that takes any kind), so that each code path
of a tool that reads the cluster is reached.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from tools.registry import Tool
from tools.sources.base import ClusterSource, KubeObject, LogHits, LogQuery, Series
from tools.sources.kube_api import RESOURCES, Permission, permission_for, resource_for

# Calls per tool and scenario at least; the scenarios share out the argument sets between
# them (see `window`), so that together they try every set while each stays fast.
CALLS_PER_TURN = 4
PER_KIND = 2  # objects of each kind tried as a tool's subject (1 for a tool taking any kind)
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")
T = TypeVar("T")
_DURATIONS = ("since", "window", "duration", "last", "range", "lookback")
_TEXTS = ("query", "text", "pattern", "search", "grep", "contains")


@dataclass
class RecordingCluster:
    """A ClusterSource that forwards every call and records the permission it needs."""

    inner: ClusterSource
    seen: Counter[Permission] = field(default_factory=Counter)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, kind)

    def _note(self, method: str, kind: str) -> None:
        self.calls.append((method, kind))
        self.seen[permission_for(method, kind)] += 1

    async def list_objects(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: Mapping[str, str] | None = None,
        field_selector: Mapping[str, str] | None = None,
    ) -> list[KubeObject]:
        self._note("list_objects", kind)
        return await self.inner.list_objects(
            kind, namespace, label_selector=label_selector, field_selector=field_selector
        )

    async def get_object(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        self._note("get_object", kind)
        return await self.inner.get_object(kind, namespace, name)

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
        self._note("pod_logs", "Pod")
        return await self.inner.pod_logs(
            namespace, pod, container, previous=previous, tail_lines=tail_lines, since=since
        )


class EmptyLogs:
    """A log store with nothing in it: lets log tools run without paying for a scenario's."""

    async def search(self, query: LogQuery, *, limit: int = 100) -> LogHits:
        return LogHits(total=0, records=[])

    async def count_over_time(
        self, query: LogQuery, *, interval_seconds: int
    ) -> list[tuple[datetime, int]]:
        return []

    async def top_values(self, query: LogQuery, field: str, *, size: int = 10) -> list[
        tuple[str, int]
    ]:
        return []


class EmptyMetrics:
    """A metric store with no series: metric tools still look their workload up first."""

    async def series(
        self,
        metric: str,
        matchers: Mapping[str, str],
        start: datetime,
        end: datetime,
        *,
        step_seconds: int = 60,
    ) -> list[Series]:
        return []


@dataclass(frozen=True)
class Subject:
    """An object a tool can be pointed at."""

    kind: str
    namespace: str
    name: str
    obj: KubeObject


def index(objects: list[KubeObject]) -> dict[str, list[Subject]]:
    """Scenario objects by canonical kind (Events left out: no tool is pointed at one)."""
    found: dict[str, list[Subject]] = defaultdict(list)
    for obj in objects:
        kind = resource_for(str(obj.get("kind", ""))).kind
        meta = obj.get("metadata") or {}
        if kind != "Event":
            found[kind].append(Subject(kind, meta.get("namespace", ""), meta.get("name", ""), obj))
    return found


def _options(schema: Mapping[str, Any]) -> tuple[set[str], list[Any]]:
    """The JSON types a property accepts and its enum values (through anyOf)."""
    types: set[str] = set()
    enum: list[Any] = []
    for branch in [schema, *schema.get("anyOf", [])]:
        kind = branch.get("type")
        types.update(kind if isinstance(kind, list) else [kind] if kind else [])
        enum += [v for v in branch.get("enum", []) if v not in enum]
    return types, enum


def _subject_kinds(properties: Mapping[str, Any], objects: dict[str, list[Subject]]) -> list[str]:
    """Kinds of object the tool can be pointed at; a free-text `kind` means any declared kind."""
    if "pod" in properties:
        return ["Pod"]
    if "kind" in properties:
        _, enum = _options(properties["kind"])
        return [k for k in enum if isinstance(k, str)] or [r.kind for r in RESOURCES]
    if "workload" in properties:
        return list(WORKLOAD_KINDS)
    if "service" in properties:
        return ["Service"]
    if "name" in properties:
        return [k for k in objects if k != "Namespace"]
    if "node" in properties and "node" in _required(properties):
        return ["Node"]
    return []


def _subjects(kind: str, objects: dict[str, list[Subject]], free_kind: bool) -> list[Subject]:
    """Up to PER_KIND objects of a kind; for a tool that takes any kind, an absent one too, so
    that asking for a kind the scenario lacks is exercised (the request is what matters)."""
    found = objects.get(kind, [])[: 1 if free_kind else PER_KIND]
    if not found and free_kind:
        namespaced = resource_for(kind).namespaced
        namespace = next((s.name for s in objects.get("Namespace", [])), "default")
        found = [Subject(kind, namespace if namespaced else "", "absent", {})]
    return found


def _required(properties: Mapping[str, Any]) -> set[str]:
    return {k for k, v in properties.items() if "default" not in v}


def _fill(properties: Mapping[str, Any], subject: Subject | None) -> dict[str, Any]:
    """Arguments that point the tool at `subject`; the rest required-only, with safe values."""
    arguments: dict[str, Any] = {}
    for name, schema in properties.items():
        types, enum = _options(schema)
        value: Any = None
        if subject is not None:
            spec = subject.obj.get("spec") or {}
            containers = [c.get("name") for c in spec.get("containers") or []]
            value = {
                "namespace": subject.namespace or None,
                "pod": subject.name if subject.kind == "Pod" else None,
                "node": subject.name if subject.kind == "Node" else spec.get("nodeName"),
                "name": subject.name,
                "workload": subject.name,
                "service": subject.name if subject.kind == "Service" else None,
                "kind": subject.kind if not enum or subject.kind in enum else None,
                "container": containers[0] if containers else None,
            }.get(name)
        if value is None and "default" not in schema:  # required, and not about the subject
            if enum:
                value = enum[0]
            elif "boolean" in types:
                value = False
            elif "integer" in types or "number" in types:
                value = schema.get("minimum", 1)
            elif any(word in name for word in _DURATIONS):
                value = "2h"
            elif any(word in name for word in _TEXTS):
                value = "error"
            elif "array" in types:
                value = []
            else:
                value = ""
        if value is not None:
            arguments[name] = value
    return arguments


def argument_sets(tool: Tool, objects: dict[str, list[Subject]]) -> list[dict[str, Any]]:
    """Distinct argument sets for one tool over one scenario: one per subject (a tool that
    takes any kind gets every kind), one per namespace, one per option of each flag."""
    properties: Mapping[str, Any] = tool.parameters.get("properties", {})
    subjects: list[Subject | None] = [None]
    free_kind = "kind" in properties and not _options(properties["kind"])[1]
    for kind in _subject_kinds(properties, objects):
        subjects += _subjects(kind, objects, free_kind)
    namespaces = sorted({s.name for s in objects.get("Namespace", [])})
    bases = [_fill(properties, subject) for subject in subjects]
    flags = []  # each option of each optional enum or boolean argument
    for name, schema in properties.items():
        if "default" in schema:
            types, enum = _options(schema)
            for value in [*enum, *([True, False] if "boolean" in types else [])]:
                if value != schema.get("default"):
                    flags.append((name, value))
    candidates = list(bases)
    if "namespace" in properties:
        candidates += [_fill(properties, None) | {"namespace": ns} for ns in namespaces]
    candidates += [bases[i % len(bases)] | {name: value} for i, (name, value) in enumerate(flags)]
    unique: dict[str, dict[str, Any]] = {}
    for arguments in candidates:
        unique.setdefault(json.dumps(arguments, sort_keys=True, default=str), arguments)
    return list(unique.values())


def window(items: list[T], turn: int, turns: int, least: int = CALLS_PER_TURN) -> list[T]:
    """The `turn`-th of `turns` slices of `items`, cyclic, so that all turns together cover
    every item at least once while each turn stays small."""
    if not items:
        return []
    size = min(len(items), max(least, -(-len(items) // turns)))
    start = (turn * size) % len(items)
    return [items[(start + i) % len(items)] for i in range(size)]
