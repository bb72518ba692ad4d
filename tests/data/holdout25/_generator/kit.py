"""Small helpers the stories of the twenty-fifth held-out set share: the ordinary cluster,
namespaced policy objects, and log lines spread over a stretch of time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tests.scenario_tools.common import (
    Story,
    kube_system,
    namespaces,
    node_conditions,
    nodes,
    noise_logs,
)
from tests.scenario_tools.kube import Obj

Entry = tuple[str, str, dict[str, Any]]


def base(s: Story, names: Sequence[str], count: int, *, subnet: int, region: str,
         instance: str = "m6i.xlarge") -> list[Obj]:
    """Namespaces, `count` nodes, CoreDNS and kube-proxy, and the nodes' Ready series."""
    namespaces(s, *names)
    node_list = nodes(s, count, subnet=subnet, region=region, instance=instance, days=5.5)
    kube_system(s, node_list)
    node_conditions(s, node_list)
    return node_list


def chatter(s: Story, pods: Sequence[Obj], container: str, service: str,
            entries: Sequence[Entry], count: int, *, start: datetime | None = None,
            end: datetime | None = None) -> None:
    """`count` log lines spread over the pods, between `start` and `end`."""
    for pod in pods:
        noise_logs(s, pod, container, service, entries, max(1, count // len(pods)),
                   start=start, end=end)


def namespaced(s: Story, api: str, kind: str, ns: str, name: str, created: datetime,
               spec: Obj, *, status: Obj | None = None, labels: dict[str, str] | None = None,
               annotations: dict[str, str] | None = None) -> Obj:
    """A namespaced object of a kind the library has no helper for."""
    extra: dict[str, Any] = {}
    if annotations:
        extra["annotations"] = dict(annotations)
    obj: Obj = {"apiVersion": api, "kind": kind,
                "metadata": s.cluster.meta(kind, name, ns, created, labels, **extra),
                "spec": spec}
    if status is not None:
        obj["status"] = status
    return s.cluster.add(obj)
