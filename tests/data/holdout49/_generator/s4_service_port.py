"""4. network: a chart upgrade moved Service search-api from port 80 to 8080; callers still dial
:80."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    configmap,
    cumulate,
    env,
    event,
    http_probe,
    meta,
    namespace,
    parse,
    pod,
    pod_start_events,
    resources,
    rollout_events,
    smooth,
    sport,
    std_nodes,
    times,
    ts_dt,
)

SID = "search-service-port-moved"


def build() -> Scenario:
    rng = random.Random(4904)
    now = parse("2026-12-12T16:05:00Z")
    sc = Scenario(
        id=SID,
        title="Storefront search answers 502 after the search-api chart upgrade",
        now=now,
        report=(
            "search on the shop is down since ~15:25, storefront returns 502 on every /search. "
            "search-api pods are all Running and Ready. the search team upgraded their helm "
            "chart around then, so probably the new search-api version is broken? or opensearch "
            "is yellow again\n"
        ),
        truth={
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "search", "name": "search-api"},
            "evidence": [
                "port: 8080",
                "connect ECONNREFUSED 172.20.88.41:80",
                "search-api.search.svc.cluster.local:80",
                "helm.sh/chart: search-api-3.0.0",
            ],
            "fix": (
                "Put port 80 back on Service search-api (port: 80, targetPort: http) or add it "
                "next to 8080, or move every caller to :8080 before dropping 80."
            ),
        },
    )
    nodes_objs, nodes = std_nodes(
        "10.12.40", [31, 96, 140, 187, 222], "eu-west-1", now, cpu="8", memory_ki=32386544
    )
    sc.add(*nodes_objs)
    for ns in ("search", "web", "batch"):
        sc.add(namespace(ns, now - timedelta(days=420)))
    upg = now - timedelta(minutes=41)

    helm = {
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/name": "search-api",
        "app.kubernetes.io/instance": "search-api",
        "app.kubernetes.io/version": "3.0.0",
        "helm.sh/chart": "search-api-3.0.0",
    }
    helm_ann = {
        "meta.helm.sh/release-name": "search-api",
        "meta.helm.sh/release-namespace": "search",
    }
    sa_c = Container(
        "search-api",
        "ghcr.io/pallas-retail/search-api:3.0.0",
        ports=[
            {"containerPort": 8080, "name": "http", "protocol": "TCP"},
            {"containerPort": 9100, "name": "metrics", "protocol": "TCP"},
        ],
        env=env(
            OPENSEARCH_URL="https://search-cluster.search.svc:9200",
            HTTP_PORT="8080",
            INDEX_ALIAS="products-live",
        ),
        resources=resources("500m", "768Mi", None, "1Gi"),
        readiness=http_probe("/health/ready", "http"),
        liveness=http_probe("/health/live", "http", period=20),
    )
    sa = app(
        rng,
        "search-api",
        "search",
        [sa_c],
        created=now - timedelta(days=420),
        rs_created=upg,
        replicas=3,
        nodes=nodes,
        pod_cidr="10.12.41",
        revision=15,
        labels=helm,
        old_rs=[("7c6b5d9f48", now - timedelta(days=23), 14)],
        annotations={
            "checksum/config": "5c1f0e9a7d2b4c68e13b0f8a9d7e6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a190817"
        },
        deploy_annotations=helm_ann,
    )
    # the Service as the chart renders it now: port 8080 only
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta("search-api", "search", now - timedelta(days=420), helm, helm_ann),
        "spec": {
            "clusterIP": "172.20.88.41",
            "clusterIPs": ["172.20.88.41"],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "selector": {
                "app.kubernetes.io/instance": "search-api",
                "app.kubernetes.io/name": "search-api",
            },
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    }
    ep = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta("search-api", "search", now - timedelta(days=420), helm),
        "subsets": [
            {
                "addresses": [
                    {
                        "ip": p["status"]["podIP"],
                        "nodeName": p["spec"]["nodeName"],
                        "targetRef": {
                            "kind": "Pod",
                            "name": p["metadata"]["name"],
                            "namespace": "search",
                        },
                    }
                    for p in sa.pods
                ],
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            }
        ],
    }
    sc.add(*sa.objects, svc, ep)
    sc.add(
        configmap(
            "search-api",
            "search",
            upg - timedelta(seconds=5),
            {
                "config.yaml": "server:\n  port: 8080\nopensearch:\n"
                "  index_alias: products-live\n  timeout: 2s\nranking:\n  boost_in_stock: 1.4\n"
            },
            labels=helm,
        )
    )
    sc.add(
        *rollout_events(
            "search",
            "search-api",
            sa.rs[-1]["metadata"]["name"],
            "search-api-7c6b5d9f48",
            3,
            upg,
            step=timedelta(seconds=30),
        )
    )
    for p in sa.pods:
        sc.add(*pod_start_events(p, sa_c.image, "search-api"))
    # opensearch (decoy: yellow health)
    os_c = Container(
        "opensearch",
        "docker.io/opensearchproject/opensearch:2.17.1",
        ports=[{"containerPort": 9200, "name": "http", "protocol": "TCP"}],
        resources=resources("2", "8Gi", None, "8Gi"),
    )
    osa = app(
        rng,
        "search-cluster",
        "search",
        [os_c],
        created=now - timedelta(days=420),
        rs_created=now - timedelta(days=5, hours=9),
        replicas=2,
        nodes=nodes[3:],
        pod_cidr="10.12.42",
        revision=9,
        svc_ports=[sport(9200, "http")],
    )
    sc.add(*osa.objects)

    # ---------------------------------------------------------------- callers in web
    sw_c = Container(
        "storefront",
        "ghcr.io/pallas-retail/storefront:2026.12.11-2",
        ports=[{"containerPort": 3000, "name": "http", "protocol": "TCP"}],
        env=[
            {
                "name": "SEARCH_API_URL",
                "valueFrom": {
                    "configMapKeyRef": {"name": "storefront-env", "key": "SEARCH_API_URL"}
                },
            },
            {"name": "NODE_ENV", "value": "production"},
        ],
        resources=resources("250m", "512Mi", None, "1Gi"),
        readiness=http_probe("/api/healthz", "http"),
    )
    swa = app(
        rng,
        "storefront",
        "web",
        [sw_c],
        created=now - timedelta(days=420),
        rs_created=now - timedelta(days=1, hours=3),
        replicas=3,
        nodes=nodes,
        pod_cidr="10.12.43",
        revision=212,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*swa.objects)
    sc.add(
        configmap(
            "storefront-env",
            "web",
            now - timedelta(days=90),
            {
                "SEARCH_API_URL": "http://search-api.search.svc.cluster.local",
                "CART_API_URL": "http://cart.web.svc.cluster.local",
                "RECS_API_URL": "http://recommendations.web.svc.cluster.local",
            },
        )
    )
    rc_c = Container(
        "recommendations",
        "ghcr.io/pallas-retail/recommendations:0.44.0",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(SEARCH_ADDR="search-api.search.svc.cluster.local:80", CACHE_TTL="10m"),
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "http"),
    )
    rca = app(
        rng,
        "recommendations",
        "web",
        [rc_c],
        created=now - timedelta(days=300),
        rs_created=now - timedelta(days=3),
        replicas=2,
        nodes=nodes[1:],
        pod_cidr="10.12.43",
        revision=31,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*rca.objects)
    cart_c = Container(
        "cart",
        "ghcr.io/pallas-retail/cart:4.1.7",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "http"),
    )
    cta = app(
        rng,
        "cart",
        "web",
        [cart_c],
        created=now - timedelta(days=300),
        rs_created=now - timedelta(days=4),
        replicas=2,
        nodes=nodes,
        pod_cidr="10.12.43",
        revision=19,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*cta.objects)

    # ---------------------------------------------------------------- batch: a Pending pod (decoy)
    job_created = now - timedelta(minutes=26)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(
            "catalog-reindex-29420160",
            "batch",
            job_created,
            {"app": "catalog-reindex"},
            owner={
                "apiVersion": "batch/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "CronJob",
                "name": "catalog-reindex",
            },
        ),
        "spec": {
            "backoffLimit": 2,
            "completions": 1,
            "parallelism": 1,
            "template": {
                "metadata": {"labels": {"app": "catalog-reindex"}},
                "spec": {
                    "containers": [
                        {
                            "name": "reindex",
                            "image": "ghcr.io/pallas-retail/catalog-tools:1.8.0",
                            "args": ["reindex", "--full"],
                            "resources": {
                                "requests": {"cpu": "4", "memory": "24Gi"},
                                "limits": {"memory": "24Gi"},
                            },
                        }
                    ],
                    "restartPolicy": "Never",
                },
            },
        },
        "status": {
            "active": 1,
            "ready": 0,
            "startTime": "2026-12-12T15:39:00Z",
            "uncountedTerminatedPods": {},
        },
    }
    rj = Container(
        "reindex",
        "ghcr.io/pallas-retail/catalog-tools:1.8.0",
        args=["reindex", "--full"],
        resources={"requests": {"cpu": "4", "memory": "24Gi"}, "limits": {"memory": "24Gi"}},
    )
    from ._kit import template

    jt = template(
        {"app": "catalog-reindex", "batch.kubernetes.io/job-name": "catalog-reindex-29420160"}, [rj]
    )
    jt["spec"]["restartPolicy"] = "Never"
    msg = (
        "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are available: "
        "5 No preemption victims found for incoming pod."
    )
    jp = pod(
        "catalog-reindex-29420160-8kq2t",
        "batch",
        "Job",
        "catalog-reindex-29420160",
        jt,
        job_created,
        node_name=None,
        pod_ip=None,
        host_ip=None,
        statuses=None,
        phase="Pending",
        conditions=[
            {
                "lastProbeTime": None,
                "lastTransitionTime": "2026-12-12T15:39:00Z",
                "message": msg,
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }
        ],
    )
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta(
                "catalog-reindex", "batch", now - timedelta(days=200), {"app": "catalog-reindex"}
            ),
            "spec": {
                "concurrencyPolicy": "Forbid",
                "schedule": "0 */8 * * *",
                "jobTemplate": {"spec": job["spec"]},
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "suspend": False,
            },
            "status": {
                "active": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": job["metadata"]["name"],
                        "namespace": "batch",
                    }
                ],
                "lastScheduleTime": "2026-12-12T15:39:00Z",
                "lastSuccessfulTime": "2026-12-12T08:51:17Z",
            },
        },
        job,
        jp,
    )
    sc.add(
        event(
            "batch",
            "Pod",
            jp["metadata"]["name"],
            "FailedScheduling",
            msg,
            job_created,
            now - timedelta(minutes=2),
            count=9,
            type_="Warning",
            component="default-scheduler",
        ),
        event(
            "batch",
            "Job",
            job["metadata"]["name"],
            "SuccessfulCreate",
            f"Created pod: {jp['metadata']['name']}",
            job_created,
            job_created,
            component="job-controller",
            api_version="batch/v1",
        ),
        event(
            "batch",
            "CronJob",
            "catalog-reindex",
            "SuccessfulCreate",
            f"Created job {job['metadata']['name']}",
            job_created,
            job_created,
            component="cronjob-controller",
            api_version="batch/v1",
        ),
    )

    # ---------------------------------------------------------------- metrics
    ts = times(now, 3)
    m = sc.metrics
    cut = int(upg.timestamp()) + 60

    def brk(t: int) -> float:
        return smooth(t, cut - 60, cut, 0.0, 1.0)

    m.counter(
        "http_requests",
        "Requests handled.",
        {"namespace": "web", "service": "storefront", "route": "/search", "code": "200"},
        cumulate(ts, lambda t: 31.0 * (1 - brk(t)) + 0.0, start=4.4e6),
    )
    m.counter(
        "http_requests",
        "Requests handled.",
        {"namespace": "web", "service": "storefront", "route": "/search", "code": "502"},
        cumulate(ts, lambda t: 31.0 * brk(t) + 0.002, start=211),
    )
    m.counter(
        "http_requests",
        "Requests handled.",
        {"namespace": "web", "service": "storefront", "route": "/cart", "code": "200"},
        cumulate(ts, lambda t: 12.0, start=1.9e6),
    )
    for p in sa.pods:
        pn = p["metadata"]["name"]
        t0 = int(parse(p["metadata"]["creationTimestamp"]).timestamp()) + 60
        pts = [t for t in ts if t >= t0]
        m.counter(
            "http_requests",
            "Requests handled.",
            {
                "namespace": "search",
                "service": "search-api",
                "pod": pn,
                "route": "/v1/search",
                "code": "200",
            },
            cumulate(pts, lambda t: 0.0),
        )
        m.counter(
            "http_requests",
            "Requests handled.",
            {
                "namespace": "search",
                "service": "search-api",
                "pod": pn,
                "route": "/health/ready",
                "code": "200",
            },
            cumulate(pts, lambda t: 0.1),
        )
    for pn in [f"search-api-7c6b5d9f48-{x}" for x in ("4ghkd", "q7wst", "xz5lp")]:
        pts = [t for t in ts if t <= cut]
        m.counter(
            "http_requests",
            "Requests handled.",
            {
                "namespace": "search",
                "service": "search-api",
                "pod": pn,
                "route": "/v1/search",
                "code": "200",
            },
            cumulate(pts, lambda t: 14.2, start=2.9e6),
        )
    for pn in sa.pod_names + osa.pod_names:
        m.gauge(
            "kube_pod_status_ready",
            "Describes whether the pod is ready to serve requests.",
            {"namespace": "search", "pod": pn, "condition": "true"},
            [(t, 1) for t in ts[::3] if t > cut],
        )
    m.gauge(
        "opensearch_cluster_status",
        "Cluster health status (0 green, 1 yellow, 2 red)",
        {"namespace": "search", "cluster": "search-cluster"},
        [(t, 1 if t > ts[40] else 0) for t in ts[::2]],
    )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    for p in swa.pods:
        pn = p["metadata"]["name"]
        lines = []
        t = cut - 30
        while t < ts[-1]:
            for _ in range(2):
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                q = rng.choice(
                    ["rain jacket", "usb-c hub", "espresso beans", "trail shoes", "desk lamp"]
                )
                msg = (
                    "search proxy error: connect ECONNREFUSED 172.20.88.41:80 (GET "
                    "http://search-api.search.svc.cluster.local/v1/"
                    f"search?q={q.replace(' ', '+')})"
                )
                L.add(
                    at,
                    "storefront",
                    "web",
                    pn,
                    "storefront",
                    "error",
                    msg,
                    **{
                        "error.type": "Error",
                        "error.code": "ECONNREFUSED",
                        "http.response.status_code": 502,
                        "url.path": "/search",
                    },
                )
                if at > now - timedelta(minutes=10):
                    lines.append(
                        f'{{"level":50,"time":{int(at.timestamp() * 1000)},"pid":1,'
                        f'"hostname":"{pn}","err":{{"type":"Error",'
                        '"message":"connect ECONNREFUSED '
                        '172.20.88.41:80","code":"ECONNREFUSED","errno":-111,'
                        '"syscall":"connect","address":"172.20.88.41","port":80},'
                        '"msg":"search proxy error"}'
                    )
                    lines.append(
                        f'{{"level":30,"time":{int(at.timestamp() * 1000) + 2},"pid":1,'
                        f'"hostname":"{pn}","req":{{"method":"GET","url":"/'
                        f'search?q={q.replace(" ", "+")}"}},"res":{{"statusCode":502}},'
                        '"responseTime":3,"msg":"request completed"}'
                    )
            t += 60
        sc.pod_log("web", pn, "storefront", lines)
    for p in rca.pods:
        pn = p["metadata"]["name"]
        t = cut
        while t < ts[-1]:
            if rng.random() < 0.5:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "recommendations",
                    "web",
                    pn,
                    "recommendations",
                    "error",
                    'similar-items lookup failed: Get "http://search-api.search.svc.cluster.local:80/v1/similar?sku='
                    + f'{rng.randint(100000, 999999)}": dial tcp 172.20.88.41:80: connect: '
                    "connection refused; serving cached list",
                )
            t += 60
    for p in sa.pods:
        pn = p["metadata"]["name"]
        st = parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=3)
        lines = []
        for k, (lvl, msg) in enumerate(
            [
                ("info", "search-api 3.0.0 starting"),
                ("info", "config loaded from /etc/search-api/config.yaml"),
                ("warn", "opensearch cluster health is yellow (unassigned_shards=2), continuing"),
                ("info", "index alias products-live -> products-20261212-0300 (2,418,551 docs)"),
                ("info", "HTTP server listening on 0.0.0.0:8080"),
            ]
        ):
            L.add(st + timedelta(seconds=k), "search-api", "search", pn, "search-api", lvl, msg)
            lines.append(
                f"{(st + timedelta(seconds=k)).isoformat().replace('+00:00', 'Z')} "
                f"{lvl.upper()} {msg}"
            )
        sc.pod_log("search", pn, "search-api", lines)
    for p in osa.pods:
        pn = p["metadata"]["name"]
        t = ts[40]
        while t < ts[-1]:
            if rng.random() < 0.15:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "search-cluster",
                    "search",
                    pn,
                    "opensearch",
                    "warn",
                    "[o.o.c.r.a.DiskThresholdMonitor] ["
                    + pn
                    + "] high disk watermark [90%] exceeded on "
                    "[Jx9y2Q] free: 9.8gb[9.6%], shards will be relocated away from this node",
                )
            t += 60
    return sc
