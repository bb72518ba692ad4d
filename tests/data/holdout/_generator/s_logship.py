"""Prod log gaps: the log shipper DaemonSet got a multi-line 'reduce' transform in its new
generation; its memory grows with each node's log volume until the 256Mi limit, the kernel
OOM-kills it and the events buffered in memory are lost. Busy nodes lose the most."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import MIB, Story, container_metrics, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, iso, running
from tests.scenario_tools.sim import Run
from tests.scenario_tools.telemetry import integrate

from .base import (
    PCtr,
    alive,
    configmap,
    daemonset,
    deployment,
    eks_nodes,
    gauge,
    http_series,
    quiet_container,
    set_times,
)

ID = "prod-log-gaps"
NOW = datetime.fromisoformat("2027-01-18T21:14:00+00:00")
REGION = "eu-central-1"
ECR = "771342095829.dkr.ecr.eu-central-1.amazonaws.com"
LIMIT = 256 * MIB
BUCKETS = (0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 3.0)

VECTOR_OLD = """\
data_dir: /var/lib/vector
sources:
  k8s_logs:
    type: kubernetes_logs
    glob_minimum_cooldown_ms: 1000
transforms:
  parse:
    type: remap
    inputs: [k8s_logs]
    source: |
      . = merge!(., parse_json(.message) ?? {})
sinks:
  es_out:
    type: elasticsearch
    inputs: [parse]
    endpoints: ["https://logs-prod.es.eu-central-1.aws.found.io:443"]
    mode: data_stream
    buffer:
      type: memory
      max_events: 2000
  prom:
    type: prometheus_exporter
    inputs: [internal]
    address: 0.0.0.0:9598
"""
VECTOR_NEW = VECTOR_OLD.replace("""  parse:
    type: remap
    inputs: [k8s_logs]""", """  java_multiline:
    type: reduce
    inputs: [k8s_logs]
    group_by: [kubernetes.pod_uid, kubernetes.container_name, stream]
    starts_when: 'match(string!(.message), r'^\\d{4}-\\d{2}-\\d{2}')'
    expire_after_ms: 120000
    flush_period_ms: 1000
    merge_strategies:
      message: concat_newline
  parse:
    type: remap
    inputs: [java_multiline]""").replace("max_events: 2000", "max_events: 20000")


def build() -> Story:
    s = Story(
        id=ID,
        title="Holes in the production logs",
        now=NOW,
        report="""\
