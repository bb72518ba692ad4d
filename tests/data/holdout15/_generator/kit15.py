"""Small helpers shared by the fifteenth held-out set: a generic CoreDNS, quiet neighbours,
and a Deployment rolled from one image to the next with the pods the rollout deleted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout2._generator.kit import (
    Incident,
    cpu_seconds,
    deploy,
    requests,
    working_set,
)
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    log_pod,
    namespaces,
    quiet,
    rolling_events,
    steady,
)
from tests.scenario_tools.common import MIB, Story
from tests.scenario_tools.kube import Ctr, Obj, Workload, http_probe, iso

__all__ = ["Incident", "chatter", "namespaces", "quiet", "steady"]

Entries = Sequence[tuple[str, str, dict[str, Any]]]


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def coredns(s: Story, nodes: Sequence[Obj], image: str) -> list[Obj]:
    ctr = Ctr("coredns", image, port=53, port_name="dns",
              requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
              readiness=http_probe("/ready", 8181), liveness=http_probe("/health", 8080,
                                                                       delay=60),
              args=["-conf", "/etc/coredns/Corefile"])
    _, pods = steady(s, "kube-system", "coredns", [ctr], nodes=nodes, replicas=2, revision=3,
                     rollout=s.ago(days=6, hours=5), service=None,
                     labels={"k8s-app": "kube-dns", "app": "coredns"}, sa="coredns")
    quiet(s, pods, "coredns", 24)
    return pods


def neighbour(s: Story, ns: str, name: str, image: str, nodes: Sequence[Obj], *,
              replicas: int, revision: int, rollout: datetime, mib: float,
              cpu: float = 0.05, rps: float = 0.0, codes: dict[str, float] | None = None,
              logs: Entries = (), n_logs: int = 40,
              restarted: dict[int, tuple[datetime, str, int]] | None = None,
              limits: dict[str, str] | None = None, port: int = 8080,
              env: dict[str, str] | None = None, offset: int = 0,
              reqs: dict[str, str] | None = None) -> tuple[Workload, list[Obj]]:
    """A healthy Deployment with its working set, CPU, request counters and ordinary logs."""
    ctr = Ctr(name, image, port=port,
              requests=reqs or {"cpu": "100m", "memory": f"{int(mib * 1.4)}Mi"},
              limits=limits or {"memory": f"{int(mib * 2.5)}Mi"}, env=env or {},
              readiness=http_probe("/healthz", delay=5),
              liveness=http_probe("/healthz", delay=20, period=20))
    work, pods = steady(s, ns, name, [ctr], nodes=nodes, replicas=replicas, revision=revision,
                        rollout=rollout, restarted=restarted, offset=offset)
    quiet(s, pods, name, mib)
    for pod in pods:
        cpu_seconds(s, pod, name, lambda t: cpu * s.rng.uniform(0.8, 1.2))
        if rps:
            requests(s, pod, name, rps=lambda t: rps / replicas,
                     codes={k: (lambda t, v=v: v) for k, v in (codes or {"200": 1.0}).items()})
    if logs:
        chatter(s, pods, name, name, logs, n_logs, start=s.ago(hours=s.hours))
    return work, pods


def rolled(s: Story, ns: str, name: str, make: Callable[[str], Ctr], nodes: Sequence[Obj], *,
           old: str, new: str, at: datetime, revision: int, replicas: int, mib: float,
           cpu: float = 0.05, old_since: datetime | None = None,
           logs_old: Entries = (), logs_new: Entries = (), n_logs: int = 40,
           rps: float = 0.0, size: int = 61_482_113) -> tuple[Workload, list[Obj]]:
    """A Deployment rolled out from image tag `old` to `new` at `at`: the new pods in the
    cluster, the old ones only in metrics and logs; the controller's events if within
    the hour."""
    since = old_since or at - timedelta(days=s.rng.uniform(4, 9))
    new_ctr = make(new)

    def born(i: int) -> datetime:
        return at + timedelta(seconds=1 + 38 * i + s.rng.randrange(0, 4))

    work, pods = deploy(s, ns, name, [new_ctr], replicas=replicas, nodes=nodes,
                        revision=revision, rollout=at, born=born,
                        old=(revision - 1, since, [make(old)]))
    old_rs, new_rs = work.revisions[0], work.revisions[-1]
    gone = [born(i) + timedelta(seconds=31) for i in range(replicas)]
    olds = ghosts(s, old_rs, nodes, [since + timedelta(seconds=20 * i + 7)
                                     for i in range(replicas)], gone)
    if at >= s.now - timedelta(minutes=58):
        rolling_events(s, work, old_rs, new_rs, pods, olds, image=new_ctr.image, size=size,
                       pull=lambda i: 2.1 + 0.4 * i)
    for pod in [*olds, *pods]:
        base = mib * MIB * s.rng.uniform(0.9, 1.1)
        working_set(s, pod, name, lambda t, b=base: b)
        cpu_seconds(s, pod, name, lambda t: cpu * s.rng.uniform(0.8, 1.2))
        if rps:
            requests(s, pod, name, rps=lambda t: rps / replicas,
                     codes={"200": lambda t: 0.998, "500": lambda t: 0.002})
    for pod in olds:
        if logs_old:
            log_pod(s, pod, name, name, logs_old, n_logs // replicas)
    for pod in pods:
        if logs_new:
            log_pod(s, pod, name, name, logs_new, n_logs // replicas)
    return work, pods


def network_policy(s: Story, ns: str, name: str, spec: Obj, *, created: datetime,
                   labels: dict[str, str] | None = None,
                   annotations: dict[str, str] | None = None) -> Obj:
    c = s.cluster
    meta = c.meta("NetworkPolicy", name, ns, created, labels, generation=1)
    if annotations:
        meta["annotations"] = dict(annotations)
    return c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                  "metadata": meta, "spec": spec})


def stamp(when: datetime) -> str:
    return iso(when)
