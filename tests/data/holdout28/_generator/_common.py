"""Shared pieces of the scenarios: three worker nodes, a healthy app with its Service, and
the background chatter of healthy services in the log store."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from . import _k8s as k
from ._out import Scenario
from ._workloads import Revision, deployment, pod_name

NODES = (
    "ip-10-0-1-23.eu-west-1.compute.internal",
    "ip-10-0-2-57.eu-west-1.compute.internal",
    "ip-10-0-3-88.eu-west-1.compute.internal",
)
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")


def nodes(sc: Scenario) -> None:
    for i, name in enumerate(NODES):
        sc.add(k.node(name, sc.now - timedelta(days=19 + i), sc.now, zone=ZONES[i]))


def ip(sc: Scenario, subnet: int | None = None) -> str:
    subnet = subnet if subnet is not None else sc.rng.randint(1, 3)
    return f"10.0.{subnet}.{sc.rng.randint(20, 250)}"


def app(
    sc: Scenario,
    name: str,
    ns: str,
    image: str,
    *,
    replicas: int = 2,
    port: int = 8080,
    age_days: float = 5,
    resources: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    service: bool = True,
    history: int = 2,
    containers: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
) -> tuple[list[str], Revision]:
    """A healthy Deployment with `history` revisions (the last current), its pods, Service
    and Endpoints. Returns the pod names and the current revision."""
    base_labels = labels or {"app": name}
    res = resources or k.res("100m", "256Mi", mem_lim="512Mi")
    revisions = []
    for n in range(history):
        tag = image.rsplit(":", 1)
        older = f"{tag[0]}:{tag[1]}" if n == history - 1 else f"{tag[0]}:{tag[1]}-prev{n}"
        main = k.container(
            name,
            older,
            port=port,
            resources=res,
            readiness=k.http_probe("/healthz", port),
            liveness=k.http_probe("/healthz", port, delay=15, period=20),
        )
        chosen = [dict(c) for c in containers] if containers else [main]
        if containers and n != history - 1:
            chosen = [dict(c, image=f"{c['image']}-prev{n}") for c in chosen]
        tmpl = k.template(base_labels, chosen, volumes=volumes)
        created = sc.now - timedelta(days=age_days - n * age_days / (history + 1))
        revisions.append(Revision(tmpl, created, replicas if n == history - 1 else 0))
    dep, rss = deployment(
        name, ns, base_labels, revisions, created=sc.now - timedelta(days=age_days + 30), now=sc.now
    )
    sc.add(dep, rss)
    current = revisions[-1]
    pods = []
    for i in range(replicas):
        pname = pod_name(current, i)
        started = current.created + timedelta(seconds=20 + i * 7)
        tmpl = current.template
        statuses = [
            k.running(c["name"], started + timedelta(seconds=3), image=c["image"])
            for c in tmpl["spec"]["containers"]
        ]
        p = k.pod(
            pname,
            ns,
            tmpl,
            owner=("ReplicaSet", current.name),
            created=started,
            node=NODES[i % 3],
            ip=ip(sc, i % 3 + 1),
            statuses=statuses,
            extra_labels={"pod-template-hash": current.hash},
        )
        sc.add(p)
        pods.append(p)
    if service:
        sc.add(
            k.service(
                name,
                ns,
                base_labels,
                [("http", 80, port)],
                cluster_ip=f"172.20.{sc.rng.randint(1, 250)}.{sc.rng.randint(2, 250)}",
                created=sc.now - timedelta(days=age_days + 30),
            )
        )
        sc.add(
            k.endpoints(
                name, ns, pods, [("http", port)], created=sc.now - timedelta(days=age_days + 30)
            )
        )
    return [p["metadata"]["name"] for p in pods], current


def chatter(
    sc: Scenario,
    service: str,
    ns: str,
    pods: list[str],
    start: datetime,
    messages: list[str],
    gap: float = 20.0,
    level: str = "info",
) -> None:
    """Routine log lines of a healthy service."""
    for moment in sc.every(start, sc.now, gap):
        sc.doc(moment, service, ns, sc.rng.choice(pods), level, sc.rng.choice(messages))


def access(
    sc: Scenario,
    service: str,
    ns: str,
    pods: list[str],
    start: datetime,
    routes: list[str],
    gap: float = 6.0,
    ms: tuple[int, int] = (4, 60),
) -> None:
    """Access-log lines of a healthy HTTP service."""
    for moment in sc.every(start, sc.now, gap):
        route = sc.rng.choice(routes)
        took = sc.rng.randint(*ms)
        sc.doc(
            moment,
            service,
            ns,
            sc.rng.choice(pods),
            "info",
            f"{route} 200 {took}ms",
            http__response__status_code=200,
            event__duration=took * 1_000_000,
        )


def restarts_counter(
    sc: Scenario, ns: str, pod: str, container: str, times: list[float], moments: list[float]
) -> None:
    """kube-state-metrics' restart count of one container, rising at each of `moments`."""
    points = [(t, float(sum(1 for m in moments if m <= t))) for t in times]
    sc.counter(
        "kube_pod_container_status_restarts_total",
        "The number of container restarts per container.",
        {"namespace": ns, "pod": pod, "container": container},
        points,
    )


def backoff_moments(first: float, until: float, cap: int = 300) -> list[float]:
    """Restart moments of a container in CrashLoopBackOff: 10s, 20s, 40s... up to 5m."""
    out, t, back = [], first, 10
    while t <= until:
        out.append(t)
        t += back + 1
        back = min(back * 2, cap)
    return out


def ms(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
