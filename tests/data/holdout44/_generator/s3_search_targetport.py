"""3. network: a Service's named targetPort no longer exists after a container port rename."""

from __future__ import annotations

import json
from datetime import timedelta

from . import _kit as k

SID = "search-named-port-gone"
NOW = "2026-12-09T16:05:00Z"
NS = "catalog"
IMG_NEW = "registry.quillmark.io/catalog/search-api:7.2.0"
IMG_OLD = "registry.quillmark.io/catalog/search-api:7.1.4"


def _search_template(port_name: str, image: str, chart: str) -> dict:
    c = k.container(
        "search-api",
        image,
        ports=[
            {"name": port_name, "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        env=[
            {"name": "OPENSEARCH_URL", "value": "https://search-os.catalog.svc:9200"},
            {"name": "LISTEN_ADDR", "value": "0.0.0.0:8080"},
        ],
        resources=k.res("500m", "512Mi", None, "1Gi"),
        readiness=k.http_probe("/ready", 8080, period=5),
        liveness=k.http_probe("/live", 8080, period=10, initial=15),
    )
    return k.template(
        {"app.kubernetes.io/name": "search-api", "app.kubernetes.io/part-of": "catalog"},
        [c],
        annotations={
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
            "checksum/chart": chart,
        },
    )


def build() -> None:
    s = k.Scn(SID, NOW, 4403)
    now = s.now
    grid = k.grid(s.ago(hours=3), now)
    old = s.ago(days=520)
    nodes = [
        k.node(
            "ip-10-52-6-120.us-east-2.compute.internal",
            "us-east-2a",
            s.ago(days=8),
            s.ago(seconds=18),
            region="us-east-2",
        ),
        k.node(
            "ip-10-52-22-14.us-east-2.compute.internal",
            "us-east-2b",
            s.ago(days=8),
            s.ago(seconds=6),
            region="us-east-2",
        ),
        k.node(
            "ip-10-52-41-77.us-east-2.compute.internal",
            "us-east-2c",
            s.ago(days=8),
            s.ago(seconds=27),
            region="us-east-2",
        ),
        k.node(
            "ip-10-52-11-9.us-east-2.compute.internal",
            "us-east-2a",
            s.ago(days=2),
            s.ago(seconds=2),
            region="us-east-2",
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "web", "ingress-nginx", "monitoring", "kube-system")))
    s.add(*nodes)

    # ---- search-api: chart 2.0.0 renamed the container port http -> api
    roll = s.ago(minutes=38, seconds=20)
    t_new = _search_template("api", IMG_NEW, "search-api-2.0.0")
    t_old = _search_template("http", IMG_OLD, "search-api-1.9.2")
    dep = k.deployment(
        "search-api",
        NS,
        s.ago(days=510),
        t_new,
        3,
        31,
        {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3},
        [],
        labels={
            "app.kubernetes.io/name": "search-api",
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": "search-api-2.0.0",
        },
        annotations={
            "meta.helm.sh/release-name": "search-api",
            "meta.helm.sh/release-namespace": NS,
        },
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    )
    hn, ho = s.rs_hash(), s.rs_hash()
    rs_new = k.replicaset(dep, hn, roll, 31, t_new, 3)
    rs_old = k.replicaset(dep, ho, s.ago(days=12), 30, t_old, 0)
    dep["status"]["conditions"] = k.dep_conditions(
        s.ago(days=6), roll + timedelta(seconds=95), rs_new["metadata"]["name"]
    )
    s.add(dep, rs_new, rs_old)
    pods = []
    c = t_new["spec"]["containers"][0]
    for i in range(3):
        pn = f"search-api-{hn}-{s.pod_suffix()}"
        created = roll + timedelta(seconds=2 + 31 * i)
        p = k.pod(
            s,
            rs_new,
            pn,
            nn[i],
            k.pod_ip(s, nn[i]),
            created,
            [k.cs_running(c, created + timedelta(seconds=3))],
            True,
            ready_since=created + timedelta(seconds=14),
        )
        pods.append(p)
        s.add(p)
    old_pods = [f"search-api-{ho}-{s.pod_suffix()}" for _ in range(3)]
    cutover = [roll + timedelta(seconds=2 + 31 * i + 16) for i in range(3)]  # old pod i removed

    svc = k.service(
        "search-api",
        NS,
        s.ago(days=510),
        {"app.kubernetes.io/name": "search-api"},
        [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
        "172.20.57.12",
        labels={"app.kubernetes.io/name": "search-api", "app.kubernetes.io/managed-by": "Helm"},
    )
    s.add(svc, k.endpoints("search-api", NS, s.ago(days=510), [], []))
    s.add(
        k.service(
            "search-api-metrics",
            NS,
            s.ago(days=300),
            {"app.kubernetes.io/name": "search-api"},
            [{"name": "metrics", "port": 9090, "protocol": "TCP", "targetPort": "metrics"}],
            "172.20.57.140",
            labels={"app.kubernetes.io/name": "search-api-metrics"},
        )
    )
    s.add(
        k.endpoints(
            "search-api-metrics",
            NS,
            s.ago(days=300),
            pods,
            [{"name": "metrics", "port": 9090, "protocol": "TCP"}],
        )
    )
    s.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": "search-api-ingress",
                "namespace": NS,
                "uid": k.uid("np", NS, "search-api-ingress"),
                "generation": 1,
                "creationTimestamp": k.ts(s.ago(hours=3, minutes=12)),
            },
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "search-api"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "web"}
                                }
                            },
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}
                                }
                            },
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                                }
                            },
                        ],
                        "ports": [
                            {"protocol": "TCP", "port": 8080},
                            {"protocol": "TCP", "port": 9090},
                        ],
                    }
                ],
            },
        }
    )
    s.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {
                "name": "search",
                "namespace": NS,
                "uid": k.uid("ing", NS, "search"),
                "generation": 2,
                "creationTimestamp": k.ts(s.ago(days=400)),
                "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "15"},
            },
            "spec": {
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "shop.quillmark.io",
                        "http": {
                            "paths": [
                                {
                                    "path": "/api/search",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "search-api", "port": {"name": "http"}}
                                    },
                                }
                            ]
                        },
                    }
                ],
            },
            "status": {
                "loadBalancer": {
                    "ingress": [{"hostname": "a3f9e1c2-ingress.elb.us-east-2.amazonaws.com"}]
                }
            },
        }
    )

    # ---- neighbours
    _bd, _brs, bpods = k.healthy_deployment(
        s,
        nn,
        "storefront-bff",
        "web",
        "registry.quillmark.io/web/storefront-bff:5.0.3",
        3,
        s.ago(days=600),
        port=4000,
        req_mem="256Mi",
        lim_mem="512Mi",
        env=[{"name": "SEARCH_URL", "value": "http://search-api.catalog.svc/v1/search"}],
    )
    _cd, _crs, cpods = k.healthy_deployment(
        s,
        nn,
        "catalog-api",
        NS,
        "registry.quillmark.io/catalog/catalog-api:3.12.1",
        2,
        s.ago(days=600),
        port=8080,
    )
    s.add(
        k.service(
            "catalog-api",
            NS,
            s.ago(days=600),
            {"app.kubernetes.io/name": "catalog-api"},
            [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
            "172.20.57.30",
        )
    )
    s.add(
        k.endpoints(
            "catalog-api",
            NS,
            s.ago(days=600),
            cpods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )
    _igd, _igrs, igpods = k.healthy_deployment(
        s,
        nn,
        "ingress-nginx-controller",
        "ingress-nginx",
        "registry.k8s.io/ingress-nginx/controller:v1.10.1",
        2,
        s.ago(days=420),
        port=80,
        req_mem="256Mi",
        lim_mem="1Gi",
        probe_path="/healthz",
        cname="controller",
    )
    dns_last = k.terminated(
        "Error", 1, s.ago(days=6), s.ago(days=3, hours=9, minutes=2), "coredns-restart"
    )
    _dd, _drs, dpods = k.healthy_deployment(
        s,
        nn,
        "coredns",
        "kube-system",
        "registry.k8s.io/coredns/coredns:v1.11.1",
        2,
        s.ago(days=520),
        port=53,
        req_mem="70Mi",
        lim_mem="170Mi",
        restarts=(1, dns_last),
        probe_path="/ready",
        pod_started=s.ago(days=6),
    )
    # Pending grafana-image-renderer (a decoy: far too much memory requested)
    gc = k.container(
        "grafana-image-renderer",
        "grafana/grafana-image-renderer:3.10.5",
        ports=[{"name": "http", "containerPort": 8081, "protocol": "TCP"}],
        resources=k.res("1", "20Gi", None, "20Gi"),
    )
    gtm = k.template({"app.kubernetes.io/name": "grafana-image-renderer"}, [gc])
    gdep = k.deployment(
        "grafana-image-renderer",
        "monitoring",
        s.ago(days=60),
        gtm,
        1,
        3,
        {"replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1},
        [],
    )
    gh = s.rs_hash()
    grs = k.replicaset(gdep, gh, s.ago(hours=2, minutes=51), 3, gtm, 1, ready=0)
    gdep["status"]["conditions"] = k.dep_conditions(
        s.ago(hours=2, minutes=51),
        s.ago(hours=2, minutes=41),
        grs["metadata"]["name"],
        available=False,
        progressing="stalled",
    )
    msg = (
        "0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are available: "
        "4 No preemption victims found for incoming pod."
    )
    gp = k.pod(
        s,
        grs,
        f"grafana-image-renderer-{gh}-{s.pod_suffix()}",
        "",
        "",
        s.ago(hours=2, minutes=51),
        [],
        False,
        phase="Pending",
        scheduled=False,
        pending_msg=msg,
    )
    s.add(gdep, grs, gp)

    # ---- events
    evs = []
    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        cr = k.parse(p["metadata"]["creationTimestamp"])
        fp = "spec.containers{search-api}"
        evs += [
            k.event(
                NS,
                rs_new,
                "SuccessfulCreate",
                f"Created pod: {pn}",
                cr,
                cr,
                1,
                "Normal",
                "replicaset-controller",
            ),
            k.event(
                NS,
                p,
                "Scheduled",
                f"Successfully assigned {NS}/{pn} to {p['spec']['nodeName']}",
                cr,
                cr,
                1,
                "Normal",
                "default-scheduler",
            ),
            k.event(
                NS,
                p,
                "Pulled",
                f'Successfully pulled image "{IMG_NEW}" in 2.114s (2.114s including waiting)',
                cr + timedelta(seconds=2),
                cr + timedelta(seconds=2),
                1,
                "Normal",
                "kubelet",
                p["spec"]["nodeName"],
                fp,
            ),
            k.event(
                NS,
                p,
                "Started",
                "Started container search-api",
                cr + timedelta(seconds=3),
                cr + timedelta(seconds=3),
                1,
                "Normal",
                "kubelet",
                p["spec"]["nodeName"],
                fp,
            ),
            k.event(
                NS,
                dep,
                "ScalingReplicaSet",
                f"Scaled up replica set {rs_new['metadata']['name']} to {i + 1} from {i}",
                cr,
                cr,
                1,
                "Normal",
                "deployment-controller",
            ),
            k.event(
                NS,
                dep,
                "ScalingReplicaSet",
                f"Scaled down replica set {rs_old['metadata']['name']} to {2 - i} from {3 - i}",
                cutover[i],
                cutover[i],
                1,
                "Normal",
                "deployment-controller",
            ),
        ]
    gfirst = k.parse(gp["metadata"]["creationTimestamp"])
    evs.append(
        k.event(
            "monitoring",
            gp,
            "FailedScheduling",
            msg,
            s.ago(minutes=57),
            s.ago(minutes=4),
            12,
            "Warning",
            "default-scheduler",
        )
    )
    s.add(*evs)
    _ = gfirst

    # ---- logs
    lt0 = s.ago(hours=2)
    igp = [p["metadata"]["name"] for p in igpods]
    bp = [p["metadata"]["name"] for p in bpods]
    t = lt0
    reqn = 0
    while t < now:
        dead = t >= cutover[2]
        frac_dead = 1.0 if dead else sum(1 for x in cutover if t >= x) / 3
        ip_ = f"10.52.{s.rng.randint(0, 60)}.{s.rng.randint(2, 250)}"
        q = s.rng.choice(
            ["rain+jacket", "usb-c+hub", "trail+shoes", "desk+lamp", "merino", "bike+light"]
        )
        ing = igp[s.rng.randint(0, 1)]
        if s.rng.random() < frac_dead:
            s.log(
                t,
                "ingress-nginx",
                ing,
                "controller",
                "ingress-nginx",
                "info",
                f'{ip_} - - [{t.strftime("%d/%b/%Y:%H:%M:%S")} +0000] "GET /api/search?q={q} '
                'HTTP/2.0" 503 190 "-" '
                f'"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15" 61 0.000 '
                f"[catalog-search-api-http] [] - - - - {k.sha(str(t), 'r')[:32]}",
                **{"http.response.status_code": 503, "url.path": "/api/search"},
            )
        else:
            s.log(
                t,
                "ingress-nginx",
                ing,
                "controller",
                "ingress-nginx",
                "info",
                f'{ip_} - - [{t.strftime("%d/%b/%Y:%H:%M:%S")} +0000] "GET /api/search?q={q} '
                f'HTTP/2.0" 200 {s.rng.randint(900, 9000)} "-" '
                '"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15" 61 '
                f"0.0{s.rng.randint(10, 90)} "
                f"[catalog-search-api-http] [] 10.52.{s.rng.randint(64, 120)}."
                f"{s.rng.randint(2, 250)}:8080 0 0.0{s.rng.randint(10, 90)} 200 "
                f"{k.sha(str(t), 'r')[:32]}",
                **{"http.response.status_code": 200, "url.path": "/api/search"},
            )
        if s.rng.random() < frac_dead * 0.5:
            s.log(
                t + timedelta(milliseconds=200),
                "web",
                bp[s.rng.randint(0, 2)],
                "storefront-bff",
                "storefront-bff",
                "error",
                "search upstream failed: connect ECONNREFUSED 172.20.57.12:80",
                **{"error.type": "ECONNREFUSED", "http.response.status_code": 502},
            )
        reqn += 1
        t += timedelta(seconds=s.rng.randint(9, 22))
    for ig in igp:
        t = cutover[2] + timedelta(seconds=s.rng.randint(1, 5))
        while t < now:
            s.log(
                t,
                "ingress-nginx",
                ig,
                "controller",
                "ingress-nginx",
                "warn",
                f"W{t.strftime('%m%d %H:%M:%S')}.{s.rng.randint(100000, 999999)}       7 "
                "controller.go:1214] "
                'Service "catalog/search-api" does not have any active Endpoint.',
            )
            t += timedelta(seconds=s.rng.randint(50, 160))
    for p in pods:
        pn = p["metadata"]["name"]
        st = k.parse(p["status"]["startTime"]) + timedelta(seconds=3)
        lines = [
            (
                f'{{"level":"info","time":"{k.ts(st)}","msg":"search-api 7.2.0 '
                f'starting","listen":"0.0.0.0:8080"}}'
            ),
            (
                f'{{"level":"info","time":"{k.ts(st + timedelta(seconds=2))}","msg":"connected to '
                f'opensearch","cluster":"search-os","version":"2.13.0"}}'
            ),
            (
                f'{{"level":"info","time":"{k.ts(st + timedelta(seconds=2))}","msg":"metrics '
                f'listening","addr":"0.0.0.0:9090"}}'
            ),
        ]
        t = st + timedelta(seconds=60)
        while t < now:
            lines.append(
                f'{{"level":"debug","time":"{k.ts(t)}","msg":"request","method":"GET","path":"/ready","status":200,"ua":"kube-probe/1.29","dur_ms":1}}'
            )
            t += timedelta(minutes=5)
        s.podlog(NS, pn, "search-api", lines)
        for ln in lines[:3]:
            d = json.loads(ln)
            s.log(k.parse(d["time"]), NS, pn, "search-api", "search-api", "info", d["msg"])
    t = lt0
    while t < cutover[2]:
        on = old_pods[s.rng.randint(0, 2)]
        s.log(
            t,
            NS,
            on,
            "search-api",
            "search-api",
            "info",
            f"request method=GET path=/v1/search status=200 hits={s.rng.randint(0, 400)} "
            f"dur_ms={s.rng.randint(8, 60)}",
        )
        t += timedelta(seconds=s.rng.randint(15, 40))
    for dp in dpods:
        t = lt0 + timedelta(minutes=s.rng.randint(0, 20))
        while t < now:
            s.log(
                t,
                "kube-system",
                dp["metadata"]["name"],
                "coredns",
                "coredns",
                "info",
                "[INFO] plugin/reload: Running configuration SHA512 = 8b1d7c7a3f0e",
            )
            t += timedelta(minutes=45)

    # ---- metrics
    m = s.metrics
    for code, _base in (("200", 9.0), ("503", 0.0)):
        for _j, ig in enumerate(igp):

            def rate(t, code=code):
                dead = sum(1 for x in cutover if t >= x.timestamp()) / 3
                return 4.5 * (dead if code == "503" else 1 - dead)

            m.series(
                "nginx_ingress_controller_requests",
                "counter",
                "The total number of client requests",
                {
                    "controller_namespace": "ingress-nginx",
                    "controller_pod": ig,
                    "ingress": "search",
                    "namespace": NS,
                    "service": "search-api",
                    "status": code,
                    "method": "GET",
                    "host": "shop.quillmark.io",
                },
                k.counter_points(
                    grid,
                    rate,
                    start=float(s.rng.randint(10**5, 10**6)) if code == "200" else 0.0,
                    jitter=lambda: s.rng.uniform(0.85, 1.15),
                ),
            )
    m.series(
        "kube_endpoint_address_available",
        "gauge",
        "Number of addresses available in endpoint.",
        {"namespace": NS, "endpoint": "search-api"},
        [(t, 3 - sum(1 for x in cutover if t >= x.timestamp())) for t in grid],
    )
    m.series(
        "kube_endpoint_address_available",
        "gauge",
        "Number of addresses available in endpoint.",
        {"namespace": NS, "endpoint": "search-api-metrics"},
        [(t, 3) for t in grid],
    )
    for i, on in enumerate(old_pods):
        pts = k.counter_points(
            [t for t in grid if t <= cutover[i].timestamp()],
            lambda t: 0.55,
            start=float(s.rng.randint(20000, 40000)),
            jitter=lambda: s.rng.uniform(0.8, 1.2),
        )
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": on, "container": "search-api"},
            pts,
        )
    for p in pods:
        st = k.parse(p["status"]["startTime"]).timestamp()
        pts = k.counter_points(
            [t for t in grid if t >= st], lambda t: 0.008, jitter=lambda: s.rng.uniform(0.7, 1.3)
        )
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": p["metadata"]["name"], "container": "search-api"},
            pts,
        )
        m.series(
            "kube_pod_status_ready",
            "gauge",
            "Describes whether the pod is ready to serve requests.",
            {
                "namespace": NS,
                "pod": p["metadata"]["name"],
                "condition": "true",
                "uid": p["metadata"]["uid"],
            },
            [(t, 1) for t in grid if t >= st + 60],
        )
    for p in cpods:
        pts = k.counter_points(
            grid,
            lambda t: 0.2,
            start=float(s.rng.randint(20000, 40000)),
            jitter=lambda: s.rng.uniform(0.8, 1.2),
        )
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": p["metadata"]["name"], "container": "catalog-api"},
            pts,
        )

    s.write(
        "Search returns 503 on the shop",
        "search on shop.quillmark.io is broken since ~15:30: ingress gives 503 and storefront-bff "
        "logs ECONNREFUSED "
        "for search. the search-api pods are all Running and 3/3 Ready, no restarts. smells like "
        "DNS again "
        "(coredns restarted this week) or the new netpol someone added in catalog today?\n",
        {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": NS, "name": "search-api"},
            "evidence": ["targetPort: http", "name: api", "does not have any active Endpoint"],
            "fix": "search-api chart 2.0.0 renamed the container port from http to api, so the "
            "Service's named targetPort "
            "http matches no port on the pods and its Endpoints are empty. Point the Service at "
            "targetPort api "
            "(or 8080), or restore the port name http.",
        },
    )
