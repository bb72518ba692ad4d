"""Five small scenarios written by hand after the detectors were done, never tuned for.

They check that the analyzer generalises beyond the bundled library, with other names and
other shapes of the same categories: a DNS egress lock-down, a full disk on a StatefulSet,
a missing ConfigMap key, an expired third-party certificate, a LimitRange that refuses
pods. `write_all(root)` writes them in the scenario format (cluster, logs, no metrics).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

NOW = datetime(2027, 1, 15, 11, 0, tzinfo=UTC)
HASH = "7f9c6d5b8"
Obj = dict[str, Any]


def ago(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, namespace: str = "", **extra: Any) -> Obj:
    data: Obj = {"name": name, **extra}
    if namespace:
        data["namespace"] = namespace
    return data


def namespace(name: str) -> Obj:
    labels = {"kubernetes.io/metadata.name": name}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, labels=labels)}


def node(name: str = "node-a") -> Obj:
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": ago(90_000)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta(name, creationTimestamp=ago(9e4)),
            "spec": {}, "status": {"conditions": [ready],
                                   "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def container(name: str, image: str, **extra: Any) -> Obj:
    return {"name": name, "image": image, **extra}


def deployment(ns: str, name: str, containers: list[Obj], *, replicas: int = 2,
               ready: int | None = None, conditions: list[Obj] | None = None) -> list[Obj]:
    """A Deployment and its current ReplicaSet."""
    labels = {"app": name}
    template = {"metadata": {"labels": labels}, "spec": {"containers": containers}}
    ready = replicas if ready is None else ready
    revision = {"deployment.kubernetes.io/revision": "4"}
    owner = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": f"uid-{name}",
              "controller": True}]
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta(name, ns, uid=f"uid-{name}", creationTimestamp=ago(20_000),
                          annotations=revision),
         "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                  "template": template},
         "status": {"replicas": replicas, "readyReplicas": ready, "updatedReplicas": replicas,
                    "availableReplicas": ready}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta(f"{name}-{HASH}", ns, creationTimestamp=ago(20_000),
                          annotations=revision, ownerReferences=owner,
                          labels={**labels, "pod-template-hash": HASH}),
         "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                  "template": template},
         "status": {"replicas": replicas, "readyReplicas": ready,
                    **({"conditions": conditions} if conditions else {})}},
    ]


def running(name: str, image: str) -> Obj:
    return {"name": name, "image": image, "ready": True, "restartCount": 0,
            "state": {"running": {"startedAt": ago(300)}}}


def pod(ns: str, workload: str, suffix: str, containers: list[Obj], statuses: list[Obj], *,
        phase: str = "Running", owner_kind: str = "ReplicaSet", owner: str = "") -> Obj:
    name = f"{workload}-{HASH}-{suffix}" if owner_kind == "ReplicaSet" else f"{workload}-{suffix}"
    reference = [{"apiVersion": "apps/v1", "kind": owner_kind, "controller": True, "uid": "u",
                  "name": owner or f"{workload}-{HASH}"}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, ns, creationTimestamp=ago(600), labels={"app": workload},
                             ownerReferences=reference),
            "spec": {"nodeName": "node-a", "containers": containers},
            "status": {"phase": phase, "containerStatuses": statuses}}


def service(ns: str, name: str) -> list[Obj]:
    return [{"apiVersion": "v1", "kind": "Service", "metadata": meta(name, ns),
             "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta(name, ns),
             "subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}]


def event(ns: str, kind: str, name: str, reason: str, message: str, *, count: int = 5) -> Obj:
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta(f"{name}.{reason}", ns),
            "involvedObject": {"kind": kind, "name": name, "namespace": ns}, "reason": reason,
            "message": message, "type": "Warning", "count": count,
            "firstTimestamp": ago(40), "lastTimestamp": ago(1)}


def log(minutes: float, level: str, service_name: str, ns: str, pod_name: str,
        message: str) -> Obj:
    stamp = (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"@timestamp": stamp, "log.level": level, "message": message,
            "service.name": service_name, "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name, "kubernetes.container.name": service_name}


def healthy_noise(ns: str, service_name: str, pod_name: str) -> list[Obj]:
    return [log(m, "info", service_name, ns, pod_name, "GET /healthz 200") for m in range(5, 60, 5)]


def write(root: Path, sid: str, report: str, truth: Obj, objects: list[Obj],
          logs: list[Obj] | None = None) -> Path:
    folder = root / sid
    folder.mkdir(parents=True, exist_ok=True)
    header = {"id": sid, "title": sid.replace("-", " "), "report": report, "truth": truth,
              "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ")}
    (folder / "scenario.yaml").write_text(yaml.safe_dump(header, sort_keys=False))
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    if logs:
        ordered = sorted(logs, key=lambda line: line["@timestamp"])
        (folder / "logs.ndjson").write_text("\n".join(json.dumps(x) for x in ordered) + "\n")
    return folder


def culprit(kind: str, ns: str, name: str, category: str) -> Obj:
    return {"category": category, "culprit": {"kind": kind, "namespace": ns, "name": name}}


def dns_egress(root: Path) -> Path:
    """A new egress policy without port 53: the invoicer cannot resolve its mail relay."""
    image = "reg.io/invoicer:5.2.0"
    app = [container("invoicer", image)]
    objects = [namespace("billing"), namespace("tools"), node(),
               *deployment("billing", "invoicer", app), *service("billing", "invoicer"),
               *deployment("tools", "wiki", [container("wiki", "reg.io/wiki:1.0")]),
               *[pod("billing", "invoicer", s, app, [running("invoicer", image)])
                 for s in ("q1w2e", "r4t5y")],
               event("tools", "Pod", f"wiki-{HASH}-a1b2c", "Unhealthy",
                     "Readiness probe failed: context deadline exceeded", count=2),
               {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": meta("egress-lockdown", "billing", creationTimestamp=ago(35)),
                "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [
                    {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
                     "ports": [{"port": 5432, "protocol": "TCP"}]}]}}]
    failing = ("failed to send invoice email: dial tcp: lookup smtp.mailprovider.example.com on "
               "172.20.0.10:53: read udp 10.1.2.3:41234->172.20.0.10:53: i/o timeout")
    logs = healthy_noise("billing", "invoicer", f"invoicer-{HASH}-q1w2e")
    logs += [log(m, "error", "invoicer", "billing", f"invoicer-{HASH}-q1w2e", failing)
             for m in range(2, 32, 2)]
    logs += [log(m, "warn", "wiki", "tools", f"wiki-{HASH}-a1b2c", "slow page render: 2300ms")
             for m in range(3, 60, 9)]
    return write(root, "invoicer-dns-egress",
                 "invoice emails stopped going out about half an hour ago, invoicer logs are "
                 "full of timeouts",
                 culprit("NetworkPolicy", "billing", "egress-lockdown", "network"), objects, logs)


def disk_full(root: Path) -> Path:
    """The event store's volume is full; its caller only sees rejected writes."""
    store = [container("store", "reg.io/store:3.1")]
    ingest = [container("ingest-api", "reg.io/ingest:2.0")]
    objects = [namespace("data"), node(),
               {"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": meta("events-store", "data", uid="uid-es", creationTimestamp=ago(9e4)),
                "spec": {"replicas": 1, "serviceName": "events-store",
                         "selector": {"matchLabels": {"app": "events-store"}},
                         "template": {"metadata": {"labels": {"app": "events-store"}},
                                      "spec": {"containers": store}}},
                "status": {"replicas": 1, "readyReplicas": 1}},
               pod("data", "events-store", "0", store, [running("store", "reg.io/store:3.1")],
                   owner_kind="StatefulSet", owner="events-store"),
               *deployment("data", "ingest-api", ingest), *service("data", "ingest-api"),
               *service("data", "events-store"),
               *[pod("data", "ingest-api", s, ingest, [running("ingest-api", "reg.io/ingest:2.0")])
                 for s in ("z9x8c", "v7b6n")]]
    logs = healthy_noise("data", "ingest-api", f"ingest-api-{HASH}-z9x8c")
    logs += [log(m, "error", "store", "data", "events-store-0", "append to segment 000412 failed: "
                 "write /var/lib/store/segments/000412.log: no space left on device")
             for m in range(1, 25)]
    logs += [log(m, "error", "ingest-api", "data", f"ingest-api-{HASH}-z9x8c",
                 "POST /v1/events 503: store rejected write") for m in range(1, 25)]
    return write(root, "events-store-disk-full",
                 "event ingestion returns 503 since ~10:35, the ingest-api team says the store "
                 "rejects writes",
                 culprit("StatefulSet", "data", "events-store", "resource_exhaustion"), objects,
                 logs)


