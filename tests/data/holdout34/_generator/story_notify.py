"""8. notification-router-debug-logging: revision 19 turns on debug logging with synchronous
writes to stdout; nothing errs, but latency doubles and the log volume grows tenfold."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-12-01T11:15:00Z")
ROLL = kit.at("2026-12-01T08:42:20Z")
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
DEBUG = [
    "resolved template {tpl} locale={loc} version=41",
    "user prefs cache hit key=prefs:{uid} ttl=287s",
    "channel routing decision channels=[push,email] quiet_hours=false",
    "rendering template {tpl} vars=14",
    "provider request POST https://api.sendgrid.com/v3/mail/send bytes={n}",
    "provider response 202 in {ms}ms",
    "fcm batch prepared tokens={k}",
    "outbox row inserted id=ob_{rid}",
    "rate limiter tokens_left={k} bucket=tenant:{ten}",
    "dedupe check key=nd:{rid} result=miss",
]


def _container(image: str, debug: bool) -> kit.Obj:
    env = {
        "NODE_ENV": "production",
        "LOG_LEVEL": "debug" if debug else "info",
        "REDIS_URL": "redis://preferences-cache.comms.svc:6379",
        "EMAIL_PROVIDER": "sendgrid",
        "PUSH_PROVIDER": "fcm",
    }
    if debug:
        env["LOG_SYNC"] = "true"
    return kit.container(
        "notification-router",
        image,
        port=3000,
        cpu_req="500m",
        mem_req="384Mi",
        cpu_lim="1500m",
        mem_lim="768Mi",
        readiness=kit.http_probe("/healthz"),
        liveness=kit.http_probe("/healthz", delay=15),
        env=env,
    )


def build() -> Scenario:
    rng = random.Random(3408)
    sc = Scenario(
        "notification-router-debug-logging",
        "Notification sends slower since this morning",
        NOW,
        "notification sends feel laggy since this morning, median on POST /v1/notify "
        "roughly doubled (~40ms -> ~80ms), p99 up too.\n"
        "zero errors anywhere, nothing in the logs that looks wrong. sendgrid status page is "
        "green.\n"
        "not urgent yet but the appointment-reminder batch at 13:00 will hammer it. any idea?\n",
        {
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "comms", "name": "notification-router"},
            "evidence": ["LOG_LEVEL=debug", "LOG_SYNC", "revision 19"],
            "fix": "Roll back to revision 18 or set LOG_LEVEL back to info and drop LOG_SYNC "
            "(synchronous stdout writes "
            "block the event loop at debug volume)",
        },
    )
    created = NOW - timedelta(days=260)
    for n in ("comms", "default", "kube-system", "monitoring", "patients"):
        sc.add(kit.namespace(n, created))
    nodes = [
        f"ip-10-8-{a}-{b}.eu-west-2.compute.internal"
        for a, b in ((3, 41), (5, 190), (7, 12), (3, 222), (5, 9))
    ]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=4, hours=3 * i),
                "8",
                "32386128Ki",
                {
                    "eks.amazonaws.com/nodegroup": "general-m7i",
                    "node.kubernetes.io/instance-type": "m7i.2xlarge",
                    "topology.kubernetes.io/zone": f"eu-west-2{'abc'[i % 3]}",
                },
                heartbeat=NOW - timedelta(seconds=9),
            )
        )
    times = fleet.grid(NOW, 3)
    roll_i = next(i for i, t in enumerate(times) if t >= ROLL.timestamp())
    labels = {"app.kubernetes.io/name": "notification-router", "app.kubernetes.io/part-of": "comms"}
    old_c = _container(
        "123456789012.dkr.ecr.eu-west-2.amazonaws.com/comms/notification-router:2.13.2", False
    )
    new_c = _container(
        "123456789012.dkr.ecr.eu-west-2.amazonaws.com/comms/notification-router:2.14.0", True
    )
    old_t = kit.template(labels, [old_c])
    new_t = kit.template(labels, [new_c])
    dep = kit.deployment(
        "comms",
        "notification-router",
        created,
        labels,
        new_t,
        replicas=4,
        revision=19,
        progressing=(
            "True",
            "NewReplicaSetAvailable",
            'ReplicaSet "notification-router-7d4b8c96f" has successfully progressed.',
            ROLL + timedelta(seconds=95),
        ),
        change_cause="release 2.14.0: digest batching for push, verbose logging for INC-7781 "
        "follow-up",
    )
    old_rs = kit.replicaset(
        dep, "59c6f7d8b4", NOW - timedelta(days=6, hours=2), 18, old_t, replicas=0, ready=0
    )
    old_rs["status"] = {"replicas": 0, "observedGeneration": 3}
    new_rs = kit.replicaset(dep, "7d4b8c96f", ROLL, 19, new_t, replicas=4)
    sc.add(dep, old_rs, new_rs)
    pods = []
    for i in range(4):
        st = ROLL + timedelta(seconds=3 + 22 * i)
        pods.append(
            kit.pod(
                new_rs,
                f"notification-router-7d4b8c96f-{kit.suffix(rng)}",
                st,
                nodes[i],
                new_t,
                [kit.cstatus(new_c, st + timedelta(seconds=2))],
                ip=fleet.ip(rng, "10.8"),
            )
        )
    sc.add(*pods)
    svc = kit.service(
        "comms",
        "notification-router",
        created,
        labels,
        [("http", 80, "http")],
        cluster_ip="172.20.14.90",
    )
    sc.add(
        svc, kit.endpoints("comms", "notification-router", created, pods, [("http", 3000)], labels)
    )
    old_names = [f"notification-router-59c6f7d8b4-{kit.suffix(rng)}" for _ in range(4)]
    runs = [(n, nodes[k], 0, roll_i, False) for k, n in enumerate(old_names)]
    runs += [(p["metadata"]["name"], p["spec"]["nodeName"], roll_i, len(times), True) for p in pods]
    for pn, node_name, lo, hi, new in runs:
        span = times[lo:hi]
        fleet.container_metrics(
            sc,
            "comms",
            pn,
            "notification-router",
            span,
            mem=lambda i, n=new: (248 if n else 231) * MiB + (i % 8) * 2 * MiB,
            cpu=lambda i, n=new: 0.61 if n else 0.34,
            mem_limit=768 * MiB,
            cpu_limit=1.5,
            throttle=lambda i, n=new: rng.uniform(0.02, 0.05) if n else rng.uniform(0.0, 0.01),
            node_name=node_name,
            rng=rng,
        )
        fleet.requests(
            sc,
            "http_requests_total",
            {
                "namespace": "comms",
                "pod": pn,
                "service": "notification-router",
                "route": "/v1/notify",
                "method": "POST",
            },
            span,
            rate=lambda i: 31.0,
            err=lambda i: 0.0,
            codes=("202", "500"),
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {
                "namespace": "comms",
                "pod": pn,
                "service": "notification-router",
                "route": "/v1/notify",
                "method": "POST",
            },
            span,
            [31.0 * 60] * len(span),
            lambda i, n=new: 0.079 if n else 0.037,
            BUCKETS,
        )
        log_span = span if new else list(range(times[0] - 3 * 3600, times[roll_i], 60))
        _logs(sc, rng, pn, log_span, new)
    _bystanders(sc, rng, nodes, created, times)
    return sc


def _logs(sc: Scenario, rng: random.Random, pn: str, span: list[int], new: bool) -> None:
    lines = []
    per_min = 20 if new else 2
    for minute in span:
        base = kit.datetime.fromtimestamp(minute, kit.UTC)
        for _ in range(per_min):
            t = base + timedelta(seconds=rng.randint(0, 59), milliseconds=rng.randint(0, 999))
            rid = f"{rng.getrandbits(40):010x}"
            if new and rng.random() < 0.9:
                level, text = (
                    "debug",
                    rng.choice(DEBUG).format(
                        tpl=rng.choice(["appt-reminder", "rx-ready", "lab-result", "otp"]),
                        loc=rng.choice(["en-GB", "cy-GB"]),
                        uid=rng.randint(10**6, 10**7),
                        n=rng.randint(900, 9000),
                        ms=rng.randint(40, 90),
                        k=rng.randint(1, 500),
                        rid=rid,
                        ten=rng.randint(1, 40),
                    ),
                )
            else:
                level, text = (
                    "info",
                    (
                        f"notification dispatched id=nt_{rid} "
                        f"channels={rng.choice(['push', 'email', 'push,email', 'sms'])} "
                        f"took={rng.randint(60, 140) if new else rng.randint(25, 60)}ms"
                    ),
                )
            sc.docs.append(
                kit.logdoc(
                    t,
                    level,
                    text,
                    "notification-router",
                    "comms",
                    pn,
                    "notification-router",
                    **{"trace.id": f"{rng.getrandbits(64):016x}"},
                )
            )
            if minute >= span[-1] - 600:
                lines.append(
                    (
                        t,
                        json.dumps(
                            {
                                "level": 20 if level == "debug" else 30,
                                "time": int(t.timestamp() * 1000),
                                "pid": 1,
                                "hostname": pn,
                                "msg": text,
                            },
                            separators=(",", ":"),
                        ),
                    )
                )
    if new:
        lines.sort()
        sc.log("comms", pn, "notification-router", [ln for _, ln in lines])


def _bystanders(
    sc: Scenario, rng: random.Random, nodes: list[str], created: kit.datetime, times: list[int]
) -> None:
    for name, image, reps in (
        (
            "email-sender",
            "123456789012.dkr.ecr.eu-west-2.amazonaws.com/comms/email-sender:1.7.4",
            2,
        ),
        ("sms-gateway", "123456789012.dkr.ecr.eu-west-2.amazonaws.com/comms/sms-gateway:0.9.12", 2),
        ("preferences-cache", "redis:7.2.4-alpine", 1),
    ):
        port = 6379 if name == "preferences-cache" else 8080
        c = kit.container(
            name,
            image,
            port=port,
            cpu_req="250m",
            mem_req="256Mi",
            cpu_lim="1",
            mem_lim="512Mi",
            readiness=kit.http_probe("/ready")
            if port == 8080
            else {"tcpSocket": {"port": 6379}, "periodSeconds": 10},
        )
        w = fleet.app(
            sc,
            rng,
            "comms",
            name,
            [c],
            nodes[::-1],
            replicas=reps,
            created=created,
            rolled=NOW - timedelta(days=rng.randint(2, 6), hours=rng.randint(1, 9)),
            revision=rng.randint(3, 40),
            port=port,
            svc_port=80 if port == 8080 else 6379,
        )
        for p in w.pods:
            fleet.container_metrics(
                sc,
                "comms",
                p["metadata"]["name"],
                name,
                times,
                mem=lambda i: 140 * MiB,
                cpu=lambda i: 0.08,
                mem_limit=512 * MiB,
                cpu_limit=1.0,
                throttle=lambda i: 0.0,
                node_name=p["spec"]["nodeName"],
                rng=rng,
            )
            if name == "email-sender":
                for k in range(0, 180, 4):
                    t = NOW - timedelta(minutes=k, seconds=rng.randint(0, 50))
                    sc.docs.append(
                        kit.logdoc(
                            t,
                            "info",
                            f"sendgrid accepted message batch size={rng.randint(1, 40)} in "
                            f"{rng.randint(60, 120)}ms",
                            name,
                            "comms",
                            p["metadata"]["name"],
                            name,
                        )
                    )
    pc = kit.container(
        "portal",
        "123456789012.dkr.ecr.eu-west-2.amazonaws.com/patients/portal-api:6.1.0",
        port=8080,
        readiness=kit.http_probe("/ready"),
    )
    fleet.app(
        sc,
        rng,
        "patients",
        "portal-api",
        [pc],
        nodes,
        replicas=3,
        created=created,
        rolled=NOW - timedelta(days=1),
        revision=77,
    )
    sc.add(
        kit.event(
            "",
            "Node",
            nodes[4],
            "ImageGCFailed",
            "failed to garbage collect required amount of images. Attempted to free 4718592000 "
            "bytes, but only found 0 bytes eligible to free.",
            NOW - timedelta(minutes=56),
            NOW - timedelta(minutes=6),
            count=11,
            warning=True,
            host=nodes[4],
        )
    )


STORIES = {"notification-router-debug-logging": build}
