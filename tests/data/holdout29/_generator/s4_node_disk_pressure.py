"""One node, launched from an old template with a 20Gi root volume instead of 100Gi, runs
out of disk: image garbage collection frees nothing, the kubelet evicts pods of several
workloads, the pressure clears, pods land there again and are evicted again. To the team
it looks like three unrelated workloads restarting at once.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Obj,
    Scenario,
    container,
    cumulative,
    deployment,
    event,
    healthy,
    http_probe,
    iso,
    namespace,
    node,
    pod,
    pod_ip,
    pod_metrics,
    replicaset,
    resources,
    rs_hash,
    running,
    service,
    steps,
    suffix,
    template,
)

NOW = "2026-03-24T13:15:00Z"
BAD = "ip-10-3-9-55.us-east-2.compute.internal"
SMALL_DISK = 20959212 * 1024
BIG_DISK = 104845292 * 1024
EVERY = 120


def evicted_message(cont: str, using: str) -> str:
    return ("The node was low on resource: ephemeral-storage. Threshold quantity: 2146223340, "
            f"available: 1821444Ki. Container {cont} was using {using}, request is 0, has "
            "larger consumption of ephemeral-storage. ")


def build() -> Path:
    sc = Scenario("shop-pods-keep-restarting", NOW)
    rng = random.Random(29004)
    good = [f"ip-10-3-{a}.us-east-2.compute.internal" for a in ("8-14", "8-201", "10-37",
                                                                "10-162")]
    first_pressure = sc.ago(minutes=52)
    pressure_now = sc.ago(minutes=9)
    for i, name in enumerate(good):
        sc.add(node(name, sc.ago(days=16 + i), "shop-m6i", "4", "16106120Ki", sc.ago(seconds=8),
                    zone=f"us-east-2{'abc'[i % 3]}", storage=f"{BIG_DISK // 1024}Ki"))
    sc.add(node(BAD, sc.ago(days=2, hours=3), "shop-m6i", "4", "16106120Ki", sc.ago(seconds=5),
                zone="us-east-2b", storage=f"{SMALL_DISK // 1024}Ki",
                allocatable={"cpu": "3920m", "ephemeral-storage": "18242267924",
                             "memory": "15198856Ki", "pods": "58"},
                conditions=[{"type": "DiskPressure", "status": "True",
                             "reason": "KubeletHasDiskPressure",
                             "message": "kubelet has disk pressure",
                             "lastHeartbeatTime": iso(sc.ago(seconds=5)),
                             "lastTransitionTime": iso(pressure_now)}],
                taints=[{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule",
                         "timeAdded": iso(pressure_now)}]))
    for ns in ("default", "shop", "kube-system", "observability"):
        sc.add(namespace(ns, sc.ago(days=500)))

    evictions = [sc.ago(minutes=51), sc.ago(minutes=50), sc.ago(minutes=27),
                 sc.ago(minutes=8), sc.ago(minutes=8)]
    workloads = {"orders-api": (4, "registry.corp/shop/orders-api:12.4.0", "76Ki"),
                 "recommendations": (3, "registry.corp/shop/recommendations:5.0.3", "112Ki"),
                 "cart-worker": (2, "registry.corp/shop/cart-worker:2.9.1", "48Ki")}
    plan: dict[str, list[datetime]] = {"orders-api": [evictions[0], evictions[2]],
                                       "recommendations": [evictions[1], evictions[3]],
                                       "cart-worker": [evictions[4]]}
    times = steps(sc.ago(hours=3), sc.now, EVERY)
    front = healthy(sc, "shop", "storefront", "registry.corp/shop/storefront:2026.12", 3, good,
                    resources("300m", "512Mi", "1", "1Gi"), sc.ago(days=300), revision=118,
                    rollout_at=sc.ago(days=1, hours=6))
    for name, (replicas, image, using) in workloads.items():
        labels = {"app": name}
        tmpl = template(labels, [container(name, image, resources("250m", "512Mi", "1", "1Gi"),
                                           8080, readinessProbe=http_probe("/ready"))])
        h = rs_hash(name + "x")
        rsname = f"{name}-{h}"
        sc.add(deployment("shop", name, sc.ago(days=300), tmpl, replicas, 30 + replicas))
        sc.add(replicaset("shop", name, h, sc.ago(days=4, hours=replicas), tmpl, replicas,
                          30 + replicas))
        if name != "cart-worker":
            sc.add(service("shop", name, sc.ago(days=300), labels))
        live: list[str] = []
        for i in range(replicas - len(plan[name])):
            pname = f"{rsname}-{suffix(name + str(i))}"
            started = sc.ago(days=4, hours=replicas, minutes=-i)
            sc.add(pod("shop", pname, started, tmpl, good[i % 4], [
                {"name": name, **running(started + timedelta(seconds=12))}],
                ("ReplicaSet", rsname), ip=pod_ip(pname), extra_labels={"pod-template-hash": h}))
            live.append(pname)
        for j, at in enumerate(plan[name]):
            gone = f"{rsname}-{suffix(name + ('ev' if j == 0 else 'new') + str(max(0, j - 1)))}"
            created = sc.ago(days=2) if j == 0 else at - timedelta(minutes=17)
            status_extra: Obj = {"reason": "Evicted", "message": evicted_message(name, using)}
            sc.add(pod("shop", gone, created, tmpl, BAD, [
                {"name": name, "ready": False, "restartCount": 0, "started": False,
                 "state": {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                          "message": "The container could not be located "
                                                     "when the pod was terminated",
                                          "startedAt": iso(created + timedelta(seconds=9)),
                                          "finishedAt": iso(at)}}}],
                ("ReplicaSet", rsname), phase="Failed", extra_labels={"pod-template-hash": h},
                status_extra=status_extra))
            sc.add(event("shop", "Pod", gone, "Evicted", evicted_message(name, using), at,
                         type_="Warning", host=BAD))
            sc.add(event("shop", "Pod", gone, "Killing", f"Stopping container {name}", at,
                         host=BAD, field=f"spec.containers{{{name}}}"))
            fresh = f"{rsname}-{suffix(name + 'new' + str(j))}"
            born = at + timedelta(seconds=2)
            if j == len(plan[name]) - 1 or name == "cart-worker":
                sc.add(pod("shop", fresh, born, tmpl, good[(j + 2) % 4], [
                    {"name": name, **running(born + timedelta(seconds=11))}],
                    ("ReplicaSet", rsname), ip=pod_ip(fresh),
                    extra_labels={"pod-template-hash": h}))
                live.append(fresh)
            sc.add(event("shop", "ReplicaSet", rsname, "SuccessfulCreate",
                         f"Created pod: {fresh}", born, component="replicaset-controller",
                         api="apps/v1"))
            back = j < len(plan[name]) - 1 and name != "cart-worker"
            target = BAD if back else good[(j + 2) % 4]
            sc.add(event("shop", "Pod", fresh, "Scheduled",
                         f"Successfully assigned shop/{fresh} to {target}", born,
                         component="default-scheduler"))
            sc.log(at - timedelta(seconds=1), name, "shop", gone, "info",
                   "received SIGTERM, draining connections (grace 30s)")
        for p in live:
            pod_metrics(sc.metrics, "shop", p, name, times,
                        lambda t: 300e6 + rng.uniform(-1e7, 1e7), lambda t: 0.12, 1.0,
                        1073741824, throttle=lambda t: 0.01, every=EVERY)
        if name == "orders-api":
            for p in live:
                base = {"namespace": "shop", "pod": p, "service": name}
                sc.metrics.counter("http_requests_total", {**base, "code": "200"},
                                   cumulative(times, lambda t: 22.0, EVERY))
                sc.metrics.counter("http_requests_total", {**base, "code": "503"},
                                   cumulative(times, lambda t: 0.05 + (
                                       1.2 if any(0 <= (t - e).total_seconds() < 240
                                                  for e in evictions) else 0.0), EVERY))
            for k in range(0, 180, 3):
                at = sc.ago(minutes=180 - k)
                sc.log(at, name, "shop", live[k % len(live)], "info",
                       f"GET /v1/orders/history?customer={rng.randint(10**5, 10**6)} 200 "
                       f"{rng.randint(18, 90)}ms", **{"http.response.status_code": 200})
            for e in evictions[:4]:
                sc.log(e + timedelta(seconds=20), "storefront", "shop", front[0],
                       "error", "GET http://orders-api.shop/v1/orders/history: 503 Service "
                       "Unavailable (upstream connect error or disconnect/reset before "
                       "headers. reset reason: connection termination)")
    healthy(sc, "observability", "grafana", "grafana/grafana:10.4.1", 1, [BAD],
            resources("100m", "256Mi", "500m", "512Mi"), sc.ago(days=200), revision=14,
            rollout_at=sc.ago(days=1, hours=22))

    # Node events: eviction threshold, image GC that cannot free anything.
    sc.add(event("default", "Node", BAD, "EvictionThresholdMet",
                 "Attempting to reclaim ephemeral-storage", first_pressure, pressure_now,
                 count=3, type_="Warning", host=BAD))
    sc.add(event("default", "Node", BAD, "NodeHasDiskPressure",
                 f"Node {BAD} status is now: NodeHasDiskPressure", first_pressure, pressure_now,
                 count=3, host=BAD))
    sc.add(event("default", "Node", BAD, "NodeHasNoDiskPressure",
                 f"Node {BAD} status is now: NodeHasNoDiskPressure",
                 first_pressure + timedelta(minutes=6), sc.ago(minutes=21), count=2, host=BAD))
    sc.add(event("default", "Node", BAD, "FreeDiskSpaceFailed",
                 "Failed to garbage collect required amount of images. Attempted to free "
                 "4198226329 bytes, but only found 0 bytes eligible to free.",
                 sc.ago(minutes=58), sc.ago(minutes=3), count=12, type_="Warning", host=BAD))
    sc.add(event("default", "Node", BAD, "ImageGCFailed",
                 "failed to garbage collect required amount of images. Attempted to free "
                 "4198226329 bytes, but only found 0 bytes eligible to free.",
                 sc.ago(minutes=58), sc.ago(minutes=3), count=12, type_="Warning", host=BAD))
    # node-exporter: the small root volume of the new node fills up; kubelet evictions.
    for n in [*good, BAD]:
        size = SMALL_DISK if n == BAD else BIG_DISK
        labels = {"instance": n, "node": n, "device": "/dev/nvme0n1p1", "fstype": "xfs",
                  "mountpoint": "/", "job": "node-exporter"}
        sc.metrics.gauge("node_filesystem_size_bytes", labels, [(t, size) for t in times])

        def avail(t: datetime, n: str = n, size: float = size) -> float:
            if n != BAD:
                return size * (0.61 + 0.002 * rng.random())
            minutes = (t - sc.ago(hours=3)).total_seconds() / 60
            free = 0.24 - 0.0013 * minutes
            for e in evictions:
                if t >= e:
                    free += 0.015
            return size * max(0.085, free + 0.003 * rng.random())

        sc.metrics.gauge("node_filesystem_avail_bytes", labels, [(t, avail(t)) for t in times])
    sc.metrics.counter("kubelet_evictions_total", {"instance": BAD, "node": BAD,
                                                   "eviction_signal": "nodefs.available"},
                       [(t, float(sum(1 for e in evictions if e <= t))) for t in times])
    return sc.write({
        "title": "Shop pods keep restarting",
        "report": "orders-api, recommendations and cart-worker pods keep restarting in prod "
                  "since about an hour, order history is flaky (503 here and there). nothing "
                  "was deployed today afaik. memory leak in the new http client lib?\n",
        "truth": {"category": "node_failure",
                  "culprit": {"kind": "Node", "namespace": "", "name": BAD},
                  "evidence": ["DiskPressure", "The node was low on resource: ephemeral-storage",
                               "Failed to garbage collect required amount of images"],
                  "fix": f"Cordon and drain {BAD} and replace it with a node of the current "
                         "launch template (100Gi root volume); its 20Gi disk fills with images "
                         "and the kubelet keeps evicting pods."},
    })
