"""4. card-auth-soft-declines: card-auth was recreated from the shared chart with
app.kubernetes.io/* labels; fraud-scorer's ingress NetworkPolicy still admits `app: card-auth`,
so card-auth's fraud checks time out while fraud-scorer and its other callers are fine."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-12-01T09:40:00Z")
SWITCH = kit.at("2026-12-01T08:57:50Z")


def netpol(
    ns: str,
    name: str,
    created: kit.datetime,
    selector: dict[str, str],
    ingress: list[kit.Obj] | None,
) -> kit.Obj:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": kit.meta(name, ns, created, {"owner": "risk-platform"}, generation=3),
        "spec": {
            "podSelector": {"matchLabels": selector} if selector else {},
            "policyTypes": ["Ingress"],
            **({"ingress": ingress} if ingress is not None else {}),
        },
    }


def peer(ns: str, labels: dict[str, str]) -> kit.Obj:
    return {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        "podSelector": {"matchLabels": labels},
    }


def build() -> Scenario:
    rng = random.Random(3404)
    sc = Scenario(
        "card-auth-soft-declines",
        "Soft declines spiking on card authorisations",
        NOW,
        "soft declines on card auths jumped from ~0.3% to ~12% right after this morning's "
        "card-auth release (the move to the\n"
        "shared tb-service chart). fraud-scorer dashboards are all green, 0 errors, latency "
        "normal.\n"
        "pretty sure it's the new card-auth build - ok to roll back? (argo only shows the one "
        "revision now, not sure how)\n",
        {
            "category": "network",
            "culprit": {
                "kind": "NetworkPolicy",
                "namespace": "risk",
                "name": "fraud-scorer-allow-callers",
            },
            "evidence": [
                "app: card-auth",
                "app.kubernetes.io/name: card-auth",
                "DEADLINE_EXCEEDED",
            ],
            "fix": "Update fraud-scorer-allow-callers to admit the caller's new label "
            "(app.kubernetes.io/name: card-auth), "
            "or add the old app: card-auth label back to card-auth's pod template",
        },
    )
    created = NOW - timedelta(days=500)
    for n in ("cards", "risk", "lending", "monitoring", "kube-system"):
        sc.add(kit.namespace(n, created))
    nodes = [
        f"worker-{z}-{i:02d}.k8s.tallowbrook.internal" for z in ("a", "b", "c") for i in (1, 2)
    ]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=30 + i),
                "32",
                "131891844Ki",
                {
                    "node-role.kubernetes.io/worker": "",
                    "topology.kubernetes.io/zone": f"dc1-{n[7]}",
                },
                heartbeat=NOW - timedelta(seconds=8),
            )
        )
    times = fleet.grid(NOW, 3)
    sw = next(i for i, t in enumerate(times) if t >= SWITCH.timestamp())

    # --- risk: fraud-scorer and its policies ---
    fc = kit.container(
        "fraud-scorer",
        "harbor.tallowbrook.internal/risk/fraud-scorer:2026.47.2",
        port=50051,
        cpu_req="1",
        mem_req="2Gi",
        cpu_lim="2",
        mem_lim="4Gi",
        readiness={
            "grpc": {"port": 50051},
            "periodSeconds": 5,
            "timeoutSeconds": 1,
            "failureThreshold": 3,
        },
        env={
            "MODEL_VERSION": "gbm-2026-11-20",
            "FEATURE_STORE_ADDR": "feature-store.risk.svc:6379",
        },
    )
    fc["ports"] = [
        {"name": "grpc", "containerPort": 50051, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9102, "protocol": "TCP"},
    ]
    fs = fleet.app(
        sc,
        rng,
        "risk",
        "fraud-scorer",
        [fc],
        nodes,
        replicas=4,
        created=created,
        rolled=NOW - timedelta(days=4, hours=2),
        revision=61,
        port=50051,
        svc_port=50051,
    )
    assert fs.service is not None
    fs.service["spec"]["ports"][0].update({"name": "grpc", "targetPort": "grpc"})
    fe = kit.container("redis", "redis:7.2.5", port=6379, mem_lim="8Gi", mem_req="6Gi")
    fleet.app(
        sc,
        rng,
        "risk",
        "feature-store",
        [fe],
        nodes[2:],
        replicas=1,
        created=created,
        rolled=NOW - timedelta(days=6),
        revision=4,
        port=6379,
        svc_port=6379,
    )
    sc.add(
        netpol("risk", "default-deny-ingress", created, {}, None),
        netpol(
            "risk",
            "fraud-scorer-allow-callers",
            NOW - timedelta(days=190),
            {"app": "fraud-scorer"},
            [
                {
                    "from": [
                        peer("cards", {"app": "card-auth"}),
                        peer("lending", {"app": "loan-decision"}),
                    ],
                    "ports": [{"protocol": "TCP", "port": 50051}],
                },
                {
                    "from": [peer("monitoring", {"app.kubernetes.io/name": "prometheus"})],
                    "ports": [{"protocol": "TCP", "port": 9102}],
                },
            ],
        ),
        netpol(
            "risk",
            "feature-store-allow-scorer",
            NOW - timedelta(days=190),
            {"app": "feature-store"},
            [
                {
                    "from": [{"podSelector": {"matchLabels": {"app": "fraud-scorer"}}}],
                    "ports": [{"protocol": "TCP", "port": 6379}],
                }
            ],
        ),
    )
    for p in fs.pods:
        pn = p["metadata"]["name"]
        fleet.container_metrics(
            sc,
            "risk",
            pn,
            "fraud-scorer",
            times,
            mem=lambda i: 2710 * MiB + (i % 6) * 3 * MiB,
            cpu=lambda i: 0.8 if i < sw else 0.55,
            mem_limit=4096 * MiB,
            cpu_limit=2.0,
            throttle=lambda i: 0.02,
            node_name=p["spec"]["nodeName"],
            rng=rng,
        )
        for client, before, after in (("card-auth", 21.0, 0.0), ("loan-decision", 9.0, 9.0)):
            step = times[1] - times[0]
            vals = kit.cumulate(
                [before if i < sw else after for i in range(len(times))], step, 50000
            )
            sc.metrics.counter(
                "fraud_score_requests_total",
                {"namespace": "risk", "pod": pn, "client": client, "outcome": "scored"},
                list(zip(times, [round(v) for v in vals], strict=False)),
            )
        fleet.requests(
            sc,
            "grpc_server_handled_total",
            {
                "namespace": "risk",
                "pod": pn,
                "grpc_service": "risk.v1.FraudScorer",
                "grpc_method": "Score",
            },
            times,
            rate=lambda i: 30.0 if i < sw else 9.0,
            err=lambda i: 0.0,
            codes=("OK", "Internal"),
        )
        _scorer_docs(sc, rng, pn, times, sw)

    # --- lending: loan-decision (the other caller) ---
    lc = kit.container(
        "loan-decision",
        "harbor.tallowbrook.internal/lending/loan-decision:5.6.0",
        port=8080,
        readiness=kit.http_probe("/actuator/health/readiness"),
    )
    ld = fleet.app(
        sc,
        rng,
        "lending",
        "loan-decision",
        [lc],
        nodes[1:],
        replicas=3,
        created=created,
        rolled=NOW - timedelta(days=2),
        revision=33,
    )
    for p in ld.pods:
        fleet.container_metrics(
            sc,
            "lending",
            p["metadata"]["name"],
            "loan-decision",
            times,
            mem=lambda i: 900 * MiB,
            cpu=lambda i: 0.3,
            mem_limit=1536 * MiB,
            cpu_limit=None,
            rng=rng,
        )

    # --- cards: card-auth, recreated from the shared chart ---
    new_labels = {
        "app.kubernetes.io/name": "card-auth",
        "app.kubernetes.io/instance": "card-auth",
        "app.kubernetes.io/part-of": "cards",
    }
    cc = kit.container(
        "card-auth",
        "harbor.tallowbrook.internal/cards/card-auth:9.12.0",
        port=8443,
        cpu_req="1",
        mem_req="1536Mi",
        cpu_lim="2",
        mem_lim="2Gi",
        readiness=kit.http_probe("/actuator/health/readiness"),
        liveness=kit.http_probe("/actuator/health/liveness", delay=60),
        env={
            "FRAUD_SCORER_TARGET": "dns:///fraud-scorer.risk.svc.cluster.local:50051",
            "FRAUD_DEADLINE_MS": "250",
            "FRAUD_FALLBACK": "SOFT_DECLINE",
            "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70",
        },
    )
    tmpl = kit.template(
        {**new_labels, "app.kubernetes.io/version": "9.12.0"},
        [cc],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/path": "/actuator/prometheus"},
    )
    dep = kit.deployment(
        "cards",
        "card-auth",
        SWITCH - timedelta(seconds=40),
        new_labels,
        tmpl,
        replicas=6,
        revision=1,
        labels={
            **new_labels,
            "helm.sh/chart": "tb-service-4.0.2",
            "app.kubernetes.io/managed-by": "Helm",
        },
        progressing=(
            "True",
            "NewReplicaSetAvailable",
            'ReplicaSet "card-auth-6b8f9d7c5d" has successfully progressed.',
            SWITCH + timedelta(seconds=80),
        ),
    )
    rs = kit.replicaset(dep, "6b8f9d7c5d", SWITCH - timedelta(seconds=40), 1, tmpl, replicas=6)
    sc.add(dep, rs)
    pods = []
    for i in range(6):
        st = SWITCH - timedelta(seconds=38 - 5 * i)
        p = kit.pod(
            rs,
            f"card-auth-6b8f9d7c5d-{kit.suffix(rng)}",
            st,
            nodes[i],
            tmpl,
            [kit.cstatus(cc, st + timedelta(seconds=2))],
            ip=fleet.ip(rng, "10.244"),
        )
        pods.append(p)
    sc.add(*pods)
    svc = kit.service(
        "cards",
        "card-auth",
        SWITCH - timedelta(seconds=40),
        new_labels,
        [("https", 443, 8443)],
        cluster_ip="10.96.201.77",
        labels={**new_labels, "helm.sh/chart": "tb-service-4.0.2"},
    )
    sc.add(svc, kit.endpoints("cards", "card-auth", SWITCH, pods, [("https", 8443)], new_labels))
    sc.add(
        kit.event(
            "cards",
            "Deployment",
            "card-auth",
            "ScalingReplicaSet",
            "Scaled up replica set card-auth-6b8f9d7c5d to 6",
            SWITCH - timedelta(seconds=40),
            SWITCH - timedelta(seconds=40),
            component="deployment-controller",
        )
    )
    for p in pods:
        pn, host = p["metadata"]["name"], p["spec"]["nodeName"]
        t0 = kit.at(p["metadata"]["creationTimestamp"])
        sc.add(
            kit.event(
                "cards",
                "Pod",
                pn,
                "Scheduled",
                f"Successfully assigned cards/{pn} to {host}",
                t0,
                t0,
                component="default-scheduler",
            ),
            kit.event(
                "cards",
                "Pod",
                pn,
                "Started",
                "Started container card-auth",
                t0 + timedelta(seconds=2),
                t0 + timedelta(seconds=2),
                host=host,
            ),
        )
        span = times[sw:]
        fleet.container_metrics(
            sc,
            "cards",
            pn,
            "card-auth",
            span,
            mem=lambda i: 1190 * MiB + (i % 13) * 4 * MiB,
            cpu=lambda i: 0.45,
            mem_limit=2048 * MiB,
            cpu_limit=2.0,
            throttle=lambda i: 0.01,
            node_name=host,
            rng=rng,
        )
        step = times[1] - times[0]
        for decision, rate in (("APPROVE", 148.0), ("SOFT_DECLINE", 19.7), ("DECLINE", 3.1)):
            vals = kit.cumulate([rate / 6] * len(span), step, 0)
            sc.metrics.counter(
                "card_auth_decisions_total",
                {"namespace": "cards", "pod": pn, "decision": decision},
                list(zip(span, [round(v) for v in vals], strict=False)),
            )
        for code, rate in (("DEADLINE_EXCEEDED", 3.5),):
            vals = kit.cumulate([rate] * len(span), step, 0)
            sc.metrics.counter(
                "grpc_client_handled_total",
                {
                    "namespace": "cards",
                    "pod": pn,
                    "grpc_service": "risk.v1.FraudScorer",
                    "grpc_method": "Score",
                    "grpc_code": code,
                },
                list(zip(span, [round(v) for v in vals], strict=False)),
            )
        _card_docs(sc, rng, pn, host, SWITCH + timedelta(seconds=20))
    _old_card_auth(sc, rng, nodes, times, sw)
    tc = kit.container(
        "tokenization",
        "harbor.tallowbrook.internal/cards/tokenization:3.0.4",
        port=8080,
        readiness=kit.http_probe("/ready"),
    )
    fleet.app(
        sc,
        rng,
        "cards",
        "tokenization",
        [tc],
        nodes,
        replicas=3,
        created=created,
        rolled=NOW - timedelta(days=5),
        revision=18,
    )
    sc.add(
        kit.event(
            "lending",
            "Pod",
            ld.names[0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            NOW - timedelta(minutes=33),
            NOW - timedelta(minutes=33),
            warning=True,
            host=ld.pods[0]["spec"]["nodeName"],
        )
    )
    return sc


def _scorer_docs(sc: Scenario, rng: random.Random, pn: str, times: list[int], sw: int) -> None:
    for i in range(len(times) - 150, len(times), 2):
        base = kit.datetime.fromtimestamp(times[i], kit.UTC)
        clients = ["card-auth", "card-auth", "loan-decision"] if i < sw else ["loan-decision"]
        for client in clients:
            t = base + timedelta(seconds=rng.randint(0, 119), milliseconds=rng.randint(0, 999))
            sc.docs.append(
                kit.logdoc(
                    t,
                    "INFO",
                    f"scored request client={client} score={rng.random():.3f} "
                    f"model=gbm-2026-11-20 took={rng.randint(6, 19)}ms",
                    "fraud-scorer",
                    "risk",
                    pn,
                    "fraud-scorer",
                    **{"log.logger": "scorer.service"},
                )
            )
        if rng.random() < 0.04:
            sc.docs.append(
                kit.logdoc(
                    base,
                    "WARNING",
                    "feature-store pipeline latency 41ms above 35ms budget for key set "
                    "merchant_velocity",
                    "fraud-scorer",
                    "risk",
                    pn,
                    "fraud-scorer",
                    **{"log.logger": "scorer.features"},
                )
            )


def _old_card_auth(
    sc: Scenario, rng: random.Random, nodes: list[str], times: list[int], sw: int
) -> None:
    """The pods of the deleted Deployment (labelled app: card-auth): their series end at the
    switch, with a normal soft-decline rate and fraud calls that succeed."""
    before = times[:sw]
    step = times[1] - times[0]
    for k in range(6):
        pn = f"card-auth-7f5c6d8b9a-{kit.suffix(rng)}"
        fleet.container_metrics(
            sc,
            "cards",
            pn,
            "card-auth",
            before,
            mem=lambda i: 1240 * MiB,
            cpu=lambda i: 0.42,
            mem_limit=2048 * MiB,
            cpu_limit=2.0,
            throttle=lambda i: 0.01,
            node_name=nodes[k],
            rng=rng,
        )
        for decision, rate in (("APPROVE", 167.0), ("SOFT_DECLINE", 0.5), ("DECLINE", 3.1)):
            vals = kit.cumulate([rate / 6] * len(before), step, 90000 if rate > 100 else 200)
            sc.metrics.counter(
                "card_auth_decisions_total",
                {"namespace": "cards", "pod": pn, "decision": decision},
                list(zip(before, [round(v) for v in vals], strict=True)),
            )
        vals = kit.cumulate([3.5] * len(before), step, 12000)
        sc.metrics.counter(
            "grpc_client_handled_total",
            {
                "namespace": "cards",
                "pod": pn,
                "grpc_service": "risk.v1.FraudScorer",
                "grpc_method": "Score",
                "grpc_code": "OK",
            },
            list(zip(before, [round(v) for v in vals], strict=True)),
        )
        t = kit.datetime.fromtimestamp(times[max(0, sw - 100)], kit.UTC)
        while t < SWITCH - timedelta(seconds=45):
            t += timedelta(seconds=rng.randint(20, 70))
            txn = f"txn_{rng.getrandbits(44):011x}"
            score, took = rng.randint(1, 9), rng.randint(20, 60)
            msg = (
                f"auth {txn} decision=APPROVE rule_set=rs-118 fraud_score=0.0{score} took={took}ms"
            )
            sc.docs.append(
                kit.logdoc(
                    t,
                    "INFO",
                    msg,
                    "card-auth",
                    "cards",
                    pn,
                    "card-auth",
                    **{"log.logger": "c.t.cards.auth.AuthorizationService", "transaction.id": txn},
                )
            )


def _card_docs(sc: Scenario, rng: random.Random, pn: str, host: str, start: kit.datetime) -> None:
    t = start
    lines = [
        f"{kit.ts_ms(start - timedelta(seconds=18))}  INFO 1 --- [           main] "
        "c.t.cards.auth.CardAuthApplication       : Started CardAuthApplication in 17.2 seconds "
        "(process running for 18.4)"
    ]
    while t < NOW:
        t += timedelta(seconds=rng.randint(3, 12), milliseconds=rng.randint(0, 999))
        txn = f"txn_{rng.getrandbits(44):011x}"
        if rng.random() < 0.13:
            msg = (
                f"fraud score unavailable for {txn} (CNP, amount above threshold): "
                "io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: "
                f"deadline exceeded after 0.249{rng.randint(100000, 999999)}s. [closed=[], "
                f"open=[[buffered_nanos={rng.randint(249000000, 250900000)}, "
                "waiting_for_connection]]]; "
                f"applying fallback SOFT_DECLINE"
            )
            lines.append(
                f"{kit.ts_ms(t)}  WARN 1 --- [auth-worker-{rng.randint(1, 32)}] "
                f"c.t.cards.auth.fraud.FraudGateway        : {msg}"
            )
            sc.docs.append(
                kit.logdoc(
                    t,
                    "WARN",
                    msg,
                    "card-auth",
                    "cards",
                    pn,
                    "card-auth",
                    **{
                        "log.logger": "c.t.cards.auth.fraud.FraudGateway",
                        "error.type": "io.grpc.StatusRuntimeException",
                        "transaction.id": txn,
                    },
                )
            )
        else:
            msg = f"auth {txn} decision=APPROVE rule_set=rs-118 took={rng.randint(8, 40)}ms"
            lines.append(
                f"{kit.ts_ms(t)}  INFO 1 --- [auth-worker-{rng.randint(1, 32)}] "
                f"c.t.cards.auth.AuthorizationService     : {msg}"
            )
            sc.docs.append(
                kit.logdoc(
                    t,
                    "INFO",
                    msg,
                    "card-auth",
                    "cards",
                    pn,
                    "card-auth",
                    **{"log.logger": "c.t.cards.auth.AuthorizationService", "transaction.id": txn},
                )
            )
    sc.log("cards", pn, "card-auth", lines)


STORIES = {"card-auth-soft-declines": build}
