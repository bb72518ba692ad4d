"""Ferries: the summer timetable went on sale at 08:00 and booking-gateway is slow. Its HPA
scales on requests per second per pod (a Pods metric from prometheus-adapter, target 40);
it went from 3 to its maximum of 8 replicas within ten minutes and has sat there since, with
about 70 requests a second per pod, ScalingLimited=True (TooManyReplicas). The pods are busy
but not CPU-limited, the node group has room for many more, and latency and 503s rise with
the queueing. Red herrings: the fares database's slow query log, the payment provider's
latency, and an OOM restart of one pod the day before."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, running

from .kit4 import Incident, hexof, hpa, pool, ramp

ID = "ferry-booking-slow"
NOW = datetime.fromisoformat("2028-04-12T09:05:00+00:00")
NS = "sailings"
REG = "cr.yandex/crp5t7b2k0m4q8w1e3r6/seaways"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Ferry booking slow since the summer timetable went on sale",
        now=NOW,
        report="""\
The summer timetable went on sale at 08:00 and booking is crawling: the seat map takes
10-20 seconds and some customers get "Service temporarily unavailable". We expected the
rush and the autoscaling did kick in, but it is still slow an hour later. What is the
bottleneck?
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "booking-gateway",
            ["maxReplicas: 8", "ScalingLimited", "TooManyReplicas",
             "http_requests_per_second"],
            "booking-gateway's HPA has been at its maximum of 8 replicas since 08:09 while "
            "the per-pod request rate (~70/s) is far above its target of 40 "
            "(ScalingLimited=True, TooManyReplicas); the node group has spare capacity. "
            "Raise maxReplicas (to ~16) and keep the fares database's connection limits in "
            "mind."))
    set_times(s, 1.6, 60)
    c = s.cluster
    namespaces(s, {"default": 640, "kube-system": 640, NS: 610, "payments": 600})
    kind = NodeKind("standard-v3", "8", "32863608Ki", "7780m", "30119288Ki", "v1.30.1",
                    "5.15.0-124-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.6.28",
                    pods="110")
    group = "cat" + hexof(s, "ng", n=17)

    def namer(i: int) -> tuple[str, str]:
        return f"cl1{hexof(s, 'cl', n=17)}-{['ivyh', 'ukox', 'ebap', 'omyr', 'ypol'][i]}", \
            f"10.129.0.{11 + 6 * i}"

    nodes = pool(s, 5, kind=kind, namer=namer, days=6.0, region="ru-central1",
                 zones=["ru-central1-a", "ru-central1-b", "ru-central1-d"],
                 labels=lambda i, n: {"yandex.cloud/node-group-id": group,
                                      "yandex.cloud/pci-topology": "k8s",
                                      "yandex.cloud/preemptible": "false",
                                      "node.kubernetes.io/kube-proxy-ds-ready": "true",
                                      "node.kubernetes.io/masq-agent-ds-ready": "true",
                                      "node.kubernetes.io/instance-type": "standard-v3"},
                 provider=lambda i, n: f"yandex://fhm{hexof(s, 'vm', n, n=17)}",
                 cidr=lambda i: f"10.112.{128 + i}.0/24")
    sale = NOW.replace(hour=8, minute=0, second=0)
    top = sale + timedelta(minutes=9, seconds=12)

    def total(t: int) -> float:  # whole-service requests a second
        return 95.0 + 470.0 * ramp(t, sale, 12) * (1 - 0.08 * ramp(t, sale + timedelta(
            minutes=50), 40))

    def replicas(t: int) -> int:
        if t < sale.timestamp() + 75:
            return 3
        return min(8, 3 + int((t - sale.timestamp() - 75) / 95))

    def per_pod(t: int) -> float:
        return total(t) / replicas(t)

    def median(t: int) -> float:
        return 0.12 + 0.09 * max(0.0, per_pod(t) - 45) ** 1.25

    gw = Ctr("booking-gateway", f"{REG}/booking-gateway:9.4.0", port=8080,
             requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             env={"WORKER_THREADS": "64", "FARES_DB_POOL": "24"},
             readiness=http_probe("/ready", delay=10, timeout=2),
             liveness=http_probe("/live", delay=30, period=20, timeout=3))
    starts = [s.ago(days=2, hours=4) + timedelta(seconds=40 * i) for i in range(3)] + [
        sale + timedelta(seconds=75 + 95 * k + 3) for k in range(5)]

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        if i != 1:
            return {}
        when = s.ago(hours=21, minutes=12)
        return {"booking-gateway": running(when, restarts=1, last=ended(
            "OOMKilled", 137, started, when - timedelta(seconds=1)))}
    work, pods = deploy(s, NS, "booking-gateway", [gw], replicas=8, nodes=nodes, revision=118,
                        rollout=starts[0] - timedelta(seconds=5), born=lambda i: starts[i],
                        statuses=states)
    hpa(s, work, min_=3, max_=8, metrics=[{"type": "Pods", "pods": {
        "metric": {"name": "http_requests_per_second"},
        "target": {"type": "AverageValue", "averageValue": "40"}}}],
        current=[{"type": "Pods", "pods": {"metric": {"name": "http_requests_per_second"},
                                           "current": {"averageValue": "69733m"}}}],
        replicas=8, desired=8, created=s.ago(days=240), last_scale=top, conditions=[
            ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current "
             "size", top + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from pods metric http_requests_per_second",
             s.ago(days=6)),
            ("ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more "
             "than the maximum replica count", top)])
    for k, n in enumerate((4, 5, 6, 7, 8)):
        when = sale + timedelta(seconds=74 + 95 * k)
        if when < NOW - timedelta(hours=1):
            continue  # the API server dropped the older ones
        c.event(work.obj, "SuccessfulRescale", f"New size: {n}; reason: pods metric "
                "http_requests_per_second above target", first=when,
                component="horizontal-pod-autoscaler", host="")
    hpa_labels = {"namespace": NS, "horizontalpodautoscaler": "booking-gateway"}
    gauge(s, "kube_horizontalpodautoscaler_spec_max_replicas", hpa_labels, lambda t: 8.0,
          "Upper limit for the number of pods that can be set by the autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_current_replicas", hpa_labels,
          lambda t: float(replicas(t)), "Current number of replicas of pods managed by this "
          "autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_desired_replicas", hpa_labels,
          lambda t: float(min(8, max(3, round(total(t) / 40 + 0.49)))),
          "Desired number of replicas of pods managed by this autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_condition", {**hpa_labels, "condition":
          "ScalingLimited", "status": "true"},
          lambda t: 1.0 if t < sale.timestamp() or t >= top.timestamp() else 0.0,
          "The condition of this autoscaler.")
    for pod in pods:
        quiet(s, [pod], "booking-gateway", 720)
        cpu_seconds(s, pod, "booking-gateway", lambda t: (0.09 + 0.0125 * per_pod(t)) *
                    s.rng.uniform(0.9, 1.1))
        requests(s, pod, "booking-gateway", rps=per_pod, codes={
            "200": lambda t: 0.99 - min(0.06, 0.002 * max(0.0, per_pod(t) - 50)),
            "503": lambda t: 0.0005 + min(0.06, 0.002 * max(0.0, per_pod(t) - 50)),
            }, median=median if pod in pods[:3] else None, buckets=(0.5, 2.5, 10.0))
        gauge(s, "http_requests_per_second", {"namespace": NS, "pod": pod["metadata"]["name"]},
              lambda t: per_pod(t) * s.rng.uniform(0.93, 1.07),
              "Recording rule: rate(http_requests_total[2m]) per pod (prometheus-adapter).")
    chatter(s, pods, "booking-gateway", "booking-gateway", [
        ("warn", "request queue depth 212 (worker threads 64/64), GET /v1/sailings/"
         "POR-CHE/2028-07-18/seatmap waited 8.9s", {}),
        ("error", "shedding load: queue depth 400 reached, returning 503",
         {"http.response.status_code": 503}),
        ("info", "POST /v1/bookings 201 1840ms", {}),
        ("warn", "fares-db pool: 22/24 connections in use, acquire took 310ms", {}),
    ], 160, start=sale + timedelta(minutes=6))
    chatter(s, pods[:3], "booking-gateway", "booking-gateway", [
        ("info", "POST /v1/bookings 201 240ms", {}),
    ], 30, end=sale)
    for nd in nodes:
        gauge(s, "instance:node_cpu_utilisation:rate5m", {"instance": nd["metadata"]["name"]},
              lambda t: (0.18 + 0.22 * ramp(t, sale, 12)) * s.rng.uniform(0.9, 1.1),
              "Recording rule: share of CPU time not idle, over 5m.")

    # ---- neighbours
    fares = Ctr("fares-db-proxy", f"{REG}/odyssey:1.3", port=6432, port_name="pg",
                requests={"cpu": "200m", "memory": "128Mi"}, limits={"memory": "256Mi"})
    _, fps = steady(s, NS, "fares-db-proxy", [fares], nodes=nodes, replicas=2, revision=7,
                    rollout=s.ago(days=5, hours=6), service=6432, target="pg", offset=2)
    quiet(s, fps, "fares-db-proxy", 60)
    chatter(s, fps, "fares-db-proxy", "fares-db-proxy", [
        ("warn", "slow query 1402ms: SELECT * FROM fare WHERE route_id=$1 AND sailing_date "
         "BETWEEN $2 AND $3 ORDER BY price", {}),
        ("info", "clients: 171 active, 12 waiting; servers: 60 active", {}),
    ], 60)
    pay = Ctr("checkout-psp-bridge", f"{REG}/checkout-psp-bridge:2.6.1", port=8080,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready"))
    _, pays = steady(s, "payments", "checkout-psp-bridge", [pay], nodes=nodes, replicas=2,
                     revision=33, rollout=s.ago(days=3, hours=11), offset=3)
    quiet(s, pays, "checkout-psp-bridge", 300)
    chatter(s, pays, "checkout-psp-bridge", "checkout-psp-bridge", [
        ("warn", "3-D Secure challenge took 6.2s for booking SW-2028-441201", {}),
        ("info", "payment captured for booking SW-2028-441187 (EUR 286.40)", {}),
    ], 60)
    return s
