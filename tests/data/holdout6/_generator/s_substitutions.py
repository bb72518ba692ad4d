"""Grocery delivery: the substitution engine 3.15.0 runs as a canary Deployment
(substitution-engine-canary, 1 pod) beside the stable 3.14.2 (4 pods) behind the one Service
substitution-engine. The canary prices every substitute with a call per item and fails on
SKUs without a regional price: about 11% of its answers are 500s and its p99 rose to ~2.5 s;
the stable pods stay fine. Red herrings: the substitution-rules ConfigMap edited two hours
ago, slow product-catalog queries (plausible alternative), an HPA of basket-api missing
metrics for a minute, a stable pod's old OOM restart."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import configmap_with
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit6 import Incident, NodeKind, provider_nodes

ID = "grocery-substitutions-erroring"
NOW = datetime.fromisoformat("2027-03-06T17:41:00+00:00")
NS = "grocer"
REG = "registry.freshcart.internal/fulfilment"
BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5)


def _ctr(version: str) -> Ctr:
    return Ctr("substitution-engine", f"{REG}/substitution-engine:{version}", port=8080,
               requests={"cpu": "500m", "memory": "768Mi"},
               limits={"cpu": "2", "memory": "1536Mi"},
               env={"CATALOG_URL": "http://product-catalog.grocer-fulfilment.svc:8080",
                    "RULES_PATH": "/etc/substitution/rules.yaml", "GOMEMLIMIT": "1300MiB"},
               readiness=http_probe("/ready", delay=5, period=5),
               liveness=http_probe("/live", delay=15, period=15))


def build() -> Incident:
    s = Incident(
        id=ID, title="Substitution suggestions failing for some shoppers", now=NOW,
        report="""\
