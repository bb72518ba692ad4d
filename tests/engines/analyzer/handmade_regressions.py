"""Three more hand-written scenarios: regressions of a new revision that serves but errs on
one route (a Deployment whose readiness probe flaps along, a DaemonSet updated in place), and
the cluster's DNS server down in another form than a crash loop (OOM kills), under a name
the detectors do not know. `write_regressions(root)` writes them in the scenario format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.engines.analyzer.handmade import (
    NOW,
    Obj,
    ago,
    container,
    culprit,
    log,
    meta,
    namespace,
    node,
    write,
)


def _running(name: str, image: str, minutes: float, *, ready: bool = True) -> Obj:
    return {"name": name, "image": image, "ready": ready, "restartCount": 0,
            "state": {"running": {"startedAt": ago(minutes)}}}


def _pod(ns: str, name: str, owner: tuple[str, str], labels: dict[str, str],
         containers: list[Obj], statuses: list[Obj], minutes: float) -> Obj:
    ready = all(s.get("ready") for s in statuses)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, ns, creationTimestamp=ago(minutes), labels=labels,
                             ownerReferences=[{"apiVersion": "apps/v1", "kind": owner[0],
                                               "name": owner[1], "controller": True,
                                               "uid": f"uid-{owner[1]}"}]),
            "spec": {"nodeName": "node-a", "containers": containers},
            "status": {"phase": "Running", "containerStatuses": statuses,
                       "conditions": [{"type": "Ready", "status": str(ready)}]}}


def _event(ns: str, kind: str, name: str, reason: str, message: str, *, count: int = 1,
           first: float = 40, last: float = 1, type_: str = "Warning") -> Obj:
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta(f"{name}.{reason}.{first}", ns),
            "involvedObject": {"kind": kind, "name": name, "namespace": ns}, "reason": reason,
            "message": message, "type": type_, "count": count, "firstTimestamp": ago(first),
            "lastTimestamp": ago(last)}


def _service(ns: str, name: str, selector: dict[str, str], port: int, target: int,
             ready_ips: int, not_ready_ips: int = 0, protocol: str = "TCP") -> list[Obj]:
    subset: dict[str, Any] = {"ports": [{"port": target, "protocol": protocol}]}
    if ready_ips:
        subset["addresses"] = [{"ip": f"10.0.1.{i}"} for i in range(ready_ips)]
    if not_ready_ips:
        subset["notReadyAddresses"] = [{"ip": f"10.0.2.{i}"} for i in range(not_ready_ips)]
    return [{"apiVersion": "v1", "kind": "Service", "metadata": meta(name, ns),
             "spec": {"selector": selector, "ports": [{"port": port, "targetPort": target,
                                                       "protocol": protocol}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta(name, ns),
             "subsets": [subset]}]


def _traffic(ns: str, service: str, pods: list[str], routes: list[str], start: float,
             end: float, every: float = 2) -> list[Obj]:
    lines, minute, index = [], start, 0
    while minute > end:
        pod_name = pods[index % len(pods)]
        lines.append(log(minute, "info", service, ns, pod_name,
                         f"{routes[index % len(routes)]} 200 {14 + index % 9}ms"))
        minute -= every
        index += 1
    return lines


def quote_pdf(root: Path) -> Path:
    """A Deployment's new revision breaks one route; its readiness probe, which renders a
    sample quote, flaps with 500 along with it."""
    ns, name = "quotes", "quote-engine"
    old_image, new_image = "reg.io/quote-engine:7.3.2", "reg.io/quote-engine:7.4.0"
    probe = {"httpGet": {"path": "/health/ready", "port": 8080}, "initialDelaySeconds": 10,
             "periodSeconds": 10, "failureThreshold": 3}
    labels = {"app": name}

    def replicaset(suffix: str, revision: str, image: str, replicas: int, created: float) -> Obj:
        template = {"metadata": {"labels": labels},
                    "spec": {"containers": [container(name, image, readinessProbe=probe)]}}
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": meta(f"{name}-{suffix}", ns, creationTimestamp=ago(created),
                                 annotations={"deployment.kubernetes.io/revision": revision},
                                 labels={**labels, "pod-template-hash": suffix},
                                 ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                                   "name": name, "controller": True,
                                                   "uid": f"uid-{name}"}]),
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                         "template": template},
                "status": {"replicas": replicas, "readyReplicas": min(replicas, 2)}}

    pods = [f"{name}-6b7c8d9f4-{s}" for s in ("h2k4m", "p7r9t", "w3x5z")]
    template = {"metadata": {"labels": labels},
                "spec": {"containers": [container(name, new_image, readinessProbe=probe)]}}
    objects = [namespace(ns), node(),
               {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": meta(name, ns, uid=f"uid-{name}", creationTimestamp=ago(90_000),
                                 annotations={"deployment.kubernetes.io/revision": "12"}),
                "spec": {"replicas": 3, "selector": {"matchLabels": labels},
                         "template": template},
                "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3,
                           "availableReplicas": 2}},
               replicaset("6b7c8d9f4", "12", new_image, 3, 36),
               replicaset("58d9c7b6f", "11", old_image, 0, 30_000),
               *[_pod(ns, p, ("ReplicaSet", f"{name}-6b7c8d9f4"),
                      {**labels, "pod-template-hash": "6b7c8d9f4"},
                      [container(name, new_image, readinessProbe=probe)],
                      [_running(name, new_image, 35 - i, ready=i != 1)], 35 - i)
                 for i, p in enumerate(pods)],
               *_service(ns, name, labels, 80, 8080, 2, 1),
               _event(ns, "Pod", pods[1], "Unhealthy", "Readiness probe failed: HTTP probe "
                      "failed with statuscode: 500", count=46, first=33, last=1)]
    routes = ["GET /v3/quotes/{id}", "POST /v3/quotes", "GET /v3/quotes?customer=..."]
    logs = _traffic(ns, name, [f"{name}-58d9c7b6f-a{i}b{i}c" for i in range(3)],
                    [*routes, "GET /v3/quotes/{id}/pdf"], 120, 36)
    logs += _traffic(ns, name, pods, routes, 34, 0)
    for minute in range(34, 0, -1):
        pod_name = pods[minute % 3]
        logs.append(log(minute, "error", name, ns, pod_name, "GET /v3/quotes/{id}/pdf 500 9ms"))
        logs.append(log(minute - 0.01, "error", name, ns, pod_name,
                        "render failed: TemplateNotFoundError: 'quote_v3.html' not found in "
                        "/app/templates"))
    return write(root, "quote-pdf-release",
                 "customers cannot download quote PDFs since ~10:25, the quote page itself "
                 "works. quotes namespace",
                 culprit("Deployment", ns, name, "bad_rollout"), objects, logs)


def edge_uploads(root: Path) -> Path:
    """A DaemonSet's update breaks uploads on every node; its older pods are all gone."""
    ns, name = "edge", "edge-gateway"
    image = "reg.io/edge-gateway:3.1.0"
    labels = {"app": name}
    suffixes = ("b4n7q", "c8t2v", "d5w9x")
    pods = [f"{name}-{s}" for s in suffixes]
    objects: list[Obj] = [
        namespace(ns), node(),
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": meta(name, ns, uid=f"uid-{name}", creationTimestamp=ago(200_000)),
         "spec": {"selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [container(name, image)]}},
                  "updateStrategy": {"type": "RollingUpdate"}},
         "status": {"desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3,
                    "currentNumberScheduled": 3, "numberAvailable": 3}},
        *[_pod(ns, p, ("DaemonSet", name), {**labels, "controller-revision-hash": "7d8f9c6b5",
                                            "pod-template-generation": "9"},
               [container(name, image)], [_running(name, image, 44 - 2 * i)], 44 - 2 * i)
          for i, p in enumerate(pods)],
        *[_event(ns, "DaemonSet", name, "SuccessfulDelete", f"Deleted pod: {name}-old{i}",
                 first=44.5 - 2 * i, last=44.5 - 2 * i, type_="Normal") for i in range(3)],
        *_service(ns, name, labels, 80, 8080, 3)]
    routes = ["GET /v1/items/{id}", "GET /v1/items?page=..."]
    logs = _traffic(ns, name, [f"{name}-old{i}" for i in range(3)],
                    [*routes, "POST /v1/uploads"], 150, 46)
    logs += _traffic(ns, name, pods, routes, 42, 0)
    for minute in range(42, 0, -1):
        logs.append(log(minute, "error", name, ns, pods[minute % 3],
                        "POST /v1/uploads 500 3ms - multipart: NextPart: boundary not found"))
    return write(root, "edge-uploads-update",
                 "file uploads through the edge fail with 500 since about 10:15, browsing "
                 "items is fine",
                 culprit("DaemonSet", ns, name, "bad_rollout"), objects, logs)


