"""3. dispatch-geo-timeouts: the geocoder Service was switched to internalTrafficPolicy: Local;
callers on nodes that host no geocoder pod time out, the others are fine."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-30T12:40:00Z")
CHANGE = kit.at("2026-11-30T11:04:30Z")
RECREATED = kit.at("2026-11-30T12:16:10Z")
GEO_IP = "10.0.148.23"
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def build() -> Scenario:
    rng = random.Random(3403)
    sc = Scenario(
        "dispatch-geo-timeouts",
        "dispatch-api route quotes failing intermittently",
        NOW,
        "dispatch-api is flaky since around 11, roughly a third of route quotes come back 502 to "
        "the driver app.\n"
        "errors are timeouts talking to geocoder but geocoder's dashboard is spotless (p99 20ms, "
        "zero errors).\n"
        "I deleted one of the dispatch pods and that one seems fine now?? the others I haven't "
        "touched. maybe a bad node?\n",
        {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "geo", "name": "geocoder"},
            "evidence": ["internalTrafficPolicy: Local", "connect ETIMEDOUT 10.0.148.23:80"],
            "fix": "Set the geocoder Service back to internalTrafficPolicy: Cluster (or run "
            "geocoder on every node "
            "as a DaemonSet before making it node-local)",
        },
    )
    created = NOW - timedelta(days=300)
    for n in ("fleet", "geo", "kube-system", "monitoring"):
        sc.add(kit.namespace(n, created))
    nodes = [f"aks-general-31415926-vmss00000{i}" for i in range(7)]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=12, hours=i),
                "16",
                "65842612Ki",
                {
                    "agentpool": "general",
                    "kubernetes.azure.com/agentpool": "general",
                    "node.kubernetes.io/instance-type": "Standard_D16s_v5",
                    "topology.kubernetes.io/zone": f"westeurope-{i % 3 + 1}",
                },
                heartbeat=NOW - timedelta(seconds=12),
            )
        )
    times = fleet.grid(NOW, 3)
    change_i = next(i for i, t in enumerate(times) if t >= CHANGE.timestamp())

    # --- geocoder (callee) ---
    gc = kit.container(
        "geocoder",
        "brambleway.azurecr.io/geo/geocoder:7.3.0",
        port=8000,
        cpu_req="1",
        mem_req="2Gi",
        mem_lim="3Gi",
        readiness=kit.http_probe("/readyz"),
        liveness=kit.http_probe("/livez", delay=30),
    )
    geo_nodes = [nodes[0], nodes[2], nodes[4]]
    geo = fleet.app(
        sc,
        rng,
        "geo",
        "geocoder",
        [gc],
        geo_nodes,
        replicas=3,
        created=created,
        rolled=NOW - timedelta(days=3, hours=5),
        revision=22,
        port=8000,
        with_service=False,
    )
    spec_extra = {"internalTrafficPolicy": "Local"}
    applied = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "annotations": {"brambleway.io/owner": "geo-platform"},
            "labels": {"app": "geocoder"},
            "name": "geocoder",
            "namespace": "geo",
        },
        "spec": {
            "internalTrafficPolicy": "Local",
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
            "selector": {"app": "geocoder"},
        },
    }
    svc = kit.service(
        "geo",
        "geocoder",
        created,
        {"app": "geocoder"},
        [("http", 80, "http")],
        cluster_ip=GEO_IP,
        extra_spec=spec_extra,
        annotations={
            "brambleway.io/owner": "geo-platform",
            "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                applied, separators=(",", ":")
            )
            + "\n",
        },
    )
    sc.add(
        svc,
        kit.endpoints("geo", "geocoder", created, geo.pods, [("http", 8000)], {"app": "geocoder"}),
    )
    for p in geo.pods:
        pn = p["metadata"]["name"]
        fleet.container_metrics(
            sc,
            "geo",
            pn,
            "geocoder",
            times,
            mem=lambda i: 1630 * MiB + (i % 9) * 2 * MiB,
            cpu=lambda i: 0.62 if i < change_i else 0.34,
            mem_limit=3072 * MiB,
            cpu_limit=None,
            node_name=p["spec"]["nodeName"],
            rng=rng,
        )
        fleet.requests(
            sc,
            "http_requests_total",
            {"namespace": "geo", "pod": pn, "service": "geocoder", "handler": "/v2/geocode"},
            times,
            rate=lambda i: 74.0 if i < change_i else 37.0,
            err=lambda i: 0.0002,
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": "geo", "pod": pn, "service": "geocoder"},
            times,
            [74.0 * 60 if i < change_i else 37.0 * 60 for i in range(len(times))],
            lambda i: 0.009,
            BUCKETS,
        )
    tc = kit.container(
        "tile-server", "brambleway.azurecr.io/geo/tile-server:2.0.9", port=8080, mem_lim="2Gi"
    )
    fleet.app(
        sc,
        rng,
        "geo",
        "tile-server",
        [tc],
        nodes[1:4],
        replicas=2,
        created=created,
        rolled=NOW - timedelta(days=5),
        revision=9,
    )

    # --- dispatch-api (caller) ---
    dc = kit.container(
        "dispatch-api",
        "brambleway.azurecr.io/fleet/dispatch-api:12.4.1",
        port=3000,
        cpu_req="500m",
        mem_req="512Mi",
        cpu_lim="2",
        mem_lim="1Gi",
        readiness=kit.http_probe("/health"),
        env={
            "NODE_ENV": "production",
            "GEOCODER_URL": "http://geocoder.geo.svc.cluster.local",
            "GEOCODER_TIMEOUT_MS": "5000",
            "UV_THREADPOOL_SIZE": "16",
        },
    )
    placement = [nodes[0], nodes[1], nodes[2], nodes[3], nodes[5], nodes[2]]
    d = fleet.app(
        sc,
        rng,
        "fleet",
        "dispatch-api",
        [dc],
        placement,
        replicas=6,
        created=created,
        rolled=NOW - timedelta(days=2, hours=1),
        revision=57,
        port=3000,
    )
    last = d.pods[-1]
    last["metadata"]["creationTimestamp"] = kit.ts(RECREATED)
    last["status"]["startTime"] = kit.ts(RECREATED + timedelta(seconds=1))
    last["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = kit.ts(
        RECREATED + timedelta(seconds=4)
    )
    for c in last["status"]["conditions"]:
        c["lastTransitionTime"] = kit.ts(RECREATED + timedelta(seconds=9))
    gone = f"dispatch-api-{d.rs[-1]['metadata']['labels']['pod-template-hash']}-{kit.suffix(rng)}"
    sc.add(
        kit.event(
            "fleet",
            "Pod",
            last["metadata"]["name"],
            "Scheduled",
            f"Successfully assigned fleet/{last['metadata']['name']} to {nodes[2]}",
            RECREATED,
            RECREATED,
            component="default-scheduler",
        ),
        kit.event(
            "fleet",
            "Pod",
            last["metadata"]["name"],
            "Started",
            "Started container dispatch-api",
            RECREATED + timedelta(seconds=4),
            RECREATED + timedelta(seconds=4),
            host=nodes[2],
        ),
        kit.event(
            "fleet",
            "ReplicaSet",
            d.rs[-1]["metadata"]["name"],
            "SuccessfulCreate",
            f"Created pod: {last['metadata']['name']}",
            RECREATED,
            RECREATED,
            component="replicaset-controller",
        ),
    )
    recreated_i = next(i for i, t in enumerate(times) if t >= RECREATED.timestamp())
    geo_set = set(geo_nodes)
    runs = [
        (p["metadata"]["name"], p["spec"]["nodeName"], 0, len(times), k)
        for k, p in enumerate(d.pods[:-1])
    ]
    runs += [
        (gone, nodes[6], 0, recreated_i, 5),
        (last["metadata"]["name"], nodes[2], recreated_i, len(times), 5),
    ]
    for pn, node_name, lo, hi, _k in runs:
        local = node_name in geo_set
        span = times[lo:hi]

        def broken(j: int, local: bool = local, lo: int = lo) -> bool:
            return j + lo >= change_i and not local

        fleet.container_metrics(
            sc,
            "fleet",
            pn,
            "dispatch-api",
            span,
            mem=lambda i: 410 * MiB + (i % 11) * MiB,
            cpu=lambda i: 0.3,
            mem_limit=1024 * MiB,
            cpu_limit=2.0,
            throttle=lambda i: 0.0,
            node_name=node_name,
            rng=rng,
        )
        fleet.requests(
            sc,
            "http_requests_total",
            {"namespace": "fleet", "pod": pn, "service": "dispatch-api"},
            span,
            rate=lambda i: 41.0,
            err=lambda i, b=broken: 0.62 if b(i) else 0.001,
            codes=("200", "502"),
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": "fleet", "pod": pn, "service": "dispatch-api"},
            span,
            [41.0 * 60] * len(span),
            lambda i, b=broken: 1.9 if b(i) else 0.035,
            BUCKETS,
        )
        _dispatch_docs(sc, rng, pn, span, broken, write_pod_log=pn != gone)
    for name, image in (
        ("driver-bff", "brambleway.azurecr.io/fleet/driver-bff:3.3.0"),
        ("telematics-ingest", "brambleway.azurecr.io/fleet/telematics-ingest:0.19.2"),
    ):
        c = kit.container(name, image, port=8080, readiness=kit.http_probe("/ready"))
        w = fleet.app(
            sc,
            rng,
            "fleet",
            name,
            [c],
            nodes[3:] + nodes[:3],
            replicas=3,
            created=created,
            rolled=NOW - timedelta(days=rng.randint(1, 6)),
            revision=rng.randint(10, 70),
        )
        for p in w.pods:
            fleet.container_metrics(
                sc,
                "fleet",
                p["metadata"]["name"],
                name,
                times,
                mem=lambda i: 300 * MiB,
                cpu=lambda i: 0.2,
                mem_limit=512 * MiB,
                cpu_limit=None,
                rng=rng,
            )
        if name == "telematics-ingest":
            sc.add(
                kit.event(
                    "fleet",
                    "Pod",
                    w.names[1],
                    "Unhealthy",
                    'Readiness probe failed: Get "http://10.52.7.33:8080/ready": context deadline '
                    "exceeded (Client.Timeout exceeded while awaiting headers)",
                    NOW - timedelta(minutes=47),
                    NOW - timedelta(minutes=47),
                    warning=True,
                    host=w.pods[1]["spec"]["nodeName"],
                )
            )
    return sc


def _dispatch_docs(
    sc: Scenario, rng: random.Random, pn: str, times: list[int], broken: object, write_pod_log: bool
) -> None:
    assert callable(broken)
    for i in range(max(0, len(times) - 120), len(times)):
        base = kit.datetime.fromtimestamp(times[i], kit.UTC)
        for _ in range(3):
            t = base + timedelta(seconds=rng.randint(0, 59), milliseconds=rng.randint(0, 999))
            quote = f"q_{rng.getrandbits(40):010x}"
            if broken(i) and rng.random() < 0.6:
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "error",
                        f"route quote failed: geocode lookup failed: connect ETIMEDOUT {GEO_IP}:80",
                        "dispatch-api",
                        "fleet",
                        pn,
                        "dispatch-api",
                        **{
                            "error.type": "ETIMEDOUT",
                            "error.message": f"connect ETIMEDOUT {GEO_IP}:80",
                            "http.response.status_code": 502,
                            "url.path": "/v1/quotes",
                            "event.duration": 5003000000,
                            "quote.id": quote,
                            "host.hostname": pn,
                        },
                    )
                )
            else:
                sc.docs.append(
                    kit.logdoc(
                        t,
                        "info",
                        f"route quote ok eta={rng.randint(4, 55)}m stops={rng.randint(1, 9)}",
                        "dispatch-api",
                        "fleet",
                        pn,
                        "dispatch-api",
                        **{
                            "http.response.status_code": 200,
                            "url.path": "/v1/quotes",
                            "event.duration": rng.randint(18, 60) * 1000000,
                            "quote.id": quote,
                        },
                    )
                )
        if rng.random() < 0.03:
            sc.docs.append(
                kit.logdoc(
                    base,
                    "warn",
                    "slow event loop lag=142ms",
                    "dispatch-api",
                    "fleet",
                    pn,
                    "dispatch-api",
                )
            )
    if not write_pod_log:
        return
    lines = []
    for i in range(max(0, len(times) - 40), len(times)):
        base = kit.datetime.fromtimestamp(times[i], kit.UTC)
        ms = int(base.timestamp() * 1000)
        if broken(i):
            lines.append(
                json.dumps(
                    {
                        "level": 50,
                        "time": ms + rng.randint(0, 59000),
                        "pid": 1,
                        "hostname": pn,
                        "msg": "route quote failed: geocode lookup failed",
                        "err": {
                            "type": "Error",
                            "message": f"connect ETIMEDOUT {GEO_IP}:80",
                            "code": "ETIMEDOUT",
                            "errno": -110,
                            "syscall": "connect",
                            "address": GEO_IP,
                            "port": 80,
                        },
                    }
                )
            )
        lines.append(
            json.dumps(
                {
                    "level": 30,
                    "time": ms + 59000,
                    "pid": 1,
                    "hostname": pn,
                    "msg": f"route quote ok eta={rng.randint(4, 55)}m",
                    "req": {"method": "POST", "url": "/v1/quotes"},
                    "responseTime": rng.randint(18, 60),
                }
            )
        )
    sc.log("fleet", pn, "dispatch-api", lines)


STORIES = {"dispatch-geo-timeouts": build}
