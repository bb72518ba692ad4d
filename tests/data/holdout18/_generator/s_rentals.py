"""Ski rental: booking a boot-and-ski fitting slot fails or crawls. fitting-booking 4.2.0,
rolled out 26 min ago, moved the Spring Boot actuator to a separate management port
(MANAGEMENT_SERVER_PORT=9090) while the pod template still probes
/actuator/health/liveness and /readiness on the http port 8080, which now answers 404.
The new pods start cleanly ("Started FittingBookingApplication"), never become Ready and
are killed by the kubelet after three failed liveness probes (exit 143, SIGTERM), so they
look like a crash loop; the rollout is stuck with three old pods carrying all traffic.
Red herrings: an alarming Flyway validation warning and a Hikari warning at start-up,
pricing-rules rolled out 44 min before in the same namespace, an old OOM restart of
gear-inventory, and a report that suspects the database."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import aks_nodes, set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    drift,
    requests,
    restarts_series,
    runs_from,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, ksm_deployment, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import log_lines
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import rollout
from tests.scenario_tools.sim import container_status, deaths, restart_events

from .kit18 import Incident

ID = "ski-fitting-bookings-failing"
NOW = datetime.fromisoformat("2028-02-05T09:58:00+00:00")
NS = "rentals"
ACR = "alpinerentprod.azurecr.io"
NAME = "fitting-booking"


def ctr(version: str) -> Ctr:
    env = {"SPRING_PROFILES_ACTIVE": "prod", "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70",
           "SPRING_DATASOURCE_URL": "jdbc:postgresql://rentals-pg.postgres.database.azure.com"
           ":5432/fitting?sslmode=require"}
    if version == "4.2.0":
        env["MANAGEMENT_SERVER_PORT"] = "9090"
    return Ctr(NAME, f"{ACR}/rentals/{NAME}:{version}", port=8080,
               requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"}, env=env,
               readiness=http_probe("/actuator/health/readiness", delay=20, period=10),
               liveness=http_probe("/actuator/health/liveness", delay=40, period=10))


def build() -> Incident:
    s = Incident(
        id=ID, title="Ski fitting slot bookings failing", now=NOW,
        report="""\
