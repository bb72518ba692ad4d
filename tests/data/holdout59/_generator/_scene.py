"""Shared kit for the holdout59 generators, part three: the Scene that one scenario builds.

A Scene owns the clock, the Cluster, the log and metric collectors and a seeded random
generator, and offers the few shapes every story needs: periodic container chatter,
HTTP request metrics, cAdvisor usage, restart counters and a Pending pod elsewhere.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ._base import Clock, Obj, PodRef, iso, uid
from ._kit import Cluster
from ._signals import Logs, Metrics, PodLogs, write_scenario

Line = tuple[str, str, dict[str, Any]]
"""A log line: level, message, extra ECS fields (``__`` in a key becomes ``.``)."""

NODE_ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
SPARSE = 2.5


class Scene:
    """Everything one scenario writes."""

    def __init__(self, sid: str, now: str, seed: int, window_min: int = 180,
                 step_s: int = 60) -> None:
        self.sid = sid
        self.clock = Clock(now)
        self.cluster = Cluster(self.clock)
        self.logs = Logs()
        self.metrics = Metrics()
        self.pod_logs = PodLogs()
        self.rng = random.Random(seed)
        self.times = self.clock.grid(window_min, step_s)

    def ago(self, minutes: float) -> datetime:
        """The time ``minutes`` before now."""
        return self.clock.ago(minutes)

    def nodes(self, names: Sequence[str], *, itype: str = "m6i.2xlarge", cpu: str = "8",
              memory: str = "32386052Ki", pool: str = "general-v3") -> None:
        """Worker nodes spread over three zones, created weeks ago."""
        for i, name in enumerate(names):
            parts = name.split(".")
            region = parts[1] if len(parts) > 2 and parts[1] != "ec2" else ""
            zone = f"{region}{'abc'[i % 3]}" if region else NODE_ZONES[i % 3]
            self.cluster.node(name, self.ago(60 * 24 * (41 - 3 * i)), zone=zone,
                              itype=itype, cpu=cpu, memory=memory, pool=pool)

    def namespaces(self, *names: str) -> None:
        """Namespaces created long ago."""
        for i, name in enumerate(names):
            self.cluster.namespace(name, self.ago(60 * 24 * (300 - 7 * i)))

    def chatter(self, ref: PodRef, make: Callable[[datetime], Line | None], *,
                every_s: float, minutes: float, until: float = 0.0, jitter: float = 0.4) -> None:
        """Log lines from a container about every ``every_s`` seconds over a window.

        The spacing is stretched by ``SPARSE`` to keep the scenario files small.
        """
        every_s *= SPARSE
        t = self.ago(minutes) + timedelta(seconds=self.rng.uniform(0, every_s))
        end = self.ago(until)
        while t < end:
            line = make(t)
            if line is not None:
                level, msg, extra = line
                self.logs.add(t, ref, level, msg, **extra)
            t += timedelta(seconds=every_s * self.rng.uniform(1 - jitter, 1 + jitter))

    def pick(self, items: Sequence[Any]) -> Any:
        """A random element."""
        return items[self.rng.randrange(len(items))]

    def trace(self) -> str:
        """A random 32-hex trace id."""
        return f"{self.rng.getrandbits(128):032x}"

    def http(self, ref: PodRef, route: str, rate: Callable[[datetime], float],
             errors: Callable[[datetime], float], median: Callable[[datetime], float], *,
             method: str = "GET", code: str = "503", since: datetime | None = None,
             until: datetime | None = None) -> None:
        """http_requests_total by code and a latency histogram for one pod and route."""
        lab = {"namespace": ref.ns, "pod": ref.pod, "service": ref.service,
               "method": method, "route": route}
        times = [t for t in self.times if (since is None or t >= since)
                 and (until is None or t <= until)]
        self.metrics.counter("http_requests", "Total HTTP requests served.",
                             {**lab, "code": "200"}, times,
                             lambda t: rate(t) * (1 - errors(t)))
        self.metrics.counter("http_requests", "Total HTTP requests served.",
                             {**lab, "code": code}, times, lambda t: rate(t) * errors(t))
        self.metrics.histogram("http_request_duration_seconds",
                               "HTTP request latency in seconds.", lab, times, rate, median)

    def usage(self, ref: PodRef, cpu: float | Callable[[datetime], float],
              mem: float | Callable[[datetime], float], *, cpu_limit: float | None = None,
              throttle: Callable[[datetime], float] | None = None,
              since: datetime | None = None, until: datetime | None = None) -> None:
        """cAdvisor CPU/memory (and CFS) series while the container ran (since..until)."""

        def alive(t: datetime) -> bool:
            return (since is None or t >= since) and (until is None or t <= until)

        def _cpu(t: datetime) -> float | None:
            if not alive(t):
                return None
            base = cpu(t) if callable(cpu) else cpu
            return max(0.001, base * self.rng.uniform(0.9, 1.1))

        def _mem(t: datetime) -> float | None:
            if not alive(t):
                return None
            base = mem(t) if callable(mem) else mem
            return round(base * self.rng.uniform(0.985, 1.015))

        self.metrics.container(ref, self.times, cpu=_cpu, mem=_mem, cpu_limit=cpu_limit,
                               throttle=throttle)

    def restarts(self, ref: PodRef, fn: Callable[[datetime], int],
                 since: datetime | None = None) -> None:
        """kube_pod_container_status_restarts_total for one container."""
        lab = {"namespace": ref.ns, "pod": ref.pod, "container": ref.container}
        for t in self.times:
            if since is None or t >= since:
                self.metrics.put("kube_pod_container_status_restarts", "counter",
                                 "The number of container restarts per container.",
                                 "kube_pod_container_status_restarts_total", lab, t, fn(t))

    def gauge(self, name: str, help_: str, labels: dict[str, str],
              fn: Callable[[datetime], float | None]) -> None:
        """Any gauge over the scene's metric window."""
        self.metrics.gauge(name, help_, labels, self.times, fn)

    def counter(self, name: str, help_: str, labels: dict[str, str],
                rate: Callable[[datetime], float | None], start: float = 0.0) -> None:
        """Any counter (``name`` without ``_total``) over the scene's metric window."""
        self.metrics.counter(name, help_, labels, self.times, rate, start)

    def pending_pod(self, ns: str, name: str, owner: str, image: str, *, cpu: str, memory: str,
                    message: str, since: datetime, node_selector: dict[str, str] | None = None
                    ) -> None:
        """A Pending pod owned by a Job/ReplicaSet elsewhere, with its FailedScheduling event."""
        spec: Obj = {"containers": [{"name": owner, "image": image,
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                     "restartPolicy": "Never", "schedulerName": "default-scheduler"}
        if node_selector:
            spec["nodeSelector"] = node_selector
        job = name.rsplit("-", 1)[0]
        self.cluster.add({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job, "namespace": ns, "uid": uid("job", ns, name),
                         "creationTimestamp": iso(since),
                         "labels": {"app.kubernetes.io/name": owner}},
            "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1,
                     "template": {"metadata": {"labels": {"app.kubernetes.io/name": owner}},
                                  "spec": spec}},
            "status": {"active": 1, "ready": 0, "startTime": iso(since)},
        })
        self.cluster.add({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": uid("pod", ns, name),
                         "creationTimestamp": iso(since),
                         "labels": {"app.kubernetes.io/name": owner},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                              "name": job,
                                              "uid": uid("job", ns, name), "controller": True}]},
            "spec": spec,
            "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": message, "lastTransitionTime": iso(since)}]},
        })
        first = max(since, self.ago(58))
        self.cluster.event(ns, "Pod", name, "FailedScheduling", message, first=first,
                           last=self.ago(2), count=int((self.ago(2) - first).seconds / 300) + 1,
                           type_="Warning", component="default-scheduler")

    def hpa(self, ns: str, target: str, *, lo: int, hi: int, current: int, cpu_target: int,
            cpu_now: int, kind: str = "Deployment") -> None:
        """An autoscaling/v2 HorizontalPodAutoscaler on CPU utilisation."""
        self.cluster.add({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": target, "namespace": ns, "uid": uid("hpa", ns, target),
                         "creationTimestamp": iso(self.ago(60 * 24 * 180))},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
                     "minReplicas": lo, "maxReplicas": hi,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": cpu_target}}}]},
            "status": {"currentReplicas": current, "desiredReplicas": current,
                       "currentMetrics": [{"type": "Resource", "resource": {
                           "name": "cpu", "current": {"averageUtilization": cpu_now}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size",
                            "lastTransitionTime": iso(self.ago(300))},
                           {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica "
                            "count from cpu resource utilization (percentage of request)",
                            "lastTransitionTime": iso(self.ago(3000))},
                           {"type": "ScalingLimited", "status": "False",
                            "reason": "DesiredWithinRange",
                            "message": "the desired count is within the acceptable range",
                            "lastTransitionTime": iso(self.ago(400))}]},
        })

    def find(self, kind: str, ns: str, name: str) -> Obj:
        """An object already added (the first whose name starts with ``name``)."""
        for obj in self.cluster.objects:
            meta = obj["metadata"]
            if (obj["kind"] == kind and meta.get("namespace", "") == ns
                    and meta["name"].startswith(name)):
                return obj
        raise KeyError(f"{kind} {ns}/{name}")

    def write(self, root: Path, *, title: str, report: str, category: str,
              culprit: tuple[str, str, str], evidence: list[str], fix: str) -> None:
        """Write the scenario folder."""
        kind, ns, name = culprit
        scenario: Obj = {
            "id": self.sid, "title": title, "now": iso(self.clock.now), "report": report,
            "truth": {"category": category,
                      "culprit": {"kind": kind, "namespace": ns, "name": name},
                      "evidence": evidence, "fix": fix},
        }
        write_scenario(root, self.sid, scenario, self.cluster, self.logs, self.metrics,
                       self.pod_logs if self.pod_logs.files else None)


def switch(at: datetime, before: float, after: float) -> Callable[[datetime], float]:
    """A value that is ``before`` until ``at`` and ``after`` from then on."""

    def value(t: datetime) -> float:
        return after if t >= at else before

    return value


def while_alive(value: float, *, since: datetime | None = None, until: datetime | None = None,
                spread: Callable[[], float] | None = None) -> Callable[[datetime], float | None]:
    """A gauge that exists only between ``since`` and ``until`` (optionally jittered)."""

    def sample(t: datetime) -> float | None:
        if (since is not None and t < since) or (until is not None and t > until):
            return None
        return value * (spread() if spread else 1.0)

    return sample
