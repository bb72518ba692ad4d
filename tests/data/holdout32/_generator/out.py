# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Writers for a scenario folder, metric and log builders, and healthy bystander workloads.

The bystanders matter as much as the culprit: a real namespace has other healthy
Deployments, services and routine events, and the cause has to be found among them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from .k8s import (
    Clock,
    Obj,
    container,
    cstatus,
    deployment,
    endpoints,
    http_probe,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
)

ROOT = Path(__file__).resolve().parent.parent


class Metrics:
    """OpenMetrics families with explicit timestamps, as promtool backfills them."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.families: dict[str, tuple[str, str, list[str]]] = {}

    def _family(self, name: str, kind: str, help_: str) -> list[str]:
        if name not in self.families:
            self.families[name] = (kind, help_, [])
        return self.families[name][2]

    def series(
        self,
        name: str,
        kind: str,
        labels: dict[str, str],
        points: Iterable[tuple[float, float]],
        help_: str = "",
        sample: str | None = None,
    ) -> None:
        """points: (minutes_ago, value), any order; written oldest first."""
        lines = self._family(name, kind, help_ or name.replace("_", " "))
        sample = sample or (name + "_total" if kind == "counter" else name)
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        for minutes, value in sorted(points, key=lambda p: -p[0]):
            v = f"{value:.6g}" if isinstance(value, float) and not value.is_integer() else str(int(value))
            lines.append(f"{sample}{{{lab}}} {v} {self.clock.unix(minutes)}")

    def histogram(
        self,
        name: str,
        labels: dict[str, str],
        bounds: Sequence[float],
        points: Iterable[tuple[float, list[float], float, float]],
        help_: str = "",
    ) -> None:
        """points: (minutes_ago, cumulative bucket counts per bound (+Inf last = count), sum, count)."""
        lines = self._family(name, "histogram", help_ or name.replace("_", " "))
        pts = sorted(points, key=lambda p: -p[0])
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        les = [*(f"{b:g}" for b in bounds), "+Inf"]
        for minutes, buckets, total, count in pts:  # one MetricPoint per timestamp, in time order
            ts = self.clock.unix(minutes)
            lines.extend(f'{name}_bucket{{{lab},le="{le}"}} {int(buckets[i])} {ts}' for i, le in enumerate(les))
            lines.append(f"{name}_sum{{{lab}}} {total:.3f} {ts}")
            lines.append(f"{name}_count{{{lab}}} {int(count)} {ts}")

    def render(self) -> str:
        out = []
        for name, (kind, help_, lines) in self.families.items():
            out.append(f"# TYPE {name} {kind}")
            out.append(f"# HELP {name} {help_}")
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"


def ecs(
    clock: Clock,
    minutes_ago: float,
    message: str,
    level: str,
    service_name: str,
    ns: str,
    pod_name: str,
    container_name: str,
    **extra: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "@timestamp": clock.ms(minutes_ago),
        "message": message,
        "log.level": level,
        "service.name": service_name,
        "kubernetes.namespace": ns,
        "kubernetes.pod.name": pod_name,
        "kubernetes.container.name": container_name,
    }
    doc.update(extra)
    return doc


def write(
    sid: str,
    scenario: dict[str, Any],
    objects: list[Obj],
    *,
    pod_logs: dict[tuple[str, str, str, bool], list[str]] | None = None,
    logs: list[dict[str, Any]] | None = None,
    metrics: Metrics | None = None,
) -> Path:
    folder = ROOT / sid
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    head = {k: scenario[k] for k in ("id", "title", "now")}
    with open(folder / "scenario.yaml", "w") as f:
        yaml.safe_dump(head, f, sort_keys=False, width=100)
        f.write("report: |\n" + "".join(f"  {line}\n" for line in scenario["report"].strip().splitlines()))
        yaml.safe_dump({"truth": scenario["truth"]}, f, sort_keys=False, width=100, allow_unicode=True)
        if scenario.get("interventions"):
            yaml.safe_dump({"interventions": scenario["interventions"]}, f, sort_keys=False, width=100)
    with open(folder / "cluster.yaml", "w") as f:
        yaml.safe_dump_all(objects, f, sort_keys=False, width=120)
    for (ns, pod_name, cont, previous), lines in (pod_logs or {}).items():
        p = folder / "pod-logs" / ns / pod_name / f"{cont}{'.previous' if previous else ''}.log"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
    if logs:
        logs = sorted(logs, key=lambda d: d["@timestamp"])
        (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in logs))
    if metrics:
        (folder / "metrics.om").write_text(metrics.render())
    return folder


def healthy_app(
    clock: Clock,
    ns: str,
    name: str,
    image: str,
    *,
    replicas: int,
    nodes: Sequence[str],
    ip_prefix: str,
    cluster_ip: str,
    revision: int = 3,
    created_days: float = 120,
    rollout_min: float = 60 * 24 * 6,
    port: int = 8080,
    svc_port: int = 80,
    cpu: str = "200m",
    memory: str = "256Mi",
    mem_limit: str | None = "512Mi",
    labels: dict[str, str] | None = None,
    probe_path: str = "/healthz",
    env: list[Obj] | None = None,
    spec_extra: dict[str, Any] | None = None,
    with_service: bool = True,
) -> list[Obj]:
    """A Deployment, its current ReplicaSet, Ready pods spread over nodes, Service, Endpoints."""
    lab = {"app": name, **(labels or {})}
    c = container(
        name,
        image,
        port=port,
        cpu=cpu,
        memory=memory,
        mem_limit=mem_limit,
        env=env,
        readiness=http_probe(probe_path, delay=5, period=10, timeout=2),
        liveness=http_probe(probe_path, delay=15, period=20, timeout=2),
    )
    tmpl = template(lab, [c], **(spec_extra or {}))
    h = pod_hash(name, revision)
    objs: list[Obj] = [
        deployment(
            clock,
            ns,
            name,
            tmpl,
            replicas=replicas,
            revision=revision,
            created_days=created_days,
            ready=replicas,
            updated=replicas,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}-{h}" has successfully progressed.',
                rollout_min - 2,
            ),
        ),
        replicaset(
            clock, ns, name, tmpl, revision=revision, created_min=rollout_min, replicas=replicas, ready=replicas
        ),
    ]
    addrs = []
    for i in range(replicas):
        pname = f"{name}-{h}-{suffix(name + str(i))}"
        nd = nodes[i % len(nodes)]
        ip = f"{ip_prefix}.{(i * 37 + len(name) * 3) % 240 + 10}"
        started = rollout_min - 1 - i * 0.4
        objs.append(
            pod(
                clock,
                ns,
                pname,
                ("ReplicaSet", f"{name}-{h}"),
                lab,
                tmpl["spec"],
                node_name=nd,
                ip=ip,
                started_min=started,
                hash_label=h,
                statuses=[cstatus(clock, name, image, ready=True, state=running(started - 0.1, clock))],
            )
        )
        addrs.append((ip, pname, nd))
    if with_service:
        objs.append(
            service(
                clock,
                ns,
                name,
                {"app": name},
                port=svc_port,
                target="http",
                cluster_ip=cluster_ip,
                created_days=created_days,
            )
        )
        objs.append(endpoints(clock, ns, name, addrs, [], port))
    return objs


def pods_of(objs: list[Obj], prefix: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith(prefix)]
