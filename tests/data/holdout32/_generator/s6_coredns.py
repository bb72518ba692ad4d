# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 6: CoreDNS is OOM-killed over and over. Its 170Mi limit (the add-on default)
was fine for the cluster it was sized for; the cluster doubled this month and the Corefile
has `pods verified`, so CoreDNS caches every pod. Each replica climbs to the limit and is
killed; while one restarts (and waits for its API caches to sync) the other takes all the
queries. Callers in several namespaces see intermittent lookup timeouts.

The search rollout two hours ago is the red herring.
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
    terminated,
)
from .out import Metrics, ecs, healthy_app, pods_of, write

SID = "dns-errors-everywhere"
NOW = "2026-11-29T20:30:00Z"
DNS_IP = "10.100.0.10"
LIMIT = 170 * 1024 * 1024
COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods verified
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


def _oom_times(offset: float) -> list[float]:
    """Minutes-ago of each OOM kill of one replica (every 6-9 minutes in the last hour and a half)."""
    out, t, k = [], 95.0 - offset, 0
    while t > 1.5:
        out.append(t)
        t -= 6.0 + (k * 7 + int(offset)) % 4
        k += 1
    return out


def _dns_pod(c: Clock, name: str, h: str, tmpl: Obj, nd: str, ip: str, kills: list[float], img: str) -> list[Obj]:
    started = kills[-1] - 0.05
    prev = kills[-2] - 0.05 if len(kills) > 1 else 60 * 24 * 6
    st = cstatus(
        c,
        "coredns",
        img,
        ready=started > 0.6,
        state=running(started, c),
        restarts=len(kills) + 2,
        last=terminated(c, "OOMKilled", 137, prev, kills[-1]),
    )
    p = pod(
        c,
        "kube-system",
        name,
        ("ReplicaSet", f"coredns-{h}"),
        tmpl["metadata"]["labels"],
        tmpl["spec"],
        node_name=nd,
        ip=ip,
        started_min=60 * 24 * 6,
        statuses=[st],
        hash_label=h,
        ready=started > 0.6,
    )
    return [
        p,
        event(
            c,
            "kube-system",
            "Pod",
            name,
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first_min=58,
            last_min=kills[-1] - 0.3,
            count=len([k for k in kills if k < 60]) * 4,
            type_="Warning",
            host=nd,
            field_path="spec.containers{coredns}",
        ),
        event(
            c,
            "kube-system",
            "Pod",
            name,
            "Pulled",
            f'Container image "{img}" already present on machine',
            first_min=59,
            last_min=kills[-1] - 0.02,
            count=len([k for k in kills if k < 60]),
            host=nd,
            field_path="spec.containers{coredns}",
        ),
        event(
            c,
            "",
            "Node",
            nd,
            "OOMKilling",
            f"Memory cgroup out of memory: Killed process {3300 + len(kills) * 17} "
            f"(coredns) total-vm:1046212kB, anon-rss:173104kB, file-rss:0kB, shmem-rss:0kB, UID:65532 "
            "pgtables:548kB oom_score_adj:999",
            first_min=59,
            last_min=kills[-1],
            count=len([k for k in kills if k < 60]),
            type_="Warning",
            component="kernel-monitor",
            host=nd,
        ),
    ]


