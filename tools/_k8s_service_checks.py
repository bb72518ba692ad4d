"""What is wrong with a Service's spec against the pods it selects, in so many words: a
targetPort the pods do not open (or open with another protocol), a selector that also takes
in another workload's portless pods, not-ready pods published behind a cluster IP. Shared by
k8s_list_services and k8s_service_endpoints."""

from __future__ import annotations

from typing import Any

from tools._k8s_common import Owners
from tools.sources.base import KubeObject


def unready_published(service: KubeObject) -> list[str]:
    """publishNotReadyAddresses on a Service with a cluster IP: meant for the peer discovery
    of a headless Service, it keeps starting and terminating pods in the load-balanced
    endpoints, so every rollout's pods refuse a share of the connections."""
    spec = service.get("spec") or {}
    if not spec.get("publishNotReadyAddresses") or spec.get("clusterIP") == "None":
        return []
    return [f"publishNotReadyAddresses: true on a {spec.get('type', 'ClusterIP')} Service: pods "
            "still starting or already terminating stay in its endpoints and refuse "
            "connections"]


def port_problems(ports: list[dict[str, Any]], pods: list[KubeObject]) -> list[str]:
    """targetPorts that no matched pod's containers declare, or declare with another protocol;
    only when pods declare ports."""
    numbers: set[int] = set()
    names: set[str] = set()
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            for port in container.get("ports") or []:
                numbers.add(int(port.get("containerPort", 0)))
                if port.get("name"):
                    names.add(str(port["name"]))
    if not numbers:
        return []
    problems = protocol_mismatches(ports, pods)
    for port in ports:
        target = port.get("targetPort", port.get("port"))
        if target is None:
            continue
        if isinstance(target, int) or str(target).isdigit():
            if int(target) not in numbers:
                problems.append(f"targetPort {target} is not a port the pods expose "
                                f"({', '.join(map(str, sorted(numbers)))})")
        elif target not in names:
            problems.append(f"named targetPort {target!r} is not a port name of the pods "
                            f"({', '.join(sorted(names)) or 'none named'})")
    return problems


def protocol_mismatches(ports: list[dict[str, Any]], pods: list[KubeObject]) -> list[str]:
    """Service ports whose protocol is not the one the pods declare for the port they target:
    a port typed UDP in front of a TCP server forwards nothing its TCP clients send."""
    declared: dict[str, set[str]] = {}  # containerPort number or name → its protocols
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            for port in container.get("ports") or []:
                for key in (port.get("containerPort"), port.get("name")):
                    if key:
                        declared.setdefault(str(key), set()).add(str(port.get("protocol")
                                                                     or "TCP"))
    problems = []
    for port in ports:
        target = str(port.get("targetPort", port.get("port")))
        protocol = str(port.get("protocol") or "TCP")
        if target in declared and protocol not in declared[target]:
            problems.append(f"port {port.get('port')} is {protocol} but the pods' port {target} "
                            f"is {'/'.join(sorted(declared[target]))}: its clients reach "
                            "nothing")
    return problems


def _declared(pod: KubeObject) -> set[str]:
    """The ports a pod's containers declare, by number and by name."""
    return {str(value) for container in (pod.get("spec") or {}).get("containers") or []
            for port in container.get("ports") or []
            for value in (port.get("containerPort"), port.get("name")) if value}


def stray_workloads(ports: list[dict[str, Any]], pods: list[KubeObject],
                    owners: Owners) -> list[str]:
    """A selector that also takes in another workload's pods which lack the port the others
    serve on (a worker whose labels are a superset of the selector): a share of the
    connections goes to pods where nothing listens. A canary that serves the same port is
    not a stray."""
    by_workload: dict[str, list[KubeObject]] = {}
    for pod in pods:
        by_workload.setdefault(owners.workload(pod)[1], []).append(pod)
    if len(by_workload) < 2:
        return []
    problems = []
    for port in ports:
        target = str(port.get("targetPort", port.get("port")))
        serving = [w for w, group in by_workload.items()
                   if any(target in _declared(p) for p in group)]
        strays = sorted(w for w in by_workload if w not in serving)
        if serving and strays:
            problems.append(
                f"selector also matches {', '.join(strays)} "
                f"({sum(len(by_workload[w]) for w in strays)} of {len(pods)} pods), which do "
                f"not open port {target}: connections sent there are refused")
    return problems


TOPOLOGY_KEYS = ("service.kubernetes.io/topology-mode",
                 "service.kubernetes.io/topology-aware-hints")


def topology_routing(service: KubeObject) -> str:
    """How the Service keeps traffic in the caller's zone ("topology-mode: Auto",
    "trafficDistribution: PreferClose"), "" when it does not."""
    annotations = (service.get("metadata") or {}).get("annotations") or {}
    for key in TOPOLOGY_KEYS:
        if str(annotations.get(key, "")).lower() not in ("", "disabled", "false"):
            return f"{key}: {annotations[key]}"
    distribution = (service.get("spec") or {}).get("trafficDistribution")
    return f"trafficDistribution: {distribution}" if distribution else ""


def zone_skew(service: KubeObject, ready: list[KubeObject], zones: dict[str, str]) -> list[str]:
    """Topology-aware routing over ready pods spread unevenly across zones: each zone's
    callers reach only that zone's pods, so a zone left with one pod (after a reschedule,
    with no zone spread constraint) sends all its callers to it while the others idle."""
    routing = topology_routing(service)
    if not routing or not zones:
        return []
    per_zone = dict.fromkeys(sorted(set(zones.values()) - {""}), 0)
    for pod in ready:
        zone = zones.get(str((pod.get("spec") or {}).get("nodeName")), "")
        if zone in per_zone:
            per_zone[zone] += 1
    served = {zone: count for zone, count in per_zone.items() if count}
    if len(served) < 2:
        return []
    fewest = min(served, key=lambda zone: (served[zone], zone))
    if served[fewest] * 2 > max(served.values()):
        return []
    spread = ", ".join(f"{zone} {count}" for zone, count in served.items())
    return [f"topology-aware routing ({routing}) keeps each zone's callers on that zone's "
            f"ready pods, which are uneven ({spread}): the {served[fewest]} pod(s) in "
            f"{fewest} take all of that zone's traffic"]
