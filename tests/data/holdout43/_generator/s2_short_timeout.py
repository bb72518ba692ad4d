# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Harbor Insurance: policy-quotes 4.9.0 lowered its deadline on the underwriting-rules call
from 30 s to 3 s; the few quotes whose rule evaluation is slow (fleet policies) now fail
with DeadlineExceeded. underwriting-rules is as fast and as healthy as ever."""

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
    service,
)

BUCKETS = [
    ("0.1", 0.52),
    ("0.25", 0.74),
    ("0.5", 0.86),
    ("1", 0.915),
    ("2.5", 0.948),
    ("5", 0.981),
    ("10", 0.998),
    ("30", 1.0),
    ("+Inf", 1.0),
]


def build() -> Story:
    now = parse("2026-11-30T11:20:00Z")
    roll = now - td(minutes=48)
    old = parse("2025-03-14T09:00:00Z")
    s = Story(
        id="quotes-could-not-price",
        title="Some quotes fail with 'could not price'",
        now=now,
        report=(
            "underwriting-rules is flaky since this morning, a few % of quotes fail with 504 'could not "
            "price this policy'. underwriting team says their side is green but brokers are shouting, "
            "can someone look at their pods?"
        ),
        truth={
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "quoting", "name": "policy-quotes"},
            "evidence": ["context deadline exceeded", "UNDERWRITING_RPC_TIMEOUT", "3s", "30s"],
            "fix": (
                "Roll policy-quotes back to revision 13 or set UNDERWRITING_RPC_TIMEOUT back to 30s; "
                "fleet quotes need 3-10 s of rule evaluation"
            ),
        },
    )
    s.add(namespace("quoting", old), namespace("underwriting", old), namespace("brokers", old))

    def tpl(image: str, timeout: str) -> dict:
        return pod_template(
            {"app": "policy-quotes"},
            [
                container(
                    "policy-quotes",
                    image,
                    cpu_req="300m",
                    mem_req="256Mi",
                    cpu_lim="1",
                    mem_lim="512Mi",
                    port=8080,
                    readiness=http_probe("/readyz", 8080, period=5),
                    liveness=http_probe("/livez", 8080),
                    env=[
                        {
                            "name": "UNDERWRITING_ADDR",
                            "value": "underwriting-rules.underwriting.svc:9090",
                        },
                        {"name": "UNDERWRITING_RPC_TIMEOUT", "value": timeout},
                        {"name": "RATING_CACHE_TTL", "value": "10m"},
                        {"name": "LOG_FORMAT", "value": "json"},
                    ],
                )
            ],
        )

    old_tpl = tpl("harbor.azurecr.io/quoting/policy-quotes:4.8.3", "30s")
    new_tpl = tpl("harbor.azurecr.io/quoting/policy-quotes:4.9.0", "3s")
    dep = deployment("policy-quotes", "quoting", old, new_tpl, 4, 14, generation=22)
    s.add(
        dep,
        replicaset(dep, "5d7c8b9f64", now - td(days=12), 13, old_tpl, 0, ready=0),
        replicaset(dep, "7f9b6c5d48", roll, 14, new_tpl, 4),
    )
    pods = [f"policy-quotes-7f9b6c5d48-{x}" for x in ("b2kxn", "q8d4w", "t5mzr", "w7hjc")]
    for i, p in enumerate(pods):
        s.add(
            pod(
                p,
                "quoting",
                roll + td(seconds=40 * i),
                new_tpl,
                f"aks-app-2841{i % 3}-vmss00000{i}",
                f"10.244.{i}.{31 + i}",
                "ReplicaSet",
                "policy-quotes-7f9b6c5d48",
            )
        )
    s.add(
        service("policy-quotes", "quoting", old, {"app": "policy-quotes"}, 80, 8080, "10.0.112.40"),
        endpoints(
            "policy-quotes",
            "quoting",
            roll,
            [
                (f"10.244.{i}.{31 + i}", p, f"aks-app-2841{i % 3}-vmss00000{i}")
                for i, p in enumerate(pods)
            ],
            [],
            8080,
        ),
    )
    for i, (reason, msg) in enumerate(
        [
            ("ScalingReplicaSet", "Scaled up replica set policy-quotes-7f9b6c5d48 to 1"),
            ("ScalingReplicaSet", "Scaled down replica set policy-quotes-5d7c8b9f64 to 3 from 4"),
            ("ScalingReplicaSet", "Scaled up replica set policy-quotes-7f9b6c5d48 to 4 from 3"),
            ("ScalingReplicaSet", "Scaled down replica set policy-quotes-5d7c8b9f64 to 0 from 1"),
        ]
    ):
        t = roll + td(seconds=40 * i)
        s.add(
            event(
                "quoting",
                "Deployment",
                "policy-quotes",
                reason,
                msg,
                t,
                t,
                component="deployment-controller",
            )
        )

    uw_tpl = pod_template(
        {"app": "underwriting-rules"},
        [
            container(
                "underwriting-rules",
                "harbor.azurecr.io/underwriting/rules-engine:2.31.1",
                cpu_req="1",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
                port=9090,
                readiness={
                    "grpc": {"port": 9090},
                    "periodSeconds": 10,
                    "timeoutSeconds": 1,
                    "failureThreshold": 3,
                    "successThreshold": 1,
                },
            )
        ],
    )
    uw = deployment("underwriting-rules", "underwriting", old, uw_tpl, 3, 41)
    s.add(uw, replicaset(uw, "66f4d9c7b8", now - td(days=19), 41, uw_tpl, 3))
    uw_pods = [f"underwriting-rules-66f4d9c7b8-{x}" for x in ("4hwqz", "jd82m", "x9plv")]
    for i, p in enumerate(uw_pods):
        s.add(
            pod(
                p,
                "underwriting",
                now - td(days=19),
                uw_tpl,
                f"aks-app-2841{i}-vmss00000{i + 4}",
                f"10.244.{i}.{70 + i}",
                "ReplicaSet",
                "underwriting-rules-66f4d9c7b8",
            )
        )
    s.add(
        service(
            "underwriting-rules",
            "underwriting",
            old,
            {"app": "underwriting-rules"},
            9090,
            9090,
            "10.0.87.13",
            port_name="grpc",
        ),
        endpoints(
            "underwriting-rules",
            "underwriting",
            now - td(days=19),
            [
                (f"10.244.{i}.{70 + i}", p, f"aks-app-2841{i}-vmss00000{i + 4}")
                for i, p in enumerate(uw_pods)
            ],
            [],
            9090,
            port_name="grpc",
        ),
    )
    web_tpl = pod_template(
        {"app": "broker-portal"},
        [
            container(
                "broker-portal",
                "harbor.azurecr.io/brokers/portal:2026.11.27",
                cpu_req="200m",
                mem_req="256Mi",
                mem_lim="512Mi",
                port=3000,
            )
        ],
    )
    web = deployment("broker-portal", "brokers", old, web_tpl, 2, 88)
    s.add(
        web,
        replicaset(web, "8c6d7f5b9", now - td(days=3), 88, web_tpl, 2),
        pod(
            "broker-portal-8c6d7f5b9-kz2m4",
            "brokers",
            now - td(days=3),
            web_tpl,
            "aks-app-28410-vmss000001",
            "10.244.0.90",
            "ReplicaSet",
            "broker-portal-8c6d7f5b9",
        ),
        pod(
            "broker-portal-8c6d7f5b9-r7qhs",
            "brokers",
            now - td(days=3),
            web_tpl,
            "aks-app-28412-vmss000003",
            "10.244.2.91",
            "ReplicaSet",
            "broker-portal-8c6d7f5b9",
        ),
        event(
            "brokers",
            "Pod",
            "broker-portal-8c6d7f5b9-r7qhs",
            "Unhealthy",
            'Readiness probe failed: Get "http://10.244.2.91:3000/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
            now - td(minutes=55),
            now - td(minutes=55),
            type_="Warning",
            host="aks-app-28412-vmss000003",
            field_path="spec.containers{broker-portal}",
        ),
    )

    # ---- metrics: the caller's 504s start with the rollout; the callee's latency does not move
    start = now - td(days=1, hours=6)
    rng = random.Random(2)

    def rps(t: object) -> float:
        h = t.hour + t.minute / 60  # type: ignore[attr-defined]
        return 6 + (22 if 7 <= h <= 19 else 2) * rng.uniform(0.85, 1.1)

    slow_share = 1 - dict(BUCKETS)["2.5"]
    s.metric(
        "http_requests",
        "counter",
        "HTTP requests handled.",
        {"namespace": "quoting", "service": "policy-quotes", "route": "/v2/quotes", "code": "200"},
        counter(
            start,
            now,
            60,
            lambda t: rps(t) * (1 - (slow_share * 0.9 if t >= roll else 0.001)),
            base=2_114_000,
        ),
    )
    s.metric(
        "http_requests",
        "counter",
        "HTTP requests handled.",
        {"namespace": "quoting", "service": "policy-quotes", "route": "/v2/quotes", "code": "504"},
        counter(
            start, now, 60, lambda t: rps(t) * (slow_share * 0.9 if t >= roll else 0.001), base=310
        ),
    )
    for code, share_before, share_after in (
        ("OK", 1.0, 1.0 - slow_share * 0.9),
        ("Canceled", 0.0, slow_share * 0.9),
    ):
        s.metric(
            "grpc_server_handled",
            "counter",
            "Total number of RPCs completed on the server.",
            {
                "namespace": "underwriting",
                "service": "underwriting-rules",
                "grpc_method": "Evaluate",
                "grpc_code": code,
            },
            counter(
                start,
                now,
                60,
                lambda t, a=share_before, b=share_after: rps(t) * (b if t >= roll else a),
                base=0 if code == "Canceled" else 7_400_000,
            ),
        )
    # ---- logs
    products = ["private-motor", "home", "private-motor", "travel", "home", "landlord"]
    t = now - td(hours=3)
    n_err = 0
    while t < now:
        p = rng.choice(pods)
        slow = rng.random() < 0.05
        product = "commercial-fleet" if slow else rng.choice(products)
        qid = f"Q-{rng.randint(10**7, 10**8 - 1)}"
        if t >= roll and slow:
            n_err += 1
            s.doc(
                t,
                "error",
                "policy-quotes",
                "quoting",
                p,
                "policy-quotes",
                "evaluate rules failed",
                error__message="rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                quote__id=qid,
                labels={"product": product, "vehicles": rng.randint(12, 140)},
                event__duration=3_000_400_000,
            )
            s.doc(
                t + td(milliseconds=3),
                "warn",
                "policy-quotes",
                "quoting",
                p,
                "policy-quotes",
                "could not price this policy",
                http__response__status_code=504,
                quote__id=qid,
            )
            uwp = rng.choice(uw_pods)
            s.doc(
                t + td(seconds=rng.uniform(0.5, 6)),
                "warn",
                "underwriting-rules",
                "underwriting",
                uwp,
                "underwriting-rules",
                "evaluation abandoned: client canceled",
                labels={"product": product},
            )
        else:
            dur = rng.uniform(3.2, 9.5) if slow else rng.uniform(0.04, 0.6)
            s.doc(
                t,
                "info",
                "policy-quotes",
                "quoting",
                p,
                "policy-quotes",
                "quote priced",
                quote__id=qid,
                http__response__status_code=200,
                event__duration=int(dur * 1e9),
                labels={"product": product},
            )
        t += td(seconds=rng.uniform(2, 9))
    # a noisy, harmless warning from before and after the rollout
    t = now - td(hours=3)
    while t < now:
        s.doc(
            t,
            "warn",
            "policy-quotes",
            "quoting",
            rng.choice(pods),
            "policy-quotes",
            "rating cache miss storm: refreshing 112 tariffs",
        )
        t += td(minutes=rng.randint(9, 25))
    lines = []
    t = now - td(minutes=25)
    for i in range(60):
        slow = i % 17 == 5
        if slow:
            lines.append(
                f'{{"level":"error","ts":"{t:%Y-%m-%dT%H:%M:%S}Z","caller":"quote/handler.go:211",'
                f'"msg":"evaluate rules failed","quote_id":"Q-{rng.randint(10**7, 10**8 - 1)}",'
                f'"product":"commercial-fleet","elapsed":"3.000{rng.randint(100, 999)}s",'
                '"error":"rpc error: code = DeadlineExceeded desc = context deadline exceeded"}'
            )
        else:
            lines.append(
                f'{{"level":"info","ts":"{t:%Y-%m-%dT%H:%M:%S}Z","caller":"quote/handler.go:188","msg":"quote priced","product":"{rng.choice(products)}","elapsed":"{rng.randint(40, 600)}ms"}}'
            )
        t += td(seconds=rng.randint(10, 30))
    s.pod_log(
        "quoting",
        pods[0],
        "policy-quotes",
        [
            f'{{"level":"info","ts":"{roll:%Y-%m-%dT%H:%M:%S}Z","caller":"main.go:64","msg":"starting policy-quotes","version":"4.9.0","underwriting_addr":"underwriting-rules.underwriting.svc:9090"}}',
            *lines,
        ],
    )
    uw_lines = []
    t = now - td(minutes=25)
    for i in range(50):
        if i % 13 == 4:
            uw_lines.append(
                f'{t:%Y-%m-%dT%H:%M:%S}Z WARN  rules.Evaluate product=commercial-fleet rules=1422 vehicles={rng.randint(12, 140)} msg="client canceled after 3.00s, dropping result"'
            )
        else:
            uw_lines.append(
                f"{t:%Y-%m-%dT%H:%M:%S}Z INFO  rules.Evaluate product={rng.choice(products)} rules={rng.randint(40, 300)} took={rng.randint(20, 450)}ms"
            )
        t += td(seconds=rng.randint(10, 35))
    s.pod_log("underwriting", uw_pods[0], "underwriting-rules", uw_lines)
    return s