def build() -> None:
    c = Clock(NOW)
    ages = [310, 310, 310, 250, 250, 120, 120, 26, 26, 19, 12, 6, 5, 4.5, 2]
    nodes = [
        f"ip-10-12-{32 + i % 3 * 16}-{(i * 53) % 250 + 3}.ap-southeast-1.compute.internal" for i in range(len(ages))
    ]
    zones = [f"ap-southeast-1{'abc'[i % 3]}" for i in range(len(ages))]
    objs: list[Obj] = [
        namespace(n, c.at(60 * 24 * 500)) for n in ("default", "kube-system", "booking", "search", "payments")
    ]
    objs += [
        node(
            c,
            n,
            z,
            "workers-c6i" if a > 20 else "workers-c6i-burst",
            created_days=a,
            region="ap-southeast-1",
            instance="c6i.2xlarge",
            cpu="7910m",
            memory="14208812Ki",
        )
        for n, z, a in zip(nodes, zones, ages, strict=False)
    ]
    img = "602401143452.dkr.ecr.ap-southeast-1.amazonaws.com/eks/coredns:v1.11.1-eksbuild.9"
    c_spec = container(
        "coredns",
        img,
        port=53,
        cpu="100m",
        memory="70Mi",
        mem_limit="170Mi",
        args=["-conf", "/etc/coredns/Corefile"],
        readiness=http_probe("/ready", 8181, delay=0, period=10, timeout=1, failures=3),
        liveness=http_probe("/health", 8080, delay=60, period=10, timeout=5, failures=5),
        mounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
    )
    c_spec["ports"] = [
        {"name": "dns", "containerPort": 53, "protocol": "UDP"},
        {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
    ]
    tmpl = template(
        {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns", "app": "coredns"},
        [c_spec],
        priorityClassName="system-cluster-critical",
        volumes=[
            {
                "name": "config-volume",
                "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]},
            }
        ],
    )
    tmpl["spec"]["dnsPolicy"] = "Default"
    h = pod_hash("coredns", 4)
    objs.append(
        deployment(
            c,
            "kube-system",
            "coredns",
            tmpl,
            replicas=2,
            revision=4,
            created_days=500,
            ready=1,
            updated=2,
            available=1,
            unavailable=1,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "coredns-{h}" has successfully progressed.',
                60 * 24 * 6,
            ),
            labels={"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"},
        )
    )
    objs.append(
        replicaset(c, "kube-system", "coredns", tmpl, revision=4, created_min=60 * 24 * 6.5, replicas=2, ready=1)
    )
    dns_pods = [f"coredns-{h}-{suffix('dns' + str(i))}" for i in range(2)]
    kills = [_oom_times(0), _oom_times(3.4)]
    kills[1] = [*kills[1][:-1], 0.5]  # killed again half a minute ago: not Ready yet
    ips = ["10.12.33.41", "10.12.49.187"]
    for i in range(2):
        objs += _dns_pod(c, dns_pods[i], h, tmpl, nodes[i], ips[i], kills[i], img)
    ready_eps = [(ips[0], dns_pods[0], nodes[0])]
    objs.append(
        service(
            c,
            "kube-system",
            "kube-dns",
            {"k8s-app": "kube-dns"},
            port=53,
            target=53,
            cluster_ip=DNS_IP,
            port_name="dns",
            created_days=500,
        )
    )
    objs.append(endpoints(c, "kube-system", "kube-dns", ready_eps, [(ips[1], dns_pods[1], nodes[1])], 53, "dns"))
    objs.append(
        configmap(
            c,
            "kube-system",
            "coredns",
            {"Corefile": COREFILE},
            created_min=60 * 24 * 6.5,
            labels={"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"},
        )
    )
    objs += healthy_app(
        c,
        "kube-system",
        "metrics-server",
        "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
        replicas=1,
        nodes=nodes[2:],
        ip_prefix="10.12.65",
        cluster_ip="10.100.12.1",
        port=10250,
        svc_port=443,
        probe_path="/livez",
    )

    callers = {
        "booking": healthy_app(
            c,
            "booking",
            "booking-api",
            "ghcr.io/orbitly/booking-api:22.4.1",
            replicas=6,
            nodes=nodes,
            ip_prefix="10.12.34",
            cluster_ip="10.100.40.10",
            rollout_min=60 * 24 * 3,
            cpu="1",
            memory="1536Mi",
            mem_limit="2Gi",
        ),
        "search": healthy_app(
            c,
            "search",
            "fare-search",
            "ghcr.io/orbitly/fare-search:8.0.0",
            replicas=8,
            nodes=nodes,
            ip_prefix="10.12.50",
            cluster_ip="10.100.41.10",
            rollout_min=121,
            cpu="1",
            memory="1Gi",
        ),
        "payments": healthy_app(
            c,
            "payments",
            "payment-router",
            "ghcr.io/orbitly/payment-router:3.7.2",
            replicas=3,
            nodes=nodes[::2],
            ip_prefix="10.12.66",
            cluster_ip="10.100.42.10",
            rollout_min=60 * 24 * 4,
        ),
    }
    for objs_ns in callers.values():
        objs += objs_ns
    objs += healthy_app(
        c,
        "booking",
        "inventory",
        "ghcr.io/orbitly/inventory:5.5.0",
        replicas=4,
        nodes=nodes[1:],
        ip_prefix="10.12.35",
        cluster_ip="10.100.40.22",
    )
    objs.append(
        event(
            c,
            "",
            "Node",
            nodes[-1],
            "RegisteredNode",
            f"Node {nodes[-1]} event: Registered Node {nodes[-1]} in Controller",
            first_min=40,
            last_min=40,
            component="node-controller",
        )
    )

    logs, metrics = [], Metrics(c)
    outages = sorted({round(k, 1) for ks in kills for k in ks})
    bad = {round(o - d / 10, 1) for o in outages for d in range(0, 6)}
    pods = {
        ns: [
            p["metadata"]["name"]
            for p in pods_of(
                o, {"booking": "booking-api-", "search": "fare-search-", "payments": "payment-router-"}[ns]
            )
        ]
        for ns, o in callers.items()
    }
    for m10 in range(960, 0, -1):
        m = round(m10 / 10, 1)
        hit = m in bad
        for ns, ps in pods.items():
            p = ps[m10 % len(ps)]
            if hit and m10 % 2 == 0:
                msg = {
                    "booking": "InventoryClient call failed: java.net.UnknownHostException: inventory.booking.svc."
                    "cluster.local: Temporary failure in name resolution",
                    "search": 'provider sabre: Post "https://api.sabre-partner.example.net/v4/offers": dial tcp: '
                    f"lookup api.sabre-partner.example.net on {DNS_IP}:53: read udp 10.12.50."
                    f"{m10 % 200 + 20}:{33000 + m10 * 11 % 30000}->{DNS_IP}:53: i/o timeout",
                    "payments": "charge failed: requests.exceptions.ConnectionError: HTTPSConnectionPool(host="
                    "'api.adyen-test.example.com', port=443): Max retries exceeded with url: /v71/"
                    'payments (Caused by NameResolutionError("<urllib3.connection.HTTPSConnection '
                    "object>: Failed to resolve 'api.adyen-test.example.com' ([Errno -3] Temporary "
                    'failure in name resolution)"))',
                }[ns]
                svc = {"booking": "booking-api", "search": "fare-search", "payments": "payment-router"}[ns]
                logs.append(ecs(c, m, msg, "ERROR" if ns != "search" else "error", svc, ns, p, svc))
            elif m10 % 5 == 0:
                svc = {"booking": "booking-api", "search": "fare-search", "payments": "payment-router"}[ns]
                logs.append(
                    ecs(
                        c,
                        m,
                        {
                            "booking": "POST /bookings 201 (212 ms)",
                            "search": "search ok: 148 offers in 0.91s",
                            "payments": "charge ok psp=adyen 380ms",
                        }[ns],
                        "INFO" if ns != "search" else "info",
                        svc,
                        ns,
                        p,
                        svc,
                    )
                )
        if m10 % 30 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    "search v8 ranking model loaded (fares-ltr-2026-11-28)",
                    "info",
                    "fare-search",
                    "search",
                    pods["search"][0],
                    "fare-search",
                )
            )
    pod_logs = {}
    for i, p in enumerate(dns_pods):
        st = kills[i][-1]
        pod_logs[("kube-system", p, "coredns", False)] = [
            '[INFO] plugin/ready: Still waiting on: "kubernetes"',
            ".:53",
            "[INFO] plugin/reload: Running configuration SHA512 = 8a0e5c2d9f1b3e47a6c0d2f4b9e8a7c6d5e4f3a2b1c0",
            "CoreDNS-1.11.1",
            "linux/amd64, go1.21.12, ae2bbc2",
            '[INFO] plugin/ready: Still waiting on: "kubernetes"',
            "[WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API",
        ] + (
            [
                f'[INFO] {ips[1 - i]}:{40000 + k} - {k} "A IN inventory.booking.svc.cluster.local. udp 64 false 512" '
                "NOERROR qr,aa,rd 126 0.000188s"
                for k in range(3)
            ]
            if st > 0.6
            else []
        )
        pod_logs[("kube-system", p, "coredns", True)] = [
            ".:53",
            "[INFO] plugin/reload: Running configuration SHA512 = 8a0e5c2d9f1b3e47a6c0d2f4b9e8a7c6d5e4f3a2b1c0",
            "CoreDNS-1.11.1",
            "linux/amd64, go1.21.12, ae2bbc2",
            '[INFO] plugin/ready: Still waiting on: "kubernetes"',
            "[WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API",
            *[
                f"[ERROR] plugin/errors: 2 api.sabre-partner.example.net. AAAA: read udp 10.12.33.41:{51000 + k}->"
                f"10.12.0.2:53: i/o timeout"
                for k in range(4)
            ],
        ]
        lab = {"namespace": "kube-system", "pod": p, "container": "coredns"}
        starts = kills[i]
        pts = []
        for m in [x / 2 for x in range(240, -1, -1)]:
            last_start = min((k for k in starts if k >= m), default=125.0)
            up = last_start - m
            pts.append((m, min(LIMIT - 2_000_000, 96e6 + up * 11.5e6)))
        metrics.series("container_memory_working_set_bytes", "gauge", lab, pts)
        metrics.series(
            "kube_pod_container_resource_limits",
            "gauge",
            {**lab, "resource": "memory", "unit": "byte"},
            [(m, LIMIT) for m in range(120, -1, -1)],
        )
        metrics.series(
            "kube_pod_container_status_restarts",
            "counter",
            lab,
            [(m, 2 + sum(1 for k in starts if k >= m)) for m in range(120, -1, -1)],
        )
        metrics.series(
            "coredns_dns_requests",
            "counter",
            {"namespace": "kube-system", "pod": p, "server": "dns://:53", "proto": "udp", "type": "A", "zone": "."},
            [(m, (120 - m) * 60 * 2100) for m in range(int(starts[-1]), -1, -1)],
        )
    scenario = {
        "id": SID,
        "title": "Intermittent DNS errors across namespaces",
        "now": NOW,
        "report": """
            random DNS errors all over the place tonight - booking, search and payments all logged UnknownHost /
            lookup timeouts in the last hour, comes and goes. search shipped v8 at 18:30, could that be hammering
            something? or is the VPC resolver flaky again?
        """.replace("            ", ""),
        "truth": {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": "kube-system", "name": "coredns"},
            "evidence": ["OOMKilled", "170Mi", "Memory cgroup out of memory", "exit_code: 137"],
            "fix": "Raise CoreDNS's memory limit (and request) for the grown cluster, e.g. 512Mi, and add "
            "replicas or NodeLocal DNSCache; consider dropping `pods verified` from the Corefile.",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)
