"""Parcel logistics: printing shipping labels fails at the depots during the evening wave.
label-maker renders label PDFs on a fixed ThreadPoolExecutor "pdf-render" (16 threads, queue
of 500). Every render takes the lock of a shared font cache, so the threads mostly wait:
with the evening wave all 16 are active, the queue is full and new tasks are rejected
(RejectedExecutionException, HTTP 503). CPU stays low, so the CPU-based HPA never scales.
Nothing was deployed, nothing restarts, the database and the carrier APIs are fine.
Red herrings: the HPA far from its maximum, slow carrier API warnings, GC log lines."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit4 import Incident, hexof, hpa, pool, ramp

ID = "depot-label-printing-failing"
NOW = datetime.fromisoformat("2028-03-09T18:34:00+00:00")
NS = "courier"
REG = "harbor.parcelnet.lan/courier"
NAMES = ["brave-moth", "quiet-heron", "tidy-lynx", "bold-wren"]


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Depots cannot print shipping labels",
        now=NOW,
        report="""\
Depot staff in Leeds and Bristol say label printing fails every few scans since around
17:45 ("Label service busy, try again"), the evening trunking wave is backing up at the
dock doors. The label-maker pods are all Running, no restarts, and CPU is low. What is
going on?
""",
        truth=truth(
            "resource_exhaustion", "Deployment", NS, "label-maker",
            ["RejectedExecutionException", "pool size = 16, active threads = 16",
             "queued tasks = 500", "executor_queued_tasks"],
            "label-maker's pdf-render thread pool (16 threads, queue 500) is exhausted in the "
            "evening wave: all threads are active (waiting on the shared FontCache lock), "
            "the queue is full and renders are rejected with 503, while CPU is low so the "
            "HPA does not scale. Raise the pool size (and the queue), make the font cache "
            "lock-free or per-thread, and scale label-maker out by hand meanwhile."))
    set_times(s, 1.75, 60)
    namespaces(s, {"default": 1000, "kube-system": 1000, NS: 880, "tracking": 700})
    kind = NodeKind("", "24", "98632412Ki", "23800m", "96486288Ki", "v1.32.2",
                    "5.15.0-133-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.7.22")
    nodes = pool(s, 4, kind=kind, namer=lambda i: (NAMES[i], f"10.12.40.{51 + i}"), days=6.8,
                 region="", zones=["mdc-b"],
                 labels=lambda i, n: {"juju-application": "kubernetes-worker",
                                      "juju-charm": "kubernetes-worker",
                                      "juju.io/cloud": "maas",
                                      "juju-machine": f"{i + 4}"},
                 provider=lambda i, n: "", cidr=lambda i: f"192.168.{i * 2}.0/23")
    for n in nodes:
        n["metadata"]["labels"].pop("node.kubernetes.io/instance-type", None)
    wave = NOW.replace(hour=17, minute=18, second=0)

    def traffic(t: int) -> float:  # label requests a second, per pod
        return 6.0 + 11.5 * ramp(t, wave, 30)

    def busy(t: int) -> float:  # threads wanted (little's law with lock waits)
        return traffic(t) * 0.21 * (1 + 1.9 * ramp(t, wave, 30))

    def active(t: int) -> float:
        return min(16.0, busy(t) * s.rng.uniform(0.9, 1.1))

    def queued(t: int) -> float:
        over = max(0.0, busy(t) - 16) * 90 * ramp(t, wave + timedelta(minutes=20), 8)
        return min(500.0, over * s.rng.uniform(0.9, 1.1))

    def rejected(t: int) -> float:
        return max(0.0, traffic(t) * 0.22 * ramp(t, wave + timedelta(minutes=27), 6))

    app = Ctr("label-maker", f"{REG}/label-maker:5.7.3", port=8080,
              requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
              env={"RENDER_POOL_THREADS": "16", "RENDER_QUEUE_CAPACITY": "500",
                   "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=75 -XX:+UseG1GC"},
              readiness=http_probe("/actuator/health/readiness", delay=30),
              liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    work, pods = steady(s, NS, "label-maker", [app], nodes=nodes, replicas=3, revision=27,
                        rollout=s.ago(days=5, hours=22))
    for pod in pods:
        name = pod["metadata"]["name"]
        lab = {"namespace": NS, "pod": name, "name": "pdf-render"}
        quiet(s, [pod], "label-maker", 1090)
        cpu_seconds(s, pod, "label-maker", lambda t: (0.18 + 0.02 * traffic(t)) *
                    s.rng.uniform(0.9, 1.1))
        gauge(s, "executor_active_threads", lab, active, "The approximate number of threads "
              "that are actively executing tasks.")
        gauge(s, "executor_pool_max_threads", lab, lambda t: 16.0, "The maximum allowed "
              "number of threads in the pool.")
        gauge(s, "executor_queued_tasks", lab, queued, "The approximate number of tasks that "
              "are queued for execution.")
        app_counter(s, "executor_rejected_tasks_total", lab, s.times, rejected,
                    "The number of tasks rejected by the executor.")
        requests(s, pod, "label-maker", rps=traffic, codes={
            "200": lambda t: 1 - rejected(t) / traffic(t) - 0.001,
            "503": lambda t: rejected(t) / traffic(t), "422": lambda t: 0.001},
            median=lambda t: 0.16 + 2.8 * queued(t) / 500, buckets=(0.25, 1.0, 2.5, 10.0))
    pool_msg = ("Task com.parcelnet.label.RenderTask@{h} rejected from java.util.concurrent."
                "ThreadPoolExecutor@5d3f1a2b[Running, pool size = 16, active threads = 16, "
                "queued tasks = 500, completed tasks = {n}]")
    for k, pod in enumerate(pods):
        name = pod["metadata"]["name"]
        t = wave + timedelta(minutes=27 + k)
        while t < NOW:
            done = 410_000 + int((t - wave).total_seconds() * 8.1) + k * 31_000
            s.logs.add(t, "error", "POST /labels 503: " + pool_msg.format(
                h=hexof(s, name, str(t.timestamp()), n=8), n=done), namespace=NS, pod=name,
                container="label-maker", service="label-maker", node=pod["spec"]["nodeName"],
                **{"error.type": "java.util.concurrent.RejectedExecutionException",
                   "http.response.status_code": 503})
            t += timedelta(seconds=s.rng.uniform(25, 70))
        s.logs.add(wave + timedelta(minutes=31 + 7 * k), "warn", "pdf-render saturated: 16 of "
                   "16 threads active, 14 BLOCKED on com.parcelnet.label.pdf.FontCache@71c2e0d9 "
                   "(held by pdf-render-9)", namespace=NS, pod=name, container="label-maker",
                   service="label-maker", node=pod["spec"]["nodeName"])
    chatter(s, pods, "label-maker", "label-maker", [
        ("info", "label rendered for consignment PN4412098812GB (DPD-like 4x6, 203 dpi) in "
         "184ms", {}),
        ("warn", "carrier API parcelhub.example /v2/routes answered in 2210ms", {}),
        ("info", "[gc,start] GC(4411) Pause Young (Normal) (G1 Evacuation Pause) 612M->208M "
         "(1536M) 11.402ms", {}),
    ], 200)
    hpa(s, work, min_=3, max_=10, metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 38, "averageValue": "381m"}}}], replicas=3, desired=3,
        created=s.ago(days=300), last_scale=s.ago(days=5, hours=21), conditions=[
            ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current "
             "size", s.ago(days=5, hours=21)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from cpu resource utilization (percentage of "
             "request)", s.ago(days=5, hours=21)),
            ("ScalingLimited", "True", "TooFewReplicas", "the desired replica count is less "
             "than the minimum replica count", s.ago(days=5, hours=21))])

    # ---- neighbours
    tr = Ctr("scan-events", f"{REG}/scan-events:3.3.0", port=8080,
             requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/ready"))
    _, trs = steady(s, "tracking", "scan-events", [tr], nodes=nodes, replicas=3, revision=51,
                    rollout=s.ago(days=3, hours=2), offset=1,
                    restarted={2: (s.ago(days=1, hours=9), "Error", 1)})
    quiet(s, trs, "scan-events", 430)
    chatter(s, trs, "scan-events", "scan-events", [
        ("info", "scan DEPOT-LDS-04 PN4412098812GB ARRIVED_AT_HUB", {}),
        ("warn", "label print failure reported by scanner LDS-04-17 for PN4412101174GB", {}),
    ], 80)
    pg = Ctr("pgbouncer", f"{REG}/pgbouncer:1.23.1", port=6432, port_name="pg",
             requests={"cpu": "100m", "memory": "64Mi"}, limits={"memory": "128Mi"})
    _, pgs = steady(s, NS, "courier-db-pooler", [pg], nodes=nodes, replicas=2, revision=4,
                    rollout=s.ago(days=6, hours=3), service=6432, target="pg", offset=2)
    quiet(s, pgs, "pgbouncer", 19)
    chatter(s, pgs, "pgbouncer", "courier-db-pooler", [
        ("info", "stats: 88 xacts/s, 240 queries/s, xact 2210 us, query 790 us, wait 8 us", {}),
    ], 24)
    return s
