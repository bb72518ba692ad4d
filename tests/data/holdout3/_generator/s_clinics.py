"""Healthcare: online appointment booking fails for many clinics. At 10:58 JST the Aurora
MySQL cluster appointments-prod failed over from its writer (db.r6g.2xlarge) to its only
reader, a db.r6g.large with a cold buffer pool. For two minutes appointment-api's pooled
connections hit the demoted instance (read-only errors, broken connections); since then
every query runs on the small new writer at full CPU and the availability searches take
seconds, so appointment-api's requests time out. appointment-api itself is healthy: no restarts,
low CPU, its pods ready. A patient-web release 14 minutes before the failover is a red
herring."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, requests, summary
from tests.data.holdout2._generator.kit import deploy as deploy3
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, running

from .kit3 import (
    Incident,
    bottlerocket_nodes,
    chatter,
    ghosts,
    log_pod,
    namespaces,
    quiet,
    ready_since,
    rolling_events,
    steady,
    times_of,
)

ID = "clinic-booking-timeouts"
NOW = datetime.fromisoformat("2027-04-20T02:36:00+00:00")
NS = "appointments"
ECR = "381492770615.dkr.ecr.ap-northeast-1.amazonaws.com"
CLUSTER_EP = "appointments-prod.cluster-c8xk2v1qzt4m.ap-northeast-1.rds.amazonaws.com"
OLD_W, NEW_W = "appointments-prod-instance-1", "appointments-prod-instance-2"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Online appointment booking failing for many clinics",
        now=NOW,
        report="""\
