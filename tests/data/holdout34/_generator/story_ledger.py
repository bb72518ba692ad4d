"""2. ledger-writer-rollout-stalled: the new revision moves to a distroless image while its
readiness probe still execs `curl`; the exec fails, the new pods never become Ready and the
rollout stalls while the old pods keep serving."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-29T14:10:00Z")
ROLL = kit.at("2026-11-29T13:21:40Z")
OLD_IMAGE = "ghcr.io/quillmark/ledger-writer:2.31.4"
NEW_IMAGE = "ghcr.io/quillmark/ledger-writer:2.32.0"
EXEC_ERR = (
    "Readiness probe failed: OCI runtime exec failed: exec failed: unable to start container "
    'process: exec: "curl": executable file not found in $PATH: unknown'
)


def _ledger_container(image: str) -> kit.Obj:
    probe = {
        "exec": {
            "command": ["curl", "-fsS", "--max-time", "2", "http://127.0.0.1:8080/health/ready"]
        },
        "initialDelaySeconds": 10,
        "periodSeconds": 10,
        "timeoutSeconds": 3,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    c = kit.container(
        "ledger-writer",
        image,
        port=8080,
        cpu_req="500m",
        mem_req="384Mi",
        cpu_lim="2",
        mem_lim="768Mi",
        readiness=probe,
        liveness=kit.http_probe("/health/live", delay=20),
        env={
            "RUST_LOG": "info,ledger_writer=info",
            "LEDGER_DB_POOL_MAX": "24",
            "LEDGER_DB_HOST": "pgbouncer-ledger.payments.svc",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4317",
        },
    )
    return c


def build() -> Scenario:
    rng = random.Random(3402)
    sc = Scenario(
        "ledger-writer-rollout-stalled",
        "ledger-writer release stuck in Progressing",
        NOW,
        "ledger-writer 2.32.0 deploy has been sitting in argo as Progressing for ~45 min, release "
        "train is blocked behind it.\n"
        "new pods are Running but 0/1, app logs look totally clean (migrations ran, listening on "
        "8080).\n"
        "prod traffic seems ok on the old pods. is the migration holding a lock or something? "
        "should we just bump the progress deadline?\n",
        {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "ledger-writer"},
            "evidence": [
                'exec: "curl": executable file not found in $PATH',
                "ProgressDeadlineExceeded",
                "0/1",
            ],
            "fix": "Replace the exec readiness probe that runs curl (absent from the new "
            "distroless image) with an "
            "httpGet probe on /health/ready port 8080, or ship a probe binary in the image",
        },
    )
    created = NOW - timedelta(days=400)
    for n in ("payments", "observability", "kube-system", "platform"):
        sc.add(kit.namespace(n, created))
    nodes = [
        f"ip-10-40-{a}-{b}.eu-central-1.compute.internal"
        for a, b in ((12, 88), (13, 201), (14, 17), (12, 143))
    ]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=9 + i * 2),
                "16",
                "64453208Ki",
                {
                    "eks.amazonaws.com/nodegroup": "payments-m6i",
                    "node.kubernetes.io/instance-type": "m6i.4xlarge",
                    "topology.kubernetes.io/zone": f"eu-central-1{'abc'[i % 3]}",
                },
                heartbeat=NOW - timedelta(seconds=31),
            )
        )
    labels = {"app": "ledger-writer", "team": "ledger"}
    old_c, new_c = _ledger_container(OLD_IMAGE), _ledger_container(NEW_IMAGE)
    old_t = kit.template(
        labels,
        [old_c],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9464"},
        extra_spec={
            "serviceAccountName": "ledger-writer",
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532},
        },
    )
    new_t = kit.template(
        labels,
        [new_c],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9464"},
        extra_spec={
            "serviceAccountName": "ledger-writer",
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65532},
        },
    )
    dep = kit.deployment(
        "payments",
        "ledger-writer",
        created,
        labels,
        new_t,
        replicas=4,
        revision=15,
        ready=3,
        updated=2,
        available=3,
        progressing=(
            "False",
            "ProgressDeadlineExceeded",
            'ReplicaSet "ledger-writer-5d9c7f6b48" has timed out progressing.',
            ROLL + timedelta(seconds=600),
        ),
        labels={**labels, "argocd.argoproj.io/instance": "payments-prod"},
    )
    dep["status"]["replicas"] = 5
    old_rolled = NOW - timedelta(days=6, hours=3)
    old_rs = kit.replicaset(dep, "7b6d4c9f85", old_rolled, 14, old_t, replicas=3)
    new_rs = kit.replicaset(dep, "5d9c7f6b48", ROLL, 15, new_t, replicas=2, ready=0)
    older = kit.replicaset(
        dep, "66f9b8d7c4", NOW - timedelta(days=15), 13, old_t, replicas=0, ready=0
    )
    older["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "ghcr.io/quillmark/ledger-writer:2.31.2"
    )
    older["status"] = {"replicas": 0, "observedGeneration": 3}
    sc.add(dep, older, old_rs, new_rs)
    times = fleet.grid(NOW, 3)
    old_pods = []
    for i in range(3):
        st = old_rolled + timedelta(seconds=30 * i)
        p = kit.pod(
            old_rs,
            f"ledger-writer-7b6d4c9f85-{kit.suffix(rng)}",
            st,
            nodes[i],
            old_t,
            [kit.cstatus(old_c, st + timedelta(seconds=3))],
            ip=fleet.ip(rng, "10.40.12"),
        )
        old_pods.append(p)
    new_pods = []
    for i in range(2):
        st = ROLL + timedelta(seconds=2 + 41 * i)
        p = kit.pod(
            new_rs,
            f"ledger-writer-5d9c7f6b48-{kit.suffix(rng)}",
            st,
            nodes[(i + 3) % 4],
            new_t,
            [kit.cstatus(new_c, st + timedelta(seconds=4), ready=False)],
            ip=fleet.ip(rng, "10.40.13"),
        )
        new_pods.append(p)
    sc.add(*old_pods, *new_pods)
    svc = kit.service(
        "payments",
        "ledger-writer",
        created,
        {"app": "ledger-writer"},
        [("http", 80, "http")],
        cluster_ip="172.20.88.14",
    )
    sc.add(
        svc,
        kit.endpoints(
            "payments", "ledger-writer", created, old_pods + new_pods, [("http", 8080)], labels
        ),
    )
    for p in old_pods + new_pods:
        pn = p["metadata"]["name"]
        fresh = p in new_pods
        fleet.container_metrics(
            sc,
            "payments",
            pn,
            "ledger-writer",
            times,
            mem=lambda i, f=fresh: (212 if f else 301) * MiB + (i % 5) * MiB,
            cpu=lambda i, f=fresh: 0.03 if f else 0.41,
            mem_limit=768 * MiB,
            cpu_limit=2.0,
            throttle=lambda i: 0.0,
            node_name=p["spec"]["nodeName"],
            rng=rng,
        )
        if not fresh:
            fleet.requests(
                sc,
                "http_server_requests_total",
                {"namespace": "payments", "pod": pn, "service": "ledger-writer"},
                times,
                rate=lambda i: 52.0,
                err=lambda i: 0.0006,
            )
    # events
    sc.add(
        kit.event(
            "payments",
            "Deployment",
            "ledger-writer",
            "ScalingReplicaSet",
            "Scaled up replica set ledger-writer-5d9c7f6b48 to 1",
            ROLL,
            ROLL,
            component="deployment-controller",
        ),
        kit.event(
            "payments",
            "Deployment",
            "ledger-writer",
            "ScalingReplicaSet",
            "Scaled down replica set ledger-writer-7b6d4c9f85 to 3 from 4",
            ROLL,
            ROLL,
            component="deployment-controller",
        ),
        kit.event(
            "payments",
            "Deployment",
            "ledger-writer",
            "ScalingReplicaSet",
            "Scaled up replica set ledger-writer-5d9c7f6b48 to 2 from 1",
            ROLL + timedelta(seconds=41),
            ROLL + timedelta(seconds=41),
            component="deployment-controller",
        ),
    )
    for p in new_pods:
        pn, host = p["metadata"]["name"], p["spec"]["nodeName"]
        t0 = kit.at(p["metadata"]["creationTimestamp"])
        sc.add(
            kit.event(
                "payments",
                "Pod",
                pn,
                "Scheduled",
                f"Successfully assigned payments/{pn} to {host}",
                t0,
                t0,
                component="default-scheduler",
            ),
            kit.event(
                "payments",
                "Pod",
                pn,
                "Pulling",
                f'Pulling image "{NEW_IMAGE}"',
                t0 + timedelta(seconds=1),
                t0 + timedelta(seconds=1),
                host=host,
            ),
            kit.event(
                "payments",
                "Pod",
                pn,
                "Pulled",
                f'Successfully pulled image "{NEW_IMAGE}" in 2.114s (2.114s including waiting)',
                t0 + timedelta(seconds=3),
                t0 + timedelta(seconds=3),
                host=host,
            ),
            kit.event(
                "payments",
                "Pod",
                pn,
                "Created",
                "Created container ledger-writer",
                t0 + timedelta(seconds=3),
                t0 + timedelta(seconds=3),
                host=host,
            ),
            kit.event(
                "payments",
                "Pod",
                pn,
                "Started",
                "Started container ledger-writer",
                t0 + timedelta(seconds=4),
                t0 + timedelta(seconds=4),
                host=host,
            ),
            kit.event(
                "payments",
                "Pod",
                pn,
                "Unhealthy",
                EXEC_ERR,
                t0 + timedelta(seconds=14),
                NOW - timedelta(seconds=rng.randint(2, 9)),
                count=int((NOW - t0).total_seconds() // 10) - 1,
                warning=True,
                host=host,
            ),
        )
        sc.log(
            "payments",
            pn,
            "ledger-writer",
            _app_log(rng, t0 + timedelta(seconds=4), NEW_IMAGE, fresh=True),
        )
    for p in old_pods:
        sc.log(
            "payments",
            p["metadata"]["name"],
            "ledger-writer",
            _app_log(rng, NOW - timedelta(hours=2), OLD_IMAGE, fresh=False),
        )
    _bystanders(sc, rng, nodes, created, times)
    _docs(sc, rng, old_pods, new_pods)
    return sc


def _app_log(rng: random.Random, t0: kit.datetime, image: str, fresh: bool) -> list[str]:
    ver = image.rsplit(":", 1)[1]

    def line(t: kit.datetime, lvl: str, target: str, msg: str) -> str:
        return f"{kit.ts_ms(t)}  {lvl:>5} {target}: {msg}"

    out = []
    t = t0
    if fresh:
        out += [
            line(
                t,
                "INFO",
                "ledger_writer",
                f"starting ledger-writer version={ver} git_sha=9c1e44a build=release",
            ),
            line(
                t + timedelta(milliseconds=40),
                "INFO",
                "ledger_writer::config",
                "loaded config from env (12 keys), db_pool_max=24",
            ),
            line(
                t + timedelta(milliseconds=310),
                "INFO",
                "sqlx::postgres::notice",
                'relation "_sqlx_migrations" already exists, skipping',
            ),
            line(
                t + timedelta(milliseconds=380),
                "INFO",
                "ledger_writer::db",
                "migrations up to date (latest=0087_posting_idempotency_key)",
            ),
            line(
                t + timedelta(milliseconds=420),
                "INFO",
                "ledger_writer::http",
                "listening on 0.0.0.0:8080",
            ),
            line(
                t + timedelta(milliseconds=430),
                "INFO",
                "ledger_writer::metrics",
                "prometheus exporter on 0.0.0.0:9464",
            ),
        ]
        t += timedelta(seconds=30)
        while t < NOW:
            out.append(
                line(
                    t,
                    "INFO",
                    "ledger_writer::outbox",
                    "outbox relay idle (0 pending), next poll in 30s",
                )
            )
            t += timedelta(seconds=30)
        return out
    while t < NOW:
        r = rng.random()
        if r < 0.85:
            out.append(
                line(
                    t,
                    "INFO",
                    "ledger_writer::http",
                    f"POST /v1/postings 201 {rng.randint(3, 28)}ms "
                    f"journal=jr_{rng.getrandbits(40):010x}",
                )
            )
        elif r < 0.97:
            out.append(
                line(
                    t,
                    "INFO",
                    "ledger_writer::http",
                    f"GET /v1/accounts/acc_{rng.getrandbits(32):08x}/balance 200 "
                    f"{rng.randint(1, 9)}ms",
                )
            )
        else:
            out.append(
                line(
                    t,
                    "WARN",
                    "ledger_writer::db",
                    f"slow statement ({rng.randint(210, 480)}ms): INSERT INTO postings ...",
                )
            )
        t += timedelta(seconds=rng.randint(8, 40))
    return out


def _bystanders(
    sc: Scenario, rng: random.Random, nodes: list[str], created: kit.datetime, times: list[int]
) -> None:
    for name, image, reps in (
        ("payment-gateway", "ghcr.io/quillmark/payment-gateway:4.9.1", 4),
        ("pgbouncer-ledger", "bitnami/pgbouncer:1.22.1", 2),
        ("fx-rates", "ghcr.io/quillmark/fx-rates:1.4.0", 2),
    ):
        c = kit.container(
            name,
            image,
            port=8080 if name != "pgbouncer-ledger" else 6432,
            cpu_req="250m",
            mem_req="256Mi",
            cpu_lim="1",
            mem_lim="512Mi",
            readiness=kit.http_probe("/healthz")
            if name != "pgbouncer-ledger"
            else {"tcpSocket": {"port": 6432}, "periodSeconds": 10},
        )
        w = fleet.app(
            sc,
            rng,
            "payments",
            name,
            [c],
            nodes,
            replicas=reps,
            created=created,
            rolled=NOW - timedelta(days=rng.randint(2, 6), hours=rng.randint(0, 12)),
            revision=rng.randint(5, 40),
            port=8080 if name != "pgbouncer-ledger" else 6432,
        )
        for p in w.pods:
            fleet.container_metrics(
                sc,
                "payments",
                p["metadata"]["name"],
                name,
                times,
                mem=lambda i: 180 * MiB,
                cpu=lambda i: 0.12,
                mem_limit=512 * MiB,
                cpu_limit=1.0,
                throttle=lambda i: 0.01,
                node_name=p["spec"]["nodeName"],
                rng=rng,
            )
    c = kit.container(
        "collector", "otel/opentelemetry-collector-contrib:0.102.1", port=4317, mem_lim="1Gi"
    )
    w = fleet.app(
        sc,
        rng,
        "observability",
        "otel-collector",
        [c],
        nodes,
        replicas=2,
        created=created,
        rolled=NOW - timedelta(days=4),
        revision=11,
        port=4317,
        svc_port=4317,
    )
    sc.add(
        kit.event(
            "observability",
            "Pod",
            w.names[0],
            "DNSConfigForming",
            "Search Line limits were exceeded, some search paths have been omitted, the applied "
            "search line is: "
            "observability.svc.cluster.local svc.cluster.local cluster.local "
            "eu-central-1.compute.internal",
            NOW - timedelta(minutes=58),
            NOW - timedelta(minutes=3),
            count=61,
            warning=True,
            host=nodes[0],
        )
    )


def _docs(
    sc: Scenario, rng: random.Random, old_pods: list[kit.Obj], new_pods: list[kit.Obj]
) -> None:
    start = NOW - timedelta(hours=2)
    for p in old_pods:
        t = start
        pn = p["metadata"]["name"]
        while t < NOW:
            if rng.random() < 0.04:
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "warn",
                        f"slow statement ({rng.randint(210, 480)}ms): INSERT INTO postings ...",
                        "ledger-writer",
                        "payments",
                        pn,
                        "ledger-writer",
                        **{"log.logger": "ledger_writer::db"},
                    )
                )
            else:
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "info",
                        f"POST /v1/postings 201 {rng.randint(3, 28)}ms",
                        "ledger-writer",
                        "payments",
                        pn,
                        "ledger-writer",
                        **{"log.logger": "ledger_writer::http", "http.response.status_code": 201},
                    )
                )
            t += timedelta(seconds=rng.randint(20, 60))
    for p in new_pods:
        pn = p["metadata"]["name"]
        t = kit.at(p["metadata"]["creationTimestamp"]) + timedelta(seconds=4)
        for msg in (
            "starting ledger-writer version=2.32.0 git_sha=9c1e44a build=release",
            "migrations up to date (latest=0087_posting_idempotency_key)",
            "listening on 0.0.0.0:8080",
        ):
            sc.docs.append(
                kit.logdoc(t, "info", msg, "ledger-writer", "payments", pn, "ledger-writer")
            )
            t += timedelta(milliseconds=200)
        while t < NOW:
            t += timedelta(minutes=5)
            sc.docs.append(
                kit.logdoc(
                    t,
                    "info",
                    "outbox relay idle (0 pending), next poll in 30s",
                    "ledger-writer",
                    "payments",
                    pn,
                    "ledger-writer",
                    **{"log.logger": "ledger_writer::outbox"},
                )
            )
    gw = [
        d
        for d in sc.objects
        if d["kind"] == "Pod" and d["metadata"]["name"].startswith("payment-gateway")
    ]
    for p in gw:
        t = start
        while t < NOW:
            sc.docs.append(
                kit.logdoc(
                    t,
                    "INFO",
                    f"authorized payment pi_{rng.getrandbits(48):012x} via ledger-writer in "
                    f"{rng.randint(9, 60)}ms",
                    "payment-gateway",
                    "payments",
                    p["metadata"]["name"],
                    "payment-gateway",
                )
            )
            t += timedelta(seconds=rng.randint(30, 90))


STORIES = {"ledger-writer-rollout-stalled": build}
