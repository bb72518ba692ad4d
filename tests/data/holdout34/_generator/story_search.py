"""5. search-slow-evening-peak: query-gateway requires one replica per host on a six-node pool;
at the evening scale-out the HPA asks for ten, four stay Pending, the six running ones saturate."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-27T20:30:00Z")
PEAK = kit.at("2026-11-27T19:38:00Z")
SCALE1 = kit.at("2026-11-27T19:51:12Z")
SCALE2 = kit.at("2026-11-27T20:03:44Z")
BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SCHED_MSG = (
    "0/14 nodes are available: 6 node(s) didn't match pod anti-affinity rules, 8 node(s) didn't "
    "match Pod's node "
    "affinity/selector. preemption: 0/14 nodes are available: 6 No preemption victims found for "
    "incoming pod, "
    "8 Preemption is not helpful for scheduling."
)


def build() -> Scenario:
    rng = random.Random(3405)
    sc = Scenario(
        "search-slow-evening-peak",
        "Search slow at the evening peak",
        NOW,
        "search is crawling again tonight, p99 on /search is 3-4s since ~19:45 (normally ~300ms). "
        "same thing yesterday evening.\n"
        "query-gateway has an HPA and it did scale up so it shouldn't be capacity?? could elastic "
        "cloud be slow again?\n",
        {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": "discovery", "name": "query-gateway"},
            "evidence": ["didn't match pod anti-affinity rules", "Pending", "FailedScheduling"],
            "fix": "Relax query-gateway's required per-hostname pod anti-affinity (preferred, or "
            "topologySpreadConstraints "
            "with maxSkew) or add nodes to the search pool so the HPA's replicas can schedule",
        },
    )
    created = NOW - timedelta(days=380)
    for n in ("discovery", "web", "kube-system", "monitoring"):
        sc.add(kit.namespace(n, created))
    search_nodes = [f"gke-fern-prod-search-c2d-5f1a-{kit.suffix(rng, 4)}" for _ in range(6)]
    general = [f"gke-fern-prod-general-e2-9b3c-{kit.suffix(rng, 4)}" for _ in range(8)]
    for i, n in enumerate(search_nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=16, hours=i),
                "32",
                "131927512Ki",
                {
                    "cloud.google.com/gke-nodepool": "search",
                    "ferncastle.io/pool": "search",
                    "node.kubernetes.io/instance-type": "c2d-standard-32",
                    "topology.kubernetes.io/zone": f"europe-west4-{'abc'[i % 3]}",
                },
                taints=[{"key": "dedicated", "value": "search", "effect": "NoSchedule"}],
                heartbeat=NOW - timedelta(seconds=14),
            )
        )
    for i, n in enumerate(general):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=9, hours=i * 3),
                "16",
                "65842612Ki",
                {
                    "cloud.google.com/gke-nodepool": "general",
                    "node.kubernetes.io/instance-type": "e2-standard-16",
                    "topology.kubernetes.io/zone": f"europe-west4-{'abc'[i % 3]}",
                },
                heartbeat=NOW - timedelta(seconds=22),
            )
        )
    times = fleet.grid(NOW, 3)
    peak_i = next(i for i, t in enumerate(times) if t >= PEAK.timestamp())

    labels = {"app": "query-gateway", "tier": "search"}
    qc = kit.container(
        "query-gateway",
        "europe-docker.pkg.dev/ferncastle/search/query-gateway:4.22.1",
        port=8000,
        cpu_req="6",
        mem_req="6Gi",
        cpu_lim=None,
        mem_lim="8Gi",
        readiness=kit.http_probe("/healthz/ready", period=5),
        liveness=kit.http_probe("/healthz/live", delay=20),
        env={
            "WEB_CONCURRENCY": "6",
            "ES_ENDPOINT": "https://fern-prod.es.europe-west4.gcp.elastic-cloud.com",
            "ES_TIMEOUT_S": "3",
            "RERANK_ENABLED": "true",
        },
    )
    affinity = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": "app", "operator": "In", "values": ["query-gateway"]}
                            ]
                        },
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "nodeSelector": {"ferncastle.io/pool": "search"},
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "search", "effect": "NoSchedule"}
        ],
    }
    tmpl = kit.template(
        labels, [qc], annotations={"prometheus.io/scrape": "true"}, extra_spec=affinity
    )
    rolled = NOW - timedelta(days=3, hours=7)
    dep = kit.deployment(
        "discovery",
        "query-gateway",
        created,
        labels,
        tmpl,
        replicas=10,
        revision=88,
        ready=6,
        available=6,
        progressing=(
            "True",
            "NewReplicaSetAvailable",
            'ReplicaSet "query-gateway-5c7b9d8f6" has successfully progressed.',
            rolled + timedelta(minutes=3),
        ),
    )
    rs = kit.replicaset(dep, "5c7b9d8f6", rolled, 88, tmpl, replicas=10, ready=6)
    sc.add(dep, rs)
    running = []
    for i, n in enumerate(search_nodes):
        st = rolled + timedelta(seconds=25 * i)
        running.append(
            kit.pod(
                rs,
                f"query-gateway-5c7b9d8f6-{kit.suffix(rng)}",
                st,
                n,
                tmpl,
                [kit.cstatus(qc, st + timedelta(seconds=3))],
                ip=fleet.ip(rng, "10.80"),
            )
        )
    pending = []
    for i in range(4):
        st = (SCALE1 if i < 3 else SCALE2) + timedelta(seconds=i)
        pending.append(
            kit.pod(
                rs,
                f"query-gateway-5c7b9d8f6-{kit.suffix(rng)}",
                st,
                None,
                tmpl,
                [],
                ip="",
                phase="Pending",
                pending=SCHED_MSG,
            )
        )
    sc.add(*running, *pending)
    svc = kit.service(
        "discovery",
        "query-gateway",
        created,
        labels,
        [("http", 80, "http")],
        cluster_ip="10.112.4.19",
    )
    sc.add(
        svc, kit.endpoints("discovery", "query-gateway", created, running, [("http", 8000)], labels)
    )
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": kit.meta("query-gateway", "discovery", created, labels),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "query-gateway",
            },
            "minReplicas": 6,
            "maxReplicas": 16,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 65},
                    },
                }
            ],
        },
        "status": {
            "lastScaleTime": kit.ts(SCALE2),
            "currentReplicas": 10,
            "desiredReplicas": 10,
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": 97, "averageValue": "5824m"},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                    "lastTransitionTime": kit.ts(SCALE2),
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "reason": "ValidMetricFound",
                    "message": "the HPA was able to successfully calculate a replica count from "
                    "cpu resource utilization (percentage of request)",
                    "lastTransitionTime": kit.ts(created),
                },
                {
                    "type": "ScalingLimited",
                    "status": "False",
                    "reason": "DesiredWithinRange",
                    "message": "the desired count is within the acceptable range",
                    "lastTransitionTime": kit.ts(created),
                },
            ],
        },
    }
    sc.add(
        hpa,
        kit.event(
            "discovery",
            "HorizontalPodAutoscaler",
            "query-gateway",
            "SuccessfulRescale",
            "New size: 9; reason: cpu resource utilization (percentage of request) above target",
            SCALE1,
            SCALE1,
            component="horizontal-pod-autoscaler",
        ),
        kit.event(
            "discovery",
            "HorizontalPodAutoscaler",
            "query-gateway",
            "SuccessfulRescale",
            "New size: 10; reason: cpu resource utilization (percentage of request) above target",
            SCALE2,
            SCALE2,
            component="horizontal-pod-autoscaler",
        ),
        kit.event(
            "discovery",
            "Deployment",
            "query-gateway",
            "ScalingReplicaSet",
            "Scaled up replica set query-gateway-5c7b9d8f6 to 9 from 6",
            SCALE1,
            SCALE1,
            component="deployment-controller",
        ),
        kit.event(
            "discovery",
            "Deployment",
            "query-gateway",
            "ScalingReplicaSet",
            "Scaled up replica set query-gateway-5c7b9d8f6 to 10 from 9",
            SCALE2,
            SCALE2,
            component="deployment-controller",
        ),
    )
    for p in pending:
        t0 = kit.at(p["metadata"]["creationTimestamp"])
        sc.add(
            kit.event(
                "discovery",
                "Pod",
                p["metadata"]["name"],
                "FailedScheduling",
                SCHED_MSG,
                t0,
                NOW - timedelta(seconds=rng.randint(20, 200)),
                count=int((NOW - t0).total_seconds() // 300) + 1,
                warning=True,
                component="default-scheduler",
            )
        )
    demand = [
        60.0 * 6 if i < peak_i else 60.0 * 6 * min(2.3, 1 + (i - peak_i) / 22)
        for i in range(len(times))
    ]
    for p in running:
        pn = p["metadata"]["name"]
        fleet.container_metrics(
            sc,
            "discovery",
            pn,
            "query-gateway",
            times,
            mem=lambda i: 3900 * MiB + (i % 5) * 8 * MiB,
            cpu=lambda i: min(5.9, 2.4 * demand[i] / 360),
            mem_limit=8192 * MiB,
            cpu_limit=None,
            node_name=p["spec"]["nodeName"],
            rng=rng,
        )
        fleet.requests(
            sc,
            "http_requests_total",
            {"namespace": "discovery", "pod": pn, "service": "query-gateway", "handler": "/search"},
            times,
            rate=lambda i: demand[i] / 6,
            err=lambda i: 0.003 if demand[i] < 700 else 0.011,
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": "discovery", "pod": pn, "service": "query-gateway", "handler": "/search"},
            times,
            [demand[i] / 6 * 60 for i in range(len(times))],
            lambda i: 0.09 if demand[i] < 500 else 0.09 * (demand[i] / 500) ** 4,
            BUCKETS,
        )
        _gateway_logs(sc, rng, pn, times, demand)
    for name, image, reps in (
        ("autocomplete", "europe-docker.pkg.dev/ferncastle/search/autocomplete:1.9.3", 4),
        ("ranking-features", "europe-docker.pkg.dev/ferncastle/search/ranking-features:0.44.0", 3),
    ):
        c = kit.container(
            name,
            image,
            port=8080,
            cpu_req="1",
            mem_req="1Gi",
            mem_lim="2Gi",
            readiness=kit.http_probe("/ready"),
        )
        w = fleet.app(
            sc,
            rng,
            "discovery",
            name,
            [c],
            general,
            replicas=reps,
            created=created,
            rolled=NOW - timedelta(days=rng.randint(1, 6)),
            revision=rng.randint(10, 60),
        )
        for p in w.pods:
            fleet.container_metrics(
                sc,
                "discovery",
                p["metadata"]["name"],
                name,
                times,
                mem=lambda i: 700 * MiB,
                cpu=lambda i: 0.4,
                mem_limit=2048 * MiB,
                cpu_limit=None,
                rng=rng,
            )
    wc = kit.container(
        "web",
        "europe-docker.pkg.dev/ferncastle/web/storefront:2026.11.25",
        port=3000,
        readiness=kit.http_probe("/"),
    )
    w = fleet.app(
        sc,
        rng,
        "web",
        "storefront",
        [wc],
        general,
        replicas=6,
        created=created,
        rolled=NOW - timedelta(days=2),
        revision=140,
    )
    sc.add(
        kit.event(
            "web",
            "Pod",
            w.names[2],
            "BackOff",
            "Back-off pulling image "
            '"europe-docker.pkg.dev/ferncastle/web/storefront-canary:pr-2291"',
            NOW - timedelta(minutes=55),
            NOW - timedelta(minutes=51),
            count=4,
            warning=True,
            host=w.pods[2]["spec"]["nodeName"],
        )
    )
    return sc


def _gateway_logs(
    sc: Scenario, rng: random.Random, pn: str, times: list[int], demand: list[float]
) -> None:
    lines = []
    for i in range(len(times) - 150, len(times)):
        base = kit.datetime.fromtimestamp(times[i], kit.UTC)
        load = demand[i] / 500
        for _ in range(2):
            t = base + timedelta(seconds=rng.randint(0, 59), milliseconds=rng.randint(0, 999))
            es = rng.randint(22, 61)
            total = int(es + 40 + (0 if load < 1 else 90 * load**4) * rng.uniform(3, 12))
            q = rng.choice(
                [
                    "winter coat",
                    "lego",
                    "air fryer",
                    "nintendo switch",
                    "advent calendar",
                    "heated blanket",
                ]
            )
            hits, rerank = rng.randint(12, 4000), rng.randint(8, 30)
            msg = f'search q="{q}" hits={hits} es_took={es}ms rerank={rerank}ms total={total}ms'
            lvl = "WARNING" if total > 2000 else "INFO"
            if lvl == "WARNING":
                msg = f"slow request: {msg}"
            lines.append(f"{kit.ts_ms(t)} {lvl} [gateway.search] {msg}")
            sc.docs.append(
                kit.logdoc(
                    t,
                    lvl,
                    msg,
                    "query-gateway",
                    "discovery",
                    pn,
                    "query-gateway",
                    **{"log.logger": "gateway.search", "event.duration": total * 1000000},
                )
            )
        if load > 1.6 and rng.random() < 0.2:
            t = base + timedelta(seconds=30)
            msg = "uvicorn worker queue depth 48 > 32, requests are waiting for a worker"
            lines.append(f"{kit.ts_ms(t)} WARNING [uvicorn.error] {msg}")
            sc.docs.append(
                kit.logdoc(
                    t,
                    "WARNING",
                    msg,
                    "query-gateway",
                    "discovery",
                    pn,
                    "query-gateway",
                    **{"log.logger": "uvicorn.error"},
                )
            )
    lines.sort()
    sc.log("discovery", pn, "query-gateway", lines)


STORIES = {"search-slow-evening-peak": build}