Customers can't book fitting appointments for skis and boots in the shop app since about
09:30, it either times out or says "something went wrong", and the slots page is slow.
Saturday morning in high season. Is the rentals database struggling again like last week?
""",
        truth=truth(
            "probe_failure", "Deployment", NS, NAME,
            ["Liveness probe failed: HTTP probe failed with statuscode: 404",
             "MANAGEMENT_SERVER_PORT", "failed liveness probe, will be restarted"],
            "fitting-booking 4.2.0 serves the actuator on the management port 9090, but the "
            "liveness and readiness probes still call /actuator/health/* on port 8080 and get "
            "404: the new pods never become Ready and are killed after three failed liveness "
            "probes, the rollout is stuck and three old pods carry the Saturday load. Point "
            "the probes at port 9090 (or unset MANAGEMENT_SERVER_PORT), or roll back to "
            "4.1.3."))
    set_times(s, 3.0, 30)
    c = s.cluster
    namespaces(s, {"default": 800, "kube-system": 800, NS: 744, "shop": 744, "ops": 400})
    nodes = aks_nodes(s, 4, pool="user", region="switzerlandnorth",
                      instance="Standard_D4ds_v5", kubelet="v1.31.5", cpu="4",
                      memory="16365128Ki", alloc_cpu="3860m", alloc_memory="12880968Ki",
                      subscription="6f1c2a9e-52d4-4b1e-9a0f-3e7d8c21b4aa",
                      group="rg-alpinerent-prod", days=5.5)
    at = NOW - timedelta(minutes=26, seconds=14)
    runs_of: dict[str, list] = {}

    def statuses(i: int, started: datetime, pod_name: str) -> dict:
        runs = runs_from(started, NOW, lambda st: 61.0 + s.rng.uniform(-1.5, 1.5),
                         jitter=lambda: s.rng.uniform(0.1, 0.9))
        runs_of[pod_name] = runs
        return {NAME: container_status(runs, pod_name, NS, NAME, reason="Error", code=143,
                                       uid=c.uid("Pod", NS, pod_name), ready=False)}

    roll = rollout(s, NS, NAME, ctr, old="4.1.3", new="4.2.0", at=at, revision=15,
                   replicas=4, node_list=nodes, statuses=statuses, complete=False,
                   pods_of_new=2, old_left=3)
    field_ = f"spec.containers{{{NAME}}}"
    for pod in roll.new_pods:
        name = pod["metadata"]["name"]
        runs = runs_of[name]
        image = ctr("4.2.0").image
        restart_events(s, pod, NAME, runs, now=NOW, image=image)
        died = deaths(runs)
        c.event(pod, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: "
                "404", first=runs[0].start + timedelta(seconds=40.3),
                last=(died[-1] if died else NOW) - timedelta(seconds=0.4),
                count=3 * len(runs) - (0 if runs[-1].end else 2), type_="Warning",
                field_path=field_)
        c.event(pod, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
                "404", first=runs[0].start + timedelta(seconds=20.2),
                last=NOW - timedelta(seconds=s.rng.uniform(2, 9)) if runs[-1].end is None
                else died[-1] - timedelta(seconds=1.1), count=5 * len(runs) - 1,
                type_="Warning", field_path=field_)
        if died:
            c.event(pod, "Killing", f"Container {NAME} failed liveness probe, will be "
                    "restarted", first=died[0] - timedelta(seconds=0.2),
                    last=died[-1] - timedelta(seconds=0.2), count=len(died), field_path=field_)
        restarts_series(s, pod, NAME, 0, [int(d.timestamp()) for d in died])
        working_set(s, pod, NAME, drift(s, 410 * MIB))

        def boot(start: datetime) -> list[tuple[datetime, str]]:
            t = start
            out = [(t + timedelta(seconds=1.2), "INFO  Starting FittingBookingApplication v4.2.0 "
                    "using Java 21.0.6 with PID 1"),
                   (t + timedelta(seconds=1.9), 'INFO  The following 1 profile is active: "prod"'),
                   (t + timedelta(seconds=6.4), "INFO  HikariPool-1 - Starting..."),
                   (t + timedelta(seconds=7.8), "INFO  HikariPool-1 - Added connection "
                    "org.postgresql.jdbc.PgConnection@4f2b1c77"),
                   (t + timedelta(seconds=8.1), "WARN  Flyway: Validate failed: Detected applied "
                    "migration not resolved locally: 4.1.9 (ignored by "
                    "spring.flyway.ignore-migration-patterns=*:missing)"),
                   (t + timedelta(seconds=8.6), "INFO  Flyway: Schema \"public\" is up to date. "
                    "No migration necessary."),
                   (t + timedelta(seconds=14.2), "INFO  Tomcat started on port 8080 (http) with "
                    "context path '/'"),
                   (t + timedelta(seconds=14.9), "INFO  Tomcat started on port 9090 (http) with "
                    "context path '/'"),
                   (t + timedelta(seconds=15.3), "INFO  Exposing 4 endpoints beneath base path "
                    "'/actuator' on management port 9090"),
                   (t + timedelta(seconds=15.8), "INFO  Started FittingBookingApplication in "
                    "15.1 seconds (process running for 15.9)"),
                   (t + timedelta(seconds=33.0), "WARN  HikariPool-1 - Thread starvation or "
                    "clock leap detected (housekeeper delta=31s)")]
            return out

        if runs[-1].end is None:
            log_lines(s, pod, NAME, [x for x in boot(runs[-1].start) if x[0] <= NOW])
        prev = runs[-1] if runs[-1].end is not None else runs[-2]
        assert prev.end is not None
        log_lines(s, pod, NAME, [*[x for x in boot(prev.start) if x[0] < prev.end],
                                 (prev.end - timedelta(seconds=0.3),
                                  "INFO  Commencing graceful shutdown. Waiting for active "
                                  "requests to complete"),
                                 (prev.end - timedelta(seconds=0.1),
                                  "INFO  Graceful shutdown complete"),
                                 (prev.end, "INFO  HikariPool-1 - Shutdown completed.")],
                  previous=True)
        chatter(s, [pod], NAME, NAME, [
            ("info", "Started FittingBookingApplication in 15.1 seconds (process running for "
             "15.9)", {}),
            ("warn", "Flyway: Validate failed: Detected applied migration not resolved "
             "locally: 4.1.9 (ignored by spring.flyway.ignore-migration-patterns=*:missing)",
             {}),
            ("info", "Commencing graceful shutdown. Waiting for active requests to complete",
             {}),
        ], 3 * len(runs))
    old_live = [p for p in roll.old_pods if "_deleted" not in p["metadata"]]
    def share(t: int) -> float:
        return 3.1 if t < at.timestamp() + 200 else 4.1

    for pod in roll.old_pods:
        if "_deleted" not in pod["metadata"]:
            quiet(s, [pod], NAME, 520)
        cpu_seconds(s, pod, NAME, lambda t, f=share: 0.12 * f(t))
        requests(s, pod, NAME, rps=share, codes={
            "200": lambda t: 0.97 if t >= at.timestamp() + 200 else 0.995,
            "409": lambda t: 0.004,
            "500": lambda t: 0.026 if t >= at.timestamp() + 200 else 0.001},
            median=lambda t: 1.4 if t >= at.timestamp() + 200 else 0.18,
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
    chatter(s, old_live, NAME, NAME, [
        ("info", "slot 2028-02-05T11:30 at store ZRH-Bahnhofstrasse booked for customer "
         "C-204771 (2 fittings)", {}),
        ("info", "GET /api/slots?store=LAAX-Base 200 in 164ms", {}),
        ("warn", "HikariPool-1 - Connection is not available, request timed out after "
         "1500ms (active=20, idle=0, waiting=14)", {}),
        ("error", "POST /api/bookings 500: JDBC acquisition timeout while saving booking "
         "B-99120", {"http.response.status_code": 500}),
    ], 180, start=at + timedelta(minutes=4))
    chatter(s, old_live, NAME, NAME, [
        ("info", "slot 2028-02-05T10:15 at store DAV-Platz booked for customer C-188102 "
         "(1 fitting)", {}),
        ("info", "GET /api/slots?store=ZRH-Bahnhofstrasse 200 in 71ms", {}),
    ], 120, end=at)
    ksm_deployment(s, NS, NAME, lambda t: 4.0,
                   lambda t: 4.0 if t < at.timestamp() + 50 else 3.0,
                   lambda t: 0.0 if t < at.timestamp() + 50 else 2.0)

    # ---- red herrings
    pr_at = at - timedelta(minutes=44)
    pr = Ctr("pricing-rules", f"{ACR}/rentals/pricing-rules:2.9.0", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready"))
    _, prs = steady(s, NS, "pricing-rules", [pr], nodes=nodes, replicas=2, revision=33,
                    rollout=pr_at, offset=2,
                    old=(32, s.ago(days=9), [Ctr("pricing-rules",
                                                 f"{ACR}/rentals/pricing-rules:2.8.4")]))
    quiet(s, prs, "pricing-rules", 300)
    chatter(s, prs, "pricing-rules", "pricing-rules", [
        ("info", "pricing-rules 2.9.0 started, 318 rules loaded (season HIGH)", {}),
        ("warn", "rule PKG-FAMILY-4 overlaps rule PKG-FAMILY-3 for 2028-02-10..2028-02-17, "
         "first match wins", {}),
    ], 40, start=pr_at)
    gi = Ctr("gear-inventory", f"{ACR}/rentals/gear-inventory:6.0.2", port=8080,
             requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"})
    _, gis = steady(s, NS, "gear-inventory", [gi], nodes=nodes, replicas=2, revision=21,
                    rollout=s.ago(days=4, hours=3), offset=1,
                    restarted={0: (s.ago(days=2, hours=22), "OOMKilled", 137)})
    quiet(s, gis, "gear-inventory", 560)
    chatter(s, gis, "gear-inventory", "gear-inventory", [
        ("info", "reserved boots SIZE-27.5 x1 at DAV-Platz", {}),
        ("warn", "stock drift at LAAX-Base: scanner says 14 skis, ledger 15", {}),
    ], 50)
    return s