Since around 11:00 JST online booking is failing for a lot of clinics: patients get
"予約に失敗しました / booking failed, please try again" and the availability calendar takes
forever to load. Reminder SMS for tomorrow are behind as well. We released patient-web at 10:44,
not sure if that is related. Clinics are calling the support line, please look asap.
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "appointment-api",
            ["--read-only option", CLUSTER_EP, "context deadline exceeded",
             "aws_rds_cpuutilization_average", NEW_W, "aws_rds_buffer_cache_hit_ratio_average"],
            "The Aurora MySQL cluster appointments-prod failed over at 10:58 JST to "
            f"{NEW_W}, a db.r6g.large reader that now runs the writer load at ~95% CPU with a "
            "cold buffer pool, so appointment-api's queries take seconds and its requests time "
            f"out: fail back to {OLD_W} (db.r6g.2xlarge) or scale {NEW_W} up, and give the "
            "failover target the writer's instance class. appointment-api needs no change."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 530, "kube-system": 530, NS: 501, "patient-portal": 501,
                   "metrics-exporters": 330})
    kind = NodeKind("m7i.xlarge", "4", "15896956Ki", "3920m", "14873980Ki",
                    "v1.32.3-eks-473151a", "6.1.131", "Bottlerocket OS 1.36.0 (aws-k8s-1.32)",
                    runtime="containerd://1.7.27+bottlerocket", pods="58",
                    storage="81854Mi", alloc_storage="76999855473")
    nodes = bottlerocket_nodes(s, 4, region="ap-northeast-1", subnet=31, group="apps-br-m7i",
                               kind=kind, days=5.3, ami="ami-0c5e41b9d7a3f2e18")

    t_f = NOW - timedelta(minutes=37, seconds=41)  # 01:58:19 UTC, 10:58 JST
    f = t_f.timestamp()
    t_w = f + 95  # the new writer takes the cluster endpoint

    def phase(t: float) -> str:
        if t < f:
            return "ok"
        return "failover" if t < t_w + 30 else "slow"

    def db_latency(t: float) -> float:  # seconds per availability query
        if t < f:
            return 0.018
        warm = min(1.0, (t - t_w) / 5400)
        return 1.9 - 0.7 * warm

    # ---- appointment-api: healthy itself
    api = Ctr("appointment-api", f"{ECR}/appointments/appointment-api:3.11.4", port=8080,
              requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"DB_HOST": CLUSTER_EP, "DB_NAME": "appointments", "DB_MAX_OPEN_CONNS": "40",
                   "DB_QUERY_TIMEOUT": "3s", "GOMAXPROCS": "2"},
              readiness=http_probe("/healthz", "http", delay=3, period=10),
              liveness=http_probe("/healthz", "http", delay=10, period=20))
    _, apis = steady(s, NS, "appointment-api", [api], nodes=nodes, replicas=3, revision=64,
                     rollout=s.ago(days=3, hours=5, minutes=12),
                     labels={"app.kubernetes.io/name": "appointment-api",
                             "app.kubernetes.io/part-of": "appointments"})

    def rps(t: int) -> float:  # a pod's share, the late-morning plateau
        return 7.5 * (1 + 0.08 * ((t // 60) % 7) / 7)

    def p50(t: int) -> float:
        p = phase(t)
        return 0.031 if p == "ok" else (1.4 if p == "failover" else min(3.0, 0.6
                                                                       + db_latency(t)))

    def p99(t: int) -> float:
        p = phase(t)
        return 0.16 if p == "ok" else 3.0

    for pod in apis:
        name = pod["metadata"]["name"]
        times = times_of(s, pod)
        requests(s, pod, "appointment-api", rps=rps, times=times, codes={
            "200": lambda t: 0.996 if phase(t) == "ok" else (0.35 if phase(t) == "failover"
                                                             else 0.64 + 0.1 * min(1.0, (
                                                                 t - t_w) / 5400)),
            "500": lambda t: 0.002 if phase(t) != "failover" else 0.45,
            "504": lambda t: 0.0 if phase(t) == "ok" else (
                0.2 if phase(t) == "failover" else 0.34 - 0.1 * min(1.0, (t - t_w) / 5400))})
        summary(s, "http_server_request_duration_seconds", "Duration of HTTP server requests.",
                {"namespace": NS, "pod": name}, times, rps, {"0.5": p50, "0.99": p99},
                lambda t: p50(t) * 1.3)
        gauge(s, "go_sql_stats_connections_in_use", {"namespace": NS, "pod": name,
                                                     "db_name": "appointments"},
              lambda t: min(40.0, max(1.0, round(rps(t) * 1.4 * (db_latency(t) if phase(t)
                                                                  != "failover" else 1.2)
                                                 * s.rng.uniform(0.7, 1.2)))),
              "The number of connections currently in use.", times=times)
    failover_errors: list[tuple[str, str, dict[str, Any]]] = [
        ("error", "POST /v1/bookings 500: insert booking: Error 1290 (HY000): The MySQL server "
         "is running with the --read-only option so it cannot execute this statement",
         {"http.response.status_code": 500, "error.type": "mysql.MySQLError"}),
        ("error", "GET /v1/availability 500: query slots: driver: bad connection",
         {"http.response.status_code": 500, "error.type": "driver.ErrBadConn"}),
        ("error", "[mysql] packets.go:58 unexpected EOF", {}),
        ("error", f"GET /v1/availability 500: query slots: dial tcp 10.31.{s.rng.randrange(64, 95)}"
         f".{s.rng.randrange(2, 250)}:3306: connect: connection refused",
         {"http.response.status_code": 500, "error.type": "net.OpError"}),
    ]
    slow_errors: list[tuple[str, str, dict[str, Any]]] = [
        ("error", "GET /v1/availability 504: query slots: context deadline exceeded (3s)",
         {"http.response.status_code": 504, "error.type": "context.DeadlineExceeded"}),
        ("error", "POST /v1/bookings 504: lock slot: context deadline exceeded (3s)",
         {"http.response.status_code": 504, "error.type": "context.DeadlineExceeded"}),
        ("warn", "slow query 2.41s: SELECT s.id, s.starts_at, s.doctor_id FROM slots s JOIN "
         "clinic_hours h ON ... WHERE s.clinic_id = ? AND s.starts_at BETWEEN ? AND ?", {}),
        ("info", "GET /v1/availability 200 2212ms", {"http.response.status_code": 200}),
    ]
    ok_lines: list[tuple[str, str, dict[str, Any]]] = [
        ("info", "GET /v1/availability 200 34ms", {"http.response.status_code": 200}),
        ("info", "POST /v1/bookings 201 61ms", {"http.response.status_code": 201}),
        ("info", "GET /v1/clinics/1311/doctors 200 12ms", {"http.response.status_code": 200}),
        ("warn", "POST /v1/bookings 409: slot already taken", {"http.response.status_code":
                                                              409}),
    ]
    start = NOW - timedelta(hours=2.5)
    fail_end = datetime.fromtimestamp(t_w + 30, NOW.tzinfo)
    for pod in apis:
        log_pod(s, pod, "appointment-api", "appointment-api", ok_lines, 36, start=start, end=t_f)
        log_pod(s, pod, "appointment-api", "appointment-api", failover_errors, 22, start=t_f,
                end=fail_end)
        log_pod(s, pod, "appointment-api", "appointment-api", slow_errors, 48, start=fail_end)
        log_pod(s, pod, "appointment-api", "appointment-api", ok_lines[:2], 10, start=fail_end)

    # ---- reminder-worker: a caller of appointment-api
    rem = Ctr("reminder-worker", f"{ECR}/appointments/reminder-worker:1.6.0", port=None,
              requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              env={"BOOKING_API": "http://appointment-api.appointments.svc", "SMS_PROVIDER":
                   "twilio"})
    _, rems = steady(s, NS, "reminder-worker", [rem], nodes=nodes, replicas=1, revision=21,
                     rollout=s.ago(days=4, hours=1), service=None, offset=2)
    quiet(s, rems, "reminder-worker", 88)
    chatter(s, rems, "reminder-worker", "reminder-worker", [
        ("info", "queued 120 reminders for appointments on 2027-04-21", {}),
        ("info", "sent SMS reminder to +81-90-****-2211 (appointment 88123410)", {}),
    ], 30, end=t_f)
    chatter(s, rems, "reminder-worker", "reminder-worker", [
        ("error", "GET http://appointment-api.appointments.svc/v1/appointments/upcoming"
         "?window=24h: 504 Gateway Timeout, retry 2/5 in 30s", {}),
        ("warn", "reminder batch for 2027-04-21 behind schedule by 31m", {}),
    ], 24, start=t_f + timedelta(minutes=2))

    # ---- clinic-directory: harmless warnings, a readiness blip
    directory = Ctr("clinic-directory", f"{ECR}/appointments/clinic-directory:2.2.7",
                    port=8080, requests={"cpu": "100m", "memory": "128Mi"},
                    limits={"memory": "256Mi"},
                    readiness=http_probe("/ready", "http", delay=3))
    _, dirs = steady(s, NS, "clinic-directory", [directory], nodes=nodes, replicas=2,
                     revision=30, rollout=s.ago(days=2, hours=8), offset=1)
    quiet(s, dirs, "clinic-directory", 74)
    chatter(s, dirs, "clinic-directory", "clinic-directory", [
        ("info", "GET /v1/clinics?near=35.6812,139.7671 200", {}),
        ("warn", "geocoder cache miss for 'Setagaya-ku Sangenjaya 2-14', calling Location "
         "Service", {}),
    ], 30)
    blip = NOW - timedelta(minutes=26, seconds=12)
    c.event(dirs[1], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
            "503", first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{clinic-directory}")

    # ---- patient-web: released 14 minutes before the failover (healthy)
    t_r = t_f - timedelta(minutes=14, seconds=6)

    def web(version: str) -> Ctr:
        return Ctr("patient-web", f"{ECR}/patient-portal/patient-web:{version}", port=3000,
                   requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                   env={"NEXT_PUBLIC_BOOKING_API": "/api/booking", "NODE_ENV": "production"},
                   readiness=http_probe("/api/health", "http", delay=5))
    new_born: list[datetime] = []
    started: list[datetime] = []
    ready: list[datetime] = []
    gone: list[datetime] = []
    born = t_r + timedelta(seconds=0.8)
    for _ in range(3):
        new_born.append(born)
        started.append(born + timedelta(seconds=1.4 + 3.9 + 0.4 * len(started)
                                        + s.rng.uniform(0.5, 1.0)))
        ready.append(started[-1] + timedelta(seconds=s.rng.uniform(6, 9)))
        gone.append(ready[-1] + timedelta(seconds=0.9))
        born = gone[-1] + timedelta(seconds=0.3)
    pw, pws = deploy3(s, "patient-portal", "patient-web", [web("2027.4.20-1")], replicas=3,
                      nodes=nodes, revision=78, rollout=t_r,
                      old=(77, s.ago(days=5, hours=22), [web("2027.4.14-2")]),
                      born=lambda i: new_born[i],
                      statuses=lambda i, n, st: {"patient-web": running(started[i])}, offset=1)
    for pod, when in zip(pws, ready, strict=True):
        ready_since(pod, when)
    rs_old, rs_new = pw.revisions
    old_web = ghosts(s, rs_old, nodes, [s.ago(days=5, hours=22) + timedelta(seconds=20 * i)
                                        for i in range(3)], gone)
    pw.progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{rs_new["metadata"]["name"]}" '
                      "has successfully progressed.", gone[-1] + timedelta(seconds=1))
    rolling_events(s, pw, rs_old, rs_new, pws, old_web,
                   image=f"{ECR}/patient-portal/patient-web:2027.4.20-1", size=151_220_871,
                   pull=lambda i: 3.9 + 0.4 * i)
    for pod in [*old_web, *pws]:
        log_pod(s, pod, "patient-web", "patient-web", [
            ("info", "GET /clinics/1311 200", {"http.response.status_code": 200}),
            ("info", "GET /booking/1311?date=2027-04-21 200", {"http.response.status_code":
                                                               200}),
            ("warn", "GET /_next/static/chunks/app-legacy.js 404",
             {"http.response.status_code": 404}),
        ], 12, start=start)
    for pod in pws:
        log_pod(s, pod, "patient-web", "patient-web", [
            ("error", "booking proxy: upstream appointment-api answered 504 for GET "
             "/v1/availability", {"http.response.status_code": 502}),
            ("error", "booking proxy: upstream appointment-api answered 500 for POST /v1/bookings",
             {"http.response.status_code": 502}),
        ], 14, start=t_f + timedelta(seconds=20))

    # ---- the CloudWatch exporter's view of the Aurora instances
    yace = Ctr("yace", "ghcr.io/prometheus-community/yet-another-cloudwatch-exporter:v0.62.1",
               port=5000, port_name="metrics", requests={"cpu": "50m", "memory": "96Mi"},
               limits={"memory": "256Mi"}, args=["--config.file=/config/config.yml",
                                                 "--scraping-interval=60"])
    _, yaces = steady(s, "metrics-exporters", "yace", [yace], nodes=nodes, replicas=1,
                      revision=7, rollout=s.ago(days=5, hours=1), service=5000,
                      target="metrics")
    chatter(s, yaces, "yace", "yace", [
        ("warn", "level=warn msg=\"GetMetricData throttled, retrying\" namespace=AWS/RDS", {}),
        ("info", "level=info msg=\"scrape finished\" namespace=AWS/RDS metrics=64", {}),
    ], 20)
    arn = "arn:aws:rds:ap-northeast-1:381492770615:db:"

    def rds(metric: str, inst: str, value: Callable[[int], float | None], help_: str) -> None:
        gauge(s, metric, {"dimension_DBInstanceIdentifier": inst, "name": arn + inst,
                          "region": "ap-northeast-1"}, value, help_)

    rebooted = (f, t_w + 120)
    rds("aws_rds_cpuutilization_average", OLD_W,
        lambda t: None if rebooted[0] <= t < rebooted[1] else (
            s.rng.uniform(31, 38) if t < f else s.rng.uniform(4, 7)),
        "Help is not implemented yet.")
    rds("aws_rds_cpuutilization_average", NEW_W,
        lambda t: s.rng.uniform(9, 14) if t < f else min(99.0, s.rng.uniform(91, 98)),
        "Help is not implemented yet.")
    rds("aws_rds_select_latency_average", OLD_W,
        lambda t: None if rebooted[0] <= t < rebooted[1] else (
            s.rng.uniform(0.35, 0.6) if t < f else s.rng.uniform(0.2, 0.4)),
        "Help is not implemented yet.")
    rds("aws_rds_select_latency_average", NEW_W,
        lambda t: s.rng.uniform(0.3, 0.5) if t < f + 60 else
        1000 * db_latency(t) * s.rng.uniform(0.12, 0.2),
        "Help is not implemented yet.")
    rds("aws_rds_buffer_cache_hit_ratio_average", NEW_W,
        lambda t: s.rng.uniform(99.2, 99.8) if t < f + 60 else min(
            99.0, 71 + 19 * min(1.0, (t - t_w) / 5400) + s.rng.uniform(-2, 2)),
        "Help is not implemented yet.")
    rds("aws_rds_database_connections_average", NEW_W,
        lambda t: s.rng.uniform(14, 19) if t < f + 60 else s.rng.uniform(118, 131),
        "Help is not implemented yet.")
    rds("aws_rds_database_connections_average", OLD_W,
        lambda t: None if rebooted[0] <= t < rebooted[1] else (
            s.rng.uniform(116, 130) if t < f else s.rng.uniform(0, 3)),
        "Help is not implemented yet.")

    # ---- kube-system bits of an EKS cluster on Bottlerocket
    csi = Ctr("ebs-plugin", "602401143452.dkr.ecr.ap-northeast-1.amazonaws.com/eks/"
              "aws-ebs-csi-driver:v1.41.0", port=9808, port_name="healthz",
              requests={"cpu": "10m", "memory": "40Mi"}, limits={"memory": "256Mi"})
    _, csis = daemonset(s, "kube-system", "ebs-csi-node", [csi], node_list=nodes,
                        generation=5, since=s.ago(days=5.25),
                        labels={"app": "ebs-csi-node", "app.kubernetes.io/name":
                                "aws-ebs-csi-driver"})
    chatter(s, csis, "ebs-plugin", "ebs-csi-node", [
        ("info", "NodeGetVolumeStats: called with args {VolumeId:vol-0a41f2c9b7e3d1f08 "
         "VolumePath:/var/lib/kubelet/pods/...}", {}),
        ("warn", "Failed to get NVMe device name for volume vol-0c1d: retrying", {}),
    ], 12)
    return s
