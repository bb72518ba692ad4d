# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 2: a rollout moves the app to another port; the liveness probe stays on the old one."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    endpoints,
    healthy_deployment,
    iso_ms,
    namespace,
    pod,
    replicaset,
    running,
    service,
    std_nodes,
    terminated,
    waiting,
)

NS = "billing"


def build() -> Scenario:
    s = Scenario(
        "billing-gateway-liveness-port",
        "payment-gateway pods keep restarting after the morning deploy",
        "2026-11-30T10:27:00Z",
        "payment-gateway is crashlooping since the 10:00 release (3.8.0). logs just say it got SIGTERM and shut "
        "down cleanly?? no panic, nothing. old pods still up so customers are ok for now. memory leak maybe?",
        {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "payment-gateway"},
            "evidence": [
                "Liveness probe failed",
                "dial tcp 10.44.2.57:8080: connect: connection refused",
                "listening on :9090",
            ],
            "fix": "Point payment-gateway's liveness probe at the new port 9090 (or the named port `http`) "
            "in 3.8.0's pod template",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.44.1", 3)
    s.add(namespace(NS, s.ago(days=400)))
    old_img, new_img = (
        "ghcr.io/orbitpay/payment-gateway:3.7.4",
        "ghcr.io/orbitpay/payment-gateway:3.8.0",
    )
    probe_live = {
        "httpGet": {"path": "/livez", "port": 8080, "scheme": "HTTP"},
        "initialDelaySeconds": 10,
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "failureThreshold": 3,
    }
    old_ctr = container(
        "gateway",
        old_img,
        ports=[8080],
        env={"GW_LISTEN_ADDR": ":8080", "GW_UPSTREAM": "ledger:7000"},
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        livenessProbe=probe_live,
        readinessProbe={
            "httpGet": {"path": "/readyz", "port": "http", "scheme": "HTTP"},
            "periodSeconds": 5,
            "failureThreshold": 2,
        },
    )
    new_ctr = container(
        "gateway",
        new_img,
        ports=[9090],
        env={"GW_LISTEN_ADDR": ":9090", "GW_UPSTREAM": "ledger:7000", "GW_METRICS_ADDR": ":9102"},
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        livenessProbe=probe_live,
        readinessProbe={
            "httpGet": {"path": "/readyz", "port": "http", "scheme": "HTTP"},
            "periodSeconds": 5,
            "failureThreshold": 2,
        },
    )
    oh, nh = "7b4d6c9f88", "5f9c8d7b46"
    t0 = s.ago(minutes=27)
    s.add(
        deployment(
            "payment-gateway",
            NS,
            {"app": "payment-gateway", "tier": "edge"},
            {"app": "payment-gateway", "pod-template-hash": nh},
            [new_ctr],
            4,
            s.ago(days=380),
            58,
            44,
            available_status(
                5,
                t0,
                updated=2,
                ready=3,
                available=3,
                progressing=(
                    "True",
                    "ReplicaSetUpdated",
                    f'ReplicaSet "payment-gateway-{nh}" is progressing.',
                ),
            ),
            strategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1},
            },
        )
    )
    s.add(
        replicaset(
            f"payment-gateway-{oh}",
            NS,
            "payment-gateway",
            {"app": "payment-gateway", "pod-template-hash": oh},
            [old_ctr],
            3,
            3,
            s.ago(days=9),
            43,
        )
    )
    s.add(
        replicaset(
            f"payment-gateway-{nh}",
            NS,
            "payment-gateway",
            {"app": "payment-gateway", "pod-template-hash": nh},
            [new_ctr],
            2,
            0,
            t0,
            44,
        )
    )
    old_pods = []
    for i, sfx in enumerate(("h2kqp", "wx7dn", "c9vbm")):
        pn = f"payment-gateway-{oh}-{sfx}"
        ip = f"10.44.{i + 1}.{30 + i}"
        s.add(
            pod(
                pn,
                NS,
                {"app": "payment-gateway", "pod-template-hash": oh},
                ("ReplicaSet", f"payment-gateway-{oh}"),
                nodes[i],
                [old_ctr],
                [running("gateway", old_img, s.ago(days=9, minutes=-i))],
                s.ago(days=9),
                ip=ip,
            )
        )
        old_pods.append((ip, pn, nodes[i]))
    new_pods = [
        ("10.44.2.57", f"payment-gateway-{nh}-rj8tz", nodes[1]),
        ("10.44.3.81", f"payment-gateway-{nh}-m4lsx", nodes[2]),
    ]
    for k, (ip, pn, nd) in enumerate(new_pods):
        restarts = 6 - k
        last_start = s.ago(minutes=2 + k * 2, seconds=30)
        last_end = last_start + timedelta(seconds=41)
        st = (
            waiting(
                "gateway",
                new_img,
                "CrashLoopBackOff",
                f"back-off 2m40s restarting failed container=gateway pod={pn}_{NS}",
                restarts=restarts,
                last=terminated("Error", 2, last_start, last_end),
            )
            if k == 0
            else running(
                "gateway",
                new_img,
                s.ago(seconds=25),
                ready=True,
                restarts=restarts,
                last=terminated("Error", 2, last_start, last_end),
            )
        )
        s.add(
            pod(
                pn,
                NS,
                {"app": "payment-gateway", "pod-template-hash": nh},
                ("ReplicaSet", f"payment-gateway-{nh}"),
                nd,
                [new_ctr],
                [st],
                t0 + timedelta(seconds=3 + 20 * k),
                ready=k == 1,
                ip=ip,
                host_ip=nd.split(".")[0][3:].replace("-", "."),
            )
        )

        def run_log(start: datetime, killed: bool, nd: str = nd) -> list[str]:
            lines = [
                f'{{"ts":"{iso_ms(start)}","level":"info","msg":"payment-gateway 3.8.0 starting","commit":"e41c09a"}}',
                f'{{"ts":"{iso_ms(start + timedelta(milliseconds=210))}","level":"info","msg":"metrics listening on :9102"}}',
                f'{{"ts":"{iso_ms(start + timedelta(milliseconds=230))}","level":"info","msg":"upstream ledger:7000 reachable"}}',
                f'{{"ts":"{iso_ms(start + timedelta(milliseconds=260))}","level":"info","msg":"listening on :9090"}}',
            ]
            for j in range(1, 6):
                lines.append(
                    f'{{"ts":"{iso_ms(start + timedelta(seconds=5 * j + 1))}","level":"debug",'
                    f'"msg":"GET /readyz 200","remote":"{nd.split(".")[0][3:].replace("-", ".")}"}}'
                )
            if killed:
                lines.append(
                    f'{{"ts":"{iso_ms(start + timedelta(seconds=40, milliseconds=800))}","level":"info",'
                    '"msg":"received signal terminated, shutting down gracefully"}'
                )
                lines.append(
                    f'{{"ts":"{iso_ms(start + timedelta(seconds=40, milliseconds=950))}","level":"info",'
                    '"msg":"drained 0 in-flight requests; exit 2 (interrupted)"}'
                )
            return lines

        s.log(NS, pn, "gateway", run_log(last_start, True), previous=True)
        s.log(NS, pn, "gateway", run_log(s.ago(seconds=25), False) if k == 1 else [])
        for r in range(restarts + 1):
            st0 = t0 + timedelta(seconds=5 + 20 * k + r * 190)
            if st0 > now:
                break
            s.doc(
                st0 + timedelta(milliseconds=260),
                "listening on :9090",
                "info",
                "payment-gateway",
                NS,
                pn,
                "gateway",
            )
            if st0 + timedelta(seconds=41) <= now:
                s.doc(
                    st0 + timedelta(seconds=41),
                    "received signal terminated, shutting down gracefully",
                    "info",
                    "payment-gateway",
                    NS,
                    pn,
                    "gateway",
                )
        ev = s.events
        ev.add(
            NS,
            "Pod",
            pn,
            "Unhealthy",
            f'Liveness probe failed: Get "http://{ip}:8080/livez": dial tcp {ip}:8080: connect: connection refused',
            t0 + timedelta(seconds=25 + 20 * k),
            s.ago(minutes=1 + k),
            count=3 * restarts + 2,
            type_="Warning",
            host=nd,
            field_path="spec.containers{gateway}",
        )
        ev.add(
            NS,
            "Pod",
            pn,
            "Killing",
            "Container gateway failed liveness probe, will be restarted",
            t0 + timedelta(seconds=45 + 20 * k),
            s.ago(minutes=2 + k * 2, seconds=-11),
            count=restarts,
            host=nd,
            field_path="spec.containers{gateway}",
        )
        ev.add(
            NS,
            "Pod",
            pn,
            "Started",
            "Started container gateway",
            t0 + timedelta(seconds=5 + 20 * k),
            s.ago(seconds=25) if k == 1 else s.ago(minutes=2, seconds=30),
            count=restarts + 1,
            host=nd,
            field_path="spec.containers{gateway}",
        )
        if k == 0:
            ev.add(
                NS,
                "Pod",
                pn,
                "BackOff",
                f"Back-off restarting failed container gateway in pod {pn}_{NS}",
                t0 + timedelta(minutes=8),
                s.ago(seconds=50),
                count=14,
                type_="Warning",
                host=nd,
                field_path="spec.containers{gateway}",
            )
    s.add(
        service(
            "payment-gateway",
            NS,
            {"app": "payment-gateway"},
            80,
            "http",
            s.ago(days=380),
            "172.20.88.14",
        )
    )
    s.add(
        endpoints(
            "payment-gateway",
            NS,
            [*old_pods, new_pods[1]],
            8080,
            s.ago(days=380),
            not_ready=[new_pods[0]],
        )
    )
    for _ip, pn, _nd in old_pods:
        for m in range(1, 90, 2):
            s.doc(
                s.ago(minutes=m, seconds=len(pn) % 7),
                "POST /v2/charges 201",
                "info",
                "payment-gateway",
                NS,
                pn,
                "gateway",
                **{"http.response.status_code": 201},
            )
    s.events.add(
        NS,
        "Deployment",
        "payment-gateway",
        "ScalingReplicaSet",
        f"Scaled up replica set payment-gateway-{nh} to 2 from 0",
        t0,
        component="deployment-controller",
        api="apps/v1",
    )
    s.events.add(
        NS,
        "Deployment",
        "payment-gateway",
        "ScalingReplicaSet",
        f"Scaled down replica set payment-gateway-{oh} to 3 from 4",
        t0 + timedelta(seconds=1),
        component="deployment-controller",
        api="apps/v1",
    )
    ledger = healthy_deployment(
        s,
        "ledger",
        NS,
        "ghcr.io/orbitpay/ledger:12.1.0",
        nodes,
        "10.44.5",
        port=7000,
        replicas=2,
        age_days=3,
        hash_="84c7d5f9b",
    )
    s.events.add(
        NS,
        "Pod",
        ledger[0],
        "Unhealthy",
        "Readiness probe failed: HTTP probe failed with statuscode: 503",
        s.ago(minutes=44),
        count=2,
        type_="Warning",
        host=nodes[0],
        field_path="spec.containers{ledger}",
    )
    for m in range(1, 60, 4):
        s.doc(
            s.ago(minutes=m),
            "committed journal batch",
            "info",
            "ledger",
            NS,
            ledger[m % 2],
            "ledger",
        )
    return s
