"""5. cpu_throttling: the node pool moved from 4-vCPU to 32-vCPU nodes; geo-router (Go, limit 2
CPUs, no GOMAXPROCS set) now runs 32 Ps inside a 2-CPU CFS quota and is throttled hard."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
    cumulate,
    endpoints,
    event,
    http_probe,
    iso_ms,
    namespace,
    node,
    noise,
    restarts_metric,
    service,
    steps,
    suffix,
    tmpl_hash,
)

SID = "gomaxprocs-bigger-nodes-throttling"

NOW = T("2026-11-17T11:30:00Z")
MOVE = T("2026-11-17T08:21:00Z")

OLD_CDF = [0.05, 0.22, 0.71, 0.985, 0.997, 0.9995, 1, 1, 1, 1]
NEW_CDF = [0.03, 0.14, 0.46, 0.70, 0.85, 0.947, 0.992, 0.999, 1, 1]
LES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]


def build():
    sc = Scenario(
        SID,
        "geo-router p99 latency up 8x since this morning",
        NOW,
        (
            "geo-router p99 went from ~50ms to 400ms+ this morning and the maps team is getting "
            "timeouts.\n"
            "nothing was deployed to geo-router. platform moved the general pool to the new "
            "c7i.8xlarge nodes\n"
            "overnight - I think we landed on noisy neighbours, or geo-redis got slower. what's "
            "going on?\n"
        ),
        {
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "routing", "name": "geo-router"},
            "evidence": [
                "container_cpu_cfs_throttled_periods_total",
                "go_sched_gomaxprocs_threads",
                "gomaxprocs=32 num_cpu=32",
                "c7i.8xlarge",
            ],
            "fix": "Set GOMAXPROCS to the CPU limit for geo-router (env GOMAXPROCS=2 from "
            "resources.limits.cpu via "
            "resourceFieldRef, or import go.uber.org/automaxprocs); optionally raise the limit. "
            "No node or "
            "redis change is needed.",
        },
        seed=4505,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=5)
    times = list(steps(start, NOW, 180))
    new_created = T("2026-11-17T07:58:40Z")
    new_nodes = [
        ("ip-10-40-12-143.eu-west-1.compute.internal", "10.40.12.143", "eu-west-1a"),
        ("ip-10-40-13-27.eu-west-1.compute.internal", "10.40.13.27", "eu-west-1b"),
        ("ip-10-40-14-250.eu-west-1.compute.internal", "10.40.14.250", "eu-west-1c"),
    ]
    old_nodes = [
        ("ip-10-40-12-9.eu-west-1.compute.internal", "10.40.12.9", "eu-west-1a"),
        ("ip-10-40-13-162.eu-west-1.compute.internal", "10.40.13.162", "eu-west-1b"),
        ("ip-10-40-14-71.eu-west-1.compute.internal", "10.40.14.71", "eu-west-1c"),
        ("ip-10-40-12-58.eu-west-1.compute.internal", "10.40.12.58", "eu-west-1a"),
    ]
    for i, (n, ip, z) in enumerate(new_nodes):
        sc.add(
            node(
                n,
                new_created + timedelta(minutes=2 * i),
                NOW,
                ip=ip,
                cpu=32,
                mem_gi=64,
                instance_type="c7i.8xlarge",
                zone=z,
                pool="general-c7i-2026b",
                pods=234,
            )
        )
    # one old node is left, cordoned: it still runs a pod pinned to the old instance family
    on, oip, oz = old_nodes[0]
    sc.add(
        node(
            on,
            T("2026-11-11T04:10:00Z"),
            NOW,
            ip=oip,
            cpu=4,
            mem_gi=16,
            instance_type="m6i.xlarge",
            zone=oz,
            pool="general-m6i-2026a",
            unschedulable=True,
            taints=[
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "effect": "NoSchedule",
                    "timeAdded": "2026-11-17T08:05:12Z",
                }
            ],
        )
    )
    for ns in ("routing", "maps", "kube-system", "monitoring"):
        sc.add(namespace(ns, T("2025-05-12T09:00:00Z")))
    NN = {i: (new_nodes[i][0], new_nodes[i][1]) for i in range(3)}

    # --------------------------------------------------------- routing/geo-router
    gr_rs = T("2026-11-08T14:02:11Z")
    gr_c = [
        container(
            "geo-router",
            "registry.quillmark.io/routing/geo-router:3.4.2",
            cpu_req="1",
            mem_req="512Mi",
            cpu_lim="2",
            mem_lim="1Gi",
            ports=[("http", 8080), ("metrics", 9102)],
            env=[
                ("GEO_REDIS_ADDR", "geo-redis.routing.svc.cluster.local:6379"),
                ("GOGC", "100"),
                ("ROUTER_WORKERS", "auto"),
            ],
            readiness=http_probe("/readyz", 8080),
            liveness=http_probe("/healthz", 8080, period=15),
        )
    ]
    pcs = [MOVE + timedelta(seconds=40 * i) for i in range(4)]
    gr = Family(
        sc,
        "routing",
        "geo-router",
        containers=gr_c,
        replicas=4,
        placements=[
            (NN[i % 3][0], NN[i % 3][1], ip, pcs[i])
            for i, ip in enumerate(["10.40.12.171", "10.40.13.66", "10.40.14.12", "10.40.12.204"])
        ],
        created=T("2025-05-12T10:00:00Z"),
        rs_created=gr_rs,
        revision=31,
        old=[
            (
                30,
                {"geo-router": "registry.quillmark.io/routing/geo-router:3.4.1"},
                T("2026-10-28T09:40:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "geo-router 3.4.2"},
    )
    sc.add(
        service(
            "geo-router",
            "routing",
            created=T("2025-05-12T10:00:00Z"),
            selector={"app": "geo-router"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.101.9",
        )
    )
    sc.add(
        endpoints(
            "geo-router",
            "routing",
            created=T("2025-05-12T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in gr.pods
            ],
            ports=[("http", 8080)],
        )
    )
    # the replicas that ran on the old 4-vCPU nodes until the drain (deleted now; they appear in
    # metrics only)
    old_pods = [
        (f"{gr.rs_name}-{suffix('routing', 'geo-router', 'old', str(i))}", old_nodes[i][0])
        for i in range(4)
    ]
    old_end = [MOVE + timedelta(seconds=40 * i - 5) for i in range(4)]

    redis = Family(
        sc,
        "routing",
        "geo-redis",
        containers=[
            container(
                "redis",
                "redis:7.2.6-alpine",
                cpu_req="500m",
                mem_req="2Gi",
                cpu_lim="1",
                mem_lim="2Gi",
                ports=[("redis", 6379)],
            ),
            container(
                "redis-exporter",
                "oliver006/redis_exporter:v1.66.0",
                cpu_req="10m",
                mem_req="32Mi",
                ports=[("metrics", 9121)],
            ),
        ],
        replicas=1,
        placements=[(NN[1][0], NN[1][1], "10.40.13.201", MOVE - timedelta(minutes=7))],
        created=T("2025-05-12T10:00:00Z"),
        rs_created=T("2026-09-02T10:00:00Z"),
        revision=3,
    )
    sc.add(
        service(
            "geo-redis",
            "routing",
            created=T("2025-05-12T10:00:00Z"),
            selector={"app": "geo-redis"},
            ports=[("redis", 6379, 6379)],
            cluster_ip="172.20.101.40",
        )
    )

    # --------------------------------------------------------- maps
    tc_rs = T("2026-11-17T10:41:05Z")
    tc = Family(
        sc,
        "maps",
        "tile-cache",
        containers=[
            container(
                "tile-cache",
                "registry.quillmark.io/maps/tile-cache:1.12.0",
                cpu_req="500m",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
                ports=[("http", 8080)],
                readiness=http_probe("/ready", 8080),
            )
        ],
        replicas=3,
        placements=[
            (NN[i][0], NN[i][1], ip, tc_rs + timedelta(seconds=30 * i))
            for i, ip in enumerate(["10.40.12.99", "10.40.13.140", "10.40.14.200"])
        ],
        created=T("2025-06-01T10:00:00Z"),
        rs_created=tc_rs,
        revision=22,
        old=[
            (
                21,
                {"tile-cache": "registry.quillmark.io/maps/tile-cache:1.11.3"},
                T("2026-11-02T10:00:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "tile-cache 1.12.0: webp tiles"},
    )
    Family(
        sc,
        "maps",
        "maps-web",
        containers=[
            container(
                "maps-web",
                "registry.quillmark.io/maps/maps-web:2026.11.4",
                cpu_req="250m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 3000)],
            )
        ],
        replicas=2,
        placements=[
            (NN[0][0], NN[0][1], "10.40.12.120", MOVE + timedelta(minutes=3)),
            (NN[2][0], NN[2][1], "10.40.14.130", MOVE + timedelta(minutes=4)),
        ],
        created=T("2025-06-01T10:00:00Z"),
        rs_created=T("2026-11-12T10:00:00Z"),
        revision=40,
    )
    lg_ = Family(
        sc,
        "maps",
        "legacy-geocoder",
        containers=[
            container(
                "legacy-geocoder",
                "registry.quillmark.io/maps/legacy-geocoder:0.19.1",
                cpu_req="500m",
                mem_req="1Gi",
                cpu_lim="1",
                mem_lim="2Gi",
                liveness={
                    "exec": {"command": ["/usr/local/bin/geocoder-health"]},
                    "periodSeconds": 30,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
            )
        ],
        replicas=1,
        placements=[(on, oip, "10.40.12.31", T("2026-11-11T04:30:00Z"))],
        created=T("2024-11-20T10:00:00Z"),
        rs_created=T("2025-10-10T10:00:00Z"),
        revision=9,
        node_selector={"node.kubernetes.io/instance-type": "m6i.xlarge"},
    )
    Family(
        sc,
        "kube-system",
        "coredns",
        containers=[
            container(
                "coredns",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
                cpu_req="100m",
                mem_req="70Mi",
                mem_lim="170Mi",
                ports=[("dns", 53)],
            )
        ],
        replicas=2,
        placements=[
            (NN[0][0], NN[0][1], "10.40.12.150", MOVE - timedelta(minutes=12)),
            (NN[2][0], NN[2][1], "10.40.14.150", MOVE - timedelta(minutes=10)),
        ],
        created=T("2025-05-12T08:00:00Z"),
        rs_created=T("2026-08-12T08:00:00Z"),
        revision=5,
        labels={"k8s-app": "kube-dns"},
    )

    # --------------------------------------------------------- events (only the last hour survives)
    sc.add(
        event(
            "maps",
            kind="Deployment",
            name="tile-cache",
            api="apps/v1",
            reason="ScalingReplicaSet",
            message=f"Scaled up replica set {tc.rs_name} to 1",
            first=tc_rs,
            last=tc_rs,
            component="deployment-controller",
        )
    )
    sc.add(
        event(
            "maps",
            kind="Deployment",
            name="tile-cache",
            api="apps/v1",
            reason="ScalingReplicaSet",
            message=(
                f"Scaled down replica set tile-cache-{tmpl_hash('maps', 'tile-cache', '21')} to 0 "
                "from 1"
            ),
            first=tc_rs + timedelta(seconds=75),
            last=tc_rs + timedelta(seconds=75),
            component="deployment-controller",
        )
    )
    sc.add(
        event(
            "maps",
            kind="Pod",
            name=lg_.pods[0]["metadata"]["name"],
            reason="Unhealthy",
            message="Liveness probe failed: command timed out",
            first=NOW - timedelta(minutes=22),
            last=NOW - timedelta(minutes=22),
            type_="Warning",
            host=on,
            field_path="spec.containers{legacy-geocoder}",
        )
    )

    # --------------------------------------------------------- logs
    def jl(pod_name, container_, t, level, msg, svc, ns="routing", **kw):
        sc.log(
            t,
            ns=ns,
            pod=pod_name,
            container=container_,
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    for i, p in enumerate(gr.pods):
        t0 = pcs[i] + timedelta(seconds=3)
        lines = [
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(t0),
                    "msg": "starting geo-router",
                    "version": "3.4.2",
                    "go": "go1.22.8",
                    "gomaxprocs": 32,
                    "num_cpu": 32,
                }
            ),
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(t0 + timedelta(milliseconds=5)),
                    "msg": "route workers started",
                    "workers": 32,
                    "source": "ROUTER_WORKERS=auto (runtime.GOMAXPROCS)",
                }
            ),
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(t0 + timedelta(milliseconds=140)),
                    "msg": "connected to redis",
                    "addr": "geo-redis.routing.svc.cluster.local:6379",
                }
            ),
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(t0 + timedelta(milliseconds=900)),
                    "msg": "graph loaded",
                    "nodes": 18422113,
                    "edges": 40117220,
                }
            ),
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(t0 + timedelta(seconds=1)),
                    "msg": "http server listening",
                    "addr": ":8080",
                }
            ),
        ]
        for ln in lines:
            d = json.loads(ln)
            jl(
                p["metadata"]["name"],
                "geo-router",
                T(d["ts"][:19] + "Z"),
                "info",
                d["msg"]
                + (" gomaxprocs=32 num_cpu=32" if d["msg"] == "starting geo-router" else ""),
                "geo-router",
            )
        slow = []
        for t in steps(pcs[i] + timedelta(minutes=2), NOW, 45):
            if rng.random() < 0.6:
                ms = rng.randint(260, 1900)
                ln = json.dumps(
                    {
                        "level": "warn",
                        "ts": iso_ms(t),
                        "msg": "slow request",
                        "path": "/v1/route",
                        "duration_ms": ms,
                        "legs": rng.randint(2, 9),
                    }
                )
                slow.append(ln)
                jl(
                    p["metadata"]["name"],
                    "geo-router",
                    t,
                    "warn",
                    f"slow request path=/v1/route duration_ms={ms}",
                    "geo-router",
                )
        sc.pod_log("routing", p["metadata"]["name"], "geo-router", lines + slow)
    for i, (pn, _nd) in enumerate(old_pods):
        for t in steps(start, old_end[i], 900):
            if rng.random() < 0.3:
                jl(
                    pn,
                    "geo-router",
                    t,
                    "warn",
                    f"slow request path=/v1/route duration_ms={rng.randint(210, 260)}",
                    "geo-router",
                )
        jl(
            pn,
            "geo-router",
            old_end[i] - timedelta(seconds=1),
            "info",
            "received SIGTERM, draining connections",
            "geo-router",
        )
    for t in steps(start, NOW, 300):
        jl(
            redis.pods[0]["metadata"]["name"],
            "redis",
            t,
            "info",
            f"1:M {t.strftime('%d %b %Y %H:%M:%S')}.{rng.randint(100, 999)} * 100 changes in 300 "
            "seconds. Saving...",
            "geo-redis",
        )
    for t in steps(tc_rs + timedelta(minutes=1), NOW, 240):
        jl(
            tc.pods[rng.randrange(3)]["metadata"]["name"],
            "tile-cache",
            t,
            "warn",
            "webp encoder fallback to png for tile z=3 (alpha channel)",
            "tile-cache",
            ns="maps",
        )

    # --------------------------------------------------------- metrics
    series = []  # (pod, node, t_from, t_to, gomaxprocs)
    for i, (pn, nd) in enumerate(old_pods):
        series.append((pn, nd, start, old_end[i], 4))
    for i, p in enumerate(gr.pods):
        series.append((p["metadata"]["name"], p["spec"]["nodeName"], pcs[i], NOW, 32))

    def window(a, b):
        return [t for t in times if a <= t <= b]

    for pn, nd, a, b, gmp in series:
        ts = window(a, b)
        lab = {"namespace": "routing", "pod": pn, "container": "geo-router", "node": nd}
        thr = 0.04 if gmp == 4 else 0.68
        sc.metrics.counter(
            "container_cpu_cfs_periods",
            "Number of elapsed enforcement period intervals.",
            lab,
            cumulate(ts, lambda t: 10.0, start_value=1.9e6 if gmp == 4 else 0),
        )
        sc.metrics.counter(
            "container_cpu_cfs_throttled_periods",
            "Number of throttled period intervals.",
            lab,
            cumulate(
                ts,
                lambda t, thr=thr: 10.0 * noise(rng, thr, 0.06),
                start_value=7.4e4 if gmp == 4 else 0,
            ),
        )
        sc.metrics.counter(
            "container_cpu_cfs_throttled_seconds",
            "Total time duration the container has been throttled.",
            lab,
            cumulate(
                ts,
                lambda t, g=gmp: noise(rng, 0.09 if g == 4 else 7.9, 0.08),
                start_value=5.1e3 if gmp == 4 else 0,
            ),
        )
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            cumulate(
                ts,
                lambda t, g=gmp: (
                    noise(rng, 1.21, 0.05) if g == 4 else min(noise(rng, 1.96, 0.01), 2.0)
                ),
                start_value=6.2e5 if gmp == 4 else 0,
            ),
        )
        sc.metrics.gauge(
            "go_sched_gomaxprocs_threads",
            "The current runtime.GOMAXPROCS setting, or the number of operating system threads "
            "that can execute user-level Go code simultaneously. Sourced from "
            "/sched/gomaxprocs:threads.",
            {"namespace": "routing", "pod": pn, "job": "geo-router"},
            [(t, gmp) for t in ts],
        )
    for p in gr.pods:
        restarts_metric(sc, p, "geo-router", window(T(p["metadata"]["creationTimestamp"]), NOW))
    # request latency, service-wide
    pts = []
    cum = [0.0] * 10
    total = 0.0
    ssum = 0.0
    prev = None
    for t in times:
        if prev is not None:
            n = 4 * 118 * (t - prev).total_seconds()
            cdf = OLD_CDF if t < MOVE + timedelta(minutes=2) else NEW_CDF
            for k in range(10):
                cum[k] += n * cdf[k]
            total += n
            ssum += n * (0.019 if cdf is OLD_CDF else 0.071)
        prev = t
        pts.append(
            (
                t,
                {le: round(cum[k]) for k, le in enumerate([*LES, "+Inf"])},
                round(ssum, 3),
                round(total),
            )
        )
    sc.metrics.histogram(
        "http_request_duration_seconds",
        "Duration of HTTP requests.",
        {"namespace": "routing", "service": "geo-router", "handler": "/v1/route", "method": "GET"},
        LES,
        pts,
    )
    sc.metrics.histogram(
        "redis_command_call_duration_seconds",
        "Duration of redis commands issued by geo-router.",
        {"namespace": "routing", "service": "geo-router", "cmd": "get"},
        [0.0005, 0.001, 0.0025, 0.005, 0.01],
        [
            (
                t,
                {
                    0.0005: int(c * 0.41),
                    0.001: int(c * 0.88),
                    0.0025: int(c * 0.991),
                    0.005: int(c * 0.998),
                    0.01: c,
                    "+Inf": c,
                },
                round(c * 0.00072, 3),
                c,
            )
            for t, c in ((t, int(4 * 260 * (t - start).total_seconds())) for t in times)
        ],
    )
    for n, ip, _z in new_nodes:
        sc.metrics.gauge(
            "node_load1",
            "1m load average.",
            {"instance": f"{ip}:9100", "node": n},
            [
                (t, round(noise(rng, 5.8, 0.15), 2))
                for t in times
                if t >= new_created + timedelta(minutes=5)
            ],
        )
    for n, ip, _z in old_nodes:
        end = MOVE + timedelta(minutes=5) if n != on else NOW
        sc.metrics.gauge(
            "node_load1",
            "1m load average.",
            {"instance": f"{ip}:9100", "node": n},
            [(t, round(noise(rng, 2.1 if n != on else 0.4, 0.15), 2)) for t in times if t <= end],
        )
    return sc
