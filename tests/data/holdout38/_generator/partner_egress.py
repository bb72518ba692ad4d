"""Orchard Health: the partner moved, the egress allow-list did not.

eligibility-gateway may only reach ClaimsBridge through an egress NetworkPolicy that allows
the partner's published range by ipBlock. ClaimsBridge moved its API behind new addresses
this morning; DNS now answers with them, every connection times out in our cluster only,
and the partner's status page (rightly) shows all green.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 21, 9, 30, 0)
NS = "claims"
APP = "eligibility-gateway"
POLICY = "eligibility-partner-egress"
IMAGE = "ghcr.io/orchard-health/eligibility-gateway:4.6.0"
MOVED = NOW.replace(hour=8, minute=41, second=12)
OLD_IPS = ["198.51.100.37", "198.51.100.41"]
NEW_IPS = ["203.0.113.71", "203.0.113.88"]


def build() -> Story:
    story = Story(
        id="eligibility-partner-ip-moved",
        title="Eligibility checks timing out against ClaimsBridge",
        now=NOW,
        report="""
eligibility checks are timing out since ~08:40, front desk staff can't verify coverage.
ClaimsBridge status page is all green and their support says other customers are fine,
so it's us. maybe the gateway pods are overloaded? I restarted two of them, no change
""",
        truth={"category": "network",
               "culprit": {"kind": "NetworkPolicy", "namespace": NS, "name": POLICY},
               "evidence": ["198.51.100.32/28", "connect ETIMEDOUT 203.0.113.71:443"],
               "fix": "Add ClaimsBridge's new addresses (203.0.113.64/27) to the ipBlock of "
                      "eligibility-partner-egress (or allow the partner by FQDN with an "
                      "egress gateway), then retire the old range."})
    made = NOW - timedelta(days=500)
    story.add(k.namespace(NS, made, {"team": "claims", "compliance": "hipaa"}),
              k.namespace("default", made), k.namespace("kube-system", made),
              k.namespace("ingress-nginx", made))
    nodes = [f"aks-claims-{n}-vmss00000{i}" for n, i in (("31922044", 3), ("31922044", 4),
                                                         ("31922044", 7))]
    for i, name in enumerate(nodes):
        story.add(k.node(name, NOW - timedelta(days=9, hours=i), cpu="3860m", memory="12Gi",
                         heartbeat=NOW - timedelta(seconds=20),
                         labels={"agentpool": "claims", "kubernetes.azure.com/agentpool":
                                 "claims", "topology.kubernetes.io/zone": f"eastus2-{i + 1}"}))
    app = k.container(APP, IMAGE, cpu="300m", memory="384Mi", memory_limit="512Mi",
                      ports=[{"containerPort": 3000, "name": "http"}],
                      env=[{"name": "PARTNER_BASE_URL",
                            "value": "https://api.claimsbridge.net/v3"},
                           {"name": "PARTNER_TIMEOUT_MS", "value": "10000"},
                           {"name": "PGHOST",
                            "value": "orchard-claims-prod.postgres.database.azure.com"},
                           {"name": "NODE_OPTIONS", "value": "--max-old-space-size=320"}],
                      readinessProbe=k.http_probe("/health", 3000),
                      livenessProbe=k.http_probe("/health", 3000, initialDelaySeconds=15))
    rolled = NOW - timedelta(days=3, hours=5)
    deploy = k.workload("Deployment", NS, APP, made, [app], replicas=4,
                        labels={"app": APP},
                        annotations={"deployment.kubernetes.io/revision": "41"},
                        pod_labels={"app": APP},
                        status=k.deployment_status(4, 4, 4, at=NOW - timedelta(minutes=24)))
    rs_hash = k.pod_hash(NS, APP, "41")
    rs = k.replicaset(deploy, rs_hash, 41, rolled, [app], replicas=4, ready=4)
    story.add(deploy, rs)
    pods, addresses = [], []
    for i in range(4):
        name = f"{APP}-{rs_hash}-{k.suffix(APP, str(i))}"
        created = rolled + timedelta(seconds=30 * i) if i < 2 else \
            NOW - timedelta(minutes=24, seconds=20 * (i - 2))
        ip = f"10.244.{i % 3}.{60 + 9 * i}"
        story.add(k.pod(rs, name, nodes[i % 3], created, {APP: k.running(
            created + timedelta(seconds=6))}, ip=ip))
        pods.append((name, created))
        addresses.append((ip, name, nodes[i % 3]))
        if i >= 2:
            story.add(k.event(NS, "Pod", name, "Started", f"Started container {APP}",
                              created + timedelta(seconds=6), host=nodes[i % 3]))
    story.add(k.event(NS, "Deployment", APP, "ScalingReplicaSet",
                      f"Scaled up replica set {APP}-{rs_hash} to 4 from 2",
                      NOW - timedelta(minutes=24), component="deployment-controller"))
    story.add(k.service(NS, APP, made, {"app": APP},
                        [{"name": "http", "port": 80, "targetPort": 3000}], "10.0.118.40"),
              k.endpoints(NS, APP, addresses, [], [{"name": "http", "port": 3000}]))
    _policies(story, made)
    for name, created in pods:
        _gateway_logs(story, name, created)
    _bystanders(story, made, nodes)
    _metrics(story, pods)
    return story


def _policies(story: Story, made: datetime) -> None:
    def policy(name: str, spec: dict[str, object], created: datetime,
               annotations: dict[str, str] | None = None) -> dict[str, object]:
        meta: dict[str, object] = {"name": name, "namespace": NS,
                                   "creationTimestamp": k.ts(created)}
        if annotations:
            meta["annotations"] = annotations
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": meta, "spec": spec}

    story.add(
        policy("default-deny-all", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
               made),
        policy("allow-dns", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{
            "to": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}, made),
        policy("allow-from-ingress", {"podSelector": {}, "policyTypes": ["Ingress"],
                                      "ingress": [{"from": [{"namespaceSelector": {
                                          "matchLabels": {"kubernetes.io/metadata.name":
                                                          "ingress-nginx"}}}]}]}, made),
        policy("allow-to-claims-db", {"podSelector": {"matchLabels": {
            "app.kubernetes.io/name": "claims-api"}}, "policyTypes": ["Egress"], "egress": [{
                "to": [{"ipBlock": {"cidr": "10.30.4.0/24"}}],
                "ports": [{"protocol": "TCP", "port": 5432}]}]}, made),
        policy(POLICY, {"podSelector": {"matchLabels": {"app": APP}}, "policyTypes": ["Egress"],
                        "egress": [{"to": [{"ipBlock": {"cidr": "198.51.100.32/28"}}],
                                    "ports": [{"protocol": "TCP", "port": 443}]},
                                   {"to": [{"ipBlock": {"cidr": "10.30.4.0/24"}}],
                                    "ports": [{"protocol": "TCP", "port": 5432}]}]},
               NOW - timedelta(days=230),
               {"orchard.io/change": "CHG-4471 ClaimsBridge production range per partner "
                                     "allow-list notice"}),
    )


def _gateway_logs(story: Story, pod: str, created: datetime) -> None:
    rng = story.rng
    moment = max(created + timedelta(seconds=8), NOW - timedelta(hours=2))
    lines = [json.dumps({"level": 30, "time": int(moment.timestamp() * 1000), "pid": 1,
                         "hostname": pod, "msg": "eligibility-gateway 4.6.0 listening on :3000"})]
    while moment < NOW:
        after = moment >= MOVED
        peer = rng.choice(NEW_IPS if after else OLD_IPS)
        request = f"req-{rng.randint(10**7, 10**8):x}"
        if after and rng.random() < 0.93:
            level, msg = 50, "partner call failed"
            extra: dict[str, Any] = {"err": {"type": "Error", "code": "ETIMEDOUT",
                             "message": f"connect ETIMEDOUT {peer}:443"},
                     "upstream": "api.claimsbridge.net", "elapsed_ms": 10000 + rng.randint(1, 9),
                     "route": "POST /v1/eligibility", "status": 504}
        else:
            level, msg = 30, "partner call ok"
            extra = {"upstream": "api.claimsbridge.net", "remote": f"{peer}:443",
                     "elapsed_ms": rng.randint(140, 480), "route": "POST /v1/eligibility",
                     "status": 200}
        entry = {"level": level, "time": int(moment.timestamp() * 1000), "pid": 1,
                 "hostname": pod, "reqId": request, "msg": msg, **extra}
        lines.append(json.dumps(entry, separators=(",", ":")))
        fields: dict[str, Any] = {"http__response__status_code": extra["status"],
                                  "trace__id": request}
        if level == 50:
            fields |= {"error__type": "ETIMEDOUT", "error__message": extra["err"]["message"]}
        text = msg + (f": connect ETIMEDOUT {peer}:443" if level == 50 else
                      f" remote={peer}:443 elapsed_ms={extra['elapsed_ms']}")
        story.doc(moment, text, level="error" if level == 50 else "info", service=APP, ns=NS,
                  pod=pod, container=APP, **fields)
        if rng.random() < 0.04:
            lag = {"level": 40, "time": int(moment.timestamp() * 1000) + 3, "pid": 1,
                   "hostname": pod, "msg": "slow event loop", "lag_ms": rng.randint(60, 140)}
            lines.append(json.dumps(lag, separators=(",", ":")))
            story.doc(moment + timedelta(milliseconds=3), "slow event loop", level="warn",
                      service=APP, ns=NS, pod=pod, container=APP)
        moment += timedelta(seconds=rng.randint(6, 25))
    story.log(NS, pod, APP, lines)


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    story.add(*k.healthy_deployment(
        NS, "claims-api", "ghcr.io/orchard-health/claims-api:12.3.1", made,
        NOW - timedelta(days=1, hours=3), nodes, ["10.244.0.21", "10.244.1.30", "10.244.2.17"],
        replicas=3, cpu="500m", memory="768Mi", port=8080, revision=88))
    portal = k.healthy_deployment(
        NS, "member-portal-bff", "ghcr.io/orchard-health/member-portal-bff:2.0.14", made,
        NOW - timedelta(days=6), nodes[1:], ["10.244.1.5", "10.244.2.44"], replicas=2,
        cpu="200m", memory="256Mi", port=8080, revision=19)
    story.add(*portal)
    story.add(k.event(NS, "Pod", portal[2]["metadata"]["name"], "DNSConfigForming",
                      "Nameserver limits were exceeded, some nameservers have been omitted, "
                      "the applied nameserver line is: 10.0.0.10 168.63.129.16 1.1.1.1",
                      NOW - timedelta(minutes=51), NOW - timedelta(minutes=3), count=14,
                      type_="Warning", host=nodes[1]))
    rng = story.rng
    moment = NOW - timedelta(hours=2)
    while moment < NOW:
        story.doc(moment, f"GET /v2/claims/{rng.randint(10**5, 10**6)} 200 "
                  f"{rng.randint(8, 60)}ms", level="info", service="claims-api", ns=NS,
                  pod="claims-api", container="claims-api", http__response__status_code=200)
        moment += timedelta(seconds=rng.randint(30, 90))


def _metrics(story: Story, pods: list[tuple[str, datetime]]) -> None:
    for pod, created in pods:
        ok = bad = 0.0
        start = max(NOW - timedelta(hours=3), created + timedelta(seconds=30))
        for at in story.steps(start, NOW, timedelta(minutes=1)):
            rate = 60 * 1.4 * story.rng.uniform(0.8, 1.2)
            if at >= MOVED:
                bad += rate * 0.93
                ok += rate * 0.07
            else:
                ok += rate
            for code, value in (("200", ok), ("504", bad)):
                story.sample("http_requests_total", "counter",
                             {"namespace": NS, "pod": pod, "service": APP, "code": code,
                              "route": "/v1/eligibility"}, at, round(value))