Pickers and the shopper app report intermittent "no substitute available" errors since
late afternoon, and the substitution screen feels slower. Not everyone is affected,
retrying usually works. Can you look at what's going on in grocer-fulfilment?
""",
        truth=truth(
            "bad_rollout", "Deployment", NS, "substitution-engine-canary",
            ["substitution-engine:3.15.0", "substitution-engine-canary",
             "no regional price for sku", "http_requests_total{code=\"500\"}"],
            "The canary Deployment substitution-engine-canary (3.15.0), started 47 minutes "
            "ago behind the same Service as the stable 3.14.2, fails ~11% of requests with "
            "500 (no regional price for a SKU) and has a p99 near 2.5 s because it prices "
            "substitutes one catalog call per item; the stable pods are healthy. Scale the "
            "canary to zero (abort it) and fix the per-item pricing before retrying."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 640, "kube-system": 640, "cattle-system": 640, NS: 590,
                   "shopper-edge": 560})
    kind = NodeKind("harvester-vm-8c32g", "8", "32863312Ki", "7850m", "31812688Ki",
                    "v1.30.8+rke2r1", "5.14.21-150500.55.88-default", "SUSE Linux Micro 6.0",
                    runtime="containerd://1.7.23-k3s2")
    nodes = provider_nodes(s, "harvester", 5, kind, days=5.8)
    labels_common = {"app": "substitution-engine",
                     "app.kubernetes.io/part-of": "fulfilment"}
    stable_roll = s.ago(days=4, hours=6, minutes=12)
    stable, stables = steady(
        s, NS, "substitution-engine", [_ctr("3.14.2")], nodes=nodes, replicas=4,
        revision=58, rollout=stable_roll, service=None,
        template_labels={**labels_common, "track": "stable"},
        restarted={3: (s.ago(days=2, hours=9), "OOMKilled", 137)})
    canary_at = NOW - timedelta(minutes=47, seconds=12)
    canary, canaries = steady(
        s, NS, "substitution-engine-canary", [_ctr("3.15.0")], nodes=nodes, replicas=1,
        revision=1, rollout=canary_at, service=None, offset=2, created=canary_at,
        sa="substitution-engine", template_labels={**labels_common, "track": "canary"},
        labels={"app.kubernetes.io/name": "substitution-engine-canary",
                "app.kubernetes.io/part-of": "fulfilment", "track": "canary"})
    c.service(NS, "substitution-engine", {"app": "substitution-engine"}, port=80,
              created=s.ago(days=590), labels={"app.kubernetes.io/name": "substitution-engine"})
    # ---- the canary's start
    rs = canary.revisions[-1]
    c.event(canary.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']}"
            " from 0 to 1", first=canary_at, component="deployment-controller")
    img = _ctr("3.15.0").image
    for pod in canaries:
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        started = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"][
            "running"]["startedAt"].replace("Z", "+00:00"))
        fp = "spec.containers{substitution-engine}"
        c.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{pod['metadata']['name']} to "
                f"{pod['spec']['nodeName']}", first=born, component="default-scheduler",
                host="")
        c.event(pod, "Pulling", f'Pulling image "{img}"', first=born + timedelta(seconds=1),
                field_path=fp)
        c.event(pod, "Pulled", f'Successfully pulled image "{img}" in 3.412s (3.412s '
                "including waiting). Image size: 48211907 bytes.",
                first=started - timedelta(seconds=0.5), field_path=fp)
        c.event(pod, "Created", "Created container: substitution-engine",
                first=started - timedelta(seconds=0.3), field_path=fp)
        c.event(pod, "Started", "Started container substitution-engine", first=started,
                field_path=fp)
    # ---- traffic: kube-proxy spreads requests evenly over the 5 ready pods
    cut = canary_at.timestamp() + 20

    def share(t: int) -> float:
        return 0.72 + 0.28 * min(1.0, max(0.0, (t - (NOW.timestamp() - 4 * 3600)) / 9000))

    for pod in stables:
        quiet(s, [pod], "substitution-engine", 540)
        requests(s, pod, "substitution-engine", rps=lambda t: 31.0 * share(t) *
                 (1.0 if t < cut else 0.8), codes={
                     "200": lambda t: 0.9994, "500": lambda t: 0.0006},
                 median=lambda t: 0.071, buckets=BUCKETS)
    for pod in canaries:
        quiet(s, [pod], "substitution-engine", 690)
        requests(s, pod, "substitution-engine", rps=lambda t: 31.0 * share(t) * 0.8, codes={
            "200": lambda t: 0.888, "500": lambda t: 0.112},
            median=lambda t: 0.52, buckets=BUCKETS)
    chatter(s, stables, "substitution-engine", "substitution-engine", [
        ("info", "suggested 3 substitutes for sku=4006040 order=FC-88120443 in 64ms", {}),
        ("info", "suggested 2 substitutes for sku=8712566 order=FC-88120519 in 81ms", {}),
        ("warn", "catalog lookup took 612ms (batch of 24 skus)", {}),
        ("info", "rules reloaded from /etc/substitution/rules.yaml (412 rules)", {}),
    ], 90)
    chatter(s, canaries, "substitution-engine", "substitution-engine", [
        ("info", "suggested 3 substitutes for sku=5410188 order=FC-88124410 in 1874ms", {}),
        ("info", "pricing substitutes: 19 catalog calls for order FC-88124472", {}),
        ("error", "POST /v2/substitutions 500: pricing failed: no regional price for sku "
         "8718907 in region NL-ZH", {"http.response.status_code": 500}),
        ("error", "POST /v2/substitutions 500: pricing failed: no regional price for sku "
         "4009900 in region NL-NH", {"http.response.status_code": 500}),
        ("warn", "substitution request exceeded 2s budget (2310ms)", {}),
    ], 110, start=canary_at + timedelta(seconds=20))
    # ---- red herrings
    configmap_with(s, NS, "substitution-rules", {"rules.yaml": "version: 2027-03-06.1\n"
                   "max_price_delta_pct: 15\nprefer_same_brand: true\nrules: 412\n"},
                   created=s.ago(days=590), edited=s.ago(hours=2, minutes=8),
                   manager="kubectl-edit", labels={"app.kubernetes.io/part-of": "fulfilment"})
    cat = Ctr("product-catalog", f"{REG}/product-catalog:7.2.0", port=8080,
              requests={"cpu": "300m", "memory": "1Gi"}, limits={"memory": "2Gi"},
              readiness=http_probe("/health", delay=5))
    _, cats = steady(s, NS, "product-catalog", [cat], nodes=nodes, replicas=3, revision=140,
                     rollout=s.ago(days=3, hours=1), offset=1)
    quiet(s, cats, "product-catalog", 1210)
    chatter(s, cats, "product-catalog", "product-catalog", [
        ("warn", "slow query 840ms: SELECT price FROM regional_prices WHERE sku = ANY($1)",
         {}),
        ("info", "GET /v1/products/8718907 200 12ms", {"http.response.status_code": 200}),
        ("info", "price feed import NL-ZH: 41220 rows", {}),
    ], 70)
    basket = Ctr("basket-api", f"{REG}/basket-api:2.9.4", port=8080,
                 requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"})
    bwork, baskets = steady(s, "shopper-edge", "basket-api", [basket], nodes=nodes, replicas=3,
                            revision=77, rollout=s.ago(days=1, hours=5), offset=4)
    c.event(c.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                   "metadata": c.meta("HorizontalPodAutoscaler", "basket-api", "shopper-edge",
                                      s.ago(days=300)),
                   "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "name": "basket-api"}, "minReplicas": 3,
                            "maxReplicas": 12, "metrics": [{"type": "Resource", "resource": {
                                "name": "cpu", "target": {"type": "Utilization",
                                                          "averageUtilization": 70}}}]},
                   "status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [
                       {"type": "Resource", "resource": {"name": "cpu", "current": {
                           "averageUtilization": 41, "averageValue": "103m"}}}]}}),
            "FailedGetResourceMetric", "failed to get cpu utilization: unable to get metrics "
            "for resource cpu: no metrics returned from resource metrics API",
            first=s.ago(minutes=38), last=s.ago(minutes=37), count=2, type_="Warning",
            component="horizontal-pod-autoscaler")
    chatter(s, baskets, "basket-api", "basket-api", [
        ("warn", "substitution-engine answered 500 for basket B-7741092, showing no "
         "substitute", {}),
        ("info", "basket B-7741133 updated (14 items)", {}),
    ], 90, start=canary_at)
    _ = (stable, bwork)
    return s