def config_key(root: Path) -> Path:
    """A new release needs a ConfigMap key that does not exist: the container never starts."""
    image = "reg.io/mailer:8.0"
    app = [container("mailer", image)]
    missing = "couldn't find key SMTP_HOST in ConfigMap mail/mailer-config"
    waiting = {"name": "mailer", "image": image, "ready": False, "restartCount": 0,
               "state": {"waiting": {"reason": "CreateContainerConfigError", "message": missing}}}
    objects = [namespace("mail"), node(), *deployment("mail", "mailer", app, ready=0),
               *[pod("mail", "mailer", s, app, [waiting], phase="Pending")
                 for s in ("m1n2b", "m3n4b")],
               event("mail", "Pod", f"mailer-{HASH}-m1n2b", "Failed",
                     f"Error: {missing}", count=30)]
    return write(root, "mailer-config-key",
                 "the mailer deployment from this morning never came up, nothing is being sent",
                 culprit("Deployment", "mail", "mailer", "crash_loop"), objects)


def cert_expired(root: Path) -> Path:
    """A third-party API's certificate expired: the caller is the culprit to name."""
    image = "reg.io/tax:1.4"
    app = [container("tax-calc", image)]
    objects = [namespace("shop"), node(), *deployment("shop", "tax-calc", app),
               *service("shop", "tax-calc"),
               *[pod("shop", "tax-calc", s, app, [running("tax-calc", image)])
                 for s in ("t1a2x", "t3a4x")]]
    failing = ("rate lookup failed: Get \"https://api.taxrates.example.net/v2/rates\": x509: "
               "certificate has expired or is not yet valid")
    logs = healthy_noise("shop", "tax-calc", f"tax-calc-{HASH}-t1a2x")
    logs += [log(m, "error", "tax-calc", "shop", f"tax-calc-{HASH}-t1a2x", failing)
             for m in range(1, 40)]
    return write(root, "tax-cert-expired",
                 "tax-calc fails every request since midnight UTC, checkout shows no totals",
                 culprit("Deployment", "shop", "tax-calc", "certificate"), objects, logs)


