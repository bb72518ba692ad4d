"""Larkspur Freight: the driver app's BFF pins the telematics gateway's public key."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    ago,
    configmap,
    container,
    deployment,
    ecs,
    endpoints,
    event,
    iso,
    namespace,
    parse,
    pod,
    replicaset,
    rng,
    service,
    write_scenario,
)
from .helpers import json_line, nodes_for


def pinned_cert() -> None:
    """Larkspur Freight: the driver app's BFF pins the telematics gateway's public key."""
    now = parse("2026-11-24T07:40:00Z")
    ns = "fleet"
    rot = ago(now, minutes=52)
    r = rng("pin")
    nodes = nodes_for(now, "ip-10-20-3", 3, base_days=40)
    gw_c = [
        container(
            "gateway",
            "registry.larkspur.io/fleet/telematics-gateway:5.2.0",
            port=8443,
            probe_path="/ready",
            env=[{"name": "TLS_CERT_DIR", "value": "/etc/gateway/tls"}],
        )
    ]
    bff_c = [
        container(
            "bff",
            "registry.larkspur.io/fleet/driver-app-bff:3.14.1",
            port=8080,
            env=[
                {"name": "GATEWAY_URL", "value": "https://telematics-gateway.fleet.svc:8443"},
                {"name": "GATEWAY_PINSET_FILE", "value": "/etc/bff/pins.json"},
            ],
        )
    ]
    disp_c = [container("api", "registry.larkspur.io/fleet/dispatch-api:8.0.3", port=8080)]
    eta_c = [container("worker", "registry.larkspur.io/fleet/eta-worker:2.7.9", port=None)]
    objs = [
        namespace(ns, ago(now, days=400)),
        *nodes,
        deployment(
            "telematics-gateway",
            ns,
            ago(now, days=200),
            gw_c,
            replicas=3,
            revision=31,
            ready=3,
            updated=3,
            available=3,
        ),
        replicaset("telematics-gateway", ns, "6c9f7d8b54", ago(now, days=9), gw_c, 31, 3, 3),
        deployment(
            "driver-app-bff",
            ns,
            ago(now, days=300),
            bff_c,
            replicas=4,
            revision=58,
            ready=4,
            updated=4,
            available=4,
        ),
        replicaset("driver-app-bff", ns, "5d4b8f9c7", ago(now, days=6), bff_c, 58, 4, 4),
        deployment(
            "dispatch-api",
            ns,
            ago(now, days=500),
            disp_c,
            replicas=3,
            revision=102,
            ready=3,
            updated=3,
            available=3,
        ),
        deployment(
            "eta-worker",
            ns,
            ago(now, days=120),
            eta_c,
            replicas=2,
            revision=17,
            ready=2,
            updated=2,
            available=2,
        ),
        configmap(
            "driver-app-bff-pins",
            ns,
            ago(now, days=190),
            {
                "pins.json": '{"telematics-gateway.fleet.svc": {"algorithm": "spki-sha256", '
                '"pins": ["primary-2025q4"], "enforce": true}}'
            },
        ),
        configmap(
            "telematics-gateway-tls-schedule",
            ns,
            ago(now, days=200),
            {
                "rotation": "quarterly, issuer larkspur-internal-ca, new key pair each rotation",
                "next": "2026-11-24T06:45Z",
            },
        ),
        service("telematics-gateway", ns, ago(now, days=200), 8443, 8443, cluster_ip="10.96.41.7"),
        service("driver-app-bff", ns, ago(now, days=300), 80, 8080, cluster_ip="10.96.41.90"),
        service("dispatch-api", ns, ago(now, days=500), 80, 8080, cluster_ip="10.96.12.3"),
    ]
    pods_info = []
    for dep, h, c, n_ in (
        ("telematics-gateway", "6c9f7d8b54", gw_c, 3),
        ("driver-app-bff", "5d4b8f9c7", bff_c, 4),
        ("dispatch-api", "7f6c5b4d9", disp_c, 3),
        ("eta-worker", "58b7c6d4f", eta_c, 2),
    ):
        for i in range(n_):
            name = f"{dep}-{h}-{'abcdefghk'[i]}{r.choice('xqzmw')}{r.randint(10, 99)}"
            objs.append(
                pod(
                    name,
                    ns,
                    ago(now, days=5, hours=i),
                    c,
                    owner=("ReplicaSet", f"{dep}-{h}"),
                    node_name=nodes[i % 3]["metadata"]["name"],
                    labels={"app": dep, "pod-template-hash": h},
                )
            )
            pods_info.append((dep, name, c[0]["name"]))
    objs.append(
        endpoints(
            "telematics-gateway",
            ns,
            ago(now, days=200),
            ["10.244.3.21", "10.244.7.40", "10.244.1.9"],
            8443,
        )
    )
    objs.append(
        event(
            ns,
            "Pod",
            pods_info[10][1],
            "BackOff",
            'Back-off pulling image "registry.larkspur.io/fleet/eta-worker:2.7.9"',
            ago(now, minutes=58),
            ago(now, minutes=57),
            2,
        )
    )
    objs.append(
        event(
            ns,
            "Deployment",
            "dispatch-api",
            "ScalingReplicaSet",
            "Scaled up replica set dispatch-api-7f6c5b4d9 to 3",
            ago(now, minutes=40),
            ago(now, minutes=40),
            1,
            "Normal",
            "deployment-controller",
        )
    )
    logs = []
    pod_logs = {}
    gw_pods = [p for p in pods_info if p[0] == "telematics-gateway"]
    for _dep, name, cn in gw_pods:
        lines = []
        t = ago(now, hours=2)
        while t < now:
            if abs((t - rot).total_seconds()) < 30:
                msg = "tls: certificate files changed on disk, reloading /etc/gateway/tls"
                lines.append(f"{iso(t)} INFO  {msg}")
                logs.append(ecs(t, msg, "info", "telematics-gateway", ns, name, cn))
                msg = (
                    "tls: serving new certificate serial=4F:21:9A:0C "
                    "subject=CN=telematics-gateway.fleet.svc "
                    "notBefore=2026-11-24T06:45:00Z notAfter=2027-02-22T06:45:00Z "
                    "issuer=larkspur-internal-ca"
                )
                lines.append(f"{iso(t)} INFO  {msg}")
                logs.append(ecs(t, msg, "info", "telematics-gateway", ns, name, cn))
            elif r.random() < 0.4:
                msg = (
                    f"ingest batch ok vehicles={r.randint(800, 1400)} "
                    f"points={r.randint(20000, 40000)} p99_ms={r.randint(14, 40)}"
                )
                lines.append(f"{iso(t)} INFO  {msg}")
                if r.random() < 0.3:
                    logs.append(ecs(t, msg, "info", "telematics-gateway", ns, name, cn))
            if t > rot and r.random() < 0.25:
                msg = (
                    f"tls: handshake from 10.244.{r.choice([2, 5, 6])}.{r.randint(10, 90)} "
                    "aborted by client: remote error: bad certificate"
                )
                lines.append(f"{iso(t)} WARN  {msg}")
                logs.append(ecs(t, msg, "warn", "telematics-gateway", ns, name, cn))
            t += timedelta(seconds=30)
        pod_logs[f"{ns}/{name}/{cn}.log"] = "\n".join(lines)
    for dep, name, cn in pods_info:
        if dep == "driver-app-bff":
            lines = []
            t = ago(now, hours=2)
            while t < now:
                if t < rot:
                    if r.random() < 0.5:
                        lines.append(
                            json_line(t, "info", f"GET /v2/trips/active 200 {r.randint(30, 90)}ms")
                        )
                else:
                    if r.random() < 0.6:
                        m = (
                            "gateway call failed: javax.net.ssl.SSLPeerUnverifiedException: "
                            "Certificate pinning failure! "
                            "Peer certificate chain did not match the configured pin set for "
                            "telematics-gateway.fleet.svc "
                            "(pin set primary-2025q4)"
                        )
                        lines.append(json_line(t, "error", m))
                        logs.append(
                            ecs(
                                t,
                                m,
                                "error",
                                "driver-app-bff",
                                ns,
                                name,
                                cn,
                                **{"error.type": "SSLPeerUnverifiedException"},
                            )
                        )
                    if r.random() < 0.5:
                        m = (
                            f"GET /v2/trips/active 502 {r.randint(3, 12)}ms "
                            "upstream=telematics-gateway"
                        )
                        lines.append(json_line(t, "warn", m))
                        logs.append(
                            ecs(
                                t,
                                m,
                                "warn",
                                "driver-app-bff",
                                ns,
                                name,
                                cn,
                                **{"http.response.status_code": 502},
                            )
                        )
                t += timedelta(seconds=20)
            pod_logs[f"{ns}/{name}/{cn}.log"] = "\n".join(lines)
        elif dep in ("dispatch-api", "eta-worker"):
            lines = []
            t = ago(now, hours=2)
            while t < now:
                m = (
                    f"telematics-gateway positions fetched n={r.randint(200, 900)} in "
                    f"{r.randint(20, 60)}ms"
                    if dep == "eta-worker"
                    else f"POST /dispatch/assign 200 {r.randint(20, 80)}ms"
                )
                lines.append(f'{iso(t)} level=info msg="{m}"')
                if r.random() < 0.2:
                    logs.append(ecs(t, m, "info", dep, ns, name, cn))
                if dep == "eta-worker" and abs((t - ago(now, minutes=20)).total_seconds()) < 15:
                    m = "redis: slow command HGETALL eta:zones took 212ms"
                    lines.append(f'{iso(t)} level=warn msg="{m}"')
                    logs.append(ecs(t, m, "warn", dep, ns, name, cn))
                t += timedelta(seconds=45)
            pod_logs[f"{ns}/{name}/{cn}.log"] = "\n".join(lines)
    write_scenario(
        "driver-app-trips-502",
        {
            "id": "driver-app-trips-502",
            "title": "Driver app cannot load active trips",
            "now": iso(now),
            "report": "drivers are calling support, the app shows 'trips unavailable' since about "
            "6:45. "
            "is the telematics gateway down? it had some cert thing scheduled this morning",
            "truth": {
                "category": "certificate",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "driver-app-bff"},
                "evidence": [
                    "Certificate pinning failure",
                    "pin set primary-2025q4",
                    "serving new certificate",
                ],
                "fix": "Update driver-app-bff's pin set (driver-app-bff-pins) to include the "
                "rotated key "
                "(and pin the CA or a backup key so scheduled rotations do not break it)",
            },
        },
        objs,
        pod_logs,
        logs,
    )