Kibana is missing chunks of prod logs since this afternoon: booking-api has holes of a few
minutes at a time, some pods look worse than others, and a payment incident we investigated
had no logs at all for the key 3 minutes. The Elastic Cloud deployment is green and not
throttling. Is something wrong on the cluster side?
""",
        truth=truth(
            "oom_killed", "DaemonSet", "observability", "vector-agent",
            ["OOMKilled", "256Mi", "exit code 137", "java_multiline", "type: reduce"],
            "vector-agent's new generation (the java_multiline reduce transform and a 20000 "
            "event memory buffer) needs more memory than its 256Mi limit on busy nodes: raise "
            "the limit (or bound the transform and use a disk buffer), or roll the DaemonSet "
            "back to the previous configuration."))
    set_times(s, 4.0, 60)
    c = s.cluster
    t0 = NOW - timedelta(hours=3, minutes=21, seconds=14)
    for ns, days in (("default", 612), ("kube-system", 612), ("booking", 480), ("web", 480),
                     ("observability", 455)):
        c.namespace(ns, s.ago(days=days))
    gp = eks_nodes(s, 3, region=REGION, subnet=16, pool="general-m7i", instance="m7i.2xlarge",
                   kubelet="v1.31.13-eks-4a5b1c2", kernel="6.1.155-176.282.amzn2023.x86_64",
                   os_image="Amazon Linux 2023.9.20251208", cpu="8", memory="32100412Ki",
                   alloc_cpu="7910m", alloc_memory="31083580Ki", pods="58", days=5.7)
    cp = eks_nodes(s, 2, region=REGION, subnet=17, pool="compute-c7i", instance="c7i.4xlarge",
                   kubelet="v1.31.13-eks-4a5b1c2", kernel="6.1.155-176.282.amzn2023.x86_64",
                   os_image="Amazon Linux 2023.9.20251208", cpu="16", memory="31976512Ki",
                   alloc_cpu="15890m", alloc_memory="30959680Ki", pods="234", days=4.9)
    nodes = gp + cp

    # ---- the applications (their logs are what vector ships)
    booking = Ctr("booking-api", f"{ECR}/voyager/booking-api:7.3.2", port=8080,
                  requests={"cpu": "500m", "memory": "1536Mi"}, limits={"memory": "2Gi"},
                  env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError",
                       "LOGGING_FORMAT": "text"},
                  readiness=http_probe("/actuator/health/readiness", delay=30),
                  liveness=http_probe("/actuator/health/liveness", delay=90, period=20))
    _, bookings = deployment(s, "booking", "booking-api", [booking], replicas=3,
                             node_list=[cp[0], gp[0], cp[1]], revision=58,
                             rollout=s.ago(days=2, hours=4))
    fare = Ctr("fare-search", f"{ECR}/voyager/fare-search:4.11.0", port=8080,
               requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2", "memory": "1536Mi"},
               readiness=http_probe("/ready", delay=10))
    _, fares = deployment(s, "booking", "fare-search", [fare], replicas=4,
                          node_list=[cp[0], cp[1], gp[1], gp[2]], revision=33,
                          rollout=s.ago(days=3, hours=11))
    pay = Ctr("payment-adapter", f"{ECR}/voyager/payment-adapter:2.0.9", port=8443,
              port_name="https", requests={"cpu": "200m", "memory": "512Mi"},
              limits={"memory": "768Mi"}, readiness=http_probe("/healthz", "https", delay=5))
    _, pays = deployment(s, "booking", "payment-adapter", [pay], replicas=2,
                         node_list=[gp[0], gp[1]], revision=21, rollout=s.ago(days=5, hours=2),
                         service=443, target="https")
    ui = Ctr("search-ui", f"{ECR}/voyager/search-ui:2027.2.1", port=3000,
             requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/api/health", delay=5))
    ui_kill = s.ago(days=1, hours=1, minutes=37)

    def ui_states(i: int, started: datetime) -> dict:
        if i != 2:
            return {}
        return {"search-ui": running(ui_kill + timedelta(seconds=9), restarts=1, last=ended(
            "OOMKilled", 137, started, ui_kill))}
    _, uis = deployment(s, "web", "search-ui", [ui], replicas=3, node_list=[gp[2], cp[0], gp[1]],
                        revision=140, rollout=s.ago(days=1, hours=3), statuses=ui_states)
    for pod in bookings:
        quiet_container(s, pod, "booking-api", 1210, cpu=0.42, limit_mib=2048)
        http_series(s, pod, "booking-api", rps=lambda t: 24 * _day(t),
                    codes={"200": lambda t: 0.962, "201": lambda t: 0.03,
                           "409": lambda t: 0.006, "500": lambda t: 0.0015},
                    median=lambda t: 0.085, buckets=BUCKETS)
    for pod in fares:
        container_metrics(s, pod, "fare-search", memory=lambda t: 1010 * MIB * (
            1 + 0.03 * math.sin(t / 1700)), cpu=lambda t: 1.55 * _day(t) * s.rng.uniform(0.9, 1.1),
            limit_memory=1536 * MIB, limit_cpu=2.0, throttle=lambda t: 0.07 * _day(t))
        http_series(s, pod, "fare-search", rps=lambda t: 41 * _day(t),
                    codes={"200": lambda t: 0.991, "504": lambda t: 0.004, "400": lambda t: 0.005},
                    median=lambda t: 0.34, buckets=BUCKETS, histogram=False)
    for pod in pays:
        quiet_container(s, pod, "payment-adapter", 431, cpu=0.06, limit_mib=768)
    blip = NOW - timedelta(minutes=42, seconds=50)
    pip = pays[1]["status"]["podIP"]
    c.event(pays[1], "Unhealthy", f'Readiness probe failed: Get "https://{pip}:8443/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{payment-adapter}")
    for pod in uis:
        quiet_container(s, pod, "search-ui", 301, cpu=0.18, limit_mib=768)

    # ---- vector-agent: previous generation deleted at the rollout, the new one OOMs
    vlabels = {"app.kubernetes.io/name": "vector-agent", "app.kubernetes.io/instance": "vector",
               "app.kubernetes.io/component": "Agent"}
    configmap(s, "observability", "vector-agent", {"vector.yaml": VECTOR_NEW},
              created=s.ago(days=455), labels=vlabels,
              edited=("argocd-controller", t0 - timedelta(seconds=31)))
    vec = PCtr("vector", "timberio/vector:0.43.1-distroless-libc", port=None,
               requests={"cpu": "100m", "memory": "64Mi"}, limits={"memory": "256Mi"},
               args=["--config-dir", "/etc/vector/"],
               env={"VECTOR_LOG": "info", "VECTOR_SELF_NODE_NAME": "$(NODE_NAME)",
                    "VECTOR_SELF_POD_NAME": "$(POD_NAME)", "PROCFS_ROOT": "/host/proc"},
               mounts=[{"mountPath": "/var/lib/vector", "name": "data"},
                       {"mountPath": "/etc/vector/", "name": "config", "readOnly": True},
                       {"mountPath": "/var/log/", "name": "var-log", "readOnly": True},
                       {"mountPath": "/var/lib", "name": "var-lib", "readOnly": True}],
               ports=[("prom-exporter", 9598, "TCP")])
    # each node's instance lives until its working set reaches the limit
    lives = {0: 33.0, 1: 19.0, 2: 71.0, 3: 13.5, 4: 24.0}  # minutes, by node (gp0..2, cp0..1)
    plans: dict[int, list[tuple[Run, float]]] = {}
    starts: dict[int, datetime] = {}
    for k in range(len(nodes)):
        born = t0 + timedelta(seconds=38 * k + 4)
        first = born + timedelta(seconds=3 + s.rng.uniform(0, 2))
        runs: list[tuple[Run, float]] = []
        start = first
        while True:
            life = lives[k] * 60 * s.rng.uniform(0.82, 1.18)
            death = start + timedelta(seconds=life)
            if death > NOW:
                runs.append((Run(start, None), life))
                break
            runs.append((Run(start, death), life))
            start = death + timedelta(seconds=10 + s.rng.uniform(0.6, 1.6))
        plans[k], starts[k] = runs, born

    def vstates(i: int, node: Any, started: datetime) -> dict:
        runs = plans[i]
        cur, prev = runs[-1][0], runs[-2][0]
        return {"vector": running(cur.start, restarts=len(runs) - 1,
                                  last=ended("OOMKilled", 137, prev.start, prev.end))}
    _, vpods = daemonset(s, "observability", "vector-agent", [vec], node_list=nodes,
                          generation=11, since=t0, labels=vlabels, sa="vector-agent",
                          stagger=38, offset=4,
                          statuses=vstates,
                          annotations={"checksum/config": c.hexid("cfg", "new")},
                          volumes=[{"name": "data", "hostPath": {"path": "/var/lib/vector"}},
                                   {"name": "config", "projected": {"sources": [{"configMap": {
                                       "name": "vector-agent"}}]}},
                                   {"name": "var-log", "hostPath": {"path": "/var/log/"}},
                                   {"name": "var-lib", "hostPath": {"path": "/var/lib/"}}])
    lost: dict[str, list[tuple[float, float]]] = {}
    hour_ago = NOW - timedelta(hours=1)
    for k, pod in enumerate(vpods):
        # the daemonset helper picked its own creation times: use the plan's
        runs = plans[k]
        node = pod["spec"]["nodeName"]
        lost[node] = [(r.end.timestamp() - s.rng.uniform(50, 110), runs[j + 1][0].start.timestamp()
                       + 2) for j, (r, _) in enumerate(runs) if r.end is not None]
        lost[node].insert(0, (t0.timestamp() + 38 * k - 30, t0.timestamp() + 38 * k + 12))
        name = pod["metadata"]["name"]

        def mem(t: int, rs=runs) -> float | None:
            for r, life in rs:
                end = r.end.timestamp() if r.end else float("inf")
                if r.start.timestamp() <= t < end:
                    frac = (t - r.start.timestamp()) / life
                    return min(LIMIT * 0.997, 71 * MIB + (LIMIT - 71 * MIB) * frac ** 1.15)
            return None
        restarts = [int(r.start.timestamp()) for r, _ in runs[1:]]
        container_metrics(s, pod, "vector", memory=mem, cpu=lambda t: 0.09 + 0.05 * s.rng.random(),
                          restarts=restarts, limit_memory=LIMIT)
        gauge(s, "kube_pod_container_status_last_terminated_reason",
              {"namespace": "observability", "pod": name, "container": "vector",
               "reason": "OOMKilled"},
              lambda t, rs=runs: 1.0 if any(r.end and r.end.timestamp() <= t for r, _ in rs)
              else 0.0, "Describes the last reason the container was in terminated state.",
              times=alive(s, pod))
        sent = integrate(alive(s, pod), lambda t, kk=k: 380 / lives[kk] * 10,
                         resets=restarts, rng=s.rng)
        s.metrics.counter("vector_component_sent_events_total",
                          {"namespace": "observability", "pod": name, "component_id": "es_out",
                           "component_kind": "sink", "component_type": "elasticsearch"},
                          sent, "The number of events sent by this component.")
        # events of the last hour: the kubelet restarts the container after each kill
        chain = [r.start for r, _ in runs[1:] if r.start >= hour_ago]
        if chain:
            field = "spec.containers{vector}"
            for reason, msg in (("Pulled", 'Container image "timberio/vector:0.43.1-distroless-'
                                 'libc" already present on machine'),
                                ("Created", "Created container: vector"),
                                ("Started", "Started container vector")):
                c.event(pod, reason, msg, first=chain[0], last=chain[-1], count=len(chain),
                        field_path=field)
        # kubectl logs: the current and the previous (killed) instance
        cur, prev = runs[-1][0], runs[-2][0]
        s.pod_log(pod, "vector", _vector_lines(s, node, cur.start, NOW))
        s.pod_log(pod, "vector", _vector_lines(s, node, prev.start, prev.end), previous=True)
    # the previous generation's pods, deleted by the rolling update (metrics only)
    for k in range(len(nodes)):
        ghost = {"metadata": {"name": f"vector-agent-{c.token(5)}", "namespace": "observability",
                              "creationTimestamp": iso(s.ago(days=4, hours=k)),
                              "_deleted": int(t0.timestamp()) + 38 * k}}
        times = alive(s, ghost)
        base = s.rng.uniform(78, 104) * MIB
        s.metrics.family("container_memory_working_set_bytes", "gauge", "").add(
            {"namespace": "observability", "pod": ghost["metadata"]["name"], "container": "vector"},
            [(t, round(base * (1 + 0.02 * math.sin(t / 600)), 1)) for t in times])
    gauge(s, "kube_daemonset_status_number_ready", {"namespace": "observability",
                                                    "daemonset": "vector-agent"},
          lambda t: 5.0 - sum(1 for k in plans for r, _ in plans[k] if r.end and
                              r.end.timestamp() <= t < r.end.timestamp() + 12),
          "The number of nodes that should be running the daemon pod and have one or more of "
          "the daemon pod running and ready.")

    # ---- application logs, as the nodes wrote them and as Elasticsearch got them
    start = NOW - timedelta(hours=4)
    app_logs: list[tuple[dict, str, str, list[tuple[str, str, dict]], int]] = []
    app_logs += [(p, "booking-api", "booking-api", [
        ("info", "POST /v2/bookings 201 booking=VY{n} pax=2 218ms",
         {"http.response.status_code": 201}),
        ("info", "GET /v2/bookings/VY{n} 200 31ms", {"http.response.status_code": 200}),
        ("warn", "fare hold expired before payment, booking VY{n} released", {}),
        ("info", "payment authorised for booking VY{n} via adyen", {}),
        ("error", "c.v.b.payment.PaymentClient - payment declined: REFUSED (Not enough balance) "
         "booking=VY{n}", {"error.type": "PaymentDeclinedException"}),
    ], 140) for p in bookings]
    app_logs += [(p, "fare-search", "fare-search", [
        ("info", "search AMS-LIS 2027-02-14 pax=2: 188 offers in 412ms", {}),
        ("warn", "GDS amadeus slow response 2.9s for MAD-JFK", {}),
        ("info", "cache hit ratio 0.71 over last 60s", {}),
    ], 120) for p in fares]
    app_logs += [(p, "payment-adapter", "payment-adapter", [
        ("info", "authorise OK psp=adyen amount=412.80 EUR", {}),
        ("warn", "3DS challenge not completed within 300s, cancelling session", {}),
    ], 60) for p in pays]
    app_logs += [(p, "search-ui", "search-ui", [
        ("info", "GET /search?from=AMS&to=LIS 200", {"http.response.status_code": 200}),
        ("warn", "hydration mismatch on /deals (server vs client date)", {}),
    ], 70) for p in uis]
    for pod, ctr, svc, entries, n in app_logs:
        _app_logs(s, pod, ctr, svc, entries, n, start, lost)
    return s


def _day(t: int) -> float:
    hour = (t % 86400) / 3600
    return 1 + 0.3 * math.cos((hour - 19.5) / 24 * 2 * math.pi)


def _vector_lines(s: Story, node: str, start: datetime, end: datetime) -> list[str]:
    def at(sec: float) -> str:
        return (start + timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lines = [
        f'{at(0.01)}  INFO vector::app: Log level is enabled. level="info"',
        f'{at(0.02)}  INFO vector::app: Loading configs. paths=["/etc/vector"]',
        f'{at(0.31)}  INFO source{{component_kind="source" component_id=k8s_logs '
        'component_type=kubernetes_logs}: vector::sources::kubernetes_logs: Obtained Kubernetes '
        f'Node name to collect logs for (self). self_node_name="{node}"',
        f"{at(0.34)}  INFO vector::topology::running: Running healthchecks.",
        f'{at(0.35)}  INFO vector: Vector has started. debug="false" version="0.43.1" '
        'arch="x86_64" revision="e30bf1f 2024-12-10 16:14:47.175528383"',
        f"{at(0.36)}  INFO vector::app: API is disabled, enable by setting `api.enabled` to "
        "`true` and use commands like `vector top`.",
        f"{at(0.52)}  INFO vector::topology::builder: Healthcheck passed.",
    ]
    span = (end - start).total_seconds()
    t = 40.0
    while t < span - 5:
        lines.append(f"{at(t)}  INFO source{{component_kind=\"source\" component_id=k8s_logs "
                     "component_type=kubernetes_logs}:file_server: vector::internal_events::"
                     "file::source: Found new file to watch. file=/var/log/pods/"
                     f"booking_fare-search-{s.cluster.token(10)}/fare-search/0.log")
        t += s.rng.uniform(240, 900)
    return lines


def _app_logs(s: Story, pod: dict, ctr: str, svc: str, entries: list, n: int,
              start: datetime, lost: dict[str, list[tuple[float, float]]]) -> None:
    node = pod["spec"]["nodeName"]
    began = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"]["running"]
                                   ["startedAt"].replace("Z", "+00:00"))
    span = (NOW - start).total_seconds()
    lines = []
    for _ in range(n):
        level, message, fields = s.rng.choice(entries)
        message = message.replace("{n}", str(s.rng.randrange(100000, 999999)))
        when = start + timedelta(milliseconds=int(s.rng.uniform(0, span) * 1000))
        lines.append((when, level, message, fields))
    lines.sort(key=lambda x: x[0])
    text = []
    for when, level, message, fields in lines:
        if when >= began:
            stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
            text.append(f"{stamp} {level.upper():<5} {message}")
        ts = when.timestamp()
        if any(a <= ts <= b for a, b in lost.get(node, [])):
            continue  # buffered in the shipper's memory when it was killed
        s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=ctr, service=svc, node=node, **fields)
    s.pod_log(pod, ctr, text)