def limit_range(root: Path) -> Path:
    """A LimitRange caps container memory below what the renderer asks for."""
    image = "reg.io/renderer:2.2"
    app = [container("renderer", image, resources={"limits": {"memory": "4Gi"}})]
    refused = (f"pods \"renderer-{HASH}-k2k2k\" is forbidden: maximum memory usage per "
               "Container is 2Gi, but limit is 4Gi")
    failure = [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                "message": refused}]
    objects = [namespace("batch"), node(),
               *deployment("batch", "renderer", app, replicas=3, ready=1, conditions=failure),
               pod("batch", "renderer", "k1k1k", app, [running("renderer", image)]),
               {"apiVersion": "v1", "kind": "LimitRange",
                "metadata": meta("container-max", "batch"),
                "spec": {"limits": [{"type": "Container", "max": {"memory": "2Gi"}}]}},
               event("batch", "ReplicaSet", f"renderer-{HASH}", "FailedCreate",
                     f"Error creating: {refused}", count=14)]
    return write(root, "renderer-limitrange",
                 "renderer only has one pod, the backlog of thumbnails keeps growing",
                 culprit("Deployment", "batch", "renderer", "quota_exceeded"), objects)


def write_all(root: Path) -> list[Path]:
    """Write the five scenarios under `root`; returns their folders."""
    return [make(root) for make in (dns_egress, disk_full, config_key, cert_expired, limit_range)]
