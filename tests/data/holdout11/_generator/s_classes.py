"""Leisure centres: class bookings slow and timing out at the 07:00 weekly release. At 06:58
class-booking was rolled from 3.8.4 to 3.9.0, whose start-up now hydrates the timetable
cache before the web server listens (~140 s). The liveness probe (initialDelaySeconds 45,
period 10, failureThreshold 3, no startup probe) kills each new JVM at about 75 s: exit
143 after "Commencing graceful shutdown", CrashLoopBackOff, the rollout stalls with two new
pods never Ready and only three old pods serving the rush. Signal: logs of the killed
instances and the kubelet's liveness events. Red herrings: the 07:00 booking rush doubling
traffic, payment provider timeouts at a normal rate, deprecation warnings of member-portal,
and a G1 pause warning in the old pods."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    drift,
    requests,
    restarts_series,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, ghosts, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp, stamp
from tests.scenario_tools.common import kube_system, truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, running
from tests.scenario_tools.sim import container_status, deaths, lifecycle

from .kit11 import Incident, apps_pool, secs

ID = "class-bookings-timing-out"
NOW = datetime.fromisoformat("2028-09-04T07:31:00+00:00")
NS = "bookings"
NAME = "class-booking"
REG = "ghcr.io/activa-leisure"
ROLL = NOW - timedelta(minutes=32, seconds=41)
RUSH = datetime.fromisoformat("2028-09-04T07:00:00+00:00")


def ctr(version: str) -> Ctr:
    return Ctr(NAME, f"{REG}/class-booking:{version}", port=8080,
               requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
               env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70 -XX:+UseG1GC",
                    "SPRING_PROFILES_ACTIVE": "prod", "TIMETABLE_WEEKS_AHEAD": "6",
                    "PAYMENTS_URL": "https://checkout-live.adyenpayments.com"},
               readiness=http_probe("/actuator/health/readiness", delay=30, period=10),
               liveness=http_probe("/actuator/health/liveness", delay=45, period=10,
                                   failures=3))


def build() -> Incident:
    s = Incident(
        id=ID, title="Class bookings slow and timing out at the weekly release", now=NOW,
        report="""\