def resolver_oom(root: Path) -> Path:
    """The cluster's DNS server (not called coredns) is OOM-killed over and over: callers in
    two namespaces cannot resolve names. The category is the server's own state, its
    memory limit (what to fix), not its callers' DNS failures (issue #16)."""
    ns, name = "kube-system", "cluster-resolver"
    image = "registry.k8s.io/dns/k8s-dns-kube-dns:1.23.1"
    labels = {"k8s-app": "kube-dns"}
    pods = [f"{name}-5c6d7e8f9-{s}" for s in ("j3k4l", "m5n6p")]
    dns_container = container("resolver", image, ports=[
        {"containerPort": 53, "protocol": "UDP", "name": "dns"},
        {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"}],
        resources={"limits": {"memory": "70Mi"}})
    killed = {"name": "resolver", "image": image, "ready": False, "restartCount": 9,
              "state": {"waiting": {"reason": "CrashLoopBackOff"}},
              "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                           "startedAt": ago(3), "finishedAt": ago(2.5)}}}
    app = container("api", "reg.io/api:2.0")
    objects: list[Obj] = [
        namespace(ns), namespace("orders"), namespace("payments"), node(),
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": meta(name, ns, uid=f"uid-{name}", creationTimestamp=ago(300_000),
                          annotations={"deployment.kubernetes.io/revision": "3"}),
         "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [dns_container]}}},
         "status": {"replicas": 2, "readyReplicas": 0, "updatedReplicas": 2,
                    "availableReplicas": 0}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta(f"{name}-5c6d7e8f9", ns, creationTimestamp=ago(60_000),
                          annotations={"deployment.kubernetes.io/revision": "3"},
                          labels={**labels, "pod-template-hash": "5c6d7e8f9"},
                          ownerReferences=[{"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": name, "controller": True,
                                            "uid": f"uid-{name}"}]),
         "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [dns_container]}}},
         "status": {"replicas": 2, "readyReplicas": 0}},
        *[_pod(ns, p, ("ReplicaSet", f"{name}-5c6d7e8f9"),
               {**labels, "pod-template-hash": "5c6d7e8f9"}, [dns_container], [killed], 50_000)
          for p in pods],
        *_service(ns, "kube-dns", labels, 53, 53, 0, 2, protocol="UDP"),
        _event(ns, "Pod", pods[0], "BackOff", "Back-off restarting failed container resolver "
               f"in pod {pods[0]}_{ns}", count=120, first=30, last=0.5)]
    callers = [("orders", "checkout", "payment call failed: Post \"http://payments-api.payments"
                ".svc.cluster.local/v1/charge\": dial tcp: lookup payments-api.payments.svc."
                "cluster.local: server misbehaving"),
               ("payments", "payments-api", "ledger write failed: could not translate host name "
                "\"ledger-db.payments.svc.cluster.local\" to address: Temporary failure in name "
                "resolution")]
    logs: list[Obj] = []
    for caller_ns, caller, message in callers:
        caller_pods = [f"{caller}-7f8e9d6c5-{s}" for s in ("q1w2e", "r3t4y")]
        objects += [
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": meta(caller, caller_ns, uid=f"uid-{caller}",
                              creationTimestamp=ago(90_000),
                              annotations={"deployment.kubernetes.io/revision": "5"}),
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": caller}},
                      "template": {"metadata": {"labels": {"app": caller}},
                                   "spec": {"containers": [app]}}},
             "status": {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
                        "availableReplicas": 2}},
            *[_pod(caller_ns, p, ("Deployment", caller), {"app": caller}, [app],
                   [_running("api", "reg.io/api:2.0", 9000)], 9000) for p in caller_pods],
            *_service(caller_ns, caller, {"app": caller}, 80, 8080, 2)]
        logs += _traffic(caller_ns, caller, caller_pods, ["GET /v1/status"], 60, 0, every=5)
        logs += [log(m, "error", caller, caller_ns, caller_pods[int(m) % 2], message)
                 for m in range(28, 0, -1)]
    return write(root, "resolver-oom",
                 "checkout in orders and payments-api are failing since 10:30, lots of "
                 "errors, nothing was deployed",
                 culprit("Deployment", ns, name, "oom_killed"), objects, logs)


def write_regressions(root: Path) -> list[Path]:
    """Write the three scenarios under `root`; returns their folders."""
    return [make(root) for make in (quote_pdf, edge_uploads, resolver_oom)]


__all__ = ["NOW", "write_regressions"]
