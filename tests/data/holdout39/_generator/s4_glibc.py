"""Wrenfield Media: query-rewriter 0.19.0 was compiled on a bookworm builder (glibc 2.36)
but still ships on the bullseye runtime image (glibc 2.31); the new pod exits at start with
"GLIBC_2.34 not found" while the old ReplicaSet keeps serving."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Revision,
    Scenario,
    container,
    cumulative,
    deployment,
    endpoints,
    event,
    histogram_samples,
    namespace,
    node,
    parse,
    pods_for,
    service,
    simple_service,
    steps,
    terminated,
    ts,
)

NOW = parse("2026-11-27T16:05:00Z")
NS = "discovery"
ROLL = NOW - timedelta(minutes=38)
NODES = [f"wm-prod-k8s-worker-{i:02d}" for i in (3, 4, 7, 8, 11)]
IMAGE = "harbor.wrenfield.net/discovery/query-rewriter"
GLIBC = (
    "/usr/local/bin/query-rewriter: /lib/x86_64-linux-gnu/libc.so.6: version "
    "`GLIBC_2.34' not found (required by /usr/local/bin/query-rewriter)"
)
GLIBC2 = (
    "/usr/local/bin/query-rewriter: /lib/x86_64-linux-gnu/libc.so.6: version "
    "`GLIBC_2.33' not found (required by /usr/local/bin/query-rewriter)"
)
GLIBC3 = (
    "/usr/local/bin/query-rewriter: /lib/x86_64-linux-gnu/libc.so.6: version "
    "`GLIBC_2.32' not found (required by /usr/local/bin/query-rewriter)"
)


def build() -> Scenario:
    sc = Scenario(
        id="discovery-rewriter-rollout-stuck",
        title="query-rewriter rollout sits in Progressing; search relevance complaints",
        now=NOW,
        report="""
