# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Alder Hotels: booking-api's liveness probe runs `SELECT 1` on the database. A planned
35-second Patroni switchover makes every pod's liveness fail at once; the kubelet restarts
all eight together, their cold start (cache warm-up, all at once) outlasts the liveness
deadline, and the restarts go on for eight minutes after the database is back."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    parse,
    pod,
    pod_template,
    replicaset,
    running_status,
    series,
    service,
    terminated,
    ts,
    uid,
)


def build() -> Story:
    now = parse("2026-11-26T13:52:00Z")
    sw = parse("2026-11-26T13:20:00Z")  # switchover begins
    sw_end = sw + td(seconds=35)  # new leader accepts writes
    back = parse("2026-11-26T13:28:10Z")  # last booking pod Ready again
    old = parse("2025-09-01T07:00:00Z")
    s = Story(
        id="booking-outage-after-db-maintenance",
        title="Bookings down ~8 min during DB maintenance",
        now=now,
        report=(
            "bookings were hard down from 13:20 to ~13:28, every request 503. the DBAs had a postgres "
            "switchover at 13:20 which was supposed to be a 30 second blip. is pg-bookings still "
            "unhealthy? we need to know before the 15:00 switchover of the second cluster"
        ),
        truth={
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": "reservations", "name": "booking-api"},
            "evidence": [
                "Liveness probe failed",
                "failed liveness probe, will be restarted",
                "database check failed",
                "/healthz/",
            ],
            "fix": (
                "Take the database out of booking-api's liveness probe (keep it in readiness at most), "
                "add a startupProbe for the 60-90 s warm-up; then a switchover costs seconds of errors, "
                "not a restart storm"
            ),
        },
    )
    s.add(
        namespace("reservations", old), namespace("databases", old), namespace("ingress-nginx", old)
    )
    nodes = [
        "gke-prod-pool-a-3f9c1d2e-7k1m",
        "gke-prod-pool-a-3f9c1d2e-q2wz",
        "gke-prod-pool-b-81d0aa4c-h5tn",
    ]
    tpl = pod_template(
        {"app": "booking-api", "component": "web"},
        [
            container(
                "booking-api",
                "europe-docker.pkg.dev/alder-prod/apps/booking-api:2026.11.3",
                cpu_req="500m",
                mem_req="768Mi",
                cpu_lim="1500m",
                mem_lim="1536Mi",
                port=8000,
                command=[
                    "gunicorn",
                    "alder.wsgi",
                    "--workers",
                    "4",
                    "--bind",
                    "0.0.0.0:8000",
                    "--preload",
                ],
                readiness=http_probe("/readyz/", 8000, period=5, timeout=2),
                liveness=http_probe("/healthz/", 8000, period=10, timeout=2, failures=3, delay=30),
                env=[
                    {"name": "DATABASE_HOST", "value": "pg-bookings.databases.svc"},
                    {"name": "DJANGO_SETTINGS_MODULE", "value": "alder.settings.prod"},
                    {"name": "WARM_CACHE_ON_BOOT", "value": "true"},
                ],
            )
        ],
    )
    created = now - td(days=5, hours=2)
    dep = deployment("booking-api", "reservations", old, tpl, 8, 57)
    rs_name = "booking-api-5c9d8f7b6d"
    s.add(dep, replicaset(dep, "5c9d8f7b6d", created, 57, tpl, 8))
    rng = random.Random(3)
    pods = []
    for i, sfx in enumerate(
        ["2bq7h", "6tkxw", "9hd2p", "c4mzr", "fj8vn", "k3sxl", "p7wqd", "x5nrt"]
    ):
        name = f"{rs_name}-{sfx}"
        restarts = rng.choice([3, 4, 4, 5, 2, 3])
        started = back - td(seconds=rng.randint(0, 140))
        last_kill = started - td(seconds=rng.randint(10, 40))
        st = running_status(
            tpl["spec"]["containers"][0],
            started,
            restarts=restarts,
            last=terminated("Error", 137, last_kill - td(seconds=62), last_kill),
        )
        n = nodes[i % 3]
        ip = f"10.52.{i % 3}.{40 + i}"
        s.add(
            pod(
                name,
                "reservations",
                created,
                tpl,
                n,
                ip,
                "ReplicaSet",
                rs_name,
                statuses=[st],
                started=started,
            )
        )
        pods.append((name, n, ip, restarts, started, last_kill))
        k1 = sw + td(seconds=27 + rng.randint(0, 6))
        s.add(
            event(
                "reservations",
                "Pod",
                name,
                "Unhealthy",
                "Liveness probe failed: HTTP probe failed with statuscode: 503",
                sw + td(seconds=7 + i),
                k1,
                count=3,
                type_="Warning",
                host=n,
                field_path="spec.containers{booking-api}",
            ),
            event(
                "reservations",
                "Pod",
                name,
                "Unhealthy",
                f'Liveness probe failed: Get "http://{ip}:8000/healthz/": dial tcp {ip}:8000: connect: connection refused',
                k1 + td(seconds=35),
                last_kill - td(seconds=3),
                count=3 * (restarts - 1),
                type_="Warning",
                host=n,
                field_path="spec.containers{booking-api}",
            ),
            event(
                "reservations",
                "Pod",
                name,
                "Killing",
                "Container booking-api failed liveness probe, will be restarted",
                k1,
                last_kill,
                count=restarts,
                host=n,
                field_path="spec.containers{booking-api}",
            ),
            event(
                "reservations",
                "Pod",
                name,
                "BackOff",
                "Back-off restarting failed container booking-api in pod "
                + name
                + "_reservations("
                + uid(name + "reservations")
                + ")",
                k1 + td(seconds=70),
                last_kill + td(seconds=2),
                count=restarts + rng.randint(1, 4),
                type_="Warning",
                host=n,
                field_path="spec.containers{booking-api}",
            ),
            event(
                "reservations",
                "Pod",
                name,
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                sw + td(seconds=4),
                started + td(seconds=50),
                count=rng.randint(20, 60),
                type_="Warning",
                host=n,
                field_path="spec.containers{booking-api}",
            ),
        )
    s.add(
        service(
            "booking-api", "reservations", old, {"app": "booking-api"}, 80, 8000, "10.96.12.201"
        ),
        endpoints("booking-api", "reservations", old, [(p[2], p[0], p[1]) for p in pods], [], 8000),
    )

    # the database: a planned switchover, healthy since
    pg_tpl = pod_template(
        {"application": "spilo", "cluster-name": "pg-bookings"},
        [
            container(
                "postgres",
                "ghcr.io/zalando/spilo-16:3.3-p1",
                cpu_req="2",
                mem_req="8Gi",
                cpu_lim="4",
                mem_lim="8Gi",
                port=5432,
            )
        ],
    )
    pg = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "pg-bookings",
            "namespace": "databases",
            "uid": uid("pg-bookingsdatabases"),
            "creationTimestamp": ts(old),
            "generation": 6,
            "labels": {"cluster-name": "pg-bookings"},
        },
        "spec": {
            "replicas": 3,
            "serviceName": "pg-bookings",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"application": "spilo", "cluster-name": "pg-bookings"}},
            "updateStrategy": {"type": "OnDelete"},
            "template": pg_tpl,
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "observedGeneration": 6,
            "currentRevision": "pg-bookings-7d8c9b6f54",
            "updateRevision": "pg-bookings-7d8c9b6f54",
        },
    }
    s.add(pg)
    for i in range(3):
        role = "master" if i == 1 else "replica"
        s.add(
            pod(
                f"pg-bookings-{i}",
                "databases",
                now - td(days=30),
                pg_tpl,
                nodes[i],
                f"10.52.{i}.10",
                "StatefulSet",
                "pg-bookings",
                extra_labels={"spilo-role": role},
            )
        )
    s.add(
        service(
            "pg-bookings",
            "databases",
            old,
            {"application": "spilo", "cluster-name": "pg-bookings", "spilo-role": "master"},
            5432,
            5432,
            "10.96.40.2",
            port_name="postgresql",
        ),
        endpoints(
            "pg-bookings",
            "databases",
            sw_end,
            [("10.52.1.10", "pg-bookings-1", nodes[1])],
            [],
            5432,
            port_name="postgresql",
        ),
    )
    s.add(
        event(
            "databases",
            "Pod",
            "pg-bookings-0",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            sw + td(seconds=5),
            sw + td(seconds=25),
            count=3,
            type_="Warning",
            host=nodes[0],
            field_path="spec.containers{postgres}",
        )
    )
    # ---- metrics
    start = now - td(hours=7)
    for name, _n, _ip, restarts, _started, _last_kill in pods:
        kills = sorted(
            [sw + td(seconds=30)]
            + [sw + td(seconds=30 + 75 * k + rng.randint(0, 20)) for k in range(1, restarts)]
        )
        s.metric(
            "kube_pod_container_status_restarts",
            "counter",
            "The number of container restarts per container.",
            {"namespace": "reservations", "pod": name, "container": "booking-api"},
            series(start, now, 30, lambda t, kills=kills: sum(1 for k in kills if k <= t)),
        )
        s.metric(
            "prober_probe",
            "counter",
            "Cumulative number of a liveness, readiness or startup probe for a container by result.",
            {
                "namespace": "reservations",
                "pod": name,
                "container": "booking-api",
                "probe_type": "Liveness",
                "result": "failed",
            },
            counter(start, now, 30, lambda t: 0.1 if sw <= t < back else 0.0),
        )
    up = series(start, now, 15, lambda t: 0 if sw + td(seconds=3) <= t < sw_end else 1)
    s.metric(
        "pg_up",
        "gauge",
        "Whether the last scrape of metrics from PostgreSQL was able to connect to the server.",
        {"namespace": "databases", "service": "pg-bookings", "instance": "pg-bookings-master"},
        up,
    )
    s.metric(
        "nginx_ingress_controller_requests",
        "counter",
        "The total number of client requests",
        {
            "namespace": "reservations",
            "ingress": "booking-api",
            "service": "booking-api",
            "status": "200",
        },
        counter(start, now, 30, lambda t: 4 if sw <= t < back else 140, base=51_000_000),
    )
    s.metric(
        "nginx_ingress_controller_requests",
        "counter",
        "The total number of client requests",
        {
            "namespace": "reservations",
            "ingress": "booking-api",
            "service": "booking-api",
            "status": "503",
        },
        counter(start, now, 30, lambda t: 135 if sw <= t < back else 0.02, base=1800),
    )

    # ---- logs
    t = sw - td(minutes=30)
    while t < now:
        name, n, ip = rng.choice(pods)[:3]
        if sw + td(seconds=3) <= t < sw_end:
            s.doc(
                t,
                "error",
                "booking-api",
                "reservations",
                name,
                "booking-api",
                'healthz: database check failed: connection to server at "pg-bookings.databases.svc" (10.96.40.2), '
                "port 5432 failed: Connection refused",
                error__type="OperationalError",
            )
        elif sw_end <= t < back:
            if rng.random() < 0.5:
                s.doc(
                    t,
                    "info",
                    "booking-api",
                    "reservations",
                    name,
                    "booking-api",
                    f"warming room inventory cache: loaded {rng.randint(2000, 48000)}/48211 rooms",
                )
            else:
                s.doc(
                    t,
                    "error",
                    "ingress-nginx",
                    "ingress-nginx",
                    "ingress-nginx-controller-6f7d8c9b5-lm2qp",
                    "controller",
                    "upstream reservations-booking-api-80 has no live endpoints, returning 503",
                    http__response__status_code=503,
                )
        else:
            s.doc(
                t,
                "info",
                "booking-api",
                "reservations",
                name,
                "booking-api",
                f"POST /api/v2/bookings/ 201 {rng.randint(60, 240)}ms",
                http__response__status_code=201,
            )
        t += td(seconds=rng.uniform(1, 6))
    patroni = [
        (sw - td(seconds=10), "INFO: no action. I am (pg-bookings-0), the leader with the lock"),
        (
            sw,
            "INFO: received switchover request with leader=pg-bookings-0 candidate=pg-bookings-1 scheduled_at=None",
        ),
        (
            sw + td(seconds=2),
            'INFO: Got response from pg-bookings-1 http://10.52.1.10:8008/patroni: {"state": "running", "role": "replica"}',
        ),
        (sw + td(seconds=3), "INFO: Lock owner: pg-bookings-0; I am pg-bookings-0"),
        (sw + td(seconds=4), "INFO: manual failover: demoting myself"),
        (sw + td(seconds=31), "INFO: Leader key released"),
        (sw + td(seconds=33), "INFO: Lock owner: pg-bookings-1; I am pg-bookings-0"),
        (
            sw + td(seconds=36),
            "INFO: no action. I am (pg-bookings-0), a secondary, and following a leader (pg-bookings-1)",
        ),
    ]
    for t, msg in patroni:
        s.doc(t, "info", "pg-bookings", "databases", "pg-bookings-0", "postgres", msg)
    s.doc(
        sw + td(seconds=34),
        "info",
        "pg-bookings",
        "databases",
        "pg-bookings-1",
        "postgres",
        "INFO: promoted self to leader by acquiring session lock",
    )
    t = sw + td(minutes=1)
    while t < now:
        s.doc(
            t,
            "info",
            "pg-bookings",
            "databases",
            "pg-bookings-1",
            "postgres",
            "INFO: no action. I am (pg-bookings-1), the leader with the lock",
        )
        t += td(minutes=5)
    name, n, ip, restarts, started, last_kill = pods[0]
    boot = last_kill - td(seconds=62)
    prev = [
        f"[{boot:%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Starting gunicorn 22.0.0",
        f"[{boot + td(seconds=1):%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Listening at: http://0.0.0.0:8000 (1)",
        f"{boot + td(seconds=2):%Y-%m-%d %H:%M:%S},114 INFO alder.boot warming room inventory cache (48211 rooms)",
    ]
    for k in range(1, 6):
        prev.append(
            f"{boot + td(seconds=2 + 11 * k):%Y-%m-%d %H:%M:%S},{rng.randint(100, 999)} INFO alder.boot "
            f"warming room inventory cache: loaded {k * 7400}/48211 rooms"
        )
    prev.append(
        f"[{last_kill - td(seconds=1):%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Handling signal: term"
    )
    s.pod_log("reservations", name, "booking-api", prev, previous=True)
    cur = [
        f"[{started:%Y-%m-%d %H:%M:%S} +0000] [1] [INFO] Starting gunicorn 22.0.0",
        f"{started + td(seconds=2):%Y-%m-%d %H:%M:%S},301 INFO alder.boot warming room inventory cache (48211 rooms)",
        f"{started + td(seconds=26):%Y-%m-%d %H:%M:%S},877 INFO alder.boot cache warm in 24.5s",
    ]
    t = started + td(seconds=30)
    while t < now:
        cur.append(
            f"{t:%Y-%m-%d %H:%M:%S},{rng.randint(100, 999)} INFO django.request POST /api/v2/bookings/ 201 {rng.randint(60, 240)}ms"
        )
        t += td(seconds=rng.randint(20, 90))
    s.pod_log("reservations", name, "booking-api", cur)
    return s
