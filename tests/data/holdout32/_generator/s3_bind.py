# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 3: search-suggest 2.14.0 ships a generated env ConfigMap with
UVICORN_HOST=127.0.0.1 (a developer's local .env folded into the kustomize overlay).

The app starts normally but listens on loopback only: the kubelet's readiness probe
to the pod IP is refused, the two new pods never become Ready and the rollout stalls
while the three old pods keep serving. The new fuzzy-matching feature is the red herring.
"""

from __future__ import annotations

from .k8s import (
    Clock,
    Obj,
    configmap,
    container,
    cstatus,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
)
from .out import Metrics, ecs, healthy_app, write

SID = "storefront-suggest-rollout"
NOW = "2026-11-27T14:05:00Z"
NS = "storefront"
APP = "search-suggest"


def _log_ts(c: Clock, m: float) -> str:
    return c.dt(m).strftime("%Y-%m-%d %H:%M:%S,") + f"{int(m * 997) % 1000:03d}"


def build() -> None:
    c = Clock(NOW)
    nodes = [
        f"aks-shop-{s}-vmss0000{i}" for s, i in (("d4sv5", "0a"), ("d4sv5", "0c"), ("d4sv5", "0f"), ("d8sv5", "02"))
    ]
    zones = ["westeurope-1", "westeurope-2", "westeurope-3", "westeurope-1"]
    objs: list[Obj] = [namespace(NS, c.at(60 * 24 * 700))]
    objs += [
        node(c, n, z, n.split("-")[2], region="westeurope", instance="Standard_D4s_v5", kubelet="v1.29.9")
        for n, z in zip(nodes, zones, strict=False)
    ]
    old_cm, new_cm = f"{APP}-env-5f7tm2b9kc", f"{APP}-env-8h2kt96g4b"
    base = {
        "UVICORN_PORT": "8000",
        "UVICORN_WORKERS": "2",
        "INDEX_PATH": "/data/index",
        "OPENSEARCH_URL": "http://opensearch.storefront.svc:9200",
        "LOG_LEVEL": "info",
    }
    objs.append(
        configmap(
            c,
            NS,
            old_cm,
            {**base, "UVICORN_HOST": "0.0.0.0", "SUGGEST_FUZZY": "0", "CACHE_TTL_SECONDS": "300"},
            created_min=60 * 24 * 3 + 30,
            labels={"app": APP},
        )
    )
    objs.append(
        configmap(
            c,
            NS,
            new_cm,
            {**base, "UVICORN_HOST": "127.0.0.1", "SUGGEST_FUZZY": "1", "CACHE_TTL_SECONDS": "120"},
            created_min=34.5,
            labels={"app": APP},
        )
    )

    def tmpl(img: str, cm: str) -> Obj:
        return template(
            {"app": APP, "tier": "api"},
            [
                container(
                    APP,
                    img,
                    port=8000,
                    cpu="300m",
                    memory="512Mi",
                    mem_limit="1Gi",
                    env_from=[{"configMapRef": {"name": cm}}],
                    readiness=http_probe("/health/ready", delay=5, period=5, timeout=2, failures=3),
                )
            ],
        )

    old_img, new_img = (
        f"fernhillacr.azurecr.io/storefront/{APP}:2.13.4",
        f"fernhillacr.azurecr.io/storefront/{APP}:2.14.0",
    )
    t_old, t_new = tmpl(old_img, old_cm), tmpl(new_img, new_cm)
    h_old, h_new = pod_hash(APP, 22), pod_hash(APP, 23)
    rollout = 34
    objs.append(
        deployment(
            c,
            NS,
            APP,
            t_new,
            replicas=4,
            revision=23,
            created_days=400,
            ready=3,
            updated=2,
            available=3,
            unavailable=2,
            observed_replicas=5,
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{APP}-{h_new}" has timed out progressing.',
                rollout - 10,
            ),
            annotations={"argocd.argoproj.io/tracking-id": f"storefront:apps/Deployment:{NS}/{APP}"},
        )
    )
    objs.append(replicaset(c, NS, APP, t_old, revision=22, created_min=60 * 24 * 3 + 28, replicas=3, ready=3))
    objs.append(replicaset(c, NS, APP, t_new, revision=23, created_min=rollout, replicas=2, ready=0))
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
    ready, not_ready, old_pods, new_pods = [], [], [], []
    for i in range(3):
        name, nd, ip = f"{APP}-{h_old}-{suffix('o' + str(i))}", nodes[i], f"10.60.{i}.{71 + i * 5}"
        st = 60 * 24 * 3 + 27 - i
        objs.append(
            pod(
                c,
                NS,
                name,
                ("ReplicaSet", f"{APP}-{h_old}"),
                t_old["metadata"]["labels"],
                t_old["spec"],
                node_name=nd,
                ip=ip,
                started_min=st,
                hash_label=h_old,
                statuses=[cstatus(c, APP, old_img, ready=True, state=running(st - 0.1, c))],
            )
        )
        ready.append((ip, name, nd))
        old_pods.append(name)
        pod_logs[(NS, name, APP, False)] = _startup(c, st - 0.1, "0.0.0.0", "2.13.4", fuzzy=False) + [
            f'INFO:     10.60.{k % 3}.{5 + k}:{40000 + k * 37} - "GET /v1/suggest?q={q} HTTP/1.1" 200 OK'
            for k, q in enumerate(["tent", "sleeping%20bag", "head", "headlamp", "trail%20run", "gaiter"] * 3)
        ]
    for i in range(2):
        name, nd, ip = (f"{APP}-{h_new}-{suffix('n' + str(i))}", nodes[(i + 2) % 4], f"10.60.{(i + 2) % 3}.{140 + i}")
        st = rollout - 0.1 - i * 0.05
        objs.append(
            pod(
                c,
                NS,
                name,
                ("ReplicaSet", f"{APP}-{h_new}"),
                t_new["metadata"]["labels"],
                t_new["spec"],
                node_name=nd,
                ip=ip,
                started_min=st,
                hash_label=h_new,
                ready=False,
                statuses=[cstatus(c, APP, new_img, ready=False, state=running(st - 0.2, c), started=True)],
            )
        )
        not_ready.append((ip, name, nd))
        new_pods.append(name)
        pod_logs[(NS, name, APP, False)] = _startup(c, st - 0.2, "127.0.0.1", "2.14.0", fuzzy=True) + [
            f"{_log_ts(c, st - 0.3 - k * 5)} search_suggest.index INFO index refresh skipped: no new snapshot"
            for k in range(6)
        ]
        probe = f'Readiness probe failed: Get "http://{ip}:8000/health/ready": dial tcp {ip}:8000: connect: connection refused'
        objs += [
            event(
                c,
                NS,
                "Pod",
                name,
                "Scheduled",
                f"Successfully assigned {NS}/{name} to {nd}",
                first_min=st,
                last_min=st,
                component="default-scheduler",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Pulled",
                f'Successfully pulled image "{new_img}" in 6.204s (6.204s including '
                "waiting). Image size: 187442116 bytes.",
                first_min=st - 0.1,
                last_min=st - 0.1,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Started",
                f"Started container {APP}",
                first_min=st - 0.2,
                last_min=st - 0.2,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Unhealthy",
                probe,
                first_min=st - 0.3,
                last_min=0.05,
                count=392 - i * 3,
                type_="Warning",
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
        ]
    objs.append(service(c, NS, APP, {"app": APP}, port=80, target="http", cluster_ip="10.0.118.42"))
    objs.append(endpoints(c, NS, APP, ready, not_ready, 8000))
    objs.append(
        event(
            c,
            NS,
            "Deployment",
            APP,
            "ScalingReplicaSet",
            f"Scaled up replica set {APP}-{h_new} to 2 from 0",
            first_min=rollout,
            last_min=rollout,
            component="deployment-controller",
            api_version="apps/v1",
        )
    )
    objs.append(
        event(
            c,
            NS,
            "Deployment",
            APP,
            "ScalingReplicaSet",
            f"Scaled down replica set {APP}-{h_old} to 3 from 4",
            first_min=rollout - 0.01,
            last_min=rollout - 0.01,
            component="deployment-controller",
            api_version="apps/v1",
        )
    )
    objs += healthy_app(
        c,
        NS,
        "product-pages",
        "fernhillacr.azurecr.io/storefront/product-pages:5.2.1",
        replicas=4,
        nodes=nodes,
        ip_prefix="10.60.1",
        cluster_ip="10.0.118.7",
        port=3000,
        rollout_min=60 * 30,
    )
    objs += healthy_app(
        c,
        NS,
        "cart",
        "fernhillacr.azurecr.io/storefront/cart:3.8.0",
        replicas=3,
        nodes=nodes,
        ip_prefix="10.60.2",
        cluster_ip="10.0.118.19",
        probe_path="/actuator/health",
    )
    cart_pod = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith("cart-"))
    objs.append(
        event(
            c,
            NS,
            "Pod",
            cart_pod["metadata"]["name"],
            "Unhealthy",
            'Liveness probe failed: Get "http://10.60.2.22:8080/actuator/health": context deadline exceeded'
            " (Client.Timeout exceeded while awaiting headers)",
            first_min=44,
            last_min=44,
            type_="Warning",
            host=cart_pod["spec"]["nodeName"],
            field_path="spec.containers{cart}",
        )
    )
    objs += healthy_app(
        c,
        NS,
        "opensearch-proxy",
        "fernhillacr.azurecr.io/platform/opensearch-proxy:1.4.0",
        replicas=2,
        nodes=nodes[1:3],
        ip_prefix="10.60.0",
        cluster_ip="10.0.118.90",
        port=9200,
        svc_port=9200,
    )

    logs = []
    for m10 in range(600, 0, -1):
        m = m10 / 10
        p = old_pods[m10 % 3]
        q = ["tent", "stove", "boots", "jacket", "headlamp"][m10 % 5]
        logs.append(
            ecs(
                c,
                m,
                f'10.60.{m10 % 3}.{m10 % 90 + 5}:{41000 + m10} - "GET /v1/suggest?q={q} HTTP/1.1" 200',
                "info",
                APP,
                NS,
                p,
                APP,
                **{"http.response.status_code": 200, "url.path": "/v1/suggest"},
            )
        )
        if m10 % 9 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    f"GET /p/{8800 + m10} 200 in 41ms",
                    "info",
                    "product-pages",
                    NS,
                    "product-pages-" + pod_hash("product-pages", 3) + "-" + suffix("product-pages" + str(m10 % 4)),
                    "product-pages",
                )
            )
        if m10 % 97 == 0:
            logs.append(ecs(c, m, "opensearch query slow: 812ms (suggest-terms)", "warning", APP, NS, p, APP))
    for i, p in enumerate(new_pods):
        for line in pod_logs[(NS, p, APP, False)]:
            logs.append(
                ecs(
                    c,
                    rollout - 0.3 - i * 0.05,
                    line.split(" ", 2)[-1].lstrip() if line.startswith("20") else line.replace("INFO:     ", ""),
                    "info",
                    APP,
                    NS,
                    p,
                    APP,
                )
            )
    metrics = Metrics(c)
    for k, p in enumerate(old_pods):
        metrics.series(
            "http_requests",
            "counter",
            {"namespace": NS, "pod": p, "service": APP, "code": "200"},
            [(m, (60 - m) * 60 * (11 + (3.5 if m < rollout else 0)) + 500 * k) for m in range(60, -1, -1)],
        )
    scenario = {
        "id": SID,
        "title": "search-suggest rollout stuck",
        "now": NOW,
        "report": """
            search-suggest 2.14.0 rollout has been stuck for half an hour, argo shows it Degraded.
            is the new fuzzy matching build broken? old pods still answer, suggestions work on the site
        """.replace("            ", ""),
        "truth": {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
            "evidence": ["Uvicorn running on http://127.0.0.1:8000", "connect: connection refused", "UVICORN_HOST"],
            "fix": f"Set UVICORN_HOST back to 0.0.0.0 in the env ConfigMap ({new_cm}) of the 2.14.0 "
            "overlay so the app listens on the pod IP, and roll out again.",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)


def _startup(c: Clock, m: float, host: str, version: str, *, fuzzy: bool) -> list[str]:
    return [
        "INFO:     Started server process [1]",
        "INFO:     Waiting for application startup.",
        f"{_log_ts(c, m)} search_suggest.app INFO search-suggest {version} starting (workers=2)",
        f"{_log_ts(c, m - 0.02)} search_suggest.index INFO loading suggestion index from "
        "/data/index/suggest-2026-11-27.fst (41.2 MB)",
        f"{_log_ts(c, m - 0.05)} search_suggest.index INFO index ready: 1,284,112 terms, "
        f"fuzzy={'on (max_edits=2)' if fuzzy else 'off'}",
        "INFO:     Application startup complete.",
        f"INFO:     Uvicorn running on http://{host}:8000 (Press CTRL+C to quit)",
    ]
