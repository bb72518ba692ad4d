# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 5: a Service selects on `version`; a rollout changed that label, so its endpoints shrank to none."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    endpoints,
    healthy_deployment,
    iso,
    iso_ms,
    namespace,
    pod,
    replicaset,
    running,
    service,
    std_nodes,
    steps,
    ts,
)

NS = "storefront"


def build() -> Scenario:
    s = Scenario(
        "storefront-recs-version-label",
        "recommendations carousel blank, gateway returns 503",
        "2026-12-01T13:05:00Z",
        "the 'you may also like' carousel is empty on every product page since about 12:40. the edge proxy "
        "logs are full of 503s for /api/recs. recs 4.0 went out at 12:30 but all its pods are green and ready. "
        "envoy issue?",
        {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": NS, "name": "recs"},
            "evidence": ["version: v3", "version: v4", "no healthy upstream"],
            "fix": "Drop `version` from the recs Service's selector (select on app only) or set it to v4; "
            "keep version labels for metrics, not for routing",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.70.2", 3, zone="us-west-2")
    s.add(namespace(NS, s.ago(days=700)))
    old_img, new_img = (
        "harbor.shopwell.io/storefront/recs:3.14.2",
        "harbor.shopwell.io/storefront/recs:4.0.0",
    )

    def ctr(img: str, ver: str) -> dict:
        return container(
            "recs",
            img,
            ports=[8000],
            env={"MODEL_BUCKET": "gs://shopwell-recs-models", "APP_VERSION": ver, "WORKERS": "4"},
            requests={"cpu": "500m", "memory": "1Gi"},
            limits={"memory": "1536Mi"},
            readinessProbe={"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10},
        )

    oh, nh = "59c8f7d6b4", "7d94b6c5f8"
    olab = {"app": "recs", "version": "v3", "pod-template-hash": oh}
    nlab = {"app": "recs", "version": "v4", "pod-template-hash": nh}
    t0 = s.ago(minutes=35)
    s.add(
        deployment(
            "recs",
            NS,
            {"app": "recs", "owner": "discovery"},
            nlab,
            [ctr(new_img, "4.0.0")],
            4,
            s.ago(days=600),
            77,
            52,
            available_status(4, t0 + timedelta(minutes=11)),
            template_annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8000"},
        )
    )
    s.add(
        replicaset(
            f"recs-{oh}", NS, "recs", olab, [ctr(old_img, "3.14.2")], 0, 0, s.ago(days=13), 51
        )
    )
    s.add(replicaset(f"recs-{nh}", NS, "recs", nlab, [ctr(new_img, "4.0.0")], 4, 4, t0, 52))
    new = []
    for i, sfx in enumerate(("8jv2c", "q5ztm", "w3nhx", "b7rdf")):
        pn = f"recs-{nh}-{sfx}"
        ip = f"10.70.{3 + i % 3}.{60 + i}"
        started = t0 + timedelta(minutes=3 * i, seconds=20)
        s.add(
            pod(
                pn,
                NS,
                nlab,
                ("ReplicaSet", f"recs-{nh}"),
                nodes[i % 3],
                [ctr(new_img, "4.0.0")],
                [running("recs", new_img, started)],
                t0 + timedelta(minutes=3 * i),
                ip=ip,
            )
        )
        new.append((ip, pn, nodes[i % 3]))
        s.log(
            NS,
            pn,
            "recs",
            [
                f"{iso(started)} [INFO] recs 4.0.0 loading model two-tower-2026-11-30",
                f"{iso(started + timedelta(seconds=14))} [INFO] model ready, 2.1M items",
                f"{iso(started + timedelta(seconds=15))} [INFO] Listening at: http://0.0.0.0:8000",
            ]
            + [
                f"{iso(started + timedelta(seconds=20 + 10 * j))} [INFO] GET /health 200"
                for j in range(0, 12)
            ],
        )
    svc = service(
        "recs",
        NS,
        {"app": "recs", "version": "v3"},
        80,
        8000,
        s.ago(days=600),
        "172.21.34.90",
        labels={"app": "recs", "owner": "discovery"},
    )
    s.add(svc)
    s.add(endpoints("recs", NS, [], 8000, s.ago(days=600)))
    # the new revision's own metrics Service selects on app only, and has all four pods
    s.add(
        service(
            "recs-metrics",
            NS,
            {"app": "recs"},
            8000,
            8000,
            s.ago(days=200),
            "172.21.34.91",
            labels={"app": "recs", "component": "metrics"},
        )
    )
    ep = endpoints("recs-metrics", NS, new, 8000, s.ago(days=200))
    ep["metadata"]["labels"] = {"app": "recs", "component": "metrics"}
    s.add(ep)
    ev = s.events
    for k in range(4):
        ev.add(
            NS,
            "Deployment",
            "recs",
            "ScalingReplicaSet",
            f"Scaled up replica set recs-{nh} to {k + 1} from {k}",
            t0 + timedelta(minutes=3 * k),
            component="deployment-controller",
            api="apps/v1",
        )
        ev.add(
            NS,
            "Deployment",
            "recs",
            "ScalingReplicaSet",
            f"Scaled down replica set recs-{oh} to {3 - k} from {4 - k}",
            t0 + timedelta(minutes=3 * k + 2),
            component="deployment-controller",
            api="apps/v1",
        )
    edge = healthy_deployment(
        s,
        "edge-proxy",
        NS,
        "envoyproxy/envoy:v1.31.2",
        nodes,
        "10.70.9",
        port=8080,
        replicas=3,
        age_days=6,
        hash_="6b5c4d8f97",
    )
    web = healthy_deployment(
        s,
        "web",
        NS,
        "harbor.shopwell.io/storefront/web:2026.11.28",
        nodes,
        "10.70.8",
        port=3000,
        replicas=3,
        age_days=3,
        hash_="8f6d7c5b49",
    )
    ev.add(
        NS,
        "Pod",
        web[2],
        "Unhealthy",
        'Readiness probe failed: Get "http://10.70.8.22:3000/healthz": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        s.ago(minutes=48),
        type_="Warning",
        host=nodes[2],
        field_path="spec.containers{web}",
    )
    gone = t0 + timedelta(minutes=11)
    for t in steps(s.ago(hours=1, minutes=10), now, 20):
        for j, pn in enumerate(edge):
            tt = t + timedelta(seconds=j * 3)
            if tt > now:
                continue
            if tt < t0 + timedelta(minutes=2):
                code, flags, up = 200, "-", "10.70.3.31:8000"
            elif tt < gone:
                frac = (tt - t0).total_seconds() / (gone - t0).total_seconds()
                code, flags, up = (
                    (503, "UH", "-")
                    if (j + int(tt.timestamp()) // 20) % 10 < int(frac * 10)
                    else (200, "-", "10.70.4.32:8000")
                )
            else:
                code, flags, up = 503, "UH", "-"
            msg = (
                f'[{iso_ms(tt)}] "GET /api/recs?sku=SW-{40000 + int(tt.timestamp()) % 997} HTTP/1.1" {code} {flags} '
                f'0 {19 if code == 503 else 1450} {0 if code == 503 else 38} "{up}" cluster=recs'
            )
            s.doc(
                tt,
                msg,
                "warn" if code == 503 else "info",
                "edge-proxy",
                NS,
                pn,
                "proxy",
                **{
                    "http.response.status_code": code,
                    "url.path": "/api/recs",
                    "error.message": "no healthy upstream" if code == 503 else None,
                },
            )
            if code == 200 and j == 0:
                s.doc(
                    tt,
                    "GET /api/product/SW-41233 200 22ms",
                    "info",
                    "edge-proxy",
                    NS,
                    pn,
                    "proxy",
                    **{"http.response.status_code": 200, "url.path": "/api/product/SW-41233"},
                )
        if t > gone and int(t.timestamp()) % 60 == 0:
            s.doc(
                t,
                "recs widget fetch failed: 503 no healthy upstream (rendering page without carousel)",
                "warn",
                "web",
                NS,
                web[int(t.timestamp()) // 60 % 3],
                "web",
            )
    for d in s.docs:
        if d.get("error.message") is None:
            d.pop("error.message", None)
    s.log(
        NS,
        edge[0],
        "proxy",
        [d["message"] for d in s.docs if d["kubernetes.pod.name"] == edge[0]][-40:],
    )
    # metrics: envoy cluster membership dropping to zero, 503s rising
    members = []
    rq503, rq200 = [], []
    c503, c200 = 0, 800_000
    for t in steps(s.ago(hours=1, minutes=10), now, 30):
        if t < t0 + timedelta(minutes=2):
            m = 4
        elif t < gone:
            m = max(0, 4 - 1 - int((t - t0 - timedelta(minutes=2)).total_seconds() // 180))
        else:
            m = 0
        members.append((m, ts(t)))
        c200 += 90 * m // 4 * 30 // 30 if m else 0
        c503 += (4 - m) * 23
        rq200.append((c200, ts(t)))
        rq503.append((c503, ts(t)))
    s.series(
        "envoy_cluster_membership_healthy",
        "gauge",
        "Healthy hosts in the upstream cluster",
        {"namespace": NS, "pod": edge[0], "envoy_cluster_name": "recs"},
        members,
    )
    s.series(
        "envoy_cluster_upstream_rq_total",
        "counter",
        "Upstream requests by response code",
        {
            "namespace": NS,
            "pod": edge[0],
            "envoy_cluster_name": "recs",
            "envoy_response_code": "200",
        },
        rq200,
    )
    s.series(
        "envoy_cluster_upstream_rq_total",
        "counter",
        "Upstream requests by response code",
        {
            "namespace": NS,
            "pod": edge[0],
            "envoy_cluster_name": "recs",
            "envoy_response_code": "503",
        },
        rq503,
    )
    return s
