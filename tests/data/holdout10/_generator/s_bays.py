"""Warehouse yard: hauliers cannot book loading-bay slots in the carrier portal. The
bay-scheduler API runs blue/green: two Deployments, bay-scheduler-blue (live, 3 pods) and
bay-scheduler-green (scaled to zero after the last release). 24 minutes ago a cut-over
script, run in the wrong order, patched the Service bay-scheduler to select slot=green
before scaling green up, and then stopped. The Service selects no pod: its Endpoints are
empty, carrier-portal gets "connection refused" from the ClusterIP and answers 503, while
the blue pods are healthy and idle. Red herrings: carrier-portal 7.3.0 rolled out 55 minutes
ago (plausible alternative), a readiness blip of gate-camera-ingest in another namespace,
a few normal Redis timeouts."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, iso
from tests.scenario_tools.parts import readiness_blip

from .kit10 import Incident, NodeKind, provider_nodes, secs

ID = "bay-slot-booking-503"
NOW = datetime.fromisoformat("2028-06-02T06:41:00+00:00")
NS = "yard"
REG = "registry.gitlab.com/freightyard/platform"


def build() -> Incident:
    s = Incident(
        id=ID, title="Loading bay slot booking failing in the carrier portal", now=NOW,
        report="""\
Hauliers can't book or move loading-bay slots in the carrier portal since around 6:15,
they get "Service temporarily unavailable". The morning wave of trucks is arriving and the
gate team is booking slots by phone. Nothing was planned for this morning as far as I know.
""",
        truth=truth(
            "network", "Service", NS, "bay-scheduler",
            ["slot: green", "connection refused", "bay-scheduler-green", "kubectl-patch"],
            "The Service bay-scheduler was patched at 06:17 to select slot=green, but "
            "bay-scheduler-green has 0 replicas; the Service matches no pod, its Endpoints "
            "are empty and carrier-portal's calls are refused. Patch the selector back to "
            "slot=blue (or scale bay-scheduler-green up and wait for it to be ready before "
            "switching), then fix the cut-over script's order."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 500, "kube-system": 500, NS: 460, "iot": 300,
                   "ingress-nginx": 500})
    kind = NodeKind("g6-dedicated-8", "8", "16393568Ki", "7910m", "15242592Ki",
                    "v1.32.1", "6.1.0-31-cloud-amd64", "Debian GNU/Linux 12 (bookworm)",
                    runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "lke", 4, kind, days=5.7, group="yard")
    switch = NOW - timedelta(minutes=24, seconds=13)

    def live(t: int) -> bool:
        return t < switch.timestamp()

    # ---- bay-scheduler: blue serves, green is empty
    def sched(version: str) -> Ctr:
        return Ctr("bay-scheduler", f"{REG}/bay-scheduler:{version}", port=8080,
                   requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                   env={"REDIS_URL": "redis://yard-redis.yard.svc:6379/2",
                        "SLOT_GRANULARITY": "15m"},
                   readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    common = {"app.kubernetes.io/instance": "bay-scheduler",
              "app.kubernetes.io/part-of": "yard"}
    _, blues = deploy(s, NS, "bay-scheduler-blue", [sched("3.21.0")], replicas=3, nodes=nodes,
                      revision=6, rollout=s.ago(days=2, hours=20, minutes=3), service=None,
                      labels={"app.kubernetes.io/name": "bay-scheduler-blue", **common},
                      template_labels={**common, "slot": "blue"})
    green, _ = deploy(s, NS, "bay-scheduler-green", [sched("3.20.4")], replicas=0,
                      nodes=nodes, revision=5, rollout=s.ago(days=6, hours=4), service=None,
                      labels={"app.kubernetes.io/name": "bay-scheduler-green", **common},
                      template_labels={**common, "slot": "green"})
    green.obj["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "5"}
    svc = c.service(NS, "bay-scheduler", {"app.kubernetes.io/instance": "bay-scheduler",
                                          "slot": "green"}, port=80, created=s.ago(days=420),
                    labels={"app.kubernetes.io/name": "bay-scheduler", **common})
    svc["metadata"]["annotations"] = {"yard.freightyard.io/active-slot": "green",
                                      "yard.freightyard.io/previous-slot": "blue"}
    svc["metadata"]["managedFields"] = [
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {
            "f:ports": {}, "f:type": {}}}, "manager": "helm", "operation": "Update",
         "time": iso(s.ago(days=2, hours=20, minutes=9))},
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:annotations": {"f:yard.freightyard.io/active-slot": {},
                                             "f:yard.freightyard.io/previous-slot": {}}},
            "f:spec": {"f:selector": {"f:slot": {}}}},
         "manager": "kubectl-patch", "operation": "Update", "time": iso(switch)}]
    vip = svc["spec"]["clusterIP"]
    for pod in blues:
        quiet(s, [pod], "bay-scheduler", 233)
        cpu_seconds(s, pod, "bay-scheduler", lambda t: 0.21 if live(t) else 0.012)
        requests(s, pod, "bay-scheduler", rps=lambda t: 5.3 if live(t) else 0.0,
                 codes={"200": lambda t: 0.982, "409": lambda t: 0.017,
                        "500": lambda t: 0.001}, median=lambda t: 0.045,
                 buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0))
    chatter(s, blues, "bay-scheduler", "bay-scheduler", [
        ("info", "POST /v2/slots 201 bay=D14 window=06:30-06:45 carrier=HX-2231 in 38ms",
         {"http.response.status_code": 201}),
        ("info", "GET /v2/bays/availability?day=2028-06-02 200 in 22ms",
         {"http.response.status_code": 200}),
        ("warn", "PUT /v2/slots/S-771203 409 slot already taken (bay D09)",
         {"http.response.status_code": 409}),
    ], 150, end=switch)
    chatter(s, blues, "bay-scheduler", "bay-scheduler", [
        ("info", "slot expiry sweep: 0 expired holds released", {}),
        ("warn", "redis GET bay:D14:day:2028-06-02 took 212ms", {}),
    ], 14, start=switch)

    # ---- carrier-portal: rolled out 55 min ago, healthy until the switch
    roll = NOW - timedelta(minutes=55, seconds=40)
    portal = Ctr("carrier-portal", f"{REG}/carrier-portal:7.3.0", port=3000,
                 requests={"cpu": "250m", "memory": "320Mi"}, limits={"memory": "640Mi"},
                 env={"BAY_SCHEDULER_URL": "http://bay-scheduler.yard.svc",
                      "SESSION_REDIS": "redis://yard-redis.yard.svc:6379/5"},
                 readiness=http_probe("/healthz"))
    _, portals = steady(s, NS, "carrier-portal", [portal], nodes=nodes, replicas=3,
                        revision=131, rollout=roll, offset=1,
                        old=(130, s.ago(days=4), [Ctr("carrier-portal",
                                                     f"{REG}/carrier-portal:7.2.6")]))
    quiet(s, portals, "carrier-portal", 288)
    for pod in portals:
        cpu_seconds(s, pod, "carrier-portal", lambda t: 0.16)
        requests(s, pod, "carrier-portal", rps=lambda t: 6.1, codes={
            "200": lambda t: 0.985 if live(t) else 0.55,
            "503": lambda t: 0.0005 if live(t) else 0.44,
            "302": lambda t: 0.0145}, median=lambda t: 0.09 if live(t) else 0.02,
            buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0))
    chatter(s, portals, "carrier-portal", "carrier-portal", [
        ("info", "carrier-portal 7.3.0 up, feature flags: slot-swap=on, multi-drop=off", {}),
        ("info", "GET /slots 200 in 61ms", {"http.response.status_code": 200}),
        ("info", "POST /slots/book 200 in 84ms", {"http.response.status_code": 200}),
        ("warn", "redis session GET timed out after 250ms, retrying", {}),
    ], 120, start=roll, end=switch)
    chatter(s, portals, "carrier-portal", "carrier-portal", [
        ("error", f"POST /slots/book 503: bay-scheduler POST http://bay-scheduler.yard.svc/v2/"
         f"slots: dial tcp {vip}:80: connect: connection refused",
         {"http.response.status_code": 503, "error.type": "syscall.ECONNREFUSED"}),
        ("error", f"GET /slots 503: bay-scheduler GET http://bay-scheduler.yard.svc/v2/bays/"
         f"availability?day=2028-06-02: dial tcp {vip}:80: connect: connection refused",
         {"http.response.status_code": 503, "error.type": "syscall.ECONNREFUSED"}),
        ("info", "GET /login 200 in 12ms", {"http.response.status_code": 200}),
        ("warn", "circuit bay-scheduler open after 20 consecutive failures", {}),
    ], 260, start=secs(switch, 3))

    # ---- Redis, and a minor issue elsewhere
    redis = Ctr("redis", "docker.io/library/redis:7.4.2-alpine", port=6379, port_name="redis",
                requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"})
    _, redises = steady(s, NS, "yard-redis", [redis], nodes=nodes, replicas=1, revision=3,
                        rollout=s.ago(days=5, hours=1), service=6379, target="redis", offset=3)
    quiet(s, redises, "redis", 143)
    chatter(s, redises, "redis", "yard-redis", [
        ("info", "DB saved on disk", {}),
        ("info", "100 changes in 300 seconds. Saving...", {}),
    ], 12)
    readiness_blip(s, "iot", "gate-camera-ingest", f"{REG}/gate-camera-ingest:0.9.3", nodes,
                   port=8000, path="/health", minutes_ago=37)
    return s
