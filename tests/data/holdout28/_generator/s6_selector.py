# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 6: catalog-web 8.5.0's chart renamed the pod label `tier` to `component`; the
Service still selects `tier: frontend`, so its Endpoints are empty and the ingress 503s."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, app, chatter, ip, nodes
from ._out import Scenario
from ._workloads import Revision, deployment, pod_name

NOW = datetime(2026, 8, 4, 11, 50, 0)
ROLLOUT = datetime(2026, 8, 4, 11, 21, 5)


def build() -> Scenario:
    sc = Scenario(
        id="shop-site-503",
        title="Shop website returns 503",
        now=NOW,
        seed=606,
        report="www.shop is returning 503 for everything since ~11:20!! catalog-web pods look "
        "healthy in argo. is the ingress controller dead?",
        truth={
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "web", "name": "catalog-web"},
            "evidence": [
                "does not have any active Endpoint",
                "tier: frontend",
                "component: frontend",
            ],
            "fix": "Point the catalog-web Service's selector at the new labels (component: frontend) "
            "or restore the tier label in the pod template.",
        },
    )
    nodes(sc)
    for ns in ("web", "ingress-nginx"):
        sc.add(k.namespace(ns, NOW - timedelta(days=900)))
    sel = {"app": "catalog-web"}

    def tmpl(image: str, labels: dict) -> dict:
        return k.template(
            {**sel, **labels},
            [
                k.container(
                    "catalog-web",
                    image,
                    port=3000,
                    resources=k.res("250m", "512Mi", mem_lim="1Gi"),
                    readiness=k.http_probe("/api/health", 3000),
                    liveness=k.http_probe("/api/health", 3000, delay=15),
                )
            ],
        )

    r1 = Revision(
        tmpl("registry.internal/web/catalog-web:8.4.0", {"tier": "frontend"}),
        NOW - timedelta(days=4, hours=6),
        0,
        change_cause="helm upgrade catalog-web 8.4.0",
    )
    r2 = Revision(
        tmpl(
            "registry.internal/web/catalog-web:8.5.0",
            {"component": "frontend", "app.kubernetes.io/managed-by": "Helm"},
        ),
        ROLLOUT,
        3,
        change_cause="helm upgrade catalog-web 8.5.0 (chart 2.0.0)",
    )
    dep, rss = deployment(
        "catalog-web", "web", sel, [r1, r2], created=NOW - timedelta(days=600), now=NOW
    )
    sc.add(dep, rss)
    pods = []
    for i in range(3):
        name = pod_name(r2, i)
        t = ROLLOUT + timedelta(seconds=25 * i + 3)
        sc.add(
            k.pod(
                name,
                "web",
                r2.template,
                owner=("ReplicaSet", r2.name),
                created=t,
                node=NODES[i],
                ip=ip(sc, i + 1),
                statuses=[
                    k.running(
                        "catalog-web",
                        t + timedelta(seconds=2),
                        image="registry.internal/web/catalog-web:8.5.0",
                    )
                ],
                extra_labels={"pod-template-hash": r2.hash},
            )
        )
        pods.append(name)
        sc.doc(
            t + timedelta(seconds=6),
            "catalog-web",
            "web",
            name,
            "info",
            "ready - started server on 0.0.0.0:3000",
        )
    sc.add(
        k.service(
            "catalog-web",
            "web",
            {"app": "catalog-web", "tier": "frontend"},
            [("http", 80, 3000)],
            cluster_ip="172.20.60.7",
            created=NOW - timedelta(days=600),
        )
    )
    sc.add(k.endpoints("catalog-web", "web", [], [], created=NOW - timedelta(days=600)))
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {
                "name": "shop",
                "namespace": "web",
                "uid": k.uid("ing"),
                "creationTimestamp": k.stamp(NOW - timedelta(days=600)),
            },
            "spec": {
                "ingressClassName": "nginx",
                "tls": [{"hosts": ["www.shop.example"], "secretName": "shop-tls"}],
                "rules": [
                    {
                        "host": "www.shop.example",
                        "http": {
                            "paths": [
                                {
                                    "path": "/api/search",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "search-api", "port": {"number": 80}}
                                    },
                                },
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {
                                        "service": {"name": "catalog-web", "port": {"number": 80}}
                                    },
                                },
                            ]
                        },
                    }
                ],
            },
            "status": {
                "loadBalancer": {
                    "ingress": [{"hostname": "k8s-ingress-3f1a.elb.eu-west-1.amazonaws.com"}]
                }
            },
        }
    )
    _search, _ = app(sc, "search-api", "web", "registry.internal/web/search-api:3.9.1", replicas=2)
    ctrl, _ = app(
        sc,
        "ingress-nginx-controller",
        "ingress-nginx",
        "registry.k8s.io/ingress-nginx/controller:v1.11.2",
        replicas=2,
        labels={"app.kubernetes.io/name": "ingress-nginx"},
    )
    sc.add(
        k.event(
            "web",
            "Deployment",
            "catalog-web",
            "ScalingReplicaSet",
            f"Scaled down replica set {r1.name} to 0 from 1",
            first=ROLLOUT + timedelta(seconds=80),
            last=ROLLOUT + timedelta(seconds=80),
            component="deployment-controller",
        )
    )
    sc.add(
        k.event(
            "web",
            "Deployment",
            "catalog-web",
            "ScalingReplicaSet",
            f"Scaled up replica set {r2.name} to 3 from 2",
            first=ROLLOUT + timedelta(seconds=50),
            last=ROLLOUT + timedelta(seconds=50),
            component="deployment-controller",
        )
    )
    for moment in sc.every(NOW - timedelta(hours=3), NOW, 1.0):
        pod = sc.rng.choice(ctrl)
        path = sc.rng.choice(["/", "/c/shoes", "/p/88213", "/cart", "/api/search?q=boots"])
        search_hit = path.startswith("/api/search")
        ok = search_hit or moment < ROLLOUT + timedelta(seconds=55)
        upstream = "web-search-api-80" if search_hit else "web-catalog-web-80"
        code = 200 if ok else 503
        sc.doc(
            moment,
            "ingress-nginx",
            "ingress-nginx",
            pod,
            "info",
            f'10.0.{sc.rng.randint(1, 3)}.{sc.rng.randint(2, 250)} - - "GET {path} HTTP/2.0" {code} '
            f'{sc.rng.randint(300, 40000) if ok else 190} "-" "Mozilla/5.0" {sc.rng.randint(30, 400)} '
            f"0.{sc.rng.randint(10, 300):03d} [{upstream}] []",
            container="controller",
            http__response__status_code=code,
        )
    for moment in sc.every(ROLLOUT + timedelta(seconds=55), NOW, 30):
        sc.doc(
            moment,
            "ingress-nginx",
            "ingress-nginx",
            sc.rng.choice(ctrl),
            "warn",
            'Service "web/catalog-web" does not have any active Endpoint.',
            container="controller",
        )
    chatter(
        sc,
        "ingress-nginx",
        "ingress-nginx",
        ctrl,
        NOW - timedelta(hours=6),
        [
            'Error getting SSL certificate "web/legacy-tls": local SSL certificate web/legacy-tls was not found. '
            "Using default certificate"
        ],
        gap=900,
        level="warn",
    )
    chatter(
        sc,
        "catalog-web",
        "web",
        pods,
        ROLLOUT + timedelta(seconds=60),
        ["revalidating ISR cache for /c/shoes", "fetched 24 products from product-api in 41ms"],
        gap=60,
    )
    return sc
