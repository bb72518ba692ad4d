"""Corvid Travel: the loyalty partner retired API v1 on schedule; points-sync still calls it."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Metrics,
    ago,
    configmap,
    container,
    deployment,
    ecs,
    event,
    iso,
    namespace,
    parse,
    replicaset,
    rng,
    service,
    write_scenario,
)
from .helpers import nodes_for, pods_for


def api_sunset() -> None:
    """Corvid Travel: the loyalty partner retired API v1 on schedule; points-sync still calls it."""
    now = parse("2026-12-01T10:25:00Z")
    ns = "loyalty"
    r = rng("sunset")
    cut = parse("2026-12-01T09:00:00Z")
    nodes = nodes_for(now, "gke-prod-default", 3)
    ps_c = [
        container(
            "points-sync",
            "europe-docker.pkg.dev/corvid/apps/points-sync:1.18.2",
            port=8080,
            env=[
                {
                    "name": "PARTNER_BASE_URL",
                    "value": "https://api.skymiles-partner.example/loyalty/v1",
                },
                {"name": "RETRY_MAX_ATTEMPTS", "value": "50"},
            ],
        )
    ]
    ac_c = [
        container("accrual-api", "europe-docker.pkg.dev/corvid/apps/accrual-api:3.0.5", port=8080)
    ]
    objs = [
        namespace(ns, ago(now, days=1000)),
        *nodes,
        deployment(
            "points-sync",
            ns,
            ago(now, days=700),
            ps_c,
            replicas=2,
            revision=35,
            ready=2,
            updated=2,
            available=2,
        ),
        replicaset("points-sync", ns, "6c8b7f9d5", ago(now, days=40), ps_c, 35, 2, 2),
        deployment(
            "accrual-api",
            ns,
            ago(now, days=700),
            ac_c,
            replicas=3,
            revision=70,
            ready=3,
            updated=3,
            available=3,
        ),
        service("points-sync", ns, ago(now, days=700), 80, 8080, cluster_ip="10.8.14.2"),
        service("accrual-api", ns, ago(now, days=700), 80, 8080, cluster_ip="10.8.14.9"),
        configmap(
            "partner-endpoints",
            ns,
            ago(now, days=700),
            {
                "skymiles": "https://api.skymiles-partner.example/loyalty/v1",
                "hotelclub": "https://partners.hotelclub.example/api/v3",
            },
        ),
    ]
    pods_ = pods_for(
        objs,
        now,
        r,
        ns,
        nodes,
        [("points-sync", "6c8b7f9d5", ps_c, 2), ("accrual-api", "5b9d8c6f7", ac_c, 3)],
        9,
    )
    objs.append(
        event(
            ns,
            "Pod",
            pods_["accrual-api"][2],
            "Killing",
            "Stopping container accrual-api",
            ago(now, minutes=44),
            ago(now, minutes=44),
            1,
            "Normal",
        )
    )
    logs, pod_logs = [], {}
    m = Metrics()
    for name in pods_["points-sync"]:
        lines = []
        t = ago(now, hours=2)
        while t < now:
            member = f"M{r.randint(10**7, 10**8)}"
            if t < cut:
                if t > cut - timedelta(minutes=60) and r.random() < 0.05:
                    msg = (
                        'partner response header Sunset: "Tue, 01 Dec 2026 09:00:00 GMT" '
                        "Deprecation: true on /loyalty/v1/accruals"
                    )
                    lines.append(f"{iso(t)} | WARN  | PartnerClient | {msg}")
                    logs.append(ecs(t, msg, "warn", "points-sync", ns, name, "points-sync"))
                msg = f"accrual pushed member={member} miles={r.randint(200, 5000)} status=201"
                lines.append(f"{iso(t)} | INFO  | PartnerClient | {msg}")
            else:
                msg = (
                    f"POST https://api.skymiles-partner.example/loyalty/v1/accruals -> 410 Gone "
                    'body={"error":"version_retired",'
                    '"detail":"Loyalty API v1 was retired on 2026-12-01. '
                    f'Use /loyalty/v3."}} member={member}'
                )
                lines.append(f"{iso(t)} | ERROR | PartnerClient | {msg}")
                logs.append(
                    ecs(
                        t,
                        msg,
                        "error",
                        "points-sync",
                        ns,
                        name,
                        "points-sync",
                        **{"http.response.status_code": 410},
                    )
                )
                if r.random() < 0.3:
                    msg = (
                        f"accrual for {member} re-queued (attempt {r.randint(2, 14)}/50), "
                        f"backoff {r.choice([30, 60, 120])}s"
                    )
                    lines.append(f"{iso(t)} | INFO  | RetryQueue | {msg}")
            t += timedelta(seconds=25)
        pod_logs[f"{ns}/{name}/points-sync.log"] = "\n".join(lines)
    t = ago(now, hours=2)
    c = {"201": 0.0, "410": 0.0}
    depth = 40.0
    while t <= now:
        bad = t >= cut
        c["201"] += 0 if bad else 180 + r.randint(0, 20)
        c["410"] += 190 + r.randint(0, 20) if bad else 0
        depth = depth + 185 if bad else max(10.0, depth + r.randint(-10, 10))
        for code in ("201", "410"):
            m.add(
                "http_client_requests_total",
                "counter",
                "Outbound partner calls.",
                {"namespace": ns, "service": "points-sync", "peer": "skymiles", "code": code},
                t,
                c[code],
            )
        m.add(
            "points_sync_retry_queue_depth",
            "gauge",
            "Accruals waiting for a retry.",
            {"namespace": ns, "service": "points-sync"},
            t,
            depth,
        )
        m.add(
            "container_memory_working_set_bytes",
            "gauge",
            "Working set.",
            {"namespace": ns, "pod": pods_["points-sync"][0], "container": "points-sync"},
            t,
            310_000_000 + r.randint(0, 9_000_000),
        )
        t += timedelta(minutes=1)
    write_scenario(
        "miles-not-credited",
        {
            "id": "miles-not-credited",
            "title": "Members' miles not credited since this morning",
            "now": iso(now),
            "report": "members are complaining their skymiles aren't showing up after bookings "
            "since ~9am. points-sync "
            "pods look fine, no restarts. is skymiles having an outage? their status page is green",
            "truth": {
                "category": "dependency_failure",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "points-sync"},
                "evidence": [
                    "410 Gone",
                    "Loyalty API v1 was retired on 2026-12-01",
                    "points_sync_retry_queue_depth",
                ],
                "fix": "Migrate points-sync to the partner's /loyalty/v3 API (PARTNER_BASE_URL and "
                "payloads); "
                "the queued accruals can be replayed after",
            },
        },
        objs,
        pod_logs,
        logs,
        m,
    )