product says search results feel "off" since this afternoon (no synonyms for some queries?).
also the query-rewriter 0.19.0 sync has been sitting in Argo as Progressing for ~40 min,
probably argo being slow again. could you check whether search is healthy and if the
synonyms v3 rollout actually landed?
""",
        truth={
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "query-rewriter"},
            "evidence": [
                "version `GLIBC_2.34' not found",
                "CrashLoopBackOff",
                "ProgressDeadlineExceeded",
                "query-rewriter:0.19.0",
            ],
            "fix": "Rebuild query-rewriter 0.19.0 on the bullseye builder (or move the "
            "runtime image to bookworm, glibc >= 2.34) and roll again; the old "
            "ReplicaSet (0.18.4) still serves, so rolling back the Deployment is "
            "safe meanwhile.",
        },
    )
    created = NOW - timedelta(days=300)
    sc.add(namespace(NS, created), namespace("argocd", created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=6, hours=i),
                NOW,
                cpu="16",
                memory="64Gi",
                region="on-prem",
                zone=f"-rack{1 + i % 2}",
                instance="pve-vm-16x64",
                kubelet="v1.30.6",
            )
        )
    rng = sc.rng
    name = "query-rewriter"
    env = [
        {"name": "RUST_LOG", "value": "info,query_rewriter=info"},
        {"name": "SYNONYMS_URL", "value": "http://synonym-store.discovery.svc:8080"},
        {"name": "LISTEN_ADDR", "value": "0.0.0.0:7070"},
    ]

    def spec(tag: str) -> dict[str, object]:
        return container(
            name,
            f"{IMAGE}:{tag}",
            port=7070,
            cpu="500m",
            memory="256Mi",
            memory_limit="512Mi",
            env=env,
            readiness="/readyz",
            liveness="/livez",
        )

    old_rolled = NOW - timedelta(days=6, hours=2)
    older = Revision(
        21,
        [spec("0.18.3")],
        old_rolled - timedelta(days=13),
        0,
        change_cause="query-rewriter 0.18.3",
    )
    old = Revision(
        22,
        [spec("0.18.4")],
        old_rolled,
        4,
        change_cause="query-rewriter 0.18.4: fix accent folding",
    )
    new = Revision(
        23,
        [spec("0.19.0")],
        ROLL,
        1,
        ready=0,
        change_cause="query-rewriter 0.19.0: synonyms v3, CI builder image rust:1.83 (FOUND-812)",
    )
    sc.add(
        deployment(
            NS,
            name,
            created,
            [older, old, new],
            4,
            progressing="deadline",
            progress_time=ROLL + timedelta(minutes=10, seconds=4),
            strategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
        )
    )
    serving = pods_for(sc, NS, name, old, NODES, old_rolled + timedelta(seconds=6))
    restarts = 11
    last_start = NOW - timedelta(minutes=2, seconds=51)

    def crashing(i: int, started: datetime) -> list[dict[str, object]]:
        return [
            {
                "ready": False,
                "restartCount": restarts,
                "started": False,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 5m0s restarting failed container={name} "
                        f"pod={name}-{new.hash(NS, name)}-placeholder",
                    }
                },
                "lastState": {
                    "terminated": terminated(
                        "Error", 1, last_start, last_start + timedelta(seconds=0)
                    )
                },
            }
        ]

    broken = pods_for(sc, NS, name, new, NODES[2:], ROLL + timedelta(seconds=3), statuses=crashing)
    bad = broken[0]
    bad_name = bad["metadata"]["name"]
    waiting = bad["status"]["containerStatuses"][0]["state"]["waiting"]
    waiting["message"] = waiting["message"].replace(
        f"{name}-{new.hash(NS, name)}-placeholder", f"{bad_name}_{NS}({bad['metadata']['uid']})"
    )
    sc.add(
        service(NS, name, created, 7070),
        endpoints(NS, name, created, serving, 7070, not_ready=broken),
    )
    host = bad["spec"]["nodeName"]
    sc.add(
        event(
            NS,
            "Deployment",
            name,
            "ScalingReplicaSet",
            f"Scaled up replica set {name}-{new.hash(NS, name)} to 1",
            ROLL,
            component="deployment-controller",
        ),
        event(
            NS,
            "ReplicaSet",
            f"{name}-{new.hash(NS, name)}",
            "SuccessfulCreate",
            f"Created pod: {bad_name}",
            ROLL + timedelta(seconds=1),
            component="replicaset-controller",
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Scheduled",
            f"Successfully assigned {NS}/{bad_name} to {host}",
            ROLL + timedelta(seconds=1),
            component="default-scheduler",
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Pulling",
            f'Pulling image "{IMAGE}:0.19.0"',
            ROLL + timedelta(seconds=2),
            host=host,
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Pulled",
            f'Successfully pulled image "{IMAGE}:0.19.0" in 3.882s (3.882s including '
            "waiting). Image size: 41729337 bytes.",
            ROLL + timedelta(seconds=6),
            host=host,
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Pulled",
            f'Container image "{IMAGE}:0.19.0" already present on machine',
            ROLL + timedelta(seconds=22),
            last_start,
            count=restarts,
            host=host,
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Created",
            f"Created container {name}",
            ROLL + timedelta(seconds=6),
            last_start,
            count=restarts + 1,
            host=host,
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "Started",
            f"Started container {name}",
            ROLL + timedelta(seconds=6),
            last_start,
            count=restarts + 1,
            host=host,
        ),
        event(
            NS,
            "Pod",
            bad_name,
            "BackOff",
            f"Back-off restarting failed container {name} in pod {bad_name}_{NS}"
            f"({bad['metadata']['uid']})",
            ROLL + timedelta(seconds=8),
            NOW - timedelta(seconds=14),
            count=163,
            type_="Warning",
            host=host,
        ),
        event(
            NS,
            "Deployment",
            name,
            "ScalingReplicaSet",
            f"Scaled down replica set {name}-{older.hash(NS, name)} to 0 from 0",
            ROLL,
            component="deployment-controller",
        ),
    )
    sc.log(NS, bad_name, name, GLIBC3, previous=True)
    sc.log(NS, bad_name, name, GLIBC2, previous=True)
    sc.log(NS, bad_name, name, GLIBC, previous=True)
    for line in (GLIBC3, GLIBC2, GLIBC):
        sc.doc(
            last_start,
            NS,
            bad_name,
            name,
            name,
            "error",
            line,
            **{"log.origin.file.name": "stderr"},
        )
    # bystanders
    _, synonyms = simple_service(
        sc,
        NS,
        "synonym-store",
        "harbor.wrenfield.net/discovery/synonym-store:3.0.2",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(hours=3, minutes=10),
        number=15,
        memory="512Mi",
    )
    _, api = simple_service(
        sc,
        NS,
        "search-api",
        "harbor.wrenfield.net/discovery/search-api:2026.47.1",
        replicas=4,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=2, hours=1),
        number=140,
        memory="768Mi",
        env=[{"name": "REWRITER_URL", "value": "http://query-rewriter.discovery.svc:7070"}],
    )
    _, indexer = simple_service(
        sc,
        NS,
        "catalog-indexer",
        "harbor.wrenfield.net/discovery/catalog-indexer:1.12.0",
        replicas=1,
        nodes=NODES[4:],
        created=created,
        rolled=NOW - timedelta(days=4),
        number=33,
        memory="2Gi",
        expose=False,
        readiness=None,
    )
    sc.add(
        event(
            NS,
            "Pod",
            indexer[0]["metadata"]["name"],
            "Pulled",
            'Container image "harbor.wrenfield.net/discovery/catalog-indexer:1.12.0" '
            "already present on machine",
            NOW - timedelta(minutes=44),
            host=NODES[4],
        )
    )
    sc.add(
        event(
            NS,
            "Pod",
            api[1]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.244.4.9:8080/healthz": context '
            "deadline exceeded",
            NOW - timedelta(minutes=22),
            type_="Warning",
            host=api[1]["spec"]["nodeName"],
        )
    )
    # old pods: tracing-style logs (Rust tracing fmt)
    for p in serving:
        pod_name = p["metadata"]["name"]
        began = parse(p["status"]["startTime"]) + timedelta(seconds=1)
        sc.log(
            NS,
            pod_name,
            name,
            f"{ts(began)}  INFO query_rewriter: starting version=0.18.4 listen=0.0.0.0:7070",
        )
        sc.log(
            NS,
            pod_name,
            name,
            f"{ts(began)}  INFO query_rewriter::synonyms: loaded "
            "synonym set version=2 entries=48211",
        )
        t = NOW - timedelta(hours=2)
        while t < NOW:
            t += timedelta(seconds=rng.randint(3, 15))
            if t >= NOW:
                break
            us = rng.randint(300, 2400)
            line = (
                f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z  INFO request{{method=POST "
                f"path=/rewrite}}: query_rewriter::http: status=200 latency_us={us}"
            )
            sc.log(NS, pod_name, name, line)
        w = (
            f"{(NOW - timedelta(minutes=rng.randint(30, 170))).strftime('%Y-%m-%dT%H:%M:%S.%f')}"
            "Z  WARN query_rewriter::synonyms: synonym-store returned set version=3, this "
            "build understands <=2; keeping version=2"
        )
        sc.log(NS, pod_name, name, w)
    sc.doc(
        NOW - timedelta(hours=3, minutes=5),
        NS,
        synonyms[0]["metadata"]["name"],
        "synonym-store",
        "synonym-store",
        "info",
        "published synonym set version=3 (entries=61877); clients on v2 keep v2",
    )
    for p in serving:
        sc.doc(
            NOW - timedelta(hours=2, minutes=50),
            NS,
            p["metadata"]["name"],
            name,
            name,
            "warn",
            "synonym-store returned set version=3, this build understands <=2; keeping version=2",
        )
    sc.doc(
        ROLL - timedelta(seconds=20),
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "Initiated automated sync to 'b7d1c09' application=discovery-query-rewriter",
    )
    sc.doc(
        ROLL + timedelta(minutes=15),
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "Application health status changed from Progressing to Degraded "
        "application=discovery-query-rewriter",
    )
    for p in api:
        pod_name = p["metadata"]["name"]
        t = NOW - timedelta(hours=1)
        while t < NOW:
            t += timedelta(seconds=rng.randint(10, 40))
            if t >= NOW:
                break
            sc.log(
                NS,
                pod_name,
                "search-api",
                f"[{ts(t)}] INFO  search q_len={rng.randint(1, 6)} "
                f"hits={rng.randint(0, 900)} took={rng.randint(18, 90)}ms rewrite=ok",
            )

    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    bounds = [0.001, 0.0025, 0.005, 0.01, 0.05]
    for p in serving:
        pod_name = p["metadata"]["name"]
        lab = {"namespace": NS, "pod": pod_name, "container": name}
        sc.metrics.counter(
            "http_requests",
            {"namespace": NS, "pod": pod_name, "service": name, "code": "200"},
            cumulative(times, lambda m: 42.0),
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": NS, "pod": pod_name, "service": name},
            bounds,
            histogram_samples(times, lambda m: 42.0, lambda m: [0.3, 0.8, 0.95, 0.99, 1.0], bounds),
        )
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            lab,
            [(m, 61e6 + rng.uniform(-2e6, 2e6)) for m in times[::5]],
        )
        sc.metrics.counter("kube_pod_container_status_restarts", lab, [(m, 0) for m in times[::5]])
    lab = {"namespace": NS, "pod": bad_name, "container": name}
    crash_times = [m for m in times if m >= ROLL]
    crash_starts, moment, delay = [], ROLL + timedelta(seconds=6), 10
    while len(crash_starts) < restarts:  # kubelet back-off: 10s doubling to 5m
        moment += timedelta(seconds=delay)
        crash_starts.append(moment)
        delay = min(delay * 2, 300)
    sc.metrics.counter(
        "kube_pod_container_status_restarts",
        lab,
        [(m, sum(1 for c in crash_starts if c <= m)) for m in crash_times],
    )
    return sc