Members can't book classes this morning: the app spins and then says "try again later".
It's the 07:00 release of next week's classes so it's busy, but last week was fine.
Reception staff see the same in the front-desk booking screen. Please help ASAP.
""",
        truth=truth(
            "probe_failure", "Deployment", NS, NAME,
            ["Liveness probe failed", "failed liveness probe, will be restarted",
             "Hydrating timetable cache", "exitCode: 143"],
            "class-booking 3.9.0 hydrates the timetable cache before it listens and needs "
            "~140 s to start, but the liveness probe (initialDelaySeconds 45, failureThreshold "
            "3) kills it after ~75 s, so the new pods crash-loop and the rollout is stuck with "
            "three old pods carrying the 07:00 rush. Roll back, or add a startupProbe on "
            "/actuator/health/liveness allowing ~4 min (or raise initialDelaySeconds) before "
            "rolling 3.9.0 out again."))
    namespaces(s, {"default": 540, "kube-system": 540, NS: 505, "members": 505})
    nodes = apps_pool(s, 4, region="eu-west-2", subnet=88, pool="apps-m6a",
                      instance="m6a.2xlarge", days=4.8)
    kube_system(s, nodes)
    c = s.cluster

    # ---- the stuck rollout: 3 old pods left, 2 new ones crash-looping
    def tpl(version: str) -> Template:
        return Template([ctr(version)], service_account=NAME,
                        labels={"app.kubernetes.io/version": version},
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/path": "/actuator/prometheus"})
    work = c.workload("Deployment", NS, NAME, tpl("3.9.0"), replicas=4,
                      created=s.ago(days=388), labels={"app.kubernetes.io/name": NAME,
                                                       "app.kubernetes.io/part-of": NS})
    old_at = s.ago(days=5, hours=20, minutes=13)
    old_rs = c.revision(work, 26, old_at, tpl("3.8.4"), replicas=3)
    new_rs = c.revision(work, 27, ROLL, tpl("3.9.0"), replicas=2)
    olds = []
    for i in range(3):
        born = secs(old_at, 8 + 52 * i)
        olds.append(c.pod(work, old_rs, node=nodes[i], created=born,
                          statuses={NAME: running(secs(born, 9))}))
    gone = ghosts(s, old_rs, [nodes[3]], [secs(old_at, 164)], [secs(ROLL, 1)])
    fresh = []
    all_runs = []
    for i in range(2):
        born = secs(ROLL, 0.5 + 1.1 * i)
        first = secs(born, 14 + 3 * i)
        runs = lifecycle(first, NOW, lambda st: 75 + s.rng.uniform(-3, 4), pull=0.6)
        pod_name = f"{new_rs['metadata']['name']}-{c.token(5)}"
        status = container_status(runs, pod_name, NS, NAME, reason="Error", code=143,
                                  uid=c.uid("Pod", NS, pod_name), ready=False)
        if "running" in status["state"]:
            status["ready"] = False
        pod = c.pod(work, new_rs, node=nodes[(i + 2) % 4], created=born,
                    statuses={NAME: status}, name=pod_name)
        fresh.append(pod)
        all_runs.append(runs)
    work.progressing = ("ProgressDeadlineExceeded",
                        f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.',
                        secs(ROLL, 600))
    work.availability_changed = secs(old_at, 240)
    c.service(NS, NAME, {"app.kubernetes.io/name": NAME}, created=s.ago(days=388))
    new_name, old_name = new_rs["metadata"]["name"], old_rs["metadata"]["name"]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_name} from 0 to 1",
            first=ROLL, component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set {old_name} from 4 to 3",
            first=secs(ROLL, 0.4), component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_name} from 1 to 2",
            first=secs(ROLL, 1.0), component="deployment-controller")
    c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {gone[0]['metadata']['name']}",
            first=secs(ROLL, 0.5), component="replicaset-controller")
    image = f"{REG}/class-booking:3.9.0"
    for pod, runs in zip(fresh, all_runs, strict=True):
        meta = pod["metadata"]
        born = datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
        c.event(new_rs, "SuccessfulCreate", f"Created pod: {meta['name']}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{meta['name']} to "
                f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                host="")
        crash_events(s, pod, NAME, runs, image, fresh_pull=True, pull_seconds=7.8,
                     size=312_448_901)
        ip = pod["status"]["podIP"]
        died = [r for r in runs if r.end is not None]
        field_ = f"spec.containers{{{NAME}}}"
        probe_first = secs(runs[0].start, 46)
        probe_last = secs(died[-1].end, -1) if died else probe_first
        if runs[-1].end is None and (NOW - runs[-1].start).total_seconds() > 46:
            probe_last = secs(runs[-1].start, 46 + 10 * min(
                2, int(((NOW - runs[-1].start).total_seconds() - 46) // 10)))
        fails = 3 * len(died) + (min(3, int(max(0, (NOW - runs[-1].start).total_seconds() - 45)
                                            // 10)) if runs[-1].end is None else 0)
        c.event(pod, "Unhealthy", f'Liveness probe failed: Get "http://{ip}:8080/actuator/'
                f'health/liveness": dial tcp {ip}:8080: connect: connection refused',
                first=probe_first, last=probe_last, count=max(1, fails), type_="Warning",
                field_path=field_)
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/actuator/'
                f'health/readiness": dial tcp {ip}:8080: connect: connection refused',
                first=secs(runs[0].start, 31), last=probe_last, count=max(1, fails + 2 *
                                                                         len(runs)),
                type_="Warning", field_path=field_)
        if died:
            c.event(pod, "Killing", f"Container {NAME} failed liveness probe, will be "
                    "restarted", first=secs(died[0].end, -0.4), last=secs(died[-1].end, -0.4),
                    count=len(died), field_path=field_)
        kills = [int(d.timestamp()) for d in deaths(runs)]
        restarts_series(s, pod, NAME, 0, kills)
        # what each instance printed: start-up that never reaches the listener
        for run in runs:
            end = run.end or NOW
            steps = [(1.2, "info", "Starting ClassBookingApplication v3.9.0 using Java 21.0.4"),
                     (6.8, "info", "Flyway Community Edition 10.17.1: Schema \"booking\" is up "
                      "to date. No migration necessary."),
                     (11.5, "info", "Hazelcast 5.5.0 member started, cluster size 1"),
                     (14.0, "info", "Hydrating timetable cache for 6 weeks ahead "
                      "(38 centres, 11,904 sessions)...")]
            steps += [(14.0 + 12 * j, "info", f"Hydrating timetable cache: {9 * j}% "
                       f"({1071 * j} sessions)") for j in range(1, 6)]
            lines = []
            for off, level, text in steps:
                when = secs(run.start, off)
                if when < secs(end, -1.5):
                    lines.append((when, level, text))
            if run.end is not None:
                lines.append((secs(run.end, -0.9), "info", "Commencing graceful shutdown. "
                              "Waiting for active requests to complete"))
                lines.append((secs(run.end, -0.3), "info", "Graceful shutdown complete"))
            for when, level, text in lines:
                s.logs.add(when, level, text, namespace=NS, pod=meta["name"], container=NAME,
                           service=NAME, node=pod["spec"]["nodeName"],
                           **{"log.logger": "c.a.booking.ClassBookingApplication"})
            if died and run is died[-1]:
                s.pod_log(pod, NAME, [f"{stamp(w)} {lvl.upper():<5} {t}"
                                      for w, lvl, t in lines], previous=True)
        working_set(s, pod, NAME, lambda t: 900 * 1024 * 1024)

    # ---- traffic: the 07:00 rush on three old pods
    def rps(t: int) -> float:
        return 14.0 * (1 + 1.6 * ramp(t, RUSH, 3))

    def lat(t: int) -> float:
        return 0.16 + 1.9 * ramp(t, RUSH, 6)

    def err(t: int) -> float:
        return 0.001 + 0.09 * ramp(t, RUSH, 8)
    for pod in olds:
        requests(s, pod, NAME, rps=lambda t: rps(t) / 3, codes={
            "200": lambda t: 0.995 - err(t), "409": lambda t: 0.004, "503": err},
            median=lat, buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
        working_set(s, pod, NAME, drift(s, 1300 * 1024 * 1024))
        cpu_seconds(s, pod, NAME, lambda t: 0.35 + 0.6 * ramp(t, RUSH, 3))
    requests(s, gone[0], NAME, rps=lambda t: 14.0 / 4, codes={
        "200": lambda t: 0.995, "409": lambda t: 0.004, "503": lambda t: 0.001})
    chatter(s, olds, NAME, NAME, [
        ("info", "booking BK-55120931 confirmed: Aqua Zumba, Vesterbro centre, Tue 18:00", {}),
        ("info", "booking BK-55121004 confirmed: Spinning 45, Valby centre, Mon 06:30", {}),
        ("warn", "payment authorisation for BK-55120977 timed out after 10000ms, retrying "
         "(attempt 2/3)", {"error.type": "SocketTimeoutException"}),
    ], 110, start=s.ago(hours=3), end=RUSH)
    chatter(s, olds, NAME, NAME, [
        ("info", "booking BK-55130118 confirmed: Yoga Flow, Nørrebro centre, Wed 19:15", {}),
        ("warn", "request queue depth 188 (tomcat threads 200/200 busy)", {}),
        ("error", "POST /api/v2/bookings 503 after 30001ms: no worker thread available",
         {"http.response.status_code": 503}),
        ("warn", "payment authorisation for BK-55130402 timed out after 10000ms, retrying "
         "(attempt 2/3)", {"error.type": "SocketTimeoutException"}),
        ("warn", "G1 Evacuation Pause (young) took 182ms", {}),
    ], 260, start=RUSH)

    # ---- red herrings
    _, portal = steady(s, "members", "member-portal", [Ctr(
        "member-portal", f"{REG}/member-portal:12.3.1", port=3000,
        requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
        readiness=http_probe("/api/health"))], nodes=nodes, replicas=2, revision=64,
        rollout=s.ago(days=1, hours=15), offset=1)
    quiet(s, portal, "member-portal", 210)
    chatter(s, portal, "member-portal", "member-portal", [
        ("warn", "DeprecationWarning: The `punycode` module is deprecated.", {}),
        ("info", "GET /my/bookings 200 84ms", {}),
        ("info", "GET /centres/valby/timetable 200 121ms", {}),
    ], 60)
    return s
