"""1. edge-gateway-502s: the ingress-nginx controller is OOM-killed under a traffic rise; every
host behind it answers 502/503 now and then while every backend is healthy."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-28T20:25:00Z")
RISE = kit.at("2026-11-28T19:31:00Z")
LIMIT = 512 * MiB
CTRL_IMAGE = (
    "registry.k8s.io/ingress-nginx/controller:v1.10.1"
    "@sha256:e24f39d3eed6bcc239a56f20098878845f62baa34b9f2be2fd2c38ce9fb0f29e"
)


def build() -> Scenario:
    rng = random.Random(3401)
    sc = Scenario(
        "edge-gateway-502s",
        "Every site intermittently answers 502/503 during the promo traffic",
        NOW,
        "www + api + accounts all flapping 502/503 since the newsletter went out (~19:30). maybe "
        "1 in 10 requests?\n"
        "grafana shows web-frontend / search-api / account-service all green, zero 5xx on their "
        "side.\n"
        "is the cloud LB broken? nobody deployed anything tonight\n",
        {
            "category": "oom_killed",
            "culprit": {
                "kind": "Deployment",
                "namespace": "ingress-nginx",
                "name": "ingress-nginx-controller",
            },
            "evidence": ["OOMKilled", "512Mi", "ingress-nginx-controller"],
            "fix": "Raise the controller's memory limit (and replicas/HPA) for peak traffic; its "
            "512Mi limit is "
            "below what nginx workers plus the Lua shared dicts use at the promo's connection "
            "count",
        },
    )
    created = NOW - timedelta(days=210)
    nodes = [f"gke-lark-prod-general-8c1d-{kit.suffix(rng, 4)}" for _ in range(5)]
    for n in ("ingress-nginx", "booking", "accounts", "monitoring", "kube-system"):
        sc.add(kit.namespace(n, created))
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                NOW - timedelta(days=20 + i),
                "8",
                "32880232Ki",
                {
                    "cloud.google.com/gke-nodepool": "general",
                    "topology.kubernetes.io/zone": f"europe-west1-{'bcd'[i % 3]}",
                },
                heartbeat=NOW - timedelta(seconds=25),
            )
        )
    times = fleet.grid(NOW, 3)
    rise_i = next(i for i, t in enumerate(times) if t >= RISE.timestamp())

    # --- the controller ---------------------------------------------------------------
    labels = {
        "app.kubernetes.io/name": "ingress-nginx",
        "app.kubernetes.io/instance": "ingress-nginx",
        "app.kubernetes.io/component": "controller",
    }
    c = kit.container(
        "controller",
        CTRL_IMAGE,
        port=80,
        cpu_req="500m",
        mem_req="256Mi",
        mem_lim="512Mi",
        args=[
            "/nginx-ingress-controller",
            "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
            "--election-id=ingress-nginx-leader",
            "--controller-class=k8s.io/ingress-nginx",
            "--ingress-class=nginx",
            "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
        ],
        readiness=kit.http_probe("/healthz", 10254),
        liveness=kit.http_probe("/healthz", 10254, failures=5),
    )
    c["ports"] = [
        {"name": "http", "containerPort": 80, "protocol": "TCP"},
        {"name": "https", "containerPort": 443, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 10254, "protocol": "TCP"},
    ]
    tmpl = kit.template(
        labels,
        [c],
        extra_spec={
            "serviceAccountName": "ingress-nginx",
            "nodeSelector": {"kubernetes.io/os": "linux"},
        },
    )
    rolled = NOW - timedelta(days=5, hours=4)
    dep = kit.deployment(
        "ingress-nginx",
        "ingress-nginx-controller",
        created,
        labels,
        tmpl,
        replicas=3,
        revision=7,
        ready=2,
        available=2,
        labels={
            **labels,
            "app.kubernetes.io/version": "1.10.1",
            "helm.sh/chart": "ingress-nginx-4.10.1",
        },
    )
    rs = kit.replicaset(dep, "6f8c5b7d94", rolled, 7, tmpl, replicas=3, ready=2)
    sc.add(dep, rs)
    pods = []
    growth = (15.5, 21.0, 18.2)  # MiB per minute above the baseline once the promo traffic hits
    for k in range(3):
        name = f"ingress-nginx-controller-6f8c5b7d94-{kit.suffix(rng)}"
        node_name = nodes[k * 2 % 5]
        mem, kills, level = [], [], 170.0 + 8 * k
        for i in range(len(times)):
            if i < rise_i:
                level = 168 + 8 * k + rng.uniform(-4, 4)
            else:
                level += growth[k] * rng.uniform(0.7, 1.3) + (2.0 if i - rise_i < 8 else 0)
                if level * MiB >= LIMIT:
                    kills.append(i)
                    level = 150 + rng.uniform(0, 15)
            mem.append(min(level * MiB, LIMIT - rng.randint(1, 3) * MiB))
        started = rolled + timedelta(seconds=20 + 14 * k)
        last_kill = times[kills[-1]]
        from_t = kit.datetime.fromtimestamp(last_kill, kit.UTC)
        ready = times[-1] - last_kill > 45
        st = kit.cstatus(
            c,
            from_t + timedelta(seconds=11),
            ready=ready,
            restarts=len(kills),
            last=kit.terminated(
                "OOMKilled",
                137,
                kit.datetime.fromtimestamp(
                    times[kills[-2]] if len(kills) > 1 else times[rise_i], kit.UTC
                )
                + timedelta(seconds=11),
                from_t,
            ),
        )
        p = kit.pod(rs, name, started, node_name, tmpl, [st], ip=fleet.ip(rng), ready=ready)
        pods.append(p)
        sc.add(p)
        fleet.container_metrics(
            sc,
            "ingress-nginx",
            name,
            "controller",
            times,
            mem=lambda i, m=mem: m[i],
            cpu=lambda i: 0.35 if i < rise_i else 1.1,
            mem_limit=LIMIT,
            cpu_limit=None,
            restarts=lambda i, ks=kills: sum(1 for x in ks if x <= i),
            node_name=node_name,
            rng=rng,
        )
        # events: restarts and probe failures of the restarting controller
        first = NOW - timedelta(minutes=52)
        kills_in_hour = [t for t in (times[x] for x in kills) if t >= first.timestamp()]
        if kills_in_hour:
            lastk = kit.datetime.fromtimestamp(kills_in_hour[-1], kit.UTC)
            sc.add(
                kit.event(
                    "ingress-nginx",
                    "Pod",
                    name,
                    "Pulled",
                    f'Container image "{CTRL_IMAGE}" already present on machine',
                    first,
                    lastk + timedelta(seconds=2),
                    count=len(kills_in_hour),
                    host=node_name,
                ),
                kit.event(
                    "ingress-nginx",
                    "Pod",
                    name,
                    "Started",
                    "Started container controller",
                    first,
                    lastk + timedelta(seconds=3),
                    count=len(kills_in_hour),
                    host=node_name,
                ),
                kit.event(
                    "ingress-nginx",
                    "Pod",
                    name,
                    "Unhealthy",
                    "Readiness probe failed: HTTP probe failed with statuscode: 500",
                    first,
                    lastk + timedelta(seconds=19),
                    count=3 * len(kills_in_hour),
                    warning=True,
                    host=node_name,
                ),
            )
        _controller_logs(sc, rng, name, kills, times)
    n_ready = sum(1 for p in pods if p["status"]["conditions"][1]["status"] == "True")
    for obj in (dep, rs):
        obj["status"].update(readyReplicas=n_ready, availableReplicas=n_ready)
    if n_ready == 3:
        dep["status"].pop("unavailableReplicas", None)
    else:
        dep["status"]["unavailableReplicas"] = 3 - n_ready
    svc = kit.service(
        "ingress-nginx",
        "ingress-nginx-controller",
        created,
        labels,
        [("http", 80, "http"), ("https", 443, "https")],
        cluster_ip="10.96.14.201",
        svc_type="LoadBalancer",
        extra_spec={"externalTrafficPolicy": "Cluster"},
    )
    svc["status"] = {"loadBalancer": {"ingress": [{"ip": "34.76.201.18"}]}}
    sc.add(
        svc,
        kit.endpoints(
            "ingress-nginx",
            "ingress-nginx-controller",
            created,
            pods,
            [("http", 80), ("https", 443)],
            labels,
        ),
    )
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": kit.meta("ingress-nginx-controller", "ingress-nginx", created, labels),
        "data": {
            "allow-snippet-annotations": "false",
            "worker-processes": "auto",
            "max-worker-connections": "65536",
            "keep-alive-requests": "10000",
            "upstream-keepalive-connections": "320",
            "use-forwarded-headers": "true",
            "lua-shared-dicts": "configuration_data: 20, certificate_data: 20",
            "proxy-body-size": "16m",
        },
    }
    sc.add(cm)
    _backends(sc, rng, nodes, times, rise_i, created)
    _edge_requests(sc, times, rise_i, pods)
    return sc


def _controller_logs(
    sc: Scenario, rng: random.Random, name: str, kills: list[int], times: list[int]
) -> None:
    def t_at(i: int) -> kit.datetime:
        return kit.datetime.fromtimestamp(times[i], kit.UTC)

    banner = [
        "-------------------------------------------------------------------------------",
        "NGINX Ingress controller",
        "  Release:       v1.10.1",
        "  Build:         4fb5aac1dd3669daa3a14d9de3e3cdb371b4c518",
        "  Repository:    https://github.com/kubernetes/ingress-nginx",
        "  nginx version: nginx/1.25.3",
        "-------------------------------------------------------------------------------",
    ]
    paths = [
        ("www.larkspur.travel", "GET /", "booking-web-frontend-80", 0.021),
        (
            "api.larkspur.travel",
            "GET /v2/search?from=LIS&to=BCN&d=2026-12-19",
            "booking-search-api-80",
            0.184,
        ),
        ("api.larkspur.travel", "POST /v2/basket", "booking-search-api-80", 0.062),
        ("accounts.larkspur.travel", "GET /me", "accounts-account-service-80", 0.014),
    ]

    def access(t: kit.datetime) -> str:
        host, req, up, lat = rng.choice(paths)
        code = 499 if rng.random() < 0.02 else 200
        stamp = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        l2 = round(lat * rng.uniform(0.6, 1.8), 3)
        return (
            f"{rng.randint(80, 213)}.{rng.randint(0, 255)}."
            f"{rng.randint(0, 255)}.{rng.randint(1, 254)} - - [{stamp}] "
            f'"{req} HTTP/2.0" {code} {rng.randint(300, 9000)} "https://{host}/" "Mozilla/5.0 '
            '(iPhone; CPU iPhone OS 17_5 like Mac OS X)" '
            f"{rng.randint(40, 900)} {l2} [{up}] [] "
            f"10.52.{rng.randint(0, 15)}.{rng.randint(2, 250)}:8080 {rng.randint(300, 9000)} {l2} "
            f"{code} "
            f"{rng.getrandbits(64):016x}"
        )

    def klog(t: kit.datetime, msg: str, lvl: str = "I", src: str = "controller.go:190") -> str:
        return f"{lvl}{t.strftime('%m%d %H:%M:%S.%f')}       7 {src}] {msg}"

    def run(start_i: int, end_i: int, killed: bool) -> list[str]:
        t0 = t_at(start_i)
        out = list(banner)
        out += [
            klog(
                t0 + timedelta(seconds=1),
                '"Creating API client" host="https://10.96.0.1:443"',
                src="main.go:205",
            ),
            klog(
                t0 + timedelta(seconds=2),
                '"Running in Kubernetes cluster" major="1" minor="29" git="v1.29.6-gke.1326000" '
                'state="clean" commit="a1f0fbd3" platform="linux/amd64"',
                src="main.go:249",
            ),
            klog(
                t0 + timedelta(seconds=4),
                '"Starting NGINX Ingress controller"',
                src="controller.go:336",
            ),
            klog(
                t0 + timedelta(seconds=6),
                '"Configuration changes detected, backend reload required"',
            ),
            klog(
                t0 + timedelta(seconds=7),
                '"Backend successfully reloaded"',
                src="controller.go:210",
            ),
            klog(
                t0 + timedelta(seconds=7),
                '"Initial sync, sleeping for 1 second"',
                src="controller.go:221",
            ),
        ]
        for i in range(start_i + 1, end_i + 1):
            base = t_at(i)
            for s in sorted(rng.sample(range(60), 3)):
                out.append(access(base + timedelta(seconds=s)))
                if s % 4 == 0:
                    code = int(out[-1].split('" ', 1)[1].split(" ", 1)[0])
                    sc.docs.append(
                        kit.logdoc(
                            base + timedelta(seconds=s),
                            "info",
                            out[-1],
                            "ingress-nginx",
                            "ingress-nginx",
                            name,
                            "controller",
                            **{"http.response.status_code": code},
                        )
                    )
            if killed and i >= end_i - 3 and rng.random() < 0.8:
                when = base + timedelta(seconds=59)
                out.append(
                    f"{when.strftime('%Y/%m/%d %H:%M:%S')} [alert] "
                    f"31#31: worker process {rng.randint(40, 900)} exited on signal 9"
                )
                sc.docs.append(
                    kit.logdoc(
                        when, "error", out[-1], "ingress-nginx", "ingress-nginx", name, "controller"
                    )
                )
            if rng.random() < 0.01:
                out.append(klog(base, '"Dynamic reconfiguration succeeded"', src="nginx.go:865"))
        return out

    start = max(0, len(times) - 180)
    if len(kills) >= 2:
        sc.log("ingress-nginx", name, "controller", run(kills[-2], kills[-1], True), previous=True)
    sc.log(
        "ingress-nginx",
        name,
        "controller",
        run(kills[-1], len(times) - 1, False) if kills else run(start, len(times) - 1, False),
    )


def _backends(
    sc: Scenario,
    rng: random.Random,
    nodes: list[str],
    times: list[int],
    rise_i: int,
    created: kit.datetime,
) -> None:
    specs = [
        ("booking", "web-frontend", "ghcr.io/larkspur/web-frontend:2026.11.26-1", 4, "node", 3000),
        ("booking", "search-api", "ghcr.io/larkspur/search-api:5.18.0", 6, "kotlin", 8080),
        ("accounts", "account-service", "ghcr.io/larkspur/account-service:3.2.7", 3, "go", 8080),
    ]
    for ns, name, image, replicas, _lang, port in specs:
        c = kit.container(
            name,
            image,
            port=port,
            cpu_req="500m",
            mem_req="512Mi",
            mem_lim="1Gi",
            readiness=kit.http_probe("/ready"),
            liveness=kit.http_probe("/live"),
        )
        w = fleet.app(
            sc,
            rng,
            ns,
            name,
            [c],
            nodes[1:] + nodes[:1],
            replicas=replicas,
            created=created,
            rolled=NOW - timedelta(days=2, hours=rng.randint(1, 20)),
            revision=rng.randint(30, 90),
            port=port,
        )
        ing = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": kit.meta(
                name,
                ns,
                created,
                {"app": name},
                annotations={"nginx.ingress.kubernetes.io/proxy-read-timeout": "30"},
            ),
            "spec": {
                "ingressClassName": "nginx",
                "tls": [
                    {
                        "hosts": [f"{SUB[name]}.larkspur.travel"],
                        "secretName": f"{name}-tls",
                    }
                ],
                "rules": [
                    {
                        "host": f"{SUB[name]}.larkspur.travel",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": name, "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "34.76.201.18"}]}},
        }
        sc.add(ing)
        for p in w.pods:
            pn = p["metadata"]["name"]
            fleet.container_metrics(
                sc,
                ns,
                pn,
                name,
                times,
                mem=lambda i: 610 * MiB + (i % 7) * MiB,
                cpu=lambda i: 0.2 if i < rise_i else 0.55,
                mem_limit=1024 * MiB,
                cpu_limit=None,
                node_name=p["spec"]["nodeName"],
                rng=rng,
            )
            fleet.requests(
                sc,
                "http_requests_total",
                {"namespace": ns, "pod": pn, "service": name},
                times,
                rate=lambda i, r=replicas: (420 if i < rise_i else 1150) / r,
                err=lambda i: 0.0004,
            )
            for i in range(len(times) - 150, len(times), 3):
                t = kit.datetime.fromtimestamp(times[i], kit.UTC) + timedelta(
                    seconds=rng.randint(0, 59)
                )
                if name == "search-api" and rng.random() < 0.25:
                    sc.docs.append(
                        kit.logdoc(
                            t,
                            "WARN",
                            f"GDS supplier amadeus responded in {rng.randint(1900, 2600)}ms "
                            "(budget 1500ms), serving cached fares",
                            name,
                            ns,
                            pn,
                            name,
                            **{"log.logger": "c.l.search.fares.SupplierClient"},
                        )
                    )
                else:
                    sc.docs.append(
                        kit.logdoc(
                            t,
                            "INFO",
                            f"{rng.choice(['GET', 'GET', 'POST'])} "
                            f"{rng.choice(['/', '/v2/search', '/me', '/v2/basket'])} 200 "
                            f"{rng.randint(4, 240)}ms",
                            name,
                            ns,
                            pn,
                            name,
                            **{"http.response.status_code": 200},
                        )
                    )
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": kit.meta("web-frontend", "booking", created),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "web-frontend",
            },
            "minReplicas": 4,
            "maxReplicas": 16,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
        "status": {
            "currentReplicas": 4,
            "desiredReplicas": 4,
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": 41, "averageValue": "206m"},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "reason": "ReadyForNewScale",
                    "lastTransitionTime": kit.ts(created),
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "reason": "ValidMetricFound",
                    "lastTransitionTime": kit.ts(created),
                },
                {
                    "type": "ScalingLimited",
                    "status": "False",
                    "reason": "DesiredWithinRange",
                    "lastTransitionTime": kit.ts(created),
                },
            ],
        },
    }
    sc.add(
        hpa,
        kit.event(
            "booking",
            "HorizontalPodAutoscaler",
            "web-frontend",
            "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics "
            "returned from resource metrics API",
            NOW - timedelta(minutes=41),
            NOW - timedelta(minutes=40),
            count=2,
            warning=True,
            component="horizontal-pod-autoscaler",
        ),
    )


def _edge_requests(sc: Scenario, times: list[int], rise_i: int, pods: list[kit.Obj]) -> None:
    hosts = [
        ("www.larkspur.travel", "booking", "web-frontend", 0.35),
        ("api.larkspur.travel", "booking", "search-api", 0.45),
        ("accounts.larkspur.travel", "accounts", "account-service", 0.2),
    ]
    for p in pods:
        pn = p["metadata"]["name"]
        for host, ns, ing, share in hosts:
            labels = {
                "namespace": "ingress-nginx",
                "pod": pn,
                "controller_class": "k8s.io/ingress-nginx",
                "ingress": ing,
                "exported_namespace": ns,
                "host": host,
                "method": "GET",
                "path": "/",
            }
            step = times[1] - times[0]
            rate = [share * (420 if i < rise_i else 1150) / 3 for i in range(len(times))]
            sc.metrics.untyped(
                "nginx_ingress_controller_requests",
                {**labels, "status": "200"},
                list(zip(times, [round(v) for v in kit.cumulate(rate, step, 90000)], strict=False)),
            )
            sc.metrics.untyped(
                "nginx_ingress_controller_requests",
                {**labels, "status": "499"},
                list(
                    zip(
                        times,
                        [round(v) for v in kit.cumulate([r * 0.01 for r in rate], step, 800)],
                        strict=False,
                    )
                ),
            )


SUB = {"web-frontend": "www", "search-api": "api", "account-service": "accounts"}
STORIES = {"edge-gateway-502s": build}
