"""8. bad_rollout: catalog-api's new revision closes idle keep-alive connections after 4 s; nginx
reuses them for 60 s."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    _with_hash,
    configmap,
    container,
    deploy_status,
    deployment,
    endpoints,
    env,
    hexid,
    http_probe,
    iso,
    namespace,
    node,
    pod,
    replicaset,
    running,
    service,
    suffix,
    template,
    terminated,
    uid,
)

SID = "catalog-keepalive-502"

REG = "734219087651.dkr.ecr.us-east-1.amazonaws.com"
HOST = "shop.lumenwear.com"


def build() -> Scenario:
    sc = Scenario(
        SID,
        "Intermittent 502s on the shop",
        "2026-10-06T13:40:00Z",
        "we're seeing ~1% 502s on shop.lumenwear.com since late morning, random, can't "
        "reproduce. ingress-nginx logs are full of 'upstream prematurely closed connection'. I "
        "think the ingress controllers are overloaded (one of them already restarted this "
        "week), can we just scale ingress-nginx up?\n",
        {
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "storefront", "name": "catalog-api"},
            "evidence": [
                "upstream prematurely closed connection",
                "SERVER_KEEP_ALIVE_TIMEOUT_MS",
                'keepAliveTimeout":4000',
                'upstream-keepalive-timeout: "60"',
                "5.8.0",
            ],
            "fix": "Roll catalog-api back to 5.7.3 or set SERVER_KEEP_ALIVE_TIMEOUT_MS above "
            "ingress-nginx's upstream-keepalive-timeout (60 s), e.g. 75000 as before; scaling "
            "the ingress does not help.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=500)
    sc.add(namespace("storefront", old, {"team": "storefront"}))
    sc.add(namespace("ingress-nginx", old, {"app.kubernetes.io/name": "ingress-nginx"}))
    sc.add(namespace("kube-system", old))
    nodes = []
    for i, ip in enumerate(("10.70.1.58", "10.70.2.144", "10.70.3.19", "10.70.1.201")):
        name = f"ip-{ip.replace('.', '-')}.ec2.internal"
        nodes.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=15, hours=i * 5),
                now=now,
                cpu="8",
                memory="32386544Ki",
                alloc_cpu="7910m",
                alloc_memory="31369712Ki",
                internal_ip=ip,
                kubelet="v1.30.4-eks-a737599",
                os_image="Bottlerocket OS 1.22.0 (aws-k8s-1.30)",
                kernel="6.1.106",
                runtime="containerd://1.7.20+bottlerocket",
                pods="58",
                labels={
                    "eks.amazonaws.com/nodegroup": "apps-m6i-2xl",
                    "node.kubernetes.io/instance-type": "m6i.2xlarge",
                    "topology.kubernetes.io/zone": "us-east-1" + "abc"[i % 3],
                },
                provider_id=f"aws:///us-east-1{'abc'[i % 3]}/i-0{hexid(name, 16)}",
            )
        )
    cl = Cluster(sc, "10.70")

    # ------------------------------------------------------------------ catalog-api: two revisions
    labels = {"app": "catalog-api"}

    def tpl(version: str, keepalive: str) -> dict:
        c = container(
            "catalog-api",
            f"{REG}/storefront/catalog-api:{version}",
            ports=[8080],
            requests={"cpu": "500m", "memory": "512Mi"},
            limits={"memory": "1Gi"},
            env=env(
                NODE_ENV="production",
                PORT="8080",
                SERVER_KEEP_ALIVE_TIMEOUT_MS=keepalive,
                SERVER_HEADERS_TIMEOUT_MS=str(int(keepalive) + 1000),
                SERVER_REQUEST_TIMEOUT_MS="30000",
                PG_HOST="catalog-db.cluster-ro-cq81zz4k2e.us-east-1.rds.amazonaws.com",
                REDIS_URL="redis://catalog-cache.storefront.svc:6379",
            ),
            readiness=http_probe("/health/ready", 8080),
            liveness=http_probe("/health/live", 8080, delay=15),
        )
        return template(labels, [c], service_account="catalog-api")

    t30, t31 = tpl("5.7.3", "75000"), tpl("5.8.0", "4000")
    h30, h31 = suffix("cat30", 10), suffix("cat31", 10)
    rs30, rs31 = f"catalog-api-{h30}", f"catalog-api-{h31}"
    roll30 = now - dt.timedelta(days=2, hours=20, minutes=41)
    roll31 = now.replace(hour=10, minute=58, second=10)
    cc31 = (
        "5.8.0: shared @lumen/http-server bootstrap; tighter server timeouts (SEC-7731 "
        "slowloris hardening)"
    )
    sc.add(
        deployment(
            "storefront",
            "catalog-api",
            created=old,
            replicas=4,
            tpl=t31,
            revision=31,
            annotations={"kubernetes.io/change-cause": cc31},
            status=deploy_status(
                4,
                4,
                avail_since=roll31 + dt.timedelta(seconds=95),
                progress_time=roll31 + dt.timedelta(seconds=100),
                name="catalog-api",
                rs_name=rs31,
            ),
        )
    )
    sc.add(
        replicaset(
            "storefront",
            "catalog-api",
            tpl=t30,
            h=h30,
            revision=30,
            created=roll30,
            replicas=0,
            ready=0,
            annotations={"kubernetes.io/change-cause": "5.7.3: fix size-chart cache key"},
        )
    )
    sc.add(
        replicaset(
            "storefront",
            "catalog-api",
            tpl=t31,
            h=h31,
            revision=31,
            created=roll31,
            replicas=4,
            ready=4,
            annotations={"kubernetes.io/change-cause": cc31},
        )
    )
    cat_eps = []
    for i in range(4):
        pn = f"{rs31}-{suffix(rs31 + str(i), 5)}"
        nd = nodes[i]
        ip = cl.pod_ip(nd[2])
        c_at = roll31 + dt.timedelta(seconds=22 * i)
        sc.add(
            pod(
                "storefront",
                pn,
                tpl=_with_hash(t31, h31),
                owner=("ReplicaSet", rs31),
                node_name=nd[0],
                created=c_at,
                statuses=[
                    running(
                        "catalog-api",
                        t31["spec"]["containers"][0]["image"],
                        c_at + dt.timedelta(seconds=4),
                    )
                ],
                ip=ip,
                host_ip=nd[1],
                ready_since=c_at + dt.timedelta(seconds=14),
            )
        )
        cat_eps.append((ip, pn, nd[0], c_at))
    sc.add(
        service(
            "storefront",
            "catalog-api",
            selector=labels,
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.61.14",
            created=old,
        )
    )
    sc.add(
        endpoints(
            "storefront",
            "catalog-api",
            ready=[e[:3] for e in cat_eps],
            ports=[("http", 8080)],
            created=old,
        )
    )
    old_pods = [f"{rs30}-{suffix(rs30 + str(i), 5)}" for i in range(4)]

    # ------------------------------------------------------------------ neighbours in storefront
    cart_roll = now.replace(hour=12, minute=31, second=40)
    cart = cl.healthy(
        "storefront",
        "cart-api",
        image=f"{REG}/storefront/cart-api:3.3.1",
        nodes=nodes,
        replicas=3,
        created=old,
        rollout=cart_roll,
        revision=19,
        requests={"cpu": "300m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env_=env(HTTP_IDLE_TIMEOUT="120s"),
        annotations={"kubernetes.io/change-cause": "3.3.1: coupon stacking rules"},
    )
    web = cl.healthy(
        "storefront",
        "web-frontend",
        image=f"{REG}/storefront/web-frontend:2026.10.2",
        nodes=nodes,
        replicas=3,
        created=old,
        rollout=now - dt.timedelta(days=1, hours=4),
        revision=88,
        port=3000,
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
        env_=env(KEEP_ALIVE_TIMEOUT="65000"),
    )
    cl.healthy(
        "storefront",
        "catalog-cache",
        image="redis:7.4.0",
        nodes=[nodes[3]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=1),
        revision=2,
        port=6379,
        requests={"cpu": "200m", "memory": "1Gi"},
        limits={"memory": "1Gi"},
    )
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {
                "name": "storefront",
                "namespace": "storefront",
                "uid": uid("storefront/ing"),
                "creationTimestamp": iso(old),
                "generation": 14,
                "annotations": {
                    "nginx.ingress.kubernetes.io/proxy-body-size": "4m",
                    "nginx.ingress.kubernetes.io/proxy-read-timeout": "30",
                },
            },
            "spec": {
                "ingressClassName": "nginx",
                "tls": [{"hosts": [HOST], "secretName": "shop-lumenwear-com-tls"}],
                "rules": [
                    {
                        "host": HOST,
                        "http": {
                            "paths": [
                                {
                                    "path": "/api/catalog",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "catalog-api", "port": {"number": 80}}
                                    },
                                },
                                {
                                    "path": "/api/cart",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "cart-api", "port": {"number": 80}}
                                    },
                                },
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "web-frontend", "port": {"number": 80}}
                                    },
                                },
                            ]
                        },
                    }
                ],
            },
            "status": {
                "loadBalancer": {
                    "ingress": [
                        {"hostname": "a3f1c0d9e2b54c1e9-1728391044.us-east-1.elb.amazonaws.com"}
                    ]
                }
            },
        }
    )

    # ------------------------------------------------------------------ ingress-nginx
    ing_img = (
        "registry.k8s.io/ingress-nginx/controller:v1.11.2@sha256:d5f8217feeac4887cb1ed21f27c2674"
        "e58be06bd8f5184cacea2a69abaf78dce"
    )
    ic = container(
        "controller",
        ing_img,
        ports=[80, 443, 10254],
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1536Mi"},
        args=[
            "/nginx-ingress-controller",
            "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
            "--election-id=ingress-nginx-leader",
            "--controller-class=k8s.io/ingress-nginx",
            "--ingress-class=nginx",
            "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
        ],
        readiness=http_probe("/healthz", 10254, delay=10),
        liveness=http_probe("/healthz", 10254, delay=10),
    )
    ing_roll = now - dt.timedelta(days=6, hours=4)
    ing = cl.healthy(
        "ingress-nginx",
        "ingress-nginx-controller",
        image=ing_img,
        nodes=nodes[:2],
        replicas=2,
        created=old,
        rollout=ing_roll,
        revision=9,
        containers=[ic],
        svc=False,
        extra_labels={
            "app.kubernetes.io/name": "ingress-nginx",
            "app.kubernetes.io/component": "controller",
        },
        restarts={
            1: (
                1,
                terminated(
                    "Error",
                    255,
                    ing_roll + dt.timedelta(seconds=13),
                    now - dt.timedelta(days=3, hours=22, minutes=7),
                    "ing-old",
                ),
            )
        },
    )
    st = ing["pods"][1]["status"]["containerStatuses"][0]
    st["state"]["running"]["startedAt"] = iso(now - dt.timedelta(days=3, hours=22, minutes=6))
    sc.add(
        configmap(
            "ingress-nginx",
            "ingress-nginx-controller",
            {
                "allow-snippet-annotations": "false",
                "keep-alive": "75",
                "upstream-keepalive-connections": "320",
                "upstream-keepalive-requests": "10000",
                "upstream-keepalive-timeout": "60",
                "use-forwarded-headers": "true",
                "proxy-next-upstream": "error timeout",
                "worker-processes": "4",
            },
            old,
            labels={
                "app.kubernetes.io/name": "ingress-nginx",
                "app.kubernetes.io/component": "controller",
            },
        )
    )
    svc = service(
        "ingress-nginx",
        "ingress-nginx-controller",
        selector={"app": "ingress-nginx-controller"},
        ports=[("http", 80, "http"), ("https", 443, "https")],
        cluster_ip="172.20.0.201",
        created=old,
        type_="LoadBalancer",
    )
    svc["spec"]["externalTrafficPolicy"] = "Local"
    svc["status"] = {
        "loadBalancer": {
            "ingress": [{"hostname": "a3f1c0d9e2b54c1e9-1728391044.us-east-1.elb.amazonaws.com"}]
        }
    }
    sc.add(svc)
    sc.add(
        endpoints(
            "ingress-nginx",
            "ingress-nginx-controller",
            ready=[
                (p["status"]["podIP"], p["metadata"]["name"], p["spec"]["nodeName"])
                for p in ing["pods"]
            ],
            ports=[("http", 80), ("https", 443)],
            created=old,
        )
    )
    ing_pods = [p["metadata"]["name"] for p in ing["pods"]]
    # decoy: a config reload after someone touched the web-frontend Ingress annotations
    rel = now - dt.timedelta(minutes=35)
    for pn in ing_pods:
        sc.event(
            "Pod",
            "ingress-nginx",
            pn,
            "RELOAD",
            "NGINX reload triggered due to a change in configuration",
            first=rel + dt.timedelta(seconds=2),
            component="nginx-ingress-controller",
        )
    sc.event(
        "Ingress",
        "storefront",
        "storefront",
        "Sync",
        "Scheduled for sync",
        count=2,
        first=rel,
        last=rel,
        component="nginx-ingress-controller",
        api_version="networking.k8s.io/v1",
        obj_uid=uid("storefront/ing"),
    )
    cl.healthy(
        "kube-system",
        "coredns",
        image="602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
        nodes=nodes[2:],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=5, hours=8),
        revision=3,
        port=53,
        svc=False,
        probe_path="/ready",
        extra_labels={"k8s-app": "kube-dns"},
    )

    # ------------------------------------------------------------------ logs
    rng = sc.rng
    t0 = now - dt.timedelta(hours=3)
    clients = ["10.70.0.14", "10.70.0.87", "10.70.0.133"]
    agents = [
        '"Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, '
        'like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"',
        '"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) '
        'Chrome/129.0.0.0 Safari/537.36"',
    ]
    cat_paths = [
        ("POST", "/api/catalog/search"),
        ("GET", "/api/catalog/products?category=outerwear&page=2"),
        ("POST", "/api/catalog/price-quote"),
        ("GET", "/api/catalog/products/4711-22/availability"),
    ]
    conn = 1_820_000

    def access(
        t, pn, method, path, status, upstream, ups_status, rt, svcname, size=1843, client=None
    ):
        nonlocal conn
        conn += 1
        ts = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        rid = hexid(f"{pn}{iso(t)}{path}{conn}", 32)
        line = (
            f'{client or clients[conn % 3]} - - [{ts}] "{method} {path} HTTP/1.1" '
            f'{status} {size if status == 200 else 150} "https://{HOST}/c/'
            f'outerwear" {agents[conn % 2]} {612 + conn % 300} {rt} [storefront-{svcname}-80] '
            f"[] {upstream} {0 if status == 502 else size} {rt} {ups_status} {rid}"
        )
        sc.log(
            t,
            "ingress-nginx",
            pn,
            "controller",
            "ingress-nginx",
            "info" if status < 500 else "warn",
            line,
            **{
                "http.response.status_code": status,
                "http.request.method": method,
                "url.path": path.split("?")[0],
            },
        )

    def err(t, pn, method, path, upstream_ip, reset: bool):
        nonlocal conn
        conn += 1
        what = (
            "recv() failed (104: Connection reset by peer) while reading response header from "
            "upstream"
            if reset
            else "upstream prematurely closed connection while reading response header from "
            "upstream"
        )
        line = (
            f"{t.strftime('%Y/%m/%d %H:%M:%S')} [error] {31 + conn % 4}#{31 + conn % 4}: "
            f"*{conn} {what}, client: {clients[conn % 3]}, server: {HOST}, request: "
            f'"{method} {path} HTTP/1.1", upstream: "http://{upstream_ip}:8080{path}", '
            f'host: "{HOST}", referrer: "https://{HOST}/c/outerwear"'
        )
        sc.log(
            t,
            "ingress-nginx",
            pn,
            "controller",
            "ingress-nginx",
            "error",
            line,
            **{"error.type": "upstream"},
        )
        return clients[conn % 3]

    t = t0
    k = 0
    while t < now:
        pn = ing_pods[k % 2]
        # sampled healthy traffic to each backend
        cur = [e for e in cat_eps if e[3] <= t] if t >= roll31 else []
        cat_ip = cur[k % len(cur)][0] if cur else f"10.70.{1 + k % 4}.{60 + k % 4}"
        m_, p_ = cat_paths[k % 4]
        access(t, pn, m_, p_, 200, f"{cat_ip}:8080", 200, f"0.0{12 + k % 30}", "catalog-api")
        ci = cart["pods"][k % 3]["status"]["podIP"]
        access(
            t + dt.timedelta(milliseconds=400),
            pn,
            "POST",
            "/api/cart/items",
            200,
            f"{ci}:8080",
            200,
            f"0.0{20 + k % 40}",
            "cart-api",
            size=512,
        )
        wi = web["pods"][k % 3]["status"]["podIP"]
        access(
            t + dt.timedelta(milliseconds=700),
            pn,
            "GET",
            "/c/outerwear",
            200,
            f"{wi}:3000",
            200,
            f"0.{110 + k % 80}",
            "web-frontend",
            size=48211,
        )
        if t >= roll31 + dt.timedelta(seconds=40) and cur:
            # roughly one failed reuse of an idle keep-alive connection every ~25 s per controller
            for _ in range(2 if rng.random() < 0.55 else 1):
                tt = t + dt.timedelta(seconds=rng.randint(1, 38), milliseconds=rng.randint(0, 999))
                bad = cur[rng.randrange(len(cur))][0]
                m_, p_ = cat_paths[rng.randrange(4)]
                reset = rng.random() < 0.15
                who = err(tt, pn, m_, p_, bad, reset)
                if m_ == "POST":
                    access(
                        tt, pn, m_, p_, 502, f"{bad}:8080", 502, "0.001", "catalog-api", client=who
                    )
                else:
                    other = cur[(cur.index(next(e for e in cur if e[0] == bad)) + 1) % len(cur)][0]
                    access(
                        tt + dt.timedelta(milliseconds=14),
                        pn,
                        m_,
                        p_,
                        200,
                        f"{bad}:8080, {other}:8080",
                        "502, 200",
                        "0.016",
                        "catalog-api",
                        client=who,
                    )
        t += dt.timedelta(seconds=40)
        k += 1

    # catalog-api's own logs: no errors, just the new server settings at start
    for _ip, pn, _, c_at in cat_eps:
        tt = c_at + dt.timedelta(seconds=5, milliseconds=311)
        ms = int(tt.timestamp() * 1000)
        sc.log(
            tt,
            "storefront",
            pn,
            "catalog-api",
            "catalog-api",
            "info",
            f'{{"level":30,"time":{ms},"pid":1,"hostname":"{pn}","msg":"Server listening at http://0.0.0.0:8080",'
            f'"version":"5.8.0","keepAliveTimeout":4000,"headersTimeout":5000,"requestTimeout":30000}}',
        )
        sc.pod_log(
            "storefront",
            pn,
            "catalog-api",
            [
                f'{{"level":30,"time":{ms - 240},"pid":1,"hostname":"{pn}",'
                '"msg":"connected to postgres","pool_max":20}',
                f'{{"level":30,"time":{ms},"pid":1,"hostname":"{pn}","msg":"Server listening at http://0.0.0.0:8080",'
                f'"version":"5.8.0","keepAliveTimeout":4000,"headersTimeout":5000,"requestTimeout":30000}}',
            ]
            + [
                '{"level":30,'
                f'"time":{int((now - dt.timedelta(minutes=9 - j)).timestamp() * 1000)},'
                f'"pid":1,"hostname":"{pn}","req":{{"method":"POST","url":"/api/'
                f'catalog/search"}},"res":{{"statusCode":200}},"responseTime":{14 + j},'
                '"msg":"request completed"}'
                for j in range(8)
            ],
        )
    for i, pn in enumerate(old_pods):
        tt = roll30 + dt.timedelta(seconds=27 + 20 * i)
        sc.log(
            tt,
            "storefront",
            pn,
            "catalog-api",
            "catalog-api",
            "info",
            f'{{"level":30,"time":{int(tt.timestamp() * 1000)},"pid":1,'
            f'"hostname":"{pn}","msg":"Server listening at '
            'http://0.0.0.0:8080","version":"5.7.3","keepAliveTimeout":75000,'
            '"headersTimeout":76000,"requestTimeout":30000}',
        )
        tt = roll31 + dt.timedelta(seconds=30 + 22 * i)
        sc.log(
            tt,
            "storefront",
            pn,
            "catalog-api",
            "catalog-api",
            "info",
            f'{{"level":30,"time":{int(tt.timestamp() * 1000)},"pid":1,'
            f'"hostname":"{pn}","msg":"received SIGTERM, closing server"}}',
        )
    for k in range(18):
        tt = t0 + dt.timedelta(minutes=10 * k, seconds=17)
        wp = web["pods"][k % 3]["metadata"]["name"]
        sc.log(
            tt,
            "storefront",
            wp,
            "web-frontend",
            "web-frontend",
            "warn",
            f' ⚠ Image with src "/_next/static/media/hero-{k % 4}.webp" has "fill" but is '
            'missing "sizes" prop. Please add it to improve page performance.',
        )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(3)
    m = sc.metrics
    base = {"catalog-api": 38.0, "cart-api": 12.0, "web-frontend": 55.0}
    for pn in ing_pods:
        for svcname in ("catalog-api", "cart-api", "web-frontend"):
            for status in ("200", "502") if svcname == "catalog-api" else ("200",):

                def rate(t, s=svcname, st_=status):
                    r = base[s] * (1.0 + 0.25 * (t.hour - 9) / 4)
                    bad = s == "catalog-api" and t >= roll31 + dt.timedelta(seconds=40)
                    if st_ == "502":
                        return r * 0.011 if bad else 0.0
                    return r * (0.989 if bad else 1.0)

                m.counter(
                    "nginx_ingress_controller_requests",
                    "The total number of client requests",
                    {
                        "controller_class": "k8s.io/ingress-nginx",
                        "controller_namespace": "ingress-nginx",
                        "controller_pod": pn,
                        "host": HOST,
                        "ingress": "storefront",
                        "namespace": "storefront",
                        "service": svcname,
                        "status": status,
                    },
                    grid,
                    rate,
                    start=7_900_000 if status == "200" else 410,
                    mtype="unknown",
                )
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": "ingress-nginx", "pod": pn, "container": "controller"},
            grid,
            lambda t: 0.21 + 0.02 * (t.hour - 9),
            start=40_100.0,
            integer=False,
        )
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set of the container in bytes",
            {"namespace": "ingress-nginx", "pod": pn, "container": "controller"},
            grid,
            lambda t: 318_000_000 + (t.minute % 10) * 400_000,
        )
    for _ip, pn, _, c_at in cat_eps:
        m.counter(
            "http_requests",
            "Total HTTP requests handled by catalog-api.",
            {"namespace": "storefront", "pod": pn, "code": "200"},
            [t for t in grid if t >= c_at + dt.timedelta(seconds=10)],
            lambda t: base["catalog-api"] * 2 / 4 * (1.0 + 0.25 * (t.hour - 9) / 4),
            start=0,
        )
    return sc
