# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 5: a security baseline added a default-deny egress NetworkPolicy to `payroll`
with exceptions for the database, in-namespace traffic and HTTPS, but none for DNS.

Every new lookup from the namespace times out: payroll-api turns unready, the
payslip-generator crash-loops at start, tax-tables cannot reach its external API.
Connections opened before the policy (pooled, by IP) keep working for a while. CoreDNS
is healthy and hr-portal next door resolves fine.
"""

from __future__ import annotations

from .k8s import (
    Clock,
    Obj,
    container,
    crash_times,
    cstatus,
    deployment,
    event,
    meta,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    service,
    suffix,
    template,
    terminated,
    uid,
)
from .out import Metrics, ecs, healthy_app, pods_of, write

SID = "payroll-api-502"
NOW = "2026-11-28T11:20:00Z"
NS = "payroll"
POLICY_AT = 42  # minutes ago
DB = "payroll-db.cluster-cx2k9w1q.eu-central-1.rds.amazonaws.com"
DNS = "172.20.0.10"


def _policy(c: Clock) -> list[Obj]:
    deny = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta(
            "default-deny-egress",
            NS,
            c.at(POLICY_AT),
            {"policy.northwind.io/baseline": "v2"},
            annotations={
                "policy.northwind.io/ticket": "SEC-881",
                "policy.northwind.io/description": "baseline: deny egress except "
                "in-namespace, database subnets and HTTPS",
            },
        ),
        "spec": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {"to": [{"podSelector": {}}]},
                {"to": [{"ipBlock": {"cidr": "10.80.96.0/20"}}], "ports": [{"protocol": "TCP", "port": 5432}]},
                {
                    "to": [
                        {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}}
                    ],
                    "ports": [{"protocol": "TCP", "port": 443}],
                },
            ],
        },
    }
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta("allow-from-ingress-nginx", NS, c.at(60 * 24 * 200), {"app": "payroll-api"}),
        "spec": {
            "podSelector": {"matchLabels": {"app": "payroll-api"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}],
                    "ports": [{"protocol": "TCP", "port": 3000}],
                }
            ],
        },
    }
    hr = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta(
            "default-deny-egress", "hr-portal", c.at(60 * 24 * 20), {"policy.northwind.io/baseline": "v1"}
        ),
        "spec": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [
                        {
                            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                        }
                    ],
                    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                },
                {"to": [{"podSelector": {}}]},
                {
                    "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
                    "ports": [{"protocol": "TCP", "port": 443}],
                },
            ],
        },
    }
    return [deny, ingress, hr]


def build() -> None:
    c = Clock(NOW)
    nodes = [f"ip-10-80-{a}-{b}.eu-central-1.compute.internal" for a, b in ((4, 23), (5, 118), (6, 61), (4, 200))]
    zones = ["eu-central-1a", "eu-central-1b", "eu-central-1c", "eu-central-1a"]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 900)) for n in (NS, "hr-portal", "kube-system", "ingress-nginx")]
    objs += [
        node(c, n, z, "general", region="eu-central-1", instance="m7i.xlarge")
        for n, z in zip(nodes, zones, strict=False)
    ]
    objs += _policy(c)
    reg = "987654321098.dkr.ecr.eu-central-1.amazonaws.com/northwind"

    api = healthy_app(
        c,
        NS,
        "payroll-api",
        f"{reg}/payroll-api:12.3.0",
        replicas=3,
        nodes=nodes,
        ip_prefix="10.80.4",
        cluster_ip="172.20.88.10",
        port=3000,
        rollout_min=60 * 24 * 2 + 13,
        probe_path="/live",
        env=[{"name": "PGHOST", "value": DB}, {"name": "NODE_ENV", "value": "production"}],
    )
    api_pods = [p["metadata"]["name"] for p in pods_of(api, "payroll-api-")]
    for o in api:
        spec = o["spec"] if o["kind"] == "Pod" else o.get("spec", {}).get("template", {}).get("spec")
        if spec:
            spec["containers"][0]["readinessProbe"]["httpGet"]["path"] = "/ready"
    for o in api:  # two of three pods dropped out of the endpoints
        if o["kind"] == "Pod" and o["metadata"]["name"] in api_pods[1:]:
            o["status"]["conditions"][2] |= {
                "status": "False",
                "reason": "ContainersNotReady",
                "message": "containers with unready status: [payroll-api]",
                "lastTransitionTime": c.at(POLICY_AT - 6),
            }
            o["status"]["conditions"][3] |= {"status": "False", "lastTransitionTime": c.at(POLICY_AT - 6)}
            o["status"]["containerStatuses"][0]["ready"] = False
        if o["kind"] == "Deployment":
            o["status"] |= {"readyReplicas": 1, "availableReplicas": 1, "unavailableReplicas": 2}
            o["status"]["conditions"][0] |= {
                "status": "False",
                "reason": "MinimumReplicasUnavailable",
                "message": "Deployment does not have minimum availability.",
                "lastTransitionTime": c.at(POLICY_AT - 6),
            }
        if o["kind"] == "ReplicaSet":
            o["status"] |= {"readyReplicas": 1, "availableReplicas": 1}
        if o["kind"] == "Endpoints":
            sub = o["subsets"][0]
            sub["notReadyAddresses"] = [a for a in sub["addresses"] if a["targetRef"]["name"] in api_pods[1:]]
            sub["addresses"] = [a for a in sub["addresses"] if a["targetRef"]["name"] == api_pods[0]]
    objs += api
    for k, p in enumerate(api_pods[1:]):
        ip = next(o for o in api if o["kind"] == "Pod" and o["metadata"]["name"] == p)["status"]["podIP"]
        objs.append(
            event(
                c,
                NS,
                "Pod",
                p,
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                first_min=POLICY_AT - 5 - k,
                last_min=0.2 + k * 0.1,
                count=190 - k * 12,
                type_="Warning",
                host=nodes[k + 1],
                field_path="spec.containers{payroll-api}",
            )
        )
        del ip
    objs += healthy_app(
        c,
        NS,
        "tax-tables",
        f"{reg}/tax-tables:0.9.4",
        replicas=2,
        nodes=nodes[2:],
        ip_prefix="10.80.6",
        cluster_ip="172.20.88.30",
        rollout_min=60 * 24 * 5,
    )
    tax_pods = [p["metadata"]["name"] for p in pods_of(objs, "tax-tables-")]
    objs += _payslip(c, nodes, reg)
    objs += _coredns(c, nodes)
    objs += healthy_app(
        c,
        "hr-portal",
        "hr-portal-web",
        f"{reg}/hr-portal-web:3.1.1",
        replicas=2,
        nodes=nodes,
        ip_prefix="10.80.5",
        cluster_ip="172.20.90.4",
        port=3000,
        probe_path="/live",
    )
    hr_pods = [p["metadata"]["name"] for p in pods_of(objs, "hr-portal-web-")]

    logs = []
    for m10 in range(900, 0, -1):
        m = m10 / 10
        after = m < POLICY_AT
        p = api_pods[m10 % 3]
        if not after or (p == api_pods[0] and m10 % 2):
            logs.append(
                ecs(
                    c,
                    m,
                    f"POST /v2/runs/{m10 % 40 + 7100}/lines 200 - {12 + m10 % 30} ms",
                    "info",
                    "payroll-api",
                    NS,
                    p,
                    "payroll-api",
                    **{"http.response.status_code": 200},
                )
            )
        elif m10 % 2 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    f"pg pool: could not open connection: Error: getaddrinfo EAI_AGAIN {DB}",
                    "error",
                    "payroll-api",
                    NS,
                    p,
                    "payroll-api",
                    **{"error.type": "Error", "error.code": "EAI_AGAIN"},
                )
            )
        if after and m10 % 15 == 0:
            tp = tax_pods[m10 % 2]
            logs.append(
                ecs(
                    c,
                    m,
                    'refresh rates: Get "https://api.taxrates.example-gov.de/v3/rates/2026": dial tcp: '
                    f"lookup api.taxrates.example-gov.de on {DNS}:53: read udp 10.80.6.{40 + m10 % 20}:"
                    f"{30000 + m10 * 7 % 30000}->{DNS}:53: i/o timeout",
                    "error",
                    "tax-tables",
                    NS,
                    tp,
                    "tax-tables",
                )
            )
        elif m10 % 60 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    "rates cache fresh (2026.11, 1834 entries)",
                    "info",
                    "tax-tables",
                    NS,
                    tax_pods[m10 % 2],
                    "tax-tables",
                )
            )
        if m10 % 6 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    f"GET /me/leave 200 {20 + m10 % 17}ms upstream=leave-api.hr-portal.svc",
                    "info",
                    "hr-portal-web",
                    "hr-portal",
                    hr_pods[m10 % 2],
                    "hr-portal-web",
                )
            )
        if m10 % 50 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    f'[INFO] 10.80.5.{m10 % 90}:{40000 + m10} - {m10} "A IN leave-api.hr-portal.svc.'
                    'cluster.local. udp 51 false 512" NOERROR qr,aa,rd 106 0.000131s',
                    "info",
                    "coredns",
                    "kube-system",
                    f"coredns-{pod_hash('coredns', 5)}-{suffix('coredns0')}",
                    "coredns",
                )
            )
    slip = [o["metadata"]["name"] for o in objs if o["kind"] == "Pod" and o["metadata"]["name"].startswith("payslip-")]
    for j, p in enumerate(slip):
        for m in crash_times(POLICY_AT - 3 - j * 2):
            logs.append(
                ecs(
                    c,
                    m - 0.09,
                    f"Error: getaddrinfo EAI_AGAIN {DB}",
                    "error",
                    "payslip-generator",
                    NS,
                    p,
                    "worker",
                    **{"error.code": "EAI_AGAIN"},
                )
            )
    pod_logs = {
        (NS, p, "worker", prev): [
            f'{{"level":"info","time":"{c.ms(3.4)}","msg":"payslip-generator 5.0.2 starting","queue":"payslips"}}',
            f'{{"level":"error","time":"{c.ms(3.3)}","msg":"startup failed","err":"Error: getaddrinfo EAI_AGAIN {DB}\\n    at '
            f'GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:120:26)","code":"EAI_AGAIN","hostname":"{DB}"}}',
        ]
        for p in slip
        for prev in (False, True)
    }
    pod_logs[(NS, api_pods[1], "payroll-api", False)] = [
        _pino(30, c.unix(60 * 24 * 2 + 12), '"msg":"listening on :3000"'),
        *[
            _pino(
                50,
                c.unix(m),
                '"msg":"pg pool: could not open connection","err":{"type":"Error","message":'
                f'"getaddrinfo EAI_AGAIN {DB}","code":"EAI_AGAIN","syscall":"getaddrinfo"}}',
            )
            for m in range(POLICY_AT - 4, 0, -3)
        ],
        *[_pino(40, c.unix(m), '"msg":"GET /ready 503 - db pool has 0 idle connections"') for m in range(8, 0, -2)],
    ]
    metrics = Metrics(c)
    span = range(90, -1, -1)
    for p in (f"coredns-{pod_hash('coredns', 5)}-{suffix('coredns' + str(i))}" for i in range(2)):
        metrics.series(
            "coredns_dns_responses",
            "counter",
            {"namespace": "kube-system", "pod": p, "rcode": "NOERROR", "server": "dns://:53", "zone": "."},
            [(m, (90 - m) * 60 * 410 + 1_200_000) for m in span],
        )
        metrics.series(
            "coredns_dns_responses",
            "counter",
            {"namespace": "kube-system", "pod": p, "rcode": "NXDOMAIN", "server": "dns://:53", "zone": "."},
            [(m, (90 - m) * 60 * 130 + 400_000) for m in span],
        )
    for code in ("200", "502"):
        metrics.series(
            "nginx_ingress_controller_requests",
            "counter",
            {
                "namespace": "ingress-nginx",
                "exported_namespace": NS,
                "ingress": "payroll-api",
                "service": "payroll-api",
                "status": code,
            },
            [
                (
                    m,
                    sum(
                        (35 if mm > POLICY_AT else 11) if code == "200" else (0 if mm > POLICY_AT else 19)
                        for mm in range(90, m - 1, -1)
                    )
                    * 60,
                )
                for m in span
            ],
        )
    scenario = {
        "id": SID,
        "title": "Payroll API returning 502s",
        "now": NOW,
        "report": """
            payroll is down-ish: payroll-api gives 502s through the ingress and payslip-generator is crashlooping.
            RDS console says the cluster is fine. AWS DNS problem again? hr-portal seems ok though
        """.replace("            ", ""),
        "truth": {
            "category": "network",
            "culprit": {"kind": "NetworkPolicy", "namespace": NS, "name": "default-deny-egress"},
            "evidence": ["EAI_AGAIN", f"lookup api.taxrates.example-gov.de on {DNS}:53", "default-deny-egress"],
            "fix": "Add an egress rule to payroll/default-deny-egress allowing UDP and TCP 53 to the kube-dns "
            "pods in kube-system (as hr-portal's baseline v1 policy does).",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)


def _pino(level: int, unix: int, rest: str) -> str:
    """One line as pino (Node.js) writes it: numeric level, epoch milliseconds."""
    return '{"level":%d,"time":%d,%s}' % (level, unix * 1000, rest)  # noqa: UP031 (braces of JSON)


def _payslip(c: Clock, nodes: list[str], reg: str) -> list[Obj]:
    name, img = "payslip-generator", f"{reg}/payslip-generator:5.0.2"
    tmpl = template(
        {"app": name},
        [container("worker", img, port=None, cpu="250m", memory="512Mi", env=[{"name": "PGHOST", "value": DB}])],
    )
    h = pod_hash(name, 7)
    objs: list[Obj] = [
        deployment(
            c,
            NS,
            name,
            tmpl,
            replicas=2,
            revision=7,
            created_days=300,
            ready=0,
            updated=2,
            available=0,
            unavailable=2,
            avail_ok=False,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}-{h}" has successfully progressed.',
                60 * 24 * 2,
            ),
        ),
        replicaset(c, NS, name, tmpl, revision=7, created_min=60 * 24 * 2 + 5, replicas=2, ready=0),
    ]
    for j in range(2):
        pname, nd = f"{name}-{h}-{suffix('slip' + str(j))}", nodes[j + 1]
        starts = crash_times(POLICY_AT - 3 - j * 2)
        state = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off 5m0s restarting failed container=worker pod={pname}_{NS}({uid(NS, pname)})",
            }
        }
        objs.append(
            pod(
                c,
                NS,
                pname,
                ("ReplicaSet", f"{name}-{h}"),
                tmpl["metadata"]["labels"],
                tmpl["spec"],
                node_name=nd,
                ip=f"10.80.5.{150 + j}",
                started_min=60 * 24 * 2 + 4,
                hash_label=h,
                ready=False,
                statuses=[
                    cstatus(
                        c,
                        "worker",
                        img,
                        ready=False,
                        state=state,
                        restarts=len(starts),
                        started=False,
                        last=terminated(c, "Error", 1, starts[-1], starts[-1] - 0.1),
                    )
                ],
            )
        )
        objs.append(
            event(
                c,
                NS,
                "Pod",
                pname,
                "BackOff",
                f"Back-off restarting failed container worker in pod {pname}_{NS}({uid(NS, pname)})",
                first_min=starts[0] - 0.2,
                last_min=0.3,
                count=len(starts) * 9,
                type_="Warning",
                host=nd,
                field_path="spec.containers{worker}",
            )
        )
    return objs


def _coredns(c: Clock, nodes: list[str]) -> list[Obj]:
    objs = healthy_app(
        c,
        "kube-system",
        "coredns",
        "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.2",
        replicas=2,
        nodes=nodes[:2],
        ip_prefix="10.80.4",
        cluster_ip=DNS,
        revision=5,
        port=53,
        svc_port=53,
        cpu="100m",
        memory="70Mi",
        mem_limit="170Mi",
        labels={"k8s-app": "kube-dns"},
        probe_path="/health",
        with_service=False,
    )
    objs.append(
        service(
            c,
            "kube-system",
            "kube-dns",
            {"k8s-app": "kube-dns"},
            port=53,
            target=53,
            cluster_ip=DNS,
            port_name="dns",
            created_days=900,
        )
    )
    return objs
