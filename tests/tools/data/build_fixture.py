"""Write the `fixture-shop` scenario the tool tests read (run it again after editing).

A small shop where the second revision of `checkout` (image 2.3.1, memory limit 256Mi,
down from 512Mi) is OOM-killed under load, with enough surroundings to exercise every tool:
a Service whose selector matches no pod, an autoscaler at its maximum, a quota close to
its limit, a deny-all NetworkPolicy, an Ingress, a node under memory pressure, a Pending
pod, a ConfigMap holding a credential, and a `kube-system` namespace that tests exclude.
Deterministic: no randomness beyond a seeded generator.

    .venv/bin/python tests/tools/data/build_fixture.py
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent / "fixture-shop"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
ROLLOUT = NOW - timedelta(minutes=50)  # 09:10, revision 2 ships
MI = 1024 * 1024
OLD_HASH, NEW_HASH = "6f7d8b9c5", "7c9d5f8b4"
NEW_PODS = [f"checkout-{NEW_HASH}-x2k4p", f"checkout-{NEW_HASH}-q8w2z"]
OLD_PODS = [f"checkout-{OLD_HASH}-h7j9k", f"checkout-{OLD_HASH}-m2n4b"]
WORKER_POD = "checkout-worker-5b8d4c7f9-m4n6p"


def ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, namespace: str | None = "shop", **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "creationTimestamp": ts(NOW - timedelta(days=30))}
    if namespace:
        data["namespace"] = namespace
    data.update(extra)
    return data


def container(image: str, memory: str, *, env: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "checkout",
        "image": image,
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "250m", "memory": "128Mi"},
                      "limits": {"cpu": "500m", "memory": memory}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                          "initialDelaySeconds": 10, "periodSeconds": 10, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
    }
    if env:
        spec["env"] = [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "DB_PASSWORD", "value": "hunter2-very-secret"},
            {"name": "PAYMENT_API_TOKEN",
             "valueFrom": {"secretKeyRef": {"name": "payment-api", "key": "token"}}},
        ]
    return spec


def pod(name: str, app: str, owner: tuple[str, str], node: str, **status: Any) -> dict[str, Any]:
    labels = {"app": app}
    if owner[0] == "ReplicaSet":
        labels["pod-template-hash"] = owner[1].rsplit("-", 1)[-1]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": meta(name, labels=labels, creationTimestamp=ts(ROLLOUT + timedelta(minutes=1)),
                         ownerReferences=[{"apiVersion": "apps/v1", "kind": owner[0],
                                           "name": owner[1], "controller": True}]),
        "spec": {"nodeName": node, "containers": [container("shop/checkout:2.3.1", "256Mi")]}
        if app == "checkout" else {"nodeName": node, "containers": [
            {"name": app, "image": f"shop/{app}:1.0",
             "ports": [{"containerPort": 8080}],
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
        "status": status,
    }


def running(app: str, restarts: int = 0) -> dict[str, Any]:
    return {"phase": "Running", "startTime": ts(ROLLOUT),
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": app, "ready": True, "restartCount": restarts,
                                   "image": f"shop/{app}:1.0",
                                   "state": {"running": {"startedAt": ts(ROLLOUT)}}}]}


def oom_status(restarts: int, waiting: bool) -> dict[str, Any]:
    state: dict[str, Any] = (
        {"waiting": {"reason": "CrashLoopBackOff",
                     "message": "back-off 5m0s restarting failed container=checkout"}}
        if waiting else {"running": {"startedAt": ts(NOW - timedelta(minutes=3))}})
    return {
        "phase": "Running", "startTime": ts(ROLLOUT + timedelta(minutes=1)),
        "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                        "message": "containers with unready status: [checkout]"},
                       {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{
            "name": "checkout", "ready": False, "restartCount": restarts,
            "image": "shop/checkout:2.3.1", "state": state,
            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                         "startedAt": ts(NOW - timedelta(minutes=9)),
                                         "finishedAt": ts(NOW - timedelta(minutes=2))}},
        }],
    }


def event(name: str, kind: str, obj: str, reason: str, message: str, count: int,
          last: datetime, type_: str = "Warning", namespace: str = "shop") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{obj}.{name}", "namespace": namespace},
            "involvedObject": {"kind": kind, "name": obj, "namespace": namespace},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": ts(last - timedelta(minutes=40 if count > 1 else 0)),
            "lastTimestamp": ts(last), "source": {"component": "kubelet"}}


def cluster() -> list[dict[str, Any]]:
    deployment_template = {"metadata": {"labels": {"app": "checkout"}},
                           "spec": {"containers": [container("shop/checkout:2.3.1", "256Mi")]}}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": meta("shop", None)},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": meta("kube-system", None)},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": meta("node-a", None, labels={"node-role.kubernetes.io/worker": ""}),
         "spec": {},
         "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"},
                                   {"type": "MemoryPressure", "status": "False"}],
                    "nodeInfo": {"kubeletVersion": "v1.31.2"}}},
        {"apiVersion": "v1", "kind": "Node", "metadata": meta("node-b", None),
         "spec": {"taints": [{"key": "node.kubernetes.io/memory-pressure",
                              "effect": "NoSchedule"}]},
         "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"},
                                   {"type": "MemoryPressure", "status": "True",
                                    "reason": "KubeletHasInsufficientMemory",
                                    "message": "kubelet has insufficient memory available",
                                    "lastTransitionTime": ts(NOW - timedelta(minutes=20))}],
                    "nodeInfo": {"kubeletVersion": "v1.31.2"}}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta("checkout", annotations={"deployment.kubernetes.io/revision": "2"},
                          labels={"app": "checkout"}),
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "checkout"}},
                  "strategy": {"type": "RollingUpdate"}, "template": deployment_template},
         "status": {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 0,
                    "availableReplicas": 0, "unavailableReplicas": 2,
                    "conditions": [{"type": "Available", "status": "False",
                                    "reason": "MinimumReplicasUnavailable",
                                    "message": "Deployment does not have minimum availability."},
                                   {"type": "Progressing", "status": "True",
                                    "reason": "NewReplicaSetAvailable"}]}},
    ]
    for revision, rs_hash, image, memory, replicas, created in (
        ("1", OLD_HASH, "shop/checkout:2.3.0", "512Mi", 0, NOW - timedelta(days=7)),
        ("2", NEW_HASH, "shop/checkout:2.3.1", "256Mi", 2, ROLLOUT),
    ):
        objects.append({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta(f"checkout-{rs_hash}", creationTimestamp=ts(created),
                             labels={"app": "checkout", "pod-template-hash": rs_hash},
                             annotations={"deployment.kubernetes.io/revision": revision},
                             ownerReferences=[{"kind": "Deployment", "name": "checkout",
                                               "controller": True}]),
            "spec": {"replicas": replicas,
                     "template": {"spec": {"containers": [container(image, memory)]}}},
            "status": {"replicas": replicas, "readyReplicas": 0,
                       "availableReplicas": 0},
        })
    objects += [
        pod(NEW_PODS[0], "checkout", ("ReplicaSet", f"checkout-{NEW_HASH}"), "node-a",
            **oom_status(5, waiting=True)),
        pod(NEW_PODS[1], "checkout", ("ReplicaSet", f"checkout-{NEW_HASH}"), "node-a",
            **oom_status(4, waiting=False)),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("checkout-worker"),
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "checkout-worker"}},
                  "template": {"spec": {"containers": [{"name": "checkout-worker",
                                                        "image": "shop/checkout-worker:1.0"}]}}},
         "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                    "updatedReplicas": 1}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("checkout-worker-5b8d4c7f9",
                          annotations={"deployment.kubernetes.io/revision": "1"},
                          ownerReferences=[{"kind": "Deployment", "name": "checkout-worker"}]),
         "spec": {"replicas": 1}, "status": {"replicas": 1, "readyReplicas": 1}},
        pod(WORKER_POD, "checkout-worker", ("ReplicaSet", "checkout-worker-5b8d4c7f9"), "node-a",
            **running("checkout-worker")),
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("redis"),
         "spec": {"replicas": 1, "template": {"spec": {"containers": [
             {"name": "redis", "image": "redis:7.2"}]}}},
         "status": {"replicas": 1, "readyReplicas": 1, "currentRevision": "redis-5d4f",
                    "updateRevision": "redis-5d4f"}},
        pod("redis-0", "redis", ("StatefulSet", "redis"), "node-a", **running("redis")),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("frontend"),
         "spec": {"replicas": 3, "template": {"spec": {"containers": [
             {"name": "frontend", "image": "shop/frontend:4.1"}]}}},
         "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                    "updatedReplicas": 3}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("frontend-8d6c5b4f2",
                          annotations={"deployment.kubernetes.io/revision": "1"},
                          ownerReferences=[{"kind": "Deployment", "name": "frontend"}]),
         "spec": {"replicas": 3}, "status": {"replicas": 3, "readyReplicas": 3}},
    ]
    for suffix in ("a1b2c", "d3e4f", "g5h6j"):
        objects.append(pod(f"frontend-8d6c5b4f2-{suffix}", "frontend",
                           ("ReplicaSet", "frontend-8d6c5b4f2"), "node-a", **running("frontend")))
    pending = pod("report-28861440-zx9vw", "report", ("Job", "report-28861440"), "")
    pending["spec"].pop("nodeName")
    pending["status"] = {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated "
                    "taint {node.kubernetes.io/memory-pressure: }."}]}
    objects += [
        pending,
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("report-28861440"),
         "spec": {"completions": 1, "template": {"spec": {"containers": [
             {"name": "report", "image": "shop/report:1.0"}]}}},
         "status": {"active": 1}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("checkout"),
         "spec": {"type": "ClusterIP", "selector": {"app": "checkout"},
                  "ports": [{"port": 80, "targetPort": "http", "protocol": "TCP"}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("checkout"),
         "subsets": [{"notReadyAddresses": [{"ip": "10.0.0.5"}, {"ip": "10.0.0.6"}],
                      "ports": [{"port": 8080}]}]},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("payments"),
         "spec": {"type": "ClusterIP", "selector": {"app": "payments"},
                  "ports": [{"port": 80, "targetPort": 8080}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("payments")},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("frontend"),
         "spec": {"type": "ClusterIP", "selector": {"app": "frontend"},
                  "ports": [{"port": 80, "targetPort": 8080}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("frontend"),
         "subsets": [{"addresses": [{"ip": "10.0.1.1"}, {"ip": "10.0.1.2"}, {"ip": "10.0.1.3"}],
                      "ports": [{"port": 8080}]}]},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
         "metadata": meta("frontend"),
         "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "frontend"},
                  "minReplicas": 2, "maxReplicas": 3,
                  "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                      "type": "Utilization", "averageUtilization": 70}}}]},
         "status": {"currentReplicas": 3, "desiredReplicas": 3,
                    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                        "current": {"averageUtilization": 96}}}],
                    "conditions": [{"type": "ScalingLimited", "status": "True",
                                    "reason": "TooManyReplicas",
                                    "message": "the desired replica count is more than the "
                                               "maximum replica count"}]}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta("compute"),
         "spec": {"hard": {"pods": "20", "limits.memory": "4Gi"}},
         "status": {"hard": {"pods": "20", "limits.memory": "4Gi"},
                    "used": {"pods": "8", "limits.memory": "3840Mi"}}},
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": meta("defaults"),
         "spec": {"limits": [{"type": "Container", "default": {"memory": "256Mi"},
                              "max": {"memory": "1Gi"}}]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": meta("default-deny-ingress"),
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta("storefront"),
         "spec": {"tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
                  "rules": [{"host": "shop.example.com", "http": {"paths": [
                      {"path": "/", "pathType": "Prefix", "backend": {"service": {
                          "name": "frontend", "port": {"number": 80}}}},
                      {"path": "/pay", "pathType": "Prefix", "backend": {"service": {
                          "name": "billing", "port": {"number": 80}}}}]}}]}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("checkout-config"),
         "data": {"DATABASE_URL": "postgres://app:s3cr3tpass@db.shop:5432/shop",
                  "CACHE_SIZE_MB": "240"}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta("coredns", "kube-system"),
         "spec": {"replicas": 1, "template": {"spec": {"containers": [
             {"name": "coredns", "image": "coredns:1.11"}]}}},
         "status": {"replicas": 1, "readyReplicas": 0}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta("coredns-5d78c9869d-abcde", "kube-system"),
         "spec": {"nodeName": "node-a",
                  "containers": [{"name": "coredns", "image": "coredns:1.11"}]},
         "status": {"phase": "Running", "containerStatuses": [
             {"name": "coredns", "ready": False, "restartCount": 9,
              "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}},
    ]
    for i, name in enumerate(NEW_PODS):
        objects += [
            event("backoff", "Pod", name, "BackOff",
                  f"Back-off restarting failed container checkout in pod {name}", 12 - i * 3,
                  NOW - timedelta(minutes=1 + i)),
            event("unhealthy", "Pod", name, "Unhealthy",
                  "Readiness probe failed: Get \"http://10.0.0.5:8080/ready\": connection refused",
                  20, NOW - timedelta(minutes=2)),
            event("pulled", "Pod", name, "Pulled",
                  'Container image "shop/checkout:2.3.1" already present on machine', 5,
                  NOW - timedelta(minutes=3), "Normal"),
        ]
    objects += [
        event("scaled", "Deployment", "checkout", "ScalingReplicaSet",
              f"Scaled up replica set checkout-{NEW_HASH} to 2", 1, NOW - timedelta(minutes=50),
              "Normal"),
        event("failed", "Pod", "report-28861440-zx9vw", "FailedScheduling",
              "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint.",
              7, NOW - timedelta(minutes=4)),
        event("pressure", "Node", "node-b", "EvictionThresholdMet",
              "Attempting to reclaim memory", 3, NOW - timedelta(minutes=15), namespace="default"),
        event("backoff", "Pod", "coredns-5d78c9869d-abcde", "BackOff",
              "Back-off restarting failed container coredns", 30, NOW - timedelta(minutes=1),
              namespace="kube-system"),
    ]
    return objects


def logs() -> list[dict[str, Any]]:
    rng = random.Random(7)
    docs: list[dict[str, Any]] = []
    start = NOW - timedelta(hours=2)
    for second in range(0, 7200, 20):
        at = start + timedelta(seconds=second)
        after = at >= ROLLOUT
        pods = NEW_PODS if after else OLD_PODS
        pod_name = pods[second // 20 % 2]
        docs.append({"@timestamp": ts(at), "message": f"order {rng.randint(1000, 9999)} paid",
                     "log.level": "info", "service.name": "checkout",
                     "kubernetes.namespace": "shop", "kubernetes.pod.name": pod_name,
                     "kubernetes.container.name": "checkout"})
        if second % 120 == 0:
            docs.append({"@timestamp": ts(at + timedelta(seconds=5)),
                         "message": f"redis connection reset by peer, retrying in "
                                    f"{rng.choice([100, 200, 400])}ms",
                         "log.level": "warn", "service.name": "checkout",
                         "kubernetes.namespace": "shop", "kubernetes.pod.name": pod_name,
                         "kubernetes.container.name": "checkout"})
        if after and second % 40 == 0:
            docs.append({"@timestamp": ts(at + timedelta(seconds=7)),
                         "message": f"GET /api/checkout returned 502 upstream reset after "
                                    f"{rng.randint(10, 900)}ms",
                         "log.level": "error", "service.name": "frontend",
                         "kubernetes": {"namespace": "shop",
                                        "pod": {"name": "frontend-8d6c5b4f2-a1b2c"},
                                        "container": {"name": "frontend"}},
                         "http.response.status_code": 502})
        if second % 300 == 0:
            docs.append({"@timestamp": ts(at + timedelta(seconds=9)),
                         "message": "plugin/errors: 2 example.org. A: read udp 10.0.0.9:53: "
                                    "i/o timeout",
                         "log.level": "error", "service.name": "coredns",
                         "kubernetes.namespace": "kube-system",
                         "kubernetes.pod.name": "coredns-5d78c9869d-abcde",
                         "kubernetes.container.name": "coredns"})
    docs.append({"@timestamp": ts(NOW - timedelta(minutes=5)),
                 "message": "calling payments with Authorization: Bearer abcDEF123456ghiJKL789",
                 "log.level": "debug", "service.name": "checkout",
                 "kubernetes.namespace": "shop", "kubernetes.pod.name": NEW_PODS[0],
                 "kubernetes.container.name": "checkout"})
    return sorted(docs, key=lambda d: d["@timestamp"])


def metrics() -> str:
    step = 60
    points = [NOW - timedelta(hours=2) + timedelta(seconds=s) for s in range(0, 7201, step)]
    # OpenMetrics wants each series' points together (a histogram's by label set, le aside)
    families: dict[str, tuple[str, dict[str, list[str]]]] = {}

    def add(family: str, kind: str, name: str, labels: dict[str, str], value: float,
            at: datetime) -> None:
        text = ",".join(f'{k}="{v}"' for k, v in labels.items())
        group = ",".join(f"{k}={v}" for k, v in labels.items() if k != "le")
        families.setdefault(family, (kind, {}))[1].setdefault(group, []).append(
            f"{name}{{{text}}} {value:g} {int(at.timestamp())}")

    rng = random.Random(11)
    for pod_name in OLD_PODS + NEW_PODS + [WORKER_POD]:
        base = {"namespace": "shop", "pod": pod_name,
                "container": "checkout-worker" if pod_name == WORKER_POD else "checkout"}
        new = pod_name in NEW_PODS
        alive = [p for p in points if (p >= ROLLOUT) == new or pod_name == WORKER_POD]
        counters = {"periods": 0.0, "throttled": 0.0, "restarts": 0.0}
        http = {"200": 0.0, "500": 0.0, "502": 0.0}
        buckets = {le: 0 for le in ("0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf")}
        total_sum = 0.0
        for i, at in enumerate(alive):
            if pod_name == WORKER_POD:
                memory = 300 * MI
            elif new:
                cycle = i % 20  # grows 8Mi per sample to the limit, then the kill drops it
                memory = (100 + cycle * 8) * MI
                if cycle == 19:
                    counters["restarts"] += 1
            else:
                memory = (150 + rng.random() * 5) * MI
            add("container_memory_working_set_bytes", "gauge",
                "container_memory_working_set_bytes", base, memory, at)
            limit = 256 * MI if new else 512 * MI
            add("kube_pod_container_resource_limits", "gauge", "kube_pod_container_resource_limits",
                {**base, "resource": "memory", "unit": "byte"}, limit, at)
            counters["periods"] += 300
            counters["throttled"] += 6
            for key, family in (("periods", "container_cpu_cfs_periods"),
                                ("throttled", "container_cpu_cfs_throttled_periods")):
                add(family, "counter", family + "_total", base, counters[key], at)
            add("kube_pod_container_status_restarts", "counter",
                "kube_pod_container_status_restarts_total", base, counters["restarts"], at)
            if pod_name == WORKER_POD:
                continue
            http["200"] += 50
            http["500"] += 2 if new else 0
            http["502"] += 10 if new else 0.25
            for code, value in http.items():
                add("http_requests", "counter", "http_requests_total", {**base, "code": code},
                    value, at)
            slow = 0.9 if new else 0.12
            spread = {"0.05": 0.3, "0.1": 0.6, "0.25": 0.9 if not new else 0.5,
                      "0.5": 0.97 if not new else 0.7, "1": 0.995 if not new else 0.93,
                      "2.5": 1.0, "+Inf": 1.0}
            for le in buckets:
                buckets[le] += round(200 * spread[le])
            total_sum += 200 * slow / 2
            hist = "http_request_duration_seconds"
            for le, value in buckets.items():
                add(hist, "histogram", hist + "_bucket", {**base, "le": le}, value, at)
            add(hist, "histogram", hist + "_count", base, buckets["+Inf"], at)
            add(hist, "histogram", hist + "_sum", base, total_sum, at)
    lines: list[str] = []
    for family, (kind, groups) in families.items():
        lines.append(f"# TYPE {family} {kind}")
        for samples in groups.values():
            lines.extend(samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def pod_logs() -> dict[str, str]:
    previous = "\n".join(
        [f"{ts(NOW - timedelta(minutes=9))} INFO starting checkout 2.3.1",
         f"{ts(NOW - timedelta(minutes=9))} INFO cache warm-up: loading 240MB of catalog",
         f"{ts(NOW - timedelta(minutes=5))} DEBUG calling payments with Authorization: "
         "Bearer abcDEF123456ghiJKL789"]
        + [f"{ts(NOW - timedelta(minutes=4, seconds=-i))} WARN heap usage {200 + i}MB of 256MB"
           for i in range(0, 40, 2)]) + "\n"
    current = "\n".join([f"{ts(NOW - timedelta(minutes=3))} INFO starting checkout 2.3.1",
                         f"{ts(NOW - timedelta(minutes=2))} INFO listening on :8080"]) + "\n"
    base = f"pod-logs/shop/{NEW_PODS[0]}/checkout"
    return {f"{base}.previous.log": previous, f"{base}.log": current,
            f"pod-logs/shop/{NEW_PODS[1]}/checkout.log": current}


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    header = {"id": "fixture-shop", "title": "Checkout OOM-killed after 2.3.1 (test fixture)",
              "now": ts(NOW), "report": "checkout keeps restarting, customers get 502s",
              "truth": {"category": "oom_killed",
                        "culprit": {"kind": "Deployment", "namespace": "shop",
                                    "name": "checkout"},
                        "evidence": ["OOMKilled", "256Mi"],
                        "fix": "Raise the memory limit back to 512Mi"}}
    (HERE / "scenario.yaml").write_text(yaml.safe_dump(header, sort_keys=False))
    (HERE / "cluster.yaml").write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
    (HERE / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in logs()))
    (HERE / "metrics.om").write_text(metrics())
    for relative, text in pod_logs().items():
        path = HERE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
